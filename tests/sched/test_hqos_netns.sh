#!/bin/bash
# The subscriber hierarchy on real TCP (issue 22's hierarchy test): sluice
# routes between two namespaces over af-packet,
#   host A 10.1.0.2 --veth-- [a  sluice  b] --veth-- host B 10.2.0.2, 10.2.0.3
# with the port (b's shaper) at 30 Mbit/s and two subscribers on b:
#   s1 dst 10.2.0.2/32 rate 20mbit ceil 30mbit, s2 dst 10.2.0.3/32 rate 5mbit.
#   both    iperf3 TCP to each at once for 10 s: s2 departs 5 Mbit/s, s1 25
#           (its 20 and the 5 left, up to its ceil), each +-5%, by its
#           departed bytes in `show sched subscriber json`; each iperf3
#           goodput within +-5% of that x 1448/1514 (TCP over 1500-byte
#           frames, timestamps on);
#   borrow  s1 stops, s2 given ceil 25mbit: s2 departs 25 Mbit/s +-5%;
#   ef      s1 with ceil = rate 20mbit saturated by iperf3: pings marked
#           EF (class ef priority 0 match dscp 46) keep their median RTT
#           within idle + one 1514-byte frame at 20 Mbit/s (0.61 ms) + 1 ms.
# Linux HTB with the same hierarchy on a veth between two more namespaces
# (rate 30mbit; 20/30 and 5/5, then 5/25) runs the same iperf3 pairs in
# the same run: its figures are printed beside sluice's as the reference
# (not asserted: the kernel's HTB is the yardstick, not the test).
# Physical time on a shared box: each check is retried up to 3 times, the
# figures of every attempt printed. Needs root, ip, tc, ping, iperf3. Names
# carry the PID and the prefix hq; the trap removes namespaces, veths and
# processes even on failure; every wait is bounded. About 90 s.
#
# After the checks, the stats segment's /sched/if/hqos/ sums for b
# (sluice-stats) equal the port's in `show sched subscriber json`.
#
#   test_hqos_netns.sh SLUICE SLUICECTL SLUICE_STATS
set -u
sluice=$1
sluicectl=$2
sluice_stats=$3
. "$(dirname "$0")/../lib/netns.sh"
netns_names hq
ns_x=hq-x-$id
ns_y=hq-y-$id
netns_preflight ip tc ping iperf3 timeout awk
htb_cleanup() {
	ip netns del "$ns_x" 2>/dev/null
	ip netns del "$ns_y" 2>/dev/null
	for p in $(jobs -p); do kill -KILL "$p" 2>/dev/null; done
	netns_cleanup
}
trap htb_cleanup EXIT
netns_routed_start "sched class ef priority 0 match dscp 46
sched shaper interface b rate 30mbit burst 16k
sched hqos interface b queue-limit 128
sched subscriber s1 interface b rate 20mbit ceil 30mbit burst 16k match dst 10.2.0.2/32
sched subscriber s2 interface b rate 5mbit burst 16k match dst 10.2.0.3/32" "sched { max-held 4096 }"
ip -n "$ns_b" addr add 10.2.0.3/24 dev "$host_b" || fail "second address in B"
for dst in 10.2.0.2 10.2.0.3; do
	timeout 30 ip netns exec "$ns_a" ping -c 3 -i 0.1 -W 2 -w 10 "$dst" > "$tmp/ping" 2>&1 ||
		{ cat "$tmp/ping" >&2; fail "no connectivity A -> $dst"; }
done

# The HTB reference: X 10.9.0.1 --veth (HTB on X's end)-- Y 10.9.0.2, .3
ip netns add "$ns_x" && ip netns add "$ns_y" || fail "reference namespaces"
ip link add hqx$id netns "$ns_x" type veth peer name hqy$id netns "$ns_y" || fail "reference veth"
ip netns exec "$ns_x" sh -c "ip link set lo up && ip addr add 10.9.0.1/24 dev hqx$id && ip link set hqx$id up" &&
	ip netns exec "$ns_y" sh -c "ip link set lo up && ip addr add 10.9.0.2/24 dev hqy$id &&
		ip addr add 10.9.0.3/24 dev hqy$id && ip link set hqy$id up" || fail "reference addresses"
htb() { # ceil of the second class
	local t="ip netns exec $ns_x tc"
	{ $t qdisc show dev hqx$id | grep -q htb || $t qdisc add dev hqx$id root handle 1: htb default 30; } &&
		$t class replace dev hqx$id parent 1: classid 1:1 htb rate 30mbit burst 16k quantum 1514 &&
		$t class replace dev hqx$id parent 1:1 classid 1:10 htb rate 20mbit ceil 30mbit burst 16k quantum 1514 &&
		$t class replace dev hqx$id parent 1:1 classid 1:20 htb rate 5mbit ceil "$1" burst 16k quantum 1514 &&
		$t class replace dev hqx$id parent 1:1 classid 1:30 htb rate 1mbit ceil 30mbit quantum 1514 &&
		{ $t filter show dev hqx$id | grep -q u32 ||
			{ $t filter add dev hqx$id parent 1: protocol ip u32 match ip dst 10.9.0.2/32 flowid 1:10 &&
				$t filter add dev hqx$id parent 1: protocol ip u32 match ip dst 10.9.0.3/32 flowid 1:20; }; }
}
htb 5mbit || fail "HTB on the reference veth"

# departed_bytes of subscriber $1 now.
departed() {
	ctl show sched subscriber "$1" json | tr -d '[:space:]' | grep -o '"departed_bytes":[0-9.e+]*' | tail -1 |
		cut -d: -f2 | awk '{ printf "%.0f", $1 }'
}

# Mbit/s from bytes $1 over seconds $2.
mbit() {
	awk -v b="$1" -v s="$2" 'BEGIN { printf "%.2f", b * 8 / s / 1e6 }'
}

within_pct() { # value target percent
	awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= b * p / 100) }'
}

# iperf3 server in namespace $1 on address $2 port $3, one client run.
server() {
	timeout 60 ip netns exec "$1" iperf3 -s -B "$2" -p "$3" -1 > "$tmp/server-$3" 2>&1 &
	for _ in $(seq 50); do
		ip netns exec "$1" ss -ltn 2>/dev/null | grep -q "$2:$3" && return 0
		sleep 0.1
	done
	fail "iperf3 server $2:$3 did not listen"
}

# Receiver goodput in Mbit/s from iperf3 output file $1.
goodput() {
	awk '/receiver/ { for (i = 1; i <= NF; i++) if ($i == "Mbits/sec") print $(i - 1) }' "$1" | tail -1
}

# Clients from namespace $1 to each "address:port" after it, 12 s (the
# first 2 omitted) at once; subscriber departures sampled from 3 s to 11 s
# when $1 is A. Leaves goodputs in $tmp/client-PORT, rates in $tmp/rate-NAME.
run_clients() {
	local ns=$1 pids=() t0 t1 d0_1 d0_2 d1_1 d1_2
	shift
	for target in "$@"; do
		timeout 40 ip netns exec "$ns" iperf3 -c "${target%:*}" -p "${target#*:}" -t 12 -O 2 -f m \
			> "$tmp/client-${target#*:}" 2>&1 &
		pids+=($!)
	done
	if [ "$ns" = "$ns_a" ]; then
		sleep 3
		t0=$(date +%s.%N); d0_1=$(departed s1); d0_2=$(departed s2)
		sleep 8
		t1=$(date +%s.%N); d1_1=$(departed s1); d1_2=$(departed s2)
		mbit $((d1_1 - d0_1)) "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')" > "$tmp/rate-s1"
		mbit $((d1_2 - d0_2)) "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')" > "$tmp/rate-s2"
	fi
	for p in "${pids[@]}"; do wait "$p"; done
}

frame_share() { # Mbit/s of frames -> TCP goodput over 1500-byte frames
	awk -v r="$1" 'BEGIN { printf "%.2f", r * 1448 / 1514 }'
}

check_both() {
	local ok= r1= r2= g1= g2=
	for attempt in 1 2 3; do
		server "$ns_b" 10.2.0.2 5201
		server "$ns_b" 10.2.0.3 5202
		run_clients "$ns_a" 10.2.0.2:5201 10.2.0.3:5202
		r1=$(cat "$tmp/rate-s1"); r2=$(cat "$tmp/rate-s2")
		g1=$(goodput "$tmp/client-5201"); g2=$(goodput "$tmp/client-5202")
		echo "both attempt $attempt: sluice s1 departed ${r1} Mbit/s (25 expected), goodput ${g1:-?}" \
			"($(frame_share 25) expected); s2 ${r2} Mbit/s (5), goodput ${g2:-?} ($(frame_share 5))"
		if within_pct "$r1" 25 5 && within_pct "$r2" 5 5 && [ -n "$g1" ] && [ -n "$g2" ] &&
			within_pct "$g1" "$(frame_share 25)" 5 && within_pct "$g2" "$(frame_share 5)" 5; then
			ok=1
			break
		fi
	done
	ctl show sched subscriber
	[ -n "$ok" ] || fail "two subscribers at once: s1 ${r1:-?} and s2 ${r2:-?} Mbit/s (25 and 5 +-5% expected)," \
		"goodput ${g1:-?} and ${g2:-?}"
	server "$ns_y" 10.9.0.2 5201
	server "$ns_y" 10.9.0.3 5202
	run_clients "$ns_x" 10.9.0.2:5201 10.9.0.3:5202
	echo "both, Linux HTB reference: 20/30 goodput $(goodput "$tmp/client-5201") Mbit/s," \
		"5/5 goodput $(goodput "$tmp/client-5202") Mbit/s"
}

check_borrow() {
	local ok= r2= g2=
	ctl sched subscriber s2 interface b rate 5mbit ceil 25mbit burst 16k match dst 10.2.0.3/32 ||
		fail "s2 ceil 25mbit"
	for attempt in 1 2 3; do
		server "$ns_b" 10.2.0.3 5202
		run_clients "$ns_a" 10.2.0.3:5202
		r2=$(cat "$tmp/rate-s2")
		g2=$(goodput "$tmp/client-5202")
		echo "borrow attempt $attempt: sluice s2 alone, ceil 25: departed ${r2} Mbit/s, goodput ${g2:-?}" \
			"($(frame_share 25) expected)"
		if within_pct "$r2" 25 5 && [ -n "$g2" ] && within_pct "$g2" "$(frame_share 25)" 5; then
			ok=1
			break
		fi
	done
	[ -n "$ok" ] || fail "s2 borrowing up to ceil 25: ${r2:-?} Mbit/s (25 +-5% expected), goodput ${g2:-?}"
	htb 25mbit || fail "HTB ceil 25mbit"
	server "$ns_y" 10.9.0.3 5202
	run_clients "$ns_x" 10.9.0.3:5202
	echo "borrow, Linux HTB reference: 5/25 alone goodput $(goodput "$tmp/client-5202") Mbit/s"
}

median_rtt() {
	timeout 60 ip netns exec "$ns_a" ping -n -c 20 -i 0.1 -W 2 -w 15 "$@" 10.2.0.2 > "$tmp/ping" 2>&1 ||
		{ cat "$tmp/ping" >&2; return 1; }
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$tmp/ping" | sort -g |
		awk '{ v[NR] = $1 } END { printf "%.3f\n", (v[int((NR + 1) / 2)] + v[int(NR / 2) + 1]) / 2 }'
}

check_ef() {
	local ok= idle= loaded= bound= client= t0 t1 d0 d1 backlog
	ctl sched subscriber s1 interface b rate 20mbit burst 16k match dst 10.2.0.2/32 || fail "s1 ceil = rate"
	for attempt in 1 2 3; do
		idle=$(median_rtt -Q 0xb8) || { echo "ef attempt $attempt: pings lost (idle)"; continue; }
		server "$ns_b" 10.2.0.2 5201
		timeout 40 ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -p 5201 -t 10 -O 2 -f m > "$tmp/client-5201" 2>&1 &
		client=$!
		sleep 3
		t0=$(date +%s.%N); d0=$(departed s1)
		loaded=$(median_rtt -Q 0xb8) || loaded=
		t1=$(date +%s.%N); d1=$(departed s1)
		backlog=$(ctl show sched subscriber s1 json | tr -d '[:space:]' | grep -o '"backlog_packets":[0-9]*' | cut -d: -f2)
		wait "$client"
		bound=$(awk -v i="$idle" 'BEGIN { printf "%.3f", i + 1514 * 8 / 20e6 * 1000 + 1 }')
		echo "ef attempt $attempt: EF ping median idle ${idle} ms, s1 saturated (departing" \
			"$(mbit $((d1 - d0)) "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')") Mbit/s meanwhile," \
			"${backlog:-?} packets queued after, goodput $(goodput "$tmp/client-5201") Mbit/s) ${loaded:-lost} ms," \
			"bound ${bound} ms"
		if [ -n "$loaded" ] && [ "${backlog:-0}" -gt 0 ] && awk -v l="$loaded" -v b="$bound" 'BEGIN { exit !(l <= b) }'; then
			ok=1
			break
		fi
	done
	[ -n "$ok" ] || fail "EF pings inside a saturated subscriber: ${loaded:-lost} ms, bound ${bound:-?} ms"
}

# The port's sums in the stats segment, traffic stopped: as the CLI says.
check_statseg() {
	local cli seg
	sleep 0.5 # past an update of the segment (every 100 ms)
	cli=$(ctl show sched subscriber json | tr -d '[:space:]' | grep -o '"departed_bytes":[0-9.e+]*' | head -1 |
		cut -d: -f2 | awk '{ printf "%.0f", $1 }')
	seg=$(timeout 10 "$sluice_stats" -s "$tmp/stats.sock" dump '/sched/if/hqos/departed-bytes*' |
		awk '$1 ~ /\[b\]/ { print $2 }')
	echo "stats segment: /sched/if/hqos/departed-bytes[b] ${seg:-?}, show sched subscriber: ${cli:-?}"
	[ -n "$seg" ] && [ "$seg" = "$cli" ] && [ "$seg" -gt 0 ] || fail "stats segment ${seg:-?} != CLI ${cli:-?}"
}

check_both
check_borrow
check_ef
check_statseg
ctl show errors > "$tmp/errors" 2>&1 && grep -E "subscriber|held" "$tmp/errors"
netns_stop_sluice
echo "PASS"
exit 0
