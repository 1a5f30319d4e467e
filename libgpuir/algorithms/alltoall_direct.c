/* AllToAll, direct: rank r sends its block for q (chunks_per_peer chunks) straight to q.
 * In place the blocks go through scratch first: a block may be overwritten only after it
 * was sent. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_alltoall_direct)
{
    const int    R = params->nranks, k = params->chunks_per_peer, C = R * k;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "direct", GC3_COLL_ALLTOALL, C, C, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        for (int q = 0; q < R; q++) {
            gc3_cref_t blk;
            gc3_chunk(prog, r, GC3_BUF_INPUT, q * k, k, &blk);
            if (params->inplace) {
                gc3_copy(prog, blk, q, GC3_BUF_SCRATCH, r * k, 0, &blk);
            } else {
                gc3_copy(prog, blk, q, GC3_BUF_OUTPUT, r * k, 0, &blk);
            }
        }
    }
    for (int q = 0; q < R && params->inplace; q++) {
        for (int r = 0; r < R; r++) {
            gc3_cref_t blk;
            gc3_chunk(prog, q, GC3_BUF_SCRATCH, r * k, k, &blk);
            gc3_copy(prog, blk, q, GC3_BUF_OUTPUT, r * k, 0, &blk);
        }
    }
    return gc3_algo_finish(prog, "direct", diag, stats, program_p);
}
