/* coll/gc3: MPI_Alltoallv, blocking and nonblocking, around one argument builder. gc3 runs it on
 * alltoall's plans with per-rank counts (coll_gc3_vcall.c), in place too, on device memory of this rank's
 * GPU (or host memory with coll_gc3_backend=host), when a plan agreed by all ranks exists (else,
 * nonblocking, on gc3's host-staged exchange); otherwise the previous module does (device buffers staged
 * through host memory: coll_gc3_fallback.c). coll_gc3_enable_alltoall governs it. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (as gc3_allgatherv_args, coll_gc3_allgatherv.c). A rank knows its row and column of
 * the matrix only: the ranks agree on the largest segment (a->vagree). In place, the receive side is both. */
static int gc3_alltoallv_args(mca_coll_gc3_module_t *m, const void *sbuf, const int *scounts, const int *sdispls,
                              struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts, const int *rdispls,
                              struct ompi_datatype_t *rdt, const char *name, mca_coll_gc3_args_t *a)
{
    const int n = ompi_comm_size(m->comm), inplace = sbuf == MPI_IN_PLACE;
    size_t    rsize = 0, ssize = 0;
    long      slo, rlo;

    if (inplace) {
        scounts = rcounts;
        sdispls = rdispls;
        sdt     = rdt;
    }
    ompi_datatype_type_size(rdt, &rsize);
    ompi_datatype_type_size(sdt, &ssize);
    mca_coll_gc3_args_begin(a, GC3_COLL_ALLTOALL, -1, name);
    slo = mca_coll_gc3_vbuf(m, a, 0, inplace ? MPI_IN_PLACE : sbuf, sdt, scounts, sdispls, n, 1, 0);
    /* copied in where it is adapted: the bytes between the segments come back as they were */
    rlo = mca_coll_gc3_vbuf(m, a, 1, rbuf, rdt, rcounts, rdispls, n, 1, 1);
    if (inplace) {
        slo = rlo;
    }
    if (!mca_coll_gc3_args_usable(m, a, name, GC3_COLL_ALLTOALL, 1)) {
        return 0;
    }
    a->dtype  = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op     = GC3_OP_SUM;
    a->vagree = 1;
    for (int q = 0; q < n; q++) {
        const uint64_t s = (uint64_t)scounts[q] * ssize, r = (uint64_t)rcounts[q] * rsize;
        a->vmine = s > a->vmine ? s : a->vmine;
        a->vmine = r > a->vmine ? r : a->vmine;
    }
    if (mca_coll_gc3_segs_new(a, n) != NULL) {
        for (int q = 0; q < n; q++) {
            mca_coll_gc3_segs_set(a, 0, q, (size_t)(sdispls[q] - slo), (size_t)scounts[q], ssize, 1);
            mca_coll_gc3_segs_set(a, 1, q, (size_t)(rdispls[q] - rlo), (size_t)rcounts[q], rsize, 1);
        }
    }
    return 1;
}

int mca_coll_gc3_alltoallv(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                           void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_alltoallv_args(m, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, "alltoallv", &a) &&
                    mca_coll_gc3_vrun(m, &a, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc
               : mca_coll_gc3_alltoallv_staged(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, module,
                                               NULL);
}

int mca_coll_gc3_ialltoallv(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                            void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                            struct ompi_communicator_t *comm, ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (gc3_alltoallv_args(m, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, "ialltoallv", &a) &&
        mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_NONBLOCKING)) {
        rc = mca_coll_gc3_vstart(m, &a, request);
        mca_coll_gc3_args_end(&a);
        return rc;
    }
    mca_coll_gc3_args_end(&a);
    return mca_coll_gc3_alltoallv_staged(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, module,
                                         request);
}

/* ---------------------------------------------------------------- persistent (coll_gc3_persistent.c) */

static int gc3_alltoallv_start_on_plan(mca_coll_gc3_request_t *r, int *rc)
{
    mca_coll_gc3_args_t a;
    const int taken = gc3_alltoallv_args(r->module, r->sbuf, r->vec[0], r->vec[1], r->sdtype, r->rbuf, r->vec[2],
                                         r->vec[3], r->rdtype, "alltoallv_init", &a) &&
                      mca_coll_gc3_route_take(r->module, &a, MCA_COLL_GC3_CALL_NONBLOCKING) &&
                      mca_coll_gc3_vstart_persistent(r->module, &a, r, rc);

    mca_coll_gc3_args_end(&a);
    return taken;
}

static int gc3_alltoallv_start_blocking(mca_coll_gc3_request_t *r)
{
    return mca_coll_gc3_alltoallv(r->sbuf, r->vec[0], r->vec[1], r->sdtype, r->rbuf, r->vec[2], r->vec[3], r->rdtype,
                                  r->module->comm, &r->module->super);
}

static const mca_coll_gc3_pcoll_t gc3_alltoallv_persistent = { gc3_alltoallv_start_on_plan,
                                                               gc3_alltoallv_start_blocking };

int mca_coll_gc3_alltoallv_init(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                                void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                                struct ompi_communicator_t *comm, struct ompi_info_t *info, ompi_request_t **request,
                                mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m       = (mca_coll_gc3_module_t *)module;
    const int              inplace = sbuf == MPI_IN_PLACE;
    mca_coll_gc3_args_t    a;
    const int *const       v[4] = { inplace ? NULL : scounts, inplace ? NULL : sdispls, rcounts, rdispls };
    int                    rc;

    if (gc3_alltoallv_args(m, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, "alltoallv_init", &a)) {
        (void)mca_coll_gc3_route_take(m, &a, MCA_COLL_GC3_CALL_INIT);
    }
    mca_coll_gc3_args_end(&a);
    if (mca_coll_gc3_init_passes(&a)) { /* host buffers gc3 does not run: the previous module's, untouched */
        if (m->prev_alltoallv_init == NULL) {
            return MCA_COLL_GC3_NO_PREV(comm, alltoallv_init);
        }
        return m->prev_alltoallv_init(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, info, request,
                                      m->prev_alltoallv_init_module);
    }
    /* each start builds the table and agrees on the largest segment (its plan is set up at the first) */
    rc = mca_coll_gc3_persistent(m, GC3_COLL_ALLTOALL, &gc3_alltoallv_persistent, sbuf, rbuf, 0, inplace ? NULL : sdt,
                                 0, rdt, NULL, 0, &a, request);
    if (rc == OMPI_SUCCESS &&
        (rc = mca_coll_gc3_persistent_vectors(*request, ompi_comm_size(comm), v)) != OMPI_SUCCESS) {
        (void)ompi_request_free(request);
    }
    return rc;
}
