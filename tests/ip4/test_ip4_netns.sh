#!/bin/bash
# sluice as an IPv4 router between two network namespaces:
#   host A 10.1.0.2/24 --veth-- [a 10.1.0.1/24  sluice  b 10.2.0.1/24] --veth-- host B 10.2.0.2/24
# af-packet on the root-namespace ends, addresses set by `unix { exec }`,
# each host's default route via sluice. Nothing is pre-resolved: sluice
# answers the hosts' ARP and resolves them itself. Expects:
#   - A pings B with 0% loss;
#   - A pings 10.1.0.1 (answered by sluice's icmp4-echo);
#   - `ping -t 1` from A to B gets "Time to live exceeded" from 10.1.0.1;
#   - an iperf3 TCP run A -> B of 3 s completes;
#   - tcpdump in B sees A's packets with TTL 63 (A sends 64);
#   - show ip neighbors lists both hosts; `set ip neighbor` refuses a MAC
#     with a sign (usage, nothing added) and takes a good static one;
#     sluice exits 0 with every buffer returned.
# Needs root, ip, ping, iperf3, tcpdump (scripts/deps.sh test). Names carry
# the PID; the trap removes namespaces, veths, sluice, iperf3 and tcpdump
# even on failure; every wait is bounded.
#
#   test_ip4_netns.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-ip4-a-$id
ns_b=sluice-ip4-b-$id
if_a=ip4a$id      # root ends, opened by sluice (names stay under 16 bytes)
if_b=ip4b$id
host_a=ip4a${id}h # namespace ends
host_b=ip4b${id}h
tmp=$(mktemp -d /tmp/sluice-ip4-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping iperf3 tcpdump timeout
netns_make_pairs
setup_host() { # ns ifname address gateway
	ip netns exec "$1" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		ip link set lo up && ip addr add $3/24 dev $2 && ip link set $2 up &&
		ip route add default via $4" || fail "host $3 in $1"
}
setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1

# ---- sluice routing between them ----
cat > "$tmp/setup.cli" <<CLI
set interface ip address a 10.1.0.1/24
set interface ip address b 10.2.0.1/24
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice
ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}
ctl show ip interface > "$tmp/show" || fail "sluicectl show ip interface"
grep -q "10.1.0.1/24" "$tmp/show" && grep -q "10.2.0.1/24" "$tmp/show" || { cat "$tmp/show" >&2; fail "addresses not set"; }

# ---- A pings B across sluice (ARP both ways), then sluice itself ----
netns_ping_all "$ns_a" 10.2.0.2 20 "$tmp/ping"
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/ping" >&2; ctl show errors >&2; fail "ping A -> B lost packets (rc $rc)"; }
grep "rtt" "$tmp/ping"
netns_ping_all "$ns_a" 10.1.0.1 5 "$tmp/ping_gw"
rc=$?
[ "$rc" -eq 0 ] || { cat "$tmp/ping_gw" >&2; fail "ping A -> 10.1.0.1 lost packets (rc $rc)"; }
echo "ping 10.1.0.1: $(grep rtt "$tmp/ping_gw")"
ctl show ip neighbors > "$tmp/nbr"
cat "$tmp/nbr"
grep -q "10.1.0.2 .*reachable" "$tmp/nbr" && grep -q "10.2.0.2 .*reachable" "$tmp/nbr" || fail "neighbours not resolved"

# ---- set ip neighbor: a MAC with a sign is refused and changes nothing ----
ctl set ip neighbor b 10.2.0.9 -1:00:00:00:00:09 static > "$tmp/nbr_bad" 2>&1 &&
	fail "set ip neighbor took the MAC -1:00:00:00:00:09"
grep -q "set ip neighbor NAME A.B.C.D|X:X::X:X MAC" "$tmp/nbr_bad" || { cat "$tmp/nbr_bad" >&2; fail "no usage for a bad MAC"; }
ctl set ip neighbor b 10.2.0.9 02:00:00:00:00:09 static > /dev/null || fail "set ip neighbor with a good MAC"
ctl show ip neighbors > "$tmp/nbr"
grep -q "10.2.0.9 .*02:00:00:00:00:09" "$tmp/nbr" || { cat "$tmp/nbr" >&2; fail "static neighbour 10.2.0.9 missing"; }
[ "$(grep -c "10.2.0.9 " "$tmp/nbr")" -eq 1 ] || fail "10.2.0.9 listed more than once"

# ---- TTL 1: time-exceeded from sluice ----
timeout 10 ip netns exec "$ns_a" ping -c 1 -t 1 -W 2 10.2.0.2 > "$tmp/ping_ttl" 2>&1
grep -q "From 10.1.0.1 .*Time to live exceeded" "$tmp/ping_ttl" || { cat "$tmp/ping_ttl" >&2; fail "no time-exceeded from 10.1.0.1"; }
echo "ttl 1: $(grep 'Time to live' "$tmp/ping_ttl")"

# ---- TTL as B sees it: one less than A sent ----
timeout 15 ip netns exec "$ns_b" tcpdump -i "$host_b" -n -v -c 3 "icmp and src host 10.1.0.2" \
	> "$tmp/tcpdump" 2> "$tmp/tcpdump_err" &
dump_pid=$!
wait_for_line "listening on" 50 "$tmp/tcpdump_err" || fail "tcpdump did not start"
timeout 10 ip netns exec "$ns_a" ping -c 3 -i 0.1 -t 64 -W 2 10.2.0.2 > /dev/null 2>&1
for _ in $(seq 50); do kill -0 "$dump_pid" 2>/dev/null || break; sleep 0.1; done
kill "$dump_pid" 2>/dev/null
wait "$dump_pid" 2>/dev/null
dump_pid=
n_ttl=$(grep -c "ttl 63," "$tmp/tcpdump")
echo "tcpdump in B: $n_ttl of 3 echo requests with ttl 63"
[ "$n_ttl" -eq 3 ] || { cat "$tmp/tcpdump" >&2; fail "B did not see TTL 63 (A sent 64)"; }

# ---- iperf3 TCP, A -> B ----
timeout 30 ip netns exec "$ns_b" iperf3 -s -B 10.2.0.2 -1 > "$tmp/iperf_server" 2>&1 &
iperf_pid=$!
for _ in $(seq 50); do
	ip netns exec "$ns_b" ss -ltn 2>/dev/null | grep -q "10.2.0.2:5201" && break
	sleep 0.1
done
timeout 30 ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -t 3 > "$tmp/iperf" 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "receiver" "$tmp/iperf" || { cat "$tmp/iperf" >&2; fail "iperf3 TCP run did not complete (rc $rc)"; }
grep "receiver" "$tmp/iperf"
for _ in $(seq 50); do kill -0 "$iperf_pid" 2>/dev/null || break; sleep 0.1; done
iperf_pid=
ctl show errors > "$tmp/errors" 2>&1 && grep -E "ip4|arp|icmp" "$tmp/errors"

# ---- shutdown ----
netns_stop_sluice
echo "PASS"
exit 0
