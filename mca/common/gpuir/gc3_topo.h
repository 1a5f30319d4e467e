/* gc3 / libgpuir: where a GPU sits relative to the network devices of its node (hwloc PCI
 * objects). The inter-node transport uses the nearest NIC of each GPU; verbose output and
 * gc3_info show it. */
#ifndef GC3_TOPO_H
#define GC3_TOPO_H

#include "gc3_status.h"

typedef enum {
    GC3_NIC_SAME_SWITCH,     /* under the same PCIe switch as the GPU */
    GC3_NIC_SAME_HOSTBRIDGE, /* the same host bridge (root complex) */
    GC3_NIC_SAME_PACKAGE,    /* the same NUMA node or package, another root complex */
    GC3_NIC_ACROSS,          /* another package: the path crosses the inter-socket link */
    GC3_NIC_LOCALITY_COUNT
} gc3_nic_locality_t;

typedef struct {
    char               name[64];   /* e.g. mlx5_0 (InfiniBand/RoCE) or eth0 */
    char               busid[32];  /* its PCI address */
    int                rdma;       /* an OpenFabrics (verbs) device */
    int                hops;       /* tree edges from the GPU's PCI object to the NIC's */
    gc3_nic_locality_t locality;
} gc3_nic_t;

/* The network device nearest the PCI device pci_busid ("0000:1b:00.0"): an RDMA-capable (verbs)
 * device before any other, then the fewest hops through the hwloc tree. Only devices on a PCI function count
 * (not lo, bridges or virtual interfaces). The topology is hwloc's of this machine (or of
 * HWLOC_XMLFILE). GC3_ERR_UNSUPPORTED: no such PCI device, or no NIC; diag says which. */
gc3_status_t gc3_topo_nearest_nic(const char *pci_busid, gc3_nic_t *nic, gc3_diag_t *diag);
const char  *gc3_nic_locality_name(gc3_nic_locality_t l);

#endif
