/* gc3 / libgpuir: selection rules — which algorithm (and parameters) runs a collective of a
 * given size on a given machine shape. One rule per line, first match wins:
 *
 *     # collective   nodes  gpus   link    bytes        algorithm       [key=value ...]
 *     allreduce      1      *      *       0-64K        allpairs        proto=LL
 *     allreduce      1      *      *       64K-inf      ring            channels=8 instances=4
 *
 *   collective  allreduce | alltoall | allgather | reduce_scatter_block | *
 *   nodes,gpus  N, A-B or * (gpus: ranks per node)
 *   link        nvlink | pcie | host | *     (host: the host backend)
 *   bytes       A-B (bytes of the call as OSU counts them; K, M, G suffixes; B may be inf) or *;
 *               A-B matches A < bytes <= B, except that 0-B also matches 0
 *   algorithm   a generator of the library (gc3c list)
 *   keys        proto=Simple|LL|LL128 channels=N instances=N chunks_per_peer=N
 *
 * '#' starts a comment. Errors name the file and line. */
#ifndef GC3_RULES_H
#define GC3_RULES_H

#include <stdint.h>
#include "gc3_ir.h"

typedef enum { GC3_LINK_NVLINK, GC3_LINK_PCIE, GC3_LINK_HOST, GC3_LINK_COUNT } gc3_link_t;

typedef struct {
    char        coll[32];       /* "" = any */
    int         nodes_lo, nodes_hi, gpus_lo, gpus_hi;
    int         link;           /* gc3_link_t, -1 = any */
    uint64_t    bytes_lo, bytes_hi;
    char        algo[64];
    gc3_proto_t proto;
    int         proto_set;
    int         channels, instances, chunks_per_peer;
    char        where[160];     /* FILE:LINE */
} gc3_rule_t;

typedef struct {
    gc3_rule_t *rules;
    int         n;
    char       *source;         /* file name, or "built-in" */
} gc3_rules_t;

const char  *gc3_link_name(gc3_link_t link);
/* The built-in rules, in the format above. */
const char  *gc3_rules_builtin_text(void);
gc3_status_t gc3_rules_parse(const char *text, const char *name, gc3_diag_t *diag, gc3_rules_t **rules_p);
gc3_status_t gc3_rules_read_file(const char *path, gc3_diag_t *diag, gc3_rules_t **rules_p);
void         gc3_rules_destroy(gc3_rules_t *rules);
/* First matching rule, or NULL. coll: "allreduce", ... */
const gc3_rule_t *gc3_rules_match(const gc3_rules_t *rules, const char *coll, int nodes, int gpus, gc3_link_t link,
                                  uint64_t bytes);

#endif
