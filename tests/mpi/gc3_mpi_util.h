/* What the MPI test programs and benchmarks share: the out-of-band interface of the runtime
 * implemented with MPI, and one GPU per rank of a node. */
#ifndef GC3_MPI_UTIL_H
#define GC3_MPI_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gc3_runtime.h"
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

/* The runtime's out-of-band interface with MPI_Iallgather on the communicator (ctx): the runtime
 * posts, then tests until done (these programs make no other collective call meanwhile). */
static int gc3_mpi_iallgather(void *ctx, const void *send, void *recv, size_t bytes, void **req_p)
{
    MPI_Request *r = malloc(sizeof(*r));
    if (r == NULL ||
        MPI_Iallgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, *(MPI_Comm *)ctx, r) != MPI_SUCCESS) {
        free(r);
        return 1;
    }
    *req_p = r;
    return 0;
}

static int gc3_mpi_test(void *ctx, void *req)
{
    MPI_Request *r    = req;
    int          done = 0, rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
    (void)ctx;
    if (rc != MPI_SUCCESS || done) {
        free(r);
        return rc != MPI_SUCCESS ? -1 : 1;
    }
    return 0;
}

/* A check of an MPI test: passed when it holds on every rank of MPI_COMM_WORLD (collective);
 * rank 0 prints it. */
static inline void gc3_test_check(int ok, const char *what, int *checks, int *failures)
{
    int all = ok, rank = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    (*checks)++;
    *failures += !all;
    if (rank == 0) {
        printf("%s: %s\n", all ? "ok" : "FAILED", what);
        fflush(stdout);
    }
}

/* monotonic seconds */
static inline double gc3_test_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bytes of gc3's shared memory segments (the host backend's regions and pools, its own and its
 * peers') mapped in this process, from /proc/self/maps (the names are gone once all peers mapped
 * them, the mappings stay). */
static inline long gc3_test_shm_maps(int own_only)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char  line[1024], own[64];
    long  bytes = 0;
    if (f == NULL) {
        return -1;
    }
    snprintf(own, sizeof(own), "/gc3-%ld-", (long)getpid()); /* (the segments this process made) */
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long a, b;
        if (strstr(line, own_only ? own : "/gc3-") != NULL && sscanf(line, "%lx-%lx", &a, &b) == 2) {
            bytes += (long)(b - a);
        }
    }
    fclose(f);
    return bytes;
}

static inline long gc3_test_shm_mapped(void)
{
    return gc3_test_shm_maps(0);
}

/* Of them, the segments this process made (what the node's memory holds for it, once: the peers' mappings of
 * them take no more) */
static inline long gc3_test_shm_own(void)
{
    return gc3_test_shm_maps(1);
}

/* Buffers of a test: device memory when on_device (cuda builds), host memory otherwise. New
 * buffers hold garbage (0xA5 bytes) so that a result never read from them passes by chance. */
static inline void *gc3_test_alloc(int on_device, size_t bytes)
{
    void *p = NULL;
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        cudaError_t e = cudaMalloc(&p, bytes + 64);
        if (e != cudaSuccess) {
            fprintf(stderr, "gc3_test_alloc: cudaMalloc of %zu bytes: %s\n", bytes + 64, cudaGetErrorString(e));
            return NULL;
        }
        cudaMemset(p, 0xA5, bytes + 64);
        return p;
    }
#endif
    (void)on_device;
    p = malloc(bytes + 64);
    if (p != NULL) {
        memset(p, 0xA5, bytes + 64);
    }
    return p;
}

static inline void gc3_test_free(int on_device, void *p)
{
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        cudaFree(p);
        return;
    }
#endif
    (void)on_device;
    free(p);
}

/* A byte count with an optional K, M or G suffix (powers of 1024); *end (when end is not NULL)
 * points after what was read, so callers can check for junk or a following ":MAX". */
static inline size_t gc3_test_parse_bytes(const char *s, char **end)
{
    char  *e;
    double v = strtod(s, &e);
    switch (*e) {
    case 'K': case 'k': v *= 1024; e++; break;
    case 'M': case 'm': v *= 1024.0 * 1024; e++; break;
    case 'G': case 'g': v *= 1024.0 * 1024 * 1024; e++; break;
    default: break;
    }
    if (end != NULL) {
        *end = e;
    }
    return (size_t)v;
}

/* copy between a test buffer and host memory (either direction) */
static inline void gc3_test_copy(int on_device, void *dst, const void *src, size_t bytes)
{
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        /* a copy from pageable host memory may return before its data reaches the device: wait for
         * it, as an application must before a collective that does not wait for the default stream
         * (coll_gc3_wait_default_stream false) */
        cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
        cudaStreamSynchronize(cudaStreamLegacy);
        return;
    }
#endif
    (void)on_device;
    memmove(dst, src, bytes);
}

/* one GPU per rank of a node */
static inline void gc3_test_select_gpu(MPI_Comm comm)
{
#ifdef GC3_HAVE_CUDA
    MPI_Comm node;
    int      rank, local, ndev = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    cudaGetDeviceCount(&ndev);
    cudaSetDevice(ndev > 0 ? local % ndev : 0);
#else
    (void)comm;
#endif
}

/* Where the ranks of `comm` run, in words, e.g. "2 ranks on 1 GPU (NVIDIA H200), 2 ranks per GPU
 * through MPS" (each rank's current GPU, told apart by host and PCI bus id; MPS as CUDA reports it
 * for the device). Collective; every rank gets the text. */
static inline void gc3_test_describe_gpus(MPI_Comm comm, char *out, size_t len)
{
#ifdef GC3_HAVE_CUDA
    struct card {
        char host[64], pci[32], name[96];
        int  mps;
    } mine, *all;
    int n, dev = 0, gpus = 0, hosts = 0, most = 1, least = 0, shared_mps = 1;

    memset(&mine, 0, sizeof(mine));
    MPI_Comm_size(comm, &n);
    gethostname(mine.host, sizeof(mine.host) - 1);
    cudaGetDevice(&dev);
    if (cudaDeviceGetPCIBusId(mine.pci, sizeof(mine.pci), dev) != cudaSuccess) {
        snprintf(mine.pci, sizeof(mine.pci), "device %d", dev);
    }
    struct cudaDeviceProp prop;
    snprintf(mine.name, sizeof(mine.name), "%.95s", cudaGetDeviceProperties(&prop, dev) == cudaSuccess ? prop.name : "?");
    if (cudaDeviceGetAttribute(&mine.mps, cudaDevAttrMpsEnabled, dev) != cudaSuccess) {
        mine.mps = 0;
    }
    all = calloc((size_t)n, sizeof(*all));
    if (all == NULL) {
        snprintf(out, len, "(out of memory)");
        return;
    }
    MPI_Allgather(&mine, (int)sizeof(mine), MPI_BYTE, all, (int)sizeof(mine), MPI_BYTE, comm);
    for (int r = 0; r < n; r++) {
        int first_gpu = 1, first_host = 1, here = 0;
        for (int q = 0; q < n; q++) {
            int same_host = strncmp(all[q].host, all[r].host, sizeof(all[r].host)) == 0;
            first_host   = first_host && !(q < r && same_host);
            if (same_host && strncmp(all[q].pci, all[r].pci, sizeof(all[r].pci)) == 0) {
                first_gpu = first_gpu && q >= r;
                here++;
            }
        }
        gpus += first_gpu;
        hosts += first_host;
        most  = here > most ? here : most;
        least = least == 0 || here < least ? here : least;
        if (here > 1) {
            shared_mps = shared_mps && all[r].mps;
        }
    }
    char where[32] = "";
    if (hosts > 1) {
        snprintf(where, sizeof(where), " of %d hosts", hosts);
    }
    if (most == 1) {
        snprintf(out, len, "%d rank%s on %d GPU%s%s (%s), one rank per GPU", n, n > 1 ? "s" : "", gpus, gpus > 1 ? "s" : "",
                 where, all[0].name);
    } else {
        snprintf(out, len, "%d ranks on %d GPU%s%s (%s), %s%d ranks per GPU %s", n, gpus, gpus > 1 ? "s" : "", where,
                 all[0].name, least < most ? "up to " : "", most, shared_mps ? "through MPS" : "without MPS");
    }
    free(all);
#else
    (void)comm;
    snprintf(out, len, "no GPU (gc3 built without CUDA)");
#endif
}

/* A test's --device: stop where the build has no CUDA; else give each rank its GPU and print, on
 * rank 0 of comm, "TEST: ranks on GPUs: ..." (the gpu tests' harness reads it). */
static inline void gc3_test_device_setup(const char *test, int on_device, MPI_Comm comm)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
#ifndef GC3_HAVE_CUDA
    if (on_device) {
        fprintf(stderr, "%s: --device needs a build with CUDA\n", test);
        MPI_Abort(comm, 2);
    }
#endif
    if (on_device) {
        char where[256];
        gc3_test_select_gpu(comm);
        gc3_test_describe_gpus(comm, where, sizeof(where));
        if (rank == 0) {
            printf("%s: ranks on GPUs: %s\n", test, where);
            fflush(stdout);
        }
    }
}

/* Executor parameters for this rank of `comm` (which must outlive the executor); with the
 * cuda backend, the GPU of its rank on the node. */
static inline void gc3_mpi_exec_params(gc3_exec_params_t *ep, gc3_backend_t backend, MPI_Comm *comm)
{
    int rank, nranks;
    MPI_Comm_rank(*comm, &rank);
    MPI_Comm_size(*comm, &nranks);
    gc3_exec_params_default(ep, backend, rank, nranks);
    ep->oob.ctx       = comm;
    ep->oob.iallgather = gc3_mpi_iallgather;
    ep->oob.test       = gc3_mpi_test;
#ifdef GC3_HAVE_CUDA
    if (backend == GC3_BACKEND_CUDA) {
        gc3_test_select_gpu(*comm);
        cudaGetDevice(&ep->device);
    }
#endif
}

#endif
