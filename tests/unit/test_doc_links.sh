#!/usr/bin/env bash
# unit_doc_links: the documentation of the source tree passes check-doc-links.sh (every relative
# link of README.md and doc/ resolves, anchors included; the README names no commit and no .device/
# file), and the checker finds each kind of problem planted in a made-up tree.
# Usage: test_doc_links.sh SOURCE_ROOT
set -u
src=$1
check="$src/tests/unit/check-doc-links.sh"
pass=0; fail=0
ok()  { echo "ok: $1"; pass=$((pass + 1)); }
bad() { echo "FAIL: $1"; fail=$((fail + 1)); }

# 1. the real tree
if out=$("$check" "$src" 2>&1); then ok "the source tree's README.md and doc/ ($(echo "$out" | head -1))"
else echo "$out"; bad "the source tree's documentation"; fi

# 2. a made-up tree with one problem of each kind, and links that are fine
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
mkdir -p "$t/doc/design"
cat > "$t/README.md" <<'EOF'
# Title

## Good section × two

[fine](doc/a.md) [fine anchor](doc/a.md#the-heading) [own](#good-section--two) [folder](doc/)
[web](https://example.org/x) `[in code](missing-in-code.md)`

```
[in a block](missing-in-block.md) ebb20fb
```

[broken](doc/missing.md) [bad anchor](doc/a.md#no-such-heading) [own bad](#nowhere)
Since c11955d it is faster; 2097153 bytes is a number, not a commit.
source .device/env.sh first
EOF
cat > "$t/doc/a.md" <<'EOF'
# The heading

[up](../README.md#title) [sibling](design/b.md) [broken](design/gone.md)
EOF
echo "# B" > "$t/doc/design/b.md"
# a commit of the tree's own repository, even one of digits only, is found through git
if command -v git >/dev/null && git -C "$t" init -q 2>/dev/null &&
   git -C "$t" -c user.name=t -c user.email=t@t add -A && git -C "$t" -c user.name=t -c user.email=t@t commit -qm t; then
    echo "see $(git -C "$t" rev-parse --short=9 HEAD) for the figures" >> "$t/README.md"
    planted=8
else
    echo "(no git: the lookup of the repository's commits is not exercised)"; planted=7
fi
out=$("$check" "$t" 2>&1); rc=$?
[ $rc != 0 ] && ok "a tree with problems fails (exit $rc)" || bad "a tree with problems passed"
expect() { # expected line (a fixed string) in the checker's output
    if echo "$out" | grep -qF -- "$1"; then ok "reported: $1"; else bad "not reported: $1"; fi
}
expect "README.md:12: link to doc/missing.md: no such file or folder"
expect "README.md:12: link to doc/a.md#no-such-heading: doc/a.md has no heading with the anchor #no-such-heading"
expect "README.md:12: link to #nowhere: README.md has no heading with the anchor #nowhere"
expect "README.md:9: 'ebb20fb' looks like a commit hash"
expect "README.md:13: 'c11955d' looks like a commit hash"
expect "README.md:14: names a file of .device/"
expect "doc/a.md:3: link to design/gone.md: no such file or folder"
[ $planted = 8 ] && expect "README.md:15: '$(git -C "$t" rev-parse --short=9 HEAD)' looks like a commit hash"
n=$(echo "$out" | grep -c '^README.md:\|^doc/')
[ "$n" = $planted ] && ok "exactly the $planted planted problems, no others" || { echo "$out"; bad "$n problems reported, $planted planted"; }

echo "doc links: $pass passed, $fail failed"
[ $fail = 0 ]
