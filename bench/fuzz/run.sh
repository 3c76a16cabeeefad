#!/usr/bin/env bash
# Long libFuzzer runs of every harness in tests/fuzz (issue 10 asks for
# 10 minutes each), printing executions per second, coverage and corpus
# size per harness. Builds its own clang fuzz build in build-fuzz.
#   bench/fuzz/run.sh [SECONDS] [HARNESS...]      default 600, all harnesses
# Corpora grow in build-fuzz/corpus/<harness> across runs (seeds: tests/fuzz/seeds);
# a crash leaves its input in build-fuzz/crash-<harness>-* and fails the run.
set -uo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-600}
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(pkt conf cli pcap dist)
[ -f build-fuzz/build.ninja ] || CC=clang meson setup build-fuzz -Dfuzz=true -Db_sanitize=address,undefined \
	-Db_lundef=false -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
ninja -C build-fuzz "${harnesses[@]/#/tests/fuzz/fuzz_}" >/dev/null || exit 1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
rc=0
printf '%-6s %8s %12s %10s %8s %8s  %s\n' harness seconds executions exec/s cov ft result
for h in "${harnesses[@]}"; do
	mkdir -p "build-fuzz/corpus/$h"
	log="build-fuzz/fuzz-$h.log"
	if build-fuzz/tests/fuzz/fuzz_$h -max_total_time="$secs" -print_final_stats=1 \
		-artifact_prefix="$PWD/build-fuzz/crash-$h-" "$PWD/build-fuzz/corpus/$h" "$PWD/tests/fuzz/seeds/$h" >"$log" 2>&1; then
		result=ok
	else
		result="CRASH (see $log)"
		rc=1
	fi
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	printf '%-6s %8s %12s %10s %8s %8s  %s\n' "$h" "$secs" "${execs:-?}" "${rate:-?}" "${cov:-?}" "${ft:-?}" "$result"
done
exit $rc
