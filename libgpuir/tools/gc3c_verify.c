/* gc3c verify: structure, semantics and deadlock checks of program files. */
#include "gc3c.h"

static int count_steps(const gc3_ir_program_t *p)
{
    int n = 0;
    for (int r = 0; r < p->ngpus; r++) {
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            n += p->gpus[r].tbs[t].nsteps;
        }
    }
    return n;
}

int cmd_verify(int argc, char **argv)
{
    gc3_verify_opts_t opts;
    const char       *post   = NULL;
    int               failed = 0, files = 0;
    long              v;

    gc3_verify_opts_default(&opts);
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--slots") == 0) {
            if (!need_arg(i, argc, argv[i]) || !parse_int(argv[++i], 1, 1 << 20, &v)) {
                fprintf(stderr, "gc3c verify: --slots needs an integer >= 1\n");
                return 2;
            }
            opts.slots = (int)v;
        } else if (strcmp(argv[i], "--loops") == 0) {
            if (!need_arg(i, argc, argv[i]) || !parse_int(argv[++i], 1, 64, &v)) {
                fprintf(stderr, "gc3c verify: --loops needs an integer in [1, 64]\n");
                return 2;
            }
            opts.nloops = (int)v;
        } else if (strcmp(argv[i], "--post") == 0) {
            if (!need_arg(i, argc, argv[i])) {
                return 2;
            }
            post = argv[++i];
        } else if (strcmp(argv[i], "--no-races") == 0) {
            opts.check_races = 0;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "gc3c verify: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    for (int i = 0; i < argc; i++) {
        gc3_ir_program_t *p;
        gc3_postcond_t   *pc = NULL;
        gc3_diag_t        diag;
        gc3_status_t      status;
        int               maxtbs, nsteps;

        if (argv[i][0] == '-') {
            i += strcmp(argv[i], "--no-races") != 0;
            continue;
        }
        files++;
        p = gc3c_load(argv[i]);
        if (p == NULL) {
            failed++;
            continue;
        }
        if (post != NULL && !gc3c_load_post(post, p, &pc)) {
            fprintf(stderr, "%s: FAILED (postcondition table %s unusable)\n", argv[i], post);
            gc3_ir_program_destroy(p);
            failed++;
            continue;
        }
        opts.postcond = pc;
        gc3_diag_init(&diag);
        status = gc3_verify(p, &opts, &diag);
        if (status == GC3_OK && p->inplace && !p->outofplace) {
            /* what serves an out-of-place call: the input copied into place first */
            gc3_ir_program_t *cf = NULL;
            status               = gc3_ir_copy_first(p, &cf);
            status               = status == GC3_OK ? gc3_verify(cf, &opts, &diag) : status;
            if (status != GC3_OK) {
                gc3_diag_add(&diag,
                             "%s: the form for out-of-place calls (input copied into place first) does not "
                             "verify",
                             argv[i]);
            }
            gc3_ir_program_destroy(cf);
        }
        nsteps = count_steps(p);
        maxtbs = gc3_ir_widest_rank(p);
        if (status == GC3_OK) {
            printf(
                "%s: OK (%s '%s', %d ranks, %d chunks/loop, up to %d thread blocks/rank, %d steps, %s%s; "
                "verified%s%s%s, "
                "deadlock-free with %d slots)\n",
                argv[i], p->coll_name, p->name, p->ngpus, p->nchunksperloop, maxtbs, nsteps, gc3_proto_name(p->proto),
                gc3_proto_runs_as(p->proto) != p->proto ? " (runs as Simple: gc3 has no LL128)" : "",
                p->outofplace ? " out-of-place" : "", p->inplace ? " in-place" : "",
                p->inplace && !p->outofplace ? " (out-of-place calls: input copied into place first)" : "", opts.slots);
            gc3_diag_print(&diag, stdout, "  ");
        } else {
            gc3_diag_print(&diag, stderr, "");
            fprintf(stderr, "%s: FAILED (%s)\n", argv[i], gc3_status_string(status));
            failed++;
        }
        gc3_diag_cleanup(&diag);
        gc3_postcond_destroy(pc);
        gc3_ir_program_destroy(p);
    }
    if (files == 0) {
        fprintf(stderr, "gc3c verify: no FILE given\n");
        return 2;
    }
    return failed ? 1 : 0;
}
