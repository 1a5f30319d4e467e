/* Collectives on two communicators started in crossed orders through coll/gc3 (legal MPI: the
 * order of collectives only has to agree per communicator, and a nonblocking start is local). Each
 * scenario hung when the first call on a communicator set its plan up with blocking exchanges; each
 * result is checked element by element against a host computation.
 *
 *   test_crossed crossed [--device] [--max-count N]
 *       on new communicators (cold: the first call on each sets up gc3) and again on the same ones
 *       (warm: plans exist), in both orders (even ranks A then B, odd ranks B then A, and the
 *       reverse): MPI_Iallreduce pairs, MPI_Ialltoall, MPI_Iallgather, MPI_Ireduce_scatter_block,
 *       MPI_Ibcast and MPI_Ireduce pairs (counts 1 .. N), a blocking
 *       MPI_Allreduce on one communicator while an MPI_Iallreduce on the other is in flight, and
 *       persistent MPIX_Allreduce_init / MPIX_Alltoall_init whose inits and starts are crossed
 *   test_crossed threads [--device] [--max-count N] [--calls N]
 *       MPI_THREAD_MULTIPLE: 3 threads, each driving its own pair of communicators through crossed
 *       nonblocking calls (cold, then N warm rounds) and a blocking call while one is in flight
 *   test_crossed many [--device] [--comms N] [--rounds R]
 *       N communicators (default 3), MPI_Allreduce (65537 floats) and MPI_Alltoall (4096 int32 per peer)
 *       in turn; rank r starts them from communicator r mod N on, in a rotated order: nonblocking but
 *       the last, which is blocking, then MPI_Waitall; on new communicators (cold), then R - 1 more
 *       rounds on the same ones (warm; R default 3). With GC3_TEST_RESIDENT_BLOCKS (the backends run at
 *       most that many thread blocks of the process at once) the calls in flight together need more
 *       blocks than run at once: they complete only because blocks that wait give way
 *       (coll_gc3_yield_us)
 *   test_crossed dup [--calls N]
 *       MPI_THREAD_MULTIPLE (mpi4py's default): N times, MPI_Comm_dup of MPI_COMM_WORLD (Open MPI
 *       allocates the new communicator's id with MPI_Iallreduce calls made from inside its progress
 *       engine), an MPI_Iallreduce completed by MPI_Test and an MPI_Allreduce on the copy, then
 *       MPI_Comm_free. With GC3_TEST_ROUTE_DRIVER=1 gc3 agrees on the ranks' memory kinds for each
 *       new call size as on a GPU machine; the agreement waited for inside the progress engine hung
 *   test_crossed skip [--device] [--timeout S]
 *       rank 0 never makes its second call (on B): the others' call on B must fail within
 *       coll_gc3_timeout (+ slack), naming the communicator and what it waited for, on a new
 *       communicator (gc3's set-up exchange waits) and on a warm one (the transfer waits); the
 *       calls on A complete with the right result everywhere
 *
 * Communicators are named (MPI_Comm_set_name) so that gc3's verbose lines and errors name them.
 * With --device the buffers are device memory of each rank's GPU (two ranks may share one GPU
 * through MPS). Every check prints; the last line is "test_crossed MODE: N passed, M failed". */
#include <mpi.h>
#include "gc3_mpi_compat.h" /* GC3_ALLREDUCE_INIT, GC3_ALLTOALL_INIT */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_mpi_util.h"

static int    rank, size, on_device, checks, failures;
static size_t max_count = 300001;

static void check(int ok, const char *what)
{
    gc3_test_check(ok, what, &checks, &failures);
}

static MPI_Comm new_comm(const char *name)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_name(c, name);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* ---------------------------------------------------------------- one checked call */

/* The kinds of call (call_t.a2a): allreduce: n floats, sum; alltoall: n int32 per peer; allgather:
 * n int32 per rank; reduce_scatter_block: n floats per rank, sum. */
enum { K_ALLREDUCE, K_ALLTOALL, K_ALLGATHER, K_RSB, K_BCAST, K_REDUCE };
static const char *const kind_name[] = {
    "allreduce", "alltoall", "allgather", "reduce_scatter_block", "bcast", "reduce"
};
/* bcast: n int32 from the last rank; reduce: n floats, sum, to the last rank */
#define ROOT(c) ((c)->np - 1)
typedef struct {
    int         a2a;            /* the kind (K_*) */
    size_t      n, elems, outs; /* elements per rank, of the input and of the output buffer */
    int         salt, me, np;
    void       *hin, *hout, *din, *dout;
    MPI_Request req;
} call_t;

static float ar_in(int r, size_t i, int salt)
{
    return (float)((r + 1) * (int)((i + (size_t)salt) % 13));
}

static int32_t a2a_in(int from, int to, size_t i, int salt)
{
    return (int32_t)(((long)from * 1000003 + (long)to * 1009 + (long)i + salt) % 2000000011);
}

/* Fill the input of a call on comm (the buffers are allocated once per call_t and reused when
 * refilled with the same shape: persistent requests keep them). */
static void call_fill(call_t *c, MPI_Comm comm, int a2a, size_t n, int salt)
{
    size_t bytes;
    if (c->hin == NULL) {
        MPI_Comm_rank(comm, &c->me);
        MPI_Comm_size(comm, &c->np);
        c->a2a   = a2a;
        c->n     = n;
        c->elems = a2a == K_ALLTOALL || a2a == K_RSB ? n * (size_t)c->np : n;
        c->outs  = a2a == K_ALLTOALL || a2a == K_ALLGATHER ? n * (size_t)c->np
                   : a2a == K_REDUCE && c->me != ROOT(c)   ? 0 /* no result there */
                                                           : n;
        bytes    = (c->elems > c->outs ? c->elems : c->outs) * 4;
        c->hin   = malloc(bytes + 4);
        c->hout  = malloc(bytes + 4);
        c->din   = on_device ? gc3_test_alloc(1, bytes) : c->hin;
        c->dout  = on_device ? gc3_test_alloc(1, bytes) : c->hout;
        if (c->hin == NULL || c->hout == NULL || c->din == NULL || c->dout == NULL) {
            fprintf(stderr, "rank %d: out of memory for %zu elements\n", rank, c->elems);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    c->salt = salt;
    for (size_t k = 0; k < c->elems; k++) {
        if (a2a == K_ALLTOALL) {
            ((int32_t *)c->hin)[k] = a2a_in(c->me, (int)(k / n), k % n, salt);
        } else if (a2a == K_ALLGATHER) {
            ((int32_t *)c->hin)[k] = a2a_in(c->me, 0, k, salt);
        } else {
            ((float *)c->hin)[k] = ar_in(c->me, k, salt);
        }
    }
    memset(c->hout, 0xA5, c->outs * 4);
    for (size_t k = 0; a2a == K_BCAST && c->me == ROOT(c) && k < n; k++) {
        ((int32_t *)c->hout)[k] = a2a_in(c->me, 0, k, salt); /* the root's buffer: its input */
    }
    if (on_device) {
        gc3_test_copy(1, c->din, c->hin, c->elems * 4);
        gc3_test_copy(1, c->dout, c->hout, c->outs * 4);
    }
}

static int call_start(call_t *c, MPI_Comm comm)
{
    switch (c->a2a) {
    case K_ALLTOALL:
        return MPI_Ialltoall(c->din, (int)c->n, MPI_INT32_T, c->dout, (int)c->n, MPI_INT32_T, comm, &c->req);
    case K_ALLGATHER:
        return MPI_Iallgather(c->din, (int)c->n, MPI_INT32_T, c->dout, (int)c->n, MPI_INT32_T, comm, &c->req);
    case K_RSB:
        return MPI_Ireduce_scatter_block(c->din, c->dout, (int)c->n, MPI_FLOAT, MPI_SUM, comm, &c->req);
    case K_BCAST:
        return MPI_Ibcast(c->dout, (int)c->n, MPI_INT32_T, ROOT(c), comm, &c->req);
    case K_REDUCE:
        return MPI_Ireduce(c->din, c->me == ROOT(c) ? c->dout : NULL, (int)c->n, MPI_FLOAT, MPI_SUM, ROOT(c), comm,
                           &c->req);
    default:
        return MPI_Iallreduce(c->din, c->dout, (int)c->n, MPI_FLOAT, MPI_SUM, comm, &c->req);
    }
}

/* The result against the host computation; what: for the first wrong element's report. */
static int call_right(call_t *c, const char *what)
{
    const int tri = c->np * (c->np + 1) / 2;
    if (on_device) {
        gc3_test_copy(1, c->hout, c->dout, c->outs * 4);
    }
    for (size_t k = 0; k < c->outs; k++) {
        int ok;
        switch (c->a2a) {
        case K_ALLTOALL:
            ok = ((int32_t *)c->hout)[k] == a2a_in((int)(k / c->n), c->me, k % c->n, c->salt);
            break;
        case K_ALLGATHER:
            ok = ((int32_t *)c->hout)[k] == a2a_in((int)(k / c->n), 0, k % c->n, c->salt);
            break;
        case K_BCAST:
            ok = ((int32_t *)c->hout)[k] == a2a_in(ROOT(c), 0, k, c->salt);
            break;
        case K_RSB: /* this rank's block of every rank's input, summed */
            ok = ((float *)c->hout)[k] == (float)(tri * (int)(((size_t)c->me * c->n + k + (size_t)c->salt) % 13));
            break;
        default:
            ok = ((float *)c->hout)[k] == (float)(tri * (int)((k + (size_t)c->salt) % 13));
        }
        if (!ok) {
            fprintf(stderr, "rank %d: %s: %s of %zu, element %zu wrong (bits %08x)\n", rank, what, kind_name[c->a2a],
                    c->n, k, ((uint32_t *)c->hout)[k]);
            return 0;
        }
    }
    return 1;
}

/* Device buffers freed by the threads of run_threads: kept until every thread ended. cudaFree
 * waits for all the device's work of the process, gc3's kernels of the other threads' calls
 * included, and those wait for other ranks, whose threads may wait in cudaFree in turn: a user
 * who frees device memory while other threads have gc3 calls in flight can deadlock the job (as
 * with NCCL; coll_gc3(7), Threads, says so), so the test does not. */
typedef struct {
    void **p;
    size_t n, cap;
} held_t;
static __thread held_t *held_frees;

static void device_free(void *p)
{
    held_t *h = held_frees;
    if (h == NULL) {
        gc3_test_free(1, p);
        return;
    }
    if (h->n == h->cap) {
        size_t cap = h->cap ? 2 * h->cap : 64;
        void **q   = realloc(h->p, cap * sizeof(*q));
        if (q == NULL) {
            fprintf(stderr, "rank %d: out of memory\n", rank);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        h->p = q, h->cap = cap;
    }
    h->p[h->n++] = p;
}

static void call_free(call_t *c)
{
    if (on_device) {
        device_free(c->din);
        device_free(c->dout);
    }
    free(c->hin);
    free(c->hout);
    memset(c, 0, sizeof(*c));
}

/* ---------------------------------------------------------------- scenarios */

static const size_t ar_sizes[]  = { 1, 7, 1000, 65537, 300001, 1048576, 4194304 };
static const size_t a2a_sizes[] = { 1, 100, 4096, 100003, 1048576 };

static int nsizes(const size_t *s, size_t n)
{
    int k = 0;
    while ((size_t)k < n && s[k] <= max_count) {
        k++;
    }
    return k;
}

/* first: whether this rank starts on A first (order 0: the even ranks do; order 1: the odd ones) */
static int a_first(int order)
{
    return (rank % 2) == order;
}

/* One nonblocking call on each of A and B, started in crossed orders, then MPI_Waitall. */
static int crossed_pair(MPI_Comm A, MPI_Comm B, int a2a, size_t n, int order, int salt, const char *what)
{
    call_t      ca = { 0 }, cb = { 0 };
    MPI_Request r[2];
    int         ok = 1;

    call_fill(&ca, A, a2a, n, salt);
    call_fill(&cb, B, a2a, n, salt + 5);
    if (a_first(order)) {
        ok &= call_start(&ca, A) == MPI_SUCCESS;
        ok &= call_start(&cb, B) == MPI_SUCCESS;
    } else {
        ok &= call_start(&cb, B) == MPI_SUCCESS;
        ok &= call_start(&ca, A) == MPI_SUCCESS;
    }
    r[0] = ca.req;
    r[1] = cb.req;
    ok &= MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
    ok = ok && call_right(&ca, what) && call_right(&cb, what);
    call_free(&ca);
    call_free(&cb);
    return ok;
}

/* A blocking MPI_Allreduce on B while an MPI_Iallreduce on A is in flight on the ranks that start
 * A first; the others make the blocking call first. */
static int blocking_while_nb(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    call_t ca = { 0 }, cb = { 0 };
    int    ok = 1;

    call_fill(&ca, A, 0, n, salt);
    call_fill(&cb, B, 0, n, salt + 3);
    if (a_first(order)) {
        ok &= call_start(&ca, A) == MPI_SUCCESS;
        ok &= MPI_Allreduce(cb.din, cb.dout, (int)n, MPI_FLOAT, MPI_SUM, B) == MPI_SUCCESS;
        ok &= MPI_Wait(&ca.req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
    } else {
        ok &= MPI_Allreduce(cb.din, cb.dout, (int)n, MPI_FLOAT, MPI_SUM, B) == MPI_SUCCESS;
        ok &= call_start(&ca, A) == MPI_SUCCESS;
        ok &= MPI_Wait(&ca.req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
    }
    ok = ok && call_right(&ca, what) && call_right(&cb, what);
    call_free(&ca);
    call_free(&cb);
    return ok;
}

/* Persistent allreduce and alltoall on A and on B: inits crossed, then three rounds of starts
 * crossed (new data each round), MPI_Waitall. */
static int persistent_crossed(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
#if defined(OPEN_MPI) && OPEN_MPI
    call_t      c[4] = { { 0 } }; /* A allreduce, A alltoall, B allreduce, B alltoall */
    MPI_Request r[4];
    MPI_Comm    comm[4] = { A, A, B, B };
    int         ok      = 1, seq[4];

    for (int k = 0; k < 4; k++) {
        seq[k] = a_first(order) ? k : (k + 2) % 4; /* A's two first, or B's */
        call_fill(&c[k], comm[k], k % 2, k % 2 ? n / 4 + 1 : n, salt + k);
    }
    for (int j = 0; j < 4; j++) {
        int k = seq[j];
        ok &= (k % 2 ? GC3_ALLTOALL_INIT(c[k].din, (int)c[k].n, MPI_INT32_T, c[k].dout, (int)c[k].n, MPI_INT32_T,
                                         comm[k], MPI_INFO_NULL, &r[k])
                     : GC3_ALLREDUCE_INIT(c[k].din, c[k].dout, (int)c[k].n, MPI_FLOAT, MPI_SUM, comm[k], MPI_INFO_NULL,
                                          &r[k])) == MPI_SUCCESS;
    }
    for (int round = 0; round < 3 && ok; round++) {
        for (int k = 0; k < 4; k++) {
            if (round > 0) {
                call_fill(&c[k], comm[k], k % 2, c[k].n, 10 * round + k);
            }
        }
        for (int j = 0; j < 4; j++) {
            ok &= MPI_Start(&r[seq[j]]) == MPI_SUCCESS;
        }
        ok &= MPI_Waitall(4, r, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
        for (int k = 0; k < 4; k++) {
            ok = ok && call_right(&c[k], what);
        }
    }
    for (int k = 0; k < 4; k++) {
        MPI_Request_free(&r[k]);
        call_free(&c[k]);
    }
    return ok;
#else
    (void)A, (void)B, (void)n, (void)order, (void)salt, (void)what;
    return 0;
#endif
}

static int ar_pair(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    return crossed_pair(A, B, 0, n, order, salt, what);
}

static int a2a_pair(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    return crossed_pair(A, B, K_ALLTOALL, n, order, salt, what);
}

static int ag_pair(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    return crossed_pair(A, B, K_ALLGATHER, n, order, salt, what);
}

static int rsb_pair(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    return crossed_pair(A, B, K_RSB, n, order, salt, what);
}

static int bc_pair(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    return crossed_pair(A, B, K_BCAST, n, order, salt, what);
}

static int rd_pair(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what)
{
    return crossed_pair(A, B, K_REDUCE, n, order, salt, what);
}

static const size_t pers_sizes[] = { 1000, 65537 };

typedef struct {
    const char   *prefix, *title;
    const size_t *sizes;
    size_t        nsizes;
    int (*run)(MPI_Comm A, MPI_Comm B, size_t n, int order, int salt, const char *what);
} scenario_t;

static const scenario_t scenarios[] = {
    { "ar", "crossed MPI_Iallreduce", ar_sizes, sizeof(ar_sizes) / sizeof(*ar_sizes), ar_pair },
    { "a2a", "crossed MPI_Ialltoall (n per peer)", a2a_sizes, sizeof(a2a_sizes) / sizeof(*a2a_sizes), a2a_pair },
    { "ag", "crossed MPI_Iallgather (n per rank)", a2a_sizes, sizeof(a2a_sizes) / sizeof(*a2a_sizes), ag_pair },
    { "rsb", "crossed MPI_Ireduce_scatter_block (n per rank)", a2a_sizes, sizeof(a2a_sizes) / sizeof(*a2a_sizes),
      rsb_pair },
    { "bc", "crossed MPI_Ibcast from the last rank", a2a_sizes, sizeof(a2a_sizes) / sizeof(*a2a_sizes), bc_pair },
    { "rd", "crossed MPI_Ireduce to the last rank", ar_sizes, sizeof(ar_sizes) / sizeof(*ar_sizes), rd_pair },
    { "bnb", "MPI_Allreduce on B while an MPI_Iallreduce on A is in flight", ar_sizes,
      sizeof(ar_sizes) / sizeof(*ar_sizes), blocking_while_nb },
    { "pers", "persistent MPIX_Allreduce_init/MPIX_Alltoall_init, inits and starts crossed, 3 rounds", pers_sizes,
      sizeof(pers_sizes) / sizeof(*pers_sizes), persistent_crossed },
};

/* Every scenario on new communicators (cold: the first call on each, and the first of each size
 * class), then again on the same ones (warm), in both orders. */
static void run_crossed(void)
{
    char what[256], name[64];

    for (int order = 0; order < 2; order++) {
        const char *ord = order == 0 ? "even ranks A first" : "odd ranks A first";
        for (size_t sc = 0; sc < sizeof(scenarios) / sizeof(*scenarios); sc++) {
            const scenario_t *x = &scenarios[sc];
            int               n = nsizes(x->sizes, x->nsizes);
            MPI_Comm          A, B;
            snprintf(name, sizeof(name), "%s%d.A", x->prefix, order);
            A = new_comm(name);
            snprintf(name, sizeof(name), "%s%d.B", x->prefix, order);
            B = new_comm(name);
            for (int warm = 0; warm < 2; warm++) {
                int ok = n > 0;
                for (int k = 0; k < n; k++) {
                    snprintf(what, sizeof(what), "%s, %s, %s, n = %zu", x->title, warm ? "warm" : "cold", ord,
                             x->sizes[k]);
                    ok &= x->run(A, B, x->sizes[k], order, k + warm, what);
                }
                snprintf(what, sizeof(what), "%s on two communicators, %s, %s, n = %zu..%zu: all right", x->title,
                         warm ? "warm" : "cold (the first call on each)", ord, x->sizes[0],
                         n > 0 ? x->sizes[n - 1] : 0);
                check(ok, what);
            }
            MPI_Comm_free(&A);
            MPI_Comm_free(&B);
        }
    }
}

/* ---------------------------------------------------------------- many communicators, rotated */

static int call_blocking(call_t *c, MPI_Comm comm)
{
    if (c->a2a == K_ALLTOALL) {
        return MPI_Alltoall(c->din, (int)c->n, MPI_INT32_T, c->dout, (int)c->n, MPI_INT32_T, comm);
    }
    return MPI_Allreduce(c->din, c->dout, (int)c->n, MPI_FLOAT, MPI_SUM, comm);
}

static void run_many(int ncomms, int rounds)
{
    MPI_Comm    *comms = calloc((size_t)ncomms, sizeof(*comms));
    call_t      *calls = calloc((size_t)ncomms, sizeof(*calls));
    MPI_Request *reqs  = calloc((size_t)ncomms, sizeof(*reqs));
    char         what[256], name[64];

    if (comms == NULL || calls == NULL || reqs == NULL) {
        fprintf(stderr, "rank %d: out of memory\n", rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int c = 0; c < ncomms; c++) {
        snprintf(name, sizeof(name), "many%d.%d", ncomms, c);
        comms[c] = new_comm(name);
    }
    for (int round = 0; round < rounds; round++) {
        int ok = 1;
        for (int j = 0; j < ncomms; j++) {
            const int c   = (rank + j) % ncomms; /* this rank's j-th communicator */
            const int a2a = c % 2 ? K_ALLTOALL : K_ALLREDUCE;
            call_fill(&calls[c], comms[c], a2a, a2a == K_ALLTOALL ? (size_t)4096 : (size_t)65537, round * 7 + c);
            if (j < ncomms - 1) {
                ok &= call_start(&calls[c], comms[c]) == MPI_SUCCESS;
                reqs[j] = calls[c].req;
            } else {
                /* the last one blocking: every other rank has started it, or calls it blocking itself */
                ok &= call_blocking(&calls[c], comms[c]) == MPI_SUCCESS;
                reqs[j] = MPI_REQUEST_NULL;
            }
        }
        ok &= MPI_Waitall(ncomms, reqs, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
        for (int c = 0; c < ncomms; c++) {
            snprintf(what, sizeof(what), "%d communicators, round %d", ncomms, round);
            ok = call_right(&calls[c], what) && ok;
        }
        snprintf(what, sizeof(what),
                 "%d communicators, %s: MPI_Allreduce and MPI_Alltoall started in rotated orders (the last one "
                 "blocking), all right",
                 ncomms, round == 0 ? "cold (the first call on each)" : "warm");
        check(ok, what);
    }
    for (int c = 0; c < ncomms; c++) {
        call_free(&calls[c]);
        MPI_Comm_free(&comms[c]);
    }
    free(comms);
    free(calls);
    free(reqs);
}

/* ---------------------------------------------------------------- communicators duplicated */

static void run_dup(int calls)
{
    const int n  = 65536;
    int32_t  *bx = malloc(n * sizeof(*bx)), *by = malloc(n * sizeof(*by));
    int       ok = bx != NULL && by != NULL;
    for (int i = 0; i < calls && ok; i++) {
        MPI_Comm    d;
        MPI_Request r;
        int32_t     x[3] = { rank + 1, rank + i, 1 }, y[3] = { 0, 0, 0 }, z = 0, one = 1;
        int         flag = 0;
        for (int k = 0; k < n; k++) {
            bx[k] = rank + k % 7;
        }
        /* a nonblocking call of a new size on the parent first (as mpi4py's tests do), then the copy */
        ok &= MPI_Iallreduce(bx, by, n - i, MPI_INT32_T, MPI_MAX, MPI_COMM_WORLD, &r) == MPI_SUCCESS;
        while (ok && !flag) {
            ok &= MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS;
        }
        ok = ok && by[0] == size - 1 && by[n - i - 1] == size - 1 + (n - i - 1) % 7;
        ok &= MPI_Comm_dup(MPI_COMM_WORLD, &d) == MPI_SUCCESS;
        flag = 0;
        ok &= MPI_Iallreduce(x, y, 1 + i % 3, MPI_INT32_T, MPI_MAX, d, &r) == MPI_SUCCESS;
        while (ok && !flag) {
            ok &= MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS;
        }
        ok &= MPI_Allreduce(&one, &z, 1, MPI_INT32_T, MPI_SUM, d) == MPI_SUCCESS;
        ok = ok && y[0] == size && z == size && (i % 3 < 1 || y[1] == size - 1 + i);
        ok &= MPI_Comm_free(&d) == MPI_SUCCESS;
    }
    free(bx);
    free(by);
    check(ok, "MPI_Comm_dup, MPI_Iallreduce completed by MPI_Test and MPI_Allreduce on the copy, MPI_Comm_free: "
              "every time, right results");
}

/* ---------------------------------------------------------------- threads */

typedef struct {
    MPI_Comm A, B;
    int      id, calls, device, ok;
    held_t   held; /* its device buffers, freed after every thread ended */
} thread_arg_t;

static void *thread_main(void *p)
{
    thread_arg_t *a    = p;
    int           nar  = nsizes(ar_sizes, sizeof(ar_sizes) / sizeof(*ar_sizes));
    int           na2a = nsizes(a2a_sizes, sizeof(a2a_sizes) / sizeof(*a2a_sizes));
    char          what[96];
#ifdef GC3_HAVE_CUDA
    if (on_device)
        cudaSetDevice(a->device); /* the current device is per thread */
#endif
    snprintf(what, sizeof(what), "thread %d", a->id);
    held_frees = &a->held;
    a->ok      = 1;
    /* cold: the first calls on this thread's communicators, crossed */
    a->ok &= crossed_pair(a->A, a->B, 0, 1000, a->id % 2, a->id, what);
    a->ok &= crossed_pair(a->A, a->B, 1, 100, (a->id + 1) % 2, a->id, what);
    a->ok &= blocking_while_nb(a->A, a->B, 65537, a->id % 2, a->id, what);
    for (int i = 0; i < a->calls && a->ok; i++) {
        a->ok &= i % 3 == 2 ? crossed_pair(a->A, a->B, 1, a2a_sizes[(size_t)(i + a->id) % (size_t)na2a], i % 2, i, what)
                            : crossed_pair(a->A, a->B, 0, ar_sizes[(size_t)(i + a->id) % (size_t)nar], i % 2, i, what);
    }
    if (!a->ok) {
        fprintf(stderr, "rank %d thread %d: a call was wrong or failed\n", rank, a->id);
    }
    return NULL;
}

static void run_threads(int calls, int provided)
{
    enum { NT = 3 };
    pthread_t    th[NT];
    thread_arg_t a[NT];
    char         name[32], what[200];
    int          ok = 1, device = 0;
    double       t0;

    if (provided < MPI_THREAD_MULTIPLE) {
        check(0, "MPI_THREAD_MULTIPLE provided by this Open MPI"); /* not a pass: the test cannot run */
        return;
    }
#ifdef GC3_HAVE_CUDA
    if (on_device)
        cudaGetDevice(&device);
#endif
    for (int t = 0; t < NT; t++) {
        snprintf(name, sizeof(name), "th%d.A", t);
        a[t].A = new_comm(name);
        snprintf(name, sizeof(name), "th%d.B", t);
        a[t].B  = new_comm(name);
        a[t].id = t, a[t].calls = calls, a[t].device = device, a[t].ok = 0;
        memset(&a[t].held, 0, sizeof(a[t].held));
    }
    t0 = gc3_test_now();
    for (int t = 0; t < NT; t++)
        pthread_create(&th[t], NULL, thread_main, &a[t]);
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        ok &= a[t].ok;
    }
    snprintf(what, sizeof(what),
             "%d threads, each driving its own two communicators through crossed calls (cold, "
             "blocking while nonblocking, %d warm rounds): all right (%.1f s)",
             NT, calls, gc3_test_now() - t0);
    check(ok, what);
    for (int t = 0; t < NT; t++) {
        for (size_t k = 0; k < a[t].held.n; k++)
            gc3_test_free(1, a[t].held.p[k]);
        free(a[t].held.p);
        MPI_Comm_free(&a[t].A);
        MPI_Comm_free(&a[t].B);
    }
}

/* ---------------------------------------------------------------- a rank that never calls */

/* Crossed allreduces on A and B, except that rank 0 never starts its call on B. */
static void skip_one(const char *label, int warm, double timeout)
{
    char     name[64], what[256], msg[MPI_MAX_ERROR_STRING] = "";
    MPI_Comm A, B;
    call_t   ca = { 0 }, cb = { 0 };
    int      ok = 1, len = 0, rcb = MPI_SUCCESS;
    size_t   n = 1000;
    double   t0, dt;

    snprintf(name, sizeof(name), "skip%s.A", label);
    A = new_comm(name);
    snprintf(name, sizeof(name), "skip%s.B", label);
    B = new_comm(name);
    call_fill(&ca, A, 0, n, 1);
    call_fill(&cb, B, 0, n, 2);
    if (warm) { /* plans of both first, with everybody */
        ok &=
            MPI_Allreduce(ca.din, ca.dout, (int)n, MPI_FLOAT, MPI_SUM, A) == MPI_SUCCESS && call_right(&ca, "warm-up");
        ok &=
            MPI_Allreduce(cb.din, cb.dout, (int)n, MPI_FLOAT, MPI_SUM, B) == MPI_SUCCESS && call_right(&cb, "warm-up");
        call_fill(&ca, A, 0, n, 3);
    }
    t0 = gc3_test_now();
    if (rank == 0) {
        ok &= call_start(&ca, A) == MPI_SUCCESS && MPI_Wait(&ca.req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
    } else {
        if (a_first(0)) {
            ok &= call_start(&ca, A) == MPI_SUCCESS;
            rcb = call_start(&cb, B);
        } else {
            rcb = call_start(&cb, B);
            ok &= call_start(&ca, A) == MPI_SUCCESS;
        }
        ok &= MPI_Wait(&ca.req, MPI_STATUS_IGNORE) == MPI_SUCCESS;
        if (rcb == MPI_SUCCESS) {
            rcb = MPI_Wait(&cb.req, MPI_STATUS_IGNORE);
        }
        dt = gc3_test_now() - t0;
        if (rcb != MPI_SUCCESS) {
            int cls = 0;
            MPI_Error_class(rcb, &cls);
            MPI_Error_string(cls, msg, &len);
        }
        printf("test_crossed skip: rank %d: %s call on %s with rank 0 missing returned %s after %.2f s: %s\n", rank,
               warm ? "warm" : "cold", name, rcb == MPI_SUCCESS ? "MPI_SUCCESS" : msg, dt,
               rcb != MPI_SUCCESS && dt <= timeout + 30 ? "ok, no hang" : "FAILED");
        fflush(stdout);
        ok &= rcb != MPI_SUCCESS && dt <= timeout + 30;
    }
    ok = ok && call_right(&ca, "the call on A");
    snprintf(what, sizeof(what),
             "%s: the call on A right everywhere; the call on B failed within coll_gc3_timeout "
             "(+30 s) on every rank that made it",
             warm ? "warm" : "cold");
    check(ok, what);
    call_free(&ca);
    call_free(&cb);
    MPI_Comm_free(&A);
    MPI_Comm_free(&B);
}

int main(int argc, char **argv)
{
    const char *mode  = argc > 1 ? argv[1] : "";
    const char *t     = getenv("OMPI_MCA_coll_gc3_timeout");
    int         calls = 30, provided = MPI_THREAD_SINGLE, ncomms = 3, rounds = 3;
    double      timeout = 300;

    MPI_Init_thread(&argc, &argv,
                    strcmp(mode, "threads") == 0 || strcmp(mode, "dup") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE,
                    &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0)
            on_device = 1;
        else if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc)
            max_count = (size_t)atol(argv[++i]);
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc)
            timeout = atof(argv[++i]);
        else if (strcmp(argv[i], "--comms") == 0 && i + 1 < argc)
            ncomms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc)
            rounds = atoi(argv[++i]);
    }
    if (t != NULL)
        timeout = atof(t);
    if (on_device)
        gc3_test_select_gpu(MPI_COMM_WORLD);
    if (strcmp(mode, "crossed") == 0) {
        run_crossed();
    } else if (strcmp(mode, "threads") == 0) {
        run_threads(calls, provided);
    } else if (strcmp(mode, "dup") == 0) {
        run_dup(calls);
    } else if (strcmp(mode, "many") == 0 && ncomms > 0 && rounds > 0) {
        run_many(ncomms, rounds);
    } else if (strcmp(mode, "skip") == 0) {
        skip_one("cold", 0, timeout);
        skip_one("warm", 1, timeout);
    } else {
        if (rank == 0)
            fprintf(stderr, "usage: test_crossed crossed|threads|many|dup|skip [--device] [--max-count N] [--calls N] "
                            "[--comms N] [--rounds R] [--timeout S]\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0)
        printf("test_crossed %s: %d passed, %d failed\n", mode, checks - failures, failures);
    MPI_Finalize();
    return failures != 0;
}
