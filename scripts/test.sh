#!/usr/bin/env bash
# Build sluice and run every test (unit suites and integration tests).
# Extra arguments go to `meson test`, e.g. scripts/test.sh --suite graph
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh test
builddir=${BUILDDIR:-build}
[ -f "$builddir/build.ninja" ] || meson setup "$builddir" >/dev/null
ninja -C "$builddir"
meson test -C "$builddir" --print-errorlogs "$@"
