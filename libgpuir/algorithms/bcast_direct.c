/* Bcast, direct: the root sends its whole buffer (chunks_per_peer chunks) straight to every other
 * rank, the peers dealt out over the channels. One step: the latency choice for small sizes (LL).
 * Non-roots only receive into their output; they never read their input (they have none). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_bcast_direct)
{
    const int    R = params->nranks, k = params->chunks_per_peer, root = params->root;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "bcast_direct", GC3_COLL_BCAST, k, k, k, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int i = 1; i < R; i++) {
        const int  q = (root + i) % R;
        gc3_cref_t blk;
        gc3_chunk(prog, root, GC3_BUF_INPUT, 0, k, &blk);
        gc3_copy(prog, blk, q, GC3_BUF_OUTPUT, 0, (i - 1) % params->channels, &blk);
    }
    { /* the root's own output (nothing to do in place: its input is its output) */
        gc3_cref_t blk;
        gc3_chunk(prog, root, GC3_BUF_INPUT, 0, k, &blk);
        gc3_copy(prog, blk, root, GC3_BUF_OUTPUT, 0, 0, &blk);
    }
    return gc3_algo_finish(prog, "bcast_direct", diag, stats, program_p);
}
