#!/usr/bin/env bash
# make install puts every tool and script the README's commands use into bindir, and the installed
# gc3-mpirun points at the installed component, not at the build tree. Installs into a temporary
# prefix (configure's prefix unchanged: DESTDIR), so nothing outside it is touched.
# Usage: test_install.sh BUILD_DIR
set -u
b=$1
d=$(mktemp -d)
trap 'rm -rf "$d"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
make -C "$b" install DESTDIR="$d" >"$d.log" 2>&1 || { tail -20 "$d.log"; bad "make install failed"; }
rm -f "$d.log"
bindir=$(make -s -C "$b" print-bindir 2>/dev/null)
compdir=$(make -s -C "$b" print-componentdir)
[ -n "$bindir" ] || bad "make print-bindir says nothing"
for t in gc3c gc3_info gc3_bench gc3_rt_bench gc3-mpirun gc3-autotune; do
    if [ -x "$d$bindir/$t" ]; then ok; else bad "$t not installed in $bindir"; fi
done
[ -f "$d$compdir/mca_coll_gc3.so" ] && ok || bad "the component not installed in $compdir"
m="$d$bindir/gc3-mpirun"
if grep -q "^comp_dir=\${GC3_COMPONENT_DIR:-$compdir}$" "$m"; then ok; else bad "installed gc3-mpirun does not use $compdir: $(grep '^comp_dir=' "$m")"; fi
if grep -q "$(cd "$b" && pwd)" "$m"; then bad "installed gc3-mpirun names the build tree"; else ok; fi
# the installed scripts and tools answer --help (gc3-autotune finds its tools beside itself)
"$d$bindir/gc3-autotune" --help | grep -q "gc3-autotune: measure" && ok || bad "gc3-autotune --help"
"$d$bindir/gc3_rt_bench" --help 2>&1 | grep -q "usage: gc3_rt_bench" && ok || bad "gc3_rt_bench --help"
"$d$bindir/gc3c" help | grep -q "usage: gc3c" && ok || bad "gc3c help"
echo "install: $pass passed, $fail failed"
[ $fail = 0 ]
