/* coll/gc3: which MPI datatypes and operations gc3 computes itself (the one mapping from
 * predefined MPI handles to libgpuir's dtype/op table). The handles of mpi.h are the
 * addresses of Open MPI's predefined objects, so comparing pointers is exact. */
#include "coll_gc3.h"
#include "ompi/datatype/ompi_datatype.h"

static const struct {
    MPI_Datatype mpi;
    gc3_dtype_t  gc3;
} gc3_dtypes[] = {
    { MPI_FLOAT, GC3_DT_FLOAT32 },
    { MPI_DOUBLE, GC3_DT_FLOAT64 },
    { MPI_INT, GC3_DT_INT32 },
    { MPI_UNSIGNED, GC3_DT_UINT32 },
    { MPI_INT32_T, GC3_DT_INT32 },
    { MPI_UINT32_T, GC3_DT_UINT32 },
    { MPI_INT64_T, GC3_DT_INT64 },
    { MPI_UINT64_T, GC3_DT_UINT64 },
    { MPI_LONG_LONG_INT, GC3_DT_INT64 },
    { MPI_UNSIGNED_LONG_LONG, GC3_DT_UINT64 },
    { MPI_INT8_T, GC3_DT_INT8 },
    { MPI_UINT8_T, GC3_DT_UINT8 },
    { MPI_SIGNED_CHAR, GC3_DT_INT8 },
    { MPI_UNSIGNED_CHAR, GC3_DT_UINT8 },
    { MPI_CHAR, GC3_DT_INT8 },
    { MPI_LONG, sizeof(long) == 8 ? GC3_DT_INT64 : GC3_DT_INT32 },
    { MPI_UNSIGNED_LONG, sizeof(long) == 8 ? GC3_DT_UINT64 : GC3_DT_UINT32 },
};
#define GC3_NDTYPES ((int)(sizeof(gc3_dtypes) / sizeof(gc3_dtypes[0])))

int mca_coll_gc3_map_dtype(struct ompi_datatype_t *dt, gc3_dtype_t *out)
{
    for (int i = 0; i < GC3_NDTYPES; i++) {
        if (dt == gc3_dtypes[i].mpi) {
            *out = gc3_dtypes[i].gc3;
            return 1;
        }
    }
    return 0;
}

int mca_coll_gc3_map_signature(struct ompi_datatype_t *dt, size_t count, gc3_dtype_t *out, size_t *elems)
{
    size_t dsize = 0, esize;
    int    found = mca_coll_gc3_map_dtype(dt, out);

    /* a derived datatype built of one predefined type: its signature is n of that type, whatever
     * its layout (Open MPI's set of the basic types a datatype uses) */
    for (int i = 0; !found && !ompi_datatype_is_predefined(dt) && i < GC3_NDTYPES; i++) {
        if (dt->super.bdt_used == gc3_dtypes[i].mpi->super.bdt_used) {
            *out  = gc3_dtypes[i].gc3;
            found = 1;
        }
    }
    ompi_datatype_type_size(dt, &dsize);
    esize = found ? gc3_dtype_size(*out) : 0;
    if (esize == 0 || dsize % esize != 0) {
        return 0;
    }
    *elems = count * (dsize / esize);
    return 1;
}

int mca_coll_gc3_map_op(struct ompi_op_t *op, gc3_op_t *out)
{
    const struct {
        MPI_Op   mpi;
        gc3_op_t gc3;
    } table[] = {
        { MPI_SUM, GC3_OP_SUM },   { MPI_PROD, GC3_OP_PROD }, { MPI_MIN, GC3_OP_MIN },   { MPI_MAX, GC3_OP_MAX },
        { MPI_BAND, GC3_OP_BAND }, { MPI_BOR, GC3_OP_BOR },   { MPI_BXOR, GC3_OP_BXOR },
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        if (op == table[i].mpi) {
            *out = table[i].gc3;
            return 1;
        }
    }
    return 0;
}

/* count elements of dt are bytes gc3 can move as they are: contiguous, starting at the buffer (a
 * contiguous derived datatype may begin past it: its true lower bound) */
int mca_coll_gc3_dt_bytes(struct ompi_datatype_t *dt, int count)
{
    ptrdiff_t lb = 0, extent = 0;
    if (!ompi_datatype_is_contiguous_memory_layout(dt, count)) {
        return 0;
    }
    ompi_datatype_get_true_extent(dt, &lb, &extent);
    return lb == 0;
}
