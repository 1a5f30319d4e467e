/* coll/gc3: MPI_Reduce, in its blocking, nonblocking and persistent forms around one argument
 * builder. gc3 takes it when the datatype and op are predefined ones it knows, on device memory of
 * this rank's GPU (or host memory with coll_gc3_backend=host); the receive buffer counts only at
 * the root (MPI lets the others pass anything: gc3 never looks at it there), and MPI_IN_PLACE at
 * the root is an in-place call. Until gc3 has a plan for it (mca_coll_gc3_entry_lookup says why),
 * the blocking call goes to the previous module (device buffers staged through host memory) and the
 * nonblocking and persistent ones run on gc3's host-staged exchange, completed by MPI progress. */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The receive buffer gc3 uses: the root's, none elsewhere. */
static void *gc3_reduce_rbuf(struct ompi_communicator_t *comm, void *rbuf, int root)
{
    return ompi_comm_rank(comm) == root ? rbuf : NULL;
}

/* The argument builder (mca_coll_gc3_args_t); name: the MPI call, for messages. */
static int gc3_reduce_args(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int count,
                           struct ompi_datatype_t *dt, struct ompi_op_t *op, int root, const char *name,
                           mca_coll_gc3_args_t *a)
{
    const int at_root = ompi_comm_rank(m->comm) == root;

    mca_coll_gc3_args_begin(a, GC3_COLL_REDUCE, root, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, dt, (size_t)count, 1, 0);
    /* a non-root's receive buffer is not significant: gc3 never looks at it there */
    mca_coll_gc3_args_buf(m, a, 1, at_root ? rbuf : NULL, at_root ? dt : NULL, (size_t)count, sbuf == MPI_IN_PLACE, 1);
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_REDUCE, count)) {
        return 0;
    }
    if (!mca_coll_gc3_args_reduction(m, a, name, dt, (size_t)count, op)) {
        return 0;
    }
    a->bytes = mca_coll_gc3_args_bytes(a, ompi_comm_size(m->comm));
    return 1;
}

/* The previous module's reduce with the device buffers copied through host memory. */
static int gc3_reduce_staged(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dt, struct ompi_op_t *op, int root, ompi_request_t **request)
{
    const int            me   = ompi_comm_rank(m->comm);
    mca_coll_gc3_stage_t b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, dt, (size_t)count, 1, 0),
                                  mca_coll_gc3_stage_buf(gc3_reduce_rbuf(m->comm, rbuf, root), dt, (size_t)count,
                                                         sbuf == MPI_IN_PLACE, 1) };
    int                  rc;
    ompi_request_t      *inner = NULL;

    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = request == NULL ? m->prev_reduce(b[0].base, me == root ? b[1].base : rbuf, count, dt, op, root, m->comm,
                                              m->prev_reduce_module)
                             : m->prev_ireduce(b[0].base, me == root ? b[1].base : rbuf, count, dt, op, root, m->comm,
                                               &inner, m->prev_ireduce_module);
    }
    return request == NULL ? mca_coll_gc3_stage_out(b, 2, rc) : mca_coll_gc3_chain(m, b, 2, rc, inner, request);
}

int mca_coll_gc3_reduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                        int root, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_reduce == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, reduce);
    }
    if (gc3_reduce_args(m, sbuf, rbuf, count, dt, op, root, "reduce", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, GC3_COLL_REDUCE, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a), &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    rc = OMPI_SUCCESS;
    if (mca_coll_gc3_stage_args(&a, comm, 0, &rc)) {
        return gc3_reduce_staged(m, sbuf, rbuf, count, dt, op, root, NULL);
    }
    return rc != OMPI_SUCCESS ? rc : m->prev_reduce(sbuf, rbuf, count, dt, op, root, comm, m->prev_reduce_module);
}

/* As MPI_Iallreduce (coll_gc3_allreduce.c): the pipeline, or the blocking call on device buffers
 * gc3 does not take, or the previous module. */
int mca_coll_gc3_ireduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                         int root, struct ompi_communicator_t *comm, ompi_request_t **request,
                         mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_reduce_args(m, sbuf, rbuf, count, dt, op, root, "ireduce", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, GC3_COLL_REDUCE, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                      request, NULL);
    }
    if (m->prev_ireduce == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, ireduce);
    }
    if (mca_coll_gc3_stage_args(&a, comm, 1, &rc)) {
        return gc3_reduce_staged(m, sbuf, rbuf, count, dt, op, root, request);
    }
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return m->prev_ireduce(sbuf, rbuf, count, dt, op, root, comm, request, m->prev_ireduce_module);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_reduce_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t     *req = &r->super;
    mca_coll_gc3_args_t a;

    if (!gc3_reduce_args(r->module, r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, r->root, "reduce", &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, GC3_COLL_REDUCE, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                 &req, r);
    return 1;
}

static int gc3_reduce_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_reduce(r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op, r->root, r->module->comm,
                               &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_reduce_persistent = { gc3_reduce_start_on_plan, gc3_reduce_start_blocking };

int mca_coll_gc3_reduce_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                             int root, struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    gc3_runs = gc3_reduce_args(m, sbuf, rbuf, count, dt, op, root, "reduce_init", &a) &&
                   mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_reduce_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, reduce_init);
        }
        return m->prev_reduce_init(sbuf, rbuf, count, dt, op, root, comm, info, request, m->prev_reduce_init_module);
    }
    return mca_coll_gc3_persistent(m, GC3_COLL_REDUCE, &gc3_reduce_persistent, sbuf, rbuf, 0, NULL, count, dt, op,
                                   gc3_runs, &a, request);
}
