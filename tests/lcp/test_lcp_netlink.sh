#!/bin/bash
# linux-cp's netlink listener through real namespaces: what Linux learns in
# ctl becomes sluice's.
#   h1 10.1.0.2/24 (10.9.0.9 behind it) --veth-- [a  sluice  b 10.2.0.1/24] --veth-- h2 10.2.0.2/24
#                                               a -- TAP -- s-eth0 in ctl
# `lcp create a host-if s-eth0 netns ctl`; a has no address of sluice's own.
# Expects:
#   - `ip -n ctl addr add 10.1.0.1/24 dev s-eth0` gives a 10.1.0.1/24;
#   - `ip -n ctl route add 10.9.0.0/16 via 10.1.0.2 dev s-eth0 proto static`
#     appears in `show ip fib` as linux/static, and h2 pings 10.9.0.9
#     through sluice (h1 answers from its lo);
#   - `ip -n ctl route del` removes it within 1 s;
#   - a CLI route for the same prefix wins over Linux's and survives its
#     deletion;
#   - blackhole -> a blackhole entry, unreachable -> an unreachable one;
#     a route via an interface that is no TAP is counted, not installed;
#   - `ip -n ctl link set s-eth0 down` takes a down, up brings it back;
#   - a route via a nexthop object (nhid) is installed, moves when the
#     object is replaced and goes when it is deleted;
#   - `lcp resync` counts a resync and leaves the FIB as it was;
#   - `ip -n ctl addr del` takes the address away; sluice exits 0;
#   - from startup.conf with `netlink-rx-buffer 65536`: 20,000 routes added
#     with ip -batch (any overrun: ENOBUFS and resyncs counted)
#     end with sluice holding exactly the kernel's 20,000 (spot checks), no
#     batch above 1,024 messages; deleted the same way, none left.
# Needs root, ip, ping. The trap removes namespaces, veths and sluice even
# on failure; every wait is bounded.
#
#   test_lcp_netlink.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
. "$(dirname "$0")/../lib/netns.sh"
netns_lcp_names nl
trap 'ip netns del "$ns_c" 2>/dev/null; netns_cleanup' EXIT
netns_preflight ip ping timeout
netns_lcp_hosts "$ns_c"

echo "set interface ip address b 10.2.0.1/24" > "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice
fib_has() { # prefix words...: the route's row holds every word
	local row
	row=$(ctl show ip fib "$1" 2>/dev/null | grep "^$1 ") || return 1
	shift
	for w in "$@"; do echo "$row" | grep -qw -- "$w" || return 1; done
}
fib_lacks() { ! ctl show ip fib "$1" 2>/dev/null | grep -q "^$1 "; }
has_addr() { ctl show ip interface | grep -q "10.1.0.1/24"; }
a_is() { ctl show interface | awk -v s="$1" '$1 == "a" { f = ($0 ~ s) } END { exit !f }'; }

ctl lcp create a host-if s-eth0 netns "$ns_c" || fail "lcp create"

# ---- an address from Linux ----
ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0 || fail "addr add in ctl"
until_1s has_addr || { ctl show ip interface >&2; fail "a did not get 10.1.0.1/24"; }
echo "address: a has 10.1.0.1/24 from Linux"

# ---- a route from Linux, used by the datapath ----
ip -n "$ns_c" route add 10.9.0.0/16 via 10.1.0.2 dev s-eth0 proto static || fail "route add in ctl"
until_1s fib_has 10.9.0.0/16 rewrite 10.1.0.2 linux/static || { ctl show ip fib >&2; fail "10.9.0.0/16 not in the FIB"; }
ctl show ip fib 10.9.0.0/16
netns_ping_all "$ns_b" 10.9.0.9 5 "$tmp/ping" || { cat "$tmp/ping" >&2; ctl show errors >&2; fail "h2 -> 10.9.0.9"; }
echo "ping h2 -> 10.9.0.9 through sluice: $(grep -c 'icmp_seq=' "$tmp/ping") answered"
ctl show ip fib json | tr -d '\n' | grep -Eq '"source":[[:space:]]*"linux/static",[[:space:]]*"protocol":[[:space:]]*"static"' ||
	fail "show ip fib json: no source linux/static, protocol static"

# ---- deleted in Linux: gone within 1 s ----
ip -n "$ns_c" route del 10.9.0.0/16 || fail "route del in ctl"
until_1s fib_lacks 10.9.0.0/16 || fail "10.9.0.0/16 still in the FIB 1 s after ip route del"
echo "route del: gone within 1 s"

# ---- the CLI's route wins and outlives Linux's ----
ip -n "$ns_c" route add 10.9.0.0/16 via 10.1.0.2 dev s-eth0 proto static || fail "route re-add"
until_1s fib_has 10.9.0.0/16 linux/static || fail "10.9.0.0/16 not back"
ctl ip route add 10.9.0.0/16 via 10.1.0.3 a > /dev/null || fail "CLI route"
fib_has 10.9.0.0/16 10.1.0.3 cli || { ctl show ip fib >&2; fail "the CLI's route did not win"; }
ip -n "$ns_c" route del 10.9.0.0/16 || fail "route del in ctl (2)"
sleep 0.3
fib_has 10.9.0.0/16 10.1.0.3 cli || { ctl show ip fib >&2; fail "the CLI's route did not survive Linux's delete"; }
ctl ip route del 10.9.0.0/16 > /dev/null || fail "CLI route del"
fib_lacks 10.9.0.0/16 || fail "10.9.0.0/16 left after both deletes"
echo "precedence: CLI over Linux, each deletes only its own"

# ---- blackhole, unreachable, a route via no TAP ----
ip -n "$ns_c" route add blackhole 10.66.0.0/16 || fail "blackhole"
until_1s fib_has 10.66.0.0/16 blackhole linux/boot || { ctl show ip fib >&2; fail "blackhole not a blackhole"; }
ip -n "$ns_c" route add unreachable 10.67.0.0/16 || fail "unreachable"
ip -n "$ns_c" link add d0 type veth peer name d1 && ip -n "$ns_c" link set d1 up &&
	ip -n "$ns_c" link set d0 up && ip -n "$ns_c" addr add 10.77.0.1/24 dev d0 || fail "veth d0 in ctl"
ip -n "$ns_c" route add 10.78.0.0/16 via 10.77.0.2 || fail "route via d0"
until_1s fib_has 10.67.0.0/16 unreachable linux/boot || { ctl show ip fib >&2; fail "unreachable not in the FIB"; }
sleep 0.2
fib_lacks 10.78.0.0/16 || fail "a route via d0 installed"
[ "$(netns_lcp_num "not a TAP of ours")" -gt 0 ] || fail "route via d0 not counted"
echo "blackhole and unreachable installed as such; via d0 counted"

# ---- link state: Linux's down reaches the port ----
ip -n "$ns_c" link set s-eth0 down || fail "s-eth0 down"
until_1s a_is down || { ctl show interface >&2; fail "a not down after s-eth0 down"; }
ip -n "$ns_c" link set s-eth0 up || fail "s-eth0 up"
until_1s a_is up || { ctl show interface >&2; fail "a not up after s-eth0 up"; }
ip -n "$ns_c" addr replace 10.1.0.1/24 dev s-eth0 # down removed the kernel's routes, not the address
echo "link: s-eth0 down/up -> a down/up"

# ---- nexthop objects (FRR's default): a route with nhid; the object
# ---- replaced moves the route (by the nhid index, no re-dump) ----
ip -n "$ns_c" nexthop add id 10 via 10.1.0.2 dev s-eth0 || fail "ip nexthop add"
ip -n "$ns_c" route add 10.50.0.0/16 nhid 10 proto bgp || fail "route via nhid 10"
until_1s fib_has 10.50.0.0/16 rewrite 10.1.0.2 linux/bgp || { ctl show ip fib >&2; fail "route via nhid 10 not in the FIB"; }
r0=$(netns_lcp_num resyncs)
ip -n "$ns_c" nexthop replace id 10 via 10.1.0.3 dev s-eth0 || fail "ip nexthop replace"
until_1s fib_has 10.50.0.0/16 rewrite 10.1.0.3 linux/bgp || { ctl show ip fib >&2; fail "nhid 10 replaced: route not moved"; }
ip -n "$ns_c" nexthop del id 10 || fail "ip nexthop del"
until_1s fib_lacks 10.50.0.0/16 || fail "nhid 10 deleted: route still in the FIB"
[ "$(netns_lcp_num resyncs)" = "$r0" ] || fail "a nexthop object's change cost a resync"
[ "$(netns_lcp_num nh_routes)" = 2 ] || fail "routes moved by nhid: $(netns_lcp_num nh_routes), not 2"
echo "nexthop objects: route via nhid, replaced and deleted with it"

# ---- resync: counted, FIB unchanged ----
ip -n "$ns_c" route add 10.9.0.0/16 via 10.1.0.2 dev s-eth0 proto bgp || fail "route bgp"
until_1s fib_has 10.9.0.0/16 linux/bgp || fail "bgp route"
ctl show ip fib > "$tmp/fib0"
r0=$(netns_lcp_num resyncs)
ctl lcp resync || fail "lcp resync"
until_1s eval 'test "$(netns_lcp_num resyncs)" -gt "$r0"' || fail "resync not counted"
sleep 0.3
ctl show ip fib > "$tmp/fib1"
diff <(awk '{ print $1, $3, $4, $7 }' "$tmp/fib0") <(awk '{ print $1, $3, $4, $7 }' "$tmp/fib1") ||
	fail "the FIB changed across a resync"
ctl show lcp
echo "resync: counted, FIB as before"

# ---- the address goes ----
ip -n "$ns_c" addr del 10.1.0.1/24 dev s-eth0 || fail "addr del"
until_1s eval '! has_addr' || fail "10.1.0.1/24 still on a"
echo "address del: gone from a"
ip -n "$ns_c" route del blackhole 10.66.0.0/16 && ip -n "$ns_c" route del unreachable 10.67.0.0/16 ||
	fail "route del blackhole, unreachable"
until_1s fib_lacks 10.66.0.0/16 || fail "blackhole still in the FIB"
netns_stop_sluice

# ---- startup.conf, a small receive buffer: a burst overruns it, the
# ---- resyncs end with sluice's table equal to the kernel's ----
n_routes=20000
netns_lcp_nl_conf 65536 "exec $tmp/setup.cli"
netns_start_sluice
ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0 || fail "addr add (2)"
until_1s has_addr || fail "a did not get 10.1.0.1/24 (2)"
for i in $(seq 0 $((n_routes - 1))); do
	echo "route add 10.$((128 + i / 65536)).$((i / 256 % 256)).$((i % 256))/32 via 10.1.0.2 dev s-eth0 proto static"
done > "$tmp/add.batch"
awk '{ print "route del", $3 }' "$tmp/add.batch" > "$tmp/del.batch"
linux_routes() { netns_lcp_num linux_routes; }
wait_routes() { # n: up to 30 s for sluice to hold n Linux routes
	for _ in $(seq 300); do [ "$(linux_routes)" = "$1" ] && return 0; sleep 0.1; done
	return 1
}
t0=$(date +%s%N)
ip -n "$ns_c" -batch "$tmp/add.batch" || fail "ip -batch add"
t1=$(date +%s%N)
wait_routes "$n_routes" || { ctl show lcp >&2; fail "sluice holds $(linux_routes) of $n_routes routes"; }
t2=$(date +%s%N)
kernel=$(ip -n "$ns_c" route show proto static | wc -l)
[ "$kernel" = "$n_routes" ] || fail "the kernel holds $kernel routes"
for p in 10.128.0.0/32 10.128.31.78/32 10.128.$(((n_routes - 1) / 256)).$(((n_routes - 1) % 256))/32; do
	fib_has "$p" rewrite 10.1.0.2 linux/static || fail "$p not in sluice's FIB"
done
max_batch=$(netns_lcp_num max_batch)
[ "$max_batch" -le 1024 ] || fail "a batch of $max_batch messages (bound: 1,024)"
ctl show lcp
echo "burst: $n_routes routes, kernel $(((t1 - t0) / 1000000)) ms, sluice equal after $(((t2 - t0) / 1000000)) ms," \
	"$(netns_lcp_num enobufs) overrun(s), $(netns_lcp_num resyncs) resync(s), largest batch $max_batch"
ip -n "$ns_c" -batch "$tmp/del.batch" || fail "ip -batch del"
wait_routes 0 || { ctl show lcp >&2; fail "sluice still holds $(linux_routes) routes"; }
echo "burst deleted: sluice holds none ($(netns_lcp_num resyncs) resyncs, $(netns_lcp_num swept) swept in all)"
netns_stop_sluice
echo "PASS"
