/* coll/gc3: persistent collectives (MPIX_Allreduce_init and MPIX_Alltoall_init through Open MPI
 * 4.1's pcollreq extension, MPI_Allreduce_init and MPI_Alltoall_init on 5.0). The call is bound
 * once, with the plan it will use set up from init on (in the pipeline, without waiting); each
 * MPI_Start then only launches it, completed through Open MPI's progress like a nonblocking call.
 * A start gc3 does not run itself (say, an op it does not implement) runs the blocking call
 * instead, which follows coll_gc3_fallback on device buffers, and completes at once. Host buffers
 * that gc3 would not run go to the previous module's persistent collective (libnbc), untouched:
 * the collectives' init functions decide that (coll_gc3_<collective>.c). */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

/* MPI_Start / MPI_Startall */
static int gc3_pstart(size_t count, ompi_request_t **requests)
{
    for (size_t i = 0; i < count; i++) {
        mca_coll_gc3_request_t *r = (mca_coll_gc3_request_t *)requests[i];
        int                     rc, taken;

        if (r->super.req_state == OMPI_REQUEST_ACTIVE) {
            return MPI_ERR_REQUEST; /* started again before it completed */
        }
        r->super.req_state            = OMPI_REQUEST_ACTIVE;
        r->super.req_complete         = REQUEST_PENDING;
        r->super.req_status.MPI_ERROR = MPI_SUCCESS;
        taken                         = r->pcoll->on_plan(r, &rc);
        if (taken && rc == OMPI_SUCCESS) {
            continue; /* queued: progress completes it */
        }
        if (!taken) { /* the blocking call, done at once */
            rc = r->pcoll->blocking(r);
        }
        r->super.req_status.MPI_ERROR = rc;
        ompi_request_complete(&r->super, true);
    }
    return OMPI_SUCCESS;
}

int mca_coll_gc3_persistent(mca_coll_gc3_module_t *m, gc3_coll_t coll, const mca_coll_gc3_pcoll_t *pcoll,
                            const void *sbuf, void *rbuf, int scount, struct ompi_datatype_t *sdtype, int rcount,
                            struct ompi_datatype_t *rdtype, struct ompi_op_t *op, int gc3_runs,
                            const mca_coll_gc3_args_t *a, ompi_request_t **request)
{
    mca_coll_gc3_request_t *r = mca_coll_gc3_request_persistent(m, coll);

    if (r == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    r->super.req_start = gc3_pstart;
    r->pcoll           = pcoll;
    r->sbuf            = sbuf;
    r->rbuf            = rbuf;
    r->scount          = scount;
    r->rcount          = rcount;
    r->sdtype          = sdtype;
    r->rdtype          = rdtype;
    r->op              = op;
    r->root            = a->root;
    /* the user may free them before the request (MPI allows it): keep them */
    if (sdtype != NULL)
        OBJ_RETAIN(sdtype);
    if (rdtype != NULL)
        OBJ_RETAIN(rdtype);
    if (op != NULL)
        OBJ_RETAIN(op);
    if (gc3_runs) {
        mca_coll_gc3_plan_ahead(m, coll, a, sbuf);
    }
    *request = &r->super;
    return OMPI_SUCCESS;
}

int mca_coll_gc3_persistent_vectors(ompi_request_t *request, int n, const int *const v[4])
{
    mca_coll_gc3_request_t *r    = (mca_coll_gc3_request_t *)request;
    int                     nvec = 0;
    int                    *block;

    for (int i = 0; i < 4; i++) {
        nvec += v[i] != NULL;
    }
    block = malloc((size_t)(nvec > 0 ? nvec : 1) * (size_t)n * sizeof(int));
    if (block == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    for (int i = 0, k = 0; i < 4; i++) {
        if (v[i] != NULL) { /* (the first vector present starts the block: freed through vec[0] or vec[2]) */
            r->vec[i] = block + (size_t)k++ * (size_t)n;
            memcpy(r->vec[i], v[i], (size_t)n * sizeof(int));
        }
    }
    return OMPI_SUCCESS;
}
