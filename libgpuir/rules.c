/* gc3 / libgpuir: selection rules (see gc3_rules.h). */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_rules.h"
#include "gc3_verify.h"
#include "gc3_algorithms.h"


/* The defaults for machines without a rules file (single-node NVLink/NVSwitch and the host
 * backend). The 2- and 4-GPU NVLink lines are contrib/gc3-autotune's choices on 2 and 4 x H200
 * (NV18 between every pair), smoothed where neighbouring candidates were within noise; the
 * generic lines (other GPU counts, 8 included: no 8-GPU machine was available to measure) come
 * from earlier gc3_rt_bench sweeps on 2 and 4 H200s; see doc/performance.md. Alltoall bytes are the
 * whole send buffer.
 * The host backend (link host) runs allreduce, bcast and reduce on the rings (Simple) at every size:
 * with the LL protocol (all-pairs, direct), which the lines up to 64 KB had until issue 56, every 8
 * bytes carry a flag its receivers poll, and polling ranks that share cores cost far more than the
 * ring's few large copies. Measured with gc3_bench -d host --methods gc3 -m 8:1M -i 100, 4 ranks on
 * the 2 cores of a development VM (shared with other builds), median of 5 runs: allreduce all-pairs LL
 * 294-1447 us from 8 B to 64 KB (rising with the size; 174 us at 128 KB on the ring: the old 64K ->
 * 128K cliff), the ring 81-168 us (2.6-11.7x faster); bcast direct LL 91-386 us, ring 75-123 us
 * (equal within noise to 2 KB, 1.2-3.1x faster from 4 KB); reduce direct LL 86-331 us, ring 87-120 us
 * (equal within noise to 4 KB, 1.3-2.9x faster from 8 KB). The lines keep their numbers: the
 * pcie-only ones were "*" (pcie and host). */
const char *gc3_rules_builtin_text(void)
{
    return "# gc3 built-in rules\n"
           "# 2 GPUs, NVLink: gc3-autotune -np 2 --max 256M --iters 20 on 2 x H200 (2026-11-22), smoothed\n"
           "allreduce             1  2  nvlink  0-32K     oneshot       proto=LL instances=4\n"
           "# zero-copy where it measured faster than copying (doc/measurements/zero-copy-h200.txt), pushed where\n"
           "# that measured faster than read (zc-push-h200.txt): allreduce from 8 MB, alltoall from 2 MB to each peer\n"
           "allreduce             1  2  nvlink  32K-2M    ring          channels=4 instances=4 zero_copy=off\n"
           "allreduce             1  2  nvlink  2M-8M     ring          channels=8 instances=4 zero_copy=off\n"
           "allreduce             1  2  nvlink  8M-inf    ring          channels=8 instances=4\n"
           "alltoall              1  2  nvlink  0-16K     direct        proto=LL\n"
           "alltoall              1  2  nvlink  16K-4M    direct        instances=8 zero_copy=off\n"
           "alltoall              1  2  nvlink  4M-64M    direct        instances=16 zero_copy=pull\n"
           "alltoall              1  2  nvlink  64M-inf   direct        instances=16\n"
           "# 4 GPUs, NVLink: gc3-autotune -np 4 --max 256M --iters 20 on 4 x H200 (2026-11-22, commit ebb20fb), "
           "smoothed\n"
           "# where neighbouring candidates were within noise; allreduce: with wider candidates measured after it\n"
           "allreduce             1  4  nvlink  0-128K    oneshot       proto=LL instances=8\n"
           "allreduce             1  4  nvlink  128K-512K allpairs      proto=LL instances=16\n"
           "allreduce             1  4  nvlink  512K-2M   allpairs      instances=16 zero_copy=off\n"
           "# 128K-2M re-measured 2026-11-28 (performance.md); zero-copy where it measured faster than copying\n"
           "# (zero-copy-h200.txt, zc-push-h200.txt): allreduce 16-64 MB and from 128 MB, alltoall from 2 MB a peer\n"
           "allreduce             1  4  nvlink  2M-16M    ring          channels=16 instances=4 zero_copy=off\n"
           "allreduce             1  4  nvlink  16M-64M   ring          channels=16 instances=4\n"
           "allreduce             1  4  nvlink  64M-128M  ring          channels=16 instances=4 zero_copy=off\n"
           "allreduce             1  4  nvlink  128M-inf  ring          channels=16 instances=8\n"
           "alltoall              1  4  nvlink  0-32K     direct        proto=LL\n"
           "alltoall              1  4  nvlink  32K-512K  direct        instances=2 zero_copy=off\n"
           "alltoall              1  4  nvlink  512K-2M   direct        instances=8 zero_copy=off\n"
           "alltoall              1  4  nvlink  2M-8M     direct        instances=16 zero_copy=off\n"
           "alltoall              1  4  nvlink  8M-64M    direct        instances=16 zero_copy=pull\n"
           "alltoall              1  4  nvlink  64M-inf   direct        instances=32 zero_copy=pull\n"
           "# several nodes (or pseudo-nodes): the cost model's fastest (contrib/gc3-predict-nodes 2 16 128:\n"
           "# nodes of 8 GPUs, NVLink 360 GB/s, 25 GB/s and 3 us per GPU between nodes)\n"
           "allreduce             2-*  *  *  0-512K     hierarchical  proto=LL\n"
           "allreduce             2-*  *  *  512K-inf   hierarchical\n"
           "alltoall              2-*  *  *  0-32K      direct        proto=LL\n"
           "alltoall              2-*  *  *  32K-512K   twostep       proto=LL\n"
           "alltoall              2-*  *  *  512K-inf   twostep\n"
           "allgather             2-*  *  *  *          allgather_ring\n"
           "reduce_scatter_block  2-*  *  *  *          reduce_scatter_ring\n"
           "# every other shape: gc3_rt_bench sweeps on 2 and 4 H200s; the host backend: the rings at every size\n"
           "allreduce             1  *  nvlink  0-128K   allpairs      proto=LL\n"
           "allreduce             1  *  pcie    0-64K    allpairs      proto=LL\n"
           "allreduce             1  *  nvlink  128K-4M  ring          channels=2\n"
           "allreduce             1  *  nvlink  4M-inf   ring          channels=8 instances=4\n"
           "allreduce             1  *  pcie    64K-inf  ring          channels=4 instances=2\n"
           "allreduce             1  *  host    *        ring\n"
           "alltoall              1  *  *  *        direct\n"
           "allgather             1  *  *  0-64K    allgather_ring\n"
           "allgather             1  *  host  64K-inf  allgather_ring\n"
           "allgather             1  *  *  64K-inf  allgather_ring       instances=8\n"
           "# 2-4 GPUs on NVLink: the ring on 4 channels x 8 (4 and 2 ranks on one H100, rs-scan-shapes-1xh100.md:\n"
           "# 1 MB a segment 71.5 -> 47.0 us; reduce_scatter_direct slower, scan-rs-candidates-1xh100.md)\n"
           "reduce_scatter_block  1  *  *  0-64K    reduce_scatter_ring\n"
           "reduce_scatter_block  1  *  host  64K-inf  reduce_scatter_ring\n"
           "reduce_scatter_block  1  2-4  nvlink  64K-inf  reduce_scatter_ring  channels=4 instances=8\n"
           "reduce_scatter_block  1  *  *  64K-inf  reduce_scatter_ring  instances=8\n"
           "# bcast and reduce, 4 GPUs, NVLink: gc3-autotune -np 4 --coll bcast,reduce --max 64M --iters 10 on\n"
           "# 4 x H200 (2026-11-28, doc/measurements/autotune-rooted-4xh200.txt), smoothed where neighbouring\n"
           "# candidates were within noise; the chain's last band goes on above the sizes measured\n"
           "bcast                 1  4  nvlink  0-128    bcast_direct   proto=LL\n"
           "bcast                 1  4  nvlink  128-64K  bcast_direct   proto=LL instances=4\n"
           "bcast                 1  4  nvlink  64K-1M   bcast_direct   instances=4 zero_copy=off\n"
           "bcast                 1  4  nvlink  1M-2M    bcast_direct   instances=4\n"
           "bcast                 1  4  nvlink  2M-inf   bcast_ring     channels=16 instances=4 zero_copy=off\n"
           "reduce                1  4  nvlink  0-16K    reduce_direct  proto=LL\n"
           "reduce                1  4  nvlink  16K-512K reduce_direct  instances=4 zero_copy=off\n"
           "reduce                1  4  nvlink  512K-8M  reduce_ring    channels=4 instances=4 zero_copy=off\n"
           "reduce                1  4  nvlink  8M-inf   reduce_ring    channels=16 instances=4 zero_copy=off\n"
           "# bcast and reduce, other shapes (not measured yet): the allreduce lines' sizes, the latency choice\n"
           "# (direct, LL) below them, the pipelined chain (ring, Simple) above\n"
           "bcast                 1  *  nvlink  0-128K   bcast_direct   proto=LL\n"
           "bcast                 1  *  pcie    0-64K    bcast_direct   proto=LL\n"
           "bcast                 1  *  nvlink  128K-4M  bcast_ring     channels=2\n"
           "bcast                 1  *  nvlink  4M-inf   bcast_ring     channels=8 instances=4\n"
           "bcast                 1  *  pcie    64K-inf  bcast_ring     channels=4 instances=2\n"
           "bcast                 1  *  host    *        bcast_ring\n"
           "reduce                1  *  nvlink  0-128K   reduce_direct  proto=LL\n"
           "reduce                1  *  pcie    0-64K    reduce_direct  proto=LL\n"
           "reduce                1  *  nvlink  128K-4M  reduce_ring    channels=2\n"
           "reduce                1  *  nvlink  4M-inf   reduce_ring    channels=8 instances=4\n"
           "reduce                1  *  pcie    64K-inf  reduce_ring    channels=4 instances=2\n"
           "reduce                1  *  host    *        reduce_ring\n"
           "# gather and scatter (not measured on several GPUs yet; size: the root's whole buffer): the direct\n"
           "# exchange where the root's links reach every rank (LL small, channels large), the chain on PCIe;\n"
           "# their calls carry per-rank tables, which never run zero-copy. 2 GPUs on NVLink: 8 instances above 1M\n"
           "# (2 ranks on one H100, gather-scan-shapes-1xh100.md: 4 MB a rank gatherv 33.0 -> 20.4 us, scatterv 33.6\n"
           "# -> 22.6; even at 1 MB a rank, up to 3 us slower below); scatter on more ranks: 16 chunks a peer above\n"
           "# 8M (4 ranks on one H100, scatter-scan-1xh100.md, 8 chunks against 4: skewed 2 MB a rank, a 12.8M\n"
           "# call, 56.5-60.9 -> 42.5-52.5 us; scatter-fifo-loops-1xh100.md, 16 against 8: skewed 4 MB a rank,\n"
           "# whose 6.4 MB segment then fits the FIFOs in one loop, 116.4-119.3 -> 86.1-90.8 us, uniform 8 MB a\n"
           "# rank 88.4 -> 75.8, uniform 4 MB a rank 49.0 -> 51.6-53.1; below 8M the line of 4 chunks)\n"
           "gather                1  *  nvlink  0-64K    gather_direct  proto=LL\n"
           "gather                1  2  nvlink  1M-inf   gather_direct  channels=4 chunks_per_peer=4 instances=8 "
           "zero_copy=off\n"
           "gather                1  *  nvlink  64K-inf  gather_direct  channels=4 chunks_per_peer=4 instances=2 "
           "zero_copy=off\n"
           "gather                1  *  pcie    0-64K    gather_direct  proto=LL\n"
           "gather                1  *  pcie    64K-inf  gather_ring    channels=4 zero_copy=off\n"
           "gather                1  *  host    *        gather_direct\n"
           "gather                2-*  *  *  *          gather_direct  zero_copy=off\n"
           "scatter               1  *  nvlink  0-64K    scatter_direct proto=LL\n"
           "scatter               1  2  nvlink  1M-inf   scatter_direct channels=4 chunks_per_peer=4 instances=8 "
           "zero_copy=off\n"
           "scatter               1  *  nvlink  8M-inf   scatter_direct channels=4 chunks_per_peer=16 instances=2 "
           "zero_copy=off\n"
           "scatter               1  *  nvlink  64K-inf  scatter_direct channels=4 chunks_per_peer=4 instances=2 "
           "zero_copy=off\n"
           "scatter               1  *  pcie    0-64K    scatter_direct proto=LL\n"
           "scatter               1  *  pcie    64K-inf  scatter_ring   channels=4 zero_copy=off\n"
           "scatter               1  *  host    *        scatter_direct\n"
           "scatter               2-*  *  *  *          scatter_direct zero_copy=off\n"
           "# scan and exscan (not measured on several GPUs yet): the direct exchange below 64K (LL); on 2 and 4\n"
           "# GPUs with NVLink above it on 8 or more instances (a channel per peer) up to where the chain on 16 x 2\n"
           "# caught up (exscan on 4 GPUs: never, from 1M on 2 chunks a peer), the chain elsewhere (4 and 2 ranks on\n"
           "# one H100, gather-scan-shapes-1xh100.md: 4 ranks at 1 MB scan 41.9 -> 35.6 us, exscan 36.9 -> 32.1, 4 MB\n"
           "# 123.1 -> 63.6; rs-scan-shapes-1xh100.md and scan-rs-candidates-1xh100.md: fewer blocks slower; scan on\n"
           "# 4 at 2 MB out of place 53.4-54.1 -> 48.3-52.3, scatter-scan-1xh100.md; in place not measured there)\n"
           "scan                  1  *  nvlink  0-64K    scan_direct    proto=LL\n"
           "scan                  1  *  pcie    0-64K    scan_direct    proto=LL\n"
           "scan                  1  2  nvlink  64K-512K scan_direct    instances=8\n"
           "scan                  1  2  nvlink  512K-2M  scan_direct    instances=16\n"
           "scan                  1  2  nvlink  2M-inf   scan_ring      channels=16 instances=2\n"
           "scan                  1  4  nvlink  64K-2M   scan_direct    channels=3 instances=8\n"
           "scan                  1  *  nvlink  64K-inf  scan_ring      channels=16 instances=2\n"
           "scan                  1  *  pcie    64K-inf  scan_ring      channels=4\n"
           "scan                  1  *  host    *        scan_ring\n"
           "scan                  2-*  *  *  *          scan_ring\n"
           "exscan                1  *  nvlink  0-64K    exscan_direct  proto=LL\n"
           "exscan                1  *  pcie    0-64K    exscan_direct  proto=LL\n"
           "exscan                1  2  nvlink  64K-512K exscan_direct  instances=8\n"
           "exscan                1  2  nvlink  512K-1M  exscan_direct  instances=16\n"
           "exscan                1  2  nvlink  1M-inf   exscan_ring    channels=16 instances=2\n"
           "exscan                1  4  nvlink  64K-1M   exscan_direct  channels=3 instances=8\n"
           "exscan                1  4  nvlink  1M-inf   exscan_direct  channels=3 chunks_per_peer=2 instances=10\n"
           "exscan                1  *  nvlink  64K-inf  exscan_ring    channels=16 instances=2\n"
           "exscan                1  *  pcie    64K-inf  exscan_ring    channels=4\n"
           "exscan                1  *  host    *        exscan_ring\n"
           "exscan                2-*  *  *  *          exscan_ring\n";
}

static int gc3_rules_int_range(const char *t, int *lo, int *hi)
{
    char *e;
    long  a, b;
    if (strcmp(t, "*") == 0) {
        *lo = 1;
        *hi = 1 << 30;
        return 1;
    }
    errno = 0;
    a     = strtol(t, &e, 10);
    if (e == t || a < 1 || errno) {
        return 0;
    }
    b = a;
    if (*e == '-' && strcmp(e + 1, "*") == 0) {
        b = 1 << 30; /* A-*: A or more */
        e += 2;
    } else if (*e == '-') {
        const char *s = e + 1;
        b             = strtol(s, &e, 10);
        if (e == s || b < a || errno) {
            return 0;
        }
    }
    if (*e != '\0' || b > (1 << 30)) {
        return 0;
    }
    *lo = (int)a;
    *hi = (int)b;
    return 1;
}

static int gc3_rules_size(const char *t, uint64_t *v)
{
    unsigned long long x;
    if (strcmp(t, "inf") == 0) {
        *v = UINT64_MAX;
        return 1;
    }
    if (!gc3_parse_bytes(t, &x)) {
        return 0;
    }
    *v = (uint64_t)x;
    return 1;
}

static int gc3_rules_bytes(const char *t, uint64_t *lo, uint64_t *hi)
{
    const char *dash;
    char        a[64];
    if (strcmp(t, "*") == 0) {
        *lo = 0;
        *hi = UINT64_MAX;
        return 1;
    }
    dash = strchr(t, '-');
    if (dash == NULL || (size_t)(dash - t) >= sizeof(a)) {
        return 0;
    }
    memcpy(a, t, (size_t)(dash - t));
    a[dash - t] = '\0';
    return gc3_rules_size(a, lo) && gc3_rules_size(dash + 1, hi) && *lo <= *hi;
}

/* The fields of a rule line (tok[0] to tok[5]: collective, nodes, gpus, link, bytes, algorithm) into r: 1, or 0
 * after saying what is wrong (where: the line's file:line). */
static int gc3_rules_line_fields(char *const *tok, const char *where, gc3_diag_t *diag, gc3_rule_t *r)
{
    const gc3_algo_t *a;

    r->coll = -1;
    if (strcmp(tok[0], "*") != 0) {
        gc3_coll_t c;
        if (gc3_coll_from_name(tok[0], &c) != GC3_OK) {
            char names[256];
            gc3_coll_mpi_names(names, sizeof(names));
            gc3_diag_add(diag, "%s: unknown collective '%s' (%s or *)", where, tok[0], names);
            return 0;
        }
        r->coll = (int)c;
    }
    if (!gc3_rules_int_range(tok[1], &r->nodes_lo, &r->nodes_hi) ||
        !gc3_rules_int_range(tok[2], &r->gpus_lo, &r->gpus_hi)) {
        gc3_diag_add(diag, "%s: nodes and gpus must be N, A-B, A-* or * (found '%s' '%s')", where, tok[1], tok[2]);
        return 0;
    }
    r->link = -1;
    for (int i = 0; i < GC3_LINK_COUNT; i++) {
        if (strcmp(tok[3], gc3_link_name((gc3_link_t)i)) == 0) {
            r->link = i;
        }
    }
    if (r->link < 0 && strcmp(tok[3], "*") != 0) {
        gc3_diag_add(diag, "%s: link must be nvlink, pcie, host or * (found '%s')", where, tok[3]);
        return 0;
    }
    if (!gc3_rules_bytes(tok[4], &r->bytes_lo, &r->bytes_hi)) {
        gc3_diag_add(diag, "%s: bytes must be A-B (K/M/G suffixes, B may be inf) or * (found '%s')", where, tok[4]);
        return 0;
    }
    if ((a = gc3_algo_find(tok[5])) == NULL) {
        gc3_diag_add(diag, "%s: unknown algorithm '%s' (gc3c list names them)", where, tok[5]);
        return 0;
    }
    if (a->coll == GC3_COLL_CUSTOM || (r->coll >= 0 && (int)a->coll != r->coll)) {
        gc3_diag_add(diag, "%s: algorithm '%s' is for %s, not %s", where, tok[5],
                     a->coll == GC3_COLL_CUSTOM ? a->coll_name : gc3_coll_desc(a->coll)->mpi_name,
                     r->coll >= 0 ? gc3_coll_desc((gc3_coll_t)r->coll)->mpi_name : "a collective MPI calls");
        return 0;
    }
    if (r->coll < 0) {
        r->coll = (int)a->coll; /* '*': the algorithm's collective, the only one it can run */
    }
    return 1;
}

/* The key=value options of a rule line (tok[6] on) into r: the errors found, each said. */
static int gc3_rules_line_options(char *const *tok, int ntok, const char *where, gc3_diag_t *diag, gc3_rule_t *r)
{
    int errors = 0;

    for (int i = 6; i < ntok; i++) {
        char *eq = strchr(tok[i], '=');
        char *e;
        long  v;
        if (eq == NULL) {
            gc3_diag_add(diag, "%s: '%s' is not key=value", where, tok[i]);
            errors++;
            continue;
        }
        *eq = '\0';
        if (strcmp(tok[i], "zero_copy") == 0) {
            if (strcmp(eq + 1, "on") != 0 && strcmp(eq + 1, "off") != 0 && strcmp(eq + 1, "pull") != 0) {
                gc3_diag_add(diag, "%s: zero_copy must be on, pull or off (found '%s')", where, eq + 1);
                errors++;
            }
            r->no_zc   = strcmp(eq + 1, "off") == 0;
            r->zc_pull = strcmp(eq + 1, "pull") == 0;
            continue;
        }
        if (strcmp(tok[i], "proto") == 0) {
            if (gc3_proto_from_name(eq + 1, &r->proto) != GC3_OK) {
                gc3_diag_add(diag, "%s: proto must be Simple, LL or LL128 (found '%s')", where, eq + 1);
                errors++;
            } else if (gc3_proto_runs_as(r->proto) != r->proto) { /* a warning: the rules stay usable */
                gc3_diag_add(diag, "%s: proto=%s: gc3 has no %s, the rule runs as proto=%s", where,
                             gc3_proto_name(r->proto), gc3_proto_name(r->proto),
                             gc3_proto_name(gc3_proto_runs_as(r->proto)));
            }
            r->proto_set = 1;
            continue;
        }
        errno = 0;
        v     = strtol(eq + 1, &e, 10);
        if (errno || e == eq + 1 || *e != '\0' || v < 1 || v > 1024) {
            gc3_diag_add(diag, "%s: %s=%s: expected an integer in [1, 1024]", where, tok[i], eq + 1);
            errors++;
        } else if (strcmp(tok[i], "channels") == 0) {
            r->channels = (int)v;
        } else if (strcmp(tok[i], "instances") == 0) {
            r->instances = (int)v;
        } else if (strcmp(tok[i], "chunks_per_peer") == 0) {
            r->chunks_per_peer = (int)v;
        } else {
            gc3_diag_add(diag, "%s: unknown key '%s' (proto, channels, instances, chunks_per_peer, zero_copy)", where,
                         tok[i]);
            errors++;
        }
    }
    return errors;
}

/* r appended to R (*cap: the rules' room), with a copy of its algorithm's name and where (taken): GC3_OK, or
 * GC3_ERR_NO_MEMORY (where freed). */
static gc3_status_t gc3_rules_append(gc3_rules_t *R, int *cap, gc3_rule_t *r, const char *algo, char *where)
{
    if (R->n == *cap) {
        int         ncap = *cap ? 2 * *cap : 16;
        gc3_rule_t *n    = realloc(R->rules, (size_t)ncap * sizeof(*n));
        if (n == NULL) {
            free(where);
            return GC3_ERR_NO_MEMORY;
        }
        R->rules = n;
        *cap     = ncap;
    }
    if ((r->algo = strdup(algo)) == NULL) {
        free(where);
        return GC3_ERR_NO_MEMORY;
    }
    r->where         = where;
    R->rules[R->n++] = *r;
    return GC3_OK;
}

gc3_status_t gc3_rules_parse(const char *text, const char *name, gc3_diag_t *diag, gc3_rules_t **rules_p)
{
    gc3_rules_t *R = calloc(1, sizeof(*R));
    int          cap = 0, lineno = 0, errors = 0;
    const char  *p = text;

    *rules_p = NULL;
    if (R == NULL || (R->source = strdup(name ? name : "rules")) == NULL) {
        free(R);
        return GC3_ERR_NO_MEMORY;
    }
    while (*p) {
        char        line[1024], *tok[32], *save = NULL, *t, *where;
        const char *unread;
        const int   maxtok = (int)(sizeof(tok) / sizeof(tok[0]));
        int         ntok   = 0;
        const char *nl   = strchr(p, '\n');
        size_t      len  = nl ? (size_t)(nl - p) : strlen(p);
        gc3_rule_t  r;

        lineno++;
        if (len >= sizeof(line)) {
            gc3_diag_add(diag, "%s:%d: line too long", R->source, lineno);
            errors++;
            p += len + (nl != NULL);
            continue;
        }
        memcpy(line, p, len);
        line[len] = '\0';
        p += len + (nl != NULL);
        if ((t = strchr(line, '#')) != NULL) {
            *t = '\0';
        }
        for (t = strtok_r(line, " \t\r", &save); t != NULL && ntok < maxtok; t = strtok_r(NULL, " \t\r", &save)) {
            tok[ntok++] = t;
        }
        if (ntok == 0) {
            continue;
        }
        memset(&r, 0, sizeof(r));
        r.root          = -1; /* a generator: any root */
        r.inplace_ok    = 1;
        r.outofplace_ok = 1;
        if ((where = gc3_strdup_printf("%s:%d", R->source, lineno)) == NULL) {
            gc3_rules_destroy(R);
            return GC3_ERR_NO_MEMORY;
        }
        if (t != NULL) { /* a 33rd field */
            gc3_diag_add(diag, "%s: more than %d fields (6 and the keys)", where, maxtok);
            errors++;
            free(where);
            continue;
        }
        if (ntok < 6) {
            gc3_diag_add(diag,
                         "%s: expected 'collective nodes gpus link bytes algorithm [key=value ...]', found %d "
                         "fields",
                         where, ntok);
        }
        if (ntok < 6 || !gc3_rules_line_fields(tok, where, diag, &r)) {
            errors++;
            free(where);
            continue;
        }
        errors += gc3_rules_line_options(tok, ntok, where, diag, &r);
        if ((unread = gc3_algo_unread(gc3_algo_find(tok[5]), r.channels ? r.channels : 1,
                                      r.chunks_per_peer ? r.chunks_per_peer : 1)) != NULL) {
            gc3_diag_add(diag, "%s: %s does not take %s (gc3c list says what each generator takes)", where, tok[5],
                         unread);
            errors++;
        }
        if (gc3_rules_append(R, &cap, &r, tok[5], where) != GC3_OK) {
            gc3_rules_destroy(R);
            return GC3_ERR_NO_MEMORY;
        }
    }
    if (errors) {
        gc3_rules_destroy(R);
        return GC3_ERR_PARSE;
    }
    *rules_p = R;
    return GC3_OK;
}

gc3_status_t gc3_rules_read_file(const char *path, gc3_diag_t *diag, gc3_rules_t **rules_p)
{
    FILE        *f = fopen(path, "r");
    char        *text;
    long         size;
    gc3_status_t st;

    *rules_p = NULL;
    if (f == NULL) {
        gc3_diag_add(diag, "%s: cannot open: %s", path, strerror(errno));
        return GC3_ERR_IO;
    }
    if (fseek(f, 0, SEEK_END) != 0 || (size = ftell(f)) < 0 || size > (1 << 24) || fseek(f, 0, SEEK_SET) != 0) {
        gc3_diag_add(diag, "%s: cannot read (or larger than 16 MiB)", path);
        fclose(f);
        return GC3_ERR_IO;
    }
    text = malloc((size_t)size + 1);
    if (text == NULL || fread(text, 1, (size_t)size, f) != (size_t)size) {
        free(text);
        fclose(f);
        return text ? GC3_ERR_IO : GC3_ERR_NO_MEMORY;
    }
    fclose(f);
    text[size] = '\0';
    if (strlen(text) != (size_t)size) {
        gc3_diag_add(diag, "%s: contains a NUL byte", path);
        free(text);
        return GC3_ERR_PARSE;
    }
    st = gc3_rules_parse(text, path, diag, rules_p);
    free(text);
    return st;
}

void gc3_rules_destroy(gc3_rules_t *R)
{
    if (R != NULL) {
        for (int i = 0; i < R->n; i++) {
            gc3_ir_program_destroy(R->rules[i].program);
            free(R->rules[i].algo);
            free(R->rules[i].where);
            free(R->rules[i].xml);
        }
        free(R->rules);
        free(R->source);
        free(R);
    }
}

const gc3_rule_t *gc3_rules_match_root(const gc3_rules_t *R, gc3_coll_t coll, int nodes, int gpus, gc3_link_t link,
                                       uint64_t bytes, int ranks, int inplace, int root)
{
    for (int i = 0; R != NULL && i < R->n; i++) {
        const gc3_rule_t *r = &R->rules[i];
        int in_bytes = (bytes > r->bytes_lo || (r->bytes_lo == 0 && bytes == 0)) && bytes <= r->bytes_hi;
        if ((r->coll < 0 || r->coll == (int)coll) && nodes >= r->nodes_lo && nodes <= r->nodes_hi &&
            gpus >= r->gpus_lo && gpus <= r->gpus_hi && (r->link < 0 || r->link == (int)link) && in_bytes &&
            (r->ranks == 0 || r->ranks == ranks) && (inplace != 1 || r->inplace_ok) &&
            (inplace != 0 || r->outofplace_ok) && (root < 0 || r->root < 0 || r->root == root)) {
            return r;
        }
    }
    return NULL;
}

const gc3_rule_t *gc3_rules_match_call(const gc3_rules_t *R, gc3_coll_t coll, int nodes, int gpus,
                                       gc3_link_t link, uint64_t bytes, int ranks, int inplace)
{
    return gc3_rules_match_root(R, coll, nodes, gpus, link, bytes, ranks, inplace, -1);
}

const gc3_rule_t *gc3_rules_match(const gc3_rules_t *R, gc3_coll_t coll, int nodes, int gpus, gc3_link_t link,
                                  uint64_t bytes)
{
    return gc3_rules_match_call(R, coll, nodes, gpus, link, bytes, nodes * gpus, -1);
}

static int gc3_rules_name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* One rule for the program of one file, or GC3_ERR_* with the reason in diag. */
static gc3_status_t gc3_rules_from_xml(const char *path, gc3_diag_t *diag, gc3_rule_t *r)
{
    gc3_ir_program_t *p = NULL;
    gc3_status_t      st;

    memset(r, 0, sizeof(*r));
    st = gc3_ir_read_file(path, diag, &p);
    if (st == GC3_OK && p->coll == GC3_COLL_CUSTOM) {
        char names[256];
        gc3_coll_mpi_names(names, sizeof(names));
        gc3_diag_add(diag, "%s: collective '%s' is not one an MPI call runs through gc3 (%s)", path,
                     p->coll_name ? p->coll_name : "?", names);
        st = GC3_ERR_UNSUPPORTED;
    }
    if (st == GC3_OK) {
        /* the verifier names the file in its structural messages (FILE:LINE:) but not in those of
         * the program's data flow and schedule ("rank 0 tb 0 step 1 ...", wait-for cycles): those are
         * said with the file's path in front, so that every line of a directory's errors names its file */
        gc3_diag_t   why;
        const size_t plen = strlen(path);
        gc3_diag_init(&why);
        st = gc3_verify(p, NULL, &why);
        for (int i = 0; i < why.count; i++) {
            const int named = strncmp(why.msgs[i], path, plen) == 0 && why.msgs[i][plen] == ':';
            gc3_diag_add(diag, "%s%s%s", named ? "" : path, named ? "" : ": ", why.msgs[i]);
        }
        gc3_diag_cleanup(&why);
    }
    if (st == GC3_OK) {
        r->coll = (int)p->coll;
        r->nodes_lo = r->gpus_lo = 1;
        r->nodes_hi = r->gpus_hi = 1 << 30;
        r->link                  = -1;
        r->bytes_lo              = p->min_bytes > 0 ? p->min_bytes - 1 : 0;
        r->bytes_hi              = p->max_bytes > 0 ? p->max_bytes : UINT64_MAX;
        r->algo          = strdup(p->name && p->name[0] ? p->name : "xml");
        r->proto         = p->proto;
        r->proto_set     = 1;
        r->channels      = p->nchannels;
        r->instances     = 1;
        r->ranks         = p->ngpus;
        r->root          = p->root; /* a rooted program serves calls of its root only */
        r->inplace_ok    = p->inplace;
        r->outofplace_ok = p->outofplace || p->inplace; /* in-place programs: copy first */
        r->xml           = strdup(path);
        r->where         = strdup(path);
        r->program       = p; /* kept: plans copy it */
        if (r->algo != NULL && r->xml != NULL && r->where != NULL) {
            return GC3_OK;
        }
        free(r->algo);
        free(r->xml);
        free(r->where);
        st = GC3_ERR_NO_MEMORY;
    }
    gc3_ir_program_destroy(p);
    return st;
}

gc3_status_t gc3_rules_add_xml_dir(gc3_rules_t *R, const char *dir, gc3_diag_t *diag, int *added_p)
{
    DIR           *d;
    struct dirent *e;
    char         **names = NULL;
    int            n = 0, cap = 0, added = 0;
    gc3_rule_t    *rules;
    gc3_status_t   st = GC3_OK;

    *added_p = 0;
    if ((d = opendir(dir)) == NULL) {
        gc3_diag_add(diag, "%s: cannot open the algorithm directory: %s", dir, strerror(errno));
        return GC3_ERR_IO;
    }
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".xml") != 0) {
            continue;
        }
        if (n == cap) {
            char **nn = realloc(names, (size_t)(cap ? 2 * cap : 16) * sizeof(*nn));
            if (nn == NULL) {
                st = GC3_ERR_NO_MEMORY;
                goto out;
            }
            names = nn;
            cap   = cap ? 2 * cap : 16;
        }
        if ((names[n] = malloc(strlen(dir) + len + 2)) == NULL) {
            st = GC3_ERR_NO_MEMORY;
            goto out;
        }
        sprintf(names[n++], "%s/%s", dir, e->d_name);
    }
    qsort(names, (size_t)n, sizeof(*names), gc3_rules_name_cmp);
    rules = realloc(R->rules, (size_t)(R->n + n) * sizeof(*rules));
    if (rules == NULL && R->n + n > 0) {
        st = GC3_ERR_NO_MEMORY;
        goto out;
    }
    R->rules = rules;
    for (int i = 0; i < n; i++) {
        gc3_rule_t r;
        if (gc3_rules_from_xml(names[i], diag, &r) != GC3_OK) {
            gc3_diag_add(diag, "%s: skipped", names[i]);
            continue;
        }
        /* keep the directory's rules first, in name order */
        memmove(&R->rules[added + 1], &R->rules[added], (size_t)(R->n - added) * sizeof(*R->rules));
        R->rules[added++] = r;
        R->n++;
    }
    *added_p = added;
out:
    for (int i = 0; i < n; i++) {
        free(names[i]);
    }
    free(names);
    closedir(d);
    return st;
}

/* ---------------------------------------------------------------- a rule's program */

/* A rule file's program (or its copy-first form) verified with the plan's FIFO slots: a deadlock with
 * fewer than the file was read with is said first in one line (what a plan's NOT USED line shows), the
 * verifier's wait-for cycle after. */
static gc3_status_t gc3_rule_verify_slots(const gc3_ir_program_t *p, const gc3_verify_opts_t *vo, const char *where,
                                          int loaded_slots, gc3_diag_t *diag)
{
    gc3_diag_t   why;
    gc3_status_t st;

    gc3_diag_init(&why);
    st = gc3_verify(p, vo, &why);
    if (st == GC3_ERR_DEADLOCK && vo->slots < loaded_slots) {
        gc3_diag_add(diag, "%s: needs more than the plan's %d FIFO slots per connection (deadlocks with them; it was "
                     "verified with %d)", where, vo->slots, loaded_slots);
    }
    for (int i = 0; i < why.count; i++) {
        gc3_diag_add(diag, "%s", why.msgs[i]);
    }
    gc3_diag_cleanup(&why);
    return st;
}

/* The program of a rule's file for the target: a copy, or its out-of-place form (verified: it is a
 * new program); the loaded one was verified when the directory was read, with the verifier's default
 * FIFO slots: a target with fewer verifies it again with its own, as a file may need them all (a
 * program that deadlocks with the target's slots is refused, not run into a timeout). */
static gc3_status_t gc3_rule_file_program(const gc3_rule_t *rule, const gc3_rule_target_t *t, gc3_diag_t *diag,
                                          gc3_ir_program_t **program_p, gc3_rule_made_t *made)
{
    const gc3_ir_program_t *p = rule->program;
    gc3_verify_opts_t       vo;
    gc3_status_t            st;
    int                     widest, fewer_slots, loaded_slots;

    gc3_verify_opts_default(&vo);
    loaded_slots   = vo.slots;
    vo.slots       = t->slots > 0 ? t->slots : GC3_FIFO_SLOTS_DEFAULT;
    fewer_slots    = vo.slots < loaded_slots;

    made->proto     = rule->proto;
    made->channels  = rule->channels;
    made->instances = 1;
    if (p->ngpus != t->ranks) {
        gc3_diag_add(diag, "%s: a program for %d ranks, the communicator has %d", rule->where, p->ngpus, t->ranks);
        return GC3_ERR_UNSUPPORTED;
    }
    if (gc3_coll_desc(p->coll)->rooted && p->root != t->root) {
        gc3_diag_add(diag, "%s: a program for root %d, the call's root is %d", rule->where, p->root, t->root);
        return GC3_ERR_UNSUPPORTED;
    }
    if (!t->inplace && !p->outofplace) {
        /* a program for in-place calls, an out-of-place call: the input copied into place first */
        made->copied = 1;
        st           = gc3_ir_copy_first(p, program_p);
        st           = st == GC3_OK ? gc3_rule_verify_slots(*program_p, &vo, rule->where, loaded_slots, diag) : st;
    } else {
        st = gc3_ir_program_clone(p, program_p);
        vo.check_races = 0; /* the file's program itself: its races do not depend on slots (checked when read) */
        st = st == GC3_OK && fewer_slots ? gc3_rule_verify_slots(*program_p, &vo, rule->where, loaded_slots, diag) : st;
    }
    widest = st == GC3_OK ? gc3_ir_widest_rank(*program_p) : 0;
    if (st == GC3_OK && widest > t->max_blocks) {
        gc3_diag_add(diag, "%d thread blocks per rank, at most %d can run at once (coll_gc3_max_blocks)", widest,
                     t->max_blocks);
        st = GC3_ERR_UNSUPPORTED;
    }
    if (st != GC3_OK) {
        gc3_ir_program_destroy(*program_p);
        *program_p = NULL;
    }
    return st;
}

/* The program of a rule's generator for the target, narrowed to its blocks when it must be. */
static gc3_status_t gc3_rule_generated_program(const gc3_rule_t *rule, const gc3_rule_target_t *t, gc3_diag_t *diag,
                                               gc3_ir_program_t **program_p, gc3_rule_made_t *made)
{
    gc3_algo_params_t ap;
    gc3_status_t      st;

    gc3_algo_params_default(&ap, t->ranks);
    ap.nodes         = t->nodes;
    ap.gpus_per_node = t->ranks / t->nodes;
    ap.inplace       = t->inplace;
    ap.slots         = t->slots;
    ap.root          = t->root; /* rooted collectives' algorithms only; checked by the generator */
    if (rule->proto_set) ap.proto = rule->proto;
    if (rule->channels) ap.channels = rule->channels;
    if (rule->instances) ap.instances = rule->instances;
    if (rule->chunks_per_peer) ap.chunks_per_peer = rule->chunks_per_peer;
    made->asked_channels  = ap.channels;
    made->asked_instances = ap.instances;
    st = gc3_algo_generate_fit(rule->algo, &ap, t->max_blocks, diag, program_p, &made->narrowed);
    made->proto     = ap.proto;
    made->channels  = ap.channels;
    made->instances = ap.instances;
    if (st == GC3_OK && ap.instances > 0 && (*program_p)->nchannels % ap.instances == 0) {
        made->channels = (*program_p)->nchannels / ap.instances; /* the channels it spans: a direct exchange
                                                                    among few ranks has fewer than asked */
    }
    return st;
}

/* A rooted collective's program for both kinds of call where it verifies in both: the root's call may
 * be in place (MPI_IN_PLACE at a reduce's root) while the other ranks, which cannot know it, must
 * prepare the same plan (the component keys it out of place). The root then calls in place or not. */
static void gc3_rule_both_kinds(gc3_ir_program_t *p, const gc3_rule_target_t *t)
{
    gc3_verify_opts_t vo;
    gc3_diag_t        quiet;
    const int         inplace = p->inplace, outofplace = p->outofplace;

    if (!gc3_coll_desc(p->coll)->rooted || (inplace && outofplace)) {
        return;
    }
    gc3_verify_opts_default(&vo);
    vo.slots = t->slots > 0 ? t->slots : GC3_FIFO_SLOTS_DEFAULT;
    gc3_diag_init(&quiet);
    p->inplace = p->outofplace = 1;
    if (gc3_verify(p, &vo, &quiet) != GC3_OK) {
        p->inplace    = inplace;
        p->outofplace = outofplace;
    }
    gc3_diag_cleanup(&quiet);
}

gc3_status_t gc3_rule_program(const gc3_rule_t *rule, const gc3_rule_target_t *target, gc3_diag_t *diag,
                              gc3_ir_program_t **program_p, gc3_rule_made_t *made)
{
    memset(made, 0, sizeof(*made));
    *program_p = NULL;
    if (target->ranks < 1 || target->nodes < 1 || target->ranks % target->nodes != 0) {
        gc3_diag_add(diag, "%d ranks do not form %d nodes of equal size", target->ranks, target->nodes);
        return GC3_ERR_INVALID_PARAM;
    }
    {
        const gc3_status_t st = rule->program != NULL ? gc3_rule_file_program(rule, target, diag, program_p, made)
                                                      : gc3_rule_generated_program(rule, target, diag, program_p, made);
        if (st == GC3_OK) {
            (*program_p)->no_zc   = rule->no_zc;
            (*program_p)->zc_pull = rule->zc_pull;
            if ((*program_p)->max_bytes == 0 && rule->bytes_hi != UINT64_MAX) {
                (*program_p)->max_bytes = rule->bytes_hi; /* its largest call: the runtime sizes its slots for it */
            }
            gc3_rule_both_kinds(*program_p, target);
            if (rule->program != NULL && gc3_coll_desc((*program_p)->coll)->rooted &&
                (*program_p)->coll != GC3_COLL_BCAST && !((*program_p)->inplace && (*program_p)->outofplace)) {
                /* a file's reduce, gather or scatter program, for the component's calls (keyed out of place on
                 * every rank): every rank refuses it alike (the root alone would fail an in-place call, the
                 * others wait); the generators' out-of-place programs serve both kinds (bcast has one buffer) */
                gc3_diag_add(diag,
                             "%s: a %s program must serve in-place and out-of-place calls alike (the "
                             "other ranks cannot know whether the root calls in place); this one verifies in "
                             "one kind only",
                             rule->where, (*program_p)->coll_name);
                gc3_ir_program_destroy(*program_p);
                *program_p = NULL;
                return GC3_ERR_UNSUPPORTED;
            }
        }
        return st;
    }
}
