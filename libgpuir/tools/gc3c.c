/* gc3c: the gc3 algorithm compiler's command line.
 *
 *   gc3c verify [options] FILE...     structure, semantics and deadlock checks
 *   gc3c run [options] FILE           reference executor on random data, checked
 *   gc3c show FILE                    per-rank, per-block listing
 *   gc3c simulate [options] FILE      cost model: predicted time per size
 *   gc3c list                         the algorithm generators
 *   gc3c gen ALGO [options]           generate, compile and verify an algorithm
 */
#include "gc3c.h"

/* clang-format off */
/* Each command's usage: `gc3c help` and `gc3c` print them all, `gc3c COMMAND --help` its own. */
static const struct {
    const char *name, *text;
} gc3c_cmds[] = {
    {"verify",
     "  verify [--slots N] [--loops N] [--post TABLE] [--no-races] FILE...\n"
     "        check each MSCCL-format XML program: structure (ids, peers, bounds, one sending and one\n"
     "        receiving block per connection, dependencies, matching send/receive pairs), semantics\n"
     "        (symbolic execution against the collective's postcondition, data races) and deadlock\n"
     "        freedom with N FIFO slots per connection (default 8) over N loop iterations (default 2).\n"
     "        A program for in-place calls only is verified a second time in the form that serves\n"
     "        out-of-place calls (its input copied into place first). --post TABLE gives the\n"
     "        postcondition of a custom collective whose file carries none (its format:\n"
     "        doc/design/compiler.md). What the reader does not use (an attribute or element gc3 does\n"
     "        not know) is a warning with its line.\n"},
    {"run",
     "  run [--dtype T] [--op OP] [--count N] [--inplace] [--seed S] [--post TABLE] [--force] FILE\n"
     "        run FILE on random data with the reference executor and compare every output with\n"
     "        the postcondition. T: int8 uint8 int32 uint32 int64 uint64 float32 float64 (default\n"
     "        float32); OP: sum prod min max band bor bxor (default sum); N: the MPI count (default:\n"
     "        " GC3_STR(GC3C_RUN_CHUNK_ELEMS) " elements per chunk). Without --inplace, a program for in-place calls only runs as\n"
     "        an out-of-place call does: its input copied into place first. The run holds every\n"
     "        rank's buffers in this process: it first estimates the host memory it needs and refuses\n"
     "        when that is more than is available (MemAvailable, the cgroup's limit); --force runs anyway.\n"
     "        Alltoall, allgather, bcast, gather and scatter programs move data: T matters, OP does\n"
     "        not. A rooted program (bcast, reduce, gather, scatter) runs for the root it was compiled\n"
     "        for (root= in FILE, chosen by gen).\n"},
    {"show",
     "  show FILE\n"
     "        list every rank, thread block and step.\n"},
    {"simulate",
     "  simulate [--nodes N] [--gpus G] [--nvlink BW] [--net BW] [--nvlink-lat T] [--net-lat T]\n"
     "           [--staged BW] [--sizes MIN:MAX] [--param NAME=VALUE]... FILE\n"
     "        predict the time of FILE with the cost model on N nodes of G GPUs (default: 1 node of\n"
     "        ngpus), every message through the FIFOs in tiles of 1 MiB. BW like 360GB/s or 200Gb/s, T\n"
     "        like 0.7us. Between nodes GPUDirect (the NIC moves GPU memory), or with --staged BW\n"
     "        host-staged: each message copied GPU to pinned host memory and back at BW (PCIe) around\n"
     "        the wire. A program for in-place calls only gets a second column: an out-of-place call\n"
     "        (the copy counted). --param NAME=VALUE sets one of the model's parameters (+X adds X).\n"
     "  simulate ... --algo ALGO[,ALGO...] [--ranks R] [--instances K] [--channels C]\n"
     "           [--chunks-per-peer K] [--proto P] [--slots S] [--root R] [--no-verify]\n"
     "        instead of FILE: generate ALGO for the described machine (verified up to 64 ranks).\n"
     "        The machine is --nodes N x --gpus G; --ranks R (gen's option) is the same as --gpus R/N.\n"
     "  simulate --coll COLL --gpus G [--nodes N] [--link nvlink|pcie|host] [--inplace] [--sizes MIN:MAX]\n"
     "           [--rules FILE] [--rule LINE]... [--algorithm-dir DIR] [--zero-copy on|pull|off]\n"
     "           [--fifo-slots S] [--slot-bytes B] [--plan-fifo-bytes B] [--tile-bytes B] [--param NAME=VALUE]...\n"
     "        what gc3 runs: per size (bytes as each rank passes them, alltoall: to each peer; float32;\n"
     "        alltoallv, allgatherv, gatherv, scatterv: their plain collective's plans, every segment that size),\n"
     "        the algorithm of the rules (built-in, --rules FILE, --rule lines ahead of them, DIR's\n"
     "        programs ahead of all, as coll_gc3_algorithm_dir), the call as the runtime runs it (its\n"
     "        slots, tile and loops, zero-copy where the rule allows it; the options as the coll_gc3_\n"
     "        parameters of those names, their defaults the runtime's; --zero-copy pull: never pushed, as\n"
     "        coll_gc3_zero_copy_push false; off: every message through the FIFOs) and the predicted time,\n"
     "        the mean over the ranks as gc3_bench reports it.\n"
     "  simulate --measured CSV [the options above] [--method M] [--exclude B[,B...]] [--tolerance PCT]\n"
     "        the same for the sizes of a gc3_bench CSV (its collective and ranks unless given), against\n"
     "        the times of its rows of method M (default gc3): the error per size and the largest (sizes\n"
     "        in --exclude shown, not counted); exit status 1 when it is above PCT percent.\n"
     "  simulate --params [--param NAME=VALUE]...\n"
     "        the model's parameters: name, value, unit, what it is and where the value comes from.\n"},
    {"list",
     "  list\n"
     "        the algorithm generators, their collectives and the parameters each takes.\n"},
    {"gen",
     "  gen ALGO --ranks R [--nodes N] [--instances K] [--channels C] [--chunks-per-peer K]\n"
     "          [--proto Simple|LL|LL128] [--inplace | --msccl-inplace] [--min-bytes B] [--max-bytes B]\n"
     "          [--slots S] [--root R] [--no-verify] [--stats] [--max-blocks B] [-o FILE]\n"
     "        compile algorithm ALGO for R ranks (N nodes of R/N GPUs for the hierarchical ones),\n"
     "        verify it and write MSCCL XML to FILE (default: standard output). --max-blocks B:\n"
     "        at most B thread blocks per rank, narrowed as the component narrows its plans\n"
     "        (coll_gc3_max_blocks): instances halved, then channels; says the shape on stderr.\n"
     "        --inplace: a program\n"
     "        for in-place calls; --msccl-inplace: the same, written in MSCCL's in-place form (the\n"
     "        buffer inside the other given with 0 chunks: o_chunks=0, allgather i_chunks=0).\n"
     "        --min-bytes/--max-bytes: the sizes the program is for (minBytes, maxBytes).\n"
     "        --channels, --chunks-per-peer: for the generators that take them (list); for another\n"
     "        one, a value other than 1 is an error.\n"
     "        --root R: the root of a rooted collective (bcast, reduce, gather, scatter; default 0):\n"
     "        a program is compiled for one root (<algo root=\"R\">); R ranks may be 1 for them.\n"
     "        --slots S: scheduled (and verified) for S FIFO slots per connection, default "
     GC3_STR(GC3_FIFO_SLOTS_DEFAULT) " as\n"
     "        coll_gc3_fifo_slots: it runs with S or more.\n"},
};

/* Examples, by command. */
static const struct {
    const char *name, *text;
} gc3c_examples[] = {
    {"list", "gc3c list"},
    {"gen", "gc3c gen ring --ranks 4 --stats -o ring4.xml"},
    {"gen", "gc3c gen allpairs --ranks 8 --proto LL --instances 4 --max-blocks 33 -o ap8.xml"},
    {"gen", "gc3c gen bcast_ring --ranks 4 --root 2 --channels 2 -o bcast4.xml"},
    {"verify", "gc3c verify ring4.xml"},
    {"run", "gc3c run ring4.xml                    # count 4096 (1024 elements/chunk), float32 sum"},
    {"run", "gc3c run --dtype int32 --op max --count 400 ring4.xml"},
    {"show", "gc3c show ring4.xml"},
    {"simulate", "gc3c simulate --sizes 1K:1G ring4.xml   # predicted time per call (us)"},
    {"simulate", "gc3c simulate --algo ring,allpairs --gpus 8"},
    {"simulate", "gc3c simulate --coll allreduce --gpus 4 --sizes 8:1G   # what gc3 runs on 4 GPUs"},
    {"simulate", "gc3c simulate --measured doc/measurements/zero-copy-alltoall-4xh200.csv --tolerance 15"},
    {"simulate", "gc3c simulate --params"},
};
/* clang-format on */

void gc3c_usage(FILE *out, const char *cmd)
{
    int n = (int)(sizeof(gc3c_cmds) / sizeof(gc3c_cmds[0]));

    fprintf(out, "usage: gc3c COMMAND [options] FILE...\n\n%s", cmd ? "" : "commands:\n");
    for (int i = 0; i < n; i++) {
        if (cmd == NULL || strcmp(cmd, gc3c_cmds[i].name) == 0) {
            fputs(gc3c_cmds[i].text, out);
        }
    }
    if (cmd == NULL) {
        fputs("  help  this text (COMMAND --help: that command's)\n", out);
    }
    fputs("\nexit status: 0 when every file passed, 1 when one failed, 2 on usage errors.\n\nexamples:\n", out);
    for (size_t i = 0; i < sizeof(gc3c_examples) / sizeof(gc3c_examples[0]); i++) {
        if (cmd == NULL || strcmp(cmd, gc3c_examples[i].name) == 0) {
            fprintf(out, "  %s\n", gc3c_examples[i].text);
        }
    }
}
int main(int argc, char **argv)
{
    int rc;

    if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        gc3c_usage(argc < 2 ? stderr : stdout, NULL);
        return argc < 2 ? 2 : 0;
    }
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            for (size_t k = 0; k < sizeof(gc3c_cmds) / sizeof(gc3c_cmds[0]); k++) {
                if (strcmp(argv[1], gc3c_cmds[k].name) == 0) {
                    gc3c_usage(stdout, argv[1]);
                    return 0;
                }
            }
        }
    }
    if (strcmp(argv[1], "verify") == 0) {
        rc = cmd_verify(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "run") == 0) {
        rc = cmd_run(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "show") == 0) {
        rc = cmd_show(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "simulate") == 0) {
        rc = cmd_simulate(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "list") == 0) {
        rc = cmd_list(argc - 2, argv + 2);
    } else if (strcmp(argv[1], "gen") == 0) {
        rc = cmd_gen(argc - 2, argv + 2);
    } else {
        fprintf(stderr, "gc3c: unknown command '%s' (try gc3c help)\n", argv[1]);
        rc = 2;
    }
    gc3_ir_xml_cleanup();
    return rc;
}
