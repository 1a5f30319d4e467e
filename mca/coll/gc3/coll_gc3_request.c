/* coll/gc3: requests of nonblocking collectives run by gc3. A call is started on its plan (the
 * kernel, or the host backend's threads, run on their own); Open MPI's progress engine calls
 * mca_coll_gc3_progress, which tests the calls in the order they were started and completes
 * their requests in that order. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/runtime/opal_progress.h"

OBJ_CLASS_INSTANCE(mca_coll_gc3_request_t, ompi_request_t, NULL, NULL);

/* calls in flight, oldest first; each holds a reference on its request */
static struct {
    pthread_mutex_t          lock;
    mca_coll_gc3_request_t **q;
    int                      n, cap;
} gc3_inflight = {PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0};

static int mca_coll_gc3_request_free(ompi_request_t **req)
{
    mca_coll_gc3_request_t *r = (mca_coll_gc3_request_t *)*req;

    if (r->super.req_persistent) {
        if (!REQUEST_COMPLETE(&r->super)) {
            return MPI_ERR_REQUEST; /* an active persistent request cannot be freed */
        }
        if (r->sdtype != NULL) OBJ_RELEASE(r->sdtype);
        if (r->rdtype != NULL) OBJ_RELEASE(r->rdtype);
        if (r->op != NULL) OBJ_RELEASE(r->op);
    }
    OMPI_REQUEST_FINI(*req);
    OBJ_RELEASE(*req); /* the caller's reference; the queue keeps its own until completion */
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
    mca_coll_gc3_request_t *r = OBJ_NEW(mca_coll_gc3_request_t);

    if (r == NULL) {
        return NULL;
    }
    OMPI_REQUEST_INIT(&r->super, persistent);
    r->super.req_type              = OMPI_REQUEST_COLL;
    r->super.req_state             = OMPI_REQUEST_ACTIVE;
    r->super.req_free              = mca_coll_gc3_request_free;
    r->super.req_cancel            = mca_coll_gc3_request_cancel;
    r->super.req_mpi_object.comm   = m->comm;
    r->super.req_status.MPI_ERROR  = MPI_SUCCESS;
    r->super.req_status.MPI_SOURCE = MPI_ANY_SOURCE;
    r->super.req_status.MPI_TAG    = MPI_ANY_TAG;
    r->module                      = m;
    r->coll                        = coll;
    r->plan                        = NULL;
    r->sbuf = r->rbuf = NULL;
    r->scount = r->rcount = 0;
    r->sdtype = r->rdtype = NULL;
    r->op                 = NULL;
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

int mca_coll_gc3_request_start(mca_coll_gc3_module_t *m, int coll, gc3_plan_t *plan, ompi_request_t **request_p,
                               mca_coll_gc3_request_t *reuse)
{
    mca_coll_gc3_request_t *r = reuse != NULL ? reuse : mca_coll_gc3_request_new(m, coll, false);

    if (r == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    r->plan = plan;
    pthread_mutex_lock(&gc3_inflight.lock);
    if (gc3_inflight.n == gc3_inflight.cap) {
        int                      ncap = gc3_inflight.cap ? 2 * gc3_inflight.cap : 16;
        mca_coll_gc3_request_t **nq   = realloc(gc3_inflight.q, (size_t)ncap * sizeof(*nq));
        if (nq == NULL) {
            pthread_mutex_unlock(&gc3_inflight.lock);
            if (reuse == NULL) {
                OBJ_RELEASE(r);
            }
            return OMPI_ERR_OUT_OF_RESOURCE;
        }
        gc3_inflight.q   = nq;
        gc3_inflight.cap = ncap;
    }
    OBJ_RETAIN(r); /* the queue's reference */
    gc3_inflight.q[gc3_inflight.n++] = r;
    pthread_mutex_unlock(&gc3_inflight.lock);
    *request_p = &r->super;
    return OMPI_SUCCESS;
}

int mca_coll_gc3_progress(void)
{
    int completed = 0;

    if (gc3_inflight.n == 0 || pthread_mutex_trylock(&gc3_inflight.lock) != 0) {
        return 0;
    }
    while (gc3_inflight.n > 0) {
        mca_coll_gc3_request_t *r = gc3_inflight.q[0];
        gc3_diag_t              diag;
        gc3_status_t            st;
        int                     done = 0;

        gc3_diag_init(&diag);
        st = gc3_exec_test(r->plan, &done, &diag);
        if (!done) {
            gc3_diag_cleanup(&diag);
            break; /* the oldest is still running: later ones complete after it */
        }
        if (st != GC3_OK) {
            opal_output(0, "coll:gc3: comm %s rank %d: nonblocking %s failed: %s", r->module->comm->c_name,
                        ompi_comm_rank(r->module->comm), mca_coll_gc3_coll_names[r->coll],
                        diag.count ? diag.msgs[0] : gc3_status_string(st));
            r->super.req_status.MPI_ERROR = MPI_ERR_OTHER;
        }
        gc3_diag_cleanup(&diag);
        memmove(gc3_inflight.q, gc3_inflight.q + 1, (size_t)(gc3_inflight.n - 1) * sizeof(*gc3_inflight.q));
        gc3_inflight.n--;
        ompi_request_complete(&r->super, true);
        OBJ_RELEASE(r);
        completed++;
    }
    pthread_mutex_unlock(&gc3_inflight.lock);
    return completed;
}

static int mca_coll_gc3_uses(gc3_plan_t *plan)
{
    int busy = 0;
    pthread_mutex_lock(&gc3_inflight.lock);
    for (int i = 0; i < gc3_inflight.n && !busy; i++) {
        busy = gc3_inflight.q[i]->plan == plan;
    }
    pthread_mutex_unlock(&gc3_inflight.lock);
    return busy;
}

void mca_coll_gc3_drain(gc3_plan_t *plan)
{
    while (plan != NULL && mca_coll_gc3_uses(plan)) {
        opal_progress(); /* runs mca_coll_gc3_progress among the rest */
    }
}
