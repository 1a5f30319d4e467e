/* gc3 / libgpuir: what each collective is (gc3_coll_desc_t, gc3_ir.h): the one table, and what
 * follows from it (names, segments, the elements of a call's chunks). */
#include <stdio.h>
#include <string.h>
#include "gc3_ir.h"

/* What each collective is (gc3_ir.h): the one table. */
/* clang-format off */
static const gc3_coll_desc_t gc3_colls[GC3_COLL_COUNT] = {
    /*  coll                     name              mpi_name                aliases
        in_per_rank, out_per_rank, reduces, builtin_post, inplace_inner, inplace_slice, rooted, root_buf,
        prefix, v_name */
    [GC3_COLL_ALLREDUCE]      = {GC3_COLL_ALLREDUCE, "allreduce", "allreduce", {NULL},
                                 0, 0, 1, 1, GC3_BUF_OUTPUT, 0, 0, GC3_BUF_NONE, 0},
    [GC3_COLL_ALLTOALL]       = {GC3_COLL_ALLTOALL, "alltoall", "alltoall", {NULL},
                                 1, 1, 0, 1, GC3_BUF_OUTPUT, 0, 0, GC3_BUF_NONE, 0, "alltoallv"},
    [GC3_COLL_ALLGATHER]      = {GC3_COLL_ALLGATHER, "allgather", "allgather", {NULL},
                                 0, 1, 0, 1, GC3_BUF_INPUT, 1, 0, GC3_BUF_NONE, 0, "allgatherv"},
    [GC3_COLL_REDUCE_SCATTER] = {GC3_COLL_REDUCE_SCATTER, "reduce_scatter", "reduce_scatter_block",
                                 {"reducescatter", "reduce-scatter", NULL},
                                 1, 0, 1, 1, GC3_BUF_OUTPUT, 1, 0, GC3_BUF_NONE, 0, "reduce_scatter"},
    /* MSCCL's and SCCL's readers spell them "broadcast" and "reduce"; NCCL/RCCL's "Broadcast" */
    [GC3_COLL_BCAST]          = {GC3_COLL_BCAST, "bcast", "bcast", {"broadcast", "Broadcast", NULL},
                                 0, 0, 0, 1, GC3_BUF_INPUT, 0, 1, GC3_BUF_INPUT, 0},
    [GC3_COLL_REDUCE]         = {GC3_COLL_REDUCE, "reduce", "reduce", {"Reduce", NULL},
                                 0, 0, 1, 1, GC3_BUF_OUTPUT, 0, 1, GC3_BUF_OUTPUT, 0},
    /* in place at the root: its input is its segment of the output (gather), its output its segment of
       the input (scatter) */
    [GC3_COLL_GATHER]         = {GC3_COLL_GATHER, "gather", "gather", {"Gather", NULL},
                                 0, 1, 0, 1, GC3_BUF_INPUT, 1, 1, GC3_BUF_OUTPUT, 0, "gatherv"},
    [GC3_COLL_SCATTER]        = {GC3_COLL_SCATTER, "scatter", "scatter", {"Scatter", NULL},
                                 1, 0, 0, 1, GC3_BUF_OUTPUT, 1, 1, GC3_BUF_INPUT, 0, "scatterv"},
    /* in place as allreduce: the input is the output */
    [GC3_COLL_SCAN]           = {GC3_COLL_SCAN, "scan", "scan", {"Scan", NULL},
                                 0, 0, 1, 1, GC3_BUF_OUTPUT, 0, 0, GC3_BUF_NONE, 1},
    [GC3_COLL_EXSCAN]         = {GC3_COLL_EXSCAN, "exscan", "exscan", {"Exscan", NULL},
                                 0, 0, 1, 1, GC3_BUF_OUTPUT, 0, 0, GC3_BUF_NONE, 2},
    [GC3_COLL_CUSTOM]         = {GC3_COLL_CUSTOM, "custom", "custom", {NULL},
                                 0, 0, 0, 0, GC3_BUF_OUTPUT, 0, 0, GC3_BUF_NONE, 0},
};
/* clang-format on */

const gc3_coll_desc_t *gc3_coll_desc(gc3_coll_t coll)
{
    return &gc3_colls[(unsigned)coll < GC3_COLL_COUNT ? coll : GC3_COLL_CUSTOM];
}

const char *gc3_coll_name(gc3_coll_t coll)
{
    return ((unsigned)coll < GC3_COLL_COUNT) ? gc3_colls[coll].name : "?";
}

unsigned gc3_coll_access(gc3_coll_t coll, int root, int rank, gc3_buf_t buf)
{
    const gc3_coll_desc_t *d = gc3_coll_desc(coll);

    if (!d->rooted || rank == root || buf == GC3_BUF_SCRATCH) {
        return GC3_COLL_ACC_READ | GC3_COLL_ACC_WRITE;
    }
    if (buf == d->root_buf) { /* the root's only */
        return 0;
    }
    /* a non-root's one buffer: its input is read-only (reduce, gather), its output is its (bcast, scatter) */
    return buf == GC3_BUF_INPUT ? GC3_COLL_ACC_READ : GC3_COLL_ACC_READ | GC3_COLL_ACC_WRITE;
}

int gc3_coll_segments(gc3_coll_t coll, gc3_buf_t buf, int ngpus)
{
    const gc3_coll_desc_t *d = gc3_coll_desc(coll);
    return (buf == GC3_BUF_INPUT ? d->in_per_rank : d->out_per_rank) ? ngpus : 1;
}

uint64_t gc3_coll_call_bytes(gc3_coll_t coll, int ngpus, uint64_t seg_bytes)
{
    const int in = gc3_coll_segments(coll, GC3_BUF_INPUT, ngpus), out = gc3_coll_segments(coll, GC3_BUF_OUTPUT, ngpus);
    return seg_bytes * (uint64_t)(in > out ? in : out);
}

size_t gc3_coll_segs_words(gc3_coll_t coll, int ngpus)
{
    if (coll == GC3_COLL_CUSTOM || ngpus <= 0) {
        return 0;
    }
    return 1 +
           2 * (size_t)(gc3_coll_segments(coll, GC3_BUF_INPUT, ngpus) + gc3_coll_segments(coll, GC3_BUF_OUTPUT, ngpus));
}

int gc3_coll_segment_chunks(gc3_coll_t coll, int nchunksperloop, int ngpus)
{
    const gc3_coll_desc_t *d    = gc3_coll_desc(coll);
    const int              segs = d->in_per_rank || d->out_per_rank ? ngpus : 1;
    return segs > 0 && nchunksperloop % segs == 0 ? nchunksperloop / segs : 0;
}

gc3_status_t gc3_coll_from_name(const char *name, gc3_coll_t *coll_p)
{
    /* gc3's names, MPI's names of the calls and the spellings seen in MSCCL/RCCL files */
    for (int i = 0; i < GC3_COLL_CUSTOM; i++) {
        const gc3_coll_desc_t *d = &gc3_colls[i];
        int                    match = strcmp(name, d->name) == 0 || strcmp(name, d->mpi_name) == 0;
        for (int a = 0; !match && d->aliases[a] != NULL; a++) {
            match = strcmp(name, d->aliases[a]) == 0;
        }
        if (match) {
            *coll_p = (gc3_coll_t)i;
            return GC3_OK;
        }
    }
    *coll_p = GC3_COLL_CUSTOM;
    return GC3_ERR_UNSUPPORTED;
}

gc3_status_t gc3_coll_from_call_name(const char *name, gc3_coll_t *coll_p, int *v_p)
{
    *v_p = 0;
    if (gc3_coll_from_name(name, coll_p) == GC3_OK) {
        return GC3_OK;
    }
    for (int i = 0; i < GC3_COLL_CUSTOM; i++) {
        if (gc3_colls[i].v_name != NULL && strcmp(name, gc3_colls[i].v_name) == 0) {
            *coll_p = (gc3_coll_t)i;
            *v_p    = 1;
            return GC3_OK;
        }
    }
    return GC3_ERR_UNSUPPORTED;
}

void gc3_coll_mpi_names(char *buf, size_t len)
{
    size_t used = 0;

    if (len == 0) {
        return;
    }
    buf[0] = '\0';
    for (int i = 0; i < GC3_COLL_CUSTOM && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", gc3_colls[i].mpi_name);
        used += n > 0 ? (size_t)n : 0;
    }
}

gc3_status_t gc3_coll_chunk_elems(const gc3_ir_program_t *p, uint64_t count, uint64_t *chunk_elems_p)
{
    const gc3_coll_desc_t *d = gc3_coll_desc(p->coll);
    uint64_t               total = count;

    if (d->in_per_rank || d->out_per_rank) { /* count is one segment: ngpus of them */
        if (count > UINT64_MAX / (uint64_t)p->ngpus) {
            return GC3_ERR_INVALID_PARAM;
        }
        total = count * (uint64_t)p->ngpus;
    }
    if (total % (uint64_t)p->nchunksperloop != 0) {
        return GC3_ERR_UNSUPPORTED;
    }
    *chunk_elems_p = total / (uint64_t)p->nchunksperloop;
    return GC3_OK;
}
