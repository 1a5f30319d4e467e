/* AllReduce, all-pairs: rank r owns chunks [r*K, (r+1)*K) (K = chunks_per_peer, default 1); every
 * other rank sends it its copy of them (into scratch, so the receives proceed in parallel), r reduces
 * them and sends the result to everybody. Two communication steps: the latency choice for small sizes
 * (use LL). With K = R and instances it has the shape of MSCCL's all-pairs programs (R*R*instances
 * chunks per loop). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allreduce_allpairs)
{
    const int    R = params->nranks, K = params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "allpairs", GC3_COLL_ALLREDUCE, R * K, R * K, R * K, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        gc3_cref_t o, x;
        gc3_algo_reduce_to_owner(prog, R, K, r, r * K, 1);
        gc3_chunk(prog, r, GC3_BUF_OUTPUT, r * K, K, &o);
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_copy(prog, o, q, GC3_BUF_OUTPUT, r * K, 0, &x);
            }
        }
    }
    return gc3_algo_finish(prog, "allpairs", diag, stats, program_p);
}
