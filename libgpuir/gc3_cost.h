/* gc3 / libgpuir: alpha-beta cost model.
 *
 * Predicts the time of a program on a described machine by running it through the
 * scheduling engine with timed events: each message pays alpha (per link class) plus
 * bytes/bandwidth on the sender's egress and receiver's ingress port of that class
 * (ports are shared by all of a rank's connections of the class, so aggregation and
 * contention show); each step pays the interpreter's per-step cost; Simple protocol
 * messages pay a fence+flag cost, LL moves half the bytes per line. Chunks larger than
 * a FIFO slot are cut into tiles that pipeline (at most max_tiles simulated).
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
    double   intra_alpha_us;  /* GPU<->GPU in a node (NVLink/PCIe) */
    double   intra_bw_GBps;   /* per GPU, shared by its intra-node connections */
    double   net_alpha_us;
    double   net_bw_GBps;     /* per GPU (one NIC per GPU) */
    double   step_us;         /* per interpreter step */
    double   sync_us;         /* Simple protocol: fence + flag per message */
    double   local_bw_GBps;   /* local copy/reduce */
    double   launch_us;       /* once per call */
    double   stage_bw_GBps;   /* between nodes: 0 GPUDirect; > 0 host-staged, the GPU<->pinned host
                               * copy on each side at this rate */
    double   stage_alpha_us;  /* host-staged: the receiver's reads of host memory (PCIe round trip) */
    uint64_t slot_bytes;      /* tile size */
    int      max_tiles;
} gc3_machine_t;

/* Defaults for H100/H200-class nodes (NVLink ~360 GB/s per GPU, 25 GB/s NIC per GPU). */
void gc3_machine_default(gc3_machine_t *machine, int nodes, int gpus_per_node);
/* Parse "450GB/s", "25GB/s", "900Gb/s", "1.5us": returns GC3_ERR_PARSE on anything else. */
gc3_status_t gc3_parse_bandwidth(const char *text, double *GBps_p);
gc3_status_t gc3_parse_time_us(const char *text, double *us_p);

/* bytes: the collective's size as nccl-tests/OSU count it (allreduce: buffer size;
 * alltoall: whole send buffer; allgather: output; reduce_scatter: input). */
gc3_status_t gc3_cost_predict(const gc3_ir_program_t *program, const gc3_machine_t *machine,
                              uint64_t bytes, gc3_diag_t *diag, double *time_us_p);

#endif
