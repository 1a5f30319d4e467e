/* The interpreter under mpirun: programs of the algorithm library (and a planted deadlock)
 * run by the executor on this rank's backend, every output element checked against a direct
 * computation of the collective, and against the reference executor where the chunks divide
 * the count evenly (so that it can run the program). Usage:
 *     test_runtime [--backend host|cuda] [--max-count N] [--quick] [--pseudo-nodes K] [--resident-us U]
 *                  [--no-fuse] [--instances K] [--channels C] [--net-path auto|gpudirect|staged]
 * --pseudo-nodes K: ranks r and q are on the same node when r/K == q/K, so the connections
 * between groups go through the inter-node transport (UCX, the proxy thread), and the
 * hierarchical algorithms run as (nranks/K) nodes x K.
 * --resident-us U: the executor's resident_us (cuda: how long a small plan's kernel waits on the GPU
 * for the next call; 0: a launch per call).
 * --no-fuse: the executor runs every step by itself (gc3_exec_params_t.fuse = 0).
 * --instances K, --channels C: every program is generated with K instances and C channels (where
 * the algorithm has channels), so plans have more thread blocks (default 1 and 1).
 * --net-path P: between pseudo-nodes, the path asked for (default auto), chosen on each rank by
 * gc3_net_path_choose and agreed (the direct path only when every rank can), as coll/gc3 does;
 * rank 0 prints the path and why.
 * Prints one line per (algorithm, protocol, mode) and "N passed, M failed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_algorithms.h"
#include "gc3_refexec.h"
#include "gc3_runtime.h"
#include "gc3_mpi_util.h"
static int rank, nranks, passed, failed, on_device, pseudo;
static int instances = 1, channels = 1; /* of every program generated */
static size_t slot_bytes;                /* the executor's */

#define buf_alloc(bytes)      ((char *)gc3_test_alloc(on_device, bytes))
#define buf_free(p)           gc3_test_free(on_device, p)
#define buf_put(dst, src, n)  gc3_test_copy(on_device, dst, src, n)
#define buf_get(dst, src, n)  gc3_test_copy(on_device, dst, src, n)

/* everybody agrees on pass/fail of a check */
static int agree(int ok, const char *what)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (all) {
        passed++;
    } else {
        failed++;
        if (rank == 0) {
            fprintf(stderr, "FAILED: %s\n", what);
        }
    }
    return all;
}

static size_t in_elems(gc3_coll_t c, size_t count)
{
    return c == GC3_COLL_ALLREDUCE || c == GC3_COLL_ALLGATHER ? count : count * (size_t)nranks;
}

static size_t out_elems(gc3_coll_t c, size_t count)
{
    return c == GC3_COLL_ALLREDUCE || c == GC3_COLL_REDUCE_SCATTER ? count : count * (size_t)nranks;
}

static uint64_t seed_of(int q, size_t count, int dt)
{
    return (uint64_t)q * 1000003u + count * 31u + (uint64_t)dt;
}

/* expected output of this rank, straight from every rank's input */
static void expected(gc3_coll_t coll, gc3_dtype_t dt, gc3_op_t op, size_t count, char **all_in, char *exp)
{
    size_t ds = gc3_dtype_size(dt);
    switch (coll) {
    case GC3_COLL_ALLREDUCE:
        memcpy(exp, all_in[0], count * ds);
        for (int q = 1; q < nranks; q++) {
            gc3_reduce_host(dt, op, exp, all_in[q], count);
        }
        break;
    case GC3_COLL_ALLTOALL:
        for (int q = 0; q < nranks; q++) {
            memcpy(exp + (size_t)q * count * ds, all_in[q] + (size_t)rank * count * ds, count * ds);
        }
        break;
    case GC3_COLL_ALLGATHER:
        for (int q = 0; q < nranks; q++) {
            memcpy(exp + (size_t)q * count * ds, all_in[q], count * ds);
        }
        break;
    default: /* reduce_scatter */
        memcpy(exp, all_in[0] + (size_t)rank * count * ds, count * ds);
        for (int q = 1; q < nranks; q++) {
            gc3_reduce_host(dt, op, exp, all_in[q] + (size_t)rank * count * ds, count);
        }
        break;
    }
}

/* one call: fill, run, compare. Returns 1 when this rank's output is right. */
static int run_one(gc3_plan_t *plan, const gc3_ir_program_t *prog, gc3_dtype_t dt, gc3_op_t op, size_t count,
                   int inplace, char *why, size_t whylen)
{
    size_t       ds = gc3_dtype_size(dt), ni = in_elems(prog->coll, count), no = out_elems(prog->coll, count);
    size_t       nb = (ni > no ? ni : no) + 1;
    char       **all_in = calloc((size_t)nranks, sizeof(char *));
    char        *out = malloc(nb * ds), *exp = calloc(nb, ds), *ref = NULL, *d_in = NULL, *d_out = NULL;
    gc3_call_t   call;
    gc3_diag_t   diag;
    gc3_status_t s;
    int          ok = 1;

    gc3_diag_init(&diag);
    for (int q = 0; q < nranks; q++) {
        all_in[q] = malloc(ni * ds + 1);
        gc3_refexec_fill(dt, op, all_in[q], ni, seed_of(q, count, dt));
    }
    memset(out, 0xA5, nb * ds); /* garbage where nothing should be read */
    d_in  = buf_alloc(ni * ds);
    d_out = buf_alloc(nb * ds);
    if (d_in == NULL || d_out == NULL) {
        snprintf(why, whylen, "rank %d: cannot allocate %zu bytes", rank, nb * ds);
        ok = 0;
        goto out;
    }
    buf_put(d_in, all_in[rank], ni * ds);
    call.sendbuf = d_in;
    call.recvbuf = d_out;
    if (inplace) {
        size_t off   = prog->coll == GC3_COLL_ALLGATHER ? (size_t)rank * count : 0;
        call.sendbuf = NULL;
        memcpy(out + off * ds, all_in[rank], ni * ds);
    }
    buf_put(d_out, out, nb * ds);
    call.count  = count;
    call.dtype  = dt;
    call.op     = op;
    call.stream = NULL;
    s           = gc3_exec_run(plan, &call, &diag);
    buf_get(out, d_out, nb * ds);
    if (s != GC3_OK) {
        snprintf(why, whylen, "rank %d: %s (%s)", rank, gc3_status_string(s), diag.count ? diag.msgs[0] : "");
        ok = 0;
        goto out;
    }
    expected(prog->coll, dt, op, count, all_in, exp);
    {
        char  *res = out + (inplace && prog->coll == GC3_COLL_REDUCE_SCATTER ? (size_t)rank * count * ds : 0);
        if (gc3_refexec_compare(dt, res, exp, no, "output vs direct computation", &diag) != GC3_OK) {
            snprintf(why, whylen, "rank %d: %s", rank, diag.msgs[diag.count - 1]);
            ok = 0;
            goto out;
        }
    }
    /* the reference executor, when it can run the program at this count */
    {
        uint64_t chunk_elems;
        if (!inplace && count <= (1u << 20) && gc3_coll_chunk_elems(prog, count, &chunk_elems) == GC3_OK) {
            gc3_refexec_args_t ra = {dt, op, chunk_elems, 0, 8};
            void             **ins = calloc((size_t)nranks, sizeof(void *)), **outs = calloc((size_t)nranks, sizeof(void *));
            for (int q = 0; q < nranks; q++) {
                ins[q]  = all_in[q];
                outs[q] = calloc(nb, ds);
            }
            if (gc3_refexec_run(prog, &ra, ins, outs, &diag) != GC3_OK ||
                gc3_refexec_compare(dt, out, outs[rank], no, "output vs reference executor", &diag) != GC3_OK) {
                snprintf(why, whylen, "rank %d: %s", rank, diag.count ? diag.msgs[diag.count - 1] : "refexec failed");
                ok = 0;
            }
            for (int q = 0; q < nranks; q++) {
                free(outs[q]);
            }
            free(ins);
            free(outs);
        }
    }
out:
    buf_free(d_in);
    buf_free(d_out);
    for (int q = 0; q < nranks; q++) {
        free(all_in[q]);
    }
    free(all_in);
    free(out);
    free(exp);
    free(ref);
    gc3_diag_cleanup(&diag);
    return ok;
}

typedef struct {
    const char *algo;
    int         nodes;
} algo_case_t;

/* An allreduce whose chunk (count / chunks per loop, rounded up to 16 bytes) fits a slot as often
 * as a step sends chunks at once runs in one loop: a count that is not a multiple of 16 bytes per
 * chunk must not take a second loop for its last few elements. */
static int one_loop(const gc3_ir_program_t *prog, size_t count, gc3_dtype_t dt, const gc3_plan_t *plan, char *why,
                    size_t whylen)
{
    size_t ds = gc3_dtype_size(dt), per = (count + (size_t)prog->nchunksperloop - 1) / (size_t)prog->nchunksperloop;
    int    maxcnt = 1;
    for (int r = 0; r < prog->ngpus; r++) {
        for (int b = 0; b < prog->gpus[r].ntbs; b++) {
            for (int s = 0; s < prog->gpus[r].tbs[b].nsteps; s++) {
                maxcnt = prog->gpus[r].tbs[b].steps[s].cnt > maxcnt ? prog->gpus[r].tbs[b].steps[s].cnt : maxcnt;
            }
        }
    }
    if ((per * ds + 15) / 16 * 16 * (size_t)maxcnt <= slot_bytes / 16 * 16 && gc3_plan_loops(plan) != 1) {
        snprintf(why, whylen, "rank %d: %zu elements of %zu bytes in chunks of %zu fit a slot of %zu bytes, but the "
                 "call ran %d loops", rank, count, ds, per, slot_bytes, gc3_plan_loops(plan));
        return 0;
    }
    return 1;
}

static void run_algo(gc3_exec_t *exec, const char *algo, int nodes, gc3_proto_t proto, int inplace, size_t max_count,
                     int quick)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *prog = NULL;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    char              what[256], why[512] = "";
    int               ok = 1, calls = 0;
    const size_t      counts[] = {1, 2, 3, 7, 64, 1000, 4099, 65539, 1u << 20, 16u << 20};
    struct {
        gc3_dtype_t dt;
        gc3_op_t    op;
    } types[] = {{GC3_DT_FLOAT32, GC3_OP_SUM}, {GC3_DT_INT32, GC3_OP_MAX}, {GC3_DT_FLOAT64, GC3_OP_PROD},
                 {GC3_DT_UINT8, GC3_OP_BXOR}, {GC3_DT_INT64, GC3_OP_MIN}};

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, nranks);
    ap.nodes         = nodes;
    ap.gpus_per_node = nranks / nodes;
    ap.proto         = proto;
    ap.inplace       = inplace;
    ap.instances     = instances;
    ap.channels      = channels;
    snprintf(what, sizeof(what), "%s (%d x %d) %s %s, %d instance(s) x %d channel(s)", algo, nodes, nranks / nodes,
             gc3_proto_name(proto), inplace ? "in-place" : "out-of-place", instances, channels);
    if (gc3_algo_generate(algo, &ap, &diag, NULL, &prog) != GC3_OK) {
        snprintf(why, sizeof(why), "generate: %s", diag.count ? diag.msgs[0] : "?");
        ok = 0;
    } else if (gc3_exec_prepare(exec, prog, &diag, &plan) != GC3_OK) {
        snprintf(why, sizeof(why), "prepare: %s", diag.count ? diag.msgs[0] : "?");
        ok = 0;
    }
    ok = agree(ok, what) && ok;
    if (ok && rank == 0 && pseudo > 0) {
        static int said;
        char       net[300];
        gc3_plan_net_describe(plan, net, sizeof(net));
        if (!said && net[0] != '\0') {
            printf("rank 0, %s: %s\n", what, net);
            said = 1;
        }
    }
    for (size_t i = 0; ok && i < sizeof(counts) / sizeof(counts[0]); i++) {
        size_t count = counts[i];
        int    reduces = prog->coll == GC3_COLL_ALLREDUCE || prog->coll == GC3_COLL_REDUCE_SCATTER;
        if (prog->coll != GC3_COLL_ALLREDUCE) {
            count = count / (size_t)nranks + 1; /* per peer: keep the buffers near the same size */
        }
        if (count > max_count) {
            continue;
        }
        for (size_t t = 0; t < sizeof(types) / sizeof(types[0]); t++) {
            char msg[1024];
            if ((t > 0 && (!reduces || count > 70000 || quick)) || !gc3_op_valid(types[t].op, types[t].dt)) {
                continue;
            }
            ok = run_one(plan, prog, types[t].dt, types[t].op, count, inplace, why, sizeof(why));
            if (ok && prog->coll == GC3_COLL_ALLREDUCE && !one_loop(prog, count, types[t].dt, plan, why, sizeof(why))) {
                ok = 0;
            }
            snprintf(msg, sizeof(msg), "%s count %zu %s %s: %s", what, count, gc3_dtype_name(types[t].dt),
                     gc3_op_name(types[t].op), ok ? "ok" : why);
            if (!ok) {
                fprintf(stderr, "%s\n", msg);
            }
            ok = agree(ok, msg);
            calls++;
        }
    }
    if (rank == 0) {
        printf("%-55s %s (%d calls)\n", what, ok ? "results verified" : "FAILED", calls);
        fflush(stdout);
    }
    gc3_plan_destroy(plan);
    gc3_ir_program_destroy(prog);
    gc3_diag_cleanup(&diag);
}

/* Both ranks of a 2-rank program receive first: nothing ever moves. The call must come back
 * within the timeout naming rank, block, step and what it waited for. */
static void run_planted_deadlock(gc3_exec_t *exec, const char *corpus)
{
    gc3_ir_program_t *prog = NULL;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    char              path[1024], want[128];
    char             *in = buf_alloc(8 * sizeof(float)), *out = buf_alloc(8 * sizeof(float)); /* alltoall, 4 per peer */
    gc3_call_t        call = {in, out, 4, GC3_DT_FLOAT32, GC3_OP_SUM, NULL};
    double            t0, dt;
    gc3_status_t      s;
    int               ok;

    if (nranks != 2) {
        return;
    }
    gc3_diag_init(&diag);
    snprintf(path, sizeof(path), "%s/invalid/order_deadlock.xml", corpus);
    ok = gc3_ir_read_file(path, &diag, &prog) == GC3_OK && gc3_exec_prepare(exec, prog, &diag, &plan) == GC3_OK;
    t0 = MPI_Wtime();
    s  = ok ? gc3_exec_run(plan, &call, &diag) : GC3_ERR_IO;
    dt = MPI_Wtime() - t0;
    snprintf(want, sizeof(want), "rank %d tb 0 step 0 (loop 0) waited for a message from rank %d on channel 0", rank,
             1 - rank);
    ok = s == GC3_ERR_TIMEOUT && gc3_diag_contains(&diag, want) && dt < 10.0;
    if (rank == 0 || !ok) {
        printf("planted deadlock: rank %d returned %s after %.2f s: %s\n", rank, gc3_status_string(s), dt,
               diag.count ? diag.msgs[0] : "");
    }
    agree(ok, "planted deadlock returns a timeout naming rank, block and step");
    /* the plan is unusable now, and says so */
    if (plan != NULL) {
        s = gc3_exec_run(plan, &call, &diag);
        agree(s == GC3_ERR_UNSUPPORTED && gc3_diag_contains(&diag, "unusable after an earlier failure"),
              "a plan after a timeout refuses new calls");
    }
    gc3_plan_destroy(plan);
    gc3_ir_program_destroy(prog);
    gc3_diag_cleanup(&diag);
    buf_free(in);
    buf_free(out);
}

int main(int argc, char **argv)
{
    MPI_Comm          comm;
    gc3_exec_params_t ep;
    gc3_exec_t       *exec = NULL;
    gc3_diag_t        diag;
    gc3_backend_t     backend = GC3_BACKEND_HOST;
    size_t            max_count = 16u << 20;
    int               quick = 0, resident_us = -1, fuse = 1;
    gc3_net_path_t    net_path = GC3_NET_PATH_AUTO;
    const char       *corpus = GC3_SOURCE_DIR "/tests/corpus";

    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &nranks);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            backend = strcmp(argv[++i], "cuda") == 0 ? GC3_BACKEND_CUDA : GC3_BACKEND_HOST;
        } else if (strcmp(argv[i], "--max-count") == 0 && i + 1 < argc) {
            max_count = strtoull(argv[++i], NULL, 10);
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--pseudo-nodes") == 0 && i + 1 < argc) {
            pseudo = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--resident-us") == 0 && i + 1 < argc) {
            resident_us = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--no-fuse") == 0) {
            fuse = 0;
        } else if (strcmp(argv[i], "--instances") == 0 && i + 1 < argc) {
            instances = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--net-path") == 0 && i + 1 < argc) {
            i++;
            net_path = strcmp(argv[i], "gpudirect") == 0 ? GC3_NET_PATH_GPUDIRECT
                       : strcmp(argv[i], "staged") == 0  ? GC3_NET_PATH_STAGED
                                                         : GC3_NET_PATH_AUTO;
        } else if (strcmp(argv[i], "--channels") == 0 && i + 1 < argc) {
            channels = atoi(argv[++i]);
        }
    }
    if (pseudo > 0 && (pseudo >= nranks || nranks % pseudo != 0)) {
        if (rank == 0) {
            fprintf(stderr, "test_runtime: --pseudo-nodes %d must divide %d ranks into at least 2 groups\n", pseudo, nranks);
        }
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    on_device = backend == GC3_BACKEND_CUDA;
    gc3_diag_init(&diag);
    gc3_mpi_exec_params(&ep, backend, &comm);
    ep.timeout_s     = 3.0;
    if (resident_us >= 0) {
        ep.resident_us = resident_us;
    }
    ep.fuse = fuse;
    slot_bytes = ep.slot_bytes;
    int *node = malloc((size_t)nranks * sizeof(int));
    for (int r = 0; r < nranks; r++) {
        node[r] = pseudo > 0 ? r / pseudo : 0;
    }
    ep.node = pseudo > 0 ? node : NULL;
    if (pseudo > 0) {
        int              ucx = !gc3_exec_net_available() ? -1 : backend == GC3_BACKEND_CUDA ? gc3_exec_net_cuda_memory() : 0;
        gc3_net_reason_t why = gc3_net_path_choose(net_path, backend, ucx), first;
        int              can = GC3_NET_REASON_DIRECT(why), all;
        MPI_Allreduce(&can, &all, 1, MPI_INT, MPI_MIN, comm);
        ep.net_direct = all;
        /* the reason of the lowest rank that cannot (or rank 0's) */
        int key = can ? nranks : rank, low;
        MPI_Allreduce(&key, &low, 1, MPI_INT, MPI_MIN, comm);
        low = low == nranks ? 0 : low;
        first = why;
        MPI_Bcast(&first, 1, MPI_INT, low, comm);
        if (rank == 0) {
            printf("net path: %s (rank %d: %s)\n", all ? (backend == GC3_BACKEND_CUDA ? "GPUDirect" : "direct") : "host-staged",
                   low, gc3_net_path_reason(first));
        }
    }
    if (pseudo > 0 && rank == 0) {
        printf("pseudo-nodes: %d x %d ranks (connections between them through %s)\n", nranks / pseudo, pseudo,
               gc3_exec_net_available() ? "UCX" : "nothing: built without UCX");
    }
    if (agree(gc3_exec_create(&ep, &diag, &exec) == GC3_OK, "executor created")) {
        run_planted_deadlock(exec, corpus);
        ep.timeout_s = 120.0; /* the real runs: generous (CI oversubscribes 2 cores) */
        gc3_exec_destroy(exec);
        exec = NULL;
        gc3_exec_create(&ep, &diag, &exec);
        const char *flat[] = {"ring", "allpairs", "oneshot", "rhd", "direct", "allgather_ring", "reduce_scatter_ring"};
        for (size_t a = 0; a < sizeof(flat) / sizeof(flat[0]); a++) {
            for (int proto = 0; proto < 2; proto++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    run_algo(exec, flat[a], 1, (gc3_proto_t)proto, inplace, max_count, quick);
                }
            }
        }
        {
            int hn = pseudo > 0 ? nranks / pseudo : 2; /* hierarchical shape: hn nodes */
            if (nranks % hn == 0 && nranks >= 2 * hn && (pseudo > 0 || nranks % 2 == 0)) {
                for (int proto = 0; proto < 2; proto++) {
                    for (int inplace = 0; inplace <= (pseudo > 0); inplace++) {
                        run_algo(exec, "hierarchical", hn, (gc3_proto_t)proto, inplace, max_count, quick);
                        run_algo(exec, "twostep", hn, (gc3_proto_t)proto, inplace, max_count, quick);
                    }
                }
            }
        }
    }
    gc3_exec_destroy(exec);
    gc3_diag_cleanup(&diag);
    free(node);
    if (rank == 0) {
        printf("test_runtime (%s backend, %d ranks, resident %d us, %s): %d passed, %d failed\n",
               backend == GC3_BACKEND_CUDA ? "cuda" : "host", nranks, backend == GC3_BACKEND_CUDA ? ep.resident_us : 0,
               fuse ? "fused local steps" : "step by step", passed, failed);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
