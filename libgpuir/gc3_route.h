/* gc3 / libgpuir: the route of a call, the same on every rank.
 *
 * MPI lets the ranks of one collective call pass memory of different kinds (host, pinned, managed,
 * device memory of their own GPU or of another) and datatypes of different layouts with one type
 * signature. Which way a call goes (gc3 on the GPUs, gc3's host backend, Open MPI's own component)
 * must nevertheless be the same on every rank, or one rank waits in gc3's plan for peers that went
 * to Open MPI's (a hang). So a route is chosen only from what every rank shares (the collective, its
 * size, root and op, the settings) and from the kinds of memory the ranks passed, OR-ed over the
 * ranks by an agreement; each rank then adapts what is only its own (copies its buffers into the
 * route's memory, packs a non-contiguous datatype) locally.
 *
 * The agreement costs one small host allreduce. A communicator keeps the agreed kinds per call key
 * (collective, bytes, root) in a route cache and agrees again only every `recheck` calls of a key
 * (posted with one call, applied at the next: a steady program pays a fraction of an allreduce per
 * call), and never again once an agreement showed that no rank has a CUDA driver (no rank can pass
 * device memory). Every rank makes the same calls with the same keys, so every rank's cache goes
 * through the same states and gives the same route. */
#ifndef GC3_ROUTE_H
#define GC3_ROUTE_H

#include <stdint.h>
#include "gc3_status.h"

/* What one rank passed and can run, as bits; the agreement ORs them over the ranks. */
#define GC3_KIND_HOST   1u  /* a significant buffer is host memory (pageable, pinned or registered) */
#define GC3_KIND_DEVICE 2u  /* ... device memory of the rank's own GPU */
#define GC3_KIND_OTHER  4u  /* ... managed memory, or device memory of another GPU */
#define GC3_KIND_DRIVER 8u  /* the process has a CUDA driver (without one no buffer is device memory) */
#define GC3_KIND_NOCUDA 16u /* the process cannot run gc3's CUDA backend (no driver, no GPU, built without CUDA) */

typedef enum {
    GC3_ROUTE_PREV, /* Open MPI's own component: host buffers as they are, device buffers staged or passed */
    GC3_ROUTE_CUDA, /* gc3 on the GPUs: each rank's data contiguous in device memory of its GPU */
    GC3_ROUTE_HOST  /* gc3's host backend: each rank's data contiguous in host memory */
} gc3_route_t;

const char *gc3_route_name(gc3_route_t route);

/* The route of a call whose ranks passed `agreed` (their kinds OR-ed); backend_host: gc3 runs host
 * memory with its host backend (coll_gc3_backend host: every call gc3 takes goes there, device
 * buffers copied to host memory, and no agreement is needed). */
gc3_route_t gc3_route_choose(unsigned agreed, int backend_host);

/* ---- the route cache of a communicator ---- */
#define GC3_ROUTE_CACHE_SLOTS 64

typedef struct {
    uint64_t key;     /* gc3_route_key's; 0: empty */
    unsigned agreed;  /* the kinds agreed last (known) */
    int      known;   /* an agreement was applied */
    int      pending; /* an agreement was posted; it is applied at the next call of the key */
    unsigned calls;   /* calls of the key since the last agreement was posted */
    unsigned result;  /* where the pending agreement's result arrives */
    void    *req;     /* the caller's handle of the pending agreement */
} gc3_route_slot_t;

typedef struct {
    gc3_route_slot_t slot[GC3_ROUTE_CACHE_SLOTS];
    int              no_device;  /* an agreement showed that no rank has a CUDA driver: none is needed again */
    uint64_t         agreements; /* posted (for messages and tests) */
} gc3_route_cache_t;

/* How the caller agrees: post an agreement of this rank's `kinds` (every rank posts in the same call
 * of the same key) whose result, the kinds OR-ed over the ranks, arrives in s->result (*req_p: the
 * caller's handle, kept in s->req); wait until s's pending agreement has arrived, or give it up
 * (GC3_ERR_TIMEOUT: the other ranks never joined it; the slot forgets it and it is never waited for
 * again). A post that fails must fail alike on every rank (the call then goes to Open MPI's component). */
typedef struct {
    gc3_status_t (*post)(void *ctx, gc3_route_slot_t *s, unsigned kinds, void **req_p);
    gc3_status_t (*wait)(void *ctx, gc3_route_slot_t *s);
} gc3_route_ops_t;

uint64_t gc3_route_key(int coll, uint64_t bytes, int root);

/* The route of a call of `key` whose own kinds are `kinds` (this rank's buffers, driver and
 * backend), the same on every rank: a pending agreement of the key (or of the key its slot held)
 * is waited for and applied; the first call of a key agrees (blocking: waits for it; nonblocking:
 * takes GC3_ROUTE_CUDA, the route every rank can take without knowing the others' memory: each adapts
 * its own, and where a rank cannot run gc3's CUDA backend the communicator's set-up finds it, alike
 * on every rank, and the call runs on gc3's host-staged exchange); every `recheck` calls one is posted and applied
 * at the next call (recheck 0: blocking calls agree before every call). *agreed: the kinds the
 * route was chosen from (0 where none was known yet). GC3_ERR_IO when an agreement could not be posted or
 * failed (the route is then GC3_ROUTE_PREV); GC3_ERR_TIMEOUT when its wait gave up (the caller fails the call). */
gc3_status_t gc3_route_decide(gc3_route_cache_t *c, const gc3_route_ops_t *ops, void *ctx, uint64_t key, unsigned kinds,
                              unsigned recheck, int blocking, gc3_route_t *route, unsigned *agreed);
/* The pending agreements of the cache, waited for (a communicator that goes). */
void gc3_route_drain(gc3_route_cache_t *c, const gc3_route_ops_t *ops, void *ctx);

#endif
