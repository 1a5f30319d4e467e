/* coll/gc3: MPI_Scan and MPI_Exscan, blocking, nonblocking and persistent, around one argument builder
 * (the collective: GC3_COLL_SCAN or GC3_COLL_EXSCAN). gc3 runs them as MPI_Allreduce
 * (coll_gc3_allreduce.c): predefined datatypes and ops it knows, device memory of this rank's GPU (or host
 * memory with coll_gc3_backend=host), MPI_IN_PLACE included, a plan agreed by all ranks; otherwise the
 * previous module does (device buffers staged through host memory: coll_gc3_fallback.c). An exscan
 * never writes rank 0's receive buffer (MPI leaves it undefined). coll_gc3_enable_scan and
 * coll_gc3_enable_exscan govern them. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

static int gc3_scan_args(mca_coll_gc3_module_t *m, gc3_coll_t coll, const void *sbuf, void *rbuf, int count,
                         struct ompi_datatype_t *dtype, struct ompi_op_t *op, const char *name, mca_coll_gc3_args_t *a)
{
    mca_coll_gc3_args_begin(a, coll, -1, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, dtype, (size_t)count, 1, 0);
    /* (copied in where it is adapted: in place it is the input; exscan's rank 0 gets it back unchanged) */
    mca_coll_gc3_args_buf(m, a, 1, rbuf, dtype, (size_t)count, 1, 1);
    if (!mca_coll_gc3_args_usable(m, a, name, coll, count)) {
        return 0;
    }
    if (!mca_coll_gc3_args_reduction(m, a, name, dtype, (size_t)count, op)) {
        return 0;
    }
    a->bytes = mca_coll_gc3_args_bytes(a, ompi_comm_size(m->comm));
    return 1;
}

/* The previous module's (staged on device buffers), blocking (request NULL) or not */
static int gc3_scan_prev(mca_coll_gc3_module_t *m, gc3_coll_t coll, const void *sbuf, void *rbuf, int count,
                         struct ompi_datatype_t *dtype, struct ompi_op_t *op, ompi_request_t **request)
{
    return coll == GC3_COLL_SCAN
               ? mca_coll_gc3_scan_staged(sbuf, rbuf, count, dtype, op, m->comm, &m->super, request)
               : mca_coll_gc3_exscan_staged(sbuf, rbuf, count, dtype, op, m->comm, &m->super, request);
}

static int gc3_scan_blocking(mca_coll_gc3_module_t *m, gc3_coll_t coll, const void *sbuf, void *rbuf, int count,
                             struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    mca_coll_gc3_args_t a;
    int                 rc;

    if (gc3_scan_args(m, coll, sbuf, rbuf, count, dtype, op, coll == GC3_COLL_SCAN ? "scan" : "exscan", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_BLOCKING)) {
        if (mca_coll_gc3_try_run(m, coll, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a), &rc)) {
            return mca_coll_gc3_adapt_out(m, &a.ad, rc);
        }
        (void)mca_coll_gc3_adapt_out(m, &a.ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    }
    return gc3_scan_prev(m, coll, sbuf, rbuf, count, dtype, op, NULL);
}

static int gc3_scan_nonblocking(mca_coll_gc3_module_t *m, gc3_coll_t coll, const void *sbuf, void *rbuf, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op, ompi_request_t **request)
{
    mca_coll_gc3_args_t a;

    if (gc3_scan_args(m, coll, sbuf, rbuf, count, dtype, op, coll == GC3_COLL_SCAN ? "iscan" : "iexscan", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return mca_coll_gc3_try_start(m, coll, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a), request, NULL);
    }
    return gc3_scan_prev(m, coll, sbuf, rbuf, count, dtype, op, request);
}

int mca_coll_gc3_scan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                      struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    (void)comm;
    return gc3_scan_blocking((mca_coll_gc3_module_t *)module, GC3_COLL_SCAN, sbuf, rbuf, count, dtype, op);
}

int mca_coll_gc3_exscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                        struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    (void)comm;
    return gc3_scan_blocking((mca_coll_gc3_module_t *)module, GC3_COLL_EXSCAN, sbuf, rbuf, count, dtype, op);
}

int mca_coll_gc3_iscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                       struct ompi_communicator_t *comm, ompi_request_t **request, mca_coll_base_module_t *module)
{
    (void)comm;
    return gc3_scan_nonblocking((mca_coll_gc3_module_t *)module, GC3_COLL_SCAN, sbuf, rbuf, count, dtype, op, request);
}

int mca_coll_gc3_iexscan(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                         struct ompi_communicator_t *comm, ompi_request_t **request, mca_coll_base_module_t *module)
{
    (void)comm;
    return gc3_scan_nonblocking((mca_coll_gc3_module_t *)module, GC3_COLL_EXSCAN, sbuf, rbuf, count, dtype, op,
                                request);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_scan_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    ompi_request_t     *req  = &r->super;
    const gc3_coll_t    coll = (gc3_coll_t)r->coll;
    mca_coll_gc3_args_t a;

    if (!gc3_scan_args(r->module, coll, r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op,
                       coll == GC3_COLL_SCAN ? "scan_init" : "exscan_init", &a) ||
        !mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        return 0;
    }
    *rc = mca_coll_gc3_try_start(r->module, coll, &a, mca_coll_gc3_run_sbuf(&a), mca_coll_gc3_run_rbuf(&a), &req, r);
    return 1;
}

static int gc3_scan_start_blocking(mca_coll_gc3_request_t *r)
{
    return gc3_scan_blocking(r->module, (gc3_coll_t)r->coll, r->sbuf, r->rbuf, r->rcount, r->rdtype, r->op);
}

static const mca_coll_gc3_pcoll_t gc3_scan_persistent = { gc3_scan_start_on_plan, gc3_scan_start_blocking };

static int gc3_scan_init(mca_coll_gc3_module_t *m, gc3_coll_t coll, const void *sbuf, void *rbuf, int count,
                         struct ompi_datatype_t *dtype, struct ompi_op_t *op, struct ompi_info_t *info,
                         ompi_request_t **request)
{
    mca_coll_gc3_args_t a;
    const int           gc3_runs =
        gc3_scan_args(m, coll, sbuf, rbuf, count, dtype, op, coll == GC3_COLL_SCAN ? "scan_init" : "exscan_init", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);

    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (coll == GC3_COLL_SCAN) {
            return m->prev_scan_init == NULL ? MCA_COLL_GC3_NO_PREV(m->comm, scan_init)
                                             : m->prev_scan_init(sbuf, rbuf, count, dtype, op, m->comm, info, request,
                                                                 m->prev_scan_init_module);
        }
        return m->prev_exscan_init == NULL ? MCA_COLL_GC3_NO_PREV(m->comm, exscan_init)
                                           : m->prev_exscan_init(sbuf, rbuf, count, dtype, op, m->comm, info, request,
                                                                 m->prev_exscan_init_module);
    }
    return mca_coll_gc3_persistent(m, coll, &gc3_scan_persistent, sbuf, rbuf, 0, NULL, count, dtype, op, gc3_runs, &a,
                                   request);
}

int mca_coll_gc3_scan_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, struct ompi_info_t *info, ompi_request_t **request,
                           mca_coll_base_module_t *module)
{
    (void)comm;
    return gc3_scan_init((mca_coll_gc3_module_t *)module, GC3_COLL_SCAN, sbuf, rbuf, count, dtype, op, info, request);
}

int mca_coll_gc3_exscan_init(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                             struct ompi_op_t *op, struct ompi_communicator_t *comm, struct ompi_info_t *info,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    (void)comm;
    return gc3_scan_init((mca_coll_gc3_module_t *)module, GC3_COLL_EXSCAN, sbuf, rbuf, count, dtype, op, info, request);
}
