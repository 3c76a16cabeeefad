#!/usr/bin/env bash
# bench/sched/hqos_run.sh: the subscriber hierarchy (sched/hqos.h,
# sluice-bench-hqos) beside DPDK's rte_sched (peer_rte_sched.c, ours,
# built here with cc against Debian's libdpdk) in one run.
#
# The same on both sides: one thread, one port, N subscribers (sluice) or
# pipes (rte_sched) for N = 1, 1K and 64K (sluice 65,535 subscribers and
# its default one; rte_sched 65,536 pipes, a power of two), four classes /
# traffic classes in strict priority, rates that shape nothing, 4,096
# 64-byte packets circulating round robin over (subscriber, class),
# enqueue bursts of 32 then dequeue bursts of 32; packet buffers on 4 KB
# pages on both sides (sluice --pages 4k, DPDK --no-huge -m 2048).
# What differs: sluice looks each packet's subscriber up (a /32 match per
# packet, a hash probe), rte_sched is handed its pipe and TC
# (rte_sched_port_pkt_write, done outside neither: both sides' figures
# include the per-packet rewrite of the destination or of the pipe).
# Figures: Mpps per second of the thread's CPU time (the box is shared:
# time spent waiting for a CPU is not counted), and TSC cycles of that CPU
# time per packet; median over ROUNDS (3), min and max beside.
#
# Environment: ROUNDS (3), SECS (2), WARMUP (0.5), BUILD (the sluice build
# directory holding bench/sched/sluice-bench-hqos; default ./build).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-2}
WARMUP=${WARMUP:-0.5}
build=${BUILD:-$root/build}
bin=$build/bench/sched/sluice-bench-hqos
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-hqos.XXXXXX")
trap 'rm -rf "$out"' EXIT
[ -x "$bin" ] || { echo "bench/sched/hqos_run.sh: build $bin first (ninja -C $build)" >&2; exit 1; }
pkg-config --exists libdpdk || { echo "bench/sched/hqos_run.sh: libdpdk-dev is needed for the peer" >&2; exit 1; }
peer=$out/sluice-peer-rte-sched
# shellcheck disable=SC2046
cc -O2 -g -Wall -Wextra -Werror -DALLOW_EXPERIMENTAL_API $(pkg-config --cflags libdpdk) -o "$peer" \
	"$here/peer_rte_sched.c" $(pkg-config --libs libdpdk) 2>"$out/cc.log" || { cat "$out/cc.log" >&2; exit 1; }

mmm() {
	sort -g | awk '{ a[NR] = $1 } END { med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		printf "%s %s %s\n", a[1], med, a[NR] }'
}

field() { grep -oE "$1=[0-9.]+" | cut -d= -f2; }

sizes=(1 1024 65536)
for r in $(seq 1 "$ROUNDS"); do
	echo "# round $r of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
	for n in "${sizes[@]}"; do
		subs=$((n == 65536 ? 65535 : n))
		line=$(timeout 300 "$bin" --subs "$subs" --secs "$SECS" --warmup "$WARMUP" --pages 4k 2>/dev/null)
		echo "sluice $n: $line" >> "$out/raw"
		field mpps <<<"$line" >> "$out/sluice-$n-mpps"
		field cycles_per_packet <<<"$line" >> "$out/sluice-$n-cyc"
		line=$(timeout 300 "$peer" -l 0 --no-pci --no-telemetry --no-huge -m 2048 --file-prefix="hqos-$$-$r-$n" \
			--log-level=lib.eal:error -- --pipes "$n" --secs "$SECS" --warmup "$WARMUP" 2>"$out/peer.err") ||
			{ cat "$out/peer.err" >&2; echo "the rte_sched peer failed: a missing peer fails the bench" >&2; exit 1; }
		echo "rte_sched $n: $line" >> "$out/raw"
		field mpps <<<"$line" >> "$out/peer-$n-mpps"
		field cycles_per_packet <<<"$line" >> "$out/peer-$n-cyc"
	done
done
cat "$out/raw" >&2
printf '%-26s %-24s %-24s %-8s %-22s %-22s\n' "subscribers x 4 classes" "sluice Mpps (min med max)" \
	"rte_sched Mpps" "ratio" "sluice cycles/pkt" "rte_sched cycles/pkt"
for n in "${sizes[@]}"; do
	read -r smin smed smax < <(mmm < "$out/sluice-$n-mpps")
	read -r pmin pmed pmax < <(mmm < "$out/peer-$n-mpps")
	read -r _ scyc _ < <(mmm < "$out/sluice-$n-cyc")
	read -r _ pcyc _ < <(mmm < "$out/peer-$n-cyc")
	printf '%-26s %-24s %-24s %-8s %-22s %-22s\n' "$n" "$smin $smed $smax" "$pmin $pmed $pmax" \
		"$(awk -v a="$smed" -v b="$pmed" 'BEGIN { printf "%.2f", a / b }')" "$scyc" "$pcyc"
done
