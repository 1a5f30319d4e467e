/* coll/gc3: the route of a call, the same on every rank (libgpuir's gc3_route.h says why and how),
 * and this rank's buffers adapted to it.
 *
 * A collective's argument builder decides from what all ranks share (collective, type signature and
 * counts, op, root, settings) whether gc3 may take a call, and records this rank's buffers
 * (mca_coll_gc3_args_buf). mca_coll_gc3_route_take then chooses the route from the memory kinds
 * the ranks agreed on (the communicator's route cache: an agreement is a small host allreduce of
 * Open MPI's, posted on the first call of a collective, size and root, and again every
 * coll_gc3_route_recheck calls), and adapts what is only this rank's: a buffer in other memory
 * than the route's (host, pinned, managed, another GPU's) or of a datatype with holes or an offset
 * is copied, packed if need be, into a contiguous temporary in the route's memory, and back after
 * the call (mca_coll_gc3_adapt_out). */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/runtime/opal_progress.h"
#include "ompi/datatype/ompi_datatype.h"

void mca_coll_gc3_args_begin(mca_coll_gc3_args_t *a, gc3_coll_t coll, int root, const char *name)
{
    memset(a, 0, sizeof(*a));
    a->name     = name;
    a->entry_ns = mca_coll_gc3_breakdown_now();
    a->coll     = coll;
    a->root     = root;
    a->backend  = -1;
    a->route    = GC3_ROUTE_PREV;
}

/* The GC3_KIND_* of one buffer's memory. */
static unsigned gc3_kind_of(const mca_coll_gc3_module_t *m, const void *ptr)
{
    int dev = -1;

    if (mca_coll_gc3_component.stage_host) {
        return GC3_KIND_DEVICE; /* test feature: host memory plays the device */
    }
    switch (mca_coll_gc3_classify(ptr, &dev)) {
    case GC3_MEM_MANAGED:
        return GC3_KIND_OTHER;
    case GC3_MEM_DEVICE:
        return dev == (m->device >= 0 ? m->device : gc3_gpu_current()) ? GC3_KIND_DEVICE : GC3_KIND_OTHER;
    default:
        return GC3_KIND_HOST;
    }
}

void mca_coll_gc3_args_buf(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int slot, const void *user,
                           struct ompi_datatype_t *dt, size_t count, int in, int out)
{
    mca_coll_gc3_abuf_t *b     = &a->ad.b[slot];
    size_t               dsize = 0;

    memset(b, 0, sizeof(*b));
    if (user == MPI_IN_PLACE) {
        a->ad.inplace_send = slot == 0;
        return;
    }
    if (user == NULL || dt == NULL) {
        return; /* none on this rank (a reduce's non-root receive buffer) */
    }
    ompi_datatype_type_size(dt, &dsize);
    b->user  = (void *)user;
    b->dt    = dt;
    b->count = count;
    b->bytes = count * dsize;
    b->in    = in;
    b->out   = out;
    b->run   = (char *)user;
    b->kind  = gc3_kind_of(m, user);
    a->kinds |= b->kind;
    a->device |= b->kind != GC3_KIND_HOST;
}

/* ---------------------------------------------------------------- temporaries */

static char *gc3_tmp_take(mca_coll_gc3_module_t *m, size_t bytes, int device)
{
    const int n = (int)(sizeof(m->spare) / sizeof(m->spare[0]));
    void     *p = NULL;

    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < n; i++) {
        if (m->spare[i].p != NULL && m->spare[i].device == device && m->spare[i].bytes >= bytes) {
            p             = m->spare[i].p;
            m->spare[i].p = NULL;
            break;
        }
    }
    pthread_mutex_unlock(&m->lock);
    if (p != NULL) {
        return p;
    }
    if (!device) {
        return malloc(bytes > 0 ? bytes : 1);
    }
    return gc3_mem_alloc_device(m->device >= 0 ? m->device : gc3_gpu_current(), bytes, &p) == GC3_OK ? p : NULL;
}

static void gc3_tmp_free(char *p, int device)
{
    if (device) {
        gc3_mem_free_device(p);
    } else {
        free(p);
    }
}

/* kept for the next call (the largest ones), else freed */
static void gc3_tmp_give(mca_coll_gc3_module_t *m, char *p, size_t bytes, int device)
{
    const int n = (int)(sizeof(m->spare) / sizeof(m->spare[0]));
    int       k = -1;

    if (p == NULL) {
        return;
    }
    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < n; i++) {
        if (m->spare[i].p == NULL) {
            k = i;
            break;
        }
        if (k < 0 || m->spare[i].bytes < m->spare[k].bytes) {
            k = i;
        }
    }
    if (m->spare[k].p != NULL && m->spare[k].bytes >= bytes) {
        k = -1; /* every spare is larger: this one goes */
    } else if (m->spare[k].p != NULL) {
        char *old     = m->spare[k].p;
        int   dev     = m->spare[k].device;
        m->spare[k].p = NULL;
        pthread_mutex_unlock(&m->lock);
        gc3_tmp_free(old, dev);
        pthread_mutex_lock(&m->lock);
        if (m->spare[k].p != NULL) {
            k = -1;
        }
    }
    if (k >= 0) {
        m->spare[k].p      = p;
        m->spare[k].bytes  = bytes;
        m->spare[k].device = device;
        p                  = NULL;
    }
    pthread_mutex_unlock(&m->lock);
    if (p != NULL) {
        gc3_tmp_free(p, device);
    }
}

/* ---------------------------------------------------------------- adaptation */

/* A host image of b's span (its data where b->user has it, holes included): b->user itself when it
 * is host memory, else a copy (*copy_p, malloc'ed; read = copy the span in). Its base: where
 * b->user would be. */
static int gc3_host_image(mca_coll_gc3_abuf_t *b, int read, char **base_p, char **copy_p)
{
    ptrdiff_t tlb;
    size_t    span = mca_coll_gc3_span(b->dt, b->count, &tlb);

    *copy_p = NULL;
    if (b->kind == GC3_KIND_HOST) {
        *base_p = b->user;
        return OMPI_SUCCESS;
    }
    *copy_p = malloc(span + 1);
    if (*copy_p == NULL) {
        return OMPI_ERR_OUT_OF_RESOURCE;
    }
    *base_p = *copy_p - tlb;
    return read ? mca_coll_gc3_memcpy(*copy_p, (char *)b->user + tlb, span) : OMPI_SUCCESS;
}

/* b's data into b->tmp (contiguous): copied where b's datatype is contiguous, else packed on the
 * host (b's span copied to host memory first where it is not). */
static int gc3_adapt_buf_in(mca_coll_gc3_abuf_t *b, int contiguous)
{
    char     *base, *copy, *packed = NULL;
    ptrdiff_t tlb;
    int       rc;

    if (contiguous) {
        (void)mca_coll_gc3_span(b->dt, b->count, &tlb);
        return mca_coll_gc3_memcpy(b->tmp, (char *)b->user + tlb, b->bytes);
    }
    if ((rc = gc3_host_image(b, 1, &base, &copy)) != OMPI_SUCCESS) {
        free(copy);
        return rc;
    }
    if (b->tmp_device) {
        packed = malloc(b->bytes + 1);
        rc     = packed != NULL ? OMPI_SUCCESS : OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (rc == OMPI_SUCCESS) {
        rc = ompi_datatype_sndrcv(base, (int32_t)b->count, b->dt, packed != NULL ? packed : b->tmp, (int32_t)b->bytes,
                                  MPI_PACKED);
    }
    if (rc == OMPI_SUCCESS && packed != NULL) {
        rc = mca_coll_gc3_memcpy(b->tmp, packed, b->bytes);
    }
    free(packed);
    free(copy);
    return rc;
}

/* b->tmp's data back into b (the reverse of gc3_adapt_buf_in; the holes of b's datatype keep what
 * they held). */
static int gc3_adapt_buf_out(mca_coll_gc3_abuf_t *b, int contiguous)
{
    char     *base, *copy, *packed = NULL;
    ptrdiff_t tlb;
    size_t    span = mca_coll_gc3_span(b->dt, b->count, &tlb);
    int       rc;

    if (contiguous) {
        return mca_coll_gc3_memcpy((char *)b->user + tlb, b->tmp, b->bytes);
    }
    if ((rc = gc3_host_image(b, 1, &base, &copy)) != OMPI_SUCCESS) {
        free(copy);
        return rc;
    }
    if (b->tmp_device) {
        packed = malloc(b->bytes + 1);
        rc     = packed != NULL ? mca_coll_gc3_memcpy(packed, b->tmp, b->bytes) : OMPI_ERR_OUT_OF_RESOURCE;
    }
    if (rc == OMPI_SUCCESS) {
        rc = ompi_datatype_sndrcv(packed != NULL ? packed : b->tmp, (int32_t)b->bytes, MPI_PACKED, base,
                                  (int32_t)b->count, b->dt);
    }
    if (rc == OMPI_SUCCESS && copy != NULL) {
        rc = mca_coll_gc3_memcpy((char *)b->user + tlb, copy, span);
    }
    free(packed);
    free(copy);
    return rc;
}

/* Whether b can be given to the runtime as it is on `route`, and where its data starts. */
static int gc3_usable_as_is(const mca_coll_gc3_abuf_t *b, gc3_route_t route, int *contiguous)
{
    ptrdiff_t tlb;

    (void)mca_coll_gc3_span(b->dt, b->count, &tlb);
    *contiguous = b->count == 0 || ompi_datatype_is_contiguous_memory_layout(b->dt, (int32_t)b->count);
    /* (a process without a CUDA driver keeps host memory on gc3's CUDA route: it can only be there
     * before the first agreement, and the communicator's set-up then sends every rank's call to
     * the host-staged exchange) */
    return *contiguous && tlb == 0 &&
           b->kind == (route == GC3_ROUTE_CUDA && gc3_mem_driver() ? GC3_KIND_DEVICE : GC3_KIND_HOST);
}

/* this rank's buffers in the route's memory, contiguous */
static int gc3_adapt_in(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a)
{
    const int device = a->route == GC3_ROUTE_CUDA && gc3_mem_driver();
    int       rc     = OMPI_SUCCESS;

    a->ad.adapted = 1;
    for (int i = 0; i < 2 && rc == OMPI_SUCCESS; i++) {
        mca_coll_gc3_abuf_t *b = &a->ad.b[i];
        int                  contiguous;
        if (b->user == NULL || gc3_usable_as_is(b, (gc3_route_t)a->route, &contiguous)) {
            continue;
        }
        b->tmp_device = device;
        b->tmp_bytes  = b->bytes;
        b->tmp        = gc3_tmp_take(m, b->bytes, device);
        if (b->tmp == NULL) {
            rc = OMPI_ERR_OUT_OF_RESOURCE;
            break;
        }
        b->run = b->tmp;
        /* an output is copied in too when it is also an input (in place) */
        if (b->in) {
            rc = gc3_adapt_buf_in(b, contiguous);
        }
    }
    return rc;
}

int mca_coll_gc3_adapt_out(mca_coll_gc3_module_t *m, mca_coll_gc3_adapt_t *ad, int rc)
{
    if (!ad->adapted) {
        return rc;
    }
    for (int i = 0; i < 2; i++) {
        mca_coll_gc3_abuf_t *b = &ad->b[i];
        int                  contiguous;
        if (b->tmp == NULL) {
            continue;
        }
        contiguous = b->count == 0 || ompi_datatype_is_contiguous_memory_layout(b->dt, (int32_t)b->count);
        if (rc == OMPI_SUCCESS && b->out) {
            rc = gc3_adapt_buf_out(b, contiguous);
        }
        gc3_tmp_give(m, b->tmp, b->tmp_bytes, b->tmp_device);
        b->tmp = NULL;
        b->run = b->user;
    }
    ad->adapted = 0;
    return rc;
}

/* ---------------------------------------------------------------- the route */

/* this process: its CUDA driver, and whether it can run gc3's CUDA backend. GC3_TEST_ROUTE_DRIVER=1
 * (a test setting) says there is a driver where there is none, so that a machine without GPUs takes
 * the agreements a GPU machine takes on host buffers (one per key, rechecked) */
static unsigned gc3_process_kinds(void)
{
    static int pretend = -1;
    unsigned   k       = 0;

    if (pretend < 0) {
        const char *v = getenv("GC3_TEST_ROUTE_DRIVER");
        pretend       = v != NULL && v[0] == '1';
    }
    if (gc3_mem_driver() || pretend) {
        k |= GC3_KIND_DRIVER;
    }
    if (!gc3_mem_driver() || !gc3_exec_backend_available(GC3_BACKEND_CUDA) ||
        mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST) {
        k |= GC3_KIND_NOCUDA;
    }
    return k;
}

/* The agreement (gc3_route_ops_t): Open MPI's nonblocking allreduce (BOR) of one host word of
 * the previous module, posted on every rank in the same call of a key; waited for with progress
 * alone (every rank posted it). */
static gc3_status_t gc3_agreement_post(void *ctx, gc3_route_slot_t *s, unsigned kinds, void **req_p)
{
    mca_coll_gc3_module_t *m   = ctx;
    ompi_request_t        *req = NULL;

    s->result = kinds;
    if (m->prev_iallreduce == NULL || m->prev_iallreduce(MPI_IN_PLACE, &s->result, 1, MPI_UNSIGNED, MPI_BOR, m->comm,
                                                         &req, m->prev_iallreduce_module) != OMPI_SUCCESS) {
        return GC3_ERR_UNSUPPORTED;
    }
    *req_p = req;
    return GC3_OK;
}

/* Waited for by testing it and driving progress, not with ompi_request_wait: a nonblocking call may come
 * from inside Open MPI's progress (its communicator-id allocation, MPI_Comm_dup, calls MPI_Iallreduce
 * from a progress callback), and ompi_request_wait there, under MPI_THREAD_MULTIPLE (mpi4py's default),
 * sleeps on a condition only the progress engine it is nested in would signal: mpi4py's
 * comm.allreduce of a Python object hung in its first MPI_Comm_dup on a GPU machine. */
/* Bounded by coll_gc3_timeout: ranks that called with different sizes or roots (an erroneous program) agree on
 * different keys, and a rank whose key was known already never joins; the request is then left to Open MPI
 * (a collective cannot be cancelled) and the caller fails the call. */
static gc3_status_t gc3_agreement_wait(void *ctx, gc3_route_slot_t *s)
{
    mca_coll_gc3_module_t *m     = ctx;
    ompi_request_t        *req   = (ompi_request_t *)s->req;
    const double           limit = mca_coll_gc3_component.timeout, t0 = mca_coll_gc3_now();
    int                    done = 0, rc, polls = 0;

    while ((rc = ompi_request_test(&req, &done, MPI_STATUS_IGNORE)) == OMPI_SUCCESS && !done) {
        if (limit > 0 && (++polls & 255) == 0 && mca_coll_gc3_now() - t0 > limit) {
            return GC3_ERR_TIMEOUT;
        }
        opal_progress();
    }

    if (rc != OMPI_SUCCESS) {
        opal_output(0, "coll:gc3: comm %s rank %d: the agreement on the ranks' memory kinds failed (%d)",
                    m->comm->c_name, ompi_comm_rank(m->comm), rc);
        return GC3_ERR_IO;
    }
    return GC3_OK;
}

static const gc3_route_ops_t gc3_agreement = { gc3_agreement_post, gc3_agreement_wait };

/* The call's name for messages: its builder's ("alltoallv"), else its collective's. */
static const char *gc3_args_name(const mca_coll_gc3_args_t *a)
{
    return a->name != NULL ? a->name : gc3_coll_desc((gc3_coll_t)a->coll)->mpi_name;
}

/* Does gc3 take a call of this size on m at all? From the call and the settings alone. */
static int gc3_takes(mca_coll_gc3_module_t *m, const mca_coll_gc3_args_t *a)
{
    const char *name = gc3_args_name(a);

    if (ompi_comm_size(m->comm) < 2) { /* the previous module copies (staged on device buffers) */
        return mca_coll_gc3_one_rank(m->comm, name);
    }
    return mca_coll_gc3_within_max_bytes(m, name, a->bytes);
}

int mca_coll_gc3_within_max_bytes(mca_coll_gc3_module_t *m, const char *name, size_t bytes)
{
    char why[96];

    if (!mca_coll_gc3_above_max_bytes(bytes)) {
        return 1;
    }
    gc3_snprintf_cut(why, sizeof(why), "%zu bytes, above coll_gc3_max_bytes", bytes);
    return mca_coll_gc3_passed_on(m->comm, name, why);
}

/* The route of the call, the same on every rank: from the settings where they decide it, else from
 * the kinds the ranks agreed on for its key. 1 when the agreement timed out: the call fails here. */
static int gc3_route_agreed(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int how, gc3_route_t *route)
{
    gc3_status_t st;

    if (mca_coll_gc3_component.stage_host) {
        *route    = GC3_ROUTE_PREV; /* test feature: every buffer is staged around the previous module */
        a->agreed = GC3_KIND_DEVICE | GC3_KIND_NOCUDA;
        return 0;
    }
    if (mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST) {
        *route = GC3_ROUTE_HOST; /* every buffer goes to host memory: no agreement needed */
        return 0;
    }
    st = gc3_route_decide(&m->route, &gc3_agreement, m, gc3_route_key(a->coll, a->bytes, a->root),
                          a->kinds | gc3_process_kinds(), (unsigned)mca_coll_gc3_component.route_recheck,
                          how == MCA_COLL_GC3_CALL_BLOCKING, route, &a->agreed);
    if (st == GC3_ERR_TIMEOUT) {
        /* the others never joined: this call fails here (they fail theirs on their own: a message of
         * this rank's never comes, or their agreement times out too), and so does every later one */
        char why[192];
        gc3_snprintf_cut(why, sizeof(why),
                         "timeout after %.1f s: the other ranks did not join the agreement on the ranks' memory kinds "
                         "for a call of %zu bytes (they called with another size or root: an erroneous program)",
                         mca_coll_gc3_component.timeout, a->bytes);
        mca_coll_gc3_report_failure(m, gc3_args_name(a), why);
        m->unusable = 1; /* its request stays with Open MPI: a later agreement could match it */
        *route      = GC3_ROUTE_CUDA;
        return 1;
    }
    if (st != GC3_OK) {
        /* every rank alike: staged, as a call of device buffers gc3 does not run */
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s: no agreement on the ranks' memory kinds (%s): gc3 passes the call on",
                            m->comm->c_name, gc3_status_string(st));
        *route    = GC3_ROUTE_PREV;
        a->agreed = GC3_KIND_HOST | GC3_KIND_DEVICE | GC3_KIND_NOCUDA;
    }
    return 0;
}

/* gc3 is loaded, takes the collectives it runs, and passes them all on when the application's
 * buffers are host memory (a job without GPUs): at verbose 1 the first such call says why, once per
 * process, where the process is rank 0 of the call's communicator (every rank at verbose 3): once
 * per job when rank 0 of MPI_COMM_WORLD makes such a call first. (A race only repeats the line.) */
static void gc3_host_buffers_said(struct ompi_communicator_t *comm, const char *coll)
{
    static int said;

    if (said || mca_coll_gc3_component.verbose < 1 || !MCA_COLL_GC3_SAYS(comm)) {
        return;
    }
    said = 1;
    opal_output_verbose(1, mca_coll_gc3_component.output,
                        "coll:gc3: gc3 runs no call on host buffers with coll_gc3_backend auto (the first here: "
                        "MPI_%c%s on comm %s): it runs device buffers only (%s) and passes calls on host buffers on to "
                        "Open MPI's other coll components; --mca coll_gc3_backend host runs them with gc3's host "
                        "backend (for tests and demos: slower than Open MPI's own host collectives)",
                        mca_coll_gc3_mpi_initial(coll), coll + 1, comm->c_name,
                        gc3_mem_driver() ? "the CUDA driver is loaded" : "this process has no CUDA driver: no GPU");
}

/* why a call that gc3 may take goes to Open MPI's component (verbose) */
static void gc3_prev_said(mca_coll_gc3_module_t *m, const mca_coll_gc3_args_t *a, unsigned agreed)
{
    if (mca_coll_gc3_component.stage_host || mca_coll_gc3_component.verbose < 1) {
        return;
    }
    if (!(agreed & (GC3_KIND_DEVICE | GC3_KIND_OTHER))) {
        gc3_host_buffers_said(m->comm, a->name);
        mca_coll_gc3_passed_on(m->comm, a->name, "host buffers (gc3 runs them only with coll_gc3_backend=host)");
    } else {
        mca_coll_gc3_passed_on(m->comm, a->name,
                               "device buffers, and a rank cannot run gc3's CUDA backend (no CUDA driver, or gc3 "
                               "built without CUDA)");
    }
}

int mca_coll_gc3_route_take(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, int how)
{
    gc3_route_t route;
    int         rc;

    if (!gc3_takes(m, a)) {
        return 0;
    }
    if (gc3_route_agreed(m, a, how, &route)) {
        a->route   = route;
        a->backend = MCA_COLL_GC3_BACKEND_FAILED; /* the call fails here (reported) */
        a->vagree  = 0;                           /* (nobody to agree with) */
        return 1;
    }
    a->route = route;
    switch (route) {
    case GC3_ROUTE_CUDA:
        a->backend = GC3_BACKEND_CUDA;
        break;
    case GC3_ROUTE_HOST:
        a->backend = GC3_BACKEND_HOST;
        break;
    default:
        gc3_prev_said(m, a, a->agreed);
        return 0;
    }
    if (how == MCA_COLL_GC3_CALL_INIT) {
        return 1; /* a persistent init adapts nothing: each start does */
    }
    if ((rc = gc3_adapt_in(m, a)) != OMPI_SUCCESS) {
        /* every rank must still take the route: the call fails on this rank, reported */
        opal_output(0,
                    "coll:gc3: comm %s rank %d: %s: this rank's buffers could not be copied to the memory %s needs "
                    "(%d): out of memory?",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc((gc3_coll_t)a->coll)->mpi_name,
                    gc3_route_name(route), rc);
        (void)mca_coll_gc3_adapt_out(m, &a->ad, rc);
        a->backend = MCA_COLL_GC3_BACKEND_UNADAPTED; /* the call fails (mca_coll_gc3_try_run / try_start) */
    }
    return 1;
}

int mca_coll_gc3_init_passes(const mca_coll_gc3_args_t *a)
{
    if (a->route != GC3_ROUTE_PREV) {
        return 0; /* gc3's route, or not agreed yet (the starts decide) */
    }
    return a->agreed != 0 ? !(a->agreed & (GC3_KIND_DEVICE | GC3_KIND_OTHER)) : !a->device;
}

void mca_coll_gc3_route_fini(mca_coll_gc3_module_t *m)
{
    for (int i = 0; i < (int)(sizeof(m->spare) / sizeof(m->spare[0])); i++) {
        if (m->spare[i].p != NULL) {
            gc3_tmp_free(m->spare[i].p, m->spare[i].device);
            m->spare[i].p = NULL;
        }
    }
    /* an agreement still pending (the communicator freed right after a call): completed */
    if (m->comm != NULL) {
        gc3_route_drain(&m->route, &gc3_agreement, m);
    }
}

int mca_coll_gc3_stage_args(const mca_coll_gc3_args_t *a, struct ompi_communicator_t *comm, int nb, int *rc_p)
{
    *rc_p = OMPI_SUCCESS; /* (host memory: as it is) */
    return a->device &&
           (nb ? mca_coll_gc3_stage_call_nb(comm, a->name, rc_p) : mca_coll_gc3_stage_call(comm, a->name, rc_p));
}
