/* coll/gc3: pass a call on with its device buffers copied through host memory (the previous
 * module is not CUDA-aware: given a device pointer it would crash). Correct, not fast. */
#include <stdlib.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"


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
