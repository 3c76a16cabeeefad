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
#           idle median measured in the same run; unmarked pings meanwhile
#           must be more than 2 ms off it (the link really was saturated);
#   workers with the distributor and 2 workers, classes of each type in
#           front of it: TCP `type ordered` (priority 7), EF pings `type
#           parallel` (priority 0): 8 iperf3 streams A -> B complete, 20 EF
#           pings meanwhile are all answered, both workers were handed
#           ordered packets and parallel ones reached the workers (show
#           distributor), the class queues handed TCP on and are 2048 deep as
#           `sched { class-queue-depth 2048 }` says (show sched).
#           (Per-stream order at the egress with TCP of type ordered is
#           tests/dist's `dist iperf3 ordered`, on this same path.)
# Time is physical here, on a shared box: each measurement is retried up
# to 3 times, and the figures of every attempt are printed. Every run
# ends with `show sched`, a clean SIGTERM and every buffer returned.
# Needs root, ip, ping, iperf3 (scripts/deps.sh test). Names carry the PID
# and the prefix sio; the trap removes namespaces, veths and processes even
# on failure; every wait is bounded.
#
#   test_sched_netns.sh SLUICE SLUICECTL delay|shaper|ef|workers
set -u
sluice=$1
sluicectl=$2
check=$3
. "$(dirname "$0")/../lib/netns.sh"
netns_names sio
netns_preflight ip ping iperf3 timeout awk
netns_make_pairs
# The shaper checks run jumbo frames: a shaper that counts Ethernet bytes
# exactly leaves TCP at most 1448/1514 (95.6%) of its rate as goodput with
# 1500-byte frames, too close to the -5% bound for the check to mean
# anything; with 9000-byte frames the ceiling is 8948/9014 (99.3%). The
# wire rate the shaper let through is printed beside the goodput.
mtu=1500
[ "$check" = delay ] || [ "$check" = workers ] || mtu=9000
ip link set "$if_a" mtu "$mtu" && ip link set "$if_b" mtu "$mtu" || fail "mtu $mtu"
ip -n "$ns_a" link set "$host_a" mtu "$mtu" && ip -n "$ns_b" link set "$host_b" mtu "$mtu" || fail "mtu $mtu"
netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1

cat > "$tmp/setup.cli" <<CLI
set interface ip address a 10.1.0.1/24
set interface ip address b 10.2.0.1/24
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
buffers { data-size 9216 }
interfaces {
  a { driver af-packet  host-if $if_a  tx-frame-size 10240 }
  b { driver af-packet  host-if $if_b  tx-frame-size 10240 }
}
sched { max-held 512  class-queue-depth 2048 }
CONF
# Two workers: on spare cores when there are any, else sharing (as in
# tests/dist/test_dist_iperf.sh).
if [ "$check" = workers ]; then
	n_cpus=$(nproc)
	if [ "$n_cpus" -ge 3 ]; then workers=1,2; elif [ "$n_cpus" -eq 2 ]; then workers=0,1; else workers=0,0; fi
	printf 'cpu { corelist-workers %s }\ndistributor { enable  ring-lines 256  backlog 64 }\n' "$workers" \
		>> "$tmp/startup.conf"
fi
# sluice at nice -15 (netns_start_sluice_niced says why).
netns_start_sluice_niced

# Median RTT in ms of N ping replies A -> B (extra ping options after N);
# fails when fewer than N came back within 15 s (with -w, ping sends
# until it has N replies, so a late one costs an extra request, not the
# measurement).
median_rtt() {
	local n=$1
	shift
	timeout 60 ip netns exec "$ns_a" ping -n -c "$n" -i 0.1 -W 2 -w 15 "$@" 10.2.0.2 > "$tmp/ping" 2>&1 ||
		{ cat "$tmp/ping" >&2; return 1; }
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$tmp/ping" | sort -g |
		awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.3f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# Warm-up: ARP both ways, neighbours resolved.
timeout 30 ip netns exec "$ns_a" ping -c 5 -i 0.1 -W 2 -w 10 10.2.0.2 > "$tmp/ping" 2>&1 ||
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

# TX-bytes of interface $1 (show interface).
tx_bytes() {
	ctl show interface | awk -v n="$1" '$1 == n { print $11 }'
}

# iperf3 TCP A -> B for $1 seconds (the first 2 not counted: slow start);
# prints the receiver's goodput in Mbit/s, empty when the run failed, and
# leaves in $tmp/wire the Ethernet bytes b sent over the whole run (slow start
# and the iperf3 handshakes included) in Mbit/s.
goodput() {
	iperf_server
	local b0 t0 b1 t1
	b0=$(tx_bytes b)
	t0=$(date +%s.%N)
	timeout $(($1 + 30)) ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -t "$1" -O 2 -f m > "$tmp/iperf" 2>&1
	local rc=$?
	b1=$(tx_bytes b)
	t1=$(date +%s.%N)
	awk -v b="$((b1 - b0))" -v t="$t1" -v s="$t0" 'BEGIN { printf "%.2f", b * 8 / (t - s) / 1e6 }' > "$tmp/wire"
	iperf_done
	[ "$rc" -eq 0 ] || { cat "$tmp/iperf" >&2; return 1; }
	awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") print $(i - 1) }' "$tmp/iperf" | tail -1
}

check_shaper() {
	local ok= g=
	ctl sched shaper interface b rate 10mbit burst 16k || fail "sched shaper interface b rate 10mbit burst 16k"
	for attempt in 1 2 3; do
		g=$(goodput 10) || { echo "shaper attempt $attempt: iperf3 failed"; continue; }
		echo "shaper attempt $attempt: iperf3 TCP goodput ${g} Mbit/s through a 10 Mbit/s shaper" \
			"(Ethernet bytes b sent over the whole iperf3 run, start-up included: $(cat "$tmp/wire") Mbit/s)"
		if within "$g" 10 0.5; then ok=1; break; fi
		grep -E "sender|receiver" "$tmp/iperf"
	done
	ctl show sched
	[ -n "$ok" ] || fail "goodput ${g:-?} Mbit/s, expected 10 +- 5%"
}

check_ef() {
	local ok= idle= loaded= diff= plain= held= held2= g= client=
	ctl sched class ef priority 0 match dscp 46 || fail "sched class ef priority 0 match dscp 46"
	ctl sched shaper interface b rate 10mbit burst 16k || fail "sched shaper interface b rate 10mbit burst 16k"
	for attempt in 1 2 3; do
		idle=$(median_rtt 20 -Q 0xb8) || { echo "ef attempt $attempt: pings lost (idle)"; continue; }
		iperf_server
		timeout 50 ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -t 15 -f m > "$tmp/iperf" 2>&1 &
		client=$!
		sleep 3 # past slow start: the shaper's queue is standing
		ctl show sched > "$tmp/sched_loaded"
		loaded=$(median_rtt 20 -Q 0xb8) || { echo "ef attempt $attempt: pings lost (loaded)"; wait "$client"; iperf_done; continue; }
		ctl show sched > "$tmp/sched_after"
		plain=$(median_rtt 10) || plain=
		wait "$client"
		iperf_done
		g=$(awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") print $(i - 1) }' "$tmp/iperf" | tail -1)
		held=$(awk '/max-held/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "held") print $(i + 1) }' "$tmp/sched_loaded")
		held2=$(awk '/max-held/ { gsub(",", ""); for (i = 1; i <= NF; i++) if ($i == "held") print $(i + 1) }' "$tmp/sched_after")
		diff=$(awk -v a="$loaded" -v b="$idle" 'BEGIN { printf "%.3f", a - b }')
		echo "ef attempt $attempt: EF ping median idle ${idle} ms, beside a saturating iperf3 (${g:-?} Mbit/s," \
			"${held:-?} and ${held2:-?} packets held by the shaper before and after) ${loaded} ms, difference ${diff} ms;" \
			"unmarked pings meanwhile ${plain:-lost} ms"
		# The link really was saturated throughout: packets held before and
		# after the EF pings, and unmarked pings queued behind the bulk.
		if [ "${held:-0}" -gt 0 ] && [ "${held2:-0}" -gt 0 ] && [ -n "$plain" ] && ! within "$plain" "$idle" 2 &&
			within "$diff" 0 2; then
			ok=1
			break
		fi
		echo "  RTTs (ms): $(rtts)"
	done
	ctl show sched
	[ -n "$ok" ] || fail "EF pings: median RTT ${diff:-?} ms from idle with the link saturated (2 ms allowed)," \
		"or the link was not saturated (unmarked pings ${plain:-lost} ms)"
}

# Column $2 of worker $1's row in show distributor (Worker, In flight,
# Backlog, Flows, Ring, Handed, Returned, Matched, Migrations, Drops,
# Ordered, Parallel: one word per cell in a row).
dist_col() {
	awk -v w="$1" -v c="$2" '$1 == w { print $c }' "$tmp/dist"
}

check_workers() {
	ctl sched class ef priority 0 type parallel match dscp 46 || fail "sched class ef ... type parallel"
	ctl sched class tcp priority 7 type ordered match protocol tcp || fail "sched class tcp ... type ordered"
	ctl clear distributor > /dev/null || fail "clear distributor"
	iperf_server
	timeout 50 ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -P 8 -t 6 -f m > "$tmp/iperf" 2>&1 &
	client=$!
	sleep 1
	median_rtt 20 -Q 0xb8 > "$tmp/ef" || fail "EF pings beside 8 iperf3 streams: not all answered"
	wait "$client"
	local rc=$?
	iperf_done
	[ "$rc" -eq 0 ] && grep -q "SUM.*receiver" "$tmp/iperf" || { cat "$tmp/iperf" >&2; fail "iperf3 -P 8 did not complete"; }
	grep "SUM" "$tmp/iperf"
	echo "EF pings (parallel) beside them: median $(cat "$tmp/ef") ms"
	ctl show distributor > "$tmp/dist" || fail "show distributor"
	ctl show sched > "$tmp/sched" || fail "show sched"
	cat "$tmp/dist" "$tmp/sched"
	local parallel=0
	for w in 0 1; do
		[ "$(dist_col "$w" 11)" -gt 0 ] || fail "worker $w was handed no ordered packet"
		parallel=$((parallel + $(dist_col "$w" 12)))
	done
	[ "$parallel" -ge 20 ] || fail "$parallel parallel packets handed, 20 EF pings at least expected"
	# Class queues: the tcp row's "sent" column (class held queued sent ...)
	local sent
	sent=$(awk '/^Class queues/ { q = 1; next } q && $1 == "tcp" { print $4 }' "$tmp/sched")
	[ "${sent:-0}" -gt 1000 ] || fail "the class queues handed ${sent:-no} TCP packets to the distributor"
	grep -q "type ordered match protocol tcp" "$tmp/sched" || fail "show sched does not say type ordered"
	grep -q "^Class queues for the workers (2048 packets per class)" "$tmp/sched" ||
		fail "show sched does not say class-queue-depth 2048"
}

case "$check" in
delay) check_delay ;;
shaper) check_shaper ;;
ef) check_ef ;;
workers) check_workers ;;
*) fail "unknown check $check" ;;
esac

ctl show errors > "$tmp/errors" 2>&1 && grep -E "sched" "$tmp/errors"

netns_stop_sluice
echo "PASS"
exit 0
