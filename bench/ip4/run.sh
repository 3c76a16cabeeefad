#!/usr/bin/env bash
# sluice's IPv4 FIB beside DPDK's rte_lpm (lpm_perf_autotest), same box, same
# core, same memory set-up, alternating rounds.
#
#   bench/ip4/run.sh [BUILD_DIR]
#
# Installs what it uses (Debian packages) when missing, builds
# sluice-bench-ip4-fib with meson (into BUILD_DIR, default
# $TMPDIR/sluice-bench-ip4), reserves 2 MB hugepages as the DPDK anchor
# scripts do (/work/shared/bench/dpdk/common.sh, or the same steps inline),
# then for ROUNDS rounds runs the sluice bench and
# `dpdk-test lpm_perf_autotest`, each after waiting for an idle box, and
# prints a table of medians with ratios. Both count TSC ticks; both use the
# route mix of lpm_perf_autotest (1,076,806 routes) and uniformly random
# lookup addresses in batches of 4096.
#
# Then the whole forwarding path (sluice-bench-ip4-path: a source node of
# prebuilt frames -> ethernet-input -> ip4-input -> ip4-lookup -> ip4-rewrite
# -> interface-output -> null-tx) with 1 route and with the same ~1.07M
# routes: Mpps on one core (median of ROUNDS runs) and callgrind
# instructions per packet of each node at vector 256, from a second build
# (BUILD_DIR-cg, -Dcpu_arch=x86-64-v3: valgrind 3.19 cannot run AVX-512).
#
# Environment: ROUNDS (3), CPU (0: the core both run on; dpdk-test's main
# lcore is 0 with -l 0,1), DPDK_MEM_MODE (huge|nohuge), QUIET_MAX (120 s of
# waiting for an idle box per run), PATH_SECONDS (3, per path run), SKIP_FIB
# (1: only the path).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/sluice-bench-ip4}
ROUNDS=${ROUNDS:-3}
CPU=${CPU:-0}
QUIET_MAX=${QUIET_MAX:-120}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-ip4.XXXXXX")
trap 'rm -rf "$out"; rm -rf /var/run/dpdk/fib$$_* 2>/dev/null || true' EXIT

log() { echo "# $*" >&2; }
# shellcheck source=../lib.sh
. "$here/../lib.sh"

# ---- packages -------------------------------------------------------------
bench_need dpdk-test="dpdk dpdk-dev"

# ---- build ----------------------------------------------------------------
build_cg=${build}-cg
bench_build "$build"
bench_build "$build_cg" -Dcpu_arch=x86-64-v3
ninja -C "$build" bench/ip4/sluice-bench-ip4-fib bench/ip4/sluice-bench-ip4-path >"$out/ninja.log" 2>&1 ||
	{ cat "$out/ninja.log" >&2; exit 1; }
ninja -C "$build_cg" bench/ip4/sluice-bench-ip4-path >"$out/ninja-cg.log" 2>&1 ||
	{ cat "$out/ninja-cg.log" >&2; exit 1; }
PATH_SECONDS=${PATH_SECONDS:-3}
SKIP_FIB=${SKIP_FIB:-0}

# ---- memory and quiet box: the DPDK anchor scripts' helpers ---------------
common=/work/shared/bench/dpdk/common.sh
if [ -f "$common" ]; then
	# shellcheck source=/dev/null
	source "$common"
	QUIET_MAX=$QUIET_MAX dpdk_setup_mem
else
	DPDK_MEM_ARGS=(--no-huge -m 1024)
	wait_quiet() { :; }
	log "no $common: --no-huge, no idle wait"
fi
mem_label="${DPDK_MEM_ARGS[*]}"
hp_free=$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)
log "dpdk-test memory: $mem_label; hugepages free for sluice's tbl24: ${hp_free:-0}"

# ---- the whole path: Mpps per core, then callgrind per node ---------------
path_tsv=$out/path.tsv
: >"$path_tsv"
for r in $(seq 1 "$ROUNDS"); do
	for mode in one full; do
		QUIET_MAX=$QUIET_MAX wait_quiet
		log "round $r/$ROUNDS: ip4 path, routes $mode (load $(cut -d' ' -f1 /proc/loadavg))"
		timeout 300 "$build/bench/ip4/sluice-bench-ip4-path" --routes "$mode" --cpu "$CPU" \
			--seconds "$PATH_SECONDS" >"$out/path-$mode-$r.txt" 2>&1 ||
			{ cat "$out/path-$mode-$r.txt" >&2; exit 1; }
		awk -v m="$mode" '/Mpps$/ { print m "\tmpps\t" $(NF - 1) }' "$out/path-$mode-$r.txt" >>"$path_tsv"
	done
done
for mode in one full; do
	log "callgrind: ip4 path, routes $mode, vector 256"
	( cd "$out" && timeout 900 valgrind --tool=callgrind '--toggle-collect=ip4_path_polls*' \
		--callgrind-out-file="$out/cg-$mode.out" "$build_cg/bench/ip4/sluice-bench-ip4-path" \
		--routes "$mode" --polls 200 >"$out/cg-$mode.txt" 2>&1 ) ||
		{ cat "$out/cg-$mode.txt" >&2; exit 1; }
	pk=$(awk '/^ip4-path: polls/ { print $5 }' "$out/cg-$mode.txt")
	# Inclusive Ir per function of the binary (lines with "[object]").
	callgrind_annotate --inclusive=yes "$out/cg-$mode.out" 2>/dev/null |
		awk -v m="$mode" -v pk="$pk" '
			/\[/ && match($0, /:[A-Za-z_0-9.]+ \[/) {
				fn = substr($0, RSTART + 1, RLENGTH - 3); sub(/\..*/, "", fn)
				ir = $1; gsub(/,/, "", ir)
				print m "\t" fn "\t" ir / pk
			}' >>"$path_tsv"
done
echo "== sluice ip4 path, last round =="
cat "$out/path-one-$ROUNDS.txt" "$out/path-full-$ROUNDS.txt" | grep '^ip4-path'
echo
python3 - "$path_tsv" "$ROUNDS" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds = sys.argv[1:3]
v = defaultdict(list)
for line in open(path):
    mode, key, val = line.rstrip("\n").split("\t")
    v[(mode, key)].append(float(val))
def get(mode, key):
    x = v.get((mode, key))
    return st.median(x) if x else None
nodes = [("ip4-input", "ip4_input_fn"), ("ip4-lookup", "ip4_lookup_fn"), ("ip4-rewrite", "ip4_rewrite_fn"),
         ("interface-output", "interface_output_fn")]
others = [("ethernet-input", "ethernet_input_fn"), ("null-tx (frees)", "device_tx_fn"),
          ("source (generator)", "source_fn"), ("whole poll loop", "ip4_path_polls")]
print(f"== ip4 path on one core: Mpps (median of {rounds} runs), callgrind instructions per packet "
      "(inclusive, vector 256) ==")
print("| | 1 route | ~1.07M routes |")
print("|---|---|---|")
fmt = lambda x, p=1: f"{x:.{p}f}" if x is not None else "-"
print(f"| Mpps per core | {fmt(get('one', 'mpps'), 2)} | {fmt(get('full', 'mpps'), 2)} |")
tot = {}
for name, fn in nodes:
    print(f"| {name} | {fmt(get('one', fn))} | {fmt(get('full', fn))} |")
    for m in ("one", "full"):
        tot[m] = tot.get(m, 0) + (get(m, fn) or 0)
print(f"| **ip4 path (the four above)** | **{tot['one']:.1f}** | **{tot['full']:.1f}** (goal < 100) |")
for name, fn in others:
    print(f"| {name} | {fmt(get('one', fn))} | {fmt(get('full', fn))} |")
EOF
[ "$SKIP_FIB" = 1 ] && exit 0
echo

# ---- rounds ---------------------------------------------------------------
tsv=$out/results.tsv
: >"$tsv"
for r in $(seq 1 "$ROUNDS"); do
	QUIET_MAX=$QUIET_MAX wait_quiet
	log "round $r/$ROUNDS: sluice (load $(cut -d' ' -f1 /proc/loadavg))"
	timeout 300 taskset -c "$CPU" "$build/bench/ip4/sluice-bench-ip4-fib" --seed "$((r * 7919))" \
		>"$out/sluice-$r.txt" 2>&1 || { cat "$out/sluice-$r.txt" >&2; exit 1; }
	awk -v r="$r" '/^fib: / { print r "\tsluice\t" $2 "\t" $3 }' "$out/sluice-$r.txt" >>"$tsv"
	QUIET_MAX=$QUIET_MAX wait_quiet
	log "round $r/$ROUNDS: rte_lpm (load $(cut -d' ' -f1 /proc/loadavg))"
	DPDK_TEST=lpm_perf_autotest timeout 600 dpdk-test -l "$CPU",$((1 - CPU)) --no-pci \
		"${DPDK_MEM_ARGS[@]}" --file-prefix="fib$$_$r" >"$out/dpdk-$r.txt" 2>&1 ||
		{ cat "$out/dpdk-$r.txt" >&2; exit 1; }
	grep -q 'Test OK' "$out/dpdk-$r.txt" || { cat "$out/dpdk-$r.txt" >&2; exit 1; }
	awk -v r="$r" '
		function num(s) { sub(/^[^:]*: */, "", s); return s + 0 }
		/^No. routes =/             { v = $0; sub(/.*= */, "", v); print r "\trte_lpm\tbig.routes\t" v }
		/^Average LPM Add:/         { print r "\trte_lpm\tbig.add_all\t" num($0) }
		/^Average LPM Lookup:/      { print r "\trte_lpm\tbig.lookup_single\t" num($0) }
		/^BULK LPM Lookup:/         { print r "\trte_lpm\tbig.lookup_bulk\t" num($0) }
		/^LPM LookupX4:/            { print r "\trte_lpm\tbig.lookup_x4\t" num($0) }
		/^Average LPM Delete:/      { print r "\trte_lpm\tbig.del_all\t" num($0) }
		/fails = /                  { f = $0; sub(/.*fails = /, "", f); print r "\trte_lpm\tbig.miss_pct\t" f + 0 }
		/^Unique added entries =/   { v = $0; sub(/.*= */, "", v); print r "\trte_lpm\tbig.unique\t" v }
	' "$out/dpdk-$r.txt" >>"$tsv"
	rm -rf /var/run/dpdk/"fib$$_$r"
done

# ---- report ---------------------------------------------------------------
echo "== sluice FIB bench, last round =="
grep -v '^fib: ' "$out/sluice-$ROUNDS.txt"
echo
echo "== rte_lpm (lpm_perf_autotest), last round =="
grep -E '^(No. routes|Unique added|Average LPM|BULK LPM|LPM LookupX4)' "$out/dpdk-$ROUNDS.txt"
echo
python3 - "$tsv" "$ROUNDS" "$mem_label" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds, mem = sys.argv[1:4]
v = defaultdict(list)
for line in open(path):
    r, side, key, val = line.rstrip("\n").split("\t")
    v[(side, key)].append(float(val))
def med(side, key):
    x = v.get((side, key))
    return st.median(x) if x else None
def rng(side, key, prec=1):
    x = v.get((side, key))
    return f"{min(x):.{prec}f}-{max(x):.{prec}f}" if x and len(x) > 1 else ""
rows = [
    ("lookup, batched (bulk of 32)", "big.lookup_bulk", 1),
    ("lookup, x4", "big.lookup_x4", 1),
    ("lookup, single", "big.lookup_single", 1),
    ("add, whole table in order (avg)", "big.add_all", 0),
    ("delete, whole table in order (avg)", "big.del_all", 0),
]
print(f"== medians of {rounds} rounds, TSC ticks per operation; ~1.07M routes "
      f"(lpm_perf_autotest's mix); dpdk-test memory {mem} ==")
print("speed-up: rte_lpm / sluice (above 1: sluice faster)")
print("| operation | sluice | rte_lpm | speed-up | sluice range | rte_lpm range |")
print("|---|---|---|---|---|---|")
for name, key, prec in rows:
    a, b = med("sluice", key), med("rte_lpm", key)
    fa = f"{a:.{prec}f}" if a is not None else "-"
    fb = f"{b:.{prec}f}" if b is not None else "-"
    ratio = f"{b / a:.1f}x" if a and b else "-"
    print(f"| {name} | {fa} | {fb} | {ratio} | {rng('sluice', key, prec)} | {rng('rte_lpm', key, prec)} |")
extra = [
    ("add, one at a time into the full table (churn)", "big.churn_add", 0),
    ("delete, one at a time from the full table (churn)", "big.churn_del", 0),
    ("1 route: lookup batched (bulk of 32)", "one.lookup_bulk", 1),
    ("1 route: lookup x4", "one.lookup_x4", 1),
    ("1 route: lookup single", "one.lookup_single", 1),
    ("1 route: add (mix routes, one at a time)", "one.add", 0),
    ("1 route: delete", "one.del", 0),
]
print("\nsluice only (lpm_perf_autotest has no such case):")
print("| operation | sluice | range |")
print("|---|---|---|")
for name, key, prec in extra:
    a = med("sluice", key)
    print(f"| {name} | {a:.{prec}f} | {rng('sluice', key, prec)} |" if a is not None else f"| {name} | - | |")
ur, uu = med("rte_lpm", "big.routes"), med("rte_lpm", "big.unique")
sr = med("sluice", "big.routes")
print(f"\nroutes: sluice {sr:.0f} offered, all held; rte_lpm {ur:.0f} offered, "
      f"{uu:.0f} added (its test gives it 2048 tbl8 groups)")
print(f"lookup misses: sluice {med('sluice', 'big.miss_pct'):.1f}%, "
      f"rte_lpm {med('rte_lpm', 'big.miss_pct'):.1f}% (addresses 224.0.0.0/3 have no route)")
EOF
