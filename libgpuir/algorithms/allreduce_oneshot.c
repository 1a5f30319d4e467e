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
    for (int r = 0; r < R; r++) {
        gc3_cref_t o, x;
        gc3_chunk(prog, r, GC3_BUF_INPUT, 0, 1, &x);
        gc3_copy(prog, x, r, GC3_BUF_OUTPUT, 0, 0, &o);
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, q < r ? q : q - 1, 1, &x);
                gc3_reduce(prog, o, x, 0, &o);
            }
        }
    }
    return gc3_algo_finish(prog, "oneshot", diag, stats, program_p);
}
