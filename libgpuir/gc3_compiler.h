/* gc3 / libgpuir: the algorithm compiler (the GC3 paper's model, in C).
 *
 * A generator describes a collective as chunk operations on references (paper Table 1):
 *
 *     gc3_chunk(prog, rank, buf, index, count, &ref)    a reference to `count` chunks
 *     gc3_copy(prog, ref, rank, buf, index, ch, &out)   copy them there (remote or local)
 *     gc3_reduce(prog, dst, src, ch, &out)              dst = dst op src (remote or local)
 *
 * Using a reference whose chunks were overwritten since it was made (stale), or reading
 * chunks that hold no data, is an error returned with a message (gc3_prog_error). Errors
 * are sticky: once one happened every later call returns it, so a generator may check
 * once at the end.
 *
 * gc3_prog_compile lowers the trace (paper §4-5): chunk operations become instructions
 * (remote copy -> send + recv, remote reduce -> send + rrc, local -> cpy/re) with true
 * and false dependencies; copies into a reduction's destination are forwarded; chains are
 * fused (recv+send -> rcs, rrc+send -> rrcs, rrcs whose stored value is never read -> rrs);
 * instructions go to thread blocks, one per (send peer, recv peer, channel); a global
 * topological order (priority: dependency depth, then longest remaining path) that never
 * has more than `slots` messages outstanding on a connection orders every block, so the
 * program cannot deadlock; cross-block dependencies become depid/deps (extra ones ride on
 * nop steps). `instances` replicate the fused instructions (before blocks and the schedule
 * are made) on disjoint channels, each on 1/instances of the data (allreduce: block-major,
 * multi-chunk steps stay whole; other collectives: interleaved, multi-chunk steps become one
 * step per chunk). The emitted program is verified before it is returned. */
#ifndef GC3_COMPILER_H
#define GC3_COMPILER_H

#include "gc3_ir.h"
#include "gc3_verify.h"

typedef struct gc3_prog gc3_prog_t;

typedef struct {
    int rank;
    int buf;    /* gc3_buf_t */
    int index;
    int count;
    int snap;   /* internal: where the versions of the chunks at creation are kept */
} gc3_cref_t;

typedef struct {
    const char *name;
    gc3_coll_t  coll;
    const char *coll_name;     /* custom collectives: their name (e.g. "alltonext") */
    int         root;          /* rooted collectives (bcast, reduce): the root, in [0, nranks); -1 (the
                                  default) for the others */
    int         nranks;
    int         in_chunks;     /* per rank */
    int         out_chunks;
    int         nchunksperloop;
    int         inplace;       /* trace for in-place execution (output aliases input) */
    gc3_proto_t proto;
    int         instances;     /* >= 1 */
    int         slots;         /* FIFO slots per connection (0 = GC3_FIFO_SLOTS_DEFAULT) */
    int         verify;        /* 1: run the verifier on the result (default when 0 is not set explicitly) */
    /* custom collectives: cells[r][c] = UINT32_MAX-terminated list of src_rank*in_chunks+src_chunk,
       NULL = don't care (see gc3_postcond_create) */
    const uint32_t *const *const *post_cells;
    uint64_t    min_bytes, max_bytes;
} gc3_prog_params_t;

/* What the compiler did (for tests and `gc3c gen --stats`). */
typedef struct {
    int ops;                          /* chunk operations traced */
    int instrs_lowered;               /* instructions before fusion */
    int instrs;                       /* after fusion */
    int nops;                         /* nop steps added for extra dependencies (all instances) */
    int by_type[GC3_STEP_COUNT];      /* fused instructions per type over all ranks, one instance (+ nops) */
    int tbs;                          /* thread blocks over all ranks */
    int verified;                     /* 1 when the verifier ran and passed */
} gc3_compile_stats_t;

void         gc3_prog_params_default(gc3_prog_params_t *params);
gc3_status_t gc3_prog_create(const gc3_prog_params_t *params, gc3_prog_t **prog_p);
void         gc3_prog_destroy(gc3_prog_t *prog);
const char  *gc3_prog_error(const gc3_prog_t *prog);

gc3_status_t gc3_chunk(gc3_prog_t *prog, int rank, gc3_buf_t buf, int index, int count, gc3_cref_t *ref_p);
gc3_status_t gc3_copy(gc3_prog_t *prog, gc3_cref_t src, int rank, gc3_buf_t buf, int index, int ch,
                      gc3_cref_t *ref_p);
gc3_status_t gc3_reduce(gc3_prog_t *prog, gc3_cref_t dst, gc3_cref_t src, int ch, gc3_cref_t *ref_p);

/* Lower, schedule, emit and verify. On error diag says why and *program_p is NULL. */
gc3_status_t gc3_prog_compile(gc3_prog_t *prog, gc3_diag_t *diag, gc3_compile_stats_t *stats,
                              gc3_ir_program_t **program_p);

#endif
