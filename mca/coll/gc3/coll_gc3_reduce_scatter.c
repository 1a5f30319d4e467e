/* coll/gc3: MPI_Reduce_scatter, blocking and nonblocking, around one argument builder. gc3 runs it out of
 * place (MPI's in-place result goes to the start of the buffer, the program's to this rank's block: those
 * are passed on) on reduce_scatter's plans with per-rank counts (coll_gc3_vcall.c), when the datatype and
 * op are predefined ones it knows, on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host), and a plan agreed by all ranks exists (else, nonblocking, on gc3's host-staged
 * exchange); otherwise the previous module does (device buffers staged through host memory:
 * coll_gc3_fallback.c). coll_gc3_enable_reduce_scatter_block governs it. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (as gc3_allgatherv_args, coll_gc3_allgatherv.c): segment q of the input is rank q's
 * block, at the sum of the counts before it. */
static int gc3_reduce_scatter_args(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, const int *rcounts,
                                   struct ompi_datatype_t *dt, struct ompi_op_t *op, const char *name,
                                   mca_coll_gc3_args_t *a)
{
    const int n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm);
    size_t    all = 0, per = 0, big = 0;

    for (int q = 0; q < n; q++) {
        all += (size_t)rcounts[q];
        big = (size_t)rcounts[q] > big ? (size_t)rcounts[q] : big;
    }
    mca_coll_gc3_args_begin(a, GC3_COLL_REDUCE_SCATTER, -1, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, dt, all, 1, 0);
    mca_coll_gc3_args_buf(m, a, 1, rbuf, dt, (size_t)rcounts[me], 0, 1);
    if (sbuf == MPI_IN_PLACE) {
        return mca_coll_gc3_passed_on(m->comm, name, "in place (gc3 runs it out of place)");
    }
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_REDUCE_SCATTER, (long)big)) {
        return 0; /* (the counts are the same on every rank) */
    }
    if (!mca_coll_gc3_map_signature(dt, 1, &a->dtype, &per) || !mca_coll_gc3_map_op(op, &a->op) ||
        !gc3_op_valid(a->op, a->dtype)) {
        return mca_coll_gc3_passed_on(m->comm, name, "a user-defined or unsupported op or datatype");
    }
    a->count = big * per;
    a->bytes = mca_coll_gc3_args_bytes(a, n); /* (the route's key, coll_gc3_max_bytes) */
    if (mca_coll_gc3_segs_new(a, n) != NULL) {
        size_t at = 0;
        for (int q = 0; q < n; q++) {
            mca_coll_gc3_segs_set(a, 0, q, at, (size_t)rcounts[q], per, 1);
            at += (size_t)rcounts[q];
        }
        mca_coll_gc3_segs_set(a, 1, 0, 0, (size_t)rcounts[me], per, 1);
    }
    return 1;
}

int mca_coll_gc3_reduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int              ran =
        gc3_reduce_scatter_args(m, sbuf, rbuf, rcounts, dt, op, "reduce_scatter", &a) && mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc : mca_coll_gc3_reduce_scatter_staged(sbuf, rbuf, rcounts, dt, op, comm, module, NULL);
}

int mca_coll_gc3_ireduce_scatter(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                 struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                                 mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_reduce_scatter_args(m, sbuf, rbuf, rcounts, dt, op, "ireduce_scatter", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_reduce_scatter_staged(sbuf, rbuf, rcounts, dt, op, comm, module, request);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_reduce_scatter_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    mca_coll_gc3_args_t a;
    const int           taken =
        gc3_reduce_scatter_args(r->module, r->sbuf, r->rbuf, r->vec[2], r->rdtype, r->op, "reduce_scatter_init", &a) &&
        mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING) &&
        mca_coll_gc3_vstart_persistent(r->module, &a, r, rc);

    mca_coll_gc3_args_end(&a);
    return taken;
}

static int gc3_reduce_scatter_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_reduce_scatter(r->sbuf, r->rbuf, r->vec[2], r->rdtype, r->op, r->module->comm,
                                       &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_reduce_scatter_persistent = { gc3_reduce_scatter_start_on_plan,
                                                                    gc3_reduce_scatter_start_blocking };

int mca_coll_gc3_reduce_scatter_init(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                     struct ompi_op_t *op, struct ompi_communicator_t *comm, struct ompi_info_t *info,
                                     ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    const int *const       v[4] = { NULL, NULL, rcounts, NULL };
    /* every rank knows every count: the call's size too, so its plan is set up from init on */
    const int gc3_runs = gc3_reduce_scatter_args(m, sbuf, rbuf, rcounts, dt, op, "reduce_scatter_init", &a) &&
                         mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);
    int rc;

    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_reduce_scatter_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, reduce_scatter_init);
        }
        return m->prev_reduce_scatter_init(sbuf, rbuf, rcounts, dt, op, comm, info, request,
                                           m->prev_reduce_scatter_init_module);
    }
    rc = mca_coll_gc3_persistent(m, GC3_COLL_REDUCE_SCATTER, &gc3_reduce_scatter_persistent, sbuf, rbuf, 0, NULL, 0, dt,
                                 op, gc3_runs, &a, request);
    if (rc == OMPI_SUCCESS &&
        (rc = mca_coll_gc3_persistent_vectors(*request, ompi_comm_size(comm), v)) != OMPI_SUCCESS) {
        (void)ompi_request_free(request);
    }
    return rc;
}
