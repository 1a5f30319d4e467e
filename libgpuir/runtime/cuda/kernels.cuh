/* gc3 / libgpuir: what the CUDA backend's host side (host.cu, memory.cu, streams.cu) and its kernels (kernels.cu) share:
 * the arguments of a launch, the end of a call, the resident kernel's mailbox, and the functions
 * that launch the kernels (the host side has no device code). */
#ifndef GC3_CUDA_KERNELS_CUH
#define GC3_CUDA_KERNELS_CUH

#include <cuda_runtime.h>
#include <stdint.h>
extern "C" {
#include "gc3_rt_backend.h"
}

/* steps and blocks whose control data a block keeps in shared memory */
/* threads a block of the interpreter kernel may have (__launch_bounds__, kernels.cu): the executor's
 * default; a block of more is refused (gc3_cuda_max_blocks finds none resident) */
#define GC3_CUDA_MAX_THREADS 512
#define GC3_CUDA_SH_STEPS 96
#define GC3_CUDA_SH_TBS   64

/* The end of a call, without a CUDA event: every block counts itself in (device counter of the
 * plan) and the last one writes the call's number into host-mapped memory, which the host polls
 * (an event query costs 1.3 us on the host and sees the end about 2.7 us later). */
typedef struct {
    unsigned long long *count; /* blocks ended, all calls of the plan */
    uint64_t           *flag;  /* host-mapped: the last call whose blocks all ended */
    uint64_t            seq;   /* this call's number (1, 2, ...) */
    uint64_t            base;  /* blocks the plan's calls before this one counted in: its last block's count is
                                * base + its blocks (a relabelled plan's calls of different roots have different
                                * numbers of blocks) */
    uint64_t           *marks; /* host-mapped, NULL unless the plan records its calls' phases: the GPU's
                                * clock when block 0 took the call [0] and when its last block ended [1],
                                * written after the completion flag */
    uint64_t           *yielded; /* host-mapped: the last call a block of the plan gave way in (gc3_core_run);
                                  * the host launches it again once the kernel ended */
    uint32_t            cap;     /* GC3_TEST_RESIDENT_BLOCKS: blocks of the process that may run at once (0: any) */
} gc3_cuda_done_t;

/* ---- the resident kernel's mailbox (kernels.cu says how it works) ---- */
#define GC3_CUDA_MAIL_WORDS 24
enum {
    GC3_MAIL_IN           = 0,
    GC3_MAIL_OUT          = 2,
    GC3_MAIL_SCRATCH      = 4,
    GC3_MAIL_COUNT        = 6,
    GC3_MAIL_SIG          = 8,
    GC3_MAIL_T            = 10,
    GC3_MAIL_L            = 12,
    GC3_MAIL_TYPE         = 13, /* dtype | op << 8 | dsize << 16 | window << 24 */
    GC3_MAIL_FLAGS        = 14,
    GC3_MAIL_CHECK        = 15, /* the host's semaphore base of block 0, low 32 bits */
    GC3_MAIL_ZC_ID        = 16, /* zc_id[0] | zc_id[1] << 16 */
    GC3_MAIL_ZC_PEERS_IN  = 17,
    GC3_MAIL_ZC_PEERS_OUT = 19,
    GC3_MAIL_SEG          = 21, /* gc3_rt_tb_t.seg (host-mapped) */
    GC3_MAIL_SEG_VER      = 23  /* gc3_rt_tb_t.seg_ver */
};
#define GC3_MAIL_F_ZC_SHIFT 8 /* zc_bit in FLAGS, bits 8-9 */
#define GC3_MAIL_F_QUIT     1u
#define GC3_MAIL_F_TRACE    2u
#define GC3_MAIL_F_HANDOVER 4u /* gc3_rt_tb_t.handover of the call */
#define GC3_MAIL_F_PUSH     1024u /* the call pushes (gc3_rt_tb_t.push): each block's two words in the push table */
/* block 0 waits until the legacy default stream wrote the call's number (low 32 bits) into
 * gc3_cuda_resident_t.legacy (GC3_WAIT_LEGACY_DEVICE) */
#define GC3_MAIL_F_LEGACY 2048u
/* the relay word: the call block 0 took, or GC3_CUDA_GO_EXIT | the last call of the kernel that ends */
#define GC3_CUDA_GO_EXIT (1ull << 63)

typedef struct {
    const uint2 *mail;     /* host-mapped mailbox (NULL: one call per launch) */
    uint64_t    *go;       /* device: the relay word */
    uint32_t    *desc;     /* device: the descriptor block 0 took, for the other blocks */
    const uint32_t *legacy;   /* device: the last call the legacy default stream reached (GC3_MAIL_F_LEGACY) */
    uint64_t    *exited;   /* host-mapped: the last call a resident kernel took, written as it ends */
    const uint64_t *push;     /* host-mapped: per block, gc3_rt_tb_t.push of a call posted with GC3_MAIL_F_PUSH */
    uint64_t     idle_ns;
    uint64_t    *trace;    /* the plan's trace stamps (whether a call is traced comes with it) */
    int32_t      trace_stride;
} gc3_cuda_resident_t;

/* Plans of at most N blocks: everything a call changes travels in the launch itself (kernel
 * parameters, up to 32 KB since CUDA 12.1), so a call is one launch and no copy. The program,
 * offsets and step counts the contexts point to were uploaded once, at the plan's first call. */
template <int N> struct gc3_cuda_args {
    gc3_cuda_done_t     done;
    gc3_cuda_resident_t res;
    gc3_rt_tb_t         tb[N];
    uint64_t            sem_base[N], loops_base[N];
};

/* The parameters are copied at each launch: measured on H200, a launch with 20 KB of them costs
 * 2.5 us more than one with 2.5 KB, so plans use the smallest size that holds them. */
#define GC3_CUDA_ARGS_SMALL 8
#define GC3_CUDA_ARGS_MID   24
#define GC3_CUDA_ARGS_LARGE 64
static_assert(sizeof(gc3_cuda_args<GC3_CUDA_ARGS_LARGE>) <= 32764, "kernel parameters are limited to 32764 bytes");

/* ---- launching (kernels.cu) ---- */
/* Blocks of the interpreter kernel (every variant) one multiprocessor of the current device holds
 * at once with `threads` threads each. */
int  gc3_cuda_kernel_blocks_per_sm(int threads);
/* A call of a plan of at most N blocks: its contexts in the parameters (N: GC3_CUDA_ARGS_*). */
template <int N> void gc3_cuda_kernel_launch_args(const gc3_cuda_args<N> &a, int blocks, int threads, cudaStream_t st);
extern template void gc3_cuda_kernel_launch_args<GC3_CUDA_ARGS_SMALL>(const gc3_cuda_args<GC3_CUDA_ARGS_SMALL> &, int,
                                                                       int, cudaStream_t);
extern template void gc3_cuda_kernel_launch_args<GC3_CUDA_ARGS_MID>(const gc3_cuda_args<GC3_CUDA_ARGS_MID> &, int, int,
                                                                     cudaStream_t);
extern template void gc3_cuda_kernel_launch_args<GC3_CUDA_ARGS_LARGE>(const gc3_cuda_args<GC3_CUDA_ARGS_LARGE> &, int,
                                                                       int, cudaStream_t);
/* A call of a larger plan: its contexts and counter bases copied to device memory (ctxs). */
void gc3_cuda_kernel_launch_ctxs(const gc3_rt_tb_t *ctxs, gc3_cuda_done_t done, int blocks, int threads,
                                 cudaStream_t st);

#endif
