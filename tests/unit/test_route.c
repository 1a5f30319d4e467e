/* unit_route: the route of a call is the same on every rank (gc3_route.h), whatever memory each
 * rank passes, an agreement is posted only where it must be, and every rank posts its agreements in
 * the same calls. The ranks are simulated in one process, each with its own route cache; the
 * oracle of an agreement is the OR of the kinds every rank passed in the call that posted it. */
#include <string.h>
#include "gc3_route.h"
#include "gc3_test.h"

#define NR    4
#define MAXAG 100000

static gc3_route_cache_t caches[NR];
static int               posts[NR];        /* agreements each rank posted */
static long              posted_in[MAXAG]; /* the call that posted agreement i (-1: none yet) */
static int               posters[MAXAG];   /* how many ranks posted it */
static unsigned          oracle[MAXAG];    /* the OR of that call's kinds */
static long              call_no;          /* the call being made */
static unsigned          call_or;          /* the OR of its kinds over the ranks */
static int               mismatch;         /* a rank posted agreement i in another call than rank 0 */

static gc3_status_t sim_post(void *ctx, gc3_route_slot_t *s, unsigned kinds, void **req_p)
{
    int r = *(int *)ctx, i = posts[r]++;

    (void)kinds;
    (void)s;
    if (i >= MAXAG) {
        return GC3_ERR_NO_MEMORY;
    }
    if (posters[i]++ == 0) {
        posted_in[i] = call_no;
        oracle[i]    = call_or;
    } else if (posted_in[i] != call_no) {
        mismatch++;
    }
    *req_p = (void *)(long)(i + 1);
    return GC3_OK;
}

static gc3_status_t sim_wait(void *ctx, gc3_route_slot_t *s)
{
    (void)ctx;
    s->result = oracle[(long)s->req - 1];
    return GC3_OK;
}

static const gc3_route_ops_t sim_ops     = { sim_post, sim_wait };
static int                   rank_id[NR] = { 0, 1, 2, 3 };

/* One call on every rank (kinds[r]: rank r's buffers and process bits). 1 when every rank chose the
 * same route; *route_p, *agreed_p: rank 0's. */
static int call_all(int coll, uint64_t bytes, int root, const unsigned kinds[NR], unsigned recheck, int blocking,
                    gc3_route_t *route_p, unsigned *agreed_p)
{
    gc3_route_t routes[NR];
    unsigned    agreed[NR];
    int         same = 1;

    call_no++;
    call_or = 0;
    for (int r = 0; r < NR; r++) {
        call_or |= kinds[r];
    }
    for (int r = 0; r < NR; r++) {
        gc3_status_t st = gc3_route_decide(&caches[r], &sim_ops, &rank_id[r], gc3_route_key(coll, bytes, root),
                                           kinds[r], recheck, blocking, &routes[r], &agreed[r]);
        CHECK(st == GC3_OK, "call %ld rank %d: %s", call_no, r, gc3_status_string(st));
        same &= routes[r] == routes[0] && agreed[r] == agreed[0];
    }
    *route_p  = routes[0];
    *agreed_p = agreed[0];
    return same;
}

static void reset(void)
{
    memset(caches, 0, sizeof(caches));
    memset(posts, 0, sizeof(posts));
    memset(posters, 0, sizeof(posters));
    call_no  = 0;
    mismatch = 0;
}

#define H  (GC3_KIND_HOST | GC3_KIND_DRIVER)
#define D  (GC3_KIND_DEVICE | GC3_KIND_DRIVER)
#define M  (GC3_KIND_OTHER | GC3_KIND_DRIVER)
#define NC (GC3_KIND_HOST | GC3_KIND_NOCUDA) /* a process without a driver */

static void choose(void)
{
    CHECK(gc3_route_choose(GC3_KIND_HOST, 0) == GC3_ROUTE_PREV, "host everywhere: Open MPI's host path");
    CHECK(gc3_route_choose(GC3_KIND_DEVICE | GC3_KIND_DRIVER, 0) == GC3_ROUTE_CUDA, "device everywhere: gc3");
    CHECK(gc3_route_choose(GC3_KIND_HOST | GC3_KIND_DEVICE, 0) == GC3_ROUTE_CUDA, "host and device: gc3, adapted");
    CHECK(gc3_route_choose(GC3_KIND_OTHER, 0) == GC3_ROUTE_CUDA, "managed: gc3, copied to device memory");
    CHECK(gc3_route_choose(GC3_KIND_DEVICE | GC3_KIND_NOCUDA, 0) == GC3_ROUTE_PREV,
          "a rank without gc3's CUDA backend: staged");
    CHECK(gc3_route_choose(GC3_KIND_DEVICE, 1) == GC3_ROUTE_HOST, "the host backend takes every kind");
}

/* every mix of kinds over the ranks, blocking: one route for all, the right one, one agreement per key */
static void mixes(void)
{
    const unsigned k[3]   = { H, D, M };
    int            combos = 0;

    reset();
    for (int c = 0; c < 81; c++) {
        unsigned    kinds[NR];
        gc3_route_t route;
        unsigned    agreed, or = 0;
        int         x = c;
        for (int r = 0; r < NR; r++, x /= 3) {
            kinds[r] = k[x % 3];
            or |= kinds[r];
        }
        /* a key of its own per mix: the first call agrees */
        CHECK(call_all(0, 1000 + (uint64_t)c, -1, kinds, 64, 1, &route, &agreed), "mix %d: one route", c);
        CHECK(agreed == or, "mix %d: agreed %#x, the ranks passed %#x", c, agreed, or);
        CHECK(route == gc3_route_choose(or, 0), "mix %d: route %s", c, gc3_route_name(route));
        combos++;
    }
    CHECK(caches[0].agreements == 81, "one agreement per key: %llu", (unsigned long long)caches[0].agreements);
    CHECK(mismatch == 0, "every rank posted each agreement in the same call");
}

/* a steady program pays one agreement per key and one every `recheck` calls; a changed mix is seen
 * at the next recheck, and meanwhile every rank still takes one route */
static void recheck(void)
{
    const unsigned dev[NR] = { D, D, D, D }, host0[NR] = { H, D, D, D };
    gc3_route_t    route;
    unsigned       agreed;
    int            same = 1, cuda = 1;

    reset();
    for (int i = 0; i < 640; i++) {
        same &= call_all(1, 8, -1, dev, 64, 1, &route, &agreed);
        cuda &= route == GC3_ROUTE_CUDA;
    }
    CHECK(same && cuda, "640 device calls: gc3 on every rank");
    /* 1 at the first call, then one every 64 calls of the key */
    CHECK(caches[0].agreements == 10, "agreements of 640 calls with recheck 64: %llu",
          (unsigned long long)caches[0].agreements);
    /* rank 0 now passes host memory: the route stays gc3 (rank 0 adapts) */
    for (int i = 0; i < 100; i++) {
        same &= call_all(1, 8, -1, host0, 64, 1, &route, &agreed);
    }
    CHECK(same && route == GC3_ROUTE_CUDA && (agreed & GC3_KIND_HOST), "host at rank 0 seen by the agreement");
    /* recheck 0: every blocking call agrees and waits */
    reset();
    for (int i = 0; i < 10; i++) {
        same &= call_all(1, 8, -1, dev, 0, 1, &route, &agreed);
    }
    CHECK(same && caches[0].agreements == 10, "recheck 0: %llu agreements of 10 calls",
          (unsigned long long)caches[0].agreements);
    CHECK(mismatch == 0, "every rank posted each agreement in the same call");
}

/* a nonblocking first call takes gc3's route without waiting (each rank adapting its memory) and the
 * next applies the agreement it posted */
static void nonblocking(void)
{
    const unsigned host[NR] = { H, H, H, H }, mixed[NR] = { H, D, H, D };
    gc3_route_t    route;
    unsigned       agreed;

    reset();
    CHECK(call_all(2, 64, -1, host, 64, 0, &route, &agreed) && route == GC3_ROUTE_CUDA && agreed == 0,
          "first nonblocking call: gc3, each rank adapting (%s)", gc3_route_name(route));
    CHECK(call_all(2, 64, -1, host, 64, 0, &route, &agreed) && route == GC3_ROUTE_PREV,
          "second: host everywhere, Open MPI's (%s)", gc3_route_name(route));
    CHECK(call_all(3, 64, -1, mixed, 64, 0, &route, &agreed) && route == GC3_ROUTE_CUDA && agreed == 0,
          "another key: first call");
    CHECK(call_all(3, 64, -1, mixed, 64, 1, &route, &agreed) && route == GC3_ROUTE_CUDA,
          "a blocking call applies the nonblocking one's agreement (%s)", gc3_route_name(route));
    CHECK(caches[0].agreements == 2, "two agreements: %llu", (unsigned long long)caches[0].agreements);
}

/* a job without a CUDA driver on any rank stops agreeing after its first agreement is applied */
static void no_driver(void)
{
    const unsigned nc[NR] = { NC, NC, NC, NC };
    gc3_route_t    route;
    unsigned       agreed;
    int            same = 1, prev = 1;

    reset();
    for (int i = 0; i < 500; i++) {
        same &= call_all(i % 7, (uint64_t)i * 8, i % 3 - 1, nc, 64, i % 2, &route, &agreed);
        prev &= route == GC3_ROUTE_PREV || (i == 0 && route == GC3_ROUTE_CUDA && agreed == 0);
    }
    CHECK(same && prev, "no driver anywhere: Open MPI's component");
    /* the first call (nonblocking) posts one, applied only at its key's next call: the second call
     * (another key, blocking) agrees too; none after */
    CHECK(caches[0].agreements == 2, "two agreements: %llu", (unsigned long long)caches[0].agreements);
}

/* more keys than slots, with agreements pending when a slot changes hands: still one route, and
 * every agreement posted in the same call on every rank */
static void eviction(void)
{
    unsigned    kinds[NR];
    gc3_route_t route;
    unsigned    agreed;
    int         same = 1, right = 1;

    reset();
    for (int i = 0; i < 3000; i++) {
        unsigned or = 0;
        for (int r = 0; r < NR; r++) {
            kinds[r] = (i * 7 + r * 3) % 5 == 0 ? D : H;
            or |= kinds[r];
        }
        same &= call_all(i % 5, (uint64_t)(i % 97) * 4, -1, kinds, 4, i % 3 != 0, &route, &agreed);
        /* where it was agreed in this very call (blocking first call), the route is this call's mix */
        (void) or ;
        right &= agreed == 0 ? route == GC3_ROUTE_CUDA : route == gc3_route_choose(agreed, 0);
    }
    CHECK(same, "3000 calls over 485 keys in 64 slots: one route on every rank");
    CHECK(right, "each route follows its agreed kinds");
    CHECK(mismatch == 0, "every rank posted each agreement in the same call");
}

/* an agreement the others never join (ranks that called with different sizes: an erroneous program) gives up
 * after the caller's bound: the call is told so, and the slot forgets it (never waited for again, at the next
 * call of the key or when the communicator goes) */
static int          waits_given_up;
static gc3_status_t never_post(void *ctx, gc3_route_slot_t *s, unsigned kinds, void **req_p)
{
    (void)ctx;
    (void)s;
    (void)kinds;
    *req_p = &waits_given_up;
    return GC3_OK;
}
static gc3_status_t never_wait(void *ctx, gc3_route_slot_t *s)
{
    (void)ctx;
    CHECK(s->req == &waits_given_up, "the request waited for is the one posted");
    waits_given_up++;
    return GC3_ERR_TIMEOUT;
}
static void given_up(void)
{
    const gc3_route_ops_t ops = { never_post, never_wait };
    gc3_route_cache_t     c;
    gc3_route_t           route  = GC3_ROUTE_CUDA;
    unsigned              agreed = 1;
    gc3_status_t          st;

    memset(&c, 0, sizeof(c));
    st = gc3_route_decide(&c, &ops, NULL, gc3_route_key(0, 4000, -1), D, 4, 1, &route, &agreed);
    CHECK(st == GC3_ERR_TIMEOUT && waits_given_up == 1, "a blocking call's agreement that times out: GC3_ERR_TIMEOUT");
    gc3_route_drain(&c, &ops, NULL);
    CHECK(waits_given_up == 1, "the given-up agreement is not waited for again when the communicator goes");
    /* a nonblocking call posts without waiting; the next call of the key waits, gives up, says so */
    memset(&c, 0, sizeof(c));
    waits_given_up = 0;
    st             = gc3_route_decide(&c, &ops, NULL, gc3_route_key(0, 8000, -1), D, 4, 0, &route, &agreed);
    CHECK(st == GC3_OK && route == GC3_ROUTE_CUDA && waits_given_up == 0, "a nonblocking first call does not wait");
    st = gc3_route_decide(&c, &ops, NULL, gc3_route_key(0, 8000, -1), D, 4, 0, &route, &agreed);
    CHECK(st == GC3_ERR_TIMEOUT && waits_given_up == 1,
          "its next call gives the pending agreement up: GC3_ERR_TIMEOUT");
    gc3_route_drain(&c, &ops, NULL);
    CHECK(waits_given_up == 1, "and the communicator's end does not wait for it");
}

int main(void)
{
    choose();
    mixes();
    recheck();
    nonblocking();
    no_driver();
    eviction();
    given_up();
    return gc3_test_summary("test_route");
}
