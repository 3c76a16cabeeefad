#!/bin/bash
# linux-cp's netlink listener at scale (issue 20's Scale test):
#   h1 10.1.0.2/24 (10.9.0.9 behind it) --veth-- [a  sluice  b 10.2.0.1/24] --veth-- h2 10.2.0.2/24
#                                               a -- TAP -- s-eth0 in ctl (10.1.0.1/24 from Linux)
# Expects:
#   - 100,000 routes, /16 to /32 (tests/lcp/lcp_routes.py), added in ctl with
#     `ip -batch` become exactly the kernel's table in sluice's FIB (every
#     prefix and next hop compared, 1,000 spot-checked), then deleted the
#     same way leave none; while they are added and while they are deleted
#     h2 pings 10.9.0.9 through sluice every 10 ms and loses nothing, the
#     watchdog (stall-warn 250ms) logs no stall, and no barrier hold
#     reaches the stall-warn;
#   - restarted with `netlink-rx-buffer 4096`, a burst of 30,000 adds and
#     one of 15,000 deletes overrun the socket (ENOBUFS counted) and each
#     ends in resyncs that leave the FIB exactly equal to the kernel's table.
# Needs root, ip, ping, python3. The trap removes namespaces, veths and
# sluice even on failure; every wait is bounded.
#
#   test_lcp_scale.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
here=$(cd "$(dirname "$0")" && pwd)
ping_pid=
. "$here/../lib/netns.sh"
netns_lcp_names sc
trap '[ -n "$ping_pid" ] && kill "$ping_pid" 2>/dev/null; ip netns del "$ns_c" 2>/dev/null; netns_cleanup' EXIT
netns_preflight ip ping timeout python3
netns_lcp_hosts "$ns_c"

echo "set interface ip address b 10.2.0.1/24" > "$tmp/setup.cli"
barrier_max_us() {
	ctl show threads json | python3 -c 'import json,sys; print(json.load(sys.stdin)["barrier"]["hold_max_ns"] // 1000)'
}
has_addr() { ctl show ip interface | grep -q "10.1.0.1/24"; }
wait_routes() { # n seconds: until sluice holds n Linux routes and they stay so for 0.5 s
	local n=$1 i
	for i in $(seq $(($2 * 10))); do
		if [ "$(netns_lcp_num linux_routes)" = "$n" ]; then
			sleep 0.5
			[ "$(netns_lcp_num linux_routes)" = "$n" ] && return 0
		fi
		sleep 0.1
	done
	return 1
}
# fib_equal [sample]: sluice's Linux routes are exactly the kernel's table
fib_equal() {
	ip -j -n "$ns_c" route show table main > "$tmp/kernel.json" || fail "ip -j route show"
	timeout 60 "$sluicectl" -s "$tmp/cli.sock" show ip fib json > "$tmp/fib.json" || fail "show ip fib json"
	python3 "$here/lcp_fib_equal.py" "$tmp/kernel.json" "$tmp/fib.json" "$@"
}
start() { # rx-buffer
	netns_lcp_nl_conf "$1" "exec $tmp/setup.cli" "cpu { stall-warn 250ms }"
	netns_start_sluice
	ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0 || fail "addr add in ctl"
	for _ in $(seq 50); do has_addr && break; sleep 0.1; done
	has_addr || fail "a did not get 10.1.0.1/24 from Linux"
	ip -n "$ns_c" route add 10.9.0.0/16 via 10.1.0.2 dev s-eth0 proto static || fail "route 10.9.0.0/16"
	wait_routes 1 5 || fail "10.9.0.0/16 not in sluice"
}

python3 "$here/lcp_routes.py" 100000 20 10.1.0.2 s-eth0 "$tmp/r100k" || fail "route set"
python3 "$here/lcp_routes.py" 30000 21 10.1.0.2 s-eth0 "$tmp/r30k" || fail "route set (2)"
head -15000 "$tmp/r30k.del" > "$tmp/r15k.del"

# ping_start / ping_check WHAT: a ping from h2 to 10.9.0.9 across sluice
# every 10 ms until stopped (SIGINT; -w bounds it); none may be lost but
# the last few, in flight when it was stopped.
ping_start() {
	ip netns exec "$ns_b" ping -i 0.01 -W 2 -w 80 10.9.0.9 > "$tmp/ping" 2>&1 &
	ping_pid=$!
	sleep 0.5
}
ping_check() {
	local sent lost
	sleep 0.2
	kill -INT "$ping_pid" 2>/dev/null
	wait "$ping_pid"
	ping_pid=
	sent=$(grep -Eo '^[0-9]+ packets transmitted' "$tmp/ping" | grep -Eo '^[0-9]+')
	[ "${sent:-0}" -gt 50 ] || { cat "$tmp/ping" >&2; fail "the ping stream did not run ($1)"; }
	lost=$(awk -v n=$((sent - 3)) 'match($0, /icmp_seq=[0-9]+ ttl=/) {
			s = substr($0, RSTART + 9, RLENGTH - 14) + 0; if (s <= n) got[s] = 1 }
		END { for (i = 1; i <= n; i++) if (!(i in got)) { print i; exit } }' "$tmp/ping")
	[ -z "$lost" ] || { tail -3 "$tmp/ping" >&2; ctl show errors >&2; ctl show interface >&2;
		fail "ping $lost of $sent lost during the $1"; }
	echo "ping h2 -> 10.9.0.9 every 10 ms through the $1: $sent sent, none of 1..$((sent - 3)) lost"
}

# ---- 100,000 routes in and out, a ping stream across sluice meanwhile ----
# (Not during the comparison: `show ip fib json` of 100,000 routes holds
# the barrier for its whole walk, which is the CLI's cost, not the load's.)
start 67108864
ctl clear runtime > /dev/null
ping_start
t0=$(date +%s%N)
ip -n "$ns_c" -batch "$tmp/r100k.add" || fail "ip -batch add"
t1=$(date +%s%N)
wait_routes 100001 40 || { ctl show lcp >&2; fail "sluice holds $(netns_lcp_num linux_routes) of 100,001 routes"; }
t2=$(date +%s%N)
hold_add=$(barrier_max_us)
ping_check adds
echo "100,000 routes: the kernel took $(((t1 - t0) / 1000000)) ms, sluice held them all $(((t2 - t0) / 1000000)) ms" \
	"after the first (0.5 s of it the settle check), largest barrier hold ${hold_add} us"
ctl show lcp | grep '^netlink'
t3=$(date +%s%N)
fib_equal 1000 || fail "sluice's FIB is not the kernel's table after the adds"
echo "compared in $((($(date +%s%N) - t3) / 1000000)) ms"
ctl clear runtime > /dev/null
ping_start
ip -n "$ns_c" -batch "$tmp/r100k.del" || fail "ip -batch del"
wait_routes 1 40 || { ctl show lcp >&2; fail "sluice still holds $(netns_lcp_num linux_routes) routes"; }
hold_del=$(barrier_max_us)
ping_check deletes
echo "deleted: sluice holds only 10.9.0.0/16 again, largest barrier hold ${hold_del} us"
grep -q "watchdog.*stalled" "$tmp/err" && { grep watchdog "$tmp/err" >&2; fail "the watchdog saw a stall"; }
for h in "$hold_add" "$hold_del"; do
	[ "$h" -lt 250000 ] || fail "a barrier hold of $h us (stall-warn 250 ms)"
done
[ "$(netns_lcp_num enobufs)" = 0 ] || echo "note: $(netns_lcp_num enobufs) overrun(s) with the 64 MB buffer"
netns_stop_sluice

# ---- a 4 KB receive buffer: bursts overrun it, resyncs converge ----
start 4096
ip -n "$ns_c" -batch "$tmp/r30k.add" || fail "ip -batch add (30k)"
wait_routes 30001 40 || { ctl show lcp >&2; fail "sluice holds $(netns_lcp_num linux_routes) of 30,001 routes"; }
fib_equal || fail "not the kernel's table after an overrun (adds)"
ip -n "$ns_c" -batch "$tmp/r15k.del" || fail "ip -batch del (15k)"
wait_routes 15001 40 || { ctl show lcp >&2; fail "sluice holds $(netns_lcp_num linux_routes) of 15,001 routes"; }
fib_equal || fail "not the kernel's table after an overrun (deletes)"
ctl show lcp | grep '^netlink'
[ "$(netns_lcp_num enobufs)" -gt 0 ] || fail "no overrun with a 4 KB buffer: the test did not test it"
[ "$(netns_lcp_num resyncs)" -gt 0 ] || fail "overruns but no resync"
echo "4 KB buffer: $(netns_lcp_num enobufs) overrun(s), $(netns_lcp_num resyncs) resync(s) ($(netns_lcp_num resyncs_redone) redone)," \
	"sluice equal to the kernel after the adds and after the deletes"
netns_stop_sluice
echo "PASS"
