/* Reduce, direct: every other rank sends its whole buffer (chunks_per_peer chunks) to the root,
 * into scratch so that the receives proceed in parallel, and the root reduces them into its output.
 * One step: the latency choice for small sizes (LL). Non-roots only read their input; their output
 * is never touched (MPI lets them pass none). */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_reduce_direct)
{
    const int    R = params->nranks, k = params->chunks_per_peer, root = params->root;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "reduce_direct", GC3_COLL_REDUCE, k, k, k, diag, &prog);
    gc3_cref_t   o, x;

    if (status != GC3_OK) {
        return status;
    }
    for (int i = 1; i < R; i++) { /* every transfer first */
        gc3_chunk(prog, (root + i) % R, GC3_BUF_INPUT, 0, k, &x);
        gc3_copy(prog, x, root, GC3_BUF_SCRATCH, (i - 1) * k, (i - 1) % params->channels, &x);
    }
    gc3_chunk(prog, root, GC3_BUF_INPUT, 0, k, &x);
    gc3_copy(prog, x, root, GC3_BUF_OUTPUT, 0, 0, &o); /* nothing to do in place */
    for (int i = 1; i < R; i++) {
        gc3_chunk(prog, root, GC3_BUF_SCRATCH, (i - 1) * k, k, &x);
        gc3_reduce(prog, o, x, 0, &o);
    }
    return gc3_algo_finish(prog, "reduce_direct", diag, stats, program_p);
}
