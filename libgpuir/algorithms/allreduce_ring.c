/* AllReduce, ring: chunk idx = r*channels + c is reduced along the ring ending at rank r
 * (on channel c), then passed around once more. The compiler turns the chain into the
 * classic s, rrs..., rrcs, rcs..., r sequence per thread block. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allreduce_ring)
{
    const int   R = params->nranks, nch = params->channels, C = R * nch;
    gc3_prog_t *prog;
    gc3_status_t status = gc3_algo_begin(params, "ring", GC3_COLL_ALLREDUCE, C, C, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int c = 0; c < nch; c++) {
        for (int r = 0; r < R; r++) {
            int        idx = r * nch + c, cur = (r + 1) % R;
            gc3_cref_t acc, mine, o;
            gc3_chunk(prog, cur, GC3_BUF_INPUT, idx, 1, &acc);
            for (int step = 1; step < R; step++) {
                int nxt = (cur + 1) % R;
                gc3_chunk(prog, nxt, GC3_BUF_INPUT, idx, 1, &mine);
                gc3_copy(prog, mine, nxt, GC3_BUF_OUTPUT, idx, c, &o); /* forwarded into the reduction */
                gc3_reduce(prog, o, acc, c, &acc);
                cur = nxt;
            }
            for (int step = 1; step < R; step++) {
                cur = (cur + 1) % R;
                gc3_copy(prog, acc, cur, GC3_BUF_OUTPUT, idx, c, &acc);
            }
        }
    }
    return gc3_algo_finish(prog, "ring", diag, stats, program_p);
}
