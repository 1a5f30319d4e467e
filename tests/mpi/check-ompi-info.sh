#!/usr/bin/env bash
# ompi_info must list coll/gc3 and show each of its MCA parameters with a help text; the MCA
# PARAMETERS section of the manual, coll_gc3(7), must have one entry per parameter ompi_info shows,
# exactly those, each headed
#     .TP
#     .BR coll_gc3_NAME " (TYPE[: V1|V2|...]; default DEFAULT; level LEVEL)"
# with ompi_info's type, named values (enumerated ints; not bools), default ("(empty)" for an empty
# string) and level, so the manual cannot drift from the component's parameter table
# (coll_gc3_params.h). An entry of that section not in this layout is an error too.
# Usage: check-ompi-info.sh OMPI_INFO COMPONENT_PATH MAN_PAGE
set -u
# ompi_info reads the component path before its command line: pass it through the environment
run_info() { OMPI_MCA_mca_base_component_path="$2" "$1" --param coll gc3 --level 9 "${@:3}" 2>&1; }
out=$(run_info "$1" "$2")
echo "$out"
page=$3
fail=0
echo "$out" | grep -q 'MCA coll: gc3' || { echo "FAIL: ompi_info does not list coll/gc3"; fail=1; }
# every parameter comes with a help text (the line after the parameter line is indented text)
n_params=$(echo "$out" | grep -c 'MCA coll gc3: parameter')
n_help=$(echo "$out" | grep -A1 'MCA coll gc3: parameter' | grep -cE '^ {25,}[A-Za-z]')
[ "$n_params" -gt 0 ] && [ "$n_params" = "$n_help" ] || { echo "FAIL: $n_params parameters, $n_help help texts"; fail=1; }

# NAME TYPE VALUES DEFAULT LEVEL, one line per parameter, sorted: ompi_info's (parsable) ...
shown=$(run_info "$1" "$2" --parsable | awk -F: '
    $1 == "mca" && $4 == "param" && $5 ~ /^coll_gc3_/ {
        n = substr($5, 10); names[n] = 1; v = $0; for (i = 0; i < 6; i++) sub(/^[^:]*:/, "", v) # mawk: no {6}
        if ($6 == "value") val[n] = v
        else if ($6 == "type") type[n] = v
        else if ($6 == "level") level[n] = v
        else if ($6 == "enumerator") { e = v; sub(/^[^:]*:/, "", e); sub(/^[^:]*:/, "", e); en[n] = en[n] (en[n] == "" ? "" : "|") e }
    }
    END {
        for (n in names) {
            d = val[n]
            if (type[n] == "double" && d ~ /^-?[0-9]+\.[0-9]+$/) { sub(/0+$/, "", d); sub(/\.$/, "", d) }
            if (d == "") d = "(empty)"
            printf "%s %s %s %s %s\n", n, type[n], (type[n] == "bool" || en[n] == "") ? "-" : en[n], d, level[n]
        }
    }' | sort)
# ... and the manual's
documented=$(awk '/^\.SH / { p = ($0 ~ /^\.SH "?MCA PARAMETERS"?[ \t]*$/); next } p' "$page" |
    awk 'tp { tp = 0; print; next } /^\.TP/ { tp = 1 }' | sed -E 's/\\-/-/g' |
    awk '{
        if (match($0, /^\.BR coll_gc3_[a-z0-9_]+ " \([a-z]+(: [A-Za-z0-9_|-]+)?; default [^;]*; level [0-9]+\)"$/)) {
            line = $0; sub(/^\.BR coll_gc3_/, "", line); n = line; sub(/ .*/, "", n)
            sub(/^[^"]*" \(/, "", line); sub(/\)"$/, "", line)
            split(line, f, "; ")
            t = f[1]; vals = "-"; if (t ~ /: /) { vals = t; sub(/^[^:]*: /, "", vals); sub(/:.*/, "", t) }
            d = f[2]; sub(/^default /, "", d); l = f[3]; sub(/^level /, "", l)
            printf "%s %s %s %s %s\n", n, t, vals, d, l
        } else print "BAD-ENTRY " $0
    }' | sort)
[ -n "$shown" ] || { echo "FAIL: ompi_info --parsable shows no parameter values"; fail=1; }
if echo "$documented" | grep -q '^BAD-ENTRY'; then
    echo "FAIL: entries of $page's MCA PARAMETERS not in the layout .BR coll_gc3_NAME \" (TYPE[: VALUES]; default D; level L)\":"
    echo "$documented" | sed -n 's/^BAD-ENTRY /  /p'
    fail=1
fi
if [ "$shown" != "$documented" ]; then
    echo "FAIL: the manual's parameters and ompi_info differ (< ompi_info, > $page; name type values default level):"
    diff <(echo "$shown") <(echo "$documented" | grep -v '^BAD-ENTRY') | grep '^[<>]'
    fail=1
else
    echo "coll_gc3(7) MCA PARAMETERS: $(echo "$shown" | wc -l) parameters with their types, values, defaults and levels, as ompi_info shows them"
fi
if [ $fail = 0 ]; then echo "ompi_info: 1 passed, 0 failed"; else echo "ompi_info: 0 passed, 1 failed"; fi
exit $fail
