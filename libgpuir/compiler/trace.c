/* gc3 / libgpuir: tracing chunk operations (the paper's programming interface). */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_prog_internal.h"

void gc3_prog_params_default(gc3_prog_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->name      = "unnamed";
    p->coll      = GC3_COLL_ALLREDUCE;
    p->root      = -1;
    p->proto     = GC3_PROTO_SIMPLE;
    p->instances = 1;
    p->slots     = GC3_FIFO_SLOTS_DEFAULT;
    p->verify    = 1;
}

static gc3_status_t gc3_prog_fail(gc3_prog_t *prog, gc3_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static gc3_status_t gc3_prog_fail(gc3_prog_t *prog, gc3_status_t status, const char *fmt, ...)
{
    va_list ap;

    if (prog->err == GC3_OK) {
        va_start(ap, fmt);
        gc3_vsnprintf_cut(prog->errmsg, sizeof(prog->errmsg), fmt, ap);
        va_end(ap);
        prog->err = status;
    }
    return prog->err;
}

const char *gc3_prog_error(const gc3_prog_t *prog)
{
    return prog->err == GC3_OK ? "" : prog->errmsg;
}

gc3_status_t gc3_prog_create(const gc3_prog_params_t *params, gc3_prog_t **prog_p)
{
    gc3_prog_t *p;

    *prog_p = NULL;
    if (params->nranks < 1 || params->nranks > GC3_IR_MAX_GPUS || params->in_chunks < 0 || params->out_chunks < 0 ||
        params->in_chunks > GC3_IR_MAX_CHUNKS || params->out_chunks > GC3_IR_MAX_CHUNKS ||
        params->nchunksperloop < 1 || params->instances < 1 || params->instances > 64 || params->slots < 0 ||
        (unsigned)params->proto >= GC3_PROTO_COUNT || (unsigned)params->coll >= GC3_COLL_COUNT ||
        (gc3_coll_desc(params->coll)->rooted ? params->root < 0 || params->root >= params->nranks : params->root != -1)) {
        return GC3_ERR_INVALID_PARAM; /* a rooted collective needs its root, the others none */
    }
    p = calloc(1, sizeof(*p));
    if (p == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    p->params     = *params;
    p->nranks     = params->nranks;
    p->in_chunks  = params->in_chunks;
    p->out_chunks = params->out_chunks;
    p->name       = strdup(params->name ? params->name : "unnamed");
    p->coll_name  = strdup(params->coll_name ? params->coll_name : gc3_coll_name(params->coll));
    p->s_chunks   = calloc((size_t)p->nranks, sizeof(int));
    p->s_cap      = calloc((size_t)p->nranks, sizeof(int));
    for (int b = 0; b < 3; b++) {
        p->version[b] = calloc((size_t)p->nranks, sizeof(int64_t *));
    }
    if (p->name == NULL || p->coll_name == NULL || p->s_chunks == NULL || p->s_cap == NULL ||
        p->version[0] == NULL || p->version[1] == NULL || p->version[2] == NULL) {
        gc3_prog_destroy(p);
        return GC3_ERR_NO_MEMORY;
    }
    p->params.name      = p->name;
    p->params.coll_name = p->coll_name;
    if (p->params.slots == 0) {
        p->params.slots = GC3_FIFO_SLOTS_DEFAULT;
    }
    for (int r = 0; r < p->nranks; r++) {
        p->version[GC3_BUF_INPUT][r]  = malloc(((size_t)p->in_chunks + 1) * sizeof(int64_t));
        p->version[GC3_BUF_OUTPUT][r] = malloc(((size_t)p->out_chunks + 1) * sizeof(int64_t));
        if (p->version[GC3_BUF_INPUT][r] == NULL || p->version[GC3_BUF_OUTPUT][r] == NULL) {
            gc3_prog_destroy(p);
            return GC3_ERR_NO_MEMORY;
        }
        for (int c = 0; c < p->in_chunks; c++) {
            p->version[GC3_BUF_INPUT][r][c] = -1;
        }
        for (int c = 0; c < p->out_chunks; c++) {
            p->version[GC3_BUF_OUTPUT][r][c] = -1;
        }
        for (int c = 0; c < p->in_chunks; c++) {
            int b = GC3_BUF_INPUT, k = c; /* the caller's data, where it lives (in place: maybe the output) */
            gc3_prog_canon(p, r, &b, &k);
            p->version[b][r][k] = 0;
        }
    }
    p->next_version = 1;
    *prog_p         = p;
    return GC3_OK;
}

void gc3_prog_destroy(gc3_prog_t *p)
{
    if (p == NULL) {
        return;
    }
    for (int b = 0; b < 3; b++) {
        if (p->version[b] != NULL) {
            for (int r = 0; r < p->nranks; r++) {
                free(p->version[b][r]);
            }
            free(p->version[b]);
        }
    }
    free(p->s_chunks);
    free(p->s_cap);
    free(p->ops);
    free(p->snaps);
    free(p->name);
    free(p->coll_name);
    free(p);
}

void gc3_prog_canon(const gc3_prog_t *p, int rank, int *buf, int *idx)
{
    gc3_buf_t hb;
    int       hc;

    /* in place: the inner buffer's chunks are named in the buffer that holds both */
    if (p->params.inplace &&
        gc3_ir_inplace_alias(p->params.coll, rank, p->in_chunks, p->out_chunks, (gc3_buf_t)*buf, *idx, &hb, &hc)) {
        *buf = hb;
        *idx = hc;
    }
}

static const char *gc3_bufname(int buf)
{
    return buf == GC3_BUF_INPUT ? "input" : buf == GC3_BUF_OUTPUT ? "output" : buf == GC3_BUF_SCRATCH ? "scratch" : "?";
}

/* The version slot of chunk (buf, idx) of rank, growing scratch on demand; NULL when out of range. */
static int64_t *gc3_prog_slot(gc3_prog_t *p, int rank, int buf, int idx, int grow)
{
    gc3_prog_canon(p, rank, &buf, &idx);
    if (idx < 0) {
        return NULL;
    }
    switch (buf) {
    case GC3_BUF_INPUT:
        return idx < p->in_chunks ? &p->version[buf][rank][idx] : NULL;
    case GC3_BUF_OUTPUT:
        return idx < p->out_chunks ? &p->version[buf][rank][idx] : NULL;
    case GC3_BUF_SCRATCH:
        if (idx >= GC3_IR_MAX_CHUNKS) {
            return NULL;
        }
        if (idx >= p->s_cap[rank]) {
            int      ncap;
            int64_t *n;
            if (!grow) {
                return NULL;
            }
            ncap = p->s_cap[rank] ? p->s_cap[rank] : 16;
            while (ncap <= idx) {
                ncap *= 2;
            }
            n = realloc(p->version[buf][rank], (size_t)ncap * sizeof(int64_t));
            if (n == NULL) {
                return NULL;
            }
            for (int i = p->s_cap[rank]; i < ncap; i++) {
                n[i] = -1;
            }
            p->version[buf][rank] = n;
            p->s_cap[rank]        = ncap;
        }
        if (grow && idx >= p->s_chunks[rank]) {
            p->s_chunks[rank] = idx + 1;
        }
        return &p->version[buf][rank][idx];
    default:
        return NULL;
    }
}

static gc3_status_t gc3_prog_check_range(gc3_prog_t *p, const char *what, int rank, int buf, int index, int count)
{
    if (rank < 0 || rank >= p->nranks) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "%s: rank %d outside [0, %d)", what, rank, p->nranks);
    }
    if (count < 1 || index < 0) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "%s: rank %d %s chunks [%d, %d): need index >= 0 and count >= 1",
                             what, rank, gc3_bufname(buf), index, index + count);
    }
    for (int c = 0; c < count; c++) {
        if (gc3_prog_slot(p, rank, buf, index + c, buf == GC3_BUF_SCRATCH) == NULL) {
            return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "%s: rank %d %s chunk %d is outside the buffer (%d chunks)",
                                 what, rank, gc3_bufname(buf), index + c,
                                 buf == GC3_BUF_INPUT ? p->in_chunks : buf == GC3_BUF_OUTPUT ? p->out_chunks
                                                                                            : GC3_IR_MAX_CHUNKS);
        }
    }
    return GC3_OK;
}

/* Make a reference: remember the current version of each of its chunks. */
static gc3_status_t gc3_prog_make_ref(gc3_prog_t *p, int rank, int buf, int index, int count, gc3_cref_t *ref)
{
    if (p->nsnaps + (size_t)count > p->snaps_cap) {
        size_t   ncap = p->snaps_cap ? 2 * p->snaps_cap : 1024;
        int64_t *n;
        while (ncap < p->nsnaps + (size_t)count) {
            ncap *= 2;
        }
        n = realloc(p->snaps, ncap * sizeof(*n));
        if (n == NULL) {
            return gc3_prog_fail(p, GC3_ERR_NO_MEMORY, "out of memory");
        }
        p->snaps     = n;
        p->snaps_cap = ncap;
    }
    ref->rank  = rank;
    ref->buf   = buf;
    ref->index = index;
    ref->count = count;
    ref->snap  = (int)p->nsnaps;
    for (int c = 0; c < count; c++) {
        p->snaps[p->nsnaps++] = *gc3_prog_slot(p, rank, buf, index + c, 0);
    }
    return GC3_OK;
}

/* A reference may be used only while every chunk still holds what it held when it was made. */
static gc3_status_t gc3_prog_check_ref(gc3_prog_t *p, const char *what, const gc3_cref_t *ref)
{
    if (ref->snap < 0 || (size_t)ref->snap + (size_t)ref->count > p->nsnaps) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "%s: not a reference of this program", what);
    }
    if (gc3_prog_check_range(p, what, ref->rank, ref->buf, ref->index, ref->count) != GC3_OK) {
        return p->err;
    }
    for (int c = 0; c < ref->count; c++) {
        int64_t now = *gc3_prog_slot(p, ref->rank, ref->buf, ref->index + c, 0);
        if (now == -1) {
            return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "%s: rank %d %s chunk %d holds no data yet", what,
                                 ref->rank, gc3_bufname(ref->buf), ref->index + c);
        }
        if (now != p->snaps[ref->snap + c]) {
            return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM,
                                 "%s: stale reference: rank %d %s chunk %d was overwritten after the reference was made",
                                 what, ref->rank, gc3_bufname(ref->buf), ref->index + c);
        }
    }
    return GC3_OK;
}

static gc3_status_t gc3_prog_record(gc3_prog_t *p, int kind, int ch, const gc3_cref_t *src, int rank, int buf,
                                    int index)
{
    gc3_top_t *op;

    if (ch < 0 || ch >= GC3_IR_MAX_CHANNELS) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "channel %d outside [0, %d)", ch, GC3_IR_MAX_CHANNELS);
    }
    if (p->nops == p->ops_cap) {
        int        ncap = p->ops_cap ? 2 * p->ops_cap : 256;
        gc3_top_t *n    = realloc(p->ops, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return gc3_prog_fail(p, GC3_ERR_NO_MEMORY, "out of memory");
        }
        p->ops     = n;
        p->ops_cap = ncap;
    }
    op           = &p->ops[p->nops++];
    op->kind     = kind;
    op->ch       = ch;
    op->count    = src->count;
    op->src_rank = src->rank;
    op->src_buf  = src->buf;
    op->src_idx  = src->index;
    op->dst_rank = rank;
    op->dst_buf  = buf;
    op->dst_idx  = index;
    for (int c = 0; c < src->count; c++) {
        *gc3_prog_slot(p, rank, buf, index + c, 1) = p->next_version;
    }
    p->next_version++;
    return GC3_OK;
}

gc3_status_t gc3_chunk(gc3_prog_t *p, int rank, gc3_buf_t buf, int index, int count, gc3_cref_t *ref_p)
{
    if (p->err != GC3_OK) {
        return p->err;
    }
    if (buf != GC3_BUF_INPUT && buf != GC3_BUF_OUTPUT && buf != GC3_BUF_SCRATCH) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "chunk: unknown buffer %d", buf);
    }
    if (gc3_prog_check_range(p, "chunk", rank, buf, index, count) != GC3_OK) {
        return p->err;
    }
    return gc3_prog_make_ref(p, rank, buf, index, count, ref_p);
}

gc3_status_t gc3_copy(gc3_prog_t *p, gc3_cref_t src, int rank, gc3_buf_t buf, int index, int ch, gc3_cref_t *ref_p)
{
    if (p->err != GC3_OK) {
        return p->err;
    }
    if (gc3_prog_check_ref(p, "copy", &src) != GC3_OK ||
        gc3_prog_check_range(p, "copy destination", rank, buf, index, src.count) != GC3_OK) {
        return p->err;
    }
    if (!p->params.inplace && buf == GC3_BUF_INPUT) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM,
                             "copy: rank %d input chunk %d: the input buffer is read-only out of place", rank, index);
    }
    if (src.rank == rank) {
        int self = 1;
        for (int c = 0; c < src.count && self; c++) {
            int sb = src.buf, si = src.index + c, db = buf, di = index + c;
            gc3_prog_canon(p, rank, &sb, &si);
            gc3_prog_canon(p, rank, &db, &di);
            self = sb == db && si == di;
        }
        if (self) {
            /* a copy onto itself (in place): no data moves and older references stay valid */
            return gc3_prog_make_ref(p, rank, buf, index, src.count, ref_p);
        }
    }
    if (gc3_prog_record(p, GC3_TOP_COPY, ch, &src, rank, buf, index) != GC3_OK) {
        return p->err;
    }
    return gc3_prog_make_ref(p, rank, buf, index, src.count, ref_p);
}

gc3_status_t gc3_reduce(gc3_prog_t *p, gc3_cref_t dst, gc3_cref_t src, int ch, gc3_cref_t *ref_p)
{
    if (p->err != GC3_OK) {
        return p->err;
    }
    if (gc3_prog_check_ref(p, "reduce source", &src) != GC3_OK ||
        gc3_prog_check_ref(p, "reduce destination", &dst) != GC3_OK) {
        return p->err;
    }
    if (src.count != dst.count) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "reduce: %d chunks into %d", src.count, dst.count);
    }
    if (!p->params.inplace && dst.buf == GC3_BUF_INPUT) {
        return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM,
                             "reduce: rank %d input chunk %d: the input buffer is read-only out of place", dst.rank,
                             dst.index);
    }
    if (src.rank == dst.rank) {
        for (int c = 0; c < src.count; c++) {
            int sb = src.buf, si = src.index + c, db = dst.buf, di = dst.index + c;
            gc3_prog_canon(p, src.rank, &sb, &si);
            gc3_prog_canon(p, dst.rank, &db, &di);
            if (sb == db && si == di) {
                return gc3_prog_fail(p, GC3_ERR_INVALID_PARAM, "reduce: rank %d %s chunk %d with itself", dst.rank,
                                     gc3_bufname(dst.buf), dst.index + c);
            }
        }
    }
    if (gc3_prog_record(p, GC3_TOP_REDUCE, ch, &src, dst.rank, dst.buf, dst.index) != GC3_OK) {
        return p->err;
    }
    return gc3_prog_make_ref(p, dst.rank, dst.buf, dst.index, dst.count, ref_p);
}
