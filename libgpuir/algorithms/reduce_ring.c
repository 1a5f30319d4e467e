/* Reduce, ring: a pipelined chain root+1 -> root+2 -> ... -> root. The buffer is cut into
 * channels x chunks_per_peer x ngpus chunks; chunk i (on channel i % channels) starts at root+1,
 * each rank on the way combines its own input chunk with what it received and passes the result on
 * (rrs: the partial sums are kept nowhere), and the root combines the last one with its input into
 * its output (rrc). The bandwidth choice for large sizes (Simple). Non-roots only read their input;
 * their output is never touched. */
#include "gc3_algorithms.h"

GC3_ALGO_DECLARE(gc3_algo_reduce_ring)
{
    const int    R = params->nranks, nch = params->channels, root = params->root;
    const int    C = nch * params->chunks_per_peer * R;
    gc3_prog_t  *prog;
    gc3_status_t status = gc3_algo_begin(params, "reduce_ring", GC3_COLL_REDUCE, C, C, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int idx = 0; idx < C; idx++) {
        gc3_cref_t acc, mine, o;
        if (R == 1) {
            gc3_chunk(prog, root, GC3_BUF_INPUT, idx, 1, &mine);
            gc3_copy(prog, mine, root, GC3_BUF_OUTPUT, idx, 0, &o); /* nothing to do in place */
            continue;
        }
        gc3_chunk(prog, (root + 1) % R, GC3_BUF_INPUT, idx, 1, &acc);
        for (int i = 2; i <= R; i++) {
            const int q = (root + i) % R; /* i == R: the root */
            gc3_chunk(prog, q, GC3_BUF_INPUT, idx, 1, &mine);
            /* the partial result's place: the root's output, a non-root's scratch (the compiler
               forwards the copy into the reduction and keeps nothing there: rrs) */
            gc3_copy(prog, mine, q, q == root ? GC3_BUF_OUTPUT : GC3_BUF_SCRATCH, idx, idx % nch, &o);
            gc3_reduce(prog, o, acc, idx % nch, &acc);
        }
    }
    return gc3_algo_finish(prog, "reduce_ring", diag, stats, program_p);
}
