#!/bin/bash
# IPv6 routes that refuse, from Linux through linux-cp into sluice's IPv6
# FIB, and what sluice answers with them:
#
#   h1 --veth-- [a  sluice  b 2001:db8:2::1/64] --veth-- h2 2001:db8:2::2/64
#                |TAP
#   ctl: s-eth0 2001:db8:1::1/64, and in its main table
#        blackhole 2001:db8:e1::/48, unreachable 2001:db8:e2::/48,
#        prohibit 2001:db8:e3::/48, 2001:db8:e5::/48 nhid 77 (a blackhole object)
# Expects:
#   - the four in `show ip6 fib json`, source linux/..., kinds blackhole,
#     unreachable, prohibit, blackhole; the first three equal to ctl's
#     kernel table (lcp_fib_equal.py, both sides' types);
#   - h2 pings into each: unreachable -> ICMPv6 Destination Unreachable
#     code 0 ("No route"), prohibit -> code 1 ("Administratively
#     prohibited"), both blackholes -> no answer; ip6-lookup counts each
#     ("unreachable route: ICMPv6 no route sent", "prohibit route: ...",
#     "blackhole route (dropped)") exactly;
#   - the same from sluice's own CLI (`ip route add 2001:db8:e9::/48
#     unreachable|prohibit|drop`, source cli), each replacing the last
#     (and a gateway replacing them), answered so; a bad word changes
#     nothing;
#   - deleted in Linux (and the nexthop object deleted), each is gone from
#     sluice.
# Needs root, ip, ping, python3. The trap removes namespaces, veths and
# sluice even on failure; every wait is bounded. About 10 s.
#
#   test_lcp_reject6.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/netns.sh"
netns_lcp_names rj
trap 'ip netns del "$ns_c" 2>/dev/null; netns_cleanup' EXIT
netns_preflight ip ping timeout python3
netns_make_pairs
ip netns add "$ns_c" || fail "ip netns add $ns_c"
ip -n "$ns_c" link set lo up
ip netns exec "$ns_b" sh -c "sysctl -qw net.ipv6.conf.$host_b.disable_ipv6=0 net.ipv6.conf.$host_b.accept_dad=0 &&
	ip link set lo up && ip addr add 2001:db8:2::2/64 dev $host_b nodad && ip link set $host_b up &&
	ip -6 route add default via 2001:db8:2::1" || fail "h2"

echo "set interface ip address b 2001:db8:2::1/64" > "$tmp/setup.cli"
netns_lcp_conf "exec $tmp/setup.cli" <<CONF
linux-cp {
  default-netns $ns_c
  a { host-if s-eth0 }
}
CONF
echo 0 > "/proc/sys/net/ipv6/conf/$if_b/disable_ipv6" # sluice's port needs no Linux IPv6, but the veth carries it
netns_start_sluice
until_s() { # seconds cmd...: bounded retry, cmd read on each try
	local n=$1 i
	shift
	for i in $(seq $((n * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}
ip -n "$ns_c" addr add 2001:db8:1::1/64 dev s-eth0 nodad || fail "address on s-eth0"
until_s 5 eval 'ctl show ip6 interface | grep -q 2001:db8:1::1/64' || fail "a did not get 2001:db8:1::1/64"

ip -n "$ns_c" -6 route add blackhole 2001:db8:e1::/48 || fail "blackhole route"
ip -n "$ns_c" -6 route add unreachable 2001:db8:e2::/48 || fail "unreachable route"
ip -n "$ns_c" -6 route add prohibit 2001:db8:e3::/48 || fail "prohibit route"

# kind_of PREFIX: the kind and source of PREFIX in show ip6 fib json ("" when absent)
kind_of() {
	ctl show ip6 fib json | python3 -c '
import json, sys
for r in json.load(sys.stdin)["routes"]:
    if r["prefix"] == sys.argv[1]:
        print(r["kind"], r["source"])' "$1"
}
want() { [ "$(kind_of "$1")" = "$2" ]; }
until_s 5 want 2001:db8:e3::/48 "prohibit linux/boot" || { ctl show ip6 fib >&2; ctl show lcp >&2; fail "the prohibit route not in sluice"; }
want 2001:db8:e1::/48 "blackhole linux/boot" || fail "2001:db8:e1::/48: $(kind_of 2001:db8:e1::/48)"
want 2001:db8:e2::/48 "unreachable linux/boot" || fail "2001:db8:e2::/48: $(kind_of 2001:db8:e2::/48)"
ip -6 -j -n "$ns_c" route show table main > "$tmp/kernel.json" || fail "ip -6 -j route"
ctl show ip6 fib json > "$tmp/fib.json" || fail "show ip6 fib json"
python3 "$here/lcp_fib_equal.py" "$tmp/kernel.json" "$tmp/fib.json" || fail "not the kernel's table"

ip -n "$ns_c" -6 nexthop add id 77 blackhole || fail "nexthop 77 blackhole"
ip -n "$ns_c" -6 route add 2001:db8:e5::/48 nhid 77 || fail "route via nhid 77"
until_s 5 want 2001:db8:e5::/48 "blackhole linux/boot" || { ctl show ip6 fib >&2; fail "2001:db8:e5::/48 via the blackhole object: $(kind_of 2001:db8:e5::/48)"; }
ctl show ip6 fib | grep -E "^(Prefix|2001:db8:e)"

# err NAME: ip6-lookup's count of NAME in show errors json (0 when absent)
err() {
	ctl show errors json | python3 -c '
import json, sys
d = json.load(sys.stdin)
rows = d if isinstance(d, list) else d.get("errors", [])
print(sum(int(r.get("count", 0)) for r in rows if r.get("node") == "ip6-lookup" and r.get("reason") == sys.argv[1]))' "$1"
}
ping6() { # destination: one echo request from h2, its output
	timeout 5 ip netns exec "$ns_b" ping -6 -c 1 -W 2 "$1" 2>&1
}
ping6 2001:db8:e2::1 > "$tmp/p2"
grep -qi "unreachable.*no route" "$tmp/p2" || { cat "$tmp/p2" >&2; ctl show errors >&2; fail "unreachable route: no ICMPv6 no route"; }
ping6 2001:db8:e3::1 > "$tmp/p3"
grep -qi "administratively prohibited" "$tmp/p3" || { cat "$tmp/p3" >&2; ctl show errors >&2; fail "prohibit route: no ICMPv6 administratively prohibited"; }
for p in 2001:db8:e1::1 2001:db8:e5::1; do
	ping6 "$p" > "$tmp/p1"
	grep -q "1 packets transmitted, 0 received" "$tmp/p1" || { cat "$tmp/p1" >&2; fail "blackhole $p answered"; }
	grep -qi "unreachable\|prohibited" "$tmp/p1" && { cat "$tmp/p1" >&2; fail "blackhole $p sent an error"; }
done
echo "ping -6 from h2: $(grep -io 'destination unreachable: [a-z ]*' "$tmp/p2" | head -1); $(grep -io 'destination unreachable: [a-z ]*' "$tmp/p3" | head -1); blackholes silent"
# the same kinds from sluice's own CLI (source cli), replacing each other
ctl ip route add 2001:db8:e9::/48 unreachable > /dev/null || fail "ip route add ... unreachable"
want 2001:db8:e9::/48 "unreachable cli" || fail "2001:db8:e9::/48 from the CLI: $(kind_of 2001:db8:e9::/48)"
ping6 2001:db8:e9::1 | grep -qi "unreachable.*no route" || fail "the CLI's unreachable route: no ICMPv6 no route"
ctl ip route add 2001:db8:e9::/48 prohibit > /dev/null || fail "ip route add ... prohibit"
want 2001:db8:e9::/48 "prohibit cli" || fail "2001:db8:e9::/48 replaced: $(kind_of 2001:db8:e9::/48)"
ping6 2001:db8:e9::1 | grep -qi "administratively prohibited" || fail "the CLI's prohibit route: no ICMPv6"
ctl ip route add 2001:db8:e9::/48 via 2001:db8:2::2 > /dev/null || fail "ip route add ... via (replacing prohibit)"
want 2001:db8:e9::/48 "rewrite cli" || fail "2001:db8:e9::/48 via a gateway: $(kind_of 2001:db8:e9::/48)"
ctl ip route add 2001:db8:e9::/48 drop > /dev/null || fail "ip route add ... drop"
want 2001:db8:e9::/48 "blackhole cli" || fail "2001:db8:e9::/48 drop: $(kind_of 2001:db8:e9::/48)"
ctl ip route add 2001:db8:e9::/48 sideways > "$tmp/bad" 2>&1 && fail "ip route add ... sideways accepted"
grep -q "blackhole|unreachable|prohibit" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "no usage for a bad word"; }
want 2001:db8:e9::/48 "blackhole cli" || fail "a bad command changed the route"
ctl ip route del 2001:db8:e9::/48 > /dev/null || fail "ip route del 2001:db8:e9::/48"
want 2001:db8:e9::/48 "" || fail "2001:db8:e9::/48 not deleted"
echo "sluice's CLI: ip route add 2001:db8:e9::/48 unreachable|prohibit|drop, each answered so, replaced, deleted"
n_unreach=$(err "unreachable route: ICMPv6 no route sent")
n_prohibit=$(err "prohibit route: ICMPv6 administratively prohibited sent")
n_bh=$(err "blackhole route (dropped)")
[ "$n_unreach" = 2 ] && [ "$n_prohibit" = 2 ] && [ "$n_bh" = 2 ] ||
	{ ctl show errors >&2; fail "ip6-lookup counted unreachable $n_unreach, prohibit $n_prohibit, blackhole $n_bh (expected 2, 2, 2)"; }

# ---- deleted in Linux: gone from sluice ----
for p in e1 e2 e3; do ip -n "$ns_c" -6 route del "2001:db8:$p::/48" || fail "route del $p"; done
ip -n "$ns_c" nexthop del id 77 || fail "nexthop del 77" # takes 2001:db8:e5::/48 with it
gone() { [ -z "$(kind_of "$1")" ]; }
for p in e1 e2 e3 e5; do
	until_s 5 gone "2001:db8:$p::/48" || { ctl show ip6 fib >&2; fail "2001:db8:$p::/48 still in sluice"; }
done
echo "deleted in Linux: all four gone from sluice"
netns_stop_sluice
echo "PASS"
