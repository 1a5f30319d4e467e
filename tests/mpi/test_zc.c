/* Zero-copy (coll_gc3_zero_copy): collectives on buffers that stay the same from call to call, so that
 * gc3 registers them and the senders leave their data in place, every result checked against a host
 * computation: MPI_Allreduce, MPI_Alltoall, MPI_Allgather, MPI_Reduce_scatter_block, out of place and
 * in place, at sizes that run Simple programs; a buffer freed and allocated again at the same address
 * between two calls; nonblocking and persistent calls; calls on two communicators started in crossed
 * order. Buffers of one kind (--alloc):
 *   shm          host memory in a shared mapping of a file (the host backend leaves it in place)
 *   malloc       private host memory (the host backend copies it through the FIFOs)
 *   cuda         cudaMalloc              cuda-offset  inside a larger cudaMalloc, at an offset
 *   async        cudaMallocAsync         vmm          cuMemCreate + cuMemMap
 *   managed      cudaMallocManaged       pinned       cudaMallocHost
 * Options: --alloc KIND (default shm), --rounds N (calls per buffer, default 3), --max-count N; --comms N
 * instead: N communicators each used on buffers of its own that are then freed, and no peer may keep
 * them mapped (host kinds: counted in /proc/self/maps); --late-write (device kinds): before each
 * out-of-place call, a memset of the output queued on the legacy default stream behind 20 ms of host
 * work, so that it runs after the call started on the host: the call must see it done (coll_gc3_wait_
 * default_stream), and no peer's push may land before it; --mismatch instead: rank 0 calls allreduce
 * with half the others' count on buffers of exactly its size, after calls with matching counts made
 * them zero-copy's: every rank gets an error, and no peer writes past rank 0's buffers.
 * Run with coll_gc3_verbose 2 to see whether each plan's calls left data in place, and why not. */
#define _GNU_SOURCE
#include <mpi.h>
#include "gc3_mpi_compat.h"
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gc3_mpi_util.h"
#ifdef GC3_HAVE_CUDA
#include <cuda.h>
#endif

static int world_rank, failures, checks, rounds = 3, late_write;

typedef enum { K_SHM, K_MALLOC, K_CUDA, K_CUDA_OFFSET, K_ASYNC, K_VMM, K_MANAGED, K_PINNED } kind_t;
static const char *kind_names[] = { "shm", "malloc", "cuda", "cuda-offset", "async", "vmm", "managed", "pinned" };
static kind_t      kind         = K_SHM;

typedef struct {
    char  *p;    /* what the collective gets */
    char  *base; /* what was allocated (p is inside it) */
    size_t bytes, alloc;
    char   shm[64]; /* K_SHM: the file */
#ifdef GC3_HAVE_CUDA
    CUmemGenericAllocationHandle vmm;
#endif
} tbuf_t;

static int on_device(void)
{
    return kind >= K_CUDA;
}

#ifdef GC3_HAVE_CUDA
/* The driver's virtual memory management, loaded at run time (the test links the static runtime). */
typedef CUresult (*cu_create_t)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
                                unsigned long long);
typedef CUresult (*cu_reserve_t)(CUdeviceptr *, size_t, size_t, CUdeviceptr, unsigned long long);
typedef CUresult (*cu_map_t)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle, unsigned long long);
typedef CUresult (*cu_access_t)(CUdeviceptr, size_t, const CUmemAccessDesc *, size_t);
typedef CUresult (*cu_gran_t)(size_t *, const CUmemAllocationProp *, CUmemAllocationGranularity_flags);
typedef CUresult (*cu_unmap_t)(CUdeviceptr, size_t);
typedef CUresult (*cu_release_t)(CUmemGenericAllocationHandle);
typedef CUresult (*cu_free_t)(CUdeviceptr, size_t);
static struct {
    cu_create_t  create;
    cu_reserve_t reserve;
    cu_map_t     map;
    cu_access_t  access;
    cu_gran_t    gran;
    cu_unmap_t   unmap;
    cu_release_t release;
    cu_free_t    addr_free;
} cu;

static int vmm_load(void)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        return 0;
    }
    cu.create    = (cu_create_t)dlsym(lib, "cuMemCreate");
    cu.reserve   = (cu_reserve_t)dlsym(lib, "cuMemAddressReserve");
    cu.map       = (cu_map_t)dlsym(lib, "cuMemMap");
    cu.access    = (cu_access_t)dlsym(lib, "cuMemSetAccess");
    cu.gran      = (cu_gran_t)dlsym(lib, "cuMemGetAllocationGranularity");
    cu.unmap     = (cu_unmap_t)dlsym(lib, "cuMemUnmap");
    cu.release   = (cu_release_t)dlsym(lib, "cuMemRelease");
    cu.addr_free = (cu_free_t)dlsym(lib, "cuMemAddressFree");
    return cu.create && cu.reserve && cu.map && cu.access && cu.gran && cu.unmap && cu.release && cu.addr_free;
}
#endif

/* A buffer of `bytes` of the test's kind; at `at` (shm only: MAP_FIXED) when not NULL. */
static int tbuf_alloc(tbuf_t *b, size_t bytes, char *at)
{
    static int serial;
    memset(b, 0, sizeof(*b));
    b->bytes = bytes;
    b->alloc = bytes + 64;
    switch (kind) {
    case K_SHM: {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        int          fd;
        /* the buffer ends where its mapping ends: a peer that read past it (past its registration) would
         * fault on the page gc3's host backend keeps unmapped after each mapping of a peer */
        b->alloc = (bytes + page - 1) / page * page + (bytes == 0 ? page : 0);
        snprintf(b->shm, sizeof(b->shm), "/gc3-test-zc-%d-%d", (int)getpid(), serial++);
        fd = shm_open(b->shm, O_CREAT | O_EXCL | O_RDWR, 0600);
        if (fd < 0 || ftruncate(fd, (off_t)b->alloc) != 0) {
            return 0;
        }
        b->base = mmap(at, b->alloc, PROT_READ | PROT_WRITE, MAP_SHARED | (at != NULL ? MAP_FIXED : 0), fd, 0);
        close(fd);
        if (b->base == MAP_FAILED) {
            b->base = NULL;
        }
        break;
    }
    case K_MALLOC:
        b->base = malloc(b->alloc);
        break;
#ifdef GC3_HAVE_CUDA
    case K_CUDA:
        if (cudaMalloc((void **)&b->base, b->alloc) != cudaSuccess)
            b->base = NULL;
        break;
    case K_CUDA_OFFSET:
        b->alloc += (1u << 20) + 256;
        if (cudaMalloc((void **)&b->base, b->alloc) != cudaSuccess)
            b->base = NULL;
        break;
    case K_ASYNC:
        if (cudaMallocAsync((void **)&b->base, b->alloc, 0) != cudaSuccess || cudaStreamSynchronize(0) != cudaSuccess)
            b->base = NULL;
        break;
    case K_MANAGED:
        if (cudaMallocManaged((void **)&b->base, b->alloc, cudaMemAttachGlobal) != cudaSuccess)
            b->base = NULL;
        break;
    case K_PINNED:
        if (cudaMallocHost((void **)&b->base, b->alloc) != cudaSuccess)
            b->base = NULL;
        break;
    case K_VMM: {
        CUmemAllocationProp prop;
        CUmemAccessDesc     acc;
        CUdeviceptr         va  = 0;
        size_t              g   = 0;
        int                 dev = 0;
        cudaGetDevice(&dev);
        memset(&prop, 0, sizeof(prop));
        prop.type          = CU_MEM_ALLOCATION_TYPE_PINNED;
        prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
        prop.location.id   = dev;
        if (cu.gran(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM) != CUDA_SUCCESS || g == 0) {
            return 0;
        }
        b->alloc = (b->alloc + g - 1) / g * g;
        memset(&acc, 0, sizeof(acc));
        acc.location = prop.location;
        acc.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
        if (cu.create(&b->vmm, b->alloc, &prop, 0) != CUDA_SUCCESS ||
            cu.reserve(&va, b->alloc, g, 0, 0) != CUDA_SUCCESS || cu.map(va, b->alloc, 0, b->vmm, 0) != CUDA_SUCCESS ||
            cu.access(va, b->alloc, &acc, 1) != CUDA_SUCCESS) {
            return 0;
        }
        b->base = (char *)(uintptr_t)va;
        break;
    }
#endif
    default:
        return 0;
    }
    if (b->base == NULL) {
        return 0;
    }
    b->p = b->base + (kind == K_CUDA_OFFSET ? (1u << 20) + 256 : kind == K_SHM ? b->alloc - bytes : 0);
    return 1;
}

static void tbuf_free(tbuf_t *b, int keep_address)
{
    switch (kind) {
    case K_SHM:
        if (!keep_address) {
            munmap(b->base, b->alloc);
        }
        shm_unlink(b->shm);
        break;
    case K_MALLOC:
        free(b->base);
        break;
#ifdef GC3_HAVE_CUDA
    case K_CUDA:
    case K_CUDA_OFFSET:
    case K_MANAGED:
        cudaFree(b->base);
        break;
    case K_ASYNC:
        cudaFreeAsync(b->base, 0);
        cudaStreamSynchronize(0);
        break;
    case K_PINNED:
        cudaFreeHost(b->base);
        break;
    case K_VMM:
        cu.unmap((CUdeviceptr)(uintptr_t)b->base, b->alloc);
        cu.release(b->vmm);
        cu.addr_free((CUdeviceptr)(uintptr_t)b->base, b->alloc);
        break;
#endif
    default:
        break;
    }
    b->base = b->p = NULL;
}

/* The buffer freed and allocated again, at the same address where the allocator gives it (shm: always,
 * a new file mapped over the old place). 1 when the address is the same. */
static int tbuf_again(tbuf_t *b)
{
    char  *old = b->p, *at = kind == K_SHM ? b->base : NULL;
    size_t bytes = b->bytes;
    tbuf_free(b, kind == K_SHM);
    if (!tbuf_alloc(b, bytes, at)) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes again (%s)\n", world_rank, bytes, kind_names[kind]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return b->p == old;
}

static void put(tbuf_t *b, const int *host, size_t n)
{
#ifdef GC3_HAVE_CUDA
    if (on_device()) {
        cudaMemcpy(b->p, host, n * sizeof(int), cudaMemcpyDefault);
        cudaDeviceSynchronize();
        return;
    }
#endif
    memcpy(b->p, host, n * sizeof(int));
}

static void get(int *host, const tbuf_t *b, size_t n)
{
#ifdef GC3_HAVE_CUDA
    if (on_device()) {
        cudaMemcpy(host, b->p, n * sizeof(int), cudaMemcpyDefault);
        cudaDeviceSynchronize();
        return;
    }
#endif
    memcpy(host, b->p, n * sizeof(int));
}

/* rank r's element i of round k (small: sums stay exact) */
static int val(int r, size_t i, int k)
{
    return (int)((r * 131 + (long)i * 7 + k * 17) % 1000) - 500;
}

static void check(int ok, const char *what)
{
    gc3_test_check(ok, what, &checks, &failures);
}

typedef enum { C_ALLREDUCE, C_ALLTOALL, C_ALLGATHER, C_RSB } coll_t;
static const char *coll_names[] = { "allreduce", "alltoall", "allgather", "reduce_scatter_block" };

/* Elements of the input and output of a call of count n (MPI's count) on `size` ranks. */
static size_t in_elems(coll_t c, size_t n, int size)
{
    return c == C_ALLREDUCE || c == C_ALLGATHER ? n : n * (size_t)size;
}
static size_t out_elems(coll_t c, size_t n, int size)
{
    return c == C_ALLREDUCE || c == C_RSB ? n : n * (size_t)size;
}

/* This rank's input of round k, as the call sees it: in place, where it lies in the output. */
static void fill(coll_t c, int *h, size_t n, int rank, int size, int k, int inplace)
{
    const size_t ni = in_elems(c, n, size), at = inplace && c == C_ALLGATHER ? (size_t)rank * n : 0;
    for (size_t i = 0; i < ni; i++) {
        h[at + i] = val(rank, i, k);
    }
}

/* The right output of this rank in round k. */
static int right(coll_t c, const int *out, size_t n, int rank, int size, int k)
{
    for (size_t i = 0; i < out_elems(c, n, size); i++) {
        int want = 0;
        switch (c) {
        case C_ALLREDUCE:
            for (int r = 0; r < size; r++)
                want += val(r, i, k);
            break;
        case C_ALLTOALL:
            want = val((int)(i / n), (size_t)rank * n + i % n, k);
            break; /* block q: q's block for me */
        case C_ALLGATHER:
            want = val((int)(i / n), i % n, k);
            break;
        case C_RSB:
            for (int r = 0; r < size; r++)
                want += val(r, (size_t)rank * n + i, k);
            break;
        }
        if (out[i] != want) {
            fprintf(stderr, "rank %d: element %zu: got %d want %d\n", world_rank, i, out[i], want);
            return 0;
        }
    }
    return 1;
}

static void call(coll_t c, const tbuf_t *in, const tbuf_t *out, size_t n, MPI_Comm comm, int inplace)
{
    const void *s = inplace ? MPI_IN_PLACE : in->p;
    switch (c) {
    case C_ALLREDUCE:
        MPI_Allreduce(s, out->p, (int)n, MPI_INT, MPI_SUM, comm);
        break;
    case C_ALLTOALL:
        MPI_Alltoall(s, (int)n, MPI_INT, out->p, (int)n, MPI_INT, comm);
        break;
    case C_ALLGATHER:
        MPI_Allgather(s, (int)n, MPI_INT, out->p, (int)n, MPI_INT, comm);
        break;
    case C_RSB:
        MPI_Reduce_scatter_block(in->p, out->p, (int)n, MPI_INT, MPI_SUM, comm);
        break;
    }
}

#ifdef GC3_HAVE_CUDA
/* --late-write: host work the legacy stream waits for before the memset behind it */
static void CUDART_CB late_write_wait(void *arg)
{
    (void)arg;
    usleep(20000);
}
#endif

/* `rounds` calls on the same buffers (new data each time), then the buffers freed and allocated again
 * (at the same address where the allocator gives it) and one more call. */
static void test_blocking(coll_t c, size_t n, int inplace, MPI_Comm comm)
{
    int          rank, size, same = 1;
    tbuf_t       in, out;
    const size_t nb = in_elems(c, n, 64) > out_elems(c, n, 64) ? in_elems(c, n, 64) : out_elems(c, n, 64);
    int         *h;
    char         what[200];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    h = malloc(nb * sizeof(int));
    if (h == NULL || !tbuf_alloc(&out, out_elems(c, n, size) * sizeof(int), NULL) ||
        (!inplace && !tbuf_alloc(&in, in_elems(c, n, size) * sizeof(int), NULL))) {
        fprintf(stderr, "rank %d: cannot allocate the buffers (%s)\n", world_rank, kind_names[kind]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k <= rounds; k++) {
        if (k == rounds) {
            /* the last round on buffers freed and allocated again */
            same = tbuf_again(&out);
            if (!inplace) {
                same = tbuf_again(&in) && same;
            }
        }
        memset(h, 0x5a, nb * sizeof(int));
        fill(c, h, n, rank, size, k, inplace);
        put(inplace ? &out : &in, h, inplace ? out_elems(c, n, size) : in_elems(c, n, size));
#ifdef GC3_HAVE_CUDA
        if (late_write && !inplace) {
            cudaLaunchHostFunc(0, late_write_wait, NULL);
            cudaMemsetAsync(out.p, 0x7f, out_elems(c, n, size) * sizeof(int), 0);
        }
#endif
        call(c, &in, &out, n, comm, inplace);
        get(h, &out, out_elems(c, n, size));
        snprintf(what, sizeof(what), "%s count %zu %s %s round %d%s", coll_names[c], n,
                 inplace ? "in place" : "out of place", kind_names[kind], k + 1,
                 k == rounds ? (same ? " (buffers freed and made again at the same address)"
                                     : " (buffers freed and made again)")
                             : "");
        check(right(c, h, n, rank, size, k), what);
    }
    if (rank == 0 && !same) {
        printf("test_zc: %s: the allocator gave another address after the free (%s)\n", coll_names[c],
               kind_names[kind]);
    }
    tbuf_free(&out, 0);
    if (!inplace) {
        tbuf_free(&in, 0);
    }
    free(h);
}

/* --mismatch: rank 0 passes half the others' count (an erroneous program) on buffers of exactly its
 * size, registered and mapped by calls with matching counts before: nobody pushes into a rank of
 * another call (the agreement records carry the calls' signatures), every rank gets an error. */
static void test_mismatch(size_t n)
{
    int          rank, size, rc;
    const size_t mine = world_rank == 0 ? n : 2 * n;
    tbuf_t       in, out;
    int         *h = malloc(2 * n * sizeof(int));
    MPI_Comm     comm;
    char         what[160];

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    if (h == NULL || !tbuf_alloc(&in, mine * sizeof(int), NULL) || !tbuf_alloc(&out, mine * sizeof(int), NULL)) {
        fprintf(stderr, "rank %d: cannot allocate the buffers (%s)\n", world_rank, kind_names[kind]);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int k = 0; k < rounds; k++) { /* matching counts: registered, then in zero-copy mode */
        fill(C_ALLREDUCE, h, n, rank, size, k, 0);
        put(&in, h, n);
        rc = MPI_Allreduce(in.p, out.p, (int)n, MPI_INT, MPI_SUM, comm);
        get(h, &out, n);
        snprintf(what, sizeof(what), "allreduce count %zu %s round %d before the mismatch", n, kind_names[kind], k + 1);
        check(rc == MPI_SUCCESS && right(C_ALLREDUCE, h, n, rank, size, k), what);
    }
    rc = MPI_Allreduce(in.p, out.p, (int)mine, MPI_INT, MPI_SUM, comm);
    printf("rank %d: allreduce of %zu ints (rank 0: %zu, the others %zu) returned %d\n", world_rank, mine, n, 2 * n,
           rc);
    fflush(stdout);
    MPI_Barrier(MPI_COMM_WORLD);
    snprintf(what, sizeof(what), "mismatched counts on exact buffers (%zu against %zu): an error", n, 2 * n);
    check(rc != MPI_SUCCESS, what);
    MPI_Comm_free(&comm);
    tbuf_free(&out, 0);
    tbuf_free(&in, 0);
    free(h);
}

/* Nonblocking allreduce and alltoall on two communicators, started in crossed order (even ranks a then b,
 * odd ranks b then a), then persistent ones: every round on the same buffers. */
static void test_nonblocking(MPI_Comm a, MPI_Comm b, size_t n)
{
    int      rank, size;
    tbuf_t   in[2], out[2];
    int     *h        = malloc(n * 64 * sizeof(int));
    MPI_Comm comms[2] = { a, b };
    char     what[200];

    MPI_Comm_rank(a, &rank);
    MPI_Comm_size(a, &size);
    for (int j = 0; j < 2; j++) {
        if (h == NULL || !tbuf_alloc(&in[j], n * (size_t)size * sizeof(int), NULL) ||
            !tbuf_alloc(&out[j], n * (size_t)size * sizeof(int), NULL)) {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    for (int k = 0; k < rounds; k++) {
        MPI_Request req[2];
        for (int j = 0; j < 2; j++) {
            fill(j == 0 ? C_ALLREDUCE : C_ALLTOALL, h, n, rank, size, k + 10 * j, 0);
            put(&in[j], h, j == 0 ? n : n * (size_t)size);
        }
        for (int x = 0; x < 2; x++) {
            /* managed memory is staged, and gc3 stages a nonblocking call as the blocking one (its request
             * complete on return): in crossed order two ranks would each wait in a different blocking call */
            const int j = rank % 2 == 0 || kind == K_MANAGED ? x : 1 - x;
            if (j == 0) {
                MPI_Iallreduce(in[0].p, out[0].p, (int)n, MPI_INT, MPI_SUM, comms[0], &req[0]);
            } else {
                MPI_Ialltoall(in[1].p, (int)n, MPI_INT, out[1].p, (int)n, MPI_INT, comms[1], &req[1]);
            }
        }
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        for (int j = 0; j < 2; j++) {
            get(h, &out[j], j == 0 ? n : n * (size_t)size);
            snprintf(what, sizeof(what), "nonblocking %s count %zu, %s order on two communicators, %s round %d",
                     j == 0 ? "allreduce" : "alltoall", n, kind == K_MANAGED ? "the same" : "crossed", kind_names[kind],
                     k + 1);
            check(right(j == 0 ? C_ALLREDUCE : C_ALLTOALL, h, n, rank, size, k + 10 * j), what);
        }
    }
    {
        MPI_Request p[2];
        GC3_ALLREDUCE_INIT(in[0].p, out[0].p, (int)n, MPI_INT, MPI_SUM, a, MPI_INFO_NULL, &p[0]);
        GC3_ALLTOALL_INIT(in[1].p, (int)n, MPI_INT, out[1].p, (int)n, MPI_INT, b, MPI_INFO_NULL, &p[1]);
        for (int k = 0; k < rounds; k++) {
            for (int j = 0; j < 2; j++) {
                fill(j == 0 ? C_ALLREDUCE : C_ALLTOALL, h, n, rank, size, k + 20 + 10 * j, 0);
                put(&in[j], h, j == 0 ? n : n * (size_t)size);
            }
            MPI_Startall(2, p);
            MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
            for (int j = 0; j < 2; j++) {
                get(h, &out[j], j == 0 ? n : n * (size_t)size);
                snprintf(what, sizeof(what), "persistent %s count %zu, %s round %d", j == 0 ? "allreduce" : "alltoall",
                         n, kind_names[kind], k + 1);
                check(right(j == 0 ? C_ALLREDUCE : C_ALLTOALL, h, n, rank, size, k + 20 + 10 * j), what);
            }
        }
        MPI_Request_free(&p[0]);
        MPI_Request_free(&p[1]);
    }
    for (int j = 0; j < 2; j++) {
        tbuf_free(&in[j], 0);
        tbuf_free(&out[j], 0);
    }
    free(h);
}

/* Mappings in this process of test buffers that were freed (their files gone): what a peer's mapping keeps
 * allocated after its owner freed it. */
static int stale_mappings(void)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char  line[4096];
    int   n = 0;
    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        n += strstr(line, "/gc3-test-zc-") != NULL && strstr(line, "(deleted)") != NULL;
    }
    if (f != NULL) {
        fclose(f);
    }
    return n;
}

/* --comms N: N communicators alive at once, each used for two allreduces on buffers of its own that are
 * freed after them (an application that allocates per use), then calls on one more: every rank's
 * registrations of freed memory must go (all communicators' caches), and the peers' mappings with them,
 * so that freed memory is not kept allocated. */
static void test_comms(int ncomms, size_t n)
{
    MPI_Comm *c = calloc((size_t)ncomms + 1, sizeof(MPI_Comm));
    int       rank, size, *h = malloc(n * sizeof(int)), stale, most = 0;
    char      what[200];

    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 0; i <= ncomms; i++) {
        tbuf_t in, out;
        MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);
        if (!tbuf_alloc(&in, n * sizeof(int), NULL) || !tbuf_alloc(&out, n * sizeof(int), NULL)) {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int k = 0; k < 2; k++) {
            fill(C_ALLREDUCE, h, n, rank, size, k + i, 0);
            put(&in, h, n);
            call(C_ALLREDUCE, &in, &out, n, c[i], 0);
            get(h, &out, n);
            snprintf(what, sizeof(what), "communicator %d of %d, allreduce %d on its own buffers", i + 1, ncomms + 1,
                     k + 1);
            check(right(C_ALLREDUCE, h, n, rank, size, k + i), what);
        }
        tbuf_free(&in, 0);
        tbuf_free(&out, 0);
        stale = stale_mappings();
        most  = stale > most ? stale : most;
    }
    /* a few more calls on the last communicator: each rank's progress unmaps what its peers dropped */
    for (int k = 0; k < 3; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, h, 1, MPI_INT, MPI_SUM, c[ncomms]);
    }
    {
        tbuf_t in, out;
        if (!tbuf_alloc(&in, n * sizeof(int), NULL) || !tbuf_alloc(&out, n * sizeof(int), NULL)) {
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int k = 0; k < 3; k++) {
            fill(C_ALLREDUCE, h, n, rank, size, k, 0);
            put(&in, h, n);
            call(C_ALLREDUCE, &in, &out, n, c[ncomms], 0);
            MPI_Barrier(MPI_COMM_WORLD);
        }
        stale = stale_mappings();
        tbuf_free(&in, 0);
        tbuf_free(&out, 0);
    }
    printf("test_zc: rank %d: freed buffers still mapped here: %d at most while %d communicators were alive, %d at the "
           "end\n",
           rank, most, ncomms + 1, stale);
    /* each peer's last freed buffers may still be mapped until it registers a new one; not more (without the
     * sweep of every communicator's registrations, two per peer per communicator stayed mapped) */
    snprintf(what, sizeof(what),
             "freed buffers of the peers still mapped: %d at most, %d at the end (bound %d: the last "
             "two of each peer)",
             most, stale, 2 * (size - 1));
    check(most <= 2 * (size - 1) && stale <= 2 * (size - 1), what);
    for (int i = 0; i <= ncomms; i++) {
        MPI_Comm_free(&c[i]);
    }
    free(c);
    free(h);
}

int main(int argc, char **argv)
{
    size_t   max_count = 1u << 20;
    int      size, ncomms = 0, mismatch = 0;
    MPI_Comm dup;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--alloc") == 0 && i + 1 < argc) {
            int found = 0;
            i++;
            for (int k = 0; k < (int)(sizeof(kind_names) / sizeof(kind_names[0])); k++) {
                if (strcmp(argv[i], kind_names[k]) == 0) {
                    kind  = (kind_t)k;
                    found = 1;
                }
            }
            if (!found) {
                fprintf(stderr,
                        "test_zc: --alloc %s: one of shm, malloc, cuda, cuda-offset, async, vmm, managed, pinned\n",
                        argv[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc) {
            max_count = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--comms") == 0 && i + 1 < argc) {
            ncomms = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--late-write") == 0) {
            late_write = 1;
        } else if (strcmp(argv[i], "--mismatch") == 0) {
            mismatch = 1;
        } else {
            fprintf(
                stderr,
                "usage: test_zc [--alloc KIND] [--rounds N] [--max-count N] [--comms N] [--late-write] [--mismatch]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
#ifdef GC3_HAVE_CUDA
    if (on_device()) {
        gc3_test_select_gpu(MPI_COMM_WORLD);
    }
    if (kind == K_VMM && !vmm_load()) {
        fprintf(stderr, "test_zc: the CUDA driver's cuMemCreate and friends cannot be loaded\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#else
    if (on_device()) {
        fprintf(stderr, "test_zc: --alloc %s needs a build with CUDA\n", kind_names[kind]);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
#endif
    if (late_write && !on_device()) {
        fprintf(stderr, "test_zc: --late-write needs device buffers (--alloc cuda or cuda-offset)\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (ncomms > 0) {
        test_comms(ncomms, 256 * 1024);
        goto done;
    }
    if (mismatch) {
        test_mismatch(1u << 18);
        goto done;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    {
        /* sizes that run Simple programs (the rules give small calls to LL, which copies) */
        const size_t counts[] = { 48 * 1024, 1u << 20, 100003 }; /* (odd: remainders in the last loop) */
        for (int c = 0; c < 4; c++) {
            for (size_t j = 0; j < sizeof(counts) / sizeof(counts[0]); j++) {
                size_t n = c == C_ALLREDUCE ? counts[j] : counts[j] / (size_t)size;
                if (in_elems((coll_t)c, n, size) > max_count || out_elems((coll_t)c, n, size) > max_count) {
                    continue;
                }
                for (int inplace = 0; inplace <= (c == C_RSB ? 0 : 1); inplace++) {
                    test_blocking((coll_t)c, n, inplace, MPI_COMM_WORLD);
                }
            }
        }
    }
    test_nonblocking(MPI_COMM_WORLD, dup, 64 * 1024 / (size_t)size);
    MPI_Comm_free(&dup);
done:
    if (world_rank == 0) {
        printf("test_zc: %d ranks, %s buffers, %d calls per buffer: %d passed, %d failed\n", size, kind_names[kind],
               rounds, checks - failures, failures);
    }
    MPI_Finalize();
    return failures != 0;
}
