/* MSCCL compatibility: in-place programs in MSCCL's form (the corpus tests/corpus/msccl, written by
 * gc3c as msccl-tools writes them), their out-of-place form (input copied first), the attributes and
 * spellings of real files, and the reader's warnings. Every program is run by the reference executor
 * for every datatype and operator, in place and out of place, against the oracle (plain loops). */
#include <dirent.h>
#include <string.h>
#include "gc3_algorithms.h"
#include "gc3_cost.h"
#include "gc3_refexec.h"
#include "gc3_test.h"
#include "gc3_oracle.h"

static char *write_text(const gc3_ir_program_t *p, size_t *len)
{
    char *text = NULL;
    FILE *mem  = open_memstream(&text, len);
    if (mem == NULL) {
        return NULL;
    }
    gc3_ir_write_stream(p, mem);
    fclose(mem);
    return text;
}

/* the buffer that lives inside the other in place: given with 0 chunks in MSCCL's form */
static int inner_chunks(const gc3_ir_program_t *p, int r)
{
    return p->coll == GC3_COLL_ALLGATHER ? p->gpus[r].i_chunks : p->gpus[r].o_chunks;
}

/* Every valid datatype and operator, in place and out of place (the copy-first form), against the oracle. */
static void run_all(const char *name, const gc3_ir_program_t *p, const gc3_ir_program_t *cf)
{
    static const gc3_dtype_t dts[] = {GC3_DT_INT8, GC3_DT_UINT8, GC3_DT_INT32, GC3_DT_UINT32,
                                      GC3_DT_INT64, GC3_DT_UINT64, GC3_DT_FLOAT32, GC3_DT_FLOAT64};
    static const gc3_op_t    ops[] = {GC3_OP_SUM, GC3_OP_PROD, GC3_OP_MIN, GC3_OP_MAX, GC3_OP_BAND, GC3_OP_BOR,
                                      GC3_OP_BXOR};
    const int R = p->ngpus, C = p->nchunksperloop;
    /* the MPI count: 2 elements per chunk (1 for 16 ranks: the 16-rank files are the largest) */
    const size_t per = R >= 16 ? 1 : 2;
    const size_t count = (p->coll == GC3_COLL_ALLREDUCE ? (size_t)C : (size_t)C / (size_t)R) * per;
    int          runs = 0, ok = 1;

    for (size_t d = 0; d < sizeof(dts) / sizeof(dts[0]); d++) {
        for (size_t o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
            if (!gc3_op_valid(ops[o], dts[d])) {
                continue;
            }
            ok = gc3_oracle_check(p, dts[d], ops[o], count, 1, 8) && ok;
            ok = gc3_oracle_check(cf, dts[d], ops[o], count, 0, 8) && ok;
            runs += 2;
        }
    }
    /* 6 integer types x 7 operators + 2 floating types x 4, each in place and out of place */
    CHECK(runs == 2 * (6 * 7 + 2 * 4) && ok, "%s: %d runs of the reference executor, all right: %d", name, runs, ok);
}

static void test_corpus(void)
{
    const char    *dir = GC3_CORPUS "/msccl";
    DIR           *d   = opendir(dir);
    struct dirent *e;
    int            n = 0, ranks_seen[17] = {0};

    CHECK(d != NULL, "cannot open %s", dir);
    while (d != NULL && (e = readdir(d)) != NULL) {
        char              path[1024];
        size_t            l = strlen(e->d_name), flen = 0, tlen = 0;
        gc3_ir_program_t *p = NULL, *cf = NULL;
        gc3_diag_t        diag;
        char             *file, *text;
        double            t_in = 0, t_out = 0;
        gc3_machine_t     m;

        if (l < 4 || strcmp(e->d_name + l - 4, ".xml") != 0) {
            continue;
        }
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_ir_read_file(path, &diag, &p));
        CHECK(diag.count == 0, "%s: the reader warns: %s", path, diag.count ? diag.msgs[0] : "");
        if (p == NULL) {
            gc3_diag_cleanup(&diag);
            continue;
        }
        n++;
        ranks_seen[p->ngpus <= 16 ? p->ngpus : 0] = 1;
        /* MSCCL's in-place form read: the inner buffer has its full size in the model */
        CHECK(p->msccl_inplace && p->inplace && !p->outofplace, "%s: not read as MSCCL's in-place form", path);
        CHECK(inner_chunks(p, 0) == (p->coll == GC3_COLL_ALLREDUCE ? p->nchunksperloop : p->nchunksperloop / p->ngpus),
              "%s: the inner buffer has %d chunks in the model", path, inner_chunks(p, 0));
        /* and written back in that form, byte for byte */
        file = gc3_test_slurp(path, &flen);
        text = write_text(p, &tlen);
        CHECK(file != NULL && text != NULL && flen == tlen && memcmp(file, text, flen) == 0,
              "%s: writing the program back does not give the file (MSCCL's form lost?)", path);
        CHECK(text != NULL && strstr(text, p->coll == GC3_COLL_ALLGATHER ? " i_chunks=\"0\"" : " o_chunks=\"0\"") != NULL,
              "%s: the written program is not in MSCCL's in-place form", path);
        free(file);
        free(text);
        /* verified in place, and in the form that serves out-of-place calls */
        CHECK_OK(gc3_verify(p, NULL, &diag));
        CHECK_OK(gc3_ir_copy_first(p, &cf));
        if (cf != NULL) {
            CHECK(cf->outofplace && !cf->inplace && !cf->msccl_inplace, "%s: copy-first form is not out-of-place", path);
            CHECK_OK(gc3_verify(cf, NULL, &diag));
            run_all(path, p, cf);
            /* the cost model counts the copy (local copies made slow, so that it shows whatever the
               schedule: the list scheduler may order the other steps differently) */
            gc3_machine_default(&m, 1, p->ngpus);
            m.local_bw_GBps = 1.0;
            CHECK_OK(gc3_cost_predict(p, &m, 1u << 20, &diag, &t_in));
            CHECK_OK(gc3_cost_predict(cf, &m, 1u << 20, &diag, &t_out));
            CHECK(t_out > t_in, "%s: out of place (copy first) predicted %.2f us, in place %.2f us", path, t_out, t_in);
        }
        if (diag.count) {
            gc3_diag_print(&diag, stderr, "  ");
        }
        gc3_ir_program_destroy(cf);
        gc3_ir_program_destroy(p);
        gc3_diag_cleanup(&diag);
    }
    if (d != NULL) {
        closedir(d);
    }
    CHECK(n >= 13 && ranks_seen[2] && ranks_seen[4] && ranks_seen[8] && ranks_seen[16], "the corpus has %d programs", n);
}

static gc3_ir_program_t *read_text(const char *xml, gc3_diag_t *diag)
{
    gc3_ir_program_t *p = NULL;
    (void)gc3_ir_read_memory(xml, strlen(xml), "t", diag, &p);
    return p;
}

/* nop steps with cnt 0, steps naming the output of an in-place allreduce, depid/deps/hasdep */
static void test_reader_forms(void)
{
    gc3_diag_t        diag;
    gc3_ir_program_t *p, *q;
    const char *ar = "<algo name='a' proto='LL' nchannels='1' nchunksperloop='2' ngpus='2' coll='allreduce' inplace='1' "
                     "outofplace='0' minBytes='0' maxBytes='0'>"
                     "<gpu id='0' i_chunks='2' o_chunks='0' s_chunks='0'><tb id='0' send='1' recv='1' chan='0'>"
                     "<step s='0' type='s' srcbuf='i' srcoff='1' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='1' type='rrc' srcbuf='o' srcoff='0' dstbuf='o' dstoff='0' cnt='1' depid='-1' deps='-1' hasdep='1'/>"
                     "<step s='2' type='s' srcbuf='i' srcoff='0' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='3' type='r' srcbuf='i' srcoff='-1' dstbuf='o' dstoff='1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "</tb><tb id='1' send='-1' recv='-1' chan='0'>"
                     "<step s='0' type='nop' srcbuf='i' srcoff='-1' dstbuf='o' dstoff='-1' cnt='0' depid='0' deps='1' hasdep='0'/>"
                     "</tb></gpu>"
                     "<gpu id='1' i_chunks='2' o_chunks='0' s_chunks='0'><tb id='0' send='0' recv='0' chan='0'>"
                     "<step s='0' type='s' srcbuf='i' srcoff='0' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='1' type='rrc' srcbuf='i' srcoff='1' dstbuf='i' dstoff='1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='2' type='s' srcbuf='i' srcoff='1' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='3' type='r' srcbuf='i' srcoff='-1' dstbuf='i' dstoff='0' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "</tb></gpu></algo>";

    gc3_diag_init(&diag);
    p = read_text(ar, &diag);
    CHECK(p != NULL && diag.count == 0, "in-place allreduce with o steps and a nop: %s", diag.count ? diag.msgs[0] : "");
    if (p != NULL) {
        const gc3_ir_step_t *st = &p->gpus[0].tbs[0].steps[1], *nop = &p->gpus[0].tbs[1].steps[0];
        CHECK(p->msccl_inplace && p->gpus[0].o_chunks == 2, "o_chunks=0 not filled in");
        CHECK(st->srcbuf == GC3_BUF_INPUT && st->dstbuf == GC3_BUF_INPUT && st->srcoff == 0,
              "o chunk 0 of an in-place allreduce is input chunk 0 (got %c%d)", gc3_buf_char(st->srcbuf), st->srcoff);
        CHECK(nop->type == GC3_STEP_NOP && nop->cnt == 0 && nop->srcbuf == GC3_BUF_NONE && nop->dstbuf == GC3_BUF_NONE &&
              nop->depid == 0 && nop->deps == 1, "the nop step");
        CHECK_OK(gc3_verify(p, NULL, &diag));
        CHECK(gc3_oracle_check(p, GC3_DT_INT32, GC3_OP_SUM, 6, 1, 8), "hand-written in-place allreduce runs");
        {
            size_t len;
            char  *text = write_text(p, &len);
            CHECK(text != NULL && strstr(text, "o_chunks=\"0\"") &&
                  strstr(text, "type=\"nop\" srcbuf=\"i\" srcoff=\"-1\" dstbuf=\"o\" dstoff=\"-1\" cnt=\"0\" depid=\"0\" deps=\"1\""),
                  "written back in MSCCL's form: %s", text ? text : "");
            q = text ? read_text(text, &diag) : NULL;
            CHECK(q != NULL && gc3_ir_equal(p, q), "MSCCL's form does not round-trip");
            gc3_ir_program_destroy(q);
            free(text);
        }
        gc3_ir_program_destroy(p);
    }
    /* o_chunks=0 cannot serve out-of-place calls */
    {
        char bad[4096];
        snprintf(bad, sizeof(bad), "%s", ar);
        memcpy(strstr(bad, "outofplace='0'"), "outofplace='1'", 14);
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        p = read_text(bad, &diag);
        CHECK(p == NULL && gc3_diag_contains(&diag, "t:1: <algo inplace=\"1\" outofplace=\"1\">, but every <gpu> has "
                                                    "o_chunks=\"0\" (MSCCL's in-place form): an out-of-place call would "
                                                    "have no output"), "in-place form with outofplace=1 accepted");
        gc3_ir_program_destroy(p);
    }
    gc3_diag_cleanup(&diag);
}

/* allgather in MSCCL's form: input chunk k of rank r is output chunk r*K+k; reduce-scatter the mirror */
static void test_allgather_slice(void)
{
    const char *ag = "<algo name='g' nchunksperloop='2' ngpus='2' coll='allgather' inplace='1'>"
                     "<gpu id='0' i_chunks='0' o_chunks='2' s_chunks='0'><tb id='0' send='1' recv='1' chan='0'>"
                     "<step s='0' type='s' srcbuf='i' srcoff='0' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='1' type='r' srcbuf='i' srcoff='-1' dstbuf='o' dstoff='1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "</tb></gpu>"
                     "<gpu id='1' i_chunks='0' o_chunks='2' s_chunks='0'><tb id='0' send='0' recv='0' chan='0'>"
                     "<step s='0' type='s' srcbuf='i' srcoff='0' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "<step s='1' type='r' srcbuf='i' srcoff='-1' dstbuf='o' dstoff='0' cnt='1' depid='-1' deps='-1' hasdep='0'/>"
                     "</tb></gpu></algo>";
    gc3_diag_t        diag;
    gc3_ir_program_t *p, *cf = NULL;

    gc3_diag_init(&diag);
    p = read_text(ag, &diag);
    CHECK(p != NULL, "in-place allgather: %s", diag.count ? diag.msgs[0] : "");
    if (p != NULL) {
        CHECK(p->inplace && !p->outofplace, "inplace=\"1\" without outofplace: in-place only");
        CHECK(p->gpus[1].i_chunks == 1 && p->gpus[1].tbs[0].steps[0].srcbuf == GC3_BUF_OUTPUT &&
              p->gpus[1].tbs[0].steps[0].srcoff == 1, "rank 1's input chunk 0 is its output chunk 1");
        CHECK_OK(gc3_verify(p, NULL, &diag));
        CHECK(gc3_oracle_check(p, GC3_DT_FLOAT64, GC3_OP_SUM, 5, 1, 8), "in-place allgather runs");
        CHECK_OK(gc3_ir_copy_first(p, &cf));
        CHECK(cf != NULL && gc3_oracle_check(cf, GC3_DT_UINT8, GC3_OP_SUM, 5, 0, 8), "out-of-place call runs");
        gc3_ir_program_destroy(cf);
        gc3_ir_program_destroy(p);
    }
    gc3_diag_cleanup(&diag);
}

/* attributes of real files: read, checked, written back; unknown ones warned about with their line */
static void test_attributes(void)
{
    const char *x = "<algo name='x' proto='LL128' nchannels='1' nchunksperloop='2' ngpus='2' coll='reduce_scatter_block'\n"
                    " inplace='0' outofplace='1' maxcount='1' nthreadblocks='3' op='max' minBytes='16' maxBytes='4096' nthreads='512'>\n"
                    "<gpu id='0' i_chunks='2' o_chunks='1' s_chunks='0'><tb id='0' send='1' recv='1' chan='0'>\n"
                    "<step s='0' type='s' srcbuf='i' srcoff='1' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>\n"
                    "<step s='1' type='rrc' srcbuf='i' srcoff='0' dstbuf='o' dstoff='0' cnt='1' depid='-1' deps='-1' hasdep='0' fused='1'/>\n"
                    "</tb></gpu>\n"
                    "<gpu id='1' i_chunks='2' o_chunks='1' s_chunks='0'><tb id='0' send='0' recv='0' chan='0'>\n"
                    "<step s='0' type='s' srcbuf='i' srcoff='0' dstbuf='o' dstoff='-1' cnt='1' depid='-1' deps='-1' hasdep='0'/>\n"
                    "<step s='1' type='rrc' srcbuf='i' srcoff='1' dstbuf='o' dstoff='0' cnt='1' depid='-1' deps='-1' hasdep='0'/>\n"
                    "</tb></gpu></algo>\n";
    gc3_diag_t        diag;
    gc3_ir_program_t *p, *q;
    gc3_coll_t        c;

    gc3_diag_init(&diag);
    p = read_text(x, &diag);
    CHECK(p != NULL, "attributes: %s", diag.count ? diag.msgs[0] : "");
    if (p != NULL) {
        CHECK(p->coll == GC3_COLL_REDUCE_SCATTER && p->proto == GC3_PROTO_LL128 && p->maxcount == 1 &&
              p->nthreadblocks == 3 && p->redop != NULL && strcmp(p->redop, "max") == 0 && p->min_bytes == 16 &&
              p->max_bytes == 4096, "attributes not read");
        CHECK(gc3_diag_contains(&diag, "t:2: warning: <algo nthreads=\"512\">: an attribute gc3 does not know"),
              "unknown <algo> attribute not reported with its line");
        CHECK(gc3_diag_contains(&diag, "t:5: warning: <step fused=\"1\">: an attribute gc3 does not know"),
              "unknown <step> attribute not reported with its line");
        CHECK(gc3_diag_contains(&diag, "t:2: warning: <algo nthreadblocks=\"3\">, but the widest rank has 1 thread blocks"),
              "nthreadblocks disagreeing not reported");
        CHECK(gc3_proto_runs_as(p->proto) == GC3_PROTO_SIMPLE, "LL128 runs as Simple");
        CHECK_OK(gc3_verify(p, NULL, &diag));
        CHECK(gc3_oracle_check(p, GC3_DT_INT32, GC3_OP_MAX, 4, 0, 8), "reduce_scatter_block program runs");
        {
            size_t len;
            char  *text = write_text(p, &len);
            CHECK(text != NULL && strstr(text, "maxcount=\"1\" nthreadblocks=\"3\" redop=\"max\" minBytes=\"16\"") &&
                  strstr(text, "nthreads=\"512\"") && strstr(text, "coll=\"reduce_scatter_block\""),
                  "attributes not written back: %s", text ? text : "");
            q = text ? read_text(text, NULL) : NULL;
            CHECK(q != NULL && gc3_ir_equal(p, q), "attributes do not round-trip");
            gc3_ir_program_destroy(q);
            free(text);
        }
        gc3_ir_program_destroy(p);
    }
    /* one identity per collective: every spelling is the enum */
    CHECK(gc3_coll_from_name("reduce_scatter_block", &c) == GC3_OK && c == GC3_COLL_REDUCE_SCATTER &&
          gc3_coll_from_name("reducescatter", &c) == GC3_OK && c == GC3_COLL_REDUCE_SCATTER &&
          gc3_coll_from_name("reduce_scatter", &c) == GC3_OK && c == GC3_COLL_REDUCE_SCATTER &&
          gc3_coll_from_name("alltonext", &c) != GC3_OK && c == GC3_COLL_CUSTOM, "collective spellings");
    gc3_diag_cleanup(&diag);
}

/* a custom collective carries its postcondition (<postcondition>), so its file verifies alone */
static void test_carried_postcondition(void)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *p = NULL, *q = NULL;
    gc3_diag_t        diag;

    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, 8);
    CHECK_OK(gc3_algo_generate("alltonext", &ap, &diag, NULL, &p));
    if (p != NULL) {
        size_t len;
        char  *text = write_text(p, &len);
        CHECK(p->post != NULL && text != NULL && strstr(text, "<postcondition>") &&
              strstr(text, "<cell rank=\"1\" chunk=\"0\"><src rank=\"0\" chunk=\"0\"/></cell>"),
              "the generated program carries no postcondition");
        q = text ? read_text(text, &diag) : NULL;
        CHECK(q != NULL && q->post != NULL && gc3_ir_equal(p, q), "the postcondition does not round-trip");
        if (q != NULL) {
            CHECK_OK(gc3_verify(q, NULL, &diag));
            CHECK(gc3_oracle_check(q, GC3_DT_INT64, GC3_OP_SUM, 24, 0, 8), "alltonext from its file runs");
        }
        free(text);
    }
    gc3_ir_program_destroy(q);
    gc3_ir_program_destroy(p);
    /* a malformed table names its line */
    p = read_text("<algo name='c' nchunksperloop='1' ngpus='2' coll='mine'><gpu id='0' i_chunks='1' o_chunks='1'/>"
                  "<gpu id='1' i_chunks='1' o_chunks='1'/>\n<postcondition><cell rank='1' chunk='3'><src rank='0' chunk='0'/>"
                  "</cell></postcondition></algo>", &diag);
    CHECK(p == NULL && gc3_diag_contains(&diag, "t:2: <cell rank=\"1\" chunk=\"3\">: rank 1 has 1 output chunks"),
          "bad postcondition cell accepted");
    gc3_ir_program_destroy(p);
    gc3_diag_cleanup(&diag);
}

int main(void)
{
    test_corpus();
    test_reader_forms();
    test_allgather_slice();
    test_attributes();
    test_carried_postcondition();
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_msccl");
}
