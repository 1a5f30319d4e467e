/* coll/gc3: the per-communicator module.
 *
 * Delegation as Open MPI's own interposing components do it: at enable, remember and retain the
 * previous module's function for every collective gc3 intercepts (a missing one makes that
 * call report MPI_ERR_NOT_SUPPORTED instead of crashing). Executors and plans are made lazily,
 * at the first call that needs them, never in comm_query. */
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include <time.h>
#include "coll_gc3.h"
#include "gc3_algorithms.h"
#include "gc3_verify.h"
#include "gc3_topo.h"
#include "opal/util/output.h"
#include "ompi/mca/coll/base/base.h"
#include "ompi/request/request.h"
#include "ompi/datatype/ompi_datatype.h"
#ifdef GC3_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

const char *const mca_coll_gc3_coll_names[MCA_COLL_GC3_NCOLL] = {"allreduce", "alltoall", "allgather",
                                                                  "reduce_scatter_block"};

static void mca_coll_gc3_module_construct(mca_coll_gc3_module_t *m)
{
    memset((char *)m + sizeof(m->super), 0, sizeof(*m) - sizeof(m->super));
    m->device = -1;
}

#define GC3_RELEASE_PREV(m, name)                     \
    do {                                              \
        if ((m)->prev_##name##_module != NULL) {      \
            OBJ_RELEASE((m)->prev_##name##_module);   \
            (m)->prev_##name##_module = NULL;         \
        }                                             \
    } while (0)

static void mca_coll_gc3_module_destruct(mca_coll_gc3_module_t *m)
{
    for (int i = 0; i < m->nslots; i++) {
        mca_coll_gc3_drain(m->slots[i].plan); /* no request may outlive its plan */
    }
    for (int i = 0; i < m->nslots; i++) {
        gc3_plan_destroy(m->slots[i].plan);
        gc3_ir_program_destroy(m->slots[i].program);
    }
    free(m->slots);
    for (int b = 0; b < MCA_COLL_GC3_NBACKEND; b++) {
        gc3_exec_destroy(m->exec[b]);
    }
    free(m->node);
    GC3_RELEASE_PREV(m, allreduce);
    GC3_RELEASE_PREV(m, alltoall);
    GC3_RELEASE_PREV(m, allgather);
    GC3_RELEASE_PREV(m, reduce_scatter_block);
    GC3_RELEASE_PREV(m, iallreduce);
    GC3_RELEASE_PREV(m, ialltoall);
    GC3_RELEASE_PREV(m, allreduce_init);
    GC3_RELEASE_PREV(m, alltoall_init);
    GC3_RELEASE_PREV(m, barrier);
    GC3_RELEASE_PREV(m, bcast);
    GC3_RELEASE_PREV(m, reduce);
    GC3_RELEASE_PREV(m, allgatherv);
    GC3_RELEASE_PREV(m, gather);
    GC3_RELEASE_PREV(m, scatter);
    GC3_RELEASE_PREV(m, alltoallv);
    GC3_RELEASE_PREV(m, reduce_scatter);
    GC3_RELEASE_PREV(m, scan);
    GC3_RELEASE_PREV(m, exscan);
    GC3_RELEASE_PREV(m, ibcast);
    GC3_RELEASE_PREV(m, ireduce);
    GC3_RELEASE_PREV(m, iallgather);
    GC3_RELEASE_PREV(m, iallgatherv);
    GC3_RELEASE_PREV(m, igather);
    GC3_RELEASE_PREV(m, iscatter);
    GC3_RELEASE_PREV(m, ialltoallv);
    GC3_RELEASE_PREV(m, ireduce_scatter_block);
    GC3_RELEASE_PREV(m, ireduce_scatter);
    GC3_RELEASE_PREV(m, iscan);
    GC3_RELEASE_PREV(m, iexscan);
    GC3_RELEASE_PREV(m, gatherv);
    GC3_RELEASE_PREV(m, scatterv);
    GC3_RELEASE_PREV(m, igatherv);
    GC3_RELEASE_PREV(m, iscatterv);
    GC3_RELEASE_PREV(m, alltoallw);
    GC3_RELEASE_PREV(m, ialltoallw);
    GC3_RELEASE_PREV(m, neighbor_allgather);
    GC3_RELEASE_PREV(m, neighbor_allgatherv);
    GC3_RELEASE_PREV(m, neighbor_alltoall);
    GC3_RELEASE_PREV(m, neighbor_alltoallv);
    GC3_RELEASE_PREV(m, neighbor_alltoallw);
    GC3_RELEASE_PREV(m, ineighbor_allgather);
    GC3_RELEASE_PREV(m, ineighbor_allgatherv);
    GC3_RELEASE_PREV(m, ineighbor_alltoall);
    GC3_RELEASE_PREV(m, ineighbor_alltoallv);
    GC3_RELEASE_PREV(m, ineighbor_alltoallw);
}

OBJ_CLASS_INSTANCE(mca_coll_gc3_module_t, mca_coll_base_module_t, mca_coll_gc3_module_construct,
                   mca_coll_gc3_module_destruct);

#define GC3_SAVE_PREV(m, comm, name)                                                              \
    do {                                                                                          \
        (m)->prev_##name          = (comm)->c_coll->coll_##name;                                 \
        (m)->prev_##name##_module = (comm)->c_coll->coll_##name##_module;                        \
        if ((m)->prev_##name##_module != NULL) {                                                 \
            OBJ_RETAIN((m)->prev_##name##_module);                                               \
        } else {                                                                                  \
            opal_output_verbose(2, mca_coll_gc3_component.output,                                 \
                                "coll:gc3: comm %s: no previous " #name " to delegate to",         \
                                (comm)->c_name);                                                  \
        }                                                                                         \
    } while (0)


static int mca_coll_gc3_module_enable(mca_coll_base_module_t *module, struct ompi_communicator_t *comm)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;

    GC3_SAVE_PREV(m, comm, allreduce);
    GC3_SAVE_PREV(m, comm, alltoall);
    GC3_SAVE_PREV(m, comm, allgather);
    GC3_SAVE_PREV(m, comm, reduce_scatter_block);
    GC3_SAVE_PREV(m, comm, iallreduce);
    GC3_SAVE_PREV(m, comm, ialltoall);
    GC3_SAVE_PREV(m, comm, allreduce_init);
    GC3_SAVE_PREV(m, comm, alltoall_init);
    GC3_SAVE_PREV(m, comm, barrier);
    GC3_SAVE_PREV(m, comm, bcast);
    GC3_SAVE_PREV(m, comm, reduce);
    GC3_SAVE_PREV(m, comm, allgatherv);
    GC3_SAVE_PREV(m, comm, gather);
    GC3_SAVE_PREV(m, comm, scatter);
    GC3_SAVE_PREV(m, comm, alltoallv);
    GC3_SAVE_PREV(m, comm, reduce_scatter);
    GC3_SAVE_PREV(m, comm, scan);
    GC3_SAVE_PREV(m, comm, exscan);
    GC3_SAVE_PREV(m, comm, ibcast);
    GC3_SAVE_PREV(m, comm, ireduce);
    GC3_SAVE_PREV(m, comm, iallgather);
    GC3_SAVE_PREV(m, comm, iallgatherv);
    GC3_SAVE_PREV(m, comm, igather);
    GC3_SAVE_PREV(m, comm, iscatter);
    GC3_SAVE_PREV(m, comm, ialltoallv);
    GC3_SAVE_PREV(m, comm, ireduce_scatter_block);
    GC3_SAVE_PREV(m, comm, ireduce_scatter);
    GC3_SAVE_PREV(m, comm, iscan);
    GC3_SAVE_PREV(m, comm, iexscan);
    GC3_SAVE_PREV(m, comm, gatherv);
    GC3_SAVE_PREV(m, comm, scatterv);
    GC3_SAVE_PREV(m, comm, igatherv);
    GC3_SAVE_PREV(m, comm, iscatterv);
    GC3_SAVE_PREV(m, comm, alltoallw);
    GC3_SAVE_PREV(m, comm, ialltoallw);
    GC3_SAVE_PREV(m, comm, neighbor_allgather);
    GC3_SAVE_PREV(m, comm, neighbor_allgatherv);
    GC3_SAVE_PREV(m, comm, neighbor_alltoall);
    GC3_SAVE_PREV(m, comm, neighbor_alltoallv);
    GC3_SAVE_PREV(m, comm, neighbor_alltoallw);
    GC3_SAVE_PREV(m, comm, ineighbor_allgather);
    GC3_SAVE_PREV(m, comm, ineighbor_allgatherv);
    GC3_SAVE_PREV(m, comm, ineighbor_alltoall);
    GC3_SAVE_PREV(m, comm, ineighbor_alltoallv);
    GC3_SAVE_PREV(m, comm, ineighbor_alltoallw);
    m->comm = comm;
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: enabled on comm %s (%d ranks)", comm->c_name,
                        ompi_comm_size(comm));
    return OMPI_SUCCESS;
}

/* ---------------------------------------------------------------- out-of-band interface:
   the previous module's allgather and barrier on host memory */

static int mca_coll_gc3_oob_allgather(void *ctx, const void *send, void *recv, size_t bytes)
{
    mca_coll_gc3_module_t *m = ctx;
    if (m->prev_allgather == NULL) {
        return -1;
    }
    return m->prev_allgather(send, (int)bytes, MPI_BYTE, recv, (int)bytes, MPI_BYTE, m->comm,
                             m->prev_allgather_module) != OMPI_SUCCESS;
}

static int mca_coll_gc3_oob_barrier(void *ctx)
{
    mca_coll_gc3_module_t *m = ctx;
    if (m->prev_barrier == NULL) {
        return -1;
    }
    return m->prev_barrier(m->comm, m->prev_barrier_module) != OMPI_SUCCESS;
}

/* What every rank says before gc3 uses something collectively: whether it is ready, a hash of
 * what it built (plans, settings: different only when the ranks' settings are), and for a
 * plan's creation the key of the call (collective, bytes, in place, backend: different only in
 * an erroneous program). */
typedef struct {
    uint64_t ok, hash, key;
} mca_coll_gc3_card_t;

enum { GC3_AGREE_OK, GC3_AGREE_NOT_READY, GC3_AGREE_DIFFERENT, GC3_AGREE_MISMATCH, GC3_AGREE_TIMEOUT };

/* The verdict on all ranks' cards, the same on every rank: another call key first, then another
 * hash among the ready ranks (peer: the first such rank), then a rank not ready. */
static int mca_coll_gc3_verdict(const mca_coll_gc3_card_t *v, int n, uint64_t hash, uint64_t key, int *peer)
{
    int verdict = GC3_AGREE_OK;
    *peer       = -1;
    for (int r = 0; r < n; r++) {
        if (v[r].key != key) {
            *peer = r;
            return GC3_AGREE_MISMATCH;
        }
        if (v[r].ok && v[r].hash != hash && verdict != GC3_AGREE_DIFFERENT) {
            *peer   = r;
            verdict = GC3_AGREE_DIFFERENT;
        } else if (!v[r].ok && verdict == GC3_AGREE_OK) {
            verdict = GC3_AGREE_NOT_READY;
        }
    }
    return verdict;
}

static void mca_coll_gc3_warn_disagree(mca_coll_gc3_module_t *m, const char *what, int peer)
{
    static int warned = 0; /* once per process; later communicators at verbose level 1 */
    opal_output_verbose(warned++ ? 1 : 0, mca_coll_gc3_component.output,
                        "coll:gc3: comm %s rank %d: ranks disagree on %s (rank %d differs); gc3 passes these calls on",
                        m->comm->c_name, ompi_comm_rank(m->comm), what, peer);
}

/* Every rank says whether it is ready and which plan it has; use the plan only when all agree. */
static int mca_coll_gc3_agree(mca_coll_gc3_module_t *m, int ok, uint64_t hash, const char *what)
{
    int                 n = ompi_comm_size(m->comm), peer, verdict;
    mca_coll_gc3_card_t mine = {(uint64_t)ok, hash, 0}, *v = malloc(sizeof(mine) * (size_t)n);

    if (v == NULL || mca_coll_gc3_oob_allgather(m, &mine, v, sizeof(mine)) != 0) {
        free(v);
        return 0;
    }
    verdict = mca_coll_gc3_verdict(v, n, hash, 0, &peer);
    free(v);
    if (verdict == GC3_AGREE_DIFFERENT) {
        mca_coll_gc3_warn_disagree(m, what, peer);
    }
    return verdict == GC3_AGREE_OK;
}

/* The first exchange of a plan's creation, bounded by coll_gc3_timeout: a rank that is not
 * building this plan (it called with another count, so it runs or builds another plan) would
 * otherwise hold the others in a blocking allgather forever, or cross-match it with its own.
 * Every rank building some plan sends a record of the same size, so those exchanges match and
 * the call keys tell the mismatch. On a timeout the exchange stays pending (a collective cannot
 * be cancelled): its buffers are left to it and the communicator is marked unusable. */
static int mca_coll_gc3_agree_call(mca_coll_gc3_module_t *m, int ok, uint64_t hash, uint64_t key, int coll, int *peer)
{
    int                  n = ompi_comm_size(m->comm), rc;
    mca_coll_gc3_card_t *mine = malloc(sizeof(*mine)), *v = malloc(sizeof(*mine) * (size_t)n);
    double               timeout = mca_coll_gc3_component.timeout;
    ompi_request_t      *req = NULL;
    struct timespec      t0, t;

    *peer = -1;
    if (mine == NULL || v == NULL) {
        free(mine);
        free(v);
        return GC3_AGREE_NOT_READY; /* out of host memory: this rank does not take part (the others time out) */
    }
    mine->ok   = (uint64_t)ok;
    mine->hash = hash;
    mine->key  = key;
    if (m->prev_iallgather == NULL || timeout <= 0) {
        rc = mca_coll_gc3_oob_allgather(m, mine, v, sizeof(*mine));
    } else {
        rc = m->prev_iallgather(mine, (int)sizeof(*mine), MPI_BYTE, v, (int)sizeof(*mine), MPI_BYTE, m->comm, &req,
                                m->prev_iallgather_module) != OMPI_SUCCESS;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (rc == 0) {
            int done = 0;
            if (ompi_request_test(&req, &done, MPI_STATUS_IGNORE) != OMPI_SUCCESS) {
                rc = 1;
                break;
            }
            if (done) {
                break;
            }
            clock_gettime(CLOCK_MONOTONIC, &t);
            if ((double)(t.tv_sec - t0.tv_sec) + (double)(t.tv_nsec - t0.tv_nsec) * 1e-9 > timeout) {
                m->unusable = 1; /* mine and v belong to the pending exchange now */
                opal_output(0, "coll:gc3: comm %s rank %d: %s: the other ranks did not join the creation of its plan "
                            "within coll_gc3_timeout (%.1f s): they called another collective or another count; "
                            "the call fails and gc3 fails every later call on this communicator",
                            m->comm->c_name, ompi_comm_rank(m->comm), mca_coll_gc3_coll_names[coll], timeout);
                return GC3_AGREE_TIMEOUT;
            }
        }
    }
    rc = rc != 0 ? GC3_AGREE_NOT_READY : mca_coll_gc3_verdict(v, n, hash, key, peer);
    free(mine);
    free(v);
    return rc;
}

/* returned by mca_coll_gc3_plan when the call must fail (the ranks disagree on it) */
static mca_coll_gc3_plan_slot_t mca_coll_gc3_fail_call;

static uint64_t mca_coll_gc3_program_hash(const gc3_ir_program_t *p)
{
    char    *text = NULL;
    size_t   len  = 0;
    FILE    *f    = open_memstream(&text, &len);
    uint64_t h;

    if (f == NULL) {
        return 0;
    }
    gc3_ir_write_stream(p, f);
    fclose(f);
    h = gc3_fnv1a(GC3_FNV1A_START, text, len);
    free(text);
    return h;
}

static gc3_rules_t *mca_coll_gc3_rules(void);

/* What decides on each rank whether a call builds a plan and which: the rules (with the algorithm
 * directory's) and the parameters read before a plan is chosen. Building a plan is collective, so
 * ranks must agree on all of it before the first plan, or one could build a plan while another
 * passes the same call on (a hang). Rule locations and file paths are left out: the same rules
 * from files at different paths agree; differing program files are caught by the plan hash. */
static uint64_t mca_coll_gc3_settings_hash(void)
{
    const gc3_rules_t *R = mca_coll_gc3_rules();
    uint64_t           h = GC3_FNV1A_START;
    long               params[] = {mca_coll_gc3_component.max_bytes,
                                   mca_coll_gc3_component.max_blocks,
                                   mca_coll_gc3_component.slots,
                                   mca_coll_gc3_component.slot_bytes,
                                   mca_coll_gc3_component.backend,
                                   mca_coll_gc3_component.fallback,
                                   mca_coll_gc3_component.enable_allreduce,
                                   mca_coll_gc3_component.enable_alltoall,
                                   mca_coll_gc3_component.enable_allgather,
                                   mca_coll_gc3_component.enable_reduce_scatter_block,
                                   mca_coll_gc3_component.stage_host,
                                   mca_coll_gc3_component.pseudo_nodes,
                                   mca_coll_gc3_component.net_peer_errors,
                                   mca_coll_gc3_component.shared_gpu};

    h = gc3_fnv1a(h, params, sizeof(params));
    for (int i = 0; R != NULL && i < R->n; i++) {
        const gc3_rule_t *r   = &R->rules[i];
        int64_t           v[] = {r->nodes_lo, r->nodes_hi, r->gpus_lo, r->gpus_hi, r->link, (int64_t)r->bytes_lo,
                                 (int64_t)r->bytes_hi, r->proto, r->proto_set, r->channels, r->instances,
                                 r->chunks_per_peer, r->ranks, r->inplace_ok, r->outofplace_ok, r->xml[0] != '\0'};
        h = gc3_fnv1a(h, r->coll, strlen(r->coll) + 1);
        h = gc3_fnv1a(h, r->algo, strlen(r->algo) + 1);
        h = gc3_fnv1a(h, v, sizeof(v));
    }
    return h;
}

#ifdef GC3_HAVE_CUDA
/* The NIC nearest a GPU, from hwloc's PCI objects: found once per process and device. */
static void mca_coll_gc3_nearest_nic(int device, char *out, size_t len)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char            cache[64][128];
    char                   bus[32] = "";
    gc3_nic_t              nic;
    gc3_diag_t             diag;

    if (device < 0 || device >= 64) {
        snprintf(out, len, "unknown (device %d)", device);
        return;
    }
    pthread_mutex_lock(&lock);
    if (cache[device][0] == '\0') {
        gc3_diag_init(&diag);
        if (cudaDeviceGetPCIBusId(bus, sizeof(bus), device) != cudaSuccess) {
            snprintf(cache[device], sizeof(cache[device]), "unknown (no PCI bus id for device %d)", device);
        } else if (gc3_topo_nearest_nic(bus, &nic, &diag) == GC3_OK) {
            snprintf(cache[device], sizeof(cache[device]), "%s (%s, %s, GPU %s)", nic.name, nic.rdma ? "RDMA" : "no RDMA",
                     gc3_nic_locality_name(nic.locality), bus);
        } else {
            snprintf(cache[device], sizeof(cache[device]), "none (%s)", diag.count ? diag.msgs[0] : "?");
        }
        gc3_diag_cleanup(&diag);
    }
    snprintf(out, len, "%s", cache[device]);
    pthread_mutex_unlock(&lock);
}
#endif

/* Nodes (distinct host names), ranks per node and, for the cuda backend, the link class between
 * the GPUs of the communicator: NVLink when every pair has native peer atomics (PCIe peer access
 * has none), else PCIe. */
static void mca_coll_gc3_shape(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    int   n = ompi_comm_size(m->comm), nodes = 0, most = 0;
    char  me[64] = {0};
    char *all = malloc((size_t)n * 64);
    int  *devs = malloc((size_t)n * sizeof(int)), mydev = -1;

    m->nodes           = 1;
    m->gpus            = n;
    m->link[backend]   = backend == GC3_BACKEND_CUDA ? GC3_LINK_NVLINK : GC3_LINK_HOST;
    if (all == NULL || devs == NULL) {
        free(all);
        free(devs);
        return;
    }
    gethostname(me, sizeof(me) - 1);
    free(m->node);
    m->node    = calloc((size_t)n, sizeof(int));
    m->regular = 1;
    if (m->node != NULL && mca_coll_gc3_oob_allgather(m, me, all, 64) == 0) {
        /* node of each rank: its host, and with coll_gc3_pseudo_nodes=K its group of K consecutive
         * ranks of that host; numbered in order of first appearance */
        int  K    = mca_coll_gc3_component.pseudo_nodes;
        int *host = malloc((size_t)n * sizeof(int)), *local = malloc((size_t)n * sizeof(int));
        int *size = calloc((size_t)n, sizeof(int));
        if (host == NULL || local == NULL || size == NULL) {
            free(host);
            free(local);
            free(size);
            free(all);
            free(devs);
            free(m->node);
            m->node = NULL;
            return;
        }
        for (int r = 0; r < n; r++) {
            host[r]  = r;
            local[r] = 0;
            for (int q = 0; q < r; q++) {
                if (strncmp(all + 64 * q, all + 64 * r, 64) == 0) {
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
        free(host);
        free(local);
        free(size);
    }
#ifdef GC3_HAVE_CUDA
    if (backend == GC3_BACKEND_CUDA) {
        cudaGetDevice(&mydev);
        if (mca_coll_gc3_oob_allgather(m, &mydev, devs, sizeof(int)) == 0) {
            for (int a = 0; a < n; a++) {
                for (int b = 0; b < n; b++) {
                    int v = 0;
                    if (devs[a] != devs[b] && strncmp(all + 64 * a, all + 64 * b, 64) == 0 && a == ompi_comm_rank(m->comm) &&
                        (cudaDeviceGetP2PAttribute(&v, cudaDevP2PAttrNativeAtomicSupported, devs[a], devs[b]) != cudaSuccess ||
                         v == 0)) {
                        m->link[backend] = GC3_LINK_PCIE;
                    }
                }
            }
        }
        /* every rank must see the same class: agree on the slowest */
        {
            int mine = m->link[backend], *v = malloc((size_t)n * sizeof(int));
            if (v != NULL && mca_coll_gc3_oob_allgather(m, &mine, v, sizeof(int)) == 0) {
                for (int r = 0; r < n; r++) {
                    if (v[r] == GC3_LINK_PCIE) {
                        m->link[backend] = GC3_LINK_PCIE;
                    }
                }
            }
            free(v);
        }
    }
    /* the NIC matters between nodes (the inter-node transport uses it); hwloc's I/O scan costs
     * tens of milliseconds once per process, so only then or when asked to tell */
    if (backend == GC3_BACKEND_CUDA && (m->nodes > 1 || mca_coll_gc3_component.verbose >= 2)) {
        mca_coll_gc3_nearest_nic(mydev, m->nic, sizeof(m->nic));
    }
#else
    (void)mydev;
#endif
    free(all);
    free(devs);
    opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: %d node(s), up to %d ranks per node, %s%s%s",
                        m->comm->c_name, m->nodes, m->gpus, gc3_link_name(m->link[backend]),
                        m->nic[0] ? "; nearest NIC " : "", m->nic);
}

/* The rules, loaded once: the file of coll_gc3_rules_file, or the built-in ones (also when the
 * file cannot be used, after saying why). */
static gc3_rules_t *mca_coll_gc3_rules_load(void);

/* Loaded once per process; threads on different communicators (MPI_THREAD_MULTIPLE) may ask first
 * at the same time. */
static gc3_rules_t *mca_coll_gc3_rules(void)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    gc3_rules_t           *R;

    pthread_mutex_lock(&lock);
    R = mca_coll_gc3_component.rules != NULL ? mca_coll_gc3_component.rules : mca_coll_gc3_rules_load();
    pthread_mutex_unlock(&lock);
    return R;
}

static gc3_rules_t *mca_coll_gc3_rules_load(void)
{
    gc3_diag_t diag;

    gc3_diag_init(&diag);
    if (mca_coll_gc3_component.rules_file != NULL && mca_coll_gc3_component.rules_file[0] != '\0') {
        if (gc3_rules_read_file(mca_coll_gc3_component.rules_file, &diag, &mca_coll_gc3_component.rules) != GC3_OK) {
            for (int i = 0; i < diag.count; i++) {
                opal_output(0, "coll:gc3: rules file: %s", diag.msgs[i]);
            }
            opal_output(0, "coll:gc3: using the built-in rules instead of %s", mca_coll_gc3_component.rules_file);
        }
    }
    if (mca_coll_gc3_component.rules == NULL) {
        gc3_diag_cleanup(&diag);
        gc3_diag_init(&diag);
        if (gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &mca_coll_gc3_component.rules) != GC3_OK) {
            /* a bug of gc3 itself (unit_rules parses them): say it, every call is passed on */
            opal_output(0, "coll:gc3: the built-in rules do not parse (%s): gc3 passes every call on",
                        diag.count ? diag.msgs[0] : "?");
        }
    }
    gc3_diag_cleanup(&diag);
    if (mca_coll_gc3_component.rules != NULL && mca_coll_gc3_component.algorithm_dir != NULL &&
        mca_coll_gc3_component.algorithm_dir[0] != '\0') {
        int added = 0;
        gc3_diag_init(&diag);
        (void)gc3_rules_add_xml_dir(mca_coll_gc3_component.rules, mca_coll_gc3_component.algorithm_dir, &diag, &added);
        for (int i = 0; i < diag.count; i++) {
            opal_output(0, "coll:gc3: algorithm directory: %s", diag.msgs[i]);
        }
        opal_output_verbose(1, mca_coll_gc3_component.output, "coll:gc3: algorithm directory %s: %d program(s) in use",
                            mca_coll_gc3_component.algorithm_dir, added);
        gc3_diag_cleanup(&diag);
    }
    return mca_coll_gc3_component.rules;
}

/* How many thread blocks per rank a plan may have, the same on every rank: coll_gc3_max_blocks,
 * and on GPUs what each one holds at once divided among the ranks that use it (the smallest share).
 * -1 when ranks share a GPU without MPS and coll_gc3_shared_gpu is false: their processes' kernels
 * would take turns on the GPU (2.4 ms an 8-byte allreduce, two ranks on one H200), so the calls are
 * staged instead. Every rank decides alike, from the same exchanged table. */
static int mca_coll_gc3_block_budget(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    int budget = INT_MAX, refuse = 0;
#ifdef GC3_HAVE_CUDA
    if (backend == GC3_BACKEND_CUDA) {
        typedef struct {
            char host[64], pci[32];
            int  max, mps;
        } card_t;
        int     n = ompi_comm_size(m->comm);
        card_t  mine, *all = malloc((size_t)n * sizeof(card_t));
        memset(&mine, 0, sizeof(mine));
        gethostname(mine.host, sizeof(mine.host) - 1);
        if (cudaDeviceGetPCIBusId(mine.pci, sizeof(mine.pci), m->device) != cudaSuccess) {
            snprintf(mine.pci, sizeof(mine.pci), "device %d", m->device);
        }
        mine.max = gc3_exec_max_blocks(m->exec[backend]);
        mine.max = mine.max > 0 ? mine.max : INT_MAX; /* the query failed: no limit here (a plan that does
                                                        * not fit is still refused when it runs) */
        if (cudaDeviceGetAttribute(&mine.mps, cudaDevAttrMpsEnabled, m->device) != cudaSuccess) {
            mine.mps = 0; /* cannot tell: as without MPS */
        }
        if (all == NULL || mca_coll_gc3_oob_allgather(m, &mine, all, sizeof(mine)) != 0) {
            budget = 1; /* cannot tell: the narrowest plans (every rank alike: the allgather failed everywhere) */
        } else {
            for (int r = 0; r < n; r++) {
                int share = 0, first = -1, second = -1; /* the two lowest ranks on r's GPU */
                for (int q = 0; q < n; q++) {
                    if (!strncmp(all[q].host, all[r].host, 64) && !strncmp(all[q].pci, all[r].pci, 32)) {
                        share++;
                        second = first >= 0 && second < 0 ? q : second;
                        first  = first < 0 ? q : first;
                    }
                }
                budget = all[r].max / share < budget ? all[r].max / share : budget;
                if (share > 1 && !all[r].mps && !mca_coll_gc3_component.shared_gpu && !refuse) {
                    refuse = 1;
                    opal_output_verbose(1, mca_coll_gc3_component.output,
                                        "coll:gc3: comm %s: ranks %d and %d share GPU %s of %s without MPS: their "
                                        "kernels would take turns on it (milliseconds a call), so gc3 does not run "
                                        "on this communicator's device buffers: they are staged through host "
                                        "memory. Start the MPS daemon (nvidia-cuda-mps-control -d) or set "
                                        "coll_gc3_shared_gpu to run gc3 there",
                                        m->comm->c_name, first, second, all[r].pci, all[r].host);
                }
            }
        }
        free(all);
    }
#endif
    if (mca_coll_gc3_component.max_blocks > 0 && mca_coll_gc3_component.max_blocks < budget) {
        budget = mca_coll_gc3_component.max_blocks;
    }
    m->block_budget[backend] = budget;
    opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: plans of at most %d thread blocks per rank",
                        m->comm->c_name, budget);
    return refuse ? -1 : 0;
}

static gc3_exec_t *mca_coll_gc3_exec(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    gc3_exec_params_t ep;
    gc3_diag_t        diag;
    int               ok;

    if (m->exec_state[backend] != 0) {
        return m->exec_state[backend] > 0 ? m->exec[backend] : NULL;
    }
    gc3_diag_init(&diag);
    mca_coll_gc3_shape(m, backend); /* first: the executor needs the nodes */
    gc3_exec_params_default(&ep, backend, ompi_comm_rank(m->comm), ompi_comm_size(m->comm));
    ep.node            = m->nodes > 1 ? m->node : NULL;
    ep.net_peer_errors = mca_coll_gc3_component.net_peer_errors;
    ep.oob.ctx       = m;
    ep.oob.allgather = mca_coll_gc3_oob_allgather;
    ep.oob.barrier   = mca_coll_gc3_oob_barrier;
    ep.timeout_s     = mca_coll_gc3_component.timeout;
    ep.resident_us   = mca_coll_gc3_component.resident_us;
    ep.fuse          = mca_coll_gc3_component.fuse;
    ep.wait_legacy   = mca_coll_gc3_component.wait_default_stream;
    ep.slots         = mca_coll_gc3_component.slots;
    if (mca_coll_gc3_component.slot_bytes > 0) {
        ep.slot_bytes = (size_t)mca_coll_gc3_component.slot_bytes;
    }
#ifdef GC3_HAVE_CUDA
    if (backend == GC3_BACKEND_CUDA) {
        int dev = 0;
        cudaGetDevice(&dev);
        ep.device = dev;
        m->device = dev;
    }
#endif
    ok = gc3_exec_create(&ep, &diag, &m->exec[backend]) == GC3_OK;
    if (!ok) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: no %s executor: %s", m->comm->c_name,
                            backend == GC3_BACKEND_CUDA ? "cuda" : "host", diag.count ? diag.msgs[0] : "?");
    }
    ok = mca_coll_gc3_agree(m, ok, mca_coll_gc3_settings_hash(),
                            "the selection settings (rules file, algorithm directory or coll_gc3 parameters)");
    /* every rank is here (the agreement above), and every rank takes the budget's decision alike */
    ok = ok && mca_coll_gc3_block_budget(m, backend) == 0;
    m->exec_state[backend] = ok ? 1 : -1;
    gc3_diag_cleanup(&diag);
    return ok ? m->exec[backend] : NULL;
}

/* The plan for (collective, rule that matched, in place) on a backend: built at its first use,
 * verified, and used only when every rank built the same program. NULL: pass the call on.
 * may_build 0: only a plan built before (building is collective and blocking: not allowed where
 * the call may come from inside Open MPI's progress engine). */
static mca_coll_gc3_plan_slot_t *mca_coll_gc3_plan(mca_coll_gc3_module_t *m, int coll, size_t bytes, int inplace,
                                                   gc3_backend_t backend, int may_build)
{
    mca_coll_gc3_plan_slot_t *s = NULL;
    gc3_rules_t              *R = mca_coll_gc3_rules();
    const gc3_rule_t         *rule;
    gc3_exec_t               *e;
    gc3_algo_params_t         ap;
    gc3_diag_t                diag;
    int                       ok, idx;
    char                      range[80], shape[96] = "", net[320] = "", fused[64] = "", narrow[96] = "";

    if (ompi_comm_size(m->comm) < 2) {
        return NULL; /* nothing to communicate: the previous module copies (staged on device buffers) */
    }
    if (m->unusable) {
        opal_output(0, "coll:gc3: comm %s rank %d: %s fails: gc3 marked this communicator unusable after its ranks "
                    "could not agree on an earlier call", m->comm->c_name, ompi_comm_rank(m->comm),
                    mca_coll_gc3_coll_names[coll]);
        return &mca_coll_gc3_fail_call;
    }
    if (mca_coll_gc3_component.max_bytes > 0 && bytes > (size_t)mca_coll_gc3_component.max_bytes) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: %zu bytes above coll_gc3_max_bytes: passed on",
                            bytes);
        return NULL;
    }
    if (!may_build && m->exec[backend] == NULL) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s: nonblocking %s on host buffers before any plan of the communicator: passed on",
                            m->comm->c_name, mca_coll_gc3_coll_names[coll]);
        return NULL;
    }
    e = mca_coll_gc3_exec(m, backend);
    if (e == NULL || R == NULL) {
        return NULL;
    }
    rule = gc3_rules_match_call(R, mca_coll_gc3_coll_names[coll], m->nodes, m->gpus, m->link[backend], bytes,
                                ompi_comm_size(m->comm), inplace);
    if (rule == NULL) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s: no rule of %s for %s of %zu bytes on %d node(s) x %d, %s: passed on",
                            m->comm->c_name, R->source, mca_coll_gc3_coll_names[coll], bytes, m->nodes, m->gpus,
                            gc3_link_name(m->link[backend]));
        return NULL;
    }
    idx = (int)(rule - R->rules);
    for (int i = 0; i < m->nslots; i++) {
        mca_coll_gc3_plan_slot_t *x = &m->slots[i];
        if (x->backend == (int)backend && x->coll == coll && x->rule == idx && x->inplace == inplace) {
            return x->state > 0 ? x : NULL;
        }
    }
    if (!may_build) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s: nonblocking %s on host buffers: no plan of its size class built yet: passed on",
                            m->comm->c_name, mca_coll_gc3_coll_names[coll]);
        return NULL;
    }
    if (m->nslots == m->slots_cap) {
        int                       ncap = m->slots_cap ? 2 * m->slots_cap : 8;
        mca_coll_gc3_plan_slot_t *n    = realloc(m->slots, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            return NULL;
        }
        m->slots     = n;
        m->slots_cap = ncap;
    }
    s = &m->slots[m->nslots++];
    memset(s, 0, sizeof(*s));
    s->backend = backend;
    s->coll    = coll;
    s->rule    = idx;
    s->inplace = inplace;
    gc3_diag_init(&diag);
    gc3_algo_params_default(&ap, ompi_comm_size(m->comm));
    /* hierarchical programs number ranks node-major: only when the nodes are consecutive blocks of
     * equal size; otherwise a flat program (its connections between nodes go through UCX all the same) */
    ap.nodes         = m->regular ? m->nodes : 1;
    ap.gpus_per_node = ompi_comm_size(m->comm) / ap.nodes;
    ap.inplace       = inplace;
    ap.slots         = mca_coll_gc3_component.slots;
    if (rule->proto_set) ap.proto = rule->proto;
    if (rule->channels) ap.channels = rule->channels;
    if (rule->instances) ap.instances = rule->instances;
    if (rule->chunks_per_peer) ap.chunks_per_peer = rule->chunks_per_peer;
    if (rule->xml[0] != '\0') {
        /* a program of the algorithm directory: read and verified again, as every rank must */
        ok = gc3_ir_read_file(rule->xml, &diag, &s->program) == GC3_OK && s->program->ngpus == ompi_comm_size(m->comm) &&
             gc3_verify(s->program, NULL, &diag) == GC3_OK;
        const int widest = ok ? gc3_ir_widest_rank(s->program) : 0;
        if (widest > m->block_budget[backend]) {
            gc3_diag_add(&diag, "%d thread blocks per rank, at most %d can run at once (coll_gc3_max_blocks)", widest,
                         m->block_budget[backend]);
            ok = 0;
        }
        ap.proto     = rule->proto;
        ap.channels  = rule->channels;
        ap.instances = 1;
    } else {
        gc3_algo_params_t asked = ap;
        int               narrowed;
        ok = gc3_algo_generate_fit(rule->algo, &ap, m->block_budget[backend], &diag, &s->program, &narrowed) == GC3_OK;
        if (ok && narrowed) {
            snprintf(narrow, sizeof(narrow), " (narrowed from %d x %d to fit %d thread blocks per rank)", asked.channels,
                     asked.instances, m->block_budget[backend]);
        }
    }
    {
        uint64_t key[4] = {(uint64_t)coll, (uint64_t)bytes, (uint64_t)inplace, (uint64_t)backend};
        int      peer, a = mca_coll_gc3_agree_call(m, ok, ok ? mca_coll_gc3_program_hash(s->program) : 0,
                                                   gc3_fnv1a(GC3_FNV1A_START, key, sizeof(key)), coll, &peer);
        if (a == GC3_AGREE_MISMATCH || a == GC3_AGREE_TIMEOUT) {
            if (a == GC3_AGREE_MISMATCH) {
                opal_output(0, "coll:gc3: comm %s rank %d: %s of %zu bytes%s: rank %d called it with another size or "
                            "mode (an erroneous program): the call fails", m->comm->c_name, ompi_comm_rank(m->comm),
                            mca_coll_gc3_coll_names[coll], bytes, inplace ? " in place" : "", peer);
            }
            gc3_ir_program_destroy(s->program);
            m->nslots--; /* a later, consistent call builds it */
            gc3_diag_cleanup(&diag);
            return &mca_coll_gc3_fail_call;
        }
        if (a == GC3_AGREE_DIFFERENT) {
            char what[96];
            snprintf(what, sizeof(what), "the %s plan (a program file differs?)", mca_coll_gc3_coll_names[coll]);
            mca_coll_gc3_warn_disagree(m, what, peer);
        }
        ok = a == GC3_AGREE_OK;
    }
    if (ok) {
        ok = gc3_exec_prepare(e, s->program, &diag, &s->plan) == GC3_OK;
        ok = mca_coll_gc3_agree(m, ok, 0, "connection");
    }
    if (m->nodes > 1) {
        snprintf(shape, sizeof(shape), ", %d nodes%s%s", m->nodes,
                 mca_coll_gc3_component.pseudo_nodes > 0 ? " (pseudo-nodes)" : "",
                 m->regular ? "" : " of uneven or interleaved ranks: flat program");
    }
    {
        char lo[32], hi[32];
        gc3_format_bytes(rule->bytes_lo, lo, sizeof(lo));
        gc3_format_bytes(rule->bytes_hi, hi, sizeof(hi));
        snprintf(range, sizeof(range), "%s-%s bytes", lo, hi);
    }
    if (ok) {
        int runs = gc3_plan_fused_runs(s->plan);
        gc3_plan_net_describe(s->plan, net, sizeof(net));
        if (runs > 0) {
            snprintf(fused, sizeof(fused), ", %d fused run%s of local steps", runs, runs > 1 ? "s" : "");
        }
    }
    opal_output_verbose(1, mca_coll_gc3_component.output,
                        "coll:gc3: comm %s: %s %s%s (%s backend, %d ranks, %s%s): %s %s, %d channel(s) x %d instance(s)%s, "
                        "rule %s%s%s%s%s%s", m->comm->c_name, mca_coll_gc3_coll_names[coll], range,
                        inplace ? ", in place" : "", backend == GC3_BACKEND_CUDA ? "cuda" : "host",
                        ompi_comm_size(m->comm), gc3_link_name(m->link[backend]), shape, rule->algo,
                        gc3_proto_name(ap.proto), ap.channels, ap.instances, narrow, rule->where, ok ? ", verified" : "; NOT USED: ",
                        ok ? "" : (diag.count ? diag.msgs[0] : "a rank could not build it"), fused, net[0] ? "; " : "", net);
    if (!ok) {
        gc3_plan_destroy(s->plan);
        gc3_ir_program_destroy(s->program);
        s->plan    = NULL;
        s->program = NULL;
    }
    s->state = ok ? 1 : -1;
    gc3_diag_cleanup(&diag);
    return ok ? s : NULL;
}

int mca_coll_gc3_pick_backend(mca_coll_gc3_module_t *m, const void *sbuf, const void *rbuf, const char *coll,
                              int *device_buffers_p)
{
    int                dev_s = -1, dev_r = -1;
    mca_coll_gc3_mem_t ks = sbuf == MPI_IN_PLACE ? MCA_COLL_GC3_MEM_HOST : mca_coll_gc3_classify(sbuf, &dev_s);
    mca_coll_gc3_mem_t kr = mca_coll_gc3_classify(rbuf, &dev_r);

    *device_buffers_p = ks != MCA_COLL_GC3_MEM_HOST || kr != MCA_COLL_GC3_MEM_HOST;
    if (mca_coll_gc3_component.stage_host) {
        *device_buffers_p = 1; /* test feature: host buffers take the staging path */
        return -1;
    }
    if (!*device_buffers_p) {
        return mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST ? GC3_BACKEND_HOST : -1;
    }
    if (mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST || !gc3_exec_backend_available(GC3_BACKEND_CUDA)) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: %s on device buffers: %s", coll,
                            mca_coll_gc3_component.backend == MCA_COLL_GC3_BACKEND_HOST ? "backend is host"
                                                                                        : "built without CUDA");
        return -1;
    }
    if (ks == MCA_COLL_GC3_MEM_MANAGED || kr == MCA_COLL_GC3_MEM_MANAGED) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: %s on managed memory: not run by gc3", coll);
        return -1;
    }
    if ((sbuf != MPI_IN_PLACE && ks != MCA_COLL_GC3_MEM_DEVICE) || kr != MCA_COLL_GC3_MEM_DEVICE ||
        (sbuf != MPI_IN_PLACE && dev_s != dev_r) || (m->device >= 0 && dev_r != m->device)) {
        opal_output_verbose(2, mca_coll_gc3_component.output,
                            "coll:gc3: %s with buffers on devices %d/%d (this rank uses %d), or host and device "
                            "mixed: not run by gc3", coll, dev_s, dev_r, m->device);
        return -1;
    }
    return GC3_BACKEND_CUDA;
}

/* The plan for a call and the call itself, or NULL when gc3 does not take it. */
static mca_coll_gc3_plan_slot_t *mca_coll_gc3_setup(mca_coll_gc3_module_t *m, int coll, gc3_backend_t backend,
                                                    const void *sbuf, void *rbuf, size_t count, gc3_dtype_t dtype,
                                                    gc3_op_t op, size_t bytes, gc3_call_t *call, int may_build)
{
    mca_coll_gc3_plan_slot_t *s;

    s = mca_coll_gc3_plan(m, coll, bytes, sbuf == MPI_IN_PLACE, backend, may_build);
    if (s == NULL || s == &mca_coll_gc3_fail_call) {
        return s;
    }
    /* a nonblocking call still using this plan finishes first (calls complete in order) */
    mca_coll_gc3_drain(s->plan);
    call->sendbuf = sbuf == MPI_IN_PLACE ? NULL : sbuf;
    call->recvbuf = rbuf;
    call->count   = count;
    call->dtype   = dtype;
    call->op      = op;
    call->stream  = NULL;
    return s;
}

void mca_coll_gc3_plan_ahead(mca_coll_gc3_module_t *m, int coll, gc3_backend_t backend, const void *sbuf, size_t bytes)
{
    (void)mca_coll_gc3_plan(m, coll, bytes, sbuf == MPI_IN_PLACE, backend, 1);
}

static int mca_coll_gc3_report(mca_coll_gc3_module_t *m, int coll, gc3_status_t st, gc3_diag_t *diag)
{
    if (st == GC3_OK) {
        return OMPI_SUCCESS;
    }
    opal_output(0, "coll:gc3: comm %s rank %d: %s failed: %s", m->comm->c_name, ompi_comm_rank(m->comm),
                mca_coll_gc3_coll_names[coll], diag->count ? diag->msgs[0] : gc3_status_string(st));
    return OMPI_ERROR;
}

int mca_coll_gc3_try_run(mca_coll_gc3_module_t *m, int coll, gc3_backend_t backend, const void *sbuf, void *rbuf,
                         size_t count, gc3_dtype_t dtype, gc3_op_t op, size_t bytes, int *rc)
{
    gc3_call_t                call;
    gc3_diag_t                diag;
    mca_coll_gc3_plan_slot_t *s = mca_coll_gc3_setup(m, coll, backend, sbuf, rbuf, count, dtype, op, bytes, &call, 1);

    if (s == NULL) {
        return 0;
    }
    if (s == &mca_coll_gc3_fail_call) {
        *rc = OMPI_ERROR;
        return 1;
    }
    gc3_diag_init(&diag);
    *rc = mca_coll_gc3_report(m, coll, gc3_exec_run(s->plan, &call, &diag), &diag);
    gc3_diag_cleanup(&diag);
    return 1;
}

int mca_coll_gc3_try_start(mca_coll_gc3_module_t *m, int coll, gc3_backend_t backend, const void *sbuf, void *rbuf,
                           size_t count, gc3_dtype_t dtype, gc3_op_t op, size_t bytes, ompi_request_t **request,
                           int *rc, struct mca_coll_gc3_request_t *reuse)
{
    gc3_call_t                call;
    gc3_diag_t                diag;
    gc3_status_t              st;
    /* Open MPI itself starts nonblocking collectives on host memory from inside its progress
     * engine (communicator ids under MPI_THREAD_MULTIPLE), where building a plan (blocking,
     * collective) would deadlock: on host buffers a nonblocking call only uses plans built before.
     * Every rank has the same plans at the same call, so all decide alike. */
    mca_coll_gc3_plan_slot_t *s = mca_coll_gc3_setup(m, coll, backend, sbuf, rbuf, count, dtype, op, bytes, &call,
                                                     reuse != NULL || backend != GC3_BACKEND_HOST);

    if (s == NULL) {
        return 0;
    }
    if (s == &mca_coll_gc3_fail_call) {
        *rc = OMPI_ERROR;
        return 1;
    }
    if (!s->nb_seen) {
        s->nb_seen = 1;
        opal_output_verbose(1, mca_coll_gc3_component.output,
                            "coll:gc3: comm %s: %s %s runs on gc3's %s plan, completed by MPI progress",
                            m->comm->c_name, reuse != NULL ? "persistent" : "nonblocking",
                            mca_coll_gc3_coll_names[coll], s->program->name);
    }
    gc3_diag_init(&diag);
    st  = gc3_exec_start(s->plan, &call, &diag);
    *rc = mca_coll_gc3_report(m, coll, st, &diag);
    if (st == GC3_OK) {
        *rc = mca_coll_gc3_request_start(m, coll, s->plan, request, reuse);
    }
    gc3_diag_cleanup(&diag);
    return 1;
}

/* ---------------------------------------------------------------- pass-through collectives */

/* Nonblocking calls: started on gc3's plan when it takes them (Open MPI's progress completes the
 * request). Otherwise the previous (non-CUDA-aware) module must not see device buffers: gc3 runs
 * the blocking call (staged, per coll_gc3_fallback) and returns a completed request. */
static int mca_coll_gc3_iallreduce(const void *sbuf, void *rbuf, int count, struct ompi_datatype_t *dtype,
                                   struct ompi_op_t *op, struct ompi_communicator_t *comm, ompi_request_t **request,
                                   mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (mca_coll_gc3_allreduce_args(m, sbuf, rbuf, count, dtype, op, "iallreduce", &a) &&
        mca_coll_gc3_try_start(m, MCA_COLL_GC3_ALLREDUCE, (gc3_backend_t)a.backend, sbuf, rbuf, a.count, a.dtype, a.op,
                               a.bytes, request, &rc, NULL)) {
        return rc;
    }
    if (a.device && mca_coll_gc3_component.fallback != MCA_COLL_GC3_FALLBACK_PASS) {
        rc       = mca_coll_gc3_allreduce(sbuf, rbuf, count, dtype, op, comm, module);
        *request = &ompi_request_empty;
        return rc;
    }
    if (m->prev_iallreduce == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, iallreduce);
    }
    return m->prev_iallreduce(sbuf, rbuf, count, dtype, op, comm, request, m->prev_iallreduce_module);
}

static int mca_coll_gc3_ialltoall(const void *sbuf, int scount, struct ompi_datatype_t *sdtype, void *rbuf,
                                  int rcount, struct ompi_datatype_t *rdtype, struct ompi_communicator_t *comm,
                                  ompi_request_t **request, mca_coll_base_module_t *module)
{
    mca_coll_gc3_module_t *m = (mca_coll_gc3_module_t *)module;
    mca_coll_gc3_args_t    a;
    int                    rc;

    if (mca_coll_gc3_alltoall_args(m, sbuf, &scount, &sdtype, rbuf, rcount, rdtype, "ialltoall", &a) &&
        mca_coll_gc3_try_start(m, MCA_COLL_GC3_ALLTOALL, (gc3_backend_t)a.backend, sbuf, rbuf, a.count, a.dtype, a.op,
                               a.bytes, request, &rc, NULL)) {
        return rc;
    }
    if (a.device && mca_coll_gc3_component.fallback != MCA_COLL_GC3_FALLBACK_PASS) {
        rc       = mca_coll_gc3_alltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, module);
        *request = &ompi_request_empty;
        return rc;
    }
    if (m->prev_ialltoall == NULL) {
        return MCA_COLL_GC3_NO_PREV(comm, ialltoall);
    }
    return m->prev_ialltoall(sbuf, scount, sdtype, rbuf, rcount, rdtype, comm, request, m->prev_ialltoall_module);
}

int mca_coll_gc3_init_query(bool enable_progress_threads, bool enable_mpi_threads)
{
    (void)enable_progress_threads;
    (void)enable_mpi_threads;
    return OMPI_SUCCESS;
}

mca_coll_base_module_t *mca_coll_gc3_comm_query(struct ompi_communicator_t *comm, int *priority)
{
    mca_coll_gc3_module_t *m;

    if (mca_coll_gc3_component.priority < 0 || OMPI_COMM_IS_INTER(comm)) {
        return NULL;
    }
    m = OBJ_NEW(mca_coll_gc3_module_t);
    if (m == NULL) {
        return NULL;
    }
    *priority                          = mca_coll_gc3_component.priority;
    m->super.coll_module_enable        = mca_coll_gc3_module_enable;
    m->super.coll_allreduce            = mca_coll_gc3_allreduce;
    m->super.coll_alltoall             = mca_coll_gc3_alltoall;
    m->super.coll_allgather            = mca_coll_gc3_allgather;
    m->super.coll_reduce_scatter_block = mca_coll_gc3_reduce_scatter_block;
    m->super.coll_iallreduce           = mca_coll_gc3_iallreduce;
    m->super.coll_bcast                = mca_coll_gc3_bcast;
    m->super.coll_reduce               = mca_coll_gc3_reduce;
    m->super.coll_allgatherv           = mca_coll_gc3_allgatherv;
    m->super.coll_gather               = mca_coll_gc3_gather;
    m->super.coll_scatter              = mca_coll_gc3_scatter;
    m->super.coll_alltoallv            = mca_coll_gc3_alltoallv;
    m->super.coll_reduce_scatter       = mca_coll_gc3_reduce_scatter;
    m->super.coll_scan                 = mca_coll_gc3_scan;
    m->super.coll_exscan               = mca_coll_gc3_exscan;
    m->super.coll_ialltoall            = mca_coll_gc3_ialltoall;
    m->super.coll_ibcast                 = mca_coll_gc3_ibcast;
    m->super.coll_ireduce                = mca_coll_gc3_ireduce;
    m->super.coll_iallgather             = mca_coll_gc3_iallgather;
    m->super.coll_iallgatherv            = mca_coll_gc3_iallgatherv;
    m->super.coll_igather                = mca_coll_gc3_igather;
    m->super.coll_iscatter               = mca_coll_gc3_iscatter;
    m->super.coll_ialltoallv             = mca_coll_gc3_ialltoallv;
    m->super.coll_ireduce_scatter_block  = mca_coll_gc3_ireduce_scatter_block;
    m->super.coll_ireduce_scatter        = mca_coll_gc3_ireduce_scatter;
    m->super.coll_iscan                  = mca_coll_gc3_iscan;
    m->super.coll_iexscan                = mca_coll_gc3_iexscan;
    m->super.coll_gatherv                = mca_coll_gc3_gatherv;
    m->super.coll_scatterv               = mca_coll_gc3_scatterv;
    m->super.coll_igatherv               = mca_coll_gc3_igatherv;
    m->super.coll_iscatterv              = mca_coll_gc3_iscatterv;
    m->super.coll_alltoallw              = mca_coll_gc3_alltoallw;
    m->super.coll_ialltoallw             = mca_coll_gc3_ialltoallw;
    m->super.coll_neighbor_allgather       = mca_coll_gc3_neighbor_allgather;
    m->super.coll_neighbor_allgatherv      = mca_coll_gc3_neighbor_allgatherv;
    m->super.coll_neighbor_alltoall        = mca_coll_gc3_neighbor_alltoall;
    m->super.coll_neighbor_alltoallv       = mca_coll_gc3_neighbor_alltoallv;
    m->super.coll_neighbor_alltoallw       = mca_coll_gc3_neighbor_alltoallw;
    m->super.coll_ineighbor_allgather      = mca_coll_gc3_ineighbor_allgather;
    m->super.coll_ineighbor_allgatherv     = mca_coll_gc3_ineighbor_allgatherv;
    m->super.coll_ineighbor_alltoall       = mca_coll_gc3_ineighbor_alltoall;
    m->super.coll_ineighbor_alltoallv      = mca_coll_gc3_ineighbor_alltoallv;
    m->super.coll_ineighbor_alltoallw      = mca_coll_gc3_ineighbor_alltoallw;
    m->super.coll_allreduce_init       = mca_coll_gc3_allreduce_init;
    m->super.coll_alltoall_init        = mca_coll_gc3_alltoall_init;
    opal_output_verbose(3, mca_coll_gc3_component.output, "coll:gc3: comm %s: query, priority %d", comm->c_name,
                        *priority);
    return &m->super;
}
