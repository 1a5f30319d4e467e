/* gc3 / libgpuir internal: what the executor's files give each other. The executor is split by
 * concern (doc/design/runtime.md):
 *   executor.c  the executor (parameters, creation, backends) and the plan's queries
 *   pool.c      the FIFO pool (params.fifo_pool): the regions of slots shared by pooled plans
 *   memory.c    memory accounting: what gc3 holds (gc3_rt_held_*, gc3_mem_held) and a plan's record
 *   prepare.c   preparing a plan (layout, regions, exchanges, connections) and destroying it
 *   calls.c     the calls (start, test, wait, run): tiling, contexts, zero-copy per call
 * The structures (gc3_exec, gc3_plan) are in gc3_rt_backend.h, the network transports' table in
 * gc3_rt_net.h. */
#ifndef GC3_RT_EXEC_H
#define GC3_RT_EXEC_H

#include "gc3_rt_backend.h"

/* Is rank q on another node than the plan's rank? */
static inline int gc3_plan_remote(const gc3_plan_t *p, int q)
{
    const int *node = p->exec->node;
    return node != NULL && q >= 0 && node[q] != node[p->rank];
}

/* ---- a call's tile (calls.c; also gc3_plan_call_shape, prepare.c) ---- */
/* the most bytes a step's message carries in one loop (big: zero-copy mode) */
uint64_t gc3_rt_msg_max(const gc3_exec_params_t *ep, uint64_t slot_payload, int big);
/* the tile T of a call (elements a chunk moves per loop) */
gc3_status_t gc3_rt_tile(uint64_t msg_max, int cnt_max, int custom, uint64_t count, uint64_t k, gc3_dtype_t dtype,
                         uint64_t *T_p, gc3_diag_t *diag);

/* ---- the FIFO pool (pool.c) ---- */
/* one reference fewer on a pool (NULL: none); the last one closes it (p: the plan that held it last,
 * NULL: the executor) */
void gc3_pool_unref(gc3_exec_t *e, gc3_plan_t *p, gc3_rt_pool_t *pool);
/* a pool with one reference: this rank's new one (own), or a peer's mapped from its handle */
gc3_status_t gc3_pool_new(gc3_plan_t *p, int own, const char handle[GC3_RT_HANDLE_BYTES], size_t bytes, uint64_t gen,
                          gc3_rt_pool_t **pool_p, gc3_diag_t *diag);
/* does the plan use rank q's pool; does any pooled plan of the executor (takes pool_lock) */
int gc3_plan_pool_uses(const gc3_plan_t *p, int q);
int gc3_exec_pool_used(gc3_exec_t *e, int q);
/* the plan's connections moved to the executor's current pools; every plan not in flight moved */
void gc3_plan_pool_move(gc3_plan_t *p);
void gc3_exec_pool_move_all(gc3_exec_t *e);
/* does a plan of this program take its slots from the pool */
int gc3_plan_takes_pool(const gc3_exec_params_t *ep, int proto, const gc3_flat_program_t *f, const int *node);
/* the plan off the executor's list of pooled plans, its references given back */
void gc3_plan_pool_leave(gc3_plan_t *p);
/* The current binding's connections pointed at the pools the plan holds (a relabelled plan's new shift) */
void gc3_plan_pool_point(gc3_plan_t *p);

/* Relabelled plans (relabel.c): whether a plan of flat serves every root (params.relabel, a rooted
 * collective, one node); the sends marked for zero-copy among a program rank's steps; the blocks' contexts of
 * the current binding, what stays the same for every call of it (prepare.c) */
int  gc3_plan_relabels(const gc3_exec_params_t *ep, const gc3_flat_program_t *f);
void gc3_plan_zc_count(const gc3_flat_program_t *f, int rank, gc3_zc_stats_t *st);
void gc3_plan_ctx_init(gc3_plan_t *p);
/* A block's sending and receiving steps (each needs a partner block at the other end) */
void gc3_plan_tb_messages(const gc3_flat_program_t *f, const gc3_flat_tb_t *tb, int *nsend, int *nrecv);

/* ---- memory accounting (memory.c; gc3_rt_held_add and gc3_rt_plan_mem: gc3_rt_backend.h) ---- */
/* the plan's scratch freed (and no longer counted) */
/* A plan's shape (shape.c): whether the program crosses nodes, its chunks per segment of input and output, its
 * sends marked for zero-copy (0: zero-copy not for it), its FIFOs' slots and payload (every rank computes the
 * same from the program and agreed parameters; `what` names the caller in diag), a slot's stride, and
 * zero-copy mode for out-of-place and in-place calls (full[0], full[1]) */
int          gc3_flat_crosses_nodes(const gc3_flat_program_t *f, const int *node);
void         gc3_plan_segments(const gc3_flat_program_t *f, int *k_in, int *k_out);
int          gc3_plan_zc_marks(const gc3_exec_params_t *ep, const gc3_ir_program_t *prog, gc3_flat_program_t *f);
gc3_status_t gc3_plan_fifo_shape(const gc3_exec_params_t *ep, const gc3_ir_program_t *prog, const gc3_flat_program_t *f,
                                 int cnt_max, int k, const char *what, gc3_diag_t *diag, uint64_t *payload_p,
                                 int *slots_p);
uint64_t     gc3_plan_slot_stride(int proto, uint64_t payload);
void         gc3_zc_full(const gc3_flat_program_t *f, int full[2]);

void gc3_plan_scratch_free(gc3_plan_t *p);
/* the region's part of a plan's record (its layout L on this rank) */
void gc3_plan_mem_layout(gc3_plan_mem_t *m, const gc3_rt_layout_t *L, int ntbs, int slots, uint64_t payload,
                         uint64_t stride);
/* LL staging per buffer, for slots of this payload */
size_t gc3_plan_stage_bytes(uint64_t payload);

#endif
