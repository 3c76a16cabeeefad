#!/bin/bash
# linux-cp's netlink listener given bad input (issue 20's Bad input test):
#   h1 10.1.0.2/24 (10.9.0.9 behind it) --veth-- [a 10.1.0.1/24  sluice  b 10.2.0.1/24] --veth-- h2 10.2.0.2/24
#   a -- TAP -- s-eth0 in ctl;  b -- TAP -- s-eth1 in ctl2
# Expects, each counted in `show lcp`, logged once per kind, and sluice
# answering and forwarding throughout:
#   - a route via an interface sluice does not own (a veth in ctl):
#     "not a TAP of ours", not installed;
#   - IPv6 routes via that interface: "not a TAP of ours" (sluice maps
#     IPv6 now, nodes/lcp/lcp_nl_route6.c), not installed; MPLS ones when
#     the kernel has AF_MPLS: "unsupported family", not installed, one log
#     line for the kind however many;
#   - s-eth0 deleted from Linux under sluice (`ip link del`): the kernel
#     drops the routes through it without a route message; sluice's resync
#     (the TAP went down) drops them too; `lcp delete a` still cleans up;
#   - ctl2 removed (`ip netns del`) under its listener: nothing breaks, a
#     route sluice learnt there stays until `lcp delete b`, an `lcp create`
#     into the gone namespace is refused with a reason;
#   - the CLI's own route still forwards h2 -> 10.9.0.9; sluice exits 0.
# Needs root, ip, ping. The trap removes namespaces, veths and sluice even
# on failure; every wait is bounded.
#
#   test_lcp_bad.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
. "$(dirname "$0")/../lib/netns.sh"
netns_lcp_names bd
ns_d=sluice-bd-d-$id
trap 'ip netns del "$ns_c" 2>/dev/null; ip netns del "$ns_d" 2>/dev/null; netns_cleanup' EXIT
netns_preflight ip ping timeout
netns_lcp_hosts "$ns_c" "$ns_d"
printf 'set interface ip address a 10.1.0.1/24\nset interface ip address b 10.2.0.1/24\n' > "$tmp/setup.cli"
netns_lcp_conf "exec $tmp/setup.cli" <<CONF
linux-cp {
  a { host-if s-eth0  netns $ns_c }
  b { host-if s-eth1  netns $ns_d }
}
CONF
netns_start_sluice
# until_2s CMD...: CMD retried for 2 s. A count read in CMD must be read on
# each try: pass it through eval in single quotes (a "$(...)" argument would
# be read once, before the first try).
until_2s() {
	for _ in $(seq 20); do "$@" && return 0; sleep 0.1; done
	return 1
}
fib_has() { ctl show ip fib "$1" 2>/dev/null | grep -q "^$1 .*$2"; }
fib_lacks() { ! ctl show ip fib "$1" 2>/dev/null | grep -q "^$1 "; }
ign() { # reason: its count in show lcp json
	ctl show lcp json | tr -d '\n' | grep -Eo "\"$1\":[[:space:]]*[0-9]+" | grep -Eo '[0-9]+$' | head -1
}
alive() { ctl show version > /dev/null || fail "sluice does not answer: $*"; }

ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0 || fail "addr on s-eth0"
ip -n "$ns_d" addr add 10.2.0.1/24 dev s-eth1 || fail "addr on s-eth1"
ip -n "$ns_c" route add 10.9.0.0/16 via 10.1.0.2 dev s-eth0 proto static || fail "route via s-eth0"
until_2s fib_has 10.9.0.0/16 linux/static || { ctl show ip fib >&2; fail "10.9.0.0/16 not learnt"; }

# ---- via an interface sluice does not own ----
ip -n "$ns_c" link add d0 type veth peer name d1 && ip -n "$ns_c" link set d1 up && ip -n "$ns_c" link set d0 up &&
	ip -n "$ns_c" addr add 10.77.0.1/24 dev d0 || fail "veth d0 in ctl"
n0=$(ign "not a TAP of ours")
ip -n "$ns_c" route add 10.78.0.0/16 via 10.77.0.2 dev d0 || fail "route via d0"
until_2s eval 'test "$(ign "not a TAP of ours")" -gt "$n0"' || fail "the route via d0 was not counted"
fib_lacks 10.78.0.0/16 || fail "a route via d0 installed"
echo "via an interface sluice does not own: counted ($(ign "not a TAP of ours")), not installed"

# ---- IPv6 via an interface sluice does not own; a family it does not map (MPLS) ----
# IPv6 on d0/d1 brings Linux's own messages (link-local addresses, their
# routes, neighbours), some counted under the same reason: take the baseline
# once the count has stood still for 0.3 s (2 s at most), no DAD to wait for.
ip netns exec "$ns_c" sysctl -qw net.ipv6.conf.d0.accept_dad=0 net.ipv6.conf.d1.accept_dad=0 \
	net.ipv6.conf.d0.disable_ipv6=0 net.ipv6.conf.d1.disable_ipv6=0
n0=$(ign "not a TAP of ours")
for _ in $(seq 7); do
	sleep 0.3
	n=$(ign "not a TAP of ours")
	[ "$n" = "$n0" ] && break
	n0=$n
done
f0=$(ign "unsupported family")
for i in 1 2 3; do
	ip -n "$ns_c" -6 route add "2001:db8:$i::/64" dev d0 || fail "IPv6 route $i"
done
until_2s eval 'test "$(ign "not a TAP of ours")" -ge $((n0 + 3))' || fail "IPv6 routes via d0 not counted"
for i in 1 2 3; do
	ctl show ip6 fib "2001:db8:$i::/64" > /dev/null 2>&1 && fail "IPv6 route $i via d0 installed"
done
echo "IPv6 via an interface sluice does not own: counted ($(ign "not a TAP of ours")), not installed"
if modprobe mpls_router 2>/dev/null && ip netns exec "$ns_c" sysctl -qw net.mpls.platform_labels=1000 2>/dev/null; then
	ip -n "$ns_c" -f mpls route add 100 via inet 10.77.0.2 dev d0 || fail "MPLS route"
	ip -n "$ns_c" -f mpls route add 101 via inet 10.77.0.2 dev d0 || fail "MPLS route"
	until_2s eval 'test "$(ign "unsupported family")" -ge $((f0 + 2))' || fail "MPLS routes not counted"
	[ "$(grep -c 'ignored: unsupported family' "$tmp/err")" = 1 ] || fail "unsupported family not logged exactly once"
	echo "MPLS: two label routes counted ($(ign "unsupported family")), logged once"
else
	echo "MPLS: not in this kernel; the unit test (unsupported_families) feeds AF_MPLS messages"
fi

# ---- s-eth0 deleted from Linux under sluice ----
ip -n "$ns_c" link del s-eth0 || fail "ip link del s-eth0"
until_2s fib_lacks 10.9.0.0/16 || { ctl show lcp >&2; ctl show ip fib >&2; fail "10.9.0.0/16 outlived s-eth0"; }
alive "after s-eth0 was deleted"
ctl show lcp
ctl lcp delete a || fail "lcp delete a after s-eth0 was deleted"
echo "s-eth0 deleted in Linux: its routes left sluice too, lcp delete a cleaned up"

# ---- ctl2 removed under its listener ----
ip -n "$ns_d" route add 10.60.0.0/16 via 10.2.0.2 dev s-eth1 proto static || fail "route via s-eth1"
until_2s fib_has 10.60.0.0/16 linux/static || fail "10.60.0.0/16 not learnt from ctl2"
ip netns del "$ns_d" || fail "ip netns del ctl2"
sleep 0.5
alive "after ctl2 was removed"
fib_has 10.60.0.0/16 linux/static || fail "10.60.0.0/16 lost with the namespace's name"
ctl lcp delete b || fail "lcp delete b after ctl2 was removed"
ctl lcp create b host-if s-eth1 netns "$ns_d" > "$tmp/create" 2>&1 && fail "lcp create into a removed namespace"
grep -q . "$tmp/create" || fail "lcp create into a removed namespace said nothing"
echo "ctl2 removed: sluice answers, $(cat "$tmp/create")"

# ---- the rest keeps working ----
ctl ip route add 10.9.0.0/16 via 10.1.0.2 a > /dev/null || fail "CLI route"
netns_ping_all "$ns_b" 10.9.0.9 5 "$tmp/ping" || { cat "$tmp/ping" >&2; fail "h2 -> 10.9.0.9 after it all"; }
echo "h2 -> 10.9.0.9 through sluice: 5 of 5"
netns_stop_sluice
echo "PASS"
