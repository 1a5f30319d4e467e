/* gc3 / libgpuir: the machine as gc3 sees it. Everything gc3 asks about the hardware outside a
 * plan's run is here, so that its users (the MPI component, gc3_info) ask nothing themselves:
 *
 *   - the link class between the GPUs of a node (what the rules select on);
 *   - this process's GPUs (topo_gpu.c): PCI bus id, MPS, native peer atomics and peer access,
 *     through the CUDA runtime libgpuir is built with, asked only when called (an application
 *     selects its GPU after MPI_Init), and the calling thread's current GPU;
 *   - what memory a pointer is, and copies between any memory (topo_gpu.c): through the CUDA
 *     driver, loaded at run time (no link against it; no context is made; a process without a
 *     driver has only host memory), one driver call per buffer;
 *   - where a GPU sits relative to the network devices of its node (topo.c, hwloc PCI objects):
 *     the inter-node transport uses the nearest NIC of each GPU; verbose output and gc3_info show it.
 *
 * The thread blocks a GPU holds at once depend on the interpreter kernel: the executor says
 * (gc3_exec_max_blocks). */
#ifndef GC3_TOPO_H
#define GC3_TOPO_H

#include <stddef.h>
#include <stdint.h>
#include "gc3_status.h"

/* ---- link classes ---- */
typedef enum { GC3_LINK_NVLINK, GC3_LINK_PCIE, GC3_LINK_HOST, GC3_LINK_COUNT } gc3_link_t;
const char *gc3_link_name(gc3_link_t link);

/* ---- this process's GPUs ---- */
typedef struct {
    int      device;    /* CUDA ordinal */
    char     pci[32];   /* PCI bus id as CUDA writes it ("device N" when CUDA does not say) */
    int      mps;       /* shared through MPS (0 when CUDA cannot tell) */
    uint64_t atomics;   /* bit d: native peer atomics from this GPU to GPU d (d < 64) */
    uint64_t peers;     /* bit d: peer access from this GPU to GPU d (d < 64) */
    uint64_t mem_bytes; /* its memory (0 when CUDA does not say, or it is not the current device) */
} gc3_gpu_info_t;

/* GPUs this process sees (CUDA_VISIBLE_DEVICES applies); 0 without CUDA or a driver. */
int gc3_gpu_count(void);
/* What there is to know of GPU `device` (-1: the calling thread's current one; 0 when CUDA cannot
 * say), as far as CUDA answers (what it does not answer stays unknown: no MPS, no peers).
 * GC3_ERR_UNSUPPORTED (diag says why) only in a build without CUDA. */
gc3_status_t gc3_gpu_probe(int device, gc3_gpu_info_t *info, gc3_diag_t *diag);
/* Its product name ("?" when unknown). */
void gc3_gpu_name(int device, char *out, size_t len);
/* The link class of two GPUs of one node: NVLink when both have native peer atomics with each other
 * (PCIe peer access has none), else PCIe. */
gc3_link_t gc3_gpu_link(const gc3_gpu_info_t *a, const gc3_gpu_info_t *b);
/* The calling thread's current GPU (-1 when none can be known); make `device` current. */
int  gc3_gpu_current(void);
void gc3_gpu_select(int device);
/* One line on the network device nearest GPU `device` ("mlx5_0 (RDMA, same PCIe switch, GPU
 * 0000:1b:00.0)", or why there is none), found once per process and device (hwloc's I/O scan
 * costs tens of milliseconds). */
void gc3_gpu_nearest_nic(int device, char *out, size_t len);

/* ---- GPUs shared by ranks: the thread blocks a plan may have ---- */
/* What a rank says of its seat, to be gathered from every rank that runs one plan. */
typedef struct {
    char           host[64]; /* its host's name */
    gc3_gpu_info_t gpu;      /* its GPU (device -1: none): PCI id and MPS count here */
    int32_t        blocks;   /* thread blocks of gc3's kernel the GPU holds at once (<= 0: not known) */
    int32_t        pad;
} gc3_gpu_seat_t;

/* This rank's seat on `gpu` (as gc3_gpu_probe said), the GPU holding `blocks` blocks at once. */
void gc3_gpu_seat(gc3_gpu_seat_t *seat, const gc3_gpu_info_t *gpu, int blocks);

typedef struct {
    /* thread blocks a plan may have on every rank as the GPUs allow: each GPU's blocks divided among the
     * ranks on it (same host, same PCI id), the smallest share; INT_MAX where no GPU's is known; 0 where
     * a GPU holds fewer blocks than ranks */
    int gpus;
    int budget; /* that, within max_blocks (> 0) */
    /* ranks share a GPU without MPS and shared_gpu is 0: their processes' kernels would take turns on
     * the GPU (2.4 ms an 8-byte allreduce, two ranks on one H200); first, second: then the two lowest
     * ranks on the first such GPU */
    int refused, first, second;
} gc3_gpu_budget_t;

/* The block budget of n ranks (seats[r]: rank r's), the same on every rank that has all seats. */
void gc3_gpu_budget(const gc3_gpu_seat_t *seats, int n, int max_blocks, int shared_gpu, gc3_gpu_budget_t *out);
/* The link class of n ranks' GPUs (seats[r]: rank r's): NVLink when every pair of GPUs of one host
 * has native peer atomics with each other (gc3_gpu_link), else PCIe. */
gc3_link_t gc3_gpu_seats_link(const gc3_gpu_seat_t *seats, int n);

/* ---- memory ---- */
typedef enum { GC3_MEM_HOST, GC3_MEM_DEVICE, GC3_MEM_MANAGED } gc3_mem_t;
/* 1 when the CUDA driver is loaded (the first call tries); without it every buffer is host memory. */
int gc3_mem_driver(void);
/* What ptr is: host memory (also pinned or registered host memory, and memory CUDA does not know),
 * device memory (*device_p: its GPU) or managed memory. */
gc3_mem_t gc3_mem_classify(const void *ptr, int *device_p);
/* Copy between any memory (unified addressing), synchronously; GC3_ERR_UNSUPPORTED without a driver. */
gc3_status_t gc3_mem_copy(void *dst, const void *src, size_t bytes);
/* Device memory of GPU `device` for a rank's own temporary (its buffers adapted to gc3's route), in the
 * GPU's primary context (the CUDA runtime's): made current on the calling thread where none is.
 * GC3_ERR_UNSUPPORTED without a driver, GC3_ERR_NO_MEMORY when the GPU has none left. */
gc3_status_t gc3_mem_alloc_device(int device, size_t bytes, void **ptr_p);
void         gc3_mem_free_device(void *ptr);
/* Zero-copy: the allocation that holds `bytes` of device memory at ptr: its range, its buffer id (CUDA
 * gives every allocation a new one, so memory freed and allocated again at the same place has another);
 * GC3_OK only when it is device memory of `device` that CUDA IPC can export (cudaMalloc), else
 * GC3_ERR_UNSUPPORTED with *why_p (managed, host, another GPU's, an allocation of cudaMallocAsync's
 * pools or of cuMemCreate). One driver call. */
gc3_status_t gc3_mem_range(const void *ptr, size_t bytes, int device, uint64_t *base_p, uint64_t *size_p,
                           uint64_t *ident_p, const char **why_p);

/* ---- the network devices near a GPU ---- */
typedef enum {
    GC3_NIC_SAME_SWITCH,     /* under the same PCIe switch as the GPU */
    GC3_NIC_SAME_HOSTBRIDGE, /* the same host bridge (root complex) */
    GC3_NIC_SAME_PACKAGE,    /* the same NUMA node or package, another root complex */
    GC3_NIC_ACROSS,          /* another package: the path crosses the inter-socket link */
    GC3_NIC_LOCALITY_COUNT
} gc3_nic_locality_t;

typedef struct {
    char               name[64];  /* e.g. mlx5_0 (InfiniBand/RoCE) or eth0 */
    char               busid[32]; /* its PCI address */
    int                rdma;      /* an OpenFabrics (verbs) device */
    int                hops;      /* tree edges from the GPU's PCI object to the NIC's */
    gc3_nic_locality_t locality;
} gc3_nic_t;

/* The network device nearest the PCI device pci_busid ("0000:1b:00.0"): an RDMA-capable (verbs)
 * device before any other, then the fewest hops through the hwloc tree. Only devices on a PCI function count
 * (not lo, bridges or virtual interfaces). The topology is hwloc's of this machine (or of
 * HWLOC_XMLFILE). GC3_ERR_UNSUPPORTED: no such PCI device, or no NIC; diag says which. */
gc3_status_t gc3_topo_nearest_nic(const char *pci_busid, gc3_nic_t *nic, gc3_diag_t *diag);
const char  *gc3_nic_locality_name(gc3_nic_locality_t l);

#endif
