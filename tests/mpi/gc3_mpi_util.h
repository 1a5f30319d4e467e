/* What the MPI test programs and benchmarks share: the out-of-band interface of the runtime
 * implemented with MPI, and one GPU per rank of a node. */
#ifndef GC3_MPI_UTIL_H
#define GC3_MPI_UTIL_H

#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_runtime.h"
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int gc3_mpi_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    return MPI_Allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, *(MPI_Comm *)ctx) != MPI_SUCCESS;
}

static int gc3_mpi_barrier(void *ctx)
{
    return MPI_Barrier(*(MPI_Comm *)ctx) != MPI_SUCCESS;
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
        cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
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
    ep->oob.allgather = gc3_mpi_allgather;
    ep->oob.barrier   = gc3_mpi_barrier;
#ifdef GC3_HAVE_CUDA
    if (backend == GC3_BACKEND_CUDA) {
        gc3_test_select_gpu(*comm);
        cudaGetDevice(&ep->device);
    }
#endif
}

#endif
