/* coll/gc3: what the v-collectives (MPI_Allgatherv, MPI_Alltoallv, MPI_Reduce_scatter) share: their
 * per-rank counts as the runtime's table (gc3_call_t.segs), and the agreement of every rank on the
 * call's largest segment. A v-call runs on its plain collective's plans (allgather, alltoall,
 * reduce_scatter), its loops and tile set by the largest segment of any rank's call, which no rank
 * knows alone (alltoallv: each rank has its row and column of the matrix), hence one small allreduce
 * on host memory per call, which also lets a rank say it cannot run the call (a negative
 * displacement): every rank then passes it on, none waits for another in a different call. */
#include <stdlib.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

uint64_t *mca_coll_gc3_segs_new(mca_coll_gc3_args_t *a, int nranks)
{
    const size_t words = gc3_coll_segs_words((gc3_coll_t)a->coll, nranks);

    free(a->segs);
    a->segs = words > 0 ? calloc(words, sizeof(uint64_t)) : NULL;
    if (a->segs != NULL) {
        a->segs[0] = (uint64_t)gc3_coll_segments((gc3_coll_t)a->coll, GC3_BUF_INPUT, nranks);
    }
    return a->segs;
}

void mca_coll_gc3_segs_set(mca_coll_gc3_args_t *a, int b, int s, size_t disp, size_t count, size_t size, size_t unit)
{
    uint64_t *e = (uint64_t *)gc3_coll_segs_pair(a->segs, b == 0 ? GC3_BUF_INPUT : GC3_BUF_OUTPUT, s);

    e[0] = (uint64_t)(disp * size / unit);
    e[1] = (uint64_t)(count * size / unit);
}

int mca_coll_gc3_vagree(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, uint64_t mine, const char *veto)
{
    const int n    = ompi_comm_size(m->comm);
    uint64_t  v[2] = { mine, veto != NULL || a->segs == NULL }, all[2] = { 0, 1 };
    int       rc = m->prev_allreduce != NULL
                       ? m->prev_allreduce(v, all, 2, MPI_UINT64_T, MPI_MAX, m->comm, m->prev_allreduce_module)
                       : OMPI_ERR_NOT_SUPPORTED;

    if (rc != OMPI_SUCCESS || all[1] != 0) {
        char why[160];
        snprintf(why, sizeof(why), "%s",
                 rc != OMPI_SUCCESS ? "the ranks could not agree on its largest segment"
                 : veto != NULL     ? veto
                 : a->segs == NULL  ? "out of host memory"
                                    : "another rank cannot run it (a negative displacement there)");
        return mca_coll_gc3_passed_on(m->comm, a->name, why);
    }
    if (all[0] == 0) {
        return mca_coll_gc3_passed_on(m->comm, a->name, "count 0, nothing to move");
    }
    a->count = (size_t)all[0];
    a->bytes = a->count * (size_t)n * gc3_dtype_size(a->dtype);
    return 1;
}

int mca_coll_gc3_vrun(mca_coll_gc3_module_t *m, mca_coll_gc3_args_t *a, uint64_t mine, const char *veto, int *rc)
{
    if (!mca_coll_gc3_route_take(m, a, MCA_COLL_GC3_CALL_BLOCKING)) {
        return 0;
    }
    if (mca_coll_gc3_vagree(m, a, mine, veto) &&
        mca_coll_gc3_try_run(m, (gc3_coll_t)a->coll, a, mca_coll_gc3_run_sbuf(a), mca_coll_gc3_run_rbuf(a), rc)) {
        *rc = mca_coll_gc3_adapt_out(m, &a->ad, *rc);
        return 1;
    }
    (void)mca_coll_gc3_adapt_out(m, &a->ad, OMPI_ERROR); /* no plan (every rank alike): passed on */
    return 0;
}

void mca_coll_gc3_args_end(mca_coll_gc3_args_t *a)
{
    free(a->segs);
    a->segs = NULL;
}
