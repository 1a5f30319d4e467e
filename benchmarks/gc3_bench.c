/* gc3_bench: an OSU-style sweep that measures, per size and in one run, the same collective
 * three ways on the same buffers:
 *
 *   gc3     MPI_Allreduce / MPI_Alltoall on device buffers (whatever coll component takes the
 *           call: run it under gc3-mpirun for gc3)
 *   nccl    ncclAllReduce / ncclAlltoAll on the same buffers, each call followed by
 *           cudaStreamSynchronize (an MPI call is blocking: this is nccl-tests' -z 1 regime);
 *           libnccl is loaded at run time, so any NCCL-compatible library (MSCCL++'s) can be
 *           given with --nccl-lib
 *   staged  cudaMemcpy to pinned host memory, the MPI call on host buffers, cudaMemcpy back:
 *           what a user of a non-CUDA-aware MPI has to write
 *
 * Usage (one rank per GPU):
 *   gc3_bench [-t allreduce|alltoall] [-d cuda|host] [-c] [-m MIN:MAX] [-i ITERS] [-x WARMUP]
 *             [--methods gc3,nccl,staged] [--staged-max BYTES] [--nccl-lib PATH] [--csv FILE]
 *
 * Conventions follow osu_allreduce / osu_alltoall: float32 (allreduce: sum); the size is the
 * message size (allreduce: the buffer; alltoall: the bytes sent to each peer); each call is
 * timed alone, with an untimed barrier between calls; the latency printed is the average over
 * ranks of each rank's average. algbw = the bytes of a rank's send buffer / latency; busbw =
 * algbw * 2(R-1)/R (allreduce) or (R-1)/R (alltoall), as nccl-tests define them. -c checks each
 * method's result against a host computation after its timed calls. Sizes double from MIN to
 * MAX (K/M/G suffixes). Iterations default to 200 (100 above 1 MB, 20 above 64 MB), warm-up to
 * a tenth of that. --staged-max skips the (slow) staged path above that size. -d host (no GPU)
 * runs gc3 and staged on host buffers, for CI. */
#include <mpi.h>
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif
#include "gc3_mpi_util.h"

enum { M_GC3, M_NCCL, M_STAGED, M_COUNT };
static const char *const method_names[M_COUNT] = {"gc3", "nccl", "staged"};

/* The part of NCCL's ABI used here (nccl.h; stable since NCCL 2.0), so no NCCL headers are
 * needed to build. */
typedef struct {
    char internal[128];
} bench_nccl_id_t;
typedef void *bench_nccl_comm_t;
enum { BENCH_NCCL_FLOAT32 = 7, BENCH_NCCL_SUM = 0 };
static struct {
    void *lib;
    int   version;
    int (*get_version)(int *);
    int (*get_unique_id)(bench_nccl_id_t *);
    int (*comm_init_rank)(bench_nccl_comm_t *, int, bench_nccl_id_t, int);
    int (*comm_destroy)(bench_nccl_comm_t);
    int (*all_reduce)(const void *, void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*all_to_all)(const void *, void *, size_t, int, bench_nccl_comm_t, void *); /* ncclAlltoAll: NCCL >= 2.28 */
    int (*send)(const void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*recv)(void *, size_t, int, int, bench_nccl_comm_t, void *);
    int (*group_start)(void);
    int (*group_end)(void);
    const char *(*error_string)(int);
    bench_nccl_comm_t comm;
} nccl;

static int rank, nranks, on_device = 1;
#ifdef GC3_HAVE_CUDA
static cudaStream_t stream;
#endif

static void die(const char *msg)
{
    if (rank == 0) {
        fprintf(stderr, "gc3_bench: %s\n", msg);
    }
    MPI_Finalize();
    exit(2);
}

/* Load libnccl and make a communicator of MPI_COMM_WORLD. 0 when NCCL is usable; otherwise
 * why not is in why (the same on every rank). */
static int nccl_open(const char *path, char *why, size_t whylen)
{
    bench_nccl_id_t id;
    int             ok, all;

    nccl.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    ok       = nccl.lib != NULL;
    if (ok) {
        nccl.get_version    = (int (*)(int *))dlsym(nccl.lib, "ncclGetVersion");
        nccl.get_unique_id  = (int (*)(bench_nccl_id_t *))dlsym(nccl.lib, "ncclGetUniqueId");
        nccl.comm_init_rank = (int (*)(bench_nccl_comm_t *, int, bench_nccl_id_t, int))dlsym(nccl.lib, "ncclCommInitRank");
        nccl.comm_destroy   = (int (*)(bench_nccl_comm_t))dlsym(nccl.lib, "ncclCommDestroy");
        nccl.all_reduce = (int (*)(const void *, void *, size_t, int, int, bench_nccl_comm_t, void *))dlsym(nccl.lib, "ncclAllReduce");
        nccl.all_to_all = (int (*)(const void *, void *, size_t, int, bench_nccl_comm_t, void *))dlsym(nccl.lib, "ncclAlltoAll");
        nccl.send        = (int (*)(const void *, size_t, int, int, bench_nccl_comm_t, void *))dlsym(nccl.lib, "ncclSend");
        nccl.recv        = (int (*)(void *, size_t, int, int, bench_nccl_comm_t, void *))dlsym(nccl.lib, "ncclRecv");
        nccl.group_start = (int (*)(void))dlsym(nccl.lib, "ncclGroupStart");
        nccl.group_end   = (int (*)(void))dlsym(nccl.lib, "ncclGroupEnd");
        nccl.error_string = (const char *(*)(int))dlsym(nccl.lib, "ncclGetErrorString");
        ok = nccl.get_version && nccl.get_unique_id && nccl.comm_init_rank && nccl.comm_destroy && nccl.all_reduce &&
             ((nccl.send && nccl.recv && nccl.group_start && nccl.group_end) || nccl.all_to_all);
        if (!ok) {
            snprintf(why, whylen, "%s lacks the NCCL functions used here", path);
        }
    } else {
        snprintf(why, whylen, "cannot load %s: %s", path, dlerror());
    }
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (ok) {
            snprintf(why, whylen, "%s could not be loaded on every rank", path);
        }
        return -1;
    }
    nccl.get_version(&nccl.version);
    if (rank == 0) {
        nccl.get_unique_id(&id);
    }
    MPI_Bcast(&id, sizeof(id), MPI_BYTE, 0, MPI_COMM_WORLD);
    ok = nccl.comm_init_rank(&nccl.comm, nranks, id, rank) == 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        snprintf(why, whylen, "ncclCommInitRank failed");
        return -1;
    }
    return 0;
}

/* One call of method m on the buffers (s, r: device or host; hs, hr: pinned host for staging). */
static int run_once(int m, int a2a, size_t count, void *s, void *r, void *hs, void *hr)
{
    size_t total = a2a ? count * (size_t)nranks : count, bytes = total * sizeof(float);
    int    rc    = 0;

    switch (m) {
    case M_GC3:
        rc = a2a ? MPI_Alltoall(s, (int)count, MPI_FLOAT, r, (int)count, MPI_FLOAT, MPI_COMM_WORLD)
                 : MPI_Allreduce(s, r, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    case M_STAGED:
        gc3_test_copy(on_device, hs, s, bytes);
        rc = a2a ? MPI_Alltoall(hs, (int)count, MPI_FLOAT, hr, (int)count, MPI_FLOAT, MPI_COMM_WORLD)
                 : MPI_Allreduce(hs, hr, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        gc3_test_copy(on_device, r, hr, bytes);
        break;
#ifdef GC3_HAVE_CUDA
    case M_NCCL:
        if (!a2a) {
            rc = nccl.all_reduce(s, r, count, BENCH_NCCL_FLOAT32, BENCH_NCCL_SUM, nccl.comm, stream);
        } else if (nccl.all_to_all != NULL) {
            rc = nccl.all_to_all(s, r, count, BENCH_NCCL_FLOAT32, nccl.comm, stream);
        } else {
            rc = nccl.group_start();
            for (int q = 0; q < nranks && rc == 0; q++) {
                rc = nccl.send((const float *)s + (size_t)q * count, count, BENCH_NCCL_FLOAT32, q, nccl.comm, stream);
                rc = rc ? rc : nccl.recv((float *)r + (size_t)q * count, count, BENCH_NCCL_FLOAT32, q, nccl.comm, stream);
            }
            rc = nccl.group_end() || rc;
        }
        rc = rc ? rc : cudaStreamSynchronize(stream) != cudaSuccess;
        break;
#endif
    default: rc = 1; break;
    }
    return rc;
}

/* The input of rank q, element i; and what the result must be. */
static float input_of(int q, size_t i)
{
    return (float)((q + 1) * (int)(i % 13 + 1));
}

static int check_result(int a2a, size_t count, const float *out)
{
    for (size_t i = 0; i < (a2a ? count * (size_t)nranks : count); i++) {
        float want = a2a ? input_of((int)(i / count), (size_t)rank * count + i % count)
                         : (float)(nranks * (nranks + 1) / 2 * (int)(i % 13 + 1));
        if (out[i] != want) {
            fprintf(stderr, "gc3_bench: rank %d: element %zu is %g, want %g\n", rank, i, out[i], want);
            return 0;
        }
    }
    return 1;
}

static void usage(FILE *out)
{
    fputs("usage: gc3_bench [-t allreduce|alltoall] [-d cuda|host] [-c] [-m MIN:MAX] [-i ITERS] [-x WARMUP]\n"
          "                 [--methods gc3,nccl,staged] [--staged-max BYTES] [--nccl-lib PATH] [--csv FILE]\n"
          "  (under mpirun, one rank per GPU)\n"
          "  -t, --type           the collective (default allreduce; alltoall: -m is the bytes to each peer)\n"
          "  -d, --accelerator    cuda (default): device buffers; host: host buffers (gc3's host backend, for CI)\n"
          "  -c, --validation     check each method's result against a host computation\n"
          "  -m, --message-size   sizes MIN:MAX in bytes, doubling (K, M, G allowed; default 4:64M)\n"
          "  -i, --iterations     timed calls per size (default 200, 100 above 1 MB, 20 above 64 MB)\n"
          "  -x, --warmup         untimed calls first (default a tenth of the iterations)\n"
          "  --methods            which of gc3 (the MPI call), nccl and staged (through host memory) to run\n"
          "  --staged-max         skip the staged path above this size\n"
          "  --nccl-lib           the NCCL library to load (default libnccl.so.2, or $GC3_BENCH_NCCL)\n"
          "  --csv                also write the table as CSV to FILE\n"
          "  -h, --help           this text\n", out);
}

int main(int argc, char **argv)
{
    const char *coll = "allreduce", *csv_path = NULL, *nccl_path = getenv("GC3_BENCH_NCCL");
    size_t      minb = 4, maxb = 64u << 20, staged_max = SIZE_MAX;
    int         validate = 0, iters_opt = -1, warm_opt = -1, use[M_COUNT] = {1, 1, 1}, a2a, failed = 0;
    char        why[512] = "";
    FILE       *csv = NULL;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout); /* before MPI_Init: works without mpirun */
            return 0;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    for (int i = 1; i < argc; i++) {
        const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        char       *e;
        if (!strcmp(o, "-c") || !strcmp(o, "--validation")) {
            validate = 1;
            continue;
        }
        if (v == NULL) {
            die("an option needs a value (gc3_bench --help)");
        }
        i++;
        if (!strcmp(o, "-t") || !strcmp(o, "--type")) {
            coll = v;
        } else if (!strcmp(o, "-d") || !strcmp(o, "--accelerator")) {
            on_device = strcmp(v, "host") != 0;
            if (on_device && strcmp(v, "cuda") != 0) die("-d takes cuda or host");
        } else if (!strcmp(o, "-m") || !strcmp(o, "--message-size")) {
            minb = gc3_test_parse_bytes(v, &e);
            if (*e == ':') {
                maxb = gc3_test_parse_bytes(e + 1, &e);
            } else {
                maxb = minb, minb = 4;
            }
            if (*e != '\0' || minb == 0 || maxb < minb) die("-m takes MIN:MAX in bytes (K, M, G allowed), MIN > 0");
        } else if (!strcmp(o, "-i") || !strcmp(o, "--iterations")) {
            iters_opt = atoi(v);
            if (iters_opt < 1) die("-i takes a positive count");
        } else if (!strcmp(o, "-x") || !strcmp(o, "--warmup")) {
            warm_opt = atoi(v);
            if (warm_opt < 0) die("-x takes a count >= 0");
        } else if (!strcmp(o, "--methods")) {
            for (int m = 0; m < M_COUNT; m++) use[m] = strstr(v, method_names[m]) != NULL;
        } else if (!strcmp(o, "--staged-max")) {
            staged_max = gc3_test_parse_bytes(v, &e);
            if (*e != '\0') die("--staged-max takes bytes (K, M, G allowed)");
        } else if (!strcmp(o, "--nccl-lib")) {
            nccl_path = v;
        } else if (!strcmp(o, "--csv")) {
            csv_path = v;
        } else {
            die("unknown option (gc3_bench --help)");
        }
    }
    a2a = strcmp(coll, "alltoall") == 0;
    if (!a2a && strcmp(coll, "allreduce") != 0) die("-t takes allreduce or alltoall");
#ifndef GC3_HAVE_CUDA
    if (on_device) die("this build has no CUDA: use -d host");
#endif
    if (on_device) {
#ifdef GC3_HAVE_CUDA
        gc3_test_select_gpu(MPI_COMM_WORLD);
        /* ordered after the legacy default stream, like gc3's own: the cudaMemcpy that clears the
         * result before validation must not race with the collective's writes */
        cudaStreamCreateWithFlags(&stream, cudaStreamDefault);
#endif
        if (use[M_NCCL] && nccl_open(nccl_path ? nccl_path : "libnccl.so.2", why, sizeof(why)) != 0) {
            use[M_NCCL] = 0;
        }
    } else {
        use[M_NCCL] = 0;
        snprintf(why, sizeof(why), "host buffers");
    }
    if (rank == 0 && csv_path != NULL && (csv = fopen(csv_path, "w")) == NULL) {
        fprintf(stderr, "gc3_bench: cannot write %s\n", csv_path);
    }
    if (csv != NULL) {
        fprintf(csv, "collective,ranks,bytes,method,latency_us,algbw_GBps,busbw_GBps,valid\n");
    }
    if (rank == 0) {
        printf("# gc3_bench %s, %d ranks, %s buffers, float32%s; %s\n", coll, nranks, on_device ? "device (cuda)" : "host",
               a2a ? "" : " sum", validate ? "validation on" : "validation off");
        if (use[M_NCCL]) {
            printf("# nccl: %s, version %d, each call synchronized\n", nccl_path ? nccl_path : "libnccl.so.2", nccl.version);
        } else {
            printf("# nccl: not measured (%s)\n", why[0] ? why : "--methods");
        }
        printf("# latency: average over ranks (us); busbw GB/s; x/gc3 > 1: gc3 is that many times faster than x\n");
        printf("%-10s %10s %10s %10s %11s %11s %9s %10s %s\n", "# Size", "gc3(us)", "nccl(us)", "staged(us)",
               "gc3_busbw", "nccl_busbw", "nccl/gc3", "staged/gc3", validate ? "Validation" : "");
    }
    for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
        size_t count = bytes / sizeof(float), total = a2a ? count * (size_t)nranks : count;
        int    iters = iters_opt > 0 ? iters_opt : bytes > (64u << 20) ? 20 : bytes > (1u << 20) ? 100 : 200;
        int    warm  = warm_opt >= 0 ? warm_opt : iters / 10;
        int    run[M_COUNT] = {use[M_GC3], use[M_NCCL], use[M_STAGED] && bytes <= staged_max};
        double lat[M_COUNT] = {0}, bus[M_COUNT] = {0};
        int    valid[M_COUNT] = {1, 1, 1};
        float *h = NULL, *ho = NULL;
        void  *s = NULL, *r = NULL, *hs = NULL, *hr = NULL;

        if (count == 0) {
            continue;
        }
        h  = malloc(total * sizeof(float));
        ho = malloc(total * sizeof(float));
        s  = gc3_test_alloc(on_device, total * sizeof(float));
        r  = gc3_test_alloc(on_device, total * sizeof(float));
#ifdef GC3_HAVE_CUDA
        if (on_device && run[M_STAGED]) {
            cudaMallocHost(&hs, total * sizeof(float));
            cudaMallocHost(&hr, total * sizeof(float));
        }
#endif
        if (!on_device && run[M_STAGED]) {
            hs = malloc(total * sizeof(float));
            hr = malloc(total * sizeof(float));
        }
        if (h == NULL || ho == NULL || s == NULL || r == NULL || (run[M_STAGED] && (hs == NULL || hr == NULL))) {
            die("out of memory");
        }
        for (size_t i = 0; i < total; i++) {
            h[i] = input_of(rank, i);
        }
        gc3_test_copy(on_device, s, h, total * sizeof(float));
        for (int m = 0; m < M_COUNT; m++) {
            double t = 0, sum = 0;
            int    ok = 1, allok = 1;
            if (!run[m]) {
                continue;
            }
            for (int it = 0; it < warm + iters && ok; it++) {
                double t0 = MPI_Wtime();
                ok = run_once(m, a2a, count, s, r, hs, hr) == 0;
                if (it >= warm) {
                    t += MPI_Wtime() - t0;
                }
                MPI_Barrier(MPI_COMM_WORLD);
            }
            t /= iters;
            if (validate && ok) {
                memset(ho, 0, total * sizeof(float));
                gc3_test_copy(on_device, r, ho, total * sizeof(float)); /* no stale result passes */
                ok = run_once(m, a2a, count, s, r, hs, hr) == 0;
                gc3_test_copy(on_device, ho, r, total * sizeof(float));
                ok = ok && check_result(a2a, count, ho);
            }
            MPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
            lat[m]   = sum / nranks * 1e6;
            bus[m]   = (double)total * sizeof(float) / (lat[m] * 1e-6) / 1e9 *
                     (a2a ? (double)(nranks - 1) / nranks : 2.0 * (nranks - 1) / nranks);
            valid[m] = allok;
            failed |= !allok;
            if (csv != NULL) {
                fprintf(csv, "%s,%d,%zu,%s,%.3f,%.3f,%.3f,%s\n", coll, nranks, bytes, method_names[m], lat[m],
                        (double)total * sizeof(float) / (lat[m] * 1e-6) / 1e9, bus[m],
                        !validate ? "unchecked" : allok ? "yes" : "NO");
            }
        }
        if (rank == 0) {
            char c[M_COUNT][16], ratio[2][16];
            for (int m = 0; m < M_COUNT; m++) {
                if (run[m]) snprintf(c[m], sizeof(c[m]), "%.2f", lat[m]);
                else snprintf(c[m], sizeof(c[m]), "-");
            }
            snprintf(ratio[0], 16, run[M_NCCL] && run[M_GC3] ? "%.2f" : "-", lat[M_NCCL] / lat[M_GC3]);
            snprintf(ratio[1], 16, run[M_STAGED] && run[M_GC3] ? "%.2f" : "-", lat[M_STAGED] / lat[M_GC3]);
            printf("%-10zu %10s %10s %10s %11.2f %11.2f %9s %10s %s\n", bytes, c[M_GC3], c[M_NCCL], c[M_STAGED],
                   run[M_GC3] ? bus[M_GC3] : 0.0, run[M_NCCL] ? bus[M_NCCL] : 0.0, ratio[0], ratio[1],
                   !validate ? ""
                   : valid[M_GC3] && valid[M_NCCL] && valid[M_STAGED] ? "Pass"
                   : !valid[M_GC3] ? "FAIL(gc3)" : !valid[M_NCCL] ? "FAIL(nccl)" : "FAIL(staged)");
            fflush(stdout);
        }
        gc3_test_free(on_device, s);
        gc3_test_free(on_device, r);
#ifdef GC3_HAVE_CUDA
        if (on_device && run[M_STAGED]) {
            cudaFreeHost(hs);
            cudaFreeHost(hr);
        }
#endif
        if (!on_device && run[M_STAGED]) {
            free(hs);
            free(hr);
        }
        free(h);
        free(ho);
    }
    if (csv != NULL) {
        fclose(csv);
    }
#ifdef GC3_HAVE_CUDA
    if (use[M_NCCL]) {
        nccl.comm_destroy(nccl.comm);
    }
#endif
    MPI_Finalize();
    return failed;
}
