/* coll/gc3: MPI_Alltoall. gc3 runs it (as bytes) when both datatypes are contiguous with the
 * same size per call, on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host); otherwise the previous module does (device buffers staged). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

int mca_coll_gc3_alltoall_args(mca_coll_gc3_module_t *m, const void *sbuf, int *scount, struct ompi_datatype_t **sdtype,
                               void *rbuf, int rcount, struct ompi_datatype_t *rdtype, const char *name,
                               mca_coll_gc3_args_t *a)
{
    size_t ssize = 0, rsize = 0;

    memset(a, 0, sizeof(*a));
    a->backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, name, &a->device);
    if (sbuf == MPI_IN_PLACE) {
        *scount = rcount;
        *sdtype = rdtype;
    }
    if (a->backend < 0 || !mca_coll_gc3_component.enable_alltoall || rcount <= 0) {
        return 0;
    }
    ompi_datatype_type_size(rdtype, &rsize);
    ompi_datatype_type_size(*sdtype, &ssize);
    if (!ompi_datatype_is_contiguous_memory_layout(*sdtype, *scount) ||
        !ompi_datatype_is_contiguous_memory_layout(rdtype, rcount) || ssize * (size_t)*scount != rsize * (size_t)rcount) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: %s with non-contiguous or mismatched datatypes: %s", name,
                            a->device ? "not run by gc3" : "passed on");
        return 0;
    }
    a->dtype = GC3_DT_UINT8; /* moved as bytes */
    a->op    = GC3_OP_SUM;
    a->count = rsize * (size_t)rcount;
    a->bytes = a->count * (size_t)ompi_comm_size(m->comm);
    return 1;
}

int mca_coll_gc3_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_alltoall == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (mca_coll_gc3_alltoall_args(m, sbuf, &scount, &sdtype, rbuf, rcount, rdtype, "alltoall", &a) &&
        mca_coll_gc3_try_run(m, GC3_COLL_ALLTOALL, (gc3_backend_t)a.backend, sbuf, rbuf, a.count, a.dtype, a.op,
                             a.bytes, &rc)) {
        return rc;
    }
    rc = OMPI_SUCCESS;
    if (a.device && mca_coll_gc3_stage_call(comm, "alltoall", &rc)) {
        return mca_coll_gc3_stage_alltoall(m, sbuf, scount, sdtype, rbuf, rcount, rdtype);
    }
    return rc != OMPI_SUCCESS ? rc
                              : m->prev_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_alltoall_module);
}
