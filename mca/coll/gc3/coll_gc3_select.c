/* coll/gc3: the rules, loaded once per process: a rules file or the built-in ones, with the programs
 * of an algorithm directory ahead (which rule runs a call: coll_gc3_entry.c). */
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
