/* gc3 / libgpuir: lowering a trace to an IR program (see gc3_compiler.h for the passes). */
#include <stdlib.h>
#include <string.h>
#include "gc3_prog_internal.h"

typedef struct {
    int *v;
    int  n, cap;
} gc3_ivec_t;

static int gc3_ivec_push(gc3_ivec_t *a, int x)
{
    if (a->n == a->cap) {
        int  ncap = a->cap ? 2 * a->cap : 4;
        int *n    = realloc(a->v, (size_t)ncap * sizeof(int));
        if (n == NULL) {
            return -1;
        }
        a->v   = n;
        a->cap = ncap;
    }
    a->v[a->n++] = x;
    return 0;
}

static int gc3_ivec_contains(const gc3_ivec_t *a, int x)
{
    for (int i = 0; i < a->n; i++) {
        if (a->v[i] == x) {
            return 1;
        }
    }
    return 0;
}

static int gc3_ivec_add_unique(gc3_ivec_t *a, int x)
{
    return gc3_ivec_contains(a, x) ? 0 : gc3_ivec_push(a, x);
}

static void gc3_ivec_remove(gc3_ivec_t *a, int x)
{
    for (int i = 0; i < a->n; i++) {
        if (a->v[i] == x) {
            a->v[i--] = a->v[--a->n];
        }
    }
}

typedef struct {
    int        rank;
    int        type;                 /* gc3_step_type_t */
    int        srcbuf, srcoff, dstbuf, dstoff, cnt;
    int        csrc_buf, csrc_off;   /* canonical (in-place aliasing applied) */
    int        cdst_buf, cdst_off;
    int        send_peer, recv_peer, ch;
    int        spartner, rpartner;   /* receiver of what it sends / sender of what it receives */
    gc3_ivec_t deps;                 /* same-rank instructions it waits for */
    gc3_ivec_t users;                /* instructions that have it in their deps (until fusion ends) */
    gc3_ivec_t vreaders;             /* instructions reading the value it writes */
    int        overwritten;          /* a later instruction writes its destination */
    int        dead;
    int        tb, step;
    int        depth, rdepth;
    int        bias;                 /* piece index of a replicated multi-chunk step: pipelines the pieces */
    int        indeg;
} gc3_instr_t;

typedef struct {
    int send, recv, ch;
    int nsteps;                      /* instructions + nops */
    gc3_ivec_t instrs;               /* in schedule order */
} gc3_ltb_t;

typedef struct {
    gc3_prog_t   *prog;
    gc3_diag_t   *diag;
    gc3_instr_t  *in;
    int           n, cap;
    /* per rank location tracking (canonical): last writer and readers since */
    int         **last_writer;
    gc3_ivec_t  **readers;
    int          *nloc;
    gc3_ltb_t   **tbs;               /* per rank */
    int          *ntbs, *tbs_cap;
} gc3_lower_t;

static int gc3_loc_index(const gc3_prog_t *p, int rank, int buf, int idx)
{
    switch (buf) {
    case GC3_BUF_INPUT:  return idx;
    case GC3_BUF_OUTPUT: return p->in_chunks + idx;
    default:             return p->in_chunks + p->out_chunks + idx;
    }
    (void)rank;
}

static int gc3_new_instr(gc3_lower_t *L, int rank, int type, int ch)
{
    gc3_instr_t *x;

    if (L->n == L->cap) {
        int          ncap = L->cap ? 2 * L->cap : 1024;
        gc3_instr_t *n    = realloc(L->in, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return -1;
        }
        L->in  = n;
        L->cap = ncap;
    }
    x = &L->in[L->n];
    memset(x, 0, sizeof(*x));
    x->rank      = rank;
    x->type      = type;
    x->ch        = ch;
    x->srcbuf    = x->dstbuf = GC3_BUF_NONE;
    x->srcoff    = x->dstoff = -1;
    x->send_peer = x->recv_peer = -1;
    x->spartner  = x->rpartner = -1;
    x->tb        = -1;
    return L->n++;
}

/* Set an operand (as written, and canonical: with the in-place aliasing applied). */
static void gc3_set_operand(gc3_lower_t *L, int i, int buf, int off, int cnt, int *b, int *o, int *cb, int *co)
{
    *b            = buf;
    *o            = off;
    *cb           = buf;
    *co           = off;
    L->in[i].cnt  = cnt;
    gc3_prog_canon(L->prog, L->in[i].rank, cb, co);
}

#define gc3_set_src(L, i, buf, off, cnt) \
    gc3_set_operand(L, i, buf, off, cnt, &(L)->in[i].srcbuf, &(L)->in[i].srcoff, &(L)->in[i].csrc_buf, &(L)->in[i].csrc_off)
#define gc3_set_dst(L, i, buf, off, cnt) \
    gc3_set_operand(L, i, buf, off, cnt, &(L)->in[i].dstbuf, &(L)->in[i].dstoff, &(L)->in[i].cdst_buf, &(L)->in[i].cdst_off)

/* i waits for d (and d knows it). */
static int gc3_add_dep(gc3_lower_t *L, int i, int d)
{
    gc3_ivec_t *deps = &L->in[i].deps;
    for (int k = 0; k < deps->n; k++) {
        if (deps->v[k] == d) {
            return 0;
        }
    }
    return gc3_ivec_push(&L->in[i].deps, d) || gc3_ivec_push(&L->in[d].users, i);
}

/* Dependencies of instruction i reading (buf, off..off+cnt) of its rank. */
static int gc3_track_read(gc3_lower_t *L, int i, int buf, int off, int cnt)
{
    gc3_instr_t *x = &L->in[i];
    for (int c = 0; c < cnt; c++) {
        int b = buf, k = off + c, loc, w;
        gc3_prog_canon(L->prog, x->rank, &b, &k);
        loc = gc3_loc_index(L->prog, x->rank, b, k);
        w   = L->last_writer[x->rank][loc];
        if (w >= 0 && w != i) {
            if (gc3_add_dep(L, i, w) || gc3_ivec_add_unique(&L->in[w].vreaders, i)) {
                return -1;
            }
        }
        if (gc3_ivec_add_unique(&L->readers[x->rank][loc], i)) {
            return -1;
        }
    }
    return 0;
}

static int gc3_track_write(gc3_lower_t *L, int i, int buf, int off, int cnt)
{
    gc3_instr_t *x = &L->in[i];
    for (int c = 0; c < cnt; c++) {
        int         b = buf, k = off + c, loc, w;
        gc3_ivec_t *rd;
        gc3_prog_canon(L->prog, x->rank, &b, &k);
        loc = gc3_loc_index(L->prog, x->rank, b, k);
        w   = L->last_writer[x->rank][loc];
        rd  = &L->readers[x->rank][loc];
        if (w >= 0 && w != i) {
            L->in[w].overwritten = 1;
            if (gc3_add_dep(L, i, w)) {
                return -1;
            }
        }
        for (int r = 0; r < rd->n; r++) {
            if (rd->v[r] != i && gc3_add_dep(L, i, rd->v[r])) {
                return -1;
            }
        }
        rd->n                          = 0;
        L->last_writer[x->rank][loc]   = i;
    }
    return 0;
}

/* ---------------------------------------------------------------- 1. lowering */

static gc3_status_t gc3_lower_ops(gc3_lower_t *L)
{
    gc3_prog_t *p = L->prog;

    for (int o = 0; o < p->nops; o++) {
        const gc3_top_t *op = &p->ops[o];
        int              s, d;
        if (op->src_rank == op->dst_rank) {
            int sb = op->src_buf, si = op->src_idx, db = op->dst_buf, di = op->dst_idx;
            gc3_prog_canon(p, op->src_rank, &sb, &si);
            gc3_prog_canon(p, op->dst_rank, &db, &di);
            if (op->kind == GC3_TOP_COPY && sb == db && si == di) {
                continue; /* copy onto itself (in place): nothing to do */
            }
            d = gc3_new_instr(L, op->dst_rank, op->kind == GC3_TOP_COPY ? GC3_STEP_CPY : GC3_STEP_RE, op->ch);
            if (d < 0) {
                return GC3_ERR_NO_MEMORY;
            }
            gc3_set_src(L, d, op->src_buf, op->src_idx, op->count);
            gc3_set_dst(L, d, op->dst_buf, op->dst_idx, op->count);
            if (gc3_track_read(L, d, op->src_buf, op->src_idx, op->count) ||
                (op->kind == GC3_TOP_REDUCE && gc3_track_read(L, d, op->dst_buf, op->dst_idx, op->count)) ||
                gc3_track_write(L, d, op->dst_buf, op->dst_idx, op->count)) {
                return GC3_ERR_NO_MEMORY;
            }
            continue;
        }
        s = gc3_new_instr(L, op->src_rank, GC3_STEP_SEND, op->ch);
        d = gc3_new_instr(L, op->dst_rank, op->kind == GC3_TOP_COPY ? GC3_STEP_RECV : GC3_STEP_RRC, op->ch);
        if (s < 0 || d < 0) {
            return GC3_ERR_NO_MEMORY;
        }
        gc3_set_src(L, s, op->src_buf, op->src_idx, op->count);
        L->in[s].send_peer = op->dst_rank;
        L->in[s].spartner  = d;
        L->in[d].recv_peer = op->src_rank;
        L->in[d].rpartner  = s;
        gc3_set_dst(L, d, op->dst_buf, op->dst_idx, op->count);
        if (op->kind == GC3_TOP_REDUCE) {
            gc3_set_src(L, d, op->dst_buf, op->dst_idx, op->count); /* dst = dst op received */
        }
        if (gc3_track_read(L, s, op->src_buf, op->src_idx, op->count) ||
            (op->kind == GC3_TOP_REDUCE && gc3_track_read(L, d, op->dst_buf, op->dst_idx, op->count)) ||
            gc3_track_write(L, d, op->dst_buf, op->dst_idx, op->count)) {
            return GC3_ERR_NO_MEMORY;
        }
    }
    return GC3_OK;
}

/* ---------------------------------------------------------------- 2. fusion */

/* Replace every dependency on `from` by one on `to` (from is going away). */
static int gc3_redirect(gc3_lower_t *L, int from, int to)
{
    gc3_instr_t *f = &L->in[from];

    for (int k = 0; k < f->users.n; k++) {
        int u = f->users.v[k];
        if (L->in[u].dead) {
            continue;
        }
        gc3_ivec_remove(&L->in[u].deps, from);
        if (u != to && gc3_add_dep(L, u, to)) {
            return -1;
        }
    }
    f->users.n = 0;
    /* `from` no longer reads anybody's value */
    for (int k = 0; k < f->deps.n; k++) {
        gc3_ivec_remove(&L->in[f->deps.v[k]].vreaders, from);
        gc3_ivec_remove(&L->in[f->deps.v[k]].users, from);
    }
    return 0;
}

static int gc3_same_range(int b1, int o1, int b2, int o2)
{
    return b1 == b2 && o1 == o2;
}

/* Is any chunk of (buf, off..off+cnt) on `rank` written by an instruction after `after`?
 * (last_writer holds the final writer of every location once lowering is done) */
static int gc3_written_after(gc3_lower_t *L, int rank, int buf, int off, int cnt, int after)
{
    for (int c = 0; c < cnt; c++) {
        if (L->last_writer[rank][gc3_loc_index(L->prog, rank, buf, off + c)] > after) {
            return 1;
        }
    }
    return 0;
}

/* cpy A->X whose only reader is a reduction into X (X = X op y): the reduction reads A
 * instead and the copy disappears, provided nothing writes A after the copy. */
static gc3_status_t gc3_fuse_copy_forward(gc3_lower_t *L)
{
    for (int c = 0; c < L->n; c++) {
        gc3_instr_t *C = &L->in[c], *U;
        int          u;
        if (C->dead || C->type != GC3_STEP_CPY || C->vreaders.n != 1 ||
            gc3_written_after(L, C->rank, C->csrc_buf, C->csrc_off, C->cnt, c)) {
            continue;
        }
        u = C->vreaders.v[0];
        U = &L->in[u];
        if ((U->type != GC3_STEP_RRC && U->type != GC3_STEP_RE) || U->cnt != C->cnt ||
            !gc3_same_range(U->csrc_buf, U->csrc_off, C->cdst_buf, C->cdst_off) ||
            !gc3_same_range(U->cdst_buf, U->cdst_off, C->cdst_buf, C->cdst_off)) {
            continue;
        }
        if (U->type == GC3_STEP_RE) {
            continue; /* re reads dst; keep the copy (a 3-operand local reduce has no step type) */
        }
        U->srcbuf   = C->srcbuf;
        U->srcoff   = C->srcoff;
        U->csrc_buf = C->csrc_buf;
        U->csrc_off = C->csrc_off;
        for (int k = 0; k < C->deps.n; k++) {
            gc3_ivec_t *writer_readers = &L->in[C->deps.v[k]].vreaders;
            /* the reduction reads what the copy read: it reads the values of the copy's writers now */
            if (gc3_add_dep(L, u, C->deps.v[k]) ||
                (gc3_ivec_contains(writer_readers, c) && gc3_ivec_add_unique(writer_readers, u))) {
                return GC3_ERR_NO_MEMORY;
            }
        }
        C->dead = 1;
        if (gc3_redirect(L, c, u)) {
            return GC3_ERR_NO_MEMORY;
        }
    }
    return GC3_OK;
}

/* recv/rrc into X followed by a send of exactly X (whose only dependency it is) on the same
 * channel: one step that receives (reduces), stores and sends on: rcs / rrcs. */
static gc3_status_t gc3_fuse_chains(gc3_lower_t *L)
{
    for (int s = 0; s < L->n; s++) {
        gc3_instr_t *S = &L->in[s], *R;
        int          r;
        if (S->dead || S->type != GC3_STEP_SEND || S->deps.n != 1) {
            continue;
        }
        r = S->deps.v[0];
        R = &L->in[r];
        if (R->dead || (R->type != GC3_STEP_RECV && R->type != GC3_STEP_RRC) || R->ch != S->ch || R->cnt != S->cnt ||
            !gc3_same_range(R->cdst_buf, R->cdst_off, S->csrc_buf, S->csrc_off)) {
            continue;
        }
        R->type      = R->type == GC3_STEP_RECV ? GC3_STEP_RCS : GC3_STEP_RRCS;
        R->send_peer = S->send_peer;
        R->spartner  = S->spartner;
        L->in[S->spartner].rpartner = r;
        S->dead      = 1;
        gc3_ivec_remove(&R->vreaders, s);
        if (gc3_redirect(L, s, r)) {
            return GC3_ERR_NO_MEMORY;
        }
    }
    /* rrcs whose stored value nobody reads and that is overwritten later (or lives in
       scratch): drop the store */
    for (int i = 0; i < L->n; i++) {
        gc3_instr_t *F = &L->in[i];
        if (!F->dead && F->type == GC3_STEP_RRCS && F->vreaders.n == 0 &&
            (F->overwritten || F->cdst_buf == GC3_BUF_SCRATCH)) {
            F->type = GC3_STEP_RRS;
        }
    }
    return GC3_OK;
}

/* ---------------------------------------------------------------- 3. instances */

/* Replicate the fused instructions on disjoint channels (channel c of instance k is c*N+k),
 * each instance on 1/N of the data. Allreduce maps chunk i of instance k to k*C + i (C: the
 * buffer's chunks): its postcondition is per chunk index, so any consistent renaming keeps
 * it, and multi-chunk steps stay contiguous. The other collectives tie chunk indices to peers,
 * so instance k of chunk i is i*N + k there, and steps of several chunks become one step per
 * chunk. This happens before blocks and the schedule are made, so the slot bound holds for
 * the messages that really exist. */
static int gc3_buf_stride(const gc3_prog_t *p, int rank, int buf)
{
    return buf == GC3_BUF_INPUT ? p->in_chunks : buf == GC3_BUF_OUTPUT ? p->out_chunks : p->s_chunks[rank];
}

static int gc3_map_off(const gc3_prog_t *p, int blockmajor, int rank, int buf, int off, int j, int N, int k)
{
    if (off < 0) {
        return off;
    }
    return blockmajor ? k * gc3_buf_stride(p, rank, buf) + off : (off + j) * N + k;
}

static gc3_status_t gc3_replicate(gc3_lower_t *L, int N)
{
    gc3_instr_t *old  = L->in;
    int          nold = L->n;
    const int    blockmajor = L->prog->params.coll == GC3_COLL_ALLREDUCE;
    gc3_status_t status     = GC3_ERR_NO_MEMORY;
    int         *base = malloc(((size_t)nold + 1) * sizeof(int)); /* first new index of old i */
    int          total = 0;

    if (base == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int i = 0; i < nold; i++) {
        base[i] = total;
        if (!old[i].dead) {
            total += N * (old[i].cnt > 0 && !blockmajor ? old[i].cnt : 1);
        }
    }
    L->in  = NULL;
    L->n   = 0;
    L->cap = 0;
    for (int i = 0; i < nold; i++) {
        const gc3_instr_t *x = &old[i];
        int                c = x->cnt > 0 && !blockmajor ? x->cnt : 1;
        if (x->dead) {
            continue;
        }
        for (int k = 0; k < N; k++) {
            for (int j = 0; j < c; j++) {
                int          id = gc3_new_instr(L, x->rank, x->type, x->ch * N + k), sub = k * c + j;
                gc3_instr_t *y;
                if (id < 0) {
                    goto nomem;
                }
                y            = &L->in[id];
                y->srcbuf    = x->srcbuf;
                y->dstbuf    = x->dstbuf;
                y->srcoff    = gc3_map_off(L->prog, blockmajor, x->rank, x->srcbuf, x->srcoff, j, N, k);
                y->dstoff    = gc3_map_off(L->prog, blockmajor, x->rank, x->dstbuf, x->dstoff, j, N, k);
                y->cnt       = blockmajor || x->cnt <= 0 ? x->cnt : 1;
                y->send_peer = x->send_peer;
                y->recv_peer = x->recv_peer;
                y->spartner  = x->spartner >= 0 ? base[x->spartner] + sub : -1;
                y->rpartner  = x->rpartner >= 0 ? base[x->rpartner] + sub : -1;
                y->bias      = j;
                /* conservatively after every piece of each dependency in the same instance */
                for (int d = 0; d < x->deps.n; d++) {
                    const gc3_instr_t *dx = &old[x->deps.v[d]];
                    int                dc = dx->cnt > 0 && !blockmajor ? dx->cnt : 1;
                    for (int dj = 0; dj < dc; dj++) {
                        if (gc3_ivec_push(&L->in[id].deps, base[x->deps.v[d]] + k * dc + dj)) {
                            goto nomem;
                        }
                    }
                }
            }
        }
    }
    status = GC3_OK;
nomem: /* status is still GC3_ERR_NO_MEMORY when we came here by goto */
    for (int i = 0; i < nold; i++) {
        free(old[i].deps.v);
        free(old[i].users.v);
        free(old[i].vreaders.v);
    }
    free(old);
    free(base);
    return status;
}

/* ---------------------------------------------------------------- 4. thread blocks */

static int gc3_tb_new(gc3_lower_t *L, int rank, int send, int recv, int ch)
{
    gc3_ltb_t *t;
    if (L->ntbs[rank] == L->tbs_cap[rank]) {
        int        ncap = L->tbs_cap[rank] ? 2 * L->tbs_cap[rank] : 8;
        gc3_ltb_t *n    = realloc(L->tbs[rank], (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return -1;
        }
        L->tbs[rank]     = n;
        L->tbs_cap[rank] = ncap;
    }
    t = &L->tbs[rank][L->ntbs[rank]];
    memset(t, 0, sizeof(*t));
    t->send = send;
    t->recv = recv;
    t->ch   = ch;
    return L->ntbs[rank]++;
}

/* Place one instruction: pass 0 takes instructions with a send and a receive peer (they fix
 * the (send, recv, channel) blocks), pass 1 those with one peer (they join a block owning their
 * connection, or pair a send to p with a receive from p), pass 2 local work (the block of its
 * latest dependency, else a local block). */
static gc3_status_t gc3_assign_one(gc3_lower_t *L, int i)
{
    gc3_instr_t *x = &L->in[i];
    int          r = x->rank, so = -1, ro = -1, t = -1;

    if (x->send_peer < 0 && x->recv_peer < 0) {
        int latest = -1;
        for (int k = 0; k < x->deps.n; k++) {
            int d = x->deps.v[k];
            if (L->in[d].tb >= 0 && L->in[d].ch == x->ch && d > latest) {
                latest = d;
            }
        }
        t = latest >= 0 ? L->in[latest].tb : -1;
        for (int b = 0; t < 0 && b < L->ntbs[r]; b++) {
            if (L->tbs[r][b].send < 0 && L->tbs[r][b].recv < 0 && L->tbs[r][b].ch == x->ch) {
                t = b;
            }
        }
        if (t < 0 && (t = gc3_tb_new(L, r, -1, -1, x->ch)) < 0) {
            return GC3_ERR_NO_MEMORY;
        }
        x->tb = t;
        return GC3_OK;
    }
    for (int b = 0; b < L->ntbs[r]; b++) {
        const gc3_ltb_t *tb = &L->tbs[r][b];
        if (tb->ch != x->ch) {
            continue;
        }
        if (x->send_peer >= 0 && tb->send == x->send_peer) {
            so = b;
        }
        if (x->recv_peer >= 0 && tb->recv == x->recv_peer) {
            ro = b;
        }
    }
    if (x->send_peer >= 0 && x->recv_peer >= 0) {
        if ((so >= 0 && ro >= 0 && so != ro) || (so >= 0 && ro < 0 && L->tbs[r][so].recv >= 0) ||
            (ro >= 0 && so < 0 && L->tbs[r][ro].send >= 0)) {
            gc3_diag_add(L->diag, "compile: rank %d: an instruction receiving from rank %d and sending to rank %d on "
                         "channel %d needs its own thread block, but another block already owns one of the two "
                         "connections; put one of the operations on another channel", r, x->recv_peer, x->send_peer,
                         x->ch);
            return GC3_ERR_INVALID_PARAM;
        }
        t = so >= 0 ? so : ro;
        if (t < 0 && (t = gc3_tb_new(L, r, x->send_peer, x->recv_peer, x->ch)) < 0) {
            return GC3_ERR_NO_MEMORY;
        }
        L->tbs[r][t].send = x->send_peer;
        L->tbs[r][t].recv = x->recv_peer;
        x->tb             = t;
        return GC3_OK;
    }
    t = x->send_peer >= 0 ? so : ro;
    /* pair a send to p with a receive from p in one block when the block is free for it */
    for (int b = 0; t < 0 && b < L->ntbs[r]; b++) {
        gc3_ltb_t *tb = &L->tbs[r][b];
        if (tb->ch != x->ch) {
            continue;
        }
        if (x->send_peer >= 0 && tb->send < 0 && tb->recv == x->send_peer) {
            tb->send = x->send_peer;
            t        = b;
        } else if (x->recv_peer >= 0 && tb->recv < 0 && tb->send == x->recv_peer) {
            tb->recv = x->recv_peer;
            t        = b;
        }
    }
    if (t < 0 && (t = gc3_tb_new(L, r, x->send_peer, x->recv_peer, x->ch)) < 0) {
        return GC3_ERR_NO_MEMORY;
    }
    x->tb = t;
    return GC3_OK;
}

static gc3_status_t gc3_assign_tbs(gc3_lower_t *L)
{
    for (int pass = 0; pass < 3; pass++) {
        for (int i = 0; i < L->n; i++) {
            const gc3_instr_t *x     = &L->in[i];
            int                peers = (x->send_peer >= 0) + (x->recv_peer >= 0);
            gc3_status_t       status;
            if (x->dead || peers != 2 - pass) {
                continue;
            }
            status = gc3_assign_one(L, i);
            if (status != GC3_OK) {
                return status;
            }
        }
    }
    return GC3_OK;
}

/* ---------------------------------------------------------------- 5. scheduling */

/* successors of i: same-rank dependents and the receiver of what it sends */
typedef struct {
    gc3_ivec_t *succ;
} gc3_graph_t;

typedef struct {
    int key1, key2, id;
} gc3_pq_item_t;

typedef struct {
    gc3_pq_item_t *a;
    int            n;
} gc3_pq_t;

static int gc3_pq_less(const gc3_pq_item_t *x, const gc3_pq_item_t *y)
{
    if (x->key1 != y->key1) {
        return x->key1 < y->key1;
    }
    if (x->key2 != y->key2) {
        return x->key2 > y->key2;
    }
    return x->id < y->id;
}

static void gc3_pq_push(gc3_pq_t *q, gc3_pq_item_t it)
{
    int i = q->n++;
    while (i > 0 && gc3_pq_less(&it, &q->a[(i - 1) / 2])) {
        q->a[i] = q->a[(i - 1) / 2];
        i       = (i - 1) / 2;
    }
    q->a[i] = it;
}

static gc3_pq_item_t gc3_pq_pop(gc3_pq_t *q)
{
    gc3_pq_item_t top = q->a[0], last = q->a[--q->n];
    int           i = 0;
    while (2 * i + 1 < q->n) {
        int c = 2 * i + 1;
        if (c + 1 < q->n && gc3_pq_less(&q->a[c + 1], &q->a[c])) {
            c++;
        }
        if (!gc3_pq_less(&q->a[c], &last)) {
            break;
        }
        q->a[i] = q->a[c];
        i       = c;
    }
    if (q->n > 0) {
        q->a[i] = last;
    }
    return top;
}

/* Connection key of a sending instruction: (rank, peer, channel). */
typedef struct {
    int rank, peer, ch;
    int outstanding;
    gc3_ivec_t waiting;   /* sends held back by the slot bound */
    gc3_ivec_t inflight;  /* sends scheduled, in order; [head, n) not yet received */
    int        head;
    gc3_ivec_t rwaiting;  /* receives ready but not next in line */
} gc3_conn_t;

static int gc3_conn_find(gc3_conn_t **conns, int *n, int *cap, int rank, int peer, int ch)
{
    for (int i = 0; i < *n; i++) {
        if ((*conns)[i].rank == rank && (*conns)[i].peer == peer && (*conns)[i].ch == ch) {
            return i;
        }
    }
    if (*n == *cap) {
        int         ncap = *cap ? 2 * *cap : 64;
        gc3_conn_t *nn   = realloc(*conns, (size_t)ncap * sizeof(*nn));
        if (nn == NULL) {
            return -1;
        }
        *conns = nn;
        *cap   = ncap;
    }
    memset(&(*conns)[*n], 0, sizeof(gc3_conn_t));
    (*conns)[*n].rank = rank;
    (*conns)[*n].peer = peer;
    (*conns)[*n].ch   = ch;
    return (*n)++;
}

/* The message at the head of connection c may now be received: if its receive was held back
 * (ready but not next in line), queue it. */
static void gc3_conn_release_head(gc3_lower_t *L, gc3_conn_t *c, gc3_pq_t *q)
{
    int next;
    if (c->head >= c->inflight.n) {
        return;
    }
    next = L->in[c->inflight.v[c->head]].spartner;
    for (int w = 0; w < c->rwaiting.n; w++) {
        if (c->rwaiting.v[w] == next) {
            gc3_ivec_remove(&c->rwaiting, next);
            gc3_pq_push(q, (gc3_pq_item_t){L->in[next].depth + L->in[next].bias, L->in[next].rdepth, next});
            return;
        }
    }
}

/* The scheduler's state: the instruction graph's successors, the order found, each send's
 * connection, the ready queue. */
typedef struct {
    gc3_lower_t *L;
    gc3_ivec_t  *succ;
    int         *order, *topo, *sconn;
    gc3_pq_t     q;
    gc3_conn_t  *conns;
    int          nconns, conns_cap, ntopo, nlive, done, slots;
} gc3_sched_t;

static void gc3_sched_push(gc3_sched_t *S, int j)
{
    const gc3_instr_t *y = &S->L->in[j];
    gc3_pq_push(&S->q, (gc3_pq_item_t){y->depth + y->bias, y->rdepth, j});
}

/* Successors (dependencies and the receive of each send) and in-degrees of the live instructions. */
static gc3_status_t gc3_sched_graph(gc3_sched_t *S)
{
    gc3_lower_t *L = S->L;

    for (int i = 0; i < L->n; i++) {
        gc3_instr_t *x = &L->in[i];
        x->indeg       = 0;
        x->depth       = 0;
        x->rdepth      = 0;
        if (x->dead) {
            continue;
        }
        S->nlive++;
        for (int k = 0; k < x->deps.n; k++) {
            if (gc3_ivec_push(&S->succ[x->deps.v[k]], i)) {
                return GC3_ERR_NO_MEMORY;
            }
            x->indeg++;
        }
        if (x->rpartner >= 0) {
            if (gc3_ivec_push(&S->succ[x->rpartner], i)) {
                return GC3_ERR_NO_MEMORY;
            }
            x->indeg++;
        }
    }
    return GC3_OK;
}

/* Depth (longest path from a source) in a plain topological order, then the longest remaining
 * path in reverse; a cycle is an error. */
static gc3_status_t gc3_sched_depths(gc3_sched_t *S)
{
    gc3_lower_t *L = S->L;

    for (int i = 0; i < L->n; i++) {
        if (!L->in[i].dead && L->in[i].indeg == 0) {
            S->topo[S->ntopo++] = i;
        }
    }
    for (int h = 0; h < S->ntopo; h++) {
        int i = S->topo[h];
        for (int k = 0; k < S->succ[i].n; k++) {
            gc3_instr_t *y = &L->in[S->succ[i].v[k]];
            y->depth       = L->in[i].depth + 1 > y->depth ? L->in[i].depth + 1 : y->depth;
            if (--y->indeg == 0) {
                S->topo[S->ntopo++] = S->succ[i].v[k];
            }
        }
    }
    if (S->ntopo != S->nlive) {
        gc3_diag_add(L->diag, "compile: the instruction graph has a cycle (%d of %d instructions ordered)", S->ntopo,
                     S->nlive);
        return GC3_ERR_VERIFY;
    }
    for (int h = S->ntopo - 1; h >= 0; h--) {
        int i = S->topo[h];
        for (int k = 0; k < S->succ[i].n; k++) {
            int rd = L->in[S->succ[i].v[k]].rdepth + 1;
            L->in[i].rdepth = rd > L->in[i].rdepth ? rd : L->in[i].rdepth;
        }
    }
    return GC3_OK;
}

/* Each send's connection, and the sources in the ready queue. */
static gc3_status_t gc3_sched_seed(gc3_sched_t *S)
{
    gc3_lower_t *L = S->L;

    for (int i = 0; i < L->n; i++) {
        gc3_instr_t *x = &L->in[i];
        S->sconn[i]    = -1;
        if (x->dead) {
            continue;
        }
        x->indeg = x->deps.n + (x->rpartner >= 0);
        if (x->send_peer >= 0) {
            S->sconn[i] = gc3_conn_find(&S->conns, &S->nconns, &S->conns_cap, x->rank, x->send_peer, x->ch);
            if (S->sconn[i] < 0) {
                return GC3_ERR_NO_MEMORY;
            }
        }
        if (x->indeg == 0) {
            gc3_sched_push(S, i);
        }
    }
    return GC3_OK;
}

/* Instruction i, popped: held back (a receive not next in line, a send whose connection is full)
 * or placed next in the order, which releases what waited for it. */
static gc3_status_t gc3_sched_take(gc3_sched_t *S, int i)
{
    gc3_instr_t *x = &S->L->in[i];

    if (x->rpartner >= 0) {
        /* messages are received in the order they were sent on a connection */
        gc3_conn_t *c = &S->conns[S->sconn[x->rpartner]];
        if (c->head >= c->inflight.n || c->inflight.v[c->head] != x->rpartner) {
            return gc3_ivec_push(&c->rwaiting, i) ? GC3_ERR_NO_MEMORY : GC3_OK;
        }
    }
    if (S->sconn[i] >= 0 && S->conns[S->sconn[i]].outstanding >= S->slots) {
        return gc3_ivec_push(&S->conns[S->sconn[i]].waiting, i) ? GC3_ERR_NO_MEMORY : GC3_OK;
    }
    S->order[S->done++] = i;
    if (x->rpartner >= 0) {
        /* a message on the sender's connection was consumed: a waiting send may go, and the
           receive of the next message, if it was held back */
        gc3_conn_t *c = &S->conns[S->sconn[x->rpartner]];
        c->outstanding--;
        c->head++;
        for (int w = 0; w < c->waiting.n; w++) {
            gc3_sched_push(S, c->waiting.v[w]);
        }
        c->waiting.n = 0;
        gc3_conn_release_head(S->L, c, &S->q);
    }
    if (S->sconn[i] >= 0) {
        gc3_conn_t *c = &S->conns[S->sconn[i]];
        c->outstanding++;
        if (gc3_ivec_push(&c->inflight, i)) {
            return GC3_ERR_NO_MEMORY;
        }
        if (c->head == c->inflight.n - 1) {
            gc3_conn_release_head(S->L, c, &S->q); /* it is next in line: its receive may be waiting */
        }
    }
    for (int k = 0; k < S->succ[i].n; k++) {
        int j = S->succ[i].v[k];
        if (--S->L->in[j].indeg == 0) {
            gc3_sched_push(S, j);
        }
    }
    return GC3_OK;
}

static void gc3_sched_free(gc3_sched_t *S)
{
    if (S->succ != NULL) {
        for (int i = 0; i < S->L->n; i++) {
            free(S->succ[i].v);
        }
    }
    for (int c = 0; c < S->nconns; c++) {
        free(S->conns[c].waiting.v);
        free(S->conns[c].inflight.v);
        free(S->conns[c].rwaiting.v);
    }
    free(S->conns);
    free(S->succ);
    free(S->order);
    free(S->topo);
    free(S->sconn);
    free(S->q.a);
}

/* The order of every block's instructions: list scheduling, earliest depth first (pieces of a split
 * step staggered by their index, so piece j+1 of a block is sent after piece j moved on), longest
 * remaining path first; a send waits while its connection has `slots` messages in flight. */
static gc3_status_t gc3_schedule(gc3_lower_t *L)
{
    const size_t n = (size_t)L->n + 1;
    gc3_sched_t  S = {.L     = L,
                      .succ  = calloc(n, sizeof(gc3_ivec_t)),
                      .order = malloc(n * sizeof(int)),
                      .topo  = malloc(n * sizeof(int)),
                      .sconn = malloc(n * sizeof(int)),
                      .q     = {malloc(n * sizeof(gc3_pq_item_t)), 0},
                      .slots = L->prog->params.slots};
    gc3_status_t status = GC3_ERR_NO_MEMORY;

    if (S.succ == NULL || S.order == NULL || S.topo == NULL || S.sconn == NULL || S.q.a == NULL ||
        (status = gc3_sched_graph(&S)) != GC3_OK || (status = gc3_sched_depths(&S)) != GC3_OK ||
        (status = gc3_sched_seed(&S)) != GC3_OK) {
        goto out;
    }
    while (S.q.n > 0 && status == GC3_OK) {
        status = gc3_sched_take(&S, gc3_pq_pop(&S.q).id);
    }
    if (status == GC3_OK && S.done != S.nlive) {
        gc3_diag_add(L->diag, "compile: no order keeps at most %d messages in flight per connection (%d of %d "
                     "instructions scheduled); raise the slot count", S.slots, S.done, S.nlive);
        status = GC3_ERR_DEADLOCK;
    }
    for (int h = 0; h < S.done && status == GC3_OK; h++) {
        gc3_instr_t *x = &L->in[S.order[h]];
        status         = gc3_ivec_push(&L->tbs[x->rank][x->tb].instrs, S.order[h]) ? GC3_ERR_NO_MEMORY : GC3_OK;
    }
out:
    gc3_sched_free(&S);
    return status;
}

/* ---------------------------------------------------------------- 6. emission */

/* For each instruction: the latest step of every other block of its rank it depends on. */
static gc3_status_t gc3_emit(gc3_lower_t *L, gc3_ir_program_t **program_p, int *nops_p)
{
    gc3_prog_t       *p = L->prog;
    gc3_ir_program_t *ir;
    gc3_status_t      status;
    int               nops = 0, max_ch = 0;

    const int N = p->params.instances;

    status = gc3_ir_program_create(p->name, p->params.coll, p->nranks, p->params.nchunksperloop * N, &ir);
    if (status != GC3_OK) {
        return status;
    }
    free(ir->coll_name);
    ir->coll_name  = strdup(p->coll_name);
    ir->proto      = p->params.proto;
    ir->inplace    = p->params.inplace ? 1 : 0;
    ir->outofplace = p->params.inplace ? 0 : 1;
    ir->root       = p->params.root;
    ir->min_bytes  = p->params.min_bytes;
    ir->max_bytes  = p->params.max_bytes;
    if (ir->coll_name == NULL) {
        status = GC3_ERR_NO_MEMORY;
        goto err;
    }
    for (int r = 0; r < p->nranks; r++) {
        ir->gpus[r].i_chunks = p->in_chunks * N;
        ir->gpus[r].o_chunks = p->out_chunks * N;
        ir->gpus[r].s_chunks = p->s_chunks[r] * N;
        /* step index of each instruction (nops come first for extra dependencies) */
        for (int b = 0; b < L->ntbs[r]; b++) {
            gc3_ltb_t *tb = &L->tbs[r][b];
            int        s  = 0;
            for (int k = 0; k < tb->instrs.n; k++) {
                gc3_instr_t *x = &L->in[tb->instrs.v[k]];
                int          other_tbs = 0;
                int          seen[64];
                int          nseen = 0;
                for (int d = 0; d < x->deps.n; d++) {
                    int t = L->in[x->deps.v[d]].tb, dup = 0;
                    if (t == b) {
                        continue;
                    }
                    for (int z = 0; z < nseen; z++) {
                        dup |= seen[z] == t;
                    }
                    if (!dup) {
                        if (nseen < 64) {
                            seen[nseen++] = t;
                        }
                        other_tbs++;
                    }
                }
                s += other_tbs > 1 ? other_tbs - 1 : 0;
                x->step = s++;
            }
            tb->nsteps = s;
        }
        for (int b = 0; b < L->ntbs[r]; b++) {
            gc3_ltb_t   *tb = &L->tbs[r][b];
            gc3_ir_tb_t *it;
            status = gc3_ir_add_tb(ir, r, tb->send, tb->recv, tb->ch, &it);
            if (status != GC3_OK) {
                goto err;
            }
            max_ch = tb->ch > max_ch ? tb->ch : max_ch;
            for (int k = 0; k < tb->instrs.n; k++) {
                gc3_instr_t *x = &L->in[tb->instrs.v[k]];
                int          dtb[64], dstep[64], nd = 0;
                /* latest step per other block */
                for (int d = 0; d < x->deps.n; d++) {
                    gc3_instr_t *y = &L->in[x->deps.v[d]];
                    int          z;
                    if (y->tb == b) {
                        continue;
                    }
                    for (z = 0; z < nd && dtb[z] != y->tb; z++) {
                    }
                    if (z == nd) {
                        if (nd == 64) {
                            gc3_diag_add(L->diag, "compile: rank %d: an instruction depends on more than 64 blocks", r);
                            status = GC3_ERR_UNSUPPORTED;
                            goto err;
                        }
                        dtb[nd]   = y->tb;
                        dstep[nd] = y->step;
                        nd++;
                    } else if (y->step > dstep[z]) {
                        dstep[z] = y->step;
                    }
                }
                for (int z = 0; z + 1 < nd; z++, nops++) {
                    status = gc3_ir_add_step(it, GC3_STEP_NOP, GC3_BUF_NONE, -1, GC3_BUF_NONE, -1, 0, dtb[z], dstep[z],
                                             NULL);
                    if (status != GC3_OK) {
                        goto err;
                    }
                }
                status = gc3_ir_add_step(it, (gc3_step_type_t)x->type, x->srcbuf, x->srcoff, x->dstbuf, x->dstoff,
                                         x->cnt, nd ? dtb[nd - 1] : -1, nd ? dstep[nd - 1] : -1, NULL);
                if (status != GC3_OK) {
                    goto err;
                }
            }
        }
    }
    ir->nchannels = max_ch + 1;
    gc3_ir_update_hasdep(ir);
    *nops_p    = nops;
    *program_p = ir;
    return GC3_OK;
err:
    gc3_ir_program_destroy(ir);
    return status;
}

/* ---------------------------------------------------------------- driver */

/* The lowering's tables: per rank, the last writer and the readers of every chunk location. */
static gc3_status_t gc3_lower_init(gc3_lower_t *L, gc3_prog_t *p, gc3_diag_t *diag)
{
    memset(L, 0, sizeof(*L));
    L->prog        = p;
    L->diag        = diag;
    L->last_writer = calloc((size_t)p->nranks, sizeof(int *));
    L->readers     = calloc((size_t)p->nranks, sizeof(gc3_ivec_t *));
    L->tbs         = calloc((size_t)p->nranks, sizeof(gc3_ltb_t *));
    L->ntbs        = calloc((size_t)p->nranks, sizeof(int));
    L->tbs_cap     = calloc((size_t)p->nranks, sizeof(int));
    if (L->last_writer == NULL || L->readers == NULL || L->tbs == NULL || L->ntbs == NULL || L->tbs_cap == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int r = 0; r < p->nranks; r++) {
        const int nloc    = p->in_chunks + p->out_chunks + p->s_chunks[r] + 1;
        L->last_writer[r] = malloc((size_t)nloc * sizeof(int));
        L->readers[r]     = calloc((size_t)nloc, sizeof(gc3_ivec_t));
        if (L->last_writer[r] == NULL || L->readers[r] == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        for (int i = 0; i < nloc; i++) {
            L->last_writer[r][i] = -1;
        }
    }
    return GC3_OK;
}

static void gc3_lower_free(gc3_lower_t *L)
{
    const gc3_prog_t *p = L->prog;

    for (int i = 0; i < L->n; i++) {
        free(L->in[i].deps.v);
        free(L->in[i].users.v);
        free(L->in[i].vreaders.v);
    }
    free(L->in);
    for (int r = 0; r < p->nranks; r++) {
        if (L->last_writer) free(L->last_writer[r]);
        if (L->readers && L->readers[r]) {
            for (int i = 0; i < p->in_chunks + p->out_chunks + p->s_chunks[r] + 1; i++) {
                free(L->readers[r][i].v);
            }
            free(L->readers[r]);
        }
        if (L->tbs && L->tbs[r]) {
            for (int b = 0; b < L->ntbs[r]; b++) {
                free(L->tbs[r][b].instrs.v);
            }
            free(L->tbs[r]);
        }
    }
    free(L->last_writer);
    free(L->readers);
    free(L->tbs);
    free(L->ntbs);
    free(L->tbs_cap);
}

/* The emitted program: a custom collective carries its postcondition (so that what is generated
 * verifies and runs as it is); verified when asked (a failure is a compiler bug). */
static gc3_status_t gc3_compile_finish(const gc3_prog_t *p, gc3_ir_program_t *ir, gc3_diag_t *diag,
                                       gc3_compile_stats_t *st)
{
    gc3_status_t status;

    if (p->params.coll == GC3_COLL_CUSTOM) {
        if (p->params.post_cells == NULL) {
            gc3_diag_add(diag, "compile '%s': custom collective without a postcondition", p->name);
            return GC3_ERR_INVALID_PARAM;
        }
        if (p->params.instances > 1) {
            gc3_diag_add(diag, "compile '%s': instances of a custom collective are not supported", p->name);
            return GC3_ERR_UNSUPPORTED;
        }
        if ((status = gc3_postcond_create(ir, p->params.post_cells, &ir->post)) != GC3_OK) {
            return status;
        }
    }
    if (p->params.verify) {
        gc3_verify_opts_t vo;
        gc3_verify_opts_default(&vo);
        vo.slots = p->params.slots;
        status   = gc3_verify(ir, &vo, diag);
        if (status != GC3_OK) {
            gc3_diag_add(diag, "compile '%s': the emitted program does not verify (a compiler bug)", p->name);
            return status;
        }
        st->verified = 1;
    }
    return GC3_OK;
}

gc3_status_t gc3_prog_compile(gc3_prog_t *p, gc3_diag_t *diag, gc3_compile_stats_t *stats, gc3_ir_program_t **program_p)
{
    gc3_lower_t         L;
    gc3_compile_stats_t st;
    gc3_ir_program_t   *ir = NULL;
    gc3_status_t        status;

    *program_p = NULL;
    memset(&st, 0, sizeof(st));
    if (p->err != GC3_OK) {
        gc3_diag_add(diag, "compile '%s': %s", p->name, p->errmsg);
        return p->err;
    }
    st.ops = p->nops;
    if ((status = gc3_lower_init(&L, p, diag)) != GC3_OK || (status = gc3_lower_ops(&L)) != GC3_OK) {
        goto out;
    }
    st.instrs_lowered = L.n;
    if ((status = gc3_fuse_copy_forward(&L)) != GC3_OK || (status = gc3_fuse_chains(&L)) != GC3_OK) {
        goto out;
    }
    for (int i = 0; i < L.n; i++) {
        if (!L.in[i].dead) {
            st.instrs++;
            st.by_type[L.in[i].type]++;
        }
    }
    if (p->params.instances > 1 && (status = gc3_replicate(&L, p->params.instances)) != GC3_OK) {
        goto out;
    }
    if ((status = gc3_assign_tbs(&L)) != GC3_OK || (status = gc3_schedule(&L)) != GC3_OK ||
        (status = gc3_emit(&L, &ir, &st.nops)) != GC3_OK) {
        goto out;
    }
    st.by_type[GC3_STEP_NOP] += st.nops;
    for (int r = 0; r < ir->ngpus; r++) {
        st.tbs += ir->gpus[r].ntbs;
    }
    if ((status = gc3_compile_finish(p, ir, diag, &st)) == GC3_OK) {
        *program_p = ir;
        ir         = NULL;
    }
out:
    gc3_ir_program_destroy(ir);
    gc3_lower_free(&L);
    if (stats != NULL) {
        *stats = st;
    }
    return status;
}
