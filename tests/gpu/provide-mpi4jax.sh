#!/usr/bin/env bash
# Make mpi4jax importable by PYTHON for the gpu tests (gpu-test.sh --python ...,mpi4jax) and
# benchmarks/mpi4jax_timing.py: PYTHON's own mpi4jax when it has one built with CUDA, otherwise
# one built once from its source distribution into DEST (kept there for later runs).
#
# Usage: provide-mpi4jax.sh PYTHON DEST
# Prints the directory to put on PYTHONPATH (an empty line: none needed) and exits 0; or prints
# why mpi4jax cannot be had (one line) and exits 1. Progress goes to stderr.
# The source: $GC3_MPI4JAX_SRC (an sdist .tar.gz or an unpacked directory), else the newest
# .device/mpi4jax-*.tar.gz of the source tree. Building needs pip, setuptools (and wheel before
# setuptools 70.1), nanobind, mpi4py, jax (>= 0.6, for jax.ffi) and nvcc (CUDA_ROOT, PATH or
# /usr/local/cuda); about a minute.
#
# Example: PYTHONPATH=$(tests/gpu/provide-mpi4jax.sh python3 build/python) python3 -c 'import mpi4jax'
set -u
case "${1:-}" in -h | --help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0;; esac
[ $# -eq 2 ] || { echo "usage: provide-mpi4jax.sh PYTHON DEST (--help)" >&2; exit 2; }
py=$1
dest=$2
src=$(cd "$(dirname "$0")/../.." && pwd)
no() { echo "$*"; exit 1; }

# usable: imports, built with CUDA (GPU arrays go to MPI; without it only host arrays do)
check='import mpi4jax, sys; sys.exit(0 if mpi4jax.has_cuda_support() else 3)'
usable() { # $1: PYTHONPATH entry ("" for PYTHON's own); what went wrong in $dest/.why
    PYTHONPATH=$1${PYTHONPATH:+${1:+:}$PYTHONPATH} JAX_PLATFORMS=cpu "$py" -c "$check" 2>"$dest/.why"
}
mkdir -p "$dest" || no "mpi4jax: cannot create $dest"
if usable ""; then
    echo
    exit 0
fi

# the source
if [ -n "${GC3_MPI4JAX_SRC:-}" ]; then
    sdist=$GC3_MPI4JAX_SRC
    [ -e "$sdist" ] || no "mpi4jax: GC3_MPI4JAX_SRC=$sdist does not exist"
else
    sdist=$(ls "$src"/.device/mpi4jax-*.tar.gz 2>/dev/null | sort -V | tail -1)
    [ -n "$sdist" ] || no "mpi4jax (not importable by $py; no source to build it from: set GC3_MPI4JAX_SRC to its sdist, or put mpi4jax-*.tar.gz in $src/.device/)"
fi
name=$(basename "$sdist")
name=${name%.tar.gz}
# one build per python (its version and installation: mpi4py's MPI, jax)
tag=$("$py" -c 'import sys, zlib; print("py%d%d-%08x" % (*sys.version_info[:2], zlib.crc32(sys.prefix.encode())))' 2>/dev/null) ||
    no "mpi4jax: $py does not run"
site=$dest/$name-$tag
stamp=$site/.built-from

# built before from the same source for this python
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$sdist" ] && [ ! "$sdist" -nt "$stamp" ] && usable "$site"; then
    echo "$site"
    exit 0
fi
missing=()
for m in pip setuptools nanobind mpi4py jax; do
    "$py" -c "import $m" 2>/dev/null || missing+=("$m")
done
# pip builds a wheel: setuptools >= 70.1 has bdist_wheel, older ones need the wheel package
"$py" -c 'import setuptools.command.bdist_wheel' 2>/dev/null || "$py" -c 'import wheel' 2>/dev/null ||
    missing+=("wheel (or setuptools >= 70.1)")
[ ${#missing[@]} -eq 0 ] || no "mpi4jax: building it from $sdist needs ${missing[*]} in $py"
"$py" -c 'import jax.ffi; jax.ffi.include_dir()' 2>/dev/null ||
    no "mpi4jax: building it from $sdist needs jax.ffi (jax >= 0.6); $py has jax $("$py" -c 'import jax; print(jax.__version__)' 2>/dev/null)"

exec 9>"$dest/.lock"
command -v flock >/dev/null && flock 9 # one build at a time
rm -rf "$site" "$site.tmp"
mkdir -p "$site.tmp/src"
log=$dest/$name-$tag.build.log
if [ -d "$sdist" ]; then
    tree=$sdist
else
    tar -xzf "$sdist" -C "$site.tmp/src" 2>"$log" || no "mpi4jax: cannot unpack $sdist ($(tail -1 "$log"))"
    tree=$(ls -d "$site.tmp/src"/*/ | head -1)
fi
echo "provide-mpi4jax: building $name for $py into $site (about a minute; log $log)" >&2
start=$SECONDS
if ! "$py" -m pip install -q --no-build-isolation --no-deps --target "$site.tmp/site" "$tree" >"$log" 2>&1; then
    rm -rf "$site.tmp"
    no "mpi4jax: building it from $sdist failed ($(grep -v '^ *$' "$log" | tail -1); log $log)"
fi
mv "$site.tmp/site" "$site" && rm -rf "$site.tmp"
echo "$sdist" >"$stamp"
echo "provide-mpi4jax: built in $((SECONDS - start)) s" >&2
if ! usable "$site"; then
    [ -s "$dest/.why" ] || no "mpi4jax: built from $sdist without CUDA support (no nvcc found: set CUDA_ROOT; log $log)"
    no "mpi4jax: built from $sdist but not importable: $(tail -1 "$dest/.why")"
fi
echo "$site"
