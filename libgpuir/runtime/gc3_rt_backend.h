/* gc3 / libgpuir internal: what a backend provides to the executor. */
#ifndef GC3_RT_BACKEND_H
#define GC3_RT_BACKEND_H

#include "gc3_runtime.h"
#include <pthread.h>
#include "gc3_rt_internal.h"

#define GC3_RT_HANDLE_BYTES 128

typedef struct gc3_rt_backend {
    const char *name;
    /* this rank's shared region (zeroed), and a handle peers can open */
    gc3_status_t (*region_create)(gc3_plan_t *plan, size_t bytes, char **base_p, char handle[GC3_RT_HANDLE_BYTES],
                                  gc3_diag_t *diag);
    gc3_status_t (*region_open)(gc3_plan_t *plan, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes, char **base_p,
                                gc3_diag_t *diag);
    /* after every peer opened it (names can go: nothing leaks if a process dies later) */
    void         (*region_unlink)(gc3_plan_t *plan, const char handle[GC3_RT_HANDLE_BYTES]);
    /* plan: the plan that held it last (NULL: its executor, when it ends) */
    void         (*region_close)(gc3_plan_t *plan, char *base, size_t bytes, int own);
    /* memory the blocks use privately (scratch, LL staging): device memory for cuda */
    gc3_status_t (*mem_alloc)(gc3_plan_t *plan, size_t bytes, char **ptr_p);
    void         (*mem_free)(gc3_plan_t *plan, char *ptr, size_t bytes);
    /* zeroed host memory the blocks can use too (cuda: pinned and mapped): the inter-node FIFOs,
     * which the proxy thread moves with UCX */
    gc3_status_t (*host_alloc)(gc3_plan_t *plan, size_t bytes, char **ptr_p);
    void         (*host_free)(gc3_plan_t *plan, char *ptr, size_t bytes);
    /* run plan->tbs (already filled) */
    gc3_status_t (*start)(gc3_plan_t *plan, void *stream, gc3_diag_t *diag);
    gc3_status_t (*test)(gc3_plan_t *plan, int *done_p);
    gc3_status_t (*wait)(gc3_plan_t *plan);
    void         (*plan_cleanup)(gc3_plan_t *plan);
    /* the plan's connections moved (its slots to a new FIFO pool): a kernel that kept the old ones
     * ends (NULL: nothing keeps them) */
    void         (*plan_moved)(gc3_plan_t *plan);
    /* thread blocks of one rank that can run at once (cuda: all co-resident on the device) */
    int          (*max_blocks)(const gc3_exec_t *exec);
    /* the bytes of frees the backend deferred (NULL: it defers none); release: free them first if
     * it can now */
    uint64_t     (*deferred)(int release);
    /* what the backend itself allocates for a plan of this program and ntbs blocks on a rank: adds
     * to mem's control and pinned (NULL: nothing) */
    void         (*mem_estimate)(const gc3_flat_program_t *flat, int ntbs, gc3_plan_mem_t *mem);
} gc3_rt_backend_t;

/* The process-wide count of what plans hold (gc3_mem_held), by kind; a backend counts the memory
 * it allocates for a plan itself (control, pinned) with gc3_rt_plan_mem. */
enum { GC3_RT_HELD_DEVICE, GC3_RT_HELD_PINNED, GC3_RT_HELD_MAPPED, GC3_RT_HELD_REGIONS, GC3_RT_HELD_MAPPINGS,
       GC3_RT_HELD_KINDS };
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
    void       *req;   /* the OOB's handle while pending, else NULL */
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
void         gc3_rt_xchg_release(gc3_rt_xchg_t *x);

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
    uint64_t gen;    /* the owner's pools are numbered 1, 2, ... (each larger than the one before) */
    int      own;
    int      refs;   /* the executor while it is the owner's current one, and the plans using it */
    char     handle[GC3_RT_HANDLE_BYTES];
} gc3_rt_pool_t;

struct gc3_exec {
    gc3_exec_params_t       params;   /* params.node points to `node` */
    int                    *node;
    const gc3_rt_backend_t *be;
    uint64_t                uid;      /* distinguishes this executor's shared objects */
    int                     nplans;
    int                     next_id;  /* plans are numbered from 1 as their preparation starts */
    /* params.fifo_pool: what follows, under pool_lock (a call may start in one thread while another
     * finishes a plan's preparation, which may move the plans to a new pool) */
    pthread_mutex_t         pool_lock;
    gc3_rt_pool_t         **pool;       /* per rank: its current pool (this rank's, or a peer's mapped) */
    uint64_t                pool_epoch; /* bumped whenever an entry of `pool` changes */
    gc3_plan_t             *plans;      /* the live pooled plans, linked by pool_next */
    gc3_plan_t             *pool_busy;  /* the pooled plan whose call is in flight */
    int                     pool_last;  /* the id of the plan of the last call on the pool (0: none) */
};

struct gc3_plan {
    gc3_exec_t         *exec;
    gc3_flat_program_t *flat;
    int                 rank, nranks, ntbs;    /* ntbs: of this rank */
    const gc3_flat_tb_t *tbs;                  /* this rank's blocks */
    gc3_rt_layout_t     layout;                /* this rank's region */
    char               *region;
    char                handle[GC3_RT_HANDLE_BYTES];
    char              **peer_region;           /* per rank, NULL when not connected */
    size_t             *peer_bytes;
    int                 k_in, k_out, cnt_max, proto;
    uint64_t            slot_payload, slot_stride;
    int32_t            *tb_nsteps;
    int64_t            *sem_off, *loops_off;   /* this rank's (copies of the layout's) */
    uint64_t           *sem_base, *loops_base, *send_base, *recv_base;
    int                *nsend, *nrecv;         /* sending / receiving steps per block */
    gc3_rt_tb_t        *tbs_ctx;               /* per block, for the call in flight */
    char               *scratch;
    size_t              scratch_bytes;
    char               *stage;                 /* LL staging: 2 per block */
    size_t              stage_bytes;           /* per buffer */
    gc3_rt_error_t     *err;                   /* host memory the blocks write (backend-visible) */
    volatile int32_t   *abort_flag;
    int                 in_flight, broken;
    int                 call_L;
    void               *be_state;              /* the backend's */
    gc3_rt_conn_t      *conn;                  /* per block */
    char               *net;                   /* inter-node FIFOs (layout.net_bytes), NULL when none */
    char               *net_slots;             /* direct: their slots (layout.net_slot_bytes, mem_alloc) */
    void               *net_state;             /* net_ucx.c's */
    int                 crosses_nodes;         /* some connection of the program joins two nodes */
    int                 fused_runs;            /* gc3_flat_fuse's count for this rank */
    int                 id;                    /* in the executor */
    int                 pooled;                /* its slots on the node are in the FIFO pool (the same on
                                                * every rank) */
    gc3_rt_pool_t     **pool;                  /* pooled: per rank, the pool its connections point into
                                                * (this rank's when it receives on the node, the peers' it
                                                * sends to), a reference each; NULL entries elsewhere */
    uint64_t            pool_epoch;            /* the executor's when they were set */
    int64_t            *send_slot_off, *recv_slot_off; /* pooled: per block, its slots in the peer's / its
                                                * own pool (-1: none) */
    gc3_plan_t         *pool_next;             /* in exec->plans */
    gc3_plan_mem_t      mem;                   /* what it holds (gc3_plan_memory) */
    char                broken_why[512];
};

#endif
