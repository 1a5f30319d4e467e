/* gc3 / libgpuir: alpha-beta cost model (see gc3_cost.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include "gc3_cost.h"
#include "gc3_sim.h"

void gc3_machine_default(gc3_machine_t *m, int nodes, int gpus_per_node)
{
    memset(m, 0, sizeof(*m));
    m->nodes          = nodes;
    m->gpus_per_node  = gpus_per_node;
    m->intra_alpha_us = 0.7;   /* flag ping-pong between two H200s: 0.62 us one way */
    m->intra_bw_GBps  = 360.0; /* SM copy to a peer: 359 GB/s measured */
    m->net_alpha_us   = 3.0;
    m->net_bw_GBps    = 25.0;  /* one 200 Gb/s NIC per GPU */
    m->step_us        = 0.1;
    m->sync_us        = 0.4;
    m->local_bw_GBps  = 2000.0;
    m->launch_us      = 4.0;
    m->stage_bw_GBps  = 0.0;   /* GPUDirect */
    m->stage_alpha_us = 1.0;
    m->slot_bytes     = 1u << 20;
    m->max_tiles      = 8;
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

typedef struct {
    double arrival;
    double staged_bytes; /* host-staged between nodes: what the receiver reads from host memory */
} gc3_costmsg_t;

typedef struct {
    const gc3_flat_program_t *flat;
    const gc3_machine_t      *m;
    double                    tile_bytes;  /* bytes of one chunk in one tile */
    double                    bw_factor;   /* protocol efficiency */
    double                    sync_us;
    double                   *clock;       /* per thread block */
    double                   *done_at;     /* per (loop, global step) */
    double                   *port;        /* per rank: GC3_COST_PORTS, [intra egress, intra ingress, net
                                            * egress, net ingress, PCIe up, PCIe down (host-staged)] */
    double                    end;
} gc3_costctx_t;

#define GC3_COST_PORTS 6

/* A transfer of `bytes` at `GBps` on one port, not before t: when it ends (the port busy until then). */
static double gc3_cost_port(double *port, double t, double bytes, double GBps)
{
    double start = *port > t ? *port : t;
    *port        = start + bytes / (GBps * 1e3);
    return *port;
}

static void gc3_costmsg_free(void *ctx, void *msg)
{
    (void)ctx;
    free(msg);
}

static double gc3_cost_priority(void *ctx, int gtb)
{
    return ((gc3_costctx_t *)ctx)->clock[gtb];
}

static gc3_status_t gc3_cost_exec(void *ctx, const gc3_sim_step_t *sc, void *in, void **out_p)
{
    gc3_costctx_t         *x     = ctx;
    const gc3_flat_step_t *fs    = sc->st;
    unsigned               flags = gc3_step_flags((gc3_step_type_t)fs->type);
    gc3_costmsg_t         *msg   = in;
    double                 t     = x->clock[sc->gtb];
    double                 bytes = x->tile_bytes * (fs->cnt > 0 ? fs->cnt : 0);

    if (sc->dep_gtb >= 0) {
        const gc3_flat_tb_t *dt = &gc3_flat_tbs(x->flat)[sc->dep_gtb];
        double d = x->done_at[(size_t)sc->loop * (size_t)x->flat->nsteps + (size_t)dt->step_begin + (size_t)fs->dep_step];
        t        = d > t ? d : t;
    }
    if (msg != NULL) {
        t = msg->arrival > t ? msg->arrival : t;
        if (msg->staged_bytes > 0) { /* the receiving kernel reads it from pinned host memory */
            t = gc3_cost_port(&x->port[(size_t)sc->rank * GC3_COST_PORTS + 5], t + x->m->stage_alpha_us,
                              msg->staged_bytes, x->m->stage_bw_GBps);
        }
        free(msg);
    }
    t += x->m->step_us;
    if (flags & (GC3_STEP_F_REDUCE | GC3_STEP_F_WRITE_DST)) {
        t += bytes / (x->m->local_bw_GBps * 1e3);
    }
    if (flags & GC3_STEP_F_SEND) {
        int            peer = sc->tbinfo->send;
        int            net  = sc->rank / x->m->gpus_per_node != peer / x->m->gpus_per_node;
        double         bw   = (net ? x->m->net_bw_GBps : x->m->intra_bw_GBps) * x->bw_factor;
        double         a    = net ? x->m->net_alpha_us : x->m->intra_alpha_us;
        double        *eg   = &x->port[(size_t)sc->rank * GC3_COST_PORTS + (size_t)(net ? 2 : 0)];
        double        *ig   = &x->port[(size_t)peer * GC3_COST_PORTS + (size_t)(net ? 3 : 1)];
        const int      staged = net && x->m->stage_bw_GBps > 0;
        double         start;
        gc3_costmsg_t *out  = malloc(sizeof(*out));
        if (out == NULL) {
            return GC3_ERR_NO_MEMORY;
        }
        out->staged_bytes = staged ? bytes : 0.0;
        if (staged) { /* the sending kernel copies it to pinned host memory first */
            t = gc3_cost_port(&x->port[(size_t)sc->rank * GC3_COST_PORTS + 4], t, bytes, x->m->stage_bw_GBps);
        }
        start        = t;
        start        = *eg > start ? *eg : start;
        start        = *ig > start ? *ig : start;
        t            = start + bytes / (bw * 1e3) + x->sync_us;
        *eg = *ig    = t;
        out->arrival = t + a;
        *out_p       = out;
    }
    x->clock[sc->gtb] = t;
    x->done_at[(size_t)sc->loop * (size_t)x->flat->nsteps + (size_t)sc->tbinfo->step_begin + (size_t)sc->step] = t;
    x->end = t > x->end ? t : x->end;
    return GC3_OK;
}

gc3_status_t gc3_cost_predict(const gc3_ir_program_t *p, const gc3_machine_t *m, uint64_t bytes, gc3_diag_t *diag,
                              double *time_us_p)
{
    gc3_costctx_t       x;
    gc3_sim_ops_t       ops = {gc3_cost_exec, gc3_cost_priority, gc3_costmsg_free};
    gc3_sim_params_t    params = {8, 1, 1};
    gc3_flat_program_t *flat = NULL;
    gc3_status_t        status;
    double              chunk_bytes;
    int                 tiles;
    gc3_proto_t         proto;

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
    memset(&x, 0, sizeof(x));
    chunk_bytes   = (double)bytes / p->nchunksperloop;
    tiles         = (int)ceil(chunk_bytes / (double)m->slot_bytes);
    tiles         = tiles < 1 ? 1 : tiles > m->max_tiles ? (m->max_tiles > 0 ? m->max_tiles : 1) : tiles;
    params.nloops = tiles;
    x.flat        = flat;
    x.m           = m;
    x.tile_bytes  = chunk_bytes / tiles;
    proto         = gc3_proto_runs_as(p->proto); /* what the runtime runs (LL128: Simple) */
    x.bw_factor   = proto == GC3_PROTO_LL ? 0.5 : 1.0;
    x.sync_us     = proto == GC3_PROTO_SIMPLE ? m->sync_us : 0.0;
    x.clock       = calloc((size_t)flat->ntbs + 1, sizeof(double));
    x.done_at     = calloc((size_t)flat->nsteps * (size_t)tiles + 1, sizeof(double));
    x.port        = calloc((size_t)p->ngpus * GC3_COST_PORTS, sizeof(double));
    if (x.clock == NULL || x.done_at == NULL || x.port == NULL) {
        status = GC3_ERR_NO_MEMORY;
        goto out;
    }
    status = gc3_sim_run(flat, &params, &ops, &x, diag);
    if (status == GC3_OK) {
        *time_us_p = m->launch_us + x.end;
    }
out:
    free(x.clock);
    free(x.done_at);
    free(x.port);
    gc3_flat_destroy(flat);
    return status;
}
