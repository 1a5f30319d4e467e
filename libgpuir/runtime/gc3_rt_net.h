/* gc3 / libgpuir internal: connections between nodes (net_ucx.c).
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
 * becomes the plan's error record (GC3_WAIT_WHAT_NET, naming the peer) and aborts the call. */
#ifndef GC3_RT_NET_H
#define GC3_RT_NET_H

#include "gc3_rt_backend.h"

int          gc3_rt_net_available(void);
/* Setting up a plan's connections to other nodes: collective over the executor's ranks, in phases
 * that never wait for another rank (two exchanges: the cards, then the UCX addresses and keys).
 * post: p->net and p->conn are set (ok 0: this rank failed before, it takes part all the same);
 * *ns_p is set when the first exchange was posted. test: GC3_IN_PROGRESS, or the end (ns
 * released): GC3_OK, or the error. abandon: give it up after a timeout. */
typedef struct gc3_rt_net_setup gc3_rt_net_setup_t;
gc3_status_t gc3_rt_net_setup_post(gc3_plan_t *p, int ok, gc3_diag_t *diag, gc3_rt_net_setup_t **ns_p);
gc3_status_t gc3_rt_net_setup_test(gc3_rt_net_setup_t *ns, const gc3_rt_layout_t *layouts, gc3_diag_t *diag);
const char  *gc3_rt_net_setup_waiting(const gc3_rt_net_setup_t *ns);
void         gc3_rt_net_setup_abandon(gc3_rt_net_setup_t *ns);
/* after the last call: what the proxy still owes the peers is sent, then everything released */
void         gc3_rt_net_teardown(gc3_plan_t *p);
/* a call of the plan starts (the proxy polls without sleeping while any is under way) / ended */
void         gc3_rt_net_call_begin(gc3_plan_t *p);
void         gc3_rt_net_call_end(gc3_plan_t *p);
/* nonzero when a connection of the plan failed; the record says which */
int          gc3_rt_net_failed(const gc3_plan_t *p, gc3_rt_error_t *e);
void         gc3_rt_net_describe(const gc3_plan_t *p, char *buf, size_t len);

#endif
