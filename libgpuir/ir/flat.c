/* gc3 / libgpuir: the flat form, one pointer-free allocation a kernel can walk. */
#include <stdlib.h>
#include <string.h>
#include "gc3_ir.h"

static size_t gc3_align8(size_t x)
{
    return (x + 7u) & ~(size_t)7u;
}

/* One step of rank g in its flat form; 0 when it names a type, buffer or dependency that does not exist. */
static int gc3_flat_step(const gc3_ir_gpu_t *g, const gc3_ir_step_t *st, gc3_flat_step_t *fs)
{
    if ((unsigned)st->type >= GC3_STEP_COUNT || st->srcbuf < GC3_BUF_NONE || st->srcbuf >= GC3_BUF_COUNT ||
        st->dstbuf < GC3_BUF_NONE || st->dstbuf >= GC3_BUF_COUNT) {
        return 0;
    }
    if (st->depid >= 0 && (st->depid >= g->ntbs || st->deps < 0 || st->deps >= g->tbs[st->depid].nsteps)) {
        return 0;
    }
    fs->type     = (uint8_t)st->type;
    fs->srcbuf   = st->srcbuf == GC3_BUF_NONE ? GC3_FLAT_BUF_NONE : (uint8_t)st->srcbuf;
    fs->dstbuf   = st->dstbuf == GC3_BUF_NONE ? GC3_FLAT_BUF_NONE : (uint8_t)st->dstbuf;
    fs->hasdep   = (uint8_t)(st->hasdep != 0);
    fs->srcoff   = st->srcoff;
    fs->dstoff   = st->dstoff;
    fs->cnt      = st->cnt;
    fs->dep_tb   = st->depid >= 0 ? st->depid : -1;
    fs->dep_step = st->depid >= 0 ? st->deps : -1;
    return 1;
}

gc3_status_t gc3_flat_create(const gc3_ir_program_t *p, gc3_flat_program_t **flat_p)
{
    gc3_flat_program_t *f;
    gc3_flat_rank_t    *ranks;
    gc3_flat_tb_t      *tbs;
    gc3_flat_step_t    *steps;
    size_t              ntbs = 0, nsteps = 0, bytes;
    int                 ti = 0, si = 0;

    *flat_p = NULL;
    for (int r = 0; r < p->ngpus; r++) {
        ntbs += (size_t)p->gpus[r].ntbs;
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            nsteps += (size_t)p->gpus[r].tbs[t].nsteps;
        }
    }
    if (ntbs > INT32_MAX || nsteps > INT32_MAX) {
        return GC3_ERR_INVALID_PARAM;
    }
    bytes = gc3_align8(sizeof(*f)) + gc3_align8((size_t)p->ngpus * sizeof(*ranks)) +
            gc3_align8(ntbs * sizeof(*tbs)) + nsteps * sizeof(*steps);
    f = calloc(1, bytes);
    if (f == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    f->magic          = GC3_FLAT_MAGIC;
    f->coll           = p->coll;
    f->proto          = p->proto;
    f->nranks         = p->ngpus;
    f->nchunksperloop = p->nchunksperloop;
    f->nchannels      = p->nchannels;
    f->inplace        = p->inplace;
    f->outofplace     = p->outofplace;
    f->root           = p->root;
    f->ntbs           = (int32_t)ntbs;
    f->nsteps         = (int32_t)nsteps;
    f->bytes          = bytes;
    f->ranks_off      = gc3_align8(sizeof(*f));
    f->tbs_off        = f->ranks_off + gc3_align8((size_t)p->ngpus * sizeof(*ranks));
    f->steps_off      = f->tbs_off + gc3_align8(ntbs * sizeof(*tbs));
    ranks             = (gc3_flat_rank_t *)((char *)f + f->ranks_off);
    tbs               = (gc3_flat_tb_t *)((char *)f + f->tbs_off);
    steps             = (gc3_flat_step_t *)((char *)f + f->steps_off);

    for (int r = 0; r < p->ngpus; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        ranks[r].i_chunks     = g->i_chunks;
        ranks[r].o_chunks     = g->o_chunks;
        ranks[r].s_chunks     = g->s_chunks;
        ranks[r].ntbs         = g->ntbs;
        ranks[r].tb_begin     = ti;
        for (int t = 0; t < g->ntbs; t++, ti++) {
            const gc3_ir_tb_t *tb = &g->tbs[t];
            if (tb->send < -1 || tb->send >= p->ngpus || tb->recv < -1 || tb->recv >= p->ngpus) {
                goto err_invalid;
            }
            tbs[ti].send       = tb->send;
            tbs[ti].recv       = tb->recv;
            tbs[ti].chan       = tb->chan;
            tbs[ti].nsteps     = tb->nsteps;
            tbs[ti].step_begin = si;
            tbs[ti].rank       = r;
            for (int s = 0; s < tb->nsteps; s++, si++) {
                if (!gc3_flat_step(g, &tb->steps[s], &steps[si])) {
                    goto err_invalid;
                }
            }
        }
    }
    *flat_p = f;
    return GC3_OK;

err_invalid:
    free(f);
    return GC3_ERR_VERIFY;
}

void gc3_flat_destroy(gc3_flat_program_t *flat)
{
    free(flat);
}

/* chunks [a, a+na) and [b, b+nb) share nothing */
static int gc3_flat_apart(int a, int na, int b, int nb)
{
    return a + na <= b || b + nb <= a;
}

/* Can re step b join the run that starts with step a? */
static int gc3_flat_joins(const gc3_flat_step_t *a, const gc3_flat_step_t *b)
{
    return b->type == GC3_STEP_RE && b->dstbuf == a->dstbuf && b->dstoff == a->dstoff && b->cnt == a->cnt &&
           b->srcbuf == GC3_BUF_SCRATCH &&
           (a->dstbuf != GC3_BUF_SCRATCH || gc3_flat_apart(b->srcoff, b->cnt, a->dstoff, a->cnt));
}

int gc3_flat_fuse(gc3_flat_program_t *f, int rank, int max_srcs)
{
    const gc3_flat_rank_t *r     = &gc3_flat_ranks(f)[rank];
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    gc3_flat_step_t       *steps = (gc3_flat_step_t *)((char *)f + f->steps_off);
    int                    runs  = 0;

    for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
        gc3_flat_step_t *st = &steps[tbs[t].step_begin];
        const int        n  = tbs[t].nsteps;
        for (int s = 0; s < n;) {
            const gc3_flat_step_t *a = &st[s];
            int                    k = 0;
            /* the first step reads its source chunk by chunk while it writes dst: the same chunks or
             * others (by index, whatever the buffers: in place, input and output are one) */
            if ((a->type == GC3_STEP_CPY || a->type == GC3_STEP_RE) && a->cnt > 0 && a->dstbuf != GC3_FLAT_BUF_NONE &&
                (a->srcoff == a->dstoff || gc3_flat_apart(a->srcoff, a->cnt, a->dstoff, a->cnt))) {
                int srcs = a->type == GC3_STEP_RE ? 2 : 1;
                while (s + k + 1 < n && srcs < max_srcs && !st[s + k].hasdep && gc3_flat_joins(a, &st[s + k + 1])) {
                    k++;
                    srcs++;
                }
            }
            st[s].fuse = k;
            runs += k > 0;
            s += k + 1;
        }
    }
    return runs;
}

int gc3_flat_peer_receiver(const gc3_flat_program_t *f, int rank, int tb)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    const gc3_flat_tb_t   *me    = &tbs[ranks[rank].tb_begin + tb];

    if (me->send < 0) {
        return -1;
    }
    for (int t = 0; t < ranks[me->send].ntbs; t++) {
        const gc3_flat_tb_t *q = &tbs[ranks[me->send].tb_begin + t];
        if (q->recv == rank && q->chan == me->chan) {
            return t;
        }
    }
    return -1;
}

int gc3_flat_peer_sender(const gc3_flat_program_t *f, int rank, int tb)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    const gc3_flat_tb_t   *me    = &tbs[ranks[rank].tb_begin + tb];

    if (me->recv < 0) {
        return -1;
    }
    for (int t = 0; t < ranks[me->recv].ntbs; t++) {
        const gc3_flat_tb_t *q = &tbs[ranks[me->recv].tb_begin + t];
        if (q->send == rank && q->chan == me->chan) {
            return t;
        }
    }
    return -1;
}

int gc3_flat_nlocations(const gc3_flat_program_t *f, int rank)
{
    const gc3_flat_rank_t *r = &gc3_flat_ranks(f)[rank];
    return r->i_chunks + r->o_chunks + r->s_chunks;
}

int gc3_flat_location(const gc3_flat_program_t *f, int rank, int inplace, int buf, int chunk)
{
    const gc3_flat_rank_t *r = &gc3_flat_ranks(f)[rank];
    int                    ni = r->i_chunks, no = r->o_chunks;
    gc3_buf_t              hb;
    int                    hc;

    if (chunk < 0 || chunk >= (buf == GC3_BUF_INPUT ? ni : buf == GC3_BUF_OUTPUT ? no
                                : buf == GC3_BUF_SCRATCH ? r->s_chunks : 0)) {
        return -1;
    }
    if (inplace && gc3_ir_inplace_alias((gc3_coll_t)f->coll, rank, ni, no, (gc3_buf_t)buf, chunk, &hb, &hc)) {
        buf   = hb; /* one buffer: the chunk is a chunk of the other one */
        chunk = hc;
    }
    switch (buf) {
    case GC3_BUF_INPUT:   return chunk;
    case GC3_BUF_OUTPUT:  return ni + chunk;
    case GC3_BUF_SCRATCH: return ni + no + chunk;
    default:              return -1;
    }
}
