/* MPI_Bcast and MPI_Reduce through coll/gc3, in their blocking, nonblocking and persistent forms,
 * checked against a host computation: every datatype gc3 maps (float, double, int8, uint8, int32,
 * uint32, int64, uint64) x every op valid for it x every root x counts 0, 1, 7, 1001 (and 65537 for
 * sum and max at the first and last root), reduce out of place and in place at the root (the
 * non-roots pass a NULL receive buffer), on MPI_COMM_WORLD, an uneven split and a parity split in
 * reversed order; then several MPI_Ibcast/MPI_Ireduce in flight together with an MPI_Iallreduce, one
 * polled with MPI_Test, and persistent MPI[X]_Bcast_init/MPI[X]_Reduce_init started three times with
 * new data. Run with --mca coll_gc3_priority 90 --mca coll_gc3_backend host. Options: --device
 * (every buffer passed to MPI is device memory, filled from and read back into the host arrays the
 * checks use; the rank's GPU is its rank on the node modulo the GPUs). The last line is
 * "test_rooted: N ranks: P passed, F failed" ("test_rooted: N ranks, device buffers: ..." with
 * --device). --rotate: only the rotating roots' test (test_rotate; --per-root: with coll_gc3_relabel false). */
#include <mpi.h>
#include "gc3_mpi_compat.h" /* GC3_BCAST_INIT, GC3_REDUCE_INIT */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_mpi_util.h"

static int world_rank, failures, checks, on_device;

/* With --device the MPI calls get device buffers: dev_buf gives a device buffer of `bytes` holding a
 * copy of `host` (fill) or garbage; dev_put and dev_get copy to and from it, dev_free frees it.
 * Without, the host array itself and no copies. */
static void *dev_buf(void *host, size_t bytes, int fill)
{
    void *d;
    if (!on_device) {
        return host;
    }
    d = gc3_test_alloc(1, bytes);
    if (d == NULL) {
        fprintf(stderr, "rank %d: cannot allocate %zu bytes on the device\n", world_rank, bytes);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (fill) {
        gc3_test_copy(1, d, host, bytes);
    }
    return d;
}

static void dev_put(void *dev, const void *host, size_t bytes)
{
    if (on_device) {
        gc3_test_copy(1, dev, host, bytes);
    }
}

static void dev_get(void *host, const void *dev, size_t bytes)
{
    if (on_device) {
        gc3_test_copy(1, host, dev, bytes);
    }
}

static void dev_free(void *dev)
{
    if (on_device) {
        gc3_test_free(1, dev);
    }
}

typedef struct {
    MPI_Datatype dt;
    const char  *name;
    int          kind; /* 0 signed integer, 1 unsigned integer, 2 floating point */
    int          size;
} dtype_t;

static const dtype_t dtypes[] = {
    { MPI_FLOAT, "float", 2, 4 },   { MPI_DOUBLE, "double", 2, 8 },   { MPI_INT8_T, "int8", 0, 1 },
    { MPI_UINT8_T, "uint8", 1, 1 }, { MPI_INT32_T, "int32", 0, 4 },   { MPI_UINT32_T, "uint32", 1, 4 },
    { MPI_INT64_T, "int64", 0, 8 }, { MPI_UINT64_T, "uint64", 1, 8 },
};
#define NDTYPES ((int)(sizeof(dtypes) / sizeof(dtypes[0])))

typedef struct {
    MPI_Op      op;
    const char *name;
    int         bitwise;
} op_t;

static const op_t ops[] = { { MPI_SUM, "sum", 0 },  { MPI_PROD, "prod", 0 }, { MPI_MIN, "min", 0 },
                            { MPI_MAX, "max", 0 },  { MPI_BAND, "band", 1 }, { MPI_BOR, "bor", 1 },
                            { MPI_BXOR, "bxor", 1 } };
#define NOPS ((int)(sizeof(ops) / sizeof(ops[0])))

/* Rank r's element i (salt: a new call): small, so that sums and products of up to 8 ranks stay
 * exact in every type, never negative for unsigned types. */
static long val(int r, size_t i, const op_t *op, const dtype_t *d, int salt)
{
    long k = (long)((size_t)r * 7 + i * 3 + (size_t)salt);
    if (op->op == MPI_PROD) {
        return 1 + (k % 5 == 0);
    }
    if (op->bitwise) {
        return (k * 37) & 0x7f;
    }
    return k % 15 - (d->kind == 1 ? 0 : 7);
}

static long combine(const op_t *op, long a, long b)
{
    switch (op->op == MPI_SUM    ? 0
            : op->op == MPI_PROD ? 1
            : op->op == MPI_MIN  ? 2
            : op->op == MPI_MAX  ? 3
            : op->op == MPI_BAND ? 4
            : op->op == MPI_BOR  ? 5
                                 : 6) {
    case 0:
        return a + b;
    case 1:
        return a * b;
    case 2:
        return b < a ? b : a;
    case 3:
        return b > a ? b : a;
    case 4:
        return a & b;
    case 5:
        return a | b;
    default:
        return a ^ b;
    }
}

static void put(const dtype_t *d, void *buf, size_t i, long v)
{
    char *p = (char *)buf + i * (size_t)d->size;
    if (d->kind == 2) {
        if (d->size == 4) {
            float f = (float)v;
            memcpy(p, &f, 4);
        } else {
            double x = (double)v;
            memcpy(p, &x, 8);
        }
        return;
    }
    switch (d->size) {
    case 1: {
        int8_t x = (int8_t)v;
        memcpy(p, &x, 1);
        break;
    }
    case 4: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    default: {
        int64_t x = (int64_t)v;
        memcpy(p, &x, 8);
        break;
    }
    }
}

/* element i as the value it holds (integers read with their type's sign) */
static long get(const dtype_t *d, const void *buf, size_t i)
{
    const char *p = (const char *)buf + i * (size_t)d->size;
    if (d->kind == 2) {
        if (d->size == 4) {
            float f;
            memcpy(&f, p, 4);
            return (long)f;
        }
        double x;
        memcpy(&x, p, 8);
        return (long)x;
    }
    switch (d->size) {
    case 1:
        return d->kind == 1 ? (long)*(const uint8_t *)p : (long)*(const int8_t *)p;
    case 4: {
        int32_t x;
        memcpy(&x, p, 4);
        return d->kind == 1 ? (long)(uint32_t)x : (long)x;
    }
    default: {
        int64_t x;
        memcpy(&x, p, 8);
        return (long)x;
    }
    }
}

static void check(int ok, MPI_Comm comm, const char *what)
{
    int all;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, comm);
    checks++;
    if (!all) {
        failures++;
        if (ok == 0 || world_rank == 0) {
            fprintf(stderr, "rank %d: FAILED %s\n", world_rank, what);
        }
    }
}

/* The root's expected reduction of element i. */
static long reduced(int size, size_t i, const op_t *op, const dtype_t *d, int salt)
{
    long v = val(0, i, op, d, salt);
    for (int r = 1; r < size; r++) {
        v = combine(op, v, val(r, i, op, d, salt));
    }
    return v;
}

/* form: 0 blocking, 1 nonblocking (MPI_Wait), 2 nonblocking polled with MPI_Test */
static void wait_form(int form, MPI_Request *req)
{
    int flag = 0;
    if (form == 2) {
        while (!flag) {
            MPI_Test(req, &flag, MPI_STATUS_IGNORE);
        }
    } else if (form == 1) {
        MPI_Wait(req, MPI_STATUS_IGNORE);
    }
}

static const char *form_name[] = { "blocking", "nonblocking", "nonblocking (MPI_Test)" };

static int one_reduce(MPI_Comm comm, const dtype_t *d, const op_t *op, int root, size_t n, int inplace, int form,
                      int salt)
{
    int         rank, size, ok = 1;
    size_t      es = (size_t)d->size;
    char       *in, *out;
    void       *din, *dout;
    MPI_Request req;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    in  = malloc(n * es + 8);
    out = malloc(n * es + 8);
    for (size_t i = 0; i < n; i++) {
        put(d, inplace && rank == root ? out : in, i, val(rank, i, op, d, salt));
    }
    din  = dev_buf(in, n * es, !(inplace && rank == root));
    dout = dev_buf(out, n * es, inplace && rank == root);
    {
        const void *s = inplace && rank == root ? MPI_IN_PLACE : din;
        void       *r = rank == root ? dout : NULL; /* MPI lets the non-roots pass no receive buffer */
        if (form == 0) {
            MPI_Reduce(s, r, (int)n, d->dt, op->op, root, comm);
        } else {
            MPI_Ireduce(s, r, (int)n, d->dt, op->op, root, comm, &req);
            wait_form(form, &req);
        }
    }
    if (rank == root) {
        dev_get(out, dout, n * es);
    }
    if (!inplace) {
        dev_get(in, din, n * es);
    }
    dev_free(din);
    dev_free(dout);
    for (size_t i = 0; rank == root && i < n && ok; i++) {
        ok = get(d, out, i) == reduced(size, i, op, d, salt);
        if (!ok) {
            fprintf(stderr, "rank %d: element %zu: got %ld want %ld\n", world_rank, i, get(d, out, i),
                    reduced(size, i, op, d, salt));
        }
    }
    for (size_t i = 0; !inplace && i < n && ok; i++) { /* the send buffer is left as it was */
        ok = get(d, in, i) == val(rank, i, op, d, salt);
    }
    free(in);
    free(out);
    return ok;
}

static int one_bcast(MPI_Comm comm, const dtype_t *d, int root, size_t n, int form, int salt)
{
    int         rank, ok = 1;
    size_t      es = (size_t)d->size;
    char       *buf;
    void       *dbuf;
    MPI_Request req;
    const op_t *sum = &ops[0];
    MPI_Comm_rank(comm, &rank);
    buf = malloc(n * es + 8);
    for (size_t i = 0; i < n; i++) {
        put(d, buf, i, rank == root ? val(root, i, sum, d, salt) : 99);
    }
    dbuf = dev_buf(buf, n * es, 1);
    if (form == 0) {
        MPI_Bcast(dbuf, (int)n, d->dt, root, comm);
    } else {
        MPI_Ibcast(dbuf, (int)n, d->dt, root, comm, &req);
        wait_form(form, &req);
    }
    dev_get(buf, dbuf, n * es);
    dev_free(dbuf);
    for (size_t i = 0; i < n && ok; i++) {
        ok = get(d, buf, i) == val(root, i, sum, d, salt);
    }
    free(buf);
    return ok;
}

static void test_matrix(MPI_Comm comm, const char *cname)
{
    const size_t counts[] = { 0, 1, 7, 1001, 65537 };
    int          size;
    char         what[256];
    MPI_Comm_size(comm, &size);
    for (int di = 0; di < NDTYPES; di++) {
        const dtype_t *d = &dtypes[di];
        for (int root = 0; root < size; root++) {
            for (size_t c = 0; c < sizeof(counts) / sizeof(counts[0]); c++) {
                const size_t n     = counts[c];
                const int    large = n > 10000;
                if (large && root != 0 && root != size - 1) {
                    continue;
                }
                for (int form = 0; form < 3; form++) {
                    int ok = one_bcast(comm, d, root, n, form, (int)c + form);
                    snprintf(what, sizeof(what), "%s bcast %s root %d count %zu on %s", form_name[form], d->name, root,
                             n, cname);
                    check(ok, comm, what);
                }
                for (int oi = 0; oi < NOPS; oi++) {
                    const op_t *op = &ops[oi];
                    if ((d->kind == 2 && op->bitwise) || (large && op->op != MPI_SUM && op->op != MPI_MAX)) {
                        continue;
                    }
                    for (int inplace = 0; inplace <= 1; inplace++) {
                        for (int form = 0; form < 3; form++) {
                            int ok = one_reduce(comm, d, op, root, n, inplace, form, (int)c + oi + form);
                            snprintf(what, sizeof(what), "%s reduce %s %s root %d count %zu%s on %s", form_name[form],
                                     d->name, op->name, root, n, inplace ? " in place" : "", cname);
                            check(ok, comm, what);
                        }
                    }
                }
            }
        }
    }
}

/* Ibcast and Ireduce of several roots in flight together with an Iallreduce, MPI_Waitall. */
static void test_in_flight(MPI_Comm comm, const char *cname)
{
    enum { NB = 3 };
    int          rank, size, ok = 1;
    const size_t n = 3001;
    int32_t     *b[NB], *rin[NB], *rout[NB], *ain, *aout;
    void        *db[NB], *drin[NB], *drout[NB], *dain, *daout;
    MPI_Request  req[2 * NB + 1];
    char         what[200];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    ain  = malloc(n * sizeof(int32_t));
    aout = malloc(n * sizeof(int32_t));
    for (size_t i = 0; i < n; i++) {
        ain[i] = (int32_t)(rank + (int)i);
    }
    dain  = dev_buf(ain, n * sizeof(int32_t), 1);
    daout = dev_buf(aout, n * sizeof(int32_t), 0);
    for (int k = 0; k < NB; k++) {
        int root = (k * 2 + 1) % size;
        b[k]     = malloc(n * sizeof(int32_t));
        rin[k]   = malloc(n * sizeof(int32_t));
        rout[k]  = malloc(n * sizeof(int32_t));
        for (size_t i = 0; i < n; i++) {
            b[k][i]   = rank == root ? (int32_t)(k * 100000 + (int)i) : -1;
            rin[k][i] = (int32_t)((rank + 1) * (k + 1) + (int)(i % 97));
        }
        db[k]    = dev_buf(b[k], n * sizeof(int32_t), 1);
        drin[k]  = dev_buf(rin[k], n * sizeof(int32_t), 1);
        drout[k] = dev_buf(rout[k], n * sizeof(int32_t), 0);
        MPI_Ibcast(db[k], (int)n, MPI_INT32_T, root, comm, &req[2 * k]);
        MPI_Ireduce(drin[k], rank == root ? drout[k] : NULL, (int)n, MPI_INT32_T, MPI_SUM, root, comm, &req[2 * k + 1]);
        if (k == 1) {
            MPI_Iallreduce(dain, daout, (int)n, MPI_INT32_T, MPI_SUM, comm, &req[2 * NB]);
        }
    }
    MPI_Waitall(2 * NB + 1, req, MPI_STATUSES_IGNORE);
    dev_get(aout, daout, n * sizeof(int32_t));
    dev_free(dain);
    dev_free(daout);
    for (int k = 0; k < NB; k++) {
        int root = (k * 2 + 1) % size;
        dev_get(b[k], db[k], n * sizeof(int32_t));
        if (rank == root) {
            dev_get(rout[k], drout[k], n * sizeof(int32_t));
        }
        dev_free(db[k]);
        dev_free(drin[k]);
        dev_free(drout[k]);
        for (size_t i = 0; i < n && ok; i++) {
            int32_t want = 0;
            for (int r = 0; r < size; r++) {
                want += (int32_t)((r + 1) * (k + 1) + (int)(i % 97));
            }
            ok = b[k][i] == (int32_t)(k * 100000 + (int)i) && (rank != root || rout[k][i] == want);
        }
        free(b[k]);
        free(rin[k]);
        free(rout[k]);
    }
    for (size_t i = 0; i < n && ok; i++) {
        ok = aout[i] == (int32_t)(size * (size - 1) / 2 + size * (int)i);
    }
    snprintf(what, sizeof(what), "3 ibcast + 3 ireduce of several roots in flight with an iallreduce on %s", cname);
    check(ok, comm, what);
    free(ain);
    free(aout);
}

/* Persistent bcast and reduce (in place at the root too) for every root, started three times with
 * new data, through MPI_Startall/MPI_Waitall and MPI_Start/MPI_Test. */
static void test_persistent(MPI_Comm comm, const char *cname)
{
    const size_t n = 1025;
    int          rank, size;
    char         what[200];
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    for (int root = 0; root < size; root++) {
        double     *b = malloc(n * sizeof(double)), *in = malloc(n * sizeof(double)), *out = malloc(n * sizeof(double));
        int64_t    *ip = malloc(n * sizeof(int64_t)), *iin = malloc(n * sizeof(int64_t));
        void       *db = dev_buf(b, n * sizeof(double), 0), *din = dev_buf(in, n * sizeof(double), 0);
        void       *dout = dev_buf(out, n * sizeof(double), 0), *dip = dev_buf(ip, n * sizeof(int64_t), 0);
        void       *diin = dev_buf(iin, n * sizeof(int64_t), 0);
        MPI_Request p[3];
        GC3_BCAST_INIT(db, (int)n, MPI_DOUBLE, root, comm, MPI_INFO_NULL, &p[0]);
        GC3_REDUCE_INIT(din, rank == root ? dout : NULL, (int)n, MPI_DOUBLE, MPI_MAX, root, comm, MPI_INFO_NULL, &p[1]);
        GC3_REDUCE_INIT(rank == root ? MPI_IN_PLACE : diin, rank == root ? dip : NULL, (int)n, MPI_INT64_T, MPI_SUM,
                        root, comm, MPI_INFO_NULL, &p[2]);
        for (int it = 0; it < 3; it++) {
            int ok = 1;
            for (size_t i = 0; i < n; i++) {
                b[i]   = rank == root ? (double)(it * 1000 + (int)i) : -1.0;
                in[i]  = (double)((rank * 13 + (int)i + it) % 101);
                iin[i] = (int64_t)(rank + 1) * (int64_t)(i + (size_t)it) * 1000003;
                if (rank == root) {
                    ip[i] = iin[i];
                }
            }
            dev_put(db, b, n * sizeof(double));
            dev_put(din, in, n * sizeof(double));
            dev_put(diin, iin, n * sizeof(int64_t));
            if (rank == root) {
                dev_put(dip, ip, n * sizeof(int64_t));
            }
            if (it < 2) {
                MPI_Startall(3, p);
                MPI_Waitall(3, p, MPI_STATUSES_IGNORE);
            } else {
                int flag = 0;
                MPI_Start(&p[1]);
                while (!flag) {
                    MPI_Test(&p[1], &flag, MPI_STATUS_IGNORE);
                }
                MPI_Start(&p[0]);
                MPI_Start(&p[2]);
                MPI_Wait(&p[2], MPI_STATUS_IGNORE);
                MPI_Wait(&p[0], MPI_STATUS_IGNORE);
            }
            dev_get(b, db, n * sizeof(double));
            if (rank == root) {
                dev_get(out, dout, n * sizeof(double));
                dev_get(ip, dip, n * sizeof(int64_t));
            }
            for (size_t i = 0; i < n && ok; i++) {
                double  mx  = 0;
                int64_t sum = 0;
                for (int r = 0; r < size; r++) {
                    double v = (double)((r * 13 + (int)i + it) % 101);
                    mx       = v > mx ? v : mx;
                    sum += (int64_t)(r + 1) * (int64_t)(i + (size_t)it) * 1000003;
                }
                ok = b[i] == (double)(it * 1000 + (int)i) && (rank != root || (out[i] == mx && ip[i] == sum));
            }
            snprintf(what, sizeof(what),
                     "persistent bcast, reduce max and reduce sum in place at root %d, start %d on %s", root, it + 1,
                     cname);
            check(ok, comm, what);
        }
        for (int k = 0; k < 3; k++) {
            MPI_Request_free(&p[k]);
        }
        dev_free(db);
        dev_free(din);
        dev_free(dout);
        dev_free(dip);
        dev_free(diin);
        free(b);
        free(in);
        free(out);
        free(ip);
        free(iin);
    }
}

/* gc3's memory: the host backend's shared segments the ranks made (summed over the ranks; their peers'
 * mappings of them take no more memory), or with --device the GPU's memory in use (cudaMemGetInfo: every process
 * on it, read by rank 0 after a barrier) */
static long gc3_memory_now(MPI_Comm comm)
{
    long v = 0;
    MPI_Barrier(comm);
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        size_t free_b = 0, total_b = 0;
        cudaDeviceSynchronize();
        MPI_Barrier(comm);
        if (cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
            v = (long)(total_b - free_b);
        }
        MPI_Bcast(&v, 1, MPI_LONG, 0, comm);
        return v;
    }
#endif
    v = gc3_test_shm_own();
    MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_LONG, MPI_SUM, comm);
    return v;
}

/* Roots that rotate (--rotate): bcast and reduce (sum, in place at the root and not) of 4 KB, 256 KB and 4 MB
 * with root 0 only, then twice round every root in an order that changes each call, each result checked; gc3's
 * memory (gc3_memory_now) before and after the rotation. One plan serves every root (coll_gc3_relabel true):
 * the host backend maps no more shared memory, the GPU holds at most 8 MiB per rank more (scratch a new
 * program rank may need); --per-root (run with coll_gc3_relabel false): more, a plan per root. */
static void test_rotate(int per_root)
{
    MPI_Comm     comm;
    const size_t ns[] = { 512, 32768, 524288 }; /* doubles */
    int          size, rank;
    long         before = 0, after;
    char         what[256];

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_name(comm, "rotate");
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    (void)gc3_memory_now(comm); /* (its own reduction's plan made before anything is measured) */
    for (int phase = 0; phase < 2; phase++) {
        const int calls = phase == 0 ? 1 : 2 * size;
        for (int k = 0; k < calls; k++) {
            const int root = phase == 0 ? 0 : (int)((k * 3u + (unsigned)size - 1u) % (unsigned)size);
            for (size_t j = 0; j < sizeof(ns) / sizeof(ns[0]); j++) {
                const size_t n = ns[j];
                double      *h = malloc(n * sizeof(double)), *o = malloc(n * sizeof(double));
                void        *db = dev_buf(h, n * sizeof(double), 0), *dr = dev_buf(o, n * sizeof(double), 0);
                int          ok = 1;
                for (size_t i = 0; i < n; i++) {
                    h[i] = rank == root ? (double)(k * 7 + (int)i % 1000) : -1.0;
                }
                dev_put(db, h, n * sizeof(double));
                MPI_Bcast(db, (int)n, MPI_DOUBLE, root, comm);
                dev_get(h, db, n * sizeof(double));
                for (size_t i = 0; i < n && ok; i++) {
                    ok = h[i] == (double)(k * 7 + (int)i % 1000);
                }
                for (size_t i = 0; i < n; i++) {
                    h[i] = (double)(rank + 1) * (double)(i % 977);
                }
                dev_put(db, h, n * sizeof(double));
                MPI_Reduce(rank == root && (k & 1) ? MPI_IN_PLACE : db, rank == root ? ((k & 1) ? db : dr) : NULL,
                           (int)n, MPI_DOUBLE, MPI_SUM, root, comm);
                if (rank == root) { /* (in place: the result in db, whose host side is h) */
                    double *res = (k & 1) ? h : o;
                    dev_get(res, (k & 1) ? db : dr, n * sizeof(double));
                    for (size_t i = 0; i < n && ok; i++) {
                        ok = res[i] == (double)size * (double)(size + 1) / 2.0 * (double)(i % 977);
                    }
                }
                snprintf(what, sizeof(what), "rotating roots: bcast and reduce%s of %zu doubles at root %d",
                         (k & 1) ? " in place" : "", n, root);
                check(ok, comm, what);
                dev_free(db);
                dev_free(dr);
                free(h);
                free(o);
            }
        }
        if (phase == 0) {
            before = gc3_memory_now(comm);
        }
    }
    after = gc3_memory_now(comm);
    if (rank == 0) {
        printf("rotating roots over %d ranks (%s): gc3's memory %ld -> %ld bytes (%+ld)\n", size,
               on_device ? "the GPU's memory in use" : "shared memory the ranks made", before, after, after - before);
        fflush(stdout);
    }
    if (per_root) {
        check(after > before, comm, "rotating roots with a plan per root (coll_gc3_relabel false): more memory");
    } else {
        snprintf(what, sizeof(what), "rotating roots on one plan per size: %+ld bytes (at most %s)", after - before,
                 on_device ? "8 MiB per rank" : "none");
        check(on_device ? after - before <= (long)size * (8l << 20) : after == before, comm, what);
    }
    MPI_Comm_free(&comm);
}

/* Roots that rotate between calls of another collective (--rotate): an allreduce, then a bcast whose root moves
 * on each time, 3 x size rounds of 256 KB, one rank a little late in turn (before its allreduce), each result
 * checked. A relabelled bcast's new root uses connections its plan had not used lately: its first messages on
 * them must wait, as another plan's would, until the receiver has left the allreduce that shares its FIFO pool. */
static void test_rotate_mixed(void)
{
    MPI_Comm     comm;
    const size_t n = 32768; /* doubles */
    int          size, rank;
    char         what[160];
    double      *h = malloc(n * sizeof(double)), *a = malloc(n * sizeof(double));
    void        *db, *da;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_name(comm, "rotate mixed");
    MPI_Comm_size(comm, &size);
    MPI_Comm_rank(comm, &rank);
    db = dev_buf(h, n * sizeof(double), 0);
    da = dev_buf(a, n * sizeof(double), 0);
    for (int k = 0; k < 3 * size; k++) {
        const int root = (k * 2 + 1) % size;
        int       ok   = 1;
        for (size_t i = 0; i < n; i++) {
            a[i] = (double)(rank + k) * (double)(i % 613);
            h[i] = rank == root ? (double)(k * 11 + (int)(i % 509)) : -2.0;
        }
        dev_put(da, a, n * sizeof(double));
        dev_put(db, h, n * sizeof(double));
        if (rank == k % size) {
            struct timespec ts = { 0, 200000 }; /* 0.2 ms */
            nanosleep(&ts, NULL);
        }
        MPI_Allreduce(MPI_IN_PLACE, da, (int)n, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Bcast(db, (int)n, MPI_DOUBLE, root, comm);
        dev_get(a, da, n * sizeof(double));
        dev_get(h, db, n * sizeof(double));
        for (size_t i = 0; i < n && ok; i++) {
            ok = a[i] == ((double)size * (double)(size - 1) / 2.0 + (double)size * (double)k) * (double)(i % 613) &&
                 h[i] == (double)(k * 11 + (int)(i % 509));
        }
        snprintf(what, sizeof(what), "rotating roots between allreduces: round %d, bcast root %d", k, root);
        check(ok, comm, what);
    }
    dev_free(db);
    dev_free(da);
    free(h);
    free(a);
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    int      size, rotate = 0, per_root = 0;
    MPI_Comm uneven, parity;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0) {
            on_device = 1;
        } else if (strcmp(argv[i], "--rotate") == 0) {
            rotate = 1;
        } else if (strcmp(argv[i], "--per-root") == 0) {
            per_root = 1;
        }
    }
    gc3_test_device_setup("test_rooted", on_device, MPI_COMM_WORLD);
    if (rotate) {
        test_rotate(per_root);
        test_rotate_mixed();
        if (world_rank == 0) {
            printf("test_rooted: %d ranks%s, rotating roots: %d passed, %d failed\n", size,
                   on_device ? ", device buffers" : "", checks - failures, failures);
        }
        MPI_Finalize();
        return failures != 0;
    }
    MPI_Comm_split(MPI_COMM_WORLD, world_rank < (size + 1) / 2 + 1 ? 0 : 1, world_rank, &uneven);
    MPI_Comm_split(MPI_COMM_WORLD, world_rank % 2, size - world_rank, &parity); /* reversed order */
    MPI_Comm_set_name(uneven, "uneven");
    MPI_Comm_set_name(parity, "parity");
    test_matrix(MPI_COMM_WORLD, "world");
    test_in_flight(MPI_COMM_WORLD, "world");
    test_persistent(MPI_COMM_WORLD, "world");
    test_matrix(uneven, "uneven split");
    test_matrix(parity, "parity split");
    test_in_flight(parity, "parity split");
    test_persistent(uneven, "uneven split");
    MPI_Comm_free(&uneven);
    MPI_Comm_free(&parity);
    if (world_rank == 0) {
        printf("test_rooted: %d ranks%s: %d passed, %d failed\n", size, on_device ? ", device buffers" : "",
               checks - failures, failures);
    }
    MPI_Finalize();
    return failures != 0;
}
