/* coll/gc3: MPI_Allreduce. gc3 runs it when the datatype and op are predefined ones it knows,
 * the buffers are device memory of this rank's GPU (or host memory with coll_gc3_backend=host)
 * and a plan agreed by all ranks exists; otherwise the previous module does (device buffers
 * staged through host memory). */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

int mca_coll_gc3_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    gc3_dtype_t            gdt;
    gc3_op_t               gop;
    int                    device, backend, rc;
    size_t                 dsize = 0;

    if (m->prev_allreduce == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, "allreduce", &device);
    if (backend >= 0 && mca_coll_gc3_component.enable_allreduce && count > 0) {
        if (!mca_coll_gc3_map_dtype(dtype, &gdt) || !mca_coll_gc3_map_op(op, &gop) || !gc3_op_valid(gop, gdt)) {
            opal_output_verbose(2, mca_coll_gc3_component.output,
                                "coll:gc3: allreduce with datatype %s and a user-defined or unsupported op or "
                                "datatype: %s", dtype->name, device ? "not run by gc3" : "passed on");
        } else {
            ompi_datatype_type_size(dtype, &dsize);
            if (mca_coll_gc3_try_run(m, MCA_COLL_GC3_ALLREDUCE, (gc3_backend_t)backend, sbuf, rbuf, (size_t)count, gdt,
                                     gop, (size_t)count * dsize, &rc)) {
                return rc;
            }
        }
    }
    rc = OMPI_SUCCESS;
    if (device && mca_coll_gc3_stage_call(comm, "allreduce", &rc)) {
        return mca_coll_gc3_stage_allreduce(m, sbuf, rbuf, count, dtype, op);
    }
    return rc != OMPI_SUCCESS ? rc : m->prev_allreduce(sbuf, rbuf, count, dtype, op, comm, m->prev_allreduce_module);
}
