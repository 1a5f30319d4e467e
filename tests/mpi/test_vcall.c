/* Calls with per-rank counts (gc3_call_t.segs: MPI's allgatherv, alltoallv, reduce_scatter) under mpirun:
 * programs of the algorithm library run by the executor on this rank's backend with count tables of
 * several shapes (uniform, zeros, 1:1000 skew, one rank holding everything, displacements out of rank
 * order with gaps), out of place and in place. Every rank draws the same tables (one seed), so each checks
 * every element of its segments against a direct host computation, and every byte outside them against
 * what it held before (a sentinel, or in place its own input). Usage:
 *     test_vcall [--backend host|cuda] [--scale N]
 * --scale N: the largest segment of the skewed shapes (default 1000 elements; the others are smaller).
 * Prints one line per (algorithm, protocol, mode) and "N passed, M failed". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_algorithms.h"
#include "gc3_runtime.h"
#include "gc3_mpi_util.h"

static int rank, nranks, passed, failed, on_device;

enum { SHAPE_UNIFORM, SHAPE_ZEROS, SHAPE_SKEW, SHAPE_ONE, SHAPE_GAPS, SHAPE_N };
static const char *shape_name[SHAPE_N] = { "uniform", "zeros", "skew 1:1000", "one rank holds all",
                                           "permuted with gaps" };

/* The whole call, as every rank draws it: cnt[q][r] elements from rank q to rank r (allgather and
 * reduce_scatter use row 0: segment r holds cnt[0][r] on every rank), where they sit in q's input
 * (sd[q][r]) and r's output (rd[r][q]), and each rank's buffer sizes (elements). */
typedef struct {
    size_t *cnt, *sd, *rd, *in_elems, *out_elems, count;
} vcall_t;

#define AT(a, q, r) ((a)[(size_t)(q) * (size_t)nranks + (size_t)(r)])

static uint64_t rng(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* displacements of n segments of sizes len[] (stride apart in len), in order or permuted with gaps; returns the end */
static size_t place(const size_t *len, size_t stride, size_t *disp, size_t dstride, int gaps, uint64_t *s)
{
    int   *order = malloc((size_t)nranks * sizeof(int));
    size_t at    = 0;

    for (int i = 0; i < nranks; i++) {
        order[i] = i;
    }
    for (int i = nranks - 1; gaps && i > 0; i--) {
        int j = (int)(rng(s) % (uint64_t)(i + 1)), t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (int i = 0; i < nranks; i++) {
        at += gaps ? rng(s) % 5 : 0;
        disp[(size_t)order[i] * dstride] = at;
        at += len[(size_t)order[i] * stride];
    }
    free(order);
    return at + (gaps ? 3 : 0);
}

static void vcall_draw(vcall_t *v, gc3_coll_t coll, int shape, int inplace, size_t scale, uint64_t seed)
{
    const size_t n2 = (size_t)nranks * (size_t)nranks;
    uint64_t     s  = seed * 2654435761u + 12345;

    v->cnt       = calloc(n2, sizeof(size_t));
    v->sd        = calloc(n2, sizeof(size_t));
    v->rd        = calloc(n2, sizeof(size_t));
    v->in_elems  = calloc((size_t)nranks, sizeof(size_t));
    v->out_elems = calloc((size_t)nranks, sizeof(size_t));
    v->count     = 0;
    for (int q = 0; q < nranks; q++) {
        for (int r = 0; r < nranks; r++) {
            size_t c = scale / 8 + 1;
            switch (shape) {
            case SHAPE_ZEROS:
                c = rng(&s) % 3 == 0 ? 0 : 1 + rng(&s) % (scale / 4 + 1);
                break;
            case SHAPE_SKEW:
                c = rng(&s) % 2 ? scale : 1;
                break;
            case SHAPE_ONE:
                c = q == 0 ? scale : 0;
                break;
            case SHAPE_GAPS:
                c = rng(&s) % (scale / 4 + 2);
                break;
            default:
                break;
            }
            AT(v->cnt, q, r) = c;
        }
    }
    if (coll == GC3_COLL_ALLGATHER || coll == GC3_COLL_REDUCE_SCATTER) { /* one count per rank: row 0 */
        for (int q = 1; q < nranks; q++) {
            memcpy(&AT(v->cnt, q, 0), &AT(v->cnt, 0, 0), (size_t)nranks * sizeof(size_t));
        }
        if (shape == SHAPE_ONE) {
            for (int r = 0; r < nranks; r++) {
                for (int q = 0; q < nranks; q++) {
                    AT(v->cnt, q, r) = r == 0 ? scale : 0;
                }
            }
        }
    }
    if (coll == GC3_COLL_ALLTOALL && inplace) { /* MPI: in place, what r sends to q is what it gets from q */
        for (int q = 0; q < nranks; q++) {
            for (int r = 0; r < q; r++) {
                AT(v->cnt, q, r) = AT(v->cnt, r, q);
            }
        }
    }
    for (size_t i = 0; i < n2; i++) {
        v->count = v->cnt[i] > v->count ? v->cnt[i] : v->count;
    }
    for (int r = 0; r < nranks; r++) {
        const int gaps = shape == SHAPE_GAPS;
        switch (coll) {
        case GC3_COLL_ALLTOALL: /* input: row r (to each rank), output: column r (from each rank) */
            v->in_elems[r]  = place(&AT(v->cnt, r, 0), 1, &AT(v->sd, r, 0), 1, gaps, &s);
            v->out_elems[r] = place(&AT(v->cnt, 0, r), (size_t)nranks, &AT(v->rd, r, 0), 1, gaps, &s);
            if (inplace) {
                memcpy(&AT(v->sd, r, 0), &AT(v->rd, r, 0), (size_t)nranks * sizeof(size_t));
                v->in_elems[r] = v->out_elems[r];
            }
            break;
        case GC3_COLL_ALLGATHER:
            v->out_elems[r] = place(&AT(v->cnt, 0, 0), 1, &AT(v->rd, r, 0), 1, gaps, &s);
            v->in_elems[r]  = AT(v->cnt, 0, r);
            break;
        default: /* reduce_scatter: input segment q is rank q's result */
            v->in_elems[r]  = place(&AT(v->cnt, 0, 0), 1, &AT(v->sd, r, 0), 1, gaps, &s);
            v->out_elems[r] = AT(v->cnt, 0, r);
            break;
        }
    }
}

static void vcall_free(vcall_t *v)
{
    free(v->cnt);
    free(v->sd);
    free(v->rd);
    free(v->in_elems);
    free(v->out_elems);
}

/* Rank r's table (gc3_coll_segs_words words); in place, offsets of the inner buffer are from its own start. */
static uint64_t *vcall_table(const vcall_t *v, gc3_coll_t coll, int r)
{
    const int nin  = gc3_coll_segments(coll, GC3_BUF_INPUT, nranks),
              nout = gc3_coll_segments(coll, GC3_BUF_OUTPUT, nranks);
    uint64_t *t    = calloc(gc3_coll_segs_words(coll, nranks), sizeof(uint64_t));

    t[0] = (uint64_t)nin;
    for (int s = 0; s < nin; s++) {
        uint64_t *e = t + 1 + 2 * s;
        e[0]        = nin == 1 ? 0 : AT(v->sd, r, s);
        e[1]        = nin == 1 ? AT(v->cnt, 0, r) : coll == GC3_COLL_ALLTOALL ? AT(v->cnt, r, s) : AT(v->cnt, 0, s);
    }
    for (int s = 0; s < nout; s++) {
        uint64_t *e = t + 1 + 2 * (nin + s);
        e[0]        = nout == 1 ? 0 : AT(v->rd, r, s);
        e[1]        = nout == 1 ? AT(v->cnt, 0, r) : coll == GC3_COLL_ALLTOALL ? AT(v->cnt, s, r) : AT(v->cnt, 0, s);
    }
    return t;
}

/* element i of rank q's input: small integers (sums stay exact in float) */
static void fill_input(gc3_dtype_t dt, char *buf, size_t n, int q, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        const int x = (int)((i * 7 + (size_t)q * 13 + seed) % 61) - 20;
        if (dt == GC3_DT_FLOAT32) {
            ((float *)buf)[i] = (float)x;
        } else if (dt == GC3_DT_INT32) {
            ((int32_t *)buf)[i] = x;
        } else {
            ((uint8_t *)buf)[i] = (uint8_t)(x + 7 * q);
        }
    }
}

/* What rank r's output buffer (or in place, its one buffer) holds after the call: every rank's input
 * rebuilt from the seed, the segments computed directly, the rest as it was (before). */
static void expect(const vcall_t *v, gc3_coll_t coll, gc3_dtype_t dt, gc3_op_t op, int inplace, uint64_t seed,
                   const char *before, size_t bytes, char *exp)
{
    const size_t ds = gc3_dtype_size(dt);

    memcpy(exp, before, bytes);
    for (int q = 0; q < nranks; q++) {
        char *in = malloc(v->in_elems[q] * ds + 1);
        fill_input(dt, in, v->in_elems[q], q, seed);
        if (coll == GC3_COLL_ALLTOALL) {
            memcpy(exp + AT(v->rd, rank, q) * ds, in + AT(v->sd, q, rank) * ds, AT(v->cnt, q, rank) * ds);
        } else if (coll == GC3_COLL_ALLGATHER) {
            memcpy(exp + AT(v->rd, rank, q) * ds, in, AT(v->cnt, 0, q) * ds);
        } else { /* reduce_scatter: in place, the result sits at this rank's input segment */
            char *dst = exp + (inplace ? AT(v->sd, rank, rank) * ds : 0);
            if (q == 0) {
                memcpy(dst, in + AT(v->sd, q, rank) * ds, AT(v->cnt, 0, rank) * ds);
            } else {
                gc3_reduce_host(dt, op, dst, in + AT(v->sd, q, rank) * ds, AT(v->cnt, 0, rank));
            }
        }
        free(in);
    }
}

static int agree(int ok, const char *what)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    all ? passed++ : failed++;
    if (!all && rank == 0) {
        fprintf(stderr, "FAILED: %s\n", what);
    }
    return all;
}

/* One call of shape on plan; 1 when this rank's buffer is as expected. */
static int run_shape(gc3_plan_t *plan, gc3_coll_t coll, gc3_dtype_t dt, gc3_op_t op, int inplace, int shape,
                     size_t scale, uint64_t seed, char *why, size_t whylen)
{
    const size_t ds = gc3_dtype_size(dt);
    vcall_t      v;
    vcall_draw(&v, coll, shape, inplace, scale, seed);
    const size_t ib = v.in_elems[rank] * ds, ob = v.out_elems[rank] * ds, big = (ib > ob ? ib : ob) + 16;
    char        *hin = calloc(1, big), *hout = malloc(big), *exp = malloc(big), *got = malloc(big);
    char        *din = inplace ? NULL : gc3_test_alloc(on_device, ib + 16), *dout = gc3_test_alloc(on_device, big);
    uint64_t    *table = vcall_table(&v, coll, rank);
    gc3_diag_t   diag;
    gc3_status_t st;
    int          ok = 1;

    gc3_diag_init(&diag);
    fill_input(dt, hin, v.in_elems[rank], rank, seed);
    memset(hout, 0xa5, big); /* the sentinel outside the segments */
    if (inplace) {           /* the input's place in the one buffer (allgather: its segment of the output) */
        size_t at = coll == GC3_COLL_ALLGATHER ? AT(v.rd, rank, rank) * ds : 0;
        memcpy(hout + at, hin, ib);
    } else {
        gc3_test_copy(on_device, din, hin, ib);
    }
    gc3_test_copy(on_device, dout, hout, big);
    {
        gc3_call_t call = { inplace ? NULL : din, dout, v.count, dt, op, NULL, table };
        st              = gc3_exec_run(plan, &call, &diag);
    }
    if (st != GC3_OK) {
        snprintf(why, whylen, "rank %d: %s", rank, diag.count ? diag.msgs[0] : gc3_status_string(st));
        ok = 0;
    } else {
        gc3_test_copy(on_device, got, dout, big);
        expect(&v, coll, dt, op, inplace, seed, hout, big, exp);
        for (size_t i = 0; i < big && ok; i++) {
            if (got[i] != exp[i]) {
                snprintf(why, whylen, "rank %d: byte %zu of %zu is 0x%02x, expected 0x%02x (count %zu)", rank, i, big,
                         (unsigned char)got[i], (unsigned char)exp[i], v.count);
                ok = 0;
            }
        }
    }
    gc3_diag_cleanup(&diag);
    if (din != NULL) {
        gc3_test_free(on_device, din);
    }
    gc3_test_free(on_device, dout);
    free(hin);
    free(hout);
    free(exp);
    free(got);
    free(table);
    vcall_free(&v);
    return ok;
}

static void run_algo(gc3_exec_t *exec, const char *algo, int nodes, gc3_proto_t proto, int inplace, size_t scale)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *prog = NULL;
    gc3_plan_t       *plan = NULL;
    gc3_diag_t        diag;
    char              what[256], why[512] = "";
    int               ok = 1, calls = 0;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, nranks);
    ap.nodes         = nodes;
    ap.gpus_per_node = nranks / nodes;
    ap.proto         = proto;
    ap.inplace       = inplace;
    snprintf(what, sizeof(what), "%s (%d x %d) %s %s", algo, nodes, nranks / nodes, gc3_proto_name(proto),
             inplace ? "in-place" : "out-of-place");
    if (gc3_algo_generate(algo, &ap, &diag, NULL, &prog) != GC3_OK) {
        snprintf(why, sizeof(why), "generate: %s", diag.count ? diag.msgs[0] : "?");
        ok = 0;
    } else if (gc3_exec_prepare(exec, prog, &diag, &plan) != GC3_OK) {
        snprintf(why, sizeof(why), "prepare: %s", diag.count ? diag.msgs[0] : "?");
        ok = 0;
    }
    ok = agree(ok, what) && ok;
    for (int shape = 0; ok && shape < SHAPE_N; shape++) {
        const gc3_coll_t coll   = prog->coll;
        const int        reduce = coll == GC3_COLL_REDUCE_SCATTER;
        const struct {
            gc3_dtype_t dt;
            gc3_op_t    op;
        } types[] = { { reduce ? GC3_DT_FLOAT32 : GC3_DT_UINT8, GC3_OP_SUM }, { GC3_DT_INT32, GC3_OP_MAX } };
        for (int t = 0; ok && t < (reduce ? 2 : 1); t++) {
            for (uint64_t seed = 1; ok && seed <= 2; seed++) { /* the same call twice: the blocks' cached ends */
                char msg[1024];
                ok = run_shape(plan, coll, types[t].dt, types[t].op, inplace, shape, scale,
                               shape == SHAPE_GAPS ? seed : 1, why, sizeof(why));
                snprintf(msg, sizeof(msg), "%s %s %s %s: %s", what, shape_name[shape], gc3_dtype_name(types[t].dt),
                         gc3_op_name(types[t].op), ok ? "ok" : why);
                if (!ok) {
                    fprintf(stderr, "%s\n", msg);
                }
                ok = agree(ok, msg);
                calls++;
            }
        }
    }
    if (rank == 0) {
        printf("%-50s %s (%d calls)\n", what, ok ? "results verified" : "FAILED", calls);
        fflush(stdout);
    }
    gc3_plan_destroy(plan);
    gc3_ir_program_destroy(prog);
    gc3_diag_cleanup(&diag);
}

int main(int argc, char **argv)
{
    MPI_Comm          comm;
    gc3_exec_params_t ep;
    gc3_exec_t       *exec = NULL;
    gc3_diag_t        diag;
    gc3_backend_t     backend = GC3_BACKEND_HOST;
    size_t            scale   = 1000;

    MPI_Init(&argc, &argv);
    {
        MPI_Info info; /* the runtime's exchanges on a communicator coll/gc3 stays out of */
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
        } else if (strcmp(argv[i], "--scale") == 0 && i + 1 < argc) {
            scale = strtoull(argv[++i], NULL, 10);
        } else {
            if (rank == 0) {
                fprintf(stderr, "usage: test_vcall [--backend host|cuda] [--scale N]\n");
            }
            MPI_Finalize();
            return strcmp(argv[i], "--help") == 0 ? 0 : 2;
        }
    }
    on_device = backend == GC3_BACKEND_CUDA;
    gc3_test_device_setup("test_vcall", on_device, comm);
    gc3_diag_init(&diag);
    gc3_mpi_exec_params(&ep, backend, &comm);
    ep.timeout_s = 120.0; /* CI oversubscribes 2 cores */
    if (agree(gc3_exec_create(&ep, &diag, &exec) == GC3_OK, "executor created")) {
        const char *algos[] = { "direct", "allgather_ring", "reduce_scatter_ring" };
        for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
            for (int proto = 0; proto < 2; proto++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    run_algo(exec, algos[a], 1, (gc3_proto_t)proto, inplace, scale);
                }
            }
        }
        if (nranks % 2 == 0 && nranks >= 4) { /* an alltoall through scratch: 2 (pseudo) nodes */
            for (int inplace = 0; inplace <= 1; inplace++) {
                run_algo(exec, "twostep", 2, GC3_PROTO_SIMPLE, inplace, scale);
            }
        }
    }
    gc3_exec_destroy(exec);
    gc3_diag_cleanup(&diag);
    if (rank == 0) {
        printf("test_vcall (%s backend, %d ranks, scale %zu): %d passed, %d failed\n", on_device ? "cuda" : "host",
               nranks, scale, passed, failed);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return failed ? 1 : 0;
}
