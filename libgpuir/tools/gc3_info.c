/* gc3_info: which algorithm gc3 would run, for a described machine shape, per collective and
 * size range, from the rules (a file, or the built-in ones).
 *
 *   gc3_info [--rules FILE] [--algorithm-dir DIR] [--nodes N] [--gpus G] [--link nvlink|pcie|host]
 *            [--inplace] [--print-builtin]
 *   gc3_info --topology [--pci-busid ID]   the nearest network device of each GPU (or PCI device)
 *   gc3_info --devices                     the GPUs as the component sees them
 *   gc3_info --memory COLL:BYTES[,...] [shape and rules options] [--backend cuda|host] [--fifo-slots N]
 *            [--slot-bytes B] [--plan-fifo-bytes B] [--zero-copy on|off] [--zero-copy-fifo-bytes B]
 *            [--max-blocks N] [--[no-]fifo-pool] [--[no-]relabel]   the memory of those plans
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_rules.h"
#include "gc3_runtime.h"
#include "gc3_topo.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gc3_info [--rules FILE] [--algorithm-dir DIR] [--nodes N] [--gpus G]\n"
            "                [--link nvlink|pcie|host] [--inplace] [--print-builtin]\n"
            "       gc3_info --topology [--pci-busid ID]\n"
            "       gc3_info --devices\n"
            "       gc3_info --memory COLL:BYTES[,COLL:BYTES...] [the options above] [--backend cuda|host]\n"
            "                [--fifo-slots N] [--slot-bytes B] [--plan-fifo-bytes B] [--zero-copy on|off]\n"
            "                [--zero-copy-fifo-bytes B] [--max-blocks N] [--[no-]fifo-pool] [--[no-]relabel]\n"
            "  prints, for N nodes of G GPUs (ranks) joined by LINK (default 1 x 4, nvlink), which rule and\n"
            "  algorithm gc3 uses for each collective and size range; --rules FILE: the rules file the\n"
            "  component would read (coll_gc3_rules_file), default the built-in rules; --algorithm-dir DIR:\n"
            "  its XML programs too (coll_gc3_algorithm_dir); --inplace: for MPI_IN_PLACE calls (default:\n"
            "  out of place); --print-builtin: print the built-in rules (a starting point for a site's file).\n"
            "  --topology: the network device nearest each GPU of this machine (hwloc; --pci-busid ID: of\n"
            "  that PCI device instead), the one gc3's inter-node transport uses.\n"
            "  --devices: the GPUs this process sees (CUDA_VISIBLE_DEVICES applies), as the component sees\n"
            "  them: the thread blocks of gc3's kernel each one holds at once (what coll_gc3_max_blocks 0\n"
            "  divides among the ranks that share it), whether this process runs under MPS, and for each\n"
            "  pair peer access and native peer atomics (without them the link class is pcie).\n"
            "  --memory: the memory one communicator of that shape takes per rank for calls of those sizes\n"
            "  (BYTES as each rank passes them: allreduce, bcast and reduce count x size, alltoall and\n"
            "  allgather per peer, reduce_scatter_block per block; alltoallv, allgatherv, gatherv, scatterv and\n"
            "  reduce_scatter on their plain collective's plans, per segment; K, M, G suffixes; rank 0 is shown, the\n"
            "  root of bcast and reduce): each plan (one per rule matched), its FIFOs\n"
            "  (connections x slots x slot bytes), flags, scratch, LL staging, backend control memory and\n"
            "  pinned host memory, and the total, as coll_gc3_verbose 1 reports them. --backend (default\n"
            "  cuda, host with --link host), --fifo-slots (%d), --slot-bytes (0: the backend's), --plan-fifo-bytes\n"
            "  (%ldM), --zero-copy (on with the cuda backend, off with host: auto), --zero-copy-fifo-bytes\n"
            "  (%ldM) and --max-blocks (0: no limit) as the coll_gc3_ parameters of those names; --fifo-pool\n"
            "  (%s) as coll_gc3_fifo_pool true: the Simple plans' slots in one pool (the largest of them),\n"
            "  counted once in the total; --no-fifo-pool: every plan its own slots; --relabel (the default) as\n"
            "  coll_gc3_relabel true: one plan of bcast, reduce, gather and scatter for every root on one node (its\n"
            "  connections those of every root's relabelling, the same on every rank); --no-relabel: a plan per root.\n"
            "examples:\n"
            "  gc3_info                                   # the built-in rules, 1 node x 4 GPUs, NVLink\n"
            "  gc3_info --rules site.rules --gpus 8       # a site's rules file (exit 1 while it has errors)\n"
            "  gc3_info --memory allreduce:1M,alltoall:64M --gpus 4\n"
            "  gc3_info --devices\n",
            GC3_FIFO_SLOTS_DEFAULT, GC3_PLAN_FIFO_BYTES_DEFAULT >> 20, GC3_ZC_FIFO_BYTES_DEFAULT >> 20,
            GC3_FIFO_POOL_DEFAULT ? "the default" : "not the default");
}

static void fmt(uint64_t b, char *buf, size_t len)
{
    gc3_format_bytes(b, buf, len);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* One line per device: its nearest NIC. 0 when every device has one. */
static int topology(const char *busid)
{
    char       ids[64][32];
    int        n = 0, rc = 0;
    gc3_diag_t diag;

    if (busid != NULL) {
        gc3_snprintf_cut(ids[n++], sizeof(ids[0]), "%s", busid);
    }
    else {
        for (int d = 0; d < gc3_gpu_count() && n < 64; d++) {
            gc3_gpu_info_t gpu;
            if (gc3_gpu_probe(d, &gpu, NULL) == GC3_OK && strncmp(gpu.pci, "device", 6) != 0) {
                for (char *c = gpu.pci; *c; c++) *c = (char)(*c >= 'A' && *c <= 'F' ? *c - 'A' + 'a' : *c);
                snprintf(ids[n++], sizeof(ids[0]), "%s", gpu.pci);
            }
        }
    }
    if (n == 0) {
        printf("# no GPU found (give --pci-busid ID to ask about a PCI device)\n");
        return 1;
    }
    printf("# %-14s %-12s %-14s %-5s %-26s %s\n", "device", "nearest NIC", "its PCI bus", "rdma", "locality", "hops");
    for (int i = 0; i < n; i++) {
        gc3_nic_t nic;
        gc3_diag_init(&diag);
        if (gc3_topo_nearest_nic(ids[i], &nic, &diag) == GC3_OK) {
            printf("%-16s %-12s %-14s %-5s %-26s %d\n", ids[i], nic.name, nic.busid, nic.rdma ? "yes" : "no",
                   gc3_nic_locality_name(nic.locality), nic.hops);
        } else {
            printf("%-16s none: %s\n", ids[i], diag.count ? diag.msgs[0] : "?");
            rc = 1;
        }
        gc3_diag_cleanup(&diag);
    }
    return rc;
}

/* One line per GPU and one per pair; 1 when there is none (or no CUDA in this build). What the
 * component sees: the same probe (gc3_topo.h) and the same executor. */
static int devices(void)
{
#ifdef GC3_HAVE_CUDA
    int            ndev = gc3_gpu_count();
    gc3_gpu_info_t gpu[64];

    if (ndev == 0) {
        printf("# no GPU: CUDA sees no device (or no driver)\n");
        return 1;
    }
    ndev = ndev < 64 ? ndev : 64;
    printf("# %-6s %-14s %-6s %-4s %s\n", "device", "pci-bus-id", "blocks", "mps", "name");
    for (int d = 0; d < ndev; d++) {
        gc3_diag_t diag;
        char       name[64];
        int        blocks;

        gc3_diag_init(&diag);
        (void)gc3_gpu_probe(d, &gpu[d], &diag);
        gc3_gpu_name(d, name, sizeof(name));
        blocks = gc3_exec_device_blocks(GC3_BACKEND_CUDA, d, &diag); /* as the component's executor counts */
        gc3_diag_cleanup(&diag);
        printf("%-8d %-14s %-6d %-4s %s\n", d, gpu[d].pci, blocks, gpu[d].mps ? "yes" : "no", name);
    }
    if (ndev > 1) {
        printf("# %-6s %-11s %-14s %s\n", "pair", "peer-access", "native-atomics", "link");
    }
    for (int a = 0; a < ndev; a++) {
        for (int b = a + 1; b < ndev; b++) {
            const int  peers = (gpu[a].peers >> b & 1) && (gpu[b].peers >> a & 1);
            gc3_link_t link  = gc3_gpu_link(&gpu[a], &gpu[b]);
            printf("%d-%-6d %-11s %-14s %s\n", a, b, peers ? "yes" : "no", link == GC3_LINK_NVLINK ? "yes" : "no",
                   gc3_link_name(link));
        }
    }
    return 0;
#else
    printf("# no GPU: gc3 was built without CUDA\n");
    return 1;
#endif
}

/* bytes with an optional K, M, G suffix; 0 when malformed (*ok 0) */
static uint64_t parse_bytes(const char *t, int *ok)
{
    char              *e;
    unsigned long long v;
    errno = 0;
    v     = strtoull(t, &e, 10);
    *ok   = errno == 0 && e != t;
    if (*e == 'K' || *e == 'k') v <<= 10, e++;
    else if (*e == 'M' || *e == 'm') v <<= 20, e++;
    else if (*e == 'G' || *e == 'g') v <<= 30, e++;
    *ok = *ok && *e == '\0';
    return v;
}

typedef struct {
    gc3_backend_t backend;
    int           slots, max_blocks, fifo_pool, relabel, zero_copy; /* zero_copy: -1 auto (the backend's) */
    uint64_t      slot_bytes, plan_fifo_bytes, zc_fifo_bytes;
} mem_opts_t;

/* --memory: the plans one communicator of the shape builds for those calls (one per rule, as the
 * component keys them), what each takes on rank 0, and the total. 0 when all could be made. */
static int memory(const gc3_rules_t *R, const char *spec, int nodes, int gpus, gc3_link_t link, int inplace,
                  const mem_opts_t *o)
{
    const int         ranks = nodes * gpus;
    const gc3_rule_t *seen[64];
    int               nseen = 0, rc = 0;
    char             *list = strdup(spec), *save = NULL;
    uint64_t          total = 0, pinned = 0, pool = 0;
    int               npooled = 0;
    char              a[32], b[32], c[32], d[32], e[32], f[32], g[32];
    gc3_exec_params_t ep;

    gc3_exec_params_default(&ep, o->backend, 0, ranks);
    ep.slots      = o->slots;
    ep.fifo_bytes    = o->plan_fifo_bytes;
    ep.fifo_pool     = o->fifo_pool;
    ep.relabel       = o->relabel;
    ep.zero_copy     = o->zero_copy >= 0 ? o->zero_copy : o->backend == GC3_BACKEND_CUDA;
    ep.zc_fifo_bytes = o->zc_fifo_bytes;
    if (o->slot_bytes > 0) {
        ep.slot_bytes = o->slot_bytes;
    }
    printf("# memory per rank of one communicator: %d node(s) x %d GPU(s), %s, %s backend, %d slots of at most %s, "
           "plan FIFOs capped at %s%s%s%s%s\n",
           nodes, gpus, gc3_link_name(link), o->backend == GC3_BACKEND_CUDA ? "cuda" : "host", ep.slots,
           gc3_mem_format(ep.slot_bytes, a, sizeof(a)),
           o->plan_fifo_bytes ? gc3_mem_format(o->plan_fifo_bytes, b, sizeof(b)) : "no cap",
           ep.zero_copy ? ", zero-copy plans' at " : ", zero-copy off",
           ep.zero_copy ? (ep.zc_fifo_bytes ? gc3_mem_format(ep.zc_fifo_bytes, c, sizeof(c)) : "the same") : "",
           o->fifo_pool ? ", Simple plans' slots in one FIFO pool" : "",
           o->relabel ? ", one plan for every root" : ", a plan per root");
    printf("%-26s %-28s %-9s %-28s %-10s %-10s %-10s %-10s %-10s %s\n", "# call", "plan", "total", "FIFOs (conns x slots x bytes)",
           "flags", "scratch", "staging", "control", "pinned", "rule");
    for (char *tok = strtok_r(list, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
        char             *colon = strchr(tok, ':');
        int               ok = 0, dup = 0, v = 0;
        gc3_coll_t        coll = GC3_COLL_CUSTOM;
        uint64_t          per, bytes;
        const gc3_rule_t *r;
        if (colon != NULL) {
            *colon = '\0';
            per    = parse_bytes(colon + 1, &ok);
            if (gc3_coll_from_call_name(tok, &coll, &v) != GC3_OK) { /* (alltoallv: alltoall's plans) */
                coll = GC3_COLL_CUSTOM;
            }
        }
        if (colon == NULL || coll == GC3_COLL_CUSTOM || !ok) {
            fprintf(stderr, "gc3_info: --memory: '%s' is not COLLECTIVE:BYTES (e.g. allreduce:64K)\n", tok);
            rc = 2;
            break;
        }
        bytes = gc3_coll_call_bytes(coll, ranks, per); /* as the component counts the call */
        r     = gc3_rules_match_root(R, coll, nodes, gpus, link, bytes, ranks, inplace,
                                 gc3_coll_desc(coll)->rooted ? 0 : -1);
        if (r == NULL) {
            printf("%s:%-16s %s\n", tok, colon + 1, "(passed on: no plan)");
            continue;
        }
        for (int i = 0; i < nseen; i++) {
            dup |= seen[i] == r;
        }
        if (dup) {
            printf("%s:%-16s (the plan above: %s)\n", tok, colon + 1, r->where);
            continue;
        }
        if (nseen < 64) {
            seen[nseen++] = r;
        }
        {
            gc3_rule_target_t t = {.ranks = ranks, .nodes = nodes, .inplace = inplace, .slots = o->slots,
                                   .max_blocks = o->max_blocks > 0 ? o->max_blocks : 1 << 20};
            gc3_rule_made_t   made;
            gc3_ir_program_t *p = NULL;
            gc3_plan_mem_t    m;
            gc3_diag_t        diag;
            char              plan[512], fifo[96];
            gc3_diag_init(&diag);
            if (gc3_rule_program(r, &t, &diag, &p, &made) != GC3_OK) {
                printf("%s:%-16s cannot be made: %s\n", tok, colon + 1, diag.count ? diag.msgs[0] : "?");
                rc = 1;
            } else {
                if (gc3_plan_estimate(&ep, p, &diag, &m) != GC3_OK) {
                    printf("%s:%-16s no estimate: %s\n", tok, colon + 1, diag.count ? diag.msgs[0] : "?");
                    rc = 1;
                } else {
                    gc3_snprintf_cut(plan, sizeof(plan), "%s %s%s%s%s %dx%d", r->algo,
                                     gc3_proto_name(gc3_proto_runs_as(made.proto)),
                                     gc3_proto_runs_as(made.proto) != made.proto ? " (" : "",
                                     gc3_proto_runs_as(made.proto) != made.proto ? gc3_proto_name(made.proto) : "",
                                     gc3_proto_runs_as(made.proto) != made.proto ? " in the rule)" : "", made.channels,
                                     made.instances);
                    if (m.pool > 0) { /* in the total once, below */
                        gc3_snprintf_cut(fifo, sizeof(fifo), "%s+pool %s (%d x %d x %s)", gc3_mem_format(m.fifo, c, sizeof(c)),
                                 gc3_mem_format(m.pool, a, sizeof(a)), m.recv_conns, m.slots,
                                 gc3_mem_format(m.slot_bytes, b, sizeof(b)));
                        pool = m.pool > pool ? m.pool : pool;
                        npooled++;
                    } else {
                        gc3_snprintf_cut(fifo, sizeof(fifo), "%s (%d x %d x %s)", gc3_mem_format(m.fifo, a, sizeof(a)),
                                 m.recv_conns, m.slots, gc3_mem_format(m.slot_bytes, b, sizeof(b)));
                    }
                    printf("%s:%-*s %-28s %-9s %-28s %-10s %-10s %-10s %-10s %-10s %s\n", tok, (int)(25 - strlen(tok)),
                           colon + 1, plan, gc3_mem_format(gc3_plan_mem_device(&m), c, sizeof(c)), fifo,
                           gc3_mem_format(m.flags, d, sizeof(d)), gc3_mem_format(m.scratch, e, sizeof(e)),
                           gc3_mem_format(m.stage, f, sizeof(f)), gc3_mem_format(m.control, g, sizeof(g)),
                           gc3_mem_format(m.pinned, a, sizeof(a)), r->where);
                    total += gc3_plan_mem_device(&m);
                    pinned += m.pinned;
                }
                gc3_ir_program_destroy(p);
            }
            gc3_diag_cleanup(&diag);
        }
    }
    if (rc != 2 && o->fifo_pool) {
        printf("# FIFO pool: %s, the largest slots of the %d plan(s) that share it (in their FIFOs column: their tail "
               "lines + the pool's part they use), in the total once\n", gc3_mem_format(pool, a, sizeof(a)), npooled);
        total += pool;
    }
    if (rc != 2) {
        printf("# total per rank: %s device (%s exactly), %s pinned host, %d plan(s)\n",
               gc3_mem_format(total, a, sizeof(a)), (snprintf(b, sizeof(b), "%llu B", (unsigned long long)total), b),
               gc3_mem_format(pinned, c, sizeof(c)), nseen);
    }
    free(list);
    return rc;
}

int main(int argc, char **argv)
{
    const char        *file = NULL, *adir = NULL, *mem_spec = NULL;
    mem_opts_t         mo          = { .backend         = GC3_BACKEND_CUDA,
                                       .slots           = GC3_FIFO_SLOTS_DEFAULT,
                                       .plan_fifo_bytes = GC3_PLAN_FIFO_BYTES_DEFAULT,
                                       .fifo_pool       = GC3_FIFO_POOL_DEFAULT,
                                       .relabel         = 1,
                                       .zero_copy       = -1,
                                       .zc_fifo_bytes   = GC3_ZC_FIFO_BYTES_DEFAULT };
    int                backend_set = 0;
    int                inplace = 0;
    long               nodes = 1, gpus = 4;
    gc3_link_t         link = GC3_LINK_NVLINK;
    gc3_rules_t       *R = NULL;
    gc3_diag_t         diag;

    for (int i = 1; i < argc; i++) {
        const char *o = argv[i];
        if (!strcmp(o, "--help") || !strcmp(o, "-h")) {
            usage(stdout);
            return 0;
        }
        if (!strcmp(o, "--print-builtin")) {
            fputs(gc3_rules_builtin_text(), stdout);
            return 0;
        }
        if (!strcmp(o, "--inplace")) {
            inplace = 1;
            continue;
        }
        if (!strcmp(o, "--relabel") || !strcmp(o, "--no-relabel")) {
            mo.relabel = !strcmp(o, "--relabel");
        } else if (!strcmp(o, "--fifo-pool") || !strcmp(o, "--no-fifo-pool")) {
            mo.fifo_pool = !strcmp(o, "--fifo-pool");
            continue;
        }
        if (!strcmp(o, "--devices")) {
            return devices();
        }
        if (!strcmp(o, "--topology")) {
            return topology(i + 2 < argc && !strcmp(argv[i + 1], "--pci-busid") ? argv[i + 2] : NULL);
        }
        if (!strcmp(o, "--pci-busid")) {
            fprintf(stderr, "gc3_info: --pci-busid goes after --topology (gc3_info --topology --pci-busid ID)\n");
            return 2;
        }
        {
            /* the options that take a value: any other is unknown, said as such (not "needs a value") */
            static const char *const with_value[] = { "--rules",      "--algorithm-dir",   "--nodes",
                                                      "--gpus",       "--memory",          "--backend",
                                                      "--zero-copy",  "--fifo-slots",      "--max-blocks",
                                                      "--slot-bytes", "--plan-fifo-bytes", "--zero-copy-fifo-bytes",
                                                      "--link" };
            int                      known        = 0;
            for (size_t k = 0; k < sizeof(with_value) / sizeof(with_value[0]); k++) {
                known |= !strcmp(o, with_value[k]);
            }
            if (!known) {
                fprintf(stderr, "gc3_info: unknown option %s (gc3_info --help lists the options)\n", o);
                return 2;
            }
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "gc3_info: %s needs a value\n", o);
            return 2;
        }
        if (!strcmp(o, "--rules")) {
            file = argv[++i];
        } else if (!strcmp(o, "--algorithm-dir")) {
            adir = argv[++i];
        } else if (!strcmp(o, "--nodes") || !strcmp(o, "--gpus")) {
            char *e;
            long  v;
            errno = 0;
            v     = strtol(argv[++i], &e, 10);
            if (errno || *e || v < 1 || v > 1000000) {
                fprintf(stderr, "gc3_info: %s needs a positive integer\n", o);
                return 2;
            }
            *(strcmp(o, "--nodes") == 0 ? &nodes : &gpus) = v;
        } else if (!strcmp(o, "--memory")) {
            mem_spec = argv[++i];
        } else if (!strcmp(o, "--backend")) {
            i++;
            if (strcmp(argv[i], "cuda") && strcmp(argv[i], "host")) {
                fprintf(stderr, "gc3_info: --backend must be cuda or host\n");
                return 2;
            }
            mo.backend  = strcmp(argv[i], "cuda") ? GC3_BACKEND_HOST : GC3_BACKEND_CUDA;
            backend_set = 1;
        } else if (!strcmp(o, "--zero-copy")) {
            i++;
            if (strcmp(argv[i], "on") && strcmp(argv[i], "off")) {
                fprintf(stderr, "gc3_info: --zero-copy must be on or off\n");
                return 2;
            }
            mo.zero_copy = !strcmp(argv[i], "on");
        } else if (!strcmp(o, "--fifo-slots") || !strcmp(o, "--max-blocks") || !strcmp(o, "--slot-bytes") ||
                   !strcmp(o, "--plan-fifo-bytes") || !strcmp(o, "--zero-copy-fifo-bytes")) {
            int      ok;
            uint64_t v = parse_bytes(argv[++i], &ok);
            if (!ok || (!strcmp(o, "--fifo-slots") && (v < 2 || v > 1024)) || v > (1ull << 40)) {
                fprintf(stderr, "gc3_info: %s needs a size (fifo slots: 2..1024)\n", o);
                return 2;
            }
            if (!strcmp(o, "--fifo-slots")) mo.slots = (int)v;
            else if (!strcmp(o, "--max-blocks")) mo.max_blocks = (int)v;
            else if (!strcmp(o, "--slot-bytes")) mo.slot_bytes = v;
            else if (!strcmp(o, "--zero-copy-fifo-bytes"))
                mo.zc_fifo_bytes = v;
            else mo.plan_fifo_bytes = v;
        } else if (!strcmp(o, "--link")) {
            int found = 0;
            i++;
            for (int k = 0; k < GC3_LINK_COUNT; k++) {
                if (!strcmp(argv[i], gc3_link_name((gc3_link_t)k))) {
                    link  = (gc3_link_t)k;
                    found = 1;
                }
            }
            if (!found) {
                fprintf(stderr, "gc3_info: --link must be nvlink, pcie or host\n");
                return 2;
            }
        }
    }
    gc3_diag_init(&diag);
    if ((file ? gc3_rules_read_file(file, &diag, &R) : gc3_rules_parse(gc3_rules_builtin_text(), "built-in", &diag, &R)) !=
        GC3_OK) {
        gc3_diag_print(&diag, stderr, "");
        fprintf(stderr, "gc3_info: the rules cannot be used (the component would fall back to the built-in rules)\n");
        gc3_diag_cleanup(&diag);
        return 1;
    }
    gc3_diag_print(&diag, stderr, "warning: "); /* usable rules: their warnings (LL128 runs as Simple) */
    gc3_diag_cleanup(&diag);
    gc3_diag_init(&diag);
    if (adir != NULL) {
        int added = 0;
        gc3_status_t st = gc3_rules_add_xml_dir(R, adir, &diag, &added);
        gc3_diag_print(&diag, stderr, "");
        if (st != GC3_OK) {
            fprintf(stderr, "gc3_info: the algorithm directory cannot be used\n");
            gc3_rules_destroy(R);
            gc3_diag_cleanup(&diag);
            return 1;
        }
        printf("# algorithm directory: %s (%d program(s))\n", adir, added);
    }
    if (mem_spec != NULL) {
        int rc;
        if (!backend_set && link == GC3_LINK_HOST) {
            mo.backend = GC3_BACKEND_HOST;
        }
        rc = memory(R, mem_spec, (int)nodes, (int)gpus, link, inplace, &mo);
        gc3_rules_destroy(R);
        gc3_diag_cleanup(&diag);
        return rc;
    }
    printf("# rules: %s (%d rules); shape: %ld node(s) x %ld GPU(s), %s, %s calls\n", R->source, R->n, nodes, gpus,
           gc3_link_name(link), inplace ? "in-place" : "out-of-place");
    printf("%-22s %-16s %-30s %s\n", "# collective", "bytes", "algorithm", "rule");
    for (gc3_coll_t c = GC3_COLL_ALLREDUCE; c < GC3_COLL_CUSTOM; c++) {
        /* the points where the answer can change: 0 and every rule bound + 1 */
        uint64_t *pts = malloc(sizeof(uint64_t) * (size_t)(2 * R->n + 1));
        int       np = 0;
        pts[np++]    = 0;
        for (int i = 0; i < R->n; i++) {
            pts[np++] = R->rules[i].bytes_lo + 1; /* a rule covers lo < bytes <= hi (and 0 when lo is 0) */
            if (R->rules[i].bytes_hi != UINT64_MAX) {
                pts[np++] = R->rules[i].bytes_hi + 1;
            }
        }
        qsort(pts, (size_t)np, sizeof(uint64_t), cmp_u64);
        for (int k = 0; k < np; k++) {
            uint64_t          lo = pts[k], hi;
            const gc3_rule_t *r;
            char              a[32], b[32], range[72], *algo = NULL;
            if (k > 0 && pts[k] == pts[k - 1]) {
                continue;
            }
            r = gc3_rules_match_call(R, c, (int)nodes, (int)gpus, link, lo, (int)(nodes * gpus), inplace);
            /* extend while the same rule answers */
            while (k + 1 < np &&
                   gc3_rules_match_call(R, c, (int)nodes, (int)gpus, link, pts[k + 1], (int)(nodes * gpus), inplace) == r) {
                k++;
            }
            hi = k + 1 < np ? pts[k + 1] - 1 : UINT64_MAX;
            fmt(lo, a, sizeof(a));
            fmt(hi, b, sizeof(b));
            if (r == NULL) {
                algo = gc3_strdup_printf("(passed on)");
            } else {
                /* what runs: a protocol gc3 lacks is shown as the one it runs as, the rule's in brackets */
                const gc3_proto_t runs = gc3_proto_runs_as(r->proto);
                int               ok   = gc3_str_appendf(&algo, "%s", r->algo) == GC3_OK;
                if (ok && r->proto_set) {
                    ok = gc3_str_appendf(&algo, " proto=%s", gc3_proto_name(runs)) == GC3_OK;
                    if (ok && runs != r->proto) {
                        ok = gc3_str_appendf(&algo, " (%s in the rule)", gc3_proto_name(r->proto)) == GC3_OK;
                    }
                }
                if (ok && r->channels) ok = gc3_str_appendf(&algo, " channels=%d", r->channels) == GC3_OK;
                if (ok && r->instances) ok = gc3_str_appendf(&algo, " instances=%d", r->instances) == GC3_OK;
                if (ok && r->chunks_per_peer) ok = gc3_str_appendf(&algo, " chunks_per_peer=%d", r->chunks_per_peer) == GC3_OK;
                if (ok && r->no_zc) ok = gc3_str_appendf(&algo, " zero_copy=off") == GC3_OK;
                if (ok && r->zc_pull)
                    ok = gc3_str_appendf(&algo, " zero_copy=pull") == GC3_OK;
                if (!ok) {
                    free(algo);
                    algo = NULL; /* printed as "?" */
                }
            }
            snprintf(range, sizeof(range), "%s-%s", a, b);
            printf("%-22s %-16s %-30s %s\n", gc3_coll_desc(c)->mpi_name, range, algo ? algo : "?", r ? r->where : "-");
            free(algo);
        }
        free(pts);
    }
    gc3_rules_destroy(R);
    gc3_diag_cleanup(&diag);
    return 0;
}
