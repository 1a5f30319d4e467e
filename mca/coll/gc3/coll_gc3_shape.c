/* coll/gc3: the shape of a communicator (the SHAPE phase of its set-up, coll_gc3_setup.c): every
 * rank says which host and GPU it is on (libgpuir's probe, gc3_topo.h), what its executor holds and
 * the hash of its selection settings; from everybody's cards every rank computes the same nodes,
 * ranks per node, link class and thread-block budget, and whether the settings agree. libgpuir
 * probes; this file applies gc3's policy (GPUs shared without MPS, coll_gc3_max_blocks,
 * pseudo-nodes). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "coll_gc3.h"
#include "gc3_topo.h"
#include "opal/util/output.h"

/* what every rank says about itself before the first plan of a backend */
typedef struct {
    gc3_gpu_seat_t seat; /* host; cuda: this rank's GPU (device -1: none), the blocks its executor holds */
    int32_t        exec_ok;
    int32_t        net_why;  /* gc3_net_reason_t: the inter-node path this rank can take */
    uint64_t       settings; /* mca_coll_gc3_settings_hash */
} gc3_shape_card_t;

/* coll_gc3_wait_default_stream as the runtime's gc3_wait_legacy_t (true: the measured best) */
static int mca_coll_gc3_wait_legacy(void)
{
    switch (mca_coll_gc3_component.wait_default_stream) {
    case MCA_COLL_GC3_WAIT_FALSE:
        return GC3_WAIT_LEGACY_OFF;
    case MCA_COLL_GC3_WAIT_DEVICE:
        return GC3_WAIT_LEGACY_DEVICE;
    default:
        return GC3_WAIT_LEGACY_HOST;
    }
}

static void gc3_exec_params(mca_coll_gc3_module_t *m, gc3_backend_t backend, gc3_exec_params_t *ep)
{
    gc3_exec_params_default(ep, backend, ompi_comm_rank(m->comm), ompi_comm_size(m->comm));
    ep->node            = m->nodes > 1 ? m->node : NULL;
    ep->net_peer_errors = mca_coll_gc3_component.net_peer_errors;
    ep->net_direct      = m->net_direct[backend];
    ep->oob.ctx         = m;
    ep->oob.iallgather  = mca_coll_gc3_oob_iallgather;
    ep->oob.test        = mca_coll_gc3_oob_test;
    ep->timeout_s       = mca_coll_gc3_component.timeout;
    ep->resident_us     = mca_coll_gc3_component.resident_us;
    ep->yield_us        = mca_coll_gc3_component.yield_us;
    ep->fuse            = mca_coll_gc3_component.fuse;
    ep->wait_legacy     = mca_coll_gc3_wait_legacy();
    ep->breakdown       = mca_coll_gc3_component.breakdown;
    ep->slots           = mca_coll_gc3_component.fifo_slots;
    ep->device          = m->device >= 0 ? m->device : 0;
    ep->fifo_bytes      = (uint64_t)mca_coll_gc3_component.plan_fifo_bytes;
    ep->zc_fifo_bytes   = (uint64_t)mca_coll_gc3_component.zero_copy_fifo_bytes;
    ep->fifo_pool       = mca_coll_gc3_component.fifo_pool;
    ep->relabel         = mca_coll_gc3_component.relabel;
    ep->zero_copy       = mca_coll_gc3_component.zero_copy == MCA_COLL_GC3_ZC_ON ||
                    (mca_coll_gc3_component.zero_copy == MCA_COLL_GC3_ZC_AUTO && backend == GC3_BACKEND_CUDA);
    ep->reg_entries = mca_coll_gc3_component.reg_cache;
    ep->zc_pull     = !mca_coll_gc3_component.zero_copy_push;
    ep->tile_bytes  = (uint64_t)mca_coll_gc3_component.tile_bytes;
    if (mca_coll_gc3_component.slot_bytes > 0) {
        ep->slot_bytes = (size_t)mca_coll_gc3_component.slot_bytes;
    }
}

/* The inter-node path this rank can take. UCX is asked (once per process) only where its answer
 * matters: the cuda backend, unless the host-staged path is forced. */
static gc3_net_reason_t gc3_shape_net_can(gc3_backend_t backend)
{
    gc3_net_path_t asked = (gc3_net_path_t)mca_coll_gc3_component.net_path;
    int            ucx   = !gc3_exec_net_available()                                     ? -1
                           : backend == GC3_BACKEND_CUDA && asked != GC3_NET_PATH_STAGED ? gc3_exec_net_cuda_memory()
                                                                                         : 0;
    return gc3_net_path_choose(asked, backend, ucx);
}

/* The path between nodes, the same on every rank: direct only when every rank can take it; the
 * reason is the first rank's that cannot (or rank 0's). A rank that asked for GPUDirect and does
 * not get it says so at level 0. */
static void gc3_shape_net_path(mca_coll_gc3_module_t *m, gc3_backend_t backend, const gc3_shape_card_t *all, int n)
{
    int who = 0, same = 1;
    for (int r = 0; r < n; r++) {
        same = same && all[r].net_why == all[0].net_why;
        if (!GC3_NET_REASON_DIRECT(all[r].net_why) && GC3_NET_REASON_DIRECT(all[who].net_why)) {
            who = r;
        }
    }
    m->net_direct[backend] = GC3_NET_REASON_DIRECT(all[who].net_why);
    const char *path = m->net_direct[backend] ? (backend == GC3_BACKEND_CUDA ? "GPUDirect" : "direct") : "host-staged";
    const char *why  = gc3_net_path_reason((gc3_net_reason_t)all[who].net_why);
    if (same) {
        gc3_snprintf_cut(m->net_why[backend], sizeof(m->net_why[0]), "%s path: %s", path, why);
    } else {
        gc3_snprintf_cut(m->net_why[backend], sizeof(m->net_why[0]), "%s path: rank %d: %s", path, who, why);
    }
    if (mca_coll_gc3_component.net_path == GC3_NET_PATH_GPUDIRECT && !m->net_direct[backend]) {
        opal_output(0,
                    "coll:gc3: comm %s rank %d: coll_gc3_net_path=gpudirect not possible (%s): the connections "
                    "between nodes are host-staged",
                    m->comm->c_name, ompi_comm_rank(m->comm), m->net_why[backend]);
    }
}

/* This rank's card: its host and GPU, and an executor made (the one of the plans when all ranks
 * are on one node; node numbers come with the shape). Local: the first call on device buffers is
 * the first time gc3 asks CUDA anything, in the thread that made it. */
int mca_coll_gc3_shape_post(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    gc3_shape_card_t *c = calloc(1, sizeof(*c));
    gc3_exec_params_t ep;

    m->setup.xsend = (char *)c;
    if (c == NULL) {
        return mca_coll_gc3_agree_post(m, sizeof(*c));
    }
    gc3_gpu_info_t gpu = { .device = -1 };

    if (backend == GC3_BACKEND_CUDA) {
        (void)gc3_gpu_probe(-1, &gpu, &m->setup.diag); /* the calling thread's GPU (a cuda backend has one) */
        m->device  = gpu.device;
        m->gpu_mem = gpu.mem_bytes;
    }
    gc3_exec_params(m, backend, &ep);
    c->exec_ok = gc3_exec_create(&ep, &m->setup.diag, &m->exec[backend]) == GC3_OK;
    if (!c->exec_ok) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: no %s executor: %s", m->comm->c_name,
                            backend == GC3_BACKEND_CUDA ? "cuda" : "host",
                            m->setup.diag.count ? m->setup.diag.msgs[0] : "?");
    }
    /* (the query failed: no limit here; a plan that does not fit is still refused when it runs) */
    gc3_gpu_seat(&c->seat, &gpu, c->exec_ok ? gc3_exec_max_blocks(m->exec[backend]) : 0);
    c->settings   = mca_coll_gc3_settings_hash();
    c->net_why    = (int32_t)gc3_shape_net_can(backend);
    return mca_coll_gc3_agree_post(m, sizeof(*c));
}

/* Nodes (distinct host names; with coll_gc3_pseudo_nodes=K, groups of K consecutive ranks of a host),
 * numbered in order of first appearance, and ranks per node. */
static void gc3_shape_nodes(mca_coll_gc3_module_t *m, const gc3_shape_card_t *all, int n)
{
    int  K = mca_coll_gc3_component.pseudo_nodes, nodes = 0, most = 0;
    int *host = malloc((size_t)n * sizeof(int)), *local = malloc((size_t)n * sizeof(int));
    int *size = calloc((size_t)n, sizeof(int));

    free(m->node);
    m->node    = calloc((size_t)n, sizeof(int));
    m->nodes   = 1;
    m->gpus    = n;
    m->regular = 1;
    if (host == NULL || local == NULL || size == NULL || m->node == NULL) {
        free(m->node);
        m->node = NULL;
    } else {
        for (int r = 0; r < n; r++) {
            host[r]  = r;
            local[r] = 0;
            for (int q = 0; q < r; q++) {
                if (strncmp(all[q].seat.host, all[r].seat.host, sizeof(all[q].seat.host)) == 0) {
                    host[r] = host[q];
                    local[r]++;
                }
            }
        }
        for (int r = 0; r < n; r++) {
            int id = -1;
            for (int q = 0; q < r && id < 0; q++) {
                if (host[q] == host[r] && (K <= 0 || local[q] / K == local[r] / K)) {
                    id = m->node[q];
                }
            }
            m->node[r] = id >= 0 ? id : nodes++;
            most       = ++size[m->node[r]] > most ? size[m->node[r]] : most;
        }
        for (int r = 0; r < n; r++) {
            m->regular = m->regular && size[m->node[r]] == most && m->node[r] == r / most;
        }
        m->nodes = nodes;
        m->gpus  = most;
    }
    free(host);
    free(local);
    free(size);
}

/* How many thread blocks per rank a plan may have, the same on every rank (gc3_gpu_budget over the
 * ranks' seats on GPUs; none on the host backend): on GPUs what each one holds at once divided among the
 * ranks that use it, within coll_gc3_max_blocks. 1 (refused) when ranks share a GPU without MPS and
 * coll_gc3_shared_gpu is false. */
static int gc3_shape_budget(mca_coll_gc3_module_t *m, gc3_backend_t backend, const gc3_gpu_seat_t *seats, int n)
{
    gc3_gpu_budget_t b;

    gc3_gpu_budget(seats, n, mca_coll_gc3_component.max_blocks, mca_coll_gc3_component.shared_gpu, &b);
    if (b.refused) {
        const gc3_gpu_seat_t *s = &seats[b.first];
        gc3_snprintf_cut(m->exec_why[backend], sizeof(m->exec_why[0]), "ranks %d and %d share GPU %s without MPS",
                         b.first, b.second, s->gpu.pci);
        mca_coll_gc3_verbose_once(1, m->comm,
                                  "coll:gc3: comm %s: ranks %d and %d share GPU %s of %s without MPS: their "
                                  "kernels would take turns on it (milliseconds a call), so gc3 does not run "
                                  "on this communicator's device buffers: they are staged through host "
                                  "memory. Start the MPS daemon (nvidia-cuda-mps-control -d) or set "
                                  "coll_gc3_shared_gpu to run gc3 there",
                                  m->comm->c_name, b.first, b.second, s->gpu.pci, s->host);
    }
    m->gpu_share             = backend == GC3_BACKEND_CUDA ? b.gpus : m->gpu_share;
    m->block_budget[backend] = b.budget;
    if (b.budget == INT_MAX) {
        mca_coll_gc3_verbose_once(2, m->comm, "coll:gc3: comm %s: plans of any number of thread blocks per rank",
                                  m->comm->c_name);
    } else {
        mca_coll_gc3_verbose_once(2, m->comm, "coll:gc3: comm %s: plans of at most %d thread block%s per rank",
                                  m->comm->c_name, b.budget, b.budget == 1 ? "" : "s");
    }
    return b.refused;
}

/* The algorithm directory's programs this communicator cannot run, at verbose 1: a program is
 * written for one rank count. */
static void gc3_shape_say_skipped(mca_coll_gc3_module_t *m)
{
    const gc3_rules_t *R = mca_coll_gc3_rules();
    const int          n = ompi_comm_size(m->comm);

    for (int i = 0; R != NULL && i < R->n && mca_coll_gc3_component.verbose >= 1; i++) {
        const gc3_rule_t *r = &R->rules[i];
        if (r->xml != NULL && r->ranks != n) {
            mca_coll_gc3_verbose_once(1, m->comm,
                                      "coll:gc3: comm %s: algorithm directory program %s skipped: "
                                      "written for %d ranks, the communicator has %d",
                                      m->comm->c_name, r->xml, r->ranks, n);
        }
    }
}

/* Every rank's card is here: the same decisions everywhere. */
void mca_coll_gc3_shape_done(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    int                     n = ompi_comm_size(m->comm), ok = 1;
    const gc3_shape_card_t *all = (const gc3_shape_card_t *)m->setup.xrecv, *mine = &all[ompi_comm_rank(m->comm)];
    const int               gpus  = backend == GC3_BACKEND_CUDA ? n : 0; /* the seats on GPUs */
    gc3_gpu_seat_t         *seats = malloc((size_t)(gpus > 0 ? gpus : 1) * sizeof(*seats));

    if (seats == NULL) {
        gc3_snprintf_cut(m->exec_why[backend], sizeof(m->exec_why[0]), "out of memory");
        m->exec_state[backend] = MCA_COLL_GC3_EXEC_UNUSABLE;
        return;
    }
    for (int r = 0; r < gpus; r++) {
        seats[r] = all[r].seat;
    }

    for (int r = 0; r < n && ok; r++) {
        if (all[r].settings != mine->settings) {
            mca_coll_gc3_warn_disagree(
                m, "the selection settings (rules file, algorithm directory or coll_gc3 parameters)", r);
            gc3_snprintf_cut(m->exec_why[backend], sizeof(m->exec_why[0]), "the ranks' selection settings differ");
            ok = 0;
        } else if (!all[r].exec_ok) {
            gc3_snprintf_cut(m->exec_why[backend], sizeof(m->exec_why[0]), "rank %d has no %s executor", r,
                             backend == GC3_BACKEND_CUDA ? "cuda" : "host");
            ok = 0;
        }
    }
    gc3_shape_nodes(m, all, n);
    m->net_direct[backend] = 0;
    m->net_why[backend][0] = '\0';
    if (m->nodes > 1) {
        gc3_shape_net_path(m, backend, all, n);
    }
    m->link[backend] = backend == GC3_BACKEND_CUDA ? gc3_gpu_seats_link(seats, gpus) : GC3_LINK_HOST;
    /* the NIC matters between nodes (the inter-node transport uses it); hwloc's I/O scan costs
     * tens of milliseconds once per process, so only then or when asked to tell */
    if (backend == GC3_BACKEND_CUDA && (m->nodes > 1 || mca_coll_gc3_component.verbose >= 2)) {
        gc3_gpu_nearest_nic(m->device, m->nic, sizeof(m->nic));
    }
    mca_coll_gc3_verbose_once(2, m->comm, "coll:gc3: comm %s: %d node%s, up to %d rank%s per node, %s%s%s",
                              m->comm->c_name, m->nodes, m->nodes == 1 ? "" : "s", m->gpus, m->gpus == 1 ? "" : "s",
                              gc3_link_name(m->link[backend]), m->nic[0] ? "; nearest NIC " : "", m->nic);
    gc3_shape_say_skipped(m);
    if (gc3_shape_budget(m, backend, seats, gpus)) {
        ok = 0;
    }
    free(seats);
    if (ok && m->nodes > 1 && m->exec[backend] != NULL) {
        /* the plans' executor knows the nodes (a rank that cannot make it says so at its first plan) */
        gc3_exec_params_t ep;
        gc3_exec_destroy(m->exec[backend]);
        m->exec[backend] = NULL;
        gc3_exec_params(m, backend, &ep);
        (void)gc3_exec_create(&ep, &m->setup.diag, &m->exec[backend]);
    }
    m->exec_state[backend] = ok ? MCA_COLL_GC3_EXEC_READY : MCA_COLL_GC3_EXEC_UNUSABLE;
}
