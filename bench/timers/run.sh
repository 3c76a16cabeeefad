#!/usr/bin/env bash
# sluice's timer service beside rte_timer, each timed the same way.
#
#   bench/timers/run.sh
#
# Builds sluice-bench-timers in the shared builds (bench/lib.sh
# bench_builds: $isa, -march= Debian's DPDK baseline, for the matched rows;
# $native for the labelled -march=native rows) and our rte_timer harness,
# peer_timer.c, against Debian's libdpdk with pkg-config. Then for ROUNDS
# rounds, each program after waiting for a quiet box: sluice's bench and the
# harness at 1K, 100K and 1M timers, one thread on CPU 0, the same passes
# (see timers.c and peer_timer.c):
#   arm     sluice timer_arm          rte_timer_reset of a stopped timer, 1 s ahead
#   arm_rel sluice timer_arm_ticks    the same rte_timer_reset figure: sluice arms
#           1 s after its last run (VPP's relative start, no clock read),
#           rte_timer_reset 1 s after the TSC it reads (the row says so)
#   cancel  sluice timer_cancel       rte_timer_stop of an armed timer
#   rearm   sluice timer_rearm        rte_timer_reset of an armed timer, to
#                                     the same random delays in [0, 1 s)
#   expire  sluice timer_service_run  rte_timer_manage, all N due (1 s timers
#                                     after a 1.1 s sleep), per expiry
# Every figure is TSC ticks per operation, the MEAN over the whole pass (its
# ticks over its operations, as DPDK's timer_perf_autotest reports); a row
# takes the median over the rounds. Medians of 1024-operation chunks are
# printed beside in the table below, not compared. The timers of both sides
# live in the ordinary heap (sluice's pools and the harness's rte_timer
# array, both aligned_alloc: the same pages); EAL gets bench_mem_mode's
# memory (the timer library's per-lcore lists live there).
#
# Memory per timer with N armed: sluice's service memory over N plus the
# 8-byte handle the caller keeps; rte_timer's sizeof(struct rte_timer) (the
# caller's), what the allocator adds per timer, and the timer library's
# memzones over N.
#
# Rows: arm, cancel, rearm, expire per size (matched: both -march= the peer's baseline);
# arm and rearm at the largest size with sluice -march=native (labelled);
# the idle run (a poll with nothing due); memory per timer at the largest.
#
# Then, once, not in QUICK: DPDK's own timer_perf_autotest as a cross-check
# of the harness's arm and expire figures (its "Resetting" pass resets
# expired timers, not armed ones); with hugepages, rte_timer with its timers
# in rte_malloc'd hugepages (its best memory; not matched, printed only);
# the producer-thread figures (sluice only, both cross-thread paths).
# callgrind.sh counts sluice's instructions per operation.
#
# Environment: ROUNDS (3), SIZES ("1000 100000 1000000"), NATIVE_SIZE (the
# largest size: the -march=native rows), PRODUCER_SECS (1), DPDK_MEM_MODE
# (huge|nohuge), BEFORE (a revision: its $isa build's rows "sluice at REV"
# against the same rte_timer figures, and a before/after table; it runs
# today's timers.c on that engine: BEFORE_BENCH=old's output differs), QUIET_MAX.
# QUICK=1: one round, 1K and 100K timers, no producer table, no autotest.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-timers.XXXXXX")
prefixes=()
cleanup() {
	local p
	for p in "${prefixes[@]}"; do rm -rf "/var/run/dpdk/$p"; done
	rm -rf "$out"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1}
	SIZES=${SIZES:-1000 100000}
else
	ROUNDS=${ROUNDS:-3}
	SIZES=${SIZES:-1000 100000 1000000}
fi
read -ra sizes <<<"$SIZES"
NATIVE_SIZE=${NATIVE_SIZE:-${sizes[-1]}}
PRODUCER_SECS=${PRODUCER_SECS:-1}

# ---- packages, builds, memory -------------------------------------------------
bench_need
bench_need_peer dpdk-test
bench_need_libdpdk
bench_builds bench/timers/sluice-bench-timers
peer_isa=$(bench_peer_isa)
prog=bench/timers/sluice-bench-timers
# shellcheck disable=SC2046 # pkg-config's flags are words
cc -O2 -Wall -Wextra -Werror $(pkg-config --cflags libdpdk) "$here/peer_timer.c" -o "$out/peer-timer" \
	$(pkg-config --libs libdpdk) 2>"$out/cc.log" || { cat "$out/cc.log" >&2; exit 1; }
bench_mem_mode
hz=$(bench_tsc_hz)
thp=$(sed -n 's/.*\[\(.*\)\].*/\1/p' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null || echo unknown)
if [ "$thp" = always ]; then
	memtext="timers in the ordinary heap both (aligned_alloc; THP always: 2 MB pages where the kernel gives them); EAL: $mem_label"
else
	memtext="timers in the ordinary heap both (aligned_alloc, 4 KB pages, THP $thp); EAL: $mem_label"
fi
bench_log "memory: $memtext; TSC $hz Hz; sizes $SIZES; $ROUNDS round(s)"

# A program's output must have one line per size: a side that did not run
# fails the bench.
run_side() { # name file command...
	local name=$1 file=$2 want=$3
	shift 3
	bench_wait_quiet
	if ! timeout 600 "$@" >"$file" 2>"$file.err"; then
		bench_log "$name failed:"
		tail -20 "$file.err" "$file" >&2
		exit 1
	fi
	[ "$(grep -cE '^(sluice|rte_timer) n=' "$file")" -eq "$want" ] ||
		{ bench_log "$name: expected $want result lines"; cat "$file" "$file.err" >&2; exit 1; }
}

for r in $(seq 1 "$ROUNDS"); do
	bench_log "round $r/$ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))"
	run_side "sluice ($isa)" "$out/sluice.$r" "${#sizes[@]}" "$isa/$prog" "${sizes[@]}"
	prefix="btimer$$_$r"
	prefixes+=("$prefix")
	run_side rte_timer "$out/rte.$r" "${#sizes[@]}" "$out/peer-timer" -l 0 --no-pci "${dpdk_mem[@]}" \
		--file-prefix "$prefix" --log-level lib.eal:warning -- "${sizes[@]}"
	run_side "sluice ($native)" "$out/native.$r" 1 "$native/$prog" "$NATIVE_SIZE"
	if [ -n "$before_isa" ]; then
		run_side "$before_label ($before_isa)" "$out/before.$r" "${#sizes[@]}" "$before_isa/$prog" "${sizes[@]}"
	fi
done

# Every figure once: "side n key value" per round (side: sluice, rte, native,
# before), plus bytes_all, the memory per timer each side's row compares.
for f in "$out"/{sluice,rte,native,before}.[0-9]*; do
	if [ ! -f "$f" ] || [ "${f%.err}" != "$f" ]; then continue; fi
	side=$(basename "$f")
	awk -v side="${side%.*}" '/^(sluice|rte_timer) n=/ {
		delete kv
		for (i = 2; i <= NF; i++) { split($i, a, "="); kv[a[1]] = a[2] }
		for (key in kv) if (key != "n") print side, kv["n"], key, kv[key]
		print side, kv["n"], "bytes_all", kv["bytes_per_timer"] + kv["handle_bytes"] }' "$f"
done >"$out/figures"
# The median over rounds of each, as "side n key median".
sort -k1,1 -k2,2n -k3,3 -k4,4g "$out/figures" | awk '
	function flush() { if (c) print key, (c % 2 ? v[(c + 1) / 2] : (v[c / 2] + v[c / 2 + 1]) / 2); c = 0 }
	{ k = $1 " " $2 " " $3; if (k != key) { flush(); key = k } v[++c] = $4 }
	END { flush() }' >"$out/medians"
declare -A per_round
while read -r side n key v; do per_round[$side,$n,$key]+="$v "; done <"$out/figures"
# fig SIDE N KEY: that figure for N timers, one per round.
fig() { echo "${per_round[$1,$2,$3]:-}"; }
k() { awk -v n="$1" 'BEGIN { if (n >= 1000000) printf "%gM", n / 1e6; else if (n >= 1000) printf "%gK", n / 1e3; else print n }'; }

# ---- this bench's own table ---------------------------------------------------
echo "TSC $(awk -v h="$hz" 'BEGIN { printf "%.3f GHz", h / 1e9 }'); $ROUNDS round(s); sluice -march=$peer_isa vs rte_timer"\
	"(Debian's DPDK, -march=$peer_isa); figures: median over rounds of each round's mean over the pass, TSC ticks"
awk -v hz="$hz" -v sizes="$SIZES" -v nsize="$NATIVE_SIZE" -v before="${before_label:-}" '
	function kn(n) { return n >= 1e6 ? sprintf("%gM", n / 1e6) : n >= 1e3 ? sprintf("%gK", n / 1e3) : n }
	function g(s, n, key) { return ((s, n, key) in m) ? m[s, n, key] : "-" }
	function ratio(a, b) { return (a != "-" && b != "-" && b > 0) ? sprintf("%.2f", a / b) : "-" }
	{ m[$1, $2, $3] = $4 }
	END {
		nops = split("arm arm_rel cancel rearm expire expire_random idle", ops, " ")
		ns = split(sizes, sz, " ")
		printf "%-7s %-14s %10s %10s %7s %9s | %s\n", "timers", "op", "sluice", "rte_timer", "s/rte", "sluice_ns",
			"median 1024-op chunk, sluice / rte_timer"
		for (i = 1; i <= ns; i++) for (j = 1; j <= nops; j++) {
			n = sz[i]; op = ops[j]; s = g("sluice", n, op); pop = (op == "arm_rel") ? "arm" : op; d = g("rte", n, pop)
			cm = (op ~ /^(arm|arm_rel|cancel|rearm)$/) ? g("sluice", n, op "_median") " / " g("rte", n, pop "_median") : ""
			printf "%-7s %-14s %10s %10s %7s %9.1f | %s\n", kn(n), op, s, d, ratio(s, d), s / hz * 1e9, cm
		}
		print "(arm_rel = sluice timer_arm_ticks, 1 s after its last run, no clock read, against rte_timer_reset;"
		print " cancel = rte_timer_stop; rearm = rte_timer_reset of an armed timer; expire per expired timer;"
		print " idle = one run / rte_timer_manage with nothing armed)"
		print ""
		print "memory per armed timer (bytes):"
		for (i = 1; i <= ns; i++) {
			n = sz[i]
			printf "  %s: sluice %s (service %s B / N + %s B handle); rte_timer %s (sizeof(struct rte_timer) %s" \
				" + allocator %s + the timer library'"'"'s memzones %s B / N)\n", kn(n), g("sluice", n, "bytes_all"),
				g("sluice", n, "memory_bytes"), g("sluice", n, "handle_bytes"), g("rte", n, "bytes_all"),
				g("rte", n, "timer_bytes"), g("rte", n, "alloc_overhead"), g("rte", n, "subsystem_bytes")
		}
		print ""
		printf "sluice -march=native at %s: arm %s cancel %s rearm %s expire %s ticks\n", kn(nsize),
			g("native", nsize, "arm"), g("native", nsize, "cancel"), g("native", nsize, "rearm"),
			g("native", nsize, "expire")
		if (before == "") exit
		printf "\nbefore/after (%s -> now, same ISA, ticks):\n", before
		for (i = 1; i <= ns; i++) for (j = 1; j <= 5; j++) {
			n = sz[i]; op = ops[j]; b = g("before", n, op); a = g("sluice", n, op)
			printf "  %s %s: %s -> %s (x%s)\n", kn(n), op, b, a, ratio(a, b)
		}
	}' "$out/medians"

# Where sluice's bytes per timer go (deterministic: round 1's lines).
echo "sluice memory per armed timer by part (bytes / N; entry = one pool record):"
awk '/^sluice_memory / { line = "  "; for (i = 2; i <= NF; i++) line = line " " $i; print line }' "$out/sluice.1"

# ---- cross-check and sluice-only figures (not in QUICK) -------------------------
if [ "$QUICK" != 1 ]; then
	echo
	bench_wait_quiet
	prefix="btimerauto$$"
	prefixes+=("$prefix")
	if DPDK_TEST=timer_perf_autotest timeout 300 dpdk-test -l 0 --no-pci "${dpdk_mem[@]}" \
		--file-prefix "$prefix" >"$out/autotest.txt" 2>&1 && grep -q 'Test OK' "$out/autotest.txt"; then
		echo "cross-check, DPDK's timer_perf_autotest (one run, mean over its pass; its reset pass resets expired timers):"
		awk '/^Appending [0-9]+ timers/ { n = $2; k = 0 }
			/Time per (timer|callback):/ { v = $0; sub(/.*Time per (timer|callback): /, "", v); sub(/ .*/, "", v)
				what[k++] = v
				if (k == 3) printf "  %8d timers: arm %s  expire %s  reset-expired %s ticks\n", n, what[0], what[1], what[2] }' \
			"$out/autotest.txt"
	else
		# The harness is the peer; the autotest is only a cross-check.
		bench_log "timer_perf_autotest did not complete (cross-check only):"
		tail -5 "$out/autotest.txt" >&2
	fi
	if [ "${dpdk_mem[0]}" = --in-memory ]; then
		# rte_timer at its best memory: its timers in rte_malloc's
		# hugepages, as timer_perf_autotest keeps them (not matched:
		# sluice's pools are on the ordinary heap).
		bench_wait_quiet
		prefix="btimerhp$$"
		prefixes+=("$prefix")
		run_side "rte_timer (rte_malloc)" "$out/hp" 1 "$out/peer-timer" -l 0 --no-pci "${dpdk_mem[@]}" \
			--file-prefix "$prefix" --log-level lib.eal:warning -- --rte-malloc "$NATIVE_SIZE"
		echo
		echo "rte_timer with its timers in rte_malloc'd 2 MB hugepages, $(k "$NATIVE_SIZE"), one run (not matched):" \
			"$(grep -oE '(arm|cancel|rearm|expire)=[0-9.]+' "$out/hp" | tr '\n' ' ')ticks"
	fi
	echo
	echo "producer thread (sluice only, -march=$peer_isa, $PRODUCER_SECS s each):"
	bench_wait_quiet
	timeout 120 "$isa/$prog" producer "$PRODUCER_SECS"
fi

# ---- rows -------------------------------------------------------------------
what_of() {
	case $1 in
	arm) echo "arm, 1 s ahead (rte_timer_reset)" ;;
	cancel) echo "cancel (rte_timer_stop)" ;;
	rearm) echo "rearm an armed timer to random [0, 1 s) (rte_timer_reset)" ;;
	expire) echo "expire, all due, per expiry (rte_timer_manage)" ;;
	esac
}
common=(--bench timers --better lower --peer-name rte_timer --memory "$memtext")
one=(--burst "1 timer per call both")
stat="median over rounds of each round's mean over the pass (ticks / operations)"
for n in "${sizes[@]}"; do
	for op in arm cancel rearm expire; do
		bench_row "${common[@]}" "${one[@]}" --what "$(what_of "$op"), $(k "$n") timers" --unit "ticks/op" \
			--sluice "$(fig sluice "$n" "$op")" --peer "$(fig rte "$n" "$op")" \
			--isa "both -march=$peer_isa" --statistic "$stat"
		[ -n "$before_isa" ] || continue
		bench_row "${common[@]}" "${one[@]}" --what "$(what_of "$op"), $(k "$n") timers" --unit "ticks/op" \
			--sluice "$(fig before "$n" "$op")" --peer "$(fig rte "$n" "$op")" \
			--isa "both -march=$peer_isa" --statistic "$stat" --sluice-label "$before_label"
	done
	bench_row "${common[@]}" "${one[@]}" --what "arm, 1 s ahead, relative (timer_arm_ticks / rte_timer_reset), $(k "$n") timers" \
		--unit "ticks/op" --sluice "$(fig sluice "$n" arm_rel)" --peer "$(fig rte "$n" arm)" \
		--isa "both -march=$peer_isa" --statistic "$stat" --sluice-label "sluice timer_arm_ticks" \
		--differs "sluice arms 1 s after its last run's time, in ticks converted once (VPP's relative start: no clock read per arm); rte_timer_reset reads the TSC per call (its only form)"
done
for op in arm rearm; do
	bench_row "${common[@]}" "${one[@]}" --what "$(what_of "$op"), $(k "$NATIVE_SIZE") timers" --unit "ticks/op" \
		--sluice "$(fig native "$NATIVE_SIZE" "$op")" --peer "$(fig rte "$NATIVE_SIZE" "$op")" \
		--isa "sluice $native_label, DPDK -march=$peer_isa" --statistic "$stat" \
		--sluice-label "sluice -march=native" \
		--differs "sluice built -march=native (the matched -march=$peer_isa row is above)"
done
# what a poll costs with nothing due (timer_perf_autotest's "rte_timer_manage
# with zero timers"), after the cancel pass
bench_row "${common[@]}" --what "idle run, nothing armed (rte_timer_manage), after $(k "${sizes[-1]}") timers" \
	--unit "ticks/call" --burst "one timer_service_run / rte_timer_manage per call" --sluice "$(fig sluice "${sizes[-1]}" idle)" --peer "$(fig rte "${sizes[-1]}" idle)" \
	--isa "both -march=$peer_isa" --statistic "median over rounds of each round's mean of 1000 calls"
bench_row "${common[@]}" --burst "n/a" --what "memory per armed timer, $(k "${sizes[-1]}") armed" --unit "bytes" \
	--sluice "$(fig sluice "${sizes[-1]}" bytes_all)" --peer "$(fig rte "${sizes[-1]}" bytes_all)" \
	--isa "both -march=$peer_isa" \
	--statistic "bytes held with N armed over N: sluice service + 8 B handle; rte_timer struct + allocator + library memzones"
echo
bench_report
