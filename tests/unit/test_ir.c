/* IR model, MSCCL XML round trip, robustness of the reader, flat form. */
#include <dirent.h>
#include <string.h>
#include "gc3_ir.h"
#include "gc3_test.h"

/* write -> read must give back an equal program */
static void check_round_trip(const gc3_ir_program_t *p, const char *what)
{
    char             *text = NULL;
    size_t            len  = 0;
    FILE             *mem  = open_memstream(&text, &len);
    gc3_ir_program_t *q    = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    CHECK_OK(gc3_ir_write_stream(p, mem));
    fclose(mem);
    CHECK_OK(gc3_ir_read_memory(text, len, what, &diag, &q));
    CHECK(q != NULL && gc3_ir_equal(p, q), "%s: write -> read is not the identity", what);
    if (q != NULL) {
        /* source differs by construction; everything else must match */
        gc3_ir_program_destroy(q);
    }
    gc3_diag_cleanup(&diag);
    free(text);
}

static void test_in_memory(void)
{
    gc3_ir_program_t *p;
    gc3_ir_tb_t      *tb;
    gc3_ir_step_t    *st;

    CHECK_OK(gc3_ir_program_create("mem <&> \"quoted\"", GC3_COLL_ALLTOALL, 2, 2, &p));
    p->proto     = GC3_PROTO_LL128;
    p->inplace   = 1;
    p->min_bytes = 17;
    p->max_bytes = 1ull << 40;
    for (int r = 0; r < 2; r++) {
        p->gpus[r].i_chunks = p->gpus[r].o_chunks = 2;
        p->gpus[r].s_chunks = 1;
        CHECK_OK(gc3_ir_add_tb(p, r, 1 - r, 1 - r, 0, &tb));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_SEND, GC3_BUF_INPUT, 1 - r, GC3_BUF_OUTPUT, r, 1, -1, -1, NULL));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_RECV, GC3_BUF_NONE, -1, GC3_BUF_OUTPUT, 1 - r, 1, -1, -1, &st));
        CHECK_OK(gc3_ir_add_tb(p, r, -1, -1, 0, &tb));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_CPY, GC3_BUF_INPUT, r, GC3_BUF_OUTPUT, r, 1, 0, 0, NULL));
        CHECK_OK(gc3_ir_add_step(tb, GC3_STEP_NOP, GC3_BUF_NONE, -1, GC3_BUF_NONE, -1, 0, -1, -1, NULL));
    }
    gc3_ir_update_hasdep(p);
    CHECK(p->gpus[0].tbs[0].steps[0].hasdep == 1 && p->gpus[0].tbs[0].steps[1].hasdep == 0, "hasdep not derived");
    check_round_trip(p, "in-memory program");
    /* a change anywhere breaks equality */
    {
        gc3_ir_program_t *q;
        char             *text = NULL;
        size_t            len  = 0;
        FILE             *mem  = open_memstream(&text, &len);
        gc3_ir_write_stream(p, mem);
        fclose(mem);
        CHECK_OK(gc3_ir_read_memory(text, len, "copy", NULL, &q));
        if (q != NULL) {
            CHECK(gc3_ir_hash(p) == gc3_ir_hash(q), "the hash of a read-back program differs");
            q->gpus[1].tbs[1].steps[0].dstoff = 0;
            CHECK(!gc3_ir_equal(p, q), "gc3_ir_equal misses a changed dstoff");
            CHECK(gc3_ir_hash(p) != gc3_ir_hash(q), "gc3_ir_hash misses a changed dstoff");
            gc3_ir_program_destroy(q);
        }
        free(text);
    }
    /* a clone is equal (extras and the carried postcondition too), hashes alike, and is its own */
    {
        gc3_ir_program_t *q = NULL;
        gc3_ir_attr_t    *a = calloc(1, sizeof(*a));
        a->name  = strdup("fused");
        a->value = strdup("1");
        p->gpus[0].tbs[0].steps[0].extra.attrs = a;
        p->gpus[0].tbs[0].steps[0].extra.count = 1;
        CHECK_OK(gc3_ir_program_clone(p, &q));
        CHECK(q != NULL && gc3_ir_equal(p, q) && gc3_ir_hash(p) == gc3_ir_hash(q), "a clone differs");
        if (q != NULL) {
            CHECK(q->gpus != p->gpus && q->gpus[0].tbs[0].steps != p->gpus[0].tbs[0].steps &&
                      q->gpus[0].tbs[0].steps[0].extra.attrs != a, "a clone shares memory");
            gc3_ir_program_destroy(q);
        }
    }
    gc3_ir_program_destroy(p);
}

static void test_corpus_round_trip(void)
{
    const char    *dirs[] = {GC3_CORPUS "/valid", GC3_CORPUS "/invalid"};
    int            n      = 0;

    for (int d = 0; d < 2; d++) {
        DIR           *dir = opendir(dirs[d]);
        struct dirent *e;
        CHECK(dir != NULL, "cannot open %s", dirs[d]);
        while (dir != NULL && (e = readdir(dir)) != NULL) {
            char              path[1024];
            gc3_ir_program_t *p = NULL;
            size_t            l = strlen(e->d_name);
            if (l < 4 || strcmp(e->d_name + l - 4, ".xml") != 0) {
                continue;
            }
            snprintf(path, sizeof(path), "%s/%s", dirs[d], e->d_name);
            if (gc3_ir_read_file(path, NULL, &p) == GC3_OK) {
                check_round_trip(p, path);
                gc3_ir_program_destroy(p);
                n++;
            } else {
                CHECK(p == NULL, "%s: failed read left a program behind", path);
                CHECK(d == 1, "%s: a valid corpus file does not read", path);
            }
        }
        if (dir != NULL) {
            closedir(dir);
        }
    }
    CHECK(n >= 7, "only %d corpus files round-tripped", n);
}

static void test_legacy_and_extras(void)
{
    gc3_ir_program_t *p = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/legacy_ring_allreduce_3.xml", &diag, &p));
    if (p != NULL) {
        CHECK(p->ngpus == 3 && p->coll == GC3_COLL_ALLREDUCE && p->outofplace == 1 && p->inplace == 0,
              "legacy defaults: ngpus %d coll %d outofplace %d inplace %d", p->ngpus, p->coll, p->outofplace,
              p->inplace);
        CHECK(p->extra.count == 0 && p->redop != NULL && strcmp(p->redop, "sum") == 0,
              "redop=\"sum\" not read as the program's operator");
        gc3_ir_program_destroy(p);
    }
    {
        const char *xml = "<algo name='u' nchunksperloop='1' ngpus='2' coll='allreduce' future='x'>"
                          "<gpu id='0' i_chunks='1' o_chunks='1' hint='7'><tb id='0' send='-1' recv='-1' chan='0' w='1'>"
                          "<step s='0' type='nop' cnt='0' depid='-1' deps='-1' hasdep='0' color='red'/></tb>"
                          "<mystery/></gpu><gpu id='1' i_chunks='1' o_chunks='1'/></algo>";
        CHECK_OK(gc3_ir_read_memory(xml, strlen(xml), "extras", &diag, &p));
        if (p != NULL) {
            CHECK(p->gpus[0].extra.count == 1 && p->gpus[0].tbs[0].extra.count == 1 &&
                  p->gpus[0].tbs[0].steps[0].extra.count == 1, "extras not kept on gpu/tb/step");
            CHECK(p->gpus[0].tbs[0].steps[0].srcbuf == GC3_BUF_NONE, "missing srcbuf should be NONE");
            CHECK(gc3_diag_contains(&diag, "extras:1: warning: unknown element <mystery> inside <gpu> ignored"),
                  "unknown element not warned about with its line");
            /* every attribute gc3 does not know is reported with its line, never silently dropped */
            CHECK(gc3_diag_contains(&diag, "extras:1: warning: <algo future=\"x\">: an attribute gc3 does not know") &&
                  gc3_diag_contains(&diag, "<gpu hint=\"7\">") && gc3_diag_contains(&diag, "<tb w=\"1\">") &&
                  gc3_diag_contains(&diag, "<step color=\"red\">"), "unknown attributes not warned about");
            check_round_trip(p, "extras");
            gc3_ir_program_destroy(p);
        }
    }
    gc3_diag_cleanup(&diag);
}

/* Every prefix of a valid file and every single-byte corruption must either read into a
 * complete program or fail with a message and no program. (ASan runs catch the rest.) */
static void test_truncation_and_corruption(void)
{
    size_t len;
    char  *text = gc3_test_slurp(GC3_CORPUS "/valid/allpairs_allreduce_4.xml", &len);
    int    bad  = 0, failed_reads = 0;

    CHECK(text != NULL, "cannot read corpus file");
    if (text == NULL) {
        return;
    }
    for (size_t cut = 0; cut < len; cut += 7) {
        gc3_ir_program_t *p = NULL;
        gc3_diag_t        diag;
        gc3_status_t      s;
        gc3_diag_init(&diag);
        s = gc3_ir_read_memory(text, cut, "prefix", &diag, &p);
        if (s != GC3_OK) {
            failed_reads++;
            bad += p != NULL || diag.count == 0;
        }
        gc3_ir_program_destroy(p);
        gc3_diag_cleanup(&diag);
    }
    for (size_t i = 0; i < len; i += 5) {
        const char        subst[] = {'<', '"', '9', '-', 'x', '\0', '>'};
        for (size_t k = 0; k < sizeof(subst); k++) {
            gc3_ir_program_t *p = NULL;
            gc3_diag_t        diag;
            char              save = text[i];
            gc3_diag_init(&diag);
            text[i] = subst[k];
            if (gc3_ir_read_memory(text, len, "corrupt", &diag, &p) != GC3_OK) {
                bad += p != NULL || diag.count == 0;
            }
            text[i] = save;
            gc3_ir_program_destroy(p);
            gc3_diag_cleanup(&diag);
        }
    }
    CHECK(failed_reads > 0, "no truncated prefix failed to read");
    CHECK(bad == 0, "%d failed reads left a program behind or said nothing", bad);
    free(text);
}

static void test_limits(void)
{
    gc3_ir_program_t *p = NULL;
    gc3_diag_t        diag;
    const char       *huge = "<algo name='h' nchunksperloop='1' ngpus='1000000000'><gpu id='0' i_chunks='1' o_chunks='1'/></algo>";
    const char       *neg  = "<algo name='n' nchunksperloop='-4' ngpus='1'><gpu id='0' i_chunks='1' o_chunks='1'/></algo>";

    gc3_diag_init(&diag);
    CHECK(gc3_ir_read_memory(huge, strlen(huge), "huge", &diag, &p) == GC3_ERR_PARSE && p == NULL, "absurd ngpus accepted");
    CHECK(gc3_diag_contains(&diag, "huge:1: <algo ngpus=\"1000000000\">"), "absurd ngpus not named");
    CHECK(gc3_ir_read_memory(neg, strlen(neg), "neg", &diag, &p) == GC3_ERR_PARSE && p == NULL, "negative chunks accepted");
    gc3_diag_cleanup(&diag);
}

static void test_flat(void)
{
    gc3_ir_program_t   *p = NULL;
    gc3_flat_program_t *f = NULL;

    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/allpairs_allreduce_4.xml", NULL, &p));
    if (p == NULL) {
        return;
    }
    CHECK_OK(gc3_flat_create(p, &f));
    if (f != NULL) {
        const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
        const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
        const gc3_flat_step_t *steps = gc3_flat_steps(f);
        int                    mism  = 0, total = 0;
        CHECK(f->magic == GC3_FLAT_MAGIC && f->nranks == 4 && f->ntbs == 16 && f->proto == GC3_PROTO_LL,
              "flat header: nranks %d ntbs %d", f->nranks, f->ntbs);
        CHECK(f->steps_off + (uint64_t)f->nsteps * sizeof(gc3_flat_step_t) <= f->bytes, "flat arrays overflow");
        for (int r = 0; r < p->ngpus; r++) {
            for (int t = 0; t < p->gpus[r].ntbs; t++) {
                const gc3_ir_tb_t   *tb = &p->gpus[r].tbs[t];
                const gc3_flat_tb_t *ft = &tbs[ranks[r].tb_begin + t];
                mism += ft->send != tb->send || ft->recv != tb->recv || ft->nsteps != tb->nsteps || ft->rank != r;
                for (int s = 0; s < tb->nsteps; s++) {
                    const gc3_ir_step_t   *st = &tb->steps[s];
                    const gc3_flat_step_t *fs = &steps[ft->step_begin + s];
                    mism += fs->type != st->type || fs->srcoff != st->srcoff || fs->dstoff != st->dstoff ||
                            fs->cnt != st->cnt || fs->dep_tb != st->depid || fs->hasdep != st->hasdep ||
                            (st->depid >= 0 && fs->dep_step != st->deps);
                    total++;
                }
            }
        }
        CHECK(mism == 0 && total == f->nsteps, "flat form differs from the tree in %d places", mism);
        gc3_flat_destroy(f);
    }
    /* a dangling dependency is refused, not flattened */
    p->gpus[0].tbs[0].steps[2].depid = 9;
    CHECK(gc3_flat_create(p, &f) == GC3_ERR_VERIFY && f == NULL, "dangling dependency flattened");
    gc3_ir_program_destroy(p);
}

/* the fuse marks of rank r's block t, as a string of digits (one per step) */
static void fuse_marks(gc3_ir_program_t *p, int r, int t, int max_srcs, int *runs, char *out)
{
    gc3_flat_program_t *f = NULL;
    out[0]                = '\0';
    *runs                 = -1;
    CHECK_OK(gc3_flat_create(p, &f));
    if (f != NULL) {
        const gc3_flat_tb_t *tb = &gc3_flat_tbs(f)[gc3_flat_ranks(f)[r].tb_begin + t];
        *runs                   = gc3_flat_fuse(f, r, max_srcs);
        for (int s = 0; s < tb->nsteps; s++) {
            out[s] = (char)('0' + gc3_flat_steps(f)[tb->step_begin + s].fuse);
        }
        out[tb->nsteps] = '\0';
        gc3_flat_destroy(f);
    }
}

/* gc3_flat_fuse: which runs of local steps may be done in one pass (all-pairs, 4 ranks: block 3 of
 * every rank is cpy i -> o, then re o += s0, s1, s2, the last one waited for by the sends) */
static void test_flat_fuse(void)
{
    gc3_ir_program_t *p = NULL;
    char              m[16];
    int               runs;

    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/allpairs_allreduce_4.xml", NULL, &p));
    if (p == NULL) {
        return;
    }
    for (int r = 0; r < 4; r++) {
        fuse_marks(p, r, 3, 8, &runs, m);
        CHECK(runs == 1 && strcmp(m, "3000") == 0, "rank %d: %d runs, marks %s (want 1, 3000)", r, runs, m);
        for (int t = 0; t < 3; t++) {
            fuse_marks(p, r, t, 8, &runs, m);
            CHECK(strcmp(m, "0000") == 0, "rank %d block %d (sends and receives) fused: %s", r, t, m);
        }
    }
    fuse_marks(p, 0, 3, 3, &runs, m); /* at most 3 operands: cpy + 2 re, then the last re alone */
    CHECK(runs == 1 && strcmp(m, "2000") == 0, "max 3 operands: %d runs, marks %s", runs, m);
    fuse_marks(p, 0, 3, 1, &runs, m);
    CHECK(runs == 0 && strcmp(m, "0000") == 0, "max 1 operand: %d runs, marks %s", runs, m);
    /* another block waits for the partial result of step 1: the run ends there; 2 and 3 form one */
    p->gpus[0].tbs[3].steps[1].hasdep = 1;
    fuse_marks(p, 0, 3, 8, &runs, m);
    CHECK(runs == 2 && strcmp(m, "1010") == 0, "hasdep inside: %d runs, marks %s (want 2, 1010)", runs, m);
    p->gpus[0].tbs[3].steps[1].hasdep = 0;
    /* a source that is not scratch may be the output itself (in place): no joining */
    p->gpus[0].tbs[3].steps[2].srcbuf = GC3_BUF_INPUT;
    fuse_marks(p, 0, 3, 8, &runs, m);
    CHECK(runs == 2 && strcmp(m, "1010") == 0, "input source: %d runs, marks %s (want 2, 1010)", runs, m);
    p->gpus[0].tbs[3].steps[2].srcbuf = GC3_BUF_SCRATCH;
    /* a different destination chunk ends the run */
    p->gpus[0].tbs[3].steps[3].dstoff = 1;
    fuse_marks(p, 0, 3, 8, &runs, m);
    CHECK(runs == 1 && strcmp(m, "2000") == 0, "other destination: %d runs, marks %s (want 1, 2000)", runs, m);
    p->gpus[0].tbs[3].steps[3].dstoff = 0;
    /* reducing into scratch: a source overlapping the destination chunks ends the run */
    for (int s = 0; s < 4; s++) {
        p->gpus[0].tbs[3].steps[s].dstbuf = GC3_BUF_SCRATCH;
        p->gpus[0].tbs[3].steps[s].dstoff = 2;
    }
    fuse_marks(p, 0, 3, 8, &runs, m);
    CHECK(runs == 1 && strcmp(m, "2000") == 0,
          "scratch destination overlapping a source: %d runs, marks %s (want 1, 2000)", runs, m);
    gc3_ir_program_destroy(p);
}

static void test_chunk_elems(void)
{
    gc3_ir_program_t *p;
    uint64_t          e = 0;

    CHECK_OK(gc3_ir_program_create("a", GC3_COLL_ALLTOALL, 4, 8, &p));
    CHECK(gc3_coll_chunk_elems(p, 6, &e) == GC3_OK && e == 3, "alltoall 6 per peer x 4 / 8 chunks = 3, got %llu",
          (unsigned long long)e);
    CHECK(gc3_coll_chunk_elems(p, 3, &e) == GC3_ERR_UNSUPPORTED, "12 elements in 8 chunks must not truncate");
    p->coll = GC3_COLL_ALLREDUCE;
    CHECK(gc3_coll_chunk_elems(p, 8000, &e) == GC3_OK && e == 1000, "allreduce 8000/8");
    CHECK(gc3_coll_chunk_elems(p, 8001, &e) == GC3_ERR_UNSUPPORTED, "allreduce remainder must be reported");
    gc3_ir_program_destroy(p);
}

int main(void)
{
    test_in_memory();
    test_corpus_round_trip();
    test_legacy_and_extras();
    test_truncation_and_corruption();
    test_limits();
    test_flat();
    test_flat_fuse();
    test_chunk_elems();
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_ir");
}
