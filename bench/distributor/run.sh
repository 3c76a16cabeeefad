#!/usr/bin/env bash
# sluice's distributor beside rte_distributor's burst mode, timed the way
# DPDK 22.11's distributor_perf_autotest times it, in one run. The peer runs
# from bench/distributor/peer_distributor.c (the autotest's timed loop in a
# harness of ours; dpdk-test's own burst mode stalled for good in 2 of 3 runs
# here, see that file).
#
#   bench/distributor/run.sh
#
# What DPDK's test does (app/test/test_distributor_perf.c): one worker per
# lcore beyond the main one (-l 0,1: one worker on CPU1, the distributor on
# CPU0); the main thread calls rte_distributor_process() 2^21 times with
# the same 64 mbufs (flow tags 0..63); each worker calls
# rte_distributor_get_pkt() handing back every packet it got the call
# before. "Time per packet" is (end - start) >> 21 / 64 in TSC ticks: the
# mean over the whole timed loop (we read "Time per burst" / 64, the same
# mean without the second truncation). rte_distributor (burst) buffers one
# cache line of 8 packets per worker (RTE_DIST_BURST_SIZE) plus a backlog of
# 8 (struct rte_distributor_backlog), and process() spins in release() on a
# worker whose backlog is full.
#
# Rows (ticks per packet, lower is better; min/median/max over ROUNDS rounds,
# each round's figure the mean over its whole run, as DPDK's):
#   matched      sluice built -march=<DPDK's baseline> ($isa), the same 2^21
#                calls of 64, the same depth (--backlog 8 --ring-lines 1
#                --poll-max 8: one line of 8 in flight per worker, a
#                backlog of 8, the worker takes one line per poll), no
#                warm-up (DPDK has none), vs rte_distributor burst. At
#                ring-lines 1 sluice hands lines through one-line
#                mailboxes (the line's count its full/empty word, as
#                DPDK's flag bits in its cache lines). The hand-back:
#                sluice's worker reports the lines it finished by count at
#                its next poll and dist_process releases each of their
#                packets' flow-table counts from its own copy of the line;
#                DPDK's worker writes each mbuf back into its return line
#                and process() copies each into its 128-entry returns
#                array (never read by the test's timed loop). sluice has no
#                returned-packets API for atomic packets: the row says so.
#   general      the matched depth with --match-always: one worker's packets
#                still go one by one through the flow matcher and the worker
#                choice, as DPDK's process() does with any number (the
#                matched row has sluice's one-worker chunk loop, which the
#                daemon runs with one worker and which skips that work).
#   deeper rings sluice's defaults (64 lines + backlog 64 per worker, 256
#                per poll), labelled --differs.
#   native       the matched depth built -march=native (--differs ISA).
#   ordered      every packet ordered: the worker hands each back with
#                dist_worker_return and the main thread collects them
#                (dist_ordered_take) in the timed loop: sluice's one API
#                that returns packets to the distributor's caller; differs
#                in scheduling (spread + reorder window, not flow pinning).
#   BEFORE=REV   that revision's library at the matched depth ($before_isa;
#                ring-lines 2 if it has no 1-line ring, said in its row).
# Then the 1..MAX_WORKERS scaling table (sluice's default depth, $isa; on a 2-CPU box
# every worker beyond the first time-shares CPU1 with the others, which the
# table says per row), and callgrind instructions per packet for
# dist_process and dist_worker_poll from the $isa build (valgrind cannot run
# AVX-512), the workers played inline: flows all new each call (--inline)
# and all still in flight (--inline-hold), at the matched and the deeper
# depth; then per scheduling type.
#
# Memory: sluice's distributor allocates its state on the heap (4 KB pages),
# so DPDK runs on 4 KB pages too (--no-huge -m 1024) unless DPDK_MEM_MODE=
# huge is set, which the rows then name as a difference.
#
# QUICK=1: one round, 2^18 calls on both sides, 1 worker in the scaling
# table, 2,000 callgrind calls. The scaling table stops at one worker per
# CPU beyond the distributor's (MAX_WORKERS=4 on 2 CPUs shows time-sharing).
#
# A peer run that does not finish is killed after DPDK_TIMEOUT s and tried
# again (DPDK_TRIES); the bench fails if none finishes.
#
# Environment: ROUNDS (3; QUICK 1), CALLS (2097152, DPDK's count),
# MAX_WORKERS (CPUs - 1, at least 1), QUIET_MAX (120), DPDK_TIMEOUT (60), DPDK_TRIES (3), DPDK_MEM_MODE (nohuge|huge; nohuge
# here), BEFORE (a git revision), BENCH_BUILD_ROOT, QUICK.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-dist.XXXXXX")
trap 'rm -rf "$out"' EXIT
export DPDK_MEM_MODE=${DPDK_MEM_MODE:-nohuge}
# shellcheck source=../lib.sh
. "$root/bench/lib.sh"
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1}
	CALLS=${CALLS:-262144}
	MAX_WORKERS=${MAX_WORKERS:-1}
	cg_calls=2000 cg_warm=1000
else
	ROUNDS=${ROUNDS:-3}
	CALLS=${CALLS:-2097152}
	# One worker per CPU beyond the distributor's: more only time-share a
	# CPU and measure the kernel's scheduler (MAX_WORKERS=4 shows that).
	MAX_WORKERS=${MAX_WORKERS:-$(( $(nproc) > 2 ? $(nproc) - 1 : 1 ))}
	cg_calls=20000 cg_warm=10000
fi
DPDK_TIMEOUT=${DPDK_TIMEOUT:-60}
# 2^21 calls as the autotest; CALLS, rounded down to a power of two, sets it.
calls_log2=$(awk -v c="$CALLS" 'BEGIN { n = 0; while (2 ^ (n + 1) <= c) n++; print n }')
DPDK_TRIES=${DPDK_TRIES:-3}

bench_need
bench_need_peer dpdk-test
bench_need_libdpdk
bench_builds bench/distributor/sluice-bench-distributor
# The peer: rte_distributor's burst mode in distributor_perf_autotest's timed
# loop, from a harness of ours (peer_distributor.c says why not dpdk-test:
# its burst mode stalls for good in most runs on a 2-CPU box).
peer=$out/peer_distributor
cc -O2 -g -Wall -Wextra $(pkg-config --cflags libdpdk) "$here/peer_distributor.c" -o "$peer" \
	$(pkg-config --libs libdpdk) >"$out/peer-cc.log" 2>&1 || { cat "$out/peer-cc.log" >&2; exit 1; }
bench_mem_mode
hz=$(bench_tsc_hz)
prog=bench/distributor/sluice-bench-distributor
matched=(--backlog 8 --ring-lines 1 --poll-max 8)
deep=(--backlog 64 --ring-lines 64 --poll-max 256)
one=(--workers 1 --calls "$CALLS" --warmup 0 --dist-cpu 0 --worker-cpus 1)
ghz=$(awk -v h="$hz" 'BEGIN { printf "%.2f", h / 1e9 }')
peer_isa=$(bench_peer_isa)

if [ "${dpdk_mem[0]}" = --no-huge ]; then
	memory="4 KB pages both (DPDK --no-huge -m 1024; sluice's distributor state on the heap)"
	mem_differs=
else
	memory="DPDK 2 MB hugepages (--in-memory); sluice's distributor state on the heap (4 KB pages)"
	mem_differs="memory: DPDK on 2 MB hugepages, sluice on 4 KB pages (DPDK_MEM_MODE=huge)"
fi
onework="one worker: sluice stages whole chunks of 8 for it without a worker choice (assign_one_worker, the daemon's path with one worker), DPDK's process() matches and picks as with many"
handback="hand-back: DPDK's worker writes each mbuf back into its return line and process() copies each into its 128-entry returns array; sluice's worker reports a count of lines, the distributor releases each packet's flow-table count from its own copy of the line and hands no index to its caller"

# sluice NAME BUILD ARGS...: one run, its mean ticks/packet appended to $out/NAME.
sluice() {
	local name=$1 build=$2
	shift 2
	bench_wait_quiet
	"$build/$prog" "$@" | tee -a "$out/$name.log" | grep -oE 'ticks_per_packet=[0-9.]+' | cut -d= -f2 >>"$out/$name"
}

# One run of the peer harness (line-buffered, so a stalled run shows how far
# it got); killed after DPDK_TIMEOUT s and tried again, up to DPDK_TRIES.
dpdk_once() {
	local log=$1 t0=$SECONDS
	bench_wait_quiet
	timeout "$DPDK_TIMEOUT" stdbuf -oL "$peer" -l 0,1 --file-prefix="bd$$_${log##*.}" --no-pci \
		"${dpdk_mem[@]}" -- --calls-log2 "$calls_log2" >"$log" 2>&1 || return 1
	echo $((SECONDS - t0)) >>"$out/dpdk.secs"
}

dpdk_round() {
	local r=$1 try b
	for try in $(seq 1 "$DPDK_TRIES"); do
		dpdk_once "$out/dpdk.$r.$try" && break
		bench_log "peer_distributor try $try: no result in ${DPDK_TIMEOUT}s: $(tail -1 "$out/dpdk.$r.$try")"
		[ "$try" -lt "$DPDK_TRIES" ] || { tail -20 "$out/dpdk.$r.$try" >&2; echo "bench: peer_distributor did not finish in $DPDK_TRIES tries" >&2; exit 1; }
	done
	b=$(grep -oE 'Time per burst: +[0-9]+' "$out/dpdk.$r.$try" | awk '{print $4}')
	[ -n "$b" ] || { echo "bench: peer_distributor printed no figure" >&2; tail -20 "$out/dpdk.$r.$try" >&2; exit 1; }
	awk -v b="$b" 'BEGIN { printf "%.2f\n", b / 64 }' | tee -a "$out/dpdk"
}

before_ring=1
for r in $(seq 1 "$ROUNDS"); do
	bench_log "round $r of $ROUNDS"
	# The peer right after the matched run: the rows pair each round's
	# figures (--paired), since these two-CPU runs change speed between
	# rounds when the vCPUs move (seen: either side 60 or 260 ticks).
	sluice matched "$isa" "${one[@]}" "${matched[@]}"
	dpdk_round "$r"
	sluice general "$isa" "${one[@]}" "${matched[@]}" --match-always
	sluice deep "$isa" "${one[@]}" "${deep[@]}"
	sluice native "$native" "${one[@]}" "${matched[@]}"
	sluice ordered "$isa" "${one[@]}" "${matched[@]}" --type ordered
	if [ -n "$before_isa" ]; then
		# A revision before the 1-line ring refuses --ring-lines 1: it runs at 2.
		"$before_isa/$prog" --calls 1 --warmup 0 --ring-lines "$before_ring" >/dev/null 2>&1 || before_ring=2
		sluice before "$before_isa" "${one[@]}" --backlog 8 --ring-lines "$before_ring" --poll-max 8
	fi
done

mmm() { bench_mmm <"$out/$1"; }
list() { tr '\n' ' ' <"$out/$1"; }
mpps() { awk -v t="$1" -v h="$hz" 'BEGIN { printf "%.1f", h / 1e6 / t }'; }
join() { # the non-empty arguments, "; " between them
	local s= a
	for a in "$@"; do [ -z "$a" ] || s="${s:+$s; }$a"; done
	echo "$s"
}
row() { # NAME WHAT ISA DIFFERS [LABEL]
	bench_row --bench distributor --what "$2" --unit "TSC ticks/packet" --better lower \
		--sluice "$(list "$1")" --peer-name "rte_distributor burst (DPDK 22.11, autotest loop in our harness)" --peer "$(list dpdk)" \
		--burst "64 per call both, in lines of 8" --memory "$memory" --isa "$3" \
		--statistic "median over rounds of each run's mean (total ticks / packets over $CALLS calls; the peer 2^$calls_log2)" \
		${4:+--differs "$4"} ${5:+--sluice-label "$5"} --paired
}
what="1 worker (dist CPU0, worker CPU1), 64 flows, every packet completed back to the distributor (how: the hand-back in differs)"
both_isa="both -march=$peer_isa"
row matched "$what" "$both_isa" "$(join "$onework" "$handback" "$mem_differs")" "sluice (1 line + backlog 8 per worker)"
row general "$what" "$both_isa" "$(join "$handback" "$mem_differs")" \
	"sluice, a worker chosen per packet as with many (--match-always)"
row deep "$what" "$both_isa" \
	"$(join "deeper rings: sluice 64 lines + backlog 64 per worker, 256 per poll (DPDK 1 line of 8 + backlog 8)" "$onework" "$handback" "$mem_differs")" \
	"sluice, its default depth"
row native "$what" "sluice -march=native ($(bench_native_isa)), DPDK $peer_isa" \
	"$(join "ISA: sluice -march=native" "$onework" "$handback" "$mem_differs")" "sluice -march=native"
row ordered "$what" "$both_isa" \
	"$(join "scheduling: every packet ordered (spread over workers, reorder window), returned with dist_worker_return and collected with dist_ordered_take; DPDK atomic" "$mem_differs")" \
	"sluice, ordered packets handed back"
if [ -n "$before_isa" ]; then
	bd=$handback
	[ "$before_ring" = 1 ] || bd="ring-lines 2 (that revision has no 1-line ring); $handback"
	row before "$what" "$both_isa" "$(join "$bd" "$mem_differs")" "$before_label"
fi

echo
echo "| 1 worker (dist CPU0, worker CPU1), ticks/packet, mean over each run | min | median | max | Mpps at $ghz GHz (median) | ratio of medians (DPDK / this) |"
echo "|---|---|---|---|---|---|"
d_med=$(mmm dpdk | awk '{print $2}')
line() { # LABEL NAME
	read -r lo med hi < <(mmm "$2")
	echo "| $1 | $lo | $med | $hi | $(mpps "$med") | $(awk -v a="$d_med" -v b="$med" 'BEGIN { printf "%.2fx", a / b }') |"
}
line "sluice matched: $isa_label, backlog 8 + 1 line of 8, 1 line per poll" matched
line "sluice deeper rings: backlog 64 + 64 lines, 256 per poll" deep
line "sluice $native_label, matched depth" native
line "sluice, every packet ordered and handed back (dist_worker_return)" ordered
[ -z "$before_isa" ] || line "$before_label ($isa_label, ring-lines $before_ring)" before
line "DPDK rte_distributor burst (autotest loop, peer_distributor.c)" dpdk
echo
echo "peer_distributor wall time per run: $(tr '\n' ' ' <"$out/dpdk.secs")s"
echo "memory: $memory"

# ---- scaling: sluice's default depth, $isa ----
# Not at the matched depth: with one line in flight, workers that time-share
# a CPU hand over one line per scheduler slice (a QUICK run here took
# 200,000 ticks/packet for 2 workers on CPU1), which measures the scheduler.
ncpu=$(nproc)
echo
echo "| workers (default depth: backlog 64 + 64 lines) | CPUs | ticks/packet (mean, 1 run of $((CALLS / 4)) calls) | Mpps at $ghz GHz | shares cores |"
echo "|---|---|---|---|---|"
for n in $(seq 1 "$MAX_WORKERS"); do
	cpus=$(seq 1 $((ncpu - 1)) | head -n "$n" | paste -sd,)
	bench_wait_quiet
	l=$("$isa/$prog" --workers "$n" --calls $((CALLS / 4)) --warmup 0 "${deep[@]}" --dist-cpu 0 --worker-cpus "$cpus")
	t=$(grep -oE 'ticks_per_packet=[0-9.]+' <<<"$l" | cut -d= -f2)
	share=no
	[ "$n" -lt "$ncpu" ] || share="yes: $n workers time-share CPU(s) $cpus ($ncpu CPUs here)"
	echo "| $n | dist 0, workers $cpus | $t | $(mpps "$t") | $share |"
done

# ---- callgrind: instructions per packet, workers played inline ----
cg_pkts=$(((cg_calls + cg_warm) * 64)) # the warm-up calls count too
per_packet() { # callgrind-out function: inclusive instructions per packet (the library's files:
	# sched/dist/dist*.c, nodes/dist*.c before the library moved, so BEFORE= still reads)
	callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
		awk -v fn="$2" -v p="$cg_pkts" '$0 ~ ("(sched/dist|nodes)/dist[a-z_]*[.]c:" fn " ") && !/=>/ { n = $1; gsub(",", "", n); printf "%.1f", n / p; exit }'
}
cg() { # OUT BIN ARGS...
	local o=$1 bin=$2
	shift 2
	valgrind --tool=callgrind --callgrind-out-file="$out/cg.$o" "$bin/$prog" --calls "$cg_calls" --warmup "$cg_warm" "$@" \
		>/dev/null 2>&1 || { echo "bench: callgrind run $o failed" >&2; exit 1; }
}
echo
echo "| callgrind ($isa_label), 1 worker played inline | dist_process instr/packet | dist_worker_poll instr/packet |"
echo "|---|---|---|"
for b in ${before_isa:+before} now; do
	bin=$isa
	[ "$b" = before ] && bin=$before_isa
	for depth in matched deep; do
		[ "$b" = before ] && [ "$depth" = deep ] && continue
		args=("${matched[@]}")
		[ "$depth" = deep ] && args=("${deep[@]}")
		[ "$b" = before ] && args=(--backlog 8 --ring-lines "$before_ring" --poll-max 8)
		for mode in inline inline-hold; do
			cg "$b.$depth.$mode" "$bin" --"$mode" "${args[@]}"
			label="flows all new"
			[ "$mode" = inline-hold ] && label="flows in flight"
			label="$label, $depth depth"
			[ "$b" = before ] && label="$label, $before_label"
			echo "| $label | $(per_packet "$out/cg.$b.$depth.$mode" dist_process) | $(per_packet "$out/cg.$b.$depth.$mode" dist_worker_poll) |"
		done
	done
done

# The other scheduling types (this build, matched depth): every packet
# parallel, or ordered (handed back by the worker, released by the main thread).
echo
echo "| callgrind, --inline, matched depth, all packets of one type | dist_process instr/packet | dist_ordered_take | dist_worker_return |"
echo "|---|---|---|---|"
for t in atomic parallel ordered; do
	cg "type.$t" "$isa" --inline "${matched[@]}" --type "$t"
	echo "| $t (types array) | $(per_packet "$out/cg.type.$t" dist_process) | $(per_packet "$out/cg.type.$t" dist_ordered_take) |" \
		"$(per_packet "$out/cg.type.$t" dist_worker_return) |"
done

echo
bench_report
