/* gc3 / libgpuir internal: the traced program, shared by trace.c and lower.c. */
#ifndef GC3_PROG_INTERNAL_H
#define GC3_PROG_INTERNAL_H

#include "gc3_compiler.h"

enum { GC3_TOP_COPY, GC3_TOP_REDUCE };

/* One chunk operation as the generator wrote it. */
typedef struct {
    int kind;
    int ch;
    int count;
    int src_rank, src_buf, src_idx;
    int dst_rank, dst_buf, dst_idx;
} gc3_top_t;

struct gc3_prog {
    gc3_prog_params_t params;
    char             *name;
    char             *coll_name;
    int               nranks;
    int               in_chunks, out_chunks;
    int              *s_chunks;     /* per rank: highest scratch index used + 1 */
    int64_t         **version[3];   /* per buffer, per rank, per chunk: last write (-1 never) */
    int              *s_cap;        /* per rank: allocated scratch versions */
    int64_t           next_version;
    gc3_top_t        *ops;
    int               nops, ops_cap;
    int64_t          *snaps;
    size_t            nsnaps, snaps_cap;
    gc3_status_t      err;
    char              errmsg[512];
};

/* In-place aliasing (the same rules as the verifier): the buffer and index that really hold
 * chunk (buf, idx) of `rank`. */
void gc3_prog_canon(const gc3_prog_t *prog, int rank, int *buf, int *idx);

#endif
