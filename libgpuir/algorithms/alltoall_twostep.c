/* AllToAll on N nodes x G GPUs, two steps (GC3 paper, Fig. 8). Blocks for another node's
 * GPU g' are first gathered over NVLink at the local GPU g' (scratch, node-major, so the
 * G blocks for one peer node are contiguous); then one aggregated transfer per peer node
 * carries them to (m, g'), where they land contiguously in the output. Blocks within the
 * node go directly. In place, everything is staged in scratch before the output is written. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_alltoall_twostep)
{
    const int    N = params->nodes, G = params->gpus_per_node, R = N * G, k = params->chunks_per_peer, C = R * k;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "twostep", GC3_COLL_ALLTOALL, C, C, C, diag, &prog);

#define RK(n, g) ((n) * G + (g))
    /* scratch of (n, g'): gathered blocks [m*G*k ...) for peer node m (source GPU g inside);
       in place, received blocks land at [R*k + src*k ...) before the final copy */
    if (status != GC3_OK) {
        return status;
    }
    for (int n = 0; n < N; n++) {
        for (int g = 0; g < G; g++) {
            for (int m = 0; m < N; m++) {
                for (int g2 = 0; g2 < G; g2++) {
                    gc3_cref_t blk;
                    int        dst = RK(m, g2), src = RK(n, g);
                    gc3_chunk(prog, src, GC3_BUF_INPUT, dst * k, k, &blk);
                    if (m == n) {
                        if (params->inplace) {
                            gc3_copy(prog, blk, dst, GC3_BUF_SCRATCH, R * k + src * k, 0, &blk);
                        } else {
                            gc3_copy(prog, blk, dst, GC3_BUF_OUTPUT, src * k, 0, &blk);
                        }
                    } else {
                        gc3_copy(prog, blk, RK(n, g2), GC3_BUF_SCRATCH, (m * G + g) * k, 0, &blk);
                    }
                }
            }
        }
    }
    for (int n = 0; n < N; n++) {
        for (int g2 = 0; g2 < G; g2++) {
            for (int m = 0; m < N; m++) {
                gc3_cref_t agg;
                if (m == n) {
                    continue;
                }
                gc3_chunk(prog, RK(n, g2), GC3_BUF_SCRATCH, m * G * k, G * k, &agg);
                if (params->inplace) {
                    gc3_copy(prog, agg, RK(m, g2), GC3_BUF_SCRATCH, R * k + RK(n, 0) * k, 0, &agg);
                } else {
                    gc3_copy(prog, agg, RK(m, g2), GC3_BUF_OUTPUT, RK(n, 0) * k, 0, &agg);
                }
            }
        }
    }
    for (int r = 0; r < R && params->inplace; r++) {
        gc3_cref_t all;
        gc3_chunk(prog, r, GC3_BUF_SCRATCH, R * k, R * k, &all);
        gc3_copy(prog, all, r, GC3_BUF_OUTPUT, 0, 0, &all);
    }
#undef RK
    return gc3_algo_finish(prog, "twostep", diag, stats, program_p);
}
