/* gc3 / libgpuir: the one table of datatypes and reduction operators (host side). */
#include <stdint.h>
#include <string.h>
#include "gc3_dtype.h"

static const struct {
    const char *name;
    size_t      size;
    int         is_float;
} gc3_dtypes[GC3_DT_COUNT] = {
    [GC3_DT_INT8]    = {"int8", 1, 0},    [GC3_DT_UINT8]   = {"uint8", 1, 0},
    [GC3_DT_INT32]   = {"int32", 4, 0},   [GC3_DT_UINT32]  = {"uint32", 4, 0},
    [GC3_DT_INT64]   = {"int64", 8, 0},   [GC3_DT_UINT64]  = {"uint64", 8, 0},
    [GC3_DT_FLOAT32] = {"float32", 4, 1}, [GC3_DT_FLOAT64] = {"float64", 8, 1},
};

static const char *gc3_ops[GC3_OP_COUNT] = {
    [GC3_OP_SUM] = "sum", [GC3_OP_PROD] = "prod", [GC3_OP_MIN] = "min", [GC3_OP_MAX] = "max",
    [GC3_OP_BAND] = "band", [GC3_OP_BOR] = "bor", [GC3_OP_BXOR] = "bxor",
};

size_t gc3_dtype_size(gc3_dtype_t dtype)
{
    return ((unsigned)dtype < GC3_DT_COUNT) ? gc3_dtypes[dtype].size : 0;
}

const char *gc3_dtype_name(gc3_dtype_t dtype)
{
    return ((unsigned)dtype < GC3_DT_COUNT) ? gc3_dtypes[dtype].name : "?";
}

int gc3_dtype_is_float(gc3_dtype_t dtype)
{
    return ((unsigned)dtype < GC3_DT_COUNT) ? gc3_dtypes[dtype].is_float : 0;
}

const char *gc3_op_name(gc3_op_t op)
{
    return ((unsigned)op < GC3_OP_COUNT) ? gc3_ops[op] : "?";
}

gc3_status_t gc3_dtype_from_name(const char *name, gc3_dtype_t *dtype_p)
{
    for (int i = 0; i < GC3_DT_COUNT; i++) {
        if (strcmp(name, gc3_dtypes[i].name) == 0) {
            *dtype_p = (gc3_dtype_t)i;
            return GC3_OK;
        }
    }
    /* common aliases */
    if (strcmp(name, "float") == 0) { *dtype_p = GC3_DT_FLOAT32; return GC3_OK; }
    if (strcmp(name, "double") == 0) { *dtype_p = GC3_DT_FLOAT64; return GC3_OK; }
    if (strcmp(name, "int") == 0) { *dtype_p = GC3_DT_INT32; return GC3_OK; }
    if (strcmp(name, "uint") == 0) { *dtype_p = GC3_DT_UINT32; return GC3_OK; }
    return GC3_ERR_INVALID_PARAM;
}

gc3_status_t gc3_op_from_name(const char *name, gc3_op_t *op_p)
{
    for (int i = 0; i < GC3_OP_COUNT; i++) {
        if (strcmp(name, gc3_ops[i]) == 0) {
            *op_p = (gc3_op_t)i;
            return GC3_OK;
        }
    }
    return GC3_ERR_INVALID_PARAM;
}

int gc3_op_valid(gc3_op_t op, gc3_dtype_t dtype)
{
    if ((unsigned)op >= GC3_OP_COUNT || (unsigned)dtype >= GC3_DT_COUNT) {
        return 0;
    }
    return !(op >= GC3_OP_BAND && gc3_dtypes[dtype].is_float);
}

#define GC3_ARITH_LOOP(T, U)                                                                \
    do {                                                                                   \
        T *d = (T *)dst;                                                                   \
        const T *s = (const T *)src;                                                       \
        switch (op) {                                                                      \
        case GC3_OP_SUM:  for (size_t i = 0; i < n; i++) d[i] = (T)((U)d[i] + (U)s[i]); break; \
        case GC3_OP_PROD: for (size_t i = 0; i < n; i++) d[i] = (T)((U)d[i] * (U)s[i]); break; \
        case GC3_OP_MIN:  for (size_t i = 0; i < n; i++) d[i] = s[i] < d[i] ? s[i] : d[i]; break; \
        case GC3_OP_MAX:  for (size_t i = 0; i < n; i++) d[i] = s[i] > d[i] ? s[i] : d[i]; break; \
        default: return GC3_ERR_INVALID_PARAM;                                             \
        }                                                                                  \
    } while (0)

#define GC3_INT_LOOP(T, U)                                                                  \
    do {                                                                                   \
        T *d = (T *)dst;                                                                   \
        const T *s = (const T *)src;                                                       \
        switch (op) {                                                                      \
        case GC3_OP_BAND: for (size_t i = 0; i < n; i++) d[i] &= s[i]; break;             \
        case GC3_OP_BOR:  for (size_t i = 0; i < n; i++) d[i] |= s[i]; break;             \
        case GC3_OP_BXOR: for (size_t i = 0; i < n; i++) d[i] ^= s[i]; break;             \
        default: GC3_ARITH_LOOP(T, U);                                                      \
        }                                                                                  \
    } while (0)

gc3_status_t gc3_reduce_host(gc3_dtype_t dtype, gc3_op_t op, void *dst, const void *src, size_t n)
{
    if (!gc3_op_valid(op, dtype)) {
        return GC3_ERR_INVALID_PARAM;
    }
    switch (dtype) {
    case GC3_DT_INT8:    GC3_INT_LOOP(int8_t, uint32_t); break;
    case GC3_DT_UINT8:   GC3_INT_LOOP(uint8_t, uint32_t); break;
    case GC3_DT_INT32:   GC3_INT_LOOP(int32_t, uint32_t); break;
    case GC3_DT_UINT32:  GC3_INT_LOOP(uint32_t, uint32_t); break;
    case GC3_DT_INT64:   GC3_INT_LOOP(int64_t, uint64_t); break;
    case GC3_DT_UINT64:  GC3_INT_LOOP(uint64_t, uint64_t); break;
    case GC3_DT_FLOAT32: GC3_ARITH_LOOP(float, float); break;
    case GC3_DT_FLOAT64: GC3_ARITH_LOOP(double, double); break;
    default: return GC3_ERR_INVALID_PARAM;
    }
    return GC3_OK;
}
