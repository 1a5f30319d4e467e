/* gc3 / libgpuir: the CUDA backend's device primitives: ordered loads and stores, the clock and
 * back-off, a block's shared values, 16-byte copies, reductions of every dtype and op, the LL
 * protocol's lines; and the definitions interp_core.inl expects of a backend (GC3_DEV, GC3_LEADER,
 * ...). Device code only, included by kernels.cu. */
#ifndef GC3_CUDA_PRIMITIVES_CUH
#define GC3_CUDA_PRIMITIVES_CUH

#include "kernels.cuh"

/* ---------------------------------------------------------------- device primitives */

__device__ static inline uint64_t gc3_dev_ld_acq(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.sys.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ static inline uint32_t gc3_dev_ld_acq_u32(const uint32_t *p)
{
    uint32_t v;
    asm volatile("ld.acquire.sys.global.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ static inline uint64_t gc3_dev_ld_acq_gpu(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.acquire.gpu.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

__device__ static inline void gc3_dev_st_rel(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ static inline void gc3_dev_st_rel_gpu(uint64_t *p, uint64_t v)
{
    asm volatile("st.release.gpu.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

/* measured on H200: st.release.sys and fence.sys about 580 ns, st.release.gpu 290 ns; a relaxed
 * store where what precedes already orders it saves them */
__device__ static inline void gc3_dev_st_relaxed(uint64_t *p, uint64_t v)
{
    asm volatile("st.relaxed.sys.global.u64 [%0], %1;" ::"l"(p), "l"(v) : "memory");
}

__device__ static inline uint64_t gc3_dev_now(void)
{
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

__device__ static inline void gc3_dev_pause(uint64_t polls)
{
    if (polls > 2048) {
        __nanosleep(polls > 65536 ? 1000 : 64);
    }
}

__device__ static int gc3_dev_share_int(int x)
{
    __shared__ int v;
    __syncthreads();
    if (threadIdx.x == 0) {
        v = x;
    }
    __syncthreads();
    return v;
}

__device__ static uint64_t gc3_dev_share_u64(uint64_t x)
{
    __shared__ uint64_t v;
    __syncthreads();
    if (threadIdx.x == 0) {
        v = x;
    }
    __syncthreads();
    return v;
}

__device__ static inline uint64_t gc3_dev_ld_volatile(const uint64_t *p)
{
    uint64_t v;
    asm volatile("ld.volatile.global.u64 %0, [%1];" : "=l"(v) : "l"(p) : "memory");
    return v;
}

#define GC3_DEV            __device__
#define GC3_LEADER         (threadIdx.x == 0)
#define GC3_SYNC()         __syncthreads()
#define GC3_LOAD_ACQ(p)    gc3_dev_ld_acq(p)
#define GC3_LOAD_ACQ_LOCAL(p) gc3_dev_ld_acq_gpu(p)
#define GC3_STORE_REL_LOCAL(p, v) gc3_dev_st_rel_gpu((p), (v))
#define GC3_STORE_POST(p, v) gc3_dev_st_relaxed((p), (v))
#define GC3_FENCE_DATA()   __threadfence_system()
#define GC3_NOW_NS()       gc3_dev_now()
#define GC3_PAUSE(n)       gc3_dev_pause(n)
#define GC3_SHARE_INT(x)   gc3_dev_share_int(x)
#define GC3_SHARE_U64(x)   gc3_dev_share_u64(x)
#define GC3_LOAD_VOLATILE(p) gc3_dev_ld_volatile(p)
#define GC3_STAMP(t, i)    do { if ((t)->trace) (t)->trace[i] = gc3_dev_now(); } while (0)
#define GC3_THREAD         ((int)threadIdx.x)
#define GC3_THREADS        ((int)blockDim.x)
#define GC3_ENDS_STEPS     GC3_CUDA_SH_STEPS
#define GC3_ENDS_TABLE     gc3_cuda_ends
#define GC3_ENDS_KEY       gc3_cuda_ends_key

/* copy `bytes` with the whole block in words W (4 in flight per thread), where src, d1 and d2 (NULL: none)
 * are equally far from a W boundary: the bytes before src's first boundary and after its last one are
 * copied one by one */
template <typename W> __device__ static void gc3_be_copy_words(char *d1, char *d2, const char *src, uint64_t bytes)
{
    const int      tid = threadIdx.x, nt = blockDim.x;
    const uint64_t mis  = (uint64_t)(uintptr_t)src % sizeof(W);
    const uint64_t head = mis == 0 ? 0 : (sizeof(W) - mis < bytes ? sizeof(W) - mis : bytes);
    for (uint64_t j = tid; j < head; j += nt) {
        d1[j] = src[j];
        if (d2)
            d2[j] = src[j];
    }
    src += head;
    d1 += head;
    d2 = d2 ? d2 + head : d2;
    bytes -= head;
    const W *s = (const W *)src;
    W       *a = (W *)d1, *b = (W *)d2;
    uint64_t nv = bytes / sizeof(W), i = tid;
    for (; i + 3 * nt < nv; i += 4 * nt) {
        W v0 = s[i], v1 = s[i + nt], v2 = s[i + 2 * nt], v3 = s[i + 3 * nt];
        a[i]          = v0;
        a[i + nt]     = v1;
        a[i + 2 * nt] = v2;
        a[i + 3 * nt] = v3;
        if (b) {
            b[i]          = v0;
            b[i + nt]     = v1;
            b[i + 2 * nt] = v2;
            b[i + 3 * nt] = v3;
        }
    }
    for (; i < nv; i += nt) {
        W v  = s[i];
        a[i] = v;
        if (b)
            b[i] = v;
    }
    for (uint64_t j = nv * sizeof(W) + tid; j < bytes; j += nt) {
        d1[j] = src[j];
        if (d2)
            d2[j] = src[j];
    }
}

/* copy `bytes` with the whole block: 16-byte vectors when the pointers are equally far from a 16-byte
 * boundary (all aligned: the common case), else the widest word they share (8, 4, 2 bytes): a segment of
 * per-rank counts starts anywhere, and byte by byte such copies ran at a sixth of the aligned ones'
 * bandwidth (alltoallv with uneven counts, 1 x H100) */
__device__ static void gc3_be_copy2(char *d1, char *d2, const char *src, uint64_t bytes)
{
    const uint64_t diff = ((uint64_t)(uintptr_t)src ^ (uint64_t)(uintptr_t)d1) |
                          (d2 ? (uint64_t)(uintptr_t)src ^ (uint64_t)(uintptr_t)d2 : 0);
    if ((diff & 15) == 0) {
        gc3_be_copy_words<uint4>(d1, d2, src, bytes);
    } else if ((diff & 7) == 0) {
        gc3_be_copy_words<uint2>(d1, d2, src, bytes);
    } else if ((diff & 3) == 0) {
        gc3_be_copy_words<uint32_t>(d1, d2, src, bytes);
    } else if ((diff & 1) == 0) {
        gc3_be_copy_words<uint16_t>(d1, d2, src, bytes);
    } else {
        gc3_be_copy_words<char>(d1, d2, src, bytes);
    }
}

__device__ static inline void gc3_be_copy(char *dst, const char *src, uint64_t bytes)
{
    if (dst != src) {
        gc3_be_copy2(dst, (char *)0, src, bytes);
    }
}

template <typename T> __device__ static inline T gc3_dev_op(int op, T a, T b)
{
    switch (op) {
    case GC3_OP_SUM:  return (T)(a + b);
    case GC3_OP_PROD: return (T)(a * b);
    case GC3_OP_MIN:  return b < a ? b : a;
    case GC3_OP_MAX:  return b > a ? b : a;
    default:          return a;
    }
}

template <typename T> __device__ static inline T gc3_dev_bitop(int op, T a, T b)
{
    switch (op) {
    case GC3_OP_BAND: return a & b;
    case GC3_OP_BOR:  return a | b;
    case GC3_OP_BXOR: return a ^ b;
    default:          return gc3_dev_op<T>(op, a, b);
    }
}

template <typename T, bool BIT> __device__ static inline T gc3_dev_any_op(int op, T a, T b)
{
    if constexpr (BIT) {
        return gc3_dev_bitop<T>(op, a, b);
    } else {
        return gc3_dev_op<T>(op, a, b);
    }
}

/* The datatypes the reductions handle: (gc3 datatype, C type, whether the bitwise ops apply). Each
 * dispatch below expands X once per datatype. */
#define GC3_DEV_DTYPES(X)                                                                                 \
    X(GC3_DT_INT8, int8_t, true)                                                                          \
    X(GC3_DT_UINT8, uint8_t, true)                                                                        \
    X(GC3_DT_INT32, int32_t, true)                                                                        \
    X(GC3_DT_UINT32, uint32_t, true)                                                                      \
    X(GC3_DT_INT64, int64_t, true)                                                                        \
    X(GC3_DT_UINT64, uint64_t, true)                                                                      \
    X(GC3_DT_FLOAT32, float, false)                                                                       \
    X(GC3_DT_FLOAT64, double, false)

/* An operand's 16 bytes at vector i of a 16-byte aligned destination: one 16-byte load when the operand
 * is aligned too, else element by element (a segment of per-rank counts starts at any element, so the
 * operands of one reduction are often unequally aligned). */
template <typename T> __device__ static inline uint4 gc3_dev_ld16(const T *p, uint64_t i, bool aligned)
{
    if (aligned) {
        return ((const uint4 *)p)[i];
    }
    uint4 v;
    T    *e = (T *)&v;
#pragma unroll
    for (int k = 0; k < 16 / (int)sizeof(T); k++) {
        e[k] = p[i * (16 / sizeof(T)) + k];
    }
    return v;
}

/* The elements before dst's first 16-byte boundary (all of them when n is small): the reductions do these
 * one by one and the rest 16 bytes at a time. Pointers must be aligned to their element type (buffers of
 * an MPI datatype are): for a dst that is not, the head is all n, whose element accesses are misaligned
 * too (not supported). */
template <typename T> __device__ static inline uint64_t gc3_dev_head(const T *dst, uint64_t n)
{
    const uint64_t mis = (uint64_t)(uintptr_t)dst & 15;
    if (mis % sizeof(T) != 0) {
        return n;
    }
    const uint64_t h = ((16 - mis) & 15) / sizeof(T);
    return h < n ? h : n;
}

/* dst = x[0] op x[1] op ... op x[m-1], left to right, 16 bytes at a time: from the start when everything
 * is aligned, else from dst's first 16-byte boundary (operands not aligned with it loaded element by
 * element). One operand at a time: holding three operands' vectors at once took the kernel to 255
 * registers with spills (-Xptxas -v). */
template <typename T, bool BIT>
__device__ static void gc3_dev_reduce_n(int op, T *dst, const char *const *x, int m, uint64_t n)
{
    const int tid = threadIdx.x, nt = blockDim.x;
    const int per = 16 / sizeof(T);
    uint64_t  al  = (uint64_t)(uintptr_t)dst;
    for (int j = 0; j < m; j++) {
        al |= (uint64_t)(uintptr_t)x[j];
    }
    const uint64_t head = (al & 15) == 0 ? 0 : gc3_dev_head(dst, n);
    const uint64_t nv = (n - head) / per, done = head + nv * per;
    if ((al & 15) == 0) {
        for (uint64_t i = tid; i < nv; i += nt) {
            uint4 v   = ((const uint4 *)x[0])[i];
            T    *acc = (T *)&v;
            for (int j = 1; j < m; j++) {
                uint4    w = ((const uint4 *)x[j])[i];
                const T *b = (const T *)&w;
#pragma unroll
                for (int k = 0; k < 16 / (int)sizeof(T); k++) {
                    acc[k] = gc3_dev_any_op<T, BIT>(op, acc[k], b[k]);
                }
            }
            ((uint4 *)dst)[i] = v;
        }
    } else {
        for (uint64_t i = tid; i < nv; i += nt) {
            const T *x0  = (const T *)x[0] + head;
            uint4    v   = gc3_dev_ld16<T>(x0, i, ((uintptr_t)x0 & 15) == 0);
            T       *acc = (T *)&v;
            for (int j = 1; j < m; j++) {
                const T *xj = (const T *)x[j] + head;
                uint4    w  = gc3_dev_ld16<T>(xj, i, ((uintptr_t)xj & 15) == 0);
                const T *b  = (const T *)&w;
#pragma unroll
                for (int k = 0; k < 16 / (int)sizeof(T); k++) {
                    acc[k] = gc3_dev_any_op<T, BIT>(op, acc[k], b[k]);
                }
            }
            ((uint4 *)(dst + head))[i] = v;
        }
    }
    for (uint64_t r = tid; r < head + (n - done); r += nt) { /* the head, then the tail */
        const uint64_t i   = r < head ? r : done + (r - head);
        T              acc = ((const T *)x[0])[i];
        for (int j = 1; j < m; j++) {
            acc = gc3_dev_any_op<T, BIT>(op, acc, ((const T *)x[j])[i]);
        }
        dst[i] = acc;
    }
}

/* Not inlined: inlined at each of its callers in the four kernels, it took the kernel from 72 to 128
 * registers and the compile from 37 s to 220 s; called, the kernels stay at 128 registers with the bound
 * of 512 threads (kernels.cu). */
__device__ static __noinline__ void gc3_be_reduce_n(int dtype, int op, char *dst, const char *const *x, int m, uint64_t n)
{
#define GC3_DEV_REDUCE_N_CASE(DT, T, BIT) \
    case DT: gc3_dev_reduce_n<T, BIT>(op, (T *)dst, x, m, n); break;
    switch (dtype) {
        GC3_DEV_DTYPES(GC3_DEV_REDUCE_N_CASE)
    default: break;
    }
#undef GC3_DEV_REDUCE_N_CASE
    __syncthreads(); /* dst may be read by other threads next (rrcs) */
}

/* dst = a op b, vectorized over 16 bytes when everything is aligned (else gc3_be_reduce3 takes
 * gc3_be_reduce_n): the ring's reductions, bound by bandwidth, inlined where they are used (4 x H200,
 * allreduce busbw at 1 GiB: 291 GB/s this way, 286 through gc3_be_reduce_n with a two-operand loop of its
 * own, 258 through its general loop) */
template <typename T, bool BIT>
__device__ static void gc3_dev_reduce(int op, T *dst, const T *a, const T *b, uint64_t n)
{
    const int      tid = threadIdx.x, nt = blockDim.x;
    const int      per = 16 / sizeof(T);
    const uint64_t nv  = n / per;
    for (uint64_t i = tid; i < nv; i += nt) {
        uint4    va = ((const uint4 *)a)[i], vb = ((const uint4 *)b)[i], vd;
        const T *pa = (const T *)&va, *pb = (const T *)&vb;
        T       *pd = (T *)&vd;
#pragma unroll
        for (int k = 0; k < 16 / (int)sizeof(T); k++) {
            pd[k] = gc3_dev_any_op<T, BIT>(op, pa[k], pb[k]);
        }
        ((uint4 *)dst)[i] = vd;
    }
    for (uint64_t i = nv * per + tid; i < n; i += nt) {
        dst[i] = gc3_dev_any_op<T, BIT>(op, a[i], b[i]);
    }
}

/* Pointers not all 16-byte aligned (a segment of per-rank counts starts at any element) go through
 * gc3_be_reduce_n, which vectorizes them from dst's first 16-byte boundary: element by element, a
 * reduce_scatter whose segments were at most 1.6 times the mean took 2.2 times the uniform one's time at
 * 16 MB (1 x H100, doc/measurements/vcoll-1xh100.md), and a misaligned path here, inlined or not, took
 * the kernel past 128 registers (512 threads a block). */
__device__ static void gc3_be_reduce3(int dtype, int op, char *dst, const char *a, const char *b, uint64_t n)
{
    if ((((uintptr_t)dst | (uintptr_t)a | (uintptr_t)b) & 15) != 0) {
        const char *x[2] = { a, b };
        gc3_be_reduce_n(dtype, op, dst, x, 2, n);
        return;
    }
#define GC3_DEV_REDUCE_CASE(DT, T, BIT) \
    case DT: gc3_dev_reduce<T, BIT>(op, (T *)dst, (const T *)a, (const T *)b, n); break;
    switch (dtype) {
        GC3_DEV_DTYPES(GC3_DEV_REDUCE_CASE)
    default: break;
    }
#undef GC3_DEV_REDUCE_CASE
    __syncthreads(); /* dst may be read by other threads next (rrcs) */
}

/* The message word of line i: the header (signature, then zeros), then `valid` bytes of src
 * (4-byte loads when aligned), zeros after them. */
__device__ static inline uint32_t gc3_ll_word(uint64_t i, uint64_t sig, const char *src, uint64_t valid, int aligned)
{
    uint32_t w = 0;
    if (gc3_ll_is_hdr(i)) {
        w = gc3_ll_hdr_word(i, sig);
    } else {
        uint64_t d = 4 * i - GC3_RT_MSG_HDR;
        if (aligned && d + 4 <= valid) {
            w = *(const uint32_t *)(src + d);
        } else {
            for (uint64_t j = d; j < valid && j < d + 4; j++) {
                w |= (uint32_t)(uint8_t)src[j] << (8 * (j - d));
            }
        }
    }
    return w;
}

__device__ static void gc3_be_ll_store(char *lines, uint64_t sig, const char *src, uint64_t valid, uint64_t bytes,
                                       uint32_t flag)
{
    const uint64_t nl      = gc3_ll_words(bytes);
    const int      aligned = ((uintptr_t)src & 3) == 0;
    for (uint64_t i = threadIdx.x; i < nl; i += blockDim.x) {
        uint32_t w = gc3_ll_word(i, sig, src, valid, aligned);
        asm volatile("st.volatile.global.v2.u32 [%0], {%1, %2};" ::"l"(lines + 8 * i), "r"(w), "r"(flag) : "memory");
    }
}

__device__ static int gc3_be_ll_load(gc3_rt_tb_t *t, char *dst, const char *lines, uint64_t valid, uint64_t bytes,
                                     uint32_t flag, uint64_t *sig_p)
{
    __shared__ int      any; /* 1: aborted, 2: timed out, 4: waited longer than t->yield_ns (in some thread) */
    __shared__ uint32_t hdr[2];
    const uint64_t      nl      = gc3_ll_words(bytes);
    const int           aligned = ((uintptr_t)dst & 3) == 0;
    int                 rc      = 0;
    if (threadIdx.x == 0) {
        any = 0;
    }
    __syncthreads();
    for (uint64_t i = threadIdx.x; i < nl && rc == 0; i += blockDim.x) {
        uint32_t w, f;
        uint64_t polls = 0, start = 0, here = 0;
        for (;;) {
            asm volatile("ld.volatile.global.v2.u32 {%0, %1}, [%2];" : "=r"(w), "=r"(f) : "l"(lines + 8 * i) : "memory");
            if (f == flag) {
                break;
            }
            if ((++polls & 4095) == 0) {
                uint64_t now = gc3_dev_now();
                if (*t->abort_flag) {
                    rc = -1;
                    break;
                }
                if (start == 0) {
                    start = now - t->waited; /* (a wait resumed: what it had waited already) */
                    here  = now;
                } else if (t->timeout_s > 0 && (double)(now - start) * 1e-9 > t->timeout_s) {
                    rc             = -2;
                    *t->abort_flag = GC3_RT_ABORT_LL_TIMEOUT; /* the leader records where (gc3_core_fail) */
                    break;
                } else if (t->yield_ns != 0 && now - here > t->yield_ns) {
                    rc = -3; /* give way (what was unpacked is written again when the step runs again) */
                    break;
                }
            }
            gc3_dev_pause(polls);
        }
        if (rc == 0) {
            if (gc3_ll_is_hdr(i)) {
                if (i < 2) {
                    hdr[i] = w;
                }
            } else {
                uint64_t d = 4 * i - GC3_RT_MSG_HDR;
                if (aligned && d + 4 <= valid) {
                    *(uint32_t *)(dst + d) = w;
                } else {
                    for (uint64_t j = d; j < valid && j < d + 4; j++) {
                        dst[j] = (char)(w >> (8 * (j - d)));
                    }
                }
            }
        }
    }
    if (rc != 0) {
        atomicOr(&any, rc == -2 ? 2 : rc == -3 ? 4 : 1);
    }
    __syncthreads();
    rc = any & 2 ? -2 : any & 1 ? -1 : any ? -3 : 0; /* the same answer in every thread */
    if (rc == -3 && threadIdx.x == 0) {
        /* what the wait resumed counts for its timeout: at least the give-way time more (the leader's own
         * lines may have come at once, so it did not look at the clock) */
        t->waited += t->yield_ns;
    }
    *sig_p = gc3_ll_sig(hdr);
    __syncthreads();
    return rc;
}

#endif
