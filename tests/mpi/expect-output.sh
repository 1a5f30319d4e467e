#!/usr/bin/env bash
# Run a command; pass when it succeeds and its output (stdout + stderr) contains every pattern
# (and none of the patterns written !PATTERN; a pattern written #N:PATTERN must be on exactly N
# lines: a message said once, not once per rank). On failure the whole output is kept in
# ./expect-output-failed.XXXXXX.log (the test's folder), whose name it prints.
# Usage: expect-output.sh PATTERN [PATTERN...] -- COMMAND [ARGS...]
set -u
pats=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do pats+=("$1"); shift; done
shift
out=$("$@" 2>&1)
rc=$?
echo "$out" | tail -n 30
# failure reports scrolled out of the tail: show the first of them too
lost=$(echo "$out" | head -n -30 | grep -E "FAILED|FAIL:|got .* want" | head -n 20)
[ -z "$lost" ] || { echo "-- failure lines from earlier in the output:"; echo "$lost"; }
fail=0
[ $rc -eq 0 ] || { echo "FAIL: exit status $rc"; fail=1; }
for p in "${pats[@]}"; do
    if [[ "$p" =~ ^#([0-9]+):(.*)$ ]]; then
        n=$(echo "$out" | grep -cF -- "${BASH_REMATCH[2]}")
        [ "$n" = "${BASH_REMATCH[1]}" ] || { echo "FAIL: output has $n lines with: ${BASH_REMATCH[2]} (want ${BASH_REMATCH[1]})"; fail=1; }
    elif [ "${p#!}" != "$p" ]; then
        ! echo "$out" | grep -qF -- "${p#!}" || { echo "FAIL: output has: ${p#!}"; fail=1; }
    else
        echo "$out" | grep -qF -- "$p" || { echo "FAIL: output lacks: $p"; fail=1; }
    fi
done
if [ $fail -ne 0 ]; then
    # the whole output (the tail above may lack the line that says why): a file in the test's folder
    keep=$(mktemp "${PWD}/expect-output-failed.XXXXXX.log" 2>/dev/null) && printf '%s\n' "$out" > "$keep" &&
        echo "expect-output: the whole output ($(echo "$out" | wc -l) lines) is in $keep"
fi
if [ $fail -eq 0 ]; then echo "expect-output: 1 passed, 0 failed"; else echo "expect-output: 0 passed, 1 failed"; fi
exit $fail
