/* gc3 / libgpuir: this process's GPUs and what memory a pointer is (see gc3_topo.h).
 *
 * Two ways to CUDA, each where it fits: the GPUs are probed through the CUDA runtime libgpuir is
 * built with (statically linked; it loads the driver itself), only when asked; memory is
 * classified through the driver API loaded at run time, which needs no context (the runtime's
 * pointer query would make one on the current device, at a time the application may not have
 * chosen it yet) and works in a process without a driver (every buffer is host memory then). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "gc3_topo.h"
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* ---------------------------------------------------------------- GPUs */

int gc3_gpu_count(void)
{
    int n = 0;
#ifdef GC3_HAVE_CUDA
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        n = 0;
    }
#endif
    return n;
}

gc3_status_t gc3_gpu_probe(int device, gc3_gpu_info_t *info, gc3_diag_t *diag)
{
    memset(info, 0, sizeof(*info));
    info->device = device;
#ifdef GC3_HAVE_CUDA
    int ndev = 0;

    (void)diag;
    if (device < 0 && cudaGetDevice(&info->device) != cudaSuccess) {
        info->device = 0; /* what CUDA would use */
    }
    if (cudaDeviceGetPCIBusId(info->pci, sizeof(info->pci), info->device) != cudaSuccess) {
        snprintf(info->pci, sizeof(info->pci), "device %d", info->device);
    }
    if (cudaDeviceGetAttribute(&info->mps, cudaDevAttrMpsEnabled, info->device) != cudaSuccess) {
        info->mps = 0; /* cannot tell: as without MPS */
    }
    {
        size_t free_b = 0, total_b = 0;
        int    cur = -1;
        if (cudaGetDevice(&cur) == cudaSuccess && cur == info->device &&
            cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
            info->mem_bytes = total_b;
        }
    }
    cudaGetDeviceCount(&ndev);
    for (int d = 0; d < ndev && d < 64; d++) {
        int atomic = 0, peer = 0;
        if (d == info->device) {
            continue;
        }
        if (cudaDeviceGetP2PAttribute(&atomic, cudaDevP2PAttrNativeAtomicSupported, info->device, d) == cudaSuccess &&
            atomic != 0) {
            info->atomics |= 1ull << d;
        }
        if (cudaDeviceCanAccessPeer(&peer, info->device, d) == cudaSuccess && peer != 0) {
            info->peers |= 1ull << d;
        }
    }
    return GC3_OK;
#else
    gc3_diag_add(diag, "GPU %d: gc3 was built without CUDA", device);
    return GC3_ERR_UNSUPPORTED;
#endif
}

gc3_link_t gc3_gpu_link(const gc3_gpu_info_t *a, const gc3_gpu_info_t *b)
{
    int ab = b->device >= 0 && b->device < 64 && (a->atomics >> b->device & 1);
    int ba = a->device >= 0 && a->device < 64 && (b->atomics >> a->device & 1);
    return ab && ba ? GC3_LINK_NVLINK : GC3_LINK_PCIE;
}

gc3_link_t gc3_gpu_seats_link(const gc3_gpu_seat_t *seats, int n)
{
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            if (seats[a].gpu.device != seats[b].gpu.device &&
                !strncmp(seats[a].host, seats[b].host, sizeof(seats[a].host)) &&
                gc3_gpu_link(&seats[a].gpu, &seats[b].gpu) != GC3_LINK_NVLINK) {
                return GC3_LINK_PCIE;
            }
        }
    }
    return GC3_LINK_NVLINK;
}

void gc3_gpu_name(int device, char *out, size_t len)
{
    snprintf(out, len, "?");
#ifdef GC3_HAVE_CUDA
    struct cudaDeviceProp prop;
    if (cudaGetDeviceProperties(&prop, device) == cudaSuccess) {
        snprintf(out, len, "%s", prop.name);
    }
#else
    (void)device;
#endif
}

int gc3_gpu_current(void)
{
    int dev = -1;
#ifdef GC3_HAVE_CUDA
    if (cudaGetDevice(&dev) != cudaSuccess) {
        dev = -1;
    }
#endif
    return dev;
}

void gc3_gpu_select(int device)
{
#ifdef GC3_HAVE_CUDA
    if (device >= 0) {
        cudaSetDevice(device);
    }
#else
    (void)device;
#endif
}

void gc3_gpu_nearest_nic(int device, char *out, size_t len)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char            cache[64][256];
    gc3_gpu_info_t         gpu;
    gc3_nic_t              nic;
    gc3_diag_t             diag;

    if (device < 0 || device >= 64) {
        gc3_snprintf_cut(out, len, "unknown (device %d)", device);
        return;
    }
    pthread_mutex_lock(&lock);
    if (cache[device][0] == '\0') {
        gc3_diag_init(&diag);
        if (gc3_gpu_probe(device, &gpu, &diag) != GC3_OK || !strncmp(gpu.pci, "device", 6)) {
            gc3_snprintf_cut(cache[device], sizeof(cache[device]), "unknown (no PCI bus id for device %d)", device);
        } else if (gc3_topo_nearest_nic(gpu.pci, &nic, &diag) == GC3_OK) {
            gc3_snprintf_cut(cache[device], sizeof(cache[device]), "%s (%s, %s, GPU %s)", nic.name,
                             nic.rdma ? "RDMA" : "no RDMA", gc3_nic_locality_name(nic.locality), gpu.pci);
        } else {
            gc3_snprintf_cut(cache[device], sizeof(cache[device]), "none (%s)", diag.count ? diag.msgs[0] : "?");
        }
        gc3_diag_cleanup(&diag);
    }
    gc3_snprintf_cut(out, len, "%s", cache[device]);
    pthread_mutex_unlock(&lock);
}

/* ---------------------------------------------------------------- memory (the driver, loaded at run time) */

/* from cuda.h, which we do not include: the driver ABI is stable */
#define GC3_CU_POINTER_ATTRIBUTE_MEMORY_TYPE    2
#define GC3_CU_POINTER_ATTRIBUTE_IS_MANAGED     8
#define GC3_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL 9
#define GC3_CU_POINTER_ATTRIBUTE_BUFFER_ID      7
#define GC3_CU_POINTER_ATTRIBUTE_LEGACY_IPC     10
#define GC3_CU_POINTER_ATTRIBUTE_RANGE_START    11
#define GC3_CU_POINTER_ATTRIBUTE_RANGE_SIZE     12
#define GC3_CU_MEMORYTYPE_DEVICE                2

typedef int (*gc3_cuInit_t)(unsigned int);
typedef int (*gc3_cuPointerGetAttributes_t)(unsigned int, int *, void **, unsigned long long);
typedef int (*gc3_cuMemcpy_t)(unsigned long long, unsigned long long, size_t);
typedef int (*gc3_cuMemAlloc_t)(unsigned long long *, size_t);
typedef int (*gc3_cuMemFree_t)(unsigned long long);
typedef int (*gc3_cuCtxGetCurrent_t)(void **);
typedef int (*gc3_cuCtxSetCurrent_t)(void *);
typedef int (*gc3_cuDeviceGet_t)(int *, int);
typedef int (*gc3_cuDevicePrimaryCtxRetain_t)(void **, int);

static struct {
    pthread_once_t                 once;
    int                            ok;
    void                          *lib;
    gc3_cuPointerGetAttributes_t   get_attrs;
    gc3_cuMemcpy_t                 memcpy;
    gc3_cuMemAlloc_t               mem_alloc; /* the temporaries' (NULL: none can be made) */
    gc3_cuMemFree_t                mem_free;
    gc3_cuCtxGetCurrent_t          ctx_get;
    gc3_cuCtxSetCurrent_t          ctx_set;
    gc3_cuDeviceGet_t              device_get;
    gc3_cuDevicePrimaryCtxRetain_t primary_retain;
} gc3_cu = { PTHREAD_ONCE_INIT, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL };

static void gc3_cu_load(void)
{
    gc3_cuInit_t init;
    gc3_cu.lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (gc3_cu.lib != NULL) {
        init                  = (gc3_cuInit_t)dlsym(gc3_cu.lib, "cuInit");
        gc3_cu.get_attrs      = (gc3_cuPointerGetAttributes_t)dlsym(gc3_cu.lib, "cuPointerGetAttributes");
        gc3_cu.memcpy         = (gc3_cuMemcpy_t)dlsym(gc3_cu.lib, "cuMemcpy");
        gc3_cu.mem_alloc      = (gc3_cuMemAlloc_t)dlsym(gc3_cu.lib, "cuMemAlloc_v2");
        gc3_cu.mem_free       = (gc3_cuMemFree_t)dlsym(gc3_cu.lib, "cuMemFree_v2");
        gc3_cu.ctx_get        = (gc3_cuCtxGetCurrent_t)dlsym(gc3_cu.lib, "cuCtxGetCurrent");
        gc3_cu.ctx_set        = (gc3_cuCtxSetCurrent_t)dlsym(gc3_cu.lib, "cuCtxSetCurrent");
        gc3_cu.device_get     = (gc3_cuDeviceGet_t)dlsym(gc3_cu.lib, "cuDeviceGet");
        gc3_cu.primary_retain = (gc3_cuDevicePrimaryCtxRetain_t)dlsym(gc3_cu.lib, "cuDevicePrimaryCtxRetain");
        gc3_cu.ok             = init != NULL && gc3_cu.get_attrs != NULL && gc3_cu.memcpy != NULL && init(0) == 0;
    }
}

int gc3_mem_driver(void)
{
    pthread_once(&gc3_cu.once, gc3_cu_load);
    return gc3_cu.ok;
}

gc3_mem_t gc3_mem_classify(const void *ptr, int *device_p)
{
    unsigned int mtype = 0, managed = 0;
    int          ordinal  = -1;
    int          attrs[3] = { GC3_CU_POINTER_ATTRIBUTE_MEMORY_TYPE, GC3_CU_POINTER_ATTRIBUTE_IS_MANAGED,
                              GC3_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL };
    void        *data[3]  = { &mtype, &managed, &ordinal };

    *device_p = -1;
    if (ptr == NULL || !gc3_mem_driver()) {
        return GC3_MEM_HOST;
    }
    /* one driver call per buffer on every path: memory CUDA does not know comes back as type 0
     * (the singular query takes the driver's error path there, twice per host buffer) */
    if (gc3_cu.get_attrs(3, attrs, data, (unsigned long long)(uintptr_t)ptr) != 0 || mtype == 0) {
        return GC3_MEM_HOST; /* not known to CUDA: ordinary host memory */
    }
    if (managed) {
        return GC3_MEM_MANAGED;
    }
    if (mtype != GC3_CU_MEMORYTYPE_DEVICE) {
        return GC3_MEM_HOST; /* pinned or registered host memory */
    }
    *device_p = ordinal;
    return GC3_MEM_DEVICE;
}

gc3_status_t gc3_mem_range(const void *ptr, size_t bytes, int device, uint64_t *base_p, uint64_t *size_p,
                           uint64_t *ident_p, const char **why_p)
{
    /* every value 8 bytes, zeroed: the driver writes 4 (types, ordinal) or 1 (booleans) of some */
    unsigned long long mtype = 0, managed = 0, ordinal = 0, id = 0, ipc = 0, start = 0, size = 0;
    int                attrs[7] = { GC3_CU_POINTER_ATTRIBUTE_MEMORY_TYPE,    GC3_CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                    GC3_CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, GC3_CU_POINTER_ATTRIBUTE_BUFFER_ID,
                                    GC3_CU_POINTER_ATTRIBUTE_LEGACY_IPC,     GC3_CU_POINTER_ATTRIBUTE_RANGE_START,
                                    GC3_CU_POINTER_ATTRIBUTE_RANGE_SIZE };
    void              *data[7]  = { &mtype, &managed, &ordinal, &id, &ipc, &start, &size };

    if (ptr == NULL || !gc3_mem_driver() || gc3_cu.get_attrs(7, attrs, data, (unsigned long long)(uintptr_t)ptr) != 0 ||
        (mtype & 0xffffffffu) == 0) {
        *why_p = "the buffer is host memory";
        return GC3_ERR_UNSUPPORTED;
    }
    if (managed & 0xff) {
        *why_p = "the buffer is managed memory";
        return GC3_ERR_UNSUPPORTED;
    }
    if ((mtype & 0xffffffffu) != GC3_CU_MEMORYTYPE_DEVICE || (int)(ordinal & 0xffffffffu) != device) {
        *why_p = "the buffer is not device memory of this rank's GPU";
        return GC3_ERR_UNSUPPORTED;
    }
    if ((ipc & 0xff) == 0) {
        *why_p = "the buffer's allocation cannot be exported with CUDA IPC (cudaMallocAsync's pools, cuMemCreate)";
        return GC3_ERR_UNSUPPORTED;
    }
    if (size == 0 || (uint64_t)(uintptr_t)ptr + bytes > start + size) {
        *why_p = "the buffer runs past the end of its allocation";
        return GC3_ERR_UNSUPPORTED;
    }
    *base_p  = start;
    *size_p  = size;
    *ident_p = id;
    return GC3_OK;
}

gc3_status_t gc3_mem_alloc_device(int device, size_t bytes, void **ptr_p)
{
    unsigned long long ptr = 0;
    void              *ctx = NULL;
    int                dev = 0;

    *ptr_p = NULL;
    if (!gc3_mem_driver() || gc3_cu.mem_alloc == NULL || gc3_cu.mem_free == NULL || gc3_cu.ctx_get == NULL ||
        gc3_cu.ctx_set == NULL || gc3_cu.device_get == NULL || gc3_cu.primary_retain == NULL) {
        return GC3_ERR_UNSUPPORTED;
    }
    if (gc3_cu.ctx_get(&ctx) != 0 || ctx == NULL) {
        /* no context on this thread (a rank that never used its GPU): the primary one, as the runtime's */
        if (gc3_cu.device_get(&dev, device < 0 ? 0 : device) != 0 || gc3_cu.primary_retain(&ctx, dev) != 0 ||
            gc3_cu.ctx_set(ctx) != 0) {
            return GC3_ERR_UNSUPPORTED;
        }
    }
    if (gc3_cu.mem_alloc(&ptr, bytes > 0 ? bytes : 1) != 0) {
        return GC3_ERR_NO_MEMORY;
    }
    *ptr_p = (void *)(uintptr_t)ptr;
    return GC3_OK;
}

void gc3_mem_free_device(void *ptr)
{
    if (ptr != NULL && gc3_mem_driver() && gc3_cu.mem_free != NULL) {
        (void)gc3_cu.mem_free((unsigned long long)(uintptr_t)ptr);
    }
}

gc3_status_t gc3_mem_copy(void *dst, const void *src, size_t bytes)
{
    if (bytes == 0) {
        return GC3_OK;
    }
    if (!gc3_mem_driver()) {
        return GC3_ERR_UNSUPPORTED;
    }
    /* unified addressing: one call for any direction; synchronous for the host */
    return gc3_cu.memcpy((unsigned long long)(uintptr_t)dst, (unsigned long long)(uintptr_t)src, bytes) == 0
               ? GC3_OK
               : GC3_ERR_IO;
}
