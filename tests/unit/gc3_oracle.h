/* The independent oracle of the tests: each collective computed directly with plain loops
 * over ranks and elements (nothing from the IR), and a check that runs a program with the
 * reference executor on random data and compares with it. Include after gc3_test.h. */
#ifndef GC3_ORACLE_H
#define GC3_ORACLE_H

#include <string.h>
#include "gc3_refexec.h"

/* expected[r] for the collective, computed directly. count: the MPI count; root: the root of a rooted
 * collective (exp[r] of reduce's and gather's other ranks is left as it is: they have no output). */
static void gc3_oracle(gc3_coll_t coll, int R, int root, gc3_dtype_t dt, gc3_op_t op, size_t count, int inplace,
                       void **in, void **exp)
{
    size_t ds = gc3_dtype_size(dt);
    for (int r = 0; r < R; r++) {
        char *e = exp[r];
        switch (coll) {
        case GC3_COLL_BCAST:
            memcpy(e, in[root], count * ds);
            break;
        case GC3_COLL_REDUCE:
            if (r == root) {
                memcpy(e, in[0], count * ds);
                for (int q = 1; q < R; q++) {
                    gc3_reduce_host(dt, op, e, in[q], count);
                }
            }
            break;
        case GC3_COLL_GATHER: /* block q of the root's output = rank q's input */
            for (int q = 0; q < R && r == root; q++) {
                memcpy(e + (size_t)q * count * ds, in[q], count * ds);
            }
            break;
        case GC3_COLL_SCATTER: /* rank r's output = block r of the root's input (in place: at block r) */
            memcpy(e + (inplace ? (size_t)r * count * ds : 0), (char *)in[root] + (size_t)r * count * ds, count * ds);
            break;
        case GC3_COLL_SCAN:   /* ranks 0 to r, in rank order */
        case GC3_COLL_EXSCAN: /* ranks 0 to r-1; rank 0's output is left as it is */
            if (coll == GC3_COLL_SCAN || r > 0) {
                memcpy(e, in[0], count * ds);
            }
            for (int q = 1; q < (coll == GC3_COLL_SCAN ? r + 1 : r); q++) {
                gc3_reduce_host(dt, op, e, in[q], count);
            }
            break;
        case GC3_COLL_ALLREDUCE:
            memcpy(e, in[0], count * ds);
            for (int q = 1; q < R; q++) {
                gc3_reduce_host(dt, op, e, in[q], count);
            }
            break;
        case GC3_COLL_ALLTOALL: /* block q of rank r's output = block r of rank q's input */
            for (int q = 0; q < R; q++) {
                memcpy(e + (size_t)q * count * ds, (char *)in[q] + (size_t)r * count * ds, count * ds);
            }
            break;
        case GC3_COLL_ALLGATHER:
            for (int q = 0; q < R; q++) {
                memcpy(e + (size_t)q * count * ds, in[q], count * ds);
            }
            break;
        case GC3_COLL_REDUCE_SCATTER: {
            char *dst = e + (inplace ? (size_t)r * count * ds : 0);
            memcpy(dst, (char *)in[0] + (size_t)r * count * ds, count * ds);
            for (int q = 1; q < R; q++) {
                gc3_reduce_host(dt, op, dst, (char *)in[q] + (size_t)r * count * ds, count);
            }
            break;
        }
        default: /* alltonext: rank r gets rank r-1's buffer; rank 0's output is not defined */
            if (r > 0) {
                memcpy(e, in[r - 1], count * ds);
            }
            break;
        }
    }
}

static size_t gc3_oracle_in_elems(gc3_coll_t c, int R, size_t count)
{
    return c == GC3_COLL_ALLREDUCE || c == GC3_COLL_ALLGATHER || c == GC3_COLL_CUSTOM || c == GC3_COLL_BCAST ||
                   c == GC3_COLL_REDUCE || c == GC3_COLL_GATHER || c == GC3_COLL_SCAN || c == GC3_COLL_EXSCAN
               ? count
               : count * (size_t)R;
}

static size_t gc3_oracle_out_elems(gc3_coll_t c, int R, size_t count)
{
    return c == GC3_COLL_ALLREDUCE || c == GC3_COLL_REDUCE_SCATTER || c == GC3_COLL_CUSTOM || c == GC3_COLL_BCAST ||
                   c == GC3_COLL_REDUCE || c == GC3_COLL_SCATTER || c == GC3_COLL_SCAN || c == GC3_COLL_EXSCAN
               ? count
               : count * (size_t)R;
}

/* Run p with the reference executor (zero_copy: gc3_refexec_args_t's) on random data and compare with
 * the direct computation. 1 when right. */
static inline int gc3_oracle_check_zc(const gc3_ir_program_t *p, gc3_dtype_t dt, gc3_op_t op, size_t count, int inplace,
                               int slots, int zero_copy)
{
    int                R  = p->ngpus;
    size_t             ds = gc3_dtype_size(dt), ni = gc3_oracle_in_elems(p->coll, R, count), no = gc3_oracle_out_elems(p->coll, R, count);
    size_t             nbuf = ni > no ? ni : no;
    void              *in[64], *out[64], *exp[64];
    gc3_refexec_args_t args = {dt, op, 0, inplace, slots, zero_copy};
    gc3_diag_t         diag;
    gc3_status_t       s;
    int                ok = 1;

    if (R > 64) {
        CHECK(R <= 64, "the oracle takes at most 64 ranks (%d)", R);
        return 0;
    }
    gc3_diag_init(&diag);
    s = gc3_coll_chunk_elems(p, count, &args.chunk_elems);
    CHECK(s == GC3_OK, "%s: count %zu does not divide", p->name, count);
    for (int r = 0; r < R; r++) {
        in[r]  = calloc(nbuf, ds);
        out[r] = calloc(nbuf, ds);
        exp[r] = calloc(nbuf, ds);
        gc3_refexec_fill(dt, op, in[r], ni, (uint64_t)(r + 1) * 7919u + count);
        if (inplace) {
            size_t off = p->coll == GC3_COLL_ALLGATHER || p->coll == GC3_COLL_GATHER ? (size_t)r * count : 0;
            memcpy((char *)out[r] + off * ds, in[r], ni * ds);
            memcpy(exp[r], out[r], nbuf * ds);
        }
    }
    gc3_oracle(p->coll, R, p->root, dt, op, count, inplace, in, exp);
    {
        /* what MPI lets the other ranks of a rooted collective pass: no input for bcast's and scatter's, no
           output for an out-of-place reduce's or gather's; the reference executor must not touch them */
        void *in_run[64], *out_run[64];
        for (int r = 0; r < R; r++) {
            in_run[r] = (p->coll == GC3_COLL_BCAST || p->coll == GC3_COLL_SCATTER) && r != p->root ? NULL : in[r];
            out_run[r] =
                (p->coll == GC3_COLL_REDUCE || p->coll == GC3_COLL_GATHER) && r != p->root && !inplace ? NULL : out[r];
        }
        s = gc3_refexec_run(p, &args, in_run, out_run, &diag);
    }
    CHECK(s == GC3_OK, "%s %s %s count %zu %s%s: %s (%s)", p->name, gc3_dtype_name(dt), gc3_op_name(op), count,
          inplace ? "in-place" : "out-of-place", zero_copy ? " zero-copy" : "", gc3_status_string(s),
          diag.count ? diag.msgs[0] : "");
    for (int r = 0; r < R && s == GC3_OK; r++) {
        size_t n = inplace ? nbuf : no;
        char   what[128];
        snprintf(what, sizeof(what), "%s %s %s count %zu %s rank %d", p->name, gc3_dtype_name(dt), gc3_op_name(op),
                 count, inplace ? "in-place" : "out-of-place", r);
        if (gc3_refexec_compare(dt, out[r], exp[r], n, what, &diag) != GC3_OK) {
            ok = 0;
        }
    }
    CHECK(ok, "%s", diag.count ? diag.msgs[diag.count - 1] : "mismatch");
    for (int r = 0; r < R; r++) {
        free(in[r]);
        free(out[r]);
        free(exp[r]);
    }
    gc3_diag_cleanup(&diag);
    return ok && s == GC3_OK;
}

static inline int gc3_oracle_check(const gc3_ir_program_t *p, gc3_dtype_t dt, gc3_op_t op, size_t count,
                                   int inplace, int slots)
{
    return gc3_oracle_check_zc(p, dt, op, count, inplace, slots, 0);
}

#endif
