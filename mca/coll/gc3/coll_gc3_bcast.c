/* coll/gc3: MPI_Bcast, in its blocking, nonblocking and persistent forms around one argument
 * builder. gc3 takes it (as bytes, in place: the one buffer is the root's input and every rank's
 * output) when the datatype is contiguous, on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host). Until gc3 has a plan for it (mca_coll_gc3_entry_lookup says why), the
 * blocking call goes to the previous module (device buffers staged through host memory) and the
 * nonblocking and persistent ones run on gc3's host-staged exchange, completed by MPI progress. */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t); name: the MPI call, for messages. */
static int gc3_bcast_args(mca_coll_gc3_module_t *m, void *buf, int count, struct ompi_datatype_t *dt, int root,
                          const char *name, mca_coll_gc3_args_t *a)
{
    const int me    = ompi_comm_rank(m->comm);
    size_t    dsize = 0;

    mca_coll_gc3_args_begin(a, GC3_COLL_BCAST, root, name);
    mca_coll_gc3_args_buf(m, a, 0, MPI_IN_PLACE, NULL, 0, 0, 0);
    mca_coll_gc3_args_buf(m, a, 1, buf, dt, (size_t)count, me == root, me != root);
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_BCAST, count)) {
        return 0;
    }
    ompi_datatype_type_size(dt, &dsize);
    a->dtype = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op    = GC3_OP_SUM;
    a->count = (size_t)count * dsize;
    a->bytes = mca_coll_gc3_args_bytes(a, ompi_comm_size(m->comm));
    return 1;
}

/* The previous module's bcast with the device buffer copied through host memory. */
static int gc3_bcast_staged(mca_coll_gc3_module_t *m, void *buf, int count, struct ompi_datatype_t *dt, int root,
                            ompi_request_t **request)
{
    const int            me   = ompi_comm_rank(m->comm);
    mca_coll_gc3_stage_t b[1] = { mca_coll_gc3_stage_buf(buf, dt, (size_t)count, me == root, me != root) };
    int                  rc;
    ompi_request_t      *inner = NULL;

    if ((rc = mca_coll_gc3_stage_in(b, 1)) == OMPI_SUCCESS) {
        rc = request == NULL ? m->prev_bcast(b[0].base, count, dt, root, m->comm, m->prev_bcast_module)
                             : m->prev_ibcast(b[0].base, count, dt, root, m->comm, &inner, m->prev_ibcast_module);
    }
    return request == NULL ? mca_coll_gc3_stage_out(b, 1, rc) : mca_coll_gc3_chain(m, b, 1, rc, inner, request);
}

int mca_coll_gc3_bcast(void *buf, int count, struct ompi_datatype_t *dt, int root, struct ompi_communicator_t *comm,
                       mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_bcast == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, bcast);
    }
    if (gc3_bcast_args(m, buf, count, dt, root, "bcast", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, GC3_COLL_BCAST, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a), &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    rc = OMPI_SUCCESS;
    if (mca_coll_gc3_stage_args(&a, comm, 0, &rc)) {
        return gc3_bcast_staged(m, buf, count, dt, root, NULL);
    }
    return rc != OMPI_SUCCESS ? rc : m->prev_bcast(buf, count, dt, root, comm, m->prev_bcast_module);
}

/* As MPI_Iallreduce (coll_gc3_allreduce.c): the pipeline, or the blocking call on device buffers
 * gc3 does not take, or the previous module. */
int mca_coll_gc3_ibcast(void *buf, int count, struct ompi_datatype_t *dt, int root, struct ompi_communicator_t *comm,
                        ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_bcast_args(m, buf, count, dt, root, "ibcast", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, GC3_COLL_BCAST, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                      request, NULL);
    }
    if (m->prev_ibcast == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, ibcast);
    }
    if (mca_coll_gc3_stage_args(&a, comm, 1, &rc)) {
        return gc3_bcast_staged(m, buf, count, dt, root, request);
    }
    if (rc != OMPI_SUCCESS) {
        return rc;
    }
    return m->prev_ibcast(buf, count, dt, root, comm, request, m->prev_ibcast_module);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_bcast_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t     *req = &r->super;
    mca_coll_gc3_args_t a;

    if (!gc3_bcast_args(r->module, r->rbuf, r->rcount, r->rdtype, r->root, "bcast", &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, GC3_COLL_BCAST, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a),
                                 &req, r);
    return 1;
}

static int gc3_bcast_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_bcast(r->rbuf, r->rcount, r->rdtype, r->root, r->module->comm, &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_bcast_persistent = { gc3_bcast_start_on_plan, gc3_bcast_start_blocking };

int mca_coll_gc3_bcast_init(void *buf, int count, struct ompi_datatype_t *dt, int root,
                            struct ompi_communicator_t *comm, struct ompi_info_t *info, ompi_request_t **request,
                            mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    gc3_runs = gc3_bcast_args(m, buf, count, dt, root, "bcast_init", &a) &&
                   mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_bcast_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, bcast_init);
        }
        return m->prev_bcast_init(buf, count, dt, root, comm, info, request, m->prev_bcast_init_module);
    }
    return mca_coll_gc3_persistent(m, GC3_COLL_BCAST, &gc3_bcast_persistent, MPI_IN_PLACE, buf, 0, NULL, count, dt,
                                   NULL, gc3_runs, &a, request);
}
