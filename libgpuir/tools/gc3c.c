/* gc3c: the gc3 algorithm compiler's command line.
 *
 *   gc3c verify [options] FILE...     structure, semantics and deadlock checks
 *   gc3c run [options] FILE           reference executor on random data, checked
 *   gc3c show FILE                    per-rank, per-block listing
 *   gc3c simulate [options] FILE      cost model: predicted time per size
 *   gc3c list                         the algorithm generators
 *   gc3c gen ALGO [options]           generate, compile and verify an algorithm
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "gc3_cost.h"
#include "gc3_refexec.h"
#include "gc3_rules.h"
#include "gc3_runtime.h"
#include "gc3_verify.h"
#include "gc3_algorithms.h"

#define GC3C_MAX_SIM         8    /* algorithms compared in one simulate run */
#define GC3C_MAX_PARAMS      64   /* --param options of one simulate run */
#define GC3C_MAX_RULES       16   /* --rule lines of one simulate run */
#define GC3C_RUN_CHUNK_ELEMS 1024 /* run's default count: elements per chunk (several: offsets inside a chunk count) */

/* clang-format off */
/* Each command's usage: `gc3c help` and `gc3c` print them all, `gc3c COMMAND --help` its own. */
static const struct {
    const char *name, *text;
} gc3c_cmds[] = {
    {"verify",
     "  verify [--slots N] [--loops N] [--post TABLE] [--no-races] FILE...\n"
     "        check each MSCCL-format XML program: structure (ids, peers, bounds, one sending and one\n"
     "        receiving block per connection, dependencies, matching send/receive pairs), semantics\n"
     "        (symbolic execution against the collective's postcondition, data races) and deadlock\n"
     "        freedom with N FIFO slots per connection (default 8) over N loop iterations (default 2).\n"
     "        A program for in-place calls only is verified a second time in the form that serves\n"
     "        out-of-place calls (its input copied into place first). --post TABLE gives the\n"
     "        postcondition of a custom collective whose file carries none (its format:\n"
     "        doc/design/compiler.md). What the reader does not use (an attribute or element gc3 does\n"
     "        not know) is a warning with its line.\n"},
    {"run",
     "  run [--dtype T] [--op OP] [--count N] [--inplace] [--seed S] [--post TABLE] [--force] FILE\n"
     "        run FILE on random data with the reference executor and compare every output with\n"
     "        the postcondition. T: int8 uint8 int32 uint32 int64 uint64 float32 float64 (default\n"
     "        float32); OP: sum prod min max band bor bxor (default sum); N: the MPI count (default:\n"
     "        " GC3_STR(GC3C_RUN_CHUNK_ELEMS) " elements per chunk). Without --inplace, a program for in-place calls only runs as\n"
     "        an out-of-place call does: its input copied into place first. The run holds every\n"
     "        rank's buffers in this process: it first estimates the host memory it needs and refuses\n"
     "        when that is more than is available (MemAvailable, the cgroup's limit); --force runs anyway.\n"
     "        Alltoall, allgather, bcast, gather and scatter programs move data: T matters, OP does\n"
     "        not. A rooted program (bcast, reduce, gather, scatter) runs for the root it was compiled\n"
     "        for (root= in FILE, chosen by gen).\n"},
    {"show",
     "  show FILE\n"
     "        list every rank, thread block and step.\n"},
    {"simulate",
     "  simulate [--nodes N] [--gpus G] [--nvlink BW] [--net BW] [--nvlink-lat T] [--net-lat T]\n"
     "           [--staged BW] [--sizes MIN:MAX] [--param NAME=VALUE]... FILE\n"
     "        predict the time of FILE with the cost model on N nodes of G GPUs (default: 1 node of\n"
     "        ngpus), every message through the FIFOs in tiles of 1 MiB. BW like 360GB/s or 200Gb/s, T\n"
     "        like 0.7us. Between nodes GPUDirect (the NIC moves GPU memory), or with --staged BW\n"
     "        host-staged: each message copied GPU to pinned host memory and back at BW (PCIe) around\n"
     "        the wire. A program for in-place calls only gets a second column: an out-of-place call\n"
     "        (the copy counted). --param NAME=VALUE sets one of the model's parameters (+X adds X).\n"
     "  simulate ... --algo ALGO[,ALGO...] [--ranks R] [--instances K] [--channels C]\n"
     "           [--chunks-per-peer K] [--proto P] [--slots S] [--root R] [--no-verify]\n"
     "        instead of FILE: generate ALGO for the described machine (verified up to 64 ranks).\n"
     "        The machine is --nodes N x --gpus G; --ranks R (gen's option) is the same as --gpus R/N.\n"
     "  simulate --coll COLL --gpus G [--nodes N] [--link nvlink|pcie|host] [--inplace] [--sizes MIN:MAX]\n"
     "           [--rules FILE] [--rule LINE]... [--algorithm-dir DIR] [--zero-copy on|pull|off]\n"
     "           [--fifo-slots S] [--slot-bytes B] [--plan-fifo-bytes B] [--tile-bytes B] [--param NAME=VALUE]...\n"
     "        what gc3 runs: per size (bytes as each rank passes them, alltoall: to each peer; float32),\n"
     "        the algorithm of the rules (built-in, --rules FILE, --rule lines ahead of them, DIR's\n"
     "        programs ahead of all, as coll_gc3_algorithm_dir), the call as the runtime runs it (its\n"
     "        slots, tile and loops, zero-copy where the rule allows it; the options as the coll_gc3_\n"
     "        parameters of those names, their defaults the runtime's; --zero-copy pull: never pushed, as\n"
     "        coll_gc3_zero_copy_push false; off: every message through the FIFOs) and the predicted time,\n"
     "        the mean over the ranks as gc3_bench reports it.\n"
     "  simulate --measured CSV [the options above] [--method M] [--exclude B[,B...]] [--tolerance PCT]\n"
     "        the same for the sizes of a gc3_bench CSV (its collective and ranks unless given), against\n"
     "        the times of its rows of method M (default gc3): the error per size and the largest (sizes\n"
     "        in --exclude shown, not counted); exit status 1 when it is above PCT percent.\n"
     "  simulate --params [--param NAME=VALUE]...\n"
     "        the model's parameters: name, value, unit, what it is and where the value comes from.\n"},
    {"list",
     "  list\n"
     "        the algorithm generators and their collectives.\n"},
    {"gen",
     "  gen ALGO --ranks R [--nodes N] [--instances K] [--channels C] [--chunks-per-peer K]\n"
     "          [--proto Simple|LL|LL128] [--inplace | --msccl-inplace] [--min-bytes B] [--max-bytes B]\n"
     "          [--slots S] [--root R] [--no-verify] [--stats] [--max-blocks B] [-o FILE]\n"
     "        compile algorithm ALGO for R ranks (N nodes of R/N GPUs for the hierarchical ones),\n"
     "        verify it and write MSCCL XML to FILE (default: standard output). --max-blocks B:\n"
     "        at most B thread blocks per rank, narrowed as the component narrows its plans\n"
     "        (coll_gc3_max_blocks): instances halved, then channels; says the shape on stderr.\n"
     "        --inplace: a program\n"
     "        for in-place calls; --msccl-inplace: the same, written in MSCCL's in-place form (the\n"
     "        buffer inside the other given with 0 chunks: o_chunks=0, allgather i_chunks=0).\n"
     "        --min-bytes/--max-bytes: the sizes the program is for (minBytes, maxBytes).\n"
     "        --root R: the root of a rooted collective (bcast, reduce, gather, scatter; default 0):\n"
     "        a program is compiled for one root (<algo root=\"R\">); R ranks may be 1 for them.\n"
     "        --slots S: scheduled (and verified) for S FIFO slots per connection, default "
     GC3_STR(GC3_FIFO_SLOTS_DEFAULT) " as\n"
     "        coll_gc3_fifo_slots: it runs with S or more.\n"},
};

/* Examples, by command. */
static const struct {
    const char *name, *text;
} gc3c_examples[] = {
    {"list", "gc3c list"},
    {"gen", "gc3c gen ring --ranks 4 --stats -o ring4.xml"},
    {"gen", "gc3c gen allpairs --ranks 8 --proto LL --instances 4 --max-blocks 33 -o ap8.xml"},
    {"gen", "gc3c gen bcast_ring --ranks 4 --root 2 --channels 2 -o bcast4.xml"},
    {"verify", "gc3c verify ring4.xml"},
    {"run", "gc3c run ring4.xml                    # count 4096 (1024 elements/chunk), float32 sum"},
    {"run", "gc3c run --dtype int32 --op max --count 400 ring4.xml"},
    {"show", "gc3c show ring4.xml"},
    {"simulate", "gc3c simulate --sizes 1K:1G ring4.xml   # predicted time per call (us)"},
    {"simulate", "gc3c simulate --algo ring,allpairs --gpus 8"},
    {"simulate", "gc3c simulate --coll allreduce --gpus 4 --sizes 8:1G   # what gc3 runs on 4 GPUs"},
    {"simulate", "gc3c simulate --measured doc/measurements/zero-copy-alltoall-4xh200.csv --tolerance 15"},
    {"simulate", "gc3c simulate --params"},
};
/* clang-format on */

static void usage(FILE *out, const char *cmd)
{
    int n = (int)(sizeof(gc3c_cmds) / sizeof(gc3c_cmds[0]));

    fprintf(out, "usage: gc3c COMMAND [options] FILE...\n\n%s", cmd ? "" : "commands:\n");
    for (int i = 0; i < n; i++) {
        if (cmd == NULL || strcmp(cmd, gc3c_cmds[i].name) == 0) {
            fputs(gc3c_cmds[i].text, out);
        }
    }
    if (cmd == NULL) {
        fputs("  help  this text (COMMAND --help: that command's)\n", out);
    }
    fputs("\nexit status: 0 when every file passed, 1 when one failed, 2 on usage errors.\n\nexamples:\n", out);
    for (size_t i = 0; i < sizeof(gc3c_examples) / sizeof(gc3c_examples[0]); i++) {
        if (cmd == NULL || strcmp(cmd, gc3c_examples[i].name) == 0) {
            fprintf(out, "  %s\n", gc3c_examples[i].text);
        }
    }
}

static int parse_int(const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    *v    = strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && *v >= lo && *v <= hi;
}

/* "64", "4K", "1M", "2G" -> bytes */
static int parse_size(const char *s, uint64_t *v)
{
    unsigned long long x;
    if (!gc3_parse_bytes(s, &x)) {
        return 0;
    }
    *v = (uint64_t)x;
    return 1;
}

/* MIN:MAX (each as parse_size takes it), 0 < MIN <= MAX; 0 when it is not (arg is cut at its colon) */
static int parse_size_range(char *arg, uint64_t *lo, uint64_t *hi)
{
    char *colon = strchr(arg, ':');
    if (colon == NULL) {
        return 0;
    }
    *colon = '\0';
    return parse_size(arg, lo) && parse_size(colon + 1, hi) && *lo > 0 && *hi >= *lo;
}

static int need_arg(int i, int argc, const char *opt)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "gc3c: %s needs a value\n", opt);
        return 0;
    }
    return 1;
}

static gc3_ir_program_t *load(const char *path)
{
    gc3_diag_t        diag;
    gc3_ir_program_t *p = NULL;

    gc3_diag_init(&diag);
    if (gc3_ir_read_file(path, &diag, &p) != GC3_OK) {
        gc3_diag_print(&diag, stderr, "");
        fprintf(stderr, "%s: FAILED (cannot be read)\n", path);
    } else {
        gc3_diag_print(&diag, stderr, ""); /* warnings: what the reader does not use */
    }
    gc3_diag_cleanup(&diag);
    return p;
}

static int load_post(const char *post, const gc3_ir_program_t *p, gc3_postcond_t **pc_p)
{
    gc3_diag_t   diag;
    gc3_status_t status;

    *pc_p = NULL;
    gc3_diag_init(&diag);
    status = post ? gc3_postcond_read_file(post, p, &diag, pc_p) : gc3_postcond_builtin(p, &diag, pc_p);
    gc3_diag_print(&diag, stderr, "");
    gc3_diag_cleanup(&diag);
    return status == GC3_OK;
}

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

static int cmd_verify(int argc, char **argv)
{
    gc3_verify_opts_t opts;
    const char       *post = NULL;
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
        p = load(argv[i]);
        if (p == NULL) {
            failed++;
            continue;
        }
        if (post != NULL && !load_post(post, p, &pc)) {
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
            status = gc3_ir_copy_first(p, &cf);
            status = status == GC3_OK ? gc3_verify(cf, &opts, &diag) : status;
            if (status != GC3_OK) {
                gc3_diag_add(&diag, "%s: the form for out-of-place calls (input copied into place first) does not "
                             "verify", argv[i]);
            }
            gc3_ir_program_destroy(cf);
        }
        nsteps = count_steps(p);
        maxtbs = gc3_ir_widest_rank(p);
        if (status == GC3_OK) {
            printf("%s: OK (%s '%s', %d ranks, %d chunks/loop, up to %d thread blocks/rank, %d steps, %s%s; verified%s%s%s, "
                   "deadlock-free with %d slots)\n", argv[i], p->coll_name, p->name, p->ngpus, p->nchunksperloop,
                   maxtbs, nsteps, gc3_proto_name(p->proto),
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

/* Host memory this process may still take, in bytes: MemAvailable, and the cgroup's limit less its
 * use (v2 or v1) where lower; 0 when neither can be read. */
static double available_memory(void)
{
    double      avail = 0, limit, used;
    char        line[256];
    FILE       *f = fopen("/proc/meminfo", "r");
    static const char *const cg[][2] = {{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"},
                                        {"/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                         "/sys/fs/cgroup/memory/memory.usage_in_bytes"}};

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
        if (fl != NULL) fclose(fl);
        if (fu != NULL) fclose(fu);
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

static int cmd_run(int argc, char **argv)
{
    const char        *file = NULL, *post = NULL;
    gc3_refexec_args_t args = {GC3_DT_FLOAT32, GC3_OP_SUM, 0, 0, 8, 0};
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
    p = load(file);
    if (p == NULL) {
        return 1;
    }
    gc3_diag_init(&diag);
    if (!load_post(post, p, &pc)) {
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
        count = GC3C_RUN_CHUNK_ELEMS *
                (!d->in_per_rank && !d->out_per_rank ? (uint64_t)p->nchunksperloop
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
            fprintf(stderr, "%s: count %" PRIu64 " needs about %.1f GiB of host memory (%d ranks' input, output, "
                    "expected output and messages), more than the %.1f GiB available: not run (a smaller --count, "
                    "or --force to run anyway)\n", file, count, need / 1073741824.0, p->ngpus, avail / 1073741824.0);
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
            const gc3_coll_desc_t *d = gc3_coll_desc(p->coll);
            size_t off = d->inplace_inner == GC3_BUF_INPUT && d->inplace_slice ? (size_t)r * ni : 0;
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
        char   what[64];
        const gc3_coll_desc_t *d = gc3_coll_desc(p->coll); /* in place, an output slice: the whole buffer */
        size_t n = (size_t)(args.inplace && d->inplace_inner == GC3_BUF_OUTPUT && d->inplace_slice ? p->gpus[r].i_chunks
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
           file, p->coll_name, p->name, p->ngpus, gc3_dtype_name(args.dtype), (gc3_coll_desc(p->coll)->reduces || p->coll == GC3_COLL_CUSTOM) ? " " : "",
           (gc3_coll_desc(p->coll)->reduces || p->coll == GC3_COLL_CUSTOM) ? gc3_op_name(args.op) : "", count,
           args.chunk_elems, args.chunk_elems == 1 ? "" : "s", args.inplace ? "in-place" : copied ? "out-of-place (input copied into place first)" : "out-of-place");
    rc = 0;
out:
    for (int r = 0; r < p->ngpus; r++) {
        if (in) free(in[r]);
        if (out) free(out[r]);
        if (exp) free(exp[r]);
    }
    free(in);
    free(out);
    free(exp);
    gc3_diag_cleanup(&diag);
    gc3_postcond_destroy(pc);
    gc3_ir_program_destroy(p);
    return rc;
}

static int cmd_show(int argc, char **argv)
{
    gc3_ir_program_t *p;

    if (argc != 1) {
        fprintf(stderr, "gc3c show: exactly one FILE\n");
        return 2;
    }
    p = load(argv[0]);
    if (p == NULL) {
        return 1;
    }
    printf("%s: %s '%s', %d ranks, %d chunks/loop, %d channels, protocol %s%s,%s%s%s\n", argv[0], p->coll_name, p->name,
           p->ngpus, p->nchunksperloop, p->nchannels, gc3_proto_name(p->proto),
           gc3_proto_runs_as(p->proto) != p->proto ? " (runs as Simple)" : "", p->outofplace ? " out-of-place" : "",
           p->inplace ? " in-place" : "",
           p->msccl_inplace ? (p->coll == GC3_COLL_ALLGATHER ? " (MSCCL's in-place form: i_chunks=0 in the file, input "
                                                               "chunk k is output chunk rank*i+k)"
                                                             : p->coll == GC3_COLL_REDUCE_SCATTER
                                                                   ? " (MSCCL's in-place form: o_chunks=0 in the file, "
                                                                     "output chunk k is input chunk rank*o+k)"
                                                                   : p->coll == GC3_COLL_BCAST
                                                                   ? " (MSCCL's in-place form: i_chunks=0 in the file, "
                                                                     "input chunk c is output chunk c)"
                                                                   : " (MSCCL's in-place form: o_chunks=0 in the file, "
                                                                     "output chunk c is input chunk c)")
                             : "");
    for (int r = 0; r < p->ngpus; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        printf("rank %d: chunks i=%d o=%d s=%d, %d thread blocks\n", r, g->i_chunks, g->o_chunks, g->s_chunks, g->ntbs);
        for (int t = 0; t < g->ntbs; t++) {
            const gc3_ir_tb_t *tb = &g->tbs[t];
            printf("  tb %d: send %d recv %d chan %d, %d steps\n", t, tb->send, tb->recv, tb->chan, tb->nsteps);
            for (int s = 0; s < tb->nsteps; s++) {
                const gc3_ir_step_t *st = &tb->steps[s];
                printf("    %3d %-4s", s, gc3_step_type_name(st->type));
                if (gc3_step_flags(st->type) & GC3_STEP_F_READ_SRC) {
                    printf(" src %c[%d..%d]", gc3_buf_char(st->srcbuf), st->srcoff, st->srcoff + st->cnt - 1);
                }
                if (gc3_step_flags(st->type) & GC3_STEP_F_WRITE_DST) {
                    printf(" dst %c[%d..%d]", gc3_buf_char(st->dstbuf), st->dstoff, st->dstoff + st->cnt - 1);
                }
                if (gc3_step_flags(st->type) & GC3_STEP_F_RECV) {
                    printf(" <-%d", tb->recv);
                }
                if (gc3_step_flags(st->type) & GC3_STEP_F_SEND) {
                    printf(" ->%d", tb->send);
                }
                if (st->depid >= 0) {
                    printf(" after tb %d step %d", st->depid, st->deps);
                }
                printf("%s\n", st->hasdep ? " (signals)" : "");
            }
        }
    }
    gc3_ir_program_destroy(p);
    return 0;
}

static void print_algo_list(FILE *out)
{
    for (int i = 0; i < gc3_algo_count(); i++) {
        const gc3_algo_t *a = gc3_algo_at(i);
        fprintf(out, "  %-20s %-15s %s\n", a->name, a->coll_name ? a->coll_name : gc3_coll_name(a->coll), a->summary);
    }
}

static int cmd_list(int argc, char **argv)
{
    (void)argv;
    if (argc != 0) {
        fprintf(stderr, "gc3c list: takes no arguments\n");
        return 2;
    }
    printf("%-22s %-15s %s\n", "# algorithm", "collective", "what it does");
    print_algo_list(stdout);
    return 0;
}

/* --root was given (gen, simulate --algo: only rooted collectives' algorithms take it). */
static int gc3c_root_given;

/* --root given to an algorithm without one: a usage error (returns 0). */
static int check_root_option(const char *cmd, const char *algo)
{
    const gc3_algo_t *a = gc3_algo_find(algo);
    if (gc3c_root_given && a != NULL && !gc3_coll_desc(a->coll)->rooted) {
        fprintf(
            stderr,
            "gc3c %s: --root is for the rooted collectives' algorithms (bcast, reduce, gather, scatter), not %s (%s)\n",
            cmd, algo, a->coll_name ? a->coll_name : gc3_coll_name(a->coll));
        return 0;
    }
    return 1;
}

/* Parse the generator options shared by gen and simulate --algo; returns 0 on usage error,
 * 1 when argv[*i] was consumed, -1 when it is not a generator option. */
static int parse_gen_option(int argc, char **argv, int *i, gc3_algo_params_t *ap, int *nodes_given)
{
    const char *o = argv[*i];
    long        v;

    if (strcmp(o, "--inplace") == 0) {
        ap->inplace = 1;
        return 1;
    }
    if (strcmp(o, "--no-verify") == 0) {
        ap->verify = 0;
        return 1;
    }
    if (strcmp(o, "--ranks") && strcmp(o, "--nodes") && strcmp(o, "--instances") && strcmp(o, "--channels") &&
        strcmp(o, "--chunks-per-peer") && strcmp(o, "--proto") && strcmp(o, "--slots") && strcmp(o, "--root")) {
        return -1;
    }
    if (!need_arg(*i, argc, o)) {
        return 0;
    }
    (*i)++;
    if (strcmp(o, "--root") == 0) { /* checked against the ranks by the generator */
        if (!parse_int(argv[*i], 0, GC3_IR_MAX_GPUS - 1, &v)) {
            fprintf(stderr, "gc3c: --root needs a rank, an integer from 0 (got '%s')\n", argv[*i]);
            return 0;
        }
        ap->root       = (int)v;
        gc3c_root_given = 1;
        return 1;
    }
    if (strcmp(o, "--proto") == 0) {
        if (gc3_proto_from_name(argv[*i], &ap->proto) != GC3_OK) {
            fprintf(stderr, "gc3c: --proto must be Simple, LL or LL128\n");
            return 0;
        }
        return 1;
    }
    if (!parse_int(argv[*i], 1, GC3_IR_MAX_GPUS, &v)) {
        fprintf(stderr, "gc3c: %s needs a positive integer (got '%s')\n", o, argv[*i]);
        return 0;
    }
    if (strcmp(o, "--ranks") == 0) {
        ap->nranks = (int)v;
    } else if (strcmp(o, "--nodes") == 0) {
        ap->nodes    = (int)v;
        *nodes_given = 1;
    } else if (strcmp(o, "--instances") == 0) {
        ap->instances = (int)v;
    } else if (strcmp(o, "--channels") == 0) {
        ap->channels = (int)v;
    } else if (strcmp(o, "--chunks-per-peer") == 0) {
        ap->chunks_per_peer = (int)v;
    } else {
        ap->slots = (int)v;
    }
    return 1;
}

static void finish_shape(gc3_algo_params_t *ap)
{
    ap->gpus_per_node = ap->nodes > 0 && ap->nranks % ap->nodes == 0 ? ap->nranks / ap->nodes : 0;
}

static int cmd_gen(int argc, char **argv)
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
                fprintf(stderr,
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
        fprintf(stderr, "%s: %d operations -> %d instructions -> %d after fusion (+%d nops), %d thread blocks;", p->name,
                st.ops, st.instrs_lowered, st.instrs, st.nops, st.tbs);
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
    const char       *rules_file = NULL, *csv = NULL, *method = "gc3", *exclude = NULL, *algo_dir = NULL;
    const char       *extra[GC3C_MAX_RULES]; /* --rule lines, ahead of the rules */
    int               nextra       = 0;
    char              collname[64] = "";
    long              gpus = 0, nodes = 1, fifo_slots = GC3_FIFO_SLOTS_DEFAULT;
    uint64_t          lo = 4, hi = 1ull << 28, slot_bytes = 0, plan_fifo = GC3_PLAN_FIFO_BYTES_DEFAULT, tile_bytes = 0;
    int zero_copy = 1, zc_pull = 0, inplace = 0, rc = 0, nrows = 0, nplans = 0, counted = 0, want_params = 0;
    double            tolerance = -1, worst = 0, sum = 0;
    uint64_t          worst_at = 0;
    gc3_link_t        link     = GC3_LINK_NVLINK;
    gc3_coll_t        coll     = GC3_COLL_CUSTOM;
    gc3_machine_t     m;
    gc3_rules_t      *R    = NULL;
    measured_t       *rows = NULL;
    sim_plan_t        plans[GC3C_MAX_PLANS];
    gc3_diag_t        diag;
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
    if (gc3_coll_from_name(collname, &coll) != GC3_OK || coll == GC3_COLL_CUSTOM || gpus < 1 || gpus % nodes != 0) {
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
    ep.slots      = (int)fifo_slots;
    ep.fifo_bytes    = plan_fifo;
    ep.zc_fifo_bytes = GC3_ZC_FIFO_BYTES_DEFAULT; /* (only a buffer's first call would use its slots) */
    ep.tile_bytes    = tile_bytes;
    if (slot_bytes > 0) {
        ep.slot_bytes = slot_bytes;
    }
    {
        char a[32], b[32], c[32];
        printf("# %s on %ld node%s x %ld GPU%s (%s), %s calls, rules: %s; runtime: %d slots of at most %s, plan FIFOs "
               "%s%s, zero-copy %s\n",
               gc3_coll_desc(coll)->mpi_name, nodes, nodes == 1 ? "" : "s", gpus / nodes, gpus / nodes == 1 ? "" : "s",
               gc3_link_name(link), inplace ? "in-place" : "out-of-place", rules_file ? rules_file : "built-in",
               ep.slots, gc3_mem_format(ep.slot_bytes, a, sizeof(a)), plan_fifo ? "capped at " : "without a cap",
               plan_fifo ? gc3_mem_format(plan_fifo, b, sizeof(b)) : "",
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
        const uint64_t per = csv ? rows[k].bytes : lo;
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
static int cmd_simulate(int argc, char **argv)
{
    const char        *file = NULL;
    char              *algos = NULL;
    gc3_machine_t      m;
    gc3_algo_params_t  ap;
    long               nodes = 0, gpus = 0, ranks = 0;
    double             nvbw = 0, netbw = 0, nvlat = 0, netlat = 0, stagebw = 0;
    uint64_t           lo = 1024, hi = 1ull << 30;
    gc3_ir_program_t  *progs[GC3C_MAX_SIM] = {NULL};
    const char        *names[GC3C_MAX_SIM];
    int                nprogs = 0, rc = 0, nodes_given = 0, verify_given = 1, width[GC3C_MAX_SIM];
    char               path[96] = "GPUDirect";
    const char        *param[GC3C_MAX_PARAMS];
    int                nparam = 0;

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
        progs[0] = load(file);
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
            gc3_diag_t   diag;
            gc3_status_t status;
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
            status = gc3_algo_generate(t, &ap, &diag, NULL, &progs[nprogs]);
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
    if (nvbw > 0) m.intra_bw_GBps = nvbw;
    if (netbw > 0) m.net_bw_GBps = netbw;
    if (nvlat > 0) m.intra_alpha_us = nvlat;
    if (netlat > 0) m.net_alpha_us = netlat;
    m.stage_bw_GBps = stagebw;
    if (stagebw > 0) {
        snprintf(path, sizeof(path), "host-staged at %.1f GB/s + %.1f us", stagebw, m.stage_alpha_us);
    }
    printf("# %s on %ld node%s x %ld GPU%s (intra %.0f GB/s %.2f us, net %.1f GB/s %.2f us, %s)%s\n",
           progs[0]->coll_name, nodes, nodes == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s", m.intra_bw_GBps, m.intra_alpha_us, m.net_bw_GBps, m.net_alpha_us, path,
           file == NULL ? (ap.verify ? "; programs verified" : "; programs not verified (more than 64 ranks)") : "");
    /* a column per program: its predicted time per call, in microseconds */
    printf("# predicted time per call in us (microseconds)%s\n", nprogs > 1 ? "; best: the fastest" : "; algbw in GB/s");
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

int main(int argc, char **argv)
{
    int rc;

    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(argc < 2 ? stderr : stdout, NULL);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            for (size_t k = 0; k < sizeof(gc3c_cmds) / sizeof(gc3c_cmds[0]); k++) {
                if (strcmp(argv[1], gc3c_cmds[k].name) == 0) {
                    usage(stdout, argv[1]);
                    return 0;
                }
            }
        }
    }
    if (strcmp(argv[1], "verify") == 0) {
        rc = cmd_verify(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "run") == 0) {
        rc = cmd_run(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "show") == 0) {
        rc = cmd_show(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "simulate") == 0) {
        rc = cmd_simulate(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "list") == 0) {
        rc = cmd_list(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "gen") == 0) {
        rc = cmd_gen(argc - 2, argv + 2);
    } else {
        fprintf(stderr, "gc3c: unknown command '%s' (try gc3c help)\n", argv[1]);
        rc = 2;
    }
    gc3_ir_xml_cleanup();
    return rc;
}
