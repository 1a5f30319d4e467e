/* coll/gc3: which way a call goes. gc3 runs a call itself when its buffers are memory of the
 * backend's (device memory of this rank's GPU; host memory with coll_gc3_backend=host) and the
 * collective's argument builder takes it (coll_gc3_<collective>.c); a call on device buffers it
 * does not run is staged through host memory, passed on as it is or fails (coll_gc3_fallback);
 * host buffers go to the previous module untouched. */
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "ompi/datatype/ompi_datatype.h"
#if defined(OPEN_MPI) && OPEN_MPI
#include "mpi-ext.h" /* MPIX_Query_cuda_support, where Open MPI has its CUDA extension */
#endif

/* The component's table: the collectives gc3 runs (mca_coll_gc3_coll_t, coll_gc3.h). A collective
 * gc3 runs is a descriptor of libgpuir (gc3_coll_desc), its generators and rules, and a row here
 * with its functions in coll_gc3_<name>.c. */
/* clang-format off */
const mca_coll_gc3_coll_t mca_coll_gc3_colls[] = {
    /* coll                    name                    enable's help adds */
    {GC3_COLL_ALLREDUCE,      "allreduce",            NULL},
    {GC3_COLL_ALLTOALL,       "alltoall",             "and MPI_Alltoallv, MPI_Ialltoallv"},
    {GC3_COLL_ALLGATHER,      "allgather",            "and MPI_Allgatherv, MPI_Iallgatherv"},
    {GC3_COLL_REDUCE_SCATTER, "reduce_scatter_block", "out of place, and MPI_Reduce_scatter, MPI_Ireduce_scatter"},
    {GC3_COLL_BCAST,          "bcast",                NULL},
    {GC3_COLL_REDUCE,         "reduce",               NULL},
    {GC3_COLL_GATHER,         "gather",               "and MPI_Gatherv, their nonblocking and persistent forms"},
    {GC3_COLL_SCATTER,        "scatter",              "and MPI_Scatterv, their nonblocking and persistent forms"},
    {GC3_COLL_SCAN,           "scan",                 NULL},
    {GC3_COLL_EXSCAN,         "exscan",               NULL},
};
/* clang-format on */
const int mca_coll_gc3_ncolls = (int)(sizeof(mca_coll_gc3_colls) / sizeof(mca_coll_gc3_colls[0]));

const mca_coll_gc3_coll_t *mca_coll_gc3_coll(gc3_coll_t coll)
{
    for (int i = 0; i < mca_coll_gc3_ncolls; i++) {
        if (mca_coll_gc3_colls[i].coll == coll) {
            return &mca_coll_gc3_colls[i];
        }
    }
    return NULL;
}

const char *mca_coll_gc3_colls_text(void)
{
    static char text[256]; /* made once, at the component's open (mca_coll_gc3_register) */

    if (text[0] == '\0') {
        for (int i = 0; i < mca_coll_gc3_ncolls; i++) {
            size_t len = strlen(text);
            snprintf(text + len, sizeof(text) - len, "%s%s",
                     i == 0                         ? ""
                     : i == mca_coll_gc3_ncolls - 1 ? " and "
                                                    : ", ",
                     mca_coll_gc3_colls[i].name);
        }
    }
    return text;
}

int mca_coll_gc3_staged(mca_coll_gc3_bufs_t bufs, const void *sbuf, const void *rbuf, int root,
                        struct ompi_communicator_t *comm, const char *name, int *rc_p)
{
    *rc_p = OMPI_SUCCESS;
    return mca_coll_gc3_device_call(bufs, sbuf, rbuf, root, comm) && mca_coll_gc3_stage_call(comm, name, rc_p);
}

int mca_coll_gc3_device_call(mca_coll_gc3_bufs_t bufs, const void *sbuf, const void *rbuf, int root,
                             struct ompi_communicator_t *comm)
{
    const int at_root = root >= 0 && ompi_comm_rank(comm) == root;

    switch (bufs) {
    case MCA_COLL_GC3_BUFS_ROOT_RECV:
        return mca_coll_gc3_is_device(sbuf) || (at_root && mca_coll_gc3_is_device(rbuf));
    case MCA_COLL_GC3_BUFS_ROOT_SEND:
        return (at_root && mca_coll_gc3_is_device(sbuf)) || mca_coll_gc3_is_device(rbuf);
    default:
        return mca_coll_gc3_is_device(sbuf) || mca_coll_gc3_is_device(rbuf);
    }
}

gc3_mem_t mca_coll_gc3_classify(const void *ptr, int *device_p)
{
    static int told; /* (a race only repeats the line) */
    if (!told) {
        told = 1;
        if (MCA_COLL_GC3_JOB_SAYS())
            opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: CUDA driver %s",
                                gc3_mem_driver() ? "loaded: device buffers are recognised"
                                                 : "not available: every buffer is host memory");
    }
    *device_p = -1;
    return ptr == MPI_IN_PLACE ? GC3_MEM_HOST : gc3_mem_classify(ptr, device_p);
}

int mca_coll_gc3_memcpy(void *dst, const void *src, size_t bytes)
{
    if (bytes != 0 && !gc3_mem_driver()) {
        memcpy(dst, src, bytes); /* without a driver every buffer is host memory (coll_gc3_stage_host's too) */
        return OMPI_SUCCESS;
    }
    switch (gc3_mem_copy(dst, src, bytes)) {
    case GC3_OK:
        return OMPI_SUCCESS;
    case GC3_ERR_UNSUPPORTED:
        return OMPI_ERR_NOT_AVAILABLE;
    default:
        return OMPI_ERROR;
    }
}

int mca_coll_gc3_passed_on(struct ompi_communicator_t *comm, const char *coll, const char *why)
{
    mca_coll_gc3_verbose_once(2, comm, "coll:gc3: comm %s: MPI_%c%s passed on: %s", comm->c_name,
                              mca_coll_gc3_mpi_initial(coll), coll + 1, why);
    return 0;
}

int mca_coll_gc3_one_rank(struct ompi_communicator_t *comm, const char *coll)
{
    mca_coll_gc3_verbose_once(2, comm,
                              "coll:gc3: comm %s: MPI_%c%s on a communicator of one rank: nothing to exchange, Open "
                              "MPI's component copies",
                              comm->c_name, mca_coll_gc3_mpi_initial(coll), coll + 1);
    return 0;
}

int mca_coll_gc3_passed_on_not_run(struct ompi_communicator_t *comm, const char *coll)
{
    char why[320];

    gc3_snprintf_cut(why, sizeof(why), "gc3 runs %s only", mca_coll_gc3_colls_text());
    return mca_coll_gc3_passed_on(comm, coll, why);
}

int mca_coll_gc3_args_reduction(const mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, const char *name,
                                struct ompi_datatype_t *dt, size_t count, struct ompi_op_t *op)
{
    char why[160];

    if (mca_coll_gc3_map_signature(dt, count, &a->dtype, &a->count) && mca_coll_gc3_map_op(op, &a->op) &&
        gc3_op_valid(a->op, a->dtype)) {
        return 1;
    }
    gc3_snprintf_cut(why, sizeof(why), "datatype %s with this op: a user-defined or unsupported op or datatype",
                     dt->name);
    return mca_coll_gc3_passed_on(m->comm, name, why);
}

int mca_coll_gc3_args_usable(const mca_coll_gc3_module_t *m, const mca_coll_gc3_args_t *a, const char *call,
                             gc3_coll_t coll, long count)
{
    char why[96];

    (void)a;
    if (!mca_coll_gc3_component.enable[coll]) {
        gc3_snprintf_cut(why, sizeof(why), "coll_gc3_enable_%s is false", mca_coll_gc3_coll(coll)->name);
        return mca_coll_gc3_passed_on(m->comm, call, why);
    }
    if (count <= 0) {
        return mca_coll_gc3_passed_on(m->comm, call, "count 0, nothing to move");
    }
    return 1;
}

int mca_coll_gc3_is_device(const void *ptr)
{
    int dev;
    if (ptr == NULL || ptr == MPI_IN_PLACE) {
        return 0;
    }
    if (mca_coll_gc3_component.stage_host) {
        return 1; /* test feature: host memory plays the device */
    }
    return mca_coll_gc3_classify(ptr, &dev) != GC3_MEM_HOST;
}

/* Whether this Open MPI takes device buffers itself (CUDA-aware), as it says in this process:
 * MPIX_Query_cuda_support() of its CUDA extension (mpi-ext.h), asked at run time, not at build
 * time (5.0: 1 when its CUDA accelerator component is in use, so not without a driver; 4.1: built
 * with CUDA and opal_cuda_support true). *why: how it said so. */
static int mca_coll_gc3_ompi_cuda_aware(const char **why)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    if (MPIX_Query_cuda_support()) {
        *why = "this Open MPI is CUDA-aware (MPIX_Query_cuda_support() is 1)";
        return 1;
    }
    *why = MPIX_CUDA_AWARE_SUPPORT
               ? "this Open MPI was built with CUDA but is not CUDA-aware in this process "
                 "(MPIX_Query_cuda_support() is 0; 5.0: no CUDA driver; 4.1: opal_cuda_support false)"
               : "this Open MPI is not CUDA-aware (built without CUDA: MPIX_Query_cuda_support() is 0)";
#else
    *why = "this Open MPI is not CUDA-aware as far as gc3 can tell (its mpi-ext.h has no MPIX_Query_cuda_support)";
#endif
    return 0;
}

/* What coll_gc3_fallback does with device buffers of calls gc3 does not run, said once (verbose 1). */
static void gc3_fallback_say(mca_coll_gc3_fallback_t set, mca_coll_gc3_fallback_t resolved, const char *why)
{
    if (set != MCA_COLL_GC3_FALLBACK_AUTO) {
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: device buffers of calls gc3 does not run are %s (coll_gc3_fallback %s)",
                            set == MCA_COLL_GC3_FALLBACK_PASS    ? "passed on to Open MPI's next coll component"
                            : set == MCA_COLL_GC3_FALLBACK_ERROR ? "refused: such calls fail"
                                                                 : "staged through host memory",
                            set == MCA_COLL_GC3_FALLBACK_PASS    ? "pass"
                            : set == MCA_COLL_GC3_FALLBACK_ERROR ? "error"
                                                                 : "stage");
    } else {
        if (why == NULL) {
            (void)mca_coll_gc3_ompi_cuda_aware(&why);
        }
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: coll_gc3_fallback auto: %s, so device buffers of calls gc3 does not run "
                            "are %s",
                            why,
                            resolved == MCA_COLL_GC3_FALLBACK_PASS
                                ? "passed on to Open MPI's next coll component (blocking calls; a nonblocking "
                                  "one runs as its blocking form, as Open MPI's nonblocking collectives take no "
                                  "device buffers)"
                                : "staged through host memory (--mca coll_gc3_fallback pass would give them to "
                                  "Open MPI as they are: only for a CUDA-aware Open MPI)");
    }
}

/* coll_gc3_fallback as it applies: the parameter, or for auto what this Open MPI says (asked once
 * per process; the first call that asks says which and why at verbose 1 if the process is rank 0
 * of the call's communicator, every rank at verbose 3; later calls never). */
mca_coll_gc3_fallback_t mca_coll_gc3_fallback(struct ompi_communicator_t *comm, int nonblocking)
{
    static int                     said;
    static mca_coll_gc3_fallback_t resolved = MCA_COLL_GC3_FALLBACK_AUTO; /* (a race only asks twice) */
    const mca_coll_gc3_fallback_t  set      = (mca_coll_gc3_fallback_t)mca_coll_gc3_component.fallback;
    const char                    *why      = NULL;

    if (set != MCA_COLL_GC3_FALLBACK_AUTO) {
        resolved = set;
    } else if (resolved == MCA_COLL_GC3_FALLBACK_AUTO) {
        resolved = mca_coll_gc3_ompi_cuda_aware(&why) ? MCA_COLL_GC3_FALLBACK_PASS : MCA_COLL_GC3_FALLBACK_STAGE;
    }
    if (!said && mca_coll_gc3_component.verbose >= 1) {
        said = 1; /* (the first call decides: a process that is not its communicator's rank 0 stays silent) */
        if (MCA_COLL_GC3_SAYS(comm)) {
            gc3_fallback_say(set, resolved, why);
        }
    }
    /* auto's pass is for blocking calls: Open MPI's nonblocking collectives (libnbc) are not
     * CUDA-aware even in a CUDA-aware build, so such a call runs as its blocking form */
    return set == MCA_COLL_GC3_FALLBACK_AUTO && nonblocking && resolved == MCA_COLL_GC3_FALLBACK_PASS
               ? MCA_COLL_GC3_FALLBACK_STAGE
               : resolved;
}

/* stage_call and stage_call_nb: nb, a nonblocking call (its previous module's nonblocking form on
 * the host copies) */
static int gc3_stage_call(struct ompi_communicator_t *comm, const char *coll, int nb, int *rc_p)
{
    const int auto_set = mca_coll_gc3_component.fallback == MCA_COLL_GC3_FALLBACK_AUTO;

    switch (mca_coll_gc3_fallback(comm, nb)) {
    case MCA_COLL_GC3_FALLBACK_PASS:
        mca_coll_gc3_verbose_once(
            2, comm, "coll:gc3: comm %s: %s on device buffers: passed on as they are (coll_gc3_fallback=%s)",
            comm->c_name, coll, auto_set ? "auto: a CUDA-aware Open MPI" : "pass");
        *rc_p = OMPI_SUCCESS;
        return 0;
    case MCA_COLL_GC3_FALLBACK_ERROR:
        opal_output(0,
                    "coll:gc3: comm %s rank %d: %s on device buffers is not run by gc3 (set coll_gc3_verbose=2 "
                    "for why) and coll_gc3_fallback=error: the call fails",
                    comm->c_name, ompi_comm_rank(comm), coll);
        *rc_p = MPI_ERR_UNSUPPORTED_OPERATION; /* an MPI class: Open MPI returns it as it is */
        return 0;
    default:
        mca_coll_gc3_verbose_once(2, comm,
                                  nb ? "coll:gc3: comm %s: %s on device buffers: Open MPI's nonblocking collective on "
                                       "host copies, copied back when it completes"
                                     : "coll:gc3: comm %s: %s on device buffers: staged through host memory",
                                  comm->c_name, coll);
        *rc_p = OMPI_SUCCESS;
        return 1;
    }
}

int mca_coll_gc3_stage_call(struct ompi_communicator_t *comm, const char *coll, int *rc_p)
{
    return gc3_stage_call(comm, coll, 0, rc_p);
}

int mca_coll_gc3_stage_call_nb(struct ompi_communicator_t *comm, const char *coll, int *rc_p)
{
    return gc3_stage_call(comm, coll, 1, rc_p);
}
