/* Bcast, ring: a pipelined chain root -> root+1 -> ... -> root-1. The buffer is cut into
 * channels x chunks_per_peer x ngpus chunks; each travels the chain (received and passed on: rcs),
 * chunk i on channel i % channels, so that the chunks pipeline along it. The bandwidth choice for
 * large sizes (Simple). Non-roots only receive into their output and send from it. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_bcast_ring)
{
    const int    R = params->nranks, nch = params->channels, root = params->root;
    const int    C = nch * params->chunks_per_peer * R;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "bcast_ring", GC3_COLL_BCAST, C, C, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int idx = 0; idx < C; idx++) {
        gc3_cref_t c, own;
        gc3_chunk(prog, root, GC3_BUF_INPUT, idx, 1, &c);
        gc3_copy(prog, c, root, GC3_BUF_OUTPUT, idx, idx % nch, &own); /* nothing to do in place */
        for (int i = 1; i < R; i++) {
            gc3_copy(prog, c, (root + i) % R, GC3_BUF_OUTPUT, idx, idx % nch, &c);
        }
    }
    return gc3_algo_finish(prog, "bcast_ring", diag, stats, program_p);
}
