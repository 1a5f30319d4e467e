/* coll/gc3: the release check of coll_gc3_compat.h. */
#include <stdio.h>
#include <string.h>
#include "coll_gc3_compat.h"
#include "mpi.h"
#include "opal/util/output.h"

int mca_coll_gc3_check_release(void)
{
    char   built[64], running[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int    len = 0;
    size_t n;

    /* the running libmpi's "Open MPI vX.Y.Z[greek], package: ..." (callable before MPI_Init) */
    snprintf(built, sizeof(built), "Open MPI v%d.%d.%d%s", OMPI_MAJOR_VERSION, OMPI_MINOR_VERSION, OMPI_RELEASE_VERSION,
             OMPI_GREEK_VERSION);
    n = strlen(built);
    if (PMPI_Get_library_version(running, &len) == MPI_SUCCESS && strncmp(running, built, n) == 0 &&
        (running[n] == '\0' || running[n] == ',')) {
        return OMPI_SUCCESS;
    }
    running[strcspn(running, ",")] = '\0';
    opal_output(0,
                "coll:gc3: this mca_coll_gc3.so was built for %s but runs in %s: gc3 stays out of the job "
                "(the job's collectives run on Open MPI's other components). Components depend on the internal "
                "structures of the release they were built against; build gc3 against this Open MPI.",
                built, running[0] ? running : "an Open MPI that does not say its release");
    return OMPI_ERR_NOT_AVAILABLE;
}
