/* gc3 / libgpuir: selection rules — which algorithm (and parameters) runs a collective of a
 * given size on a given machine shape. One rule per line, first match wins:
 *
 *     # collective   nodes  gpus   link    bytes        algorithm       [key=value ...]
 *     allreduce      1      *      *       0-64K        allpairs        proto=LL
 *     allreduce      1      *      *       64K-inf      ring            channels=8 instances=4
 *
 *   collective  allreduce | alltoall | allgather | reduce_scatter_block | bcast | reduce | *
 *               (gc3_coll_desc()->mpi_name, listed by gc3_coll_mpi_names; read with gc3_coll_from_name,
 *               so reduce_scatter and MSCCL's spellings are accepted too). A rooted collective's
 *               generator is run for the call's root (gc3_rule_target_t.root)
 *   nodes,gpus  N, A-B or * (gpus: ranks per node)
 *   link        nvlink | pcie | host | *     (host: the host backend)
 *   bytes       A-B (bytes of the call as OSU counts them; K, M, G suffixes; B may be inf) or *;
 *               A-B matches A < bytes <= B, except that 0-B also matches 0
 *   algorithm   a generator of the library (gc3c list); one it does not have, or one of another
 *               collective than the line's, is an error of that line. With collective '*' the
 *               line is for the algorithm's own collective (each algorithm runs one)
 *   keys        proto=Simple|LL|LL128 channels=N instances=N chunks_per_peer=N (LL128: gc3 has none;
 *               the rule runs as Simple and a warning says so, in diag of a successful parse;
 *               channels and chunks_per_peer other than 1 only for a generator that takes them,
 *               gc3_algo_t.takes, else an error of that line);
 *               zero_copy=on|off (default on: with coll_gc3_zero_copy, messages left in place where
 *               the program allows it; off: every message through the FIFOs, for the sizes where
 *               copying measured faster)
 *
 * '#' starts a comment. Errors name the file and line. An algorithm directory adds one rule per
 * MSCCL XML program it holds, ahead of these (gc3_rules_add_xml_dir). */
#ifndef GC3_RULES_H
#define GC3_RULES_H

#include <stdint.h>
#include "gc3_ir.h"
#include "gc3_topo.h"

typedef struct {
    int         coll;           /* gc3_coll_t (not custom), -1 = any */
    int         nodes_lo, nodes_hi, gpus_lo, gpus_hi;
    int         link;           /* gc3_link_t, -1 = any */
    uint64_t    bytes_lo, bytes_hi;
    char       *algo;           /* a generator of the library, or the program's name */
    gc3_proto_t proto;
    int         proto_set;
    int         channels, instances, chunks_per_peer;
    int         no_zc;          /* zero_copy=off: its plans copy every message through the FIFOs */
    int         zc_pull;        /* zero_copy=pull: left in place, never pushed (the receivers read) */
    char       *where;          /* FILE:LINE (a program's rule: its file) */
    /* rules made from the XML programs of an algorithm directory (gc3_rules_add_xml_dir) */
    char       *xml;            /* the program's file; NULL for rules naming a generator */
    gc3_ir_program_t *program;  /* the program, read and verified once (owned by the rules, read-only) */
    int         ranks;          /* the program's rank count; 0: any */
    int         inplace_ok, outofplace_ok;
    int         root;           /* a file's rooted program: the root it serves; -1 (generators, and files of
                                 * other collectives): any */
} gc3_rule_t;

/* The rules own their strings (algo, where, xml) and programs: gc3_rules_destroy frees them. */
typedef struct {
    gc3_rule_t *rules;
    int         n;
    char       *source;         /* file name, or "built-in" */
} gc3_rules_t;

/* The built-in rules, in the format above. */
const char  *gc3_rules_builtin_text(void);
gc3_status_t gc3_rules_parse(const char *text, const char *name, gc3_diag_t *diag, gc3_rules_t **rules_p);
gc3_status_t gc3_rules_read_file(const char *path, gc3_diag_t *diag, gc3_rules_t **rules_p);
void         gc3_rules_destroy(gc3_rules_t *rules);
/* First matching rule, or NULL. */
const gc3_rule_t *gc3_rules_match(const gc3_rules_t *rules, gc3_coll_t coll, int nodes, int gpus, gc3_link_t link,
                                  uint64_t bytes);
/* The same for one call: ranks of the communicator, inplace 1/0 (-1: either). */
const gc3_rule_t *gc3_rules_match_call(const gc3_rules_t *rules, gc3_coll_t coll, int nodes, int gpus,
                                       gc3_link_t link, uint64_t bytes, int ranks, int inplace);
/* The same for a call of a rooted collective with root `root` (-1: any): a rooted program's file
 * serves its own root only. */
const gc3_rule_t *gc3_rules_match_root(const gc3_rules_t *rules, gc3_coll_t coll, int nodes, int gpus,
                                       gc3_link_t link, uint64_t bytes, int ranks, int inplace, int root);
/* Put one rule per MSCCL XML program of dir (files *.xml, in name order) before the others, so that
 * a site's programs win wherever their shape matches: their collective (allreduce, alltoall,
 * allgather, reduce_scatter in any spelling), rank count, in-place/out-of-place support (a program
 * for in-place calls serves out-of-place ones too, copying the input first: gc3_ir_copy_first) and
 * size range (minBytes <= bytes <= maxBytes; maxBytes 0: no bound). Each file must read and verify
 * (gc3_verify); one that does not is reported in diag and skipped. The reader's warnings (attributes
 * gc3 does not know, ...) are in diag too. *added_p: rules added. */
gc3_status_t gc3_rules_add_xml_dir(gc3_rules_t *rules, const char *dir, gc3_diag_t *diag, int *added_p);

/* What a rule's program is made for: the communicator and the calls of one plan. */
typedef struct {
    int ranks;      /* of the communicator */
    int nodes;      /* nodes x (ranks / nodes): hierarchical generators; 1: a flat program */
    int inplace;    /* the plan's calls are in place (1) or not (0) */
    int slots;      /* FIFO slots per connection (the compiler schedules for them) */
    int max_blocks; /* thread blocks per rank at most */
    int root;       /* rooted collectives (bcast, reduce): the call's root, in [0, ranks); ignored otherwise */
} gc3_rule_target_t;

/* What was made, for the plan's message. */
typedef struct {
    gc3_proto_t proto;
    int         channels, instances; /* a generator's: the channels its program spans, fewer than asked where it
                                      * has less to spread (a direct exchange among few ranks) */
    int         narrowed, asked_channels, asked_instances; /* a generator's program narrowed to max_blocks */
    int         copied; /* a program for in-place calls serving out-of-place ones (gc3_ir_copy_first) */
} gc3_rule_made_t;

/* The program of a rule for a target, verified, at most max_blocks thread blocks per rank wide: the
 * rule's generator run with its parameters (narrowed to fit: gc3_algo_generate_fit), or a copy of
 * the program of its file (in its out-of-place form when the calls are out of place and the program
 * is for in-place calls only), its largest call (max_bytes: the runtime sizes its slots for it) the rule's
 * upper bound unless the program says one. The component's plans, gc3c simulate and gc3_info --memory all
 * make their programs with it. The caller owns *program_p. GC3_ERR_* with the reason in diag. */
gc3_status_t gc3_rule_program(const gc3_rule_t *rule, const gc3_rule_target_t *target, gc3_diag_t *diag,
                              gc3_ir_program_t **program_p, gc3_rule_made_t *made);

#endif
