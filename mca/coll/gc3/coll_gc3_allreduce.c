/* coll/gc3: MPI_Allreduce. gc3 runs it when the datatype and op are predefined ones it knows,
 * the buffers are device memory of this rank's GPU (or host memory with coll_gc3_backend=host)
 * and a plan agreed by all ranks exists; otherwise the previous module does (device buffers
 * staged through host memory). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

int mca_coll_gc3_allreduce_args(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int count,
                                struct ompi_datatype_t *dtype, struct ompi_op_t *op, const char *name,
                                mca_coll_gc3_args_t *a)
{
    size_t dsize = 0;

    memset(a, 0, sizeof(*a));
    a->backend = mca_coll_gc3_pick_backend(m, sbuf, rbuf, name, &a->device);
    if (a->backend < 0 || !mca_coll_gc3_component.enable_allreduce || count <= 0) {
        return 0;
    }
    if (!mca_coll_gc3_map_dtype(dtype, &a->dtype) || !mca_coll_gc3_map_op(op, &a->op) || !gc3_op_valid(a->op, a->dtype)) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: %s with datatype %s and a user-defined or unsupported op or datatype: %s", name,
                            dtype->name, a->device ? "not run by gc3" : "passed on");
        return 0;
    }
    ompi_datatype_type_size(dtype, &dsize);
    a->count = (size_t)count;
    a->bytes = (size_t)count * dsize;
    return 1;
}

int mca_coll_gc3_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype, struct ompi_op_t *op,
                           struct ompi_communicator_t *comm, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (m->prev_allreduce == NULL) {
        return OMPI_ERR_NOT_SUPPORTED;
    }
    if (mca_coll_gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "allreduce", &a) &&
        mca_coll_gc3_try_run(m, GC3_COLL_ALLREDUCE, (gc3_backend_t)a.backend, sbuf, rbuf, a.count, a.dtype, a.op,
                             a.bytes, &rc)) {
        return rc;
    }
    rc = OMPI_SUCCESS;
    if (a.device && mca_coll_gc3_stage_call(comm, "allreduce", &rc)) {
        return mca_coll_gc3_stage_allreduce(m, sbuf, rbuf, count, dtype, op);
    }
    return rc != OMPI_SUCCESS ? rc : m->prev_allreduce(sbuf, rbuf, count, dtype, op, comm, m->prev_allreduce_module);
}
