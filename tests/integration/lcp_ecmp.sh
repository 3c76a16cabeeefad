#!/bin/bash
# ECMP learnt from Linux: a multipath route in the control namespace spreads
# flows over two sluice ports, per flow, and survives losing a next hop.
#
#   client 10.10.0.2 --veth-- [a 10.10.0.1  sluice  b 10.11.0.1 --veth-- r1 10.11.0.2 ]--+
#                                           c 10.12.0.1 --veth-- r2 10.12.0.2 ]-----------+-- far 10.9.0.9
#   b, c -- TAPs -- s-eth1, s-eth2 in ctl (`lcp create`); their addresses
#   come from Linux; r1 and r2 forward to far (far answers through r1).
#
# Expects:
#   - `ip route add 10.9.0.0/24 nexthop via 10.11.0.2 dev s-eth1 nexthop via
#     10.12.0.2 dev s-eth2` in ctl: one FIB entry with both paths;
#   - 16 TCP iperf3 streams with fixed client ports (--cport 40000..40015):
#     both b and c transmit (interface counters), and in 2 s every
#     stream's packets are seen on exactly one of r1, r2 (tcpdump on each);
#   - `ip route replace` with r2 alone: the FIB has one path within 1 s;
#     in the next 4 s every stream is on r2 and none on r1, and every
#     iperf3 session completes (exit 0): the streams moved without ending.
# Mode "frr" (argument 3; issue 20's "the same learned from FRR with two
# BGP sessions"): instead of `ip route`, FRR in ctl (AS 65001, `maximum-
# paths 2`) peers over b and c with FRR in r1 and r2 (both AS 65002, each
# announcing 10.9.0.0/24); the multipath route is zebra's (nexthop group),
# and the next hop goes by `no network` in r1's bgpd (a BGP withdraw),
# while both sessions stay up. The same checks on the streams.
# Needs root, ip, iperf3, tcpdump (and FRR for mode frr). The trap removes
# namespaces, veths, iperf3s, tcpdumps, FRR and sluice even on failure;
# every wait is bounded.
#
#   lcp_ecmp.sh SLUICE SLUICECTL [static|frr]
set -u
sluice=$1
sluicectl=$2
mode=${3:-static}
id=$$
ns_a=sluice-ecmp-cl-$id # the client
ns_b=sluice-ecmp-r1-$id
ns_r2=sluice-ecmp-r2-$id
ns_far=sluice-ecmp-far-$id
ns_ctl=sluice-ecmp-ctl-$id
if_a=ema$id
if_b=emb$id
if_c=emc$id
host_a=ema${id}h
host_b=emb${id}h
host_c=emc${id}h
tmp=$(mktemp -d /tmp/sluice-ecmp-XXXXXX)
pids=
. "$(dirname "$0")/../lib/netns.sh"
. "$(dirname "$0")/../lib/frr.sh"
cleanup() {
	frr_cleanup
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	for ns in "$ns_r2" "$ns_far" "$ns_ctl"; do ip netns del "$ns" 2>/dev/null; done
	ip link del "$if_c" 2>/dev/null
	netns_cleanup
}
trap cleanup EXIT
netns_preflight ip iperf3 tcpdump timeout
case $mode in static) proto=static ;; frr) proto=bgp ;; *) fail "mode: expected static or frr, not $mode" ;; esac
[ "$mode" = static ] || { [ -x /usr/lib/frr/bgpd ] && command -v vtysh > /dev/null; } || fail "FRR not installed (scripts/deps.sh test)"

# ---- the namespaces ----
netns_make_pairs
for ns in "$ns_r2" "$ns_far" "$ns_ctl"; do ip netns add "$ns" || fail "ip netns add $ns"; done
ip link add "$if_c" type veth peer name "$host_c" netns "$ns_r2" || fail "veth $if_c"
echo 1 > "/proc/sys/net/ipv6/conf/$if_c/disable_ipv6"
ip link set "$if_c" up || fail "$if_c up"
ip netns exec "$ns_ctl" sh -c 'ip link set lo up && sysctl -qw net.ipv6.conf.default.disable_ipv6=1'
netns_setup_host "$ns_a" "$host_a" 10.10.0.2 10.10.0.1
# the iperf3 control connections' ports stay out of the streams' range
ip netns exec "$ns_a" sysctl -qw net.ipv4.ip_local_port_range="50000 60999" || fail "port range"
# far: answers through r1 whichever router a flow came by (no rp_filter)
ip netns exec "$ns_far" sh -c 'sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.default.rp_filter=0 &&
	sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && ip link set lo up && ip addr add 10.9.0.9/32 dev lo' ||
	fail "far"
router() { # ns sluice-side-if address far-if far-peer-if net
	ip link add "$4" netns "$1" type veth peer name "$5" netns "$ns_far" || fail "veth $4"
	ip netns exec "$1" sh -c "sysctl -qw net.ipv4.ip_forward=1 net.ipv4.conf.all.rp_filter=0 &&
		echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		ip link set lo up && ip addr add $3/24 dev $2 && ip link set $2 up &&
		ip addr add $6.1/24 dev $4 && ip link set $4 up &&
		ip route add 10.9.0.0/24 via $6.2 && ip route add 10.10.0.0/24 via ${3%.2}.1" || fail "router $1"
	ip netns exec "$ns_far" sh -c "ip addr add $6.2/24 dev $5 && ip link set $5 up" || fail "far side of $1"
}
router "$ns_b" "$host_b" 10.11.0.2 r1f r1x 10.21.0
router "$ns_r2" "$host_c" 10.12.0.2 r2f r2x 10.22.0
ip -n "$ns_far" route add 10.10.0.0/24 via 10.21.0.1 || fail "far's route back"

echo "set interface ip address a 10.10.0.1/24" > "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
  c { driver af-packet  host-if $if_c }
}
CONF
netns_start_sluice
paths_of() { ctl show ip fib 10.9.0.0/24 2>/dev/null | grep -c '^10\.9\.0\.0/24 '; }
tx_of() { ctl show interface | awk -v n="$1" '$1 == n { print $10 }'; }

ctl lcp create b host-if s-eth1 netns "$ns_ctl" > /dev/null || fail "lcp create b"
ctl lcp create c host-if s-eth2 netns "$ns_ctl" > /dev/null || fail "lcp create c"
ip -n "$ns_ctl" addr add 10.11.0.1/24 dev s-eth1 && ip -n "$ns_ctl" addr add 10.12.0.1/24 dev s-eth2 ||
	fail "addresses in ctl"
until_1s eval 'ctl show ip interface | grep -q 10.12.0.1/24' || fail "c has no 10.12.0.1/24 from Linux"

# ---- the multipath route ----
bgpd_conf() { # name router-id as neighbour remote-as [network] [multipath]
	cat <<BGP
hostname $1
router bgp $3
 bgp router-id $2
 no bgp ebgp-requires-policy
 no bgp network import-check
 timers bgp 1 3
BGP
	local nbr
	for nbr in $4; do
		echo " neighbor $nbr remote-as $5"
		echo " neighbor $nbr timers connect 1"
		echo " neighbor $nbr advertisement-interval 0"
	done
	echo " address-family ipv4 unicast"
	[ -n "${6:-}" ] && echo "  network $6"
	[ -n "${7:-}" ] && echo "  maximum-paths $7"
	echo " exit-address-family"
}
if [ "$mode" = static ]; then
	ip -n "$ns_ctl" route add 10.9.0.0/24 proto static nexthop via 10.11.0.2 dev s-eth1 nexthop via 10.12.0.2 dev s-eth2 ||
		fail "multipath route in ctl"
	until_1s eval 'test "$(paths_of)" -eq 2' || { ctl show ip fib >&2; fail "10.9.0.0/24 has not two paths"; }
else
	for n in ctl r1 r2; do echo "hostname $n" > "$(frr_dir $n)/zebra.conf"; done
	bgpd_conf ctl 10.255.0.1 65001 "10.11.0.2 10.12.0.2" 65002 "" 2 > "$(frr_dir ctl)/bgpd.conf"
	bgpd_conf r1 10.255.0.2 65002 10.11.0.1 65001 10.9.0.0/24 > "$(frr_dir r1)/bgpd.conf"
	bgpd_conf r2 10.255.0.3 65002 10.12.0.1 65001 10.9.0.0/24 > "$(frr_dir r2)/bgpd.conf"
	t0=$(now_ms)
	frr_start ctl "$ns_ctl" zebra
	frr_start ctl "$ns_ctl" bgpd
	for r in "r1 $ns_b" "r2 $ns_r2"; do
		set -- $r
		frr_start "$1" "$2" zebra
		frr_start "$1" "$2" bgpd
	done
	until_s 30 eval 'test "$(paths_of)" -eq 2' ||
		{ vty ctl -c "show bgp summary" >&2; ip -n "$ns_ctl" route >&2; ctl show ip fib >&2; frr_logs; fail "10.9.0.0/24 has not two paths from BGP within 30 s"; }
	echo "frr: two BGP sessions, 10.9.0.0/24 multipath in sluice $(($(now_ms) - t0)) ms after zebra started"
	echo "kernel: $(ip -n "$ns_ctl" route show 10.9.0.0/24 | tr '\n' ' ')"
fi
ctl show ip fib 10.9.0.0/24
ctl show ip fib 10.9.0.0/24 | grep -q "10.11.0.2 .*linux/$proto" && ctl show ip fib 10.9.0.0/24 | grep -q '10.12.0.2' ||
	fail "paths not via 10.11.0.2 and 10.12.0.2 as linux/$proto"

# ---- 16 streams ----
for i in $(seq 0 15); do
	ip netns exec "$ns_far" timeout 40 iperf3 -s -1 -B 10.9.0.9 -p $((5201 + i)) > /dev/null 2>&1 &
	pids="$pids $!"
done
sleep 0.5
cl_pids=
for i in $(seq 0 15); do
	ip netns exec "$ns_a" timeout 40 iperf3 -c 10.9.0.9 -p $((5201 + i)) --cport $((40000 + i)) -t 12 -b 2M -l 16K \
		> "$tmp/client$i" 2>&1 &
	cl_pids="$cl_pids $!"
done
pids="$pids $cl_pids"
capture() { # tag seconds: the streams' packets at r1 and r2
	ip netns exec "$ns_b" timeout "$2" tcpdump -U -nn -i "$host_b" -w "$tmp/r1.$1" 'tcp and src portrange 40000-40015' 2>/dev/null &
	local p1=$!
	ip netns exec "$ns_r2" timeout "$2" tcpdump -U -nn -i "$host_c" -w "$tmp/r2.$1" 'tcp and src portrange 40000-40015' 2>/dev/null &
	local p2=$!
	pids="$pids $p1 $p2"
	wait "$p1" "$p2"
}
ports() { # pcap: the client ports in it, sorted
	tcpdump -nn -r "$1" 2>/dev/null | awk '{ split($3, a, "."); print a[5] }' | sort -un
}
sleep 1.5
tx_b0=$(tx_of b) tx_c0=$(tx_of c)
capture before 2
on_r1=$(ports "$tmp/r1.before") on_r2=$(ports "$tmp/r2.before")
echo "before: r1 carries ports" $on_r1 "; r2 carries" $on_r2
[ -n "$on_r1" ] && [ -n "$on_r2" ] || fail "one router carries no stream"
[ -z "$(comm -12 <(echo "$on_r1") <(echo "$on_r2"))" ] || fail "a stream on both routers:" $(comm -12 <(echo "$on_r1") <(echo "$on_r2"))
[ "$(printf '%s\n%s\n' "$on_r1" "$on_r2" | grep -c .)" -eq 16 ] || fail "not every stream seen"
[ "$(tx_of b)" -gt "$tx_b0" ] && [ "$(tx_of c)" -gt "$tx_c0" ] || fail "b or c transmitted nothing"
echo "b and c both transmit: $(tx_of b), $(tx_of c) packets"

# ---- one next hop goes: its streams move, none ends ----
if [ "$mode" = static ]; then
	ip -n "$ns_ctl" route replace 10.9.0.0/24 proto static via 10.12.0.2 dev s-eth2 || fail "route replace"
	until_1s eval 'test "$(paths_of)" -eq 1' || { ctl show ip fib >&2; fail "10.9.0.0/24 still multipath"; }
else
	vty r1 -c "configure terminal" -c "router bgp 65002" -c "address-family ipv4 unicast" -c "no network 10.9.0.0/24" \
		> "$tmp/vty" 2>&1 || { cat "$tmp/vty" >&2; fail "vtysh no network"; }
	until_s 5 eval 'test "$(paths_of)" -eq 1' || { ctl show ip fib >&2; fail "10.9.0.0/24 still multipath 5 s after r1's withdraw"; }
	ctl show ip fib 10.9.0.0/24 | grep -q '10.12.0.2 .*linux/bgp' || fail "the path left is not via r2"
fi
ctl show ip fib 10.9.0.0/24
sleep 0.3
capture after 4
on_r1=$(ports "$tmp/r1.after") on_r2=$(ports "$tmp/r2.after")
echo "after: r1 carries ports" $on_r1 "; r2 carries" $on_r2
[ -z "$on_r1" ] || fail "streams still through r1"
[ "$(echo "$on_r2" | grep -c .)" -eq 16 ] || fail "not every stream on r2"
for p in $cl_pids; do
	wait "$p" || { cat "$tmp"/client* >&2; fail "an iperf3 session failed"; }
done
grep -h "sender$" "$tmp"/client* | head -3
echo "16 sessions completed across the move"
if [ "$mode" = frr ]; then
	up=$(vty ctl -c "show bgp summary json" | grep -c '"state":"Established"')
	[ "$up" -eq 2 ] || { vty ctl -c "show bgp summary" >&2; fail "$up BGP sessions Established after the move, not 2"; }
	echo "both BGP sessions still Established"
	frr_cleanup
	netns_stop_sluice
	echo "PASS (frr)"
	exit 0
fi

# ---- the CLI's multipath: weights, a path added and removed, bad words ----
ctl ip route add 10.99.0.0/16 via 10.11.0.2 b via 10.12.0.2 c weight 3 > /dev/null || fail "CLI multipath"
ctl show ip fib 10.99.0.0/16 > "$tmp/fib99"
grep -q "path 1: adjacency [0-9]*, weight 1, 4 buckets" "$tmp/fib99" &&
	grep -q "path 2: adjacency [0-9]*, weight 3, 12 buckets" "$tmp/fib99" || { cat "$tmp/fib99" >&2; fail "1:3 not 4/12 of 16"; }
ctl ip route add 10.99.0.0/16 via 10.11.0.3 b weight 2 > /dev/null || fail "CLI path add"
[ "$(ctl show ip fib 10.99.0.0/16 | grep -c '^10\.99\.0\.0/16 ')" -eq 3 ] || fail "not three paths"
ctl ip route add 10.99.0.0/16 via 10.11.0.2 b wieght 2 > /dev/null 2>&1 && fail "a bad word accepted"
ctl ip route del 10.99.0.0/16 via 10.12.0.2 > /dev/null || fail "CLI path del"
[ "$(ctl show ip fib 10.99.0.0/16 | grep -c '^10\.99\.0\.0/16 ')" -eq 2 ] || fail "not two paths after del"
ctl ip route add 10.99.0.0/16 prohibit > /dev/null && ctl show ip fib 10.99.0.0/16 | grep -q prohibit || fail "prohibit"
ctl ip route del 10.99.0.0/16 > /dev/null && ! ctl show ip fib 10.99.0.0/16 > /dev/null 2>&1 || fail "CLI route del"
echo "CLI: 1:3 is 4/12 buckets, paths added and removed, prohibit, del"
netns_stop_sluice
