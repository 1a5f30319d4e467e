/* gc3 / libgpuir: MSCCL XML reader and writer (libxml2).
 *
 * The reader builds the program in a scratch object and hands it out only when the whole
 * file was consistent; any error gives "FILE:LINE: what" in diag and no program. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include "gc3_dtype.h"
#include "gc3_ir.h"
#include "gc3_verify.h"

#define GC3_XML_MAX_FILE_BYTES (256u << 20)

/* The first error libxml2 reports (its lastError is the last one, often a consequence). */
typedef struct {
    int  line;
    int  have;
    char msg[512];
} gc3_xml_first_error_t;

static void gc3_xml_capture_error(void *user, xmlErrorPtr e)
{
    xmlParserCtxtPtr       ctxt  = user;
    gc3_xml_first_error_t *first = ctxt ? ctxt->_private : NULL;

    if (first == NULL || first->have || e == NULL || e->level < XML_ERR_ERROR) {
        return;
    }
    first->have = 1;
    first->line = e->line;
    {
        const char *text = e->message ? e->message : "unknown error";
        gc3_snprintf_cut(first->msg, sizeof(first->msg), "%.*s", (int)strcspn(text, "\n"), text);
    }
}

#define GC3_XML_UNKNOWN_KINDS 32

typedef struct {
    const char *name;  /* file name for messages */
    gc3_diag_t *diag;
    int         errors;
    /* attributes gc3 does not know, by element and name: the first is reported with its line, the
       others counted (a file can carry one on every step) */
    struct {
        char elem[16], attr[48];
        int  more;
    } unknown[GC3_XML_UNKNOWN_KINDS];
    int nunknown;
} gc3_xml_reader_t;

/* "FILE:LINE: [warning: ]what" */
static void gc3_xml_vreport(gc3_xml_reader_t *rd, const xmlNode *node, const char *kind, const char *fmt, va_list ap)
{
    char *msg = gc3_strdup_vprintf(fmt, ap);

    gc3_diag_add(rd->diag, "%s:%ld: %s%s", rd->name, node ? xmlGetLineNo((xmlNode *)node) : 0L, kind,
                 msg != NULL ? msg : "(out of memory for the message)");
    free(msg);
}

static void gc3_xml_error(gc3_xml_reader_t *rd, const xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void gc3_xml_error(gc3_xml_reader_t *rd, const xmlNode *node, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    gc3_xml_vreport(rd, node, "", fmt, ap);
    va_end(ap);
    rd->errors++;
}

/* something the reader does not use: the program still reads */
static void gc3_xml_warn(gc3_xml_reader_t *rd, const xmlNode *node, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void gc3_xml_warn(gc3_xml_reader_t *rd, const xmlNode *node, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    gc3_xml_vreport(rd, node, "warning: ", fmt, ap);
    va_end(ap);
}

/* Strict integer parse: optional sign, digits, nothing else, within [lo, hi]. */
static int gc3_parse_ll(const char *text, long long lo, long long hi, long long *value_p)
{
    char     *end;
    long long v;

    if (text == NULL || *text == '\0') {
        return 0;
    }
    while (*text == ' ' || *text == '\t') {
        text++;
    }
    errno = 0;
    v     = strtoll(text, &end, 10);
    while (*end == ' ' || *end == '\t') {
        end++;
    }
    if (errno != 0 || end == text || *end != '\0' || v < lo || v > hi) {
        return 0;
    }
    *value_p = v;
    return 1;
}

/* Read an int attribute into *out (keeps *out when absent and not required). */
static void gc3_xml_int(gc3_xml_reader_t *rd, const xmlNode *node, const char *attr, int required,
                        long long lo, long long hi, int *out)
{
    xmlChar  *v = xmlGetProp((xmlNode *)node, (const xmlChar *)attr);
    long long x;

    if (v == NULL) {
        if (required) {
            gc3_xml_error(rd, node, "<%s> is missing the required attribute '%s'", (const char *)node->name, attr);
        }
        return;
    }
    if (!gc3_parse_ll((const char *)v, lo, hi, &x)) {
        gc3_xml_error(rd, node, "<%s %s=\"%s\">: expected an integer in [%lld, %lld]",
                      (const char *)node->name, attr, (const char *)v, lo, hi);
    } else {
        *out = (int)x;
    }
    xmlFree(v);
}

static void gc3_xml_u64(gc3_xml_reader_t *rd, const xmlNode *node, const char *attr, uint64_t *out)
{
    xmlChar           *v = xmlGetProp((xmlNode *)node, (const xmlChar *)attr);
    char              *end;
    unsigned long long x;

    if (v == NULL) {
        return;
    }
    errno = 0;
    x     = strtoull((const char *)v, &end, 10);
    if (errno != 0 || end == (char *)v || *end != '\0' || ((const char *)v)[0] == '-') {
        gc3_xml_error(rd, node, "<%s %s=\"%s\">: expected a non-negative integer", (const char *)node->name,
                      attr, (const char *)v);
    } else {
        *out = (uint64_t)x;
    }
    xmlFree(v);
}

static void gc3_xml_buf(gc3_xml_reader_t *rd, const xmlNode *node, const char *attr, gc3_buf_t *out)
{
    xmlChar *v = xmlGetProp((xmlNode *)node, (const xmlChar *)attr);

    *out = GC3_BUF_NONE;
    if (v == NULL) {
        return;
    }
    if (strcmp((const char *)v, "i") == 0) {
        *out = GC3_BUF_INPUT;
    } else if (strcmp((const char *)v, "o") == 0) {
        *out = GC3_BUF_OUTPUT;
    } else if (strcmp((const char *)v, "s") == 0) {
        *out = GC3_BUF_SCRATCH;
    } else {
        gc3_xml_error(rd, node, "<step %s=\"%s\">: buffer must be 'i', 'o' or 's'", attr, (const char *)v);
    }
    xmlFree(v);
}

/* Say that gc3 does not use attribute `a` of `node`: with its line the first time for its element
 * and name, counted afterwards (gc3_xml_unknown_counts). */
static void gc3_xml_unknown_attr(gc3_xml_reader_t *rd, const xmlNode *node, const xmlAttr *a, const xmlChar *v)
{
    int k;

    for (k = 0; k < rd->nunknown; k++) {
        if (strcmp(rd->unknown[k].elem, (const char *)node->name) == 0 &&
            strcmp(rd->unknown[k].attr, (const char *)a->name) == 0) {
            rd->unknown[k].more++;
            return;
        }
    }
    gc3_xml_warn(rd, node, "<%s %s=\"%s\">: an attribute gc3 does not know: kept when the program is written, not used",
                 (const char *)node->name, (const char *)a->name, v ? (const char *)v : "");
    if (rd->nunknown < GC3_XML_UNKNOWN_KINDS) {
        k = rd->nunknown++;
        snprintf(rd->unknown[k].elem, sizeof(rd->unknown[k].elem), "%s", (const char *)node->name);
        snprintf(rd->unknown[k].attr, sizeof(rd->unknown[k].attr), "%s", (const char *)a->name);
        rd->unknown[k].more = 0;
    }
}

static void gc3_xml_unknown_counts(const gc3_xml_reader_t *rd)
{
    for (int k = 0; k < rd->nunknown; k++) {
        if (rd->unknown[k].more > 0) {
            gc3_diag_add(rd->diag, "%s: warning: attribute %s of <%s> appears %d more time%s (not used)", rd->name,
                         rd->unknown[k].attr, rd->unknown[k].elem, rd->unknown[k].more,
                         rd->unknown[k].more > 1 ? "s" : "");
        }
    }
}

/* Keep every attribute not in `known` (NULL-terminated) so that files round-trip, and say that gc3
 * does not use it. */
static gc3_status_t gc3_xml_extras(gc3_xml_reader_t *rd, const xmlNode *node, const char *const *known,
                                   gc3_ir_extra_t *extra)
{
    for (const xmlAttr *a = node->properties; a != NULL; a = a->next) {
        int            is_known = 0;
        xmlChar       *v;
        gc3_ir_attr_t *n;

        for (int k = 0; known[k] != NULL; k++) {
            if (strcmp((const char *)a->name, known[k]) == 0) {
                is_known = 1;
                break;
            }
        }
        if (is_known) {
            continue;
        }
        v = xmlNodeListGetString(node->doc, a->children, 1);
        gc3_xml_unknown_attr(rd, node, a, v);
        n = realloc(extra->attrs, (size_t)(extra->count + 1) * sizeof(*n));
        if (n == NULL) {
            xmlFree(v);
            return GC3_ERR_NO_MEMORY;
        }
        extra->attrs                     = n;
        extra->attrs[extra->count].name  = strdup((const char *)a->name);
        extra->attrs[extra->count].value = strdup(v ? (const char *)v : "");
        xmlFree(v);
        if (extra->attrs[extra->count].name == NULL || extra->attrs[extra->count].value == NULL) {
            free(extra->attrs[extra->count].name);
            free(extra->attrs[extra->count].value);
            return GC3_ERR_NO_MEMORY;
        }
        extra->count++;
    }
    return GC3_OK;
}

static int gc3_xml_is(const xmlNode *n, const char *name)
{
    return n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0;
}

static void gc3_xml_note_unknown(gc3_xml_reader_t *rd, const xmlNode *n, const char *parent)
{
    if (n->type == XML_ELEMENT_NODE) {
        gc3_xml_warn(rd, n, "unknown element <%s> inside <%s> ignored (not kept when the program is written)",
                     (const char *)n->name, parent);
    }
}

static int gc3_xml_count(const xmlNode *parent, const char *name)
{
    int n = 0;
    for (const xmlNode *c = parent->children; c != NULL; c = c->next) {
        n += gc3_xml_is(c, name);
    }
    return n;
}

static const char *const gc3_step_attrs[] = {"s", "type", "srcbuf", "srcoff", "dstbuf", "dstoff",
                                             "cnt", "depid", "deps", "hasdep", NULL};
static const char *const gc3_tb_attrs[]   = {"id", "send", "recv", "chan", NULL};
static const char *const gc3_gpu_attrs[]  = {"id", "i_chunks", "o_chunks", "s_chunks", NULL};
static const char *const gc3_algo_attrs[] = {"name", "proto", "nchannels", "nchunksperloop", "ngpus",
                                             "coll", "inplace", "outofplace", "minBytes", "maxBytes",
                                             "nthreadblocks", "maxcount", "redop", "op", "root", NULL};

static gc3_status_t gc3_xml_read_step(gc3_xml_reader_t *rd, const xmlNode *node, int index, gc3_ir_step_t *st)
{
    xmlChar *type;
    int      found = 0;

    memset(st, 0, sizeof(*st));
    st->s      = index;
    st->srcoff = st->dstoff = -1;
    st->cnt    = 1;
    st->depid  = st->deps = -1;
    st->line   = (int)xmlGetLineNo((xmlNode *)node);
    gc3_xml_int(rd, node, "s", 1, 0, GC3_IR_MAX_STEPS, &st->s);
    type = xmlGetProp((xmlNode *)node, (const xmlChar *)"type");
    if (type == NULL) {
        gc3_xml_error(rd, node, "<step> is missing the required attribute 'type'");
    } else {
        for (int t = 0; t < GC3_STEP_COUNT; t++) {
            if (strcmp((const char *)type, gc3_step_type_name((gc3_step_type_t)t)) == 0) {
                st->type = (gc3_step_type_t)t;
                found    = 1;
            }
        }
        if (!found) {
            gc3_xml_error(rd, node, "<step type=\"%s\">: unknown step type (expected s r rcs rrc rrs rrcs cpy re nop)",
                          (const char *)type);
        }
        xmlFree(type);
    }
    gc3_xml_buf(rd, node, "srcbuf", &st->srcbuf);
    gc3_xml_buf(rd, node, "dstbuf", &st->dstbuf);
    gc3_xml_int(rd, node, "srcoff", 0, -1, GC3_IR_MAX_CHUNKS, &st->srcoff);
    gc3_xml_int(rd, node, "dstoff", 0, -1, GC3_IR_MAX_CHUNKS, &st->dstoff);
    gc3_xml_int(rd, node, "cnt", 0, 0, GC3_IR_MAX_CHUNKS, &st->cnt);
    gc3_xml_int(rd, node, "depid", 0, -1, GC3_IR_MAX_TBS, &st->depid);
    gc3_xml_int(rd, node, "deps", 0, -1, GC3_IR_MAX_STEPS, &st->deps);
    gc3_xml_int(rd, node, "hasdep", 0, 0, 1, &st->hasdep);
    /* a buffer the step type does not use (MSCCL's readers need both attributes, so files name one,
       usually i or o with offset -1): none */
    if (found && !(gc3_step_flags(st->type) & GC3_STEP_F_READ_SRC)) {
        st->srcbuf = GC3_BUF_NONE;
    }
    if (found && !(gc3_step_flags(st->type) & (GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST))) {
        st->dstbuf = GC3_BUF_NONE;
    }
    return gc3_xml_extras(rd, node, gc3_step_attrs, &st->extra);
}

static gc3_status_t gc3_xml_read_tb(gc3_xml_reader_t *rd, const xmlNode *node, gc3_ir_tb_t *tb)
{
    gc3_status_t status;
    int          n = gc3_xml_count(node, "step"), i = 0;

    tb->send = tb->recv = -1;
    tb->line = (int)xmlGetLineNo((xmlNode *)node);
    gc3_xml_int(rd, node, "id", 1, 0, GC3_IR_MAX_TBS - 1, &tb->id);
    gc3_xml_int(rd, node, "send", 0, -1, GC3_IR_MAX_GPUS - 1, &tb->send);
    gc3_xml_int(rd, node, "recv", 0, -1, GC3_IR_MAX_GPUS - 1, &tb->recv);
    gc3_xml_int(rd, node, "chan", 0, 0, GC3_IR_MAX_CHANNELS - 1, &tb->chan);
    status = gc3_xml_extras(rd, node, gc3_tb_attrs, &tb->extra);
    if (status != GC3_OK) {
        return status;
    }
    if (n > GC3_IR_MAX_STEPS) {
        gc3_xml_error(rd, node, "<tb> has %d steps (at most %d)", n, GC3_IR_MAX_STEPS);
        return GC3_OK;
    }
    if (n == 0) {
        return GC3_OK;
    }
    tb->steps = calloc((size_t)n, sizeof(*tb->steps));
    if (tb->steps == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (const xmlNode *c = node->children; c != NULL; c = c->next) {
        if (!gc3_xml_is(c, "step")) {
            gc3_xml_note_unknown(rd, c, "tb");
            continue;
        }
        tb->nsteps = i + 1; /* owned from here on, so cleanup frees its extras */
        status     = gc3_xml_read_step(rd, c, i, &tb->steps[i]);
        if (status != GC3_OK) {
            return status;
        }
        i++;
    }
    return GC3_OK;
}

static gc3_status_t gc3_xml_read_gpu(gc3_xml_reader_t *rd, const xmlNode *node, gc3_ir_gpu_t *g)
{
    gc3_status_t status;
    int          n = gc3_xml_count(node, "tb"), i = 0;

    g->line = (int)xmlGetLineNo((xmlNode *)node);
    gc3_xml_int(rd, node, "i_chunks", 1, 0, GC3_IR_MAX_CHUNKS, &g->i_chunks);
    gc3_xml_int(rd, node, "o_chunks", 1, 0, GC3_IR_MAX_CHUNKS, &g->o_chunks);
    gc3_xml_int(rd, node, "s_chunks", 0, 0, GC3_IR_MAX_CHUNKS, &g->s_chunks);
    status = gc3_xml_extras(rd, node, gc3_gpu_attrs, &g->extra);
    if (status != GC3_OK) {
        return status;
    }
    if (n > GC3_IR_MAX_TBS) {
        gc3_xml_error(rd, node, "<gpu id=\"%d\"> has %d thread blocks (at most %d)", g->id, n, GC3_IR_MAX_TBS);
        return GC3_OK;
    }
    if (n == 0) {
        return GC3_OK;
    }
    g->tbs = calloc((size_t)n, sizeof(*g->tbs));
    if (g->tbs == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (const xmlNode *c = node->children; c != NULL; c = c->next) {
        if (!gc3_xml_is(c, "tb")) {
            gc3_xml_note_unknown(rd, c, "gpu");
            continue;
        }
        g->ntbs = i + 1;
        status  = gc3_xml_read_tb(rd, c, &g->tbs[i]);
        if (status != GC3_OK) {
            return status;
        }
        i++;
    }
    return GC3_OK;
}

/* The buffer that lives inside the other in an in-place call of coll (MSCCL's in-place form gives
 * it 0 chunks): allgather's input, the others' output. */
static gc3_buf_t gc3_xml_inner_buf(gc3_coll_t coll)
{
    return gc3_coll_desc(coll)->inplace_inner;
}

/* A step's chunks [off, off+cnt) of `buf` on `rank`, named in the buffer that holds both in an
 * in-place call when they are chunks of the inner one (unchanged otherwise). */
static void gc3_xml_home(const gc3_ir_program_t *p, int rank, gc3_buf_t *buf, int *off, int cnt)
{
    const gc3_ir_gpu_t *g = &p->gpus[rank];
    gc3_buf_t           hb, hb_last;
    int                 hc, hc_last;

    if (cnt < 1 || *buf != gc3_xml_inner_buf(p->coll) ||
        !gc3_ir_inplace_alias(p->coll, rank, g->i_chunks, g->o_chunks, *buf, *off, &hb, &hc) ||
        !gc3_ir_inplace_alias(p->coll, rank, g->i_chunks, g->o_chunks, *buf, *off + cnt - 1, &hb_last, &hc_last)) {
        return; /* out of range: the verifier says so */
    }
    *buf = hb;
    *off = hc;
}

/* Every step of `p` with the inner buffer's chunks renamed to the buffer that holds both. */
static void gc3_xml_home_all(gc3_ir_program_t *p)
{
    for (int r = 0; r < p->ngpus; r++) {
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++) {
                gc3_ir_step_t *st = &p->gpus[r].tbs[t].steps[s];
                gc3_xml_home(p, r, &st->srcbuf, &st->srcoff, st->cnt);
                gc3_xml_home(p, r, &st->dstbuf, &st->dstoff, st->cnt);
            }
        }
    }
}

/* The size the inner buffer has in the model (the file's is 0 in MSCCL's in-place form), or 0 when
 * the program is not in that form on rank r. */
static int gc3_xml_inner_size(const gc3_ir_program_t *p, int r)
{
    const gc3_coll_desc_t *d       = gc3_coll_desc(p->coll);
    const gc3_ir_gpu_t    *g       = &p->gpus[r];
    const int              n_inner = d->inplace_inner == GC3_BUF_INPUT ? g->i_chunks : g->o_chunks;
    const int              n_home  = d->inplace_inner == GC3_BUF_INPUT ? g->o_chunks : g->i_chunks;

    if (!d->builtin_post || n_inner != 0 || n_home != p->nchunksperloop) {
        return 0;
    }
    /* a slice of the other (one segment of it), or the same positions */
    return d->inplace_slice ? gc3_coll_segment_chunks(p->coll, p->nchunksperloop, p->ngpus) : p->nchunksperloop;
}

/* MSCCL's in-place form (the inner buffer given with 0 chunks on every rank): give the inner buffer
 * its size and name every chunk in the buffer that holds both, remembering the form for the writer. */
static void gc3_xml_msccl_inplace(gc3_xml_reader_t *rd, const xmlNode *root, gc3_ir_program_t *p)
{
    const char *inner = gc3_xml_inner_buf(p->coll) == GC3_BUF_INPUT ? "i_chunks" : "o_chunks";

    if (!p->inplace) {
        return;
    }
    for (int r = 0; r < p->ngpus; r++) {
        if (gc3_xml_inner_size(p, r) == 0) {
            return; /* not this form: the buffers are what the file says */
        }
    }
    if (p->outofplace) {
        gc3_xml_error(rd, root, "<algo inplace=\"1\" outofplace=\"1\">, but every <gpu> has %s=\"0\" (MSCCL's in-place "
                      "form): an out-of-place call would have no %s", inner,
                      gc3_xml_inner_buf(p->coll) == GC3_BUF_INPUT ? "input" : "output");
        return;
    }
    for (int r = 0; r < p->ngpus; r++) {
        int n = gc3_xml_inner_size(p, r);
        if (gc3_xml_inner_buf(p->coll) == GC3_BUF_INPUT) {
            p->gpus[r].i_chunks = n;
        } else {
            p->gpus[r].o_chunks = n;
        }
    }
    p->msccl_inplace = 1;
    gc3_xml_home_all(p);
}

/* <postcondition><cell rank="R" chunk="C"><src rank="Q" chunk="K"/>...</cell>...</postcondition>:
 * output chunk C of rank R holds the reduction of the listed input chunks (one: a copy); chunks not
 * listed: don't care. An element MSCCL's readers skip. */
static gc3_status_t gc3_xml_read_post(gc3_xml_reader_t *rd, const xmlNode *node, gc3_ir_program_t *p)
{
    uint32_t   ***cells;
    gc3_status_t  status = gc3_postcond_cells_alloc(p, &cells);
    int           in_stride = 1, errors = rd->errors;

    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < p->ngpus; r++) {
        in_stride = p->gpus[r].i_chunks > in_stride ? p->gpus[r].i_chunks : in_stride;
    }
    for (const xmlNode *c = node->children; c != NULL; c = c->next) {
        int rank = -1, chunk = -1, n = 0, nsrc = gc3_xml_count(c, "src");
        if (!gc3_xml_is(c, "cell")) {
            gc3_xml_note_unknown(rd, c, "postcondition");
            continue;
        }
        gc3_xml_int(rd, c, "rank", 1, 0, p->ngpus - 1, &rank);
        gc3_xml_int(rd, c, "chunk", 1, 0, GC3_IR_MAX_CHUNKS, &chunk);
        if (rank < 0 || chunk < 0) {
            continue;
        }
        if (chunk >= p->gpus[rank].o_chunks) {
            gc3_xml_error(rd, c, "<cell rank=\"%d\" chunk=\"%d\">: rank %d has %d output chunks", rank, chunk, rank,
                          p->gpus[rank].o_chunks);
            continue;
        }
        if (cells[rank][chunk] != NULL) {
            gc3_xml_error(rd, c, "<cell rank=\"%d\" chunk=\"%d\"> appears twice", rank, chunk);
            continue;
        }
        if (nsrc == 0) {
            gc3_xml_error(rd, c, "<cell rank=\"%d\" chunk=\"%d\"> lists no <src> (leave a don't-care chunk out)", rank,
                          chunk);
            continue;
        }
        cells[rank][chunk] = calloc((size_t)nsrc + 1, sizeof(uint32_t));
        if (cells[rank][chunk] == NULL) {
            status = GC3_ERR_NO_MEMORY;
            goto out;
        }
        for (const xmlNode *e = c->children; e != NULL; e = e->next) {
            int q = -1, k = -1;
            if (!gc3_xml_is(e, "src")) {
                gc3_xml_note_unknown(rd, e, "cell");
                continue;
            }
            gc3_xml_int(rd, e, "rank", 1, 0, p->ngpus - 1, &q);
            gc3_xml_int(rd, e, "chunk", 1, 0, GC3_IR_MAX_CHUNKS, &k);
            if (q >= 0 && k >= p->gpus[q].i_chunks) {
                gc3_xml_error(rd, e, "<src rank=\"%d\" chunk=\"%d\">: rank %d has %d input chunks", q, k, q,
                              p->gpus[q].i_chunks);
            } else if (q >= 0 && k >= 0) {
                cells[rank][chunk][n++] = (uint32_t)q * (uint32_t)in_stride + (uint32_t)k;
            }
        }
        cells[rank][chunk][n] = UINT32_MAX;
    }
    if (rd->errors == errors) {
        status = gc3_postcond_create(p, (const uint32_t *const *const *)cells, &p->post);
    }
out:
    gc3_postcond_cells_free(p, cells);
    return status;
}

/* What <algo> says of the program that gc3 does not need, checked against it. */
static gc3_status_t gc3_xml_read_info(gc3_xml_reader_t *rd, const xmlNode *root, gc3_ir_program_t *p)
{
    xmlChar *v = xmlGetProp((xmlNode *)root, (const xmlChar *)"redop"), *op;
    int      maxcnt = 0;

    gc3_xml_int(rd, root, "nthreadblocks", 0, 1, GC3_IR_MAX_TBS, &p->nthreadblocks);
    gc3_xml_int(rd, root, "maxcount", 0, 1, GC3_IR_MAX_CHUNKS, &p->maxcount);
    if ((op = xmlGetProp((xmlNode *)root, (const xmlChar *)"op")) != NULL) {
        if (v != NULL) {
            gc3_xml_error(rd, root, "<algo> has both redop=\"%s\" and op=\"%s\"", (const char *)v, (const char *)op);
        }
        xmlFree(v);
        v = op;
    }
    if (v != NULL) {
        gc3_op_t o;
        if (gc3_op_from_name((const char *)v, &o) != GC3_OK) {
            gc3_xml_warn(rd, root, "<algo %s=\"%s\">: not an operator gc3 knows; a call runs the program with its own "
                         "operator", op ? "op" : "redop", (const char *)v);
        }
        p->redop = strdup((const char *)v);
        xmlFree(v);
        if (p->redop == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
    }
    if (p->nthreadblocks > 0 && p->nthreadblocks != gc3_ir_widest_rank(p)) {
        gc3_xml_warn(rd, root, "<algo nthreadblocks=\"%d\">, but the widest rank has %d thread blocks (the blocks "
                     "are what runs)", p->nthreadblocks, gc3_ir_widest_rank(p));
    }
    for (int r = 0; r < p->ngpus; r++) {
        for (int t = 0; t < p->gpus[r].ntbs; t++) {
            for (int s = 0; s < p->gpus[r].tbs[t].nsteps; s++) {
                maxcnt = p->gpus[r].tbs[t].steps[s].cnt > maxcnt ? p->gpus[r].tbs[t].steps[s].cnt : maxcnt;
            }
        }
    }
    if (p->maxcount > 0 && p->maxcount < maxcnt) {
        gc3_xml_warn(rd, root, "<algo maxcount=\"%d\">, but a step moves %d chunks (the steps are what runs)",
                     p->maxcount, maxcnt);
    }
    return GC3_OK;
}

static gc3_status_t gc3_xml_read_algo(gc3_xml_reader_t *rd, const xmlNode *root, gc3_ir_program_t **program_p)
{
    gc3_ir_program_t *p;
    gc3_status_t      status;
    xmlChar          *v;
    int               ngpu_elems = gc3_xml_count(root, "gpu"), ngpus = -1, nchunks = 1;
    int               max_chan = -1;
    char             *seen = NULL;
    const xmlNode    *post = NULL;

    gc3_xml_int(rd, root, "ngpus", 0, 1, GC3_IR_MAX_GPUS, &ngpus);
    gc3_xml_int(rd, root, "nchunksperloop", 1, 1, GC3_IR_MAX_CHUNKS, &nchunks);
    if (ngpus == -1) {
        ngpus = ngpu_elems; /* old MSCCL files have no ngpus */
    }
    if (ngpu_elems != ngpus) {
        gc3_xml_error(rd, root, "<algo ngpus=\"%d\"> but the file has %d <gpu> elements", ngpus, ngpu_elems);
    }
    if (ngpus < 1 || ngpus > GC3_IR_MAX_GPUS) {
        if (ngpus < 1) {
            gc3_xml_error(rd, root, "<algo> has no <gpu> elements");
        }
        return GC3_ERR_PARSE;
    }
    if (rd->errors) {
        return GC3_ERR_PARSE;
    }
    status = gc3_ir_program_create(NULL, GC3_COLL_ALLREDUCE, ngpus, nchunks, &p);
    if (status != GC3_OK) {
        return status;
    }
    v = xmlGetProp((xmlNode *)root, (const xmlChar *)"name");
    if (v != NULL) {
        free(p->name);
        p->name = strdup((const char *)v);
        xmlFree(v);
    }
    v = xmlGetProp((xmlNode *)root, (const xmlChar *)"coll");
    if (v != NULL) {
        free(p->coll_name);
        p->coll_name = strdup((const char *)v);
        (void)gc3_coll_from_name((const char *)v, &p->coll); /* unknown names are custom */
        xmlFree(v);
    }
    /* root="R": gc3's extension for rooted collectives (MSCCL's files carry no root) */
    p->root = -1;
    gc3_xml_int(rd, root, "root", 0, -1, ngpus - 1, &p->root);
    if (gc3_coll_desc(p->coll)->rooted && p->root < 0) {
        gc3_xml_error(rd, root, "<algo coll=\"%s\"> is a rooted collective: it needs root=\"R\", the rank (0 to %d) it "
                      "was compiled for", p->coll_name, ngpus - 1);
    } else if (!gc3_coll_desc(p->coll)->rooted && p->root >= 0) {
        gc3_xml_error(rd, root, "<algo root=\"%d\">, but %s has no root (only bcast and reduce have one)", p->root,
                      p->coll_name);
    }
    v = xmlGetProp((xmlNode *)root, (const xmlChar *)"proto");
    if (v != NULL) {
        if (gc3_proto_from_name((const char *)v, &p->proto) != GC3_OK) {
            gc3_xml_error(rd, root, "<algo proto=\"%s\">: expected Simple, LL or LL128", (const char *)v);
        }
        xmlFree(v);
    }
    if (p->name == NULL || p->coll_name == NULL) {
        status = GC3_ERR_NO_MEMORY;
        goto err_free;
    }
    p->inplace     = 0;
    gc3_xml_int(rd, root, "inplace", 0, 0, 1, &p->inplace);
    p->outofplace  = !p->inplace; /* no outofplace (MSCCL before it had one): the other mode */
    gc3_xml_int(rd, root, "outofplace", 0, 0, 1, &p->outofplace);
    gc3_xml_u64(rd, root, "minBytes", &p->min_bytes);
    gc3_xml_u64(rd, root, "maxBytes", &p->max_bytes);
    status = gc3_xml_extras(rd, root, gc3_algo_attrs, &p->extra);
    seen   = calloc((size_t)ngpus, 1);
    if (status != GC3_OK || seen == NULL) {
        status = (status != GC3_OK) ? status : GC3_ERR_NO_MEMORY;
        goto err_free;
    }
    for (const xmlNode *c = root->children; c != NULL; c = c->next) {
        int id = -1;
        if (gc3_xml_is(c, "postcondition")) {
            if (post != NULL) {
                gc3_xml_error(rd, c, "a second <postcondition> (the first is at line %ld)", xmlGetLineNo((xmlNode *)post));
            }
            post = c;
            continue;
        }
        if (!gc3_xml_is(c, "gpu")) {
            gc3_xml_note_unknown(rd, c, "algo");
            continue;
        }
        gc3_xml_int(rd, c, "id", 1, 0, ngpus - 1, &id);
        if (id < 0) {
            continue;
        }
        if (seen[id]) {
            gc3_xml_error(rd, c, "<gpu id=\"%d\"> appears twice (first at line %d)", id, p->gpus[id].line);
            continue;
        }
        seen[id] = 1;
        status = gc3_xml_read_gpu(rd, c, &p->gpus[id]);
        if (status != GC3_OK) {
            goto err_free;
        }
        for (int t = 0; t < p->gpus[id].ntbs; t++) {
            max_chan = p->gpus[id].tbs[t].chan > max_chan ? p->gpus[id].tbs[t].chan : max_chan;
        }
    }
    p->nchannels = max_chan + 1 > 0 ? max_chan + 1 : 1;
    gc3_xml_int(rd, root, "nchannels", 0, 1, GC3_IR_MAX_CHANNELS, &p->nchannels);
    if (rd->errors == 0) {
        gc3_xml_msccl_inplace(rd, root, p);
    }
    if (rd->errors == 0) {
        status = gc3_xml_read_info(rd, root, p);
    }
    if (status == GC3_OK && rd->errors == 0 && post != NULL) {
        status = gc3_xml_read_post(rd, post, p);
    }
    if (status != GC3_OK) {
        goto err_free;
    }
    if (rd->errors) {
        status = GC3_ERR_PARSE;
        goto err_free;
    }
    free(seen);
    *program_p = p;
    return GC3_OK;

err_free:
    free(seen);
    gc3_ir_program_destroy(p);
    return status;
}

gc3_status_t gc3_ir_read_memory(const char *data, size_t size, const char *name, gc3_diag_t *diag,
                                gc3_ir_program_t **program_p)
{
    gc3_xml_reader_t rd = {name ? name : "<memory>", diag, 0, {{"", "", 0}}, 0};
    xmlParserCtxtPtr ctxt;
    xmlDocPtr        doc;
    xmlNodePtr       root;
    gc3_status_t     status;
    gc3_xml_first_error_t first = {0, 0, ""};

    *program_p = NULL;
    if (size > INT_MAX) {
        gc3_diag_add(diag, "%s: file too large", rd.name);
        return GC3_ERR_PARSE;
    }
    ctxt = xmlNewParserCtxt();
    if (ctxt == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    ctxt->_private     = &first;
    ctxt->sax->serror  = gc3_xml_capture_error;
    doc = xmlCtxtReadMemory(ctxt, data, (int)size, rd.name, NULL,
                            XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING | XML_PARSE_BIG_LINES);
    if (doc == NULL) {
        xmlErrorPtr e = xmlCtxtGetLastError(ctxt);
        if (!first.have) {
            gc3_xml_capture_error(ctxt, e);
        }
        gc3_diag_add(diag, "%s:%d: XML syntax error: %s", rd.name, first.line,
                     first.have ? first.msg : "unknown error");
        xmlFreeParserCtxt(ctxt);
        return GC3_ERR_PARSE;
    }
    root = xmlDocGetRootElement(doc);
    if (root == NULL || !gc3_xml_is(root, "algo")) {
        gc3_diag_add(diag, "%s:%ld: the root element must be <algo>%s%s%s", rd.name,
                     root ? xmlGetLineNo(root) : 0L, root ? " (found <" : "",
                     root ? (const char *)root->name : "", root ? ">)" : "");
        status = GC3_ERR_PARSE;
    } else {
        status = gc3_xml_read_algo(&rd, root, program_p);
        gc3_xml_unknown_counts(&rd);
        if (status == GC3_OK && name != NULL) {
            (*program_p)->source = strdup(name);
        }
    }
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(ctxt);
    return status;
}

gc3_status_t gc3_ir_read_file(const char *path, gc3_diag_t *diag, gc3_ir_program_t **program_p)
{
    FILE        *f;
    char        *data;
    long         size;
    gc3_status_t status;

    *program_p = NULL;
    f          = fopen(path, "rb");
    if (f == NULL) {
        gc3_diag_add(diag, "%s: cannot open: %s", path, strerror(errno));
        return GC3_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0) {
        gc3_diag_add(diag, "%s: cannot read: %s", path, strerror(errno));
        fclose(f);
        return GC3_ERR_IO;
    }
    if ((unsigned long)size > GC3_XML_MAX_FILE_BYTES) {
        gc3_diag_add(diag, "%s: file is %ld bytes, more than the %u allowed", path, size, GC3_XML_MAX_FILE_BYTES);
        fclose(f);
        return GC3_ERR_PARSE;
    }
    data = malloc((size_t)size + 1);
    if (data == NULL) {
        fclose(f);
        return GC3_ERR_NO_MEMORY;
    }
    if (fread(data, 1, (size_t)size, f) != (size_t)size) {
        gc3_diag_add(diag, "%s: short read", path);
        free(data);
        fclose(f);
        return GC3_ERR_IO;
    }
    fclose(f);
    status = gc3_ir_read_memory(data, (size_t)size, path, diag, program_p);
    free(data);
    return status;
}

/* ---------------------------------------------------------------- writer */

static void gc3_xml_put_escaped(FILE *out, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&':  fputs("&amp;", out); break;
        case '<':  fputs("&lt;", out); break;
        case '>':  fputs("&gt;", out); break;
        case '"':  fputs("&quot;", out); break;
        case '\n': fputs("&#10;", out); break;
        case '\t': fputs("&#9;", out); break;
        case '\r': fputs("&#13;", out); break;
        default:   fputc(*s, out);
        }
    }
}

static void gc3_xml_put_extras(FILE *out, const gc3_ir_extra_t *extra)
{
    for (int i = 0; i < extra->count; i++) {
        fprintf(out, " %s=\"", extra->attrs[i].name);
        gc3_xml_put_escaped(out, extra->attrs[i].value);
        fputc('"', out);
    }
}

/* One buffer attribute of a step: a buffer the step uses as it is (MSCCL's in-place form: named in
 * the buffer that holds both); one it does not use as i or o (MSCCL's readers need the attribute,
 * gc3's reader reads it back as none); a used one that is missing stays missing. */
static void gc3_xml_put_buf(FILE *out, const gc3_ir_program_t *p, int rank, const gc3_ir_step_t *st, int dst)
{
    unsigned  used = dst ? GC3_STEP_F_WRITE_DST | GC3_STEP_F_READ_DST : GC3_STEP_F_READ_SRC;
    gc3_buf_t buf  = dst ? st->dstbuf : st->srcbuf;
    int       off  = dst ? st->dstoff : st->srcoff;

    if (gc3_step_flags(st->type) & used) {
        if (p->msccl_inplace) {
            gc3_xml_home(p, rank, &buf, &off, st->cnt);
        }
        if (buf != GC3_BUF_NONE) {
            fprintf(out, " %sbuf=\"%c\"", dst ? "dst" : "src", gc3_buf_char(buf));
        }
    } else {
        fprintf(out, " %sbuf=\"%c\"", dst ? "dst" : "src", dst ? 'o' : 'i');
    }
    fprintf(out, " %soff=\"%d\"", dst ? "dst" : "src", off);
}

static void gc3_xml_put_post(FILE *out, const gc3_postcond_t *pc)
{
    fputs("  <postcondition>\n", out);
    for (int r = 0; r < pc->nranks; r++) {
        for (int c = 0; c < pc->o_chunks[r]; c++) {
            int cell = pc->cell_begin[r] + c;
            if (pc->dontcare[cell]) {
                continue;
            }
            fprintf(out, "    <cell rank=\"%d\" chunk=\"%d\">", r, c);
            for (int i = pc->ids_begin[cell]; i < pc->ids_begin[cell + 1]; i++) {
                fprintf(out, "<src rank=\"%u\" chunk=\"%u\"/>", pc->ids[i] / (uint32_t)pc->in_stride,
                        pc->ids[i] % (uint32_t)pc->in_stride);
            }
            fputs("</cell>\n", out);
        }
    }
    fputs("  </postcondition>\n", out);
}

gc3_status_t gc3_ir_write_stream(const gc3_ir_program_t *p, FILE *out)
{
    const gc3_buf_t inner = gc3_xml_inner_buf(p->coll);

    fputs("<algo name=\"", out);
    gc3_xml_put_escaped(out, p->name ? p->name : "");
    fprintf(out, "\" proto=\"%s\" nchannels=\"%d\" nchunksperloop=\"%d\" ngpus=\"%d\" coll=\"",
            gc3_proto_name(p->proto), p->nchannels, p->nchunksperloop, p->ngpus);
    gc3_xml_put_escaped(out, p->coll_name ? p->coll_name : gc3_coll_name(p->coll));
    fprintf(out, "\" inplace=\"%d\" outofplace=\"%d\"", p->inplace, p->outofplace);
    if (p->root >= 0) {
        fprintf(out, " root=\"%d\"", p->root);
    }
    if (p->maxcount > 0) {
        fprintf(out, " maxcount=\"%d\"", p->maxcount);
    }
    if (p->nthreadblocks > 0) {
        fprintf(out, " nthreadblocks=\"%d\"", p->nthreadblocks);
    }
    if (p->redop != NULL) {
        fputs(" redop=\"", out);
        gc3_xml_put_escaped(out, p->redop);
        fputc('"', out);
    }
    fprintf(out, " minBytes=\"%" PRIu64 "\" maxBytes=\"%" PRIu64 "\"", p->min_bytes, p->max_bytes);
    gc3_xml_put_extras(out, &p->extra);
    fputs(">\n", out);
    for (int r = 0; r < p->ngpus; r++) {
        const gc3_ir_gpu_t *g = &p->gpus[r];
        fprintf(out, "  <gpu id=\"%d\" i_chunks=\"%d\" o_chunks=\"%d\" s_chunks=\"%d\"", g->id,
                p->msccl_inplace && inner == GC3_BUF_INPUT ? 0 : g->i_chunks,
                p->msccl_inplace && inner == GC3_BUF_OUTPUT ? 0 : g->o_chunks, g->s_chunks);
        gc3_xml_put_extras(out, &g->extra);
        fputs(">\n", out);
        for (int t = 0; t < g->ntbs; t++) {
            const gc3_ir_tb_t *tb = &g->tbs[t];
            fprintf(out, "    <tb id=\"%d\" send=\"%d\" recv=\"%d\" chan=\"%d\"", tb->id, tb->send, tb->recv, tb->chan);
            gc3_xml_put_extras(out, &tb->extra);
            fputs(">\n", out);
            for (int s = 0; s < tb->nsteps; s++) {
                const gc3_ir_step_t *st = &tb->steps[s];
                fprintf(out, "      <step s=\"%d\" type=\"%s\"", st->s, gc3_step_type_name(st->type));
                gc3_xml_put_buf(out, p, r, st, 0);
                gc3_xml_put_buf(out, p, r, st, 1);
                fprintf(out, " cnt=\"%d\" depid=\"%d\" deps=\"%d\" hasdep=\"%d\"", st->cnt, st->depid, st->deps,
                        st->hasdep);
                gc3_xml_put_extras(out, &st->extra);
                fputs("/>\n", out);
            }
            fputs("    </tb>\n", out);
        }
        fputs("  </gpu>\n", out);
    }
    if (p->post != NULL) {
        gc3_xml_put_post(out, p->post);
    }
    fputs("</algo>\n", out);
    return ferror(out) ? GC3_ERR_IO : GC3_OK;
}

gc3_status_t gc3_ir_write_file(const gc3_ir_program_t *p, const char *path, gc3_diag_t *diag)
{
    FILE        *f = fopen(path, "w");
    gc3_status_t status;

    if (f == NULL) {
        gc3_diag_add(diag, "%s: cannot create: %s", path, strerror(errno));
        return GC3_ERR_IO;
    }
    status = gc3_ir_write_stream(p, f);
    if (fclose(f) != 0 || status != GC3_OK) {
        gc3_diag_add(diag, "%s: write failed", path);
        return GC3_ERR_IO;
    }
    return GC3_OK;
}

void gc3_ir_xml_cleanup(void)
{
    xmlCleanupParser();
}
