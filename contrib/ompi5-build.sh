#!/usr/bin/env bash
# Build Open MPI 5.0.x with its development headers, for building and testing gc3 against 5.0.
#
#     contrib/ompi5-build.sh              # prints the install prefix on its last line
#     contrib/ompi5-build.sh --pack FILE  # also writes the cached build to FILE (.tar.xz), to carry
#                                         # to a machine without network (GC3_OMPI5_ARCHIVE there)
#     contrib/ompi5-build.sh --help
#
# The build is cached: PREFIX = $GC3_OMPI5_CACHE/openmpi-VERSION holds the installation
# (without its HTML docs and man pages) and PREFIX/source the headers of the release's source
# tree, which gc3's configure needs for those a 5.0 installation lacks
# (--with-ompi-source=PREFIX/source).
# A complete cached build is reused as it is; nothing is downloaded then.
#
# A packed build ($GC3_OMPI5_ARCHIVE) is unpacked into the cache instead; it holds absolute paths,
# so the cache folder must be the one it was built in (the script checks).
#
# Sources: $GC3_OMPI5_TARBALL (an upstream openmpi-VERSION.tar.{gz,bz2,xz} or Debian's
# openmpi_VERSION.orig.tar.xz) when set; otherwise Debian trixie's source package, fetched with
# apt-get through a private sources list (the machine's own Debian mirror, its own apt
# configuration untouched) and kept in the cache. No sources: the script fails, saying why.
#
# Environment:
#   GC3_OMPI5_VERSION  the release (default 5.0.7, the one Debian trixie ships)
#   GC3_OMPI5_CACHE    where builds are kept (default /var/cache/gc3 when writable, else ~/.cache/gc3)
#   GC3_OMPI5_TARBALL  a source tarball of that release (no download)
#   GC3_OMPI5_ARCHIVE  a build packed with --pack (no build)
#   GC3_OMPI5_JOBS     make -j (default: the number of CPUs)
set -euo pipefail

usage() { sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; }
pack=""
case "${1:-}" in
-h|--help) usage; exit 0;;
--pack) [ $# = 2 ] || { echo "ompi5-build: --pack FILE" >&2; exit 2; }; pack=$2;;
"") ;;
*) echo "ompi5-build: unknown argument '$1' (see --help)" >&2; exit 2;;
esac

die() { echo "ompi5-build: error: $*" >&2; exit 1; }
say() { echo "ompi5-build: $*" >&2; }

version=${GC3_OMPI5_VERSION:-5.0.7}
case $version in 5.0.*) ;; *) die "GC3_OMPI5_VERSION=$version: this script builds 5.0.x releases";; esac
if [ -n "${GC3_OMPI5_CACHE:-}" ]; then
    cache=$GC3_OMPI5_CACHE
elif mkdir -p /var/cache/gc3 2>/dev/null && [ -w /var/cache/gc3 ]; then
    cache=/var/cache/gc3
else
    cache=${XDG_CACHE_HOME:-$HOME/.cache}/gc3
fi
prefix=$cache/openmpi-$version
stamp=$prefix/.gc3-complete
jobs=${GC3_OMPI5_JOBS:-$(nproc)}

# what is built; a cached build of other flags is built again. hwloc: the system's, which gc3
# uses too (one hwloc in a job, the one gc3 was compiled against)
flags=(--prefix="$prefix" --with-devel-headers
       --with-pmix=internal --with-prrte=internal --with-libevent=internal --with-hwloc=external
       --without-ucx --without-ofi --without-cuda
       --disable-mpi-fortran --disable-oshmem --disable-io-romio --disable-sphinx)
stamp_text=$(printf 'prefix=%s\nconfigure %s' "$prefix" "${flags[*]}")
complete() { [ "$(cat "$stamp" 2>/dev/null)" = "$stamp_text" ] && [ -x "$prefix/bin/mpicc" ] && [ -f "$prefix/source/opal/mca/timer/linux/timer_linux.h" ]; }
done_with() {
    if [ -n "$pack" ]; then
        tar -C "$cache" -cJf "$pack" --exclude="openmpi-$version/build.log" "openmpi-$version"
        say "packed $prefix into $pack ($(du -h "$pack" | cut -f1)); unpack with GC3_OMPI5_ARCHIVE=$pack GC3_OMPI5_CACHE=$cache"
    fi
    echo "$prefix"
    exit 0
}
if ! complete && [ -n "${GC3_OMPI5_ARCHIVE:-}" ]; then
    [ -f "$GC3_OMPI5_ARCHIVE" ] || die "GC3_OMPI5_ARCHIVE=$GC3_OMPI5_ARCHIVE: no such file"
    mkdir -p "$cache" || die "cannot create the cache folder $cache (set GC3_OMPI5_CACHE)"
    rm -rf "$prefix"
    tar -C "$cache" -xJf "$GC3_OMPI5_ARCHIVE" "openmpi-$version" ||
        die "$GC3_OMPI5_ARCHIVE holds no openmpi-$version folder"
    built_in=$(sed -n 's/^prefix=//p' "$stamp" 2>/dev/null)
    [ "$built_in" = "$prefix" ] || { rm -rf "$prefix"; die "$GC3_OMPI5_ARCHIVE was built in ${built_in:-an unknown folder}, not $prefix: set GC3_OMPI5_CACHE=$(dirname "${built_in:-/?}")"; }
    complete || { rm -rf "$prefix"; die "$GC3_OMPI5_ARCHIVE is not a complete build of this script's configuration (its $(basename "$stamp") differs)"; }
    say "Open MPI $version: unpacked $GC3_OMPI5_ARCHIVE into $prefix"
fi
if complete; then
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
    echo "deb-src $mirror trixie main" >"$apt/sources.list"
    local opts=(-o "Dir::Etc::sourcelist=$apt/sources.list" -o "Dir::Etc::sourceparts=$apt/parts"
                -o "Dir::State::lists=$apt/lists" -o "Dir::Cache=$apt/cache"
                -o Dir::Cache::pkgcache= -o Dir::Cache::srcpkgcache= -o APT::Sandbox::User=root)
    say "fetching Debian trixie's openmpi source package from $mirror"
    apt-get "${opts[@]}" -q update >"$work/apt.log" 2>&1 && ! grep -qE '^(W|E): ' "$work/apt.log" ||
        { cat "$work/apt.log" >&2; die "cannot read trixie's source index from $mirror (no network?); set GC3_OMPI5_TARBALL to an openmpi-$version tarball"; }
    v=$(apt-cache "${opts[@]}" showsrc openmpi 2>/dev/null | sed -n 's/^Version: //p' |
            while read -r d; do u=${d#*:}; [ "${u%-*}" = "$version" ] && echo "$d"; done | head -1)
    [ -n "$v" ] || die "Debian trixie has no openmpi $version source package (it has: $(apt-cache "${opts[@]}" showsrc openmpi | sed -n 's/^Version: //p' | tr '\n' ' ')); set GC3_OMPI5_VERSION to one of those"
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
rm -rf "$prefix"
mkdir -p "$prefix/source"
tar -xf "$tarball" -C "$prefix/source" --strip-components=1
vfile=$prefix/source/VERSION
[ -f "$vfile" ] && [ "$(sed -n 's/^major=//p' "$vfile").$(sed -n 's/^minor=//p' "$vfile").$(sed -n 's/^release=//p' "$vfile")" = "$version" ] ||
    die "$tarball is not Open MPI $version (see its VERSION file)"
mkdir -p "$work/build"
cd "$work/build"
say "configuring Open MPI $version (log: $prefix/build.log)"
t0=$(date +%s)
{ "$prefix/source/configure" "${flags[@]}" && make -j"$jobs" && make install; } >"$prefix/build.log" 2>&1 ||
    { tail -40 "$prefix/build.log" >&2; die "building Open MPI $version failed (whole log: $prefix/build.log)"; }
# the pre-built HTML pages and man pages are most of an installation's size
# (and of the source tree only its headers are needed)
rm -rf "$prefix/share/doc" "$prefix/share/man"
find "$prefix/source" -type f ! -name '*.h' ! -name VERSION -delete
find "$prefix/source" -type d -empty -delete
"$prefix/bin/ompi_info" --version >/dev/null || die "the new installation does not run: $prefix/bin/ompi_info --version"
echo "$stamp_text" >"$stamp"
say "Open MPI $version built in $(( $(date +%s) - t0 )) s with -j$jobs, installed in $prefix ($(du -sh "$prefix" | cut -f1) with the source tree's headers)"
done_with
