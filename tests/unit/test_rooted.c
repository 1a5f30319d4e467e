/* Rooted collectives (bcast, reduce; issue 40; gather, scatter: issue 57): every generator for 1 to 8 ranks, every root, in
 * place and not, verified and run by the reference executor against the direct computation of
 * gc3_oracle.h (non-roots passing NULL where MPI lets them); the verifier refusing steps that touch a
 * buffer a non-root does not have; the root in the XML file; the rules' bcast and reduce lines and a
 * bad root; zero-copy never homing a partial result in a reduce's non-root output. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gc3_test.h"
#include "gc3_oracle.h"
#include "gc3_algorithms.h"
#include "gc3_rules.h"
#include "gc3_verify.h"
#include "gc3_compiler.h"
#include "runtime/gc3_rt_internal.h" /* gc3_rt_layout_union */

static const char *const rooted_algos[] = { "bcast_direct",  "bcast_ring",  "reduce_direct",  "reduce_ring",
                                            "gather_direct", "gather_ring", "scatter_direct", "scatter_ring" };

static gc3_ir_program_t *gen(const char *algo, int R, int root, int inplace, int channels, int instances,
                             gc3_proto_t proto)
{
    gc3_algo_params_t   ap;
    gc3_compile_stats_t st;
    gc3_ir_program_t   *p = NULL;
    gc3_diag_t          diag;
    gc3_status_t        s;

    gc3_algo_params_default(&ap, R);
    ap.root      = root;
    ap.inplace   = inplace;
    ap.channels  = channels;
    ap.instances = instances;
    ap.proto     = proto;
    gc3_diag_init(&diag);
    s = gc3_algo_generate(algo, &ap, &diag, &st, &p);
    CHECK(s == GC3_OK && st.verified && p != NULL, "%s R=%d root=%d %s channels=%d instances=%d: %s (%s)", algo, R,
          root, inplace ? "in-place" : "out-of-place", channels, instances, gc3_status_string(s),
          diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    return p;
}

/* The buffers a program touches at each rank (its steps), against what the collective allows. */
static int touches(const gc3_ir_program_t *p, int rank, gc3_buf_t buf)
{
    const gc3_ir_gpu_t *g = &p->gpus[rank];
    for (int t = 0; t < g->ntbs; t++) {
        for (int s = 0; s < g->tbs[t].nsteps; s++) {
            const gc3_ir_step_t *st = &g->tbs[t].steps[s];
            const unsigned       f  = gc3_step_flags(st->type);
            if (((f & GC3_STEP_F_READ_SRC) && st->srcbuf == buf) ||
                ((f & (GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST)) && st->dstbuf == buf)) {
                return 1;
            }
        }
    }
    return 0;
}

static void test_generators(void)
{
    int cases = 0, programs = 0;

    for (size_t a = 0; a < sizeof(rooted_algos) / sizeof(rooted_algos[0]); a++) {
        const gc3_coll_t coll   = strncmp(rooted_algos[a], "reduce", 6) == 0    ? GC3_COLL_REDUCE
                                  : strncmp(rooted_algos[a], "gather", 6) == 0  ? GC3_COLL_GATHER
                                  : strncmp(rooted_algos[a], "scatter", 7) == 0 ? GC3_COLL_SCATTER
                                                                                : GC3_COLL_BCAST;
        const int        reduce = coll == GC3_COLL_REDUCE;
        const gc3_buf_t  only   = gc3_coll_desc(coll)->root_buf; /* the buffer a non-root does not have */
        for (int R = 1; R <= 8; R++) {
            for (int root = 0; root < R; root++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    /* the defaults, and a wider shape (channels, instances, LL) on some */
                    const int         wide = (R + root) % 3 == 0;
                    gc3_ir_program_t *p    = gen(rooted_algos[a], R, root, inplace, wide ? 2 : 1, wide ? 2 : 1,
                                              wide ? GC3_PROTO_LL : GC3_PROTO_SIMPLE);
                    if (p == NULL) {
                        continue;
                    }
                    programs++;
                    CHECK(p->root == root && p->coll == coll && p->inplace == inplace, "%s: root %d coll %s", p->name,
                          p->root, p->coll_name);
                    for (int r = 0; r < R; r++) {
                        if (r == root) {
                            continue;
                        }
                        CHECK(!touches(p, r, only), "%s: non-root %d touches its %s", p->name, r,
                              only == GC3_BUF_OUTPUT ? "output" : "input");
                    }
                    for (int k = 1; k <= 3; k += 2) {
                        const size_t count = (size_t)p->nchunksperloop * (size_t)k;
                        gc3_oracle_check(p, GC3_DT_INT32, GC3_OP_SUM, count, inplace, 4);
                        gc3_oracle_check(p, GC3_DT_FLOAT64, reduce ? GC3_OP_MAX : GC3_OP_SUM, count, inplace, 1);
                        gc3_oracle_check_zc(p, GC3_DT_INT8, reduce ? GC3_OP_MIN : GC3_OP_SUM, count, inplace, 2, 1);
                        cases += 3;
                    }
                    if (inplace) { /* the out-of-place form of the in-place program */
                        gc3_ir_program_t *cf = NULL;
                        gc3_diag_t        diag;
                        gc3_diag_init(&diag);
                        CHECK_OK(gc3_ir_copy_first(p, &cf));
                        if (cf != NULL) {
                            gc3_status_t vs = gc3_verify(cf, NULL, &diag);
                            CHECK(vs == GC3_OK && cf->root == root, "%s copy first: %s (%s)", p->name,
                                  gc3_status_string(vs), diag.count ? diag.msgs[0] : "");
                            gc3_oracle_check(cf, GC3_DT_INT32, GC3_OP_SUM, (size_t)cf->nchunksperloop, 0, 4);
                            cases++;
                            gc3_ir_program_destroy(cf);
                        }
                        gc3_diag_cleanup(&diag);
                    }
                    gc3_ir_program_destroy(p);
                }
            }
        }
    }
    CHECK(programs == 8 * 36 * 2, "%d programs", programs);
    printf("test_rooted: %d programs, %d reference-executor runs against the oracle\n", programs, cases);
}

/* A bad root and the generators' other refusals. */
static void test_bad_root(void)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *p = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, 4);
    ap.root = 4;
    CHECK(gc3_algo_generate("bcast_ring", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM && p == NULL &&
              gc3_diag_contains(&diag, "bcast_ring: root 4 is not a rank of 4 (0 to 3)"),
          "root 4 of 4: %s", diag.count ? diag.msgs[0] : "accepted");
    gc3_diag_cleanup(&diag);
    ap.root = -1;
    CHECK(gc3_algo_generate("reduce_direct", &ap, &diag, NULL, &p) == GC3_ERR_INVALID_PARAM && p == NULL,
          "root -1 accepted");
    gc3_diag_cleanup(&diag);
    {
        gc3_prog_params_t pp;
        gc3_prog_t       *prog = NULL;
        gc3_prog_params_default(&pp);
        pp.coll   = GC3_COLL_BCAST; /* root -1: refused */
        pp.nranks = 2, pp.in_chunks = pp.out_chunks = pp.nchunksperloop = 1;
        CHECK(gc3_prog_create(&pp, &prog) == GC3_ERR_INVALID_PARAM && prog == NULL, "a bcast trace without a root");
        pp.coll = GC3_COLL_ALLREDUCE, pp.root = 1; /* a root for allreduce: refused */
        CHECK(gc3_prog_create(&pp, &prog) == GC3_ERR_INVALID_PARAM && prog == NULL, "an allreduce trace with a root");
        pp.coll = GC3_COLL_BCAST, pp.root = 1; /* a non-root's input holds no data in the trace */
        CHECK_OK(gc3_prog_create(&pp, &prog));
        if (prog != NULL) {
            gc3_cref_t x;
            gc3_chunk(prog, 0, GC3_BUF_INPUT, 0, 1, &x);
            gc3_copy(prog, x, 1, GC3_BUF_OUTPUT, 0, 0, &x);
            CHECK(strstr(gc3_prog_error(prog), "rank 0 input chunk 0 holds no data yet") != NULL, "trace: '%s'",
                  gc3_prog_error(prog));
            gc3_prog_destroy(prog);
        }
    }
}

/* Programs that touch what a non-root does not have: refused by the verifier, naming the step. */
static void test_access(void)
{
    gc3_ir_program_t *p;
    gc3_ir_tb_t      *tb;
    gc3_diag_t        diag;
    gc3_status_t      s;

    gc3_diag_init(&diag);
    /* bcast, root 0 of 2: rank 1 sends its own input back (and receives the root's) */
    CHECK_OK(gc3_ir_program_create("bad_bcast", GC3_COLL_BCAST, 2, 1, &p));
    p->root = 0;
    for (int r = 0; r < 2; r++) {
        p->gpus[r].i_chunks = p->gpus[r].o_chunks = 1;
    }
    CHECK_OK(gc3_ir_add_tb(p, 0, 1, -1, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_INPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_tb(p, 0, -1, 1, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RECV, GC3_BUF_NONE, -1, GC3_BUF_SCRATCH, 0, 1, -1, -1, NULL));
    p->gpus[0].s_chunks = 1;
    CHECK_OK(gc3_ir_add_step(&p->gpus[0].tbs[0], GC3_STEP_CPY, GC3_BUF_INPUT, 0, GC3_BUF_OUTPUT, 0, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_tb(p, 1, 0, 0, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_INPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RECV, GC3_BUF_NONE, -1, GC3_BUF_OUTPUT, 0, 1, -1, -1, NULL));
    gc3_ir_update_hasdep(p);
    s = gc3_verify(p, NULL, &diag);
    CHECK(s == GC3_ERR_VERIFY &&
              gc3_diag_contains(&diag, "rank 1 tb 0 step 0 (s) reads its input buffer, which bcast's non-root ranks do "
                                       "not have (root 0)"),
          "bcast non-root reading its input: %s (%s)", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    p->root = 2;
    s       = gc3_verify(p, NULL, &diag);
    CHECK(s == GC3_ERR_VERIFY && gc3_diag_contains(&diag, "bcast needs a root among its ranks (root 2)"),
          "root 2 of 2: %s (%s)", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    gc3_ir_program_destroy(p);

    /* reduce, root 1 of 2, in place: rank 0 adds what it gets into its input (its send buffer) */
    CHECK_OK(gc3_ir_program_create("bad_reduce", GC3_COLL_REDUCE, 2, 1, &p));
    p->root    = 1;
    p->inplace = 1, p->outofplace = 0;
    for (int r = 0; r < 2; r++) {
        p->gpus[r].i_chunks = p->gpus[r].o_chunks = 1;
    }
    CHECK_OK(gc3_ir_add_tb(p, 1, 0, 0, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_INPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RRC, GC3_BUF_INPUT, 0, GC3_BUF_OUTPUT, 0, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_tb(p, 0, 1, 1, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RRC, GC3_BUF_INPUT, 0, GC3_BUF_INPUT, 0, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_INPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
    gc3_ir_update_hasdep(p);
    s = gc3_verify(p, NULL, &diag);
    CHECK(s == GC3_ERR_VERIFY && gc3_diag_contains(&diag, "rank 0 tb 0 step 0 (rrc) writes its input buffer, which "
                                                          "reduce's non-root ranks may only read (root 1)"),
          "reduce non-root writing its input: %s (%s)", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    p->gpus[0].tbs[0].steps[0].dstbuf = GC3_BUF_OUTPUT;
    s                                 = gc3_verify(p, NULL, &diag);
    CHECK(s == GC3_ERR_VERIFY && gc3_diag_contains(&diag, "rank 0 tb 0 step 0 (rrc) writes its output buffer, which "
                                                          "reduce's non-root ranks do not have (root 1)"),
          "reduce non-root writing its output: %s (%s)", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    gc3_ir_program_destroy(p);
}

static gc3_ir_program_t *read_text(const char *text, gc3_diag_t *diag)
{
    gc3_ir_program_t *p = NULL;
    (void)gc3_ir_read_memory(text, strlen(text), "mem.xml", diag, &p);
    return p;
}

static void test_xml(void)
{
    gc3_diag_t diag;

    gc3_diag_init(&diag);
    for (size_t a = 0; a < sizeof(rooted_algos) / sizeof(rooted_algos[0]); a++) {
        for (int inplace = 0; inplace <= 1; inplace++) {
            gc3_ir_program_t *p = gen(rooted_algos[a], 5, 3, inplace, 2, 1, GC3_PROTO_SIMPLE), *q = NULL, *o = NULL;
            char             *text = NULL;
            size_t            len  = 0;
            FILE             *f;
            if (p == NULL) {
                continue;
            }
            f = open_memstream(&text, &len);
            CHECK_OK(gc3_ir_write_stream(p, f));
            fclose(f);
            CHECK(strstr(text, " root=\"3\"") != NULL, "%s: no root=\"3\" in the file", p->name);
            q = read_text(text, &diag);
            CHECK(q != NULL && gc3_ir_equal(p, q) && q->root == 3 && gc3_ir_hash(p) == gc3_ir_hash(q),
                  "%s: read back differs (%s)", p->name, diag.count ? diag.msgs[0] : "");
            o = gen(rooted_algos[a], 5, 2, inplace, 2, 1, GC3_PROTO_SIMPLE);
            if (o != NULL) {
                free(o->name);
                o->name = strdup(p->name); /* the same but for the root (and its steps) */
                CHECK(gc3_ir_hash(o) != gc3_ir_hash(p) && !gc3_ir_equal(o, p), "%s: roots 2 and 3 hash the same",
                      p->name);
            }
            gc3_ir_program_destroy(o);
            gc3_ir_program_destroy(q);
            gc3_ir_program_destroy(p);
            free(text);
        }
    }
    gc3_diag_cleanup(&diag);
    {
        /* MSCCL's spelling, a root; a missing, out-of-range or misplaced root is an error naming it */
        const char *ok =
            "<algo name=\"b\" nchunksperloop=\"1\" ngpus=\"2\" coll=\"broadcast\" root=\"1\" proto=\"Simple\">"
            "<gpu id=\"0\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\"><tb id=\"0\" send=\"-1\" recv=\"1\" "
            "chan=\"0\"><step s=\"0\" type=\"r\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"0\" "
            "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/></tb></gpu>"
            "<gpu id=\"1\" i_chunks=\"1\" o_chunks=\"1\" s_chunks=\"0\"><tb id=\"0\" send=\"0\" recv=\"-1\" "
            "chan=\"0\"><step s=\"0\" type=\"s\" srcbuf=\"i\" srcoff=\"0\" dstbuf=\"o\" dstoff=\"-1\" "
            "cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/><step s=\"1\" type=\"cpy\" srcbuf=\"i\" "
            "srcoff=\"0\" dstbuf=\"o\" dstoff=\"0\" cnt=\"1\" depid=\"-1\" deps=\"-1\" hasdep=\"0\"/></tb>"
            "</gpu></algo>";
        char              buf[2048];
        gc3_ir_program_t *p = read_text(ok, &diag);
        CHECK(p != NULL && p->coll == GC3_COLL_BCAST && p->root == 1, "broadcast root 1: %s",
              diag.count ? diag.msgs[0] : "");
        if (p != NULL) {
            CHECK_OK(gc3_verify(p, NULL, &diag));
            gc3_oracle_check(p, GC3_DT_INT32, GC3_OP_SUM, 5, 0, 8);
        }
        gc3_ir_program_destroy(p);
        gc3_diag_cleanup(&diag);
        const struct {
            const char *from, *to, *msg;
        } bad[] = {
            { " root=\"1\"", "", "is a rooted collective: it needs root=\"R\", the rank (0 to 1) it was compiled for" },
            { " root=\"1\"", " root=\"2\"", "<algo root=\"2\">: expected an integer in [-1, 1]" },
            { "coll=\"broadcast\"", "coll=\"allgather\"", "<algo root=\"1\">, but allgather has no root" },
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
            const char *at = strstr(ok, bad[i].from);
            snprintf(buf, sizeof(buf), "%.*s%s%s", (int)(at - ok), ok, bad[i].to, at + strlen(bad[i].from));
            p = read_text(buf, &diag);
            CHECK(p == NULL && gc3_diag_contains(&diag, bad[i].msg), "case %zu: %s", i,
                  diag.count ? diag.msgs[0] : "read");
            gc3_ir_program_destroy(p);
            gc3_diag_cleanup(&diag);
        }
    }
    {
        gc3_coll_t c;
        char       names[256];
        CHECK(gc3_coll_from_name("bcast", &c) == GC3_OK && c == GC3_COLL_BCAST &&
                  gc3_coll_from_name("Broadcast", &c) == GC3_OK && c == GC3_COLL_BCAST &&
                  gc3_coll_from_name("reduce", &c) == GC3_OK && c == GC3_COLL_REDUCE,
              "bcast/reduce spellings");
        gc3_coll_mpi_names(names, sizeof(names));
        CHECK(strcmp(names, "allreduce, alltoall, allgather, reduce_scatter_block, bcast, reduce, gather, scatter, "
                            "scan, exscan") == 0,
              "names: %s", names);
    }
}

static void test_rules(void)
{
    gc3_rules_t      *R = NULL;
    gc3_diag_t        diag;
    const gc3_rule_t *r;

    gc3_diag_init(&diag);
    CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
    if (R == NULL) {
        return;
    }
    /* 4 GPUs on NVLink: the measured rows (gc3-autotune on 4 x H200) */
    r = gc3_rules_match_call(R, GC3_COLL_BCAST, 1, 4, GC3_LINK_NVLINK, 131072, 4, 0);
    CHECK(r && strcmp(r->algo, "bcast_direct") == 0 && r->proto != GC3_PROTO_LL && r->instances == 4 && r->no_zc,
          "bcast 4 GPUs 128K: %s", r ? r->algo : "-");
    r = gc3_rules_match_call(R, GC3_COLL_BCAST, 1, 4, GC3_LINK_NVLINK, 128, 4, 0);
    CHECK(r && strcmp(r->algo, "bcast_direct") == 0 && r->proto == GC3_PROTO_LL, "bcast 4 GPUs 128: %s",
          r ? r->algo : "-");
    r = gc3_rules_match_call(R, GC3_COLL_REDUCE, 1, 4, GC3_LINK_NVLINK, 1u << 30, 4, 0);
    CHECK(r && strcmp(r->algo, "reduce_ring") == 0 && r->channels == 16 && r->instances == 4 && r->no_zc,
          "reduce 4 GPUs 1G");
    /* other shapes: the generic rows */
    r = gc3_rules_match_call(R, GC3_COLL_BCAST, 1, 8, GC3_LINK_NVLINK, 131072, 8, 0);
    CHECK(r && strcmp(r->algo, "bcast_direct") == 0 && r->proto == GC3_PROTO_LL, "bcast 8 GPUs 128K: %s",
          r ? r->algo : "-");
    r = gc3_rules_match_call(R, GC3_COLL_BCAST, 1, 8, GC3_LINK_NVLINK, 131073, 8, 1);
    CHECK(r && strcmp(r->algo, "bcast_ring") == 0 && r->channels == 2, "bcast 128K+1: %s", r ? r->algo : "-");
    /* the host backend runs the ring at every size (its LL direct plan was slower on CPUs) */
    r = gc3_rules_match_call(R, GC3_COLL_REDUCE, 1, 3, GC3_LINK_HOST, 8, 3, 0);
    CHECK(r && strcmp(r->algo, "reduce_ring") == 0, "reduce host 8: %s", r ? r->algo : "-");
    r = gc3_rules_match_call(R, GC3_COLL_REDUCE, 1, 3, GC3_LINK_HOST, 65537, 3, 0);
    CHECK(r && strcmp(r->algo, "reduce_ring") == 0, "reduce host 64K+1: %s", r ? r->algo : "-");
    r = gc3_rules_match_call(R, GC3_COLL_REDUCE, 1, 8, GC3_LINK_NVLINK, 1u << 30, 8, 0);
    CHECK(r && strcmp(r->algo, "reduce_ring") == 0 && r->channels == 8 && r->instances == 4, "reduce 8 GPUs 1G");
    CHECK(gc3_rules_match_call(R, GC3_COLL_BCAST, 2, 4, GC3_LINK_NVLINK, 8, 8, 0) == NULL, "no bcast rule for 2 nodes");
    if (r != NULL) {
        /* the rule's program for a call's root, and a root the communicator does not have */
        for (int root = 0; root <= 4; root++) {
            gc3_rule_target_t t = {
                .ranks = 4, .nodes = 1, .inplace = root % 2, .slots = 4, .max_blocks = 1 << 20, .root = root
            };
            gc3_rule_made_t   made;
            gc3_ir_program_t *p = NULL;
            gc3_status_t      s = gc3_rule_program(r, &t, &diag, &p, &made);
            if (root < 4) {
                CHECK(s == GC3_OK && p && p->root == root && p->coll == GC3_COLL_REDUCE, "root %d: %s", root,
                      diag.count ? diag.msgs[0] : "");
                if (p != NULL) {
                    gc3_oracle_check(p, GC3_DT_FLOAT32, GC3_OP_SUM, (size_t)p->nchunksperloop, t.inplace, 4);
                }
            } else {
                CHECK(s == GC3_ERR_INVALID_PARAM && p == NULL &&
                          gc3_diag_contains(&diag, "reduce_ring: root 4 is not a rank of 4 (0 to 3)"),
                      "root 4 of 4: %s", diag.count ? diag.msgs[0] : gc3_status_string(s));
            }
            gc3_ir_program_destroy(p);
            gc3_diag_cleanup(&diag);
        }
    }
    /* gather and scatter: direct on NVLink (LL small), the chain on PCIe from 64K, direct on the host; the
       rule's program for every root serves the root's in-place call and everyone's out-of-place one */
    for (int g = 0; g < 2; g++) {
        const gc3_coll_t c      = g ? GC3_COLL_SCATTER : GC3_COLL_GATHER;
        const char      *direct = g ? "scatter_direct" : "gather_direct", *ring = g ? "scatter_ring" : "gather_ring";
        r = gc3_rules_match_call(R, c, 1, 4, GC3_LINK_NVLINK, 4096, 4, 0);
        CHECK(r && strcmp(r->algo, direct) == 0 && r->proto == GC3_PROTO_LL, "%s 4K: %s", direct, r ? r->algo : "-");
        r = gc3_rules_match_call(R, c, 1, 8, GC3_LINK_PCIE, 1u << 20, 8, 0);
        CHECK(r && strcmp(r->algo, ring) == 0, "%s pcie 1M: %s", ring, r ? r->algo : "-");
        r = gc3_rules_match_call(R, c, 1, 3, GC3_LINK_HOST, 1u << 20, 3, 0);
        CHECK(r && strcmp(r->algo, direct) == 0, "%s host 1M: %s", direct, r ? r->algo : "-");
        r = gc3_rules_match_call(R, c, 1, 5, GC3_LINK_NVLINK, 1u << 24, 5, 0);
        CHECK(r && strcmp(r->algo, direct) == 0 && r->channels == 4 && r->chunks_per_peer == (g ? 16 : 4) && r->no_zc,
              "%s 16M (its calls carry tables: never zero-copy): %s", direct, r ? r->algo : "-");
        /* 2 GPUs on NVLink: 8 instances above 1M (doc/measurements/gather-scan-shapes-1xh100.md), else 2; scatter on
           more ranks: 16 chunks a peer above 8M, the root's whole buffer (scatter-fifo-loops-1xh100.md) */
        static const struct {
            int      ranks;
            unsigned bytes;
            int      instances, chunks[2]; /* chunks a peer: gather, scatter */
        } want[] = {
            { 2, 1u << 20, 2, { 4, 4 } }, { 2, (1u << 20) + 1, 8, { 4, 4 } },  { 2, 1u << 24, 8, { 4, 4 } },
            { 4, 8u << 20, 2, { 4, 4 } }, { 4, (8u << 20) + 1, 2, { 4, 16 } }, { 4, 1u << 24, 2, { 4, 16 } },
        };
        for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
            const gc3_rule_t *q =
                gc3_rules_match_call(R, c, 1, want[k].ranks, GC3_LINK_NVLINK, want[k].bytes, want[k].ranks, 0);
            CHECK(q && strcmp(q->algo, direct) == 0 && q->channels == 4 && q->chunks_per_peer == want[k].chunks[g] &&
                      q->no_zc && q->instances == want[k].instances,
                  "%s %d ranks %u bytes: %s x%d, %d chunks", direct, want[k].ranks, want[k].bytes, q ? q->algo : "-",
                  q ? q->instances : 0, q ? q->chunks_per_peer : 0);
        }
        for (int root = 0; r != NULL && root < 5; root++) {
            gc3_rule_target_t t = {
                .ranks = 5, .nodes = 1, .inplace = 0, .slots = 4, .max_blocks = 1 << 20, .root = root
            };
            gc3_rule_made_t   made;
            gc3_ir_program_t *p = NULL;
            gc3_status_t      s = gc3_rule_program(r, &t, &diag, &p, &made);
            CHECK(s == GC3_OK && p && p->root == root && p->coll == c && p->inplace && p->outofplace,
                  "%s root %d: both kinds: %s", direct, root, diag.count ? diag.msgs[0] : "");
            if (p != NULL) {
                gc3_oracle_check(p, GC3_DT_FLOAT32, GC3_OP_SUM, (size_t)p->nchunksperloop, 0, 4);
                gc3_oracle_check(p, GC3_DT_INT8, GC3_OP_SUM, (size_t)p->nchunksperloop * 3, 1, 2);
            }
            gc3_ir_program_destroy(p);
            gc3_diag_cleanup(&diag);
        }
    }
    gc3_rules_destroy(R);
    R = NULL;
    /* lines of a site's file; a wrong collective lists the names from the table */
    CHECK_OK(
        gc3_rules_parse("reduce 1 * * * reduce_ring channels=2\nbroadcast 1 * * * bcast_direct\n", "site", &diag, &R));
    CHECK(R && R->n == 2 && R->rules[0].coll == GC3_COLL_REDUCE && R->rules[1].coll == GC3_COLL_BCAST &&
              R->rules[0].root == -1,
          "site rules");
    gc3_rules_destroy(R);
    R = NULL;
    CHECK(gc3_rules_parse("alltoallw 1 * * * bcast_ring\nbcast 1 * * * reduce_ring\n", "bad", &diag, &R) != GC3_OK,
          "bad");
    CHECK(gc3_diag_contains(&diag, "bad:1: unknown collective 'alltoallw' (allreduce, alltoall, allgather, "
                                   "reduce_scatter_block, bcast, reduce, gather, scatter, scan, exscan or *)") &&
              gc3_diag_contains(&diag, "bad:2: algorithm 'reduce_ring' is for reduce, not bcast"),
          "bad lines: %s", diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    gc3_rules_destroy(R);
    R = NULL;
    {
        /* an algorithm directory's rooted program serves its own root */
        char              dir[] = "/tmp/gc3_rooted_XXXXXX", path[512];
        gc3_ir_program_t *p     = gen("bcast_ring", 4, 1, 0, 1, 1, GC3_PROTO_SIMPLE);
        int               added = 0;
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
        snprintf(path, sizeof(path), "%s/bcast4_root1.xml", dir);
        if (p != NULL) {
            CHECK_OK(gc3_ir_write_file(p, path, &diag));
        }
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, dir, &diag, &added));
        CHECK(added == 1, "%d rules added (%s)", added, diag.count ? diag.msgs[0] : "");
        r = gc3_rules_match_root(R, GC3_COLL_BCAST, 1, 4, GC3_LINK_NVLINK, 1 << 20, 4, 0, 1);
        CHECK(r && r->xml != NULL && r->root == 1, "root 1: the file's rule");
        r = gc3_rules_match_root(R, GC3_COLL_BCAST, 1, 4, GC3_LINK_NVLINK, 1 << 20, 4, 0, 2);
        CHECK(r && r->xml == NULL && strcmp(r->algo, "bcast_direct") == 0, "root 2: a generator's rule");
        r = gc3_rules_match_root(R, GC3_COLL_BCAST, 1, 4, GC3_LINK_NVLINK, 1 << 20, 4, 0, 1);
        if (r != NULL) {
            gc3_rule_target_t t = { .ranks = 4, .nodes = 1, .inplace = 0, .slots = 4, .max_blocks = 64, .root = 2 };
            gc3_rule_made_t   made;
            gc3_ir_program_t *q = NULL;
            CHECK(gc3_rule_program(r, &t, &diag, &q, &made) == GC3_ERR_UNSUPPORTED && q == NULL &&
                      gc3_diag_contains(&diag, "a program for root 1, the call's root is 2"),
                  "the file's program for another root: %s", diag.count ? diag.msgs[0] : "made");
        }
        unlink(path);
        rmdir(dir);
        gc3_ir_program_destroy(p);
        gc3_rules_destroy(R);
        gc3_diag_cleanup(&diag);
    }
    {
        /* the component keys every reduce call out of place on every rank (the root alone knows whether
         * it calls in place): a directory's in-place reduce program serves it as its copy-first form,
         * which serves in-place calls too, and so does the generator's out-of-place program (a program
         * serving one kind only is refused alike on every rank: gc3_rule_program) */
        char              dir[] = "/tmp/gc3_rooted_XXXXXX", path[512];
        gc3_ir_program_t *p     = gen("reduce_ring", 4, 1, 1, 1, 1, GC3_PROTO_SIMPLE);
        int               added = 0;
        CHECK(mkdtemp(dir) != NULL, "mkdtemp");
        snprintf(path, sizeof(path), "%s/reduce4_root1_inplace.xml", dir);
        if (p != NULL) {
            CHECK_OK(gc3_ir_write_file(p, path, &diag));
        }
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, dir, &diag, &added));
        r = gc3_rules_match_root(R, GC3_COLL_REDUCE, 1, 4, GC3_LINK_NVLINK, 1 << 20, 4, 0, 1);
        CHECK(added == 1 && r && r->xml != NULL, "the file's rule (%d added)", added);
        if (r != NULL && r->xml != NULL) {
            gc3_rule_target_t t = { .ranks = 4, .nodes = 1, .inplace = 0, .slots = 4, .max_blocks = 64, .root = 1 };
            gc3_rule_made_t   made;
            gc3_ir_program_t *q = NULL;
            CHECK(gc3_rule_program(r, &t, &diag, &q, &made) == GC3_OK && q && made.copied && q->inplace &&
                      q->outofplace,
                  "an in-place reduce file serves both kinds: %s", diag.count ? diag.msgs[diag.count - 1] : "");
            if (q != NULL) {
                gc3_oracle_check(q, GC3_DT_FLOAT32, GC3_OP_SUM, (size_t)q->nchunksperloop, 0, 4);
                gc3_oracle_check(q, GC3_DT_FLOAT32, GC3_OP_SUM, (size_t)q->nchunksperloop, 1, 4);
            }
            gc3_ir_program_destroy(q);
        }
        r = gc3_rules_match_root(R, GC3_COLL_REDUCE, 1, 4, GC3_LINK_NVLINK, 1 << 20, 4, 0, 2);
        if (r != NULL) {
            gc3_rule_target_t t = { .ranks = 4, .nodes = 1, .inplace = 0, .slots = 4, .max_blocks = 64, .root = 2 };
            gc3_rule_made_t   made;
            gc3_ir_program_t *q = NULL;
            CHECK(gc3_rule_program(r, &t, &diag, &q, &made) == GC3_OK && q && q->inplace && q->outofplace,
                  "the generator's reduce serves both kinds: %s", diag.count ? diag.msgs[diag.count - 1] : "");
            gc3_ir_program_destroy(q);
        }
        unlink(path);
        rmdir(dir);
        gc3_ir_program_destroy(p);
        gc3_rules_destroy(R);
        gc3_diag_cleanup(&diag);
    }
}

/* Zero-copy marking (what the runtime and the zero-copy reference run use): a reduce's non-root
 * never gets its rrs homed into an output it does not have. */
static void test_zc(void)
{
    for (int inplace = 0; inplace <= 1; inplace++) {
        gc3_ir_program_t   *p    = gen("reduce_ring", 4, 2, inplace, 2, 1, GC3_PROTO_SIMPLE);
        gc3_flat_program_t *flat = NULL;
        int                 rrs  = 0;
        if (p == NULL || gc3_flat_create(p, &flat) != GC3_OK) {
            CHECK(0, "reduce_ring flat");
            gc3_ir_program_destroy(p);
            continue;
        }
        CHECK(flat->root == 2, "flat root %d", flat->root);
        for (int r = 0; r < 4; r++) {
            gc3_zc_stats_t         st;
            const gc3_flat_rank_t *fr = &gc3_flat_ranks(flat)[r];
            (void)gc3_flat_zc_mark(flat, r, 1, &st);
            CHECK(r == 2 || st.homed == 0, "rank %d: %d rrs homed", r, st.homed);
            for (int t = fr->tb_begin; t < fr->tb_begin + fr->ntbs; t++) {
                const gc3_flat_tb_t *tb = &gc3_flat_tbs(flat)[t];
                for (int s = 0; s < tb->nsteps; s++) {
                    const gc3_flat_step_t *fs = &gc3_flat_steps(flat)[tb->step_begin + s];
                    rrs += fs->type == GC3_STEP_RRS;
                    CHECK(r == 2 || !(gc3_step_flags((gc3_step_type_t)fs->type) & GC3_STEP_F_WRITE_DST) ||
                              fs->dstbuf != GC3_BUF_OUTPUT,
                          "rank %d writes its output after marking", r);
                }
            }
        }
        CHECK(rrs > 0, "no rrs left on the chain");
        gc3_flat_destroy(flat);
        gc3_ir_program_destroy(p);
    }
}

/* One plan for every root (gc3_exec_params_t.relabel): every generator's root-0 program, 2 to 8 ranks, 1 and
 * 4 channels. For every shift s, every block of every program rank p (played by rank (p + s) mod n) finds its
 * connection, peers shifted by s, in the union layouts of both ends; every rank's region has no two things at
 * one place; a chain's ranks talk to their two neighbours only, whatever the root. */
static int overlap_cmp(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

static void test_union_layouts(void)
{
    int checked = 0;
    for (size_t a = 0; a < sizeof(rooted_algos) / sizeof(rooted_algos[0]); a++) {
        for (int R = 2; R <= 8; R++) {
            for (int ch = 1; ch <= 4; ch += 3) {
                gc3_ir_program_t   *p = gen(rooted_algos[a], R, 0, 0, ch, 1, GC3_PROTO_SIMPLE);
                gc3_flat_program_t *f = NULL;
                gc3_rt_layout_t     U[8];
                const int           ring = strstr(rooted_algos[a], "_ring") != NULL;
                if (p == NULL || gc3_flat_create(p, &f) != GC3_OK) {
                    CHECK(0, "%s R=%d: no flat program", rooted_algos[a], R);
                    gc3_ir_program_destroy(p);
                    continue;
                }
                for (int r = 0; r < R; r++) {
                    CHECK_OK(gc3_rt_layout_union(f, r, 4, 4096, ch > 1, &U[r]));
                }
                for (int s = 0; s < R; s++) {
                    for (int q = 0; q < R; q++) {
                        const gc3_flat_rank_t *fr = &gc3_flat_ranks(f)[q];
                        const int              me = (q + s) % R;
                        for (int t = 0; t < fr->ntbs; t++) {
                            const gc3_flat_tb_t *tb = &gc3_flat_tbs(f)[fr->tb_begin + t];
                            if (gc3_flat_peer_receiver(f, q, t) >= 0) {
                                const int to = (tb->send + s) % R;
                                CHECK(gc3_rt_layout_sconn(&U[me], to, tb->chan) >= 0 &&
                                          gc3_rt_layout_rconn(&U[to], me, tb->chan) >= 0,
                                      "%s R=%d shift %d: rank %d -> %d channel %d not in the unions", rooted_algos[a],
                                      R, s, me, to, tb->chan);
                            }
                            if (gc3_flat_peer_sender(f, q, t) >= 0) {
                                const int from = (tb->recv + s) % R;
                                CHECK(gc3_rt_layout_rconn(&U[me], from, tb->chan) >= 0 &&
                                          gc3_rt_layout_sconn(&U[from], me, tb->chan) >= 0,
                                      "%s R=%d shift %d: rank %d <- %d channel %d not in the unions", rooted_algos[a],
                                      R, s, me, from, tb->chan);
                            }
                            checked++;
                        }
                    }
                }
                for (int r = 0; r < R; r++) { /* [start, end) of every line and slot run of the region, apart */
                    const gc3_rt_layout_t *L    = &U[r];
                    const int64_t          fifo = (int64_t)gc3_rt_round(4 * 4096, GC3_RT_LINE);
                    int64_t                iv[2 * (2 * 64 + 3 * 64)];
                    int                    n = 0, apart = 1;
                    for (int b = 0; b < L->nblocks; b++) {
                        iv[2 * n] = L->sem_off[b], iv[2 * n + 1] = L->sem_off[b] + GC3_RT_LINE, n++;
                        iv[2 * n] = L->loops_off[b], iv[2 * n + 1] = L->loops_off[b] + GC3_RT_LINE, n++;
                    }
                    for (int i = 0; i < L->nrconn; i++) {
                        iv[2 * n] = L->rconn[i].off, iv[2 * n + 1] = L->rconn[i].off + GC3_RT_LINE, n++;
                        if (!L->pooled) {
                            iv[2 * n] = L->rconn[i].slot, iv[2 * n + 1] = L->rconn[i].slot + fifo, n++;
                        }
                        CHECK(!ring || L->rconn[i].peer == (r + R - 1) % R || L->rconn[i].peer == (r + 1) % R,
                              "%s R=%d: rank %d receives from %d", rooted_algos[a], R, r, L->rconn[i].peer);
                    }
                    for (int i = 0; i < L->nsconn; i++) {
                        iv[2 * n] = L->sconn[i].off, iv[2 * n + 1] = L->sconn[i].off + GC3_RT_LINE, n++;
                    }
                    qsort(iv, (size_t)n, 2 * sizeof(int64_t), overlap_cmp);
                    for (int i = 1; i < n; i++) {
                        apart = apart && iv[2 * i] >= iv[2 * i - 1];
                    }
                    CHECK(apart && (n == 0 || iv[2 * n - 1] <= (int64_t)L->bytes) && L->nrconn <= (R - 1) * ch,
                          "%s R=%d rank %d: the region's %d places overlap or pass its %zu bytes", rooted_algos[a], R,
                          r, n, L->bytes);
                    gc3_rt_layout_free(&U[r]);
                }
                gc3_flat_destroy(f);
                gc3_ir_program_destroy(p);
            }
        }
    }
    CHECK(checked > 1000, "%d blocks checked", checked);
}

int main(void)
{
    test_generators();
    test_union_layouts();
    test_bad_root();
    test_access();
    test_xml();
    test_rules();
    test_zc();
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_rooted");
}
