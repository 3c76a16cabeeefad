#!/usr/bin/env bash
# Draw docs/default-graph.svg again: run sluice on the default configuration
# (the repo's startup.conf, which is the built-in default written out) for a
# few seconds with its CLI socket in a temporary directory, then render
# `show graph dot` with graphviz's dot (Debian package graphviz). Solid arcs
# are the ones packets took, labelled with their counts.
#
#   scripts/default-graph.sh [SECONDS]      (default 5)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-5}
command -v dot >/dev/null || { echo "dot not found: apt-get install graphviz" >&2; exit 1; }
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
tmp=$(mktemp -d /tmp/sluice-graph-XXXXXX)
pid=
cleanup() {
	[ -n "$pid" ] && kill -TERM "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
sed "s|/run/sluice/cli.sock|$tmp/cli.sock|" startup.conf > "$tmp/startup.conf"
build/app/sluice -c "$tmp/startup.conf" 2> "$tmp/err" &
pid=$!
for _ in $(seq 200); do
	grep -q "main: running" "$tmp/err" && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/err" >&2; exit 1; }
	sleep 0.1
done
sleep "$secs"
build/cli/sluicectl -s "$tmp/cli.sock" show graph dot > "$tmp/graph.dot"
dot -Tsvg "$tmp/graph.dot" > docs/default-graph.svg
echo "docs/default-graph.svg: $(grep -c -- '->' "$tmp/graph.dot") arcs, after ${secs}s"
