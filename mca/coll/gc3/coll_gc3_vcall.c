/* coll/gc3: what the v-collectives (MPI_Allgatherv, MPI_Alltoallv, MPI_Reduce_scatter) share: their
 * per-rank counts as the runtime's table (gc3_call_t.segs), a buffer from its lowest displacement, and
 * alltoallv's agreement on the call's largest segment. A v-call runs on its plain collective's plans
 * (allgather, alltoall, reduce_scatter), its loops and tile set by the largest segment of any rank's
 * call: allgatherv's and reduce_scatter's every rank knows (their counts are the same on every rank),
 * an alltoallv's rank knows its row and column of the matrix only, so the ranks agree on it: a small
 * allreduce on host memory before a blocking call, words sent to every rank and tested by the pipeline
 * for a nonblocking one (a nonblocking call must not wait for another rank: coll_gc3_vx.c). */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"
#include "opal/util/output.h"

long mca_coll_gc3_vbuf(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int slot, const void *user,
                       struct ompi_datatype_t *dt, const int *counts, const int *displs, int nsegs, int in, int out)
{
    long      lo = 0, end = 0;
    ptrdiff_t lb = 0, extent = 0;

    for (int q = 0; q < nsegs; q++) {
        if (counts[q] > 0) {
            lo  = displs[q] < lo ? displs[q] : lo;
            end = (long)displs[q] + counts[q] > end ? (long)displs[q] + counts[q] : end;
        }
    }
    if (user != NULL && user != MPI_IN_PLACE && dt != NULL) {
        ompi_datatype_get_extent(dt, &lb, &extent);
        user = (const char *)user + lo * (long)extent;
    }
    mca_coll_gc3_args_buf(m, a, slot, user, dt, (size_t)(end - lo), in, out);
    return lo;
}

uint64_t *mca_coll_gc3_segs_new(mca_coll_gc3_args_t *a, int nranks)
{
    const size_t words = gc3_coll_segs_words((gc3_coll_t)a->coll, nranks);

    free(a->segs);
    a->segs = words > 0 ? calloc(words, sizeof(uint64_t)) : NULL;
    if (a->segs != NULL) {
        a->segs[0] = (uint64_t)gc3_coll_segments((gc3_coll_t)a->coll, GC3_BUF_INPUT, nranks);
    }
    return a->segs;
}

void mca_coll_gc3_segs_set(mca_coll_gc3_args_t *a, int b, int s, size_t disp, size_t count, size_t size, size_t unit)
{
    uint64_t *e = (uint64_t *)gc3_coll_segs_pair(a->segs, b == 0 ? GC3_BUF_INPUT : GC3_BUF_OUTPUT, s);

    e[0] = count > 0 ? (uint64_t)(disp * size / unit) : 0; /* (an empty segment's displacement may be anything) */
    e[1] = (uint64_t)(count * size / unit);
}

void mca_coll_gc3_vrooted(mca_coll_gc3_args_t *a, int n, int at_root, int v, int b, int count, const int *counts,
                          const int *displs, long lo, size_t size, size_t mine)
{
    a->dtype = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op    = GC3_OP_SUM;
    if (v) {
        a->vagree = 1;
        a->vmine  = mine;
        for (int q = 0; at_root && q < n; q++) {
            a->vmine = (uint64_t)counts[q] * size > a->vmine ? (uint64_t)counts[q] * size : a->vmine;
        }
    } else {
        a->count = mine;
        a->bytes = mca_coll_gc3_args_bytes(a, n); /* (the route's key, coll_gc3_max_bytes) */
    }
    if (mca_coll_gc3_segs_new(a, n) != NULL) {
        mca_coll_gc3_segs_set(a, 1 - b, 0, 0, mine, 1, 1);
        for (int q = 0; at_root && q < n; q++) {
            mca_coll_gc3_segs_set(a, b, q, counts != NULL ? (size_t)(displs[q] - lo) : (size_t)q * (size_t)count,
                                  (size_t)(counts != NULL ? counts[q] : count), size, 1);
        }
    }
}

void mca_coll_gc3_vnull(mca_coll_gc3_args_t *a)
{
    static char none[16]; /* (every pair of such a side is empty: nothing is read or written there) */

    for (int i = 0; i < 2; i++) {
        if (a->ad.b[i].run == NULL && !(i == 0 && a->ad.inplace_send)) {
            a->ad.b[i].run = none;
        }
    }
}

/* Whether this rank cannot run the call it takes part in (no table: out of host memory; its buffers could not be
 * adapted): said once here. */
static int gc3_vbroken(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a)
{
    if (a->segs == NULL && a->backend >= 0) {
        a->backend = MCA_COLL_GC3_BACKEND_UNADAPTED; /* the call fails on this rank */
        mca_coll_gc3_report_failure(m, a->name, "out of host memory for its counts");
    }
    return a->backend < 0;
}

/* A blocking call's agreement (a->vagree): 1 with a->count set; -1 when it fails on every rank (a rank cannot run
 * it, or the allreduce failed). */
static int gc3_vagree(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a)
{
    uint64_t v[2] = { a->vmine, (uint64_t)gc3_vbroken(m, a) }, all[2] = { 0, 1 };
    int      rc = m->prev_allreduce != NULL
                      ? m->prev_allreduce(v, all, 2, MPI_UINT64_T, MPI_MAX, m->comm, m->prev_allreduce_module)
                      : OMPI_ERR_NOT_SUPPORTED;

    if (rc != OMPI_SUCCESS || all[1] != 0) {
        mca_coll_gc3_report_failure(m, a->name,
                                    rc != OMPI_SUCCESS ? "the ranks could not agree on its largest segment"
                                                       : "a rank cannot run it (out of host memory)");
        return -1;
    }
    a->count = (size_t)all[0];
    return 1;
}

/* 0 when the call is not for gc3's plans, every rank alike: nothing to move, or an alltoallv above
 * coll_gc3_max_bytes once its size is agreed (the others' size, set by their builders, was checked with the route). */
static int gc3_vsize(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a)
{
    if (a->count == 0) {
        return mca_coll_gc3_passed_on(m->comm, a->name, "count 0, nothing to move");
    }
    if (!a->vagree) {
        return 1;
    }
    a->bytes = mca_coll_gc3_args_bytes(a, ompi_comm_size(m->comm));
    return mca_coll_gc3_within_max_bytes(m, a->name, a->bytes);
}

int mca_coll_gc3_vrun(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int *rc)
{
    if (!mca_coll_gc3_route_take(m, a, MCA_COLL_GC3_CALL_BLOCKING)) {
        return 0;
    }
    if (a->vagree ? gc3_vagree(m, a) < 0 : gc3_vbroken(m, a)) {
        /* (alltoallv: every rank; the others: this rank, whose peers' calls then time out) */
        *rc = mca_coll_gc3_adapt_out(m, &a->ad, OMPI_ERROR);
        return 1;
    }
    mca_coll_gc3_vnull(a);
    if (gc3_vsize(m, a) &&
        mca_coll_gc3_try_run(m, (gc3_coll_t)a->coll, a, mca_coll_gc3_run_sbuf(a), mca_coll_gc3_run_rbuf(a), rc)) {
        *rc = mca_coll_gc3_adapt_out(m, &a->ad, *rc);
        return 1;
    }
    (void)mca_coll_gc3_adapt_out(m, &a->ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    return 0;
}

/* Before a v-call is queued (its size as the rules count it set by its builder; an alltoallv's agreed in the
 * queue, where a rank that cannot run it says so, so that it fails on every rank). 1 when it has nothing to move
 * (every rank alike: the counts say so). */
static int gc3_vqueue_prepare(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a)
{
    mca_coll_gc3_vnull(a);
    if (a->vagree) {
        a->vfail = gc3_vbroken(m, a);
        return 0;
    }
    (void)gc3_vbroken(m, a);
    return a->count == 0 && a->backend >= 0;
}

int mca_coll_gc3_vstart(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, ompi_request_t **request)
{
    if (gc3_vqueue_prepare(m, a)) {
        *request = &ompi_request_empty;
        return mca_coll_gc3_adapt_out(m, &a->ad, OMPI_SUCCESS);
    }
    return mca_coll_gc3_try_start(m, (gc3_coll_t)a->coll, a, mca_coll_gc3_run_sbuf(a), mca_coll_gc3_run_rbuf(a),
                                  request, NULL);
}

int mca_coll_gc3_vstart_persistent(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, struct mca_coll_gc3_request_t *r,
                                   int *rc)
{
    ompi_request_t *req = &r->super;

    if (gc3_vqueue_prepare(m, a)) {
        (void)mca_coll_gc3_adapt_out(m, &a->ad, OMPI_SUCCESS); /* the blocking call completes it */
        return 0;
    }
    *rc =
        mca_coll_gc3_try_start(m, (gc3_coll_t)a->coll, a, mca_coll_gc3_run_sbuf(a), mca_coll_gc3_run_rbuf(a), &req, r);
    return 1;
}

void mca_coll_gc3_args_end(mca_coll_gc3_args_t *a)
{
    free(a->segs);
    a->segs = NULL;
}
