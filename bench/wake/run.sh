#!/usr/bin/env bash
# Wake-up latency of an rx queue (issue 23): from a frame written into a
# veth to sluice's receive of it, by rx mode, beside the kernel's own
# AF_PACKET socket on the same veth woken in a blocking recv().
#
#   bench/wake/run.sh
#
# Steps:
#  1. Builds (bench_builds): sluice-bench-wake in $native (-march=native;
#     there is no DPDK peer whose baseline to match: the peer is the kernel).
#  2. A namespace of its own with a veth pair (wk<PID>t -> wk<PID>r), IPv6
#     off so that nothing but the bench's frames crosses it.
#  3. sluice-bench-wake inside it, one run: FRAMES frames per phase, each
#     SPACING..1.5 x SPACING us after the one before (far beyond adaptive
#     mode's 200 us window: every frame finds an idle thread), carrying the
#     CLOCK_MONOTONIC time of its sendto(). Phases in order: kernel (a plain
#     AF_PACKET socket, blocking recv: the peer), polling (rx-ring auto: the
#     block ring), polling-frame (rx-ring frame: the per-frame ring), adaptive,
#     interrupt, backoff (the back-off sluice had before rx modes,
#     re-created: TPACKET_V3 ring, sleeps of growing length up to idle-max
#     1 ms; see wake.c). sluice's time is taken by a node of the bench
#     program only, right after af-packet-input: the engine's datapath pays
#     nothing for it.
#
# Rows (bench_row), per sluice mode: median and p99 latency (us) against the
# kernel socket's of the same run. Then its own table: every phase's figures,
# the CPU time of the receiving thread over the phase and sluice's sleeps.
# The rows name how many frames each side received (the polling queue's
# V3 ring drops when its thread is kept off the CPU for ~40 ms); a phase
# that received less than 90% fails the bench.
#
# Time after the build: FRAMES x 6 phases x 1.25 x SPACING, plus up to 3 s
# a phase for frames still queued behind a thread kept off its CPU: QUICK
# (1000 frames) 9-25 s, a full run (10000) 80-100 s (and bench_wait_quiet).
#
# Environment: FRAMES (10000; QUICK 1000), SPACING (1000 us), BENCH_BUILD_ROOT,
# BENCH_NO_INSTALL, QUICK. Needs root (a namespace, veths).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-wake.XXXXXX")
ns=sluice-bwake-$$
cleanup() {
	ip netns del "$ns" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

if [ "$QUICK" = 1 ]; then
	FRAMES=${FRAMES:-1000}
else
	FRAMES=${FRAMES:-10000}
fi
SPACING=${SPACING:-1000}

[ "${BENCH_NO_INSTALL:-0}" = 1 ] || bench_need ip=iproute2
bench_builds bench/wake/sluice-bench-wake
prog=$native/bench/wake/sluice-bench-wake

# ---- 2. the veth ------------------------------------------------------------
tx=wk$$t rx=wk$$r
ip netns add "$ns"
ip netns exec "$ns" sh -c "sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1 &&
	ip link add $tx type veth peer name $rx && ip link set $tx up && ip link set $rx up && ip link set lo up"

# ---- 3. the run ---------------------------------------------------------------
bench_wait_quiet
load=$(cut -d' ' -f1-3 /proc/loadavg)
timeout $((FRAMES * SPACING * 10 / 1000000 + 120)) ip netns exec "$ns" "$prog" --rx "$rx" --tx "$tx" \
	--frames "$FRAMES" --spacing "$SPACING" --no-huge >"$out/wake.txt" 2>&1 || {
	cat "$out/wake.txt" >&2
	exit 1
}
cat "$out/wake.txt" >&2

# field PHASE NAME: the figure after NAME on that phase's line
field() { awk -v p="$1" -v k="$2" '$1 == "wake:" && $2 == p {for (i = 3; i < NF; i++) if ($i == k) print $(i + 1)}' "$out/wake.txt"; }
for p in kernel polling polling-frame adaptive interrupt backoff; do
	got=$(field "$p" got)
	[ -n "$got" ] || { echo "bench/wake: no figures for phase $p" >&2; exit 1; }
	# Fewer than all is a figure (a polling queue's TPACKET_V3 ring holds
	# one lone frame per block: 32 blocks fill in ~40 ms of a thread kept
	# off its CPU, then the kernel drops); fewer than 90% is a broken run.
	[ $((got * 100)) -ge $((FRAMES * 90)) ] || { echo "bench/wake: $p received $got of $FRAMES frames" >&2; exit 1; }
done

# ---- rows -----------------------------------------------------------------------
echo "== bench/wake: $FRAMES frames per phase, ${SPACING}..$((SPACING * 3 / 2)) us apart, load $load, $(nproc) CPUs =="
printf '%-14s %8s %10s %10s %10s %10s %8s %8s\n' phase got "median us" "p99 us" "min us" "max us" "cpu s" sleeps
for p in kernel polling polling-frame adaptive interrupt backoff; do
	printf '%-14s %8s %10s %10s %10s %10s %8s %8s\n' "$p" "$(field "$p" got)" "$(field "$p" median_us)" \
		"$(field "$p" p99_us)" "$(field "$p" min_us)" "$(field "$p" max_us)" "$(field "$p" cpu_s)" "$(field "$p" sleeps)"
done
echo

peer="kernel AF_PACKET socket, blocking recv()"
common=(--bench wake --unit us --better lower --peer-name "$peer"
	--burst "one frame at a time, ${SPACING}-$((SPACING * 3 / 2)) us apart, both"
	--memory "sluice 4 KB pages (--no-huge); the kernel socket's own queue"
	--isa "sluice $native_label; the kernel as built")
label() {
	case "$1" in
	polling) echo "sluice rx-mode polling, rx-ring auto (TPACKET_V3 block ring, thread spins)" ;;
	polling-frame) echo "sluice rx-mode polling, rx-ring frame (TPACKET_V2 per-frame ring, thread spins)" ;;
	adaptive) echo "sluice rx-mode adaptive (TPACKET_V2, blocks 200 us after the last frame)" ;;
	interrupt) echo "sluice rx-mode interrupt (TPACKET_V2, blocks)" ;;
	backoff) echo "sluice old back-off, re-created (TPACKET_V3, sleeps up to 1 ms)" ;;
	esac
}
differs() {
	case "$1" in
	polling | polling-frame) echo "sluice spins a whole core; the kernel socket's thread sleeps" ;;
	backoff) echo "the back-off no longer exists as a mode (idle-mode sleep is now adaptive): re-created by an input that cannot sleep on a V3 ring" ;;
	*) echo "" ;;
	esac
}
for p in polling polling-frame adaptive interrupt backoff; do
	for s in median p99; do
		bench_row "${common[@]}" --what "wake-up latency, frame into a veth to rx, $s" \
			--sluice "$(field "$p" "${s}_us")" --peer "$(field kernel "${s}_us")" \
			--statistic "$s over the $(field "$p" got) of $FRAMES frames received, $(field kernel got) by the kernel socket, one run (CLOCK_MONOTONIC at sendto to the first node after rx)" \
			--sluice-label "$(label "$p")" --differs "$(differs "$p")"
	done
done
bench_report
