/* gc3 / libgpuir: the verifier (see gc3_verify.h). */
#include <stdlib.h>
#include <string.h>
#include "gc3_verify.h"
#include "gc3_sim.h"

void gc3_verify_opts_default(gc3_verify_opts_t *opts)
{
    memset(opts, 0, sizeof(*opts));
    opts->slots        = 8;
    opts->nloops       = 2;
    opts->check_races  = 1;
    opts->race_max_tbs = 2048;
}

/* ================================================================ structure */

#define GC3_AT(p, r, t, s) (p)->source ? (p)->source : (p)->name, (s) ? (s)->line : (t) ? (t)->line : (p)->gpus[r].line

static int gc3_buf_chunks(const gc3_ir_gpu_t *g, gc3_buf_t buf)
{
    switch (buf) {
    case GC3_BUF_INPUT:   return g->i_chunks;
    case GC3_BUF_OUTPUT:  return g->o_chunks;
    case GC3_BUF_SCRATCH: return g->s_chunks;
    default:              return -1;
    }
}

static const char *gc3_buf_long(gc3_buf_t buf)
{
    return gc3_sim_buffer_name(buf);
}

static void gc3_check_range(const gc3_ir_program_t *p, int r, const gc3_ir_tb_t *tb, const gc3_ir_step_t *st,
                            const char *what, gc3_buf_t buf, int off, gc3_diag_t *diag, int *errors)
{
    const gc3_ir_gpu_t *g = &p->gpus[r];
    int                 n = gc3_buf_chunks(g, buf);

    if (buf == GC3_BUF_NONE) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d (%s): %sbuf is missing", GC3_AT(p, r, tb, st), r, tb->id,
                     st->s, gc3_step_type_name(st->type), what);
        (*errors)++;
    } else if (off < 0 || st->cnt < 0 || (long)off + st->cnt > n) {
        gc3_buf_t hb;
        int       hc = 0, slice = 0;
        char      why[160] = "";
        /* in place, the buffer inside the other is a slice of it: say which */
        if (p->inplace && n > 0 && gc3_coll_desc(p->coll)->inplace_slice &&
            gc3_ir_inplace_alias(p->coll, r, g->i_chunks, g->o_chunks, buf, 0, &hb, &hc)) {
            slice = 1;
        }
        if (slice) {
            gc3_snprintf_cut(why, sizeof(why), " (in place, rank %d's %s is its slice of the %s: %s chunks [%d, %d))", r,
                     gc3_buf_long(buf), gc3_buf_long(hb), gc3_buf_long(hb), hc, hc + n);
        }
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d (%s): %s chunks [%d, %d) are outside the %s buffer of %d chunks%s",
                     GC3_AT(p, r, tb, st), r, tb->id, st->s, gc3_step_type_name(st->type), what, off, off + st->cnt,
                     gc3_buf_long(buf), n, why);
        (*errors)++;
    }
}

/* The list of steps of `tb` that have `flag` (send or receive), in order. */
static int gc3_collect(const gc3_ir_tb_t *tb, unsigned flag, const gc3_ir_step_t **out)
{
    int n = 0;
    for (int s = 0; s < tb->nsteps; s++) {
        if (gc3_step_flags(tb->steps[s].type) & flag) {
            out[n++] = &tb->steps[s];
        }
    }
    return n;
}

static void gc3_check_pairs(const gc3_ir_program_t *p, int r, const gc3_ir_tb_t *tb, gc3_diag_t *diag, int *errors)
{
    const gc3_ir_gpu_t   *pg;
    const gc3_ir_tb_t    *rt = NULL;
    const gc3_ir_step_t **sends, **recvs;
    int                   ns, nr;

    if (tb->send < 0 || tb->send >= p->ngpus || tb->send == r) {
        return;
    }
    pg = &p->gpus[tb->send];
    for (int t = 0; t < pg->ntbs; t++) {
        if (pg->tbs[t].recv == r && pg->tbs[t].chan == tb->chan) {
            rt = &pg->tbs[t];
            break;
        }
    }
    sends = malloc((size_t)(tb->nsteps + 1) * sizeof(*sends));
    recvs = malloc((size_t)((rt ? rt->nsteps : 0) + 1) * sizeof(*recvs));
    if (sends == NULL || recvs == NULL) {
        gc3_diag_add(diag, "out of memory while matching sends and receives");
        (*errors)++;
        goto out;
    }
    ns = gc3_collect(tb, GC3_STEP_F_SEND, sends);
    nr = rt ? gc3_collect(rt, GC3_STEP_F_RECV, recvs) : 0;
    if (rt == NULL) {
        if (ns > 0) {
            gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d sends to rank %d on channel %d, but no thread block of rank "
                         "%d has recv=\"%d\" chan=\"%d\"", GC3_AT(p, r, tb, sends[0]), r, tb->id, sends[0]->s, tb->send,
                         tb->chan, tb->send, r, tb->chan);
            (*errors)++;
        }
        goto out;
    }
    for (int i = 0; i < ns && i < nr; i++) {
        if (sends[i]->cnt != recvs[i]->cnt) {
            gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d sends %d chunks but its matching receive, rank %d tb %d "
                         "step %d, takes %d (send/receive #%d on channel %d)", GC3_AT(p, r, tb, sends[i]), r, tb->id,
                         sends[i]->s, sends[i]->cnt, tb->send, rt->id, recvs[i]->s, recvs[i]->cnt, i, tb->chan);
            (*errors)++;
            goto out;
        }
    }
    if (ns != nr) {
        if (ns > nr) {
            gc3_diag_add(diag, "%s:%d: rank %d tb %d sends %d messages to rank %d on channel %d but rank %d tb %d "
                         "receives only %d (step %d has no matching receive)", GC3_AT(p, r, tb, sends[nr]), r, tb->id,
                         ns, tb->send, tb->chan, tb->send, rt->id, nr, sends[nr]->s);
        } else {
            gc3_diag_add(diag, "%s:%d: rank %d tb %d receives %d messages from rank %d on channel %d but rank %d tb %d "
                         "sends only %d (step %d has no matching send)", GC3_AT(p, tb->send, rt, recvs[ns]), tb->send,
                         rt->id, nr, r, tb->chan, r, tb->id, ns, recvs[ns]->s);
        }
        (*errors)++;
    }
out:
    free(sends);
    free(recvs);
}

/* A thread block's fields: its id, peers and channel, one sending and one receiving block per connection. */
static int gc3_check_tb(const gc3_ir_program_t *p, int r, int t, const char *src, gc3_diag_t *diag)
{
    const gc3_ir_gpu_t *g      = &p->gpus[r];
    const gc3_ir_tb_t  *tb     = &g->tbs[t];
    int                 errors = 0;

    if (tb->id != t) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d: thread block ids must be 0..%d in order (found id %d at "
                     "position %d)", src, tb->line, r, tb->id, g->ntbs - 1, tb->id, t);
        errors++;
    }
    if (tb->send < -1 || tb->send >= p->ngpus || tb->send == r) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d: send peer %d is not another rank in [0, %d)", src, tb->line,
                     r, t, tb->send, p->ngpus);
        errors++;
    }
    if (tb->recv < -1 || tb->recv >= p->ngpus || tb->recv == r) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d: recv peer %d is not another rank in [0, %d)", src, tb->line,
                     r, t, tb->recv, p->ngpus);
        errors++;
    }
    if (tb->chan < 0 || tb->chan >= p->nchannels) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d: channel %d outside [0, nchannels=%d)", src, tb->line, r, t,
                     tb->chan, p->nchannels);
        errors++;
    }
    for (int u = 0; u < t; u++) {
        const gc3_ir_tb_t *o = &g->tbs[u];
        if (tb->send >= 0 && o->send == tb->send && o->chan == tb->chan) {
            gc3_diag_add(diag, "%s:%d: rank %d tb %d: tb %d already sends to rank %d on channel %d (one sending "
                         "thread block per connection)", src, tb->line, r, t, u, tb->send, tb->chan);
            errors++;
        }
        if (tb->recv >= 0 && o->recv == tb->recv && o->chan == tb->chan) {
            gc3_diag_add(diag, "%s:%d: rank %d tb %d: tb %d already receives from rank %d on channel %d (one "
                         "receiving thread block per connection)", src, tb->line, r, t, u, tb->recv, tb->chan);
            errors++;
        }
    }
    return errors;
}

/* A step's dependency: on an existing step that signals, earlier when it is of the same block. */
static int gc3_check_dep(const gc3_ir_gpu_t *g, int r, int t, int s, const gc3_ir_step_t *st, const char *src,
                         gc3_diag_t *diag)
{
    if (st->depid < -1) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d: depid %d is invalid", src, st->line, r, t, s, st->depid);
        return 1;
    }
    if (st->depid < 0) {
        return 0;
    }
    if (st->depid >= g->ntbs || st->deps < 0 || st->deps >= g->tbs[st->depid].nsteps) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d: dependency on tb %d step %d, which does not "
                     "exist", src, st->line, r, t, s, st->depid, st->deps);
        return 1;
    }
    if (st->depid == t && st->deps >= s) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d: depends on step %d of its own thread block, "
                     "which does not come earlier", src, st->line, r, t, s, st->deps);
        return 1;
    }
    if (!g->tbs[st->depid].steps[st->deps].hasdep) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d: depends on tb %d step %d, which has hasdep=\"0\" "
                     "(it would never signal)", src, st->line, r, t, s, st->depid, st->deps);
        return 1;
    }
    return 0;
}

/* A step's fields: its index, count, buffer ranges, peers and dependency. */
static int gc3_check_step(const gc3_ir_program_t *p, int r, int t, int s, const char *src, gc3_diag_t *diag)
{
    const gc3_ir_tb_t   *tb     = &p->gpus[r].tbs[t];
    const gc3_ir_step_t *st     = &tb->steps[s];
    const unsigned       flags  = gc3_step_flags(st->type);
    int                  errors = 0;

    if (st->s != s) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d: step index s=%d does not match its position",
                     src, st->line, r, t, s, st->s);
        errors++;
    }
    if (st->type != GC3_STEP_NOP && st->cnt < 1) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d (%s): cnt must be at least 1 (found %d)", src,
                     st->line, r, t, s, gc3_step_type_name(st->type), st->cnt);
        return errors + 1;
    }
    if (flags & GC3_STEP_F_READ_SRC) {
        gc3_check_range(p, r, tb, st, "src", st->srcbuf, st->srcoff, diag, &errors);
    }
    if (flags & GC3_STEP_F_WRITE_DST) {
        gc3_check_range(p, r, tb, st, "dst", st->dstbuf, st->dstoff, diag, &errors);
    }
    if (gc3_coll_desc(p->coll)->rooted) { /* the buffers a rooted collective's non-root has */
        const struct {
            unsigned    step_flag, acc;
            gc3_buf_t   buf;
            const char *what;
        } use[] = {{GC3_STEP_F_READ_SRC, GC3_COLL_ACC_READ, st->srcbuf, "reads"},
                   {GC3_STEP_F_READ_DST, GC3_COLL_ACC_READ, st->dstbuf, "reads"},
                   {GC3_STEP_F_WRITE_DST, GC3_COLL_ACC_WRITE, st->dstbuf, "writes"}};
        for (int u = 0; u < 3; u++) {
            if ((flags & use[u].step_flag) && (use[u].buf == GC3_BUF_INPUT || use[u].buf == GC3_BUF_OUTPUT) &&
                !(gc3_coll_access(p->coll, p->root, r, use[u].buf) & use[u].acc)) {
                gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d (%s) %s its %s buffer, which %s's non-root ranks %s "
                             "(root %d)", src, st->line, r, t, s, gc3_step_type_name(st->type), use[u].what,
                             gc3_buf_long(use[u].buf), p->coll_name,
                             gc3_coll_access(p->coll, p->root, r, use[u].buf) ? "may only read" : "do not have",
                             p->root);
                errors++;
                break;
            }
        }
    }
    if ((flags & GC3_STEP_F_SEND) && tb->send < 0) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d (%s) sends, but the thread block has send=\"-1\"",
                     src, st->line, r, t, s, gc3_step_type_name(st->type));
        errors++;
    }
    if ((flags & GC3_STEP_F_RECV) && tb->recv < 0) {
        gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d (%s) receives, but the thread block has recv=\"-1\"",
                     src, st->line, r, t, s, gc3_step_type_name(st->type));
        errors++;
    }
    return errors + gc3_check_dep(&p->gpus[r], r, t, s, st, src, diag);
}

/* Receivers whose peer has no sending block at all on their channel (the first such step of each). */
static int gc3_check_senders(const gc3_ir_program_t *p, const char *src, gc3_diag_t *diag)
{
    int errors = 0;

    for (int r = 0; r < p->ngpus && errors == 0; r++) {
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            const gc3_ir_tb_t  *tb = &p->gpus[r].tbs[t];
            const gc3_ir_gpu_t *pg;
            int                 found = 0;
            if (tb->recv < 0) {
                continue;
            }
            pg = &p->gpus[tb->recv];
            for (int u = 0; u < pg->ntbs; u++) {
                found |= pg->tbs[u].send == r && pg->tbs[u].chan == tb->chan;
            }
            for (int s = 0; !found && s < tb->nsteps; s++) {
                if (gc3_step_flags(tb->steps[s].type) & GC3_STEP_F_RECV) {
                    gc3_diag_add(diag, "%s:%d: rank %d tb %d step %d receives from rank %d on channel %d, but no "
                                 "thread block of rank %d has send=\"%d\" chan=\"%d\"", src, tb->steps[s].line, r,
                                 t, s, tb->recv, tb->chan, tb->recv, r, tb->chan);
                    errors++;
                    break;
                }
            }
        }
    }
    return errors;
}

gc3_status_t gc3_verify_structure(const gc3_ir_program_t *p, gc3_diag_t *diag)
{
    int         errors = 0;
    const char *src    = p->source ? p->source : p->name;

    if (p->ngpus < 1 || p->gpus == NULL) {
        gc3_diag_add(diag, "%s: the program has no ranks", src);
        return GC3_ERR_VERIFY;
    }
    if (p->nchunksperloop < 1 || p->nchannels < 1 || p->nchannels > GC3_IR_MAX_CHANNELS) {
        gc3_diag_add(diag, "%s: nchunksperloop (%d) and nchannels (%d) must be positive", src, p->nchunksperloop,
                     p->nchannels);
        errors++;
    }
    if (!p->inplace && !p->outofplace) {
        gc3_diag_add(diag, "%s: the program is neither in-place nor out-of-place", src);
        errors++;
    }
    if (gc3_coll_desc(p->coll)->rooted ? p->root < 0 || p->root >= p->ngpus : p->root != -1) {
        gc3_diag_add(diag, "%s: %s %s (root %d)", src, p->coll_name,
                     gc3_coll_desc(p->coll)->rooted ? "needs a root among its ranks" : "has no root", p->root);
        errors++;
    }
    for (int r = 0; r < p->ngpus; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        if (g->id != r) {
            gc3_diag_add(diag, "%s:%d: rank %d: gpu id %d does not match its position", src, g->line, r, g->id);
            errors++;
        }
        if (g->i_chunks < 0 || g->o_chunks < 0 || g->s_chunks < 0) {
            gc3_diag_add(diag, "%s:%d: rank %d: negative chunk count", src, g->line, r);
            errors++;
        }
        for (int t = 0; t < g->ntbs; t++) {
            errors += gc3_check_tb(p, r, t, src, diag);
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                errors += gc3_check_step(p, r, t, s, src, diag);
            }
        }
    }
    if (errors == 0) {
        for (int r = 0; r < p->ngpus; r++) {
            for (int t = 0; t < p->gpus[r].ntbs; t++) {
                gc3_check_pairs(p, r, &p->gpus[r].tbs[t], diag, &errors);
            }
        }
        errors += errors == 0 ? gc3_check_senders(p, src, diag) : 0;
    }
    return errors ? GC3_ERR_VERIFY : GC3_OK;
}

/* ================================================================ symbolic execution */

/* An immutable, reference-counted sorted set of contributions (src_rank*stride + src_chunk). */
typedef struct {
    int      refs;
    int      n;
    uint32_t ids[];
} gc3_symval_t;

typedef struct {
    int32_t gtb;
    int32_t step;
    uint32_t clock;
} gc3_epoch_t;

typedef struct {
    gc3_symval_t *val;
    gc3_epoch_t   write;     /* last write, gtb -1 none */
    gc3_epoch_t  *reads;     /* reads since the last write */
    int           nreads, reads_cap;
} gc3_symloc_t;

/* In-place calls: a chunk a step read after another step of its rank had overwritten it (the input
 * and the output are one buffer), for the diagnostic of a reduction that then goes wrong. */
typedef struct {
    int rank, tb, step; /* the step that read it; tb -1: none */
    int buf, chunk;
    int wtb, wstep;     /* the step that had written it */
} gc3_symprov_t;

typedef struct {
    int            cnt;
    uint32_t      *vc;       /* sender's vector clock at the send (race check) */
    gc3_symval_t **vals;
    gc3_symprov_t *prov;     /* per chunk (in-place verification only), NULL otherwise */
} gc3_symmsg_t;

typedef struct {
    const gc3_ir_program_t   *prog;
    const gc3_flat_program_t *flat;
    const gc3_postcond_t     *pc;
    gc3_diag_t               *diag;
    int                       inplace;
    int                       nloops;
    int                       races;     /* race check on */
    int                       ntbs;
    int                      *loc_base;  /* per rank: first location index (within one loop) */
    int                       nlocs;     /* per loop */
    gc3_symloc_t             *locs;      /* nloops * nlocs */
    uint32_t                 *vc;        /* ntbs * ntbs */
    uint32_t                **dep_vc;    /* per (loop, global step): snapshot for hasdep steps */
    int                       errors;
} gc3_symctx_t;

static const char *gc3_mode(const gc3_symctx_t *x)
{
    return x->inplace ? "in-place" : "out-of-place";
}

static void gc3_symval_put(gc3_symval_t *v)
{
    if (v != NULL && --v->refs == 0) {
        free(v);
    }
}

static gc3_symval_t *gc3_symval_get(gc3_symval_t *v)
{
    if (v != NULL) {
        v->refs++;
    }
    return v;
}

static void gc3_symmsg_free(void *ctx, void *msg)
{
    gc3_symmsg_t *m = msg;
    (void)ctx;
    if (m == NULL) {
        return;
    }
    for (int i = 0; i < m->cnt; i++) {
        gc3_symval_put(m->vals[i]);
    }
    free(m->vals);
    free(m->prov);
    free(m->vc);
    free(m);
}

static void gc3_sym_fmt_id(const gc3_symctx_t *x, uint32_t id, char *buf, size_t len)
{
    snprintf(buf, len, "%u.%u", id / (uint32_t)x->pc->in_stride, id % (uint32_t)x->pc->in_stride);
}

/* Merge two sets for a reduction; a contribution present in both is an error. */
static gc3_status_t gc3_symval_reduce(gc3_symctx_t *x, const gc3_sim_step_t *sc, const gc3_symval_t *a,
                                      const gc3_symval_t *b, gc3_symval_t **out_p)
{
    gc3_symval_t *v = malloc(sizeof(*v) + (size_t)(a->n + b->n) * sizeof(uint32_t));
    int           i = 0, j = 0, n = 0;

    if (v == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    while (i < a->n || j < b->n) {
        if (i < a->n && j < b->n && a->ids[i] == b->ids[j]) {
            char id[32];
            gc3_sym_fmt_id(x, a->ids[i], id, sizeof(id));
            gc3_diag_add(x->diag, "rank %d tb %d step %d (%s, loop %d, %s): the reduction counts the contribution of "
                         "rank.chunk %s twice", sc->rank, sc->tb, sc->step, gc3_step_type_name((gc3_step_type_t)sc->st->type),
                         sc->loop, gc3_mode(x), id);
            free(v);
            return GC3_ERR_VERIFY;
        }
        if (j >= b->n || (i < a->n && a->ids[i] < b->ids[j])) {
            v->ids[n++] = a->ids[i++];
        } else {
            v->ids[n++] = b->ids[j++];
        }
    }
    v->refs = 1;
    v->n    = n;
    *out_p  = v;
    return GC3_OK;
}

static gc3_symloc_t *gc3_sym_loc(gc3_symctx_t *x, const gc3_sim_step_t *sc, int buf, int chunk)
{
    int l = gc3_sim_location(x->flat, sc->rank, x->inplace, buf, chunk);
    if (l < 0) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d: %s chunk %d is out of range", sc->rank, sc->tb, sc->step,
                     gc3_sim_buffer_name(buf), chunk);
        return NULL;
    }
    return &x->locs[(size_t)sc->loop * (size_t)x->nlocs + (size_t)x->loc_base[sc->rank] + (size_t)l];
}

static uint32_t *gc3_sym_vc(gc3_symctx_t *x, int gtb)
{
    return &x->vc[(size_t)gtb * (size_t)x->ntbs];
}

static void gc3_sym_local_tb(const gc3_symctx_t *x, int gtb, int *rank_p, int *tb_p)
{
    const gc3_flat_tb_t *tb = &gc3_flat_tbs(x->flat)[gtb];
    *rank_p                 = tb->rank;
    *tb_p                   = gtb - gc3_flat_ranks(x->flat)[tb->rank].tb_begin;
}

static gc3_status_t gc3_sym_race(gc3_symctx_t *x, const gc3_sim_step_t *sc, const gc3_epoch_t *other, int buf,
                                 int chunk, const char *kind)
{
    int r, t;
    gc3_sym_local_tb(x, other->gtb, &r, &t);
    gc3_diag_add(x->diag, "rank %d tb %d step %d (loop %d, %s): race on %s chunk %d: %s tb %d step %d without a "
                 "dependency or message ordering them", sc->rank, sc->tb, sc->step, sc->loop, gc3_mode(x),
                 gc3_sim_buffer_name(buf), chunk, kind, t, other->step);
    return GC3_ERR_VERIFY;
}

static gc3_status_t gc3_sym_access(gc3_symctx_t *x, const gc3_sim_step_t *sc, gc3_symloc_t *loc, int buf, int chunk,
                                   int is_write)
{
    uint32_t   *vc;
    gc3_epoch_t me;

    if (!x->races) {
        return GC3_OK;
    }
    vc = gc3_sym_vc(x, sc->gtb);
    me = (gc3_epoch_t){sc->gtb, sc->step, vc[sc->gtb]};
    if (loc->write.gtb >= 0 && loc->write.gtb != sc->gtb && vc[loc->write.gtb] < loc->write.clock) {
        return gc3_sym_race(x, sc, &loc->write, buf, chunk, is_write ? "it is also written by" : "it was written by");
    }
    if (is_write) {
        for (int i = 0; i < loc->nreads; i++) {
            const gc3_epoch_t *rd = &loc->reads[i];
            if (rd->gtb != sc->gtb && vc[rd->gtb] < rd->clock) {
                return gc3_sym_race(x, sc, rd, buf, chunk, "it is also read by");
            }
        }
        loc->nreads = 0; /* the write epoch itself is recorded by gc3_sym_write */
    } else {
        for (int i = 0; i < loc->nreads; i++) {
            if (loc->reads[i].gtb == sc->gtb) {
                loc->reads[i] = me;
                return GC3_OK;
            }
        }
        if (loc->nreads == loc->reads_cap) {
            int          ncap = loc->reads_cap ? 2 * loc->reads_cap : 2;
            gc3_epoch_t *n    = realloc(loc->reads, (size_t)ncap * sizeof(*n));
            if (n == NULL) {
                return GC3_ERR_NO_MEMORY;
            }
            loc->reads     = n;
            loc->reads_cap = ncap;
        }
        loc->reads[loc->nreads++] = me;
    }
    return GC3_OK;
}

static gc3_status_t gc3_sym_read(gc3_symctx_t *x, const gc3_sim_step_t *sc, int buf, int chunk, gc3_symval_t **v_p)
{
    gc3_symloc_t *loc = gc3_sym_loc(x, sc, buf, chunk);
    gc3_status_t  status;

    if (loc == NULL) {
        return GC3_ERR_VERIFY;
    }
    status = gc3_sym_access(x, sc, loc, buf, chunk, 0);
    if (status != GC3_OK) {
        return status;
    }
    if (loc->val == NULL) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d (%s, loop %d, %s): reads %s chunk %d, which holds no data yet",
                     sc->rank, sc->tb, sc->step, gc3_step_type_name((gc3_step_type_t)sc->st->type), sc->loop,
                     gc3_mode(x), gc3_sim_buffer_name(buf), chunk);
        return GC3_ERR_VERIFY;
    }
    *v_p = loc->val;
    return GC3_OK;
}

static gc3_status_t gc3_sym_write(gc3_symctx_t *x, const gc3_sim_step_t *sc, int buf, int chunk, gc3_symval_t *v)
{
    gc3_symloc_t *loc = gc3_sym_loc(x, sc, buf, chunk);
    gc3_status_t  status;

    if (loc == NULL) {
        return GC3_ERR_VERIFY;
    }
    if (!x->inplace && buf == GC3_BUF_INPUT) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d (%s, loop %d): writes input chunk %d; the input (send) buffer is "
                     "read-only in out-of-place calls", sc->rank, sc->tb, sc->step,
                     gc3_step_type_name((gc3_step_type_t)sc->st->type), sc->loop, chunk);
        return GC3_ERR_VERIFY;
    }
    status = gc3_sym_access(x, sc, loc, buf, chunk, 1);
    if (status != GC3_OK) {
        return status;
    }
    loc->write.gtb   = sc->gtb;
    loc->write.step  = sc->step;
    loc->write.clock = x->races ? gc3_sym_vc(x, sc->gtb)[sc->gtb] : 0;
    v = gc3_symval_get(v); /* before the put: v may be the value already there */
    gc3_symval_put(loc->val);
    loc->val = v;
    return GC3_OK;
}

static void gc3_vc_join(uint32_t *dst, const uint32_t *src, int n)
{
    for (int i = 0; i < n; i++) {
        dst[i] = src[i] > dst[i] ? src[i] : dst[i];
    }
}

/* What step of the rank last wrote (buf, chunk), in place, when one did: the read got its result,
 * not the input. */
static void gc3_sym_prov(gc3_symctx_t *x, const gc3_sim_step_t *sc, int buf, int chunk, gc3_symprov_t *pv)
{
    gc3_symloc_t *loc = x->inplace && buf != GC3_BUF_SCRATCH ? gc3_sym_loc(x, sc, buf, chunk) : NULL;
    int           r;

    pv->tb = -1;
    if (loc == NULL || loc->write.gtb < 0) {
        return;
    }
    *pv = (gc3_symprov_t){sc->rank, sc->tb, sc->step, buf, chunk, -1, loc->write.step};
    gc3_sym_local_tb(x, loc->write.gtb, &r, &pv->wtb);
}

static void gc3_sym_prov_note(gc3_symctx_t *x, const gc3_symprov_t *pv, const char *how)
{
    if (pv != NULL && pv->tb >= 0) {
        gc3_diag_add(x->diag, "  rank %d tb %d step %d %s %s chunk %d after rank %d tb %d step %d had overwritten it "
                     "(in place the input and the output are one buffer): it read that step's result, not the input",
                     pv->rank, pv->tb, pv->step, how, gc3_sim_buffer_name(pv->buf), pv->chunk, pv->rank, pv->wtb,
                     pv->wstep);
    }
}

static gc3_status_t gc3_sym_exec(void *ctx, const gc3_sim_step_t *sc, void *in, void **out_p)
{
    gc3_symctx_t          *x     = ctx;
    const gc3_flat_step_t *fs    = sc->st;
    unsigned               flags = gc3_step_flags((gc3_step_type_t)fs->type);
    gc3_symmsg_t          *msg   = in, *out = NULL;
    uint32_t              *vc    = x->races ? gc3_sym_vc(x, sc->gtb) : NULL;
    gc3_status_t           status = GC3_OK;
    int                    cnt    = fs->cnt;

    if (x->races) {
        if (sc->dep_gtb >= 0) {
            const gc3_flat_tb_t *dt = &gc3_flat_tbs(x->flat)[sc->dep_gtb];
            uint32_t *snap = x->dep_vc[(size_t)sc->loop * (size_t)x->flat->nsteps + (size_t)dt->step_begin + (size_t)fs->dep_step];
            if (snap != NULL) {
                gc3_vc_join(vc, snap, x->ntbs);
            }
        }
        if (msg != NULL && msg->vc != NULL) {
            gc3_vc_join(vc, msg->vc, x->ntbs);
        }
    }
    if (msg != NULL && msg->cnt != cnt) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d (%s): receives a message of %d chunks where it expects %d",
                     sc->rank, sc->tb, sc->step, gc3_step_type_name((gc3_step_type_t)fs->type), msg->cnt, cnt);
        status = GC3_ERR_VERIFY;
        goto out;
    }
    if (flags & GC3_STEP_F_SEND) {
        out = calloc(1, sizeof(*out));
        if (out == NULL || (out->vals = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof(*out->vals))) == NULL ||
            (x->inplace && (out->prov = calloc((size_t)(cnt > 0 ? cnt : 1), sizeof(*out->prov))) == NULL)) {
            status = GC3_ERR_NO_MEMORY;
            goto out;
        }
        out->cnt = cnt;
    }
    for (int c = 0; c < cnt && fs->type != GC3_STEP_NOP; c++) {
        gc3_symval_t *v = NULL, *s = NULL, *own = NULL;
        if (flags & GC3_STEP_F_RECV) {
            v = msg->vals[c];
        }
        if (flags & GC3_STEP_F_READ_SRC) {
            status = gc3_sym_read(x, sc, fs->srcbuf, fs->srcoff + c, &s);
            if (status != GC3_OK) {
                goto out;
            }
        }
        if (fs->type == GC3_STEP_RE) {
            status = gc3_sym_read(x, sc, fs->dstbuf, fs->dstoff + c, &v);
            if (status != GC3_OK) {
                goto out;
            }
        }
        if (flags & GC3_STEP_F_REDUCE) {
            status = gc3_symval_reduce(x, sc, v, s, &own);
            if (status == GC3_ERR_VERIFY && x->inplace) {
                /* where an operand that counts twice came from, when a step read a chunk already overwritten */
                gc3_symprov_t pv;
                gc3_sym_prov_note(x, msg != NULL && msg->prov != NULL ? &msg->prov[c] : NULL, "sent");
                gc3_sym_prov(x, sc, fs->srcbuf, fs->srcoff + c, &pv);
                gc3_sym_prov_note(x, &pv, "reads");
            }
            if (status != GC3_OK) {
                goto out;
            }
            v = own;
        } else if (v == NULL) {
            v = s; /* s, cpy */
            if (out != NULL && out->prov != NULL && fs->type == GC3_STEP_SEND) {
                gc3_sym_prov(x, sc, fs->srcbuf, fs->srcoff + c, &out->prov[c]);
            }
        } else if (out != NULL && out->prov != NULL && msg != NULL && msg->prov != NULL) {
            out->prov[c] = msg->prov[c]; /* rcs: forwarded as it came */
        }
        if (flags & GC3_STEP_F_WRITE_DST) {
            status = gc3_sym_write(x, sc, fs->dstbuf, fs->dstoff + c, v);
        }
        if (status == GC3_OK && out != NULL) {
            out->vals[c] = gc3_symval_get(v);
        }
        gc3_symval_put(own);
        if (status != GC3_OK) {
            goto out;
        }
    }
    if (x->races) {
        if (out != NULL) {
            out->vc = malloc((size_t)x->ntbs * sizeof(uint32_t));
            if (out->vc == NULL) {
                status = GC3_ERR_NO_MEMORY;
                goto out;
            }
            memcpy(out->vc, vc, (size_t)x->ntbs * sizeof(uint32_t));
        }
        if (fs->hasdep) {
            const gc3_flat_tb_t *tb = sc->tbinfo;
            size_t idx = (size_t)sc->loop * (size_t)x->flat->nsteps + (size_t)tb->step_begin + (size_t)sc->step;
            if (x->dep_vc[idx] == NULL && (x->dep_vc[idx] = malloc((size_t)x->ntbs * sizeof(uint32_t))) == NULL) {
                status = GC3_ERR_NO_MEMORY;
                goto out;
            }
            memcpy(x->dep_vc[idx], vc, (size_t)x->ntbs * sizeof(uint32_t));
        }
        vc[sc->gtb]++;
    }
out:
    gc3_symmsg_free(x, msg);
    if (status != GC3_OK) {
        gc3_symmsg_free(x, out);
        x->errors++;
        return status;
    }
    *out_p = out;
    return GC3_OK;
}

static void gc3_sym_fmt_set(const gc3_symctx_t *x, const uint32_t *ids, int n, char *buf, size_t len)
{
    size_t used = 0;
    buf[0]      = '\0';
    for (int i = 0; i < n; i++) {
        char id[32];
        if (i == 16 || used + sizeof(id) + 24 >= len) { /* the rest counted, never cut without a word */
            snprintf(buf + used, len - used, " ...(%d in all)", n);
            break;
        }
        gc3_sym_fmt_id(x, ids[i], id, sizeof(id));
        used += (size_t)snprintf(buf + used, len - used, "%s%s", i ? " " : "", id);
    }
}

/* Compare every output chunk against the postcondition. */
static gc3_status_t gc3_sym_check_post(gc3_symctx_t *x)
{
    const gc3_postcond_t *pc = x->pc;
    int                   bad = 0;

    for (int loop = 0; loop < x->nloops; loop++) {
        for (int r = 0; r < x->flat->nranks; r++) {
            for (int c = 0; c < pc->o_chunks[r]; c++) {
                int                 cell = pc->cell_begin[r] + c;
                const uint32_t     *want = pc->ids + pc->ids_begin[cell];
                int                 nwant = pc->ids_begin[cell + 1] - pc->ids_begin[cell];
                int                 l = gc3_sim_location(x->flat, r, x->inplace, GC3_BUF_OUTPUT, c);
                const gc3_symloc_t *loc;
                const gc3_symval_t *v;
                char                got_s[256], want_s[256];
                int                 wr, wt;

                if (pc->dontcare[cell] || l < 0) {
                    continue;
                }
                loc = &x->locs[(size_t)loop * (size_t)x->nlocs + (size_t)x->loc_base[r] + (size_t)l];
                v   = loc->val;
                if (v != NULL && v->n == nwant && memcmp(v->ids, want, (size_t)nwant * sizeof(uint32_t)) == 0) {
                    continue;
                }
                gc3_sym_fmt_set(x, want, nwant, want_s, sizeof(want_s));
                if (v == NULL) {
                    gc3_diag_add(x->diag, "rank %d output chunk %d (loop %d, %s) is never written; %s needs "
                                 "rank.chunk {%s}", r, c, loop, gc3_mode(x), x->prog->coll_name, want_s);
                } else {
                    gc3_sym_fmt_set(x, v->ids, v->n, got_s, sizeof(got_s));
                    if (loc->write.gtb >= 0) {
                        gc3_sym_local_tb(x, loc->write.gtb, &wr, &wt);
                        gc3_diag_add(x->diag, "rank %d tb %d step %d: output chunk %d (loop %d, %s) ends with rank.chunk "
                                     "{%s} but %s needs {%s}", r, wt, loc->write.step, c, loop, gc3_mode(x), got_s,
                                     x->prog->coll_name, want_s);
                    } else {
                        gc3_diag_add(x->diag, "rank %d output chunk %d (loop %d, %s) is never written and holds the "
                                     "input rank.chunk {%s}, but %s needs {%s}", r, c, loop, gc3_mode(x), got_s,
                                     x->prog->coll_name, want_s);
                    }
                }
                if (++bad >= 16) {
                    return GC3_ERR_VERIFY;
                }
            }
        }
        if (bad) {
            break; /* the same mistakes repeat in later loops */
        }
    }
    return bad ? GC3_ERR_VERIFY : GC3_OK;
}

static gc3_status_t gc3_verify_mode(const gc3_ir_program_t *p, const gc3_flat_program_t *flat,
                                    const gc3_postcond_t *pc, const gc3_verify_opts_t *opts, int inplace,
                                    gc3_diag_t *diag)
{
    gc3_symctx_t     x;
    gc3_sim_ops_t    ops    = {gc3_sym_exec, NULL, gc3_symmsg_free};
    gc3_sim_params_t params = {opts->slots, opts->nloops, 0};
    gc3_status_t     status = GC3_ERR_NO_MEMORY;
    size_t           nlocs_all;

    memset(&x, 0, sizeof(x));
    x.prog    = p;
    x.flat    = flat;
    x.pc      = pc;
    x.diag    = diag;
    x.inplace = inplace;
    x.nloops  = opts->nloops;
    x.ntbs    = flat->ntbs;
    x.races   = opts->check_races && flat->ntbs <= opts->race_max_tbs;
    x.loc_base = calloc((size_t)flat->nranks, sizeof(int));
    if (x.loc_base == NULL) {
        goto out;
    }
    for (int r = 0; r < flat->nranks; r++) {
        x.loc_base[r] = x.nlocs;
        x.nlocs += gc3_sim_nlocations(flat, r);
    }
    nlocs_all = (size_t)x.nlocs * (size_t)x.nloops;
    x.locs    = calloc(nlocs_all ? nlocs_all : 1, sizeof(*x.locs));
    if (x.locs == NULL) {
        goto out;
    }
    for (size_t i = 0; i < nlocs_all; i++) {
        x.locs[i].write.gtb = -1;
    }
    if (x.races) {
        x.vc     = calloc((size_t)x.ntbs * (size_t)x.ntbs + 1, sizeof(uint32_t));
        x.dep_vc = calloc((size_t)flat->nsteps * (size_t)x.nloops + 1, sizeof(uint32_t *));
        if (x.vc == NULL || x.dep_vc == NULL) {
            goto out;
        }
        for (int g = 0; g < x.ntbs; g++) {
            x.vc[(size_t)g * (size_t)x.ntbs + (size_t)g] = 1;
        }
    }
    /* every input chunk holds its own contribution */
    for (int loop = 0; loop < x.nloops; loop++) {
        for (int r = 0; r < flat->nranks; r++) {
            for (int c = 0; c < gc3_flat_ranks(flat)[r].i_chunks; c++) {
                int           l = gc3_sim_location(flat, r, inplace, GC3_BUF_INPUT, c);
                gc3_symval_t *v = malloc(sizeof(*v) + sizeof(uint32_t));
                gc3_symloc_t *loc;
                if (v == NULL) {
                    goto out;
                }
                v->refs   = 1;
                v->n      = 1;
                v->ids[0] = (uint32_t)r * (uint32_t)pc->in_stride + (uint32_t)c;
                loc       = &x.locs[(size_t)loop * (size_t)x.nlocs + (size_t)x.loc_base[r] + (size_t)l];
                gc3_symval_put(loc->val);
                loc->val = v;
            }
        }
    }
    status = gc3_sim_run(flat, &params, &ops, &x, diag);
    if (status == GC3_OK) {
        status = gc3_sym_check_post(&x);
    } else if (status == GC3_ERR_DEADLOCK) {
        gc3_diag_add(diag, "%s: deadlocks with %d FIFO slots per connection (%s, %d loop iterations)",
                     p->source ? p->source : p->name, opts->slots, gc3_mode(&x), opts->nloops);
    }
    if (opts->check_races && !x.races && status == GC3_OK) {
        gc3_diag_add(diag, "note: race check skipped: %d thread blocks > %d", flat->ntbs, opts->race_max_tbs);
    }
out:
    if (x.locs != NULL) {
        for (size_t i = 0; i < (size_t)x.nlocs * (size_t)x.nloops; i++) {
            gc3_symval_put(x.locs[i].val);
            free(x.locs[i].reads);
        }
    }
    if (x.dep_vc != NULL) {
        for (size_t i = 0; i < (size_t)flat->nsteps * (size_t)x.nloops; i++) {
            free(x.dep_vc[i]);
        }
    }
    free(x.dep_vc);
    free(x.vc);
    free(x.locs);
    free(x.loc_base);
    return status;
}

gc3_status_t gc3_verify(const gc3_ir_program_t *p, const gc3_verify_opts_t *opts_in, gc3_diag_t *diag)
{
    gc3_verify_opts_t   opts;
    gc3_postcond_t     *own_pc = NULL;
    const gc3_postcond_t *pc;
    gc3_flat_program_t *flat = NULL;
    gc3_status_t        status;

    if (opts_in != NULL) {
        opts = *opts_in;
    } else {
        gc3_verify_opts_default(&opts);
    }
    if (opts.slots < 1 || opts.nloops < 1) {
        gc3_diag_add(diag, "verify: slots (%d) and loops (%d) must be at least 1", opts.slots, opts.nloops);
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_verify_structure(p, diag);
    if (status != GC3_OK) {
        return status;
    }
    pc = opts.postcond;
    if (pc == NULL) {
        status = gc3_postcond_builtin(p, diag, &own_pc);
        if (status != GC3_OK) {
            return status;
        }
        pc = own_pc;
    } else if (pc->nranks != p->ngpus) {
        gc3_diag_add(diag, "the postcondition is for %d ranks, the program has %d", pc->nranks, p->ngpus);
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_flat_create(p, &flat);
    if (status != GC3_OK) {
        goto out;
    }
    if (p->outofplace) {
        status = gc3_verify_mode(p, flat, pc, &opts, 0, diag);
    }
    if (status == GC3_OK && p->inplace) {
        status = gc3_verify_mode(p, flat, pc, &opts, 1, diag);
    }
out:
    gc3_flat_destroy(flat);
    gc3_postcond_destroy(own_pc);
    return status;
}
