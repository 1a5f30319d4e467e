/* Selection rules: the built-in ones parse, matching follows the documented ranges, and every
 * malformed line is reported with its line number (nothing is half-read). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "gc3_rules.h"
#include "gc3_test.h"

int main(void)
{
    gc3_rules_t      *R = NULL;
    gc3_diag_t        diag;
    const gc3_rule_t *r;

    gc3_diag_init(&diag);
    CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
    CHECK(R != NULL && R->n >= 8, "built-in rules: %d", R ? R->n : -1);
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 3, GC3_LINK_NVLINK, 0);
    CHECK(r && !strcmp(r->algo, "allpairs") && r->proto_set && r->proto == GC3_PROTO_LL, "0 bytes: all-pairs LL");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 2, GC3_LINK_PCIE, 65536);
    CHECK(r && !strcmp(r->algo, "allpairs"), "pcie: 64K is still small (A < bytes <= B)");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 2, GC3_LINK_PCIE, 65537);
    CHECK(r && !strcmp(r->algo, "ring") && r->channels == 4 && r->instances == 2, "pcie: 64K+1: the 4x2 ring");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 3, GC3_LINK_NVLINK, 131072);
    CHECK(r && !strcmp(r->algo, "allpairs"), "nvlink: all-pairs LL up to 128K");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 3, GC3_LINK_NVLINK, 131073);
    CHECK(r && !strcmp(r->algo, "ring") && r->channels == 2 && r->instances == 0, "nvlink: 128K+1: the 2-channel ring");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 3, GC3_LINK_NVLINK, 4194305);
    CHECK(r && !strcmp(r->algo, "ring") && r->channels == 8 && r->instances == 4, "nvlink: 4M+1: the 8x4 ring");
    /* the measured 2- and 4-GPU NVLink rules come first for those shapes */
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 2, GC3_LINK_NVLINK, 32768);
    CHECK(r && !strcmp(r->algo, "oneshot") && r->proto == GC3_PROTO_LL && r->instances == 4,
          "2 GPUs: 32K: one-shot LL x4");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 2, GC3_LINK_NVLINK, 32769);
    CHECK(r && !strcmp(r->algo, "ring") && !r->proto_set && r->channels == 4 && r->instances == 4,
          "2 GPUs: 32K+1: the 4x4 ring");
    r = gc3_rules_match(R, GC3_COLL_ALLTOALL, 1, 2, GC3_LINK_NVLINK, 1 << 30);
    CHECK(r && !strcmp(r->algo, "direct") && r->instances == 16, "2 GPUs: alltoall 1 GB: direct x16");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 2, GC3_LINK_PCIE, 8);
    CHECK(r && !strcmp(r->algo, "allpairs"), "2 GPUs on PCIe: the generic rules");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 8);
    CHECK(r && !strcmp(r->algo, "oneshot") && r->proto == GC3_PROTO_LL && r->instances == 8,
          "4 GPUs: 8 B: one-shot LL x8");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 131072);
    CHECK(r && !strcmp(r->algo, "oneshot") && r->instances == 8, "4 GPUs: 128K: one-shot LL x8");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 131073);
    CHECK(r && !strcmp(r->algo, "allpairs") && r->proto == GC3_PROTO_LL && r->instances == 16,
          "4 GPUs: 128K+1: all-pairs LL x16");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 524289);
    CHECK(r && !strcmp(r->algo, "allpairs") && !r->proto_set && r->instances == 16 && r->no_zc,
          "4 GPUs: 512K+1: all-pairs Simple x16 through the FIFOs");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 1 << 30);
    CHECK(r && !strcmp(r->algo, "ring") && r->channels == 16 && r->instances == 8, "4 GPUs: 1 GB: the 16x8 ring");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 1 << 24);
    CHECK(r && !strcmp(r->algo, "ring") && r->channels == 16 && r->instances == 4, "4 GPUs: 16 MB: the 16x4 ring");
    r = gc3_rules_match(R, GC3_COLL_ALLTOALL, 1, 4, GC3_LINK_NVLINK, 1 << 20);
    CHECK(r && !strcmp(r->algo, "direct") && r->instances == 8 && r->no_zc,
          "4 GPUs: alltoall 1 MB: direct x8 through the FIFOs");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_PCIE, 8);
    CHECK(r && !strcmp(r->algo, "allpairs"), "4 GPUs on PCIe: the generic rules");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_HOST, 1 << 20);
    CHECK(r && !strcmp(r->algo, "ring") && r->channels == 0, "host: a plain ring");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 2, 4, GC3_LINK_NVLINK, 8);
    CHECK(r && !strcmp(r->algo, "hierarchical") && r->proto == GC3_PROTO_LL, "two nodes: 8 B: hierarchical LL");
    r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 128, 8, GC3_LINK_NVLINK, 1 << 30);
    CHECK(r && !strcmp(r->algo, "hierarchical") && !r->proto_set, "128 nodes: 1 GB: hierarchical Simple");
    r = gc3_rules_match(R, GC3_COLL_ALLTOALL, 3, 2, GC3_LINK_HOST, 1 << 20);
    CHECK(r && !strcmp(r->algo, "twostep") && !r->proto_set, "three (pseudo-)nodes: alltoall 1 MB: two-step Simple");
    r = gc3_rules_match(R, GC3_COLL_ALLTOALL, 16, 8, GC3_LINK_NVLINK, 1024);
    CHECK(r && !strcmp(r->algo, "direct") && r->proto == GC3_PROTO_LL, "16 nodes: alltoall 1 KB: direct LL");
    CHECK(gc3_rules_match(R, GC3_COLL_CUSTOM, 1, 4, GC3_LINK_NVLINK, 8) == NULL, "no rule for another collective");
    gc3_rules_destroy(R);

    {
        const char *text = "# comment\n"
                           "\n"
                           "*  1-2  4  *  *  ring  channels=2   # trailing comment\n"
                           "alltoall * * pcie 1M-inf twostep chunks_per_peer=3\n"
                           "allgather 5-* 2 * * allgather_ring\n";
        CHECK_OK(gc3_rules_parse(text, "t", &diag, &R));
        if (R != NULL) {
            CHECK(R->n == 3 && !strcmp(R->rules[0].where, "t:3") && !strcmp(R->rules[1].where, "t:4"), "where");
            CHECK(gc3_rules_match(R, GC3_COLL_ALLGATHER, 4, 2, GC3_LINK_HOST, 8) == NULL &&
                      gc3_rules_match(R, GC3_COLL_ALLGATHER, 5, 2, GC3_LINK_HOST, 8) == &R->rules[2] &&
                      gc3_rules_match(R, GC3_COLL_ALLGATHER, 1000, 2, GC3_LINK_HOST, 8) == &R->rules[2],
                  "5-*: five nodes or more");
            r = gc3_rules_match(R, GC3_COLL_ALLREDUCE, 2, 4, GC3_LINK_PCIE, 8);
            CHECK(r == &R->rules[0], "first match wins");
            CHECK(R->rules[0].coll == GC3_COLL_ALLREDUCE &&
                      gc3_rules_match(R, GC3_COLL_ALLTOALL, 2, 4, GC3_LINK_PCIE, 8) == NULL,
                  "'*' with ring: allreduce only (the one collective ring runs)");
            r = gc3_rules_match(R, GC3_COLL_ALLTOALL, 3, 4, GC3_LINK_PCIE, 2u << 20);
            CHECK(r == &R->rules[1] && r->chunks_per_peer == 3, "second rule by nodes and size");
            CHECK(gc3_rules_match(R, GC3_COLL_ALLTOALL, 3, 4, GC3_LINK_PCIE, 1u << 20) == NULL, "1M is not above 1M");
            gc3_rules_destroy(R);
        }
    }
    {
        const char *bad = "allreduce 1 * * 0-1M ring\n"
                          "bogus 1 * * * ring\n"
                          "allreduce 0 * * * ring\n"
                          "allreduce 1 * * 9-3 ring\n"
                          "allreduce 1 * copper * ring\n"
                          "allreduce 1 * * * ring instances=0\n"
                          "allreduce 1 * * *\n"
                          "allreduce * * * * superfast\n"
                          "alltoall 1 * * * ring\n"
                          "allreduce 1 * * * ring zero_copy=maybe\n"
                          "allreduce 1 * * * ring channels=0 channels=1 channels=1 channels=1 channels=1 channels=1 "
                          "channels=1 channels=1 channels=1 channels=1 channels=1 channels=1 channels=1 channels=1 "
                          "channels=1 channels=1 channels=1 channels=1 channels=1 channels=1 channels=1 channels=1 "
                          "channels=1 channels=1 channels=1 channels=1 instances=0\n"
                          "allgather 1 * * * allgather_ring channels=2\n"
                          "reduce_scatter 1 * * * reduce_scatter_ring channels=4 chunks_per_peer=2\n"
                          "reduce_scatter 1 * * * reduce_scatter_ring channels=4 chunks_per_peer=1\n";
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK(gc3_rules_parse(bad, "bad", &diag, &R) == GC3_ERR_PARSE && R == NULL, "malformed rules accepted");
        CHECK(gc3_diag_contains(&diag, "bad:2: unknown collective 'bogus'"), "line 2");
        CHECK(gc3_diag_contains(&diag, "bad:3: nodes and gpus must be"), "line 3");
        CHECK(gc3_diag_contains(&diag, "bad:4: bytes must be"), "line 4");
        CHECK(gc3_diag_contains(&diag, "bad:5: link must be"), "line 5");
        CHECK(gc3_diag_contains(&diag, "bad:6: instances=0: expected an integer in [1, 1024]"), "line 6");
        CHECK(gc3_diag_contains(&diag, "bad:7: expected 'collective nodes gpus link bytes algorithm"), "line 7");
        CHECK(gc3_diag_contains(&diag, "bad:8: unknown algorithm 'superfast' (gc3c list names them)"), "line 8");
        CHECK(gc3_diag_contains(&diag, "bad:9: algorithm 'ring' is for allreduce, not alltoall"), "line 9");
        CHECK(gc3_diag_contains(&diag, "bad:10: zero_copy must be on, pull or off (found 'maybe')"), "line 10");
        CHECK(gc3_diag_contains(&diag, "bad:11: more than 32 fields (6 and the keys)"), "line 11: a 33rd field");
        CHECK(!gc3_diag_contains(&diag, "bad:11: channels=0"), "line 11 is not read as its first 32 fields");
        CHECK(gc3_diag_contains(&diag, "bad:12: allgather_ring does not take channels (gc3c list says what each "
                                       "generator takes)"),
              "line 12: a key the generator does not read");
        CHECK(gc3_diag_contains(&diag, "bad:13: reduce_scatter_ring does not take chunks_per_peer"), "line 13");
        CHECK(!gc3_diag_contains(&diag, "bad:14:"), "line 14 is fine (channels taken, chunks per peer 1)");
        CHECK(!gc3_diag_contains(&diag, "bad:1:"), "line 1 is fine");
    }
    {
        /* zero_copy=off: the rule's programs copy every message (a runtime field, in the program's hash) */
        gc3_rule_target_t t  = {4, 1, 0, 4, 1 << 20, 0};
        gc3_rule_made_t   made;
        gc3_ir_program_t *p0 = NULL, *p1 = NULL;
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        gc3_ir_program_t *p2 = NULL;
        CHECK_OK(gc3_rules_parse("allreduce 1 * * 0-1M ring zero_copy=off\nallreduce 1 * * 1M-4M ring zero_copy=on\n"
                                 "allreduce 1 * * 4M-inf ring zero_copy=pull\n",
                                 "zc", &diag, &R));
        if (R != NULL) {
            CHECK(R->rules[0].no_zc == 1 && R->rules[1].no_zc == 0 && R->rules[2].no_zc == 0, "zero_copy parsed");
            CHECK(R->rules[0].zc_pull == 0 && R->rules[1].zc_pull == 0 && R->rules[2].zc_pull == 1,
                  "zero_copy=pull parsed");
            CHECK_OK(gc3_rule_program(&R->rules[0], &t, &diag, &p0, &made));
            CHECK_OK(gc3_rule_program(&R->rules[1], &t, &diag, &p1, &made));
            CHECK_OK(gc3_rule_program(&R->rules[2], &t, &diag, &p2, &made));
            CHECK(p0 != NULL && p1 != NULL && p0->no_zc == 1 && p1->no_zc == 0 && gc3_ir_hash(p0) != gc3_ir_hash(p1),
                  "zero_copy=off reaches the program and its hash");
            CHECK(p1 != NULL && p2 != NULL && p2->zc_pull == 1 && p1->zc_pull == 0 &&
                      gc3_ir_hash(p1) != gc3_ir_hash(p2),
                  "zero_copy=pull reaches the program and its hash");
            CHECK(p0 != NULL && p1 != NULL && p2 != NULL && p0->max_bytes == (1u << 20) &&
                      p1->max_bytes == (4u << 20) && p2->max_bytes == 0,
                  "a rule's program sized for the rule's largest call (none for 4M-inf)");
            gc3_ir_program_destroy(p0);
            gc3_ir_program_destroy(p1);
            gc3_ir_program_destroy(p2);
            gc3_rules_destroy(R);
            R = NULL;
        }
    }
    {
        /* the size every caller counts a call by: a segment's bytes times the larger side's segments */
        CHECK(gc3_coll_call_bytes(GC3_COLL_ALLREDUCE, 4, 1000) == 1000 &&
                  gc3_coll_call_bytes(GC3_COLL_BCAST, 4, 7) == 7 && gc3_coll_call_bytes(GC3_COLL_SCAN, 5, 8) == 8 &&
                  gc3_coll_call_bytes(GC3_COLL_ALLGATHER, 4, 1000) == 4000 &&
                  gc3_coll_call_bytes(GC3_COLL_ALLTOALL, 3, 10) == 30 &&
                  gc3_coll_call_bytes(GC3_COLL_REDUCE_SCATTER, 4, 16) == 64 &&
                  gc3_coll_call_bytes(GC3_COLL_GATHER, 5, 2) == 10 && gc3_coll_call_bytes(GC3_COLL_SCATTER, 2, 3) == 6,
              "gc3_coll_call_bytes: segment bytes x segments of the larger side");
        gc3_coll_t c = GC3_COLL_CUSTOM;
        int        v = -1;
        CHECK(gc3_coll_from_call_name("alltoallv", &c, &v) == GC3_OK && c == GC3_COLL_ALLTOALL && v == 1 &&
                  gc3_coll_from_call_name("scatterv", &c, &v) == GC3_OK && c == GC3_COLL_SCATTER && v == 1 &&
                  gc3_coll_from_call_name("bcast", &c, &v) == GC3_OK && c == GC3_COLL_BCAST && v == 0 &&
                  gc3_coll_from_call_name("alltoallw", &c, &v) == GC3_ERR_UNSUPPORTED &&
                  gc3_coll_from_name("alltoallv", &c) == GC3_ERR_UNSUPPORTED,
              "a v-call's name: its plain collective for the tools, not for rules");
    }
    {
        /* LL128: accepted, and said to run as Simple (as the runtime runs it) */
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_rules_parse("allreduce 1 * * * ring proto=LL128\n", "ll128", &diag, &R));
        CHECK(gc3_diag_contains(&diag, "ll128:1: proto=LL128: gc3 has no LL128, the rule runs as proto=Simple"),
              "LL128 rule: the warning");
        gc3_rules_destroy(R);
        R = NULL;
    }
    {
        /* an algorithm directory: its programs come first, matched by rank count, mode and size */
        int added = -1;
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, GC3_SOURCE_DIR "/tests/mpi/algorithms", &diag, &added));
        CHECK(added == 4, "4 usable programs, found %d", added);
        CHECK(gc3_diag_contains(&diag, "broken.xml: skipped"), "the broken file is reported");
        r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 3, GC3_LINK_NVLINK, 1 << 20, 3, 0);
        CHECK(r && r->xml && strstr(r->xml, "/ring3.xml") && r->channels == 2, "3 ranks out of place: ring3.xml");
        r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 3, GC3_LINK_NVLINK, 1 << 20, 3, 1);
        CHECK(r && r->xml == NULL, "in place: ring3.xml is out-of-place only, a built-in rule");
        r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 4, GC3_LINK_NVLINK, 8, 4, 0);
        CHECK(r && r->xml && strstr(r->xml, "/allpairs4.xml"), "4 ranks: allpairs4.xml");
        r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 2, GC3_LINK_NVLINK, 8, 2, 0);
        CHECK(r && r->xml == NULL, "2 ranks: no program of the directory");
        r = gc3_rules_match_call(R, GC3_COLL_ALLTOALL, 1, 3, GC3_LINK_NVLINK, 1024, 3, 0);
        CHECK(r && r->xml && strstr(r->xml, "/direct3-1K-1M.xml"), "alltoall 1K: minBytes is included");
        r = gc3_rules_match_call(R, GC3_COLL_ALLTOALL, 1, 3, GC3_LINK_NVLINK, 1048576, 3, 0);
        CHECK(r && r->xml && strstr(r->xml, "/direct3-1K-1M.xml"), "alltoall 1M: maxBytes is included");
        r = gc3_rules_match_call(R, GC3_COLL_ALLTOALL, 1, 3, GC3_LINK_NVLINK, 1023, 3, 0);
        CHECK(r && r->xml == NULL, "alltoall below minBytes: built-in");
        r = gc3_rules_match_call(R, GC3_COLL_ALLTOALL, 1, 3, GC3_LINK_NVLINK, 1048577, 3, 0);
        CHECK(r && r->xml == NULL, "alltoall above maxBytes: built-in");
        /* one identity per collective: coll="reduce_scatter_block" is the reduce-scatter calls ask for */
        r = gc3_rules_match_call(R, GC3_COLL_REDUCE_SCATTER, 1, 3, GC3_LINK_HOST, 4096, 3, 0);
        CHECK(r && r->xml && strstr(r->xml, "/rsb3.xml") && r->coll == GC3_COLL_REDUCE_SCATTER, "reduce_scatter_block program");
        CHECK(gc3_rules_add_xml_dir(R, "/nonexistent/gc3-algorithms", &diag, &added) == GC3_ERR_IO && added == 0 &&
              gc3_diag_contains(&diag, "/nonexistent/gc3-algorithms: cannot open"), "missing directory");
        gc3_rules_destroy(R);
        R = NULL;
    }
    {
        /* the in-place corpus (MSCCL's form): every file loads, serves in-place and out-of-place calls
           (copy first) in its size range */
        int added = -1;
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, GC3_CORPUS "/msccl", &diag, &added));
        CHECK(added == 13 && diag.count == 0, "13 programs of the in-place corpus, found %d (%s)", added,
              diag.count ? diag.msgs[0] : "");
        for (int inplace = 0; inplace <= 1; inplace++) {
            r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 8, GC3_LINK_HOST, 4096, 8, inplace);
            CHECK(r && r->xml && strstr(r->xml, "/allreduce-allpairs-8n-ll-35tb.xml") && r->proto == GC3_PROTO_LL,
                  "8 ranks 4K %s: the LL file", inplace ? "in place" : "out of place");
            r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 8, GC3_LINK_HOST, 4097, 8, inplace);
            CHECK(r && r->xml && strstr(r->xml, "/allreduce-allpairs-8n-ll128-56tb.xml") && r->proto == GC3_PROTO_LL128,
                  "8 ranks 4K+1: the LL128 file (minBytes)");
            r = gc3_rules_match_call(R, GC3_COLL_ALLREDUCE, 1, 8, GC3_LINK_HOST, 65537, 8, inplace);
            CHECK(r && r->xml && strstr(r->xml, "/allreduce-allpairs-8n-simple-56tb.xml"), "8 ranks 64K+1: the Simple file");
            r = gc3_rules_match_call(R, GC3_COLL_REDUCE_SCATTER, 1, 8, GC3_LINK_HOST, 1 << 20, 8, inplace);
            CHECK(r && r->xml && strstr(r->xml, "/reducescatter-ring-8n-inplace.xml"), "coll=\"reducescatter\" (RCCL's spelling)");
            r = gc3_rules_match_call(R, GC3_COLL_ALLGATHER, 1, 4, GC3_LINK_HOST, 1 << 20, 4, inplace);
            CHECK(r && r->xml && strstr(r->xml, "/allgather-ring-4n-inplace.xml"), "allgather with i_chunks=0");
            if (r != NULL) {
                /* the rule holds the program read and verified once; a plan gets its own copy, in its
                   out-of-place form for out-of-place calls (verified: a new program) */
                gc3_rule_target_t t = {.ranks = 4, .nodes = 1, .inplace = inplace, .slots = 8, .max_blocks = 1 << 20};
                gc3_rule_made_t   made;
                gc3_ir_program_t *p = NULL;
                CHECK(r->program != NULL && r->program->inplace && !r->program->outofplace, "the loaded program");
                CHECK_OK(gc3_rule_program(r, &t, &diag, &p, &made));
                CHECK(p != NULL && p != r->program && made.copied == !inplace && p->outofplace == !inplace &&
                          (!inplace || gc3_ir_equal(p, r->program)),
                      "%s: the rule's program %s", inplace ? "in place" : "out of place",
                      inplace ? "copied" : "in its copy-first form");
                gc3_ir_program_destroy(p);
                t.max_blocks = 1;
                CHECK(gc3_rule_program(r, &t, &diag, &p, &made) == GC3_ERR_UNSUPPORTED && p == NULL &&
                          gc3_diag_contains(&diag, "at most 1 can run at once"),
                      "a program wider than the plan's blocks is refused");
            }
        }
        gc3_rules_destroy(R);
        R = NULL;
    }
    {
        /* a file verified with the default 8 FIFO slots, a plan with fewer: verified again with the
           plan's, refused when it deadlocks with them (deep_alltoall_2 sends 6 messages on one
           connection before it receives) */
        int               added = -1;
        gc3_rule_target_t t     = {.ranks = 2, .nodes = 1, .inplace = 0, .slots = 8, .max_blocks = 1 << 20};
        gc3_rule_made_t   made;
        gc3_ir_program_t *p = NULL;
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, GC3_CORPUS "/valid", &diag, &added));
        r = gc3_rules_match_call(R, GC3_COLL_ALLTOALL, 1, 2, GC3_LINK_NVLINK, 1 << 20, 2, 0);
        CHECK(r && r->xml && strstr(r->xml, "/deep_alltoall_2.xml"), "2 ranks alltoall: deep_alltoall_2.xml");
        if (r != NULL) {
            CHECK_OK(gc3_rule_program(r, &t, &diag, &p, &made));
            gc3_ir_program_destroy(p);
            t.slots = 6;
            CHECK_OK(gc3_rule_program(r, &t, &diag, &p, &made));
            gc3_ir_program_destroy(p);
            t.slots = 5;
            CHECK(gc3_rule_program(r, &t, &diag, &p, &made) == GC3_ERR_DEADLOCK && p == NULL &&
                      gc3_diag_contains(&diag, "deep_alltoall_2.xml: needs more than the plan's 5 FIFO slots per "
                                               "connection (deadlocks with them; it was verified with 8)"),
                  "5 slots: refused, saying why");
        }
        gc3_rules_destroy(R);
        R = NULL;
    }
    {
        /* messages are never cut: a program and a rules file in a folder of a 600-character path
           (deeper than any fixed buffer the messages went through) keep their whole path in the
           rule's location and in every message, however long the line */
        char              dir[1024], path[1200], want[1400], *text;
        size_t            len = 0;
        int               added = -1, made_dir;
        FILE             *f;
        gc3_rule_target_t t = {.ranks = 2, .nodes = 1, .inplace = 0, .slots = 5, .max_blocks = 1 << 20};
        gc3_rule_made_t   made;
        gc3_ir_program_t *p = NULL;
        snprintf(dir, sizeof(dir), "/tmp/gc3-test-rules-%d", (int)getpid());
        made_dir = mkdir(dir, 0700) == 0;
        for (int i = 0; made_dir && strlen(dir) < 600; i++) {
            size_t n = strlen(dir);
            snprintf(dir + n, sizeof(dir) - n, "/a-deep-folder-of-a-long-checkout-path-%02d", i);
            made_dir = mkdir(dir, 0700) == 0;
        }
        text = gc3_test_slurp(GC3_CORPUS "/valid/deep_alltoall_2.xml", &len);
        snprintf(path, sizeof(path), "%s/deep_alltoall_2.xml", dir);
        f = made_dir && text ? fopen(path, "w") : NULL;
        CHECK(f != NULL && fwrite(text, 1, len, f) == len && fclose(f) == 0, "a program at a path of %zu characters",
              strlen(path));
        free(text);
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, dir, &diag, &added));
        r = gc3_rules_match_call(R, GC3_COLL_ALLTOALL, 1, 2, GC3_LINK_NVLINK, 1 << 20, 2, 0);
        CHECK(added == 1 && r && r->xml && !strcmp(r->xml, path) && !strcmp(r->where, path),
              "the rule names the whole path");
        snprintf(want, sizeof(want), "%s: needs more than the plan's 5 FIFO slots per connection (deadlocks with them; "
                 "it was verified with 8)", path);
        CHECK(r && gc3_rule_program(r, &t, &diag, &p, &made) == GC3_ERR_DEADLOCK && diag.count > 0 &&
                  !strcmp(diag.msgs[0], want), "the whole message: %s", diag.count ? diag.msgs[0] : "(none)");
        gc3_rules_destroy(R);
        R = NULL;
        unlink(path);
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        snprintf(path, sizeof(path), "%s/site.rules", dir);
        f = made_dir ? fopen(path, "w") : NULL;
        CHECK(f != NULL && fputs("allreduce 1 * * * nosuchalgo\n", f) >= 0 && fclose(f) == 0, "a rules file there");
        snprintf(want, sizeof(want), "%s:1: unknown algorithm 'nosuchalgo' (gc3c list names them)", path);
        CHECK(gc3_rules_read_file(path, &diag, &R) == GC3_ERR_PARSE && diag.count == 1 && !strcmp(diag.msgs[0], want),
              "its error names the whole path: %s", diag.count ? diag.msgs[0] : "(none)");
        unlink(path);
        for (char *slash; made_dir && rmdir(dir) == 0 && (slash = strrchr(dir, '/')) != NULL &&
                          strncmp(dir, "/tmp/gc3-test-rules-", 20) == 0 && strchr(dir + 5, '/') != NULL;) {
            *slash = '\0';
        }
        {
            /* a message of any length is kept whole; a fixed buffer's text that does not fit says so */
            char   big[3000], small[24];
            memset(big, 'x', sizeof(big) - 1);
            big[sizeof(big) - 1] = '\0';
            gc3_diag_add(&diag, "%s%s", big, "<end>");
            CHECK(diag.count == 2 && strlen(diag.msgs[1]) == sizeof(big) - 1 + 5 && strstr(diag.msgs[1], "<end>"),
                  "a diagnostic of 3004 characters, whole");
            CHECK(gc3_snprintf_cut(small, sizeof(small), "%s", big) == (int)sizeof(big) - 1 &&
                      strlen(small) == sizeof(small) - 1 && strstr(small, GC3_CUT_MARK) != NULL &&
                      strcmp(small + sizeof(small) - sizeof(GC3_CUT_MARK), GC3_CUT_MARK) == 0,
                  "a fixed buffer's cut text ends " GC3_CUT_MARK ": %s", small);
            CHECK(gc3_snprintf_cut(small, sizeof(small), "%s", "fits") == 4 && !strcmp(small, "fits"), "text that fits");
        }
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
    }
    {
        /* a well-formed file of the algorithm directory that does not verify: the verifier's error line
           itself names the file (not only the "skipped" line after it; issue 56) */
        char   dir[256], path[512], want[1024], *text;
        size_t len   = 0;
        int    added = -1, named = 0;
        FILE  *f;
        snprintf(dir, sizeof(dir), "/tmp/gc3-test-rules-verify-%d", (int)getpid());
        snprintf(path, sizeof(path), "%s/double_contribution.xml", dir);
        text = gc3_test_slurp(GC3_CORPUS "/invalid/double_contribution.xml", &len);
        f    = text && mkdir(dir, 0700) == 0 ? fopen(path, "w") : NULL;
        CHECK(f != NULL && fwrite(text, 1, len, f) == len && fclose(f) == 0, "a file that does not verify in %s", dir);
        free(text);
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        CHECK_OK(gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R));
        CHECK_OK(gc3_rules_add_xml_dir(R, dir, &diag, &added));
        snprintf(want, sizeof(want),
                 "%s: rank 1 tb 0 step 2 (re, loop 0, out-of-place): the reduction counts the "
                 "contribution of rank.chunk 1.1 twice",
                 path);
        for (int i = 0; i < diag.count; i++) { /* once: "PATH: PATH:" is not naming it */
            named += strncmp(diag.msgs[i], path, strlen(path)) == 0 && strstr(diag.msgs[i] + 1, path) == NULL;
        }
        CHECK(added == 0 && gc3_diag_contains(&diag, want), "the verification error names the file: %s",
              diag.count ? diag.msgs[0] : "(none)");
        CHECK(diag.count >= 2 && named == diag.count, "every line names the file (%d of %d)", named, diag.count);
        gc3_rules_destroy(R);
        R = NULL;
        unlink(path);
        rmdir(dir);
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
    }
    {
        /* a generator's rule: its parameters, narrowed to the plan's blocks when it must be */
        gc3_rule_target_t t = {.ranks = 4, .nodes = 1, .inplace = 0, .slots = 8, .max_blocks = 1 << 20};
        gc3_rule_made_t   made;
        gc3_ir_program_t *p = NULL;
        CHECK_OK(gc3_rules_parse("allreduce 1 * * * ring channels=4 instances=4\n", "wide", &diag, &R));
        CHECK_OK(gc3_rule_program(&R->rules[0], &t, &diag, &p, &made));
        CHECK(p != NULL && p->coll == GC3_COLL_ALLREDUCE && !made.narrowed && made.channels == 4 && made.instances == 4 &&
                  gc3_ir_widest_rank(p) == 16, "ring 4 x 4: %d blocks", p ? gc3_ir_widest_rank(p) : -1);
        gc3_ir_program_destroy(p);
        t.max_blocks = 4;
        CHECK_OK(gc3_rule_program(&R->rules[0], &t, &diag, &p, &made));
        CHECK(p != NULL && made.narrowed && made.asked_channels == 4 && made.asked_instances == 4 &&
                  made.channels * made.instances <= 4 && gc3_ir_widest_rank(p) <= 4,
              "narrowed to 4 blocks: %d x %d", made.channels, made.instances);
        gc3_ir_program_destroy(p);
        gc3_rules_destroy(R);
        R = NULL;
        /* the channels a program uses, not those asked: the direct scan has one a peer (3 on 4 ranks) */
        t.max_blocks = 1 << 20;
        CHECK_OK(gc3_rules_parse("scan 1 * * * scan_direct channels=8 instances=2\n", "direct", &diag, &R));
        CHECK_OK(gc3_rule_program(&R->rules[0], &t, &diag, &p, &made));
        CHECK(p != NULL && !made.narrowed && made.channels == 3 && made.instances == 2 && made.asked_channels == 8,
              "scan_direct channels=8 on 4 ranks: %d x %d", made.channels, made.instances);
        gc3_ir_program_destroy(p);
        gc3_rules_destroy(R);
        R = NULL;
    }
    CHECK(gc3_rules_read_file("/nonexistent/gc3.rules", &diag, &R) == GC3_ERR_IO && R == NULL &&
          gc3_diag_contains(&diag, "/nonexistent/gc3.rules: cannot open"), "missing file");
    gc3_diag_cleanup(&diag);
    return gc3_test_summary("test_rules");
}
