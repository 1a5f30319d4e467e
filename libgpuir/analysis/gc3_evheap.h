/* gc3 / libgpuir: the event queue of the analyses' simulations (sim.c, cost.c): a binary min-heap of
 * (key, id), ties taken in the order they were pushed, so that a simulation is deterministic. */
#ifndef GC3_EVHEAP_H
#define GC3_EVHEAP_H

#include "../gc3_status.h"

typedef struct {
    double key;
    long   seq; /* the order of pushes: ties of key go first in, first out */
    int    id;
} gc3_evheap_item_t;

typedef struct {
    gc3_evheap_item_t *items;
    int                n, cap;
    long               seq;
} gc3_evheap_t;

/* Room for cap items (pushes beyond it grow the heap; a zeroed gc3_evheap_t is an empty heap too). */
gc3_status_t gc3_evheap_init(gc3_evheap_t *h, int cap);
/* GC3_ERR_NO_MEMORY when it had to grow and could not (nothing pushed then). */
gc3_status_t gc3_evheap_push(gc3_evheap_t *h, int id, double key);
/* The item of the smallest key (h->n > 0). */
gc3_evheap_item_t gc3_evheap_pop(gc3_evheap_t *h);
void              gc3_evheap_free(gc3_evheap_t *h);

#endif
