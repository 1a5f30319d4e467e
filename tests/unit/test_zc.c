/* Zero-copy sends (gc3_flat_zc_mark): which sends of the built-in algorithms and of MSCCL files may
 * leave their data in place, and the reference executor run that way (receives as late as possible,
 * a send whose data changed before it was read is an error) against the direct computation. */
#include <stdlib.h>
#include <string.h>
#include "gc3_algorithms.h"
#include "gc3_refexec.h"
#include "gc3_test.h"
#include "gc3_oracle.h"

/* Marking of every rank of p: sums over ranks. */
static gc3_zc_stats_t mark_all(const gc3_ir_program_t *p)
{
    gc3_flat_program_t *f   = NULL;
    gc3_zc_stats_t      sum = { 0 };

    CHECK_OK(gc3_flat_create(p, &f));
    for (int r = 0; f != NULL && r < p->ngpus; r++) {
        gc3_zc_stats_t st;
        (void)gc3_flat_zc_mark(f, r, 1, &st);
        sum.sends += st.sends;
        sum.oop += st.oop;
        sum.ip += st.ip;
        sum.homed += st.homed;
        sum.push_oop += st.push_oop;
        sum.push_ip += st.push_ip;
    }
    gc3_flat_destroy(f);
    return sum;
}

static gc3_ir_program_t *gen(const char *name, int R, int inplace, int instances, int channels)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *p = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, R);
    ap.inplace   = inplace;
    ap.instances = instances;
    ap.channels  = channels;
    if (gc3_algo_find(name)->uses_nodes) {
        ap.nodes         = 2;
        ap.gpus_per_node = R / 2;
    }
    CHECK(gc3_algo_generate(name, &ap, &diag, NULL, &p) == GC3_OK, "%s R=%d: %s", name, R,
          diag.count ? diag.msgs[0] : "");
    gc3_diag_cleanup(&diag);
    return p;
}

/* What the marking must find in the programs whose shape is known. */
static void test_known(void)
{
    gc3_ir_program_t *p;
    gc3_zc_stats_t    st;

    /* alltoall, out of place: every send is of the input, which nothing writes */
    p  = gen("direct", 4, 0, 2, 1);
    st = mark_all(p);
    CHECK(st.sends == 4 * 4 * 2 - 4 * 2 || st.sends == 4 * 4 * 2, "direct: %d sends", st.sends);
    CHECK(st.oop == st.sends && st.homed == 0, "direct out of place: %d of %d sends marked", st.oop, st.sends);
    gc3_ir_program_destroy(p);

    /* ring allreduce: the first send (input), every rrs (homed into the output chunk its allgather
     * writes later), the last reduction and every forward of the allgather */
    for (int R = 2; R <= 8; R *= 2) {
        p  = gen("ring", R, 0, 2, 2);
        st = mark_all(p);
        CHECK(st.homed == R * 2 * 2 * (R - 2), "ring R=%d: %d rrs homed, %d expected", R, st.homed,
              R * 2 * 2 * (R - 2));
        CHECK(st.oop == st.sends, "ring R=%d out of place: %d of %d sends marked", R, st.oop, st.sends);
        gc3_ir_program_destroy(p);
        p  = gen("ring", R, 1, 2, 2); /* in place: the chunk an rrs reads is the one it keeps its result in */
        st = mark_all(p);
        CHECK(st.homed == R * 2 * 2 * (R - 2) && st.ip == st.sends,
              "ring R=%d in place: %d homed, %d of %d sends marked", R, st.homed, st.ip, st.sends);
        gc3_ir_program_destroy(p);
    }
    /* reduce-scatter: partial sums have no place in the output (a slice): only the last sends */
    p  = gen("reduce_scatter_ring", 4, 0, 2, 1);
    st = mark_all(p);
    CHECK(st.homed == 0 && st.oop == st.sends / 3, "reduce_scatter_ring: %d of %d marked, %d homed", st.oop, st.sends,
          st.homed);
    gc3_ir_program_destroy(p);

    /* all-pairs: the sends of the input and of the reduced chunk (both stable out of place) */
    p  = gen("allpairs", 4, 0, 1, 1);
    st = mark_all(p);
    CHECK(st.oop == st.sends, "allpairs out of place: %d of %d sends marked", st.oop, st.sends);
    /* the push form: the sends whose receiver only copies (the allgather half), never a reduction's */
    CHECK(st.push_oop == st.sends / 2 && st.push_ip == 0, "allpairs: %d of %d sends pushed", st.push_oop, st.sends);
    gc3_ir_program_destroy(p);
}

/* An empty allreduce program of 2 ranks of one chunk each (input, output, scratch), Simple, for the
 * hand-written hazards below; in place or out of place. */
static gc3_ir_program_t *tiny(const char *name, int inplace)
{
    gc3_ir_program_t *p = NULL;
    CHECK_OK(gc3_ir_program_create(name, GC3_COLL_ALLREDUCE, 2, 1, &p));
    if (p == NULL) {
        return NULL;
    }
    p->inplace    = inplace;
    p->outofplace = !inplace;
    p->proto      = GC3_PROTO_SIMPLE;
    p->nchannels  = 1;
    for (int r = 0; r < 2; r++) {
        p->gpus[r].i_chunks = 1;
        p->gpus[r].o_chunks = 1;
        p->gpus[r].s_chunks = 1;
    }
    return p;
}

/* Which sends may push (the push form: the sender writes into the receiver's destination at the send):
 * every one whose receiver copies or reduces into its input or output, where nothing else there touches
 * it in between, and a reduction's operand is elsewhere. Counted by hand from the programs. */
static void test_known_push(void)
{
    struct {
        const char *algo;
        int         inplace, R;
        int         num, den; /* pushed: sends * num / den */
    } known[] = {
        { "direct", 0, 4, 1, 1 },         /* alltoall out of place: every send into the output */
        { "direct", 1, 4, 0, 1 },         /* in place: through scratch */
        { "allgather_ring", 0, 4, 1, 1 }, /* allgather: every forward */
        { "allgather_ring", 1, 5, 1, 1 },
        { "bcast_ring", 0, 4, 1, 1 }, /* the chain */
        { "bcast_direct", 1, 3, 1, 1 },
        { "ring", 0, 4, 1, 1 }, /* allreduce out of place: partial sums land in the receiver's home */
        { "ring", 1, 8, 1, 2 }, /* in place: the allgather half (a partial sum would land on the operand) */
        { "reduce_scatter_ring", 0, 4, 1, 3 }, /* each chunk's last hop, into the output (3 hops) */
        { "reduce_ring", 0, 4, 1, 3 },         /* the last hop, into the root's output */
        { "reduce_direct", 0, 4, 0, 1 },       /* into the root's scratch */
    };
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
        gc3_ir_program_t *p = gen(known[i].algo, known[i].R, known[i].inplace, 2, 1);
        gc3_zc_stats_t    st;
        int               pushed;
        if (p == NULL) {
            continue;
        }
        st     = mark_all(p);
        pushed = known[i].inplace ? st.push_ip : st.push_oop;
        CHECK(pushed == st.sends * known[i].num / known[i].den && (known[i].inplace ? st.push_oop : st.push_ip) == 0,
              "%s R=%d %s: %d of %d sends pushed", known[i].algo, known[i].R,
              known[i].inplace ? "in place" : "out of place", pushed, st.sends);
        gc3_ir_program_destroy(p);
    }
}

/* A push that races with the receiver's read of its destination: not marked, and the unchecked push
 * (zero_copy 3) of the reference executor catches it. */
static void test_push_hazard(void)
{
    gc3_ir_program_t *p = NULL;
    gc3_ir_tb_t      *tb;
    gc3_zc_stats_t    st;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    if ((p = tiny("push_hazard", 0)) == NULL) {
        return;
    }
    /* rank 0 sends its input chunk to rank 1's output chunk 0 and receives rank 1's into scratch; rank
     * 1's other block sends that same output chunk, in no order with the receive */
    CHECK_OK(gc3_ir_add_tb(p, 0, 1, -1, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_INPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_tb(p, 0, -1, 1, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RECV, GC3_BUF_NONE, -1, GC3_BUF_SCRATCH, 0, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_tb(p, 1, -1, 0, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RECV, GC3_BUF_NONE, -1, GC3_BUF_OUTPUT, 0, 1, -1, -1, NULL));
    CHECK_OK(gc3_ir_add_tb(p, 1, 0, -1, 0, &tb));
    CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_OUTPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
    gc3_ir_update_hasdep(p);
    st = mark_all(p);
    CHECK(st.sends == 2 && st.push_oop == 0, "racing push: %d of %d marked", st.push_oop, st.sends);
    {
        int32_t            in[2][4] = { { 1, 2, 3, 4 }, { 10, 20, 30, 40 } }, out[2][4] = { { 0 }, { 0 } };
        void              *i[2] = { in[0], in[1] }, *o[2] = { out[0], out[1] };
        gc3_refexec_args_t args = { GC3_DT_INT32, GC3_OP_SUM, 4, 0, 8, 1 };
        gc3_status_t       s    = gc3_refexec_run(p, &args, i, o, &diag);
        CHECK(s == GC3_OK, "the marked run: %s (%s)", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
        args.zero_copy = 3;
        s              = gc3_refexec_run(p, &args, i, o, &diag);
        CHECK(s == GC3_ERR_VERIFY && gc3_diag_contains(&diag, "touched it before the receiving step ran"),
              "unchecked push of a racing send: %s (%s)", gc3_status_string(s),
              diag.count ? diag.msgs[diag.count - 1] : "");
    }
    gc3_ir_program_destroy(p);
    gc3_diag_cleanup(&diag);
}

/* A valid program (the verifier's race check passes) where a push would overwrite a chunk its rank
 * sends in place before that send's reader read it: rank 1 sends output chunk 0 to rank 2, which reads
 * it only after a token from rank 0; rank 0 pushes into that chunk after a token from rank 1 that
 * follows the send, and before its own token to rank 2. The send of rank 0 must not be marked to push;
 * the marked run (pulls and pushes) ends as the copying one. */
static void test_push_after_pull(void)
{
    gc3_ir_program_t *p = NULL;
    gc3_ir_tb_t      *tb;
    gc3_zc_stats_t    st;
    gc3_diag_t        diag;
    /* rank, peer (send +, receive -), type, buffer, chunk, dep tb */
    static const int steps[][6] = {
        { 1, +2, GC3_STEP_SEND, GC3_BUF_OUTPUT, 0, -1 },  { 1, +0, GC3_STEP_SEND, GC3_BUF_INPUT, 1, 0 },
        { 1, -2, GC3_STEP_RECV, GC3_BUF_SCRATCH, 1, -1 }, { 1, -0, GC3_STEP_RECV, GC3_BUF_OUTPUT, 0, 2 },
        { 0, -1, GC3_STEP_RECV, GC3_BUF_SCRATCH, 0, -1 }, { 0, +1, GC3_STEP_SEND, GC3_BUF_INPUT, 0, 0 },
        { 0, +2, GC3_STEP_SEND, GC3_BUF_INPUT, 1, 1 },    { 2, -0, GC3_STEP_RECV, GC3_BUF_SCRATCH, 1, -1 },
        { 2, -1, GC3_STEP_RECV, GC3_BUF_SCRATCH, 0, 0 },  { 2, +1, GC3_STEP_SEND, GC3_BUF_SCRATCH, 0, 1 },
    };

    gc3_diag_init(&diag);
    CHECK_OK(gc3_ir_program_create("push_after_pull", GC3_COLL_ALLREDUCE, 3, 2, &p));
    if (p == NULL) {
        return;
    }
    p->inplace    = 1;
    p->outofplace = 0;
    p->proto      = GC3_PROTO_SIMPLE;
    p->nchannels  = 1;
    for (int r = 0; r < 3; r++) {
        p->gpus[r].i_chunks = p->gpus[r].o_chunks = p->gpus[r].s_chunks = 2;
    }
    /* one step per block; a receive from rank 0 is written -0: the sign is in steps[i][2] */
    for (size_t i = 0; i < sizeof(steps) / sizeof(steps[0]); i++) {
        const int send = steps[i][2] == GC3_STEP_SEND, peer = steps[i][1] < 0 ? -steps[i][1] : steps[i][1];
        CHECK_OK(gc3_ir_add_tb(p, steps[i][0], send ? peer : -1, send ? -1 : peer, 0, &tb));
        CHECK_OK(gc3_ir_add_step(tb, (gc3_step_type_t)steps[i][2], send ? steps[i][3] : GC3_BUF_NONE,
                                 send ? steps[i][4] : -1, send ? GC3_BUF_NONE : steps[i][3], send ? -1 : steps[i][4], 1,
                                 steps[i][5], steps[i][5] >= 0 ? 0 : -1, NULL));
    }
    gc3_ir_update_hasdep(p);
    st = mark_all(p);
    CHECK(st.push_ip == 0, "a push over a chunk left in place for its reader: %d sends marked to push", st.push_ip);
    {
        /* not an allreduce: the copying run is the oracle */
        int32_t out[2][3][8];
        for (int k = 0; k < 2; k++) {
            void              *io[3];
            gc3_refexec_args_t args = { GC3_DT_INT32, GC3_OP_SUM, 4, 1, 8, k };
            gc3_status_t       s;
            for (int r = 0; r < 3; r++) {
                for (int e = 0; e < 8; e++) {
                    out[k][r][e] = 100 * r + e;
                }
                io[r] = out[k][r];
            }
            s = gc3_refexec_run(p, &args, io, io, &diag);
            CHECK(s == GC3_OK, "push after pull, zero_copy %d: %s (%s)", k, gc3_status_string(s),
                  diag.count ? diag.msgs[diag.count - 1] : "");
        }
        CHECK(memcmp(out[0], out[1], sizeof(out[0])) == 0,
              "push after pull: the zero-copy run differs from the copying one");
    }
    gc3_ir_program_destroy(p);
    gc3_diag_cleanup(&diag);
}

/* A program whose send races with a later write of the same chunk must not be marked, and the
 * unchecked marking (zero_copy 2) of the reference executor must catch the hazard. */
static void test_hazard(void)
{
    /* rank 0 sends input chunk 0 to rank 1 (tb 0), and, in another block without any order, overwrites
     * its input chunk 0 in place... an input may not be written out of place; use in place: output
     * chunk 0 is input chunk 0 */
    gc3_ir_program_t *p = NULL;
    gc3_ir_tb_t      *tb;
    gc3_zc_stats_t    st;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    if ((p = tiny("hazard", 1)) == NULL) {
        return;
    }
    /* rank r: tb 0 sends output (= input) chunk 0 to the peer, tb 1 receives the peer's into scratch
     * and reduces it into output chunk 0: the reduction may run before the peer read our chunk */
    for (int r = 0; r < 2; r++) {
        CHECK_OK(gc3_ir_add_tb(p, r, 1 - r, -1, 0, &tb));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_OUTPUT, 0, GC3_BUF_NONE, -1, 1, -1, -1, NULL));
        CHECK_OK(gc3_ir_add_tb(p, r, -1, 1 - r, 0, &tb));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RECV, GC3_BUF_NONE, -1, GC3_BUF_SCRATCH, 0, 1, -1, -1, NULL));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RE, GC3_BUF_SCRATCH, 0, GC3_BUF_OUTPUT, 0, 1, -1, -1, NULL));
    }
    gc3_ir_update_hasdep(p);
    st = mark_all(p);
    CHECK(st.sends == 2 && st.ip == 0, "racing send: %d of %d marked for in-place calls", st.ip, st.sends);
    /* with the unchecked marking the reference executor sees the overwrite (the copying run is right) */
    {
        int32_t            buf[2][4] = { { 1, 2, 3, 4 }, { 10, 20, 30, 40 } };
        void              *io[2]     = { buf[0], buf[1] };
        gc3_refexec_args_t args      = { GC3_DT_INT32, GC3_OP_SUM, 4, 1, 8, 2 };
        gc3_status_t       s         = gc3_refexec_run(p, &args, io, io, &diag);
        CHECK(s == GC3_ERR_VERIFY && gc3_diag_contains(&diag, "zero-copy hazard"),
              "unchecked zero-copy of a racing send: %s (%s)", gc3_status_string(s), diag.count ? diag.msgs[0] : "");
    }
    gc3_ir_program_destroy(p);
    gc3_diag_cleanup(&diag);
}

/* Every built-in algorithm, marked and run zero-copy by the reference executor on random data. */
static void test_builtin(void)
{
    int cases = 0;
    for (int i = 0; i < gc3_algo_count(); i++) {
        const gc3_algo_t *a = gc3_algo_at(i);
        for (int R = 2; R <= 8; R++) {
            for (int inplace = 0; inplace <= 1; inplace++) {
                gc3_ir_program_t *p;
                if ((a->uses_nodes && (R % 2 != 0 || R < 4)) || (a->coll == GC3_COLL_CUSTOM && inplace)) {
                    continue;
                }
                p = gen(a->name, R, inplace, R == 4 && a->coll != GC3_COLL_CUSTOM ? 2 : 1,
                        R == 3 && (a->takes & GC3_ALGO_TAKES_CHANNELS) ? 2 : 1);
                if (p == NULL) {
                    continue;
                }
                for (int ip = 0; ip <= 1; ip++) {
                    const size_t counts[] = { (size_t)p->nchunksperloop * 3, (size_t)p->nchunksperloop * 64 };
                    if (ip ? !p->inplace : !p->outofplace) {
                        continue;
                    }
                    for (int k = 0; k < 2; k++) {
                        /* per rank (a buffer of one segment everywhere: allreduce, scan, custom, ...) or
                           per peer: whole chunks */
                        const gc3_coll_desc_t *d = gc3_coll_desc(p->coll);
                        size_t count = !d->in_per_rank && !d->out_per_rank ? counts[k] : counts[k] / (size_t)R;
                        gc3_oracle_check_zc(p, GC3_DT_INT32, GC3_OP_SUM, count, ip, 2, 1);
                        gc3_oracle_check_zc(p, GC3_DT_FLOAT64, GC3_OP_MAX, count, ip, 8, 1);
                        cases += 2;
                    }
                }
                gc3_ir_program_destroy(p);
            }
        }
    }
    CHECK(cases > 100, "only %d cases", cases);
    printf("test_zc: %d built-in cases run zero-copy by the reference executor\n", cases);
}

/* The MSCCL files and gc3's corpus programs, zero-copy. */
static void test_files(void)
{
    const char *files[] = {
        GC3_CORPUS "/valid/ring_allreduce_4.xml",
        GC3_CORPUS "/valid/allpairs_allreduce_4.xml",
        GC3_CORPUS "/valid/direct_alltoall_4.xml",
        GC3_CORPUS "/valid/ring_allgather_3.xml",
        GC3_CORPUS "/valid/ring_reduce_scatter_3.xml",
        GC3_CORPUS "/valid/legacy_ring_allreduce_3.xml",
        GC3_CORPUS "/msccl/allreduce-allpairs-4n-simple-48tb.xml",
        GC3_CORPUS "/msccl/allreduce-allpairs-8n-simple-56tb.xml",
        GC3_CORPUS "/msccl/allgather-ring-4n-inplace.xml",
        GC3_CORPUS "/msccl/reducescatter-ring-8n-inplace.xml",
    };
    int cases = 0, marked = 0;
    for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
        gc3_ir_program_t *p = NULL;
        CHECK_OK(gc3_ir_read_file(files[i], NULL, &p));
        if (p == NULL) {
            continue;
        }
        marked += mark_all(p).oop + mark_all(p).ip;
        for (int ip = 0; ip <= 1; ip++) {
            size_t count = (size_t)p->nchunksperloop * 5;
            if (ip ? !p->inplace : !p->outofplace) {
                continue;
            }
            if (p->coll != GC3_COLL_ALLREDUCE) {
                count = count / (size_t)p->ngpus;
            }
            gc3_oracle_check_zc(p, GC3_DT_INT32, GC3_OP_SUM, count, ip, 8, 1);
            cases++;
        }
        gc3_ir_program_destroy(p);
    }
    CHECK(cases >= 10 && marked > 0, "files: %d cases, %d sends marked", cases, marked);
    printf("test_zc: %d file cases, %d sends marked in them\n", cases, marked);
}

int main(void)
{
    test_known();
    test_known_push();
    test_hazard();
    test_push_hazard();
    test_push_after_pull();
    test_builtin();
    test_files();
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_zc");
}
