/* coll/gc3: a communicator's plan entries, in one place. An entry holds the plan of one rule for one kind
 * of call (collective, in place or not, backend, root): found or made for a call (the rule that matches
 * it), queued for set-up when new (coll_gc3_setup.c builds it: coll_gc3_plan.c), taken by the call that
 * runs on it and given back when that call ends (one call per plan at a time, the FIFO pool's plans one
 * at a time, the communicator's share of its GPU's thread blocks), released with the module. */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

/* ---------------------------------------------------------------- found or made */

/* The entry of the rule that matches a call (a new one is MCA_COLL_GC3_ENTRY_NEW), or NULL when no
 * rule matches (*why). */
static mca_coll_gc3_plan_entry_t *mca_coll_gc3_entry_lookup(mca_coll_gc3_module_t *m, int coll, int root, size_t bytes,
                                                            int inplace, gc3_backend_t backend, char *why,
                                                            size_t why_len)
{
    gc3_rules_t               *R = mca_coll_gc3_rules();
    const gc3_rule_t          *rule;
    mca_coll_gc3_plan_entry_t *s;
    int                        idx;

    rule = R == NULL ? NULL
                     : gc3_rules_match_root(R, (gc3_coll_t)coll, m->nodes, m->gpus, m->link[backend], bytes,
                                            ompi_comm_size(m->comm), inplace, root);
    if (rule == NULL) {
        gc3_snprintf_cut(why, why_len, "no rule of %s for %s of %zu bytes on %d node(s) x %d, %s",
                         R ? R->source : "gc3", gc3_coll_desc(coll)->mpi_name, bytes, m->nodes, m->gpus,
                         gc3_link_name(m->link[backend]));
        mca_coll_gc3_verbose_once(2, m->comm, "coll:gc3: comm %s: %s: no plan", m->comm->c_name, why);
        return NULL;
    }
    idx = (int)(rule - R->rules);
    if (gc3_coll_desc((gc3_coll_t)coll)->rooted && rule->root < 0 && m->nodes == 1 && mca_coll_gc3_component.relabel) {
        root = MCA_COLL_GC3_ROOT_ANY; /* one plan for every root, relabelled at each call (gc3_plan_root) */
    }
    for (int i = 0; i < m->plans.nentries; i++) {
        s = m->plans.entries[i];
        if (s->backend == (int)backend && s->coll == coll && s->rule == idx && s->inplace == inplace &&
            s->root == root) {
            return s;
        }
    }
    if (m->plans.nentries == m->plans.entries_cap) {
        int                         ncap = m->plans.entries_cap ? 2 * m->plans.entries_cap : 8;
        mca_coll_gc3_plan_entry_t **n    = realloc(m->plans.entries, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            gc3_snprintf_cut(why, why_len, "out of host memory");
            return NULL;
        }
        m->plans.entries     = n;
        m->plans.entries_cap = ncap;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        gc3_snprintf_cut(why, why_len, "out of host memory");
        return NULL;
    }
    m->plans.entries[m->plans.nentries++] = s;
    s->backend                            = backend;
    s->coll                               = coll;
    s->rule                               = idx;
    s->inplace                            = inplace;
    s->root                               = root;
    s->bytes                              = bytes;
    s->state                              = MCA_COLL_GC3_ENTRY_NEW;
    return s;
}

mca_coll_gc3_plan_entry_t *mca_coll_gc3_entry(mca_coll_gc3_module_t *m, int coll, int root, size_t bytes, int inplace,
                                              gc3_backend_t backend, char *why, size_t why_len)
{
    mca_coll_gc3_plan_entry_t *s = mca_coll_gc3_entry_lookup(m, coll, root, bytes, inplace, backend, why, why_len);

    if (s != NULL && s->state == MCA_COLL_GC3_ENTRY_NEW) { /* new, or built before and given up (the call failed) */
        s->bytes = bytes;
        s->state = MCA_COLL_GC3_ENTRY_BUILDING;
        mca_coll_gc3_setup_plan(m, backend, s);
    }
    return s;
}

void mca_coll_gc3_entries_release(mca_coll_gc3_module_t *m)
{
    for (int i = 0; i < m->plans.nentries; i++) {
        gc3_plan_destroy(m->plans.entries[i]->plan);
        gc3_ir_program_destroy(m->plans.entries[i]->program);
        free(m->plans.entries[i]->why);
        free(m->plans.entries[i]);
    }
    free(m->plans.entries);
    m->plans.entries  = NULL;
    m->plans.nentries = m->plans.entries_cap = 0;
}

/* ---------------------------------------------------------------- taken and given back */

/* May a call start on the plan of s: no call runs on it, nor, when its slots are in the backend's
 * FIFO pool of the communicator (coll_gc3_fifo_pool), on another plan of that pool, nor would its kernel
 * with those of the communicator's calls in flight hold more thread blocks than this rank's GPU runs
 * at once for it (a shared GPU: their kernels could wait for each other's SMs; the calls of one
 * communicator start in the same order on every rank, so waiting for the earlier ones is safe)? Taken
 * and given back with m->lock held. */
int mca_coll_gc3_entry_free(const mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s)
{
    const int blocks = mca_coll_gc3_entry_blocks(s);
    return !s->busy && !(gc3_plan_pooled(s->plan) && m->plans.pool_busy[s->backend]) &&
           !(m->plans.blocks_busy > 0 && blocks > 0 && m->plans.blocks_busy + blocks > m->gpu_share);
}

void mca_coll_gc3_entry_take(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    s->busy = 1;
    m->plans.pool_busy[s->backend] |= gc3_plan_pooled(s->plan);
    m->plans.blocks_busy += mca_coll_gc3_entry_blocks(s);
}

void mca_coll_gc3_entry_give(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    s->busy = 0;
    if (gc3_plan_pooled(s->plan)) {
        m->plans.pool_busy[s->backend] = 0;
    }
    m->plans.blocks_busy -= mca_coll_gc3_entry_blocks(s);
}

/* Thread blocks of this process's gc3 calls running on GPUs (all communicators), and whether they
 * are more than a communicator's share of its GPU. Blocks that wait give way
 * (coll_gc3_yield_us), so kernels of calls in flight together on several communicators, started in
 * different orders on different ranks, complete even then; with coll_gc3_yield_us 0 a kernel needs
 * all its blocks on the GPU until its call ends, and such kernels can hold the SMs each other's peers
 * need (a wait that only coll_gc3_timeout ends): said then (coll_gc3_report.c). */
static int gc3_gpu_blocks;

void mca_coll_gc3_blocks_take(mca_coll_gc3_module_t *m, const mca_coll_gc3_plan_entry_t *s)
{
    const int blocks = mca_coll_gc3_entry_blocks(s);
    int       now;
    if (blocks == 0) {
        return;
    }
    now = __atomic_add_fetch(&gc3_gpu_blocks, blocks, __ATOMIC_RELAXED);
    if (now > m->gpu_share && mca_coll_gc3_component.yield_us == 0) {
        mca_coll_gc3_report_over_share(m, now);
    }
}

void mca_coll_gc3_blocks_give(const mca_coll_gc3_plan_entry_t *s)
{
    __atomic_sub_fetch(&gc3_gpu_blocks, mca_coll_gc3_entry_blocks(s), __ATOMIC_RELAXED);
}
