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
. "$(dirname "$0")/../lib/netns.sh"
. "$(dirname "$0")/../lib/frr.sh"
frr_bgp_init frr frr "$mode"

frr_topology

# ---- FRR ----
peers="10.98.1.0/24 10.98.2.0/24 10.98.3.0/24 10.99.0.0/24"
# shellcheck disable=SC2086
frr_bgp_start ipv4 "$mode" 10.1.0.1 10.1.0.2 10.1.0.1 10.1.0.2 10.2.0.0/24 $peers
frr_bgp_established 10.1.0.2

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
# shellcheck disable=SC2086
frr_bgp_withdraw ipv4 $peers
fib_route 10.2.0.0/24 > /dev/null || fail "sluice lost its connected 10.2.0.0/24"

ctl show lcp
ctl show errors | grep -E "lcp-|ip4-local"
frr_cleanup
netns_stop_sluice
echo "PASS ($mode)"
exit 0
