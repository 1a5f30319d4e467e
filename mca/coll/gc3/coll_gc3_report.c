/* coll/gc3: the error record of a call that fails (and whether calls in flight ever held more thread blocks
 * than the GPU runs at once: coll_gc3_entry.c's account says so here), what a plan left in place, a message's
 * text kept whole. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* Were the thread blocks of this process's calls in flight ever more than a communicator's share of its GPU, with
 * coll_gc3_yield_us 0 (coll_gc3_entry.c's account)? The failure record says so. */
static int gc3_gpu_blocks_over;

void mca_coll_gc3_report_over_share(mca_coll_gc3_module_t *m, int blocks)
{
    if (!__atomic_exchange_n(&gc3_gpu_blocks_over, 1, __ATOMIC_RELAXED)) {
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s rank %d: %d thread blocks of gc3 calls in flight on this rank's GPU, "
                            "more than the %d it holds at once for this rank: with coll_gc3_yield_us 0, calls in "
                            "flight together on several communicators may wait for each other",
                            m->comm->c_name, ompi_comm_rank(m->comm), blocks, m->gpu_share);
    }
}

void mca_coll_gc3_report_failure(mca_coll_gc3_module_t *m, const char *call, const char *why)
{
    opal_output(0, "coll:gc3: comm %s rank %d: %s failed: %s%s", m->comm->c_name, ompi_comm_rank(m->comm), call, why,
                __atomic_load_n(&gc3_gpu_blocks_over, __ATOMIC_RELAXED)
                    ? " (gc3 calls in flight on several communicators held more thread blocks than the GPU runs "
                      "at once for this rank, and coll_gc3_yield_us 0 keeps a waiting block on the GPU: their "
                      "kernels may have waited for each other; a positive coll_gc3_yield_us lets them give way)"
                    : "");
}

void mca_coll_gc3_report_zc(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    const int peers = gc3_plan_zc_peers(s->plan) | gc3_plan_zc_mode(s->plan) << 16 | gc3_plan_zc_pushed(s->plan) << 20;
    const char *why   = peers > 0 ? NULL : s->plan != NULL ? gc3_plan_zc_why(s->plan) : NULL;

    if (mca_coll_gc3_component.verbose < 2 || (s->zc_said && s->zc_said_peers == peers && s->zc_said_why == why) ||
        (peers == 0 && why == NULL)) {
        return; /* unchanged, or nothing of the plan can be left in place */
    }
    s->zc_said       = 1;
    s->zc_said_peers = peers;
    s->zc_said_why   = why;
    if (peers > 0) {
        char pushed[80] = "";
        if (peers >> 20) {
            snprintf(pushed, sizeof(pushed), "; pushed: written into the buffers of %d of them", peers >> 20);
        }
        opal_output(0, "coll:gc3: comm %s rank %d: %s%s: zero-copy: data left in place for %d peer(s) of the node%s%s",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc(s->coll)->mpi_name,
                    s->inplace ? " (in place)" : "", peers & 0xffff,
                    peers >> 16 & 1 ? " (zero-copy mode: every message in place, tiles up to coll_gc3_tile_bytes)" : "",
                    pushed);
    } else {
        opal_output(0, "coll:gc3: comm %s rank %d: %s%s: zero-copy not used, its data goes through the FIFOs: %s",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc(s->coll)->mpi_name,
                    s->inplace ? " (in place)" : "", why);
    }
}

/* ---------------------------------------------------------------- coll_gc3_breakdown */

uint64_t mca_coll_gc3_breakdown_now(void)
{
    return mca_coll_gc3_component.breakdown ? gc3_exec_now_ns() : 0;
}

static double gc3_bd_us(uint64_t from, uint64_t to)
{
    return from != 0 && to >= from ? (double)(to - from) * 1e-3 : 0.0;
}

void mca_coll_gc3_breakdown_flush(mca_coll_gc3_module_t *m)
{
    mca_coll_gc3_breakdown_t *b = &m->bd;
    double                    v[MCA_COLL_GC3_PH_N], ex;
    char                      split[160];

    if (b->calls == 0) {
        return;
    }
    for (int i = 0; i < MCA_COLL_GC3_PH_N; i++) {
        v[i] = b->us[i] / (double)b->calls;
    }
    /* the backend's own time per call, from the plan's sums over the run (the marks of a call may come
     * with the next one's) */
    ex = b->ex_n[1] > b->ex_n[0] ? (double)(b->ex_ns[1] - b->ex_ns[0]) * 1e-3 / (double)(b->ex_n[1] - b->ex_n[0]) : 0.0;
    if (b->same_clock) {
        snprintf(split, sizeof(split), "posted to taken %.2f, exchange %.2f, done to seen %.2f",
                 v[MCA_COLL_GC3_PH_TO_PICK], ex, v[MCA_COLL_GC3_PH_TO_SEEN]);
    } else {
        /* the GPU's clock is not the host's: what is not the exchange is the doorbell's way to the kernel
         * and the completion's way back together */
        snprintf(split, sizeof(split), "exchange on the GPU %.2f (taken to done), signalling %.2f", ex,
                 v[MCA_COLL_GC3_PH_FLIGHT] - ex);
    }
    if (m->mem.rank == 0) {
        opal_output(0,
                    "coll:gc3: comm %s rank 0: breakdown of %s%s %zu bytes, %llu calls, mean us: find plan %.2f, "
                    "start %.2f, stream order %.2f, post %.2f, posted to completion seen %.2f (%s), return %.2f; "
                    "total %.2f",
                    m->mem.name, gc3_coll_desc((gc3_coll_t)b->coll)->mpi_name, b->inplace ? " (in place)" : "",
                    b->bytes, (unsigned long long)b->calls, v[MCA_COLL_GC3_PH_FIND], v[MCA_COLL_GC3_PH_START],
                    v[MCA_COLL_GC3_PH_ORDER], v[MCA_COLL_GC3_PH_POST], v[MCA_COLL_GC3_PH_FLIGHT], split,
                    v[MCA_COLL_GC3_PH_RETURN], v[MCA_COLL_GC3_PH_TOTAL]);
    }
    memset(b, 0, sizeof(*b));
}

void mca_coll_gc3_breakdown_add(mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s,
                                const mca_coll_gc3_args_t *a, uint64_t found_ns)
{
    mca_coll_gc3_breakdown_t *b   = &m->bd;
    const uint64_t            now = gc3_exec_now_ns();
    gc3_exec_times_t          t;

    if (!mca_coll_gc3_component.breakdown || a->entry_ns == 0 || s->plan == NULL || !gc3_exec_times(s->plan, &t)) {
        return; /* (a call of no elements never reaches the runtime's clocks) */
    }
    if (b->calls > 0 && (b->coll != s->coll || b->bytes != a->bytes || b->inplace != s->inplace)) {
        mca_coll_gc3_breakdown_flush(m);
    }
    if (b->calls == 0) {
        b->ex_ns[0] = t.exchange_ns;
        b->ex_n[0]  = t.exchanges;
    }
    b->ex_ns[1]   = t.exchange_ns;
    b->ex_n[1]    = t.exchanges;
    b->coll       = s->coll;
    b->bytes      = a->bytes;
    b->inplace    = s->inplace;
    b->same_clock = t.same_clock;
    b->calls++;
    b->us[MCA_COLL_GC3_PH_FIND] += gc3_bd_us(a->entry_ns, found_ns);
    b->us[MCA_COLL_GC3_PH_START] += gc3_bd_us(found_ns, t.start);
    b->us[MCA_COLL_GC3_PH_ORDER] += gc3_bd_us(t.start, t.ordered);
    b->us[MCA_COLL_GC3_PH_POST] += gc3_bd_us(t.ordered, t.posted);
    b->us[MCA_COLL_GC3_PH_FLIGHT] += gc3_bd_us(t.posted, t.seen);
    if (t.same_clock) {
        b->us[MCA_COLL_GC3_PH_TO_PICK] += gc3_bd_us(t.posted, t.picked);
        b->us[MCA_COLL_GC3_PH_TO_SEEN] += gc3_bd_us(t.exchanged, t.seen);
    }
    b->us[MCA_COLL_GC3_PH_RETURN] += gc3_bd_us(t.seen, now);
    b->us[MCA_COLL_GC3_PH_TOTAL] += gc3_bd_us(a->entry_ns, now);
}
