/* ReduceScatter, direct: rank r owns chunks [r*K, (r+1)*K) (K = chunks_per_peer); every other rank sends
 * it its copy of them (into scratch, so the receives proceed in parallel) and r reduces them into its
 * output: one communication step, where the ring takes R-1 dependent ones (all-pairs allreduce's first
 * half). In place the output is the input's chunk of the rank, which the copy leaves as it is. */
#include "gc3_algorithms.h"

void gc3_algo_reduce_to_owner(gc3_prog_t *prog, int R, int K, int r, int out, int channels)
{
    gc3_cref_t x;

    /* its own chunks into its output first, then rank q's copy of them into r's scratch slot
       (q < r ? q : q - 1), on channel slot mod channels */
    gc3_chunk(prog, r, GC3_BUF_INPUT, r * K, K, &x);
    gc3_copy(prog, x, r, GC3_BUF_OUTPUT, out, 0, &x);
    for (int q = 0; q < R; q++) {
        if (q != r) {
            const int slot = q < r ? q : q - 1;
            gc3_chunk(prog, q, GC3_BUF_INPUT, r * K, K, &x);
            gc3_copy(prog, x, r, GC3_BUF_SCRATCH, slot * K, slot % channels, &x);
        }
    }
    /* chunk by chunk, each starting with another peer's copy, on its channel, so that the K reductions run
       in different blocks (local work runs in the block of its latest dependency on its channel) */
    for (int j = 0; j < K; j++) {
        const int  ch = (j % (R - 1)) % channels;
        gc3_cref_t oj;
        gc3_chunk(prog, r, GC3_BUF_OUTPUT, out + j, 1, &oj);
        for (int m = 0; m < R - 1; m++) {
            gc3_chunk(prog, r, GC3_BUF_SCRATCH, ((m + j) % (R - 1)) * K + j, 1, &x);
            gc3_reduce(prog, oj, x, ch, &oj);
        }
    }
}

GC3_ALGO_DECLARE(gc3_algo_reduce_scatter_direct)
{
    const int    R = params->nranks, K = params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_status_t status =
        gc3_algo_begin(params, "reduce_scatter_direct", GC3_COLL_REDUCE_SCATTER, R * K, K, R * K, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        gc3_algo_reduce_to_owner(prog, R, K, r, 0, params->channels);
    }
    return gc3_algo_finish(prog, "reduce_scatter_direct", diag, stats, program_p);
}
