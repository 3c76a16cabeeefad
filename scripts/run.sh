#!/usr/bin/env bash
# Build sluice and run it. With no arguments it runs the embedded default
# configuration (the packet generator feeding the graph; no NIC needed).
# Extra arguments go to sluice, e.g. scripts/run.sh -c startup.conf
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
exec build/app/sluice "$@"
