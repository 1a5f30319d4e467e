#!/usr/bin/env bash
# ompi_info must list coll/gc3 and show each of its MCA parameters with a help text; the README's
# parameter table (rows "| `coll_gc3_NAME` | DEFAULT | ...") must name exactly the parameters
# ompi_info shows, each with the default ompi_info reports ("(empty)" for an empty string), so the
# documentation cannot drift from the component's parameter table (coll_gc3_params.h).
# Usage: check-ompi-info.sh OMPI_INFO COMPONENT_PATH README
set -u
# ompi_info reads the component path before its command line: pass it through the environment
run_info() { OMPI_MCA_mca_base_component_path="$2" "$1" --param coll gc3 --level 9 "${@:3}" 2>&1; }
out=$(run_info "$1" "$2")
echo "$out"
fail=0
echo "$out" | grep -q 'MCA coll: gc3' || { echo "FAIL: ompi_info does not list coll/gc3"; fail=1; }
# every parameter comes with a help text (the line after the parameter line is indented text)
n_params=$(echo "$out" | grep -c 'MCA coll gc3: parameter')
n_help=$(echo "$out" | grep -A1 'MCA coll gc3: parameter' | grep -cE '^ {25,}[A-Za-z]')
[ "$n_params" -gt 0 ] && [ "$n_params" = "$n_help" ] || { echo "FAIL: $n_params parameters, $n_help help texts"; fail=1; }

# name=default, sorted: ompi_info's (parsable) and the README's
shown=$(run_info "$1" "$2" --parsable | sed -nE 's/^mca:coll:gc3:param:coll_gc3_([a-z_]+):value:(.*)$/\1=\2/p' |
        sed -E 's/=([0-9]+)\.0+$/=\1/; s/=$/=(empty)/' | sort)
documented=$(sed -nE 's/^\| `coll_gc3_([a-z_]+)` \| `?([^|`]*[^|` ])`? *\|.*$/\1=\2/p' "$3" | sort)
[ -n "$shown" ] || { echo "FAIL: ompi_info --parsable shows no parameter values"; fail=1; }
if [ "$shown" != "$documented" ]; then
    echo "FAIL: the README's parameter table and ompi_info differ (< ompi_info, > README):"
    diff <(echo "$shown") <(echo "$documented") | grep '^[<>]'
    fail=1
else
    echo "README parameter table: $(echo "$shown" | wc -l) parameters with their defaults, as ompi_info shows them"
fi
if [ $fail = 0 ]; then echo "ompi_info: 1 passed, 0 failed"; else echo "ompi_info: 0 passed, 1 failed"; fi
exit $fail
