/* What the MPI test programs and benchmarks share: the out-of-band interface of the runtime
 * implemented with MPI, and one GPU per rank of a node. */
#ifndef GC3_MPI_UTIL_H
#define GC3_MPI_UTIL_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
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

/* Buffers of a test: device memory when on_device (cuda builds), host memory otherwise. New
 * buffers hold garbage (0xA5 bytes) so that a result never read from them passes by chance. */
static inline void *gc3_test_alloc(int on_device, size_t bytes)
{
    void *p = NULL;
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        if (cudaMalloc(&p, bytes + 64) != cudaSuccess) {
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
