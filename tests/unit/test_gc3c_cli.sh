#!/usr/bin/env bash
# gc3c's command line: exit codes, messages, and the reference executor / simulator on the corpus.
# Usage: test_gc3c_cli.sh GC3C CORPUS_DIR
set -u
gc3c=$1
c=$2
pass=0
fail=0
check() { # check NAME EXPECTED_RC EXPECTED_TEXT -- command...
    local name=$1 want_rc=$2 want=$3
    shift 4
    local out rc
    out=$("$@" 2>&1)
    rc=$?
    if [ "$rc" = "$want_rc" ] && [[ "$out" == *"$want"* ]]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL $name: exit $rc (want $want_rc), output:"
        echo "$out" | head -20
        echo "(wanted text: $want)"
    fi
}
check help 0 "usage: gc3c COMMAND" -- "$gc3c" help
check no-args 2 "usage: gc3c" -- "$gc3c"
check unknown-cmd 2 "unknown command 'frobnicate'" -- "$gc3c" frobnicate
check verify-no-file 2 "no FILE given" -- "$gc3c" verify
check verify-bad-slots 2 "--slots needs an integer" -- "$gc3c" verify --slots 0 "$c/valid/ring_allreduce_4.xml"
check verify-missing-file 1 "cannot open" -- "$gc3c" verify /nonexistent.xml
check verify-ok 0 "verified out-of-place in-place" -- "$gc3c" verify "$c/valid/ring_allreduce_4.xml"
check verify-mixed 1 "FAILED" -- "$gc3c" verify "$c/valid/ring_allreduce_4.xml" "$c/invalid/wrong_peer.xml"
check run-ring 0 "results verified" -- "$gc3c" run --dtype float64 --op max --count 4096 "$c/valid/ring_allreduce_4.xml"
check run-ring-inplace 0 "in-place: results verified" -- "$gc3c" run --inplace --dtype int32 --count 400 "$c/valid/ring_allreduce_4.xml"
check run-alltoall 0 "results verified" -- "$gc3c" run --dtype int64 --count 1000 "$c/valid/direct_alltoall_4.xml"
check run-custom 0 "results verified" -- "$gc3c" run --post "$c/valid/alltonext_4.post" --count 99 "$c/valid/alltonext_4.xml"
check run-remainder 1 "does not split into 4 chunks" -- "$gc3c" run --count 1001 "$c/valid/ring_allreduce_4.xml"
check run-bad-op 2 "bxor is not defined on float32" -- "$gc3c" run --op bxor "$c/valid/ring_allreduce_4.xml"
check run-deadlock 1 "wait-for cycle" -- "$gc3c" run "$c/invalid/order_deadlock.xml"
check show 0 "tb 0: send 1 recv 3 chan 0, 7 steps" -- "$gc3c" show "$c/valid/ring_allreduce_4.xml"
check simulate 0 "1073741824" -- "$gc3c" simulate --sizes 1K:1G "$c/valid/ring_allreduce_4.xml"
# its times have their unit: the column of each program, and a line saying what they are
check simulate-unit 0 "ring_allreduce_4.xml (us)   algbw (GB/s)" -- "$gc3c" simulate --sizes 1K:4K "$c/valid/ring_allreduce_4.xml"
check simulate-unit-line 0 "# predicted time per call in us (microseconds); best: the fastest" -- \
    "$gc3c" simulate --sizes 1K:4K --algo ring,allpairs --gpus 4
check simulate-algo-unit 0 "ring (us)  allpairs (us)" -- "$gc3c" simulate --sizes 1K:4K --algo ring,allpairs --gpus 4
# run's default count: 1024 elements per chunk (the README's example: a 4-chunk ring, count 4096)
check run-default-count 0 "float32 sum, count 4096 (1024 elements/chunk), out-of-place: results verified" -- \
    "$gc3c" run "$c/valid/ring_allreduce_4.xml"
check run-one-element 0 "count 4 (1 element/chunk)" -- "$gc3c" run --count 4 "$c/valid/ring_allreduce_4.xml"
# gc3_info's table shows what runs: a proto=LL128 rule as Simple, the rule's protocol in brackets
check info-ll128-table 0 "allpairs proto=Simple (LL128 in the rule)" -- "$(dirname "$gc3c")/gc3_info" --gpus 3 \
    --rules "$c/../mpi/rules/ll128.rules"
check simulate-nodes 0 "on 2 nodes x 2 GPUs" -- "$gc3c" simulate --nodes 2 --gpus 2 --net 200Gb/s "$c/valid/ring_allreduce_4.xml"
check simulate-bad-bw 2 "bad value 'fast' for --nvlink" -- "$gc3c" simulate --nvlink fast "$c/valid/ring_allreduce_4.xml"
check list 0 "hierarchical" -- "$gc3c" list
check gen-ring 0 'coll="allreduce"' -- "$gc3c" gen ring --ranks 4
check gen-stats 0 "s=4 r=4 rcs=8 rrs=8 rrcs=4; verified" -- "$gc3c" gen ring --ranks 4 --stats -o /dev/null
check gen-hier 0 "verified" -- "$gc3c" gen hierarchical --ranks 8 --nodes 2 --instances 2 --proto LL --stats -o /dev/null
check gen-bad-shape 2 "--ranks 8 does not split into 3 nodes of equal size" -- "$gc3c" gen hierarchical --ranks 8 --nodes 3
check gen-unknown 2 "unknown algorithm 'tree'" -- "$gc3c" gen tree --ranks 4
check gen-no-ranks 2 "--ranks R (at least 2) is required" -- "$gc3c" gen ring
check gen-bad-proto 2 "--proto must be Simple, LL or LL128" -- "$gc3c" gen ring --ranks 4 --proto fast
# rooted collectives (bcast, reduce): --root, the program's root in the file, run on it, refusals
gtmp=$(mktemp -d)
check gen-bcast-root 0 'coll="bcast" inplace="0" outofplace="1" root="2"' -- "$gc3c" gen bcast_ring --ranks 4 --root 2 --channels 2
check gen-bcast-file 0 "" -- "$gc3c" gen bcast_ring --ranks 4 --root 2 --inplace -o "$gtmp/bcast4.xml"
check run-bcast-inplace 0 "bcast 'bcast_ring4_root2' on 4 ranks, int32, count 1600 (400 elements/chunk), in-place: results verified" -- \
    "$gc3c" run --inplace --dtype int32 --count 1600 "$gtmp/bcast4.xml"
check run-bcast-copied 0 "out-of-place (input copied into place first): results verified" -- "$gc3c" run "$gtmp/bcast4.xml"
check gen-reduce-file 0 "" -- "$gc3c" gen reduce_direct --ranks 3 --root 1 --proto LL -o "$gtmp/reduce3.xml"
check run-reduce 0 "reduce 'reduce_direct3_root1' on 3 ranks, float64 max, count 77" -- \
    "$gc3c" run --dtype float64 --op max --count 77 "$gtmp/reduce3.xml"
check verify-reduce 0 "verified out-of-place" -- "$gc3c" verify "$gtmp/reduce3.xml"
check gen-one-rank 0 'ngpus="1" coll="reduce"' -- "$gc3c" gen reduce_ring --ranks 1
check gen-root-range 1 "bcast_ring: root 4 is not a rank of 4 (0 to 3)" -- "$gc3c" gen bcast_ring --ranks 4 --root 4
check gen-root-bad 2 "--root needs a rank, an integer from 0 (got 'x')" -- "$gc3c" gen bcast_ring --ranks 4 --root x
check gen-root-unrooted 2 "--root is for the rooted collectives' algorithms (bcast, reduce, gather, scatter), not ring (allreduce)" -- \
    "$gc3c" gen ring --ranks 4 --root 1
check simulate-root 0 "bcast_direct (us)" -- "$gc3c" simulate --algo bcast_direct,bcast_ring --gpus 4 --root 3 --sizes 1K:4K
sed 's/ root="1"//' "$gtmp/reduce3.xml" > "$gtmp/noroot.xml"
check verify-no-root 1 "is a rooted collective: it needs root=\"R\"" -- "$gc3c" verify "$gtmp/noroot.xml"
rm -rf "$gtmp"
# --max-blocks: the component's narrowing (instances halved, then channels), told on stderr
check gen-fit-narrowed 0 "allreduce_ring4: narrowed from 16 x 4 to 16 x 2 (channels x instances) to fit 33 thread blocks per rank" -- \
    "$gc3c" gen ring --ranks 4 --channels 16 --instances 4 --max-blocks 33 -o /dev/null
check gen-fit-stats 0 "128 thread blocks; s=" -- "$gc3c" gen allpairs --ranks 4 --instances 16 --max-blocks 33 --stats -o /dev/null
check gen-fit-as-is 0 "allreduce_oneshot4: 1 x 8 (channels x instances) fits 33 thread blocks per rank" -- \
    "$gc3c" gen oneshot --ranks 4 --proto LL --instances 8 --max-blocks 33 -o /dev/null
check gen-fit-none 1 "4 thread blocks per rank at its narrowest (4 as asked), at most 3 can run at once" -- \
    "$gc3c" gen direct --ranks 4 --max-blocks 3 -o /dev/null
check gen-fit-bad 2 "--max-blocks needs a positive integer" -- "$gc3c" gen ring --ranks 4 --max-blocks 0
check gen-inplace-custom 1 "alltonext: only out of place" -- "$gc3c" gen alltonext --ranks 4 --nodes 2 --inplace
# every command answers --help with its usage, exit 0 (and so do the benchmarks and scripts)
for cmd in verify run show simulate list gen; do
    check "$cmd-help" 0 "  $cmd" -- "$gc3c" "$cmd" --help
done
check gen-help-after-args 0 "--msccl-inplace" -- "$gc3c" gen ring --ranks 4 --help
bdir=$(dirname "$gc3c")/benchmarks
check bench-help 0 "usage: gc3_bench" -- "$bdir/gc3_bench" --help
check rt-bench-help 0 "usage: gc3_rt_bench" -- "$bdir/gc3_rt_bench" --help
check gen-msccl-custom 2 "MSCCL's in-place form is for allreduce" -- "$gc3c" gen alltonext --ranks 4 --msccl-inplace
check gen-bad-min 2 "--min-bytes needs a size" -- "$gc3c" gen ring --ranks 4 --min-bytes lots
# MSCCL's in-place corpus: shown in its form, run out of place by copying first, the copy simulated
m=$c/msccl
check show-msccl 0 "(MSCCL's in-place form: o_chunks=0 in the file, output chunk c is input chunk c)" -- \
    "$gc3c" show "$m/allreduce-allpairs-4n-ll-48tb.xml"
check run-msccl-oop 0 "out-of-place (input copied into place first): results verified" -- \
    "$gc3c" run --dtype int64 --op bxor --count 512 "$m/allreduce-allpairs-4n-ll-48tb.xml"
check run-msccl-ip 0 "in-place: results verified" -- "$gc3c" run --inplace --count 64 "$m/allgather-ring-8n-inplace.xml"
check run-msccl-rs 0 "out-of-place (input copied into place first): results verified" -- \
    "$gc3c" run --dtype float64 --op min --count 8 "$m/reducescatter-ring-8n-inplace.xml"
check verify-ll128 0 "LL128 (runs as Simple: gc3 has no LL128)" -- "$gc3c" verify "$m/allreduce-allpairs-8n-ll128-56tb.xml"
check simulate-copy 0 "in place (us) out of place (us)" -- "$gc3c" simulate --sizes 1K:4K "$m/allreduce-allpairs-8n-ll-35tb.xml"
tmp=$(mktemp -d)
"$gc3c" gen direct --ranks 5 --chunks-per-peer 2 -o "$tmp/a2a.xml" >/dev/null 2>&1
check gen-then-run 0 "results verified" -- "$gc3c" run --dtype int32 --count 6 "$tmp/a2a.xml"
check gen-then-verify 0 "OK" -- "$gc3c" verify "$tmp/a2a.xml"
# a custom collective generated by gc3c carries its postcondition: verify and run need no --post
"$gc3c" gen alltonext --ranks 8 -o "$tmp/a.xml" >/dev/null 2>&1
check gen-custom-verify 0 "OK (alltonext 'alltonext8', 8 ranks" -- "$gc3c" verify "$tmp/a.xml"
check gen-custom-run 0 "results verified" -- "$gc3c" run --count 80 "$tmp/a.xml"
# what the reader does not use is a warning with its line (the program still verifies)
cat > "$tmp/extras.xml" <<'XML'
<algo name="x" nchunksperloop="2" ngpus="2" coll="allreduce" inplace="0" nthreads="512">
  <gpu id="0" i_chunks="2" o_chunks="2">
    <tb id="0" send="1" recv="1" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="1" cnt="1"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="0" dstbuf="o" dstoff="0" cnt="1" fused="yes"/>
      <step s="2" type="s" srcbuf="o" srcoff="0" cnt="1"/>
      <step s="3" type="r" dstbuf="o" dstoff="1" cnt="1"/>
    </tb>
  </gpu>
  <gpu id="1" i_chunks="2" o_chunks="2">
    <tb id="0" send="0" recv="0" chan="0">
      <step s="0" type="s" srcbuf="i" srcoff="0" cnt="1"/>
      <step s="1" type="rrc" srcbuf="i" srcoff="1" dstbuf="o" dstoff="1" cnt="1" fused="no"/>
      <step s="2" type="s" srcbuf="o" srcoff="1" cnt="1" fused="no"/>
      <step s="3" type="r" dstbuf="o" dstoff="0" cnt="1"/>
    </tb>
  </gpu>
  <layout kind="nvls"/>
</algo>
XML
check verify-warn-algo 0 "extras.xml:1: warning: <algo nthreads=\"512\">: an attribute gc3 does not know" -- \
    "$gc3c" verify "$tmp/extras.xml"
check verify-warn-step 0 "extras.xml:5: warning: <step fused=\"yes\">: an attribute gc3 does not know" -- \
    "$gc3c" verify "$tmp/extras.xml"
check verify-warn-more 0 "extras.xml: warning: attribute fused of <step> appears 2 more times (not used)" -- \
    "$gc3c" verify "$tmp/extras.xml"
check verify-warn-elem 0 "extras.xml:18: warning: unknown element <layout> inside <algo> ignored" -- \
    "$gc3c" verify "$tmp/extras.xml"
rm -rf "$tmp"
# (a ring of one block per rank moves what one block can, 17 GB/s busbw measured on 4 x H200: with 8
# channels it overtakes all-pairs)
check simulate-algos 0 "crossover: allpairs -> ring" -- "$gc3c" simulate --algo ring,allpairs --gpus 8 --channels 8 \
    --sizes 1K:64M
check simulate-algo-needs-gpus 2 "--algo needs --gpus G" -- "$gc3c" simulate --algo ring
info=$(dirname "$gc3c")/gc3_info
check info-builtin 0 "allreduce              8388609-inf      ring channels=8 instances=4" -- "$info" --gpus 2
check info-builtin-copy 0 "allreduce              2097153-8M       ring channels=8 instances=4 zero_copy=off" -- "$info" --gpus 2
check info-builtin-mid 0 "allreduce              131073-4M        ring channels=2" -- "$info" --gpus 3
check info-builtin-4 0 "allreduce              0-128K           oneshot proto=LL instances=8   built-in:15" -- "$info" --gpus 4
# the host backend: the rings at every size for allreduce, bcast and reduce (issue 56: LL up to 64 KB was
# 2.6-11.7x slower there), the pcie lines keep LL below 64 KB
check info-host 0 "allreduce              0-inf            ring                           built-in:45" -- "$info" --link host
check info-host-bcast 0 "bcast                  0-inf            bcast_ring                     built-in:75" -- "$info" --link host
check info-host-reduce 0 "reduce                 0-inf            reduce_ring                    built-in:81" -- "$info" --link host
check info-pcie-small 0 "allreduce              0-64K            allpairs proto=LL              built-in:41" -- "$info" --link pcie
check info-pcie-bcast 0 "bcast                  0-64K            bcast_direct proto=LL          built-in:71" -- "$info" --link pcie
# the multi-node table behind the built-in rules: hierarchical allreduce ahead of the ring at 2 nodes
pred="$(dirname "$0")/../../contrib/gc3-predict-nodes"
check predict-nodes 0 "| 1K | 96.7 | **94.9** | 148.7 | 151.8 |" -- "$pred" --gc3c "$gc3c" --sizes 1K:4K 2
check predict-nodes-usage 2 "gc3c not found" -- "$pred" --gc3c /nonexistent 2
check info-two-nodes 0 "allreduce              0-512K           hierarchical proto=LL          built-in:32" -- "$info" --nodes 2
check info-print 0 "allreduce             1  *  nvlink  0-128K   allpairs" -- "$info" --print-builtin
check info-algodir 0 "1K-1M            alltoall_direct3" -- "$info" --gpus 3 --algorithm-dir "$c/../mpi/algorithms"
check info-algodir-inplace 0 "allreduce              0-128K           allpairs" -- "$info" --gpus 3 --inplace --algorithm-dir "$c/../mpi/algorithms"
check info-algodir-missing 1 "cannot open the algorithm directory" -- "$info" --algorithm-dir /nonexistent/dir
check info-help-devices 0 "--devices: the GPUs this process sees" -- "$info" --help
check info-bad-link 2 "--link must be nvlink, pcie or host" -- "$info" --link copper
check info-missing 1 "cannot open" -- "$info" --rules /nonexistent.rules
# careless input of a new user (issue 31): each gets a clear answer, before anything happens
# run: the memory a run needs, estimated first; more than the machine has is refused, not OOM-killed
check run-too-big 2 "count 17179869184 needs about 1024.0 GiB of host memory (4 ranks' input, output, expected output and messages)" -- \
    "$gc3c" run --count 16G "$c/valid/ring_allreduce_4.xml"
check run-too-big-how 2 "not run (a smaller --count, or --force to run anyway)" -- \
    "$gc3c" run --count 16G "$c/valid/ring_allreduce_4.xml"
check run-help-force 0 "--force runs anyway" -- "$gc3c" run --help
# alltoall moves data: no op in its summary
check run-alltoall-no-op 0 "int64, count 1000" -- "$gc3c" run --dtype int64 --count 1000 "$c/valid/direct_alltoall_4.xml"
check run-allreduce-op 0 "float64 max, count 4096" -- "$gc3c" run --dtype float64 --op max --count 4096 "$c/valid/ring_allreduce_4.xml"
# simulate takes gen's --ranks too (and says one node, not "1 nodes")
check simulate-ranks 0 "# allreduce on 1 node x 4 GPUs" -- "$gc3c" simulate --algo ring --ranks 4 --sizes 1K:4K
check simulate-ranks-nodes 0 "# allreduce on 2 nodes x 4 GPUs" -- \
    "$gc3c" simulate --algo hierarchical --ranks 8 --nodes 2 --sizes 1K:4K
check simulate-ranks-bad 2 "--ranks 5 is not 2 node(s) x the same number of GPUs" -- \
    "$gc3c" simulate --algo ring --ranks 5 --nodes 2
check simulate-help-ranks 0 "--ranks R (gen's option) is the same as --gpus R/N" -- "$gc3c" simulate --help
# LL128: written (MSCCL has it) and said to run as Simple, as the component and the rules say
check gen-ll128 0 "gc3c gen: warning: proto=LL128 is written for MSCCL; gc3 has no LL128 and runs this program as Simple" -- \
    "$gc3c" gen ring --ranks 4 --proto LL128 -o /dev/null
rtmp=$(mktemp -d)
printf 'allreduce 1 * * 0-1M ring\nallreduce * * * * superfast\n' > "$rtmp/unknown.rules"
check info-unknown-algo 1 "unknown.rules:2: unknown algorithm 'superfast' (gc3c list names them)" -- \
    "$info" --rules "$rtmp/unknown.rules"
printf 'alltoall * * * * ring\n' > "$rtmp/wrong.rules"
check info-wrong-coll 1 "wrong.rules:1: algorithm 'ring' is for allreduce, not alltoall" -- "$info" --rules "$rtmp/wrong.rules"
printf 'allreduce * * * * ring proto=LL128\n' > "$rtmp/ll128.rules"
check info-ll128 0 "ll128.rules:1: proto=LL128: gc3 has no LL128, the rule runs as proto=Simple" -- \
    "$info" --rules "$rtmp/ll128.rules"
rm -rf "$rtmp"
# --memory: a communicator's plans for the issue-33 use on 2 GPUs, with the defaults (Simple plans' slots
# in one pool, coll_gc3_fifo_pool: the largest, counted once; 4 slots, 32 MiB per plan, 12 MiB for plans
# that run zero-copy; 2 slots for plans of one message a connection and call), each with its own FIFOs
# (--no-fifo-pool), and with the old defaults (8 slots, 64 MiB, no pool); 4 MB and 64 MB are two plans
# (the rules copy 4 MB, leave 64 MB in place: its FIFOs are capped at 12 MiB, the 4 MB ring's 16 MiB are
# the pool); these rows are matched from the FIFOs column on: the total column counts the CUDA backend's
# control memory, which a build without CUDA does not have
use=allreduce:8,allreduce:64K,allreduce:4M,allreduce:64M,alltoall:1M
check info-memory-pool 0 "# FIFO pool: 16.0 MiB, the largest slots of the 4 plan(s) that share it" -- \
    "$info" --gpus 2 --memory "$use"
check info-memory-slots 0 " 1.0 KiB+pool 4.0 MiB (8 x 2 x 256.0 KiB)" -- \
    "$info" --gpus 2 --memory "$use"
check info-memory-zc 0 "KiB  4.0 KiB+pool 12.0 MiB (32 x 4 x 95.9 KiB)" -- \
    "$info" --gpus 2 --memory "$use"
check info-memory-zc-off 0 "KiB  4.0 KiB+pool 32.0 MiB (32 x 4 x 255.9 KiB)" -- \
    "$info" --gpus 2 --memory "$use" --zero-copy off
check info-memory-zc-bad 2 "gc3_info: --zero-copy must be on or off" -- "$info" --gpus 2 --memory "$use" --zero-copy maybe
# MPI's calls with per-rank counts: on their plain collective's plan (the same plan: the line after says so)
check info-memory-vcall 0 "alltoall:1M               (the plan above" -- "$info" --gpus 4 --memory alltoallv:1M,alltoall:1M
check info-memory-vcall-bad 2 "'alltoallw' is not COLLECTIVE:BYTES" -- "$info" --gpus 4 --memory alltoallw:1M
check simulate-vcall 0 "# alltoallv (on alltoall's plans, every rank's segments of the size below)" -- \
    "$gc3c" simulate --coll alltoallv --gpus 4 --sizes 1M:1M
check simulate-vcall-nozc 0 "zero-copy off" -- "$gc3c" simulate --coll gatherv --gpus 4 --sizes 1M:1M
# (the totals count the CUDA backend's control and pinned memory: a build without CUDA has none; since
# the 2-rank oneshot lost its local blocks, its plan needs no scratch or staging out of place; the push
# form added a step's destination at its receiver (8 B a step) and the resident kernel's push table, 1 KiB
# of pinned memory per plan; the legacy stream's word of coll_gc3_wait_default_stream device, a 128-byte
# line of control memory per plan). Issue 43's target: its use (allreduce 8 B, 64 KB, 64 MB; alltoall
# 1 KB-1 MB per peer) within 16 MiB per rank on 2 and 4 GPUs (32.5 and 38.0 MiB before).
u43=allreduce:8,allreduce:64K,allreduce:64M,alltoall:1K,alltoall:64K,alltoall:1M
if grep -q '^#define GC3_HAVE_CUDA 1' "$(dirname "$gc3c")/config.h" 2>/dev/null; then
check info-memory-pool-total 0 "# total per rank: 16.3 MiB device (17093056 B exactly), 7.5 KiB pinned host, 5 plan(s)" -- \
    "$info" --gpus 2 --memory "$use" --fifo-pool
check info-memory 0 "# total per rank: 36.3 MiB device (38085056 B exactly), 7.5 KiB pinned host, 5 plan(s)" -- \
    "$info" --gpus 2 --memory "$use" --no-fifo-pool
check info-memory-old 0 "# total per rank: 56.4 MiB device (59105728 B exactly), 7.5 KiB pinned host, 5 plan(s)" -- \
    "$info" --gpus 2 --memory "$use" --no-fifo-pool --fifo-slots 8 --plan-fifo-bytes 64M
check info-memory-43-2 0 "# total per rank: 12.3 MiB device (12905440 B exactly), 7.5 KiB pinned host, 5 plan(s)" -- \
    "$info" --gpus 2 --memory "$u43"
check info-memory-43-4 0 "# total per rank: 15.3 MiB device (16013248 B exactly), 7.5 KiB pinned host, 5 plan(s)" -- \
    "$info" --gpus 4 --memory "$u43"
else
    echo "info-memory totals: not checked (this build has no CUDA backend, whose control and pinned memory they count)"
fi
# the cost model's view of what gc3 runs (the rules, the runtime's call), its parameters, and a CSV
check simulate-params 0 "intra_bw_GBps" -- "$gc3c" simulate --params
check simulate-param-set 0 "         5  us      the host's part" -- "$gc3c" simulate --params --param host_us=5
check simulate-param-add 0 "       2.2  us      the last block's count-in" -- "$gc3c" simulate --params --param end_us=+1
check simulate-param-unknown 2 "no parameter named 'nope=1'" -- "$gc3c" simulate --params --param nope=1
check simulate-param-bad 2 "bad value in 'step_us=fast'" -- "$gc3c" simulate --params --param step_us=fast
check simulate-param-file 0 "ring_allreduce_4.xml (us)" -- "$gc3c" simulate --sizes 1K:4K --param step_us=1 \
    "$c/valid/ring_allreduce_4.xml"
check simulate-coll 0 "oneshot LL 1x8 (built-in:" -- "$gc3c" simulate --coll allreduce --gpus 4 --sizes 8:8
check simulate-coll-zc 0 "zc mode" -- "$gc3c" simulate --coll allreduce --gpus 4 --sizes 32M:32M
check simulate-coll-fifo 0 "fifo" -- "$gc3c" simulate --coll allreduce --gpus 4 --sizes 32M:32M --zero-copy off
# (from 128 MB on 4 GPUs the built-in rules leave the ring in place: zc mode, launched: 128 blocks are too many to stay resident)
check simulate-coll-launched 0 "zc mode,launched" -- "$gc3c" simulate --coll allreduce --gpus 4 --sizes 256M:256M
check simulate-coll-rule 0 "ring Simple 2x1 (--rule lines" -- "$gc3c" simulate --coll allreduce --gpus 4 --sizes 1M:1M \
    --rule "allreduce 1 4 nvlink * ring channels=2"
check simulate-coll-needs-gpus 2 "--coll needs a collective" -- "$gc3c" simulate --coll allreduce
check simulate-coll-bad 2 "--coll needs a collective" -- "$gc3c" simulate --coll frobnicate --gpus 4
check simulate-coll-bad-opt 2 "is not an option with --coll" -- "$gc3c" simulate --coll allreduce --gpus 4 --nvlink 1GB/s
t=$(mktemp)
printf 'collective,ranks,bytes,method,latency_us,algbw_GBps,busbw_GBps,valid\n' > "$t"
printf 'alltoall,4,1024,gc3,12.0,0,0,yes\nalltoall,4,1024,nccl,20.0,0,0,yes\nalltoall,4,2048,gc3,1000.0,0,0,yes\n' >> "$t"
check simulate-measured 0 "# max |error|" -- "$gc3c" simulate --measured "$t"
check simulate-measured-coll 0 "# alltoall on 1 node x 4 GPUs" -- "$gc3c" simulate --measured "$t"
check simulate-measured-tol 1 "EXCEEDED" -- "$gc3c" simulate --measured "$t" --tolerance 15
check simulate-measured-excl 0 "(excluded)" -- "$gc3c" simulate --measured "$t" --exclude 2048 --tolerance 15
check simulate-measured-method 0 "20.00" -- "$gc3c" simulate --measured "$t" --method nccl
check simulate-measured-none 1 "has no rows of method staged" -- "$gc3c" simulate --measured "$t" --method staged
check simulate-measured-missing 1 "cannot open" -- "$gc3c" simulate --measured /nonexistent.csv
rm -f "$t"
echo "gc3c cli: $pass passed, $fail failed"
[ $fail = 0 ]
