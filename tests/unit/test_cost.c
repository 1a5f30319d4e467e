/* Cost model: unit parsing and the qualitative behaviour the selection relies on. */
#include <math.h>
#include <string.h>
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

int main(void)
{
    double            v;
    gc3_machine_t     m;
    gc3_ir_program_t *ring = NULL, *allpairs = NULL;

    CHECK(gc3_parse_bandwidth("450GB/s", &v) == GC3_OK && v == 450.0, "450GB/s");
    CHECK(gc3_parse_bandwidth("200Gb/s", &v) == GC3_OK && v == 25.0, "200Gb/s = 25 GB/s");
    CHECK(gc3_parse_bandwidth("fast", &v) == GC3_ERR_PARSE, "garbage bandwidth accepted");
    CHECK(gc3_parse_bandwidth("-3GB/s", &v) == GC3_ERR_PARSE, "negative bandwidth accepted");
    CHECK(gc3_parse_time_us("1.5us", &v) == GC3_OK && v == 1.5, "1.5us");
    CHECK(gc3_parse_time_us("700ns", &v) == GC3_OK && fabs(v - 0.7) < 1e-12, "700ns");

    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/ring_allreduce_4.xml", NULL, &ring));
    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/allpairs_allreduce_4.xml", NULL, &allpairs));
    if (ring == NULL || allpairs == NULL) {
        return gc3_test_summary("test_cost");
    }
    gc3_machine_default(&m, 1, 4);
    {
        double r_small = predict(ring, &m, 1024), a_small = predict(allpairs, &m, 1024);
        double r_big = predict(ring, &m, 1ull << 30), a_big = predict(allpairs, &m, 1ull << 30);
        double bus = 2.0 * 3 / 4 * (double)(1ull << 30) / (r_big * 1e3); /* busbw GB/s */
        printf("ring 1KB %.2f us, allpairs(LL) 1KB %.2f us; ring 1GB %.0f us (busbw %.0f GB/s), allpairs(LL) 1GB %.0f us\n",
               r_small, a_small, r_big, bus, a_big);
        CHECK(a_small < r_small, "all-pairs must beat the ring at 1 KB (%f vs %f)", a_small, r_small);
        CHECK(r_big < a_big, "the ring must beat LL all-pairs at 1 GB (%f vs %f)", r_big, a_big);
        CHECK(bus > 0.8 * m.intra_bw_GBps && bus <= m.intra_bw_GBps * 1.001,
              "ring busbw %.1f must approach the link bandwidth %.1f", bus, m.intra_bw_GBps);
        CHECK(predict(ring, &m, 1 << 20) < predict(ring, &m, 1 << 24), "time grows with size");
    }
    {
        gc3_machine_t slow = m;
        slow.intra_bw_GBps = m.intra_bw_GBps / 2;
        CHECK(predict(ring, &slow, 1ull << 28) > 1.8 * predict(ring, &m, 1ull << 28) - 20, "half bandwidth, ~twice the time");
    }
    {
        gc3_machine_t two;
        double        t;
        gc3_machine_default(&two, 2, 2); /* the same ring across two nodes crosses the network */
        t = predict(ring, &two, 1ull << 26);
        CHECK(t > 2.0 * predict(ring, &m, 1ull << 26), "network hops must cost more than NVLink");
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
        double g_small = predict(ring, &gd, 1024), s_small = predict(ring, &st, 1024);
        double g_big = predict(ring, &gd, 1ull << 28), s_big = predict(ring, &st, 1ull << 28);
        printf("2 x 2 ring, GPUDirect / host-staged at 25 GB/s: 1 KB %.2f / %.2f us, 256 MB %.0f / %.0f us\n", g_small,
               s_small, g_big, s_big);
        CHECK(s_small > g_small + st.stage_alpha_us, "host-staged pays the reads' round trip (%f vs %f)", s_small, g_small);
        CHECK(s_big > 1.5 * g_big, "host-staged at half the wire's rate must be much slower at 256 MB (%f vs %f)", s_big,
              g_big);
        CHECK(fabs(predict(ring, &fast, 1ull << 28) - g_big) < 0.01 * g_big, "an instant staging copy costs nothing");
        CHECK(predict(ring, &one, 1ull << 26) == predict(ring, &m, 1ull << 26), "staging does not touch one node");
        st.stage_bw_GBps = -1;
        CHECK(gc3_cost_predict(ring, &st, 1024, NULL, &v) == GC3_ERR_INVALID_PARAM, "a negative staging bandwidth accepted");
    }
    gc3_ir_program_destroy(ring);
    gc3_ir_program_destroy(allpairs);
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_cost");
}
