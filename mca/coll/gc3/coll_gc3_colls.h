/* coll/gc3: the collectives gc3 intercepts: the functions of the coll interface it keeps (and
 * retains) the previous module's of, installs its own and declares (coll_gc3.h, coll_gc3_module.c).
 * An entry is X(name, type): name is the coll interface's (coll_<name> of mca_coll_base_module_t;
 * gc3's function is mca_coll_gc3_<name>, written out in coll_gc3_<collective>.c or
 * coll_gc3_fallback.c), type that of its function (mca_coll_base_module_<type>_fn_t: the
 * neighbourhood collectives share their plain forms'). The collectives gc3 runs itself are the rows
 * of the component's table (mca_coll_gc3_colls, coll_gc3_dispatch.c). */
#ifndef MCA_COLL_GC3_COLLS_H
#define MCA_COLL_GC3_COLLS_H

/* clang-format off */
#define MCA_COLL_GC3_INTERCEPTED(X)                                                                       \
    /* gc3 runs them where it can, in every form (coll_gc3_<name>.c) */                                  \
    X(allreduce, allreduce) X(iallreduce, iallreduce) X(allreduce_init, allreduce_init)                  \
    X(alltoall, alltoall) X(ialltoall, ialltoall) X(alltoall_init, alltoall_init)                        \
    X(allgather, allgather) X(iallgather, iallgather) X(allgather_init, allgather_init)                  \
    X(reduce_scatter_block, reduce_scatter_block) X(ireduce_scatter_block, ireduce_scatter_block)        \
    X(reduce_scatter_block_init, reduce_scatter_block_init)                                              \
    X(bcast, bcast) X(ibcast, ibcast) X(bcast_init, bcast_init)                                          \
    X(reduce, reduce) X(ireduce, ireduce) X(reduce_init, reduce_init)                                    \
    /* gc3 runs them where it can, in every form (coll_gc3_<name>.c, on their plain collective's       \
       plans) */                                                                                         \
    X(allgatherv, allgatherv) X(alltoallv, alltoallv) X(reduce_scatter, reduce_scatter)                  \
    X(iallgatherv, iallgatherv) X(ialltoallv, ialltoallv) X(ireduce_scatter, ireduce_scatter)            \
    X(allgatherv_init, allgatherv_init) X(alltoallv_init, alltoallv_init)                                \
    X(reduce_scatter_init, reduce_scatter_init)                                                          \
    /* gc3 runs them where it can, in every form (coll_gc3_gather.c, coll_gc3_scatter.c: the plain and     \
       v-forms on one collective's plans, with per-rank counts; coll_gc3_scan.c) */                      \
    X(gather, gather) X(gatherv, gatherv) X(igather, igather) X(igatherv, igatherv)                      \
    X(gather_init, gather_init) X(gatherv_init, gatherv_init)                                            \
    X(scatter, scatter) X(scatterv, scatterv) X(iscatter, iscatter) X(iscatterv, iscatterv)              \
    X(scatter_init, scatter_init) X(scatterv_init, scatterv_init)                                        \
    X(scan, scan) X(exscan, exscan) X(iscan, iscan) X(iexscan, iexscan)                                  \
    X(scan_init, scan_init) X(exscan_init, exscan_init)                                                  \
    /* passed on, staged through host memory on device buffers (coll_gc3_fallback.c) */                  \
    X(alltoallw, alltoallw)                                                                              \
    X(neighbor_allgather, allgather) X(neighbor_allgatherv, allgatherv)                                  \
    X(neighbor_alltoall, alltoall) X(neighbor_alltoallv, alltoallv)                                      \
    X(neighbor_alltoallw, neighbor_alltoallw)                                                            \
    /* nonblocking forms run as their blocking forms on device buffers (coll_gc3_fallback.c) */          \
    X(ialltoallw, ialltoallw)                                                                            \
    X(ineighbor_allgather, iallgather) X(ineighbor_allgatherv, iallgatherv)                              \
    X(ineighbor_alltoall, ialltoall) X(ineighbor_alltoallv, ialltoallv)                                  \
    X(ineighbor_alltoallw, ineighbor_alltoallw)
/* The blocking collectives gc3 stages on an intercommunicator (coll_gc3_inter.c: mca_coll_gc3_inter_<name>). */
#define MCA_COLL_GC3_INTER(X)                                                                             \
    X(allreduce, allreduce) X(bcast, bcast) X(reduce, reduce) X(allgather, allgather)                    \
    X(allgatherv, allgatherv) X(alltoall, alltoall) X(alltoallv, alltoallv) X(gather, gather)            \
    X(gatherv, gatherv) X(scatter, scatter) X(scatterv, scatterv) X(alltoallw, alltoallw)                \
    X(reduce_scatter, reduce_scatter) X(reduce_scatter_block, reduce_scatter_block)
/* clang-format on */

#endif /* MCA_COLL_GC3_COLLS_H */
