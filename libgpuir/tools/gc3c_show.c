/* gc3c show: a program per rank and thread block. */
#include "gc3c.h"

int cmd_show(int argc, char **argv)
{
    gc3_ir_program_t *p;

    if (argc != 1) {
        fprintf(stderr, "gc3c show: exactly one FILE\n");
        return 2;
    }
    p = gc3c_load(argv[0]);
    if (p == NULL) {
        return 1;
    }
    printf("%s: %s '%s', %d ranks, %d chunks/loop, %d channels, protocol %s%s,%s%s%s\n", argv[0], p->coll_name, p->name,
           p->ngpus, p->nchunksperloop, p->nchannels, gc3_proto_name(p->proto),
           gc3_proto_runs_as(p->proto) != p->proto ? " (runs as Simple)" : "", p->outofplace ? " out-of-place" : "",
           p->inplace ? " in-place" : "",
           p->msccl_inplace
               ? (p->coll == GC3_COLL_ALLGATHER        ? " (MSCCL's in-place form: i_chunks=0 in the file, input "
                                                         "chunk k is output chunk rank*i+k)"
                  : p->coll == GC3_COLL_REDUCE_SCATTER ? " (MSCCL's in-place form: o_chunks=0 in the file, "
                                                         "output chunk k is input chunk rank*o+k)"
                  : p->coll == GC3_COLL_BCAST          ? " (MSCCL's in-place form: i_chunks=0 in the file, "
                                                         "input chunk c is output chunk c)"
                                                       : " (MSCCL's in-place form: o_chunks=0 in the file, "
                                                         "output chunk c is input chunk c)")
               : "");
    for (int r = 0; r < p->ngpus; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        printf("rank %d: chunks i=%d o=%d s=%d, %d thread blocks\n", r, g->i_chunks, g->o_chunks, g->s_chunks, g->ntbs);
        for (int t = 0; t < g->ntbs; t++) {
            const gc3_ir_tb_t *tb = &g->tbs[t];
            printf("  tb %d: send %d recv %d chan %d, %d steps\n", t, tb->send, tb->recv, tb->chan, tb->nsteps);
            for (int s = 0; s < tb->nsteps; s++) {
                const gc3_ir_step_t *st = &tb->steps[s];
                printf("    %3d %-4s", s, gc3_step_type_name(st->type));
                if (gc3_step_flags(st->type) & GC3_STEP_F_READ_SRC) {
                    printf(" src %c[%d..%d]", gc3_buf_char(st->srcbuf), st->srcoff, st->srcoff + st->cnt - 1);
                }
                if (gc3_step_flags(st->type) & GC3_STEP_F_WRITE_DST) {
                    printf(" dst %c[%d..%d]", gc3_buf_char(st->dstbuf), st->dstoff, st->dstoff + st->cnt - 1);
                }
                if (gc3_step_flags(st->type) & GC3_STEP_F_RECV) {
                    printf(" <-%d", tb->recv);
                }
                if (gc3_step_flags(st->type) & GC3_STEP_F_SEND) {
                    printf(" ->%d", tb->send);
                }
                if (st->depid >= 0) {
                    printf(" after tb %d step %d", st->depid, st->deps);
                }
                printf("%s\n", st->hasdep ? " (signals)" : "");
            }
        }
    }
    gc3_ir_program_destroy(p);
    return 0;
}
