/* coll/gc3: MPI_Allgatherv, blocking and nonblocking, around one argument builder. gc3 runs it on
 * allgather's plans with per-rank counts (coll_gc3_vcall.c) when its datatypes' sizes agree, on device
 * memory of this rank's GPU (or host memory with coll_gc3_backend=host), and a plan agreed by all ranks
 * exists (else, nonblocking, on gc3's host-staged exchange); otherwise the previous module does (device
 * buffers staged through host memory: coll_gc3_fallback.c). coll_gc3_enable_allgather governs it. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t, with this rank's table): 1 when gc3 may run it, 0 when every rank
 * passes it on. Every rank knows every count: the largest segment is the call's count. */
static int gc3_allgatherv_args(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdt,
                               void *rbuf, const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                               const char *name, mca_coll_gc3_args_t *a)
{
    const int n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm), inplace = sbuf == MPI_IN_PLACE;
    size_t    rsize = 0, ssize = 0;
    long      lo;

    ompi_datatype_type_size(rdt, &rsize);
    mca_coll_gc3_args_begin(a, GC3_COLL_ALLGATHER, -1, name);
    mca_coll_gc3_args_buf(m, a, 0, sbuf, sdt, (size_t)scount, 1, 0);
    /* copied in where it is adapted: the bytes between the segments come back as they were */
    lo = mca_coll_gc3_vbuf(m, a, 1, rbuf, rdt, rcounts, displs, n, 1, 1);
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_ALLGATHER, 1)) {
        return 0;
    }
    if (!inplace) {
        ompi_datatype_type_size(sdt, &ssize);
        if (ssize * (size_t)scount != rsize * (size_t)rcounts[me]) {
            return mca_coll_gc3_passed_on(m->comm, name, "send and receive sizes differ");
        }
    }
    a->dtype = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op    = GC3_OP_SUM;
    for (int q = 0; q < n; q++) {
        a->count = (size_t)rcounts[q] * rsize > a->count ? (size_t)rcounts[q] * rsize : a->count;
    }
    a->bytes = mca_coll_gc3_args_bytes(a, n); /* (the route's key, coll_gc3_max_bytes) */
    if (mca_coll_gc3_segs_new(a, n) != NULL) {
        mca_coll_gc3_segs_set(a, 0, 0, 0, (size_t)rcounts[me], rsize, 1);
        for (int q = 0; q < n; q++) {
            mca_coll_gc3_segs_set(a, 1, q, (size_t)(displs[q] - lo), (size_t)rcounts[q], rsize, 1);
        }
    }
    return 1;
}

int mca_coll_gc3_allgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                            const int *displs, struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                            mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_allgatherv_args(m, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, "allgatherv", &a) &&
                    mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc : mca_coll_gc3_allgatherv_staged(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, module, NULL);
}

int mca_coll_gc3_iallgatherv(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts,
                             const int *displs, struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                             ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_allgatherv_args(m, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, "iallgatherv", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_allgatherv_staged(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, module, request);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_allgatherv_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    mca_coll_gc3_args_t a;
    const int taken = gc3_allgatherv_args(r->module, r->sbuf, r->scount, r->sdtype, r->rbuf, r->vec[2], r->vec[3],
                                          r->rdtype, "allgatherv_init", &a) &&
                      mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING) &&
                      mca_coll_gc3_vstart_persistent(r->module, &a, r, rc);

    mca_coll_gc3_args_end(&a);
    return taken;
}

static int gc3_allgatherv_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_allgatherv(r->sbuf, r->scount, r->sdtype, r->rbuf, r->vec[2], r->vec[3], r->rdtype,
                                   r->module->comm, &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_allgatherv_persistent = { gc3_allgatherv_start_on_plan,
                                                                gc3_allgatherv_start_blocking };

int mca_coll_gc3_allgatherv_init(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                 const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                 struct ompi_communicator_t *comm, struct ompi_info_t *info, ompi_request_t **request,
                                 mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    const int *const       v[4] = { NULL, NULL, rcounts, displs };
    /* every rank knows every count: the call's size too, so its plan is set up from init on */
    const int gc3_runs = gc3_allgatherv_args(m, sbuf, scount, sdt, rbuf, rcounts, displs, rdt, "allgatherv_init", &a) &&
                         mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);
    int rc;

    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_allgatherv_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, allgatherv_init);
        }
        return m->prev_allgatherv_init(sbuf, scount, sdt, rbuf, rcounts, displs, rdt, comm, info, request,
                                       m->prev_allgatherv_init_module);
    }
    /* each start builds the table */
    rc = mca_coll_gc3_persistent(m, GC3_COLL_ALLGATHER, &gc3_allgatherv_persistent, sbuf, rbuf, scount,
                                 sbuf == MPI_IN_PLACE ? NULL : sdt, 0, rdt, NULL, gc3_runs, &a, request);
    if (rc == OMPI_SUCCESS &&
        (rc = mca_coll_gc3_persistent_vectors(*request, ompi_comm_size(comm), v)) != OMPI_SUCCESS) {
        (void)ompi_request_free(request);
    }
    return rc;
}
