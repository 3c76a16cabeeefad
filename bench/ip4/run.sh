#!/usr/bin/env bash
# sluice's IPv4 FIB beside DPDK's rte_lpm and rte_fib (DIR-24-8), same box,
# same core, same memory mode, same routes and lookup addresses, timed the
# same way; then sluice's whole ip4 forwarding path (sluice only).
#
#   bench/ip4/run.sh
#
# FIB, ROUNDS rounds, each after waiting for a quiet box (bench_wait_quiet):
#   sluice-bench-ip4-fib from the $isa build (-march=corei7, Debian's DPDK
#   baseline: the matched rows) and from the $native build (one row, says it
#   differs), then bench/ip4/peer_fib.c, our harness, compiled here against
#   libdpdk (never by meson), on rte_lpm and rte_fib. The same --seed for
#   all three in a round, so the same route set in the same order:
#   lpm_perf_autotest's mix of 1,076,806 routes (bench/ip4/routes.h), the
#   same uniformly random lookup addresses (bench/ip4/fibbench.h), and the
#   same timing: rdtsc around the whole add loop (/ routes), each lookup
#   batch (/ lookups; batches of 4096 generated untimed, looked up one at a
#   time, 4 at a time, or in bulks of 32; a pass's figure is the median over
#   its batches, its mean shown beside), the whole delete loop (/ routes).
#   Each side's lookup results are summed and must agree, or the bench fails.
#   Not lpm_perf_autotest: its delete timing also holds a lookup pass, and
#   its 2048 tbl8 groups do not hold the whole set.
# Memory (bench_mem_mode): 2 MB hugepages on both sides (DPDK --in-memory,
#   sluice's FIB IP4_FIB_MEM_HUGETLB) or, with DPDK_MEM_MODE=nohuge or no
#   hugepages, 4 KB pages on both (DPDK --no-huge -m 1024, sluice --no-huge:
#   IP4_FIB_MEM_4K, no THP). Every table's pages are read back from
#   /proc/self/smaps and the bench fails when they are not that mode.
# Rows (bench_row): add, lookup bulk of 32, lookup single (rte_fib has no
#   single lookup: its bulk of 1), delete, sluice $isa vs rte_lpm and vs
#   rte_fib; the bulk lookup on sluice $native vs rte_fib's AVX-512 lookup
#   when this CPU and DPDK build have it (else its default lookup); with
#   BEFORE=REV the four operations at REV's $before_isa vs rte_fib (a FIB
#   from before the memory modes picks its own pages: the row says which).
#   Statistic: adds and deletes, the median over rounds of each round's mean
#   over the whole loop; lookups, the median over rounds of each round's
#   median over its batches (fibbench.h: a pass's mean on a shared box holds
#   every preemption, the pass means are printed beside). x4 only vs rte_lpm
#   (rte_fib has none).
#
# Cross-check (its own output, no row): dpdk-test-fib on round 1's routes and
#   the first 64 batches of addresses (sluice-bench-ip4-fib --dump), DIR-24-8
#   with 4-byte next hops: rte_fib timed by DPDK's own tool.
#
# Path (sluice only, its own table): sluice-bench-ip4-path, a source node of
# prebuilt frames -> ethernet-input -> ip4-input -> ip4-lookup -> ip4-rewrite
# -> interface-output -> null-tx, with 1 route and with the mix: Mpps on one
# core ($native, median of ROUNDS runs) and callgrind instructions per packet
# of each node at vector 256 ($isa: valgrind cannot run AVX-512).
#
# Environment: ROUNDS (2: rte_lpm's add and delete search its rules of one
# depth linearly, ~1.07M adds and deletes take minutes per round, so three
# rounds would pass the 8-minute budget), CPU (0: the core every side runs
# on), DPDK_MEM_MODE (huge|nohuge), QUIET_MAX (120 s), PATH_SECONDS (3),
# ITERATIONS (1024 lookup batches of 4096 per pass), ROUTE_DIV (1: the whole
# mix; every depth's count divided by it), SKIP_PATH (1: the FIB only),
# BEFORE (a git revision), QUICK (1: one round, the mix / 16, 64 batches,
# short path runs, 20 callgrind polls; figures not judged).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-ip4.XXXXXX")
trap 'rm -rf "$out"; rm -rf /var/run/dpdk/ip4fib$$_* 2>/dev/null || true' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

if [ "$QUICK" = 1 ]; then
	ROUNDS=1 ITERATIONS=${ITERATIONS:-64} ROUTE_DIV=${ROUTE_DIV:-16}
	PATH_SECONDS=${PATH_SECONDS:-0.5} PATH_WARMUP=0.2 CG_POLLS=20 CHURN=5000
else
	ROUNDS=${ROUNDS:-2} ITERATIONS=${ITERATIONS:-1024} ROUTE_DIV=${ROUTE_DIV:-1}
	PATH_SECONDS=${PATH_SECONDS:-3} PATH_WARMUP=1 CG_POLLS=200 CHURN=100000
fi
CPU=${CPU:-0}
SKIP_PATH=${SKIP_PATH:-0}

# ---- peer, builds, memory -------------------------------------------------
bench_need
bench_need_peer dpdk-test dpdk-test-fib
bench_need_libdpdk
bench_builds bench/ip4/sluice-bench-ip4-fib bench/ip4/sluice-bench-ip4-path
peer_isa=$(bench_peer_isa)
peer=$out/peer_fib
# ALLOW_EXPERIMENTAL_API: rte_vect_set_max_simd_bitwidth (the AVX-512 pass).
cc -O2 -g -Wall -Wextra -Werror -DALLOW_EXPERIMENTAL_API -I"$root" \
	$(pkg-config --cflags libdpdk) "$here/peer_fib.c" -o "$peer" \
	$(pkg-config --libs libdpdk) -lm >"$out/cc-peer.log" 2>&1 || { cat "$out/cc-peer.log" >&2; exit 1; }
bench_mem_mode
want_pages="2 MB hugetlb"
[ "${#sluice_mem[@]}" -eq 0 ] || want_pages="4 KB"
tsc_hz=$(bench_tsc_hz)
bench_log "memory: $mem_label; TSC $tsc_hz Hz"

# ---- the whole path: Mpps per core, then callgrind per node ---------------
path_section() {
	local path_tsv=$out/path.tsv r mode pk
	: >"$path_tsv"
	for r in $(seq 1 "$ROUNDS"); do
		for mode in one full; do
			bench_wait_quiet
			bench_log "round $r/$ROUNDS: ip4 path, routes $mode"
			timeout 300 "$native/bench/ip4/sluice-bench-ip4-path" --routes "$mode" --cpu "$CPU" \
				--route-div "$ROUTE_DIV" --seconds "$PATH_SECONDS" --warmup "$PATH_WARMUP" \
				"${sluice_mem[@]}" >"$out/path-$mode-$r.txt" 2>&1 ||
				{ cat "$out/path-$mode-$r.txt" >&2; exit 1; }
			awk -v m="$mode" '/Mpps$/ { print m "\tmpps\t" $(NF - 1) }' "$out/path-$mode-$r.txt" >>"$path_tsv"
		done
	done
	for mode in one full; do
		bench_log "callgrind: ip4 path, routes $mode, vector 256, $CG_POLLS polls"
		( cd "$out" && timeout 900 valgrind --tool=callgrind '--toggle-collect=ip4_path_polls*' \
			--callgrind-out-file="$out/cg-$mode.out" "$isa/bench/ip4/sluice-bench-ip4-path" \
			--routes "$mode" --route-div "$ROUTE_DIV" --polls "$CG_POLLS" "${sluice_mem[@]}" \
			>"$out/cg-$mode.txt" 2>&1 ) || { cat "$out/cg-$mode.txt" >&2; exit 1; }
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
	python3 - "$path_tsv" "$ROUNDS" "$ROUTE_DIV" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds, div = sys.argv[1:4]
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
full = "~1.07M routes" if div == "1" else f"the mix / {div}"
print(f"== ip4 path on one core (sluice only): Mpps (-march=native, median of {rounds} runs), callgrind "
      "instructions per packet (-march=corei7 build, inclusive, vector 256) ==")
print(f"| | 1 route | {full} |")
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
	echo
}
[ "$SKIP_PATH" = 1 ] || path_section

# ---- FIB rounds ------------------------------------------------------------
tsv=$out/fib.tsv
: >"$tsv"
# check_mem FILE: every table's pages are the mode both sides were given.
check_mem() {
	local bad
	bad=$(grep '^mem: ' "$1" | grep -v "^mem: [^ ]* [^ ]* $want_pages" || true)
	[ -z "$bad" ] && return 0
	echo "bench/ip4: a table is not on $want_pages ($mem_label):" >&2
	echo "$bad" >&2
	exit 1
}
run_sluice() { # run_sluice SIDE BUILD ROUND
	local f=$out/$1-$3.txt
	bench_wait_quiet
	bench_log "round $3/$ROUNDS: sluice $1"
	timeout 600 taskset -c "$CPU" "$2/bench/ip4/sluice-bench-ip4-fib" --seed "$(($3 * 7919))" \
		--iterations "$ITERATIONS" --route-div "$ROUTE_DIV" --churn "$CHURN" "${sluice_mem[@]}" \
		>"$f" 2>&1 || { cat "$f" >&2; exit 1; }
	[ "$1" = before ] || check_mem "$f"
	awk -v r="$3" -v s="$1" '$1 == "bench:" { k = $2; sub(/^sluice\./, "", k); print r "\t" s "\t" k "\t" $3 }' \
		"$f" >>"$tsv"
}
for r in $(seq 1 "$ROUNDS"); do
	run_sluice isa "$isa" "$r"
	run_sluice native "$native" "$r"
	[ -z "$before_isa" ] || run_sluice before "$before_isa" "$r"
	bench_wait_quiet
	bench_log "round $r/$ROUNDS: rte_lpm and rte_fib (peer_fib.c)"
	timeout 1800 taskset -c "$CPU" "$peer" -l "$CPU" --no-pci "${dpdk_mem[@]}" \
		--file-prefix="ip4fib$$_$r" --log-level=lib.eal:warning -- --seed "$((r * 7919))" \
		--iterations "$ITERATIONS" --route-div "$ROUTE_DIV" >"$out/peer-$r.txt" 2>&1 ||
		{ cat "$out/peer-$r.txt" >&2; exit 1; }
	rm -rf /var/run/dpdk/"ip4fib$$_$r"
	check_mem "$out/peer-$r.txt"
	awk -v r="$r" '$1 == "bench:" { split($2, k, "."); print r "\t" k[1] "\t" k[2] "\t" $3 }' \
		"$out/peer-$r.txt" >>"$tsv"
done

# ---- cross-check: dpdk-test-fib on the same set (its own timing) ---------
# Not a row: it times its own way (per-chunk averages, its own lookup batch).
bench_log "cross-check: dpdk-test-fib on the same routes and addresses"
"$isa/bench/ip4/sluice-bench-ip4-fib" --seed 7919 --route-div "$ROUTE_DIV" --iterations 64 \
	--dump "$out/set" >"$out/dump.txt" 2>&1 || { cat "$out/dump.txt" >&2; exit 1; }
timeout 600 taskset -c "$CPU" dpdk-test-fib -l "$CPU" --no-pci "${dpdk_mem[@]}" \
	--file-prefix="ip4fib$$_tf" --log-level=lib.eal:warning -- -f "$out/set.routes" \
	-t "$out/set.ips" -b dir -e 4 -g 65536 >"$out/test-fib.txt" 2>&1 ||
	{ cat "$out/test-fib.txt" >&2; exit 1; }
test_fib=$(awk '/^AVG FIB add/ { a += $4; na++ } /^AVG FIB lookup/ { l = $4 }
	/^AVG FIB delete/ { d += $4; nd++ }
	END { if (na && nd && l) printf "add %.0f, lookup %.1f, delete %.0f", a / na, l, d / nd }' "$out/test-fib.txt")
[ -n "$test_fib" ] || { cat "$out/test-fib.txt" >&2; echo "bench/ip4: dpdk-test-fib printed no figures" >&2; exit 1; }

# ---- report ----------------------------------------------------------------
echo "== sluice FIB ($isa_label), last round =="
grep -v '^bench: ' "$out/isa-$ROUNDS.txt"
echo
echo "== rte_lpm and rte_fib (bench/ip4/peer_fib.c), last round =="
grep -v -e '^bench: ' -e '^TELEMETRY' -e '^EAL: ' "$out/peer-$ROUNDS.txt"
echo
echo "cross-check, dpdk-test-fib (rte_fib DIR-24-8, 4-byte next hops, 65,536 tbl8 groups; the round-1 routes"
echo "  and the first 64 batches of addresses; its own timing: mean of its per-chunk averages): $test_fib ticks"
echo
python3 - "$tsv" "$ROUNDS" "$mem_label" "$tsc_hz" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds, mem, tsc = sys.argv[1:5]
v = defaultdict(list)
for line in open(path):
    r, side, key, val = line.rstrip("\n").split("\t")
    v[(side, key)].append(float(val))
def med(side, key):
    x = v.get((side, key))
    return st.median(x) if x else None
# Every table answered the same lookups with the same results.
for r in range(int(rounds)):
    sums = {s: v[(s, "sum")][r] for s in ("isa", "native", "lpm", "fib") if len(v.get((s, "sum"), [])) > r}
    if len(set(sums.values())) != 1 or len(sums) != 4:
        sys.exit(f"bench/ip4: round {r + 1}: lookup result sums differ or are missing: {sums}")
routes = med("isa", "routes")
print(f"== medians of {rounds} rounds, TSC ticks per operation (TSC {float(tsc) / 1e9:.3f} GHz); "
      f"{routes:.0f} routes of lpm_perf_autotest's mix, the same on every side; memory: {mem} ==")
print("ratio: sluice / peer (below 1: sluice faster). All lookup sums agree. Lookups: each round's median over its\n"
      "4096-lookup batches; 'pass mean' rows: each round's mean over the pass (holds preemptions on a loaded box).")
for s_, k in (("isa", "lookup_single"), ("lpm", "lookup_single"), ("isa", "lookup_bulk"), ("lpm", "lookup_bulk")):
    x = v.get((s_, k), [])
    if x:
        print(f"  {s_} {k}: rounds min {min(x):.1f} / max {max(x):.1f}")
cols = [("isa", "sluice corei7"), ("native", "sluice native"), ("lpm", "rte_lpm"), ("fib", "rte_fib")]
if ("before", "add_all") in v:
    cols.append(("before", "sluice BEFORE (corei7)"))
print("| operation | " + " | ".join(c[1] for c in cols) + " | corei7/rte_lpm | corei7/rte_fib |")
print("|---" * (len(cols) + 3) + "|")
ops = [("add, whole table in order", "add_all", 0), ("lookup, bulk of 32", "lookup_bulk", 1),
       ("lookup, x4", "lookup_x4", 1), ("lookup, single (rte_fib: bulk of 1)", "lookup_single", 1),
       ("delete, whole table in order", "del_all", 0), ("lookup misses, %", "miss_pct", 1),
       ("lookup, bulk of 32: pass mean", "lookup_bulk_mean", 1), ("lookup, x4: pass mean", "lookup_x4_mean", 1),
       ("lookup, single: pass mean", "lookup_single_mean", 1)]
fmt = lambda x, p: f"{x:.{p}f}" if x is not None else "-"
for name, key, p in ops:
    cells = [fmt(med(s, key), p) for s, _ in cols]
    a = med("isa", key)
    rl = fmt(a / med("lpm", key), 2) if a and med("lpm", key) else "-"
    rf = fmt(a / med("fib", key), 2) if a and med("fib", key) else "-"
    print(f"| {name} | " + " | ".join(cells) + f" | {rl} | {rf} |")
if med("fib", "lookup_bulk_avx512"):
    print(f"| lookup, bulk of 32, rte_fib AVX-512 | | {fmt(med('native', 'lookup_bulk'), 1)} | | "
          f"{fmt(med('fib', 'lookup_bulk_avx512'), 1)} | | |")
print(f"\nunique routes held: sluice {med('isa', 'unique'):.0f} of {routes:.0f} offered "
      "(duplicates replace); rte_lpm and rte_fib take every add, with 65,536 tbl8 groups")
print("\nsluice only (corei7 build; no peer case):")
print("| operation | sluice |")
print("|---|---|")
for name, key in [("add, one at a time into the full table (churn)", "churn_add"),
                  ("delete, one at a time from the full table (churn)", "churn_del"),
                  ("1 route: lookup bulk of 32", "one.lookup_bulk"), ("1 route: lookup x4", "one.lookup_x4"),
                  ("1 route: lookup single", "one.lookup_single"),
                  ("1 route: add (mix routes, one at a time)", "one.add"), ("1 route: delete", "one.del")]:
    print(f"| {name} | {fmt(med('isa', key), 1)} |")
if ("before", "add_all") in v:
    print("\nbefore / after (corei7 builds, medians, ticks): " + ", ".join(
        f"{key} {med('before', key):.1f} -> {med('isa', key):.1f}"
        for key in ("add_all", "lookup_bulk", "lookup_single", "del_all")))
EOF

# ---- rows -----------------------------------------------------------------
# A FIB from before the memory modes picks its own pages: say so where they
# are not the mode's.
before_differs=()
if [ -n "$before_isa" ] && grep -h '^mem: ' "$out"/before-*.txt | grep -qv "^mem: [^ ]* [^ ]* $want_pages"; then
	before_differs=(--differs "memory: $before_label's FIB chose its own pages ($(grep -h '^mem: ' \
		"$out/before-1.txt" | sed 's/^mem: sluice //; s/ (no memory mode)//' | paste -sd ';' -))")
fi
vals() { awk -v s="$1" -v k="$2" '$2 == s && $3 == k { printf "%s%s", sep, $4; sep = " " }' "$tsv"; }
if [ "$ROUTE_DIV" = 1 ]; then
	set_what="the ~1.07M routes of lpm_perf_autotest's mix"
else
	set_what="lpm_perf_autotest's mix / $ROUTE_DIV ($(vals isa routes | cut -d' ' -f1) routes)"
fi
stat="median over rounds of each round's mean (TSC ticks of the whole loop / operations)"
lstat="median over rounds of each round's median over its 4096-lookup batches (TSC ticks of the batch / 4096)"
[ "$QUICK" != 1 ] || stat="$stat; QUICK: one round, the mix / $ROUTE_DIV, $ITERATIONS lookup batches"
[ "$QUICK" != 1 ] || lstat="$lstat; QUICK: one round, the mix / $ROUTE_DIV, $ITERATIONS lookup batches"
matched="both -march=$peer_isa"
declare -A what=(
	[add_all]="IPv4 FIB add, whole table in order ($set_what), ticks per route"
	[lookup_bulk]="IPv4 FIB lookup, bulk of 32 (random addresses, $set_what), ticks per lookup"
	[lookup_single]="IPv4 FIB lookup, one address per call (random, $set_what), ticks per lookup"
	[lookup_x4]="IPv4 FIB lookup, 4 addresses per call (random, $set_what), ticks per lookup"
	[del_all]="IPv4 FIB delete, whole table in order ($set_what), ticks per route"
)
declare -A burst=(
	[add_all]="one route per call, both"
	[lookup_bulk]="32 both"
	[lookup_single]="1 both"
	[lookup_x4]="4 both (sluice ip4_fib_lookup_x4, rte_lpm_lookupx4)"
	[del_all]="one route per call, both"
)
for op in add_all lookup_bulk lookup_x4 lookup_single del_all; do
	st=$stat
	[ "${op#lookup}" = "$op" ] || st=$lstat
	for p in lpm fib; do
		[ "$p/$op" != fib/lookup_x4 ] || continue
		b=${burst[$op]}
		[ "$p/$op" != fib/lookup_single ] || b="1 both (rte_fib: rte_fib_lookup_bulk of 1, it has no single lookup)"
		bench_row --bench ip4 --what "${what[$op]}" --unit "TSC ticks" --better lower \
			--sluice "$(vals isa "$op")" --peer-name "rte_$p" --peer "$(vals "$p" "$op")" \
			--burst "$b" --memory "$mem_label" --isa "$matched" --statistic "$st"
	done
	[ -z "$before_isa" ] || [ "$op" = lookup_x4 ] || bench_row --bench ip4 --what "${what[$op]}" --unit "TSC ticks" \
		--better lower --sluice "$(vals before "$op")" --peer-name rte_fib --peer "$(vals fib "$op")" \
		--burst "${burst[$op]}" --memory "$mem_label" --isa "$matched" --statistic "$st" \
		--sluice-label "$before_label" "${before_differs[@]}"
done
if [ -n "$(vals fib lookup_bulk_avx512)" ]; then
	bench_row --bench ip4 --what "${what[lookup_bulk]}" --unit "TSC ticks" --better lower \
		--sluice "$(vals native lookup_bulk)" --peer-name "rte_fib (AVX-512 lookup)" \
		--peer "$(vals fib lookup_bulk_avx512)" --burst "32 both" --memory "$mem_label" \
		--isa "sluice $native_label; rte_fib RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512" --statistic "$lstat" \
		--differs "ISA: sluice built -march=native; rte_fib's runtime-selected AVX-512 lookup" \
		--sluice-label "sluice -march=native"
else
	bench_row --bench ip4 --what "${what[lookup_bulk]}" --unit "TSC ticks" --better lower \
		--sluice "$(vals native lookup_bulk)" --peer-name rte_fib --peer "$(vals fib lookup_bulk)" \
		--burst "32 both" --memory "$mem_label" --isa "sluice $native_label, DPDK $peer_isa" \
		--statistic "$lstat" --differs "ISA: sluice built -march=native, DPDK -march=$peer_isa" \
		--sluice-label "sluice -march=native"
fi
echo
bench_report
