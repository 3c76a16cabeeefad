#!/bin/bash
# sluice as a dual-stack router for real Linux hosts, and its Neighbor
# Discovery seen from them:
#   host A 2001:db8:1::2 10.71.1.2 --[a 2001:db8:1::1 10.71.1.1  sluice  b 2001:db8:2::1 10.71.2.1]-- host B 2001:db8:2::2 10.71.2.2
#                                          c 2001:db8:3::1 (MTU 1280) -- host C 2001:db8:3::2 (MTU 1280)
# af-packet on the root-namespace veth ends. Expects:
#   - traceroute6 from A to B: hop 1 is sluice's 2001:db8:1::1 (its Time
#     Exceeded), hop 2 is B;
#   - tracepath -6 from A to C discovers pmtu 1280 from sluice's Packet
#     Too Big (A's own link is 1500);
#   - rdisc6 on C reads sluice's RA with the M and O flags and an RDNSS
#     option (`ip6 nd interface c ra ... managed other rdnss`);
#   - at the same time through a and b: ping and ping -6 A->B, every
#     request answered, and an iperf3 TCP stream (100 Mbit/s) each over
#     IPv4 and IPv6; with the short ND timings below, sluice's entry for B
#     meanwhile cycles REACHABLE, STALE, DELAY, PROBE, REACHABLE (counted);
#   - B stops answering for 2001:db8:2::2 (the address removed): sluice's
#     entry goes STALE, DELAY, PROBE, is deleted, resolution fails, and
#     A's ping -6 gets sluice's "Destination unreachable: Address
#     unreachable";
# ND timings: `set ip6 neighbor-config reachable 1000 delay 500 retrans
# 300` (ms) so that all this takes seconds, not a minute.
#   - sluice exits 0 with every buffer returned.
# Needs root, ip, ping, iperf3, traceroute6 (ndisc6 or traceroute),
# tracepath (iputils-tracepath): scripts/deps.sh test. Names carry the
# PID; the trap removes namespaces, veths, iperf3 and sluice even on
# failure; every wait is bounded. About 25 s.
#
#   ip6_nd_netns.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-ip6nd-a-$id
ns_b=sluice-ip6nd-b-$id
ns_c=sluice-ip6nd-c-$id
if_a=i6na$id
if_b=i6nb$id
if_c=i6nc$id
host_a=i6na${id}h
host_b=i6nb${id}h
host_c=i6nc${id}h
tmp=$(mktemp -d /tmp/sluice-ip6nd-XXXXXX)
iperf4_pid=
. "$(dirname "$0")/../lib/netns.sh"
cleanup_c() {
	[ -n "$iperf4_pid" ] && kill -KILL "$iperf4_pid" 2>/dev/null
	ip netns del "$ns_c" 2>/dev/null
	ip link del "$if_c" 2>/dev/null
	netns_cleanup
}
trap cleanup_c EXIT
netns_preflight ip ping iperf3 timeout traceroute6 tracepath rdisc6 python3
netns_make_pairs
ip netns add "$ns_c" || fail "ip netns add $ns_c"
ip link add "$if_c" mtu 1280 type veth peer name "$host_c" netns "$ns_c" || fail "veth $if_c"
echo 1 > "/proc/sys/net/ipv6/conf/$if_c/disable_ipv6" || fail "disable IPv6 on $if_c"
ip link set "$if_c" up || fail "$if_c up"

host() { # ns ifname v6 v6gw [v4 v4gw]
	ip netns exec "$1" sh -c "ip link set lo up &&
		echo 0 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		echo 0 > /proc/sys/net/ipv6/conf/$2/accept_dad &&
		ip -6 addr add $3/64 dev $2 nodad && ip link set $2 up &&
		ip -6 route add default via $4 dev $2" || fail "host $3"
	if [ $# -ge 6 ]; then
		ip netns exec "$1" sh -c "ip addr add $5/24 dev $2 && ip route add default via $6" || fail "host $5"
	fi
	ip netns exec "$1" ethtool -K "$2" tso off gso off gro off > /dev/null 2>&1 || true
}
host "$ns_a" "$host_a" 2001:db8:1::2 2001:db8:1::1 10.71.1.2 10.71.1.1
host "$ns_b" "$host_b" 2001:db8:2::2 2001:db8:2::1 10.71.2.2 10.71.2.1
host "$ns_c" "$host_c" 2001:db8:3::2 2001:db8:3::1

cat > "$tmp/setup.cli" <<CLI
set interface ip address a 10.71.1.1/24
set interface ip address b 10.71.2.1/24
set interface ip address a 2001:db8:1::1/64
set interface ip address b 2001:db8:2::1/64
set interface ip address c 2001:db8:3::1/64
set ip6 neighbor-config reachable 1000 delay 500 retrans 300
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
  c { driver af-packet  host-if $if_c }
}
CONF
netns_start_sluice
ctl show interface json > "$tmp/if.json" || fail "show interface"
python3 -c 'import json,sys
d = json.load(open(sys.argv[1]))
ifs = d["interfaces"] if isinstance(d, dict) else d
m = {i["name"]: i["mtu"] for i in ifs}
sys.exit(not (m.get("c") == 1280 and m.get("a") == 1500))' "$tmp/if.json" ||
	{ cat "$tmp/if.json" >&2; fail "interface MTUs (c 1280, a 1500)"; }

# Warm-up: sluice resolves B and C (packets held meanwhile), A learns sluice.
for dst in 2001:db8:2::2 2001:db8:3::2 10.71.2.2; do
	timeout 10 ip netns exec "$ns_a" ping -c 2 -i 0.3 -W 2 "$dst" > /dev/null 2>&1 || fail "warm-up ping $dst"
done

# ---- traceroute6: sluice is hop 1 ----
timeout 30 ip netns exec "$ns_a" traceroute6 -n -q 1 -w 2 -m 4 2001:db8:2::2 > "$tmp/tr" 2>&1 ||
	{ cat "$tmp/tr" >&2; fail "traceroute6"; }
cat "$tmp/tr"
grep -Eq "^ *1 +.*2001:db8:1::1" "$tmp/tr" || fail "traceroute6: hop 1 is not sluice's 2001:db8:1::1"
grep -Eq "^ *2 +.*2001:db8:2::2" "$tmp/tr" || fail "traceroute6: hop 2 is not B"

# ---- tracepath -6: the MTU of C's link from sluice's Packet Too Big ----
timeout 30 ip netns exec "$ns_a" tracepath -6 -n -m 4 2001:db8:3::2 > "$tmp/tp" 2>&1
cat "$tmp/tp"
grep -q "pmtu 1280" "$tmp/tp" || fail "tracepath -6: no pmtu 1280"
grep -Eq "^ *1\??: +2001:db8:1::1 " "$tmp/tp" || fail "tracepath -6: hop 1 is not sluice"
ctl show errors > "$tmp/errors0"
grep -Eq "ip6-rewrite .*over MTU: ICMPv6 packet too big sent" "$tmp/errors0" ||
	grep -q "over MTU: ICMPv6 packet too big sent" "$tmp/errors0" || fail "no Packet Too Big counted"

# ---- RA flags and RDNSS, read by rdisc6 on C ----
ctl ip6 nd interface c ra interval 10 managed other rdnss 2001:db8::53 > /dev/null || fail "ip6 nd interface c ra"
timeout 15 ip netns exec "$ns_c" rdisc6 -1 -r 3 -w 2000 "$host_c" > "$tmp/rdisc" 2>&1 ||
	{ cat "$tmp/rdisc" >&2; fail "rdisc6 on C"; }
for want in "Stateful address conf\. *: *Yes" "Stateful other conf\. *: *Yes" "Recursive DNS server *: *2001:db8::53" \
	"DNS server lifetime *: *30 "; do
	grep -Eq "$want" "$tmp/rdisc" || { cat "$tmp/rdisc" >&2; fail "rdisc6: no '$want'"; }
done
echo "rdisc6 on C: M and O set, RDNSS 2001:db8::53 (lifetime 30 s)"
ctl ip6 nd interface c ra off > /dev/null || fail "ra off"

# ---- dual stack at once: pings and iperf3 over IPv4 and IPv6 ----
ip netns exec "$ns_b" timeout 40 iperf3 -s -1 -B 2001:db8:2::2 -p 5461 > /dev/null 2>&1 &
iperf_pid=$!
ip netns exec "$ns_b" timeout 40 iperf3 -s -1 -B 10.71.2.2 -p 5441 > /dev/null 2>&1 &
iperf4_pid=$!
sleep 0.5
timeout 30 ip netns exec "$ns_a" iperf3 -6 -c 2001:db8:2::2 -p 5461 -t 4 -b 100M -J > "$tmp/i6.json" 2>&1 &
c6=$!
timeout 30 ip netns exec "$ns_a" iperf3 -4 -c 10.71.2.2 -p 5441 -t 4 -b 100M -J > "$tmp/i4.json" 2>&1 &
c4=$!
netns_ping_all "$ns_a" 2001:db8:2::2 40 "$tmp/p6" & p6=$!
netns_ping_all "$ns_a" 10.71.2.2 40 "$tmp/p4" & p4=$!
wait "$p6" || { cat "$tmp/p6" >&2; fail "ping -6 during the dual-stack run"; }
wait "$p4" || { cat "$tmp/p4" >&2; fail "ping (IPv4) during the dual-stack run"; }
wait "$c6" || { tail "$tmp/i6.json" >&2; fail "iperf3 -6"; }
wait "$c4" || { tail "$tmp/i4.json" >&2; fail "iperf3 -4"; }
for v in 6 4; do
	python3 -c 'import json,sys
e = json.load(open(sys.argv[1]))["end"]["sum_received"]
print("dual stack: iperf3 -%s TCP %.0f Mbit/s, %d bytes" % (sys.argv[2], e["bits_per_second"] / 1e6, e["bytes"]))
sys.exit(not e["bytes"] > 0)' "$tmp/i$v.json" "$v" || fail "iperf3 -$v: nothing received"
done
echo "dual stack: ping -6 $(grep -c 'ttl=63' "$tmp/p6") and ping $(grep -c 'ttl=63' "$tmp/p4") replies (hop limit/TTL 63)"
ctl show errors > "$tmp/errors1"
for want in "neighbour went STALE" "STALE neighbour used: DELAY" "unicast NS probe sent"; do
	grep -q "$want" "$tmp/errors1" || { grep ip6 "$tmp/errors1" >&2; fail "NUD under traffic: no '$want'"; }
done
wait "$iperf_pid" 2>/dev/null
wait "$iperf4_pid" 2>/dev/null
iperf_pid=
iperf4_pid=

# ---- a neighbour that stops answering: Address unreachable ----
ctl show ip6 neighbors json > "$tmp/n0.json" || fail "show ip6 neighbors json"
python3 -c 'import json,sys
n = [x for x in json.load(open(sys.argv[1]))["neighbors"] if x["address"] == "2001:db8:2::2"]
sys.exit(not (len(n) == 1 and n[0]["state"] in ("reachable", "stale", "delay", "probe") and n[0]["mac"]))' \
	"$tmp/n0.json" || { cat "$tmp/n0.json" >&2; fail "B not in show ip6 neighbors"; }
ip netns exec "$ns_b" ip -6 addr del 2001:db8:2::2/64 dev "$host_b" || fail "remove B's address"
timeout 30 ip netns exec "$ns_a" ping -6 -c 12 -i 0.5 -W 1 2001:db8:2::2 > "$tmp/pu" 2>&1
grep -q "From 2001:db8:1::1 .*Destination unreachable: Address unreachable" "$tmp/pu" ||
	{ cat "$tmp/pu" >&2; ctl show ip6 neighbors >&2; ctl show errors >&2; fail "no Address unreachable from sluice"; }
echo "ping -6 to a silent neighbour: $(grep -m1 'Address unreachable' "$tmp/pu")"
ctl show errors > "$tmp/errors"
for want in "unicast NS probe sent" "neighbour unreachable: probes unanswered" "address resolution failed" \
	"held packet: ICMPv6 address unreachable sent"; do
	grep -q "$want" "$tmp/errors" || { grep -E "ip6" "$tmp/errors" >&2; fail "show errors: no '$want'"; }
done
grep -E "ip6-nd-timer|ip6-glean" "$tmp/errors"

netns_stop_sluice
echo "PASS"
exit 0
