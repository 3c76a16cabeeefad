#!/usr/bin/env bash
# sluice's graph engine beside rte_graph, on graph_perf_autotest's topologies.
#
#   bench/graph/run.sh [BUILD_DIR]
#
# Installs what it uses (Debian packages) when missing, builds the benchmarks
# with meson (into BUILD_DIR, default $TMPDIR/sluice-bench-graph, plus
# BUILD_DIR-cg for callgrind, which cannot run AVX-512 code), reserves 2 MB
# hugepages as the DPDK anchor scripts do, then for ROUNDS rounds runs
# sluice's bench and `dpdk-test graph_perf_autotest` one after the other,
# each after waiting for an idle box. It ends with callgrind instructions per
# packet of the two-way classify node and a side-by-side table (medians over
# the rounds).
#
# Environment: ROUNDS (3), SECONDS_PER_TOPO (1), DPDK_MEM_MODE (huge|nohuge),
# QUIET_MAX (120 s of waiting for an idle box per run), CPU (1: the core both
# graphs run on; rte_graph's worker lcore is 1 too).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/sluice-bench-graph}
build_cg=${build}-cg
ROUNDS=${ROUNDS:-3}
SECONDS_PER_TOPO=${SECONDS_PER_TOPO:-1}
DPDK_MEM_MODE=${DPDK_MEM_MODE:-huge}
QUIET_MAX=${QUIET_MAX:-120}
CPU=${CPU:-1}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-graph.XXXXXX")
trap 'rm -rf "$out"' EXIT

log() { echo "# $*" >&2; }
# shellcheck source=../lib.sh
. "$here/../lib.sh"

# ---- packages -------------------------------------------------------------
bench_need dpdk-test="dpdk dpdk-dev"

# ---- build ----------------------------------------------------------------
bench_build "$build"
bench_build "$build_cg" -Dcpu_arch=x86-64-v3
ninja -C "$build" bench/graph/sluice-bench-graph bench/graph/sluice-bench-classify >"$out/ninja.log" 2>&1 ||
	{ cat "$out/ninja.log" >&2; exit 1; }
ninja -C "$build_cg" bench/graph/sluice-bench-classify >"$out/ninja-cg.log" 2>&1 ||
	{ cat "$out/ninja-cg.log" >&2; exit 1; }

# ---- memory mode (the DPDK anchor scripts' set-up) ------------------------
bench_mem_mode
log "memory: $mem_label"

# ---- rounds ---------------------------------------------------------------
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || log "WARNING: fewer than 2 CPUs: rte_graph's main lcore and worker share a core"
tsv=$out/results.tsv
: >"$tsv"
for r in $(seq 1 "$ROUNDS"); do
	bench_wait_quiet
	log "round $r/$ROUNDS: sluice (load $(cut -d' ' -f1 /proc/loadavg))"
	timeout 120 "$build/bench/graph/sluice-bench-graph" --cpu "$CPU" --seconds "$SECONDS_PER_TOPO" \
		"${sluice_mem[@]}" --tsv "$out/sluice-$r.tsv" >"$out/sluice-$r.txt" 2>&1 ||
		{ cat "$out/sluice-$r.txt" >&2; exit 1; }
	sed "s/^/$r\t/" "$out/sluice-$r.tsv" >>"$tsv"
	bench_wait_quiet
	log "round $r/$ROUNDS: rte_graph (load $(cut -d' ' -f1 /proc/loadavg))"
	DPDK_TEST=graph_perf_autotest timeout 180 dpdk-test -l 0,"$CPU" --no-pci "${dpdk_mem[@]}" \
		--file-prefix="bg$$_$r" >"$out/dpdk-$r.txt" 2>&1 || { cat "$out/dpdk-$r.txt" >&2; exit 1; }
	grep -q 'Test OK' "$out/dpdk-$r.txt" || { cat "$out/dpdk-$r.txt" >&2; exit 1; }
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
		}' "$out/dpdk-$r.txt" >>"$tsv"
	rm -rf /var/run/dpdk/"bg$$_$r"
done

# ---- callgrind: instructions per packet of the two-way classify node ------
log "callgrind: classify node, vector 256"
calls=4000
( cd "$out" && timeout 300 valgrind --tool=callgrind --toggle-collect=classify_node \
	--callgrind-out-file="$out/cg.out" "$build_cg/bench/graph/sluice-bench-classify" --calls "$calls" \
	"${sluice_mem[@]}" >"$out/cg.txt" 2>&1 ) || { cat "$out/cg.txt" >&2; exit 1; }
cg_ir=$(awk '/^summary:/ {print $2}' "$out/cg.out")
cg_pkts=$(awk '/^classify:/ {print $3}' "$out/cg.txt")
timeout 60 taskset -c "$CPU" "$build/bench/graph/sluice-bench-classify" --calls 1000000 "${sluice_mem[@]}" \
	>"$out/classify-native.txt" 2>&1
cl_ticks=$(awk '/^classify:/ {print $NF}' "$out/classify-native.txt")

# ---- report ---------------------------------------------------------------
echo "== sluice graph bench, last round =="
cat "$out/sluice-$ROUNDS.txt"
echo
python3 - "$tsv" "$ROUNDS" "$mem_label" "$cg_ir" "$cg_pkts" "$cl_ticks" <<'EOF'
import sys, statistics as st
from collections import defaultdict
path, rounds, mem, cg_ir, cg_pkts, cl_ticks = sys.argv[1:7]
rows = defaultdict(list)  # (side, topo, node) -> [(calls, objs, mobjs, cyc)]
order = []
for line in open(path):
    f = line.rstrip("\n").split("\t")
    r, side, topo, node = f[0], f[1], f[2], f[3]
    calls, objs, mobjs, cyc = float(f[4]), float(f[5]), float(f[6]), float(f[7])
    if (topo, node) not in order:
        order.append((topo, node))
    rows[(side, topo, node)].append((calls, objs, mobjs, cyc))

def med(side, topo, node, i):
    v = rows.get((side, topo, node))
    return st.median(x[i] for x in v) if v else None

topos = []
for t, _ in order:
    if t not in topos:
        topos.append(t)
print(f"== per node, medians of {rounds} rounds: Mobjs/s and TSC ticks per call "
      "(sluice ticks include dispatch between nodes; rte_graph's only the node call) ==")
for t in topos:
    print(f"\n{t}")
    print(f"  {'node':<13}{'sluice Mobj/s':>15}{'ticks/call':>12}{'rte_graph Mobj/s':>18}{'cycles/call':>13}{'ratio':>8}")
    nodes = [n for tt, n in order if tt == t]
    for n in nodes:
        a, ac = med("sluice", t, n, 2), med("sluice", t, n, 3)
        b, bc = med("rte_graph", t, n, 2), med("rte_graph", t, n, 3)
        fmt = lambda x, p: f"{x:.{p}f}" if x is not None else "-"
        ratio = f"{a / b:.2f}" if a and b else "-"
        print(f"  {n:<13}{fmt(a, 1):>15}{fmt(ac, 1):>12}{fmt(b, 1):>18}{fmt(bc, 1):>13}{ratio:>8}")

def sink_rounds(side, t):
    per_round = defaultdict(float)
    for (s, tt, n), v in rows.items():
        if s == side and tt == t and n.startswith("sink"):
            for i, x in enumerate(v):
                per_round[i] += x[2]
    return [per_round[i] for i in sorted(per_round)]

def mmm(vals):
    return (min(vals), st.median(vals), max(vals)) if vals else None

def stage_cyc(side, t):
    v = [med(side, t, n, 3) for tt, n in order if tt == t and n.startswith("worker")]
    v = [x for x in v if x is not None]
    return f"{min(v):.0f}-{max(v):.0f}" if v else "-"

print(f"\n== side by side: objects/s through the sinks (min / median / max of {rounds} rounds) ==")
print(f"memory: sluice buffers and rte_graph both on {mem}; sluice frames in malloc'd memory")
print("ratio: sluice / rte_graph of the same round (the two run back to back), min / median / max")
print(f"| topology | sluice M objs/s | rte_graph M objs/s | ratio | stage ticks/call sluice | rte_graph |")
print("|---|---|---|---|---|---|")
for t in topos:
    ra, rb = sink_rounds("sluice", t), sink_rounds("rte_graph", t)
    if not ra or not rb:
        continue
    a, b = mmm(ra), mmm(rb)
    q = mmm([x / y for x, y in zip(ra, rb) if y > 0])
    print(f"| {t} | {a[0]:.1f} / **{a[1]:.1f}** / {a[2]:.1f} | {b[0]:.1f} / **{b[1]:.1f}** / {b[2]:.1f} "
          f"| {q[0]:.2f} / **{q[1]:.2f}** / {q[2]:.2f} | {stage_cyc('sluice', t)} | {stage_cyc('rte_graph', t)} |")
if cg_ir and cg_pkts and float(cg_pkts) > 0:
    print(f"\nclassify node (reads 1 header byte, 2 next nodes), vector 256: callgrind "
          f"**{float(cg_ir) / float(cg_pkts):.2f} instructions/packet** (goal <= 10); "
          f"{cl_ticks} TSC ticks/packet natively")
EOF
