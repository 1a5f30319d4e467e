# What the shell tests of made-up inputs share (sourced; bash): a temporary folder $T (removed at
# exit), and checks on the output the test put in $out.
#   ok WHAT COMMAND...   one check: passes when COMMAND succeeds, else prints WHAT and $out
#   has TEXT, hasnt TEXT $out contains TEXT, or does not
#   checks_done NAME     prints "NAME: N passed, M failed"; its status is the test's
# shellcheck shell=bash
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
passed=0 failed=0 out=""
ok() {
    local what=$1
    shift
    if "$@"; then passed=$((passed + 1)); else failed=$((failed + 1)); echo "FAILED: $what"; echo "$out" | sed 's/^/    /'; fi
}
has() { grep -qF -- "$1" <<<"$out"; }
hasnt() { ! grep -qF -- "$1" <<<"$out"; }
checks_done() {
    echo "$1: $passed passed, $failed failed"
    [ $failed -eq 0 ]
}
