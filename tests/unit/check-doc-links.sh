#!/usr/bin/env bash
# Checks the documentation of a source tree: every relative link of README.md and of doc/**/*.md
# ([text](path), [text](path#anchor), [text](#anchor), images too) names a file or folder that
# exists, and an anchor into a Markdown file names one of its headings (GitHub's slugs); the README
# names no commit (a word of 7 to 40 hex digits with a digit and a letter, or one that git resolves
# to a commit of the tree's repository) and no file of the
# GPU machine's .device/ folder, which users do not have. Links inside code are not links.
# Usage: check-doc-links.sh [--quiet] SOURCE_ROOT
# Prints one line per problem (FILE:LINE: ...) and "doc links: N passed, M failed"; exit 1 on any.
set -u
export LC_ALL=C
quiet=0
[ "${1:-}" = --quiet ] && { quiet=1; shift; }
case "${1:-}" in -h|--help|"") sed -n '2,8p' "$0" | sed 's/^# \{0,1\}//'; [ -n "${1:-}" ]; exit $?;; esac
root=$1
cd "$root" || { echo "check-doc-links: cannot enter $root"; exit 2; }

# the Markdown text outside fenced code blocks and inline code, as FILE<TAB>LINE<TAB>TEXT
prose() {
    awk -v f="$1" '
        /^[ \t]*```/ { fence = !fence; next }
        !fence { line = $0; gsub(/`[^`]*`/, "", line); printf "%s\t%d\t%s\n", f, NR, line }' "$1"
}
# GitHub's anchor of each heading of a Markdown file (outside code blocks), one a line
anchors() {
    awk '
        /^[ \t]*```/ { fence = !fence; next }
        !fence && /^#+ / {
            h = $0; sub(/^#+ +/, "", h); sub(/ +#* *$/, "", h); h = tolower(h)
            gsub(/[^a-z0-9 _-]/, "", h); gsub(/ /, "-", h)
            if (seen[h]++) h = h "-" (seen[h] - 1)
            print h
        }' "$1"
}

files=(README.md)
while IFS= read -r f; do files+=("$f"); done < <(find doc -name '*.md' 2>/dev/null | sort)
fail=0; links=0
problem() { echo "$1"; fail=$((fail + 1)); }

for f in "${files[@]}"; do
    [ -f "$f" ] || { problem "$f: missing"; continue; }
    dir=$(dirname "$f")
    while IFS=$'\t' read -r file lineno target; do
        links=$((links + 1))
        target=${target%% *}                       # [text](path "title")
        case "$target" in http://*|https://*|mailto:*) continue;; esac
        path=${target%%#*}
        anchor=""; [[ "$target" == *"#"* ]] && anchor=${target#*#}
        if [ -z "$path" ]; then resolved=$file; elif [ "$dir" = . ]; then resolved=$path; else resolved="$dir/$path"; fi
        if [ ! -e "$resolved" ]; then
            problem "$file:$lineno: link to $target: no such file or folder ($resolved)"
            continue
        fi
        if [ -n "$anchor" ]; then
            case "$resolved" in
                *.md) anchors "$resolved" | grep -qxF -- "$anchor" ||
                          problem "$file:$lineno: link to $target: $resolved has no heading with the anchor #$anchor";;
                *) problem "$file:$lineno: link to $target: an anchor into a file that is not Markdown";;
            esac
        fi
    done < <(prose "$f" | awk -F'\t' '{
                 text = $3
                 while (match(text, /\]\([^)]*\)/)) {
                     printf "%s\t%s\t%s\n", $1, $2, substr(text, RSTART + 2, RLENGTH - 3)
                     text = substr(text, RSTART + RLENGTH)
                 }
             }')
done

# the README: no commit hashes, no .device/ files
if [ -f README.md ]; then
    while IFS=: read -r lineno word; do
        problem "README.md:$lineno: '$word' looks like a commit hash: the README is for users (history: NEWS, figures: doc/performance.md)"
    done < <(grep -noE '\b[0-9a-f]{7,40}\b' README.md | while IFS=: read -r n w; do
                 # digits and letters, or (all digits, as 2771321 is) a commit of this repository
                 if [[ "$w" =~ [0-9] && "$w" =~ [a-f] ]] ||
                    git -C . rev-parse --quiet --verify "$w^{commit}" >/dev/null 2>&1; then echo "$n:$w"; fi
             done)
    while IFS=: read -r lineno _; do
        problem "README.md:$lineno: names a file of .device/, which users do not have"
    done < <(grep -nE '(^|[^A-Za-z_])\.device/' README.md)
fi

[ $quiet = 1 ] || echo "checked ${#files[@]} files, $links links"
if [ $fail = 0 ]; then echo "doc links: 1 passed, 0 failed"; else echo "doc links: 0 passed, 1 failed ($fail problems)"; fi
[ $fail = 0 ]
