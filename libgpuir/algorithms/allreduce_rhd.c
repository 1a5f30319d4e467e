/* AllReduce, recursive halving and doubling. With P the largest power of two <= R, ranks
 * P..R-1 first fold their input into ranks 0..R-P-1 and get the result back at the end.
 * Among the P core ranks, halving exchanges half of the current range with the partner at
 * distance d = P/2, P/4, ..., 1 (reduce-scatter: rank r ends owning chunk r), doubling
 * sends the owned range back the same way (allgather). Transfers are aggregated ranges. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allreduce_rhd)
{
    const int    R = params->nranks;
    int          P = 1;
    gc3_prog_t  *prog;
    gc3_status_t status;
    int          lo[4096], hi[4096];

    while (P * 2 <= R) {
        P *= 2;
    }
    if (R > 4096) {
        gc3_diag_add(diag, "rhd: at most 4096 ranks");
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_algo_begin(params, "rhd", GC3_COLL_ALLREDUCE, P, P, P, diag, &prog);
    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < P; r++) {
        gc3_cref_t in, o, x;
        gc3_chunk(prog, r, GC3_BUF_INPUT, 0, P, &in);
        gc3_copy(prog, in, r, GC3_BUF_OUTPUT, 0, 0, &o);
        if (r + P < R) {
            gc3_chunk(prog, r + P, GC3_BUF_INPUT, 0, P, &x);
            gc3_reduce(prog, o, x, 0, &o);
        }
        lo[r] = 0;
        hi[r] = P;
    }
    for (int d = P / 2; d >= 1; d /= 2) {
        /* every pair exchanges halves; both reductions read the partner's other half */
        for (int r = 0; r < P; r++) {
            int        q = r ^ d, mid = (lo[r] + hi[r]) / 2;
            int        klo = (r & d) ? mid : lo[r], khi = (r & d) ? hi[r] : mid;
            gc3_cref_t mine, theirs;
            gc3_chunk(prog, r, GC3_BUF_OUTPUT, klo, khi - klo, &mine);
            gc3_chunk(prog, q, GC3_BUF_OUTPUT, klo, khi - klo, &theirs);
            gc3_reduce(prog, mine, theirs, 0, &mine);
        }
        for (int r = 0; r < P; r++) {
            int mid = (lo[r] + hi[r]) / 2;
            if (r & d) {
                lo[r] = mid;
            } else {
                hi[r] = mid;
            }
        }
    }
    for (int d = 1; d < P; d *= 2) {
        for (int r = 0; r < P; r++) {
            gc3_cref_t own;
            gc3_chunk(prog, r, GC3_BUF_OUTPUT, lo[r], hi[r] - lo[r], &own);
            gc3_copy(prog, own, r ^ d, GC3_BUF_OUTPUT, lo[r], 0, &own);
        }
        for (int r = 0; r < P; r++) {
            /* partners own adjacent ranges and both end with their union (min/max is
               symmetric, so updating r before its partner gives the partner the same result) */
            int q = r ^ d, nlo = lo[r] < lo[q] ? lo[r] : lo[q], nhi = hi[r] > hi[q] ? hi[r] : hi[q];
            lo[r] = nlo;
            hi[r] = nhi;
        }
    }
    for (int r = P; r < R; r++) {
        gc3_cref_t all;
        gc3_chunk(prog, r - P, GC3_BUF_OUTPUT, 0, P, &all);
        gc3_copy(prog, all, r, GC3_BUF_OUTPUT, 0, 0, &all);
    }
    return gc3_algo_finish(prog, "rhd", diag, stats, program_p);
}
