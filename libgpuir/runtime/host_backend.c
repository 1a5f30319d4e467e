/* gc3 / libgpuir: the host backend. One IR thread block = one host thread; a rank's region is
 * a POSIX shared memory segment that the peers map. Waits back off (spin briefly, then
 * sched_yield, then sleep) so that many ranks on a few cores do not starve each other. */
#define _GNU_SOURCE
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include "gc3_rt_backend.h"

/* ---------------------------------------------------------------- primitives for the core */

static inline void gc3_host_pause(uint64_t polls)
{
    if (polls < 64) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    } else if (polls < 512) {
        sched_yield();
    } else {
        struct timespec ts = {0, polls < 4096 ? 20000 : 200000}; /* 20 us, later 200 us */
        nanosleep(&ts, NULL);
    }
}

#define GC3_DEV
#define GC3_LEADER             1
#define GC3_SYNC()             ((void)0)
#define GC3_LOAD_ACQ(p)        __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GC3_LOAD_ACQ_LOCAL(p)  __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GC3_STORE_REL_LOCAL(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GC3_STORE_POST(p, v)   __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define GC3_FENCE_DATA()       __atomic_thread_fence(__ATOMIC_RELEASE)
#define GC3_NOW_NS()              gc3_exec_now_ns()
#define GC3_PAUSE(n)           gc3_host_pause(n)
#define GC3_SHARE_INT(x)       (x)
#define GC3_SHARE_U64(x)       (x)
#define GC3_LOAD_VOLATILE(p)   __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define GC3_STAMP(t, i)        ((void)0)
#define GC3_THREAD             0
#define GC3_THREADS            1

/* The chunk-ends table of each block (interp_core.inl). One thread computes them as cheaply as it
 * looks them up; the table is here so that the host tests check the logic the CUDA kernel relies
 * on, kept per plan from one call to the next as a resident kernel keeps it. */
#define GC3_HOST_ENDS_STEPS 96
typedef struct {
    gc3_core_end_t tab[GC3_HOST_ENDS_STEPS * GC3_RT_ENDS_CHUNKS];
    uint64_t       key[3];
} gc3_host_ends_t;
static __thread gc3_host_ends_t *gc3_host_ends; /* the table of the block this thread runs */
#define GC3_ENDS_TABLE         (gc3_host_ends != NULL ? gc3_host_ends->tab : (gc3_core_end_t *)0)
#define GC3_ENDS_STEPS         GC3_HOST_ENDS_STEPS
#define GC3_ENDS_KEY           (gc3_host_ends->key)

static inline void gc3_be_copy(char *dst, const char *src, uint64_t bytes)
{
    if (dst != src) {
        memmove(dst, src, bytes);
    }
}

/* (d2 NULL: one write, as a zero-copy rcs does) */
static inline void gc3_be_copy2(char *d1, char *d2, const char *src, uint64_t bytes)
{
    gc3_be_copy(d1, src, bytes);
    if (d2 != NULL) {
        gc3_be_copy(d2, src, bytes);
    }
}

/* dst = a op b (the ops are commutative) */
static inline void gc3_be_reduce3(int dtype, int op, char *dst, const char *a, const char *b, uint64_t n)
{
    size_t bytes = (size_t)n * gc3_dtype_size((gc3_dtype_t)dtype);
    if (dst == b) {
        (void)gc3_reduce_host((gc3_dtype_t)dtype, (gc3_op_t)op, dst, a, n);
        return;
    }
    if (dst != a) {
        memmove(dst, a, bytes);
    }
    (void)gc3_reduce_host((gc3_dtype_t)dtype, (gc3_op_t)op, dst, b, n);
}

static inline void gc3_be_reduce_n(int dtype, int op, char *dst, const char *const *x, int m, uint64_t n)
{
    gc3_be_reduce3(dtype, op, dst, x[0], x[1], n);
    for (int j = 2; j < m; j++) {
        gc3_be_reduce3(dtype, op, dst, dst, x[j], n); /* x[j] is scratch apart from dst (gc3_flat_fuse) */
    }
}

/* the message word of line i: the header (signature, then zeros), then `valid` bytes of src */
static inline uint32_t gc3_ll_word(uint64_t i, uint64_t sig, const char *src, uint64_t valid)
{
    uint32_t w = 0;
    if (gc3_ll_is_hdr(i)) {
        w = gc3_ll_hdr_word(i, sig);
    } else {
        uint64_t d = 4 * i - GC3_RT_MSG_HDR;
        if (d < valid) {
            memcpy(&w, src + d, valid - d >= 4 ? 4 : (size_t)(valid - d));
        }
    }
    return w;
}

static inline void gc3_be_ll_store(char *lines, uint64_t sig, const char *src, uint64_t valid, uint64_t bytes,
                                   uint32_t flag)
{
    uint64_t *l = (uint64_t *)lines;
    for (uint64_t i = 0; i < gc3_ll_words(bytes); i++) {
        __atomic_store_n(&l[i], ((uint64_t)flag << 32) | gc3_ll_word(i, sig, src, valid), __ATOMIC_RELAXED);
    }
}

static inline int gc3_be_ll_load(gc3_rt_tb_t *t, char *dst, const char *lines, uint64_t valid, uint64_t bytes,
                                 uint32_t flag, uint64_t *sig_p)
{
    const uint64_t *l = (const uint64_t *)lines;
    uint64_t        start = 0, here = 0, polls = 0;
    uint32_t        hdr[2] = {0, 0};
    for (uint64_t i = 0; i < gc3_ll_words(bytes); i++) {
        uint64_t v = __atomic_load_n(&l[i], __ATOMIC_RELAXED);
        uint32_t w;
        while ((uint32_t)(v >> 32) != flag) {
            if (*t->abort_flag) {
                return -1;
            }
            if ((++polls & 1023) == 0) {
                uint64_t now = gc3_exec_now_ns();
                if (start == 0) {
                    start = now - t->waited; /* (a wait resumed: what it had waited already) */
                    here  = now;
                } else if (t->timeout_s > 0 && (double)(now - start) * 1e-9 > t->timeout_s) {
                    return -2;
                } else if (t->yield_ns != 0 && now - here > t->yield_ns) {
                    t->waited = now - start;
                    return -3; /* give way (what was unpacked is written again when the step runs again) */
                }
            }
            gc3_host_pause(polls);
            v = __atomic_load_n(&l[i], __ATOMIC_RELAXED);
        }
        w = (uint32_t)v;
        if (gc3_ll_is_hdr(i)) {
            if (i < 2) {
                hdr[i] = w;
            }
        } else if (4 * i - GC3_RT_MSG_HDR < valid) {
            uint64_t d = 4 * i - GC3_RT_MSG_HDR;
            memcpy(dst + d, &w, valid - d >= 4 ? 4 : (size_t)(valid - d));
        }
    }
    *sig_p = gc3_ll_sig(hdr);
    return 0;
}

#include "interp_core.inl"

/* ---------------------------------------------------------------- the backend */

typedef struct {
    pthread_t      *threads;
    int             nthreads;
    gc3_rt_resume_t *resume;      /* one record per block (giving way) */
    uint64_t         calls;       /* the plan's calls so far (the number of the one in flight) */
    int             done;        /* blocks finished (atomic) */
    int              yielded;     /* some block gave way (atomic): the call runs again, resuming */
    int             failed;      /* some block returned -1 (atomic) */
    gc3_rt_error_t  err;
    int32_t         abort_flag;
    gc3_host_ends_t *ends;       /* one per block (zeroed: empty), or NULL without memory for them */
    pthread_mutex_t  join_lock;  /* whoever joins the threads (the call's end, or gc3_exec_quiesce) */
} gc3_host_state_t;

/* States whose threads run or ended without being joined: gc3_exec_quiesce ends them before the
 * library goes (a call that failed on another rank, abandoned by its caller, has threads that wait
 * until their timeout; unloaded under them, they would crash the process at its end). */
static struct {
    pthread_mutex_t    lock;
    gc3_host_state_t **s;
    int                n, cap;
} gc3_host_live = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

static void gc3_host_live_add(gc3_host_state_t *s)
{
    pthread_mutex_lock(&gc3_host_live.lock);
    if (gc3_host_live.n == gc3_host_live.cap) {
        int                ncap = gc3_host_live.cap ? 2 * gc3_host_live.cap : 16;
        gc3_host_state_t **n    = realloc(gc3_host_live.s, (size_t)ncap * sizeof(*n));
        if (n != NULL) {
            gc3_host_live.s   = n;
            gc3_host_live.cap = ncap;
        }
    }
    if (gc3_host_live.n < gc3_host_live.cap) {
        gc3_host_live.s[gc3_host_live.n++] = s; /* (else not ended by gc3_exec_quiesce) */
    }
    pthread_mutex_unlock(&gc3_host_live.lock);
}

static void gc3_host_live_remove(gc3_host_state_t *s)
{
    pthread_mutex_lock(&gc3_host_live.lock);
    for (int i = 0; i < gc3_host_live.n; i++) {
        if (gc3_host_live.s[i] == s) {
            gc3_host_live.s[i] = gc3_host_live.s[--gc3_host_live.n];
            break;
        }
    }
    pthread_mutex_unlock(&gc3_host_live.lock);
}

/* Join the threads of the state's last spawn, once (whoever comes first: the call's end, its run
 * again, gc3_exec_quiesce). */
static void gc3_host_join_threads(gc3_host_state_t *s)
{
    pthread_mutex_lock(&s->join_lock);
    for (int t = 0; t < s->nthreads; t++) {
        pthread_join(s->threads[t], NULL);
    }
    s->nthreads = 0;
    pthread_mutex_unlock(&s->join_lock);
}

typedef struct {
    gc3_plan_t *plan;
    int         tb;
} gc3_host_job_t;

static gc3_host_state_t *gc3_host_state(gc3_plan_t *p)
{
    if (p->be_state == NULL) {
        gc3_host_state_t *s = calloc(1, sizeof(*s));
        if (s == NULL) {
            return NULL;
        }
        pthread_mutex_init(&s->join_lock, NULL);
        p->be_state   = s;
        p->err        = &s->err;
        p->abort_flag = &s->abort_flag;
    }
    return p->be_state;
}

/* The name of a region: the executor's uid, a number of the process (a plan's region and a FIFO
 * pool may be made in one preparation), the rank. */
static gc3_status_t gc3_host_region_create(gc3_plan_t *p, size_t bytes, char **base_p, char handle[GC3_RT_HANDLE_BYTES],
                                           gc3_diag_t *diag)
{
    static unsigned serial; /* (atomic) */
    int             fd;
    void           *m;

    if (gc3_host_state(p) == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    /* the creating process first: what it left behind is told from other jobs' segments (test_faults) */
    snprintf(handle, GC3_RT_HANDLE_BYTES, "/gc3-%ld-%016llx-%u-r%d", (long)getpid(), (unsigned long long)p->exec->uid,
             __atomic_add_fetch(&serial, 1, __ATOMIC_RELAXED), p->rank);
    fd = shm_open(handle, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0) {
        gc3_diag_add(diag, "host backend: shm_open(%s): %s", handle, strerror(errno));
        return GC3_ERR_IO;
    }
    if (ftruncate(fd, (off_t)bytes) != 0) {
        gc3_diag_add(diag, "host backend: ftruncate(%s, %zu): %s", handle, bytes, strerror(errno));
        close(fd);
        shm_unlink(handle);
        return GC3_ERR_IO;
    }
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        gc3_diag_add(diag, "host backend: mmap(%s): %s", handle, strerror(errno));
        shm_unlink(handle);
        return GC3_ERR_IO;
    }
    *base_p = m;
    return GC3_OK;
}

static gc3_status_t gc3_host_region_open(gc3_plan_t *p, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes,
                                         char **base_p, gc3_diag_t *diag)
{
    char  name[GC3_RT_HANDLE_BYTES];
    int   fd;
    void *m;

    (void)p;
    memcpy(name, handle, sizeof(name));
    name[sizeof(name) - 1] = '\0';
    fd = shm_open(name, O_RDWR, 0600);
    if (fd < 0) {
        gc3_diag_add(diag, "host backend: shm_open(%s) of a peer: %s (is the peer on another host? the host backend "
                     "needs all ranks on one node)", name, strerror(errno));
        return GC3_ERR_IO;
    }
    m = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED) {
        gc3_diag_add(diag, "host backend: mmap(%s) of a peer: %s", name, strerror(errno));
        return GC3_ERR_IO;
    }
    *base_p = m;
    return GC3_OK;
}

static void gc3_host_region_unlink(gc3_plan_t *p, const char handle[GC3_RT_HANDLE_BYTES])
{
    (void)p;
    shm_unlink(handle);
}

static void gc3_host_region_close(gc3_plan_t *p, char *base, size_t bytes, int own)
{
    (void)p;
    (void)own;
    munmap(base, bytes);
}

static gc3_status_t gc3_host_mem_alloc(gc3_plan_t *p, size_t bytes, char **ptr_p)
{
    (void)p;
    *ptr_p = aligned_alloc(64, (bytes + 63) / 64 * 64 + 64);
    if (*ptr_p == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    memset(*ptr_p, 0, (bytes + 63) / 64 * 64 + 64);
    return GC3_OK;
}

static void gc3_host_mem_free(gc3_plan_t *p, char *ptr, size_t bytes)
{
    (void)p;
    (void)bytes;
    free(ptr);
}

/* ---------------------------------------------------------------- places to run (tests)
 *
 * GC3_TEST_RESIDENT_BLOCKS=N (a test setting, read once): at most N blocks of the process, all plans
 * together, run at once, as a GPU runs only so many blocks at once. A block takes a place before it runs
 * and gives it back when it ends or gives way; places go in the order they were asked for (a ticket),
 * as a GPU starts the blocks it holds back. A block that gave way asks again, behind the others. With
 * coll_gc3_yield_us 0 a block keeps its place while it waits: calls whose blocks cannot all run at
 * once then wait for each other until the timeout. */
static struct {
    pthread_once_t  once;
    pthread_mutex_t lock;
    pthread_cond_t  cond;
    uint64_t        tickets, given_back;
    uint64_t        cap; /* 0: no cap */
} gc3_host_places = { PTHREAD_ONCE_INIT, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, 0, 0 };

static void gc3_host_places_init(void)
{
    const char *v       = getenv("GC3_TEST_RESIDENT_BLOCKS");
    long        n       = v != NULL ? atol(v) : 0;
    gc3_host_places.cap = n > 0 ? (uint64_t)n : 0;
}

static uint64_t gc3_host_places_cap(void)
{
    pthread_once(&gc3_host_places.once, gc3_host_places_init);
    return gc3_host_places.cap;
}

/* Take a place (in ticket order). 0, or GC3_STOP_FAIL when the rank's call failed meanwhile or the wait
 * outlasted t->timeout_s (recorded). */
static int gc3_host_place_take(gc3_rt_tb_t *t)
{
    const uint64_t start = gc3_exec_now_ns();
    uint64_t       ticket;
    int            stop = 0;

    pthread_mutex_lock(&gc3_host_places.lock);
    ticket = gc3_host_places.tickets++;
    while (gc3_host_places.given_back + gc3_host_places.cap <= ticket && stop == 0) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += 1000000; /* 1 ms: the abort flag and the timeout are looked at that often */
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&gc3_host_places.cond, &gc3_host_places.lock, &ts);
        if (gc3_host_places.given_back + gc3_host_places.cap > ticket) {
            break;
        }
        if (*t->abort_flag) {
            stop = GC3_STOP_FAIL;
        } else if (t->timeout_s > 0 && (double)(gc3_exec_now_ns() - start) * 1e-9 > t->timeout_s) {
            gc3_core_fail(t, 0, 0, GC3_WAIT_WHAT_PLACE, -1, -1, gc3_host_places.cap, 0);
            stop = GC3_STOP_FAIL;
        }
    }
    if (stop != 0) {
        gc3_host_places.given_back++; /* its turn, given up (the count stays that of the places taken) */
        pthread_cond_broadcast(&gc3_host_places.cond);
    }
    pthread_mutex_unlock(&gc3_host_places.lock);
    return stop;
}

static void gc3_host_place_give(void)
{
    pthread_mutex_lock(&gc3_host_places.lock);
    gc3_host_places.given_back++;
    pthread_cond_broadcast(&gc3_host_places.cond);
    pthread_mutex_unlock(&gc3_host_places.lock);
}

/* One block's run of the call, in a place under the test's cap: gc3_core_run's answer. A block that
 * ended the call before (resuming) takes no place. */
static int gc3_host_block_run(gc3_rt_tb_t *x)
{
    const int capped = gc3_host_places_cap() > 0;
    int       rc;
    if (gc3_core_ended_before(x)) {
        return GC3_CORE_DONE_BEFORE;
    }
    if (capped && gc3_host_place_take(x) != 0) {
        return GC3_CORE_FAILED;
    }
    rc = gc3_core_run(x);
    if (capped) {
        gc3_host_place_give();
    }
    return rc;
}

static void *gc3_host_thread(void *arg)
{
    gc3_plan_t       *p = ((gc3_host_job_t *)arg)->plan;
    int               t = ((gc3_host_job_t *)arg)->tb;
    gc3_host_state_t *s = p->be_state;

    free(arg);
    gc3_host_ends = s->ends != NULL ? &s->ends[t] : NULL;
    if (t == 0 && p->exec->params.breakdown) {
        p->times.picked = gc3_exec_now_ns(); /* (the caller reads it after the last block counted in) */
    }
    switch (gc3_host_block_run(&p->tbs_ctx[t])) {
    case GC3_CORE_FAILED:
        __atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE);
        break;
    case GC3_CORE_YIELDED:
        __atomic_store_n(&s->yielded, 1, __ATOMIC_RELEASE);
        break;
    default:
        break;
    }
    if (p->exec->params.breakdown) {
        /* each block as it ends: the last one's stays (its count below orders it before the caller's read) */
        __atomic_store_n(&p->times.exchanged, gc3_exec_now_ns(), __ATOMIC_RELAXED);
    }
    __atomic_add_fetch(&s->done, 1, __ATOMIC_ACQ_REL);
    return NULL;
}

static gc3_status_t gc3_host_spawn(gc3_plan_t *p, int resuming, gc3_diag_t *diag);

static gc3_status_t gc3_host_start(gc3_plan_t *p, void *stream, gc3_diag_t *diag)
{
    gc3_host_state_t *s = gc3_host_state(p);

    (void)stream;
    if (s == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    if (p->exec->params.breakdown) {
        p->times.ordered    = gc3_exec_now_ns(); /* (no stream to wait for) */
        p->times.same_clock = 1;
    }
    memset(&s->err, 0, sizeof(s->err));
    s->abort_flag = 0;
    s->failed     = 0;
    if (s->ends == NULL) { /* (a relabelled plan's blocks: the most of any binding) */
        s->ends =
            calloc((size_t)(p->ntbs_max > 0 ? p->ntbs_max : 1), sizeof(*s->ends)); /* NULL: computed at each step */
    }
    if (s->resume == NULL &&
        (s->resume = calloc((size_t)(p->ntbs_max > 0 ? p->ntbs_max : 1), sizeof(*s->resume))) == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    s->calls++;
    free(s->threads);
    s->threads = calloc((size_t)(p->ntbs > 0 ? p->ntbs : 1), sizeof(pthread_t));
    if (s->threads == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    return gc3_host_spawn(p, 0, diag);
}

/* A thread per block for the call in flight (resuming: a run again after some block gave way; the
 * call's blocks all ended, as a GPU's kernel does, and each goes on from its record or ends at once). */
static gc3_status_t gc3_host_spawn(gc3_plan_t *p, int resuming, gc3_diag_t *diag)
{
    gc3_host_state_t *s = p->be_state;

    s->done     = 0;
    s->yielded  = 0;
    s->nthreads = 0;
    for (int t = 0; t < p->ntbs; t++) {
        gc3_host_job_t *j = malloc(sizeof(*j));
        int             rc;
        p->tbs_ctx[t].err        = &s->err;
        p->tbs_ctx[t].abort_flag = &s->abort_flag;
        /* host threads all run at once: a block gives way only under a test's cap (gc3_host_places) */
        p->tbs_ctx[t].resume     = &s->resume[t];
        p->tbs_ctx[t].call       = s->calls;
        p->tbs_ctx[t].yield_ns   = gc3_host_places_cap() > 0 ? (uint64_t)p->exec->params.yield_us * 1000u : 0;
        p->tbs_ctx[t].waited     = 0;
        p->tbs_ctx[t].resuming   = resuming;
        if (j == NULL) {
            rc = ENOMEM;
        } else {
            j->plan = p;
            j->tb   = t;
            rc      = pthread_create(&s->threads[t], NULL, gc3_host_thread, j);
        }
        if (rc != 0) {
            free(j);
            gc3_diag_add(diag, "host backend: cannot start a thread for block %d: %s", t, strerror(rc));
            s->abort_flag = GC3_RT_ABORT_SET;
            for (int u = 0; u < s->nthreads; u++) {
                pthread_join(s->threads[u], NULL);
            }
            s->nthreads = 0;
            return GC3_ERR_NO_MEMORY;
        }
        s->nthreads++;
    }
    if (!resuming && s->nthreads > 0) {
        gc3_host_live_add(s);
    }
    if (p->exec->params.breakdown && !resuming) {
        p->times.posted = gc3_exec_now_ns();
    }
    return GC3_OK;
}

/* The call's blocks all ended: if some gave way (and none failed), it runs again, resuming. 1 when it
 * was started again. */
static int gc3_host_resume(gc3_plan_t *p)
{
    gc3_host_state_t *s = p->be_state;
    if (!__atomic_load_n(&s->yielded, __ATOMIC_ACQUIRE) || __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
        return 0;
    }
    gc3_host_join_threads(s);
    __atomic_add_fetch(&p->resumed, 1, __ATOMIC_RELAXED);
    if (gc3_host_spawn(p, 1, NULL) != GC3_OK) {
        __atomic_store_n(&s->failed, 1, __ATOMIC_RELEASE); /* (its threads, if any, were joined: nothing runs) */
        snprintf(p->broken_why, sizeof(p->broken_why), "host backend: cannot start the call's threads again");
        return 0;
    }
    return 1;
}

/* The call's end (once a call: its test saw it done, or its wait): its threads joined, the state off
 * the live list, the breakdown's exchange time counted. */
static gc3_status_t gc3_host_join(gc3_plan_t *p)
{
    gc3_host_state_t *s = p->be_state;
    gc3_host_join_threads(s);
    gc3_host_live_remove(s);
    if (p->ntbs > 0 && p->exec->params.breakdown && p->times.exchanged >= p->times.picked) {
        p->times.exchange_ns += p->times.exchanged - p->times.picked;
        p->times.exchanges++;
    }
    return __atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) ? GC3_ERR_TIMEOUT : GC3_OK;
}

void gc3_exec_quiesce(void)
{
    for (;;) {
        gc3_host_state_t *s = NULL;
        pthread_mutex_lock(&gc3_host_live.lock);
        if (gc3_host_live.n > 0) {
            s = gc3_host_live.s[gc3_host_live.n - 1];
            __atomic_store_n(&s->abort_flag, GC3_RT_ABORT_SET, __ATOMIC_RELEASE); /* its blocks stop */
        }
        pthread_mutex_unlock(&gc3_host_live.lock);
        if (s == NULL) {
            break;
        }
        gc3_host_join_threads(s);
        gc3_host_live_remove(s);
    }
    pthread_mutex_lock(&gc3_host_live.lock);
    free(gc3_host_live.s);
    gc3_host_live.s   = NULL;
    gc3_host_live.cap = 0;
    pthread_mutex_unlock(&gc3_host_live.lock);
}

static gc3_status_t gc3_host_test(gc3_plan_t *p, int *done_p)
{
    gc3_host_state_t *s = p->be_state;
    *done_p             = __atomic_load_n(&s->done, __ATOMIC_ACQUIRE) == s->nthreads && !gc3_host_resume(p);
    if (!*done_p) {
        /* the caller polls (MPI_Test, MPI_Wait through the progress engine): give the core to
         * the program's threads, which may share it */
        sched_yield();
        return GC3_OK;
    }
    return gc3_host_join(p);
}

static gc3_status_t gc3_host_wait(gc3_plan_t *p)
{
    do {
        gc3_host_join_threads(p->be_state);
    } while (gc3_host_resume(p));
    return gc3_host_join(p);
}

static void gc3_host_plan_cleanup(gc3_plan_t *p)
{
    gc3_host_state_t *s = p->be_state;
    if (s != NULL) {
        gc3_host_join_threads(s); /* (a call in flight was waited for by gc3_plan_destroy) */
        gc3_host_live_remove(s);
        pthread_mutex_destroy(&s->join_lock);
        free(s->threads);
        free(s->ends);
        free(s->resume);
        free(s);
        p->be_state = NULL;
    }
}

static gc3_status_t gc3_host_host_alloc(gc3_plan_t *p, size_t bytes, char **ptr_p)
{
    return gc3_host_mem_alloc(p, bytes, ptr_p);
}

static int gc3_host_max_blocks(const gc3_exec_t *exec)
{
    (void)exec;
    return INT_MAX; /* a thread per block */
}

static gc3_status_t gc3_host_mem_write(void *dst, const void *src, size_t bytes)
{
    memcpy(dst, src, bytes);
    return GC3_OK;
}

/* ---------------------------------------------------------------- zero-copy (reg.c)
 *
 * A caller's buffer can be left in place for the node's other processes when it lies in a shared
 * mapping of a file (shm_open, a file in /dev/shm or elsewhere, mapped MAP_SHARED): they map the same
 * part of the same file. Its identity is the file (device and inode) and the place of the mapping. */

typedef struct {
    char     path[96];
    uint64_t offset, inode, size;
} gc3_host_reg_handle_t;

static gc3_status_t gc3_host_reg_query(gc3_exec_t *e, const void *ptr, size_t bytes, gc3_rt_reg_info_t *q)
{
    FILE          *f = fopen("/proc/self/maps", "r");
    char           line[4096 + 256];
    const uint64_t p = (uint64_t)(uintptr_t)ptr;
    gc3_status_t   status = GC3_ERR_UNSUPPORTED;

    (void)e;
    q->why = "the buffer is not in a shared mapping of a file (the host backend leaves in place only buffers mapped "
             "with MAP_SHARED from shm_open or a file)";
    if (f == NULL) {
        return status;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        unsigned long long start, end, off, inode;
        unsigned           maj, min;
        char               perms[8];
        int                n = 0;
        char              *path, *nl;
        if (sscanf(line, "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms, &off, &maj, &min, &inode, &n) < 7 ||
            p < start || p >= end) {
            continue;
        }
        path = line + n;
        if ((nl = strchr(path, '\n')) != NULL) {
            *nl = '\0';
        }
        if (perms[3] != 's' || inode == 0 || path[0] != '/' || strstr(path, " (deleted)") != NULL || p + bytes > end) {
            break;
        }
        if (strlen(path) >= sizeof(((gc3_host_reg_handle_t *)0)->path)) {
            q->why = "the buffer's file has a path longer than 95 characters";
            break;
        }
        q->base   = start;
        q->size   = end - start;
        q->offset = off;
        q->ident  = (uint64_t)inode * 0x9e3779b97f4a7c15ull ^ ((uint64_t)maj << 40 | (uint64_t)min << 20) ^ off ^ start;
        snprintf(q->name, sizeof(q->name), "%s", path);
        q->why = NULL;
        status = GC3_OK;
        break;
    }
    fclose(f);
    return status;
}

/* The guard after a peer's registration as this process maps it (gc3_host_reg_open): one page. */
static uint64_t gc3_host_guard_bytes(void)
{
    const long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (uint64_t)page : 4096;
}

static gc3_status_t gc3_host_reg_handle(gc3_exec_t *e, gc3_rt_reg_info_t *q, char handle[GC3_RT_HANDLE_BYTES])
{
    gc3_host_reg_handle_t h;
    struct stat           st;

    (void)e;
    _Static_assert(sizeof(h) <= GC3_RT_HANDLE_BYTES, "a host registration's handle fits a handle");
    memset(&h, 0, sizeof(h));
    if (stat(q->name, &st) != 0) {
        q->why = "the buffer's file is gone (unlinked): the other processes cannot open it";
        return GC3_ERR_UNSUPPORTED;
    }
    snprintf(h.path, sizeof(h.path), "%s", q->name);
    h.offset = q->offset;
    h.inode  = (uint64_t)st.st_ino;
    h.size   = q->size;
    memcpy(handle, &h, sizeof(h));
    return GC3_OK;
}

static gc3_status_t gc3_host_reg_open(gc3_exec_t *e, const char handle[GC3_RT_HANDLE_BYTES], uint64_t size,
                                      char **mapped_p)
{
    gc3_host_reg_handle_t h;
    struct stat           st;
    int                   fd;
    void                 *m;

    (void)e;
    memcpy(&h, handle, sizeof(h));
    h.path[sizeof(h.path) - 1] = '\0';
    fd = open(h.path, O_RDWR);
    if (fd < 0) {
        return GC3_ERR_IO;
    }
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_ino != h.inode || size != h.size) {
        close(fd); /* another file by now */
        return GC3_ERR_IO;
    }
    /* a page no one may touch after the mapping: a read past a peer's registration faults here as it
     * does on a GPU (a peer's buffer often ends where its mapping ends) instead of reading what follows */
    m = mmap(NULL, size + gc3_host_guard_bytes(), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) {
        close(fd);
        return GC3_ERR_NO_MEMORY;
    }
    if (mmap(m, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)h.offset) == MAP_FAILED) {
        munmap(m, size + gc3_host_guard_bytes());
        close(fd);
        return GC3_ERR_IO;
    }
    close(fd);
    *mapped_p = m;
    return GC3_OK;
}

static void gc3_host_reg_close(gc3_exec_t *e, char *mapped, uint64_t size)
{
    (void)e;
    munmap(mapped, size + gc3_host_guard_bytes());
}

/* A relabelled plan's blocks run another program rank's steps: their chunk-ends tables are empty again. */
static gc3_status_t gc3_host_plan_rebind(gc3_plan_t *p, gc3_diag_t *diag)
{
    gc3_host_state_t *s = p->be_state;
    (void)diag;
    if (s != NULL && s->ends != NULL) {
        memset(s->ends, 0, (size_t)(p->ntbs_max > 0 ? p->ntbs_max : 1) * sizeof(*s->ends));
    }
    return GC3_OK;
}

const gc3_rt_backend_t gc3_rt_backend_host = {
    "host",
    gc3_host_region_create,
    gc3_host_region_open,
    gc3_host_region_unlink,
    gc3_host_region_close,
    gc3_host_mem_alloc,
    gc3_host_mem_free,
    gc3_host_host_alloc,
    gc3_host_mem_free,
    gc3_host_start,
    gc3_host_test,
    gc3_host_wait,
    gc3_host_plan_cleanup,
    NULL, /* every call's threads read the contexts afresh */
    gc3_host_plan_rebind,
    gc3_host_max_blocks,
    NULL, /* frees at once */
    NULL, /* nothing of its own */
    gc3_host_mem_write,
    gc3_host_reg_query,
    gc3_host_reg_handle,
    gc3_host_reg_open,
    gc3_host_reg_close,
    NULL, /* (every region is a file of its own) */
};
