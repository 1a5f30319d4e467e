/* gc3 / libgpuir: the event queue of the analyses' simulations (gc3_evheap.h). */
#include <stdlib.h>
#include "gc3_evheap.h"

static int gc3_evheap_before(const gc3_evheap_item_t *a, const gc3_evheap_item_t *b)
{
    return a->key < b->key || (a->key == b->key && a->seq < b->seq);
}

static gc3_status_t gc3_evheap_grow(gc3_evheap_t *h, int cap)
{
    gc3_evheap_item_t *n = realloc(h->items, (size_t)(cap > 0 ? cap : 1) * sizeof(*n));
    if (n == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    h->items = n;
    h->cap   = cap > 0 ? cap : 1;
    return GC3_OK;
}

gc3_status_t gc3_evheap_init(gc3_evheap_t *h, int cap)
{
    h->items = NULL;
    h->n = h->cap = 0;
    h->seq        = 0;
    return gc3_evheap_grow(h, cap);
}

gc3_status_t gc3_evheap_push(gc3_evheap_t *h, int id, double key)
{
    gc3_evheap_item_t it = { key, h->seq, id };
    int               i;

    if (h->n == h->cap && gc3_evheap_grow(h, 2 * h->cap) != GC3_OK) {
        return GC3_ERR_NO_MEMORY;
    }
    h->seq++;
    for (i = h->n++; i > 0;) {
        const int p = (i - 1) / 2;
        if (gc3_evheap_before(&h->items[p], &it)) {
            break;
        }
        h->items[i] = h->items[p];
        i           = p;
    }
    h->items[i] = it;
    return GC3_OK;
}

gc3_evheap_item_t gc3_evheap_pop(gc3_evheap_t *h)
{
    gc3_evheap_item_t top = h->items[0], last = h->items[--h->n];
    int               i = 0;

    while (h->n > 0) {
        int c = 2 * i + 1;
        if (c >= h->n) {
            break;
        }
        if (c + 1 < h->n && gc3_evheap_before(&h->items[c + 1], &h->items[c])) {
            c++;
        }
        if (gc3_evheap_before(&last, &h->items[c])) {
            break;
        }
        h->items[i] = h->items[c];
        i           = c;
    }
    if (h->n > 0) {
        h->items[i] = last;
    }
    return top;
}

void gc3_evheap_free(gc3_evheap_t *h)
{
    free(h->items);
    h->items = NULL;
    h->n = h->cap = 0;
}
