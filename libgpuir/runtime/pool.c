/* gc3 / libgpuir: the FIFO pool (params.fifo_pool)
 *
 * One region of slots per rank, shared by the executor's pooled plans (Simple, connections on the
 * node): each lays its slots out from the pool's start, so the pool is as large as the largest of
 * them. Their counters (tails, heads, semaphores) stay in their own regions, so a plan's flow control
 * is its own; what the sharing adds is one rule: a sender's first message of a call that follows
 * another plan's call waits until the receiver has started the call (interp_core.inl), which it does
 * only once its calls before have ended, i.e. read everything in its pool. The caller runs one call
 * of the pooled plans at a time, in the same order on every rank (the component's pipeline).
 *
 * A plan that needs more than the pool has gets a new one at its preparation (its card carries the
 * new handle, the peers map it); once every rank has mapped what it needs (the second exchange), the
 * executor makes it current and every pooled plan not in flight moves to it (a plan in flight moves at
 * its next start); the old region goes with its last reference. All of it happens at the same point of
 * the call order on every rank, so a sender always writes into the pool the receiver reads. */
#include <pthread.h>
#include <stdlib.h>
#include "gc3_rt_exec.h"

void gc3_pool_unref(gc3_exec_t *e, gc3_plan_t *p, gc3_rt_pool_t *pool)
{
    if (pool == NULL || --pool->refs > 0) {
        return;
    }
    e->be->region_close(p, pool->base, pool->bytes, pool->own);
    gc3_rt_held_add(pool->own ? GC3_RT_HELD_DEVICE : GC3_RT_HELD_MAPPED, -(int64_t)pool->bytes);
    gc3_rt_held_add(pool->own ? GC3_RT_HELD_REGIONS : GC3_RT_HELD_MAPPINGS, -1);
    free(pool);
}

/* A pool with one reference (the executor's, once it is current), made while p is prepared: this
 * rank's new one (own: handle filled for the peers), or a peer's mapped from its handle. */
gc3_status_t gc3_pool_new(gc3_plan_t *p, int own, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes, uint64_t gen,
                          gc3_rt_pool_t **pool_p, gc3_diag_t *diag)
{
    gc3_rt_pool_t *pool = calloc(1, sizeof(*pool));
    gc3_status_t   status;

    *pool_p = NULL;
    if (pool == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    status = own ? p->exec->be->region_create(p, bytes, &pool->base, pool->handle, diag)
                 : p->exec->be->region_open(p, handle, bytes, &pool->base, diag);
    if (status != GC3_OK) {
        gc3_diag_add(diag,
                     own ? "executor: rank %d cannot make its FIFO pool of %zu bytes"
                         : "executor: rank %d cannot map a peer's FIFO pool of %zu bytes",
                     p->rank, bytes);
        free(pool);
        return status;
    }
    pool->bytes = bytes;
    pool->gen   = gen;
    pool->own   = own;
    pool->refs  = 1;
    gc3_rt_held_add(own ? GC3_RT_HELD_DEVICE : GC3_RT_HELD_MAPPED, (int64_t)bytes);
    gc3_rt_held_add(own ? GC3_RT_HELD_REGIONS : GC3_RT_HELD_MAPPINGS, 1);
    *pool_p = pool;
    return GC3_OK;
}

/* Does the plan use rank q's pool (pooled: its own when it receives on the node, a peer's it sends to
 * on the node)? */
int gc3_plan_pool_uses(const gc3_plan_t *p, int q)
{
    if (!p->pooled || q == p->rank) {
        return p->pooled && p->layout.pool_bytes > 0;
    }
    if (p->nshift > 1) { /* relabelled: the connections of every shift (one node) */
        for (int i = 0; i < p->layout.nsconn; i++) {
            if (p->layout.sconn[i].peer == q) {
                return 1;
            }
        }
        return 0;
    }
    for (int t = 0; t < p->ntbs; t++) {
        if (p->nsend[t] && p->tbs[t].send == q && !gc3_plan_remote(p, q)) {
            return 1;
        }
    }
    return 0;
}

/* The pooled plan's connections and contexts pointed at the executor's current pools (a reference on
 * each); a kernel that kept the old pointers ends, then the old pools lose the plan's references. */
void gc3_plan_pool_move(gc3_plan_t *p)
{
    gc3_exec_t     *e     = p->exec;
    gc3_rt_pool_t **old   = p->pool + p->nranks; /* the second half: what it held */
    int             moved = 0;

    for (int q = 0; q < p->nranks; q++) {
        old[q] = NULL;
        if (gc3_plan_pool_uses(p, q) && p->pool[q] != e->pool[q]) {
            old[q] = p->pool[q];
            moved |= old[q] != NULL;
            p->pool[q] = e->pool[q];
            p->pool[q]->refs++;
        }
    }
    gc3_plan_pool_point(p);
    p->pool_epoch = e->pool_epoch;
    if (moved && e->be->plan_moved != NULL) {
        e->be->plan_moved(p);
    }
    for (int q = 0; q < p->nranks; q++) {
        gc3_pool_unref(e, p, old[q]);
    }
}

void gc3_plan_pool_point(gc3_plan_t *p)
{
    for (int t = 0; t < p->ntbs; t++) {
        if (p->send_slot_off[t] >= 0) {
            p->conn[t].send_slots = p->tbs_ctx[t].send_slots =
                p->pool[gc3_plan_peer(p, p->tbs[t].send)]->base + p->send_slot_off[t];
        }
        if (p->recv_slot_off[t] >= 0) {
            p->conn[t].recv_slots = p->tbs_ctx[t].recv_slots = p->pool[p->rank]->base + p->recv_slot_off[t];
        }
    }
}

/* Does a pooled plan of the executor use rank q's pool? */
int gc3_exec_pool_used(gc3_exec_t *e, int q)
{
    int used = 0;
    pthread_mutex_lock(&e->pool_lock);
    for (const gc3_plan_t *p = e->plans; p != NULL && !used; p = p->pool_next) {
        used = gc3_plan_pool_uses(p, q);
    }
    pthread_mutex_unlock(&e->pool_lock);
    return used;
}

/* Every pooled plan of the executor that has no call in flight moves to the current pools. */
void gc3_exec_pool_move_all(gc3_exec_t *e)
{
    for (gc3_plan_t *q = e->plans; q != NULL; q = q->pool_next) {
        if (!q->in_flight && q->pool_epoch != e->pool_epoch) {
            gc3_plan_pool_move(q);
        }
    }
}

/* Does some connection of the program join two ranks of one node? */
static int gc3_flat_local_conns(const gc3_flat_program_t *f, const int *node)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    for (int r = 0; r < f->nranks; r++) {
        for (int t = 0; t < ranks[r].ntbs; t++) {
            const gc3_flat_tb_t *b = &tbs[ranks[r].tb_begin + t];
            if (b->recv >= 0 && (node == NULL || node[b->recv] == node[r])) {
                return 1;
            }
        }
    }
    return 0;
}

/* Does a plan of this program take its slots from the pool? (Simple only: an LL message's flags are
 * its sequence number on its connection, which the lines another plan left in a slot could match.) */
int gc3_plan_takes_pool(const gc3_exec_params_t *ep, int proto, const gc3_flat_program_t *f, const int *node)
{
    return ep->fifo_pool && proto == GC3_PROTO_SIMPLE && gc3_flat_local_conns(f, node);
}

int gc3_plan_pooled(const gc3_plan_t *p)
{
    return p != NULL && p->pooled;
}

uint64_t gc3_exec_pool_bytes(const gc3_exec_t *e)
{
    return e->pool != NULL && e->pool[e->params.rank] != NULL ? e->pool[e->params.rank]->bytes : 0;
}

uint64_t gc3_exec_pool_need(const gc3_exec_t *e, const gc3_plan_mem_t *m)
{
    return m->pool > gc3_exec_pool_bytes(e) ? m->pool : 0;
}

/* The plan off the executor's list of pooled plans, its pools' references given back. */
void gc3_plan_pool_leave(gc3_plan_t *p)
{
    gc3_exec_t *e = p->exec;

    if (!p->pooled) {
        return;
    }
    pthread_mutex_lock(&e->pool_lock);
    for (gc3_plan_t **pp = &e->plans; *pp != NULL; pp = &(*pp)->pool_next) {
        if (*pp == p) {
            *pp = p->pool_next;
            break;
        }
    }
    if (e->pool_busy == p) {
        e->pool_busy = NULL;
    }
    for (int q = 0; p->pool != NULL && q < p->nranks; q++) {
        gc3_pool_unref(e, p, p->pool[q]);
        p->pool[q] = NULL;
    }
    pthread_mutex_unlock(&e->pool_lock);
}
