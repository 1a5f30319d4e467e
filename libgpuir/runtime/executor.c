/* gc3 / libgpuir: the executor (see gc3_runtime.h). Backend-independent: plans, layouts,
 * connection pointers, per-call tiling and the monotonic counters' bases. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gc3_rt_backend.h"
#include "gc3_rt_net.h"

void gc3_exec_params_default(gc3_exec_params_t *p, gc3_backend_t backend, int rank, int nranks)
{
    memset(p, 0, sizeof(*p));
    p->backend           = backend;
    p->rank              = rank;
    p->nranks            = nranks;
    p->slots             = GC3_FIFO_SLOTS_DEFAULT;
    p->slot_bytes        = backend == GC3_BACKEND_CUDA ? (1u << 20) : (256u << 10);
    p->timeout_s         = 60.0;
    p->fifo_bytes        = 0;
    p->threads_per_block = 512;
    p->resident_us       = GC3_RESIDENT_US_DEFAULT;
    p->fuse              = 1;
    p->wait_legacy       = 1;
    p->net_peer_errors   = 1;
    p->reg_entries       = GC3_REG_ENTRIES_DEFAULT;
    p->tile_bytes        = GC3_TILE_BYTES_DEFAULT;
}

int gc3_exec_backend_available(gc3_backend_t backend)
{
#ifdef GC3_HAVE_CUDA
    return backend == GC3_BACKEND_HOST || backend == GC3_BACKEND_CUDA;
#else
    return backend == GC3_BACKEND_HOST;
#endif
}

gc3_status_t gc3_exec_create(const gc3_exec_params_t *params, gc3_diag_t *diag, gc3_exec_t **exec_p)
{
    gc3_exec_t     *e;
    struct timespec ts;

    *exec_p = NULL;
    if (params->nranks < 1 || params->rank < 0 || params->rank >= params->nranks || params->slots < 2 ||
        params->slots > 1024 || params->slot_bytes < 64 || params->slot_bytes > (1u << 30) ||
        params->oob.iallgather == NULL || params->oob.test == NULL) {
        gc3_diag_add(diag, "executor: invalid parameters (rank %d of %d, %d slots of %zu bytes, oob %s): slots must "
                     "be in [2, 1024], slot bytes in [64, 1 GiB]", params->rank, params->nranks, params->slots,
                     params->slot_bytes, params->oob.iallgather && params->oob.test ? "set" : "missing");
        return GC3_ERR_INVALID_PARAM;
    }
    if (!gc3_exec_backend_available(params->backend)) {
        gc3_diag_add(diag, "executor: the %s backend is not built into this library",
                     params->backend == GC3_BACKEND_CUDA ? "cuda" : "host");
        return GC3_ERR_UNSUPPORTED;
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    e->params = *params;
    e->params.node = NULL;
    if (params->fifo_pool && (e->pool = calloc((size_t)params->nranks, sizeof(*e->pool))) == NULL) {
        free(e);
        return GC3_ERR_NO_MEMORY;
    }
    pthread_mutex_init(&e->pool_lock, NULL);
    if (params->node != NULL) {
        e->node = malloc((size_t)params->nranks * sizeof(int));
        if (e->node == NULL) {
            free(e->pool);
            free(e);
            return GC3_ERR_NO_MEMORY;
        }
        memcpy(e->node, params->node, (size_t)params->nranks * sizeof(int));
        e->params.node = e->node;
    }
#ifdef GC3_HAVE_CUDA
    e->be = params->backend == GC3_BACKEND_CUDA ? &gc3_rt_backend_cuda : &gc3_rt_backend_host;
#else
    e->be = &gc3_rt_backend_host;
#endif
    clock_gettime(CLOCK_REALTIME, &ts);
    e->uid  = ((uint64_t)getpid() << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)(uintptr_t)e;
    *exec_p = e;
    return GC3_OK;
}

static void gc3_pool_unref(gc3_exec_t *e, gc3_plan_t *p, gc3_rt_pool_t *pool);

/* (its plans were destroyed before: the pools' last references are the executor's) */
void gc3_exec_destroy(gc3_exec_t *exec)
{
    if (exec != NULL) {
        gc3_reg_destroy(exec, exec->reg);
        for (int r = 0; exec->pool != NULL && r < exec->params.nranks; r++) {
            gc3_pool_unref(exec, NULL, exec->pool[r]);
        }
        free(exec->pool);
        free(exec->node);
        pthread_mutex_destroy(&exec->pool_lock);
    }
    free(exec);
}

int gc3_exec_max_blocks(const gc3_exec_t *exec)
{
    return exec->be->max_blocks(exec);
}

int gc3_exec_net_available(void)
{
    return gc3_rt_net_available();
}

static int gc3_flat_crosses_nodes(const gc3_flat_program_t *f, const int *node)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    if (node == NULL) {
        return 0;
    }
    for (int r = 0; r < f->nranks; r++) {
        for (int t = 0; t < ranks[r].ntbs; t++) {
            const gc3_flat_tb_t *b = &tbs[ranks[r].tb_begin + t];
            if ((b->send >= 0 && node[b->send] != node[r]) || (b->recv >= 0 && node[b->recv] != node[r])) {
                return 1;
            }
        }
    }
    return 0;
}

void gc3_plan_net_describe(const gc3_plan_t *p, char *buf, size_t len)
{
    if (len > 0) {
        buf[0] = '\0';
    }
    if (p != NULL && p->crosses_nodes) {
        gc3_rt_net_describe(p, buf, len);
    }
}

int gc3_plan_fused_runs(const gc3_plan_t *p)
{
    return p != NULL ? p->fused_runs : 0;
}

int gc3_plan_loops(const gc3_plan_t *p)
{
    return p != NULL ? p->call_L : 0;
}

int gc3_plan_zc_peers(const gc3_plan_t *p)
{
    return p != NULL ? p->zc_peers_last : 0;
}

int gc3_plan_zc_mode(const gc3_plan_t *p)
{
    return p != NULL && p->zc_big;
}

const char *gc3_plan_zc_why(const gc3_plan_t *p)
{
    return p != NULL ? p->zc_why : NULL;
}

void gc3_plan_zc_describe(const gc3_plan_t *p, char *buf, size_t len)
{
    const gc3_zc_stats_t *z = p != NULL ? &p->zc_stats : NULL;
    const int             n = z != NULL ? (z->oop > z->ip ? z->oop : z->ip) : 0;

    if (len == 0) {
        return;
    }
    buf[0] = '\0';
    if (p == NULL || !p->exec->params.zero_copy || p->proto == GC3_PROTO_LL || z->sends == 0) {
        return;
    }
    if (n == 0) {
        snprintf(buf, len, "zero-copy: none of this rank's %d sends can leave its data in place (it is in scratch, or "
                 "the program writes it again before the receiver would have read it)", z->sends);
    } else if (p->exec->reg == NULL) {
        snprintf(buf, len, "zero-copy: not used: %s", p->exec->reg_why[0] ? p->exec->reg_why : "this backend cannot share buffers");
    } else {
        char homed[64] = "";
        if (z->homed > 0) {
            snprintf(homed, sizeof(homed), "; %d reductions keep their result in the output", z->homed);
        }
        const char *mode = p->zc_agree[0] && p->zc_agree[1] ? ", zero-copy mode (large tiles) in and out of place"
                           : p->zc_agree[0]                  ? ", zero-copy mode (large tiles) out of place"
                           : p->zc_agree[1]                  ? ", zero-copy mode (large tiles) in place"
                                                             : "";
        snprintf(buf, len, "zero-copy: %d of this rank's %d sends may leave their data in place (out of place %d, in "
                 "place %d%s)%s%s%s", n, z->sends, z->oop, z->ip, homed, mode,
                 p->zc_why != NULL ? "; the last call did not: " : "", p->zc_why != NULL ? p->zc_why : "");
    }
}

static int gc3_plan_remote(const gc3_plan_t *p, int q)
{
    const int *node = p->exec->node;
    return node != NULL && q >= 0 && node[q] != node[p->rank];
}

/* chunks per segment of the input and output buffers */
static void gc3_plan_segments(const gc3_flat_program_t *f, int *k_in, int *k_out)
{
    const gc3_flat_rank_t *r0 = &gc3_flat_ranks(f)[0];
    *k_in  = r0->i_chunks / gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_INPUT, f->nranks);
    *k_out = r0->o_chunks / gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_OUTPUT, f->nranks);
}

/* ---------------------------------------------------------------- memory accounting */

static int64_t gc3_rt_held[GC3_RT_HELD_KINDS]; /* (atomic) */

void gc3_rt_held_add(int kind, int64_t delta)
{
    __atomic_add_fetch(&gc3_rt_held[kind], delta, __ATOMIC_RELAXED);
}

void gc3_rt_plan_mem(gc3_plan_t *p, int64_t control, int64_t pinned)
{
    p->mem.control = (uint64_t)((int64_t)p->mem.control + control);
    p->mem.pinned  = (uint64_t)((int64_t)p->mem.pinned + pinned);
    gc3_rt_held_add(GC3_RT_HELD_DEVICE, control);
    gc3_rt_held_add(GC3_RT_HELD_PINNED, pinned);
}

static uint64_t gc3_rt_deferred(int release)
{
    uint64_t d = gc3_rt_backend_host.deferred != NULL ? gc3_rt_backend_host.deferred(release) : 0;
#ifdef GC3_HAVE_CUDA
    d += gc3_rt_backend_cuda.deferred != NULL ? gc3_rt_backend_cuda.deferred(release) : 0;
#endif
    return d;
}

void gc3_mem_held(gc3_mem_held_t *h)
{
    h->device   = (uint64_t)__atomic_load_n(&gc3_rt_held[GC3_RT_HELD_DEVICE], __ATOMIC_RELAXED);
    h->pinned   = (uint64_t)__atomic_load_n(&gc3_rt_held[GC3_RT_HELD_PINNED], __ATOMIC_RELAXED);
    h->mapped   = (uint64_t)__atomic_load_n(&gc3_rt_held[GC3_RT_HELD_MAPPED], __ATOMIC_RELAXED);
    h->regions  = __atomic_load_n(&gc3_rt_held[GC3_RT_HELD_REGIONS], __ATOMIC_RELAXED);
    h->mappings = __atomic_load_n(&gc3_rt_held[GC3_RT_HELD_MAPPINGS], __ATOMIC_RELAXED);
    h->deferred = gc3_rt_deferred(0);
}

uint64_t gc3_mem_release_deferred(void)
{
    return gc3_rt_deferred(1);
}

void gc3_plan_memory(const gc3_plan_t *p, gc3_plan_mem_t *mem)
{
    *mem = p->mem;
}

uint64_t gc3_plan_mem_device(const gc3_plan_mem_t *m)
{
    return m->fifo + m->flags + m->scratch + m->stage + m->control;
}

/* ---------------------------------------------------------------- the FIFO pool (params.fifo_pool)
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

static void gc3_pool_unref(gc3_exec_t *e, gc3_plan_t *p, gc3_rt_pool_t *pool)
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
static gc3_status_t gc3_pool_new(gc3_plan_t *p, int own, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes,
                                 uint64_t gen, gc3_rt_pool_t **pool_p, gc3_diag_t *diag)
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
        gc3_diag_add(diag, own ? "executor: rank %d cannot make its FIFO pool of %zu bytes"
                               : "executor: rank %d cannot map a peer's FIFO pool of %zu bytes", p->rank, bytes);
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
static int gc3_plan_pool_uses(const gc3_plan_t *p, int q)
{
    if (!p->pooled || q == p->rank) {
        return p->pooled && p->layout.pool_bytes > 0;
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
static void gc3_plan_pool_move(gc3_plan_t *p)
{
    gc3_exec_t     *e = p->exec;
    gc3_rt_pool_t **old = p->pool + p->nranks; /* the second half: what it held */
    int             moved = 0;

    for (int q = 0; q < p->nranks; q++) {
        old[q] = NULL;
        if (gc3_plan_pool_uses(p, q) && p->pool[q] != e->pool[q]) {
            old[q]    = p->pool[q];
            moved    |= old[q] != NULL;
            p->pool[q] = e->pool[q];
            p->pool[q]->refs++;
        }
    }
    for (int t = 0; t < p->ntbs; t++) {
        if (p->send_slot_off[t] >= 0) {
            p->conn[t].send_slots = p->tbs_ctx[t].send_slots = p->pool[p->tbs[t].send]->base + p->send_slot_off[t];
        }
        if (p->recv_slot_off[t] >= 0) {
            p->conn[t].recv_slots = p->tbs_ctx[t].recv_slots = p->pool[p->rank]->base + p->recv_slot_off[t];
        }
    }
    p->pool_epoch = e->pool_epoch;
    if (moved && e->be->plan_moved != NULL) {
        e->be->plan_moved(p);
    }
    for (int q = 0; q < p->nranks; q++) {
        gc3_pool_unref(e, p, old[q]);
    }
}

/* Does a pooled plan of the executor use rank q's pool? */
static int gc3_exec_pool_used(gc3_exec_t *e, int q)
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
static void gc3_exec_pool_move_all(gc3_exec_t *e)
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
static int gc3_plan_takes_pool(const gc3_exec_params_t *ep, int proto, const gc3_flat_program_t *f, const int *node)
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

const char *gc3_mem_format(uint64_t b, char *buf, size_t len)
{
    if (b >= (1ull << 30)) {
        snprintf(buf, len, "%.2f GiB", (double)b / (double)(1ull << 30));
    } else if (b >= (1ull << 20)) {
        snprintf(buf, len, "%.1f MiB", (double)b / (double)(1ull << 20));
    } else if (b >= (1ull << 10)) {
        snprintf(buf, len, "%.1f KiB", (double)b / (double)(1ull << 10));
    } else {
        snprintf(buf, len, "%llu B", (unsigned long long)b);
    }
    return buf;
}

static void gc3_plan_scratch_free(gc3_plan_t *p)
{
    if (p->scratch != NULL) {
        p->exec->be->mem_free(p, p->scratch, p->scratch_bytes);
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)p->mem.scratch);
    }
    p->scratch       = NULL;
    p->scratch_bytes = 0;
    p->mem.scratch   = 0;
}

/* The plan off the executor's list of pooled plans, its pools' references given back. */
static void gc3_plan_pool_leave(gc3_plan_t *p)
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

void gc3_plan_destroy(gc3_plan_t *p)
{
    if (p == NULL) {
        return;
    }
    if (p->in_flight && !p->pending) {
        (void)p->exec->be->wait(p);
        if (p->crosses_nodes) {
            gc3_rt_net_call_end(p);
        }
    }
    if (p->net_state != NULL) {
        gc3_rt_net_teardown(p);
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
    if (p->stage != NULL) {
        p->exec->be->mem_free(p, p->stage, p->mem.stage);
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)p->mem.stage);
    }
    if (p->exec->be->plan_cleanup != NULL) {
        p->exec->be->plan_cleanup(p);
    }
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

/* The blocks' contexts, what stays the same for every call of the plan (gc3_exec_start sets the rest). */
static void gc3_plan_ctx_init(gc3_plan_t *p)
{
    for (int t = 0; t < p->ntbs; t++) {
        gc3_rt_tb_t         *x = &p->tbs_ctx[t];
        const gc3_flat_tb_t *tb = &p->tbs[t];
        memset(x, 0, sizeof(*x));
        x->rank        = p->rank;
        x->tb          = t;
        x->nsteps      = tb->nsteps;
        x->chan        = tb->chan;
        x->send_peer   = tb->send;
        x->recv_peer   = tb->recv;
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
        x->s_chunks    = gc3_flat_ranks(p->flat)[p->rank].s_chunks;
        x->slots       = p->exec->params.slots;
        x->slot_stride = p->slot_stride;
        x->timeout_s   = p->exec->params.timeout_s;
        x->zc_table    = gc3_reg_table(p->exec->reg, &x->zc_entries);
        x->zc_slocal   = gc3_reg_local(p->exec->reg, tb->send);
        x->zc_rlocal   = gc3_reg_local(p->exec->reg, tb->recv);
        x->zc_slocal   = x->zc_slocal < 64 ? x->zc_slocal : -1;
    }
}

/* ---------------------------------------------------------------- preparing a plan */

/* The most receiving connections a rank of the program has (the FIFO cap divides among them). */
static int gc3_flat_max_recv(const gc3_flat_program_t *f)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    int                    most  = 0;
    for (int r = 0; r < f->nranks; r++) {
        int n = 0;
        for (int t = 0; t < ranks[r].ntbs; t++) {
            n += gc3_flat_peer_sender(f, r, t) >= 0;
        }
        most = n > most ? n : most;
    }
    return most;
}

/* A plan's slot payload, the same on every rank (from the program and the executor's parameters,
 * which the ranks agreed on): what the largest call of the program (max_bytes) moves in one message,
 * at most params.slot_bytes, and within params.fifo_bytes over the connections of the rank that
 * receives on most. A smaller slot only means more loops for a larger call, never a wrong one. */
/* The bytes of a chunk of the largest call of the program (max_bytes), k chunks per segment, with a
 * vector of rounding; 0 when the program has no largest call. */
static uint64_t gc3_plan_chunk_bytes(const gc3_ir_program_t *prog, const gc3_flat_program_t *f, int k)
{
    const int si = gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_INPUT, f->nranks),
              so = gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_OUTPUT, f->nranks), segs = si > so ? si : so;
    uint64_t  seg;

    if (prog->max_bytes == 0) {
        return 0;
    }
    seg = (prog->max_bytes + (uint64_t)segs - 1) / (uint64_t)segs;
    return gc3_rt_round((seg + (uint64_t)k - 1) / (uint64_t)k, 16) + 16;
}

static uint64_t gc3_plan_slot_payload(const gc3_exec_params_t *ep, const gc3_ir_program_t *prog,
                                      const gc3_flat_program_t *f, int cnt_max, int k)
{
    uint64_t payload = (uint64_t)ep->slot_bytes / 16 * 16, chunk = gc3_plan_chunk_bytes(prog, f, k),
             fifo    = prog->fifo_cap > 0 && (ep->fifo_bytes == 0 || prog->fifo_cap < ep->fifo_bytes) ? prog->fifo_cap
                                                                                                   : ep->fifo_bytes;
    int      conns   = gc3_flat_max_recv(f);

    if (chunk > 0) {
        uint64_t need = (uint64_t)cnt_max * chunk;
        need          = need < 256 ? 256 : need;
        payload       = need < payload ? need : payload;
    }
    if (fifo > 0 && conns > 0) {
        uint64_t cap = fifo / ((uint64_t)conns * (uint64_t)ep->slots) / 16 * 16;
        cap          = cap > GC3_RT_SIMPLE_HDR + GC3_SLOT_MIN_BYTES ? cap - GC3_RT_SIMPLE_HDR : GC3_SLOT_MIN_BYTES;
        payload      = cap < payload ? cap : payload;
    }
    return payload;
}

/* The slot stride of a payload: LL, lines of twice the header and payload; Simple, the signature's
 * line, then the payload, slots starting on lines. */
static uint64_t gc3_plan_slot_stride(int proto, uint64_t payload)
{
    return proto == GC3_PROTO_LL ? 2 * (payload + GC3_RT_MSG_HDR) : gc3_rt_round(payload + GC3_RT_SIMPLE_HDR, GC3_RT_LINE);
}

/* The region's part of a plan's record (its layout L on this rank). */
static void gc3_plan_mem_layout(gc3_plan_mem_t *m, const gc3_rt_layout_t *L, int ntbs, int slots, uint64_t payload,
                                uint64_t stride)
{
    m->slot_bytes = payload;
    m->slots      = slots;
    m->blocks     = ntbs;
    m->recv_conns = m->send_conns = m->net_conns = 0;
    m->fifo       = 0;
    m->pool       = L->pool_bytes;
    for (int t = 0; t < ntbs; t++) {
        if (L->fifo_off[t] >= 0) {
            m->recv_conns++;
            m->fifo += L->pooled ? GC3_RT_LINE : GC3_RT_LINE + gc3_rt_round((uint64_t)slots * stride, GC3_RT_LINE);
        }
        m->send_conns += L->head_off[t] >= 0;
        m->net_conns += (L->net_recv_off[t] >= 0) + (L->net_send_off[t] >= 0);
    }
    m->flags = L->bytes - m->fifo;
    /* direct path between nodes: its slots in a region of their own, in the backend's memory */
    m->fifo += L->net_slot_bytes;
}

enum { GC3_PREP_HANDLES, GC3_PREP_MAPPED, GC3_PREP_NET };

struct gc3_prep {
    gc3_plan_t         *p;
    gc3_rt_layout_t    *layouts; /* of every rank this one talks to (and its own) */
    int                 phase, ok, unlinked;
    gc3_rt_xchg_t       x;       /* the exchange of the phase */
    gc3_rt_net_setup_t *net;     /* GC3_PREP_NET */
    /* the FIFO pool (params.fifo_pool): until the executor makes them current, the pools this
     * preparation made (this rank's, when its plan needs more than the current one) and mapped (per
     * rank: a peer's new one) */
    gc3_rt_pool_t      *pool_new;
    gc3_rt_pool_t     **pool_peer;
};

/* what every rank says in the first two exchanges: whether it is ready, and its region's handle;
 * in the first, also its FIFO pool after this preparation (gen 0: none) */
typedef struct {
    int32_t  ok, pad;
    char     handle[GC3_RT_HANDLE_BYTES];
    uint64_t pool_gen, pool_bytes;
    char     pool_handle[GC3_RT_HANDLE_BYTES];
    char     reg_board[64]; /* zero-copy: this rank's board ("" none) */
} gc3_prep_card_t;

/* The plan's chunks and slots: its segments per rank, its largest step, a slot's payload and stride. */
static gc3_status_t gc3_prep_geometry(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_plan_t *p,
                                      gc3_diag_t *diag)
{
    gc3_plan_segments(p->flat, &p->k_in, &p->k_out);
    if (p->k_in < 1 || p->k_out < 1) {
        gc3_diag_add(diag, "executor: program '%s' has fewer chunks than ranks", program->name);
        return GC3_ERR_INVALID_PARAM;
    }
    p->cnt_max = 1;
    for (int i = 0; i < p->flat->nsteps; i++) {
        int c = gc3_flat_steps(p->flat)[i].cnt;
        p->cnt_max = c > p->cnt_max ? c : p->cnt_max;
    }
    p->slot_payload = gc3_plan_slot_payload(&exec->params, program, p->flat, p->cnt_max,
                                            p->k_in > p->k_out ? p->k_in : p->k_out);
    p->slot_stride  = gc3_plan_slot_stride(p->proto, p->slot_payload);
    return GC3_OK;
}

/* This rank's thread blocks: their tables, and the sends and receives of each, which need a partner. */
static gc3_status_t gc3_prep_blocks(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_plan_t *p,
                                    gc3_diag_t *diag)
{
    const int R = exec->params.nranks, rank = exec->params.rank;

    p->tb_nsteps   = calloc((size_t)p->ntbs + 1, sizeof(int32_t));
    p->sem_base    = calloc((size_t)p->ntbs + 1, sizeof(uint64_t));
    p->loops_base  = calloc((size_t)p->ntbs + 1, sizeof(uint64_t));
    p->send_base   = calloc((size_t)p->ntbs + 1, sizeof(uint64_t));
    p->recv_base   = calloc((size_t)p->ntbs + 1, sizeof(uint64_t));
    p->nsend       = calloc((size_t)p->ntbs + 1, sizeof(int));
    p->nrecv       = calloc((size_t)p->ntbs + 1, sizeof(int));
    p->tbs_ctx     = calloc((size_t)p->ntbs + 1, sizeof(gc3_rt_tb_t));
    p->peer_region = calloc((size_t)R, sizeof(char *));
    p->peer_bytes  = calloc((size_t)R, sizeof(size_t));
    p->send_slot_off = malloc(((size_t)p->ntbs + 1) * sizeof(int64_t));
    p->recv_slot_off = malloc(((size_t)p->ntbs + 1) * sizeof(int64_t));
    p->pool          = p->pooled ? calloc(2 * (size_t)R, sizeof(gc3_rt_pool_t *)) : NULL; /* (2nd half: moves) */
    if (p->tb_nsteps == NULL || p->sem_base == NULL || p->loops_base == NULL || p->send_base == NULL ||
        p->recv_base == NULL || p->nsend == NULL || p->nrecv == NULL || p->tbs_ctx == NULL || p->peer_region == NULL ||
        p->peer_bytes == NULL || p->send_slot_off == NULL || p->recv_slot_off == NULL || (p->pooled && p->pool == NULL)) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int t = 0; t < p->ntbs; t++) {
        const gc3_flat_step_t *st = &gc3_flat_steps(p->flat)[p->tbs[t].step_begin];
        p->tb_nsteps[t]           = p->tbs[t].nsteps;
        p->send_slot_off[t] = p->recv_slot_off[t] = -1;
        for (int s = 0; s < p->tbs[t].nsteps; s++) {
            p->nsend[t] += (gc3_step_flags((gc3_step_type_t)st[s].type) & GC3_STEP_F_SEND) != 0;
            p->nrecv[t] += (gc3_step_flags((gc3_step_type_t)st[s].type) & GC3_STEP_F_RECV) != 0;
        }
        if ((p->nsend[t] && gc3_flat_peer_receiver(p->flat, rank, t) < 0) ||
            (p->nrecv[t] && gc3_flat_peer_sender(p->flat, rank, t) < 0)) {
            gc3_diag_add(diag, "executor: rank %d tb %d of '%s' has no partner block on the other end of its "
                         "connection (run the verifier)", rank, t, program->name);
            return GC3_ERR_VERIFY;
        }
    }
    return GC3_OK;
}

/* The layout of every rank this one talks to (its own is computed already). */
static gc3_status_t gc3_prep_peer_layouts(gc3_exec_t *exec, gc3_plan_t *p, gc3_rt_layout_t *layouts)
{
    gc3_status_t status = GC3_OK;

    for (int t = 0; t < p->ntbs && status == GC3_OK; t++) {
        int peers[2] = {p->tbs[t].send, p->tbs[t].recv};
        for (int k = 0; k < 2 && status == GC3_OK; k++) {
            if (peers[k] >= 0 && layouts[peers[k]].sem_off == NULL) {
                status = gc3_rt_layout_compute(p->flat, peers[k], exec->params.slots, p->slot_stride, exec->node,
                                               exec->params.net_direct, p->pooled, &layouts[peers[k]]);
            }
        }
    }
    return status;
}

/* Zero-copy: every rank's sends marked (this plan runs only this rank's; the others' tell whether every
 * message of a call can be left in place: zero-copy mode), and this rank's count. */
static void gc3_zc_prep(gc3_plan_t *p)
{
    const gc3_flat_tb_t   *tbs     = gc3_flat_tbs(p->flat);
    const gc3_flat_step_t *steps   = gc3_flat_steps(p->flat);
    int                    full[2] = {p->flat->outofplace, p->flat->inplace};

    (void)gc3_flat_zc_mark(p->flat, -1, 1, NULL);
    memset(&p->zc_stats, 0, sizeof(p->zc_stats));
    for (int t = 0; t < p->flat->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps; s++) {
            const gc3_flat_step_t *st = &steps[tbs[t].step_begin + s];
            if (!(gc3_step_flags((gc3_step_type_t)st->type) & GC3_STEP_F_SEND)) {
                continue;
            }
            full[0] = full[0] && (st->zc & GC3_FLAT_ZC_OOP);
            full[1] = full[1] && (st->zc & GC3_FLAT_ZC_IP);
            if (tbs[t].rank == p->rank) {
                p->zc_stats.sends++;
                p->zc_stats.oop += (st->zc & GC3_FLAT_ZC_OOP) != 0;
                p->zc_stats.ip += (st->zc & GC3_FLAT_ZC_IP) != 0;
                p->zc_stats.homed += (st->zc & GC3_FLAT_ZC_HOMED) != 0;
            }
        }
    }
    /* zero-copy mode (decided at the second exchange, when the ranks know each other's boards): every
     * message in place, no scratch (its copies would grow with the tile), a collective whose every rank
     * waits for every other in each call (the agreement's words are read before they change) */
    for (int k = 0; k < 2; k++) {
        /* (not a rooted collective's: its root and other ranks may make different kinds of call) */
        p->zc_agree[k] = full[k] && !p->uses_scratch && p->flat->coll != GC3_COLL_CUSTOM &&
                         !gc3_coll_desc((gc3_coll_t)p->flat->coll)->rooted && p->id < GC3_REG_AGREE_PLANS;
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
    if (exec->params.fuse) {
        p->fused_runs = gc3_flat_fuse(p->flat, rank, GC3_RT_FUSE_MAX);
    }
    me       = &gc3_flat_ranks(p->flat)[rank];
    p->ntbs   = me->ntbs;
    p->tbs    = &gc3_flat_tbs(p->flat)[me->tb_begin];
    p->proto  = gc3_proto_runs_as(program->proto); /* LL128: Simple */
    for (int r = 0; r < p->flat->nranks; r++) {
        p->uses_scratch |= gc3_flat_ranks(p->flat)[r].s_chunks > 0;
    }
    if (exec->params.zero_copy && p->proto == GC3_PROTO_SIMPLE && !program->no_zc) {
        gc3_zc_prep(p);
    }
    p->pooled = gc3_plan_takes_pool(&exec->params, p->proto, p->flat, exec->node);
    status = gc3_prep_geometry(exec, program, p, diag);
    if (status != GC3_OK) {
        return status;
    }
    status = gc3_prep_blocks(exec, program, p, diag);
    if (status != GC3_OK) {
        return status;
    }
    status = gc3_rt_layout_compute(p->flat, rank, exec->params.slots, p->slot_stride, exec->node,
                                   exec->params.net_direct, p->pooled, &p->layout);
    if (status != GC3_OK) {
        return status;
    }
    gc3_plan_mem_layout(&p->mem, &p->layout, p->ntbs, exec->params.slots, p->slot_payload, p->slot_stride);
    p->sem_off       = p->layout.sem_off;
    p->loops_off     = p->layout.loops_off;
    p->crosses_nodes = gc3_flat_crosses_nodes(p->flat, exec->node);
    if (p->crosses_nodes && !gc3_rt_net_available()) {
        gc3_diag_add(diag, "executor: program '%s' connects ranks on different nodes, and this library was built "
                     "without UCX (the inter-node transport)", program->name);
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
        const gc3_prep_card_t *c = (const gc3_prep_card_t *)(x->x.recv + (size_t)q * x->x.bytes);
        if (q == p->rank || gc3_plan_remote(p, q) || c->pool_gen == 0 ||
            (e->pool[q] != NULL && e->pool[q]->gen == c->pool_gen)) {
            continue;
        }
        const int          must = gc3_plan_pool_uses(p, q) || gc3_exec_pool_used(e, q);
        const gc3_status_t st   = gc3_pool_new(p, 0, c->pool_handle, (size_t)c->pool_bytes, c->pool_gen,
                                               &x->pool_peer[q], must ? diag : NULL);
        status = must ? st : GC3_OK;
    }
    return status;
}

/* Every rank mapped what it needs: the pools this preparation made and mapped become the executor's
 * (the old ones lose its reference), and its pooled plans not in flight move to them. */
static void gc3_prep_pool_install(gc3_prep_t *x)
{
    gc3_exec_t     *e = x->p->exec;
    gc3_rt_pool_t  *old;
    int             changed = 0;

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

/* The peers of this node this rank talks to: their regions mapped. */
static gc3_status_t gc3_prep_map(gc3_prep_t *x, gc3_diag_t *diag)
{
    gc3_plan_t   *p      = x->p;
    gc3_status_t  status = GC3_OK;

    p->peer_region[p->rank] = p->region;
    p->peer_bytes[p->rank]  = p->layout.bytes;
    if (p->exec->reg != NULL) {
        const char **names = calloc((size_t)p->nranks, sizeof(char *));
        for (int q = 0; names != NULL && q < p->nranks; q++) {
            const gc3_prep_card_t *c = (const gc3_prep_card_t *)(x->x.recv + (size_t)q * x->x.bytes);
            names[q]                 = memchr(c->reg_board, '\0', sizeof(c->reg_board)) != NULL ? c->reg_board : NULL;
        }
        if (names != NULL) {
            gc3_reg_connect(p->exec, names);
        }
        free(names);
    }
    for (int q = 0; q < p->nranks && status == GC3_OK; q++) {
        const gc3_prep_card_t *c = (const gc3_prep_card_t *)(x->x.recv + (size_t)q * x->x.bytes);
        if (q != p->rank && x->layouts[q].sem_off != NULL && !gc3_plan_remote(p, q)) {
            p->peer_bytes[q] = x->layouts[q].bytes;
            status = p->exec->be->region_open(p, c->handle, p->peer_bytes[q], &p->peer_region[q], diag);
            if (status == GC3_OK) {
                p->mem.mapped += p->peer_bytes[q];
                gc3_rt_held_add(GC3_RT_HELD_MAPPED, (int64_t)p->peer_bytes[q]);
                gc3_rt_held_add(GC3_RT_HELD_MAPPINGS, 1);
            }
        }
    }
    return status == GC3_OK ? gc3_prep_map_pools(x, diag) : status;
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
    gc3_plan_t              *p       = x->p;
    gc3_exec_t              *exec    = p->exec;
    const gc3_rt_layout_t   *layouts = x->layouts;
    gc3_status_t             status  = GC3_OK;
    int                      rank    = p->rank;

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
                c->send_tail  = (uint64_t *)(p->peer_region[tb->send] + layouts[tb->send].fifo_off[u]);
                c->send_head  = (uint64_t *)(p->region + p->layout.head_off[t]);
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
                c->recv_tail  = (uint64_t *)(p->region + p->layout.fifo_off[t]);
                c->recv_head  = (uint64_t *)(p->peer_region[tb->recv] + layouts[tb->recv].head_off[u]);
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
    mine->ok  = x->ok;
    mine->pad = !with_handle && gc3_reg_connected(x->p->exec->reg); /* (the second exchange: zero-copy mode) */
    if (with_handle) {
        const gc3_exec_t    *e    = x->p->exec;
        const gc3_rt_pool_t *pool = x->pool_new != NULL ? x->pool_new : e->pool != NULL ? e->pool[x->p->rank] : NULL;
        memcpy(mine->handle, x->p->handle, GC3_RT_HANDLE_BYTES);
        snprintf(mine->reg_board, sizeof(mine->reg_board), "%s", gc3_reg_board_name(e->reg));
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
        if (!((const gc3_prep_card_t *)(x->x.recv + (size_t)q * x->x.bytes))->ok) {
            return q;
        }
    }
    return -1;
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
        gc3_diag_add(diag, "executor: program '%s' is for %d ranks, the executor has %d", program->name, program->ngpus, R);
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
        status = gc3_rt_net_setup_test(x->net, x->layouts, diag);
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
    if (status == GC3_OK && q >= 0) {
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
        x->ok = gc3_prep_map(x, diag) == GC3_OK; /* with the handles just exchanged */
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
        if (!((const gc3_prep_card_t *)(x->x.recv + (size_t)r * x->x.bytes))->pad || p->crosses_nodes) {
            p->zc_agree[0] = p->zc_agree[1] = 0;
        }
    }
    gc3_rt_xchg_release(&x->x);
    gc3_prep_pool_install(x);
    status = gc3_prep_connect(x, diag);
    if (p->crosses_nodes) {
        /* collective: every rank takes part, whatever happened here (it then fails with the others) */
        gc3_status_t ns = gc3_rt_net_setup_post(p, status == GC3_OK, diag, &x->net);
        status          = status == GC3_OK ? ns : status;
        if (x->net != NULL) {
            x->phase = GC3_PREP_NET;
            return GC3_IN_PROGRESS;
        }
    }
done:
    if (status == GC3_OK) {
        gc3_plan_ctx_init(p);
        p->exec->nplans++;
        if (p->pooled) {
            p->pool_next    = p->exec->plans;
            p->exec->plans  = p;
        }
        *plan_p = p;
    }
    gc3_prep_free(x, status == GC3_OK);
    return status;
}

const char *gc3_exec_prepare_waiting(const gc3_prep_t *x)
{
    return x->phase == GC3_PREP_NET ? gc3_rt_net_setup_waiting(x->net) : x->x.what;
}

void gc3_exec_prepare_abandon(gc3_prep_t *x)
{
    if (x == NULL) {
        return;
    }
    if (x->net != NULL) {
        gc3_rt_net_setup_abandon(x->net);
    }
    gc3_prep_free(x, 0); /* the pending exchange keeps its buffers */
}

gc3_status_t gc3_exec_prepare(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag, gc3_plan_t **plan_p)
{
    gc3_prep_t     *x;
    gc3_status_t    status = gc3_exec_prepare_post(exec, program, diag, &x);
    double          timeout = exec->params.timeout_s;
    struct timespec t0, t, ts = {0, 20000};
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

/* In-place buffers: where the input and output of this rank sit in recvbuf (the inner one at
 * this rank's segment of it, or at its start). */
static void gc3_call_buffers(const gc3_plan_t *p, const gc3_call_t *c, char **in, char **out)
{
    const gc3_coll_desc_t *d = gc3_coll_desc((gc3_coll_t)p->flat->coll);
    /* (recvbuf is NULL only where the rank has no output: a reduce's non-root, gc3_call_check) */
    char *inner = c->recvbuf == NULL || !d->inplace_slice
                      ? (char *)c->recvbuf
                      : (char *)c->recvbuf + (size_t)p->rank * c->count * gc3_dtype_size(c->dtype);

    *out = c->recvbuf;
    *in  = (char *)c->sendbuf;
    if (c->sendbuf == NULL) {
        *in  = d->inplace_inner == GC3_BUF_INPUT ? inner : c->recvbuf;
        *out = d->inplace_inner == GC3_BUF_OUTPUT ? inner : c->recvbuf;
    }
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
    const int        has_out  = gc3_coll_access(coll, p->flat->root, p->rank, GC3_BUF_OUTPUT) != 0;
    const int        one_buf  = !has_out || !gc3_coll_access(coll, p->flat->root, p->rank, GC3_BUF_INPUT);
    if (gc3_dtype_size(c->dtype) == 0 || !gc3_op_valid(c->op, c->dtype) ||
        (c->recvbuf == NULL && (has_out || c->sendbuf == NULL))) {
        gc3_diag_add(diag, "executor: operator %s is not defined on %s, or no receive buffer", gc3_op_name(c->op),
                     gc3_dtype_name(c->dtype));
        return GC3_ERR_INVALID_PARAM;
    }
    if (!one_buf && (c->sendbuf == NULL ? !p->flat->inplace : !p->flat->outofplace)) {
        gc3_diag_add(diag, "executor: the program does not support %s calls", c->sendbuf == NULL ? "in-place" : "out-of-place");
        return GC3_ERR_UNSUPPORTED;
    }
    return GC3_OK;
}

/* The most bytes a step's message carries in one loop: a slot's payload; in zero-copy mode (big: every
 * message in place, only its header in the slot), params.tile_bytes, at least a slot. */
static uint64_t gc3_plan_msg_max(const gc3_plan_t *p, int big)
{
    const uint64_t tile = p->exec->params.tile_bytes > 0 ? p->exec->params.tile_bytes : GC3_TILE_BYTES_DEFAULT;
    return big && tile > p->slot_payload ? tile / 16 * 16 : p->slot_payload;
}

/* The tile T (elements a chunk moves per loop) of a call of count elements, k chunks per segment:
 * a step's message (cnt chunks of T elements) is at most gc3_plan_msg_max; T is a multiple of 16
 * bytes when it can be (aligned vector access), and not larger than a chunk needs. When the whole
 * chunk fits, T is rounded up, not down: down, a count that is not a multiple of 16 bytes per chunk
 * took a second loop for its last few elements (a whole round of steps). */
static gc3_status_t gc3_call_tile(const gc3_plan_t *p, const gc3_call_t *c, uint64_t k, int big, uint64_t *T_p,
                                  gc3_diag_t *diag)
{
    const size_t   ds        = gc3_dtype_size(c->dtype);
    const uint64_t v16       = ds > 0 && ds < 16 ? 16 / ds : 1; /* elements in 16 bytes (a vector), at least 1 */
    const uint64_t per_chunk = (c->count + k - 1) / k;
    const uint64_t msg_max   = gc3_plan_msg_max(p, big);
    uint64_t       T         = msg_max / (uint64_t)p->cnt_max / ds;

    if (T >= per_chunk) {
        T = per_chunk;
        if (T >= v16 && (uint64_t)p->cnt_max * gc3_rt_round(T, v16) * ds <= msg_max) {
            T = gc3_rt_round(T, v16);
        }
    }
    if (T >= v16) {
        T = T / v16 * v16;
    }
    if (T == 0) {
        gc3_diag_add(diag, "executor: a message of at most %llu bytes cannot hold %d chunks of %s",
                     (unsigned long long)msg_max, p->cnt_max, gc3_dtype_name(c->dtype));
        return GC3_ERR_INVALID_PARAM;
    }
    if (p->flat->coll == GC3_COLL_CUSTOM) {
        /* a custom collective may move chunk m to another position: no clipped chunks allowed */
        if (c->count % k != 0) {
            gc3_diag_add(diag, "executor: custom collective '%d chunks per segment' needs a count divisible by %llu",
                         (int)k, (unsigned long long)k);
            return GC3_ERR_UNSUPPORTED;
        }
        while ((c->count / k) % T != 0) {
            T--;
        }
    }
    *T_p = T;
    return GC3_OK;
}

/* LL staging per buffer: payload only, 16-byte aligned */
static size_t gc3_plan_stage_bytes(uint64_t payload)
{
    return gc3_rt_round(payload, 16) + 64;
}

/* The plan's private memory for a call: scratch (window copies of s_chunks chunks of tiles of T
 * elements of ds bytes), LL staging. */
static gc3_status_t gc3_call_memory(gc3_plan_t *p, int s_chunks, uint64_t T, size_t ds, int window, gc3_diag_t *diag)
{
    const size_t need = (size_t)s_chunks * T * ds * (size_t)(window > 0 ? window : 1);
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
        status         = p->exec->be->mem_alloc(p, p->stage_bytes * 2 * (size_t)(p->ntbs > 0 ? p->ntbs : 1), &p->stage);
        if (status == GC3_OK) {
            p->mem.stage = p->stage_bytes * 2 * (size_t)(p->ntbs > 0 ? p->ntbs : 1);
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
    uint64_t v[3] = {(uint64_t)c->count, (uint64_t)c->dtype, (uint64_t)c->op};
    uint64_t sig  = gc3_fnv1a(GC3_FNV1A_START, v, sizeof(v));
    return sig != 0 ? sig : 1;
}

/* What changes between calls in the blocks' contexts (the rest was set by gc3_plan_ctx_init). */
static void gc3_call_contexts(gc3_plan_t *p, const gc3_call_t *c, uint64_t T, int L, int window)
{
    char          *in, *out;
    const uint64_t sig      = gc3_call_signature(c);
    const int      handover = p->pooled && p->exec->pool_last != p->id;

    gc3_call_buffers(p, c, &in, &out);
    for (int t = 0; t < p->ntbs; t++) {
        gc3_rt_tb_t *x = &p->tbs_ctx[t];
        x->send_base   = p->send_base[t];
        x->recv_base   = p->recv_base[t];
        x->send_slot   = (uint32_t)(p->send_base[t] % (uint64_t)p->exec->params.slots);
        x->recv_slot   = (uint32_t)(p->recv_base[t] % (uint64_t)p->exec->params.slots);
        x->window      = window;
        x->buf[GC3_BUF_INPUT]   = in;
        x->buf[GC3_BUF_OUTPUT]  = out;
        x->buf[GC3_BUF_SCRATCH] = p->scratch;
        x->count       = c->count;
        x->T           = T;
        x->L           = L;
        x->dtype       = c->dtype;
        x->op          = c->op;
        x->dsize       = (int32_t)gc3_dtype_size(c->dtype);
        x->sig         = sig;
        x->handover    = handover;
        if (p->stage != NULL) {
            x->stage_in  = p->stage + (size_t)(2 * t) * p->stage_bytes;
            x->stage_out = p->stage + (size_t)(2 * t + 1) * p->stage_bytes;
        }
    }
}

/* Zero-copy for the call: which marking applies, this rank's registrations of its buffers (held until
 * the call ends) and the peers that mapped them, in every block's context. */
static void gc3_call_zc(gc3_plan_t *p, const gc3_call_t *c)
{
    const int      bit = c->sendbuf == NULL ? GC3_FLAT_ZC_IP : GC3_FLAT_ZC_OOP;
    const size_t   ds  = gc3_dtype_size(c->dtype);
    const uint64_t nz  = c->sendbuf == NULL ? (uint64_t)p->zc_stats.ip : (uint64_t)p->zc_stats.oop;
    char          *buf[2];
    uint64_t       peers[2] = {0, 0};
    const char    *why = NULL;

    p->zc_held[0] = p->zc_held[1] = 0;
    p->zc_peers_last = 0;
    p->zc_why        = NULL;
    if (!p->exec->params.zero_copy || nz == 0 || p->exec->reg == NULL) {
        for (int t = 0; t < p->ntbs; t++) {
            p->tbs_ctx[t].zc_bit = 0;
        }
        return;
    }
    gc3_reg_progress(p->exec);
    gc3_call_buffers(p, c, &buf[0], &buf[1]);
    for (int b = 0; b < 2; b++) {
        const size_t bytes = c->count * ds *
                             (size_t)gc3_coll_segments((gc3_coll_t)p->flat->coll, (gc3_buf_t)b, p->nranks);
        const char  *w     = NULL;
        p->zc_held[b]      = buf[b] != NULL ? gc3_reg_lookup(p->exec, buf[b], bytes, &peers[b], &w) : 0; /* NULL: no output */
        why                = why != NULL ? why : w;
    }
    for (int q = 0; q < 64; q++) {
        p->zc_peers_last += (int)(((peers[0] | peers[1]) >> q) & 1);
    }
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
        if (gc3_rt_net_failed(p, &ne)) {
            gc3_rt_error_format(&ne, p->broken_why, sizeof(p->broken_why));
            gc3_diag_add(diag, "executor: %s", p->broken_why);
            p->broken = 1;
            return GC3_ERR_IO;
        }
        gc3_rt_net_call_begin(p);
    }
    status = p->exec->be->start(p, c->stream, diag);
    if (status != GC3_OK && p->crosses_nodes) {
        gc3_rt_net_call_end(p);
    }
    return status;
}

/* The call's tile, memory and contexts, then its launch (big: in zero-copy mode, the large tile). */
static gc3_status_t gc3_call_go(gc3_plan_t *p, const gc3_call_t *c, int big, gc3_diag_t *diag)
{
    const uint64_t k        = (uint64_t)(p->k_in > p->k_out ? p->k_in : p->k_out);
    const int      s_chunks = gc3_flat_ranks(p->flat)[p->rank].s_chunks;
    const int      window   = s_chunks > 0 ? GC3_RT_WINDOW : 0;
    uint64_t       T        = 0;
    gc3_status_t   status;

    if ((status = gc3_call_tile(p, c, k, big, &T, diag)) != GC3_OK ||
        (status = gc3_call_memory(p, s_chunks, T, gc3_dtype_size(c->dtype), window, diag)) != GC3_OK) {
        return status;
    }
    if (p->pooled && p->pool_epoch != p->exec->pool_epoch) {
        gc3_plan_pool_move(p); /* (it was in flight when the pool grew) */
    }
    p->zc_big = big;
    p->call_L = (int)((c->count + k * T - 1) / (k * T));
    gc3_call_contexts(p, c, T, p->call_L, window);
    return gc3_call_launch(p, c, diag);
}

static gc3_status_t gc3_call_start(gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    const int    kind   = c->sendbuf == NULL;
    gc3_status_t status = gc3_call_check(p, c, diag);

    if (status != GC3_OK || c->count == 0) {
        return status; /* (nothing to move: every rank returns at once) */
    }
    gc3_call_zc(p, c);
    if (p->zc_agree[kind]) {
        /* zero-copy mode if every rank of the node is ready: launched once all said (gc3_exec_test) */
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        p->call    = *c;
        p->pending = 1;
        p->pend_ns = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
        gc3_reg_agree_post(p->exec->reg, p->id, ++p->zc_seq, p->zc_ready);
    } else if ((status = gc3_call_go(p, c, 0, diag)) != GC3_OK) {
        gc3_call_zc_end(p);
        return status;
    }
    p->in_flight = 1;
    if (p->pooled) {
        p->exec->pool_busy = p;
        p->exec->pool_last = p->id;
    }
    return GC3_OK;
}

/* A pending call (zero-copy mode agreement): GC3_IN_PROGRESS while a rank of the node has not said;
 * then launched (GC3_OK), or the error of its launch, or a timeout naming the rank that never said. */
static gc3_status_t gc3_call_agreed(gc3_plan_t *p, gc3_diag_t *diag)
{
    int             all = 0, missing = -1;
    gc3_status_t    status = gc3_reg_agree_test(p->exec->reg, p->id, p->zc_seq, &all, &missing);
    struct timespec ts;

    if (status == GC3_IN_PROGRESS) {
        clock_gettime(CLOCK_MONOTONIC, &ts);
        if (p->exec->params.timeout_s > 0 &&
            (double)((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec - p->pend_ns) * 1e-9 >
                p->exec->params.timeout_s) {
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
    p->in_flight = 0;
    p->pending   = 0;
    gc3_call_zc_end(p);
    if (p->crosses_nodes) {
        gc3_rt_net_call_end(p);
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
                        p->err->what == GC3_WAIT_WHAT_ZC)) {
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
            struct timespec ts = {0, polls > 4096 ? 50000 : 1000};
            nanosleep(&ts, NULL);
        }
    }
    gc3_reg_progress(p->exec);
    return gc3_exec_finish(p, p->exec->be->wait(p), diag);
}

gc3_status_t gc3_exec_run(gc3_plan_t *p, const gc3_call_t *c, gc3_diag_t *diag)
{
    gc3_status_t status = gc3_exec_start(p, c, diag);
    if (status != GC3_OK) {
        return status;
    }
    return gc3_exec_wait(p, diag);
}

gc3_status_t gc3_plan_estimate(const gc3_exec_params_t *ep, const gc3_ir_program_t *program, gc3_diag_t *diag,
                               gc3_plan_mem_t *m)
{
    gc3_flat_program_t    *f = NULL;
    gc3_rt_layout_t        L;
    const gc3_flat_rank_t *me;
    gc3_status_t           status;
    int                    k_in, k_out, k, cnt_max = 1, proto = gc3_proto_runs_as(program->proto);
    uint64_t               payload, stride, chunk;

    memset(m, 0, sizeof(*m));
    memset(&L, 0, sizeof(L));
    if (program->ngpus != ep->nranks || ep->rank < 0 || ep->rank >= ep->nranks || ep->slots < 2) {
        gc3_diag_add(diag, "estimate: program '%s' is for %d ranks, the parameters say rank %d of %d (%d slots)",
                     program->name, program->ngpus, ep->rank, ep->nranks, ep->slots);
        return GC3_ERR_INVALID_PARAM;
    }
    if ((status = gc3_flat_create(program, &f)) != GC3_OK) {
        gc3_diag_add(diag, "estimate: program '%s' is malformed (run the verifier)", program->name);
        return status;
    }
    if (ep->fuse) {
        (void)gc3_flat_fuse(f, ep->rank, GC3_RT_FUSE_MAX); /* as gc3_prep_local */
    }
    gc3_plan_segments(f, &k_in, &k_out);
    k = k_in > k_out ? k_in : k_out;
    for (int i = 0; i < f->nsteps; i++) {
        cnt_max = gc3_flat_steps(f)[i].cnt > cnt_max ? gc3_flat_steps(f)[i].cnt : cnt_max;
    }
    if (k < 1) {
        gc3_diag_add(diag, "estimate: program '%s' has fewer chunks than ranks", program->name);
        gc3_flat_destroy(f);
        return GC3_ERR_INVALID_PARAM;
    }
    payload = gc3_plan_slot_payload(ep, program, f, cnt_max, k);
    stride  = gc3_plan_slot_stride(proto, payload);
    chunk   = gc3_plan_chunk_bytes(program, f, k);
    me      = &gc3_flat_ranks(f)[ep->rank];
    status  = gc3_rt_layout_compute(f, ep->rank, ep->slots, stride, ep->node, ep->net_direct,
                                    gc3_plan_takes_pool(ep, proto, f, ep->node), &L);
    if (status == GC3_OK) {
        /* the largest call's tile (a chunk, or what a slot carries of it), window copies */
        uint64_t tile = payload / (uint64_t)cnt_max / 16 * 16;
        tile          = chunk > 0 && chunk < tile ? chunk : tile;
        gc3_plan_mem_layout(m, &L, me->ntbs, ep->slots, payload, stride);
        m->scratch = me->s_chunks > 0 ? (uint64_t)me->s_chunks * tile * GC3_RT_WINDOW : 0;
        m->stage   = proto == GC3_PROTO_LL ? gc3_plan_stage_bytes(payload) * 2 * (uint64_t)(me->ntbs > 0 ? me->ntbs : 1) : 0;
        m->pinned  = L.net_bytes;
#ifdef GC3_HAVE_CUDA
        if (ep->backend == GC3_BACKEND_CUDA && gc3_rt_backend_cuda.mem_estimate != NULL) {
            gc3_rt_backend_cuda.mem_estimate(f, me->ntbs, m);
        }
#endif
        gc3_rt_layout_free(&L);
    }
    gc3_flat_destroy(f);
    return status;
}

gc3_status_t gc3_exec_estimate(const gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag,
                               gc3_plan_mem_t *mem)
{
    return gc3_plan_estimate(&exec->params, program, diag, mem);
}
