/* AllReduce, one shot: every rank sends its whole buffer to every other rank (into scratch, so
 * the receives proceed in parallel) and reduces all of them itself. One communication step,
 * R-1 times the buffer on every link: the latency choice for the smallest sizes (use LL). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allreduce_oneshot)
{
    const int    R = params->nranks;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "oneshot", GC3_COLL_ALLREDUCE, 1, 1, 1, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    if (R == 2) {
        /* two ranks: each reduction on the block that talks to the peer, no block of local work (its
         * start and the semaphore it waits on cost about 2 us of a small call on 2 x H200). Out of place
         * the peer's input is reduced as it arrives (send + rrc, the copy of the own input folded into
         * it); in place it must arrive whole first (into scratch), since the reduction overwrites the
         * input the peer reads */
        for (int r = 0; r < 2; r++) {
            gc3_cref_t o, x;
            gc3_chunk(prog, r, GC3_BUF_INPUT, 0, 1, &x);
            if (params->inplace) {
                gc3_copy(prog, x, 1 - r, GC3_BUF_SCRATCH, 0, 0, &x);
            } else {
                gc3_copy(prog, x, r, GC3_BUF_OUTPUT, 0, 0, &o);
            }
        }
        for (int r = 0; r < 2; r++) {
            gc3_cref_t o, x;
            gc3_chunk(prog, r, GC3_BUF_OUTPUT, 0, 1, &o);
            gc3_chunk(prog, 1 - r, GC3_BUF_INPUT, 0, 1, &x);
            if (params->inplace) {
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, 0, 1, &x);
            }
            gc3_reduce(prog, o, x, 0, &o);
        }
        return gc3_algo_finish(prog, "oneshot", diag, stats, program_p);
    }
    /* every transfer first: in place, the reductions below overwrite the input they read */
    for (int r = 0; r < R; r++) {
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_cref_t x;
                gc3_chunk(prog, q, GC3_BUF_INPUT, 0, 1, &x);
                gc3_copy(prog, x, r, GC3_BUF_SCRATCH, q < r ? q : q - 1, 0, &x);
            }
        }
    }
    /* every rank reduces in rank order, ((x0 + x1) + x2) + ..., so that every rank gets the same bits
     * (floating-point sums depend on the order; a rank starting with its own input would differ from
     * the others). In place, a rank after 0 keeps its own input in the scratch slot after its peers'
     * before the output (its input) takes rank 0's */
    for (int r = 0; r < R; r++) {
        gc3_cref_t o, x, own;
        gc3_chunk(prog, r, GC3_BUF_INPUT, 0, 1, &own);
        if (params->inplace && r != 0) {
            gc3_copy(prog, own, r, GC3_BUF_SCRATCH, R - 1, 0, &own);
        }
        gc3_chunk(prog, r, r == 0 ? GC3_BUF_INPUT : GC3_BUF_SCRATCH, 0, 1, &x);
        if (r == 0) {
            x = own;
        }
        gc3_copy(prog, x, r, GC3_BUF_OUTPUT, 0, 0, &o);
        for (int q = 1; q < R; q++) {
            if (q == r) {
                x = own;
            } else {
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, q < r ? q : q - 1, 1, &x);
            }
            gc3_reduce(prog, o, x, 0, &o);
        }
    }
    return gc3_algo_finish(prog, "oneshot", diag, stats, program_p);
}
