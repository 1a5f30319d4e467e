/* What the MPI test programs need that differs between the MPI libraries they build with. */
#ifndef GC3_MPI_COMPAT_H
#define GC3_MPI_COMPAT_H

#include <mpi.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

/* Persistent collectives: MPI-4's MPI_Allreduce_init / MPI_Alltoall_init (Open MPI 5.0), or
 * Open MPI 4.1's pcollreq extension (MPIX_Allreduce_init / MPIX_Alltoall_init). */
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define GC3_ALLREDUCE_INIT            MPIX_Allreduce_init
#define GC3_ALLTOALL_INIT             MPIX_Alltoall_init
#define GC3_ALLGATHER_INIT            MPIX_Allgather_init
#define GC3_REDUCE_SCATTER_BLOCK_INIT MPIX_Reduce_scatter_block_init
#define GC3_BCAST_INIT                MPIX_Bcast_init
#define GC3_REDUCE_INIT               MPIX_Reduce_init
#define GC3_ALLGATHERV_INIT           MPIX_Allgatherv_init
#define GC3_ALLTOALLV_INIT            MPIX_Alltoallv_init
#define GC3_REDUCE_SCATTER_INIT       MPIX_Reduce_scatter_init
#define GC3_GATHER_INIT               MPIX_Gather_init
#define GC3_GATHERV_INIT              MPIX_Gatherv_init
#define GC3_SCATTER_INIT              MPIX_Scatter_init
#define GC3_SCATTERV_INIT             MPIX_Scatterv_init
#define GC3_SCAN_INIT                 MPIX_Scan_init
#define GC3_EXSCAN_INIT               MPIX_Exscan_init
#elif MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define GC3_ALLREDUCE_INIT            MPI_Allreduce_init
#define GC3_ALLTOALL_INIT             MPI_Alltoall_init
#define GC3_ALLGATHER_INIT            MPI_Allgather_init
#define GC3_REDUCE_SCATTER_BLOCK_INIT MPI_Reduce_scatter_block_init
#define GC3_BCAST_INIT                MPI_Bcast_init
#define GC3_REDUCE_INIT               MPI_Reduce_init
#define GC3_ALLGATHERV_INIT           MPI_Allgatherv_init
#define GC3_ALLTOALLV_INIT            MPI_Alltoallv_init
#define GC3_REDUCE_SCATTER_INIT       MPI_Reduce_scatter_init
#define GC3_GATHER_INIT               MPI_Gather_init
#define GC3_GATHERV_INIT              MPI_Gatherv_init
#define GC3_SCATTER_INIT              MPI_Scatter_init
#define GC3_SCATTERV_INIT             MPI_Scatterv_init
#define GC3_SCAN_INIT                 MPI_Scan_init
#define GC3_EXSCAN_INIT               MPI_Exscan_init
#else
#error "this MPI has neither MPI_Allreduce_init (MPI-4) nor Open MPI's MPIX_Allreduce_init (pcollreq)"
#endif

/* Whether this MPI takes device buffers itself (CUDA-aware), as Open MPI says at run time:
 * MPIX_Query_cuda_support() of its CUDA extension (5.0: 1 only where its CUDA accelerator
 * component runs, so not without a GPU driver). *why: the answer in words. A stock Open MPI crashes
 * on device pointers in point-to-point and in its own collectives: ask before giving it any. */
static inline int gc3_mpi_cuda_aware(const char **why)
{
#if defined(MPIX_CUDA_AWARE_SUPPORT)
    if (MPIX_Query_cuda_support()) {
        *why = "this Open MPI is CUDA-aware (MPIX_Query_cuda_support() is 1)";
        return 1;
    }
    *why = MPIX_CUDA_AWARE_SUPPORT
               ? "this Open MPI was built with CUDA but is not CUDA-aware in this process "
                 "(MPIX_Query_cuda_support() is 0)"
               : "this Open MPI is not CUDA-aware (built without CUDA: MPIX_Query_cuda_support() is 0)";
#else
    *why = "this MPI is not known to be CUDA-aware (mpi-ext.h has no MPIX_Query_cuda_support)";
#endif
    return 0;
}

#endif /* GC3_MPI_COMPAT_H */
