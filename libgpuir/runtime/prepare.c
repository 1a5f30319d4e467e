/* gc3 / libgpuir: preparing a plan (collective over the executor's ranks: the flat program, the slot
 * geometry of its shape (shape.c), the layout and this rank's region; the exchange of handles, the peers'
 * regions mapped; the connections; between nodes, the transport's setup), and its end (gc3_plan_destroy). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_rt_exec.h"
#include "gc3_rt_net.h"

void gc3_plan_destroy(gc3_plan_t *p)
{
    if (p == NULL) {
        return;
    }
    if (p->in_flight && !p->pending) {
        (void)p->exec->be->wait(p);
        if (p->crosses_nodes) {
            p->transport->call_end(p);
        }
    }
    if (p->net_state != NULL) {
        p->transport->teardown(p);
    }
    if (p->net != NULL) {
        p->exec->be->host_free(p, p->net, p->layout.net_bytes);
        gc3_rt_held_add(GC3_RT_HELD_PINNED, -(int64_t)p->layout.net_bytes);
    }
    if (p->net_slots != NULL) {
        p->exec->be->mem_free(p, p->net_slots, p->layout.net_slot_bytes);
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)p->layout.net_slot_bytes);
    }
    if (p->peer_region != NULL) {
        for (int r = 0; r < p->nranks; r++) {
            if (p->peer_region[r] != NULL && r != p->rank) {
                p->exec->be->region_close(p, p->peer_region[r], p->peer_bytes[r], 0);
                gc3_rt_held_add(GC3_RT_HELD_MAPPED, -(int64_t)p->peer_bytes[r]);
                gc3_rt_held_add(GC3_RT_HELD_MAPPINGS, -1);
            }
        }
    }
    if (p->region != NULL) {
        p->exec->be->region_close(p, p->region, p->layout.bytes, 1);
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)p->layout.bytes);
        gc3_rt_held_add(GC3_RT_HELD_REGIONS, -1);
    }
    gc3_plan_pool_leave(p);
    gc3_plan_scratch_free(p);
    if (p->segs != NULL) {
        p->exec->be->host_free(p, (char *)p->segs, p->segs_bytes);
        gc3_rt_held_add(GC3_RT_HELD_PINNED, -(int64_t)p->segs_bytes);
    }
    if (p->stage != NULL) {
        p->exec->be->mem_free(p, p->stage, p->mem.stage);
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)p->mem.stage);
    }
    if (p->exec->be->plan_cleanup != NULL) {
        p->exec->be->plan_cleanup(p);
    }
    gc3_plan_binds_free(p);
    for (int q = 0; p->ulayouts != NULL && q < p->nranks; q++) {
        gc3_rt_layout_free(&p->ulayouts[q]);
    }
    free(p->ulayouts);
    free(p->send_conn);
    free(p->recv_conn);
    free(p->sconn_base);
    free(p->rconn_base);
    gc3_rt_layout_free(&p->layout);
    free(p->peer_region);
    free(p->peer_bytes);
    free(p->pool);
    free(p->send_slot_off);
    free(p->recv_slot_off);
    free(p->tb_nsteps);
    free(p->sem_base);
    free(p->loops_base);
    free(p->send_base);
    free(p->recv_base);
    free(p->nsend);
    free(p->nrecv);
    free(p->tbs_ctx);
    free(p->conn);
    gc3_flat_destroy(p->flat);
    free(p);
}

enum { GC3_PREP_HANDLES, GC3_PREP_MAPPED, GC3_PREP_NET };
/* what a rank says in the second exchange: mapped everything, or not; or not, only because a peer's
 * memory was refused as already mapped (then every rank allocates anew, up to GC3_PREP_RETRIES times) */
enum { GC3_PREP_NOT_READY = 0, GC3_PREP_READY = 1, GC3_PREP_REFUSED = 2, GC3_PREP_RETRIES = 3 };

struct gc3_prep {
    gc3_plan_t         *p;
    gc3_rt_layout_t    *layouts; /* of every rank this one talks to (and its own) */
    int                 phase, ok, unlinked;
    gc3_rt_xchg_t       x;   /* the exchange of the phase */
    gc3_rt_net_setup_t *net; /* GC3_PREP_NET */
    /* the FIFO pool (params.fifo_pool): until the executor makes them current, the pools this
     * preparation made (this rank's, when its plan needs more than the current one) and mapped (per
     * rank: a peer's new one) */
    gc3_rt_pool_t  *pool_new;
    gc3_rt_pool_t **pool_peer;
    /* a peer's memory refused as already mapped (GC3_ERR_IN_USE): this rank's allocations of the
     * attempts before, held until the preparation ends so that the new ones land elsewhere */
    int            refused, retries;
    char           refused_why[256];
    char          *old_region[GC3_PREP_RETRIES];
    gc3_rt_pool_t *old_pool[GC3_PREP_RETRIES];
};

/* what every rank says in the first two exchanges: whether it is ready, and its region's handle;
 * in the first, also its FIFO pool after this preparation (gen 0: none) and the plan's FIFO shape, which
 * every rank computed alone and the peers' layouts assume (gc3_prep_same_shape) */
typedef struct {
    int32_t  ok, pad;
    char     handle[GC3_RT_HANDLE_BYTES];
    uint64_t pool_gen, pool_bytes;
    char     pool_handle[GC3_RT_HANDLE_BYTES];
    char     reg_board[64]; /* zero-copy: this rank's board ("" none) */
    uint64_t slot_payload;
    int32_t  slots, pad2;
} gc3_prep_card_t;

/* Rank q's card of the exchange just done. */
static const gc3_prep_card_t *gc3_prep_card(const gc3_prep_t *x, int q)
{
    return (const gc3_prep_card_t *)(x->x.recv + (size_t)q * x->x.bytes);
}

/* The plan's chunks and slots: its segments per rank, its largest step, a slot's payload and stride. */
static gc3_status_t gc3_prep_geometry(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_plan_t *p,
                                      gc3_diag_t *diag)
{
    gc3_status_t status;

    gc3_plan_segments(p->flat, &p->k_in, &p->k_out);
    if (p->k_in < 1 || p->k_out < 1) {
        gc3_diag_add(diag, "executor: program '%s' has fewer chunks than ranks", program->name);
        return GC3_ERR_INVALID_PARAM;
    }
    p->cnt_max = 1;
    for (int i = 0; i < p->flat->nsteps; i++) {
        int c      = gc3_flat_steps(p->flat)[i].cnt;
        p->cnt_max = c > p->cnt_max ? c : p->cnt_max;
    }
    status = gc3_plan_fifo_shape(&exec->params, program, p->flat, p->cnt_max, p->k_in > p->k_out ? p->k_in : p->k_out,
                                 "executor", diag, &p->slot_payload, &p->slots);
    if (status != GC3_OK) {
        return status;
    }
    p->slot_stride = gc3_plan_slot_stride(p->proto, p->slot_payload);
    return GC3_OK;
}

/* This rank's thread blocks: their tables, and the sends and receives of each, which need a partner. */
static gc3_status_t gc3_prep_blocks(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_plan_t *p, gc3_diag_t *diag)
{
    const int R = exec->params.nranks, rank = exec->params.rank;

    /* (the counters' bases and the contexts: for the most blocks any binding of a relabelled plan has) */
    p->tb_nsteps     = calloc((size_t)p->ntbs + 1, sizeof(int32_t));
    p->sem_base      = calloc((size_t)p->ntbs_max + 1, sizeof(uint64_t));
    p->loops_base    = calloc((size_t)p->ntbs_max + 1, sizeof(uint64_t));
    p->send_base     = calloc((size_t)p->ntbs_max + 1, sizeof(uint64_t));
    p->recv_base     = calloc((size_t)p->ntbs_max + 1, sizeof(uint64_t));
    p->nsend         = calloc((size_t)p->ntbs + 1, sizeof(int));
    p->nrecv         = calloc((size_t)p->ntbs + 1, sizeof(int));
    p->send_conn     = calloc((size_t)p->ntbs + 1, sizeof(int));
    p->recv_conn     = calloc((size_t)p->ntbs + 1, sizeof(int));
    p->tbs_ctx       = calloc((size_t)p->ntbs_max + 1, sizeof(gc3_rt_tb_t));
    p->peer_region   = calloc((size_t)R, sizeof(char *));
    p->peer_bytes    = calloc((size_t)R, sizeof(size_t));
    p->send_slot_off = malloc(((size_t)p->ntbs + 1) * sizeof(int64_t));
    p->recv_slot_off = malloc(((size_t)p->ntbs + 1) * sizeof(int64_t));
    p->pool          = p->pooled ? calloc(2 * (size_t)R, sizeof(gc3_rt_pool_t *)) : NULL; /* (2nd half: moves) */
    if (p->tb_nsteps == NULL || p->sem_base == NULL || p->loops_base == NULL || p->send_base == NULL ||
        p->recv_base == NULL || p->nsend == NULL || p->nrecv == NULL || p->tbs_ctx == NULL || p->peer_region == NULL ||
        p->peer_bytes == NULL || p->send_slot_off == NULL || p->recv_slot_off == NULL || p->send_conn == NULL ||
        p->recv_conn == NULL || (p->pooled && p->pool == NULL)) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int t = 0; t < p->ntbs; t++) {
        p->tb_nsteps[t]     = p->tbs[t].nsteps;
        p->send_slot_off[t] = p->recv_slot_off[t] = -1;
        gc3_plan_tb_messages(p->flat, &p->tbs[t], &p->nsend[t], &p->nrecv[t]);
        if ((p->nsend[t] && gc3_flat_peer_receiver(p->flat, rank, t) < 0) ||
            (p->nrecv[t] && gc3_flat_peer_sender(p->flat, rank, t) < 0)) {
            gc3_diag_add(diag,
                         "executor: rank %d tb %d of '%s' has no partner block on the other end of its "
                         "connection (run the verifier)",
                         rank, t, program->name);
            return GC3_ERR_VERIFY;
        }
    }
    return GC3_OK;
}

/* The layout of every rank this one talks to (its own is computed already). */
static gc3_status_t gc3_prep_peer_layouts(gc3_exec_t *exec, gc3_plan_t *p, gc3_rt_layout_t *layouts)
{
    gc3_status_t status = GC3_OK;

    if (p->nshift > 1) { /* relabelled: every rank it has a connection with under some shift, their union layouts */
        for (int k = 0; k < 2; k++) {
            const gc3_rt_uconn_t *u = k ? p->layout.sconn : p->layout.rconn;
            for (int i = 0; i < (k ? p->layout.nsconn : p->layout.nrconn) && status == GC3_OK; i++) {
                if (layouts[u[i].peer].sem_off == NULL) {
                    status = gc3_rt_layout_union(p->flat, u[i].peer, p->slots, p->slot_stride, p->pooled,
                                                 &layouts[u[i].peer]);
                }
            }
        }
        return status;
    }

    for (int t = 0; t < p->ntbs && status == GC3_OK; t++) {
        int peers[2] = { p->tbs[t].send, p->tbs[t].recv };
        for (int k = 0; k < 2 && status == GC3_OK; k++) {
            if (peers[k] >= 0 && layouts[peers[k]].sem_off == NULL) {
                status = gc3_rt_layout_compute(p->flat, peers[k], p->slots, p->slot_stride, exec->node,
                                               exec->params.net_direct, p->pooled, &layouts[peers[k]]);
            }
        }
    }
    return status;
}

/* Zero-copy, once gc3_plan_zc_marks marked every rank's sends (this plan runs only this rank's; the
 * others' tell whether every message of a call can be left in place: zero-copy mode): this rank's count. */
static void gc3_zc_prep(gc3_plan_t *p)
{
    int full[2];

    gc3_plan_zc_count(p->flat, p->rank, &p->zc_stats);
    /* zero-copy mode (decided at the second exchange, when the ranks know each other's boards) */
    gc3_zc_full(p->flat, full);
    for (int k = 0; k < 2; k++) {
        p->zc_agree[k] = full[k] && p->id < GC3_REG_AGREE_PLANS;
    }
}

/* This rank's part before any exchange: the flat program, its layout and region. */
static gc3_status_t gc3_prep_local(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_plan_t *p,
                                   gc3_rt_layout_t *layouts, gc3_diag_t *diag)
{
    const gc3_flat_rank_t *me;
    gc3_status_t           status;
    int                    rank = exec->params.rank;

    status = gc3_flat_create(program, &p->flat);
    if (status != GC3_OK) {
        gc3_diag_add(diag, "executor: program '%s' is malformed (run the verifier)", program->name);
        return status;
    }
    p->nshift = gc3_plan_relabels(&exec->params, p->flat) ? p->nranks : 1;
    p->prank  = rank;
    for (int r = 0; exec->params.fuse && r < p->nranks; r++) { /* (a relabelled plan runs every rank's blocks) */
        if (r == rank) {
            p->fused_runs = gc3_flat_fuse(p->flat, r, GC3_RT_FUSE_MAX);
        } else if (p->nshift > 1) {
            (void)gc3_flat_fuse(p->flat, r, GC3_RT_FUSE_MAX);
        }
    }
    me          = &gc3_flat_ranks(p->flat)[rank];
    p->ntbs     = me->ntbs;
    p->ntbs_max = me->ntbs;
    for (int r = 0; p->nshift > 1 && r < p->nranks; r++) {
        p->ntbs_max = gc3_flat_ranks(p->flat)[r].ntbs > p->ntbs_max ? gc3_flat_ranks(p->flat)[r].ntbs : p->ntbs_max;
    }
    p->tbs   = &gc3_flat_tbs(p->flat)[me->tb_begin];
    p->proto = gc3_proto_runs_as(program->proto); /* LL128: Simple */
    for (int r = 0; r < p->flat->nranks; r++) {
        p->uses_scratch |= gc3_flat_ranks(p->flat)[r].s_chunks > 0;
    }
    if (gc3_plan_zc_marks(&exec->params, program, p->flat)) {
        gc3_zc_prep(p);
    }
    p->zc_pull = program->zc_pull;
    p->pooled = gc3_plan_takes_pool(&exec->params, p->proto, p->flat, exec->node);
    status    = gc3_prep_geometry(exec, program, p, diag);
    if (status != GC3_OK) {
        return status;
    }
    status = gc3_prep_blocks(exec, program, p, diag);
    if (status != GC3_OK) {
        return status;
    }
    if (p->nshift > 1) {
        status = gc3_rt_layout_union(p->flat, rank, p->slots, p->slot_stride, p->pooled, &p->layout);
        if (status == GC3_ERR_VERIFY) {
            gc3_diag_add(diag,
                         "executor: program '%s' has a rank with two blocks on one connection (the same peer and "
                         "channel): its plan cannot serve every root (set coll_gc3_relabel 0)",
                         program->name);
        }
        if (status == GC3_OK && ((p->sconn_base = calloc((size_t)p->layout.nsconn + 1, 8)) == NULL ||
                                 (p->rconn_base = calloc((size_t)p->layout.nrconn + 1, 8)) == NULL)) {
            status = GC3_ERR_NO_MEMORY;
        }
    } else {
        status = gc3_rt_layout_compute(p->flat, rank, p->slots, p->slot_stride, exec->node, exec->params.net_direct,
                                       p->pooled, &p->layout);
    }
    if (status != GC3_OK) {
        return status;
    }
    gc3_plan_mem_layout(&p->mem, &p->layout, p->ntbs, p->slots, p->slot_payload, p->slot_stride);
    p->sem_off       = p->layout.sem_off;
    p->loops_off     = p->layout.loops_off;
    p->crosses_nodes = gc3_flat_crosses_nodes(p->flat, exec->node);
    p->transport     = p->crosses_nodes ? gc3_rt_net_choose(&exec->params) : NULL;
    if (p->crosses_nodes && p->transport == NULL) {
        gc3_diag_add(diag,
                     "executor: program '%s' connects ranks on different nodes, and this library was built "
                     "without UCX (the inter-node transport)",
                     program->name);
        return GC3_ERR_UNSUPPORTED;
    }
    status = gc3_prep_peer_layouts(exec, p, layouts);
    if (status != GC3_OK) {
        return status;
    }
    status = exec->be->region_create(p, p->layout.bytes, &p->region, p->handle, diag);
    if (status == GC3_OK) {
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, (int64_t)p->layout.bytes);
        gc3_rt_held_add(GC3_RT_HELD_REGIONS, 1);
    }
    return status;
}

/* With params.fifo_pool: room for the peers' new pools, and this rank's new pool when the plan needs
 * more than the current one has. */
static gc3_status_t gc3_prep_pool(gc3_prep_t *x, gc3_diag_t *diag)
{
    gc3_plan_t *p = x->p;
    gc3_exec_t *e = p->exec;

    if (e->pool == NULL) {
        return GC3_OK;
    }
    if ((x->pool_peer = calloc((size_t)p->nranks, sizeof(*x->pool_peer))) == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    if (!p->pooled || p->layout.pool_bytes <= gc3_exec_pool_bytes(e)) {
        return GC3_OK;
    }
    return gc3_pool_new(p, 1, NULL, p->layout.pool_bytes, e->pool[p->rank] != NULL ? e->pool[p->rank]->gen + 1 : 1,
                        &x->pool_new, diag);
}

/* The peers' pools this rank maps anew (their cards of the first exchange): every new pool of a peer on
 * the node. Those of a peer this plan or another pooled plan of the executor sends to (they move
 * there) must map; the others are mapped too when they can be, because a later plan may send to that
 * peer and the pool's name may not outlive this preparation (the host backend unlinks it at its end,
 * so that a crash leaves no segment behind). One that cannot be mapped (GPUs without peer access) is
 * left to the plan that needs it, which fails then as it would have. */
static gc3_status_t gc3_prep_map_pools(gc3_prep_t *x, gc3_diag_t *diag)
{
    gc3_plan_t  *p      = x->p;
    gc3_exec_t  *e      = p->exec;
    gc3_status_t status = GC3_OK;

    for (int q = 0; q < p->nranks && status == GC3_OK && e->pool != NULL; q++) {
        const gc3_prep_card_t *c = gc3_prep_card(x, q);
        if (q == p->rank || gc3_plan_remote(p, q) || c->pool_gen == 0 ||
            (e->pool[q] != NULL && e->pool[q]->gen == c->pool_gen)) {
            continue;
        }
        const int          must = gc3_plan_pool_uses(p, q) || gc3_exec_pool_used(e, q);
        const gc3_status_t st = gc3_pool_new(p, 0, c->pool_handle, (size_t)c->pool_bytes, c->pool_gen, &x->pool_peer[q],
                                             must ? diag : NULL);
        status                = must ? st : GC3_OK;
    }
    return status;
}

/* Every rank mapped what it needs: the pools this preparation made and mapped become the executor's
 * (the old ones lose its reference), and its pooled plans not in flight move to them. */
static void gc3_prep_pool_install(gc3_prep_t *x)
{
    gc3_exec_t    *e = x->p->exec;
    gc3_rt_pool_t *old;
    int            changed = 0;

    pthread_mutex_lock(&e->pool_lock);
    for (int q = 0; q < x->p->nranks && e->pool != NULL; q++) {
        gc3_rt_pool_t *n = q == x->p->rank ? x->pool_new : x->pool_peer[q];
        if (n != NULL) {
            old        = e->pool[q];
            e->pool[q] = n;
            gc3_pool_unref(e, x->p, old);
            changed = 1;
        }
        x->pool_peer[q] = NULL;
    }
    x->pool_new = NULL;
    if (changed) {
        e->pool_epoch++;
        gc3_exec_pool_move_all(e);
    }
    pthread_mutex_unlock(&e->pool_lock);
}

/* A test of gc3_prep_retry where no library holds stale mappings (any backend; CI runs it on the host
 * backend): with GC3_TEST_REFUSE_MAP=R:N in the environment, rank R of every executor refuses its first
 * N opens of a peer's region (of this process, counted across executors and threads) as already
 * mapped. */
static pthread_once_t gc3_refuse_once = PTHREAD_ONCE_INIT;
static int            gc3_refuse_left, gc3_refuse_rank = -1;

static void gc3_prep_refuse_read(void)
{
    const char *v = getenv("GC3_TEST_REFUSE_MAP");
    if (v == NULL || sscanf(v, "%d:%d", &gc3_refuse_rank, &gc3_refuse_left) != 2) {
        gc3_refuse_rank = -1;
        gc3_refuse_left = 0;
    }
}

static int gc3_prep_refuse_test(const gc3_plan_t *p, int q, gc3_diag_t *diag)
{
    int n;

    (void)pthread_once(&gc3_refuse_once, gc3_prep_refuse_read);
    if (p->rank != gc3_refuse_rank) {
        return 0;
    }
    do { /* one refusal of the N, whichever thread takes it */
        n = __atomic_load_n(&gc3_refuse_left, __ATOMIC_RELAXED);
        if (n <= 0) {
            return 0;
        }
    } while (!__atomic_compare_exchange_n(&gc3_refuse_left, &n, n - 1, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
    gc3_diag_add(diag, "executor: rank %d's region refused as already mapped (GC3_TEST_REFUSE_MAP)", q);
    fprintf(stderr, "gc3: GC3_TEST_REFUSE_MAP: rank %d refuses rank %d's region as already mapped\n", p->rank, q);
    return 1;
}

/* The peers of this node this rank talks to: their regions mapped. */
static gc3_status_t gc3_prep_map(gc3_prep_t *x, gc3_diag_t *diag)
{
    gc3_plan_t  *p      = x->p;
    gc3_status_t status = GC3_OK;

    p->peer_region[p->rank] = p->region;
    p->peer_bytes[p->rank]  = p->layout.bytes;
    if (p->exec->reg != NULL) {
        const char **names = calloc((size_t)p->nranks, sizeof(char *));
        for (int q = 0; names != NULL && q < p->nranks; q++) {
            const gc3_prep_card_t *c = gc3_prep_card(x, q);
            names[q]                 = memchr(c->reg_board, '\0', sizeof(c->reg_board)) != NULL ? c->reg_board : NULL;
        }
        if (names != NULL) {
            gc3_reg_connect(p->exec, names);
        }
        free(names);
    }
    for (int q = 0; q < p->nranks && status == GC3_OK; q++) {
        const gc3_prep_card_t *c = gc3_prep_card(x, q);
        if (q != p->rank && x->layouts[q].sem_off != NULL && !gc3_plan_remote(p, q)) {
            p->peer_bytes[q] = x->layouts[q].bytes;
            status           = gc3_prep_refuse_test(p, q, diag)
                                   ? GC3_ERR_IN_USE
                                   : p->exec->be->region_open(p, c->handle, p->peer_bytes[q], &p->peer_region[q], diag);
            if (status == GC3_OK) {
                p->mem.mapped += p->peer_bytes[q];
                gc3_rt_held_add(GC3_RT_HELD_MAPPED, (int64_t)p->peer_bytes[q]);
                gc3_rt_held_add(GC3_RT_HELD_MAPPINGS, 1);
            }
        }
    }
    status     = status == GC3_OK ? gc3_prep_map_pools(x, diag) : status;
    x->refused = status == GC3_ERR_IN_USE;
    return status;
}

static gc3_status_t gc3_prep_post_card(gc3_prep_t *x, const char *what, int with_handle, gc3_diag_t *diag);

/* Unmap what gc3_prep_map mapped of the peers (their memory is made anew). */
static void gc3_prep_unmap(gc3_prep_t *x)
{
    gc3_plan_t *p = x->p;
    for (int q = 0; q < p->nranks; q++) {
        if (q != p->rank && p->peer_region[q] != NULL) {
            p->exec->be->region_close(p, p->peer_region[q], p->peer_bytes[q], 0);
            p->mem.mapped -= p->peer_bytes[q];
            gc3_rt_held_add(GC3_RT_HELD_MAPPED, -(int64_t)p->peer_bytes[q]);
            gc3_rt_held_add(GC3_RT_HELD_MAPPINGS, -1);
        }
        p->peer_region[q] = NULL;
        if (x->pool_peer != NULL) {
            gc3_pool_unref(p->exec, p, x->pool_peer[q]);
            x->pool_peer[q] = NULL;
        }
    }
}

/* Every rank mapped what it could and some peer's memory was refused as already mapped, nothing else
 * failed (the same on every rank: they all read the same cards): each rank allocates its region (and
 * its new pool) again while holding the old ones, in an allocation of its own from now on (the
 * backend's region_dedicate), so the new ones land at other places, and the handles are exchanged
 * again. */
static gc3_status_t gc3_prep_retry(gc3_prep_t *x, gc3_diag_t *diag)
{
    gc3_plan_t  *p = x->p;
    gc3_status_t status;

    gc3_prep_unmap(x);
    if (p->exec->be->region_dedicate != NULL && getenv("GC3_TEST_NO_DEDICATE") == NULL) {
        /* (GC3_TEST_NO_DEDICATE: the retries as before it, to show on a GPU what it is for) */
        p->exec->be->region_dedicate(); /* (the process's regions from now on, this one first) */
    }
    x->old_region[x->retries] = p->region;
    p->region                 = NULL;
    status                    = p->exec->be->region_create(p, p->layout.bytes, &p->region, p->handle, diag);
    if (status == GC3_OK) {
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, (int64_t)p->layout.bytes);
        gc3_rt_held_add(GC3_RT_HELD_REGIONS, 1);
    }
    if (status == GC3_OK && x->pool_new != NULL) {
        gc3_rt_pool_t *old      = x->pool_new;
        x->old_pool[x->retries] = old;
        x->pool_new             = NULL;
        status                  = gc3_pool_new(p, 1, NULL, old->bytes, old->gen, &x->pool_new, diag);
    }
    x->retries++;
    x->refused        = 0;
    x->refused_why[0] = '\0';
    x->unlinked = 0;
    x->ok       = status == GC3_OK;
    x->phase    = GC3_PREP_HANDLES;
    return gc3_prep_post_card(x, "the exchange of connection handles (memory allocated again)", 1, diag);
}

/* The region the inter-node slots' offsets are in (gc3_rt_layout_t) */
static char *gc3_plan_net_slots(const gc3_plan_t *p)
{
    return p->layout.net_direct ? p->net_slots : p->net;
}

/* A pooled plan's slots in the executor's pools: each one it uses is there and holds what the plan's
 * layout of its owner needs (the ranks made and mapped them alike), then the connections point there. */
static gc3_status_t gc3_prep_connect_pools(gc3_plan_t *p, const gc3_rt_layout_t *layouts, gc3_diag_t *diag)
{
    for (int q = 0; q < p->nranks; q++) {
        const gc3_rt_pool_t *pool = p->exec->pool[q];
        const size_t         need = q == p->rank ? p->layout.pool_bytes : layouts[q].pool_bytes;
        if (gc3_plan_pool_uses(p, q) && (pool == NULL || pool->bytes < need)) {
            gc3_diag_add(diag, "executor: rank %d: the FIFO pool of rank %d has %zu bytes, the plan needs %zu there",
                         p->rank, q, pool != NULL ? pool->bytes : 0, need);
            return GC3_ERR_INVALID_PARAM;
        }
    }
    gc3_plan_pool_move(p);
    return GC3_OK;
}

/* Where each block's connections are (every rank mapped what it needs). */
static gc3_status_t gc3_prep_connect(gc3_prep_t *x, gc3_diag_t *diag)
{
    gc3_plan_t            *p       = x->p;
    gc3_exec_t            *exec    = p->exec;
    const gc3_rt_layout_t *layouts = x->layouts;
    gc3_status_t           status  = GC3_OK;
    int                    rank    = p->rank;

    if (p->crosses_nodes && p->layout.net_bytes > 0) {
        status = exec->be->host_alloc(p, p->layout.net_bytes, &p->net);
        if (status != GC3_OK) {
            gc3_diag_add(diag, "executor: cannot allocate %zu bytes of host memory for the inter-node connections",
                         p->layout.net_bytes);
            return status;
        }
        p->mem.pinned += p->layout.net_bytes;
        gc3_rt_held_add(GC3_RT_HELD_PINNED, (int64_t)p->layout.net_bytes);
    }
    if (p->crosses_nodes && p->layout.net_slot_bytes > 0) {
        /* direct: the slots in the backend's memory (cuda: the GPU's), where the proxy moves them from and to */
        status = exec->be->mem_alloc(p, p->layout.net_slot_bytes, &p->net_slots);
        if (status != GC3_OK) {
            gc3_diag_add(diag, "executor: cannot allocate %zu bytes of %s memory for the inter-node slots",
                         p->layout.net_slot_bytes, exec->be->name);
            return status;
        }
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, (int64_t)p->layout.net_slot_bytes);
    }
    p->conn = calloc((size_t)p->ntbs + 1, sizeof(gc3_rt_conn_t));
    if (p->conn == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    if (p->nshift > 1) { /* relabelled (one node): by connection, in the union layouts */
        p->ulayouts = x->layouts;
        x->layouts  = NULL; /* (the plan's now: the bindings of other shifts need them) */
        status      = gc3_plan_bind_connect(p, diag);
        return status == GC3_OK && p->pooled ? gc3_prep_connect_pools(p, p->ulayouts, diag) : status;
    }
    for (int t = 0; t < p->ntbs; t++) {
        const gc3_flat_tb_t *tb = &p->tbs[t];
        gc3_rt_conn_t       *c  = &p->conn[t];
        if (p->nsend[t]) {
            int u = gc3_flat_peer_receiver(p->flat, rank, t);
            if (gc3_plan_remote(p, tb->send)) {
                char *b       = p->net + p->layout.net_send_off[t];
                c->send_tail  = (uint64_t *)b;
                c->send_lens  = (uint64_t *)(b + GC3_RT_NET_LENS_OFF);
                c->send_slots = gc3_plan_net_slots(p) + p->layout.net_send_slots[t];
                c->send_head  = (uint64_t *)(b + GC3_RT_NET_HEAD_OFF(&p->layout));
            } else {
                c->send_tail = (uint64_t *)(p->peer_region[tb->send] + layouts[tb->send].fifo_off[u]);
                c->send_head = (uint64_t *)(p->region + p->layout.head_off[t]);
                if (p->pooled) {
                    p->send_slot_off[t] = layouts[tb->send].slot_off[u]; /* (gc3_plan_pool_move) */
                } else {
                    c->send_slots = p->peer_region[tb->send] + layouts[tb->send].slot_off[u];
                }
            }
        }
        if (p->nrecv[t]) {
            int u = gc3_flat_peer_sender(p->flat, rank, t);
            if (gc3_plan_remote(p, tb->recv)) {
                char *b        = p->net + p->layout.net_recv_off[t];
                c->recv_tail   = (uint64_t *)b;
                c->recv_slots  = gc3_plan_net_slots(p) + p->layout.net_recv_slots[t];
                c->recv_head   = (uint64_t *)(b + GC3_RT_NET_HEAD_OFF(&p->layout));
                c->recv_remote = 1;
            } else {
                c->recv_tail = (uint64_t *)(p->region + p->layout.fifo_off[t]);
                c->recv_head = (uint64_t *)(p->peer_region[tb->recv] + layouts[tb->recv].head_off[u]);
                if (p->pooled) {
                    p->recv_slot_off[t] = p->layout.slot_off[t];
                } else {
                    c->recv_slots = p->region + p->layout.slot_off[t];
                }
            }
        }
    }
    return status == GC3_OK && p->pooled ? gc3_prep_connect_pools(p, layouts, diag) : status;
}

/* This rank's card of the phase, and the exchange posted (a failure to post ends the preparation). */
static gc3_status_t gc3_prep_post_card(gc3_prep_t *x, const char *what, int with_handle, gc3_diag_t *diag)
{
    gc3_prep_card_t *mine;
    gc3_status_t     status = gc3_rt_xchg_alloc(&x->x, with_handle ? sizeof(*mine) : 8, x->p->nranks, what);
    if (status != GC3_OK) {
        return status;
    }
    mine      = (gc3_prep_card_t *)x->x.send;
    mine->ok  = x->ok ? GC3_PREP_READY : x->refused ? GC3_PREP_REFUSED : GC3_PREP_NOT_READY;
    mine->pad = !with_handle && gc3_reg_connected(x->p->exec->reg); /* (the second exchange: zero-copy mode) */
    if (with_handle) {
        const gc3_exec_t    *e    = x->p->exec;
        const gc3_rt_pool_t *pool = x->pool_new != NULL ? x->pool_new : e->pool != NULL ? e->pool[x->p->rank] : NULL;
        memcpy(mine->handle, x->p->handle, GC3_RT_HANDLE_BYTES);
        snprintf(mine->reg_board, sizeof(mine->reg_board), "%s", gc3_reg_board_name(e->reg));
        mine->slot_payload = x->p->slot_payload;
        mine->slots        = x->p->slots;
        if (pool != NULL) {
            mine->pool_gen   = pool->gen;
            mine->pool_bytes = pool->bytes;
            memcpy(mine->pool_handle, pool->handle, GC3_RT_HANDLE_BYTES);
        }
    }
    return gc3_rt_xchg_post(x->p->exec, &x->x, diag);
}

/* The first rank that said it is not ready in the exchange just done (-1: all are). */
static int gc3_prep_not_ready(const gc3_prep_t *x)
{
    for (int q = 0; q < x->p->nranks; q++) {
        if (gc3_prep_card(x, q)->ok != GC3_PREP_READY) {
            return q;
        }
    }
    return -1;
}

/* Whether every rank's FIFOs (the first exchange's cards) have this rank's shape: each rank lays out its
 * peers' memory with its own (gc3_prep_layouts), so a rank that chose otherwise (parameters that differ
 * between ranks) would be read and written at the wrong places. Every rank reads the same cards: where
 * two differ, each rank finds one that differs from its own, and all fail. */
static gc3_status_t gc3_prep_same_shape(const gc3_prep_t *x, gc3_diag_t *diag)
{
    const gc3_plan_t *p = x->p;

    for (int q = 0; q < p->nranks; q++) {
        const gc3_prep_card_t *c = gc3_prep_card(x, q);
        if (c->slots != p->slots || c->slot_payload != p->slot_payload) {
            gc3_diag_add(diag,
                         "executor: rank %d's FIFOs are %d slots of %llu bytes, rank %d's %d of %llu: the ranks "
                         "disagree on the plan's shape (an executor parameter that differs between them)",
                         q, (int)c->slots, (unsigned long long)c->slot_payload, p->rank, p->slots,
                         (unsigned long long)p->slot_payload);
            return GC3_ERR_MISMATCH;
        }
    }
    return GC3_OK;
}

/* Whether every rank not ready said so only because a peer's memory was refused as already mapped */
static int gc3_prep_only_refused(const gc3_prep_t *x)
{
    for (int q = 0; q < x->p->nranks; q++) {
        if (gc3_prep_card(x, q)->ok == GC3_PREP_NOT_READY) {
            return 0;
        }
    }
    return 1;
}

/* The name of this rank's region goes (the peers that map it did, or never will). */
static void gc3_prep_unlink(gc3_prep_t *x)
{
    if (x->p->region != NULL && !x->unlinked) {
        x->p->exec->be->region_unlink(x->p, x->p->handle);
    }
    if (x->pool_new != NULL && !x->unlinked) {
        x->p->exec->be->region_unlink(x->p, x->pool_new->handle);
    }
    if (x->phase == GC3_PREP_MAPPED) {
        gc3_reg_unlink(x->p->exec->reg); /* every rank opened the boards it could (the first exchange) */
    }
    x->unlinked = 1;
}

static void gc3_prep_free(gc3_prep_t *x, int keep_plan)
{
    gc3_prep_unlink(x);
    if (x->layouts != NULL) {
        for (int q = 0; q < x->p->nranks; q++) {
            gc3_rt_layout_free(&x->layouts[q]);
        }
        free(x->layouts);
    }
    gc3_rt_xchg_release(&x->x);
    /* pools made or mapped for a preparation that failed before they became the executor's */
    gc3_pool_unref(x->p->exec, x->p, x->pool_new);
    for (int q = 0; x->pool_peer != NULL && q < x->p->nranks; q++) {
        gc3_pool_unref(x->p->exec, x->p, x->pool_peer[q]);
    }
    free(x->pool_peer);
    for (int i = 0; i < x->retries; i++) {
        if (x->old_region[i] != NULL) {
            x->p->exec->be->region_close(x->p, x->old_region[i], x->p->layout.bytes, 1);
            gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)x->p->layout.bytes);
            gc3_rt_held_add(GC3_RT_HELD_REGIONS, -1);
        }
        gc3_pool_unref(x->p->exec, x->p, x->old_pool[i]);
    }
    if (!keep_plan) {
        gc3_plan_destroy(x->p);
    }
    free(x);
}

gc3_status_t gc3_exec_prepare_post(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag,
                                   gc3_prep_t **prep_p)
{
    gc3_prep_t  *x;
    gc3_status_t status;
    int          R = exec->params.nranks;

    *prep_p = NULL;
    if (program->ngpus != R) {
        /* the same on every rank (they pass the same program): nobody posts */
        gc3_diag_add(diag, "executor: program '%s' is for %d ranks, the executor has %d", program->name, program->ngpus,
                     R);
        return GC3_ERR_INVALID_PARAM;
    }
    x = calloc(1, sizeof(*x));
    if (x == NULL || (x->p = calloc(1, sizeof(*x->p))) == NULL ||
        (x->layouts = calloc((size_t)R, sizeof(*x->layouts))) == NULL) {
        if (x != NULL) {
            free(x->p);
        }
        free(x);
        return GC3_ERR_NO_MEMORY; /* the others time out in the exchange */
    }
    if (exec->params.zero_copy && !exec->reg_tried) {
        gc3_diag_t rd;
        exec->reg_tried = 1;
        gc3_diag_init(&rd);
        if (gc3_reg_create(exec, &rd, &exec->reg) != GC3_OK || exec->reg == NULL) {
            snprintf(exec->reg_why, sizeof(exec->reg_why), "%s",
                     rd.count ? rd.msgs[0] : "the backend cannot share callers' buffers");
        }
        gc3_diag_cleanup(&rd);
    }
    x->p->exec   = exec;
    x->p->rank   = exec->params.rank;
    x->p->nranks = R;
    x->p->id     = ++exec->next_id;
    /* whatever fails here, this rank still says so in the exchange: every rank fails alike */
    x->ok  = gc3_prep_local(exec, program, x->p, x->layouts, diag) == GC3_OK && gc3_prep_pool(x, diag) == GC3_OK;
    status = gc3_prep_post_card(x, "the exchange of connection handles", 1, diag);
    if (status != GC3_OK) {
        gc3_prep_free(x, 0);
        return status;
    }
    x->phase = GC3_PREP_HANDLES;
    *prep_p  = x;
    return GC3_OK;
}

gc3_status_t gc3_exec_prepare_test(gc3_prep_t *x, gc3_diag_t *diag, gc3_plan_t **plan_p)
{
    gc3_plan_t  *p = x->p;
    gc3_status_t status;
    int          q;

    *plan_p = NULL;
    if (x->phase == GC3_PREP_NET) {
        status = p->transport->setup_test(x->net, x->layouts, diag);
        if (status == GC3_IN_PROGRESS) {
            return status;
        }
        x->net = NULL;
        goto done;
    }
    status = gc3_rt_xchg_test(p->exec, &x->x, diag);
    if (status == GC3_IN_PROGRESS) {
        return status;
    }
    q = status == GC3_OK ? gc3_prep_not_ready(x) : -1;
    if (x->phase == GC3_PREP_MAPPED) {
        gc3_prep_unlink(x); /* everybody mapped what they need (or failed): the names can go */
    }
    if (status == GC3_OK && q >= 0 && x->phase == GC3_PREP_MAPPED && gc3_prep_only_refused(x) &&
        x->retries < GC3_PREP_RETRIES) {
        gc3_rt_xchg_release(&x->x);
        status = gc3_prep_retry(x, diag);
        if (status != GC3_OK) {
            goto done;
        }
        return GC3_IN_PROGRESS;
    }
    if (status == GC3_OK && q >= 0 && x->phase == GC3_PREP_MAPPED && gc3_prep_only_refused(x)) {
        gc3_diag_add(diag,
                     "executor: rank %d could not map a peer's memory, allocated anew %d times: another library "
                     "of that process still maps memory freed at those places (CUDA IPC's \"already mapped\"; in "
                     "a CUDA-aware Open MPI 4.1 its smcuda cache, which --mca btl_smcuda_use_cuda_ipc 0 turns "
                     "off)%s%s",
                     q, x->retries, x->refused_why[0] ? ": " : "", x->refused_why);
        status = GC3_ERR_IN_USE;
        goto done;
    }
    if (status == GC3_OK && q >= 0) {
        if (x->refused && x->refused_why[0]) {
            gc3_diag_add(diag, "%s", x->refused_why); /* (kept aside for a retry that does not come) */
        }
        if (q != p->rank) { /* this rank's own reason is in diag already */
            gc3_diag_add(diag, "executor: rank %d could not %s (its own output says why)", q,
                         x->phase == GC3_PREP_HANDLES ? "prepare its part of the plan" : "map its peers' memory");
        }
        status = GC3_ERR_IO;
    }
    if (status != GC3_OK) {
        goto done;
    }
    if (x->phase == GC3_PREP_HANDLES) {
        /* with the handles just exchanged (and the shapes, which must agree before anything is mapped); a
         * refusal as already mapped is kept aside: the others may allocate anew (gc3_prep_retry), after
         * which it is no failure */
        gc3_diag_t md;
        if ((status = gc3_prep_same_shape(x, diag)) != GC3_OK) {
            goto done;
        }
        gc3_diag_init(&md);
        x->ok = gc3_prep_map(x, &md) == GC3_OK;
        if (x->refused) {
            snprintf(x->refused_why, sizeof(x->refused_why), "%s", md.count ? md.msgs[0] : "already mapped");
        } else {
            for (int i = 0; i < md.count; i++) {
                gc3_diag_add(diag, "%s", md.msgs[i]);
            }
        }
        gc3_diag_cleanup(&md);
        gc3_rt_xchg_release(&x->x);
        status = gc3_prep_post_card(x, "the other ranks' mapping of the connections", 0, diag);
        if (status != GC3_OK) {
            goto done;
        }
        x->phase = GC3_PREP_MAPPED;
        return GC3_IN_PROGRESS;
    }
    /* GC3_PREP_MAPPED: zero-copy mode only where every rank has every board of the node */
    for (int r = 0; r < p->nranks; r++) {
        if (!gc3_prep_card(x, r)->pad || p->crosses_nodes) {
            p->zc_agree[0] = p->zc_agree[1] = 0;
        }
    }
    gc3_rt_xchg_release(&x->x);
    gc3_prep_pool_install(x);
    status = gc3_prep_connect(x, diag);
    if (p->crosses_nodes) {
        /* collective: every rank takes part, whatever happened here (it then fails with the others) */
        gc3_status_t ns = p->transport->setup_post(p, status == GC3_OK, diag, &x->net);
        status          = status == GC3_OK ? ns : status;
        if (x->net != NULL) {
            x->phase = GC3_PREP_NET;
            return GC3_IN_PROGRESS;
        }
    }
done:
    if (status == GC3_OK && p->nshift > 1) { /* the binding of the program's own root, kept as the others will be */
        if ((p->binds = calloc((size_t)p->nshift, sizeof(*p->binds))) == NULL ||
            (p->binds[0] = calloc(1, sizeof(**p->binds))) == NULL) {
            status = GC3_ERR_NO_MEMORY;
        } else {
            gc3_plan_bind_save(p, p->binds[0]);
        }
    }
    if (status == GC3_OK) {
        gc3_plan_ctx_init(p);
        p->exec->nplans++;
        if (p->pooled) {
            p->pool_next   = p->exec->plans;
            p->exec->plans = p;
        }
        *plan_p = p;
    }
    gc3_prep_free(x, status == GC3_OK);
    return status;
}

const char *gc3_exec_prepare_waiting(const gc3_prep_t *x)
{
    return x->phase == GC3_PREP_NET ? x->p->transport->setup_waiting(x->net) : x->x.what;
}

void gc3_exec_prepare_abandon(gc3_prep_t *x)
{
    if (x == NULL) {
        return;
    }
    if (x->net != NULL) {
        x->p->transport->setup_abandon(x->net);
    }
    gc3_prep_free(x, 0); /* the pending exchange keeps its buffers */
}

gc3_status_t gc3_exec_prepare(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag, gc3_plan_t **plan_p)
{
    gc3_prep_t     *x;
    gc3_status_t    status  = gc3_exec_prepare_post(exec, program, diag, &x);
    double          timeout = exec->params.timeout_s;
    struct timespec t0, t, ts = { 0, 20000 };
    const char     *what = NULL;

    *plan_p = NULL;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (status == GC3_OK || status == GC3_IN_PROGRESS) {
        if (what != gc3_exec_prepare_waiting(x)) { /* a new exchange: its own time */
            what = gc3_exec_prepare_waiting(x);
            clock_gettime(CLOCK_MONOTONIC, &t0);
        }
        status = gc3_exec_prepare_test(x, diag, plan_p);
        if (status != GC3_IN_PROGRESS) {
            return status;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (timeout > 0 && (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > timeout) {
            gc3_diag_add(diag, "executor: rank %d: timeout after %.1f s waiting for %s", exec->params.rank, timeout,
                         gc3_exec_prepare_waiting(x));
            gc3_exec_prepare_abandon(x);
            return GC3_ERR_TIMEOUT;
        }
        nanosleep(&ts, NULL);
    }
    return status;
}
