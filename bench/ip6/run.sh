#!/usr/bin/env bash
# sluice's IPv6 FIB beside DPDK's rte_lpm6 and rte_fib6 (its 24 + 8 x 13
# trie), same box, same core, same memory mode, same routes and lookup
# addresses, timed the same way.
#
#   bench/ip6/run.sh
#
# ROUNDS rounds, each after waiting for a quiet box (bench_wait_quiet):
#   sluice-bench-ip6-fib from the $isa build (-march=corei7, Debian's DPDK
#   baseline: the matched rows) and from the $native build (one row, says it
#   differs), then bench/ip6/peer_fib6.c, our harness, compiled here against
#   libdpdk (never by meson), on rte_lpm6 and rte_fib6. The same --seed for
#   all three in a round, so the same route set in the same order (ROUTES
#   routes shaped like the public IPv6 table, bench/ip6/fib6bench.h), the
#   same lookup addresses (a route picked uniformly, random host bits), the
#   same table size (FIB_GROUPS 256-entry groups on every side) and the same
#   timing: rdtsc around the whole add loop (/ routes), each lookup pass
#   (/ lookups; batches of 4096 generated untimed, looked up one at a time,
#   4 at a time (sluice only) or in bulks of 32), the whole delete loop
#   (/ routes). Each side's lookup results are summed and must agree, or the
#   bench fails. Not lpm6_perf_autotest: 1,000 routes, and its delete timing
#   holds lookups.
# Memory (bench_mem_mode): 2 MB hugepages on both sides (DPDK --in-memory,
#   sluice IP6_FIB_MEM_HUGETLB) or, with DPDK_MEM_MODE=nohuge or too few
#   hugepages, 4 KB pages on both (DPDK --no-huge -m 3584: the tables at 1M
#   need more than the 1 GB the other benches give it; sluice --no-huge:
#   IP6_FIB_MEM_4K). The pages are read back from /proc/self/smaps and the
#   bench fails when a sluice table is not on them.
# Rows (bench_row): add, lookup bulk of 32, lookup single (rte_fib6: its bulk
#   of 1), delete; sluice corei7 vs rte_lpm6 and vs rte_fib6; the bulk lookup
#   of sluice -march=native vs rte_fib6's AVX-512 lookup when this CPU and
#   DPDK build have it. Statistic: the median over rounds of each round's
#   mean over the pass (min and max in the row).
#
# Path (sluice only; beside it the IPv4 path, its goal's yardstick):
#   sluice-bench-ip6-path, a source node of prebuilt frames -> ethernet-input
#   -> ip6-input -> ip6-lookup -> ip6-rewrite -> interface-output -> null-tx,
#   with 1 route (::/0) and PATH_ROUTES routes shaped like the public table
#   (fib6bench.h's set): Mpps on one core ($native, median of PATH_ROUNDS
#   runs) and callgrind instructions per packet of each node at vector 256
#   ($isa: valgrind cannot run AVX-512), and sluice-bench-ip4-path's with 1
#   route and its ~1.07M mix the same way; the table gives IPv6 / IPv4 for
#   the three IP nodes (goal: within 10%). The IPv6 path's FIB is on THP-
#   advised pages (IP6_FIB_MEM_AUTO), the IPv4 path's on 4 KB pages
#   (--no-huge): no Mpps is compared here, the instruction counts do not
#   depend on the pages.
#
# Time: rte_fib6's add loop is the long pole. On this box, with the load of
# five builds beside it, rte_lpm6's whole round at 1M took ~4 minutes and
# rte_fib6's adds had not finished after ~15 (the peer has an hour a round).
#
# Environment: ROUNDS (5), ROUTES (1000000), FIB_GROUPS (sized for ROUTES),
# ITERATIONS (1024 lookup batches of 4096 per pass), CPU (0), DPDK_MEM_MODE
# (huge|nohuge), QUIET_MAX (120 s), PATH_ROUTES (1000000), PATH_ROUNDS (3),
# PATH_SECONDS (3), CG_POLLS (200), SKIP_PATH (1: the FIB only), SKIP_FIB (1:
# the path only), QUICK (1: one round, 65,536 routes, 64 batches, a short
# path at 16,384 routes, 20 callgrind polls, no IPv4 path: figures not
# judged).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-ip6.XXXXXX")
trap 'rm -rf "$out"; rm -rf /var/run/dpdk/ip6fib$$_* 2>/dev/null || true' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

if [ "$QUICK" = 1 ]; then
	ROUNDS=1 ROUTES=${ROUTES:-65536} ITERATIONS=${ITERATIONS:-64} CHURN=5000
	PATH_ROUTES=${PATH_ROUTES:-16384} PATH_ROUNDS=1 PATH_SECONDS=${PATH_SECONDS:-0.5} CG_POLLS=20 ROUTE_DIV=16
else
	ROUNDS=${ROUNDS:-5} ROUTES=${ROUTES:-1000000} ITERATIONS=${ITERATIONS:-1024} CHURN=100000
	PATH_ROUTES=${PATH_ROUTES:-1000000} PATH_ROUNDS=${PATH_ROUNDS:-3} PATH_SECONDS=${PATH_SECONDS:-3}
	CG_POLLS=${CG_POLLS:-200} ROUTE_DIV=1
fi
SKIP_PATH=${SKIP_PATH:-0}
SKIP_FIB=${SKIP_FIB:-0}
# Every side gets the same number of 256-entry groups, enough for the
# hungriest: at 65,536 routes sluice uses 1.65 per route, rte_fib6 between
# 2 and 4 (it folds less); both share more as the set grows (at 1M routes
# sluice uses 0.62 per route and rte_fib6 failed 938 adds with 1.3 per
# route: 1.6 it is). Its count is printed; an add that finds no group fails
# the bench.
if [ "$ROUTES" -le 262144 ]; then FIB_GROUPS=${FIB_GROUPS:-$((ROUTES * 4))}; else FIB_GROUPS=${FIB_GROUPS:-$((ROUTES * 8 / 5))}; fi
CPU=${CPU:-0}

bench_need
bench_need_peer dpdk-test-fib
bench_need_libdpdk
bench_builds bench/ip6/sluice-bench-ip6-fib bench/ip6/sluice-bench-ip6-path bench/ip4/sluice-bench-ip4-path
peer_isa=$(bench_peer_isa)
peer=$out/peer_fib6
# ALLOW_EXPERIMENTAL_API: rte_vect_set_max_simd_bitwidth (the AVX-512 pass).
cc -O2 -g -Wall -Wextra -Werror -DALLOW_EXPERIMENTAL_API -I"$root" \
	$(pkg-config --cflags libdpdk) "$here/peer_fib6.c" -o "$peer" \
	$(pkg-config --libs libdpdk) >"$out/cc-peer.log" 2>&1 || { cat "$out/cc-peer.log" >&2; exit 1; }
bench_mem_mode
# rte_lpm6's and rte_fib6's groups are 1 KB each (4-byte entries) on
# hugepages: at 1M routes that is more than the 1,024 pages bench_mem_mode
# reserves. Reserve what the groups need (plus 256 MB for the rest) for this
# run and give the old count back at exit.
hp_need=$((FIB_GROUPS / 2048 + 128))
hp_old=$(cat /proc/sys/vm/nr_hugepages)
if [ "${#sluice_mem[@]}" -eq 0 ] && [ "$hp_old" -lt "$hp_need" ]; then
	echo "$hp_need" >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	trap 'rm -rf "$out"; rm -rf /var/run/dpdk/ip6fib$$_* 2>/dev/null || true; echo "$hp_old" >/proc/sys/vm/nr_hugepages 2>/dev/null || true' EXIT
	[ "$(cat /proc/sys/vm/nr_hugepages)" -ge "$hp_need" ] || bench_log "WARNING: $hp_need hugepages wanted for $FIB_GROUPS groups, $(cat /proc/sys/vm/nr_hugepages) reserved: the peers' tables may not fit"
fi
want_pages="2 MB hugetlb"
if [ "${#sluice_mem[@]}" -gt 0 ]; then
	want_pages="4 KB"
	dpdk_mem=(--no-huge -m 3584)
	mem_label="4 KB pages (sluice --no-huge, DPDK --no-huge -m 3584)"
fi
tsc_hz=$(bench_tsc_hz)
bench_log "memory: $mem_label; TSC $tsc_hz Hz; $ROUTES routes, $FIB_GROUPS groups"

# ---- the whole path: Mpps per core, then callgrind per node ---------------
# cg_nodes FAMILY MODE BIN ARGS...: callgrind at vector 256, the inclusive
# instructions per packet of each function of the binary (the largest of
# callgrind_annotate's lines for it: the inclusive one) as MODE FN VALUE.
cg_nodes() {
	local fam=$1 mode=$2 bin=$3 pk
	shift 3
	bench_log "callgrind: $fam path, routes $mode, vector 256, $CG_POLLS polls"
	( cd "$out" && timeout 1800 valgrind --tool=callgrind "--toggle-collect=${fam}_path_polls*" \
		--callgrind-out-file="$out/cg-$fam-$mode.out" "$bin" "$@" --polls "$CG_POLLS" \
		>"$out/cg-$fam-$mode.txt" 2>&1 ) || { cat "$out/cg-$fam-$mode.txt" >&2; exit 1; }
	pk=$(awk -v p="$fam-path:" '$1 == p && $2 == "polls" { print $5 }' "$out/cg-$fam-$mode.txt")
	callgrind_annotate --inclusive=yes "$out/cg-$fam-$mode.out" 2>/dev/null |
		awk -v m="$fam-$mode" -v pk="$pk" '
			match($0, /:[A-Za-z_0-9.]+( \[|$)/) {
				fn = substr($0, RSTART + 1, RLENGTH - 1); sub(/ \[$/, "", fn); sub(/\..*/, "", fn)
				ir = $1; gsub(/,/, "", ir); if (ir + 0 > best[fn]) best[fn] = ir + 0
			}
			END { for (fn in best) print m "\t" fn "\t" best[fn] / pk }' >>"$path_tsv"
}
path_section() {
	path_tsv=$out/path.tsv
	: >"$path_tsv"
	local r mode
	for r in $(seq 1 "$PATH_ROUNDS"); do
		for mode in one "$PATH_ROUTES"; do
			bench_wait_quiet
			bench_log "round $r/$PATH_ROUNDS: ip6 path, routes $mode"
			timeout 600 "$native/bench/ip6/sluice-bench-ip6-path" --routes "$mode" --cpu "$CPU" \
				--seconds "$PATH_SECONDS" >"$out/path6-$mode-$r.txt" 2>&1 ||
				{ cat "$out/path6-$mode-$r.txt" >&2; exit 1; }
			awk -v m="ip6-$mode" '/Mpps$/ { print m "\tmpps\t" $(NF - 1) }' "$out/path6-$mode-$r.txt" >>"$path_tsv"
		done
	done
	cg_nodes ip6 one "$isa/bench/ip6/sluice-bench-ip6-path" --routes one
	cg_nodes ip6 "$PATH_ROUTES" "$isa/bench/ip6/sluice-bench-ip6-path" --routes "$PATH_ROUTES"
	# QUICK: bench/ip4's own quick run measures the IPv4 path; not again.
	if [ "$QUICK" != 1 ]; then
		cg_nodes ip4 one "$isa/bench/ip4/sluice-bench-ip4-path" --routes one --no-huge
		cg_nodes ip4 full "$isa/bench/ip4/sluice-bench-ip4-path" --routes full --route-div "$ROUTE_DIV" --no-huge
	fi
	echo "== sluice ip6 path, last round; the callgrind runs =="
	cat "$out/path6-one-$PATH_ROUNDS.txt" "$out/path6-$PATH_ROUTES-$PATH_ROUNDS.txt" | grep '^ip6-path'
	grep -h -e '-path: ' "$out"/cg-*.txt
	echo
	python3 - "$path_tsv" "$PATH_ROUNDS" "$PATH_ROUTES" "$ROUTE_DIV" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds, big, div = sys.argv[1:5]
v = defaultdict(list)
for line in open(path):
    mode, key, val = line.rstrip("\n").split("\t")
    v[(mode, key)].append(float(val))
def get(mode, key):
    x = v.get((mode, key))
    return st.median(x) if x else None
fmt = lambda x, p=1: f"{x:.{p}f}" if x is not None else "-"
b6 = "ip6-" + big
print(f"== ip6 path on one core: Mpps (-march=native, median of {rounds} runs), callgrind instructions per packet "
      "(-march=corei7 build, inclusive, vector 256), beside the IPv4 path's ==")
mix = "~1.07M routes (the mix)" if div == "1" else f"the mix / {div}"
print(f"| | ip6, 1 route | ip4, 1 route | ip6, {big} routes | ip4, {mix} |")
print("|---|---|---|---|---|")
print(f"| Mpps per core | {fmt(get('ip6-one', 'mpps'), 2)} | (bench/ip4) | {fmt(get(b6, 'mpps'), 2)} | (bench/ip4) |")
tot = defaultdict(float)
for name in ("input", "lookup", "rewrite"):
    cells = []
    for m6, m4 in (("ip6-one", "ip4-one"), (b6, "ip4-full")):
        a, b = get(m6, f"ip6_{name}_fn"), get(m4, f"ip4_{name}_fn")
        tot[m6] += a or 0
        tot[m4] += b or 0
        cells += [fmt(a), fmt(b)]
    print(f"| ip6-/ip4-{name} | " + " | ".join(cells) + " |")
r1 = f'{tot["ip6-one"] / tot["ip4-one"]:.2f}' if tot["ip4-one"] else "-"
r2 = f'{tot[b6] / tot["ip4-full"]:.2f}' if tot["ip4-full"] else "-"
print(f"| **the three IP nodes** | **{tot['ip6-one']:.1f}** | **{tot['ip4-one']:.1f}** (ip6/ip4 {r1}) | "
      f"**{tot[b6]:.1f}** | **{tot['ip4-full']:.1f}** (ip6/ip4 {r2}) |")
print("goal: ip6/ip4 at most 1.10 in both columns")
for name, fn in (("ethernet-input", "ethernet_input_fn"), ("interface-output", "interface_output_fn"),
                 ("null-tx (frees)", "device_tx_fn")):
    print(f"| {name} | " + " | ".join(fmt(get(m, fn)) for m in ("ip6-one", "ip4-one", b6, "ip4-full")) + " |")
print("| whole poll loop | " + " | ".join(fmt(get(m, m[:3] + "_path_polls")) for m in ("ip6-one", "ip4-one", b6, "ip4-full")) + " |")
EOF
	echo
}
[ "$SKIP_PATH" = 1 ] || path_section
if [ "$SKIP_FIB" = 1 ]; then
	bench_report
	exit 0
fi

tsv=$out/fib.tsv
: >"$tsv"
check_mem() { # FILE: every sluice table on the pages both sides were given
	local bad
	bad=$(grep "^mem: " "$1" | grep -v "^mem: [^ ]* [^ ]* $want_pages" || true)
	[ -z "$bad" ] && return 0
	echo "bench/ip6: a table is not on $want_pages ($mem_label):" >&2
	echo "$bad" >&2
	exit 1
}
args() { echo --seed "$(($1 * 7919))" --routes "$ROUTES" --groups "$FIB_GROUPS" --iterations "$ITERATIONS"; }
run_sluice() { # SIDE BUILD ROUND
	local f=$out/$1-$3.txt
	bench_wait_quiet
	bench_log "round $3/$ROUNDS: sluice $1"
	# shellcheck disable=SC2046
	timeout 900 taskset -c "$CPU" "$2/bench/ip6/sluice-bench-ip6-fib" $(args "$3") \
		--churn "$CHURN" "${sluice_mem[@]}" >"$f" 2>&1 || { cat "$f" >&2; exit 1; }
	check_mem "$f"
	awk -v r="$3" -v s="$1" '$1 == "bench:" { k = $2; sub(/^sluice\./, "", k); print r "\t" s "\t" k "\t" $3 }' \
		"$f" >>"$tsv"
}
for r in $(seq 1 "$ROUNDS"); do
	run_sluice isa "$isa" "$r"
	run_sluice native "$native" "$r"
	bench_wait_quiet
	bench_log "round $r/$ROUNDS: rte_lpm6 and rte_fib6 (peer_fib6.c)"
	# shellcheck disable=SC2046
	timeout 3600 taskset -c "$CPU" "$peer" -l "$CPU" --no-pci "${dpdk_mem[@]}" \
		--file-prefix="ip6fib$$_$r" --log-level=lib.eal:warning -- $(args "$r") \
		>"$out/peer-$r.txt" 2>&1 || { cat "$out/peer-$r.txt" >&2; exit 1; }
	rm -rf /var/run/dpdk/"ip6fib$$_$r"
	check_mem "$out/peer-$r.txt"
	awk -v r="$r" '$1 == "bench:" { split($2, k, "."); print r "\t" k[1] "\t" k[2] "\t" $3 }' \
		"$out/peer-$r.txt" >>"$tsv"
done

echo "== sluice IPv6 FIB ($isa_label), last round =="
grep -v '^bench: ' "$out/isa-$ROUNDS.txt"
echo
echo "== rte_lpm6 and rte_fib6 (bench/ip6/peer_fib6.c), last round =="
grep -v -e '^bench: ' -e '^TELEMETRY' -e '^EAL: ' "$out/peer-$ROUNDS.txt"
echo
python3 - "$tsv" "$ROUNDS" "$mem_label" "$tsc_hz" <<'PY'
import sys, statistics as st
from collections import defaultdict
path, rounds, mem, tsc = sys.argv[1:5]
v = defaultdict(list)
for line in open(path):
    r, side, key, val = line.rstrip("\n").split("\t")
    v[(side, key)].append(float(val))
for r in range(int(rounds)):
    sums = {s: v[(s, "sum")][r] for s in ("isa", "native", "lpm6", "fib6") if len(v.get((s, "sum"), [])) > r}
    if len(set(sums.values())) != 1 or len(sums) != 4:
        sys.exit(f"bench/ip6: round {r + 1}: lookup result sums differ or are missing: {sums}")
def mmm(side, key):
    x = v.get((side, key))
    return (min(x), st.median(x), max(x)) if x else None
def cell(side, key, p):
    m = mmm(side, key)
    return f"{m[1]:.{p}f} ({m[0]:.{p}f}-{m[2]:.{p}f})" if m else "-"
print(f"== medians (min-max) of {rounds} rounds, TSC ticks per operation (TSC {float(tsc) / 1e9:.3f} GHz); "
      f"{mmm('isa', 'routes')[1]:.0f} routes offered, {mmm('isa', 'unique')[1]:.0f} unique; memory: {mem} ==")
print("ratio: sluice corei7 / peer (below 1: sluice faster). All lookup sums agree.")
cols = [("isa", "sluice corei7"), ("native", "sluice native"), ("lpm6", "rte_lpm6"), ("fib6", "rte_fib6")]
print("| operation | " + " | ".join(c[1] for c in cols) + " | /rte_lpm6 | /rte_fib6 |")
print("|---" * (len(cols) + 3) + "|")
ops = [("add, whole table in order", "add_all", 0), ("lookup, bulk of 32", "lookup_bulk", 1),
       ("lookup, x4 (sluice only)", "lookup_x4", 1), ("lookup, single (rte_fib6: bulk of 1)", "lookup_single", 1),
       ("delete, whole table in order", "del_all", 0), ("lookup misses, %", "miss_pct", 1)]
for name, key, p in ops:
    a = mmm("isa", key)
    ratio = lambda s: f"{a[1] / mmm(s, key)[1]:.2f}" if a and mmm(s, key) and mmm(s, key)[1] else "-"
    print(f"| {name} | " + " | ".join(cell(s, key, p) for s, _ in cols) + f" | {ratio('lpm6')} | {ratio('fib6')} |")
if mmm("fib6", "lookup_bulk_avx512"):
    print(f"| lookup, bulk of 32, rte_fib6 AVX-512 | | {cell('native', 'lookup_bulk', 1)} | | "
          f"{cell('fib6', 'lookup_bulk_avx512', 1)} | | |")
print(f"\nsluice only: churn in the full table, delete {mmm('isa', 'churn_del')[1]:.0f}, re-add "
      f"{mmm('isa', 'churn_add')[1]:.0f} ticks per call; {mmm('isa', 'groups_used')[1]:.0f} groups, "
      f"{mmm('isa', 'bytes_per_route')[1]:.0f} bytes per route (tbl24 included)")
PY

vals() { awk -v s="$1" -v k="$2" '$2 == s && $3 == k { printf "%s%s", sep, $4; sep = " " }' "$tsv"; }
set_what="$ROUTES routes shaped like the public IPv6 table"
stat="median over rounds of each round's mean (TSC ticks of the whole pass / operations)"
[ "$QUICK" != 1 ] || stat="$stat; QUICK: one round, $ROUTES routes, $ITERATIONS lookup batches"
declare -A what=(
	[add_all]="IPv6 FIB add, whole table in order ($set_what), ticks per route"
	[lookup_bulk]="IPv6 FIB lookup, bulk of 32 (addresses under the routes, $set_what), ticks per lookup"
	[lookup_single]="IPv6 FIB lookup, one address per call (addresses under the routes, $set_what), ticks per lookup"
	[del_all]="IPv6 FIB delete, whole table in order ($set_what), ticks per route"
)
declare -A burst=(
	[add_all]="one route per call, both" [lookup_bulk]="32 both" [lookup_single]="1 both"
	[del_all]="one route per call, both"
)
for op in add_all lookup_bulk lookup_single del_all; do
	for p in lpm6 fib6; do
		b=${burst[$op]}
		[ "$p/$op" != fib6/lookup_single ] || b="1 both (rte_fib6: rte_fib6_lookup_bulk of 1, it has no single lookup)"
		bench_row --bench ip6 --what "${what[$op]}" --unit "TSC ticks" --better lower \
			--sluice "$(vals isa "$op")" --peer-name "rte_$p" --peer "$(vals "$p" "$op")" \
			--burst "$b" --memory "$mem_label" --isa "both -march=$peer_isa" --statistic "$stat"
	done
done
if [ -n "$(vals fib6 lookup_bulk_avx512)" ]; then
	bench_row --bench ip6 --what "${what[lookup_bulk]}" --unit "TSC ticks" --better lower \
		--sluice "$(vals native lookup_bulk)" --peer-name "rte_fib6 (AVX-512 lookup)" \
		--peer "$(vals fib6 lookup_bulk_avx512)" --burst "32 both" --memory "$mem_label" \
		--isa "sluice $native_label; rte_fib6 RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512" --statistic "$stat" \
		--differs "ISA: sluice built -march=native (scalar code); rte_fib6's runtime-selected AVX-512 lookup" \
		--sluice-label "sluice -march=native"
fi
echo
bench_report
