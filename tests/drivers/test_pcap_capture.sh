#!/bin/bash
# `pcap capture` on a running af-packet path: two network namespaces joined
# through sluice (the set-up of test_af_packet_xconnect.sh: af-packet on the
# root ends of two veth pairs, cross-connected both ways, IPv6 off and
# static neighbours, so nothing but the ping crosses). Expects:
#   - `pcap capture rx interface a max 10 file F` during `ping -c 20`: F is
#     complete without `pcap capture off` (the pcap-capture node writes it
#     once 10 are captured) and `tcpdump -r F` reads exactly 10 ICMP echo
#     requests from 10.99.0.1; `pcap capture off` then reports 10 written;
#   - `pcap capture tx interface a max 100 file G`, another ping -c 20, then
#     `pcap capture off`: G holds exactly the 20 echo replies sent on a;
#   - bad spellings print usage, refused captures an error, and neither
#     changes anything; sluice exits 0 on
#     SIGTERM with every buffer returned.
# Needs root, ip, ping, tcpdump. The trap removes namespaces, veths and
# sluice even on failure; every wait is bounded.
#
#   test_pcap_capture.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-cap-a-$id
ns_b=sluice-cap-b-$id
if_a=capa$id
if_b=capb$id
host_a=capa${id}h
host_b=capb${id}h
tmp=$(mktemp -d /tmp/sluice-cap-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping tcpdump timeout
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
set interface l2 xconnect a b
set interface l2 xconnect b a
CLI
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice

ctl() { timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@" > "$tmp/out" 2>&1; }
ok() { ctl "$@" || { cat "$tmp/out" >&2; fail "'$*' failed"; }; }
bad() {
	if ctl "$@"; then fail "'$*' succeeded"; fi
	grep -q "^usage: " "$tmp/out" || { cat "$tmp/out" >&2; fail "'$*' printed no usage"; }
}
# Well spelt but refused: non-zero and an error line.
refused() {
	if ctl "$@"; then fail "'$*' succeeded"; fi
	grep -q "^error: " "$tmp/out" || { cat "$tmp/out" >&2; fail "'$*' printed no error"; }
}
ping20() {
	netns_ping_all "$ns_a" 10.99.0.2 20 "$tmp/ping" || { cat "$tmp/ping" >&2; fail "ping lost packets"; }
}
# Packets tcpdump reads from $1 with filter $2 (tcpdump's stderr in $tmp/dump_err).
count() {
	timeout 10 tcpdump -nn -r "$1" "$2" 2> "$tmp/dump_err" | wc -l
}

# ---- bad spellings change nothing ----
bad pcap capture
bad pcap capture rx
bad pcap capture rx max 10
bad pcap capture rx file "$tmp/x.pcap"
bad pcap capture rx max 0 file "$tmp/x.pcap"
bad pcap capture rx max ten file "$tmp/x.pcap"
bad pcap capture rx interface zz max 10 file "$tmp/x.pcap"
bad pcap capture sideways max 10 file "$tmp/x.pcap"
refused pcap capture rx max 10 file /nonexistent-dir/x.pcap
refused pcap capture off
[ -e "$tmp/x.pcap" ] && fail "a refused capture made its file"
ok pcap capture status
grep -q "pcap capture: off" "$tmp/out" || fail "status after refusals: $(cat "$tmp/out")"

# ---- rx on a, max 10, written without `off` ----
ok pcap capture rx interface a max 10 file "$tmp/rx.pcap"
grep -q "up to 10 packet(s)" "$tmp/out" || fail "capture start: $(cat "$tmp/out")"
refused pcap capture tx max 5 file "$tmp/other.pcap" # one at a time
ping20
done_=
for _ in $(seq 50); do
	ctl pcap capture status && grep -q "done, 10 of 10 captured, 10 written" "$tmp/out" && { done_=1; break; }
	sleep 0.1
done
[ -n "$done_" ] || fail "capture not written within 5 s: $(cat "$tmp/out")"
n=$(count "$tmp/rx.pcap" "")
[ "$n" -eq 10 ] || { cat "$tmp/dump_err" >&2; fail "tcpdump -r reads $n packets, expected 10"; }
n=$(count "$tmp/rx.pcap" "icmp[icmptype] == icmp-echo and src host 10.99.0.1 and dst host 10.99.0.2")
[ "$n" -eq 10 ] || fail "$n of 10 captured packets are echo requests from 10.99.0.1"
ok pcap capture off
grep -q "10 packet(s) written to $tmp/rx.pcap" "$tmp/out" || fail "capture off: $(cat "$tmp/out")"
echo "rx capture: 10 of 20 echo requests captured on a, tcpdump reads 10"

# ---- tx on a, stopped by `off` ----
ok pcap capture tx interface a max 100 file "$tmp/tx.pcap"
ping20
ok pcap capture off
grep -q "20 packet(s) written" "$tmp/out" || fail "tx capture off: $(cat "$tmp/out")"
n=$(count "$tmp/tx.pcap" "icmp[icmptype] == icmp-echoreply and src host 10.99.0.2")
[ "$n" -eq 20 ] || fail "tx capture: $n echo replies, expected 20"
[ "$(count "$tmp/tx.pcap" "")" -eq 20 ] || fail "tx capture holds other packets"
echo "tx capture: the 20 echo replies sent on a"

# ---- shutdown ----
netns_stop_sluice
echo "PASS"
exit 0
