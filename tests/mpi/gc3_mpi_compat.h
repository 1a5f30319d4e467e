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
#elif MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define GC3_ALLREDUCE_INIT            MPI_Allreduce_init
#define GC3_ALLTOALL_INIT             MPI_Alltoall_init
#define GC3_ALLGATHER_INIT            MPI_Allgather_init
#define GC3_REDUCE_SCATTER_BLOCK_INIT MPI_Reduce_scatter_block_init
#define GC3_BCAST_INIT                MPI_Bcast_init
#define GC3_REDUCE_INIT               MPI_Reduce_init
#else
#error "this MPI has neither MPI_Allreduce_init (MPI-4) nor Open MPI's MPIX_Allreduce_init (pcollreq)"
#endif

#endif /* GC3_MPI_COMPAT_H */
