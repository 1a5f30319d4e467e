/* coll/gc3: the agreement of a nonblocking alltoallv's ranks on its largest segment, a step of the
 * pipeline (coll_gc3_request.c): a nonblocking call must not wait for another rank, so this rank's two
 * words (its largest segment; whether it has no table) go to every other rank and come from each
 * (MCA_COLL_GC3_TAG_VX: matched in call order, apart from the set-up's and the host-staged exchange's
 * messages), tested while the call waits at the head of the queue, which every rank's tasks reach in the
 * same order. */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "ompi/mca/pml/pml.h"

typedef struct mca_coll_gc3_vx_t {
    uint64_t        *words; /* 2 per rank: its largest segment, whether it has no table */
    ompi_request_t **reqs;
    int              nreq;
    double           t0;
} mca_coll_gc3_vx_t;

static void gc3_vx_free(mca_coll_gc3_vx_t *x)
{
    if (x != NULL) {
        free(x->words);
        free(x->reqs);
        free(x);
    }
}

static int gc3_vx_post(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t)
{
    const int          n = ompi_comm_size(m->comm), me = ompi_comm_rank(m->comm);
    mca_coll_gc3_vx_t *x  = calloc(1, sizeof(*x));
    int                rc = OMPI_SUCCESS;

    if (x == NULL || (x->words = calloc(2 * (size_t)n, sizeof(uint64_t))) == NULL ||
        (x->reqs = calloc(2 * (size_t)n, sizeof(*x->reqs))) == NULL) {
        gc3_vx_free(x);
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    x->words[2 * me]     = t->vmine;
    x->words[2 * me + 1] = (uint64_t)(t->segs == NULL || t->vfail);
    x->t0                = mca_coll_gc3_now();
    for (int q = 0; q < n && rc == OMPI_SUCCESS; q++) {
        if (q == me) {
            continue;
        }
        rc = MCA_PML_CALL(irecv(&x->words[2 * q], 2 * sizeof(uint64_t), MPI_BYTE, q, MCA_COLL_GC3_TAG_VX, m->comm,
                                &x->reqs[x->nreq]));
        x->nreq += rc == OMPI_SUCCESS;
        if (rc == OMPI_SUCCESS) {
            rc = MCA_PML_CALL(isend(&x->words[2 * me], 2 * sizeof(uint64_t), MPI_BYTE, q, MCA_COLL_GC3_TAG_VX,
                                    MCA_PML_BASE_SEND_STANDARD, m->comm, &x->reqs[x->nreq]));
            x->nreq += rc == OMPI_SUCCESS;
        }
    }
    t->vx = x;
    return rc;
}

int mca_coll_gc3_vx_advance(mca_coll_gc3_module_t *m, mca_coll_gc3_task_t *t, const char **why)
{
    mca_coll_gc3_vx_t *x   = t->vx;
    const int          n   = ompi_comm_size(m->comm);
    uint64_t           big = 0, none = 0;
    int                err = 0;

    *why = NULL;
    if (t->vstate == MCA_COLL_GC3_VX_NONE) {
        return 1;
    }
    if (t->vstate == MCA_COLL_GC3_VX_TODO) {
        t->vstate = MCA_COLL_GC3_VX_POSTED;
        if (gc3_vx_post(m, t) != OMPI_SUCCESS) {
            m->unusable = 1; /* posted in part: the peers' words would match later calls' */
            t->vstate   = MCA_COLL_GC3_VX_NONE;
            *why        = "its agreement on the largest segment could not be posted; gc3 fails every later call on "
                          "this communicator";
            return -1;
        }
        x = t->vx;
    }
    for (int i = 0; i < x->nreq; i++) {
        if (!REQUEST_COMPLETE(x->reqs[i])) {
            const double timeout = mca_coll_gc3_component.timeout;
            if (timeout <= 0 || mca_coll_gc3_now() - x->t0 <= timeout) {
                return 0;
            }
            m->unusable = 1;
            t->vx       = NULL; /* its buffers stay with the pending messages */
            t->vstate   = MCA_COLL_GC3_VX_NONE;
            *why        = "timeout waiting for a rank's word on the call's largest segment; gc3 fails every later "
                          "call on this communicator";
            return -1;
        }
    }
    for (int i = 0; i < x->nreq; i++) {
        err |= x->reqs[i]->req_status.MPI_ERROR != MPI_SUCCESS;
        ompi_request_free(&x->reqs[i]);
    }
    for (int q = 0; q < n; q++) {
        big = x->words[2 * q] > big ? x->words[2 * q] : big;
        none |= x->words[2 * q + 1];
    }
    gc3_vx_free(x);
    t->vx     = NULL;
    t->vstate = MCA_COLL_GC3_VX_NONE;
    if (err || none) {
        *why = err ? "a message of its agreement on the largest segment failed"
                   : "a rank cannot run it (out of host memory, or its buffers could not be adapted)";
        return -1;
    }
    t->call.count = (size_t)big;
    t->bytes      = mca_coll_gc3_call_bytes(t->coll, n, (size_t)big, t->call.dtype);
    return 1;
}
