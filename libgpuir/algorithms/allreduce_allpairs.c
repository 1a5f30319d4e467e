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
        gc3_cref_t mine, o, x;
        gc3_chunk(prog, r, GC3_BUF_INPUT, r * K, K, &mine);
        gc3_copy(prog, mine, r, GC3_BUF_OUTPUT, r * K, 0, &o);
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_chunk(prog, q, GC3_BUF_INPUT, r * K, K, &x);
                gc3_copy(prog, x, r, GC3_BUF_SCRATCH, (q < r ? q : q - 1) * K, 0, &x);
            }
        }
        /* chunk by chunk, each starting with another peer's copy, so that the K reductions run in
           different blocks (a reduction runs in the block that received its operand) */
        for (int j = 0; j < K; j++) {
            gc3_cref_t oj;
            gc3_chunk(prog, r, GC3_BUF_OUTPUT, r * K + j, 1, &oj);
            for (int m = 0; m < R - 1; m++) {
                int slot = (m + j) % (R - 1); /* peer q's scratch slot: q < r ? q : q - 1 */
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, slot * K + j, 1, &x);
                gc3_reduce(prog, oj, x, 0, &oj);
            }
        }
        gc3_chunk(prog, r, GC3_BUF_OUTPUT, r * K, K, &o);
        for (int q = 0; q < R; q++) {
            if (q != r) {
                gc3_copy(prog, o, q, GC3_BUF_OUTPUT, r * K, 0, &x);
            }
        }
    }
    return gc3_algo_finish(prog, "allpairs", diag, stats, program_p);
}
