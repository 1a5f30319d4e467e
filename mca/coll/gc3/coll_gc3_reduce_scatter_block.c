/* coll/gc3: MPI_Reduce_scatter_block. gc3 runs the blocking call out of place (MPI's in-place
 * result goes to the start of the buffer, the program's to this rank's block: those are passed on)
 * when the datatype and op are predefined ones it knows, on device memory of this rank's GPU (or
 * host memory with coll_gc3_backend=host), and a plan agreed by all ranks exists; otherwise the
 * previous module does (device buffers staged through host memory). MPI_Ireduce_scatter_block is
 * the blocking call on device buffers (coll_gc3_fallback.c). */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

/* The argument builder (mca_coll_gc3_args_t). */
static int gc3_reduce_scatter_block_args(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int rcount,
                                         struct ompi_datatype_t *dt, struct ompi_op_t *op, mca_coll_gc3_args_t *a)
{
    size_t dsize = 0;

    memset(a, 0, sizeof(*a));
    a->backend =
        sbuf == MPI_IN_PLACE ? -1 : mca_coll_gc3_pick_backend(m, sbuf, rbuf, "reduce_scatter_block", &a->device);
    ompi_datatype_type_size(dt, &dsize);
    if (sbuf == MPI_IN_PLACE) {
        a->backend = -1;
        return mca_coll_gc3_passed_on(m->comm, "reduce_scatter_block", "in place (gc3 runs it out of place)");
    }
    if (!mca_coll_gc3_args_usable(m, a, "reduce_scatter_block", GC3_COLL_REDUCE_SCATTER, rcount)) {
        return 0;
    }
    if (!mca_coll_gc3_map_dtype(dt, &a->dtype) || !mca_coll_gc3_map_op(op, &a->op) || !gc3_op_valid(a->op, a->dtype)) {
        return mca_coll_gc3_passed_on(m->comm, "reduce_scatter_block", "a user-defined or unsupported op or datatype");
    }
    a->count = (size_t)rcount;
    a->bytes = (size_t)rcount * (size_t)ompi_comm_size(m->comm) * dsize;
    return 1;
}

int mca_coll_gc3_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dt,
                                      struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                      mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    int                    rc, inplace = sbuf == MPI_IN_PLACE;
    size_t                 all = (size_t)rcount * (size_t)ompi_comm_size(comm);
    mca_coll_gc3_args_t    a;
    mca_coll_gc3_stage_t   b[2] = { mca_coll_gc3_stage_buf((void *)sbuf, dt, all, 1, 0),
                                    mca_coll_gc3_stage_buf(rbuf, dt, inplace ? all : (size_t)rcount, inplace, 1) };

    if (m->prev_reduce_scatter_block == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, reduce_scatter_block);
    }
    if (gc3_reduce_scatter_block_args(m, sbuf, rbuf, rcount, dt, op, &a) &&
        mca_coll_gc3_try_run(m, GC3_COLL_REDUCE_SCATTER, &a, sbuf, rbuf, &rc)) {
        return rc;
    }
    rc = OMPI_SUCCESS;
    if (!mca_coll_gc3_device_call(MCA_COLL_GC3_BUFS_BOTH, sbuf, rbuf, -1, comm) ||
        !mca_coll_gc3_stage_call(comm, "reduce_scatter_block", &rc)) {
        return rc != OMPI_SUCCESS ? rc
                                  : m->prev_reduce_scatter_block(sbuf, rbuf, rcount, dt, op, comm,
                                                                 m->prev_reduce_scatter_block_module);
    }
    if ((rc = mca_coll_gc3_stage_in(b, 2)) == OMPI_SUCCESS) {
        rc = m->prev_reduce_scatter_block(b[0].base, b[1].base, rcount, dt, op, comm,
                                          m->prev_reduce_scatter_block_module);
    }
    b[1].count = (size_t)rcount; /* in place too, only this rank's block is the result */
    return mca_coll_gc3_stage_out(b, 2, rc);
}
