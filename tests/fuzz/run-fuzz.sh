#!/usr/bin/env bash
# Build a libFuzzer target with ASan+UBSan and run it for a bounded time.
# Usage: run-fuzz.sh TARGET [SECONDS]   (TARGET: xml or rules; SECONDS default 60)
# Seeds: tests/fuzz/corpus/TARGET (kept in the repository) plus the XML test corpus; new inputs
# found go to a work folder under $GC3_FUZZ_WORK (default /tmp/gc3-fuzz). Crashes fail the test.
set -euo pipefail
target=$1
secs=${2:-}
[ -n "$secs" ] || secs=60
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
work=${GC3_FUZZ_WORK:-/tmp/gc3-fuzz}/$target
CLANG=${CLANG:-clang}
command -v "$CLANG" >/dev/null || { echo "run-fuzz: clang not found (apt-get install clang)"; exit 1; }
xml_cflags=$(pkg-config --cflags libxml-2.0 2>/dev/null || echo -I/usr/include/libxml2)
xml_libs=$(pkg-config --libs libxml-2.0 2>/dev/null || echo -lxml2)
mkdir -p "$work/corpus" "$work/artifacts"
g=$src/libgpuir
case $target in
xml)
    sources=("$here/fuzz_xml.c" "$g/status.c" "$g/dtype.c" "$g"/ir/*.c "$g"/analysis/*.c)
    seeds=("$here/corpus/xml" "$src/tests/corpus/valid" "$src/tests/corpus/invalid")
    ;;
rules)
    # a rule holds its program: the rules bring the generators and the compiler with them
    sources=("$here/fuzz_rules.c" "$g/status.c" "$g/dtype.c" "$g/rules.c" "$g/topo.c" "$g"/ir/*.c "$g"/analysis/*.c
             "$g"/compiler/*.c "$g"/algorithms/*.c)
    seeds=("$here/corpus/rules")
    ;;
*) echo "run-fuzz: unknown target $target"; exit 2;;
esac
"$CLANG" -g -O1 -std=gnu11 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
    -I"$g" -I"$g/ir" -I"$g/analysis" -I"$g/compiler" -I"$g/algorithms" $xml_cflags "${sources[@]}" -o "$work/fuzz_$target" $xml_libs $(pkg-config --libs hwloc 2>/dev/null || echo -lhwloc) -lm
for s in "${seeds[@]}"; do
    [ -d "$s" ] && find "$s" -maxdepth 1 -type f \( -name '*.xml' -o -name '*.rules' \) -exec cp -n {} "$work/corpus/" \; 2>/dev/null || true
    [ -d "$s" ] && find "$s" -maxdepth 1 -type f ! -name '*.*' -exec cp -n {} "$work/corpus/" \; 2>/dev/null || true
done
log=$work/fuzz.log
set +e
ASAN_OPTIONS=detect_leaks=1 "$work/fuzz_$target" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -artifact_prefix="$work/artifacts/" -print_final_stats=1 "$work/corpus" >"$log" 2>&1
rc=$?
set -e
tail -n 25 "$log"
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo 0)
crashes=$(ls "$work/artifacts" | wc -l)
echo "fuzz $target: ${secs}s, $execs executions, corpus $(ls "$work/corpus" | wc -l) inputs, $crashes crash artifacts, exit $rc"
if [ $rc -ne 0 ] || [ "$crashes" -ne 0 ]; then
    echo "fuzz $target: 0 passed, 1 failed"
    exit 1
fi
echo "fuzz $target: 1 passed, 0 failed"
