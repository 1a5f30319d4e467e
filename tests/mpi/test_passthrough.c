/* coll/gc3 foundation: the component is loaded (its MCA variable exists through MPI_T) and
 * every collective it intercepts gives the right result through delegation, checked against
 * a host computation. Run under mpirun with the component on the path (see gc3-mpirun). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define EXPECT(cond, ...)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            failures++;                                                \
            fprintf(stderr, "rank %d: %s:%d: ", rank, __FILE__, __LINE__); \
            fprintf(stderr, __VA_ARGS__);                              \
            fputc('\n', stderr);                                       \
        }                                                              \
    } while (0)

static int gc3_loaded(void)
{
    int idx, provided;
    MPI_T_init_thread(MPI_THREAD_SINGLE, &provided);
    int rc = MPI_T_cvar_get_index("coll_gc3_priority", &idx);
    MPI_T_finalize();
    return rc == MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    int rank, size, calls = 0, all_fail;
    int counts[] = {0, 1, 7, 1000, 65537};

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    EXPECT(gc3_loaded(), "coll/gc3 is not loaded (MCA variable coll_gc3_priority missing)");
    for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
        int     n   = counts[k];
        double *in  = malloc(sizeof(double) * ((size_t)n * size + 1));
        double *out = malloc(sizeof(double) * ((size_t)n * size + 1));
        int    *iin = malloc(sizeof(int) * ((size_t)n + 1));
        int    *iout = malloc(sizeof(int) * ((size_t)n + 1));
        MPI_Request req;

        for (int i = 0; i < n; i++) {
            in[i]  = rank + i;
            iin[i] = (rank + 1) * (i % 5 + 1);
        }
        MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            EXPECT(out[i] == (double)size * (size - 1) / 2 + (double)size * i, "allreduce sum count %d elem %d", n, i);
        }
        MPI_Allreduce(MPI_IN_PLACE, iin, n, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            EXPECT(iin[i] == size * (i % 5 + 1), "allreduce in-place max count %d elem %d", n, i);
        }
        for (int i = 0; i < n; i++) {
            iin[i] = rank + i;
        }
        MPI_Iallreduce(iin, iout, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; i++) {
            EXPECT(iout[i] == size * (size - 1) / 2 + size * i, "iallreduce count %d elem %d", n, i);
        }
        for (int p = 0; p < size; p++) {
            for (int i = 0; i < n; i++) {
                in[(size_t)p * n + i] = rank * 1000000.0 + p * 1000.0 + i;
            }
        }
        MPI_Alltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++) {
            for (int i = 0; i < n; i++) {
                EXPECT(out[(size_t)p * n + i] == p * 1000000.0 + rank * 1000.0 + i, "alltoall count %d", n);
            }
        }
        MPI_Ialltoall(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        for (int p = 0; p < size; p++) {
            for (int i = 0; i < n; i++) {
                EXPECT(out[(size_t)p * n + i] == p * 1000000.0 + rank * 1000.0 + i, "ialltoall count %d", n);
            }
        }
        for (int i = 0; i < n; i++) {
            in[i] = rank * 10.0 + i;
        }
        MPI_Allgather(in, n, MPI_DOUBLE, out, n, MPI_DOUBLE, MPI_COMM_WORLD);
        for (int p = 0; p < size; p++) {
            for (int i = 0; i < n; i++) {
                EXPECT(out[(size_t)p * n + i] == p * 10.0 + i, "allgather count %d", n);
            }
        }
        for (size_t i = 0; i < (size_t)n * size; i++) {
            in[i] = (double)(rank + 1) * (double)i;
        }
        MPI_Reduce_scatter_block(in, out, n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        for (int i = 0; i < n; i++) {
            double idx = (double)rank * n + i;
            EXPECT(out[i] == idx * size * (size + 1) / 2, "reduce_scatter_block count %d elem %d", n, i);
        }
        calls += 7;
        free(in);
        free(out);
        free(iin);
        free(iout);
    }
    {
        /* calls gc3 passes on whatever the backend (verbose 2 names each and why): a collective it
         * does not run, an allgather of a non-contiguous datatype */
        int          sv[4], rv[64];
        MPI_Datatype strided;
        if (size <= 16) { /* alltoallw: one int to every rank, its rank times 100 plus the peer's */
            int          wsend[16], wrecv[16], cnt[16], dsp[16];
            MPI_Datatype ty[16];
            for (int q = 0; q < size; q++) {
                wsend[q] = rank * 100 + q;
                wrecv[q] = -1;
                cnt[q]   = 1;
                dsp[q]   = q * (int)sizeof(int);
                ty[q]    = MPI_INT;
            }
            MPI_Alltoallw(wsend, cnt, dsp, ty, wrecv, cnt, dsp, ty, MPI_COMM_WORLD);
            for (int q = 0; q < size; q++) {
                EXPECT(wrecv[q] == q * 100 + rank, "alltoallw from %d: %d", q, wrecv[q]);
            }
        }
        MPI_Type_vector(2, 1, 2, MPI_INT, &strided); /* elements 0 and 2 */
        MPI_Type_commit(&strided);
        sv[0] = rank * 10;
        sv[1] = -7;
        sv[2] = rank * 10 + 1;
        sv[3] = -7;
        for (int i = 0; i < 64; i++) {
            rv[i] = -1;
        }
        if (size <= 16) {
            MPI_Allgather(sv, 1, strided, rv, 2, MPI_INT, MPI_COMM_WORLD);
            for (int p = 0; p < size; p++) {
                EXPECT(rv[2 * p] == p * 10 && rv[2 * p + 1] == p * 10 + 1, "non-contiguous allgather from %d", p);
            }
        }
        MPI_Type_free(&strided);
        calls += 2;
    }
    {
        /* a contiguous datatype whose data starts 16 bytes past the buffer (its true lower bound):
         * bcast moves the 4 ints there and leaves the 4 before them alone */
        int          blen = 4, b[8];
        MPI_Aint     disp = 4 * sizeof(int);
        MPI_Datatype past;
        MPI_Type_create_hindexed(1, &blen, &disp, MPI_INT, &past);
        MPI_Type_commit(&past);
        for (int i = 0; i < 8; i++) {
            b[i] = rank == 0 ? 100 + i : -1;
        }
        MPI_Bcast(b, 1, past, 0, MPI_COMM_WORLD);
        for (int i = 0; i < 8; i++) {
            EXPECT(b[i] == (i >= 4 || rank == 0 ? 100 + i : -1), "bcast of a datatype starting past the buffer: "
                   "element %d is %d", i, b[i]);
        }
        MPI_Type_free(&past);
        calls += 1;
    }
    MPI_Allreduce(&failures, &all_fail, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("test_passthrough: %d ranks, gc3 %s, %d collective calls per rank through coll/gc3's delegation: %s\n",
               size, gc3_loaded() ? "loaded" : "NOT loaded", calls, all_fail ? "FAILED" : "results verified");
        printf("%d passed, %d failed\n", all_fail ? 0 : 1, all_fail ? 1 : 0);
    }
    MPI_Finalize();
    return all_fail ? 1 : 0;
}
