/* Scan and exscan (prefix reductions): rank r's output combines the inputs of ranks 0 to r (scan) or 0 to
 * r-1 (exscan; rank 0's output is never touched: MPI leaves it undefined).
 *   direct: every rank sends its buffer (chunks_per_peer chunks) to every rank after it, which reduces what
 *           it receives (one step: the latency choice for small sizes, LL; with a channel per peer and
 *           instances, the choice up to MBs on all-to-all links): one sender's chunk straight into the
 *           output, the others' through scratch;
 *   ring:   a pipelined chain 0 -> 1 -> ... -> R-1 carrying the running prefix, cut into channels x
 *           chunks_per_peer chunks: each rank combines its input with the prefix it receives (scan: into
 *           its output, which it sends on; exscan: the prefix received is its output, the prefix with its
 *           input goes on through scratch). The bandwidth choice for large sizes (Simple).
 *   doubling: recursive doubling (Hillis-Steele) over channels x chunks_per_peer chunks: in round d = 1, 2,
 *           4, ... every rank r >= d reduces the partial prefix rank r - d held before the round into its
 *           own (in its output), ceil(log2 R) rounds; rank r makes floor(log2 r) + 1 passes and no copy into
 *           scratch (the direct exchange: r passes and r - 1 copies), a chain of rounds in exchange. Scan only.
 *   sliced: the buffer cut into R slices of chunks_per_peer chunks; rank p carries slice p's prefix through
 *           the ranks in turn (prefix_r = prefix_{r-1} op input_r, each input received from its rank) and sends
 *           each prefix to its rank's output: every rank makes R - 1 passes (exscan R - 2) over 1/R of the
 *           buffer (the direct exchange: the last rank R - 1 passes over all of it), a chain of R - 1 steps
 *           inside the rank; chunk p * chunks_per_peer + piece of slice p on channel chunk mod channels. The
 *           pieces of one slice on one channel share its blocks: with as many pieces a channel as FIFO slots
 *           or more the compiler finds no order that cannot deadlock and says so (raise the slots or channels).
 * In place (the input is the output) every read of a rank's input comes before its output is written. */
#include <stdlib.h>
#include "gc3_algorithms.h"

static gc3_status_t gc3_scan_direct(const gc3_algo_params_t *params, int exclusive, const char *name, gc3_diag_t *diag,
                                    gc3_compile_stats_t *stats, gc3_ir_program_t **program_p)
{
    const int    R = params->nranks, k = params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_status_t status =
        gc3_algo_begin(params, name, exclusive ? GC3_COLL_EXSCAN : GC3_COLL_SCAN, k, k, k, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    /* Out of place, rank r's chunk j starts from sender j mod r's chunk, which goes straight into r's output
       (exscan) or is reduced with r's input into it as it arrives (scan: the copy of the input folds into
       that receive); the other senders' chunks j land in scratch first (slot q*k+j), on channel (r - q - 1)
       mod channels, and each rank reduces them into its output on the channel of the first. In place the
       output is the input, which the ranks after it still read: a receive into it would wait for them, so
       every chunk lands in scratch (a receive there need not wait) and the reductions follow. Transfers
       first, then rank by rank from the last: in place, every read of a rank's input then comes before its
       output is written. */
    const int straight = !params->inplace;
    for (int q = 0; q < R; q++) {
        for (int r = q + 1; r < R; r++) {
            const int  ch = (r - q - 1) % params->channels;
            gc3_cref_t x;
            if (!straight) {
                gc3_chunk(prog, q, GC3_BUF_INPUT, 0, k, &x);
                gc3_copy(prog, x, r, GC3_BUF_SCRATCH, q * k, ch, &x);
                continue;
            }
            for (int j = 0; j < k; j++) {
                if (j % r != q) {
                    gc3_chunk(prog, q, GC3_BUF_INPUT, j, 1, &x);
                    gc3_copy(prog, x, r, GC3_BUF_SCRATCH, q * k + j, ch, &x);
                }
            }
        }
    }
    for (int r = R - 1; r > 0; r--) {
        for (int j = 0; j < k; j++) {
            const int  q0 = j % r, ch = (r - q0 - 1) % params->channels;
            gc3_cref_t o, x;
            int        m = 0;
            if (!exclusive) { /* the input first (nothing to do in place) */
                gc3_chunk(prog, r, GC3_BUF_INPUT, j, 1, &x);
                gc3_copy(prog, x, r, GC3_BUF_OUTPUT, j, ch, &o);
            }
            if (straight) {
                gc3_chunk(prog, q0, GC3_BUF_INPUT, j, 1, &x);
                if (exclusive) {
                    gc3_copy(prog, x, r, GC3_BUF_OUTPUT, j, ch, &o);
                } else {
                    gc3_reduce(prog, o, x, ch, &o);
                }
                m = 1;
            } else if (exclusive) {
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, q0 * k + j, 1, &x);
                gc3_copy(prog, x, r, GC3_BUF_OUTPUT, j, ch, &o);
                m = 1;
            }
            for (; m < r; m++) {
                gc3_chunk(prog, r, GC3_BUF_SCRATCH, ((m + j) % r) * k + j, 1, &x);
                gc3_reduce(prog, o, x, ch, &o);
            }
        }
    }
    if (!exclusive) { /* rank 0's output is its input (nothing to do in place); exscan never touches it */
        gc3_cref_t x;
        gc3_chunk(prog, 0, GC3_BUF_INPUT, 0, k, &x);
        gc3_copy(prog, x, 0, GC3_BUF_OUTPUT, 0, 0, &x);
    }
    return gc3_algo_finish(prog, name, diag, stats, program_p);
}

static gc3_status_t gc3_scan_ring(const gc3_algo_params_t *params, int exclusive, const char *name, gc3_diag_t *diag,
                                  gc3_compile_stats_t *stats, gc3_ir_program_t **program_p)
{
    const int    R = params->nranks, nch = params->channels, C = nch * params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_status_t status =
        gc3_algo_begin(params, name, exclusive ? GC3_COLL_EXSCAN : GC3_COLL_SCAN, C, C, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    for (int idx = 0; idx < C; idx++) {
        const int  ch = idx % nch;
        gc3_cref_t acc, mine, o;
        gc3_chunk(prog, 0, GC3_BUF_INPUT, idx, 1, &acc);
        if (!exclusive) {
            gc3_copy(prog, acc, 0, GC3_BUF_OUTPUT, idx, ch, &acc); /* nothing to do in place */
        }
        for (int r = 1; r < R; r++) {
            if (!exclusive) { /* out_r = in_r op prefix_{r-1}, sent on from the output */
                gc3_chunk(prog, r, GC3_BUF_INPUT, idx, 1, &mine);
                gc3_copy(prog, mine, r, GC3_BUF_OUTPUT, idx, ch, &o);
                gc3_reduce(prog, o, acc, ch, &acc);
                continue;
            }
            /* exscan: the input kept in scratch before the prefix lands in the output (in place they are
               one buffer), then input op prefix goes on from scratch */
            if (r < R - 1) {
                gc3_chunk(prog, r, GC3_BUF_INPUT, idx, 1, &mine);
                gc3_copy(prog, mine, r, GC3_BUF_SCRATCH, idx, ch, &mine);
            }
            gc3_copy(prog, acc, r, GC3_BUF_OUTPUT, idx, ch, &o);
            if (r < R - 1) {
                gc3_reduce(prog, mine, o, ch, &acc);
            }
        }
    }
    return gc3_algo_finish(prog, name, diag, stats, program_p);
}

/* At rank p, dst = a op b: the operand at p (if either is) copied into dst, the other reduced into it (a remote
 * one received: the compiler folds the copy into that receive). */
static void gc3_scan_combine(gc3_prog_t *prog, int p, gc3_cref_t a, gc3_cref_t b, gc3_buf_t buf, int index, int ch,
                             gc3_cref_t *dst)
{
    if (a.rank != p && b.rank == p) {
        gc3_cref_t t = a;
        a            = b;
        b            = t;
    }
    gc3_copy(prog, a, p, buf, index, ch, dst);
    gc3_reduce(prog, *dst, b, ch, dst);
}

static gc3_status_t gc3_scan_sliced(const gc3_algo_params_t *params, int exclusive, const char *name, gc3_diag_t *diag,
                                    gc3_compile_stats_t *stats, gc3_ir_program_t **program_p)
{
    const int    R = params->nranks, k = params->chunks_per_peer, C = R * k;
    gc3_prog_t  *prog;
    gc3_status_t status =
        gc3_algo_begin(params, name, exclusive ? GC3_COLL_EXSCAN : GC3_COLL_SCAN, C, C, C, diag, &prog);

    if (status != GC3_OK) {
        return status;
    }
    /* Chunk idx = p*k + m of slice p, at rank p: acc is prefix_{r-1}, prefix_r = prefix_{r-1} op input_r lands
       in scratch slot r*k + m (scan, out of place: prefix_{p-1} in p's output, which p's own input is then
       reduced into; scan at r = p: in p's output). Every read of input_r comes before output_r is written (in
       place they are one buffer): trace order is the order of the data. */
    for (int p = 0; p < R; p++) {
        for (int m = 0; m < k; m++) {
            const int  idx = p * k + m, ch = idx % params->channels;
            gc3_cref_t acc, x, s;
            gc3_chunk(prog, 0, GC3_BUF_INPUT, idx, 1, &acc);
            for (int r = 1; r < R; r++) {
                gc3_chunk(prog, r, GC3_BUF_INPUT, idx, 1, &x);
                if (exclusive) { /* output_r = prefix_{r-1}; prefix_r is needed up to the last rank but one */
                    if (r < R - 1) {
                        gc3_scan_combine(prog, p, acc, x, GC3_BUF_SCRATCH, r * k + m, ch, &s);
                    }
                    gc3_copy(prog, acc, r, GC3_BUF_OUTPUT, idx, ch, &x);
                    if (r < R - 1) {
                        acc = s;
                    }
                } else if (r == p && acc.rank == p && acc.buf == GC3_BUF_OUTPUT) {
                    gc3_reduce(prog, acc, x, ch, &acc);
                } else if (r == p) {
                    gc3_scan_combine(prog, p, x, acc, GC3_BUF_OUTPUT, idx, ch, &acc);
                } else { /* output_r = prefix_r */
                    const int into_out = !params->inplace && r == p - 1;
                    gc3_scan_combine(prog, p, acc, x, into_out ? GC3_BUF_OUTPUT : GC3_BUF_SCRATCH,
                                     into_out ? idx : r * k + m, ch, &acc);
                    gc3_copy(prog, acc, r, GC3_BUF_OUTPUT, idx, ch, &x);
                }
            }
        }
    }
    if (!exclusive) { /* rank 0's output is its input (nothing to do in place); exscan never touches it */
        gc3_cref_t x;
        gc3_chunk(prog, 0, GC3_BUF_INPUT, 0, C, &x);
        gc3_copy(prog, x, 0, GC3_BUF_OUTPUT, 0, 0, &x);
    }
    return gc3_algo_finish(prog, name, diag, stats, program_p);
}

GC3_ALGO_DECLARE(gc3_algo_scan_doubling)
{
    const int    R = params->nranks, nch = params->channels, C = nch * params->chunks_per_peer;
    gc3_prog_t  *prog;
    gc3_cref_t  *cur;
    gc3_status_t status = GC3_ERR_NO_MEMORY;

    if ((cur = calloc((size_t)R, sizeof(*cur))) == NULL) {
        gc3_diag_add(diag, "scan_doubling: out of memory");
        goto out;
    }
    if ((status = gc3_algo_begin(params, "scan_doubling", GC3_COLL_SCAN, C, C, C, diag, &prog)) != GC3_OK) {
        goto out;
    }
    /* cur[r]: rank r's partial prefix of chunk idx (its input, then its output). Each round from the last
       rank down: rank r takes r - d's partial before r - d's own update of the round. */
    for (int idx = 0; idx < C; idx++) {
        const int ch = idx % nch;
        for (int r = 0; r < R; r++) {
            gc3_chunk(prog, r, GC3_BUF_INPUT, idx, 1, &cur[r]);
        }
        for (int d = 1; d < R; d *= 2) {
            for (int r = R - 1; r >= d; r--) {
                if (d == 1) { /* the input first (nothing to do in place); the receive folds it in */
                    gc3_copy(prog, cur[r], r, GC3_BUF_OUTPUT, idx, ch, &cur[r]);
                }
                gc3_reduce(prog, cur[r], cur[r - d], ch, &cur[r]);
            }
        }
        gc3_copy(prog, cur[0], 0, GC3_BUF_OUTPUT, idx, ch, &cur[0]); /* rank 0's output is its input */
    }
    status = gc3_algo_finish(prog, "scan_doubling", diag, stats, program_p);
out:
    free(cur);
    return status;
}

GC3_ALGO_DECLARE(gc3_algo_scan_direct)
{
    return gc3_scan_direct(params, 0, "scan_direct", diag, stats, program_p);
}

GC3_ALGO_DECLARE(gc3_algo_exscan_direct)
{
    return gc3_scan_direct(params, 1, "exscan_direct", diag, stats, program_p);
}

GC3_ALGO_DECLARE(gc3_algo_scan_ring)
{
    return gc3_scan_ring(params, 0, "scan_ring", diag, stats, program_p);
}

GC3_ALGO_DECLARE(gc3_algo_exscan_ring)
{
    return gc3_scan_ring(params, 1, "exscan_ring", diag, stats, program_p);
}

GC3_ALGO_DECLARE(gc3_algo_scan_sliced)
{
    return gc3_scan_sliced(params, 0, "scan_sliced", diag, stats, program_p);
}

GC3_ALGO_DECLARE(gc3_algo_exscan_sliced)
{
    return gc3_scan_sliced(params, 1, "exscan_sliced", diag, stats, program_p);
}
