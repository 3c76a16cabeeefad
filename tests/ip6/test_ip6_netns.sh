#!/bin/bash
# sluice's IPv6 host side against a real Linux host in a namespace:
#   host A 2001:db8:1::2/64 --veth-- [a 2001:db8:1::1/64  sluice  b (enable ip6: link-local only)]
# af-packet on the root-namespace end; a's address from its interface
# block (`ip6-address`), one more added and removed by the CLI.
# Linux resolves sluice with its own Neighbor Solicitations. Expects:
#   - A pings 2001:db8:1::1 and sluice's link-local address (EUI-64 of
#     a's MAC, as `show ip6 interface json` says) with every request answered;
#   - ndisc6 from A gets sluice's MAC for 2001:db8:1::1 and for the
#     link-local address;
#   - `show ip6 neighbors [json]` lists A (learnt from its solicitations);
#   - a bad prefix (/129) prints usage and changes nothing;
#   - sluice exits 0 with every buffer returned.
# Needs root, ip, ping, ndisc6 (scripts/deps.sh test). Names carry the PID;
# the trap removes namespaces, veths and sluice even on failure; every wait
# is bounded.
#
#   test_ip6_netns.sh SLUICE SLUICECTL
set -u
sluicectl=$2
sluice=$1
id=$$
ns_a=sluice-ip6-a-$id
ns_b=sluice-ip6-b-$id
if_a=ip6a$id
if_b=ip6b$id
host_a=ip6a${id}h
host_b=ip6b${id}h
tmp=$(mktemp -d /tmp/sluice-ip6-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping ndisc6 timeout
netns_make_pairs
# Host A with IPv6 (netns_make_pairs leaves it off), no DAD delay.
ip netns exec "$ns_a" sh -c "ip link set lo up &&
	echo 0 > /proc/sys/net/ipv6/conf/$host_a/disable_ipv6 &&
	echo 0 > /proc/sys/net/ipv6/conf/$host_a/accept_dad &&
	ip -6 addr add 2001:db8:1::2/64 dev $host_a nodad && ip link set $host_a up" || fail "host A"

cat > "$tmp/setup.cli" <<CLI
set interface ip address a 2001:db8:5::1/64
enable ip6 interface b
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a  ip6-address 2001:db8:1::1/64 }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice
ctl show ip6 interface > "$tmp/show" || fail "sluicectl show ip6 interface"
cat "$tmp/show"
grep -q "2001:db8:1::1/64 2001:db8:5::1/64" "$tmp/show" || fail "addresses not set"
ctl set interface ip address del a 2001:db8:5::1/64 > /dev/null || fail "address del"
ctl show ip6 interface > "$tmp/show" || fail "sluicectl show ip6 interface"
grep -q "2001:db8:5::1" "$tmp/show" && fail "2001:db8:5::1 still there"
grep -Eq "^b .* on +fe80::" "$tmp/show" || { cat "$tmp/show" >&2; fail "b not enabled with a link-local address"; }
ctl show ip6 interface json > "$tmp/json" || fail "show ip6 interface json"
ll=$(python3 -c 'import json,sys; print([i for i in json.load(open(sys.argv[1]))["interfaces"] if i["name"]=="a"][0]["link_local"])' "$tmp/json")
mac=$(python3 -c 'import json,sys; print([i for i in json.load(open(sys.argv[1]))["interfaces"] if i["name"]=="a"][0]["mac"])' "$tmp/json")
echo "sluice a: $mac $ll"
[[ "$ll" == fe80::* ]] || fail "no link-local address on a"

# ---- a bad prefix: usage, nothing changed ----
ctl set interface ip address a 2001:db8:7::1/129 > "$tmp/bad" 2>&1 && fail "took a /129"
grep -q "X:X::X:X/L" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "no usage for /129"; }
ctl show ip6 interface > "$tmp/show2"
cmp -s "$tmp/show" "$tmp/show2" || fail "a bad command changed the interfaces"

# ---- ping -6: the global and the link-local address ----
netns_ping_all "$ns_a" 2001:db8:1::1 10 "$tmp/ping" || { cat "$tmp/ping" >&2; ctl show errors >&2; fail "ping 2001:db8:1::1"; }
echo "ping 2001:db8:1::1: $(grep rtt "$tmp/ping")"
netns_ping_all "$ns_a" "$ll%$host_a" 5 "$tmp/ping_ll" || { cat "$tmp/ping_ll" >&2; fail "ping $ll"; }
echo "ping $ll: $(grep rtt "$tmp/ping_ll")"

# ---- ndisc6: sluice's MAC for both ----
for target in 2001:db8:1::1 "$ll"; do
	timeout 10 ip netns exec "$ns_a" ndisc6 -r 3 -w 1000 "$target" "$host_a" > "$tmp/ndisc" 2>&1 ||
		{ cat "$tmp/ndisc" >&2; fail "ndisc6 $target"; }
	grep -iq "Target link-layer address: $mac" "$tmp/ndisc" || { cat "$tmp/ndisc" >&2; fail "ndisc6 $target: not $mac"; }
	echo "ndisc6 $target: $(grep -i 'Target link-layer' "$tmp/ndisc")"
done

# ---- the neighbour sluice learnt ----
ctl show ip6 neighbors > "$tmp/nbr"
cat "$tmp/nbr"
host_mac=$(ip netns exec "$ns_a" cat "/sys/class/net/$host_a/address")
grep -q "2001:db8:1::2 .*$host_mac" "$tmp/nbr" || fail "host A not in show ip6 neighbors"
ctl show ip6 neighbors json > "$tmp/nbr.json" || fail "show ip6 neighbors json"
python3 -c 'import json,sys
n = [e for e in json.load(open(sys.argv[1]))["neighbors"] if e["address"] == "2001:db8:1::2"]
sys.exit(not (len(n) == 1 and n[0]["mac"] == sys.argv[2] and n[0]["interface"] == "a"))' "$tmp/nbr.json" "$host_mac" ||
	{ cat "$tmp/nbr.json" >&2; fail "show ip6 neighbors json: host A"; }
ctl show errors > "$tmp/errors" 2>&1 && grep -E "ip6|icmp6" "$tmp/errors"

netns_stop_sluice
echo "PASS"
exit 0
