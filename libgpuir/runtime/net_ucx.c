/* gc3 / libgpuir: connections between nodes over UCX, moved by one proxy thread per process
 * (see gc3_rt_net.h for the protocol).
 *
 * Why RMA puts and not tagged messages: the FIFO protocol already is one-sided (the sender
 * writes slots and a tail, the receiver a head), so a put of the slot, a fence and a put of the
 * tail keep it unchanged on both sides: the receiving blocks poll their own memory exactly as
 * they do for a peer on their node, the receiving proxy posts nothing, and there is no receive
 * to match (a tagged design would need the receiving proxy to post receives into the slots in
 * order and then publish the tail itself: one more hop on the receiver's host per message).
 *
 * UCX state (context, worker, endpoints) is per process and shared by all plans; it is created
 * when the first plan that crosses nodes is set up and destroyed with the last one. All UCX
 * calls are made under one mutex (worker in UCS_THREAD_MODE_SERIALIZED): the proxy takes it for
 * each sweep, setup and teardown for their UCX calls. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_rt_net.h"

/* ---------------------------------------------------------------- the path (any build) */

gc3_net_reason_t gc3_net_path_choose(gc3_net_path_t asked, gc3_backend_t backend, int ucx_cuda)
{
    if (asked == GC3_NET_PATH_STAGED) {
        return GC3_NET_STAGED_FORCED;
    }
    if (ucx_cuda < 0) {
        return GC3_NET_STAGED_NO_UCX;
    }
    if (backend == GC3_BACKEND_HOST) {
        return asked == GC3_NET_PATH_GPUDIRECT ? GC3_NET_DIRECT_HOST : GC3_NET_STAGED_HOST;
    }
    if (ucx_cuda > 0) {
        return GC3_NET_DIRECT_CUDA;
    }
    return asked == GC3_NET_PATH_GPUDIRECT ? GC3_NET_STAGED_REFUSED : GC3_NET_STAGED_NO_CUDA;
}

const char *gc3_net_path_reason(gc3_net_reason_t why)
{
    switch (why) {
    case GC3_NET_DIRECT_CUDA:
        return "UCX reports CUDA memory support";
    case GC3_NET_DIRECT_HOST:
        return "forced, on the host backend: the direct protocol on host memory";
    case GC3_NET_STAGED_FORCED:
        return "forced by coll_gc3_net_path=staged";
    case GC3_NET_STAGED_HOST:
        return "host backend";
    case GC3_NET_STAGED_NO_CUDA:
        return "UCX reports no CUDA memory support";
    case GC3_NET_STAGED_REFUSED:
        return "GPUDirect refused: UCX reports no CUDA memory support (ucp_context_query), "
               "a UCX built with CUDA is needed";
    case GC3_NET_STAGED_NO_UCX:
        return "UCX is not built in or cannot start";
    }
    return "?";
}

#ifdef GC3_HAVE_UCX
#include <pthread.h>
#include <sched.h>
#include <ucp/api/ucp.h>

enum { GC3_LINK_OUT = 0, GC3_LINK_IN = 1 };

/* one connection of a plan to a block on another node, as the proxy sees it */
typedef struct {
    int                kind;        /* OUT: this rank sends (slots + tail go out); IN: it receives (head goes out) */
    int                tb, peer, chan;
    struct gc3_net_ep *ep;
    ucp_rkey_h         rkey;        /* the peer's net region */
    /* the counter the blocks advance here (OUT: my copy of the tail; IN: my copy of the head)
     * and where it goes (the receiver's tail; the sender's head) */
    const uint64_t    *l_ctr;
    uint64_t           r_ctr;
    /* OUT: my copies of the lengths and slots (the blocks write them), the receiver's slots */
    const uint64_t    *l_lens;
    const char        *l_slots;
    uint64_t           r_slots;
    ucp_rkey_h         slot_rkey;   /* the peer's region holding r_slots (direct: its slot region) */
    ucp_mem_h          slot_memh;   /* mine holding l_slots */
    ucs_memory_type_t  slot_mem;    /* its memory type */
    uint64_t           pushed;      /* counter value sent last */
    uint64_t           val;         /* source of the counter put in flight */
    void              *req;         /* that put, while not complete */
} gc3_net_link_t;

typedef struct gc3_net_ep {
    void             *addr;         /* the peer worker's address */
    size_t            addr_len;
    int               peer_errors;  /* created with UCP_ERR_HANDLING_MODE_PEER */
    ucp_ep_h          ep;
    int               failed;       /* set by the error handler */
    struct gc3_net_ep *next;
} gc3_net_ep_t;

typedef struct gc3_net_plan {
    gc3_plan_t         *plan;
    gc3_net_link_t     *links;
    int                 nlinks;
    ucp_mem_h           memh, slot_memh; /* the net region; direct: the slot region */
    ucp_rkey_h         *rkeys, *slot_rkeys; /* per rank, NULL when not used */
    int                 failed;     /* a link failed: p->err was written */
    gc3_rt_error_t      err;        /* what failed (kept: the backend clears p->err at each start) */
    struct gc3_net_plan *next;
} gc3_net_plan_t;

static struct {
    pthread_mutex_t lock;
    int             users;          /* plans set up */
    int             active;         /* calls under way (atomic) */
    int             stop;
    int             cuda_mem;       /* UCX can move CUDA memory (the GPUDirect path needs it) */
    pthread_t       thread;
    ucp_context_h   ctx;
    ucp_worker_h    worker;
    gc3_net_ep_t   *eps;
    gc3_net_plan_t *plans;
} gc3_net = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, 0, 0, NULL, NULL, NULL, NULL};

/* ---------------------------------------------------------------- errors */

static void gc3_net_link_fail(gc3_net_plan_t *np, const gc3_net_link_t *l, int why)
{
    gc3_plan_t *p = np->plan;
    if (np->failed) {
        return;
    }
    memset(&np->err, 0, sizeof(np->err));
    np->err.set  = 1;
    np->err.rank = p->rank;
    np->err.tb   = l->tb;
    np->err.what = GC3_WAIT_WHAT_NET;
    np->err.peer = l->peer;
    np->err.chan = l->chan;
    np->err.seen = (uint64_t)why; /* 1: endpoint error, 2: a transfer could not start */
    np->failed   = 1;
    /* the blocks of a call under way stop at their next poll of the abort flag */
    if (p->err != NULL && p->abort_flag != NULL &&
        (*p->abort_flag == 0 || (*p->abort_flag == GC3_RT_ABORT_LL_TIMEOUT && !p->err->set))) {
        /* (an LL load's timeout not yet recorded: the failed endpoint is the cause) */
        *p->err = np->err;
        __atomic_store_n((int32_t *)p->abort_flag, GC3_RT_ABORT_SET, __ATOMIC_RELEASE);
    }
}

static void gc3_net_ep_error(void *arg, ucp_ep_h ep, ucs_status_t status)
{
    gc3_net_ep_t *e = arg;
    (void)ep;
    (void)status;
    e->failed = 1; /* called from ucp_worker_progress, with the lock held: the sweep reports it */
}

/* ---------------------------------------------------------------- the proxy */

static int gc3_net_req_busy(void **req)
{
    if (*req == NULL) {
        return 0;
    }
    if (ucp_request_check_status(*req) == UCS_INPROGRESS) {
        return 1;
    }
    ucp_request_free(*req);
    *req = NULL;
    return 0;
}

/* a put; the request, if any, goes to *req (NULL: let it finish on its own). 0, or -1 when it
 * could not start. */
static int gc3_net_put(gc3_net_link_t *l, const void *src, size_t len, uint64_t raddr, ucp_rkey_h rkey,
                       ucp_mem_h memh, ucs_memory_type_t mem, void **req)
{
    ucp_request_param_t prm;
    ucs_status_ptr_t    r;
    memset(&prm, 0, sizeof(prm));
    if (memh != NULL) { /* a slot: registered once with its plan, of a known memory type */
        prm.op_attr_mask = UCP_OP_ATTR_FIELD_MEMH | UCP_OP_ATTR_FIELD_MEMORY_TYPE;
        prm.memh         = memh;
        prm.memory_type  = mem;
    }
    r = ucp_put_nbx(l->ep->ep, src, len, raddr, rkey, &prm);
    if (UCS_PTR_IS_ERR(r)) {
        return -1;
    }
    if (r != NULL) {
        if (req != NULL) {
            *req = r;
        } else {
            ucp_request_free(r); /* released by UCX when it completes */
        }
    }
    return 0;
}

/* One look at a link: send what its blocks published since. 1 when something was sent or is
 * still under way. */
static int gc3_net_link_sweep(gc3_net_plan_t *np, gc3_net_link_t *l)
{
    const int slots = np->plan->slots;
    uint64_t  now;

    if (l->ep->failed) {
        gc3_net_link_fail(np, l, 1);
        return 0;
    }
    if (gc3_net_req_busy(&l->req)) {
        return 1;
    }
    now = __atomic_load_n(l->l_ctr, __ATOMIC_ACQUIRE);
    if (now <= l->pushed) {
        return 0;
    }
    if (l->kind == GC3_LINK_OUT) {
        for (uint64_t seq = l->pushed + 1; seq <= now; seq++) {
            uint64_t s = (seq - 1) % (uint64_t)slots, len = l->l_lens[s];
            if (len > 0 && gc3_net_put(l, l->l_slots + s * np->plan->slot_stride, len,
                                       l->r_slots + s * np->plan->slot_stride, l->slot_rkey, l->slot_memh,
                                       l->slot_mem, NULL) != 0) {
                gc3_net_link_fail(np, l, 2);
                return 0;
            }
        }
        ucp_worker_fence(gc3_net.worker); /* the slots arrive before the tail */
    }
    l->val = now;
    if (gc3_net_put(l, &l->val, 8, l->r_ctr, l->rkey, NULL, UCS_MEMORY_TYPE_HOST, &l->req) != 0) {
        gc3_net_link_fail(np, l, 2);
        return 0;
    }
    l->pushed = now;
    return 1;
}

static int gc3_net_sweep_locked(void)
{
    int busy = 0;
    for (gc3_net_plan_t *np = gc3_net.plans; np != NULL; np = np->next) {
        for (int i = 0; i < np->nlinks && !np->failed; i++) {
            busy |= gc3_net_link_sweep(np, &np->links[i]);
        }
    }
    while (ucp_worker_progress(gc3_net.worker) != 0) {
        busy = 1;
    }
    return busy;
}

static void *gc3_net_proxy(void *arg)
{
    unsigned idle = 0;
    (void)arg;
    for (;;) {
        int busy;
        pthread_mutex_lock(&gc3_net.lock);
        if (gc3_net.stop) {
            pthread_mutex_unlock(&gc3_net.lock);
            break;
        }
        busy = gc3_net_sweep_locked();
        pthread_mutex_unlock(&gc3_net.lock);
        idle = busy ? 0 : idle + 1;
        if (__atomic_load_n(&gc3_net.active, __ATOMIC_ACQUIRE) > 0) {
            /* a call is under way here: every message needs this thread (and, over TCP, the
             * peer's puts need our progress too); stay on, but let the blocks' threads have
             * the core when there is nothing to do */
            if (idle > 16) {
                sched_yield();
            }
        } else {
            /* nothing of ours under way: peers that started first still need our progress
             * (their puts land through our worker on some transports), at a slower pace */
            struct timespec ts = {0, idle < 1024 ? 5000 : 100000};
            nanosleep(&ts, NULL);
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- process state */

static gc3_status_t gc3_net_start_locked(gc3_diag_t *diag)
{
    ucp_params_t        cp;
    ucp_worker_params_t wp;
    ucp_config_t       *cfg;
    ucp_context_attr_t  attr;
    ucs_status_t        st;
    int                 rc;

    if (gc3_net.ctx != NULL) {
        return GC3_OK;
    }
    st = ucp_config_read(NULL, NULL, &cfg);
    if (st != UCS_OK) {
        gc3_diag_add(diag, "net: ucp_config_read: %s", ucs_status_string(st));
        return GC3_ERR_IO;
    }
    memset(&cp, 0, sizeof(cp));
    cp.field_mask = UCP_PARAM_FIELD_FEATURES;
    cp.features   = UCP_FEATURE_RMA;
    st            = ucp_init(&cp, cfg, &gc3_net.ctx);
    ucp_config_release(cfg);
    if (st != UCS_OK) {
        gc3_net.ctx = NULL;
        gc3_diag_add(diag, "net: ucp_init: %s", ucs_status_string(st));
        return GC3_ERR_IO;
    }
    memset(&attr, 0, sizeof(attr));
    attr.field_mask  = UCP_ATTR_FIELD_MEMORY_TYPES;
    gc3_net.cuda_mem = ucp_context_query(gc3_net.ctx, &attr) == UCS_OK &&
                       (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
    memset(&wp, 0, sizeof(wp));
    wp.field_mask  = UCP_WORKER_PARAM_FIELD_THREAD_MODE;
    wp.thread_mode = UCS_THREAD_MODE_SERIALIZED;
    st             = ucp_worker_create(gc3_net.ctx, &wp, &gc3_net.worker);
    if (st != UCS_OK) {
        gc3_diag_add(diag, "net: ucp_worker_create: %s", ucs_status_string(st));
        goto err_ctx;
    }
    gc3_net.stop = 0;
    rc           = pthread_create(&gc3_net.thread, NULL, gc3_net_proxy, NULL);
    if (rc != 0) {
        gc3_diag_add(diag, "net: cannot start the proxy thread: %s", strerror(rc));
        goto err_worker;
    }
    return GC3_OK;

err_worker:
    ucp_worker_destroy(gc3_net.worker);
    gc3_net.worker = NULL;
err_ctx:
    ucp_cleanup(gc3_net.ctx);
    gc3_net.ctx = NULL;
    return GC3_ERR_IO;
}

int gc3_exec_net_cuda_memory(void)
{
    static int answer = -2; /* not asked yet */
    int        a;

    pthread_mutex_lock(&gc3_net.lock);
    if (answer == -2 && gc3_net.ctx != NULL) {
        answer = gc3_net.cuda_mem;
    } else if (answer == -2) {
        ucp_params_t       cp;
        ucp_config_t      *cfg;
        ucp_context_h      ctx;
        ucp_context_attr_t attr;
        answer = -1;
        memset(&cp, 0, sizeof(cp));
        cp.field_mask = UCP_PARAM_FIELD_FEATURES;
        cp.features   = UCP_FEATURE_RMA;
        if (ucp_config_read(NULL, NULL, &cfg) == UCS_OK) {
            if (ucp_init(&cp, cfg, &ctx) == UCS_OK) {
                memset(&attr, 0, sizeof(attr));
                attr.field_mask = UCP_ATTR_FIELD_MEMORY_TYPES;
                answer          = ucp_context_query(ctx, &attr) == UCS_OK &&
                         (attr.memory_types & UCS_BIT(UCS_MEMORY_TYPE_CUDA)) != 0;
                ucp_cleanup(ctx);
            }
            ucp_config_release(cfg);
        }
    }
    a = answer;
    pthread_mutex_unlock(&gc3_net.lock);
    return a;
}

/* progress until the request completes or `seconds` pass (lock held) */
static void gc3_net_wait_req_locked(void *req, double seconds)
{
    struct timespec t0, t;
    if (req == NULL || UCS_PTR_IS_ERR(req)) {
        return;
    }
    clock_gettime(CLOCK_MONOTONIC, &t0);
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
        ucp_worker_progress(gc3_net.worker);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > seconds) {
            return; /* a dead peer: leave the request to UCX */
        }
    }
    ucp_request_free(req);
}

/* the last plan went: endpoints, worker and context too, and the thread stops */
static void gc3_net_stop_locked(void)
{
    if (gc3_net.ctx == NULL) {
        return;
    }
    gc3_net.stop = 1;
    pthread_mutex_unlock(&gc3_net.lock);
    pthread_join(gc3_net.thread, NULL);
    pthread_mutex_lock(&gc3_net.lock);
    while (gc3_net.eps != NULL) {
        gc3_net_ep_t       *e = gc3_net.eps;
        ucp_request_param_t prm;
        memset(&prm, 0, sizeof(prm));
        prm.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS;
        prm.flags        = UCP_EP_CLOSE_FLAG_FORCE;
        gc3_net_wait_req_locked(ucp_ep_close_nbx(e->ep, &prm), 1.0);
        gc3_net.eps = e->next;
        free(e->addr);
        free(e);
    }
    ucp_worker_destroy(gc3_net.worker);
    ucp_cleanup(gc3_net.ctx);
    gc3_net.worker = NULL;
    gc3_net.ctx    = NULL;
}

/* the endpoint to a worker address, created on first use (lock held) */
static gc3_net_ep_t *gc3_net_ep_get_locked(const void *addr, size_t len, int peer_errors, gc3_diag_t *diag)
{
    ucp_ep_params_t ep;
    gc3_net_ep_t   *e;
    ucs_status_t    st;

    for (e = gc3_net.eps; e != NULL; e = e->next) {
        if (e->addr_len == len && e->peer_errors == peer_errors && memcmp(e->addr, addr, len) == 0) {
            return e;
        }
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL || (e->addr = malloc(len)) == NULL) {
        free(e);
        return NULL;
    }
    memcpy(e->addr, addr, len);
    e->addr_len    = len;
    e->peer_errors = peer_errors;
    memset(&ep, 0, sizeof(ep));
    /* peer errors: a dead peer is reported at once, but UCX then uses only transports that can
     * detect it (UCX 1.13: not its shared-memory ones, so TCP between processes of one host) */
    ep.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS | UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE;
    ep.address    = (const ucp_address_t *)e->addr;
    ep.err_mode   = peer_errors ? UCP_ERR_HANDLING_MODE_PEER : UCP_ERR_HANDLING_MODE_NONE;
    if (peer_errors) {
        ep.field_mask |= UCP_EP_PARAM_FIELD_ERR_HANDLER;
        ep.err_handler.cb  = gc3_net_ep_error;
        ep.err_handler.arg = e;
    }
    st                 = ucp_ep_create(gc3_net.worker, &ep, &e->ep);
    if (st != UCS_OK) {
        gc3_diag_add(diag, "net: ucp_ep_create: %s", ucs_status_string(st));
        free(e->addr);
        free(e);
        return NULL;
    }
    e->next     = gc3_net.eps;
    gc3_net.eps = e;
    return e;
}

/* ---------------------------------------------------------------- plans */

/* what each rank publishes: its net region's address, then the lengths and bytes of its worker
 * address and packed remote key */
typedef struct {
    uint64_t base, slot_base;   /* the net region; direct: the slot region */
    uint32_t addr_len, rkey_len, slot_rkey_len;
    int32_t  ok;
} gc3_net_card_t;

static void gc3_net_plan_release_locked(gc3_net_plan_t *np)
{
    for (int q = 0; np->plan != NULL && q < np->plan->nranks; q++) {
        if (np->rkeys != NULL && np->rkeys[q] != NULL) {
            ucp_rkey_destroy(np->rkeys[q]);
        }
        if (np->slot_rkeys != NULL && np->slot_rkeys[q] != NULL) {
            ucp_rkey_destroy(np->slot_rkeys[q]);
        }
    }
    if (np->memh != NULL) {
        ucp_mem_unmap(gc3_net.ctx, np->memh);
    }
    if (np->slot_memh != NULL) {
        ucp_mem_unmap(gc3_net.ctx, np->slot_memh);
    }
    free(np->rkeys);
    free(np->slot_rkeys);
    free(np->links);
    free(np);
}

/* A plan's setup in progress: phase 0 exchanges the cards, phase 1 the address and key bytes,
 * each rank's padded to the largest (both exchanges happen on every rank or on none). */
struct gc3_rt_net_setup {
    gc3_plan_t     *p;
    gc3_net_plan_t *np;
    int             counted; /* holds one of gc3_net.users */
    int             phase;
    gc3_rt_xchg_t   x;
    ucp_address_t  *waddr;
    size_t          waddr_len, rkey_len, slot_rkey_len, blob;
    void           *rkey_buf, *slot_rkey_buf;
    gc3_net_card_t *cards;   /* everybody's, after phase 0 */
};

/* The end of a setup (ok or not): what was not handed to the plan is released. */
static gc3_status_t gc3_net_setup_end(gc3_rt_net_setup_t *ns, gc3_status_t status)
{
    pthread_mutex_lock(&gc3_net.lock);
    if (ns->waddr != NULL) {
        ucp_worker_release_address(gc3_net.worker, ns->waddr);
    }
    if (ns->rkey_buf != NULL) {
        ucp_rkey_buffer_release(ns->rkey_buf);
    }
    if (ns->slot_rkey_buf != NULL) {
        ucp_rkey_buffer_release(ns->slot_rkey_buf);
    }
    if (status == GC3_OK) {
        ns->np->next     = gc3_net.plans;
        gc3_net.plans    = ns->np;
        ns->p->net_state = ns->np;
    } else if (ns->counted) {
        gc3_net_plan_release_locked(ns->np);
        if (--gc3_net.users == 0) {
            gc3_net_stop_locked();
        }
    } else {
        free(ns->np);
    }
    pthread_mutex_unlock(&gc3_net.lock);
    gc3_rt_xchg_release(&ns->x);
    free(ns->cards);
    free(ns);
    return status;
}

/* Memory of the plan registered for remote access (lock held), its remote key packed. Once per
 * plan; teardown deregisters it (gc3_net_plan_release_locked). */
static gc3_status_t gc3_net_register(void *addr, size_t len, ucs_memory_type_t mem, const char *what,
                                     ucp_mem_h *memh, void **rkey_buf, size_t *rkey_len, gc3_diag_t *diag)
{
    ucp_mem_map_params_t mp;
    ucs_status_t         st;
    memset(&mp, 0, sizeof(mp));
    mp.field_mask  = UCP_MEM_MAP_PARAM_FIELD_ADDRESS | UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                     UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
    mp.address     = addr;
    mp.length      = len;
    mp.memory_type = mem;
    st             = ucp_mem_map(gc3_net.ctx, &mp, memh);
    if (st == UCS_OK) {
        st = ucp_rkey_pack(gc3_net.ctx, *memh, rkey_buf, rkey_len);
    }
    if (st != UCS_OK) {
        gc3_diag_add(diag, "net: registering %zu bytes of %s memory for remote access: %s", len, what,
                     ucs_status_string(st));
        return GC3_ERR_IO;
    }
    return GC3_OK;
}

static gc3_status_t gc3_net_setup_post(gc3_plan_t *p, int ok, gc3_diag_t *diag, gc3_rt_net_setup_t **ns_p)
{
    gc3_rt_net_setup_t *ns = calloc(1, sizeof(*ns));
    gc3_net_card_t     *mine;
    gc3_status_t        status;
    ucs_status_t        st;

    *ns_p = NULL;
    if (ns == NULL || (ns->np = calloc(1, sizeof(*ns->np))) == NULL ||
        gc3_rt_xchg_alloc(&ns->x, sizeof(gc3_net_card_t), p->nranks, "the exchange of UCX worker addresses") != GC3_OK) {
        if (ns != NULL) {
            free(ns->np);
        }
        free(ns);
        return GC3_ERR_NO_MEMORY; /* out of host memory: the peers time out */
    }
    ns->p    = p;
    mine     = (gc3_net_card_t *)ns->x.send;
    mine->ok = ok;
    pthread_mutex_lock(&gc3_net.lock);
    if (mine->ok && gc3_net_start_locked(diag) == GC3_OK) {
        gc3_net.users++; /* from here on, teardown (or gc3_net_setup_end) gives it back */
        ns->counted  = 1;
        ns->np->plan = p;
        st           = ucp_worker_get_address(gc3_net.worker, &ns->waddr, &ns->waddr_len);
        if (st != UCS_OK) {
            gc3_diag_add(diag, "net: ucp_worker_get_address: %s", ucs_status_string(st));
            mine->ok = 0;
        }
    } else {
        mine->ok = 0;
    }
    if (mine->ok && p->layout.net_direct && p->exec->params.backend == GC3_BACKEND_CUDA && !gc3_net.cuda_mem) {
        gc3_diag_add(diag, "net: the GPUDirect path needs a UCX with CUDA memory support; this process's UCX "
                     "reports none (ucp_context_query)");
        mine->ok = 0;
    }
    if (mine->ok && p->net != NULL) {
        mine->ok = gc3_net_register(p->net, p->layout.net_bytes, UCS_MEMORY_TYPE_HOST, "host", &ns->np->memh,
                                    &ns->rkey_buf, &ns->rkey_len, diag) == GC3_OK;
    }
    if (mine->ok && p->net_slots != NULL) {
        int cuda = p->exec->params.backend == GC3_BACKEND_CUDA;
        mine->ok = gc3_net_register(p->net_slots, p->layout.net_slot_bytes,
                                    cuda ? UCS_MEMORY_TYPE_CUDA : UCS_MEMORY_TYPE_HOST, cuda ? "GPU" : "host",
                                    &ns->np->slot_memh, &ns->slot_rkey_buf, &ns->slot_rkey_len, diag) == GC3_OK;
    }
    pthread_mutex_unlock(&gc3_net.lock);
    mine->base          = (uint64_t)(uintptr_t)p->net;
    mine->slot_base     = (uint64_t)(uintptr_t)p->net_slots;
    mine->addr_len      = mine->ok ? (uint32_t)ns->waddr_len : 0;
    mine->rkey_len      = mine->ok ? (uint32_t)ns->rkey_len : 0;
    mine->slot_rkey_len = mine->ok ? (uint32_t)ns->slot_rkey_len : 0;
    status         = gc3_rt_xchg_post(p->exec, &ns->x, diag);
    if (status != GC3_OK) {
        return gc3_net_setup_end(ns, status);
    }
    *ns_p = ns;
    return GC3_OK;
}

/* Phase 0 done: every rank ready? Then post the address and key bytes. */
static gc3_status_t gc3_net_setup_addresses(gc3_rt_net_setup_t *ns, gc3_diag_t *diag)
{
    const int    R = ns->p->nranks;
    gc3_status_t status = GC3_OK;

    ns->cards = malloc((size_t)R * sizeof(gc3_net_card_t));
    if (ns->cards == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    memcpy(ns->cards, ns->x.recv, (size_t)R * sizeof(gc3_net_card_t));
    gc3_rt_xchg_release(&ns->x);
    for (int q = 0; q < R; q++) {
        size_t b = (size_t)ns->cards[q].addr_len + ns->cards[q].rkey_len + ns->cards[q].slot_rkey_len;
        ns->blob = b > ns->blob ? b : ns->blob;
        if (!ns->cards[q].ok) {
            if (q != ns->p->rank) {
                gc3_diag_add(diag, "net: rank %d could not set up its inter-node connections", q);
            }
            status = GC3_ERR_IO; /* every rank sees the same cards: none goes on */
        }
    }
    if (status != GC3_OK) {
        return status;
    }
    status = gc3_rt_xchg_alloc(&ns->x, ns->blob, R, "the exchange of UCX addresses and remote keys");
    if (status != GC3_OK) {
        return status;
    }
    memcpy(ns->x.send, ns->waddr, ns->waddr_len);
    if (ns->rkey_len > 0) {
        memcpy(ns->x.send + ns->waddr_len, ns->rkey_buf, ns->rkey_len);
    }
    if (ns->slot_rkey_len > 0) {
        memcpy(ns->x.send + ns->waddr_len + ns->rkey_len, ns->slot_rkey_buf, ns->slot_rkey_len);
    }
    ns->phase = 1;
    return gc3_rt_xchg_post(ns->p->exec, &ns->x, diag);
}

/* Phase 1 done: one link per connection to another node. */
static gc3_status_t gc3_net_setup_links(gc3_rt_net_setup_t *ns, const gc3_rt_layout_t *layouts, gc3_diag_t *diag)
{
    gc3_plan_t     *p = ns->p;
    gc3_net_plan_t *np = ns->np;
    const int       R = p->nranks;
    gc3_net_card_t *cards = ns->cards;
    const char     *blobs = ns->x.recv;
    gc3_status_t    status = GC3_OK;
    ucs_status_t    st;

    pthread_mutex_lock(&gc3_net.lock);
    np->rkeys      = calloc((size_t)R, sizeof(ucp_rkey_h));
    np->slot_rkeys = calloc((size_t)R, sizeof(ucp_rkey_h));
    np->links      = calloc((size_t)(2 * p->ntbs + 1), sizeof(gc3_net_link_t));
    if (np->rkeys == NULL || np->slot_rkeys == NULL || np->links == NULL) {
        status = GC3_ERR_NO_MEMORY;
    }
    for (int t = 0; t < p->ntbs && status == GC3_OK; t++) {
        for (int kind = 0; kind < 2 && status == GC3_OK; kind++) {
            const gc3_rt_conn_t *c = &p->conn[t];
            int                  q = kind == GC3_LINK_OUT ? p->tbs[t].send : p->tbs[t].recv;
            int                  u;
            gc3_net_link_t      *l;
            const char          *qb = blobs + (size_t)q * ns->blob;
            if (kind == GC3_LINK_OUT ? c->send_lens == NULL : !c->recv_remote) {
                continue;
            }
            u = kind == GC3_LINK_OUT ? gc3_flat_peer_receiver(p->flat, p->rank, t) : gc3_flat_peer_sender(p->flat, p->rank, t);
            l = &np->links[np->nlinks];
            l->kind = kind;
            l->tb   = t;
            l->peer = q;
            l->chan = p->tbs[t].chan;
            l->ep   = gc3_net_ep_get_locked(qb, cards[q].addr_len, p->exec->params.net_peer_errors, diag);
            if (l->ep == NULL) {
                status = GC3_ERR_IO;
                break;
            }
            if (np->rkeys[q] == NULL) {
                st = ucp_ep_rkey_unpack(l->ep->ep, qb + cards[q].addr_len, &np->rkeys[q]);
                if (st == UCS_OK && cards[q].slot_rkey_len > 0) {
                    st = ucp_ep_rkey_unpack(l->ep->ep, qb + cards[q].addr_len + cards[q].rkey_len, &np->slot_rkeys[q]);
                }
                if (st != UCS_OK) {
                    gc3_diag_add(diag, "net: the remote key of rank %d: %s", q, ucs_status_string(st));
                    status = GC3_ERR_IO;
                    break;
                }
            }
            l->rkey = np->rkeys[q];
            if (kind == GC3_LINK_OUT) {
                const int direct = layouts[q].net_direct;
                l->l_ctr     = c->send_tail;
                l->l_lens    = c->send_lens;
                l->l_slots   = c->send_slots;
                l->r_ctr     = cards[q].base + (uint64_t)layouts[q].net_recv_off[u];
                l->r_slots   = (direct ? cards[q].slot_base : cards[q].base) + (uint64_t)layouts[q].net_recv_slots[u];
                l->slot_rkey = direct ? np->slot_rkeys[q] : np->rkeys[q];
                l->slot_memh = direct ? np->slot_memh : np->memh;
                l->slot_mem  = direct && p->exec->params.backend == GC3_BACKEND_CUDA ? UCS_MEMORY_TYPE_CUDA
                                                                                     : UCS_MEMORY_TYPE_HOST;
            } else {
                l->l_ctr = c->recv_head;
                l->r_ctr = cards[q].base + (uint64_t)layouts[q].net_send_off[u] + GC3_RT_NET_HEAD_OFF(&layouts[q]);
            }
            np->nlinks++;
        }
    }
    pthread_mutex_unlock(&gc3_net.lock);
    return status;
}

static gc3_status_t gc3_net_setup_test(gc3_rt_net_setup_t *ns, const gc3_rt_layout_t *layouts, gc3_diag_t *diag)
{
    gc3_status_t status = gc3_rt_xchg_test(ns->p->exec, &ns->x, diag);

    if (status == GC3_IN_PROGRESS) {
        return status;
    }
    if (status == GC3_OK && ns->phase == 0) {
        status = gc3_net_setup_addresses(ns, diag);
        if (status == GC3_OK) {
            return GC3_IN_PROGRESS;
        }
    } else if (status == GC3_OK) {
        status = gc3_net_setup_links(ns, layouts, diag);
    }
    return gc3_net_setup_end(ns, status);
}

static const char *gc3_net_setup_waiting(const gc3_rt_net_setup_t *ns)
{
    return ns->x.what;
}

static void gc3_net_setup_abandon(gc3_rt_net_setup_t *ns)
{
    (void)gc3_net_setup_end(ns, GC3_ERR_TIMEOUT); /* the pending exchange keeps its buffers */
}

static void gc3_net_teardown(gc3_plan_t *p)
{
    gc3_net_plan_t *np = p->net_state, **pp;
    struct timespec t0, t;

    if (np == NULL) {
        return;
    }
    pthread_mutex_lock(&gc3_net.lock);
    /* what the blocks published last (the final heads) still goes out, then the worker is
     * flushed: nothing of this plan is in flight when its memory goes. Bounded: a dead peer
     * does not hold the teardown. */
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        int pending = 0;
        for (int i = 0; i < np->nlinks && !np->failed; i++) {
            gc3_net_link_t *l = &np->links[i];
            (void)gc3_net_link_sweep(np, l);
            pending |= l->req != NULL ||
                       __atomic_load_n(l->l_ctr, __ATOMIC_ACQUIRE) != l->pushed;
        }
        ucp_worker_progress(gc3_net.worker);
        clock_gettime(CLOCK_MONOTONIC, &t);
        if (!pending || np->failed ||
            (double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > 5.0) {
            break;
        }
    }
    {
        ucp_request_param_t prm;
        memset(&prm, 0, sizeof(prm));
        gc3_net_wait_req_locked(ucp_worker_flush_nbx(gc3_net.worker, &prm), 5.0);
    }
    for (pp = &gc3_net.plans; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == np) {
            *pp = np->next;
            break;
        }
    }
    for (int i = 0; i < np->nlinks; i++) {
        if (np->links[i].req != NULL) {
            ucp_request_free(np->links[i].req); /* UCX releases it when (if) it completes */
        }
    }
    gc3_net_plan_release_locked(np);
    p->net_state = NULL;
    if (--gc3_net.users == 0) {
        gc3_net_stop_locked();
    }
    pthread_mutex_unlock(&gc3_net.lock);
}

static void gc3_net_call_begin(gc3_plan_t *p)
{
    (void)p;
    __atomic_add_fetch(&gc3_net.active, 1, __ATOMIC_ACQ_REL);
}

static void gc3_net_call_end(gc3_plan_t *p)
{
    (void)p;
    __atomic_sub_fetch(&gc3_net.active, 1, __ATOMIC_ACQ_REL);
}

static int gc3_net_failed(const gc3_plan_t *p, gc3_rt_error_t *e)
{
    gc3_net_plan_t *np = p->net_state;
    int             f  = 0;
    if (np == NULL) {
        return 0;
    }
    pthread_mutex_lock(&gc3_net.lock);
    if (np->failed) {
        *e = np->err;
        f  = 1;
    }
    pthread_mutex_unlock(&gc3_net.lock);
    return f;
}

static void gc3_net_describe(const gc3_plan_t *p, char *buf, size_t len)
{
    const gc3_net_plan_t *np = p->net_state;
    int                   out = 0, in = 0;
    if (np == NULL) {
        snprintf(buf, len, "no inter-node connection set up");
        return;
    }
    for (int i = 0; i < np->nlinks; i++) {
        out += np->links[i].kind == GC3_LINK_OUT;
        in += np->links[i].kind == GC3_LINK_IN;
    }
    if (p->layout.net_direct) {
        snprintf(buf, len, "%d outgoing and %d incoming connection(s) to other nodes through UCX (RMA put, proxy thread%s), "
                 "%s: slots in %s registered with UCX, put from slot to slot", out, in,
                 p->exec->params.net_peer_errors ? "" : ", peer errors off",
                 p->exec->params.backend == GC3_BACKEND_CUDA ? "GPUDirect" : "direct",
                 p->exec->params.backend == GC3_BACKEND_CUDA ? "GPU memory" : "host memory");
        return;
    }
    snprintf(buf, len, "%d outgoing and %d incoming connection(s) to other nodes through UCX (RMA put, proxy thread%s), "
             "host-staged: slots in %s", out, in, p->exec->params.net_peer_errors ? "" : ", peer errors off",
             p->exec->params.backend == GC3_BACKEND_CUDA ? "pinned host memory mapped into the GPU" : "host memory");
}

/* ---------------------------------------------------------------- the transport (gc3_rt_net.h) */

const gc3_rt_net_t gc3_rt_net_ucx = {
    .name          = "ucx",
    .setup_post    = gc3_net_setup_post,
    .setup_test    = gc3_net_setup_test,
    .setup_waiting = gc3_net_setup_waiting,
    .setup_abandon = gc3_net_setup_abandon,
    .teardown      = gc3_net_teardown,
    .call_begin    = gc3_net_call_begin,
    .call_end      = gc3_net_call_end,
    .failed        = gc3_net_failed,
    .describe      = gc3_net_describe,
};

#else /* no UCX: no transport (gc3_rt_net_choose gives none: plans that cross nodes are refused) */

int gc3_exec_net_cuda_memory(void)
{
    return -1;
}

#endif
