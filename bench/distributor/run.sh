#!/usr/bin/env bash
# sluice's distributor beside rte_distributor's burst mode, in one run.
#
#   bench/distributor/run.sh [BUILD_DIR]
#
# Builds sluice-bench-distributor (meson, into BUILD_DIR, default
# $TMPDIR/sluice-bench-dist), installs Debian's dpdk when dpdk-test is
# missing, then for ROUNDS rounds, each after waiting for an idle box (up to
# QUIET_MAX s): sluice with 1 worker (distributor on CPU0, worker on CPU1,
# 64 packets of tags 0..63 per call, as distributor_perf_autotest does) and
# `dpdk-test distributor_perf_autotest` (-l 0,1, same placement). Then the
# 1..MAX_WORKERS scaling table: beyond 1 worker the workers share CPU1 on
# this 2-CPU box (oversubscribed), which the table says per row.
#
# Environment: ROUNDS (3), CALLS (2097152, DPDK's count), BACKLOG (64),
# MAX_WORKERS (4), QUIET_MAX (120), DPDK_MEM_MODE (huge|nohuge).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/sluice-bench-dist}
ROUNDS=${ROUNDS:-3}
CALLS=${CALLS:-2097152}
BACKLOG=${BACKLOG:-64}
MAX_WORKERS=${MAX_WORKERS:-4}
QUIET_MAX=${QUIET_MAX:-120}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-dist.XXXXXX")
trap 'rm -rf "$out"' EXIT
log() { echo "# $*" >&2; }

command -v dpdk-test >/dev/null 2>&1 || { log "installing dpdk"; apt-get install -y dpdk >/dev/null; }
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dtests=false >/dev/null
ninja -C "$build" bench/sluice-bench-distributor >/dev/null
bench="$build/bench/sluice-bench-distributor"

# Hugepages for DPDK, as the anchor scripts reserve them.
mem=(--no-huge -m 1024)
if [ "${DPDK_MEM_MODE:-huge}" = huge ]; then
	echo 1024 > /proc/sys/vm/nr_hugepages 2>/dev/null || true
	grep -q ' hugetlbfs ' /proc/mounts || { mkdir -p /dev/hugepages; mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true; }
	grep -q ' hugetlbfs ' /proc/mounts && mem=(--in-memory)
fi

busy() { # percent of both CPUs busy over 1 s
	read -r _ a b c d e f g _ < /proc/stat; t1=$((a+b+c+d+e+f+g)); i1=$d
	sleep 1
	read -r _ a b c d e f g _ < /proc/stat; t2=$((a+b+c+d+e+f+g)); i2=$d
	echo $(( 100 * ((t2-t1) - (i2-i1)) / (t2-t1) ))
}
wait_quiet() {
	local end=$((SECONDS + QUIET_MAX)) b
	while b=$(busy) && [ "$b" -ge 10 ] && [ $SECONDS -lt $end ]; do :; done
	log "box busy ${b}% before the run, load $(cut -d' ' -f1-3 /proc/loadavg)"
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

for r in $(seq 1 "$ROUNDS"); do
	wait_quiet
	"$bench" --workers 1 --calls "$CALLS" --backlog "$BACKLOG" --dist-cpu 0 --worker-cpus 1 | tee -a "$out/sluice"
	wait_quiet
	DPDK_TEST=distributor_perf_autotest timeout 300 dpdk-test -l 0,1 --file-prefix="bd$$_$r" --no-pci \
		"${mem[@]}" > "$out/dpdk.$r" 2>&1 || { tail -20 "$out/dpdk.$r" >&2; exit 1; }
	grep -oE 'Time per packet: [0-9]+' "$out/dpdk.$r" | sed -n 2p | awk '{print $4}' | tee -a "$out/dpdk"
done
s=$(grep -oE 'ticks_per_packet=[0-9.]+' "$out/sluice" | cut -d= -f2 | median)
d=$(median < "$out/dpdk")
echo
echo "| 1 worker (dist CPU0, worker CPU1) | ticks/packet (median of $ROUNDS) | Mpps at 2.1 GHz |"
echo "|---|---|---|"
echo "| sluice distributor (backlog $BACKLOG) | $s | $(awk -v t="$s" 'BEGIN{printf "%.1f", 2100/t}') |"
echo "| DPDK rte_distributor burst | $d | $(awk -v t="$d" 'BEGIN{printf "%.1f", 2100/t}') |"
echo "| ratio (DPDK / sluice) | $(awk -v a="$d" -v b="$s" 'BEGIN{printf "%.2fx", a/b}') | |"
echo
echo "| workers | CPUs | ticks/packet | Mpps | shares cores |"
echo "|---|---|---|---|---|"
for n in $(seq 1 "$MAX_WORKERS"); do
	wait_quiet
	line=$("$bench" --workers "$n" --calls $((CALLS / 4)) --backlog "$BACKLOG" --dist-cpu 0 --worker-cpus 1)
	t=$(grep -oE 'ticks_per_packet=[0-9.]+' <<<"$line" | cut -d= -f2)
	m=$(grep -oE 'mpps=[0-9.]+' <<<"$line" | cut -d= -f2)
	share=no; [ "$n" -gt 1 ] && share="yes: $n workers time-share CPU1"
	echo "| $n | dist 0, workers 1 | $t | $m | $share |"
done
