#!/bin/bash
# FRR's BGP through sluice's linux-cp: a real eBGP session over the punt and
# inject path, its routes in sluice's FIB, traffic forwarded by sluice.
# The topology is tests/lib/frr.sh's (frr_topology): peer (FRR AS 65002,
# far behind it) on a's side, h2 on b's, ctl (FRR AS 65001) holding the
# TAPs of a and b. zebra + bgpd run in ctl and in peer, each started
# directly in its namespace. peer announces 10.99.0.0/24 (far
# behind it) and 10.98.1-3.0/24; ctl announces 10.2.0.0/24 back.
# Expects:
#   - the session Established within 20 s (eBGP, TTL 1, to sluice's own
#     address: punted by ip4-local, Linux's answers out through lcp-xc);
#   - the four prefixes in `show ip fib json` with source linux/bgp,
#     protocol bgp, via 10.1.0.2 on a;
#   - h2 pings far (10.99.0.2) and runs iperf3 to it: forwarded by sluice
#     (a's and b's TX/RX counters grow by at least the packets sent; the
#     ctl kernel's forwarding is off, so Linux cannot have done it);
#   - `no network` in peer's bgpd (vtysh) removes every prefix from sluice
#     within 1 s of ctl's kernel table (5 s at most from vtysh: FRR's own
#     part varies with the load).
# Mode (argument 3): "nhobj", FRR's default, routes via kernel nexthop
# objects (nhid); "no-nhobj", `no zebra nexthop kernel enable`: plain
# routes with RTA_GATEWAY.
# Needs root, ip, ping, iperf3, FRR (/usr/lib/frr, vtysh). The trap stops
# FRR and sluice and removes namespaces and veths even on failure; every
# wait is bounded.
#
#   lcp_frr_bgp.sh SLUICE SLUICECTL nhobj|no-nhobj
set -u
sluice=$1
sluicectl=$2
mode=${3:-nhobj}
id=$$
ns_a=sluice-frr-p-$id   # peer: FRR AS 65002
ns_b=sluice-frr-h-$id   # h2, on b's side
ns_c=sluice-frr-c-$id   # ctl: the TAPs and FRR AS 65001
ns_f=sluice-frr-f-$id   # far, behind peer
if_a=frra$id
if_b=frrb$id
host_a=frra${id}h
host_b=frrb${id}h
tmp=$(mktemp -d /tmp/sluice-frr-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
. "$(dirname "$0")/../lib/frr.sh"
trap frr_topology_cleanup EXIT
netns_preflight ip ping iperf3 timeout vtysh
[ -x /usr/lib/frr/zebra ] && [ -x /usr/lib/frr/bgpd ] || fail "FRR not installed (scripts/deps.sh test)"
case $mode in nhobj | no-nhobj) ;; *) fail "mode: expected nhobj or no-nhobj, not $mode" ;; esac

frr_topology

# ---- FRR ----
peers="10.98.1.0/24 10.98.2.0/24 10.98.3.0/24 10.99.0.0/24"
frr_zebra_conf ctl "$mode" > "$(frr_dir ctl)/zebra.conf"
frr_zebra_conf peer "$mode" > "$(frr_dir peer)/zebra.conf"
# shellcheck disable=SC2086
frr_bgpd_conf ipv4 peer 65002 10.1.0.2 10.1.0.1 65001 $peers > "$(frr_dir peer)/bgpd.conf"
frr_bgpd_conf ipv4 ctl 65001 10.1.0.1 10.1.0.2 65002 10.2.0.0/24 > "$(frr_dir ctl)/bgpd.conf"
t0=$(now_ms)
frr_start ctl "$ns_c" zebra
frr_start ctl "$ns_c" bgpd
frr_start peer "$ns_a" zebra
frr_start peer "$ns_a" bgpd

established() { vty ctl -c "show bgp neighbors 10.1.0.2 json" 2>/dev/null | grep -q '"bgpState":"Established"'; }
until_s 20 established || { vty ctl -c "show bgp summary" >&2; ctl show errors >&2; frr_logs; fail "BGP session not Established within 20 s"; }
t1=$(now_ms)
echo "bgp: ctl <-> peer Established $((t1 - t0)) ms after zebra started"

# ---- the learned routes in sluice's FIB ----
# shellcheck disable=SC2086
frr_wait 10 in bgp $peers || { ctl show ip fib >&2; ip -n "$ns_c" route >&2; ctl show lcp >&2; frr_logs; fail "the peer's routes not in sluice as bgp"; }
ctl show ip fib | grep -E "^(Prefix|10\.9[89]\.)"
echo "fib: 4 bgp routes in ctl's kernel $((kernel_ms - t1)) ms after Established, in sluice $((sluice_ms - kernel_ms)) ms later"
if [ "$mode" = nhobj ]; then
	ip -n "$ns_c" route show 10.99.0.0/24 | grep -q "nhid" || fail "mode nhobj: the kernel route has no nhid"
else
	ip -n "$ns_c" route show 10.99.0.0/24 | grep -q "nhid" && fail "mode no-nhobj: the kernel route has a nhid"
fi
echo "kernel: $(ip -n "$ns_c" route show 10.99.0.0/24)"
# The peer learned ctl's 10.2.0.0/24 back (the return path).
until_s 5 eval 'ip -n "$ns_a" route show 10.2.0.0/24 | grep -q "via 10.1.0.1"' || fail "peer did not learn 10.2.0.0/24"

# ---- h2 -> far through sluice ----
frr_forwarded

# ---- withdrawn at the peer: gone from sluice within 1 s of the kernel ----
withdraw=(-c "configure terminal" -c "router bgp 65002" -c "address-family ipv4 unicast")
for p in $peers; do withdraw+=(-c "no network $p"); done
vty peer "${withdraw[@]}" > "$tmp/vty" 2>&1 || { cat "$tmp/vty" >&2; fail "vtysh no network"; }
t3=$(now_ms)
# shellcheck disable=SC2086
frr_wait 5 out "" $peers || { ctl show ip fib >&2; fail "prefixes still in sluice 5 s after 'no network'"; }
echo "withdraw: gone from ctl's kernel $((kernel_ms - t3)) ms after vtysh returned, from sluice $((sluice_ms - kernel_ms)) ms later"
# sluice's part is what follows the kernel's table; FRR's own part (peer's
# bgpd, ctl's bgpd and zebra) takes 0.2 to 2 s on this shared 2-CPU box.
[ $((sluice_ms - kernel_ms)) -le 1000 ] ||
	fail "withdrawn prefixes left sluice $((sluice_ms - kernel_ms)) ms after the kernel's table, not within 1 s"
fib_route 10.2.0.0/24 > /dev/null || fail "sluice lost its connected 10.2.0.0/24"

ctl show lcp
ctl show errors | grep -E "lcp-|ip4-local"
frr_cleanup
netns_stop_sluice
echo "PASS ($mode)"
exit 0
