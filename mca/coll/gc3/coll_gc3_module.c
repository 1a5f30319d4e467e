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

#define GC3_RELEASE_PREV(name, ...)                  \
    if (m->prev_##name##_module != NULL) {           \
        OBJ_RELEASE(m->prev_##name##_module);        \
        m->prev_##name##_module = NULL;              \
    }

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
    /* what waited for a kernel in flight goes now if it can (else with the next call that ends) */
    (void)gc3_mem_release_deferred();
    if (m->mem_plans > 0 && m->mem_rank == 0) { /* (m->comm may be gone: see mca_coll_gc3_progress) */
        gc3_mem_held_t h;
        char           a[32], b[32], c[32];
        gc3_mem_held(&h);
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s freed: its %d plan(s) took %s per rank; gc3 now holds %s in this process "
                            "(%lld region(s), %lld peer mapping(s)), %s waiting to be freed", m->mem_name,
                            m->mem_plans, gc3_mem_format(m->mem_peak, a, sizeof(a)), gc3_mem_format(h.device, b, sizeof(b)),
                            (long long)h.regions, (long long)h.mappings, gc3_mem_format(h.deferred, c, sizeof(c)));
    }
    free(m->node);
    MCA_COLL_GC3_INTERCEPTED(GC3_RELEASE_PREV)
    pthread_mutex_destroy(&m->lock);
}

OBJ_CLASS_INSTANCE(mca_coll_gc3_module_t, mca_coll_base_module_t, mca_coll_gc3_module_construct,
                   mca_coll_gc3_module_destruct);

#define GC3_SAVE_PREV(name, ...)                                                                   \
    m->prev_##name          = comm->c_coll->coll_##name;                                           \
    m->prev_##name##_module = comm->c_coll->coll_##name##_module;                                  \
    if (m->prev_##name##_module != NULL) {                                                         \
        OBJ_RETAIN(m->prev_##name##_module);                                                       \
    } else {                                                                                       \
        opal_output_verbose(2, mca_coll_gc3_component.output,                                      \
                            "coll:gc3: comm %s: no previous " #name " to delegate to", comm->c_name); \
    }

static int mca_coll_gc3_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    MCA_COLL_GC3_INTERCEPTED(GC3_SAVE_PREV)
    m->comm = comm;
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: enabled on comm %s (%d ranks)", comm->c_name,
                        ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

int mca_coll_gc3_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    return OMPI_SUCCESS;
}

#define GC3_INSTALL(name, ...) m->super.coll_##name = mca_coll_gc3_##name;

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
    MCA_COLL_GC3_INTERCEPTED(GC3_INSTALL)
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: comm %s: query, priority %d", comm->c_name,
                        *priority);
    return &m->super;
}
