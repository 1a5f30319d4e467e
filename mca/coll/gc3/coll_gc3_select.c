/* coll/gc3: selection. Which rule runs a call (the rules, loaded once per process: a rules file or
 * the built-in ones, with the programs of an algorithm directory ahead), and the plan entry of a
 * communicator that holds the plan of that rule. */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

/* The rules, loaded once: the file of coll_gc3_rules_file, or the built-in ones (also when the
 * file cannot be used, after saying why), with the programs of coll_gc3_algorithm_dir ahead. */
/* Every process reads the same files: the job's first process says what they hold (the others at
 * coll_gc3_verbose 3; a process that finds something else makes the ranks disagree on a plan, and
 * that is said). */
static gc3_rules_t *mca_coll_gc3_rules_load(void)
{
    gc3_diag_t diag;
    const int  says = MCA_COLL_GC3_JOB_SAYS();

    gc3_diag_init(&diag);
    if (mca_coll_gc3_component.rules_file != NULL && mca_coll_gc3_component.rules_file[0] != '\0') {
        gc3_status_t st = gc3_rules_read_file(mca_coll_gc3_component.rules_file, &diag, &mca_coll_gc3_component.rules);
        for (int i = 0; i < diag.count && says; i++) {
            opal_output(0, "coll:gc3: rules file: %s%s", st == GC3_OK ? "warning: " : "", diag.msgs[i]);
        }
        if (st != GC3_OK && says) {
            opal_output(0, "coll:gc3: using the built-in rules instead of %s", mca_coll_gc3_component.rules_file);
        }
    }
    if (mca_coll_gc3_component.rules == NULL) {
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        if (gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &mca_coll_gc3_component.rules) != GC3_OK) {
            /* a bug of gc3 itself (unit_rules parses them): say it, every call is passed on */
            opal_output(0, "coll:gc3: the built-in rules do not parse (%s): gc3 passes every call on",
                        diag.count ? diag.msgs[0] : "?");
        }
    }
    gc3_diag_cleanup(&diag);
    if (mca_coll_gc3_component.rules != NULL && mca_coll_gc3_component.algorithm_dir != NULL &&
        mca_coll_gc3_component.algorithm_dir[0] != '\0') {
        int added = 0;
        gc3_diag_init(&diag);
        (void)gc3_rules_add_xml_dir(mca_coll_gc3_component.rules, mca_coll_gc3_component.algorithm_dir, &diag, &added);
        for (int i = 0; i < diag.count && says; i++) {
            opal_output(0, "coll:gc3: algorithm directory: %s", diag.msgs[i]);
        }
        if (says) {
            opal_output_verbose(1, mca_coll_gc3_component.output,
                                "coll:gc3: algorithm directory %s: %d program(s) read and verified (each runs on "
                                "communicators of its rank count)",
                                mca_coll_gc3_component.algorithm_dir, added);
        }
        gc3_diag_cleanup(&diag);
    }
    return mca_coll_gc3_component.rules;
}

/* Loaded once per process; threads on different communicators (MPI_THREAD_MULTIPLE) may ask first
 * at the same time. */
gc3_rules_t *mca_coll_gc3_rules(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    gc3_rules_t           *R;

    pthread_mutex_lock(&lock);
    R = mca_coll_gc3_component.rules != NULL ? mca_coll_gc3_component.rules : mca_coll_gc3_rules_load();
    pthread_mutex_unlock(&lock);
    return R;
}

mca_coll_gc3_plan_entry_t *mca_coll_gc3_entry_lookup(mca_coll_gc3_module_t *m, int coll, int root, size_t bytes,
                                                     int inplace, gc3_backend_t backend, char *why, size_t why_len)
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
    for (int i = 0; i < m->nentries; i++) {
        s = m->entries[i];
        if (s->backend == (int)backend && s->coll == coll && s->rule == idx && s->inplace == inplace &&
            s->root == root) {
            return s;
        }
    }
    if (m->nentries == m->entries_cap) {
        int                         ncap = m->entries_cap ? 2 * m->entries_cap : 8;
        mca_coll_gc3_plan_entry_t **n    = realloc(m->entries, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            gc3_snprintf_cut(why, why_len, "out of host memory");
            return NULL;
        }
        m->entries     = n;
        m->entries_cap = ncap;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        gc3_snprintf_cut(why, why_len, "out of host memory");
        return NULL;
    }
    m->entries[m->nentries++] = s;
    s->backend                = backend;
    s->coll                   = coll;
    s->rule                   = idx;
    s->inplace                = inplace;
    s->root                   = root;
    s->bytes                  = bytes;
    s->state                  = MCA_COLL_GC3_ENTRY_NEW;
    return s;
}
