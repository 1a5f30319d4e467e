#!/usr/bin/env bash
# Regenerates the in-place corpus with gc3c, in MSCCL's in-place form (what msccl-tools writes for
# in-place programs: allreduce and reduce-scatter with o_chunks="0", allgather with i_chunks="0",
# nop steps with cnt="0" for extra dependencies), in the shapes of the programs published for
# MSCCL/RCCL: all-pairs allreduce (2 ranks too, for one GPU shared by two ranks) of R*K*instances chunks per loop and (R-1)*instances thread blocks
# per rank (LL, LL128, Simple), ring allgather and reduce-scatter. minBytes/maxBytes split the sizes
# between the files of one collective and rank count, as MSCCL's algorithm directories do.
# Usage: make-corpus.sh GC3C   (writes the files beside this script)
set -euo pipefail
gc3c=$1
d=$(cd "$(dirname "$0")" && pwd)
gen() { # gen FILE ALGO ARGS...
    local f=$1
    shift
    "$gc3c" gen "$@" --msccl-inplace -o "$d/$f"
}
gen allreduce-allpairs-2n-ll-32tb.xml      allpairs --ranks 2  --chunks-per-peer 8 --instances 32 --proto LL    --max-bytes 64K
gen allreduce-allpairs-2n-simple-32tb.xml  allpairs --ranks 2  --chunks-per-peer 8 --instances 32 --proto Simple --min-bytes 65537
gen allreduce-allpairs-4n-ll-48tb.xml      allpairs --ranks 4  --chunks-per-peer 4 --instances 16 --proto LL    --max-bytes 8K
gen allreduce-allpairs-4n-simple-48tb.xml  allpairs --ranks 4  --chunks-per-peer 8 --instances 16 --proto Simple --min-bytes 8193
gen allreduce-allpairs-8n-ll-35tb.xml      allpairs --ranks 8  --chunks-per-peer 8 --instances 5  --proto LL    --max-bytes 4K
gen allreduce-allpairs-8n-ll128-56tb.xml   allpairs --ranks 8  --chunks-per-peer 4 --instances 8  --proto LL128 --min-bytes 4097 --max-bytes 64K
gen allreduce-allpairs-8n-simple-56tb.xml  allpairs --ranks 8  --chunks-per-peer 8 --instances 8  --proto Simple --min-bytes 65537
gen allreduce-allpairs-16n-ll-60tb.xml     allpairs --ranks 16 --chunks-per-peer 4 --instances 4  --proto LL    --max-bytes 64K
gen allreduce-allpairs-16n-simple-60tb.xml allpairs --ranks 16 --chunks-per-peer 4 --instances 4  --proto Simple --min-bytes 65537
gen allgather-ring-4n-inplace.xml          allgather_ring --ranks 4 --instances 4
gen allgather-ring-8n-inplace.xml          allgather_ring --ranks 8 --instances 4 --proto LL
gen reducescatter-ring-4n-inplace.xml      reduce_scatter_ring --ranks 4 --instances 4
gen reducescatter-ring-8n-inplace.xml      reduce_scatter_ring --ranks 8 --instances 4 --proto LL
# RCCL spells the collective reducescatter, and some tools write maxcount and nthreadblocks
sed -i -e 's/coll="reduce_scatter"/coll="reducescatter"/' "$d/reducescatter-ring-8n-inplace.xml"
sed -i -e 's/ minBytes=/ maxcount="4" nthreadblocks="56" minBytes=/' "$d/allreduce-allpairs-8n-ll128-56tb.xml"
