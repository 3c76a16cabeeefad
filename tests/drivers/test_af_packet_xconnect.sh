#!/bin/bash
# Real traffic through sluice: two network namespaces, each a host on
# 10.99.0.0/24 behind a veth pair whose root-namespace end sluice opens with
# the af-packet driver, the two interfaces cross-connected both ways (by CLI
# commands from `unix { exec }`). Expects:
#   - ping -c 20 -i 0.05 from one host to the other: 0% loss;
#   - with IPv6 off on every veth end and static neighbour entries in both
#     hosts (so nothing but the ping crosses), the RX-packets and TX-packets
#     of both interfaces grow by exactly 20 during the ping;
#   - an iperf3 TCP run of 5 s completes (hosts keep their checksum and TSO
#     offloads: the driver completes checksums and segments GSO frames);
#   - tcpdump in the receiving host finds those TCP checksums correct;
#   - sluice exits 0 on SIGTERM with every buffer returned.
# One interface uses 2 rx queues (PACKET_FANOUT). Needs root, ip, ping,
# iperf3, tcpdump and python3 (scripts/deps.sh test). Names carry the PID;
# the trap removes namespaces, veths, sluice, iperf3 and tcpdump even on
# failure; every wait is bounded.
#
#   test_af_packet_xconnect.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-afp-a-$id
ns_b=sluice-afp-b-$id
if_a=afpa$id      # root ends, opened by sluice (names stay under 16 bytes)
if_b=afpb$id
host_a=afpa${id}h # namespace ends
host_b=afpb${id}h
tmp=$(mktemp -d /tmp/sluice-afp-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping iperf3 tcpdump python3 timeout
netns_make_pairs
setup_host() { # ns ifname address
	ip netns exec "$1" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		ip link set lo up && ip addr add $3/24 dev $2 && ip link set $2 up" || fail "host $3 in $1"
}
setup_host "$ns_a" "$host_a" 10.99.0.1
setup_host "$ns_b" "$host_b" 10.99.0.2
mac_a=$(ip netns exec "$ns_a" cat "/sys/class/net/$host_a/address")
mac_b=$(ip netns exec "$ns_b" cat "/sys/class/net/$host_b/address")
ip netns exec "$ns_a" ip neigh add 10.99.0.2 lladdr "$mac_b" dev "$host_a" nud permanent || fail "neighbour in $ns_a"
ip netns exec "$ns_b" ip neigh add 10.99.0.1 lladdr "$mac_a" dev "$host_b" nud permanent || fail "neighbour in $ns_b"

# ---- sluice between them ----
cat > "$tmp/setup.cli" <<CLI
# both directions of the cross-connect
set interface l2 xconnect a b
set interface l2 xconnect b a
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b  rx-queues 2 }
}
CONF
netns_start_sluice

ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}
# "RX-packets TX-packets" of interface $1, from show interface json.
counters() {
	ctl show interface "$1" json | python3 -c '
import json, sys
d = json.load(sys.stdin)
if isinstance(d, dict) and "interfaces" in d:
    d = d["interfaces"]
if isinstance(d, list):
    d = d[0]
c = d["counters"]
print(c["RX-packets"], c["TX-packets"], c["RX-dropped"], c["RX-errors"], c["TX-dropped"])'
}
ctl show interface > "$tmp/show" || fail "sluicectl show interface"
grep -q "l2-xconnect" "$tmp/show" || { cat "$tmp/show" >&2; fail "interfaces are not cross-connected"; }
read -r a_rx0 a_tx0 _ <<< "$(counters a)" || fail "counters of a"
read -r b_rx0 b_tx0 _ <<< "$(counters b)" || fail "counters of b"
[ -n "$a_rx0" ] && [ -n "$b_rx0" ] || fail "no counters from show interface json"

# ---- ping ----
netns_ping_all "$ns_a" 10.99.0.2 20 "$tmp/ping"
ping_rc=$?
[ "$ping_rc" -eq 0 ] || { cat "$tmp/ping" >&2; fail "ping lost packets (rc $ping_rc)"; }
grep "rtt" "$tmp/ping"
read -r a_rx1 a_tx1 a_drop a_err a_txdrop <<< "$(counters a)"
read -r b_rx1 b_tx1 b_drop b_err b_txdrop <<< "$(counters b)"
echo "ping: a rx +$((a_rx1 - a_rx0)) tx +$((a_tx1 - a_tx0)), b rx +$((b_rx1 - b_rx0)) tx +$((b_tx1 - b_tx0))"
[ $((a_rx1 - a_rx0)) -eq 20 ] || fail "a RX-packets grew by $((a_rx1 - a_rx0)), not 20"
[ $((a_tx1 - a_tx0)) -eq 20 ] || fail "a TX-packets grew by $((a_tx1 - a_tx0)), not 20"
[ $((b_rx1 - b_rx0)) -eq 20 ] || fail "b RX-packets grew by $((b_rx1 - b_rx0)), not 20"
[ $((b_tx1 - b_tx0)) -eq 20 ] || fail "b TX-packets grew by $((b_tx1 - b_tx0)), not 20"

# ---- iperf3 TCP, 5 s ----
timeout 30 ip netns exec "$ns_b" iperf3 -s -B 10.99.0.2 -1 > "$tmp/iperf_server" 2>&1 &
iperf_pid=$!
for _ in $(seq 50); do
	ip netns exec "$ns_b" ss -ltn 2>/dev/null | grep -q "10.99.0.2:5201" && break
	sleep 0.1
done
# The receiving host's veth takes checksums on trust, so tcpdump checks
# those of the segments sluice completed and cut.
timeout 20 ip netns exec "$ns_b" tcpdump -i "$host_b" -n -vv -c 300 "tcp and src host 10.99.0.1" \
	> "$tmp/tcpdump" 2> "$tmp/tcpdump_err" &
dump_pid=$!
for _ in $(seq 50); do
	grep -q "listening on" "$tmp/tcpdump_err" 2>/dev/null && break
	sleep 0.1
done
timeout 30 ip netns exec "$ns_a" iperf3 -c 10.99.0.2 -t 5 -J > "$tmp/iperf.json" 2>&1
iperf_rc=$?
wait "$dump_pid"
dump_pid=
[ "$iperf_rc" -eq 0 ] || { cat "$tmp/iperf.json" >&2; fail "iperf3 TCP run did not complete (rc $iperf_rc)"; }
python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["end"]
s, c = r["sum_sent"], r["sum_received"]
print("iperf3: %.1f s, sent %.2f Gbit/s (%d retransmits), received %.2f Gbit/s" % (
    c["seconds"], s["bits_per_second"] / 1e9, s.get("retransmits", 0), c["bits_per_second"] / 1e9))
sys.exit(0 if c["bytes"] > 0 and c["seconds"] >= 4.5 else 1)' "$tmp/iperf.json" || fail "iperf3 received nothing"
for _ in $(seq 50); do kill -0 "$iperf_pid" 2>/dev/null || break; sleep 0.1; done
iperf_pid=
n_ok=$(grep -c "cksum 0x[0-9a-f]* (correct)" "$tmp/tcpdump")
n_bad=$(grep -c "(incorrect" "$tmp/tcpdump")
echo "tcpdump: $n_ok TCP checksums correct, $n_bad incorrect"
[ "$n_bad" -eq 0 ] && [ "$n_ok" -ge 100 ] || { head -20 "$tmp/tcpdump" >&2; fail "TCP checksums after sluice: $n_ok correct, $n_bad incorrect"; }
for n in a b; do
	echo "$n: $(ctl show interface "$n" | tail -n +2)"
done

# ---- shutdown ----
netns_stop_sluice
echo "PASS"
exit 0
