#!/usr/bin/env bash
# Routes from Linux into sluice's FIB (linux-cp's netlink listener), beside
# the Linux kernel taking the same routes on its own.
#
#   bench/lcp/run.sh
#
# For each size (100,000 and 500,000 routes; tests/lcp/lcp_routes.py:
# /16 to /32 in turn, drawn from 11/8..99/8, the longer than /24 under
# 16,384 /24s), ROUNDS rounds, each after waiting for a quiet box:
#  1. The kernel alone (the peer): a namespace with a veth interface and
#     no listener; the time of `ip -batch` adding the routes (and deleting
#     them): routes per second the kernel accepts.
#  2. sluice: the daemon (pg0 -> nul0 forwarding at 10 kpps beside, so the
#     datapath runs), a null port "a" paired with TAP s-eth0 in a namespace
#     (its address 10.1.0.1/24 given in Linux), `clear runtime`, then the same
#     `ip -batch` into that namespace; the time from its start (the kernel
#     sends the first notification within it) until sluice holds every route
#     (`show lcp json` linux_routes, read every 10 ms, equal to N): routes per
#     second from netlink into the FIB. The same for the deletes (until none).
#     The end is sluice's own clock of its last FIB change (show lcp json's
#     routes_changed_unix_ns, read once the count is N; polls every 50 ms);
#     LCP_STAMP=0, or a build without it, takes the 10 ms poll's time.
#     Then `show threads json`'s barrier.hold_max_ns: the longest time the
#     datapath sat parked at the barrier during the load. Round 1 also
#     compares the whole FIB with the kernel's table (lcp_fib_equal.py),
#     outside the timing, and the bench fails when they differ.
# Rows (bench_row): routes/s for adds and deletes at each size, sluice
# (netlink -> FIB) vs the kernel alone, paired by round; the longest barrier
# hold, with no peer (the goal, 1 ms, in the row). The issue's goal: sluice
# follows at least as fast as the kernel accepts routes, no hold > 1 ms.
# HOLDS (default "budget"): sluice runs once per round for each hold
# setting named, in the same run and the same build, so that they compare
# like for like: "budget" the defaults (1,024 messages, 500 us of the
# listener's own CPU, SCHED_FIFO while holding; docs/lcp.md, Holds),
# "legacy" the listener as before them (1,024 messages, 500 us, normal
# priority, so the budget is in effect on the wall clock; the deferred
# frees and the IPv6 sweep in steps stay), "small" 256 messages and 200 us
# at SCHED_FIFO, "noprio" 256 and 200 us at normal priority. Each
# also reports the listener's holds: longest and p99 (show lcp json's
# holds histogram: the p99's bucket bound), wall and its own CPU.
#
# Time after the builds: QUICK (20,000 routes, one round) about 30 s; a full
# run about 4 minutes.
#
# Environment: SIZES ("100000 500000"; QUICK "20000"), ROUNDS (2; QUICK 1), HOLDS, LCP_STAMP,
# BUILD (an existing build directory instead of the shared native build),
# BENCH_BUILD_ROOT, BENCH_NO_INSTALL, QUICK.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-lcp.XXXXXX")
pid=
ns_k=bench-lcp-k$$
ns_c=bench-lcp-c$$
cleanup() {
	[ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
	ip netns del "$ns_k" 2>/dev/null || true
	ip netns del "$ns_c" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

if [ "$QUICK" = 1 ]; then
	SIZES=${SIZES:-20000} ROUNDS=${ROUNDS:-1}
else
	SIZES=${SIZES:-100000 500000} ROUNDS=${ROUNDS:-2}
fi
[ "$(id -u)" = 0 ] || { echo "bench/lcp: needs root (network namespaces, TAPs)" >&2; exit 3; }

if [ -n "${BUILD:-}" ]; then
	build=$(cd "$BUILD" && pwd)
else
	bench_builds app/sluice cli/sluicectl
	build=$native
fi
sluice=$build/app/sluice
sluicectl=$build/cli/sluicectl
ctl() { timeout 120 "$sluicectl" -s "$out/cli.sock" "$@"; }
now_ns() { date +%s%N; }
# `show lcp json` once; sets routes (linux_routes) and stamp (its
# routes_changed_unix_ns: when the FIB last changed, "" from builds that
# lack it). One process per poll, not four: the poller shares the box's
# CPUs with what it measures.
lcp_poll() {
	local j
	j=$(ctl show lcp json | tr -d '\n')
	routes= stamp=
	[[ $j =~ \"linux_routes\":[[:space:]]*([0-9]+) ]] && routes=${BASH_REMATCH[1]}
	[[ $j =~ \"routes_changed_unix_ns\":[[:space:]]*([0-9.e+]+) ]] && stamp=${BASH_REMATCH[1]}
	return 0
}
# wait_routes N: until sluice holds N Linux routes (300 s at most); prints
# the time the FIB got there. With the stamp, sluice's own clock of its
# last change (then polls every 50 ms do: the poll's timing no longer
# matters); without (LCP_STAMP=0, or an older build), the poll's time,
# every 10 ms.
wait_routes() {
	local end=$(($(now_ns) + 300000000000))
	while [ "$(now_ns)" -lt "$end" ]; do
		lcp_poll
		if [ "$routes" = "$1" ]; then
			if [ -n "$stamp" ] && [ "${LCP_STAMP:-1}" = 1 ]; then
				awk -v s="$stamp" 'BEGIN { printf "%.0f\n", s }'
			else
				now_ns
			fi
			return 0
		fi
		if [ -n "$stamp" ] && [ "${LCP_STAMP:-1}" = 1 ]; then sleep 0.05; else sleep 0.01; fi
	done
	echo "bench/lcp: sluice holds $routes routes, not $1, after 300 s" >&2
	ctl show lcp >&2
	exit 1
}

HOLDS=${HOLDS:-budget}
hold_conf() {
	case "$1" in
	budget) echo "" ;;
	legacy) echo "netlink-hold-entries 1024  netlink-hold-cpu 500us  netlink-hold-priority off" ;;
	small) echo "netlink-hold-entries 256  netlink-hold-cpu 200us" ;;
	noprio) echo "netlink-hold-entries 256  netlink-hold-cpu 200us  netlink-hold-priority off" ;;
	*) echo "bench/lcp: HOLDS: budget, legacy, small or noprio, not $1" >&2; exit 2 ;;
	esac
}

start() {
	cat >"$out/startup.conf" <<CONF
unix { nodaemon  cli-listen $out/cli.sock }
interfaces {
  pg0 { driver null  l2-xconnect nul0 }
  nul0 { driver null }
  a { driver null }
}
packet-generator { s0 { rate 10kpps  size 64  next-node ethernet-input  rx-if 0 } }
linux-cp { default-netns $ns_c  $(hold_conf "$1")  a { host-if s-eth0 } }
CONF
	ip netns add "$ns_c"
	"$sluice" -c "$out/startup.conf" 2>"$out/err" &
	pid=$!
	for _ in $(seq 200); do grep -q "main: running" "$out/err" && break; sleep 0.1; done
	for _ in $(seq 100); do ip -n "$ns_c" link show s-eth0 >/dev/null 2>&1 && break; sleep 0.1; done # a loaded box
	ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0
	for _ in $(seq 100); do ctl show ip interface | grep -q 10.1.0.1/24 && return 0; sleep 0.1; done
	cat "$out/err" >&2
	exit 1
}

stop() {
	bench_daemon_stop
	ip netns del "$ns_c"
}

# kernel N ROUND: the kernel alone, routes/s of the adds and of the deletes
kernel() {
	local t0 t1 t2
	ip netns add "$ns_k"
	ip -n "$ns_k" link add d0 type veth peer name d1 # no dummy module on every box
	ip -n "$ns_k" link set d1 up
	ip -n "$ns_k" link set d0 up
	ip -n "$ns_k" addr add 10.1.0.1/24 dev d0
	t0=$(now_ns)
	ip -n "$ns_k" -batch "$out/k$1.add"
	t1=$(now_ns)
	ip -n "$ns_k" -batch "$out/k$1.del"
	t2=$(now_ns)
	ip netns del "$ns_k"
	awk -v n="$1" -v a=$((t1 - t0)) -v d=$((t2 - t1)) 'BEGIN { printf "%.0f %.0f\n", n * 1e9 / a, n * 1e9 / d }' \
		>>"$out/kernel-$1.txt"
}

# The listener's holds since `clear lcp`: longest wall and own CPU, us; p99
# wall and CPU (the histogram bucket's bound), us; holds; faults in holds;
# holds preempted; holds at SCHED_FIFO (0 from builds without them).
listener_holds() {
	ctl show lcp json | python3 -c 'import json,sys; n=json.load(sys.stdin)["netlink"]; h=n.get("holds", {})
print("%.1f %.1f %d %d %d %d %d %d %d" % (n.get("hold_max_ns", 0) / 1000, n.get("hold_cpu_max_ns", 0) / 1000,
      h.get("p99_us", 0), h.get("cpu_p99_us", 0), sum(h.get("wall_us", {}).values()), h.get("faults", 0),
      h.get("preempted", 0), h.get("raised", 0), h.get("faults_max", 0)))'
}

# through N ROUND HOLDS: sluice following the same load
through() {
	local n=$1 v=$3 t0 t1 t2 t3 hold_add hold_del lh_add lh_del
	start "$v"
	ctl clear runtime >/dev/null
	ctl clear lcp >/dev/null 2>&1 || true # the listener's hold figures, from here (older builds: none)
	t0=$(now_ns)
	ip -n "$ns_c" -batch "$out/s$n.add"
	t1=$(wait_routes "$n")
	hold_add=$(ctl show threads json | python3 -c 'import json,sys; print(json.load(sys.stdin)["barrier"]["hold_max_ns"])')
	if [ "$2" = 1 ]; then
		ip -j -n "$ns_c" route show table main >"$out/kernel.json"
		ctl show ip fib json >"$out/fib.json"
		python3 "$root/tests/lcp/lcp_fib_equal.py" "$out/kernel.json" "$out/fib.json" 1000 >&2 ||
			{ echo "bench/lcp: sluice's FIB is not the kernel's table" >&2; exit 1; }
	fi
	ctl show lcp | grep '^netlink' >&2
	ctl clear runtime >/dev/null
	lh_add=$(listener_holds) # its adds' holds alone (the FIB comparison's are not the load's)
	ctl clear lcp >/dev/null 2>&1 || true
	t2=$(now_ns)
	ip -n "$ns_c" -batch "$out/s$n.del"
	t3=$(wait_routes 0)
	hold_del=$(ctl show threads json | python3 -c 'import json,sys; print(json.load(sys.stdin)["barrier"]["hold_max_ns"])')
	lh_del=$(listener_holds)
	# The listener's own view, adds and deletes together: its longest hold,
	# wall and its own CPU time (wall minus the time it was preempted
	# holding); the larger p99s; holds, faults, preempted, raised summed.
	echo "$lh_add $lh_del" | awk '{ m = 9; printf "%.1f %.1f %d %d %d %d %d %d %d\n", ($1 > $(m+1) ? $1 : $(m+1)),
		($2 > $(m+2) ? $2 : $(m+2)), ($3 > $(m+3) ? $3 : $(m+3)), ($4 > $(m+4) ? $4 : $(m+4)),
		$5 + $(m+5), $6 + $(m+6), $7 + $(m+7), $8 + $(m+8), ($9 > $(m+9) ? $9 : $(m+9)) }' >>"$out/listener-$v-$n.txt"
	grep -h "hold over budget" "$out/err" | head -5 >&2 || true # the listener's trace of its slowest holds
	stop
	awk -v n="$n" -v a=$((t1 - t0)) -v d=$((t3 - t2)) -v ha="$hold_add" -v hd="$hold_del" \
		'BEGIN { printf "%.0f %.0f %.1f %.1f\n", n * 1e9 / a, n * 1e9 / d, ha / 1000, hd / 1000 }' >>"$out/sluice-$v-$n.txt"
}

for n in $SIZES; do
	python3 "$root/tests/lcp/lcp_routes.py" "$n" 7 10.1.0.2 d0 "$out/k$n"
	python3 "$root/tests/lcp/lcp_routes.py" "$n" 7 10.1.0.2 s-eth0 "$out/s$n"
	for r in $(seq "$ROUNDS"); do
		bench_wait_quiet
		kernel "$n"
		for v in $HOLDS; do
			bench_wait_quiet
			through "$n" "$r" "$v"
			bench_log "$n routes, round $r/$ROUNDS, holds $v: kernel $(tail -1 "$out/kernel-$n.txt") routes/s (add del);" \
				"sluice $(tail -1 "$out/sluice-$v-$n.txt") (add del routes/s, max hold add del us);" \
				"listener $(tail -1 "$out/listener-$v-$n.txt") (max wall cpu us, p99 wall cpu us, holds, faults, preempted, raised, most faults in one)"
		done
	done
done

# ---- report ----------------------------------------------------------------
col() { awk -v c="$2" '{ print $c }' "$out/$1.txt" | tr '\n' ' '; }
bench_mmm_line() { tr ' ' '\n' | grep . | bench_mmm | awk '{ printf "%9.0f %9.0f %9.0f", $1, $2, $3 }'; }
echo "== bench/lcp: routes from netlink into the FIB; $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) =="
for n in $SIZES; do
	printf '%-62s %s\n' "$n routes" "   min  median     max"
	printf '%-62s %s\n' "  kernel alone, adds, routes/s" "$(col "kernel-$n" 1 | bench_mmm_line)"
	printf '%-62s %s\n' "  kernel alone, deletes, routes/s" "$(col "kernel-$n" 2 | bench_mmm_line)"
	for v in $HOLDS; do
		printf '%-62s %s\n' "  sluice, holds $v (ip -batch start to FIB equal), adds, routes/s" "$(col "sluice-$v-$n" 1 | bench_mmm_line)"
		printf '%-62s %s\n' "  sluice, holds $v, deletes, routes/s" "$(col "sluice-$v-$n" 2 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: longest barrier hold, adds, us" "$(col "sluice-$v-$n" 3 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: longest barrier hold, deletes, us" "$(col "sluice-$v-$n" 4 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: the listener's longest hold, wall, us" "$(col "listener-$v-$n" 1 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: the listener's longest hold, its own CPU, us" "$(col "listener-$v-$n" 2 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: the listener's p99 hold, wall, us (bucket bound)" "$(col "listener-$v-$n" 3 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: the listener's p99 hold, own CPU, us (bucket bound)" "$(col "listener-$v-$n" 4 | bench_mmm_line)"
		printf '%-62s %s\n' "  holds $v: holds / faults in them / preempted / at SCHED_FIFO / most faults in one" "$(cut -d' ' -f5-9 "$out/listener-$v-$n.txt" | tr '\n' ';')"
	done
done
common=(--bench lcp --memory "the daemon's default" --isa "$([ -n "${BUILD:-}" ] && echo "BUILD=$BUILD" ||
	echo "sluice $native_label")")
peer="the Linux kernel alone (ip -batch into a namespace, no listener)"
for n in $SIZES; do
	for v in $HOLDS; do
		stat="median of $ROUNDS rounds; sluice: ip -batch start to every route in the FIB; holds $v"
		bench_row "${common[@]}" --burst "ip -batch of $n" --what "routes from netlink into the FIB, $n adds, holds $v" \
			--unit routes/s --better higher --sluice "$(col "sluice-$v-$n" 1)" --peer-name "$peer" \
			--peer "$(col "kernel-$n" 1)" --paired --statistic "$stat"
		bench_row "${common[@]}" --burst "ip -batch of $n" --what "routes from netlink into the FIB, $n deletes, holds $v" \
			--unit routes/s --better higher --sluice "$(col "sluice-$v-$n" 2)" --peer-name "$peer" \
			--peer "$(col "kernel-$n" 2)" --paired --statistic "$stat"
		bench_row "${common[@]}" --burst "ip -batch of $n" --what "longest barrier hold, $n adds and deletes, holds $v" \
			--unit us --better lower --sluice "$(paste -d' ' <(col "sluice-$v-$n" 3) <(col "sluice-$v-$n" 4))" \
			--no-peer "the kernel has no barrier; the goal is 1,000 us" --statistic "max of show threads' hold_max_ns"
		bench_row "${common[@]}" --burst "ip -batch of $n" --what "p99 listener hold, wall, $n, holds $v" \
			--unit us --better lower --sluice "$(col "listener-$v-$n" 3)" \
			--no-peer "the goal is 1,000 us for every hold" --statistic "show lcp's holds histogram, p99 bucket bound"
		bench_row "${common[@]}" --burst "ip -batch of $n" --what "longest barrier hold's own CPU time (listener), $n, holds $v" \
			--unit us --better lower --sluice "$(col "listener-$v-$n" 2)" \
			--no-peer "wall minus preemption on a loaded box; the goal is 1,000 us" --statistic "show lcp's hold_cpu_max_ns"
	done
done
echo
bench_report
