#!/bin/bash
# FRR's OSPF through sluice's linux-cp: an adjacency over multicast
# 224.0.0.5 (punted by ip4-input to the TAP; what ospfd sends to 224.0.0.5
# leaves through the port by lcp-xc), the peer's routes in sluice's FIB.
# The topology is tests/lib/frr.sh's (frr_topology): peer (far behind it)
# on a's side, h2 on b's, ctl holding the TAPs of a and b. zebra + ospfd
# run in ctl and in peer; s-eth0 and peer's veth are point-to-point,
# hello 1 s, dead 4 s.
# Expects:
#   - the neighbour Full on both sides within 20 s;
#   - peer's 10.99.0.0/24 and 10.98.1.0/24, 10.98.2.0/24 (a veth
#     of its own) in `show ip fib json` as linux/ospf via 10.1.0.2 on a;
#   - h2 pings far and runs iperf3 to it, forwarded by sluice (counters);
#   - lcp-punt counted the multicast it punted; lcp-xc counted what ospfd
#     sent;
#   - ospfd in ctl stopped: after the dead interval peer drops the
#     neighbour, and its routes leave sluice.
# Needs root, ip, ping, iperf3, FRR. The trap stops FRR and sluice and
# removes namespaces and veths even on failure; every wait is bounded.
#
#   lcp_frr_ospf.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-ospf-p-$id
ns_b=sluice-ospf-h-$id
ns_c=sluice-ospf-c-$id
ns_f=sluice-ospf-f-$id
if_a=ospa$id
if_b=ospb$id
host_a=ospa${id}h
host_b=ospb${id}h
tmp=$(mktemp -d /tmp/sluice-ospf-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
. "$(dirname "$0")/../lib/frr.sh"
trap frr_topology_cleanup EXIT
netns_preflight ip ping iperf3 timeout vtysh
[ -x /usr/lib/frr/zebra ] && [ -x /usr/lib/frr/ospfd ] || fail "FRR not installed (scripts/deps.sh test)"

frr_topology
# Two more subnets on peer, on a veth pair of its own (no dummy module here).
ip netns exec "$ns_a" sh -c 'ip link add pd0 type veth peer name pd1 && ip addr add 10.98.1.1/24 dev pd0 &&
	ip addr add 10.98.2.1/24 dev pd0 && ip link set pd1 up && ip link set pd0 up' || fail "peer: pd0"

# ---- FRR ----
p2p_if() { # ifname
	cat <<IF
interface $1
 ip ospf network point-to-point
 ip ospf hello-interval 1
 ip ospf dead-interval 4
IF
}
ospfd_conf() { # name router-id ifname networks...
	local name=$1 rid=$2 ifn=$3 n
	shift 3
	echo "hostname $name"
	p2p_if "$ifn"
	echo "router ospf"
	echo " ospf router-id $rid"
	echo " timers throttle spf 0 50 1000"
	echo " timers throttle lsa all 0"
	echo " timers lsa min-arrival 0"
	echo " passive-interface default"
	echo " no passive-interface $ifn"
	for n in "$@"; do echo " network $n area 0"; done
}
for name in ctl peer; do
	printf 'hostname %s\n' "$name" > "$(frr_dir "$name")/zebra.conf"
done
ospfd_conf ctl 10.1.0.1 s-eth0 10.1.0.0/24 10.2.0.0/24 > "$(frr_dir ctl)/ospfd.conf"
ospfd_conf peer 10.1.0.2 "$host_a" 10.1.0.0/24 10.99.0.0/24 10.98.0.0/16 > "$(frr_dir peer)/ospfd.conf"
t0=$(now_ms)
frr_start ctl "$ns_c" zebra
frr_start ctl "$ns_c" ospfd
frr_start peer "$ns_a" zebra
frr_start peer "$ns_a" ospfd

full() { # name neighbour-id
	vty "$1" -c "show ip ospf neighbor" 2>/dev/null | grep -E "^$2 " | grep -q "Full"
}
until_s 20 full ctl 10.1.0.2 && until_s 5 full peer 10.1.0.1 ||
	{ vty ctl -c "show ip ospf neighbor" >&2; ctl show errors >&2; frr_logs; fail "OSPF not Full within 20 s"; }
t1=$(now_ms)
echo "ospf: ctl <-> peer Full $((t1 - t0)) ms after zebra started"
vty ctl -c "show ip ospf neighbor"

# ---- the peer's routes in sluice ----
prefixes="10.98.1.0/24 10.98.2.0/24 10.99.0.0/24"
# shellcheck disable=SC2086
frr_wait 20 in ospf $prefixes || { ctl show ip fib >&2; ip -n "$ns_c" route >&2; ctl show lcp >&2; frr_logs; fail "the peer's routes not in sluice as ospf"; }
ctl show ip fib | grep -E "^(Prefix|10\.9[89]\.)"
echo "fib: 3 ospf routes in ctl's kernel $((kernel_ms - t1)) ms after Full, in sluice $((sluice_ms - kernel_ms)) ms later"
until_s 10 eval 'ip -n "$ns_a" route show 10.2.0.0/24 | grep -q "via 10.1.0.1"' || fail "peer did not learn 10.2.0.0/24"

# ---- h2 -> far through sluice ----
frr_forwarded

# ---- the punt path's counters ----
ctl show errors > "$tmp/errors"
grep -E "lcp-|ip4-input" "$tmp/errors"
grep -Eq "[1-9][0-9]* +lcp-punt +punted: IPv4 multicast 224.0.0.0/24" "$tmp/errors" || fail "lcp-punt counted no multicast"
grep -Eq "[1-9][0-9]* +lcp-xc +injected: IPv4" "$tmp/errors" || fail "lcp-xc counted no IPv4"

# ---- ctl's ospfd goes: peer drops it after the dead interval, its
# ---- routes leave sluice with the kernel's ----
frr_stop ctl ospfd
until_s 8 eval '! full peer 10.1.0.1' || fail "peer still Full 8 s after ctl's ospfd stopped"
all_gone() {
	for p in $prefixes; do fib_lacks "$p" || return 1; done
}
until_s 2 all_gone || { ctl show ip fib >&2; fail "ospf routes still in sluice after ospfd stopped"; }
echo "ospfd stopped in ctl: peer dropped it, sluice dropped the routes"

frr_cleanup
netns_stop_sluice
echo "PASS"
exit 0
