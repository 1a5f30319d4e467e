/* gc3 / libgpuir: where each block's counters and FIFOs live in a rank's region, and who
 * talks to whom. The same function gives every rank the layout of every other rank. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_rt_internal.h"
#include "gc3_runtime.h"

uint64_t gc3_rt_layout_net_lens_bytes(int slots)
{
    return gc3_rt_round((uint64_t)slots * 8, GC3_RT_LINE);
}

/* the slots of one inter-node connection */
static uint64_t gc3_rt_layout_net_slots_bytes(int slots, uint64_t slot_stride)
{
    return gc3_rt_round((uint64_t)slots * slot_stride, GC3_RT_LINE);
}

/* An inter-node connection: its block in the net region, and where its slots are (in that block,
 * host-staged; in the slot region, direct). */
static int64_t gc3_rt_layout_net_conn_place(gc3_rt_layout_t *L, int slots, uint64_t slot_stride, int64_t *slots_off,
                                            uint64_t *noff, uint64_t *soff)
{
    int64_t at = (int64_t)*noff;
    if (L->net_direct) {
        *slots_off = (int64_t)*soff;
        *soff += gc3_rt_layout_net_slots_bytes(slots, slot_stride);
    } else {
        *slots_off = at + (int64_t)GC3_RT_NET_SLOTS_OFF(slots);
    }
    *noff += L->net_conn_bytes;
    return at;
}

gc3_status_t gc3_rt_layout_compute(const gc3_flat_program_t *f, int rank, int slots, uint64_t slot_stride,
                                   const int *node, int net_direct, int pooled, gc3_rt_layout_t *L)
{
    const gc3_flat_rank_t *r = &gc3_flat_ranks(f)[rank];
    const gc3_flat_tb_t   *tbs = gc3_flat_tbs(f);
    const uint64_t         fifo_slots = gc3_rt_round((uint64_t)slots * slot_stride, GC3_RT_LINE);
    uint64_t               off = 0, noff = 0, soff = 0, poff = 0;

    memset(L, 0, sizeof(*L));
    L->sem_off   = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->loops_off = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->fifo_off  = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->slot_off  = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->head_off  = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->net_recv_off = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->net_send_off = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->net_recv_slots = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->net_send_slots = calloc((size_t)r->ntbs + 1, sizeof(int64_t));
    L->net_direct     = net_direct;
    L->pooled         = pooled;
    /* tail line, lengths, the slots (host-staged only), head line */
    L->net_conn_bytes = GC3_RT_LINE + gc3_rt_layout_net_lens_bytes(slots) +
                        (net_direct ? 0 : gc3_rt_layout_net_slots_bytes(slots, slot_stride)) + GC3_RT_LINE;
    if (L->sem_off == NULL || L->loops_off == NULL || L->fifo_off == NULL || L->slot_off == NULL || L->head_off == NULL ||
        L->net_recv_off == NULL || L->net_send_off == NULL || L->net_recv_slots == NULL || L->net_send_slots == NULL) {
        gc3_rt_layout_free(L);
        return GC3_ERR_NO_MEMORY;
    }
    for (int t = 0; t < r->ntbs; t++) {
        L->sem_off[t] = (int64_t)off;
        off += GC3_RT_LINE;
        L->loops_off[t] = (int64_t)off;
        off += GC3_RT_LINE;
    }
    /* a connection to another node has its FIFO in the net region only; one on the node, in the
     * region (the receiver's tail and slots, the sender's head), its slots in the pool when pooled */
    for (int t = 0; t < r->ntbs; t++) {
        const gc3_flat_tb_t *me = &tbs[r->tb_begin + t];
        const int            recv = gc3_flat_peer_sender(f, rank, t) >= 0, send = gc3_flat_peer_receiver(f, rank, t) >= 0;
        L->fifo_off[t] = L->slot_off[t] = L->head_off[t] = L->net_recv_off[t] = L->net_send_off[t] = -1;
        L->net_recv_slots[t] = L->net_send_slots[t] = -1;
        if (recv && node != NULL && node[me->recv] != node[rank]) {
            L->net_recv_off[t] =
                gc3_rt_layout_net_conn_place(L, slots, slot_stride, &L->net_recv_slots[t], &noff, &soff);
        } else if (recv && pooled) {
            L->fifo_off[t] = (int64_t)off; /* the tail line here, the slots in the pool */
            off += GC3_RT_LINE;
            L->slot_off[t] = (int64_t)poff;
            poff += fifo_slots;
        } else if (recv) {
            L->fifo_off[t] = (int64_t)off; /* tail line, then the slots */
            L->slot_off[t] = (int64_t)(off + GC3_RT_LINE);
            off += GC3_RT_LINE + fifo_slots;
        }
        if (send && node != NULL && node[me->send] != node[rank]) {
            L->net_send_off[t] =
                gc3_rt_layout_net_conn_place(L, slots, slot_stride, &L->net_send_slots[t], &noff, &soff);
        } else if (send) {
            L->head_off[t] = (int64_t)off;
            off += GC3_RT_LINE;
        }
    }
    L->bytes     = off > 0 ? off : GC3_RT_LINE;
    L->pool_bytes     = poff;
    L->net_bytes      = noff;
    L->net_slot_bytes = soff;
    return GC3_OK;
}

static int gc3_rt_uconn_find(const gc3_rt_uconn_t *u, int n, int peer, int chan)
{
    for (int i = 0; i < n; i++) {
        if (u[i].peer == peer && u[i].chan == chan) {
            return i;
        }
    }
    return -1;
}

/* Add (peer, chan) to a list of union connections unless there (*n of them, room for cap) */
static void gc3_rt_uconn_add(gc3_rt_uconn_t *u, int *n, int peer, int chan)
{
    if (gc3_rt_uconn_find(u, *n, peer, chan) >= 0) {
        return;
    }
    u[*n].peer = peer;
    u[*n].chan = chan;
    u[*n].off = u[*n].slot = -1;
    (*n)++;
}

int gc3_rt_layout_rconn(const gc3_rt_layout_t *L, int peer, int chan)
{
    return gc3_rt_uconn_find(L->rconn, L->nrconn, peer, chan);
}

int gc3_rt_layout_sconn(const gc3_rt_layout_t *L, int peer, int chan)
{
    return gc3_rt_uconn_find(L->sconn, L->nsconn, peer, chan);
}

/* Does some rank of the program have two blocks on one connection (the same peer and channel, one way)? */
static int gc3_rt_layout_shared_conn(const gc3_flat_program_t *f)
{
    const gc3_flat_tb_t *tbs = gc3_flat_tbs(f);
    for (int r = 0; r < f->nranks; r++) {
        const gc3_flat_rank_t *me = &gc3_flat_ranks(f)[r];
        for (int t = 0; t < me->ntbs; t++) {
            const gc3_flat_tb_t *a = &tbs[me->tb_begin + t];
            for (int u = 0; u < t; u++) {
                const gc3_flat_tb_t *b = &tbs[me->tb_begin + u];
                if (a->chan == b->chan &&
                    ((a->send >= 0 && a->send == b->send) || (a->recv >= 0 && a->recv == b->recv))) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

gc3_status_t gc3_rt_layout_union(const gc3_flat_program_t *f, int rank, int slots, uint64_t slot_stride, int pooled,
                                 gc3_rt_layout_t *L)
{
    const int      n          = f->nranks;
    const uint64_t fifo_slots = gc3_rt_round((uint64_t)slots * slot_stride, GC3_RT_LINE);
    int            cap        = 1;
    uint64_t       off = 0, poff = 0;

    memset(L, 0, sizeof(*L));
    if (gc3_rt_layout_shared_conn(f)) {
        return GC3_ERR_VERIFY;
    }
    for (int r = 0; r < n; r++) {
        const int nt = gc3_flat_ranks(f)[r].ntbs;
        cap += nt;
        L->nblocks = nt > L->nblocks ? nt : L->nblocks;
    }
    L->pooled    = pooled;
    L->sem_off   = calloc((size_t)L->nblocks + 1, sizeof(int64_t));
    L->loops_off = calloc((size_t)L->nblocks + 1, sizeof(int64_t));
    L->rconn     = calloc((size_t)cap, sizeof(gc3_rt_uconn_t)); /* (each block of the program at most once) */
    L->sconn     = calloc((size_t)cap, sizeof(gc3_rt_uconn_t));
    if (L->sem_off == NULL || L->loops_off == NULL || L->rconn == NULL || L->sconn == NULL) {
        gc3_rt_layout_free(L);
        return GC3_ERR_NO_MEMORY;
    }
    /* shift s: this rank plays program rank (rank - s) mod n, whose peer q is rank (q + s) mod n; a
     * block of program rank p appears under exactly one shift, so the lists hold at most one entry per block */
    for (int s = 0; s < n; s++) {
        const int              p  = (rank - s + n) % n;
        const gc3_flat_rank_t *me = &gc3_flat_ranks(f)[p];
        for (int t = 0; t < me->ntbs; t++) {
            const gc3_flat_tb_t *tb = &gc3_flat_tbs(f)[me->tb_begin + t];
            if (gc3_flat_peer_sender(f, p, t) >= 0) {
                gc3_rt_uconn_add(L->rconn, &L->nrconn, (tb->recv + s) % n, tb->chan);
            }
            if (gc3_flat_peer_receiver(f, p, t) >= 0) {
                gc3_rt_uconn_add(L->sconn, &L->nsconn, (tb->send + s) % n, tb->chan);
            }
        }
    }
    for (int t = 0; t < L->nblocks; t++) {
        L->sem_off[t] = (int64_t)off;
        off += GC3_RT_LINE;
        L->loops_off[t] = (int64_t)off;
        off += GC3_RT_LINE;
    }
    for (int i = 0; i < L->nrconn; i++) { /* the tail line, then the slots (here, or in the pool) */
        L->rconn[i].off = (int64_t)off;
        off += GC3_RT_LINE;
        if (pooled) {
            L->rconn[i].slot = (int64_t)poff;
            poff += fifo_slots;
        } else {
            L->rconn[i].slot = (int64_t)off;
            off += fifo_slots;
        }
    }
    for (int i = 0; i < L->nsconn; i++) {
        L->sconn[i].off = (int64_t)off;
        off += GC3_RT_LINE;
    }
    L->bytes      = off > 0 ? off : GC3_RT_LINE;
    L->pool_bytes = poff;
    return GC3_OK;
}

void gc3_rt_layout_free(gc3_rt_layout_t *L)
{
    free(L->rconn);
    free(L->sconn);
    L->rconn = L->sconn = NULL;
    L->nrconn = L->nsconn = L->nblocks = 0;
    free(L->sem_off);
    free(L->loops_off);
    free(L->fifo_off);
    free(L->slot_off);
    free(L->head_off);
    free(L->net_recv_off);
    free(L->net_send_off);
    free(L->net_recv_slots);
    free(L->net_send_slots);
    L->sem_off = L->loops_off = L->fifo_off = L->slot_off = L->head_off = L->net_recv_off = L->net_send_off = NULL;
    L->net_recv_slots = L->net_send_slots = NULL;
}

void gc3_rt_error_format(const gc3_rt_error_t *e, char *buf, size_t len)
{
    switch (e->what) {
    case GC3_WAIT_WHAT_DEP:
        gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d) waited for its dependency tb %d step %d: reached %llu of %llu",
                 e->rank, e->tb, e->step, e->loop, e->dep_tb, e->dep_step, (unsigned long long)e->seen,
                 (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_RECV:
        gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d) waited for a message from rank %d on channel %d: %llu of "
                 "%llu arrived", e->rank, e->tb, e->step, e->loop, e->peer, e->chan, (unsigned long long)e->seen,
                 (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_SEND:
        gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d) waited for a free slot towards rank %d on channel %d: "
                 "rank %d consumed %llu, %llu needed", e->rank, e->tb, e->step, e->loop, e->peer, e->chan, e->peer,
                 (unsigned long long)e->seen, (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_POOL:
        gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d) waited for rank %d (channel %d) to start this call before "
                 "writing into its FIFO pool, which held another plan's messages: it said %llu, %llu needed", e->rank,
                 e->tb, e->step, e->loop, e->peer, e->chan, (unsigned long long)e->seen, (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_ZC:
        snprintf(buf, len, "rank %d tb %d step %d (loop %d): the zero-copy message from rank %d (channel %d) names its "
                 "registration %llu at address 0x%llx, which this rank has not mapped (an internal error of gc3's "
                 "registration cache: please report it)", e->rank, e->tb, e->step, e->loop, e->peer, e->chan,
                 (unsigned long long)e->expected - 1, (unsigned long long)e->seen);
        break;
    case GC3_WAIT_WHAT_START:
        gc3_snprintf_cut(buf, len,
                         "rank %d tb %d step %d (loop %d) waited for rank %d (channel %d) to start this call before "
                         "writing into its buffers (zero-copy, pushed): it said %llu, %llu needed",
                         e->rank, e->tb, e->step, e->loop, e->peer, e->chan, (unsigned long long)e->seen,
                         (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_PUSHED:
        snprintf(buf, len,
                 "rank %d tb %d step %d (loop %d): rank %d (channel %d) pushed its message into this rank's "
                 "buffer, but this step (type %llu) takes no pushed message (an internal error of gc3's zero-copy "
                 "marking: please report it)",
                 e->rank, e->tb, e->step, e->loop, e->peer, e->chan, (unsigned long long)e->seen);
        break;
    case GC3_WAIT_WHAT_WINDOW:
        gc3_snprintf_cut(buf, len, "rank %d tb %d (loop %d) waited for tb %d of its rank to finish loop %llu (scratch window)",
                 e->rank, e->tb, e->loop, e->dep_tb, (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_MISMATCH:
        gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d): the message from rank %d (channel %d) belongs to another "
                 "call: the ranks called with different counts, datatypes or operations (signature %016llx, this "
                 "call's %016llx)", e->rank, e->tb, e->step, e->loop, e->peer, e->chan, (unsigned long long)e->seen,
                 (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_PLACE:
        gc3_snprintf_cut(buf, len,
                         "rank %d tb %d waited for a place to run: at most %llu blocks of the process run at once "
                         "(GC3_TEST_RESIDENT_BLOCKS)",
                         e->rank, e->tb, (unsigned long long)e->expected);
        break;
    case GC3_WAIT_WHAT_NET:
        gc3_snprintf_cut(buf, len, "rank %d tb %d: the UCX connection to rank %d (channel %d) failed: %s", e->rank, e->tb,
                 e->peer, e->chan, e->seen == 1 ? "endpoint error (peer process gone or unreachable)"
                                                 : "a transfer could not be started");
        break;
    default:
        gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d) failed", e->rank, e->tb, e->step, e->loop);
    }
}
