# Shared by the tests that put sluice between two network namespaces.
# The sourcing script sets tmp, ns_a, ns_b, if_a, if_b, host_a, host_b,
# sluice (netns_start_sluice runs it on $tmp/startup.conf) and, as it starts
# them, pid (sluice, stopped gently) and iperf_pid / dump_pid (killed). Everything made here is removed on exit, failure included.

pid=
iperf_pid=
dump_pid=

fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && sed 's/^/  | /' "$tmp/err" | tail -40 >&2
	exit 1
}

netns_cleanup() {
	[ -n "$iperf_pid" ] && kill -KILL "$iperf_pid" 2>/dev/null
	[ -n "$dump_pid" ] && kill -KILL "$dump_pid" 2>/dev/null
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	ip netns del "$ns_a" 2>/dev/null
	ip netns del "$ns_b" 2>/dev/null
	ip link del "$if_a" 2>/dev/null
	ip link del "$if_b" 2>/dev/null
	rm -rf "$tmp"
}
trap netns_cleanup EXIT
trap 'exit 1' INT TERM HUP

# Root and the named tools, or a failure that says what is missing.
netns_preflight() {
	[ "$(id -u)" -eq 0 ] || fail "needs root (network namespaces, packet sockets)"
	for tool in "$@"; do
		command -v "$tool" > /dev/null || fail "$tool not found (scripts/deps.sh test installs it)"
	done
}

. "$(dirname "${BASH_SOURCE[0]}")/wait.sh"

# Two namespaces, each holding one end of a veth pair whose other end
# (if_a, if_b) stays here for sluice; IPv6 off so only the test's traffic flows.
netns_make_pairs() {
	ip netns add "$ns_a" || fail "ip netns add $ns_a"
	ip netns add "$ns_b" || fail "ip netns add $ns_b"
	ip link add "$if_a" type veth peer name "$host_a" netns "$ns_a" || fail "veth $if_a"
	ip link add "$if_b" type veth peer name "$host_b" netns "$ns_b" || fail "veth $if_b"
	for ifn in "$if_a" "$if_b"; do
		echo 1 > "/proc/sys/net/ipv6/conf/$ifn/disable_ipv6" || fail "disable IPv6 on $ifn"
		ip link set "$ifn" up || fail "$ifn up"
	done
}

# A host end: address/24 on ifname in ns, IPv6 off, default route via gw.
netns_setup_host() { # ns ifname address gateway
	ip netns exec "$1" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		ip link set lo up && ip addr add $3/24 dev $2 && ip link set $2 up &&
		ip route add default via $4" || fail "host $3 in $1"
}

# Start sluice ($sluice) on $tmp/startup.conf, its log in $tmp/err, and wait
# up to 5 s for it to run.
netns_start_sluice() {
	"$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" &
	pid=$!
	wait_for_line "main: running" 200 "$tmp/err" || fail "sluice did not come up within 20 s"
}

# netns_start_sluice_niced: netns_start_sluice, then every thread of
# sluice at nice -15 (as a data plane on a shared box would be given
# precedence): its wake-ups, hence release times under test, then do not
# queue behind everything else the box runs. It sleeps when idle, so it
# takes little from the rest. (Not SCHED_FIFO: threads parked at the
# barrier spin, and would starve the CLI thread sharing their core.)
netns_start_sluice_niced() {
	netns_start_sluice
	for tid in /proc/"$pid"/task/*; do renice -n -15 -p "${tid##*/}" > /dev/null 2>&1; done
}

# netns_names PREFIX: a two-namespace test's names, unique to it and its
# PID (id): namespaces PREFIX-a-PID and PREFIX-b-PID, sluice's veth ends
# PREFIXaPID and PREFIXbPID, the hosts' ends those with h, and tmp, a
# fresh /tmp/sluice-PREFIX-XXXXXX. Call it right after sourcing this file.
netns_names() {
	id=$$
	ns_a=$1-a-$id
	ns_b=$1-b-$id
	if_a=$1a$id
	if_b=$1b$id
	host_a=$1a${id}h
	host_b=$1b${id}h
	tmp=$(mktemp -d "/tmp/sluice-$1-XXXXXX")
}

# netns_lcp_names TAG: netns_names TAG with the linux-cp tests' namespaces,
# sluice-TAG-h1-PID and -h2- (ns_a, ns_b) and the control one -c- (ns_c).
netns_lcp_names() {
	netns_names "$1"
	ns_a=sluice-$1-h1-$id
	ns_b=sluice-$1-h2-$id
	ns_c=sluice-$1-c-$id
}

# netns_routed_start SETUP-CLI CONF: sluice routing between host A
# 10.1.0.2/24 (ns_a, via a 10.1.0.1) and host B 10.2.0.2/24 (ns_b, via b
# 10.2.0.1) over af-packet: the pairs, the hosts, $tmp/setup.cli (the
# addresses, then the lines SETUP-CLI), $tmp/startup.conf (the CLI on
# $tmp/cli.sock, then CONF), sluice started niced (netns_start_sluice_niced).
netns_routed_start() {
	netns_make_pairs
	netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
	netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
	printf 'set interface ip address a 10.1.0.1/24\nset interface ip address b 10.2.0.1/24\n%s\n' "$1" > "$tmp/setup.cli"
	netns_conf_ab "$2"
	netns_start_sluice_niced
}

# Stop sluice ($pid) with SIGTERM, 5 s at most: it must exit 0 and log that
# every buffer came back.
netns_stop_sluice() {
	kill -TERM "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "sluice still running 5 s after SIGTERM"
	wait "$pid"
	local rc=$?
	pid=
	[ "$rc" -eq 0 ] || fail "sluice exit status $rc"
	grep -q "^sluice: exit: every buffer returned$" "$tmp/err" || fail "exit log: buffers not all returned"
}

# netns_ping_all NS DST COUNT OUT: COUNT pings 50 ms apart from NS to DST,
# output in OUT; succeeds when every request 1..COUNT was answered. The
# deadline (-w) makes ping wait for replies still in flight after its last
# request (on a loaded box RTTs reach 100 ms); it may then send a few more
# requests, which is why the answered sequence numbers are checked, not
# "0% packet loss".
netns_ping_all() {
	local ns=$1 dst=$2 count=$3 out=$4 s
	timeout $((count / 10 + 20)) ip netns exec "$ns" ping -c "$count" -i 0.05 -W 2 -w 15 "$dst" >"$out" 2>&1
	for s in $(seq 1 "$count"); do
		grep -q "icmp_seq=$s ttl=" "$out" || return 1
	done
}

# A host end for tests that cross-connect a and b (no router between the
# hosts): address/24 on ifname in ns, IPv6 off, no route.
netns_setup_l2_host() { # ns ifname address
	ip netns exec "$1" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		ip link set lo up && ip addr add $3/24 dev $2 && ip link set $2 up" || fail "host $3 in $1"
}

# A permanent neighbour in ns: address at mac, through ifname.
netns_neighbour() { # ns address mac ifname
	ip netns exec "$1" ip neigh add "$2" lladdr "$3" dev "$4" nud permanent || fail "neighbour $2 in $1"
}

# Both host ends on one subnet, address_a on host_a and address_b on
# host_b, each knowing the other's MAC (set in mac_a and mac_b), so that
# no ARP has to cross sluice.
netns_setup_l2_hosts() { # address_a address_b
	netns_setup_l2_host "$ns_a" "$host_a" "$1"
	netns_setup_l2_host "$ns_b" "$host_b" "$2"
	mac_a=$(ip netns exec "$ns_a" cat "/sys/class/net/$host_a/address")
	mac_b=$(ip netns exec "$ns_b" cat "/sys/class/net/$host_b/address")
	netns_neighbour "$ns_a" "$2" "$mac_b" "$host_a"
	netns_neighbour "$ns_b" "$1" "$mac_a" "$host_b"
}

# $tmp/startup.conf for af-packet interfaces a (on if_a) and b (on if_b),
# the CLI on $tmp/cli.sock running $tmp/setup.cli at start, then the lines
# EXTRA.
netns_conf_ab() { # [extra]
	cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
${1:-}
CONF
}

# $tmp/startup.conf for a and b cross-connected both ways.
netns_xconnect_conf() {
	printf 'set interface l2 xconnect a b\nset interface l2 xconnect b a\n' > "$tmp/setup.cli"
	netns_conf_ab
}

# until_1s CMD...: up to 1 s (10 x 0.1 s) for CMD to succeed.
until_1s() {
	for _ in $(seq 10); do "$@" && return 0; sleep 0.1; done
	return 1
}

# sluicectl on $tmp/cli.sock, 5 s at most (a script may define its own).
ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}

now_ms() {
	date +%s%3N
}

# `show buffers` names a holder for every buffer in use.
assert_all_attributed() {
	ctl show buffers > "$tmp/buffers" || fail "show buffers"
	grep -Eq "^unattributed +- +0$" "$tmp/buffers" || { cat "$tmp/buffers" >&2; fail "show buffers: buffers unattributed${1:+ $1}"; }
}

# The linux-cp tests' hosts: h1 (ns_a) 10.1.0.2/24 with 10.9.0.9 on its lo,
# h2 (ns_b) 10.2.0.2/24, each routed through sluice's 10.x.0.1; and the
# control namespaces named (lo up, IPv6 off for what is made in them).
netns_lcp_hosts() { # control-namespace...
	local ns
	netns_make_pairs
	for ns in "$@"; do
		ip netns add "$ns" || fail "ip netns add $ns"
		ip netns exec "$ns" ip link set lo up
		ip netns exec "$ns" sysctl -qw net.ipv6.conf.default.disable_ipv6=1
	done
	netns_setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
	ip -n "$ns_a" addr add 10.9.0.9/32 dev lo || fail "10.9.0.9 on h1"
	netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
}

# netns_lcp_conf [UNIX_MORE] [SECTION]: $tmp/startup.conf for the linux-cp
# tests: the CLI on $tmp/cli.sock (UNIX_MORE added to the unix section),
# SECTION on a line of its own, a and b on af-packet over if_a / if_b, then
# the linux-cp section read from stdin.
netns_lcp_conf() {
	{
		echo "unix { nodaemon  cli-listen $tmp/cli.sock${1:+  $1} }"
		[ -n "${2:-}" ] && echo "$2"
		printf 'interfaces {\n  a { driver af-packet  host-if %s }\n  b { driver af-packet  host-if %s }\n}\n' "$if_a" "$if_b"
		cat
	} > "$tmp/startup.conf"
}

# netns_lcp_nl_conf RX_BUFFER [UNIX_MORE] [SECTION]: netns_lcp_conf with a
# paired with s-eth0 in ns_c and netlink-rx-buffer RX_BUFFER bytes.
netns_lcp_nl_conf() {
	netns_lcp_conf "${2:-}" "${3:-}" <<CONF
linux-cp {
  default-netns $ns_c
  netlink-rx-buffer $1
  a { host-if s-eth0 }
}
CONF
}

netns_lcp_num() { # key: a number of show lcp json's "netlink"
	ctl show lcp json | tr -d '\n' | grep -Eo "\"$1\":[[:space:]]*[0-9]+" | grep -Eo '[0-9]+$' | head -1
}
