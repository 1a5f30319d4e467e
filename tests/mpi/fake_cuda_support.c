/* Test helper, loaded with LD_PRELOAD into an MPI program: MPIX_Query_cuda_support (Open MPI's CUDA
 * extension, which coll/gc3 asks for coll_gc3_fallback auto) says 1, as a CUDA-aware Open MPI does
 * in a process with a GPU, so that auto's CUDA-aware branch runs on a machine without either. */
#include <stdio.h>

int MPIX_Query_cuda_support(void);
int MPIX_Query_cuda_support(void)
{
    static int said; /* (a race only repeats the line) */
    if (!said) {
        said = 1;
        fprintf(stderr, "fake_cuda_support: MPIX_Query_cuda_support() says 1\n"); /* the test sees it in use */
    }
    return 1;
}
