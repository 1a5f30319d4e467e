/* AllReduce on N nodes x G GPUs (GC3 paper, Fig. 3). Chunk g*N + m ends owned by rank
 * (node m, GPU g), so GPU g of every node handles the contiguous block [g*N, (g+1)*N):
 *   1. intra-node reduce-scatter (ring over the G GPUs, whole blocks aggregated),
 *   2. inter-node reduce-scatter of the block (ring over the N nodes, one chunk each),
 *   3. inter-node allgather, 4. intra-node allgather (blocks again).
 * Rank of (node n, GPU g) is n*G + g. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_allreduce_hierarchical)
{
    const int    N = params->nodes, G = params->gpus_per_node, C = N * G;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "hierarchical", GC3_COLL_ALLREDUCE, C, C, C, diag, &prog);

#define RK(n, g) ((n) * G + (g))
    if (status != GC3_OK) {
        return status;
    }
    /* 1. intra-node reduce-scatter of block g, ending at GPU g */
    for (int n = 0; n < N; n++) {
        for (int g = 0; g < G; g++) {
            int        cur = (g + 1) % G;
            gc3_cref_t acc, mine, o;
            gc3_chunk(prog, RK(n, cur), GC3_BUF_INPUT, g * N, N, &acc);
            if (G == 1) {
                gc3_copy(prog, acc, RK(n, g), GC3_BUF_OUTPUT, g * N, 0, &acc);
            }
            for (int step = 1; step < G; step++) {
                int nxt = (cur + 1) % G;
                gc3_chunk(prog, RK(n, nxt), GC3_BUF_INPUT, g * N, N, &mine);
                gc3_copy(prog, mine, RK(n, nxt), GC3_BUF_OUTPUT, g * N, 0, &o);
                gc3_reduce(prog, o, acc, 0, &acc);
                cur = nxt;
            }
        }
    }
    /* 2 + 3. per GPU index g, chunk g*N + m is reduced around the ring of nodes ending at
       node m, then passed around once more */
    for (int g = 0; g < G && N > 1; g++) {
        for (int m = 0; m < N; m++) {
            int        idx = g * N + m, cur = (m + 1) % N;
            gc3_cref_t acc, o;
            gc3_chunk(prog, RK(cur, g), GC3_BUF_OUTPUT, idx, 1, &acc);
            for (int step = 1; step < N; step++) {
                int nxt = (cur + 1) % N;
                gc3_chunk(prog, RK(nxt, g), GC3_BUF_OUTPUT, idx, 1, &o);
                gc3_reduce(prog, o, acc, 0, &acc);
                cur = nxt;
            }
            for (int step = 1; step < N; step++) {
                cur = (cur + 1) % N;
                gc3_copy(prog, acc, RK(cur, g), GC3_BUF_OUTPUT, idx, 0, &acc);
            }
        }
    }
    /* 4. intra-node allgather of the blocks */
    for (int n = 0; n < N; n++) {
        for (int g = 0; g < G; g++) {
            gc3_cref_t blk;
            int        cur = g;
            gc3_chunk(prog, RK(n, g), GC3_BUF_OUTPUT, g * N, N, &blk);
            for (int step = 1; step < G; step++) {
                cur = (cur + 1) % G;
                gc3_copy(prog, blk, RK(n, cur), GC3_BUF_OUTPUT, g * N, 0, &blk);
            }
        }
    }
#undef RK
    return gc3_algo_finish(prog, "hierarchical", diag, stats, program_p);
}
