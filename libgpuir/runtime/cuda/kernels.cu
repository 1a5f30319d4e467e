/* gc3 / libgpuir: the CUDA backend's kernels. One IR thread block = one CUDA block of the
 * interpreter kernel (interp_core.inl over the primitives of primitives.cuh), all blocks
 * co-resident (the host side checks the grid against the device). Control (waits, counters) is done
 * by thread 0, data movement by all threads with 16-byte vectors. The host side (host.cu) launches
 * them through the functions at the end. */
#include "primitives.cuh"

/* The chunk ends of the loop the block runs (gc3_core_ends_fill), for plans whose steps fit in
 * shared memory (12 KB), and what they were computed for (cleared when a kernel starts) */
static __shared__ gc3_core_end_t gc3_cuda_ends[GC3_CUDA_SH_STEPS * GC3_RT_ENDS_CHUNKS];
static __shared__ uint64_t       gc3_cuda_ends_key[3];

#include "interp_core.inl"


/* What the control thread reads at every step, in shared memory when it fits: the block's
 * steps, and the rank's per-block counter offsets, bases and step counts (one global load less
 * on the path of every wait; measured, a step's waits took 0.7 us with the dependency met). */
typedef struct {
    gc3_rt_tb_t     t;
    gc3_flat_step_t steps[GC3_CUDA_SH_STEPS];
    int64_t         sem_off[GC3_CUDA_SH_TBS], loops_off[GC3_CUDA_SH_TBS];
    uint64_t        sem_base[GC3_CUDA_SH_TBS], loops_base[GC3_CUDA_SH_TBS];
    int32_t         tb_nsteps[GC3_CUDA_SH_TBS];
} gc3_cuda_shared_t;

template <typename T> __device__ static void gc3_cuda_words(T *dst, const T *src, size_t n)
{
    static_assert(sizeof(T) % 4 == 0, "copied as words");
    for (size_t i = threadIdx.x; i < n * (sizeof(T) / 4); i += blockDim.x) {
        ((uint32_t *)dst)[i] = ((const uint32_t *)src)[i];
    }
}

/* The block's context into shared memory with all threads (the counter bases from where the
 * launch put them), then what fits of the rest. */
__device__ static void gc3_cuda_enter(gc3_cuda_shared_t *sh, const gc3_rt_tb_t *src, const uint64_t *sem_base,
                                      const uint64_t *loops_base, uint64_t seq)
{
    gc3_rt_tb_t *t = &sh->t;
    gc3_cuda_words(t, src, 1);
    __syncthreads();
    if (threadIdx.x == 0 && sem_base != NULL) {
        t->sem_base   = sem_base;
        t->loops_base = loops_base;
    }
    if (threadIdx.x == 0) {
        gc3_cuda_ends_key[2] = 0; /* the table holds nothing yet */
        t->call              = seq;
    }
    __syncthreads();
    if (t->nsteps <= GC3_CUDA_SH_STEPS) {
        gc3_cuda_words(sh->steps, t->steps, (size_t)t->nsteps);
    }
    if (t->ntbs <= GC3_CUDA_SH_TBS) {
        gc3_cuda_words((int32_t *)sh->sem_off, (const int32_t *)t->sem_off, 2 * (size_t)t->ntbs);
        gc3_cuda_words((int32_t *)sh->loops_off, (const int32_t *)t->loops_off, 2 * (size_t)t->ntbs);
        gc3_cuda_words((int32_t *)sh->sem_base, (const int32_t *)t->sem_base, 2 * (size_t)t->ntbs);
        gc3_cuda_words((int32_t *)sh->loops_base, (const int32_t *)t->loops_base, 2 * (size_t)t->ntbs);
        gc3_cuda_words(sh->tb_nsteps, t->tb_nsteps, (size_t)t->ntbs);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        if (t->nsteps <= GC3_CUDA_SH_STEPS) {
            t->steps = sh->steps;
        }
        if (t->ntbs <= GC3_CUDA_SH_TBS) {
            t->sem_off    = sh->sem_off;
            t->loops_off  = sh->loops_off;
            t->sem_base   = sh->sem_base;
            t->loops_base = sh->loops_base;
            t->tb_nsteps  = sh->tb_nsteps;
        }
    }
    __syncthreads();
}

/* A block counts in with a release at device scope (its writes, which the barrier ordered before
 * thread 0's, come with it); the last one acquires them all through the counter and its release at
 * system scope carries them to the host (release is cumulative). One system-scope release per
 * call instead of one system fence per block before the count: each costs about 580 ns. */
__device__ static void gc3_cuda_leave(const gc3_cuda_done_t &d)
{
    __syncthreads();
    if (threadIdx.x == 0) {
        unsigned long long n;
        asm volatile("atom.acq_rel.gpu.global.add.u64 %0, [%1], %2;" : "=l"(n) : "l"(d.count), "l"(1ull) : "memory");
        if (n + 1 == d.base + gridDim.x) {
            const uint64_t now = d.marks != NULL ? gc3_dev_now() : 0;
            gc3_dev_st_rel(d.flag, d.seq);
            if (d.marks != NULL) {
                /* after the flag: a store into host memory before it would hold its release back by a
                 * PCIe round trip; the host takes it when it is there (gc3_cuda_marks_take) */
                ((volatile uint64_t *)d.marks)[1] = now;
            }
        }
    }
}

/* Block 0: the call was taken now (a plan recording its calls' phases; its count-in carries it). */
/* ---------------------------------------------------------------- places to run (tests)
 *
 * GC3_TEST_RESIDENT_BLOCKS=N (host.cu reads it into gc3_cuda_done_t.cap): at most N blocks of the
 * process run a call at once, all plans together, as if the GPU held no more. A block takes a place
 * before it runs the call and gives it back when it ends or gives way; places go in the order they
 * were asked for (a ticket), as the GPU starts the blocks it holds back, and a block launched again
 * after it gave way asks behind the others. A block waiting for its place spins (its SM is not what
 * the cap counts). With coll_gc3_yield_us 0 a block keeps its place while it waits: calls whose
 * blocks cannot all run at once then wait for each other until the timeout. */
__device__ unsigned long long gc3_cuda_place_tickets, gc3_cuda_place_given;

/* Take a place (all threads). Nonzero when the rank's call failed meanwhile or the wait outlasted
 * the timeout (recorded). */
__device__ static int gc3_cuda_place_take(gc3_rt_tb_t *t, uint32_t cap)
{
    int stop = 0;
    if (cap == 0) {
        return 0;
    }
    if (threadIdx.x == 0) {
        const unsigned long long ticket = atomicAdd(&gc3_cuda_place_tickets, 1ull);
        const uint64_t           start  = gc3_dev_now();
        for (uint64_t polls = 1; gc3_dev_ld_acq_gpu((const uint64_t *)&gc3_cuda_place_given) + cap <= ticket; polls++) {
            if ((polls & 1023) == 0) {
                if (*t->abort_flag) {
                    stop = 1;
                    break;
                }
                if (t->timeout_s > 0 && (double)(gc3_dev_now() - start) * 1e-9 > t->timeout_s) {
                    gc3_core_fail(t, 0, 0, GC3_WAIT_WHAT_PLACE, -1, -1, cap, 0);
                    stop = 1;
                    break;
                }
            }
            gc3_dev_pause(polls);
        }
        if (stop) {
            atomicAdd(&gc3_cuda_place_given, 1ull); /* its turn, given up */
        }
    }
    return gc3_dev_share_int(stop);
}

/* The block's run of the call, in a place under a test's cap: gc3_core_run's answer in every thread. A
 * block that ended the call before (resuming) takes no place. */
__device__ static int gc3_cuda_run(gc3_rt_tb_t *t, const gc3_cuda_done_t &d)
{
    int rc;
    if (gc3_core_ended_before(t)) {
        return GC3_CORE_DONE_BEFORE;
    }
    if (gc3_cuda_place_take(t, d.cap)) {
        return GC3_CORE_FAILED;
    }
    rc = gc3_dev_share_int(gc3_core_run(t));
    if (d.cap != 0 && threadIdx.x == 0) {
        atomicAdd(&gc3_cuda_place_given, 1ull);
    }
    return rc;
}

/* A block's run of the call ended: counted in when it ran the call to its end (or the call failed);
 * when it gave way, the host is told (it launches the call again once the kernel ended); nothing when,
 * resumed, it had ended the call before. */
__device__ static void gc3_cuda_end(const gc3_cuda_done_t &d, int rc)
{
    if (rc == GC3_CORE_YIELDED) {
        if (threadIdx.x == 0) {
            *(volatile uint64_t *)d.yielded = d.seq;
        }
    } else if (rc != GC3_CORE_DONE_BEFORE) {
        gc3_cuda_leave(d);
    }
}

__device__ static inline void gc3_cuda_mark_taken(const gc3_cuda_done_t &d)
{
    if (d.marks != NULL && blockIdx.x == 0 && threadIdx.x == 0) {
        ((volatile uint64_t *)d.marks)[0] = gc3_dev_now();
    }
}

/* Large plans: the contexts and the per-call counter bases were copied to device memory. The kernels are
 * built for blocks of up to GC3_CUDA_MAX_THREADS threads (the executor's 512): at most 128 registers a
 * thread, which the reductions of unaligned operands (gc3_be_reduce_n) would pass otherwise. */
__global__ void __launch_bounds__(GC3_CUDA_MAX_THREADS, 1)
    gc3_interp_kernel(const gc3_rt_tb_t *ctxs, const gc3_cuda_done_t done)
{
    __shared__ gc3_cuda_shared_t sh;
    gc3_cuda_mark_taken(done);
    gc3_cuda_enter(&sh, &ctxs[blockIdx.x], NULL, NULL, done.seq);
    gc3_cuda_end(done, gc3_cuda_run(&sh.t, done));
}

/* ---------------------------------------------------------------- resident kernel
 *
 * A kernel launch plus its completion costs the host about 6.6 us on H200; a doorbell in
 * host-mapped memory that a running kernel polls, about 3.4 us (both measured with an empty
 * kernel); one carrying many blocks' contexts costs more (2 x H200, ring allreduce of 32 blocks at
 * 16 KB: 33.8 us launched per call at 995d648, 20.1 us resident at 82e4dec, which also differs
 * otherwise; 4 MB: 47.0 and 33.0 us). So the kernel of a plan of up to GC3_RESIDENT_MAX_BLOCKS
 * blocks stays resident after a call: block 0 polls a mailbox
 * in host-mapped memory for the next call's descriptor, relays it to the other blocks through
 * device memory (one poller: eight blocks polling host memory at once took 15.8 us a round), and
 * every block runs the call with the context it kept in shared memory. When no call comes for
 * idle_ns, or a call fails, or the host asks it to quit, the kernel ends; the host then launches
 * a new one with the next call in its parameters.
 *
 * The mailbox is GC3_CUDA_MAIL_WORDS lines of 8 bytes, each a 32-bit word of the descriptor and
 * the low 32 bits of the call's number: the whole descriptor is there when every line carries the
 * number (the host writes each line with one 8-byte store), and one 128-byte read fetches it. */
/* a 64-bit field of the descriptor: words i (low) and i + 1 (high); gc3_cuda_post writes them */
__device__ static inline uint64_t gc3_mail_u64(const uint32_t *w, int i)
{
    return (uint64_t)w[i] | (uint64_t)w[i + 1] << 32;
}



/* Is go the end of the kernel that started with call `first`? A kernel ends naming a call it ran,
 * so an older kernel's end (naming at most first - 1) is not. */
__device__ static inline int gc3_cuda_go_ends(uint64_t go, uint64_t first)
{
    return (go & GC3_CUDA_GO_EXIT) != 0 && (go & ~GC3_CUDA_GO_EXIT) >= first;
}

/* Block 0, warp 0: wait for call `want` in the mailbox. 1 with its words in w[] and relayed to
 * the other blocks; 0 when the kernel ends (quit, idle, another block failed, or the host's
 * counters are not the ones this kernel kept: the host then launches a kernel that starts with
 * the call). */
__device__ static int gc3_cuda_mail_wait(const gc3_cuda_resident_t *r, uint64_t want, uint64_t first,
                                         uint32_t check, uint32_t *w)
{
    const int      lane  = threadIdx.x & 31;
    const uint64_t start = gc3_dev_now();
    uint32_t       x = 0;
    int            take = 0;
    for (uint64_t polls = 0;; polls++) {
        int ok = 1;
        if (lane < GC3_CUDA_MAIL_WORDS) {
            uint32_t seq;
            asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];" : "=r"(x), "=r"(seq) : "l"(r->mail + lane) : "memory");
            ok = seq == (uint32_t)want;
        }
        if (__all_sync(0xffffffffu, ok)) {
            take = 1;
            break;
        }
        /* every 16 rounds (the mailbox read is a PCIe round trip): the end of the idle time, or a
         * failed block of this kernel */
        if ((polls & 15) == 15 &&
            __any_sync(0xffffffffu, lane == 0 && (gc3_dev_now() - start > r->idle_ns ||
                                                  gc3_cuda_go_ends(gc3_dev_ld_acq_gpu(r->go), first)))) {
            break;
        }
    }
    if (take) {
        uint32_t flags = __shfl_sync(0xffffffffu, x, GC3_MAIL_FLAGS), hc = __shfl_sync(0xffffffffu, x, GC3_MAIL_CHECK);
        take = (flags & GC3_MAIL_F_QUIT) == 0 && hc == check;
        if (take && (flags & GC3_MAIL_F_LEGACY)) {
            /* what the caller queued on the legacy default stream before the call has run (the stream wrote
             * the call's number after it); waited for no longer than the idle time: the kernel then ends
             * without the call, which the host launches again, its stream waiting for the legacy stream */
            const uint64_t since = gc3_dev_now();
            int            ok    = 1;
            if (lane == 0) {
                for (uint64_t polls = 1; (int32_t)(gc3_dev_ld_acq_u32(r->legacy) - (uint32_t)want) < 0; polls++) {
                    if ((polls & 63) == 0 && gc3_dev_now() - since > r->idle_ns) {
                        ok = 0;
                        break;
                    }
                    gc3_dev_pause(polls);
                }
            }
            take = __shfl_sync(0xffffffffu, ok, 0);
        }
    }
    if (take) {
        if (lane < GC3_CUDA_MAIL_WORDS) {
            w[lane]       = x;
            r->desc[lane] = x;
        }
        __syncwarp(); /* orders the lanes' words before lane 0's release (cumulative) */
        if (lane == 0) {
            gc3_dev_st_rel_gpu(r->go, want);
        }
    } else if (lane == 0) {
        gc3_dev_st_rel_gpu(r->go, GC3_CUDA_GO_EXIT | (want - 1));
    }
    __syncwarp();
    return take;
}

/* Other blocks, thread 0: wait for block 0 to take call `want`; 1 with its words in w[], 0 when
 * the kernel ends. */
__device__ static int gc3_cuda_go_wait(const gc3_cuda_resident_t *r, uint64_t want, uint64_t first, uint32_t *w)
{
    const uint64_t start = gc3_dev_now();
    for (uint64_t polls = 1;; polls++) {
        uint64_t g = gc3_dev_ld_acq_gpu(r->go);
        /* EXIT | want: block 0 took call `want` and a block that ran it gave way (or failed) since: this
         * block runs it too (a record to resume from, or its failure), else the call never completes */
        if (g == want || g == (GC3_CUDA_GO_EXIT | want)) {
            for (int i = 0; i < GC3_CUDA_MAIL_WORDS; i++) {
                w[i] = ((volatile uint32_t *)r->desc)[i];
            }
            return 1;
        }
        if (gc3_cuda_go_ends(g, first)) {
            return 0;
        }
        /* block 0 always ends the kernel by writing go; a bound in case it never could */
        if ((polls & 1023) == 0 && gc3_dev_now() - start > 2 * r->idle_ns + 10000000000ull) {
            return 0;
        }
        gc3_dev_pause(polls);
    }
}

/* After the kernel's first call: keep taking calls from the mailbox. The counter bases advance
 * as the executor advances them after a call (gc3_exec_finish); the host's check word catches
 * any difference. */
__device__ static void gc3_cuda_resident(gc3_cuda_shared_t *sh, const gc3_cuda_resident_t *r, gc3_cuda_done_t done,
                                         int rc)
{
    __shared__ uint32_t w[GC3_CUDA_MAIL_WORDS];
    __shared__ int      go;
    gc3_rt_tb_t        *t     = &sh->t;
    const uint64_t      first = done.seq;

    for (;;) {
        /* a failed call ends the kernel; so does a block that gave way (the host launches the call again,
         * not resident: the blocks that had ended it then end at once) */
        const int stop = rc == GC3_CORE_FAILED || rc == GC3_CORE_YIELDED;
        if (stop && threadIdx.x == 0) {
            gc3_dev_st_rel_gpu(r->go, GC3_CUDA_GO_EXIT | done.seq); /* the others end too */
        }
        gc3_cuda_end(done, rc);
        if (stop) {
            break;
        }
        const uint64_t L = (uint64_t)t->L;
        /* every block's bases, one block per thread (up to GC3_RESIDENT_MAX_BLOCKS of them) */
        for (int b = threadIdx.x; b < t->ntbs; b += blockDim.x) {
            ((uint64_t *)t->sem_base)[b] += L * (uint64_t)t->tb_nsteps[b];
            ((uint64_t *)t->loops_base)[b] += L;
        }
        if (threadIdx.x == 0) {
            /* (gc3_core_run advanced send_base and recv_base by what the call sent and received) */
            t->send_slot = (uint32_t)(t->send_base % (uint64_t)t->slots);
            t->recv_slot = (uint32_t)(t->recv_base % (uint64_t)t->slots);
        }
        __syncthreads(); /* every lane of the mailbox warp compares the advanced base */
        if (blockIdx.x == 0) {
            if (threadIdx.x < 32) {
                int take = gc3_cuda_mail_wait(r, done.seq + 1, first, (uint32_t)t->sem_base[0], w);
                if (threadIdx.x == 0) {
                    go = take;
                }
            }
        } else if (threadIdx.x == 0) {
            go = gc3_cuda_go_wait(r, done.seq + 1, first, w);
        }
        __syncthreads();
        if (!go) {
            break;
        }
        if (threadIdx.x == 0) {
            t->buf[GC3_BUF_INPUT]   = (char *)gc3_mail_u64(w, GC3_MAIL_IN);
            t->buf[GC3_BUF_OUTPUT]  = (char *)gc3_mail_u64(w, GC3_MAIL_OUT);
            t->buf[GC3_BUF_SCRATCH] = (char *)gc3_mail_u64(w, GC3_MAIL_SCRATCH);
            t->count  = gc3_mail_u64(w, GC3_MAIL_COUNT);
            t->seg                  = (const uint64_t *)gc3_mail_u64(w, GC3_MAIL_SEG);
            t->seg_ver              = w[GC3_MAIL_SEG_VER];
            t->sig    = gc3_mail_u64(w, GC3_MAIL_SIG);
            t->T      = gc3_mail_u64(w, GC3_MAIL_T);
            t->L      = (int32_t)w[GC3_MAIL_L];
            t->dtype  = (int32_t)(w[GC3_MAIL_TYPE] & 0xff);
            t->op     = (int32_t)(w[GC3_MAIL_TYPE] >> 8 & 0xff);
            t->dsize  = (int32_t)(w[GC3_MAIL_TYPE] >> 16 & 0xff);
            t->window = (int32_t)(w[GC3_MAIL_TYPE] >> 24);
            t->trace  = (w[GC3_MAIL_FLAGS] & GC3_MAIL_F_TRACE) && r->trace != NULL
                            ? r->trace + (size_t)blockIdx.x * (size_t)r->trace_stride : NULL;
            t->handover = (w[GC3_MAIL_FLAGS] & GC3_MAIL_F_HANDOVER) != 0;
            t->zc_bit   = (int32_t)(w[GC3_MAIL_FLAGS] >> GC3_MAIL_F_ZC_SHIFT & 3);
            t->zc_id[0] = w[GC3_MAIL_ZC_ID] & 0xffff;
            t->zc_id[1] = w[GC3_MAIL_ZC_ID] >> 16;
            t->zc_peers[0] = gc3_mail_u64(w, GC3_MAIL_ZC_PEERS_IN);
            t->zc_peers[1] = gc3_mail_u64(w, GC3_MAIL_ZC_PEERS_OUT);
            /* the host wrote the table before the mailbox, whose words this block saw: ordered at system scope
             * (block 0 read the mailbox with volatile loads, the others took it through device memory) */
            t->push[0] = t->push[1] = 0;
            if ((w[GC3_MAIL_FLAGS] & GC3_MAIL_F_PUSH) || t->seg != 0) { /* (the push table, the per-rank counts) */
                __threadfence_system();
            }
            if (w[GC3_MAIL_FLAGS] & GC3_MAIL_F_PUSH) {
                t->push[0] = ((const volatile uint64_t *)r->push)[2 * blockIdx.x];
                t->push[1] = ((const volatile uint64_t *)r->push)[2 * blockIdx.x + 1];
            }
        }
        done.seq++;
        done.base += gridDim.x; /* (every call of a resident kernel has its blocks) */
        if (threadIdx.x == 0) {
            t->call = done.seq;
        }
        gc3_cuda_mark_taken(done);
        __syncthreads();
        rc = gc3_cuda_run(t, done);
    }
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        gc3_dev_st_rel(r->exited, done.seq); /* the host relaunches from the next call on */
    }
}

template <int N>
__global__ void __launch_bounds__(GC3_CUDA_MAX_THREADS, 1)
    gc3_interp_kernel_args(const __grid_constant__ gc3_cuda_args<N> a)
{
    __shared__ gc3_cuda_shared_t sh;
    int                          rc;
    gc3_cuda_mark_taken(a.done);
    gc3_cuda_enter(&sh, &a.tb[blockIdx.x], a.sem_base, a.loops_base, a.done.seq);
    rc = gc3_cuda_run(&sh.t, a.done);
    if (a.res.mail == NULL) {
        gc3_cuda_end(a.done, rc);
    } else {
        gc3_cuda_resident(&sh, &a.res, a.done, rc);
    }
}

/* ---------------------------------------------------------------- launching (kernels.cuh) */

int gc3_cuda_kernel_blocks_per_sm(int threads)
{
    int per_sm = 0, small = 0, mid = 0, large = 0;
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, gc3_interp_kernel, threads, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&small, gc3_interp_kernel_args<GC3_CUDA_ARGS_SMALL>, threads, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&mid, gc3_interp_kernel_args<GC3_CUDA_ARGS_MID>, threads, 0);
    cudaOccupancyMaxActiveBlocksPerMultiprocessor(&large, gc3_interp_kernel_args<GC3_CUDA_ARGS_LARGE>, threads, 0);
    per_sm = per_sm < small ? per_sm : small;
    per_sm = per_sm < mid ? per_sm : mid;
    return per_sm < large ? per_sm : large;
}

template <int N> void gc3_cuda_kernel_launch_args(const gc3_cuda_args<N> &a, int blocks, int threads, cudaStream_t st)
{
    gc3_interp_kernel_args<N><<<blocks, threads, 0, st>>>(a);
}
template void gc3_cuda_kernel_launch_args<GC3_CUDA_ARGS_SMALL>(const gc3_cuda_args<GC3_CUDA_ARGS_SMALL> &, int, int,
                                                                cudaStream_t);
template void gc3_cuda_kernel_launch_args<GC3_CUDA_ARGS_MID>(const gc3_cuda_args<GC3_CUDA_ARGS_MID> &, int, int,
                                                              cudaStream_t);
template void gc3_cuda_kernel_launch_args<GC3_CUDA_ARGS_LARGE>(const gc3_cuda_args<GC3_CUDA_ARGS_LARGE> &, int, int,
                                                                cudaStream_t);

void gc3_cuda_kernel_launch_ctxs(const gc3_rt_tb_t *ctxs, gc3_cuda_done_t done, int blocks, int threads,
                                 cudaStream_t st)
{
    gc3_interp_kernel<<<blocks, threads, 0, st>>>(ctxs, done);
}
