/* coll/gc3: the error record of a call that fails, and the account it consults: the thread blocks
 * of this process's gc3 calls in flight on GPUs (all communicators); a message's text, kept whole. */
#include <stdarg.h>
#include <stdlib.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

void mca_coll_gc3_set_text(char **text, const char *fmt, ...)
{
    va_list ap;

    free(*text);
    va_start(ap, fmt);
    *text = gc3_strdup_vprintf(fmt, ap);
    va_end(ap);
}

/* Thread blocks of this process's gc3 calls running on GPUs (all communicators), and whether they
 * were ever more than a communicator's share of its GPU: a plan's kernel needs all its blocks on the
 * GPU at once, so kernels of calls in flight together on several communicators, started in
 * different orders on different ranks, can then hold the SMs each other's peers need (a wait that
 * only coll_gc3_timeout ends). */
static int gc3_gpu_blocks, gc3_gpu_blocks_over;

void mca_coll_gc3_blocks_take(mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s)
{
    int now;
    if (s->backend != GC3_BACKEND_CUDA) {
        return;
    }
    now = __atomic_add_fetch(&gc3_gpu_blocks, s->blocks, __ATOMIC_RELAXED);
    if (now > m->gpu_share && !__atomic_exchange_n(&gc3_gpu_blocks_over, 1, __ATOMIC_RELAXED)) {
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s rank %d: %d thread blocks of gc3 calls in flight on this rank's GPU, "
                            "more than the %d it holds at once for this rank: calls in flight together on several "
                            "communicators may wait for each other (see coll_gc3_max_blocks)",
                            m->comm->c_name, ompi_comm_rank(m->comm), now, m->gpu_share);
    }
}

void mca_coll_gc3_blocks_give(const mca_coll_gc3_plan_entry_t *s)
{
    if (s->backend == GC3_BACKEND_CUDA) {
        __atomic_sub_fetch(&gc3_gpu_blocks, s->blocks, __ATOMIC_RELAXED);
    }
}

void mca_coll_gc3_report_failure(mca_coll_gc3_module_t *m, const char *call, const char *why)
{
    opal_output(0, "coll:gc3: comm %s rank %d: %s failed: %s%s", m->comm->c_name, ompi_comm_rank(m->comm), call, why,
                __atomic_load_n(&gc3_gpu_blocks_over, __ATOMIC_RELAXED)
                    ? " (gc3 calls in flight on several communicators held more thread blocks than the GPU runs "
                      "at once for this rank: their kernels may have waited for each other; narrow the plans "
                      "with coll_gc3_max_blocks so that the calls in flight together fit)"
                    : "");
}

void mca_coll_gc3_report_zc(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    const int   peers = gc3_plan_zc_peers(s->plan) | gc3_plan_zc_mode(s->plan) << 16;
    const char *why   = peers > 0 ? NULL : s->plan != NULL ? gc3_plan_zc_why(s->plan) : NULL;

    if (mca_coll_gc3_component.verbose < 2 || (s->zc_said && s->zc_said_peers == peers && s->zc_said_why == why) ||
        (peers == 0 && why == NULL)) {
        return; /* unchanged, or nothing of the plan can be left in place */
    }
    s->zc_said       = 1;
    s->zc_said_peers = peers;
    s->zc_said_why   = why;
    if (peers > 0) {
        opal_output(0, "coll:gc3: comm %s rank %d: %s%s: zero-copy: data left in place for %d peer(s) of the node%s",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc(s->coll)->mpi_name,
                    s->inplace ? " (in place)" : "", peers & 0xffff,
                    peers >> 16 ? " (zero-copy mode: every message in place, tiles up to coll_gc3_tile_bytes)" : "");
    } else {
        opal_output(0, "coll:gc3: comm %s rank %d: %s%s: zero-copy not used, its data goes through the FIFOs: %s",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc(s->coll)->mpi_name,
                    s->inplace ? " (in place)" : "", why);
    }
}
