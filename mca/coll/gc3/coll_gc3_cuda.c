/* coll/gc3: what kind of memory a buffer is, asked of the CUDA driver loaded at run time (no
 * link against it: without a driver every buffer is host memory and gc3 only delegates). */
#include <dlfcn.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

/* from cuda.h, which we do not include: the driver ABI is stable */
#define GC3_CU_POINTER_ATTRIBUTE_MEMORY_TYPE   2
#define GC3_CU_POINTER_ATTRIBUTE_IS_MANAGED    8
#define GC3_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define GC3_CU_MEMORYTYPE_HOST   1
#define GC3_CU_MEMORYTYPE_DEVICE 2

typedef int (*gc3_cuInit_t)(unsigned int);
typedef int (*gc3_cuPointerGetAttributes_t)(unsigned int, int *, void **, unsigned long long);
typedef int (*gc3_cuMemcpy_t)(unsigned long long, unsigned long long, size_t);

static struct {
    int                         tried, ok;
    void                       *lib;
    gc3_cuPointerGetAttributes_t get_attrs;
    gc3_cuMemcpy_t              memcpy;
} gc3_cu;

static int gc3_cuda_driver(void)
{
    if (!gc3_cu.tried) {
        gc3_cuInit_t init;
        gc3_cu.tried = 1;
        gc3_cu.lib   = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
        if (gc3_cu.lib != NULL) {
            init            = (gc3_cuInit_t)dlsym(gc3_cu.lib, "cuInit");
            gc3_cu.get_attrs = (gc3_cuPointerGetAttributes_t)dlsym(gc3_cu.lib, "cuPointerGetAttributes");
            gc3_cu.memcpy   = (gc3_cuMemcpy_t)dlsym(gc3_cu.lib, "cuMemcpy");
            gc3_cu.ok       = init != NULL && gc3_cu.get_attrs != NULL && gc3_cu.memcpy != NULL && init(0) == 0;
        }
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: CUDA driver %s",
                            gc3_cu.ok ? "loaded: device buffers are recognised" : "not available: every buffer is host memory");
    }
    return gc3_cu.ok;
}

mca_coll_gc3_mem_t mca_coll_gc3_classify(const void *ptr, int *device_p)
{
    unsigned int mtype = 0, managed = 0;
    int          ordinal = -1;
    int          attrs[3] = {GC3_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, GC3_CU_POINTER_ATTRIBUTE_IS_MANAGED,
                             GC3_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL};
    void        *data[3]  = {&mtype, &managed, &ordinal};

    *device_p = -1;
    if (ptr == NULL || ptr == MPI_IN_PLACE || !gc3_cuda_driver()) {
        return MCA_COLL_GC3_MEM_HOST;
    }
    /* one driver call per buffer on every path: memory CUDA does not know comes back as type 0
     * (the singular query takes the driver's error path there, twice per host buffer) */
    if (gc3_cu.get_attrs(3, attrs, data, (unsigned long long)(uintptr_t)ptr) != 0 || mtype == 0) {
        return MCA_COLL_GC3_MEM_HOST; /* not known to CUDA: ordinary host memory */
    }
    if (managed) {
        return MCA_COLL_GC3_MEM_MANAGED;
    }
    if (mtype != GC3_CU_MEMORYTYPE_DEVICE) {
        return MCA_COLL_GC3_MEM_HOST; /* pinned or registered host memory */
    }
    *device_p = ordinal;
    return MCA_COLL_GC3_MEM_DEVICE;
}

int mca_coll_gc3_memcpy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) {
        return OMPI_SUCCESS;
    }
    if (mca_coll_gc3_component.stage_host && !gc3_cuda_driver()) {
        memcpy(dst, src, bytes); /* test feature without a driver: the "device" is host memory */
        return OMPI_SUCCESS;
    }
    if (!gc3_cuda_driver()) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    /* unified addressing: one call for any direction; synchronous for the host */
    return gc3_cu.memcpy((unsigned long long)(uintptr_t)dst, (unsigned long long)(uintptr_t)src, bytes) == 0
               ? OMPI_SUCCESS
               : OMPI_ERROR;
}
