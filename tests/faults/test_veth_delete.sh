#!/bin/bash
# Fault: the veth under an af-packet interface is deleted while traffic
# runs, then made again. Two namespaces joined through sluice (af-packet a
# and b, cross-connected both ways, as tests/drivers/test_af_packet_xconnect),
# a ping at 200/s from a's host to b's running throughout. Expects:
#   - after `ip link del` of b's veth, `show interface` says b is no-link
#     within 3 s; b's RX-packets and TX-packets then stop (equal over 1 s
#     while the ping still sends), and what is sent to b counts TX-dropped;
#   - sluice keeps running: a's RX-packets still rise, `show threads` works;
#   - the veth made again under the same names (b's host keeps its MAC):
#     `set interface state b up` answers "b up", b is up, and pings from a
#     reach b again within 5 s; -c 20 then loses nothing;
#   - deleted again, `set interface state b up` is refused with "No such
#     device" and leaves b down;
#   - `show buffers`: nothing unattributed; SIGTERM: exit 0, every buffer
#     returned.
# Prints: time to no-link, drops while gone, recovery time (state up to the
# first answered ping). Needs root, ip, ping, python3. Names carry the PID;
# the trap removes namespaces, veths, ping and sluice even on failure.
#
#   test_veth_delete.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=flt-vd-a-$id
ns_b=flt-vd-b-$id
if_a=fltva$id
if_b=fltvb$id
host_a=fltva${id}h
host_b=fltvb${id}h
tmp=$(mktemp -d /tmp/flt-vd-XXXXXX)
ping_pid=
. "$(dirname "$0")/../lib/netns.sh"
cleanup() {
	[ -n "$ping_pid" ] && kill -KILL "$ping_pid" 2>/dev/null
	netns_cleanup
}
trap cleanup EXIT
netns_preflight ip ping python3 timeout
netns_make_pairs
netns_setup_l2_hosts 10.97.0.1 10.97.0.2
netns_xconnect_conf
netns_start_sluice

# "RX-packets TX-packets TX-dropped" of interface $1.
counters() {
	ctl show interface "$1" json | python3 -c '
import json, sys
c = json.load(sys.stdin)[0]["counters"]
print(c["RX-packets"], c["TX-packets"], c["TX-dropped"])'
}
# The State column of interface $1 in `show interface`.
state() {
	ctl show interface | awk -v n="$1" '$1 == n { print $3 }'
}

ip netns exec "$ns_a" ping -i 0.005 -w 60 -W 1 10.97.0.2 > "$tmp/ping_bg" 2>&1 &
ping_pid=$!
sleep 1
read -r b_rx0 b_tx0 _ <<< "$(counters b)"
[ "$b_rx0" -gt 0 ] && [ "$b_tx0" -gt 0 ] || fail "no traffic through b before the fault (rx $b_rx0 tx $b_tx0)"
[ "$(state b)" = up ] || fail "b is $(state b) before the fault"

# ---- the fault ----
t0=$(now_ms)
ip link del "$if_b" || fail "ip link del $if_b"
gone=
for _ in $(seq 30); do
	[ "$(state b)" = no-link ] && { gone=$(now_ms); break; }
	sleep 0.1
done
[ -n "$gone" ] || { ctl show interface >&2; fail "b not no-link 3 s after its veth was deleted"; }
echo "veth deleted: b no-link after $((gone - t0)) ms"
sleep 0.5 # what was in flight settles
read -r b_rx1 b_tx1 b_txdrop1 <<< "$(counters b)"
read -r a_rx1 _ <<< "$(counters a)"
sleep 1
read -r b_rx2 b_tx2 b_txdrop2 <<< "$(counters b)"
read -r a_rx2 _ <<< "$(counters a)"
kill -0 "$pid" 2>/dev/null || fail "sluice died after the veth was deleted"
echo "while gone (1 s): b RX-packets +$((b_rx2 - b_rx1)) TX-packets +$((b_tx2 - b_tx1)) TX-dropped +$((b_txdrop2 - b_txdrop1)), a RX-packets +$((a_rx2 - a_rx1))"
[ "$b_rx2" -eq "$b_rx1" ] || fail "b RX-packets still rising after its veth went ($b_rx1 -> $b_rx2)"
[ "$b_tx2" -eq "$b_tx1" ] || fail "b TX-packets still rising after its veth went ($b_tx1 -> $b_tx2)"
[ "$b_txdrop2" -gt "$b_txdrop1" ] || fail "what a sends to b is not counted as TX-dropped ($b_txdrop1 -> $b_txdrop2)"
[ "$a_rx2" -gt "$a_rx1" ] || fail "a stopped receiving while b was gone"
ctl show threads > "$tmp/threads" || fail "show threads while b is gone"
grep -q "stalled" "$tmp/threads" && { cat "$tmp/threads" >&2; fail "a thread stalled while b was gone"; }
ctl show hardware b | grep -q "host-if gone" || { ctl show hardware b >&2; fail "show hardware b does not say the host-if is gone"; }

# ---- the veth back ----
ip link add "$if_b" type veth peer name "$host_b" address "$mac_b" netns "$ns_b" || fail "veth $if_b again"
echo 1 > "/proc/sys/net/ipv6/conf/$if_b/disable_ipv6"
ip link set "$if_b" up || fail "$if_b up"
netns_setup_l2_host "$ns_b" "$host_b" 10.97.0.2
netns_neighbour "$ns_b" 10.97.0.1 "$mac_a" "$host_b"
t1=$(now_ms)
ctl set interface state b up > "$tmp/up" || { cat "$tmp/up" >&2; fail "set interface state b up"; }
grep -qx "b up" "$tmp/up" || { cat "$tmp/up" >&2; fail "set interface state b up said something else"; }
back=
for _ in $(seq 50); do
	ip netns exec "$ns_a" ping -c 1 -W 0.1 10.97.0.2 > /dev/null 2>&1 && { back=$(now_ms); break; }
done
[ -n "$back" ] || fail "no ping through b within 5 s of set interface state b up"
echo "recovered: first ping answered $((back - t1)) ms after set interface state b up"
[ "$(state b)" = up ] || fail "b is $(state b) after recovery"
kill -KILL "$ping_pid" 2>/dev/null
wait "$ping_pid" 2>/dev/null
ping_pid=
netns_ping_all "$ns_a" 10.97.0.2 20 "$tmp/ping" || { cat "$tmp/ping" >&2; fail "ping through the recovered b lost packets"; }
read -r b_rx3 b_tx3 _ <<< "$(counters b)"
[ "$b_rx3" -gt "$b_rx2" ] && [ "$b_tx3" -gt "$b_tx2" ] || fail "b counters did not move after recovery"

# Up while the host-if is gone: refused with the reason, the interface
# left down, sluice running.
ip link del "$if_b" || fail "ip link del $if_b (second time)"
ctl set interface state b up > "$tmp/up_gone" 2>&1
grep -q "cannot bring it up: No such device" "$tmp/up_gone" || { cat "$tmp/up_gone" >&2; fail "up with no host-if: no reason given"; }
[ "$(state b)" = down ] || fail "b is $(state b) after a refused up, expected down"
kill -0 "$pid" 2>/dev/null || fail "sluice died on a refused up"

assert_all_attributed

netns_stop_sluice
echo PASS
