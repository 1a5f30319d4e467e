/* gc3 / libgpuir: the in-memory IR model. */
#include <stdlib.h>
#include <string.h>
#include "gc3_ir.h"
#include "gc3_verify.h"

static const struct {
    const char *name;
    unsigned    flags;
} gc3_step_types[GC3_STEP_COUNT] = {
    [GC3_STEP_SEND] = {"s", GC3_STEP_F_SEND | GC3_STEP_F_READ_SRC},
    [GC3_STEP_RECV] = {"r", GC3_STEP_F_RECV | GC3_STEP_F_WRITE_DST},
    [GC3_STEP_RCS]  = {"rcs", GC3_STEP_F_RECV | GC3_STEP_F_WRITE_DST | GC3_STEP_F_SEND},
    [GC3_STEP_RRC]  = {"rrc", GC3_STEP_F_RECV | GC3_STEP_F_READ_SRC | GC3_STEP_F_REDUCE | GC3_STEP_F_WRITE_DST},
    [GC3_STEP_RRS]  = {"rrs", GC3_STEP_F_RECV | GC3_STEP_F_READ_SRC | GC3_STEP_F_REDUCE | GC3_STEP_F_SEND},
    [GC3_STEP_RRCS] = {"rrcs", GC3_STEP_F_RECV | GC3_STEP_F_READ_SRC | GC3_STEP_F_REDUCE |
                               GC3_STEP_F_WRITE_DST | GC3_STEP_F_SEND},
    [GC3_STEP_CPY]  = {"cpy", GC3_STEP_F_READ_SRC | GC3_STEP_F_WRITE_DST},
    [GC3_STEP_RE]   = {"re", GC3_STEP_F_READ_SRC | GC3_STEP_F_READ_DST | GC3_STEP_F_REDUCE | GC3_STEP_F_WRITE_DST},
    [GC3_STEP_NOP]  = {"nop", 0},
};

static const char *gc3_protos[GC3_PROTO_COUNT] = {
    [GC3_PROTO_SIMPLE] = "Simple", [GC3_PROTO_LL] = "LL", [GC3_PROTO_LL128] = "LL128",
};

unsigned gc3_step_flags(gc3_step_type_t type)
{
    return ((unsigned)type < GC3_STEP_COUNT) ? gc3_step_types[type].flags : 0;
}

const char *gc3_step_type_name(gc3_step_type_t type)
{
    return ((unsigned)type < GC3_STEP_COUNT) ? gc3_step_types[type].name : "?";
}

const char *gc3_proto_name(gc3_proto_t proto)
{
    return ((unsigned)proto < GC3_PROTO_COUNT) ? gc3_protos[proto] : "?";
}

char gc3_buf_char(gc3_buf_t buf)
{
    switch (buf) {
    case GC3_BUF_INPUT:   return 'i';
    case GC3_BUF_OUTPUT:  return 'o';
    case GC3_BUF_SCRATCH: return 's';
    default:              return '-';
    }
}

gc3_proto_t gc3_proto_runs_as(gc3_proto_t proto)
{
    return proto == GC3_PROTO_LL128 ? GC3_PROTO_SIMPLE : proto;
}

gc3_status_t gc3_proto_from_name(const char *name, gc3_proto_t *proto_p)
{
    for (int i = 0; i < GC3_PROTO_COUNT; i++) {
        if (strcmp(name, gc3_protos[i]) == 0) {
            *proto_p = (gc3_proto_t)i;
            return GC3_OK;
        }
    }
    return GC3_ERR_PARSE;
}

static void gc3_ir_extra_free(gc3_ir_extra_t *extra)
{
    for (int i = 0; i < extra->count; i++) {
        free(extra->attrs[i].name);
        free(extra->attrs[i].value);
    }
    free(extra->attrs);
    extra->attrs = NULL;
    extra->count = 0;
}

gc3_status_t gc3_ir_program_create(const char *name, gc3_coll_t coll, int ngpus,
                                   int nchunksperloop, gc3_ir_program_t **program_p)
{
    gc3_ir_program_t *p;

    *program_p = NULL;
    if (ngpus < 1 || ngpus > GC3_IR_MAX_GPUS || nchunksperloop < 1 ||
        nchunksperloop > GC3_IR_MAX_CHUNKS || (unsigned)coll >= GC3_COLL_COUNT) {
        return GC3_ERR_INVALID_PARAM;
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    p->name      = strdup(name ? name : "unnamed");
    p->coll_name = strdup(gc3_coll_name(coll));
    p->gpus      = calloc((size_t)ngpus, sizeof(*p->gpus));
    if (p->name == NULL || p->coll_name == NULL || p->gpus == NULL) {
        gc3_ir_program_destroy(p);
        return GC3_ERR_NO_MEMORY;
    }
    p->coll           = coll;
    p->proto          = GC3_PROTO_SIMPLE;
    p->nchannels      = 1;
    p->nchunksperloop = nchunksperloop;
    p->ngpus          = ngpus;
    p->outofplace     = 1;
    p->root           = gc3_coll_desc(coll)->rooted ? 0 : -1;
    for (int r = 0; r < ngpus; r++) {
        p->gpus[r].id = r;
    }
    *program_p = p;
    return GC3_OK;
}

int gc3_ir_widest_rank(const gc3_ir_program_t *p)
{
    int widest = 0;
    for (int r = 0; r < p->ngpus; r++) {
        widest = p->gpus[r].ntbs > widest ? p->gpus[r].ntbs : widest;
    }
    return widest;
}

void gc3_ir_program_destroy(gc3_ir_program_t *p)
{
    if (p == NULL) {
        return;
    }
    if (p->gpus != NULL) {
        for (int r = 0; r < p->ngpus; r++) {
            gc3_ir_gpu_t *g = &p->gpus[r];
            for (int t = 0; t < g->ntbs; t++) {
                for (int s = 0; s < g->tbs[t].nsteps; s++) {
                    gc3_ir_extra_free(&g->tbs[t].steps[s].extra);
                }
                free(g->tbs[t].steps);
                gc3_ir_extra_free(&g->tbs[t].extra);
            }
            free(g->tbs);
            gc3_ir_extra_free(&g->extra);
        }
    }
    free(p->gpus);
    free(p->name);
    free(p->coll_name);
    free(p->source);
    free(p->redop);
    gc3_postcond_destroy(p->post);
    gc3_ir_extra_free(&p->extra);
    free(p);
}

gc3_status_t gc3_ir_add_tb(gc3_ir_program_t *p, int rank, int send, int recv, int chan,
                           gc3_ir_tb_t **tb_p)
{
    gc3_ir_gpu_t *g;
    gc3_ir_tb_t  *n;

    if (rank < 0 || rank >= p->ngpus) {
        return GC3_ERR_INVALID_PARAM;
    }
    g = &p->gpus[rank];
    if (g->ntbs >= GC3_IR_MAX_TBS) {
        return GC3_ERR_INVALID_PARAM;
    }
    n = realloc(g->tbs, (size_t)(g->ntbs + 1) * sizeof(*n));
    if (n == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    g->tbs = n;
    memset(&n[g->ntbs], 0, sizeof(*n));
    n[g->ntbs].id   = g->ntbs;
    n[g->ntbs].send = send;
    n[g->ntbs].recv = recv;
    n[g->ntbs].chan = chan;
    *tb_p           = &n[g->ntbs];
    g->ntbs++;
    return GC3_OK;
}

gc3_status_t gc3_ir_add_step(gc3_ir_tb_t *tb, gc3_step_type_t type, gc3_buf_t srcbuf, int srcoff,
                             gc3_buf_t dstbuf, int dstoff, int cnt, int depid, int deps,
                             gc3_ir_step_t **step_p)
{
    gc3_ir_step_t *n;

    if (tb->nsteps >= GC3_IR_MAX_STEPS || (unsigned)type >= GC3_STEP_COUNT) {
        return GC3_ERR_INVALID_PARAM;
    }
    n = realloc(tb->steps, (size_t)(tb->nsteps + 1) * sizeof(*n));
    if (n == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    tb->steps = n;
    n         = &tb->steps[tb->nsteps];
    memset(n, 0, sizeof(*n));
    n->s      = tb->nsteps;
    n->type   = type;
    n->srcbuf = srcbuf;
    n->srcoff = srcoff;
    n->dstbuf = dstbuf;
    n->dstoff = dstoff;
    n->cnt    = cnt;
    n->depid  = depid;
    n->deps   = deps;
    tb->nsteps++;
    if (step_p != NULL) {
        *step_p = n;
    }
    return GC3_OK;
}

void gc3_ir_update_hasdep(gc3_ir_program_t *p)
{
    for (int r = 0; r < p->ngpus; r++) {
        gc3_ir_gpu_t *g = &p->gpus[r];
        for (int t = 0; t < g->ntbs; t++) {
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                g->tbs[t].steps[s].hasdep = 0;
            }
        }
        for (int t = 0; t < g->ntbs; t++) {
            for (int s = 0; s < g->tbs[t].nsteps; s++) {
                const gc3_ir_step_t *st = &g->tbs[t].steps[s];
                if (st->depid >= 0 && st->depid < g->ntbs && st->deps >= 0 &&
                    st->deps < g->tbs[st->depid].nsteps) {
                    g->tbs[st->depid].steps[st->deps].hasdep = 1;
                }
            }
        }
    }
}

static uint64_t gc3_ir_hash_str(uint64_t h, const char *s)
{
    return s != NULL ? gc3_fnv1a(h, s, strlen(s) + 1) : gc3_fnv1a(h, "", 0);
}

uint64_t gc3_ir_hash(const gc3_ir_program_t *p)
{
    int64_t  head[] = {p->coll, p->proto, p->nchannels, p->nchunksperloop, p->ngpus, p->inplace, p->outofplace};
    uint64_t h      = gc3_fnv1a(GC3_FNV1A_START, head, sizeof(head));

    h = gc3_ir_hash_str(gc3_ir_hash_str(h, p->name), p->coll_name);
    for (int r = 0; r < p->ngpus; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        int32_t             gv[] = {g->i_chunks, g->o_chunks, g->s_chunks, g->ntbs};
        h = gc3_fnv1a(h, gv, sizeof(gv));
        for (int t = 0; t < g->ntbs; t++) {
            const gc3_ir_tb_t *tb   = &g->tbs[t];
            int32_t            tv[] = {tb->send, tb->recv, tb->chan, tb->nsteps};
            h = gc3_fnv1a(h, tv, sizeof(tv));
            for (int s = 0; s < tb->nsteps; s++) {
                /* a buffer the step type does not use means nothing (as for gc3_ir_equal) */
                const gc3_ir_step_t *st  = &tb->steps[s];
                const unsigned       f   = gc3_step_flags(st->type);
                const int            src = (f & GC3_STEP_F_READ_SRC) != 0;
                const int            dst = (f & (GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST)) != 0;
                int32_t              sv[] = {st->type, src ? st->srcbuf : -2, src ? st->srcoff : -2,
                                             dst ? st->dstbuf : -2, dst ? st->dstoff : -2, st->cnt, st->depid, st->deps};
                h = gc3_fnv1a(h, sv, sizeof(sv));
            }
        }
    }
    if (p->root >= 0) { /* rooted collectives only: the others' hashes stay what they were */
        int32_t root = p->root;
        h = gc3_fnv1a(gc3_fnv1a(h, "root", 4), &root, sizeof(root));
    }
    h = p->zc_pull ? gc3_fnv1a(h, "zc_pull", 7) : h;
    return p->no_zc ? gc3_fnv1a(h, "no_zc", 5) : h;
}

static int gc3_ir_strdup(char **dst, const char *src)
{
    *dst = src != NULL ? strdup(src) : NULL;
    return src == NULL || *dst != NULL;
}

static int gc3_ir_extra_copy(gc3_ir_extra_t *dst, const gc3_ir_extra_t *src)
{
    dst->count = 0;
    dst->attrs = src->count > 0 ? calloc((size_t)src->count, sizeof(*dst->attrs)) : NULL;
    if (src->count > 0 && dst->attrs == NULL) {
        return 0;
    }
    for (; dst->count < src->count; dst->count++) {
        gc3_ir_attr_t *a = &dst->attrs[dst->count];
        if (!gc3_ir_strdup(&a->name, src->attrs[dst->count].name) ||
            !gc3_ir_strdup(&a->value, src->attrs[dst->count].value)) {
            dst->count++; /* freed with the others */
            return 0;
        }
    }
    return 1;
}

/* The thread blocks of one rank, copied into q's (empty) rank. */
static int gc3_ir_gpu_copy(gc3_ir_gpu_t *dst, const gc3_ir_gpu_t *src)
{
    *dst      = *src;
    dst->ntbs = 0;
    dst->tbs  = src->ntbs > 0 ? calloc((size_t)src->ntbs, sizeof(*dst->tbs)) : NULL;
    memset(&dst->extra, 0, sizeof(dst->extra));
    if ((src->ntbs > 0 && dst->tbs == NULL) || !gc3_ir_extra_copy(&dst->extra, &src->extra)) {
        return 0;
    }
    for (; dst->ntbs < src->ntbs; dst->ntbs++) {
        const gc3_ir_tb_t *st = &src->tbs[dst->ntbs];
        gc3_ir_tb_t       *t  = &dst->tbs[dst->ntbs];
        *t        = *st;
        t->nsteps = 0;
        t->steps  = st->nsteps > 0 ? calloc((size_t)st->nsteps, sizeof(*t->steps)) : NULL;
        memset(&t->extra, 0, sizeof(t->extra));
        if ((st->nsteps > 0 && t->steps == NULL) || !gc3_ir_extra_copy(&t->extra, &st->extra)) {
            dst->ntbs++;
            return 0;
        }
        for (; t->nsteps < st->nsteps; t->nsteps++) {
            t->steps[t->nsteps] = st->steps[t->nsteps];
            memset(&t->steps[t->nsteps].extra, 0, sizeof(t->steps[0].extra));
            if (!gc3_ir_extra_copy(&t->steps[t->nsteps].extra, &st->steps[t->nsteps].extra)) {
                t->nsteps++;
                dst->ntbs++;
                return 0;
            }
        }
    }
    return 1;
}

gc3_status_t gc3_ir_program_clone(const gc3_ir_program_t *p, gc3_ir_program_t **q_p)
{
    gc3_ir_program_t *q = calloc(1, sizeof(*q));
    int               ok;

    *q_p = NULL;
    if (q == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    *q       = *p;
    q->name  = q->coll_name = q->redop = q->source = NULL;
    q->post  = NULL;
    q->gpus  = calloc((size_t)p->ngpus, sizeof(*q->gpus));
    q->ngpus = 0;
    memset(&q->extra, 0, sizeof(q->extra));
    ok = q->gpus != NULL && gc3_ir_strdup(&q->name, p->name) && gc3_ir_strdup(&q->coll_name, p->coll_name) &&
         gc3_ir_strdup(&q->redop, p->redop) && gc3_ir_strdup(&q->source, p->source) &&
         gc3_ir_extra_copy(&q->extra, &p->extra) && (p->post == NULL || gc3_postcond_copy(p->post, &q->post) == GC3_OK);
    for (; ok && q->ngpus < p->ngpus; q->ngpus++) {
        ok = gc3_ir_gpu_copy(&q->gpus[q->ngpus], &p->gpus[q->ngpus]);
    }
    if (!ok) { /* (q->ngpus counts the rank half copied: it is freed too) */
        gc3_ir_program_destroy(q);
        return GC3_ERR_NO_MEMORY;
    }
    *q_p = q;
    return GC3_OK;
}

static int gc3_str_eq(const char *a, const char *b)
{
    if (a == NULL || b == NULL) {
        return a == b;
    }
    return strcmp(a, b) == 0;
}

static int gc3_extra_eq(const gc3_ir_extra_t *a, const gc3_ir_extra_t *b)
{
    if (a->count != b->count) {
        return 0;
    }
    for (int i = 0; i < a->count; i++) {
        if (!gc3_str_eq(a->attrs[i].name, b->attrs[i].name) ||
            !gc3_str_eq(a->attrs[i].value, b->attrs[i].value)) {
            return 0;
        }
    }
    return 1;
}

int gc3_ir_equal(const gc3_ir_program_t *a, const gc3_ir_program_t *b)
{
    if (!gc3_str_eq(a->name, b->name) || a->coll != b->coll || !gc3_str_eq(a->coll_name, b->coll_name) ||
        a->proto != b->proto || a->nchannels != b->nchannels ||
        a->nchunksperloop != b->nchunksperloop || a->ngpus != b->ngpus ||
        a->inplace != b->inplace || a->outofplace != b->outofplace || a->root != b->root ||
        a->min_bytes != b->min_bytes || a->max_bytes != b->max_bytes || a->msccl_inplace != b->msccl_inplace ||
        a->nthreadblocks != b->nthreadblocks || a->maxcount != b->maxcount || !gc3_str_eq(a->redop, b->redop) ||
        (a->post == NULL) != (b->post == NULL) || (a->post != NULL && !gc3_postcond_equal(a->post, b->post)) ||
        !gc3_extra_eq(&a->extra, &b->extra)) {
        return 0;
    }
    for (int r = 0; r < a->ngpus; r++) {
        const gc3_ir_gpu_t *ga = &a->gpus[r], *gb = &b->gpus[r];
        if (ga->id != gb->id || ga->i_chunks != gb->i_chunks || ga->o_chunks != gb->o_chunks ||
            ga->s_chunks != gb->s_chunks || ga->ntbs != gb->ntbs || !gc3_extra_eq(&ga->extra, &gb->extra)) {
            return 0;
        }
        for (int t = 0; t < ga->ntbs; t++) {
            const gc3_ir_tb_t *ta = &ga->tbs[t], *tb = &gb->tbs[t];
            if (ta->id != tb->id || ta->send != tb->send || ta->recv != tb->recv ||
                ta->chan != tb->chan || ta->nsteps != tb->nsteps || !gc3_extra_eq(&ta->extra, &tb->extra)) {
                return 0;
            }
            for (int s = 0; s < ta->nsteps; s++) {
                const gc3_ir_step_t *x = &ta->steps[s], *y = &tb->steps[s];
                /* a buffer the step type does not use means nothing (files name one anyway) */
                const unsigned f = gc3_step_flags(x->type);
                const int      src = (f & GC3_STEP_F_READ_SRC) != 0;
                const int      dst = (f & (GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST)) != 0;
                if (x->s != y->s || x->type != y->type || (src && (x->srcbuf != y->srcbuf || x->srcoff != y->srcoff)) ||
                    (dst && (x->dstbuf != y->dstbuf || x->dstoff != y->dstoff)) ||
                    x->cnt != y->cnt || x->depid != y->depid || x->deps != y->deps ||
                    x->hasdep != y->hasdep || !gc3_extra_eq(&x->extra, &y->extra)) {
                    return 0;
                }
            }
        }
    }
    return 1;
}
