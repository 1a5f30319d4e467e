/* gc3 / libgpuir runtime: one exchange of a plan's preparation over the caller's out-of-band
 * interface (gc3_oob_t: an allgather started and tested, never waited for), used by the executor's
 * phases and the inter-node transport's (see gc3_rt_backend.h). */
#include <stdlib.h>
#include <string.h>
#include "gc3_rt_backend.h"

gc3_status_t gc3_rt_xchg_alloc(gc3_rt_xchg_t *x, size_t bytes, int nranks, const char *what)
{
    memset(x, 0, sizeof(*x));
    x->bytes = bytes;
    x->what  = what;
    x->send  = calloc(1, bytes);
    x->recv  = calloc((size_t)nranks, bytes);
    if (x->send == NULL || x->recv == NULL) {
        gc3_rt_xchg_release(x);
        return GC3_ERR_NO_MEMORY;
    }
    return GC3_OK;
}

gc3_status_t gc3_rt_xchg_post(const gc3_exec_t *exec, gc3_rt_xchg_t *x, gc3_diag_t *diag)
{
    const gc3_oob_t *oob = &exec->params.oob;
    if (oob->iallgather(oob->ctx, x->send, x->recv, x->bytes, &x->req) != 0) {
        x->req = NULL;
        gc3_diag_add(diag, "executor: %s could not be started (out-of-band interface)", x->what);
        return GC3_ERR_IO;
    }
    return GC3_OK;
}

gc3_status_t gc3_rt_xchg_test(const gc3_exec_t *exec, gc3_rt_xchg_t *x, gc3_diag_t *diag)
{
    const gc3_oob_t *oob = &exec->params.oob;
    int              rc  = oob->test(oob->ctx, x->req);
    if (rc == 0) {
        return GC3_IN_PROGRESS;
    }
    x->req = NULL;
    if (rc < 0) {
        gc3_diag_add(diag, "executor: %s failed (out-of-band interface)", x->what);
        return GC3_ERR_IO;
    }
    return GC3_OK;
}

void gc3_rt_xchg_release(gc3_rt_xchg_t *x)
{
    if (x->req == NULL) {
        free(x->send);
        free(x->recv);
    }
    x->send = x->recv = NULL;
}
