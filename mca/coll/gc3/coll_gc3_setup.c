/* coll/gc3: the set-up of a communicator, as a sequence of short phases none of which waits for
 * another rank (doc/design/nonblocking-setup.md). Calls need it in an order that is the same on
 * every rank (MPI's order of collectives on a communicator), so every rank queues the same jobs in
 * the same order and posts the same exchanges (coll_gc3_oob.c):
 *
 *   executor  SHAPE    this rank's host, GPU and its limits, executor made, settings hash
 *                      -> nodes, ranks per node, link class, block budget, settings agreed
 *   plan      AGREE    program generated (or read) and verified -> its hash and the call's key
 *             PREPARE  the runtime's preparation (gc3_exec_prepare_post/test: connection handles,
 *                      peers mapped, connections to other nodes)
 *             CONNECT  every rank says whether its connections are up
 *
 * This file runs the jobs and their phases; the phases themselves are coll_gc3_shape.c (SHAPE) and
 * coll_gc3_plan.c (AGREE, PREPARE, CONNECT), their records coll_gc3_agree.c, the rules
 * coll_gc3_select.c. Calls advance it (coll_gc3_request.c) and so does Open MPI's progress; blocking calls wait for
 * it. Every decision is taken from exchanged records, so every rank takes it alike. Each phase's
 * exchange is bounded by coll_gc3_timeout: past it, the communicator is unusable for gc3 (the
 * exchange cannot be cancelled) and the error names the rank, the communicator and what it waited
 * for. Nothing of this touches CUDA before a call on device buffers does (applications select
 * their GPU after MPI_Init). */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

enum { GC3_PHASE_NONE, GC3_PHASE_SHAPE, GC3_PHASE_AGREE, GC3_PHASE_PREPARE, GC3_PHASE_CONNECT };

/* The error record of a set-up that cannot go on (why NULL: reported before): the communicator is
 * unusable for gc3 from here on, every job is dropped (their calls fail, coll_gc3_request.c). */
static void gc3_setup_abandon(mca_coll_gc3_module_t *m, const char *call, const char *why)
{
    if (why != NULL) {
        mca_coll_gc3_report_failure(m, call, why);
    }
    m->unusable = 1;
    if (m->setup.prep != NULL) {
        gc3_exec_prepare_abandon(m->setup.prep);
        m->setup.prep = NULL;
    }
    /* a pending exchange stays pending (it cannot be cancelled); gc3's writes xrecv only when tested */
    m->setup.xreq = NULL;
    mca_coll_gc3_agree_release(m);
    m->oob.pending = NULL;
    for (int i = 0; i < m->setup.njobs; i++) {
        if (m->setup.jobs[i].kind == MCA_COLL_GC3_JOB_PLAN) {
            m->setup.jobs[i].entry->state = MCA_COLL_GC3_ENTRY_FAILED;
            mca_coll_gc3_set_text(&m->setup.jobs[i].entry->why, "its set-up did not finish");
        } else if (m->exec_state[m->setup.jobs[i].backend] == MCA_COLL_GC3_EXEC_SETTING) {
            m->exec_state[m->setup.jobs[i].backend] = MCA_COLL_GC3_EXEC_UNUSABLE;
            gc3_snprintf_cut(m->exec_why[m->setup.jobs[i].backend], sizeof(m->exec_why[0]),
                             "its set-up did not finish");
        }
    }
    m->setup.njobs = 0;
    m->setup.phase = GC3_PHASE_NONE;
}

/* What the job under way waits for, for the error record. */
static void gc3_setup_waiting(mca_coll_gc3_module_t *m, char *buf, size_t len)
{
    const mca_coll_gc3_job_t *j    = &m->setup.jobs[0];
    const char               *coll = j->kind == MCA_COLL_GC3_JOB_PLAN ? gc3_coll_desc(j->entry->coll)->mpi_name : "";
    switch (m->setup.phase) {
    case GC3_PHASE_SHAPE:
        gc3_snprintf_cut(buf, len,
                         "the exchange of the communicator's shape and settings (the first call gc3 runs on it "
                         "with the %s backend)",
                         j->backend == GC3_BACKEND_CUDA ? "cuda" : "host");
        break;
    case GC3_PHASE_AGREE:
        gc3_snprintf_cut(buf, len, "the agreement on the %s plan (the call of %zu bytes that needs it)", coll,
                         j->entry->bytes);
        break;
    case GC3_PHASE_PREPARE:
        gc3_snprintf_cut(buf, len, "%s of the %s plan",
                         m->setup.prep != NULL ? gc3_exec_prepare_waiting(m->setup.prep) : "?", coll);
        break;
    default:
        gc3_snprintf_cut(buf, len, "the agreement on the connections of the %s plan", coll);
        break;
    }
}

/* The call a job is for, for the error record. */
static const char *gc3_setup_call(const mca_coll_gc3_module_t *m)
{
    if (m->setup.njobs > 0 && m->setup.jobs[0].kind == MCA_COLL_GC3_JOB_PLAN) {
        return gc3_coll_desc(m->setup.jobs[0].entry->coll)->mpi_name;
    }
    return m->pipe.head != NULL ? gc3_coll_desc(m->pipe.head->coll)->mpi_name : "the set-up";
}

/* ---------------------------------------------------------------- the jobs */

static void gc3_job_push(mca_coll_gc3_module_t *m, int kind, int backend, mca_coll_gc3_plan_entry_t *s)
{
    if (m->setup.njobs == m->setup.jobs_cap) {
        int                 ncap = m->setup.jobs_cap ? 2 * m->setup.jobs_cap : 8;
        mca_coll_gc3_job_t *n    = realloc(m->setup.jobs, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            /* nothing can be set up: as if it timed out (the others do time out) */
            gc3_setup_abandon(m, kind == MCA_COLL_GC3_JOB_PLAN ? gc3_coll_desc(s->coll)->mpi_name : "the set-up",
                              "out of host memory for gc3's set-up");
            if (s != NULL) {
                s->state = MCA_COLL_GC3_ENTRY_FAILED;
            }
            return;
        }
        m->setup.jobs     = n;
        m->setup.jobs_cap = ncap;
    }
    m->setup.jobs[m->setup.njobs].kind    = kind;
    m->setup.jobs[m->setup.njobs].backend = backend;
    m->setup.jobs[m->setup.njobs].entry   = s;
    m->setup.njobs++;
}

void mca_coll_gc3_setup_exec(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    if (m->exec_state[backend] == MCA_COLL_GC3_EXEC_NONE && !m->unusable) {
        m->exec_state[backend] = MCA_COLL_GC3_EXEC_SETTING;
        gc3_job_push(m, MCA_COLL_GC3_JOB_EXEC, backend, NULL);
    }
}

void mca_coll_gc3_setup_plan(mca_coll_gc3_module_t *m, gc3_backend_t backend, mca_coll_gc3_plan_entry_t *s)
{
    gc3_job_push(m, MCA_COLL_GC3_JOB_PLAN, backend, s);
}

/* Start jobs[0]'s first phase. */
static void gc3_job_start(mca_coll_gc3_module_t *m)
{
    mca_coll_gc3_job_t *j = &m->setup.jobs[0];
    int                 rc;

    gc3_diag_cleanup(&m->setup.diag);
    gc3_diag_init(&m->setup.diag);
    if (j->kind == MCA_COLL_GC3_JOB_EXEC) {
        m->setup.phase = GC3_PHASE_SHAPE;
        rc       = mca_coll_gc3_shape_post(m, (gc3_backend_t)j->backend);
    } else {
        m->setup.phase = GC3_PHASE_AGREE;
        rc       = mca_coll_gc3_plan_post(m, j->entry);
    }
    if (rc != 0) {
        gc3_setup_abandon(m, gc3_setup_call(m),
                          "gc3's set-up exchange could not be started (out of host memory, or "
                          "point-to-point messages failed)");
    }
}

static void gc3_job_pop(mca_coll_gc3_module_t *m)
{
    mca_coll_gc3_agree_release(m);
    memmove(m->setup.jobs, m->setup.jobs + 1, (size_t)(m->setup.njobs - 1) * sizeof(*m->setup.jobs));
    m->setup.njobs--;
    m->setup.phase = GC3_PHASE_NONE;
}

/* The exchange of the phase under way is done (1), or over the timeout (abandoned), or still
 * pending (0), or failed (abandoned). */
static int gc3_phase_ready(mca_coll_gc3_module_t *m)
{
    double timeout = mca_coll_gc3_component.timeout;
    int    rc;

    if (m->setup.phase == GC3_PHASE_PREPARE) {
        rc = mca_coll_gc3_plan_prepared(m, m->setup.jobs[0].entry);
        if (rc != 0) {
            m->setup.phase = GC3_PHASE_CONNECT;
            if (rc < 0) {
                gc3_setup_abandon(m, gc3_setup_call(m), "gc3's set-up exchange could not be started");
            }
            return 0;
        }
    } else {
        rc = mca_coll_gc3_oob_test(m, m->setup.xreq);
        if (rc > 0) {
            m->setup.xreq = NULL;
            return 1;
        }
        if (rc < 0) {
            m->setup.xreq = NULL;
            gc3_setup_abandon(m, gc3_setup_call(m),
                              "gc3's set-up exchange failed; gc3 fails every later call on "
                              "this communicator");
            return 0;
        }
    }
    if (m->oob.pending != NULL && timeout > 0 && mca_coll_gc3_now() - m->oob.posted > timeout) {
        char what[512], *why = NULL;
        gc3_setup_waiting(m, what, sizeof(what));
        mca_coll_gc3_set_text(&why,
                              "timeout after %.1f s waiting for the other ranks to join %s; gc3 fails every "
                              "later call on this communicator",
                              timeout, what);
        gc3_setup_abandon(m, gc3_setup_call(m), MCA_COLL_GC3_TEXT(why));
        free(why);
    }
    return 0;
}

int mca_coll_gc3_setup_advance(mca_coll_gc3_module_t *m)
{
    int changed = 0;

    if (m->unusable && m->setup.njobs > 0) {
        gc3_setup_abandon(m, NULL, NULL); /* (an exchange or a call failed: reported there) */
        return 1;
    }
    while (m->setup.njobs > 0 && !m->unusable) {
        mca_coll_gc3_job_t *j     = &m->setup.jobs[0];
        int                 phase = m->setup.phase;
        if (phase == GC3_PHASE_NONE) {
            gc3_job_start(m);
            changed = 1;
            continue;
        }
        if (!gc3_phase_ready(m)) {
            return changed || m->setup.phase != phase || m->unusable;
        }
        changed = 1;
        switch (phase) {
        case GC3_PHASE_SHAPE:
            mca_coll_gc3_shape_done(m, (gc3_backend_t)j->backend);
            gc3_job_pop(m);
            break;
        case GC3_PHASE_AGREE:
            if (mca_coll_gc3_plan_agreed(m, j->entry)) {
                mca_coll_gc3_agree_release(m);
                m->setup.phase = GC3_PHASE_PREPARE;
            } else {
                gc3_job_pop(m);
            }
            break;
        default: /* CONNECT */
            mca_coll_gc3_plan_connected(m, j->entry);
            gc3_job_pop(m);
            break;
        }
    }
    return changed;
}

void mca_coll_gc3_setup_fini(mca_coll_gc3_module_t *m)
{
    if (m->setup.prep != NULL) {
        gc3_exec_prepare_abandon(m->setup.prep);
        m->setup.prep = NULL;
    }
    mca_coll_gc3_agree_release(m);
    free(m->setup.jobs);
    m->setup.jobs  = NULL;
    m->setup.njobs = 0;
    gc3_diag_cleanup(&m->setup.diag);
}
