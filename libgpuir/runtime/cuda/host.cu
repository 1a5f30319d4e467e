/* gc3 / libgpuir: the CUDA backend's calls: a plan's device state, the launches of the kernels (kernels.cu) or
 * the resident kernel's mailbox, completion, giving way and errors; and the backend's table
 * (gc3_rt_backend_cuda). Its memory is memory.cu's, its streams streams.cu's (host.cuh). No device code. */
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sched.h>
#include <pthread.h>
#include "host.cuh"
extern "C" {
#include "gc3_topo.h"
}

/* ---------------------------------------------------------------- host side */

/* What the backend allocates for a plan of nt blocks whose flat program has flat_bytes: the device
 * copy of the plan (plan bytes: the flat program, then at these offsets the semaphore and loop counter
 * offsets, the steps per block, the block counter, and a line each for the relay word, the relayed
 * descriptor and the legacy stream's word), the per-call contexts of large plans (call bytes, device
 * and pinned). */
typedef struct {
    size_t sem, loops, ns, count, go, desc, legacy, resume, plan, call;
} gc3_cuda_layout_t;

static gc3_cuda_layout_t gc3_cuda_layout(size_t flat_bytes, size_t nt, size_t nshift)
{
    gc3_cuda_layout_t l;
    l.sem    = flat_bytes;
    l.loops  = l.sem + nt * 8;
    l.ns     = l.loops + nt * 8; /* the steps per block of each shift of a relabelled plan (gc3_plan_t.nshift) */
    l.count  = (l.ns + nshift * nt * 4 + 7) / 8 * 8;
    l.go     = (l.count + 8 + GC3_RT_LINE - 1) / GC3_RT_LINE * GC3_RT_LINE;
    l.desc   = l.go + GC3_RT_LINE;
    l.legacy = l.desc + GC3_RT_LINE;
    l.resume = l.legacy + GC3_RT_LINE;
    l.plan   = l.resume + nt * sizeof(gc3_rt_resume_t);
    l.call   = nt > GC3_CUDA_ARGS_LARGE ? nt * (sizeof(gc3_rt_tb_t) + 16) : 0;
    return l;
}

/* A plan's: its blocks (a relabelled plan's: the most of any binding, its counters' lines), every shift */
static gc3_cuda_layout_t gc3_cuda_plan_layout(const gc3_plan_t *p)
{
    return gc3_cuda_layout(p->flat->bytes, (size_t)p->ntbs_max, (size_t)p->nshift);
}

/* Blocks of the interpreter kernel (every variant) co-resident on the executor's device. */
static int gc3_cuda_max_blocks(const gc3_exec_t *e)
{
    const int threads = e->params.threads_per_block > 0 ? e->params.threads_per_block : GC3_CUDA_MAX_THREADS;
    int       per_sm = 0, sms = 0, dev = -1;

    cudaGetDevice(&dev);
    if (dev != e->params.device && cudaSetDevice(e->params.device) != cudaSuccess) {
        return 0;
    }
    /* the occupancy queries are of the current device's kernels */
    per_sm = gc3_cuda_kernel_blocks_per_sm(threads);
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, e->params.device);
    if (dev >= 0 && dev != e->params.device) {
        cudaSetDevice(dev); /* the caller's current device as it was */
    }
    return per_sm * sms;
}

gc3_cuda_state_t *gc3_cuda_state(gc3_plan_t *p, gc3_diag_t *diag)
{
    gc3_cuda_state_t *s = (gc3_cuda_state_t *)p->be_state;
    if (s != NULL) {
        return s;
    }
    s = (gc3_cuda_state_t *)calloc(1, sizeof(*s));
    if (s == NULL) {
        return NULL;
    }
    p->be_state = s;
    s->device   = p->exec->params.device;
    s->epoch_seq    = 1;
    s->epoch_blocks = (uint64_t)p->ntbs;
    if (gc3_cuda_check(cudaSetDevice(p->exec->params.device), "cudaSetDevice", diag) != GC3_OK ||
        gc3_cuda_check(cudaEventCreateWithFlags(&s->after_legacy, cudaEventDisableTiming), "cudaEventCreate", diag) != GC3_OK ||
        gc3_cuda_check(cudaEventCreateWithFlags(&s->done, cudaEventDisableTiming), "cudaEventCreate", diag) != GC3_OK ||
        gc3_cuda_check(cudaHostAlloc((void **)&s->h_err, GC3_CUDA_MAPPED_BYTES, cudaHostAllocMapped), "cudaHostAlloc", diag) != GC3_OK ||
        gc3_cuda_check(cudaHostGetDevicePointer((void **)&s->d_err, s->h_err, 0), "cudaHostGetDevicePointer", diag) != GC3_OK) {
        return NULL;
    }
    gc3_rt_plan_mem(p, 0, (int64_t)GC3_CUDA_MAPPED_BYTES);
    {
        const char *tr = getenv("GC3_CUDA_TRACE");
        s->trace_call  = tr != NULL && p->nshift == 1 ? atol(tr) : 0; /* (not a relabelled plan's: its stride) */
        for (int t = 0; t < p->ntbs && s->trace_call > 0; t++) {
            s->trace_stride = GC3_TRACE_END(p->tb_nsteps[t]) + 1 > s->trace_stride ? GC3_TRACE_END(p->tb_nsteps[t]) + 1
                                                                                     : s->trace_stride;
        }
        /* allocated now: not inside the traced call, which would then time the allocation */
        if (s->trace_call > 0 && s->trace_stride > 0 &&
            ((s->h_trace = (uint64_t *)malloc((size_t)p->ntbs * s->trace_stride * 8)) == NULL ||
             cudaMalloc((void **)&s->d_trace, (size_t)p->ntbs * s->trace_stride * 8) != cudaSuccess)) {
            s->trace_call = 0; /* a diagnostic: without its memory, run untraced */
        } else if (s->d_trace != NULL) {
            gc3_rt_plan_mem(p, (int64_t)((size_t)p->ntbs * s->trace_stride * 8), 0);
        }
    }
    s->h_abort = (int32_t *)((char *)s->h_err + sizeof(gc3_rt_error_t) + 32);
    s->d_abort = (int32_t *)((char *)s->d_err + sizeof(gc3_rt_error_t) + 32);
    s->h_done  = (volatile uint64_t *)((char *)s->h_err + sizeof(gc3_rt_error_t) + 64);
    s->d_done  = (uint64_t *)((char *)s->d_err + sizeof(gc3_rt_error_t) + 64);
    s->h_exited = (volatile uint64_t *)((char *)s->h_err + sizeof(gc3_rt_error_t) + 96);
    s->d_exited = (uint64_t *)((char *)s->d_err + sizeof(gc3_rt_error_t) + 96);
    s->h_marks  = (volatile uint64_t *)((char *)s->h_err + sizeof(gc3_rt_error_t) + 104);
    s->d_marks  = (uint64_t *)((char *)s->d_err + sizeof(gc3_rt_error_t) + 104);
    s->h_yield  = (volatile uint64_t *)((char *)s->h_err + sizeof(gc3_rt_error_t) + 120);
    s->d_yield  = (uint64_t *)((char *)s->d_err + sizeof(gc3_rt_error_t) + 120);
    s->h_mail   = (uint64_t *)((char *)s->h_err + GC3_CUDA_MAIL_OFF);
    s->d_mail   = (uint64_t *)((char *)s->d_err + GC3_CUDA_MAIL_OFF);
    s->h_push   = (uint64_t *)((char *)s->h_err + GC3_CUDA_PUSH_OFF);
    s->d_push   = (uint64_t *)((char *)s->d_err + GC3_CUDA_PUSH_OFF);
    memset(s->h_err, 0, GC3_CUDA_MAPPED_BYTES);
    p->err        = s->h_err;
    p->abort_flag = s->h_abort;
    s->threads    = p->exec->params.threads_per_block > 0 ? p->exec->params.threads_per_block : GC3_CUDA_MAX_THREADS;
    s->breakdown  = p->exec->params.breakdown;
    s->max_blocks = gc3_cuda_max_blocks(p->exec);
    {
        const char *cap = getenv("GC3_TEST_RESIDENT_BLOCKS"); /* a test setting (kernels.cu, places to run) */
        s->cap          = cap != NULL && atol(cap) > 0 ? (uint32_t)atol(cap) : 0;
    }
    return s;
}

/* The contexts as the device sees them: pointers into the host's plan moved to the device copy. */
static void gc3_cuda_device_ctx(const gc3_plan_t *p, const gc3_cuda_state_t *s, gc3_rt_tb_t *c)
{
    const size_t              nt = (size_t)p->ntbs;
    const gc3_cuda_layout_t   l  = gc3_cuda_plan_layout(p);
    const gc3_flat_program_t *df = (const gc3_flat_program_t *)s->d_plan;
    for (int t = 0; t < p->ntbs; t++) {
        c[t]            = p->tbs_ctx[t];
        c[t].steps      = (const gc3_flat_step_t *)((const char *)df + p->flat->steps_off) +
                          (p->tbs_ctx[t].steps - gc3_flat_steps(p->flat));
        c[t].sem_off    = (const int64_t *)(s->d_plan + l.sem);
        c[t].loops_off  = (const int64_t *)(s->d_plan + l.loops);
        c[t].tb_nsteps  = (const int32_t *)(s->d_plan + l.ns) + (size_t)p->shift * (size_t)p->ntbs_max;
        c[t].sem_base   = (const uint64_t *)(s->d_ctx != NULL ? (const char *)(s->d_ctx + nt) : NULL);
        c[t].loops_base = c[t].sem_base != NULL ? c[t].sem_base + nt : NULL;
        c[t].err        = s->d_err;
        c[t].abort_flag = s->d_abort;
        c[t].trace      = s->tracing ? s->d_trace + (size_t)t * s->trace_stride : NULL;
        c[t].resume     = (gc3_rt_resume_t *)(s->d_plan + l.resume) + t;
        /* a call on the caller's stream never gives way: launched again, it would run after what the
         * caller queued there after the call */
        c[t].yield_ns   = s->call_stream == s->own_stream ? (uint64_t)p->exec->params.yield_us * 1000u : 0;
        c[t].waited     = 0;
        c[t].resuming   = s->resuming;
    }
}

/* params.breakdown: the kernel's marks of the last call posted into the plan's sums, once its last
 * block's mark is there (it follows the completion flag); a call without them is not counted. */
static void gc3_cuda_marks_take(gc3_plan_t *p, gc3_cuda_state_t *s)
{
    const uint64_t taken = s->h_marks[0], ended = s->h_marks[1];
    if (!s->marks_open || ended == 0) {
        return;
    }
    if (taken != 0 && ended >= taken) {
        p->times.exchange_ns += ended - taken;
        p->times.exchanges++;
    }
    s->marks_open = 0;
}

/* The stamps of a traced call, relative to the first block's start (stderr). */
static void gc3_cuda_trace_print(const gc3_plan_t *p, const gc3_cuda_state_t *s)
{
    uint64_t t0 = UINT64_MAX;
    for (int t = 0; t < p->ntbs; t++) {
        t0 = s->h_trace[(size_t)t * s->trace_stride] < t0 ? s->h_trace[(size_t)t * s->trace_stride] : t0;
    }
    {
        uint64_t t1 = 0;
        for (int t = 0; t < p->ntbs; t++) {
            uint64_t e = s->h_trace[(size_t)t * s->trace_stride + GC3_TRACE_END(p->tb_nsteps[t])];
            t1         = e > t1 ? e : t1;
        }
        fprintf(stderr, "gc3 trace: rank %d call %ld: host %.2f us from start to launched, %.2f us to completion seen; "
                        "kernel blocks ran %.2f us (first start to last end)\n", p->rank, s->calls,
                (s->trace_host[1] - s->trace_host[0]) * 1e-3, (s->trace_host[2] - s->trace_host[0]) * 1e-3, (t1 - t0) * 1e-3);
    }
    for (int t = 0; t < p->ntbs; t++) {
        const uint64_t *v = s->h_trace + (size_t)t * s->trace_stride;
        char           *line = NULL; /* one line per thread block, whole however many steps it has */
        size_t          size = 0;
        FILE           *f    = open_memstream(&line, &size);
        if (f == NULL) {
            fprintf(stderr, "gc3 trace: rank %d call %ld tb %d: out of host memory\n", p->rank, s->calls, t);
            continue;
        }
        fprintf(f, "gc3 trace: rank %d call %ld tb %d (send %d recv %d): start %+.2f us, steps", p->rank, s->calls, t,
                p->tbs[t].send, p->tbs[t].recv, (v[GC3_TRACE_START] - t0) * 1e-3);
        /* per step: when it was published, and (waits done / message in / data moved); the steps
         * of a fused run after its first have no stamps of their own */
        const gc3_flat_step_t *st = &gc3_flat_steps(p->flat)[p->tbs[t].step_begin];
        for (int k = 0, fused = 0; k < p->tb_nsteps[t]; k++) {
            if (fused > 0) {
                fprintf(f, " (fused)");
                fused--;
                continue;
            }
            fused = st[k].fuse;
            fprintf(f, " %.2f(%.2f/%.2f/%.2f)", (v[GC3_TRACE_AT(k, GC3_TRACE_PUBLISHED)] - t0) * 1e-3,
                    (v[GC3_TRACE_AT(k, GC3_TRACE_WAITED)] - t0) * 1e-3, (v[GC3_TRACE_AT(k, GC3_TRACE_RECEIVED)] - t0) * 1e-3,
                    (v[GC3_TRACE_AT(k, GC3_TRACE_MOVED)] - t0) * 1e-3);
        }
        fprintf(f, ", end %.2f us", (v[GC3_TRACE_END(p->tb_nsteps[t])] - t0) * 1e-3);
        if (fclose(f) == 0 && line != NULL) {
            fprintf(stderr, "%s\n", line);
        } else {
            fprintf(stderr, "gc3 trace: rank %d call %ld tb %d: out of host memory\n", p->rank, s->calls, t);
        }
        free(line);
    }
}

/* Once per plan: the device copy of its constant part (and, for large plans, room for the
 * per-call part). */
static gc3_status_t gc3_cuda_upload(gc3_plan_t *p, gc3_cuda_state_t *s, gc3_diag_t *diag)
{
    const size_t            nt    = (size_t)p->ntbs_max;
    const gc3_cuda_layout_t l     = gc3_cuda_plan_layout(p);
    const size_t            total = l.plan, call = l.call;
    char        *h = NULL;
    gc3_status_t status;

    status = gc3_cuda_check(cudaMalloc((void **)&s->d_plan, total), "cudaMalloc(plan)", diag);
    if (status != GC3_OK) {
        goto err;
    }
    if (p->ntbs_max > GC3_CUDA_ARGS_LARGE) {
        status = gc3_cuda_check(cudaMalloc((void **)&s->d_ctx, call), "cudaMalloc(contexts)", diag);
        if (status != GC3_OK) {
            goto err_plan;
        }
        status = gc3_cuda_check(cudaHostAlloc((void **)&s->h_stage, call, 0), "cudaHostAlloc(contexts)", diag);
        if (status != GC3_OK) {
            goto err_ctx;
        }
    }
    h = (char *)calloc(1, total); /* the block counter starts at 0 */
    if (h == NULL) {
        gc3_diag_add(diag, "cuda backend: out of host memory for a %zu-byte plan", total);
        status = GC3_ERR_NO_MEMORY;
        goto err_stage;
    }
    memcpy(h, p->flat, p->flat->bytes);
    memcpy(h + l.sem, p->sem_off, nt * 8);
    memcpy(h + l.loops, p->loops_off, nt * 8);
    memcpy(h + l.ns + (size_t)p->shift * nt * 4, p->tb_nsteps, (size_t)p->ntbs * 4);
    s->d_count  = (unsigned long long *)(s->d_plan + l.count);
    s->d_go     = (uint64_t *)(s->d_plan + l.go);
    s->d_desc   = (uint32_t *)(s->d_plan + l.desc);
    s->d_legacy = (uint32_t *)(s->d_plan + l.legacy);
    status     = gc3_cuda_fill(s->d_plan, h, total, "cudaMemcpyAsync(plan)", diag);
    free(h);
    if (status != GC3_OK) {
        goto err_stage;
    }
    if (p->nshift > 1 && s->ns_up == NULL && (s->ns_up = (char *)calloc((size_t)p->nshift, 1)) == NULL) {
        gc3_diag_add(diag, "cuda backend: out of host memory");
        status = GC3_ERR_NO_MEMORY;
        goto err_stage;
    }
    if (s->ns_up != NULL) {
        s->ns_up[p->shift] = 1;
    }
    gc3_rt_plan_mem(p, (int64_t)(total + call), (int64_t)call);
    return GC3_OK;

err_stage:
    if (s->h_stage != NULL) {
        gc3_cuda_release(GC3_CUDA_FREE_HOST, s->h_stage, call);
        s->h_stage = NULL;
    }
err_ctx:
    if (s->d_ctx != NULL) {
        gc3_cuda_release(GC3_CUDA_FREE_DEVICE, s->d_ctx, call);
        s->d_ctx = NULL;
    }
err_plan:
    gc3_cuda_release(GC3_CUDA_FREE_DEVICE, s->d_plan, total);
    s->d_plan = NULL;
err:
    return status;
}

static gc3_cuda_done_t gc3_cuda_done_args(const gc3_cuda_state_t *s, uint64_t seq)
{
    gc3_cuda_done_t d;
    d.count = s->d_count;
    d.flag  = s->d_done;
    d.seq     = seq;
    d.base    = s->epoch_base + (seq - s->epoch_seq) * s->epoch_blocks;
    d.marks   = s->breakdown ? s->d_marks : NULL;
    d.yielded = s->d_yield;
    d.cap     = s->cap;
    return d;
}

/* May this plan's calls go to a resident kernel? Small plans (the launch is a large part of their
 * time) on one node, on the backend's own stream (a kernel on the caller's stream must end). */
static int gc3_cuda_resident_ok(const gc3_plan_t *p, const gc3_cuda_state_t *s, cudaStream_t st)
{
    static_assert(GC3_RESIDENT_MAX_BLOCKS <= GC3_CUDA_SH_TBS, "a resident kernel keeps every block's bases in shared memory");
    static_assert(GC3_RESIDENT_MAX_BLOCKS <= GC3_CUDA_ARGS_LARGE, "a resident kernel starts with its contexts in the parameters");
    return p->exec->params.resident_us > 0 && p->ntbs > 0 && p->ntbs <= GC3_RESIDENT_MAX_BLOCKS && !p->crosses_nodes &&
           s->threads >= 32 && st == s->own_stream;
}

template <int N> static void gc3_cuda_launch(const gc3_plan_t *p, const gc3_cuda_state_t *s, cudaStream_t st, uint64_t seq,
                                             int resident)
{
    gc3_cuda_args<N> a;
    a.done = gc3_cuda_done_args(s, seq);
    memset(&a.res, 0, sizeof(a.res));
    if (resident) {
        a.res.mail         = (const uint2 *)s->d_mail;
        a.res.go           = s->d_go;
        a.res.desc         = s->d_desc;
        a.res.legacy       = s->d_legacy;
        a.res.exited       = s->d_exited;
        a.res.push         = s->d_push;
        a.res.idle_ns      = (uint64_t)p->exec->params.resident_us * 1000u;
        a.res.trace        = s->d_trace;
        a.res.trace_stride = s->trace_stride;
    }
    gc3_cuda_device_ctx(p, s, a.tb);
    memcpy(a.sem_base, p->sem_base, (size_t)p->ntbs * 8);
    memcpy(a.loops_base, p->loops_base, (size_t)p->ntbs * 8);
    gc3_cuda_kernel_launch_args<N>(a, p->ntbs, s->threads, st);
}

/* A plan of up to GC3_CUDA_ARGS_LARGE blocks: one launch with its contexts in the parameters, of
 * the smallest size that holds them. */
static void gc3_cuda_launch_sized(const gc3_plan_t *p, const gc3_cuda_state_t *s, cudaStream_t st, uint64_t seq,
                                  int resident)
{
    if (p->ntbs <= GC3_CUDA_ARGS_SMALL) {
        gc3_cuda_launch<GC3_CUDA_ARGS_SMALL>(p, s, st, seq, resident);
    } else if (p->ntbs <= GC3_CUDA_ARGS_MID) {
        gc3_cuda_launch<GC3_CUDA_ARGS_MID>(p, s, st, seq, resident);
    } else {
        gc3_cuda_launch<GC3_CUDA_ARGS_LARGE>(p, s, st, seq, resident);
    }
}

/* The call of p->tbs_ctx (the same in every block) as the resident kernel reads it. */
static void gc3_cuda_post(const gc3_plan_t *p, gc3_cuda_state_t *s, uint64_t seq, uint32_t flags)
{
    const gc3_rt_tb_t *x = &p->tbs_ctx[0];
    uint32_t           w[GC3_CUDA_MAIL_WORDS];
    const uint64_t     v64[][2] = { { GC3_MAIL_IN, (uint64_t)(uintptr_t)x->buf[GC3_BUF_INPUT] },
                                    { GC3_MAIL_OUT, (uint64_t)(uintptr_t)x->buf[GC3_BUF_OUTPUT] },
                                    { GC3_MAIL_SCRATCH, (uint64_t)(uintptr_t)x->buf[GC3_BUF_SCRATCH] },
                                    { GC3_MAIL_COUNT, x->count },
                                    { GC3_MAIL_SIG, x->sig },
                                    { GC3_MAIL_T, x->T },
                                    { GC3_MAIL_ZC_PEERS_IN, x->zc_peers[0] },
                                    { GC3_MAIL_ZC_PEERS_OUT, x->zc_peers[1] },
                                    { GC3_MAIL_SEG, (uint64_t)(uintptr_t)x->seg } };
    static_assert(GC3_RT_WINDOW < 256, "the window travels in 8 bits");
    for (size_t i = 0; i < sizeof(v64) / sizeof(v64[0]); i++) {
        w[v64[i][0]]     = (uint32_t)v64[i][1];
        w[v64[i][0] + 1] = (uint32_t)(v64[i][1] >> 32);
    }
    w[GC3_MAIL_L]       = (uint32_t)x->L;
    w[GC3_MAIL_SEG_VER] = x->seg_ver;
    w[GC3_MAIL_TYPE]  = (uint32_t)x->dtype | (uint32_t)x->op << 8 | (uint32_t)x->dsize << 16 | (uint32_t)x->window << 24;
    static_assert(GC3_REG_ENTRIES_MAX <= 0xffff, "a registration id travels in 16 bits");
    w[GC3_MAIL_FLAGS] = flags | (x->handover ? GC3_MAIL_F_HANDOVER : 0) | (uint32_t)(x->zc_bit & 3) << GC3_MAIL_F_ZC_SHIFT;
    w[GC3_MAIL_ZC_ID] = (x->zc_id[0] & 0xffff) | (x->zc_id[1] & 0xffff) << 16;
    w[GC3_MAIL_CHECK] = (uint32_t)p->sem_base[0];
    if (p->zc_pushed_last > 0 && !(flags & GC3_MAIL_F_QUIT)) { /* some block of the call pushes (gc3_call_push) */
        w[GC3_MAIL_FLAGS] |= GC3_MAIL_F_PUSH;
    }
    for (int t = 0; t < p->ntbs && (w[GC3_MAIL_FLAGS] & GC3_MAIL_F_PUSH); t++) {
        /* (before the mailbox's release stores; a resident plan has at most GC3_RESIDENT_MAX_BLOCKS blocks) */
        s->h_push[2 * t]     = p->tbs_ctx[t].push[0];
        s->h_push[2 * t + 1] = p->tbs_ctx[t].push[1];
    }
    for (int i = 0; i < GC3_CUDA_MAIL_WORDS; i++) {
        /* one 8-byte store per line: the kernel sees a line old or new, never half */
        __atomic_store_n(&s->h_mail[i], (uint64_t)w[i] | (uint64_t)(uint32_t)seq << 32, __ATOMIC_RELEASE);
    }
}

/* End this plan's resident kernel, if any (before a launch elsewhere, freeing its memory, or its
 * connections moving); p NULL: no plan (an executor's pool at its end). */
void gc3_cuda_quit(gc3_plan_t *p)
{
    gc3_cuda_state_t *s = p != NULL ? (gc3_cuda_state_t *)p->be_state : NULL;
    if (s == NULL || !s->res_alive) {
        return;
    }
    gc3_cuda_post(p, s, s->seq + 1, GC3_MAIL_F_QUIT); /* the number it waits for */
    (void)cudaEventSynchronize(s->done);              /* it ends at once (or already did) */
    s->res_alive = 0;
}

/* The driver's stream memory operations (CUDA 12 ABI), NULL where the driver does not give them: the
 * legacy stream writes a call's number (coll_gc3_wait_default_stream device); a relaunched call's
 * stream waits for it. */
typedef CUresult (*gc3_cuda_memop_fn)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
static gc3_cuda_memop_fn gc3_cuda_write32, gc3_cuda_wait32;
static pthread_once_t    gc3_cuda_memops_once = PTHREAD_ONCE_INIT;
static int               gc3_cuda_memops_off; /* a write failed once: the host waits from then on */

static gc3_cuda_memop_fn gc3_cuda_driver_fn(const char *name)
{
    void *fn = NULL;
#if CUDART_VERSION >= 12050
    cudaDriverEntryPointQueryResult q = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &q) != cudaSuccess ||
        q != cudaDriverEntryPointSuccess) {
        fn = NULL;
    }
#else
    if (cudaGetDriverEntryPoint(name, &fn, cudaEnableDefault) != cudaSuccess) {
        fn = NULL;
    }
#endif
    (void)cudaGetLastError();
    return (gc3_cuda_memop_fn)fn;
}

static void gc3_cuda_memops_find(void)
{
    gc3_cuda_write32 = gc3_cuda_driver_fn("cuStreamWriteValue32");
    gc3_cuda_wait32  = gc3_cuda_driver_fn("cuStreamWaitValue32");
}

/* The call sees what the caller queued on the legacy default stream before it (cudaMemcpy,
 * cudaMemset, kernels on stream 0): MPI users expect that finished. A call posted to the resident
 * kernel (post): the host asks the legacy stream whether it is idle and else waits for it
 * (GC3_WAIT_LEGACY_HOST), or it queues a write of the call's number behind that work, which the
 * kernel waits for before it touches a buffer (GC3_WAIT_LEGACY_DEVICE: the host does not wait; where
 * the driver has no stream memory operations, the host waits). A launched call: its stream waits for
 * an event recorded on the legacy stream (one direction: later legacy work does not wait for it). */
static gc3_status_t gc3_cuda_after_legacy(const gc3_plan_t *p, gc3_cuda_state_t *s, cudaStream_t st, int post,
                                          uint64_t seq, gc3_diag_t *diag)
{
    const int    mode   = p->exec->params.wait_legacy;
    gc3_status_t status = GC3_OK;

    s->legacy_posted = 0;
    if (mode == GC3_WAIT_LEGACY_OFF) {
        /* the caller synchronized what writes the buffers (coll_gc3_wait_default_stream false) */
    } else if (post) {
        if (mode == GC3_WAIT_LEGACY_DEVICE && !__atomic_load_n(&gc3_cuda_memops_off, __ATOMIC_RELAXED)) {
            pthread_once(&gc3_cuda_memops_once, gc3_cuda_memops_find);
            if (gc3_cuda_write32 != NULL && gc3_cuda_write32(CU_STREAM_LEGACY, (CUdeviceptr)(uintptr_t)s->d_legacy,
                                                             (cuuint32_t)seq, 0) == CUDA_SUCCESS) {
                s->legacy_posted = 1;
                return GC3_OK;
            }
            __atomic_store_n(&gc3_cuda_memops_off, 1, __ATOMIC_RELAXED); /* not tried again at every call */
        }
        cudaError_t e = cudaStreamQuery(cudaStreamLegacy);
        if (e == cudaErrorNotReady) {
            e = cudaEventRecord(s->after_legacy, cudaStreamLegacy);
            e = e == cudaSuccess ? cudaEventSynchronize(s->after_legacy) : e;
        }
        status = gc3_cuda_check(e, "waiting for the legacy default stream", diag);
    } else if (st == s->own_stream) {
        status = gc3_cuda_check(cudaEventRecord(s->after_legacy, cudaStreamLegacy), "cudaEventRecord(legacy)", diag);
        if (status == GC3_OK) {
            status = gc3_cuda_check(cudaStreamWaitEvent(st, s->after_legacy, 0), "cudaStreamWaitEvent", diag);
        }
    }
    return status;
}

/* More blocks than the kernel's arguments hold: their contexts copied to the device first. */
static gc3_status_t gc3_cuda_launch_large(const gc3_plan_t *p, gc3_cuda_state_t *s, cudaStream_t st, uint64_t seq,
                                          gc3_diag_t *diag)
{
    gc3_status_t status;
    size_t       nt = (size_t)p->ntbs;
    gc3_rt_tb_t *c  = (gc3_rt_tb_t *)s->h_stage; /* one call in flight per plan: free once the previous ended */

    gc3_cuda_device_ctx(p, s, c);
    memcpy((char *)(c + nt), p->sem_base, nt * 8);
    memcpy((char *)(c + nt) + nt * 8, p->loops_base, nt * 8);
    status = gc3_cuda_check(cudaMemcpyAsync(s->d_ctx, c, nt * (sizeof(gc3_rt_tb_t) + 16), cudaMemcpyHostToDevice, st),
                            "cudaMemcpyAsync(contexts)", diag);
    if (status != GC3_OK) {
        return status;
    }
    gc3_cuda_kernel_launch_ctxs(s->d_ctx, gc3_cuda_done_args(s, seq), p->ntbs, s->threads, st);
    return GC3_OK;
}

static gc3_status_t gc3_cuda_launch_locked(gc3_plan_t *p, gc3_cuda_state_t *s, cudaStream_t st, gc3_diag_t *diag);

/* One call: plans of up to GC3_CUDA_ARGS_LARGE blocks are one launch carrying the contexts;
 * larger ones copy the contexts to the device first (same stream, so in order). */
static gc3_status_t gc3_cuda_start(gc3_plan_t *p, void *stream, gc3_diag_t *diag)
{
    gc3_cuda_state_t *s = gc3_cuda_state(p, diag);
    cudaStream_t      st;
    gc3_status_t      status;

    if (s == NULL) {
        return GC3_ERR_IO;
    }
    if (s->threads > GC3_CUDA_MAX_THREADS) {
        gc3_diag_add(diag, "cuda backend: %d threads per block: the kernels are built for at most %d", s->threads,
                     GC3_CUDA_MAX_THREADS);
        return GC3_ERR_INVALID_PARAM;
    }
    if (p->ntbs > s->max_blocks) {
        gc3_diag_add(diag, "cuda backend: %d thread blocks cannot all be resident on device %d (at most %d of %d threads)",
                     p->ntbs, p->exec->params.device, s->max_blocks, s->threads);
        return GC3_ERR_UNSUPPORTED;
    }
    if (s->d_plan == NULL && (status = gc3_cuda_upload(p, s, diag)) != GC3_OK) {
        return status;
    }
    pthread_mutex_lock(&gc3_cuda_launch_lock); /* no free of another thread waits for the device meanwhile */
    status = stream != NULL ? GC3_OK : gc3_cuda_stream_take_locked(s, diag);
    st     = stream != NULL ? (cudaStream_t)stream : s->own_stream;
    if (status == GC3_OK) {
        status = gc3_cuda_launch_locked(p, s, st, diag);
    }
    if (status == GC3_OK) {
        __atomic_add_fetch(&gc3_cuda_in_flight, 1, __ATOMIC_ACQ_REL);
        __atomic_store_n(&s->counted, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
    return status;
}

/* The resident kernel is there to take call seq (unless it ends right now: gc3_cuda_test relaunches then). */
static int gc3_cuda_kernel_there(const gc3_cuda_state_t *s, uint64_t seq)
{
    return s->res_alive && *s->h_exited != seq - 1;
}

/* One call under the launch lock: ordered after the legacy stream, then posted to the resident kernel,
 * or launched with its contexts as arguments, or with them copied first; the event marks its end. */
static gc3_status_t gc3_cuda_launch_locked(gc3_plan_t *p, gc3_cuda_state_t *s, cudaStream_t st, gc3_diag_t *diag)
{
    gc3_status_t status;
    const int    resident = gc3_cuda_resident_ok(p, s, st);
    uint64_t     seq      = s->seq + 1;
    int          post     = p->ntbs > 0 && resident && gc3_cuda_kernel_there(s, seq);

    if (!resident && s->res_alive) {
        gc3_cuda_quit(p); /* a kernel on another stream: the resident one ends first */
    }
    memset(s->h_err, 0, sizeof(gc3_rt_error_t));
    *s->h_abort = 0;
    s->calls++;
    s->tracing = s->trace_call > 0 && s->calls == s->trace_call && s->h_trace != NULL;
    if (s->tracing) {
        s->trace_host[0] = gc3_exec_now_ns();
    }
    if ((status = gc3_cuda_after_legacy(p, s, st, post, seq, diag)) != GC3_OK) {
        return status;
    }
    /* the host may have waited for the legacy stream longer than the kernel stays: launched then */
    post = post && (s->legacy_posted || gc3_cuda_kernel_there(s, seq));
    if (s->breakdown) {
        p->times.ordered = gc3_exec_now_ns();
        gc3_cuda_marks_take(p, s); /* (the last call's, if they came after its completion was seen) */
        s->h_marks[0] = s->h_marks[1] = 0;
        s->marks_open                 = 1;
    }
    s->posted      = 0;
    s->call_stream = st;
    if (p->ntbs <= 0) {
        /* nothing to run: the event alone marks the call */
    } else if (post) {
        gc3_cuda_post(p, s, seq, (s->tracing ? GC3_MAIL_F_TRACE : 0) | (s->legacy_posted ? GC3_MAIL_F_LEGACY : 0));
        s->posted = 1;
    } else if (p->ntbs <= GC3_CUDA_ARGS_LARGE) {
        gc3_cuda_launch_sized(p, s, st, seq, resident);
        s->res_alive = resident;
    } else if ((status = gc3_cuda_launch_large(p, s, st, seq, diag)) != GC3_OK) {
        return status;
    }
    status = s->posted ? GC3_OK : gc3_cuda_check(cudaGetLastError(), "kernel launch", diag);
    if (status == GC3_OK && p->ntbs > 0) {
        s->seq    = seq;
        s->expect = seq;
    } else {
        s->expect = 0;
    }
    if (status == GC3_OK && !s->posted) {
        /* the event tells a kernel that died (it never counts in) and marks a call without one; for
         * a resident kernel, its end */
        status = gc3_cuda_check(cudaEventRecord(s->done, st), "cudaEventRecord", diag);
        if (status != GC3_OK && st == s->own_stream) {
            /* its event is an older one: the stream must not be reaped as ended while the kernel runs
             * (destroyed instead once its work is done, not pooled) */
            gc3_cuda_stream_give_locked(s, 1);
        }
    }
    s->queried_ns = gc3_exec_now_ns();
    if (s->tracing) {
        s->trace_host[1] = gc3_exec_now_ns();
    }
    if (s->breakdown) {
        p->times.posted = s->queried_ns;
    }
    return status;
}

/* A call posted for the kernel to wait for the legacy stream's write of its number, launched again: the
 * new kernel's stream waits for that word (an event recorded now would also wait for legacy work queued
 * after the call started, which may itself wait for the call); the event where the driver cannot. */
static gc3_status_t gc3_cuda_relaunch_order(const gc3_plan_t *p, gc3_cuda_state_t *s)
{
    if (!s->legacy_posted ||
        (gc3_cuda_wait32 != NULL && gc3_cuda_wait32(s->own_stream, (CUdeviceptr)(uintptr_t)s->d_legacy,
                                                    (cuuint32_t)s->expect, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS)) {
        return GC3_OK;
    }
    return gc3_cuda_after_legacy(p, s, s->own_stream, 0, s->expect, NULL);
}

/* The resident kernel ended without taking the posted call: a new one starts with it. */
static gc3_status_t gc3_cuda_relaunch(gc3_plan_t *p, gc3_cuda_state_t *s)
{
    gc3_status_t status;
    pthread_mutex_lock(&gc3_cuda_launch_lock);
    status = gc3_cuda_relaunch_order(p, s);
    if (status == GC3_OK) {
        gc3_cuda_launch_sized(p, s, s->own_stream, s->expect, 1);
        status = gc3_cuda_check(cudaGetLastError(), "kernel launch", NULL);
    }
    if (status == GC3_OK) {
        status = gc3_cuda_check(cudaEventRecord(s->done, s->own_stream), "cudaEventRecord", NULL);
    }
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
    s->posted     = 0;
    s->res_alive  = status == GC3_OK;
    s->queried_ns = gc3_exec_now_ns();
    return status;
}

/* A block of the call in flight gave way and the kernel ended: the call is launched again on its stream,
 * not resident (a block that had ended the call ends at once; the next call starts a resident kernel
 * again). */
static gc3_status_t gc3_cuda_resume(gc3_plan_t *p, gc3_cuda_state_t *s)
{
    gc3_status_t status;
    pthread_mutex_lock(&gc3_cuda_launch_lock);
    *s->h_yield = 0;
    s->resuming = 1;
    if (p->ntbs <= GC3_CUDA_ARGS_LARGE) {
        gc3_cuda_launch_sized(p, s, s->call_stream, s->expect, 0);
        status = gc3_cuda_check(cudaGetLastError(), "kernel launch", NULL);
    } else {
        status = gc3_cuda_launch_large(p, s, s->call_stream, s->expect, NULL);
    }
    s->resuming = 0;
    if (status == GC3_OK) {
        status = gc3_cuda_check(cudaEventRecord(s->done, s->call_stream), "cudaEventRecord", NULL);
    }
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
    s->posted     = 0;
    s->res_alive  = 0;
    s->queried_ns = gc3_exec_now_ns();
    p->resumed++;
    return status;
}

/* The resident kernel ended just before the posted call came (its last call, in h_exited, is the
 * one before): launch a new kernel with the call in its parameters. 1 when relaunched; 0 when that
 * is not the case, or when the launch failed (then *e says so). */
static int gc3_cuda_missed(gc3_plan_t *p, gc3_cuda_state_t *s, cudaError_t *e)
{
    if (!s->posted || *s->h_exited != s->expect - 1) {
        return 0;
    }
    if (gc3_cuda_relaunch(p, s) == GC3_OK) {
        return 1;
    }
    *e = cudaErrorLaunchFailure;
    return 0;
}

static gc3_status_t gc3_cuda_test(gc3_plan_t *p, int *done_p)
{
    gc3_cuda_state_t *s = (gc3_cuda_state_t *)p->be_state;
    cudaError_t       e = cudaSuccess;

    if (s->expect == 0 || __atomic_load_n(s->h_done, __ATOMIC_ACQUIRE) < s->expect) {
        uint64_t now = gc3_exec_now_ns();
        if (s->expect != 0 && *s->h_yield == s->expect) {
            /* a block gave way: once the kernel ended, the call runs again from where its blocks stood */
            e = cudaEventQuery(s->done);
            if (e == cudaErrorNotReady || (e == cudaSuccess && gc3_cuda_resume(p, s) == GC3_OK)) {
                *done_p = 0;
                return GC3_OK;
            }
            e = e == cudaSuccess ? cudaErrorLaunchFailure : e;
        } else if (gc3_cuda_missed(p, s, &e)) {
            *done_p = 0;
            return GC3_OK;
        } else if (e != cudaSuccess) {
            /* the relaunch failed: reported below */
        } else if (s->expect != 0 && now - s->queried_ns < 100000) {
            /* not counted in yet: ask CUDA at most every 100 us whether the kernel died */
            *done_p = 0;
            return GC3_OK;
        } else {
            s->queried_ns = now;
            e             = cudaEventQuery(s->done);
            if (e == cudaErrorNotReady) {
                *done_p = 0;
                return GC3_OK;
            }
            s->res_alive = 0; /* the kernel ended (or failed) */
            if (e == cudaSuccess && s->expect != 0 && __atomic_load_n(s->h_done, __ATOMIC_ACQUIRE) < s->expect) {
                /* its stores are visible now: a block gave way (since the word was read above), or it ended
                 * without the call (or, posted, just before it came) */
                if (*s->h_yield == s->expect ? gc3_cuda_resume(p, s) == GC3_OK : gc3_cuda_missed(p, s, &e)) {
                    *done_p = 0;
                    return GC3_OK;
                }
                e = cudaErrorLaunchFailure;
            }
        }
    }
    *done_p = 1;
    if (s->breakdown && e == cudaSuccess) {
        gc3_cuda_marks_take(p, s);
    }
    if (s->counted) {
        __atomic_store_n(&s->counted, 0, __ATOMIC_RELEASE);
        gc3_cuda_call_ended();
    }
    gc3_cuda_stream_done(s);
    if (e != cudaSuccess) {
        /* the executor's abort message says it (the plan is unusable after it) */
        snprintf(p->broken_why, sizeof(p->broken_why), "cuda backend: the kernel %s: %s",
                 e == cudaErrorLaunchFailure && s->expect != 0 ? "ended without the call or could not be launched again"
                                                               : "failed",
                 cudaGetErrorString(e));
        return GC3_ERR_IO;
    }
    if (s->tracing) {
        s->trace_host[2] = gc3_exec_now_ns();
        s->tracing       = 0;
        /* (a resident kernel is still running: its stamps were written before it counted in) */
        if ((s->res_alive || cudaEventSynchronize(s->done) == cudaSuccess) &&
            cudaMemcpy(s->h_trace, s->d_trace, (size_t)p->ntbs * s->trace_stride * 8, cudaMemcpyDeviceToHost) ==
                cudaSuccess) {
            gc3_cuda_trace_print(p, s);
        }
    }
    return s->h_err->set || *s->h_abort ? GC3_ERR_TIMEOUT : GC3_OK;
}

/* Poll the completion event: spin for the first 200 us (a short collective ends well within
 * it, and any sleep costs tens of microseconds of timer slack), then yield, then sleep, so a
 * long call does not hold a core. */
static gc3_status_t gc3_cuda_wait(gc3_plan_t *p)
{
    int             done = 0;
    gc3_status_t    st;
    uint64_t        t0 = gc3_exec_now_ns();
    struct timespec ts = {0, 50000};
    while ((st = gc3_cuda_test(p, &done)) == GC3_OK && !done) {
        uint64_t waited = gc3_exec_now_ns() - t0;
        if (waited > 2000000) {
            nanosleep(&ts, NULL);
        } else if (waited > 200000) {
            sched_yield();
        }
    }
    return st;
}

static void gc3_cuda_plan_cleanup(gc3_plan_t *p)
{
    gc3_cuda_state_t *s = (gc3_cuda_state_t *)p->be_state;
    if (s == NULL) {
        return;
    }
    gc3_cuda_quit(p);
    if (s->counted) {
        __atomic_store_n(&s->counted, 0, __ATOMIC_RELEASE);
        gc3_cuda_call_ended();
    }
    pthread_mutex_lock(&gc3_cuda_launch_lock); /* (before its event goes: the pool's reclaim asks it) */
    gc3_cuda_stream_give_locked(s, 1);
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
    {
        const gc3_cuda_layout_t l    = gc3_cuda_plan_layout(p);
        const size_t            plan = l.plan, call = l.call;
        const size_t            trace = s->d_trace != NULL ? (size_t)p->ntbs * s->trace_stride * 8 : 0;
        const size_t call_h = s->d_plan != NULL && s->h_stage != NULL ? call : 0, mapped = s->d_err != NULL ? GC3_CUDA_MAPPED_BYTES : 0;
        gc3_cuda_release(GC3_CUDA_FREE_DEVICE, s->d_plan, s->d_plan != NULL ? plan : 0);
        gc3_cuda_release(GC3_CUDA_FREE_DEVICE, s->d_ctx, s->d_ctx != NULL ? call : 0);
        gc3_cuda_release(GC3_CUDA_FREE_HOST, s->h_stage, s->h_stage != NULL ? call : 0);
        gc3_cuda_release(GC3_CUDA_FREE_HOST, s->h_err, s->h_err != NULL ? GC3_CUDA_MAPPED_BYTES : 0);
        gc3_cuda_release(GC3_CUDA_FREE_DEVICE, s->d_trace, trace);
        /* what the plan's record counts as this backend's: its device copy, trace, h_err, staging */
        gc3_rt_plan_mem(p, -(int64_t)p->mem.control, -(int64_t)(mapped + call_h));
    }
    free(s->h_trace);
    free(s->ns_up);
    if (s->done) cudaEventDestroy(s->done);
    if (s->after_legacy) cudaEventDestroy(s->after_legacy);
    free(s);
    p->be_state = NULL;
}

/* A relabelled plan's blocks run another program rank's steps: the resident kernel, whose blocks keep their
 * contexts, ends; the steps per block of the new shift go into the device copy the first time. */
static gc3_status_t gc3_cuda_plan_rebind(gc3_plan_t *p, gc3_diag_t *diag)
{
    gc3_cuda_state_t *s = (gc3_cuda_state_t *)p->be_state;
    gc3_status_t      status;
    if (s == NULL) {
        return GC3_OK; /* (made at the first call, for its blocks) */
    }
    gc3_cuda_quit(p);
    /* the calls up to the last one had the old binding's blocks, the next ones the new one's */
    s->epoch_base += (s->seq + 1 - s->epoch_seq) * s->epoch_blocks;
    s->epoch_seq    = s->seq + 1;
    s->epoch_blocks = (uint64_t)p->ntbs;
    if (s->d_plan == NULL) {
        return GC3_OK; /* (gc3_cuda_upload writes the steps per block at the first call) */
    }
    if (!s->ns_up[p->shift]) { /* (the upload made ns_up) */
        const gc3_cuda_layout_t l = gc3_cuda_plan_layout(p);
        status = gc3_cuda_fill(s->d_plan + l.ns + (size_t)p->shift * (size_t)p->ntbs_max * 4, p->tb_nsteps,
                               (size_t)p->ntbs * 4, "cudaMemcpyAsync(steps per block)", diag);
        if (status != GC3_OK) {
            return status;
        }
        s->ns_up[p->shift] = 1;
    }
    return GC3_OK;
}

/* What this backend would allocate for a plan (gc3_plan_estimate). */
static void gc3_cuda_mem_estimate(const gc3_flat_program_t *flat, int ntbs, gc3_plan_mem_t *m)
{
    const gc3_cuda_layout_t l = gc3_cuda_layout(flat->bytes, (size_t)ntbs, 1);
    m->control += l.plan + l.call;
    m->pinned += GC3_CUDA_MAPPED_BYTES + l.call;
}

extern "C" const gc3_rt_backend_t gc3_rt_backend_cuda = {
    "cuda",
    gc3_cuda_region_create,
    gc3_cuda_region_open,
    gc3_cuda_region_unlink,
    gc3_cuda_region_close,
    gc3_cuda_mem_alloc,
    gc3_cuda_mem_free,
    gc3_cuda_host_alloc,
    gc3_cuda_host_free,
    gc3_cuda_start,
    gc3_cuda_test,
    gc3_cuda_wait,
    gc3_cuda_plan_cleanup,
    gc3_cuda_quit, /* plan_moved: the resident kernel keeps the connections of its first call */
    gc3_cuda_plan_rebind,
    gc3_cuda_max_blocks,
    gc3_cuda_deferred_query,
    gc3_cuda_mem_estimate,
    gc3_cuda_mem_write,
    gc3_cuda_reg_query,
    gc3_cuda_reg_handle,
    gc3_cuda_reg_open,
    gc3_cuda_reg_close,
    gc3_cuda_region_dedicate,
};
