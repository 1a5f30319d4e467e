/* coll/gc3: pass a call on with its device buffers copied through host memory (the previous
 * module is not CUDA-aware: given a device pointer it would crash). Correct, not fast. The one
 * staging of every collective passed on (coll_gc3_fallback.c, coll_gc3_<collective>.c). */
#include <stdlib.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"

size_t mca_coll_gc3_span(struct ompi_datatype_t *dt, size_t count, ptrdiff_t *gap_p)
{
    ptrdiff_t lb, extent, true_lb, true_extent;
    ompi_datatype_get_extent(dt, &lb, &extent);
    ompi_datatype_get_true_extent(dt, &true_lb, &true_extent);
    *gap_p = true_lb;
    return count == 0 ? 0 : (size_t)true_extent + (count - 1) * (size_t)extent;
}

/* One buffer's host copy. */
static int gc3_stage_one(mca_coll_gc3_stage_t *s)
{
    ptrdiff_t gap;
    size_t    span;
    int       copy_in = s->in;

    if (!mca_coll_gc3_is_device(s->user)) {
        return OMPI_SUCCESS;
    }
    span   = mca_coll_gc3_span(s->dt, s->count, &gap);
    s->mem = malloc(span + 1);
    if (s->mem == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    s->base = s->mem - gap;
    /* a datatype with holes is copied in even for an output: copying the span back must leave
     * the holes as they were (found with MPI_Allgatherv, whose basic algorithm broadcasts an
     * indexed type) */
    if (!copy_in && !ompi_datatype_is_contiguous_memory_layout(s->dt, (int32_t)s->count)) {
        copy_in = 1;
    }
    return copy_in ? mca_coll_gc3_memcpy(s->mem, (char *)s->user + gap, span) : OMPI_SUCCESS;
}

int mca_coll_gc3_stage_in(mca_coll_gc3_stage_t *b, int n)
{
    int rc = OMPI_SUCCESS;

    for (int i = 0; i < n; i++) {
        b[i].mem  = NULL;
        b[i].base = b[i].user;
    }
    for (int i = 0; i < n && rc == OMPI_SUCCESS; i++) {
        rc = gc3_stage_one(&b[i]);
    }
    return rc;
}

int mca_coll_gc3_stage_out(mca_coll_gc3_stage_t *b, int n, int rc)
{
    for (int i = 0; i < n; i++) {
        ptrdiff_t gap;
        size_t    span;
        if (b[i].mem == NULL) {
            continue;
        }
        span = mca_coll_gc3_span(b[i].dt, b[i].count, &gap);
        if (b[i].out && rc == OMPI_SUCCESS) {
            rc = mca_coll_gc3_memcpy((char *)b[i].user + gap, b[i].mem, span);
        }
        free(b[i].mem);
        b[i].mem = NULL;
    }
    return rc;
}
