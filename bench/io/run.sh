#!/usr/bin/env bash
# sluice's null -> ethernet-input -> l2-xconnect -> null path beside
# `dpdk-testpmd --forward-mode=io` between two net_null ports, one core each.
#
#   bench/io/run.sh [BUILD_DIR]
#
# Installs what it uses (Debian packages) when missing, builds
# sluice-bench-io with meson (into BUILD_DIR, default
# $TMPDIR/sluice-bench-io, plus BUILD_DIR-cg built for x86-64-v3, since
# callgrind cannot run AVX-512 code), sets up the memory mode as the DPDK
# anchor scripts do (DPDK_MEM_MODE=huge: 2 MB hugepages on both sides, or
# nohuge: 4 KB pages on both sides), then for ROUNDS rounds runs sluice and
# testpmd one after the other on CPU, each after waiting for an idle box
# (testpmd's main lcore, which only reads its prompt, on the other CPU).
# Then instructions per packet under callgrind: sluice's io_polls() region
# (the whole main loop: inputs, nodes, dispatch) and testpmd's forwarding
# thread, as ../shared/bench/dpdk/testpmd_callgrind.sh measures it (both
# --no-huge under valgrind). Prints a table of medians and the ratios.
#
# Same work on both sides: two ports, each one rx queue forwarded to the
# other's tx, 64-byte packets whose data nobody reads, a fresh buffer per
# packet from a per-thread cache and freed on tx. Burst: testpmd 32 (the
# anchor figure; TESTPMD_BURST changes it), sluice a frame (256).
#
# Environment: ROUNDS (5), SECS (5), WARM (2), DPDK_MEM_MODE (huge|nohuge),
# CPU (1), QUIET_MAX (120 s of waiting for an idle box per run),
# TESTPMD_BURST (32), CG_POLLS (4000), CG_SECS (10), SKIP_CG (0).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/sluice-bench-io}
build_cg=${build}-cg
ROUNDS=${ROUNDS:-5}
SECS=${SECS:-5}
WARM=${WARM:-2}
DPDK_MEM_MODE=${DPDK_MEM_MODE:-huge}
CPU=${CPU:-1}
QUIET_MAX=${QUIET_MAX:-120}
TESTPMD_BURST=${TESTPMD_BURST:-32}
CG_POLLS=${CG_POLLS:-4000}
CG_SECS=${CG_SECS:-10}
SKIP_CG=${SKIP_CG:-0}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-io.XXXXXX")
trap 'rm -rf "$out"; rm -rf /var/run/dpdk/io$$_* 2>/dev/null || true' EXIT

log() { echo "# $*" >&2; }
# shellcheck source=../lib.sh
. "$here/../lib.sh"

# ---- packages -------------------------------------------------------------
bench_need dpdk-testpmd=dpdk

# ---- build ----------------------------------------------------------------
bench_build "$build"
ninja -C "$build" bench/io/sluice-bench-io >"$out/ninja.log" 2>&1 || { cat "$out/ninja.log" >&2; exit 1; }
if [ "$SKIP_CG" != 1 ]; then
	bench_build "$build_cg" -Dcpu_arch=x86-64-v3
	ninja -C "$build_cg" bench/io/sluice-bench-io >"$out/ninja-cg.log" 2>&1 || { cat "$out/ninja-cg.log" >&2; exit 1; }
fi

# ---- memory mode (the DPDK anchor scripts' set-up) ------------------------
bench_mem_mode
log "memory: $mem_label"
other=$((CPU == 0 ? 1 : 0))

# ---- rounds ---------------------------------------------------------------
: >"$out/sluice.txt"
: >"$out/testpmd.txt"
for r in $(seq 1 "$ROUNDS"); do
	bench_wait_quiet
	log "round $r/$ROUNDS: sluice (load $(cut -d' ' -f1 /proc/loadavg))"
	timeout $((SECS + WARM + 30)) "$build/bench/io/sluice-bench-io" --cpu "$CPU" --seconds "$SECS" \
		--warmup "$WARM" "${sluice_mem[@]}" >"$out/sluice-$r.txt" 2>&1 ||
		{ cat "$out/sluice-$r.txt" >&2; exit 1; }
	awk '/ Mpps$/ {print $(NF-1)}' "$out/sluice-$r.txt" >>"$out/sluice.txt"
	bench_wait_quiet
	log "round $r/$ROUNDS: testpmd io (load $(cut -d' ' -f1 /proc/loadavg))"
	( sleep 1; echo start; sleep "$WARM"; echo "show port stats all"; sleep "$SECS"
	  echo "show port stats all"; echo stop; sleep 0.5; echo quit ) |
		timeout $((SECS + WARM + 40)) dpdk-testpmd -l "$other,$CPU" --main-lcore "$other" --no-pci \
		--file-prefix="io$$_$r" "${dpdk_mem[@]}" --vdev=net_null0 --vdev=net_null1 -- -i \
		--forward-mode=io --nb-cores=1 --burst="$TESTPMD_BURST" --rxq=1 --txq=1 \
		>"$out/testpmd-$r.txt" 2>&1 || { tail -20 "$out/testpmd-$r.txt" >&2; exit 1; }
	grep -E '^\s*Rx-pps:' "$out/testpmd-$r.txt" | tail -2 | awk '{s += $2} END {printf "%.2f\n", s / 1e6}' \
		>>"$out/testpmd.txt"
	log "  sluice $(tail -1 "$out/sluice.txt") Mpps, testpmd $(tail -1 "$out/testpmd.txt") Mpps"
done

# ---- callgrind --------------------------------------------------------------
sl_ipp=- pmd_ipp=-
if [ "$SKIP_CG" != 1 ]; then
	log "callgrind: sluice io_polls, $CG_POLLS loops"
	( cd "$out" && timeout 600 valgrind --tool=callgrind --toggle-collect=io_polls \
		--callgrind-out-file="$out/cg-sluice.out" "$build_cg/bench/io/sluice-bench-io" --polls "$CG_POLLS" \
		--no-huge >"$out/cg-sluice.txt" 2>&1 ) || { cat "$out/cg-sluice.txt" >&2; exit 1; }
	ir=$(awk '/^summary:/ {print $2}' "$out/cg-sluice.out")
	pk=$(awk '/^io: polls/ {print $5}' "$out/cg-sluice.txt")
	sl_ipp=$(awk -v i="$ir" -v p="$pk" 'BEGIN {printf "%.1f", i / p}')
	log "callgrind: testpmd io burst $TESTPMD_BURST, $CG_SECS s"
	( sleep 12; echo start; sleep "$CG_SECS"; echo stop; sleep 2; echo quit ) |
		timeout -k 15 $((CG_SECS + 400)) valgrind --tool=callgrind --separate-threads=yes --fair-sched=yes \
		--callgrind-out-file="$out/cg-pmd.%p" dpdk-testpmd -l 0,1 --main-lcore 0 --file-prefix="io$$_cg" \
		--no-pci --no-huge -m 1024 --vdev=net_null0 --vdev=net_null1 -- -i --forward-mode=io \
		--nb-cores=1 --burst="$TESTPMD_BURST" >"$out/cg-pmd.txt" 2>&1 || { tail -20 "$out/cg-pmd.txt" >&2; exit 1; }
	pk=$(grep -A1 'Accumulated forward statistics' "$out/cg-pmd.txt" | grep -oE 'RX-packets: [0-9]+' |
		awk '{print $2}' || true)
	[ -n "$pk" ] || { log "testpmd under callgrind forwarded nothing:"; tail -20 "$out/cg-pmd.txt" >&2; }
	best=0
	for f in "$out"/cg-pmd.*-*; do
		t=$(awk '/^summary:/ {s=$2} /^totals:/ {t=$2} END {print (t ? t : s)}' "$f")
		[ "${t:-0}" -gt "$best" ] && best=$t
	done
	pmd_ipp=$(awk -v i="$best" -v p="${pk:-0}" 'BEGIN {if (p > 0) printf "%.1f", i / p; else print "-"}')
fi

# ---- report ---------------------------------------------------------------
mmm() { sort -g | awk '{a[NR]=$1} END {
	med = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2
	printf "%.2f %.2f %.2f\n", a[1], med, a[NR] }'; }
read -r s_min s_med s_max < <(mmm <"$out/sluice.txt")
read -r p_min p_med p_max < <(mmm <"$out/testpmd.txt")
echo "== bench/io: one core (CPU $CPU), $ROUNDS rounds of $SECS s, memory: $mem_label =="
echo "   $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-44s %24s %16s\n' "" "Mpps min / median / max" "instr/packet"
printf '%-44s %8s %7s %7s %16s\n' "sluice null->eth->l2-xconnect->null (256)" "$s_min" "$s_med" "$s_max" "$sl_ipp"
printf '%-44s %8s %7s %7s %16s\n' "testpmd io net_null<->net_null (burst $TESTPMD_BURST)" "$p_min" "$p_med" "$p_max" "$pmd_ipp"
awk -v a="$s_med" -v b="$p_med" 'BEGIN {printf "ratio sluice / testpmd, median Mpps: %.2f\n", a / b}'
[ "$sl_ipp" != - ] && [ "$pmd_ipp" != - ] &&
	awk -v a="$sl_ipp" -v b="$pmd_ipp" 'BEGIN {printf "ratio sluice / testpmd, instructions per packet: %.2f\n", a / b}'
exit 0
