/* Gather, ring: a pipelined chain root+1 -> root+2 -> ... -> root. Each block is cut into channels x
 * chunks_per_peer chunks; rank root+j's chunks travel down the chain (received into scratch and sent on:
 * rcs) to the root's output. Every link carries at most the blocks of the ranks before it: the choice
 * where links are not all-to-all (PCIe trees, rings between sockets), Simple. Non-roots only read
 * their input. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_gather_ring)
{
    const int    R = params->nranks, nch = params->channels, root = params->root;
    const int    k = nch * params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "gather_ring", GC3_COLL_GATHER, k, R * k, R * k, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int j = 1; j < R; j++) {
        const int q = (root + j) % R;
        for (int m = 0; m < k; m++) {
            gc3_cref_t c;
            gc3_chunk(prog, q, GC3_BUF_INPUT, m, 1, &c);
            for (int i = j + 1; i <= R; i++) { /* i == R: the root */
                const int at = (root + i) % R;
                gc3_copy(prog, c, at, at == root ? GC3_BUF_OUTPUT : GC3_BUF_SCRATCH, q * k + m, m % nch, &c);
            }
        }
    }
    {
        gc3_cref_t own;
        gc3_chunk(prog, root, GC3_BUF_INPUT, 0, k, &own);
        gc3_copy(prog, own, root, GC3_BUF_OUTPUT, root * k, 0, &own);
    }
    return gc3_algo_finish(prog, "gather_ring", diag, stats, program_p);
}
