#!/bin/bash
# linux-cp through real namespaces: sluice's port a mirrored into ns ctl.
#   host 10.1.0.2/24 --veth-- [a 10.1.0.1/24  sluice] --TAP-- s-eth0 10.1.0.1/24 in ns ctl
# af-packet on the root end of the veth; `lcp create a host-if s-eth0
# netns ctl`; s-eth0 gets sluice's own address, as linux-cp setups do.
# Expects:
#   - bad `lcp create`s (unknown port, name too long, missing namespace,
#     an interface of that name already in ctl, missing words) print why,
#     and leave no pair, no tapN interface and no s-eth0;
#   - s-eth0 appears in ctl with a's MAC and MTU, up;
#   - a TCP connection from the host to 10.1.0.1 reaches a listener in
#     ctl (punted by ip4-local, answered out of the TAP through lcp-xc);
#   - ctl's neighbour table holds the host (the ARP reply copy);
#   - a ping to 10.1.0.1 is answered by sluice itself: lcp-punt's IPv4
#     counter and the TAP's to-Linux counter do not move;
#   - `set interface state a down/up` takes s-eth0 down/up;
#   - `set interface mtu|mac address a` reaches s-eth0, `ip link set
#     s-eth0 mtu|address` reaches a; an MTU the TAP's rings cannot take
#     is refused on either side and both keep theirs;
#   - `lcp delete a` removes s-eth0 and tap0, a second one says why;
#   - the same pair from startup.conf's linux-cp section; the TAP deleted
#     from Linux under sluice is logged and marked gone, pings are still
#     answered, `lcp delete` cleans up; sluice exits 0 with every buffer
#     returned, both times.
# Needs root, ip, ping, python3. The trap removes namespaces, veths and
# sluice even on failure; every wait is bounded.
#
#   test_lcp_netns.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-lcp-h-$id   # the host
ns_b=sluice-lcp-c-$id   # ctl: the TAP's namespace
if_a=lcpa$id
if_b=lcpnone$id         # no second pair: netns_cleanup's ip link del finds nothing
host_a=lcpa${id}h
tmp=$(mktemp -d /tmp/sluice-lcp-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping python3 timeout
ip netns add "$ns_a" || fail "ip netns add $ns_a"
ip netns add "$ns_b" || fail "ip netns add $ns_b"
ip netns exec "$ns_b" ip link set lo up
ip link add "$if_a" type veth peer name "$host_a" netns "$ns_a" || fail "veth $if_a"
echo 1 > "/proc/sys/net/ipv6/conf/$if_a/disable_ipv6"
ip link set "$if_a" up || fail "$if_a up"
netns_setup_l2_host "$ns_a" "$host_a" 10.1.0.2
# TAPs made in ctl start with IPv6 off: only the test's traffic flows.
ip netns exec "$ns_b" sysctl -qw net.ipv6.conf.default.disable_ipv6=1

echo "set interface ip address a 10.1.0.1/24" > "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
}
CONF
netns_start_sluice

# Plain text tools on the JSON (one value per key line): fast where a
# python3 start-up is not (pyenv shims take seconds).
json_num() { # key < json
	grep -Eo "\"$1\":[[:space:]]*[0-9]+" | grep -Eo '[0-9]+$'
}
punted_ip4() {
	ctl show errors | awk '/lcp-punt +punted: IPv4 to a local address/ { n = $1 } END { print n + 0 }'
}
mac_of_a() {
	ctl show ip interface | awk '$1 == "a" { print $2 }'
}
no_pair_left() { # what
	[ "$(ctl show lcp json | grep -c '"port"')" = 0 ] || fail "$1: a pair was made"
	ctl show interface > "$tmp/ifs"
	grep -q "^tap" "$tmp/ifs" && fail "$1: a tap interface was left"
	ip -n "$ns_b" link show s-eth0 > /dev/null 2>&1 && fail "$1: s-eth0 was left in ctl"
	return 0
}

# ---- bad input: says why, changes nothing ----
bad() { # expected-message words...
	local want=$1
	shift
	ctl "$@" > "$tmp/bad" 2>&1 && fail "'$*' succeeded"
	grep -q -- "$want" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "'$*': expected '$want'"; }
	no_pair_left "$*"
}
ip -n "$ns_b" link add dup0 type veth peer name dup1 || fail "veth dup0 in ctl"
bad "no interface 'nosuch'" lcp create nosuch host-if s-eth0 netns "$ns_b"
bad "expected a Linux interface name" lcp create a host-if s-eth0-far-too-long netns "$ns_b"
bad "no such namespace" lcp create a host-if s-eth0 netns "nons-$id"
bad "dup0: an interface of that name already exists in netns $ns_b" lcp create a host-if dup0 netns "$ns_b"
bad "lcp create PORT host-if NAME" lcp create a host-if
bad "lcp create PORT host-if NAME" lcp create a netns "$ns_b" s-eth0
bad "has no lcp pair" lcp delete a
echo "bad input: refused, nothing changed"

# ---- the pair ----
ctl lcp create a host-if s-eth0 netns "$ns_b" > "$tmp/create" || { cat "$tmp/create" >&2; fail "lcp create"; }
cat "$tmp/create"
mac=$(mac_of_a)
ip -n "$ns_b" link show s-eth0 > "$tmp/link" || fail "s-eth0 not in ctl"
grep -q "link/ether $mac " "$tmp/link" || { cat "$tmp/link" >&2; fail "s-eth0 has not a's MAC $mac"; }
grep -q "mtu 1500" "$tmp/link" || fail "s-eth0 has not a's MTU"
grep -q "[<,]UP[,>]" "$tmp/link" || { cat "$tmp/link" >&2; fail "s-eth0 not up"; }
ctl show lcp
ctl show hardware tap0 > "$tmp/hw"
grep -q "host-if s-eth0 (ifindex [0-9]*) netns $ns_b" "$tmp/hw" || { cat "$tmp/hw" >&2; fail "show hardware tap0"; }
ctl show interface | grep -q "^tap0 .*lcp-tap" || fail "show interface: tap0 not lcp-tap"
ctl lcp create a host-if s-eth1 netns "$ns_b" > "$tmp/bad" 2>&1 && fail "a paired twice"
grep -q "already paired" "$tmp/bad" || fail "second pair: no reason"
ip -n "$ns_b" addr add 10.1.0.1/24 dev s-eth0 || fail "address on s-eth0"

# ---- (b) ping to sluice's address: sluice answers, nothing punted ----
# ARP first, so that the ping's own resolution does not blur the counters.
netns_ping_all "$ns_a" 10.1.0.1 3 "$tmp/ping0" || { cat "$tmp/ping0" >&2; fail "ping 10.1.0.1"; }
before=$(punted_ip4)
to_linux=$(ctl show lcp json | json_num to_linux)
netns_ping_all "$ns_a" 10.1.0.1 10 "$tmp/ping" || { cat "$tmp/ping" >&2; fail "ping 10.1.0.1 lost packets"; }
after=$(punted_ip4)
to_linux2=$(ctl show lcp json | json_num to_linux)
[ "$before" = "$after" ] && [ "$to_linux" = "$to_linux2" ] ||
	fail "echo requests went to Linux (punted $before -> $after, to linux $to_linux -> $to_linux2)"
echo "ping 10.1.0.1: answered by sluice, nothing punted ($(grep rtt "$tmp/ping"))"

# ---- (a) TCP to 10.1.0.1 reaches a listener in ctl ----
# Traced both ways: the SYN up through lcp-punt, Linux's answers through lcp-xc.
ctl trace add af-packet-input 3 filter "tcp port 1790" > /dev/null || fail "trace add af-packet-input"
ctl trace add tap-input 3 > /dev/null || fail "trace add tap-input"
timeout 20 ip netns exec "$ns_b" python3 -c '
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.1.0.1", 1790)); s.listen(1); s.settimeout(15)
c, peer = s.accept(); c.settimeout(5)
c.sendall(b"hello from linux to %s; you said %s\n" % (peer[0].encode(), c.recv(100).strip()))
c.close()' > "$tmp/server" 2>&1 &
server_pid=$!
for _ in $(seq 50); do
	ip netns exec "$ns_b" ss -ltn 2>/dev/null | grep -q "10.1.0.1:1790" && break
	sleep 0.1
done
timeout 20 ip netns exec "$ns_a" python3 -c '
import socket
c = socket.create_connection(("10.1.0.1", 1790), timeout=10)
c.sendall(b"hi\n"); print(c.recv(100).decode().strip())' > "$tmp/client" 2>&1
rc=$?
wait "$server_pid"
[ "$rc" -eq 0 ] && grep -q "hello from linux to 10.1.0.2; you said hi" "$tmp/client" ||
	{ cat "$tmp/client" "$tmp/server" >&2; ctl show errors >&2; fail "TCP 10.1.0.2 -> 10.1.0.1:1790 did not reach ctl"; }
echo "tcp: $(cat "$tmp/client")"
ctl show trace > "$tmp/trace"
grep -q "lcp-punt" "$tmp/trace" && grep -Eq "a \(if 0\): IPv4 to a local address -> tap if 1" "$tmp/trace" ||
	{ cat "$tmp/trace" >&2; fail "trace: no SYN through lcp-punt to the TAP"; }
grep -Eq "from tap if 1 type 0x0800 -> a \(if 0\)" "$tmp/trace" ||
	{ cat "$tmp/trace" >&2; fail "trace: no frame of Linux's through lcp-xc to a"; }
grep -E "lcp-punt|lcp-xc" -A1 "$tmp/trace" | head -6
[ "$(punted_ip4)" -gt "$after" ] || fail "lcp-punt counted no IPv4"

# ---- (c) the ARP reply copy filled ctl's neighbour table ----
host_mac=$(ip netns exec "$ns_a" cat "/sys/class/net/$host_a/address")
ip -n "$ns_b" neigh show 10.1.0.2 > "$tmp/neigh"
cat "$tmp/neigh"
grep -q "lladdr $host_mac" "$tmp/neigh" || fail "ctl does not know 10.1.0.2 at $host_mac"
ctl show lcp
ctl show errors | grep -E "lcp-|arp-input"

# ---- admin state follows the port ----
ctl set interface state a down > /dev/null || fail "a down"
ip -n "$ns_b" link show s-eth0 | grep -q "[<,]UP[,>]" && fail "s-eth0 still up with a down"
ctl set interface state a up > /dev/null || fail "a up"
ip -n "$ns_b" link show s-eth0 | grep -q "[<,]UP[,>]" || fail "s-eth0 not up again with a"
echo "admin state: s-eth0 follows a"

# ---- MTU and MAC in step, both ways ----
a_json() { ctl show interface a json | tr -d ' \t\n'; }
a_has() { a_json | grep -q "$1"; }
tap_has() { ip -n "$ns_b" link show s-eth0 | grep -q -- "$1"; }
until_1s() { for _ in $(seq 10); do "$@" && return 0; sleep 0.1; done; return 1; }
ctl set interface mtu 1400 a > /dev/null || fail "set interface mtu 1400 a"
tap_has "mtu 1400" || fail "s-eth0 did not follow a's MTU 1400"
ctl set interface mac address a 02:42:00:00:00:01 > /dev/null || fail "set interface mac address a"
tap_has "link/ether 02:42:00:00:00:01 " || fail "s-eth0 did not follow a's MAC"
a_has '"mtu":1400,"mac":"02:42:00:00:00:01"' || { a_json >&2; fail "show interface a json: mtu, mac"; }
ip -n "$ns_b" link set s-eth0 mtu 1300 || fail "ip link set s-eth0 mtu 1300"
until_1s a_has '"mtu":1300' || { a_json >&2; fail "a did not follow s-eth0's MTU 1300"; }
ip -n "$ns_b" link set s-eth0 address 02:42:00:00:00:02 || fail "ip link set s-eth0 address"
until_1s a_has '"mac":"02:42:00:00:00:02"' || { a_json >&2; fail "a did not follow s-eth0's MAC"; }
# The TAP's ring slots hold its first MTU (1500) + 18: more is refused on
# either side, and both stay as they were.
ctl set interface mtu 9000 a > "$tmp/bad" 2>&1 && fail "MTU 9000 taken by a paired port"
grep -q "refused by its linux-cp TAP: stays at 1300" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "MTU 9000: no reason"; }
tap_has "mtu 1300" && a_has '"mtu":1300' || fail "MTU 9000 refused, but a or s-eth0 changed"
ip -n "$ns_b" link set s-eth0 mtu 4000 || fail "ip link set s-eth0 mtu 4000"
until_1s tap_has "mtu 1300" || fail "s-eth0's MTU 4000 not put back to 1300"
a_has '"mtu":1300' || fail "a took s-eth0's MTU 4000"
ctl set interface mac address a 01:00:5e:00:00:05 > "$tmp/bad" 2>&1 && fail "a group MAC taken"
grep -q "expected a unicast MAC" "$tmp/bad" || { cat "$tmp/bad" >&2; fail "group MAC: no reason"; }
a_has '"mac":"02:42:00:00:00:02"' || fail "a bad MAC changed a"
ctl set interface mtu packet 1500 a > /dev/null && tap_has "mtu 1500" || fail "set interface mtu packet 1500 a"
echo "MTU and MAC: s-eth0 follows a, a follows s-eth0; what the TAP cannot take is put back"

# ---- lcp delete ----
ctl lcp delete a || fail "lcp delete a"
no_pair_left "lcp delete"
bad "has no lcp pair" lcp delete a
netns_stop_sluice
echo "lcp delete: s-eth0 and tap0 gone"

# ---- the same pair from startup.conf ----
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
}
linux-cp {
  default-netns $ns_b
  a { host-if s-eth0 }
}
CONF
netns_start_sluice
mac=$(mac_of_a)
ip -n "$ns_b" link show s-eth0 | grep -q "link/ether $mac " || fail "startup.conf: no s-eth0 with a's MAC"
grep -q "linux-cp: 1 pair(s)" "$tmp/err" || fail "startup.conf: no linux-cp log line"
ctl show lcp json | grep -Eq "\"netns\":[[:space:]]*\"$ns_b\"" || fail "startup.conf: pair not shown"
echo "startup.conf linux-cp: pair made"

# ---- the TAP deleted from Linux under sluice: said so, nothing breaks ----
ip -n "$ns_b" link del s-eth0 || fail "ip link del s-eth0"
wait_for_line "s-eth0: deleted from Linux under sluice" 50 "$tmp/err" || fail "no log line for the TAP deleted"
ctl show lcp json | grep -Eq '"host_gone":[[:space:]]*true' || fail "show lcp: TAP not marked gone"
ip -n "$ns_a" neigh flush dev "$host_a" # this sluice's a has a MAC of its own
netns_ping_all "$ns_a" 10.1.0.1 3 "$tmp/ping2" || { cat "$tmp/ping2" >&2; fail "ping 10.1.0.1 after the TAP was deleted"; }
ctl lcp delete a > /dev/null || fail "lcp delete after the TAP was deleted"
echo "TAP deleted under sluice: marked gone, pings still answered, lcp delete cleans up"
netns_stop_sluice
echo "PASS"
exit 0
