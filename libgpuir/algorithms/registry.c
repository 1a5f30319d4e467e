/* gc3 algorithm library: the table of generators and what they share. */
#include <string.h>
#include "gc3_algorithms.h"

static const gc3_algo_t gc3_algos[] = {
    { "ring", GC3_COLL_ALLREDUCE, NULL,
      "allreduce: one logical ring (reduce-scatter then allgather) over --channels channels", 0,
      GC3_ALGO_TAKES_CHANNELS, gc3_algo_allreduce_ring },
    { "allpairs", GC3_COLL_ALLREDUCE, NULL,
      "allreduce: every rank reduces its chunk from all others, then sends it to all (small sizes, LL); "
      "--chunks-per-peer K: K chunks per rank",
      0, GC3_ALGO_TAKES_CHUNKS, gc3_algo_allreduce_allpairs },
    { "oneshot", GC3_COLL_ALLREDUCE, NULL,
      "allreduce: every rank sends its whole buffer to all others and reduces them itself (one step: smallest sizes, "
      "LL)",
      0, 0, gc3_algo_allreduce_oneshot },
    { "hierarchical", GC3_COLL_ALLREDUCE, NULL,
      "allreduce on N nodes x G GPUs: intra-node reduce-scatter, inter-node reduce-scatter and allgather, intra-node "
      "allgather",
      1, 0, gc3_algo_allreduce_hierarchical },
    { "rhd", GC3_COLL_ALLREDUCE, NULL,
      "allreduce: recursive halving (reduce-scatter) and doubling (allgather); extra ranks fold in", 0, 0,
      gc3_algo_allreduce_rhd },
    { "direct", GC3_COLL_ALLTOALL, NULL, "alltoall: every pair exchanges its chunks directly", 0, GC3_ALGO_TAKES_CHUNKS,
      gc3_algo_alltoall_direct },
    { "twostep", GC3_COLL_ALLTOALL, NULL,
      "alltoall on N nodes x G GPUs: gather node-bound chunks over NVLink, one aggregated transfer per peer node", 1,
      GC3_ALGO_TAKES_CHUNKS, gc3_algo_alltoall_twostep },
    { "allgather_ring", GC3_COLL_ALLGATHER, NULL, "allgather: ring", 0, 0, gc3_algo_allgather_ring },
    { "reduce_scatter_ring", GC3_COLL_REDUCE_SCATTER, NULL,
      "reduce_scatter: ring, over --channels channels (each a ring on its part of every chunk)", 0,
      GC3_ALGO_TAKES_CHANNELS, gc3_algo_reduce_scatter_ring },
    { "reduce_scatter_direct", GC3_COLL_REDUCE_SCATTER, NULL,
      "reduce_scatter: every rank sends each other rank its chunk, which reduces them (one step); --chunks-per-peer K; "
      "--channels N",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_reduce_scatter_direct },
    { "bcast_direct", GC3_COLL_BCAST, NULL,
      "bcast: the root sends its buffer to every other rank (one step: small sizes, LL); --chunks-per-peer K: K "
      "chunks; --root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_bcast_direct },
    { "bcast_ring", GC3_COLL_BCAST, NULL,
      "bcast: a pipelined chain root -> root+1 -> ... (channels x chunks-per-peer x ngpus chunks: large sizes, "
      "Simple); --root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_bcast_ring },
    { "reduce_direct", GC3_COLL_REDUCE, NULL,
      "reduce: every rank sends its buffer to the root, which reduces them (one step: small sizes, LL); "
      "--chunks-per-peer K; --root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_reduce_direct },
    { "reduce_ring", GC3_COLL_REDUCE, NULL,
      "reduce: a pipelined chain root+1 -> ... -> root, rrs on the way, rrc at the root (large sizes, Simple); --root "
      "R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_reduce_ring },
    { "gather_direct", GC3_COLL_GATHER, NULL,
      "gather: every rank sends its block straight to the root (all-to-all links: any size; LL small); "
      "--chunks-per-peer K; --channels N; --root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_gather_direct },
    { "gather_ring", GC3_COLL_GATHER, NULL,
      "gather: a pipelined chain root+1 -> ... -> root, blocks forwarded in scratch (rings, PCIe trees; Simple); "
      "--root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_gather_ring },
    { "scatter_direct", GC3_COLL_SCATTER, NULL,
      "scatter: the root sends every rank its block straight (all-to-all links: any size; LL small); --chunks-per-peer "
      "K; --channels N; --root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_scatter_direct },
    { "scatter_ring", GC3_COLL_SCATTER, NULL,
      "scatter: a pipelined chain root -> root+1 -> ..., blocks forwarded in scratch (rings, PCIe trees; Simple); "
      "--root R",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_scatter_ring },
    { "scan_direct", GC3_COLL_SCAN, NULL,
      "scan: every rank sends its buffer to every rank after it, which reduces what it gets (one step: small sizes, "
      "LL); --chunks-per-peer K",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_scan_direct },
    { "scan_ring", GC3_COLL_SCAN, NULL,
      "scan: a pipelined chain 0 -> 1 -> ... carrying the running prefix (channels x chunks-per-peer chunks: large "
      "sizes, Simple)",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_scan_ring },
    { "scan_doubling", GC3_COLL_SCAN, NULL,
      "scan: recursive doubling, ceil(log2(ranks)) rounds, each rank reducing the prefix of the rank 2^k before it "
      "(channels x chunks-per-peer chunks)",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_scan_doubling },
    { "scan_sliced", GC3_COLL_SCAN, NULL,
      "scan: rank p carries slice p of the buffer's prefix through the ranks and sends each rank its prefix (every "
      "rank 1/R of the work; chunks_per_peer chunks a slice, on channel chunk mod channels: fewer a channel than FIFO "
      "slots)",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_scan_sliced },
    { "exscan_direct", GC3_COLL_EXSCAN, NULL,
      "exscan: every rank sends its buffer to every rank after it, which reduces what it gets (one step: small sizes, "
      "LL); --chunks-per-peer K",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_exscan_direct },
    { "exscan_ring", GC3_COLL_EXSCAN, NULL,
      "exscan: a pipelined chain 0 -> 1 -> ... carrying the running prefix (channels x chunks-per-peer chunks: large "
      "sizes, Simple)",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_exscan_ring },
    { "exscan_sliced", GC3_COLL_EXSCAN, NULL,
      "exscan: rank p carries slice p of the buffer's prefix through the ranks and sends each rank the prefix before "
      "it (every rank 1/R of the work; chunks_per_peer chunks a slice, on channel chunk mod channels: fewer a "
      "channel than FIFO slots)",
      0, GC3_ALGO_TAKES_CHANNELS | GC3_ALGO_TAKES_CHUNKS, gc3_algo_exscan_sliced },
    { "alltonext", GC3_COLL_CUSTOM, "alltonext",
      "custom: rank i sends its buffer to i+1; between nodes the transfer is split over all GPUs of the node", 1, 0,
      gc3_algo_alltonext },
};

void gc3_algo_params_default(gc3_algo_params_t *p, int nranks)
{
    memset(p, 0, sizeof(*p));
    p->nranks          = nranks;
    p->nodes           = 1;
    p->gpus_per_node   = nranks;
    p->instances       = 1;
    p->channels        = 1;
    p->chunks_per_peer = 1;
    p->proto           = GC3_PROTO_SIMPLE;
    p->root            = 0;
    p->slots           = GC3_FIFO_SLOTS_DEFAULT;
    p->verify          = 1;
}

int gc3_algo_count(void)
{
    return (int)(sizeof(gc3_algos) / sizeof(gc3_algos[0]));
}

const gc3_algo_t *gc3_algo_at(int i)
{
    return (i >= 0 && i < gc3_algo_count()) ? &gc3_algos[i] : NULL;
}

const gc3_algo_t *gc3_algo_find(const char *name)
{
    for (int i = 0; i < gc3_algo_count(); i++) {
        if (strcmp(gc3_algos[i].name, name) == 0) {
            return &gc3_algos[i];
        }
    }
    return NULL;
}

const char *gc3_algo_unread(const gc3_algo_t *a, int channels, int chunks_per_peer)
{
    if (a == NULL) {
        return NULL;
    }
    if (channels != 1 && !(a->takes & GC3_ALGO_TAKES_CHANNELS)) {
        return "channels";
    }
    if (chunks_per_peer != 1 && !(a->takes & GC3_ALGO_TAKES_CHUNKS)) {
        return "chunks_per_peer";
    }
    return NULL;
}

unsigned gc3_algo_keep_taken(const gc3_algo_t *a, gc3_algo_params_t *params)
{
    unsigned dropped = 0;
    if (a != NULL && params->channels != 1 && !(a->takes & GC3_ALGO_TAKES_CHANNELS)) {
        params->channels = 1;
        dropped |= GC3_ALGO_TAKES_CHANNELS;
    }
    if (a != NULL && params->chunks_per_peer != 1 && !(a->takes & GC3_ALGO_TAKES_CHUNKS)) {
        params->chunks_per_peer = 1;
        dropped |= GC3_ALGO_TAKES_CHUNKS;
    }
    return dropped;
}

gc3_status_t gc3_algo_generate(const char *name, const gc3_algo_params_t *params, gc3_diag_t *diag,
                               gc3_compile_stats_t *stats, gc3_ir_program_t **program_p)
{
    const gc3_algo_t *a = gc3_algo_find(name);
    const char       *unread;

    *program_p = NULL;
    if (a == NULL) {
        gc3_diag_add(diag, "unknown algorithm '%s'", name);
        return GC3_ERR_INVALID_PARAM;
    }
    if (params->nranks < (gc3_coll_desc(a->coll)->rooted ? 1 : 2) || params->instances < 1 || params->instances > 64 || params->channels < 1 ||
        params->channels > 64 || params->chunks_per_peer < 1 || params->chunks_per_peer > 1024 || params->slots < 1) {
        gc3_diag_add(diag, "%s: needs at least 2 ranks, instances and channels in [1, 64], chunks per peer in "
                     "[1, 1024] and slots >= 1 (got ranks %d, instances %d, channels %d, chunks per peer %d, slots %d)",
                     name, params->nranks, params->instances, params->channels, params->chunks_per_peer, params->slots);
        return GC3_ERR_INVALID_PARAM;
    }
    if ((unread = gc3_algo_unread(a, params->channels, params->chunks_per_peer)) != NULL) {
        gc3_diag_add(diag, "%s: does not take %s (gc3c list says what each generator takes)", name, unread);
        return GC3_ERR_INVALID_PARAM;
    }
    if (gc3_coll_desc(a->coll)->rooted && (params->root < 0 || params->root >= params->nranks)) {
        gc3_diag_add(diag, "%s: root %d is not a rank of %d (0 to %d)", name, params->root, params->nranks,
                     params->nranks - 1);
        return GC3_ERR_INVALID_PARAM;
    }
    if (a->uses_nodes && gc3_algo_check_shape(params, name, diag) != GC3_OK) {
        return GC3_ERR_INVALID_PARAM;
    }
    return a->generate(params, diag, stats, program_p);
}

gc3_status_t gc3_algo_generate_fit(const char *name, gc3_algo_params_t *params, int max_blocks, gc3_diag_t *diag,
                                   gc3_ir_program_t **program_p, int *narrowed_p)
{
    gc3_status_t st;
    int          first = -1;

    *narrowed_p = 0;
    for (;;) {
        int widest;
        if ((st = gc3_algo_generate(name, params, diag, NULL, program_p)) != GC3_OK) {
            return st;
        }
        widest = gc3_ir_widest_rank(*program_p);
        first  = first < 0 ? widest : first;
        if (widest <= max_blocks) {
            return GC3_OK;
        }
        gc3_ir_program_destroy(*program_p);
        *program_p = NULL;
        if (params->instances == 1 && params->channels == 1) {
            gc3_diag_add(diag, "%s: %d thread blocks per rank at its narrowest (%d as asked), at most %d can run at once",
                         name, widest, first, max_blocks);
            return GC3_ERR_UNSUPPORTED;
        }
        *narrowed_p = 1;
        if (params->instances > 1) {
            params->instances /= 2;
        } else {
            params->channels /= 2;
        }
    }
}

gc3_status_t gc3_algo_check_shape(const gc3_algo_params_t *p, const char *name, gc3_diag_t *diag)
{
    if (p->nodes < 1 || p->gpus_per_node < 1 || p->nodes * p->gpus_per_node != p->nranks) {
        gc3_diag_add(diag, "%s: %d nodes x %d GPUs per node is not %d ranks", name, p->nodes, p->gpus_per_node,
                     p->nranks);
        return GC3_ERR_INVALID_PARAM;
    }
    return GC3_OK;
}

static gc3_status_t gc3_algo_begin_any(const gc3_algo_params_t *params, const char *name, gc3_coll_t coll,
                                       const char *coll_name, const uint32_t *const *const *post_cells, int in_chunks,
                                       int out_chunks, int nchunksperloop, gc3_diag_t *diag, gc3_prog_t **prog_p)
{
    gc3_prog_params_t pp;
    gc3_status_t      status;
    char              full[128];

    gc3_prog_params_default(&pp);
    {
        const char *cn = coll_name ? coll_name : gc3_coll_name(coll);
        if (gc3_coll_desc(coll)->rooted) { /* a program per root */
            snprintf(full, sizeof(full), "%s%d_root%d", name, params->nranks, params->root); /* bcast_ring4_root1 */
        } else if (strncmp(name, cn, strlen(cn)) == 0) {
            snprintf(full, sizeof(full), "%s%d", name, params->nranks); /* allgather_ring4, alltonext4 */
        } else {
            snprintf(full, sizeof(full), "%s_%s%d", cn, name, params->nranks); /* allreduce_ring4 */
        }
    }
    pp.name           = full;
    pp.coll           = coll;
    pp.coll_name      = coll_name;
    pp.root           = gc3_coll_desc(coll)->rooted ? params->root : -1;
    pp.post_cells     = post_cells;
    pp.nranks         = params->nranks;
    pp.in_chunks      = in_chunks;
    pp.out_chunks     = out_chunks;
    pp.nchunksperloop = nchunksperloop;
    pp.inplace        = params->inplace;
    pp.proto          = params->proto;
    pp.instances      = params->instances;
    pp.slots          = params->slots;
    pp.verify         = params->verify;
    status            = gc3_prog_create(&pp, prog_p);
    if (status != GC3_OK) {
        gc3_diag_add(diag, "%s: cannot create the program (%s)", name, gc3_status_string(status));
    }
    return status;
}

gc3_status_t gc3_algo_begin(const gc3_algo_params_t *params, const char *name, gc3_coll_t coll, int in_chunks,
                            int out_chunks, int nchunksperloop, gc3_diag_t *diag, gc3_prog_t **prog_p)
{
    return gc3_algo_begin_any(params, name, coll, NULL, NULL, in_chunks, out_chunks, nchunksperloop, diag, prog_p);
}

gc3_status_t gc3_algo_begin_custom(const gc3_algo_params_t *params, const char *name, const char *coll_name,
                                   const uint32_t *const *const *post_cells, int in_chunks, int out_chunks,
                                   int nchunksperloop, gc3_diag_t *diag, gc3_prog_t **prog_p)
{
    return gc3_algo_begin_any(params, name, GC3_COLL_CUSTOM, coll_name, post_cells, in_chunks, out_chunks,
                              nchunksperloop, diag, prog_p);
}

gc3_status_t gc3_algo_finish(gc3_prog_t *prog, const char *name, gc3_diag_t *diag, gc3_compile_stats_t *stats,
                             gc3_ir_program_t **program_p)
{
    gc3_status_t status = gc3_prog_compile(prog, diag, stats, program_p);
    (void)name;
    gc3_prog_destroy(prog);
    return status;
}
