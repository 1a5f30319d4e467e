/* Cost model: unit parsing, the parameter table, and the qualitative behaviour the selection relies on.
 * Its agreement with measured times is checked against the CSVs of doc/measurements by
 * contrib/gc3-cost-check (unit_cost_check). */
#include <math.h>
#include <string.h>
#include "gc3_algorithms.h"
#include "gc3_cost.h"
#include "gc3_test.h"

static double predict(const gc3_ir_program_t *p, const gc3_machine_t *m, uint64_t bytes)
{
    double     t = -1;
    gc3_diag_t diag;
    gc3_diag_init(&diag);
    CHECK_OK(gc3_cost_predict(p, m, bytes, &diag, &t));
    gc3_diag_cleanup(&diag);
    return t;
}

/* A ring of `channels` x `instances` blocks per rank, generated for nodes x gpus ranks. */
static gc3_ir_program_t *wide_ring(int nranks, int channels, int instances)
{
    gc3_algo_params_t ap;
    gc3_ir_program_t *p = NULL;
    gc3_algo_params_default(&ap, nranks);
    ap.channels  = channels;
    ap.instances = instances;
    ap.verify    = 0;
    CHECK_OK(gc3_algo_generate("ring", &ap, NULL, NULL, &p));
    return p;
}

int main(void)
{
    double            v;
    gc3_machine_t     m;
    gc3_ir_program_t       *ring = NULL, *allpairs = NULL, *wide = NULL;
    int                     nparams;
    const gc3_cost_param_t *params = gc3_cost_params(&nparams);

    CHECK(gc3_parse_bandwidth("450GB/s", &v) == GC3_OK && v == 450.0, "450GB/s");
    CHECK(gc3_parse_bandwidth("200Gb/s", &v) == GC3_OK && v == 25.0, "200Gb/s = 25 GB/s");
    CHECK(gc3_parse_bandwidth("fast", &v) == GC3_ERR_PARSE, "garbage bandwidth accepted");
    CHECK(gc3_parse_bandwidth("-3GB/s", &v) == GC3_ERR_PARSE, "negative bandwidth accepted");
    CHECK(gc3_parse_time_us("1.5us", &v) == GC3_OK && v == 1.5, "1.5us");
    CHECK(gc3_parse_time_us("700ns", &v) == GC3_OK && fabs(v - 0.7) < 1e-12, "700ns");

    /* the parameter table: every entry named, documented, with a source; set by name, +X adds */
    gc3_machine_default(&m, 1, 4);
    CHECK(nparams > 10, "the parameter table has %d entries", nparams);
    for (int i = 0; i < nparams; i++) {
        CHECK(params[i].name && params[i].unit && params[i].what && params[i].from && params[i].what[0] &&
                  params[i].from[0],
              "parameter %d undocumented", i);
        CHECK(*(const double *)((const char *)&m + params[i].offset) == params[i].value, "%s: default not applied",
              params[i].name);
    }
    CHECK(gc3_machine_set(&m, "intra_bw_GBps", "400GB/s") == GC3_OK && m.intra_bw_GBps == 400.0, "set by name");
    CHECK(gc3_machine_set(&m, "end_us", "+1.5") == GC3_OK && fabs(m.end_us - 1.2 - 1.5) < 1e-12, "+X adds");
    CHECK(gc3_machine_set(&m, "host_us", "700ns") == GC3_OK && fabs(m.host_us - 0.7) < 1e-12, "a time with its unit");
    CHECK(gc3_machine_set(&m, "no_such", "1") == GC3_ERR_INVALID_PARAM, "an unknown parameter accepted");
    CHECK(gc3_machine_set(&m, "step_us", "fast") == GC3_ERR_PARSE, "a bad value accepted");

    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/ring_allreduce_4.xml", NULL, &ring));
    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/allpairs_allreduce_4.xml", NULL, &allpairs));
    wide = wide_ring(4, 16, 8);
    if (ring == NULL || allpairs == NULL || wide == NULL) {
        return gc3_test_summary("test_cost");
    }
    gc3_machine_default(&m, 1, 4);
    {
        double r_small = predict(ring, &m, 1024), a_small = predict(allpairs, &m, 1024);
        double r_big = predict(ring, &m, 1ull << 30), a_big = predict(allpairs, &m, 1ull << 30);
        double bus1 = 2.0 * 3 / 4 * (double)(1ull << 26) / (predict(ring, &m, 1ull << 26) * 1e3); /* busbw GB/s */
        double busw = 2.0 * 3 / 4 * (double)(1ull << 30) / (predict(wide, &m, 1ull << 30) * 1e3);
        printf("ring 1KB %.2f us, allpairs(LL) 1KB %.2f us; ring 1GB %.0f us, allpairs(LL) 1GB %.0f us; busbw: ring of "
               "one block 64 MB %.1f GB/s, 16 x 8 ring 1 GB %.0f GB/s\n",
               r_small, a_small, r_big, a_big, bus1, busw);
        CHECK(a_small < r_small, "all-pairs must beat the ring at 1 KB (%f vs %f)", a_small, r_small);
        CHECK(r_big < a_big, "the ring must beat LL all-pairs at 1 GB (%f vs %f)", r_big, a_big);
        /* one block per rank moves what one block can: 17 GB/s busbw measured at 64 MB on 4 x H200
         * (doc/performance.md, gc3_rt_bench); 128 blocks fill the links (338-356 GB/s measured) */
        CHECK(bus1 > 10.0 && bus1 < 30.0, "a ring of one block per rank: busbw %.1f GB/s, measured 17", bus1);
        CHECK(busw > 0.8 * m.intra_bw_GBps && busw <= m.intra_bw_GBps * 1.001,
              "16 x 8 ring busbw %.1f must approach the link bandwidth %.1f", busw, m.intra_bw_GBps);
        CHECK(predict(ring, &m, 1 << 20) < predict(ring, &m, 1 << 24), "time grows with size");
    }
    {
        gc3_machine_t slow = m;
        slow.intra_bw_GBps = m.intra_bw_GBps / 2;
        CHECK(predict(wide, &slow, 1ull << 28) > 1.8 * predict(wide, &m, 1ull << 28) - 20,
              "half bandwidth, ~twice the time");
    }
    {
        gc3_machine_t two;
        double        t;
        gc3_machine_default(&two, 2, 2); /* the same ring across two nodes crosses the network */
        t = predict(wide, &two, 1ull << 26);
        CHECK(t > 2.0 * predict(wide, &m, 1ull << 26), "network hops must cost more than NVLink");
        gc3_machine_default(&two, 3, 2);
        CHECK(gc3_cost_predict(ring, &two, 1024, NULL, &t) == GC3_ERR_INVALID_PARAM, "shape mismatch accepted");
    }
    {
        /* between nodes, host-staged against GPUDirect: the staging copies cost on top of the wire;
         * on one node nothing changes; a copy much faster than the wire costs little */
        gc3_machine_t gd, st, fast, one = m;
        gc3_machine_default(&gd, 2, 2);
        gd.net_bw_GBps = 50.0; /* 400 Gb/s */
        st             = gd;
        st.stage_bw_GBps = 25.0;
        fast             = gd;
        fast.stage_bw_GBps = 1e6;
        fast.stage_alpha_us = 0.0;
        one.stage_bw_GBps   = 25.0;
        double g_small = predict(wide, &gd, 1024), s_small = predict(wide, &st, 1024);
        double g_big = predict(wide, &gd, 1ull << 28), s_big = predict(wide, &st, 1ull << 28);
        printf("2 x 2 ring 16 x 8, GPUDirect / host-staged at 25 GB/s: 1 KB %.2f / %.2f us, 256 MB %.0f / %.0f us\n",
               g_small, s_small, g_big, s_big);
        CHECK(s_small > g_small + st.stage_alpha_us, "host-staged pays the reads' round trip (%f vs %f)", s_small, g_small);
        CHECK(s_big > 1.5 * g_big, "host-staged at half the wire's rate must be much slower at 256 MB (%f vs %f)", s_big,
              g_big);
        CHECK(fabs(predict(wide, &fast, 1ull << 28) - g_big) < 0.01 * g_big, "an instant staging copy costs nothing");
        CHECK(predict(wide, &one, 1ull << 26) == predict(wide, &m, 1ull << 26), "staging does not touch one node");
        st.stage_bw_GBps = -1;
        CHECK(gc3_cost_predict(ring, &st, 1024, NULL, &v) == GC3_ERR_INVALID_PARAM, "a negative staging bandwidth accepted");
    }
    {
        /* zero-copy: the same ring with its messages read in place runs in the model, every message of a
         * Simple ring left in place (its rrs given homes); copying it is no zero-copy */
        gc3_cost_call_t   call;
        gc3_cost_result_t res;
        gc3_diag_t        diag;
        gc3_diag_init(&diag);
        gc3_cost_call_default(&call);
        call.zero_copy = 1;
        CHECK_OK(gc3_cost_predict_call(wide, &m, &call, 1ull << 26, &diag, &res));
        CHECK(res.msgs > 0 && res.zc_msgs == res.msgs, "zero-copy ring: %d of %d messages in place", res.zc_msgs,
              res.msgs);
        CHECK(res.time_us > res.fixed_us && res.slowest_us >= res.time_us - 1e-9, "the parts of a call");
        call.zero_copy = 0;
        CHECK_OK(gc3_cost_predict_call(wide, &m, &call, 1ull << 26, &diag, &res));
        CHECK(res.zc_msgs == 0, "copying ring: %d messages in place", res.zc_msgs);
        gc3_diag_cleanup(&diag);
    }
    gc3_ir_program_destroy(ring);
    gc3_ir_program_destroy(allpairs);
    gc3_ir_program_destroy(wide);
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_cost");
}
