#!/usr/bin/env bash
# Run `gc3c verify` over the corpus: every valid/*.xml and msccl/*.xml (in-place programs in MSCCL's
# form) must pass, every invalid/*.xml must
# fail with exit status 1 and print each line of its .expect file. A .post file beside an
# XML file is its postcondition table. Usage: check-corpus.sh GC3C CORPUS_DIR
set -u
gc3c=$1
dir=$2
pass=0
fail=0
for f in "$dir"/valid/*.xml "$dir"/msccl/*.xml "$dir"/invalid/*.xml; do
    post=()
    [ -f "${f%.xml}.post" ] && post=(--post "${f%.xml}.post")
    # run from the file's folder so messages carry the bare file name, as in the .expect files
    out=$(cd "$(dirname "$f")" && "$gc3c" verify "${post[@]}" "$(basename "$f")" 2>&1)
    rc=$?
    case "$f" in
    */valid/* | */msccl/*)
        if [ $rc -eq 0 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL (should verify): $f"; echo "$out"; fi
        ;;
    *)
        ok=1
        [ $rc -eq 1 ] || { ok=0; echo "FAIL: $f: exit status $rc, expected 1"; }
        [ -s "${f%.xml}.expect" ] || { ok=0; echo "FAIL: $f has no .expect file"; }
        while IFS= read -r line; do
            case "$out" in *"$line"*) ;; *) ok=0; echo "FAIL: $f: missing diagnostic: $line";; esac
        done < "${f%.xml}.expect"
        if [ $ok -eq 1 ]; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "--- output was:"; echo "$out"; fi
        ;;
    esac
done
echo "corpus: $pass passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
