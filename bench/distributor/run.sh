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
# this 2-CPU box (oversubscribed), which the table says per row. Last,
# callgrind instructions per packet (noise-free, unlike the ticks) for the
# distributor's dist_process and the worker's dist_worker_poll, with the
# workers played inline: flows all new each call (--inline) and all still
# in flight (--inline-hold); built for x86-64-v3, since valgrind 3.19
# cannot run AVX-512. Then the same per type (--type atomic|parallel|
# ordered through dist_process's types array; ordered adds the release on
# the distributor thread and the hand-back on the worker).
#
# Environment: ROUNDS (3), CALLS (2097152, DPDK's count), BACKLOG (64),
# MAX_WORKERS (4), QUIET_MAX (120), DPDK_MEM_MODE (huge|nohuge), BEFORE
# (a git revision: its distributor, built beside, runs in every round too,
# and in the callgrind table, for a before/after in one run).
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

command -v dpdk-test >/dev/null 2>&1 || { log "installing dpdk dpdk-dev (dpdk-test is in dpdk-dev on Debian 12)"; apt-get install -y dpdk dpdk-dev >/dev/null; }
[ -f "$build/build.ninja" ] || meson setup "$build" "$root" -Dtests=false >/dev/null
ninja -C "$build" bench/distributor/sluice-bench-distributor >/dev/null
bench="$build/bench/distributor/sluice-bench-distributor"
# BEFORE: that revision's library with this bench driver (its options may
# be newer than the revision).
before_bench=
if [ -n "${BEFORE:-}" ]; then
	src="$out/before-src"
	mkdir -p "$src"
	git -C "$root" archive "$BEFORE" | tar -x -C "$src"
	cp "$here/dist_perf.c" "$src/bench/distributor/dist_perf.c"
	meson setup "$out/before" "$src" -Dtests=false >/dev/null
	meson setup "$out/before-cg" "$src" -Dtests=false -Dcpu_arch=x86-64-v3 >/dev/null
	ninja -C "$out/before" bench/distributor/sluice-bench-distributor >/dev/null
	ninja -C "$out/before-cg" bench/distributor/sluice-bench-distributor >/dev/null
	before_bench="$out/before/bench/distributor/sluice-bench-distributor"
fi

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
	if [ -n "$before_bench" ]; then
		wait_quiet
		"$before_bench" --workers 1 --calls "$CALLS" --backlog "$BACKLOG" --dist-cpu 0 --worker-cpus 1 |
			tee -a "$out/before.txt"
	fi
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
if [ -n "$before_bench" ]; then
	bs=$(grep -oE 'ticks_per_packet=[0-9.]+' "$out/before.txt" | cut -d= -f2 | median)
	echo "| sluice distributor at $BEFORE (before) | $bs | $(awk -v t="$bs" 'BEGIN{printf "%.1f", 2100/t}') |"
	echo "| ratio (DPDK / before) | $(awk -v a="$d" -v b="$bs" 'BEGIN{printf "%.2fx", a/b}') | |"
fi
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

# ---- callgrind: instructions per packet, workers played inline ----
command -v valgrind >/dev/null 2>&1 || { log "installing valgrind"; apt-get install -y valgrind >/dev/null; }
build_cg=${build}-cg
[ -f "$build_cg/build.ninja" ] || meson setup "$build_cg" "$root" -Dtests=false -Dcpu_arch=x86-64-v3 >/dev/null
ninja -C "$build_cg" bench/distributor/sluice-bench-distributor >/dev/null
cg_calls=20000
cg_pkts=$(( (cg_calls + 10000) * 64 )) # the bench's 10,000 warm-up calls count too
per_packet() { # callgrind-out function: inclusive instructions per packet
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v f="nodes/dist.c:$2 " -v p="$cg_pkts" 'index($0, f) && !/=>/ { n = $1; gsub(",", "", n); printf "%.1f", n / p; exit }'
}
echo
echo "| callgrind, 1 worker played inline | dist_process instr/packet | dist_worker_poll instr/packet |"
echo "|---|---|---|"
for b in ${BEFORE:+before} now; do
	bin="$build_cg/bench/distributor/sluice-bench-distributor"
	[ "$b" = before ] && bin="$out/before-cg/bench/distributor/sluice-bench-distributor"
	for mode in inline inline-hold; do
		valgrind --tool=callgrind --callgrind-out-file="$out/cg.$b.$mode" "$bin" --"$mode" --calls "$cg_calls" \
			>/dev/null 2>&1
		label="flows all new"
		[ "$mode" = inline-hold ] && label="flows in flight"
		[ "$b" = before ] && label="$label, at $BEFORE"
		echo "| $label | $(per_packet "$out/cg.$b.$mode" dist_process) | $(per_packet "$out/cg.$b.$mode" dist_worker_poll) |"
	done
done

# The other scheduling types (this build only): every packet parallel, or
# ordered (handed back by the worker and released by the main thread).
echo
echo "| callgrind, --inline, all packets of one type | dist_process instr/packet | dist_ordered_take | dist_worker_return |"
echo "|---|---|---|---|"
for t in atomic parallel ordered; do
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.type.$t" "$build_cg/bench/distributor/sluice-bench-distributor" \
		--inline --calls "$cg_calls" --type "$t" >/dev/null 2>&1
	echo "| $t (types array) | $(per_packet "$out/cg.type.$t" dist_process) | $(per_packet "$out/cg.type.$t" dist_ordered_take) |" \
		"$(per_packet "$out/cg.type.$t" dist_worker_return) |"
done
