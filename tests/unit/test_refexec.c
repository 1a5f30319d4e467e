/* Reference executor against a direct computation of each collective (an oracle that
 * shares nothing with the IR: plain loops over ranks and elements). */
#include <string.h>
#include "gc3_refexec.h"
#include "gc3_test.h"
#include "gc3_oracle.h"

/* the elementwise operators, checked against literal values */
static void test_ops(void)
{
    int32_t  a[4] = {3, -7, 12, INT32_MAX}, b[4] = {5, 2, -12, 1};
    uint8_t  u[2] = {0xF0, 0x0F}, v[2] = {0x3C, 0xFF};
    double   x[2] = {1.5, -2.0}, y[2] = {2.0, 4.0};
    int32_t  t[4];

    memcpy(t, a, sizeof(t));
    CHECK_OK(gc3_reduce_host(GC3_DT_INT32, GC3_OP_SUM, t, b, 4));
    CHECK(t[0] == 8 && t[1] == -5 && t[2] == 0 && t[3] == INT32_MIN, "int32 sum (wraps like the hardware)");
    memcpy(t, a, sizeof(t));
    CHECK_OK(gc3_reduce_host(GC3_DT_INT32, GC3_OP_MIN, t, b, 4));
    CHECK(t[0] == 3 && t[1] == -7 && t[2] == -12 && t[3] == 1, "int32 min");
    memcpy(t, a, sizeof(t));
    CHECK_OK(gc3_reduce_host(GC3_DT_INT32, GC3_OP_MAX, t, b, 4));
    CHECK(t[0] == 5 && t[1] == 2 && t[2] == 12 && t[3] == INT32_MAX, "int32 max");
    memcpy(t, a, sizeof(t));
    CHECK_OK(gc3_reduce_host(GC3_DT_INT32, GC3_OP_PROD, t, b, 3));
    CHECK(t[0] == 15 && t[1] == -14 && t[2] == -144, "int32 prod");
    CHECK_OK(gc3_reduce_host(GC3_DT_UINT8, GC3_OP_BXOR, u, v, 2));
    CHECK(u[0] == 0xCC && u[1] == 0xF0, "uint8 bxor");
    CHECK_OK(gc3_reduce_host(GC3_DT_UINT8, GC3_OP_BAND, u, v, 2));
    CHECK(u[0] == 0x0C && u[1] == 0xF0, "uint8 band");
    CHECK_OK(gc3_reduce_host(GC3_DT_FLOAT64, GC3_OP_PROD, x, y, 2));
    CHECK(x[0] == 3.0 && x[1] == -8.0, "float64 prod");
    CHECK(gc3_reduce_host(GC3_DT_FLOAT32, GC3_OP_BOR, x, y, 1) == GC3_ERR_INVALID_PARAM, "bor on floats refused");
}

typedef struct {
    const char *file;
    gc3_coll_t  coll;
    int         ranks;
} prog_t;

static void test_programs(void)
{
    const prog_t progs[] = {
        {"ring_allreduce_4", GC3_COLL_ALLREDUCE, 4},     {"allpairs_allreduce_4", GC3_COLL_ALLREDUCE, 4},
        {"legacy_ring_allreduce_3", GC3_COLL_ALLREDUCE, 3}, {"direct_alltoall_4", GC3_COLL_ALLTOALL, 4},
        {"ring_allgather_3", GC3_COLL_ALLGATHER, 3},     {"ring_reduce_scatter_3", GC3_COLL_REDUCE_SCATTER, 3},
    };
    int cases = 0;

    for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
        char              path[512];
        gc3_ir_program_t *p = NULL;
        snprintf(path, sizeof(path), GC3_CORPUS "/valid/%s.xml", progs[i].file);
        CHECK_OK(gc3_ir_read_file(path, NULL, &p));
        if (p == NULL) {
            continue;
        }
        CHECK(p->coll == progs[i].coll && p->ngpus == progs[i].ranks, "%s: unexpected shape", path);
        for (int dt = 0; dt < GC3_DT_COUNT; dt++) {
            for (int op = 0; op < GC3_OP_COUNT; op++) {
                const size_t counts[] = {(size_t)p->nchunksperloop, (size_t)p->nchunksperloop * 37, (size_t)p->nchunksperloop * 1024};
                if (!gc3_op_valid((gc3_op_t)op, (gc3_dtype_t)dt) ||
                    (p->coll != GC3_COLL_ALLREDUCE && p->coll != GC3_COLL_REDUCE_SCATTER && op != GC3_OP_SUM)) {
                    continue;
                }
                for (int k = 0; k < 3; k++) {
                    size_t count = counts[k];
                    if (p->coll != GC3_COLL_ALLREDUCE) {
                        count = count / (size_t)p->ngpus + 1; /* per-peer count: chunks per peer divide any */
                    }
                    for (int inplace = 0; inplace <= 1; inplace++) {
                        if (inplace ? !p->inplace : !p->outofplace) {
                            continue;
                        }
                        gc3_oracle_check(p, (gc3_dtype_t)dt, (gc3_op_t)op, count, inplace, 2);
                        cases++;
                    }
                }
            }
        }
        gc3_ir_program_destroy(p);
    }
    CHECK(cases > 200, "only %d cases ran", cases);
    printf("test_refexec: %d collective cases checked against the direct computation\n", cases);
}

static void test_refusals(void)
{
    gc3_ir_program_t  *p = NULL;
    gc3_refexec_args_t args = {GC3_DT_FLOAT32, GC3_OP_BXOR, 1, 0, 8, 0};
    float              buf[4][4];
    void              *io[4] = {buf[0], buf[1], buf[2], buf[3]};
    gc3_diag_t         diag;

    gc3_diag_init(&diag);
    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/valid/legacy_ring_allreduce_3.xml", NULL, &p));
    if (p == NULL) {
        return;
    }
    CHECK(gc3_refexec_run(p, &args, io, io, &diag) == GC3_ERR_INVALID_PARAM &&
          gc3_diag_contains(&diag, "bxor is not defined on float32"), "bxor on float accepted");
    args.op      = GC3_OP_SUM;
    args.inplace = 1;
    CHECK(gc3_refexec_run(p, &args, io, io, &diag) == GC3_ERR_UNSUPPORTED, "in-place run of out-of-place program");
    gc3_ir_program_destroy(p);
    /* a deadlocking program returns the deadlock, it does not hang */
    CHECK_OK(gc3_ir_read_file(GC3_CORPUS "/invalid/order_deadlock.xml", NULL, &p));
    if (p != NULL) {
        args.inplace = 0;
        CHECK(gc3_refexec_run(p, &args, io, io, &diag) == GC3_ERR_DEADLOCK, "deadlock not returned");
        gc3_ir_program_destroy(p);
    }
    gc3_diag_cleanup(&diag);
}

int main(void)
{
    test_ops();
    test_programs();
    test_refusals();
    gc3_ir_xml_cleanup();
    return gc3_test_summary("test_refexec");
}
