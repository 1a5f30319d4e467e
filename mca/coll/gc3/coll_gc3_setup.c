/* coll/gc3: the set-up of a communicator, as a sequence of short phases none of which waits for
 * another rank (doc/design/nonblocking-setup.md). Calls need it in an order that is the same on
 * every rank (MPI's order of collectives on a communicator), so every rank queues the same jobs in
 * the same order and posts the same exchanges (coll_gc3_oob.c):
 *
 *   executor  SHAPE    this rank's host, GPU and its limits, executor made, settings hash
 *                      -> nodes, ranks per node, link class, block budget, settings agreed
 *   plan      AGREE    program generated (or read) and verified -> its hash and the call's key
 *             PREPARE  the runtime's preparation (gc3_exec_prepare_post/test: connection handles,
 *                      peers mapped, connections to other nodes)
 *             CONNECT  every rank says whether its connections are up
 *
 * Calls advance it (coll_gc3_request.c) and so does Open MPI's progress; blocking calls wait for
 * it. Every decision is taken from exchanged records, so every rank takes it alike. Each phase's
 * exchange is bounded by coll_gc3_timeout: past it, the communicator is unusable for gc3 (the
 * exchange cannot be cancelled) and the error names the rank, the communicator and what it waited
 * for. Nothing of this touches CUDA before a call on device buffers does (applications select
 * their GPU after MPI_Init). */
#include <limits.h>
#include <string.h>
#include <unistd.h>
#include <pthread.h>
#include "coll_gc3.h"
#include "gc3_verify.h"
#include "gc3_topo.h"
#include "opal/util/output.h"

enum { GC3_PHASE_NONE, GC3_PHASE_SHAPE, GC3_PHASE_AGREE, GC3_PHASE_PREPARE, GC3_PHASE_CONNECT };

static gc3_rules_t *mca_coll_gc3_rules(void);

/* ---------------------------------------------------------------- the phases' exchanges */

/* Post this rank's record of the phase (m->xsend, bytes; released here); 0 when posted. */
static int gc3_setup_post(mca_coll_gc3_module_t *m, size_t bytes)
{
    int rc = -1;
    if (m->xsend != NULL) {
        m->xrecv = malloc((size_t)ompi_comm_size(m->comm) * bytes);
        rc       = m->xrecv != NULL ? mca_coll_gc3_oob_iallgather(m, m->xsend, m->xrecv, bytes, &m->xreq) : -1;
    }
    free(m->xsend); /* the exchange has its copy */
    m->xsend = NULL;
    if (rc != 0) {
        free(m->xrecv);
        m->xrecv = NULL;
        m->xreq  = NULL;
    }
    return rc;
}

static void gc3_setup_release(mca_coll_gc3_module_t *m)
{
    if (m->xreq == NULL) {
        free(m->xrecv);
    } /* else it belongs to the pending exchange */
    m->xrecv = NULL;
    m->xreq  = NULL;
}

/* ---------------------------------------------------------------- agreements */

/* What every rank says before gc3 uses something collectively: whether it is ready, a hash of
 * what it built (plans, settings: different only when the ranks' settings are), and for a
 * plan's creation the key of the call (collective, bytes, in place, backend: different only in
 * an erroneous program). */
typedef struct {
    uint64_t ok, hash, key;
} mca_coll_gc3_card_t;

enum { GC3_AGREE_OK, GC3_AGREE_NOT_READY, GC3_AGREE_DIFFERENT, GC3_AGREE_MISMATCH };

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

/* What decides on each rank whether a call builds a plan and which: the rules (with the algorithm
 * directory's) and the parameters read before a plan is chosen. Building a plan is collective, so
 * ranks must agree on all of it before the first plan, or one could build a plan while another
 * passes the same call on (a hang). Rule locations and file paths are left out: the same rules
 * from files at different paths agree; differing program files are caught by the plan hash. */
static uint64_t mca_coll_gc3_settings_hash(void)
{
    const gc3_rules_t *R = mca_coll_gc3_rules();
    uint64_t           h = GC3_FNV1A_START;

    h = mca_coll_gc3_params_hash(h);
    for (int i = 0; R != NULL && i < R->n; i++) {
        const gc3_rule_t *r   = &R->rules[i];
        int64_t           v[] = {r->coll, r->nodes_lo, r->nodes_hi, r->gpus_lo, r->gpus_hi, r->link,
                                 (int64_t)r->bytes_lo, (int64_t)r->bytes_hi, r->proto, r->proto_set, r->channels,
                                 r->instances, r->chunks_per_peer, r->ranks, r->inplace_ok, r->outofplace_ok,
                                 r->program != NULL};
        h = gc3_fnv1a(h, r->algo, strlen(r->algo) + 1);
        h = gc3_fnv1a(h, v, sizeof(v));
    }
    return h;
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

/* The error record of a set-up that cannot go on (why NULL: reported before): the communicator is
 * unusable for gc3 from here on, every job is dropped (their calls fail, coll_gc3_request.c). */
static void gc3_setup_abandon(mca_coll_gc3_module_t *m, const char *call, const char *why)
{
    if (why != NULL) {
        mca_coll_gc3_report_failure(m, call, why);
    }
    m->unusable = 1;
    if (m->prep != NULL) {
        gc3_exec_prepare_abandon(m->prep);
        m->prep = NULL;
    }
    /* a pending exchange stays pending (it cannot be cancelled); gc3's writes xrecv only when tested */
    m->xreq = NULL;
    gc3_setup_release(m);
    m->oob_pending = NULL;
    for (int i = 0; i < m->njobs; i++) {
        if (m->jobs[i].kind == MCA_COLL_GC3_JOB_PLAN) {
            m->jobs[i].slot->state = MCA_COLL_GC3_SLOT_FAILED;
            snprintf(m->jobs[i].slot->why, sizeof(m->jobs[i].slot->why), "its set-up did not finish");
        } else if (m->exec_state[m->jobs[i].backend] == 2) {
            m->exec_state[m->jobs[i].backend] = -1;
            snprintf(m->exec_why[m->jobs[i].backend], sizeof(m->exec_why[0]), "its set-up did not finish");
        }
    }
    m->njobs = 0;
    m->phase = GC3_PHASE_NONE;
}

/* What the job under way waits for, for the error record. */
static void gc3_setup_waiting(mca_coll_gc3_module_t *m, char *buf, size_t len)
{
    const mca_coll_gc3_job_t *j = &m->jobs[0];
    const char *coll = j->kind == MCA_COLL_GC3_JOB_PLAN ? gc3_coll_desc(j->slot->coll)->mpi_name : "";
    switch (m->phase) {
    case GC3_PHASE_SHAPE:
        snprintf(buf, len, "the exchange of the communicator's shape and settings (the first call gc3 runs on it "
                 "with the %s backend)", j->backend == GC3_BACKEND_CUDA ? "cuda" : "host");
        break;
    case GC3_PHASE_AGREE:
        snprintf(buf, len, "the agreement on the %s plan (the call of %zu bytes that needs it)", coll, j->slot->bytes);
        break;
    case GC3_PHASE_PREPARE:
        snprintf(buf, len, "%s of the %s plan", m->prep != NULL ? gc3_exec_prepare_waiting(m->prep) : "?", coll);
        break;
    default:
        snprintf(buf, len, "the agreement on the connections of the %s plan", coll);
        break;
    }
}

/* The call a job is for, for the error record. */
static const char *gc3_setup_call(const mca_coll_gc3_module_t *m)
{
    if (m->njobs > 0 && m->jobs[0].kind == MCA_COLL_GC3_JOB_PLAN) {
        return gc3_coll_desc(m->jobs[0].slot->coll)->mpi_name;
    }
    return m->head != NULL ? gc3_coll_desc(m->head->coll)->mpi_name : "the set-up";
}

/* ---------------------------------------------------------------- the executor: SHAPE */

/* what every rank says about itself before the first plan of a backend */
typedef struct {
    char           host[64];
    gc3_gpu_info_t gpu;      /* cuda: this rank's GPU (device -1: none) */
    int32_t        max_blocks, exec_ok;
    uint64_t       settings; /* mca_coll_gc3_settings_hash */
} gc3_shape_card_t;

static void gc3_exec_params(mca_coll_gc3_module_t *m, gc3_backend_t backend, gc3_exec_params_t *ep)
{
    gc3_exec_params_default(ep, backend, ompi_comm_rank(m->comm), ompi_comm_size(m->comm));
    ep->node            = m->nodes > 1 ? m->node : NULL;
    ep->net_peer_errors = mca_coll_gc3_component.net_peer_errors;
    ep->oob.ctx         = m;
    ep->oob.iallgather  = mca_coll_gc3_oob_iallgather;
    ep->oob.test        = mca_coll_gc3_oob_test;
    ep->timeout_s       = mca_coll_gc3_component.timeout;
    ep->resident_us     = mca_coll_gc3_component.resident_us;
    ep->fuse            = mca_coll_gc3_component.fuse;
    ep->wait_legacy     = mca_coll_gc3_component.wait_default_stream;
    ep->slots           = mca_coll_gc3_component.fifo_slots;
    ep->device          = m->device >= 0 ? m->device : 0;
    if (mca_coll_gc3_component.slot_bytes > 0) {
        ep->slot_bytes = (size_t)mca_coll_gc3_component.slot_bytes;
    }
}

/* This rank's card: its host and GPU, and an executor made (the one of the plans when all ranks
 * are on one node; node numbers come with the shape). Local: the first call on device buffers is
 * the first time gc3 asks CUDA anything, in the thread that made it. */
static int gc3_shape_post(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    gc3_shape_card_t *c = calloc(1, sizeof(*c));
    gc3_exec_params_t ep;

    m->xsend = (char *)c;
    if (c == NULL) {
        return gc3_setup_post(m, sizeof(*c));
    }
    gethostname(c->host, sizeof(c->host) - 1);
    c->gpu.device = -1;
    if (backend == GC3_BACKEND_CUDA) {
        (void)gc3_gpu_probe(-1, &c->gpu, &m->diag); /* the calling thread's GPU (a cuda backend has one) */
        m->device = c->gpu.device;
    }
    gc3_exec_params(m, backend, &ep);
    c->exec_ok = gc3_exec_create(&ep, &m->diag, &m->exec[backend]) == GC3_OK;
    if (!c->exec_ok) {
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: no %s executor: %s", m->comm->c_name,
                            backend == GC3_BACKEND_CUDA ? "cuda" : "host", m->diag.count ? m->diag.msgs[0] : "?");
    }
    /* the query failed: no limit here (a plan that does not fit is still refused when it runs) */
    c->max_blocks = c->exec_ok ? gc3_exec_max_blocks(m->exec[backend]) : 0;
    c->max_blocks = c->max_blocks > 0 ? c->max_blocks : INT_MAX;
    c->settings   = mca_coll_gc3_settings_hash();
    return gc3_setup_post(m, sizeof(*c));
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
                if (strncmp(all[q].host, all[r].host, sizeof(all[q].host)) == 0) {
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

/* How many thread blocks per rank a plan may have, the same on every rank: coll_gc3_max_blocks,
 * and on GPUs what each one holds at once divided among the ranks that use it (the smallest share).
 * 1 (refused) when ranks share a GPU without MPS and coll_gc3_shared_gpu is false: their processes'
 * kernels would take turns on the GPU (2.4 ms an 8-byte allreduce, two ranks on one H200). */
static int gc3_shape_budget(mca_coll_gc3_module_t *m, gc3_backend_t backend, const gc3_shape_card_t *all, int n)
{
    int budget = INT_MAX, refuse = 0;

    for (int r = 0; backend == GC3_BACKEND_CUDA && r < n; r++) {
        int share = 0, first = -1, second = -1; /* the two lowest ranks on r's GPU */
        for (int q = 0; q < n; q++) {
            if (!strncmp(all[q].host, all[r].host, 64) && !strncmp(all[q].gpu.pci, all[r].gpu.pci, 32)) {
                share++;
                second = first >= 0 && second < 0 ? q : second;
                first  = first < 0 ? q : first;
            }
        }
        budget = all[r].max_blocks / share < budget ? all[r].max_blocks / share : budget;
        if (share > 1 && !all[r].gpu.mps && !mca_coll_gc3_component.shared_gpu && !refuse) {
            refuse = 1;
            snprintf(m->exec_why[backend], sizeof(m->exec_why[0]), "ranks %d and %d share GPU %s without MPS", first,
                     second, all[r].gpu.pci);
            opal_output_verbose(1, mca_coll_gc3_component.output,
                                "coll:gc3: comm %s: ranks %d and %d share GPU %s of %s without MPS: their "
                                "kernels would take turns on it (milliseconds a call), so gc3 does not run "
                                "on this communicator's device buffers: they are staged through host "
                                "memory. Start the MPS daemon (nvidia-cuda-mps-control -d) or set "
                                "coll_gc3_shared_gpu to run gc3 there",
                                m->comm->c_name, first, second, all[r].gpu.pci, all[r].host);
        }
    }
    m->gpu_share = backend == GC3_BACKEND_CUDA ? budget : m->gpu_share;
    if (mca_coll_gc3_component.max_blocks > 0 && mca_coll_gc3_component.max_blocks < budget) {
        budget = mca_coll_gc3_component.max_blocks;
    }
    m->block_budget[backend] = budget;
    opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: plans of at most %d thread blocks per rank",
                        m->comm->c_name, budget);
    return refuse;
}

/* Every rank's card is here: the same decisions everywhere. */
static void gc3_shape_done(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    int                     n = ompi_comm_size(m->comm), ok = 1;
    const gc3_shape_card_t *all = (const gc3_shape_card_t *)m->xrecv, *mine = &all[ompi_comm_rank(m->comm)];

    for (int r = 0; r < n && ok; r++) {
        if (all[r].settings != mine->settings) {
            mca_coll_gc3_warn_disagree(m, "the selection settings (rules file, algorithm directory or coll_gc3 parameters)", r);
            snprintf(m->exec_why[backend], sizeof(m->exec_why[0]), "the ranks' selection settings differ");
            ok = 0;
        } else if (!all[r].exec_ok) {
            snprintf(m->exec_why[backend], sizeof(m->exec_why[0]), "rank %d has no %s executor", r,
                     backend == GC3_BACKEND_CUDA ? "cuda" : "host");
            ok = 0;
        }
    }
    gc3_shape_nodes(m, all, n);
    m->link[backend] = backend == GC3_BACKEND_CUDA ? GC3_LINK_NVLINK : GC3_LINK_HOST;
    for (int a = 0; backend == GC3_BACKEND_CUDA && a < n; a++) {
        for (int b = 0; b < n; b++) {
            /* NVLink when every pair of GPUs of a host has native peer atomics */
            if (all[a].gpu.device != all[b].gpu.device && !strncmp(all[a].host, all[b].host, 64) &&
                gc3_gpu_link(&all[a].gpu, &all[b].gpu) != GC3_LINK_NVLINK) {
                m->link[backend] = GC3_LINK_PCIE;
            }
        }
    }
    /* the NIC matters between nodes (the inter-node transport uses it); hwloc's I/O scan costs
     * tens of milliseconds once per process, so only then or when asked to tell */
    if (backend == GC3_BACKEND_CUDA && (m->nodes > 1 || mca_coll_gc3_component.verbose >= 2)) {
        gc3_gpu_nearest_nic(m->device, m->nic, sizeof(m->nic));
    }
    opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: %d node(s), up to %d ranks per node, %s%s%s",
                        m->comm->c_name, m->nodes, m->gpus, gc3_link_name(m->link[backend]),
                        m->nic[0] ? "; nearest NIC " : "", m->nic);
    if (gc3_shape_budget(m, backend, all, n)) {
        ok = 0;
    }
    if (ok && m->nodes > 1 && m->exec[backend] != NULL) {
        /* the plans' executor knows the nodes (a rank that cannot make it says so at its first plan) */
        gc3_exec_params_t ep;
        gc3_exec_destroy(m->exec[backend]);
        m->exec[backend] = NULL;
        gc3_exec_params(m, backend, &ep);
        (void)gc3_exec_create(&ep, &m->diag, &m->exec[backend]);
    }
    m->exec_state[backend] = ok ? 1 : -1;
}

/* ---------------------------------------------------------------- a plan: AGREE, PREPARE, CONNECT */

/* The program of a plan (libgpuir: the rule's, for this communicator and the plan's calls),
 * verified, within the block budget. */
static int gc3_plan_build(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_slot_t *s, const gc3_rule_t *rule)
{
    gc3_rule_made_t   made;
    gc3_rule_target_t t = {.ranks      = ompi_comm_size(m->comm),
                           /* hierarchical programs number ranks node-major: only when the nodes are
                            * consecutive blocks of equal size; otherwise a flat program (its
                            * connections between nodes go through UCX all the same) */
                           .nodes      = m->regular ? m->nodes : 1,
                           .inplace    = s->inplace,
                           .slots      = mca_coll_gc3_component.fifo_slots,
                           .max_blocks = m->block_budget[s->backend]};
    int               ok = gc3_rule_program(rule, &t, &m->diag, &s->program, &made) == GC3_OK;

    m->job_narrow[0] = '\0';
    m->job_copied[0] = '\0';
    if (ok && made.narrowed) {
        snprintf(m->job_narrow, sizeof(m->job_narrow), " (narrowed from %d x %d to fit %d thread blocks per rank)",
                 made.asked_channels, made.asked_instances, t.max_blocks);
    }
    if (made.copied) {
        snprintf(m->job_copied, sizeof(m->job_copied), ", the input copied into place first (a program for in-place calls)");
    }
    m->job_proto     = made.proto;
    m->job_channels  = made.channels;
    m->job_instances = made.instances;
    return ok;
}

static int gc3_plan_post(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_slot_t *s)
{
    const gc3_rules_t   *R  = mca_coll_gc3_rules();
    mca_coll_gc3_card_t *c  = calloc(1, sizeof(*c));
    uint64_t             key[4] = {(uint64_t)s->coll, (uint64_t)s->bytes, (uint64_t)s->inplace, (uint64_t)s->backend};
    int                  ok = gc3_plan_build(m, s, &R->rules[s->rule]) && m->exec[s->backend] != NULL;

    m->xsend = (char *)c;
    if (c != NULL) {
        c->ok   = (uint64_t)ok;
        c->hash = ok ? gc3_ir_hash(s->program) : 0;
        c->key  = gc3_fnv1a(GC3_FNV1A_START, key, sizeof(key));
    }
    return gc3_setup_post(m, sizeof(*c));
}

/* The verbose line of a plan (level 1), used or not. */
static void gc3_plan_line(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_slot_t *s, int ok)
{
    const gc3_rule_t *rule = &mca_coll_gc3_rules()->rules[s->rule];
    char              range[80], shape[96] = "", net[320] = "", fused[64] = "", lo[32], hi[32], pnote[64] = "";
    const gc3_proto_t proto = (gc3_proto_t)m->job_proto;

    if (m->nodes > 1) {
        snprintf(shape, sizeof(shape), ", %d nodes%s%s", m->nodes,
                 mca_coll_gc3_component.pseudo_nodes > 0 ? " (pseudo-nodes)" : "",
                 m->regular ? "" : " of uneven or interleaved ranks: flat program");
    }
    gc3_format_bytes(rule->bytes_lo, lo, sizeof(lo));
    gc3_format_bytes(rule->bytes_hi, hi, sizeof(hi));
    snprintf(range, sizeof(range), "%s-%s bytes", lo, hi);
    if (ok) {
        int runs = gc3_plan_fused_runs(s->plan);
        gc3_plan_net_describe(s->plan, net, sizeof(net));
        if (runs > 0) {
            snprintf(fused, sizeof(fused), ", %d fused run%s of local steps", runs, runs > 1 ? "s" : "");
        }
    } else {
        snprintf(s->why, sizeof(s->why), "%s", m->diag.count ? m->diag.msgs[0] : "a rank could not build it");
    }
    if (gc3_proto_runs_as(proto) != proto) {
        snprintf(pnote, sizeof(pnote), " (gc3 has no %s: runs as %s)", gc3_proto_name(proto),
                 gc3_proto_name(gc3_proto_runs_as(proto)));
    }
    opal_output_verbose(1, mca_coll_gc3_component.output,
                        "coll:gc3: comm %s: %s %s%s (%s backend, %d ranks, %s%s): %s %s%s, %d channel(s) x %d instance(s)%s, "
                        "rule %s%s%s%s%s%s%s", m->comm->c_name, gc3_coll_desc(s->coll)->mpi_name, range,
                        s->inplace ? ", in place" : "", s->backend == GC3_BACKEND_CUDA ? "cuda" : "host",
                        ompi_comm_size(m->comm), gc3_link_name(m->link[s->backend]), shape, rule->algo,
                        gc3_proto_name(proto), pnote, m->job_channels, m->job_instances, m->job_narrow,
                        rule->where, m->job_copied, ok ? ", verified" : "; NOT USED: ", ok ? "" : s->why, fused,
                        net[0] ? "; " : "", net);
}

/* The end of a plan's set-up: ready, or not used (its calls run without it), or the call fails. */
static void gc3_plan_end(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_slot_t *s, int ok, int line)
{
    if (line) {
        gc3_plan_line(m, s, ok);
    }
    if (!ok) {
        gc3_plan_destroy(s->plan);
        gc3_ir_program_destroy(s->program);
        s->plan    = NULL;
        s->program = NULL;
    }
    s->blocks = ok ? gc3_ir_widest_rank(s->program) : 0;
    s->state  = ok ? MCA_COLL_GC3_SLOT_READY : MCA_COLL_GC3_SLOT_FAILED;
}

/* AGREE is done: the verdict, then the runtime's preparation (or the end). 1 when the job goes on. */
static int gc3_plan_agreed(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_slot_t *s)
{
    const mca_coll_gc3_card_t *v = (const mca_coll_gc3_card_t *)m->xrecv, *mine = &v[ompi_comm_rank(m->comm)];
    int                        peer, a = mca_coll_gc3_verdict(v, ompi_comm_size(m->comm), mine->hash, mine->key, &peer);

    if (a == GC3_AGREE_MISMATCH) {
        opal_output(0, "coll:gc3: comm %s rank %d: %s of %zu bytes%s: rank %d called it with another size or "
                    "mode (an erroneous program): the call fails", m->comm->c_name, ompi_comm_rank(m->comm),
                    gc3_coll_desc(s->coll)->mpi_name, s->bytes, s->inplace ? " in place" : "", peer);
        gc3_plan_end(m, s, 0, 0);
        s->fail_call = 1; /* the call that built it fails; a later, consistent call builds it again */
        return 0;
    }
    if (a == GC3_AGREE_DIFFERENT) {
        char what[96];
        snprintf(what, sizeof(what), "the %s plan (a program file differs?)", gc3_coll_desc(s->coll)->mpi_name);
        mca_coll_gc3_warn_disagree(m, what, peer);
    }
    if (a != GC3_AGREE_OK) {
        gc3_plan_end(m, s, 0, 1);
        return 0;
    }
    if (gc3_exec_prepare_post(m->exec[s->backend], s->program, &m->diag, &m->prep) != GC3_OK) {
        /* nothing posted (the program does not fit the executor: the same on every rank) */
        gc3_plan_end(m, s, 0, 1);
        return 0;
    }
    return 1;
}

/* ---------------------------------------------------------------- the jobs */

static void gc3_job_push(mca_coll_gc3_module_t *m, int kind, int backend, mca_coll_gc3_plan_slot_t *s)
{
    if (m->njobs == m->jobs_cap) {
        int                 ncap = m->jobs_cap ? 2 * m->jobs_cap : 8;
        mca_coll_gc3_job_t *n    = realloc(m->jobs, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            /* nothing can be set up: as if it timed out (the others do time out) */
            gc3_setup_abandon(m, kind == MCA_COLL_GC3_JOB_PLAN ? gc3_coll_desc(s->coll)->mpi_name : "the set-up",
                              "out of host memory for gc3's set-up");
            if (s != NULL) {
                s->state = MCA_COLL_GC3_SLOT_FAILED;
            }
            return;
        }
        m->jobs     = n;
        m->jobs_cap = ncap;
    }
    m->jobs[m->njobs].kind    = kind;
    m->jobs[m->njobs].backend = backend;
    m->jobs[m->njobs].slot    = s;
    m->njobs++;
}

void mca_coll_gc3_setup_exec(mca_coll_gc3_module_t *m, gc3_backend_t backend)
{
    if (m->exec_state[backend] == 0 && !m->unusable) {
        m->exec_state[backend] = 2;
        gc3_job_push(m, MCA_COLL_GC3_JOB_EXEC, backend, NULL);
    }
}

mca_coll_gc3_plan_slot_t *mca_coll_gc3_slot(mca_coll_gc3_module_t *m, int coll, size_t bytes, int inplace,
                                            gc3_backend_t backend, char *why, size_t why_len)
{
    gc3_rules_t              *R = mca_coll_gc3_rules();
    const gc3_rule_t         *rule;
    mca_coll_gc3_plan_slot_t *s;
    int                       idx;

    rule = R == NULL ? NULL
                     : gc3_rules_match_call(R, (gc3_coll_t)coll, m->nodes, m->gpus, m->link[backend], bytes,
                                            ompi_comm_size(m->comm), inplace);
    if (rule == NULL) {
        snprintf(why, why_len, "no rule of %s for %s of %zu bytes on %d node(s) x %d, %s", R ? R->source : "gc3",
                 gc3_coll_desc(coll)->mpi_name, bytes, m->nodes, m->gpus, gc3_link_name(m->link[backend]));
        opal_output_verbose(2, mca_coll_gc3_component.output, "coll:gc3: comm %s: %s: no plan", m->comm->c_name, why);
        return NULL;
    }
    idx = (int)(rule - R->rules);
    for (int i = 0; i < m->nslots; i++) {
        s = m->slots[i];
        if (s->backend == (int)backend && s->coll == coll && s->rule == idx && s->inplace == inplace) {
            if (s->state == MCA_COLL_GC3_SLOT_NEW) { /* built before and given up (the call failed): again */
                s->bytes = bytes;
                s->state = MCA_COLL_GC3_SLOT_BUILDING;
                gc3_job_push(m, MCA_COLL_GC3_JOB_PLAN, backend, s);
            }
            return s;
        }
    }
    if (m->nslots == m->slots_cap) {
        int                        ncap = m->slots_cap ? 2 * m->slots_cap : 8;
        mca_coll_gc3_plan_slot_t **n    = realloc(m->slots, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            snprintf(why, why_len, "out of host memory");
            return NULL;
        }
        m->slots     = n;
        m->slots_cap = ncap;
    }
    s = calloc(1, sizeof(*s));
    if (s == NULL) {
        snprintf(why, why_len, "out of host memory");
        return NULL;
    }
    m->slots[m->nslots++] = s;
    s->backend = backend;
    s->coll    = coll;
    s->rule    = idx;
    s->inplace = inplace;
    s->bytes   = bytes;
    s->state   = MCA_COLL_GC3_SLOT_BUILDING;
    gc3_job_push(m, MCA_COLL_GC3_JOB_PLAN, backend, s);
    return s;
}

/* Start jobs[0]'s first phase. */
static void gc3_job_start(mca_coll_gc3_module_t *m)
{
    mca_coll_gc3_job_t *j = &m->jobs[0];
    int                 rc;

    gc3_diag_cleanup(&m->diag);
    gc3_diag_init(&m->diag);
    if (j->kind == MCA_COLL_GC3_JOB_EXEC) {
        m->phase = GC3_PHASE_SHAPE;
        rc       = gc3_shape_post(m, (gc3_backend_t)j->backend);
    } else {
        m->phase = GC3_PHASE_AGREE;
        rc       = gc3_plan_post(m, j->slot);
    }
    if (rc != 0) {
        gc3_setup_abandon(m, gc3_setup_call(m), "gc3's set-up exchange could not be started (out of host memory, or "
                          "point-to-point messages failed)");
    }
}

static void gc3_job_pop(mca_coll_gc3_module_t *m)
{
    gc3_setup_release(m);
    memmove(m->jobs, m->jobs + 1, (size_t)(m->njobs - 1) * sizeof(*m->jobs));
    m->njobs--;
    m->phase = GC3_PHASE_NONE;
}

/* The exchange of the phase under way is done (1), or over the timeout (abandoned), or still
 * pending (0), or failed (abandoned). */
static int gc3_phase_ready(mca_coll_gc3_module_t *m)
{
    double timeout = mca_coll_gc3_component.timeout;
    int    rc;

    if (m->phase == GC3_PHASE_PREPARE) {
        gc3_status_t st = gc3_exec_prepare_test(m->prep, &m->diag, &m->jobs[0].slot->plan);
        if (st != GC3_IN_PROGRESS) {
            m->prep = NULL;
            /* ok or not, every rank says so in CONNECT (a local failure after the last exchange) */
            m->xsend = calloc(1, sizeof(mca_coll_gc3_card_t));
            if (m->xsend != NULL) {
                ((mca_coll_gc3_card_t *)m->xsend)->ok = st == GC3_OK;
            }
            m->phase = GC3_PHASE_CONNECT;
            if (gc3_setup_post(m, sizeof(mca_coll_gc3_card_t)) != 0) {
                gc3_setup_abandon(m, gc3_setup_call(m), "gc3's set-up exchange could not be started");
            }
            return 0;
        }
    } else {
        rc = mca_coll_gc3_oob_test(m, m->xreq);
        if (rc > 0) {
            m->xreq = NULL;
            return 1;
        }
        if (rc < 0) {
            m->xreq = NULL;
            gc3_setup_abandon(m, gc3_setup_call(m), "gc3's set-up exchange failed; gc3 fails every later call on "
                              "this communicator");
            return 0;
        }
    }
    if (m->oob_pending != NULL && timeout > 0 && mca_coll_gc3_now() - m->oob_posted > timeout) {
        char what[256], why[400];
        gc3_setup_waiting(m, what, sizeof(what));
        snprintf(why, sizeof(why), "timeout after %.1f s waiting for the other ranks to join %s; gc3 fails every later "
                 "call on this communicator", timeout, what);
        gc3_setup_abandon(m, gc3_setup_call(m), why);
    }
    return 0;
}

int mca_coll_gc3_setup_advance(mca_coll_gc3_module_t *m)
{
    int changed = 0;

    if (m->unusable && m->njobs > 0) {
        gc3_setup_abandon(m, NULL, NULL); /* (an exchange or a call failed: reported there) */
        return 1;
    }
    while (m->njobs > 0 && !m->unusable) {
        mca_coll_gc3_job_t *j = &m->jobs[0];
        int                 phase = m->phase;
        if (phase == GC3_PHASE_NONE) {
            gc3_job_start(m);
            changed = 1;
            continue;
        }
        if (!gc3_phase_ready(m)) {
            return changed || m->phase != phase || m->unusable;
        }
        changed = 1;
        switch (phase) {
        case GC3_PHASE_SHAPE:
            gc3_shape_done(m, (gc3_backend_t)j->backend);
            gc3_job_pop(m);
            break;
        case GC3_PHASE_AGREE:
            if (gc3_plan_agreed(m, j->slot)) {
                gc3_setup_release(m);
                m->phase = GC3_PHASE_PREPARE;
            } else {
                gc3_job_pop(m);
            }
            break;
        default: { /* CONNECT */
            const mca_coll_gc3_card_t *v  = (const mca_coll_gc3_card_t *)m->xrecv;
            int                        ok = 1;
            for (int r = 0; r < ompi_comm_size(m->comm) && ok; r++) {
                ok = v[r].ok != 0;
                if (!ok && m->diag.count == 0) {
                    gc3_diag_add(&m->diag, "rank %d could not set up its connections", r);
                }
            }
            gc3_plan_end(m, j->slot, ok, 1);
            gc3_job_pop(m);
            break;
        }
        }
    }
    return changed;
}

void mca_coll_gc3_setup_fini(mca_coll_gc3_module_t *m)
{
    if (m->prep != NULL) {
        gc3_exec_prepare_abandon(m->prep);
        m->prep = NULL;
    }
    gc3_setup_release(m);
    free(m->jobs);
    m->jobs  = NULL;
    m->njobs = 0;
    gc3_diag_cleanup(&m->diag);
}
