/* gc3 / libgpuir: the one table of datatypes and reduction operators. */
#ifndef GC3_DTYPE_H
#define GC3_DTYPE_H

#include <stddef.h>
#include "gc3_status.h"

typedef enum {
    GC3_DT_INT8, GC3_DT_UINT8, GC3_DT_INT32, GC3_DT_UINT32, GC3_DT_INT64, GC3_DT_UINT64,
    GC3_DT_FLOAT32, GC3_DT_FLOAT64,
    GC3_DT_COUNT
} gc3_dtype_t;

typedef enum {
    GC3_OP_SUM, GC3_OP_PROD, GC3_OP_MIN, GC3_OP_MAX,
    GC3_OP_BAND, GC3_OP_BOR, GC3_OP_BXOR,
    GC3_OP_COUNT
} gc3_op_t;

size_t      gc3_dtype_size(gc3_dtype_t dtype);
const char *gc3_dtype_name(gc3_dtype_t dtype);
const char *gc3_op_name(gc3_op_t op);
int         gc3_dtype_is_float(gc3_dtype_t dtype);
gc3_status_t gc3_dtype_from_name(const char *name, gc3_dtype_t *dtype_p);
gc3_status_t gc3_op_from_name(const char *name, gc3_op_t *op_p);
/* Is `op` defined on `dtype` (bitwise ops only on integers)? */
int         gc3_op_valid(gc3_op_t op, gc3_dtype_t dtype);

/* dst[i] = dst[i] op src[i] for n elements. */
gc3_status_t gc3_reduce_host(gc3_dtype_t dtype, gc3_op_t op, void *dst, const void *src, size_t n);

#endif
