/* coll/gc3: pass a call on with its device buffers copied through host memory (the previous
 * module is not CUDA-aware: given a device pointer it would crash). Correct, not fast. */
#include <stdlib.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"


int mca_coll_gc3_is_device(const void *ptr)
{
    int dev;
    if (ptr == NULL || ptr == MPI_IN_PLACE) {
        return 0;
    }
    if (mca_coll_gc3_component.stage_host) {
        return 1; /* test feature: host memory plays the device */
    }
    return mca_coll_gc3_classify(ptr, &dev) != MCA_COLL_GC3_MEM_HOST;
}

int mca_coll_gc3_stage_call(struct ompi_communicator_t *comm, const char *coll, int *rc_p)
{
    switch (mca_coll_gc3_component.fallback) {
    case MCA_COLL_GC3_FALLBACK_PASS:
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: %s on device buffers: passed on as they are (coll_gc3_fallback=pass)", coll);
        *rc_p = OMPI_SUCCESS;
        return 0;
    case MCA_COLL_GC3_FALLBACK_ERROR:
        opal_output(0, "coll:gc3: comm %s rank %d: %s on device buffers is not run by gc3 (set coll_gc3_verbose=2 "
                    "for why) and coll_gc3_fallback=error: the call fails",
                    comm->c_name, ompi_comm_rank(comm), coll);
        *rc_p = MPI_ERR_UNSUPPORTED_OPERATION; /* an MPI class: Open MPI returns it as it is */
        return 0;
    default:
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: %s on device buffers: staged through host memory", coll);
        *rc_p = OMPI_SUCCESS;
        return 1;
    }
}

/* Bytes spanned by count elements of dt, and where they start relative to the pointer. */
static size_t gc3_stage_span(struct ompi_datatype_t *dt, size_t count, ptrdiff_t *gap_p)
{
    ptrdiff_t lb, extent, true_lb, true_extent;
    ompi_datatype_get_extent(dt, &lb, &extent);
    ompi_datatype_get_true_extent(dt, &true_lb, &true_extent);
    *gap_p = true_lb;
    return count == 0 ? 0 : (size_t)true_extent + (count - 1) * (size_t)extent;
}

int mca_coll_gc3_stage_in(mca_coll_gc3_stage_t *s, void *user, struct ompi_datatype_t *dt, size_t count, int copy_in)
{
    ptrdiff_t gap;
    size_t    span = gc3_stage_span(dt, count, &gap);

    s->user = user;
    s->mem  = NULL;
    s->base = user;
    if (!mca_coll_gc3_is_device(user)) {
        return OMPI_SUCCESS;
    }
    s->mem = malloc(span + 1);
    if (s->mem == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    s->base = s->mem - gap;
    /* a datatype with holes is copied in even for an output: copying the span back must leave
     * the holes as they were (found with MPI_Allgatherv, whose basic algorithm broadcasts an
     * indexed type) */
    if (!copy_in && !ompi_datatype_is_contiguous_memory_layout(dt, (int32_t)count)) {
        copy_in = 1;
    }
    return copy_in ? mca_coll_gc3_memcpy(s->mem, (char *)user + gap, span) : OMPI_SUCCESS;
}

int mca_coll_gc3_stage_out(mca_coll_gc3_stage_t *s, struct ompi_datatype_t *dt, size_t count, int copy_out, int rc)
{
    ptrdiff_t gap;
    size_t    span = gc3_stage_span(dt, count, &gap);
    if (s->mem != NULL) {
        if (copy_out && rc == OMPI_SUCCESS) {
            rc = mca_coll_gc3_memcpy((char *)s->user + gap, s->mem, span);
        }
        free(s->mem);
        s->mem = NULL;
    }
    return rc;
}

int mca_coll_gc3_stage_allreduce(mca_coll_gc3_module_t *m, const void *sbuf, void *rbuf, int count,
                                 struct ompi_datatype_t *dtype, struct ompi_op_t *op)
{
    mca_coll_gc3_stage_t s, r;
    int         rc;

    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, dtype, (size_t)count, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, dtype, (size_t)count, sbuf == MPI_IN_PLACE);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_allreduce(sbuf == MPI_IN_PLACE ? MPI_IN_PLACE : s.base, r.base, count, dtype, op, m->comm,
                                   m->prev_allreduce_module);
        }
        rc = mca_coll_gc3_stage_out(&r, dtype, (size_t)count, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, dtype, (size_t)count, 0, rc);
}

int mca_coll_gc3_stage_alltoall(mca_coll_gc3_module_t *m, const void *sbuf, int scount, struct ompi_datatype_t *sdtype,
                                void *rbuf, int rcount, struct ompi_datatype_t *rdtype)
{
    size_t      n = (size_t)ompi_comm_size(m->comm);
    mca_coll_gc3_stage_t s, r;
    int         rc;

    rc = mca_coll_gc3_stage_in(&s, (void *)sbuf, sdtype, (size_t)scount * n, 1);
    if (rc == OMPI_SUCCESS) {
        rc = mca_coll_gc3_stage_in(&r, rbuf, rdtype, (size_t)rcount * n, sbuf == MPI_IN_PLACE);
        if (rc == OMPI_SUCCESS) {
            rc = m->prev_alltoall(sbuf == MPI_IN_PLACE ? MPI_IN_PLACE : s.base, scount, sdtype, r.base, rcount, rdtype,
                                  m->comm, m->prev_alltoall_module);
        }
        rc = mca_coll_gc3_stage_out(&r, rdtype, (size_t)rcount * n, 1, rc);
    }
    return mca_coll_gc3_stage_out(&s, sdtype, (size_t)scount * n, 0, rc);
}
