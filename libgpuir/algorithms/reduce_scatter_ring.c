/* ReduceScatter, ring: part c of chunk r (index r*channels + c) is reduced along the ring ending at
 * rank r, on channel c; partial sums travel without being stored (rrs) and the owner stores the total
 * (rrc). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_reduce_scatter_ring)
{
    const int    R = params->nranks, nch = params->channels, C = R * nch;
    gc3_prog_t  *prog;
    gc3_status_t status =
        gc3_algo_begin(params, "reduce_scatter_ring", GC3_COLL_REDUCE_SCATTER, C, nch, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int c = 0; c < nch; c++) {
        for (int r = 0; r < R; r++) {
            const int  idx = r * nch + c;
            int        cur = (r + 1) % R;
            gc3_cref_t acc, mine, t;
            gc3_chunk(prog, cur, GC3_BUF_INPUT, idx, 1, &acc);
            for (int step = 1; step < R; step++) {
                int nxt = (cur + 1) % R;
                gc3_chunk(prog, nxt, GC3_BUF_INPUT, idx, 1, &mine);
                if (nxt == r) {
                    gc3_copy(prog, mine, nxt, GC3_BUF_OUTPUT, c, c, &t);
                } else {
                    gc3_copy(prog, mine, nxt, GC3_BUF_SCRATCH, idx, c, &t);
                }
                gc3_reduce(prog, t, acc, c, &acc);
                cur = nxt;
            }
        }
    }
    return gc3_algo_finish(prog, "reduce_scatter_ring", diag, stats, program_p);
}
