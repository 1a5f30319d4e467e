/* Scatter, direct: the root sends each rank its block (chunks_per_peer chunks) straight into its output,
 * the chunks dealt out over the channels, and copies its own. The choice where the root's links reach
 * every rank (NVLink switches) at any size, LL for small ones. Non-roots only receive into their
 * output; they have no input. In place the root's output is its segment of the input: nothing to copy. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_scatter_direct)
{
    const int    R = params->nranks, k = params->chunks_per_peer, root = params->root;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "scatter_direct", GC3_COLL_SCATTER, R * k, k, R * k, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int i = 1; i < R; i++) {
        const int q = (root + i) % R;
        for (int m = 0; m < k; m++) {
            gc3_cref_t c;
            gc3_chunk(prog, root, GC3_BUF_INPUT, q * k + m, 1, &c);
            gc3_copy(prog, c, q, GC3_BUF_OUTPUT, m, (i - 1 + m) % params->channels, &c);
        }
    }
    for (int m = 0; m < k; m++) { /* its own block chunk by chunk, dealt on after the peers' */
        gc3_cref_t own;
        gc3_chunk(prog, root, GC3_BUF_INPUT, root * k + m, 1, &own);
        gc3_copy(prog, own, root, GC3_BUF_OUTPUT, m, (R - 1 + m) % params->channels, &own);
    }
    return gc3_algo_finish(prog, "scatter_direct", diag, stats, program_p);
}
