/* coll/gc3: Open MPI collective component for CUDA device buffers.
 *
 * This is the component boundary: Open MPI names and conventions here, libgpuir
 * (mca/common/gpuir) underneath. This version loads, registers its MCA parameters and
 * passes every collective it intercepts to the module that was there before it. */
#ifndef MCA_COLL_GC3_H
#define MCA_COLL_GC3_H

#include "ompi_config.h"
#include "mpi.h"
#include "ompi/mca/coll/coll.h"
#include "ompi/communicator/communicator.h"

BEGIN_C_DECLS

typedef struct mca_coll_gc3_component_t {
    mca_coll_base_component_2_0_0_t super;
    int priority;  /* coll_gc3_priority */
    int verbose;   /* coll_gc3_verbose */
    int output;    /* opal_output stream */
} mca_coll_gc3_component_t;

OMPI_MODULE_DECLSPEC extern mca_coll_gc3_component_t mca_coll_gc3_component;

/* The previous module's function for one collective, retained while gc3 is enabled. */
#define MCA_COLL_GC3_PREV(name)                        \
    mca_coll_base_module_##name##_fn_t prev_##name;    \
    mca_coll_base_module_t            *prev_##name##_module

typedef struct mca_coll_gc3_module_t {
    mca_coll_base_module_t super;
    MCA_COLL_GC3_PREV(allreduce);
    MCA_COLL_GC3_PREV(alltoall);
    MCA_COLL_GC3_PREV(allgather);
    MCA_COLL_GC3_PREV(reduce_scatter_block);
    MCA_COLL_GC3_PREV(iallreduce);
    MCA_COLL_GC3_PREV(ialltoall);
} mca_coll_gc3_module_t;

OBJ_CLASS_DECLARATION(mca_coll_gc3_module_t);

int mca_coll_gc3_init_query(bool enable_progress_threads, bool enable_mpi_threads);
mca_coll_base_module_t *mca_coll_gc3_comm_query(struct ompi_communicator_t *comm, int *priority);

END_C_DECLS

#endif
