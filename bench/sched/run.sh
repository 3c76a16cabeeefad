#!/usr/bin/env bash
# bench/sched/run.sh: sluice's event queues beside DPDK's software event
# devices, in one run.
#
# The work, the same on both sides: one queue (atomic, ordered or
# parallel), one producer and one consumer, events of a 64-bit counter in
# bursts of 32 (enqueue and dequeue), 1024 flows round robin (sluice's
# atomic queue gets 1024 flow slots, the peer 1024 flows and flow ids), the
# producer on CPU0 running the scheduler inline after every enqueue burst
# and the consumer on CPU1 dequeuing with implicit release and summing the
# counters. sluice: sluice-bench-sched (evq_perf.c). Peer:
# sluice-peer-eventdev (peer_eventdev.c, ours, built here with cc against
# Debian's libdpdk, never by meson) through the public rte_eventdev API with
# event_sw (--vdev=event_sw0; its scheduler is a service the producer's
# lcore runs inline, rte_service_run_iter_on_app_lcore) and event_dsw
# (--vdev=event_dsw0: distributed, scheduling inside enqueue and dequeue;
# it has no ordered queues). An ordered queue's reorder window is 1024
# events on both (evq's default window; the peer's sequence numbers). Port
# depth: sluice's port ring and the peer consumer's dequeue depth are both
# DEPTH (128, event_sw's maximum, which sizes its completion ring;
# event_dsw's input ring is its own, deeper).
# Memory as bench_mem_mode sets it: 2 MB hugepages on both sides (DPDK
# --in-memory; evq's memory in one MAP_HUGETLB mapping), or 4 KB pages on
# both (--no-huge).
#
# For each of ROUNDS rounds, each measurement after waiting for a quiet box:
# per type sluice ($isa: -march= Debian's DPDK baseline) then event_sw then
# event_dsw; sluice -march=native atomic; two sluice-only figures (atomic
# with events over the 8 priority levels; ordered with every event forwarded
# to the output, where the reorder window restores order); with BEFORE=REV
# that revision's $before_isa per type. Then callgrind instructions per
# event for enqueue + schedule + dequeue on one thread ($isa build: valgrind
# cannot run AVX-512). A peer that fails fails the bench.
#
# Rows (bench_row): per type sluice $isa vs event_sw and vs event_dsw (not
# ordered), matched; atomic with sluice -march=native vs event_sw (differs:
# ISA); with BEFORE, "sluice at REV" per type vs event_sw. Figures are Mpps,
# events dequeued by the consumer per second, median over rounds.
#
# Environment: ROUNDS (3), SECS (3 s per measurement), WARMUP (1 s),
# DEPTH (128), CG_ROUNDS (20000 bursts under callgrind), QUIET_MAX (60),
# DPDK_MEM_MODE (huge|nohuge), BEFORE (a git revision), QUICK (1: one round,
# SECS 0.5, WARMUP 0.2, CG_ROUNDS 2000, no waiting for a quiet box),
# BENCH_BUILD_ROOT (the shared builds), BENCH_ROWS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=1 SECS=${SECS:-0.5} WARMUP=${WARMUP:-0.2} CG_ROUNDS=${CG_ROUNDS:-2000}
fi
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-3}
WARMUP=${WARMUP:-1}
BURST=32
FLOWS=1024
DEPTH=${DEPTH:-128}
CG_ROUNDS=${CG_ROUNDS:-20000}
export QUIET_MAX=${QUIET_MAX:-60}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-sched.XXXXXX")
trap 'rm -rf "$out"' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

bench_need
bench_need_peer dpdk-test
bench_need_libdpdk
bench_builds bench/sched/sluice-bench-sched
bench_mem_mode
peer_isa=$(bench_peer_isa)
rel=bench/sched/sluice-bench-sched
mem_text=$mem_label
[ "${#sluice_mem[@]}" -gt 0 ] || mem_text="$mem_label; evq's memory in one MAP_HUGETLB mapping"

# The peer: ours, against Debian's libdpdk, with sluice's build's -O2 -g
# (rte_event_maintain is experimental in DPDK 22.11).
peer="$out/sluice-peer-eventdev"
# shellcheck disable=SC2046
cc -O2 -g -Wall -Wextra -Werror -DALLOW_EXPERIMENTAL_API $(pkg-config --cflags libdpdk) \
	-o "$peer" "$here/peer_eventdev.c" $(pkg-config --libs libdpdk) 2>"$out/peer-cc.log" ||
	{ cat "$out/peer-cc.log" >&2; echo "bench/sched: the peer harness did not build" >&2; exit 1; }

fail() { echo "bench/sched: $*" >&2; exit 1; }
n=0

# sluice_run FILE BIN MODE [ARGS...]: one measurement, its Mpps into $out/FILE.
sluice_run() {
	local file=$1 bin=$2 line pages=2M
	shift 2
	[ "${#sluice_mem[@]}" -eq 0 ] || pages=4K
	bench_wait_quiet
	line=$(timeout 120 "$bin" "$@" --secs "$SECS" --warmup "$WARMUP" --burst "$BURST" --depth "$DEPTH" \
		--cpus 0,1 "${sluice_mem[@]}" 2>>"$out/sluice.err") || { cat "$out/sluice.err" >&2; fail "$bin $* failed"; }
	echo "$file: $line" >>"$out/raw"
	grep -q " pages=$pages " <<<"$line" || fail "$file ran on the wrong pages: $line"
	grep -oE 'mpps=[0-9.]+' <<<"$line" | cut -d= -f2 >>"$out/$file"
}

# peer_run DEV TYPE: one measurement of event_DEV, its Mpps into $out/DEV-TYPE.
peer_run() {
	local line
	n=$((n + 1))
	bench_wait_quiet
	line=$(timeout 120 "$peer" -l 0,1 --main-lcore 0 --no-pci --no-telemetry "${dpdk_mem[@]}" \
		--file-prefix="sluice-sched-$$-$n" --vdev="event_${1}0" --log-level=lib.eal:error \
		-- "$2" --secs "$SECS" --warmup "$WARMUP" --burst "$BURST" --flows "$FLOWS" --depth "$DEPTH" \
		2>"$out/peer.err") || { cat "$out/peer.err" >&2; fail "peer event_$1 $2 failed: a missing peer fails the bench"; }
	echo "$1-$2: $line" >>"$out/raw"
	grep -oE 'mpps=[0-9.]+' <<<"$line" | cut -d= -f2 >>"$out/$1-$2"
}

types=(atomic ordered parallel)
for r in $(seq 1 "$ROUNDS"); do
	bench_log "round $r of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))"
	for t in "${types[@]}"; do
		sluice_run "isa-$t" "$isa/$rel" "$t"
		peer_run sw "$t"
		[ "$t" = ordered ] || peer_run dsw "$t"
	done
	sluice_run native-atomic "$native/$rel" atomic
	sluice_run isa-atomic-mixed "$isa/$rel" atomic --prio mixed
	sluice_run isa-ordered-out "$isa/$rel" ordered-out
	if [ -n "$before_isa" ]; then
		for t in "${types[@]}"; do sluice_run "before-$t" "$before_isa/$rel" "$t"; done
	fi
done

# ---- the bench's own table ----------------------------------------------------
vals() { tr '\n' ' ' <"$out/$1"; }
med() { bench_mmm <"$out/$1" | cut -d' ' -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
echo
echo "| one queue, 1 producer + 1 consumer, burst $BURST, $FLOWS flows, port depth $DEPTH (Mpps, median of $ROUNDS) | sluice -march=$peer_isa | event_sw | event_dsw | sluice/sw | sluice/dsw |"
echo "|---|---|---|---|---|---|"
for t in "${types[@]}"; do
	s=$(med "isa-$t") w=$(med "sw-$t")
	if [ "$t" = ordered ]; then
		echo "| $t | $s | $w | no ordered queues | $(ratio "$s" "$w") | |"
	else
		d=$(med "dsw-$t")
		echo "| $t | $s | $w | $d | $(ratio "$s" "$w") | $(ratio "$s" "$d") |"
	fi
done
echo "| atomic, sluice -march=native | $(med native-atomic) | | | $(ratio "$(med native-atomic)" "$(med sw-atomic)") | $(ratio "$(med native-atomic)" "$(med dsw-atomic)") |"
echo "| atomic, events over the 8 priority levels (sluice only) | $(med isa-atomic-mixed) | | | | |"
echo "| ordered, every event forwarded and restored in order at the output (sluice only) | $(med isa-ordered-out) | | | | |"
if [ -n "$before_isa" ]; then
	for t in "${types[@]}"; do
		echo "| $t, $before_label (-march=$peer_isa) | $(med "before-$t") | | | $(ratio "$(med "before-$t")" "$(med "sw-$t")") | |"
	done
fi
echo "(CPU0: producer + scheduler (sluice; event_sw's service run inline) or producer alone (event_dsw); CPU1: consumer. Memory: $mem_text)"
if [ -n "$before_isa" ]; then
	for t in "${types[@]}"; do
		echo "before/after, $t: $before_label $(med "before-$t") Mpps -> now $(med "isa-$t") Mpps ($(ratio "$(med "isa-$t")" "$(med "before-$t")"))"
	done
fi

# ---- callgrind --------------------------------------------------------------
echo
bench_log "callgrind: instructions per event, enqueue + schedule + dequeue, one thread"
printf '| callgrind, burst %s, one thread, -march=%s | instructions per event |\n|---|---|\n' "$BURST" "$peer_isa"
for m in atomic ordered parallel ordered-out; do
	(cd "$out" && timeout 300 valgrind --tool=callgrind --toggle-collect=evq_bench_rounds \
		--callgrind-out-file="$out/cg-$m.out" "$isa/$rel" "$m" --rounds "$CG_ROUNDS" \
		--burst "$BURST" --depth "$DEPTH" --no-huge >/dev/null 2>&1) || fail "callgrind $m failed"
	# inclusive cost of the library's calls, without the bench making its events
	ir=$(callgrind_annotate --inclusive=yes "$out/cg-$m.out" 2>/dev/null |
		awk '/=>/ { next } /:evq_(enqueue|schedule|port_dequeue|port_forward|output) \[/ { gsub(",", "", $1); s += $1 } END { print s + 0 }')
	what="enqueue + schedule + dequeue"
	[ "$m" = ordered-out ] && what="$what + forward + schedule + output"
	echo "| $m ($what) | $(awk -v i="$ir" -v n=$((CG_ROUNDS * BURST)) 'BEGIN { printf "%.1f", i / n }') |"
done

# ---- rows -------------------------------------------------------------------
matched=(--bench sched --unit Mpps --better higher --burst "$BURST both (enqueue and dequeue)"
	--memory "$mem_text" --statistic "median over rounds of each round's mean rate (events dequeued / s over $SECS s)")
peer_name() { [ "$1" = sw ] && echo "DPDK event_sw (scheduler service inline on CPU0)" || echo "DPDK event_dsw (distributed)"; }
for t in "${types[@]}"; do
	what="$t queue: 1 producer (CPU0) + 1 consumer (CPU1), $FLOWS flows, port depth $DEPTH"
	for d in sw dsw; do
		[ "$t:$d" != ordered:dsw ] || continue
		bench_row "${matched[@]}" --what "$what" --isa "both -march=$peer_isa" \
			--sluice "$(vals "isa-$t")" --peer-name "$(peer_name $d)" --peer "$(vals "$d-$t")"
		if [ "$t:$d" = atomic:sw ]; then
			bench_row "${matched[@]}" --what "$what" --isa "sluice $native_label, DPDK -march=$peer_isa" \
				--differs "ISA: sluice -march=native" --sluice-label "sluice -march=native" \
				--sluice "$(vals native-atomic)" --peer-name "$(peer_name sw)" --peer "$(vals sw-atomic)"
		fi
	done
	[ -z "$before_isa" ] || bench_row "${matched[@]}" --what "$what" --isa "both -march=$peer_isa" \
		--sluice-label "$before_label" --sluice "$(vals "before-$t")" --peer-name "$(peer_name sw)" --peer "$(vals "sw-$t")"
done
echo
bench_report
