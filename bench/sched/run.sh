#!/usr/bin/env bash
# bench/sched/run.sh [BUILD_DIR]
#
# sluice's event queues beside DPDK's software event devices, in one run:
# events per second through one queue, one producer and one consumer
# thread, bursts of 32, 1024 flows. For each of ROUNDS rounds, each after
# waiting for an idle box: sluice-bench-sched atomic / ordered / parallel
# (producer and scheduler on CPU0, consumer on CPU1), then
# ../shared/bench/dpdk/eventdev_2core_harness.sh with event_sw (atomic,
# ordered, parallel; its scheduler runs inline on the producer's CPU, as
# ours does) and event_dsw (atomic, parallel: it has no ordered queues and
# no priorities). Prints medians and ratios, then two sluice-only rows
# (atomic with events spread over the 8 priority levels; ordered with the
# consumer forwarding every event to the output, so the reorder window
# restores order), then callgrind instructions per event for enqueue +
# schedule + dequeue (one thread; BUILD_DIR-cg is built for x86-64-v2,
# since valgrind cannot run AVX-512 code).
#
# Environment: ROUNDS (3), SECS (3 per measurement), BURST (32),
# QUIET_MAX (60 s of waiting for an idle box per measurement),
# DPDK_DIR (../shared/bench/dpdk beside the repository), DPDK_MEM_MODE
# (for the harness, as the anchor scripts take it).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/sluice-bench-sched}
build_cg=${build}-cg
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-3}
BURST=${BURST:-32}
export QUIET_MAX=${QUIET_MAX:-60}
DPDK_DIR=${DPDK_DIR:-$root/../shared/bench/dpdk}
harness="$DPDK_DIR/eventdev_2core_harness.sh"
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-sched.XXXXXX")
trap 'rm -rf "$out"' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

[ -x "$harness" ] || { echo "no $harness (set DPDK_DIR)" >&2; exit 1; }
# The harness builds against libdpdk with gcc and pkg-config.
bench_need dpdk-test=dpdk
pkg-config --exists libdpdk 2>/dev/null || {
	bench_log "installing libdpdk-dev"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq dpdk-dev libdpdk-dev >/dev/null
}
bench_build "$build"
bench_build "$build_cg" -Dcpu_arch=x86-64-v2
ninja -C "$build" bench/sched/sluice-bench-sched >/dev/null
ninja -C "$build_cg" bench/sched/sluice-bench-sched >/dev/null
bench="$build/bench/sched/sluice-bench-sched"

median() { sort -g | awk '{a[NR]=$1} END { if (!NR) { print "nan"; exit } print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2 }'; }

sluice_run() { # name args...
	local name=$1; shift
	bench_wait_quiet
	"$bench" "$@" --secs "$SECS" --burst "$BURST" --cpus 0,1 2>/dev/null | tee -a "$out/raw" |
		grep -oE 'mpps=[0-9.]+' | cut -d= -f2 >> "$out/sluice-$name"
}
dpdk_run() { # dev sched
	local line
	line=$("$harness" "$1" "$2" "$BURST" "$BURST" 1 "$SECS" 2>/dev/null | grep -E '^run 1:') ||
		{ bench_log "harness $1 $2 failed"; echo nan >> "$out/$1-$2"; return 0; }
	echo "$line" >> "$out/raw"
	sed 's/.*Mpps=//' <<<"$line" >> "$out/$1-$2"
}

for r in $(seq 1 "$ROUNDS"); do
	bench_log "round $r of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))"
	for t in atomic ordered parallel; do
		sluice_run "$t" "$t"
		dpdk_run sw "$t"
		[ "$t" = ordered ] || dpdk_run dsw "$t"
	done
	sluice_run atomic-mixed atomic --prio mixed
	sluice_run ordered-out ordered-out
done

get() { [ -f "$out/$1" ] && median < "$out/$1" || echo nan; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "nan" || b == "nan" || b <= 0) print "-"; else printf "%.2fx", a / b }'; }
echo
echo "| one queue, 1 producer + 1 consumer, burst $BURST (Mpps, median of $ROUNDS) | sluice evq | event_sw | event_dsw | sluice/sw | sluice/dsw |"
echo "|---|---|---|---|---|---|"
for t in atomic ordered parallel; do
	s=$(get "sluice-$t") w=$(get "sw-$t") d=nan
	[ "$t" = ordered ] || d=$(get "dsw-$t")
	dd=$d; [ "$t" = ordered ] && dd="no ordered queues"
	echo "| $t | $s | $w | $dd | $(ratio "$s" "$w") | $(ratio "$s" "$d") |"
done
echo "| atomic, events over the 8 priority levels | $(get sluice-atomic-mixed) | | | | |"
echo "| ordered, every event forwarded and restored in order at the output | $(get sluice-ordered-out) | | | | |"
echo "(CPU0: producer + scheduler (sluice; event_sw runs its service inline) or producer alone (dsw); CPU1: consumer)"

echo
bench_log "callgrind: instructions per event, enqueue + schedule + dequeue, one thread"
rounds=20000
printf '| callgrind, burst %s, one thread | instructions per event |\n|---|---|\n' "$BURST"
for m in atomic ordered parallel ordered-out; do
	( cd "$out" && timeout 300 valgrind --tool=callgrind --toggle-collect=evq_bench_rounds \
		--callgrind-out-file="$out/cg-$m.out" "$build_cg/bench/sched/sluice-bench-sched" "$m" --rounds "$rounds" \
		--burst "$BURST" >/dev/null 2>&1 )
	# inclusive cost of the library's calls, without the bench making its events
	ir=$(callgrind_annotate --inclusive=yes "$out/cg-$m.out" 2>/dev/null |
		awk '/=>/ { next } /:evq_(enqueue|schedule|port_dequeue|port_forward|output) \[/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
	what="enqueue + schedule + dequeue"
	[ "$m" = ordered-out ] && what="$what + forward + schedule + output"
	echo "| $m ($what) | $(awk -v i="$ir" -v n=$((rounds * BURST)) 'BEGIN { printf "%.1f", i / n }') |"
done
