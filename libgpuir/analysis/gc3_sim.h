/* gc3 / libgpuir internal: the scheduling engine shared by the verifier (symbolic values) and the
 * reference executor (real data). (The cost model has an engine of its own, in time order: cost.c.)
 *
 * It walks all thread blocks of all ranks of a flat program: a block's next step runs when
 * its dependency (same rank, same loop iteration) is done, its receive FIFO holds a message
 * and its send FIFO has a free slot. What a step does to data is the domain's business
 * (ops->exec); the engine moves the domain's opaque messages through the FIFOs. When no
 * block can move before all are done it reports the wait-for cycle and returns
 * GC3_ERR_DEADLOCK. */
#ifndef GC3_SIM_H
#define GC3_SIM_H

#include "gc3_ir.h"

typedef struct {
    int                    loop;
    int                    rank;
    int                    tb;       /* local index on the rank */
    int                    gtb;      /* global index (flat) */
    int                    step;
    int                    dep_gtb;  /* global index of the dependency's block, -1 none */
    const gc3_flat_step_t *st;
    const gc3_flat_tb_t   *tbinfo;
} gc3_sim_step_t;

typedef struct {
    /* Run one step: `in` is the received message (NULL when the step receives nothing; the
     * domain owns it from here); set *out_p to the message to send (steps that send). */
    gc3_status_t (*exec)(void *ctx, const gc3_sim_step_t *sc, void *in, void **out_p);
    /* Lower runs first; NULL = first come first served. Used with one_step_per_turn. */
    double       (*priority)(void *ctx, int gtb);
    void         (*free_msg)(void *ctx, void *msg);
} gc3_sim_ops_t;

typedef struct {
    int slots;              /* FIFO capacity in messages */
    int nloops;
    int one_step_per_turn;  /* re-queue after every step (timed domains) */
} gc3_sim_params_t;

gc3_status_t gc3_sim_run(const gc3_flat_program_t *flat, const gc3_sim_params_t *params,
                         const gc3_sim_ops_t *ops, void *ctx, gc3_diag_t *diag);

/* Where a buffer chunk of `rank` lives in a per-rank location space of
 * i_chunks + o_chunks + s_chunks slots, with the in-place aliasing of the collective
 * applied (inplace != 0). Returns -1 when out of range. */
int gc3_sim_location(const gc3_flat_program_t *flat, int rank, int inplace, int buf, int chunk);
int gc3_sim_nlocations(const gc3_flat_program_t *flat, int rank);
/* "input", "output", "scratch" */
const char *gc3_sim_buffer_name(int buf);

#endif
