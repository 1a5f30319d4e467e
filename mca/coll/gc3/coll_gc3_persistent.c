/* coll/gc3: persistent collectives (Open MPI's pcollreq extension: MPIX_Allreduce_init,
 * MPIX_Alltoall_init). The call is bound once, with the plan it will use built at init (init is
 * collective, as plan building is); each MPI_Start then only launches it, completed through
 * Open MPI's progress like a nonblocking call. A start gc3 does not run itself (say, an op it does
 * not implement) runs the blocking call instead, which follows coll_gc3_fallback on device
 * buffers, and completes at once. Host buffers that gc3 would not run go to the previous module's
 * persistent collective (libnbc), untouched. */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

static int gc3_pstart_allreduce(mca_coll_gc3_request_t *r)
{
    mca_coll_gc3_module_t *m = r->module;
    gc3_dtype_t            gdt;
    gc3_op_t               gop;
    int                    device, rc, backend = mca_coll_gc3_pick_backend(m, r->sbuf, r->rbuf, "allreduce", &device);
    size_t                 dsize = 0;
    ompi_request_t        *req   = &r->super;

    if (backend >= 0 && mca_coll_gc3_component.enable_allreduce && r->rcount > 0 &&
        mca_coll_gc3_map_dtype(r->rdtype, &gdt) && mca_coll_gc3_map_op(r->op, &gop) && gc3_op_valid(gop, gdt)) {
        ompi_datatype_type_size(r->rdtype, &dsize);
        if (mca_coll_gc3_try_start(m, MCA_COLL_GC3_ALLREDUCE, (gc3_backend_t)backend, r->sbuf, r->rbuf,
                                   (size_t)r->rcount, gdt, gop, (size_t)r->rcount * dsize, &req, &rc, r)) {
            return rc;
        }
    }
    return mca_coll_gc3_allreduce(r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, m->comm, &m->super);
}

static int gc3_pstart_alltoall(mca_coll_gc3_request_t *r)
{
    mca_coll_gc3_module_t  *m = r->module;
    int                     device, rc, backend = mca_coll_gc3_pick_backend(m, r->sbuf, r->rbuf, "alltoall", &device);
    int                     scount = r->scount;
    struct ompi_datatype_t *sdtype = r->sdtype;
    size_t                  ssize = 0, rsize = 0;
    ompi_request_t         *req = &r->super;

    ompi_datatype_type_size(r->rdtype, &rsize);
    if (r->sbuf == MPI_IN_PLACE) {
        scount = r->rcount;
        sdtype = r->rdtype;
    }
    ompi_datatype_type_size(sdtype, &ssize);
    if (backend >= 0 && mca_coll_gc3_component.enable_alltoall && r->rcount > 0 &&
        ompi_datatype_is_contiguous_memory_layout(sdtype, scount) &&
        ompi_datatype_is_contiguous_memory_layout(r->rdtype, r->rcount) &&
        ssize * (size_t)scount == rsize * (size_t)r->rcount &&
        mca_coll_gc3_try_start(m, MCA_COLL_GC3_ALLTOALL, (gc3_backend_t)backend, r->sbuf, r->rbuf,
                               rsize * (size_t)r->rcount, GC3_DT_UINT8, GC3_OP_SUM,
                               rsize * (size_t)r->rcount * (size_t)ompi_comm_size(m->comm), &req, &rc, r)) {
        return rc;
    }
    return mca_coll_gc3_alltoall(r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, m->comm, &m->super);
}

/* MPI_Start / MPI_Startall */
static int gc3_pstart(size_t count, ompi_request_t **requests)
{
    for (size_t i = 0; i < count; i++) {
        mca_coll_gc3_request_t *r = (mca_coll_gc3_request_t *)requests[i];
        int                     queued, rc;

        if (r->super.req_state == OMPI_REQUEST_ACTIVE) {
            return MPI_ERR_REQUEST; /* started again before it completed */
        }
        r->super.req_state            = OMPI_REQUEST_ACTIVE;
        r->super.req_complete         = REQUEST_PENDING;
        r->super.req_status.MPI_ERROR = MPI_SUCCESS;
        r->plan                       = NULL;
        rc = r->coll == MCA_COLL_GC3_ALLREDUCE ? gc3_pstart_allreduce(r) : gc3_pstart_alltoall(r);
        queued = r->plan != NULL && rc == OMPI_SUCCESS; /* gc3 started it: its progress completes it */
        if (!queued) {
            /* ran as a blocking call (or failed to start): done, with its result */
            r->super.req_status.MPI_ERROR = rc;
            ompi_request_complete(&r->super, true);
        }
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
    int                     device, backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, "allreduce_init", &device);
    gc3_dtype_t             gdt;
    gc3_op_t                gop;
    size_t                  dsize = 0;

    if (backend < 0 && !device) {
        if (m->prev_allreduce_init == NULL) {
            opal_output_verbose(1, mca_coll_gc3_component.output,
                                "coll:gc3: comm %s: allreduce_init called but no other coll component provides it",
                                comm->c_name);
            return OMPI_ERR_NOT_SUPPORTED;
        }
        return m->prev_allreduce_init(sbuf, rbuf, count, dtype, op, comm, info, request,
                                      m->prev_allreduce_init_module);
    }
    r = gc3_persistent(m, MCA_COLL_GC3_ALLREDUCE, sbuf, rbuf, 0, NULL, count, dtype, op);
    if (r == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (backend >= 0 && mca_coll_gc3_component.enable_allreduce && count > 0 && mca_coll_gc3_map_dtype(dtype, &gdt) &&
        mca_coll_gc3_map_op(op, &gop) && gc3_op_valid(gop, gdt)) {
        ompi_datatype_type_size(dtype, &dsize);
        mca_coll_gc3_plan_ahead(m, MCA_COLL_GC3_ALLREDUCE, (gc3_backend_t)backend, sbuf, (size_t)count * dsize);
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
    int                     device, backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, "alltoall_init", &device);
    size_t                  rsize = 0;

    if (backend < 0 && !device) {
        if (m->prev_alltoall_init == NULL) {
            opal_output_verbose(1, mca_coll_gc3_component.output,
                                "coll:gc3: comm %s: alltoall_init called but no other coll component provides it",
                                comm->c_name);
            return OMPI_ERR_NOT_SUPPORTED;
        }
        return m->prev_alltoall_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, info, request,
                                     m->prev_alltoall_init_module);
    }
    r = gc3_persistent(m, MCA_COLL_GC3_ALLTOALL, sbuf, rbuf, scount, sbuf == MPI_IN_PLACE ? NULL : sdtype, rcount,
                       rdtype, NULL);
    if (r == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (backend >= 0 && mca_coll_gc3_component.enable_alltoall && rcount > 0) {
        ompi_datatype_type_size(rdtype, &rsize);
        mca_coll_gc3_plan_ahead(m, MCA_COLL_GC3_ALLTOALL, (gc3_backend_t)backend, sbuf,
                                rsize * (size_t)rcount * (size_t)ompi_comm_size(comm));
    }
    *request = &r->super;
    return OMPI_SUCCESS;
}
