#!/usr/bin/env bash
# unit_man_options: every tool's --help and its man page (doc/man/TOOL.1) name the same options.
# The options a --help lists are the option words (-x, --long, --[no-]x as --x and --no-x) of its
# text, except: on a line that runs a program with options (an example such as
# "gc3-mpirun -np 4 gc3_bench -t allreduce"), only the words after the tool's own name count, and
# --mca (mpirun's) counts only for gc3-mpirun. The page's options are the option words of the tags
# of the .TP entries of its OPTIONS section. Both sets must be equal. gc3c is compared per
# command: "gc3c COMMAND --help" against the page's ".SS COMMAND" of OPTIONS, and every command of
# "gc3c help" must have one. Prose is not compared.
# The checker is first run on made-up tools and pages with one planted difference of each kind.
# Usage: check-man-options.sh BUILD_DIR SOURCE_ROOT
set -u
export LC_ALL=C
b=$1
s=$2
man=$s/doc/man
pass=0; fail=0; skip=0
ok()   { echo "ok: $1"; pass=$((pass + 1)); }
bad()  { echo "FAIL: $1"; fail=$((fail + 1)); }

# the option words of a --help text (stdin), one a line, sorted; $1: the tool's name
help_opts() {
    sed -E 's/--\[no-\]([A-Za-z0-9][A-Za-z0-9-]*)/--\1 --no-\1/g' |
    awk -v tool="$1" '
        function words(t,   w) {
            while (match(t, /(^|[][ \t(|,\/"'\''=])--?[A-Za-z][A-Za-z0-9-]*/)) {
                w = substr(t, RSTART, RLENGTH); sub(/^[^-]*/, "", w); sub(/-+$/, "", w)
                if (w != "--mca" || tool == "gc3-mpirun") print w
                t = substr(t, RSTART + RLENGTH)
            }
        }
        {
            line = $0
            # a line that runs a program with options: what follows the tool name, if any
            if (tool != "gc3-mpirun" && line ~ /(^|[ \t\/$])(gc3-)?mpirun[ \t]+-/) {
                n = 0; rest = line
                while (match(rest, "(^|[ \t/])" tool "([ \t]|$)")) { n = 1; rest = substr(rest, RSTART + RLENGTH) }
                line = n ? rest : ""
            }
            words(line)
        }' | sort -u
}
# the option words of the .TP tags of a man page's OPTIONS section (or of its ".SS $2" there)
page_opts() {
    awk -v sub_="${2:-}" '
        /^\.SH / { in_opt = ($0 ~ /^\.SH "?OPTIONS"?[ \t]*$/); next }
        !in_opt { next }
        /^\.SS / { ss = $0; sub(/^\.SS[ \t]+"?/, "", ss); sub(/"?[ \t]*$/, "", ss); next }
        sub_ != "" && ss != sub_ { next }
        tag { tag = 0; print; next }
        /^\.TP/ { tag = 1 }' "$1" |
    sed -E 's/\\-/-/g; s/\\f(\[[^]]*\]|\(..|.)//g; s/^\.[A-Z]+[ \t]*//' |
    awk '{ t = $0
           while (match(t, /(^|[][ \t(|,\/"=])--?[A-Za-z][A-Za-z0-9-]*/)) {
               w = substr(t, RSTART, RLENGTH); sub(/^[^-]*/, "", w); sub(/-+$/, "", w); print w
               t = substr(t, RSTART + RLENGTH)
           } }' | sort -u
}
# compare: LABEL HELP_OPTS PAGE_OPTS; prints the differences
compare() {
    local only_help only_page
    only_help=$(comm -23 <(echo "$2") <(echo "$3") | tr '\n' ' ')
    only_page=$(comm -13 <(echo "$2") <(echo "$3") | tr '\n' ' ')
    if [ -z "$only_help$only_page" ]; then
        ok "$1: $(echo "$2" | grep -c .) option(s), the same in --help and the page"
    else
        [ -n "$only_help" ] && echo "  $1: in --help, not in the page's OPTIONS: $only_help"
        [ -n "$only_page" ] && echo "  $1: in the page's OPTIONS, not in --help: $only_page"
        bad "$1: --help and the man page differ"
    fi
}

# ---------------------------------------------------------------- the checker on made-up input
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
cat > "$t/help" <<'EOF'
usage: demo [-a N] [--beta] [--[no-]gamma] FILE
  -a, --alpha     the alpha; see also --mca coll_gc3_verbose 1 (mpirun's)
  --delta=X       in-place, x-y and 1-2 are not options; neither is -1
example: gc3-mpirun -np 4 --mca x 1 demo --epsilon -a 3
EOF
cat > "$t/demo.1" <<'EOF'
.TH DEMO 1
.SH SYNOPSIS
.B demo \-\-not\-an\-entry
.SH OPTIONS
.TP
.BR \-a ", " \-\-alpha " N"
the alpha, not \-\-zeta (prose)
.TP
.B \-\-beta
.TP
.BR \-\-gamma ", " \-\-no\-gamma
.TP
\fB\-\-delta\fR=\fIX\fR
.TP
.B \-\-omega
.SH SEE ALSO
.TP
.B \-\-not\-either
EOF
h=$(help_opts demo < "$t/help"); p=$(page_opts "$t/demo.1")
want_h=$(printf '%s\n' --alpha --beta --delta --epsilon --gamma --no-gamma -a | sort -u)
want_p=$(printf '%s\n' --alpha --beta --delta --gamma --no-gamma --omega -a | sort -u)
[ "$h" = "$want_h" ] && ok "made-up --help: the options read as expected" || bad "made-up --help read as: $(echo $h)"
[ "$p" = "$want_p" ] && ok "made-up page: the options read as expected" || bad "made-up page read as: $(echo $p)"
out=$(compare demo "$h" "$p"); before=$fail; fail=0
if echo "$out" | grep -q "in --help, not in the page's OPTIONS: --epsilon $" &&
   echo "$out" | grep -q "in the page's OPTIONS, not in --help: --omega $"; then fail=$before; ok "made-up differences reported (both ways)"
else fail=$before; echo "$out"; bad "made-up differences not reported"; fi

# ---------------------------------------------------------------- the tools
# TOOL|COMMAND THAT PRINTS ITS --help
tools=(
    "gc3_info|$b/gc3_info --help"
    "gc3_bench|$b/benchmarks/gc3_bench --help"
    "gc3_rt_bench|$b/benchmarks/gc3_rt_bench --help"
    "gc3-autotune|$s/contrib/gc3-autotune --help"
    "gc3-mpirun|$b/contrib/gc3-mpirun --help"
)
for entry in "${tools[@]}"; do
    tool=${entry%%|*}; cmd=${entry#*|}
    page=$man/$tool.1
    [ -f "$page" ] || { bad "$tool: no man page $page"; continue; }
    text=$($cmd 2>&1 </dev/null); rc=$?
    if [ "$tool" = gc3-mpirun ] && ! echo "$text" | grep -q 'gc3-mpirun'; then
        echo "skipped: gc3-mpirun --help prints mpirun's own help (gc3-mpirun has no --help of its own here): not compared"
        skip=$((skip + 1)); continue
    fi
    [ $rc = 0 ] || bad "$tool --help exits $rc"
    compare "$tool" "$(echo "$text" | help_opts "$tool")" "$(page_opts "$page")"
done

# gc3c: per command
page=$man/gc3c.1
cmds=$("$b/gc3c" help 2>&1 | sed -nE 's/^  ([a-z]+)( .*)?$/\1/p' | grep -vx help | sort -u)
sections=$(awk '/^\.SH / { o = ($0 ~ /OPTIONS/) } o && /^\.SS / { sub(/^\.SS[ \t]+"?/, ""); sub(/"?[ \t]*$/, ""); print }' "$page" | sort -u)
[ -n "$cmds" ] || bad "gc3c help lists no command"
if [ "$cmds" = "$sections" ]; then ok "gc3c: every command of 'gc3c help' has its .SS in the page's OPTIONS ($(echo $cmds))"
else bad "gc3c: commands of 'gc3c help': $(echo $cmds); .SS of the page's OPTIONS: $(echo $sections)"; fi
for c in $cmds; do
    text=$("$b/gc3c" "$c" --help 2>&1); rc=$?
    [ $rc = 0 ] || bad "gc3c $c --help exits $rc"
    compare "gc3c $c" "$(echo "$text" | help_opts gc3c)" "$(page_opts "$page" "$c")"
done

if [ $skip -gt 0 ]; then echo "man options: $pass passed, $fail failed, $skip skipped"; else echo "man options: $pass passed, $fail failed"; fi
[ $fail = 0 ]
