#!/usr/bin/env bash
# sluice's graph engine beside rte_graph, on graph_perf_autotest's topologies.
#
#   bench/graph/run.sh
#
# Checks for its peer (`dpdk-test`, Debian 12's dpdk-dev), builds
# bench/graph/sluice-bench-graph and -classify in the shared builds ($isa:
# Debian's DPDK baseline, -march=corei7; $native: -march=native), sets up the
# memory mode (bench_mem_mode: 2 MB hugepages on both sides, or 4 KB pages on
# both), then for ROUNDS rounds runs, each after waiting for a quiet box:
#   sluice $isa,    per-object stage (--stage objects)  the matched figure
#   sluice $isa,    run-splitting stage (--stage runs)  differs: less work
#   sluice $native, per-object stage                    differs: ISA
#   sluice BEFORE's $before_isa, per-object stage       (with BEFORE=REV)
#   `dpdk-test graph_perf_autotest`                     the peer
# The per-object stage hands objects on in fours and ones (node_enqueue_x4,
# node_enqueue_x1), as graph_perf_autotest's worker does (rte_node_enqueue_x4
# while the count left is a multiple of four, else _x1/_x2); the
# run-splitting stage copies each next's run at once, which is less work on
# the fan-out topologies (on the chains both forward whole frames).
#
# Figures: objects/s through the sinks (the sum over a topology's sinks of
# each sink's objects over the measured interval), per round; a row is the
# median over the rounds of each side, higher is better. graph_perf_autotest
# has a fixed duration (per topology 0.3 s warm-up, 1 s measured, 1 s more
# for the worker to stop: about 10 s for its 7 topologies) that no option
# shortens; QUICK shortens only sluice's intervals.
#
# Its own output: the matched variant's last round, a per-node table (Mobjs/s
# and TSC ticks per call of every node, each variant beside rte_graph's
# cycles per call), the side-by-side sink rates with min/median/max, and the
# classify node's callgrind instructions per packet (sluice only: a node
# reading one header byte and choosing between two next nodes, $isa build,
# which valgrind can run) with its TSC ticks per packet natively. Then the
# summary rows (bench_report): the matched row for every topology, plus
# -march=native for the 1->4->1 chain and the tree, and the run-splitting
# stage for the tree (on the chain it is the same code as the per-object one).
#
# Instructions per object on every topology, both sides (callgrind, $isa
# build, one thread, 4 KB pages: valgrind): sluice-bench-graph --loops
# (bench_loops) beside peer_rte_graph.c, ours, built here with cc against
# Debian's libdpdk, doing graph_perf_autotest's node work through the
# public rte_graph API (peer_walks); dpdk-test itself cannot be counted per
# object (fixed duration, two lcores, no symbols). Each: CG_LOOPS loops
# after 64 uncounted ones, Ir over the objects through the sinks, one
# valgrind run per side (a profile part per topology). The box's load does
# not move these; a loaded box moves every timed figure.
#
# Environment: ROUNDS (3; QUICK 1), SECONDS_PER_TOPO (1; QUICK 0.2), WARMUP
# (0.3; QUICK 0.1), CG_CALLS (callgrind's node calls, 4000; QUICK 200),
# CG_LOOPS (graph loops per topology under callgrind, 2000; QUICK 100),
# DPDK_MEM_MODE (huge|nohuge), QUIET_MAX, CPU (1: the core both graphs run
# on; rte_graph's worker lcore is CPU, its main lcore 0), BEFORE (a git
# revision), QUICK.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-graph.XXXXXX")
trap 'rm -rf "$out"' EXIT
# shellcheck source=../lib.sh
. "$root/bench/lib.sh"

if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1} SECONDS_PER_TOPO=${SECONDS_PER_TOPO:-0.2} WARMUP=${WARMUP:-0.1}
	CG_CALLS=${CG_CALLS:-200} CL_CALLS=${CL_CALLS:-20000} CG_LOOPS=${CG_LOOPS:-100}
else
	ROUNDS=${ROUNDS:-3} SECONDS_PER_TOPO=${SECONDS_PER_TOPO:-1} WARMUP=${WARMUP:-0.3}
	CG_CALLS=${CG_CALLS:-4000} CL_CALLS=${CL_CALLS:-1000000} CG_LOOPS=${CG_LOOPS:-2000}
fi
CPU=${CPU:-1}

bench_need_peer dpdk-test
bench_builds bench/graph/sluice-bench-graph bench/graph/sluice-bench-classify
# The callgrind peer: ours, against Debian's libdpdk, with sluice's -O2 -g
# (the rte_graph fast path is experimental API in DPDK 22.11).
peer_cg="$out/sluice-peer-rte-graph"
# shellcheck disable=SC2046
cc -O2 -g -Wall -Wextra -Werror -DALLOW_EXPERIMENTAL_API $(pkg-config --cflags libdpdk) \
	-o "$peer_cg" "$here/peer_rte_graph.c" $(pkg-config --libs libdpdk) 2>"$out/peer-cc.log" ||
	{ cat "$out/peer-cc.log" >&2; echo "bench/graph: the rte_graph peer harness did not build" >&2; exit 1; }
bench_mem_mode
bench_log "memory: $mem_label"
peer_isa=$(bench_peer_isa)
hz=$(bench_tsc_hz)
[ "$(nproc)" -ge 2 ] || bench_log "WARNING: fewer than 2 CPUs: rte_graph's main lcore and worker share a core"

# variant name, build, --stage
variants=("objects $isa objects" "runs $isa runs" "native $native objects")
[ -z "$before_isa" ] || variants+=("before $before_isa objects")

tsv=$out/results.tsv
: >"$tsv"

# sluice_round ROUND VARIANT BUILD STAGE: one pass over every topology.
sluice_round() {
	local r=$1 v=$2 build=$3 stage=$4 txt=$out/sluice-$2-$1.txt
	bench_wait_quiet
	bench_log "round $r/$ROUNDS: sluice $v (load $(cut -d' ' -f1 /proc/loadavg))"
	timeout 120 "$build/bench/graph/sluice-bench-graph" --stage "$stage" --cpu "$CPU" \
		--seconds "$SECONDS_PER_TOPO" --warmup "$WARMUP" "${sluice_mem[@]}" \
		--tsv "$out/sluice-$v-$r.tsv" >"$txt" 2>&1 || { cat "$txt" >&2; exit 1; }
	sed "s/^sluice\t/$r\t$v\t/" "$out/sluice-$v-$r.tsv" >>"$tsv"
}

# dpdk_round ROUND: graph_perf_autotest, its per-node tables into the TSV.
dpdk_round() {
	local r=$1 txt=$out/dpdk-$1.txt prefix=bg$$_$1
	bench_wait_quiet
	bench_log "round $r/$ROUNDS: rte_graph (load $(cut -d' ' -f1 /proc/loadavg))"
	local t0=$SECONDS
	DPDK_TEST=graph_perf_autotest timeout 180 dpdk-test -l 0,"$CPU" --no-pci "${dpdk_mem[@]}" \
		--file-prefix="$prefix" >"$txt" 2>&1 || { cat "$txt" >&2; exit 1; }
	bench_log "graph_perf_autotest took $((SECONDS - t0)) s (its duration is fixed)"
	grep -q 'Test OK' "$txt" || { cat "$txt" >&2; exit 1; }
	# | test_graph_perf_<node> | calls | objs | realloc | objs/call | objs/sec(10E6) | cycles/call |
	# then " + TestCase [ k] : <name> succeeded" closes that table.
	awk -v r="$r" -F'|' '
		/^\|test_graph_perf_/ {
			n = $2; gsub(/ /, "", n); sub(/^test_graph_perf_/, "", n); sub(/^source_one/, "source", n)
			row[++k] = n "\t" ($3 + 0) "\t" ($4 + 0) "\t" ($7 + 0) "\t" ($8 + 0)
		}
		/TestCase \[/ {
			name = $0; sub(/.*: /, "", name); sub(/ .*/, "", name)
			for (i = 1; i <= k; i++) print r "\trte_graph\t" name "\t" row[i]
			k = 0
		}' "$txt" >>"$tsv"
	rm -rf /var/run/dpdk/"$prefix"
}

for r in $(seq 1 "$ROUNDS"); do
	for v in "${variants[@]}"; do
		# shellcheck disable=SC2086
		sluice_round "$r" $v
	done
	dpdk_round "$r"
done

# ---- callgrind: instructions per packet of the two-way classify node ------
bench_log "callgrind: classify node, vector 256, $CG_CALLS calls, $isa"
(cd "$out" && timeout 300 valgrind --tool=callgrind --toggle-collect=classify_node \
	--callgrind-out-file="$out/cg.out" "$isa/bench/graph/sluice-bench-classify" --calls "$CG_CALLS" \
	"${sluice_mem[@]}" >"$out/cg.txt" 2>&1) || { cat "$out/cg.txt" >&2; exit 1; }
cg_ir=$(awk '/^summary:/ {print $2}' "$out/cg.out")
cg_pkts=$(awk '/^classify:/ {print $3}' "$out/cg.txt")
for b in isa native; do
	timeout 60 taskset -c "$CPU" "${!b}/bench/graph/sluice-bench-classify" --check --calls "$CL_CALLS" \
		"${sluice_mem[@]}" >"$out/classify-$b.txt" 2>&1 || { cat "$out/classify-$b.txt" >&2; exit 1; }
done
cl_isa=$(awk '/^classify:/ {print $NF}' "$out/classify-isa.txt")
cl_native=$(awk '/^classify:/ {print $NF}' "$out/classify-native.txt")

# ---- callgrind: instructions per object on every topology, both sides ----
# One valgrind run per side: --dump-after writes one profile part per
# topology (FILE.1 .. FILE.7, in the order the "loops:" lines come).
graph_topos=(graph_hr_4s_1n_1src_1snk graph_hr_4s_1n_1src_1snk_brst_one graph_hr_4s_1n_2src_1snk
	graph_hr_4s_1n_1src_2snk graph_tree_4s_4n_1src_4snk graph_reverse_tree_3s_4n_1src_1snk
	graph_parallel_tree_5s_4n_4src_4snk)
# cg_split SIDE FN CMD...: callgrind of CMD, each topology's Ir per object into $out/cgo-SIDE-TOPO
cg_split() {
	local side=$1 fn=$2 i=0 t ir objs
	shift 2
	bench_log "callgrind: $side, every topology, $CG_LOOPS loops each"
	(cd "$out" && timeout 900 valgrind --tool=callgrind --toggle-collect="$fn" --dump-after="$fn" \
		--callgrind-out-file="$out/cg-$side.out" "$@" 2>/dev/null) | grep '^loops:' >"$out/cg-$side.txt" ||
		{ echo "bench/graph: callgrind of $side failed" >&2; exit 1; }
	while read -r _ t _ _ objs _; do
		i=$((i + 1))
		ir=$(awk '/^summary:/ {print $2}' "$out/cg-$side.out.$i" 2>/dev/null)
		awk -v ir="${ir:-0}" -v o="$objs" 'BEGIN { if (o > 0 && ir > 0) printf "%.3f", ir / o; else print "nan" }' \
			>"$out/cgo-$side-$t"
	done <"$out/cg-$side.txt"
	[ "$i" -eq "${#graph_topos[@]}" ] || { echo "bench/graph: callgrind of $side counted $i topologies" >&2; exit 1; }
}
cg_split sluice bench_loops "$isa/bench/graph/sluice-bench-graph" --no-huge --loops "$CG_LOOPS"
[ -z "$before_isa" ] || cg_split before bench_loops "$before_isa/bench/graph/sluice-bench-graph" --no-huge --loops "$CG_LOOPS"
cg_split peer peer_walks "$peer_cg" -l 0 --no-pci --no-huge -m 256 --no-telemetry --file-prefix="sluice-graph-$$" \
	--log-level=lib.eal:error -- --loops "$CG_LOOPS"
rm -rf /var/run/dpdk/sluice-graph-$$

# ---- its own tables -------------------------------------------------------
echo "== sluice graph bench ($isa_label, per-object stage), last round =="
cat "$out/sluice-objects-$ROUNDS.txt"
echo
python3 - "$tsv" "$ROUNDS" "$mem_label" "$hz" "$out/sinks.tsv" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds, mem, hz, sinks_out = sys.argv[1:6]
rows = defaultdict(list)  # (side, topo, node) -> [(calls, objs, mobjs, cyc)] per round
order, sides = [], []
for line in open(path):
    r, side, topo, node, calls, objs, mobjs, cyc = line.rstrip("\n").split("\t")
    if (topo, node) not in order:
        order.append((topo, node))
    if side not in sides:
        sides.append(side)
    rows[(side, topo, node)].append((float(calls), float(objs), float(mobjs), float(cyc)))
variants = [s for s in sides if s != "rte_graph"]
names = {"objects": "per-object", "runs": "run-split", "native": "native", "before": "before"}
topos = []
for t, _ in order:
    if t not in topos:
        topos.append(t)

def med(side, topo, node, i):
    v = rows.get((side, topo, node))
    return st.median(x[i] for x in v) if v else None

def fmt(x, p):
    return f"{x:.{p}f}" if x is not None else "-"

print(f"== stage cost per call, medians of {rounds} rounds: Mobjs/s, and TSC ticks per call of each "
      "sluice variant beside rte_graph's cycles per call ==")
print("(sluice's ticks include the dispatch between nodes; rte_graph's only the node call; "
      f"TSC {float(hz) / 1e9:.3f} GHz)")
for t in topos:
    print(f"\n{t}")
    head = f"  {'node':<13}{'sluice Mobj/s':>14}" + "".join(f"{names.get(v, v) + ' t/c':>15}" for v in variants)
    print(head + f"{'rte_graph Mobj/s':>18}{'cycles/call':>13}")
    for tt, n in order:
        if tt != t:
            continue
        line = f"  {n:<13}{fmt(med('objects', t, n, 2), 1):>14}"
        line += "".join(f"{fmt(med(v, t, n, 3), 1):>15}" for v in variants)
        print(line + f"{fmt(med('rte_graph', t, n, 2), 1):>18}{fmt(med('rte_graph', t, n, 3), 1):>13}")

def sink_rounds(side, t):
    per_round = defaultdict(float)
    for (s, tt, n), v in rows.items():
        if s == side and tt == t and n.startswith("sink"):
            for i, x in enumerate(v):
                per_round[i] += x[2]
    return [per_round[i] for i in sorted(per_round)]

def mmm(vals):
    return f"{min(vals):.1f} / **{st.median(vals):.1f}** / {max(vals):.1f}" if vals else "-"

print(f"\n== objects/s through the sinks, M objs/s: min / median / max of {rounds} rounds ==")
print(f"memory: {mem}; sluice frames in malloc'd memory")
print("| topology | " + " | ".join(f"sluice {names.get(v, v)}" for v in variants)
      + " | rte_graph | per-object / rte_graph |")
print("|---" * (len(variants) + 3) + "|")
with open(sinks_out, "w") as f:
    for t in topos:
        peer = sink_rounds("rte_graph", t)
        cells = []
        for v in variants:
            vals = sink_rounds(v, t)
            cells.append(mmm(vals))
            f.write(f"{v}\t{t}\t{' '.join(f'{x:.3f}' for x in vals)}\n")
        f.write(f"rte_graph\t{t}\t{' '.join(f'{x:.3f}' for x in peer)}\n")
        mine = sink_rounds("objects", t)
        ratio = f"{st.median(mine) / st.median(peer):.2f}" if mine and peer and st.median(peer) else "-"
        print(f"| {t} | " + " | ".join(cells) + f" | {mmm(peer)} | {ratio} |")
if "before" in variants:
    print("\nbefore / after (per-object stage, isa build, medians):")
    for t in topos:
        a, b = sink_rounds("before", t), sink_rounds("objects", t)
        if a and b:
            print(f"  {t}: {st.median(a):.1f} -> {st.median(b):.1f} M objs/s ({st.median(b) / st.median(a):.2f}x)")
EOF
if [ -n "$cg_ir" ] && [ -n "$cg_pkts" ] && [ "$cg_pkts" -gt 0 ]; then
	awk -v ir="$cg_ir" -v p="$cg_pkts" -v a="$cl_isa" -v n="$cl_native" 'BEGIN {
		printf "\nclassify node (reads 1 header byte, 2 next nodes), vector 256, sluice only: callgrind "
		printf "%.2f instructions/packet (-march=corei7 build; goal <= 10); ", ir / p
		printf "TSC ticks/packet natively: %s (-march=corei7), %s (-march=native)\n", a, n }'
else
	echo "classify: callgrind gave no count" >&2
	exit 1
fi

echo
echo "== callgrind, instructions per object through the sinks ($isa_label, one thread, 4 KB pages, $CG_LOOPS loops after 64) =="
printf '| topology | sluice |%s rte_graph (peer_rte_graph.c) | sluice / rte_graph |\n' \
	"$([ -z "$before_isa" ] || echo " $before_label |")"
printf '|---|---|%s---|---|\n' "$([ -z "$before_isa" ] || echo "---|")"
for t in "${graph_topos[@]}"; do
	mine=$(cat "$out/cgo-sluice-$t") peer=$(cat "$out/cgo-peer-$t")
	printf '| %s | %s |%s %s | %s |\n' "$t" "$mine" \
		"$([ -z "$before_isa" ] || echo " $(cat "$out/cgo-before-$t") |")" "$peer" \
		"$(awk -v a="$mine" -v b="$peer" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }')"
done

# ---- summary rows ---------------------------------------------------------
figs() { awk -F'\t' -v s="$1" -v t="$2" '$1 == s && $2 == t {print $3}' "$out/sinks.tsv"; }
declare -A shape=(
	[graph_hr_4s_1n_1src_1snk]="1 src -> 4 stages -> 1 sink"
	[graph_hr_4s_1n_1src_1snk_brst_one]="the same chain, 1 object per call"
	[graph_hr_4s_1n_2src_1snk]="2 src -> 4 stages -> 1 sink"
	[graph_hr_4s_1n_1src_2snk]="1 src -> 4 stages -> 2 sinks 50/50"
	[graph_tree_4s_4n_1src_4snk]="tree 1-2-3-4 nodes, 4 sinks"
	[graph_reverse_tree_3s_4n_1src_1snk]="reverse tree 4-3-2 nodes, 1 sink"
	[graph_parallel_tree_5s_4n_4src_4snk]="4 parallel chains of 5 stages"
)
topos=(graph_hr_4s_1n_1src_1snk graph_hr_4s_1n_1src_1snk_brst_one graph_hr_4s_1n_2src_1snk
	graph_hr_4s_1n_1src_2snk graph_tree_4s_4n_1src_4snk graph_reverse_tree_3s_4n_1src_1snk
	graph_parallel_tree_5s_4n_4src_4snk)
differing=(graph_hr_4s_1n_1src_1snk graph_tree_4s_4n_1src_4snk)
if [ "$SECONDS_PER_TOPO" = 1 ] && [ "$WARMUP" = 0.3 ]; then
	statistic="median over rounds of each round's mean over 1 s after 0.3 s warm-up (both)"
else
	statistic="median over rounds of each round's mean: sluice over ${SECONDS_PER_TOPO} s after ${WARMUP} s warm-up, rte_graph over 1 s after 0.3 s"
fi

row() { # row VARIANT TOPO [bench_row options...]
	local v=$1 t=$2 burst="256 objects per source call, both"
	shift 2
	[ "$t" != graph_hr_4s_1n_1src_1snk_brst_one ] || burst="1 object per source call, both"
	bench_row --bench graph --what "$t ($([ "$v" = runs ] && echo "run-splitting stage" || echo "per-object stage"): ${shape[$t]}), objects/s through the sinks" \
		--unit "M objs/s" --better higher --sluice "$(figs "$v" "$t")" \
		--peer-name "rte_graph (graph_perf_autotest)" --peer "$(figs rte_graph "$t")" \
		--burst "$burst" --memory "$mem_label" --statistic "$statistic" "$@"
}
for t in "${topos[@]}"; do
	row objects "$t" --isa "both -march=$peer_isa"
done
for t in "${differing[@]}"; do
	row native "$t" --isa "sluice $native_label, DPDK -march=$peer_isa" \
		--differs "ISA: sluice built -march=native" --sluice-label "sluice -march=native"
	[ -z "$before_isa" ] || row before "$t" --isa "both -march=$peer_isa" --sluice-label "$before_label"
done
# On the chain every stage has one next and both stages forward the frame
# whole: the run-splitting row would be the matched row again.
row runs graph_tree_4s_4n_1src_4snk --isa "both -march=$peer_isa" \
	--differs "sluice's stage enqueues runs, not objects" --sluice-label "sluice, run-splitting stage"
# instructions per object, one callgrind run each side (the box's load does not move them)
for t in "${topos[@]}"; do
	bench_row --bench graph --unit "instructions/object" --better lower \
		--what "$t (per-object stage: ${shape[$t]}): instructions per object through the sinks" \
		--burst "$([ "$t" = graph_hr_4s_1n_1src_1snk_brst_one ] && echo "1 object" || echo "256 objects") per source call, both" \
		--memory "4 KB pages on both (valgrind: sluice --no-huge, DPDK --no-huge -m 256)" \
		--statistic "one callgrind run each, $CG_LOOPS graph loops after 64 on one thread: Ir / objects through the sinks" \
		--isa "both -march=$peer_isa" --sluice "$(cat "$out/cgo-sluice-$t")" \
		--peer-name "rte_graph (peer_rte_graph.c: graph_perf_autotest's node work)" --peer "$(cat "$out/cgo-peer-$t")"
done
echo
bench_report
