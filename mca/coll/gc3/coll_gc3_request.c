/* coll/gc3: the pipeline of a communicator's calls, and the requests of the calls gc3 runs.
 *
 * A call gc3 takes becomes a task in its communicator's queue, in call order. The head task starts
 * as soon as it can: on its plan when the plan is set up and no earlier call runs on it, on the
 * host-staged exchange (coll_gc3_oob.c) when gc3 has no plan for it, and a blocking call is handed
 * back to its caller (who runs it on the plan, or passes it on). What it waits for (the set-up,
 * coll_gc3_setup.c; an earlier call on the same plan) is advanced by the calls on the communicator
 * and by Open MPI's progress engine (mca_coll_gc3_progress), never by waiting for another rank: a
 * nonblocking or persistent start only queues its task and advances what can advance at once.
 * Blocking calls wait for their task, advancing everything, bounded by coll_gc3_timeout.
 *
 * Which way a call goes (gc3's pipeline or passed on) is decided from the call alone (buffers,
 * datatype, op, size, settings that the ranks agree on); whether it then runs on a plan is decided
 * from the set-up's exchanged records: every rank decides alike. Calls of different plans and of
 * different communicators run side by side; each request completes when its call is over. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/runtime/opal_progress.h"

OBJ_CLASS_INSTANCE(mca_coll_gc3_request_t, ompi_request_t, NULL, NULL);

/* the modules with something queued, running or being set up; each holds a reference on its
 * module and communicator (a communicator freed with calls in flight stays until they are over) */
static struct {
    pthread_mutex_t         lock;
    mca_coll_gc3_module_t **m;
    int                     n, cap;
} gc3_active = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

/* ---------------------------------------------------------------- requests */

/* freed persistent requests, released at the next request's creation (or at the end) */
static struct {
    pthread_mutex_t          lock;
    mca_coll_gc3_request_t **r;
    int                      n, cap;
} gc3_graveyard = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };

static void gc3_graveyard_add(mca_coll_gc3_request_t *r)
{
    pthread_mutex_lock(&gc3_graveyard.lock);
    if (gc3_graveyard.n == gc3_graveyard.cap) {
        int                      ncap = gc3_graveyard.cap ? 2 * gc3_graveyard.cap : 16;
        mca_coll_gc3_request_t **n    = realloc(gc3_graveyard.r, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            pthread_mutex_unlock(&gc3_graveyard.lock);
            return; /* (out of memory: the request is kept) */
        }
        gc3_graveyard.r   = n;
        gc3_graveyard.cap = ncap;
    }
    gc3_graveyard.r[gc3_graveyard.n++] = r;
    pthread_mutex_unlock(&gc3_graveyard.lock);
}

void mca_coll_gc3_graveyard_release(void)
{
    mca_coll_gc3_request_t **r;
    int                      n;

    if (gc3_graveyard.n == 0) {
        return;
    }
    pthread_mutex_lock(&gc3_graveyard.lock);
    r                 = gc3_graveyard.r;
    n                 = gc3_graveyard.n;
    gc3_graveyard.r   = NULL;
    gc3_graveyard.n   = 0;
    gc3_graveyard.cap = 0;
    pthread_mutex_unlock(&gc3_graveyard.lock);
    for (int i = 0; i < n; i++) {
        OBJ_RELEASE(r[i]);
    }
    free(r);
}

static int mca_coll_gc3_request_free(ompi_request_t **req)
{
    mca_coll_gc3_request_t *r = (mca_coll_gc3_request_t *)*req;

    if (r->super.req_persistent) {
        if (!REQUEST_COMPLETE(&r->super)) {
            return MPI_ERR_REQUEST; /* an active persistent request cannot be freed */
        }
        if (r->sdtype != NULL)
            OBJ_RELEASE(r->sdtype);
        if (r->rdtype != NULL)
            OBJ_RELEASE(r->rdtype);
        if (r->op != NULL)
            OBJ_RELEASE(r->op);
        free(r->vec[0] != NULL ? r->vec[0] : r->vec[2]);
    }
    OMPI_REQUEST_FINI(*req);
    if (r->super.req_persistent) {
        /* Open MPI may read the request after this function (its objects retained for a persistent
         * collective are released by the free callback it put around this one): released later */
        gc3_graveyard_add(r);
    } else {
        OBJ_RELEASE(*req); /* the caller's reference; the pipeline keeps its own until completion */
    }
    *req = MPI_REQUEST_NULL;
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_request_cancel(ompi_request_t *r, int complete)
{
    (void)r;
    (void)complete;
    return MPI_ERR_REQUEST; /* a collective cannot be cancelled */
}

static mca_coll_gc3_request_t *mca_coll_gc3_request_new(mca_coll_gc3_module_t *m, int coll, bool persistent)
{
    mca_coll_gc3_request_t *r;

    mca_coll_gc3_graveyard_release();
    r = OBJ_NEW(mca_coll_gc3_request_t);

    if (r == NULL) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&r->super, persistent);
    r->nbc.cb      = NULL; /* nothing retained by Open MPI yet */
    r->nbc.cb_data = NULL;
    r->nbc.objs[0] = r->nbc.objs[1] = NULL;
    /* Open MPI raises an error of a request of type OMPI_REQUEST_COLL on MPI_COMM_WORLD's error
     * handler; MPI wants the communicator's (an application that set MPI_ERRORS_RETURN there gets the
     * error from MPI_Wait instead of an abort): the type whose errors go to req_mpi_object.comm */
    r->super.req_type              = OMPI_REQUEST_PML;
    r->super.req_state             = OMPI_REQUEST_ACTIVE;
    r->super.req_free              = mca_coll_gc3_request_free;
    r->super.req_cancel            = mca_coll_gc3_request_cancel;
    r->super.req_mpi_object.comm   = m->comm;
    r->super.req_status.MPI_ERROR  = MPI_SUCCESS;
    r->super.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->super.req_status.MPI_TAG    = MPI_ANY_TAG;
    r->module                      = m;
    r->coll                        = coll;
    r->pcoll                       = NULL;
    r->root                        = -1;
    memset(&r->task, 0, sizeof(r->task));
    r->sbuf = r->rbuf = NULL;
    r->scount = r->rcount = 0;
    r->sdtype = r->rdtype = NULL;
    r->op                 = NULL;
    r->vec[0] = r->vec[1] = r->vec[2] = r->vec[3] = NULL;
    return r;
}

mca_coll_gc3_request_t *mca_coll_gc3_request_persistent(mca_coll_gc3_module_t *m, int coll)
{
    mca_coll_gc3_request_t *r = mca_coll_gc3_request_new(m, coll, true);
    if (r != NULL) {
        r->super.req_state    = OMPI_REQUEST_INACTIVE;
        r->super.req_complete = REQUEST_COMPLETED; /* MPI_Wait on it before a start returns at once */
    }
    return r;
}

/* Complete the requests of the tasks in `done` (linked by next): outside every gc3 lock, since a
 * completion may start another call on a communicator. */
static void mca_coll_gc3_complete(mca_coll_gc3_task_t *done)
{
    while (done != NULL) {
        mca_coll_gc3_task_t    *t = done;
        mca_coll_gc3_request_t *r = t->req;
        done                      = t->next;
        t->next                   = NULL;
        t->rc                     = mca_coll_gc3_adapt_out(r->module, &t->ad, t->rc);
        free(t->segs); /* a nonblocking v-call's table */
        t->segs      = NULL;
        t->call.segs = NULL;
        if (t->nstage > 0) {
            t->rc     = mca_coll_gc3_stage_out(t->stage, t->nstage, t->rc); /* the copies back, released */
            t->nstage = 0;
        }
        r->super.req_status.MPI_ERROR = t->rc == OMPI_SUCCESS                    ? MPI_SUCCESS
                                        : t->rc == MPI_ERR_UNSUPPORTED_OPERATION ? t->rc
                                                                                 : MPI_ERR_OTHER;
        ompi_request_complete(&r->super, true);
        OBJ_RELEASE(r); /* the pipeline's reference */
    }
}

/* ---------------------------------------------------------------- the pipeline (m->lock held) */

static void mca_coll_gc3_task_init(mca_coll_gc3_task_t *t, gc3_coll_t coll, const mca_coll_gc3_args_t *a,
                                   const void *sbuf, void *rbuf)
{
    memset(t, 0, sizeof(*t));
    t->coll    = coll;
    t->backend = (gc3_backend_t)a->backend;
    t->bytes   = a->bytes;
    t->root    = a->root;
    /* the plan's kind, the same on every rank: a rooted collective's other ranks cannot know whether the
     * root calls in place (reduce, gather, scatter: their programs serve both kinds, gc3_rule_program), bcast
     * is one buffer */
    t->inplace      = gc3_coll_desc(coll)->rooted ? coll == GC3_COLL_BCAST : sbuf == MPI_IN_PLACE;
    t->device       = a->backend == GC3_BACKEND_CUDA;
    t->call.sendbuf = sbuf == MPI_IN_PLACE ? NULL : sbuf;
    t->call.recvbuf = rbuf;
    t->call.count   = a->count;
    t->call.dtype   = a->dtype;
    t->call.op      = a->op;
    t->call.stream  = NULL;
    t->call.segs    = a->segs;
    t->state        = MCA_COLL_GC3_TASK_QUEUED;
}

static int mca_coll_gc3_unusable(mca_coll_gc3_module_t *m, int coll)
{
    if (m->unusable) {
        opal_output(0,
                    "coll:gc3: comm %s rank %d: %s fails: gc3 marked this communicator unusable after its ranks "
                    "could not agree on an earlier call",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc(coll)->mpi_name);
    }
    return m->unusable;
}

static void mca_coll_gc3_enqueue(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t)
{
    t->next = NULL;
    if (m->pipe.tail != NULL) {
        m->pipe.tail->next = t;
    } else {
        m->pipe.head = t;
    }
    m->pipe.tail = t;
}

static void mca_coll_gc3_pop(mca_coll_gc3_module_t *m)
{
    m->pipe.head = m->pipe.head->next;
    if (m->pipe.head == NULL) {
        m->pipe.tail = NULL;
    }
}

/* A task is over: a blocking caller sees it, a request goes to `done`, a plan-ahead task goes. */
static void mca_coll_gc3_task_end(mca_coll_gc3_task_t *t, int rc, mca_coll_gc3_task_t **done)
{
    if (t->ahead) {
        free(t);
        return;
    }
    t->rc    = rc;
    t->state = MCA_COLL_GC3_TASK_DONE;
    if (!t->blocking) {
        t->next = *done;
        *done   = t;
    }
}

void mca_coll_gc3_report_nonblocking(mca_coll_gc3_module_t *m, const mca_coll_gc3_task_t *t, const char *why)
{
    const char *kind = t->req != NULL && t->req->super.req_persistent ? "persistent" : "nonblocking";
    if (why == NULL) {
        mca_coll_gc3_verbose_once(1, m->comm,
                                  "coll:gc3: comm %s: %s %s runs on gc3's %s plan, completed by MPI progress",
                                  m->comm->c_name, kind, mca_coll_gc3_task_name(t), t->entry->program->name);
    } else {
        mca_coll_gc3_verbose_once(
            1, m->comm,
            "coll:gc3: comm %s: %s %s of %zu bytes has no gc3 plan (%s): it runs on gc3's host-staged "
            "exchange, completed by MPI progress",
            m->comm->c_name, kind, mca_coll_gc3_task_name(t), t->bytes, why);
    }
}

/* The head task has no plan (why): a blocking one goes back to its caller, which passes it on; a
 * nonblocking one runs on the host-staged exchange (or fails, coll_gc3_fallback=error). */
static void mca_coll_gc3_no_plan(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, const char *why,
                                 mca_coll_gc3_task_t **done)
{
    int rc = OMPI_SUCCESS;

    mca_coll_gc3_pop(m);
    if (t->ahead) {
        mca_coll_gc3_task_end(t, OMPI_SUCCESS, done);
        return;
    }
    if (t->blocking) {
        t->state = MCA_COLL_GC3_TASK_PASS;
        return;
    }
    if (t->device && mca_coll_gc3_fallback(m->comm, 1) == MCA_COLL_GC3_FALLBACK_ERROR) {
        (void)mca_coll_gc3_stage_call(m->comm, mca_coll_gc3_task_name(t), &rc); /* reports it */
        mca_coll_gc3_task_end(t, rc, done);
        return;
    }
    if (t->entry != NULL ? !t->entry->nb_seen : !(m->pipe.staged_seen & (1 << t->coll))) {
        mca_coll_gc3_report_nonblocking(m, t, why); /* once per plan, or per collective */
        if (t->entry != NULL) {
            t->entry->nb_seen = 1;
        } else {
            m->pipe.staged_seen |= 1 << t->coll;
        }
    }
    rc = mca_coll_gc3_hsx_start(m, t);
    if (rc != OMPI_SUCCESS) {
        mca_coll_gc3_report_failure(m, mca_coll_gc3_task_name(t), "the host-staged exchange could not start");
        mca_coll_gc3_task_end(t, rc, done);
        return;
    }
    t->state   = MCA_COLL_GC3_TASK_STAGED;
    t->next         = m->pipe.running;
    m->pipe.running = t;
}

enum { GC3_HEAD_WAITS, GC3_HEAD_ENDED, GC3_HEAD_READY };

/* The head task whose plan entry is known: it waits (the plan is being set up, or an earlier call
 * runs on it), ended (off the queue: the call fails, or runs without a plan) or is ready. */
static int mca_coll_gc3_head_on_entry(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, mca_coll_gc3_task_t **done)
{
    mca_coll_gc3_plan_entry_t *s = t->entry;

    if (s->state == MCA_COLL_GC3_ENTRY_BUILDING) {
        return GC3_HEAD_WAITS;
    }
    if (s->state == MCA_COLL_GC3_ENTRY_FAILED && s->fail_call) {
        s->fail_call = 0; /* this call fails (the ranks differ on it); a consistent one builds it again */
        s->state     = MCA_COLL_GC3_ENTRY_NEW;
        mca_coll_gc3_pop(m);
        mca_coll_gc3_task_end(t, OMPI_ERROR, done); /* reported with the agreement */
        return GC3_HEAD_ENDED;
    }
    if (s->state == MCA_COLL_GC3_ENTRY_FAILED) {
        mca_coll_gc3_no_plan(m, t, MCA_COLL_GC3_TEXT(s->why), done);
        return GC3_HEAD_ENDED;
    }
    /* an earlier call runs on this plan (or on another plan of its FIFO pool) */
    return mca_coll_gc3_entry_free(m, s) ? GC3_HEAD_READY : GC3_HEAD_WAITS;
}

/* Where the head task stands (GC3_HEAD_*): the communicator's shape first, then its plan entry.
 * *changed: its plan entry was found or made. */
static int mca_coll_gc3_head(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, mca_coll_gc3_task_t **done, int *changed)
{
    const gc3_backend_t b = t->backend;
    char                why[MCA_COLL_GC3_WHY_BYTES];

    if (m->unusable) {
        mca_coll_gc3_pop(m);
        mca_coll_gc3_task_end(t, OMPI_ERROR, done); /* the reason was reported */
        return GC3_HEAD_ENDED;
    }
    if (t->vstate != MCA_COLL_GC3_VX_NONE) { /* a nonblocking alltoallv: its largest segment agreed first */
        const char *vwhy;
        const int   v = mca_coll_gc3_vx_advance(m, t, &vwhy);
        if (v == 0) {
            return GC3_HEAD_WAITS;
        }
        *changed = 1;
        if (v < 0 || t->call.count == 0) { /* (every rank alike) */
            if (v < 0) {
                mca_coll_gc3_report_failure(m, mca_coll_gc3_task_name(t), vwhy);
            }
            mca_coll_gc3_pop(m);
            mca_coll_gc3_task_end(t, v < 0 ? OMPI_ERROR : OMPI_SUCCESS, done);
            return GC3_HEAD_ENDED;
        }
        if (mca_coll_gc3_above_max_bytes(t->bytes)) {
            mca_coll_gc3_no_plan(m, t, "above coll_gc3_max_bytes", done); /* (its host-staged exchange) */
            return GC3_HEAD_ENDED;
        }
    }
    mca_coll_gc3_setup_exec(m, b);
    if (m->exec_state[b] == MCA_COLL_GC3_EXEC_SETTING) {
        return GC3_HEAD_WAITS; /* the communicator's shape is being exchanged */
    }
    if (m->exec_state[b] == MCA_COLL_GC3_EXEC_UNUSABLE) {
        mca_coll_gc3_no_plan(m, t, m->exec_why[b][0] ? m->exec_why[b] : "no executor", done);
        return GC3_HEAD_ENDED;
    }
    if (t->entry == NULL) {
        t->entry = mca_coll_gc3_entry(m, t->coll, t->root, t->bytes, t->inplace, b, why, sizeof(why));
        *changed = 1;
        if (t->entry == NULL) {
            mca_coll_gc3_no_plan(m, t, why, done);
            return GC3_HEAD_ENDED;
        }
    }
    if (t->ahead) { /* its plan is queued for set-up: nothing else to wait for */
        mca_coll_gc3_pop(m);
        mca_coll_gc3_task_end(t, OMPI_SUCCESS, done);
        return GC3_HEAD_ENDED;
    }
    return mca_coll_gc3_head_on_entry(m, t, done);
}

/* A call starts on its plan (a plan for every root: under the call's root first). */
static gc3_status_t mca_coll_gc3_plan_start(mca_coll_gc3_plan_entry_t *s, const gc3_call_t *call, int root,
                                            gc3_diag_t *diag)
{
    gc3_status_t st = s->root == MCA_COLL_GC3_ROOT_ANY ? gc3_plan_root(s->plan, root, diag) : GC3_OK;
    return st == GC3_OK ? gc3_exec_start(s->plan, call, diag) : st;
}

/* A task off the queue, its plan taken (mca_coll_gc3_entry_take): a blocking one goes back to its caller, which
 * runs it; a nonblocking one starts. */
static void mca_coll_gc3_start_on_plan(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, mca_coll_gc3_task_t **done)
{
    mca_coll_gc3_plan_entry_t *s = t->entry;
    gc3_diag_t                 diag;
    gc3_status_t               st;

    if (t->blocking) {
        t->state = MCA_COLL_GC3_TASK_GO;
        return;
    }
    gc3_diag_init(&diag);
    mca_coll_gc3_blocks_take(m, s);
    st = mca_coll_gc3_plan_start(s, &t->call, t->root, &diag);
    if (st != GC3_OK) {
        char call[64];
        mca_coll_gc3_blocks_give(s);
        gc3_snprintf_cut(call, sizeof(call), "nonblocking %s", mca_coll_gc3_task_name(t));
        mca_coll_gc3_report_failure(m, call, diag.count ? diag.msgs[0] : gc3_status_string(st));
        mca_coll_gc3_entry_give(m, s);
        mca_coll_gc3_task_end(t, OMPI_ERROR, done);
    } else {
        if (!s->nb_seen) {
            s->nb_seen = 1;
            mca_coll_gc3_report_nonblocking(m, t, NULL);
        }
        mca_coll_gc3_report_zc(m, s);
        t->state   = MCA_COLL_GC3_TASK_RUNNING;
        t->next         = m->pipe.running;
        m->pipe.running = t;
    }
    gc3_diag_cleanup(&diag);
}

/* Start what can start, in call order. 1 when something changed. */
static int mca_coll_gc3_start_queued(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t **done)
{
    mca_coll_gc3_task_t *t;
    int                  changed = 0;

    while ((t = m->pipe.head) != NULL) {
        const int head = mca_coll_gc3_head(m, t, done, &changed);
        if (head == GC3_HEAD_WAITS) {
            break;
        }
        changed = 1;
        if (head == GC3_HEAD_READY) {
            mca_coll_gc3_pop(m);
            mca_coll_gc3_entry_take(m, t->entry);
            mca_coll_gc3_start_on_plan(m, t, done);
        }
    }
    return changed;
}

/* Test what runs; 1 when something ended. */
static int mca_coll_gc3_test_running(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t **done)
{
    mca_coll_gc3_task_t **pp      = &m->pipe.running, *t;
    int                   changed = 0;

    while ((t = *pp) != NULL) {
        int rc = OMPI_SUCCESS, over = 0;
        if (t->state == MCA_COLL_GC3_TASK_RUNNING) {
            gc3_diag_t   diag;
            gc3_status_t st;
            gc3_diag_init(&diag);
            st = gc3_exec_test(t->entry->plan, &over, &diag);
            if (over) {
                mca_coll_gc3_entry_give(m, t->entry);
                mca_coll_gc3_blocks_give(t->entry);
                if (st != GC3_OK) {
                    char call[64];
                    gc3_snprintf_cut(call, sizeof(call), "nonblocking %s", mca_coll_gc3_task_name(t));
                    mca_coll_gc3_report_failure(m, call, diag.count ? diag.msgs[0] : gc3_status_string(st));
                    rc = OMPI_ERROR;
                }
            }
            gc3_diag_cleanup(&diag);
        } else if (t->state == MCA_COLL_GC3_TASK_CHAINED) {
            over = REQUEST_COMPLETE(t->inner); /* (the previous module's progress advances it) */
            if (over) {
                rc = t->inner->req_status.MPI_ERROR == MPI_SUCCESS ? OMPI_SUCCESS : t->inner->req_status.MPI_ERROR;
                ompi_request_free(&t->inner);
            }
        } else {
            over = mca_coll_gc3_hsx_test(m, t, &rc);
        }
        if (!over) {
            pp = &t->next;
            continue;
        }
        *pp = t->next;
        mca_coll_gc3_task_end(t, rc, done);
        changed = 1;
    }
    return changed;
}

static int mca_coll_gc3_idle(const mca_coll_gc3_module_t *m)
{
    return m->pipe.head == NULL && m->pipe.running == NULL && m->setup.njobs == 0;
}

/* Everything of m that can move, moves. m->lock held; the CUDA device of m's executor is current
 * meanwhile (progress may run in any thread of the process). */
static void mca_coll_gc3_advance(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t **done)
{
    int changed, dev = m->device >= 0 ? gc3_gpu_current() : -1;

    if (dev >= 0 && dev != m->device) {
        gc3_gpu_select(m->device);
    }
    do {
        changed = mca_coll_gc3_test_running(m, done);
        changed |= mca_coll_gc3_setup_advance(m);
        changed |= mca_coll_gc3_start_queued(m, done);
    } while (changed);
    if (dev >= 0 && dev != m->device) {
        gc3_gpu_select(dev);
    }
}

/* m goes on the progress list (when it has something to do and is not there). m->lock held:
 * returns whether the caller must add it once it released the lock. */
static int mca_coll_gc3_needs_progress(mca_coll_gc3_module_t *m)
{
    if (mca_coll_gc3_idle(m) || m->pipe.active) {
        return 0;
    }
    m->pipe.active = 1;
    return 1;
}

static void mca_coll_gc3_activate(mca_coll_gc3_module_t *m)
{
    pthread_mutex_lock(&gc3_active.lock);
    if (gc3_active.n == gc3_active.cap) {
        int                     ncap = gc3_active.cap ? 2 * gc3_active.cap : 16;
        mca_coll_gc3_module_t **n    = realloc(gc3_active.m, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            pthread_mutex_unlock(&gc3_active.lock);
            opal_output(0, "coll:gc3: out of host memory: calls of comm %s may only advance when waited for",
                        m->comm->c_name);
            return;
        }
        gc3_active.m   = n;
        gc3_active.cap = ncap;
    }
    OBJ_RETAIN(m);
    OBJ_RETAIN(m->comm);
    gc3_active.m[gc3_active.n++] = m;
    pthread_mutex_unlock(&gc3_active.lock);
}

/* Advance m from a call (m->lock taken and released here), then complete what ended. */
static void mca_coll_gc3_kick(mca_coll_gc3_module_t *m)
{
    mca_coll_gc3_task_t *done = NULL;
    int                  add;

    pthread_mutex_lock(&m->lock);
    mca_coll_gc3_advance(m, &done);
    add = mca_coll_gc3_needs_progress(m);
    pthread_mutex_unlock(&m->lock);
    if (add) {
        mca_coll_gc3_activate(m);
    }
    mca_coll_gc3_complete(done);
}

int mca_coll_gc3_progress(void)
{
    static unsigned        turn; /* more than 64 modules: the others at the next passes */
    mca_coll_gc3_module_t *mine[64];
    int                    n = 0, completed = 0;

    if (gc3_active.n == 0 || pthread_mutex_trylock(&gc3_active.lock) != 0) {
        return 0;
    }
    turn++;
    for (int i = 0; i < gc3_active.n && n < 64; i++) {
        mine[n] = gc3_active.m[(i + (int)(turn % (unsigned)gc3_active.n)) % gc3_active.n];
        OBJ_RETAIN(mine[n]);
        n++;
    }
    pthread_mutex_unlock(&gc3_active.lock);
    for (int i = 0; i < n; i++) {
        mca_coll_gc3_module_t *m    = mine[i];
        mca_coll_gc3_task_t   *done = NULL;
        int                    idle = 0;
        if (pthread_mutex_trylock(&m->lock) == 0) { /* else a call on it advances it right now */
            mca_coll_gc3_advance(m, &done);
            idle = mca_coll_gc3_idle(m);
            pthread_mutex_unlock(&m->lock);
        }
        for (mca_coll_gc3_task_t *t = done; t != NULL; t = t->next) {
            completed++;
        }
        mca_coll_gc3_complete(done);
        if (idle) {
            /* off the list (with the references it held), unless a call put work there meanwhile */
            int found = 0;
            pthread_mutex_lock(&gc3_active.lock);
            pthread_mutex_lock(&m->lock);
            if (mca_coll_gc3_idle(m)) {
                for (int k = 0; k < gc3_active.n && !found; k++) {
                    if (gc3_active.m[k] == m) {
                        gc3_active.m[k] = gc3_active.m[--gc3_active.n];
                        found           = 1;
                    }
                }
                m->pipe.active = 0;
            }
            pthread_mutex_unlock(&m->lock);
            pthread_mutex_unlock(&gc3_active.lock);
            if (found) {
                struct ompi_communicator_t *comm = m->comm;
                OBJ_RELEASE(m);
                OBJ_RELEASE(comm);
            }
        }
        OBJ_RELEASE(m); /* this pass's */
    }
    return completed;
}

void mca_coll_gc3_quiesce(mca_coll_gc3_module_t *m)
{
    for (;;) {
        mca_coll_gc3_task_t *done = NULL;
        int                  idle;
        pthread_mutex_lock(&m->lock);
        mca_coll_gc3_advance(m, &done);
        idle = m->pipe.head == NULL && m->pipe.running == NULL;
        pthread_mutex_unlock(&m->lock);
        mca_coll_gc3_complete(done);
        if (idle) {
            return;
        }
        opal_progress();
    }
}

/* ---------------------------------------------------------------- the calls */

/* How long a blocking call waits for its plan before it lets MPI progress: the other ranks may wait for
 * this one's nonblocking calls of other communicators (their set-up exchanges, Open MPI's own), which
 * progress only when this rank calls into MPI's progress; a small call ends well within it. */
#define MCA_COLL_GC3_RUN_SPIN_NS 100000

/* Run a blocking call on its plan (the caller took the plan: mca_coll_gc3_entry_take). */
static int mca_coll_gc3_run(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s, const gc3_call_t *call, int root)
{
    gc3_diag_t   diag;
    gc3_status_t st, w = GC3_OK;
    int          rc = OMPI_SUCCESS, queued;

    gc3_diag_init(&diag);
    mca_coll_gc3_blocks_take(m, s);
    st = mca_coll_gc3_plan_start(s, call, root, &diag);
    while (st == GC3_OK && (w = gc3_exec_wait_for(s->plan, MCA_COLL_GC3_RUN_SPIN_NS, &diag)) == GC3_IN_PROGRESS) {
        opal_progress();
    }
    st = st == GC3_OK ? w : st;
    mca_coll_gc3_blocks_give(s);
    mca_coll_gc3_report_zc(m, s);
    if (st != GC3_OK) {
        mca_coll_gc3_report_failure(m, mca_coll_gc3_call_name(s->coll, call),
                                    diag.count ? diag.msgs[0] : gc3_status_string(st));
        rc = OMPI_ERROR;
    }
    gc3_diag_cleanup(&diag);
    pthread_mutex_lock(&m->lock);
    mca_coll_gc3_entry_give(m, s);
    queued = m->pipe.head != NULL;
    pthread_mutex_unlock(&m->lock);
    if (queued) {
        mca_coll_gc3_kick(m); /* a call queued behind it may start now */
    }
    return rc;
}

int mca_coll_gc3_try_run(mca_coll_gc3_module_t *m, gc3_coll_t coll, const mca_coll_gc3_args_t *a, const void *sbuf,
                         void *rbuf, int *rc)
{
    const gc3_backend_t backend = (gc3_backend_t)a->backend;
    mca_coll_gc3_task_t t;
    char                why[MCA_COLL_GC3_WHY_BYTES];

    if (a->backend < 0) {
        *rc = mca_coll_gc3_failed_rc(a); /* this rank cannot run it (reported) */
        return 1;
    }
    mca_coll_gc3_task_init(&t, coll, a, sbuf, rbuf);
    t.blocking = 1;
    pthread_mutex_lock(&m->lock);
    if (mca_coll_gc3_unusable(m, coll)) {
        pthread_mutex_unlock(&m->lock);
        *rc = OMPI_ERROR;
        return 1;
    }
    if (m->pipe.head == NULL && m->exec_state[backend] == MCA_COLL_GC3_EXEC_READY) {
        /* nothing queued before it and the shape is known: decided here (the common case) */
        mca_coll_gc3_plan_entry_t *s =
            mca_coll_gc3_entry(m, coll, a->root, a->bytes, t.inplace, backend, why, sizeof(why));
        if (s == NULL || (s->state == MCA_COLL_GC3_ENTRY_FAILED && !s->fail_call)) {
            pthread_mutex_unlock(&m->lock);
            return 0;
        }
        if (s->state == MCA_COLL_GC3_ENTRY_READY && mca_coll_gc3_entry_free(m, s)) {
            const uint64_t found = mca_coll_gc3_breakdown_now();
            mca_coll_gc3_entry_take(m, s);
            pthread_mutex_unlock(&m->lock);
            *rc = mca_coll_gc3_run(m, s, &t.call, t.root);
            mca_coll_gc3_breakdown_add(m, s, a, found);
            return 1;
        }
        t.entry = s; /* being set up, or an earlier call runs on it (or on its FIFO pool) */
    }
    mca_coll_gc3_enqueue(m, &t);
    pthread_mutex_unlock(&m->lock);
    /* wait for its turn, advancing everything (this communicator directly, the others through
     * progress): what it waits for is bounded by coll_gc3_timeout */
    for (;;) {
        mca_coll_gc3_kick(m);
        if (t.state != MCA_COLL_GC3_TASK_QUEUED) {
            break;
        }
        opal_progress();
    }
    switch (t.state) {
    case MCA_COLL_GC3_TASK_GO:
        *rc = mca_coll_gc3_run(m, t.entry, &t.call, t.root); /* (waited: not in coll_gc3_breakdown's runs) */
        return 1;
    case MCA_COLL_GC3_TASK_PASS:
        return 0;
    default:
        *rc = t.rc;
        return 1;
    }
}

int mca_coll_gc3_try_start(mca_coll_gc3_module_t *m, gc3_coll_t coll, mca_coll_gc3_args_t *a, const void *sbuf,
                           void *rbuf, ompi_request_t **request, struct mca_coll_gc3_request_t *reuse)
{
    mca_coll_gc3_request_t *r;
    int                     unusable;

    if (a->backend < 0 && !a->vagree) {   /* (an alltoallv's ranks fail it together after their agreement) */
        return mca_coll_gc3_failed_rc(a); /* this rank cannot run it (reported) */
    }
    pthread_mutex_lock(&m->lock);
    unusable = mca_coll_gc3_unusable(m, coll);
    pthread_mutex_unlock(&m->lock);
    r = unusable || reuse != NULL ? reuse : mca_coll_gc3_request_new(m, coll, false);
    if (unusable || r == NULL) {
        return mca_coll_gc3_adapt_out(m, &a->ad, unusable ? OMPI_ERROR : OMPI_ERR_OUT_OF_RESOURCE);
    }
    mca_coll_gc3_task_init(&r->task, coll, a, sbuf, rbuf);
    r->task.ad  = a->ad; /* its temporaries, released when it completes */
    r->task.req = r;
    if (a->segs != NULL || a->vagree) { /* a v-call: its table goes with the task (freed when it completes) */
        r->task.segs   = a->segs;
        r->task.vmine  = a->vmine;
        r->task.vfail  = a->vfail || a->backend < 0;
        r->task.vstate = a->vagree ? MCA_COLL_GC3_VX_TODO : MCA_COLL_GC3_VX_NONE;
        a->segs        = NULL;
    }
    OBJ_RETAIN(r); /* the pipeline's reference, until the call is over */
    pthread_mutex_lock(&m->lock);
    mca_coll_gc3_enqueue(m, &r->task);
    pthread_mutex_unlock(&m->lock);
    *request = &r->super; /* before it can complete */
    mca_coll_gc3_kick(m);
    return OMPI_SUCCESS;
}

int mca_coll_gc3_chain(mca_coll_gc3_module_t *m, mca_coll_gc3_stage_t *b, int n, int rc, ompi_request_t *inner,
                       ompi_request_t **request)
{
    mca_coll_gc3_request_t *r;
    int                     add;

    if (rc != OMPI_SUCCESS) {
        return mca_coll_gc3_stage_out(b, n, rc);
    }
    if (inner == NULL || inner == &ompi_request_empty || REQUEST_COMPLETE(inner)) {
        /* done at once (a zero-size call): copied back now */
        rc = inner != NULL && inner != &ompi_request_empty ? inner->req_status.MPI_ERROR : OMPI_SUCCESS;
        if (inner != NULL && inner != &ompi_request_empty) {
            ompi_request_free(&inner);
        }
        *request = &ompi_request_empty;
        return mca_coll_gc3_stage_out(b, n, rc);
    }
    r = mca_coll_gc3_request_new(m, -1, false); /* (no plan of gc3's: Open MPI's call) */
    if (r == NULL) {
        /* the call is under way on the copies: wait for it here rather than lose the result */
        rc       = ompi_request_wait(&inner, MPI_STATUS_IGNORE);
        *request = &ompi_request_empty;
        return mca_coll_gc3_stage_out(b, n, rc);
    }
    memset(&r->task, 0, sizeof(r->task));
    r->task.coll   = -1;
    r->task.root   = -1;
    r->task.req    = r;
    r->task.inner  = inner;
    r->task.nstage = n;
    for (int i = 0; i < n; i++) {
        r->task.stage[i] = b[i];
    }
    r->task.state = MCA_COLL_GC3_TASK_CHAINED;
    OBJ_RETAIN(r); /* the pipeline's reference, until the call is over */
    *request = &r->super;
    pthread_mutex_lock(&m->lock);
    r->task.next    = m->pipe.running;
    m->pipe.running = &r->task;
    add          = mca_coll_gc3_needs_progress(m);
    pthread_mutex_unlock(&m->lock);
    if (add) {
        mca_coll_gc3_activate(m);
    }
    return OMPI_SUCCESS;
}

void mca_coll_gc3_plan_ahead(mca_coll_gc3_module_t *m, gc3_coll_t coll, const mca_coll_gc3_args_t *a, const void *sbuf)
{
    mca_coll_gc3_task_t *t;

    if (a->backend < 0 || (t = malloc(sizeof(*t))) == NULL) {
        return; /* (out of memory: the plan is set up at the first start) */
    }
    mca_coll_gc3_task_init(t, coll, a, sbuf, NULL);
    t->ahead     = 1;
    t->call.segs = NULL; /* (a v-call's table is its starts'; this task runs no call) */
    pthread_mutex_lock(&m->lock);
    mca_coll_gc3_enqueue(m, t);
    pthread_mutex_unlock(&m->lock);
    mca_coll_gc3_kick(m);
}
