/* coll/gc3: MPI_Reduce_scatter_block, in its blocking, nonblocking and persistent forms around one
 * argument builder. gc3 runs it out of place (MPI's in-place result goes to the start of the buffer,
 * the program's to this rank's block: those are passed on) when the datatype and op are predefined
 * ones it knows, on device memory of this rank's GPU (or host memory with coll_gc3_backend=host),
 * and a plan agreed by all ranks exists; otherwise the previous module does (device buffers staged
 * through host memory). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t); name: the MPI call, for messages. */
static int gc3_reduce_scatter_block_args(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int rcount,
                                         struct ompi_datatype_t *dt, struct ompi_op_t *op, const char *name,
                                         mca_coll_gc3_args_t *a)
{
    const size_t n = (size_t)ompi_comm_size(m->comm);

    mca_coll_gc3_args_begin(a, GC3_COLL_REDUCE_SCATTER, -1, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, dt, (size_t)rcount * n, 1, 0);
    mca_coll_gc3_args_buf(m, a, 1, rbuf, dt, (size_t)rcount, 0, 1);
    if (sbuf == MPI_IN_PLACE) {
        return mca_coll_gc3_passed_on(m->comm, name, "in place (gc3 runs it out of place)");
    }
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_REDUCE_SCATTER, rcount)) {
        return 0;
    }
    if (!mca_coll_gc3_args_reduction(m, a, name, dt, (size_t)rcount, op)) {
        return 0;
    }
    a->bytes = mca_coll_gc3_args_bytes(a, (int)n);
    return 1;
}

/* The previous module's reduce_scatter_block with the device buffers copied through host memory. */
static int gc3_reduce_scatter_block_staged(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int rcount,
                                           struct ompi_datatype_t *dt, struct ompi_op_t *op, ompi_request_t **request)
{
    int                  rc, inplace = sbuf == MPI_IN_PLACE;
    ompi_request_t      *inner = NULL;
    size_t               all   = (size_t)rcount * (size_t)ompi_comm_size(m->comm);
    mca_coll_gc3_stage_t b[2]  = { mca_coll_gc3_stage_buf((void *)sbuf, dt, all, 1, 0),
                                   mca_coll_gc3_stage_buf(rbuf, dt, inplace ? all : (size_t)rcount, inplace, 1) };

    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = request == NULL ? m->prev_reduce_scatter_block(b[0].base, b[1].base, rcount, dt, op, m->comm,
                                                            m->prev_reduce_scatter_block_module)
                             : m->prev_ireduce_scatter_block(b[0].base, b[1].base, rcount, dt, op, m->comm, &inner,
                                                             m->prev_ireduce_scatter_block_module);
    }
    b[1].count = (size_t)rcount; /* in place too, only this rank's block is the result */
    return request == NULL ? mca_coll_gc3_stage_out(b, 2, rc) : mca_coll_gc3_chain(m, b, 2, rc, inner, request);
}

int mca_coll_gc3_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dt,
                                      struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_reduce_scatter_block == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, reduce_scatter_block);
    }
    if (gc3_reduce_scatter_block_args(m, sbuf, rbuf, rcount, dt, op, "reduce_scatter_block", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, GC3_COLL_REDUCE_SCATTER, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                 &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    rc = OMPI_SUCCESS;
    if (mca_coll_gc3_stage_args(&a, comm, 0, &rc)) {
        return gc3_reduce_scatter_block_staged(m, sbuf, rbuf, rcount, dt, op, NULL);
    }
    return rc != OMPI_SUCCESS
               ? rc
               : m->prev_reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, m->prev_reduce_scatter_block_module);
}

/* As MPI_Iallreduce (coll_gc3_allreduce.c): the pipeline, or the blocking call on device buffers
 * gc3 does not take, or the previous module. */
int mca_coll_gc3_ireduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dt,
                                       struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                                       mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_reduce_scatter_block_args(m, sbuf, rbuf, rcount, dt, op, "ireduce_scatter_block", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, GC3_COLL_REDUCE_SCATTER, &a, mca_coll_gc3_run_sbuf(&a),
                                      mca_coll_gc3_run_rbuf(&a), request, NULL);
    }
    if (m->prev_ireduce_scatter_block == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, ireduce_scatter_block);
    }
    if (mca_coll_gc3_stage_args(&a, comm, 1, &rc)) {
        return gc3_reduce_scatter_block_staged(m, sbuf, rbuf, rcount, dt, op, request);
    }
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return m->prev_ireduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm, request,
                                         m->prev_ireduce_scatter_block_module);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_reduce_scatter_block_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t     *req = &r->super;
    mca_coll_gc3_args_t a;

    if (!gc3_reduce_scatter_block_args(r->module, r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, "reduce_scatter_block",
                                       &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, GC3_COLL_REDUCE_SCATTER, &a, mca_coll_gc3_run_sbuf(&a),
                                 mca_coll_gc3_run_rbuf(&a), &req, r);
    return 1;
}

static int gc3_reduce_scatter_block_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_reduce_scatter_block(r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, r->module->comm,
                                             &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_reduce_scatter_block_persistent = { gc3_reduce_scatter_block_start_on_plan,
                                                                          gc3_reduce_scatter_block_start_blocking };

int mca_coll_gc3_reduce_scatter_block_init(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dt,
                                           struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                           struct ompi_info_t *info, ompi_request_t **request,
                                           mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int gc3_runs = gc3_reduce_scatter_block_args(m, sbuf, rbuf, rcount, dt, op, "reduce_scatter_block_init", &a) &&
                   mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_reduce_scatter_block_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, reduce_scatter_block_init);
        }
        return m->prev_reduce_scatter_block_init(sbuf, rbuf, rcount, dt, op, comm, info, request,
                                                 m->prev_reduce_scatter_block_init_module);
    }
    return mca_coll_gc3_persistent(m, GC3_COLL_REDUCE_SCATTER, &gc3_reduce_scatter_block_persistent, sbuf, rbuf, 0,
                                   NULL, rcount, dt, op, gc3_runs, &a, request);
}
