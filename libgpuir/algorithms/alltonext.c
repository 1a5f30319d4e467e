/* AllToNext (custom collective, GC3 paper §7): rank i sends its whole buffer (G chunks) to
 * rank i+1. Inside a node that is one transfer; from the last GPU of node n to the first of
 * node n+1 the buffer is split: chunk c goes over NVLink to GPU c of node n, over the
 * network to GPU c of node n+1, and over NVLink to its destination, so all G NICs carry it. */
#include <stdlib.h>
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_alltonext)
{
    const int        N = params->nodes, G = params->gpus_per_node, R = N * G;
    gc3_prog_t      *prog = NULL;
    gc3_status_t     status = GC3_ERR_NO_MEMORY;
    uint32_t        *ids    = malloc((size_t)R * (size_t)G * 2 * sizeof(uint32_t));
    const uint32_t **rows   = calloc((size_t)R * (size_t)G + 1, sizeof(uint32_t *));
    const uint32_t *const **cells = calloc((size_t)R + 1, sizeof(*cells));

    if (ids == NULL || rows == NULL || cells == NULL) {
        goto out;
    }
    if (params->inplace) {
        gc3_diag_add(diag, "alltonext: only out of place");
        status = GC3_ERR_UNSUPPORTED;
        goto out;
    }
    /* postcondition: output chunk c of rank j > 0 is input chunk c of rank j-1 (one id and a
       terminator per cell); rank 0's output: don't care */
    for (int j = 0; j < R; j++) {
        cells[j] = rows + (size_t)j * G;
        for (int c = 0; c < G; c++) {
            uint32_t *cell          = ids + ((size_t)j * G + c) * 2;
            cell[0]                 = (uint32_t)(j - 1) * (uint32_t)G + (uint32_t)c;
            cell[1]                 = UINT32_MAX;
            rows[(size_t)j * G + c] = j > 0 ? cell : NULL;
        }
    }
    status = gc3_algo_begin_custom(params, "alltonext", "alltonext", cells, G, G, G, diag, &prog);
    if (status != GC3_OK) {
        goto out;
    }
    for (int i = 0; i + 1 < R; i++) {
        int n = i / G, g = i % G;
        if (g + 1 < G) {
            gc3_cref_t all;
            gc3_chunk(prog, i, GC3_BUF_INPUT, 0, G, &all);
            gc3_copy(prog, all, i + 1, GC3_BUF_OUTPUT, 0, 0, &all);
            continue;
        }
        for (int c = 0; c < G; c++) {
            gc3_cref_t x;
            int        via_src = n * G + c, via_dst = (n + 1) * G + c;
            gc3_chunk(prog, i, GC3_BUF_INPUT, c, 1, &x);
            if (via_src != i) {
                gc3_copy(prog, x, via_src, GC3_BUF_SCRATCH, c, 0, &x);
            }
            /* scratch [0, G): outgoing relay, [G, 2G): incoming relay (a GPU can be both) */
            if (via_dst == i + 1) {
                gc3_copy(prog, x, via_dst, GC3_BUF_OUTPUT, c, 0, &x);
            } else {
                gc3_copy(prog, x, via_dst, GC3_BUF_SCRATCH, G + c, 0, &x);
                gc3_copy(prog, x, i + 1, GC3_BUF_OUTPUT, c, 0, &x);
            }
        }
    }
    status = gc3_algo_finish(prog, "alltonext", diag, stats, program_p);
    prog   = NULL;
out:
    gc3_prog_destroy(prog);
    free(ids);
    free(rows);
    free(cells);
    return status;
}
