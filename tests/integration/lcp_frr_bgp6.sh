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
id=$$
ns_a=sluice-frr6-p-$id # peer: FRR AS 65002
ns_b=sluice-frr6-h-$id # h2, on b's side
ns_c=sluice-frr6-c-$id # ctl: the TAPs and FRR AS 65001
ns_f=sluice-frr6-f-$id # far, behind peer
if_a=fr6a$id
if_b=fr6b$id
host_a=fr6a${id}h
host_b=fr6b${id}h
tmp=$(mktemp -d /tmp/sluice-frr6-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
. "$(dirname "$0")/../lib/frr.sh"
trap frr_topology_cleanup EXIT
netns_preflight ip ping iperf3 timeout vtysh
[ -x /usr/lib/frr/zebra ] && [ -x /usr/lib/frr/bgpd ] || fail "FRR not installed (scripts/deps.sh test)"
case $mode in nhobj | no-nhobj) ;; *) fail "mode: expected nhobj or no-nhobj, not $mode" ;; esac
frr_family=-6
frr_nh='"next_hop":"' # FRR's choice: the peer's link-local or global address

# ---- the namespaces: IPv6 only, no DAD delays (sluice runs DAD for its own) ----
host6() { # ns ifname address/64 [gateway]
	ip netns exec "$1" sh -c "ip link set lo up && sysctl -qw net.ipv6.conf.$2.accept_dad=0 net.ipv6.conf.$2.accept_ra=0 &&
		ip addr add $3 dev $2 nodad && ip link set $2 up ${4:+&& ip -6 route add default via $4}" || fail "host $3 in $1"
}
netns_make_pairs
ip netns add "$ns_c" || fail "ip netns add $ns_c"
ip netns add "$ns_f" || fail "ip netns add $ns_f"
ip netns exec "$ns_c" sh -c 'ip link set lo up && sysctl -qw net.ipv4.ip_forward=0' || fail "ctl setup"
host6 "$ns_a" "$host_a" 2001:db8:1::2/64
host6 "$ns_b" "$host_b" 2001:db8:2::2/64 2001:db8:2::1
ip -n "$ns_a" link add pf0 type veth peer name pf1 netns "$ns_f" || fail "veth peer-far"
host6 "$ns_a" pf0 2001:db8:99::1/64
ip netns exec "$ns_a" sysctl -qw net.ipv6.conf.all.forwarding=1 || fail "peer forwarding"
host6 "$ns_f" pf1 2001:db8:99::2/64 2001:db8:99::1
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
linux-cp {
  default-netns $ns_c
  a { host-if s-eth0 }
  b { host-if s-eth1 }
}
CONF
netns_start_sluice
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
frr_zebra_conf ctl "$mode" > "$(frr_dir ctl)/zebra.conf"
frr_zebra_conf peer "$mode" > "$(frr_dir peer)/zebra.conf"
# shellcheck disable=SC2086
frr_bgpd_conf ipv6 peer 65002 10.255.0.2 2001:db8:1::1 65001 $peers > "$(frr_dir peer)/bgpd.conf"
frr_bgpd_conf ipv6 ctl 65001 10.255.0.1 2001:db8:1::2 65002 2001:db8:2::/64 > "$(frr_dir ctl)/bgpd.conf"
t0=$(now_ms)
frr_start ctl "$ns_c" zebra
frr_start ctl "$ns_c" bgpd
frr_start peer "$ns_a" zebra
frr_start peer "$ns_a" bgpd

established() { vty ctl -c "show bgp neighbors 2001:db8:1::2 json" 2>/dev/null | grep -q '"bgpState":"Established"'; }
until_s 20 established || { vty ctl -c "show bgp summary" >&2; ctl show errors >&2; frr_logs; fail "BGP session not Established within 20 s"; }
t1=$(now_ms)
echo "bgp: ctl <-> peer over IPv6 Established $((t1 - t0)) ms after zebra started"

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
a_tx0=$(if_counter a TX-packets)
b_rx0=$(if_counter b RX-packets)
netns_ping_all "$ns_b" 2001:db8:99::2 20 "$tmp/ping" || { cat "$tmp/ping" >&2; ctl show errors >&2; ctl show ip6 neighbors >&2; fail "ping -6 h2 -> far"; }
echo "ping -6 h2 -> far: $(grep rtt "$tmp/ping")"
ip netns exec "$ns_f" iperf3 -s -1 -B 2001:db8:99::2 -p 5298 > "$tmp/iperf-s" 2>&1 &
iperf_pid=$!
until_s 5 eval 'ip netns exec "$ns_f" ss -ltn | grep -q ":5298"' || fail "iperf3 server did not listen"
timeout 20 ip netns exec "$ns_b" iperf3 -6 -c 2001:db8:99::2 -p 5298 -t 2 -J > "$tmp/iperf.json" 2>&1 ||
	{ cat "$tmp/iperf.json" >&2; fail "iperf3 -6 h2 -> far"; }
wait "$iperf_pid"
iperf_pid=
bytes=$(tr -d ' \t\n' < "$tmp/iperf.json" | grep -Eo '"sum_received":\{[^}]*"bytes":[0-9]+' | grep -Eo '[0-9]+$')
[ "${bytes:-0}" -gt 100000 ] || fail "iperf3 moved ${bytes:-0} bytes"
a_tx=$(($(if_counter a TX-packets) - a_tx0))
b_rx=$(($(if_counter b RX-packets) - b_rx0))
min=$((20 + bytes / 65536))
[ "$a_tx" -ge "$min" ] && [ "$b_rx" -ge "$min" ] ||
	fail "sluice's counters: a TX +$a_tx, b RX +$b_rx, expected at least $min each (not forwarded by sluice?)"
echo "iperf3 -6 h2 -> far: $bytes bytes; sluice b RX +$b_rx, a TX +$a_tx packets"

# ---- withdrawn at the peer: gone from sluice within 1 s of the kernel ----
withdraw=(-c "configure terminal" -c "router bgp 65002" -c "address-family ipv6 unicast")
for p in $peers; do withdraw+=(-c "no network $p"); done
vty peer "${withdraw[@]}" > "$tmp/vty" 2>&1 || { cat "$tmp/vty" >&2; fail "vtysh no network"; }
t3=$(now_ms)
# shellcheck disable=SC2086
frr_wait 5 out "" $peers || { ctl show ip6 fib >&2; fail "prefixes still in sluice 5 s after 'no network'"; }
echo "withdraw: gone from ctl's kernel $((kernel_ms - t3)) ms after vtysh returned, from sluice $((sluice_ms - kernel_ms)) ms later"
[ $((sluice_ms - kernel_ms)) -le 1000 ] ||
	fail "withdrawn prefixes left sluice $((sluice_ms - kernel_ms)) ms after the kernel's table, not within 1 s"
ctl show ip6 fib 2001:db8:2::/64 | grep -q connected || fail "sluice lost its connected 2001:db8:2::/64"

ctl show lcp | grep -E "netlink|ignored"
ctl show errors | grep -E "lcp-|ip6-local|ip6-nd"
frr_cleanup
netns_stop_sluice
echo "PASS ($mode)"
exit 0
