/* gc3 / libgpuir: the calls of a plan (gc3_exec_start, _test, _wait, _run): a call's checks, tile,
 * memory and the blocks' contexts, zero-copy per call (the agreement of zero-copy mode), the launch,
 * and at its end the monotonic counters' bases advanced or the error record turned into a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_rt_exec.h"
#include "gc3_rt_net.h"

void gc3_call_seg(const gc3_call_t *c, gc3_buf_t b, int s, uint64_t *first_p, uint64_t *n_p)
{
    if (c->segs != NULL) {
        const uint64_t *e = gc3_coll_segs_pair(c->segs, b, s);
        *first_p          = e[0];
        *n_p              = e[1];
        return;
    }
    *first_p = (uint64_t)s * c->count;
    *n_p     = c->count;
}

void gc3_call_places(gc3_coll_t coll, int root, int rank, const gc3_call_t *c, char **in, char **out)
{
    const gc3_coll_desc_t *d     = gc3_coll_desc(coll);
    uint64_t               first = 0, n = 0;
    char                  *inner = (char *)c->recvbuf;

    if (d->rooted && rank != root) { /* one buffer, never in place (bcast's and scatter's recvbuf is the output) */
        *in  = (char *)c->sendbuf;
        *out = c->recvbuf;
        return;
    }

    /* (recvbuf is NULL only where the rank has no output: a reduce's non-root, gc3_call_check) */
    if (c->recvbuf != NULL && d->inplace_slice) { /* this rank's segment of the outer buffer */
        gc3_call_seg(c, d->inplace_inner == GC3_BUF_INPUT ? GC3_BUF_OUTPUT : GC3_BUF_INPUT, rank, &first, &n);
        inner += (size_t)first * gc3_dtype_size(c->dtype);
    }

    *out = c->recvbuf;
    *in  = (char *)c->sendbuf;
    if (c->sendbuf == NULL) {
        *in  = d->inplace_inner == GC3_BUF_INPUT ? inner : c->recvbuf;
        *out = d->inplace_inner == GC3_BUF_OUTPUT ? inner : c->recvbuf;
    }
}

/* gc3_call_places of a call on p (a relabelled plan's: of this rank under the call's root, its own segment) */
static void gc3_call_buffers(const gc3_plan_t *p, const gc3_call_t *c, char **in, char **out)
{
    gc3_call_places((gc3_coll_t)p->flat->coll, gc3_plan_root_now(p), p->rank, c, in, out);
}

/* May this call run on p now? */
static gc3_status_t gc3_call_check(const gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    if (p->in_flight) {
        gc3_diag_add(diag, "executor: a call is already in flight on this plan");
        return GC3_ERR_INVALID_PARAM;
    }
    if (p->broken) {
        gc3_diag_add(diag, "executor: this plan is unusable after an earlier failure (%s)", p->broken_why);
        return GC3_ERR_UNSUPPORTED;
    }
    if (p->pooled && p->exec->pool_busy != NULL) {
        gc3_diag_add(diag, "executor: a call of another plan that shares the FIFO pool is in flight (the calls of "
                           "pooled plans must not overlap)");
        return GC3_ERR_INVALID_PARAM;
    }
    /* a rooted collective's non-root has one buffer (gc3_coll_access): a reduce's passes no receive buffer,
       a bcast's its receive buffer only, and the program runs alike in either kind of call there */
    const gc3_coll_t coll     = (gc3_coll_t)p->flat->coll;
    const int        has_out  = gc3_coll_access(coll, p->flat->root, p->prank, GC3_BUF_OUTPUT) != 0;
    const int        one_buf  = !has_out || !gc3_coll_access(coll, p->flat->root, p->prank, GC3_BUF_INPUT);
    if (gc3_dtype_size(c->dtype) == 0 || !gc3_op_valid(c->op, c->dtype) ||
        (c->recvbuf == NULL && (has_out || c->sendbuf == NULL))) {
        gc3_diag_add(diag, "executor: operator %s is not defined on %s, or no receive buffer", gc3_op_name(c->op),
                     gc3_dtype_name(c->dtype));
        return GC3_ERR_INVALID_PARAM;
    }
    if (c->segs != NULL) { /* per-rank counts: no segment larger than the call's count */
        const size_t words = gc3_coll_segs_words(coll, p->nranks);
        for (size_t w = 1; w + 1 < words; w += 2) {
            if (c->segs[w + 1] > c->count || c->segs[w] > UINT64_MAX / 2 - c->segs[w + 1]) {
                gc3_diag_add(diag,
                             "executor: a segment of %llu elements at %llu in a call of count %llu (per-rank "
                             "counts: the count is the largest segment of any rank)",
                             (unsigned long long)c->segs[w + 1], (unsigned long long)c->segs[w],
                             (unsigned long long)c->count);
                return GC3_ERR_INVALID_PARAM;
            }
        }
        if (words == 0 || c->segs[0] != (uint64_t)gc3_coll_segments(coll, GC3_BUF_INPUT, p->nranks)) {
            gc3_diag_add(diag,
                         "executor: the per-rank counts of a %s call are not laid out as gc3_coll_segs_words "
                         "says",
                         gc3_coll_name(coll));
            return GC3_ERR_INVALID_PARAM;
        }
    }
    if (!one_buf && (c->sendbuf == NULL ? !p->flat->inplace : !p->flat->outofplace)) {
        gc3_diag_add(diag, "executor: the program does not support %s calls",
                     c->sendbuf == NULL ? "in-place" : "out-of-place");
        return GC3_ERR_UNSUPPORTED;
    }
    return GC3_OK;
}

/* The most bytes a step's message carries in one loop: a slot's payload; in zero-copy mode (big: every
 * message in place, only its header in the slot), params.tile_bytes, at least a slot. */
uint64_t gc3_rt_msg_max(const gc3_exec_params_t *ep, uint64_t slot_payload, int big)
{
    const uint64_t tile = ep->tile_bytes > 0 ? ep->tile_bytes : GC3_TILE_BYTES_DEFAULT;
    return big && tile > slot_payload ? tile / 16 * 16 : slot_payload;
}

/* The tile T (elements a chunk moves per loop) of a call of count elements of dtype, k chunks per
 * segment, messages of at most cnt_max chunks and msg_max bytes: T is a multiple of 16 bytes when it
 * can be (aligned vector access), and not larger than a chunk needs. When the whole chunk fits, T is
 * rounded up, not down: down, a count that is not a multiple of 16 bytes per chunk took a second loop
 * for its last few elements (a whole round of steps). custom: a custom collective, whose chunks may
 * move to other positions (no clipped chunks). */
gc3_status_t gc3_rt_tile(uint64_t msg_max, int cnt_max, int custom, uint64_t count, uint64_t k, gc3_dtype_t dtype,
                         uint64_t *T_p, gc3_diag_t *diag)
{
    const size_t   ds        = gc3_dtype_size(dtype);
    const uint64_t v16       = ds > 0 && ds < 16 ? 16 / ds : 1; /* elements in 16 bytes (a vector), at least 1 */
    const uint64_t per_chunk = (count + k - 1) / k;
    uint64_t       T         = msg_max / (uint64_t)cnt_max / ds;

    if (T >= per_chunk) {
        T = per_chunk;
        if (T >= v16 && (uint64_t)cnt_max * gc3_rt_round(T, v16) * ds <= msg_max) {
            T = gc3_rt_round(T, v16);
        }
    }
    if (T >= v16) {
        T = T / v16 * v16;
    }
    if (T == 0) {
        gc3_diag_add(diag, "executor: a message of at most %llu bytes cannot hold %d chunks of %s",
                     (unsigned long long)msg_max, cnt_max, gc3_dtype_name(dtype));
        return GC3_ERR_INVALID_PARAM;
    }
    if (custom) {
        /* a custom collective may move chunk m to another position: no clipped chunks allowed */
        if (count % k != 0) {
            gc3_diag_add(diag, "executor: custom collective '%d chunks per segment' needs a count divisible by %llu",
                         (int)k, (unsigned long long)k);
            return GC3_ERR_UNSUPPORTED;
        }
        while ((count / k) % T != 0) {
            T--;
        }
    }
    *T_p = T;
    return GC3_OK;
}

/* The tile of a call of this plan (gc3_rt_tile with the plan's slots, big: in zero-copy mode). */
static gc3_status_t gc3_call_tile(const gc3_plan_t *p, const gc3_call_t *c, uint64_t k, int big, uint64_t *T_p,
                                  gc3_diag_t *diag)
{
    return gc3_rt_tile(gc3_rt_msg_max(&p->exec->params, p->slot_payload, big), p->cnt_max,
                       p->flat->coll == GC3_COLL_CUSTOM, c->count, k, c->dtype, T_p, diag);
}

/* The plan's private memory for a call: scratch (copies of s_chunks chunks of tiles of T elements of ds
 * bytes, one per loop up to the window: gc3_rt_scratch_copies), LL staging. */
static gc3_status_t gc3_call_memory(gc3_plan_t *p, int s_chunks, uint64_t T, size_t ds, int loops, gc3_diag_t *diag)
{
    const size_t need = (size_t)s_chunks * T * ds * (size_t)gc3_rt_scratch_copies((uint64_t)loops);
    gc3_status_t status;

    if (need > p->scratch_bytes) {
        gc3_plan_scratch_free(p);
        status = p->exec->be->mem_alloc(p, need, &p->scratch);
        if (status != GC3_OK) {
            gc3_diag_add(diag, "executor: cannot allocate %zu bytes of scratch", need);
            return status;
        }
        p->scratch_bytes = need;
        p->mem.scratch   = need;
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, (int64_t)need);
    }
    if (p->proto == GC3_PROTO_LL && p->stage == NULL) {
        p->stage_bytes = gc3_plan_stage_bytes(p->slot_payload);
        status = p->exec->be->mem_alloc(p, p->stage_bytes * 2 * (size_t)(p->ntbs_max > 0 ? p->ntbs_max : 1), &p->stage);
        if (status == GC3_OK) {
            p->mem.stage = p->stage_bytes * 2 * (size_t)(p->ntbs_max > 0 ? p->ntbs_max : 1);
            gc3_rt_held_add(GC3_RT_HELD_DEVICE, (int64_t)p->mem.stage);
        }
        return status;
    }
    return GC3_OK;
}

/* The call's signature (FNV-1a of count, datatype, operation; never 0): a peer that calls with
 * another one fails the call at its first message instead of mixing data. */
static uint64_t gc3_call_signature(const gc3_call_t *c)
{
    uint64_t v[3] = { (uint64_t)c->count, (uint64_t)c->dtype, (uint64_t)c->op };
    uint64_t sig  = gc3_fnv1a(GC3_FNV1A_START, v, sizeof(v));
    return sig != 0 ? sig : 1;
}

/* What changes between calls in the blocks' contexts (the rest was set by gc3_plan_ctx_init). */
static void gc3_call_contexts(gc3_plan_t *p, const gc3_call_t *c, const uint64_t *seg, uint64_t T, int L, int window)
{
    char          *in, *out;
    const uint64_t sig      = gc3_call_signature(c);
    /* (a relabelled plan's shifts use different connections, whose counters do not order this call after
     * another plan's: a new shift hands over as a new plan does) */
    const int handover = p->pooled && (p->exec->pool_last != p->id || p->exec->pool_last_shift != p->shift);

    gc3_call_buffers(p, c, &in, &out);
    for (int t = 0; t < p->ntbs; t++) {
        gc3_rt_tb_t *x          = &p->tbs_ctx[t];
        x->send_base            = p->send_base[t];
        x->recv_base            = p->recv_base[t];
        x->head_seen            = 0;
        x->send_slot            = (uint32_t)(p->send_base[t] % (uint64_t)p->slots);
        x->recv_slot            = (uint32_t)(p->recv_base[t] % (uint64_t)p->slots);
        x->window               = window;
        x->buf[GC3_BUF_INPUT]   = in;
        x->buf[GC3_BUF_OUTPUT]  = out;
        x->buf[GC3_BUF_SCRATCH] = p->scratch;
        x->count                = c->count;
        x->seg                  = seg;
        x->seg_ver              = seg != NULL ? p->segs_ver : 0;
        x->T                    = T;
        x->L                    = L;
        x->dtype                = c->dtype;
        x->op                   = c->op;
        x->dsize                = (int32_t)gc3_dtype_size(c->dtype);
        x->sig                  = sig;
        x->handover             = handover;
        if (p->stage != NULL) {
            x->stage_in  = p->stage + (size_t)(2 * t) * p->stage_bytes;
            x->stage_out = p->stage + (size_t)(2 * t + 1) * p->stage_bytes;
        }
    }
}

/* Bytes of the call's buffer b (0 input, 1 output) at a rank: up to the end of its last segment. */
static uint64_t gc3_call_buf_bytes(const gc3_plan_t *p, const gc3_call_t *c, int b)
{
    const int segs = gc3_coll_segments((gc3_coll_t)p->flat->coll, (gc3_buf_t)b, p->nranks);
    uint64_t  end  = 0, first, n;

    for (int s = 0; s < segs; s++) {
        gc3_call_seg(c, (gc3_buf_t)b, s, &first, &n);
        end = n > 0 && first + n > end ? first + n : end;
    }
    return end * gc3_dtype_size(c->dtype);
}

/* The call's per-rank counts into the plan's copy, which the blocks read (a new version when its words
 * changed); the contexts' pointer to it, or NULL. */
static gc3_status_t gc3_call_segs_copy(gc3_plan_t *p, const uint64_t *segs, size_t bytes, const uint64_t **seg_p,
                                       gc3_diag_t *diag);

/* Does a call of the plan run with the segments of a buffer rotated (a relabelled gather's or scatter's of
 * another root than its program's)? It then runs on a table as MPI's v-calls do, and as they do without
 * zero-copy (its messages' places come from the table). */
static int gc3_call_rotates(const gc3_plan_t *p)
{
    const gc3_coll_desc_t *d = gc3_coll_desc((gc3_coll_t)p->flat->coll);
    return p->shift != 0 && (d->in_per_rank || d->out_per_rank);
}

/* A relabelled plan's call for another root than its program's: the segments of the buffers with one per rank
 * rotated (the program's segment s is rank (s + shift) mod n's), as a table (tab: gc3_coll_segs_words words). */
static void gc3_call_segs_rotated(const gc3_plan_t *p, const gc3_call_t *c, uint64_t *tab)
{
    const gc3_coll_t coll = (gc3_coll_t)p->flat->coll;
    const int        n    = p->nranks;
    uint64_t        *e    = tab + 1;

    tab[0] = (uint64_t)gc3_coll_segments(coll, GC3_BUF_INPUT, n);
    for (int b = GC3_BUF_INPUT; b <= GC3_BUF_OUTPUT; b++) {
        const int segs = gc3_coll_segments(coll, (gc3_buf_t)b, n);
        for (int s = 0; s < segs; s++, e += 2) {
            gc3_call_seg(c, (gc3_buf_t)b, segs == n ? (s + p->shift) % n : s, &e[0], &e[1]);
        }
    }
}

#define GC3_CALL_SEGS_LOCAL 256

static gc3_status_t gc3_call_segs(gc3_plan_t *p, const gc3_call_t *c, const uint64_t **seg_p, gc3_diag_t *diag)
{
    const size_t words = gc3_coll_segs_words((gc3_coll_t)p->flat->coll, p->nranks);
    const size_t bytes = words * sizeof(uint64_t);
    const int    rot   = gc3_call_rotates(p);
    uint64_t     local[GC3_CALL_SEGS_LOCAL]; /* a rotated table of up to ~125 ranks, without the heap */
    uint64_t    *tab = NULL;
    gc3_status_t status;

    *seg_p = NULL;
    if (c->segs == NULL && !rot) {
        return GC3_OK;
    }
    if (rot) {
        tab = words <= GC3_CALL_SEGS_LOCAL ? local : malloc(bytes);
        if (tab == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        gc3_call_segs_rotated(p, c, tab);
    }
    status = gc3_call_segs_copy(p, tab != NULL ? tab : c->segs, bytes, seg_p, diag);
    if (tab != local) {
        free(tab);
    }
    return status;
}

/* The table into the plan's copy, which the blocks read (a new version when its words changed) */
static gc3_status_t gc3_call_segs_copy(gc3_plan_t *p, const uint64_t *segs, size_t bytes, const uint64_t **seg_p,
                                       gc3_diag_t *diag)
{
    gc3_status_t status;

    if (bytes > p->segs_bytes) {
        char *mem = NULL;
        if ((status = p->exec->be->host_alloc(p, bytes, &mem)) != GC3_OK) {
            gc3_diag_add(diag, "executor: cannot allocate %zu bytes for a call's per-rank counts", bytes);
            return status;
        }
        if (p->segs != NULL) {
            p->exec->be->host_free(p, (char *)p->segs, p->segs_bytes);
            gc3_rt_held_add(GC3_RT_HELD_PINNED, -(int64_t)p->segs_bytes);
        }
        gc3_rt_held_add(GC3_RT_HELD_PINNED, (int64_t)bytes);
        p->segs       = (uint64_t *)mem;
        p->segs_bytes = bytes;
        p->segs_ver   = 0; /* (a new copy: a new version below) */
    }
    if (p->segs_ver == 0 || memcmp(p->segs, segs, bytes) != 0) {
        memcpy(p->segs, segs, bytes);
        p->segs_ver = p->segs_ver % ((1u << 24) - 1) + 1;
    }
    *seg_p = p->segs;
    return GC3_OK;
}

/* Zero-copy for the call: which marking applies, this rank's registrations of its buffers (held until
 * the call ends) and the peers that mapped them, in every block's context. */
static void gc3_call_zc(gc3_plan_t *p, const gc3_call_t *c)
{
    const int      bit = c->sendbuf == NULL ? GC3_FLAT_ZC_IP : GC3_FLAT_ZC_OOP;
    const uint64_t nz  = c->sendbuf == NULL ? (uint64_t)p->zc_stats.ip : (uint64_t)p->zc_stats.oop;
    char          *buf[2];
    uint64_t       peers[2] = { 0, 0 };
    const char    *why      = NULL;

    p->zc_held[0] = p->zc_held[1] = 0;
    p->zc_peers_last              = 0;
    p->zc_why                     = NULL;
    if (!p->exec->params.zero_copy || nz == 0 || p->exec->reg == NULL || c->segs != NULL || gc3_call_rotates(p)) {
        for (int t = 0; t < p->ntbs; t++) {
            p->tbs_ctx[t].zc_bit = 0;
        }
        return;
    }
    gc3_reg_progress(p->exec);
    gc3_call_buffers(p, c, &buf[0], &buf[1]);
    for (int b = 0; b < 2; b++) {
        const size_t bytes = (size_t)gc3_call_buf_bytes(p, c, b);
        const char  *w     = NULL;
        p->zc_held[b]      = buf[b] != NULL ? gc3_reg_lookup(p->exec, buf[b], bytes, &peers[b], &w) : 0; /* NULL: no output */
        why           = why != NULL ? why : w;
    }
    p->zc_peers_last = __builtin_popcountll(peers[0] | peers[1]);
    p->zc_why = p->zc_peers_last > 0 ? NULL : why;
    {
        const uint64_t all = gc3_reg_all_peers(p->exec->reg);
        p->zc_ready        = (peers[1] & all) == all && (c->sendbuf == NULL || (peers[0] & all) == all);
    }
    for (int t = 0; t < p->ntbs; t++) {
        gc3_rt_tb_t *x = &p->tbs_ctx[t];
        x->zc_bit      = bit;
        x->zc_id[0]    = p->zc_held[0];
        x->zc_id[1]    = p->zc_held[1];
        x->zc_peers[0] = peers[0];
        x->zc_peers[1] = peers[1];
    }
}

/* The call's registrations go back (the call ended). */
static void gc3_call_zc_end(gc3_plan_t *p)
{
    for (int b = 0; b < 2; b++) {
        gc3_reg_unref(p->exec, p->zc_held[b]);
        p->zc_held[b] = 0;
    }
}

/* The backend starts the call (between nodes, the transport's part of it first). */
static gc3_status_t gc3_call_launch(gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    gc3_status_t status;

    if (p->crosses_nodes) {
        gc3_rt_error_t ne;
        if (p->transport->failed(p, &ne)) {
            gc3_rt_error_format(&ne, p->broken_why, sizeof(p->broken_why));
            gc3_diag_add(diag, "executor: %s", p->broken_why);
            p->broken = 1;
            return GC3_ERR_IO;
        }
        p->transport->call_begin(p);
    }
    status = p->exec->be->start(p, c->stream, diag);
    if (status != GC3_OK && p->crosses_nodes) {
        p->transport->call_end(p);
    }
    return status;
}

/* The push form (doc/design/zero-copy.md): in zero-copy mode, each block writes the chunks of its sends
 * marked for it straight into its receiver's buffer, where this rank maps it (every rank posted its
 * call's buffers with its agreement word); otherwise, with params.zc_pull, and in a plan of a rule's
 * zero_copy=pull, nothing is pushed. */
static void gc3_call_push(gc3_plan_t *p, const gc3_call_t *c, int big)
{
    const int      on  = big && !p->exec->params.zc_pull && !p->zc_pull;
    const uint64_t sig = on ? gc3_call_signature(c) : 0;
    uint64_t       to = 0, looked = 0; /* the peers pushed to, and looked up (bit: index on the node) */
    uint64_t       dst[64][2];         /* per peer looked up: where its buffers are mapped here */

    for (int t = 0; t < p->ntbs; t++) {
        gc3_rt_tb_t *x = &p->tbs_ctx[t];
        const int    q = x->zc_slocal; /* (-1, or below 64) */
        if (!on || q < 0) {
            x->push[0] = x->push[1] = 0;
            continue;
        }
        if (!((looked >> q) & 1)) {       /* once per peer, not per block: each lookup takes the cache's lock */
            for (int b = 0; b < 2; b++) { /* (the same call on every rank: its signature) */
                dst[q][b] = gc3_reg_push_dst(p->exec->reg, p->id, p->zc_seq, q, b, sig, gc3_call_buf_bytes(p, c, b));
            }
            looked |= 1ull << q;
            to |= dst[q][0] != 0 || dst[q][1] != 0 ? 1ull << q : 0;
        }
        x->push[0] = dst[q][0];
        x->push[1] = dst[q][1];
    }
    p->zc_pushed_last = __builtin_popcountll(to);
}

/* The call's tile, memory and contexts, then its launch (big: in zero-copy mode, the large tile). */
static gc3_status_t gc3_call_go(gc3_plan_t *p, const gc3_call_t *c, int big, gc3_diag_t *diag)
{
    const uint64_t k        = (uint64_t)(p->k_in > p->k_out ? p->k_in : p->k_out);
    const int       s_chunks = gc3_flat_ranks(p->flat)[p->prank].s_chunks;
    const int      window   = s_chunks > 0 ? GC3_RT_WINDOW : 0;
    uint64_t       T        = 0;
    const uint64_t *seg      = NULL;
    gc3_status_t   status;
    int            L;

    if ((status = gc3_call_tile(p, c, k, big, &T, diag)) != GC3_OK ||
        (status = gc3_call_segs(p, c, &seg, diag)) != GC3_OK) {
        return status;
    }
    L = (int)((c->count + k * T - 1) / (k * T));
    if ((status = gc3_call_memory(p, s_chunks, T, gc3_dtype_size(c->dtype), L, diag)) != GC3_OK) {
        return status;
    }
    if (p->pooled && p->pool_epoch != p->exec->pool_epoch) {
        gc3_plan_pool_move(p); /* (it was in flight when the pool grew) */
    }
    p->zc_big = big;
    p->call_L = L;
    gc3_call_contexts(p, c, seg, T, p->call_L, window);
    gc3_call_push(p, c, big);
    return gc3_call_launch(p, c, diag);
}

uint64_t gc3_exec_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int gc3_exec_times(const gc3_plan_t *p, gc3_exec_times_t *times)
{
    if (!p->exec->params.breakdown || p->times.start == 0 || p->times.seen == 0) {
        return 0;
    }
    *times = p->times;
    return 1;
}

static gc3_status_t gc3_call_start(gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    const int    kind = c->sendbuf == NULL;
    gc3_status_t status;

    if (p->exec->params.breakdown) {
        /* (the sums stay: exchange_ns, exchanges) */
        p->times.ordered = p->times.posted = p->times.seen = p->times.picked = p->times.exchanged = 0;
        p->times.start                                                                            = gc3_exec_now_ns();
    }
    status = gc3_call_check(p, c, diag);

    if (status != GC3_OK || c->count == 0) {
        return status; /* (nothing to move: every rank returns at once) */
    }
    gc3_call_zc(p, c);
    if (p->zc_agree[kind] && c->segs == NULL) { /* (a call of per-rank counts on every rank alike) */
        /* zero-copy mode if every rank of the node is ready: launched once all said (gc3_exec_test) */
        p->call    = *c;
        p->pending = 1;
        p->pend_ns = gc3_exec_now_ns();
        char *buf[2];
        gc3_call_buffers(p, c, &buf[0], &buf[1]);
        gc3_reg_agree_post(p->exec->reg, p->id, ++p->zc_seq, p->zc_ready, p->zc_held, buf, gc3_call_signature(c));
    } else if ((status = gc3_call_go(p, c, 0, diag)) != GC3_OK) {
        gc3_call_zc_end(p);
        return status;
    }
    p->in_flight = 1;
    if (p->pooled) {
        p->exec->pool_busy = p;
        p->exec->pool_last       = p->id;
        p->exec->pool_last_shift = p->shift;
    }
    return GC3_OK;
}

/* A pending call (zero-copy mode agreement): GC3_IN_PROGRESS while a rank of the node has not said;
 * then launched (GC3_OK), or the error of its launch, or a timeout naming the rank that never said. */
static gc3_status_t gc3_call_agreed(gc3_plan_t *p, gc3_diag_t *diag)
{
    int          all = 0, missing = -1;
    gc3_status_t status = gc3_reg_agree_test(p->exec->reg, p->id, p->zc_seq, &all, &missing);

    if (status == GC3_IN_PROGRESS) {
        if (p->exec->params.timeout_s > 0 &&
            (double)(gc3_exec_now_ns() - p->pend_ns) * 1e-9 > p->exec->params.timeout_s) {
            gc3_diag_add(diag, "timeout after %.1f s: rank %d waited for rank %d to start the call (zero-copy mode)",
                         p->exec->params.timeout_s, p->rank, gc3_reg_rank_of(p->exec->reg, missing));
            return GC3_ERR_TIMEOUT;
        }
        return GC3_IN_PROGRESS;
    }
    p->pending = 0;
    if (p->pooled) {
        pthread_mutex_lock(&p->exec->pool_lock);
    }
    status = gc3_call_go(p, &p->call, all, diag);
    if (p->pooled) {
        pthread_mutex_unlock(&p->exec->pool_lock);
    }
    return status;
}

gc3_status_t gc3_exec_start(gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    gc3_status_t status;

    p->started_ns = gc3_exec_now_ns();
    if (!p->pooled) {
        return gc3_call_start(p, c, diag);
    }
    pthread_mutex_lock(&p->exec->pool_lock);
    status = gc3_call_start(p, c, diag);
    pthread_mutex_unlock(&p->exec->pool_lock);
    return status;
}

/* After a call: advance the bases, or turn the error record into a message. */
static gc3_status_t gc3_exec_finish(gc3_plan_t *p, gc3_status_t status, gc3_diag_t *diag)
{
    if (p->exec->params.breakdown) {
        p->times.seen = gc3_exec_now_ns();
    }
    p->in_flight = 0;
    p->pending   = 0;
    gc3_call_zc_end(p);
    if (p->crosses_nodes) {
        p->transport->call_end(p);
    }
    if (p->pooled) {
        pthread_mutex_lock(&p->exec->pool_lock);
        p->exec->pool_busy = NULL;
        if (p->pool_epoch != p->exec->pool_epoch) {
            gc3_plan_pool_move(p); /* the pool grew meanwhile: the old one can go now */
        }
        pthread_mutex_unlock(&p->exec->pool_lock);
    }
    if (status == GC3_OK && p->err->set == 0 && *p->abort_flag == 0) {
        /* the resident kernel (cuda/kernels.cu, gc3_cuda_resident) advances its own copies the same
         * way; its check word, sem_base[0], catches a difference */
        for (int t = 0; t < p->ntbs; t++) {
            p->sem_base[t] += (uint64_t)p->call_L * (uint64_t)p->tb_nsteps[t];
            p->loops_base[t] += (uint64_t)p->call_L;
            p->send_base[t] += (uint64_t)p->call_L * (uint64_t)p->nsend[t];
            p->recv_base[t] += (uint64_t)p->call_L * (uint64_t)p->nrecv[t];
        }
        return GC3_OK;
    }
    if (p->err->set && (p->err->what == GC3_WAIT_WHAT_NET || p->err->what == GC3_WAIT_WHAT_MISMATCH ||
                        p->err->what == GC3_WAIT_WHAT_ZC || p->err->what == GC3_WAIT_WHAT_PUSHED)) {
        gc3_rt_error_format(p->err, p->broken_why, sizeof(p->broken_why));
        gc3_diag_add(diag, "%s", p->broken_why);
        status = GC3_ERR_IO;
    } else if (p->err->set) {
        gc3_rt_error_format(p->err, p->broken_why, sizeof(p->broken_why));
        gc3_diag_add(diag, "timeout after %.1f s: %s", p->exec->params.timeout_s, p->broken_why);
        status = GC3_ERR_TIMEOUT;
    } else {
        if (p->broken_why[0] != '\0') { /* the backend said why */
            gc3_diag_add(diag, "executor: the call was aborted: %s", p->broken_why);
        } else {
            snprintf(p->broken_why, sizeof(p->broken_why), "the call was aborted (%s)", gc3_status_string(status));
            gc3_diag_add(diag, "executor: %s", p->broken_why);
        }
        status = status == GC3_OK ? GC3_ERR_TIMEOUT : status;
    }
    p->broken = 1; /* counters of the peers are out of step now */
    return status;
}

gc3_status_t gc3_exec_test(gc3_plan_t *p, int *done_p, gc3_diag_t *diag)
{
    gc3_status_t status;

    if (!p->in_flight) {
        *done_p = 1;
        return GC3_OK;
    }
    if (p->pending) {
        status  = gc3_call_agreed(p, diag);
        *done_p = status != GC3_OK && status != GC3_IN_PROGRESS;
        if (*done_p) {
            /* never launched (or its launch failed): no kernel, nothing to wait for; the ranks are out of
             * step now */
            snprintf(p->broken_why, sizeof(p->broken_why), "%s",
                     diag != NULL && diag->count ? diag->msgs[diag->count - 1] : gc3_status_string(status));
            p->in_flight = 0;
            p->pending   = 0;
            p->broken    = 1;
            gc3_call_zc_end(p);
            if (p->pooled) {
                pthread_mutex_lock(&p->exec->pool_lock);
                p->exec->pool_busy = NULL;
                pthread_mutex_unlock(&p->exec->pool_lock);
            }
            return status;
        }
        return GC3_OK;
    }
    status = p->exec->be->test(p, done_p);
    if (status != GC3_OK || *done_p) {
        *done_p = 1;
        return gc3_exec_finish(p, status, diag);
    }
    gc3_reg_progress(p->exec); /* (peers' new registrations, for the calls to come) */
    return GC3_OK;
}

gc3_status_t gc3_exec_wait(gc3_plan_t *p, gc3_diag_t *diag)
{
    uint64_t polls = 0;

    if (!p->in_flight) {
        return GC3_OK;
    }
    while (p->pending) {
        int          done = 0;
        gc3_status_t st   = gc3_exec_test(p, &done, diag);
        if (st != GC3_OK || done) {
            return st;
        }
        if (p->pending && ++polls > 64) {
            struct timespec ts = { 0, polls > 4096 ? 50000 : 1000 };
            nanosleep(&ts, NULL);
        }
    }
    gc3_reg_progress(p->exec);
    return gc3_exec_finish(p, p->exec->be->wait(p), diag);
}

gc3_status_t gc3_exec_wait_for(gc3_plan_t *p, uint64_t budget_ns, gc3_diag_t *diag)
{
    struct timespec ts = { 0, 50000 };
    uint64_t        t0 = 0, polls = 0;

    if (!p->in_flight) {
        return GC3_OK;
    }
    if (p->pending) {
        /* the zero-copy agreement: one look (it needs the caller's progress) */
        int                done = 0;
        const gc3_status_t st   = gc3_exec_test(p, &done, diag);
        return st != GC3_OK || done ? st : GC3_IN_PROGRESS;
    }
    gc3_reg_progress(p->exec); /* (once a wait, as gc3_exec_wait) */
    for (;;) {
        int                done = 0;
        const gc3_status_t st   = p->exec->be->test(p, &done);
        if (st != GC3_OK || done) {
            return gc3_exec_finish(p, st, diag);
        }
        if ((++polls & 63) == 0) { /* (the clock: not at every look of a short call) */
            const uint64_t now = gc3_exec_now_ns();
            if (t0 == 0) {
                t0 = now;
            } else if (now - t0 >= budget_ns) {
                return GC3_IN_PROGRESS;
            }
            if (now - p->started_ns > 2000000) {
                nanosleep(&ts, NULL);
            }
        }
    }
}

gc3_status_t gc3_exec_run(gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    gc3_status_t status = gc3_exec_start(p, c, diag);
    if (status != GC3_OK) {
        return status;
    }
    return gc3_exec_wait(p, diag);
}
