/* The collectives coll/gc3 passes on must give correct results on device buffers (staged
 * through host memory), not crash: bcast, reduce, allgather, allgatherv, gather(v), scatter(v),
 * alltoallv, alltoallw, reduce_scatter(_block), scan, exscan and their nonblocking forms, plus
 * allreduce/alltoall on the staging path, nonblocking and persistent, and the neighbourhood
 * collectives (blocking and nonblocking) on a periodic 1-D Cartesian communicator.
 * --device: real device buffers (GPU machine); otherwise run with --mca coll_gc3_stage_host true
 * so that host buffers take the staging path. Every result is checked against a host computation.
 * --expect-error: the coll_gc3_fallback=error policy (a call gc3 does not run fails). */
#include <mpi.h>
#include "gc3_mpi_compat.h" /* GC3_ALLREDUCE_INIT, GC3_ALLTOALL_INIT */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_mpi_util.h"

static int rank, size, on_device, checks, failures;

#define dalloc(n)       ((int *)gc3_test_alloc(on_device, (n) * sizeof(int)))
#define dput(d, h, n)   gc3_test_copy(on_device, d, h, (n) * sizeof(int))
#define dget(h, d, n)   gc3_test_copy(on_device, h, d, (n) * sizeof(int))
#define dfree(d)        gc3_test_free(on_device, d)

static void check(int ok, const char *what)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    checks++;
    if (!all) {
        failures++;
        if (rank == 0) {
            fprintf(stderr, "FAILED: %s\n", what);
        }
    }
}

#define V(r, i) ((r) * 1000 + (int)(i))

/* Every collective gc3 passes on, blocking (nb 0) or in its nonblocking form (nb 1: started and
 * waited for), on the same buffers, each result checked. */
#define NB(blocking, nonblocking)                      \
    do {                                               \
        if (nb) {                                      \
            MPI_Request rq;                            \
            nonblocking;                               \
            MPI_Wait(&rq, MPI_STATUS_IGNORE);          \
        } else {                                       \
            blocking;                                  \
        }                                              \
    } while (0)

static void collectives(int nb, int n, int root, int *h, int *g, int *a, int *b)
{
    int ok;

    /* bcast from root */
    for (int i = 0; i < n; i++) h[i] = rank == root ? V(root, i) : -1;
    dput(a, h, (size_t)n);
    NB(MPI_Bcast(a, n, MPI_INT, root, MPI_COMM_WORLD), MPI_Ibcast(a, n, MPI_INT, root, MPI_COMM_WORLD, &rq));
    dget(g, a, (size_t)n);
    ok = 1;
    for (int i = 0; i < n; i++) ok &= g[i] == V(root, i);
    check(ok, nb ? "i" "bcast" : "bcast");

    /* bcast of a datatype with holes (every other int): the holes must keep their contents */
    {
        MPI_Datatype vec;
        MPI_Type_vector(n / 2, 1, 2, MPI_INT, &vec);
        MPI_Type_commit(&vec);
        for (int i = 0; i < n; i++) h[i] = rank == root ? V(root, i) : -7;
        dput(a, h, (size_t)n);
        NB(MPI_Bcast(a, 1, vec, root, MPI_COMM_WORLD), MPI_Ibcast(a, 1, vec, root, MPI_COMM_WORLD, &rq));
        dget(g, a, (size_t)n);
        ok = 1;
        for (int i = 0; i < n - 1; i++) ok &= g[i] == (i % 2 == 0 || rank == root ? V(root, i) : -7);
        check(ok, nb ? "i" "bcast of a vector type (holes kept)" : "bcast of a vector type (holes kept)");
        MPI_Type_free(&vec);
    }

    /* reduce to root */
    for (int i = 0; i < n; i++) h[i] = V(rank, i);
    dput(a, h, (size_t)n);
    NB(MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD),
       MPI_Ireduce(a, b, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD, &rq));
    ok = 1;
    if (rank == root) {
        dget(g, b, (size_t)n);
        for (int i = 0; i < n; i++) ok &= g[i] == size * (size - 1) / 2 * 1000 + size * i;
    }
    check(ok, nb ? "i" "reduce" : "reduce");

    /* allgather and allgatherv (rank r contributes r+1 elements) */
    for (int i = 0; i < n; i++) h[i] = V(rank, i);
    dput(a, h, (size_t)n);
    NB(MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD),
       MPI_Iallgather(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, &rq));
    dget(g, b, (size_t)n * (size_t)size);
    ok = 1;
    for (int r = 0; r < size; r++) for (int i = 0; i < n; i++) ok &= g[r * n + i] == V(r, i);
    check(ok, nb ? "i" "allgather" : "allgather");
    {
        int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size), off = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = r + 1;
            displs[r] = off + 3; /* gaps */
            off += r + 1 + 3;
        }
        for (int i = 0; i < off; i++) g[i] = -7; /* the gaps must keep this */
        dput(b, g, (size_t)off);
        NB(MPI_Allgatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD),
           MPI_Iallgatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, MPI_COMM_WORLD, &rq));
        dget(g, b, (size_t)off);
        ok = 1;
        for (int r = 0; r < size; r++) for (int i = 0; i < counts[r]; i++) ok &= g[displs[r] + i] == V(r, i);
        for (int r = 0; r < size; r++) for (int i = 0; i < 3; i++) ok &= g[displs[r] - 3 + i] == -7;
        if (!ok) {
            for (int i = 0; i < off; i++) fprintf(stderr, "%d ", g[i]);
            fprintf(stderr, "<- rank %d allgatherv result\n", rank);
        }
        check(ok, nb ? "i" "allgatherv" : "allgatherv");
        /* alltoallv: rank r sends q+1 elements to q */
        for (int q = 0, o2 = 0; q < size; q++) {
            for (int i = 0; i < q + 1; i++) h[o2 + i] = V(rank, q * 10 + i);
            counts[q] = q + 1;
            displs[q] = o2;
            o2 += q + 1;
        }
        dput(a, h, (size_t)off);
        {
            int *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
            for (int q = 0; q < size; q++) {
                rc[q] = rank + 1;
                rd[q] = q * (rank + 1);
            }
            NB(MPI_Alltoallv(a, counts, displs, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD),
               MPI_Ialltoallv(a, counts, displs, MPI_INT, b, rc, rd, MPI_INT, MPI_COMM_WORLD, &rq));
            dget(g, b, (size_t)size * (size_t)(rank + 1));
            ok = 1;
            for (int q = 0; q < size; q++) for (int i = 0; i < rank + 1; i++) ok &= g[rd[q] + i] == V(q, rank * 10 + i);
            check(ok, nb ? "i" "alltoallv" : "alltoallv");
            free(rc);
            free(rd);
        }
        free(counts);
        free(displs);
    }

    /* alltoallw: rank r sends q + 1 ints to q, blocks 2 ints apart (byte displacements); the gaps of
     * the receive buffer must keep their contents */
    {
        int          *sc = malloc(sizeof(int) * (size_t)size), *sd = malloc(sizeof(int) * (size_t)size);
        int          *rc = malloc(sizeof(int) * (size_t)size), *rd = malloc(sizeof(int) * (size_t)size);
        MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)size);
        int           so = 0, ro = 0;
        for (int q = 0; q < size; q++) {
            sc[q] = q + 1, sd[q] = (so + 2) * (int)sizeof(int), so += q + 1 + 2;
            rc[q] = rank + 1, rd[q] = (ro + 2) * (int)sizeof(int), ro += rank + 1 + 2;
            ty[q] = MPI_INT;
            for (int i = 0; i < q + 1; i++) h[sd[q] / (int)sizeof(int) + i] = V(rank, q * 10 + i);
        }
        dput(a, h, (size_t)so);
        for (int i = 0; i < ro; i++) g[i] = -7;
        dput(b, g, (size_t)ro);
        NB(MPI_Alltoallw(a, sc, sd, ty, b, rc, rd, ty, MPI_COMM_WORLD),
           MPI_Ialltoallw(a, sc, sd, ty, b, rc, rd, ty, MPI_COMM_WORLD, &rq));
        dget(g, b, (size_t)ro);
        ok = 1;
        for (int q = 0; q < size; q++) {
            for (int i = 0; i < rank + 1; i++) ok &= g[rd[q] / (int)sizeof(int) + i] == V(q, rank * 10 + i);
            for (int i = 0; i < 2; i++) ok &= g[rd[q] / (int)sizeof(int) - 2 + i] == -7;
        }
        check(ok, nb ? "i" "alltoallw (gaps kept)" : "alltoallw (gaps kept)");
        free(sc), free(sd), free(rc), free(rd), free(ty);
    }

    /* gather and scatter */
    for (int i = 0; i < n; i++) h[i] = V(rank, i);
    dput(a, h, (size_t)n);
    NB(MPI_Gather(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD),
       MPI_Igather(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD, &rq));
    ok = 1;
    if (rank == root) {
        dget(g, b, (size_t)n * (size_t)size);
        for (int r = 0; r < size; r++) for (int i = 0; i < n; i++) ok &= g[r * n + i] == V(r, i);
    }
    check(ok, nb ? "i" "gather" : "gather");
    for (int r = 0; r < size; r++) for (int i = 0; i < n; i++) h[r * n + i] = V(r, i + 7);
    dput(a, h, (size_t)n * (size_t)size);
    NB(MPI_Scatter(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD),
       MPI_Iscatter(a, n, MPI_INT, b, n, MPI_INT, root, MPI_COMM_WORLD, &rq));
    dget(g, b, (size_t)n);
    ok = 1;
    for (int i = 0; i < n; i++) ok &= g[i] == V(rank, i + 7);
    check(ok, nb ? "i" "scatter" : "scatter");

    /* gatherv and scatterv: rank r's block has r + 1 elements, blocks 3 apart (gaps kept) */
    {
        int *counts = malloc(sizeof(int) * (size_t)size), *displs = malloc(sizeof(int) * (size_t)size), off = 0;
        for (int r = 0; r < size; r++) {
            counts[r] = r + 1;
            displs[r] = off + 3;
            off += r + 1 + 3;
        }
        for (int i = 0; i < n; i++) h[i] = V(rank, i);
        dput(a, h, (size_t)n);
        for (int i = 0; i < off; i++) g[i] = -7;
        dput(b, g, (size_t)off);
        NB(MPI_Gatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, root, MPI_COMM_WORLD),
           MPI_Igatherv(a, rank + 1, MPI_INT, b, counts, displs, MPI_INT, root, MPI_COMM_WORLD, &rq));
        ok = 1;
        if (rank == root) {
            dget(g, b, (size_t)off);
            for (int r = 0; r < size; r++) for (int i = 0; i < counts[r]; i++) ok &= g[displs[r] + i] == V(r, i);
            for (int r = 0; r < size; r++) for (int i = 0; i < 3; i++) ok &= g[displs[r] - 3 + i] == -7;
        }
        check(ok, nb ? "i" "gatherv" : "gatherv");
        for (int r = 0; r < size; r++) for (int i = 0; i < counts[r]; i++) h[displs[r] + i] = V(r, i + 11);
        dput(a, h, (size_t)off);
        NB(MPI_Scatterv(a, counts, displs, MPI_INT, b, rank + 1, MPI_INT, root, MPI_COMM_WORLD),
           MPI_Iscatterv(a, counts, displs, MPI_INT, b, rank + 1, MPI_INT, root, MPI_COMM_WORLD, &rq));
        dget(g, b, (size_t)rank + 1);
        ok = 1;
        for (int i = 0; i < rank + 1; i++) ok &= g[i] == V(rank, i + 11);
        check(ok, nb ? "i" "scatterv" : "scatterv");
        free(counts);
        free(displs);
    }

    /* reduce_scatter_block and reduce_scatter */
    for (size_t i = 0; i < (size_t)n * (size_t)size; i++) h[i] = rank + (int)i;
    dput(a, h, (size_t)n * (size_t)size);
    NB(MPI_Reduce_scatter_block(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
       MPI_Ireduce_scatter_block(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    dget(g, b, (size_t)n);
    ok = 1;
    for (int i = 0; i < n; i++) ok &= g[i] == size * (size - 1) / 2 + size * (rank * n + i);
    check(ok, nb ? "i" "reduce_scatter_block" : "reduce_scatter_block");
    {
        int *rcounts = malloc(sizeof(int) * (size_t)size), off = 0;
        for (int r = 0; r < size; r++) rcounts[r] = r + 1;
        for (int r = 0; r < rank; r++) off += r + 1;
        NB(MPI_Reduce_scatter(a, b, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD),
           MPI_Ireduce_scatter(a, b, rcounts, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
        dget(g, b, (size_t)rank + 1);
        ok = 1;
        for (int i = 0; i < rank + 1; i++) ok &= g[i] == size * (size - 1) / 2 + size * (off + i);
        check(ok, nb ? "i" "reduce_scatter" : "reduce_scatter");
        free(rcounts);
    }

    /* scan and exscan */
    for (int i = 0; i < n; i++) h[i] = rank + 1;
    dput(a, h, (size_t)n);
    NB(MPI_Scan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_Iscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    dget(g, b, (size_t)n);
    ok = 1;
    for (int i = 0; i < n; i++) ok &= g[i] == (rank + 1) * (rank + 2) / 2;
    check(ok, nb ? "i" "scan" : "scan");
    NB(MPI_Exscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_Iexscan(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rq));
    dget(g, b, (size_t)n);
    ok = 1;
    for (int i = 0; rank > 0 && i < n; i++) ok &= g[i] == rank * (rank + 1) / 2;
    check(ok, nb ? "i" "exscan" : "exscan");

}

/* The neighbourhood collectives on a periodic ring (MPI_Cart_create, 1 dimension): the
 * neighbours are, in order, left = rank-1 and right = rank+1. k ints per block; v-forms leave
 * gaps between the receive blocks, which must come back unchanged. */
static void neighbors(int nb, int k, int *h, int *g, int *a, int *b)
{
    MPI_Comm ring;
    int      dims[1] = {size}, periods[1] = {1}, ok, left = (rank + size - 1) % size, right = (rank + 1) % size;
    int      nbr[2];

    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    nbr[0] = left;
    nbr[1] = right;
    /* neighbor_allgather: my k ints to both; block j from neighbour j */
    for (int i = 0; i < k; i++) h[i] = V(rank, i);
    dput(a, h, (size_t)k);
    NB(MPI_Neighbor_allgather(a, k, MPI_INT, b, k, MPI_INT, ring),
       MPI_Ineighbor_allgather(a, k, MPI_INT, b, k, MPI_INT, ring, &rq));
    dget(g, b, (size_t)(2 * k));
    ok = 1;
    for (int j = 0; j < 2; j++) for (int i = 0; i < k; i++) ok &= g[j * k + i] == V(nbr[j], i);
    check(ok, nb ? "ineighbor_allgather" : "neighbor_allgather");

    /* neighbor_alltoall: block j goes to neighbour j; I get the left's block for its right (1)
     * first, then the right's block for its left (0) */
    for (int j = 0; j < 2; j++) for (int i = 0; i < k; i++) h[j * k + i] = V(rank, j * 100 + i);
    dput(a, h, (size_t)(2 * k));
    NB(MPI_Neighbor_alltoall(a, k, MPI_INT, b, k, MPI_INT, ring),
       MPI_Ineighbor_alltoall(a, k, MPI_INT, b, k, MPI_INT, ring, &rq));
    dget(g, b, (size_t)(2 * k));
    ok = 1;
    for (int i = 0; i < k; i++) ok &= g[i] == V(left, 100 + i) && g[k + i] == V(right, i);
    check(ok, nb ? "ineighbor_alltoall" : "neighbor_alltoall");

    /* v-forms: receive blocks at 0 and k + 3 (a gap of 3 ints that must keep -7) */
    {
        int cnt[2] = {k, k}, sd[2] = {0, k}, rd[2] = {0, k + 3};
        for (int i = 0; i < 2 * k + 3; i++) h[i] = -7;
        dput(b, h, (size_t)(2 * k + 3));
        for (int i = 0; i < k; i++) h[i] = V(rank, i);
        dput(a, h, (size_t)k);
        NB(MPI_Neighbor_allgatherv(a, k, MPI_INT, b, cnt, rd, MPI_INT, ring),
           MPI_Ineighbor_allgatherv(a, k, MPI_INT, b, cnt, rd, MPI_INT, ring, &rq));
        dget(g, b, (size_t)(2 * k + 3));
        ok = g[k] == -7 && g[k + 1] == -7 && g[k + 2] == -7;
        for (int j = 0; j < 2; j++) for (int i = 0; i < k; i++) ok &= g[rd[j] + i] == V(nbr[j], i);
        check(ok, nb ? "ineighbor_allgatherv (gap kept)" : "neighbor_allgatherv (gap kept)");

        for (int i = 0; i < 2 * k + 3; i++) h[i] = -7;
        dput(b, h, (size_t)(2 * k + 3));
        for (int j = 0; j < 2; j++) for (int i = 0; i < k; i++) h[j * k + i] = V(rank, j * 100 + i);
        dput(a, h, (size_t)(2 * k));
        NB(MPI_Neighbor_alltoallv(a, cnt, sd, MPI_INT, b, cnt, rd, MPI_INT, ring),
           MPI_Ineighbor_alltoallv(a, cnt, sd, MPI_INT, b, cnt, rd, MPI_INT, ring, &rq));
        dget(g, b, (size_t)(2 * k + 3));
        ok = g[k] == -7 && g[k + 1] == -7 && g[k + 2] == -7;
        for (int i = 0; i < k; i++) ok &= g[i] == V(left, 100 + i) && g[k + 3 + i] == V(right, i);
        check(ok, nb ? "ineighbor_alltoallv (gap kept)" : "neighbor_alltoallv (gap kept)");
    }

    /* w-form: byte displacements (MPI_Aint), the receive blocks one int apart */
    {
        int          cnt[2] = {k, k};
        MPI_Aint     sd[2] = {0, (MPI_Aint)k * (MPI_Aint)sizeof(int)}, rd[2] = {0, (MPI_Aint)(k + 1) * (MPI_Aint)sizeof(int)};
        MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
        for (int i = 0; i < 2 * k + 1; i++) h[i] = -7;
        dput(b, h, (size_t)(2 * k + 1));
        for (int j = 0; j < 2; j++) for (int i = 0; i < k; i++) h[j * k + i] = V(rank, j * 100 + i);
        dput(a, h, (size_t)(2 * k));
        NB(MPI_Neighbor_alltoallw(a, cnt, sd, ty, b, cnt, rd, ty, ring),
           MPI_Ineighbor_alltoallw(a, cnt, sd, ty, b, cnt, rd, ty, ring, &rq));
        dget(g, b, (size_t)(2 * k + 1));
        ok = g[k] == -7;
        for (int i = 0; i < k; i++) ok &= g[i] == V(left, 100 + i) && g[k + 1 + i] == V(right, i);
        check(ok, nb ? "ineighbor_alltoallw (gap kept)" : "neighbor_alltoallw (gap kept)");
    }
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    const int n = 1000, root = 1 % 2;
    int      *h, *g, *a, *b;
    int       ok;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    on_device = argc > 1 && strcmp(argv[1], "--device") == 0;
    if (argc > 1 && strcmp(argv[1], "--expect-error") == 0) {
        /* run with coll_gc3_fallback=error and coll_gc3_stage_host: a call gc3 does not run must
         * fail (every buffer counts as device memory then, so nothing else is called) */
        int  buf[4] = {0}, rc, cls, len;
        char msg[MPI_MAX_ERROR_STRING];
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Bcast(buf, 4, MPI_INT, 0, MPI_COMM_WORLD);
        MPI_Error_class(rc, &cls);
        MPI_Error_string(cls, msg, &len);
        printf("test_fallback: rank %d: bcast with coll_gc3_fallback=error: %s\n", rank,
               rc == MPI_SUCCESS ? "succeeded (WRONG)" : msg);
        MPI_Finalize();
        return rc == MPI_SUCCESS;
    }
    if (on_device) {
        gc3_test_select_gpu(MPI_COMM_WORLD);
    }
    h = calloc((size_t)n * (size_t)size * 2 + 8, sizeof(int));
    g = calloc((size_t)n * (size_t)size * 2 + 8, sizeof(int));
    a = dalloc((size_t)n * (size_t)size * 2);
    b = dalloc((size_t)n * (size_t)size * 2);

    collectives(0, n, root, h, g, a, b);
    collectives(1, n, root, h, g, a, b);
    neighbors(0, n, h, g, a, b);
    neighbors(1, n, h, g, a, b);

    /* allreduce and alltoall on the staging path (in place too) */
    for (int i = 0; i < n; i++) h[i] = V(rank, i);
    dput(b, h, (size_t)n);
    MPI_Allreduce(MPI_IN_PLACE, b, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    dget(g, b, (size_t)n);
    ok = 1;
    for (int i = 0; i < n; i++) ok &= g[i] == V(size - 1, i);
    check(ok, "allreduce in place (staged or run by gc3)");
    for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) h[q * n + i] = V(rank, q * n + i);
    dput(a, h, (size_t)n * (size_t)size);
    MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD);
    dget(g, b, (size_t)n * (size_t)size);
    ok = 1;
    for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) ok &= g[q * n + i] == V(q, rank * n + i);
    check(ok, "alltoall (staged or run by gc3)");
    /* a communicator of one rank: nothing to exchange, gc3 passes it on (saying why at verbose 2) */
    {
        int one = n, at = 2;
        for (int i = 0; i < n + 2; i++)
            h[i] = -1;
        dput(b, h, (size_t)n + 2);
        for (int i = 0; i < n; i++)
            h[i] = V(rank, i);
        dput(a, h, (size_t)n);
        MPI_Allgatherv(a, n, MPI_INT, b, &one, &at, MPI_INT, MPI_COMM_SELF);
        dget(g, b, (size_t)n + 2);
        ok = g[0] == -1 && g[1] == -1;
        for (int i = 0; i < n; i++)
            ok &= g[2 + i] == V(rank, i);
        check(ok, "allgatherv on MPI_COMM_SELF (gap kept)");
    }

    /* nonblocking forms on the same buffers */
    {
        MPI_Request req;
        for (int i = 0; i < n; i++) h[i] = V(rank, i);
        dput(a, h, (size_t)n);
        MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        dget(g, b, (size_t)n);
        ok = 1;
        for (int i = 0; i < n; i++) ok &= g[i] == size * (size - 1) / 2 * 1000 + size * i;
        check(ok, "iallreduce");
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) h[q * n + i] = V(rank, q * n + i);
        dput(a, h, (size_t)n * (size_t)size);
        MPI_Ialltoall(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        dget(g, b, (size_t)n * (size_t)size);
        ok = 1;
        for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) ok &= g[q * n + i] == V(q, rank * n + i);
        check(ok, "ialltoall");
    }
    /* persistent forms: started twice with new data (each start runs the blocking call, staged
     * when gc3 does not take it) */
    {
        MPI_Request req[2];
        GC3_ALLREDUCE_INIT(a, b, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &req[0]);
        GC3_ALLTOALL_INIT(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &req[1]);
        for (int it = 0; it < 2; it++) {
            for (int i = 0; i < n; i++) h[i] = V(rank, i) + it;
            dput(a, h, (size_t)n);
            MPI_Start(&req[0]);
            MPI_Wait(&req[0], MPI_STATUS_IGNORE);
            dget(g, b, (size_t)n);
            ok = 1;
            for (int i = 0; i < n; i++) ok &= g[i] == size * (size - 1) / 2 * 1000 + size * i + size * it;
            check(ok, it ? "persistent allreduce, second start" : "persistent allreduce");
            for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) h[q * n + i] = V(rank, q * n + i) + it;
            dput(a, h, (size_t)n * (size_t)size);
            MPI_Start(&req[1]);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            dget(g, b, (size_t)n * (size_t)size);
            ok = 1;
            for (int q = 0; q < size; q++) for (int i = 0; i < n; i++) ok &= g[q * n + i] == V(q, rank * n + i) + it;
            check(ok, it ? "persistent alltoall, second start" : "persistent alltoall");
        }
        MPI_Request_free(&req[0]);
        MPI_Request_free(&req[1]);
    }

    if (rank == 0) {
        printf("test_fallback: %d ranks, %s buffers: %d passed, %d failed\n", size, on_device ? "device" : "host",
               checks - failures, failures);
    }
    dfree(a);
    dfree(b);
    free(h);
    free(g);
    MPI_Finalize();
    return failures != 0;
}
