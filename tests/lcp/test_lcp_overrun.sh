#!/bin/bash
# linux-cp's netlink listener losing notifications (ENOBUFS) while routes
# of both families are added and deleted: every resync must leave sluice's
# FIB exactly the kernel's table, IPv4 and IPv6.
#
#   [a  sluice] -- TAP -- s-eth0 in ctl (10.1.0.1/24, 2001:db8:1::1/64 from Linux)
#
# Expects:
#   - paused: sluice stopped (SIGSTOP: its listener reads nothing), 12,000
#     IPv4 and 6,000 IPv6 routes added and 2/3 of them deleted again in
#     ctl, so the notification socket (netlink-rx-buffer 4 MB) fills with
#     thousands of adds and loses the deletes that follow (and everything
#     after: once overrun, a netlink socket drops every notification
#     silently until its queue is read empty). Continued, sluice sees
#     ENOBUFS, resyncs, and holds exactly the kernel's 4,000 + 2,000
#     routes: none of the queued adds whose deletes were lost comes back;
#   - racing: `lcp resync` every 20 ms while one `ip -batch` re-adds
#     deleted routes and deletes others of both families: each dump's
#     sweep and the notifications applied after it leave both FIBs equal
#     to the kernel's tables;
#   - in flight: a 4 KB buffer (a few notifications), adds, deletes and
#     re-adds of both families from two `ip -batch` at once, the listener
#     overrun again and again while it dumps: after the load, sluice's
#     IPv4 and IPv6 FIBs equal the kernel's tables;
#   - `show lcp json` counts the overruns (enobufs) and the resyncs, and
#     the stats segment (sluice-stats dump) has the same counters under
#     /lcp/netlink/ (overruns, resyncs, routes, routes6, applied by kind).
# Needs root, ip, python3. The trap removes namespaces, veths and sluice
# even on failure (and continues a stopped sluice first); every wait is
# bounded. About 40 s on a loaded 2-vCPU box.
#
#   test_lcp_overrun.sh SLUICE SLUICECTL SLUICE_STATS
set -u
sluice=$1
sluicectl=$2
stats=$3
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib/netns.sh"
netns_lcp_names or
trap '[ -n "$pid" ] && kill -CONT "$pid" 2>/dev/null; ip netns del "$ns_c" 2>/dev/null; netns_cleanup' EXIT
netns_preflight ip timeout python3
[ -x "$stats" ] || fail "sluice-stats not found: $stats"
netns_make_pairs
ip netns add "$ns_c" || fail "ip netns add $ns_c"
ip -n "$ns_c" link set lo up

kernel_n() { # family: the kernel's routes that sluice maps (all but proto kernel)
	ip "-$1" -n "$ns_c" route show table main | grep -vc "proto kernel"
}
# settled: sluice holds as many routes of each family as the kernel, and
# still does half a second later (a resync's sweep runs in steps)
counts_equal() {
	[ "$(netns_lcp_num linux_routes)" = "$(kernel_n 4)" ] && [ "$(netns_lcp_num linux_routes6)" = "$(kernel_n 6)" ]
}
settle() { # seconds
	local i
	for i in $(seq $(($1 * 5))); do
		if counts_equal; then
			sleep 0.5
			counts_equal && return 0
		fi
		sleep 0.2
	done
	return 1
}
# fib_equal WHAT: both families' FIBs, compared whole with the kernel's tables
fib_equal() {
	local f
	for f in 4 6; do
		ip "-$f" -j -n "$ns_c" route show table main > "$tmp/kernel$f.json" || fail "ip -$f -j route show"
		timeout 60 "$sluicectl" -s "$tmp/cli.sock" show "$([ $f = 4 ] && echo ip || echo ip6)" fib json \
			> "$tmp/fib$f.json" || fail "show ip fib json ($f)"
		echo -n "IPv$f $1: "
		python3 "$here/lcp_fib_equal.py" "$tmp/kernel$f.json" "$tmp/fib$f.json" ||
			{ ctl show lcp >&2; fail "sluice's IPv$f FIB is not the kernel's table $1"; }
	done
}
start() { # rx-buffer
	netns_lcp_nl_conf "$1"
	netns_start_sluice
	ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0 || fail "addr add in ctl"
	ip -n "$ns_c" addr add 2001:db8:1::1/64 dev s-eth0 nodad || fail "addr add -6 in ctl"
	until_s 5 eval 'ctl show ip interface | grep -q 10.1.0.1/24' || fail "a did not get 10.1.0.1/24 from Linux"
	until_s 5 eval 'ctl show ip6 interface | grep -q 2001:db8:1::1/64' || fail "a did not get 2001:db8:1::1/64"
}
until_s() { # seconds cmd...: bounded retry, cmd read on each try
	local n=$1 i
	shift
	for i in $(seq $((n * 10))); do "$@" && return 0; sleep 0.1; done
	return 1
}

python3 "$here/lcp_routes.py" 12000 31 10.1.0.2 s-eth0 "$tmp/p4" || fail "route set"
python3 "$here/lcp_routes.py" 6000 32 2001:db8:1::2 s-eth0 "$tmp/p6" || fail "route set (IPv6)"
# the first 2/3 deleted again: their adds sit in the full queue, their deletes are lost
head -8000 "$tmp/p4.del" > "$tmp/p4.del2"
head -4000 "$tmp/p6.del" > "$tmp/p6.del2"

# ---- paused: the queue full of adds whose deletes were lost ----
start 4194304
sleep 1.2 # a resync soon after another backs off first (and drains meanwhile): not this one
kill -STOP "$pid" || fail "SIGSTOP sluice"
# the adds of both families in turn, so the queue holds both
awk '{ print } (getline l < f) > 0 { print l }' f="$tmp/p6.add" "$tmp/p4.add" > "$tmp/p.add"
for f in p.add p4.del2 p6.del2; do
	ip -n "$ns_c" -batch "$tmp/$f" || { kill -CONT "$pid"; fail "ip -batch $f"; }
done
echo "paused: kernel holds $(kernel_n 4) IPv4 and $(kernel_n 6) IPv6 routes (12,000 and 6,000 added, 8,000 and 4,000 deleted)"
# /proc/net/netlink: the listener's socket in ctl (NETLINK_ROUTE, groups joined): its drops
drops=$(ip netns exec "$ns_c" awk '$2 == 0 && $4 != "00000000" { print $9 }' /proc/net/netlink | head -1)
[ "${drops:-0}" -gt 0 ] || { kill -CONT "$pid"; fail "the notification socket dropped nothing: the test did not test it"; }
kill -CONT "$pid" || fail "SIGCONT sluice"
settle 30 || echo "sluice: $(netns_lcp_num linux_routes) IPv4, $(netns_lcp_num linux_routes6) IPv6 routes; kernel $(kernel_n 4), $(kernel_n 6)"
fib_equal "after the paused listener's overrun"
[ "$(netns_lcp_num enobufs)" -gt 0 ] || fail "no overrun counted: the test did not test it"
[ "$(netns_lcp_num resyncs)" -gt 0 ] || fail "an overrun but no resync counted"
echo "paused: the socket dropped $drops notifications; $(netns_lcp_num enobufs) overrun(s), $(netns_lcp_num resyncs) resync(s), $(netns_lcp_num swept) swept"

# ---- resyncs racing the changes: `lcp resync` while deletes and re-adds run ----
# The notifications that arrive during a dump are held and applied after
# its sweep, in order: a delete of a route the dump already showed, a
# re-add of one it did not, must each end as the kernel has it.
{ awk 'NR <= 4000' "$tmp/p4.add"; awk 'NR > 8000 && NR <= 10000' "$tmp/p4.del"; } > "$tmp/r4"
{ awk 'NR <= 2000' "$tmp/p6.add"; awk 'NR > 4000 && NR <= 5000' "$tmp/p6.del"; } > "$tmp/r6"
awk '{ print } (getline l < f) > 0 { print l }' f="$tmp/r6" "$tmp/r4" > "$tmp/r.mix"
r0=$(netns_lcp_num resyncs)
ip -n "$ns_c" -batch "$tmp/r.mix" > "$tmp/batch.out" 2>&1 & bpid=$!
for _ in $(seq 100); do
	ctl lcp resync > /dev/null || fail "lcp resync"
	kill -0 "$bpid" 2>/dev/null || break
	sleep 0.02
done
wait "$bpid" || { cat "$tmp/batch.out" >&2; fail "ip -batch r.mix"; }
settle 30 || echo "sluice: $(netns_lcp_num linux_routes) IPv4, $(netns_lcp_num linux_routes6) IPv6 routes; kernel $(kernel_n 4), $(kernel_n 6)"
fib_equal "after resyncs racing deletes and re-adds"
[ "$(netns_lcp_num resyncs)" -gt "$r0" ] || fail "lcp resync: no resync counted"
echo "racing: $(($(netns_lcp_num resyncs) - r0)) resync(s) during the batch, both FIBs the kernel's after"
netns_stop_sluice

# ---- in flight: a tiny buffer, adds, deletes and re-adds of both families at once ----
python3 "$here/lcp_routes.py" 8000 33 10.1.0.2 s-eth0 "$tmp/f4" || fail "route set (3)"
python3 "$here/lcp_routes.py" 4000 34 2001:db8:1::2 s-eth0 "$tmp/f6" || fail "route set (4)"
for f in f4 f6; do # add all, delete every other one, re-add every fourth: deletes and re-adds mid-dump
	{ cat "$tmp/$f.add"; awk 'NR % 2 == 0' "$tmp/$f.del"; awk 'NR % 4 == 0' "$tmp/$f.add"; } > "$tmp/$f.mix"
done
start 4096
e0=$(netns_lcp_num enobufs)
r0=$(netns_lcp_num resyncs)
ip -n "$ns_c" -batch "$tmp/f4.mix" & b4=$!
ip -n "$ns_c" -batch "$tmp/f6.mix" & b6=$!
wait "$b4" || fail "ip -batch f4.mix"
wait "$b6" || fail "ip -batch f6.mix"
echo "in flight: kernel holds $(kernel_n 4) IPv4 and $(kernel_n 6) IPv6 routes"
settle 60 || echo "sluice: $(netns_lcp_num linux_routes) IPv4, $(netns_lcp_num linux_routes6) IPv6 routes; kernel $(kernel_n 4), $(kernel_n 6)"
fib_equal "after overruns with adds and deletes in flight"
[ "$(netns_lcp_num enobufs)" -gt "$e0" ] || fail "no overrun with a 4 KB buffer: the test did not test it"
[ "$(netns_lcp_num resyncs)" -gt "$r0" ] || fail "overruns but no resync"
ctl show lcp | grep '^netlink'
# the same counters in the stats segment (copied every 100 ms; the listener is idle now)
sleep 0.3
timeout 10 "$stats" -s "$tmp/stats.sock" dump > "$tmp/seg" || fail "sluice-stats dump"
ctl show lcp json > "$tmp/lcp.json" || fail "show lcp json"
python3 - "$tmp/seg" "$tmp/lcp.json" <<'EOF' || { grep /lcp/ "$tmp/seg" >&2; fail "/lcp/netlink/ differs from show lcp json"; }
import json, sys
seg = {}
for line in open(sys.argv[1]):
    k, _, v = line.rstrip("\n").rpartition(" ")
    if k.startswith("/lcp/netlink/"):
        seg[k[len("/lcp/netlink/"):]] = int(v)
nl = json.load(open(sys.argv[2]))["netlink"]
for s, j in [("overruns", "enobufs"), ("resyncs", "resyncs"), ("resyncs-redone", "resyncs_redone"),
             ("swept", "swept"), ("routes", "linux_routes"), ("routes6", "linux_routes6"),
             ("messages", "messages"), ("applied", "applied"), ("batches", "batches"), ("drained", "drained")]:
    assert seg[s] == nl[j], (s, seg[s], j, nl[j])
for kind, n in nl["applied_by_kind"].items():
    assert seg["applied-by-kind[%s]" % kind] == n, (kind, n)
for why, n in nl["ignored"].items():
    assert seg["ignored[%s]" % why] == n, (why, n)
assert seg["listeners"] == 1 and seg["overruns"] > 0 and seg["applied-by-kind[route6-add]"] > 0, seg
print("stats segment: /lcp/netlink/ equals show lcp json (%d overruns, %d resyncs, %d + %d routes)"
      % (seg["overruns"], seg["resyncs"], seg["routes"], seg["routes6"]))
EOF
echo "in flight: $(($(netns_lcp_num enobufs) - e0)) overrun(s), $(($(netns_lcp_num resyncs) - r0)) resync(s)" \
	"($(netns_lcp_num resyncs_redone) redone, $(netns_lcp_num swept) swept)"
netns_stop_sluice
echo "PASS"
