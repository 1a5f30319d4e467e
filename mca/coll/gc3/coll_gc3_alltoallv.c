/* coll/gc3: MPI_Alltoallv. gc3 runs the blocking call on alltoall's plans with per-rank counts
 * (coll_gc3_vcall.c), in place too, on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host), when a plan agreed by all ranks exists; otherwise the previous module does
 * (device buffers staged through host memory, as the nonblocking form is: coll_gc3_fallback.c).
 * coll_gc3_enable_alltoall governs it. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

/* The end of the segments (elements) of n counts at displacements; *neg set when a displacement is negative. */
static size_t gc3_vend(const int *counts, const int *displs, int n, int *neg)
{
    size_t end = 0;
    for (int q = 0; q < n; q++) {
        *neg |= displs[q] < 0;
        if (displs[q] >= 0 && counts[q] > 0 && (size_t)displs[q] + (size_t)counts[q] > end) {
            end = (size_t)displs[q] + (size_t)counts[q];
        }
    }
    return end;
}

/* The argument builder (as gc3_allgatherv_args, coll_gc3_allgatherv.c). In place, the receive side is both. */
static int gc3_alltoallv_args(mca_coll_gc3_module_t *m, const void *sbuf, const int *scounts, const int *sdispls,
                              struct ompi_datatype_t *sdt, void *rbuf, const int *rcounts, const int *rdispls,
                              struct ompi_datatype_t *rdt, mca_coll_gc3_args_t *a, uint64_t *mine, const char **veto)
{
    const int n = ompi_comm_size(m->comm), inplace = sbuf == MPI_IN_PLACE;
    size_t    rsize = 0, ssize = 0, send_end, recv_end;
    int       neg = 0;

    if (inplace) {
        scounts = rcounts;
        sdispls = rdispls;
        sdt     = rdt;
    }
    ompi_datatype_type_size(rdt, &rsize);
    ompi_datatype_type_size(sdt, &ssize);
    send_end = gc3_vend(scounts, sdispls, n, &neg);
    recv_end = gc3_vend(rcounts, rdispls, n, &neg);
    *mine    = 0;
    *veto    = neg ? "a negative displacement" : NULL;
    for (int q = 0; q < n; q++) {
        const uint64_t s = (uint64_t)scounts[q] * ssize, r = (uint64_t)rcounts[q] * rsize;
        *mine = s > *mine ? s : *mine;
        *mine = r > *mine ? r : *mine;
    }
    mca_coll_gc3_args_begin(a, GC3_COLL_ALLTOALL, -1, "alltoallv");
    mca_coll_gc3_args_buf(m, a, 0, inplace ? MPI_IN_PLACE : sbuf, sdt, send_end, 1, 0);
    /* copied in where it is adapted: the bytes between the segments come back as they were */
    mca_coll_gc3_args_buf(m, a, 1, rbuf, rdt, recv_end, 1, 1);
    if (!mca_coll_gc3_args_usable(m, a, "alltoallv", GC3_COLL_ALLTOALL, 1)) {
        return 0;
    }
    a->dtype = GC3_DT_UINT8; /* moved as bytes, whatever the layout (adapted per rank) */
    a->op    = GC3_OP_SUM;
    if (*veto == NULL && mca_coll_gc3_segs_new(a, n) != NULL) {
        for (int q = 0; q < n; q++) {
            mca_coll_gc3_segs_set(a, 0, q, (size_t)sdispls[q], (size_t)scounts[q], ssize, 1);
            mca_coll_gc3_segs_set(a, 1, q, (size_t)rdispls[q], (size_t)rcounts[q], rsize, 1);
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
    const char            *veto;
    uint64_t               mine;
    int                    rc = OMPI_SUCCESS;
    const int ran = gc3_alltoallv_args(m, sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, &a, &mine, &veto) &&
                    mca_coll_gc3_vrun(m, &a, mine, veto, &rc);

    mca_coll_gc3_args_end(&a);
    return ran ? rc
               : mca_coll_gc3_alltoallv_staged(sbuf, scounts, sdispls, sdt, rbuf, rcounts, rdispls, rdt, comm, module);
}
