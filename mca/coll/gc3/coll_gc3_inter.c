/* coll/gc3: collectives on intercommunicators. gc3 runs none of them itself; Open MPI's component
 * for them (coll/inter, built on the intracommunicators' collectives and point-to-point) would
 * dereference device buffers where Open MPI is not CUDA-aware, so gc3 stages them: each device
 * buffer a rank passes is copied to host memory around the previous module's call (as
 * coll_gc3_fallback says: staged, passed as it is, or failed), host buffers go as they are. Buffers
 * are significant as MPI says for intercommunicators: a rooted call's root group passes MPI_ROOT at
 * the root (its buffers count) and MPI_PROC_NULL elsewhere (none), the other group the root's rank;
 * receive and send sizes of the all-to-all ones count the remote group (alltoallw's: a datatype per
 * peer, displacements in bytes); a reduce-scatter's recvcounts are the local group's, its send
 * buffer their sum (reduce_scatter_block: recvcount times the local group's size), the remote
 * group's data reduced and scattered in this one. The nonblocking forms are passed on (coll_gc3(7),
 * LIMITATIONS). */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* elements of dt spanned by a vector of counts at displacements */
static size_t gc3_inter_vspan(const int *counts, const int *displs, int n)
{
    size_t span = 0;
    for (int i = 0; counts != NULL && displs != NULL && i < n; i++) {
        if (counts[i] > 0 && (size_t)displs[i] + (size_t)counts[i] > span) {
            span = (size_t)displs[i] + (size_t)counts[i];
        }
    }
    return span;
}

static size_t gc3_inter_sum(const int *counts, int n)
{
    size_t sum = 0;
    for (int i = 0; counts != NULL && i < n; i++) {
        sum += counts[i] > 0 ? (size_t)counts[i] : 0;
    }
    return sum;
}

/* A buffer with a block before its start (b[i].count): staged as bytes from its start it cannot be. */
#define GC3_INTER_BEFORE SIZE_MAX

/* bytes from a w-collective's buffer to the end of its last block (counts[q] x types[q] at byte
 * displacements displs[q]: an element's data spans its datatype's true extent from its true lower
 * bound, the next one an extent further); GC3_INTER_BEFORE when a block starts before the buffer */
static size_t gc3_inter_wspan(const int *counts, const int *displs, struct ompi_datatype_t *const *types, int n)
{
    size_t end = 0;
    for (int q = 0; counts != NULL && displs != NULL && types != NULL && q < n; q++) {
        ptrdiff_t lb, extent, true_lb, true_extent, lo, hi, step;
        if (counts[q] <= 0) {
            continue;
        }
        ompi_datatype_get_extent(types[q], &lb, &extent);
        ompi_datatype_get_true_extent(types[q], &true_lb, &true_extent);
        step = (ptrdiff_t)(counts[q] - 1) * extent; /* (a negative extent goes down) */
        lo   = (ptrdiff_t)displs[q] + true_lb + (step < 0 ? step : 0);
        hi   = (ptrdiff_t)displs[q] + true_lb + true_extent + (step > 0 ? step : 0);
        if (lo < 0) {
            return GC3_INTER_BEFORE;
        }
        end = (size_t)hi > end ? (size_t)hi : end;
    }
    return end;
}

/* Whether the call's buffers are staged: 1 (b[] copied in: call the previous module with their
 * bases, then mca_coll_gc3_stage_out); 0 with *rc OMPI_SUCCESS: call it with the user's buffers (no
 * device buffer, or coll_gc3_fallback pass); 0 with *rc an error: the call fails. */
static int gc3_inter_stage(struct ompi_communicator_t *comm, mca_coll_gc3_stage_t *b, int n, const char *name, int *rc)
{
    int device = 0;

    *rc = OMPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        device |= b[i].user != NULL && b[i].user != MPI_IN_PLACE && b[i].count > 0 && mca_coll_gc3_is_device(b[i].user);
    }
    if (!device || !mca_coll_gc3_stage_call(comm, name, rc)) {
        return 0;
    }
    for (int i = 0; i < n; i++) {
        if (b[i].count == GC3_INTER_BEFORE && b[i].user != NULL && mca_coll_gc3_is_device(b[i].user)) {
            opal_output(0,
                        "coll:gc3: comm %s rank %d: %s on device buffers with a block before the buffer's start "
                        "(negative displacement or lower bound) cannot be staged: the call fails",
                        comm->c_name, ompi_comm_rank(comm), name);
            *rc = MPI_ERR_UNSUPPORTED_OPERATION;
            return 0;
        }
    }
    if ((*rc = mca_coll_gc3_stage_in(b, n)) != OMPI_SUCCESS) {
        *rc = mca_coll_gc3_stage_out(b, n, *rc);
        return 0;
    }
    return 1;
}

#define GC3_INTER_PREV(m, comm, name)                                                                                  \
    do {                                                                                                               \
        if ((m)->prev_##name == NULL) {                                                                                \
            return MCA_COLL_GC3_NO_PREV(comm, name);                                                                   \
        }                                                                                                              \
    } while (0)

/* the buffer a call passes to the previous module: the staged copy's base, or the user's */
#define GC3_B(b, staged, i) ((staged) ? (void *)(b)[i].base : (b)[i].user)
/* an MPI_IN_PLACE or absent buffer is not staged (NULL in b[]), but goes as it is */
#define GC3_U(p)                    ((p) == MPI_IN_PLACE ? NULL : (void *)(p))
#define GC3_ARG(b, staged, i, orig) ((b)[i].user == NULL ? (void *)(orig) : GC3_B(b, staged, i))

int mca_coll_gc3_inter_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt,
                                 struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), dt, (size_t)count, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, (size_t)count, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, allreduce);
    st = gc3_inter_stage(comm, b, 2, "allreduce", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_allreduce(GC3_ARG(b, st, 0, sbuf), GC3_B(b, st, 1), count, dt, op, comm, m->prev_allreduce_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_bcast(void *buf, int count, struct ompi_datatype_t *dt, int root,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   b[1] = { mca_coll_gc3_stage_buf(root == MPI_PROC_NULL ? NULL : buf, dt, (size_t)count,
                                                           root == MPI_ROOT, root != MPI_ROOT) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, bcast);
    st = gc3_inter_stage(comm, b, 1, "bcast", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_bcast(GC3_ARG(b, st, 0, buf), count, dt, root, comm, m->prev_bcast_module);
    return st ? mca_coll_gc3_stage_out(b, 1, rc) : rc;
}

int mca_coll_gc3_inter_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                              int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(root >= 0 ? GC3_U(sbuf) : NULL, dt, (size_t)count, 1, 0),
                                    mca_coll_gc3_stage_buf(root == MPI_ROOT ? rbuf : NULL, dt, (size_t)count, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, reduce);
    st = gc3_inter_stage(comm, b, 2, "reduce", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_reduce(GC3_ARG(b, st, 0, sbuf), GC3_ARG(b, st, 1, rbuf), count, dt, op, root, comm,
                        m->prev_reduce_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                 struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                 mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const size_t           rn   = (size_t)ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), sdt, (size_t)scount, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rcount * rn, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, allgather);
    st = gc3_inter_stage(comm, b, 2, "allgather", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_allgather(GC3_ARG(b, st, 0, sbuf), scount, sdt, GC3_B(b, st, 1), rcount, rdt, comm,
                           m->prev_allgather_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                  const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                  struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m  = (mca_coll_gc3_module_t *)module;
    const int              rn = ompi_comm_remote_size(comm);
    /* the receive buffer copied in: the gaps between the blocks come back unchanged */
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), sdt, (size_t)scount, 1, 0),
                                  mca_coll_gc3_stage_buf(rbuf, rdt, gc3_inter_vspan(rcounts, displs, rn), 1, 1) };
    int                  rc, st;

    GC3_INTER_PREV(m, comm, allgatherv);
    st = gc3_inter_stage(comm, b, 2, "allgatherv", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_allgatherv(GC3_ARG(b, st, 0, sbuf), scount, sdt, GC3_B(b, st, 1), rcounts, displs, rdt, comm,
                            m->prev_allgatherv_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                                mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const size_t           rn   = (size_t)ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), sdt, (size_t)scount * rn, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rcount * rn, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, alltoall);
    st = gc3_inter_stage(comm, b, 2, "alltoall", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_alltoall(GC3_ARG(b, st, 0, sbuf), scount, sdt, GC3_B(b, st, 1), rcount, rdt, comm,
                          m->prev_alltoall_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                                 void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m  = (mca_coll_gc3_module_t *)module;
    const int              rn = ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), sdt, gc3_inter_vspan(scounts, sdispls, rn), 1, 0),
                                  mca_coll_gc3_stage_buf(rbuf, rdt, gc3_inter_vspan(rcounts, rdispls, rn), 1, 1) };
    int                  rc, st;

    GC3_INTER_PREV(m, comm, alltoallv);
    st = gc3_inter_stage(comm, b, 2, "alltoallv", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_alltoallv(GC3_ARG(b, st, 0, sbuf), scounts, sdispls, sdt, GC3_B(b, st, 1), rcounts, rdispls, rdt, comm,
                           m->prev_alltoallv_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                              struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                              mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const size_t           rn   = (size_t)ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(root >= 0 ? GC3_U(sbuf) : NULL, sdt, (size_t)scount, 1, 0),
                                    mca_coll_gc3_stage_buf(root == MPI_ROOT ? rbuf : NULL, rdt, (size_t)rcount * rn, 0,
                                                           1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, gather);
    st = gc3_inter_stage(comm, b, 2, "gather", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_gather(GC3_ARG(b, st, 0, sbuf), scount, sdt, GC3_ARG(b, st, 1, rbuf), rcount, rdt, root, comm,
                        m->prev_gather_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_gatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                               const int *rcounts, const int *displs, struct ompi_datatype_t *rdt, int root,
                               struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const int              rn   = ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(root >= 0 ? GC3_U(sbuf) : NULL, sdt, (size_t)scount, 1, 0),
                                    mca_coll_gc3_stage_buf(root == MPI_ROOT ? rbuf : NULL, rdt,
                                                         root == MPI_ROOT ? gc3_inter_vspan(rcounts, displs, rn) : 0, 1,
                                                           1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, gatherv);
    st = gc3_inter_stage(comm, b, 2, "gatherv", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_gatherv(GC3_ARG(b, st, 0, sbuf), scount, sdt, GC3_ARG(b, st, 1, rbuf), rcounts, displs, rdt, root,
                         comm, m->prev_gatherv_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const size_t           rn   = (size_t)ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(root == MPI_ROOT ? GC3_U(sbuf) : NULL, sdt,
                                                           (size_t)scount * rn, 1, 0),
                                    mca_coll_gc3_stage_buf(root >= 0 ? rbuf : NULL, rdt, (size_t)rcount, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, scatter);
    st = gc3_inter_stage(comm, b, 2, "scatter", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_scatter(GC3_ARG(b, st, 0, sbuf), scount, sdt, GC3_ARG(b, st, 1, rbuf), rcount, rdt, root, comm,
                         m->prev_scatter_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

int mca_coll_gc3_inter_scatterv(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                                void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                                struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const int              rn   = ompi_comm_remote_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(root == MPI_ROOT ? GC3_U(sbuf) : NULL, sdt,
                                                         root == MPI_ROOT ? gc3_inter_vspan(scounts, displs, rn) : 0, 1,
                                                           0),
                                    mca_coll_gc3_stage_buf(root >= 0 ? rbuf : NULL, rdt, (size_t)rcount, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, scatterv);
    st = gc3_inter_stage(comm, b, 2, "scatterv", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_scatterv(GC3_ARG(b, st, 0, sbuf), scounts, displs, sdt, GC3_ARG(b, st, 1, rbuf), rcount, rdt, root,
                          comm, m->prev_scatterv_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

/* staged as bytes from each buffer's start: the displacements stay valid; the receive buffer's gaps
 * come back unchanged */
int mca_coll_gc3_inter_alltoallw(const void *sbuf, const int *scounts, const int *sdispls,
                                 struct ompi_datatype_t *const *sdts, void *rbuf, const int *rcounts,
                                 const int *rdispls, struct ompi_datatype_t *const *rdts,
                                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m     = (mca_coll_gc3_module_t *)module;
    const int              rn    = ompi_comm_remote_size(comm);
    const size_t           sspan = gc3_inter_wspan(scounts, sdispls, sdts, rn);
    const size_t           rspan = gc3_inter_wspan(rcounts, rdispls, rdts, rn);
    mca_coll_gc3_stage_t   b[2]  = { mca_coll_gc3_stage_buf(GC3_U(sbuf), MPI_BYTE, sspan, 1, 0),
                                     mca_coll_gc3_stage_buf(rbuf, MPI_BYTE, rspan, 1, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, alltoallw);
    st = gc3_inter_stage(comm, b, 2, "alltoallw", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_alltoallw(GC3_ARG(b, st, 0, sbuf), scounts, sdispls, sdts, GC3_B(b, st, 1), rcounts, rdispls, rdts,
                           comm, m->prev_alltoallw_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

/* the send buffer: the sum of the local group's recvcounts (the same as the remote group's sum) */
int mca_coll_gc3_inter_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                      struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const int              ln   = ompi_comm_size(comm);
    const size_t           mine = rcounts != NULL ? (size_t)rcounts[ompi_comm_rank(comm)] : 0;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), dt, gc3_inter_sum(rcounts, ln), 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, mine, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, reduce_scatter);
    st = gc3_inter_stage(comm, b, 2, "reduce_scatter", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_reduce_scatter(GC3_ARG(b, st, 0, sbuf), GC3_B(b, st, 1), rcounts, dt, op, comm,
                                m->prev_reduce_scatter_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}

/* the send buffer: rcount times the local group's size (the same count as the remote group's) */
int mca_coll_gc3_inter_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dt,
                                            struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                            mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m    = (mca_coll_gc3_module_t *)module;
    const size_t           ln   = (size_t)ompi_comm_size(comm);
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf(GC3_U(sbuf), dt, (size_t)rcount * ln, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, (size_t)rcount, 0, 1) };
    int                    rc, st;

    GC3_INTER_PREV(m, comm, reduce_scatter_block);
    st = gc3_inter_stage(comm, b, 2, "reduce_scatter_block", &rc);
    if (!st && rc != OMPI_SUCCESS) {
        return rc;
    }
    rc = m->prev_reduce_scatter_block(GC3_ARG(b, st, 0, sbuf), GC3_B(b, st, 1), rcount, dt, op, comm,
                                      m->prev_reduce_scatter_block_module);
    return st ? mca_coll_gc3_stage_out(b, 2, rc) : rc;
}
