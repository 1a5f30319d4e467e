/* MPI_Allreduce, MPI_Alltoall and the other collectives gc3 runs (allgather, reduce_scatter_block,
 * bcast, reduce; nonblocking and persistent forms) through coll/gc3, checked against a host computation:
 * dtypes x ops x counts x in-place x communicators (world, dup, split into uneven sizes,
 * split by parity). Run with --mca coll_gc3_priority 90 (and coll_gc3_backend host on machines
 * without GPUs, so that gc3 runs host buffers itself). Options: --max-count N. */
#include <mpi.h>
#include "gc3_mpi_compat.h" /* GC3_ALLREDUCE_INIT, GC3_ALLTOALL_INIT, GC3_ALLGATHER_INIT, ... */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_mpi_util.h"

static int world_rank, failures, checks, on_device;

/* With --device the MPI calls get device buffers (the test fills and reads host copies). */
static void *dev_copy(const void *host, size_t bytes)
{
    void *d;
    if (!on_device) {
        return (void *)host;
    }
    d = gc3_test_alloc(1, bytes);
    if (d == NULL) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes on the device\n", world_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    gc3_test_copy(1, d, host, bytes);
    return d;
}

static void dev_back(void *host, void *dev, size_t bytes)
{
    if (on_device) {
        gc3_test_copy(1, host, dev, bytes);
        gc3_test_free(1, dev);
    }
}

typedef struct {
    MPI_Datatype dt;
    const char  *name;
    int          is_float, size;
} dtype_t;

static const dtype_t dtypes[] = {
    { MPI_FLOAT, "float", 1, 4 },       { MPI_DOUBLE, "double", 1, 8 },
    { MPI_INT, "int", 0, 4 },           { MPI_LONG, "long", 0, (int)sizeof(long) },
    { MPI_UNSIGNED, "unsigned", 0, 4 },
};

typedef struct {
    MPI_Op      op;
    const char *name;
} op_t;

static const op_t ops[] = { { MPI_SUM, "sum" },   { MPI_PROD, "prod" }, { MPI_MIN, "min" },  { MPI_MAX, "max" },
                            { MPI_BAND, "band" }, { MPI_BOR, "bor" },   { MPI_BXOR, "bxor" } };

/* the value rank r contributes at element i (small: sums and products stay exact; never
 * negative for unsigned types, so that min and max compare the same way here and in MPI) */
static long val(int r, size_t i, const op_t *op, const dtype_t *d)
{
    if (d->dt == MPI_UNSIGNED && (op->op == MPI_SUM || op->op == MPI_MIN || op->op == MPI_MAX)) {
        return (long)((r * 7 + i * 3) % 19);
    }
    if (op->op == MPI_PROD) {
        return 1 + (long)((r + i) % 2 == 0 && (i % 5) == 0);
    }
    if (op->op == MPI_BAND || op->op == MPI_BOR || op->op == MPI_BXOR) {
        return (long)((r * 37 + i * 11) & 0xff);
    }
    return (long)((r * 7 + i * 3) % 19) - 9 * (op->op != MPI_MAX);
}

static long combine(const op_t *op, long a, long b)
{
    if (op->op == MPI_SUM)
        return a + b;
    if (op->op == MPI_PROD)
        return a * b;
    if (op->op == MPI_MIN)
        return b < a ? b : a;
    if (op->op == MPI_MAX)
        return b > a ? b : a;
    if (op->op == MPI_BAND)
        return a & b;
    if (op->op == MPI_BOR)
        return a | b;
    return a ^ b;
}

static void put(const dtype_t *d, void *buf, size_t i, long v)
{
    if (d->dt == MPI_FLOAT)
        ((float *)buf)[i] = (float)v;
    else if (d->dt == MPI_DOUBLE)
        ((double *)buf)[i] = (double)v;
    else if (d->dt == MPI_INT)
        ((int *)buf)[i] = (int)v;
    else if (d->dt == MPI_LONG)
        ((long *)buf)[i] = v;
    else
        ((unsigned *)buf)[i] = (unsigned)v;
}

static long get(const dtype_t *d, const void *buf, size_t i)
{
    if (d->dt == MPI_FLOAT)
        return (long)((const float *)buf)[i];
    if (d->dt == MPI_DOUBLE)
        return (long)((const double *)buf)[i];
    if (d->dt == MPI_INT)
        return ((const int *)buf)[i];
    if (d->dt == MPI_LONG)
        return ((const long *)buf)[i];
    return (long)((const unsigned *)buf)[i];
}

/* unsigned arithmetic wraps; compare modulo the type */
static int same(const dtype_t *d, long a, long b)
{
    return d->dt == MPI_UNSIGNED ? (unsigned)a == (unsigned)b : a == b;
}

static void check(int ok, MPI_Comm comm, const char *what)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
    checks++;
    if (!all) {
        failures++;
        if (world_rank == 0 || !ok) {
            fprintf(stderr, "rank %d: FAILED %s\n", world_rank, what);
        }
    }
}

static void test_allreduce(MPI_Comm comm, const char *cname, size_t max_count)
{
    int          rank, size;
    const size_t counts[] = { 0, 1, 7, 13, 1009, 65537, 1u << 20, 16u << 20 };
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
            if (dtypes[d].is_float && o >= 4) {
                continue;
            }
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                size_t n = counts[c];
                if (n > max_count || (n > (1u << 20) && !(d == 0 && o == 0)) || (n > 65537 && o != 0)) {
                    continue;
                }
                for (int inplace = 0; inplace <= 1; inplace++) {
                    char *in = malloc(n * (size_t)dtypes[d].size + 8), *out = malloc(n * (size_t)dtypes[d].size + 8);
                    int   ok = 1;
                    char  what[200];
                    for (size_t i = 0; i < n; i++) {
                        put(&dtypes[d], inplace ? out : in, i, val(rank, i, &ops[o], &dtypes[d]));
                    }
                    {
                        size_t bytes = n * (size_t)dtypes[d].size;
                        void  *din = inplace ? NULL : dev_copy(in, bytes), *dout = dev_copy(out, bytes);
                        MPI_Allreduce(inplace ? MPI_IN_PLACE : din, dout, (int)n, dtypes[d].dt, ops[o].op, comm);
                        dev_back(out, dout, bytes);
                        if (!inplace) {
                            dev_back(in, din, 0);
                        }
                    }
                    for (size_t i = 0; i < n && ok; i++) {
                        long want = val(0, i, &ops[o], &dtypes[d]);
                        for (int r = 1; r < size; r++) {
                            want = combine(&ops[o], want, val(r, i, &ops[o], &dtypes[d]));
                        }
                        ok = same(&dtypes[d], get(&dtypes[d], out, i), want);
                        if (!ok) {
                            fprintf(stderr, "rank %d: element %zu: got %ld want %ld\n", world_rank, i,
                                    get(&dtypes[d], out, i), want);
                        }
                    }
                    snprintf(what, sizeof(what), "allreduce %s %s %s count %zu %s", cname, dtypes[d].name, ops[o].name,
                             n, inplace ? "in-place" : "");
                    check(ok, comm, what);
                    free(in);
                    free(out);
                }
            }
        }
    }
}

static void test_alltoall(MPI_Comm comm, const char *cname, size_t max_count)
{
    int          rank, size;
    const size_t counts[] = { 0, 1, 13, 1000, 65536 };
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t d = 0; d < 3; d++) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            size_t n = counts[c], es = (size_t)dtypes[d].size;
            if (n * (size_t)size > max_count) {
                continue;
            }
            for (int inplace = 0; inplace <= 1; inplace++) {
                char *in = malloc(n * (size_t)size * es + 8), *out = malloc(n * (size_t)size * es + 8);
                int   ok = 1;
                char  what[200];
                for (int p = 0; p < size; p++) {
                    for (size_t i = 0; i < n; i++) {
                        put(&dtypes[d], inplace ? out : in, (size_t)p * n + i,
                            (long)((rank * 1000 + p * 10 + (long)i) % 100000));
                    }
                }
                {
                    size_t bytes = n * (size_t)size * es;
                    void  *din = inplace ? NULL : dev_copy(in, bytes), *dout = dev_copy(out, bytes);
                    MPI_Alltoall(inplace ? MPI_IN_PLACE : din, (int)n, dtypes[d].dt, dout, (int)n, dtypes[d].dt, comm);
                    dev_back(out, dout, bytes);
                    if (!inplace) {
                        dev_back(in, din, 0);
                    }
                }
                for (int p = 0; p < size && ok; p++) {
                    for (size_t i = 0; i < n && ok; i++) {
                        ok = get(&dtypes[d], out, (size_t)p * n + i) ==
                             (long)((p * 1000 + rank * 10 + (long)i) % 100000);
                    }
                }
                snprintf(what, sizeof(what), "alltoall %s %s count %zu %s", cname, dtypes[d].name, n,
                         inplace ? "in-place" : "");
                check(ok, comm, what);
                free(in);
                free(out);
            }
        }
    }
}

static void test_allgather_rsb(MPI_Comm comm, const char *cname, size_t max_count)
{
    int          rank, size;
    const size_t counts[] = { 1, 13, 1000, 65536 };
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t d = 0; d < 3; d++) {
        const dtype_t *dt = &dtypes[d];
        size_t         es = (size_t)dt->size;
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            size_t n = counts[c], all = n * (size_t)size;
            char  *in = malloc(all * es + 8), *out = malloc(all * es + 8), what[200];
            if (all > max_count) {
                free(in);
                free(out);
                continue;
            }
            for (int inplace = 0; inplace <= 1; inplace++) {
                int ok = 1;
                for (size_t i = 0; i < n; i++) {
                    put(dt, inplace ? out : in, (inplace ? (size_t)rank * n : 0) + i,
                        (long)((rank * 31 + (long)i) % 1000));
                }
                {
                    void *din = inplace ? NULL : dev_copy(in, n * es), *dout = dev_copy(out, all * es);
                    MPI_Allgather(inplace ? MPI_IN_PLACE : din, (int)n, dt->dt, dout, (int)n, dt->dt, comm);
                    dev_back(out, dout, all * es);
                    if (!inplace) {
                        dev_back(in, din, 0);
                    }
                }
                for (int q = 0; q < size && ok; q++) {
                    for (size_t i = 0; i < n && ok; i++) {
                        ok = get(dt, out, (size_t)q * n + i) == (long)((q * 31 + (long)i) % 1000);
                    }
                }
                snprintf(what, sizeof(what), "allgather %s %s count %zu %s", cname, dt->name, n,
                         inplace ? "in-place" : "");
                check(ok, comm, what);
            }
            /* reduce_scatter_block, sum: element j of block q from rank r is (r + q + j) % 50 */
            {
                int ok = 1;
                for (int q = 0; q < size; q++) {
                    for (size_t i = 0; i < n; i++) {
                        put(dt, in, (size_t)q * n + i, (long)((rank + q + (long)i) % 50));
                    }
                }
                {
                    void *din = dev_copy(in, all * es), *dout = dev_copy(out, n * es);
                    MPI_Reduce_scatter_block(din, dout, (int)n, dt->dt, MPI_SUM, comm);
                    dev_back(out, dout, n * es);
                    dev_back(in, din, 0);
                }
                for (size_t i = 0; i < n && ok; i++) {
                    long want = 0;
                    for (int r = 0; r < size; r++) {
                        want += (r + rank + (long)i) % 50;
                    }
                    ok = get(dt, out, i) == want;
                }
                snprintf(what, sizeof(what), "reduce_scatter_block %s %s count %zu", cname, dt->name, n);
                check(ok, comm, what);
            }
            free(in);
            free(out);
        }
    }
}

/* MPI_Bcast and MPI_Reduce (and MPI_Ibcast, MPI_Ireduce), roots first, last and middle, reduce in
 * place at the root every other time: gc3 runs them on rooted plans, one per root (the full sweep
 * of every root and form is tests/mpi/test_rooted.c). */
static void test_bcast_reduce(MPI_Comm comm, const char *cname, size_t max_count)
{
    int          rank, size, k = 0;
    const size_t counts[] = { 1, 13, 1009, 65537, 1u << 20 };
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (size_t d = 0; d < 3; d++) {
        for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
            size_t n = counts[c], bytes = n * (size_t)dtypes[d].size;
            int    root = (int)((d + c) % 3 == 0 ? 0 : (d + c) % 3 == 1 ? size - 1 : size / 2);
            char  *buf = malloc(bytes + 8), what[200];
            void  *dbuf;
            int    ok = 1;
            if (n > max_count) {
                free(buf);
                continue;
            }
            for (size_t i = 0; i < n; i++) {
                put(&dtypes[d], buf, i, rank == root ? val(root, i, &ops[0], &dtypes[d]) : -1);
            }
            dbuf = dev_copy(buf, bytes);
            MPI_Bcast(dbuf, (int)n, dtypes[d].dt, root, comm);
            dev_back(buf, dbuf, bytes);
            for (size_t i = 0; i < n && ok; i++) {
                ok = same(&dtypes[d], get(&dtypes[d], buf, i), val(root, i, &ops[0], &dtypes[d]));
            }
            snprintf(what, sizeof(what), "bcast %s %s count %zu root %d", cname, dtypes[d].name, n, root);
            check(ok, comm, what);
            free(buf);
        }
    }
    for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
            if (dtypes[d].is_float && o >= 4) {
                continue;
            }
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                size_t n = counts[c], bytes = n * (size_t)dtypes[d].size;
                int    root = k % 3 == 0 ? 0 : k % 3 == 1 ? size - 1 : size / 2, inplace = (k / 3) % 2 && rank == root;
                char  *in, *out, what[200];
                void  *din, *dout;
                int    ok = 1, nonblocking = (k % 5 == 4);
                MPI_Request req;
                if (n > max_count || (n > 65537 && !(d == 0 && o == 0)) || (n > 1009 && o != 0)) {
                    continue;
                }
                k++;
                in  = malloc(bytes + 8);
                out = malloc(bytes + 8);
                for (size_t i = 0; i < n; i++) {
                    put(&dtypes[d], inplace ? out : in, i, val(rank, i, &ops[o], &dtypes[d]));
                }
                din  = inplace ? NULL : dev_copy(in, bytes);
                dout = dev_copy(out, bytes);
                if (nonblocking) {
                    MPI_Ireduce(inplace ? MPI_IN_PLACE : din, dout, (int)n, dtypes[d].dt, ops[o].op, root, comm, &req);
                    MPI_Wait(&req, MPI_STATUS_IGNORE);
                } else {
                    MPI_Reduce(inplace ? MPI_IN_PLACE : din, dout, (int)n, dtypes[d].dt, ops[o].op, root, comm);
                }
                dev_back(out, dout, bytes);
                if (!inplace) {
                    dev_back(in, din, 0);
                }
                for (size_t i = 0; i < n && ok && rank == root; i++) {
                    long want = val(0, i, &ops[o], &dtypes[d]);
                    for (int r = 1; r < size; r++) {
                        want = combine(&ops[o], want, val(r, i, &ops[o], &dtypes[d]));
                    }
                    ok = same(&dtypes[d], get(&dtypes[d], out, i), want);
                    if (!ok) {
                        fprintf(stderr, "rank %d: reduce element %zu: got %ld want %ld\n", world_rank, i,
                                get(&dtypes[d], out, i), want);
                    }
                }
                snprintf(what, sizeof(what), "%s %s %s %s count %zu root %d%s", nonblocking ? "ireduce" : "reduce",
                         cname, dtypes[d].name, ops[o].name, n, root, inplace ? " in-place" : "");
                check(ok, comm, what);
                free(in);
                free(out);
            }
        }
    }
    /* an MPI_Ibcast in flight with an MPI_Ireduce of another root */
    {
        const size_t n = 3000;
        float       *b = malloc(n * sizeof(float)), *in = malloc(n * sizeof(float)), *out = malloc(n * sizeof(float));
        void        *db, *din, *dout;
        MPI_Request  req[2];
        int          ok = 1, broot = size - 1, rroot = 0;
        char         what[200];
        for (size_t i = 0; i < n; i++) {
            b[i]  = rank == broot ? (float)(i % 97) : -1.0f;
            in[i] = (float)((rank + 1) * (int)(i % 7));
        }
        db   = dev_copy(b, n * sizeof(float));
        din  = dev_copy(in, n * sizeof(float));
        dout = dev_copy(out, n * sizeof(float));
        MPI_Ibcast(db, (int)n, MPI_FLOAT, broot, comm, &req[0]);
        MPI_Ireduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, rroot, comm, &req[1]);
        MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
        dev_back(b, db, n * sizeof(float));
        dev_back(out, dout, n * sizeof(float));
        dev_back(in, din, 0);
        for (size_t i = 0; i < n && ok; i++) {
            ok = b[i] == (float)(i % 97) && (rank != rroot || out[i] == (float)(size * (size + 1) / 2 * (int)(i % 7)));
        }
        snprintf(what, sizeof(what), "ibcast root %d + ireduce root %d in flight together on %s", broot, rroot, cname);
        check(ok, comm, what);
        free(b);
        free(in);
        free(out);
    }
}

/* Persistent collectives (MPI_*_init; Open MPI 4.1: MPIX_*_init): bound once, started several
 * times with new data in the same buffers, through MPI_Startall/MPI_Waitall and MPI_Start/MPI_Test. */
static void dev_put(void *dev, const void *host, size_t bytes)
{
    if (on_device) {
        gc3_test_copy(1, dev, host, bytes);
    }
}

static void test_persistent(MPI_Comm comm, const char *cname)
{
    int          rank, size, ok, flag;
    const size_t na = 1000, nb = 300000, nc = 777;
    float       *a_in, *a_out, *b;
    int         *c_in, *c_out;
    void        *da_in, *da_out, *db, *dc_in, *dc_out;
    MPI_Request  req[3];
    char         what[200];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    a_in   = malloc(na * sizeof(float));
    a_out  = malloc(na * sizeof(float));
    b      = malloc(nb * sizeof(float));
    c_in   = malloc(nc * (size_t)size * sizeof(int));
    c_out  = malloc(nc * (size_t)size * sizeof(int));
    da_in  = dev_copy(a_in, na * sizeof(float));
    da_out = dev_copy(a_out, na * sizeof(float));
    db     = dev_copy(b, nb * sizeof(float));
    dc_in  = dev_copy(c_in, nc * (size_t)size * sizeof(int));
    dc_out = dev_copy(c_out, nc * (size_t)size * sizeof(int));
    GC3_ALLREDUCE_INIT(da_in, da_out, (int)na, MPI_FLOAT, MPI_SUM, comm, MPI_INFO_NULL, &req[0]);
    GC3_ALLREDUCE_INIT(MPI_IN_PLACE, db, (int)nb, MPI_FLOAT, MPI_SUM, comm, MPI_INFO_NULL, &req[1]);
    GC3_ALLTOALL_INIT(dc_in, (int)nc, MPI_INT, dc_out, (int)nc, MPI_INT, comm, MPI_INFO_NULL, &req[2]);
    MPI_Wait(&req[0], MPI_STATUS_IGNORE); /* never started: returns at once */
    for (int it = 0; it < 3; it++) {
        for (size_t i = 0; i < na; i++)
            a_in[i] = (float)((rank + 1) * (int)((i + (size_t)it) % 7));
        for (size_t i = 0; i < nb; i++)
            b[i] = (float)((rank + 1) * (int)((i + 2 * (size_t)it) % 5));
        for (int q = 0; q < size; q++) {
            for (size_t i = 0; i < nc; i++)
                c_in[(size_t)q * nc + i] = rank * 100000 + q * 1000 + (int)(i % 1000) + it;
        }
        dev_put(da_in, a_in, na * sizeof(float));
        dev_put(db, b, nb * sizeof(float));
        dev_put(dc_in, c_in, nc * (size_t)size * sizeof(int));
        if (it < 2) {
            MPI_Startall(3, req);
            MPI_Waitall(3, req, MPI_STATUSES_IGNORE);
        } else { /* one at a time, the first polled with MPI_Test */
            MPI_Start(&req[0]);
            flag = 0;
            while (!flag)
                MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
            MPI_Start(&req[1]);
            MPI_Start(&req[2]);
            MPI_Wait(&req[1], MPI_STATUS_IGNORE);
            MPI_Wait(&req[2], MPI_STATUS_IGNORE);
        }
        if (on_device) {
            gc3_test_copy(1, a_out, da_out, na * sizeof(float));
            gc3_test_copy(1, b, db, nb * sizeof(float));
            gc3_test_copy(1, c_out, dc_out, nc * (size_t)size * sizeof(int));
        }
        ok = 1;
        for (size_t i = 0; i < na && ok; i++)
            ok = a_out[i] == (float)(size * (size + 1) / 2 * (int)((i + (size_t)it) % 7));
        snprintf(what, sizeof(what), "persistent allreduce %zu floats, start %d on %s", na, it + 1, cname);
        check(ok, comm, what);
        ok = 1;
        for (size_t i = 0; i < nb && ok; i++)
            ok = b[i] == (float)(size * (size + 1) / 2 * (int)((i + 2 * (size_t)it) % 5));
        snprintf(what, sizeof(what), "persistent allreduce %zu floats in place, start %d on %s", nb, it + 1, cname);
        check(ok, comm, what);
        ok = 1;
        for (int q = 0; q < size && ok; q++) {
            for (size_t i = 0; i < nc && ok; i++) {
                ok = c_out[(size_t)q * nc + i] == q * 100000 + rank * 1000 + (int)(i % 1000) + it;
            }
        }
        snprintf(what, sizeof(what), "persistent alltoall %zu ints per peer, start %d on %s", nc, it + 1, cname);
        check(ok, comm, what);
    }
    for (int k = 0; k < 3; k++) {
        MPI_Request_free(&req[k]);
    }
    if (on_device) {
        gc3_test_free(1, da_in);
        gc3_test_free(1, da_out);
        gc3_test_free(1, db);
        gc3_test_free(1, dc_in);
        gc3_test_free(1, dc_out);
    }
    free(a_in);
    free(a_out);
    free(b);
    free(c_in);
    free(c_out);
}

/* Several nonblocking calls in flight on one communicator, two of them on the same plan
 * (same size class), completed by MPI_Waitall; then one polled with MPI_Test. */
static void test_nonblocking(MPI_Comm comm, const char *cname)
{
    int          rank, size, ok = 1;
    const size_t n[4] = { 5, 300000, 7, 1000 };
    float       *in[4], *out[4];
    void        *din[4], *dout[4];
    MPI_Request  req[5];
    char         what[200];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int k = 0; k < 4; k++) {
        in[k]  = malloc(n[k] * (size_t)size * sizeof(float) + 8);
        out[k] = malloc(n[k] * (size_t)size * sizeof(float) + 8);
        for (size_t i = 0; i < n[k] * (size_t)size; i++) {
            in[k][i] = (float)((rank + 1) * (int)((i + (size_t)k) % 11));
        }
        din[k]  = dev_copy(in[k], n[k] * (size_t)size * sizeof(float));
        dout[k] = dev_copy(out[k], n[k] * (size_t)size * sizeof(float));
    }
    for (int k = 0; k < 3; k++) {
        MPI_Iallreduce(din[k], dout[k], (int)n[k], MPI_FLOAT, MPI_SUM, comm, &req[k]);
    }
    MPI_Ialltoall(din[3], (int)n[3], MPI_FLOAT, dout[3], (int)n[3], MPI_FLOAT, comm, &req[3]);
    MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
    for (int k = 0; k < 4; k++) {
        dev_back(out[k], dout[k], n[k] * (size_t)size * sizeof(float));
    }
    for (int k = 0; k < 3 && ok; k++) {
        for (size_t i = 0; i < n[k] && ok; i++) {
            ok = out[k][i] == (float)(size * (size + 1) / 2 * (int)((i + (size_t)k) % 11));
        }
    }
    for (int q = 0; q < size && ok; q++) {
        for (size_t i = 0; i < n[3] && ok; i++) {
            ok = out[3][(size_t)q * n[3] + i] == (float)((q + 1) * (int)(((size_t)rank * n[3] + i + 3) % 11));
        }
    }
    snprintf(what, sizeof(what), "iallreduce x3 + ialltoall in flight together on %s", cname);
    check(ok, comm, what);
    /* polled to completion with MPI_Test while the host does something else */
    {
        int    flag  = 0;
        long   spins = 0;
        float *h     = malloc(n[1] * sizeof(float) + 8);
        void  *dh = dev_copy(in[1], n[1] * sizeof(float)), *dr = dev_copy(h, n[1] * sizeof(float));
        MPI_Iallreduce(dh, dr, (int)n[1], MPI_FLOAT, MPI_MAX, comm, &req[4]);
        while (!flag) {
            MPI_Test(&req[4], &flag, MPI_STATUS_IGNORE);
            spins++;
        }
        dev_back(h, dr, n[1] * sizeof(float));
        dev_back(in[1], dh, 0);
        ok = 1;
        for (size_t i = 0; i < n[1] && ok; i++) {
            ok = h[i] == (float)(size * (int)((i + 1) % 11));
        }
        snprintf(what, sizeof(what), "iallreduce completed by MPI_Test on %s (%ld tests)", cname, spins);
        check(ok, comm, what);
        free(h);
    }
    for (int k = 0; k < 4; k++) {
        if (on_device) {
            gc3_test_free(1, din[k]);
        }
        free(in[k]);
        free(out[k]);
    }
}

/* MPI_Iallgather (in place and not) and MPI_Ireduce_scatter_block (sum, max) in flight together
 * with an MPI_Iallreduce, completed by MPI_Waitall, then one polled with MPI_Test; then their
 * persistent forms started three times with new data. Element i of rank r's block: ag_val. */
static int ag_val(int r, size_t i, int salt)
{
    return (int)(((long)r * 7919 + (long)i * 31 + salt) % 100003);
}

static int rsb_ok(const int *out, int rank, int size, size_t n, int salt, int max)
{
    for (size_t i = 0; i < n; i++) {
        long want = max ? -1 : 0;
        for (int r = 0; r < size; r++) {
            long v = ag_val(r, (size_t)rank * n + i, salt);
            want   = max ? (v > want ? v : want) : want + v;
        }
        if (out[i] != (int)want) {
            return 0;
        }
    }
    return 1;
}

static int ag_ok(const int *out, int size, size_t n, int salt)
{
    for (int q = 0; q < size; q++) {
        for (size_t i = 0; i < n; i++) {
            if (out[(size_t)q * n + i] != ag_val(q, i, salt)) {
                return 0;
            }
        }
    }
    return 1;
}

static void test_nb_allgather_rsb(MPI_Comm comm, const char *cname)
{
    enum { AG, AG_INPLACE, RSB_SUM, RSB_MAX, AR, NCALL };
    const size_t n[NCALL] = { 1000, 13, 777, 5001, 4099 };
    int          rank, size, ok, *in[NCALL], *out[NCALL];
    void        *din[NCALL], *dout[NCALL];
    MPI_Request  req[NCALL];
    char         what[200];

    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int round = 0; round < 2; round++) { /* cold (plans set up meanwhile), then warm */
        for (int k = 0; k < NCALL; k++) {
            size_t all = n[k] * (size_t)size;
            in[k]      = malloc(all * sizeof(int) + 8);
            out[k]     = malloc(all * sizeof(int) + 8);
            for (size_t i = 0; i < all; i++) {
                in[k][i]  = ag_val(rank, k == AG || k == AR ? i % n[k] : i, k + round);
                out[k][i] = -7;
            }
            if (k == AG_INPLACE) {
                for (size_t i = 0; i < n[k]; i++) {
                    out[k][(size_t)rank * n[k] + i] = ag_val(rank, i, k + round);
                }
            }
            din[k]  = dev_copy(in[k], all * sizeof(int));
            dout[k] = dev_copy(out[k], all * sizeof(int));
        }
        MPI_Iallgather(din[AG], (int)n[AG], MPI_INT, dout[AG], (int)n[AG], MPI_INT, comm, &req[AG]);
        MPI_Iallreduce(din[AR], dout[AR], (int)n[AR], MPI_INT, MPI_SUM, comm, &req[AR]);
        MPI_Ireduce_scatter_block(din[RSB_SUM], dout[RSB_SUM], (int)n[RSB_SUM], MPI_INT, MPI_SUM, comm, &req[RSB_SUM]);
        MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dout[AG_INPLACE], (int)n[AG_INPLACE], MPI_INT, comm,
                       &req[AG_INPLACE]);
        MPI_Ireduce_scatter_block(din[RSB_MAX], dout[RSB_MAX], (int)n[RSB_MAX], MPI_INT, MPI_MAX, comm, &req[RSB_MAX]);
        MPI_Waitall(NCALL, req, MPI_STATUSES_IGNORE);
        for (int k = 0; k < NCALL; k++) {
            dev_back(out[k], dout[k], n[k] * (size_t)size * sizeof(int));
            dev_back(in[k], din[k], 0);
        }
        ok = ag_ok(out[AG], size, n[AG], AG + round);
        snprintf(what, sizeof(what), "iallgather %zu ints on %s (round %d)", n[AG], cname, round);
        check(ok, comm, what);
        ok = ag_ok(out[AG_INPLACE], size, n[AG_INPLACE], AG_INPLACE + round);
        snprintf(what, sizeof(what), "iallgather %zu ints in place on %s (round %d)", n[AG_INPLACE], cname, round);
        check(ok, comm, what);
        ok = rsb_ok(out[RSB_SUM], rank, size, n[RSB_SUM], RSB_SUM + round, 0);
        snprintf(what, sizeof(what), "ireduce_scatter_block sum %zu ints on %s (round %d)", n[RSB_SUM], cname, round);
        check(ok, comm, what);
        ok = rsb_ok(out[RSB_MAX], rank, size, n[RSB_MAX], RSB_MAX + round, 1);
        snprintf(what, sizeof(what), "ireduce_scatter_block max %zu ints on %s (round %d)", n[RSB_MAX], cname, round);
        check(ok, comm, what);
        ok = 1;
        for (size_t i = 0; i < n[AR] && ok; i++) {
            long want = 0;
            for (int r = 0; r < size; r++) {
                want += ag_val(r, i, AR + round);
            }
            ok = out[AR][i] == (int)want;
        }
        snprintf(what, sizeof(what), "iallreduce in flight with them on %s (round %d)", cname, round);
        check(ok, comm, what);
        for (int k = 0; k < NCALL; k++) {
            free(in[k]);
            free(out[k]);
        }
    }
    /* one polled with MPI_Test */
    {
        size_t m = 65536, all = m * (size_t)size;
        int   *h = malloc(m * sizeof(int)), *r = malloc(all * sizeof(int)), flag = 0;
        void  *dh, *dr;
        for (size_t i = 0; i < m; i++) {
            h[i] = ag_val(rank, i, 9);
        }
        dh = dev_copy(h, m * sizeof(int));
        dr = dev_copy(r, all * sizeof(int));
        MPI_Iallgather(dh, (int)m, MPI_INT, dr, (int)m, MPI_INT, comm, &req[0]);
        while (!flag) {
            MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE);
        }
        dev_back(r, dr, all * sizeof(int));
        dev_back(h, dh, 0);
        snprintf(what, sizeof(what), "iallgather %zu ints completed by MPI_Test on %s", m, cname);
        check(ag_ok(r, size, m, 9), comm, what);
        free(h);
        free(r);
    }
    /* persistent: allgather (out of place, in place), reduce_scatter_block (sum) */
    {
        const size_t m   = 2049;
        size_t       all = m * (size_t)size;
        int        *ain = malloc(m * sizeof(int)), *aout = malloc(all * sizeof(int)), *bout = malloc(all * sizeof(int));
        int        *cin = malloc(all * sizeof(int)), *cout = malloc(m * sizeof(int));
        void       *dain = dev_copy(ain, m * sizeof(int)), *daout = dev_copy(aout, all * sizeof(int));
        void       *dbout = dev_copy(bout, all * sizeof(int)), *dcin = dev_copy(cin, all * sizeof(int));
        void       *dcout = dev_copy(cout, m * sizeof(int));
        MPI_Request p[3];
        GC3_ALLGATHER_INIT(dain, (int)m, MPI_INT, daout, (int)m, MPI_INT, comm, MPI_INFO_NULL, &p[0]);
        GC3_ALLGATHER_INIT(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, dbout, (int)m, MPI_INT, comm, MPI_INFO_NULL, &p[1]);
        GC3_REDUCE_SCATTER_BLOCK_INIT(dcin, dcout, (int)m, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL, &p[2]);
        for (int it = 0; it < 3; it++) {
            for (size_t i = 0; i < m; i++) {
                ain[i]                     = ag_val(rank, i, 20 + it);
                bout[(size_t)rank * m + i] = ag_val(rank, i, 30 + it);
            }
            for (size_t i = 0; i < all; i++) {
                cin[i] = ag_val(rank, i, 40 + it);
            }
            dev_put(dain, ain, m * sizeof(int));
            dev_put(dbout, bout, all * sizeof(int));
            dev_put(dcin, cin, all * sizeof(int));
            if (it < 2) {
                MPI_Startall(3, p);
                MPI_Waitall(3, p, MPI_STATUSES_IGNORE);
            } else {
                int flag = 0;
                MPI_Start(&p[2]);
                while (!flag) {
                    MPI_Test(&p[2], &flag, MPI_STATUS_IGNORE);
                }
                MPI_Start(&p[1]);
                MPI_Start(&p[0]);
                MPI_Waitall(2, p, MPI_STATUSES_IGNORE);
            }
            if (on_device) {
                gc3_test_copy(1, aout, daout, all * sizeof(int));
                gc3_test_copy(1, bout, dbout, all * sizeof(int));
                gc3_test_copy(1, cout, dcout, m * sizeof(int));
            }
            snprintf(what, sizeof(what), "persistent allgather %zu ints, start %d on %s", m, it + 1, cname);
            check(ag_ok(aout, size, m, 20 + it), comm, what);
            snprintf(what, sizeof(what), "persistent allgather %zu ints in place, start %d on %s", m, it + 1, cname);
            check(ag_ok(bout, size, m, 30 + it), comm, what);
            snprintf(what, sizeof(what), "persistent reduce_scatter_block %zu ints, start %d on %s", m, it + 1, cname);
            check(rsb_ok(cout, rank, size, m, 40 + it, 0), comm, what);
        }
        for (int k = 0; k < 3; k++) {
            MPI_Request_free(&p[k]);
        }
        if (on_device) {
            gc3_test_free(1, dain);
            gc3_test_free(1, daout);
            gc3_test_free(1, dbout);
            gc3_test_free(1, dcin);
            gc3_test_free(1, dcout);
        }
        free(ain);
        free(aout);
        free(bout);
        free(cin);
        free(cout);
    }
}

/* Device buffers written on the legacy default stream just before the call, with no
 * synchronization (cudaMemset is asynchronous): gc3's stream is ordered after that stream, so
 * the call must see the new values, never the old ones. */
static void test_stream_order(MPI_Comm comm, const char *cname)
{
#ifdef GC3_HAVE_CUDA
    const size_t n = 16u << 20; /* 64 MB of ints: the memset is still running when the call starts */
    int          size, ok = 1;
    int         *h = malloc(n * sizeof(int));
    void        *d = gc3_test_alloc(1, n * sizeof(int)), *r = gc3_test_alloc(1, n * sizeof(int));
    char         what[160];

    MPI_Comm_size(comm, &size);
    cudaDeviceSynchronize();
    for (int k = 1; k <= 3 && h != NULL && d != NULL && r != NULL; k++) {
        cudaMemset(d, k, n * sizeof(int));
        MPI_Allreduce(d, r, (int)n, MPI_INT, MPI_SUM, comm);
        cudaMemcpy(h, r, n * sizeof(int), cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < n && ok; i++) {
            ok = h[i] == size * (int)(0x01010101u * (unsigned)k);
            if (!ok) {
                fprintf(stderr, "rank %d: round %d element %zu: got %#x want %#x\n", world_rank, k, i, (unsigned)h[i],
                        (unsigned)(size * (int)(0x01010101u * (unsigned)k)));
            }
        }
    }
    snprintf(what, sizeof(what),
             "allreduce of 64 MB written by cudaMemset on the default stream just before the call, on %s", cname);
    check(ok && h != NULL && d != NULL && r != NULL, comm, what);
    gc3_test_free(1, d);
    gc3_test_free(1, r);
    free(h);
#else
    (void)comm;
    (void)cname;
#endif
}

/* The same for small calls, which go to a resident kernel: a 512 MB cudaMemset on the legacy stream,
 * then one of the small input, then the call (right after a call that keeps the kernel resident), so
 * the call is posted while that stream still runs; checked each round against the host's sum. Whether
 * the host waits, the kernel waits, or the kernel gives up and the host launches it again
 * (coll_gc3_wait_default_stream, coll_gc3_resident_us), the call must see the new values. */
static void test_stream_order_small(MPI_Comm comm, const char *cname, int rounds)
{
#ifdef GC3_HAVE_CUDA
    const size_t n = 1000, big = (size_t)512 << 20; /* an odd count: LL's partial lines */
    int          size, ok      = 1;
    int          h[1000];
    void        *d = gc3_test_alloc(1, n * sizeof(int)), *r = gc3_test_alloc(1, n * sizeof(int)), *b = NULL;
    char         what[200];

    MPI_Comm_size(comm, &size);
    cudaMalloc(&b, big);
    cudaDeviceSynchronize();
    for (int k = 1; k <= rounds && ok && b != NULL && d != NULL && r != NULL; k++) {
        const unsigned v = (unsigned)(k % 100 + 1);
        MPI_Allreduce(d, r, (int)n, MPI_INT, MPI_SUM, comm); /* the kernel stays resident */
        cudaMemset(b, k, big);
        cudaMemset(d, (int)v, n * sizeof(int));
        MPI_Allreduce(d, r, (int)n, MPI_INT, MPI_SUM, comm);
        cudaMemcpy(h, r, n * sizeof(int), cudaMemcpyDeviceToHost);
        for (size_t i = 0; i < n && ok; i++) {
            ok = h[i] == size * (int)(0x01010101u * v);
            if (!ok) {
                fprintf(stderr, "rank %d: round %d element %zu: got %#x want %#x\n", world_rank, k, i, (unsigned)h[i],
                        (unsigned)(size * (int)(0x01010101u * v)));
            }
        }
    }
    snprintf(what, sizeof(what),
             "%d small allreduces, each written by cudaMemset on the default stream behind 512 MB of it, on %s", rounds,
             cname);
    check(ok && b != NULL && d != NULL && r != NULL, comm, what);
    cudaFree(b);
    gc3_test_free(1, d);
    gc3_test_free(1, r);
#else
    (void)comm;
    (void)cname;
    (void)rounds;
#endif
}

/* MPI_Scan and MPI_Exscan: every datatype and op of the tables, counts 1 to 1M, in place and not, blocking,
 * nonblocking and persistent (started twice), against the prefix computed here (exscan: ranks 1 on; MPI leaves
 * rank 0's receive buffer undefined) */
static void test_scans(MPI_Comm comm, const char *cname, size_t max_count)
{
    int          rank, size, k = 0;
    const size_t counts[] = { 1, 13, 1009, 65537, 1u << 20 };
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int ex = 0; ex <= 1; ex++) {
        for (size_t d = 0; d < sizeof(dtypes) / sizeof(dtypes[0]); d++) {
            for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
                if (dtypes[d].is_float && o >= 4) {
                    continue;
                }
                for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                    const size_t n = counts[c], bytes = n * (size_t)dtypes[d].size;
                    const int    inplace = k % 2, form = (k / 2) % 3; /* blocking, nonblocking, persistent */
                    char        *in, *out, what[200];
                    void        *din, *dout;
                    int          ok = 1, rc = MPI_SUCCESS;
                    MPI_Request  req = MPI_REQUEST_NULL;
                    if (n > max_count || (n > 65537 && !(d == 0 && o == 0)) || (n > 1009 && o != 0)) {
                        continue;
                    }
                    k++;
                    in  = malloc(bytes + 8);
                    out = malloc(bytes + 8);
                    for (size_t i = 0; i < n; i++) {
                        put(&dtypes[d], inplace ? out : in, i, val(rank, i, &ops[o], &dtypes[d]));
                    }
                    din  = inplace ? MPI_IN_PLACE : dev_copy(in, bytes);
                    dout = dev_copy(out, bytes);
                    if (form == 2) {
                        rc = ex ? GC3_EXSCAN_INIT(din, dout, (int)n, dtypes[d].dt, ops[o].op, comm, MPI_INFO_NULL, &req)
                                : GC3_SCAN_INIT(din, dout, (int)n, dtypes[d].dt, ops[o].op, comm, MPI_INFO_NULL, &req);
                        for (int t = 0; t < (inplace ? 1 : 2) && rc == MPI_SUCCESS; t++) {
                            rc = MPI_Start(&req);
                            rc = rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
                        }
                        if (req != MPI_REQUEST_NULL) {
                            MPI_Request_free(&req);
                        }
                    } else if (form == 1) {
                        rc = ex ? MPI_Iexscan(din, dout, (int)n, dtypes[d].dt, ops[o].op, comm, &req)
                                : MPI_Iscan(din, dout, (int)n, dtypes[d].dt, ops[o].op, comm, &req);
                        rc = rc == MPI_SUCCESS ? MPI_Wait(&req, MPI_STATUS_IGNORE) : rc;
                    } else {
                        rc = ex ? MPI_Exscan(din, dout, (int)n, dtypes[d].dt, ops[o].op, comm)
                                : MPI_Scan(din, dout, (int)n, dtypes[d].dt, ops[o].op, comm);
                    }
                    dev_back(out, dout, bytes);
                    if (!inplace) {
                        dev_back(in, din, 0);
                    }
                    ok = rc == MPI_SUCCESS;
                    for (size_t i = 0; i < n && ok && !(ex && rank == 0); i++) {
                        long want = val(0, i, &ops[o], &dtypes[d]);
                        for (int r = 1; r < (ex ? rank : rank + 1); r++) {
                            want = combine(&ops[o], want, val(r, i, &ops[o], &dtypes[d]));
                        }
                        if (!same(&dtypes[d], get(&dtypes[d], out, i), want)) {
                            fprintf(stderr, "rank %d: %s %s %s count %zu element %zu: got %ld, expected %ld\n", rank,
                                    ex ? "exscan" : "scan", dtypes[d].name, ops[o].name, n, i, get(&dtypes[d], out, i),
                                    want);
                            ok = 0;
                        }
                    }
                    snprintf(what, sizeof(what), "%s%s %s %s %s count %zu%s",
                             form == 1   ? "i"
                             : form == 2 ? "persistent "
                                         : "",
                             ex ? "exscan" : "scan", cname, dtypes[d].name, ops[o].name, n, inplace ? " in place" : "");
                    check(ok, comm, what);
                    free(in);
                    free(out);
                }
            }
        }
    }
}

/* ---------------------------------------------------------------- per-rank counts
 * MPI_Allgatherv, MPI_Alltoallv and MPI_Reduce_scatter with count matrices of five shapes that every rank
 * draws alike (uniform, zeros, 1:1000 skew, one rank holding everything, displacements permuted with gaps),
 * out of place and in place where gc3 runs them: every element of every segment against a host
 * computation, every element outside them against what it held before. */
enum { VS_UNIFORM, VS_ZEROS, VS_SKEW, VS_ONE, VS_GAPS, VS_NEG, VS_N };
static const char *vs_name[VS_N] = {
    "uniform", "zeros", "skew", "one rank holds all", "permuted with gaps", "negative displacements on the last rank"
};

static uint64_t vs_rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* cnt[q * n + r]: elements from rank q to rank r */
static void vs_counts(int shape, int n, int scale, uint64_t *s, int *cnt)
{
    for (int q = 0; q < n; q++) {
        for (int r = 0; r < n; r++) {
            int c = scale / 8 + 1;
            switch (shape) {
            case VS_ZEROS:
                c = vs_rng(s) % 3 == 0 ? 0 : 1 + (int)(vs_rng(s) % (uint64_t)(scale / 4 + 1));
                break;
            case VS_SKEW:
                c = vs_rng(s) % 2 ? scale : 1;
                break;
            case VS_ONE:
                c = q == 0 ? scale : 0;
                break;
            case VS_GAPS:
                c = (int)(vs_rng(s) % (uint64_t)(scale / 4 + 2));
                break;
            default:
                break;
            }
            cnt[q * n + r] = c;
        }
    }
}

/* displacements of n segments len[i * stride], in order or permuted with gaps (every rank draws them alike);
 * returns the elements they span (with a tail) */
static int vs_place(int n, const int *len, int stride, int gaps, uint64_t *s, int *disp)
{
    int *order = malloc((size_t)n * sizeof(int)), at = 0;
    for (int i = 0; i < n; i++) {
        order[i] = i;
    }
    for (int i = n - 1; gaps && i > 0; i--) {
        int j = (int)(vs_rng(s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < n; i++) {
        at += gaps ? (int)(vs_rng(s) % 5) : 0;
        disp[order[i]] = at;
        at += len[order[i] * stride];
    }
    free(order);
    return at + 3;
}

static int vs_val(int q, int i)
{
    return (q * 131 + i * 7) % 1000 - 300;
}

static void test_vcolls(MPI_Comm comm, const char *cname, int scale)
{
    int      rank, n;
    MPI_Comm other;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int *cnt = malloc((size_t)n * (size_t)n * sizeof(int)), *sd = malloc((size_t)n * (size_t)n * sizeof(int));
    int *rd = malloc((size_t)n * (size_t)n * sizeof(int)), *send_len = malloc((size_t)n * sizeof(int));
    int *recv_len = malloc((size_t)n * sizeof(int));

    for (int shape = 0; shape < 3 * VS_N; shape++) {
        /* nb 1: the nonblocking forms, beside an MPI_Iallreduce on another communicator; 2: persistent, started
         * twice */
        const int nb = shape / VS_N;
        for (int inplace = 0; inplace <= 1; inplace++) {
            for (int coll = 0; coll < 3; coll++) { /* alltoallv, allgatherv, reduce_scatter */
                const int sh = shape % VS_N;
                uint64_t  s  = 88172645463325252ull + (uint64_t)sh * 7919u + (uint64_t)inplace * 104729u;
                char      what[200];
                int       ok = 1;
                if ((coll == 2 && inplace) || (sh == VS_NEG && coll == 2)) {
                    continue; /* gc3 runs reduce_scatter out of place (tested staged elsewhere) */
                }
                vs_counts(sh, n, scale, &s, cnt);
                if (coll > 0) { /* one count per rank: row 0 everywhere */
                    for (int q = 1; q < n; q++) {
                        memcpy(cnt + q * n, cnt, (size_t)n * sizeof(int));
                    }
                }
                if (coll == 0 && inplace) { /* symmetric: what r sends to q is what it gets from q */
                    for (int q = 0; q < n; q++) {
                        for (int r = 0; r < q; r++) {
                            cnt[q * n + r] = cnt[r * n + q];
                        }
                    }
                }
                for (int r = 0; r < n; r++) { /* sd: row r of rank r's input, rd: rank r's output */
                    send_len[r] = vs_place(n, cnt + r * n, 1, sh == VS_GAPS, &s, sd + r * n);
                    recv_len[r] =
                        vs_place(n, coll == 0 ? cnt + r : cnt, coll == 0 ? n : 1, sh == VS_GAPS, &s, rd + r * n);
                    if (coll == 0 && inplace) {
                        memcpy(sd + r * n, rd + r * n, (size_t)n * sizeof(int));
                        send_len[r] = recv_len[r];
                    }
                }
                if (sh == VS_ZEROS && coll < 2) { /* an empty segment's displacement may be anything (MPI) */
                    for (int r = 0; r < n; r++) {
                        for (int q = 0; q < n; q++) {
                            const int weird = q % 2 ? -5 : 1 << 28;
                            sd[r * n + q]   = coll == 0 && cnt[r * n + q] == 0 ? weird : sd[r * n + q];
                            rd[r * n + q]   = (coll == 0 ? cnt[q * n + r] : cnt[q]) == 0 ? weird : rd[r * n + q];
                        }
                    }
                }
                if (coll == 2) {
                    int at = 0; /* reduce_scatter: the input is the blocks in rank order, no gaps */
                    for (int q = 0; q < n; q++) {
                        sd[rank * n + q] = at;
                        at += cnt[q];
                    }
                    send_len[rank] = at;
                    recv_len[rank] = cnt[rank] + 3;
                }
                const int ilen = send_len[rank], olen = recv_len[rank];
                int *in = malloc(((size_t)ilen + 1) * sizeof(int)), *out = malloc(((size_t)olen + 1) * sizeof(int));
                int *before = malloc(((size_t)olen + 1) * sizeof(int)), *exp = malloc(((size_t)olen + 1) * sizeof(int));
                for (int i = 0; i < ilen; i++) {
                    in[i] = vs_val(rank, i);
                }
                for (int i = 0; i < olen; i++) {
                    out[i] = -7 - i;
                }
                if (inplace && coll == 0) {
                    memcpy(out, in, (size_t)olen * sizeof(int));
                } else if (inplace && coll == 1) {
                    memcpy(out + rd[rank * n + rank], in, (size_t)cnt[rank] * sizeof(int));
                }
                memcpy(before, out, (size_t)olen * sizeof(int));
                memcpy(exp, out, (size_t)olen * sizeof(int));
                for (int q = 0; q < n; q++) { /* q's input is vs_val(q, i) at q's positions */
                    if (coll == 0) {
                        for (int i = 0; i < cnt[q * n + rank]; i++) {
                            exp[rd[rank * n + q] + i] = vs_val(q, sd[q * n + rank] + i);
                        }
                    } else if (coll == 1) {
                        for (int i = 0; i < cnt[q]; i++) {
                            exp[rd[rank * n + q] + i] = vs_val(q, i);
                        }
                    } else {
                        int at = 0;
                        for (int j = 0; j < rank; j++) {
                            at += cnt[j];
                        }
                        for (int i = 0; i < cnt[rank]; i++) {
                            exp[i] = q == 0 ? vs_val(0, at + i) : exp[i] + vs_val(q, at + i);
                        }
                    }
                }
                {
                    int  *rcnt = malloc((size_t)n * sizeof(int)), rc = MPI_SUCCESS;
                    void *din  = inplace ? MPI_IN_PLACE : dev_copy(in, (size_t)ilen * sizeof(int));
                    void *dout = dev_copy(out, (size_t)olen * sizeof(int)), *rb = dout;
                    /* VS_NEG: the last rank's receive buffer 2 elements further, its displacements 2 less */
                    const int shift = sh == VS_NEG && rank == n - 1 ? 2 : 0;
                    for (int q = 0; q < n; q++) {
                        rcnt[q] = coll == 0 ? cnt[q * n + rank] : cnt[q];
                        rd[rank * n + q] -= shift;
                    }
                    rb = (char *)dout + shift * (int)sizeof(int);
                    /* VS_ONE: a side of nothing to move given as NULL (MPI allows it): the send buffer of the ranks
                     * that send nothing, reduce_scatter's receive buffer of those that get nothing */
                    void *sb = din, *ob = dout;
                    if (sh == VS_ONE && !inplace) {
                        int sends = 0;
                        for (int q = 0; q < n; q++) {
                            sends += coll == 0 ? cnt[rank * n + q] : coll == 1 ? (q == 0 ? cnt[rank] : 0) : cnt[q];
                        }
                        sb = sends == 0 ? NULL : sb;
                        ob = coll == 2 && rcnt[rank] == 0 ? NULL : ob;
                    }
                    MPI_Request req[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
                    int         sum[2] = { rank + 1, 0 };
                    if (nb == 1) { /* in flight together with an allreduce of another communicator, started after it */
                        MPI_Comm_dup(comm, &other);
                    }
                    if (nb == 2) {
                        rc = coll == 0   ? GC3_ALLTOALLV_INIT(sb, cnt + rank * n, sd + rank * n, MPI_INT, rb, rcnt,
                                                              rd + rank * n, MPI_INT, comm, MPI_INFO_NULL, &req[0])
                             : coll == 1 ? GC3_ALLGATHERV_INIT(sb, cnt[rank], MPI_INT, rb, rcnt, rd + rank * n, MPI_INT,
                                                               comm, MPI_INFO_NULL, &req[0])
                                         : GC3_REDUCE_SCATTER_INIT(sb, ob, rcnt, MPI_INT, MPI_SUM, comm, MPI_INFO_NULL,
                                                                   &req[0]);
                        /* the same result twice (in place once: an alltoallv's second start would swap back) */
                        for (int k = 0; k < (inplace ? 1 : 2) && rc == MPI_SUCCESS; k++) {
                            rc = MPI_Start(&req[0]);
                            rc = rc == MPI_SUCCESS ? MPI_Wait(&req[0], MPI_STATUS_IGNORE) : rc;
                        }
                        if (req[0] != MPI_REQUEST_NULL) {
                            MPI_Request_free(&req[0]);
                        }
                    } else if (coll == 0) {
                        rc = nb ? MPI_Ialltoallv(sb, cnt + rank * n, sd + rank * n, MPI_INT, rb, rcnt, rd + rank * n,
                                                 MPI_INT, comm, &req[0])
                                : MPI_Alltoallv(sb, cnt + rank * n, sd + rank * n, MPI_INT, rb, rcnt, rd + rank * n,
                                                MPI_INT, comm);
                    } else if (coll == 1) {
                        rc = nb ? MPI_Iallgatherv(sb, cnt[rank], MPI_INT, rb, rcnt, rd + rank * n, MPI_INT, comm,
                                                  &req[0])
                                : MPI_Allgatherv(sb, cnt[rank], MPI_INT, rb, rcnt, rd + rank * n, MPI_INT, comm);
                    } else {
                        rc = nb ? MPI_Ireduce_scatter(sb, ob, rcnt, MPI_INT, MPI_SUM, comm, &req[0])
                                : MPI_Reduce_scatter(sb, ob, rcnt, MPI_INT, MPI_SUM, comm);
                    }
                    if (nb == 1) {
                        rc = rc == MPI_SUCCESS ? MPI_Iallreduce(sum, sum + 1, 1, MPI_INT, MPI_SUM, other, &req[1]) : rc;
                        rc = rc == MPI_SUCCESS ? MPI_Waitall(2, req, MPI_STATUSES_IGNORE) : rc;
                        if (rc == MPI_SUCCESS && sum[1] != n * (n + 1) / 2) {
                            fprintf(stderr, "rank %d: the allreduce beside it summed %d, expected %d\n", rank, sum[1],
                                    n * (n + 1) / 2);
                            rc = MPI_ERR_OTHER;
                        }
                        MPI_Comm_free(&other);
                    }
                    if (!inplace) {
                        dev_back(in, din, (size_t)ilen * sizeof(int));
                    }
                    dev_back(out, dout, (size_t)olen * sizeof(int));
                    ok = rc == MPI_SUCCESS;
                    for (int i = 0; i < olen && ok; i++) {
                        if (out[i] != exp[i]) {
                            fprintf(stderr, "rank %d: %s%s shape %d: element %d of %d is %d, expected %d (held %d)\n",
                                    rank,
                                    nb == 1   ? "i"
                                    : nb == 2 ? "persistent "
                                              : "",
                                    coll == 0   ? "alltoallv"
                                    : coll == 1 ? "allgatherv"
                                                : "reduce_scatter",
                                    sh, i, olen, out[i], exp[i], before[i]);
                            ok = 0;
                        }
                    }
                    free(rcnt);
                }
                free(in);
                free(out);
                free(before);
                free(exp);
                snprintf(what, sizeof(what), "%s %s%s%s %s %s", cname, nb == 1 ? "i" : "", nb == 2 ? "persistent " : "",
                         coll == 0   ? "alltoallv"
                         : coll == 1 ? "allgatherv"
                                     : "reduce_scatter",
                         vs_name[sh], inplace ? "in place" : "out of place");
                check(ok, comm, what);
            }
        }
    }
    free(cnt);
    free(sd);
    free(rd);
    free(send_len);
    free(recv_len);
}

/* MPI_Gather(v) and MPI_Scatter(v) with the count shapes above (row 0: one count per rank), every root, in place
 * at the root and not, blocking, nonblocking beside an MPI_Iallreduce on another communicator, persistent started
 * twice; the non-roots pass NULL for the side they do not have, the root's buffer has its segments permuted with
 * gaps (VS_GAPS): every element of the root's (gather) or every rank's (scatter) buffer against a host computation,
 * every element outside the segments against what it held. MPI_Gather and MPI_Scatter: the uniform shape. */
static void test_rooted_vcolls(MPI_Comm comm, const char *cname, int scale)
{
    int rank, n;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    int *cnt = malloc((size_t)n * (size_t)n * sizeof(int)), *disp = malloc((size_t)n * sizeof(int));

    for (int shape = 0; shape < 3 * VS_N; shape++) {
        const int nb = shape / VS_N, sh = shape % VS_N;
        for (int coll = 0; coll < 4; coll++) { /* gatherv, scatterv, gather, scatter */
            const int scat = coll % 2, plain = coll >= 2;
            if (sh == VS_NEG || (plain && sh != VS_UNIFORM)) {
                continue;
            }
            for (int root = 0; root < n; root++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    uint64_t s = 1442695040888963407ull + (uint64_t)sh * 7919u + (uint64_t)root * 31u;
                    char     what[200];
                    int      ok = 1, rc = MPI_SUCCESS;
                    vs_counts(sh, n, scale, &s, cnt); /* row 0: rank q's count cnt[q] */
                    const int big = vs_place(n, cnt, 1, sh == VS_GAPS, &s, disp), at_root = rank == root;
                    const int mine = cnt[rank], pad = 3;
                    /* the root's big buffer (gather: output; scatter: input), everyone's own block (+pad) */
                    int *bigb = malloc(((size_t)big + 1) * sizeof(int)),
                        *own  = malloc(((size_t)mine + pad) * sizeof(int));
                    int *expb = malloc(((size_t)big + 1) * sizeof(int)),
                        *expo = malloc(((size_t)mine + pad) * sizeof(int));
                    for (int i = 0; i < big; i++) {
                        bigb[i] = scat ? vs_val(root, i) : -7 - i;
                    }
                    for (int i = 0; i < mine + pad; i++) {
                        own[i] = scat ? -9 - i : (i < mine ? vs_val(rank, i) : -9 - i);
                    }
                    if (inplace && at_root && !scat) { /* the root's block is in place already */
                        memcpy(bigb + disp[rank], own, (size_t)mine * sizeof(int));
                    }
                    memcpy(expb, bigb, (size_t)big * sizeof(int));
                    memcpy(expo, own, ((size_t)mine + pad) * sizeof(int));
                    for (int q = 0; q < n && !scat && at_root; q++) {
                        for (int i = 0; i < cnt[q]; i++) {
                            expb[disp[q] + i] = vs_val(q, i);
                        }
                    }
                    for (int i = 0; i < mine && scat && !(inplace && at_root); i++) {
                        expo[i] = vs_val(root, disp[rank] + i);
                    }
                    void       *dbig   = at_root ? dev_copy(bigb, (size_t)big * sizeof(int)) : NULL;
                    void       *down   = dev_copy(own, ((size_t)mine + pad) * sizeof(int));
                    void       *ob     = inplace && at_root ? MPI_IN_PLACE : down; /* the root's own side in place */
                    MPI_Request req[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
                    int         sum[2] = { rank + 1, 0 };
                    MPI_Comm    other  = MPI_COMM_NULL;
                    if (plain) { /* MPI_Gather / MPI_Scatter: every count cnt[0], blocks in rank order */
                        if (nb == 2) {
                            rc = scat ? GC3_SCATTER_INIT(dbig, mine, MPI_INT, ob, mine, MPI_INT, root, comm,
                                                         MPI_INFO_NULL, &req[0])
                                      : GC3_GATHER_INIT(ob, mine, MPI_INT, dbig, mine, MPI_INT, root, comm,
                                                        MPI_INFO_NULL, &req[0]);
                        } else if (nb == 1) {
                            rc = scat ? MPI_Iscatter(dbig, mine, MPI_INT, ob, mine, MPI_INT, root, comm, &req[0])
                                      : MPI_Igather(ob, mine, MPI_INT, dbig, mine, MPI_INT, root, comm, &req[0]);
                        } else {
                            rc = scat ? MPI_Scatter(dbig, mine, MPI_INT, ob, mine, MPI_INT, root, comm)
                                      : MPI_Gather(ob, mine, MPI_INT, dbig, mine, MPI_INT, root, comm);
                        }
                    } else if (nb == 2) {
                        rc = scat ? GC3_SCATTERV_INIT(dbig, cnt, disp, MPI_INT, ob, mine, MPI_INT, root, comm,
                                                      MPI_INFO_NULL, &req[0])
                                  : GC3_GATHERV_INIT(ob, mine, MPI_INT, dbig, cnt, disp, MPI_INT, root, comm,
                                                     MPI_INFO_NULL, &req[0]);
                    } else if (nb == 1) {
                        rc = scat ? MPI_Iscatterv(dbig, cnt, disp, MPI_INT, ob, mine, MPI_INT, root, comm, &req[0])
                                  : MPI_Igatherv(ob, mine, MPI_INT, dbig, cnt, disp, MPI_INT, root, comm, &req[0]);
                    } else {
                        rc = scat ? MPI_Scatterv(dbig, cnt, disp, MPI_INT, ob, mine, MPI_INT, root, comm)
                                  : MPI_Gatherv(ob, mine, MPI_INT, dbig, cnt, disp, MPI_INT, root, comm);
                    }
                    if (nb == 2) { /* the same result twice */
                        for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
                            rc = MPI_Start(&req[0]);
                            rc = rc == MPI_SUCCESS ? MPI_Wait(&req[0], MPI_STATUS_IGNORE) : rc;
                        }
                        if (req[0] != MPI_REQUEST_NULL) {
                            MPI_Request_free(&req[0]);
                        }
                    } else if (nb == 1) { /* in flight together with an allreduce of another communicator */
                        MPI_Comm_dup(comm, &other);
                        rc = rc == MPI_SUCCESS ? MPI_Iallreduce(sum, sum + 1, 1, MPI_INT, MPI_SUM, other, &req[1]) : rc;
                        rc = rc == MPI_SUCCESS ? MPI_Waitall(2, req, MPI_STATUSES_IGNORE) : rc;
                        if (rc == MPI_SUCCESS && sum[1] != n * (n + 1) / 2) {
                            fprintf(stderr, "rank %d: the allreduce beside it summed %d\n", rank, sum[1]);
                            rc = MPI_ERR_OTHER;
                        }
                        MPI_Comm_free(&other);
                    }
                    if (at_root) {
                        dev_back(bigb, dbig, (size_t)big * sizeof(int));
                    }
                    dev_back(own, down, ((size_t)mine + pad) * sizeof(int));
                    ok = rc == MPI_SUCCESS;
                    for (int i = 0; i < big && ok && at_root; i++) {
                        if (bigb[i] != expb[i]) {
                            fprintf(stderr,
                                    "rank %d (root %d): %s shape %d: root's element %d of %d is %d, expected %d\n",
                                    rank, root, scat ? "scatter" : "gather", sh, i, big, bigb[i], expb[i]);
                            ok = 0;
                        }
                    }
                    for (int i = 0; i < mine + pad && ok; i++) {
                        if (own[i] != expo[i]) {
                            fprintf(stderr, "rank %d (root %d): %s shape %d: own element %d of %d is %d, expected %d\n",
                                    rank, root, scat ? "scatter" : "gather", sh, i, mine + pad, own[i], expo[i]);
                            ok = 0;
                        }
                    }
                    free(bigb);
                    free(own);
                    free(expb);
                    free(expo);
                    snprintf(what, sizeof(what), "%s %s%s%s%s %s root %d %s", cname, nb == 1 ? "i" : "",
                             nb == 2 ? "persistent " : "", scat ? "scatter" : "gather", plain ? "" : "v", vs_name[sh],
                             root, inplace ? "in place" : "out of place");
                    check(ok, comm, what);
                }
            }
        }
    }
    free(cnt);
    free(disp);
}

int main(int argc, char **argv)
{
    size_t   max_count = 16u << 20;
    MPI_Comm dup, uneven, parity;
    int      size, order_only = 0, v_only = 0, scans_only = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc) {
            max_count = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--device") == 0) {
            on_device = 1;
        } else if (strcmp(argv[i], "--v-only") == 0) {
            v_only = 1;
        } else if (strcmp(argv[i], "--scans-only") == 0) {
            scans_only = 1;
        } else if (strcmp(argv[i], "--stream-order-only") == 0) {
            order_only = on_device = 1;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            if (world_rank == 0) {
                printf("usage: test_coll [--max-count N] [--device] [--stream-order-only] [--v-only] [--scans-only]\n"
                       "  every collective gc3 runs, in every form, on 4 communicators, against host sums\n"
                       "  --device              device buffers (cuda), with the legacy-stream ordering checks\n"
                       "  --stream-order-only   only those checks (device buffers)\n"
                       "  --v-only              only the per-rank counts (allgatherv, alltoallv, reduce_scatter, "
                       "gather(v),\n"
                       "                        scatter(v))\n"
                       "  --scans-only          only scan and exscan\n");
            }
            MPI_Finalize();
            return 0;
        }
    }
    gc3_test_device_setup("test_coll", on_device, MPI_COMM_WORLD);
    if (order_only) {
        test_stream_order_small(MPI_COMM_WORLD, "world", 200);
        test_stream_order(MPI_COMM_WORLD, "world");
        if (world_rank == 0) {
            printf("test_coll: %d ranks, device buffers, stream order: %d passed, %d failed\n", size, checks - failures,
                   failures);
        }
        MPI_Finalize();
        return failures != 0;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < (size + 1) / 2 + 1 ? 0 : 1, world_rank, &uneven); /* e.g. 8 -> 5 + 3 */
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, size - world_rank, &parity);                   /* reversed order */
    if (v_only) {
        test_vcolls(MPI_COMM_WORLD, "world", max_count < 100000 ? (int)max_count + 1 : 100000);
        test_vcolls(uneven, "uneven split", 300);
        test_vcolls(parity, "parity split", 300);
        test_rooted_vcolls(MPI_COMM_WORLD, "world", max_count < 100000 ? (int)max_count + 1 : 100000);
        test_rooted_vcolls(uneven, "uneven split", 300);
        test_rooted_vcolls(parity, "parity split", 300);
        goto done;
    }
    if (scans_only) {
        test_scans(MPI_COMM_WORLD, "world", max_count);
        test_scans(parity, "parity split", max_count / 16);
        goto done;
    }
    test_allreduce(MPI_COMM_WORLD, "world", max_count);
    test_allreduce(dup, "dup", max_count / 16);
    test_allreduce(uneven, "uneven split", max_count / 16);
    test_allreduce(parity, "parity split", max_count / 16);
    test_alltoall(MPI_COMM_WORLD, "world", max_count);
    test_alltoall(uneven, "uneven split", max_count / 16);
    test_alltoall(parity, "parity split", max_count / 16);
    test_allgather_rsb(MPI_COMM_WORLD, "world", max_count);
    test_nonblocking(MPI_COMM_WORLD, "world");
    test_nonblocking(parity, "parity split");
    test_nb_allgather_rsb(MPI_COMM_WORLD, "world");
    test_nb_allgather_rsb(parity, "parity split");
    test_persistent(MPI_COMM_WORLD, "world");
    test_persistent(uneven, "uneven split");
    test_allgather_rsb(uneven, "uneven split", max_count / 16);
    test_bcast_reduce(MPI_COMM_WORLD, "world", max_count);
    test_bcast_reduce(parity, "parity split", max_count / 16);
    test_scans(MPI_COMM_WORLD, "world", max_count);
    test_scans(parity, "parity split", max_count / 16);
    test_vcolls(MPI_COMM_WORLD, "world", max_count < 1000 ? (int)max_count + 1 : 1000);
    test_vcolls(uneven, "uneven split", 300);
    test_vcolls(parity, "parity split", 300);
    test_rooted_vcolls(MPI_COMM_WORLD, "world", max_count < 1000 ? (int)max_count + 1 : 1000);
    test_rooted_vcolls(parity, "parity split", 300);
    if (on_device) {
        test_stream_order_small(MPI_COMM_WORLD, "world", 20);
        test_stream_order(MPI_COMM_WORLD, "world");
    }
done:
    MPI_Comm_free(&dup);
    MPI_Comm_free(&uneven);
    MPI_Comm_free(&parity);
    if (world_rank == 0) {
        printf("test_coll: %d ranks, %s buffers: %d passed, %d failed\n", size, on_device ? "device" : "host",
               checks - failures, failures);
    }
    MPI_Finalize();
    return failures != 0;
}
