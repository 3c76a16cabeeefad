#!/usr/bin/env bash
# The event log's cost per event beside rte_trace, DPDK's per-lcore trace.
#
#   bench/elog/run.sh
#
# Per event, each side, one thread on CPU 1, timed the same way (blocks of
# 100 x 100 calls between two TSC reads, for 100 ms; a round's figure is
# its ticks over its events):
#   sluice   elog_log of an instant event with one u64 argument on a graph
#            thread's own track (base/elog.h): a TSC read, the 32-byte record
#            (ticks, type, track, three arguments) stored into the thread's
#            ring, the head published with a release store. No lock.
#   rte_trace  dpdk-test's trace_perf_autotest "u64" pass
#            (rte_eal_trace_generic_u64, tracing enabled with --trace=eal):
#            the point's enabled check, the lcore's trace buffer from TLS, a
#            room check (overwrite mode wraps), an 8-byte header holding the
#            TSC and the event id, the 8-byte argument. No lock.
# Row: ns per event (ticks / the TSC rate the engine measures), the median
# of ROUNDS rounds of each side. Then, sluice only, callgrind's instructions
# per event: two runs of sluice-bench-elog --count N, the difference of
# their totals over the difference of N (start-up cancels out), for the
# thread's track and for the control track (a mutex an event, what control
# threads pay).
#
# Environment: ROUNDS (5), MS (100). QUICK=1: one round of 20 ms.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-elog.XXXXXX")
prefix=bench-elog-$$
trap 'rm -rf "$out" "/var/run/dpdk/$prefix"' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1}
	MS=${MS:-20}
else
	ROUNDS=${ROUNDS:-5}
	MS=${MS:-100}
fi
bench_need
bench_need_peer dpdk-test
bench_builds bench/elog/sluice-bench-elog
peer_isa=$(bench_peer_isa)
hz=$(bench_tsc_hz)
prog=bench/elog/sluice-bench-elog

# ---- rounds -----------------------------------------------------------------
for r in $(seq 1 "$ROUNDS"); do
	bench_wait_quiet
	"$isa/$prog" --rounds 1 --ms "$MS" --cpu 1 | awk -F'\t' '$1 == "median" {print $3}' >>"$out/sluice"
	bench_wait_quiet
	echo trace_perf_autotest |
		dpdk-test --no-huge -m 256 --no-pci -l 0-1 --file-prefix "$prefix" --trace=eal \
			--trace-dir="$out/trace" >"$out/peer-$r.txt" 2>&1 || true
	# "u64: cycles=20.12 ns=9.60": ticks to ns with our rate, as for sluice
	awk '$1 == "u64:" {sub("cycles=", "", $2); print $2}' "$out/peer-$r.txt" >>"$out/peer-ticks"
	bench_log "round $r: sluice $(tail -1 "$out/sluice") ticks, rte_trace $(tail -1 "$out/peer-ticks" 2>/dev/null) ticks"
done
[ -s "$out/peer-ticks" ] || { cat "$out/peer-1.txt" >&2; echo "bench/elog: trace_perf_autotest printed no u64 figure" >&2; exit 1; }
ns() { awk -v h="$hz" '{printf "%s%.2f", sep, $1 / h * 1e9; sep = " "}' "$1"; }

bench_row --bench elog --better lower --peer-name rte_trace --what "log one event, one u64 argument (rte_eal_trace_generic_u64)" \
	--unit "ns/event" --sluice "$(ns "$out/sluice")" --peer "$(ns "$out/peer-ticks")" \
	--burst "1 event per call both" --memory "4096 x 32 B ring in the heap (sluice); 1 MB per-lcore trace buffer, --no-huge (rte_trace)" \
	--isa "both -march=$peer_isa" --statistic "median over rounds of each round's mean over a 100 x 100-call pass (ticks / events), ns at the measured TSC rate"

# ---- instructions per event (sluice) ------------------------------------------
cg() { # PATH N: total instructions of one --count run
	(cd "$out" && valgrind --tool=callgrind --callgrind-out-file="$out/cg.$1.$2" "$isa/$prog" --path "$1" --count "$2" >/dev/null 2>&1)
	awk '/^summary:/ {print $2}' "$out/cg.$1.$2"
}
printf '| track | instructions per event |\n|---|---|\n'
for p in thread control; do
	a=$(cg "$p" 100000)
	b=$(cg "$p" 200000)
	printf '| %s | %s |\n' "$p" "$(awk -v a="$a" -v b="$b" 'BEGIN {printf "%.1f", (b - a) / 100000}')"
done
bench_report
