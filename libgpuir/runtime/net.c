/* gc3 / libgpuir: the network transports built in (gc3_rt_net.h), and the choice of one at a plan's
 * preparation. */
#include <stddef.h>
#include "gc3_rt_net.h"

/* in order of preference */
static const gc3_rt_net_t *const gc3_rt_nets[] = {
#ifdef GC3_HAVE_UCX
    &gc3_rt_net_ucx,
#endif
    NULL
};

const gc3_rt_net_t *gc3_rt_net_choose(const gc3_exec_params_t *params)
{
    (void)params; /* (one transport a build: the first; a parameter may choose among several) */
    return gc3_rt_nets[0];
}
