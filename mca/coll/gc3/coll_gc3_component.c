/* coll/gc3: component structure and MCA parameters. */
#include "coll_gc3.h"
#include "opal/util/output.h"
#include "opal/mca/base/mca_base_var.h"
#include "opal/runtime/opal_progress.h"

const char *mca_coll_gc3_component_version_string = "Open MPI gc3 collective MCA component version " GC3_VERSION_STRING;

static int mca_coll_gc3_register(void);
static int mca_coll_gc3_open(void);
static int mca_coll_gc3_close(void);

mca_coll_gc3_component_t mca_coll_gc3_component = {
    .super = {
        .collm_version = {
            MCA_COLL_GC3_BASE_VERSION,
            .mca_component_name = "gc3",
            MCA_BASE_MAKE_VERSION(component, GC3_VERSION_MAJOR, GC3_VERSION_MINOR, GC3_VERSION_RELEASE),
            .mca_open_component = mca_coll_gc3_open,
            .mca_close_component = mca_coll_gc3_close,
            .mca_register_component_params = mca_coll_gc3_register,
        },
        .collm_data = {
            MCA_BASE_METADATA_PARAM_CHECKPOINT
        },
        .collm_init_query = mca_coll_gc3_init_query,
        .collm_comm_query = mca_coll_gc3_comm_query,
    },
    .priority = 0,
    .verbose = 0,
    .output = -1,
    .backend = MCA_COLL_GC3_BACKEND_AUTO,
    .timeout = 300.0,
    .resident_us = GC3_RESIDENT_US_DEFAULT,
    .fuse = true,
    .wait_default_stream = true,
    .shared_gpu = false,
    .max_bytes = 0,
    .slots = 8,
    .slot_bytes = 0,
    .enable_allreduce = true,
    .enable_alltoall = true,
    .enable_allgather = true,
    .enable_reduce_scatter_block = true,
    .stage_host = false,
    .fallback = MCA_COLL_GC3_FALLBACK_STAGE,
};

/* An integer parameter whose values are named (ompi_info lists the names). */
static void mca_coll_gc3_register_enum(mca_base_component_t *c, const char *name,
                                       const mca_base_var_enum_value_t *values, const char *help, int *storage)
{
    char                 enum_name[64];
    mca_base_var_enum_t *e = NULL;
    snprintf(enum_name, sizeof(enum_name), "coll_gc3_%s_values", name);
    mca_base_var_enum_create(enum_name, values, &e);
    (void)mca_base_component_var_register(c, name, help, MCA_BASE_VAR_TYPE_INT, e, 0, 0, OPAL_INFO_LVL_6,
                                          MCA_BASE_VAR_SCOPE_READONLY, storage);
    OBJ_RELEASE(e);
}

static int mca_coll_gc3_register(void)
{
    mca_base_component_t *c = &mca_coll_gc3_component.super.collm_version;

    mca_coll_gc3_component.priority = 0;
    (void)mca_base_component_var_register(c, "priority",
        "Priority of coll/gc3. It takes the collectives it implements only when its priority is above the "
        "other coll components of the communicator (tuned: 30), e.g. 90; a negative value disables it",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.priority);
    mca_coll_gc3_component.verbose = 0;
    (void)mca_base_component_var_register(c, "verbose",
        "Verbosity of coll/gc3: 0 silent; 1 which algorithm each (collective, size class) uses and why, and a "
        "collective no other component provides; 2 also every call passed on or staged and why; 3 every "
        "communicator gc3 is queried for and enabled on",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_LOCAL,
        &mca_coll_gc3_component.verbose);
    {
        static const mca_base_var_enum_value_t backends[] = {
            {MCA_COLL_GC3_BACKEND_AUTO, "auto"}, {MCA_COLL_GC3_BACKEND_CUDA, "cuda"}, {MCA_COLL_GC3_BACKEND_HOST, "host"},
            {0, NULL}};
        mca_coll_gc3_component.backend = MCA_COLL_GC3_BACKEND_AUTO;
        mca_coll_gc3_register_enum(c, "backend", backends,
            "Where gc3 runs collectives: auto (device buffers on the GPU, host buffers passed on), cuda (the same), "
            "host (also runs host buffers itself with the host backend: lets machines without GPUs exercise gc3; "
            "device buffers are then staged)",
            &mca_coll_gc3_component.backend);
    }
    mca_coll_gc3_component.timeout = 300.0;
    (void)mca_base_component_var_register(c, "timeout",
        "Seconds a collective may make no progress before it fails with MPI_ERR_OTHER naming the rank, thread block, "
        "step and what it waited for, and seconds each exchange of a communicator's set-up may wait for the other "
        "ranks (0: wait forever; a negative value is reported and replaced by 300)",
        MCA_BASE_VAR_TYPE_DOUBLE, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_gc3_component.timeout);
    mca_coll_gc3_component.rules_file = "";
    (void)mca_base_component_var_register(c, "rules_file",
        "Selection rules: which algorithm runs which collective, size and machine shape (format in the README; "
        "gc3_info prints the resolved table). Empty: the built-in rules. A file that cannot be used is reported "
        "with its line numbers and the built-in rules are used",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.rules_file);
    mca_coll_gc3_component.algorithm_dir = "";
    (void)mca_base_component_var_register(c, "algorithm_dir",
        "Directory of MSCCL-format XML programs (*.xml, e.g. written by gc3c gen or for MSCCL). Each one that "
        "reads and verifies becomes a rule ahead of the rules file: it runs its collective on communicators of "
        "its rank count, for calls in the size range of its minBytes/maxBytes and in the modes (in place, out of "
        "place) it declares. Files that cannot be used are reported and skipped. Empty: none",
        MCA_BASE_VAR_TYPE_STRING, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.algorithm_dir);
    mca_coll_gc3_component.max_bytes = 0;
    (void)mca_base_component_var_register(c, "max_bytes",
        "Collectives of more bytes than this are passed on (device buffers staged); 0: no limit (a negative "
        "value is reported and replaced by 0)",
        MCA_BASE_VAR_TYPE_LONG, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_gc3_component.max_bytes);
    mca_coll_gc3_component.max_blocks = 0;
    (void)mca_base_component_var_register(c, "max_blocks",
        "At most this many thread blocks (one SM each on a GPU) per rank in one plan: a plan of the rules' "
        "algorithms that is wider is narrowed (instances halved, then channels) and the verbose line says so; "
        "a wider program of the algorithm directory is not used. 0: what the GPU holds at once, shared among the "
        "ranks that use it (the host backend: no limit). A negative value is reported and replaced by 0",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.max_blocks);
    mca_coll_gc3_component.slots = 8;
    (void)mca_base_component_var_register(c, "fifo_slots",
        "FIFO slots per connection (2..1024; other values are reported and replaced by 8); compiled programs are "
        "scheduled for this many",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_gc3_component.slots);
    mca_coll_gc3_component.slot_bytes = 0;
    (void)mca_base_component_var_register(c, "slot_bytes",
        "Bytes of one FIFO slot, 4096..1073741824 (0: 1 MiB on GPUs, 256 KiB on the host backend; other values "
        "are reported and replaced by 0)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY, &mca_coll_gc3_component.slot_bytes);
    mca_coll_gc3_component.resident_us = GC3_RESIDENT_US_DEFAULT;
    (void)mca_base_component_var_register(c, "resident_us",
        "GPUs: after a call of a plan of at most " GC3_STR(GC3_RESIDENT_MAX_BLOCKS) " thread blocks on one node, its "
        "interpreter kernel stays on the GPU this many microseconds and takes the next call from host-mapped memory, "
        "without a kernel launch (5-15 us less per call). Meanwhile it occupies one SM per thread block (up to "
        GC3_STR(GC3_RESIDENT_MAX_BLOCKS) "), and cudaDeviceSynchronize or cudaFree in "
        "the application waits until it has left. 0: one launch per call (a negative value is reported and "
        "replaced by " GC3_STR(GC3_RESIDENT_US_DEFAULT) ")",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.resident_us);
    mca_coll_gc3_component.fuse = true;
    (void)mca_base_component_var_register(c, "fuse",
        "Run a thread block's local copy or reduction, and the reductions of received chunks into the same "
        "chunks that follow it, as one pass over memory once all their inputs are there (the same result, "
        "elementwise), for chunks of up to " GC3_STR(GC3_FUSE_BYTES) " bytes (larger ones run step by step, "
        "faster there). false: step by step, as the program is written",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.fuse);
    mca_coll_gc3_component.wait_default_stream = true;
    (void)mca_base_component_var_register(c, "wait_default_stream",
        "GPUs: each call first waits for the work queued on the legacy default stream before it (cudaMemset, "
        "kernels on stream 0, CuPy's default stream), so it reads what that work wrote. false skips that check "
        "(about 1.5 us a call on H200): only for applications that synchronize the streams writing the buffers "
        "before calling MPI, as CUDA-aware MPI requires",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.wait_default_stream);
    mca_coll_gc3_component.shared_gpu = false;
    (void)mca_base_component_var_register(c, "shared_gpu",
        "Ranks of a communicator that share a GPU: false runs gc3 there only when the GPU is shared through MPS "
        "(without it the processes' kernels take turns on the GPU, about 2.4 ms an 8-byte allreduce with two "
        "ranks on an H200, so their device buffers are staged through host memory; verbose 1 says so); true "
        "runs gc3 anyway",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.shared_gpu);
    mca_coll_gc3_component.enable_allreduce = true;
    (void)mca_base_component_var_register(c, "enable_allreduce",
        "Run MPI_Allreduce with gc3 (false: always pass it on, device buffers staged)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.enable_allreduce);
    mca_coll_gc3_component.enable_alltoall = true;
    (void)mca_base_component_var_register(c, "enable_alltoall",
        "Run MPI_Alltoall with gc3 (false: always pass it on, device buffers staged)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.enable_alltoall);
    mca_coll_gc3_component.enable_allgather = true;
    (void)mca_base_component_var_register(c, "enable_allgather",
        "Run MPI_Allgather with gc3 (false: always pass it on, device buffers staged)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.enable_allgather);
    mca_coll_gc3_component.enable_reduce_scatter_block = true;
    (void)mca_base_component_var_register(c, "enable_reduce_scatter_block",
        "Run MPI_Reduce_scatter_block with gc3, out of place (false: always pass it on, device buffers staged)",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.enable_reduce_scatter_block);
    {
        static const mca_base_var_enum_value_t policies[] = {{MCA_COLL_GC3_FALLBACK_STAGE, "stage"},
                                                             {MCA_COLL_GC3_FALLBACK_PASS, "pass"},
                                                             {MCA_COLL_GC3_FALLBACK_ERROR, "error"},
                                                             {0, NULL}};
        mca_coll_gc3_component.fallback = MCA_COLL_GC3_FALLBACK_STAGE;
        mca_coll_gc3_register_enum(c, "fallback", policies,
            "What happens to a call on device buffers that gc3 does not run itself (another collective, a "
            "user-defined datatype or op, managed memory, no plan): stage (copy the buffers through host memory "
            "around the previous coll module: correct on any Open MPI), pass (give that module the device "
            "buffers: only for a CUDA-aware Open MPI), error (fail the call with MPI_ERR_UNSUPPORTED_OPERATION, "
            "naming it: to be sure nothing runs slowly unnoticed)",
            &mca_coll_gc3_component.fallback);
    }
    mca_coll_gc3_component.pseudo_nodes = 0;
    (void)mca_base_component_var_register(c, "pseudo_nodes",
        "Test and demo feature: split the ranks of each host into pseudo-nodes of this many consecutive ranks, so "
        "that gc3 treats them as separate nodes (connections between them through UCX and the proxy thread, "
        "hierarchical allreduce and two-step alltoall) on one machine. 0: off, nodes are hosts (a negative value "
        "is reported and replaced by 0)",
        MCA_BASE_VAR_TYPE_INT, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.pseudo_nodes);
    mca_coll_gc3_component.net_peer_errors = true;
    (void)mca_base_component_var_register(c, "net_peer_errors",
        "Between nodes: create UCX endpoints that report a dead or unreachable peer at once (the call fails "
        "naming it). UCX then uses only transports that can detect that (InfiniBand/RoCE, TCP; not its "
        "shared-memory ones, so pseudo-nodes on one host go over TCP loopback). false: any transport, and a dead "
        "peer is caught by coll_gc3_timeout",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_6, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.net_peer_errors);
    mca_coll_gc3_component.stage_host = false;
    (void)mca_base_component_var_register(c, "stage_host",
        "Test feature, never for production: treat every host buffer as device memory, so that the staging path "
        "(copy through host memory around the previous module) runs on machines without GPUs",
        MCA_BASE_VAR_TYPE_BOOL, NULL, 0, 0, OPAL_INFO_LVL_9, MCA_BASE_VAR_SCOPE_READONLY,
        &mca_coll_gc3_component.stage_host);
    return OMPI_SUCCESS;
}

/* Values outside what gc3 can use are reported (once per process) and replaced by the default,
 * instead of failing every plan later without a word. */
static void mca_coll_gc3_check_params(void)
{
    mca_coll_gc3_component_t *c = &mca_coll_gc3_component;

    if (c->slots < 2 || c->slots > 1024) {
        opal_output(0, "coll:gc3: coll_gc3_fifo_slots=%d is outside 2..1024: using 8", c->slots);
        c->slots = 8;
    }
    if (c->slot_bytes != 0 && (c->slot_bytes < 4096 || c->slot_bytes > (1 << 30))) {
        opal_output(0, "coll:gc3: coll_gc3_slot_bytes=%d is outside 4096..1073741824 (0: the backend's default): "
                    "using the default", c->slot_bytes);
        c->slot_bytes = 0;
    }
    if (!(c->timeout >= 0)) { /* negative or NaN */
        opal_output(0, "coll:gc3: coll_gc3_timeout=%g is negative: using 300 s (0 waits forever)", c->timeout);
        c->timeout = 300.0;
    }
    if (c->resident_us < 0) {
        opal_output(0, "coll:gc3: coll_gc3_resident_us=%d is negative: using %d (0 launches a kernel per call)",
                    c->resident_us, GC3_RESIDENT_US_DEFAULT);
        c->resident_us = GC3_RESIDENT_US_DEFAULT;
    }
    if (c->pseudo_nodes < 0) {
        opal_output(0, "coll:gc3: coll_gc3_pseudo_nodes=%d is negative: off (0)", c->pseudo_nodes);
        c->pseudo_nodes = 0;
    }
    if (c->max_blocks < 0) {
        opal_output(0, "coll:gc3: coll_gc3_max_blocks=%d is negative: what the GPU holds (0)", c->max_blocks);
        c->max_blocks = 0;
    }
    if (c->max_bytes < 0) {
        opal_output(0, "coll:gc3: coll_gc3_max_bytes=%ld is negative: no limit (0)", c->max_bytes);
        c->max_bytes = 0;
    }
}

static int mca_coll_gc3_open(void)
{
    if (mca_coll_gc3_check_release() != OMPI_SUCCESS) {
        return OMPI_ERR_NOT_AVAILABLE;
    }
    mca_coll_gc3_component.output = opal_output_open(NULL);
    opal_output_set_verbosity(mca_coll_gc3_component.output, mca_coll_gc3_component.verbose);
    mca_coll_gc3_check_params();
    opal_progress_register(mca_coll_gc3_progress); /* completes gc3's nonblocking calls */
    return OMPI_SUCCESS;
}

static int mca_coll_gc3_close(void)
{
    opal_progress_unregister(mca_coll_gc3_progress);
    gc3_rules_destroy(mca_coll_gc3_component.rules);
    mca_coll_gc3_component.rules = NULL;
    if (mca_coll_gc3_component.output >= 0) {
        opal_output_close(mca_coll_gc3_component.output);
        mca_coll_gc3_component.output = -1;
    }
    return OMPI_SUCCESS;
}
