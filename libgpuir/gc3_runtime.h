/* gc3 / libgpuir: the runtime that executes IR programs.
 *
 * One interpreter, whose control logic (tiles, steps, dependency waits, FIFO head/tail,
 * timeouts) is written once (runtime/interp_core.inl) and compiled twice: as the CUDA kernel
 * (one IR thread block = one CUDA block) and as the host backend (one IR thread block = one
 * host thread, host memory, POSIX shared memory between processes). Only data movement and
 * memory-ordering primitives differ.
 *
 * Connections: per (sender, receiver, channel) a FIFO of `slots` slots in the receiver's
 * memory (data + tail counter) and a head counter in the sender's memory; a sender never has
 * more than `slots` messages outstanding. Simple: bulk copy, fence, counter. LL: 8-byte lines
 * of 4 data bytes + a 4-byte flag, no fence. All counters are monotonic across calls.
 *
 * Data layout of a call (count as MPI counts it, see gc3_coll_chunk_elems): a buffer is cut
 * into segments of `count` elements (allreduce and custom collectives: one segment; alltoall,
 * allgather output, reduce_scatter input: one per rank), each segment into k chunks (k =
 * chunks per segment), and the call runs in loops: in loop l chunk m of a segment is elements
 * [l*k*T + m*T, +T) of it, clipped at the segment's end. T (tile) is chosen so that a step's
 * message fits a slot (LL, and programs with scratch), or at most params.tile_bytes (Simple: the message
 * goes in slot-sized pieces). Any count works; nothing is truncated.
 *
 * Every wait is bounded: after `timeout_s` (or when another block of the rank failed) the block
 * records rank, block, step and what it waited for, and the call returns GC3_ERR_TIMEOUT with
 * that text in diag. */
#ifndef GC3_RUNTIME_H
#define GC3_RUNTIME_H

#include <stddef.h>
#include "gc3_dtype.h"
#include "gc3_ir.h"

/* Out-of-band interface: the component implements it with MPI point-to-point messages, tests
 * with MPI_Iallgather. Nonblocking, so that setting up a plan never waits for another rank inside
 * a call that must not (a nonblocking collective's start, MPI's progress engine):
 *   iallgather posts an allgather of bytes_per_rank from every rank of the executor into recv
 *     (rank r's bytes at r * bytes_per_rank) and returns 0 with *req_p, or nonzero when it could
 *     not be posted. Collective: every rank posts the same exchanges in the same order.
 *   test returns 1 when that exchange is done (recv is filled, req is released), 0 while it is
 *     not, -1 when it failed (req released). It never waits for another rank.
 * An exchange that never completes (a rank that never joins) cannot be cancelled: its buffers
 * stay with it (gc3_exec_prepare_abandon). */
typedef struct {
    void *ctx;
    int (*iallgather)(void *ctx, const void *send, void *recv, size_t bytes_per_rank, void **req_p);
    int (*test)(void *ctx, void *req);
} gc3_oob_t;

typedef enum { GC3_BACKEND_HOST = 0, GC3_BACKEND_CUDA = 1 } gc3_backend_t;

#define GC3_RESIDENT_US_DEFAULT 50
/* gc3_exec_params_t.yield_us's default: a block that waited this long gives way (doc/design/preemption.md) */
#define GC3_YIELD_US_DEFAULT 1000
/* a plan's receiving FIFOs per rank at most (gc3_exec_params_t.fifo_bytes' default in the component
 * and gc3_info): 32 MiB with GC3_FIFO_SLOTS_DEFAULT (4) slots gives the 2-GPU ring of 32 connections
 * 256 KiB slots, the size that matters (16 MiB gave 64 KiB slots and lost 29-42% of large
 * allreduce/alltoall bandwidth on 1 x H100, doc/measurements/plan-fifo-cap-1xh100.txt; 32 MiB with
 * 8 slots, 128 KiB, lost 12-33% from 8 MB on 2 x H100, doc/measurements/fifo-pool-slots-2xh100.txt) */
#define GC3_PLAN_FIFO_BYTES_DEFAULT (32L << 20)
/* the cap of a plan whose calls all run in zero-copy mode once their buffers are registered
 * (gc3_exec_params_t.zc_fifo_bytes' default in the component and gc3_info): its slots then carry
 * headers only, the payload is for memory that cannot be registered and a buffer's first call. 12 MiB:
 * the 4-GPU ring of 64 connections gets 48 KiB slots (the cost model: 16-24 % slower than 128 KiB
 * on that path from 16 MB, doc/design/device-memory.md), and no more than the 4-GPU all-to-all's
 * FIFOs up to 2 MB per peer take anyway */
#define GC3_ZC_FIFO_BYTES_DEFAULT (12L << 20)
/* coll_gc3_fifo_pool's default (and gc3_info --memory's): a communicator's Simple plans share one FIFO
 * pool (no cost measured against slots of their own, doc/measurements/fifo-pool-slots-2xh100.txt) */
#define GC3_FIFO_POOL_DEFAULT 1
/* cuda: plans of up to this many thread blocks per rank keep their kernel resident (resident_us) */
#define GC3_RESIDENT_MAX_BLOCKS 64
#define GC3_FUSE_BYTES 16384 /* chunks of a fused run up to this size run as one pass, larger ones step by
                              * step: one pass reads its operands one after another, and from 32 KB chunks
                              * on it was slower than the steps on 4 x H200 (one-shot LL 64 KB: 43.7
                              * against 39.8 us; all-pairs Simple 1 MB: 92.0 against 71.6 us) */

/* How a call on the GPU is ordered after the work queued on the legacy default stream before it, when
 * it goes to a resident kernel (a launched call's stream always waits for an event recorded there). */
typedef enum {
    GC3_WAIT_LEGACY_OFF    = 0, /* not at all (the caller synchronized) */
    GC3_WAIT_LEGACY_HOST   = 1, /* the host asks the stream whether it is idle, else waits for it (a driver
                                 * query: about 2-2.7 us a call on H200) */
    GC3_WAIT_LEGACY_DEVICE = 2  /* the stream writes the call's number after that work (a stream memory
                                 * operation) and the kernel waits for it; the host does not wait */
} gc3_wait_legacy_t;

typedef struct {
    gc3_backend_t backend;
    int           rank, nranks;
    gc3_oob_t     oob;
    int           slots;        /* FIFO slots per connection (default GC3_FIFO_SLOTS_DEFAULT) */
    size_t        slot_bytes;   /* payload bytes per slot (default 256 KiB host, 1 MiB cuda) */
    double        timeout_s;    /* bounded waits (default 60; <= 0: wait forever) */
    int           device;       /* CUDA device ordinal (cuda backend) */
    int           threads_per_block; /* CUDA threads per IR thread block (0 = 512) */
    int           resident_us;  /* cuda: the kernel of a plan of at most GC3_RESIDENT_MAX_BLOCKS blocks on one
                                 * node stays on the GPU
                                 * this many microseconds after a call and takes the next call from
                                 * host-mapped memory, without a launch (default GC3_RESIDENT_US_DEFAULT;
                                 * 0: a launch per call) */
    int           yield_us;     /* a thread block that waited this many microseconds for a peer, another block or a
                                 * free slot gives way: it leaves the call where it stands, and the backend runs it
                                 * again from there (cuda: the kernel ends once every block ended or gave way, and
                                 * the host launches it again; host: the thread waits for a place again, under a
                                 * test's cap on the blocks that run at once). So calls in flight together on
                                 * several plans complete even when their blocks cannot all run at once
                                 * (doc/design/preemption.md). Default GC3_YIELD_US_DEFAULT; 0: never (a call then
                                 * needs all of its blocks and its peers' running at once) */
    int           fuse;         /* a block's copy or reduce and the reduces of scratch chunks into the same
                                 * chunks after it run as one pass, for chunks of up to GC3_FUSE_BYTES
                                 * (gc3_flat_fuse; default 1, 0: step by step). The same result, elementwise. */
    int           wait_legacy;  /* cuda: a call first waits for the work queued on the legacy default stream
                                 * before it (gc3_wait_legacy_t; default GC3_WAIT_LEGACY_HOST). OFF skips
                                 * that: the caller has synchronized whatever writes the buffers, as
                                 * CUDA-aware MPI requires */
    int           net_peer_errors; /* UCX endpoints report a dead peer at once (default 1); 0 lets UCX
                                    * use transports that cannot (shared memory): the timeout then
                                    * catches a dead peer */
    int           net_direct;   /* between nodes, the direct path (GPUDirect on GPUs): the slots in the
                                 * backend's memory (cuda: the GPU's) registered with UCX, the proxy
                                 * puts them from the sender's slot straight into the receiver's; the
                                 * host backend runs the same protocol on host memory (tests). 0
                                 * (default): host-staged, the slots in (pinned, mapped) host memory.
                                 * Every rank of the executor passes the same value (the layouts
                                 * follow it): gc3_net_path_choose, then an agreement */
    uint64_t      fifo_bytes;   /* a plan's receiving FIFOs on this rank take at most about this many bytes:
                                 * its slots are made smaller (not below GC3_SLOT_MIN_BYTES) when its
                                 * connections x slots x slot_bytes would exceed it (0: no limit) */
    uint64_t      zc_fifo_bytes; /* with zero_copy: the cap instead of fifo_bytes (when smaller) of a plan on one node
                                  * whose every call runs in zero-copy mode once its buffers are registered (every
                                  * send of every rank marked for every kind of call it serves, no scratch). 0: none.
                                  * Every rank passes the same value (and the same zero_copy: the layouts follow) */
    int           fifo_pool;    /* plans of the executor that run Simple take the slots of their connections on
                                 * the node from one FIFO pool per rank, as large as the largest of them needs,
                                 * instead of slots of their own (their counters stay their own). Their calls then
                                 * must not overlap: the caller starts a call on such a plan (gc3_plan_pooled)
                                 * only when no call of another one is in flight (gc3_exec_start refuses it).
                                 * Every rank of the executor passes the same value. 0 (default): every plan
                                 * has its own slots */
    int           zero_copy;    /* Simple plans: a send whose data is in the caller's input or output buffer, where the
                                 * program leaves it untouched until the receiver read it (gc3_flat_zc_mark), leaves
                                 * it in place for a receiver on the node that mapped the buffer (registered at its
                                 * first call: CUDA IPC; the host backend: buffers in shared file mappings), instead
                                 * of copying it into the receiver's FIFO; the call then ends once its receivers read
                                 * it. A message says how it came, but every rank passes the same value: the FIFOs'
                                 * layout follows it (zc_fifo_bytes). 0: every byte through the FIFOs (default) */
    int           zc_pull;      /* zero_copy, in zero-copy mode: every receiver reads its messages from the sender's
                                 * buffer. 0 (default): a send the program allows it for (gc3_flat_zc_mark's push
                                 * form: ring allgather phases, all-to-all, bcast) writes its chunks straight into
                                 * the receiver's buffer instead (NVLink writes are posted, reads round trips).
                                 * Ranks need not agree */
    int           reg_entries;  /* zero_copy: buffers each rank keeps registered (0: GC3_REG_ENTRIES_DEFAULT); every
                                 * rank of the executor passes the same value */
    uint64_t      tile_bytes;   /* Simple plans without scratch: a step moves at most this many bytes per loop (its
                                 * message in slot-sized pieces: slots only pace it); LL and scratch: one slot's payload.
                                 * 0: GC3_TILE_BYTES_DEFAULT. Every rank passes the same value */
    int           breakdown;    /* record when each call passes each phase (gc3_exec_times); 0 (default): not */
    int           relabel;      /* a plan of a rooted collective on one node serves every root (gc3_plan_root): ranks
                                 * relabelled at run time, its region the union of the connections of every root's
                                 * relabelling. 1 (default); 0: a plan serves its program's root only. Every rank of
                                 * the executor passes the same value (the layouts follow it) */
    const int    *node;         /* per rank: its node (NULL: all on one node); copied at creation.
                                 * Connections between nodes go through UCX (the proxy thread), the
                                 * others through CUDA IPC or shared memory. */
} gc3_exec_params_t;

#define GC3_SLOT_MIN_BYTES 4096 /* the smallest slot a plan's FIFO cap (fifo_bytes) makes */
#define GC3_REG_ENTRIES_DEFAULT 32 /* registrations per rank and executor (zero-copy's cache) */
#define GC3_REG_ENTRIES_MAX     4096
#define GC3_TILE_BYTES_DEFAULT (4u << 20) /* a Simple step moves at most this much per loop (tile_bytes) */

typedef struct gc3_exec gc3_exec_t;
typedef struct gc3_plan gc3_plan_t;

void         gc3_exec_params_default(gc3_exec_params_t *params, gc3_backend_t backend, int rank, int nranks);
/* Is the backend built into this library (cuda needs nvcc at build time)? */
int          gc3_exec_backend_available(gc3_backend_t backend);
/* Is the inter-node transport (UCX) built into this library? */
int          gc3_exec_net_available(void);
/* The inter-node path a rank can take (the caller then agrees with the other ranks: the direct
 * path only when every rank can). asked: what the user asked for; ucx_cuda: what
 * gc3_exec_net_cuda_memory answered (ignored unless it matters). Returns one of the reasons; those
 * below GC3_NET_STAGED_FORCED allow the direct path. gc3_net_path_reason names one. */
typedef enum { GC3_NET_PATH_AUTO, GC3_NET_PATH_GPUDIRECT, GC3_NET_PATH_STAGED } gc3_net_path_t;
typedef enum {
    GC3_NET_DIRECT_CUDA = 0,    /* direct: UCX reports CUDA memory support */
    GC3_NET_DIRECT_HOST,        /* direct forced on the host backend: the protocol on host memory */
    GC3_NET_STAGED_FORCED,      /* host-staged, as asked */
    GC3_NET_STAGED_HOST,        /* auto on the host backend: host-staged */
    GC3_NET_STAGED_NO_CUDA,     /* auto: UCX has no CUDA memory support */
    GC3_NET_STAGED_REFUSED,     /* GPUDirect asked for, UCX has no CUDA memory support */
    GC3_NET_STAGED_NO_UCX       /* no usable UCX (not built in, or it cannot start) */
} gc3_net_reason_t;
gc3_net_reason_t gc3_net_path_choose(gc3_net_path_t asked, gc3_backend_t backend, int ucx_cuda);
const char      *gc3_net_path_reason(gc3_net_reason_t why);
#define GC3_NET_REASON_DIRECT(why) ((why) < GC3_NET_STAGED_FORCED)
/* Does this process's UCX report CUDA memory support (ucp_context_query's memory types)? 1 yes,
 * 0 no, -1 UCX cannot start (or is not built in). Asked once per process (a UCX context made and
 * closed), then remembered. */
int              gc3_exec_net_cuda_memory(void);
/* How the inter-node connections of a plan run: a short line for the user (empty when none). */
void         gc3_plan_net_describe(const gc3_plan_t *plan, char *buf, size_t len);
/* How many runs of this rank's local steps the plan does in one pass each (gc3_flat_fuse; 0 when
 * none, or with params.fuse = 0). */
int          gc3_plan_fused_runs(const gc3_plan_t *plan);
/* How many loops (tiles) the last call that moved data ran (0 before any). */
int          gc3_plan_loops(const gc3_plan_t *plan);
/* Zero-copy: a short line for the user: how many of this rank's sends may leave their data in place, and
 * whether the last call did (how many peers), or why not (empty before the first call of a plan of such
 * sends; "" when zero-copy does not apply to the plan). */
void         gc3_plan_zc_describe(const gc3_plan_t *plan, char *buf, size_t len);
/* How many peers the last call left data in place for (0: none), and why none (NULL: it did, or nothing of
 * the plan can be left in place). */
int          gc3_plan_zc_peers(const gc3_plan_t *plan);
/* 1 when the last call ran in zero-copy mode (every message of every rank in place, large tiles). */
int          gc3_plan_zc_mode(const gc3_plan_t *plan);
/* How many peers the last call pushed data to (zero-copy mode, the push form; 0: none). */
int          gc3_plan_zc_pushed(const gc3_plan_t *plan);
const char  *gc3_plan_zc_why(const gc3_plan_t *plan);
/* End every call of the process still in flight on the host backend (its blocks stop as on a failure)
 * and wait for its threads. Before the library is unloaded: a call abandoned after a failure elsewhere
 * has threads that would otherwise wait until their timeout, in code that is gone. */
void gc3_exec_quiesce(void);
/* How many times a call of the plan ran again because some of its thread blocks gave way
 * (params.yield_us), all calls. */
uint64_t     gc3_plan_resumed(const gc3_plan_t *plan);
gc3_status_t gc3_exec_create(const gc3_exec_params_t *params, gc3_diag_t *diag, gc3_exec_t **exec_p);
/* How many thread blocks of one plan can run at once: cuda, what params.device holds co-resident
 * (a plan of more is refused when it runs); host, no limit (INT_MAX). Several ranks on one GPU
 * share it. */
int          gc3_exec_max_blocks(const gc3_exec_t *exec);
/* gc3_exec_max_blocks of an executor of one rank with the default parameters on device: what the
 * component's executor there counts before the ranks sharing the GPU divide it (for tools that make
 * no communicator: gc3_info, gc3_bench); 0 when the device cannot tell (diag says so; NULL: not said). */
int          gc3_exec_device_blocks(gc3_backend_t backend, int device, gc3_diag_t *diag);
void         gc3_exec_destroy(gc3_exec_t *exec);

/* Making a plan of a program (once per program): collective, every rank passes the same program
 * (and the executor's ranks prepare their plans in the same order). In phases, none of which waits
 * for another rank:
 *   post: checks the program, allocates this rank's FIFOs and semaphores and posts the exchange of
 *     connection handles. *prep_p is set whenever the exchange was posted, even if this rank
 *     failed (it takes part all the same, so that every rank fails alike, none waits forever).
 *   test: advances (maps the peers it talks to, tells the others it did, sets up the connections
 *     to other nodes): GC3_IN_PROGRESS while an exchange is pending; otherwise the preparation is
 *     over (prep released): GC3_OK with *plan_p, or the error (diag says why; every rank fails when
 *     one failed before the last exchange).
 *   waiting: what a pending preparation waits for ("the exchange of connection handles", ...).
 *   abandon: give a pending preparation up (its exchange timed out): this rank's memory is
 *     released, the pending exchange's buffers stay with the exchange.
 * gc3_exec_prepare does all of it, waiting at most params.timeout_s for each exchange (a rank that
 * never joins: GC3_ERR_TIMEOUT naming the exchange). */
typedef struct gc3_prep gc3_prep_t;
gc3_status_t gc3_exec_prepare_post(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag,
                                   gc3_prep_t **prep_p);
gc3_status_t gc3_exec_prepare_test(gc3_prep_t *prep, gc3_diag_t *diag, gc3_plan_t **plan_p);
const char  *gc3_exec_prepare_waiting(const gc3_prep_t *prep);
void         gc3_exec_prepare_abandon(gc3_prep_t *prep);
gc3_status_t gc3_exec_prepare(gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag,
                              gc3_plan_t **plan_p);
void         gc3_plan_destroy(gc3_plan_t *plan);
/* The roots a plan serves: 1 (its program's root, or not rooted), or every rank (params.relabel: a rooted
 * collective on one node). gc3_plan_root sets the root of the plan's next calls (between calls, every rank
 * the same, as MPI's root): rank a then plays program rank (a - s) mod n for s = root - the program's root,
 * and the segments of the root's buffer are rotated alike, so the results are those of a program for that
 * root. GC3_ERR_INVALID_PARAM for a root the plan does not serve or while a call is in flight. */
int          gc3_plan_roots(const gc3_plan_t *plan);
gc3_status_t gc3_plan_root(gc3_plan_t *plan, int root, gc3_diag_t *diag);

typedef struct {
    const void *sendbuf;   /* in-place: NULL (the data is in recvbuf, see gc3_ir.h for positions) */
    void       *recvbuf;
    size_t      count; /* elements of every segment; with segs, the largest segment of any rank's call */
    gc3_dtype_t dtype;
    gc3_op_t    op;
    void       *stream;    /* cuda: cudaStream_t (NULL: the executor's own) */
    /* NULL: segment s of a buffer is elements [s * count, +count) of it. Otherwise per-rank counts (MPI's
     * v-collectives): this rank's table of gc3_coll_segs_words words (gc3_ir.h), copied at the start; in
     * place, the inner buffer is the pair of this rank of the other one. Every rank passes the same count
     * (it sets the call's tile and loops: the largest segment of any rank), and a segment's elements
     * agree between the ranks whose chunks meet (as MPI requires of counts). Such a call never runs in
     * zero-copy mode (its ranks' buffers are laid out differently). */
    const uint64_t *segs;
} gc3_call_t;

/* Where segment s of buffer buf of a call starts and how many elements it holds: [s * count, +count), or the
 * call's table (per-rank counts). */
void gc3_call_seg(const gc3_call_t *call, gc3_buf_t buf, int s, uint64_t *first_p, uint64_t *n_p);
/* Where the input and output of rank `rank`'s call of coll with root `root` (-1: not rooted) are: its buffers, or
 * in place (sendbuf NULL) both in recvbuf, the inner one at its start or at this rank's segment of the other
 * (gc3_coll_desc_t). A rooted collective's non-root has one buffer: recvbuf is its output, sendbuf its input. */
void gc3_call_places(gc3_coll_t coll, int root, int rank, const gc3_call_t *call, char **in, char **out);

/* Run one call to completion (start + wait). Collective: every rank calls with the same count. */
gc3_status_t gc3_exec_run(gc3_plan_t *plan, const gc3_call_t *call, gc3_diag_t *diag);

/* When the plan's last call passed each phase (gc3_exec_params.breakdown on). On the host's clock
 * (CLOCK_MONOTONIC, ns): gc3_exec_start entered (start), the call ordered after the caller's stream
 * (ordered; cuda: after the work queued on the legacy default stream before it), handed to the backend
 * (posted: in the resident kernel's mailbox, or launched), its completion seen (seen); on the host
 * backend (same_clock 1) also when its first block took it (picked) and its last one ended
 * (exchanged). Summed over the plan's calls: the backend's own time from taking a call to its
 * exchange done (exchange_ns, cuda: the GPU's clock; its end is marked after the completion flag so
 * that marking costs the call nothing, and a call whose mark had not arrived when its completion was
 * seen counts with the next call) and how many calls that sum holds. 0 where not recorded. */
typedef struct {
    uint64_t start, ordered, posted, seen;
    uint64_t picked, exchanged;
    int      same_clock;
    uint64_t exchange_ns, exchanges;
} gc3_exec_times_t;
/* 1 with the last call's times in *times; 0 when breakdown is off or no call completed since it started. */
int gc3_exec_times(const gc3_plan_t *plan, gc3_exec_times_t *times);
/* The host clock of gc3_exec_times_t (CLOCK_MONOTONIC, ns). */
uint64_t gc3_exec_now_ns(void);
/* Nonblocking: start, then test or wait. At most one call per plan in flight, and with
 * params.fifo_pool at most one call of all pooled plans of the executor (gc3_plan_pooled). */
gc3_status_t gc3_exec_start(gc3_plan_t *plan, const gc3_call_t *call, gc3_diag_t *diag);
gc3_status_t gc3_exec_test(gc3_plan_t *plan, int *done_p, gc3_diag_t *diag);
gc3_status_t gc3_exec_wait(gc3_plan_t *plan, gc3_diag_t *diag);
/* gc3_exec_wait for at most budget_ns: GC3_IN_PROGRESS when the call still runs then (the caller
 * lets others progress, e.g. its MPI library's nonblocking calls that peers wait for, and calls it
 * again), else gc3_exec_wait's result. A call that ran longer than 2 ms in all is polled less often
 * (the host thread sleeps between looks, as gc3_exec_wait's). */
gc3_status_t gc3_exec_wait_for(gc3_plan_t *plan, uint64_t budget_ns, gc3_diag_t *diag);

/* ---------------------------------------------------------------- memory
 *
 * What a plan holds on this rank, by kind, in bytes. "Device" memory is GPU memory for the cuda
 * backend and host memory for the host backend (the region a POSIX shared memory segment):
 *   fifo     this rank's region: per receiving connection on the node, a tail line and slots x
 *            slot stride (the slot's payload plus its header; LL: twice that)
 *   flags    this rank's region: semaphore and loop-counter lines per block, a head line per
 *            sending connection on the node
 *   scratch  scratch of the largest call so far (an estimate: of the largest call its slots carry
 *            in one loop), GC3_RT_WINDOW copies
 *   stage    LL staging, two buffers of a slot's payload per block
 *   control  the backend's own device memory: the device copy of the program, the per-call
 *            contexts of plans of many blocks (cuda)
 *   mapped   the peers' regions this rank maps (CUDA IPC, shared memory): their memory, which
 *            they count as their fifo and flags; the mapping itself costs address space only
 *   pinned   host memory the device reaches: the inter-node FIFOs (which UCX moves), the error
 *            record and the resident kernel's mailbox, the contexts' staging (cuda) */
/* Pooled plans (gc3_exec_params_t.fifo_pool): the slots of their connections on the node are in the
 * executor's FIFO pool of the rank, one region as large as the largest of its plans needs (it grows
 * when a larger plan is prepared: every plan moves to the new one, the old one is freed), counted
 * once per executor (gc3_exec_pool_bytes), not in the plans' fifo; a plan's `pool` says how much of
 * it the plan's slots take. */
typedef struct {
    uint64_t slot_bytes;                        /* payload of one slot of this plan */
    int      slots;                             /* slots per connection */
    int      recv_conns, send_conns, net_conns; /* on the node receiving, sending; to other nodes */
    int      blocks;                            /* thread blocks of this rank */
    uint64_t fifo, flags, scratch, stage, control, mapped, pinned;
    uint64_t pool;                              /* pooled: its slots' bytes in the executor's FIFO pool (in
                                                 * fifo: only their tail lines) */
} gc3_plan_mem_t;
/* What the plan holds now (a copy). */
void         gc3_plan_memory(const gc3_plan_t *plan, gc3_plan_mem_t *mem);
/* Device bytes of a plan's record: fifo + flags + scratch + stage + control (not the pool). */
uint64_t     gc3_plan_mem_device(const gc3_plan_mem_t *mem);
/* Does the plan take its slots from the executor's FIFO pool (its calls must not overlap with those
 * of the executor's other pooled plans)? The same on every rank. */
int          gc3_plan_pooled(const gc3_plan_t *plan);
/* This rank's FIFO pool of the executor now (bytes; 0: none). */
uint64_t     gc3_exec_pool_bytes(const gc3_exec_t *exec);
/* The device bytes the pool would take in addition if a plan of this estimate were prepared now: 0
 * when its slots fit the pool there is, else the whole new pool (the old one is freed only once the
 * plans have moved to it). */
uint64_t     gc3_exec_pool_need(const gc3_exec_t *exec, const gc3_plan_mem_t *mem);
/* What a plan of this program would hold on this rank with these parameters (nothing allocated,
 * no exchange): the same figures as gc3_plan_memory after the largest call its slots allow;
 * pinned and control as the cuda backend allocates them when params->backend is cuda; with
 * params->fifo_pool, the slots it would take in the pool in `pool`. */
gc3_status_t gc3_plan_estimate(const gc3_exec_params_t *params, const gc3_ir_program_t *program, gc3_diag_t *diag,
                               gc3_plan_mem_t *mem);
/* What a call of `count` elements of dtype would run as on a plan of this program with these parameters
 * (nothing allocated, no exchange), as gc3_exec_start computes it: the slot's payload, the tile and loops
 * (zc_mode: in zero-copy mode, with params->zero_copy when every rank's buffers are registered: every
 * message left in place, tiles up to params->tile_bytes; otherwise slot-sized tiles), whether the kernel
 * stays resident (cuda). The cost model's view of a call (gc3c simulate --coll). */
typedef struct {
    uint64_t slot_payload; /* bytes a slot's message carries */
    int      slots;        /* FIFO slots per connection */
    uint64_t tile;         /* T: elements a chunk moves per loop */
    uint64_t chunks;       /* k: chunks per segment of the buffers */
    int      loops;        /* L: loops of the call */
    int      cnt_max;      /* chunks of the largest message */
    int      blocks;       /* thread blocks of params->rank */
    int      zc_mode;      /* zero-copy mode (large tiles) for this kind of call */
    int      resident;     /* cuda: the call goes to a resident kernel (no launch) */
} gc3_call_shape_t;
gc3_status_t gc3_plan_call_shape(const gc3_exec_params_t *params, const gc3_ir_program_t *program, uint64_t count,
                                 gc3_dtype_t dtype, int inplace, gc3_diag_t *diag, gc3_call_shape_t *shape);
/* gc3_plan_estimate with the executor's parameters */
gc3_status_t gc3_exec_estimate(const gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag,
                               gc3_plan_mem_t *mem);
/* Human-readable byte count into buf ("1.5 MiB"). */
const char  *gc3_mem_format(uint64_t bytes, char *buf, size_t len);

/* What this process holds through all its plans, every executor and backend together. */
typedef struct {
    uint64_t device;   /* fifo, flags, scratch, stage, control of live plans, and the FIFO pools */
    uint64_t pinned;   /* pinned host memory of live plans */
    uint64_t mapped;   /* peers' regions (and pools) mapped by live plans (and executors) */
    uint64_t deferred; /* given up by destroyed plans, freed as soon as no gc3 kernel runs (cuda:
                        * cudaFree waits for the whole device, see cuda/memory.cu) */
    int64_t  regions, mappings; /* regions created, peers' regions mapped (live) */
} gc3_mem_held_t;
void         gc3_mem_held(gc3_mem_held_t *held);
/* Free what was deferred, when no gc3 kernel of the process is in flight; the bytes still
 * deferred after it (0: everything given back). */
uint64_t     gc3_mem_release_deferred(void);

#endif
