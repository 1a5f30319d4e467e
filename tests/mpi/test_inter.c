/* Collectives on an intercommunicator (the two halves of MPI_COMM_WORLD), each checked against a
 * host computation: allreduce, bcast, reduce, allgather(v), alltoall(v), gather(v), scatter(v), with
 * the roots of a rooted call in either group. --device: the buffers are device memory (a build with
 * CUDA; gc3 stages them, Open MPI's intercommunicator collectives would crash on them).
 * usage: test_inter [--device]   (under mpirun, 2 ranks or more); prints "N passed, M failed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

static int device, wrank, checks, failures;

static int *dalloc(int n)
{
    int *p = NULL;
#ifdef GC3_HAVE_CUDA
    if (device) {
        cudaMalloc((void **)&p, (size_t)(n > 0 ? n : 1) * sizeof(int));
        return p;
    }
#endif
    return malloc((size_t)(n > 0 ? n : 1) * sizeof(int));
}
static void dfree(int *p)
{
#ifdef GC3_HAVE_CUDA
    if (device) {
        cudaFree(p);
        return;
    }
#endif
    free(p);
}
static void put(int *d, const int *h, int n)
{
#ifdef GC3_HAVE_CUDA
    if (device) {
        cudaMemcpy(d, h, (size_t)n * sizeof(int), cudaMemcpyHostToDevice);
        return;
    }
#endif
    memcpy(d, h, (size_t)n * sizeof(int));
}
static void get(int *h, const int *d, int n)
{
#ifdef GC3_HAVE_CUDA
    if (device) {
        cudaMemcpy(h, d, (size_t)n * sizeof(int), cudaMemcpyDeviceToHost);
        return;
    }
#endif
    memcpy(h, d, (size_t)n * sizeof(int));
}

static void check(int ok, const char *what)
{
    int all = ok;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    checks++;
    failures += !all;
    if (wrank == 0) {
        printf("%s: %s\n", all ? "ok" : "FAILED", what);
        fflush(stdout);
    }
}

int main(int argc, char **argv)
{
    enum { N = 5 };
    MPI_Comm inter, local;
    int      wsize, group, lrank, lsize, rsize, h[4096], want[4096], *s, *r;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    device = argc > 1 && !strcmp(argv[1], "--device");
#ifndef GC3_HAVE_CUDA
    if (device) {
        if (wrank == 0)
            printf("SKIPPED: device memory needs a build with CUDA\n");
        MPI_Finalize();
        return 77;
    }
#endif
    group = wrank < wsize / 2 ? 0 : 1;
    MPI_Comm_split(MPI_COMM_WORLD, group, wrank, &local);
    MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, group == 0 ? wsize / 2 : 0, 7, &inter);
    MPI_Comm_rank(inter, &lrank);
    MPI_Comm_size(inter, &lsize);
    MPI_Comm_remote_size(inter, &rsize);
    s = dalloc(N * 64);
    r = dalloc(N * 64);

    /* allreduce: the result of each group is the other group's sum */
    for (int i = 0; i < N; i++)
        h[i] = (group + 1) * 100 + lrank * 10 + i;
    put(s, h, N);
    MPI_Allreduce(s, r, N, MPI_INT, MPI_SUM, inter);
    get(h, r, N);
    {
        int ok = 1;
        for (int i = 0; i < N; i++) {
            int sum = 0;
            for (int q = 0; q < rsize; q++)
                sum += (2 - group) * 100 + q * 10 + i;
            ok &= h[i] == sum;
        }
        check(ok, "allreduce");
    }
    /* bcast, reduce, gather(v), scatter(v): rank 0 of each group is the root in turn */
    for (int rootgroup = 0; rootgroup < 2; rootgroup++) {
        const int root = group == rootgroup ? (lrank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
        int       ok   = 1;
        int       rc[64], dis[64];
        /* bcast */
        for (int i = 0; i < N; i++)
            h[i] = root == MPI_ROOT ? 700 + i : -1;
        put(r, h, N);
        MPI_Bcast(r, N, MPI_INT, root, inter);
        get(h, r, N);
        for (int i = 0; root >= 0 && i < N; i++)
            ok &= h[i] == 700 + i;
        check(ok, rootgroup ? "bcast, root in group 1" : "bcast, root in group 0");
        /* reduce */
        for (int i = 0; i < N; i++)
            h[i] = lrank + i;
        put(s, h, N);
        MPI_Reduce(s, r, N, MPI_INT, MPI_SUM, root, inter);
        get(h, r, N);
        ok = 1;
        for (int i = 0; root == MPI_ROOT && i < N; i++)
            ok &= h[i] == rsize * (rsize - 1) / 2 + rsize * i;
        check(ok, "reduce");
        /* gather: N ints of each remote rank */
        for (int i = 0; i < N; i++)
            h[i] = lrank * 10 + i;
        put(s, h, N);
        MPI_Gather(s, N, MPI_INT, r, N, MPI_INT, root, inter);
        get(h, r, N * rsize);
        ok = 1;
        for (int i = 0; root == MPI_ROOT && i < N * rsize; i++)
            ok &= h[i] == (i / N) * 10 + i % N;
        check(ok, "gather");
        /* gatherv: rank q sends q+1 ints, placed in reverse order with gaps */
        for (int q = 0; q < rsize; q++) {
            rc[q]  = q + 1;
            dis[q] = (rsize - 1 - q) * (rsize + 2);
        }
        for (int i = 0; i < lrank + 1; i++)
            h[i] = lrank * 10 + i;
        put(s, h, lrank + 1);
        for (int i = 0; i < rsize * (rsize + 2); i++)
            want[i] = -5;
        put(r, want, rsize * (rsize + 2));
        MPI_Gatherv(s, lrank + 1, MPI_INT, r, rc, dis, MPI_INT, root, inter);
        get(h, r, rsize * (rsize + 2));
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < q + 1; i++)
                want[dis[q] + i] = q * 10 + i;
        ok = root != MPI_ROOT || !memcmp(h, want, sizeof(int) * (size_t)(rsize * (rsize + 2)));
        check(ok, "gatherv (gaps unchanged)");
        /* scatter */
        for (int i = 0; i < N * rsize; i++)
            h[i] = 900 + i;
        put(s, h, N * rsize);
        MPI_Scatter(s, N, MPI_INT, r, N, MPI_INT, root, inter);
        get(h, r, N);
        ok = 1;
        for (int i = 0; root >= 0 && i < N; i++)
            ok &= h[i] == 900 + lrank * N + i;
        check(ok, "scatter");
        /* scatterv: rank q gets q+1 ints from offset 3q */
        for (int q = 0; q < rsize; q++) {
            rc[q]  = q + 1;
            dis[q] = 3 * q;
        }
        for (int i = 0; i < 3 * rsize + 1; i++)
            h[i] = 500 + i;
        put(s, h, 3 * rsize + 1);
        MPI_Scatterv(s, rc, dis, MPI_INT, r, lrank + 1, MPI_INT, root, inter);
        get(h, r, lrank + 1);
        ok = 1;
        for (int i = 0; root >= 0 && i < lrank + 1; i++)
            ok &= h[i] == 500 + 3 * lrank + i;
        check(ok, "scatterv");
    }
    /* allgather, allgatherv, alltoall, alltoallv: from the remote group */
    {
        int ok = 1, rc[64], dis[64];
        for (int i = 0; i < N; i++)
            h[i] = group * 1000 + lrank * 10 + i;
        put(s, h, N);
        MPI_Allgather(s, N, MPI_INT, r, N, MPI_INT, inter);
        get(h, r, N * rsize);
        for (int i = 0; i < N * rsize; i++)
            ok &= h[i] == (1 - group) * 1000 + (i / N) * 10 + i % N;
        check(ok, "allgather");
        for (int q = 0; q < rsize; q++) {
            rc[q]  = q + 1;
            dis[q] = q * (rsize + 1);
        }
        for (int i = 0; i < lrank + 1; i++)
            h[i] = group * 1000 + lrank * 10 + i;
        put(s, h, lrank + 1);
        MPI_Allgatherv(s, lrank + 1, MPI_INT, r, rc, dis, MPI_INT, inter);
        get(h, r, rsize * (rsize + 1));
        ok = 1;
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < q + 1; i++)
                ok &= h[dis[q] + i] == (1 - group) * 1000 + q * 10 + i;
        check(ok, "allgatherv");
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < N; i++)
                h[q * N + i] = group * 1000 + lrank * 100 + q * 10 + i;
        put(s, h, N * rsize);
        MPI_Alltoall(s, N, MPI_INT, r, N, MPI_INT, inter);
        get(h, r, N * rsize);
        ok = 1;
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < N; i++)
                ok &= h[q * N + i] == (1 - group) * 1000 + q * 100 + lrank * 10 + i;
        check(ok, "alltoall");
        {
            int sc[64], sd[64], rcv[64], rd[64];
            for (int q = 0; q < rsize; q++) {
                sc[q]        = 2;
                sd[q]        = 2 * q;
                rcv[q]       = 2;
                rd[q]        = 2 * (rsize - 1 - q);
                h[2 * q]     = group * 1000 + lrank * 10 + q;
                h[2 * q + 1] = -h[2 * q];
            }
            put(s, h, 2 * rsize);
            MPI_Alltoallv(s, sc, sd, MPI_INT, r, rcv, rd, MPI_INT, inter);
            get(h, r, 2 * rsize);
            ok = 1;
            for (int q = 0; q < rsize; q++) {
                int v = (1 - group) * 1000 + q * 10 + lrank;
                ok &= h[rd[q]] == v && h[rd[q] + 1] == -v;
            }
            check(ok, "alltoallv");
        }
    }
    dfree(s);
    dfree(r);
    MPI_Comm_free(&inter);
    MPI_Comm_free(&local);
    if (wrank == 0)
        printf("%d passed, %d failed\n", checks - failures, failures);
    MPI_Finalize();
    return failures ? 1 : 0;
}
