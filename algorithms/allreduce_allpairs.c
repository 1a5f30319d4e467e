/* AllReduce, all-pairs: rank r owns chunk r; every other rank sends it its chunk r (into
 * scratch, so the receives proceed in parallel), r reduces them and sends the result to
 * everybody. Two communication steps: the latency choice for small sizes (use LL). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allreduce_allpairs)
{
    const int    R = params->nranks;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "allpairs", GC3_COLL_ALLREDUCE, R, R, R, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        gc3_cref_t mine, o, x;
        gc3_chunk(prog, r, GC3_BUF_INPUT, r, 1, &mine);
        gc3_copy(prog, mine, r, GC3_BUF_OUTPUT, r, 0, &o);
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_chunk(prog, q, GC3_BUF_INPUT, r, 1, &x);
                gc3_copy(prog, x, r, GC3_BUF_SCRATCH, q < r ? q : q - 1, 0, &x);
            }
        }
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, q < r ? q : q - 1, 1, &x);
                gc3_reduce(prog, o, x, 0, &o);
            }
        }
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_copy(prog, o, q, GC3_BUF_OUTPUT, r, 0, &x);
            }
        }
    }
    return gc3_algo_finish(prog, "allpairs", diag, stats, program_p);
}
