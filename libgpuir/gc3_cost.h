/* gc3 / libgpuir: the cost model (doc/design/cost-model.md).
 *
 * Predicts the time of a call of a program on a described machine with an event-driven simulation in
 * time order, step by step as the runtime's interpreter runs it (libgpuir/runtime/interp_core.inl), for
 * every loop of the call (loops past max_loops are extrapolated at the pace of the last ones):
 *
 *   call = the host's part (host_us) + the doorbell and completion flag (signal_us) [+ a launch
 *          (launch_us) for a plan of more blocks than stay resident] [+ the agreement of zero-copy mode
 *          (zc_agree_us)] + the kernel: each block starts start_us after block 0 took the call, runs its
 *          steps, and the rank's last block's count-in (end_us) ends the rank's call. A call's time is the
 *          mean over the ranks (as gc3_bench and OSU report it); the slowest rank's is given too.
 *   step = its waits (its dependency, dep_us for another block's; its message; a free slot: the receiver
 *          gave back the slot `slots` messages ago), the interpreter's control (step_us; a run of fused
 *          local steps pays it once, and fuse_us for its one pass; LL through the staging buffer:
 *          ll_stage_us), then one pass over its data at its block's pace: the sum, per byte, of what the
 *          pass does (a copy, a reduction's second operand, LL's lines, a peer's buffer read in place,
 *          after zc_alpha_us), and a pass that moves bytes over NVLink is a flow through the sender's
 *          egress and the receiver's ingress: the flows of a node share the ports max-min fairly
 *          (intra_bw_GBps; intra_multi_bw_GBps for a GPU sending to several peers, intra_pair_bw_GBps
 *          for two GPUs sending to each other; at most intra_push_bw_GBps in a call of the push form).
 *          Then the step publishes: a Simple message's fence and tail (sync_us) reach the receiver
 *          after intra_alpha_us, LL's lines after ll_alpha_us; a received slot goes back to its sender
 *          after intra_alpha_us. A zero-copy send moves nothing: its receiver
 *          reads the data, and the sender's call ends only once it did.
 *
 * Every parameter has a name, unit, meaning and source in one table (gc3_cost_params, cost.c); the
 * defaults are calibrated against gc3_bench on 2 and 4 x H200 (contrib/gc3-cost-check).
 *
 * Between nodes, two paths (the runtime's coll_gc3_net_path): GPUDirect (stage_bw_GBps 0, the
 * default), where the NIC reads and writes the slots in GPU memory, so a message pays the wire
 * only; host-staged (stage_bw_GBps > 0), where the sender's kernel first copies the message into
 * pinned host memory over its PCIe link (that rank's "up" port) and the receiver's kernel reads
 * it from there (its "down" port, after stage_alpha_us for the reads' round trip), each at
 * stage_bw_GBps: per tile the copies and the wire are in series, tiles pipeline. */
#ifndef GC3_COST_H
#define GC3_COST_H

#include "gc3_ir.h"

typedef struct {
    int      nodes;
    int      gpus_per_node;   /* ranks are numbered node-major: rank / gpus_per_node = node */
    /* the parameters of gc3_cost_params (doubles, by name: gc3_machine_set) */
    double   host_us;             /* the host's part of a call */
    double   signal_us;           /* doorbell to a resident kernel and its completion flag back */
    double   launch_us;           /* a plan launched per call instead: what that adds */
    double   resident_blocks;     /* plans of up to this many blocks per rank stay resident */
    double   zc_agree_us;         /* zero-copy mode: the ranks' agreement before the call */
    double   start_us;            /* from block 0 taking the call to a block's first step */
    double   end_us;              /* the last block's count-in to the host-mapped flag */
    double   step_us;             /* the interpreter's control per step */
    double   dep_us;              /* a dependency on another block's step: its semaphore seen */
    double   fuse_us;             /* a fused run of local steps done in one pass */
    double   sync_us;             /* Simple: a message's barrier, fence, tail and the receiver's header read */
    double   intra_alpha_us;      /* GPU<->GPU in a node: a flag (tail, head) reaches the peer */
    double   ll_alpha_us;         /* LL: a message's lines seen by the peer */
    double   ll_stage_us;         /* LL: a step that is not a plain one-chunk send or receive (staged) */
    double   zc_alpha_us;         /* zero-copy: the first read of the peer's buffer comes back */
    double   intra_bw_GBps;       /* per GPU and direction, shared by its intra-node connections */
    double   intra_multi_bw_GBps; /* the same when the GPU's blocks send to several peers at once */
    double   intra_pair_bw_GBps;  /* the same when it sends to one peer only, which sends to it */
    double   intra_push_bw_GBps;  /* at most this in a call of the push form (zero-copy mode) */
    double   local_bw_GBps;       /* one block: a local copy (its bytes read and written once) */
    double   reduce_bw_GBps;      /* one block: a reduction's extra operand */
    double   write_bw_GBps;       /* one block: writing a peer's slot over NVLink (0: no cost of its own) */
    double   read_bw_GBps;        /* one block: a copy reading a peer's buffer over NVLink (zero-copy) */
    double   read_reduce_bw_GBps; /* one block: a reduction reading a peer's buffer (zero-copy) */
    double   ll_bw_GBps;          /* one block: LL's lines, packed and sent or polled and unpacked */
    double   net_alpha_us;
    double   net_bw_GBps;     /* per GPU (one NIC per GPU) */
    double   stage_bw_GBps;   /* between nodes: 0 GPUDirect; > 0 host-staged, the GPU<->pinned host
                               * copy on each side at this rate */
    double   stage_alpha_us;  /* host-staged: the receiver's reads of host memory (PCIe round trip) */
    uint64_t slot_bytes;      /* the tile when the call does not say (gc3_cost_call_t.tile_bytes 0) */
    int      slots;           /* FIFO slots per connection when the call does not say */
    int      max_loops;       /* loops simulated at most; the rest extrapolated from the last ones */
} gc3_machine_t;

/* Defaults: H200-class nodes (NVLink NV18, calibrated on 2 and 4 x H200; 25 GB/s NIC per GPU). */
void gc3_machine_default(gc3_machine_t *machine, int nodes, int gpus_per_node);

/* The parameters, one table: name, default, unit, what it is and where the value comes from. */
typedef struct {
    const char *name;
    size_t      offset; /* of a double in gc3_machine_t */
    double      value;  /* the default */
    const char *unit;
    const char *what;
    const char *from;
} gc3_cost_param_t;
const gc3_cost_param_t *gc3_cost_params(int *count_p);
/* Set a parameter by name from text (a number, or with a unit: 360GB/s, 0.7us; +X adds X to the value it
 * has): GC3_ERR_PARSE when the value is not one, GC3_ERR_INVALID_PARAM when no parameter has that name. */
gc3_status_t gc3_machine_set(gc3_machine_t *machine, const char *name, const char *value);

/* Parse "450GB/s", "25GB/s", "900Gb/s", "1.5us": returns GC3_ERR_PARSE on anything else. */
gc3_status_t gc3_parse_bandwidth(const char *text, double *GBps_p);
gc3_status_t gc3_parse_time_us(const char *text, double *us_p);

/* How the runtime runs the call (gc3_plan_call_shape gives these for a plan); zeros: the model's own. */
typedef struct {
    uint64_t tile_bytes; /* bytes a chunk moves per loop (the tile T x the datatype's size); 0: the chunk
                          * cut into machine->slot_bytes pieces */
    int      loops;      /* loops of the call; 0: from the tile */
    int      slots;      /* FIFO slots per connection; 0: machine->slots */
    int      zero_copy;  /* the program's sends that gc3_flat_zc_mark marks for this kind of call leave their
                          * data in place on the node (its rrs given a home, as the runtime does) */
    int      zc_mode;    /* zero-copy mode: the ranks agree before the call (zc_agree_us) */
    int      push;       /* zc_mode: sends marked for the push form write into the receiver's buffer */
    int      inplace;    /* the kind of call (which marks apply) */
    int      resident;   /* 1 resident kernel, 0 launched per call, -1: by the blocks (resident_blocks) */
} gc3_cost_call_t;

void gc3_cost_call_default(gc3_cost_call_t *call);

typedef struct {
    double time_us;    /* the call: the mean over the ranks of each rank's time (as gc3_bench and OSU count) */
    double slowest_us; /* the slowest rank's */
    double fixed_us;   /* of it: the host, the signalling, a launch, zero-copy's agreement */
    double kernel_us;  /* of it: the kernel, from block 0 taking the call to the count-in */
    int    loops;      /* of the call */
    int    simulated;  /* loops simulated (the rest extrapolated) */
    double tile_bytes;
    int    msgs, zc_msgs; /* messages of the simulated loops, of them left in place */
} gc3_cost_result_t;

/* bytes: the collective's size as nccl-tests/OSU count it (allreduce: buffer size;
 * alltoall: whole send buffer; allgather: output; reduce_scatter: input). */
gc3_status_t gc3_cost_predict_call(const gc3_ir_program_t *program, const gc3_machine_t *machine,
                                   const gc3_cost_call_t *call, uint64_t bytes, gc3_diag_t *diag,
                                   gc3_cost_result_t *result);
/* gc3_cost_predict_call with gc3_cost_call_default: every message through the FIFOs. */
gc3_status_t gc3_cost_predict(const gc3_ir_program_t *program, const gc3_machine_t *machine,
                              uint64_t bytes, gc3_diag_t *diag, double *time_us_p);

#endif
