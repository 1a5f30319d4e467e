/* gc3 / libgpuir: the executor (see gc3_runtime.h): its parameters, its creation with a backend, and
 * what a plan says of itself. Backend-independent; the rest is split by concern (gc3_rt_exec.h):
 * the FIFO pool (pool.c), memory accounting (memory.c), preparing a plan (prepare.c), the calls
 * (calls.c). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "gc3_rt_exec.h"
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
    p->zc_fifo_bytes     = 0;
    p->threads_per_block = 512;
    p->resident_us       = GC3_RESIDENT_US_DEFAULT;
    p->yield_us          = GC3_YIELD_US_DEFAULT;
    p->fuse              = 1;
    p->wait_legacy       = GC3_WAIT_LEGACY_HOST;
    p->net_peer_errors   = 1;
    p->reg_entries       = GC3_REG_ENTRIES_DEFAULT;
    p->tile_bytes        = GC3_TILE_BYTES_DEFAULT;
    p->relabel           = 1;
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
        gc3_diag_add(diag,
                     "executor: invalid parameters (rank %d of %d, %d slots of %zu bytes, oob %s): slots must "
                     "be in [2, 1024], slot bytes in [64, 1 GiB]",
                     params->rank, params->nranks, params->slots, params->slot_bytes,
                     params->oob.iallgather && params->oob.test ? "set" : "missing");
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
    e->params      = *params;
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

/* one rank: the out-of-band interface has nothing to exchange */
static int gc3_exec_one_iallgather(void *ctx, const void *send, void *recv, size_t bytes, void **req_p)
{
    (void)ctx;
    memcpy(recv, send, bytes);
    *req_p = recv;
    return 0;
}

static int gc3_exec_one_test(void *ctx, void *req)
{
    (void)ctx;
    (void)req;
    return 1;
}

int gc3_exec_device_blocks(gc3_backend_t backend, int device, gc3_diag_t *diag)
{
    gc3_exec_params_t ep;
    gc3_exec_t       *x = NULL;
    gc3_diag_t        mine;
    int               blocks = 0;

    gc3_diag_init(&mine);
    gc3_exec_params_default(&ep, backend, 0, 1);
    ep.device         = device;
    ep.oob.iallgather = gc3_exec_one_iallgather;
    ep.oob.test       = gc3_exec_one_test;
    if (gc3_exec_create(&ep, diag != NULL ? diag : &mine, &x) == GC3_OK) {
        blocks = gc3_exec_max_blocks(x);
        gc3_exec_destroy(x);
        if (blocks <= 0) {
            gc3_diag_add(diag != NULL ? diag : &mine, "device %d: how many thread blocks it holds at once is unknown",
                         device);
        }
    }
    gc3_diag_cleanup(&mine);
    return blocks;
}

int gc3_exec_net_available(void)
{
    return gc3_rt_net_choose(NULL) != NULL;
}

void gc3_plan_net_describe(const gc3_plan_t *p, char *buf, size_t len)
{
    if (len > 0) {
        buf[0] = '\0';
    }
    if (p != NULL && p->crosses_nodes) {
        p->transport->describe(p, buf, len);
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

int gc3_plan_zc_pushed(const gc3_plan_t *p)
{
    return p != NULL && p->zc_big ? p->zc_pushed_last : 0;
}

const char *gc3_plan_zc_why(const gc3_plan_t *p)
{
    return p != NULL ? p->zc_why : NULL;
}

uint64_t gc3_plan_resumed(const gc3_plan_t *p)
{
    return p != NULL ? __atomic_load_n(&p->resumed, __ATOMIC_RELAXED) : 0;
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
        snprintf(buf, len,
                 "zero-copy: none of this rank's %d sends can leave its data in place (it is in scratch, or "
                 "the program writes it again before the receiver would have read it)",
                 z->sends);
    } else if (p->exec->reg == NULL) {
        snprintf(buf, len, "zero-copy: not used: %s",
                 p->exec->reg_why[0] ? p->exec->reg_why : "this backend cannot share buffers");
    } else {
        char homed[64] = "";
        if (z->homed > 0) {
            snprintf(homed, sizeof(homed), "; %d reductions keep their result in the output", z->homed);
        }
        const char *mode = p->zc_agree[0] && p->zc_agree[1] ? ", zero-copy mode (large tiles) in and out of place"
                           : p->zc_agree[0]                 ? ", zero-copy mode (large tiles) out of place"
                           : p->zc_agree[1]                 ? ", zero-copy mode (large tiles) in place"
                                                            : "";
        snprintf(buf, len,
                 "zero-copy: %d of this rank's %d sends may leave their data in place (out of place %d, in "
                 "place %d%s)%s%s%s",
                 n, z->sends, z->oop, z->ip, homed, mode, p->zc_why != NULL ? "; the last call did not: " : "",
                 p->zc_why != NULL ? p->zc_why : "");
    }
}
