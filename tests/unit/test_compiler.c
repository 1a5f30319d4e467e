/* The compiler: its programming interface, fusion, and every algorithm of the library over
 * the shape matrix, each compiled, verified and run by the reference executor against the
 * direct computation for every dtype and op. */
#include <string.h>
#include <time.h>
#include "gc3_algorithms.h"
#include "gc3_test.h"
#include "gc3_oracle.h"

static gc3_prog_t *new_prog(gc3_coll_t coll, int R, int in, int out, int inplace)
{
    gc3_prog_params_t pp;
    gc3_prog_t       *p = NULL;
    gc3_prog_params_default(&pp);
    pp.name           = "t";
    pp.coll           = coll;
    pp.nranks         = R;
    pp.in_chunks      = in;
    pp.out_chunks     = out;
    pp.nchunksperloop = in > out ? in : out;
    pp.inplace        = inplace;
    CHECK_OK(gc3_prog_create(&pp, &p));
    return p;
}

static void test_api_errors(void)
{
    gc3_prog_t *p = new_prog(GC3_COLL_ALLREDUCE, 2, 2, 2, 0);
    gc3_cref_t  a, b, o;

    CHECK(gc3_chunk(p, 0, GC3_BUF_OUTPUT, 0, 1, &a) == GC3_OK, "a reference to unwritten chunks may be made");
    CHECK(gc3_copy(p, a, 1, GC3_BUF_OUTPUT, 0, 0, &b) == GC3_ERR_INVALID_PARAM &&
              strstr(gc3_prog_error(p), "rank 0 output chunk 0 holds no data yet") != NULL,
          "reading unwritten chunks must fail: %s", gc3_prog_error(p));
    CHECK(gc3_chunk(p, 0, GC3_BUF_INPUT, 0, 1, &a) == GC3_ERR_INVALID_PARAM, "errors are sticky");
    gc3_prog_destroy(p);

    p = new_prog(GC3_COLL_ALLREDUCE, 2, 2, 2, 0);
    gc3_chunk(p, 0, GC3_BUF_INPUT, 0, 1, &a);
    CHECK_OK(gc3_copy(p, a, 0, GC3_BUF_OUTPUT, 0, 0, &o));
    gc3_chunk(p, 1, GC3_BUF_INPUT, 0, 1, &b);
    CHECK_OK(gc3_copy(p, b, 0, GC3_BUF_OUTPUT, 0, 0, &b)); /* overwrites rank 0 output chunk 0 */
    CHECK(gc3_copy(p, o, 1, GC3_BUF_OUTPUT, 1, 0, &a) == GC3_ERR_INVALID_PARAM &&
              strstr(gc3_prog_error(p), "stale reference: rank 0 output chunk 0") != NULL,
          "a stale reference must be refused: %s", gc3_prog_error(p));
    gc3_prog_destroy(p);

    p = new_prog(GC3_COLL_ALLREDUCE, 2, 2, 2, 0);
    gc3_chunk(p, 0, GC3_BUF_INPUT, 0, 1, &a);
    CHECK(gc3_copy(p, a, 1, GC3_BUF_INPUT, 0, 0, &b) == GC3_ERR_INVALID_PARAM &&
              strstr(gc3_prog_error(p), "read-only out of place") != NULL,
          "writing the input out of place");
    gc3_prog_destroy(p);

    p = new_prog(GC3_COLL_ALLREDUCE, 2, 2, 2, 0);
    CHECK(gc3_chunk(p, 2, GC3_BUF_INPUT, 0, 1, &a) == GC3_ERR_INVALID_PARAM &&
              strstr(gc3_prog_error(p), "rank 2 outside [0, 2)") != NULL,
          "rank out of range");
    gc3_prog_destroy(p);

    p = new_prog(GC3_COLL_ALLREDUCE, 2, 2, 2, 0);
    CHECK(gc3_chunk(p, 0, GC3_BUF_INPUT, 1, 2, &a) == GC3_ERR_INVALID_PARAM &&
              strstr(gc3_prog_error(p), "input chunk 2 is outside the buffer") != NULL,
          "chunk out of range");
    gc3_prog_destroy(p);

    p = new_prog(GC3_COLL_ALLREDUCE, 2, 2, 2, 0);
    gc3_chunk(p, 0, GC3_BUF_INPUT, 0, 2, &a);
    gc3_chunk(p, 1, GC3_BUF_INPUT, 0, 1, &b);
    CHECK_OK(gc3_copy(p, b, 1, GC3_BUF_OUTPUT, 0, 0, &b));
    CHECK(gc3_reduce(p, b, a, 0, &o) == GC3_ERR_INVALID_PARAM && strstr(gc3_prog_error(p), "2 chunks into 1") != NULL,
          "reduce of different sizes");
    gc3_prog_destroy(p);

    /* a program that does not compute the collective is caught by the verifier at compile time */
    {
        gc3_ir_program_t *ir = NULL;
        gc3_diag_t        diag;
        gc3_diag_init(&diag);
        p = new_prog(GC3_COLL_ALLREDUCE, 2, 1, 1, 0);
        gc3_chunk(p, 0, GC3_BUF_INPUT, 0, 1, &a);
        gc3_copy(p, a, 1, GC3_BUF_OUTPUT, 0, 0, &a); /* rank 1 gets rank 0's data only */
        gc3_chunk(p, 1, GC3_BUF_INPUT, 0, 1, &b);
        gc3_copy(p, b, 0, GC3_BUF_OUTPUT, 0, 0, &b);
        CHECK(gc3_prog_compile(p, &diag, NULL, &ir) == GC3_ERR_VERIFY && ir == NULL &&
                  gc3_diag_contains(&diag, "ends with rank.chunk {0.0} but allreduce needs {0.0 1.0}"),
              "an exchange is not an allreduce");
        gc3_prog_destroy(p);
        gc3_diag_cleanup(&diag);
    }
}

/* The paper's ring: per rank one s, R-2 rrs, one rrcs, R-2 rcs, one r, in one block per channel. */
static void test_ring_fusion(void)
{
    for (int R = 2; R <= 8; R++) {
        for (int ch = 1; ch <= 2; ch++) {
            gc3_algo_params_t   ap;
            gc3_compile_stats_t st;
            gc3_ir_program_t   *p = NULL;
            gc3_algo_params_default(&ap, R);
            ap.channels = ch;
            CHECK_OK(gc3_algo_generate("ring", &ap, NULL, &st, &p));
            if (p == NULL) {
                continue;
            }
            CHECK(st.by_type[GC3_STEP_SEND] == R * ch && st.by_type[GC3_STEP_RECV] == R * ch &&
                      st.by_type[GC3_STEP_RRS] == R * (R - 2) * ch && st.by_type[GC3_STEP_RRCS] == R * ch &&
                      st.by_type[GC3_STEP_RCS] == R * (R - 2) * ch && st.by_type[GC3_STEP_CPY] == 0 &&
                      st.by_type[GC3_STEP_RRC] == 0 && st.nops == 0,
                  "ring R=%d channels=%d: s %d r %d rrs %d rrcs %d rcs %d cpy %d", R, ch, st.by_type[GC3_STEP_SEND],
                  st.by_type[GC3_STEP_RECV], st.by_type[GC3_STEP_RRS], st.by_type[GC3_STEP_RRCS],
                  st.by_type[GC3_STEP_RCS], st.by_type[GC3_STEP_CPY]);
            for (int r = 0; r < R; r++) {
                const gc3_ir_gpu_t *g = &p->gpus[r];
                CHECK(g->ntbs == ch, "ring R=%d: rank %d has %d blocks", R, r, g->ntbs);
                for (int t = 0; t < g->ntbs; t++) {
                    const gc3_ir_tb_t *tb = &g->tbs[t];
                    CHECK(tb->nsteps == 2 * R - 1 && tb->send == (r + 1) % R && tb->recv == (r + R - 1) % R &&
                              tb->steps[0].type == GC3_STEP_SEND && tb->steps[R - 1].type == GC3_STEP_RRCS &&
                              tb->steps[2 * R - 2].type == GC3_STEP_RECV,
                          "ring R=%d rank %d tb %d: %d steps, shape differs", R, r, t, tb->nsteps);
                }
            }
            gc3_ir_program_destroy(p);
        }
    }
}

typedef struct {
    int checked, programs;
} tally_t;

static void run_all_dtypes(const gc3_ir_program_t *p, size_t count, int slots, tally_t *t)
{
    for (int dt = 0; dt < GC3_DT_COUNT; dt++) {
        for (int op = 0; op < GC3_OP_COUNT; op++) {
            int reduces = p->coll == GC3_COLL_ALLREDUCE || p->coll == GC3_COLL_REDUCE_SCATTER;
            if (!gc3_op_valid((gc3_op_t)op, (gc3_dtype_t)dt) || (!reduces && op != GC3_OP_SUM)) {
                continue;
            }
            gc3_oracle_check(p, (gc3_dtype_t)dt, (gc3_op_t)op, count, p->inplace, slots); /* compiled for them */
            t->checked++;
        }
    }
}

static void check_algo(const char *name, gc3_algo_params_t *ap, tally_t *t)
{
    gc3_ir_program_t   *p = NULL;
    gc3_compile_stats_t st;
    gc3_diag_t          diag;
    gc3_status_t        s;
    size_t              count;

    gc3_diag_init(&diag);
    s = gc3_algo_generate(name, ap, &diag, &st, &p);
    if (ap->inplace && strcmp(name, "alltonext") == 0) {
        CHECK(s == GC3_ERR_UNSUPPORTED, "alltonext in place must be refused");
        gc3_diag_cleanup(&diag);
        return;
    }
    CHECK(s == GC3_OK && st.verified, "%s ranks %d (%d x %d) instances %d proto %s %s: %s (%s)", name, ap->nranks,
          ap->nodes, ap->gpus_per_node, ap->instances, gc3_proto_name(ap->proto),
          ap->inplace ? "in-place" : "out-of-place", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    if (p == NULL) {
        return;
    }
    t->programs++;
    CHECK(p->proto == ap->proto && p->inplace == ap->inplace, "%s: program attributes", name);
    /* 2 elements per chunk; count is per rank / per peer / per send as MPI counts it */
    switch (p->coll) {
    case GC3_COLL_ALLREDUCE:
    case GC3_COLL_CUSTOM:
        count = (size_t)p->nchunksperloop * 2;
        break;
    default:
        count = (size_t)p->nchunksperloop * 2 / (size_t)p->ngpus;
        break;
    }
    run_all_dtypes(p, count, ap->slots > 0 ? ap->slots : GC3_FIFO_SLOTS_DEFAULT, t);
    gc3_ir_program_destroy(p);
}

static void test_matrix(void)
{
    const char *flat[] = {
        "ring", "allpairs", "oneshot", "rhd", "direct", "allgather_ring", "reduce_scatter_ring", "reduce_scatter_direct"
    };
    const char *hier[] = { "hierarchical", "twostep", "alltonext" };
    tally_t     t      = { 0, 0 };
    clock_t     c0     = clock();

    for (size_t a = 0; a < sizeof(flat) / sizeof(flat[0]); a++) {
        for (int R = 2; R <= 16; R++) {
            for (int inst = 1; inst <= 4; inst++) {
                for (int proto = 0; proto < GC3_PROTO_COUNT; proto++) {
                    for (int inplace = 0; inplace <= 1; inplace++) {
                        gc3_algo_params_t ap;
                        gc3_algo_params_default(&ap, R);
                        ap.instances       = inst;
                        ap.proto           = (gc3_proto_t)proto;
                        ap.inplace         = inplace;
                        ap.channels        = strcmp(flat[a], "ring") == 0 || strcmp(flat[a], "reduce_scatter_ring") == 0
                                                 ? 1 + (R + inst) % 3
                                                 : 1;
                        ap.chunks_per_peer = strcmp(flat[a], "direct") == 0 ? 1 + R % 2 : 1;
                        check_algo(flat[a], &ap, &t);
                    }
                }
            }
        }
    }
    for (size_t a = 0; a < sizeof(hier) / sizeof(hier[0]); a++) {
        for (int N = 2; N <= 4; N++) {
            for (int G = 2; G <= 8; G++) {
                for (int inst = 1; inst <= 4; inst++) {
                    for (int proto = 0; proto < GC3_PROTO_COUNT; proto++) {
                        for (int inplace = 0; inplace <= 1; inplace++) {
                            gc3_algo_params_t ap;
                            if (strcmp(hier[a], "alltonext") == 0 && inst > 1) {
                                continue; /* custom collectives are not replicated */
                            }
                            gc3_algo_params_default(&ap, N * G);
                            ap.nodes         = N;
                            ap.gpus_per_node = G;
                            ap.instances     = inst;
                            ap.proto         = (gc3_proto_t)proto;
                            ap.inplace       = inplace;
                            check_algo(hier[a], &ap, &t);
                        }
                    }
                }
            }
        }
    }
    printf("test_compiler: %d programs compiled and verified, %d reference-executor runs checked against the direct "
           "computation (%.1f s CPU)\n",
           t.programs, t.checked, (double)(clock() - c0) / CLOCKS_PER_SEC);
    CHECK(t.programs > 3000, "only %d programs", t.programs);
}

static void test_compile_time(void)
{
    gc3_algo_params_t   ap;
    gc3_compile_stats_t st;
    gc3_ir_program_t   *p = NULL;
    struct timespec     a, b;
    double              secs;

    gc3_algo_params_default(&ap, 64);
    ap.nodes         = 8;
    ap.gpus_per_node = 8;
    ap.instances     = 4;
    clock_gettime(CLOCK_MONOTONIC, &a);
    CHECK_OK(gc3_algo_generate("hierarchical", &ap, NULL, &st, &p));
    clock_gettime(CLOCK_MONOTONIC, &b);
    secs = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
    printf("test_compiler: 64-rank (8 x 8) hierarchical allreduce, 4 instances: generated and verified in %.3f s "
           "(%d thread blocks, %d steps per instance)\n",
           secs, st.tbs, st.instrs + st.nops);
    CHECK(st.verified, "not verified");
    CHECK(secs < 5.0, "compile + verify took %.2f s", secs);
    gc3_ir_program_destroy(p);
}

static void test_bad_shapes(void)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *p = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, 6);
    ap.nodes         = 4;
    ap.gpus_per_node = 2;
    CHECK(gc3_algo_generate("hierarchical", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM &&
              gc3_diag_contains(&diag, "4 nodes x 2 GPUs per node is not 6 ranks"),
          "bad shape accepted");
    CHECK(gc3_algo_generate("nonesuch", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM &&
              gc3_diag_contains(&diag, "unknown algorithm 'nonesuch'"),
          "unknown algorithm accepted");
    gc3_algo_params_default(&ap, 4);
    ap.channels = 2; /* a generator is never asked for a shape it does not make */
    CHECK(gc3_algo_generate("allgather_ring", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM && p == NULL &&
              gc3_diag_contains(&diag, "allgather_ring: does not take channels"),
          "channels given to allgather_ring accepted");
    ap.channels        = 1;
    ap.chunks_per_peer = 3;
    CHECK(gc3_algo_generate("reduce_scatter_ring", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM && p == NULL &&
              gc3_diag_contains(&diag, "reduce_scatter_ring: does not take chunks_per_peer"),
          "chunks per peer given to reduce_scatter_ring accepted");
    gc3_algo_params_default(&ap, 1);
    CHECK(gc3_algo_generate("ring", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM, "one rank accepted");
    gc3_diag_cleanup(&diag);
}

/* plans narrowed to what a GPU holds at once */
static void test_fit(void)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *p = NULL;
    gc3_diag_t        diag;
    int               narrowed = -1;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, 4);
    ap.channels  = 16;
    ap.instances = 8;
    CHECK_OK(gc3_algo_generate_fit("ring", &ap, 1000, &diag, &p, &narrowed));
    CHECK(p && narrowed == 0 && gc3_ir_widest_rank(p) == 128 && ap.instances == 8,
          "ring 16x8 on 4 ranks: 128 blocks, fits 1000");
    gc3_ir_program_destroy(p);
    CHECK_OK(gc3_algo_generate_fit("ring", &ap, 100, &diag, &p, &narrowed));
    CHECK(p && narrowed == 1 && gc3_ir_widest_rank(p) == 64 && ap.channels == 16 && ap.instances == 4,
          "ring 16x8 into 100 blocks: 16x4 (64 blocks)");
    gc3_ir_program_destroy(p);
    ap.instances = 1;
    CHECK_OK(gc3_algo_generate_fit("ring", &ap, 5, &diag, &p, &narrowed));
    CHECK(p && narrowed == 1 && gc3_ir_widest_rank(p) <= 5 && ap.instances == 1 && ap.channels < 16,
          "ring 16x1 into 5 blocks: fewer channels (%d)", ap.channels);
    gc3_ir_program_destroy(p);
    gc3_algo_params_default(&ap, 4);
    ap.instances = 32;
    CHECK_OK(gc3_algo_generate_fit("direct", &ap, 108, &diag, &p, &narrowed));
    CHECK(p && narrowed == 1 && gc3_ir_widest_rank(p) == 64 && ap.instances == 16,
          "direct x32 on 4 ranks (128 blocks) into 108 (an A100's SMs): x16");
    gc3_ir_program_destroy(p);
    gc3_algo_params_default(&ap, 4);
    CHECK(gc3_algo_generate_fit("ring", &ap, 0, &diag, &p, &narrowed) == GC3_ERR_UNSUPPORTED && p == NULL &&
              diag.count > 0 && strstr(diag.msgs[diag.count - 1], "at most 0 can run at once") != NULL,
          "nothing fits 0 blocks: refused, saying why");
    gc3_diag_cleanup(&diag);
}

/* Every rank of an allreduce receives the same bits: float32 sums of values of very different
 * magnitudes (whose result depends on the order of the additions), every built-in allreduce on 3 to 8
 * ranks, in place and out of place, run by the reference executor; each rank's output compared
 * bytewise with rank 0's. (The one-shot once started from each rank's own input: on 3 or more ranks
 * the ranks got different sums.) */
static void test_same_bits(void)
{
    const char *algos[] = { "ring", "allpairs", "oneshot", "rhd" };
    int         cases   = 0;

    for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]); a++) {
        for (int R = 3; R <= 8; R++) {
            for (int inplace = 0; inplace <= 1; inplace++) {
                gc3_algo_params_t  params;
                gc3_ir_program_t  *p = NULL;
                gc3_refexec_args_t args;
                gc3_diag_t         diag;
                float             *in[8], *out[8];
                size_t             ni, no;
                gc3_algo_params_default(&params, R);
                params.inplace = inplace;
                if (gc3_algo_generate(algos[a], &params, NULL, NULL, &p) != GC3_OK || p == NULL) {
                    continue; /* (a shape the algorithm does not take: rhd on 3 ranks) */
                }
                memset(&args, 0, sizeof(args));
                args.dtype       = GC3_DT_FLOAT32;
                args.op          = GC3_OP_SUM;
                args.chunk_elems = 64;
                args.inplace     = inplace;
                ni               = (size_t)p->gpus[0].i_chunks * args.chunk_elems;
                no               = (size_t)p->gpus[0].o_chunks * args.chunk_elems;
                for (int r = 0; r < R; r++) {
                    in[r]  = malloc(ni * sizeof(float));
                    out[r] = malloc(no * sizeof(float));
                    for (size_t i = 0; i < ni; i++) { /* 1e-3 .. 1e7, both signs */
                        unsigned h = (unsigned)(r * 7919 + (int)i * 104729 + 17);
                        h ^= h >> 13;
                        h *= 0x5bd1e995u;
                        in[r][i] = (float)((h % 2 ? 1.0 : -1.0) * (1.0 + (h >> 8) % 1000) * (h % 7 == 0 ? 1e4 : 1e-3));
                    }
                    memcpy(out[r], in[r], (ni < no ? ni : no) * sizeof(float));
                }
                gc3_diag_init(&diag);
                CHECK(gc3_refexec_run(p, &args, (void *const *)in, (void *const *)out, &diag) == GC3_OK,
                      "%s on %d ranks%s: %s", algos[a], R, inplace ? " in place" : "", diag.count ? diag.msgs[0] : "?");
                for (int r = 1; r < R; r++) {
                    CHECK(!memcmp(out[r], out[0], no * sizeof(float)),
                          "%s on %d ranks%s: rank %d's sums differ from rank 0's", algos[a], R,
                          inplace ? " in place" : "", r);
                }
                gc3_diag_cleanup(&diag);
                for (int r = 0; r < R; r++) {
                    free(in[r]);
                    free(out[r]);
                }
                gc3_ir_program_destroy(p);
                cases++;
            }
        }
    }
    CHECK(cases >= 40, "only %d cases", cases);
}

int main(void)
{
    test_fit();
    test_api_errors();
    test_ring_fusion();
    test_bad_shapes();
    test_compile_time();
    test_matrix();
    test_same_bits();
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_compiler");
}
