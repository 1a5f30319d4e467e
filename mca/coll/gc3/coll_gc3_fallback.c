/* coll/gc3: the collectives gc3 passes on (coll_gc3_colls.h). With host buffers they go straight
 * to the previous module; with device buffers (which that module would dereference and crash on)
 * every buffer is copied through host memory around the call (coll_gc3_stage.c), or as
 * coll_gc3_fallback says. The nonblocking forms run as these blocking forms on device buffers. */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

#define GC3_PREV_OR_FAIL(m, comm, name)                \
    do {                                               \
        if ((m)->prev_##name == NULL) {                \
            return MCA_COLL_GC3_NO_PREV(comm, name);   \
        }                                              \
        (void)mca_coll_gc3_passed_on((comm), #name, "gc3 runs allreduce, alltoall, allgather and "  \
                                     "reduce_scatter_block only");                                \
    } while (0)

/* elements of dt spanned by a vector of counts at displacements */
static size_t gc3_vspan(const int *counts, const int *displs, int n)
{
    size_t span = 0;
    for (int i = 0; i < n; i++) {
        if (counts[i] > 0 && (size_t)displs[i] + (size_t)counts[i] > span) {
            span = (size_t)displs[i] + (size_t)counts[i];
        }
    }
    return span;
}

static int gc3_sum(const int *counts, int n)
{
    int s = 0;
    for (int i = 0; i < n; i++) {
        s += counts[i];
    }
    return s;
}


int mca_coll_gc3_bcast(void *buf, int count, struct ompi_datatype_t *dt, int root, struct ompi_communicator_t *comm,
                       mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   b;
    int                    rc, me = ompi_comm_rank(comm);

    GC3_PREV_OR_FAIL(m, comm, bcast);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_BUF || !mca_coll_gc3_stage_call(comm, "bcast", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_bcast(buf, count, dt, root, comm, m->prev_bcast_module);
    }
    rc = mca_coll_gc3_stage_in(&b, buf, dt, (size_t)count, me == root);
    if (rc == OMPI_SUCCESS) {
        rc = m->prev_bcast(b.base, count, dt, root, comm, m->prev_bcast_module);
    }
    return mca_coll_gc3_stage_out(&b, dt, (size_t)count, me != root, rc);
}

int mca_coll_gc3_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                        int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, me = ompi_comm_rank(comm), inplace = sbuf == MPI_IN_PLACE;

    GC3_PREV_OR_FAIL(m, comm, reduce);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_ROOT_RECV || !mca_coll_gc3_stage_call(comm, "reduce", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_reduce(sbuf, rbuf, count, dt, op, root, comm, m->prev_reduce_module);
    }
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, dt, (size_t)count, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, me == root ? rbuf : NULL, dt, (size_t)count, inplace);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_reduce(inplace ? MPI_IN_PLACE : s.base, me == root ? r.base : rbuf, count, dt, op, root, comm,
                                m->prev_reduce_module);
        }
        rc = mca_coll_gc3_stage_out(&r, dt, (size_t)count, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, dt, (size_t)count, 0, rc);
}

int mca_coll_gc3_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                            const int *displs, struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    size_t                 span = gc3_vspan(rcounts, displs, ompi_comm_size(comm));
    int                    rc, inplace = sbuf == MPI_IN_PLACE;

    GC3_PREV_OR_FAIL(m, comm, allgatherv);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_BOTH || !mca_coll_gc3_stage_call(comm, "allgatherv", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, m->prev_allgatherv_module);
    }
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, sdt, (size_t)scount, 1);
    if (rc == OMPI_SUCCESS) {
        /* copied in even out of place: the gaps between the blocks must come back unchanged */
        rc = mca_coll_gc3_stage_in(&r, rbuf, rdt, span, 1);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_allgatherv(inplace ? MPI_IN_PLACE : s.base, scount, sdt, r.base, rcounts, displs, rdt, comm,
                                    m->prev_allgatherv_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdt, span, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdt, (size_t)scount, 0, rc);
}

int mca_coll_gc3_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                        struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, me = ompi_comm_rank(comm), inplace = sbuf == MPI_IN_PLACE;
    size_t                 n = me == root ? (size_t)rcount * (size_t)ompi_comm_size(comm) : 0;

    GC3_PREV_OR_FAIL(m, comm, gather);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_ROOT_RECV || !mca_coll_gc3_stage_call(comm, "gather", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_gather(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, m->prev_gather_module);
    }
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, sdt, (size_t)scount, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, me == root ? rbuf : NULL, rdt, n, inplace);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_gather(inplace ? MPI_IN_PLACE : s.base, scount, sdt, me == root ? r.base : rbuf, rcount, rdt,
                                root, comm, m->prev_gather_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdt, n, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdt, (size_t)scount, 0, rc);
}

int mca_coll_gc3_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                         struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, me = ompi_comm_rank(comm), inplace = rbuf == MPI_IN_PLACE;
    size_t                 n = me == root ? (size_t)scount * (size_t)ompi_comm_size(comm) : 0;

    GC3_PREV_OR_FAIL(m, comm, scatter);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_ROOT_SEND || !mca_coll_gc3_stage_call(comm, "scatter", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_scatter(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, m->prev_scatter_module);
    }
    rc = mca_coll_gc3_stage_in(&s, me == root ? (void *)sbuf : NULL, sdt, n, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, rdt, (size_t)rcount, 0);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_scatter(me == root ? s.base : sbuf, scount, sdt, inplace ? MPI_IN_PLACE : r.base, rcount, rdt,
                                 root, comm, m->prev_scatter_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdt, (size_t)rcount, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdt, n, 0, rc);
}

int mca_coll_gc3_gatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                         const int *displs, struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, me = ompi_comm_rank(comm), inplace = sbuf == MPI_IN_PLACE;
    size_t                 span = me == root ? gc3_vspan(rcounts, displs, ompi_comm_size(comm)) : 0;

    GC3_PREV_OR_FAIL(m, comm, gatherv);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_ROOT_RECV || !mca_coll_gc3_stage_call(comm, "gatherv", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_gatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm,
                                                    m->prev_gatherv_module);
    }
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, sdt, (size_t)scount, 1);
    if (rc == OMPI_SUCCESS) {
        /* at the root, copied in: its own block in place, and the gaps come back unchanged */
        rc = mca_coll_gc3_stage_in(&r, me == root ? rbuf : NULL, rdt, span, 1);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_gatherv(inplace ? MPI_IN_PLACE : s.base, scount, sdt, me == root ? r.base : rbuf, rcounts,
                                 displs, rdt, root, comm, m->prev_gatherv_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdt, span, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdt, (size_t)scount, 0, rc);
}

int mca_coll_gc3_scatterv(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, me = ompi_comm_rank(comm), inplace = rbuf == MPI_IN_PLACE;
    size_t                 span = me == root ? gc3_vspan(scounts, displs, ompi_comm_size(comm)) : 0;

    GC3_PREV_OR_FAIL(m, comm, scatterv);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_ROOT_SEND || !mca_coll_gc3_stage_call(comm, "scatterv", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_scatterv(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm,
                                                     m->prev_scatterv_module);
    }
    rc = mca_coll_gc3_stage_in(&s, me == root ? (void *)sbuf : NULL, sdt, span, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, rdt, (size_t)rcount, 0);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_scatterv(me == root ? s.base : sbuf, scounts, displs, sdt, inplace ? MPI_IN_PLACE : r.base,
                                  rcount, rdt, root, comm, m->prev_scatterv_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdt, (size_t)rcount, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdt, span, 0, rc);
}

int mca_coll_gc3_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                           void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, n = ompi_comm_size(comm), inplace = sbuf == MPI_IN_PLACE;
    size_t                 sspan = inplace ? 0 : gc3_vspan(scounts, sdispls, n), rspan = gc3_vspan(rcounts, rdispls, n);

    GC3_PREV_OR_FAIL(m, comm, alltoallv);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_BOTH || !mca_coll_gc3_stage_call(comm, "alltoallv", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, m->prev_alltoallv_module);
    }
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, sdt, sspan, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, rdt, rspan, 1); /* gaps between the blocks come back unchanged */
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_alltoallv(inplace ? MPI_IN_PLACE : s.base, scounts, sdispls, sdt, r.base, rcounts, rdispls, rdt,
                                   comm, m->prev_alltoallv_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdt, rspan, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdt, sspan, 0, rc);
}

int mca_coll_gc3_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, inplace = sbuf == MPI_IN_PLACE;
    size_t                 all = (size_t)gc3_sum(rcounts, ompi_comm_size(comm));
    size_t                 mine = (size_t)rcounts[ompi_comm_rank(comm)], rn = inplace ? all : mine;

    GC3_PREV_OR_FAIL(m, comm, reduce_scatter);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_BOTH || !mca_coll_gc3_stage_call(comm, "reduce_scatter", &rc)) {
        return rc != OMPI_SUCCESS ? rc : m->prev_reduce_scatter(sbuf, rbuf, rcounts, dt, op, comm, m->prev_reduce_scatter_module);
    }
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, dt, all, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, dt, rn, inplace);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_reduce_scatter(inplace ? MPI_IN_PLACE : s.base, r.base, rcounts, dt, op, comm,
                                        m->prev_reduce_scatter_module);
        }
        rc = mca_coll_gc3_stage_out(&r, dt, mine, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, dt, all, 0, rc);
}

/* scan and exscan share a signature and the same staging */
#define GC3_SCAN_LIKE(name)                                                                                     \
    int mca_coll_gc3_##name(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt,                \
                            struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module) \
    {                                                                                                           \
        mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;                                             \
        mca_coll_gc3_stage_t   s, r;                                                                            \
        int                    rc, inplace = sbuf == MPI_IN_PLACE;                                              \
        GC3_PREV_OR_FAIL(m, comm, name);                                                                        \
        rc = OMPI_SUCCESS;                                                                                      \
        if (!MCA_COLL_GC3_DEV_BOTH || !mca_coll_gc3_stage_call(comm, #name, &rc)) {                                     \
            return rc != OMPI_SUCCESS ? rc : m->prev_##name(sbuf, rbuf, count, dt, op, comm, m->prev_##name##_module); \
        }                                                                                                       \
        rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, dt, (size_t)count, 1);                                     \
        if (rc == OMPI_SUCCESS) {                                                                               \
            rc = mca_coll_gc3_stage_in(&r, rbuf, dt, (size_t)count, inplace);                                   \
            if (rc == OMPI_SUCCESS) {                                                                           \
                rc = m->prev_##name(inplace ? MPI_IN_PLACE : s.base, r.base, count, dt, op, comm,               \
                                    m->prev_##name##_module);                                                   \
            }                                                                                                   \
            rc = mca_coll_gc3_stage_out(&r, dt, (size_t)count, 1, rc);                                          \
        }                                                                                                       \
        return mca_coll_gc3_stage_out(&s, dt, (size_t)count, 0, rc);                                            \
    }

GC3_SCAN_LIKE(scan)
GC3_SCAN_LIKE(exscan)

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

int mca_coll_gc3_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                           struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts, const int *rdispls,
                           struct ompi_datatype_t *const *rdts, struct ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   s, r;
    int                    rc, n = ompi_comm_size(comm), inplace = sbuf == MPI_IN_PLACE;
    long                   sspan = inplace ? 0 : gc3_wspan(scounts, sdispls, NULL, sdts, n),
                           rspan = gc3_wspan(rcounts, rdispls, NULL, rdts, n);

    GC3_PREV_OR_FAIL(m, comm, alltoallw);
    rc = OMPI_SUCCESS;
    if (!MCA_COLL_GC3_DEV_BOTH || !mca_coll_gc3_stage_call(comm, "alltoallw", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm,
                                                      m->prev_alltoallw_module);
    }
    if (sspan < 0 || rspan < 0) {
        opal_output(0, "coll:gc3: comm %s rank %d: alltoallw on device buffers with a block before the buffer's "
                    "start (negative displacement or lower bound) cannot be staged: the call fails",
                    comm->c_name, ompi_comm_rank(comm));
        return MPI_ERR_UNSUPPORTED_OPERATION;
    }
    /* staged as bytes from the buffer's start: the displacements stay valid */
    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, MPI_BYTE, (size_t)sspan, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, MPI_BYTE, (size_t)rspan, 1); /* gaps come back unchanged */
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_alltoallw(inplace ? MPI_IN_PLACE : s.base, scounts, sdispls, sdts, r.base, rcounts, rdispls,
                                   rdts, comm, m->prev_alltoallw_module);
        }
        rc = mca_coll_gc3_stage_out(&r, MPI_BYTE, (size_t)rspan, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, MPI_BYTE, (size_t)sspan, 0, rc);
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

/* the common frame: pass on host buffers; otherwise stage send (sspan) and receive (rspan,
 * copied in too: what lies between the blocks comes back unchanged) around `call` */
#define GC3_NEIGHBOR_STAGED(name, sdt_, sspan_, rdt_, rspan_, pass, call)                                        \
    do {                                                                                                        \
        mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;                                              \
        mca_coll_gc3_stage_t   s, r;                                                                             \
        int                    in, out, rc;                                                                      \
        GC3_PREV_OR_FAIL(m, comm, name);                                                                         \
        rc = OMPI_SUCCESS;                                                                                       \
        if (!MCA_COLL_GC3_DEV_BOTH || !mca_coll_gc3_stage_call(comm, #name, &rc)) {                                     \
            return rc != OMPI_SUCCESS ? rc : (pass);                                                             \
        }                                                                                                        \
        if ((rc = gc3_neighbors(comm, &in, &out)) != MPI_SUCCESS) {                                              \
            return rc;                                                                                           \
        }                                                                                                        \
        {                                                                                                        \
            long sspan = (sspan_), rspan = (rspan_);                                                             \
            if (sspan < 0 || rspan < 0) {                                                                        \
                opal_output(0, "coll:gc3: comm %s rank %d: " #name " on device buffers with a block before the " \
                            "buffer's start cannot be staged: the call fails", comm->c_name,                     \
                            ompi_comm_rank(comm));                                                               \
                return MPI_ERR_UNSUPPORTED_OPERATION;                                                            \
            }                                                                                                    \
            rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, (sdt_), (size_t)sspan, 1);                              \
            if (rc == OMPI_SUCCESS) {                                                                            \
                rc = mca_coll_gc3_stage_in(&r, rbuf, (rdt_), (size_t)rspan, 1);                                  \
                if (rc == OMPI_SUCCESS) {                                                                        \
                    rc = (call);                                                                                 \
                }                                                                                                \
                rc = mca_coll_gc3_stage_out(&r, (rdt_), (size_t)rspan, 1, rc);                                   \
            }                                                                                                    \
            return mca_coll_gc3_stage_out(&s, (sdt_), (size_t)sspan, 0, rc);                                     \
        }                                                                                                        \
    } while (0)

int mca_coll_gc3_neighbor_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                    struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    GC3_NEIGHBOR_STAGED(neighbor_allgather, sdt, (long)scount, rdt, (long)in * rcount,
                        m->prev_neighbor_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                                                   m->prev_neighbor_allgather_module),
                        m->prev_neighbor_allgather(s.base, scount, sdt, r.base, rcount, rdt, comm,
                                                   m->prev_neighbor_allgather_module));
}

int mca_coll_gc3_neighbor_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                     const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                     struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    GC3_NEIGHBOR_STAGED(neighbor_allgatherv, sdt, (long)scount, rdt, (long)gc3_vspan(rcounts, displs, in),
                        m->prev_neighbor_allgatherv(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm,
                                                    m->prev_neighbor_allgatherv_module),
                        m->prev_neighbor_allgatherv(s.base, scount, sdt, r.base, rcounts, displs, rdt, comm,
                                                    m->prev_neighbor_allgatherv_module));
}

int mca_coll_gc3_neighbor_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                   struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                   mca_coll_base_module_t *module)
{
    GC3_NEIGHBOR_STAGED(neighbor_alltoall, sdt, (long)out * scount, rdt, (long)in * rcount,
                        m->prev_neighbor_alltoall(sbuf, scount, sdt, rbuf, rcount, rdt, comm,
                                                  m->prev_neighbor_alltoall_module),
                        m->prev_neighbor_alltoall(s.base, scount, sdt, r.base, rcount, rdt, comm,
                                                  m->prev_neighbor_alltoall_module));
}

int mca_coll_gc3_neighbor_alltoallv(const void *sbuf, const int *scounts, const int *sdispls,
                                    struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts, const int *rdispls,
                                    struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                    mca_coll_base_module_t *module)
{
    GC3_NEIGHBOR_STAGED(neighbor_alltoallv, sdt, (long)gc3_vspan(scounts, sdispls, out), rdt,
                        (long)gc3_vspan(rcounts, rdispls, in),
                        m->prev_neighbor_alltoallv(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm,
                                                   m->prev_neighbor_alltoallv_module),
                        m->prev_neighbor_alltoallv(s.base, scounts, sdispls, sdt, r.base, rcounts, rdispls, rdt, comm,
                                                   m->prev_neighbor_alltoallv_module));
}

/* staged as bytes from the buffer's start (the byte displacements stay valid) */
int mca_coll_gc3_neighbor_alltoallw(const void *sbuf, const int *scounts, const MPI_Aint *sdispls,
                                    struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                                    const MPI_Aint *rdispls, struct ompi_datatype_t *const *rdts,
                                    struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    GC3_NEIGHBOR_STAGED(neighbor_alltoallw, MPI_BYTE, gc3_wspan(scounts, NULL, sdispls, sdts, out), MPI_BYTE,
                        gc3_wspan(rcounts, NULL, rdispls, rdts, in),
                        m->prev_neighbor_alltoallw(sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts, comm,
                                                   m->prev_neighbor_alltoallw_module),
                        m->prev_neighbor_alltoallw(s.base, scounts, sdispls, sdts, r.base, rcounts, rdispls, rdts,
                                                   comm, m->prev_neighbor_alltoallw_module));
}

/* ---------------------------------------------------------------- nonblocking forms
 * The previous module's nonblocking collectives (libnbc) are not CUDA-aware either. On device
 * buffers the call runs as its blocking counterpart (staged, or run by gc3 where it takes it, or
 * per coll_gc3_fallback) and returns a request that is already complete. With
 * coll_gc3_fallback=pass, or on host buffers, the previous module gets the call as it is. The
 * functions are generated from MCA_COLL_GC3_STAGED_NONBLOCKING (coll_gc3_colls.h). */

/* 1 when the nonblocking call `name` on (some) device buffers runs as its blocking form. */
static int gc3_nb_blocking(struct ompi_communicator_t *comm, const char *name, int device)
{
    if (!device || mca_coll_gc3_component.fallback == MCA_COLL_GC3_FALLBACK_PASS) {
        return 0;
    }
    mca_coll_gc3_verbose_once(2, comm,
                              "coll:gc3: comm %s: %s on device buffers: run as its blocking form, completed at once",
                              comm->c_name, name);
    return 1;
}

/* The parameters of each kind of call before (comm, [request,] module), and the arguments they pass on. */
#define GC3_SIG_bcast (void *buf, int count, struct ompi_datatype_t *dt, int root), (buf, count, dt, root)
#define GC3_SIG_reduce                                                                                  \
    (const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op, int root), \
        (sbuf, rbuf, count, dt, op, root)
#define GC3_SIG_allgather                                                                            \
    (const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,              \
     struct ompi_datatype_t *rdt),                                                                   \
        (sbuf, scount, sdt, rbuf, rcount, rdt)
#define GC3_SIG_alltoall GC3_SIG_allgather
#define GC3_SIG_allgatherv                                                                            \
    (const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,       \
     const int *displs, struct ompi_datatype_t *rdt),                                                 \
        (sbuf, scount, sdt, rbuf, rcounts, displs, rdt)
#define GC3_SIG_gather                                                                               \
    (const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,              \
     struct ompi_datatype_t *rdt, int root),                                                         \
        (sbuf, scount, sdt, rbuf, rcount, rdt, root)
#define GC3_SIG_scatter GC3_SIG_gather
#define GC3_SIG_gatherv                                                                               \
    (const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,       \
     const int *displs, struct ompi_datatype_t *rdt, int root),                                       \
        (sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root)
#define GC3_SIG_scatterv                                                                              \
    (const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt, void *rbuf, \
     int rcount, struct ompi_datatype_t *rdt, int root),                                              \
        (sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root)
#define GC3_SIG_alltoallv                                                                              \
    (const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt, void *rbuf, \
     const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt),                             \
        (sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt)
#define GC3_SIG_alltoallw                                                                             \
    (const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *const *sdts,   \
     void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *const *rdts),        \
        (sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts)
#define GC3_SIG_neighbor_alltoallw                                                                    \
    (const void *sbuf, const int *scounts, const MPI_Aint *sdispls, struct ompi_datatype_t *const *sdts, \
     void *rbuf, const int *rcounts, const MPI_Aint *rdispls, struct ompi_datatype_t *const *rdts),   \
        (sbuf, scounts, sdispls, sdts, rbuf, rcounts, rdispls, rdts)
#define GC3_SIG_reduce_scatter_block                                                                  \
    (const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dt, struct ompi_op_t *op),     \
        (sbuf, rbuf, rcount, dt, op)
#define GC3_SIG_reduce_scatter                                                                        \
    (const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt, struct ompi_op_t *op), \
        (sbuf, rbuf, rcounts, dt, op)
#define GC3_SIG_scan                                                                                  \
    (const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op),      \
        (sbuf, rbuf, count, dt, op)

#define GC3_UNPAREN(...)     __VA_ARGS__
#define GC3_APPLY(macro, ...) macro(__VA_ARGS__)
#define GC3_NB_STAGED(name, type, blocking, dev, sig) \
    GC3_APPLY(GC3_NB_STAGED_FN, name, blocking, MCA_COLL_GC3_DEV_##dev, GC3_SIG_##sig)
#define GC3_NB_STAGED_FN(name, blocking, device, params, args)                                                  \
    int mca_coll_gc3_##name(GC3_UNPAREN params, struct ompi_communicator_t *comm, ompi_request_t **request,      \
                            mca_coll_base_module_t *module)                                                     \
    {                                                                                                           \
        mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;                                             \
        if (gc3_nb_blocking(comm, #name, (device))) {                                                           \
            *request = &ompi_request_empty;                                                                     \
            return mca_coll_gc3_##blocking(GC3_UNPAREN args, comm, module);                                     \
        }                                                                                                       \
        GC3_PREV_OR_FAIL(m, comm, name);                                                                        \
        return m->prev_##name(GC3_UNPAREN args, comm, request, m->prev_##name##_module);                        \
    }

MCA_COLL_GC3_STAGED_NONBLOCKING(GC3_NB_STAGED)
