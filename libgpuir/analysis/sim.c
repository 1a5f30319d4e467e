/* gc3 / libgpuir: the scheduling engine (see gc3_sim.h). */
#include <stdlib.h>
#include <string.h>
#include "gc3_evheap.h"
#include "gc3_sim.h"

enum { GC3_WAIT_NONE, GC3_WAIT_DEP, GC3_WAIT_RECV, GC3_WAIT_SEND };

typedef struct {
    int    sender, receiver; /* global thread block indices */
    void **ring;
    int    head, count;
    long   pushed, popped;
} gc3_sim_conn_t;

typedef struct {
    int  loop, step;      /* next step to run */
    long done;            /* steps completed, all loops together */
    int  send_conn, recv_conn;
    int  queued;
    int  wait_kind, wait_target;
    int *waiters;         /* blocks waiting for one of this block's steps */
    int  nwaiters, waiters_cap;
} gc3_sim_tb_t;

typedef struct {
    const gc3_flat_program_t *flat;
    const gc3_flat_tb_t      *tbs;
    const gc3_flat_step_t    *steps;
    const gc3_flat_rank_t    *ranks;
    const gc3_sim_params_t   *params;
    const gc3_sim_ops_t      *ops;
    void                     *ctx;
    gc3_diag_t               *diag;
    gc3_sim_tb_t             *tb;
    gc3_sim_conn_t           *conns;
    int                       nconns;
    gc3_evheap_t              heap; /* the blocks that may run, by priority (room for every block) */
} gc3_sim_t;

static int gc3_sim_local(const gc3_sim_t *sim, int gtb)
{
    return gtb - sim->ranks[sim->tbs[gtb].rank].tb_begin;
}

static void gc3_sim_heap_push(gc3_sim_t *sim, int gtb)
{
    if (sim->tb[gtb].queued) {
        return;
    }
    sim->tb[gtb].queued = 1;
    /* (a block is queued once: the heap's room for every block is enough, the push cannot fail) */
    (void)gc3_evheap_push(&sim->heap, gtb, sim->ops->priority ? sim->ops->priority(sim->ctx, gtb) : 0.0);
}

static int gc3_sim_heap_pop(gc3_sim_t *sim)
{
    const int gtb = gc3_evheap_pop(&sim->heap).id;

    sim->tb[gtb].queued = 0;
    return gtb;
}

static gc3_status_t gc3_sim_add_waiter(gc3_sim_t *sim, int target, int waiter)
{
    gc3_sim_tb_t *t = &sim->tb[target];

    for (int i = 0; i < t->nwaiters; i++) {
        if (t->waiters[i] == waiter) {
            return GC3_OK;
        }
    }
    if (t->nwaiters == t->waiters_cap) {
        int  ncap = t->waiters_cap ? 2 * t->waiters_cap : 4;
        int *n    = realloc(t->waiters, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        t->waiters     = n;
        t->waiters_cap = ncap;
    }
    t->waiters[t->nwaiters++] = waiter;
    return GC3_OK;
}

static void gc3_sim_wake(gc3_sim_t *sim, int gtb)
{
    if (sim->tb[gtb].wait_kind != GC3_WAIT_NONE) {
        sim->tb[gtb].wait_kind = GC3_WAIT_NONE;
        gc3_sim_heap_push(sim, gtb);
    }
}

/* Connect each sending block to the block of its peer that receives from it on the channel. */
static gc3_status_t gc3_sim_connect(gc3_sim_t *sim)
{
    const gc3_flat_program_t *f = sim->flat;

    for (int g = 0; g < f->ntbs; g++) {
        sim->tb[g].send_conn = sim->tb[g].recv_conn = -1;
    }
    sim->conns = calloc((size_t)(f->ntbs > 0 ? f->ntbs : 1), sizeof(*sim->conns));
    if (sim->conns == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int g = 0; g < f->ntbs; g++) {
        const gc3_flat_tb_t   *tb = &sim->tbs[g];
        const gc3_flat_rank_t *pr;
        gc3_sim_conn_t        *c;
        int                    peer_g = -1;

        if (tb->send < 0) {
            continue;
        }
        pr = &sim->ranks[tb->send];
        for (int t = 0; t < pr->ntbs; t++) {
            const gc3_flat_tb_t *q = &sim->tbs[pr->tb_begin + t];
            if (q->recv == tb->rank && q->chan == tb->chan) {
                peer_g = pr->tb_begin + t;
                break;
            }
        }
        if (peer_g < 0) {
            continue; /* reported if the block ever sends */
        }
        if (sim->tb[peer_g].recv_conn >= 0) {
            gc3_diag_add(sim->diag, "rank %d tb %d: rank %d has two thread blocks sending to it on channel %d",
                         tb->send, gc3_sim_local(sim, peer_g), tb->rank, tb->chan);
            return GC3_ERR_VERIFY;
        }
        c           = &sim->conns[sim->nconns];
        c->sender   = g;
        c->receiver = peer_g;
        c->ring     = calloc((size_t)sim->params->slots, sizeof(void *));
        if (c->ring == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        sim->tb[g].send_conn      = sim->nconns;
        sim->tb[peer_g].recv_conn = sim->nconns;
        sim->nconns++;
    }
    return GC3_OK;
}

const char *gc3_sim_buffer_name(int buf)
{
    switch (buf) {
    case GC3_BUF_INPUT:   return "input";
    case GC3_BUF_OUTPUT:  return "output";
    case GC3_BUF_SCRATCH: return "scratch";
    default:              return "no";
    }
}

/* Describe what `gtb` waits for; returns the block it waits on (-1 none). */
static int gc3_sim_describe_wait(gc3_sim_t *sim, int gtb, char *buf, size_t len)
{
    const gc3_flat_tb_t *tb = &sim->tbs[gtb];
    gc3_sim_tb_t        *st = &sim->tb[gtb];
    int                  target = -1;
    int                  n;

    n = gc3_snprintf_cut(buf, len, "rank %d tb %d step %d (loop %d, %s) ", tb->rank, gc3_sim_local(sim, gtb), st->step,
                 st->loop, gc3_step_type_name((gc3_step_type_t)sim->steps[tb->step_begin + st->step].type));
    if (n < 0 || (size_t)n >= len) {
        return -1;
    }
    switch (st->wait_kind) {
    case GC3_WAIT_DEP: {
        const gc3_flat_step_t *fs = &sim->steps[tb->step_begin + st->step];
        target                    = sim->ranks[tb->rank].tb_begin + fs->dep_tb;
        gc3_snprintf_cut(buf + n, len - (size_t)n, "waits for its dependency tb %d step %d", fs->dep_tb, fs->dep_step);
        break;
    }
    case GC3_WAIT_RECV:
        target = sim->conns[st->recv_conn].sender;
        gc3_snprintf_cut(buf + n, len - (size_t)n, "waits for a message from rank %d on channel %d (rank %d tb %d)",
                 tb->recv, tb->chan, sim->tbs[target].rank, gc3_sim_local(sim, target));
        break;
    case GC3_WAIT_SEND:
        target = sim->conns[st->send_conn].receiver;
        gc3_snprintf_cut(buf + n, len - (size_t)n, "waits for a free slot (%d full) towards rank %d on channel %d (rank %d tb %d)",
                 sim->params->slots, tb->send, tb->chan, sim->tbs[target].rank, gc3_sim_local(sim, target));
        break;
    default:
        gc3_snprintf_cut(buf + n, len - (size_t)n, "is not waiting");
    }
    return target;
}

static void gc3_sim_report_deadlock(gc3_sim_t *sim)
{
    const gc3_flat_program_t *f = sim->flat;
    int                      *pos;
    int                       start = -1, blocked = 0;
    char                      line[512];

    for (int g = 0; g < f->ntbs; g++) {
        if (sim->tb[g].loop < sim->params->nloops && sim->tbs[g].nsteps > 0) {
            blocked++;
            if (start < 0) {
                start = g;
            }
        }
    }
    pos = malloc((size_t)f->ntbs * sizeof(*pos));
    if (pos == NULL || start < 0) {
        gc3_diag_add(sim->diag, "deadlock: %d thread blocks cannot progress", blocked);
        free(pos);
        return;
    }
    for (int g = 0; g < f->ntbs; g++) {
        pos[g] = -1;
    }
    /* follow the wait-for chain from the first blocked block until it repeats or ends */
    {
        int chain[64], n = 0, g = start, cyc = -1;
        while (g >= 0 && n < 64) {
            if (pos[g] >= 0) {
                cyc = pos[g];
                break;
            }
            if (sim->tb[g].loop >= sim->params->nloops) {
                break; /* finished block: the chain ends in starvation */
            }
            pos[g]     = n;
            chain[n++] = g;
            g          = sim->tb[g].wait_kind != GC3_WAIT_NONE ? gc3_sim_describe_wait(sim, g, line, sizeof(line)) : -1;
        }
        if (cyc >= 0) {
            gc3_diag_add(sim->diag, "deadlock: %d thread blocks cannot progress; wait-for cycle of %d:", blocked, n - cyc);
            for (int i = cyc; i < n; i++) {
                gc3_sim_describe_wait(sim, chain[i], line, sizeof(line));
                gc3_diag_add(sim->diag, "  %s%s", line, i + 1 == n ? " -> back to the first" : " ->");
            }
        } else {
            gc3_diag_add(sim->diag, "deadlock: %d thread blocks cannot progress; the wait chain ends at a block that has "
                         "finished (a message or dependency that never comes):", blocked);
            for (int i = 0; i < n; i++) {
                gc3_sim_describe_wait(sim, chain[i], line, sizeof(line));
                gc3_diag_add(sim->diag, "  %s", line);
            }
            if (g >= 0) {
                gc3_diag_add(sim->diag, "  rank %d tb %d has finished all its steps", sim->tbs[g].rank,
                             gc3_sim_local(sim, g));
            }
        }
    }
    free(pos);
}

/* Try to run the next step of gtb. Returns 1 when it ran, 0 when blocked, <0 on error status. */
static int gc3_sim_try_step(gc3_sim_t *sim, int gtb, gc3_status_t *status_p)
{
    const gc3_flat_tb_t   *tb = &sim->tbs[gtb];
    gc3_sim_tb_t          *st = &sim->tb[gtb];
    const gc3_flat_step_t *fs = &sim->steps[tb->step_begin + st->step];
    unsigned               flags = gc3_step_flags((gc3_step_type_t)fs->type);
    gc3_sim_step_t         sc;
    gc3_sim_conn_t        *rc = NULL, *sc_conn = NULL;
    void                  *in = NULL, *out = NULL;
    int                    dep_g = -1;

    if (fs->dep_tb >= 0) {
        const gc3_flat_tb_t *dt;
        dep_g = sim->ranks[tb->rank].tb_begin + fs->dep_tb;
        dt    = &sim->tbs[dep_g];
        if (sim->tb[dep_g].done <= (long)st->loop * dt->nsteps + fs->dep_step) {
            if (dep_g == gtb) {
                gc3_diag_add(sim->diag, "rank %d tb %d step %d depends on step %d of its own block, which comes later",
                             tb->rank, gc3_sim_local(sim, gtb), st->step, fs->dep_step);
                *status_p = GC3_ERR_VERIFY;
                return -1;
            }
            st->wait_kind = GC3_WAIT_DEP;
            *status_p     = gc3_sim_add_waiter(sim, dep_g, gtb);
            return *status_p == GC3_OK ? 0 : -1;
        }
    }
    if (flags & GC3_STEP_F_RECV) {
        if (tb->recv < 0 || st->recv_conn < 0) {
            gc3_diag_add(sim->diag, "rank %d tb %d step %d (%s) receives, but %s", tb->rank, gc3_sim_local(sim, gtb),
                         st->step, gc3_step_type_name((gc3_step_type_t)fs->type),
                         tb->recv < 0 ? "the block has no recv peer"
                                      : "no thread block of the recv peer sends to this rank on this channel");
            *status_p = GC3_ERR_VERIFY;
            return -1;
        }
        rc = &sim->conns[st->recv_conn];
        if (rc->count == 0) {
            st->wait_kind = GC3_WAIT_RECV;
            return 0;
        }
    }
    if (flags & GC3_STEP_F_SEND) {
        if (tb->send < 0 || st->send_conn < 0) {
            gc3_diag_add(sim->diag, "rank %d tb %d step %d (%s) sends, but %s", tb->rank, gc3_sim_local(sim, gtb),
                         st->step, gc3_step_type_name((gc3_step_type_t)fs->type),
                         tb->send < 0 ? "the block has no send peer"
                                      : "no thread block of the send peer receives from this rank on this channel");
            *status_p = GC3_ERR_VERIFY;
            return -1;
        }
        sc_conn = &sim->conns[st->send_conn];
        if (sc_conn->count == sim->params->slots) {
            st->wait_kind = GC3_WAIT_SEND;
            return 0;
        }
    }
    if (rc != NULL) {
        in        = rc->ring[rc->head];
        rc->ring[rc->head] = NULL;
        rc->head  = (rc->head + 1) % sim->params->slots;
        rc->count--;
        rc->popped++;
        gc3_sim_wake(sim, rc->sender);
    }
    sc.loop    = st->loop;
    sc.rank    = tb->rank;
    sc.tb      = gc3_sim_local(sim, gtb);
    sc.gtb     = gtb;
    sc.step    = st->step;
    sc.dep_gtb = dep_g;
    sc.st      = fs;
    sc.tbinfo  = tb;
    *status_p  = sim->ops->exec(sim->ctx, &sc, in, &out);
    if (*status_p != GC3_OK) {
        if (out != NULL && sim->ops->free_msg) {
            sim->ops->free_msg(sim->ctx, out);
        }
        return -1;
    }
    if (sc_conn != NULL) {
        sc_conn->ring[(sc_conn->head + sc_conn->count) % sim->params->slots] = out;
        sc_conn->count++;
        sc_conn->pushed++;
        gc3_sim_wake(sim, sc_conn->receiver);
    } else if (out != NULL && sim->ops->free_msg) {
        sim->ops->free_msg(sim->ctx, out);
    }
    st->done++;
    if (++st->step == tb->nsteps) {
        st->step = 0;
        st->loop++;
    }
    /* wake blocks waiting on one of our steps; they re-check their condition */
    if (st->nwaiters > 0) {
        int n = st->nwaiters;
        st->nwaiters = 0;
        for (int i = 0; i < n; i++) {
            gc3_sim_wake(sim, st->waiters[i]);
        }
    }
    return 1;
}

gc3_status_t gc3_sim_run(const gc3_flat_program_t *flat, const gc3_sim_params_t *params, const gc3_sim_ops_t *ops,
                         void *ctx, gc3_diag_t *diag)
{
    gc3_sim_t    sim;
    gc3_status_t status = GC3_OK;
    int          unfinished = 0;

    if (params->slots < 1 || params->nloops < 1) {
        return GC3_ERR_INVALID_PARAM;
    }
    memset(&sim, 0, sizeof(sim));
    sim.flat   = flat;
    sim.tbs    = gc3_flat_tbs(flat);
    sim.steps  = gc3_flat_steps(flat);
    sim.ranks  = gc3_flat_ranks(flat);
    sim.params = params;
    sim.ops    = ops;
    sim.ctx    = ctx;
    sim.diag   = diag;
    sim.tb     = calloc((size_t)(flat->ntbs > 0 ? flat->ntbs : 1), sizeof(*sim.tb));
    if (sim.tb == NULL || gc3_evheap_init(&sim.heap, flat->ntbs) != GC3_OK) {
        status = GC3_ERR_NO_MEMORY;
        goto out;
    }
    status = gc3_sim_connect(&sim);
    if (status != GC3_OK) {
        goto out;
    }
    for (int g = 0; g < flat->ntbs; g++) {
        if (sim.tbs[g].nsteps == 0) {
            sim.tb[g].loop = params->nloops;
        } else {
            gc3_sim_heap_push(&sim, g);
        }
    }
    while (sim.heap.n > 0) {
        int g = gc3_sim_heap_pop(&sim);
        while (sim.tb[g].loop < params->nloops) {
            int r = gc3_sim_try_step(&sim, g, &status);
            if (r < 0) {
                goto out;
            }
            if (r == 0) {
                break;
            }
            if (params->one_step_per_turn) {
                if (sim.tb[g].loop < params->nloops) {
                    gc3_sim_heap_push(&sim, g);
                }
                break;
            }
        }
    }
    for (int g = 0; g < flat->ntbs; g++) {
        unfinished += sim.tb[g].loop < params->nloops;
    }
    if (unfinished) {
        gc3_sim_report_deadlock(&sim);
        status = GC3_ERR_DEADLOCK;
        goto out;
    }
    for (int c = 0; c < sim.nconns; c++) {
        const gc3_sim_conn_t *cn = &sim.conns[c];
        if (cn->count > 0) {
            const gc3_flat_tb_t *s = &sim.tbs[cn->sender];
            gc3_diag_add(diag, "rank %d tb %d sends %ld messages to rank %d on channel %d but rank %d tb %d receives "
                         "only %ld", s->rank, gc3_sim_local(&sim, cn->sender), cn->pushed / params->nloops, s->send,
                         s->chan, s->send, gc3_sim_local(&sim, cn->receiver), cn->popped / params->nloops);
            status = GC3_ERR_VERIFY;
            break;
        }
    }

out:
    if (sim.conns != NULL) {
        for (int c = 0; c < sim.nconns; c++) {
            for (int i = 0; i < sim.conns[c].count; i++) {
                void *m = sim.conns[c].ring[(sim.conns[c].head + i) % params->slots];
                if (m != NULL && ops->free_msg) {
                    ops->free_msg(ctx, m);
                }
            }
            free(sim.conns[c].ring);
        }
        free(sim.conns);
    }
    if (sim.tb != NULL) {
        for (int g = 0; g < flat->ntbs; g++) {
            free(sim.tb[g].waiters);
        }
    }
    free(sim.tb);
    gc3_evheap_free(&sim.heap);
    return status;
}

int gc3_sim_nlocations(const gc3_flat_program_t *flat, int rank)
{
    return gc3_flat_nlocations(flat, rank);
}

int gc3_sim_location(const gc3_flat_program_t *flat, int rank, int inplace, int buf, int chunk)
{
    return gc3_flat_location(flat, rank, inplace, buf, chunk);
}
