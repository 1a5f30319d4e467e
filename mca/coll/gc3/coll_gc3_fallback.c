/* coll/gc3: the collectives gc3 passes on (coll_gc3_colls.h). With host buffers they go straight
 * to the previous module; with device buffers (which that module would dereference and crash on)
 * every buffer is copied through host memory around the call (mca_coll_gc3_stage_in/out,
 * coll_gc3_stage.c), or as coll_gc3_fallback says. Each function describes its buffers and calls
 * the previous module between the two. The nonblocking forms run as these blocking forms on device
 * buffers. */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* No previous module's function: fail the call (said at verbose 1). */
#define GC3_PREV_OR_FAIL_QUIET(m, comm, name)                                                                          \
    do {                                                                                                               \
        if ((m)->prev_##name == NULL) {                                                                                \
            return MCA_COLL_GC3_NO_PREV(comm, name);                                                                   \
        }                                                                                                              \
    } while (0)
/* No previous module's function: fail the call (said at verbose 1); else say why gc3 passes it on. */
#define GC3_PREV_OR_FAIL(m, comm, name)                                                                                \
    do {                                                                                                               \
        GC3_PREV_OR_FAIL_QUIET(m, comm, name);                                                                         \
        (void)mca_coll_gc3_passed_on_not_run((comm), #name);                                                           \
    } while (0)

/* elements of dt a vector of counts at displacements spans from the start of the buffer to the end of its last
 * nonempty segment (those before the start: gc3_vlow) */
static size_t gc3_vspan(const int *counts, const int *displs, int n)
{
    long end = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] > 0 && (long)displs[i] + counts[i] > end) {
            end = (long)displs[i] + counts[i];
        }
    }
    return (size_t)end;
}

/* The lowest displacement of a nonempty segment when it is negative, else 0: a staged copy starts there, its
 * span from there (gc3_vspan - it), and the previous module gets its base moved back by it (gc3_vat). */
static long gc3_vlow(const int *counts, const int *displs, int n)
{
    long lo = 0;
    for (int i = 0; i < n; i++) {
        lo = counts[i] > 0 && displs[i] < lo ? displs[i] : lo;
    }
    return lo;
}

/* p moved by `elements` of dt (NULL and MPI_IN_PLACE stay) */
static void *gc3_vat(const void *p, struct ompi_datatype_t *dt, long elements)
{
    ptrdiff_t lb, extent;
    if (p == NULL || p == MPI_IN_PLACE || elements == 0) {
        return (void *)p;
    }
    ompi_datatype_get_extent(dt, &lb, &extent);
    return (char *)p + elements * (long)extent;
}

static int gc3_sum(const int *counts, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += counts[i];
    }
    return s;
}

/* Whether a call's device buffers are staged (mca_coll_gc3_staged); a nonblocking call (nb) is staged
 * where coll_gc3_fallback stages nonblocking calls (auto's pass is stage for them: Open MPI's
 * nonblocking collectives take no device buffers): the previous module's nonblocking call then runs
 * on the host copies and its request completes after the copies back (mca_coll_gc3_chain). Every
 * rank calls the previous module's same collective, whatever its memory. */
static int gc3_fb_staged(int nb, mca_coll_gc3_bufs_t bufs, const void *sbuf, const void *rbuf, int root,
                         struct ompi_communicator_t *comm, const char *name, int *rc_p)
{
    *rc_p = OMPI_SUCCESS;
    if (!nb) {
        return mca_coll_gc3_staged(bufs, sbuf, rbuf, root, comm, name, rc_p);
    }
    return mca_coll_gc3_device_call(bufs, sbuf, rbuf, root, comm) && mca_coll_gc3_stage_call_nb(comm, name, rc_p);
}

static int gc3_allgatherv_do(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                             const int *displs, struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                             mca_coll_base_module_t *module, ompi_request_t **request)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    ompi_request_t        *inner = NULL;
    int                    rc;
    const long             lo = gc3_vlow(rcounts, displs, ompi_comm_size(comm));
    /* the receive buffer copied in even out of place: the gaps between the blocks must come back unchanged */
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)scount, 1, 0),
                                  mca_coll_gc3_stage_buf(gc3_vat(rbuf, rdt, lo), rdt,
                                                         gc3_vspan(rcounts, displs, ompi_comm_size(comm)) - lo, 1, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, iallgatherv);
    } else { /* (gc3's blocking form said why it passes the call on: coll_gc3_allgatherv.c) */
        GC3_PREV_OR_FAIL_QUIET(m, comm, allgatherv);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm,
                       request != NULL ? "iallgatherv" : "allgatherv", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL ? m->prev_iallgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                                                            request, m->prev_iallgatherv_module)
                                      : m->prev_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                                                           m->prev_allgatherv_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        char *rb = gc3_vat(b[1].base, rdt, -lo);
        rc = (request != NULL ? m->prev_iallgatherv(b[0].base, scount, sdt, rb, rcounts, displs, rdt, comm, &inner,
                                                    m->prev_iallgatherv_module)
                              : m->prev_allgatherv(b[0].base, scount, sdt, rb, rcounts, displs, rdt, comm,
                                                   m->prev_allgatherv_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_allgatherv_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                   const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                   struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                   ompi_request_t **request)
{
    return gc3_allgatherv_do(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, module, request);
}

int mca_coll_gc3_gather_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module, ompi_request_t **request)
{
    ompi_request_t        *inner = NULL;
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    int                    me    = ompi_comm_rank(comm), rc;
    size_t                 n     = me == root ? (size_t)rcount * (size_t)ompi_comm_size(comm) : 0;
    mca_coll_gc3_stage_t   b[2]  = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)scount, 1, 0),
                                     mca_coll_gc3_stage_buf(me == root ? rbuf : NULL, rdt, n, sbuf == MPI_IN_PLACE, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, igather);
    } else {
        GC3_PREV_OR_FAIL_QUIET(m, comm, gather);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_ROOT_RECV, sbuf, rbuf, root, comm,
                       request != NULL ? "igather" : "gather", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL
                          ? m->prev_igather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, request,
                                            m->prev_igather_module)
                          : m->prev_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, m->prev_gather_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = (request != NULL ? m->prev_igather(b[0].base, scount, sdt, me == root ? b[1].base : rbuf, rcount, rdt,
                                                root, comm, &inner, m->prev_igather_module)
                              : m->prev_gather(b[0].base, scount, sdt, me == root ? b[1].base : rbuf, rcount, rdt, root,
                                               comm, m->prev_gather_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_scatter_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                                mca_coll_base_module_t *module, ompi_request_t **request)
{
    ompi_request_t        *inner = NULL;
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    int                    me    = ompi_comm_rank(comm), rc;
    size_t                 n     = me == root ? (size_t)scount * (size_t)ompi_comm_size(comm) : 0;
    mca_coll_gc3_stage_t   b[2]  = { mca_coll_gc3_stage_buf(me == root ? (void *)sbuf : NULL, sdt, n, 1, 0),
                                     mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rcount, 0, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, iscatter);
    } else {
        GC3_PREV_OR_FAIL_QUIET(m, comm, scatter);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_ROOT_SEND, sbuf, rbuf, root, comm,
                       request != NULL ? "iscatter" : "scatter", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL
                          ? m->prev_iscatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, request,
                                             m->prev_iscatter_module)
                          : m->prev_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, m->prev_scatter_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = (request != NULL ? m->prev_iscatter(me == root ? b[0].base : sbuf, scount, sdt, b[1].base, rcount, rdt,
                                                 root, comm, &inner, m->prev_iscatter_module)
                              : m->prev_scatter(me == root ? b[0].base : sbuf, scount, sdt, b[1].base, rcount, rdt,
                                                root, comm, m->prev_scatter_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_gatherv_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                const int *rcounts, const int *displs, struct ompi_datatype_t *rdt, int root,
                                struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                ompi_request_t **request)
{
    ompi_request_t        *inner = NULL;
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    int                    me    = ompi_comm_rank(comm), rc;
    const long             lo    = me == root ? gc3_vlow(rcounts, displs, ompi_comm_size(comm)) : 0;
    size_t                 span  = me == root ? gc3_vspan(rcounts, displs, ompi_comm_size(comm)) - lo : 0;
    /* at the root, copied in: its own block in place, and the gaps come back unchanged */
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)scount, 1, 0),
                                  mca_coll_gc3_stage_buf(me == root ? gc3_vat(rbuf, rdt, lo) : NULL, rdt, span, 1, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, igatherv);
    } else {
        GC3_PREV_OR_FAIL_QUIET(m, comm, gatherv);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_ROOT_RECV, sbuf, rbuf, root, comm,
                       request != NULL ? "igatherv" : "gatherv", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : (request != NULL ? m->prev_igatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt,
                                                                        root, comm, request, m->prev_igatherv_module)
                                                     : m->prev_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt,
                                                                       root, comm, m->prev_gatherv_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        void *rb = me == root ? gc3_vat(b[1].base, rdt, -lo) : rbuf;
        rc = (request != NULL ? m->prev_igatherv(b[0].base, scount, sdt, rb, rcounts, displs, rdt, root, comm, &inner,
                                                 m->prev_igatherv_module)
                              : m->prev_gatherv(b[0].base, scount, sdt, rb, rcounts, displs, rdt, root, comm,
                                                m->prev_gatherv_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_scatterv_staged(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                                 void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                 ompi_request_t **request)
{
    ompi_request_t        *inner = NULL;
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    int                    me    = ompi_comm_rank(comm), rc;
    const long             lo    = me == root ? gc3_vlow(scounts, displs, ompi_comm_size(comm)) : 0;
    size_t                 span  = me == root ? gc3_vspan(scounts, displs, ompi_comm_size(comm)) - lo : 0;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(me == root ? gc3_vat(sbuf, sdt, lo) : NULL, sdt, span, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rcount, 0, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, iscatterv);
    } else {
        GC3_PREV_OR_FAIL_QUIET(m, comm, scatterv);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_ROOT_SEND, sbuf, rbuf, root, comm,
                       request != NULL ? "iscatterv" : "scatterv", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : (request != NULL ? m->prev_iscatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt,
                                                                         root, comm, request, m->prev_iscatterv_module)
                                                     : m->prev_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt,
                                                                        root, comm, m->prev_scatterv_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        const void *sb = me == root ? gc3_vat(b[0].base, sdt, -lo) : sbuf;
        rc = (request != NULL ? m->prev_iscatterv(sb, scounts, displs, sdt, b[1].base, rcount, rdt, root, comm, &inner,
                                                  m->prev_iscatterv_module)
                              : m->prev_scatterv(sb, scounts, displs, sdt, b[1].base, rcount, rdt, root, comm,
                                                 m->prev_scatterv_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

static int gc3_alltoallv_do(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                            void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                            struct ompi_communicator_t *comm, mca_coll_base_module_t *module, ompi_request_t **request)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    ompi_request_t        *inner = NULL;
    int                    rc, n = ompi_comm_size(comm);
    const long slo = sbuf == MPI_IN_PLACE ? 0 : gc3_vlow(scounts, sdispls, n), rlo = gc3_vlow(rcounts, rdispls, n);
    /* the receive buffer copied in: the gaps between the blocks come back unchanged */
    mca_coll_gc3_stage_t b[2] = {
        mca_coll_gc3_stage_buf(gc3_vat(sbuf, sdt, slo), sdt,
                               sbuf == MPI_IN_PLACE ? 0 : gc3_vspan(scounts, sdispls, n) - slo, 1, 0),
        mca_coll_gc3_stage_buf(gc3_vat(rbuf, rdt, rlo), rdt, gc3_vspan(rcounts, rdispls, n) - rlo, 1, 1)
    };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, ialltoallv);
    } else { /* (gc3's blocking form said why it passes the call on: coll_gc3_alltoallv.c) */
        GC3_PREV_OR_FAIL_QUIET(m, comm, alltoallv);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm,
                       request != NULL ? "ialltoallv" : "alltoallv", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL ? m->prev_ialltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
                                                           comm, request, m->prev_ialltoallv_module)
                                      : m->prev_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
                                                          comm, m->prev_alltoallv_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        const void *sb = gc3_vat(b[0].base, sdt, -slo);
        void       *rb = gc3_vat(b[1].base, rdt, -rlo);
        rc = (request != NULL ? m->prev_ialltoallv(sb, scounts, sdispls, sdt, rb, rcounts, rdispls, rdt, comm, &inner,
                                                   m->prev_ialltoallv_module)
                              : m->prev_alltoallv(sb, scounts, sdispls, sdt, rb, rcounts, rdispls, rdt, comm,
                                                  m->prev_alltoallv_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_alltoallv_staged(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                                  void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                                  struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                  ompi_request_t **request)
{
    return gc3_alltoallv_do(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, module, request);
}

static int gc3_reduce_scatter_do(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                 struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                 ompi_request_t **request)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    ompi_request_t        *inner = NULL;
    int                    rc, inplace = sbuf == MPI_IN_PLACE;
    size_t                 all  = (size_t)gc3_sum(rcounts, ompi_comm_size(comm));
    size_t                 mine = (size_t)rcounts[ompi_comm_rank(comm)];
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, dt, all, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, inplace ? all : mine, inplace, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, ireduce_scatter);
    } else { /* (gc3's blocking form said why it passes the call on: coll_gc3_reduce_scatter.c) */
        GC3_PREV_OR_FAIL_QUIET(m, comm, reduce_scatter);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm,
                       request != NULL ? "ireduce_scatter" : "reduce_scatter", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL
                          ? m->prev_ireduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, request,
                                                    m->prev_ireduce_scatter_module)
                          : m->prev_reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, m->prev_reduce_scatter_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = (request != NULL
                  ? m->prev_ireduce_scatter(b[0].base, b[1].base, rcounts, dt, op, comm, &inner,
                                            m->prev_ireduce_scatter_module)
                  : m->prev_reduce_scatter(b[0].base, b[1].base, rcounts, dt, op, comm, m->prev_reduce_scatter_module));
    }
    b[1].count = mine; /* in place too, only this rank's block is the result */
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_reduce_scatter_staged(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                       struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                       mca_coll_base_module_t *module, ompi_request_t **request)
{
    return gc3_reduce_scatter_do(sbuf, rbuf, rcounts, dt, op, comm, module, request);
}

int mca_coll_gc3_scan_staged(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module, ompi_request_t **request)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    ompi_request_t        *inner = NULL;
    int                    rc;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, dt, (size_t)count, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, (size_t)count, sbuf == MPI_IN_PLACE, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, iscan);
    } else {
        GC3_PREV_OR_FAIL_QUIET(m, comm, scan);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm,
                       request != NULL ? "iscan" : "scan", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL ? m->prev_iscan(sbuf, rbuf, count, dt, op, comm, request, m->prev_iscan_module)
                                      : m->prev_scan(sbuf, rbuf, count, dt, op, comm, m->prev_scan_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = (request != NULL ? m->prev_iscan(b[0].base, b[1].base, count, dt, op, comm, &inner, m->prev_iscan_module)
                              : m->prev_scan(b[0].base, b[1].base, count, dt, op, comm, m->prev_scan_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_exscan_staged(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                               ompi_request_t **request)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    ompi_request_t        *inner = NULL;
    int                    rc;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, dt, (size_t)count, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, (size_t)count, sbuf == MPI_IN_PLACE, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL_QUIET(m, comm, iexscan);
    } else {
        GC3_PREV_OR_FAIL_QUIET(m, comm, exscan);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm,
                       request != NULL ? "iexscan" : "exscan", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL
                          ? m->prev_iexscan(sbuf, rbuf, count, dt, op, comm, request, m->prev_iexscan_module)
                          : m->prev_exscan(sbuf, rbuf, count, dt, op, comm, m->prev_exscan_module));
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = (request != NULL
                  ? m->prev_iexscan(b[0].base, b[1].base, count, dt, op, comm, &inner, m->prev_iexscan_module)
                  : m->prev_exscan(b[0].base, b[1].base, count, dt, op, comm, m->prev_exscan_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

/* Bytes [0, end) that blocks of counts[q] x types[q] at byte displacements displs[q] reach; -1
 * when one starts before the buffer (a negative displacement or lower bound: not staged). */
/* bytes from the buffer's start to the end of the last block of a w-collective (displacements
 * in bytes, as int or as MPI_Aint); -1 when a block starts before the buffer */
static long gc3_wspan(const int *counts, const int *idispls, const MPI_Aint *adispls,
                      struct ompi_datatype_t *const *types, int n)
{
    long end = 0;
    for (int q = 0; q < n; q++) {
        ptrdiff_t lb, extent, true_lb, true_extent;
        long      lo, hi;
        if (counts[q] <= 0) {
            continue;
        }
        ompi_datatype_get_extent(types[q], &lb, &extent);
        ompi_datatype_get_true_extent(types[q], &true_lb, &true_extent);
        lo = (idispls != NULL ? (long)idispls[q] : (long)adispls[q]) + (long)true_lb;
        hi = lo + (long)true_extent + (long)(counts[q] - 1) * (long)extent;
        if (lo < 0) {
            return -1;
        }
        end = hi > end ? hi : end;
    }
    return end;
}

/* A block before the buffer's start (a negative displacement or lower bound) cannot be staged. */
static int gc3_unstageable(struct ompi_communicator_t *comm, const char *name)
{
    opal_output(0,
                "coll:gc3: comm %s rank %d: %s on device buffers with a block before the buffer's start (negative "
                "displacement or lower bound) cannot be staged: the call fails",
                comm->c_name, ompi_comm_rank(comm), name);
    return MPI_ERR_UNSUPPORTED_OPERATION;
}

/* staged as bytes from the buffer's start: the displacements stay valid; the receive buffer's gaps
 * come back unchanged */
static int gc3_alltoallw_do(const void *sbuf, const int *scounts, const int *sdispls,
                            struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts, const int *rdispls,
                            struct ompi_datatype_t *const *rdts, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module, ompi_request_t **request)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    ompi_request_t        *inner = NULL;
    int                    rc, n = ompi_comm_size(comm);
    long                   sspan = sbuf == MPI_IN_PLACE ? 0 : gc3_wspan(scounts, sdispls, NULL, sdts, n),
         rspan                   = gc3_wspan(rcounts, rdispls, NULL, rdts, n);
    mca_coll_gc3_stage_t b[2]    = { mca_coll_gc3_stage_buf((void *)sbuf, MPI_BYTE, (size_t)sspan, 1, 0),
                                     mca_coll_gc3_stage_buf(rbuf, MPI_BYTE, (size_t)rspan, 1, 1) };

    if (request != NULL) {
        GC3_PREV_OR_FAIL(m, comm, ialltoallw);
    } else {
        GC3_PREV_OR_FAIL(m, comm, alltoallw);
    }
    if (!gc3_fb_staged(request != NULL, MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm,
                       request != NULL ? "ialltoallw" : "alltoallw", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : (request != NULL ? m->prev_ialltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                                                           comm, request, m->prev_ialltoallw_module)
                                      : m->prev_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts,
                                                          comm, m->prev_alltoallw_module));
    }
    if (sspan < 0 || rspan < 0) {
        return gc3_unstageable(comm, "alltoallw");
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = (request != NULL ? m->prev_ialltoallw(b[0].base, scounts, sdispls, sdts, b[1].base, rcounts, rdispls, rdts,
                                                   comm, &inner, m->prev_ialltoallw_module)
                              : m->prev_alltoallw(b[0].base, scounts, sdispls, sdts, b[1].base, rcounts, rdispls, rdts,
                                                  comm, m->prev_alltoallw_module));
    }
    return request != NULL ? mca_coll_gc3_chain(m, b, 2, rc, inner, request) : mca_coll_gc3_stage_out(b, 2, rc);
}

int mca_coll_gc3_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                           struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts, const int *rdispls,
                           struct ompi_datatype_t *const *rdts, struct ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    return gc3_alltoallw_do(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm, module, NULL);
}

/* ---------------------------------------------------------------- neighbourhood collectives
 * On a topology communicator: the buffers hold one block per in-neighbour (receive) or
 * out-neighbour (send), so the spans come from the neighbour counts. */

/* in- and out-degree of this rank (MPI_ERR_TOPOLOGY on a communicator without a topology) */
static int gc3_neighbors(struct ompi_communicator_t *comm, int *in, int *out)
{
    int kind = MPI_UNDEFINED, rc = MPI_Topo_test(comm, &kind), w;
    *in = *out = 0;
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    switch (kind) {
    case MPI_CART:
        rc   = MPI_Cartdim_get(comm, in);
        *in  = 2 * *in;
        *out = *in;
        return rc;
    case MPI_GRAPH:
        rc   = MPI_Graph_neighbors_count(comm, ompi_comm_rank(comm), in);
        *out = *in;
        return rc;
    case MPI_DIST_GRAPH:
        return MPI_Dist_graph_neighbors_count(comm, in, out, &w);
    default:
        return MPI_ERR_TOPOLOGY;
    }
}

/* Each stages its send (sspan) and receive buffer (rspan, copied in too: what lies between the
 * blocks comes back unchanged), one block per out- or in-neighbour. */

int mca_coll_gc3_neighbor_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                    struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    in, out, rc;
    long                   sspan, rspan;

    GC3_PREV_OR_FAIL(m, comm, neighbor_allgather);
    if (!mca_coll_gc3_staged(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm, "neighbor_allgather", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_neighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                                                               m->prev_neighbor_allgather_module);
    }
    if ((rc = gc3_neighbors(comm, &in, &out)) != MPI_SUCCESS) {
        return rc;
    }
    sspan = (long)scount;
    rspan = (long)in * rcount;
    if (sspan < 0 || rspan < 0) {
        return gc3_unstageable(comm, "neighbor_allgather");
    }
    {
        mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)sspan, 1, 0),
                                      mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rspan, 1, 1) };
        if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
            rc = m->prev_neighbor_allgather(b[0].base, scount, sdt, b[1].base, rcount, rdt, comm,
                                            m->prev_neighbor_allgather_module);
        }
        return mca_coll_gc3_stage_out(b, 2, rc);
    }
}

int mca_coll_gc3_neighbor_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                     const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                     struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    in, out, rc;
    long                   sspan, rspan;

    GC3_PREV_OR_FAIL(m, comm, neighbor_allgatherv);
    if (!mca_coll_gc3_staged(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm, "neighbor_allgatherv", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_neighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                                                                m->prev_neighbor_allgatherv_module);
    }
    if ((rc = gc3_neighbors(comm, &in, &out)) != MPI_SUCCESS) {
        return rc;
    }
    sspan = (long)scount;
    rspan = gc3_vlow(rcounts, displs, in) < 0 ? -1 : (long)gc3_vspan(rcounts, displs, in);
    if (sspan < 0 || rspan < 0) {
        return gc3_unstageable(comm, "neighbor_allgatherv");
    }
    {
        mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)sspan, 1, 0),
                                      mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rspan, 1, 1) };
        if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
            rc = m->prev_neighbor_allgatherv(b[0].base, scount, sdt, b[1].base, rcounts, displs, rdt, comm,
                                             m->prev_neighbor_allgatherv_module);
        }
        return mca_coll_gc3_stage_out(b, 2, rc);
    }
}

int mca_coll_gc3_neighbor_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                   struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                   mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    in, out, rc;
    long                   sspan, rspan;

    GC3_PREV_OR_FAIL(m, comm, neighbor_alltoall);
    if (!mca_coll_gc3_staged(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm, "neighbor_alltoall", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_neighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                                                              m->prev_neighbor_alltoall_module);
    }
    if ((rc = gc3_neighbors(comm, &in, &out)) != MPI_SUCCESS) {
        return rc;
    }
    sspan = (long)out * scount;
    rspan = (long)in * rcount;
    if (sspan < 0 || rspan < 0) {
        return gc3_unstageable(comm, "neighbor_alltoall");
    }
    {
        mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)sspan, 1, 0),
                                      mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rspan, 1, 1) };
        if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
            rc = m->prev_neighbor_alltoall(b[0].base, scount, sdt, b[1].base, rcount, rdt, comm,
                                           m->prev_neighbor_alltoall_module);
        }
        return mca_coll_gc3_stage_out(b, 2, rc);
    }
}

int mca_coll_gc3_neighbor_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                                    struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                    struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    in, out, rc;
    long                   sspan, rspan;

    GC3_PREV_OR_FAIL(m, comm, neighbor_alltoallv);
    if (!mca_coll_gc3_staged(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm, "neighbor_alltoallv", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_neighbor_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt,
                                                               comm, m->prev_neighbor_alltoallv_module);
    }
    if ((rc = gc3_neighbors(comm, &in, &out)) != MPI_SUCCESS) {
        return rc;
    }
    sspan = gc3_vlow(scounts, sdispls, out) < 0 ? -1 : (long)gc3_vspan(scounts, sdispls, out);
    rspan = gc3_vlow(rcounts, rdispls, in) < 0 ? -1 : (long)gc3_vspan(rcounts, rdispls, in);
    if (sspan < 0 || rspan < 0) {
        return gc3_unstageable(comm, "neighbor_alltoallv");
    }
    {
        mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)sspan, 1, 0),
                                      mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rspan, 1, 1) };
        if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
            rc = m->prev_neighbor_alltoallv(b[0].base, scounts, sdispls, sdt, b[1].base, rcounts, rdispls, rdt, comm,
                                            m->prev_neighbor_alltoallv_module);
        }
        return mca_coll_gc3_stage_out(b, 2, rc);
    }
}

int mca_coll_gc3_neighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                                    struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                                    const MPI_Aint *rdispls, struct ompi_datatype_t *const *rdts,
                                    struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    in, out, rc;
    long                   sspan, rspan;

    GC3_PREV_OR_FAIL(m, comm, neighbor_alltoallw);
    if (!mca_coll_gc3_staged(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm, "neighbor_alltoallw", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_neighbor_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls,
                                                               rdts, comm, m->prev_neighbor_alltoallw_module);
    }
    if ((rc = gc3_neighbors(comm, &in, &out)) != MPI_SUCCESS) {
        return rc;
    }
    sspan = gc3_wspan(scounts, NULL, sdispls, sdts, out);
    rspan = gc3_wspan(rcounts, NULL, rdispls, rdts, in);
    if (sspan < 0 || rspan < 0) {
        return gc3_unstageable(comm, "neighbor_alltoallw");
    }
    {
        mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, MPI_BYTE, (size_t)sspan, 1, 0),
                                      mca_coll_gc3_stage_buf(rbuf, MPI_BYTE, (size_t)rspan, 1, 1) };
        if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
            rc = m->prev_neighbor_alltoallw(b[0].base, scounts, sdispls, sdts, b[1].base, rcounts, rdispls, rdts, comm,
                                            m->prev_neighbor_alltoallw_module);
        }
        return mca_coll_gc3_stage_out(b, 2, rc);
    }
}

/* ---------------------------------------------------------------- nonblocking forms
 * The previous module's nonblocking collectives (libnbc) are not CUDA-aware either. On device
 * buffers the call runs as its blocking counterpart (staged, or run by gc3 where it takes it, or
 * per coll_gc3_fallback) and returns a request that is already complete. With
 * coll_gc3_fallback=pass, or on host buffers, the previous module gets the call as it is. */

int mca_coll_gc3_nb_as_blocking(struct ompi_communicator_t *comm, const char *name, int device)
{
    if (!device || mca_coll_gc3_fallback(comm, 1) == MCA_COLL_GC3_FALLBACK_PASS) {
        return 0;
    }
    mca_coll_gc3_verbose_once(2, comm,
                              "coll:gc3: comm %s: %s on device buffers: run as its blocking form, completed at once",
                              comm->c_name, name);
    return 1;
}

int mca_coll_gc3_ialltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                            struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts, const int *rdispls,
                            struct ompi_datatype_t *const *rdts, struct ompi_communicator_t *comm,
                            ompi_request_t **request, mca_coll_base_module_t *module)
{
    return gc3_alltoallw_do(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm, module, request);
}

int mca_coll_gc3_ineighbor_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                     struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                     ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    if (mca_coll_gc3_nb_as_blocking(comm, "ineighbor_allgather",
                                    mca_coll_gc3_device_call(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm))) {
        *request = &ompi_request_empty;
        return mca_coll_gc3_neighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, module);
    }
    GC3_PREV_OR_FAIL(m, comm, ineighbor_allgather);
    return m->prev_ineighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request,
                                       m->prev_ineighbor_allgather_module);
}

int mca_coll_gc3_ineighbor_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                      const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                      struct ompi_communicator_t *comm, ompi_request_t **request,
                                      mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    if (mca_coll_gc3_nb_as_blocking(comm, "ineighbor_allgatherv",
                                    mca_coll_gc3_device_call(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm))) {
        *request = &ompi_request_empty;
        return mca_coll_gc3_neighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, module);
    }
    GC3_PREV_OR_FAIL(m, comm, ineighbor_allgatherv);
    return m->prev_ineighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, request,
                                        m->prev_ineighbor_allgatherv_module);
}

int mca_coll_gc3_ineighbor_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                    struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                    ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    if (mca_coll_gc3_nb_as_blocking(comm, "ineighbor_alltoall",
                                    mca_coll_gc3_device_call(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm))) {
        *request = &ompi_request_empty;
        return mca_coll_gc3_neighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, module);
    }
    GC3_PREV_OR_FAIL(m, comm, ineighbor_alltoall);
    return m->prev_ineighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request,
                                      m->prev_ineighbor_alltoall_module);
}

int mca_coll_gc3_ineighbor_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                                     struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                     struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                     ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    if (mca_coll_gc3_nb_as_blocking(comm, "ineighbor_alltoallv",
                                    mca_coll_gc3_device_call(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm))) {
        *request = &ompi_request_empty;
        return mca_coll_gc3_neighbor_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, module);
    }
    GC3_PREV_OR_FAIL(m, comm, ineighbor_alltoallv);
    return m->prev_ineighbor_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, request,
                                       m->prev_ineighbor_alltoallv_module);
}

int mca_coll_gc3_ineighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                                     struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                                     const MPI_Aint *rdispls, struct ompi_datatype_t *const *rdts,
                                     struct ompi_communicator_t *comm, ompi_request_t **request,
                                     mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    if (mca_coll_gc3_nb_as_blocking(comm, "ineighbor_alltoallw",
                                    mca_coll_gc3_device_call(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm))) {
        *request = &ompi_request_empty;
        return mca_coll_gc3_neighbor_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm,
                                               module);
    }
    GC3_PREV_OR_FAIL(m, comm, ineighbor_alltoallw);
    return m->prev_ineighbor_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm, request,
                                       m->prev_ineighbor_alltoallw_module);
}
