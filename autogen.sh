#!/bin/sh
# Regenerate the autotools files (configure, Makefile.in). Run from the source root.
set -e
cd "$(dirname "$0")"
autoreconf --install --force --warnings=none >/dev/null
echo "autogen: configure is ready"
