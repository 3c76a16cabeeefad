#!/usr/bin/env bash
# bench/timers/run.sh [BUILD_DIR=build] [RUNS=1] [PRODUCER_SECS=1]
#
# The timer service beside rte_timer in one run: for each run, sluice's
# bench (arm, rearm, cancel, expire at 1K, 100K, 1M timers, in TSC cycles)
# then DPDK's timer_perf_autotest (dpdk-test, Debian's `dpdk` package), the
# two interleaved so that both see the same machine. Prints a table with the
# ratios (rte / sluice: higher is better for sluice), the memory figure,
# then the producer-thread figures for both cross-thread paths.
#
# DPDK's test has no stop/cancel pass; cancel is set beside rte_timer's
# arm, the nearest operation it measures. On a shared box, where cycles
# mean little, callgrind.sh counts instructions per operation instead. Waits for a quiet box first, as
# the anchor scripts do (../shared/bench/dpdk/common.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
BUILD=${1:-build}
RUNS=${2:-1}
PSECS=${3:-1}
DPDK_DIR=${DPDK_DIR:-$here/../../../shared/bench/dpdk}
bench="$BUILD/bench/timers/sluice-bench-timers"
[ -x "$bench" ] || { echo "no $bench: build first (ninja -C $BUILD)" >&2; exit 1; }
command -v dpdk-test >/dev/null || { echo "dpdk-test missing: apt-get install -y dpdk dpdk-dev (Debian 12 ships it in dpdk-dev)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$DPDK_DIR/common.sh"
dpdk_setup_mem
LOG=$(mktemp -d)
trap 'rm -rf "$LOG"; dpdk_cleanup_runtime' EXIT

for r in $(seq 1 "$RUNS"); do
    wait_quiet
    "$bench" > "$LOG/sluice.$r"
    run_autotest timer_perf_autotest "$LOG/rte.$r" -l 0,1 || { tail -20 "$LOG/rte.$r" >&2; exit 1; }
    grep -q 'Test OK' "$LOG/rte.$r" || { tail -20 "$LOG/rte.$r" >&2; exit 1; }
done

# name=value pairs of sluice's lines -> "n op value" rows
for f in "$LOG"/sluice.*; do
    awk '/^sluice n=/ { n = ""; for (i = 2; i <= NF; i++) { split($i, kv, "=");
            if (kv[1] == "n") n = kv[2];
            else if (kv[1] ~ /^(arm|rearm|cancel|expire|bytes_per_timer|memory_bytes)$/ && !(kv[1] in seen)) {
                print n, kv[1], kv[2]; seen[kv[1]] = 1 } }
          delete seen }' "$f"
done > "$LOG/sluice.rows"
# timer_perf_autotest: per size, "Time per timer" (append), "Time per
# callback", then "Time per timer" again after "Resetting".
for f in "$LOG"/rte.*; do
    awk '/^Appending [0-9]+ timers/ { n = $2; k = 0 }
         /Time per timer:|Time per callback:/ { v = $0; sub(/.*Time per (timer|callback): /, "", v); sub(/ .*/, "", v);
            print n, (k == 0 ? "arm" : k == 1 ? "expire" : "reset"), v; k++ }' "$f"
done > "$LOG/rte.rows"

med() { sort -g | awk '{a[NR] = $1} END { if (!NR) { print "nan"; exit } print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
get() { awk -v n="$2" -v op="$3" '$1 == n && $2 == op { print $3 }' "$LOG/$1.rows" | med; }

printf '%-9s %-8s %12s %12s %8s\n' timers op sluice rte_timer ratio
for n in 1000 100000 1000000; do
    for pair in arm:arm cancel:arm rearm:reset expire:expire; do
        ours=${pair%%:*}; theirs=${pair##*:}
        s=$(get sluice "$n" "$ours"); d=$(get rte "$n" "$theirs")
        printf '%-9s %-8s %12s %12s %8s\n' "$n" "$ours" "$s" "$d" \
            "$(awk -v a="$d" -v b="$s" 'BEGIN { if (b > 0) printf "%.1fx", a / b; else print "-" }')"
    done
done
echo "memory with 1,000,000 armed: $(get sluice 1000000 memory_bytes) bytes ($(get sluice 1000000 bytes_per_timer) per timer; rte_timer: 120)"
echo "(cycles per operation, median of $RUNS run(s); sluice's are median 1024-op chunks, see timers.c)"
echo
wait_quiet
"$bench" producer "$PSECS"
