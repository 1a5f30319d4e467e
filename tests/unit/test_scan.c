/* Prefix reductions (scan, exscan; issue 57): every generator for 2 to 8 ranks, in place and not, a few
 * shapes (channels, chunks per peer, instances, LL, FIFO slots), verified and run by the reference executor
 * against the direct computation of gc3_oracle.h (every predefined op on integers and floats; exscan's rank 0
 * output never written); the built-in rules' choice by size and link. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_test.h"
#include "gc3_oracle.h"
#include "gc3_algorithms.h"
#include "gc3_rules.h"

static const char *const scan_algos[] = { "scan_direct",   "scan_ring",   "scan_doubling", "scan_sliced",
                                          "exscan_direct", "exscan_ring", "exscan_sliced" };

static void test_generators(void)
{
    int programs = 0, runs = 0;

    for (size_t a = 0; a < sizeof(scan_algos) / sizeof(scan_algos[0]); a++) {
        const gc3_coll_t coll = strncmp(scan_algos[a], "exscan", 6) == 0 ? GC3_COLL_EXSCAN : GC3_COLL_SCAN;
        for (int R = 2; R <= 8; R++) {
            for (int shape = 0; shape < 6; shape++) {
                for (int inplace = 0; inplace <= 1; inplace++) {
                    gc3_algo_params_t   ap;
                    gc3_compile_stats_t st;
                    gc3_ir_program_t   *p = NULL;
                    gc3_diag_t          diag;
                    gc3_status_t        s;
                    gc3_algo_params_default(&ap, R);
                    /* shapes 4 and 5 are 0 and 1 scheduled for the component's least FIFO slots (2); each
                       program runs with the slots it was scheduled for and with twice as many */
                    const int g        = shape % 4;
                    ap.inplace         = inplace;
                    ap.channels        = g == 0 ? 1 : g == 3 ? 3 : 2;
                    ap.chunks_per_peer = g == 2 ? 3 : g == 3 ? 2 : 1;
                    ap.instances       = g == 3 ? 2 : 1;
                    ap.proto           = g == 1 ? GC3_PROTO_LL : GC3_PROTO_SIMPLE;
                    ap.slots           = shape >= 4 ? 2 : GC3_FIFO_SLOTS_DEFAULT;
                    gc3_diag_init(&diag);
                    s = gc3_algo_generate(scan_algos[a], &ap, &diag, &st, &p);
                    CHECK(s == GC3_OK && st.verified && p != NULL && p->coll == coll && p->root == -1,
                          "%s R=%d shape %d %s: %s (%s)", scan_algos[a], R, shape, inplace ? "in place" : "",
                          gc3_status_string(s), diag.count ? diag.msgs[0] : "");
                    gc3_diag_cleanup(&diag);
                    if (p == NULL) {
                        continue;
                    }
                    programs++;
                    for (int k = 1; k <= 2; k++) {
                        const size_t count = (size_t)p->nchunksperloop * (size_t)k * 3;
                        gc3_oracle_check(p, GC3_DT_INT32, GC3_OP_SUM, count, inplace, ap.slots);
                        gc3_oracle_check(p, GC3_DT_INT64, GC3_OP_BXOR, count, inplace, 2 * ap.slots);
                        gc3_oracle_check(p, GC3_DT_FLOAT64, GC3_OP_MAX, count, inplace, 2 * ap.slots);
                        gc3_oracle_check(p, GC3_DT_UINT8, GC3_OP_MIN, count, inplace, ap.slots);
                        runs += 4;
                    }
                    gc3_ir_program_destroy(p);
                }
            }
        }
    }
    CHECK(programs == 7 * 7 * 6 * 2, "%d programs", programs);
    { /* the sliced scan's pieces of a slice on one channel share its blocks: as many pieces a channel as FIFO slots
         cannot be scheduled, and the compiler says so */
        gc3_algo_params_t   ap;
        gc3_compile_stats_t st;
        gc3_ir_program_t   *p = NULL;
        gc3_diag_t          diag;
        gc3_algo_params_default(&ap, 4);
        ap.chunks_per_peer = 4;
        gc3_diag_init(&diag);
        CHECK(gc3_algo_generate("scan_sliced", &ap, &diag, &st, &p) == GC3_ERR_DEADLOCK && p == NULL &&
                  diag.count > 0 && strstr(diag.msgs[0], "raise the slot count") != NULL,
              "scan_sliced, 4 pieces a slice on one channel, 4 slots: %s", diag.count ? diag.msgs[0] : "compiled");
        gc3_diag_cleanup(&diag);
        gc3_ir_program_destroy(p);
    }
    printf("test_scan: %d programs, %d reference-executor runs against the oracle\n", programs, runs);
}

static void test_rules(void)
{
    gc3_rules_t      *R = NULL;
    gc3_diag_t        diag;
    const gc3_rule_t *r;

    gc3_diag_init(&diag);
    CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
    for (int e = 0; R != NULL && e < 2; e++) {
        const gc3_coll_t c      = e ? GC3_COLL_EXSCAN : GC3_COLL_SCAN;
        const char      *direct = e ? "exscan_direct" : "scan_direct", *ring = e ? "exscan_ring" : "scan_ring";
        r = gc3_rules_match_call(R, c, 1, 4, GC3_LINK_NVLINK, 4096, 4, 0);
        CHECK(r && strcmp(r->algo, direct) == 0 && r->proto == GC3_PROTO_LL, "%s 4K: %s", direct, r ? r->algo : "-");
        /* above 64K on NVLink, 2 and 4 GPUs, the direct exchange on 8 or more instances (a channel per peer)
           up to where the chain on 16 channels x 2 instances caught up (exscan on 4 GPUs: never, on 2 chunks a
           peer from 1M; measured on one H100: doc/measurements/gather-scan-shapes-1xh100.md; scan on 4 GPUs up to 2M:
           doc/measurements/scatter-scan-1xh100.md) */
        static const struct {
            int      exscan, ranks;
            unsigned bytes;
            int      chain, channels, chunks, instances;
        } want[] = {
            { 0, 4, 256u << 10, 0, 3, 1, 8 },      { 0, 4, 2u << 20, 0, 3, 1, 8 },
            { 0, 4, (2u << 20) + 1, 1, 16, 1, 2 }, { 0, 2, 256u << 10, 0, 1, 1, 8 },
            { 0, 2, 512u << 10, 0, 1, 1, 8 },      { 0, 2, (512u << 10) + 1, 0, 1, 1, 16 },
            { 0, 2, 2u << 20, 0, 1, 1, 16 },       { 0, 2, (2u << 20) + 1, 1, 16, 1, 2 },
            { 1, 4, 256u << 10, 0, 3, 1, 8 },      { 1, 4, 1u << 20, 0, 3, 1, 8 },
            { 1, 4, (1u << 20) + 1, 0, 3, 2, 10 }, { 1, 4, 64u << 20, 0, 3, 2, 10 },
            { 1, 2, 512u << 10, 0, 1, 1, 8 },      { 1, 2, (512u << 10) + 1, 0, 1, 1, 16 },
            { 1, 2, 1u << 20, 0, 1, 1, 16 },       { 1, 2, (1u << 20) + 1, 1, 16, 1, 2 },
        };
        for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
            if (want[k].exscan != e) {
                continue;
            }
            const char *algo = want[k].chain ? ring : direct;
            r = gc3_rules_match_call(R, c, 1, want[k].ranks, GC3_LINK_NVLINK, want[k].bytes, want[k].ranks, 1);
            CHECK(r && strcmp(r->algo, algo) == 0 && (r->channels > 0 ? r->channels : 1) == want[k].channels &&
                      (r->chunks_per_peer > 0 ? r->chunks_per_peer : 1) == want[k].chunks &&
                      r->instances == want[k].instances,
                  "%s, %d ranks, %u bytes: %s %dx%dx%d", algo, want[k].ranks, want[k].bytes, r ? r->algo : "-",
                  r ? r->channels : 0, r ? r->chunks_per_peer : 0, r ? r->instances : 0);
        }
        r = gc3_rules_match_call(R, c, 1, 3, GC3_LINK_HOST, 8, 3, 0);
        CHECK(r && strcmp(r->algo, ring) == 0, "%s host: %s", ring, r ? r->algo : "-");
        if (r != NULL) { /* the rule's program, run */
            gc3_rule_target_t t = {
                .ranks = 3, .nodes = 1, .inplace = 1, .slots = 4, .max_blocks = 1 << 20, .root = -1
            };
            gc3_rule_made_t   made;
            gc3_ir_program_t *p = NULL;
            CHECK(gc3_rule_program(r, &t, &diag, &p, &made) == GC3_OK && p && p->coll == c, "%s program: %s", ring,
                  diag.count ? diag.msgs[0] : "");
            if (p != NULL) {
                gc3_oracle_check(p, GC3_DT_FLOAT32, GC3_OP_SUM, (size_t)p->nchunksperloop * 5, 1, 4);
            }
            gc3_ir_program_destroy(p);
        }
    }
    gc3_rules_destroy(R);
    gc3_diag_cleanup(&diag);
}

int main(void)
{
    test_generators();
    test_rules();
    return gc3_test_summary("test_scan");
}
