/* coll/gc3: Open MPI collective component for CUDA device buffers.
 *
 * This is the component boundary: Open MPI names and conventions here, libgpuir
 * (libgpuir/) underneath. A module retains the previous module's functions for every
 * collective it intercepts (coll_gc3_colls.h). It runs MPI_Allreduce and MPI_Alltoall (blocking,
 * nonblocking and persistent: MPIX_*_init on Open MPI 4.1, MPI_*_init on 5.0) and the blocking
 * MPI_Allgather and MPI_Reduce_scatter_block itself through the runtime: device buffers with the
 * cuda backend; host buffers with the host backend when coll_gc3_backend=host. Everything else it
 * passes on, device buffers staged through host memory (the previous module is not CUDA-aware)
 * or as coll_gc3_fallback says.
 *
 * The files, by concern: coll_gc3_component.c (the component, its parameters), coll_gc3_module.c
 * (a communicator's module), coll_gc3_<collective>.c (one collective's forms), coll_gc3_fallback.c
 * and coll_gc3_stage.c (what gc3 passes on), coll_gc3_dispatch.c (the table, fallback and staging
 * decisions), coll_gc3_route.c (the route every rank takes, this rank's buffers adapted to it),
 * coll_gc3_inter.c (intercommunicators), coll_gc3_request.c (the pipeline of calls and their
 * requests), coll_gc3_persistent.c (persistent requests), coll_gc3_setup.c (a communicator's
 * set-up, in phases: coll_gc3_shape.c, coll_gc3_plan.c, their agreement coll_gc3_agree.c, the rules
 * coll_gc3_select.c), coll_gc3_oob.c (gc3's own messages), coll_gc3_types.c, coll_gc3_compat.c. */
#ifndef MCA_COLL_GC3_H
#define MCA_COLL_GC3_H

#include "ompi_config.h"
#include "mpi.h"
#include "ompi/mca/coll/coll.h"
#include "coll_gc3_compat.h"
#include "coll_gc3_colls.h"
#include "coll_gc3_params.h"
#include "ompi/communicator/communicator.h"
#include "ompi/request/request.h"
#include "gc3_ir.h"
#include "gc3_runtime.h"
#include "gc3_rules.h"
#include "gc3_route.h"
#include "opal/util/output.h"
#include "opal/util/proc.h"
#include <limits.h>
#include <pthread.h>

BEGIN_C_DECLS

typedef enum { MCA_COLL_GC3_BACKEND_AUTO, MCA_COLL_GC3_BACKEND_CUDA, MCA_COLL_GC3_BACKEND_HOST } mca_coll_gc3_backend_t;
/* coll_gc3_zero_copy */
typedef enum { MCA_COLL_GC3_ZC_AUTO, MCA_COLL_GC3_ZC_ON, MCA_COLL_GC3_ZC_OFF } mca_coll_gc3_zero_copy_t;

/* coll_gc3_wait_default_stream: false and true keep their old numbers (the parameter was a bool);
 * true is the measured best of host and device (mca_coll_gc3_wait_legacy) */
typedef enum {
    MCA_COLL_GC3_WAIT_FALSE,
    MCA_COLL_GC3_WAIT_TRUE,
    MCA_COLL_GC3_WAIT_HOST,
    MCA_COLL_GC3_WAIT_DEVICE
} mca_coll_gc3_wait_t;

/* coll_gc3_fallback: what happens to a call on device buffers that gc3 does not run itself. Code
 * asks mca_coll_gc3_fallback() (stage, pass or error), never the parameter: auto is resolved there. */
typedef enum {
    MCA_COLL_GC3_FALLBACK_STAGE, /* copy the buffers through host memory around the previous module */
    MCA_COLL_GC3_FALLBACK_PASS,  /* give the previous module the device buffers (it must be CUDA-aware) */
    MCA_COLL_GC3_FALLBACK_ERROR, /* fail the call, naming it */
    MCA_COLL_GC3_FALLBACK_AUTO   /* pass where Open MPI says it is CUDA-aware, else stage */
} mca_coll_gc3_fallback_t;

typedef struct mca_coll_gc3_component_t {
    mca_coll_base_component_t super;
    int                       output;             /* opal_output stream */
    MCA_COLL_GC3_PARAMS(MCA_COLL_GC3_PARAM_FIELD) /* coll_gc3_<name> (coll_gc3_params.h) */
    bool         enable[GC3_COLL_COUNT];          /* coll_gc3_enable_<name> (the table's rows) */
    gc3_rules_t *rules;                           /* loaded at the first selection */
} mca_coll_gc3_component_t;

OMPI_DECLSPEC extern mca_coll_gc3_component_t mca_coll_gc3_component;
/* The parameters in the settings hash (coll_gc3_params.h), hashed into h. */
uint64_t mca_coll_gc3_params_hash(uint64_t h);

/* Who says a message that every rank would say alike (one line per message, not one per rank):
 * rank 0 of the communicator the message is about (the ranks agree on its shape and plans), or of
 * MPI_COMM_WORLD for what each process finds alike (its rules); every rank at coll_gc3_verbose 3
 * and more. Messages of one rank's own state ("comm X rank N: ...") are said by that rank. */
#define MCA_COLL_GC3_SAYS(comm) (mca_coll_gc3_component.verbose >= 3 || ompi_comm_rank(comm) == 0)
#define mca_coll_gc3_verbose_once(level, comm, ...)                                                                    \
    do {                                                                                                               \
        if (MCA_COLL_GC3_SAYS(comm)) {                                                                                 \
            opal_output_verbose((level), mca_coll_gc3_component.output, __VA_ARGS__);                                  \
        }                                                                                                              \
    } while (0)
#define MCA_COLL_GC3_JOB_SAYS() (mca_coll_gc3_component.verbose >= 3 || OPAL_PROC_MY_NAME.vpid == 0)

/* A call gc3 must pass on, but no other coll component provides `name` (a bare string): say
 * so at verbose level 1; the value is OMPI_ERR_NOT_SUPPORTED. */
static inline int mca_coll_gc3_no_prev(struct ompi_communicator_t *comm, const char *name)
{
    mca_coll_gc3_verbose_once(1, comm, "coll:gc3: comm %s: %s called but no other coll component provides it",
                              comm->c_name, name);
    return OMPI_ERR_NOT_SUPPORTED;
}
#define MCA_COLL_GC3_NO_PREV(comm, name) mca_coll_gc3_no_prev((comm), #name)

/* The previous module's function for one intercepted collective, retained while gc3 is enabled. */
#define MCA_COLL_GC3_PREV_FIELDS(name, type, ...)                                                                      \
    mca_coll_base_module_##type##_fn_t prev_##name;                                                                    \
    mca_coll_base_module_t            *prev_##name##_module;
/* gc3's function for it, mca_coll_gc3_<name>, declared with Open MPI's type of it */
#define MCA_COLL_GC3_DECLARE(name, type, ...) __typeof__(*(mca_coll_base_module_##type##_fn_t)NULL) mca_coll_gc3_##name;

/* The collectives gc3 runs are the IR's gc3_coll_t (GC3_COLL_ALLREDUCE, ...): one identity, which
 * rules and programs compare; gc3_coll_desc(coll)->mpi_name is the MPI call's name, for messages. */
#define MCA_COLL_GC3_NBACKEND 2 /* gc3_backend_t: host, cuda */

/* gc3's point-to-point tags (negative: never matched by an application's MPI_ANY_TAG receive;
 * Open MPI's own collective tags start at -7 in 5.0 and -10 in 4.1). One for the set-up exchanges,
 * one for the host-staged exchange: each kind is posted in the same order on every rank of a
 * communicator, so messages of one tag match in order; the two kinds interleave differently. */
#define MCA_COLL_GC3_TAG_SETUP (-5)
#define MCA_COLL_GC3_TAG_DATA  (-6)
#define MCA_COLL_GC3_TAG_VX    (-7) /* a nonblocking v-call's agreement (coll_gc3_vcall.c) */

/* A plan entry: one (backend, collective, rule, in place) of a communicator. */
#define MCA_COLL_GC3_ROOT_ANY (-2)
enum { MCA_COLL_GC3_ENTRY_NEW, MCA_COLL_GC3_ENTRY_BUILDING, MCA_COLL_GC3_ENTRY_READY, MCA_COLL_GC3_ENTRY_FAILED };
typedef struct {
    int               backend, coll, rule, inplace; /* the key: the rule that matched the call */
    int               root;      /* ... and a rooted collective's root (a rooted plan is compiled for one); -1;
                                  * MCA_COLL_GC3_ROOT_ANY: one plan for every root (coll_gc3_relabel) */
    int               state;     /* MCA_COLL_GC3_ENTRY_* */
    int               busy;      /* a call runs on the plan (coll_gc3_request.c: mca_coll_gc3_entry_take) */
    int               nb_seen;   /* a nonblocking call used it (reported once) */
    int               fail_call; /* the ranks called with different sizes or modes: the call fails */
    size_t            bytes;     /* the call that made it (for messages) */
    int               blocks;    /* READY: thread blocks of this rank's part of the plan (one SM each on a GPU) */
    char             *why;       /* FAILED: why, for the verbose line of calls without a plan (mca_coll_gc3_set_text) */
    int               zc_said, zc_said_peers; /* what mca_coll_gc3_report_zc said last */
    const char       *zc_said_why;
    gc3_ir_program_t *program;
    gc3_plan_t       *plan;
} mca_coll_gc3_plan_entry_t;

struct mca_coll_gc3_request_t;
struct mca_coll_gc3_xchg_t;
struct mca_coll_gc3_hsx_t;
struct mca_coll_gc3_vx_t;

/* A buffer of a call passed on with its device memory copied through host memory (coll_gc3_stage.c). */
typedef struct {
    void                   *user; /* the caller's pointer (host memory, NULL, MPI_IN_PLACE: not copied) */
    struct ompi_datatype_t *dt;
    size_t                  count; /* elements of dt it spans */
    int                     in;    /* copied in before the call (an input; or an output whose gaps must stay) */
    int                     out;   /* copied back after a successful call */
    char                   *mem;   /* the host copy (NULL: none) */
    char                   *base;  /* what to give the previous module: the copy shifted by dt's lower bound, or user */
} mca_coll_gc3_stage_t;

/* One of a call's buffers as this rank passed it, and as gc3's route needs it (coll_gc3_route.c):
 * contiguous, in the route's memory (device memory of this rank's GPU, or host memory). A buffer that
 * is not is copied (packed, for a datatype with holes) into a temporary before the call and back
 * (unpacked) after it. */
typedef struct {
    void                   *user; /* the caller's pointer (NULL: none on this rank) */
    struct ompi_datatype_t *dt;   /* its datatype, count elements of it */
    size_t                  count;
    size_t                  bytes; /* its data (count x the datatype's size) */
    int                     in;    /* read by the call */
    int                     out;   /* written by the call */
    unsigned                kind;  /* GC3_KIND_* of the memory */
    char                   *tmp;   /* the temporary (NULL: user's memory is used as it is) */
    size_t                  tmp_bytes;
    int                     tmp_device; /* tmp is device memory */
    char                   *run;        /* what the runtime gets */
} mca_coll_gc3_abuf_t;
typedef struct {
    mca_coll_gc3_abuf_t b[2];         /* [0] the send buffer, [1] the receive buffer */
    int                 inplace_send; /* the send buffer is MPI_IN_PLACE */
    int                 adapted;      /* mca_coll_gc3_adapt_in ran (its temporaries are to be released) */
} mca_coll_gc3_adapt_t;

/* One call in a communicator's pipeline (coll_gc3_request.c): started on its plan when the plan
 * exists and is free, in call order; run by the host-staged exchange (coll_gc3_oob.c) when gc3 has
 * no plan for it; or, a blocking call, handed back to its caller. */
enum {
    MCA_COLL_GC3_TASK_QUEUED,  /* waiting for the communicator's set-up or its plan */
    MCA_COLL_GC3_TASK_RUNNING, /* started on its plan */
    MCA_COLL_GC3_TASK_STAGED,  /* started on the host-staged exchange */
    MCA_COLL_GC3_TASK_GO,      /* blocking: the plan is its own, the caller runs it */
    MCA_COLL_GC3_TASK_PASS,    /* blocking: no plan, the caller passes it on */
    MCA_COLL_GC3_TASK_CHAINED, /* passed on, staged: the previous module's nonblocking call runs on host copies */
    MCA_COLL_GC3_TASK_DONE     /* over: rc */
};
typedef struct mca_coll_gc3_task_t {
    struct mca_coll_gc3_task_t    *next;
    int                            ahead; /* a persistent init: only the plan's set-up */
    int                            blocking;
    int                            coll, inplace, device;
    int                            root; /* a rooted collective's (bcast, reduce), else -1 */
    gc3_backend_t                  backend;
    size_t                         bytes;
    gc3_call_t                     call;
    mca_coll_gc3_adapt_t           ad;       /* a nonblocking call's buffers, adapted (released at its end) */
    ompi_request_t                *inner;    /* CHAINED: the previous module's request it waits for */
    mca_coll_gc3_stage_t           stage[2]; /* CHAINED: the host copies of its device buffers */
    int                            nstage;
    mca_coll_gc3_plan_entry_t     *entry;
    struct mca_coll_gc3_request_t *req; /* nonblocking and persistent calls */
    struct mca_coll_gc3_hsx_t     *hsx; /* STAGED */
    /* a nonblocking v-call: its table (call.segs; the task's own, freed when it completes), and the agreement
     * of its largest segment, made when it reaches the head of the queue (mca_coll_gc3_vx_advance): this
     * rank's largest segment, the exchange under way */
    uint64_t                 *segs;
    uint64_t                  vmine;
    int                       vstate; /* MCA_COLL_GC3_VX_* */
    int                       vfail;  /* this rank cannot run it: every rank fails it after the agreement */
    struct mca_coll_gc3_vx_t *vx;
    volatile int              state; /* MCA_COLL_GC3_TASK_* */
    int                       rc;
} mca_coll_gc3_task_t;

/* The set-up of a communicator, in jobs done one after the other in the order the calls needed
 * them (every rank the same): an executor (the communicator's shape and settings), a plan. */
enum { MCA_COLL_GC3_JOB_EXEC, MCA_COLL_GC3_JOB_PLAN };
typedef struct {
    int                        kind, backend;
    mca_coll_gc3_plan_entry_t *entry;
} mca_coll_gc3_job_t;

/* coll_gc3_breakdown: the phases of a run of blocking calls of one collective, size and kind, summed
 * (microseconds) until the run ends (coll_gc3_report.c). */
enum {
    MCA_COLL_GC3_PH_FIND,    /* entry to plan found: buffers' kinds, datatype, rules, plan cache */
    MCA_COLL_GC3_PH_START,   /* plan found to the runtime's start */
    MCA_COLL_GC3_PH_ORDER,   /* ordered after the caller's stream (cuda: the legacy default stream's work) */
    MCA_COLL_GC3_PH_POST,    /* posted: the resident kernel's mailbox written, or a kernel launched */
    MCA_COLL_GC3_PH_FLIGHT,  /* posted to completion seen */
    MCA_COLL_GC3_PH_TO_PICK, /* of which posted to taken (host backend: one clock) */
    MCA_COLL_GC3_PH_TO_SEEN, /* of which exchange done to completion seen (host backend) */
    MCA_COLL_GC3_PH_RETURN,  /* completion seen to the return to MPI */
    MCA_COLL_GC3_PH_TOTAL,
    MCA_COLL_GC3_PH_N
};
typedef struct {
    int      coll, inplace, same_clock;
    size_t   bytes;
    uint64_t calls;
    double   us[MCA_COLL_GC3_PH_N];
    uint64_t ex_ns[2], ex_n[2]; /* the plan's sums of its exchanges (gc3_exec_times_t) at the run's start, now */
} mca_coll_gc3_breakdown_t;

/* Where a communicator's executor of a backend stands (mca_coll_gc3_module_t.exec_state) */
enum {
    MCA_COLL_GC3_EXEC_UNUSABLE = -1, /* its set-up failed or did not finish (exec_why says why) */
    MCA_COLL_GC3_EXEC_NONE     = 0,  /* not set up yet */
    MCA_COLL_GC3_EXEC_READY    = 1,
    MCA_COLL_GC3_EXEC_SETTING  = 2 /* being set up: the communicator's shape is being exchanged */
};
typedef struct mca_coll_gc3_module_t {
    mca_coll_base_module_t super;
    MCA_COLL_GC3_INTERCEPTED(MCA_COLL_GC3_PREV_FIELDS)
    struct ompi_communicator_t *comm;
    pthread_mutex_t             lock; /* everything below that calls and progress change */
    gc3_exec_t                 *exec[MCA_COLL_GC3_NBACKEND];
    int                         exec_state[MCA_COLL_GC3_NBACKEND];    /* MCA_COLL_GC3_EXEC_* */
    char                        exec_why[MCA_COLL_GC3_NBACKEND][160]; /* unusable: why */
    int                         device;      /* CUDA device of this rank's executor, -1 unknown */
    int                         nodes, gpus; /* shape of the communicator */
    int                        *node;        /* per rank: its node (pseudo-nodes counted as nodes) */
    int                         unusable;    /* the ranks could not agree on a call (an erroneous program
                                           * left an exchange pending): every later call fails */
    int                         regular;     /* nodes of `gpus` consecutive ranks each (hierarchical plans fit) */
    gc3_link_t                  link[MCA_COLL_GC3_NBACKEND];         /* link class seen by each backend */
    int                         block_budget[MCA_COLL_GC3_NBACKEND]; /* thread blocks per rank a plan may have
                                                                       * (the same on every rank) */
    int      gpu_share; /* cuda: thread blocks this rank's GPU runs at once for it (INT_MAX: no limit known) */
    int      net_direct[MCA_COLL_GC3_NBACKEND];   /* between nodes: the direct (GPUDirect) path, agreed */
    char     net_why[MCA_COLL_GC3_NBACKEND][192]; /* which path and why (verbose) */
    char     nic[256];  /* cuda, several nodes (or verbose 2): the NIC nearest this rank's GPU */
    uint64_t gpu_mem;   /* cuda: this rank's GPU memory (0: unknown) */
    mca_coll_gc3_breakdown_t bd; /* coll_gc3_breakdown: the run of calls being summed */
    /* its plan entries (coll_gc3_entry.c) */
    struct {
        mca_coll_gc3_plan_entry_t **entries;
        int                         nentries, entries_cap;
        int                         pool_busy
            [MCA_COLL_GC3_NBACKEND]; /* a call runs on a plan of the backend's FIFO pool (coll_gc3_fifo_pool) */
        int blocks_busy;             /* cuda: thread blocks of this communicator's calls in flight on this rank's GPU */
    } plans;
    /* what its plans hold (coll_gc3_plan.c: coll_gc3_verbose's memory lines) */
    struct {
        uint64_t peak;  /* device bytes its plans held at most together */
        int      plans; /* plans it built */
        int      rank;  /* this rank in it, and its name, when the last plan was built (the module may be
                         * destroyed after the communicator) */
        char     name[MPI_MAX_OBJECT_NAME];
        uint64_t pool[MCA_COLL_GC3_NBACKEND]; /* the FIFO pool's bytes counted in peak */
    } mem;
    /* the pipeline of calls (coll_gc3_request.c) */
    struct {
        mca_coll_gc3_task_t *head, *tail; /* waiting, in call order */
        mca_coll_gc3_task_t *running;     /* started */
        int                  active;      /* on the progress list */
        int                  staged_seen; /* per collective (bit): a call without a plan was reported */
    } pipe;
    /* the set-up (coll_gc3_setup.c) */
    struct {
        mca_coll_gc3_job_t *jobs; /* to do, in order; jobs[0] is under way when `phase` is set */
        int                 njobs, jobs_cap;
        int                 phase;                                  /* of jobs[0], 0: none */
        void               *xreq;                                   /* gc3's own exchange of that phase: its handle, */
        char               *xsend, *xrecv;                          /* this rank's record and everybody's */
        gc3_prep_t         *prep;                                   /* the runtime's preparation of that plan */
        gc3_diag_t          diag;                                   /* of the job under way */
        int                 job_proto, job_channels, job_instances; /* the plan's, for its line */
        char                job_narrow[96];
        char                job_copied[80]; /* an in-place program serving an out-of-place call */
    } setup;
    /* the route of calls (coll_gc3_route.c): agreed memory kinds per call key, the agreements'
     * results, temporaries kept for the next call */
    gc3_route_cache_t route;
    struct {
        char  *p;
        size_t bytes;
        int    device;
    } spare[4];
    /* gc3's set-up exchanges (coll_gc3_oob.c): one pending at a time, numbered */
    struct {
        struct mca_coll_gc3_xchg_t *pending;
        double                      posted; /* when it was posted (monotonic seconds) */
        uint32_t                    seq;
    } oob;
} mca_coll_gc3_module_t;

OBJ_CLASS_DECLARATION(mca_coll_gc3_module_t);

/* coll_gc3_module.c */
int                     mca_coll_gc3_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_gc3_comm_query(struct ompi_communicator_t *comm, int *priority);
/* gc3's function of every intercepted collective (coll_gc3_<collective>.c, coll_gc3_fallback.c) */
MCA_COLL_GC3_INTERCEPTED(MCA_COLL_GC3_DECLARE)
/* ... and on an intercommunicator (coll_gc3_inter.c) */
#define MCA_COLL_GC3_DECLARE_INTER(name, type, ...)                                                                    \
    __typeof__(*(mca_coll_base_module_##type##_fn_t)NULL) mca_coll_gc3_inter_##name;
MCA_COLL_GC3_INTER(MCA_COLL_GC3_DECLARE_INTER)

/* coll_gc3_types.c */
int mca_coll_gc3_map_dtype(struct ompi_datatype_t *dt, gc3_dtype_t *out);
/* count elements of dt as the runtime's elements (*elems of *out): a predefined datatype gc3 knows,
 * or a derived one whose type signature is one of them repeated (every rank with the same signature
 * gets the same answer, whatever its layout); 0 otherwise. */
int mca_coll_gc3_map_signature(struct ompi_datatype_t *dt, size_t count, gc3_dtype_t *out, size_t *elems);
int mca_coll_gc3_dt_bytes(struct ompi_datatype_t *dt, int count);
int mca_coll_gc3_map_op(struct ompi_op_t *op, gc3_op_t *out);

/* coll_gc3_dispatch.c: which way a call goes. Memory is asked of libgpuir (gc3_topo.h: the CUDA
 * driver, loaded at run time); the component asks CUDA nothing itself. */
gc3_mem_t mca_coll_gc3_classify(const void *ptr, int *device_p);         /* (says once whether there is a driver) */
int       mca_coll_gc3_memcpy(void *dst, const void *src, size_t bytes); /* any memory */
/* Bytes spanned by count elements of dt (coll_gc3_stage.c), and where its data starts relative to the
 * buffer (its true lower bound, *gap_p: may be negative or past the start). */
size_t mca_coll_gc3_span(struct ompi_datatype_t *dt, size_t count, ptrdiff_t *gap_p);
/* Is ptr memory the previous module must not see (device or managed; or anything, with the
 * coll_gc3_stage_host test feature)? */
int mca_coll_gc3_is_device(const void *ptr);
/* coll_gc3_fallback as it applies to a call on device buffers that gc3 does not run: stage, pass
 * (the previous module gets the buffers as they are) or error; auto resolved here, and only here
 * (pass where this Open MPI says it is CUDA-aware, MPIX_Query_cuda_support, else stage; for a
 * nonblocking call auto's pass is stage: it runs as its blocking form). Said once at verbose 1. */
mca_coll_gc3_fallback_t mca_coll_gc3_fallback(struct ompi_communicator_t *comm, int nonblocking);
/* A call on device buffers that gc3 does not run: 1 when it is to be staged through host memory;
 * 0 when it is not (coll_gc3_fallback): *rc_p is then OMPI_SUCCESS to give the previous module the
 * buffers as they are, or the error to return (reported). */
int mca_coll_gc3_stage_call(struct ompi_communicator_t *comm, const char *coll, int *rc_p);
/* The same for a nonblocking call: staged, its previous module's nonblocking form runs on the host
 * copies (coll_gc3_fallback auto's pass is stage there: Open MPI's nonblocking collectives take no
 * device buffers). */
int mca_coll_gc3_stage_call_nb(struct ompi_communicator_t *comm, const char *coll, int *rc_p);
/* coll_gc3_fallback.c: a nonblocking neighbourhood collective `name` on device buffers (device) runs as
 * its blocking form, completed at once: 1 (said at verbose 2); 0 when it goes to the previous module
 * as it is (host buffers, coll_gc3_fallback=pass). */
int mca_coll_gc3_nb_as_blocking(struct ompi_communicator_t *comm, const char *name, int device);

/* gc3's view of one call of a collective it runs, made by the collective's argument builder
 * (coll_gc3_<collective>.c) and shared by its blocking, nonblocking and persistent forms. The
 * builder returns 1 when gc3 may run the call (it still needs a plan for it), with *a filled; 0
 * when it passes the call on (why: at verbose level 2); a->device and a->backend are set either way. */
typedef struct {
    int                  device;  /* a buffer is device memory (or counts as such: coll_gc3_stage_host) */
    int                  backend; /* the gc3_backend_t that would run it; -1: none; MCA_COLL_GC3_BACKEND_* below: this
                                   * rank cannot run it (reported) */
    gc3_dtype_t          dtype;
    gc3_op_t             op;
    size_t               count; /* the runtime's count: elements (reductions), bytes per rank's segment (the others) */
    size_t               bytes; /* the call's size as the rules count it */
    int                  root;  /* a rooted collective's root (bcast, reduce), else -1 */
    uint64_t             entry_ns; /* coll_gc3_breakdown: when the call entered gc3 (mca_coll_gc3_breakdown_now) */
    int                  coll;     /* gc3_coll_t */
    const char          *name;     /* the MPI call, for messages: "iallreduce" */
    unsigned             kinds;    /* this rank's GC3_KIND_* (its buffers, its driver and backend) */
    int                  route;    /* gc3_route_t, the same on every rank (mca_coll_gc3_route_take) */
    unsigned             agreed;   /* the kinds the ranks agreed on (the route's reason) */
    mca_coll_gc3_adapt_t ad;       /* this rank's buffers, and as the route needs them */
    uint64_t            *segs;     /* a v-collective's per-rank counts: this rank's table (gc3_call_t.segs, in the
                                    * runtime's elements of the buffers as the route runs them), or NULL */
    int                  vagree;   /* the ranks agree on the largest segment (alltoallv), this rank's vmine */
    uint64_t             vmine;
    int                  vfail; /* nonblocking, vagree: this rank cannot run it (says so in the agreement) */
} mca_coll_gc3_args_t;
/* mca_coll_gc3_args_t.backend of a call this rank takes part in but cannot run (reported), and its return code */
enum {
    MCA_COLL_GC3_BACKEND_UNADAPTED = -2, /* its buffers could not be adapted, or its table made: out of memory */
    MCA_COLL_GC3_BACKEND_FAILED    = -3  /* the agreement on its route timed out (the communicator is unusable now) */
};
static inline int mca_coll_gc3_failed_rc(const mca_coll_gc3_args_t *a)
{
    return a->backend == MCA_COLL_GC3_BACKEND_FAILED ? OMPI_ERROR : OMPI_ERR_OUT_OF_RESOURCE;
}
/* A call of this size (as the rules count it) is above coll_gc3_max_bytes; mca_coll_gc3_within_max_bytes
 * (coll_gc3_route.c): 1 when it is not, else 0 after saying so (the call `name` is passed on). */
static inline int mca_coll_gc3_above_max_bytes(size_t bytes)
{
    return mca_coll_gc3_component.max_bytes > 0 && bytes > (size_t)mca_coll_gc3_component.max_bytes;
}
int mca_coll_gc3_within_max_bytes(mca_coll_gc3_module_t *m, const char *name, size_t bytes);
/* A call's size as the rules and coll_gc3_max_bytes see it (gc3_coll_call_bytes, as gc3c and gc3_info count it):
 * count elements of dt in its largest segment (a v-call: of any rank's) on n ranks; of a call being built */
static inline size_t mca_coll_gc3_call_bytes(int coll, int n, size_t count, gc3_dtype_t dt)
{
    return (size_t)gc3_coll_call_bytes((gc3_coll_t)coll, n, (uint64_t)count * gc3_dtype_size(dt));
}
static inline size_t mca_coll_gc3_args_bytes(const mca_coll_gc3_args_t *a, int n)
{
    return mca_coll_gc3_call_bytes(a->coll, n, a->count, a->dtype);
}
/* coll_gc3_vcall.c: the v-collectives' shared steps. A buffer of nsegs segments of counts at displacements
 * (elements of dt) as mca_coll_gc3_args_buf's slot: from the lowest displacement of a nonempty segment when it
 * is negative (the buffer the runtime gets starts there), to the end of the last one; returns that first
 * element (0 or negative), which the table's displacements count from. */
long mca_coll_gc3_vbuf(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int slot, const void *user,
                       struct ompi_datatype_t *dt, const int *counts, const int *displs, int nsegs, int in, int out);
/* A zeroed table of a->coll's segments (a->segs; freed by
 * mca_coll_gc3_args_end); NULL when out of host memory. */
uint64_t *mca_coll_gc3_segs_new(mca_coll_gc3_args_t *a, int nranks);
/* Set the pair of segment s of buffer b (0 input, 1 output) from MPI's count and displacement of an element of
 * `size` bytes in the runtime's elements of `unit` bytes (a buffer runs contiguous: packed where its datatype is
 * not, so element i of the datatype is at byte i * size). */
void mca_coll_gc3_segs_set(mca_coll_gc3_args_t *a, int b, int s, size_t disp, size_t count, size_t size, size_t unit);
/* A rooted v-call's size and table (gather, scatter; their plain forms as n segments of count in rank order): the
 * root's buffer b (1: gather's output, 0: scatter's input) holds counts[q] elements of `size` bytes at displs[q] - lo
 * (counts NULL: count at q * count), read at the root only; this rank's one segment on the other side is `mine`
 * bytes. v: the ranks agree on the largest segment (a non-root knows its own only, a->vagree); else every
 * segment is mine, the call's count. */
void mca_coll_gc3_vrooted(mca_coll_gc3_args_t *a, int n, int at_root, int v, int b, int count, const int *counts,
                          const int *displs, long lo, size_t size, size_t mine);
/* After the route: a side of nothing to move that the caller gave as NULL (MPI allows it) gets a pointer nothing
 * reads or writes, so that the runtime sees neither a missing buffer nor an in-place call. */
void mca_coll_gc3_vnull(mca_coll_gc3_args_t *a);
/* A blocking v-call whose argument builder said gc3 may run it: the route, alltoallv's agreement on the largest
 * segment (a->vagree: one allreduce of the previous module on host memory), the run. 1 when gc3 ran it (*rc: its MPI
 * result, the adapted buffers copied back; or the error every rank returns when a rank is out of host memory), 0
 * when every rank passes it on. */
int mca_coll_gc3_vrun(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int *rc);
/* The same for a nonblocking v-call (the route taken): started in the pipeline (its table goes with the task), an
 * alltoallv's largest segment agreed when it reaches the head of the queue; a call of nothing to move completes at
 * once. The MPI result of the start. */
int mca_coll_gc3_vstart(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, ompi_request_t **request);
/* A start of a persistent v-call (the route taken): 1 when queued (*rc its result), 0 when it has nothing to move
 * (the start runs the blocking call instead, which completes at once). */
int mca_coll_gc3_vstart_persistent(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, struct mca_coll_gc3_request_t *r,
                                   int *rc);
/* The MPI name of a call of coll, for messages: its collective's, or with per-rank counts the v-form's
 * ("alltoallv", "reduce_scatter"); of a task's call. */
static inline const char *mca_coll_gc3_call_name(int coll, const gc3_call_t *call)
{
    const gc3_coll_desc_t *d = gc3_coll_desc((gc3_coll_t)coll);
    /* (gather and scatter, rooted: their plain forms carry a table too, so it does not tell) */
    return call->segs != NULL && d->v_name != NULL && !d->rooted ? d->v_name : d->mpi_name;
}
static inline const char *mca_coll_gc3_task_name(const mca_coll_gc3_task_t *t)
{
    return mca_coll_gc3_call_name(t->coll, &t->call);
}
/* coll_gc3_vx.c: a nonblocking v-call's agreement (the head task t of the queue, m->lock held): nothing to agree
 * (MCA_COLL_GC3_VX_NONE, also once agreed), posted when it first comes here (every rank's tasks reach the
 * head in the same order), then tested. 0 while it waits; 1 when agreed (t->call.count and t->bytes set); -1
 * when the call fails on every rank (*why: a rank is out of host memory, or the agreement failed). */
enum { MCA_COLL_GC3_VX_NONE, MCA_COLL_GC3_VX_TODO, MCA_COLL_GC3_VX_POSTED };
int mca_coll_gc3_vx_advance(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, const char **why);
/* The end of a call's arguments (a v-collective's table freed). */
void mca_coll_gc3_args_end(mca_coll_gc3_args_t *a);
/* coll_gc3_fallback.c: the v-collectives where gc3 does not run them (staged on device buffers, else the
 * previous module's), blocking (request NULL) or not */
int mca_coll_gc3_allgatherv_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                   const int *rcounts, const int *displs, struct ompi_datatype_t *rdt,
                                   struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                   ompi_request_t **request);
int mca_coll_gc3_alltoallv_staged(const void *sbuf, const int *scounts, const int *sdispls, struct ompi_datatype_t *sdt,
                                  void *rbuf, const int *rcounts, const int *rdispls, struct ompi_datatype_t *rdt,
                                  struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                  ompi_request_t **request);
int mca_coll_gc3_reduce_scatter_staged(const void *sbuf, void *rbuf, const int *rcounts, struct ompi_datatype_t *dt,
                                       struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                       mca_coll_base_module_t *module, ompi_request_t **request);
/* ... and gather, scatter and their v-forms, scan and exscan */
int mca_coll_gc3_gather_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                               struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                               mca_coll_base_module_t *module, ompi_request_t **request);
int mca_coll_gc3_scatter_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf, int rcount,
                                struct ompi_datatype_t *rdt, int root, struct ompi_communicator_t *comm,
                                mca_coll_base_module_t *module, ompi_request_t **request);
int mca_coll_gc3_gatherv_staged(const void *sbuf, int scount, struct ompi_datatype_t *sdt, void *rbuf,
                                const int *rcounts, const int *displs, struct ompi_datatype_t *rdt, int root,
                                struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                ompi_request_t **request);
int mca_coll_gc3_scatterv_staged(const void *sbuf, const int *scounts, const int *displs, struct ompi_datatype_t *sdt,
                                 void *rbuf, int rcount, struct ompi_datatype_t *rdt, int root,
                                 struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                                 ompi_request_t **request);
int mca_coll_gc3_scan_staged(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt, struct ompi_op_t *op,
                             struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                             ompi_request_t **request);
int mca_coll_gc3_exscan_staged(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dt,
                               struct ompi_op_t *op, struct ompi_communicator_t *comm, mca_coll_base_module_t *module,
                               ompi_request_t **request);
/* The argument builders' common start: a zeroed record of coll's call. */
void mca_coll_gc3_args_begin(mca_coll_gc3_args_t *a, gc3_coll_t coll, int root, const char *name);
/* A buffer of the call: slot 0 send, 1 receive (user NULL or MPI_IN_PLACE: none); count elements of dt. */
void mca_coll_gc3_args_buf(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int slot, const void *user,
                           struct ompi_datatype_t *dt, size_t count, int in, int out);
/* How a call enters the route (mca_coll_gc3_route_take). */
enum { MCA_COLL_GC3_CALL_BLOCKING, MCA_COLL_GC3_CALL_NONBLOCKING, MCA_COLL_GC3_CALL_INIT };
/* coll_gc3_route.c: the route of a call gc3 may take (its argument builder said so), the same on
 * every rank: agreed over the ranks' memory kinds where it must be (the communicator's route cache,
 * gc3_route.h). 1 when gc3 runs it (a->route: CUDA or HOST; a->backend set; this rank's buffers
 * adapted: a->ad.b[i].run; a persistent init adapts nothing), 0 when Open MPI's component does
 * (GC3_ROUTE_PREV). */
int mca_coll_gc3_route_take(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int how);
/* After the call on gc3: the results copied (unpacked) back to the caller's buffers where rc is
 * success, the temporaries released; returns rc or the copy's error. */
int mca_coll_gc3_adapt_out(mca_coll_gc3_module_t *m, mca_coll_gc3_adapt_t *ad, int rc);
/* The send and receive buffers the runtime gets (NULL for MPI_IN_PLACE / none). */
static inline const void *mca_coll_gc3_run_sbuf(const mca_coll_gc3_args_t *a)
{
    return a->ad.inplace_send ? MPI_IN_PLACE : a->ad.b[0].run;
}
static inline void *mca_coll_gc3_run_rbuf(const mca_coll_gc3_args_t *a)
{
    return a->ad.b[1].run;
}
/* The communicator's route cache and temporaries go with its module. */
void mca_coll_gc3_route_fini(mca_coll_gc3_module_t *m);
/* Which buffers make a call one on device buffers (what the previous module must not see). */
typedef enum {
    MCA_COLL_GC3_BUFS_BOTH,      /* the send or the receive buffer */
    MCA_COLL_GC3_BUFS_ROOT_RECV, /* the send buffer, or the receive buffer at the root (reduce, gather) */
    MCA_COLL_GC3_BUFS_ROOT_SEND  /* the send buffer at the root, or the receive buffer (scatter) */
} mca_coll_gc3_bufs_t;
int mca_coll_gc3_device_call(mca_coll_gc3_bufs_t bufs, const void *sbuf, const void *rbuf, int root,
                             struct ompi_communicator_t *comm);

/* The component's table: one row per collective gc3 runs (coll_gc3_dispatch.c). Its
 * coll_gc3_enable_<name> parameter (registration, help text, settings hash: coll_gc3_component.c),
 * the enable check and the list of what gc3 runs in the passed-on messages come from it. Its
 * functions are mca_coll_gc3_<name>, mca_coll_gc3_i<name> and mca_coll_gc3_<name>_init
 * (coll_gc3_<name>.c), installed from MCA_COLL_GC3_INTERCEPTED (coll_gc3_colls.h). */
typedef struct {
    gc3_coll_t  coll; /* the IR's collective: rules, programs, plans (rooted or not: its descriptor) */
    const char *name; /* the coll interface's and MPI's (lower case): "reduce_scatter_block" */
    const char *when; /* what the enable parameter's help adds (NULL: nothing) */
} mca_coll_gc3_coll_t;
extern const mca_coll_gc3_coll_t mca_coll_gc3_colls[];
extern const int                 mca_coll_gc3_ncolls;
/* The row of coll (NULL: gc3 does not run it). */
const mca_coll_gc3_coll_t *mca_coll_gc3_coll(gc3_coll_t coll);
/* "allreduce, alltoall, allgather and reduce_scatter_block": what gc3 runs, for messages. */
const char *mca_coll_gc3_colls_text(void);
/* A call `name` that gc3 passes on: 1 when it is to be staged (it is on device buffers, bufs
 * saying which decide, and coll_gc3_fallback stages); 0 with *rc_p set: OMPI_SUCCESS to give it to
 * the previous module as it is (host buffers, coll_gc3_fallback=pass), or the error to return. */
int mca_coll_gc3_staged(mca_coll_gc3_bufs_t bufs, const void *sbuf, const void *rbuf, int root,
                        struct ompi_communicator_t *comm, const char *name, int *rc_p);
/* The same for a call of a collective gc3 runs that does not take gc3's route, which its argument
 * builder described (a->device: this rank passed device buffers, of those MPI makes significant here).
 * nb: a nonblocking call, which goes to the previous module's nonblocking function on every rank,
 * whatever each rank's memory (the same algorithm everywhere): when staged, the caller posts it on the
 * host copies and hands its request to mca_coll_gc3_chain. */
int mca_coll_gc3_stage_args(const mca_coll_gc3_args_t *a, struct ompi_communicator_t *comm, int nb, int *rc_p);

/* The first letter of a collective's MPI name ("allgatherv": 'A'), printed as "MPI_%c%s" with name + 1. */
static inline char mca_coll_gc3_mpi_initial(const char *name)
{
    return name[0] >= 'a' && name[0] <= 'z' ? (char)(name[0] - 'a' + 'A') : name[0];
}
/* A call gc3 passes on: says so and why at coll_gc3_verbose 2 (the communicator's rank 0); 0. */
int mca_coll_gc3_passed_on(struct ompi_communicator_t *comm, const char *coll, const char *why);
/* The same for a collective gc3 does not run ("gc3 runs allreduce, ... only"). */
int mca_coll_gc3_passed_on_not_run(struct ompi_communicator_t *comm, const char *coll);
/* A call on a communicator of one rank: nothing to exchange, Open MPI's component copies (said at verbose 2);
 * 0. */
int mca_coll_gc3_one_rank(struct ompi_communicator_t *comm, const char *coll);
/* What every collective gc3 runs needs (a backend for the buffers, the collective enabled, a count
 * above 0): 1, or 0 after saying why not. */
int mca_coll_gc3_args_usable(const mca_coll_gc3_module_t *m, const mca_coll_gc3_args_t *a, const char *call,
                             gc3_coll_t coll, long count);
/* A reduction's datatype and op as gc3's (a->dtype, a->count, a->op, from count elements of dt): 1, or 0
 * after saying why the call `name` is passed on (a user-defined or unsupported op or datatype). */
int mca_coll_gc3_args_reduction(const mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, const char *name,
                                struct ompi_datatype_t *dt, size_t count, struct ompi_op_t *op);

/* coll_gc3_request.c: the pipeline. Run `coll` through the runtime: 1 when gc3 took the call
 * (then *rc is its MPI result), 0 when the caller must pass it on. It waits for the communicator's
 * set-up when there is one to do (a blocking call may). */
int mca_coll_gc3_try_run(mca_coll_gc3_module_t *m, gc3_coll_t coll, const mca_coll_gc3_args_t *a, const void *sbuf,
                         void *rbuf, int *rc);
/* The same, started (gc3 takes it: mca_coll_gc3_route_take said so): *request completes through Open
 * MPI's progress, and the call's adapted buffers (a->ad) are copied back and released then. Never
 * waits for another rank: a call whose plan is not set up yet waits in the pipeline, and one gc3
 * has no plan for runs on the host-staged exchange (coll_gc3_oob.c). reuse: a persistent request
 * to start (NULL: a new one). Returns the MPI result of the start. */
int mca_coll_gc3_try_start(mca_coll_gc3_module_t *m, gc3_coll_t coll, mca_coll_gc3_args_t *a, const void *sbuf,
                           void *rbuf, ompi_request_t **request, struct mca_coll_gc3_request_t *reuse);
/* The request of such a call: complete when the previous module's request `inner` is, after the
 * copies back (b[0..n): the staged buffers, mca_coll_gc3_stage_in done). rc: the previous module's
 * start's result (an error: the copies released, rc returned). */
int mca_coll_gc3_chain(mca_coll_gc3_module_t *m, mca_coll_gc3_stage_t *b, int n, int rc, ompi_request_t *inner,
                       ompi_request_t **request);
/* A persistent init that goes to the previous module's (host memory on every rank, as agreed). */
int mca_coll_gc3_init_passes(const mca_coll_gc3_args_t *a);
/* Set up (in the pipeline, without waiting) the plan a call of these buffers would use. */
void mca_coll_gc3_plan_ahead(mca_coll_gc3_module_t *m, gc3_coll_t coll, const mca_coll_gc3_args_t *a, const void *sbuf);

/* How a start of a persistent request runs its call (coll_gc3_<collective>.c). */
typedef struct {
    /* 1 when gc3 took the start (*rc: its result; on success the request is queued), 0 when not */
    int (*on_plan)(struct mca_coll_gc3_request_t *r, int *rc);
    int (*blocking)(struct mca_coll_gc3_request_t *r); /* the blocking call instead, done at once */
} mca_coll_gc3_pcoll_t;

/* The layout of Open MPI's ompi_coll_base_nbc_request_t (coll_base_util.h, the same in 4.1 and 5.0),
 * whose header Debian's development package cannot compile (it includes Fortran headers the package
 * lacks): a request, then the callback Open MPI puts around its completion or free, its data, and the
 * two objects it retains. Zeroed when the request is made. */
typedef struct {
    ompi_request_t super;
    void          *cb;
    void          *cb_data;
    void          *objs[2];
} mca_coll_gc3_nbc_request_t;

/* A request of a call gc3 runs. Persistent requests (coll_gc3_persistent.c) keep their call,
 * bound once. */
typedef struct mca_coll_gc3_request_t {
    /* Open MPI's nonblocking-collective request: MPI_Ibcast and the others write its fields after
     * the call, to retain a derived datatype or a user-defined op until the request completes (or,
     * persistent, is freed) */
    union {
        ompi_request_t             super;
        mca_coll_gc3_nbc_request_t nbc;
    };
    mca_coll_gc3_module_t      *module;
    mca_coll_gc3_task_t         task; /* the call in the pipeline (persistent: the one started last) */
    int                         coll;
    const mca_coll_gc3_pcoll_t *pcoll; /* persistent */
    const void                 *sbuf;
    void                       *rbuf;
    int                         scount, rcount;
    struct ompi_datatype_t     *sdtype, *rdtype;
    struct ompi_op_t           *op;
    int                         root;   /* a rooted collective's, else -1 */
    int                        *vec[4]; /* a persistent v-call's scounts, sdispls, rcounts, rdispls, copied (NULL:
                                         * none; one allocation at vec[0]'s place, freed with the request) */
} mca_coll_gc3_request_t;
OBJ_CLASS_DECLARATION(mca_coll_gc3_request_t);

/* Persistent requests freed by the application, released now (also when a communicator's module goes). */
void mca_coll_gc3_graveyard_release(void);
/* A persistent request of coll on m, inactive and complete, its call to be filled in. */
mca_coll_gc3_request_t *mca_coll_gc3_request_persistent(mca_coll_gc3_module_t *m, int coll);
void                    mca_coll_gc3_quiesce(mca_coll_gc3_module_t *m); /* until nothing of m is queued or running */
int                     mca_coll_gc3_progress(void);
/* coll_gc3_report.c: messages kept whole. *text (NULL, or a string of this function: freed) becomes
 * the new text, NULL when out of host memory (MCA_COLL_GC3_TEXT says so then). Text of a known bound
 * goes into the module's fixed arrays with gc3_snprintf_cut, which marks a cut one. */
void mca_coll_gc3_set_text(char **text, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define MCA_COLL_GC3_TEXT(t) ((t) != NULL ? (t) : "(out of host memory)")
/* Room for a message that names a path (a rules file, a program) and a line of words. */
#define MCA_COLL_GC3_WHY_BYTES (PATH_MAX + 512)
/* coll_gc3_report.c: the error record of a call that fails: rank, what failed and why, on which
 * communicator (and whether calls in flight held more thread blocks than the GPU runs at once). */
void mca_coll_gc3_report_failure(mca_coll_gc3_module_t *m, const char *call, const char *why);
/* The blocks in flight (`blocks`) exceed this rank's share of its GPU with coll_gc3_yield_us 0: said at verbose 1
 * the first time, and in every failure record after. */
void mca_coll_gc3_report_over_share(mca_coll_gc3_module_t *m, int blocks);
/* Verbose 2: whether the plan's last call left data in place (zero-copy) and for how many peers, or why
 * not; said when it changes. */
void mca_coll_gc3_report_zc(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
/* coll_gc3_breakdown: the host's clock now (ns), 0 when it is off */
uint64_t mca_coll_gc3_breakdown_now(void);
/* coll_gc3_breakdown: a blocking call that ran on plan s (entered at a->entry_ns, its plan found at
 * found_ns) returns now: its phases are added to the run of its collective, size and kind; a call of
 * another one first ends the run (printed, rank 0) */
void mca_coll_gc3_breakdown_add(mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s,
                                const mca_coll_gc3_args_t *a, uint64_t found_ns);
/* the run being summed ends (printed by rank 0 of the communicator) */
void mca_coll_gc3_breakdown_flush(mca_coll_gc3_module_t *m);

/* coll_gc3_persistent.c: a persistent request of a collective gc3 runs, its call bound (the
 * datatypes and op retained); then, *request set, the plan its starts will use set up ahead when
 * gc3 runs the call (gc3_runs), without waiting. */
int mca_coll_gc3_persistent(mca_coll_gc3_module_t *m, gc3_coll_t coll, const mca_coll_gc3_pcoll_t *pcoll,
                            const void *sbuf, void *rbuf, int scount, struct ompi_datatype_t *sdtype, int rcount,
                            struct ompi_datatype_t *rdtype, struct ompi_op_t *op, int gc3_runs,
                            const mca_coll_gc3_args_t *a, ompi_request_t **request);

/* A persistent v-call's vectors (n ints each; NULL: the collective has none) copied into its request. */
int mca_coll_gc3_persistent_vectors(ompi_request_t *request, int n, const int *const v[4]);

/* coll_gc3_setup.c: the set-up, in phases none of which waits for another rank (m->lock held). */
void mca_coll_gc3_setup_exec(mca_coll_gc3_module_t *m, gc3_backend_t backend); /* queue its job (once) */
/* Queue the set-up of plan entry s (new) behind the jobs before it (coll_gc3_entry.c does, once). */
void mca_coll_gc3_setup_plan(mca_coll_gc3_module_t *m, gc3_backend_t backend, mca_coll_gc3_plan_entry_t *s);
/* Advance the job under way (and start the next); 1 when something changed. A phase whose
 * exchange exceeds coll_gc3_timeout makes the communicator unusable (reported). */
int  mca_coll_gc3_setup_advance(mca_coll_gc3_module_t *m);
void mca_coll_gc3_setup_fini(mca_coll_gc3_module_t *m);
/* coll_gc3_select.c: the rules, loaded once per process. */
gc3_rules_t *mca_coll_gc3_rules(void);
/* coll_gc3_entry.c: a communicator's plan entries. The entry of a call, found or made (a new one is queued for
 * set-up), or NULL when no rule matches (*why). */
mca_coll_gc3_plan_entry_t *mca_coll_gc3_entry(mca_coll_gc3_module_t *m, int coll, int root, size_t bytes, int inplace,
                                              gc3_backend_t backend, char *why, size_t why_len);
void mca_coll_gc3_entries_release(mca_coll_gc3_module_t *m); /* every entry and its plan (nothing in flight) */
/* The thread blocks a call on s holds on this rank's GPU (cuda backend; 0 elsewhere). */
static inline int mca_coll_gc3_entry_blocks(const mca_coll_gc3_plan_entry_t *s)
{
    return s->backend == GC3_BACKEND_CUDA ? s->blocks : 0;
}
/* Can a call take s now (m->lock held)? Taken by the call, given back when it ends. */
int  mca_coll_gc3_entry_free(const mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s);
void mca_coll_gc3_entry_take(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
void mca_coll_gc3_entry_give(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
/* A call on s starts on its GPU, ends: the process's account of blocks in flight. */
void mca_coll_gc3_blocks_take(mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s);
void mca_coll_gc3_blocks_give(const mca_coll_gc3_plan_entry_t *s);
/* coll_gc3_agree.c: a phase's exchange of this rank's record m->setup.xsend (bytes; freed here) into
 * m->setup.xrecv (every rank's): 0 when posted; release: m->setup.xrecv once read (or the exchange's, pending). */
int  mca_coll_gc3_agree_post(mca_coll_gc3_module_t *m, size_t bytes);
void mca_coll_gc3_agree_release(mca_coll_gc3_module_t *m);
/* What every rank says before gc3 uses something collectively: whether it is ready, a hash of
 * what it built (plans, settings: different only when the ranks' settings are), and for a
 * plan's creation the key of the call (collective, bytes, in place, backend, root: different only in
 * an erroneous program). */
typedef struct {
    uint64_t ok, hash, key;
    uint64_t cap; /* a plan's AGREE: the FIFO cap this rank can take it with (coll_gc3_plan.c) */
} mca_coll_gc3_card_t;
enum { MCA_COLL_GC3_AGREE_OK, MCA_COLL_GC3_AGREE_NOT_READY, MCA_COLL_GC3_AGREE_DIFFERENT, MCA_COLL_GC3_AGREE_MISMATCH };
/* The verdict on all ranks' cards, the same on every rank (peer: the rank that differs). */
int      mca_coll_gc3_verdict(const mca_coll_gc3_card_t *v, int n, uint64_t key, int *peer);
void     mca_coll_gc3_warn_disagree(mca_coll_gc3_module_t *m, const char *what, int peer);
uint64_t mca_coll_gc3_settings_hash(void); /* the selection settings (rules and parameters) */
/* coll_gc3_shape.c: SHAPE, post this rank's card (0 when posted); done: everybody's are in m->setup.xrecv. */
int  mca_coll_gc3_shape_post(mca_coll_gc3_module_t *m, gc3_backend_t backend);
void mca_coll_gc3_shape_done(mca_coll_gc3_module_t *m, gc3_backend_t backend);
/* coll_gc3_plan.c: AGREE, post this rank's card of s (0 when posted); agreed: the verdict, and the
 * runtime's preparation posted (1) or the plan's end (0); prepared: 0 while the preparation goes
 * on, then CONNECT's card posted (1) or not (-1); connected: CONNECT's verdict, the plan's end. */
int  mca_coll_gc3_plan_post(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
int  mca_coll_gc3_plan_agreed(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
int  mca_coll_gc3_plan_prepared(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
void mca_coll_gc3_plan_connected(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s);
/* Memory: the process's budget for gc3 (coll_gc3_memory_budget or its default). */
uint64_t mca_coll_gc3_budget(const mca_coll_gc3_module_t *m, int backend);
/* The first verbose line of a nonblocking or persistent call on a plan or without one. */
void mca_coll_gc3_report_nonblocking(mca_coll_gc3_module_t *m, const mca_coll_gc3_task_t *t, const char *why);

/* coll_gc3_oob.c: gc3's point-to-point messages. The out-of-band interface of the runtime
 * (gc3_oob_t, ctx = the module): an allgather in a ring, one pending per communicator. */
int    mca_coll_gc3_oob_iallgather(void *ctx, const void *send, void *recv, size_t bytes, void **req_p);
int    mca_coll_gc3_oob_test(void *ctx, void *req);
double mca_coll_gc3_now(void); /* monotonic seconds */
/* The host-staged exchange: a call gc3 takes but has no plan for, on host copies of its buffers,
 * every rank's data (block q of an input of one block per rank: to rank q) sent to every other rank
 * (a reducing collective: reduced in rank order, the same result
 * everywhere). start: OMPI_SUCCESS when posted; test: 1 with *rc when over (timeout included). */
int mca_coll_gc3_hsx_start(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t);
int mca_coll_gc3_hsx_test(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, int *rc);

/* coll_gc3_stage.c: a call passed on with its device buffers copied through host memory, written
 * once for every signature: describe the call's buffers, mca_coll_gc3_stage_in, call the previous
 * module with each buffer's base, mca_coll_gc3_stage_out. */
/* Host copies of the n buffers' device memory (copied in where b[i].in); always followed by
 * mca_coll_gc3_stage_out, which copies back (where b[i].out and rc is success), frees and returns rc
 * or the copy's error. */
static inline mca_coll_gc3_stage_t mca_coll_gc3_stage_buf(void *user, struct ompi_datatype_t *dt, size_t count, int in,
                                                          int out)
{
    mca_coll_gc3_stage_t b = { user, dt, count, in, out, NULL, (char *)user };
    return b;
}
int mca_coll_gc3_stage_in(mca_coll_gc3_stage_t *b, int n);
int mca_coll_gc3_stage_out(mca_coll_gc3_stage_t *b, int n, int rc);

END_C_DECLS

#endif
