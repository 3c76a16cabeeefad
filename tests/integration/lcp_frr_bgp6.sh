#!/bin/bash
# FRR's BGP over IPv6 through sluice's linux-cp: an eBGP session between
# IPv6 addresses over the punt and inject path, its IPv6 routes in sluice's
# FIB (from Linux as bgp), traffic forwarded by sluice, withdrawal.
#
#   far 2001:db8:99::2 --- peer 2001:db8:1::2 --veth-- [a  sluice  b] --veth-- h2 2001:db8:2::2
#                     2001:db8:99::1             |TAP   |TAP
#                        ctl: s-eth0 2001:db8:1::1/64, s-eth1 2001:db8:2::1/64
#
# zebra + bgpd in ctl (AS 65001) and in peer (AS 65002), started directly
# in their namespaces. peer announces 2001:db8:99::/64 (far) and
# 2001:db8:98:1..3::/64; ctl announces 2001:db8:2::/64 back. The TAPs
# have their ports' MACs, so Linux's link-local addresses are sluice's
# own (FRR's next hops for a directly connected eBGP peer are its
# link-local address: resolved by sluice's own ND on a).
# Expects:
#   - the session Established within 20 s (TCP to sluice's IPv6 address,
#     punted by ip6-local; Linux's NS resolved by the NA copies sluice
#     punts);
#   - the four prefixes in `show ip6 fib json`, source linux/bgp, protocol
#     bgp, on a;
#   - h2 pings far (ping -6) and runs iperf3 -6 to it: forwarded by sluice
#     (a's TX and b's RX grow by at least the packets sent);
#   - `no network` in peer's bgpd removes every prefix from sluice within
#     1 s of ctl's kernel table.
# Mode (argument 3): "nhobj" (FRR's default: nexthop objects with IPv6
# gateways) or "no-nhobj" (`no zebra nexthop kernel enable`).
# Needs root, ip, ping, iperf3, FRR. The trap stops FRR and sluice and
# removes namespaces and veths even on failure; every wait is bounded.
#
#   lcp_frr_bgp6.sh SLUICE SLUICECTL nhobj|no-nhobj
set -u
sluice=$1
sluicectl=$2
mode=${3:-nhobj}
. "$(dirname "$0")/../lib/netns.sh"
. "$(dirname "$0")/../lib/frr.sh"
frr_bgp_init frr6 fr6 "$mode"
frr_family=-6
frr_nh='"next_hop":"' # FRR's choice: the peer's link-local or global address

# ---- the namespaces: IPv6 only, no DAD delays (sluice runs DAD for its own) ----
host6() { # ns ifname address/64 [gateway]
	ip netns exec "$1" sh -c "ip link set lo up && sysctl -qw net.ipv6.conf.$2.accept_dad=0 net.ipv6.conf.$2.accept_ra=0 &&
		ip addr add $3 dev $2 nodad && ip link set $2 up ${4:+&& ip -6 route add default via $4}" || fail "host $3 in $1"
}
frr_topology_make 'sysctl -qw net.ipv4.ip_forward=0'
host6 "$ns_a" "$host_a" 2001:db8:1::2/64
host6 "$ns_b" "$host_b" 2001:db8:2::2/64 2001:db8:2::1
host6 "$ns_a" pf0 2001:db8:99::1/64
ip netns exec "$ns_a" sysctl -qw net.ipv6.conf.all.forwarding=1 || fail "peer forwarding"
host6 "$ns_f" pf1 2001:db8:99::2/64 2001:db8:99::1
frr_start_sluice
# what sluice set on the TAP so that Linux answers nothing twice (lcp_sysctl.c)
[ "$(ip netns exec "$ns_c" cat /proc/sys/net/ipv6/conf/s-eth0/accept_ra)" = 0 ] &&
	[ "$(ip netns exec "$ns_c" cat /proc/sys/net/ipv6/conf/s-eth0/forwarding)" = 1 ] || fail "the TAP's IPv6 sysctls"
ip -n "$ns_c" addr add 2001:db8:1::1/64 dev s-eth0 && ip -n "$ns_c" addr add 2001:db8:2::1/64 dev s-eth1 ||
	fail "addresses on the TAPs"
has6() { ctl show ip6 interface | grep -q "$1"; }
until_s 3 has6 2001:db8:1::1/64 && until_s 3 has6 2001:db8:2::1/64 || { ctl show ip6 interface >&2; fail "IPv6 addresses not on a, b"; }
# the TAP's link-local (EUI-64 of the same MAC) is a's own
ll=$(ip -n "$ns_c" -6 addr show dev s-eth0 scope link | awk '/inet6/ { sub("/64", "", $2); print $2 }')
ctl show ip6 interface | grep -q "$ll" || { ctl show ip6 interface >&2; fail "a's link-local is not the TAP's $ll"; }
echo "a: 2001:db8:1::1/64 from Linux, link-local $ll = the TAP's"
sleep 1.5 # sluice's DAD for its new addresses (one probe, 1 s)

# ---- FRR ----
peers="2001:db8:98:1::/64 2001:db8:98:2::/64 2001:db8:98:3::/64 2001:db8:99::/64"
# shellcheck disable=SC2086
frr_bgp_start ipv6 "$mode" 10.255.0.1 10.255.0.2 2001:db8:1::1 2001:db8:1::2 2001:db8:2::/64 $peers
frr_bgp_established 2001:db8:1::2

# ---- the learned routes in sluice's FIB ----
# shellcheck disable=SC2086
frr_wait 10 in bgp $peers || { ctl show ip6 fib >&2; ip -6 -n "$ns_c" route >&2; ctl show lcp >&2; frr_logs; fail "the peer's IPv6 routes not in sluice as bgp"; }
ctl show ip6 fib | grep -E "^(Prefix|2001:db8:9[89])"
echo "fib: 4 bgp routes in ctl's kernel $((kernel_ms - t1)) ms after Established, in sluice $((sluice_ms - kernel_ms)) ms later"
echo "kernel: $(ip -6 -n "$ns_c" route show 2001:db8:99::/64)"
if [ "$mode" = nhobj ]; then
	ip -6 -n "$ns_c" route show 2001:db8:99::/64 | grep -q "nhid" || fail "mode nhobj: the kernel route has no nhid"
else
	ip -6 -n "$ns_c" route show 2001:db8:99::/64 | grep -q "nhid" && fail "mode no-nhobj: the kernel route has a nhid"
fi
until_s 5 eval 'ip -6 -n "$ns_a" route show 2001:db8:2::/64 | grep -q via' || fail "peer did not learn 2001:db8:2::/64"

# ---- h2 -> far through sluice ----
# One ping first: ip6-glean drops the packet that starts a resolution (it
# holds none yet, nodes/ip6/ip6_neighbor.h), so h2's own entry on b is made.
timeout 5 ip netns exec "$ns_b" ping -6 -c 1 -W 2 2001:db8:99::2 > /dev/null 2>&1
frr_forwarded 2001:db8:99::2 5298 -6

# ---- withdrawn at the peer: gone from sluice within 1 s of the kernel ----
# shellcheck disable=SC2086
frr_bgp_withdraw ipv6 $peers
ctl show ip6 fib 2001:db8:2::/64 | grep -q connected || fail "sluice lost its connected 2001:db8:2::/64"

ctl show lcp | grep -E "netlink|ignored"
ctl show errors | grep -E "lcp-|ip6-local|ip6-nd"
frr_cleanup
netns_stop_sluice
echo "PASS ($mode)"
exit 0
