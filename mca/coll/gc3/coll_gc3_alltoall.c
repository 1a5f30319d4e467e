/* coll/gc3: MPI_Alltoall, in its blocking, nonblocking and persistent forms around one argument
 * builder. gc3 runs it (as bytes) when both datatypes are contiguous with the same size per call,
 * on device memory of this rank's GPU (or host memory with coll_gc3_backend=host); otherwise the
 * previous module does (device buffers staged). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t); an MPI_IN_PLACE call's send side (*scount, *sdtype)
 * becomes its receive side. name: the MPI call, for messages. */
static int gc3_alltoall_args(mca_coll_gc3_module_t *m, const void *sbuf, int *scount, struct ompi_datatype_t **sdtype,
                             void *rbuf, int rcount, struct ompi_datatype_t *rdtype, const char *name,
                             mca_coll_gc3_args_t *a)
{
    const size_t n     = (size_t)ompi_comm_size(m->comm);
    size_t       ssize = 0, rsize = 0;

    mca_coll_gc3_args_begin(a, GC3_COLL_ALLTOALL, -1, name);
    if (sbuf == MPI_IN_PLACE) {
        *scount = rcount;
        *sdtype = rdtype;
    }
    mca_coll_gc3_args_buf(m, a, 0, sbuf, *sdtype, (size_t)*scount * n, 1, 0);
    mca_coll_gc3_args_buf(m, a, 1, rbuf, rdtype, (size_t)rcount * n, sbuf == MPI_IN_PLACE, 1);
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_ALLTOALL, rcount)) {
        return 0;
    }
    ompi_datatype_type_size(rdtype, &rsize);
    ompi_datatype_type_size(*sdtype, &ssize);
    if (ssize * (size_t)*scount != rsize * (size_t)rcount) {
        return mca_coll_gc3_passed_on(m->comm, name, "send and receive sizes differ");
    }
    a->dtype = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op    = GC3_OP_SUM;
    a->count = rsize * (size_t)rcount;
    a->bytes = mca_coll_gc3_args_bytes(a, (int)n);
    return 1;
}

/* The previous module's alltoall with the device buffers copied through host memory. */
static int gc3_alltoall_staged(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdtype, ompi_request_t **request)
{
    size_t               n    = (size_t)ompi_comm_size(m->comm);
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdtype, (size_t)scount * n, 1, 0),
                                  mca_coll_gc3_stage_buf(rbuf, rdtype, (size_t)rcount * n, sbuf == MPI_IN_PLACE, 1) };
    int                  rc;
    ompi_request_t      *inner = NULL;

    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = request == NULL ? m->prev_alltoall(b[0].base, scount, sdtype, b[1].base, rcount, rdtype, m->comm,
                                                m->prev_alltoall_module)
                             : m->prev_ialltoall(b[0].base, scount, sdtype, b[1].base, rcount, rdtype, m->comm, &inner,
                                                 m->prev_ialltoall_module);
    }
    return request == NULL ? mca_coll_gc3_stage_out(b, 2, rc) : mca_coll_gc3_chain(m, b, 2, rc, inner, request);
}

int mca_coll_gc3_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_alltoall == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (gc3_alltoall_args(m, sbuf, &scount, &sdtype, rbuf, rcount, rdtype, "alltoall", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, GC3_COLL_ALLTOALL, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a), &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    rc = OMPI_SUCCESS;
    if (mca_coll_gc3_stage_args(&a, comm, 0, &rc)) {
        return gc3_alltoall_staged(m, sbuf, scount, sdtype, rbuf, rcount, rdtype, NULL);
    }
    return rc != OMPI_SUCCESS
               ? rc
               : m->prev_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_alltoall_module);
}

/* As MPI_Iallreduce (coll_gc3_allreduce.c): the pipeline, or the blocking call on device buffers
 * gc3 does not take, or the previous module. */
int mca_coll_gc3_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_alltoall_args(m, sbuf, &scount, &sdtype, rbuf, rcount, rdtype, "ialltoall", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, GC3_COLL_ALLTOALL, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                      request, NULL);
    }
    if (m->prev_ialltoall == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, ialltoall);
    }
    if (mca_coll_gc3_stage_args(&a, comm, 1, &rc)) {
        return gc3_alltoall_staged(m, sbuf, scount, sdtype, rbuf, rcount, rdtype, request);
    }
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return m->prev_ialltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, request, m->prev_ialltoall_module);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_alltoall_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t         *req    = &r->super;
    int                     scount = r->scount;
    struct ompi_datatype_t *sdtype = r->sdtype;
    mca_coll_gc3_args_t     a;

    if (!gc3_alltoall_args(r->module, r->sbuf, &scount, &sdtype, r->rbuf, r->rcount, r->rdtype, "alltoall", &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, GC3_COLL_ALLTOALL, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                 &req, r);
    return 1;
}

static int gc3_alltoall_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_alltoall(r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, r->module->comm,
                                 &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_alltoall_persistent = { gc3_alltoall_start_on_plan, gc3_alltoall_start_blocking };

int mca_coll_gc3_alltoall_init(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                               struct ompi_info_t *info, ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t  *m   = (mca_coll_gc3_module_t *)module;
    int                     sc  = scount;
    struct ompi_datatype_t *sdt = sdtype;
    mca_coll_gc3_args_t     a;
    int gc3_runs = gc3_alltoall_args(m, sbuf, &sc, &sdt, rbuf, rcount, rdtype, "alltoall_init", &a) &&
                   mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_alltoall_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, alltoall_init);
        }
        return m->prev_alltoall_init(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, info, request,
                                     m->prev_alltoall_init_module);
    }
    /* an MPI_IN_PLACE call keeps no send datatype (it may not be a valid one) */
    return mca_coll_gc3_persistent(m, GC3_COLL_ALLTOALL, &gc3_alltoall_persistent, sbuf, rbuf, scount,
                                   sbuf == MPI_IN_PLACE ? NULL : sdtype, rcount, rdtype, NULL, gc3_runs, &a, request);
}
