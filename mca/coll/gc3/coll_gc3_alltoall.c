/* coll/gc3: MPI_Alltoall. gc3 runs it (as bytes) when both datatypes are contiguous with the
 * same size per call, on device memory of this rank's GPU (or host memory with
 * coll_gc3_backend=host); otherwise the previous module does (device buffers staged). */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

int mca_coll_gc3_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf, int rcount,
                          struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                          mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    device, backend, rc;
    size_t                 ssize = 0, rsize = 0;

    if (m->prev_alltoall == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, "alltoall", &device);
    ompi_datatype_type_size(rdtype, &rsize);
    if (sbuf != MPI_IN_PLACE) {
        ompi_datatype_type_size(sdtype, &ssize);
    } else {
        ssize  = rsize;
        scount = rcount;
        sdtype = rdtype;
    }
    if (backend >= 0 && mca_coll_gc3_component.enable_alltoall && rcount > 0) {
        if (!ompi_datatype_is_contiguous_memory_layout(sdtype, scount) ||
            !ompi_datatype_is_contiguous_memory_layout(rdtype, rcount) || ssize * (size_t)scount != rsize * (size_t)rcount) {
            opal_output_verbose(2, mca_coll_gc3_component.output,
                                "coll:gc3: alltoall with non-contiguous or mismatched datatypes: %s",
                                device ? "not run by gc3" : "passed on");
        } else {
            size_t bytes = rsize * (size_t)rcount;
            if (mca_coll_gc3_try_run(m, MCA_COLL_GC3_ALLTOALL, (gc3_backend_t)backend, sbuf, rbuf, bytes, GC3_DT_UINT8,
                                     GC3_OP_SUM, bytes * (size_t)ompi_comm_size(comm), &rc)) {
                return rc;
            }
        }
    }
    rc = OMPI_SUCCESS;
    if (device && mca_coll_gc3_stage_call(comm, "alltoall", &rc)) {
        return mca_coll_gc3_stage_alltoall(m, sbuf, scount, sdtype, rbuf, rcount, rdtype);
    }
    return rc != OMPI_SUCCESS ? rc
                              : m->prev_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_alltoall_module);
}
