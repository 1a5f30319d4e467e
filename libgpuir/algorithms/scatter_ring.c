/* Scatter, ring: a pipelined chain root -> root+1 -> ... Each block is cut into channels x
 * chunks_per_peer chunks; the block of rank root+j travels the chain (received into scratch and sent on:
 * rcs) into that rank's output, the farthest first. Every link carries at most the blocks of the ranks
 * after it: the choice where links are not all-to-all (PCIe trees), Simple. Non-roots have no input. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_scatter_ring)
{
    const int    R = params->nranks, nch = params->channels, root = params->root;
    const int    k = nch * params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "scatter_ring", GC3_COLL_SCATTER, R * k, k, R * k, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int j = R - 1; j >= 1; j--) {
        const int q = (root + j) % R;
        for (int m = 0; m < k; m++) {
            gc3_cref_t c;
            gc3_chunk(prog, root, GC3_BUF_INPUT, q * k + m, 1, &c);
            for (int i = 1; i <= j; i++) {
                const int at = (root + i) % R;
                gc3_copy(prog, c, at, at == q ? GC3_BUF_OUTPUT : GC3_BUF_SCRATCH, at == q ? m : q * k + m, m % nch, &c);
            }
        }
    }
    {
        gc3_cref_t own;
        gc3_chunk(prog, root, GC3_BUF_INPUT, root * k, k, &own);
        gc3_copy(prog, own, root, GC3_BUF_OUTPUT, 0, 0, &own);
    }
    return gc3_algo_finish(prog, "scatter_ring", diag, stats, program_p);
}
