/* gc3 / libgpuir internal: what the CUDA backend's host-side files share (host.cu: a plan's device state,
 * its launches and calls; memory.cu: regions, device and pinned memory, frees deferred while a kernel runs,
 * zero-copy's mappings of callers' buffers; streams.cu: the process's pool of streams). No device code. */
#ifndef GC3_CUDA_HOST_CUH
#define GC3_CUDA_HOST_CUH

#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdint.h>
#include "kernels.cuh"

typedef struct {
    cudaStream_t        own_stream; /* from the pool while a call (or a resident kernel) runs, else NULL */
    int                 device;
    cudaEvent_t         done;
    cudaEvent_t         after_legacy; /* the legacy default stream's work queued before a call */
    char               *d_plan;       /* device copy of what does not change between calls: flat program,
                                   * semaphore and loop counter offsets, steps per block */
    gc3_rt_tb_t        *d_ctx;        /* plans of more than GC3_CUDA_ARGS_LARGE blocks: per call, the
                                   * contexts, then the semaphore and loop counter bases */
    char               *h_stage;      /* pinned host copy of d_ctx's contents (valid until the call ends) */
    gc3_rt_error_t     *h_err;        /* mapped host memory, with the abort flag and the end flag */
    int32_t            *h_abort;
    volatile uint64_t  *h_done; /* the last call whose blocks all ended (gc3_cuda_leave) */
    uint64_t           *d_done;
    unsigned long long *d_count; /* in d_plan: blocks ended, all calls */
    uint64_t            seq;     /* calls run by kernels (the number of the one in flight) */
    uint64_t            expect;  /* the end flag value of the call in flight, 0: no kernel (event only) */
    /* giving way (doc/design/preemption.md) */
    volatile uint64_t *h_yield; /* host-mapped: the last call a block gave way in (gc3_cuda_end) */
    uint64_t          *d_yield;
    cudaStream_t       call_stream; /* the stream the call in flight runs on */
    int                resuming;    /* the launch being made resumes the call (gc3_rt_tb_t.resuming) */
    uint32_t           cap;         /* GC3_TEST_RESIDENT_BLOCKS (gc3_cuda_done_t.cap) */
    /* resident kernel (gc3_cuda_resident) */
    uint64_t          *h_mail, *d_mail; /* host-mapped mailbox, GC3_CUDA_MAIL_WORDS lines */
    uint64_t          *h_push, *d_push; /* host-mapped push table of the resident kernel's calls */
    volatile uint64_t *h_exited;        /* host-mapped: the last call a resident kernel took */
    uint64_t          *d_exited;
    volatile uint64_t *h_marks; /* host-mapped: the GPU's clock when the call was taken, ended */
    uint64_t          *d_marks;
    uint64_t          *d_go;          /* in d_plan: the relay word (gc3_cuda_layout) */
    uint32_t          *d_desc;        /* in d_plan: the relayed descriptor */
    uint32_t          *d_legacy;      /* in d_plan: the last call the legacy default stream reached
                                           * (params.wait_legacy GC3_WAIT_LEGACY_DEVICE) */
    int                legacy_posted; /* the call in flight was posted for its kernel to wait for that */
    int                res_alive;     /* a resident kernel was launched and not yet seen to end */
    int                posted;        /* the call in flight went to the mailbox */
    uint64_t           queried_ns;    /* when the event was last asked (a kernel that died never counts in) */
    gc3_rt_error_t    *d_err;
    int32_t           *d_abort;
    int                max_blocks; /* co-resident limit */
    int                threads;
    /* GC3_CUDA_TRACE=N: the N-th call of the plan stamps the clock at each block's start, after
     * each step of its first loop and at its end; printed to stderr when it completes */
    long      trace_call, calls;
    int       trace_stride, tracing;
    int       breakdown;         /* params.breakdown: the kernel marks when it took and ended each call */
    int       marks_open;        /* the marks of the last call posted are not taken yet */
    uint64_t *h_trace, *d_trace; /* d_trace device memory, copied to h_trace at the end: a store to
                                         * host memory would delay the next release by a PCIe round trip */
    uint64_t  trace_host[3];     /* host clock: start entered, launch returned, completion seen */
    char     *ns_up;             /* a relabelled plan's: per shift, its steps per block are in d_plan */
    /* the blocks the calls counted in before call epoch_seq (gc3_cuda_done_t.base); each call from there on
     * has epoch_blocks (a relabelled plan's binding changes them: gc3_cuda_plan_rebind) */
    uint64_t  epoch_base, epoch_seq, epoch_blocks;
    int       counted;           /* the call in flight counts in gc3_cuda_in_flight */
} gc3_cuda_state_t;

/* Freeing is deferred while any gc3 kernel of the process is in flight. cudaFree, cudaFreeHost
 * and cudaIpcCloseMemHandle wait for the whole device; a kernel of another communicator (another
 * thread, or a nonblocking call) may be waiting for a peer rank whose own thread is stuck in the
 * same kind of call: a deadlock across ranks. So launches and frees exclude each other (one
 * lock), frees happen only when no gc3 kernel is in flight, and what could not be freed at once
 * is freed by the next release or completion that finds the device quiet. */
typedef enum { GC3_CUDA_FREE_DEVICE, GC3_CUDA_FREE_HOST, GC3_CUDA_FREE_IPC } gc3_cuda_free_kind_t;

/* A plan's host-mapped words (h_err): the error record, the abort flag (+32), the end flag (+64),
 * the resident kernel's last call (+96), the call's marks (+104, +112: params.breakdown), the last call
 * a block gave way in (+120), its
 * mailbox on a 128-byte line of its own, then the push table (two words per block). */
#define GC3_CUDA_MAIL_OFF     ((sizeof(gc3_rt_error_t) + 128 + 127) / 128 * 128)
#define GC3_CUDA_PUSH_OFF     ((GC3_CUDA_MAIL_OFF + GC3_CUDA_MAIL_WORDS * 8 + 127) / 128 * 128)
#define GC3_CUDA_MAPPED_BYTES (GC3_CUDA_PUSH_OFF + GC3_RESIDENT_MAX_BLOCKS * 16)

/* Launches and frees exclude each other (memory.cu); the gc3 kernels of the process in flight (atomic). */
extern pthread_mutex_t gc3_cuda_launch_lock;
extern int             gc3_cuda_in_flight;

static inline gc3_status_t gc3_cuda_check(cudaError_t e, const char *what, gc3_diag_t *diag)
{
    if (e == cudaSuccess) {
        return GC3_OK;
    }
    (void)cudaGetLastError(); /* reported here: a later launch's check must not report it again (a sticky
                               * error stays) */
    gc3_diag_add(diag, "cuda backend: %s: %s", what, cudaGetErrorString(e));
    return GC3_ERR_IO;
}

/* memory.cu */
void         gc3_cuda_release(gc3_cuda_free_kind_t kind, void *ptr, size_t bytes);
void         gc3_cuda_call_ended(void);
uint64_t     gc3_cuda_deferred_query(int release);
int          gc3_cuda_grow(void **arr, int *cap, int n, size_t elem);
gc3_status_t gc3_cuda_region_create(gc3_plan_t *p, size_t bytes, char **base_p, char handle[GC3_RT_HANDLE_BYTES],
                                    gc3_diag_t *diag);
gc3_status_t gc3_cuda_region_open(gc3_plan_t *p, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes, char **base_p,
                                  gc3_diag_t *diag);
void         gc3_cuda_region_unlink(gc3_plan_t *p, const char handle[GC3_RT_HANDLE_BYTES]);
void         gc3_cuda_region_close(gc3_plan_t *p, char *base, size_t bytes, int own);
void         gc3_cuda_region_dedicate(void);
gc3_status_t gc3_cuda_mem_alloc(gc3_plan_t *p, size_t bytes, char **ptr_p);
void         gc3_cuda_mem_free(gc3_plan_t *p, char *ptr, size_t bytes);
gc3_status_t gc3_cuda_host_alloc(gc3_plan_t *p, size_t bytes, char **ptr_p);
void         gc3_cuda_host_free(gc3_plan_t *p, char *ptr, size_t bytes);
gc3_status_t gc3_cuda_reg_query(gc3_exec_t *e, const void *ptr, size_t bytes, gc3_rt_reg_info_t *q);
gc3_status_t gc3_cuda_reg_handle(gc3_exec_t *e, gc3_rt_reg_info_t *q, char handle[GC3_RT_HANDLE_BYTES]);
gc3_status_t gc3_cuda_reg_open(gc3_exec_t *e, const char handle[GC3_RT_HANDLE_BYTES], uint64_t size, char **mapped_p);
void         gc3_cuda_reg_close(gc3_exec_t *e, char *mapped, uint64_t size);
gc3_status_t gc3_cuda_mem_write(void *dst, const void *src, size_t bytes);
/* streams.cu (the _locked ones with gc3_cuda_launch_lock held) */
int          gc3_cuda_pool_put_locked(cudaStream_t st, int device);
void         gc3_cuda_stream_give_locked(gc3_cuda_state_t *s, int busy_out);
void         gc3_cuda_stream_reap_locked(int device);
cudaStream_t gc3_cuda_pool_take_locked(int device);
gc3_status_t gc3_cuda_stream_take_locked(gc3_cuda_state_t *s, gc3_diag_t *diag);
void         gc3_cuda_stream_done(gc3_cuda_state_t *s);
gc3_status_t gc3_cuda_fill(void *dst, const void *src, size_t bytes, const char *what, gc3_diag_t *diag);
/* host.cu: the plan's device state (made at its first use; NULL without memory), and its resident kernel
 * ended, if any */
gc3_cuda_state_t *gc3_cuda_state(gc3_plan_t *p, gc3_diag_t *diag);
void              gc3_cuda_quit(gc3_plan_t *p);

#endif
