/* gc3 / libgpuir: reference executor (see gc3_refexec.h). */
#include <stdlib.h>
#include <string.h>
#include "gc3_refexec.h"
#include "gc3_sim.h"

typedef struct {
    int    cnt;
    char  *data;
    /* a zero-copy send: where its chunks are at the sender (data holds them as they were when it
     * sent), and who sent it */
    char **zc;
    int    rank, tb, step;
    int    pushed_to; /* pushed (zero_copy's push form): the global index of its receiving step, else -1 */
} gc3_refmsg_t;

/* A chunk pushed into a receiver's destination whose receiving step has not run yet: nobody else of
 * that rank may touch it until then */
typedef struct {
    char *addr;
    int   rank, recv;          /* the receiver and its receiving step (global index) */
    int   from_rank, tb, step; /* the send that pushed it */
} gc3_refpush_t;

typedef struct {
    const gc3_flat_program_t *flat;
    const gc3_refexec_args_t *args;
    void *const              *inputs;
    void *const              *outputs;
    char                    **scratch;
    size_t                    chunk_bytes;
    gc3_diag_t               *diag;
    int                      *next;    /* zero_copy: per block, its next step (the schedule's priority) */
    int                      *match;   /* zero_copy: per send step, its receiving step (global indices) */
    int                      *step_tb; /* zero_copy: per step, its block (global index) */
    gc3_refpush_t            *pend;    /* chunks pushed, not yet received */
    int                       npend, cappend;
} gc3_refctx_t;

static void gc3_refmsg_free(void *ctx, void *msg)
{
    gc3_refmsg_t *m = msg;
    (void)ctx;
    if (m != NULL) {
        free(m->data);
        free(m->zc);
        free(m);
    }
}

/* Address of chunk `chunk` of buffer `buf` on `rank`, with in-place aliasing. */
static char *gc3_ref_addr(gc3_refctx_t *x, const gc3_sim_step_t *sc, int buf, int chunk)
{
    const gc3_flat_rank_t *r = &gc3_flat_ranks(x->flat)[sc->rank];
    int                    l = gc3_sim_location(x->flat, sc->rank, x->args->inplace, buf, chunk);

    if (l < 0) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d: %s chunk %d is out of range", sc->rank, sc->tb, sc->step,
                     gc3_sim_buffer_name(buf), chunk);
        return NULL;
    }
    if (l < r->i_chunks + r->o_chunks) {
        /* a rooted collective's non-root may pass NULL for the buffer it does not have (gc3_coll_access) */
        char *base = l < r->i_chunks && !x->args->inplace ? (char *)x->inputs[sc->rank] : (char *)x->outputs[sc->rank];
        if (base == NULL) {
            gc3_diag_add(x->diag, "rank %d tb %d step %d: uses %s chunk %d, but the rank's buffer is NULL", sc->rank,
                         sc->tb, sc->step, gc3_sim_buffer_name(buf), chunk);
            return NULL;
        }
        return base + (size_t)(l < r->i_chunks ? l : l - r->i_chunks) * x->chunk_bytes;
    }
    return x->scratch[sc->rank] + (size_t)(l - r->i_chunks - r->o_chunks) * x->chunk_bytes;
}

/* A marked send of a zero-copy run: its message remembers where its chunks are at the sender. */
static gc3_status_t gc3_ref_zc_note(gc3_refctx_t *x, const gc3_sim_step_t *sc, gc3_refmsg_t *msg)
{
    const int bit = x->args->inplace ? GC3_FLAT_ZC_IP : GC3_FLAT_ZC_OOP;
    int       buf, off;

    if (!x->args->zero_copy || !gc3_flat_sent_chunks(sc->st, &buf, &off) ||
        (x->args->zero_copy == 1 ? !(sc->st->zc & bit) : buf == GC3_BUF_SCRATCH)) {
        return GC3_OK;
    }
    msg->zc = malloc((size_t)msg->cnt * sizeof(char *));
    if (msg->zc == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int c = 0; c < msg->cnt; c++) {
        if ((msg->zc[c] = gc3_ref_addr(x, sc, buf, off + c)) == NULL) {
            return GC3_ERR_VERIFY;
        }
    }
    msg->rank = sc->rank;
    msg->tb   = sc->tb;
    msg->step = sc->step;
    return GC3_OK;
}

/* A send of a zero-copy run in the push form: its chunks written into the receiving step's destination
 * now (marked for the call's kind; zero_copy 3: any send whose receiver copies or reduces into its input or
 * output), each pending until that step runs. */
static gc3_status_t gc3_ref_push(gc3_refctx_t *x, const gc3_sim_step_t *sc, gc3_refmsg_t *msg)
{
    const int              bit   = x->args->inplace ? GC3_FLAT_ZC_PUSH_IP : GC3_FLAT_ZC_PUSH_OOP;
    const int              u     = x->match != NULL ? x->match[sc->tbinfo->step_begin + sc->step] : -1;
    const gc3_flat_step_t *ru    = u >= 0 ? &gc3_flat_steps(x->flat)[u] : NULL;
    const int              copes = ru != NULL &&
                      (ru->type == GC3_STEP_RECV || ru->type == GC3_STEP_RCS || ru->type == GC3_STEP_RRC ||
                       ru->type == GC3_STEP_RRCS) &&
                      (ru->dstbuf == GC3_BUF_INPUT || ru->dstbuf == GC3_BUF_OUTPUT);
    gc3_sim_step_t su;

    msg->pushed_to = -1;
    if (ru == NULL || (x->args->zero_copy == 1 ? !(sc->st->zc & bit) : x->args->zero_copy != 3 || !copes)) {
        return GC3_OK;
    }
    if (!copes) {
        gc3_diag_add(x->diag,
                     "rank %d tb %d step %d is marked to push its message, but its receiver does not copy or "
                     "reduce it into its input or output",
                     sc->rank, sc->tb, sc->step);
        return GC3_ERR_VERIFY;
    }
    su        = *sc;
    su.gtb    = x->step_tb[u];
    su.tbinfo = &gc3_flat_tbs(x->flat)[su.gtb];
    su.rank   = su.tbinfo->rank;
    su.tb     = su.gtb - gc3_flat_ranks(x->flat)[su.rank].tb_begin;
    su.step   = u - su.tbinfo->step_begin;
    su.st     = ru;
    for (int c = 0; c < msg->cnt; c++) {
        char *dst = gc3_ref_addr(x, &su, ru->dstbuf, ru->dstoff + c);
        if (dst == NULL) {
            return GC3_ERR_VERIFY;
        }
        for (int i = 0; i < x->npend; i++) {
            if (x->pend[i].addr == dst) {
                gc3_diag_add(x->diag,
                             "zero-copy hazard: rank %d tb %d step %d pushed into rank %d's chunk that rank %d "
                             "tb %d step %d pushed before, not received yet",
                             sc->rank, sc->tb, sc->step, su.rank, x->pend[i].from_rank, x->pend[i].tb, x->pend[i].step);
                return GC3_ERR_VERIFY;
            }
        }
        if (x->npend == x->cappend) {
            gc3_refpush_t *n = realloc(x->pend, (size_t)(x->cappend * 2 + 16) * sizeof(*n));
            if (n == NULL) {
                return GC3_ERR_NO_MEMORY;
            }
            x->pend    = n;
            x->cappend = x->cappend * 2 + 16;
        }
        memcpy(dst, msg->data + (size_t)c * x->chunk_bytes, x->chunk_bytes);
        x->pend[x->npend++] = (gc3_refpush_t){ dst, su.rank, u, sc->rank, sc->tb, sc->step };
    }
    free(msg->zc); /* pushed: the sender's chunks need not stay */
    msg->zc        = NULL;
    msg->pushed_to = u;
    return GC3_OK;
}

/* Before step sc runs: none of the chunks it reads or writes may be one pushed to its rank whose
 * receiving step has not run (a step of the push's own receive excepted); that step's pushes end. */
static gc3_status_t gc3_ref_push_check(gc3_refctx_t *x, const gc3_sim_step_t *sc)
{
    const gc3_flat_step_t *fs    = sc->st;
    const unsigned         flags = gc3_step_flags((gc3_step_type_t)fs->type);
    const int              me    = sc->tbinfo->step_begin + sc->step;
    int                    here  = 0; /* a push to this rank for another step is pending */

    for (int i = 0; i < x->npend; i++) {
        here = here || (x->pend[i].rank == sc->rank && x->pend[i].recv != me);
    }
    for (int c = 0; c < fs->cnt && here; c++) {
        char *src = (flags & GC3_STEP_F_READ_SRC) ? gc3_ref_addr(x, sc, fs->srcbuf, fs->srcoff + c) : NULL;
        char *dst = (flags & (GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST))
                        ? gc3_ref_addr(x, sc, fs->dstbuf, fs->dstoff + c)
                        : NULL;
        for (int i = 0; i < x->npend; i++) {
            const gc3_refpush_t *e = &x->pend[i];
            if (e->rank == sc->rank && e->recv != me && (src == e->addr || dst == e->addr)) {
                gc3_diag_add(x->diag,
                             "zero-copy hazard: rank %d tb %d step %d pushed a chunk into rank %d, and rank %d tb "
                             "%d step %d touched it before the receiving step ran",
                             e->from_rank, e->tb, e->step, e->rank, sc->rank, sc->tb, sc->step);
                return GC3_ERR_VERIFY;
            }
        }
    }
    for (int i = 0; i < x->npend;) {
        if (x->pend[i].recv == me) {
            x->pend[i] = x->pend[--x->npend];
        } else {
            i++;
        }
    }
    return GC3_OK;
}

/* zero_copy's schedule: a block whose next step receives runs after every other runnable one */
static double gc3_ref_priority(void *ctx, int gtb)
{
    const gc3_refctx_t    *x  = ctx;
    const gc3_flat_tb_t   *b  = &gc3_flat_tbs(x->flat)[gtb];
    const gc3_flat_step_t *st = &gc3_flat_steps(x->flat)[b->step_begin + x->next[gtb]];
    return (gc3_step_flags((gc3_step_type_t)st->type) & GC3_STEP_F_RECV) ? 1.0 : 0.0;
}

static gc3_status_t gc3_ref_exec(void *ctx, const gc3_sim_step_t *sc, void *in, void **out_p)
{
    gc3_refctx_t          *x     = ctx;
    const gc3_flat_step_t *fs    = sc->st;
    unsigned               flags = gc3_step_flags((gc3_step_type_t)fs->type);
    gc3_refmsg_t          *msg   = in;
    gc3_status_t           status = GC3_OK;
    size_t                 cb    = x->chunk_bytes;
    char                  *val   = NULL; /* the value of the step, cnt chunks */
    int                    cnt   = fs->cnt;

    if (fs->type == GC3_STEP_NOP) {
        gc3_refmsg_free(x, msg);
        return GC3_OK;
    }
    if (msg != NULL && msg->cnt != cnt) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d: message of %d chunks where %d are expected", sc->rank, sc->tb,
                     sc->step, msg->cnt, cnt);
        gc3_refmsg_free(x, msg);
        return GC3_ERR_VERIFY;
    }
    if (x->next != NULL) {
        const gc3_flat_tb_t *b = sc->tbinfo;
        x->next[sc->gtb]       = sc->step + 1 < b->nsteps ? sc->step + 1 : 0;
        if ((status = gc3_ref_push_check(x, sc)) != GC3_OK) {
            gc3_refmsg_free(x, msg);
            return status;
        }
    }
    if (msg != NULL && msg->pushed_to >= 0 && msg->pushed_to != sc->tbinfo->step_begin + sc->step) {
        gc3_diag_add(x->diag, "rank %d tb %d step %d received a message pushed for another step", sc->rank, sc->tb,
                     sc->step);
        gc3_refmsg_free(x, msg);
        return GC3_ERR_VERIFY;
    }
    if (msg != NULL && msg->zc != NULL) {
        /* the receiver reads the sender's chunks now: they must still be what was sent */
        for (int c = 0; c < cnt; c++) {
            if (memcmp(msg->zc[c], msg->data + (size_t)c * cb, cb) != 0) {
                gc3_diag_add(x->diag, "zero-copy hazard: rank %d tb %d step %d sent chunk %d of its message in place, "
                             "and it was overwritten before rank %d tb %d step %d read it", msg->rank, msg->tb,
                             msg->step, c, sc->rank, sc->tb, sc->step);
                gc3_refmsg_free(x, msg);
                return GC3_ERR_VERIFY;
            }
        }
        free(msg->zc);
        msg->zc = NULL;
    }
    if (msg != NULL) {
        val = msg->data;
    } else if (flags & GC3_STEP_F_SEND) {
        val = malloc((size_t)cnt * cb + 1);
        if (val == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
    }
    for (int c = 0; c < cnt; c++) {
        char *src = NULL, *dst = NULL;
        if (flags & GC3_STEP_F_READ_SRC) {
            src = gc3_ref_addr(x, sc, fs->srcbuf, fs->srcoff + c);
            if (src == NULL) {
                status = GC3_ERR_VERIFY;
                break;
            }
        }
        if (flags & GC3_STEP_F_WRITE_DST) {
            dst = gc3_ref_addr(x, sc, fs->dstbuf, fs->dstoff + c);
            if (dst == NULL) {
                status = GC3_ERR_VERIFY;
                break;
            }
        }
        switch (fs->type) {
        case GC3_STEP_SEND: memcpy(val + (size_t)c * cb, src, cb); break;
        case GC3_STEP_RECV:
        case GC3_STEP_RCS:
            if (msg->pushed_to < 0) { /* (pushed: its sender wrote it there) */
                memcpy(dst, val + (size_t)c * cb, cb);
            }
            break;
        case GC3_STEP_RRC:
        case GC3_STEP_RRS:
        case GC3_STEP_RRCS:
            if (msg->pushed_to >= 0) {
                /* pushed: the operand is what landed in the destination (whatever happened to it since) */
                memcpy(val + (size_t)c * cb, dst, cb);
            }
            status = gc3_reduce_host(x->args->dtype, x->args->op, val + (size_t)c * cb, src, cb / gc3_dtype_size(x->args->dtype));
            if (dst != NULL) {
                memcpy(dst, val + (size_t)c * cb, cb);
            }
            break;
        case GC3_STEP_CPY: memmove(dst, src, cb); break;
        case GC3_STEP_RE:
            status = gc3_reduce_host(x->args->dtype, x->args->op, dst, src, cb / gc3_dtype_size(x->args->dtype));
            break;
        default: break;
        }
        if (status != GC3_OK) {
            break;
        }
    }
    if (status != GC3_OK) {
        if (msg != NULL) {
            gc3_refmsg_free(x, msg);
        } else {
            free(val);
        }
        return status;
    }
    if (flags & GC3_STEP_F_SEND) {
        if (msg == NULL) {
            msg = malloc(sizeof(*msg));
            if (msg == NULL) {
                free(val);
                return GC3_ERR_NO_MEMORY;
            }
            msg->cnt  = cnt;
            msg->data = val;
            msg->zc   = NULL;
        }
        status = gc3_ref_zc_note(x, sc, msg);
        if (status == GC3_OK) {
            status = gc3_ref_push(x, sc, msg);
        }
        if (status != GC3_OK) {
            gc3_refmsg_free(x, msg);
            return status;
        }
        *out_p = msg; /* the received buffer travels on */
    } else {
        gc3_refmsg_free(x, msg);
    }
    return GC3_OK;
}

gc3_status_t gc3_refexec_run(const gc3_ir_program_t *p, const gc3_refexec_args_t *args, void *const *inputs,
                             void *const *outputs, gc3_diag_t *diag)
{
    gc3_refctx_t        x;
    gc3_sim_ops_t       ops    = {gc3_ref_exec, args->zero_copy ? gc3_ref_priority : NULL, gc3_refmsg_free};
    gc3_sim_params_t    params = {args->slots > 0 ? args->slots : 8, 1, args->zero_copy != 0};
    gc3_flat_program_t *flat   = NULL;
    gc3_status_t        status;
    size_t              dsize  = gc3_dtype_size(args->dtype);

    if (dsize == 0 || !gc3_op_valid(args->op, args->dtype)) {
        gc3_diag_add(diag, "refexec: operator %s is not defined on %s", gc3_op_name(args->op), gc3_dtype_name(args->dtype));
        return GC3_ERR_INVALID_PARAM;
    }
    if (args->inplace ? !p->inplace : !p->outofplace) {
        gc3_diag_add(diag, "refexec: program '%s' does not support %s execution", p->name,
                     args->inplace ? "in-place" : "out-of-place");
        return GC3_ERR_UNSUPPORTED;
    }
    if (args->chunk_elems > SIZE_MAX / dsize / 4) {
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_flat_create(p, &flat);
    if (status != GC3_OK) {
        gc3_diag_add(diag, "refexec: program '%s' is malformed (run the verifier)", p->name);
        return status;
    }
    memset(&x, 0, sizeof(x));
    x.flat        = flat;
    x.args        = args;
    x.inputs      = inputs;
    x.outputs     = outputs;
    x.chunk_bytes = (size_t)args->chunk_elems * dsize;
    x.diag        = diag;
    x.scratch     = calloc((size_t)p->ngpus, sizeof(char *));
    if (args->zero_copy) {
        /* the runtime's marking, on every rank (homed rrs steps become rrcs) */
        for (int r = 0; r < p->ngpus; r++) {
            (void)gc3_flat_zc_mark(flat, r, 1, NULL);
        }
        x.next    = calloc((size_t)flat->ntbs + 1, sizeof(int));
        x.match   = malloc(((size_t)flat->nsteps + 1) * sizeof(int));
        x.step_tb = malloc(((size_t)flat->nsteps + 1) * sizeof(int));
        if (x.match != NULL && x.step_tb != NULL) {
            gc3_flat_match_sends(flat, x.match);
            for (int t = 0; t < flat->ntbs; t++) {
                for (int s = 0; s < gc3_flat_tbs(flat)[t].nsteps; s++) {
                    x.step_tb[gc3_flat_tbs(flat)[t].step_begin + s] = t;
                }
            }
        }
    }
    if (x.scratch == NULL || (args->zero_copy && (x.next == NULL || x.match == NULL || x.step_tb == NULL))) {
        status = GC3_ERR_NO_MEMORY;
        goto out;
    }
    for (int r = 0; r < p->ngpus; r++) {
        x.scratch[r] = calloc((size_t)p->gpus[r].s_chunks * x.chunk_bytes + 1, 1);
        if (x.scratch[r] == NULL) {
            status = GC3_ERR_NO_MEMORY;
            goto out;
        }
    }
    status = gc3_sim_run(flat, &params, &ops, &x, diag);
out:
    if (x.scratch != NULL) {
        for (int r = 0; r < p->ngpus; r++) {
            free(x.scratch[r]);
        }
    }
    free(x.scratch);
    free(x.next);
    free(x.match);
    free(x.step_tb);
    free(x.pend);
    gc3_flat_destroy(flat);
    return status;
}

gc3_status_t gc3_refexec_expected(const gc3_ir_program_t *p, const gc3_postcond_t *pc, const gc3_refexec_args_t *args,
                                  void *const *inputs, void *const *expected)
{
    size_t cb = (size_t)args->chunk_elems * gc3_dtype_size(args->dtype);

    if (pc->nranks != p->ngpus) {
        return GC3_ERR_INVALID_PARAM;
    }
    for (int r = 0; r < p->ngpus; r++) {
        size_t base = 0;
        /* in place, an output that is a slice of the input (reduce_scatter) lies inside the input-sized buffer */
        if (args->inplace && gc3_coll_desc(p->coll)->inplace_inner == GC3_BUF_OUTPUT &&
            gc3_coll_desc(p->coll)->inplace_slice) {
            base = (size_t)r * (size_t)pc->o_chunks[r] * cb;
        }
        for (int c = 0; c < pc->o_chunks[r]; c++) {
            int   cell = pc->cell_begin[r] + c;
            char *dst  = (char *)expected[r] + base + (size_t)c * cb;
            if (pc->dontcare[cell]) {
                continue;
            }
            for (int i = pc->ids_begin[cell]; i < pc->ids_begin[cell + 1]; i++) {
                uint32_t    q = pc->ids[i] / (uint32_t)pc->in_stride, k = pc->ids[i] % (uint32_t)pc->in_stride;
                const char *src = (const char *)inputs[q] + (size_t)k * cb;
                gc3_status_t status;
                if (i == pc->ids_begin[cell]) {
                    memcpy(dst, src, cb);
                    continue;
                }
                status = gc3_reduce_host(args->dtype, args->op, dst, src, (size_t)args->chunk_elems);
                if (status != GC3_OK) {
                    return status;
                }
            }
        }
    }
    return GC3_OK;
}

static uint64_t gc3_splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void gc3_refexec_fill(gc3_dtype_t dtype, gc3_op_t op, void *buf, size_t n, uint64_t seed)
{
    uint64_t s = seed * 0x100000001b3ull + 1;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = gc3_splitmix(&s);
        int64_t  v = op == GC3_OP_PROD ? (int64_t)(1 + r % 2) : (int64_t)(r % 64); /* small, non-negative */
        switch (dtype) {
        case GC3_DT_INT8:    ((int8_t *)buf)[i] = (int8_t)(op == GC3_OP_SUM ? v % 4 : v); break;
        case GC3_DT_UINT8:   ((uint8_t *)buf)[i] = (uint8_t)(op == GC3_OP_SUM ? v % 4 : v); break;
        case GC3_DT_INT32:   ((int32_t *)buf)[i] = (int32_t)(op == GC3_OP_BAND || op == GC3_OP_BOR || op == GC3_OP_BXOR ? (int64_t)(r & 0x7fffffff) : v - 32 * (op != GC3_OP_PROD)); break;
        case GC3_DT_UINT32:  ((uint32_t *)buf)[i] = (uint32_t)(op >= GC3_OP_BAND ? r : (uint64_t)v); break;
        case GC3_DT_INT64:   ((int64_t *)buf)[i] = op >= GC3_OP_BAND ? (int64_t)(r >> 1) : v - 32 * (op != GC3_OP_PROD); break;
        case GC3_DT_UINT64:  ((uint64_t *)buf)[i] = op >= GC3_OP_BAND ? r : (uint64_t)v; break;
        case GC3_DT_FLOAT32: ((float *)buf)[i] = (float)(v - 32 * (op != GC3_OP_PROD)); break;
        case GC3_DT_FLOAT64: ((double *)buf)[i] = (double)(v - 32 * (op != GC3_OP_PROD)); break;
        default: break;
        }
    }
}

static void gc3_fmt_elem(gc3_dtype_t dtype, const void *p, char *buf, size_t len)
{
    switch (dtype) {
    case GC3_DT_INT8:    snprintf(buf, len, "%d", *(const int8_t *)p); break;
    case GC3_DT_UINT8:   snprintf(buf, len, "%u", *(const uint8_t *)p); break;
    case GC3_DT_INT32:   snprintf(buf, len, "%d", *(const int32_t *)p); break;
    case GC3_DT_UINT32:  snprintf(buf, len, "%u", *(const uint32_t *)p); break;
    case GC3_DT_INT64:   snprintf(buf, len, "%lld", (long long)*(const int64_t *)p); break;
    case GC3_DT_UINT64:  snprintf(buf, len, "%llu", (unsigned long long)*(const uint64_t *)p); break;
    case GC3_DT_FLOAT32: snprintf(buf, len, "%g", (double)*(const float *)p); break;
    case GC3_DT_FLOAT64: snprintf(buf, len, "%g", *(const double *)p); break;
    default:             snprintf(buf, len, "?");
    }
}

gc3_status_t gc3_refexec_compare(gc3_dtype_t dtype, const void *got, const void *expected, size_t n,
                                 const char *what, gc3_diag_t *diag)
{
    size_t ds = gc3_dtype_size(dtype);
    for (size_t i = 0; i < n; i++) {
        if (memcmp((const char *)got + i * ds, (const char *)expected + i * ds, ds) != 0) {
            char g[48], e[48];
            gc3_fmt_elem(dtype, (const char *)got + i * ds, g, sizeof(g));
            gc3_fmt_elem(dtype, (const char *)expected + i * ds, e, sizeof(e));
            gc3_diag_add(diag, "%s: element %zu: got %s, expected %s", what, i, g, e);
            return GC3_ERR_MISMATCH;
        }
    }
    return GC3_OK;
}
