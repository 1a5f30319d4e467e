/* coll/gc3: persistent collectives (Open MPI's pcollreq extension: MPIX_Allreduce_init,
 * MPIX_Alltoall_init). The call is bound once, with the plan it will use built at init (init is
 * collective, as plan building is); each MPI_Start then only launches it, completed through
 * Open MPI's progress like a nonblocking call. A start gc3 does not run itself (say, an op it does
 * not implement) runs the blocking call instead, which follows coll_gc3_fallback on device
 * buffers, and completes at once. Host buffers that gc3 would not run go to the previous module's
 * persistent collective (libnbc), untouched. */
#include "coll_gc3.h"
#include "opal/util/output.h"

/* Start r's call on gc3's plan: 1 when gc3 took it (*rc: its result; on success the request is
 * queued and progress completes it), 0 when it did not. */
static int gc3_pstart_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    mca_coll_gc3_module_t  *m   = r->module;
    ompi_request_t         *req = &r->super;
    mca_coll_gc3_args_t     a;
    int                     scount = r->scount;
    struct ompi_datatype_t *sdtype = r->sdtype;

    if (r->coll == GC3_COLL_ALLREDUCE
            ? !mca_coll_gc3_allreduce_args(m, r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, "allreduce", &a)
            : !mca_coll_gc3_alltoall_args(m, r->sbuf, &scount, &sdtype, r->rbuf, r->rcount, r->rdtype, "alltoall", &a)) {
        return 0;
    }
    return mca_coll_gc3_try_start(m, r->coll, (gc3_backend_t)a.backend, r->sbuf, r->rbuf, a.count, a.dtype, a.op,
                                  a.bytes, &req, rc, r);
}

/* MPI_Start / MPI_Startall */
static int gc3_pstart(size_t count, ompi_request_t **requests)
{
    for (size_t i = 0; i < count; i++) {
        mca_coll_gc3_request_t *r = (mca_coll_gc3_request_t *)requests[i];
        mca_coll_gc3_module_t  *m = r->module;
        int                     rc, taken;

        if (r->super.req_state == OMPI_REQUEST_ACTIVE) {
            return MPI_ERR_REQUEST; /* started again before it completed */
        }
        r->super.req_state            = OMPI_REQUEST_ACTIVE;
        r->super.req_complete         = REQUEST_PENDING;
        r->super.req_status.MPI_ERROR = MPI_SUCCESS;
        taken                         = gc3_pstart_on_plan(r, &rc);
        if (taken && rc == OMPI_SUCCESS) {
            continue; /* queued: progress completes it */
        }
        if (!taken) { /* the blocking call, done at once */
            rc = r->coll == GC3_COLL_ALLREDUCE
                     ? mca_coll_gc3_allreduce(r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, m->comm, &m->super)
                     : mca_coll_gc3_alltoall(r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, m->comm,
                                             &m->super);
        }
        r->super.req_status.MPI_ERROR = rc;
        ompi_request_complete(&r->super, true);
    }
    return OMPI_SUCCESS;
}

static mca_coll_gc3_request_t *gc3_persistent(mca_coll_gc3_module_t *m, int coll, const void *sbuf, void *rbuf,
                                              int scount, struct ompi_datatype_t *sdtype, int rcount,
                                              struct ompi_datatype_t *rdtype, struct ompi_op_t *op)
{
    mca_coll_gc3_request_t *r = mca_coll_gc3_request_persistent(m, coll);
    if (r == NULL) {
        return NULL;
    }
    r->super.req_start = gc3_pstart;
    r->sbuf            = sbuf;
    r->rbuf            = rbuf;
    r->scount          = scount;
    r->rcount          = rcount;
    r->sdtype          = sdtype;
    r->rdtype          = rdtype;
    r->op              = op;
    /* the user may free them before the request (MPI allows it): keep them */
    if (sdtype != NULL) OBJ_RETAIN(sdtype);
    if (rdtype != NULL) OBJ_RETAIN(rdtype);
    if (op != NULL) OBJ_RETAIN(op);
    return r;
}

int mca_coll_gc3_allreduce_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                                struct ompi_op_t *op, struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t  *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_request_t *r;
    mca_coll_gc3_args_t     a;
    int                     gc3_runs = mca_coll_gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "allreduce_init", &a);

    if (a.backend < 0 && !a.device) {
        if (m->prev_allreduce_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, allreduce_init);
        }
        return m->prev_allreduce_init(sbuf, rbuf, count, dtype, op, comm, info, request,
                                      m->prev_allreduce_init_module);
    }
    r = gc3_persistent(m, GC3_COLL_ALLREDUCE, sbuf, rbuf, 0, NULL, count, dtype, op);
    if (r == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (gc3_runs) {
        mca_coll_gc3_plan_ahead(m, GC3_COLL_ALLREDUCE, (gc3_backend_t)a.backend, sbuf, a.bytes);
    }
    *request = &r->super;
    return OMPI_SUCCESS;
}

int mca_coll_gc3_alltoall_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                               struct ompi_info_t *info, ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t  *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_request_t *r;
    mca_coll_gc3_args_t     a;
    int                     sc = scount, gc3_runs;
    struct ompi_datatype_t *sdt = sdtype;

    gc3_runs = mca_coll_gc3_alltoall_args(m, sbuf, &sc, &sdt, rbuf, rcount, rdtype, "alltoall_init", &a);
    if (a.backend < 0 && !a.device) {
        if (m->prev_alltoall_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, alltoall_init);
        }
        return m->prev_alltoall_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, info, request,
                                     m->prev_alltoall_init_module);
    }
    /* an MPI_IN_PLACE call keeps no send datatype (it may not be a valid one) */
    r = gc3_persistent(m, GC3_COLL_ALLTOALL, sbuf, rbuf, scount, sbuf == MPI_IN_PLACE ? NULL : sdtype, rcount,
                       rdtype, NULL);
    if (r == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (gc3_runs) {
        mca_coll_gc3_plan_ahead(m, GC3_COLL_ALLTOALL, (gc3_backend_t)a.backend, sbuf, a.bytes);
    }
    *request = &r->super;
    return OMPI_SUCCESS;
}
