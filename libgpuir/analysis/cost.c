/* gc3 / libgpuir: the cost model (see gc3_cost.h and doc/design/cost-model.md). */
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "gc3_cost.h"
#include "gc3_evheap.h"

#define P(field) offsetof(gc3_machine_t, field)

/* Every parameter of the model, its default and where that comes from, in one table. The call's fixed part
 * is from coll_gc3_breakdown and probes (doc/performance.md, "Where a small call's time goes"); the rest
 * was fitted (contrib/gc3-cost-fit) to gc3_bench's CSVs of 2 and 4 x H200 that contrib/gc3-cost-check
 * compares the model with, each as the runtime of its commit ran it: doc/design/cost-model.md. */
static const gc3_cost_param_t gc3_cost_param_table[] = {
    { "host_us", P(host_us), 2.9, "us",
      "the host's part of a call: find the plan, start, the default-stream check, post, return",
      "coll_gc3_breakdown, 2 x H200: 0.57 + 0.08 + 1.97 + 0.14 + 0.17 us" },
    { "signal_us", P(signal_us), 3.9, "us",
      "the doorbell to a resident kernel and its completion flag back across PCIe",
      "coll_gc3_breakdown, 2 x H200: 3.6-5.2 us of 'posted to completion seen' besides the GPU's exchange" },
    { "launch_us", P(launch_us), 12.0, "us",
      "a plan of more blocks than stay resident: its launch per call, cold blocks",
      "coll_gc3_breakdown with resident_us 0: post 6.8 us (0.14), signalling +1.4 us, exchange +3.8 us" },
    { "resident_blocks", P(resident_blocks), 64, "blocks",
      "plans of up to this many thread blocks per rank stay resident", "GC3_RESIDENT_MAX_BLOCKS" },
    { "zc_agree_us", P(zc_agree_us), 0.0, "us", "zero-copy mode: the ranks' agreement (their boards) before the call",
      "fitted: nothing measurable (0.02 us)" },
    { "start_us", P(start_us), 1.3, "us",
      "from block 0 taking the call to a block's first step (the relay, the first step's set-up)",
      "fitted; GC3_CUDA_TRACE of an 8-byte call: the relay 0.4-0.6 us, a first step 1.1 us after its block starts" },
    { "end_us", P(end_us), 1.2, "us", "the last block's count-in to the host-mapped flag",
      "probe, 1 x H200: 1161-1174 ns (before b66b1ec every block fenced: gc3-cost-check adds 1.2 us for that code)" },
    { "step_us", P(step_us), 0.24, "us", "the interpreter's control per step (its waits, the chunk table, publish)",
      "fitted" },
    { "dep_us", P(dep_us), 0.9, "us", "a wait on another block's step: its semaphore in device memory read",
      "fitted (one-shot and all-pairs: the reducing blocks' waits)" },
    { "fuse_us", P(fuse_us), 2.6, "us",
      "a run of fused local steps done in one pass (chunks up to 16 KB), whatever its operands",
      "fitted; GC3_CUDA_TRACE, 8 B: 2.0 us for four operands on 4 x H200, 1.6-2.3 us for two on 2 x H200" },
    { "sync_us", P(sync_us), 3.1, "us",
      "Simple: a message's barrier, system fence and tail store, the receiver's header read (beyond intra_alpha_us)",
      "fitted" },
    { "intra_alpha_us", P(intra_alpha_us), 0.7, "us", "a flag (tail, head) stored by one GPU seen by a peer's poll",
      "flag ping-pong between two H200s: 0.62 us one way" },
    { "ll_alpha_us", P(ll_alpha_us), 1.8, "us", "LL: a message's lines and flags seen and taken by the receiver",
      "fitted; GC3_CUDA_TRACE, 8 B: out at 2.1 us, seen at 2.7-3.2, received at 3.8-4.5" },
    { "ll_stage_us", P(ll_stage_us), 2.1, "us",
      "LL: a step other than a plain one-chunk send or receive goes through the staging buffer (a pass and a barrier)",
      "fitted: one-shot on 2 ranks (send + rrc) against direct alltoall (send + receive)" },
    { "zc_alpha_us", P(zc_alpha_us), 1.3, "us",
      "zero-copy: the first read of the sender's buffer comes back (a round trip)", "fitted" },
    { "intra_bw_GBps", P(intra_bw_GBps), 370.0, "GB/s",
      "NVLink per GPU and direction, shared max-min fairly by its blocks",
      "fitted; SM copy to a peer 349-359 GB/s, the copy engines 377-388 GB/s" },
    { "intra_multi_bw_GBps", P(intra_multi_bw_GBps), 300.0, "GB/s",
      "the same when the GPU's blocks send to several peers of the node at once (all-to-all traffic)",
      "probe, 4 x H200, every GPU writing to every other: 301 GB/s per GPU with 64 blocks; gc3's direct alltoall "
      "294-304" },
    { "intra_pair_bw_GBps", P(intra_pair_bw_GBps), 285.0, "GB/s",
      "the same when the GPU sends to one peer only and that peer to it (2 GPUs: both ways at once)",
      "fitted: direct alltoall on 2 x H200, 8 against 16 instances at the same bytes per block" },
    { "intra_push_bw_GBps", P(intra_push_bw_GBps), 320.0, "GB/s",
      "at most this per port in a call of the push form (zero-copy mode: the blocks write into the peers' buffers; "
      "0: no cap of its own)",
      "fitted: the ring's push form on 4 x H200 (zc-push-rules-allreduce-4xh200); its cause is not known" },
    { "local_bw_GBps", P(local_bw_GBps), 82.0, "GB/s", "one block: a copy's pass (each byte read and written once)",
      "fitted" },
    { "reduce_bw_GBps", P(reduce_bw_GBps), 20.0, "GB/s", "one block: a reduction's second operand, on top of the copy",
      "fitted (a reduction keeps one vector in flight per thread, a copy four)" },
    { "write_bw_GBps", P(write_bw_GBps), 0.0, "GB/s",
      "one block: writing a peer's FIFO slot, on top of the copy (0: nothing)",
      "fitted: nothing (the writes are posted; the ports bound them)" },
    { "read_bw_GBps", P(read_bw_GBps), 41.0, "GB/s",
      "one block: a copy reading a peer's buffer over NVLink (zero-copy), on top", "fitted" },
    { "read_reduce_bw_GBps", P(read_reduce_bw_GBps), 14.2, "GB/s",
      "one block: a reduction reading a peer's buffer over NVLink (zero-copy), on top", "fitted" },
    { "ll_bw_GBps", P(ll_bw_GBps), 13.6, "GB/s",
      "one block: LL's 8-byte lines of 4 data bytes, packed and sent, or polled and unpacked", "fitted" },
    { "net_alpha_us", P(net_alpha_us), 3.0, "us", "between nodes: a message's latency", "assumed (not measured)" },
    { "net_bw_GBps", P(net_bw_GBps), 25.0, "GB/s", "between nodes: one NIC per GPU", "a 200 Gb/s NIC (assumed)" },
    { "stage_bw_GBps", P(stage_bw_GBps), 0.0, "GB/s", "between nodes: 0 GPUDirect; > 0 host-staged copies at this rate",
      "coll_gc3_net_path" },
    { "stage_alpha_us", P(stage_alpha_us), 1.0, "us", "host-staged: the receiver's reads of pinned host memory",
      "assumed (PCIe round trip)" },
};

#undef P

const gc3_cost_param_t *gc3_cost_params(int *count_p)
{
    *count_p = (int)(sizeof(gc3_cost_param_table) / sizeof(gc3_cost_param_table[0]));
    return gc3_cost_param_table;
}

void gc3_machine_default(gc3_machine_t *m, int nodes, int gpus_per_node)
{
    int                     n;
    const gc3_cost_param_t *t = gc3_cost_params(&n);

    memset(m, 0, sizeof(*m));
    m->nodes         = nodes;
    m->gpus_per_node = gpus_per_node;
    for (int i = 0; i < n; i++) {
        *(double *)((char *)m + t[i].offset) = t[i].value;
    }
    m->slot_bytes = 1u << 20; /* the cuda backend's default slot */
    m->slots      = 4;        /* GC3_FIFO_SLOTS_DEFAULT */
    m->max_loops  = 64;
}

static gc3_status_t gc3_parse_unit(const char *text, double *v_p, char **unit_p)
{
    char  *end;
    double v = strtod(text, &end);
    if (end == text || !isfinite(v) || v <= 0) {
        return GC3_ERR_PARSE;
    }
    while (*end == ' ') {
        end++;
    }
    *v_p    = v;
    *unit_p = end;
    return GC3_OK;
}

gc3_status_t gc3_parse_bandwidth(const char *text, double *GBps_p)
{
    double v;
    char  *u;
    if (gc3_parse_unit(text, &v, &u) != GC3_OK) {
        return GC3_ERR_PARSE;
    }
    if (strcmp(u, "GB/s") == 0 || strcmp(u, "") == 0) {
        *GBps_p = v;
    } else if (strcmp(u, "Gb/s") == 0 || strcasecmp(u, "gbps") == 0) {
        *GBps_p = v / 8.0;
    } else if (strcmp(u, "MB/s") == 0) {
        *GBps_p = v / 1000.0;
    } else if (strcmp(u, "TB/s") == 0) {
        *GBps_p = v * 1000.0;
    } else {
        return GC3_ERR_PARSE;
    }
    return GC3_OK;
}

gc3_status_t gc3_parse_time_us(const char *text, double *us_p)
{
    double v;
    char  *u;
    if (gc3_parse_unit(text, &v, &u) != GC3_OK) {
        return GC3_ERR_PARSE;
    }
    if (strcmp(u, "us") == 0 || strcmp(u, "") == 0) {
        *us_p = v;
    } else if (strcmp(u, "ns") == 0) {
        *us_p = v / 1000.0;
    } else if (strcmp(u, "ms") == 0) {
        *us_p = v * 1000.0;
    } else {
        return GC3_ERR_PARSE;
    }
    return GC3_OK;
}

gc3_status_t gc3_machine_set(gc3_machine_t *m, const char *name, const char *value)
{
    int                     n;
    const gc3_cost_param_t *t = gc3_cost_params(&n);

    for (int i = 0; i < n; i++) {
        if (strcmp(t[i].name, name) == 0) {
            double *field = (double *)((char *)m + t[i].offset), v;
            char   *end;
            if (value[0] == '+') { /* +X: added to the value it has (a time of an older code's path) */
                v = strtod(value + 1, &end);
                if (end == value + 1 || *end != '\0' || !isfinite(v)) {
                    return GC3_ERR_PARSE;
                }
                *field += v;
                return GC3_OK;
            }
            if (strcmp(t[i].unit, "GB/s") == 0) {
                if (strcmp(value, "0") == 0) { /* (stage_bw_GBps 0: GPUDirect) */
                    v = 0;
                } else if (gc3_parse_bandwidth(value, &v) != GC3_OK) {
                    return GC3_ERR_PARSE;
                }
            } else if (strcmp(t[i].unit, "us") == 0 && strcmp(value, "0") != 0) {
                if (gc3_parse_time_us(value, &v) != GC3_OK) {
                    return GC3_ERR_PARSE;
                }
            } else {
                v = strtod(value, &end);
                if (end == value || *end != '\0' || !isfinite(v) || v < 0) {
                    return GC3_ERR_PARSE;
                }
            }
            *field = v;
            return GC3_OK;
        }
    }
    return GC3_ERR_INVALID_PARAM;
}

void gc3_cost_call_default(gc3_cost_call_t *call)
{
    memset(call, 0, sizeof(*call));
    call->resident = -1;
}

/* ------------------------------------------------------------------ the engine
 *
 * Event-driven, in time order. A block tries its next step when it is free; it waits for what the
 * step needs (its dependency, its message, a free slot), then pays the step's control and starts its
 * pass over the data. A pass that moves bytes over NVLink is a flow through two ports (the sender's
 * egress, the receiver's ingress; zero-copy: the owner's egress, the reader's ingress): the flows of a
 * node share the ports max-min fairly (progressive filling), each no faster than its block's own pace.
 * Other passes take their block's time. At its end the step publishes: a message's flag reaches the
 * receiver after a latency, a received slot goes back to its sender after one. */

typedef struct {
    double arrival;      /* its tail (LL: its lines) seen by the receiver */
    double staged_bytes; /* host-staged between nodes: what the receiver reads from host memory */
    int    zc;           /* left in place: the receiver reads it from the sender's buffer */
    int    pushed;       /* zero-copy mode, the push form: written into the receiving step's destination */
    int    held;         /* its sender's call ends only once the receiver took it (in place, to another node) */
    int    from;         /* the sender's rank */
    long   seq;          /* its number on the connection */
} gc3_costmsg_t;

typedef struct {
    int            sender, receiver; /* global blocks */
    gc3_costmsg_t *ring;             /* slots messages: pushed at the sender's end, popped at the receiver's */
    int            head, count;
    double        *release; /* per slot: when the receiver's head for it reaches the sender */
} gc3_costconn_t;

enum { GC3_CB_READY, GC3_CB_WAIT, GC3_CB_PASS, GC3_CB_DONE };

typedef struct {
    int    loop, step; /* the next step */
    int    state;
    double clock;                /* free from then on */
    int    send_conn, recv_conn; /* -1 none */
    long   done;                 /* steps ended, all loops */
    long   sent;                 /* messages sent */
    double last_back;            /* when the receiver took its last message (zero-copy, other nodes) */
    int    fuse_left;
    int    queued;  /* a try is in the event queue */
    int   *waiters; /* blocks waiting for a step of this one */
    int    nwaiters, cap_waiters;
    /* the pass under way */
    double p_start, p_bytes, p_per_byte, p_nvl;
    int    p_src, p_dst, p_zc_out, p_push, p_net;
    int    p_phase; /* 1: to start, 2: a flow in flight, 3: ends at its own pace */
} gc3_costblk_t;

typedef struct {
    int    g;       /* its block */
    int    port[2]; /* egress, ingress (rank * 2 + 0/1) */
    double rem;     /* NVLink bytes still to move */
    double cap;     /* its block's pace, bytes per microsecond (INFINITY: none) */
    double rate;    /* its share now */
    int    node;
} gc3_costflow_t;

typedef struct {
    const gc3_flat_program_t *flat;
    const gc3_flat_tb_t      *tbs;
    const gc3_flat_step_t    *steps;
    const gc3_machine_t      *m;
    const gc3_cost_call_t    *call;
    double                    tile_bytes; /* bytes of one chunk in one loop */
    int                       ll, slots, nloops;
    gc3_costblk_t            *b;
    gc3_costconn_t           *conns;
    int                       nconns;
    double                   *done_at;  /* per (loop, global step) */
    double                   *loop_end; /* per rank and loop: its last block's end of it */
    double                   *port_bw;  /* per rank: its NVLink bandwidth */
    double                   *net_port; /* per rank x 4: net egress, net ingress, PCIe up, PCIe down (reserved) */
    gc3_costflow_t           *flows;
    int                       nflows, cap_flows;
    double                    now;
    gc3_evheap_t              heap; /* the blocks' next events, by time */
    int                       msgs, zc_msgs, finished, oom;
} gc3_costsim_t;

/* A transfer of `bytes` at `GBps` on one reserved port, not before t: when it ends. */
static double gc3_cost_port(double *port, double t, double bytes, double GBps)
{
    double start = *port > t ? *port : t;
    *port        = start + bytes / (GBps * 1e3);
    return *port;
}

/* microseconds per byte at GBps */
static double gc3_cost_per_byte(double GBps)
{
    return GBps > 0 ? 1.0 / (GBps * 1e3) : 0.0;
}

static void gc3_cost_push(gc3_costsim_t *x, int g, double t)
{
    if (gc3_evheap_push(&x->heap, g, t) != GC3_OK) {
        x->oom = 1;
    }
}

/* The block tries its next step at t (once in the queue at a time: a later try replaces none). */
static void gc3_cost_try_at(gc3_costsim_t *x, int g, double t)
{
    if (!x->b[g].queued) {
        x->b[g].queued = 1;
        gc3_cost_push(x, g, t > x->now ? t : x->now);
    }
}

static void gc3_cost_wait_on(gc3_costsim_t *x, int target, int g)
{
    gc3_costblk_t *t = &x->b[target];
    for (int i = 0; i < t->nwaiters; i++) {
        if (t->waiters[i] == g) {
            return;
        }
    }
    if (t->nwaiters == t->cap_waiters) {
        int  ncap = t->cap_waiters ? 2 * t->cap_waiters : 4;
        int *n    = realloc(t->waiters, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            x->oom = 1;
            return;
        }
        t->waiters     = n;
        t->cap_waiters = ncap;
    }
    t->waiters[t->nwaiters++] = g;
    x->b[g].state             = GC3_CB_WAIT;
}

static void gc3_cost_wake(gc3_costsim_t *x, int target)
{
    gc3_costblk_t *t = &x->b[target];
    int            n = t->nwaiters;
    t->nwaiters      = 0;
    for (int i = 0; i < n; i++) {
        if (x->b[t->waiters[i]].state == GC3_CB_WAIT) {
            x->b[t->waiters[i]].state = GC3_CB_READY;
            gc3_cost_try_at(x, t->waiters[i], x->now);
        }
    }
}

/* The shares of the flows of one node (progressive filling: every flow not yet fixed rises alike until
 * it reaches its block's pace or one of its ports is full). */
static void gc3_cost_share(gc3_costsim_t *x, int node)
{
    const int gpn = x->m->gpus_per_node;
    double    R[2 * GC3_IR_MAX_GPUS];
    int       n[2 * GC3_IR_MAX_GPUS], left = 0;
    int      *fixed;

    if (gpn > GC3_IR_MAX_GPUS) {
        return;
    }
    fixed = calloc((size_t)x->nflows + 1, sizeof(int));
    if (fixed == NULL) {
        x->oom = 1;
        return;
    }
    for (int k = 0; k < 2 * gpn; k++) {
        R[k] = x->port_bw[node * gpn + k / 2] * 1e3; /* bytes per microsecond */
        n[k] = 0;
    }
    for (int i = 0; i < x->nflows; i++) {
        if (x->flows[i].node != node) {
            fixed[i] = 1;
            continue;
        }
        for (int k = 0; k < 2; k++) {
            n[x->flows[i].port[k] - 2 * node * gpn]++;
        }
        left++;
    }
    while (left > 0) {
        double level = INFINITY;
        for (int k = 0; k < 2 * gpn; k++) {
            if (n[k] > 0 && R[k] / n[k] < level) {
                level = R[k] / n[k];
            }
        }
        for (int i = 0; i < x->nflows; i++) {
            if (!fixed[i] && x->flows[i].cap < level) {
                level = x->flows[i].cap;
            }
        }
        for (int i = 0; i < x->nflows; i++) {
            int full = 0;
            if (fixed[i]) {
                continue;
            }
            for (int k = 0; k < 2; k++) {
                const int q = x->flows[i].port[k] - 2 * node * gpn;
                full |= R[q] / n[q] <= level * (1 + 1e-12);
            }
            if (full || x->flows[i].cap <= level * (1 + 1e-12)) {
                x->flows[i].rate = level;
                fixed[i]         = 1;
                left--;
                for (int k = 0; k < 2; k++) {
                    const int q = x->flows[i].port[k] - 2 * node * gpn;
                    R[q] -= level;
                    n[q]--;
                }
            }
        }
    }
    free(fixed);
}

/* The flows moved on to `t`. */
static void gc3_cost_advance(gc3_costsim_t *x, double t)
{
    const double dt = t - x->now;
    if (dt > 0) {
        for (int i = 0; i < x->nflows; i++) {
            x->flows[i].rem -= x->flows[i].rate * dt;
        }
    }
    x->now = t > x->now ? t : x->now;
}

/* The first flow to end: its index, its time in *t_p (-1: none). */
static int gc3_cost_next_flow(const gc3_costsim_t *x, double *t_p)
{
    int best = -1;
    *t_p     = INFINITY;
    for (int i = 0; i < x->nflows; i++) {
        const double t = x->now + (x->flows[i].rem > 0 ? x->flows[i].rem / x->flows[i].rate : 0.0);
        if (t < *t_p) {
            *t_p = t;
            best = i;
        }
    }
    return best;
}

static void gc3_cost_step_end(gc3_costsim_t *x, int g);

/* Block g's step: wait, control, start its pass (a flow, or its own time). */
static void gc3_cost_try(gc3_costsim_t *x, int g)
{
    const gc3_machine_t   *m  = x->m;
    gc3_costblk_t         *b  = &x->b[g];
    const gc3_flat_tb_t   *tb = &x->tbs[g];
    const gc3_flat_step_t *fs;
    unsigned               flags;
    double                 ready = b->clock > x->now ? b->clock : x->now, t, bytes, per_byte = 0.0;
    int                    dep_g = -1, moves, zc_out = 0, push = 0, net = 0, src = -1, dst = -1;
    const int              node = tb->rank / m->gpus_per_node;
    const gc3_costmsg_t   *msg  = NULL;
    double                 nvl  = 0.0;

    if (b->state == GC3_CB_DONE || b->state == GC3_CB_PASS) {
        return;
    }
    if (b->loop >= x->nloops) {
        b->state = GC3_CB_DONE;
        x->finished++;
        return;
    }
    fs    = &x->steps[tb->step_begin + b->step];
    flags = gc3_step_flags((gc3_step_type_t)fs->type);
    /* what the step waits for */
    if (fs->dep_tb >= 0) {
        const gc3_flat_tb_t *dt;
        dep_g = gc3_flat_ranks(x->flat)[tb->rank].tb_begin + fs->dep_tb;
        dt    = &x->tbs[dep_g];
        if (x->b[dep_g].done <= (long)b->loop * dt->nsteps + fs->dep_step) {
            gc3_cost_wait_on(x, dep_g, g);
            return;
        }
        t     = x->done_at[(size_t)b->loop * (size_t)x->flat->nsteps + (size_t)dt->step_begin + (size_t)fs->dep_step];
        ready = t > ready ? t : ready;
    }
    if (flags & GC3_STEP_F_RECV) {
        gc3_costconn_t *c = &x->conns[b->recv_conn];
        if (c->count == 0) {
            gc3_cost_wait_on(x, c->sender, g);
            return;
        }
        msg   = &c->ring[c->head];
        ready = msg->arrival > ready ? msg->arrival : ready;
    }
    if (flags & GC3_STEP_F_SEND) {
        gc3_costconn_t *c = &x->conns[b->send_conn];
        if (c->count == x->slots) { /* every slot holds a message the receiver has not taken */
            gc3_cost_wait_on(x, c->receiver, g);
            return;
        }
        if (b->sent >= x->slots) {
            t     = c->release[b->sent % x->slots];
            ready = t > ready ? t : ready;
        }
    }
    if (ready > x->now) {
        b->state = GC3_CB_READY;
        gc3_cost_try_at(x, g, ready);
        return;
    }
    /* the step runs: its control, then its pass */
    t = ready;
    if (msg != NULL && msg->staged_bytes > 0) { /* the receiving kernel reads it from pinned host memory */
        t = gc3_cost_port(&x->net_port[(size_t)tb->rank * 4 + 3], t + m->stage_alpha_us, msg->staged_bytes,
                          m->stage_bw_GBps);
    }
    if (dep_g >= 0 && dep_g != g) {
        t += m->dep_us; /* the semaphore of another block */
    }
    if (b->fuse_left > 0) { /* a fused run: its control once, its one pass at its last step */
        b->fuse_left--;
        if (b->fuse_left == 0 && x->tile_bytes <= 16384) { /* GC3_FUSE_BYTES */
            t += m->fuse_us;
        }
    } else {
        t += m->step_us;
        b->fuse_left = fs->fuse;
    }
    bytes = x->tile_bytes * (fs->cnt > 0 ? fs->cnt : 0);
    if (flags & GC3_STEP_F_SEND) {
        const int peer = tb->send;
        net            = node != peer / m->gpus_per_node;
        /* the push form: written into the receiver's buffer as into its slot (posted writes) */
        push = !net && !x->ll && x->call->push &&
               (fs->zc & (x->call->inplace ? GC3_FLAT_ZC_PUSH_IP : GC3_FLAT_ZC_PUSH_OOP)) != 0;
        zc_out = !push && !net && !x->ll && x->call->zero_copy &&
                 (fs->zc & (x->call->inplace ? GC3_FLAT_ZC_IP : GC3_FLAT_ZC_OOP)) != 0;
    }
    /* the pass over the data (none for a send whose data stays in place, nor for a recv of a message pushed
     * into its destination): what it does, per byte */
    moves = fs->type != GC3_STEP_NOP && bytes > 0 && !(fs->type == GC3_STEP_SEND && zc_out) &&
            !(fs->type == GC3_STEP_RECV && msg != NULL && msg->pushed);
    if (moves) {
        per_byte = gc3_cost_per_byte(m->local_bw_GBps);
        if (flags & GC3_STEP_F_REDUCE) {
            per_byte += gc3_cost_per_byte(m->reduce_bw_GBps);
        }
        if (msg != NULL && msg->zc) { /* read from the sender's buffer over NVLink */
            per_byte += gc3_cost_per_byte((flags & GC3_STEP_F_REDUCE) ? m->read_reduce_bw_GBps : m->read_bw_GBps);
            t += m->zc_alpha_us;
            src = msg->from;
            dst = tb->rank;
            nvl = bytes;
        } else if (msg != NULL && x->ll) {
            per_byte += gc3_cost_per_byte(m->ll_bw_GBps); /* polled and unpacked */
        }
        if ((flags & GC3_STEP_F_SEND) && !net && !zc_out) {
            if (x->ll) {
                per_byte += gc3_cost_per_byte(m->ll_bw_GBps); /* packed into lines */
                nvl += 2 * bytes;                             /* 4 data bytes in each 8-byte line */
            } else {
                per_byte += gc3_cost_per_byte(m->write_bw_GBps);
                if (fs->type == GC3_STEP_RRCS) { /* the result stored, then copied into the slot */
                    per_byte += gc3_cost_per_byte(m->local_bw_GBps);
                }
                nvl += bytes;
            }
            src = tb->rank;
            dst = tb->send;
        }
    }
    if (x->ll && (flags & (GC3_STEP_F_SEND | GC3_STEP_F_RECV)) &&
        !(fs->cnt == 1 && (fs->type == GC3_STEP_SEND || fs->type == GC3_STEP_RECV))) {
        t += m->ll_stage_us; /* not direct: through the staging buffer */
    }
    b->state      = GC3_CB_PASS;
    b->p_start    = t;
    b->p_bytes    = bytes;
    b->p_per_byte = per_byte;
    b->p_nvl      = nvl;
    b->p_src      = src;
    b->p_dst      = dst;
    b->p_zc_out   = zc_out;
    b->p_push     = push;
    b->p_net      = net;
    b->p_phase    = 1;
    gc3_cost_try_at(x, g, t); /* the pass starts then (gc3_cost_event) */
}

/* Block g's pass starts now: a flow through its ports, or its own time. */
static void gc3_cost_pass(gc3_costsim_t *x, int g)
{
    gc3_costblk_t *b   = &x->b[g];
    const int      gpn = x->m->gpus_per_node;

    if (!(b->p_nvl > 0 && b->p_src >= 0)) {
        b->p_phase = 3; /* ends at its own pace */
        gc3_cost_try_at(x, g, x->now + b->p_bytes * b->p_per_byte);
        return;
    }
    if (x->nflows == x->cap_flows) {
        int             ncap = x->cap_flows ? 2 * x->cap_flows : 64;
        gc3_costflow_t *n    = realloc(x->flows, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            x->oom = 1;
            return;
        }
        x->flows     = n;
        x->cap_flows = ncap;
    }
    {
        gc3_costflow_t *f = &x->flows[x->nflows++];
        const double    d = b->p_bytes * b->p_per_byte; /* its block's own time */
        f->g              = g;
        f->port[0]        = 2 * b->p_src;
        f->port[1]        = 2 * b->p_dst + 1;
        f->rem            = b->p_nvl;
        f->cap            = d > 0 ? b->p_nvl / d : INFINITY;
        f->rate           = 0;
        f->node           = b->p_src / gpn;
        b->p_phase        = 2;
        gc3_cost_share(x, f->node);
    }
}

/* Block g's pass ended now: the step publishes. */
static void gc3_cost_step_end(gc3_costsim_t *x, int g)
{
    const gc3_machine_t   *m     = x->m;
    gc3_costblk_t         *b     = &x->b[g];
    const gc3_flat_tb_t   *tb    = &x->tbs[g];
    const gc3_flat_step_t *fs    = &x->steps[tb->step_begin + b->step];
    const unsigned         flags = gc3_step_flags((gc3_step_type_t)fs->type);
    double                 t     = x->now;

    if (flags & GC3_STEP_F_RECV) { /* the slot given back: the sender sees the head */
        gc3_costconn_t *c               = &x->conns[b->recv_conn];
        gc3_costmsg_t  *msg             = &c->ring[c->head];
        double          r               = t + m->intra_alpha_us;
        c->release[msg->seq % x->slots] = r;
        if (msg->held && r > x->b[c->sender].last_back) { /* its sender's call ends no sooner */
            x->b[c->sender].last_back = r;
        }
        x->msgs++;
        x->zc_msgs += msg->zc || msg->pushed;
        c->head = (c->head + 1) % x->slots;
        c->count--;
    }
    if (flags & GC3_STEP_F_SEND) {
        gc3_costconn_t *c      = &x->conns[b->send_conn];
        const int       peer   = tb->send;
        const int       staged = b->p_net && m->stage_bw_GBps > 0;
        gc3_costmsg_t  *out    = &c->ring[(c->head + c->count) % x->slots];
        out->zc                = b->p_zc_out;
        out->pushed            = b->p_push;
        out->held              = b->p_zc_out || b->p_net;
        out->from              = tb->rank;
        out->seq               = b->sent++;
        out->staged_bytes      = staged ? b->p_bytes : 0.0;
        if (!x->ll) {
            t += m->sync_us;
        }
        if (b->p_net) {
            double *eg = &x->net_port[(size_t)tb->rank * 4 + 0];
            double *ig = &x->net_port[(size_t)peer * 4 + 1];
            double  start;
            if (staged) { /* the sending kernel copies it to pinned host memory first */
                t = gc3_cost_port(&x->net_port[(size_t)tb->rank * 4 + 2], t, b->p_bytes, m->stage_bw_GBps);
            }
            start = t;
            start = *eg > start ? *eg : start;
            start = *ig > start ? *ig : start;
            t     = start + b->p_bytes / (m->net_bw_GBps * 1e3);
            *eg = *ig    = t;
            out->arrival = t + m->net_alpha_us;
        } else {
            out->arrival = t + (x->ll ? m->ll_alpha_us : m->intra_alpha_us);
        }
        c->count++;
    }
    x->done_at[(size_t)b->loop * (size_t)x->flat->nsteps + (size_t)tb->step_begin + (size_t)b->step] = t;
    if (b->step == tb->nsteps - 1 && t > x->loop_end[(size_t)tb->rank * (size_t)x->nloops + (size_t)b->loop]) {
        x->loop_end[(size_t)tb->rank * (size_t)x->nloops + (size_t)b->loop] = t;
    }
    b->done++;
    if (++b->step == tb->nsteps) {
        b->step = 0;
        b->loop++;
    }
    b->clock   = t;
    b->state   = GC3_CB_READY;
    b->p_phase = 0;
    gc3_cost_wake(x, g); /* its dependents, its receiver (a message), its sender (a slot) */
    gc3_cost_try_at(x, g, t);
}

/* One event of block g: the start or end of its pass, or a try of its next step. */
static void gc3_cost_event(gc3_costsim_t *x, int g)
{
    gc3_costblk_t *b = &x->b[g];
    b->queued        = 0;
    if (b->state == GC3_CB_PASS) {
        if (b->p_phase == 1) {
            gc3_cost_pass(x, g);
        } else if (b->p_phase == 3) {
            gc3_cost_step_end(x, g);
        }
        return;
    }
    gc3_cost_try(x, g);
}

/* Run the loops; GC3_ERR_DEADLOCK when blocks are left waiting for each other. */
static gc3_status_t gc3_cost_run(gc3_costsim_t *x, gc3_diag_t *diag)
{
    for (int g = 0; g < x->flat->ntbs; g++) {
        if (x->tbs[g].nsteps == 0) {
            x->b[g].state = GC3_CB_DONE;
            x->finished++;
        } else {
            gc3_cost_try_at(x, g, x->b[g].clock);
        }
    }
    while (!x->oom) {
        double tf;
        int    f = gc3_cost_next_flow(x, &tf);
        if (f >= 0 && (x->heap.n == 0 || tf <= x->heap.items[0].key)) {
            const int node = x->flows[f].node, g = x->flows[f].g;
            gc3_cost_advance(x, tf);
            x->flows[f] = x->flows[--x->nflows];
            gc3_cost_share(x, node);
            gc3_cost_step_end(x, g);
        } else if (x->heap.n > 0) {
            const gc3_evheap_item_t e = gc3_evheap_pop(&x->heap);
            gc3_cost_advance(x, e.key);
            gc3_cost_event(x, e.id);
        } else {
            break;
        }
    }
    if (x->oom) {
        return GC3_ERR_NO_MEMORY;
    }
    if (x->finished < x->flat->ntbs) {
        for (int g = 0; g < x->flat->ntbs; g++) {
            if (x->b[g].state != GC3_CB_DONE) {
                gc3_diag_add(diag,
                             "cost: rank %d tb %d waits at step %d of loop %d and nothing comes (a deadlock with %d "
                             "slots: gc3c verify --slots %d)",
                             x->tbs[g].rank, g - gc3_flat_ranks(x->flat)[x->tbs[g].rank].tb_begin, x->b[g].step,
                             x->b[g].loop, x->slots, x->slots);
                break;
            }
        }
        return GC3_ERR_DEADLOCK;
    }
    return GC3_OK;
}

/* Connect each sending block to the block of its peer that receives from it on the channel. */
static gc3_status_t gc3_cost_connect(gc3_costsim_t *x, gc3_diag_t *diag)
{
    const gc3_flat_program_t *f = x->flat;

    x->conns = calloc((size_t)f->ntbs + 1, sizeof(*x->conns));
    if (x->conns == NULL) {
        return GC3_ERR_NO_MEMORY;
    }
    for (int g = 0; g < f->ntbs; g++) {
        x->b[g].send_conn = x->b[g].recv_conn = -1;
    }
    for (int g = 0; g < f->ntbs; g++) {
        const gc3_flat_tb_t *tb = &x->tbs[g];
        gc3_costconn_t      *c;
        int                  peer;
        if (tb->send < 0) {
            continue;
        }
        peer = gc3_flat_peer_receiver(f, tb->rank, g - gc3_flat_ranks(f)[tb->rank].tb_begin);
        if (peer < 0) {
            gc3_diag_add(diag, "cost: rank %d sends to rank %d on channel %d, where no block receives from it",
                         tb->rank, tb->send, tb->chan);
            return GC3_ERR_VERIFY;
        }
        peer += gc3_flat_ranks(f)[tb->send].tb_begin;
        c           = &x->conns[x->nconns];
        c->sender   = g;
        c->receiver = peer;
        c->ring     = calloc((size_t)x->slots, sizeof(*c->ring));
        c->release  = calloc((size_t)x->slots, sizeof(*c->release));
        if (c->ring == NULL || c->release == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        x->b[g].send_conn    = x->nconns;
        x->b[peer].recv_conn = x->nconns;
        x->nconns++;
    }
    return GC3_OK;
}

gc3_status_t gc3_cost_predict_call(const gc3_ir_program_t *p, const gc3_machine_t *m, const gc3_cost_call_t *call,
                                   uint64_t bytes, gc3_diag_t *diag, gc3_cost_result_t *res)
{
    gc3_costsim_t       x;
    gc3_flat_program_t *flat = NULL;
    gc3_status_t        status;
    double              chunk_bytes, kernel = 0.0, slowest = 0.0, fixed;
    int                 loops, sim, blocks                 = 0;
    size_t              budget = 4u << 20; /* steps simulated at most (the rest extrapolated) */

    memset(res, 0, sizeof(*res));
    memset(&x, 0, sizeof(x));
    if (m->nodes < 1 || m->gpus_per_node < 1 || m->nodes * m->gpus_per_node != p->ngpus) {
        gc3_diag_add(diag, "cost: the machine has %d x %d GPUs but program '%s' is for %d ranks", m->nodes,
                     m->gpus_per_node, p->name, p->ngpus);
        return GC3_ERR_INVALID_PARAM;
    }
    if (m->intra_bw_GBps <= 0 || m->net_bw_GBps <= 0 || m->local_bw_GBps <= 0 || m->slot_bytes == 0 ||
        m->stage_bw_GBps < 0) {
        gc3_diag_add(diag, "cost: bandwidths and the slot size must be positive (the staging bandwidth 0: GPUDirect)");
        return GC3_ERR_INVALID_PARAM;
    }
    status = gc3_flat_create(p, &flat);
    if (status != GC3_OK) {
        return status;
    }
    for (int r = 0; r < flat->nranks; r++) {
        (void)gc3_flat_fuse(flat, r, 8); /* GC3_RT_FUSE_MAX operands, as the runtime's blocks run them */
    }
    if (call->zero_copy && gc3_proto_runs_as(p->proto) == GC3_PROTO_SIMPLE && !p->no_zc) {
        (void)gc3_flat_zc_mark(flat, -1, 1, NULL); /* rrs given homes, as the runtime runs them */
    }
    chunk_bytes = (double)bytes / p->nchunksperloop;
    if (call->tile_bytes > 0) {
        loops = call->loops > 0 ? call->loops : (int)ceil(chunk_bytes / (double)call->tile_bytes);
    } else {
        loops = call->loops > 0 ? call->loops : (int)ceil(chunk_bytes / (double)m->slot_bytes);
    }
    loops = loops < 1 ? 1 : loops;
    /* the steps of every loop, or of as many as the budget allows: the rest at the last ones' pace */
    sim = loops < m->max_loops || m->max_loops < 2 ? loops : m->max_loops;
    while (sim > 4 && (size_t)sim * (size_t)flat->nsteps > budget) {
        sim /= 2;
    }
    sim          = sim < 1 ? 1 : sim;
    x.flat       = flat;
    x.tbs        = gc3_flat_tbs(flat);
    x.steps      = gc3_flat_steps(flat);
    x.m          = m;
    x.call       = call;
    x.nloops     = sim;
    x.tile_bytes = chunk_bytes / loops;
    x.ll         = gc3_proto_runs_as(p->proto) == GC3_PROTO_LL; /* what the runtime runs (LL128: Simple) */
    x.slots      = call->slots > 0 ? call->slots : m->slots > 0 ? m->slots : 4;
    x.b          = calloc((size_t)flat->ntbs + 1, sizeof(*x.b));
    x.done_at    = calloc((size_t)flat->nsteps * (size_t)sim + 1, sizeof(double));
    x.loop_end   = calloc((size_t)p->ngpus * (size_t)sim + 1, sizeof(double));
    x.port_bw    = calloc((size_t)p->ngpus + 1, sizeof(double));
    x.net_port   = calloc((size_t)p->ngpus * 4 + 1, sizeof(double));
    if (x.b == NULL || x.done_at == NULL || x.loop_end == NULL || x.port_bw == NULL || x.net_port == NULL) {
        status = GC3_ERR_NO_MEMORY;
        goto out;
    }
    for (int r = 0; r < flat->nranks; r++) { /* the peers of its node each rank sends to */
        const gc3_flat_rank_t *rk    = &gc3_flat_ranks(flat)[r];
        int                    first = -1, several = 0, back = 0;
        for (int t = rk->tb_begin; t < rk->tb_begin + rk->ntbs; t++) {
            const int q = x.tbs[t].send;
            if (q >= 0 && q != r && q / m->gpus_per_node == r / m->gpus_per_node) {
                several |= first >= 0 && q != first;
                first = first < 0 ? q : first;
            }
        }
        for (int t = 0; first >= 0 && t < gc3_flat_ranks(flat)[first].ntbs; t++) {
            back |= x.tbs[gc3_flat_ranks(flat)[first].tb_begin + t].send == r;
        }
        x.port_bw[r] = several && m->intra_multi_bw_GBps > 0           ? m->intra_multi_bw_GBps
                       : !several && back && m->intra_pair_bw_GBps > 0 ? m->intra_pair_bw_GBps
                                                                       : m->intra_bw_GBps;
        if (call->zc_mode && call->push && m->intra_push_bw_GBps > 0 && x.port_bw[r] > m->intra_push_bw_GBps) {
            x.port_bw[r] = m->intra_push_bw_GBps;
        }
        blocks = rk->ntbs > blocks ? rk->ntbs : blocks;
    }
    for (int g = 0; g < flat->ntbs; g++) {
        x.b[g].clock = m->start_us;
    }
    if ((status = gc3_cost_connect(&x, diag)) != GC3_OK || (status = gc3_cost_run(&x, diag)) != GC3_OK) {
        goto out;
    }
    /* each rank's call ends with its last block (a block that left messages in place, or sent to another
     * node, once they were taken); the loops not simulated at the pace of its last ones. gc3_bench and OSU
     * report the mean over the ranks of each rank's time: so does the model (and the slowest rank's) */
    for (int r = 0; r < flat->nranks; r++) {
        const gc3_flat_rank_t *rk = &gc3_flat_ranks(flat)[r];
        const double          *le = &x.loop_end[(size_t)r * (size_t)sim];
        double                 k  = 0.0;
        for (int g = rk->tb_begin; g < rk->tb_begin + rk->ntbs; g++) {
            const double e = x.b[g].clock > x.b[g].last_back ? x.b[g].clock : x.b[g].last_back;
            k              = e > k ? e : k;
        }
        if (loops > sim && sim >= 2) {
            const int d = sim / 2;
            k += (double)(loops - sim) * (le[sim - 1] - le[sim - 1 - d]) / d;
        }
        kernel += k / flat->nranks;
        slowest = k > slowest ? k : slowest;
    }
    kernel += m->end_us;
    fixed = m->host_us + m->signal_us;
    if (call->resident == 0 || (call->resident < 0 && ((double)blocks > m->resident_blocks || m->nodes > 1))) {
        fixed += m->launch_us;
    }
    if (call->zc_mode) {
        fixed += m->zc_agree_us;
    }
    res->time_us    = fixed + kernel;
    res->slowest_us = fixed + slowest + m->end_us;
    res->fixed_us   = fixed;
    res->kernel_us  = kernel;
    res->loops      = loops;
    res->simulated  = sim;
    res->tile_bytes = x.tile_bytes;
    res->msgs       = x.msgs;
    res->zc_msgs    = x.zc_msgs;
out:
    if (x.b != NULL) {
        for (int g = 0; g < flat->ntbs; g++) {
            free(x.b[g].waiters);
        }
    }
    if (x.conns != NULL) {
        for (int c = 0; c < x.nconns; c++) {
            free(x.conns[c].ring);
            free(x.conns[c].release);
        }
    }
    free(x.conns);
    free(x.b);
    free(x.done_at);
    free(x.loop_end);
    free(x.port_bw);
    free(x.net_port);
    free(x.flows);
    gc3_evheap_free(&x.heap);
    gc3_flat_destroy(flat);
    return status;
}

gc3_status_t gc3_cost_predict(const gc3_ir_program_t *p, const gc3_machine_t *m, uint64_t bytes, gc3_diag_t *diag,
                              double *time_us_p)
{
    gc3_cost_call_t   call;
    gc3_cost_result_t res;
    gc3_status_t      status;

    gc3_cost_call_default(&call);
    status = gc3_cost_predict_call(p, m, &call, bytes, diag, &res);
    if (status == GC3_OK) {
        *time_us_p = res.time_us;
    }
    return status;
}
