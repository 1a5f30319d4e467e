/* gc3c: the options several commands take (numbers, sizes, program files, the generators' options). */
#include "gc3c.h"

int parse_int(const char *s, long lo, long hi, long *v)
{
    char *end;
    errno = 0;
    *v    = strtol(s, &end, 10);
    return errno == 0 && end != s && *end == '\0' && *v >= lo && *v <= hi;
}
/* "64", "4K", "1M", "2G" -> bytes */
int parse_size(const char *s, uint64_t *v)
{
    unsigned long long x;
    if (!gc3_parse_bytes(s, &x)) {
        return 0;
    }
    *v = (uint64_t)x;
    return 1;
}
/* MIN:MAX (each as parse_size takes it), 0 < MIN <= MAX; 0 when it is not (arg is cut at its colon) */
int parse_size_range(char *arg, uint64_t *lo, uint64_t *hi)
{
    char *colon = strchr(arg, ':');
    if (colon == NULL) {
        return 0;
    }
    *colon = '\0';
    return parse_size(arg, lo) && parse_size(colon + 1, hi) && *lo > 0 && *hi >= *lo;
}
int need_arg(int i, int argc, const char *opt)
{
    if (i + 1 >= argc) {
        fprintf(stderr, "gc3c: %s needs a value\n", opt);
        return 0;
    }
    return 1;
}
gc3_ir_program_t *gc3c_load(const char *path)
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
int gc3c_load_post(const char *post, const gc3_ir_program_t *p, gc3_postcond_t **pc_p)
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
void print_algo_list(FILE *out)
{
    for (int i = 0; i < gc3_algo_count(); i++) {
        const gc3_algo_t *a = gc3_algo_at(i);
        static const char *const takes[] = { "-", "channels", "chunks_per_peer", "channels,chunks_per_peer" };
        fprintf(out, "  %-20s %-15s %-24s %s\n", a->name, a->coll_name ? a->coll_name : gc3_coll_name(a->coll),
                takes[a->takes & (GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS)], a->summary);
    }
}
/* --root was given (gen, simulate --algo: only rooted collectives' algorithms take it). */
static int gc3c_root_given;
/* --root given to an algorithm without one: a usage error (returns 0). */
int check_root_option(const char *cmd, const char *algo)
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
int parse_gen_option(int argc, char **argv, int *i, gc3_algo_params_t *ap, int *nodes_given)
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
        ap->root        = (int)v;
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
