/* coll/gc3: the per-communicator module.
 *
 * Delegation as Open MPI's own interposing components do it: at enable, remember and
 * retain the previous module's function for every collective gc3 intercepts; a missing
 * one is tolerated (the call then reports MPI_ERR_NOT_SUPPORTED instead of crashing). */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/mca/coll/base/base.h"

static void mca_coll_gc3_module_construct(mca_coll_gc3_module_t *m)
{
    memset((char *)m + sizeof(m->super), 0, sizeof(*m) - sizeof(m->super));
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
    GC3_RELEASE_PREV(m, allreduce);
    GC3_RELEASE_PREV(m, alltoall);
    GC3_RELEASE_PREV(m, allgather);
    GC3_RELEASE_PREV(m, reduce_scatter_block);
    GC3_RELEASE_PREV(m, iallreduce);
    GC3_RELEASE_PREV(m, ialltoall);
}

OBJ_CLASS_INSTANCE(mca_coll_gc3_module_t, mca_coll_base_module_t, mca_coll_gc3_module_construct,
                   mca_coll_gc3_module_destruct);

#define GC3_SAVE_PREV(m, comm, name)                                                              \
    do {                                                                                          \
        (m)->prev_##name         = (comm)->c_coll->coll_##name;                                  \
        (m)->prev_##name##_module = (comm)->c_coll->coll_##name##_module;                        \
        if ((m)->prev_##name##_module != NULL) {                                                 \
            OBJ_RETAIN((m)->prev_##name##_module);                                               \
        } else {                                                                                  \
            opal_output_verbose(2, mca_coll_gc3_component.output,                                 \
                                "coll:gc3: comm %s: no previous " #name " to delegate to",         \
                                (comm)->c_name);                                                  \
        }                                                                                         \
    } while (0)

#define GC3_NO_PREV(comm, name)                                                                  \
    (opal_output_verbose(1, mca_coll_gc3_component.output,                                       \
                         "coll:gc3: comm %s: " #name " called but no other coll component provides it", \
                         (comm)->c_name),                                                          \
     OMPI_ERR_NOT_SUPPORTED)

static int mca_coll_gc3_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    GC3_SAVE_PREV(m, comm, allreduce);
    GC3_SAVE_PREV(m, comm, alltoall);
    GC3_SAVE_PREV(m, comm, allgather);
    GC3_SAVE_PREV(m, comm, reduce_scatter_block);
    GC3_SAVE_PREV(m, comm, iallreduce);
    GC3_SAVE_PREV(m, comm, ialltoall);
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: enabled on comm %s (%d ranks)", comm->c_name,
                        ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_allreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                                  struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                  mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    if (m->prev_allreduce == NULL) {
        return GC3_NO_PREV(comm, allreduce);
    }
    return m->prev_allreduce(sbuf, rbuf, count, dtype, op, comm, m->prev_allreduce_module);
}

static int mca_coll_gc3_alltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                                 int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                 mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    if (m->prev_alltoall == NULL) {
        return GC3_NO_PREV(comm, alltoall);
    }
    return m->prev_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_alltoall_module);
}

static int mca_coll_gc3_allgather(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                                  int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                  mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    if (m->prev_allgather == NULL) {
        return GC3_NO_PREV(comm, allgather);
    }
    return m->prev_allgather(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, m->prev_allgather_module);
}

static int mca_coll_gc3_reduce_scatter_block(const void *sbuf, void *rbuf, int rcount, struct ompi_datatype_t *dtype,
                                             struct ompi_op_t *op, struct ompi_communicator_t *comm,
                                             mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    if (m->prev_reduce_scatter_block == NULL) {
        return GC3_NO_PREV(comm, reduce_scatter_block);
    }
    return m->prev_reduce_scatter_block(sbuf, rbuf, rcount, dtype, op, comm, m->prev_reduce_scatter_block_module);
}

static int mca_coll_gc3_iallreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                                   struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                                   mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    if (m->prev_iallreduce == NULL) {
        return GC3_NO_PREV(comm, iallreduce);
    }
    return m->prev_iallreduce(sbuf, rbuf, count, dtype, op, comm, request, m->prev_iallreduce_module);
}

static int mca_coll_gc3_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                                  int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                  ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    if (m->prev_ialltoall == NULL) {
        return GC3_NO_PREV(comm, ialltoall);
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
    *priority                                  = mca_coll_gc3_component.priority;
    m->super.coll_module_enable                = mca_coll_gc3_module_enable;
    m->super.coll_allreduce                    = mca_coll_gc3_allreduce;
    m->super.coll_alltoall                     = mca_coll_gc3_alltoall;
    m->super.coll_allgather                    = mca_coll_gc3_allgather;
    m->super.coll_reduce_scatter_block         = mca_coll_gc3_reduce_scatter_block;
    m->super.coll_iallreduce                   = mca_coll_gc3_iallreduce;
    m->super.coll_ialltoall                    = mca_coll_gc3_ialltoall;
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: comm %s: query, priority %d", comm->c_name,
                        *priority);
    return &m->super;
}
