/* gc3c gen and list: the algorithm library's generators, a program generated, compiled and verified. */
#include "gc3c.h"

int cmd_list(int argc, char **argv)
{
    (void)argv;
    if (argc != 0) {
        fprintf(stderr, "gc3c list: takes no arguments\n");
        return 2;
    }
    printf("%-22s %-15s %-24s %s\n", "# algorithm", "collective", "takes", "what it does");
    print_algo_list(stdout);
    return 0;
}

static void finish_shape(gc3_algo_params_t *ap)
{
    ap->gpus_per_node = ap->nodes > 0 && ap->nranks % ap->nodes == 0 ? ap->nranks / ap->nodes : 0;
}

int cmd_gen(int argc, char **argv)
{
    gc3_algo_params_t   ap;
    gc3_compile_stats_t st;
    gc3_ir_program_t   *p = NULL;
    gc3_diag_t          diag;
    const char         *algo = NULL, *out = NULL;
    int                 nodes_given = 0, want_stats = 0, rc = 1, msccl_form = 0;
    long                max_blocks = 0;
    uint64_t            min_bytes = 0, max_bytes = 0;
    gc3_status_t        status;

    gc3_algo_params_default(&ap, 0);
    for (int i = 0; i < argc; i++) {
        int r = parse_gen_option(argc, argv, &i, &ap, &nodes_given);
        if (r == 0) {
            return 2;
        }
        if (r == 1) {
            continue;
        }
        if (strcmp(argv[i], "-o") == 0) {
            if (!need_arg(i, argc, argv[i])) {
                return 2;
            }
            out = argv[++i];
        } else if (strcmp(argv[i], "--stats") == 0) {
            want_stats = 1;
        } else if (strcmp(argv[i], "--max-blocks") == 0) {
            if (!need_arg(i, argc, argv[i])) {
                return 2;
            }
            if (!parse_int(argv[++i], 1, 1 << 20, &max_blocks)) {
                fprintf(stderr, "gc3c gen: --max-blocks needs a positive integer (got '%s')\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--msccl-inplace") == 0) {
            msccl_form = ap.inplace = 1;
        } else if (strcmp(argv[i], "--min-bytes") == 0 || strcmp(argv[i], "--max-bytes") == 0) {
            if (!need_arg(i, argc, argv[i]) || !parse_size(argv[i + 1], argv[i][3] == 'i' ? &min_bytes : &max_bytes)) {
                fprintf(stderr, "gc3c gen: %s needs a size in bytes (K, M, G allowed)\n", argv[i]);
                return 2;
            }
            i++;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "gc3c gen: unknown option %s\n", argv[i]);
            return 2;
        } else if (algo == NULL) {
            algo = argv[i];
        } else {
            fprintf(stderr, "gc3c gen: one ALGO at a time\n");
            return 2;
        }
    }
    if (algo == NULL || gc3_algo_find(algo) == NULL) {
        fprintf(stderr, "gc3c gen: %s%s%s; the algorithms are:\n", algo ? "unknown algorithm '" : "no ALGO given",
                algo ? algo : "", algo ? "'" : "");
        print_algo_list(stderr);
        return 2;
    }
    if (ap.nranks < (gc3_coll_desc(gc3_algo_find(algo)->coll)->rooted ? 1 : 2)) {
        fprintf(stderr, "gc3c gen: --ranks R (at least %d) is required\n",
                gc3_coll_desc(gc3_algo_find(algo)->coll)->rooted ? 1 : 2);
        return 2;
    }
    if (!check_root_option("gen", algo)) {
        return 2;
    }
    if (ap.nodes < 1 || ap.nranks % ap.nodes != 0) {
        fprintf(stderr, "gc3c gen: --ranks %d does not split into %d nodes of equal size\n", ap.nranks, ap.nodes);
        return 2;
    }
    if (max_bytes > 0 && min_bytes > max_bytes) {
        fprintf(stderr, "gc3c gen: --min-bytes is above --max-bytes\n");
        return 2;
    }
    if (msccl_form && gc3_algo_find(algo)->coll == GC3_COLL_CUSTOM) {
        char names[256];
        gc3_coll_mpi_names(names, sizeof(names));
        fprintf(stderr, "gc3c gen: --msccl-inplace: MSCCL's in-place form is for %s\n", names);
        return 2;
    }
    finish_shape(&ap);
    gc3_diag_init(&diag);
    if (max_blocks > 0) { /* the shape the component would run (gc3_algo_generate_fit), generated below */
        gc3_algo_params_t asked = ap;
        int               narrowed;
        status = gc3_algo_generate_fit(algo, &ap, (int)max_blocks, &diag, &p, &narrowed);
        if (status == GC3_OK) {
            if (narrowed) {
                fprintf(
                    stderr,
                    "%s: narrowed from %d x %d to %d x %d (channels x instances) to fit %ld thread blocks per rank\n",
                    p->name, asked.channels, asked.instances, ap.channels, ap.instances, max_blocks);
            } else {
                fprintf(stderr, "%s: %d x %d (channels x instances) fits %ld thread blocks per rank\n", p->name,
                        ap.channels, ap.instances, max_blocks);
            }
            gc3_ir_program_destroy(p);
            p = NULL;
        }
    } else {
        status = GC3_OK;
    }
    if (status == GC3_OK) {
        status = gc3_algo_generate(algo, &ap, &diag, &st, &p);
    }
    if (status != GC3_OK) {
        gc3_diag_print(&diag, stderr, "");
        fprintf(stderr, "gc3c gen %s: FAILED (%s)\n", algo, gc3_status_string(status));
        goto done;
    }
    if (gc3_proto_runs_as(p->proto) != p->proto) {
        fprintf(stderr, "gc3c gen: warning: proto=%s is written for MSCCL; gc3 has no %s and runs this program as %s\n",
                gc3_proto_name(p->proto), gc3_proto_name(p->proto), gc3_proto_name(gc3_proto_runs_as(p->proto)));
    }
    p->min_bytes     = min_bytes;
    p->max_bytes     = max_bytes;
    p->msccl_inplace = msccl_form; /* the writer writes that form */
    if (want_stats) {
        fprintf(stderr, "%s: %d operations -> %d instructions -> %d after fusion (+%d nops), %d thread blocks;",
                p->name, st.ops, st.instrs_lowered, st.instrs, st.nops, st.tbs);
        for (int t = 0; t < GC3_STEP_COUNT; t++) {
            if (st.by_type[t]) {
                fprintf(stderr, " %s=%d", gc3_step_type_name((gc3_step_type_t)t), st.by_type[t]);
            }
        }
        fprintf(stderr, "; %s\n", st.verified ? "verified" : "NOT verified (--no-verify)");
    }
    if (out != NULL) {
        if (gc3_ir_write_file(p, out, &diag) != GC3_OK) {
            gc3_diag_print(&diag, stderr, "");
            goto done;
        }
    } else if (gc3_ir_write_stream(p, stdout) != GC3_OK) {
        goto done;
    }
    rc = 0;
done:
    gc3_diag_cleanup(&diag);
    gc3_ir_program_destroy(p);
    return rc;
}
