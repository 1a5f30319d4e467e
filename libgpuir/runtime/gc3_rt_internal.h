/* gc3 / libgpuir internal: runtime structures shared by the executor, the interpreter core
 * and the backends. Plain C, no pointers to host-only state in what a kernel reads. */
#ifndef GC3_RT_INTERNAL_H
#define GC3_RT_INTERNAL_H

#include <stdint.h>
#include "gc3_ir.h"

#define GC3_RT_LINE       128u /* counters live on their own line */
#define GC3_RT_FUSE_MAX   8    /* operands of a fused run of local steps (gc3_flat_fuse) */
#define GC3_RT_WINDOW     4    /* scratch copies: a block may run this many loops ahead of the slowest of its rank */
/* The copies of scratch a call of `loops` loops takes (loop l uses copy l % GC3_RT_WINDOW) */
static inline int gc3_rt_scratch_copies(uint64_t loops)
{
    return loops < GC3_RT_WINDOW ? (int)(loops > 0 ? loops : 1) : GC3_RT_WINDOW;
}
#define GC3_RT_MSG_HDR    16u  /* every message starts with the call's signature (count, dtype,
                                * op), so a peer in another call is detected, not mixed in */
#define GC3_RT_SIMPLE_HDR 128u /* a Simple message's payload starts a line after the signature, so
                                * every 128-byte line of it is written whole (4 x H200: with the
                                * payload at +16, most lines sent over NVLink were two partial ones) */

#ifdef __CUDACC__
#define GC3_HD __host__ __device__
#else
#define GC3_HD
#endif

/* x rounded up to a multiple of a */
GC3_HD static inline uint64_t gc3_rt_round(uint64_t x, uint64_t a)
{
    return (x + a - 1) / a * a;
}

/* An LL message, as 4-byte words each sent in a line with its flag: the header (the call's
 * signature in words 0 and 1, zeros up to GC3_RT_MSG_HDR), then the payload, whose byte d is in
 * word GC3_RT_MSG_HDR / 4 + d / 4. Both backends pack and unpack with these. */
GC3_HD static inline uint64_t gc3_ll_words(uint64_t bytes)
{
    return (GC3_RT_MSG_HDR + bytes + 3) / 4;
}
GC3_HD static inline uint32_t gc3_ll_hdr_word(uint64_t i, uint64_t sig)
{
    return i == 0 ? (uint32_t)sig : i == 1 ? (uint32_t)(sig >> 32) : 0;
}
GC3_HD static inline int gc3_ll_is_hdr(uint64_t i)
{
    return i < GC3_RT_MSG_HDR / 4;
}
GC3_HD static inline uint64_t gc3_ll_sig(const uint32_t hdr[2])
{
    return (uint64_t)hdr[0] | (uint64_t)hdr[1] << 32;
}

enum {
    GC3_WAIT_WHAT_DEP = 1,
    GC3_WAIT_WHAT_RECV,
    GC3_WAIT_WHAT_SEND,
    GC3_WAIT_WHAT_WINDOW,
    GC3_WAIT_WHAT_NET,
    GC3_WAIT_WHAT_MISMATCH,
    GC3_WAIT_WHAT_POOL,
    GC3_WAIT_WHAT_ZC,
    GC3_WAIT_WHAT_START,
    GC3_WAIT_WHAT_PUSHED,
    GC3_WAIT_WHAT_PLACE /* a place to run, under a test's cap on the blocks that run at once (GC3_TEST_RESIDENT_BLOCKS) */
};

/* Giving way (doc/design/preemption.md). A block whose wait lasts longer than its yield_ns leaves
 * the call where it stands, before it moved any data of the step it waits in, and says where in its
 * record (kept by the backend per block); the backend runs the call's blocks again later (resuming):
 * a block whose record is of this call goes on from there, the others ended the call before. Nothing
 * is written or read on a call's way when no block gives way. */
typedef struct {
    uint64_t call;           /* the call (gc3_rt_tb_t.call) the block left; another call's: none */
    uint64_t sent, received; /* messages of the call on the block's connections so far */
    uint64_t waited;         /* how long the wait it left had lasted (ns): the timeout counts it, not the time
                              * the block spent off its SM before it ran again */
    int32_t  loop, step;     /* where it left (loop L, step 0: in the wait at the call's end) */
    int32_t  zc;             /* it sent a message in place (gc3_core_pos_t.zc) */
    int32_t  pad;
} gc3_rt_resume_t;
/* What gc3_core_run returns (the leader's answer; a backend shares it with the block's threads) */
enum { GC3_CORE_FAILED = -1, GC3_CORE_OK = 0, GC3_CORE_YIELDED = 1, GC3_CORE_DONE_BEFORE = 2 };

/* Zero-copy (doc/design/zero-copy.md): where a peer's registered buffer is mapped in this process, so
 * that a receiver reads a message left in place there: the peer's address range of the registration
 * and the address of its mapping here (0: not mapped). One per (peer rank, registration) in the
 * executor's table, written by the host, read by the blocks. */
typedef struct {
    uint64_t base, size, mapped, gen;
} gc3_rt_zc_entry_t;

/* The first failure of a call: who waited for what. */
typedef struct {
    int32_t  set;
    int32_t  rank, tb, step, loop, what;
    int32_t  peer, chan, dep_tb, dep_step;
    uint64_t expected, seen;
} gc3_rt_error_t;

/* Where things live in a rank's shared region (same layout on every rank, computed from the
 * flat program). Offsets in bytes from the region base; -1 when absent. */
typedef struct {
    size_t   bytes;
    int64_t *sem_off;    /* per block of the rank: steps completed (monotonic) */
    int64_t *loops_off;  /* per block: loops completed (monotonic) */
    int64_t *fifo_off;   /* per block with a receiving connection on the node: its tail line (then its
                          * slots, unless they are in the pool) */
    int64_t *slot_off;   /* per such block: its slots, in the region (after the tail) or, pooled, in the
                          * executor's FIFO pool of the rank */
    int64_t *head_off;   /* per block with a sending connection: head line (written by the receiver; a
                          * pooled plan's receiver also writes there, in word 1, that it started a call) */
    int      pooled;     /* the slots of the connections on the node are in the FIFO pool */
    size_t   pool_bytes; /* of the pool they take on this rank (0 when not pooled) */
    /* connections to other nodes (see gc3_rt_net.h): a second region in host memory, one
     * net_conn_bytes block per connection, -1 when the connection is on the node. Host-staged,
     * the slots are in that block; direct (net_direct), in a third region of the backend's
     * memory (cuda: device memory), net_slot_bytes, registered with UCX. */
    size_t   net_bytes, net_slot_bytes;
    uint64_t net_conn_bytes;
    int      net_direct;
    int64_t *net_recv_off; /* receiving: tail, lengths, slots (written by the peer's proxy), head copy */
    int64_t *net_send_off; /* sending: copies of tail, lengths and slots (my proxy sends them), head */
    int64_t *net_recv_slots, *net_send_slots; /* the connection's slots: offset in the net region
                                               * (host-staged) or in the slot region (direct) */
    /* A relabelled plan's region (gc3_rt_layout_union): the counters of nblocks blocks (sem_off, loops_off: the
     * most blocks any rank of the program has), then every connection on the node that the rank uses under any
     * relabelling, found by its peer and channel rather than by a block: nrconn receiving ones (off: the tail
     * line, slot: the slots, in the region or, pooled, in the pool), nsconn sending ones (off: the head line).
     * The per-block arrays above are NULL then. 0 and NULL for other plans. */
    int                  nblocks, nrconn, nsconn;
    struct gc3_rt_uconn *rconn, *sconn;
} gc3_rt_layout_t;

/* A connection of a relabelled plan's region: the peer at its other end, its channel, where it is. */
typedef struct gc3_rt_uconn {
    int32_t peer, chan;
    int64_t off, slot;
} gc3_rt_uconn_t;

/* One inter-node connection's block in the net region: tail line, per-slot message lengths,
 * slots (host-staged), head line (the block's last). */
#define GC3_RT_NET_LENS_OFF   GC3_RT_LINE
uint64_t gc3_rt_layout_net_lens_bytes(int slots);
#define GC3_RT_NET_SLOTS_OFF(slots) (GC3_RT_LINE + gc3_rt_layout_net_lens_bytes(slots))
#define GC3_RT_NET_HEAD_OFF(L) ((L)->net_conn_bytes - GC3_RT_LINE)

/* What one IR thread block needs for a call; filled by the executor, read by the core. */
/* The rank's abort flag: GC3_RT_ABORT_SET once a failure was recorded (gc3_rt_error_t) or the host
 * aborted the call; GC3_RT_ABORT_LL_TIMEOUT when a thread's LL load timed out, which stops the other
 * blocks at once and leaves the record of where to its block's leader (gc3_core_fail). */
#define GC3_RT_ABORT_SET        1
#define GC3_RT_ABORT_LL_TIMEOUT 2

typedef struct {
    /* program */
    int32_t                rank, tb, nsteps, chan, send_peer, recv_peer;
    const gc3_flat_step_t *steps;
    int32_t                proto;
    /* connections (NULL when the block has none) */
    char                  *send_slots;   /* receiver's slot array (remote) */
    uint64_t              *send_tail;    /* receiver's tail (remote) */
    uint64_t              *send_head;    /* my head (local; the receiver advances it) */
    char                  *recv_slots;   /* my slots (local) */
    uint64_t              *recv_tail;    /* my tail (local; the sender advances it) */
    uint64_t              *recv_head;    /* the sender's head (remote) */
    uint64_t              *send_lens;    /* sender to another node: per slot, the bytes to move
                                          * (NULL when the receiver is on this node) */
    int32_t                recv_remote;  /* the sender is on another node: wait for the tail in LL too */
    int32_t                pooled;       /* the slots on the node are in the FIFO pool, shared with other plans
                                          * of the executor: a receiving block says it started a call (word
                                          * 1 of the sender's head line, recv_base + 1), and at a hand-over a
                                          * sending block waits for that before its first message */
    uint64_t               send_base, recv_base; /* messages on the connections before this call
                                                  * (gc3_core_run advances them by the call's at its end) */
    uint32_t               send_slot, recv_slot; /* the bases modulo slots */
    uint64_t               head_seen;            /* *send_head was at least this when last read (leader; 0 from the host
                                          * at each call, kept by a resident kernel across its calls): a free
                                          * slot it already shows is not waited for again */
    /* the rank's blocks: semaphores and loop counters (local region) */
    char                  *region;
    const int64_t         *sem_off, *loops_off;
    const uint64_t        *sem_base, *loops_base;  /* values at call start, per block of the rank */
    const int32_t         *tb_nsteps;
    int32_t                ntbs;
    int32_t                window;       /* 0: blocks may drift any number of loops apart */
    /* call */
    char                  *buf[3];       /* input, output, scratch */
    int32_t                k[2];         /* chunks per segment of input and output */
    int32_t                s_chunks;
    int32_t                handover;     /* pooled: the previous call on the pool was another plan's, whose
                                          * messages the receiver may still be reading */
    uint64_t               count, T;
    const uint64_t        *seg;     /* per-rank counts: the plan's copy of the call's table (gc3_call_t.segs,
                                          * memory the blocks read); NULL: every segment has count elements */
    uint32_t               seg_ver; /* that copy's version, 1 to 2^24 - 1, new whenever its words change (the
                                          * chunk-ends table's key); 0 without one */
    int32_t                L;
    int32_t                dtype, op, dsize;
    int32_t                slots;
    uint64_t               slot_stride;  /* bytes per slot: header + payload (LL: twice that) */
    /* zero-copy sends (per call): the marking that applies (GC3_FLAT_ZC_OOP or _IP; 0: none), this
     * rank's registration of the input and the output (id + 1; 0: not registered) and the ranks that
     * mapped it (bit q: rank q; ranks from 64 on never) */
    int32_t                zc_bit;
    uint32_t               zc_id[2];
    uint64_t               zc_peers[2];
    /* the executor's table of peers' registrations mapped here, zc_entries per rank of the node; the index
     * on the node of the block's send and receive peers (-1: another node; send: also from 64 on) */
    const gc3_rt_zc_entry_t *zc_table;
    int32_t                zc_entries, zc_slocal, zc_rlocal;
    /* zero-copy mode, the push form (per call): where the block's receiver's input and output of the call
     * are mapped here (0: not pushed); a send marked for it (GC3_FLAT_ZC_PUSH_*) writes its chunks there */
    uint64_t                 push[2];
    uint64_t               sig;          /* this call's signature, first word of every message */
    char                  *stage_in, *stage_out; /* LL staging (slot payload bytes each) */
    double                 timeout_s;
    volatile int32_t        *abort_flag; /* nonzero: the rank's call stops (GC3_RT_ABORT_*) */
    gc3_rt_error_t        *err;
    /* giving way: the block's record (NULL: it never gives way), the call's number as the record names
     * it, how long a wait lasts before the block gives way (0: never), (the leader's) how long the wait the
     * block left had lasted, for the timeout of that wait resumed (0: none), and whether this run of the
     * call is a resumption (the record says where the block goes on, or that it ended the call before) */
    gc3_rt_resume_t       *resume;
    uint64_t               call;
    uint64_t               yield_ns;
    uint64_t               waited;
    int32_t                resuming;
    uint64_t              *trace;        /* cuda, GC3_CUDA_TRACE: this block's clock stamps (NULL: off):
                                          * GC3_TRACE_AT(s, phase) for each step of the first loop, after
                                          * GC3_TRACE_START and before GC3_TRACE_END(nsteps) */
} gc3_rt_tb_t;

/* Where chunk c of a step is read and written in a loop (buffer and byte offset in it, -1: not
 * read or not written), and how many of its elements exist (gc3_core_ends); a backend may keep a
 * table of them per block (interp_core.inl). Offsets, not addresses: they stay right from one call
 * to the next of the same size, whatever its buffers. */
#define GC3_RT_ENDS_CHUNKS 4 /* chunks of a step held in such a table */
typedef struct {
    uint64_t src_off, dst_off, n;
    int32_t  srcbuf, dstbuf;
} gc3_core_end_t;

/* Trace stamps of a block: its start, four per step of the first loop (waits done, message in,
 * data moved, published), its end. */
#define GC3_TRACE_PHASES        4
#define GC3_TRACE_START         0
#define GC3_TRACE_AT(s, phase)  (1 + GC3_TRACE_PHASES * (s) + (phase))
#define GC3_TRACE_END(nsteps)   (1 + GC3_TRACE_PHASES * (nsteps))
enum { GC3_TRACE_WAITED, GC3_TRACE_RECEIVED, GC3_TRACE_MOVED, GC3_TRACE_PUBLISHED };

/* node: per rank, its node (NULL: all on one node) */
/* net_direct: the inter-node slots in their own region (gc3_exec_params_t.net_direct) */
/* pooled: the slots of the connections on the node go in the FIFO pool (layout->pool_bytes) */
gc3_status_t gc3_rt_layout_compute(const gc3_flat_program_t *flat, int rank, int slots, uint64_t slot_stride,
                                   const int *node, int net_direct, int pooled, gc3_rt_layout_t *layout);
void         gc3_rt_layout_free(gc3_rt_layout_t *layout);
/* The region of real rank `rank` of a relabelled plan of flat (one node): the union over every shift s of the
 * connections of program rank (rank - s) mod n, their peers shifted by s (what the rank runs for the root
 * that shift gives). GC3_ERR_VERIFY when a rank of the program has two blocks on one connection (one
 * sending and one receiving block per peer and channel, as MSCCL requires): connections could not be
 * told apart. */
gc3_status_t gc3_rt_layout_union(const gc3_flat_program_t *flat, int rank, int slots, uint64_t slot_stride, int pooled,
                                 gc3_rt_layout_t *layout);
/* The index of the receiving (from peer) or sending (to peer) connection on channel chan in a union layout, or -1 */
int gc3_rt_layout_rconn(const gc3_rt_layout_t *layout, int peer, int chan);
int gc3_rt_layout_sconn(const gc3_rt_layout_t *layout, int peer, int chan);

/* Format an error record as text. */
void gc3_rt_error_format(const gc3_rt_error_t *e, char *buf, size_t len);

#endif
