/* gc3_rt_bench: time one compiled algorithm through the executor (no MPI collective in the
 * path: this measures the interpreter and its transports). Under mpirun, one rank per GPU:
 *
 *   gc3_rt_bench [--backend cuda|host] [--algo ring] [--proto Simple|LL] [--instances K]
 *                [--channels C] [--nodes N] [--min BYTES] [--max BYTES] [--iters N] [--warmup N]
 *                [--threads T] [--slot-bytes B] [--resident-us U] [--fuse 0|1]
 *
 * Per size (float32 sum for allreduce): average wall time per blocking call over ranks, the
 * kernel time from CUDA events around the call (only with --resident-us 0: a resident kernel runs
 * on the executor's own stream, so the calls are not on a stream of the benchmark), algbw = bytes/time and busbw (allreduce:
 * algbw * 2(R-1)/R; alltoall: algbw * (R-1)/R). The first call of each size is checked
 * against a direct computation. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_algorithms.h"
#include "gc3_runtime.h"
#include "gc3_mpi_util.h"
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

int main(int argc, char **argv)
{
    MPI_Comm          comm;
    int               rank, nranks, nodes = 1, iters = 20, warmup = 5, on_device = 0;
    const char       *algo = "ring";
    gc3_algo_params_t ap;
    gc3_exec_params_t ep;
    gc3_exec_t       *exec = NULL;
    gc3_ir_program_t *prog = NULL;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    size_t            minb = 8, maxb = 1 << 20, slot_bytes = 0;
    gc3_backend_t     backend = GC3_BACKEND_HOST;
    int               threads = 0, bad = 0, resident_us = -1, fuse = 1;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) { /* before MPI_Init: works without mpirun */
            puts("usage: gc3_rt_bench [--backend cuda|host] [--algo ring] [--proto Simple|LL] [--instances K]\n"
                 "                    [--channels C] [--nodes N] [--min BYTES] [--max BYTES] [--iters N] [--warmup N]\n"
                 "                    [--threads T] [--slot-bytes B] [--resident-us U] [--fuse 0|1]\n"
                 "  under mpirun, one rank per GPU: times one algorithm (gc3c list) through the executor, no MPI\n"
                 "  collective in the path; the first call of each size is checked. Per size (doubling from MIN to\n"
                 "  MAX): the average time per call, the kernel time (CUDA events: --backend cuda --resident-us 0\n"
                 "  only, else '-'), algbw and busbw.\n"
                 "  --backend B      cuda: device buffers on the GPUs; host (default): the host backend\n"
                 "  --algo A         the algorithm generator (default ring; gc3c list names them)\n"
                 "  --proto P        Simple or LL (the generator's default otherwise)\n"
                 "  --instances K    instances, --channels C channels (the generator's defaults otherwise)\n"
                 "  --nodes N        N nodes of ranks/N (hierarchical and two-step generators)\n"
                 "  --min, --max     the sizes in bytes (K, M, G allowed; default 8 and 1M)\n"
                 "  --iters N        timed calls per size (default 20), --warmup N untimed first (default 5)\n"
                 "  --threads T      threads per block, --slot-bytes B bytes per FIFO slot (the executor's defaults)\n"
                 "  --resident-us U  as coll_gc3_resident_us (0: a launch per call, and the kernel time measured)\n"
                 "  --fuse 0|1       as coll_gc3_fuse (default 1)\n"
                 "examples:\n"
                 "  gc3-mpirun -np 4 gc3_rt_bench --backend cuda --algo allpairs --proto LL --max 1M\n"
                 "  gc3-mpirun -np 2 gc3_rt_bench --algo ring --min 1K --max 64K --iters 5   # host backend, no GPU\n"
                 "  (gc3-mpirun adds what mpirun needs to run as root and with more ranks than cores)");
            return 0;
        }
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    gc3_algo_params_default(&ap, nranks);
    for (int i = 1; i < argc; i++) {
        static const char *const opts[] = { "--backend", "--algo",       "--proto",       "--instances", "--channels",
                                            "--nodes",   "--min",        "--max",         "--iters",     "--warmup",
                                            "--threads", "--slot-bytes", "--resident-us", "--fuse" };
        const char              *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        size_t                   k = 0;
        while (k < sizeof(opts) / sizeof(opts[0]) && strcmp(o, opts[k]) != 0)
            k++;
        if (k == sizeof(opts) / sizeof(opts[0]) || v == NULL) { /* every rank alike: no abort, exit 2 */
            if (rank == 0) {
                fprintf(stderr, "gc3_rt_bench: %s %s (gc3_rt_bench --help lists the options)\n",
                        v == NULL && k < sizeof(opts) / sizeof(opts[0]) ? o : "unknown option",
                        v == NULL && k < sizeof(opts) / sizeof(opts[0]) ? "needs a value" : o);
            }
            MPI_Comm_free(&comm);
            MPI_Finalize();
            return 2;
        }
        i++;
        if (!strcmp(o, "--backend")) backend = strcmp(v, "cuda") == 0 ? GC3_BACKEND_CUDA : GC3_BACKEND_HOST;
        else if (!strcmp(o, "--algo")) algo = v;
        else if (!strcmp(o, "--proto")) gc3_proto_from_name(v, &ap.proto);
        else if (!strcmp(o, "--instances")) ap.instances = atoi(v);
        else if (!strcmp(o, "--channels")) ap.channels = atoi(v);
        else if (!strcmp(o, "--nodes")) nodes = atoi(v);
        else if (!strcmp(o, "--min")) minb = gc3_test_parse_bytes(v, NULL);
        else if (!strcmp(o, "--max")) maxb = gc3_test_parse_bytes(v, NULL);
        else if (!strcmp(o, "--iters")) iters = atoi(v);
        else if (!strcmp(o, "--warmup")) warmup = atoi(v);
        else if (!strcmp(o, "--threads")) threads = atoi(v);
        else if (!strcmp(o, "--slot-bytes")) slot_bytes = gc3_test_parse_bytes(v, NULL);
        else if (!strcmp(o, "--resident-us")) resident_us = atoi(v);
        else if (!strcmp(o, "--fuse"))
            fuse = atoi(v) != 0;
    }
    ap.nodes         = nodes;
    ap.gpus_per_node = nranks / nodes;
    on_device        = backend == GC3_BACKEND_CUDA;
    gc3_diag_init(&diag);
    gc3_mpi_exec_params(&ep, backend, &comm);
    if (threads > 0) ep.threads_per_block = threads;
    if (slot_bytes > 0) ep.slot_bytes = slot_bytes;
    if (resident_us >= 0) ep.resident_us = resident_us;
    ep.fuse = fuse;
    if (gc3_algo_generate(algo, &ap, &diag, NULL, &prog) != GC3_OK || gc3_exec_create(&ep, &diag, &exec) != GC3_OK ||
        gc3_exec_prepare(exec, prog, &diag, &plan) != GC3_OK) {
        fprintf(stderr, "rank %d: setup failed: %s\n", rank, diag.count ? diag.msgs[0] : "?");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    if (rank == 0) {
        printf("# gc3_rt_bench: %s (%s), %s, %d instance(s), %d channel(s), %d ranks, %s backend, %d threads/block, "
               "slot %zu B, resident %d us, fuse %d\n", algo, prog->coll_name, gc3_proto_name(ap.proto), ap.instances,
               ap.channels, nranks, on_device ? "cuda" : "host", ep.threads_per_block, ep.slot_bytes,
               on_device ? ep.resident_us : 0, ep.fuse);
        if (!(on_device && ep.resident_us == 0)) {
            printf("# kernel(us): not measured ('-'): CUDA events time the kernel of --backend cuda --resident-us 0 "
                   "only (%s)\n",
                   on_device ? "a resident kernel runs on the executor's own stream"
                             : "the host backend "
                               "has no kernel");
        }
        printf("%12s %12s %12s %12s %12s %8s\n", "# size(B)", "time(us)", "kernel(us)", "algbw(GB/s)", "busbw(GB/s)", "check");
    }
    for (size_t bytes = minb; bytes <= maxb; bytes *= 2) {
        int          a2a   = prog->coll == GC3_COLL_ALLTOALL;
        size_t       count = a2a ? bytes / 4 / (size_t)nranks : bytes / 4, nelem = a2a ? count * (size_t)nranks : count;
        float       *h     = malloc(nelem * sizeof(float)), *hout = malloc(nelem * sizeof(float));
        char        *in = NULL, *out = NULL;
        double       t = 0, tk = 0, tsum, tksum;
        int          ok = 1, ran = 1, allok, allran;
        gc3_call_t   call;
        void        *stream = NULL;
#ifdef GC3_HAVE_CUDA
        cudaEvent_t  e0 = 0, e1 = 0;
#endif
        if (count == 0) {
            free(h);
            free(hout);
            continue;
        }
        for (size_t i = 0; i < nelem; i++) {
            h[i] = (float)((rank + 1) * ((i % 7) + 1));
        }
#ifdef GC3_HAVE_CUDA
        if (on_device) {
            cudaMalloc((void **)&in, nelem * 4);
            cudaMalloc((void **)&out, nelem * 4);
            cudaMemcpy(in, h, nelem * 4, cudaMemcpyHostToDevice);
        }
        if (on_device && ep.resident_us == 0) {
            cudaStream_t s;
            cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
            cudaEventCreate(&e0);
            cudaEventCreate(&e1);
            stream = s;
        }
#endif
        if (!on_device) {
            in  = (char *)h;
            out = (char *)hout;
        }
        call = (gc3_call_t){ in, out, count, GC3_DT_FLOAT32, GC3_OP_SUM, stream, NULL };
        for (int it = 0; it < warmup + iters && ok; it++) {
            double t0;
            MPI_Barrier(comm);
#ifdef GC3_HAVE_CUDA
            if (stream != NULL) cudaEventRecord(e0, (cudaStream_t)stream);
#endif
            t0 = MPI_Wtime();
            if (gc3_exec_run(plan, &call, &diag) != GC3_OK) {
                fprintf(stderr, "rank %d: %s\n", rank, diag.count ? diag.msgs[diag.count - 1] : "run failed");
                ok  = 0;
                ran = 0;
                break;
            }
            if (it >= warmup) {
                t += MPI_Wtime() - t0;
            }
#ifdef GC3_HAVE_CUDA
            if (stream != NULL) {
                float ms = 0;
                cudaEventRecord(e1, (cudaStream_t)stream);
                cudaEventSynchronize(e1);
                cudaEventElapsedTime(&ms, e0, e1);
                if (it >= warmup) tk += ms * 1e-3;
            }
#endif
            if (it == 0) {
                float *res = hout;
#ifdef GC3_HAVE_CUDA
                if (on_device) cudaMemcpy(hout, out, nelem * 4, cudaMemcpyDeviceToHost);
#endif
                for (size_t i = 0; i < nelem && ok; i++) {
                    float want;
                    if (a2a) {
                        size_t q = i / count, j = i % count; /* from rank q, its block for me */
                        want     = (float)((q + 1) * (((size_t)rank * count + j) % 7 + 1));
                    } else {
                        want = (float)(nranks * (nranks + 1) / 2 * ((i % 7) + 1));
                    }
                    ok = res[i] == want;
                }
            }
        }
        t /= iters > 0 ? iters : 1;
        tk /= iters > 0 ? iters : 1;
        MPI_Allreduce(&t, &tsum, 1, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Allreduce(&tk, &tksum, 1, MPI_DOUBLE, MPI_SUM, comm);
        MPI_Allreduce(&ok, &allok, 1, MPI_INT, MPI_LAND, comm);
        MPI_Allreduce(&ran, &allran, 1, MPI_INT, MPI_LAND, comm);
        bad |= !allok;
        if (rank == 0) {
            double tu = tsum / nranks * 1e6, algbw = (double)bytes / (tsum / nranks) / 1e9;
            double bus = a2a ? algbw * (nranks - 1) / nranks : algbw * 2.0 * (nranks - 1) / nranks;
            char   kernel[32] = "-"; /* measured only around a kernel launched on the benchmark's stream */
            if (stream != NULL) {
                snprintf(kernel, sizeof(kernel), "%.2f", tksum / nranks * 1e6);
            }
            printf("%12zu %12.2f %12s %12.2f %12.2f %8s\n", bytes, tu, kernel, algbw, bus,
                   allok    ? "ok"
                   : allran ? "WRONG"
                            : "FAILED");
            fflush(stdout);
        }
#ifdef GC3_HAVE_CUDA
        if (on_device) {
            cudaFree(in);
            cudaFree(out);
            if (stream != NULL) {
                cudaEventDestroy(e0);
                cudaEventDestroy(e1);
                cudaStreamDestroy((cudaStream_t)stream);
            }
        }
#endif
        free(h);
        free(hout);
        if (!allok) {
            break;
        }
    }
    gc3_plan_destroy(plan);
    gc3_ir_program_destroy(prog);
    gc3_exec_destroy(exec);
    gc3_diag_cleanup(&diag);
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return bad;
}
