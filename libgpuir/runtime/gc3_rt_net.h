/* gc3 / libgpuir internal: connections between nodes, through a transport (gc3_rt_net_t; UCX: net_ucx.c).
 *
 * The interpreter speaks the same FIFO protocol to a peer on another node as to one on its own
 * node, but on copies in its own host memory (the plan's net region, gc3_rt_layout_t): a sender
 * writes the message into its copy of the receiver's slot, the message length beside it, then
 * its copy of the tail; a receiver writes its head into its copy of the sender's head. One proxy
 * thread per process watches those copies and moves what changed with UCX: the slot (RMA put),
 * a fence, the tail (put) into the receiver's net region; the head (put) into the sender's. The
 * blocks of the other side wait on those counters as they would on a local peer's.
 *
 * Two places for the slots, chosen per executor (gc3_exec_params_t.net_direct, the same on every
 * rank): host-staged, they are in the net region (cuda: pinned host memory mapped into the GPU, so
 * the kernel's copy into a slot crosses PCIe before the network); direct (GPUDirect on GPUs), in a
 * region of the backend's memory (cuda: device memory, so the kernel's copy stays on the GPU),
 * registered with UCX as such, and the proxy puts from the sender's slot straight into the
 * receiver's (GPUDirect RDMA, or cuda_ipc between processes of one host). The counters and
 * lengths stay in host memory either way (the proxy reads them; the kernels poll them there).
 * Every region is registered once per plan and deregistered at teardown.
 *
 * Every rank of the executor sets up (it is collective: worker addresses, remote keys and net
 * region addresses are exchanged through the out-of-band interface) when the program crosses
 * nodes. A failed endpoint (peer dead, unreachable) or a transfer that cannot start
 * becomes the plan's error record (GC3_WAIT_WHAT_NET, naming the peer) and aborts the call.
 *
 * This protocol is the transport's to keep: the blocks see only the net region's counters and slots. */
#ifndef GC3_RT_NET_H
#define GC3_RT_NET_H

#include "gc3_rt_backend.h"

/* A network transport: what the executor calls, through this table, for a plan whose program crosses
 * nodes. The transport moves the net region's copies between the nodes (see above); the executor
 * allocates those regions (gc3_rt_layout_t.net_*) and points the blocks at them, whatever the
 * transport. net_ucx.c implements it over UCX (gc3_rt_net_ucx); doc/developing.md says how to add one.
 *
 * setup_post, setup_test, setup_waiting, setup_abandon: setting up a plan's connections to other
 * nodes, collective over the executor's ranks, in phases that never wait for another rank (UCX: two
 * exchanges, the cards, then the UCX addresses and keys). post: p->net and p->conn are set (ok 0:
 * this rank failed before, it takes part all the same); *ns_p is set when the first exchange was
 * posted. test: GC3_IN_PROGRESS, or the end (ns released): GC3_OK, or the error. waiting: what it
 * waits for (for timeout messages). abandon: give it up after a timeout.
 * teardown: after the last call: what the transport still owes the peers is sent, then everything
 * released (p->net_state, the transport's, back to NULL).
 * call_begin, call_end: a call of the plan starts (a proxy polls without sleeping while any is under
 * way) / ended.
 * failed: nonzero when a connection of the plan failed; the record says which (GC3_WAIT_WHAT_NET).
 * describe: the plan's connections in words (gc3_plan_net_describe). */
typedef struct gc3_rt_net_setup gc3_rt_net_setup_t; /* (each transport's own, in its file) */
struct gc3_rt_net {
    const char *name;
    gc3_status_t (*setup_post)(gc3_plan_t *p, int ok, gc3_diag_t *diag, gc3_rt_net_setup_t **ns_p);
    gc3_status_t (*setup_test)(gc3_rt_net_setup_t *ns, const gc3_rt_layout_t *layouts, gc3_diag_t *diag);
    const char *(*setup_waiting)(const gc3_rt_net_setup_t *ns);
    void (*setup_abandon)(gc3_rt_net_setup_t *ns);
    void (*teardown)(gc3_plan_t *p);
    void (*call_begin)(gc3_plan_t *p);
    void (*call_end)(gc3_plan_t *p);
    int (*failed)(const gc3_plan_t *p, gc3_rt_error_t *e);
    void (*describe)(const gc3_plan_t *p, char *buf, size_t len);
};

#ifdef GC3_HAVE_UCX
extern const gc3_rt_net_t gc3_rt_net_ucx;
#endif

/* The transport of the executor's plans that cross nodes (net.c: the first built in; params may be
 * NULL); NULL when none is built in (then such plans are refused). */
const gc3_rt_net_t *gc3_rt_net_choose(const gc3_exec_params_t *params);

#endif
