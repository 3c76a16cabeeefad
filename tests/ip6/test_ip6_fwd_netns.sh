#!/bin/bash
# sluice routing IPv6 between two Linux hosts in namespaces:
#   host A 2001:db8:1::2/64 --veth-- [a 2001:db8:1::1/64  sluice  b 2001:db8:2::1/64] --veth-- host B 2001:db8:2::2/64
#                                                                              B also holds 2001:db8:9::1 (lo)
# af-packet on the root-namespace ends. The hosts' default routes point at
# sluice; sluice routes 2001:db8:9::/48 via B (`ip route add`). Expects:
#   - A pings B and 2001:db8:9::1 across sluice, every request answered
#     (after a warm-up: the first packets to an unresolved next hop are
#     dropped while sluice's NS resolves it), replies with hop limit 63
#     (B's 64 less sluice's one), and B sees A's echo requests with hop
#     limit 63 too (tcpdump on B: decremented once on the way out);
#   - `show ip6 fib` lists the local, connected, host and /48 routes, its
#     json the /48 via 2001:db8:2::2 resolved; `ip route del` removes it,
#     and A's ping then gets sluice's Destination Unreachable, No route;
#   - a 3 s TCP iperf3 -6 from A to B completes with bytes received;
#   - a bad route command prints usage and changes nothing;
#   - sluice exits 0 with every buffer returned.
# Needs root, ip, ping, iperf3, tcpdump (scripts/deps.sh test). Names carry the PID;
# the trap removes namespaces, veths, iperf3 and sluice even on failure;
# every wait is bounded.
#
#   test_ip6_fwd_netns.sh SLUICE SLUICECTL
set -u
sluicectl=$2
sluice=$1
id=$$
ns_a=sluice-ip6f-a-$id
ns_b=sluice-ip6f-b-$id
if_a=i6fa$id
if_b=i6fb$id
host_a=i6fa${id}h
host_b=i6fb${id}h
tmp=$(mktemp -d /tmp/sluice-ip6f-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping iperf3 tcpdump timeout
netns_make_pairs
# IPv6 on the hosts (netns_make_pairs leaves it off), no DAD delay, no
# offloads bigger than the MTU (GSO/TSO frames would meet sluice's MTU check).
v6host() { # ns ifname address gateway [extra]
	ip netns exec "$1" sh -c "ip link set lo up &&
		echo 0 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		echo 0 > /proc/sys/net/ipv6/conf/$2/accept_dad &&
		ip -6 addr add $3/64 dev $2 nodad && ip link set $2 up &&
		ip -6 route add default via $4 dev $2" || fail "host $3"
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off > /dev/null 2>&1 || true
}
v6host "$ns_a" "$host_a" 2001:db8:1::2 2001:db8:1::1
v6host "$ns_b" "$host_b" 2001:db8:2::2 2001:db8:2::1
ip netns exec "$ns_b" ip -6 addr add 2001:db8:9::1/128 dev lo || fail "B's 2001:db8:9::1"

cat > "$tmp/setup.cli" <<CLI
set interface ip address b 2001:db8:2::1/64
ip route add 2001:db8:9::/48 via 2001:db8:2::2
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a  ip6-address 2001:db8:1::1/64 }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice

# ---- a bad route: usage, nothing changed ----
ctl show ip6 fib > "$tmp/fib0" || fail "show ip6 fib"
ctl ip route add 2001:db8:7::/48 via 2001:db8:77::2 > "$tmp/bad" 2>&1 && fail "took an off-link next hop"
ctl ip route add 2001:db8:7::/129 via 2001:db8:2::2 > "$tmp/bad2" 2>&1 && fail "took a /129"
grep -q "X:X::X:X/L via X:X::X:X" "$tmp/bad2" || { cat "$tmp/bad2" >&2; fail "no usage for /129"; }
ctl show ip6 fib > "$tmp/fib1"
cmp -s "$tmp/fib0" "$tmp/fib1" || fail "a bad command changed the FIB"

# ---- ping -6 across (warm-up first: sluice resolves B by NS) ----
for dst in 2001:db8:2::2 2001:db8:9::1; do
	timeout 10 ip netns exec "$ns_a" ping -6 -c 3 -i 0.3 -W 1 "$dst" > /dev/null 2>&1
	netns_ping_all "$ns_a" "$dst" 10 "$tmp/ping" || { cat "$tmp/ping" >&2; ctl show errors >&2; fail "ping $dst"; }
	grep -q "icmp_seq=1 ttl=63 " "$tmp/ping" || { cat "$tmp/ping" >&2; fail "$dst: hop limit not 63"; }
	echo "ping -6 $dst: $(grep -c 'ttl=63' "$tmp/ping") replies with hop limit 63; $(grep rtt "$tmp/ping")"
done

# ---- the hop limit the far host sees: A's 64 less sluice's one ----
ip netns exec "$ns_b" timeout 10 tcpdump -l -nn -v -c 1 -i "$host_b" 'icmp6 and ip6[40] == 128' \
	> "$tmp/dump" 2> "$tmp/dump.err" &
dump_pid=$!
for _ in $(seq 50); do grep -q "listening on" "$tmp/dump.err" && break; sleep 0.1; done
timeout 10 ip netns exec "$ns_a" ping -6 -c 3 -i 0.3 -W 1 2001:db8:2::2 > /dev/null 2>&1
wait "$dump_pid"
dump_pid=
grep -q "hlim 63," "$tmp/dump" || { cat "$tmp/dump" "$tmp/dump.err" >&2; fail "B saw an echo request without hop limit 63"; }
echo "B sees A's echo requests with hop limit 63"

# ---- the FIB ----
ctl show ip6 fib > "$tmp/fib" || fail "show ip6 fib"
cat "$tmp/fib"
for want in "2001:db8:1::1/128 .* local" "2001:db8:1::/64 .* glean" "2001:db8:2::2/128 .* rewrite .*resolved" \
	"2001:db8:9::/48 .* rewrite +2001:db8:2::2 +b +1 +resolved +cli"; do
	grep -Eq "$want" "$tmp/fib" || fail "show ip6 fib: no '$want'"
done
ctl show ip6 fib 2001:db8:9::42 json > "$tmp/fib.json" || fail "show ip6 fib json"
python3 -c 'import json,sys
r = json.load(open(sys.argv[1]))["routes"]
sys.exit(not (len(r) == 1 and r[0]["prefix"] == "2001:db8:9::/48" and r[0]["next_hop"] == "2001:db8:2::2"
              and r[0]["interface"] == "b" and r[0]["rewrite"] == "resolved"))' "$tmp/fib.json" ||
	{ cat "$tmp/fib.json" >&2; fail "show ip6 fib json"; }

# ---- iperf3 -6 TCP across ----
ip netns exec "$ns_b" timeout 30 iperf3 -s -1 -B 2001:db8:2::2 -p 5399 > /dev/null 2>&1 &
iperf_pid=$!
sleep 0.5
timeout 25 ip netns exec "$ns_a" iperf3 -6 -c 2001:db8:2::2 -p 5399 -t 3 -J > "$tmp/iperf.json" 2>&1 ||
	{ tail -20 "$tmp/iperf.json" >&2; ctl show errors >&2; fail "iperf3 -6"; }
python3 -c 'import json,sys
e = json.load(open(sys.argv[1]))["end"]["sum_received"]
print("iperf3 -6 TCP: %.0f Mbit/s, %d bytes" % (e["bits_per_second"] / 1e6, e["bytes"]))
sys.exit(not e["bytes"] > 0)' "$tmp/iperf.json" || fail "iperf3 -6: nothing received"
wait "$iperf_pid" 2>/dev/null
iperf_pid=

# ---- ip route del: no route ----
ctl ip route del 2001:db8:9::/48 > /dev/null || fail "ip route del"
timeout 10 ip netns exec "$ns_a" ping -6 -c 2 -i 0.2 -W 1 2001:db8:9::1 > "$tmp/ping_gone" 2>&1 &&
	fail "2001:db8:9::1 still answered without its route"
grep -q "From 2001:db8:1::1 .*Destination unreachable: No route" "$tmp/ping_gone" ||
	{ cat "$tmp/ping_gone" >&2; fail "no ICMPv6 destination unreachable (no route) from sluice"; }
echo "ping -6 2001:db8:9::1 without its route: $(grep -m1 'Destination unreachable' "$tmp/ping_gone")"
ctl show errors > "$tmp/errors" 2>&1
grep -E "ip6|icmp6" "$tmp/errors"
grep -Eq "ip6-lookup +no route" "$tmp/errors" || grep -q "no route" "$tmp/errors" || fail "no 'no route' count"

netns_stop_sluice
echo "PASS"
exit 0
