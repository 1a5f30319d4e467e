/* gc3 / libgpuir: the registration cache of zero-copy (doc/design/zero-copy.md).
 *
 * Each rank of an executor exports the allocations that hold its callers' buffers (a CUDA IPC handle,
 * or on the host backend a shared file mapping) and maps those of the other ranks of its node, so
 * that a receiver reads a message the sender left in place. The ranks meet in a board per rank, a
 * POSIX shared memory segment on the node:
 *   exports  this rank's registrations: the allocation's range and handle, and a generation (0: none)
 *            written last, so a reader that sees the same generation before and after reading the
 *            rest read a whole entry; a registration that goes (freed and made again at the same
 *            place, or the least recently used one out when the cache is full) gets generation 0,
 *            and a new one a new generation (never reused);
 *   acks     per peer and registration of that peer, the generation this rank mapped (or could not:
 *            the top bit), written once its table says where;
 *   agree    per plan (by its number, the same on every rank), two records (odd and even calls apart):
 *            this rank's call of the plan (its number) and whether all its buffers of that call are mapped
 *            by every other rank of the node, written last; before it, the call's input and output
 *            (registration, generation, address), where the push form writes. When every rank is ready,
 *            the call runs in zero-copy mode (gc3_plan_t.zc_agree: large tiles, every message left in
 *            place or pushed); a rank reads the others' records of a call before it launches it, and posts
 *            its next call's record only after this call ended (one call in flight per plan), which it
 *            cannot before every rank posted this call's: a record is never overwritten before it was read.
 * A sender leaves a message in place only for a receiver that acknowledged the generation of the
 * registration it is in; everything else goes through the FIFOs. No rank waits for another here: a
 * registration a peer has not mapped yet is mapped at its next call or test, and used from then on.
 * A registration in use by a call in flight stays (its receivers may still read it). */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "gc3_rt_backend.h"

#define GC3_REG_MAGIC  0x6763337265673031ull /* "gc3reg01" */
#define GC3_REG_FAILED (1ull << 63)          /* in an ack: the generation could not be mapped */

typedef struct {
    uint64_t gen; /* 0: none; written last, read first and last */
    uint64_t base, size;
    char     handle[GC3_RT_HANDLE_BYTES];
} gc3_reg_export_t;

typedef struct {
    uint64_t magic;
    uint64_t version; /* bumped after every change of the exports */
    int32_t  nlocal, entries;
    uint64_t pid; /* the owner's process */
    char     pad[GC3_RT_LINE - 32];
} gc3_reg_board_t;

typedef struct {
    uint64_t ident, base, size, gen, used;
    int      refs;
} gc3_reg_mine_t;

/* The process's mappings of peers' allocations, shared by every cache (every communicator): CUDA maps
 * an allocation of an exporting process once per process (a second cudaIpcOpenMemHandle of it is
 * refused, "already mapped"), and communicators share buffers. One per handle (an allocation of one
 * process, on one backend); closed when the last cache entry that uses it goes. */
typedef struct gc3_reg_open {
    struct gc3_reg_open    *next;
    const gc3_rt_backend_t *be;
    char                    handle[GC3_RT_HANDLE_BYTES];
    char                   *mapped;
    uint64_t                size;
    int                     refs;
} gc3_reg_open_t;

typedef struct {
    uint64_t        gen; /* the generation mapped (or failed, GC3_REG_FAILED set); 0: none */
    uint64_t        size;
    uint64_t        base; /* where it is in the peer's process */
    gc3_reg_open_t *open; /* the process's mapping it uses (where it is mapped here) */
} gc3_reg_theirs_t;

struct gc3_reg {
    gc3_exec_t        *exec;
    gc3_reg_t         *next; /* the process's caches (gc3_reg_all) */
    int                entries, nlocal, me, nranks;
    int               *lrank;    /* per rank of the executor: its index on this node, -1 elsewhere */
    char               name[64]; /* this rank's board */
    gc3_reg_board_t   *board;
    size_t             board_bytes;
    gc3_reg_board_t  **peer;         /* per local index: the peer's board, mapped (NULL: not yet) */
    uint64_t          *peer_version; /* the version of it last read whole */
    gc3_reg_mine_t    *mine;         /* [entries] */
    gc3_reg_theirs_t  *theirs;       /* [nlocal][entries] */
    gc3_rt_zc_entry_t *table;        /* backend memory: [nlocal][entries] */
    uint64_t           next_gen, clock;
    int                unlinked;
};

/* Every cache of the process, for gc3_reg_forget; the lock also serializes the caches' use by threads of
 * different communicators (it is taken once per call: a zero-copy plan's call start, test and wait). */
static pthread_mutex_t gc3_reg_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static gc3_reg_t      *gc3_reg_all;
static gc3_reg_open_t *gc3_reg_opens; /* (under the lock) */

/* The process's mapping of the allocation `handle` names: the one already open (one more user), or a new
 * one. NULL when the backend cannot open it. */
static gc3_reg_open_t *gc3_reg_open_get(gc3_exec_t *e, const char handle[GC3_RT_HANDLE_BYTES], uint64_t size)
{
    gc3_reg_open_t *o;

    for (o = gc3_reg_opens; o != NULL; o = o->next) {
        if (o->be == e->be && o->size == size && memcmp(o->handle, handle, GC3_RT_HANDLE_BYTES) == 0) {
            o->refs++;
            return o;
        }
    }
    if ((o = calloc(1, sizeof(*o))) == NULL) {
        return NULL;
    }
    if (e->be->reg_open(e, handle, size, &o->mapped) != GC3_OK) {
        free(o);
        return NULL;
    }
    o->be   = e->be;
    o->size = size;
    o->refs = 1;
    memcpy(o->handle, handle, GC3_RT_HANDLE_BYTES);
    o->next       = gc3_reg_opens;
    gc3_reg_opens = o;
    gc3_rt_held_add(GC3_RT_HELD_MAPPED, (int64_t)size);
    gc3_rt_held_add(GC3_RT_HELD_MAPPINGS, 1);
    return o;
}

/* One user of mapping o fewer: the last one closes it. */
static void gc3_reg_open_put(gc3_exec_t *e, gc3_reg_open_t *o)
{
    if (--o->refs > 0) {
        return;
    }
    for (gc3_reg_open_t **pp = &gc3_reg_opens; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == o) {
            *pp = o->next;
            break;
        }
    }
    o->be->reg_close(e, o->mapped, o->size);
    gc3_rt_held_add(GC3_RT_HELD_MAPPED, -(int64_t)o->size);
    gc3_rt_held_add(GC3_RT_HELD_MAPPINGS, -1);
    free(o);
}

static gc3_reg_export_t *gc3_reg_exports(gc3_reg_board_t *b)
{
    return (gc3_reg_export_t *)((char *)b + sizeof(*b));
}

static uint64_t *gc3_reg_acks(gc3_reg_board_t *b, int entries)
{
    return (uint64_t *)((char *)b + sizeof(*b) + (size_t)entries * sizeof(gc3_reg_export_t));
}

/* An agreement record: the word (seq << 1 | ready), then per buffer (input, output) its registration
 * (id + 1, 0: none), that registration's generation and the buffer's address, then the call's
 * signature (count, datatype, op: a peer of another call is never pushed into). */
enum { GC3_REG_AGREE_WORD = 0, GC3_REG_AGREE_BUF = 1, GC3_REG_AGREE_SIG = 7, GC3_REG_AGREE_WORDS = 8 };

static size_t gc3_reg_board_bytes(int nlocal, int entries)
{
    return sizeof(gc3_reg_board_t) + (size_t)entries * sizeof(gc3_reg_export_t) +
           (size_t)nlocal * (size_t)entries * sizeof(uint64_t) +
           2 * GC3_REG_AGREE_PLANS * GC3_REG_AGREE_WORDS * sizeof(uint64_t);
}

static uint64_t *gc3_reg_agree(gc3_reg_board_t *b, int nlocal, int entries, int plan, uint64_t seq)
{
    return gc3_reg_acks(b, entries) + (size_t)nlocal * (size_t)entries +
           (2 * (size_t)plan + (seq & 1)) * GC3_REG_AGREE_WORDS;
}

int gc3_reg_connected(const gc3_reg_t *g)
{
    for (int l = 0; g != NULL && l < g->nlocal; l++) {
        if (l != g->me && g->peer[l] == NULL) {
            return 0;
        }
    }
    return g != NULL && g->nlocal <= 64;
}

uint64_t gc3_reg_all_peers(const gc3_reg_t *g)
{
    uint64_t m = 0;
    for (int l = 0; g != NULL && l < g->nlocal && l < 64; l++) {
        m |= l != g->me ? 1ull << l : 0;
    }
    return m;
}

void gc3_reg_agree_post(gc3_reg_t *g, int plan, uint64_t seq, int ready, const uint32_t id1[2], char *const va[2],
                        uint64_t sig)
{
    uint64_t *a = gc3_reg_agree(g->board, g->nlocal, g->entries, plan, seq);

    for (int b = 0; b < 2; b++) {
        const int ok                     = id1[b] != 0 && id1[b] <= (uint32_t)g->entries;
        a[GC3_REG_AGREE_BUF + 3 * b]     = ok ? id1[b] : 0;
        a[GC3_REG_AGREE_BUF + 3 * b + 1] = ok ? g->mine[id1[b] - 1].gen : 0;
        a[GC3_REG_AGREE_BUF + 3 * b + 2] = (uint64_t)(uintptr_t)va[b];
    }
    a[GC3_REG_AGREE_SIG] = sig;
    __atomic_store_n(&a[GC3_REG_AGREE_WORD], seq << 1 | (uint64_t)(ready != 0), __ATOMIC_RELEASE);
}

uint64_t gc3_reg_push_dst(gc3_reg_t *g, int plan, uint64_t seq, int local, int b, uint64_t sig, uint64_t bytes)
{
    gc3_reg_board_t *pb = local >= 0 && local < g->nlocal && local != g->me ? g->peer[local] : NULL;
    const uint64_t  *a;
    uint64_t         id1, gen, va, at = 0;

    if (pb == NULL || b < 0 || b > 1) {
        return 0;
    }
    a = gc3_reg_agree(pb, g->nlocal, g->entries, plan, seq);
    if (__atomic_load_n(&a[GC3_REG_AGREE_WORD], __ATOMIC_ACQUIRE) >> 1 != seq) {
        return 0; /* (gc3_reg_agree_test saw it: not reached) */
    }
    id1 = a[GC3_REG_AGREE_BUF + 3 * b];
    gen = a[GC3_REG_AGREE_BUF + 3 * b + 1];
    va  = a[GC3_REG_AGREE_BUF + 3 * b + 2];
    if (id1 == 0 || id1 > (uint64_t)g->entries || gen == 0 || a[GC3_REG_AGREE_SIG] != sig) {
        return 0; /* (another call: its first message fails it, as any message of another call does) */
    }
    pthread_mutex_lock(&gc3_reg_lock);
    {
        const gc3_reg_theirs_t *t = &g->theirs[(size_t)local * (size_t)g->entries + (id1 - 1)];
        /* the generation the peer holds for its call, mapped here (it said ready: every rank mapped it), the
         * whole buffer inside it */
        if (t->gen == gen && t->open != NULL && va >= t->base && va - t->base < t->size &&
            bytes <= t->size - (va - t->base)) {
            at = (uint64_t)(uintptr_t)t->open->mapped + (va - t->base);
        }
    }
    pthread_mutex_unlock(&gc3_reg_lock);
    return at;
}

gc3_status_t gc3_reg_agree_test(gc3_reg_t *g, int plan, uint64_t seq, int *all_p, int *missing_p)
{
    int all = 1;
    for (int l = 0; l < g->nlocal; l++) {
        gc3_reg_board_t *b = l == g->me ? g->board : g->peer[l];
        const uint64_t   w = __atomic_load_n(gc3_reg_agree(b, g->nlocal, g->entries, plan, seq), __ATOMIC_ACQUIRE);
        if (w >> 1 != seq) {
            *missing_p = l;
            return GC3_IN_PROGRESS;
        }
        all = all && (w & 1);
    }
    *all_p = all;
    return GC3_OK;
}

int gc3_reg_rank_of(const gc3_reg_t *g, int local)
{
    for (int q = 0; g != NULL && q < g->nranks; q++) {
        if (g->lrank[q] == local) {
            return q;
        }
    }
    return -1;
}

static gc3_status_t gc3_reg_board_create(gc3_reg_t *g, const gc3_exec_t *e, gc3_diag_t *diag)
{
    int   fd;
    void *m;

    snprintf(g->name, sizeof(g->name), "/gc3-%ld-reg-%016llx-r%d", (long)getpid(), (unsigned long long)e->uid,
             e->params.rank);
    fd = shm_open(g->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        gc3_diag_add(diag, "zero-copy: shm_open(%s): %s", g->name, strerror(errno));
        return GC3_ERR_IO;
    }
    if (ftruncate(fd, (off_t)g->board_bytes) != 0) {
        gc3_diag_add(diag, "zero-copy: ftruncate(%s, %zu): %s", g->name, g->board_bytes, strerror(errno));
        close(fd);
        shm_unlink(g->name);
        return GC3_ERR_IO;
    }
    m = mmap(NULL, g->board_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        gc3_diag_add(diag, "zero-copy: mmap(%s): %s", g->name, strerror(errno));
        shm_unlink(g->name);
        return GC3_ERR_IO;
    }
    g->board          = m;
    g->board->nlocal  = g->nlocal;
    g->board->entries = g->entries;
    g->board->pid     = (uint64_t)getpid();
    __atomic_store_n(&g->board->magic, GC3_REG_MAGIC, __ATOMIC_RELEASE);
    return GC3_OK;
}

gc3_status_t gc3_reg_create(gc3_exec_t *e, gc3_diag_t *diag, gc3_reg_t **reg_p)
{
    const int    R = e->params.nranks, me = e->params.rank;
    gc3_reg_t   *g;
    gc3_status_t status = GC3_ERR_NO_MEMORY;

    *reg_p = NULL;
    if (e->be->reg_query == NULL) {
        return GC3_OK; /* the backend has no registrations: zero-copy never applies */
    }
    g = calloc(1, sizeof(*g));
    if (g == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    g->nranks  = R;
    g->entries = e->params.reg_entries > 0 && e->params.reg_entries <= GC3_REG_ENTRIES_MAX ? e->params.reg_entries
                                                                                           : GC3_REG_ENTRIES_DEFAULT;
    g->lrank   = malloc((size_t)R * sizeof(int));
    if (g->lrank == NULL) {
        goto err;
    }
    for (int q = 0; q < R; q++) {
        const int local = e->node == NULL || e->node[q] == e->node[me];
        g->lrank[q]     = local ? g->nlocal++ : -1;
    }
    g->me           = g->lrank[me];
    g->board_bytes  = gc3_reg_board_bytes(g->nlocal, g->entries);
    g->peer         = calloc((size_t)g->nlocal, sizeof(*g->peer));
    g->peer_version = calloc((size_t)g->nlocal, sizeof(uint64_t));
    g->mine         = calloc((size_t)g->entries, sizeof(*g->mine));
    g->theirs       = calloc((size_t)g->nlocal * (size_t)g->entries, sizeof(*g->theirs));
    if (g->peer == NULL || g->peer_version == NULL || g->mine == NULL || g->theirs == NULL) {
        goto err;
    }
    status =
        e->be->mem_alloc(NULL, (size_t)g->nlocal * (size_t)g->entries * sizeof(gc3_rt_zc_entry_t), (char **)&g->table);
    if (status != GC3_OK) {
        gc3_diag_add(diag, "zero-copy: cannot allocate the table of peers' registrations");
        g->table = NULL;
        goto err;
    }
    status = gc3_reg_board_create(g, e, diag);
    if (status != GC3_OK) {
        goto err;
    }
    g->exec = e;
    pthread_mutex_lock(&gc3_reg_lock);
    g->next     = gc3_reg_all;
    gc3_reg_all = g;
    pthread_mutex_unlock(&gc3_reg_lock);
    *reg_p = g;
    return GC3_OK;

err:
    gc3_reg_destroy(e, g);
    return status;
}

const char *gc3_reg_board_name(const gc3_reg_t *g)
{
    return g != NULL && g->board != NULL ? g->name : "";
}

void gc3_reg_unlink(gc3_reg_t *g)
{
    if (g != NULL && g->board != NULL && !g->unlinked) {
        shm_unlink(g->name);
        g->unlinked = 1;
    }
}

void gc3_reg_connect(gc3_exec_t *e, const char *const *names)
{
    gc3_reg_t *g = e->reg;

    pthread_mutex_lock(&gc3_reg_lock);
    for (int q = 0; g != NULL && q < e->params.nranks; q++) {
        const int l = g->lrank[q];
        int       fd;
        void     *m;
        if (l < 0 || l == g->me || g->peer[l] != NULL || names[q] == NULL || names[q][0] != '/') {
            continue;
        }
        fd = shm_open(names[q], O_RDWR, 0600);
        if (fd < 0) {
            continue; /* no zero-copy with that peer (it is reported by the calls that could not use it) */
        }
        m = mmap(NULL, g->board_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        close(fd);
        if (m == MAP_FAILED) {
            continue;
        }
        if (__atomic_load_n(&((gc3_reg_board_t *)m)->magic, __ATOMIC_ACQUIRE) != GC3_REG_MAGIC ||
            ((gc3_reg_board_t *)m)->nlocal != g->nlocal || ((gc3_reg_board_t *)m)->entries != g->entries) {
            munmap(m, g->board_bytes);
            continue;
        }
        g->peer[l] = m;
    }
    pthread_mutex_unlock(&gc3_reg_lock);
}

/* Peer l's registration i as this rank mapped it: gone (unmapped, its ack withdrawn). */
static void gc3_reg_unmap(gc3_exec_t *e, gc3_reg_t *g, int l, int i)
{
    gc3_reg_theirs_t *t  = &g->theirs[(size_t)l * (size_t)g->entries + (size_t)i];
    gc3_rt_zc_entry_t z  = { 0, 0, 0, 0 };
    uint64_t         *ak = &gc3_reg_acks(g->board, g->entries)[(size_t)l * (size_t)g->entries + (size_t)i];

    __atomic_store_n(ak, 0, __ATOMIC_RELEASE);
    if (t->open != NULL) {
        (void)e->be->mem_write(&g->table[(size_t)l * (size_t)g->entries + (size_t)i], &z, sizeof(z));
        gc3_reg_open_put(e, t->open);
    }
    memset(t, 0, sizeof(*t));
}

/* Peer l's registration i, generation gen: mapped, in the table, acknowledged (or marked failed). */
static void gc3_reg_map(gc3_exec_t *e, gc3_reg_t *g, int l, int i, uint64_t gen, uint64_t base, uint64_t size,
                        const char handle[GC3_RT_HANDLE_BYTES])
{
    gc3_reg_theirs_t *t  = &g->theirs[(size_t)l * (size_t)g->entries + (size_t)i];
    uint64_t         *ak = &gc3_reg_acks(g->board, g->entries)[(size_t)l * (size_t)g->entries + (size_t)i];
    gc3_reg_open_t   *o  = gc3_reg_open_get(e, handle, size);

    t->gen = gen | GC3_REG_FAILED;
    if (o != NULL) {
        gc3_rt_zc_entry_t z = { base, size, (uint64_t)(uintptr_t)o->mapped, gen };
        if (e->be->mem_write(&g->table[(size_t)l * (size_t)g->entries + (size_t)i], &z, sizeof(z)) == GC3_OK) {
            t->gen  = gen;
            t->size = size;
            t->base = base;
            t->open = o;
        } else {
            gc3_reg_open_put(e, o);
        }
    }
    __atomic_store_n(ak, t->gen, __ATOMIC_RELEASE);
}

/* One cache's part of gc3_reg_progress (the lock held). */
static void gc3_reg_progress_one(gc3_reg_t *g)
{
    gc3_exec_t *e = g->exec;

    for (int l = 0; l < g->nlocal; l++) {
        gc3_reg_board_t *b = g->peer[l];
        uint64_t         v;
        int              torn = 0;
        if (b == NULL || (v = __atomic_load_n(&b->version, __ATOMIC_ACQUIRE)) == g->peer_version[l]) {
            continue;
        }
        for (int i = 0; i < g->entries; i++) {
            gc3_reg_export_t *x = &gc3_reg_exports(b)[i];
            gc3_reg_theirs_t *t = &g->theirs[(size_t)l * (size_t)g->entries + (size_t)i];
            char              handle[GC3_RT_HANDLE_BYTES];
            uint64_t          g1 = __atomic_load_n(&x->gen, __ATOMIC_ACQUIRE), base, size;
            if ((t->gen & ~GC3_REG_FAILED) == g1 && t->gen != 0) {
                continue; /* as mapped (or failed) */
            }
            base = x->base;
            size = x->size;
            memcpy(handle, x->handle, sizeof(handle));
            if (__atomic_load_n(&x->gen, __ATOMIC_ACQUIRE) != g1) {
                torn = 1; /* changing now: the next round */
                continue;
            }
            if (t->gen != 0) {
                gc3_reg_unmap(e, g, l, i);
            }
            if (g1 != 0) {
                gc3_reg_map(e, g, l, i, g1, base, size, handle);
            }
        }
        if (!torn) {
            g->peer_version[l] = v;
        }
    }
}

/* Every cache of the process, not only the calling executor's: a communicator no longer called must
 * still unmap what its peers dropped (its mapping keeps their freed memory allocated). One read of each
 * peer board's version where nothing changed. */
void gc3_reg_progress(gc3_exec_t *e)
{
    if (e->reg == NULL) {
        return;
    }
    pthread_mutex_lock(&gc3_reg_lock);
    for (gc3_reg_t *g = gc3_reg_all; g != NULL; g = g->next) {
        gc3_reg_progress_one(g);
    }
    pthread_mutex_unlock(&gc3_reg_lock);
}

int gc3_reg_forget(uint64_t pid, uint64_t base, uint64_t size)
{
    int n = 0;
    pthread_mutex_lock(&gc3_reg_lock);
    for (gc3_reg_t *g = gc3_reg_all; g != NULL; g = g->next) {
        for (int l = 0; l < g->nlocal; l++) {
            if (g->peer[l] == NULL || g->peer[l]->pid != pid) {
                continue;
            }
            for (int i = 0; i < g->entries; i++) {
                gc3_reg_theirs_t *t   = &g->theirs[(size_t)l * (size_t)g->entries + (size_t)i];
                const uint64_t    gen = t->gen;
                if (gen != 0 && !(gen & GC3_REG_FAILED) && t->base < base + size && base < t->base + t->size) {
                    gc3_reg_unmap(g->exec, g, l, i);
                    t->gen = gen | GC3_REG_FAILED; /* (not mapped again: the memory is gone) */
                    __atomic_store_n(&gc3_reg_acks(g->board, g->entries)[(size_t)l * (size_t)g->entries + (size_t)i],
                                     t->gen, __ATOMIC_RELEASE);
                    n++;
                }
            }
        }
    }
    pthread_mutex_unlock(&gc3_reg_lock);
    return n;
}

/* This rank's registration i goes (nothing of this rank's in flight uses it). */
static void gc3_reg_drop(gc3_reg_t *g, int i)
{
    gc3_reg_export_t *x = &gc3_reg_exports(g->board)[i];
    __atomic_store_n(&x->gen, 0, __ATOMIC_RELEASE);
    memset(&g->mine[i], 0, sizeof(g->mine[i]));
    __atomic_add_fetch(&g->board->version, 1, __ATOMIC_ACQ_REL);
}

/* A new buffer: registrations of this rank whose memory was freed since (its allocation is gone, or
 * another is at its place) go now, those of every communicator of the process, so that the peers unmap
 * them at their next call: a peer's mapping keeps the freed memory allocated. One backend query per
 * registration, only when a buffer is new. */
static void gc3_reg_sweep(gc3_exec_t *e, gc3_reg_t *g)
{
    for (int i = 0; i < g->entries; i++) {
        gc3_reg_mine_t   *m = &g->mine[i];
        gc3_rt_reg_info_t q;
        memset(&q, 0, sizeof(q));
        if (m->gen != 0 && m->refs == 0 &&
            (e->be->reg_query(e, (const void *)(uintptr_t)m->base, 1, &q) != GC3_OK || q.ident != m->ident ||
             q.base != m->base || q.size != m->size)) {
            gc3_reg_drop(g, i);
        }
    }
}

/* A place for a new registration of [base, base + size): registrations of this rank that overlap it are
 * of memory freed since (its identity is new): they go; then a free entry, or the least recently used one
 * no call in flight holds. -1 when every entry is in flight. */
static int gc3_reg_place(gc3_reg_t *g, uint64_t base, uint64_t size)
{
    int free_i = -1, lru = -1;
    for (int i = 0; i < g->entries; i++) {
        gc3_reg_mine_t *m = &g->mine[i];
        if (m->gen != 0 && m->refs == 0 && m->base < base + size && base < m->base + m->size) {
            gc3_reg_drop(g, i);
        }
        if (m->gen == 0 && free_i < 0) {
            free_i = i;
        } else if (m->gen != 0 && m->refs == 0 && (lru < 0 || m->used < g->mine[lru].used)) {
            lru = i;
        }
    }
    if (free_i < 0 && lru >= 0) {
        gc3_reg_drop(g, lru);
        free_i = lru;
    }
    return free_i;
}

/* gc3_reg_lookup's part under the lock: the registration's index (-1: none, *why_p says why). */
static int gc3_reg_find(gc3_exec_t *e, gc3_reg_t *g, const gc3_rt_reg_info_t *qp, uint64_t *peers_p, const char **why_p)
{
    gc3_rt_reg_info_t q = *qp;
    int               i, found = -1;

    for (i = 0; i < g->entries && found < 0; i++) {
        if (g->mine[i].gen != 0 && g->mine[i].ident == q.ident && g->mine[i].base == q.base &&
            g->mine[i].size == q.size) {
            found = i;
        }
    }
    if (found < 0) {
        gc3_reg_export_t *x;
        char              handle[GC3_RT_HANDLE_BYTES];
        for (gc3_reg_t *o = gc3_reg_all; o != NULL; o = o->next) {
            gc3_reg_sweep(o->exec, o); /* (other communicators' registrations of freed memory too) */
        }
        if ((found = gc3_reg_place(g, q.base, q.size)) < 0) {
            *why_p = "every entry of the registration cache (coll_gc3_reg_cache) holds a buffer of a call in flight";
            return -1;
        }
        memset(handle, 0, sizeof(handle));
        if (e->be->reg_handle(e, &q, handle) != GC3_OK) {
            *why_p = q.why != NULL ? q.why : "the buffer's allocation cannot be exported";
            return -1;
        }
        x       = &gc3_reg_exports(g->board)[found];
        x->base = q.base;
        x->size = q.size;
        memcpy(x->handle, handle, sizeof(handle));
        g->mine[found].ident = q.ident;
        g->mine[found].base  = q.base;
        g->mine[found].size  = q.size;
        g->mine[found].gen   = ++g->next_gen;
        __atomic_store_n(&x->gen, g->mine[found].gen, __ATOMIC_RELEASE);
        __atomic_add_fetch(&g->board->version, 1, __ATOMIC_ACQ_REL);
    }
    g->mine[found].used = ++g->clock;
    g->mine[found].refs++;
    for (int l = 0; l < g->nlocal && l < 64; l++) {
        if (l != g->me && g->peer[l] != NULL &&
            __atomic_load_n(&gc3_reg_acks(g->peer[l], g->entries)[(size_t)g->me * (size_t)g->entries + (size_t)found],
                            __ATOMIC_ACQUIRE) == g->mine[found].gen) {
            *peers_p |= 1ull << l;
        }
    }
    *why_p = *peers_p != 0 ? NULL : "no other rank of the node has mapped the buffer yet (its first call)";
    return found;
}

uint32_t gc3_reg_lookup(gc3_exec_t *e, const void *ptr, size_t bytes, uint64_t *peers_p, const char **why_p)
{
    gc3_reg_t        *g = e->reg;
    gc3_rt_reg_info_t q;
    int               found;

    *peers_p = 0;
    if (g == NULL) {
        *why_p = "zero-copy is off";
        return 0;
    }
    memset(&q, 0, sizeof(q));
    if (e->be->reg_query(e, ptr, bytes, &q) != GC3_OK) {
        *why_p = q.why != NULL ? q.why : "the buffer cannot be shared with the other processes";
        return 0;
    }
    pthread_mutex_lock(&gc3_reg_lock);
    found = gc3_reg_find(e, g, &q, peers_p, why_p);
    pthread_mutex_unlock(&gc3_reg_lock);
    return found < 0 ? 0 : (uint32_t)found + 1;
}

void gc3_reg_unref(gc3_exec_t *e, uint32_t id1)
{
    gc3_reg_t *g = e->reg;
    if (g != NULL && id1 > 0 && (int)id1 <= g->entries) {
        pthread_mutex_lock(&gc3_reg_lock);
        if (g->mine[id1 - 1].refs > 0) {
            g->mine[id1 - 1].refs--;
        }
        pthread_mutex_unlock(&gc3_reg_lock);
    }
}

int gc3_reg_local(const gc3_reg_t *g, int rank)
{
    return g != NULL && rank >= 0 ? g->lrank[rank] : -1;
}

const gc3_rt_zc_entry_t *gc3_reg_table(const gc3_reg_t *g, int *entries_p)
{
    *entries_p = g != NULL ? g->entries : 0;
    return g != NULL ? g->table : NULL;
}

void gc3_reg_destroy(gc3_exec_t *e, gc3_reg_t *g)
{
    if (g == NULL) {
        return;
    }
    pthread_mutex_lock(&gc3_reg_lock);
    for (gc3_reg_t **pp = &gc3_reg_all; *pp != NULL; pp = &(*pp)->next) {
        if (*pp == g) {
            *pp = g->next;
            break;
        }
    }
    for (int l = 0; g->theirs != NULL && g->board != NULL && l < g->nlocal; l++) {
        for (int i = 0; i < g->entries; i++) {
            if (g->theirs[(size_t)l * (size_t)g->entries + (size_t)i].gen != 0) {
                gc3_reg_unmap(e, g, l, i);
            }
        }
    }
    for (int l = 0; g->peer != NULL && l < g->nlocal; l++) {
        if (g->peer[l] != NULL) {
            munmap(g->peer[l], g->board_bytes);
        }
    }
    if (g->board != NULL) {
        gc3_reg_unlink(g);
        munmap(g->board, g->board_bytes);
    }
    if (g->table != NULL) {
        e->be->mem_free(NULL, (char *)g->table, (size_t)g->nlocal * (size_t)g->entries * sizeof(gc3_rt_zc_entry_t));
    }
    free(g->lrank);
    free(g->peer);
    free(g->peer_version);
    free(g->mine);
    free(g->theirs);
    free(g);
    pthread_mutex_unlock(&gc3_reg_lock);
}
