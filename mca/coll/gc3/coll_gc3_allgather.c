/* coll/gc3: MPI_Allgather. gc3 runs the blocking call (as bytes) when both datatypes are
 * contiguous with the same size per rank, on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host), and a plan agreed by all ranks exists; otherwise the previous module does
 * (device buffers staged through host memory). MPI_Iallgather is the blocking call on device
 * buffers (coll_gc3_fallback.c). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t). */
static int gc3_allgather_args(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdt,
                              void *rbuf, int rcount, struct ompi_datatype_t *rdt, mca_coll_gc3_args_t *a)
{
    size_t n = (size_t)ompi_comm_size(m->comm), rsize = 0, ssize = 0;
    int    inplace = sbuf == MPI_IN_PLACE;

    memset(a, 0, sizeof(*a));
    a->backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, "allgather", &a->device);
    ompi_datatype_type_size(rdt, &rsize);
    ssize = inplace ? rsize * (size_t)rcount : 0;
    if (!inplace) {
        ompi_datatype_type_size(sdt, &ssize);
        ssize *= (size_t)scount;
    }
    if (!mca_coll_gc3_args_usable(m, a, "allgather", GC3_COLL_ALLGATHER, rcount)) {
        return 0;
    }
    if (!ompi_datatype_is_contiguous_memory_layout(rdt, rcount * (int)n) ||
        !(inplace || ompi_datatype_is_contiguous_memory_layout(sdt, scount)) || ssize != rsize * (size_t)rcount) {
        return mca_coll_gc3_passed_on(m->comm, "allgather",
                                      "non-contiguous datatypes, or send and receive sizes differ");
    }
    a->dtype = GC3_DT_UINT8; /* moved as bytes */
    a->op    = GC3_OP_SUM;
    a->count = ssize;
    a->bytes = ssize * n;
    return 1;
}

int mca_coll_gc3_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                           struct ompi_datatype_t *rdt, struct ompi_communicator_t *comm,
                           mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    size_t                 n = (size_t)ompi_comm_size(comm);
    int                    rc;
    mca_coll_gc3_args_t    a;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, sdt, (size_t)scount, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, rdt, (size_t)rcount * n, sbuf == MPI_IN_PLACE, 1) };

    if (m->prev_allgather == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, allgather);
    }
    if (gc3_allgather_args(m, sbuf, scount, sdt, rbuf, rcount, rdt, &a) &&
        mca_coll_gc3_try_run(m, GC3_COLL_ALLGATHER, &a, sbuf, rbuf, &rc)) {
        return rc;
    }
    rc = OMPI_SUCCESS;
    if (!a.device || !mca_coll_gc3_stage_call(comm, "allgather", &rc)) {
        return rc != OMPI_SUCCESS
                   ? rc
                   : m->prev_allgather(sbuf, scount, sdt, rbuf, rcount, rdt, comm, m->prev_allgather_module);
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = m->prev_allgather(b[0].base, scount, sdt, b[1].base, rcount, rdt, comm, m->prev_allgather_module);
    }
    return mca_coll_gc3_stage_out(b, 2, rc);
}
