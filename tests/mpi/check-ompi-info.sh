#!/usr/bin/env bash
# ompi_info must list coll/gc3 and show each of its MCA parameters with a help text.
# Usage: check-ompi-info.sh OMPI_INFO COMPONENT_PATH
set -u
# ompi_info reads the component path before its command line: pass it through the environment
out=$(OMPI_MCA_mca_base_component_path="$2" "$1" --param coll gc3 --level 9 2>&1)
echo "$out"
fail=0
echo "$out" | grep -q 'MCA coll: gc3' || { echo "FAIL: ompi_info does not list coll/gc3"; fail=1; }
for p in priority verbose backend timeout rules_file max_bytes max_blocks fifo_slots slot_bytes enable_allreduce enable_alltoall enable_allgather enable_reduce_scatter_block fallback algorithm_dir stage_host pseudo_nodes net_peer_errors resident_us fuse wait_default_stream shared_gpu; do
    echo "$out" | grep -q "parameter \"coll_gc3_$p\"" || { echo "FAIL: coll_gc3_$p not shown"; fail=1; }
done
# every parameter comes with a help text (the line after the parameter line is indented text)
n_params=$(echo "$out" | grep -c 'MCA coll gc3: parameter')
n_help=$(echo "$out" | grep -A1 'MCA coll gc3: parameter' | grep -cE '^ {25,}[A-Za-z]')
[ "$n_params" -gt 0 ] && [ "$n_params" = "$n_help" ] || { echo "FAIL: $n_params parameters, $n_help help texts"; fail=1; }
if [ $fail = 0 ]; then echo "ompi_info: 1 passed, 0 failed"; else echo "ompi_info: 0 passed, 1 failed"; fi
exit $fail
