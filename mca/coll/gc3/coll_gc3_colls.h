/* coll/gc3: the collectives gc3 intercepts, in one table.
 *
 * The module keeps (and retains) the previous module's function of every one of them, installs
 * gc3's own and declares them from these lists (coll_gc3.h, coll_gc3_module.c); the nonblocking
 * forms that run as their blocking forms on device buffers are generated from the second list
 * (coll_gc3_fallback.c). An entry is X(name, type, ...): name is the coll interface's
 * (coll_<name> of mca_coll_base_module_t, mca_coll_gc3_<name> here), type that of its function
 * (mca_coll_base_module_<type>_fn_t: the neighbourhood collectives share their plain forms'). */
#ifndef MCA_COLL_GC3_COLLS_H
#define MCA_COLL_GC3_COLLS_H

#define MCA_COLL_GC3_INTERCEPTED(X)                                                                   \
    /* gc3 runs them where it can, in every form (coll_gc3_allreduce.c, coll_gc3_alltoall.c) */        \
    X(allreduce, allreduce) X(iallreduce, iallreduce) X(allreduce_init, allreduce_init)                \
    X(alltoall, alltoall) X(ialltoall, ialltoall) X(alltoall_init, alltoall_init)                      \
    /* gc3 runs the blocking form where it can (coll_gc3_allgather.c, coll_gc3_reduce_scatter_block.c) */ \
    X(allgather, allgather) X(reduce_scatter_block, reduce_scatter_block)                              \
    /* passed on, staged through host memory on device buffers (coll_gc3_fallback.c) */                \
    X(bcast, bcast) X(reduce, reduce) X(allgatherv, allgatherv) X(gather, gather) X(gatherv, gatherv)  \
    X(scatter, scatter) X(scatterv, scatterv) X(alltoallv, alltoallv) X(alltoallw, alltoallw)          \
    X(reduce_scatter, reduce_scatter) X(scan, scan) X(exscan, exscan)                                  \
    X(neighbor_allgather, allgather) X(neighbor_allgatherv, allgatherv)                                \
    X(neighbor_alltoall, alltoall) X(neighbor_alltoallv, alltoallv)                                    \
    X(neighbor_alltoallw, neighbor_alltoallw)                                                          \
    MCA_COLL_GC3_STAGED_NONBLOCKING(X)

/* Nonblocking forms that run as their blocking forms on device buffers (the previous module's,
 * libnbc, is not CUDA-aware), completed at once; passed on as they are otherwise.
 * X(name, type, blocking form, the buffers that decide (MCA_COLL_GC3_DEV_*), signature (GC3_SIG_*)). */
#define MCA_COLL_GC3_STAGED_NONBLOCKING(X)                                                            \
    X(ibcast, ibcast, bcast, BUF, bcast)                                                              \
    X(ireduce, ireduce, reduce, ROOT_RECV, reduce)                                                    \
    X(iallgather, iallgather, allgather, BOTH, allgather)                                             \
    X(iallgatherv, iallgatherv, allgatherv, BOTH, allgatherv)                                         \
    X(igather, igather, gather, ROOT_RECV, gather)                                                    \
    X(igatherv, igatherv, gatherv, ROOT_RECV, gatherv)                                                \
    X(iscatter, iscatter, scatter, ROOT_SEND, scatter)                                                \
    X(iscatterv, iscatterv, scatterv, ROOT_SEND, scatterv)                                            \
    X(ialltoallv, ialltoallv, alltoallv, BOTH, alltoallv)                                             \
    X(ialltoallw, ialltoallw, alltoallw, BOTH, alltoallw)                                             \
    X(ireduce_scatter_block, ireduce_scatter_block, reduce_scatter_block, BOTH, reduce_scatter_block) \
    X(ireduce_scatter, ireduce_scatter, reduce_scatter, BOTH, reduce_scatter)                         \
    X(iscan, iscan, scan, BOTH, scan)                                                                 \
    X(iexscan, iexscan, exscan, BOTH, scan)                                                           \
    X(ineighbor_allgather, iallgather, neighbor_allgather, BOTH, allgather)                           \
    X(ineighbor_allgatherv, iallgatherv, neighbor_allgatherv, BOTH, allgatherv)                       \
    X(ineighbor_alltoall, ialltoall, neighbor_alltoall, BOTH, alltoall)                               \
    X(ineighbor_alltoallv, ialltoallv, neighbor_alltoallv, BOTH, alltoallv)                           \
    X(ineighbor_alltoallw, ineighbor_alltoallw, neighbor_alltoallw, BOTH, neighbor_alltoallw)

/* Which buffers make a call one on device buffers (what the previous module must not see). */
#define MCA_COLL_GC3_DEV_BUF  mca_coll_gc3_is_device(buf)
#define MCA_COLL_GC3_DEV_BOTH (mca_coll_gc3_is_device(sbuf) || mca_coll_gc3_is_device(rbuf))
/* rooted: the receive buffer only at the root (reduce, gather), the send buffer only there (scatter) */
#define MCA_COLL_GC3_DEV_ROOT_RECV \
    (mca_coll_gc3_is_device(sbuf) || (ompi_comm_rank(comm) == root && mca_coll_gc3_is_device(rbuf)))
#define MCA_COLL_GC3_DEV_ROOT_SEND \
    ((ompi_comm_rank(comm) == root && mca_coll_gc3_is_device(sbuf)) || mca_coll_gc3_is_device(rbuf))

#endif /* MCA_COLL_GC3_COLLS_H */
