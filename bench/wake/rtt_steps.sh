#!/bin/bash
# Where a ping's round trip across sluice goes: a diagnostic beside
# bench/wake (docs/power.md, "Where the latency goes"). Not a comparison
# row: it prints one table.
#
#   bench/wake/rtt_steps.sh SLUICE SLUICECTL [CPU-LINES]
#
# sluice routes A 10.1.0.2 -> a | sluice | b -> B 10.2.0.2 over af-packet
# (tests/lib/netns.sh, as tests/integration/test_idle.sh). CPU-LINES are
# startup.conf lines (default "cpu { rx-mode adaptive }"; with a worker:
# "cpu { corelist-workers 1  rx-mode adaptive }  distributor { enable }").
# PINGS pings (default 40) at 20/s from A, with
#   - tcpdump on A's veth end (kernel timestamps, ns): the request leaving
#     A and the reply coming back;
#   - sluice's dispatch trace (pcap dispatch trace: every node's input,
#     stamped from the cycle counter as wall-clock ns, with its thread);
# and prints, per step of the request and of the reply (node and thread, in
# the order visited), the median time since the request left A over all
# pings, and the median RTT on A's wire. The two clocks are the same wall
# clock read two ways (the kernel's, and the cycle counter converted): a
# few microseconds of offset between them are possible.
# Needs root, ip, ping, tcpdump, tshark.
set -u
sluice=$1
sluicectl=$2
cpu_lines=${3:-"cpu { rx-mode adaptive }"}
PINGS=${PINGS:-40}
. "$(dirname "$0")/../../tests/lib/netns.sh"
netns_names rttst
netns_preflight ip ping tcpdump tshark
dump_b=
trap '[ -z "$dump_b" ] || kill -KILL "$dump_b" 2>/dev/null; netns_cleanup' EXIT
ctl() { "$sluicectl" -s "$tmp/cli.sock" "$@"; }

netns_make_pairs
netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
printf 'set interface ip address a 10.1.0.1/24\nset interface ip address b 10.2.0.1/24\n' > "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli  cli-file-dir $tmp }
$cpu_lines
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF
if [ "${NICED:-0}" = 1 ]; then netns_start_sluice_niced; else netns_start_sluice; fi
netns_ping_all "$ns_a" 10.2.0.2 5 "$tmp/warm" || fail "warm-up ping lost"

ip netns exec "$ns_a" tcpdump -i "$host_a" -n -w "$tmp/a.pcap" --time-stamp-precision=nano icmp 2> "$tmp/dump.err" &
dump_pid=$!
wait_for_line "listening" 50 "$tmp/dump.err" || fail "tcpdump did not start"
ip netns exec "$ns_b" tcpdump -i "$host_b" -n -w "$tmp/b.pcap" --time-stamp-precision=nano icmp 2> "$tmp/dumpb.err" &
dump_b=$!
wait_for_line "listening" 50 "$tmp/dumpb.err" || fail "tcpdump in B did not start"
ctl clear runtime > /dev/null
[ "${NOTRACE:-0}" = 1 ] || ctl pcap dispatch trace on max 100000 file "$tmp/d.pcapng" max-bytes-per-pkt 128 > /dev/null || fail "dispatch trace on"
timeout 30 ip netns exec "$ns_a" ping -c "$PINGS" -i 0.05 -W 1 10.2.0.2 > "$tmp/ping" 2>&1
ctl pcap dispatch trace off > /dev/null
sleep 0.3
kill -INT "$dump_pid" "$dump_b"
wait "$dump_b" 2>/dev/null
dump_b=
wait "$dump_pid" 2>/dev/null
dump_pid=
load=$(cut -d' ' -f1-3 /proc/loadavg)
ctl show threads > "$tmp/threads"
netns_stop_sluice

tshark -r "$tmp/a.pcap" -T fields -e frame.time_epoch -e icmp.type -e icmp.seq > "$tmp/a.txt" 2>/dev/null
tshark -r "$tmp/b.pcap" -T fields -e frame.time_epoch -e icmp.type -e icmp.seq > "$tmp/b.txt" 2>/dev/null
tshark -r "$tmp/d.pcapng" -T fields -e frame.time_epoch -e frame.comment -e icmp.type -e icmp.seq \
	-Y "icmp" > "$tmp/d.txt" 2>/dev/null
python3 - "$tmp/a.txt" "$tmp/d.txt" "$cpu_lines" "$load" "$tmp/b.txt" <<'PY'
import statistics, sys
from decimal import Decimal
sent, back = {}, {}
for line in open(sys.argv[1]):
    f = line.split("\t")
    if len(f) < 3 or not f[2].strip():
        continue
    t, typ, seq = Decimal(f[0]), int(f[1]), int(f[2].split(",")[0])
    (sent if typ == 8 else back)[seq] = t
steps = {}
for line in open(sys.argv[5]):
    f = line.split("\t")
    if len(f) < 3 or not f[2].strip():
        continue
    t, typ, seq = Decimal(f[0]), int(f[1]), int(f[2].split(",")[0])
    if seq in sent:
        steps.setdefault(seq, []).append((t, ("request" if typ == 8 else "reply", "(on B's wire)", "")))
for line in open(sys.argv[2]):
    f = line.rstrip("\n").split("\t")
    if len(f) < 4 or not f[3].strip():
        continue
    t, comment, typ, seq = Decimal(f[0]), f[1].split(), int(f[2].split(",")[0]), int(f[3].split(",")[0])
    node, thread = comment[1], comment[3]
    if seq not in sent:
        continue
    key = ("request" if typ == 8 else "reply", node, thread)
    steps.setdefault(seq, []).append((t, key))
order, per = [], {}
for seq, recs in steps.items():
    seen = set()
    for t, key in sorted(recs):
        if key in seen:
            continue
        seen.add(key)
        if key not in order:
            order.append(key)
        per.setdefault(key, []).append(float(t - sent[seq]) * 1e6)
rtt = [float(back[s] - sent[s]) * 1e6 for s in sent if s in back]
print(f"rtt steps: {sys.argv[3]}; {len(rtt)} pings; load {sys.argv[4]}")
print(f"{'direction':10} {'node':24} {'thread':7} {'median us since the request left A':>36} {'pings':>6}")
for key in sorted(order, key=lambda k: statistics.median(per[k])):
    print(f"{key[0]:10} {key[1]:24} {key[2]:7} {statistics.median(per[key]):36.1f} {len(per[key]):6}")
print(f"{'reply':10} {'(back on A wire)':24} {'':7} {statistics.median(rtt):36.1f} {len(rtt):6}")
PY
echo "ping: $(grep rtt "$tmp/ping")"; [ "${SHOWPING:-0}" = 1 ] && cat "$tmp/ping"
echo "show threads over the pings (wakeups since start):"
cat "$tmp/threads"
