/* gc3 / libgpuir: a plan's binding, what its blocks are and where their connections and contexts point; one
 * plan for every root of a rooted collective (doc/design/call-model.md). Rank a of a
 * call whose root is the program's root + s plays program rank (a - s) mod n, whose peer q is rank
 * (q + s) mod n, with the segments of the root's buffer rotated alike (gc3_call_segs). The region holds every
 * connection any shift uses (gc3_rt_layout_union), found by peer and channel, so a connection's FIFO and
 * counters are the same whichever shift used it last; each shift's binding (its blocks and where their
 * connections are) is built here the first time a call of that root comes: bytes, not a plan. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_rt_exec.h"

int gc3_plan_relabels(const gc3_exec_params_t *ep, const gc3_flat_program_t *f)
{
    if (!ep->relabel || f->coll == GC3_COLL_CUSTOM || !gc3_coll_desc((gc3_coll_t)f->coll)->rooted || f->nranks < 2 ||
        f->root < 0) {
        return 0;
    }
    for (int q = 1; ep->node != NULL && q < f->nranks; q++) {
        if (ep->node[q] != ep->node[0]) {
            return 0; /* (a relabelled program's connections between nodes would change with the root) */
        }
    }
    return 1;
}

int gc3_plan_roots(const gc3_plan_t *p)
{
    return p == NULL ? 0 : p->nshift;
}

int gc3_plan_root_now(const gc3_plan_t *p)
{
    return p->flat->root < 0 ? -1 : (p->flat->root + p->shift) % p->nranks;
}

/* Sends marked for zero-copy among program rank `rank`'s steps (gc3_flat_zc_mark's). */
void gc3_plan_zc_count(const gc3_flat_program_t *f, int rank, gc3_zc_stats_t *st)
{
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t *steps = gc3_flat_steps(f);

    memset(st, 0, sizeof(*st));
    for (int t = 0; t < f->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps && tbs[t].rank == rank; s++) {
            const gc3_flat_step_t *x = &steps[tbs[t].step_begin + s];
            if (gc3_step_flags((gc3_step_type_t)x->type) & GC3_STEP_F_SEND) {
                st->sends++;
                st->oop += (x->zc & GC3_FLAT_ZC_OOP) != 0;
                st->ip += (x->zc & GC3_FLAT_ZC_IP) != 0;
                st->homed += (x->zc & GC3_FLAT_ZC_HOMED) != 0;
            }
        }
    }
}

void gc3_plan_tb_messages(const gc3_flat_program_t *f, const gc3_flat_tb_t *tb, int *nsend, int *nrecv)
{
    const gc3_flat_step_t *st = &gc3_flat_steps(f)[tb->step_begin];
    *nsend = *nrecv = 0;
    for (int s = 0; s < tb->nsteps; s++) {
        *nsend += (gc3_step_flags((gc3_step_type_t)st[s].type) & GC3_STEP_F_SEND) != 0;
        *nrecv += (gc3_step_flags((gc3_step_type_t)st[s].type) & GC3_STEP_F_RECV) != 0;
    }
}

/* The blocks' contexts, what stays the same for every call of the plan (gc3_exec_start sets the rest);
 * a relabelled plan's, of its current binding. */
void gc3_plan_ctx_init(gc3_plan_t *p)
{
    for (int t = 0; t < p->ntbs; t++) {
        gc3_rt_tb_t         *x  = &p->tbs_ctx[t];
        const gc3_flat_tb_t *tb = &p->tbs[t];
        memset(x, 0, sizeof(*x));
        x->rank        = p->rank;
        x->tb          = t;
        x->nsteps      = tb->nsteps;
        x->chan        = tb->chan;
        x->send_peer   = gc3_plan_peer(p, tb->send);
        x->recv_peer   = gc3_plan_peer(p, tb->recv);
        x->steps       = &gc3_flat_steps(p->flat)[tb->step_begin];
        x->proto       = p->proto;
        x->send_tail   = p->conn[t].send_tail;
        x->send_slots  = p->conn[t].send_slots;
        x->send_head   = p->conn[t].send_head;
        x->send_lens   = p->conn[t].send_lens;
        x->recv_tail   = p->conn[t].recv_tail;
        x->recv_slots  = p->conn[t].recv_slots;
        x->recv_head   = p->conn[t].recv_head;
        x->recv_remote = p->conn[t].recv_remote;
        x->pooled      = p->pooled;
        x->region      = p->region;
        x->sem_off     = p->sem_off;
        x->loops_off   = p->loops_off;
        x->sem_base    = p->sem_base;
        x->loops_base  = p->loops_base;
        x->tb_nsteps   = p->tb_nsteps;
        x->ntbs        = p->ntbs;
        x->k[0]        = p->k_in;
        x->k[1]        = p->k_out;
        x->s_chunks    = gc3_flat_ranks(p->flat)[p->prank].s_chunks;
        x->slots       = p->slots;
        x->slot_stride = p->slot_stride;
        x->timeout_s   = p->exec->params.timeout_s;
        x->zc_table    = gc3_reg_table(p->exec->reg, &x->zc_entries);
        x->zc_slocal   = gc3_reg_local(p->exec->reg, x->send_peer);
        x->zc_rlocal   = gc3_reg_local(p->exec->reg, x->recv_peer);
        x->zc_slocal   = x->zc_slocal < 64 ? x->zc_slocal : -1;
    }
}

/* The current binding's connections: for each block, the union connection it uses at each end and where
 * that connection's tail, slots and head are (this rank's region, the peer's region mapped here). */
gc3_status_t gc3_plan_bind_connect(gc3_plan_t *p, gc3_diag_t *diag)
{
    const gc3_rt_layout_t *me = &p->layout;

    for (int t = 0; t < p->ntbs; t++) {
        const gc3_flat_tb_t *tb = &p->tbs[t];
        gc3_rt_conn_t       *c  = &p->conn[t];
        const int            sp = gc3_plan_peer(p, tb->send), rp = gc3_plan_peer(p, tb->recv);
        memset(c, 0, sizeof(*c));
        p->send_conn[t] = p->recv_conn[t] = -1;
        p->send_slot_off[t] = p->recv_slot_off[t] = -1;
        if (p->nsend[t]) {
            const gc3_rt_layout_t *peer = &p->ulayouts[sp];
            const int              i    = gc3_rt_layout_rconn(peer, p->rank, tb->chan);
            const int              j    = gc3_rt_layout_sconn(me, sp, tb->chan);
            if (i < 0 || j < 0 || p->peer_region[sp] == NULL) {
                goto missing;
            }
            p->send_conn[t] = j;
            c->send_tail    = (uint64_t *)(p->peer_region[sp] + peer->rconn[i].off);
            c->send_head    = (uint64_t *)(p->region + me->sconn[j].off);
            if (p->pooled) {
                p->send_slot_off[t] = peer->rconn[i].slot; /* (gc3_plan_pool_point) */
            } else {
                c->send_slots = p->peer_region[sp] + peer->rconn[i].slot;
            }
        }
        if (p->nrecv[t]) {
            const gc3_rt_layout_t *peer = &p->ulayouts[rp];
            const int              i    = gc3_rt_layout_sconn(peer, p->rank, tb->chan);
            const int              j    = gc3_rt_layout_rconn(me, rp, tb->chan);
            if (i < 0 || j < 0 || p->peer_region[rp] == NULL) {
                goto missing;
            }
            p->recv_conn[t] = j;
            c->recv_tail    = (uint64_t *)(p->region + me->rconn[j].off);
            c->recv_head    = (uint64_t *)(p->peer_region[rp] + peer->sconn[i].off);
            if (p->pooled) {
                p->recv_slot_off[t] = me->rconn[j].slot;
            } else {
                c->recv_slots = p->region + me->rconn[j].slot;
            }
        }
        continue;
    missing:
        gc3_diag_add(diag,
                     "executor: rank %d (program rank %d relabelled for root %d) tb %d: a connection is not "
                     "in the union of its shifts (an internal error: please report it)",
                     p->rank, p->prank, gc3_plan_root_now(p), t);
        return GC3_ERR_INVALID_PARAM;
    }
    return GC3_OK;
}

/* The plan's block fields from a binding (or into it: save). */
static void gc3_plan_bind_swap(gc3_plan_t *p, gc3_plan_bind_t *b, int save)
{
    if (save) {
        b->prank = p->prank, b->ntbs = p->ntbs, b->tbs = p->tbs, b->tb_nsteps = p->tb_nsteps;
        b->nsend = p->nsend, b->nrecv = p->nrecv, b->send_conn = p->send_conn, b->recv_conn = p->recv_conn;
        b->conn = p->conn, b->send_slot_off = p->send_slot_off, b->recv_slot_off = p->recv_slot_off;
        b->zc_stats = p->zc_stats;
        return;
    }
    p->prank = b->prank, p->ntbs = b->ntbs, p->tbs = b->tbs, p->tb_nsteps = b->tb_nsteps;
    p->nsend = b->nsend, p->nrecv = b->nrecv, p->send_conn = b->send_conn, p->recv_conn = b->recv_conn;
    p->conn = b->conn, p->send_slot_off = b->send_slot_off, p->recv_slot_off = b->recv_slot_off;
    p->zc_stats = b->zc_stats;
}

void gc3_plan_bind_save(gc3_plan_t *p, gc3_plan_bind_t *b)
{
    gc3_plan_bind_swap(p, b, 1);
}

static void gc3_plan_bind_free(gc3_plan_bind_t *b)
{
    if (b != NULL) {
        free(b->tb_nsteps);
        free(b->nsend);
        free(b->nrecv);
        free(b->send_conn);
        free(b->recv_conn);
        free(b->conn);
        free(b->send_slot_off);
        free(b->recv_slot_off);
        free(b);
    }
}

/* A new binding for shift s, made current (*b_p; the caller saved the old one, and frees *b_p when this fails). */
static gc3_status_t gc3_plan_bind_make(gc3_plan_t *p, int s, gc3_plan_bind_t **b_p, gc3_diag_t *diag)
{
    const int              prank = (p->rank - s + p->nranks) % p->nranks;
    const gc3_flat_rank_t *me    = &gc3_flat_ranks(p->flat)[prank];
    const size_t           n     = (size_t)me->ntbs + 1;
    gc3_plan_bind_t       *b     = calloc(1, sizeof(*b));

    *b_p = b;
    if (b == NULL || (b->tb_nsteps = calloc(n, sizeof(int32_t))) == NULL ||
        (b->nsend = calloc(n, sizeof(int))) == NULL || (b->nrecv = calloc(n, sizeof(int))) == NULL ||
        (b->send_conn = calloc(n, sizeof(int))) == NULL || (b->recv_conn = calloc(n, sizeof(int))) == NULL ||
        (b->conn = calloc(n, sizeof(gc3_rt_conn_t))) == NULL ||
        (b->send_slot_off = calloc(n, sizeof(int64_t))) == NULL ||
        (b->recv_slot_off = calloc(n, sizeof(int64_t))) == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    b->prank = prank;
    b->ntbs  = me->ntbs;
    b->tbs   = &gc3_flat_tbs(p->flat)[me->tb_begin];
    for (int t = 0; t < b->ntbs; t++) {
        b->tb_nsteps[t] = b->tbs[t].nsteps;
        gc3_plan_tb_messages(p->flat, &b->tbs[t], &b->nsend[t], &b->nrecv[t]);
    }
    gc3_plan_zc_count(p->flat, prank, &b->zc_stats);
    p->shift = s;
    gc3_plan_bind_swap(p, b, 0);
    return gc3_plan_bind_connect(p, diag);
}

void gc3_plan_binds_free(gc3_plan_t *p)
{
    for (int s = 0; p->binds != NULL && s < p->nshift; s++) {
        if (p->binds[s] != NULL && s != p->shift) {
            gc3_plan_bind_free(p->binds[s]);
        } else {
            free(p->binds[s]); /* the current one's arrays are the plan's (gc3_plan_destroy frees them) */
        }
    }
    free(p->binds);
    p->binds = NULL;
}

static gc3_status_t gc3_plan_bind_shift(gc3_plan_t *p, int s, int root, gc3_diag_t *diag);

gc3_status_t gc3_plan_root(gc3_plan_t *p, int root, gc3_diag_t *diag)
{
    const int    n = p->nranks;
    int          s;
    gc3_status_t status;

    if (root < 0 || root >= n || p->flat->root < 0) {
        gc3_diag_add(diag, "executor: root %d for a plan of %d ranks (%s)", root, n,
                     p->flat->root < 0 ? "not of a rooted collective" : "rooted");
        return GC3_ERR_INVALID_PARAM;
    }
    s = (root - p->flat->root + n) % n;
    if (s == p->shift) {
        return GC3_OK;
    }
    if (p->nshift == 1) {
        gc3_diag_add(diag,
                     "executor: the plan serves root %d only, not root %d (its collective crosses nodes, is "
                     "not rooted, or params.relabel is 0)",
                     p->flat->root, root);
        return GC3_ERR_INVALID_PARAM;
    }
    if (!p->pooled) {
        return gc3_plan_bind_shift(p, s, root, diag);
    }
    /* (a progress thread finishing another plan's preparation may move this plan to a new pool meanwhile) */
    pthread_mutex_lock(&p->exec->pool_lock);
    status = gc3_plan_bind_shift(p, s, root, diag);
    pthread_mutex_unlock(&p->exec->pool_lock);
    return status;
}

/* gc3_plan_root's change of binding to shift s (under pool_lock for a pooled plan). */
static gc3_status_t gc3_plan_bind_shift(gc3_plan_t *p, int s, int root, gc3_diag_t *diag)
{
    const int       was = p->shift;
    gc3_plan_bind_t old, *made = NULL;
    gc3_status_t    status;

    if (p->in_flight) {
        gc3_diag_add(diag, "executor: a call is in flight on this plan (its root cannot change)");
        return GC3_ERR_INVALID_PARAM;
    }
    /* the counters of the connections the binding that ran last used, by connection */
    for (int t = 0; t < p->ntbs; t++) {
        if (p->send_conn[t] >= 0) {
            p->sconn_base[p->send_conn[t]] = p->send_base[t];
        }
        if (p->recv_conn[t] >= 0) {
            p->rconn_base[p->recv_conn[t]] = p->recv_base[t];
        }
    }
    gc3_plan_bind_swap(p, &old, 1);
    if (p->binds[s] != NULL) {
        p->shift = s;
        gc3_plan_bind_swap(p, p->binds[s], 0);
    } else if ((status = gc3_plan_bind_make(p, s, &made, diag)) == GC3_OK) {
        p->binds[s] = made;
    } else {
        gc3_plan_bind_free(made); /* (its arrays, which the plan's fields may point to now) */
        p->shift = was;
        gc3_plan_bind_swap(p, &old, 0);
        return status;
    }
    for (int t = 0; t < p->ntbs; t++) {
        p->send_base[t] = p->send_conn[t] >= 0 ? p->sconn_base[p->send_conn[t]] : 0;
        p->recv_base[t] = p->recv_conn[t] >= 0 ? p->rconn_base[p->recv_conn[t]] : 0;
    }
    if (p->pooled) {
        gc3_plan_pool_point(p);
    }
    gc3_plan_ctx_init(p);
    status = p->exec->be->plan_rebind != NULL ? p->exec->be->plan_rebind(p, diag) : GC3_OK;
    if (status != GC3_OK) { /* the backend's copy of the blocks is another shift's: no call may run on it */
        snprintf(p->broken_why, sizeof(p->broken_why), "the %s backend could not take root %d's blocks",
                 p->exec->be->name, root);
        p->broken = 1;
    }
    return status;
}
