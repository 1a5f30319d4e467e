/* gc3 / libgpuir: the CUDA backend's streams: the process's pool (a plan takes one for a call), and the
 * copies to device memory made on one of them (gc3_cuda_fill). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "host.cuh"

/* Streams. CUDA keeps about 0.5 MiB of device memory for every stream a process ever had alive at
 * once, also after cudaStreamDestroy (measured on an H100: doc/design/device-memory.md), so a stream
 * per plan cost a communicator ~2.7 MiB per rank for good. Plans do not own streams: a plan takes
 * one from the process's pool when it launches and gives it back when its call has ended (a
 * resident kernel keeps it until it is seen to have ended), and the pool holds as many streams as
 * calls ever ran at once. Every call in flight still has a stream of its own: calls of two
 * communicators never queue behind each other (that could deadlock across ranks). All with
 * gc3_cuda_launch_lock held. */
static struct gc3_cuda_pooled {
    cudaStream_t stream;
    int          device;
} * gc3_cuda_pool;
static int gc3_cuda_pool_n, gc3_cuda_pool_cap;
static gc3_cuda_state_t       *
    *gc3_cuda_holders; /* plans holding a stream (a resident kernel's is reclaimed once it ended) */
static int gc3_cuda_nholders, gc3_cuda_holders_cap;

/* A stream into the pool (1), or 0 when the pool cannot grow (the caller destroys it). */
int gc3_cuda_pool_put_locked(cudaStream_t st, int device)
{
    if (!gc3_cuda_grow((void **)&gc3_cuda_pool, &gc3_cuda_pool_cap, gc3_cuda_pool_n, sizeof(*gc3_cuda_pool))) {
        return 0;
    }
    gc3_cuda_pool[gc3_cuda_pool_n].stream   = st;
    gc3_cuda_pool[gc3_cuda_pool_n++].device = device;
    return 1;
}

/* busy_out: a stream with work still queued is destroyed, not pooled (a plan's end: its kernel may
 * never end, a peer having died); otherwise it is pooled as it is (a later call on it waits for the
 * end of the kernel that just counted its blocks out, which takes no time). */
void gc3_cuda_stream_give_locked(gc3_cuda_state_t *s, int busy_out)
{
    for (int i = 0; i < gc3_cuda_nholders; i++) {
        if (gc3_cuda_holders[i] == s) {
            gc3_cuda_holders[i] = gc3_cuda_holders[--gc3_cuda_nholders];
            break;
        }
    }
    if (s->own_stream == NULL) {
        return;
    }
    if ((busy_out && cudaStreamQuery(s->own_stream) != cudaSuccess) ||
        !gc3_cuda_pool_put_locked(s->own_stream, s->device)) {
        cudaStreamDestroy(s->own_stream); /* a kernel that never ends (a peer died) stays out of the pool */
    }
    s->own_stream = NULL;
}

/* Streams of plans whose call ended and whose resident kernel (if any) has ended too go back. */
void gc3_cuda_stream_reap_locked(int device)
{
    for (int i = gc3_cuda_nholders - 1; i >= 0; i--) {
        gc3_cuda_state_t *h = gc3_cuda_holders[i];
        if (h->device == device && !__atomic_load_n(&h->counted, __ATOMIC_ACQUIRE) &&
            cudaEventQuery(h->done) == cudaSuccess) {
            __atomic_store_n(&h->res_alive, 0, __ATOMIC_RELEASE);
            gc3_cuda_stream_give_locked(h, 0);
        }
    }
}

/* A pooled stream of the device, out of the pool, or NULL. When the pool has none, the streams of
 * ended calls are reaped first: a caller that made a new stream whenever the pool was empty would keep
 * the streams of ended resident kernels from ever coming back (a stream per plan, each ~0.5 MiB of
 * device memory for good). */
cudaStream_t gc3_cuda_pool_take_locked(int device)
{
    for (int reaped = 0; reaped < 2; reaped++) {
        for (int i = gc3_cuda_pool_n - 1; i >= 0; i--) {
            if (gc3_cuda_pool[i].device == device) {
                cudaStream_t st  = gc3_cuda_pool[i].stream;
                gc3_cuda_pool[i] = gc3_cuda_pool[--gc3_cuda_pool_n];
                return st;
            }
        }
        if (!reaped) {
            gc3_cuda_stream_reap_locked(device);
        }
    }
    return NULL;
}

gc3_status_t gc3_cuda_stream_take_locked(gc3_cuda_state_t *s, gc3_diag_t *diag)
{
    if (s->own_stream != NULL) {
        return GC3_OK;
    }
    if ((s->own_stream = gc3_cuda_pool_take_locked(s->device)) == NULL) {
        int          cur = -1;
        gc3_status_t st;
        cudaGetDevice(&cur);
        if (cur != s->device) {
            cudaSetDevice(s->device);
        }
        /* non-blocking, ordered after the legacy default stream at each launch (gc3_cuda_after_legacy);
         * a blocking stream would also make later legacy-stream work of other threads wait for this
         * call's kernel, which waits for peers: a deadlock across threads */
        st = gc3_cuda_check(cudaStreamCreateWithFlags(&s->own_stream, cudaStreamNonBlocking), "cudaStreamCreate", diag);
        if (cur >= 0 && cur != s->device) {
            cudaSetDevice(cur);
        }
        if (st != GC3_OK) {
            s->own_stream = NULL;
            return st;
        }
    }
    if (gc3_cuda_grow((void **)&gc3_cuda_holders, &gc3_cuda_holders_cap, gc3_cuda_nholders,
                      sizeof(*gc3_cuda_holders))) {
        gc3_cuda_holders[gc3_cuda_nholders++] = s; /* (else not reclaimable early: it goes back when its call ends) */
    }
    return GC3_OK;
}

/* The call in flight ended and no resident kernel runs: its stream goes back. */
void gc3_cuda_stream_done(gc3_cuda_state_t *s)
{
    if (s->own_stream != NULL && !__atomic_load_n(&s->res_alive, __ATOMIC_ACQUIRE)) {
        pthread_mutex_lock(&gc3_cuda_launch_lock);
        gc3_cuda_stream_give_locked(s, 0);
        pthread_mutex_unlock(&gc3_cuda_launch_lock);
    }
}

/* Zero (src NULL) or fill from the host `bytes` of device memory of the current device, done when
 * this returns, on a pooled non-blocking stream: never behind the caller's work on the legacy
 * default stream. (cudaMemset returns at once and runs after that work: a plan region zeroed after
 * a peer had already said in it that it started its first call, a deadlock seen with a kernel still
 * running on the legacy stream; a pageable cudaMemcpy may return before its data is there.) */
gc3_status_t gc3_cuda_fill(void *dst, const void *src, size_t bytes, const char *what, gc3_diag_t *diag)
{
    cudaStream_t st  = NULL;
    int          dev = -1;
    gc3_status_t status;

    cudaGetDevice(&dev);
    pthread_mutex_lock(&gc3_cuda_launch_lock);
    st = gc3_cuda_pool_take_locked(dev);
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
    if (st == NULL) {
        status = gc3_cuda_check(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking), "cudaStreamCreate", diag);
        if (status != GC3_OK) {
            return status;
        }
    }
    status = gc3_cuda_check(src != NULL ? cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, st)
                                        : cudaMemsetAsync(dst, 0, bytes, st),
                            what, diag);
    if (status == GC3_OK) {
        status = gc3_cuda_check(cudaStreamSynchronize(st), what, diag);
    }
    pthread_mutex_lock(&gc3_cuda_launch_lock);
    const int pooled = status == GC3_OK && gc3_cuda_pool_put_locked(st, dev);
    pthread_mutex_unlock(&gc3_cuda_launch_lock);
    if (!pooled) {
        cudaStreamDestroy(st);
    }
    return status;
}
