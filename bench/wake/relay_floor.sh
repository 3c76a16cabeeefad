#!/bin/bash
# A ping's round trip across sluice, across the Linux kernel routing between
# veths, and across the least a user-space forwarder woken per frame can do
# (bench/wake/relay.c: poll, recv, send), on the same kind of veths in one
# run: a diagnostic beside bench/wake (docs/power.md, "Where a ping's round
# trip goes"). Not a comparison row: it prints one table.
#
#   bench/wake/relay_floor.sh SLUICE SLUICECTL RELAY [CPU-LINES]
#
# sluice routes A 10.1.0.2 -> a | sluice | b -> B 10.2.0.2 over af-packet
# (tests/lib/netns.sh); the relay forwards frames between the same two veth
# ends at layer 2 for a second subnet on the same hosts (A 10.3.0.2, B
# 10.3.0.3), pinned to sluice's thread 0's core (0); the kernel routes in a
# namespace of its own (A2 -> R -> B2). ROUNDS rounds (default 3), each
# kernel, relay, sluice in turn, PINGS pings (default 40) at 20/s; prints
# each round's medians and their ratios to the kernel's.
# Needs root, ip, ping, taskset.
set -u
sluice=$1
sluicectl=$2
relay=$3
cpu_lines=${4:-"cpu { rx-mode adaptive }"}
PINGS=${PINGS:-40}
ROUNDS=${ROUNDS:-3}
. "$(dirname "$0")/../../tests/lib/netns.sh"
netns_names rlyfl
ns_r=sluice-rlyfl-r-$$
ns_a2=sluice-rlyfl-a2-$$
ns_b2=sluice-rlyfl-b2-$$
relay_pid=
cleanup() {
	[ -z "$relay_pid" ] || kill -KILL "$relay_pid" 2>/dev/null
	for ns in "$ns_r" "$ns_a2" "$ns_b2"; do ip netns del "$ns" 2>/dev/null; done
	netns_cleanup
}
trap cleanup EXIT
netns_preflight ip ping taskset

netns_make_pairs
netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
ip -n "$ns_a" addr add 10.3.0.2/24 dev "$host_a" || fail "relay subnet in A"
ip -n "$ns_b" addr add 10.3.0.3/24 dev "$host_b" || fail "relay subnet in B"
printf 'set interface ip address a 10.1.0.1/24\nset interface ip address b 10.2.0.1/24\n' > "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
$cpu_lines
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF

ip netns add "$ns_r" && ip netns add "$ns_a2" && ip netns add "$ns_b2" || fail "kernel router namespaces"
ip link add "rfa$$" netns "$ns_r" type veth peer name "rfa$$h" netns "$ns_a2" || fail "veth rfa"
ip link add "rfb$$" netns "$ns_r" type veth peer name "rfb$$h" netns "$ns_b2" || fail "veth rfb"
ip netns exec "$ns_r" sh -c "sysctl -qw net.ipv4.ip_forward=1 &&
	ip addr add 10.1.0.1/24 dev rfa$$ && ip link set rfa$$ up &&
	ip addr add 10.2.0.1/24 dev rfb$$ && ip link set rfb$$ up" || fail "kernel router"
netns_setup_host "$ns_a2" "rfa$$h" 10.1.0.2 10.1.0.1
netns_setup_host "$ns_b2" "rfb$$h" 10.2.0.2 10.2.0.1

# median_rtt NS DST: PINGS pings at 20/s after 3 of warm-up; median RTT in us.
median_rtt() {
	ip netns exec "$1" ping -c 3 -i 0.2 -W 1 "$2" > /dev/null 2>&1
	timeout 30 ip netns exec "$1" ping -c "$PINGS" -i 0.05 -W 1 "$2" 2>&1 |
		sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' | sort -n |
		awk '{ v[NR] = $1 * 1000 } END { if (NR < 2) print -1; else printf "%d\n", v[int((NR + 1) / 2)] }'
}

echo "relay floor: $cpu_lines; $PINGS pings at 20/s a round; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %10s %10s %10s %14s %14s\n' round kernel relay sluice relay/kernel sluice/kernel
for r in $(seq "$ROUNDS"); do
	k=$(median_rtt "$ns_a2" 10.2.0.2)
	taskset -c 0 "$relay" "$if_a" "$if_b" 2> "$tmp/relay.err" &
	relay_pid=$!
	sleep 0.3
	kill -0 "$relay_pid" 2>/dev/null || fail "relay: $(cat "$tmp/relay.err")"
	y=$(median_rtt "$ns_a" 10.3.0.3)
	kill -KILL "$relay_pid"
	wait "$relay_pid" 2>/dev/null
	relay_pid=
	# sluice's MAC on a and b is new each start: A and B ask again.
	ip -n "$ns_a" neigh flush all
	ip -n "$ns_b" neigh flush all
	netns_start_sluice
	s=$(median_rtt "$ns_a" 10.2.0.2)
	netns_stop_sluice
	printf '%-6s %10s %10s %10s %14s %14s\n' "$r" "$k" "$y" "$s" \
		"$(awk -v a="$y" -v b="$k" 'BEGIN { printf "%.2f", a / b }')" \
		"$(awk -v a="$s" -v b="$k" 'BEGIN { printf "%.2f", a / b }')"
done
echo "load at the end $(cut -d' ' -f1-3 /proc/loadavg)"
