/* gc3 / libgpuir internal: what a backend provides to the executor. */
#ifndef GC3_RT_BACKEND_H
#define GC3_RT_BACKEND_H

#include "gc3_runtime.h"
#include <pthread.h>
#include "gc3_rt_internal.h"

#define GC3_RT_HANDLE_BYTES 128

/* Zero-copy: what a backend says of a caller's buffer (reg_query), and fills in for its handle. */
typedef struct {
    uint64_t    base, size; /* the allocation (host: the shared file mapping) that holds the buffer */
    uint64_t    ident;      /* changes when that memory is freed and other memory made at the same place */
    uint64_t    offset;     /* host: the mapping's offset in its file */
    char        name[96];   /* host: the file */
    const char *why;        /* why not, when the buffer cannot be shared with the node's other processes */
} gc3_rt_reg_info_t;

typedef struct gc3_rt_net gc3_rt_net_t; /* a network transport (gc3_rt_net.h) */

typedef struct gc3_rt_backend {
    const char *name;
    /* this rank's shared region (zeroed), and a handle peers can open */
    gc3_status_t (*region_create)(gc3_plan_t *plan, size_t bytes, char **base_p, char handle[GC3_RT_HANDLE_BYTES],
                                  gc3_diag_t *diag);
    gc3_status_t (*region_open)(gc3_plan_t *plan, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes, char **base_p,
                                gc3_diag_t *diag);
    /* after every peer opened it (names can go: nothing leaks if a process dies later) */
    void (*region_unlink)(gc3_plan_t *plan, const char handle[GC3_RT_HANDLE_BYTES]);
    /* plan: the plan that held it last (NULL: its executor, when it ends) */
    void (*region_close)(gc3_plan_t *plan, char *base, size_t bytes, int own);
    /* memory the blocks use privately (scratch, LL staging): device memory for cuda */
    gc3_status_t (*mem_alloc)(gc3_plan_t *plan, size_t bytes, char **ptr_p);
    void (*mem_free)(gc3_plan_t *plan, char *ptr, size_t bytes);
    /* zeroed host memory the blocks can use too (cuda: pinned and mapped): the inter-node FIFOs,
     * which the proxy thread moves with UCX */
    gc3_status_t (*host_alloc)(gc3_plan_t *plan, size_t bytes, char **ptr_p);
    void (*host_free)(gc3_plan_t *plan, char *ptr, size_t bytes);
    /* run plan->tbs (already filled) */
    gc3_status_t (*start)(gc3_plan_t *plan, void *stream, gc3_diag_t *diag);
    gc3_status_t (*test)(gc3_plan_t *plan, int *done_p);
    gc3_status_t (*wait)(gc3_plan_t *plan);
    void (*plan_cleanup)(gc3_plan_t *plan);
    /* the plan's connections moved (its slots to a new FIFO pool): a kernel that kept the old ones
     * ends (NULL: nothing keeps them) */
    void (*plan_moved)(gc3_plan_t *plan);
    /* a relabelled plan's blocks now run another program rank's (gc3_plan_root): what the backend keeps of the
     * blocks across calls (a resident kernel, tables per block) goes (NULL: nothing kept) */
    gc3_status_t (*plan_rebind)(gc3_plan_t *plan, gc3_diag_t *diag);
    /* thread blocks of one rank that can run at once (cuda: all co-resident on the device) */
    int (*max_blocks)(const gc3_exec_t *exec);
    /* the bytes of frees the backend deferred (NULL: it defers none); release: free them first if
     * it can now */
    uint64_t (*deferred)(int release);
    /* what the backend itself allocates for a plan of this program and ntbs blocks on a rank: adds
     * to mem's control and pinned (NULL: nothing) */
    void (*mem_estimate)(const gc3_flat_program_t *flat, int ntbs, gc3_plan_mem_t *mem);
    /* copy host data into memory of mem_alloc (cuda: device memory) */
    gc3_status_t (*mem_write)(void *dst, const void *src, size_t bytes);
    /* zero-copy (reg.c; NULL: the backend has none): the allocation that holds a caller's buffer of this
     * process, if the node's other processes can map it (GC3_ERR_UNSUPPORTED with info->why if not);
     * a handle for it; a peer's handle mapped here, and unmapped */
    gc3_status_t (*reg_query)(gc3_exec_t *exec, const void *ptr, size_t bytes, gc3_rt_reg_info_t *info);
    gc3_status_t (*reg_handle)(gc3_exec_t *exec, gc3_rt_reg_info_t *info, char handle[GC3_RT_HANDLE_BYTES]);
    gc3_status_t (*reg_open)(gc3_exec_t *exec, const char handle[GC3_RT_HANDLE_BYTES], uint64_t size, char **mapped_p);
    void (*reg_close)(gc3_exec_t *exec, char *mapped, uint64_t size);
    /* a peer refused one of this process's regions as already mapped (CUDA IPC: another library of the
     * peer maps the allocation it is in): later regions get allocations of their own (NULL: nothing
     * to do; doc/design/ipc-coexistence.md) */
    void (*region_dedicate)(void);
} gc3_rt_backend_t;

/* ---- the registration cache of zero-copy (reg.c, doc/design/zero-copy.md) ---- */
typedef struct gc3_reg gc3_reg_t;
/* The executor's cache and this rank's board (GC3_OK and NULL when the backend has no registrations). */
gc3_status_t gc3_reg_create(gc3_exec_t *exec, gc3_diag_t *diag, gc3_reg_t **reg_p);
void         gc3_reg_destroy(gc3_exec_t *exec, gc3_reg_t *reg);
/* This rank's board, for the peers ("" when none); its name goes once they mapped it. */
const char *gc3_reg_board_name(const gc3_reg_t *reg);
void        gc3_reg_unlink(gc3_reg_t *reg);
/* The boards of the node's other ranks, by their names (per rank of the executor; NULL or "": none). */
void gc3_reg_connect(gc3_exec_t *exec, const char *const *names);
/* A peer process's allocation at [base, base + size) of its address space could not be mapped: CUDA has
 * another mapping of that place open (memory freed there since, still mapped here). Every cache of this
 * process unmaps what it mapped of that place of that process (and does not map it again). Returns
 * how many it unmapped. */
int gc3_reg_forget(uint64_t pid, uint64_t base, uint64_t size);
/* Map what the node's other ranks registered since the last time (never waits for them). */
void gc3_reg_progress(gc3_exec_t *exec);
/* A call's buffer: its registration (id + 1, held until gc3_reg_unref) and in *peers_p the ranks of the
 * node (bit: their index on the node) that mapped it; 0 when it has none, with the reason in *why_p
 * (also when no peer mapped it). */
uint32_t gc3_reg_lookup(gc3_exec_t *exec, const void *ptr, size_t bytes, uint64_t *peers_p, const char **why_p);
void     gc3_reg_unref(gc3_exec_t *exec, uint32_t id1);
/* A rank's index on this node (-1: another node, or no cache), and back; the table of mapped
 * registrations. */
int gc3_reg_local(const gc3_reg_t *reg, int rank);
int gc3_reg_rank_of(const gc3_reg_t *reg, int local);
/* Every other rank of the node has its board open here (and the node has at most 64 ranks); the mask of
 * those ranks (by their index on the node). */
int      gc3_reg_connected(const gc3_reg_t *reg);
uint64_t gc3_reg_all_peers(const gc3_reg_t *reg);
/* Zero-copy mode (reg.c's header): this rank's word for call `seq` of plan `plan` (< GC3_REG_AGREE_PLANS),
 * with the call's input and output (va) and their registrations (id + 1, 0: none);
 * GC3_IN_PROGRESS until every rank of the node posted its word for that call (*missing_p: the index on
 * the node of one that has not), then GC3_OK with *all_p: every rank was ready. */
#define GC3_REG_AGREE_PLANS 256
void gc3_reg_agree_post(gc3_reg_t *reg, int plan, uint64_t seq, int ready, const uint32_t id1[2], char *const va[2],
                        uint64_t sig);
gc3_status_t gc3_reg_agree_test(gc3_reg_t *reg, int plan, uint64_t seq, int *all_p, int *missing_p);
/* After gc3_reg_agree_test said every rank posted call `seq`: where the buffer b (0 input, 1 output) of
 * the call of the rank at index `local` of the node is mapped here (the push form writes there), or 0
 * (it gave none, its call's signature is not sig, its `bytes` from there are not all in the
 * registration, or this rank does not map that registration's generation). */
uint64_t gc3_reg_push_dst(gc3_reg_t *reg, int plan, uint64_t seq, int local, int b, uint64_t sig, uint64_t bytes);
const gc3_rt_zc_entry_t *gc3_reg_table(const gc3_reg_t *reg, int *entries_p);

/* The process-wide count of what plans hold (gc3_mem_held), by kind; a backend counts the memory
 * it allocates for a plan itself (control, pinned) with gc3_rt_plan_mem. */
enum {
    GC3_RT_HELD_DEVICE,
    GC3_RT_HELD_PINNED,
    GC3_RT_HELD_MAPPED,
    GC3_RT_HELD_REGIONS,
    GC3_RT_HELD_MAPPINGS,
    GC3_RT_HELD_KINDS
};
void gc3_rt_held_add(int kind, int64_t delta);
/* a plan's backend allocated (positive) or freed (negative) control device memory or pinned memory */
void gc3_rt_plan_mem(gc3_plan_t *plan, int64_t control, int64_t pinned);

extern const gc3_rt_backend_t gc3_rt_backend_host;
#ifdef GC3_HAVE_CUDA
extern const gc3_rt_backend_t gc3_rt_backend_cuda;
#endif

/* One out-of-band exchange of the runtime (gc3_oob_t): this rank's record (send, filled by the
 * caller after gc3_rt_xchg_alloc), everybody's (recv), and the pending handle. */
typedef struct {
    void       *req; /* the OOB's handle while pending, else NULL */
    char       *send, *recv;
    size_t      bytes; /* per rank */
    const char *what;  /* for messages: "the exchange of connection handles" */
} gc3_rt_xchg_t;
/* zeroed record of `bytes` for this rank, room for every rank's */
gc3_status_t gc3_rt_xchg_alloc(gc3_rt_xchg_t *x, size_t bytes, int nranks, const char *what);
gc3_status_t gc3_rt_xchg_post(const gc3_exec_t *exec, gc3_rt_xchg_t *x, gc3_diag_t *diag);
/* GC3_IN_PROGRESS while pending, GC3_OK when x->recv is filled, GC3_ERR_IO when it failed */
gc3_status_t gc3_rt_xchg_test(const gc3_exec_t *exec, gc3_rt_xchg_t *x, gc3_diag_t *diag);
/* the buffers, unless the exchange is still pending (then they belong to it) */
void gc3_rt_xchg_release(gc3_rt_xchg_t *x);

/* Where a block's connections are (computed once per plan). */
typedef struct {
    char     *send_slots, *recv_slots;
    uint64_t *send_tail, *send_head, *send_lens, *recv_tail, *recv_head;
    int       recv_remote;
} gc3_rt_conn_t;

/* A FIFO pool (gc3_exec_params_t.fifo_pool): this rank's region of slots, or a peer's mapped here. */
typedef struct {
    char    *base;
    size_t   bytes;
    uint64_t gen; /* the owner's pools are numbered 1, 2, ... (each larger than the one before) */
    int      own;
    int      refs; /* the executor while it is the owner's current one, and the plans using it */
    char     handle[GC3_RT_HANDLE_BYTES];
} gc3_rt_pool_t;

struct gc3_exec {
    gc3_exec_params_t       params; /* params.node points to `node` */
    int                    *node;
    const gc3_rt_backend_t *be;
    uint64_t                uid;          /* distinguishes this executor's shared objects */
    gc3_reg_t              *reg;          /* zero-copy's registration cache (NULL: none) */
    int                     reg_tried;    /* its creation was tried (at the first preparation) */
    char                    reg_why[160]; /* why there is none, when params.zero_copy asked for one */
    int                     nplans;
    int                     next_id; /* plans are numbered from 1 as their preparation starts */
    /* params.fifo_pool: what follows, under pool_lock (a call may start in one thread while another
     * finishes a plan's preparation, which may move the plans to a new pool) */
    pthread_mutex_t pool_lock;
    gc3_rt_pool_t **pool;       /* per rank: its current pool (this rank's, or a peer's mapped) */
    uint64_t        pool_epoch; /* bumped whenever an entry of `pool` changes */
    gc3_plan_t     *plans;      /* the live pooled plans, linked by pool_next */
    gc3_plan_t     *pool_busy;  /* the pooled plan whose call is in flight */
    int             pool_last;  /* the id of the plan of the last call on the pool (0: none) */
    int             pool_last_shift; /* and its shift (a relabelled plan's root) */
};

struct gc3_plan {
    gc3_exec_t          *exec;
    gc3_flat_program_t  *flat;
    int                  rank, nranks, ntbs; /* ntbs: of this rank */
    const gc3_flat_tb_t *tbs;                /* this rank's blocks */
    gc3_rt_layout_t      layout;             /* this rank's region */
    char                *region;
    char                 handle[GC3_RT_HANDLE_BYTES];
    char               **peer_region; /* per rank, NULL when not connected */
    size_t              *peer_bytes;
    int                  k_in, k_out, cnt_max, proto;
    int                  slots; /* FIFO slots per connection (gc3_plan_fifo_shape: params.slots, or 2) */
    uint64_t             slot_payload, slot_stride;
    int32_t             *tb_nsteps;
    int64_t             *sem_off, *loops_off; /* this rank's (copies of the layout's) */
    uint64_t            *sem_base, *loops_base, *send_base, *recv_base;
    int                 *nsend, *nrecv; /* sending / receiving steps per block */
    gc3_rt_tb_t         *tbs_ctx;       /* per block, for the call in flight */
    gc3_exec_times_t     times;         /* params.breakdown: the call's phases (the backend fills
                                                * ordered, posted, picked, exchanged) */
    char                *scratch;
    size_t               scratch_bytes;
    uint64_t            *segs; /* the call's per-rank counts, copied (host_alloc: the blocks read it); NULL */
    size_t               segs_bytes;
    uint32_t             segs_ver;    /* gc3_rt_tb_t.seg_ver of that copy */
    char                *stage;       /* LL staging: 2 per block */
    size_t               stage_bytes; /* per buffer */
    gc3_rt_error_t      *err;         /* host memory the blocks write (backend-visible) */
    volatile int32_t    *abort_flag;
    int                  in_flight, broken;
    int                  call_L;
    void                *be_state;                      /* the backend's */
    gc3_rt_conn_t       *conn;                          /* per block */
    char                *net;                           /* inter-node FIFOs (layout.net_bytes), NULL when none */
    char                *net_slots;                     /* direct: their slots (layout.net_slot_bytes, mem_alloc) */
    const gc3_rt_net_t  *transport;                     /* between nodes (crosses_nodes): chosen at its preparation */
    void                *net_state;                     /* the transport's (net_ucx.c's) */
    int                  crosses_nodes;                 /* some connection of the program joins two nodes */
    int                  fused_runs;                    /* gc3_flat_fuse's count for this rank */
    int                  id;                            /* in the executor */
    int                  pooled;                        /* its slots on the node are in the FIFO pool (the same on
                                                * every rank) */
    gc3_rt_pool_t      **pool;                          /* pooled: per rank, the pool its connections point into
                                                * (this rank's when it receives on the node, the peers' it
                                                * sends to), a reference each; NULL entries elsewhere */
    uint64_t             pool_epoch;                    /* the executor's when they were set */
    int64_t             *send_slot_off, *recv_slot_off; /* pooled: per block, its slots in the peer's / its
                                                * own pool (-1: none) */
    gc3_plan_t          *pool_next;                     /* in exec->plans */
    gc3_plan_mem_t       mem;                           /* what it holds (gc3_plan_memory) */
    int                  uses_scratch; /* some rank's blocks use scratch (the tile stays within a slot) */
    gc3_zc_stats_t       zc_stats;     /* gc3_flat_zc_mark's, for this rank (params.zero_copy) */
    /* zero-copy mode (reg.c): per kind of call (out of place, in place), whether its calls are agreed: every
     * send of every rank can leave its data in place, no scratch, one node, every rank has every board of
     * the node (the same on every rank). Such a call is pending (in flight, not launched) until every rank
     * of the node said whether all its buffers are mapped by all the others; if all are, it runs with the
     * large tile (params.tile_bytes) and every message in place, else as any other call. */
    int         zc_agree[2];
    int         pending;        /* the call in flight waits for the agreement */
    uint64_t    zc_seq;         /* agreed calls of the plan so far */
    uint64_t    pend_ns;        /* when it started waiting */
    int         zc_big;         /* the last call ran in zero-copy mode */
    int         zc_ready;       /* all this rank's buffers of the call in flight are mapped by all
                                                * the other ranks of the node */
    gc3_call_t  call;           /* the pending call */
    uint32_t    zc_held[2];     /* registrations the call in flight holds (id + 1) */
    int         zc_peers_last;  /* how many peers the last call could leave data in place for */
    int         zc_pushed_last; /* how many of them it wrote into (zero-copy mode, the push form) */
    int         zc_pull;        /* the program's zc_pull: never push */
    const char *zc_why;         /* why the last call left nothing in place (NULL: it did) */
    char        broken_why[512];
    uint64_t    resumed;    /* times a call of the plan ran again after blocks gave way (gc3_plan_resumed) */
    uint64_t    started_ns; /* when the call in flight started (gc3_exec_wait_for) */
    /* Relabelled (doc/design/call-model.md): one plan for every root of a rooted collective on one node. For
     * the root that shift s gives (the program's root + s), this rank plays program rank prank = (rank - s) mod
     * n, whose peer q is rank (q + s) mod n. The region holds the union of the connections of every shift
     * (layout: gc3_rt_layout_union), found by peer and channel, so a connection's counters stay paired whatever
     * shift used it last; the block fields above (ntbs, tbs, tb_nsteps, nsend, nrecv, conn, the slot offsets,
     * send_conn, recv_conn) are those of the binding of the current shift, each shift's kept in binds once
     * built. Other plans: nshift 1, shift 0, prank rank, ntbs_max ntbs. */
    int                    nshift, shift, prank, ntbs_max;
    struct gc3_plan_bind **binds;    /* per shift (NULL: not built yet) */
    gc3_rt_layout_t       *ulayouts; /* per rank: the union layouts of the peers (and this rank's, = layout) */
    int                   *send_conn, *recv_conn;   /* per block: its connection in the union layouts (-1: none) */
    uint64_t              *sconn_base, *rconn_base; /* per union connection: messages sent / received on it
                                                       * before the current binding's first call */
};

/* What a relabelled plan keeps per shift (gc3_plan_t's block fields of that binding). */
typedef struct gc3_plan_bind {
    int                  prank, ntbs;
    const gc3_flat_tb_t *tbs;
    int32_t             *tb_nsteps;
    int                 *nsend, *nrecv, *send_conn, *recv_conn;
    gc3_rt_conn_t       *conn;
    int64_t             *send_slot_off, *recv_slot_off;
    gc3_zc_stats_t       zc_stats;
} gc3_plan_bind_t;

/* A relabelled plan's real peer of program rank q (-1: none) under its current shift. */
static inline int gc3_plan_peer(const gc3_plan_t *p, int q)
{
    return q < 0 ? q : (q + p->shift) % p->nranks;
}
/* The real root of the plan's current calls (-1: not rooted). */
int gc3_plan_root_now(const gc3_plan_t *p);
/* Relabelled: the binding of the current shift built (its blocks, their connections in the union layouts). */
gc3_status_t gc3_plan_bind_connect(gc3_plan_t *p, gc3_diag_t *diag);
void         gc3_plan_binds_free(gc3_plan_t *p);
void         gc3_plan_bind_save(gc3_plan_t *p, struct gc3_plan_bind *b);

#endif
