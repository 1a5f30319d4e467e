/* gc3 / libgpuir: which sends may leave their data in place (gc3_flat_zc_mark, gc3_ir.h;
 * doc/design/zero-copy.md).
 *
 * The steps of one loop of all ranks form a graph: program order in a block, dependencies, and a
 * message from each send to the receive that takes it (the k-th send of a connection to its k-th
 * receive). A step "happens before" another when a path joins them; loops touch disjoint parts of
 * the input and output buffers, so one loop's graph is enough. */
#include <stdlib.h>
#include <string.h>
#include "gc3_ir.h"

typedef struct {
    const gc3_flat_program_t *f;
    int                       n;                        /* steps: nodes */
    int                      *succ_off, *succ;          /* forward edges (CSR) */
    int                      *pred_off, *pred;          /* backward edges */
    int                      *match;                    /* per step: the receive that takes its message, -1 */
    int                      *rank;                     /* per step: its rank */
    int                      *seen_f, *seen_b, *seen_x; /* per step: the stamp of the search that reached it
                                                    * (after the receive, before the send, after another) */
    int                       stamp_f, stamp_b, stamp_x;
    int                      *queue;
} gc3_zc_graph_t;

int gc3_flat_sent_chunks(const gc3_flat_step_t *st, int *buf_p, int *off_p)
{
    switch (st->type) {
    case GC3_STEP_SEND:
        *buf_p = st->srcbuf;
        *off_p = st->srcoff;
        return st->cnt > 0;
    case GC3_STEP_RCS:
    case GC3_STEP_RRCS:
        *buf_p = st->dstbuf;
        *off_p = st->dstoff;
        return st->cnt > 0;
    default:
        return 0;
    }
}

static void gc3_zc_graph_free(gc3_zc_graph_t *g)
{
    free(g->succ_off);
    free(g->succ);
    free(g->pred_off);
    free(g->pred);
    free(g->match);
    free(g->rank);
    free(g->seen_f);
    free(g->seen_b);
    free(g->seen_x);
    free(g->queue);
}

/* Every edge (at most 3 per step: the next step of its block, its dependency, its message). */
static void gc3_zc_edges(const gc3_flat_program_t *f, int *from, int *to, int *m_p, const int *match)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t *steps = gc3_flat_steps(f);
    int                    m     = 0;

    for (int g = 0; g < f->ntbs; g++) {
        const gc3_flat_tb_t *b = &tbs[g];
        for (int s = 0; s < b->nsteps; s++) {
            const int              v  = b->step_begin + s;
            const gc3_flat_step_t *st = &steps[v];
            if (s + 1 < b->nsteps) {
                from[m] = v, to[m++] = v + 1;
            }
            if (st->dep_tb >= 0) {
                const gc3_flat_tb_t *d = &tbs[ranks[b->rank].tb_begin + st->dep_tb];
                from[m] = d->step_begin + st->dep_step, to[m++] = v;
            }
            if (match[v] >= 0) {
                from[m] = v, to[m++] = match[v];
            }
        }
    }
    *m_p = m;
}

/* CSR of m edges over n nodes, by `key` (from: forward, to: backward). */
static int gc3_zc_csr(int n, int m, const int *key, const int *val, int **off_p, int **adj_p)
{
    int *off = calloc((size_t)n + 2, sizeof(int)), *adj = malloc(((size_t)m + 1) * sizeof(int));
    if (off == NULL || adj == NULL) {
        free(off);
        free(adj);
        return -1;
    }
    for (int e = 0; e < m; e++) {
        off[key[e] + 2]++;
    }
    for (int v = 0; v < n; v++) {
        off[v + 2] += off[v + 1];
    }
    for (int e = 0; e < m; e++) {
        adj[off[key[e] + 1]++] = val[e];
    }
    *off_p = off;
    *adj_p = adj;
    return 0;
}

/* The k-th send of each connection matched with the k-th receive of its peer block. */
void gc3_flat_match_sends(const gc3_flat_program_t *f, int *match)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t *steps = gc3_flat_steps(f);

    for (int v = 0; v < f->nsteps; v++) {
        match[v] = -1;
    }
    for (int r = 0; r < f->nranks; r++) {
        for (int t = 0; t < ranks[r].ntbs; t++) {
            const gc3_flat_tb_t *b = &tbs[ranks[r].tb_begin + t];
            const int            u = gc3_flat_peer_receiver(f, r, t);
            if (u < 0) {
                continue;
            }
            const gc3_flat_tb_t *q = &tbs[ranks[b->send].tb_begin + u];
            int                  j = 0;
            for (int s = 0; s < b->nsteps; s++) {
                if (!(gc3_step_flags((gc3_step_type_t)steps[b->step_begin + s].type) & GC3_STEP_F_SEND)) {
                    continue;
                }
                while (j < q->nsteps &&
                       !(gc3_step_flags((gc3_step_type_t)steps[q->step_begin + j].type) & GC3_STEP_F_RECV)) {
                    j++;
                }
                if (j < q->nsteps) {
                    match[b->step_begin + s] = q->step_begin + j++;
                }
            }
        }
    }
}

static int gc3_zc_graph_build(const gc3_flat_program_t *f, gc3_zc_graph_t *g)
{
    const gc3_flat_tb_t *tbs  = gc3_flat_tbs(f);
    const size_t         n    = (size_t)f->nsteps + 1;
    int                 *from = malloc(3 * n * sizeof(int)), *to = malloc(3 * n * sizeof(int)), m = 0, rc = -1;

    memset(g, 0, sizeof(*g));
    g->f      = f;
    g->n      = f->nsteps;
    g->match  = malloc(n * sizeof(int));
    g->rank   = malloc(n * sizeof(int));
    g->seen_f = calloc(n, sizeof(int));
    g->seen_b = calloc(n, sizeof(int));
    g->seen_x = calloc(n, sizeof(int));
    g->queue  = malloc(n * sizeof(int));
    if (from != NULL && to != NULL && g->match != NULL && g->rank != NULL && g->seen_f != NULL && g->seen_b != NULL &&
        g->seen_x != NULL && g->queue != NULL) {
        for (int t = 0; t < f->ntbs; t++) {
            for (int s = 0; s < tbs[t].nsteps; s++) {
                g->rank[tbs[t].step_begin + s] = tbs[t].rank;
            }
        }
        gc3_flat_match_sends(f, g->match);
        gc3_zc_edges(f, from, to, &m, g->match);
        rc = gc3_zc_csr(g->n, m, from, to, &g->succ_off, &g->succ) == 0 &&
                     gc3_zc_csr(g->n, m, to, from, &g->pred_off, &g->pred) == 0
                 ? 0
                 : -1;
    }
    free(from);
    free(to);
    return rc;
}

/* Mark with a new stamp every step reachable from v: which 1, after it (into seen_f); 0, before it
 * (seen_b); 2, after it (seen_x). */
static void gc3_zc_search(gc3_zc_graph_t *g, int v, int which)
{
    const int  forward = which != 0;
    int       *seen    = which == 1 ? g->seen_f : which == 2 ? g->seen_x : g->seen_b;
    const int *off = forward ? g->succ_off : g->pred_off, *adj = forward ? g->succ : g->pred;
    const int  stamp = which == 1 ? ++g->stamp_f : which == 2 ? ++g->stamp_x : ++g->stamp_b;
    int        head = 0, tail = 0;

    seen[v]          = stamp;
    g->queue[tail++] = v;
    while (head < tail) {
        int u = g->queue[head++];
        for (int e = off[u]; e < off[u + 1]; e++) {
            if (seen[adj[e]] != stamp) {
                seen[adj[e]]     = stamp;
                g->queue[tail++] = adj[e];
            }
        }
    }
}

/* Does step `v` of `rank` read (R) or write (W) location `loc` (kind: inplace) of its chunks? */
static int gc3_zc_touches(const gc3_flat_program_t *f, int rank, int inplace, const gc3_flat_step_t *st, int loc,
                          int write)
{
    const unsigned fl = gc3_step_flags((gc3_step_type_t)st->type);
    for (int c = 0; c < st->cnt; c++) {
        if (write ? (fl & GC3_STEP_F_WRITE_DST) != 0 : (fl & GC3_STEP_F_READ_SRC) != 0) {
            int b = write ? st->dstbuf : st->srcbuf, o = write ? st->dstoff : st->srcoff;
            if (b != GC3_FLAT_BUF_NONE && gc3_flat_location(f, rank, inplace, b, o + c) == loc) {
                return 1;
            }
        }
        if (!write && (fl & GC3_STEP_F_READ_DST) && st->dstbuf != GC3_FLAT_BUF_NONE &&
            gc3_flat_location(f, rank, inplace, st->dstbuf, st->dstoff + c) == loc) {
            return 1;
        }
    }
    return 0;
}

/* Chunks [off, off + cnt) of buf lie in one segment of it (contiguous in memory). */
static int gc3_zc_contiguous(const gc3_flat_program_t *f, int rank, int buf, int off, int cnt)
{
    const gc3_flat_rank_t *r    = &gc3_flat_ranks(f)[rank];
    const int              n    = buf == GC3_BUF_INPUT ? r->i_chunks : r->o_chunks;
    const int              segs = gc3_coll_segments((gc3_coll_t)f->coll, (gc3_buf_t)buf, f->nranks);
    const int              k    = segs > 0 ? n / segs : 0;

    if ((buf != GC3_BUF_INPUT && buf != GC3_BUF_OUTPUT) || k <= 0 || off < 0 || cnt < 1 || off + cnt > n) {
        return 0;
    }
    return off / k == (off + cnt - 1) / k;
}

/* Step v (a send of `rank`, its receive match[v] marked forward, the steps before v backward): may it
 * leave the chunks it sends in place in calls of kind `inplace`? */
static int gc3_zc_send_ok(gc3_zc_graph_t *g, int rank, int inplace, int v)
{
    const gc3_flat_program_t *f     = g->f;
    const gc3_flat_rank_t    *r     = &gc3_flat_ranks(f)[rank];
    const gc3_flat_tb_t      *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t    *steps = gc3_flat_steps(f);
    const gc3_flat_step_t    *st    = &steps[v];
    int                       buf, off;

    if (!gc3_flat_sent_chunks(st, &buf, &off) || !gc3_zc_contiguous(f, rank, buf, off, st->cnt)) {
        return 0;
    }
    for (int c = 0; c < st->cnt; c++) {
        const int loc = gc3_flat_location(f, rank, inplace, buf, off + c);
        if (loc < 0 || loc >= r->i_chunks + r->o_chunks) {
            return 0;
        }
        for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
            for (int s = 0; s < tbs[t].nsteps; s++) {
                const int w = tbs[t].step_begin + s;
                if (w != v && gc3_zc_touches(f, rank, inplace, &steps[w], loc, 1) && g->seen_b[w] != g->stamp_b &&
                    g->seen_f[w] != g->stamp_f) {
                    return 0; /* a write neither before the send nor after the receive */
                }
            }
        }
    }
    return 1;
}

/* Do chunks [off, off + cnt) of buf at `rank` include `loc` (in-place aliasing of the kind applied)? */
static int gc3_zc_covers(const gc3_flat_program_t *f, int rank, int inplace, int buf, int off, int cnt, int loc)
{
    for (int c = 0; c < cnt; c++) {
        if (gc3_flat_location(f, rank, inplace, buf, off + c) == loc) {
            return 1;
        }
    }
    return 0;
}

/* Does step st of `rank` access `loc` (read or write)? (Every rank's rrs steps were homed before the
 * marking, gc3_flat_zc_mark: a homed one is an rrcs that writes its home, an rrs left writes nothing.) */
static int gc3_zc_accesses(const gc3_flat_program_t *f, int rank, int inplace, const gc3_flat_step_t *st, int loc)
{
    return gc3_zc_touches(f, rank, inplace, st, loc, 1) || gc3_zc_touches(f, rank, inplace, st, loc, 0);
}

/* Does step st of `rank` send `loc` from where it is, so that it may be left there for its reader (a send
 * or rcs/rrcs of it, marked or not: the marking of its rank may not be done yet)? */
static int gc3_zc_sends_loc(const gc3_flat_program_t *f, int rank, int inplace, const gc3_flat_step_t *st, int loc)
{
    int buf, off;
    return gc3_flat_sent_chunks(st, &buf, &off) && gc3_zc_covers(f, rank, inplace, buf, off, st->cnt, loc);
}

/* Send step v (its receive match[v] marked forward, the steps before v backward): may its sender write
 * the chunks into the receiving step's destination at v, in calls of kind `inplace`? */
static int gc3_zc_push_ok(gc3_zc_graph_t *g, int inplace, int v)
{
    const gc3_flat_program_t *f     = g->f;
    const gc3_flat_tb_t      *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t    *steps = gc3_flat_steps(f);
    const int                 u = g->match[v], q = g->rank[u];
    const gc3_flat_step_t    *ru = &steps[u];
    const gc3_flat_rank_t    *r  = &gc3_flat_ranks(f)[q];

    const int reduces = ru->type == GC3_STEP_RRC || ru->type == GC3_STEP_RRCS;

    if ((ru->type != GC3_STEP_RECV && ru->type != GC3_STEP_RCS && !reduces) || ru->cnt != steps[v].cnt ||
        !gc3_zc_contiguous(f, q, ru->dstbuf, ru->dstoff, ru->cnt)) {
        return 0;
    }
    for (int c = 0; c < ru->cnt; c++) {
        const int loc = gc3_flat_location(f, q, inplace, ru->dstbuf, ru->dstoff + c);
        if (loc < 0 || loc >= r->i_chunks + r->o_chunks) {
            return 0;
        }
        if (reduces && gc3_zc_covers(f, q, inplace, ru->srcbuf, ru->srcoff, ru->cnt, loc)) {
            return 0; /* a reduction's landing place is its own operand (in place) */
        }
        for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
            for (int s = 0; s < tbs[t].nsteps; s++) {
                const int w = tbs[t].step_begin + s;
                if (w == u || g->seen_f[w] == g->stamp_f || !gc3_zc_accesses(f, q, inplace, &steps[w], loc)) {
                    continue;
                }
                if (g->seen_b[w] != g->stamp_b) {
                    return 0; /* an access of the destination neither before the send nor after the receive */
                }
                if (gc3_zc_sends_loc(f, q, inplace, &steps[w], loc) &&
                    (g->match[w] < 0 || g->seen_b[g->match[w]] != g->stamp_b)) {
                    return 0; /* a send of it that may leave it in place: its reader is not before the push */
                }
            }
        }
    }
    return 1;
}

/* Is there a write of `loc` at `rank` (other than steps v and w) after the receive of v's message (marked
 * forward) that happens before step w? The search from each such write uses the third mark. */
static int gc3_zc_rewritten_before(gc3_zc_graph_t *g, int rank, int inplace, int loc, int v, int w)
{
    const gc3_flat_rank_t *r     = &gc3_flat_ranks(g->f)[rank];
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(g->f);
    const gc3_flat_step_t *steps = gc3_flat_steps(g->f);

    for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps; s++) {
            const int x = tbs[t].step_begin + s;
            if (x != w && x != v && g->seen_f[x] == g->stamp_f &&
                gc3_zc_touches(g->f, rank, inplace, &steps[x], loc, 1)) {
                gc3_zc_search(g, x, 2);
                if (g->seen_x[w] == g->stamp_x) {
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* May rrs step v of `rank` keep its result in output chunks [o, o + cnt) in calls of kind `inplace`
 * (v's receive marked forward, the steps before v backward)? Every other write of those chunks is
 * before v or after the receive, and one is after it (it gives the chunk its final value); every
 * other read is before v, or after such a later write (else it would read the kept partial result). */
static int gc3_zc_home_ok(gc3_zc_graph_t *g, int rank, int inplace, int v, int o)
{
    const gc3_flat_program_t *f     = g->f;
    const gc3_flat_rank_t    *r     = &gc3_flat_ranks(f)[rank];
    const gc3_flat_tb_t      *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t    *steps = gc3_flat_steps(f);

    for (int c = 0; c < steps[v].cnt; c++) {
        const int loc   = gc3_flat_location(f, rank, inplace, GC3_BUF_OUTPUT, o + c);
        int       later = 0;
        if (loc < 0) {
            return 0;
        }
        for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
            for (int s = 0; s < tbs[t].nsteps; s++) {
                const int w      = tbs[t].step_begin + s;
                const int before = g->seen_b[w] == g->stamp_b, after = g->seen_f[w] == g->stamp_f;
                if (w == v || before) {
                    continue; /* the step itself (in place its source may be this chunk), or before it */
                }
                if (gc3_zc_touches(f, rank, inplace, &steps[w], loc, 1)) {
                    if (!after) {
                        return 0; /* a write concurrent with the kept result */
                    }
                    later = 1;
                }
                if (gc3_zc_touches(f, rank, inplace, &steps[w], loc, 0) &&
                    (!after || !gc3_zc_rewritten_before(g, rank, inplace, loc, v, w))) {
                    return 0; /* a read that could see the kept partial result */
                }
            }
        }
        if (!later) {
            return 0;
        }
    }
    return 1;
}

/* rrs step v made rrcs into the output chunks of its source's index (or back). */
static void gc3_zc_home(gc3_flat_step_t *st, int on)
{
    st->type   = on ? GC3_STEP_RRCS : GC3_STEP_RRS;
    st->dstbuf = on ? GC3_BUF_OUTPUT : GC3_FLAT_BUF_NONE;
    st->dstoff = on ? st->srcoff : -1;
    st->zc     = on ? GC3_FLAT_ZC_HOMED : 0;
}

/* Is v's home (a homed rrs) right in every kind of call the program has, given all other steps as
 * they are now? Searches from its receive and back from it. */
static int gc3_zc_home_check(gc3_zc_graph_t *g, int rank, int v)
{
    const gc3_flat_program_t *f  = g->f;
    const gc3_flat_step_t    *st = &gc3_flat_steps(f)[v];

    gc3_zc_search(g, g->match[v], 1);
    gc3_zc_search(g, v, 0);
    return (st->srcbuf == GC3_BUF_INPUT || st->srcbuf == GC3_BUF_OUTPUT) &&
           (gc3_coll_access((gc3_coll_t)f->coll, f->root, rank, GC3_BUF_OUTPUT) & GC3_COLL_ACC_WRITE) &&
           gc3_zc_contiguous(f, rank, GC3_BUF_OUTPUT, st->srcoff, st->cnt) &&
           (!f->outofplace || gc3_zc_home_ok(g, rank, 0, v, st->srcoff)) &&
           (!f->inplace || gc3_zc_home_ok(g, rank, 1, v, st->srcoff));
}

/* Homes for the rank's rrs steps whose receiver is known: each is tried with the homes given before
 * it; then every home is checked again with all of them in place, and one that fails is taken back,
 * until none fails (taking one back only removes writes, but may remove the later write another
 * relied on, hence the rounds). */
static int gc3_zc_home_all(gc3_zc_graph_t *g, int rank)
{
    const gc3_flat_rank_t *r     = &gc3_flat_ranks(g->f)[rank];
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(g->f);
    gc3_flat_step_t       *steps = (gc3_flat_step_t *)((char *)g->f + g->f->steps_off);
    int                    homed = 0, changed = 1;

    for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps; s++) {
            const int v = tbs[t].step_begin + s;
            if (steps[v].type == GC3_STEP_RRS && g->match[v] >= 0 && gc3_zc_home_check(g, rank, v)) {
                gc3_zc_home(&steps[v], 1);
                homed++;
            }
        }
    }
    while (changed && homed > 0) {
        changed = 0;
        for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
            for (int s = 0; s < tbs[t].nsteps; s++) {
                const int v = tbs[t].step_begin + s;
                if ((steps[v].zc & GC3_FLAT_ZC_HOMED) && !gc3_zc_home_check(g, rank, v)) {
                    gc3_zc_home(&steps[v], 0);
                    homed--;
                    changed = 1;
                }
            }
        }
    }
    return homed;
}

/* One rank's marking on the program's graph g. */
static int gc3_zc_mark_rank(gc3_zc_graph_t *g, int rank, gc3_zc_stats_t *stats)
{
    gc3_flat_program_t    *f      = (gc3_flat_program_t *)g->f;
    const gc3_flat_rank_t *r      = &gc3_flat_ranks(f)[rank];
    const gc3_flat_tb_t   *tbs    = gc3_flat_tbs(f);
    gc3_flat_step_t       *steps  = (gc3_flat_step_t *)((char *)f + f->steps_off);
    int                    marked = 0;

    /* (every rank's homes were given first, gc3_flat_zc_mark) */
    for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps; s++) {
            stats->homed += (steps[tbs[t].step_begin + s].zc & GC3_FLAT_ZC_HOMED) != 0;
        }
    }
    for (int t = r->tb_begin; t < r->tb_begin + r->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps; s++) {
            const int        v    = tbs[t].step_begin + s;
            gc3_flat_step_t *step = &steps[v];
            int              bits = step->zc & GC3_FLAT_ZC_HOMED;
            if (!(gc3_step_flags((gc3_step_type_t)step->type) & GC3_STEP_F_SEND) || g->match[v] < 0) {
                continue;
            }
            gc3_zc_search(g, g->match[v], 1); /* after the receive */
            gc3_zc_search(g, v, 0);           /* before the send */
            if (f->outofplace && gc3_zc_send_ok(g, rank, 0, v)) {
                bits |= GC3_FLAT_ZC_OOP;
                stats->oop++;
            }
            if (f->inplace && gc3_zc_send_ok(g, rank, 1, v)) {
                bits |= GC3_FLAT_ZC_IP;
                stats->ip++;
            }
            if (f->outofplace && gc3_zc_push_ok(g, 0, v)) {
                bits |= GC3_FLAT_ZC_PUSH_OOP;
                stats->push_oop++;
            }
            if (f->inplace && gc3_zc_push_ok(g, 1, v)) {
                bits |= GC3_FLAT_ZC_PUSH_IP;
                stats->push_ip++;
            }
            step->zc       = bits;
            step->push_buf = 0;
            step->push_off = 0;
            if (bits & (GC3_FLAT_ZC_PUSH_OOP | GC3_FLAT_ZC_PUSH_IP)) {
                const gc3_flat_step_t *u =
                    &steps[g->match[v]]; /* (a recv, rcs, rrc or rrcs into the input or output) */
                step->push_buf           = u->dstbuf;
                step->push_off           = u->dstoff;
            }
            marked += (bits & (GC3_FLAT_ZC_OOP | GC3_FLAT_ZC_IP)) != 0;
        }
    }
    return marked;
}

int gc3_flat_zc_mark(gc3_flat_program_t *f, int rank, int home_rrs, gc3_zc_stats_t *stats)
{
    const gc3_flat_tb_t *tbs   = gc3_flat_tbs(f);
    gc3_flat_step_t     *steps = (gc3_flat_step_t *)((char *)f + f->steps_off);
    const int            lo = rank < 0 ? 0 : rank, hi = rank < 0 ? f->nranks : rank + 1;
    gc3_zc_stats_t       st = { 0 };
    gc3_zc_graph_t       g;
    int                  marked = 0;

    for (int t = 0; t < f->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps && tbs[t].rank >= lo && tbs[t].rank < hi; s++) {
            steps[tbs[t].step_begin + s].zc &= GC3_FLAT_ZC_HOMED; /* (a home given before stays) */
            st.sends += (gc3_step_flags((gc3_step_type_t)steps[tbs[t].step_begin + s].type) & GC3_STEP_F_SEND) != 0;
        }
    }
    if (f->nsteps <= GC3_ZC_MAX_STEPS && f->proto != GC3_PROTO_LL && gc3_zc_graph_build(f, &g) == 0) {
        /* every rank's homes first (a rank's depend on its own steps only): a push into a reduction lands
         * in its destination, which for a homed rrs is its home */
        for (int r = 0; r < f->nranks && home_rrs; r++) {
            (void)gc3_zc_home_all(&g, r);
        }
        for (int r = lo; r < hi; r++) {
            gc3_zc_stats_t one = { 0 };
            marked += gc3_zc_mark_rank(&g, r, &one);
            st.oop += one.oop;
            st.ip += one.ip;
            st.homed += one.homed;
            st.push_oop += one.push_oop;
            st.push_ip += one.push_ip;
        }
        gc3_zc_graph_free(&g);
    }
    if (stats != NULL) {
        *stats = st;
    }
    return marked;
}
