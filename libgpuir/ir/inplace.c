/* gc3 / libgpuir: in-place calls (see gc3_ir.h): where a chunk of an in-place program lives, and
 * the out-of-place form of an in-place program (copy first). */
#include <stdlib.h>
#include <string.h>
#include "gc3_ir.h"
#include "gc3_verify.h"

int gc3_ir_inplace_alias(gc3_coll_t coll, int rank, int i_chunks, int o_chunks, gc3_buf_t buf, int chunk,
                         gc3_buf_t *home_buf_p, int *home_chunk_p)
{
    const gc3_coll_desc_t *d       = gc3_coll_desc(coll);
    const int              n_inner = d->inplace_inner == GC3_BUF_INPUT ? i_chunks : o_chunks;
    const int              n_home  = d->inplace_inner == GC3_BUF_INPUT ? o_chunks : i_chunks;
    /* allgather: the input is this rank's slice of the output; reduce_scatter: the output is this
     * rank's slice of the input; allreduce, alltoall, custom: one buffer, the same positions */
    const long             home    = d->inplace_slice ? (long)rank * n_inner + chunk : chunk;

    if (buf != d->inplace_inner || chunk < 0 || chunk >= n_inner || home >= n_home) {
        return 0;
    }
    *home_buf_p   = d->inplace_inner == GC3_BUF_INPUT ? GC3_BUF_OUTPUT : GC3_BUF_INPUT;
    *home_chunk_p = (int)home;
    return 1;
}

/* ---------------------------------------------------------------- copy first */

/* Where the chunks of one rank's in-place buffer go in the out-of-place program. */
typedef struct {
    const gc3_ir_program_t *p;
    int                     rank, ni, no, ns;
    int                     image;   /* 1: the whole in-place buffer is kept in scratch from chunk ns on
                                        (the output does not cover it: reduce_scatter), copied to the
                                        output at the end */
    int                     keep;    /* 1: a rooted collective's non-root, which has only one of the two
                                        buffers (gc3_coll_access): its steps name it in both kinds of
                                        call, nothing to copy or rename */
} gc3_cf_rank_t;

/* The out-of-place name of in-place chunk (buf, chunk) of this rank. */
static void gc3_cf_rename(const gc3_cf_rank_t *x, gc3_buf_t buf, int chunk, gc3_buf_t *buf_p, int *chunk_p)
{
    gc3_buf_t hb = buf;
    int       hc = chunk;

    if (x->keep) {
        *buf_p   = buf;
        *chunk_p = chunk;
        return;
    }
    (void)gc3_ir_inplace_alias(x->p->coll, x->rank, x->ni, x->no, buf, chunk, &hb, &hc);
    if (hb == GC3_BUF_INPUT && x->image) {
        *buf_p   = GC3_BUF_SCRATCH;
        *chunk_p = x->ns + hc;
    } else if (hb == GC3_BUF_INPUT) {
        /* allreduce, alltoall, custom with the output covering the input: output chunk hc is it */
        *buf_p   = GC3_BUF_OUTPUT;
        *chunk_p = hc;
    } else {
        *buf_p   = hb;
        *chunk_p = hc;
    }
}

/* Is every chunk of the in-place buffer a chunk of the output too (no scratch image needed)? An
 * input chunk that is not in the output must be input chunk c of a buffer whose output chunk c is it. */
static int gc3_cf_needs_image(const gc3_cf_rank_t *x)
{
    for (int c = 0; c < x->ni; c++) {
        gc3_buf_t hb;
        int       hc;
        if (gc3_ir_inplace_alias(x->p->coll, x->rank, x->ni, x->no, GC3_BUF_INPUT, c, &hb, &hc)) {
            continue;
        }
        if (!gc3_ir_inplace_alias(x->p->coll, x->rank, x->ni, x->no, GC3_BUF_OUTPUT, c, &hb, &hc) ||
            hb != GC3_BUF_INPUT || hc != c) {
            return 1;
        }
    }
    return 0;
}

typedef struct {
    gc3_buf_t sbuf;
    int       soff;
    gc3_buf_t dbuf;
    int       doff, cnt;
} gc3_cf_copy_t;

/* The copies of the prologue (every input chunk to its renamed place) or of the epilogue (the image's
 * output chunks to the output), in contiguous runs of at most max_cnt chunks. */
static int gc3_cf_copies(const gc3_cf_rank_t *x, int epilogue, int max_cnt, gc3_cf_copy_t *out)
{
    int n = 0;

    if (x->keep) {
        return 0;
    }
    if (!epilogue) {
        for (int c = 0; c < x->ni; c++) {
            gc3_buf_t db;
            int       dc;
            gc3_cf_rename(x, GC3_BUF_INPUT, c, &db, &dc);
            if (n > 0 && out[n - 1].dbuf == db && out[n - 1].doff + out[n - 1].cnt == dc &&
                out[n - 1].soff + out[n - 1].cnt == c && out[n - 1].cnt < max_cnt) {
                out[n - 1].cnt++;
            } else {
                out[n++] = (gc3_cf_copy_t){GC3_BUF_INPUT, c, db, dc, 1};
            }
        }
        return n;
    }
    for (int k = 0; k < x->no; k++) { /* the image's output chunks to the output */
        gc3_buf_t sb;
        int       sc;
        gc3_cf_rename(x, GC3_BUF_OUTPUT, k, &sb, &sc);
        if (sb == GC3_BUF_OUTPUT) {
            continue;
        }
        if (n > 0 && out[n - 1].soff + out[n - 1].cnt == sc && out[n - 1].doff + out[n - 1].cnt == k &&
            out[n - 1].cnt < max_cnt) {
            out[n - 1].cnt++;
        } else {
            out[n++] = (gc3_cf_copy_t){sb, sc, GC3_BUF_OUTPUT, k, 1};
        }
    }
    return n;
}

/* One rank: prologue (its blocks share the copies, then block 0 waits for all of them and the others
 * wait for block 0), the program's steps renamed, and with an image block 0's epilogue (after every
 * block's last step). */
static gc3_status_t gc3_cf_rank(const gc3_ir_program_t *p, int r, int max_cnt, gc3_ir_program_t *q)
{
    const gc3_ir_gpu_t *g = &p->gpus[r];
    gc3_ir_gpu_t       *qg = &q->gpus[r];
    gc3_cf_rank_t       x = {p, r, g->i_chunks, g->o_chunks, g->s_chunks, 0, 0};
    gc3_cf_copy_t      *pro = NULL, *epi = NULL;
    int                 npro, nepi = 0, ntbs = g->ntbs > 0 ? g->ntbs : 1;
    int                *pre = NULL, *last_cpy = NULL, barrier = -1;
    gc3_status_t        status = GC3_ERR_NO_MEMORY;

    x.keep  = gc3_coll_access(p->coll, p->root, r, GC3_BUF_INPUT) != (GC3_COLL_ACC_READ | GC3_COLL_ACC_WRITE) ||
             gc3_coll_access(p->coll, p->root, r, GC3_BUF_OUTPUT) != (GC3_COLL_ACC_READ | GC3_COLL_ACC_WRITE);
    x.image = !x.keep && gc3_cf_needs_image(&x);
    pro     = malloc(((size_t)x.ni + 1) * sizeof(*pro));
    epi     = malloc(((size_t)x.no + 1) * sizeof(*epi));
    pre     = calloc((size_t)ntbs, sizeof(int));
    last_cpy = malloc((size_t)ntbs * sizeof(int));
    if (pro == NULL || epi == NULL || pre == NULL || last_cpy == NULL) {
        goto out;
    }
    npro = gc3_cf_copies(&x, 0, max_cnt, pro);
    if (x.image) {
        nepi = gc3_cf_copies(&x, 1, max_cnt, epi);
    }
    qg->i_chunks = x.ni;
    qg->o_chunks = x.no;
    qg->s_chunks = x.ns + (x.image ? x.ni : 0);
    for (int t = 0; t < ntbs; t++) {
        gc3_ir_tb_t *tb;
        status = g->ntbs > 0 ? gc3_ir_add_tb(q, r, g->tbs[t].send, g->tbs[t].recv, g->tbs[t].chan, &tb)
                             : gc3_ir_add_tb(q, r, -1, -1, 0, &tb);
        if (status != GC3_OK) {
            goto out;
        }
        last_cpy[t] = -1;
    }
    /* the prologue's copies, dealt out in turn */
    for (int i = 0; i < npro; i++) {
        gc3_ir_tb_t *tb = &qg->tbs[i % ntbs];
        status = gc3_ir_add_step(tb, GC3_STEP_CPY, pro[i].sbuf, pro[i].soff, pro[i].dbuf, pro[i].doff, pro[i].cnt, -1,
                                 -1, NULL);
        if (status != GC3_OK) {
            goto out;
        }
        last_cpy[i % ntbs] = tb->nsteps - 1;
    }
    if (ntbs > 1) {
        for (int t = 1; t < ntbs; t++) { /* block 0 waits for every other block's copies */
            if (last_cpy[t] >= 0 && (status = gc3_ir_add_step(&qg->tbs[0], GC3_STEP_NOP, GC3_BUF_NONE, -1, GC3_BUF_NONE,
                                                               -1, 0, t, last_cpy[t], NULL)) != GC3_OK) {
                goto out;
            }
        }
        barrier = qg->tbs[0].nsteps - 1;
        for (int t = 1; t < ntbs && barrier >= 0; t++) { /* and the others wait for block 0 */
            if ((status = gc3_ir_add_step(&qg->tbs[t], GC3_STEP_NOP, GC3_BUF_NONE, -1, GC3_BUF_NONE, -1, 0, 0, barrier,
                                          NULL)) != GC3_OK) {
                goto out;
            }
        }
    }
    for (int t = 0; t < ntbs; t++) {
        pre[t] = qg->tbs[t].nsteps;
    }
    /* the program's steps, renamed, their dependencies moved past the prologues */
    for (int t = 0; t < g->ntbs; t++) {
        for (int s = 0; s < g->tbs[t].nsteps; s++) {
            const gc3_ir_step_t *st    = &g->tbs[t].steps[s];
            unsigned             flags = gc3_step_flags(st->type);
            gc3_buf_t            sb = st->srcbuf, db = st->dstbuf;
            int                  so = st->srcoff, dof = st->dstoff;
            if ((flags & GC3_STEP_F_READ_SRC) && st->cnt > 0) {
                gc3_cf_rename(&x, st->srcbuf, st->srcoff, &sb, &so);
            }
            if ((flags & (GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST)) && st->cnt > 0) {
                gc3_cf_rename(&x, st->dstbuf, st->dstoff, &db, &dof);
            }
            status = gc3_ir_add_step(&qg->tbs[t], st->type, sb, so, db, dof, st->cnt, st->depid,
                                     st->depid >= 0 && st->depid < ntbs ? st->deps + pre[st->depid] : st->deps, NULL);
            if (status != GC3_OK) {
                goto out;
            }
        }
    }
    /* the epilogue: block 0 waits for every other block's last step, then copies the output out */
    for (int t = 1; t < ntbs && nepi > 0; t++) {
        if (qg->tbs[t].nsteps > 0 && (status = gc3_ir_add_step(&qg->tbs[0], GC3_STEP_NOP, GC3_BUF_NONE, -1, GC3_BUF_NONE,
                                                                -1, 0, t, qg->tbs[t].nsteps - 1, NULL)) != GC3_OK) {
            goto out;
        }
    }
    for (int i = 0; i < nepi; i++) {
        status = gc3_ir_add_step(&qg->tbs[0], GC3_STEP_CPY, epi[i].sbuf, epi[i].soff, epi[i].dbuf, epi[i].doff,
                                 epi[i].cnt, -1, -1, NULL);
        if (status != GC3_OK) {
            goto out;
        }
    }
    status = GC3_OK;
out:
    free(pro);
    free(epi);
    free(pre);
    free(last_cpy);
    return status;
}

gc3_status_t gc3_ir_copy_first(const gc3_ir_program_t *p, gc3_ir_program_t **q_p)
{
    gc3_ir_program_t *q;
    gc3_status_t      status;
    int               max_cnt = 1;

    *q_p = NULL;
    if (!p->inplace) {
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_ir_program_create(p->name, p->coll, p->ngpus, p->nchunksperloop, &q);
    if (status != GC3_OK) {
        return status;
    }
    free(q->coll_name);
    q->coll_name = strdup(p->coll_name ? p->coll_name : gc3_coll_name(p->coll));
    q->source    = p->source ? strdup(p->source) : NULL;
    if (q->coll_name == NULL || (p->source != NULL && q->source == NULL)) {
        status = GC3_ERR_NO_MEMORY;
        goto err;
    }
    q->proto      = p->proto;
    q->nchannels  = p->nchannels;
    q->inplace    = 0;
    q->outofplace = 1;
    q->root       = p->root;
    q->min_bytes  = p->min_bytes;
    q->max_bytes  = p->max_bytes;
    q->fifo_cap   = p->fifo_cap;
    if (p->post != NULL && (status = gc3_postcond_builtin(p, NULL, &q->post)) != GC3_OK) {
        goto err;
    }
    /* copies no larger than the program's largest step: the runtime's tile (what one step's chunks
       may hold) stays what it is */
    for (int r = 0; r < p->ngpus; r++) {
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++) {
                max_cnt = p->gpus[r].tbs[t].steps[s].cnt > max_cnt ? p->gpus[r].tbs[t].steps[s].cnt : max_cnt;
            }
        }
    }
    for (int r = 0; r < p->ngpus; r++) {
        if ((status = gc3_cf_rank(p, r, max_cnt, q)) != GC3_OK) {
            goto err;
        }
    }
    gc3_ir_update_hasdep(q);
    *q_p = q;
    return GC3_OK;
err:
    gc3_ir_program_destroy(q);
    return status;
}
