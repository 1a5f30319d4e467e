/* coll/gc3: the MCA parameters, in one table.
 *
 * X(name, C type, MCA type, default, ompi_info level, scope, in the settings hash, enum values, help):
 * the component's fields (coll_gc3.h), their initial values, their registration (coll_gc3_component.c)
 * and the settings hash the ranks agree on before their first plan (coll_gc3_setup.c) all come from
 * it; the manual's entries (MCA PARAMETERS of doc/man/coll_gc3.7: add one with the parameter) are
 * checked against what ompi_info lists (tests/mpi/check-ompi-info.sh). A parameter is coll_gc3_<name>.
 * (coll_gc3_enable_<collective> come from the component's table, mca_coll_gc3_colls.)
 * "In the settings hash": it decides on each rank whether a call builds a plan and which, so ranks
 * configured differently must not build plans (a rank building one while another passes the call on
 * would hang). Out-of-range values are reported and replaced at open (mca_coll_gc3_check_params). */
#ifndef MCA_COLL_GC3_PARAMS_H
#define MCA_COLL_GC3_PARAMS_H

#define MCA_COLL_GC3_PARAMS(X)                                                                                         \
    X(priority, int, INT, 0, 6, READONLY, 0, NULL,                                                                     \
      "Priority of coll/gc3. It takes the collectives it implements only when its priority is above the "              \
      "other coll components of the communicator (tuned: 30), e.g. 90; a negative value disables it")                  \
    X(verbose, int, INT, 0, 6, LOCAL, 0, NULL,                                                                         \
      "Verbosity of coll/gc3: 0 silent; 1 which algorithm each (collective, size class) uses and why, "                \
      "whether gc3 runs nothing because another coll component's priority is higher, algorithm directory programs "    \
      "a communicator cannot run, and a collective no other component provides; 2 also every call passed on or "       \
      "staged and why, and the parameters in use; 3 every communicator gc3 is queried for and enabled on, and every "  \
      "rank says what rank 0 "                                                                                         \
      "says for all (below 3, a line every rank would print alike comes from rank 0 only)")                            \
    X(breakdown, bool, BOOL, false, 6, LOCAL, 0, NULL,                                                                 \
      "Rank 0 of each communicator prints, for each run of blocking calls gc3 ran of one collective, size and kind "   \
      "(in place or not), the mean time of each phase of a call in microseconds: entry to plan found, to the "         \
      "runtime's start, ordered after the caller's stream, posted to the GPU, posted to completion seen (of it, the "  \
      "GPU's time from taking the call to its exchange done), completion seen to the return. Calls that waited (for "  \
      "a plan's set-up or another call) are not counted. Costs a few clock reads and two stores to host-mapped "       \
      "memory per call. false: off")                                                                                   \
    X(backend, int, INT, MCA_COLL_GC3_BACKEND_AUTO, 6, READONLY, 1, mca_coll_gc3_backend_values,                       \
      "Where gc3 runs collectives: auto (device buffers on the GPU, host buffers passed on), cuda (the same), "        \
      "host (also runs host buffers itself with the host backend, and device buffers copied to host memory). The "     \
      "host backend is for tests, demos and machines without GPUs, where running gc3's algorithms matters more than "  \
      "speed: it is slower than Open MPI's own host collectives (an 8-byte allreduce on 2 ranks: about 24 us "         \
      "against 0.4 us with tuned)")                                                                                    \
    X(timeout, double, DOUBLE, 300.0, 6, READONLY, 0, NULL,                                                            \
      "Seconds a collective may make no progress before it fails with MPI_ERR_OTHER naming the rank, thread block, "   \
      "step and what it waited for, and seconds each exchange of a communicator's set-up, or the ranks' agreement "    \
      "on a call's memory kinds, may wait for the other ranks (0: wait forever; a negative value, or one that is "     \
      "not a number, is reported and replaced by 300)")                                                                \
    X(rules_file, char *, STRING, "", 6, READONLY, 0, NULL,                                                            \
      "Selection rules: which algorithm runs which collective, size and machine shape (format in coll_gc3(7); "        \
      "gc3_info prints the resolved table). Empty: the built-in rules. A file that cannot be used is reported "        \
      "with its line numbers and the built-in rules are used")                                                         \
    X(algorithm_dir, char *, STRING, "", 6, READONLY, 0, NULL,                                                         \
      "Directory of MSCCL-format XML programs (*.xml, e.g. written by gc3c gen or for MSCCL). Each one that "          \
      "reads and verifies becomes a rule ahead of the rules file: it runs its collective on communicators of "         \
      "its rank count, for calls in the size range of its minBytes/maxBytes and in the modes (in place, out of "       \
      "place) it declares. Files that cannot be used are reported and skipped. Empty: none")                           \
    X(max_bytes, long, LONG, 0, 6, READONLY, 1, NULL,                                                                  \
      "Collectives of more bytes than this are passed on (device buffers staged); 0: no limit (a negative "            \
      "value is reported and replaced by 0)")                                                                          \
    X(max_blocks, int, INT, 0, 6, READONLY, 1, NULL,                                                                   \
      "At most this many thread blocks (one SM each on a GPU) per rank in one plan: a plan of the rules' "             \
      "algorithms that is wider is narrowed (instances halved, then channels) and the verbose line says so; "          \
      "a wider program of the algorithm directory is not used. 0: what the GPU holds at once, shared among the "       \
      "ranks that use it (the host backend: no limit). A negative value is reported and replaced by 0")                \
    X(fifo_slots, int, INT, GC3_FIFO_SLOTS_DEFAULT, 6, READONLY, 1, NULL,                                              \
      "FIFO slots per connection (2..1024; other values are reported and replaced by " GC3_STR(                        \
          GC3_FIFO_SLOTS_DEFAULT) "); compiled programs are scheduled for this many, and an algorithm "                \
                                  "directory program that would deadlock with this many is not used")                  \
    X(slot_bytes, int, INT, 0, 6, READONLY, 1, NULL,                                                                   \
      "Bytes of one FIFO slot, 4096..1073741824 (0: 1 MiB on GPUs, 256 KiB on the host backend; other values "         \
      "are reported and replaced by 0)")                                                                               \
    X(plan_fifo_bytes, long, LONG, GC3_PLAN_FIFO_BYTES_DEFAULT, 6, READONLY, 1, NULL,                                  \
      "Device memory one plan's receiving FIFOs may take on a rank (connections x fifo_slots x slot bytes): "          \
      "a plan of many connections gets smaller slots (not below 4096 bytes). Slots are also no larger than "           \
      "what the largest call of the plan's size range moves in one message. 0: no cap (slots of "                      \
      "coll_gc3_slot_bytes); a negative value is reported and replaced by the default")                                \
    X(zero_copy, int, INT, MCA_COLL_GC3_ZC_AUTO, 6, READONLY, 1, mca_coll_gc3_zero_copy_values,                        \
      "Large messages between ranks of a node without copies through the FIFOs: a send whose data is in the "          \
      "caller's input or output buffer, where the program leaves it untouched until the receiver read it, leaves "     \
      "it in place, and the receiver reads it from the sender's buffer (mapped once per buffer: CUDA IPC of its "      \
      "allocation, identified by CUDA's buffer id, so memory freed and allocated again at the same place is never "    \
      "taken for the old one). A buffer is registered at its first call and used in place from a later call on, "      \
      "once the peers mapped it; memory that cannot be shared (managed, host, cudaMallocAsync's pools, cuMemCreate) "  \
      "goes through the FIFOs, per call (verbose 2 says which and why). auto: on GPUs; on: also on the host "          \
      "backend, for buffers in shared file mappings (tests); off: every byte through the FIFOs")                       \
    X(zero_copy_fifo_bytes, long, LONG, GC3_ZC_FIFO_BYTES_DEFAULT, 6, READONLY, 1, NULL,                               \
      "With zero-copy, the FIFO cap (instead of coll_gc3_plan_fifo_bytes, when smaller) of a plan whose every call "   \
      "runs in zero-copy mode once its buffers are registered: its slots then carry only headers, and their payload "  \
      "is used by buffers that cannot be registered and by a buffer's first call, which run slower with smaller "      \
      "slots. 0: coll_gc3_plan_fifo_bytes alone; a negative value is reported and replaced by the default")            \
    X(zero_copy_push, bool, BOOL, true, 6, READONLY, 0, NULL,                                                          \
      "Zero-copy mode (every rank's buffers of the call mapped by every other rank of the node): a send the "          \
      "program allows it for (ring allgather phases, all-to-all, bcast) writes its chunks straight into the "          \
      "receiver's buffer instead of leaving them for the receiver to read (NVLink writes are posted, reads are "       \
      "round trips). false: every receiver reads. Ranks need not agree")                                               \
    X(reg_cache, int, INT, GC3_REG_ENTRIES_DEFAULT, 6, READONLY, 1, NULL,                                              \
      "Zero-copy: buffers (allocations) each rank keeps registered per communicator, 1.." GC3_STR(                     \
          GC3_REG_ENTRIES_MAX) "; the least recently used one that no call in flight holds goes when another is "      \
                               "needed, and all go at "                                                                \
                               "MPI_Comm_free (other values are reported and replaced by " GC3_STR(                    \
                                   GC3_REG_ENTRIES_DEFAULT) ")")                                                       \
    X(tile_bytes, long, LONG, GC3_TILE_BYTES_DEFAULT, 6, READONLY, 1, NULL,                                            \
      "The most bytes one step of a Simple program moves per loop, in FIFO-slot-sized pieces (or in place, "           \
      "zero-copy): larger calls run in more loops. Programs with scratch, and LL, move one slot per loop. At "         \
      "least 4096 (other values are reported and replaced by the default)")                                            \
    X(fifo_pool, bool, BOOL, GC3_FIFO_POOL_DEFAULT, 6, READONLY, 1, NULL,                                              \
      "A communicator's plans that run the Simple protocol take their FIFO slots from one pool per rank and "          \
      "backend, as large as the largest of them needs, instead of slots of their own: the communicator's FIFO "        \
      "memory is the largest plan's, not the sum of its plans' (each plan keeps its own counters). Their calls "       \
      "then run one at a time: a call on such a plan waits for the communicator's call on another one to end "         \
      "(nonblocking ones too, in call order); a call that follows another plan's waits, before its first "             \
      "message to a peer, until the peer has started it. LL plans keep their own slots. false: every plan its own "    \
      "slots")                                                                                                         \
    X(relabel, bool, BOOL, true, 6, READONLY, 1, NULL,                                                                 \
      "One plan serves every root of MPI_Bcast, MPI_Reduce, MPI_Gather(v) and MPI_Scatter(v) on a communicator of "    \
      "one node: the ranks are relabelled at run time (the root's rank plays the program's root), so a code that "     \
      "rotates its roots holds one plan per rule, not one per root (a plan's FIFOs and counters are those of every "   \
      "connection its relabellings use). Calls of different roots on one plan run one after the other. false: a "      \
      "plan per root")                                                                                                 \
    X(memory_budget, long, LONG, 0, 6, READONLY, 0, NULL,                                                              \
      "Memory (bytes) gc3's plans may hold per process, all communicators together (GPUs: device memory; the "         \
      "host backend: shared and private host memory). A plan that would take the process past it is made smaller "     \
      "(its FIFOs capped at half, a quarter, ... of coll_gc3_plan_fifo_bytes, down to 1 MiB); if even that does "      \
      "not fit it is not built and the calls it would run are staged through host memory. Verbose level 1 says "       \
      "which (all ranks of the communicator decide alike). 0: 1/16 of the GPU's memory (host backend: 1 GiB); a "      \
      "negative value is "                                                                                             \
      "reported and replaced by 0")                                                                                    \
    X(resident_us, int, INT, GC3_RESIDENT_US_DEFAULT, 6, READONLY, 0, NULL,                                            \
      "GPUs: after a call of a plan of at most " GC3_STR(                                                              \
          GC3_RESIDENT_MAX_BLOCKS) " thread blocks on one node, "                                                      \
                                   "its interpreter kernel stays on the GPU this many microseconds and takes the "     \
                                   "next call from host-mapped "                                                       \
                                   "memory, without a kernel launch (5-15 us less per call). Meanwhile it occupies "   \
                                   "one SM per thread block (up to " GC3_STR(                                          \
                                       GC3_RESIDENT_MAX_BLOCKS) "), and cudaDeviceSynchronize or cudaFree in "         \
                                                                "the application waits until it has left. 0: one "     \
                                                                "launch per call (a negative value is reported and "   \
                                                                "replaced by " GC3_STR(GC3_RESIDENT_US_DEFAULT) ")")   \
    X(yield_us, int, INT, GC3_YIELD_US_DEFAULT, 6, READONLY, 0, NULL,                                                  \
      "A thread block of a call that waited this many microseconds (for a peer, another block or a free slot) "        \
      "gives way: it leaves the call where it stands and runs on from there later (GPUs: the kernel ends once "        \
      "each of its blocks ended or gave way, and is launched again). Calls in flight together on any number of "       \
      "communicators then complete in any order MPI allows, whatever the GPU holds at once. 0: never (a call then "    \
      "needs all of its blocks and its peers' on the GPU at once; a negative value is reported and replaced "          \
      "by " GC3_STR(GC3_YIELD_US_DEFAULT) ")")                                                                         \
    X(fuse, bool, BOOL, true, 6, READONLY, 0, NULL,                                                                    \
      "Run a thread block's local copy or reduction, and the reductions of received chunks into the same "             \
      "chunks that follow it, as one pass over memory once all their inputs are there (the same result, "              \
      "elementwise), for chunks of up to " GC3_STR(                                                                    \
          GC3_FUSE_BYTES) " bytes (larger ones run step by step, "                                                     \
                          "faster there). false: step by step, as the program is written")                             \
    X(wait_default_stream, int, INT, MCA_COLL_GC3_WAIT_TRUE, 6, READONLY, 0, mca_coll_gc3_wait_values,                 \
      "GPUs: each call first waits for the work queued on the legacy default stream before it (cudaMemset, "           \
      "kernels on stream 0, CuPy's default stream), so it reads what that work wrote. A call that goes to a resident " \
      "kernel: host (the host asks the driver whether that stream is idle, else waits for it: 2-2.7 us a call on "     \
      "H200) or device (the stream writes a word after that work, which the kernel waits for; the host does not "      \
      "wait); true: the faster of the two as measured (host). false skips the ordering: only for applications that "   \
      "synchronize the streams writing the buffers before calling MPI, as CUDA-aware MPI requires")                    \
    X(shared_gpu, bool, BOOL, false, 6, READONLY, 1, NULL,                                                             \
      "Ranks of a communicator that share a GPU: false runs gc3 there only when the GPU is shared through MPS "        \
      "(without it the processes' kernels take turns on the GPU, about 2.4 ms an 8-byte allreduce with two "           \
      "ranks on an H200, so their device buffers are staged through host memory; verbose 1 says so); true "            \
      "runs gc3 anyway")                                                                                               \
    X(fallback, int, INT, MCA_COLL_GC3_FALLBACK_AUTO, 6, READONLY, 1, mca_coll_gc3_fallback_values,                    \
      "What happens to a call on device buffers that gc3 does not run itself (another collective, a "                  \
      "user-defined datatype or op, managed memory, no plan): auto (pass where this Open MPI says it is CUDA-aware, "  \
      "MPIX_Query_cuda_support(), nonblocking calls then staged; stage otherwise; verbose 1 "                          \
      "says which and why), stage (copy the buffers through host memory around the previous coll module: correct "     \
      "on any Open MPI), pass (give that module the device buffers: only for a CUDA-aware Open MPI), error (fail "     \
      "the call with MPI_ERR_UNSUPPORTED_OPERATION, naming it: to be sure nothing runs slowly unnoticed)")             \
    X(route_recheck, int, INT, 1024, 6, READONLY, 1, NULL,                                                             \
      "Calls of one collective, size and root between two agreements of the ranks on which memory they pass "          \
      "(host, device, managed), which decides the route every rank takes: gc3 on the GPUs, or Open MPI's own "         \
      "component for host buffers. The first call of each agrees and waits; later ones use what was agreed, a "        \
      "rank whose buffers differ copies them to the route's memory, and every N-th call posts a new agreement "        \
      "applied at the next. 0: blocking calls agree before every call. A job without a CUDA driver on any rank "       \
      "agrees once per communicator")                                                                                  \
    X(pseudo_nodes, int, INT, 0, 9, READONLY, 1, NULL,                                                                 \
      "Test and demo feature: split the ranks of each host into pseudo-nodes of this many consecutive ranks, so "      \
      "that gc3 treats them as separate nodes (connections between them through UCX and the proxy thread, "            \
      "hierarchical allreduce and two-step alltoall) on one machine. 0: off, nodes are hosts (a negative value "       \
      "is reported and replaced by 0)")                                                                                \
    X(net_peer_errors, bool, BOOL, true, 6, READONLY, 1, NULL,                                                         \
      "Between nodes: create UCX endpoints that report a dead or unreachable peer at once (the call fails "            \
      "naming it). UCX then uses only transports that can detect that (InfiniBand/RoCE, TCP; not its "                 \
      "shared-memory ones, so pseudo-nodes on one host go over TCP loopback). false: any transport, and a dead "       \
      "peer is caught by coll_gc3_timeout")                                                                            \
    X(net_path, int, INT, GC3_NET_PATH_AUTO, 6, READONLY, 0, mca_coll_gc3_net_path_values,                             \
      "Between nodes: how device buffers' messages move. auto: GPUDirect where UCX reports CUDA memory support "       \
      "on every rank of the communicator (the FIFO slots in GPU memory registered with UCX, put from GPU to GPU "      \
      "by the proxy thread), else host-staged (the slots in pinned host memory); gpudirect: the same, but a "          \
      "rank whose UCX lacks CUDA memory support is reported (level 0) and the communicator stays host-staged; on "     \
      "the host backend it runs the direct protocol on host memory (tests); staged: host-staged (for sites whose "     \
      "GPUDirect is broken). The ranks agree: GPUDirect only when every rank can. Verbose 1 names the path and why")   \
    X(stage_host, bool, BOOL, false, 9, READONLY, 1, NULL,                                                             \
      "Test feature, never for production: treat every host buffer as device memory, so that the staging path "        \
      "(copy through host memory around the previous module) runs on machines without GPUs")

/* the component's field of a parameter */
#define MCA_COLL_GC3_PARAM_FIELD(name, ctype, ...) ctype name;

#endif /* MCA_COLL_GC3_PARAMS_H */
