/* gc3c run: a program on the reference executor, on random data, checked against its postcondition. */
#include "gc3c.h"

/* Host memory this process may still take, in bytes: MemAvailable, and the cgroup's limit less its
 * use (v2 or v1) where lower; 0 when neither can be read. */
static double available_memory(void)
{
    double                   avail = 0, limit, used;
    char                     line[256];
    FILE                    *f       = fopen("/proc/meminfo", "r");
    static const char *const cg[][2] = { { "/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current" },
                                         { "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                           "/sys/fs/cgroup/memory/memory.usage_in_bytes" } };

    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        unsigned long long kb;
        if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1) {
            avail = (double)kb * 1024.0;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    for (size_t i = 0; i < sizeof(cg) / sizeof(cg[0]); i++) {
        FILE *fl = fopen(cg[i][0], "r"), *fu = fopen(cg[i][1], "r");
        if (fl != NULL && fu != NULL && fscanf(fl, "%lf", &limit) == 1 && fscanf(fu, "%lf", &used) == 1 &&
            limit < 1e18 && (avail == 0 || limit - used < avail)) {
            avail = limit > used ? limit - used : 1;
        }
        if (fl != NULL)
            fclose(fl);
        if (fu != NULL)
            fclose(fu);
    }
    return avail;
}

/* The host memory a reference run of p holds at once, about: every rank's input, output and
 * expected output, its scratch chunks, and messages in flight (at most a buffer's worth a rank). */
static double run_memory(const gc3_ir_program_t *p, uint64_t chunk_elems, size_t ds)
{
    double bytes = 0, ce = (double)chunk_elems * (double)ds;

    for (int r = 0; r < p->ngpus; r++) {
        double nb = (double)(p->gpus[r].i_chunks > p->gpus[r].o_chunks ? p->gpus[r].i_chunks : p->gpus[r].o_chunks);
        bytes += 4 * nb * ce + (double)p->gpus[r].s_chunks * ce;
    }
    return bytes;
}

int cmd_run(int argc, char **argv)
{
    const char        *file = NULL, *post = NULL;
    gc3_refexec_args_t args  = { GC3_DT_FLOAT32, GC3_OP_SUM, 0, 0, 8, 0 };
    uint64_t           count = 0, seed = 1;
    gc3_ir_program_t  *p;
    gc3_postcond_t    *pc = NULL;
    gc3_diag_t         diag;
    gc3_status_t       status;
    void             **in = NULL, **out = NULL, **exp = NULL;
    size_t             ds;
    int                rc = 1, copied = 0, force = 0;

    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--force") == 0) {
            force = 1;
        } else if (strcmp(argv[i], "--dtype") == 0) {
            if (!need_arg(i, argc, argv[i]) || gc3_dtype_from_name(argv[++i], &args.dtype) != GC3_OK) {
                fprintf(stderr, "gc3c run: unknown dtype\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--op") == 0) {
            if (!need_arg(i, argc, argv[i]) || gc3_op_from_name(argv[++i], &args.op) != GC3_OK) {
                fprintf(stderr, "gc3c run: unknown op\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--count") == 0) {
            if (!need_arg(i, argc, argv[i]) || !parse_size(argv[++i], &count) || count == 0) {
                fprintf(stderr, "gc3c run: --count needs a positive integer\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--seed") == 0) {
            if (!need_arg(i, argc, argv[i]) || !parse_size(argv[++i], &seed)) {
                fprintf(stderr, "gc3c run: --seed needs an integer\n");
                return 2;
            }
        } else if (strcmp(argv[i], "--post") == 0) {
            if (!need_arg(i, argc, argv[i])) {
                return 2;
            }
            post = argv[++i];
        } else if (strcmp(argv[i], "--inplace") == 0) {
            args.inplace = 1;
        } else if (argv[i][0] == '-') {
            fprintf(stderr, "gc3c run: unknown option %s\n", argv[i]);
            return 2;
        } else if (file == NULL) {
            file = argv[i];
        } else {
            fprintf(stderr, "gc3c run: one FILE at a time\n");
            return 2;
        }
    }
    if (file == NULL) {
        fprintf(stderr, "gc3c run: no FILE given\n");
        return 2;
    }
    if (!gc3_op_valid(args.op, args.dtype)) {
        fprintf(stderr, "gc3c run: %s is not defined on %s\n", gc3_op_name(args.op), gc3_dtype_name(args.dtype));
        return 2;
    }
    p = gc3c_load(file);
    if (p == NULL) {
        return 1;
    }
    gc3_diag_init(&diag);
    if (!gc3c_load_post(post, p, &pc)) {
        goto out;
    }
    if (!args.inplace && !p->outofplace) {
        /* an out-of-place call of a program for in-place calls: its input copied into place first */
        gc3_ir_program_t *cf = NULL;
        if (gc3_ir_copy_first(p, &cf) != GC3_OK) {
            fprintf(stderr, "%s: FAILED (cannot make its out-of-place form)\n", file);
            goto out;
        }
        gc3_ir_program_destroy(p);
        p      = cf;
        copied = 1;
    }
    if (count == 0) {
        const gc3_coll_desc_t *d = gc3_coll_desc(p->coll); /* count: one segment */
        count                    = GC3C_RUN_CHUNK_ELEMS *
                (!d->in_per_rank && !d->out_per_rank
                     ? (uint64_t)p->nchunksperloop
                     : (uint64_t)(p->nchunksperloop / p->ngpus > 0 ? p->nchunksperloop / p->ngpus : 1));
    }
    status = gc3_coll_chunk_elems(p, count, &args.chunk_elems);
    if (status != GC3_OK) {
        fprintf(stderr, "%s: count %" PRIu64 " does not split into %d chunks of equal size\n", file, count,
                p->nchunksperloop);
        goto out;
    }
    ds = gc3_dtype_size(args.dtype);
    {
        double need = run_memory(p, args.chunk_elems, ds), avail = available_memory();
        if (!force && avail > 0 && need > avail) {
            fprintf(stderr,
                    "%s: count %" PRIu64 " needs about %.1f GiB of host memory (%d ranks' input, output, "
                    "expected output and messages), more than the %.1f GiB available: not run (a smaller --count, "
                    "or --force to run anyway)\n",
                    file, count, need / 1073741824.0, p->ngpus, avail / 1073741824.0);
            rc = 2;
            goto out;
        }
    }
    in  = calloc((size_t)p->ngpus, sizeof(void *));
    out = calloc((size_t)p->ngpus, sizeof(void *));
    exp = calloc((size_t)p->ngpus, sizeof(void *));
    if (in == NULL || out == NULL || exp == NULL) {
        goto out;
    }
    for (int r = 0; r < p->ngpus; r++) {
        size_t ni = (size_t)p->gpus[r].i_chunks * args.chunk_elems, no = (size_t)p->gpus[r].o_chunks * args.chunk_elems;
        size_t nb = (ni > no ? ni : no) + 1;
        in[r]     = calloc(nb, ds);
        out[r]    = calloc(nb, ds);
        exp[r]    = calloc(nb, ds);
        if (in[r] == NULL || out[r] == NULL || exp[r] == NULL) {
            goto out;
        }
        gc3_refexec_fill(args.dtype, args.op, in[r], ni, seed * 1000 + (uint64_t)r);
        if (args.inplace) {
            /* the single buffer holds the input at its in-place position */
            const gc3_coll_desc_t *d   = gc3_coll_desc(p->coll);
            size_t                 off = d->inplace_inner == GC3_BUF_INPUT && d->inplace_slice ? (size_t)r * ni : 0;
            memcpy((char *)out[r] + off * ds, in[r], ni * ds);
            memcpy((char *)exp[r], out[r], (nb - 1) * ds);
        }
    }
    status = gc3_refexec_run(p, &args, in, out, &diag);
    if (status != GC3_OK) {
        gc3_diag_print(&diag, stderr, "");
        fprintf(stderr, "%s: FAILED (%s)\n", file, gc3_status_string(status));
        goto out;
    }
    if (!args.inplace) {
        for (int r = 0; r < p->ngpus; r++) {
            memcpy(exp[r], out[r], (size_t)p->gpus[r].o_chunks * args.chunk_elems * ds); /* keep don't-care cells */
        }
    }
    status = gc3_refexec_expected(p, pc, &args, in, exp);
    for (int r = 0; r < p->ngpus && status == GC3_OK; r++) {
        char                   what[64];
        const gc3_coll_desc_t *d = gc3_coll_desc(p->coll); /* in place, an output slice: the whole buffer */
        size_t                 n =
            (size_t)(args.inplace && d->inplace_inner == GC3_BUF_OUTPUT && d->inplace_slice ? p->gpus[r].i_chunks
                                                                                            : p->gpus[r].o_chunks) *
            args.chunk_elems;
        snprintf(what, sizeof(what), "rank %d output", r);
        status = gc3_refexec_compare(args.dtype, out[r], exp[r], n, what, &diag);
    }
    if (status != GC3_OK) {
        gc3_diag_print(&diag, stderr, "");
        fprintf(stderr, "%s: FAILED (%s)\n", file, gc3_status_string(status));
        goto out;
    }
    printf("%s: %s '%s' on %d ranks, %s%s%s, count %" PRIu64 " (%" PRIu64 " element%s/chunk), %s: results verified\n",
           file, p->coll_name, p->name, p->ngpus, gc3_dtype_name(args.dtype),
           (gc3_coll_desc(p->coll)->reduces || p->coll == GC3_COLL_CUSTOM) ? " " : "",
           (gc3_coll_desc(p->coll)->reduces || p->coll == GC3_COLL_CUSTOM) ? gc3_op_name(args.op) : "", count,
           args.chunk_elems, args.chunk_elems == 1 ? "" : "s",
           args.inplace ? "in-place"
           : copied     ? "out-of-place (input copied into place first)"
                        : "out-of-place");
    rc = 0;
out:
    for (int r = 0; r < p->ngpus; r++) {
        if (in)
            free(in[r]);
        if (out)
            free(out[r]);
        if (exp)
            free(exp[r]);
    }
    free(in);
    free(out);
    free(exp);
    gc3_diag_cleanup(&diag);
    gc3_postcond_destroy(pc);
    gc3_ir_program_destroy(p);
    return rc;
}
