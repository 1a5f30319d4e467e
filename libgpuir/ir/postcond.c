/* gc3 / libgpuir: postcondition tables (what every output chunk must hold). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_verify.h"

typedef struct {
    gc3_postcond_t *pc;
    int             cell;     /* next cell to fill */
    size_t          nids, cap;
} gc3_pc_builder_t;

static int gc3_pc_in_stride(const gc3_ir_program_t *p)
{
    int s = 1;
    for (int r = 0; r < p->ngpus; r++) {
        s = p->gpus[r].i_chunks > s ? p->gpus[r].i_chunks : s;
    }
    return s;
}

static gc3_status_t gc3_pc_begin(const gc3_ir_program_t *p, gc3_pc_builder_t *b)
{
    gc3_postcond_t *pc = calloc(1, sizeof(*pc));
    int             ncells = 0;

    memset(b, 0, sizeof(*b));
    if (pc == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    if (p->ngpus < 1 || p->ngpus > GC3_IR_MAX_GPUS) {
        free(pc);
        return GC3_ERR_INVALID_PARAM;
    }
    for (int r = 0; r < p->ngpus; r++) {
        ncells += p->gpus[r].o_chunks;
    }
    pc->nranks     = p->ngpus;
    pc->ncells     = ncells;
    pc->in_stride  = gc3_pc_in_stride(p);
    pc->o_chunks   = calloc((size_t)p->ngpus, sizeof(int));
    pc->cell_begin = calloc((size_t)p->ngpus, sizeof(int));
    pc->ids_begin  = calloc((size_t)ncells + 1, sizeof(int));
    pc->dontcare   = calloc((size_t)ncells + 1, 1);
    b->pc          = pc;
    if (pc->o_chunks == NULL || pc->cell_begin == NULL || pc->ids_begin == NULL || pc->dontcare == NULL) {
        gc3_postcond_destroy(pc);
        return GC3_ERR_NO_MEMORY;
    }
    for (int r = 0, c = 0; r < p->ngpus; r++) {
        pc->o_chunks[r]   = p->gpus[r].o_chunks;
        pc->cell_begin[r] = c;
        c += p->gpus[r].o_chunks;
    }
    return GC3_OK;
}

static gc3_status_t gc3_pc_add_id(gc3_pc_builder_t *b, uint32_t id)
{
    if (b->nids == b->cap) {
        size_t    ncap = b->cap ? 2 * b->cap : 256;
        uint32_t *n    = realloc(b->pc->ids, ncap * sizeof(*n));
        if (n == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        b->pc->ids = n;
        b->cap     = ncap;
    }
    b->pc->ids[b->nids++] = id;
    return GC3_OK;
}

static int gc3_u32_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Close the current cell: sort its ids. */
static void gc3_pc_end_cell(gc3_pc_builder_t *b, int dontcare)
{
    gc3_postcond_t *pc    = b->pc;
    int             begin = pc->ids_begin[b->cell];

    if (b->nids > (size_t)begin) {
        qsort(pc->ids + begin, b->nids - (size_t)begin, sizeof(uint32_t), gc3_u32_cmp);
    }
    pc->dontcare[b->cell] = (uint8_t)dontcare;
    b->cell++;
    pc->ids_begin[b->cell] = (int)b->nids;
}

void gc3_postcond_destroy(gc3_postcond_t *pc)
{
    if (pc == NULL) {
        return;
    }
    free(pc->o_chunks);
    free(pc->cell_begin);
    free(pc->ids_begin);
    free(pc->dontcare);
    free(pc->ids);
    free(pc);
}

static void *gc3_pc_dup(const void *src, size_t bytes)
{
    void *d = malloc(bytes > 0 ? bytes : 1);
    if (d != NULL && bytes > 0) {
        memcpy(d, src, bytes);
    }
    return d;
}

gc3_status_t gc3_postcond_copy(const gc3_postcond_t *pc, gc3_postcond_t **copy_p)
{
    gc3_postcond_t *c = calloc(1, sizeof(*c));
    const size_t    nids = (size_t)pc->ids_begin[pc->ncells];

    *copy_p = NULL;
    if (c == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    *c            = *pc;
    c->o_chunks   = gc3_pc_dup(pc->o_chunks, (size_t)pc->nranks * sizeof(int));
    c->cell_begin = gc3_pc_dup(pc->cell_begin, (size_t)pc->nranks * sizeof(int));
    c->ids_begin  = gc3_pc_dup(pc->ids_begin, ((size_t)pc->ncells + 1) * sizeof(int));
    c->dontcare   = gc3_pc_dup(pc->dontcare, (size_t)pc->ncells + 1);
    c->ids        = gc3_pc_dup(pc->ids, nids * sizeof(uint32_t));
    if (c->o_chunks == NULL || c->cell_begin == NULL || c->ids_begin == NULL || c->dontcare == NULL ||
        c->ids == NULL) {
        gc3_postcond_destroy(c);
        return GC3_ERR_NO_MEMORY;
    }
    *copy_p = c;
    return GC3_OK;
}

int gc3_postcond_equal(const gc3_postcond_t *a, const gc3_postcond_t *b)
{
    if (a->nranks != b->nranks || a->ncells != b->ncells || a->in_stride != b->in_stride ||
        memcmp(a->o_chunks, b->o_chunks, (size_t)a->nranks * sizeof(int)) != 0 ||
        memcmp(a->ids_begin, b->ids_begin, ((size_t)a->ncells + 1) * sizeof(int)) != 0 ||
        memcmp(a->dontcare, b->dontcare, (size_t)a->ncells) != 0) {
        return 0;
    }
    return a->ids_begin[a->ncells] == 0 ||
           memcmp(a->ids, b->ids, (size_t)a->ids_begin[a->ncells] * sizeof(uint32_t)) == 0;
}

/* A copy of the table a program carries, checked against the program's shape. */
static gc3_status_t gc3_postcond_carried(const gc3_ir_program_t *p, gc3_diag_t *diag, gc3_postcond_t **postcond_p)
{
    const gc3_postcond_t *c = p->post;
    gc3_pc_builder_t      b;
    gc3_status_t          status;

    for (int r = 0; r < p->ngpus && c->nranks == p->ngpus; r++) {
        if (c->o_chunks[r] != p->gpus[r].o_chunks) {
            c = NULL;
            break;
        }
    }
    if (c == NULL || c->nranks != p->ngpus || c->in_stride != gc3_pc_in_stride(p)) {
        gc3_diag_add(diag, "%s: the postcondition the program carries does not fit its ranks and buffers",
                     p->source ? p->source : p->name);
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_pc_begin(p, &b);
    if (status != GC3_OK) {
        return status;
    }
    for (int cell = 0; cell < c->ncells && status == GC3_OK; cell++) {
        for (int i = c->ids_begin[cell]; i < c->ids_begin[cell + 1] && status == GC3_OK; i++) {
            status = gc3_pc_add_id(&b, c->ids[i]);
        }
        if (status == GC3_OK) {
            gc3_pc_end_cell(&b, c->dontcare[cell]);
        }
    }
    if (status != GC3_OK) {
        gc3_postcond_destroy(b.pc);
        return status;
    }
    *postcond_p = b.pc;
    return GC3_OK;
}

/* What a built-in collective's descriptor asks of each rank's buffers, for the error message. */
static void gc3_postcond_shape_text(const gc3_coll_desc_t *d, char *buf, size_t len)
{
    const char *C = "nchunksperloop", *k = "nchunksperloop/ngpus";
    if (d->in_per_rank == d->out_per_rank) {
        gc3_snprintf_cut(buf, len, "%si_chunks = o_chunks = nchunksperloop",
                 d->in_per_rank ? "nchunksperloop a multiple of ngpus and " : "");
    } else {
        gc3_snprintf_cut(buf, len, "i_chunks = %s and o_chunks = %s", d->in_per_rank ? C : k, d->out_per_rank ? C : k);
    }
}

/* The cell of output chunk c of rank r (gc3_ir.h: output chunk j*k+m is input chunk s*k+m of rank
 * j, or of every rank for a reducing collective; a rooted one's output of one segment (bcast,
 * scatter): of the root). */
static gc3_status_t gc3_postcond_builtin_cell(gc3_pc_builder_t *b, const gc3_coll_desc_t *d, int R, int k, int root,
                                              int r, int c)
{
    const uint32_t stride = (uint32_t)b->pc->in_stride;
    const uint32_t chunk  = (uint32_t)((d->in_per_rank ? r : 0) * k + c % k);
    gc3_status_t   status = GC3_OK;

    if (d->rooted && !d->reduces && !d->out_per_rank) { /* bcast, scatter: the root's input chunk */
        return gc3_pc_add_id(b, (uint32_t)root * stride + chunk);
    }
    if (!d->reduces) {
        return gc3_pc_add_id(b, (uint32_t)(c / k) * stride + chunk);
    }
    /* every rank, or a prefix: ranks 0 to r (scan), 0 to r-1 (exscan) */
    for (int q = 0; q < (d->prefix ? r + (d->prefix == 1) : R) && status == GC3_OK; q++) {
        status = gc3_pc_add_id(b, (uint32_t)q * stride + chunk);
    }
    return status;
}

gc3_status_t gc3_postcond_builtin(const gc3_ir_program_t *p, gc3_diag_t *diag, gc3_postcond_t **postcond_p)
{
    gc3_pc_builder_t       b;
    gc3_status_t           status;
    const gc3_coll_desc_t *d = gc3_coll_desc(p->coll);
    const int              R = p->ngpus, C = p->nchunksperloop, k = gc3_coll_segment_chunks(p->coll, C, R);

    *postcond_p = NULL;
    if (p->coll == GC3_COLL_CUSTOM && p->post != NULL) {
        return gc3_postcond_carried(p, diag, postcond_p);
    }
    if (!d->builtin_post) {
        gc3_diag_add(diag, "%s: collective '%s' has no built-in postcondition and the program carries none "
                     "(<postcondition>): give one explicitly (gc3c --post TABLE)", p->source ? p->source : p->name,
                     p->coll_name);
        return GC3_ERR_INVALID_PARAM;
    }
    if (d->rooted && (p->root < 0 || p->root >= R)) {
        gc3_diag_add(diag, "%s: %s needs its root, a rank in [0, %d] (root=\"R\" on <algo>), but the program has root %d",
                     p->source ? p->source : p->name, d->name, R - 1, p->root);
        return GC3_ERR_VERIFY;
    }
    for (int r = 0; r < R; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        if (k == 0 || g->i_chunks != gc3_coll_segments(p->coll, GC3_BUF_INPUT, R) * k ||
            g->o_chunks != gc3_coll_segments(p->coll, GC3_BUF_OUTPUT, R) * k) {
            char shape[96];
            gc3_postcond_shape_text(d, shape, sizeof(shape));
            gc3_diag_add(diag, "rank %d: %s with nchunksperloop=%d and %d ranks needs %s, but the gpu has i_chunks=%d "
                         "o_chunks=%d", r, d->name, C, R, shape, g->i_chunks, g->o_chunks);
            return GC3_ERR_VERIFY;
        }
    }
    status = gc3_pc_begin(p, &b);
    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < R; r++) {
        /* reduce, gather: a non-root's output is not significant (and never touched: gc3_coll_access);
           exscan: rank 0's */
        const int dontcare = (d->root_buf == GC3_BUF_OUTPUT && r != p->root) || (d->prefix == 2 && r == 0);
        for (int c = 0; c < p->gpus[r].o_chunks; c++) {
            status = dontcare ? GC3_OK : gc3_postcond_builtin_cell(&b, d, R, k, p->root, r, c);
            if (status != GC3_OK) {
                gc3_postcond_destroy(b.pc);
                return status;
            }
            gc3_pc_end_cell(&b, dontcare);
        }
    }
    *postcond_p = b.pc;
    return GC3_OK;
}

gc3_status_t gc3_postcond_create(const gc3_ir_program_t *p, const uint32_t *const *const *cells,
                                 gc3_postcond_t **postcond_p)
{
    gc3_pc_builder_t b;
    gc3_status_t     status;

    *postcond_p = NULL;
    status      = gc3_pc_begin(p, &b);
    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < p->ngpus; r++) {
        for (int c = 0; c < p->gpus[r].o_chunks; c++) {
            const uint32_t *list = cells[r] ? cells[r][c] : NULL;
            for (int i = 0; list != NULL && list[i] != UINT32_MAX && status == GC3_OK; i++) {
                status = gc3_pc_add_id(&b, list[i]);
            }
            if (status != GC3_OK) {
                gc3_postcond_destroy(b.pc);
                return status;
            }
            gc3_pc_end_cell(&b, list == NULL);
        }
    }
    *postcond_p = b.pc;
    return GC3_OK;
}

gc3_status_t gc3_postcond_cells_alloc(const gc3_ir_program_t *p, uint32_t ****cells_p)
{
    uint32_t ***cells = calloc((size_t)p->ngpus, sizeof(*cells));

    *cells_p = NULL;
    if (cells == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int r = 0; r < p->ngpus; r++) {
        cells[r] = calloc((size_t)(p->gpus[r].o_chunks > 0 ? p->gpus[r].o_chunks : 1), sizeof(**cells));
        if (cells[r] == NULL) {
            gc3_postcond_cells_free(p, cells);
            return GC3_ERR_NO_MEMORY;
        }
    }
    *cells_p = cells;
    return GC3_OK;
}

void gc3_postcond_cells_free(const gc3_ir_program_t *p, uint32_t ***cells)
{
    for (int r = 0; cells != NULL && r < p->ngpus; r++) {
        for (int c = 0; cells[r] != NULL && c < p->gpus[r].o_chunks; c++) {
            free(cells[r][c]);
        }
        free(cells[r]);
    }
    free(cells);
}

/* ---- text form ---- */

static int gc3_pc_int(const char **s, long *v)
{
    char *end;
    while (**s == ' ' || **s == '\t') {
        (*s)++;
    }
    if (!isdigit((unsigned char)**s)) {
        return 0;
    }
    errno = 0;
    *v    = strtol(*s, &end, 10);
    if (errno != 0 || *v > GC3_IR_MAX_CHUNKS) {
        return 0;
    }
    *s = end;
    return 1;
}

gc3_status_t gc3_postcond_read_file(const char *path, const gc3_ir_program_t *p, gc3_diag_t *diag,
                                    gc3_postcond_t **postcond_p)
{
    FILE           *f = fopen(path, "r");
    char            line[65536];
    int             lineno = 0, errors = 0, ncells = 0;
    uint32_t     ***cells = NULL; /* cells[r][c] -> UINT32_MAX-terminated list or NULL */
    gc3_status_t    status = GC3_OK;

    *postcond_p = NULL;
    if (f == NULL) {
        gc3_diag_add(diag, "%s: cannot open: %s", path, strerror(errno));
        return GC3_ERR_IO;
    }
    if (gc3_postcond_cells_alloc(p, &cells) != GC3_OK) {
        fclose(f);
        return GC3_ERR_NO_MEMORY;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        const char *s = line;
        long        rank, chunk;
        uint32_t   *list = NULL;
        int         n = 0;

        lineno++;
        if (strchr(line, '\n') == NULL && !feof(f)) {
            gc3_diag_add(diag, "%s:%d: line too long", path, lineno);
            errors++;
            break;
        }
        while (*s == ' ' || *s == '\t') {
            s++;
        }
        if (*s == '#' || *s == '\n' || *s == '\0') {
            continue;
        }
        if (!gc3_pc_int(&s, &rank) || !gc3_pc_int(&s, &chunk)) {
            gc3_diag_add(diag, "%s:%d: expected 'RANK OCHUNK : SRC...'", path, lineno);
            errors++;
            continue;
        }
        if (rank >= p->ngpus || chunk >= p->gpus[rank].o_chunks) {
            gc3_diag_add(diag, "%s:%d: rank %ld output chunk %ld does not exist (ngpus %d)", path, lineno, rank, chunk,
                         p->ngpus);
            errors++;
            continue;
        }
        while (*s == ' ' || *s == '\t') {
            s++;
        }
        if (*s != ':') {
            gc3_diag_add(diag, "%s:%d: expected ':' after the output chunk", path, lineno);
            errors++;
            continue;
        }
        s++;
        while (*s == ' ' || *s == '\t') {
            s++;
        }
        if (cells[rank][chunk] != NULL) {
            gc3_diag_add(diag, "%s:%d: rank %ld output chunk %ld listed twice", path, lineno, rank, chunk);
            errors++;
            continue;
        }
        if (*s == '*') {
            continue; /* don't care: leave NULL */
        }
        list = calloc(strlen(s) / 2 + 2, sizeof(*list));
        if (list == NULL) {
            status = GC3_ERR_NO_MEMORY;
            goto out;
        }
        while (*s != '\0' && *s != '\n' && *s != '#') {
            long q, c;
            if (!gc3_pc_int(&s, &q) || *s != '.' || (s++, !gc3_pc_int(&s, &c))) {
                gc3_diag_add(diag, "%s:%d: expected SRCRANK.SRCCHUNK", path, lineno);
                errors++;
                n = -1;
                break;
            }
            if (q >= p->ngpus || c >= p->gpus[q].i_chunks) {
                gc3_diag_add(diag, "%s:%d: rank %ld has no input chunk %ld", path, lineno, q, c);
                errors++;
                n = -1;
                break;
            }
            list[n++] = (uint32_t)q * (uint32_t)gc3_pc_in_stride(p) + (uint32_t)c;
            while (*s == ' ' || *s == '\t' || *s == '\r') {
                s++;
            }
        }
        if (n <= 0) {
            if (n == 0) {
                gc3_diag_add(diag, "%s:%d: no source chunks (use '*' for don't care)", path, lineno);
                errors++;
            }
            free(list);
            continue;
        }
        list[n]            = UINT32_MAX;
        cells[rank][chunk] = list;
        ncells++;
    }
    if (errors) {
        status = GC3_ERR_PARSE;
    } else if (ncells == 0) {
        gc3_diag_add(diag, "%s: the table lists no output chunk", path);
        status = GC3_ERR_PARSE;
    } else {
        status = gc3_postcond_create(p, (const uint32_t *const *const *)cells, postcond_p);
    }

out:
    gc3_postcond_cells_free(p, cells);
    fclose(f);
    return status;
}
