/* gc3 / libgpuir: the route of a call, the same on every rank (gc3_route.h). */
#include <string.h>
#include "gc3_route.h"
#include "gc3_status.h" /* gc3_fnv1a */

const char *gc3_route_name(gc3_route_t route)
{
    switch (route) {
    case GC3_ROUTE_CUDA:
        return "gc3 on the GPUs";
    case GC3_ROUTE_HOST:
        return "gc3's host backend";
    default:
        return "Open MPI's own component";
    }
}

gc3_route_t gc3_route_choose(unsigned agreed, int backend_host)
{
    if (backend_host) {
        return GC3_ROUTE_HOST;
    }
    if (!(agreed & (GC3_KIND_DEVICE | GC3_KIND_OTHER))) {
        return GC3_ROUTE_PREV; /* host memory everywhere: Open MPI's host speed */
    }
    if (agreed & GC3_KIND_NOCUDA) {
        return GC3_ROUTE_PREV; /* a rank cannot run gc3's CUDA backend: device buffers are staged there */
    }
    return GC3_ROUTE_CUDA;
}

uint64_t gc3_route_key(int coll, uint64_t bytes, int root)
{
    int64_t  v[3] = { coll, (int64_t)bytes, root };
    uint64_t h    = gc3_fnv1a(GC3_FNV1A_START, v, sizeof(v));
    return h != 0 ? h : 1;
}

/* s's pending agreement, waited for and applied */
static gc3_status_t gc3_route_apply(gc3_route_cache_t *c, const gc3_route_ops_t *ops, void *ctx, gc3_route_slot_t *s)
{
    gc3_status_t st = ops->wait(ctx, s);

    s->pending = 0;
    s->req     = NULL; /* (one that timed out is the caller's: abandoned, never waited for again) */
    if (st != GC3_OK) {
        return st == GC3_ERR_TIMEOUT ? st : GC3_ERR_IO; /* not known: the next call agrees again */
    }
    s->agreed = s->result;
    s->known  = 1;
    if (!(s->agreed & GC3_KIND_DRIVER)) {
        c->no_device = 1; /* no rank has a CUDA driver: no rank can ever pass device memory */
    }
    return GC3_OK;
}

static gc3_status_t gc3_route_post(gc3_route_cache_t *c, const gc3_route_ops_t *ops, void *ctx, gc3_route_slot_t *s,
                                   unsigned kinds)
{
    void *req = NULL;

    s->calls = 0;
    if (ops->post(ctx, s, kinds, &req) != GC3_OK) {
        return GC3_ERR_IO;
    }
    s->pending = 1;
    s->req     = req;
    c->agreements++;
    return GC3_OK;
}

gc3_status_t gc3_route_decide(gc3_route_cache_t *c, const gc3_route_ops_t *ops, void *ctx, uint64_t key, unsigned kinds,
                              unsigned recheck, int blocking, gc3_route_t *route, unsigned *agreed)
{
    gc3_route_slot_t *s = &c->slot[key % GC3_ROUTE_CACHE_SLOTS];
    gc3_status_t      st;

    *route  = GC3_ROUTE_PREV;
    *agreed = 0;
    if (c->no_device) {
        *agreed = GC3_KIND_HOST | GC3_KIND_NOCUDA; /* every rank's memory is host memory */
        goto out_choose;
    }
    if (s->key != key) {
        if (s->pending) {
            (void)gc3_route_apply(c, ops, ctx, s); /* another key's: its slot is this key's now */
        }
        memset(s, 0, sizeof(*s));
        s->key = key;
    }
    if (s->pending && (st = gc3_route_apply(c, ops, ctx, s)) != GC3_OK) {
        return st;
    }
    if (c->no_device) {
        *agreed = GC3_KIND_HOST | GC3_KIND_NOCUDA;
        goto out_choose;
    }
    s->calls++;
    if (!s->known || (recheck == 0 && blocking)) {
        if ((st = gc3_route_post(c, ops, ctx, s, kinds)) != GC3_OK) {
            return st;
        }
        if (!blocking) {
            *route = GC3_ROUTE_CUDA; /* no rank waits here; the next call of the key applies it */
            return GC3_OK;
        }
        if ((st = gc3_route_apply(c, ops, ctx, s)) != GC3_OK) {
            return st;
        }
    } else if (recheck == 0 || s->calls >= recheck) {
        (void)gc3_route_post(c, ops, ctx, s, kinds); /* (refused: every rank alike; the route stays) */
    }
    *agreed = s->agreed;
out_choose:
    *route = gc3_route_choose(*agreed, 0);
    return GC3_OK;
}

void gc3_route_drain(gc3_route_cache_t *c, const gc3_route_ops_t *ops, void *ctx)
{
    for (int i = 0; i < GC3_ROUTE_CACHE_SLOTS; i++) {
        if (c->slot[i].pending) {
            (void)gc3_route_apply(c, ops, ctx, &c->slot[i]);
        }
    }
}
