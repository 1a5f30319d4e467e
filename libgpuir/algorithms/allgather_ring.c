/* AllGather, ring: rank r's chunk travels r -> r+1 -> ... (received and forwarded: rcs). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allgather_ring)
{
    const int    R = params->nranks;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "allgather_ring", GC3_COLL_ALLGATHER, 1, R, R, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        gc3_cref_t c, own;
        int        cur = r;
        gc3_chunk(prog, r, GC3_BUF_INPUT, 0, 1, &c);
        gc3_copy(prog, c, r, GC3_BUF_OUTPUT, r, 0, &own); /* nothing to do in place; the ring sends from the input */
        for (int step = 1; step < R; step++) {
            cur = (cur + 1) % R;
            gc3_copy(prog, c, cur, GC3_BUF_OUTPUT, r, 0, &c);
        }
    }
    return gc3_algo_finish(prog, "allgather_ring", diag, stats, program_p);
}
