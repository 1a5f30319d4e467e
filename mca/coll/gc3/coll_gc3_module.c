/* coll/gc3: the per-communicator module.
 *
 * Delegation as Open MPI's own interposing components do it: at enable, remember and retain the
 * previous module's function for every collective gc3 intercepts (a missing one makes that
 * call report MPI_ERR_NOT_SUPPORTED instead of crashing). Executors and plans are made lazily,
 * at the first call that needs them (coll_gc3_setup.c), never in comm_query or at enable: an
 * application may select its GPU after MPI_Init. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#include <dlfcn.h>
#include <limits.h>
#include <string.h>
#include <pthread.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/mca/base/mca_base_var.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/request/request.h"
#include "ompi/datatype/ompi_datatype.h"

static void mca_coll_gc3_module_construct(mca_coll_gc3_module_t *m)
{
    memset((char *)m + sizeof(m->super), 0, sizeof(*m) - sizeof(m->super));
    m->device    = -1;
    m->gpu_share = INT_MAX;
    pthread_mutex_init(&m->lock, NULL);
    gc3_diag_init(&m->setup.diag);
}

#define GC3_RELEASE_PREV(name, ...)                                                                                    \
    if (m->prev_##name##_module != NULL) {                                                                             \
        OBJ_RELEASE(m->prev_##name##_module);                                                                          \
        m->prev_##name##_module = NULL;                                                                                \
    }

static void mca_coll_gc3_module_destruct(mca_coll_gc3_module_t *m)
{
    if (m->comm != NULL) {
        mca_coll_gc3_quiesce(m); /* no call may outlive its plan */
    }
    mca_coll_gc3_route_fini(m);       /* its temporaries, its agreements still pending */
    mca_coll_gc3_graveyard_release(); /* persistent requests the application freed */
    mca_coll_gc3_breakdown_flush(m);
    mca_coll_gc3_setup_fini(m);
    mca_coll_gc3_entries_release(m);
    for (int b = 0; b < MCA_COLL_GC3_NBACKEND; b++) {
        gc3_exec_destroy(m->exec[b]);
    }
    /* what waited for a kernel in flight goes now if it can (else with the next call that ends) */
    (void)gc3_mem_release_deferred();
    if (m->mem.plans > 0 && m->mem.rank == 0) { /* (m->comm may be gone: see mca_coll_gc3_progress) */
        gc3_mem_held_t h;
        char           a[32], b[32], c[32];
        gc3_mem_held(&h);
        opal_output_verbose(
            1, mca_coll_gc3_component.output,
            "coll:gc3: comm %s freed: its %d plan(s) took %s per rank; gc3 now holds %s in this process "
            "(%lld region(s), %lld peer mapping(s)), %s waiting to be freed",
            m->mem.name, m->mem.plans, gc3_mem_format(m->mem.peak, a, sizeof(a)),
            gc3_mem_format(h.device, b, sizeof(b)), (long long)h.regions, (long long)h.mappings,
            gc3_mem_format(h.deferred, c, sizeof(c)));
    }
    free(m->node);
    MCA_COLL_GC3_INTERCEPTED(GC3_RELEASE_PREV)
    pthread_mutex_destroy(&m->lock);
}

OBJ_CLASS_INSTANCE(mca_coll_gc3_module_t, mca_coll_base_module_t, mca_coll_gc3_module_construct,
                   mca_coll_gc3_module_destruct);

#define GC3_SAVE_PREV(name, ...)                                                                                       \
    m->prev_##name          = comm->c_coll->coll_##name;                                                               \
    m->prev_##name##_module = comm->c_coll->coll_##name##_module;                                                      \
    if (m->prev_##name##_module != NULL) {                                                                             \
        OBJ_RETAIN(m->prev_##name##_module);                                                                           \
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

#define GC3_INSTALL(name, ...)       m->super.coll_##name = mca_coll_gc3_##name;
#define GC3_INSTALL_INTER(name, ...) m->super.coll_##name = mca_coll_gc3_inter_##name;

/* The coll component whose function f is (its DSO mca_coll_NAME.so), into name; 0 when unknown
 * (a component built into libmpi). */
static int gc3_component_of(void (*f)(void), char *name, size_t len)
{
    Dl_info     info;
    const char *base, *dot;

    if (f == NULL || dladdr((void *)f, &info) == 0 || info.dli_fname == NULL) {
        return 0;
    }
    base = strrchr(info.dli_fname, '/');
    base = base != NULL ? base + 1 : info.dli_fname;
    if (strncmp(base, "mca_coll_", 9) != 0 || (dot = strchr(base + 9, '.')) == NULL) {
        return 0;
    }
    gc3_snprintf_cut(name, len, "%.*s", (int)(dot - base - 9), base + 9);
    return 1;
}

/* Open MPI gives each collective of a communicator to the coll component of the highest priority
 * that provides it; below tuned's (30) gc3 is asked, enabled and then runs nothing, without a
 * word. Once MPI_COMM_WORLD's selection is over (at the next communicator's, MPI_COMM_SELF's in
 * MPI_Init), the job's first process says at verbose 1 whether gc3 lost its MPI_Allreduce there,
 * to which component, and how to enable it. */
static void gc3_say_if_outranked(void)
{
    static int                  said;
    struct ompi_communicator_t *world = &ompi_mpi_comm_world.comm;
    mca_coll_base_module_t     *winner;
    char                        name[64] = "another coll component", prio[112] = "";

    int alltoall_gc3;

    if (said || mca_coll_gc3_component.verbose < 1 || mca_coll_gc3_component.priority < 0 || world->c_coll == NULL ||
        (winner = world->c_coll->coll_allreduce_module) == NULL || ompi_comm_size(world) < 2) {
        return; /* (a negative priority: gc3 turned off on purpose) */
    }
    said = 1;
    if (winner->coll_module_enable == mca_coll_gc3_module_enable || !MCA_COLL_GC3_JOB_SAYS()) {
        return; /* gc3 runs it */
    }
    alltoall_gc3 = world->c_coll->coll_alltoall_module != NULL &&
                   world->c_coll->coll_alltoall_module->coll_module_enable == mca_coll_gc3_module_enable;
    if (gc3_component_of((void (*)(void))world->c_coll->coll_allreduce, name, sizeof(name))) {
        const int *value = NULL;
        int        idx   = mca_base_var_find("ompi", "coll", name, "priority");
        if (idx >= 0 && mca_base_var_get_value(idx, &value, NULL, NULL) == OPAL_SUCCESS && value != NULL) {
            gc3_snprintf_cut(prio, sizeof(prio), " (coll_%s_priority %d)", name, *value);
        }
    }
    opal_output(0,
                "coll:gc3: gc3 is loaded but runs %s on MPI_COMM_WORLD: its priority (coll_gc3_priority %d) "
                "is below that of %s%s, which Open MPI gives %s to. To use gc3, raise it above, e.g. "
                "--mca coll_gc3_priority 90",
                alltoall_gc3 ? "no MPI_Allreduce" : "nothing", mca_coll_gc3_component.priority, name, prio,
                alltoall_gc3 ? "MPI_Allreduce" : "the collectives");
}

mca_coll_base_module_t *mca_coll_gc3_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    mca_coll_gc3_module_t *m;

    if (comm != &ompi_mpi_comm_world.comm) {
        gc3_say_if_outranked();
    }
    if (mca_coll_gc3_component.priority < 0) {
        return NULL;
    }
    m = OBJ_NEW(mca_coll_gc3_module_t);
    if (m == NULL) {
        return NULL;
    }
    *priority                   = mca_coll_gc3_component.priority;
    m->super.coll_module_enable = mca_coll_gc3_module_enable;
    if (OMPI_COMM_IS_INTER(comm)) {
        /* gc3 runs nothing there: it stages the blocking collectives' device buffers (coll_gc3_inter.c) */
        MCA_COLL_GC3_INTER(GC3_INSTALL_INTER)
        return &m->super;
    }
    MCA_COLL_GC3_INTERCEPTED(GC3_INSTALL)
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: comm %s: query, priority %d", comm->c_name,
                        *priority);
    return &m->super;
}
