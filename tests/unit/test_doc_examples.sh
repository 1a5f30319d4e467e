#!/usr/bin/env bash
# Docs that cannot go stale: every example of README.md and the man pages that shows a command's
# output is marked with that command, and this test runs the command now and compares.
#
# Usage: test_doc_examples.sh BUILD SOURCE [FILE...]
#   BUILD   the build folder (its gc3c, gc3_info, contrib/gc3-mpirun, tests/mpi/...)
#   SOURCE  the source tree; FILE... the pages to check (default README.md and doc/man/*)
#
# A marker comment names the command of the next example block (roff: the next .EX ... .EE;
# markdown: the next ``` fenced block):
#   roff      .\" output-of: COMMAND             markdown  <!-- output-of: COMMAND -->
#   output-of: COMMAND    the block is the whole output of COMMAND (stdout and stderr)
#   excerpt-of: COMMAND   the block is a part of it (e.g. one verbose line of a job)
#   session               the block's lines "$ COMMAND" are run one after the other, each followed
#                         by its whole output
#   session: SET-UP       the same, after the command SET-UP (e.g. writing a file the block uses)
#   rule-of: COMMAND      the next text line (a .TP tag, or an example's first line) is a verbose
#                         plan line "[COLL SIZES bytes ...: ]ALGO PROTO, C channel(s) x I instance(s),
#                         rule SOURCE:N": COMMAND (gc3_info for that shape) must print rule SOURCE:N
#                         for that collective and algorithm, with that protocol, channels and instances
# followed, optionally, by "  # vary: UNIT..." (two spaces before #): a number right before one of
# those units (MiB, KiB, us, ...) may differ (memory and times that depend on the machine), or by
# "  # vary without cuda: UNIT...": the same in a build without the CUDA backend only (the memory
# gc3_info computes counts the CUDA backend's control memory). Everything else is exact: rule numbers, rule counts, algorithm names, counts of passed
# checks. In the block, "..." stands for any text (lines left out, the rest of a line); a long
# output line may be wrapped, as spaces and line ends count alike. The commands run in a folder
# laid out like the source root: build/ (the build folder's contents), contrib/, tests/, doc/; the
# build's tools (gc3c, gc3_info, gc3-mpirun, gc3_bench) are on PATH. "[host:rank] " prefixes of
# mpirun's output are dropped.
# Exit status: 0 when every example matches; 1 otherwise, naming the page, line and command.
set -u
B=$(cd "${1:?usage: test_doc_examples.sh BUILD SOURCE [FILE...]}" && pwd)
S=$(cd "${2:?usage: test_doc_examples.sh BUILD SOURCE [FILE...]}" && pwd)
shift 2
files=("$@")
[ ${#files[@]} -gt 0 ] || files=("$S/README.md" "$S"/doc/man/*.[157])
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
# the caller's component path or parameter files must not change what the commands print
unset OMPI_MCA_mca_base_component_path OMPI_MCA_mca_base_param_files GC3_COMPONENT_DIR GC3_PRIORITY
while read -r v; do unset "$v"; done < <(env | sed -n 's/^\(OMPI_MCA_coll_gc3_[A-Za-z0-9_]*\)=.*/\1/p')

W=$T/root # the commands' working folder, laid out like the source root
mkdir -p "$W/build"
for f in "$B"/*; do ln -s "$f" "$W/build/"; done
for d in contrib tests doc; do ln -s "$S/$d" "$W/$d"; done
export PATH="$B:$B/contrib:$B/benchmarks:$PATH"

passed=0 failed=0 examples=0
cuda=0 # whether the build has the CUDA backend ("vary without cuda")
grep -q '^#define GC3_HAVE_CUDA 1' "$B/config.h" 2>/dev/null && cuda=1

# the text of an example block as a reader sees it: roff's escapes and fonts undone
unroff() {
    sed -e 's/\\f[BIRP]//g; s/\\-/-/g; s/\\&//g; s/\\(mc/µ/g; s/\\(mu/×/g; s/\\(en/–/g; s/\\ / /g; s/\\e/\\/g'
}
# both sides before comparing: "[host:rank] " prefixes dropped, numbers before the varying units
# made "#", every run of spaces and line ends one space
normalize() { # $1: the units that vary (may be empty)
    local units=$1 re=""
    [ -n "$units" ] && re=$(echo "$units" | tr ' ' '|')
    sed -E 's/^\[[^] ]*\] //' |
        if [ -n "$re" ]; then sed -E "s/[0-9]+(\.[0-9]+)? ?($re)([^A-Za-z]|\$)/# \2\3/g"; else cat; fi |
        tr -s ' \t\n' '   ' | sed -E 's/^ //; s/ $//'
}
# match EXPECTED (with "..." for any text) against ACTUAL, both normalized; $3: whole or excerpt.
# Prints, on a mismatch, the first part of EXPECTED that is not found where it should be.
matches() {
    awk -v mode="$3" '
    FNR == 1 { f++ }
    f == 1 { want = want $0 }
    f == 2 { act = act $0 }
    END {
        n = split(want, seg, /\.\.\./)
        pos = 1
        for (i = 1; i <= n; i++) {
            s = seg[i]
            sub(/^ +/, "", s); sub(/ +$/, "", s)
            if (s == "") continue
            first = (i == 1) ; last = (i == n)
            if (first && mode == "whole") {
                if (substr(act, 1, length(s)) != s) { print "the output does not begin with: " s; exit 1 }
                pos = length(s) + 1
                if (last && pos != length(act) + 1) { print "the output does not end after: " s; exit 1 }
                continue
            }
            if (last && mode == "whole") {
                k = length(act) - length(s) + 1
                if (k < pos || substr(act, k) != s) { print "the output does not end with: " s; exit 1 }
                pos = length(act) + 1
                continue
            }
            found = 0
            from = pos
            while ((k = index(substr(act, from), s)) > 0) {
                k += from - 1
                # an excerpt begins and ends at a word boundary ("...45 passed" would let 1545 through)
                len = length(s)
                okl = !(first && mode == "excerpt") || k == 1 || substr(act, k - 1, 1) == " "
                okr = !(last && mode == "excerpt") || k + len > length(act) || substr(act, k + len, 1) == " "
                if (okl && okr) { found = 1; break }
                from = k + 1
            }
            if (!found) { print "not in the output" (i > 1 ? " after the part before it" : "") ": " s; exit 1 }
            pos = k + length(s)
        }
    }' "$1" "$2"
}

# one example: $1 page, $2 line, $3 mode (whole|excerpt), $4 command, $5 units, $6 file of its text
check_example() {
    local page=$1 line=$2 mode=$3 cmd=$4 units=$5 text=$6 why
    examples=$((examples + 1))
    (cd "$W" && bash -c "$cmd") >"$T/out.raw" 2>&1 </dev/null
    normalize "$units" <"$T/out.raw" >"$T/act"
    normalize "$units" <"$text" >"$T/exp"
    if why=$(matches "$T/exp" "$T/act" "$mode"); then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: ${page#"$S"/}:$line: the example of \"$cmd\" is stale: $why"
        echo "  the example:"
        sed 's/^/    | /' "$text"
        echo "  the output now:"
        head -n 40 "$T/out.raw" | sed 's/^/    | /'
    fi
}

# a session block: "$ COMMAND" lines, each followed by its output
check_session() { # $1 page, $2 line of the marker, $3 units, $4 file of the block, $5 set-up command
    local page=$1 line=$2 units=$3 cmd="" n=0
    [ -z "${5:-}" ] || (cd "$W" && bash -c "$5") >/dev/null 2>&1 </dev/null
    : >"$T/sess"
    while IFS= read -r l || [ -n "$l" ]; do
        if [[ $l == '$ '* ]]; then
            [ -n "$cmd" ] && check_example "$page" "$line" whole "$cmd" "$units" "$T/sess"
            cmd=${l#\$ }
            n=$((n + 1))
            : >"$T/sess"
        else
            printf '%s\n' "$l" >>"$T/sess"
        fi
    done <"$4"
    [ -n "$cmd" ] && check_example "$page" "$line" whole "$cmd" "$units" "$T/sess"
    [ $n -gt 0 ] || { failed=$((failed + 1)); echo "FAILED: ${page#"$S"/}:$line: a session block without \"\$ \" lines"; }
}

# a verbose plan line against the rules table of gc3_info: $1 page, $2 line, $3 command, $4 file
check_rule() {
    local page=$1 line=$2 cmd=$3 plan why
    examples=$((examples + 1))
    plan=$(sed -E 's/ +/ /g' "$4" | sed -nE 's/^(.*[ (]|)(([a-z_]+) [^ ]+ bytes[^:]*: )?([a-z_]+) (LL128|LL|Simple), ([0-9]+) channel\(s\) x ([0-9]+) instance\(s\), rule ([^ ,]+),.*$/\3 \4 \5 \6 \7 \8/p')
    (cd "$W" && bash -c "$cmd") >"$T/out.raw" 2>&1 </dev/null
    if [ -z "$plan" ]; then
        why="not a plan line (ALGO PROTO, C channel(s) x I instance(s), rule SOURCE:N)"
    else
        # shellcheck disable=SC2086
        why=$(set -- $plan; [ $# = 5 ] && set -- "" "$@"
              awk -v coll="$1" -v algo="$2" -v proto="$3" -v ch="$4" -v inst="$5" -v rule="$6" '
                  $NF == rule { found = 1
                      w = (coll == "" || $1 == coll) && $3 == algo &&
                          ((proto == "Simple") == ($0 !~ / proto=/)) && (proto == "Simple" || $0 ~ (" proto=" proto " ")) &&
                          ((ch == 1) == ($0 !~ / channels=/)) && (ch == 1 || $0 ~ (" channels=" ch " ")) &&
                          ((inst == 1) == ($0 !~ / instances=/)) && (inst == 1 || $0 ~ (" instances=" inst " "))
                      if (!w) { print "rule " rule " is now: " $0; exit }
                  }
                  END { if (!found) print "no rule " rule " in the output" }' "$T/out.raw")
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: ${page#"$S"/}:$line: the plan line does not match \"$cmd\": $why"
        sed 's/^/    | /' "$4"
    fi
}

# every marked block of one page, in order
check_page() {
    local page=$1 kind=roff
    case $page in *.md) kind=md;; esac
    awk -v kind="$kind" -v dir="$T" -v cuda="$cuda" '
        function spec(s) { # "output-of: CMD  # vary: U..." -> mode, cmd, units
            units = ""
            if ((v = index(s, "  # vary without cuda:")) > 0) {
                units = cuda ? "" : substr(s, v + 22); s = substr(s, 1, v - 1)
            } else if ((v = index(s, "  # vary:")) > 0) { units = substr(s, v + 9); s = substr(s, 1, v - 1) }
            sub(/^ +/, "", units); sub(/ +$/, "", units); sub(/ +$/, "", s)
            if (s ~ /^output-of: /) { mode = "whole"; cmd = substr(s, 12) }
            else if (s ~ /^excerpt-of: /) { mode = "excerpt"; cmd = substr(s, 13) }
            else if (s == "session") { mode = "session"; cmd = "" }
            else if (s ~ /^session: /) { mode = "session"; cmd = substr(s, 10) }
            else if (s ~ /^rule-of: /) { mode = "rule"; cmd = substr(s, 10) }
            else { mode = "bad"; cmd = s }
        }
        kind == "roff" && /^\.\\" (output-of|excerpt-of|rule-of): |^\.\\" session/ {
            s = $0; sub(/^\.\\" /, "", s); spec(s); want = 1; mline = NR; next
        }
        kind == "md" && /^<!-- (output-of: |excerpt-of: |rule-of: |session).* -->$/ {
            s = $0; sub(/^<!-- /, "", s); sub(/ -->$/, "", s); spec(s); want = 1; mline = NR; next
        }
        want && mode == "rule" && !/^\./ {
            nb++; file = dir "/block" nb
            print > file; close(file)
            print mline "\037" mode "\037" units "\037" cmd > (dir "/blocks")
            want = 0; next
        }
        want && mode == "rule" { next }
        want && !inblk && ((kind == "roff" && /^\.EX/) || (kind == "md" && /^```/)) {
            inblk = 1; nb++; file = dir "/block" nb
            printf "" > file
            print mline "\037" mode "\037" units "\037" cmd > (dir "/blocks")
            next
        }
        inblk && ((kind == "roff" && /^\.EE/) || (kind == "md" && /^```/)) { inblk = 0; want = 0; close(file); next }
        inblk { print > file }
    ' "$page"
}

for page in "${files[@]}"; do
    rm -f "$T"/block* "$T/blocks"
    check_page "$page"
    [ -f "$T/blocks" ] || continue
    nb=0
    while IFS=$'\037' read -r line mode units cmd; do
        nb=$((nb + 1))
        f=$T/block$nb
        case $page in *.md) cp "$f" "$f.text";; *) unroff <"$f" >"$f.text";; esac
        case $mode in
        whole | excerpt) check_example "$page" "$line" "$mode" "$cmd" "$units" "$f.text";;
        session) check_session "$page" "$line" "$units" "$f.text" "$cmd";;
        rule) check_rule "$page" "$line" "$cmd" "$f.text";;
        *) failed=$((failed + 1)); echo "FAILED: ${page#"$S"/}:$line: not a marker: $cmd";;
        esac
    done <"$T/blocks"
done

# the README's main-job example runs what quickstart.sh's main job runs (its test_coll arguments)
qs_args=$(sed -n 's/.*"\$build\/tests\/mpi\/test_coll" \${mode\[@\]+"\${mode\[@\]}"} \(.*\) \\$/\1/p' "$S/contrib/quickstart.sh")
if [ -z "$qs_args" ]; then
    failed=$((failed + 1)); echo "FAILED: cannot find the arguments of test_coll in contrib/quickstart.sh"
elif grep -q "^<!-- output-of: .*build/tests/mpi/test_coll $qs_args " "$S/README.md"; then
    passed=$((passed + 1))
else
    failed=$((failed + 1)); echo "FAILED: README.md's main-job example does not run test_coll $qs_args as contrib/quickstart.sh does"
fi

# the comparison itself: a number changed, a line of another output and a wrong end are caught
printf 'rule built-in:41, verified\n' >"$T/e1"; printf 'a rule built-in:4, verified\n' >"$T/a1"
printf 'a\nb ...\n' >"$T/e2"; printf 'a\nc b d\n' >"$T/a2"
printf '1586 passed\n' >"$T/e3"; printf '11586 passed\n' >"$T/a3"; printf 'b ... d\n' >"$T/e4"
if ! matches "$T/e1" "$T/a1" excerpt >/dev/null && ! matches "$T/e2" "$T/a2" whole >/dev/null &&
   ! matches "$T/e3" "$T/a3" excerpt >/dev/null && matches "$T/e4" "$T/a2" excerpt >/dev/null; then
    passed=$((passed + 1))
else
    failed=$((failed + 1)); echo "FAILED: the comparison lets a changed example through"
fi
[ $examples -gt 0 ] || { failed=$((failed + 1)); echo "FAILED: no marked example found"; }

echo "test_doc_examples: $examples examples checked; $passed passed, $failed failed"
[ $failed -eq 0 ]
