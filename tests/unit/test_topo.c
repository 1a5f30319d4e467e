/* GPU <-> NIC locality (gc3_topo.h) on a made-up two-package node described as an hwloc XML
 * topology (tests/unit/topo/two-packages.xml: what each GPU must find is written there). */
#include <stdlib.h>
#include <string.h>
#include "gc3_test.h"
#include "gc3_topo.h"

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
    return gc3_test_summary("test_topo");
}
