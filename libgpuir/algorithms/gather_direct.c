/* Gather, direct: every other rank sends its block (chunks_per_peer chunks) straight into its segment of
 * the root's output, the chunks dealt out over the channels, and the root copies its own. The root's
 * links take every block at once: the choice where they are all-to-all (NVLink switches) at any size,
 * LL for small ones. Non-roots only read their input; their output is never touched (MPI lets them
 * pass none). In place the root's input is its segment of the output: nothing to copy. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_gather_direct)
{
    const int    R = params->nranks, k = params->chunks_per_peer, root = params->root;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "gather_direct", GC3_COLL_GATHER, k, R * k, R * k, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int i = 1; i < R; i++) {
        const int q = (root + i) % R;
        for (int m = 0; m < k; m++) {
            gc3_cref_t c;
            gc3_chunk(prog, q, GC3_BUF_INPUT, m, 1, &c);
            gc3_copy(prog, c, root, GC3_BUF_OUTPUT, q * k + m, (i - 1 + m) % params->channels, &c);
        }
    }
    for (int m = 0; m < k; m++) { /* its own block chunk by chunk, dealt on after the peers' */
        gc3_cref_t own;
        gc3_chunk(prog, root, GC3_BUF_INPUT, m, 1, &own);
        gc3_copy(prog, own, root, GC3_BUF_OUTPUT, root * k + m, (R - 1 + m) % params->channels, &own);
    }
    return gc3_algo_finish(prog, "gather_direct", diag, stats, program_p);
}
