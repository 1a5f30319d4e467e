/* Faults and stress through coll/gc3 (run with coll_gc3_backend=host in CI, or --device on GPUs):
 *
 *   test_faults skip [--device]     rank 0 skips an MPI_Allreduce the others make: they must get an
 *                                   error (MPI_ERRORS_RETURN) within coll_gc3_timeout (+ slack),
 *                                   never hang; everyone then finalizes
 *   test_faults mismatch [--device] rank 0 calls MPI_Allreduce while the others call MPI_Alltoall:
 *                                   every rank gets an error within the timeout
 *   test_faults stress [--device] [--calls N] [--comms N]
 *                                   N back-to-back allreduces of varied sizes checked against a host
 *                                   computation, then N communicator dup/use/free cycles; resident
 *                                   memory, open file descriptors and /dev/shm entries (and device
 *                                   memory in use) printed before and after, and must not grow
 *   test_faults a2afresh [--device] [--calls N]
 *                                   N alltoalls, each with new buffers (allocated, used once, freed)
 *                                   of sizes that vary, so the allocator hands out new addresses and
 *                                   old ones again; every result checked; open file descriptors
 *                                   and device memory in use must not grow with the calls
 *   test_faults kill [--device]     rank 0 is killed while the others are in an MPI_Allreduce: they
 *                                   get an error naming it within the timeout (mpirun
 *                                   --enable-recovery), then leave without MPI_Finalize
 *   test_faults threads [--device] [--calls N]
 *                                   MPI_THREAD_MULTIPLE: 4 threads, each with its own communicator,
 *                                   make N checked allreduces and alltoalls of varied sizes at once;
 *                                   fds and /dev/shm entries the same before and after
 *   test_faults counts [--device]   rank 0 calls MPI_Allreduce with half the others' count (a small
 *                                   and a large size class, then different plans built at once):
 *                                   every rank must get an error within the timeout, none a result
 *                                   (each message names its call; plan creation compares the calls)
 *   test_faults otherdev --device   buffers on another GPU than the rank's (after a call on its own
 *                                   GPU built gc3's plan there), then send and receive buffers on
 *                                   two GPUs: the results must be right (gc3 stages them)
 *
 *   test_faults comms [--device] [--comms N] [--max-count N] [--max-mapped-per-comm B]
 *                                   N communicators (dups and splits, default 64) alive at once, each
 *                                   used for allreduces (8 B, 64 KB, --max-count floats) and alltoalls
 *                                   (1 KB, 64 KB, 1 MB per peer), every result checked against a
 *                                   host computation; meanwhile gc3's memory must stay within
 *                                   coll_gc3_memory_budget (host: the shared memory gc3 maps, its own
 *                                   regions and its peers', at most twice the budget; device: memory
 *                                   in use at most the budget + 64 MB (allocation granularity) per rank on the GPU above
 *                                   the start); after freeing them all, no gc3 mapping or /dev/shm
 *                                   segment is left and device memory is back within 4 MB.
 *                                   --max-mapped-per-comm B (host backend): the shared memory gc3
 *                                   maps at most, per communicator, at most B bytes
 *
 * Every check prints; the last line is "test_faults MODE: N passed, M failed". */
#include <dirent.h>
#include <mpi.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gc3_mpi_util.h"

static int rank, size, on_device, checks, failures;

static void check(int ok, const char *what)
{
    gc3_test_check(ok, what, &checks, &failures);
}

static long count_dir(const char *path, const char *prefix)
{
    DIR           *d = opendir(path);
    struct dirent *e;
    long           n = 0;
    if (d == NULL) {
        return -1;
    }
    while ((e = readdir(d)) != NULL) {
        n += e->d_name[0] != '.' && (prefix == NULL || strncmp(e->d_name, prefix, strlen(prefix)) == 0);
    }
    closedir(d);
    return n;
}

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    long  pages = 0, resident = 0;
    if (f == NULL) {
        return -1;
    }
    if (fscanf(f, "%ld %ld", &pages, &resident) != 2) {
        resident = -1;
    }
    fclose(f);
    return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

static long device_used_mb(void)
{
#ifdef GC3_HAVE_CUDA
    size_t free_b = 0, total_b = 0;
    if (on_device && cudaMemGetInfo(&free_b, &total_b) == cudaSuccess) {
        return (long)((total_b - free_b) >> 20);
    }
#endif
    return -1;
}

typedef struct {
    long rss_kb, fds, shm, dev_mb;
} usage_t;

static usage_t usage(void)
{
    /* gc3's own segments only (named /gc3-...): other jobs on the machine come and go */
    char own[32]; /* the /dev/shm segments this process created (gc3 names them after their creator: other
                      * jobs' segments, of tests running beside this one, are not counted) */
    snprintf(own, sizeof(own), "gc3-%ld-", (long)getpid());
    usage_t u = { rss_kb(), count_dir("/proc/self/fd", NULL), count_dir("/dev/shm", own), device_used_mb() };
    return u;
}

/* one allreduce of n floats (sum), checked; on the device when --device */
/* One checked allreduce of n floats. dbuf: two device/test buffers of at least n floats to use
 * (NULL: allocate and free them here). */
static int allreduce_checked_in(MPI_Comm comm, size_t n, int salt, void *const *dbuf)
{
    int    r, s, ok = 1;
    float *h = malloc(n * sizeof(float) + 4), *o = malloc(n * sizeof(float) + 4);
    void  *dh, *dout;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    for (size_t i = 0; i < n; i++) h[i] = (float)((r + 1) * (int)((i + (size_t)salt) % 13));
    dh   = dbuf ? dbuf[0] : gc3_test_alloc(on_device, n * sizeof(float));
    dout = dbuf ? dbuf[1] : gc3_test_alloc(on_device, n * sizeof(float));
    gc3_test_copy(on_device, dh, h, n * sizeof(float));
    ok = MPI_Allreduce(dh, dout, (int)n, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS;
    gc3_test_copy(on_device, o, dout, n * sizeof(float));
    for (size_t i = 0; i < n && ok; i++) ok = o[i] == (float)(s * (s + 1) / 2 * (int)((i + (size_t)salt) % 13));
    if (!dbuf) {
        gc3_test_free(on_device, dh);
        gc3_test_free(on_device, dout);
    }
    free(h);
    free(o);
    return ok;
}

static int allreduce_checked(MPI_Comm comm, size_t n, int salt)
{
    return allreduce_checked_in(comm, n, salt, NULL);
}

/* A call that is to fail: MPI's name for the class of what it returned ("MPI_SUCCESS" when it did
 * not fail), and whether it failed within the timeout (+30 s of slack for a loaded machine). */
static const char *error_text(int rc, char msg[MPI_MAX_ERROR_STRING])
{
    int cls = 0, len = 0;
    if (rc == MPI_SUCCESS) {
        return "MPI_SUCCESS";
    }
    MPI_Error_class(rc, &cls);
    MPI_Error_string(cls, msg, &len);
    return msg;
}

static int failed_in_time(int rc, double dt, double timeout)
{
    return rc != MPI_SUCCESS && dt <= timeout + 30;
}

static void run_skip(double timeout)
{
    MPI_Comm comm;
    size_t   n = 100000;
    float   *in = calloc(n, sizeof(float)), *out = calloc(n, sizeof(float));
    void    *din = gc3_test_alloc(on_device, n * sizeof(float)), *dout = gc3_test_alloc(on_device, n * sizeof(float));
    int      ok_local = 1;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    gc3_test_copy(on_device, din, in, n * sizeof(float));
    /* a first call builds the plan everywhere (plan building is collective) */
    check(MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS, "warm-up allreduce");
    if (rank != 0) {
        double t0 = gc3_test_now(), dt;
        int    rc = MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm);
        char   msg[MPI_MAX_ERROR_STRING] = "";
        dt = gc3_test_now() - t0;
        printf("rank %d: allreduce with rank 0 missing returned %s after %.2f s\n", rank, error_text(rc, msg), dt);
        fflush(stdout);
        ok_local = failed_in_time(rc, dt, timeout);
    }
    /* everyone meets again through the previous module (host memory) and finalizes */
    MPI_Barrier(MPI_COMM_WORLD);
    check(ok_local, "the ranks that made the call got an error within coll_gc3_timeout (+30 s), none hung");
    MPI_Comm_free(&comm);
    gc3_test_free(on_device, din);
    gc3_test_free(on_device, dout);
    free(in);
    free(out);
}

/* rank 0 is killed (SIGKILL) while the others are in an MPI_Allreduce: they must get an error
 * naming it within the timeout. Run under mpirun --enable-recovery (else mpirun ends the job
 * when a process dies). The survivors cannot finalize with a dead peer: each prints its result
 * and leaves with _exit (0 when it got the error in time). */
static void run_kill(double timeout)
{
    MPI_Comm comm;
    size_t   n = 100000;
    void    *din = gc3_test_alloc(on_device, n * sizeof(float)), *dout = gc3_test_alloc(on_device, n * sizeof(float));

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm); /* builds the plan everywhere */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        usleep(200000); /* the others are inside the call by now */
        kill(getpid(), SIGKILL);
    } else {
        double t0 = gc3_test_now(), dt;
        int    rc = MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm);
        char   msg[MPI_MAX_ERROR_STRING] = "";
        dt = gc3_test_now() - t0;
        printf("test_faults kill: rank %d: allreduce with rank 0 killed returned %s after %.2f s: %s\n", rank,
               error_text(rc, msg), dt, failed_in_time(rc, dt, timeout) ? "ok, no hang" : "FAILED");
        fflush(stdout);
        _exit(failed_in_time(rc, dt, timeout) ? 0 : 1);
    }
}

/* rank 0 calls MPI_Allreduce while the others call MPI_Alltoall (plans of both built before):
 * every rank must get an error within the timeout */
static void run_mismatch(double timeout)
{
    MPI_Comm comm;
    size_t   n = 4096;
    void    *din = gc3_test_alloc(on_device, n * (size_t)size * sizeof(float));
    void    *dout = gc3_test_alloc(on_device, n * (size_t)size * sizeof(float));
    int      rc, ok_local;
    char     msg[MPI_MAX_ERROR_STRING] = "";
    double   t0, dt;

    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    check(MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS &&
              MPI_Alltoall(din, (int)n, MPI_FLOAT, dout, (int)n, MPI_FLOAT, comm) == MPI_SUCCESS,
          "warm-up allreduce and alltoall");
    t0 = gc3_test_now();
    rc = rank == 0 ? MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm)
                   : MPI_Alltoall(din, (int)n, MPI_FLOAT, dout, (int)n, MPI_FLOAT, comm);
    dt = gc3_test_now() - t0;
    printf("rank %d: %s against the others' %s returned %s after %.2f s\n", rank, rank == 0 ? "allreduce" : "alltoall",
           rank == 0 ? "alltoall" : "allreduce", error_text(rc, msg), dt);
    fflush(stdout);
    ok_local = failed_in_time(rc, dt, timeout);
    MPI_Barrier(MPI_COMM_WORLD);
    check(ok_local, "mismatched collectives: every rank got an error within coll_gc3_timeout (+30 s), none hung");
    MPI_Comm_free(&comm);
    gc3_test_free(on_device, din);
    gc3_test_free(on_device, dout);
}

/* rank 0 passes half the count of the others: an erroneous program that must not give anybody a
 * result (rank 0 would finish first and read the others' messages of a longer call) */
static void run_counts(double timeout)
{
    /* 1000 and 1 000 000 floats after a warm-up of the shorter count (the same plan on every
     * rank, or one rank on a plan built before while the other builds another: on 2 GPUs 4 MB and
     * 8 MB are different size classes), then 10 000 floats with no warm-up (on the host backend
     * 40 KB and 80 KB are different size classes: both ranks build different plans at once) */
    const size_t counts[3] = {1000, 1000000, 10000};
    for (int k = 0; k < 3; k++) {
        MPI_Comm comm;
        size_t   n    = rank == 0 ? counts[k] : 2 * counts[k];
        void    *din  = gc3_test_alloc(on_device, 2 * counts[k] * sizeof(float));
        void    *dout = gc3_test_alloc(on_device, 2 * counts[k] * sizeof(float));
        char     msg[MPI_MAX_ERROR_STRING] = "", what[160];
        double   t0, dt;
        int      rc, ok_local;

        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        if (k < 2) {
            /* the plan of this size class first, with matching counts */
            check(MPI_Allreduce(din, dout, (int)counts[k], MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS, "warm-up allreduce");
        }
        t0 = gc3_test_now();
        rc = MPI_Allreduce(din, dout, (int)n, MPI_FLOAT, MPI_SUM, comm);
        dt = gc3_test_now() - t0;
        printf("rank %d: allreduce of %zu floats (the others: %zu) returned %s after %.2f s\n", rank, n,
               rank == 0 ? 2 * counts[k] : counts[k], error_text(rc, msg), dt);
        fflush(stdout);
        ok_local = failed_in_time(rc, dt, timeout);
        MPI_Barrier(MPI_COMM_WORLD);
        snprintf(what, sizeof(what), "mismatched counts (%zu vs %zu): every rank got an error within the timeout", counts[k],
                 2 * counts[k]);
        check(ok_local, what);
        MPI_Comm_free(&comm);
        gc3_test_free(on_device, din);
        gc3_test_free(on_device, dout);
    }
}

/* a checked call of n elements (salt varies the data) */
typedef int (*checked_fn)(MPI_Comm comm, size_t n, int salt);

/* One call of each size to warm up (checked), then `calls` calls cycling through the sizes, with
 * the usage before and after them and the time they took. Returns whether all results were right. */
static int checked_calls(checked_fn one, const size_t *sizes, size_t nsizes, int calls, usage_t *before,
                         usage_t *after, double *secs)
{
    int    ok = 1;
    double t0;
    for (size_t k = 0; k < nsizes; k++) ok &= one(MPI_COMM_WORLD, sizes[k], 0);
    check(ok, "warm-up");
    *before = usage();
    t0      = gc3_test_now();
    ok      = 1;
    for (int i = 0; i < calls; i++) ok &= one(MPI_COMM_WORLD, sizes[(size_t)i % nsizes], i);
    *after = usage();
    *secs  = gc3_test_now() - t0;
    return ok;
}

static void run_stress(int calls, int comms)
{
    usage_t u0, u1, u2;
    char    what[256];
    int     ok = 1;
    const size_t sizes[] = {1, 7, 1000, 4096, 65537, 100000, 300001};
    double  t0, secs;

    /* warm up the plans of every size class, then measure */
    ok = checked_calls(allreduce_checked, sizes, sizeof(sizes) / sizeof(sizes[0]), calls, &u0, &u1, &secs);
    snprintf(what, sizeof(what), "%d back-to-back allreduces of 1..300001 floats, all results right (%.1f s)", calls,
             secs);
    check(ok, what);
    t0 = gc3_test_now();
    ok = 1;
    for (int i = 0; i < comms; i++) {
        MPI_Comm c;
        MPI_Comm_dup(MPI_COMM_WORLD, &c);
        ok &= allreduce_checked(c, i % 2 ? 1000 : 65537, i);
        MPI_Comm_free(&c);
    }
    u2 = usage();
    snprintf(what, sizeof(what), "%d communicator dup/allreduce/free cycles, all results right (%.1f s)", comms,
             gc3_test_now() - t0);
    check(ok, what);
    printf("rank %d: rss %ld -> %ld -> %ld KiB, fds %ld -> %ld -> %ld, gc3 /dev/shm entries %ld -> %ld -> %ld, device MiB in "
           "use %ld -> %ld -> %ld (before, after the calls, after the communicators)\n",
           rank, u0.rss_kb, u1.rss_kb, u2.rss_kb, u0.fds, u1.fds, u2.fds, u0.shm, u1.shm, u2.shm, u0.dev_mb, u1.dev_mb,
           u2.dev_mb);
    fflush(stdout);
    /* allowances: malloc arenas and the MPI library's own caches settle; a leak per call or per
     * communicator (a region, an fd, a segment, a plan) exceeds them by far */
    check(u1.fds == u0.fds && u2.fds == u0.fds, "open file descriptors unchanged");
    check(u1.shm <= u0.shm + 0 && u2.shm <= u0.shm, "/dev/shm entries unchanged");
    check(u2.rss_kb - u0.rss_kb < 64 * 1024, "resident memory grew by less than 64 MiB");
    check(u2.dev_mb < 0 || u2.dev_mb - u0.dev_mb < 256, "device memory in use grew by less than 256 MiB");
}

/* one alltoall of n int32 per peer on new buffers, checked */
static int alltoall_fresh(MPI_Comm comm, size_t n, int salt)
{
    int      r, s, ok;
    int32_t *h, *o;
    void    *dh, *dout;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    h = malloc(n * (size_t)s * sizeof(int32_t) + 4);
    o = malloc(n * (size_t)s * sizeof(int32_t) + 4);
    for (int p = 0; p < s; p++) {
        for (size_t i = 0; i < n; i++) h[(size_t)p * n + i] = (int32_t)((r * 1000003 + p * 1009 + (long)i + salt) % 2000000011);
    }
    dh   = gc3_test_alloc(on_device, n * (size_t)s * sizeof(int32_t));
    dout = gc3_test_alloc(on_device, n * (size_t)s * sizeof(int32_t));
    gc3_test_copy(on_device, dh, h, n * (size_t)s * sizeof(int32_t));
    ok = MPI_Alltoall(dh, (int)n, MPI_INT32_T, dout, (int)n, MPI_INT32_T, comm) == MPI_SUCCESS;
    gc3_test_copy(on_device, o, dout, n * (size_t)s * sizeof(int32_t));
    for (int p = 0; p < s && ok; p++) {
        for (size_t i = 0; i < n && ok; i++) {
            ok = o[(size_t)p * n + i] == (int32_t)((p * 1000003 + r * 1009 + (long)i + salt) % 2000000011);
        }
    }
    gc3_test_free(on_device, dh);
    gc3_test_free(on_device, dout);
    free(h);
    free(o);
    return ok;
}

static void run_a2a_fresh(int calls)
{
    const size_t per[] = {65536, 262144, 262144 + 1024, 786432}; /* int32 per peer: 256 KB to 3 MB */
    usage_t      u0, u1;
    char         what[256];
    double       secs;
    int          ok = checked_calls(alltoall_fresh, per, sizeof(per) / sizeof(per[0]), calls, &u0, &u1, &secs);

    snprintf(what, sizeof(what), "%d alltoalls with new buffers at every call, all results right (%.1f s)", calls, secs);
    check(ok, what);
    printf("rank %d: fds %ld -> %ld, device MiB in use %ld -> %ld (before and after the calls)\n", rank, u0.fds, u1.fds,
           u0.dev_mb, u1.dev_mb);
    fflush(stdout);
    check(u1.fds == u0.fds, "open file descriptors unchanged");
    /* one buffer per call kept (by gc3 or the allocator) would be gigabytes */
    check(u1.dev_mb < 0 || u1.dev_mb - u0.dev_mb < 256, "device memory in use grew by less than 256 MiB");
}

/* one thread of run_threads: its own communicator, its own sizes */
typedef struct {
    MPI_Comm comm;
    int      id, calls, device, ok;
    void    *dbuf[2]; /* allocated before the threads start: cudaMalloc and cudaFree synchronize the
                       * whole device, so calling them while other threads' collective kernels wait
                       * for peers can deadlock (as with NCCL) */
} thread_arg_t;

/* One checked alltoall of n ints per peer in the two buffers dbuf (each of n * size ints). */
static int alltoall_checked_in(MPI_Comm comm, size_t n, void *const *dbuf)
{
    int    r, s, ok;
    size_t total;
    int   *h, *o;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    total = n * (size_t)s;
    h     = malloc(total * sizeof(int) + 4);
    o     = malloc(total * sizeof(int) + 4);
    for (size_t i = 0; i < total; i++) h[i] = r * 1000003 + (int)i;
    gc3_test_copy(on_device, dbuf[0], h, total * sizeof(int));
    ok = MPI_Alltoall(dbuf[0], (int)n, MPI_INT, dbuf[1], (int)n, MPI_INT, comm) == MPI_SUCCESS;
    gc3_test_copy(on_device, o, dbuf[1], total * sizeof(int));
    for (size_t i = 0; i < total && ok; i++) ok = o[i] == (int)(i / n) * 1000003 + (int)((size_t)r * n + i % n);
    free(h);
    free(o);
    return ok;
}

static void *thread_main(void *p)
{
    thread_arg_t *a = p;
    const size_t  sizes[] = {1, 33, 4096, 65537, 200003};
#ifdef GC3_HAVE_CUDA
    if (on_device) cudaSetDevice(a->device); /* the current device is per thread */
#endif
    a->ok = 1;
    for (int i = 0; i < a->calls && a->ok; i++) {
        size_t n = sizes[(size_t)(i + a->id) % (sizeof(sizes) / sizeof(sizes[0]))];
        a->ok    = (i % 4 == 3) ? alltoall_checked_in(a->comm, n / 4 + 1, a->dbuf)
                                 : allreduce_checked_in(a->comm, n, i + a->id, a->dbuf);
        if (!a->ok) fprintf(stderr, "rank %d thread %d: call %d (%zu elements) wrong or failed\n", rank, a->id, i, n);
    }
    return NULL;
}

static void run_threads(int calls, int provided)
{
    enum { NT = 4 };
    pthread_t    th[NT];
    thread_arg_t a[NT];
    usage_t      u0, u1;
    char         what[256];
    int          ok = 1, device = 0;
    double       t0;

    if (provided < MPI_THREAD_MULTIPLE) {
        /* not a pass: the test cannot run here */
        check(0, "MPI_THREAD_MULTIPLE provided by this Open MPI");
        return;
    }
#ifdef GC3_HAVE_CUDA
    if (on_device) cudaGetDevice(&device);
#endif
    for (int t = 0; t < NT; t++) {
        size_t most = 200003 * sizeof(float) > (200003 / 4 + 1) * (size_t)size * sizeof(int)
                          ? 200003 * sizeof(float)
                          : (200003 / 4 + 1) * (size_t)size * sizeof(int);
        MPI_Comm_dup(MPI_COMM_WORLD, &a[t].comm);
        a[t].id = t, a[t].calls = calls, a[t].device = device, a[t].ok = 0;
        a[t].dbuf[0] = gc3_test_alloc(on_device, most);
        a[t].dbuf[1] = gc3_test_alloc(on_device, most);
    }
    /* every communicator's plans exist before the measurement (built concurrently below too) */
    u0 = usage();
    t0 = gc3_test_now();
    for (int t = 0; t < NT; t++) pthread_create(&th[t], NULL, thread_main, &a[t]);
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        ok &= a[t].ok;
    }
    snprintf(what, sizeof(what), "%d threads x %d checked allreduces/alltoalls on their own communicators at once, all right (%.1f s)",
             NT, calls, gc3_test_now() - t0);
    check(ok, what);
    for (int t = 0; t < NT; t++) {
        MPI_Comm_free(&a[t].comm);
        gc3_test_free(on_device, a[t].dbuf[0]);
        gc3_test_free(on_device, a[t].dbuf[1]);
    }
    u1 = usage();
    printf("rank %d: fds %ld -> %ld, gc3 /dev/shm entries %ld -> %ld, rss %ld -> %ld KiB (before the threads, after the communicators)\n",
           rank, u0.fds, u1.fds, u0.shm, u1.shm, u0.rss_kb, u1.rss_kb);
    fflush(stdout);
    check(u1.fds == u0.fds, "threads: open file descriptors unchanged");
    check(u1.shm <= u0.shm, "threads: /dev/shm entries unchanged");
}

/* buffers on another device than the rank's: gc3 must not run them on its own GPU's plan (the
 * kernel would read another GPU's memory through a plan mapped for this one); they are staged */
static void run_otherdev(void)
{
#ifdef GC3_HAVE_CUDA
    int      ndev = 0, mine = 0, other;
    size_t   n    = 100000;
    float   *h    = malloc(n * sizeof(float)), *a, *b, *c;
    MPI_Comm comm;
    int      ok;

    cudaGetDeviceCount(&ndev);
    cudaGetDevice(&mine);
    if (!on_device || ndev < 2) {
        check(0, "otherdev needs --device and two GPUs per node");
        free(h);
        return;
    }
    other = (mine + 1) % ndev;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    a = gc3_test_alloc(1, n * sizeof(float)); /* on the rank's GPU */
    cudaSetDevice(other);
    b = gc3_test_alloc(1, n * sizeof(float));
    c = gc3_test_alloc(1, n * sizeof(float));
    cudaSetDevice(mine);
    for (size_t i = 0; i < n; i++) h[i] = (float)(rank + 1) + (float)(i % 7);
    /* 1. on the rank's GPU: gc3 runs it (and builds its plan there) */
    gc3_test_copy(1, a, h, n * sizeof(float));
    ok = MPI_Allreduce(MPI_IN_PLACE, a, (int)n, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS;
    gc3_test_copy(1, h, a, n * sizeof(float));
    for (size_t i = 0; i < n; i++) ok &= h[i] == (float)(size * (size + 1) / 2) + (float)size * (float)(i % 7);
    check(ok, "otherdev: allreduce on the rank's GPU");
    /* 2. both buffers on another GPU */
    for (size_t i = 0; i < n; i++) h[i] = (float)(rank + 1) + (float)(i % 7);
    gc3_test_copy(1, b, h, n * sizeof(float));
    ok = MPI_Allreduce(b, c, (int)n, MPI_FLOAT, MPI_SUM, comm) == MPI_SUCCESS;
    gc3_test_copy(1, h, c, n * sizeof(float));
    for (size_t i = 0; i < n; i++) ok &= h[i] == (float)(size * (size + 1) / 2) + (float)size * (float)(i % 7);
    check(ok, "otherdev: allreduce with both buffers on another GPU");
    /* 3. send buffer on the rank's GPU, receive buffer on another */
    for (size_t i = 0; i < n; i++) h[i] = (float)(rank + 1);
    gc3_test_copy(1, a, h, n * sizeof(float));
    ok = MPI_Allreduce(a, c, (int)n, MPI_FLOAT, MPI_MAX, comm) == MPI_SUCCESS;
    gc3_test_copy(1, h, c, n * sizeof(float));
    for (size_t i = 0; i < n; i++) ok &= h[i] == (float)size;
    check(ok, "otherdev: allreduce from the rank's GPU into another GPU's memory");
    gc3_test_free(1, a);
    gc3_test_free(1, b);
    gc3_test_free(1, c);
    MPI_Comm_free(&comm);
    free(h);
#else
    check(0, "otherdev needs a build with CUDA");
#endif
}

/* One checked alltoall of n bytes per peer (each byte names its sender, destination and index). */
static int alltoall_checked(MPI_Comm comm, size_t n)
{
    int            r, s, ok;
    unsigned char *h, *o;
    void          *dh, *dout;
    MPI_Comm_rank(comm, &r);
    MPI_Comm_size(comm, &s);
    h    = malloc(n * (size_t)s);
    o    = malloc(n * (size_t)s);
    dh   = gc3_test_alloc(on_device, n * (size_t)s);
    dout = gc3_test_alloc(on_device, n * (size_t)s);
    for (int q = 0; q < s; q++) {
        for (size_t i = 0; i < n; i++) h[(size_t)q * n + i] = (unsigned char)(r * 31 + q * 7 + i);
    }
    gc3_test_copy(on_device, dh, h, n * (size_t)s);
    ok = MPI_Alltoall(dh, (int)n, MPI_BYTE, dout, (int)n, MPI_BYTE, comm) == MPI_SUCCESS;
    gc3_test_copy(on_device, o, dout, n * (size_t)s);
    for (int q = 0; q < s && ok; q++) {
        for (size_t i = 0; i < n && ok; i++) ok = o[(size_t)q * n + i] == (unsigned char)(q * 31 + r * 7 + i);
    }
    gc3_test_free(on_device, dh);
    gc3_test_free(on_device, dout);
    free(h);
    free(o);
    return ok;
}

/* Every size of the comms mode on one communicator; 1 when all results were right. */
static int comms_use(MPI_Comm c, size_t max_count, int salt)
{
    const size_t counts[] = {2, 16384, max_count}, a2a[] = {1024, 65536, 1048576};
    int          ok = 1;
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) ok &= allreduce_checked(c, counts[k], salt);
    for (size_t k = 0; k < sizeof(a2a) / sizeof(a2a[0]); k++) ok &= alltoall_checked(c, a2a[k]);
    return ok;
}

static void run_comms(int ncomms, size_t max_count, long max_per_comm)
{
    const char *b      = getenv("OMPI_MCA_coll_gc3_memory_budget");
    long        budget = b != NULL ? atol(b) : 0, peak_shm = 0, peak_dev = 0, shm0;
    MPI_Comm   *c      = calloc((size_t)ncomms, sizeof(MPI_Comm)), w;
    usage_t     u0, u1;
    int         ok = 1, ok_all;
    char        what[256];

    long        dev_first = device_used_mb();

    check(budget > 0, "coll_gc3_memory_budget is set (mpirun --mca)");
    /* one communicator used and freed first: what CUDA loads once per process (the kernels' module,
     * its local memory) is then in the baseline */
    MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &w); /* (a split's allgather on world: its plan, kept) */
    check(comms_use(w, max_count, 0), "warm-up communicator: every result right");
    MPI_Comm_free(&w);
    MPI_Allreduce(&ok, &ok_all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD); /* (host backend: world's plan, kept) */
    MPI_Barrier(MPI_COMM_WORLD);
    u0    = usage();
    shm0  = gc3_test_shm_mapped();
    if (on_device) {
        printf("rank %d: device memory in use before gc3's first call %ld MB, after a communicator was used and freed "
               "%ld MB (what CUDA keeps once per process: the kernels' module and local memory)\n", rank, dev_first,
               u0.dev_mb);
    }
    for (int i = 0; i < ncomms; i++) {
        if (i % 2 == 0) {
            MPI_Comm_dup(MPI_COMM_WORLD, &c[i]);
        } else {
            MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c[i]); /* the ranks in reverse order */
        }
        ok &= comms_use(c[i], max_count, i);
        peak_shm = gc3_test_shm_mapped() - shm0 > peak_shm ? gc3_test_shm_mapped() - shm0 : peak_shm;
        peak_dev = device_used_mb() > peak_dev ? device_used_mb() : peak_dev;
    }
    MPI_Allreduce(&ok, &ok_all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    snprintf(what, sizeof(what), "%d communicators alive at once: every allreduce and alltoall result right", ncomms);
    check(ok_all, what);
    printf("rank %d: gc3 shared memory mapped at most %ld bytes (budget %ld); device memory in use %ld MB at the "
           "start, at most %ld MB (%.1f MB per communicator, all ranks on this GPU)\n", rank, peak_shm, budget, u0.dev_mb,
           peak_dev, (double)(peak_dev - u0.dev_mb) / ncomms);
    check(peak_shm <= 2 * budget, "gc3's mapped shared memory within twice coll_gc3_memory_budget (own regions and peers')");
    if (max_per_comm > 0) {
        snprintf(what, sizeof(what), "gc3's mapped shared memory per communicator %ld bytes, at most %ld", peak_shm / ncomms,
                 max_per_comm);
        check(peak_shm / ncomms <= max_per_comm, what);
    }
    if (on_device) {
        /* cudaMemGetInfo counts the whole GPU: every rank on it holds up to the budget */
        int sharing = 1;
#ifdef GC3_HAVE_CUDA
        MPI_Comm node;
        int      dev = -1, n, *devs;
        cudaGetDevice(&dev);
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
        MPI_Comm_size(node, &n);
        devs = malloc((size_t)n * sizeof(int));
        MPI_Allgather(&dev, 1, MPI_INT, devs, 1, MPI_INT, node);
        sharing = 0;
        for (int q = 0; q < n; q++) sharing += devs[q] == dev;
        free(devs);
        MPI_Comm_free(&node);
#endif
        /* + 64 MB per rank: what CUDA takes beyond the sizes gc3 counts (allocation granularity: 36 MB per
         * rank above the budget with its 105 allocations, 2 ranks on 1 x H200 through MPS) */
        snprintf(what, sizeof(what), "device memory in use within %d x (the budget + 64 MB) above the start (%d rank(s) "
                 "on this GPU)", sharing, sharing);
        check(peak_dev - u0.dev_mb <= (long)sharing * ((budget >> 20) + 64), what);
    }
    for (int i = 0; i < ncomms; i++) {
        MPI_Comm_free(&c[i]);
    }
    MPI_Barrier(MPI_COMM_WORLD);
#ifdef GC3_HAVE_CUDA
    if (on_device) {
        cudaDeviceSynchronize();
    }
#endif
    u1 = usage();
    printf("rank %d: after the frees: %ld bytes of gc3 shared memory mapped more than at the start, %ld "
           "/dev/shm/gc3-PID-* of its own (%ld at the start), "
           "device memory in use %ld MB (%ld at the start)\n",
           rank, gc3_test_shm_mapped() - shm0, u1.shm, u0.shm, u1.dev_mb, u0.dev_mb);
    check(gc3_test_shm_mapped() == shm0, "after the frees: gc3's shared memory mapped as at the start (MPI_COMM_WORLD's only)");
    check(u1.shm <= u0.shm, "after the frees: no /dev/shm/gc3-* segment of its own left");
    if (on_device) {
        check(u1.dev_mb - u0.dev_mb <= 4, "after the frees: device memory in use back within 4 MB of the start");
    }
    free(c);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    int         calls = -1, comms = -1; /* calls, comms: each mode's default */
    long        max_count = 262144, max_per_comm = 0;
    double      timeout = 300;
    const char *t = getenv("OMPI_MCA_coll_gc3_timeout");

    int         provided = MPI_THREAD_SINGLE;

    MPI_Init_thread(&argc, &argv, strcmp(mode, "threads") == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0) on_device = 1;
        else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc) calls = atoi(argv[++i]);
        else if (strcmp(argv[i], "--comms") == 0 && i + 1 < argc) comms = atoi(argv[++i]);
        else if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc) max_count = atol(argv[++i]);
        else if (strcmp(argv[i], "--max-mapped-per-comm") == 0 && i + 1 < argc) max_per_comm = atol(argv[++i]);
        else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) timeout = atof(argv[++i]);
    }
    if (t != NULL) timeout = atof(t);
    if (on_device) gc3_test_select_gpu(MPI_COMM_WORLD);
    if (strcmp(mode, "skip") == 0) {
        run_skip(timeout);
    } else if (strcmp(mode, "mismatch") == 0) {
        run_mismatch(timeout);
    } else if (strcmp(mode, "stress") == 0) {
        run_stress(calls < 0 ? 10000 : calls, comms < 0 ? 1000 : comms);
    } else if (strcmp(mode, "comms") == 0) {
        run_comms(comms < 0 ? 64 : comms, (size_t)max_count, max_per_comm);
    } else if (strcmp(mode, "a2afresh") == 0) {
        run_a2a_fresh(calls < 0 ? 300 : calls);
    } else if (strcmp(mode, "kill") == 0) {
        run_kill(timeout);
    } else if (strcmp(mode, "threads") == 0) {
        run_threads(calls < 0 ? 10000 : calls, provided);
    } else if (strcmp(mode, "counts") == 0) {
        run_counts(timeout);
    } else if (strcmp(mode, "otherdev") == 0) {
        run_otherdev();
    } else {
        if (rank == 0) fprintf(stderr, "usage: test_faults skip|mismatch|counts|kill|stress|a2afresh|threads|otherdev|comms [--device] [--calls N] [--comms N] [--max-count N] [--timeout S]\n");
        MPI_Finalize();
        return 2;
    }
    if (rank == 0) printf("test_faults %s: %d passed, %d failed\n", mode, checks - failures, failures);
    MPI_Finalize();
    return failures != 0;
}
