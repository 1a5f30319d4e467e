/* coll/gc3: what differs between the Open MPI releases gc3 builds against (4.1.x and 5.0.x).
 * Everything else of the coll interface gc3 uses is the same in both (the previous module's
 * functions, requests, datatypes, MCA variables). */
#ifndef MCA_COLL_GC3_COMPAT_H
#define MCA_COLL_GC3_COMPAT_H

#include "ompi_config.h"
#include "ompi/mca/coll/coll.h"

#if !defined(OMPI_MAJOR_VERSION) || (OMPI_MAJOR_VERSION * 100 + OMPI_MINOR_VERSION) < 401
#error "coll/gc3 needs Open MPI 4.1 or 5.0"
#elif OMPI_MAJOR_VERSION >= 6
/* main (6.0) enables and disables a communicator's coll modules differently */
#error "coll/gc3 supports Open MPI 4.1 and 5.0, not 6.0 or later (yet)"
#endif

/* the coll framework's component version: 5.0 queries only components that declare 2.4.0 */
#if OMPI_MAJOR_VERSION >= 5
#define MCA_COLL_GC3_BASE_VERSION MCA_COLL_BASE_VERSION_2_4_0
#else
#define MCA_COLL_GC3_BASE_VERSION MCA_COLL_BASE_VERSION_2_0_0
#endif

/* A component is compiled against the internal structures of one Open MPI release (5.0.x
 * releases moved fields of the communicator and added members to the coll module): OMPI_SUCCESS
 * when the running Open MPI is that release, otherwise it says so (once, output 0) and the
 * component stays out of the job (OMPI_ERR_NOT_AVAILABLE from its open). */
int mca_coll_gc3_check_release(void);

#endif /* MCA_COLL_GC3_COMPAT_H */
