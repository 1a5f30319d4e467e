/* gc3 / libgpuir: link classes, the block budget of ranks sharing GPUs, and GPU <-> NIC locality from
 * hwloc's PCI objects (see gc3_topo.h). */
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "gc3_topo.h"

static const char *gc3_links[GC3_LINK_COUNT] = {"nvlink", "pcie", "host"};

const char *gc3_link_name(gc3_link_t link)
{
    return (unsigned)link < GC3_LINK_COUNT ? gc3_links[link] : "?";
}

static const char *gc3_nic_localities[GC3_NIC_LOCALITY_COUNT] = {"same PCIe switch", "same host bridge",
                                                                  "same NUMA node or package", "across packages"};

const char *gc3_nic_locality_name(gc3_nic_locality_t l)
{
    return (unsigned)l < GC3_NIC_LOCALITY_COUNT ? gc3_nic_localities[l] : "?";
}

void gc3_gpu_seat(gc3_gpu_seat_t *seat, const gc3_gpu_info_t *gpu, int blocks)
{
    memset(seat, 0, sizeof(*seat));
    gethostname(seat->host, sizeof(seat->host) - 1);
    seat->gpu    = *gpu;
    seat->blocks = blocks;
}

void gc3_gpu_budget(const gc3_gpu_seat_t *seats, int n, int max_blocks, int shared_gpu, gc3_gpu_budget_t *out)
{
    memset(out, 0, sizeof(*out));
    out->gpus  = INT_MAX;
    out->first = out->second = -1;
    for (int r = 0; r < n; r++) {
        int share = 0, first = -1, second = -1; /* the two lowest ranks on r's GPU */
        for (int q = 0; q < n; q++) {
            if (!strncmp(seats[q].host, seats[r].host, sizeof(seats[r].host)) &&
                !strncmp(seats[q].gpu.pci, seats[r].gpu.pci, sizeof(seats[r].gpu.pci))) {
                share++;
                second = first >= 0 && second < 0 ? q : second;
                first  = first < 0 ? q : first;
            }
        }
        if (seats[r].blocks > 0 && seats[r].blocks / share < out->gpus) {
            out->gpus = seats[r].blocks / share;
        }
        if (share > 1 && !seats[r].gpu.mps && !shared_gpu && !out->refused) {
            out->refused = 1;
            out->first   = first;
            out->second  = second;
        }
    }
    out->budget = max_blocks > 0 && max_blocks < out->gpus ? max_blocks : out->gpus;
}

/* The ancestor of a and b nearest them, and the tree edges between them through it. */
static hwloc_obj_t gc3_topo_meet(hwloc_obj_t a, hwloc_obj_t b, int *hops)
{
    int up_a = 0;
    for (hwloc_obj_t x = a; x != NULL; x = x->parent, up_a++) {
        int up_b = 0;
        for (hwloc_obj_t y = b; y != NULL; y = y->parent, up_b++) {
            if (x == y) {
                *hops = up_a + up_b;
                return x;
            }
        }
    }
    *hops = -1;
    return NULL;
}

static gc3_nic_locality_t gc3_topo_classify(hwloc_obj_t meet)
{
    if (meet->type == HWLOC_OBJ_PCI_DEVICE) {
        return GC3_NIC_SAME_SWITCH; /* functions of one device */
    }
    if (meet->type == HWLOC_OBJ_BRIDGE) {
        return meet->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? GC3_NIC_SAME_HOSTBRIDGE : GC3_NIC_SAME_SWITCH;
    }
    return meet->type == HWLOC_OBJ_MACHINE || meet->parent == NULL ? GC3_NIC_ACROSS : GC3_NIC_SAME_PACKAGE;
}

gc3_status_t gc3_topo_nearest_nic(const char *pci_busid, gc3_nic_t *nic, gc3_diag_t *diag)
{
    hwloc_topology_t topo;
    hwloc_obj_t      gpu, os = NULL;
    gc3_status_t     status = GC3_ERR_UNSUPPORTED;
    int              best = -1;

    memset(nic, 0, sizeof(*nic));
    if (hwloc_topology_init(&topo) != 0) {
        gc3_diag_add(diag, "topology: hwloc_topology_init failed");
        return GC3_ERR_NO_MEMORY;
    }
    hwloc_topology_set_io_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (hwloc_topology_load(topo) != 0) {
        gc3_diag_add(diag, "topology: hwloc cannot load this machine's topology");
        status = GC3_ERR_IO;
        goto out;
    }
    gpu = hwloc_get_pcidev_by_busidstring(topo, pci_busid);
    if (gpu == NULL) {
        gc3_diag_add(diag, "topology: no PCI device %s in hwloc's topology", pci_busid);
        goto out;
    }
    while ((os = hwloc_get_next_osdev(topo, os)) != NULL) {
        hwloc_obj_t pci = os->parent, meet;
        int         rdma = os->attr->osdev.type == HWLOC_OBJ_OSDEV_OPENFABRICS, hops;
        if ((!rdma && os->attr->osdev.type != HWLOC_OBJ_OSDEV_NETWORK) || pci == NULL ||
            pci->type != HWLOC_OBJ_PCI_DEVICE || os->name == NULL) {
            continue;
        }
        meet = gc3_topo_meet(gpu, pci, &hops);
        if (meet == NULL) {
            continue;
        }
        /* an RDMA device before any other (the transport's choice), then the fewest hops */
        if (best < 0 || (rdma && !nic->rdma) || (rdma == nic->rdma && hops < best)) {
            best = hops;
            snprintf(nic->name, sizeof(nic->name), "%s", os->name);
            snprintf(nic->busid, sizeof(nic->busid), "%04x:%02x:%02x.%01x", pci->attr->pcidev.domain,
                     pci->attr->pcidev.bus, pci->attr->pcidev.dev, pci->attr->pcidev.func);
            nic->rdma     = rdma;
            nic->hops     = hops;
            nic->locality = gc3_topo_classify(meet);
        }
    }
    if (best < 0) {
        gc3_diag_add(diag, "topology: no network device on a PCI function in hwloc's topology");
        goto out;
    }
    status = GC3_OK;
out:
    hwloc_topology_destroy(topo);
    return status;
}
