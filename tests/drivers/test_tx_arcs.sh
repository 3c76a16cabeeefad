#!/bin/bash
# Interfaces made at run time reach their driver's tx node. sluice starts
# with no interface; `create interface` then makes a null source and one
# interface of each software driver: null, pcap (a tx-file) and af-packet
# (a veth whose other end is in a namespace made here). A packet-generator
# stream of N frames enters through the source, cross-connected to each in
# turn. Expects:
#   - show graph json: before any interface, interface-output and
#     sched-egress have no arc to a tx node; after, each has one arc to
#     null-tx, pcap-tx and af-packet-tx (no more: interfaces of one driver
#     share it);
#   - show graph (text) and show graph dot: interface-output's arcs to the
#     three tx nodes, each with N packets;
#   - each interface's TX-packets grows by exactly N, none dropped; the
#     pcap tx-file holds N frames (tcpdump -r); the veth's other end counts
#     N frames received;
#   - no "no tx node" error; sluice exits 0 with every buffer returned.
# Needs root, ip, tcpdump, python3 (scripts/deps.sh test). Names carry the
# PID; the trap removes the namespace, the veth and sluice even on failure;
# every wait is bounded.
#
#   test_tx_arcs.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
N=100
ns_a=sluice-txa-$id
ns_b=
if_a=txa$id       # root end, opened by sluice (under 16 bytes)
if_b=
host_a=txa${id}h  # namespace end
tmp=$(mktemp -d /tmp/sluice-txa-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip tcpdump python3 timeout
ip netns add "$ns_a" || fail "ip netns add $ns_a"
ip link add "$if_a" type veth peer name "$host_a" netns "$ns_a" || fail "veth $if_a"
echo 1 > "/proc/sys/net/ipv6/conf/$if_a/disable_ipv6" || fail "disable IPv6 on $if_a"
ip link set "$if_a" up || fail "$if_a up"
ip netns exec "$ns_a" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$host_a/disable_ipv6 && ip link set $host_a up" ||
	fail "$host_a up in $ns_a"

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
CONF
netns_start_sluice

ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}

# The tx nodes NODE has arcs to, from show graph json, sorted, one line.
tx_arcs() {
	ctl show graph json | python3 -c '
import json, sys
node = sys.argv[1]
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == node:
        print(" ".join(sorted(a["name"] for a in n["next"] if a["name"].endswith("-tx"))))' "$1"
}

# "TX-packets TX-dropped" of interface $1.
tx_counters() {
	ctl show interface "$1" json | python3 -c '
import json, sys
d = json.load(sys.stdin)
if isinstance(d, dict) and "interfaces" in d:
    d = d["interfaces"]
if isinstance(d, list):
    d = d[0]
print(d["counters"]["TX-packets"], d["counters"]["TX-dropped"])'
}

host_rx() {
	ip netns exec "$ns_a" cat "/sys/class/net/$host_a/statistics/rx_packets"
}

# ---- no interface: no arc to a tx node ----
for sender in interface-output sched-egress; do
	arcs=$(tx_arcs "$sender") || fail "show graph json"
	[ -z "$arcs" ] || fail "$sender has tx arcs before any interface: $arcs"
done

# ---- one interface of each software driver, made at run time ----
ctl create interface src driver null > "$tmp/out" || { cat "$tmp/out" >&2; fail "create src"; }
src_index=$(sed -n 's/^src (index \([0-9]*\)).*/\1/p' "$tmp/out")
[ -n "$src_index" ] || { cat "$tmp/out" >&2; fail "no index for src"; }
ctl create interface n1 driver null > /dev/null || fail "create n1"
ctl create interface p1 driver pcap tx-file "$tmp/out.pcap" > /dev/null || fail "create p1"
ctl create interface a1 driver af-packet host-if "$if_a" > "$tmp/out" || { cat "$tmp/out" >&2; fail "create a1"; }
ctl set interface state src up > /dev/null || fail "src up"
for sender in interface-output sched-egress; do
	arcs=$(tx_arcs "$sender")
	[ "$arcs" = "af-packet-tx null-tx pcap-tx" ] || fail "$sender's tx arcs: '$arcs'"
done

# ---- N frames to each ----
rx0=$(host_rx)
for dst in n1 p1 a1; do
	ctl set interface l2 xconnect src "$dst" > /dev/null || fail "xconnect src $dst"
	ctl set interface state "$dst" up > /dev/null || fail "$dst up"
	ctl packet-generator new "to-$dst" limit "$N" rate 10000 size 64 rx-if "$src_index" > /dev/null ||
		fail "stream to-$dst"
	ctl packet-generator enable "to-$dst" > /dev/null || fail "enable to-$dst"
	tx=0
	for _ in $(seq 100); do
		read -r tx txdrop <<< "$(tx_counters "$dst")"
		[ "${tx:-0}" -ge "$N" ] && break
		sleep 0.1
	done
	echo "$dst: TX-packets $tx, TX-dropped $txdrop"
	[ "$tx" -eq "$N" ] && [ "$txdrop" -eq 0 ] || fail "$dst sent $tx of $N ($txdrop dropped)"
	ctl packet-generator delete "to-$dst" > /dev/null || fail "delete to-$dst"
done
rx1=$(host_rx)
echo "$host_a (in $ns_a): $((rx1 - rx0)) frames received"
[ $((rx1 - rx0)) -eq "$N" ] || fail "the veth's other end received $((rx1 - rx0)) frames, not $N"
ctl set interface state p1 down > /dev/null || fail "p1 down" # flushes the file
n_file=$(tcpdump -r "$tmp/out.pcap" -n 2> /dev/null | wc -l)
[ "$n_file" -eq "$N" ] || fail "the pcap tx-file holds $n_file frames, not $N"

# ---- the graph dumps show the arcs and what crossed them ----
ctl show graph > "$tmp/graph" || fail "show graph"
line=$(grep "^interface-output " "$tmp/graph")
for tx in null-tx pcap-tx af-packet-tx; do
	echo "$line" | grep -q "$tx ($N)" || { echo "$line" >&2; fail "show graph: no $tx ($N) after interface-output"; }
done
ctl show graph dot > "$tmp/dot" || fail "show graph dot"
for tx in null-tx pcap-tx af-packet-tx; do
	grep -q "\"interface-output\" -> \"$tx\" \[label=\"$N pkts\"" "$tmp/dot" ||
		{ grep interface-output "$tmp/dot" >&2; fail "show graph dot: no interface-output -> $tx"; }
done
ctl show errors > "$tmp/errors" || fail "show errors"
grep -q "no tx node" "$tmp/errors" && { cat "$tmp/errors" >&2; fail "packets dropped for want of a tx node"; }

# ---- shutdown ----
netns_stop_sluice
echo "PASS"
exit 0
