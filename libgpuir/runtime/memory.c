/* gc3 / libgpuir: memory accounting: what gc3 holds in this process (the counters by kind of
 * gc3_rt_held_add, read by gc3_mem_held; the backends' deferred frees), and a plan's own record of
 * it (gc3_plan_memory). */
#include <stdio.h>
#include "gc3_rt_exec.h"

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

void gc3_plan_scratch_free(gc3_plan_t *p)
{
    if (p->scratch != NULL) {
        p->exec->be->mem_free(p, p->scratch, p->scratch_bytes);
        gc3_rt_held_add(GC3_RT_HELD_DEVICE, -(int64_t)p->mem.scratch);
    }
    p->scratch       = NULL;
    p->scratch_bytes = 0;
    p->mem.scratch   = 0;
}

/* The region's part of a plan's record (its layout L on this rank). */
void gc3_plan_mem_layout(gc3_plan_mem_t *m, const gc3_rt_layout_t *L, int ntbs, int slots, uint64_t payload,
                         uint64_t stride)
{
    m->slot_bytes = payload;
    m->slots      = slots;
    m->blocks     = ntbs;
    m->recv_conns = m->send_conns = m->net_conns = 0;
    m->fifo                                      = 0;
    m->pool                                      = L->pool_bytes;
    if (L->rconn != NULL) { /* a relabelled plan's union of connections (one node) */
        m->blocks     = L->nblocks;
        m->recv_conns = L->nrconn;
        m->send_conns = L->nsconn;
        m->fifo       = (uint64_t)L->nrconn *
                  (L->pooled ? GC3_RT_LINE : GC3_RT_LINE + gc3_rt_round((uint64_t)slots * stride, GC3_RT_LINE));
        m->flags = L->bytes - m->fifo;
        return;
    }
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

/* LL staging per buffer: payload only, 16-byte aligned */
size_t gc3_plan_stage_bytes(uint64_t payload)
{
    return gc3_rt_round(payload, 16) + 64;
}
