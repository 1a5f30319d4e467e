#!/usr/bin/env bash
# unit_man_pages: make install puts every page of doc/man into PREFIX/share/man/manN (N: the page's
# section), unchanged, and man finds them there; each installed page renders without a warning, to
# text with its NAME line, by every renderer this machine has: groff (-man -Tutf8 -ww), man-db's man
# (--warnings -l) and mandoc (-Tlint -W warning), each first shown to report a planted undefined
# macro. Installs into a temporary DESTDIR (configure's prefix unchanged). Exits 77 (CTest's
# SKIP_RETURN_CODE) when the pages are installed right but no renderer exists.
# Usage: test_man.sh BUILD_DIR SOURCE_ROOT
set -u
export LC_ALL=C.UTF-8
b=$1
s=$2
d=$(mktemp -d)
trap 'rm -rf "$d" "$d.log"' EXIT
pass=0; fail=0
ok()  { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }

pages=("$s"/doc/man/*.[1-9])
[ -f "${pages[0]}" ] || { echo "FAIL: no page in $s/doc/man"; exit 1; }
make -C "$b" install DESTDIR="$d" >"$d.log" 2>&1 || { tail -20 "$d.log"; bad "make install failed"; }
mandir=$(make -s -C "$b" print-mandir 2>/dev/null)
[ -n "$mandir" ] || bad "make print-mandir says nothing"
installed=()
for p in "${pages[@]}"; do
    name=$(basename "$p"); sec=${name##*.}
    i=$d$mandir/man$sec/$name
    if [ ! -f "$i" ]; then bad "$name not installed in $mandir/man$sec"; continue; fi
    cmp -s "$p" "$i" && ok "$name installed in $mandir/man$sec" || bad "$name installed in $mandir/man$sec differs from doc/man/$name"
    installed+=("$i")
    if command -v man >/dev/null; then # man finds it by name and section in the installed tree
        w=$(man -M "$d$mandir" -w "$sec" "${name%.*}" 2>/dev/null)
        [ "$w" = "$i" ] || [ "$w" = "$i.gz" ] && ok "man -M ... -w $sec ${name%.*}" || bad "man -M $mandir -w $sec ${name%.*} finds '$w'"
    fi
done
# every page of the installed man1/man7 is one of doc/man (nothing stale, nothing misnamed)
for i in "$d$mandir"/man[1-9]/*; do
    [ -e "$i" ] || continue
    [ -f "$s/doc/man/$(basename "$i")" ] || bad "installed $(basename "$i") is not a page of doc/man"
done

renderers=0
printf '.TH PLANTED 1 2026-01-01\n.SH NAME\nplanted \\- a page with an undefined macro\n.nosuchmacro x\n' > "$d/planted.1"
# each renderer as two commands on a page: what it says about the page (its warnings, nothing when
# clean) and what it makes of it (the text; empty for a linter)
groff_msgs()  { groff -man -Tutf8 -ww -z "$1" 2>&1; }
groff_text()  { groff -man -Tutf8 "$1" 2>/dev/null; }
man_msgs()    { MANWIDTH=80 man --warnings -E UTF-8 -Tutf8 -l "$1" 2>&1 >/dev/null; }
man_text()    { MANWIDTH=80 man -E UTF-8 -Tutf8 -l "$1" 2>/dev/null; }
mandoc_msgs() { mandoc -Tlint -W warning "$1" 2>&1; }   # mandoc -Tlint reports on stdout
mandoc_text() { mandoc -Tutf8 "$1" 2>/dev/null; }
render() { # NAME PREFIX: every installed page renders without a message, to text naming the page
    local name=$1 r=$2 msgs
    renderers=$((renderers + 1))
    # the renderer reports what it should: a planted undefined macro
    [ -n "$("${r}_msgs" "$d/planted.1")" ] && ok "$name reports a planted warning" ||
        bad "$name does not report a planted warning (undefined macro)"
    for i in "${installed[@]}"; do
        msgs=$("${r}_msgs" "$i")
        page=$(basename "$i"); page=${page%.*}
        if [ -n "$msgs" ]; then echo "$msgs" | head -10; bad "$name: $(basename "$i") renders with warnings"
        elif ! "${r}_text" "$i" | grep -qi "^ *$page "; then bad "$name: $(basename "$i") renders to no NAME line for $page"
        else ok "$name: $(basename "$i") renders without warnings"; fi
    done
}
command -v groff >/dev/null && render "groff -man -Tutf8 -ww" groff
command -v man >/dev/null && render "man --warnings -l" man
command -v mandoc >/dev/null && render "mandoc -Tlint -W warning" mandoc

echo "man pages: $pass passed, $fail failed"
[ $fail = 0 ] || exit 1
if [ $renderers = 0 ]; then
    echo "SKIPPED: the pages are installed, but no renderer (groff, man, mandoc) is installed to check them"
    exit 77
fi
exit 0
