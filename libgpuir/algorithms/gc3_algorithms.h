/* gc3 algorithm library: generators written against the compiler API (gc3_compiler.h),
 * one file each, each a function of the topology shape and its parameters. */
#ifndef GC3_ALGORITHMS_H
#define GC3_ALGORITHMS_H

#include "gc3_compiler.h"

typedef struct {
    int         nranks;         /* ranks of the communicator */
    int         nodes;          /* nodes * gpus_per_node == nranks (flat algorithms ignore the split) */
    int         gpus_per_node;
    int         instances;      /* replicas on disjoint channels, each on 1/instances of the data */
    int         channels;       /* ring: one logical ring spread over this many channels */
    int         chunks_per_peer;/* alltoall: chunks per (source, destination) pair; allpairs: chunks per rank */
    gc3_proto_t proto;
    int         inplace;
    int         root;           /* rooted collectives (bcast, reduce): the root, in [0, nranks) (default 0) */
    int         slots;          /* FIFO slots per connection */
    int         verify;         /* run the verifier on the result (1) */
} gc3_algo_params_t;

/* gc3_algo_t.takes */
#define GC3_ALGO_TAKES_CHANNELS 1u /* channels */
#define GC3_ALGO_TAKES_CHUNKS   2u /* chunks_per_peer */

typedef struct gc3_algo {
    const char *name;
    gc3_coll_t  coll;
    const char *coll_name;      /* custom collectives */
    const char *summary;
    int         uses_nodes;     /* 1 when the nodes x gpus_per_node shape matters */
    unsigned    takes;          /* GC3_ALGO_TAKES_*: which of channels and chunks_per_peer it reads */
    gc3_status_t (*generate)(const gc3_algo_params_t *params, gc3_diag_t *diag, gc3_compile_stats_t *stats,
                             gc3_ir_program_t **program_p);
} gc3_algo_t;

void              gc3_algo_params_default(gc3_algo_params_t *params, int nranks);
int               gc3_algo_count(void);
const gc3_algo_t *gc3_algo_at(int i);
const gc3_algo_t *gc3_algo_find(const char *name);
/* The name of a parameter given a value other than 1 that a does not read ("channels",
 * "chunks_per_peer"), or NULL: a generator is never asked for a shape it would not make. */
const char *gc3_algo_unread(const gc3_algo_t *a, int channels, int chunks_per_peer);
/* params with those of channels and chunks_per_peer that a does not take put back to 1 (a comparison or
 * sweep of several generators under one shape); the GC3_ALGO_TAKES_* bits of those it put back */
unsigned gc3_algo_keep_taken(const gc3_algo_t *a, gc3_algo_params_t *params);
/* Generate `name` (looks it up, checks the shape). */
gc3_status_t      gc3_algo_generate(const char *name, const gc3_algo_params_t *params, gc3_diag_t *diag,
                                    gc3_compile_stats_t *stats, gc3_ir_program_t **program_p);

/* gc3_algo_generate, narrowed until every rank has at most max_blocks thread blocks: instances
 * halve first, then channels (params is updated to what was generated; *narrowed_p tells whether
 * it had to). GC3_ERR_UNSUPPORTED when even 1 instance x 1 channel is wider. */
gc3_status_t      gc3_algo_generate_fit(const char *name, gc3_algo_params_t *params, int max_blocks, gc3_diag_t *diag,
                                        gc3_ir_program_t **program_p, int *narrowed_p);

/* ---- for the generators ---- */
/* Create the traced program with the common parameters. */
gc3_status_t gc3_algo_begin(const gc3_algo_params_t *params, const char *name, gc3_coll_t coll, int in_chunks,
                            int out_chunks, int nchunksperloop, gc3_diag_t *diag, gc3_prog_t **prog_p);
/* The same for a custom collective with its postcondition (see gc3_prog_params_t). */
gc3_status_t gc3_algo_begin_custom(const gc3_algo_params_t *params, const char *name, const char *coll_name,
                                   const uint32_t *const *const *post_cells, int in_chunks, int out_chunks,
                                   int nchunksperloop, gc3_diag_t *diag, gc3_prog_t **prog_p);
/* Compile (and verify), report a trace error with the generator's name, destroy the trace. */
gc3_status_t gc3_algo_finish(gc3_prog_t *prog, const char *name, gc3_diag_t *diag, gc3_compile_stats_t *stats,
                             gc3_ir_program_t **program_p);
/* The direct reduction of rank r's chunks [r*K, (r+1)*K) of every rank's input into r's output at chunk out:
 * its own copied there, every other rank q's sent into r's scratch slot (q < r ? q : q - 1) on channel
 * slot mod channels, then reduced chunk by chunk, chunk j's from another peer's copy on, on channel
 * (j mod) mod channels, so that the K reductions run in different blocks. Direct reduce_scatter, and
 * the first half of all-pairs allreduce (channels 1). */
void gc3_algo_reduce_to_owner(gc3_prog_t *prog, int R, int K, int r, int out, int channels);
/* Check nodes x gpus_per_node == nranks (hierarchical algorithms). */
gc3_status_t gc3_algo_check_shape(const gc3_algo_params_t *params, const char *name, gc3_diag_t *diag);

#define GC3_ALGO_DECLARE(fn) \
    gc3_status_t fn(const gc3_algo_params_t *params, gc3_diag_t *diag, gc3_compile_stats_t *stats, gc3_ir_program_t **program_p)

GC3_ALGO_DECLARE(gc3_algo_allreduce_ring);
GC3_ALGO_DECLARE(gc3_algo_allreduce_allpairs);
GC3_ALGO_DECLARE(gc3_algo_allreduce_oneshot);
GC3_ALGO_DECLARE(gc3_algo_allreduce_hierarchical);
GC3_ALGO_DECLARE(gc3_algo_allreduce_rhd);
GC3_ALGO_DECLARE(gc3_algo_alltoall_direct);
GC3_ALGO_DECLARE(gc3_algo_alltoall_twostep);
GC3_ALGO_DECLARE(gc3_algo_allgather_ring);
GC3_ALGO_DECLARE(gc3_algo_reduce_scatter_ring);
GC3_ALGO_DECLARE(gc3_algo_reduce_scatter_direct);
GC3_ALGO_DECLARE(gc3_algo_alltonext);
GC3_ALGO_DECLARE(gc3_algo_bcast_direct);
GC3_ALGO_DECLARE(gc3_algo_bcast_ring);
GC3_ALGO_DECLARE(gc3_algo_reduce_direct);
GC3_ALGO_DECLARE(gc3_algo_reduce_ring);
GC3_ALGO_DECLARE(gc3_algo_gather_direct);
GC3_ALGO_DECLARE(gc3_algo_gather_ring);
GC3_ALGO_DECLARE(gc3_algo_scatter_direct);
GC3_ALGO_DECLARE(gc3_algo_scatter_ring);
GC3_ALGO_DECLARE(gc3_algo_scan_direct);
GC3_ALGO_DECLARE(gc3_algo_scan_ring);
GC3_ALGO_DECLARE(gc3_algo_scan_doubling);
GC3_ALGO_DECLARE(gc3_algo_exscan_direct);
GC3_ALGO_DECLARE(gc3_algo_exscan_ring);
GC3_ALGO_DECLARE(gc3_algo_scan_sliced);
GC3_ALGO_DECLARE(gc3_algo_exscan_sliced);

#endif
