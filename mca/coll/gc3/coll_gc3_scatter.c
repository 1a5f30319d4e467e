/* coll/gc3: MPI_Scatter and MPI_Scatterv, blocking, nonblocking and persistent, around one argument
 * builder: as MPI_Gather (coll_gc3_gather.c), the other way. gc3 runs both on scatter's plans with per-rank
 * counts; the send side counts only at the root, MPI_IN_PLACE as the root's receive buffer is an in-place
 * call (its block stays where it is in its send buffer). A non-root knows its own count only: a scatterv's
 * ranks agree on the largest segment. coll_gc3_enable_scatter governs both. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder: v: MPI_Scatterv (scounts, displs at the root), else MPI_Scatter (scount). In place
 * the root's send buffer is both sides (the runtime's in-place call: its output inside its input). */
static int gc3_scatter_args(mca_coll_gc3_module_t *m, const void *sbuf, int v, int scount, const int *scounts,
                            const int *displs, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                            struct ompi_datatype_t *rdt, int root, const char *name, mca_coll_gc3_args_t *a)
{
    const int n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm), at_root = me == root;
    const int inplace = at_root && rbuf == MPI_IN_PLACE;
    size_t    rsize = 0, ssize = 0, mine;
    long      lo = 0;

    if (!inplace) {
        ompi_datatype_type_size(rdt, &rsize);
    }
    if (at_root) {
        ompi_datatype_type_size(sdt, &ssize);
    }
    mca_coll_gc3_args_begin(a, GC3_COLL_SCATTER, root, name);
    if (at_root && v) {
        lo = mca_coll_gc3_vbuf(m, a, inplace ? 1 : 0, sbuf, sdt, scounts, displs, n, 1, 0);
    } else if (at_root) {
        mca_coll_gc3_args_buf(m, a, inplace ? 1 : 0, sbuf, sdt, (size_t)scount * (size_t)n, 1, 0);
    }
    if (inplace) {
        mca_coll_gc3_args_buf(m, a, 0, MPI_IN_PLACE, NULL, 0, 0, 0);
    } else {
        mca_coll_gc3_args_buf(m, a, 1, rbuf, rdt, (size_t)rcount, 0, 1);
    }
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_SCATTER, 1)) {
        return 0;
    }
    mine = inplace ? (size_t)(v ? scounts[me] : scount) * ssize : (size_t)rcount * rsize;
    if (at_root && !inplace && mine != (size_t)(v ? scounts[me] : scount) * ssize) {
        return mca_coll_gc3_passed_on(m->comm, name, "send and receive sizes differ");
    }
    mca_coll_gc3_vrooted(a, n, at_root, v, 0, scount, v ? scounts : NULL, displs, lo, ssize, mine);
    return 1;
}

int mca_coll_gc3_scatter(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                         struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_scatter_args(m, sbuf, 0, scount, NULL, NULL, sdt, rbuf, rcount, rdt, root, "scatter", &a) &&
                    mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc : mca_coll_gc3_scatter_staged(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, module, NULL);
}

int mca_coll_gc3_iscatter(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_scatter_args(m, sbuf, 0, scount, NULL, NULL, sdt, rbuf, rcount, rdt, root, "iscatter", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_scatter_staged(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, module, request);
}

int mca_coll_gc3_scatterv(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                          void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                          struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_scatter_args(m, sbuf, 1, 0, scounts, displs, sdt, rbuf, rcount, rdt, root, "scatterv", &a) &&
                    mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc
               : mca_coll_gc3_scatterv_staged(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, module, NULL);
}

int mca_coll_gc3_iscatterv(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                           void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                           struct ompi_communicator_t *comm, ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_scatter_args(m, sbuf, 1, 0, scounts, displs, sdt, rbuf, rcount, rdt, root, "iscatterv", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_scatterv_staged(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, module, request);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_scatter_start(mca_coll_gc3_request_t *r, int v, int *rc)
{
    mca_coll_gc3_args_t a;
    const int taken = gc3_scatter_args(r->module, r->sbuf, v, r->scount, r->vec[0], r->vec[1], r->sdtype, r->rbuf,
                                       r->rcount, r->rdtype, r->root, v ? "scatterv_init" : "scatter_init", &a) &&
                      mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING) &&
                      mca_coll_gc3_vstart_persistent(r->module, &a, r, rc);

    mca_coll_gc3_args_end(&a);
    return taken;
}

static int gc3_scatter_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    return gc3_scatter_start(r, 0, rc);
}

static int gc3_scatterv_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    return gc3_scatter_start(r, 1, rc);
}

static int gc3_scatter_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_scatter(r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, r->root, r->module->comm,
                                &r->module->super);
}

static int gc3_scatterv_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_scatterv(r->sbuf, r->vec[0], r->vec[1], r->sdtype, r->rbuf, r->rcount, r->rdtype, r->root,
                                 r->module->comm, &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_scatter_persistent  = { gc3_scatter_start_on_plan, gc3_scatter_start_blocking };
static const mca_coll_gc3_pcoll_t gc3_scatterv_persistent = { gc3_scatterv_start_on_plan, gc3_scatterv_start_blocking };

int mca_coll_gc3_scatter_init(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                              struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                              struct ompi_info_t *info, ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m       = (mca_coll_gc3_module_t *)module;
    const int              at_root = ompi_comm_rank(comm) == root;
    mca_coll_gc3_args_t    a;
    const int              gc3_runs =
        gc3_scatter_args(m, sbuf, 0, scount, NULL, NULL, sdt, rbuf, rcount, rdt, root, "scatter_init", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_scatter_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, scatter_init);
        }
        return m->prev_scatter_init(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, info, request,
                                    m->prev_scatter_init_module);
    }
    /* (the send side is the root's only: significant there) */
    return mca_coll_gc3_persistent(m, GC3_COLL_SCATTER, &gc3_scatter_persistent, at_root ? sbuf : NULL, rbuf, scount,
                                   at_root ? sdt : NULL, rcount, rbuf == MPI_IN_PLACE && at_root ? NULL : rdt, NULL,
                                   gc3_runs, &a, request);
}

int mca_coll_gc3_scatterv_init(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                               struct ompi_communicator_t *comm, struct ompi_info_t *info, ompi_request_t **request,
                               mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m       = (mca_coll_gc3_module_t *)module;
    const int              at_root = ompi_comm_rank(comm) == root;
    mca_coll_gc3_args_t    a;
    const int *const       v[4] = { scounts, displs, NULL, NULL }; /* (the root's only: significant there) */
    int                    rc;

    if (gc3_scatter_args(m, sbuf, 1, 0, scounts, displs, sdt, rbuf, rcount, rdt, root, "scatterv_init", &a)) {
        (void)mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);
    }
    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) {
        if (m->prev_scatterv_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, scatterv_init);
        }
        return m->prev_scatterv_init(sbuf, scounts, displs, sdt, rbuf, rcount, rdt, root, comm, info, request,
                                     m->prev_scatterv_init_module);
    }
    /* each start builds the table and agrees on the largest segment (its plan is set up at the first) */
    rc = mca_coll_gc3_persistent(m, GC3_COLL_SCATTER, &gc3_scatterv_persistent, at_root ? sbuf : NULL, rbuf, 0,
                                 at_root ? sdt : NULL, rcount, rbuf == MPI_IN_PLACE && at_root ? NULL : rdt, NULL, 0,
                                 &a, request);
    if (rc == OMPI_SUCCESS && at_root &&
        (rc = mca_coll_gc3_persistent_vectors(*request, ompi_comm_size(comm), v)) != OMPI_SUCCESS) {
        (void)ompi_request_free(request);
    }
    return rc;
}
