/* Test helper, loaded with LD_PRELOAD into an MPI program: MPI_Get_library_version (the PMPI
 * entry coll/gc3 calls) reports $GC3_FAKE_OMPI_VERSION, as another release of Open MPI would,
 * e.g. "Open MPI v5.0.6, package: Open MPI builder". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int PMPI_Get_library_version(char *version, int *resultlen)
{
    const char *v = getenv("GC3_FAKE_OMPI_VERSION");
    if (v == NULL) {
        fprintf(stderr, "fake_library_version: GC3_FAKE_OMPI_VERSION is not set\n");
        abort();
    }
    snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING, "%s", v);
    fprintf(stderr, "fake_library_version: reports %s\n", version); /* the tests see that it is in use */
    *resultlen = (int)strlen(version) + 1;
    return MPI_SUCCESS;
}
