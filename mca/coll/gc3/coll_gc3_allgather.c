/* coll/gc3: MPI_Allgather, in its blocking, nonblocking and persistent forms around one argument
 * builder. gc3 runs it (as bytes) when both datatypes are contiguous with the same size per rank,
 * on device memory of this rank's GPU (or host memory with coll_gc3_backend=host), and a plan agreed
 * by all ranks exists; otherwise the previous module does (device buffers staged through host
 * memory). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t); name: the MPI call, for messages. */
static int gc3_allgather_args(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdt,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdt, const char *name,
                              mca_coll_gc3_args_t *a)
{
    size_t n = (size_t)ompi_comm_size(m->comm), rsize = 0, ssize = 0;
    int    inplace = sbuf == MPI_IN_PLACE;

    mca_coll_gc3_args_begin(a, GC3_COLL_ALLGATHER, -1, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, sdt, (size_t)scount, 1, 0);
    mca_coll_gc3_args_buf(m, a, 1, rbuf, rdt, (size_t)rcount * n, inplace, 1);
    ompi_datatype_type_size(rdt, &rsize);
    ssize = inplace ? rsize * (size_t)rcount : 0;
    if (!inplace) {
        ompi_datatype_type_size(sdt, &ssize);
        ssize *= (size_t)scount;
    }
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_ALLGATHER, rcount)) {
        return 0;
    }
    if (ssize != rsize * (size_t)rcount) {
        return mca_coll_gc3_passed_on(m->comm, name, "send and receive sizes differ");
    }
    a->dtype = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op    = GC3_OP_SUM;
    a->count = ssize;
    a->bytes = mca_coll_gc3_args_bytes(a, (int)n);
    return 1;
}

/* The previous module's allgather with the device buffers copied through host memory. */
static int gc3_allgather_staged(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdt,
                                void *rbuf, int rcount, struct ompi_datatype_t *rdt, ompi_request_t **request)
{
    size_t               n    = (size_t)ompi_comm_size(m->comm);
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)scount, 1, 0),
                                  mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rcount * n, sbuf == MPI_IN_PLACE, 1) };
    int                  rc;
    ompi_request_t      *inner = NULL;

    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = request == NULL
                 ? m->prev_allgather(b[0].base, scount, sdt, b[1].base, rcount, rdt, m->comm, m->prev_allgather_module)
                 : m->prev_iallgather(b[0].base, scount, sdt, b[1].base, rcount, rdt, m->comm, &inner,
                                      m->prev_iallgather_module);
    }
    return request == NULL ? mca_coll_gc3_stage_out(b, 2, rc) : mca_coll_gc3_chain(m, b, 2, rc, inner, request);
}

int mca_coll_gc3_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_allgather == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, allgather);
    }
    if (gc3_allgather_args(m, sbuf, scount, sdt, rbuf, rcount, rdt, "allgather", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, GC3_COLL_ALLGATHER, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                 &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    rc = OMPI_SUCCESS;
    if (mca_coll_gc3_stage_args(&a, comm, 0, &rc)) {
        return gc3_allgather_staged(m, sbuf, scount, sdt, rbuf, rcount, rdt, NULL);
    }
    return rc != OMPI_SUCCESS ? rc
                              : m->prev_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, m->prev_allgather_module);
}

/* As MPI_Iallreduce (coll_gc3_allreduce.c): the pipeline, or the blocking call on device buffers
 * gc3 does not take, or the previous module. */
int mca_coll_gc3_iallgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                            struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_allgather_args(m, sbuf, scount, sdt, rbuf, rcount, rdt, "iallgather", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, GC3_COLL_ALLGATHER, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                      request, NULL);
    }
    if (m->prev_iallgather == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, iallgather);
    }
    if (mca_coll_gc3_stage_args(&a, comm, 1, &rc)) {
        return gc3_allgather_staged(m, sbuf, scount, sdt, rbuf, rcount, rdt, request);
    }
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return m->prev_iallgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, request, m->prev_iallgather_module);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_allgather_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t     *req = &r->super;
    mca_coll_gc3_args_t a;

    if (!gc3_allgather_args(r->module, r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, "allgather", &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, GC3_COLL_ALLGATHER, &a, mca_coll_gc3_run_sbuf(&a),
                                 mca_coll_gc3_run_rbuf(&a), &req, r);
    return 1;
}

static int gc3_allgather_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_allgather(r->sbuf, r->scount, r->sdtype, r->rbuf, r->rcount, r->rdtype, r->module->comm,
                                  &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_allgather_persistent = { gc3_allgather_start_on_plan,
                                                               gc3_allgather_start_blocking };

int mca_coll_gc3_allgather_init(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int gc3_runs = gc3_allgather_args(m, sbuf, scount, sdt, rbuf, rcount, rdt, "allgather_init", &a) &&
                   mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_allgather_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, allgather_init);
        }
        return m->prev_allgather_init(sbuf, scount, sdt, rbuf, rcount, rdt, comm, info, request,
                                      m->prev_allgather_init_module);
    }
    /* an MPI_IN_PLACE call keeps no send datatype (it may not be a valid one) */
    return mca_coll_gc3_persistent(m, GC3_COLL_ALLGATHER, &gc3_allgather_persistent, sbuf, rbuf, scount,
                                   sbuf == MPI_IN_PLACE ? NULL : sdt, rcount, rdt, NULL, gc3_runs, &a, request);
}
