/* Open MPI's own point-to-point and gc3's collectives on the same buffers, interleaved (issue 42):
 * each round allocates two buffers, then alternates MPI_Sendrecv between ring neighbours (Open
 * MPI's path: on device buffers UCX's cuda_ipc maps the peer's buffer) with MPI_Allreduce,
 * MPI_Alltoall and MPI_Bcast (gc3's path: its plans, and zero-copy's mappings of the peers'
 * buffers), each collective twice (a buffer is left in place from its second call on), every
 * result checked against a host computation; then frees the buffers, and the next round allocates
 * them again (the same sizes come back every few rounds, at the same addresses or at each other's:
 * a mapping kept for the old allocation must not be taken for the new one, in either cache).
 *
 * On device buffers the point-to-point part needs a CUDA-aware Open MPI (MPIX_Query_cuda_support()
 * on every rank): elsewhere Open MPI's MPI_Sendrecv would crash on device pointers, so it is skipped,
 * saying so, and only gc3's collectives run on the buffers.
 *
 * Options: --device (cudaMalloc'ed buffers, one GPU per rank; default: host memory, for the host
 * backend), --rounds N (default 10), --max-count N (floats per rank's segment, default 1 M). */
#include <mpi.h>
#include "gc3_mpi_compat.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_mpi_util.h"

static int rank, size, checks, failures, on_device, p2p = 1;

/* What rank q puts at element i of its buffer in round r (small integers: float sums stay exact). */
static float value(int q, int r, size_t i)
{
    return (float)((q + 1) * 3 + r + (int)(i % 17));
}

/* Garbage in a receive buffer before a call writes it (so that a result never written cannot pass). */
static void clear(void *buf, size_t bytes)
{
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        cudaMemset(buf, 0xA5, bytes);
        cudaStreamSynchronize(cudaStreamLegacy);
        return;
    }
#endif
    memset(buf, 0xA5, bytes);
}

/* The call's return code, and buf (total floats) against want(i): one check (of every rank), a line
 * for the first wrong element. */
typedef float (*want_fn)(size_t i, const void *ctx);
static void check(const char *what, int r, int rc, const void *buf, size_t total, want_fn want, const void *ctx,
                  float *host)
{
    size_t bad = total;
    char   label[160];

    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "test_p2p: rank %d round %d: %s returned %d\n", rank, r, what, rc);
    }
    gc3_test_copy(on_device, host, buf, total * sizeof(float));
    for (size_t i = 0; i < total && bad == total; i++) {
        if (host[i] != want(i, ctx)) {
            bad = i;
        }
    }
    if (bad < total) {
        fprintf(stderr, "test_p2p: rank %d round %d: %s: element %zu of %zu is %g, want %g\n", rank, r, what, bad,
                total, host[bad], want(bad, ctx));
    }
    snprintf(label, sizeof(label), "round %d, %zu floats: %s", r, total, what);
    gc3_test_check(rc == MPI_SUCCESS && bad == total, label, &checks, &failures);
}

/* the expected contents, given the round (and the peer or segment length) */
typedef struct {
    int    q, r;
    size_t n;
} want_t;
static float want_of_rank(size_t i, const void *ctx)
{
    const want_t *w = ctx;
    return value(w->q, w->r, i);
}
static float want_sum(size_t i, const void *ctx)
{
    const want_t *w = ctx;
    float         s = 0;
    for (int q = 0; q < size; q++) {
        s += value(q, w->r, i);
    }
    return s;
}
/* rank w->q's alltoall result: segment p comes from rank p, its elements q*n.. of p's buffer */
static float want_a2a(size_t i, const void *ctx)
{
    const want_t *w = ctx;
    return value((int)(i / w->n), w->r, (size_t)w->q * w->n + i % w->n);
}

/* Open MPI's MPI_Sendrecv: send to rank (rank + shift) % size, receive from (rank - shift). */
static int sendrecv(const void *sbuf, void *rbuf, size_t total, int shift)
{
    int to = (rank + shift + size) % size, from = (rank - shift + size) % size;
    return MPI_Sendrecv(sbuf, (int)total, MPI_FLOAT, to, 7, rbuf, (int)total, MPI_FLOAT, from, 7, MPI_COMM_WORLD,
                        MPI_STATUS_IGNORE);
}

static void fill(void *buf, int q, int r, size_t total, float *host)
{
    for (size_t i = 0; i < total; i++) {
        host[i] = value(q, r, i);
    }
    gc3_test_copy(on_device, buf, host, total * sizeof(float));
}

int main(int argc, char **argv)
{
    size_t      max_count = 1u << 20;
    int         rounds    = 10;
    const char *aware     = "host buffers";

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0) {
            on_device = 1;
        } else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc) {
            max_count = strtoull(argv[++i], NULL, 10);
        } else {
            if (rank == 0) {
                fprintf(stderr, "usage: test_p2p [--device] [--rounds N] [--max-count N]\n");
            }
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    gc3_test_device_setup("test_p2p", on_device, MPI_COMM_WORLD);
    if (on_device) {
        int mine = gc3_mpi_cuda_aware(&aware), all = 0;
        MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        p2p = all;
        if (rank == 0) {
            if (p2p) {
                printf("test_p2p: point-to-point on device buffers: Open MPI's MPI_Sendrecv interleaved with gc3's "
                       "collectives (%s)\n",
                       aware);
            } else {
                printf("test_p2p: point-to-point on device buffers SKIPPED: %s: its MPI_Sendrecv would crash on "
                       "device pointers; only gc3's collectives run on the buffers (a CUDA-aware Open MPI runs "
                       "both)\n",
                       mine ? "the Open MPI of another rank is not CUDA-aware" : aware);
            }
            fflush(stdout);
        }
    }
    {
        /* per rank's segment: LL and Simple plans, remainders in the last loop, large messages left in place */
        const size_t counts[] = { 1, 1000, 48 * 1024, 100003, 1u << 20 };
        const int    ncounts  = (int)(sizeof(counts) / sizeof(counts[0]));

        for (int r = 0; r < rounds; r++) {
            size_t n     = counts[r % ncounts] < max_count ? counts[r % ncounts] : max_count;
            size_t total = n * (size_t)size, bytes = total * sizeof(float);
            int    root = r % size;
            void  *a, *b, *spacer = NULL;
            float *host = malloc(bytes);
            want_t w;

            /* allocated again each round: in the other order every other round (each takes the other's
             * old address), after a small allocation every third round (new addresses) */
            if (r % 3 == 2) {
                spacer = gc3_test_alloc(on_device, 4096);
            }
            if (r % 2 == 0) {
                a = gc3_test_alloc(on_device, bytes);
                b = gc3_test_alloc(on_device, bytes);
            } else {
                b = gc3_test_alloc(on_device, bytes);
                a = gc3_test_alloc(on_device, bytes);
            }
            if (a == NULL || b == NULL || host == NULL || (r % 3 == 2 && spacer == NULL)) {
                fprintf(stderr, "test_p2p: rank %d: out of memory (%zu bytes)\n", rank, bytes);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            fill(a, rank, r, total, host);

            /* 1. Open MPI: a to the right neighbour, b from the left one */
            if (p2p) {
                int rc = sendrecv(a, b, total, 1);
                w.q = (rank - 1 + size) % size, w.r = r;
                check("MPI_Sendrecv of the input", r, rc, b, total, want_of_rank, &w, host);
            }
            /* 2. gc3: allreduce a -> b, twice */
            w.r = r;
            for (int k = 0; k < 2; k++) {
                clear(b, bytes);
                int rc = MPI_Allreduce(a, b, (int)total, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
                check(k ? "MPI_Allreduce (again)" : "MPI_Allreduce", r, rc, b, total, want_sum, &w, host);
            }
            /* 3. Open MPI: the sum from b to the left neighbour, into a from the right one */
            if (p2p) {
                clear(a, bytes);
                int rc = sendrecv(b, a, total, -1);
                check("MPI_Sendrecv of the allreduce's result", r, rc, a, total, want_sum, &w, host);
            }
            /* 4. gc3: alltoall a -> b, n per peer, twice */
            fill(a, rank, r, total, host);
            w.q = rank, w.n = n;
            for (int k = 0; k < 2; k++) {
                clear(b, bytes);
                int rc = MPI_Alltoall(a, (int)n, MPI_FLOAT, b, (int)n, MPI_FLOAT, MPI_COMM_WORLD);
                check(k ? "MPI_Alltoall (again)" : "MPI_Alltoall", r, rc, b, total, want_a2a, &w, host);
            }
            /* 5. Open MPI: the alltoall's result from b to the right neighbour, into a */
            if (p2p) {
                clear(a, bytes);
                int rc = sendrecv(b, a, total, 1);
                w.q    = (rank - 1 + size) % size;
                check("MPI_Sendrecv of the alltoall's result", r, rc, a, total, want_a2a, &w, host);
            }
            /* 6. gc3: bcast of a from root, twice (the others' buffer cleared before each) */
            if (rank == root) {
                fill(a, root, r, total, host);
            }
            w.q = root;
            for (int k = 0; k < 2; k++) {
                if (rank != root) {
                    clear(a, bytes);
                }
                int rc = MPI_Bcast(a, (int)total, MPI_FLOAT, root, MPI_COMM_WORLD);
                check(k ? "MPI_Bcast (again)" : "MPI_Bcast", r, rc, a, total, want_of_rank, &w, host);
            }
            /* 7. Open MPI: the bcast's data from a to the left neighbour, into b */
            if (p2p) {
                clear(b, bytes);
                int rc = sendrecv(a, b, total, -1);
                check("MPI_Sendrecv of the bcast's data", r, rc, b, total, want_of_rank, &w, host);
            }
            /* freed, to be allocated again next round */
            gc3_test_free(on_device, a);
            gc3_test_free(on_device, b);
            if (spacer != NULL) {
                gc3_test_free(on_device, spacer);
            }
            free(host);
        }
    }
    /* (checks and failures count every rank's: gc3_test_check) */
    if (rank == 0) {
        printf("test_p2p: %d ranks, %s buffers, %d rounds, point-to-point %s: %d passed, %d failed\n", size,
               on_device ? "device" : "host", rounds,
               p2p ? "interleaved with the collectives" : "SKIPPED (Open MPI is not CUDA-aware)", checks - failures,
               failures);
    }
    MPI_Finalize();
    return failures != 0;
}
