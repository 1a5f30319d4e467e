/* gc3 / libgpuir: the interpreter's control logic, written once and compiled twice (the host
 * backend in C, the CUDA kernel in CUDA C). Included by a backend after it defined:
 *
 *   GC3_DEV                      function qualifier
 *   GC3_LEADER                   nonzero in the thread that does the control work
 *   GC3_SYNC()                   barrier of the block's threads
 *   GC3_LOAD_ACQ(p)              uint64_t load with acquire ordering (memory of any rank)
 *   GC3_LOAD_ACQ_LOCAL(p)        the same for counters only blocks of this rank write
 *   GC3_STORE_REL_LOCAL(p, v)    uint64_t store with release ordering, for counters only blocks of this
 *                                rank read
 *   GC3_STORE_POST(p, v)         uint64_t store visible to other ranks, ordered only by what precedes
 *                                it: a GC3_FENCE_DATA (a tail), or a GC3_SYNC after which every load
 *                                of the slot has returned its value (a head)
 *   GC3_FENCE_DATA()             (leader, after GC3_SYNC) the block's data writes are visible to the peers
 *                                before the counter store that follows
 *   GC3_NOW_NS()                 a clock in nanoseconds
 *   GC3_PAUSE(n)                 back off after n polls that found nothing (must not starve peers)
 *   GC3_SHARE_INT(x)             the leader's value of x, in every thread (after a GC3_SYNC)
 *   GC3_SHARE_U64(x)             the same for a uint64_t
 *   GC3_LOAD_VOLATILE(p)         a uint64_t load that is not served from a stale cache (a table the host
 *                                writes while the block runs)
 *   GC3_STAMP(t, i)              (leader) record the clock as stamp i of the block (a no-op when not
 *                                traced; i from GC3_TRACE_AT and friends)
 *   GC3_THREAD, GC3_THREADS      this thread's index in the block, and the block's thread count
 *   GC3_ENDS_TABLE               the block's table of GC3_ENDS_STEPS x GC3_RT_ENDS_CHUNKS chunk ends
 *                                (gc3_core_end_t, see gc3_core_ends_fill), or 0 where a backend keeps none
 *   GC3_ENDS_KEY                 3 words of the block: what the table was filled for (word 2 zero: nothing),
 *                                kept from one call to the next
 *   gc3_be_copy(dst, src, bytes)                       all threads of the block take part
 *   gc3_be_copy2(dst1, dst2, src, bytes)               one read, two writes
 *   gc3_be_reduce3(dtype, op, dst, a, b, n)           dst = a op b for n elements
 *   gc3_be_reduce_n(dtype, op, dst, x, m, n)          dst = x[0] op x[1] op ... op x[m-1] (2 <= m <=
 *                                GC3_RT_FUSE_MAX), left to right, for n elements; x[0] may be dst
 *   gc3_be_ll_store(lines, sig, src, valid, bytes, flag)
 *                                pack a message into 8-byte lines (4 data + 4 flag): the header (sig),
 *                                then `valid` bytes of src and zeros up to `bytes`
 *   gc3_be_ll_load(t, dst, lines, valid, bytes, flag, &sig)
 *                                wait for every line's flag of such a message, unpack the first `valid`
 *                                bytes of its payload to dst and its signature; 0, -1 (abort), -2 (timeout) or
 *                                -3 (waited longer than t->yield_ns: give way); the status and the signature the
 *                                same in every thread of the block
 *
 * One IR thread block runs gc3_core_run: for each loop (tile) and step it waits for its
 * dependency, a message and a free slot, moves the data, then publishes. Every wait is
 * bounded by t->timeout_s and by the rank's abort flag. A wait longer than t->yield_ns gives way: the
 * block leaves the call before it moved any data of its step, and its record (t->resume) says where it
 * stood; run again for the same call, it goes on from there (doc/design/preemption.md). */
#ifndef GC3_INTERP_CORE_H
#define GC3_INTERP_CORE_H

#include "gc3_rt_internal.h"

/* gc3_step_flags, usable in device code */
GC3_DEV static inline unsigned gc3_core_flags(int type)
{
    switch (type) {
    case GC3_STEP_SEND: return GC3_STEP_F_SEND | GC3_STEP_F_READ_SRC;
    case GC3_STEP_RECV: return GC3_STEP_F_RECV | GC3_STEP_F_WRITE_DST;
    case GC3_STEP_RCS:  return GC3_STEP_F_RECV | GC3_STEP_F_WRITE_DST | GC3_STEP_F_SEND;
    case GC3_STEP_RRC:  return GC3_STEP_F_RECV | GC3_STEP_F_READ_SRC | GC3_STEP_F_REDUCE | GC3_STEP_F_WRITE_DST;
    case GC3_STEP_RRS:  return GC3_STEP_F_RECV | GC3_STEP_F_READ_SRC | GC3_STEP_F_REDUCE | GC3_STEP_F_SEND;
    case GC3_STEP_RRCS: return GC3_STEP_F_RECV | GC3_STEP_F_READ_SRC | GC3_STEP_F_REDUCE | GC3_STEP_F_WRITE_DST | GC3_STEP_F_SEND;
    case GC3_STEP_CPY:  return GC3_STEP_F_READ_SRC | GC3_STEP_F_WRITE_DST;
    case GC3_STEP_RE:   return GC3_STEP_F_READ_SRC | GC3_STEP_F_READ_DST | GC3_STEP_F_REDUCE | GC3_STEP_F_WRITE_DST;
    default:            return 0;
    }
}

GC3_DEV static inline uint64_t *gc3_core_u64(char *region, int64_t off)
{
    return (uint64_t *)(region + off);
}

/* Leader only: record the first failure of the rank and raise the abort flag (also after an LL load's
 * timeout raised it without a record: GC3_RT_ABORT_LL_TIMEOUT). */
GC3_DEV static void gc3_core_fail(gc3_rt_tb_t *t, int step, int loop, int what, int dep_tb, int dep_step,
                                  uint64_t expected, uint64_t seen)
{
    gc3_rt_error_t *e     = t->err;
    const int32_t   abort = *t->abort_flag;
    if (abort == 0 || (abort == GC3_RT_ABORT_LL_TIMEOUT && !e->set)) {
        e->rank     = t->rank;
        e->tb       = t->tb;
        e->step     = step;
        e->loop     = loop;
        e->what     = what;
        e->peer = what == GC3_WAIT_WHAT_SEND || what == GC3_WAIT_WHAT_POOL || what == GC3_WAIT_WHAT_START ? t->send_peer
                  : what == GC3_WAIT_WHAT_RECV || what == GC3_WAIT_WHAT_MISMATCH || what == GC3_WAIT_WHAT_ZC ||
                          what == GC3_WAIT_WHAT_PUSHED
                      ? t->recv_peer
                      : -1;
        e->chan     = t->chan;
        e->dep_tb   = dep_tb;
        e->dep_step = dep_step;
        e->expected = expected;
        e->seen     = seen;
        e->set      = 1;
    }
    *t->abort_flag = GC3_RT_ABORT_SET;
}

/* Why a wait, a step or a block's run of the call stopped (0: it goes on) */
enum { GC3_STOP_FAIL = 1, GC3_STOP_YIELD = 2 };

/* Leader only: wait until *p >= target. 0 when reached, GC3_STOP_FAIL on abort or timeout,
 * GC3_STOP_YIELD when it waited longer than t->yield_ns (t->waited then says how long it has waited in
 * all: the timeout of the wait resumed counts that, not the time the block was off its SM). */
GC3_DEV static int gc3_core_wait(gc3_rt_tb_t *t, uint64_t *p, uint64_t target, int step, int loop, int what,
                                 int dep_tb, int dep_step)
{
    /* semaphores and loop counters are written by this rank's blocks only: acquire at device
     * scope, cheaper than the system scope the FIFO counters (written by peers) need */
    const int local = what == GC3_WAIT_WHAT_DEP || what == GC3_WAIT_WHAT_WINDOW;
    uint64_t  v     = local ? GC3_LOAD_ACQ_LOCAL(p) : GC3_LOAD_ACQ(p);
    uint64_t  start = 0, here = 0, polls = 0;

    while (v < target) {
        if ((++polls & 1023) == 0 && *t->abort_flag) { /* host memory for the GPU: not every poll */
            return GC3_STOP_FAIL;
        }
        if ((polls & 1023) == 0) {
            uint64_t now = GC3_NOW_NS();
            if (start == 0) {
                start     = now - t->waited; /* (a wait resumed: what it had waited already) */
                here      = now;
                t->waited = 0;
            } else if (t->timeout_s > 0 && (double)(now - start) * 1e-9 > t->timeout_s) {
                gc3_core_fail(t, step, loop, what, dep_tb, dep_step, target, v);
                return GC3_STOP_FAIL;
            } else if (t->yield_ns != 0 && now - here > t->yield_ns) {
                t->waited = now - start;
                return GC3_STOP_YIELD;
            }
        }
        GC3_PAUSE(polls);
        v = local ? GC3_LOAD_ACQ_LOCAL(p) : GC3_LOAD_ACQ(p);
    }
    return 0;
}

/* Chunk c of an input or output buffer b that starts at base (this rank's, or its receiver's as mapped
 * here), in loop l: its address and how many elements of it exist. */
GC3_DEV static char *gc3_core_chunk_at(const gc3_rt_tb_t *t, char *base, int b, int c, int l, uint64_t *valid)
{
    /* no 64-bit division (measured on H200: 335 ns each, in the one thread doing control);
     * allreduce buffers are one segment (c < k) */
    uint32_t k = (uint32_t)t->k[b], seg = (uint32_t)c < k ? 0 : (uint32_t)c / k, m = (uint32_t)c - seg * k;
    uint64_t pos = (uint64_t)l * k * t->T + m * t->T, first = seg * t->count, n = t->count;
    if (t->seg != 0) { /* per-rank counts: the segment's pair in the table (gc3_coll_segs_pair) */
        const uint64_t *e = t->seg + 1 + 2 * ((b == GC3_BUF_OUTPUT ? t->seg[0] : 0) + seg);
        first             = e[0];
        n                 = e[1];
    }
    *valid = pos < n ? (n - pos < t->T ? n - pos : t->T) : 0;
    return base + (first + pos) * (uint64_t)t->dsize;
}

/* Chunk c of buffer b in loop l: its address and how many elements of it exist. */
GC3_DEV static char *gc3_core_chunk(const gc3_rt_tb_t *t, int b, int c, int l, uint64_t *valid)
{
    if (b == GC3_BUF_SCRATCH) {
        uint64_t w = t->window > 0 ? (uint64_t)((uint32_t)l % GC3_RT_WINDOW) : 0;
        *valid     = t->T;
        return t->buf[b] + ((w * (uint64_t)t->s_chunks + (uint64_t)c) * t->T) * (uint64_t)t->dsize;
    }
    return gc3_core_chunk_at(t, t->buf[b], b, c, l, valid);
}

/* Chunk c of a step in loop l: where it is read and written, and how many of its elements
 * exist (real buffers end at the count; scratch and messages carry whole tiles). */
GC3_DEV static uint64_t gc3_core_ends(const gc3_rt_tb_t *t, const gc3_flat_step_t *st, int c, int l, char **src_p,
                                      char **dst_p)
{
    uint64_t vs = 0, vd = 0;
    unsigned flags = gc3_core_flags(st->type);
    int      real = 0;

    *src_p = 0;
    *dst_p = 0;
    if (flags & GC3_STEP_F_READ_SRC) {
        *src_p = gc3_core_chunk(t, st->srcbuf, st->srcoff + c, l, &vs);
        real   = st->srcbuf != GC3_BUF_SCRATCH;
    }
    if (flags & GC3_STEP_F_WRITE_DST) {
        *dst_p = gc3_core_chunk(t, st->dstbuf, st->dstoff + c, l, &vd);
        if (st->dstbuf != GC3_BUF_SCRATCH) {
            vs   = real ? (vs < vd ? vs : vd) : vd;
            real = 1;
        }
    }
    return real ? vs : t->T;
}

/* The backend's chunk-ends table of the block, when it keeps one and the block's steps fit in it; 0
 * otherwise (gc3_core_ends_fill fills it, gc3_core_ends_of reads it: one condition for both). */
GC3_DEV static inline gc3_core_end_t *gc3_core_ends_table(const gc3_rt_tb_t *t)
{
    return t->nsteps <= GC3_ENDS_STEPS ? GC3_ENDS_TABLE : (gc3_core_end_t *)0;
}

/* The ends of every chunk (up to GC3_RT_ENDS_CHUNKS) of every step of loop l, into the backend's
 * table, all threads at once, then a barrier; nothing when the table already holds them (the
 * same loop of a call of the same size: a resident kernel's calls). On a GPU, gc3_core_ends is a
 * chain of dependent integer operations that took the control thread 0.4-0.7 us per call (H200,
 * clock stamps around it), paid at every step of a small call; filling the table costs about one
 * call, and a call like the previous one does not pay even that. Every thread reads the same key,
 * so all of them take the barrier or none. */
GC3_DEV static void gc3_core_ends_fill(const gc3_rt_tb_t *t, int l)
{
    gc3_core_end_t *e  = gc3_core_ends_table(t);
    const uint64_t  k2 = 1ull << 63 | (uint64_t)(uint32_t)l << 24 | (uint64_t)(uint8_t)t->window << 8 |
                         (uint64_t)(uint8_t)t->dsize;
    const uint64_t  k1 = t->T | (uint64_t)t->seg_ver << 40; /* (a tile is below 2^40 elements) */
    uint64_t       *key;

    if (e == 0) {
        return;
    }
    key = GC3_ENDS_KEY; /* only where there is a table (the host's key is a member of it) */
    if (key[0] == t->count && key[1] == k1 && key[2] == k2) {
        return;
    }
    for (int k = GC3_THREAD; k < t->nsteps * GC3_RT_ENDS_CHUNKS; k += GC3_THREADS) {
        const gc3_flat_step_t *st    = &t->steps[k / GC3_RT_ENDS_CHUNKS];
        const unsigned         flags = gc3_core_flags(st->type);
        char                  *src, *dst;
        if (k % GC3_RT_ENDS_CHUNKS < st->cnt) {
            e[k].n      = gc3_core_ends(t, st, k % GC3_RT_ENDS_CHUNKS, l, &src, &dst);
            e[k].srcbuf = (flags & GC3_STEP_F_READ_SRC) ? st->srcbuf : -1;
            e[k].dstbuf = (flags & GC3_STEP_F_WRITE_DST) ? st->dstbuf : -1;
            e[k].src_off = (flags & GC3_STEP_F_READ_SRC) ? (uint64_t)(src - t->buf[st->srcbuf]) : 0;
            e[k].dst_off = (flags & GC3_STEP_F_WRITE_DST) ? (uint64_t)(dst - t->buf[st->dstbuf]) : 0;
        }
    }
    GC3_SYNC(); /* every thread has read the old key before the leader writes the new one */
    if (GC3_LEADER) {
        key[0] = t->count;
        key[1] = k1;
        key[2] = k2;
    }
}

/* gc3_core_ends of chunk c of step s in loop l: from the table gc3_core_ends_fill filled for the
 * loop when there is one and it holds the chunk. */
GC3_DEV static inline uint64_t gc3_core_ends_of(const gc3_rt_tb_t *t, int s, int c, int l, char **src_p, char **dst_p)
{
    const gc3_core_end_t *e = gc3_core_ends_table(t);

    if (e != 0 && c < GC3_RT_ENDS_CHUNKS) {
        e += s * GC3_RT_ENDS_CHUNKS + c;
        *src_p = e->srcbuf >= 0 ? t->buf[e->srcbuf] + e->src_off : 0;
        *dst_p = e->dstbuf >= 0 ? t->buf[e->dstbuf] + e->dst_off : 0;
        return e->n;
    }
    return gc3_core_ends(t, &t->steps[s], c, l, src_p, dst_p);
}

/* Run the data movement of step s for bytes [lo, hi) of chunk c (what exists of them; msg_in/msg_out:
 * where this chunk's part of the message starts, byte 0 of the chunk). */
GC3_DEV static void gc3_core_move_part(const gc3_rt_tb_t *t, int s, int c, int l, char *msg_in, char *msg_out,
                                       uint64_t lo, uint64_t hi)
{
    const gc3_flat_step_t *st = &t->steps[s];
    char                  *src, *dst;
    const uint64_t         n  = gc3_core_ends_of(t, s, c, l, &src, &dst) * (uint64_t)t->dsize;

    hi = hi < n ? hi : n;
    if (lo >= hi) {
        return;
    }
    src     = src ? src + lo : 0;
    dst     = dst ? dst + lo : 0;
    msg_in  = msg_in ? msg_in + lo : 0;
    msg_out = msg_out ? msg_out + lo : 0;
    hi -= lo;
    /* (msg_in 0 in a recv or rcs: the sender pushed the chunk into dst, gc3_core_step_simple) */
    switch (st->type) {
    case GC3_STEP_SEND: if (msg_out) gc3_be_copy(msg_out, src, hi); break;
    case GC3_STEP_RECV:
        if (msg_in)
            gc3_be_copy(dst, msg_in, hi);
        break;
    case GC3_STEP_RCS:
        if (msg_in) {
            gc3_be_copy2(dst, msg_out, msg_in, hi);
        } else if (msg_out) {
            gc3_be_copy(msg_out, dst, hi);
        }
        break;
    case GC3_STEP_RRC:  gc3_be_reduce3(t->dtype, t->op, dst, msg_in, src, hi / (uint64_t)t->dsize); break;
    case GC3_STEP_RRS:  gc3_be_reduce3(t->dtype, t->op, msg_out, msg_in, src, hi / (uint64_t)t->dsize); break;
    case GC3_STEP_RRCS:
        gc3_be_reduce3(t->dtype, t->op, dst, msg_in, src, hi / (uint64_t)t->dsize);
        if (msg_out) {
            GC3_SYNC();
            gc3_be_copy(msg_out, dst, hi);
        }
        break;
    case GC3_STEP_CPY:  gc3_be_copy(dst, src, hi); break;
    case GC3_STEP_RE:   gc3_be_reduce3(t->dtype, t->op, dst, dst, src, hi / (uint64_t)t->dsize); break;
    default: break;
    }
}

/* Run the data movement of step s for chunk c (msg_in/msg_out: this chunk's message part). */
GC3_DEV static inline void gc3_core_move(const gc3_rt_tb_t *t, int s, int c, int l, char *msg_in, char *msg_out)
{
    gc3_core_move_part(t, s, c, l, msg_in, msg_out, 0, t->T * (uint64_t)t->dsize);
}

/* Bytes [a, b) of step s's message in loop l, chunk by chunk (in/out: where byte 0 of the message is). */
GC3_DEV static void gc3_core_move_range(const gc3_rt_tb_t *t, int s, int l, char *in, char *out, uint64_t a, uint64_t b)
{
    const uint64_t tile = t->T * (uint64_t)t->dsize;
    const int      cnt  = t->steps[s].cnt;
    for (int c = (int)(a / tile); c < cnt && (uint64_t)c * tile < b; c++) {
        const uint64_t at = (uint64_t)c * tile;
        gc3_core_move_part(t, s, c, l, in ? in + at : 0, out ? out + at : 0, a > at ? a - at : 0,
                           b - at < tile ? b - at : tile);
    }
}

/* A run of local steps marked by gc3_flat_fuse (st->fuse steps follow st), for loop l: chunk by
 * chunk, dst = x0 op x1 op ... in one pass, x0 the first step's source (cpy) or its dst and source
 * (re), then the sources of the re steps, combined in the order the steps would have. A chunk whose
 * steps do not all cover the same elements, or larger than GC3_FUSE_BYTES, runs step by step. */
GC3_DEV static void gc3_core_fused(const gc3_rt_tb_t *t, int s, int l)
{
    const gc3_flat_step_t *st = &t->steps[s];
    for (int c = 0; c < st->cnt; c++) {
        const char *x[GC3_RT_FUSE_MAX];
        char       *src, *dst, *d;
        uint64_t    n    = gc3_core_ends_of(t, s, c, l, &src, &dst);
        int         m    = 0, same = 1;

        if (st->type == GC3_STEP_RE) {
            x[m++] = dst;
        }
        x[m++] = src;
        for (int j = 1; j <= st->fuse && m < GC3_RT_FUSE_MAX; j++) {
            same   = same && gc3_core_ends_of(t, s + j, c, l, &src, &d) == n && d == dst;
            x[m++] = src;
        }
        if (!same || m != st->fuse + (st->type == GC3_STEP_RE ? 2 : 1) || n * (uint64_t)t->dsize > GC3_FUSE_BYTES) {
            for (int j = 0; j <= st->fuse; j++) {
                gc3_core_move(t, s + j, c, l, 0, 0);
                GC3_SYNC();
            }
        } else if (n > 0) {
            gc3_be_reduce_n(t->dtype, t->op, dst, x, m, n);
        }
    }
}

/* The parts of gc3_core_run below are inlined into it (on a GPU, forced: the interpreter's loop
 * keeps its counters in registers). */
#ifdef __CUDACC__
#define GC3_CORE_INLINE __forceinline__
#else
#define GC3_CORE_INLINE inline
#endif

/* Where a block stands in its connections during a call: messages sent and received so far, the
 * slots of the next ones (bases modulo slots, from the host, then counted: a division per step would
 * cost the control thread a microsecond on a GPU), and whether it sent a message in place (zero-copy:
 * the call ends only once its receiver read it). */
typedef struct {
    uint64_t sent, received;
    uint32_t rslot, sslot;
    int      zc;
    int      started; /* the receiver said it started this call (gc3_core_wait_started) */
} gc3_core_pos_t;

/* Leader: before loop l reuses scratch (every `window` loops), nobody of the rank may still be in
 * loop l - window. Nonzero (GC3_STOP_*) when that wait stopped. */
GC3_DEV static GC3_CORE_INLINE int gc3_core_wait_window(gc3_rt_tb_t *t, int l)
{
    int failed = 0;
    for (int b = 0; b < t->ntbs && !failed; b++) {
        failed = gc3_core_wait(t, gc3_core_u64(t->region, t->loops_off[b]),
                               t->loops_base[b] + (uint64_t)(l - t->window + 1), 0, l, GC3_WAIT_WHAT_WINDOW, b, -1);
    }
    return failed;
}

/* Leader: the dependencies of step s's run in loop l (a fused run waits for those of all its steps
 * first: none of them is waited for by another block before the run's end, so this adds no wait
 * cycle). Nonzero (GC3_STOP_*) when a wait stopped. */
GC3_DEV static GC3_CORE_INLINE int gc3_core_wait_deps(gc3_rt_tb_t *t, int s, int l)
{
    const gc3_flat_step_t *st     = &t->steps[s];
    int                    failed = 0;

    for (int j = 0; j <= st->fuse && !failed; j++) {
        const gc3_flat_step_t *sj = st + j;
        if (sj->dep_tb >= 0) {
            failed = gc3_core_wait(t, gc3_core_u64(t->region, t->sem_off[sj->dep_tb]),
                                   t->sem_base[sj->dep_tb] + (uint64_t)l * (uint64_t)t->tb_nsteps[sj->dep_tb] +
                                       (uint64_t)sj->dep_step + 1,
                                   s + j, l, GC3_WAIT_WHAT_DEP, sj->dep_tb, sj->dep_step);
        }
    }
    return failed;
}

/* Leader, a sending block: wait for a free slot for its next message (the receiver consumed all but
 * slots-1 of what it was sent). The head only grows, so what was seen once needs no second look.
 * Nonzero (GC3_STOP_*) when the wait stopped. */
GC3_DEV static GC3_CORE_INLINE int gc3_core_wait_slot(gc3_rt_tb_t *t, const gc3_core_pos_t *pos, int s, int l)
{
    uint64_t need = t->send_base + pos->sent + 1;
    int      failed;
    need = need > (uint64_t)t->slots ? need - (uint64_t)t->slots : 0;
    if (need <= t->head_seen) {
        return 0;
    }
    failed = gc3_core_wait(t, t->send_head, need, s, l, GC3_WAIT_WHAT_SEND, -1, -1);
    if (!failed) {
        t->head_seen = need;
    }
    return failed;
}

/* Leader, LL: what step s of loop l waits for before it moves data: its dependencies, its message from
 * another node (the proxy moves whole messages, then the tail; on the node the lines' flags say it),
 * a free slot to send into. Nonzero (GC3_STOP_*) when a wait stopped. */
GC3_DEV static GC3_CORE_INLINE int gc3_core_step_wait(gc3_rt_tb_t *t, int s, int l, const gc3_core_pos_t *pos)
{
    const unsigned flags  = gc3_core_flags(t->steps[s].type);
    int            failed = gc3_core_wait_deps(t, s, l);

    if (!failed && (flags & GC3_STEP_F_RECV) && t->recv_remote) {
        failed = gc3_core_wait(t, t->recv_tail, t->recv_base + pos->received + 1, s, l, GC3_WAIT_WHAT_RECV, -1, -1);
    }
    if (!failed && (flags & GC3_STEP_F_SEND)) {
        failed = gc3_core_wait_slot(t, pos, s, l);
    }
    return failed;
}

/* All threads, LL: the message of step s, loop l: *in_p is where its payload is (the lines unpacked
 * into the staging buffer, or directly into the destination, direct_dst, for direct_n bytes). Nonzero
 * (every thread): GC3_STOP_FAIL (a timeout, or another call's message), GC3_STOP_YIELD (it waited
 * longer than t->yield_ns; what it unpacked is written again when the step runs again). */
GC3_DEV static GC3_CORE_INLINE int gc3_core_step_recv(gc3_rt_tb_t *t, int s, int l, const gc3_core_pos_t *pos,
                                                       int direct, char *direct_dst, uint64_t direct_n,
                                                       uint64_t bytes, char **in_p)
{
    char    *slot = t->recv_slots + (uint64_t)pos->rslot * t->slot_stride;
    uint32_t flag;
    int      rc, failed;
    uint64_t h = 0;

    flag = (uint32_t)(t->recv_base + pos->received + 1);
    rc   = direct ? gc3_be_ll_load(t, direct_dst, slot, direct_n, bytes, flag, &h)
                  : gc3_be_ll_load(t, t->stage_in, slot, bytes, bytes, flag, &h);
    if (rc == -2 && GC3_LEADER) {
        gc3_core_fail(t, s, l, GC3_WAIT_WHAT_RECV, -1, -1, t->recv_base + pos->received + 1, 0);
    }
    /* rc and h are the same in every thread (ll_load's contract), so no barrier is needed to agree */
    failed = rc == -3 ? GC3_STOP_YIELD : rc != 0 ? GC3_STOP_FAIL : 0; /* ll_load raised the abort flag on a timeout */
    if (!failed && h != t->sig) {
        /* (a direct receive wrote the other call's data: this call fails, it returns no result) */
        if (GC3_LEADER) {
            gc3_core_fail(t, s, l, GC3_WAIT_WHAT_MISMATCH, -1, -1, t->sig, h);
        }
        failed = GC3_STOP_FAIL;
    }
    *in_p = t->stage_in;
    return failed;
}

/* All threads, LL: the message of a step goes out, packed into the slot's lines, from the staging
 * buffer or directly from the source (direct_src, direct_n bytes); to another node, the tail (and the
 * length the proxy needs) published after the data. */
GC3_DEV static GC3_CORE_INLINE void gc3_core_step_send(gc3_rt_tb_t *t, gc3_core_pos_t *pos, int direct,
                                                        const char *direct_src, uint64_t direct_n, uint64_t bytes)
{
    const uint64_t seq   = t->send_base + pos->sent + 1;
    char          *lines = t->send_slots + (uint64_t)pos->sslot * t->slot_stride;

    if (direct) {
        gc3_be_ll_store(lines, t->sig, direct_src, direct_n, bytes, (uint32_t)seq);
    } else {
        GC3_SYNC();
        gc3_be_ll_store(lines, t->sig, t->stage_out, bytes, bytes, (uint32_t)seq);
    }
    if (t->send_lens) {
        GC3_SYNC();
        if (GC3_LEADER) {
            t->send_lens[pos->sslot] = gc3_ll_words(bytes) * 8;
            GC3_FENCE_DATA();
            GC3_STORE_POST(t->send_tail, seq);
        }
    }
    pos->sent++;
    pos->sslot = pos->sslot + 1 == (uint32_t)t->slots ? 0 : pos->sslot + 1;
}

/* Leader, after the step's barrier: blocks depending on its run read what it wrote: release. Only
 * steps another block waits for (hasdep, checked by the verifier) publish; the counter holds
 * absolute values, so a later store covers skipped steps (and a fused run publishes as its last
 * step). */
GC3_DEV static GC3_CORE_INLINE void gc3_core_step_publish(gc3_rt_tb_t *t, int s, int l)
{
    const int nf = t->steps[s].fuse;
    if (t->steps[s + nf].hasdep) {
        GC3_STORE_REL_LOCAL(gc3_core_u64(t->region, t->sem_off[t->tb]),
                            t->sem_base[t->tb] + (uint64_t)l * (uint64_t)t->nsteps + (uint64_t)(s + nf) + 1);
    }
    if (l == 0) {
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_PUBLISHED));
    }
}

/* Step s of loop l, LL, or a local step (with the steps fused to it, gc3_flat_fuse): wait, receive,
 * move, send, publish. Nonzero (GC3_STOP_*) when the block stops before it moved any data of the step. */
GC3_DEV static GC3_CORE_INLINE int gc3_core_step(gc3_rt_tb_t *t, int s, int l, gc3_core_pos_t *pos)
{
    const gc3_flat_step_t *st     = &t->steps[s];
    const int              nf     = st->fuse; /* steps run with this one (gc3_flat_fuse) */
    const unsigned         flags  = gc3_core_flags(st->type);
    const uint64_t         bytes  = (uint64_t)(st->cnt > 0 ? st->cnt : 0) * t->T * (uint64_t)t->dsize;
    char                  *in = 0, *out = 0, *direct_src = 0, *direct_dst = 0;
    uint64_t               direct_n = 0; /* bytes of the chunk that exist */
    int                    failed   = 0, direct;

    if (GC3_LEADER) {
        failed = gc3_core_step_wait(t, s, l, pos);
    }
    if ((failed = GC3_SHARE_INT(failed)) != 0) {
        return failed;
    }
    if (l == 0 && GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_WAITED));
    }
    /* LL, one chunk, a plain send or receive: the lines are packed from the source and unpacked into
     * the destination directly, without the staging copy and its barrier */
    direct = st->cnt == 1 && (st->type == GC3_STEP_SEND || st->type == GC3_STEP_RECV);
    if (direct) {
        direct_n = gc3_core_ends_of(t, s, 0, l, &direct_src, &direct_dst) * (uint64_t)t->dsize;
    }
    if ((flags & GC3_STEP_F_RECV) &&
        (failed = gc3_core_step_recv(t, s, l, pos, direct, direct_dst, direct_n, bytes, &in)) != 0) {
        return failed;
    }
    if (l == 0 && GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_RECEIVED));
    }
    if (flags & GC3_STEP_F_SEND) {
        out = t->stage_out;
    }
    if (nf > 0) {
        gc3_core_fused(t, s, l);
    }
    for (int c = 0; c < (st->cnt > 0 ? st->cnt : 0) && st->type != GC3_STEP_NOP && !direct && nf == 0; c++) {
        uint64_t off = (uint64_t)c * t->T * (uint64_t)t->dsize;
        gc3_core_move(t, s, c, l, in ? in + off : 0, out ? out + off : 0);
    }
    if (l == 0 && GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_MOVED));
    }
    if (flags & GC3_STEP_F_SEND) {
        gc3_core_step_send(t, pos, direct, direct_src, direct_n, bytes);
    }
    GC3_SYNC();
    if (flags & GC3_STEP_F_RECV) {
        pos->received++;
        pos->rslot = pos->rslot + 1 == (uint32_t)t->slots ? 0 : pos->rslot + 1;
    }
    if (GC3_LEADER) {
        gc3_core_step_publish(t, s, l);
        if (flags & GC3_STEP_F_RECV) {
            /* the slot may be reused: every thread's loads of it returned before the barrier */
            GC3_STORE_POST(t->recv_head, t->recv_base + pos->received);
        }
    }
    return 0;
}

/* ---------------------------------------------------------------- Simple: the slot, or zero-copy
 *
 * A Simple message goes in one slot: the sender fills it, then publishes its tail; the receiver moves
 * what it holds, then gives it back (the head). Or, zero-copy (gc3_flat_zc_mark marked the step for
 * this kind of call, the sender's buffer is registered and the receiver mapped it), the sender leaves
 * the data where it is and fills only the slot's header: where the message is (its registration and
 * its address there, and how many of its bytes exist); the receiver reads it from the sender's buffer.
 * The header line of a slot: the call's signature, zero or the registration + 1, the address, the
 * extent. A zero-copy message of no bytes (its chunks past the count) carries extent 0 and no address.
 * Or, pushed (zero-copy mode, the step marked for the push form, gc3_rt_tb_t.push): the sender wrote the
 * chunks into the receiving step's destination through its mapping of the receiver's buffer before the
 * header, which says so (GC3_HDR_PUSHED); the receiver has nothing to move in (an rcs sends on from its
 * destination; an rrc or rrcs reduces its operand into them where they are). */
enum { GC3_HDR_SIG = 0, GC3_HDR_ZC = 1, GC3_HDR_VA = 2, GC3_HDR_EXTENT = 3 };
#define GC3_HDR_PUSHED (~0ull) /* in GC3_HDR_ZC */

/* Leader, a sending block: wait until its receiving block said it started this call (gc3_core_run: it
 * says so first thing, word 1 of the head line), once a call; `what` names the wait on a timeout.
 * Nonzero (GC3_STOP_*) when the wait stopped. */
GC3_DEV static GC3_CORE_INLINE int gc3_core_wait_started(gc3_rt_tb_t *t, gc3_core_pos_t *pos, int s, int l, int what)
{
    int stop;
    if (pos->started) {
        return 0;
    }
    stop         = gc3_core_wait(t, t->send_head + 1, t->send_base + 1, s, l, what, -1, -1);
    pos->started = stop == 0;
    return stop;
}

/* Where step s pushes its chunks (zero-copy mode): the receiver's buffer as mapped here, or 0 (not
 * pushed: the step is not marked for the push form in calls of this kind, or the receiver's buffer was
 * not given). GC3_FLAT_ZC_PUSH_OOP and _IP are GC3_FLAT_ZC_OOP and _IP shifted by 3. */
GC3_DEV static inline char *gc3_core_push_to(const gc3_rt_tb_t *t, const gc3_flat_step_t *st)
{
    const int b = st->push_buf;
    if (!(st->zc & (t->zc_bit << 3)) || t->send_lens || (b != GC3_BUF_INPUT && b != GC3_BUF_OUTPUT)) {
        return 0;
    }
    return (char *)(uintptr_t)t->push[b];
}

/* Bytes [0, upto) of step s's message in loop l, its chunks pushed into the receiver's buffer that
 * starts at `to` (in: where byte 0 of the message arrived, or 0: pushed to this rank). Each chunk goes
 * where the receiving step takes it, up to what exists of it there. */
GC3_DEV static void gc3_core_push_range(const gc3_rt_tb_t *t, int s, int l, char *in, char *to, uint64_t upto)
{
    const gc3_flat_step_t *st   = &t->steps[s];
    const uint64_t         tile = t->T * (uint64_t)t->dsize;
    for (int c = 0; c < st->cnt && (uint64_t)c * tile < upto; c++) {
        const uint64_t at = (uint64_t)c * tile;
        uint64_t       n, lim = upto - at < tile ? upto - at : tile;
        char          *dst = gc3_core_chunk_at(t, to, st->push_buf, st->push_off + c, l, &n);
        n *= (uint64_t)t->dsize;
        gc3_core_move_part(t, s, c, l, in ? in + at : 0, dst, 0, lim < n ? lim : n);
    }
}

/* The registration (0 none, else id + 1) of the chunks step s sends in loop l in place, their address
 * and extent: marked for the call's kind, registered, mapped by the receiver on this node. */
GC3_DEV static GC3_CORE_INLINE uint32_t gc3_core_zc_out(const gc3_rt_tb_t *t, int s, int l, char **va_p,
                                                         uint64_t *extent_p)
{
    const gc3_flat_step_t *st   = &t->steps[s];
    const int              b    = st->type == GC3_STEP_SEND ? st->srcbuf : st->dstbuf;
    const uint64_t         tile = t->T * (uint64_t)t->dsize;
    char                  *src, *dst;
    uint64_t               n = 0;
    int                    c;

    if (!(st->zc & t->zc_bit) || t->send_lens || (b != GC3_BUF_INPUT && b != GC3_BUF_OUTPUT) || t->zc_id[b] == 0 ||
        t->zc_slocal < 0 || !((t->zc_peers[b] >> t->zc_slocal) & 1)) {
        return 0;
    }
    /* the extent: up to the end of the last chunk of the message that has elements */
    for (c = st->cnt - 1; c >= 0 && n == 0; c--) {
        n = gc3_core_ends_of(t, s, c, l, &src, &dst);
    }
    *extent_p = n > 0 ? (uint64_t)(c + 1) * tile + n * (uint64_t)t->dsize : 0;
    (void)gc3_core_ends_of(t, s, 0, l, &src, &dst);
    *va_p = n > 0 ? (st->type == GC3_STEP_SEND ? src : dst) : 0;
    return t->zc_id[b];
}

/* Where a zero-copy message of no bytes is: nowhere, an address no process maps (the receiver reads up
 * to the message's extent only; were it to read more, it would fault at once, on a GPU as on the host). */
#define GC3_CORE_ZC_NOWHERE ((char *)(uintptr_t)4096)

/* Leader: a zero-copy message's place here (the sender's buffer as this rank mapped it); 0 when the
 * header names a registration this rank has not mapped, or an address outside it (the call then
 * fails: the sender's view of what this rank mapped and this rank's table disagree). A message of no
 * bytes has no place (GC3_CORE_ZC_NOWHERE). */
GC3_DEV static char *gc3_core_zc_in(const gc3_rt_tb_t *t, uint64_t id1, uint64_t va, uint64_t extent)
{
    const gc3_rt_zc_entry_t *e;
    if (t->zc_table == 0 || id1 == 0 || id1 > (uint64_t)t->zc_entries || t->zc_rlocal < 0) {
        return 0;
    }
    e = &t->zc_table[(uint64_t)t->zc_rlocal * (uint64_t)t->zc_entries + (id1 - 1)];
    if (extent == 0) {
        return GC3_CORE_ZC_NOWHERE;
    }
    {
        const uint64_t base = GC3_LOAD_VOLATILE(&e->base), size = GC3_LOAD_VOLATILE(&e->size),
                       mapped = GC3_LOAD_VOLATILE(&e->mapped);
        if (mapped == 0 || va < base || va - base > size || extent > size - (va - base)) {
            return 0;
        }
        return (char *)(uintptr_t)(mapped + (va - base));
    }
}

/* Leader, Simple: wait for the message and read its header; *zin_p: zero-copy, where the message is,
 * and *zext_p how many of its bytes exist there; *pushed_p: it was pushed into the step's destination.
 * Nonzero (GC3_STOP_*) when the block stops (the message is not taken: the slot stays the sender's). */
GC3_DEV static GC3_CORE_INLINE int gc3_core_simple_head(gc3_rt_tb_t *t, int s, int l, const gc3_core_pos_t *pos,
                                                        char **zin_p, uint64_t *zext_p, int *pushed_p)
{
    const volatile uint64_t *h;
    uint64_t                 sig, id1;
    int                      stop;

    if ((stop = gc3_core_wait(t, t->recv_tail, t->recv_base + pos->received + 1, s, l, GC3_WAIT_WHAT_RECV, -1, -1)) !=
        0) {
        return stop;
    }
    /* the tail was acquired: the header is there */
    h   = (const volatile uint64_t *)(t->recv_slots + (uint64_t)pos->rslot * t->slot_stride);
    sig = h[GC3_HDR_SIG];
    if (sig != t->sig) {
        gc3_core_fail(t, s, l, GC3_WAIT_WHAT_MISMATCH, -1, -1, t->sig, sig);
        return GC3_STOP_FAIL;
    }
    if ((id1 = h[GC3_HDR_ZC]) == GC3_HDR_PUSHED) {
        /* only into a recv's, rcs's, rrc's or rrcs's destination (gc3_flat_zc_mark); anything else is a bug,
         * not data */
        const int ty = t->steps[s].type;
        if (ty != GC3_STEP_RECV && ty != GC3_STEP_RCS && ty != GC3_STEP_RRC && ty != GC3_STEP_RRCS) {
            gc3_core_fail(t, s, l, GC3_WAIT_WHAT_PUSHED, -1, -1, (uint64_t)GC3_STEP_RECV, (uint64_t)ty);
            return GC3_STOP_FAIL;
        }
        *pushed_p = 1;
    } else if (id1 != 0) {
        const uint64_t va = h[GC3_HDR_VA];
        *zext_p           = h[GC3_HDR_EXTENT];
        *zin_p            = gc3_core_zc_in(t, id1, va, *zext_p);
        if (*zin_p == 0) {
            gc3_core_fail(t, s, l, GC3_WAIT_WHAT_ZC, -1, -1, id1, va);
            return GC3_STOP_FAIL;
        }
    }
    return 0;
}

/* Step s of loop l of a Simple program that receives or sends. Nonzero (GC3_STOP_*) when the block
 * stops before it moved any data of the step (nothing of it was written: the slot header neither). */
GC3_DEV static GC3_CORE_INLINE int gc3_core_step_simple(gc3_rt_tb_t *t, int s, int l, gc3_core_pos_t *pos)
{
    const gc3_flat_step_t *st    = &t->steps[s];
    const unsigned         flags = gc3_core_flags(st->type);
    const int              recv  = (flags & GC3_STEP_F_RECV) != 0, send = (flags & GC3_STEP_F_SEND) != 0;
    const uint64_t         bytes = (uint64_t)(st->cnt > 0 ? st->cnt : 0) * t->T * (uint64_t)t->dsize;
    char                  *zin = 0, *va = 0, *in = 0, *out = 0, *push = 0;
    char                  *slot = send ? t->send_slots + (uint64_t)pos->sslot * t->slot_stride : 0;
    uint64_t               extent = 0, zext = 0, upto = bytes;
    uint32_t               zout   = 0;
    int                    failed = 0, pushed = 0;

    if (GC3_LEADER) {
        failed = gc3_core_wait_deps(t, s, l);
        if (!failed && recv) {
            failed = gc3_core_simple_head(t, s, l, pos, &zin, &zext, &pushed);
        }
        if (!failed && send && pos->sent == 0 && t->handover && t->pooled && t->send_lens == 0) {
            /* the first message into a pool another plan used last: the receiver has started this call, so
             * it has read everything of the calls before */
            failed = gc3_core_wait_started(t, pos, s, l, GC3_WAIT_WHAT_POOL);
        }
        if (!failed && send) {
            failed = gc3_core_wait_slot(t, pos, s, l);
            push   = failed ? 0 : gc3_core_push_to(t, st);
            if (push) {
                /* the first push of the call: the receiver's kernel has started it, so whatever its stream
                 * did to its buffers before the call is done */
                failed = gc3_core_wait_started(t, pos, s, l, GC3_WAIT_WHAT_START);
            }
            zout = push || failed ? 0 : gc3_core_zc_out(t, s, l, &va, &extent);
            if (!zout && !failed) {                                /* (stopped: the slot may not be free) */
                ((volatile uint64_t *)slot)[GC3_HDR_SIG] = t->sig; /* published with the data below */
                ((volatile uint64_t *)slot)[GC3_HDR_ZC]  = push ? GC3_HDR_PUSHED : 0;
            }
        }
    }
    if ((failed = GC3_SHARE_INT(failed)) != 0) {
        return failed;
    }
    push   = (char *)(uintptr_t)GC3_SHARE_U64((uint64_t)(uintptr_t)push);
    pushed = GC3_SHARE_INT(pushed);
    if (l == 0 && GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_WAITED));
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_RECEIVED));
    }
    zin  = (char *)(uintptr_t)GC3_SHARE_U64((uint64_t)(uintptr_t)zin);
    zout = (uint32_t)GC3_SHARE_INT((int)zout);
    if (zin) {
        /* in the sender's buffer only what exists of the message may be read: past its extent (chunks past
         * the count, where this rank's end of the step, scratch, takes whole tiles) is the end of the
         * sender's allocation, or nothing (GC3_CORE_ZC_NOWHERE); those elements are past the count */
        upto = GC3_SHARE_U64(zext < bytes ? zext : bytes);
    }
    in = zin ? zin : recv && !pushed ? t->recv_slots + (uint64_t)pos->rslot * t->slot_stride + GC3_RT_SIMPLE_HDR : 0;
    if (pushed && (st->type == GC3_STEP_RRC || st->type == GC3_STEP_RRCS)) {
        /* the pushed operand landed where the result goes (its chunks in one segment): reduced there */
        uint64_t n;
        in = gc3_core_chunk(t, st->dstbuf, st->dstoff, l, &n);
    }
    if (push) {
        gc3_core_push_range(t, s, l, in, push, upto);
    } else {
        out = send && !zout ? slot + GC3_RT_SIMPLE_HDR : 0;
        gc3_core_move_range(t, s, l, in, out, 0, upto);
    }
    if (l == 0 && GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_AT(s, GC3_TRACE_MOVED));
    }
    GC3_SYNC(); /* every thread's loads of the slot (or the peer's buffer) returned, and its stores (into the
                 * slot, or pushed into the receiver's buffer) are done: the fence below publishes them */
    if (GC3_LEADER) {
        if (send) {
            if (zout) {
                volatile uint64_t *h = (volatile uint64_t *)slot;
                h[GC3_HDR_SIG]       = t->sig;
                h[GC3_HDR_ZC]        = zout;
                h[GC3_HDR_VA]        = (uint64_t)(uintptr_t)va;
                h[GC3_HDR_EXTENT]    = extent;
            }
            if (t->send_lens) {
                t->send_lens[pos->sslot] = bytes + GC3_RT_SIMPLE_HDR;
            }
            GC3_FENCE_DATA();
            GC3_STORE_POST(t->send_tail, t->send_base + pos->sent + 1);
        }
        gc3_core_step_publish(t, s, l);
        if (recv) {
            GC3_STORE_POST(t->recv_head, t->recv_base + pos->received + 1);
        }
    }
    if (recv) {
        pos->received++;
        pos->rslot = pos->rslot + 1 == (uint32_t)t->slots ? 0 : pos->rslot + 1;
    }
    if (send) {
        pos->sent++;
        pos->sslot = pos->sslot + 1 == (uint32_t)t->slots ? 0 : pos->sslot + 1;
        pos->zc |= zout != 0;
    }
    return 0;
}

/* Leader: the block's record says it left the call at loop l, step s (GC3_STOP_YIELD). */
GC3_DEV static void gc3_core_record(gc3_rt_tb_t *t, const gc3_core_pos_t *pos, int l, int s)
{
    gc3_rt_resume_t *r = t->resume;
    r->call            = t->call;
    r->loop            = l;
    r->step            = s;
    r->sent            = pos->sent;
    r->received        = pos->received;
    r->zc              = pos->zc;
    r->waited          = t->waited;
}

/* Resuming, the block ended the call before: its record names no call, or another one (a backend asks
 * before it gives the block a place to run, and gc3_core_run answers GC3_CORE_DONE_BEFORE then). */
GC3_DEV static inline int gc3_core_ended_before(const gc3_rt_tb_t *t)
{
    return t->resuming && (t->resume == 0 || t->resume->call != t->call);
}

/* Run every loop and step of one IR thread block; resuming (t->resuming), what is left of them when
 * the block's record says it left this call, else nothing. The leader's answer (a backend shares it):
 * GC3_CORE_OK, GC3_CORE_FAILED when the call failed (this block or another one of the rank recorded
 * why), GC3_CORE_YIELDED when it gave way (its record says where it stood), GC3_CORE_DONE_BEFORE when,
 * resuming, the block had ended this call before (the call is run again for the blocks that had not).
 * On success the block's connection bases advance by what it sent and received (a resident kernel's
 * next call starts there). */
GC3_DEV static int gc3_core_run(gc3_rt_tb_t *t)
{
    gc3_core_pos_t         pos    = { 0, 0, t->recv_slot, t->send_slot, 0, 0 };
    const gc3_rt_resume_t *r      = t->resume;
    int                    failed = 0, l0 = 0, s0 = 0, at_l = 0, at_s = 0, resumed = 0;

    if (t->resuming) {
        if (gc3_core_ended_before(t)) {
            return GC3_CORE_DONE_BEFORE;
        }
        /* where it left: nothing of that step was moved, the slots it had taken are the next ones */
        pos.sent     = r->sent;
        pos.received = r->received;
        pos.zc       = r->zc;
        pos.sslot    = (uint32_t)(((uint64_t)t->send_slot + r->sent) % (uint64_t)t->slots);
        pos.rslot    = (uint32_t)(((uint64_t)t->recv_slot + r->received) % (uint64_t)t->slots);
        l0           = r->loop;
        s0           = r->step;
        resumed      = 1;
        if (GC3_LEADER) {
            t->waited = r->waited;
        }
    }
    if (GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_START);
        if ((t->pooled || t->zc_bit) && t->recv_head != 0 && !t->recv_remote) {
            /* the rank's calls before this one have ended: its pool's slots may take this call's messages
             * (word 1 of the sender's head line; a sender waits for it after another plan's call); and what
             * its stream did before the call is done, so a sender may push into its buffers (zero-copy) */
            GC3_STORE_POST(t->recv_head + 1, t->recv_base + 1);
        }
    }
    for (int l = l0; l < t->L && !failed; l++) {
        const int first = l == l0 ? s0 : 0; /* (a step that starts a fused run) */
        if (t->window > 0 && l >= t->window && first == 0 && GC3_LEADER) {
            failed = gc3_core_wait_window(t, l);
            at_l   = l;
            at_s   = 0;
        }
        failed = GC3_SHARE_INT(failed);
        gc3_core_ends_fill(t, l);
        for (int s = first; s < t->nsteps && !failed; s += 1 + t->steps[s].fuse) {
            const unsigned flags = gc3_core_flags(t->steps[s].type);
            failed = t->proto != GC3_PROTO_LL && (flags & (GC3_STEP_F_SEND | GC3_STEP_F_RECV))
                         ? gc3_core_step_simple(t, s, l, &pos)
                         : gc3_core_step(t, s, l, &pos);
            at_l                 = l;
            at_s                 = s;
            if (resumed && !failed) {
                resumed = 0;
                if (GC3_LEADER) {
                    t->waited = 0; /* (the resumed wait ended before it looked at the clock) */
                }
            }
        }
        if (!failed && GC3_LEADER && t->window > 0) {
            /* (read only by gc3_core_wait_window, for loops of this call) */
            GC3_STORE_REL_LOCAL(gc3_core_u64(t->region, t->loops_off[t->tb]), t->loops_base[t->tb] + (uint64_t)l + 1);
        }
    }
    if (!failed && (t->send_lens || pos.zc) && GC3_LEADER) {
        /* to another node: the call ends when the receiver consumed everything, so no transfer of this
         * call is still under way when the plan is destroyed; zero-copy: when it read what this block
         * left in place, so that the caller may change its buffers once the call returned */
        failed = gc3_core_wait(t, t->send_head, t->send_base + pos.sent, t->nsteps - 1, t->L - 1, GC3_WAIT_WHAT_SEND, -1,
                               -1);
        at_l   = t->L;
        at_s   = 0;
    }
    if (GC3_LEADER) {
        GC3_STAMP(t, GC3_TRACE_END(t->nsteps));
        if (failed == GC3_STOP_YIELD) {
            gc3_core_record(t, &pos, at_l, at_s);
        } else if (!failed) {
            if (t->resuming) {
                /* resumed and ended: its record no longer says where it stands (the call may be run again
                 * for another block, which gave way after this one ended it) */
                t->resume->call = 0;
            }
            t->send_base += pos.sent;
            t->recv_base += pos.received;
        }
    }
    return failed == GC3_STOP_YIELD ? GC3_CORE_YIELDED : failed ? GC3_CORE_FAILED : GC3_CORE_OK;
}

#endif
