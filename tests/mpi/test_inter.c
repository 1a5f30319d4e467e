/* Collectives on an intercommunicator (the two halves of MPI_COMM_WORLD), each checked against a
 * host computation: allreduce, bcast, reduce, allgather(v), alltoall(v,w), gather(v), scatter(v),
 * reduce_scatter(_block), with the roots of a rooted call in either group. --device: the buffers
 * are device memory (a build with CUDA; gc3 stages them, Open MPI's intercommunicator collectives
 * would crash on them).
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
    /* alltoallw: rank p of a group sends rank q of the other m = p + q + 1 ints of value
     * g*1000000 + p*10000 + q*100 + i; each side's blocks in reverse order with a one-int gap, at
     * byte displacements, a datatype per peer: to and from an odd peer one element of a type of m
     * ints (sent contiguous, received strided: every other int), to and from an even one m MPI_INTs */
    {
        MPI_Datatype st[64], rt[64];
        int          sc[64], sd[64], rcv[64], rd[64], send = 0, recv = 0, ok = 1;
        for (int q = rsize - 1; q >= 0; q--) {
            int m = lrank + q + 1;
            if (q % 2) {
                MPI_Type_contiguous(m, MPI_INT, &st[q]);
                MPI_Type_vector(m, 1, 2, MPI_INT, &rt[q]);
                MPI_Type_commit(&st[q]);
                MPI_Type_commit(&rt[q]);
            } else {
                st[q] = rt[q] = MPI_INT;
            }
            sc[q] = rcv[q] = q % 2 ? 1 : m;
            sd[q]          = send * (int)sizeof(int);
            for (int i = 0; i < m; i++)
                h[send + i] = group * 1000000 + lrank * 10000 + q * 100 + i;
            h[send + m] = -3;
            send += m + 1;
            rd[q] = recv * (int)sizeof(int);
            recv += (q % 2 ? 2 * m - 1 : m) + 1;
        }
        put(s, h, send);
        for (int i = 0; i < recv; i++)
            want[i] = -7;
        put(r, want, recv);
        MPI_Alltoallw(s, sc, sd, st, r, rcv, rd, rt, inter);
        get(h, r, recv);
        for (int q = 0; q < rsize; q++)
            for (int i = 0; i < lrank + q + 1; i++)
                want[rd[q] / (int)sizeof(int) + (q % 2 ? 2 * i : i)] =
                    (1 - group) * 1000000 + q * 10000 + lrank * 100 + i;
        for (int i = 0; i < recv; i++)
            ok &= h[i] == want[i];
        check(ok, "alltoallw (per-peer datatypes, gaps unchanged)");
        for (int q = 1; q < rsize; q += 2) {
            MPI_Type_free(&st[q]);
            MPI_Type_free(&rt[q]);
        }
    }
    /* reduce_scatter(_block): the sum of a group's send buffers scattered over the other group, 4
     * ints after each result unchanged. reduce_scatter: t ints (the same t in both groups), local
     * rank i gets cnt[i] (the first lsize - 1 ranks i + 1, the last the rest) */
    {
        const int t = 2 * lsize * rsize + lsize + rsize;
        int       cnt[64], off = 0, ok = 1;
        for (int i = 0; i < lsize; i++)
            cnt[i] = i < lsize - 1 ? i + 1 : t - lsize * (lsize - 1) / 2;
        for (int i = 0; i < lrank; i++)
            off += cnt[i];
        for (int j = 0; j < t; j++)
            h[j] = (group + 1) * 1000 + lrank * 10 + j;
        put(s, h, t);
        for (int i = 0; i < cnt[lrank] + 4; i++)
            want[i] = -9;
        put(r, want, cnt[lrank] + 4);
        MPI_Reduce_scatter(s, r, cnt, MPI_INT, MPI_SUM, inter);
        get(h, r, cnt[lrank] + 4);
        for (int i = 0; i < cnt[lrank]; i++)
            want[i] = rsize * ((2 - group) * 1000 + off + i) + 10 * rsize * (rsize - 1) / 2;
        for (int i = 0; i < cnt[lrank] + 4; i++)
            ok &= h[i] == want[i];
        check(ok, "reduce_scatter");
        /* reduce_scatter_block: rb = 2 * rsize ints per local rank, so both groups send
         * 2 * lsize * rsize */
        {
            const int tb = 2 * lsize * rsize, rb = 2 * rsize;
            for (int j = 0; j < tb; j++)
                h[j] = (group + 1) * 1000 + lrank * 10 + j;
            put(s, h, tb);
            for (int i = 0; i < rb + 4; i++)
                want[i] = -9;
            put(r, want, rb + 4);
            MPI_Reduce_scatter_block(s, r, rb, MPI_INT, MPI_SUM, inter);
            get(h, r, rb + 4);
            for (int i = 0; i < rb; i++)
                want[i] = rsize * ((2 - group) * 1000 + lrank * rb + i) + 10 * rsize * (rsize - 1) / 2;
            ok = 1;
            for (int i = 0; i < rb + 4; i++)
                ok &= h[i] == want[i];
            check(ok, "reduce_scatter_block");
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
