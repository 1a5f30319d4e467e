#!/usr/bin/env bash
# Build Open MPI 5.0.x with its development headers, for building and testing gc3 against 5.0;
# with --cuda, a CUDA-aware one (built with CUDA and a UCX of the caller's choosing).
#
#     contrib/ompi5-build.sh              # prints the install prefix on its last line
#     contrib/ompi5-build.sh --cuda       # the CUDA-aware build (below), in a prefix of its own
#     contrib/ompi5-build.sh --pack FILE  # also writes the cached build to FILE (.tar.xz), to carry
#                                         # to a machine without network (GC3_OMPI5_ARCHIVE there)
#     contrib/ompi5-build.sh --help
#
# The build is cached: PREFIX = $GC3_OMPI5_CACHE/openmpi-VERSION (--cuda: openmpi-VERSION-cuda)
# holds the installation (without its HTML docs and man pages) and PREFIX/source the headers of
# the release's source tree, which gc3's configure needs for those a 5.0 installation lacks
# (--with-ompi-source=PREFIX/source).
# A complete cached build is reused as it is; nothing is downloaded then.
#
# A packed build ($GC3_OMPI5_ARCHIVE) is unpacked into the cache instead; it holds absolute paths,
# so the cache folder must be the one it was built in (the script checks).
#
# Sources: $GC3_OMPI5_TARBALL (an upstream openmpi-VERSION.tar.{gz,bz2,xz} or Debian's
# openmpi_VERSION.orig.tar.xz) when set; otherwise Debian's source package (5.0.x: trixie's,
# 4.1.x: bookworm's), fetched with apt-get through a private sources list (the machine's own
# Debian mirror, its own apt configuration untouched) and kept in the cache. No sources: the
# script fails, saying why. On a machine without network (the GPU machine) give the tarball:
#     GC3_OMPI5_TARBALL=/var/cache/gc3/openmpi_5.0.7.orig.tar.xz contrib/ompi5-build.sh --cuda
#
# --cuda: Open MPI configured --with-cuda=$GC3_OMPI5_CUDA --with-ucx=$GC3_OMPI5_UCX, as GPU
# clusters build it (CUDA-aware: MPIX_Query_cuda_support() returns 1 in a process that sees a
# GPU; device buffers move through UCX's CUDA transports, cuda_copy and cuda_ipc). The UCX must
# be built with CUDA for device buffers to work (its lib/ucx/libuct_cuda.so); the script says
# whether it is. Its lib goes into the installation's run path, so Open MPI's processes load that
# UCX and not a system one. Without GC3_OMPI5_UCX or GC3_UCX_CUDA, configure takes the system's
# UCX (the script says so: Debian's libucx0 has no CUDA transports, so such a build configures
# and links but is not CUDA-aware for point-to-point on device buffers; good only to check the
# build). gc3 against it: contrib/ci-ompi5.sh --cuda (a CUDA build of gc3 in ./build-ompi5-cuda).
#
# 4.1.x: GC3_OMPI5_VERSION=4.1.N builds that release the same way (with or without --cuda;
# Open MPI 4.1 takes the same --with-cuda and --with-ucx options; its runtime is ORTE, so there is
# no --with-prrte), from GC3_OMPI5_TARBALL or bookworm's source package.
#
# Environment:
#   GC3_OMPI5_VERSION  the release (default 5.0.7, the one Debian trixie ships; 4.1.x too)
#   GC3_OMPI5_CACHE    where builds are kept (default /var/cache/gc3 when writable, else ~/.cache/gc3)
#   GC3_OMPI5_TARBALL  a source tarball of that release (no download)
#   GC3_OMPI5_ARCHIVE  a build packed with --pack (no build)
#   GC3_OMPI5_JOBS     make -j (default: the number of CPUs)
#   GC3_OMPI5_CUDA     --cuda: the CUDA toolkit (default $CUDA_HOME, else the one of nvcc on
#                      PATH, else /usr/local/cuda)
#   GC3_OMPI5_UCX      --cuda: the prefix of a UCX built with CUDA (default $GC3_UCX_CUDA; neither
#                      set: the system's UCX, see above)
#   GC3_OMPI5_CONFIGURE_ONLY  1: stop after Open MPI's configure (a check of the options; nothing
#                      is installed or cached)
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
pack=""
cuda=0
while [ $# -gt 0 ]; do
    case "$1" in
    -h|--help) usage; exit 0;;
    --pack) [ $# -ge 2 ] || { echo "ompi5-build: --pack FILE" >&2; exit 2; }; pack=$(realpath -m -- "$2"); shift;; # (the packing runs in the build folder, which the exit trap removes)
    --cuda) cuda=1;;
    *) echo "ompi5-build: unknown argument '$1' (see --help)" >&2; exit 2;;
    esac
    shift
done

die() { echo "ompi5-build: error: $*" >&2; exit 1; }
say() { echo "ompi5-build: $*" >&2; }

version=${GC3_OMPI5_VERSION:-5.0.7}
case $version in
5.0.*) suite=trixie;;
4.1.*) suite=bookworm;;
*) die "GC3_OMPI5_VERSION=$version: this script builds 5.0.x and 4.1.x releases";;
esac
if [ -n "${GC3_OMPI5_CACHE:-}" ]; then
    cache=$GC3_OMPI5_CACHE
elif mkdir -p /var/cache/gc3 2>/dev/null && [ -w /var/cache/gc3 ]; then
    cache=/var/cache/gc3
else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/gc3
fi
name=openmpi-$version
[ $cuda = 0 ] || name=$name-cuda # never the plain build's folder
prefix=$cache/$name
stamp=$prefix/.gc3-complete
jobs=${GC3_OMPI5_JOBS:-$(nproc)}
configure_only=${GC3_OMPI5_CONFIGURE_ONLY:-0}

# --cuda: the CUDA toolkit and the UCX
gpu_flags=(--without-ucx --without-ofi --without-cuda)
if [ $cuda = 1 ]; then
    cuda_dir=${GC3_OMPI5_CUDA:-${CUDA_HOME:-}}
    if [ -z "$cuda_dir" ] && command -v nvcc >/dev/null; then
        cuda_dir=$(dirname "$(dirname "$(readlink -f "$(command -v nvcc)")")")
    fi
    cuda_dir=${cuda_dir:-/usr/local/cuda}
    [ -f "$cuda_dir/include/cuda.h" ] ||
        die "--cuda: $cuda_dir has no include/cuda.h: set GC3_OMPI5_CUDA to the CUDA toolkit's folder"
    gpu_flags=(--with-cuda="$cuda_dir")
    # the driver library to link against: the toolkit's stub (the GPU machine's driver is loaded at
    # run time); Open MPI's own search can find two and then fails
    for d in "$cuda_dir/lib64/stubs" "$cuda_dir/lib/stubs" "$cuda_dir"/targets/*/lib/stubs; do
        if [ -f "$d/libcuda.so" ]; then
            gpu_flags+=(--with-cuda-libdir="$(readlink -f "$d")")
            break
        fi
    done
    ucx=${GC3_OMPI5_UCX:-${GC3_UCX_CUDA:-}}
    if [ -n "$ucx" ]; then
        [ -f "$ucx/include/ucp/api/ucp.h" ] ||
            die "--cuda: the UCX in $ucx has no include/ucp/api/ucp.h (a UCX installation with its headers is needed; GC3_OMPI5_UCX, else GC3_UCX_CUDA)"
        ucx_lib=""
        for d in "$ucx/lib" "$ucx/lib64"; do [ -e "$d/libucp.so.0" ] && { ucx_lib=$d; break; }; done
        [ -n "$ucx_lib" ] || die "--cuda: the UCX in $ucx has no lib/libucp.so.0 nor lib64/libucp.so.0"
        # linked through a folder of links to its shared libraries only: a UCX may ship only the
        # run-time names (libucp.so.0, ...), and its libtool archives (.la) may name the folder it was
        # built in (the libucx wheel's do: libtool then failed in opal/mca/common/ucx on the GPU machine)
        link_lib=$cache/$name-ucx-lib
        rm -rf "$link_lib" && mkdir -p "$link_lib" || die "cannot create $link_lib (set GC3_OMPI5_CACHE)"
        for l in ucp uct ucs ucm; do
            [ -e "$ucx_lib/lib$l.so.0" ] || die "--cuda: the UCX in $ucx has no $ucx_lib/lib$l.so.0"
            ln -sfn "$ucx_lib/lib$l.so.0" "$link_lib/lib$l.so"
        done
        say "--cuda: linking UCX through $link_lib (its shared libraries, without libtool archives)"
        if [ -f "$ucx_lib/ucx/libuct_cuda.so" ]; then
            say "--cuda: UCX $ucx, built with CUDA ($ucx_lib/ucx/libuct_cuda.so)"
        else
            say "--cuda: warning: UCX $ucx has no $ucx_lib/ucx/libuct_cuda.so: it was built without CUDA, and Open MPI's point-to-point on device buffers will not work"
        fi
        # its own folders only (ucx_USE_PKG_CONFIG=0: a relocated UCX, such as the libucx wheel's,
        # keeps a ucx.pc naming the folder it was built in); its lib in the run path
        gpu_flags+=(--with-ucx="$ucx" --with-ucx-libdir="$link_lib" ucx_USE_PKG_CONFIG=0
                    LDFLAGS="-Wl,-rpath,$ucx_lib")
    else
        say "--cuda: no UCX built with CUDA given (GC3_OMPI5_UCX and GC3_UCX_CUDA are unset): configuring against the system's UCX, if any; Debian's libucx0 has no CUDA transports, so device buffers' point-to-point will not work with this build (good only to check that it builds)"
        gpu_flags+=(--with-ucx)
    fi
    gpu_flags+=(--without-ofi)
fi

# what is built; a cached build of other flags is built again. hwloc: the system's, which gc3
# uses too (one hwloc in a job, the one gc3 was compiled against). 4.1 has ORTE, not PRRTE, and
# no Sphinx docs.
case $version in
5.0.*) runtime=(--with-pmix=internal --with-prrte=internal --with-libevent=internal --with-hwloc=external)
       nodocs=(--disable-sphinx);;
4.1.*) runtime=(--with-pmix=internal --with-libevent=internal --with-hwloc=external)
       nodocs=();;
esac
flags=(--prefix="$prefix" --with-devel-headers "${runtime[@]}" "${gpu_flags[@]}"
       --disable-mpi-fortran --disable-oshmem --disable-io-romio "${nodocs[@]}")
# (the stamp leaves out where the CUDA driver's stub library was found: the same stub wherever it
# lies, and where it lies differs between machines, so a build packed on one unpacks on another)
stamp_text=$(printf 'prefix=%s\nconfigure %s' "$prefix" "${flags[*]}" | sed 's/ --with-cuda-libdir=[^ ]*//')
complete() { [ "$(cat "$stamp" 2>/dev/null)" = "$stamp_text" ] && [ -x "$prefix/bin/mpicc" ] && [ -f "$prefix/source/opal/mca/timer/linux/timer_linux.h" ]; }
done_with() {
    if [ -n "$pack" ]; then
        tar -C "$cache" -cJf "$pack" --exclude="$name/build.log" "$name"
        say "packed $prefix into $pack ($(du -h "$pack" | cut -f1)); unpack with GC3_OMPI5_ARCHIVE=$pack GC3_OMPI5_CACHE=$cache"
    fi
    echo "$prefix"
    exit 0
}
if [ "$configure_only" != 1 ] && ! complete && [ -n "${GC3_OMPI5_ARCHIVE:-}" ]; then
    [ -f "$GC3_OMPI5_ARCHIVE" ] || die "GC3_OMPI5_ARCHIVE=$GC3_OMPI5_ARCHIVE: no such file"
    mkdir -p "$cache" || die "cannot create the cache folder $cache (set GC3_OMPI5_CACHE)"
    rm -rf "$prefix"
    tar -C "$cache" -xJf "$GC3_OMPI5_ARCHIVE" "$name" ||
        die "$GC3_OMPI5_ARCHIVE holds no $name folder"
    built_in=$(sed -n 's/^prefix=//p' "$stamp" 2>/dev/null)
    [ "$built_in" = "$prefix" ] || { rm -rf "$prefix"; die "$GC3_OMPI5_ARCHIVE was built in ${built_in:-an unknown folder}, not $prefix: set GC3_OMPI5_CACHE=$(dirname "${built_in:-/?}")"; }
    complete || { rm -rf "$prefix"; die "$GC3_OMPI5_ARCHIVE is not a complete build of this script's configuration (its $(basename "$stamp") differs)"; }
    say "Open MPI $version: unpacked $GC3_OMPI5_ARCHIVE into $prefix"
fi
if [ "$configure_only" != 1 ] && complete; then
    say "Open MPI $version: cached build in $prefix"
    done_with
fi

mkdir -p "$cache" || die "cannot create the cache folder $cache (set GC3_OMPI5_CACHE)"
work=$(mktemp -d "${TMPDIR:-/tmp}/gc3-ompi5.XXXXXX")
trap 'rm -rf "$work"' EXIT

# ---------------------------------------------------------------- sources
# The Debian mirror this machine's apt uses (not its security mirror).
debian_mirror() {
    local m
    m=$(apt-get indextargets --format '$(REPO_URI)' 'Origin: Debian' 'Label: Debian' 2>/dev/null | head -1)
    if [ -z "$m" ]; then
        # no downloaded indexes yet: read the sources files themselves
        m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
                awk '$1 == "deb" && $2 !~ /\[/ && $2 ~ /debian\/?$/ {print $2; exit}')
        [ -n "$m" ] || m=$(cat /etc/apt/sources.list.d/*.sources 2>/dev/null |
                awk '$1 == "URIs:" {for (i = 2; i <= NF; i++) if ($i ~ /debian\/?$/) {print $i; exit}}')
    fi
    echo "${m%/}"
}

fetch_debian_source() {
    command -v apt-get >/dev/null || die "no apt-get here: set GC3_OMPI5_TARBALL to an openmpi-$version tarball"
    local mirror apt=$work/apt v
    mirror=$(debian_mirror)
    [ -n "$mirror" ] || die "cannot tell this machine's Debian mirror from its apt configuration; set GC3_OMPI5_TARBALL to an openmpi-$version tarball"
    mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$apt/src"
    echo "deb-src $mirror $suite main" >"$apt/sources.list"
    local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/parts"
                -o "Dir::State::lists=$apt/lists" -o "Dir::Cache=$apt/cache"
                -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)
    say "fetching Debian $suite's openmpi source package from $mirror"
    apt-get "${opts[@]}" -q update >"$work/apt.log" 2>&1 && ! grep -qE '^(W|E): ' "$work/apt.log" ||
        { cat "$work/apt.log" >&2; die "cannot read $suite's source index from $mirror (no network?); set GC3_OMPI5_TARBALL to an openmpi-$version tarball"; }
    v=$(apt-cache "${opts[@]}" showsrc openmpi 2>/dev/null | sed -n 's/^Version: //p' |
            while read -r d; do u=${d#*:}; [ "${u%-*}" = "$version" ] && echo "$d"; done | head -1)
    [ -n "$v" ] || die "Debian $suite has no openmpi $version source package (it has: $(apt-cache "${opts[@]}" showsrc openmpi | sed -n 's/^Version: //p' | tr '\n' ' ')); set GC3_OMPI5_VERSION to one of those"
    (cd "$apt/src" && apt-get "${opts[@]}" -q source --download-only "openmpi=$v") >>"$work/apt.log" 2>&1 ||
        { cat "$work/apt.log" >&2; die "apt-get source openmpi=$v failed"; }
    tarball=$(ls "$apt/src"/openmpi_"$version".orig.tar.* 2>/dev/null | head -1)
    [ -n "$tarball" ] || die "the source package openmpi=$v has no openmpi_$version.orig.tar.*"
    # kept beside the builds: what to carry to a machine without network (GC3_OMPI5_TARBALL there)
    cp "$tarball" "$cache/" && tarball=$cache/$(basename "$tarball")
}

echo '#include <hwloc.h>' | ${CC:-cc} -E - >/dev/null 2>&1 ||
    die "hwloc's headers are missing (Debian/Ubuntu: apt-get install libhwloc-dev): Open MPI is built with the system's hwloc, as gc3 is"

if [ -n "${GC3_OMPI5_TARBALL:-}" ]; then
    tarball=$GC3_OMPI5_TARBALL
    [ -f "$tarball" ] || die "GC3_OMPI5_TARBALL=$tarball: no such file"
elif [ -f "$cache/openmpi_$version.orig.tar.xz" ]; then
    tarball=$cache/openmpi_$version.orig.tar.xz # fetched before
else
    fetch_debian_source
fi

# ---------------------------------------------------------------- build
say "unpacking $(basename "$tarball")"
if [ "$configure_only" = 1 ]; then
    src=$work/source # (a cached build stays as it is)
else
    rm -rf "$prefix"
    src=$prefix/source
fi
mkdir -p "$src"
tar -xf "$tarball" -C "$src" --strip-components=1
vfile=$src/VERSION
[ -f "$vfile" ] && [ "$(sed -n 's/^major=//p' "$vfile").$(sed -n 's/^minor=//p' "$vfile").$(sed -n 's/^release=//p' "$vfile")" = "$version" ] ||
    die "$tarball is not Open MPI $version (see its VERSION file)"
mkdir -p "$work/build"
cd "$work/build"
t0=$(date +%s)
if [ "$configure_only" = 1 ]; then
    say "configuring Open MPI $version only (GC3_OMPI5_CONFIGURE_ONLY=1): ${flags[*]}"
    log=$cache/$name.configure.log
    "$src/configure" "${flags[@]}" >"$log" 2>&1 ||
        { tail -40 "$log" >&2; die "configuring Open MPI $version failed (whole log: $log)"; }
    # what it found of CUDA and UCX (5.0's summary: "CUDA support: yes", "Open UCX: yes")
    grep -E '^(CUDA support|Open UCX):|^checking if have cuda support|^checking for ucx.*(yes|no)$|^checking if UCX' "$log" >&2 || true
    say "configure of Open MPI $version succeeded in $(( $(date +%s) - t0 )) s (log: $log); nothing built"
    exit 0
fi
say "configuring Open MPI $version (log: $prefix/build.log)"
{ "$src/configure" "${flags[@]}" && make -j"$jobs" && make install; } >"$prefix/build.log" 2>&1 ||
    { tail -40 "$prefix/build.log" >&2; die "building Open MPI $version failed (whole log: $prefix/build.log)"; }
# the pre-built HTML pages and man pages are most of an installation's size
# (and of the source tree only its headers are needed)
rm -rf "$prefix/share/doc" "$prefix/share/man"
find "$prefix/source" -type f ! -name '*.h' ! -name VERSION -delete
find "$prefix/source" -type d -empty -delete
"$prefix/bin/ompi_info" --version >/dev/null || die "the new installation does not run: $prefix/bin/ompi_info --version"
if [ $cuda = 1 ]; then
    "$prefix/bin/ompi_info" --parsable --all 2>/dev/null | grep -q '^mca:mpi:base:param:mpi_built_with_cuda_support:value:true$' ||
        die "the new installation in $prefix is not built with CUDA (ompi_info: mpi_built_with_cuda_support is not true; see $prefix/build.log)"
fi
echo "$stamp_text" >"$stamp"
say "Open MPI $version built in $(( $(date +%s) - t0 )) s with -j$jobs, installed in $prefix ($(du -sh "$prefix" | cut -f1) with the source tree's headers)"
[ $cuda = 0 ] || say "CUDA-aware (${gpu_flags[*]}); gc3 against it: contrib/ci-ompi5.sh --cuda"
done_with
