#!/usr/bin/env bash
# bench/sched/run.sh: the daemon's scheduling path with a worker beside
# DPDK's software event devices, in one run.
#
# What is compared. sluice (sluice-bench-sched, sched_perf.c) runs the code
# the daemon runs when scheduling classes are defined and distributor
# workers run (nodes/sched/sched_io.h): events enter one class queue of the
# priority stage (sched/evq.h: evq_enqueue, as sched-ingress), the producer
# thread takes them out in priority order, as many as the worker has
# backlog room for (evq_dequeue, as sched-dist), and hands them to
# the distributor with the queue's scheduling type (sched/dist/dist.h:
# dist_process, which pins atomic flows to a worker and numbers ordered
# packets in its reorder window), which publishes them in lines of 8 to the
# worker's handoff ring; the worker thread polls the ring
# (dist_worker_poll, reporting its previous batch complete: the implicit
# release) and sums the payloads; for ordered it also hands each packet
# back (dist_worker_return, as distributor-return does) and the producer
# thread takes them back in arrival order (dist_ordered_take, as
# distributor-flush does). The peer (sluice-peer-eventdev,
# peer_eventdev.c, ours, built here with cc against Debian's libdpdk, never
# by meson) does the same through the public rte_eventdev API: one queue
# of the type, a producer port enqueuing NEW events, a consumer port
# dequeuing with implicit release and summing the payloads, with event_sw
# (--vdev=event_sw0; its scheduler is a service the producer's lcore runs
# inline, rte_service_run_iter_on_app_lcore) and event_dsw
# (--vdev=event_dsw0: distributed, scheduling inside enqueue and dequeue;
# it has no ordered queues).
#
# The same on both sides: one queue, one producer on CPU0 (sluice: the
# producer is the rx thread and runs the priority stage and the
# distributor inline, as the peer's producer runs event_sw's scheduler),
# one consumer on CPU1, bursts of 32 on enqueue and dequeue, 1024 flows
# round robin, a 1024-deep reorder window for ordered (the distributor's
# window; the peer's sequence numbers), a consumer queue DEPTH (128) deep
# (sluice: the worker's handoff ring, DEPTH / 8 lines of 8; the peer: the
# consumer port's dequeue depth, event_sw's maximum, which sizes its
# completion ring; event_dsw's input ring is its own, deeper).
# What differs: the payload is 32 bits in sluice (the buffer index the
# daemon carries) and 64 in the peer; sluice's distributor stages up to a
# burst (its backlog) before the ring, the daemon's default backlog being
# 8; and for ordered, sluice does more than the peer: every packet goes
# back to the producer thread and leaves it in arrival order (the
# daemon's reorder path), where the peer's consumer releases its events
# and nothing is forwarded. And the daemon's sched-dist places each packet
# on paper before the distributor (nodes/sched/sched-dist.c: place(), the
# stash for a worker that falls behind): with one worker that keeps up it
# places every packet and holds none, and the bench leaves that step out,
# so its sluice figure is the class queue and the distributor without it.
# Memory as bench_mem_mode sets it: 2 MB hugepages on both sides (DPDK
# --in-memory; sluice's aligned allocations in one MAP_HUGETLB mapping), or
# 4 KB pages on both (--no-huge).
#
# For each of ROUNDS rounds, each measurement after waiting for a quiet box:
# per type sluice ($isa: -march= Debian's DPDK baseline) then event_sw then
# event_dsw; sluice -march=native atomic; one sluice-only figure (atomic
# with events over the 8 priority levels); with BEFORE=REV that revision's
# $before_isa per type (that revision's engine with this bench program).
# Then callgrind instructions per event for the whole path on one thread,
# both sides (sluice: the producer's step then the worker's, $isa build:
# valgrind cannot run AVX-512; the peer: its --rounds, enqueue, event_sw's
# scheduler once, dequeue, on one lcore; each less the making of its
# events): load-independent figures beside the rates. A peer that fails
# fails the bench, and so does a sluice run whose distributor dropped a
# packet.
#
# Rows (bench_row): per type sluice $isa vs event_sw and vs event_dsw (not
# ordered): parallel matched, atomic labelled (differs: with one worker
# the distributor stages whole chunks without a worker choice, the daemon's
# path) with the matched row beside it (--match-always: the general worker
# choice, vs event_sw and event_dsw), ordered labelled (differs: the
# reorder return); atomic with sluice -march=native vs event_sw (differs:
# ISA); with BEFORE, "sluice at REV" per type vs event_sw; instructions
# per event per type vs event_sw and event_dsw (not ordered); atomic over
# the 8 priorities, sluice alone (event_dsw has no priorities). Rates are
# Mpps, events taken by the consumer per second, median over rounds.
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
[ "${#sluice_mem[@]}" -gt 0 ] || mem_text="$mem_label; sluice's aligned allocations in one MAP_HUGETLB mapping"

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
	! grep -qE ' dropped=[1-9]' <<<"$line" || fail "$file: the distributor dropped packets: $line"
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
	sluice_run general-atomic "$isa/$rel" atomic --match-always
	sluice_run isa-atomic-mixed "$isa/$rel" atomic --prio mixed
	if [ -n "$before_isa" ]; then
		for t in "${types[@]}"; do sluice_run "before-$t" "$before_isa/$rel" "$t"; done
	fi
done

# ---- the bench's own table ----------------------------------------------------
vals() { tr '\n' ' ' <"$out/$1"; }
med() { bench_mmm <"$out/$1" | cut -d' ' -f2; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
echo
echo "| one queue, 1 producer + 1 consumer (sluice: class queue + distributor + 1 worker), burst $BURST, $FLOWS flows, consumer depth $DEPTH (Mpps, median of $ROUNDS) | sluice -march=$peer_isa | event_sw | event_dsw | sluice/sw | sluice/dsw |"
echo "|---|---|---|---|---|---|"
for t in "${types[@]}"; do
	s=$(med "isa-$t") w=$(med "sw-$t")
	if [ "$t" = ordered ]; then
		echo "| $t (sluice: every packet back to the producer, in order) | $s | $w | no ordered queues | $(ratio "$s" "$w") | |"
	else
		d=$(med "dsw-$t")
		echo "| $t | $s | $w | $d | $(ratio "$s" "$w") | $(ratio "$s" "$d") |"
	fi
done
echo "| atomic, sluice -march=native | $(med native-atomic) | | | $(ratio "$(med native-atomic)" "$(med sw-atomic)") | $(ratio "$(med native-atomic)" "$(med dsw-atomic)") |"
echo "| atomic, events over the 8 priority levels (sluice only) | $(med isa-atomic-mixed) | | | | |"
if [ -n "$before_isa" ]; then
	for t in "${types[@]}"; do
		echo "| $t, $before_label (-march=$peer_isa) | $(med "before-$t") | | | $(ratio "$(med "before-$t")" "$(med "sw-$t")") | |"
	done
fi
echo "(CPU0: producer + priority stage + distributor (sluice), producer + event_sw's service run inline, or producer alone (event_dsw); CPU1: consumer (sluice: the distributor's worker). Memory: $mem_text)"
if [ -n "$before_isa" ]; then
	for t in "${types[@]}"; do
		echo "before/after, $t: $before_label $(med "before-$t") Mpps -> now $(med "isa-$t") Mpps ($(ratio "$(med "isa-$t")" "$(med "before-$t")"))"
	done
fi

# ---- callgrind --------------------------------------------------------------
# Both sides on one thread, 4 KB pages (valgrind): sluice's rounds
# (sched_bench_rounds) and the peer's (peer_rounds: enqueue, event_sw's
# scheduler once, dequeue), each less the making of its events (bench_fill,
# peer_fill), over the events the consumer took. The box's load does not
# move these.
echo
bench_log "callgrind: instructions per event, the producer's step and the consumer's on one thread"
# cg_ir FILE FN FILL: FN's inclusive Ir less FILL's
cg_ir() {
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v fn="$2" -v fill="$3" '/=>/ { next } $0 ~ ":" fn " \\[" { gsub(",", "", $1); s += $1 }
		     $0 ~ ":" fill " \\[" { gsub(",", "", $1); s -= $1 } END { print s + 0 }'
}
per_event() { awk -v i="$1" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", i / n; else print "nan" }'; }
for m in "${types[@]}"; do
	line=$(cd "$out" && timeout 300 valgrind --tool=callgrind --toggle-collect=sched_bench_rounds \
		--callgrind-out-file="$out/cg-$m.out" "$isa/$rel" "$m" --rounds "$CG_ROUNDS" \
		--burst "$BURST" --depth "$DEPTH" --no-huge 2>/dev/null) || fail "callgrind $m failed"
	ev=$(grep -oE 'events=[0-9]+' <<<"$line" | cut -d= -f2)
	per_event "$(cg_ir "$out/cg-$m.out" sched_bench_rounds bench_fill)" "$ev" >"$out/cg-sluice-$m"
	for d in sw dsw; do
		[ "$m:$d" != ordered:dsw ] || continue
		n=$((n + 1))
		line=$(cd "$out" && timeout 600 valgrind --tool=callgrind --toggle-collect=peer_rounds \
			--callgrind-out-file="$out/cg-$d-$m.out" "$peer" -l 0 --no-pci --no-telemetry --no-huge -m 256 \
			--file-prefix="sluice-sched-$$-$n" --vdev="event_${d}0" --log-level=lib.eal:error \
			-- "$m" --rounds "$CG_ROUNDS" --burst "$BURST" --flows "$FLOWS" --depth "$DEPTH" 2>/dev/null) ||
			fail "callgrind of the peer event_$d $m failed"
		ev=$(grep -oE 'events=[0-9]+' <<<"$line" | cut -d= -f2)
		per_event "$(cg_ir "$out/cg-$d-$m.out" peer_rounds peer_fill)" "$ev" >"$out/cg-$d-$m"
	done
done
printf '| callgrind, burst %s, one thread, -march=%s, instructions per event | sluice | event_sw | event_dsw |\n|---|---|---|---|\n' \
	"$BURST" "$peer_isa"
for m in "${types[@]}"; do
	what="enqueue + dequeue, dist_process, worker poll"
	[ "$m" = ordered ] && what="$what + hand back + in-order take"
	dsw=$(cat "$out/cg-dsw-$m" 2>/dev/null || echo "no ordered queues")
	echo "| $m (sluice: $what) | $(cat "$out/cg-sluice-$m") | $(cat "$out/cg-sw-$m") | $dsw |"
done

# ---- rows -------------------------------------------------------------------
# --paired: each round runs sluice and its peers back to back, so the row
# is judged by the median of the per-round ratios (the two vCPUs change
# speed between rounds, and a loaded box more so)
matched=(--bench sched --unit Mpps --better higher --burst "$BURST both (enqueue and dequeue)"
	--memory "$mem_text" --statistic "median over rounds of each round's mean rate (events dequeued / s over $SECS s)")
onework="one worker: sluice's distributor stages atomic events in whole chunks of 8 without a worker choice (the daemon's path with one worker); the peers schedule as with many ports"
# Every sluice row: the daemon's sched-dist also places each packet on paper
# first (place(), the stash bookkeeping), which the bench leaves out (above).
noplace="sluice's path leaves out sched-dist's per-packet placement on paper (place(): the stash's bookkeeping), which the daemon runs before dist_process"
peer_name() { [ "$1" = sw ] && echo "DPDK event_sw (scheduler service inline on CPU0)" || echo "DPDK event_dsw (distributed)"; }
for t in "${types[@]}"; do
	what="$t: 1 producer (CPU0) + 1 consumer (CPU1; sluice: class queue, distributor, 1 worker), $FLOWS flows, consumer depth $DEPTH"
	differs=(--differs "$noplace")
	[ "$t" != ordered ] || differs=(--differs "sluice hands every packet back to the producer and restores arrival order; the peer's consumer only releases; $noplace")
	[ "$t" != atomic ] || differs=(--differs "$onework; $noplace")
	for d in sw dsw; do
		[ "$t:$d" != ordered:dsw ] || continue
		bench_row "${matched[@]}" --paired --what "$what" --isa "both -march=$peer_isa" "${differs[@]}" \
			--sluice "$(vals "isa-$t")" --peer-name "$(peer_name $d)" --peer "$(vals "$d-$t")"
		[ "$t" != atomic ] || bench_row "${matched[@]}" --paired --what "$what" --isa "both -march=$peer_isa" \
			--sluice-label "sluice, a worker chosen per event as with many (--match-always)" --differs "$noplace" \
			--sluice "$(vals general-atomic)" --peer-name "$(peer_name $d)" --peer "$(vals "$d-$t")"
		if [ "$t:$d" = atomic:sw ]; then
			bench_row "${matched[@]}" --paired --what "$what" --isa "sluice $native_label, DPDK -march=$peer_isa" \
				--differs "ISA: sluice -march=native; $noplace" --sluice-label "sluice -march=native" \
				--sluice "$(vals native-atomic)" --peer-name "$(peer_name sw)" --peer "$(vals sw-atomic)"
		fi
	done
	[ -z "$before_isa" ] || bench_row "${matched[@]}" --paired --what "$what" --isa "both -march=$peer_isa" "${differs[@]}" \
		--sluice-label "$before_label" --sluice "$(vals "before-$t")" --peer-name "$(peer_name sw)" --peer "$(vals "sw-$t")"
	# instructions per event, one callgrind run each (the box's load does not move them)
	for d in sw dsw; do
		[ "$t:$d" != ordered:dsw ] || continue
		bench_row --bench sched --unit "instructions/event" --better lower --burst "$BURST both (enqueue and dequeue)" \
			--memory "4 KB pages on both (valgrind: sluice --no-huge, DPDK --no-huge -m 256)" \
			--statistic "one callgrind run each, $CG_ROUNDS rounds on one thread: Ir of the rounds less the making of the events / events consumed" \
			--what "$t: instructions per event, producer's and consumer's steps on one thread" \
			--isa "both -march=$peer_isa" "${differs[@]}" \
			--sluice "$(cat "$out/cg-sluice-$t")" --peer-name "$(peer_name $d)" --peer "$(cat "$out/cg-$d-$t")"
	done
done
# priorities on: sluice alone (event_dsw has no event priorities; the peer
# harness's queue is one priority), shown beside the matched atomic row
bench_row "${matched[@]}" --what "atomic with events over the 8 priority levels, 1 producer + 1 consumer, $FLOWS flows" \
	--isa "sluice -march=$peer_isa" --sluice "$(vals isa-atomic-mixed)" \
	--no-peer "event_dsw has no priorities; the matched atomic rows are at one priority"
echo
bench_report
