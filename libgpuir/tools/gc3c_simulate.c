/* gc3c simulate: the cost model's predicted time per size, of a program, of generated algorithms, or of
 * what the rules run (--coll), against measured times (--measured). */
#include "gc3c.h"

/* --param NAME=VALUE: one of the cost model's parameters (gc3_cost_params); 0 on a bad one, said. */
static int set_param(gc3_machine_t *m, const char *spec)
{
    char         name[64];
    const char  *eq = strchr(spec, '=');
    gc3_status_t st;

    if (eq == NULL || eq == spec || (size_t)(eq - spec) >= sizeof(name)) {
        fprintf(stderr, "gc3c simulate: --param needs NAME=VALUE (got '%s'; --params lists them)\n", spec);
        return 0;
    }
    memcpy(name, spec, (size_t)(eq - spec));
    name[eq - spec] = '\0';
    st              = gc3_machine_set(m, name, eq + 1);
    if (st != GC3_OK) {
        fprintf(stderr, "gc3c simulate: %s '%s' (--params lists them)\n",
                st == GC3_ERR_INVALID_PARAM ? "no parameter named" : "bad value in", spec);
        return 0;
    }
    return 1;
}

/* --params: the model's parameters, as set (defaults and --param), with their units and sources. */
static void print_params(const gc3_machine_t *m)
{
    int                     n;
    const gc3_cost_param_t *t = gc3_cost_params(&n);

    printf("# the cost model's parameters (gc3c simulate --param NAME=VALUE sets one)\n");
    printf("# %-16s %10s  %-7s %s [%s]\n", "name", "value", "unit", "what", "where the default comes from");
    for (int i = 0; i < n; i++) {
        const double v = *(const double *)((const char *)m + t[i].offset);
        printf("%-18s %10.4g  %-7s %s [%s]\n", t[i].name, v, t[i].unit, t[i].what, t[i].from);
    }
}

/* A gc3_bench CSV's rows of one method: collective, ranks, bytes, latency. */
typedef struct {
    uint64_t bytes;
    double   us;
} measured_t;

static int read_measured(const char *path, const char *method, char *coll, size_t coll_len, long *ranks,
                         measured_t **rows_p, int *n_p)
{
    FILE       *f = fopen(path, "r");
    char        line[512];
    measured_t *rows = NULL;
    int         n = 0, cap = 0, lineno = 0;

    *rows_p = NULL;
    *n_p    = 0;
    if (f == NULL) {
        fprintf(stderr, "gc3c simulate: cannot open %s: %s\n", path, strerror(errno));
        return 0;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        char              *tok[8], *save = NULL;
        int                k = 0;
        unsigned long long b;
        char              *end;
        double             us;
        lineno++;
        if (lineno == 1 || line[0] == '#' || line[0] == '\n') {
            continue; /* the header */
        }
        for (char *t = strtok_r(line, ",\n", &save); t != NULL && k < 8; t = strtok_r(NULL, ",\n", &save)) {
            tok[k++] = t;
        }
        /* collective,ranks,bytes,method,latency_us,... */
        if (k < 5) {
            fprintf(stderr, "%s:%d: not a gc3_bench CSV row\n", path, lineno);
            fclose(f);
            free(rows);
            return 0;
        }
        if (strcmp(tok[3], method) != 0) {
            continue;
        }
        us = strtod(tok[4], &end);
        if (!gc3_parse_bytes(tok[2], &b) || end == tok[4] || us <= 0) {
            fprintf(stderr, "%s:%d: bad bytes or latency\n", path, lineno);
            fclose(f);
            free(rows);
            return 0;
        }
        if (coll[0] == '\0') {
            gc3_snprintf_cut(coll, coll_len, "%s", tok[0]);
        }
        if (*ranks == 0) {
            *ranks = strtol(tok[1], NULL, 10);
        }
        if (n == cap) {
            measured_t *r = realloc(rows, (size_t)(cap = cap ? 2 * cap : 32) * sizeof(*r));
            if (r == NULL) {
                fclose(f);
                free(rows);
                return 0;
            }
            rows = r;
        }
        rows[n].bytes = (uint64_t)b;
        rows[n].us    = us;
        n++;
    }
    fclose(f);
    if (n == 0) {
        fprintf(stderr, "gc3c simulate: %s has no rows of method %s\n", path, method);
        free(rows);
        return 0;
    }
    *rows_p = rows;
    *n_p    = n;
    return 1;
}

/* A plan of the rules, made once per rule (as the component keys them). */
typedef struct {
    const gc3_rule_t *rule;
    gc3_ir_program_t *program;
    gc3_rule_made_t   made;
} sim_plan_t;

#define GC3C_MAX_PLANS 64

/* simulate --coll C [--measured CSV]: what gc3 runs, per size: the rules' algorithm, the runtime's
 * geometry of the call (gc3_plan_call_shape) and the cost model's time; with a CSV, against it. */
static int cmd_simulate_rules(int argc, char **argv)
{
    const char   *rules_file = NULL, *csv = NULL, *method = "gc3", *exclude = NULL, *algo_dir = NULL;
    const char   *extra[GC3C_MAX_RULES]; /* --rule lines, ahead of the rules */
    int           nextra       = 0;
    char          collname[64] = "";
    long          gpus = 0, nodes = 1, fifo_slots = GC3_FIFO_SLOTS_DEFAULT;
    uint64_t      lo = 4, hi = 1ull << 28, slot_bytes = 0, plan_fifo = GC3_PLAN_FIFO_BYTES_DEFAULT, tile_bytes = 0;
    int           zero_copy = 1, zc_pull = 0, inplace = 0, rc = 0, nrows = 0, nplans = 0, counted = 0, want_params = 0;
    int               vcall     = 0; /* --coll alltoallv etc.: the plain collective's plans, per-rank counts */
    double        tolerance = -1, worst = 0, sum = 0;
    uint64_t      worst_at = 0;
    gc3_link_t    link     = GC3_LINK_NVLINK;
    gc3_coll_t    coll     = GC3_COLL_CUSTOM;
    gc3_machine_t m;
    gc3_rules_t  *R    = NULL;
    measured_t   *rows = NULL;
    sim_plan_t    plans[GC3C_MAX_PLANS];
    gc3_diag_t    diag;
    gc3_exec_params_t ep;

    gc3_machine_default(&m, 1, 1);
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        long        v;
        if (strcmp(o, "--params") == 0) {
            want_params = 1;
            continue;
        }
        if (strcmp(o, "--inplace") == 0) {
            inplace = 1;
            continue;
        }
        if (!need_arg(i, argc, o)) {
            return 2;
        }
        i++;
        if (strcmp(o, "--coll") == 0) {
            gc3_snprintf_cut(collname, sizeof(collname), "%s", argv[i]);
        } else if (strcmp(o, "--rules") == 0) {
            rules_file = argv[i];
        } else if (strcmp(o, "--algorithm-dir") == 0) {
            algo_dir = argv[i];
        } else if (strcmp(o, "--rule") == 0) {
            if (nextra == GC3C_MAX_RULES) {
                fprintf(stderr, "gc3c simulate: at most %d --rule\n", GC3C_MAX_RULES);
                return 2;
            }
            extra[nextra++] = argv[i];
        } else if (strcmp(o, "--measured") == 0) {
            csv = argv[i];
        } else if (strcmp(o, "--method") == 0) {
            method = argv[i];
        } else if (strcmp(o, "--exclude") == 0) {
            exclude = argv[i];
        } else if (strcmp(o, "--param") == 0) {
            if (!set_param(&m, argv[i])) {
                return 2;
            }
        } else if (strcmp(o, "--gpus") == 0 || strcmp(o, "--nodes") == 0 || strcmp(o, "--fifo-slots") == 0) {
            if (!parse_int(argv[i], strcmp(o, "--fifo-slots") == 0 ? 2 : 1, GC3_IR_MAX_GPUS, &v)) {
                fprintf(stderr, "gc3c simulate: %s needs a positive integer (got '%s')\n", o, argv[i]);
                return 2;
            }
            *(strcmp(o, "--gpus") == 0 ? &gpus : strcmp(o, "--nodes") == 0 ? &nodes : &fifo_slots) = v;
        } else if (strcmp(o, "--slot-bytes") == 0 || strcmp(o, "--plan-fifo-bytes") == 0 ||
                   strcmp(o, "--tile-bytes") == 0) {
            uint64_t b;
            if (!parse_size(argv[i], &b)) {
                fprintf(stderr, "gc3c simulate: %s needs bytes like 1M (got '%s')\n", o, argv[i]);
                return 2;
            }
            *(strcmp(o, "--slot-bytes") == 0   ? &slot_bytes
              : strcmp(o, "--tile-bytes") == 0 ? &tile_bytes
                                               : &plan_fifo) = b;
        } else if (strcmp(o, "--zero-copy") == 0) {
            if (strcmp(argv[i], "on") != 0 && strcmp(argv[i], "pull") != 0 && strcmp(argv[i], "off") != 0) {
                fprintf(stderr, "gc3c simulate: --zero-copy is on, pull or off\n");
                return 2;
            }
            zero_copy = strcmp(argv[i], "off") != 0;
            zc_pull   = strcmp(argv[i], "pull") == 0;
        } else if (strcmp(o, "--link") == 0) {
            link = strcmp(argv[i], "nvlink") == 0 ? GC3_LINK_NVLINK
                   : strcmp(argv[i], "pcie") == 0 ? GC3_LINK_PCIE
                   : strcmp(argv[i], "host") == 0 ? GC3_LINK_HOST
                                                  : GC3_LINK_COUNT;
            if (link == GC3_LINK_COUNT) {
                fprintf(stderr, "gc3c simulate: --link is nvlink, pcie or host\n");
                return 2;
            }
        } else if (strcmp(o, "--tolerance") == 0) {
            char *end;
            tolerance = strtod(argv[i], &end);
            if (end == argv[i] || *end != '\0' || tolerance < 0) {
                fprintf(stderr, "gc3c simulate: --tolerance needs a percentage (got '%s')\n", argv[i]);
                return 2;
            }
        } else if (strcmp(o, "--sizes") == 0) {
            if (!parse_size_range(argv[i], &lo, &hi)) {
                fprintf(stderr, "gc3c simulate: --sizes needs MIN:MAX like 4:256M\n");
                return 2;
            }
        } else {
            fprintf(stderr, "gc3c simulate: %s is not an option with --coll or --measured (gc3c simulate --help)\n", o);
            return 2;
        }
    }
    if (want_params) {
        print_params(&m);
        return 0;
    }
    if (csv != NULL && !read_measured(csv, method, collname, sizeof(collname), &gpus, &rows, &nrows)) {
        return 1;
    }
    if (gc3_coll_from_call_name(collname, &coll, &vcall) != GC3_OK || coll == GC3_COLL_CUSTOM || gpus < 1 ||
        gpus % nodes != 0) {
        fprintf(stderr, "gc3c simulate: --coll needs a collective (allreduce, alltoall, ...) and --gpus G "
                        "(or a gc3_bench CSV with --measured)\n");
        free(rows);
        return 2;
    }
    gc3_diag_init(&diag);
    {
        /* the rules: --rule lines first (first match wins), then the file's or the built-in ones */
        char        *text = NULL, *file_text = NULL;
        const char  *base = gc3_rules_builtin_text();
        gc3_status_t st   = GC3_OK;
        if (rules_file != NULL) {
            FILE *f = fopen(rules_file, "r");
            long  len;
            if (f == NULL || fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
                (file_text = calloc((size_t)len + 1, 1)) == NULL ||
                fread(file_text, 1, (size_t)len, f) != (size_t)len) {
                fprintf(stderr, "gc3c simulate: cannot read %s\n", rules_file);
                st = GC3_ERR_IO;
            }
            if (f != NULL) {
                fclose(f);
            }
            base = file_text;
        }
        if (st == GC3_OK) {
            size_t len = strlen(base) + 1;
            for (int k = 0; k < nextra; k++) {
                len += strlen(extra[k]) + 1;
            }
            if ((text = malloc(len)) == NULL) {
                st = GC3_ERR_NO_MEMORY;
            }
        }
        if (st == GC3_OK) {
            text[0] = '\0';
            for (int k = 0; k < nextra; k++) {
                strcat(text, extra[k]);
                strcat(text, "\n");
            }
            strcat(text, base);
            st = gc3_rules_parse(text,
                                 nextra       ? "--rule lines and the rules"
                                 : rules_file ? rules_file
                                              : "built-in",
                                 &diag, &R);
        }
        free(text);
        free(file_text);
        if (st == GC3_OK && algo_dir != NULL) { /* its programs ahead of the rules, as coll_gc3_algorithm_dir */
            int added = 0;
            st        = gc3_rules_add_xml_dir(R, algo_dir, &diag, &added);
            gc3_diag_print(&diag, stderr, "");
            gc3_diag_cleanup(&diag);
            gc3_diag_init(&diag);
        }
        if (st != GC3_OK) {
            gc3_diag_print(&diag, stderr, "");
            gc3_diag_cleanup(&diag);
            gc3_rules_destroy(R);
            free(rows);
            return 1;
        }
    }
    m.nodes         = (int)nodes;
    m.gpus_per_node = (int)(gpus / nodes);
    gc3_exec_params_default(&ep, GC3_BACKEND_CUDA, 0, (int)gpus);
    {
        static int node_of[GC3_IR_MAX_GPUS]; /* node-major ranks (connections between nodes: no zero-copy) */
        for (int r = 0; r < (int)gpus; r++) {
            node_of[r] = r / (int)(gpus / nodes);
        }
        ep.node = nodes > 1 ? node_of : NULL;
    }
    ep.slots         = (int)fifo_slots;
    ep.fifo_bytes    = plan_fifo;
    ep.zc_fifo_bytes = GC3_ZC_FIFO_BYTES_DEFAULT; /* (only a buffer's first call would use its slots) */
    ep.tile_bytes    = tile_bytes;
    if (slot_bytes > 0) {
        ep.slot_bytes = slot_bytes;
    }
    if (vcall) {
        zero_copy = 0; /* a call with per-rank counts never runs in zero-copy mode (gc3_call_t.segs) */
    }
    {
        char a[32], b[32], c[32];
        printf("# %s%s%s%s on %ld node%s x %ld GPU%s (%s), %s calls, rules: %s; runtime: %d slots of at most %s, plan "
               "FIFOs %s%s, zero-copy %s\n",
               vcall ? collname : "", vcall ? " (on " : "", gc3_coll_desc(coll)->mpi_name,
               vcall ? "'s plans, every rank's segments of the size below)" : "", nodes, nodes == 1 ? "" : "s",
               gpus / nodes, gpus / nodes == 1 ? "" : "s", gc3_link_name(link), inplace ? "in-place" : "out-of-place",
               rules_file ? rules_file : "built-in", ep.slots, gc3_mem_format(ep.slot_bytes, a, sizeof(a)),
               plan_fifo ? "capped at " : "without a cap", plan_fifo ? gc3_mem_format(plan_fifo, b, sizeof(b)) : "",
               zero_copy ? (snprintf(c, sizeof(c), "%s (tiles up to %s)", zc_pull ? "on, never pushed" : "on",
                                     gc3_mem_format(tile_bytes ? tile_bytes : GC3_TILE_BYTES_DEFAULT, a, sizeof(a))),
                            c)
                         : "off");
    }
    printf("# bytes as each rank passes them (alltoall: to each peer), float32; times per call in us; path: fifo, "
           "zero-copy (zc: messages in place; mode: large tiles), launched (not resident)%s\n",
           csv ? "; error: (predicted - measured) / measured" : "");
    printf("%12s  %-38s %-14s %6s %10s%s\n", "# bytes", "algorithm (rule)", "path", "loops", "predicted",
           csv ? "   measured    error" : "");
    for (int k = 0; csv ? k < nrows : (k == 0 || (uint64_t)1 << 62 >= lo); k++) {
        const uint64_t    per   = csv ? rows[k].bytes : lo;
        const uint64_t    bytes = gc3_coll_call_bytes(coll, (int)gpus, per); /* as the component counts it */
        const gc3_rule_t *r;
        sim_plan_t       *pl = NULL;
        gc3_call_shape_t  shape;
        gc3_cost_call_t   call;
        gc3_cost_result_t res;
        char              algo[96], path[40];
        int               excluded = 0;

        if (!csv && per > hi) {
            break;
        }
        r = gc3_rules_match_root(R, coll, (int)nodes, (int)(gpus / nodes), link, bytes, (int)gpus, inplace,
                                 gc3_coll_desc(coll)->rooted ? 0 : -1);
        if (r == NULL) {
            printf("%12" PRIu64 "  (no rule: passed on)\n", per);
            goto next;
        }
        for (int i = 0; i < nplans; i++) {
            pl = plans[i].rule == r ? &plans[i] : pl;
        }
        if (pl == NULL) {
            gc3_rule_target_t t = { .ranks      = (int)gpus,
                                    .nodes      = (int)nodes,
                                    .inplace    = inplace,
                                    .slots      = ep.slots,
                                    .max_blocks = 1 << 20,
                                    .root       = 0 };
            if (nplans == GC3C_MAX_PLANS) {
                fprintf(stderr, "gc3c simulate: more than %d rules\n", GC3C_MAX_PLANS);
                rc = 1;
                break;
            }
            pl          = &plans[nplans];
            pl->rule    = r;
            pl->program = NULL;
            if (gc3_rule_program(r, &t, &diag, &pl->program, &pl->made) != GC3_OK) {
                gc3_diag_print(&diag, stderr, "");
                fprintf(stderr, "gc3c simulate: cannot make %s's program (%s)\n", r->algo, r->where);
                rc = 1;
                break;
            }
            nplans++;
        }
        ep.zero_copy = zero_copy;
        ep.zc_pull   = zc_pull;
        if (gc3_plan_call_shape(&ep, pl->program, per / 4 > 0 ? per / 4 : 1, GC3_DT_FLOAT32, inplace, &diag, &shape) !=
            GC3_OK) {
            gc3_diag_print(&diag, stderr, "");
            rc = 1;
            break;
        }
        gc3_cost_call_default(&call);
        call.tile_bytes = shape.tile * 4;
        call.loops      = shape.loops;
        call.slots      = shape.slots;
        call.zero_copy  = zero_copy && !pl->program->no_zc && gc3_proto_runs_as(pl->made.proto) == GC3_PROTO_SIMPLE;
        call.zc_mode    = call.zero_copy && shape.zc_mode;
        call.push       = call.zc_mode && !ep.zc_pull && !pl->program->zc_pull;
        call.inplace    = inplace;
        call.resident   = shape.resident;
        if (gc3_cost_predict_call(pl->program, &m, &call, bytes, &diag, &res) != GC3_OK) {
            gc3_diag_print(&diag, stderr, "");
            rc = 1;
            break;
        }
        gc3_snprintf_cut(algo, sizeof(algo), "%s %s %dx%d (%s)", r->algo,
                         gc3_proto_name(gc3_proto_runs_as(pl->made.proto)), pl->made.channels, pl->made.instances,
                         r->xml != NULL && strrchr(r->where, '/') != NULL ? strrchr(r->where, '/') + 1
                                                                          : r->where); /* a file: its name */
        gc3_snprintf_cut(path, sizeof(path), "%s%s",
                         call.zc_mode      ? "zc mode"
                         : res.zc_msgs > 0 ? "zc"
                                           : "fifo",
                         shape.resident ? "" : ",launched");
        printf("%12" PRIu64 "  %-38s %-14s %6d %10.2f", per, algo, path, res.loops, res.time_us);
        if (csv) {
            const double err = (res.time_us - rows[k].us) / rows[k].us * 100.0;
            if (exclude != NULL) {
                char list[256], *save = NULL;
                gc3_snprintf_cut(list, sizeof(list), "%s", exclude);
                for (char *t = strtok_r(list, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
                    uint64_t b;
                    excluded |= parse_size(t, &b) && b == per;
                }
            }
            printf(" %10.2f %+7.1f%%%s", rows[k].us, err, excluded ? " (excluded)" : "");
            if (!excluded) {
                counted++;
                sum += fabs(err);
                if (fabs(err) > worst) {
                    worst    = fabs(err);
                    worst_at = per;
                }
            }
        }
        printf("\n");
    next:
        if (!csv) {
            if (lo > UINT64_MAX / 2) {
                break;
            }
            lo *= 2;
        }
    }
    if (rc == 0 && csv && counted > 0) {
        printf("# max |error| %.1f %% at %" PRIu64 " bytes, mean %.1f %%, over %d sizes", worst, worst_at,
               sum / counted, counted);
        if (tolerance >= 0) {
            printf("; tolerance %.1f %%: %s", tolerance, worst <= tolerance ? "ok" : "EXCEEDED");
            rc = worst <= tolerance ? 0 : 1;
        }
        printf("\n");
    }
    for (int i = 0; i < nplans; i++) {
        gc3_ir_program_destroy(plans[i].program);
    }
    gc3_rules_destroy(R);
    gc3_diag_cleanup(&diag);
    free(rows);
    return rc;
}

/* simulate: FILE, or --algo A[,B...] generated for the machine; with several, a table with
 * the best per size and the crossover sizes */
/* --algo: the shape options given, for an algorithm of a comparison: only those it takes (channels,
 * chunks per peer; the others run with 1, and a note on stderr says so) */
static gc3_algo_params_t gc3c_sim_params(const gc3_algo_params_t *ap, const char *algo)
{
    gc3_algo_params_t one     = *ap;
    const unsigned    dropped = gc3_algo_keep_taken(gc3_algo_find(algo), &one);
    if (dropped & GC3_ALGO_TAKES_CHANNELS) {
        fprintf(stderr, "gc3c simulate: %s does not take channels: it runs with 1\n", algo);
    }
    if (dropped & GC3_ALGO_TAKES_CHUNKS) {
        fprintf(stderr, "gc3c simulate: %s does not take chunks_per_peer: it runs with 1\n", algo);
    }
    return one;
}

int cmd_simulate(int argc, char **argv)
{
    const char       *file  = NULL;
    char             *algos = NULL;
    gc3_machine_t     m;
    gc3_algo_params_t ap;
    long              nodes = 0, gpus = 0, ranks = 0;
    double            nvbw = 0, netbw = 0, nvlat = 0, netlat = 0, stagebw = 0;
    uint64_t          lo = 1024, hi = 1ull << 30;
    gc3_ir_program_t *progs[GC3C_MAX_SIM] = { NULL };
    const char       *names[GC3C_MAX_SIM];
    int               nprogs = 0, rc = 0, nodes_given = 0, verify_given = 1, width[GC3C_MAX_SIM];
    char              path[96] = "GPUDirect";
    const char       *param[GC3C_MAX_PARAMS];
    int               nparam = 0;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--coll") == 0 || strcmp(argv[i], "--measured") == 0 || strcmp(argv[i], "--params") == 0) {
            return cmd_simulate_rules(argc, argv);
        }
    }
    gc3_algo_params_default(&ap, 0);
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        int         r;
        if (o[0] != '-') {
            if (file != NULL) {
                fprintf(stderr, "gc3c simulate: one FILE at a time\n");
                return 2;
            }
            file = o;
            continue;
        }
        if (strcmp(o, "--no-verify") == 0) {
            verify_given = 0;
            continue;
        }
        if (strcmp(o, "--instances") == 0 || strcmp(o, "--channels") == 0 || strcmp(o, "--proto") == 0 ||
            strcmp(o, "--chunks-per-peer") == 0 || strcmp(o, "--slots") == 0 || strcmp(o, "--root") == 0) {
            r = parse_gen_option(argc, argv, &i, &ap, &nodes_given);
            if (r != 1) {
                return 2;
            }
            continue;
        }
        if (!need_arg(i, argc, o)) {
            return 2;
        }
        i++;
        if (strcmp(o, "--algo") == 0) {
            algos = argv[i];
        } else if (strcmp(o, "--param") == 0) {
            if (nparam == GC3C_MAX_PARAMS) {
                fprintf(stderr, "gc3c simulate: at most %d --param\n", GC3C_MAX_PARAMS);
                return 2;
            }
            param[nparam++] = argv[i];
        } else if ((strcmp(o, "--ranks") == 0 && !parse_int(argv[i], 1, GC3_IR_MAX_GPUS, &ranks)) ||
                   (strcmp(o, "--nodes") == 0 && !parse_int(argv[i], 1, GC3_IR_MAX_GPUS, &nodes)) ||
                   (strcmp(o, "--gpus") == 0 && !parse_int(argv[i], 1, GC3_IR_MAX_GPUS, &gpus)) ||
                   (strcmp(o, "--nvlink") == 0 && gc3_parse_bandwidth(argv[i], &nvbw) != GC3_OK) ||
                   (strcmp(o, "--net") == 0 && gc3_parse_bandwidth(argv[i], &netbw) != GC3_OK) ||
                   (strcmp(o, "--staged") == 0 && gc3_parse_bandwidth(argv[i], &stagebw) != GC3_OK) ||
                   (strcmp(o, "--nvlink-lat") == 0 && gc3_parse_time_us(argv[i], &nvlat) != GC3_OK) ||
                   (strcmp(o, "--net-lat") == 0 && gc3_parse_time_us(argv[i], &netlat) != GC3_OK)) {
            fprintf(stderr, "gc3c simulate: bad value '%s' for %s\n", argv[i], o);
            return 2;
        } else if (strcmp(o, "--sizes") == 0) {
            if (!parse_size_range(argv[i], &lo, &hi)) {
                fprintf(stderr, "gc3c simulate: --sizes needs MIN:MAX like 1K:1G\n");
                return 2;
            }
        } else if (strcmp(o, "--ranks") && strcmp(o, "--nodes") && strcmp(o, "--gpus") && strcmp(o, "--nvlink") &&
                   strcmp(o, "--net") && strcmp(o, "--nvlink-lat") && strcmp(o, "--net-lat") && strcmp(o, "--staged") &&
                   strcmp(o, "--param")) {
            fprintf(stderr, "gc3c simulate: unknown option %s\n", o);
            return 2;
        }
    }
    if ((file == NULL) == (algos == NULL)) {
        fprintf(stderr, "gc3c simulate: give either FILE or --algo NAME[,NAME...]\n");
        return 2;
    }
    if (ranks > 0) { /* gen's --ranks R: R ranks on the nodes, --gpus R/N */
        long n = nodes > 0 ? nodes : 1;
        if (ranks % n != 0 || (gpus > 0 && gpus * n != ranks)) {
            fprintf(stderr, "gc3c simulate: --ranks %ld is not %ld node(s) x %s\n", ranks, n,
                    gpus > 0 ? "--gpus" : "the same number of GPUs");
            return 2;
        }
        gpus = ranks / n;
    }
    if (file != NULL) {
        progs[0] = gc3c_load(file);
        if (progs[0] == NULL) {
            return 1;
        }
        names[0] = file;
        nprogs   = 1;
        if (progs[0]->inplace && !progs[0]->outofplace) {
            /* a program for in-place calls: an out-of-place call copies its input first, counted */
            if (gc3_ir_copy_first(progs[0], &progs[1]) != GC3_OK) {
                fprintf(stderr, "gc3c simulate: cannot make the out-of-place form of %s\n", file);
                rc = 1;
                goto out;
            }
            names[0] = "in place";
            names[1] = "out of place";
            nprogs   = 2;
        }
        if (nodes == 0) {
            nodes = gpus ? progs[0]->ngpus / gpus : 1;
        }
        if (gpus == 0) {
            gpus = progs[0]->ngpus / nodes;
        }
    } else {
        char *save = NULL;
        if (nodes == 0) {
            nodes = 1;
        }
        if (gpus == 0) {
            fprintf(stderr, "gc3c simulate: --algo needs --gpus G (and --nodes N, default 1)\n");
            return 2;
        }
        ap.nranks        = (int)(nodes * gpus);
        ap.nodes         = (int)nodes;
        ap.gpus_per_node = (int)gpus;
        ap.verify        = verify_given && ap.nranks <= 64;
        for (char *t = strtok_r(algos, ",", &save); t != NULL; t = strtok_r(NULL, ",", &save)) {
            gc3_diag_t        diag;
            gc3_status_t      status;
            gc3_algo_params_t one;
            if (nprogs == GC3C_MAX_SIM) {
                fprintf(stderr, "gc3c simulate: at most %d algorithms\n", GC3C_MAX_SIM);
                rc = 2;
                goto out;
            }
            if (!check_root_option("simulate", t)) {
                rc = 2;
                goto out;
            }
            gc3_diag_init(&diag);
            one    = gc3c_sim_params(&ap, t);
            status = gc3_algo_generate(t, &one, &diag, NULL, &progs[nprogs]);
            if (status != GC3_OK) {
                gc3_diag_print(&diag, stderr, "");
                fprintf(stderr, "gc3c simulate: cannot generate %s for %d ranks\n", t, ap.nranks);
                gc3_diag_cleanup(&diag);
                rc = 1;
                goto out;
            }
            gc3_diag_cleanup(&diag);
            names[nprogs++] = t;
        }
    }
    gc3_machine_default(&m, (int)nodes, (int)gpus);
    for (int k = 0; k < nparam; k++) {
        if (!set_param(&m, param[k])) {
            rc = 2;
            goto out;
        }
    }
    if (nvbw > 0)
        m.intra_bw_GBps = nvbw;
    if (netbw > 0)
        m.net_bw_GBps = netbw;
    if (nvlat > 0)
        m.intra_alpha_us = nvlat;
    if (netlat > 0)
        m.net_alpha_us = netlat;
    m.stage_bw_GBps = stagebw;
    if (stagebw > 0) {
        snprintf(path, sizeof(path), "host-staged at %.1f GB/s + %.1f us", stagebw, m.stage_alpha_us);
    }
    printf("# %s on %ld node%s x %ld GPU%s (intra %.0f GB/s %.2f us, net %.1f GB/s %.2f us, %s)%s\n",
           progs[0]->coll_name, nodes, nodes == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", m.intra_bw_GBps,
           m.intra_alpha_us, m.net_bw_GBps, m.net_alpha_us, path,
           file == NULL ? (ap.verify ? "; programs verified" : "; programs not verified (more than 64 ranks)") : "");
    /* a column per program: its predicted time per call, in microseconds */
    printf("# predicted time per call in us (microseconds)%s\n",
           nprogs > 1 ? "; best: the fastest" : "; algbw in GB/s");
    printf("%14s", "# size (B)");
    for (int k = 0; k < nprogs; k++) {
        const int head = (int)strlen(names[k]) + 5; /* "NAME (us)", right-aligned like the numbers */
        width[k]       = head > 14 ? head : 14;
        printf(" %*s%s (us)", width[k] - head, "", names[k]);
    }
    printf(nprogs > 1 ? " %14s\n" : " %14s\n", nprogs > 1 ? "best" : "algbw (GB/s)");
    {
        int prev_best = -1;
        for (uint64_t s = lo; s <= hi && rc == 0; s *= 2) {
            double t[GC3C_MAX_SIM];
            int    best = 0;
            for (int k = 0; k < nprogs; k++) {
                gc3_diag_t diag;
                gc3_diag_init(&diag);
                if (gc3_cost_predict(progs[k], &m, s, &diag, &t[k]) != GC3_OK) {
                    gc3_diag_print(&diag, stderr, "");
                    rc = 1;
                }
                gc3_diag_cleanup(&diag);
                best = t[k] < t[best] ? k : best;
            }
            if (rc != 0) {
                break;
            }
            printf("%14" PRIu64, s);
            for (int k = 0; k < nprogs; k++) {
                printf(" %*.2f", width[k], t[k]);
            }
            if (nprogs > 1) {
                printf(" %14s\n", names[best]);
                if (prev_best >= 0 && best != prev_best) {
                    printf("# crossover: %s -> %s between %" PRIu64 " and %" PRIu64 " bytes\n", names[prev_best],
                           names[best], s / 2, s);
                }
                prev_best = best;
            } else {
                printf(" %14.2f\n", (double)s / (t[0] * 1e3));
            }
            if (s > UINT64_MAX / 2) {
                break;
            }
        }
    }
out:
    for (int k = 0; k < nprogs; k++) {
        gc3_ir_program_destroy(progs[k]);
    }
    return rc;
}
