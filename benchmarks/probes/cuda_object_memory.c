/* Which CUDA objects keep device memory after they are destroyed? Two MPI ranks on one GPU (through
 * MPS, as gc3's tests share one): each makes n objects of one kind, destroys them, for n = 16, 64,
 * 256, and rank 0 prints the device memory in use (cudaMemGetInfo, the whole GPU) after each step.
 * Not part of the build (a diagnostic of CUDA itself, behind doc/design/device-memory.md):
 *
 *   mpicc -I/usr/local/cuda/include cuda_object_memory.c -L/usr/local/cuda/lib64 -lcudart -o cuda_object_memory
 *   mpirun -np 2 -x CUDA_MPS_PIPE_DIRECTORY ./cuda_object_memory streams|events|pinned|ipc
 */
#include <mpi.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int  rank;
static long base_kib;

static long used_kib(void)
{
    size_t f, t;
    cudaDeviceSynchronize();
    cudaMemGetInfo(&f, &t);
    return (long)((t - f) >> 10);
}

static void mark(const char *what, int n)
{
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(100000);
    MPI_Barrier(MPI_COMM_WORLD);
    long u = used_kib();
    if (rank == 0) {
        printf("%-28s n=%4d: %8.1f MiB in use (%+7.1f MiB from the start)\n", what, n, u / 1024.0, (u - base_kib) / 1024.0);
        fflush(stdout);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    const int ns[] = {16, 64, 256};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (argc != 2 ||
        (strcmp(argv[1], "streams") && strcmp(argv[1], "events") && strcmp(argv[1], "pinned") && strcmp(argv[1], "ipc"))) {
        if (rank == 0) fprintf(stderr, "usage: cuda_object_memory streams|events|pinned|ipc (2 ranks on one GPU)\n");
        MPI_Finalize();
        return argc == 2 && strcmp(argv[1], "--help") == 0 ? 0 : 2;
    }
    const char kind = argv[1][0];
    cudaSetDevice(0);
    cudaFree(0);
    base_kib = used_kib();
    mark("start", 0);
    for (int r = 0; r < 3; r++) {
        const int          n = ns[r];
        void             **o = calloc((size_t)n, sizeof(void *)), **peer = calloc((size_t)n, sizeof(void *));
        cudaIpcMemHandle_t *h = calloc((size_t)n, sizeof(*h)), *ph = calloc((size_t)n, sizeof(*ph));
        for (int i = 0; i < n; i++) {
            if (kind == 's') cudaStreamCreateWithFlags((cudaStream_t *)&o[i], cudaStreamNonBlocking);
            if (kind == 'e') cudaEventCreateWithFlags((cudaEvent_t *)&o[i], cudaEventDisableTiming);
            if (kind == 'p') cudaHostAlloc(&o[i], 512, cudaHostAllocMapped);
            if (kind == 'i') {
                cudaMalloc(&o[i], (size_t)(1 + i % 4) << 20);
                cudaIpcGetMemHandle(&h[i], o[i]);
            }
        }
        if (kind == 'i') { /* each rank maps the other's */
            MPI_Sendrecv(h, n * (int)sizeof(*h), MPI_BYTE, 1 - rank, 0, ph, n * (int)sizeof(*ph), MPI_BYTE, 1 - rank, 0,
                         MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            for (int i = 0; i < n; i++) cudaIpcOpenMemHandle(&peer[i], ph[i], cudaIpcMemLazyEnablePeerAccess);
        }
        mark(kind == 's' ? "streams made" : kind == 'e' ? "events made" : kind == 'p' ? "pinned mapped made" : "IPC regions made, mapped", n);
        for (int i = 0; i < n; i++) {
            if (kind == 's') cudaStreamDestroy((cudaStream_t)o[i]);
            if (kind == 'e') cudaEventDestroy((cudaEvent_t)o[i]);
            if (kind == 'p') cudaFreeHost(o[i]);
            if (kind == 'i') {
                cudaIpcCloseMemHandle(peer[i]);
                cudaFree(o[i]);
            }
        }
        mark("destroyed", n);
        free(o); free(peer); free(h); free(ph);
    }
    MPI_Finalize();
    return 0;
}
