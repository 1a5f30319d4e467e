/* coll/gc3: gc3's own point-to-point messages on a communicator, none of which waits for another
 * rank when it is posted or tested (both happen inside nonblocking starts and Open MPI's progress).
 *
 * 1. The set-up exchanges (the runtime's out-of-band interface, gc3_oob_t, and the component's
 *    agreements): an allgather in a ring, one exchange pending per communicator, tag
 *    MCA_COLL_GC3_TAG_SETUP. Not the previous module's iallgather: libnbc numbers its operations on
 *    a communicator in the order they are started, and a set-up phase is posted from progress, at
 *    a moment that differs between ranks, while other nonblocking collectives on the same
 *    communicator (the application's, or Open MPI's own when it allocates a communicator id) are
 *    started around it: the numbers, hence the messages, would pair up differently on different
 *    ranks. gc3's exchanges of one communicator are posted in the same order everywhere, and MPI
 *    delivers messages of one source, tag and communicator in order. Every block carries the
 *    exchange's number and size: ranks whose sequences went apart (an erroneous program, a rank
 *    that gave an exchange up) fail instead of reading each other's records.
 * 2. The host-staged exchange: a nonblocking call gc3 takes but has no plan for (the ranks' settings
 *    differ, no rule, a plan that cannot be used), on host copies of its buffers, tag
 *    MCA_COLL_GC3_TAG_DATA. Such calls start in call order on every rank, each posting all its
 *    messages at once, so they pair up in order too. (Passing them on to the previous module is not
 *    possible there: a call queued while its plan was being set up would reach libnbc later on some
 *    ranks than on others, after other operations; see 1.) */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "coll_gc3.h"
#include "ompi/mca/pml/pml.h"
#include "opal/util/output.h"

double mca_coll_gc3_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---------------------------------------------------------------- set-up exchanges */

typedef struct {
    uint32_t seq;   /* the exchange's number on the communicator */
    uint32_t bytes; /* its size per rank */
} mca_coll_gc3_xhdr_t;

typedef struct mca_coll_gc3_xchg_t {
    mca_coll_gc3_module_t *m;
    char                  *buf;  /* every rank's block: header + bytes */
    void                  *recv; /* the caller's: bytes per rank */
    size_t                 bytes, block;
    int                    n, rank, step; /* ring steps done */
    uint32_t               seq;
    ompi_request_t        *reqs[2];
} mca_coll_gc3_xchg_t;

/* Step `step` of the ring: send block rank - step to the right, receive block rank - step - 1 from
 * the left. */
static int mca_coll_gc3_xchg_step(mca_coll_gc3_xchg_t *x)
{
    int right = (x->rank + 1) % x->n, left = (x->rank - 1 + x->n) % x->n;
    int sblk = (x->rank - x->step + x->n) % x->n, rblk = (x->rank - x->step - 1 + 2 * x->n) % x->n;
    int rc;

    x->reqs[0] = x->reqs[1] = MPI_REQUEST_NULL;
    rc = MCA_PML_CALL(irecv(x->buf + (size_t)rblk * x->block, x->block, MPI_BYTE, left, MCA_COLL_GC3_TAG_SETUP,
                            x->m->comm, &x->reqs[1]));
    if (rc == OMPI_SUCCESS) {
        rc = MCA_PML_CALL(isend(x->buf + (size_t)sblk * x->block, x->block, MPI_BYTE, right, MCA_COLL_GC3_TAG_SETUP,
                                MCA_PML_BASE_SEND_STANDARD, x->m->comm, &x->reqs[0]));
    }
    return rc;
}

int mca_coll_gc3_oob_iallgather(void *ctx, const void *send, void *recv, size_t bytes, void **req_p)
{
    mca_coll_gc3_module_t *m = ctx;
    mca_coll_gc3_xchg_t   *x = calloc(1, sizeof(*x));
    mca_coll_gc3_xhdr_t    h;

    if (x == NULL || bytes > UINT32_MAX) {
        free(x);
        return 1;
    }
    x->m     = m;
    x->recv  = recv;
    x->bytes = bytes;
    x->block = sizeof(h) + bytes;
    x->n     = ompi_comm_size(m->comm);
    x->rank  = ompi_comm_rank(m->comm);
    x->seq   = ++m->oob.seq;
    x->buf   = malloc((size_t)x->n * x->block);
    if (x->buf == NULL) {
        free(x);
        return 1;
    }
    h.seq   = x->seq;
    h.bytes = (uint32_t)bytes;
    memcpy(x->buf + (size_t)x->rank * x->block, &h, sizeof(h));
    memcpy(x->buf + (size_t)x->rank * x->block + sizeof(h), send, bytes);
    m->oob.pending = x;
    m->oob.posted  = mca_coll_gc3_now();
    if (x->n > 1 && mca_coll_gc3_xchg_step(x) != OMPI_SUCCESS) {
        /* nothing to match: the others' exchange fails or times out */
        m->oob.pending = NULL;
        if (x->reqs[1] != MPI_REQUEST_NULL) {
            return 1; /* a receive is posted: the buffer stays with it */
        }
        free(x->buf);
        free(x);
        return 1;
    }
    *req_p = x;
    return 0;
}

int mca_coll_gc3_oob_test(void *ctx, void *req)
{
    mca_coll_gc3_module_t *m = ctx;
    mca_coll_gc3_xchg_t   *x = req;

    while (x->step < x->n - 1) {
        int err = 0;
        if (!REQUEST_COMPLETE(x->reqs[0]) || !REQUEST_COMPLETE(x->reqs[1])) {
            return 0;
        }
        for (int i = 0; i < 2; i++) {
            err |= x->reqs[i]->req_status.MPI_ERROR != MPI_SUCCESS;
            ompi_request_free(&x->reqs[i]);
        }
        x->step++;
        if (err || (x->step < x->n - 1 && mca_coll_gc3_xchg_step(x) != OMPI_SUCCESS)) {
            m->oob.pending = NULL;
            m->unusable    = 1; /* a message of a later exchange might match what this one left */
            return -1;          /* (x stays: a request of it may still be pending) */
        }
    }
    m->oob.pending = NULL;
    for (int q = 0; q < x->n; q++) {
        mca_coll_gc3_xhdr_t h;
        memcpy(&h, x->buf + (size_t)q * x->block, sizeof(h));
        if (h.seq != x->seq || h.bytes != x->bytes) {
            opal_output(0,
                        "coll:gc3: comm %s rank %d: gc3's set-up exchange %u (%zu bytes per rank) met rank %d's "
                        "exchange %u (%u bytes): the ranks' calls on this communicator went apart (an erroneous "
                        "program, or a rank that gave an exchange up after coll_gc3_timeout)",
                        m->comm->c_name, x->rank, x->seq, x->bytes, q, h.seq, h.bytes);
            m->unusable = 1;
            free(x->buf);
            free(x);
            return -1;
        }
        memcpy((char *)x->recv + (size_t)q * x->bytes, x->buf + (size_t)q * x->block + sizeof(h), x->bytes);
    }
    free(x->buf);
    free(x);
    return 1;
}

/* ---------------------------------------------------------------- the host-staged exchange */

#define MCA_COLL_GC3_HSX_PIECE ((size_t)1 << 30) /* bytes per message */

typedef struct mca_coll_gc3_hsx_t {
    char            *mine; /* this rank's input: one block, or n (an input of one segment per rank); per-rank
                            * counts: a host image of the input */
    char            *all;  /* n blocks received (this rank's copied); per-rank counts: a host image of the output
                            * (allgather, alltoall) or n blocks of this rank's result (reduce_scatter) */
    size_t           B;    /* bytes per block (per-rank counts: of this rank's reduce_scatter result) */
    int              nreq;
    ompi_request_t **reqs;
    int             *peer; /* of each request */
    double           t0;
} mca_coll_gc3_hsx_t;

/* Copy between a call's buffer (device memory when the call is on device buffers) and host memory. */
static int mca_coll_gc3_hsx_copy(const mca_coll_gc3_task_t *t, void *dst, const void *src, size_t bytes)
{
    if (!t->device) {
        memcpy(dst, src, bytes);
        return OMPI_SUCCESS;
    }
    return mca_coll_gc3_memcpy(dst, src, bytes);
}

static void mca_coll_gc3_hsx_free(mca_coll_gc3_hsx_t *h)
{
    if (h != NULL) {
        free(h->mine);
        free(h->all);
        free(h->reqs);
        free(h->peer);
        free(h);
    }
}

/* Whether this rank (me) sends to and receives from q in the host-staged exchange of t: every pair, or a rooted
 * collective's root and each other rank (towards the root where only the root has an output: reduce, gather;
 * from it where only the root has an input: bcast, scatter). */
static void gc3_hsx_peers(const mca_coll_gc3_task_t *t, int me, int q, int *send, int *recv)
{
    const gc3_coll_desc_t *d       = gc3_coll_desc((gc3_coll_t)t->coll);
    const int              to_root = d->root_buf == GC3_BUF_OUTPUT;

    *send = !d->rooted || (to_root ? q == t->root : me == t->root);
    *recv = !d->rooted || (to_root ? me == t->root : q == t->root);
}

/* Segment s of buffer b of the call (gc3_call_seg), in bytes. */
static void gc3_hsx_pair(const mca_coll_gc3_task_t *t, gc3_buf_t b, int s, size_t *at, size_t *len)
{
    const size_t ds = gc3_dtype_size(t->call.dtype);
    uint64_t     first, n;

    gc3_call_seg(&t->call, b, s, &first, &n);
    *at  = (size_t)first * ds;
    *len = (size_t)n * ds;
}

/* Where the call's input and output are, as the runtime places them (in place: inside recvbuf). */
static void gc3_hsx_bufs(const mca_coll_gc3_module_t *m, const mca_coll_gc3_task_t *t, char **in, char **out)
{
    gc3_call_places((gc3_coll_t)t->coll, t->root, ompi_comm_rank(m->comm), &t->call, in, out);
}

/* The end of buffer b's last segment (bytes). */
static size_t gc3_hsx_span(const mca_coll_gc3_module_t *m, const mca_coll_gc3_task_t *t, gc3_buf_t b)
{
    size_t end = 0, at, len;
    for (int s = 0; s < gc3_coll_segments((gc3_coll_t)t->coll, b, ompi_comm_size(m->comm)); s++) {
        gc3_hsx_pair(t, b, s, &at, &len);
        end = len > 0 && at + len > end ? at + len : end;
    }
    return end;
}

/* Post a message of len bytes to or from q in pieces (h->reqs); OMPI_SUCCESS or the error. */
static int gc3_hsx_post(mca_coll_gc3_module_t *m, mca_coll_gc3_hsx_t *h, int send, int q, char *buf, size_t len)
{
    int rc = OMPI_SUCCESS;
    for (size_t off = 0; off < len && rc == OMPI_SUCCESS; off += MCA_COLL_GC3_HSX_PIECE) {
        const size_t piece = len - off < MCA_COLL_GC3_HSX_PIECE ? len - off : MCA_COLL_GC3_HSX_PIECE;
        h->peer[h->nreq]   = q;
        rc =
            send
                ? MCA_PML_CALL(isend(buf + off, piece, MPI_BYTE, q, MCA_COLL_GC3_TAG_DATA, MCA_PML_BASE_SEND_STANDARD,
                                     m->comm, &h->reqs[h->nreq]))
                : MCA_PML_CALL(irecv(buf + off, piece, MPI_BYTE, q, MCA_COLL_GC3_TAG_DATA, m->comm, &h->reqs[h->nreq]));
        h->nreq += rc == OMPI_SUCCESS;
    }
    return rc;
}

/* The host-staged exchange of a call of per-rank counts: every segment sent to the rank it is for (allgather:
 * this rank's one to every rank; a rooted collective's: between the root and each rank), received into a host
 * image of the output (reduce_scatter: this rank's block from every rank, reduced at the end); empty segments
 * send nothing (both ends know). */
static int gc3_hsx_v_start(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, mca_coll_gc3_hsx_t *h)
{
    const int              n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm);
    const int              rs = t->coll == GC3_COLL_REDUCE_SCATTER;
    const gc3_coll_desc_t *d  = gc3_coll_desc((gc3_coll_t)t->coll);
    char       *in, *out;
    size_t      at, biggest = 1, in_span = gc3_hsx_span(m, t, GC3_BUF_INPUT), pieces;
    int         rc;

    gc3_hsx_bufs(m, t, &in, &out);
    gc3_hsx_pair(t, GC3_BUF_OUTPUT, rs ? 0 : me, &at, &h->B); /* (reduce_scatter: this rank's result) */
    for (size_t w = 1; w + 1 < gc3_coll_segs_words((gc3_coll_t)t->coll, n); w += 2) {
        biggest = t->call.segs[w + 1] * gc3_dtype_size(t->call.dtype) > biggest
                      ? t->call.segs[w + 1] * gc3_dtype_size(t->call.dtype)
                      : biggest;
    }
    pieces  = (biggest + MCA_COLL_GC3_HSX_PIECE - 1) / MCA_COLL_GC3_HSX_PIECE;
    h->mine = malloc(in_span + 1);
    h->all  = malloc((rs ? (size_t)n * h->B : gc3_hsx_span(m, t, GC3_BUF_OUTPUT)) + 1);
    h->reqs = calloc(2 * (size_t)n * pieces, sizeof(*h->reqs));
    h->peer = calloc(2 * (size_t)n * pieces, sizeof(*h->peer));
    if (h->mine == NULL || h->all == NULL || h->reqs == NULL || h->peer == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if ((rc = mca_coll_gc3_hsx_copy(t, h->mine, in, in_span)) != OMPI_SUCCESS) {
        return rc;
    }
    for (int q = 0; q < n && rc == OMPI_SUCCESS; q++) {
        int    send, recv;
        size_t sat, slen, rat, rlen;
        gc3_hsx_peers(t, me, q, &send, &recv);
        gc3_hsx_pair(t, GC3_BUF_INPUT, d->in_per_rank ? q : 0, &sat, &slen);   /* what goes to q */
        gc3_hsx_pair(t, GC3_BUF_OUTPUT, d->out_per_rank ? q : 0, &rat, &rlen); /* where q's comes */
        rat = rs ? (size_t)q * h->B : rat;
        if (q == me) {
            if (send && recv) {
                memcpy(h->all + rat, h->mine + sat, rlen);
            }
            continue;
        }
        rc = recv ? gc3_hsx_post(m, h, 0, q, h->all + rat, rlen) : OMPI_SUCCESS;
        if (rc == OMPI_SUCCESS && send) {
            rc = gc3_hsx_post(m, h, 1, q, h->mine + sat, slen);
        }
    }
    return rc;
}

/* Its end: reduce_scatter's blocks reduced in rank order; every segment of the output copied back (the bytes
 * between them untouched). */
static int gc3_hsx_v_finish(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, mca_coll_gc3_hsx_t *h)
{
    const int   n = ompi_comm_size(m->comm);
    char       *in, *out;
    size_t      at, len;
    int         rc = OMPI_SUCCESS;

    gc3_hsx_bufs(m, t, &in, &out);
    if (t->coll == GC3_COLL_REDUCE_SCATTER) {
        const size_t ds = gc3_dtype_size(t->call.dtype);
        for (int q = 1; q < n && rc == OMPI_SUCCESS; q++) {
            rc = gc3_reduce_host(t->call.dtype, t->call.op, h->all, h->all + (size_t)q * h->B, h->B / ds) == GC3_OK
                     ? OMPI_SUCCESS
                     : OMPI_ERROR;
        }
        return rc == OMPI_SUCCESS ? mca_coll_gc3_hsx_copy(t, out, h->all, h->B) : rc;
    }
    for (int q = 0; q < gc3_coll_segments((gc3_coll_t)t->coll, GC3_BUF_OUTPUT, n) && rc == OMPI_SUCCESS; q++) {
        gc3_hsx_pair(t, GC3_BUF_OUTPUT, q, &at, &len); /* (none at a gather's non-root: its pairs are empty) */
        rc = len > 0 ? mca_coll_gc3_hsx_copy(t, out + at, h->all + at, len) : OMPI_SUCCESS;
    }
    return rc;
}

int mca_coll_gc3_hsx_start(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t)
{
    int                    n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm), rc = OMPI_SUCCESS;
    mca_coll_gc3_hsx_t    *h   = calloc(1, sizeof(*h));
    const gc3_coll_desc_t *d   = gc3_coll_desc((gc3_coll_t)t->coll);
    char                  *in, *out;
    int                    a2a = d->in_per_rank; /* block q of the input goes to rank q */
    size_t                 pieces;

    if (h == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (t->call.segs != NULL) {
        h->t0 = mca_coll_gc3_now();
        rc    = gc3_hsx_v_start(m, t, h);
        if (rc != OMPI_SUCCESS && h->nreq == 0) {
            mca_coll_gc3_hsx_free(h);
            return rc;
        }
        t->hsx = h;
        if (rc != OMPI_SUCCESS) {
            m->unusable = 1; /* posted in part: the peers' messages would match later calls' */
        }
        return rc;
    }
    h->B = t->call.count * gc3_dtype_size(t->call.dtype); /* (bytes as UINT8 where gc3 moves bytes) */
    gc3_hsx_bufs(m, t, &in, &out);                        /* (allgather in place: this rank's block of the output) */
    (void)out;                                            /* (its results go to recvbuf as a whole, below) */
    pieces  = (h->B + MCA_COLL_GC3_HSX_PIECE - 1) / MCA_COLL_GC3_HSX_PIECE;
    h->mine = malloc((a2a ? (size_t)n : 1) * h->B + 1);
    h->all  = malloc((size_t)n * h->B + 1);
    h->reqs = calloc(2 * (size_t)n * (pieces > 0 ? pieces : 1), sizeof(*h->reqs));
    h->peer = calloc(2 * (size_t)n * (pieces > 0 ? pieces : 1), sizeof(*h->peer));
    h->t0   = mca_coll_gc3_now();
    if (h->mine == NULL || h->all == NULL || h->reqs == NULL || h->peer == NULL) {
        mca_coll_gc3_hsx_free(h);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    /* a bcast's non-root has no input (its buffer is the output); the others all have one */
    if (!(t->coll == GC3_COLL_BCAST && me != t->root)) {
        rc = mca_coll_gc3_hsx_copy(t, h->mine, in, (a2a ? (size_t)n : 1) * h->B);
        if (rc != OMPI_SUCCESS) {
            mca_coll_gc3_hsx_free(h);
            return rc;
        }
        memcpy(h->all + (size_t)me * h->B, h->mine + (a2a ? (size_t)me * h->B : 0), h->B);
    }
    for (int q = 0; q < n && rc == OMPI_SUCCESS; q++) {
        const char *src = h->mine + (a2a ? (size_t)q * h->B : 0);
        int         send, recv;
        gc3_hsx_peers(t, me, q, &send, &recv);
        if (q != me && recv) {
            rc = gc3_hsx_post(m, h, 0, q, h->all + (size_t)q * h->B, h->B);
        }
        if (q != me && send && rc == OMPI_SUCCESS) {
            rc = gc3_hsx_post(m, h, 1, q, (char *)src, h->B);
        }
    }
    t->hsx = h;
    if (rc != OMPI_SUCCESS) {
        m->unusable = 1; /* posted in part: the peers' messages would match later calls' */
        return rc;
    }
    return OMPI_SUCCESS;
}

int mca_coll_gc3_hsx_test(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, int *rc)
{
    mca_coll_gc3_hsx_t    *h = t->hsx;
    const gc3_coll_desc_t *d = gc3_coll_desc((gc3_coll_t)t->coll);
    int                    n = ompi_comm_size(m->comm), err = 0;
    double                 timeout = mca_coll_gc3_component.timeout;

    for (int i = 0; i < h->nreq; i++) {
        if (!REQUEST_COMPLETE(h->reqs[i])) {
            char *why = NULL;
            if (timeout <= 0 || mca_coll_gc3_now() - h->t0 <= timeout) {
                return 0;
            }
            mca_coll_gc3_set_text(&why,
                                  "timeout after %.1f s waiting for rank %d in the host-staged exchange (the "
                                  "call has no gc3 plan); gc3 fails every later call on this communicator",
                                  timeout, h->peer[i]);
            mca_coll_gc3_report_failure(m, mca_coll_gc3_task_name(t), MCA_COLL_GC3_TEXT(why));
            free(why);
            m->unusable = 1;
            t->hsx      = NULL; /* its buffers stay with the pending messages */
            *rc         = OMPI_ERROR;
            return 1;
        }
    }
    for (int i = 0; i < h->nreq; i++) {
        err |= h->reqs[i]->req_status.MPI_ERROR != MPI_SUCCESS;
        ompi_request_free(&h->reqs[i]);
    }
    *rc = err ? OMPI_ERROR : OMPI_SUCCESS;
    if (*rc == OMPI_SUCCESS && t->call.segs != NULL) {
        *rc = gc3_hsx_v_finish(m, t, h);
    } else if (*rc == OMPI_SUCCESS && d->rooted && ompi_comm_rank(m->comm) != t->root) {
        /* a reduce's non-root has no result; a bcast's gets the root's block */
        if (!d->reduces) {
            *rc = mca_coll_gc3_hsx_copy(t, t->call.recvbuf, h->all + (size_t)t->root * h->B, h->B);
        }
    } else if (*rc == OMPI_SUCCESS && d->rooted && !d->reduces) {
        /* a bcast's root: its buffer is the result already */
    } else if (*rc == OMPI_SUCCESS && d->prefix == 2 && ompi_comm_rank(m->comm) == 0) {
        /* exscan: rank 0's receive buffer is not written */
    } else if (*rc == OMPI_SUCCESS && d->reduces) {
        /* in rank order on every rank: the same result everywhere (a prefix: ranks 0 to this one, or to the one
           before it) */
        const int upto = d->prefix ? ompi_comm_rank(m->comm) + (d->prefix == 1) : n;
        for (int q = 1; q < upto && *rc == OMPI_SUCCESS; q++) {
            *rc = gc3_reduce_host(t->call.dtype, t->call.op, h->all, h->all + (size_t)q * h->B, t->call.count) == GC3_OK
                      ? OMPI_SUCCESS
                      : OMPI_ERROR;
        }
        if (*rc == OMPI_SUCCESS) {
            *rc = mca_coll_gc3_hsx_copy(t, t->call.recvbuf, h->all, h->B); /* one block: allreduce's, or this
                                                                          * rank's of reduce_scatter */
        }
    } else if (*rc == OMPI_SUCCESS) {
        *rc = mca_coll_gc3_hsx_copy(t, t->call.recvbuf, h->all, (size_t)n * h->B);
    }
    if (*rc != OMPI_SUCCESS) {
        mca_coll_gc3_report_failure(m, mca_coll_gc3_task_name(t),
                                    err ? "a message of the host-staged exchange failed" : "copying the result failed");
    }
    mca_coll_gc3_hsx_free(h);
    t->hsx = NULL;
    return 1;
}
