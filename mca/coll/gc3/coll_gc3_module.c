/* coll/gc3: the per-communicator module.
 *
 * Delegation as Open MPI's own interposing components do it: at enable, remember and retain the
 * previous module's function for every collective gc3 intercepts (a missing one makes that
 * call report MPI_ERR_NOT_SUPPORTED instead of crashing). Executors and plans are made lazily,
 * at the first call that needs them (coll_gc3_setup.c), never in comm_query or at enable: an
 * application may select its GPU after MPI_Init. */
#include <limits.h>
#include <string.h>
#include <pthread.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/request/request.h"
#include "ompi/datatype/ompi_datatype.h"


static void mca_coll_gc3_module_construct(mca_coll_gc3_module_t *m)
{
    memset((char *)m + sizeof(m->super), 0, sizeof(*m) - sizeof(m->super));
    m->device    = -1;
    m->gpu_share = INT_MAX;
    pthread_mutex_init(&m->lock, NULL);
    gc3_diag_init(&m->diag);
}

#define GC3_RELEASE_PREV(m, name)                     \
    do {                                              \
        if ((m)->prev_##name##_module != NULL) {      \
            OBJ_RELEASE((m)->prev_##name##_module);   \
            (m)->prev_##name##_module = NULL;         \
        }                                             \
    } while (0)

static void mca_coll_gc3_module_destruct(mca_coll_gc3_module_t *m)
{
    if (m->comm != NULL) {
        mca_coll_gc3_quiesce(m); /* no call may outlive its plan */
    }
    mca_coll_gc3_setup_fini(m);
    for (int i = 0; i < m->nslots; i++) {
        gc3_plan_destroy(m->slots[i]->plan);
        gc3_ir_program_destroy(m->slots[i]->program);
        free(m->slots[i]);
    }
    free(m->slots);
    for (int b = 0; b < MCA_COLL_GC3_NBACKEND; b++) {
        gc3_exec_destroy(m->exec[b]);
    }
    free(m->node);
    GC3_RELEASE_PREV(m, allreduce);
    GC3_RELEASE_PREV(m, alltoall);
    GC3_RELEASE_PREV(m, allgather);
    GC3_RELEASE_PREV(m, reduce_scatter_block);
    GC3_RELEASE_PREV(m, iallreduce);
    GC3_RELEASE_PREV(m, ialltoall);
    GC3_RELEASE_PREV(m, allreduce_init);
    GC3_RELEASE_PREV(m, alltoall_init);
    GC3_RELEASE_PREV(m, barrier);
    GC3_RELEASE_PREV(m, bcast);
    GC3_RELEASE_PREV(m, reduce);
    GC3_RELEASE_PREV(m, allgatherv);
    GC3_RELEASE_PREV(m, gather);
    GC3_RELEASE_PREV(m, scatter);
    GC3_RELEASE_PREV(m, alltoallv);
    GC3_RELEASE_PREV(m, reduce_scatter);
    GC3_RELEASE_PREV(m, scan);
    GC3_RELEASE_PREV(m, exscan);
    GC3_RELEASE_PREV(m, ibcast);
    GC3_RELEASE_PREV(m, ireduce);
    GC3_RELEASE_PREV(m, iallgather);
    GC3_RELEASE_PREV(m, iallgatherv);
    GC3_RELEASE_PREV(m, igather);
    GC3_RELEASE_PREV(m, iscatter);
    GC3_RELEASE_PREV(m, ialltoallv);
    GC3_RELEASE_PREV(m, ireduce_scatter_block);
    GC3_RELEASE_PREV(m, ireduce_scatter);
    GC3_RELEASE_PREV(m, iscan);
    GC3_RELEASE_PREV(m, iexscan);
    GC3_RELEASE_PREV(m, gatherv);
    GC3_RELEASE_PREV(m, scatterv);
    GC3_RELEASE_PREV(m, igatherv);
    GC3_RELEASE_PREV(m, iscatterv);
    GC3_RELEASE_PREV(m, alltoallw);
    GC3_RELEASE_PREV(m, ialltoallw);
    GC3_RELEASE_PREV(m, neighbor_allgather);
    GC3_RELEASE_PREV(m, neighbor_allgatherv);
    GC3_RELEASE_PREV(m, neighbor_alltoall);
    GC3_RELEASE_PREV(m, neighbor_alltoallv);
    GC3_RELEASE_PREV(m, neighbor_alltoallw);
    GC3_RELEASE_PREV(m, ineighbor_allgather);
    GC3_RELEASE_PREV(m, ineighbor_allgatherv);
    GC3_RELEASE_PREV(m, ineighbor_alltoall);
    GC3_RELEASE_PREV(m, ineighbor_alltoallv);
    GC3_RELEASE_PREV(m, ineighbor_alltoallw);
    pthread_mutex_destroy(&m->lock);
}

OBJ_CLASS_INSTANCE(mca_coll_gc3_module_t, mca_coll_base_module_t, mca_coll_gc3_module_construct,
                   mca_coll_gc3_module_destruct);

#define GC3_SAVE_PREV(m, comm, name)                                                              \
    do {                                                                                          \
        (m)->prev_##name          = (comm)->c_coll->coll_##name;                                 \
        (m)->prev_##name##_module = (comm)->c_coll->coll_##name##_module;                        \
        if ((m)->prev_##name##_module != NULL) {                                                 \
            OBJ_RETAIN((m)->prev_##name##_module);                                               \
        } else {                                                                                  \
            opal_output_verbose(2, mca_coll_gc3_component.output,                                 \
                                "coll:gc3: comm %s: no previous " #name " to delegate to",         \
                                (comm)->c_name);                                                  \
        }                                                                                         \
    } while (0)


static int mca_coll_gc3_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    GC3_SAVE_PREV(m, comm, allreduce);
    GC3_SAVE_PREV(m, comm, alltoall);
    GC3_SAVE_PREV(m, comm, allgather);
    GC3_SAVE_PREV(m, comm, reduce_scatter_block);
    GC3_SAVE_PREV(m, comm, iallreduce);
    GC3_SAVE_PREV(m, comm, ialltoall);
    GC3_SAVE_PREV(m, comm, allreduce_init);
    GC3_SAVE_PREV(m, comm, alltoall_init);
    GC3_SAVE_PREV(m, comm, barrier);
    GC3_SAVE_PREV(m, comm, bcast);
    GC3_SAVE_PREV(m, comm, reduce);
    GC3_SAVE_PREV(m, comm, allgatherv);
    GC3_SAVE_PREV(m, comm, gather);
    GC3_SAVE_PREV(m, comm, scatter);
    GC3_SAVE_PREV(m, comm, alltoallv);
    GC3_SAVE_PREV(m, comm, reduce_scatter);
    GC3_SAVE_PREV(m, comm, scan);
    GC3_SAVE_PREV(m, comm, exscan);
    GC3_SAVE_PREV(m, comm, ibcast);
    GC3_SAVE_PREV(m, comm, ireduce);
    GC3_SAVE_PREV(m, comm, iallgather);
    GC3_SAVE_PREV(m, comm, iallgatherv);
    GC3_SAVE_PREV(m, comm, igather);
    GC3_SAVE_PREV(m, comm, iscatter);
    GC3_SAVE_PREV(m, comm, ialltoallv);
    GC3_SAVE_PREV(m, comm, ireduce_scatter_block);
    GC3_SAVE_PREV(m, comm, ireduce_scatter);
    GC3_SAVE_PREV(m, comm, iscan);
    GC3_SAVE_PREV(m, comm, iexscan);
    GC3_SAVE_PREV(m, comm, gatherv);
    GC3_SAVE_PREV(m, comm, scatterv);
    GC3_SAVE_PREV(m, comm, igatherv);
    GC3_SAVE_PREV(m, comm, iscatterv);
    GC3_SAVE_PREV(m, comm, alltoallw);
    GC3_SAVE_PREV(m, comm, ialltoallw);
    GC3_SAVE_PREV(m, comm, neighbor_allgather);
    GC3_SAVE_PREV(m, comm, neighbor_allgatherv);
    GC3_SAVE_PREV(m, comm, neighbor_alltoall);
    GC3_SAVE_PREV(m, comm, neighbor_alltoallv);
    GC3_SAVE_PREV(m, comm, neighbor_alltoallw);
    GC3_SAVE_PREV(m, comm, ineighbor_allgather);
    GC3_SAVE_PREV(m, comm, ineighbor_allgatherv);
    GC3_SAVE_PREV(m, comm, ineighbor_alltoall);
    GC3_SAVE_PREV(m, comm, ineighbor_alltoallv);
    GC3_SAVE_PREV(m, comm, ineighbor_alltoallw);
    m->comm = comm;
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: enabled on comm %s (%d ranks)", comm->c_name,
                        ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

int mca_coll_gc3_pick_backend(mca_coll_gc3_module_t *m, const void *sbuf, const void *rbuf, const char *coll,
                              int *device_buffers_p)
{
    int                dev_s = -1, dev_r = -1;
    mca_coll_gc3_mem_t ks = sbuf == MPI_IN_PLACE ? MCA_COLL_GC3_MEM_HOST : mca_coll_gc3_classify(sbuf, &dev_s);
    mca_coll_gc3_mem_t kr = mca_coll_gc3_classify(rbuf, &dev_r);

    *device_buffers_p = ks != MCA_COLL_GC3_MEM_HOST || kr != MCA_COLL_GC3_MEM_HOST;
    if (mca_coll_gc3_component.stage_host) {
        *device_buffers_p = 1; /* test feature: host buffers take the staging path */
        return -1;
    }
    if (!*device_buffers_p) {
        return mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST ? GC3_BACKEND_HOST : -1;
    }
    if (mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST || !gc3_exec_backend_available(GC3_BACKEND_CUDA)) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: %s on device buffers: %s", coll,
                            mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST ? "backend is host"
                                                                                        : "built without CUDA");
        return -1;
    }
    if (ks == MCA_COLL_GC3_MEM_MANAGED || kr == MCA_COLL_GC3_MEM_MANAGED) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: %s on managed memory: not run by gc3", coll);
        return -1;
    }
    if ((sbuf != MPI_IN_PLACE && ks != MCA_COLL_GC3_MEM_DEVICE) || kr != MCA_COLL_GC3_MEM_DEVICE ||
        (sbuf != MPI_IN_PLACE && dev_s != dev_r) || (m->device >= 0 && dev_r != m->device)) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: %s with buffers on devices %d/%d (this rank uses %d), or host and device "
                            "mixed: not run by gc3", coll, dev_s, dev_r, m->device);
        return -1;
    }
    return GC3_BACKEND_CUDA;
}

/* ---------------------------------------------------------------- pass-through collectives */

/* Nonblocking calls gc3 takes go into the communicator's pipeline (coll_gc3_request.c): started
 * without waiting for another rank, completed by Open MPI's progress. Device buffers it does not
 * take (an op or datatype it does not run, managed memory, ...) must not reach the previous
 * (non-CUDA-aware) module: gc3 runs the blocking call (staged, per coll_gc3_fallback) and returns a
 * completed request. */
static int mca_coll_gc3_iallreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                                   struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                                   mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (mca_coll_gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "iallreduce", &a) &&
        mca_coll_gc3_try_start(m, GC3_COLL_ALLREDUCE, (gc3_backend_t)a.backend, sbuf, rbuf, a.count, a.dtype, a.op,
                               a.bytes, request, &rc, NULL)) {
        return rc;
    }
    if (a.device && mca_coll_gc3_component.fallback != MCA_COLL_GC3_FALLBACK_PASS) {
        rc       = mca_coll_gc3_allreduce(sbuf, rbuf, count, dtype, op, comm, module);
        *request = &ompi_request_empty;
        return rc;
    }
    if (m->prev_iallreduce == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, iallreduce);
    }
    return m->prev_iallreduce(sbuf, rbuf, count, dtype, op, comm, request, m->prev_iallreduce_module);
}

static int mca_coll_gc3_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                                  int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                  ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (mca_coll_gc3_alltoall_args(m, sbuf, &scount, &sdtype, rbuf, rcount, rdtype, "ialltoall", &a) &&
        mca_coll_gc3_try_start(m, GC3_COLL_ALLTOALL, (gc3_backend_t)a.backend, sbuf, rbuf, a.count, a.dtype, a.op,
                               a.bytes, request, &rc, NULL)) {
        return rc;
    }
    if (a.device && mca_coll_gc3_component.fallback != MCA_COLL_GC3_FALLBACK_PASS) {
        rc       = mca_coll_gc3_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, module);
        *request = &ompi_request_empty;
        return rc;
    }
    if (m->prev_ialltoall == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, ialltoall);
    }
    return m->prev_ialltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, request, m->prev_ialltoall_module);
}

int mca_coll_gc3_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_gc3_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    mca_coll_gc3_module_t *m;

    if (mca_coll_gc3_component.priority < 0 || OMPI_COMM_IS_INTER(comm)) {
        return NULL;
    }
    m = OBJ_NEW(mca_coll_gc3_module_t);
    if (m == NULL) {
        return NULL;
    }
    *priority                          = mca_coll_gc3_component.priority;
    m->super.coll_module_enable        = mca_coll_gc3_module_enable;
    m->super.coll_allreduce            = mca_coll_gc3_allreduce;
    m->super.coll_alltoall             = mca_coll_gc3_alltoall;
    m->super.coll_allgather            = mca_coll_gc3_allgather;
    m->super.coll_reduce_scatter_block = mca_coll_gc3_reduce_scatter_block;
    m->super.coll_iallreduce           = mca_coll_gc3_iallreduce;
    m->super.coll_bcast                = mca_coll_gc3_bcast;
    m->super.coll_reduce               = mca_coll_gc3_reduce;
    m->super.coll_allgatherv           = mca_coll_gc3_allgatherv;
    m->super.coll_gather               = mca_coll_gc3_gather;
    m->super.coll_scatter              = mca_coll_gc3_scatter;
    m->super.coll_alltoallv            = mca_coll_gc3_alltoallv;
    m->super.coll_reduce_scatter       = mca_coll_gc3_reduce_scatter;
    m->super.coll_scan                 = mca_coll_gc3_scan;
    m->super.coll_exscan               = mca_coll_gc3_exscan;
    m->super.coll_ialltoall            = mca_coll_gc3_ialltoall;
    m->super.coll_ibcast                 = mca_coll_gc3_ibcast;
    m->super.coll_ireduce                = mca_coll_gc3_ireduce;
    m->super.coll_iallgather             = mca_coll_gc3_iallgather;
    m->super.coll_iallgatherv            = mca_coll_gc3_iallgatherv;
    m->super.coll_igather                = mca_coll_gc3_igather;
    m->super.coll_iscatter               = mca_coll_gc3_iscatter;
    m->super.coll_ialltoallv             = mca_coll_gc3_ialltoallv;
    m->super.coll_ireduce_scatter_block  = mca_coll_gc3_ireduce_scatter_block;
    m->super.coll_ireduce_scatter        = mca_coll_gc3_ireduce_scatter;
    m->super.coll_iscan                  = mca_coll_gc3_iscan;
    m->super.coll_iexscan                = mca_coll_gc3_iexscan;
    m->super.coll_gatherv                = mca_coll_gc3_gatherv;
    m->super.coll_scatterv               = mca_coll_gc3_scatterv;
    m->super.coll_igatherv               = mca_coll_gc3_igatherv;
    m->super.coll_iscatterv              = mca_coll_gc3_iscatterv;
    m->super.coll_alltoallw              = mca_coll_gc3_alltoallw;
    m->super.coll_ialltoallw             = mca_coll_gc3_ialltoallw;
    m->super.coll_neighbor_allgather       = mca_coll_gc3_neighbor_allgather;
    m->super.coll_neighbor_allgatherv      = mca_coll_gc3_neighbor_allgatherv;
    m->super.coll_neighbor_alltoall        = mca_coll_gc3_neighbor_alltoall;
    m->super.coll_neighbor_alltoallv       = mca_coll_gc3_neighbor_alltoallv;
    m->super.coll_neighbor_alltoallw       = mca_coll_gc3_neighbor_alltoallw;
    m->super.coll_ineighbor_allgather      = mca_coll_gc3_ineighbor_allgather;
    m->super.coll_ineighbor_allgatherv     = mca_coll_gc3_ineighbor_allgatherv;
    m->super.coll_ineighbor_alltoall       = mca_coll_gc3_ineighbor_alltoall;
    m->super.coll_ineighbor_alltoallv      = mca_coll_gc3_ineighbor_alltoallv;
    m->super.coll_ineighbor_alltoallw      = mca_coll_gc3_ineighbor_alltoallw;
    m->super.coll_allreduce_init       = mca_coll_gc3_allreduce_init;
    m->super.coll_alltoall_init        = mca_coll_gc3_alltoall_init;
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: comm %s: query, priority %d", comm->c_name,
                        *priority);
    return &m->super;
}
