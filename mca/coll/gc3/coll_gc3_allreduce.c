/* coll/gc3: MPI_Allreduce, in its blocking, nonblocking and persistent forms around one argument
 * builder. gc3 runs it when the datatype and op are predefined ones it knows, the buffers are device
 * memory of this rank's GPU (or host memory with coll_gc3_backend=host) and a plan agreed by all
 * ranks exists; otherwise the previous module does (device buffers staged through host memory). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t); name: the MPI call, for messages. gc3 may take the
 * call when its type signature is n of a predefined datatype gc3 computes and its op is predefined:
 * what every rank shares. */
static int gc3_allreduce_args(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int count,
                              struct ompi_datatype_t *dtype, struct ompi_op_t *op, const char *name,
                              mca_coll_gc3_args_t *a)
{
    mca_coll_gc3_args_begin(a, GC3_COLL_ALLREDUCE, -1, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, dtype, (size_t)count, 1, 0);
    mca_coll_gc3_args_buf(m, a, 1, rbuf, dtype, (size_t)count, sbuf == MPI_IN_PLACE, 1);
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_ALLREDUCE, count)) {
        return 0;
    }
    if (!mca_coll_gc3_args_reduction(m, a, name, dtype, (size_t)count, op)) {
        return 0;
    }
    a->bytes = mca_coll_gc3_args_bytes(a, ompi_comm_size(m->comm));
    return 1;
}

/* The previous module's allreduce with the device buffers copied through host memory. */
static int gc3_allreduce_staged(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op, ompi_request_t **request)
{
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, dtype, (size_t)count, 1, 0),
                                  mca_coll_gc3_stage_buf(rbuf, dtype, (size_t)count, sbuf == MPI_IN_PLACE, 1) };
    int                  rc;
    ompi_request_t      *inner = NULL;

    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = request == NULL
                 ? m->prev_allreduce(b[0].base, b[1].base, count, dtype, op, m->comm, m->prev_allreduce_module)
                 : m->prev_iallreduce(b[0].base, b[1].base, count, dtype, op, m->comm, &inner,
                                      m->prev_iallreduce_module);
    }
    return request == NULL ? mca_coll_gc3_stage_out(b, 2, rc) : mca_coll_gc3_chain(m, b, 2, rc, inner, request);
}

int mca_coll_gc3_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_allreduce == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "allreduce", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, GC3_COLL_ALLREDUCE, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                 &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    rc = OMPI_SUCCESS;
    if (mca_coll_gc3_stage_args(&a, comm, 0, &rc)) {
        return gc3_allreduce_staged(m, sbuf, rbuf, count, dtype, op, NULL);
    }
    return rc != OMPI_SUCCESS ? rc : m->prev_allreduce(sbuf, rbuf, count, dtype, op, comm, m->prev_allreduce_module);
}

/* Nonblocking calls gc3 takes go into the communicator's pipeline (coll_gc3_request.c): started
 * without waiting for another rank, completed by Open MPI's progress. Device buffers it does not
 * take (an op or datatype it does not run, managed memory, ...) must not reach the previous
 * (non-CUDA-aware) module: gc3 runs the blocking call (staged, per coll_gc3_fallback) and returns a
 * completed request. */
int mca_coll_gc3_iallreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                            struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "iallreduce", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, GC3_COLL_ALLREDUCE, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                      request, NULL);
    }
    if (m->prev_iallreduce == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, iallreduce);
    }
    if (mca_coll_gc3_stage_args(&a, comm, 1, &rc)) {
        return gc3_allreduce_staged(m, sbuf, rbuf, count, dtype, op, request);
    }
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return m->prev_iallreduce(sbuf, rbuf, count, dtype, op, comm, request, m->prev_iallreduce_module);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_allreduce_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t     *req = &r->super;
    mca_coll_gc3_args_t a;

    if (!gc3_allreduce_args(r->module, r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, "allreduce", &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, GC3_COLL_ALLREDUCE, &a, mca_coll_gc3_run_sbuf(&a),
                                 mca_coll_gc3_run_rbuf(&a), &req, r);
    return 1;
}

static int gc3_allreduce_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_allreduce(r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, r->module->comm, &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_allreduce_persistent = { gc3_allreduce_start_on_plan,
                                                               gc3_allreduce_start_blocking };

int mca_coll_gc3_allreduce_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                                struct ompi_op_t *op, struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    gc3_runs = gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "allreduce_init", &a) &&
                   mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_allreduce_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, allreduce_init);
        }
        return m->prev_allreduce_init(sbuf, rbuf, count, dtype, op, comm, info, request, m->prev_allreduce_init_module);
    }
    return mca_coll_gc3_persistent(m, GC3_COLL_ALLREDUCE, &gc3_allreduce_persistent, sbuf, rbuf, 0, NULL, count, dtype,
                                   op, gc3_runs, &a, request);
}
