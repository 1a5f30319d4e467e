/* GPU <-> NIC locality (gc3_topo.h) on a made-up two-package node described as an hwloc XML
 * topology (tests/unit/topo/two-packages.xml: what each GPU must find is written there); the inter-node
 * path a rank takes; the block budget and link class of ranks sharing GPUs. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gc3_test.h"
#include "gc3_topo.h"
#include "gc3_runtime.h"

static void expect(const char *gpu, const char *name, const char *busid, gc3_nic_locality_t where, int hops)
{
    gc3_nic_t  nic;
    gc3_diag_t diag;
    gc3_diag_init(&diag);
    CHECK_OK(gc3_topo_nearest_nic(gpu, &nic, &diag));
    CHECK(!strcmp(nic.name, name) && !strcmp(nic.busid, busid) && nic.locality == where && nic.hops == hops && nic.rdma,
          "GPU %s: nearest NIC %s (%s, %s, %d hops, rdma %d), want %s (%s, %s, %d hops)", gpu, nic.name, nic.busid,
          gc3_nic_locality_name(nic.locality), nic.hops, nic.rdma, name, busid, gc3_nic_locality_name(where), hops);
    gc3_diag_cleanup(&diag);
}

/* The inter-node path a rank can take (gc3_net_path_choose): GPUDirect only on the cuda backend
 * with a UCX that reports CUDA memory, or forced on the host backend (the direct protocol on host
 * memory); forcing it where UCX lacks CUDA memory is refused with a reason that says so. */
static void net_path(void)
{
    const struct {
        gc3_net_path_t   asked;
        gc3_backend_t    backend;
        int              ucx;
        gc3_net_reason_t want;
    } c[] = {
        {GC3_NET_PATH_AUTO, GC3_BACKEND_CUDA, 1, GC3_NET_DIRECT_CUDA},
        {GC3_NET_PATH_GPUDIRECT, GC3_BACKEND_CUDA, 1, GC3_NET_DIRECT_CUDA},
        {GC3_NET_PATH_STAGED, GC3_BACKEND_CUDA, 1, GC3_NET_STAGED_FORCED},
        {GC3_NET_PATH_AUTO, GC3_BACKEND_CUDA, 0, GC3_NET_STAGED_NO_CUDA},
        {GC3_NET_PATH_GPUDIRECT, GC3_BACKEND_CUDA, 0, GC3_NET_STAGED_REFUSED},
        {GC3_NET_PATH_GPUDIRECT, GC3_BACKEND_CUDA, -1, GC3_NET_STAGED_NO_UCX},
        {GC3_NET_PATH_AUTO, GC3_BACKEND_HOST, 0, GC3_NET_STAGED_HOST},
        {GC3_NET_PATH_AUTO, GC3_BACKEND_HOST, 1, GC3_NET_STAGED_HOST},
        {GC3_NET_PATH_GPUDIRECT, GC3_BACKEND_HOST, 0, GC3_NET_DIRECT_HOST},
        {GC3_NET_PATH_STAGED, GC3_BACKEND_HOST, 0, GC3_NET_STAGED_FORCED},
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        gc3_net_reason_t got = gc3_net_path_choose(c[i].asked, c[i].backend, c[i].ucx);
        CHECK(got == c[i].want, "net path case %zu: reason %d, expected %d (%s)", i, (int)got, (int)c[i].want,
              gc3_net_path_reason(got));
        CHECK(GC3_NET_REASON_DIRECT(got) == (c[i].want == GC3_NET_DIRECT_CUDA || c[i].want == GC3_NET_DIRECT_HOST),
              "net path case %zu: direct or not", i);
    }
    CHECK(strstr(gc3_net_path_reason(GC3_NET_STAGED_REFUSED), "GPUDirect refused") != NULL &&
              strstr(gc3_net_path_reason(GC3_NET_STAGED_REFUSED), "no CUDA memory support") != NULL,
          "the refusal names the reason: %s", gc3_net_path_reason(GC3_NET_STAGED_REFUSED));
}

/* The block budget of ranks sharing GPUs (gc3_gpu_budget), on seats written here: each GPU's blocks
 * divided among its ranks (same host and PCI id), the smallest share, within max_blocks; the refusal
 * of a GPU shared without MPS names its two lowest ranks. */
static void seat(gc3_gpu_seat_t *s, const char *host, const char *pci, int mps, int blocks)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->host, sizeof(s->host), "%s", host);
    snprintf(s->gpu.pci, sizeof(s->gpu.pci), "%s", pci);
    s->gpu.mps = mps;
    s->blocks  = blocks;
}

static void budget(void)
{
    const struct {
        const char *what;
        int         n, max_blocks, shared_gpu;
        struct {
            const char *host, *pci;
            int         mps, blocks;
        } r[5];
        int gpus, budget, refused, first, second;
    } c[] = {
        /* clang-format off */
        {"4 ranks on one GPU through MPS", 4, 0, 0,
         {{"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}}, 33, 33, 0, -1, -1},
        {"... within coll_gc3_max_blocks 3", 4, 3, 0,
         {{"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}}, 33, 3, 0, -1, -1},
        {"max_blocks above the share", 2, 100, 0, {{"a", "0:1", 1, 132}, {"a", "0:1", 1, 132}}, 66, 66, 0, -1, -1},
        {"a GPU each, the smaller one bounds", 3, 0, 0,
         {{"a", "0:1", 0, 132}, {"a", "0:2", 0, 100}, {"b", "0:1", 0, 132}}, 100, 100, 0, -1, -1},
        {"one PCI id on two hosts is two GPUs", 2, 0, 0,
         {{"a", "0:1", 0, 132}, {"b", "0:1", 0, 132}}, 132, 132, 0, -1, -1},
        {"two GPUs shared without MPS: the first one's lowest ranks", 5, 0, 0,
         {{"a", "0:1", 1, 132}, {"a", "0:2", 0, 132}, {"a", "0:3", 0, 132}, {"a", "0:2", 0, 132}, {"a", "0:3", 0, 132}},
         66, 66, 1, 1, 3},
        {"... allowed by coll_gc3_shared_gpu", 2, 0, 1, {{"a", "0:1", 0, 132}, {"a", "0:1", 0, 132}}, 66, 66, 0, -1, -1},
        {"blocks not known: any", 2, 0, 0, {{"a", "0:1", 0, 0}, {"a", "0:2", 0, -1}}, INT_MAX, INT_MAX, 0, -1, -1},
        {"... within coll_gc3_max_blocks 8", 2, 8, 0, {{"a", "0:1", 0, 0}, {"a", "0:2", 0, 0}}, INT_MAX, 8, 0, -1, -1},
        {"fewer blocks than ranks on a GPU", 4, 0, 0,
         {{"a", "0:1", 1, 3}, {"a", "0:1", 1, 3}, {"a", "0:1", 1, 3}, {"a", "0:1", 1, 3}}, 0, 0, 0, -1, -1},
        {"no ranks", 0, 5, 0, {{NULL, NULL, 0, 0}}, INT_MAX, 5, 0, -1, -1},
        /* clang-format on */
    };
    for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
        gc3_gpu_seat_t   s[5];
        gc3_gpu_budget_t b;
        for (int r = 0; r < c[i].n; r++) {
            seat(&s[r], c[i].r[r].host, c[i].r[r].pci, c[i].r[r].mps, c[i].r[r].blocks);
        }
        gc3_gpu_budget(s, c[i].n, c[i].max_blocks, c[i].shared_gpu, &b);
        CHECK(b.gpus == c[i].gpus && b.budget == c[i].budget && b.refused == c[i].refused && b.first == c[i].first &&
                  b.second == c[i].second,
              "budget, %s: gpus %d budget %d refused %d (ranks %d, %d); want %d %d %d (%d, %d)", c[i].what, b.gpus,
              b.budget, b.refused, b.first, b.second, c[i].gpus, c[i].budget, c[i].refused, c[i].first, c[i].second);
    }
}

/* The link class of ranks' GPUs (gc3_gpu_seats_link): NVLink when every pair of GPUs of one host has
 * native peer atomics both ways; GPUs of other hosts and ranks sharing one GPU do not count. */
static void seats_link(void)
{
    gc3_gpu_seat_t s[3];
    seat(&s[0], "a", "0:1", 0, 132);
    seat(&s[1], "a", "0:2", 0, 132);
    seat(&s[2], "b", "0:1", 0, 132);
    s[0].gpu.device = s[2].gpu.device = 0;
    s[1].gpu.device                   = 1;
    s[0].gpu.atomics                  = 1u << 1;
    s[1].gpu.atomics                  = 1u << 0;
    CHECK(gc3_gpu_seats_link(s, 3) == GC3_LINK_NVLINK, "two GPUs of host a with atomics both ways: nvlink");
    s[1].gpu.atomics = 0;
    CHECK(gc3_gpu_seats_link(s, 3) == GC3_LINK_PCIE, "one way without atomics: pcie");
    CHECK(gc3_gpu_seats_link(&s[1], 2) == GC3_LINK_NVLINK, "GPUs of two hosts: nvlink (not compared)");
    s[1] = s[0];
    CHECK(gc3_gpu_seats_link(s, 2) == GC3_LINK_NVLINK, "two ranks on one GPU: nvlink (not compared)");
    CHECK(gc3_gpu_seats_link(s, 0) == GC3_LINK_NVLINK, "no ranks: nvlink");
}

int main(void)
{
    gc3_nic_t  nic;
    gc3_diag_t diag;

    setenv("HWLOC_XMLFILE", GC3_SOURCE_DIR "/tests/unit/topo/two-packages.xml", 1);
    setenv("HWLOC_THISSYSTEM", "0", 1);
    /* under the same PCIe switch as the HCA */
    expect("0000:01:00.0", "mlx5_0", "0000:02:00.0", GC3_NIC_SAME_SWITCH, 2);
    /* eth0 is nearer, but the RDMA device is the transport's choice */
    expect("0000:04:00.0", "mlx5_0", "0000:02:00.0", GC3_NIC_SAME_HOSTBRIDGE, 3);
    /* no NIC in its package */
    expect("0000:41:00.0", "mlx5_0", "0000:02:00.0", GC3_NIC_ACROSS, 7);
    gc3_diag_init(&diag);
    CHECK(gc3_topo_nearest_nic("0000:99:00.0", &nic, &diag) == GC3_ERR_UNSUPPORTED && diag.count == 1 &&
              strstr(diag.msgs[0], "no PCI device 0000:99:00.0") != NULL,
          "an unknown bus id is reported: %s", diag.count ? diag.msgs[0] : "(nothing)");
    gc3_diag_cleanup(&diag);
    net_path();
    budget();
    seats_link();
    return gc3_test_summary("test_topo");
}
