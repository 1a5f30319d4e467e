/* coll/gc3: agreement. Every decision of a communicator's set-up is taken from records all ranks
 * exchanged (gc3's own allgather, coll_gc3_oob.c), so that every rank takes it alike: a phase posts
 * this rank's record, the next step reads everybody's. Cards say whether a rank is ready, a hash of
 * what it built and the key of the call; the settings hash covers what decides whether a call
 * builds a plan at all (the rules and the parameters marked so in coll_gc3_params.h). */
#include <stdlib.h>
#include <string.h>
#include "coll_gc3.h"
#include "opal/util/output.h"

/* Post this rank's record of the phase (m->setup.xsend, bytes; released here); 0 when posted. */
int mca_coll_gc3_agree_post(mca_coll_gc3_module_t *m, size_t bytes)
{
    int rc = -1;
    if (m->setup.xsend != NULL) {
        m->setup.xrecv = malloc((size_t)ompi_comm_size(m->comm) * bytes);
        rc             = m->setup.xrecv != NULL
                             ? mca_coll_gc3_oob_iallgather(m, m->setup.xsend, m->setup.xrecv, bytes, &m->setup.xreq)
                             : -1;
    }
    free(m->setup.xsend); /* the exchange has its copy */
    m->setup.xsend = NULL;
    if (rc != 0) {
        free(m->setup.xrecv);
        m->setup.xrecv = NULL;
        m->setup.xreq  = NULL;
    }
    return rc;
}

void mca_coll_gc3_agree_release(mca_coll_gc3_module_t *m)
{
    if (m->setup.xreq == NULL) {
        free(m->setup.xrecv);
    } /* else it belongs to the pending exchange */
    m->setup.xrecv = NULL;
    m->setup.xreq  = NULL;
}

/* The verdict on all ranks' cards, the same on every rank: another call key first, then another
 * hash among the ready ranks (peer: the first that differs from the first ready one; a rank that is not
 * ready, over the memory budget say, has no hash to compare), then a rank not ready. */
int mca_coll_gc3_verdict(const mca_coll_gc3_card_t *v, int n, uint64_t key, int *peer)
{
    int verdict = MCA_COLL_GC3_AGREE_OK, first = -1;
    *peer = -1;
    for (int r = 0; r < n; r++) {
        if (v[r].key != key) {
            *peer = r;
            return MCA_COLL_GC3_AGREE_MISMATCH;
        }
    }
    for (int r = 0; r < n; r++) {
        if (v[r].ok && first < 0) {
            first = r;
        } else if (v[r].ok && v[r].hash != v[first].hash && verdict != MCA_COLL_GC3_AGREE_DIFFERENT) {
            *peer   = r;
            verdict = MCA_COLL_GC3_AGREE_DIFFERENT;
        } else if (!v[r].ok && verdict == MCA_COLL_GC3_AGREE_OK) {
            verdict = MCA_COLL_GC3_AGREE_NOT_READY;
        }
    }
    return verdict;
}

void mca_coll_gc3_warn_disagree(mca_coll_gc3_module_t *m, const char *what, int peer)
{
    static int warned = 0; /* once per process; later communicators at verbose level 1 */
    opal_output_verbose(warned++ ? 1 : 0, mca_coll_gc3_component.output,
                        "coll:gc3: comm %s rank %d: ranks disagree on %s (rank %d differs); gc3 passes these calls on",
                        m->comm->c_name, ompi_comm_rank(m->comm), what, peer);
}

/* What decides on each rank whether a call builds a plan and which: the rules (with the algorithm
 * directory's) and the parameters read before a plan is chosen. Building a plan is collective, so
 * ranks must agree on all of it before the first plan, or one could build a plan while another
 * passes the same call on (a hang). Rule locations and file paths are left out: the same rules
 * from files at different paths agree; differing program files are caught by the plan hash. */
uint64_t mca_coll_gc3_settings_hash(void)
{
    const gc3_rules_t *R = mca_coll_gc3_rules();
    uint64_t           h = GC3_FNV1A_START;

    h = mca_coll_gc3_params_hash(h);
    for (int i = 0; R != NULL && i < R->n; i++) {
        const gc3_rule_t *r   = &R->rules[i];
        int64_t           v[] = { r->coll,          r->nodes_lo,          r->nodes_hi,          r->gpus_lo, r->gpus_hi,
                                  r->link,          (int64_t)r->bytes_lo, (int64_t)r->bytes_hi, r->proto,   r->proto_set,
                                  r->channels,      r->instances,         r->chunks_per_peer,   r->ranks,   r->inplace_ok,
                                  r->outofplace_ok, r->program != NULL };
        h                     = gc3_fnv1a(h, r->algo, strlen(r->algo) + 1);
        h                     = gc3_fnv1a(h, v, sizeof(v));
    }
    return h;
}
