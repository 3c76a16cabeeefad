#!/bin/bash
# The dispatch trace and `trace save FILE.pcapng` on sluice routing IPv4
# between two network namespaces (the set-up of tests/ip4/test_ip4_netns.sh):
#   host A 10.1.0.2/24 --veth-- [a 10.1.0.1/24  sluice  b 10.2.0.1/24] --veth-- host B 10.2.0.2/24
# Expects:
#   - `pcap dispatch trace on max 2000 file F buffer-trace af-packet-input 50`,
#     pings A -> B, a TCP stream that fills max (exactly 2000 records, the
#     stream complete), `off`: tshark reads F with no error; for one echo
#     request, the comments of its trace id give the node sequence
#     af-packet-input, ethernet-input, ip4-input, ip4-lookup, ip4-rewrite,
#     interface-output, af-packet-tx, the same nodes `show trace json` gives
#     for that packet number; the bytes at ip4-rewrite's successor have TTL
#     63, at ip4-input 64;
#   - a TTL 1 ping's request shows at error-drop with its error in the comment;
#   - `max 7` stops at exactly 7 records (status "done", tshark counts 7);
#   - `trace save FILE.pcapng` writes the packet trace tshark reads;
#   - a bad line prints usage and starts nothing; files stay under
#     cli-file-dir.
# Needs root, ip, ping, iperf3, tshark (scripts/deps.sh test). The trap removes
# namespaces, veths and sluice even on failure; every wait is bounded.
#
# With `dist` the same runs with the distributor and one worker: the
# packet's trace id stays the same across the handoff and its records
# change thread there.
#
#   test_dispatch_trace.sh SLUICE SLUICECTL [dist]
set -u
sluice=$1
sluicectl=$2
mode=${3:-plain}
id=$$
ns_a=sluice-dt-a-$id
ns_b=sluice-dt-b-$id
if_a=dta$id
if_b=dtb$id
host_a=dta${id}h
host_b=dtb${id}h
tmp=$(mktemp -d /tmp/sluice-dt-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping iperf3 tshark timeout
netns_make_pairs
netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
mkdir "$tmp/files"
cat > "$tmp/setup.cli" <<CLI
set interface ip address a 10.1.0.1/24
set interface ip address b 10.2.0.1/24
CLI
dist_conf=
if [ "$mode" = dist ]; then
	# One worker, on core 1 when there is one (it may share core 0 otherwise).
	worker=$(( $(nproc) >= 2 ? 1 : 0 ))
	dist_conf="cpu { corelist-workers $worker }
distributor { enable }"
fi
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli  cli-file-dir $tmp/files }
$dist_conf
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice
ctl() {
	timeout 10 "$sluicectl" -s "$tmp/cli.sock" "$@"
}
# Resolve both neighbours first, so that the traced pings are forwarded.
netns_ping_all "$ns_a" 10.2.0.2 3 "$tmp/ping0" || { cat "$tmp/ping0" >&2; fail "ping before the trace"; }

# ---- a bad line: usage, nothing started ----
ctl pcap dispatch trace on max 10 > "$tmp/bad" 2>&1 && fail "on without file accepted"
grep -q "usage\|pcap dispatch trace on max N file FILE" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "no usage"; }
ctl pcap dispatch trace on max 10 file /tmp/outside-$id.pcapng > "$tmp/bad2" 2>&1 &&
	fail "a file outside cli-file-dir accepted"
ctl show pcap dispatch trace | grep -q "off" || fail "a refused line started a trace"

# ---- the trace: pings A -> B ----
dt=$tmp/files/dt.pcapng
ctl pcap dispatch trace on max 2000 file "$dt" buffer-trace af-packet-input 50 > "$tmp/on" || { cat "$tmp/on" >&2; fail "on"; }
netns_ping_all "$ns_a" 10.2.0.2 3 "$tmp/ping" || { cat "$tmp/ping" >&2; fail "ping while tracing"; }
# TTL 1 in two fragments: the first becomes the time-exceeded (in place),
# the second may have no ICMP error (RFC 1812 4.3.2.7) and is dropped.
timeout 10 ip netns exec "$ns_a" ping -c 1 -t 1 -s 2000 -W 2 10.2.0.2 > "$tmp/ping_ttl" 2>&1
grep -q "Time to live exceeded" "$tmp/ping_ttl" || { cat "$tmp/ping_ttl" >&2; fail "no time-exceeded"; }
ctl show trace json > "$tmp/trace.json"
# A short TCP stream at full rate: it fills max (2000) and the trace stops
# on its own, with every byte of the stream delivered.
timeout 30 ip netns exec "$ns_b" iperf3 -s -B 10.2.0.2 -1 > "$tmp/iperf_server" 2>&1 &
iperf_pid=$!
for _ in $(seq 50); do
	ip netns exec "$ns_b" ss -ltn 2>/dev/null | grep -q "10.2.0.2:5201" && break
	sleep 0.1
done
timeout 30 ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -n 2M > "$tmp/iperf" 2>&1 ||
	{ cat "$tmp/iperf" >&2; fail "iperf3 TCP stream did not complete"; }
grep receiver "$tmp/iperf"
for _ in $(seq 50); do kill -0 "$iperf_pid" 2>/dev/null || break; sleep 0.1; done
iperf_pid=
for _ in $(seq 50); do ctl pcap dispatch trace status | grep -q "2000 written" && break; sleep 0.1; done
ctl show pcap dispatch trace > "$tmp/status"
cat "$tmp/status"
grep -q "done (max reached), 2000 of 2000 records, 2000 written" "$tmp/status" || fail "max 2000 not reached exactly"
ctl show pcap dispatch trace json > "$tmp/status.json"
ctl pcap dispatch trace off > "$tmp/off" || fail "off"
cat "$tmp/off"
grep -q "record(s) written to $dt" "$tmp/off" || fail "off did not report the file"

timeout 60 tshark -r "$dt" > "$tmp/tshark" 2> "$tmp/tshark_err" || { cat "$tmp/tshark_err" >&2; fail "tshark -r failed"; }
# As root tshark says so on stderr; anything else is a complaint about the file.
grep -v '^Running as user "root"' "$tmp/tshark_err" > "$tmp/tshark_err2"
[ -s "$tmp/tshark_err2" ] && { cat "$tmp/tshark_err2" >&2; fail "tshark complained"; }
n_rec=$(wc -l < "$tmp/tshark")
echo "tshark reads $n_rec records"
[ "$n_rec" -eq 2000 ] || fail "tshark reads $n_rec records, max was 2000"
timeout 60 tshark -r "$dt" -T fields -E separator='|' -e frame.interface_name -e frame.comment -e ip.ttl -e icmp.type \
	> "$tmp/fields" 2> /dev/null || fail "tshark -T fields"

# One echo request A -> B: the trace id of its ip4-input record with TTL 64.
tid=$(awk -F'|' '$1 == "ip4-input" && $3 == "64" && $4 == "8" {
	match($2, /trace-id [0-9]+/); print substr($2, RSTART + 9, RLENGTH - 9); exit }' "$tmp/fields")
[ -n "$tid" ] || { head -40 "$tmp/fields" >&2; fail "no echo request at ip4-input"; }
seq=$(awk -F'|' -v t="trace-id $tid " 'index($2 " ", t) { printf "%s ", $1 }' "$tmp/fields")
threads=$(awk -F'|' -v t="trace-id $tid " 'index($2 " ", t) { match($2, /thread [0-9]+/); printf "%s ", substr($2, RSTART + 7, RLENGTH - 7) }' "$tmp/fields")
echo "trace id $tid: $seq"
echo "threads: $threads"
if [ "$mode" = dist ]; then
	case "$seq" in
	"af-packet-input distributor ethernet-input ip4-input ip4-lookup ip4-rewrite interface-output af-packet-tx ") ;;
	*) fail "node sequence of trace id $tid: '$seq'" ;;
	esac
	case "$threads" in
	"0 0 1 1 1 1 1 1 ") ;;
	*) fail "trace id $tid did not change thread at the handoff: '$threads'" ;;
	esac
else
	case "$seq" in
	"af-packet-input ethernet-input ip4-input ip4-lookup ip4-rewrite interface-output af-packet-tx ") ;;
	*) fail "node sequence of trace id $tid: '$seq'" ;;
	esac
fi
ttl_in=$(awk -F'|' -v t="trace-id $tid " '$1 == "ip4-input" && index($2 " ", t) { print $3 }' "$tmp/fields")
ttl_out=$(awk -F'|' -v t="trace-id $tid " '$1 == "interface-output" && index($2 " ", t) { print $3 }' "$tmp/fields")
echo "TTL at ip4-input $ttl_in, at interface-output $ttl_out"
[ "$ttl_in" = 64 ] && [ "$ttl_out" = 63 ] || fail "TTL $ttl_in -> $ttl_out, expected 64 -> 63"
# show trace numbers its packets as the trace ids of traced packets.
want=$(python3 -c '
import json, sys
t = json.load(open(sys.argv[1]))
for p in t["packets"]:
    if p["packet"] == int(sys.argv[2]):
        print(" ".join(r["node"] for r in p["records"]) + " ")' "$tmp/trace.json" "$tid")
[ "$want" = "$seq" ] || fail "show trace json packet $tid: '$want', pcapng: '$seq'"
grep -q '"dropped":' "$tmp/status.json" || fail "status json"

# The TTL 1 fragment, dropped with its error; its path ends at error-drop
# after ip4-rewrite.
drop=$(grep '^error-drop|.*error "ip4-rewrite: no ICMP error allowed for the packet (dropped)"' "$tmp/fields" | head -1)
[ -n "$drop" ] || { grep error-drop "$tmp/fields" >&2; fail "no record of the TTL 1 fragment's drop"; }
echo "$drop"
dtid=$(echo "$drop" | sed 's/.*trace-id \([0-9]*\) .*/\1/')
dseq=$(awk -F'|' -v t="trace-id $dtid " 'index($2 " ", t) { printf "%s ", $1 }' "$tmp/fields")
echo "trace id $dtid: $dseq"
case "$dseq" in
*"ip4-lookup ip4-rewrite error-drop ") ;;
*) fail "dropped fragment's path: '$dseq'" ;;
esac

# ---- max 7: exactly 7 records, then done ----
ctl pcap dispatch trace on max 7 file "$tmp/files/seven.pcapng" > /dev/null || fail "on max 7"
netns_ping_all "$ns_a" 10.2.0.2 3 "$tmp/ping7" || fail "ping for max 7"
for _ in $(seq 50); do ctl pcap dispatch trace status | grep -q "7 written" && break; sleep 0.1; done
ctl pcap dispatch trace status | tee "$tmp/st7" | grep -q "done (max reached), 7 of 7 records, 7 written" ||
	{ cat "$tmp/st7" >&2; fail "status after max 7"; }
ctl pcap dispatch trace off > /dev/null || fail "off after max"
n7=$(timeout 30 tshark -r "$tmp/files/seven.pcapng" 2> /dev/null | wc -l)
[ "$n7" -eq 7 ] || fail "max 7: tshark counts $n7"

# ---- trace save FILE.pcapng ----
ctl trace save "$tmp/files/trace.pcapng" > "$tmp/save" || { cat "$tmp/save" >&2; fail "trace save"; }
cat "$tmp/save"
timeout 30 tshark -r "$tmp/files/trace.pcapng" -T fields -e frame.interface_name > "$tmp/saved" 2> /dev/null || fail "tshark trace save"
grep -q "^ip4-rewrite$" "$tmp/saved" || { head "$tmp/saved" >&2; fail "trace save: no ip4-rewrite record"; }

netns_stop_sluice
echo "PASS"
exit 0
