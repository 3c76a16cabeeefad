#!/usr/bin/env bash
# bench/timers/callgrind.sh [BUILD_DIR...]
#
# Instructions per timer operation, counted by callgrind (a shared box
# changes cycles, not instructions): sluice-bench-timers of each build at
# each size, the inclusive cost of the library's entry points divided by
# their calls in the bench (arm 3N: three arm passes; arm_rel N: the
# timer_arm_ticks pass, "-" for a revision without it; rearm N; cancel N;
# run: the runs that expire the 2N timers of the two expiry passes plus
# 1000 idle runs, per expired timer). Sluice only: rte_timer is not counted.
#
# Without BUILD_DIR: the shared $isa build of bench/lib.sh (-march= Debian's
# DPDK baseline, built here when missing; valgrind cannot run AVX-512 code,
# so not the -march=native one), and with BEFORE=REV that revision's $isa
# build first, to see before and after in one run. A BUILD_DIR given must
# have bench/timers/sluice-bench-timers built for an ISA valgrind runs
# (-Dcpu_arch=corei7, x86-64-v2 or v3).
#
# Two clocks: "tsc", the service's own (arm and cancel counts are exact,
# but under valgrind time passes ~50x slower per instruction, so where the
# re-armed timers land, and with it the rearm and run counts, varies from
# run to run), and "sim", the bench's --sim clock (every count exact and
# repeatable; its clock is a plain call, cheaper than the default's).
#
# Environment: SIZES ("1000 100000 1000000"), CLOCKS ("tsc sim"),
# BENCH_BUILD_ROOT (the shared builds), BEFORE.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
SIZES=${SIZES:-1000 100000 1000000}
CLOCKS=${CLOCKS:-tsc sim}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-timers-cg.XXXXXX")
trap 'rm -rf "$out"' EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"
bench_need
if [ $# -eq 0 ]; then
	bench_builds bench/timers/sluice-bench-timers
	set -- ${before_isa:+"$before_isa"} "$isa"
fi

incl() { # file function: inclusive instructions of the function's own symbol
	# from a directory without the sources: run from the repository,
	# callgrind_annotate leaves the inlined parts out of a function's total
	(cd "$out" && callgrind_annotate --inclusive=yes "$1" 2>/dev/null) |
		awk -v f="$2" '/=>/ { next } $0 ~ (":" f " \\[") { gsub(",", "", $1); s += $1 } END { print s + 0 }'
}

printf '| build | clock | timers | arm | arm_rel | rearm | cancel | run per expiry | bytes per timer |\n|---|---|---|---|---|---|---|---|---|\n'
for clk in $CLOCKS; do
for b in "$@"; do
	bench=$(realpath -e "$b/bench/timers/sluice-bench-timers" 2>/dev/null) || { echo "no $b/bench/timers/sluice-bench-timers: build first" >&2; exit 1; }
	sim=; [ "$clk" = sim ] && sim=--sim
	for n in $SIZES; do
		f="$out/cg.$clk.$(echo "$b" | tr / _).$n"
		line=$(cd "$out" && valgrind --tool=callgrind --callgrind-out-file="$f" "$bench" $sim "$n" 2>/dev/null |
			grep '^sluice n=')
		bpt=$(grep -oE 'bytes_per_timer=[0-9.]+' <<<"$line" | cut -d= -f2)
		printf '| %s | %s | %s | %.1f | %s | %.1f | %.1f | %.1f | %s |\n' "$b" "$clk" "$n" \
			"$(awk -v i="$(incl "$f" timer_arm)" -v n="$n" 'BEGIN { print i / (3 * n) }')" \
			"$(awk -v i="$(incl "$f" timer_arm_ticks)" -v n="$n" 'BEGIN { if (i) printf "%.1f", i / n; else print "-" }')" \
			"$(awk -v i="$(incl "$f" timer_rearm)" -v n="$n" 'BEGIN { print i / n }')" \
			"$(awk -v i="$(incl "$f" timer_cancel)" -v n="$n" 'BEGIN { print i / n }')" \
			"$(awk -v i="$(incl "$f" timer_service_run)" -v n="$n" 'BEGIN { print i / (2 * n) }')" "$bpt"
	done
done
done
