/* coll/gc3: a plan of a communicator (the AGREE, PREPARE and CONNECT phases of its set-up,
 * coll_gc3_setup.c). AGREE: libgpuir makes the rule's program for this communicator (gc3_rule_program)
 * and every rank says whether it has one, its hash and the call's key; PREPARE: the runtime
 * prepares the plan (connections), in steps that never wait; CONNECT: every rank says whether its
 * connections are up. The plan is then ready, or not used (its calls run without it), or the call
 * that asked for it fails (the ranks called with different sizes or modes). */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

/* The program of a plan (libgpuir: the rule's, for this communicator and the plan's calls),
 * verified, within the block budget. */
static int gc3_plan_build(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s, const gc3_rule_t *rule)
{
    gc3_rule_made_t   made;
    gc3_rule_target_t t  = { .ranks = ompi_comm_size(m->comm),
                             /* hierarchical programs number ranks node-major: only when the nodes are
                            * consecutive blocks of equal size; otherwise a flat program (its
                            * connections between nodes go through UCX all the same) */
                             .nodes      = m->regular ? m->nodes : 1,
                             .inplace    = s->inplace,
                             .root       = s->root == MCA_COLL_GC3_ROOT_ANY ? 0 : s->root,
                             .slots      = mca_coll_gc3_component.fifo_slots,
                             .max_blocks = m->block_budget[s->backend] };
    int               ok = gc3_rule_program(rule, &t, &m->setup.diag, &s->program, &made) == GC3_OK;

    m->setup.job_narrow[0] = '\0';
    m->setup.job_copied[0] = '\0';
    if (ok && made.narrowed) {
        gc3_snprintf_cut(m->setup.job_narrow, sizeof(m->setup.job_narrow),
                         " (narrowed from %d x %d to fit %d thread blocks per rank)", made.asked_channels,
                         made.asked_instances, t.max_blocks);
    }
    if (made.copied) {
        gc3_snprintf_cut(m->setup.job_copied, sizeof(m->setup.job_copied),
                         ", the input copied into place first (a program for in-place calls)");
    }
    m->setup.job_proto     = made.proto;
    m->setup.job_channels  = made.channels;
    m->setup.job_instances = made.instances;
    return ok;
}

uint64_t mca_coll_gc3_budget(const mca_coll_gc3_module_t *m, int backend)
{
    if (mca_coll_gc3_component.memory_budget > 0) {
        return (uint64_t)mca_coll_gc3_component.memory_budget;
    }
    return backend == GC3_BACKEND_CUDA && m->gpu_mem > 0 ? m->gpu_mem / 16 : (1ull << 30);
}

/* A plan that would take this process past its memory budget is first made smaller: its FIFOs
 * capped at half, a quarter, ... of coll_gc3_plan_fifo_bytes (a slower plan, still far faster than
 * staging), down to GC3_PLAN_FIT_MIN; what each rank can take goes in its card and the plan is built
 * with the smallest (every rank lays out the same slots). Past that, its calls are staged. */
#define GC3_PLAN_FIT_MIN   (1ull << 20)
#define GC3_PLAN_FIT_WHOLE UINT64_MAX /* fits as it is */

static int gc3_plan_fits(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s, uint64_t cap, uint64_t room,
                         uint64_t *need)
{
    gc3_plan_mem_t mem;
    s->program->fifo_cap = cap;
    if (gc3_exec_estimate(m->exec[s->backend], s->program, NULL, &mem) != GC3_OK) {
        s->program->fifo_cap = 0;
        return -1; /* the preparation says what is wrong with it */
    }
    s->program->fifo_cap = 0;
    *need                = gc3_plan_mem_device(&mem) + gc3_exec_pool_need(m->exec[s->backend], &mem);
    return *need <= room;
}

/* The FIFO cap this rank can take the plan of s with: GC3_PLAN_FIT_WHOLE, a cap, or 0 (not within
 * the budget at all: diag says so). */
static uint64_t gc3_plan_fit(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    gc3_mem_held_t held;
    const uint64_t budget = mca_coll_gc3_budget(m, s->backend),
                   asked  = (uint64_t)mca_coll_gc3_component.plan_fifo_bytes;
    uint64_t room, need = 0, whole = 0, cap;
    char     a[32], b[32], c[32], d[32];

    gc3_mem_held(&held);
    room = held.device + held.deferred < budget ? budget - held.device - held.deferred : 0;
    if (gc3_plan_fits(m, s, 0, room, &whole) != 0) { /* (or the estimate failed: the preparation says why) */
        return GC3_PLAN_FIT_WHOLE;
    }
    for (cap = asked > 0 ? asked / 2 : GC3_PLAN_FIFO_BYTES_DEFAULT; cap >= GC3_PLAN_FIT_MIN; cap /= 2) {
        if (gc3_plan_fits(m, s, cap, room, &need) != 0) {
            return cap;
        }
    }
    gc3_diag_add(&m->setup.diag,
                 "over the memory budget: it needs %s (%s with the smallest FIFOs), gc3 holds %s of "
                 "coll_gc3_memory_budget %s in this process: its calls are staged",
                 gc3_mem_format(whole, a, sizeof(a)), gc3_mem_format(need, c, sizeof(c)),
                 gc3_mem_format(held.device + held.deferred, b, sizeof(b)), gc3_mem_format(budget, d, sizeof(d)));
    return 0;
}

/* Every rank's card says what it can take: the plan gets the smallest FIFO cap of them. */
static void gc3_plan_fit_agreed(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s, const mca_coll_gc3_card_t *v)
{
    uint64_t cap = GC3_PLAN_FIT_WHOLE;

    for (int r = 0; r < ompi_comm_size(m->comm); r++) {
        cap = v[r].cap < cap ? v[r].cap : cap;
    }
    s->program->fifo_cap = cap != GC3_PLAN_FIT_WHOLE ? cap : 0;
}

int mca_coll_gc3_plan_post(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    const gc3_rules_t   *R      = mca_coll_gc3_rules();
    mca_coll_gc3_card_t *c      = calloc(1, sizeof(*c));
    uint64_t             key[5] = { (uint64_t)s->coll, (uint64_t)s->bytes, (uint64_t)s->inplace, (uint64_t)s->backend,
                                    (uint64_t)(int64_t)s->root }; /* the ranks' plans are for one call */
    const gc3_rule_t    *rule   = &R->rules[s->rule];
    int                  ok     = gc3_plan_build(m, s, rule) && m->exec[s->backend] != NULL;
    uint64_t             fit;

    fit = ok ? gc3_plan_fit(m, s) : 0;
    ok  = ok && fit != 0;

    m->setup.xsend = (char *)c;
    if (c != NULL) {
        c->ok   = (uint64_t)ok;
        c->cap  = fit;
        c->hash = ok ? gc3_ir_hash(s->program) : 0;
        c->key  = gc3_fnv1a(GC3_FNV1A_START, key, sizeof(key));
    }
    return mca_coll_gc3_agree_post(m, sizeof(*c));
}

/* A plan's memory as its verbose line says it, appended to *line; pooled (its slots in the FIFO
 * pool, which now holds pool bytes): the slots' part of the pool, which is the communicator's, not
 * the plan's. */
static int gc3_plan_mem_text(const gc3_plan_mem_t *mem, uint64_t pool, char **line)
{
    char d[32], sb[32], f[32], sc[32], st[32], o[32], ct[32], p1[32], p2[32];
    int  ok = 1;

    ok = gc3_str_appendf(line, "; memory %s (FIFOs %s", gc3_mem_format(gc3_plan_mem_device(mem), d, sizeof(d)),
                         gc3_mem_format(mem->fifo, f, sizeof(f))) == GC3_OK;
    if (ok && mem->pool > 0) {
        ok = gc3_str_appendf(line, " + %s of the communicator's FIFO pool of %s",
                             gc3_mem_format(mem->pool, p1, sizeof(p1)), gc3_mem_format(pool, p2, sizeof(p2))) == GC3_OK;
    }
    return ok && gc3_str_appendf(line,
                                 ": %d connection(s) x %d slots x %s; flags, scratch, LL staging, control %s, %s, "
                                 "%s, %s)",
                                 mem->recv_conns, mem->slots, gc3_mem_format(mem->slot_bytes, sb, sizeof(sb)),
                                 gc3_mem_format(mem->flags, o, sizeof(o)), gc3_mem_format(mem->scratch, sc, sizeof(sc)),
                                 gc3_mem_format(mem->stage, st, sizeof(st)),
                                 gc3_mem_format(mem->control, ct, sizeof(ct))) == GC3_OK;
}

/* The verbose line of a plan (level 1), used or not: built whole, however long (paths of program
 * files, reasons). */
static void gc3_plan_line(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s, int ok, const gc3_plan_mem_t *pm)
{
    const gc3_rule_t *rule     = &mca_coll_gc3_rules()->rules[s->rule];
    const gc3_proto_t proto    = (gc3_proto_t)m->setup.job_proto;
    char              net[512] = "", lo[32], hi[32], *line = NULL;
    int               fine;

    if (!ok) {
        mca_coll_gc3_set_text(&s->why, "%s", m->setup.diag.count ? m->setup.diag.msgs[0] : "a rank could not build it");
    }
    if (mca_coll_gc3_component.verbose < 1 || !MCA_COLL_GC3_SAYS(m->comm)) {
        return;
    }
    /* a rules line's range as written (A-B: A < bytes <= B); a program file's from its minBytes, the
     * smallest call it takes (its rule's bytes_lo is one below) */
    gc3_format_bytes(rule->xml != NULL && rule->bytes_lo > 0 ? rule->bytes_lo + 1 : rule->bytes_lo, lo, sizeof(lo));
    gc3_format_bytes(rule->bytes_hi, hi, sizeof(hi));
    fine = gc3_str_appendf(&line, "coll:gc3: comm %s: %s %s-%s bytes%s (%s backend, %d rank%s, %s", m->comm->c_name,
                           gc3_coll_desc(s->coll)->mpi_name, lo, hi, s->inplace ? ", in place" : "",
                           s->backend == GC3_BACKEND_CUDA ? "cuda" : "host", ompi_comm_size(m->comm),
                           ompi_comm_size(m->comm) == 1 ? "" : "s", gc3_link_name(m->link[s->backend])) == GC3_OK;
    if (fine && m->nodes > 1) {
        fine = gc3_str_appendf(&line, ", %d nodes%s%s", m->nodes,
                               mca_coll_gc3_component.pseudo_nodes > 0 ? " (pseudo-nodes)" : "",
                               m->regular ? "" : " of uneven or interleaved ranks: flat program") == GC3_OK;
    }
    fine = fine && gc3_str_appendf(&line, "): %s %s", rule->algo, gc3_proto_name(proto)) == GC3_OK;
    if (fine && gc3_proto_runs_as(proto) != proto) {
        fine = gc3_str_appendf(&line, " (gc3 has no %s: runs as %s)", gc3_proto_name(proto),
                               gc3_proto_name(gc3_proto_runs_as(proto))) == GC3_OK;
    }
    fine = fine &&
           gc3_str_appendf(&line, ", %d channel(s) x %d instance(s)%s, rule %s%s", m->setup.job_channels,
                           m->setup.job_instances, m->setup.job_narrow, rule->where, m->setup.job_copied) == GC3_OK;
    if (fine && !ok) {
        fine = gc3_str_appendf(&line, "; NOT USED: %s", MCA_COLL_GC3_TEXT(s->why)) == GC3_OK;
    } else if (fine) {
        int runs = gc3_plan_fused_runs(s->plan);
        fine     = gc3_str_appendf(&line, ", verified") == GC3_OK;
        if (fine && gc3_coll_desc(s->coll)->rooted) { /* (coll_gc3_relabel) */
            fine = (gc3_plan_roots(s->plan) > 1
                        ? gc3_str_appendf(&line, ", serves every root (relabelled)")
                        : gc3_str_appendf(&line, ", for root %d", s->root == MCA_COLL_GC3_ROOT_ANY ? 0 : s->root)) ==
                   GC3_OK;
        }
        if (fine && runs > 0) {
            fine = gc3_str_appendf(&line, ", %d fused run%s of local steps", runs, runs > 1 ? "s" : "") == GC3_OK;
        }
        gc3_plan_net_describe(s->plan, net, sizeof(net)); /* (a fixed set of words) */
        if (fine && net[0] != '\0') {
            fine = gc3_str_appendf(&line, "; %s%s%s", net, m->net_why[s->backend][0] != '\0' ? "; " : "",
                                   m->net_why[s->backend]) == GC3_OK;
        }
        if (fine) {
            char zc[512];
            gc3_plan_zc_describe(s->plan, zc, sizeof(zc)); /* (a fixed set of words and numbers) */
            if (zc[0] != '\0') {
                fine = gc3_str_appendf(&line, "; %s", zc) == GC3_OK;
            }
        }
        fine = fine && gc3_plan_mem_text(pm, gc3_exec_pool_bytes(m->exec[s->backend]), &line);
        if (fine && s->program->fifo_cap > 0) {
            const uint64_t asked = (uint64_t)mca_coll_gc3_component.plan_fifo_bytes;
            char           a[32], b[32];
            fine = gc3_str_appendf(&line, "; made smaller to fit coll_gc3_memory_budget: FIFOs capped at %s, not %s",
                                   gc3_mem_format(s->program->fifo_cap, a, sizeof(a)),
                                   asked > 0 ? gc3_mem_format(asked, b, sizeof(b)) : "uncapped") == GC3_OK;
        }
    }
    opal_output_verbose(1, mca_coll_gc3_component.output, "%s", fine ? line : "coll:gc3: (out of host memory)");
    free(line);
}

/* The end of a plan's set-up: ready, or not used (its calls run without it), or the call fails. */
static void gc3_plan_end(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s, int ok, int line)
{
    gc3_plan_mem_t mem;

    /* what it takes at most (scratch and staging come with its calls) */
    memset(&mem, 0, sizeof(mem));
    if (ok && gc3_exec_estimate(m->exec[s->backend], s->program, NULL, &mem) == GC3_OK) {
        const uint64_t pool = gc3_exec_pool_bytes(m->exec[s->backend]);
        m->mem.plans++;
        m->mem.peak += gc3_plan_mem_device(&mem);
        if (pool > m->mem.pool[s->backend]) { /* the pool grew (the old one was freed) */
            m->mem.peak += pool - m->mem.pool[s->backend];
            m->mem.pool[s->backend] = pool;
        }
        m->mem.rank = ompi_comm_rank(m->comm);
        gc3_snprintf_cut(m->mem.name, sizeof(m->mem.name), "%s", m->comm->c_name);
    }
    if (line) {
        gc3_plan_line(m, s, ok, &mem);
    }
    if (!ok) {
        gc3_plan_destroy(s->plan);
        gc3_ir_program_destroy(s->program);
        s->plan    = NULL;
        s->program = NULL;
    }
    s->blocks = ok ? gc3_ir_widest_rank(s->program) : 0;
    s->state  = ok ? MCA_COLL_GC3_ENTRY_READY : MCA_COLL_GC3_ENTRY_FAILED;
}

/* AGREE is done: the verdict, then the runtime's preparation (or the end). 1 when the job goes on. */
int mca_coll_gc3_plan_agreed(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    const mca_coll_gc3_card_t *v = (const mca_coll_gc3_card_t *)m->setup.xrecv, *mine = &v[ompi_comm_rank(m->comm)];
    int                        peer, a = mca_coll_gc3_verdict(v, ompi_comm_size(m->comm), mine->key, &peer);

    if (a == MCA_COLL_GC3_AGREE_MISMATCH) {
        opal_output(0,
                    "coll:gc3: comm %s rank %d: %s of %zu bytes%s: rank %d called it with another size or "
                    "mode (an erroneous program): the call fails",
                    m->comm->c_name, ompi_comm_rank(m->comm), gc3_coll_desc(s->coll)->mpi_name, s->bytes,
                    s->inplace ? " in place" : "", peer);
        gc3_plan_end(m, s, 0, 0);
        s->fail_call = 1; /* the call that built it fails; a later, consistent call builds it again */
        return 0;
    }
    if (a == MCA_COLL_GC3_AGREE_DIFFERENT) {
        char what[96];
        gc3_snprintf_cut(what, sizeof(what), "the %s plan (a program file differs?)", gc3_coll_desc(s->coll)->mpi_name);
        mca_coll_gc3_warn_disagree(m, what, peer);
    }
    if (a != MCA_COLL_GC3_AGREE_OK) {
        gc3_plan_end(m, s, 0, 1);
        return 0;
    }
    gc3_plan_fit_agreed(m, s, v);
    if (gc3_exec_prepare_post(m->exec[s->backend], s->program, &m->setup.diag, &m->setup.prep) != GC3_OK) {
        /* nothing posted (the program does not fit the executor: the same on every rank) */
        gc3_plan_end(m, s, 0, 1);
        return 0;
    }
    return 1;
}

int mca_coll_gc3_plan_prepared(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    gc3_status_t st = gc3_exec_prepare_test(m->setup.prep, &m->setup.diag, &s->plan);

    if (st == GC3_IN_PROGRESS) {
        return 0;
    }
    m->setup.prep = NULL;
    /* ok or not, every rank says so in CONNECT (a local failure after the last exchange) */
    m->setup.xsend = calloc(1, sizeof(mca_coll_gc3_card_t));
    if (m->setup.xsend != NULL) {
        ((mca_coll_gc3_card_t *)m->setup.xsend)->ok = st == GC3_OK;
    }
    return mca_coll_gc3_agree_post(m, sizeof(mca_coll_gc3_card_t)) == 0 ? 1 : -1;
}

void mca_coll_gc3_plan_connected(mca_coll_gc3_module_t *m, mca_coll_gc3_plan_entry_t *s)
{
    const mca_coll_gc3_card_t *v  = (const mca_coll_gc3_card_t *)m->setup.xrecv;
    int                        ok = 1;

    for (int r = 0; r < ompi_comm_size(m->comm) && ok; r++) {
        ok = v[r].ok != 0;
        if (!ok && m->setup.diag.count == 0) {
            gc3_diag_add(&m->setup.diag, "rank %d could not set up its connections", r);
        }
    }
    gc3_plan_end(m, s, ok, 1);
}
