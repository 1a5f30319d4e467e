/* gc3 / libgpuir: a plan's shape, what a program's plan takes before anything is made: its segments, its
 * FIFOs' slots (gc3_plan_fifo_shape: sized for the largest call, capped, two for one-message plans), zero-copy
 * marks and mode, and the estimates without a plan (gc3_plan_estimate, gc3_plan_call_shape). The preparation
 * (prepare.c) and the tools ask the same functions, so a plan and its estimate never differ. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_rt_exec.h"
#include "gc3_sim.h"

/* Does some connection of the program join ranks on different nodes (node: per rank; NULL: one node)? */
int gc3_flat_crosses_nodes(const gc3_flat_program_t *f, const int *node)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    if (node == NULL) {
        return 0;
    }
    for (int r = 0; r < f->nranks; r++) {
        for (int t = 0; t < ranks[r].ntbs; t++) {
            const gc3_flat_tb_t *b = &tbs[ranks[r].tb_begin + t];
            if ((b->send >= 0 && node[b->send] != node[r]) || (b->recv >= 0 && node[b->recv] != node[r])) {
                return 1;
            }
        }
    }
    return 0;
}

/* chunks per segment of the input and output buffers */
void gc3_plan_segments(const gc3_flat_program_t *f, int *k_in, int *k_out)
{
    const gc3_flat_rank_t *r0 = &gc3_flat_ranks(f)[0];
    *k_in                     = r0->i_chunks / gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_INPUT, f->nranks);
    *k_out                    = r0->o_chunks / gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_OUTPUT, f->nranks);
}

/* The most receiving connections a rank of the program has (the FIFO cap divides among them); a relabelled
 * plan's: of the union of its shifts' (gc3_rt_layout_union), the same on every rank. */
static int gc3_flat_max_recv(const gc3_exec_params_t *ep, const gc3_flat_program_t *f)
{
    const gc3_flat_rank_t *ranks = gc3_flat_ranks(f);
    int                    most = 0, unions = gc3_plan_relabels(ep, f);
    for (int r = 0; unions && r < f->nranks; r++) { /* (a rank's union holds its own program rank's connections) */
        gc3_rt_layout_t U;
        unions = gc3_rt_layout_union(f, r, 1, GC3_RT_LINE, 0, &U) == GC3_OK; /* (a failure: the preparation's) */
        most   = unions && U.nrconn > most ? U.nrconn : most;
        gc3_rt_layout_free(&U);
    }
    if (unions) {
        return most;
    }
    for (int r = 0; r < f->nranks; r++) {
        int n = 0;
        for (int t = 0; t < ranks[r].ntbs; t++) {
            n += gc3_flat_peer_sender(f, r, t) >= 0;
        }
        most = n > most ? n : most;
    }
    return most;
}

/* The bytes of a chunk of the largest call of the program (max_bytes), k chunks per segment, with a
 * vector of rounding; 0 when the program has no largest call. */
static uint64_t gc3_plan_chunk_bytes(const gc3_ir_program_t *prog, const gc3_flat_program_t *f, int k)
{
    const int si = gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_INPUT, f->nranks),
              so = gc3_coll_segments((gc3_coll_t)f->coll, GC3_BUF_OUTPUT, f->nranks), segs = si > so ? si : so;
    uint64_t seg;

    if (prog->max_bytes == 0) {
        return 0;
    }
    seg = (prog->max_bytes + (uint64_t)segs - 1) / (uint64_t)segs;
    return gc3_rt_round((seg + (uint64_t)k - 1) / (uint64_t)k, 16) + 16;
}

/* Zero-copy: marks the sends of f that may leave their data in place (gc3_flat_zc_mark), when the
 * parameters and the program allow zero-copy at all (Simple, the rule not zero_copy=off). 1 if marked. */
static int gc3_plan_zc_allowed(const gc3_exec_params_t *ep, const gc3_ir_program_t *prog)
{
    return ep->zero_copy && gc3_proto_runs_as(prog->proto) == GC3_PROTO_SIMPLE && !prog->no_zc;
}

int gc3_plan_zc_marks(const gc3_exec_params_t *ep, const gc3_ir_program_t *prog, gc3_flat_program_t *f)
{
    if (!gc3_plan_zc_allowed(ep, prog)) {
        return 0;
    }
    (void)gc3_flat_zc_mark(f, -1, 1, NULL);
    return 1;
}

/* Every block of every rank sends at most once a loop: each connection carries one message a loop. */
static int gc3_flat_one_send_per_block(const gc3_flat_program_t *f)
{
    const gc3_flat_tb_t   *tbs   = gc3_flat_tbs(f);
    const gc3_flat_step_t *steps = gc3_flat_steps(f);

    for (int t = 0; t < f->ntbs; t++) {
        int n = 0;
        for (int s = 0; s < tbs[t].nsteps; s++) {
            n += (gc3_step_flags((gc3_step_type_t)steps[tbs[t].step_begin + s].type) & GC3_STEP_F_SEND) != 0;
        }
        if (n > 1) {
            return 0;
        }
    }
    return 1;
}

/* The largest payload a slot may have when `fifo` bytes hold conns x slots of them (header included), not
 * below GC3_SLOT_MIN_BYTES. */
static uint64_t gc3_plan_slot_cap(uint64_t fifo, int conns, int slots)
{
    uint64_t cap = fifo / ((uint64_t)conns * (uint64_t)slots) / 16 * 16;
    return cap > GC3_RT_SIMPLE_HDR + GC3_SLOT_MIN_BYTES ? cap - GC3_RT_SIMPLE_HDR : GC3_SLOT_MIN_BYTES;
}

/* The scheduling engine's view of a message: nothing (only its place in the FIFO matters here). */
static gc3_status_t gc3_sim_nodata_exec(void *ctx, const gc3_sim_step_t *sc, void *in, void **out_p)
{
    (void)ctx;
    (void)sc;
    (void)in;
    if (out_p != NULL) {
        *out_p = (void *)&gc3_sim_nodata_exec; /* any non-NULL message */
    }
    return GC3_OK;
}

static void gc3_sim_nodata_free(void *ctx, void *msg)
{
    (void)ctx;
    (void)msg;
}

/* Whether the program runs without deadlock with `slots` slots per connection (the verifier's scheduling
 * engine over GC3_RT_WINDOW loops, as far as a block may run ahead): *yes_p. Every rank must find the
 * same, so that only a lack of memory is an error (a program the engine refuses for any other reason
 * takes the default slots). */
static gc3_status_t gc3_plan_slots_suffice(const gc3_ir_program_t *prog, int slots, int *yes_p)
{
    gc3_flat_program_t *g      = NULL;
    gc3_sim_ops_t       ops    = { gc3_sim_nodata_exec, NULL, gc3_sim_nodata_free };
    gc3_sim_params_t    params = { slots, GC3_RT_WINDOW, 0 };
    gc3_status_t        status;

    *yes_p = 0;
    status = gc3_flat_create(prog, &g);
    if (status != GC3_OK) {
        return status == GC3_ERR_NO_MEMORY ? status : GC3_OK;
    }
    status = gc3_sim_run(g, &params, &ops, NULL, NULL);
    gc3_flat_destroy(g);
    *yes_p = status == GC3_OK;
    return status == GC3_ERR_NO_MEMORY ? status : GC3_OK;
}

/* A plan's FIFOs, the same on every rank (from the program, its zero-copy marks when params.zero_copy
 * marked it, and the executor's parameters, which the ranks agreed on): the slots of a connection and a
 * slot's payload.
 * - The payload: what the largest call of the program (max_bytes) moves in one message, at most
 *   params.slot_bytes, and within the plan's FIFO cap over the connections of the rank that receives on
 *   most. The cap is params.fifo_bytes (or the program's fifo_cap, made smaller to fit the budget), and
 *   at most params.zc_fifo_bytes for a plan whose every call runs in zero-copy mode once its buffers are
 *   registered (its slots then carry only headers; the payload is for buffers that cannot be
 *   registered, and for a buffer's first call). A smaller slot only means more loops, never a wrong call.
 * - The slots: params.slots; 2 for a plan on one node whose connections carry one message a loop each,
 *   whose largest call fits one loop in 2 slots, and which the scheduling engine runs without deadlock
 *   with 2 (calls of more loops stay correct): a call of its size range then has one message on each
 *   connection, and the second slot lets a sender's next call start before its receiver has taken the
 *   last one. Custom collectives keep params.slots: their tile may shrink to divide the count, and a call
 *   of more loops than one with 2 slots is what the engine's check above does not cover.
 * Fails only where memory runs out (gc3_plan_slots_suffice; `what` names the caller in diag); the
 * preparation's first exchange checks that every rank found the same shape. */
gc3_status_t gc3_plan_fifo_shape(const gc3_exec_params_t *ep, const gc3_ir_program_t *prog, const gc3_flat_program_t *f,
                                 int cnt_max, int k, const char *what, gc3_diag_t *diag, uint64_t *payload_p,
                                 int *slots_p)
{
    const uint64_t chunk = gc3_plan_chunk_bytes(prog, f, k);
    const int      conns = gc3_flat_max_recv(ep, f), one_node = !gc3_flat_crosses_nodes(f, ep->node);
    uint64_t       payload = (uint64_t)ep->slot_bytes / 16 * 16, need = 0,
             fifo = prog->fifo_cap > 0 && (ep->fifo_bytes == 0 || prog->fifo_cap < ep->fifo_bytes) ? prog->fifo_cap
                                                                                                   : ep->fifo_bytes;
    int full[2] = { 0, 0 }, two = 0;

    if (gc3_plan_zc_allowed(ep, prog) && one_node && ep->zc_fifo_bytes > 0 && (fifo == 0 || ep->zc_fifo_bytes < fifo)) {
        gc3_zc_full(f, full);
        if ((f->outofplace || f->inplace) && (full[0] || !f->outofplace) && (full[1] || !f->inplace)) {
            fifo = ep->zc_fifo_bytes;
        }
    }
    *slots_p = ep->slots;
    if (chunk > 0) {
        need    = (uint64_t)cnt_max * chunk;
        need    = need < 256 ? 256 : need;
        payload = need < payload ? need : payload;
    }
    if (need > 0 && need <= payload && ep->slots > 2 && one_node && f->coll != GC3_COLL_CUSTOM &&
        gc3_flat_one_send_per_block(f) && (fifo == 0 || conns == 0 || need <= gc3_plan_slot_cap(fifo, conns, 2))) {
        const gc3_status_t status = gc3_plan_slots_suffice(prog, 2, &two);
        if (status != GC3_OK) {
            gc3_diag_add(diag, "%s: program '%s': out of host memory choosing its FIFO slots", what, prog->name);
            return status;
        }
    }
    if (two) {
        *slots_p   = 2;
        *payload_p = need;
        return GC3_OK;
    }
    if (fifo > 0 && conns > 0) {
        uint64_t cap = gc3_plan_slot_cap(fifo, conns, ep->slots);
        payload      = cap < payload ? cap : payload;
    }
    *payload_p = payload;
    return GC3_OK;
}

/* The slot stride of a payload: LL, lines of twice the header and payload; Simple, the signature's
 * line, then the payload, slots starting on lines. */
uint64_t gc3_plan_slot_stride(int proto, uint64_t payload)
{
    return proto == GC3_PROTO_LL ? 2 * (payload + GC3_RT_MSG_HDR)
                                 : gc3_rt_round(payload + GC3_RT_SIMPLE_HDR, GC3_RT_LINE);
}

/* Zero-copy mode for each kind of call (full[0] out of place, full[1] in place) of a flat program whose
 * sends gc3_flat_zc_mark marked: every message in place, no scratch (its copies would grow with the
 * tile), a collective whose every rank waits for every other in each call (the agreement's words are
 * read before they change; not a rooted collective's: its root and other ranks may make different kinds
 * of call). One node, plan ids within the agreement's board: the caller's part. */
void gc3_zc_full(const gc3_flat_program_t *f, int full[2])
{
    const gc3_flat_tb_t   *tbs     = gc3_flat_tbs(f);
    const gc3_flat_step_t *steps   = gc3_flat_steps(f);
    int                    scratch = 0;

    full[0] = f->outofplace;
    full[1] = f->inplace;
    for (int r = 0; r < f->nranks; r++) {
        scratch |= gc3_flat_ranks(f)[r].s_chunks > 0;
    }
    for (int t = 0; t < f->ntbs; t++) {
        for (int s = 0; s < tbs[t].nsteps; s++) {
            const gc3_flat_step_t *st = &steps[tbs[t].step_begin + s];
            if (gc3_step_flags((gc3_step_type_t)st->type) & GC3_STEP_F_SEND) {
                full[0] = full[0] && (st->zc & GC3_FLAT_ZC_OOP);
                full[1] = full[1] && (st->zc & GC3_FLAT_ZC_IP);
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        full[k] = full[k] && !scratch && f->coll != GC3_COLL_CUSTOM && !gc3_coll_desc((gc3_coll_t)f->coll)->rooted;
    }
}

/* The flat form of this rank's program for an estimate (what: the caller, for messages), fused as
 * gc3_prep_local fuses it when fuse, with its segments' chunk count k and its largest step's chunks. */
static gc3_status_t gc3_plan_flat_sized(const gc3_exec_params_t *ep, const gc3_ir_program_t *program, int fuse,
                                        const char *what, gc3_diag_t *diag, gc3_flat_program_t **f_p, int *k_p,
                                        int *cnt_max_p)
{
    gc3_flat_program_t *f = NULL;
    gc3_status_t        status;
    int                 k_in, k_out, cnt_max = 1;

    if ((status = gc3_flat_create(program, &f)) != GC3_OK) {
        gc3_diag_add(diag, "%s: program '%s' is malformed (run the verifier)", what, program->name);
        return status;
    }
    if (fuse) {
        (void)gc3_flat_fuse(f, ep->rank, GC3_RT_FUSE_MAX); /* as gc3_prep_local */
    }
    gc3_plan_segments(f, &k_in, &k_out);
    for (int i = 0; i < f->nsteps; i++) {
        cnt_max = gc3_flat_steps(f)[i].cnt > cnt_max ? gc3_flat_steps(f)[i].cnt : cnt_max;
    }
    if ((k_in > k_out ? k_in : k_out) < 1) {
        gc3_diag_add(diag, "%s: program '%s' has fewer chunks than ranks", what, program->name);
        gc3_flat_destroy(f);
        return GC3_ERR_INVALID_PARAM;
    }
    *f_p       = f;
    *k_p       = k_in > k_out ? k_in : k_out;
    *cnt_max_p = cnt_max;
    return GC3_OK;
}

gc3_status_t gc3_plan_estimate(const gc3_exec_params_t *ep, const gc3_ir_program_t *program, gc3_diag_t *diag,
                               gc3_plan_mem_t *m)
{
    gc3_flat_program_t    *f = NULL;
    gc3_rt_layout_t        L;
    const gc3_flat_rank_t *me;
    gc3_status_t           status;
    int                    k, cnt_max = 1, slots, proto = gc3_proto_runs_as(program->proto), relabel;
    uint64_t               payload, stride, chunk;

    memset(m, 0, sizeof(*m));
    memset(&L, 0, sizeof(L));
    if (program->ngpus != ep->nranks || ep->rank < 0 || ep->rank >= ep->nranks || ep->slots < 2) {
        gc3_diag_add(diag, "estimate: program '%s' is for %d ranks, the parameters say rank %d of %d (%d slots)",
                     program->name, program->ngpus, ep->rank, ep->nranks, ep->slots);
        return GC3_ERR_INVALID_PARAM;
    }
    if ((status = gc3_plan_flat_sized(ep, program, ep->fuse, "estimate", diag, &f, &k, &cnt_max)) != GC3_OK) {
        return status;
    }
    gc3_plan_zc_marks(ep, program, f);
    if ((status = gc3_plan_fifo_shape(ep, program, f, cnt_max, k, "estimate", diag, &payload, &slots)) != GC3_OK) {
        gc3_flat_destroy(f);
        return status;
    }
    stride = gc3_plan_slot_stride(proto, payload);
    chunk  = gc3_plan_chunk_bytes(program, f, k);
    me     = &gc3_flat_ranks(f)[ep->rank];
    /* a relabelled plan: the union of its shifts' connections, the most blocks and scratch of any program rank */
    relabel = gc3_plan_relabels(ep, f);
    status  = relabel ? gc3_rt_layout_union(f, ep->rank, slots, stride, gc3_plan_takes_pool(ep, proto, f, ep->node), &L)
                      : gc3_rt_layout_compute(f, ep->rank, slots, stride, ep->node, ep->net_direct,
                                              gc3_plan_takes_pool(ep, proto, f, ep->node), &L);
    if (status == GC3_OK) {
        /* the largest call's tile (a chunk, or what a slot carries of it), and its loops' copies of scratch
         * (gc3_call_memory's: no more than the call has loops) */
        uint64_t tile = payload / (uint64_t)cnt_max / 16 * 16, loops;
        int      ntbs = relabel ? L.nblocks : me->ntbs, s_chunks = me->s_chunks;
        for (int r = 0; relabel && r < f->nranks; r++) {
            s_chunks = gc3_flat_ranks(f)[r].s_chunks > s_chunks ? gc3_flat_ranks(f)[r].s_chunks : s_chunks;
        }
        tile  = chunk > 0 && chunk < tile ? chunk : tile;
        loops = chunk > 0 && tile > 0 ? (chunk + tile - 1) / tile : GC3_RT_WINDOW;
        gc3_plan_mem_layout(m, &L, ntbs, slots, payload, stride);
        m->scratch = s_chunks > 0 ? (uint64_t)s_chunks * tile * (uint64_t)gc3_rt_scratch_copies(loops) : 0;
        m->stage   = proto == GC3_PROTO_LL ? gc3_plan_stage_bytes(payload) * 2 * (uint64_t)(ntbs > 0 ? ntbs : 1) : 0;
        m->pinned  = L.net_bytes;
#ifdef GC3_HAVE_CUDA
        if (ep->backend == GC3_BACKEND_CUDA && gc3_rt_backend_cuda.mem_estimate != NULL) {
            gc3_rt_backend_cuda.mem_estimate(f, ntbs, m);
        }
#endif
        gc3_rt_layout_free(&L);
    }
    gc3_flat_destroy(f);
    return status;
}

gc3_status_t gc3_plan_call_shape(const gc3_exec_params_t *ep, const gc3_ir_program_t *program, uint64_t count,
                                 gc3_dtype_t dtype, int inplace, gc3_diag_t *diag, gc3_call_shape_t *shape)
{
    gc3_flat_program_t *f = NULL;
    gc3_status_t        status;
    int                 k, cnt_max = 1, full[2] = { 0, 0 };

    memset(shape, 0, sizeof(*shape));
    if (program->ngpus != ep->nranks || ep->rank < 0 || ep->rank >= ep->nranks || ep->slots < 2 ||
        gc3_dtype_size(dtype) == 0) {
        gc3_diag_add(diag, "call shape: program '%s' is for %d ranks, the parameters say rank %d of %d (%d slots)",
                     program->name, program->ngpus, ep->rank, ep->nranks, ep->slots);
        return GC3_ERR_INVALID_PARAM;
    }
    if ((status = gc3_plan_flat_sized(ep, program, 0, "call shape", diag, &f, &k, &cnt_max)) != GC3_OK) {
        return status;
    }
    if (gc3_plan_zc_marks(ep, program, f) && !gc3_flat_crosses_nodes(f, ep->node)) {
        gc3_zc_full(f, full);
    }
    if ((status = gc3_plan_fifo_shape(ep, program, f, cnt_max, k, "call shape", diag, &shape->slot_payload,
                                      &shape->slots)) != GC3_OK) {
        gc3_flat_destroy(f);
        return status;
    }
    shape->chunks   = (uint64_t)k;
    shape->cnt_max  = cnt_max;
    shape->blocks   = gc3_flat_ranks(f)[ep->rank].ntbs;
    shape->zc_mode  = full[inplace ? 1 : 0];
    shape->resident = ep->resident_us > 0 && shape->blocks > 0 && shape->blocks <= GC3_RESIDENT_MAX_BLOCKS &&
                      !gc3_flat_crosses_nodes(f, ep->node);
    status = count == 0 ? GC3_OK
                        : gc3_rt_tile(gc3_rt_msg_max(ep, shape->slot_payload, shape->zc_mode), cnt_max,
                                      f->coll == GC3_COLL_CUSTOM, count, (uint64_t)k, dtype, &shape->tile, diag);
    if (status == GC3_OK && count > 0) {
        shape->loops = (int)((count + (uint64_t)k * shape->tile - 1) / ((uint64_t)k * shape->tile));
    }
    gc3_flat_destroy(f);
    return status;
}

gc3_status_t gc3_exec_estimate(const gc3_exec_t *exec, const gc3_ir_program_t *program, gc3_diag_t *diag,
                               gc3_plan_mem_t *mem)
{
    return gc3_plan_estimate(&exec->params, program, diag, mem);
}
