#!/usr/bin/env bash
# bench/sched/hqos_run.sh: the subscriber hierarchy (sched/hqos.h,
# sluice-bench-hqos) beside DPDK's rte_sched (peer_rte_sched.c, ours,
# built here with cc against Debian's libdpdk) in one run; bench/run.sh's
# family "hqos".
#
# The same on both sides: one thread, one port, N subscribers (sluice) or
# pipes (rte_sched) for N = 1, 1K and 64K (sluice 65,535 subscribers and
# its default one; rte_sched 65,536 pipes, a power of two), four classes /
# traffic classes in strict priority, rates that shape nothing, 4,096
# 64-byte packets circulating round robin over (subscriber, class),
# enqueue bursts of 32 then dequeue bursts of 32; packet buffers on 4 KB
# pages on both sides (sluice --pages 4k, DPDK --no-huge -m 2048); the
# same ISA (sluice's $isa build: -march= Debian's DPDK baseline).
# Two sluice rows per size:
#   classified  sluice looks each packet's subscriber up (a /32 match per
#               packet, a hash probe: the daemon's work), rte_sched is
#               handed its pipe and TC (rte_sched_port_pkt_write): sluice
#               does more than the peer, and the row says so;
#   handed      sluice is handed the subscriber too (hqos_enqueue_ids, the
#               id noted beside the rewrite): like for like.
# Both sides' figures include the per-packet rewrite of the destination
# (sluice) or of the pipe (rte_sched_port_pkt_write).
# Figures: Mpps per second of the thread's CPU time (the box is shared:
# time spent waiting for a CPU is not counted), and TSC cycles of that CPU
# time per packet; median over ROUNDS, min and max beside; each round
# measures sluice then the peer back to back (paired rows).
# Then callgrind instructions per packet (enqueue + dequeue, the rewrite
# taken out) of sluice's hierarchy at each size, both ways ($isa build:
# valgrind cannot run AVX-512). rte_sched is not run under callgrind (its
# EAL under valgrind is not attempted): those rows have no peer figure.
#
# Environment: ROUNDS (3), SECS (2), WARMUP (0.5), CG_ROUNDS (20000 steps
# of a burst under callgrind), QUICK (1: sizes 1 and 1K, one round, SECS
# 0.3, WARMUP 0.1, CG_ROUNDS 2000, no waiting for a quiet box),
# QUIET_MAX (60), BENCH_BUILD_ROOT, BENCH_ROWS.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
sizes=(1 1024 65536)
if [ "${QUICK:-0}" = 1 ]; then
	ROUNDS=1 SECS=${SECS:-0.3} WARMUP=${WARMUP:-0.1} CG_ROUNDS=${CG_ROUNDS:-2000}
	sizes=(1 1024)
fi
ROUNDS=${ROUNDS:-3}
SECS=${SECS:-2}
WARMUP=${WARMUP:-0.5}
CG_ROUNDS=${CG_ROUNDS:-20000}
BURST=32
export QUIET_MAX=${QUIET_MAX:-60}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-hqos.XXXXXX")
trap 'rm -rf "$out"' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

bench_need
bench_need_libdpdk
bench_builds bench/sched/sluice-bench-hqos
peer_isa=$(bench_peer_isa)
bin=$isa/bench/sched/sluice-bench-hqos
fail() { echo "bench/sched/hqos_run.sh: $*" >&2; exit 1; }

peer=$out/sluice-peer-rte-sched
# shellcheck disable=SC2046
cc -O2 -g -Wall -Wextra -Werror -DALLOW_EXPERIMENTAL_API $(pkg-config --cflags libdpdk) -o "$peer" \
	"$here/peer_rte_sched.c" $(pkg-config --libs libdpdk) 2>"$out/cc.log" ||
	{ cat "$out/cc.log" >&2; fail "the peer harness did not build"; }

field() { grep -oE "(^| )$1=[0-9.]+" | cut -d= -f2; }

# sluice_run N GIVEN TAG: one measurement into $out/TAG-N-{mpps,cyc}
sluice_run() {
	local n=$1 subs=$(($1 == 65536 ? 65535 : $1)) line
	bench_wait_quiet
	line=$(timeout 300 "$bin" --subs "$subs" --given-sub "$2" --secs "$SECS" --warmup "$WARMUP" \
		--burst "$BURST" --pages 4k 2>"$out/sluice.err") || { cat "$out/sluice.err" >&2; fail "sluice $n subscribers failed"; }
	echo "$3 $n: $line" >>"$out/raw"
	field mpps <<<"$line" >>"$out/$3-$n-mpps"
	field cycles_per_packet <<<"$line" >>"$out/$3-$n-cyc"
}

for r in $(seq 1 "$ROUNDS"); do
	bench_log "round $r of $ROUNDS (load $(cut -d' ' -f1-3 /proc/loadavg))"
	for n in "${sizes[@]}"; do
		sluice_run "$n" 0 classified
		sluice_run "$n" 1 handed
		bench_wait_quiet
		line=$(timeout 300 "$peer" -l 0 --no-pci --no-telemetry --no-huge -m 2048 --file-prefix="hqos-$$-$r-$n" \
			--log-level=lib.eal:error -- --pipes "$n" --secs "$SECS" --warmup "$WARMUP" --burst "$BURST" \
			2>"$out/peer.err") || { cat "$out/peer.err" >&2; fail "the rte_sched peer failed: a missing peer fails the bench"; }
		echo "rte_sched $n: $line" >>"$out/raw"
		field mpps <<<"$line" >>"$out/peer-$n-mpps"
		field cycles_per_packet <<<"$line" >>"$out/peer-$n-cyc"
	done
done
cat "$out/raw" >&2

# ---- the bench's own table ----------------------------------------------------
med() { bench_mmm <"$out/$1" | cut -d' ' -f2; }
mmm() { bench_mmm <"$out/$1" | awk '{ printf "%s (%s..%s)", $2, $1, $3 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2fx", a / b }'; }
echo
echo "| subscribers x 4 classes, burst $BURST, 4 KB pages, -march=$peer_isa (Mpps per CPU second, median (min..max) of $ROUNDS) | sluice classified | sluice handed the subscriber | rte_sched (handed the pipe) | classified/rte_sched | handed/rte_sched | cycles/pkt: classified, handed, rte_sched |"
echo "|---|---|---|---|---|---|---|"
for n in "${sizes[@]}"; do
	echo "| $n | $(mmm "classified-$n-mpps") | $(mmm "handed-$n-mpps") | $(mmm "peer-$n-mpps") |" \
		"$(ratio "$(med "classified-$n-mpps")" "$(med "peer-$n-mpps")") |" \
		"$(ratio "$(med "handed-$n-mpps")" "$(med "peer-$n-mpps")") |" \
		"$(med "classified-$n-cyc"), $(med "handed-$n-cyc"), $(med "peer-$n-cyc") |"
done

# ---- callgrind --------------------------------------------------------------
echo
bench_log "callgrind: instructions per packet, enqueue + dequeue"
printf '| callgrind, sluice hierarchy, burst %s, -march=%s, %s steps | instructions per packet: classified | handed the subscriber |\n|---|---|---|\n' \
	"$BURST" "$peer_isa" "$CG_ROUNDS"
for n in "${sizes[@]}"; do
	subs=$((n == 65536 ? 65535 : n))
	row="| $n subscribers x 4 classes |"
	for g in 0 1; do
		(cd "$out" && timeout 600 valgrind --tool=callgrind --toggle-collect=hqos_bench_rounds \
			--callgrind-out-file="$out/cg-$n-$g.out" "$bin" --subs "$subs" --given-sub "$g" \
			--rounds "$CG_ROUNDS" --burst "$BURST" >"$out/cg-$n-$g.txt" 2>&1) || fail "callgrind $n subscribers failed"
		pk=$(field packets <"$out/cg-$n-$g.txt")
		# the rounds' inclusive cost without the rewrite of what left (address)
		ir=$(callgrind_annotate --inclusive=yes "$out/cg-$n-$g.out" 2>/dev/null |
			awk '/=>/ { next } /:hqos_bench_rounds \[/ { gsub(",", "", $1); s += $1 }
			     /:address\.?[a-z.0-9]* \[/ { gsub(",", "", $1); s -= $1 } END { print s + 0 }')
		v=$(awk -v i="$ir" -v p="$pk" 'BEGIN { printf "%.1f", i / p }')
		echo "$v" >"$out/cg-$n-$g"
		row="$row $v |"
	done
	echo "$row"
done

# ---- rows -------------------------------------------------------------------
vals() { tr '\n' ' ' <"$out/$1"; }
common=(--bench hqos --burst "$BURST both (enqueue and dequeue)" --memory "4 KB pages both (sluice --pages 4k, DPDK --no-huge)"
	--isa "both -march=$peer_isa" --paired)
for n in "${sizes[@]}"; do
	what="$n subscribers (pipes) x 4 classes, one thread, 4,096 packets circulating, nothing shaped"
	cls="sluice classifies each packet to its subscriber (a /32 destination match, a hash probe); rte_sched is handed the pipe and TC"
	hand="both handed the subscriber (pipe) and class with each packet"
	[ "$n" != 65536 ] || hand="$hand; sluice 65,535 subscribers + default, rte_sched 65,536 pipes"
	bench_row "${common[@]}" --what "$what" --unit "Mpps" --better higher --differs "$cls" \
		--statistic "median over rounds of packets per second of the thread's CPU time" \
		--sluice-label "sluice (classifies)" --sluice "$(vals "classified-$n-mpps")" \
		--peer-name "DPDK rte_sched (handed the pipe)" --peer "$(vals "peer-$n-mpps")"
	bench_row "${common[@]}" --what "$what; $hand" --unit "Mpps" --better higher \
		--statistic "median over rounds of packets per second of the thread's CPU time" \
		--sluice-label "sluice (handed the subscriber)" --sluice "$(vals "handed-$n-mpps")" \
		--peer-name "DPDK rte_sched (handed the pipe)" --peer "$(vals "peer-$n-mpps")"
	bench_row "${common[@]}" --what "$what; $hand" --unit "cycles/packet" --better lower \
		--statistic "median over rounds of TSC cycles of the thread's CPU time per packet" \
		--sluice-label "sluice (handed the subscriber)" --sluice "$(vals "handed-$n-cyc")" \
		--peer-name "DPDK rte_sched (handed the pipe)" --peer "$(vals "peer-$n-cyc")"
	for g in 0 1; do
		lab=$([ "$g" = 0 ] && echo "sluice (classifies)" || echo "sluice (handed the subscriber)")
		bench_row --bench hqos --burst "$BURST both (enqueue and dequeue)" --memory "4 KB pages (callgrind: valgrind's allocator)" \
			--isa "sluice -march=$peer_isa" --what "$what: callgrind instructions per packet, enqueue + dequeue (rewrite taken out)" \
			--unit "instructions/packet" --better lower --statistic "callgrind Ir over $CG_ROUNDS steps / packets" \
			--sluice-label "$lab" --sluice "$(cat "$out/cg-$n-$g")" \
			--no-peer "rte_sched is not run under valgrind (its EAL); compare the cycles/packet row"
	done
done
echo
bench_report
