/* The interpreter under mpirun: programs of the algorithm library (and a planted deadlock)
 * run by the executor on this rank's backend, every output element checked against a direct
 * computation of the collective, and against the reference executor where the chunks divide
 * the count evenly (so that it can run the program). Usage:
 *     test_runtime [--backend host|cuda] [--max-count N] [--quick] [--pseudo-nodes K] [--resident-us U]
 *                  [--no-fuse] [--instances K] [--channels C] [--net-path auto|gpudirect|staged]
 *                  [--fifo-pool] [--pool-mix-only] [--deadlock-bound S]
 * --fifo-pool: the executor's plans that run Simple share one FIFO pool per rank (gc3_exec_params_t
 * .fifo_pool); then also the pool test (run_pool_mix): plans of several sizes, calls switching
 * between them, the pool's memory and its end. --pool-mix-only: only that test.
 * --deadlock-bound S: the planted deadlock's call must come back within S seconds (default 10; its timeout is
 * 3 s of waiting on an SM, and a block off its SM does not count: under compute-sanitizer's racecheck a kernel
 * that gave way relaunches slowly, and the call came back after 60-70 s on one H100).
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
static int    rank, nranks, passed, failed, on_device, pseudo, fifo_pool;
static double deadlock_bound = 10.0;
static int    instances = 1, channels = 1; /* of every program generated */
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
    return c == GC3_COLL_ALLREDUCE || c == GC3_COLL_ALLGATHER || c == GC3_COLL_BCAST || c == GC3_COLL_REDUCE
               ? count
               : count * (size_t)nranks;
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

/* One call of a test: its buffers, what it was run with and how it ended (call_issue, or
 * call_prepare then gc3_exec_start and call_ended), until call_check compares its output and frees
 * it. */
typedef struct {
    gc3_dtype_t  dt;
    gc3_op_t     op;
    size_t       count;
    int          inplace;
    char        *d_in, *d_out;
    gc3_call_t   call;
    gc3_status_t status;
    char         diag[256];
} test_call_t;

/* every rank's input of a call, as every rank fills it */
static char **call_inputs(const gc3_ir_program_t *prog, const test_call_t *c)
{
    size_t ds = gc3_dtype_size(c->dt), ni = in_elems(prog->coll, c->count);
    char **all_in = calloc((size_t)nranks, sizeof(char *));
    for (int q = 0; q < nranks; q++) {
        all_in[q] = malloc(ni * ds + 1);
        gc3_refexec_fill(c->dt, c->op, all_in[q], ni, seed_of(q, c->count, c->dt));
    }
    return all_in;
}

static void call_inputs_free(char **all_in)
{
    for (int q = 0; q < nranks; q++) {
        free(all_in[q]);
    }
    free(all_in);
}

/* This rank's buffers of the call, filled (the output buffer holds garbage where nothing should be
 * read), and c->call; 0 (c->status GC3_ERR_NO_MEMORY) when they could not be made. */
static int call_prepare(const gc3_ir_program_t *prog, test_call_t *c)
{
    size_t ds = gc3_dtype_size(c->dt), ni = in_elems(prog->coll, c->count), no = out_elems(prog->coll, c->count);
    size_t nb = (ni > no ? ni : no) + 1;
    char **all_in = call_inputs(prog, c);
    char  *out = malloc(nb * ds);

    c->diag[0] = '\0';
    c->d_in    = buf_alloc(ni * ds);
    c->d_out   = buf_alloc(nb * ds);
    c->status  = c->d_in != NULL && c->d_out != NULL ? GC3_OK : GC3_ERR_NO_MEMORY;
    if (c->status == GC3_OK) {
        memset(out, 0xA5, nb * ds);
        buf_put(c->d_in, all_in[rank], ni * ds);
        c->call.sendbuf = c->d_in;
        c->call.recvbuf = c->d_out;
        if (c->inplace) {
            size_t off      = prog->coll == GC3_COLL_ALLGATHER ? (size_t)rank * c->count : 0;
            c->call.sendbuf = NULL;
            memcpy(out + off * ds, all_in[rank], ni * ds);
        }
        buf_put(c->d_out, out, nb * ds);
        c->call.count  = c->count;
        c->call.dtype  = c->dt;
        c->call.op     = c->op;
        c->call.stream = NULL;
    }
    call_inputs_free(all_in);
    free(out);
    return c->status == GC3_OK;
}

/* How the call ended (status), with the first message of diag. */
static void call_ended(test_call_t *c, gc3_status_t status, gc3_diag_t *diag)
{
    c->status = status;
    snprintf(c->diag, sizeof(c->diag), "%s", diag->count ? diag->msgs[0] : "");
}

/* Fill this rank's buffers and run the call; c->status says how it ended. */
static void call_issue(gc3_plan_t *plan, const gc3_ir_program_t *prog, test_call_t *c)
{
    gc3_diag_t diag;

    gc3_diag_init(&diag);
    if (call_prepare(prog, c)) {
        call_ended(c, gc3_exec_run(plan, &c->call, &diag), &diag);
    }
    gc3_diag_cleanup(&diag);
}

/* Compare the call's output with a direct computation of the collective (and the reference
 * executor's, when it can run the program at this count), then free its buffers. 1 when right. */
static int call_check(const gc3_ir_program_t *prog, test_call_t *c, char *why, size_t whylen)
{
    size_t       ds = gc3_dtype_size(c->dt), no = out_elems(prog->coll, c->count);
    size_t       nb = (in_elems(prog->coll, c->count) > no ? in_elems(prog->coll, c->count) : no) + 1;
    char       **all_in = call_inputs(prog, c);
    char        *out = malloc(nb * ds), *exp = calloc(nb, ds);
    gc3_diag_t   diag;
    int          ok = 1;

    gc3_diag_init(&diag);
    if (c->d_in == NULL || c->d_out == NULL) {
        snprintf(why, whylen, "rank %d: cannot allocate %zu bytes", rank, nb * ds);
        ok = 0;
        goto out;
    }
    buf_get(out, c->d_out, nb * ds);
    if (c->status != GC3_OK) {
        snprintf(why, whylen, "rank %d: %s (%s)", rank, gc3_status_string(c->status), c->diag);
        ok = 0;
        goto out;
    }
    expected(prog->coll, c->dt, c->op, c->count, all_in, exp);
    {
        char *res = out + (c->inplace && prog->coll == GC3_COLL_REDUCE_SCATTER ? (size_t)rank * c->count * ds : 0);
        if (gc3_refexec_compare(c->dt, res, exp, no, "output vs direct computation", &diag) != GC3_OK) {
            snprintf(why, whylen, "rank %d: %s", rank, diag.msgs[diag.count - 1]);
            ok = 0;
            goto out;
        }
    }
    /* the reference executor, when it can run the program at this count */
    {
        uint64_t chunk_elems;
        if (!c->inplace && c->count <= (1u << 20) && gc3_coll_chunk_elems(prog, c->count, &chunk_elems) == GC3_OK) {
            gc3_refexec_args_t ra = {c->dt, c->op, chunk_elems, 0, 8, 0};
            void             **ins = calloc((size_t)nranks, sizeof(void *)), **outs = calloc((size_t)nranks, sizeof(void *));
            for (int q = 0; q < nranks; q++) {
                ins[q]  = all_in[q];
                outs[q] = calloc(nb, ds);
            }
            if (gc3_refexec_run(prog, &ra, ins, outs, &diag) != GC3_OK ||
                gc3_refexec_compare(c->dt, out, outs[rank], no, "output vs reference executor", &diag) != GC3_OK) {
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
    buf_free(c->d_in);
    buf_free(c->d_out);
    c->d_in = c->d_out = NULL;
    call_inputs_free(all_in);
    free(out);
    free(exp);
    gc3_diag_cleanup(&diag);
    return ok;
}

/* one call: fill, run, compare. Returns 1 when this rank's output is right. */
static int run_one(gc3_plan_t *plan, const gc3_ir_program_t *prog, gc3_dtype_t dt, gc3_op_t op, size_t count,
                   int inplace, char *why, size_t whylen)
{
    test_call_t c = {.dt = dt, .op = op, .count = count, .inplace = inplace};
    call_issue(plan, prog, &c);
    return call_check(prog, &c, why, whylen);
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
    (void)gc3_algo_keep_taken(gc3_algo_find(algo), &ap); /* --channels where the algorithm has channels */
    snprintf(what, sizeof(what), "%s (%d x %d) %s %s, %d instance(s) x %d channel(s)", algo, nodes, nranks / nodes,
             gc3_proto_name(proto), inplace ? "in-place" : "out-of-place", instances, ap.channels);
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

/* A rooted collective (bcast, reduce) as MPI calls it: bcast's non-roots pass their receive buffer
 * only (an in-place call), reduce's pass no receive buffer; the root in place (MPI_IN_PLACE) or not.
 * Every rank checks its part against a host computation: bcast, every output is the root's data;
 * reduce, the root's output is the reduction of every rank's data, and every rank's send buffer is
 * as it was. */
/* One call of a bcast or reduce plan with root `root` (the program's, or another one on a relabelled plan), its
 * output and send buffer checked against a host computation; 1 when right (else *why). */
static int rooted_call(gc3_plan_t *plan, const gc3_ir_program_t *prog, int root, int inplace, size_t count,
                       gc3_dtype_t dt, gc3_op_t op, char *why, size_t whylen)
{
    const size_t ds = gc3_dtype_size(dt), bytes = count * ds;
    const int    bcast = prog->coll == GC3_COLL_BCAST;
    char       **all_in, *h = malloc(bytes + 1), *exp = malloc(bytes + 1), *in = NULL, *out = NULL;
    gc3_call_t   call = { NULL, NULL, count, dt, op, NULL, NULL };
    gc3_diag_t   diag;
    gc3_status_t s;
    int          right = 1;

    gc3_diag_init(&diag);
    all_in = call_inputs(prog, &(test_call_t){ .dt = dt, .op = op, .count = count });
    memcpy(exp, all_in[root], bytes); /* bcast; reduce: the reduction, below */
    for (int q = 0; !bcast && q < nranks; q++) {
        if (q != root) {
            gc3_reduce_host(dt, op, exp, all_in[q], count);
        }
    }
    if (rank == root || !bcast) { /* the data: a send buffer, or the root's one buffer in place */
        in = buf_alloc(bytes);
        buf_put(in, all_in[rank], bytes);
    }
    if (rank == root ? !inplace : bcast) { /* a receive buffer of garbage */
        out = buf_alloc(bytes);
        memset(h, 0xA5, bytes);
        buf_put(out, h, bytes);
    }
    call.sendbuf = rank == root && inplace ? NULL : bcast && rank != root ? NULL : in;
    call.recvbuf = rank == root && inplace ? in : out;
    s            = gc3_plan_roots(plan) > 1 ? gc3_plan_root(plan, root, &diag) : GC3_OK;
    s            = s == GC3_OK ? gc3_exec_run(plan, &call, &diag) : s;
    if (s != GC3_OK) {
        snprintf(why, whylen, "rank %d: %s (%s)", rank, gc3_status_string(s), diag.count ? diag.msgs[0] : "");
        right = 0;
    }
    if (right && (bcast || rank == root)) { /* the output */
        buf_get(h, (char *)call.recvbuf, bytes);
        right = gc3_refexec_compare(dt, h, exp, count, "output vs direct computation", &diag) == GC3_OK;
    }
    if (right && !bcast && !(rank == root && inplace)) { /* the send buffer, untouched */
        buf_get(h, in, bytes);
        right = gc3_refexec_compare(dt, h, all_in[rank], count, "send buffer afterwards", &diag) == GC3_OK;
    }
    if (!right && s == GC3_OK) {
        snprintf(why, whylen, "rank %d: %s", rank, diag.count ? diag.msgs[diag.count - 1] : "?");
    }
    buf_free(in);
    buf_free(out);
    call_inputs_free(all_in);
    free(h);
    free(exp);
    gc3_diag_cleanup(&diag);
    return right;
}

static gc3_ir_program_t *rooted_program(const char *algo, gc3_proto_t proto, int inplace, int root, char *why,
                                        size_t whylen)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *prog = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, nranks);
    ap.proto     = proto;
    ap.inplace   = inplace;
    ap.root      = root;
    ap.instances = instances;
    ap.channels  = channels;
    (void)gc3_algo_keep_taken(gc3_algo_find(algo), &ap);
    if (gc3_algo_generate(algo, &ap, &diag, NULL, &prog) != GC3_OK) {
        snprintf(why, whylen, "generate: %s", diag.count ? diag.msgs[0] : "?");
    }
    gc3_diag_cleanup(&diag);
    return prog;
}

static void run_rooted(gc3_exec_t *exec, const char *algo, gc3_proto_t proto, int inplace, int root, size_t max_count)
{
    gc3_ir_program_t *prog;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    char              what[256], why[512] = "";
    int               ok = 1, calls = 0;
    const size_t      counts[] = {1, 7, 1000, 65539};
    struct {
        gc3_dtype_t dt;
        gc3_op_t    op;
    } types[] = {{GC3_DT_FLOAT32, GC3_OP_SUM}, {GC3_DT_INT32, GC3_OP_MAX}, {GC3_DT_UINT8, GC3_OP_BXOR}};

    gc3_diag_init(&diag);
    snprintf(what, sizeof(what), "%s root %d %s %s", algo, root, gc3_proto_name(proto),
             inplace ? "in-place" : "out-of-place");
    prog = rooted_program(algo, proto, inplace, root, why, sizeof(why));
    if (prog == NULL) {
        ok = 0;
    } else if (gc3_exec_prepare(exec, prog, &diag, &plan) != GC3_OK) {
        snprintf(why, sizeof(why), "prepare: %s", diag.count ? diag.msgs[0] : "?");
        ok = 0;
    }
    ok = agree(ok, what) && ok;
    for (size_t i = 0; ok && i < sizeof(counts) / sizeof(counts[0]); i++) {
        for (size_t t = 0; ok && t < sizeof(types) / sizeof(types[0]); t++) {
            char msg[1024];
            int  right;
            if (counts[i] > max_count || (t > 0 && (prog->coll == GC3_COLL_BCAST || counts[i] > 1000))) {
                continue;
            }
            right = rooted_call(plan, prog, root, inplace, counts[i], types[t].dt, types[t].op, why, sizeof(why));
            snprintf(msg, sizeof(msg), "%s count %zu %s %s: %s", what, counts[i], gc3_dtype_name(types[t].dt),
                     gc3_op_name(types[t].op), right ? "ok" : why);
            if (!right) {
                fprintf(stderr, "%s\n", msg);
            }
            ok = agree(right, msg);
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

static int64_t held_regions(uint64_t *device);

/* One plan for every root (params.relabel): the plan of the program for root 0 serves calls whose root goes
 * round every rank in an order that changes the shift every call (twice round, each result checked), without
 * another region or more memory after the first round; with relabel off, the same plan refuses another root. */
static void run_relabel(const gc3_exec_params_t *ep0, const char *algo, gc3_proto_t proto, int inplace,
                        size_t max_count)
{
    gc3_exec_params_t ep   = *ep0;
    gc3_exec_t       *exec = NULL;
    gc3_ir_program_t *prog;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    char              what[256], why[512] = "", msg[1024];
    const size_t      count = max_count < 65539 ? max_count : 65539;
    int               ok = 1, calls = 0;
    int64_t           regions = 0;
    uint64_t          device = 0, dev_now = 0;

    gc3_diag_init(&diag);
    snprintf(what, sizeof(what), "%s %s %s, every root on one plan", algo, gc3_proto_name(proto),
             inplace ? "in-place" : "out-of-place");
    prog = rooted_program(algo, proto, inplace, 0, why, sizeof(why));
    ok   = prog != NULL && gc3_exec_create(&ep, &diag, &exec) == GC3_OK &&
         gc3_exec_prepare(exec, prog, &diag, &plan) == GC3_OK;
    if (!ok && prog != NULL) {
        snprintf(why, sizeof(why), "prepare: %s", diag.count ? diag.msgs[0] : "?");
    }
    ok = agree(ok, what) && ok;
    ok = ok && agree(gc3_plan_roots(plan) == nranks, "a rooted plan on one node serves every root (gc3_plan_roots)");
    for (int k = 0; ok && k < 2 * nranks; k++) {
        const int root = (int)((k * 3u + (unsigned)nranks - 1u) % (unsigned)nranks);
        int       right;
        if (k == nranks) { /* every shift ran once: its memory is all there */
            regions = held_regions(&device);
        }
        right = rooted_call(plan, prog, root, inplace, k % 2 ? count : 7, GC3_DT_FLOAT32, GC3_OP_SUM, why, sizeof(why));
        snprintf(msg, sizeof(msg), "%s: call %d, root %d: %s", what, k, root, right ? "ok" : why);
        if (!right) {
            fprintf(stderr, "%s\n", msg);
        }
        ok = agree(right, msg);
        calls++;
    }
    if (ok) {
        const int64_t now = held_regions(&dev_now);
        snprintf(msg, sizeof(msg),
                 "%s: a second round of roots takes no region (%lld then %lld) nor device memory "
                 "(%llu then %llu bytes)",
                 what, (long long)regions, (long long)now, (unsigned long long)device, (unsigned long long)dev_now);
        ok = agree(now == regions && dev_now == device, msg);
    }
    if (rank == 0) {
        printf("%-55s %s (%d calls)\n", what, ok ? "results verified" : "FAILED", calls);
        fflush(stdout);
    }
    gc3_plan_destroy(plan);
    gc3_exec_destroy(exec);
    if (prog != NULL && nranks > 1) { /* relabel off: the plan is the program's root's only */
        int refused;
        ep.relabel = 0;
        plan       = NULL;
        exec       = NULL;
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        refused = gc3_exec_create(&ep, &diag, &exec) == GC3_OK &&
                  gc3_exec_prepare(exec, prog, &diag, &plan) == GC3_OK && gc3_plan_roots(plan) == 1 &&
                  gc3_plan_root(plan, 0, &diag) == GC3_OK && gc3_plan_root(plan, 1, &diag) == GC3_ERR_INVALID_PARAM;
        snprintf(msg, sizeof(msg), "%s: with relabel 0 the plan serves root 0 only (root 1 refused: %s)", what,
                 diag.count ? diag.msgs[diag.count - 1] : "not refused");
        agree(refused, msg);
        gc3_plan_destroy(plan);
        gc3_exec_destroy(exec);
    }
    gc3_ir_program_destroy(prog);
    gc3_diag_cleanup(&diag);
}

/* The FIFO pool (--fifo-pool), on an executor of its own: plans of growing slots prepared one after the
 * other (the pool grows, the plans made before move to the new one and the old one goes: one pool
 * region, as large as the largest plan's slots), an LL plan beside them (its own slots), calls that
 * switch between the plans in a sequence every rank draws alike, each result checked; a call of a
 * pooled plan refused while another one's is in flight; then everything given back. */
typedef struct {
    const char *algo;
    gc3_proto_t proto;
    int         inplace;
    uint64_t    max_bytes; /* the plan's largest call (its slots' size), 0: unbounded */
} pool_case_t;

static int64_t held_regions(uint64_t *device)
{
    gc3_mem_held_t h;
    gc3_mem_held(&h);
    *device = h.device;
    return h.regions;
}

/* Regions and device memory as the live plans and one pool make them; the pool as large as the
 * largest slots of the plans prepared so far (pool: that size). */
static void pool_check_memory(gc3_exec_t *exec, gc3_plan_t **plans, int n, uint64_t pool, const char *when)
{
    uint64_t device, expect = gc3_exec_pool_bytes(exec);
    int64_t  regions = held_regions(&device);
    int      alive = 0;
    char     what[320];

    for (int i = 0; i < n; i++) {
        gc3_plan_mem_t m;
        if (plans[i] == NULL) {
            continue;
        }
        gc3_plan_memory(plans[i], &m);
        expect += gc3_plan_mem_device(&m);
        alive++;
    }
    snprintf(what, sizeof(what), "pool, %s: %d plan region(s) and one pool of %llu bytes (the largest slots so far: "
             "%llu) hold %llu bytes (rank %d: %lld region(s), %llu bytes)", when, alive,
             (unsigned long long)gc3_exec_pool_bytes(exec), (unsigned long long)pool, (unsigned long long)expect,
             rank, (long long)regions, (unsigned long long)device);
    agree(regions == alive + 1 && device == expect && gc3_exec_pool_bytes(exec) == pool, what);
}

/* A call of a pooled plan while another pooled plan's call is in flight is refused; the first one's
 * result (ones summed: nranks everywhere) is right. */
static void pool_check_overlap(gc3_plan_t *a, gc3_plan_t *b)
{
    const size_t n  = 4096;
    float       *h  = malloc(n * sizeof(float));
    char        *in = buf_alloc(n * sizeof(float)), *out = buf_alloc(n * sizeof(float));
    char        *in2 = buf_alloc(n * sizeof(float)), *out2 = buf_alloc(n * sizeof(float));
    gc3_call_t   ca = { in, out, n, GC3_DT_FLOAT32, GC3_OP_SUM, NULL, NULL },
               cb   = { in2, out2, n, GC3_DT_FLOAT32, GC3_OP_SUM, NULL, NULL };
    gc3_diag_t   diag;
    gc3_status_t sa, sb, sw;
    int          ok;

    gc3_diag_init(&diag);
    for (size_t i = 0; i < n; i++) {
        h[i] = 1.0f;
    }
    buf_put(in, (char *)h, n * sizeof(float));
    buf_put(in2, (char *)h, n * sizeof(float));
    sa = gc3_exec_start(a, &ca, &diag);
    sb = gc3_exec_start(b, &cb, &diag);
    sw = sa == GC3_OK ? gc3_exec_wait(a, &diag) : sa;
    buf_get((char *)h, out, n * sizeof(float));
    ok = sa == GC3_OK && sw == GC3_OK && sb == GC3_ERR_INVALID_PARAM && gc3_diag_contains(&diag, "shares the FIFO pool");
    for (size_t i = 0; i < n && ok; i++) {
        ok = h[i] == (float)nranks;
    }
    if (!ok) {
        fprintf(stderr, "rank %d: overlap: start %s, second start %s, wait %s (%s)\n", rank, gc3_status_string(sa),
                gc3_status_string(sb), gc3_status_string(sw), diag.count ? diag.msgs[0] : "");
    }
    agree(ok, "pool: a pooled plan's call is refused while another one's is in flight; the first one's result is right");
    buf_free(in);
    buf_free(out);
    buf_free(in2);
    buf_free(out2);
    free(h);
    gc3_diag_cleanup(&diag);
}

static void run_pool_mix(const gc3_exec_params_t *ep0, size_t max_count)
{
    /* the pool grows at the second plan (the first one's call in flight) and at the fourth (the
     * first two move at once, the LL plan's call in flight) */
    const pool_case_t cases[] = {
        {"ring", GC3_PROTO_SIMPLE, 0, 64u << 10},   {"ring", GC3_PROTO_SIMPLE, 1, 256u << 10},
        {"oneshot", GC3_PROTO_LL, 0, 64u << 10},    {"allpairs", GC3_PROTO_SIMPLE, 0, 1u << 20},
        {"direct", GC3_PROTO_SIMPLE, 0, 4u << 20},  {"ring", GC3_PROTO_SIMPLE, 0, 0},
    };
    enum { N = sizeof(cases) / sizeof(cases[0]) };
    const size_t      counts[] = {1, 1000, 65539, 200000};
    enum { NCALLS = 48, NEARLY = 3 * N };
    test_call_t       mix[NCALLS], early[NEARLY];
    int               which[NCALLS], early_plan[NEARLY], nearly = 0;
    const int         order[N] = {3, 0, 5, 2, 1, 4}; /* of the frees */
    gc3_exec_params_t ep = *ep0;
    gc3_exec_t       *exec = NULL;
    gc3_ir_program_t *progs[N] = {0};
    gc3_plan_t       *plans[N] = {0};
    gc3_diag_t        diag;
    uint64_t          lcg = 12345, pool = 0;
    int               ok = 1, calls = 0, switches = 0, last = -1, warm = 1;
    long              shm0;
    char              what[256], why[512] = "";

    gc3_diag_init(&diag);
    ep.fifo_pool = 1;
    /* the shared memory mapped before: the agreements' MPI_Allreduce may run through coll/gc3 itself
     * (gc3-mpirun with its host backend), whose regions are gc3's too */
    MPI_Allreduce(MPI_IN_PLACE, &warm, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    shm0 = on_device ? 0 : gc3_test_shm_mapped();
    if (!agree(gc3_exec_create(&ep, &diag, &exec) == GC3_OK, "pool: executor created")) {
        return;
    }
    /* Each plan prepared while a call of the one before is in flight (the pool grows under it: that plan
     * moves when its call ends), then a call of each (after the move; on a GPU the first one's resident
     * kernel may still be there when the next plan's preparation moves the plans). */
    for (int i = 0; i < N && ok; i++) {
        gc3_algo_params_t ap;
        test_call_t      *inflight = NULL;
        gc3_algo_params_default(&ap, nranks);
        ap.proto   = cases[i].proto;
        ap.inplace = cases[i].inplace;
        if (i > 0) {
            inflight = &early[nearly];
            *inflight = (test_call_t){.dt = GC3_DT_FLOAT32, .op = GC3_OP_SUM, .count = 65539 / (size_t)nranks + 1,
                                      .inplace = cases[i - 1].inplace};
            early_plan[nearly++] = i - 1;
            if (call_prepare(progs[i - 1], inflight)) {
                call_ended(inflight, gc3_exec_start(plans[i - 1], &inflight->call, &diag), &diag);
            }
        }
        ok = gc3_algo_generate(cases[i].algo, &ap, &diag, NULL, &progs[i]) == GC3_OK;
        if (ok) {
            progs[i]->max_bytes = cases[i].max_bytes;
            ok = gc3_exec_prepare(exec, progs[i], &diag, &plans[i]) == GC3_OK;
        }
        if (inflight != NULL && inflight->status == GC3_OK) {
            call_ended(inflight, gc3_exec_wait(plans[i - 1], &diag), &diag);
        }
        snprintf(what, sizeof(what), "pool: %s %s%s (largest call %llu bytes) prepared: %s", cases[i].algo,
                 gc3_proto_name(cases[i].proto), cases[i].inplace ? " in place" : "",
                 (unsigned long long)cases[i].max_bytes,
                 ok ? (gc3_plan_pooled(plans[i]) ? "pooled" : "its own slots") : diag.count ? diag.msgs[0] : "?");
        ok = agree(ok && gc3_plan_pooled(plans[i]) == (cases[i].proto == GC3_PROTO_SIMPLE), what);
        if (ok) {
            gc3_plan_mem_t m;
            gc3_plan_memory(plans[i], &m);
            pool = m.pool > pool ? m.pool : pool;
            if (rank == 0) {
                printf("%s; its slots %llu bytes, the pool %llu\n", what, (unsigned long long)m.pool,
                       (unsigned long long)gc3_exec_pool_bytes(exec));
            }
            pool_check_memory(exec, plans, i + 1, pool, "after a preparation");
            for (int j = i > 0 ? i - 1 : 0; j <= i; j++) {
                early[nearly] = (test_call_t){.dt = GC3_DT_FLOAT32, .op = GC3_OP_SUM, .count = 1000,
                                              .inplace = cases[j].inplace};
                early_plan[nearly] = j;
                call_issue(plans[j], progs[j], &early[nearly++]);
            }
        }
    }
    for (int k = 0; k < nearly; k++) {
        const int i = early_plan[k];
        int       right = call_check(progs[i], &early[k], why, sizeof(why));
        snprintf(what, sizeof(what), "pool: call %d while the plans were prepared, %s %s%s count %zu: %s", k,
                 cases[i].algo, gc3_proto_name(cases[i].proto), cases[i].inplace ? " in place" : "", early[k].count,
                 right ? "ok" : why);
        if (!right) {
            fprintf(stderr, "%s\n", what);
        }
        ok = agree(right, what) && ok;
    }
    /* back to back (no other exchange between them: a rank may start the next call while its peers
     * still read the last one's messages), checked afterwards; every rank issues all of them, whatever
     * happened to one (a failure makes the others fail or time out, never wait for an exchange) */
    for (int k = 0; ok && k < NCALLS; k++) {
        int i;
        lcg    = lcg * 6364136223846793005ull + 1442695040888963407ull;
        i      = (int)((lcg >> 33) % N);
        mix[k] = (test_call_t){.dt      = GC3_DT_FLOAT32,
                               .op      = GC3_OP_SUM,
                               .count   = counts[(lcg >> 20) % (sizeof(counts) / sizeof(counts[0]))],
                               .inplace = cases[i].inplace};
        if (progs[i]->coll != GC3_COLL_ALLREDUCE) {
            mix[k].count = mix[k].count / (size_t)nranks + 1;
        }
        if (mix[k].count > max_count) {
            mix[k].count = max_count;
        }
        switches += last >= 0 && i != last && gc3_plan_pooled(plans[i]) && gc3_plan_pooled(plans[last]);
        last     = i;
        which[k] = i;
        call_issue(plans[i], progs[i], &mix[k]);
        calls    = k + 1;
    }
    for (int k = 0; k < calls; k++) {
        const int i = which[k];
        int       right = call_check(progs[i], &mix[k], why, sizeof(why));
        snprintf(what, sizeof(what), "pool: call %d, %s %s%s count %zu: %s", k, cases[i].algo,
                 gc3_proto_name(cases[i].proto), cases[i].inplace ? " in place" : "", mix[k].count, right ? "ok" : why);
        if (!right) {
            fprintf(stderr, "%s\n", what);
        }
        ok = agree(right, what) && ok;
    }
    if (ok) {
        pool_check_memory(exec, plans, N, pool, "after the calls");
        pool_check_overlap(plans[0], plans[1]);
    }
    for (int j = 0; j < N; j++) {
        gc3_plan_destroy(plans[order[j]]);
        plans[order[j]] = NULL;
        if (ok) {
            pool_check_memory(exec, plans, N, pool, "after a plan's end");
        }
    }
    gc3_exec_destroy(exec);
    (void)gc3_mem_release_deferred();
    {
        gc3_mem_held_t h;
        long           shm = on_device ? 0 : gc3_test_shm_mapped() - shm0;
        gc3_mem_held(&h);
        snprintf(what, sizeof(what), "pool: after the executor's end, rank %d holds %llu bytes of device memory, %llu "
                 "deferred, %lld region(s), %lld mapping(s), %ld bytes of gc3 shared memory mapped more than before", rank,
                 (unsigned long long)h.device, (unsigned long long)h.deferred, (long long)h.regions,
                 (long long)h.mappings, shm);
        agree(h.device == 0 && h.deferred == 0 && h.regions == 0 && h.mappings == 0 && shm == 0, what);
        if (rank == 0) {
            printf("%s\n", what);
        }
    }
    if (rank == 0) {
        printf("%-55s %s (%d calls, %d switches between pooled plans)\n", "pool: plans sharing one FIFO pool",
               ok ? "results verified" : "FAILED", calls, switches);
        fflush(stdout);
    }
    for (int i = 0; i < N; i++) {
        gc3_ir_program_destroy(progs[i]);
    }
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
    gc3_call_t        call = { in, out, 4, GC3_DT_FLOAT32, GC3_OP_SUM, NULL, NULL };
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
    ok = s == GC3_ERR_TIMEOUT && gc3_diag_contains(&diag, want) && dt < deadlock_bound;
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

/* Ranks whose executors disagree on a plan's FIFO shape (rank 0's slots half the others' size): the
 * preparation fails on every rank, naming the disagreement, instead of each laying out its peers'
 * memory with a shape they do not have. */
static void run_shape_mismatch(const gc3_exec_params_t *ep0)
{
    gc3_exec_params_t ep   = *ep0;
    gc3_exec_t       *exec = NULL;
    gc3_algo_params_t ap;
    gc3_ir_program_t *prog = NULL;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    gc3_status_t      s = GC3_ERR_IO;
    double            t0, dt;
    int               ok;

    gc3_diag_init(&diag);
    ep.slot_bytes = rank == 0 ? ep0->slot_bytes / 2 : ep0->slot_bytes;
    ep.timeout_s  = 10.0;
    gc3_algo_params_default(&ap, nranks);
    ap.proto = GC3_PROTO_SIMPLE;
    t0       = MPI_Wtime();
    if (gc3_exec_create(&ep, &diag, &exec) == GC3_OK && gc3_algo_generate("ring", &ap, &diag, NULL, &prog) == GC3_OK) {
        s = gc3_exec_prepare(exec, prog, &diag, &plan);
    }
    dt = MPI_Wtime() - t0;
    ok = s == GC3_ERR_MISMATCH && plan == NULL && gc3_diag_contains(&diag, "disagree on the plan's shape") && dt < 10.0;
    if (rank == 0 || !ok) {
        printf("shape mismatch: rank %d: prepare returned %s after %.2f s: %s\n", rank, gc3_status_string(s), dt,
               diag.count ? diag.msgs[diag.count - 1] : "");
    }
    agree(ok, "ranks that disagree on a plan's FIFO shape: the preparation fails on every rank, naming it");
    gc3_plan_destroy(plan);
    gc3_ir_program_destroy(prog);
    gc3_exec_destroy(exec);
    gc3_diag_cleanup(&diag);
}

int main(int argc, char **argv)
{
    MPI_Comm          comm;
    gc3_exec_params_t ep;
    gc3_exec_t       *exec = NULL;
    gc3_diag_t        diag;
    gc3_backend_t     backend = GC3_BACKEND_HOST;
    size_t            max_count = 16u << 20;
    int               quick = 0, resident_us = -1, fuse = 1, mix_only = 0;
    gc3_net_path_t    net_path = GC3_NET_PATH_AUTO;
    const char       *corpus = GC3_SOURCE_DIR "/tests/corpus";

    MPI_Init(&argc, &argv);
    {
        /* the runtime's exchanges (MPI_Iallgather) on a communicator coll/gc3 stays out of: this test
         * measures the runtime alone, and under gc3-mpirun the component's own plans for them would
         * count in its shared-memory checks */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "ompi_comm_coll_preference", "^gc3");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
    }
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
        } else if (strcmp(argv[i], "--fifo-pool") == 0) {
            fifo_pool = 1;
        } else if (strcmp(argv[i], "--pool-mix-only") == 0) {
            fifo_pool = mix_only = 1;
        } else if (strcmp(argv[i], "--deadlock-bound") == 0 && i + 1 < argc) {
            deadlock_bound = atof(argv[++i]);
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
    ep.fuse      = fuse;
    ep.fifo_pool = fifo_pool;
    slot_bytes   = ep.slot_bytes;
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
    if (!mix_only && agree(gc3_exec_create(&ep, &diag, &exec) == GC3_OK, "executor created")) {
        run_planted_deadlock(exec, corpus);
        if (pseudo == 0) {
            run_shape_mismatch(&ep);
        }
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
        if (pseudo == 0) { /* the rooted collectives (bcast, reduce) in their protocols, rooted at the first and the
                              last rank */
            const struct {
                const char *algo;
                gc3_proto_t proto;
            } rooted[] = {{"bcast_direct", GC3_PROTO_LL},
                          {"bcast_ring", GC3_PROTO_SIMPLE},
                          {"reduce_direct", GC3_PROTO_LL},
                          {"reduce_ring", GC3_PROTO_SIMPLE}};
            for (size_t a = 0; a < sizeof(rooted) / sizeof(rooted[0]); a++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    run_rooted(exec, rooted[a].algo, rooted[a].proto, inplace, 0, max_count);
                    run_rooted(exec, rooted[a].algo, rooted[a].proto, inplace, nranks - 1, max_count);
                    run_relabel(&ep, rooted[a].algo, rooted[a].proto, inplace, max_count);
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
    if (fifo_pool && pseudo == 0) {
        run_pool_mix(&ep, max_count);
    }
    gc3_diag_cleanup(&diag);
    free(node);
    if (rank == 0) {
        printf("test_runtime (%s backend, %d ranks, resident %d us, %s%s): %d passed, %d failed\n",
               backend == GC3_BACKEND_CUDA ? "cuda" : "host", nranks, backend == GC3_BACKEND_CUDA ? ep.resident_us : 0,
               fuse ? "fused local steps" : "step by step", fifo_pool ? ", FIFO pool" : "", passed, failed);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
