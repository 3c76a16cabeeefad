#!/usr/bin/env bash
# Every bench beside its peer, in one run, and one summary.
#
#   bench/run.sh [--quick] [FAMILY...]
#
# On a fresh Debian 12 clone, as root: installs what the benches use
# (scripts/deps.sh's build packages, valgrind, and DPDK's dpdk-dev and
# libdpdk-dev for the peers: dpdk-testpmd, dpdk-test, dpdk-test-fib and the
# libraries our own peer harnesses link), checks that every peer program is
# there (exit 3 naming the one missing: a bench without its peer is not a
# comparison), then runs bench/<family>/run.sh for each family in turn (io,
# graph, ip4, ip6, distributor, timers, sched, nic, statseg, elog, lcp, wake; or
# those named) and the two that live beside sched's, bench/sched/hqos_run.sh
# (hqos: the subscriber hierarchy beside DPDK's rte_sched) and
# bench/sched/impair_run.sh (impair: the impairer, no peer), each waiting
# for a quiet box before each measurement. Its builds are shared between the
# families: -march=native and -march=<the peer's baseline>, plus BEFORE's.
#
# Writes into BENCH_OUT (default build-bench/): one log per family,
# rows.jsonl (every comparison row), summary.md (the markdown table and the
# rows where sluice is behind) and summary.json (the rows and the run's facts:
# date, CPU, cores, TSC rate, kernel, DPDK version, memory mode).
#
# --quick: every bench with small sizes, one round, no waiting for a quiet
# box (at most 10 minutes on 2 cores): .ci/run runs it so that a bench that
# no longer builds, runs or finds its peer fails CI. Its figures mean nothing.
#
# Environment: BEFORE (a git revision: every bench also runs that revision's
# engine, as rows "sluice at REV"), DPDK_MEM_MODE (huge|nohuge), QUIET_MAX,
# BENCH_NO_INSTALL (1: install nothing; a missing peer then fails), and each
# family's own (see its run.sh).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
families_all=(io graph ip4 ip6 distributor timers sched hqos impair nic statseg elog lcp wake)
# family_script F: the family's script (hqos and impair share bench/sched's
# programs and peer harnesses, so they live there)
family_script() {
	case "$1" in
	hqos) echo "$here/sched/hqos_run.sh" ;;
	impair) echo "$here/sched/impair_run.sh" ;;
	*) echo "$here/$1/run.sh" ;;
	esac
}
QUICK=0
families=()
for a in "$@"; do
	case "$a" in
	--quick) QUICK=1 ;;
	-h | --help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) echo "bench/run.sh: unknown option $a (usage: bench/run.sh [--quick] [FAMILY...])" >&2; exit 2 ;;
	*)
		[ -x "$(family_script "$a")" ] || { echo "bench/run.sh: no family '$a' (one of: ${families_all[*]})" >&2; exit 2; }
		families+=("$a")
		;;
	esac
done
[ "${#families[@]}" -gt 0 ] || families=("${families_all[@]}")
export QUICK
results=${BENCH_OUT:-$root/build-bench}
mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -f "$results"/rows*.jsonl "$results"/*.log "$results"/summary.*
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-run.XXXXXX")
trap 'rm -rf "$out"' EXIT
# shellcheck source=lib.sh
. "$here/lib.sh"

# ---- what the benches use ---------------------------------------------------
if [ "${BENCH_NO_INSTALL:-0}" != 1 ]; then
	"$root/scripts/deps.sh" >/dev/null || exit 1
	bench_need
fi
bench_need_peer dpdk-testpmd dpdk-test dpdk-test-fib
bench_need_libdpdk
export BENCH_BUILD_ROOT=${BENCH_BUILD_ROOT:-${TMPDIR:-/tmp}/sluice-bench}
bench_builds bench/sluice-bench-tsc
export BENCH_TSC_HZ
BENCH_TSC_HZ=$(bench_tsc_hz)

# ---- the run ----------------------------------------------------------------
start=$SECONDS
failed=()
for f in "${families[@]}"; do
	t0=$SECONDS
	bench_log "== bench/$f$([ "$QUICK" = 1 ] && echo ' (quick)') =="
	if BENCH_ROWS="$results/rows-$f.jsonl" "$(family_script "$f")" >"$results/$f.log" 2>&1; then
		n=$(wc -l <"$results/rows-$f.jsonl" 2>/dev/null || echo 0)
		if [ "$n" -gt 0 ]; then
			bench_log "bench/$f: $n rows in $((SECONDS - t0)) s"
		else
			bench_log "bench/$f: FAILED: it wrote no comparison row"
			failed+=("$f")
		fi
	else
		rc=$?
		bench_log "bench/$f: FAILED (exit $rc) after $((SECONDS - t0)) s; the end of $results/$f.log:"
		tail -15 "$results/$f.log" | sed 's/^/    /' >&2
		failed+=("$f")
	fi
done

# ---- the summary ------------------------------------------------------------
cat "$results"/rows-*.jsonl >"$results/rows.jsonl" 2>/dev/null || : >"$results/rows.jsonl"
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
dpdk=$(pkg-config --modversion libdpdk 2>/dev/null || echo unknown)
mem=${DPDK_MEM_MODE:-huge}
rev=$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)
meta=(--meta "date=$(date -u +%Y-%m-%dT%H:%MZ)" --meta "cpu=$cpu" --meta "cores=$(nproc)"
	--meta "tsc_hz=$BENCH_TSC_HZ" --meta "kernel=$(uname -r)" --meta "dpdk=$dpdk" --meta "memory=$mem"
	--meta "quick=$QUICK" --meta "revision=$rev" --meta "before=${BEFORE:-}"
	--meta "families=${families[*]}" --meta "failed=${failed[*]}" --meta "seconds=$((SECONDS - start))")
python3 "$here/summary.py" json "$results/rows.jsonl" "${meta[@]}" >"$results/summary.json" || exit 1
{
	echo "# sluice beside its peers, $(date -u +%Y-%m-%d)$([ "$QUICK" = 1 ] && echo ' (--quick: figures not meaningful)')"
	echo
	echo "$cpu, $(nproc) CPUs, TSC $(awk -v h="$BENCH_TSC_HZ" 'BEGIN {printf "%.3f GHz", h / 1e9}'), kernel $(uname -r)," \
		"DPDK $dpdk (Debian), sluice $rev, memory mode $mem, $((SECONDS - start)) s"
	echo
	python3 "$here/summary.py" table "$results/rows.jsonl"
} >"$results/summary.md"
cat "$results/summary.md"
echo
echo "written: $results/summary.md, $results/summary.json, one log per family"
if [ "${#failed[@]}" -gt 0 ]; then
	echo "bench/run.sh: FAILED: ${failed[*]} (their logs are in $results)" >&2
	exit 1
fi
