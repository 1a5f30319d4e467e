/* coll/gc3: MPI_Gather and MPI_Gatherv, blocking, nonblocking and persistent, around one argument
 * builder. gc3 runs both on gather's plans with per-rank counts (coll_gc3_vcall.c): MPI_Gather is the
 * table of equal segments. It takes a call on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host) when the root's receive buffer and every rank's send buffer are such memory,
 * the send and receive sizes agree and a plan agreed by all ranks exists (else, nonblocking, on gc3's
 * host-staged exchange); otherwise the previous module does (device buffers staged through host memory:
 * coll_gc3_fallback.c). The receive side counts only at the root (MPI lets the others pass anything:
 * gc3 never looks at it there); MPI_IN_PLACE at the root is an in-place call. A non-root knows its own
 * count only: a gatherv's ranks agree on the largest segment (a->vagree). coll_gc3_enable_gather
 * governs both. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t, with this rank's table): 1 when gc3 may run it, 0 when
 * every rank passes it on. v: MPI_Gatherv (rcounts, displs at the root), else MPI_Gather (rcount). */
static int gc3_gather_args(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdt,
                           void *rbuf, int v, int rcount, const int *rcounts, const int *displs,
                           struct ompi_datatype_t *rdt, int root, const char *name, mca_coll_gc3_args_t *a)
{
    const int n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm), at_root = me == root;
    const int inplace = at_root && sbuf == MPI_IN_PLACE;
    size_t    rsize = 0, ssize = 0, mine;
    long      lo = 0;

    if (!inplace) {
        ompi_datatype_type_size(sdt, &ssize);
    }
    if (at_root) {
        ompi_datatype_type_size(rdt, &rsize);
    }
    mca_coll_gc3_args_begin(a, GC3_COLL_GATHER, root, name);
    mca_coll_gc3_args_buf(m, a, 0, inplace ? MPI_IN_PLACE : sbuf, sdt, (size_t)scount, 1, 0);
    /* (a non-root's receive buffer is not significant: gc3 never looks at it there, its slot stays empty) */
    if (at_root && v) { /* copied in where it is adapted: the bytes between the segments come back as they were */
        lo = mca_coll_gc3_vbuf(m, a, 1, rbuf, rdt, rcounts, displs, n, 1, 1);
    } else if (at_root) {
        mca_coll_gc3_args_buf(m, a, 1, rbuf, rdt, (size_t)rcount * (size_t)n, inplace, 1);
    }
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_GATHER, 1)) {
        return 0;
    }
    mine = inplace ? (size_t)(v ? rcounts[me] : rcount) * rsize : (size_t)scount * ssize;
    if (at_root && !inplace && mine != (size_t)(v ? rcounts[me] : rcount) * rsize) {
        return mca_coll_gc3_passed_on(m->comm, name, "send and receive sizes differ");
    }
    mca_coll_gc3_vrooted(a, n, at_root, v, 1, rcount, v ? rcounts : NULL, displs, lo, rsize, mine);
    return 1;
}

int mca_coll_gc3_gather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                        struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                        mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_gather_args(m, sbuf, scount, sdt, rbuf, 0, rcount, NULL, NULL, rdt, root, "gather", &a) &&
                    mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc : mca_coll_gc3_gather_staged(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, module, NULL);
}

int mca_coll_gc3_igather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                         struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                         ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_gather_args(m, sbuf, scount, sdt, rbuf, 0, rcount, NULL, NULL, rdt, root, "igather", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_gather_staged(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, module, request);
}

int mca_coll_gc3_gatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                         const int *displs, struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                         mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_gather_args(m, sbuf, scount, sdt, rbuf, 1, 0, rcounts, displs, rdt, root, "gatherv", &a) &&
                    mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc
               : mca_coll_gc3_gatherv_staged(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, module, NULL);
}

int mca_coll_gc3_igatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                          const int *displs, struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                          ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_gather_args(m, sbuf, scount, sdt, rbuf, 1, 0, rcounts, displs, rdt, root, "igatherv", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_gatherv_staged(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, module, request);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_gather_start(mca_coll_gc3_request_t *r, int v, int *rc)
{
    mca_coll_gc3_args_t a;
    const int taken = gc3_gather_args(r->module, r->sbuf, r->scount, r->sdtype, r->rbuf, v, r->rcount, r->vec[2],
                                      r->vec[3], r->rdtype, r->root, v ? "gatherv_init" : "gather_init", &a) &&
                      mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING) &&
                      mca_coll_gc3_vstart_persistent(r->module, &a, r, rc);

    mca_coll_gc3_args_end(&a);
    return taken;
}

static int gc3_gather_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    return gc3_gather_start(r, 0, rc);
}

static int gc3_gatherv_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    return gc3_gather_start(r, 1, rc);
}

static int gc3_gather_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_gather(r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, r->root, r->module->comm,
                               &r->module->super);
}

static int gc3_gatherv_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_gatherv(r->sbuf, r->scount, r->sdtype, r->rbuf, r->vec[2], r->vec[3], r->rdtype, r->root,
                                r->module->comm, &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_gather_persistent  = { gc3_gather_start_on_plan, gc3_gather_start_blocking };
static const mca_coll_gc3_pcoll_t gc3_gatherv_persistent = { gc3_gatherv_start_on_plan, gc3_gatherv_start_blocking };

int mca_coll_gc3_gather_init(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                             struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                             struct ompi_info_t *info, ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m       = (mca_coll_gc3_module_t *)module;
    const int              at_root = ompi_comm_rank(comm) == root;
    mca_coll_gc3_args_t    a;
    const int              gc3_runs =
        gc3_gather_args(m, sbuf, scount, sdt, rbuf, 0, rcount, NULL, NULL, rdt, root, "gather_init", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_gather_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, gather_init);
        }
        return m->prev_gather_init(sbuf, scount, sdt, rbuf, rcount, rdt, root, comm, info, request,
                                   m->prev_gather_init_module);
    }
    return mca_coll_gc3_persistent(m, GC3_COLL_GATHER, &gc3_gather_persistent, sbuf, at_root ? rbuf : NULL, scount,
                                   sbuf == MPI_IN_PLACE && at_root ? NULL : sdt, rcount, at_root ? rdt : NULL, NULL,
                                   gc3_runs, &a, request);
}

int mca_coll_gc3_gatherv_init(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                              const int *displs, struct ompi_datatype_t *rdt, int root,
                              struct ompi_communicator_t *comm, struct ompi_info_t *info, ompi_request_t **request,
                              mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m       = (mca_coll_gc3_module_t *)module;
    const int              at_root = ompi_comm_rank(comm) == root;
    mca_coll_gc3_args_t    a;
    const int *const       v[4] = { NULL, NULL, rcounts, displs }; /* (the root's only: significant there) */
    int                    rc;

    if (gc3_gather_args(m, sbuf, scount, sdt, rbuf, 1, 0, rcounts, displs, rdt, root, "gatherv_init", &a)) {
        (void)mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);
    }
    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) {
        if (m->prev_gatherv_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, gatherv_init);
        }
        return m->prev_gatherv_init(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, root, comm, info, request,
                                    m->prev_gatherv_init_module);
    }
    /* each start builds the table and agrees on the largest segment (its plan is set up at the first) */
    rc = mca_coll_gc3_persistent(m, GC3_COLL_GATHER, &gc3_gatherv_persistent, sbuf, at_root ? rbuf : NULL, scount,
                                 sbuf == MPI_IN_PLACE && at_root ? NULL : sdt, 0, at_root ? rdt : NULL, NULL, 0, &a,
                                 request);
    if (rc == OMPI_SUCCESS && at_root &&
        (rc = mca_coll_gc3_persistent_vectors(*request, ompi_comm_size(comm), v)) != OMPI_SUCCESS) {
        (void)ompi_request_free(request);
    }
    return rc;
}
