/* gc3 / libgpuir: the CUDA backend's memory: frees deferred while a gc3 kernel of the process is in flight,
 * a plan's regions (device memory exported with CUDA IPC, opened once per plan by the peers), device and
 * pinned memory of the blocks, and zero-copy's CUDA IPC of callers' buffers (reg.c). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host.cuh"
extern "C" {
#include "gc3_topo.h"
}

pthread_mutex_t gc3_cuda_launch_lock = PTHREAD_MUTEX_INITIALIZER;
int             gc3_cuda_in_flight; /* gc3 kernels queued or running (atomic) */
static struct gc3_cuda_deferred {
    gc3_cuda_free_kind_t kind;
    void                *ptr;
    size_t               bytes;
} * gc3_cuda_deferred;
static int    gc3_cuda_ndeferred, gc3_cuda_deferred_cap;
static size_t gc3_cuda_deferred_bytes; /* of device and pinned memory (IPC mappings: 0), gc3_mem_held */

static void gc3_cuda_free_now(gc3_cuda_free_kind_t kind, void *ptr)
{
    switch (kind) {
    case GC3_CUDA_FREE_DEVICE:
        cudaFree(ptr);
        break;
    case GC3_CUDA_FREE_HOST:
        cudaFreeHost(ptr);
        break;
    case GC3_CUDA_FREE_IPC:
        cudaIpcCloseMemHandle(ptr);
        break;
    }
}

/* with gc3_cuda_launch_lock held */
static void gc3_cuda_drain_locked(void)
{
    if (__atomic_load_n(&gc3_cuda_in_flight, __ATOMIC_ACQUIRE) != 0) {
        return;
    }
    for (int i = 0; i < gc3_cuda_ndeferred; i++) {
        gc3_cuda_free_now(gc3_cuda_deferred[i].kind, gc3_cuda_deferred[i].ptr);
    }
    gc3_cuda_ndeferred = 0;
    __atomic_store_n(&gc3_cuda_deferred_bytes, 0, __ATOMIC_RELAXED);
}

/* Room for one more element in *arr (n used of *cap): 0 when out of host memory. */
int gc3_cuda_grow(void **arr, int *cap, int n, size_t elem)
{
    if (n < *cap) {
        return 1;
    }
    int   ncap = *cap ? 2 * *cap : 8;
    void *a    = realloc(*arr, (size_t)ncap * elem);
    if (a == NULL) {
        return 0;
    }
    *arr = a;
    *cap = ncap;
    return 1;
}

/* bytes: what ptr holds (IPC mappings: 0, the peer's memory), counted as deferred while it waits */
void gc3_cuda_release(gc3_cuda_free_kind_t kind, void *ptr, size_t bytes)
{
    if (ptr == NULL) {
        return;
    }
    pthread_mutex_lock(&gc3_cuda_launch_lock);
    if (__atomic_load_n(&gc3_cuda_in_flight, __ATOMIC_ACQUIRE) == 0) {
        gc3_cuda_drain_locked();
        gc3_cuda_free_now(kind, ptr);
    } else {
        if (!gc3_cuda_grow((void **)&gc3_cuda_deferred, &gc3_cuda_deferred_cap, gc3_cuda_ndeferred,
                           sizeof(*gc3_cuda_deferred))) {
            pthread_mutex_unlock(&gc3_cuda_launch_lock);
            return; /* out of host memory: leak the object rather than risk the deadlock */
        }
        gc3_cuda_deferred[gc3_cuda_ndeferred].kind  = kind;
        gc3_cuda_deferred[gc3_cuda_ndeferred].ptr   = ptr;
        gc3_cuda_deferred[gc3_cuda_ndeferred].bytes = bytes;
        gc3_cuda_ndeferred++;
        __atomic_add_fetch(&gc3_cuda_deferred_bytes, bytes, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
}

/* a call of this process ended: if it was the last in flight, free what waited */
void gc3_cuda_call_ended(void)
{
    if (__atomic_sub_fetch(&gc3_cuda_in_flight, 1, __ATOMIC_ACQ_REL) == 0 && gc3_cuda_ndeferred > 0 &&
        pthread_mutex_trylock(&gc3_cuda_launch_lock) == 0) {
        gc3_cuda_drain_locked();
        pthread_mutex_unlock(&gc3_cuda_launch_lock);
    }
}

uint64_t gc3_cuda_deferred_query(int release)
{
    if (release && __atomic_load_n(&gc3_cuda_in_flight, __ATOMIC_ACQUIRE) == 0) {
        pthread_mutex_lock(&gc3_cuda_launch_lock);
        gc3_cuda_drain_locked();
        pthread_mutex_unlock(&gc3_cuda_launch_lock);
    }
    return __atomic_load_n(&gc3_cuda_deferred_bytes, __ATOMIC_RELAXED);
}

/* A CUDA IPC handle as gc3 passes it: CUDA's, then the exporter's process and the address range of the
 * allocation there (what an importer needs to find its stale mappings of that place, below). */
typedef struct {
    cudaIpcMemHandle_t h;
    uint64_t           pid, base, size;
} gc3_cuda_handle_t;
static_assert(sizeof(gc3_cuda_handle_t) <= GC3_RT_HANDLE_BYTES, "a gc3 CUDA IPC handle fits a handle");

static void gc3_cuda_handle_make(char handle[GC3_RT_HANDLE_BYTES], const cudaIpcMemHandle_t *h, uint64_t base,
                                 uint64_t size)
{
    gc3_cuda_handle_t x;
    memset(handle, 0, GC3_RT_HANDLE_BYTES);
    memset(&x, 0, sizeof(x));
    x.h    = *h;
    x.pid  = (uint64_t)getpid();
    x.base = base;
    x.size = size;
    memcpy(handle, &x, sizeof(x));
}

/* Open a peer's allocation. CUDA refuses a second mapping of the same place of an exporter ("already
 * mapped") while an old one is open: a mapping of memory the exporter freed since (a zero-copy
 * registration not yet seen to go, an IPC region whose close waits for the device) holds the place.
 * Then this process's stale mappings of that exporter's range go (reg.c: gc3_reg_forget; deferred closes
 * run if no gc3 kernel is in flight), and the open is tried once more. */
static cudaError_t gc3_cuda_ipc_open(const char handle[GC3_RT_HANDLE_BYTES], char **mapped_p)
{
    gc3_cuda_handle_t x;
    cudaError_t       e;
    memcpy(&x, handle, sizeof(x));
    e = cudaIpcOpenMemHandle((void **)mapped_p, x.h, cudaIpcMemLazyEnablePeerAccess);
    if (e == cudaErrorAlreadyMapped) {
        (void)cudaGetLastError();
        if (gc3_reg_forget(x.pid, x.base, x.size) > 0 || gc3_cuda_deferred_query(1) == 0) {
            e = cudaIpcOpenMemHandle((void **)mapped_p, x.h, cudaIpcMemLazyEnablePeerAccess);
        }
    }
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
    }
    return e;
}

/* After a peer refused one of this process's regions as already mapped (prepare.c: gc3_prep_retry), its
 * regions get allocations of their own. A small cudaMalloc is placed inside a larger allocation of the
 * runtime's, beside the caller's buffers, and CUDA IPC exports and maps that whole allocation, once per
 * importing process: where another library of the peer (a CUDA-aware Open MPI's smcuda cache) still
 * maps it through a buffer freed since, the peer cannot map the region (doc/design/ipc-coexistence.md). */
#define GC3_CUDA_OWN_ALLOC (2u << 20) /* the runtime's allocation granularity */
static int gc3_cuda_dedicated;

void gc3_cuda_region_dedicate(void)
{
    __atomic_store_n(&gc3_cuda_dedicated, 1, __ATOMIC_RELAXED);
}

/* The regions made larger so (their callers count the size they asked for): the rest counted here, in
 * what gc3 holds, until they are freed. */
static struct gc3_cuda_grown {
    void  *base;
    size_t extra;
} * gc3_cuda_grown;
static int             gc3_cuda_ngrown, gc3_cuda_grown_cap;
static pthread_mutex_t gc3_cuda_grown_lock = PTHREAD_MUTEX_INITIALIZER;

static void gc3_cuda_grown_add(void *base, size_t extra)
{
    pthread_mutex_lock(&gc3_cuda_grown_lock);
    if (extra > 0 &&
        gc3_cuda_grow((void **)&gc3_cuda_grown, &gc3_cuda_grown_cap, gc3_cuda_ngrown, sizeof(*gc3_cuda_grown))) {
        gc3_cuda_grown[gc3_cuda_ngrown].base    = base;
        gc3_cuda_grown[gc3_cuda_ngrown++].extra = extra;
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, (int64_t)extra);
    }
    pthread_mutex_unlock(&gc3_cuda_grown_lock);
}

static void gc3_cuda_grown_forget(void *base)
{
    pthread_mutex_lock(&gc3_cuda_grown_lock);
    for (int i = 0; i < gc3_cuda_ngrown; i++) {
        if (gc3_cuda_grown[i].base == base) {
            gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)gc3_cuda_grown[i].extra);
            gc3_cuda_grown[i] = gc3_cuda_grown[--gc3_cuda_ngrown];
            break;
        }
    }
    pthread_mutex_unlock(&gc3_cuda_grown_lock);
}

gc3_status_t gc3_cuda_region_create(gc3_plan_t *p, size_t bytes, char **base_p, char handle[GC3_RT_HANDLE_BYTES],
                                    gc3_diag_t *diag)
{
    cudaIpcMemHandle_t h;
    gc3_status_t       st;

    if (gc3_cuda_state(p, diag) == NULL) {
        return GC3_ERR_IO;
    }
    const size_t own = __atomic_load_n(&gc3_cuda_dedicated, __ATOMIC_RELAXED)
                           ? (bytes + GC3_CUDA_OWN_ALLOC - 1) / GC3_CUDA_OWN_ALLOC * GC3_CUDA_OWN_ALLOC
                           : bytes;
    st               = gc3_cuda_check(cudaMalloc((void **)base_p, own), "cudaMalloc(region)", diag);
    if (st == GC3_OK) {
        st = gc3_cuda_fill(*base_p, NULL, bytes, "cudaMemsetAsync(region)", diag);
    }
    if (st == GC3_OK) {
        st = gc3_cuda_check(cudaIpcGetMemHandle(&h, *base_p), "cudaIpcGetMemHandle", diag);
    }
    if (st != GC3_OK) {
        gc3_cuda_release(GC3_CUDA_FREE_DEVICE, *base_p, 0); /* (NULL when cudaMalloc failed) */
        *base_p = NULL;
        return st;
    }
    gc3_cuda_handle_make(handle, &h, (uint64_t)(uintptr_t)*base_p, own);
    gc3_cuda_grown_add(*base_p, own - bytes);
    return GC3_OK;
}

/* "already mapped" after gc3's own stale mappings went: another library of this process (a CUDA-aware
 * Open MPI's smcuda or UCX's cuda_ipc cache) still maps memory the peer freed at that place, and the
 * preparation asks the peers for new allocations (prepare.c: gc3_prep_retry) */
gc3_status_t gc3_cuda_region_open(gc3_plan_t *p, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes, char **base_p,
                                  gc3_diag_t *diag)
{
    const cudaError_t e = gc3_cuda_ipc_open(handle, base_p);
    (void)p;
    (void)bytes;
    if (e == cudaErrorAlreadyMapped) {
        gc3_cuda_handle_t x;
        memcpy(&x, handle, sizeof(x));
        gc3_diag_add(diag,
                     "cuda backend: cudaIpcOpenMemHandle: %s: another library of this process (a CUDA-aware Open "
                     "MPI's CUDA IPC cache: smcuda's or UCX's cuda_ipc) still maps the allocation the peer's "
                     "region (%llu bytes at %#llx there) is in, through memory freed since",
                     cudaGetErrorString(e), (unsigned long long)x.size, (unsigned long long)x.base);
        return GC3_ERR_IN_USE;
    }
    return gc3_cuda_check(e, "cudaIpcOpenMemHandle (are both GPUs in one node with peer access?)", diag);
}

void gc3_cuda_region_unlink(gc3_plan_t *p, const char handle[GC3_RT_HANDLE_BYTES])
{
    (void)p;
    (void)handle;
}

/* Before freeing a plan's memory its resident kernel ends (else cudaFree would wait for it). */
void gc3_cuda_region_close(gc3_plan_t *p, char *base, size_t bytes, int own)
{
    gc3_cuda_quit(p);
    if (own) {
        gc3_cuda_grown_forget(base);
    }
    gc3_cuda_release(own ? GC3_CUDA_FREE_DEVICE : GC3_CUDA_FREE_IPC, base, own ? bytes : 0);
}

gc3_status_t gc3_cuda_mem_alloc(gc3_plan_t *p, size_t bytes, char **ptr_p)
{
    (void)p;
    if (cudaMalloc((void **)ptr_p, bytes + 64) != cudaSuccess) {
        return GC3_ERR_NO_MEMORY;
    }
    if (gc3_cuda_fill(*ptr_p, NULL, bytes + 64, "cudaMemsetAsync(scratch)", NULL) != GC3_OK) {
        gc3_cuda_release(GC3_CUDA_FREE_DEVICE, *ptr_p, 0); /* (cudaFree could wait for another call's kernel) */
        *ptr_p = NULL;
        return GC3_ERR_IO;
    }
    return GC3_OK;
}

void gc3_cuda_mem_free(gc3_plan_t *p, char *ptr, size_t bytes)
{
    gc3_cuda_quit(p);
    gc3_cuda_release(GC3_CUDA_FREE_DEVICE, ptr, bytes);
}

/* Pinned host memory mapped into the device (same address there: unified addressing). */
gc3_status_t gc3_cuda_host_alloc(gc3_plan_t *p, size_t bytes, char **ptr_p)
{
    (void)p;
    if (cudaHostAlloc((void **)ptr_p, bytes + 64, cudaHostAllocMapped | cudaHostAllocPortable) != cudaSuccess) {
        *ptr_p = NULL;
        return GC3_ERR_NO_MEMORY;
    }
    memset(*ptr_p, 0, bytes + 64);
    return GC3_OK;
}

void gc3_cuda_host_free(gc3_plan_t *p, char *ptr, size_t bytes)
{
    gc3_cuda_quit(p);
    gc3_cuda_release(GC3_CUDA_FREE_HOST, ptr, bytes);
}

gc3_status_t gc3_cuda_mem_write(void *dst, const void *src, size_t bytes)
{
    return gc3_cuda_fill(dst, src, bytes, "cudaMemcpyAsync(zero-copy table)", NULL);
}

/* ---------------------------------------------------------------- zero-copy (reg.c): CUDA IPC of callers' buffers */

gc3_status_t gc3_cuda_reg_query(gc3_exec_t *e, const void *ptr, size_t bytes, gc3_rt_reg_info_t *q)
{
    return gc3_mem_range(ptr, bytes, e->params.device, &q->base, &q->size, &q->ident, &q->why);
}

gc3_status_t gc3_cuda_reg_handle(gc3_exec_t *e, gc3_rt_reg_info_t *q, char handle[GC3_RT_HANDLE_BYTES])
{
    cudaIpcMemHandle_t h;
    (void)e;
    if (cudaIpcGetMemHandle(&h, (void *)(uintptr_t)q->base) != cudaSuccess) {
        (void)cudaGetLastError();
        q->why = "cudaIpcGetMemHandle refused the buffer's allocation";
        return GC3_ERR_UNSUPPORTED;
    }
    gc3_cuda_handle_make(handle, &h, q->base, q->size);
    return GC3_OK;
}

gc3_status_t gc3_cuda_reg_open(gc3_exec_t *e, const char handle[GC3_RT_HANDLE_BYTES], uint64_t size, char **mapped_p)
{
    (void)e;
    (void)size;
    return gc3_cuda_ipc_open(handle, mapped_p) == cudaSuccess ? GC3_OK : GC3_ERR_IO;
}

/* (closed once no gc3 kernel of the process is in flight: see gc3_cuda_release) */
void gc3_cuda_reg_close(gc3_exec_t *e, char *mapped, uint64_t size)
{
    (void)e;
    (void)size;
    gc3_cuda_release(GC3_CUDA_FREE_IPC, mapped, 0);
}
