#!/bin/bash
# sluice's Router Advertisements against a real Linux host in a namespace:
#   host A (accept_ra=2, autoconf=1) --veth-- [a 2001:db8:1::1/64  sluice
#                                 b 2001:db8:2::1/64] --veth-- host B 2001:db8:2::2
# af-packet on the root-namespace end; RAs on a from its interface block
# (`ip6-ra "interval 10"`), the prefix the address's /64. Expects:
#   - rdisc6 from A gets sluice's RA: from its link-local address, with
#     its MAC, router lifetime 1800, MTU 1500 and prefix 2001:db8:1::/64;
#   - A forms a SLAAC address in 2001:db8:1::/64 and a default route via
#     sluice's link-local address (each within 15 s), and pings
#     2001:db8:1::1 from that address, then host B across sluice on the
#     default route the RA gave it (every echo answered: the first waits
#     in sluice's ND hold, none is lost);
#   - `show ip6 nd json` counts RAs sent and solicitations received;
#   - DAD: no address duplicated, then one that host A holds too is shown
#     "(duplicate)" once sluice adds it (Linux defends it with an NA);
#   - a bad interval prints usage and changes nothing; `ra off` stops them;
#   - sluice exits 0 with every buffer returned.
# Needs root, ip, ping, rdisc6 (ndisc6, scripts/deps.sh test). Names carry
# the PID; the trap removes namespaces, veths and sluice even on failure;
# every wait is bounded.
#
#   test_ip6_ra_netns.sh SLUICE SLUICECTL
set -u
sluicectl=$2
sluice=$1
id=$$
ns_a=sluice-ra-a-$id
ns_b=sluice-ra-b-$id
if_a=ra6a$id
if_b=ra6b$id
host_a=ra6a${id}h
host_b=ra6b${id}h
tmp=$(mktemp -d /tmp/sluice-ra-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping rdisc6 timeout python3
netns_make_pairs

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
interfaces {
  a { driver af-packet  host-if $if_a  ip6-address 2001:db8:1::1/64  ip6-ra "interval 10" }
  b { driver af-packet  host-if $if_b  ip6-address 2001:db8:2::1/64 }
}
CONF
netns_start_sluice
ctl show ip6 interface json > "$tmp/json" || fail "show ip6 interface json"
ll=$(python3 -c 'import json,sys; print([i for i in json.load(open(sys.argv[1]))["interfaces"] if i["name"]=="a"][0]["link_local"])' "$tmp/json")
mac=$(python3 -c 'import json,sys; print([i for i in json.load(open(sys.argv[1]))["interfaces"] if i["name"]=="a"][0]["mac"])' "$tmp/json")
echo "sluice a: $mac $ll"

# Host A takes RAs (accept_ra=2: even if forwarding were on) and forms
# addresses from them; no DAD delay. Its link comes up last, so its own
# Router Solicitations find sluice advertising.
ip netns exec "$ns_a" sh -c "ip link set lo up &&
	echo 0 > /proc/sys/net/ipv6/conf/$host_a/disable_ipv6 &&
	echo 0 > /proc/sys/net/ipv6/conf/$host_a/accept_dad &&
	echo 2 > /proc/sys/net/ipv6/conf/$host_a/accept_ra &&
	echo 1 > /proc/sys/net/ipv6/conf/$host_a/autoconf &&
	ip link set $host_a up" || fail "host A"

# ---- rdisc6: the RA's fields ----
timeout 20 ip netns exec "$ns_a" rdisc6 -r 4 -w 2000 "$host_a" > "$tmp/rdisc" 2>&1 ||
	{ cat "$tmp/rdisc" >&2; ctl show errors >&2; fail "rdisc6: no RA"; }
cat "$tmp/rdisc"
grep -Eq "Router lifetime +: +1800" "$tmp/rdisc" || fail "rdisc6: router lifetime not 1800"
grep -Eq "Prefix +: 2001:db8:1::/64" "$tmp/rdisc" || fail "rdisc6: no prefix 2001:db8:1::/64"
grep -Eq "MTU +: +1500" "$tmp/rdisc" || fail "rdisc6: no MTU 1500"
grep -iq "Source link-layer address: $mac" "$tmp/rdisc" || fail "rdisc6: source link-layer not $mac"
grep -q "from $ll" "$tmp/rdisc" || fail "rdisc6: not from $ll"

# ---- SLAAC: an address in the prefix, a default route via sluice ----
slaac=
for _ in $(seq 150); do
	slaac=$(ip netns exec "$ns_a" ip -6 -o addr show dev "$host_a" scope global |
		grep -o '2001:db8:1:[0-9a-f:]*' | head -1)
	[ -n "$slaac" ] && break
	sleep 0.1
done
[ -n "$slaac" ] || { ip netns exec "$ns_a" ip -6 addr >&2; fail "no SLAAC address within 15 s"; }
echo "host A SLAAC address: $slaac"
route=
for _ in $(seq 150); do
	route=$(ip netns exec "$ns_a" ip -6 route show default)
	echo "$route" | grep -q "via $ll dev $host_a" && break
	sleep 0.1
done
echo "$route" | grep -q "via $ll dev $host_a" ||
	{ echo "$route" >&2; fail "no default route via $ll within 15 s"; }
echo "host A: $route"

timeout 30 ip netns exec "$ns_a" ping -6 -c 5 -i 0.05 -W 2 -w 15 -I "$slaac" 2001:db8:1::1 > "$tmp/ping" 2>&1
for s in 1 2 3 4 5; do
	grep -q "icmp_seq=$s ttl=" "$tmp/ping" || { cat "$tmp/ping" >&2; fail "ping 2001:db8:1::1 from $slaac"; }
done
echo "ping from $slaac: $(grep rtt "$tmp/ping")"

# ---- across sluice: host B behind b, reached on the RA's default route ----
ip netns exec "$ns_b" sh -c "ip link set lo up &&
	echo 0 > /proc/sys/net/ipv6/conf/$host_b/disable_ipv6 &&
	echo 0 > /proc/sys/net/ipv6/conf/$host_b/accept_dad &&
	ip link set $host_b up && ip -6 addr add 2001:db8:2::2/64 dev $host_b nodad &&
	ip -6 route add default via 2001:db8:2::1" || fail "host B"
timeout 30 ip netns exec "$ns_a" ping -6 -c 5 -i 0.05 -W 2 -w 15 -I "$slaac" 2001:db8:2::2 > "$tmp/ping2" 2>&1
for s in 1 2 3 4 5; do
	grep -q "icmp_seq=$s ttl=63" "$tmp/ping2" ||
		{ cat "$tmp/ping2" >&2; ctl show errors >&2; fail "ping 2001:db8:2::2 across sluice from $slaac"; }
done
echo "ping across sluice from $slaac: $(grep rtt "$tmp/ping2")"

# ---- show ip6 nd ----
ctl show ip6 nd || fail "show ip6 nd"
ctl show ip6 nd json > "$tmp/nd.json" || fail "show ip6 nd json"
python3 -c 'import json,sys
a = [e for e in json.load(open(sys.argv[1]))["interfaces"] if e["interface"] == "a"][0]
sys.exit(not (a["ra"] and a["interval_s"] == 10 and a["sent"] >= 1 and a["rs_received"] >= 1
	and a["solicited"] >= 1))' "$tmp/nd.json" || { cat "$tmp/nd.json" >&2; fail "show ip6 nd json"; }

# ---- DAD: sluice's addresses were probed; one host A holds is duplicated ----
ctl show ip6 interface json > "$tmp/if.json"
python3 -c 'import json,sys
a = [i for i in json.load(open(sys.argv[1]))["interfaces"] if i["name"] == "a"][0]
sys.exit(a["duplicate_addresses"] != [])' "$tmp/if.json" || { cat "$tmp/if.json" >&2; fail "a duplicate before any"; }
ip netns exec "$ns_a" ip -6 addr add 2001:db8:1::99/64 dev "$host_a" nodad || fail "host A 2001:db8:1::99"
ctl set interface ip address a 2001:db8:1::99/64 > /dev/null || fail "add 2001:db8:1::99"
for _ in $(seq 50); do
	ctl show ip6 interface > "$tmp/if" 2>&1
	grep -q "2001:db8:1::99/64 (duplicate)" "$tmp/if" && break
	sleep 0.1
done
grep -q "2001:db8:1::99/64 (duplicate)" "$tmp/if" || { cat "$tmp/if" >&2; fail "2001:db8:1::99 not duplicate within 5 s"; }
grep "^a " "$tmp/if"

# ---- a bad command changes nothing; off ----
ctl ip6 nd interface a ra interval 2 > "$tmp/bad" 2>&1 && fail "took interval 2"
grep -q "ip6 nd interface NAME ra" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "no usage for interval 2"; }
ctl ip6 nd interface a ra lifetime > "$tmp/bad" 2>&1 && fail "took lifetime without a value"
ctl show ip6 nd json > "$tmp/nd2.json"
python3 -c 'import json,sys
a = [e for e in json.load(open(sys.argv[1]))["interfaces"] if e["interface"] == "a"][0]
sys.exit(not (a["ra"] and a["interval_s"] == 10))' "$tmp/nd2.json" || fail "a bad command changed RAs"
ctl ip6 nd interface a ra off > /dev/null || fail "ra off"
ctl show ip6 nd > "$tmp/off"
grep -Eq "^a +off" "$tmp/off" || { cat "$tmp/off" >&2; fail "ra off not shown"; }
ctl show errors > "$tmp/errors" 2>&1 && grep -E "ip6-r[as]|ip6-nd" "$tmp/errors"

netns_stop_sluice
echo "PASS"
exit 0
