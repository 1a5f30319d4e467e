/* ReduceScatter, ring: chunk r is reduced along the ring ending at rank r; partial sums
 * travel without being stored (rrs) and the owner stores the total (rrc). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_reduce_scatter_ring)
{
    const int    R = params->nranks;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "reduce_scatter_ring", GC3_COLL_REDUCE_SCATTER, R, 1, R, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        int        cur = (r + 1) % R;
        gc3_cref_t acc, mine, t;
        gc3_chunk(prog, cur, GC3_BUF_INPUT, r, 1, &acc);
        for (int step = 1; step < R; step++) {
            int nxt = (cur + 1) % R;
            gc3_chunk(prog, nxt, GC3_BUF_INPUT, r, 1, &mine);
            if (nxt == r) {
                gc3_copy(prog, mine, nxt, GC3_BUF_OUTPUT, 0, 0, &t);
            } else {
                gc3_copy(prog, mine, nxt, GC3_BUF_SCRATCH, r, 0, &t);
            }
            gc3_reduce(prog, t, acc, 0, &acc);
            cur = nxt;
        }
    }
    return gc3_algo_finish(prog, "reduce_scatter_ring", diag, stats, program_p);
}
