# FRR daemons (Debian's frr, 8.4) started directly in a network namespace
# for the linux-cp tests, one instance per namespace, each with its own
# directory for the config, pid files, log, zserv socket and vty sockets
# (-i, -z, --vty_socket, so that two instances never collide, and no
# system FRR is touched). The daemons run as the frr user, whose group
# frrvty the vty sockets need (as root they refuse: root is not in
# frrvty); the directory is therefore the frr user's. -P 0: no vty TCP port.
#
# The sourcing script sets tmp; frr_cleanup (call it from the EXIT trap
# before the namespaces go) stops every daemon started here.

# frr_dir NAME: the directory of instance NAME, $tmp/frr-NAME (made on
# first use; frr_cleanup finds the pid files there).
frr_dir() {
	local d="$tmp/frr-$1"
	if [ ! -d "$d" ]; then
		mkdir -p "$d" && chmod 755 "$tmp" "$d" && chown frr:frr "$d" || fail "frr dir $d"
	fi
	echo "$d"
}

# frr_start NAME NS DAEMON: start /usr/lib/frr/DAEMON in NS on
# $(frr_dir NAME)/DAEMON.conf, daemonised; waits up to 5 s for its vty.
frr_start() {
	local name=$1 ns=$2 daemon=$3 d
	d=$(frr_dir "$name")
	ip netns exec "$ns" "/usr/lib/frr/$daemon" -d -f "$d/$daemon.conf" -i "$d/$daemon.pid" -z "$d/zserv.api" \
		--vty_socket "$d" -u frr -g frr -P 0 --log "file:$d/$daemon.log" ||
		fail "$daemon ($name) did not start"
	for _ in $(seq 50); do
		[ -S "$d/$daemon.vty" ] && return 0
		sleep 0.1
	done
	fail "$daemon ($name): no vty socket within 5 s"
}

# vty NAME vtysh-args...: vtysh on instance NAME, 10 s at most.
vty() {
	local d
	d=$(frr_dir "$1")
	shift
	timeout 10 vtysh --vty_socket "$d" "$@"
}

frr_any_alive() { # pids...
	local p
	for p in "$@"; do kill -0 "$p" 2>/dev/null && return 0; done
	return 1
}

# Every daemon of every instance: TERM, then KILL after 2 s.
frr_cleanup() {
	local d p pids=()
	for d in "$tmp"/frr-*; do
		for p in "$d"/*.pid; do
			[ -f "$p" ] && pids+=("$(cat "$p")")
		done
	done
	[ ${#pids[@]} -eq 0 ] && return 0
	kill -TERM "${pids[@]}" 2>/dev/null
	for _ in $(seq 20); do
		frr_any_alive "${pids[@]}" || break
		sleep 0.1
	done
	frr_any_alive "${pids[@]}" && kill -KILL "${pids[@]}" 2>/dev/null
	rm -f "$tmp"/frr-*/*.pid # a second call must not signal a pid used again since
	return 0
}

# frr_stop NAME DAEMON: stop one daemon (TERM, 2 s at most).
frr_stop() {
	local p
	p="$(frr_dir "$1")/$2.pid"
	[ -f "$p" ] || return 0
	local pid
	pid=$(cat "$p")
	rm -f "$p"
	kill -TERM "$pid" 2>/dev/null
	for _ in $(seq 20); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null
	return 0
}

# frr_logs: the tail of every daemon's log, for a failure.
frr_logs() {
	local d f
	for d in "$tmp"/frr-*; do
		for f in "$d"/*.log; do
			[ -f "$f" ] && { echo "== $f"; tail -15 "$f"; }
		done
	done >&2
}

# ---- bgpd and zebra configurations of the BGP tests ----

# frr_zebra_conf NAME MODE: zebra.conf; MODE no-nhobj turns kernel nexthop
# objects off (plain routes with RTA_GATEWAY), nhobj keeps FRR's default.
frr_zebra_conf() {
	echo "hostname $1"
	[ "$2" = no-nhobj ] && echo "no zebra nexthop kernel enable"
	return 0
}

# frr_bgpd_conf FAMILY NAME AS ROUTER-ID NEIGHBOUR REMOTE-AS NETWORK...:
# bgpd.conf of one eBGP session with fast timers (FAMILY ipv4 or ipv6: the
# address family the session carries and the networks are announced in).
frr_bgpd_conf() {
	local fam=$1 name=$2 as=$3 rid=$4 nbr=$5 ras=$6 p
	shift 6
	printf 'hostname %s\nrouter bgp %s\n bgp router-id %s\n' "$name" "$as" "$rid"
	[ "$fam" = ipv6 ] && echo " no bgp default ipv4-unicast"
	cat <<BGP
 no bgp ebgp-requires-policy
 no bgp network import-check
 timers bgp 1 3
 neighbor $nbr remote-as $ras
 neighbor $nbr timers connect 1
 neighbor $nbr advertisement-interval 0
 address-family $fam unicast
BGP
	[ "$fam" = ipv6 ] && echo "  neighbor $nbr activate"
	for p in "$@"; do echo "  network $p"; done
	echo " exit-address-family"
}

# ---- the topology both FRR tests use ----
#   far 10.99.0.2 --- peer 10.1.0.2 --veth-- [a  sluice  b] --veth-- h2 10.2.0.2
#                     10.99.0.1                |TAP   |TAP
#                          ctl: s-eth0 10.1.0.1, s-eth1 10.2.0.1
# The sourcing script sets ns_a (peer), ns_b (h2), ns_c (ctl), ns_f (far),
# if_a, if_b, host_a, host_b and traps frr_topology_cleanup on EXIT.
# peer forwards between its veths; ctl does not (what crosses sluice is
# forwarded by sluice). Linux gives the TAPs their addresses; the netlink
# listener copies them to a and b.

frr_topology_cleanup() {
	frr_cleanup
	ip netns del "$ns_c" 2>/dev/null
	ip netns del "$ns_f" 2>/dev/null
	netns_cleanup
}

frr_topology() {
	netns_make_pairs
	ip netns add "$ns_c" || fail "ip netns add $ns_c"
	ip netns add "$ns_f" || fail "ip netns add $ns_f"
	ip netns exec "$ns_c" sh -c 'ip link set lo up && sysctl -qw net.ipv6.conf.default.disable_ipv6=1 &&
		sysctl -qw net.ipv4.ip_forward=0' || fail "ctl setup"
	netns_setup_l2_host "$ns_a" "$host_a" 10.1.0.2
	netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
	ip -n "$ns_a" link add pf0 type veth peer name pf1 netns "$ns_f" || fail "veth peer-far"
	ip netns exec "$ns_a" sh -c 'ip addr add 10.99.0.1/24 dev pf0 && ip link set pf0 up &&
		sysctl -qw net.ipv4.ip_forward=1' || fail "peer: pf0"
	netns_setup_host "$ns_f" pf1 10.99.0.2 10.99.0.1
	cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
linux-cp {
  default-netns $ns_c
  a { host-if s-eth0 }
  b { host-if s-eth1 }
}
CONF
	netns_start_sluice
	ip -n "$ns_c" addr add 10.1.0.1/24 dev s-eth0 && ip -n "$ns_c" addr add 10.2.0.1/24 dev s-eth1 ||
		fail "addresses on the TAPs"
	until_s 2 frr_has_addr 10.1.0.1/24 && until_s 2 frr_has_addr 10.2.0.1/24 ||
		{ ctl show ip interface >&2; fail "addresses not on a, b"; }
}

frr_has_addr() { ctl show ip interface | grep -q "$1"; }

# until_s N CMD...: up to N seconds (in tenths) for CMD to succeed.
until_s() {
	local n=$(($1 * 10))
	shift
	for _ in $(seq "$n"); do "$@" && return 0; sleep 0.1; done
	return 1
}

# fib_route PREFIX: its `show ip fib json` object on one line.
fib_route() {
	ctl show ip fib "$1" json 2>/dev/null | tr -d ' \t\n' | grep -o "{\"prefix\":\"$1\"[^}]*}"
}

# fib_from PREFIX PROTOCOL: installed from Linux as PROTOCOL via 10.1.0.2 on a.
fib_from() {
	local r
	r=$(fib_route "$1") || return 1
	case $r in *'"next_hop":"10.1.0.2"'*'"interface":"a"'*"\"source\":\"linux/$2\",\"protocol\":\"$2\""*) return 0 ;; esac
	return 1
}

fib_lacks() { ! fib_route "$1" > /dev/null; }

# One look at both tables per turn, so that a turn is two commands and
# the times below are within ~0.1 s: kernel_has / sluice_has PREFIX
# (PROTOCOL) in what frr_look saw.
# The IPv6 test sets frr_family=-6 (ip -6, show ip6 fib) and frr_nh to the
# JSON the next hop must show ('"next_hop":"fe80::...' or a prefix of one).
frr_look() {
	local fib=ip
	[ -n "${frr_family:-}" ] && fib=ip6
	k_routes=$(ip ${frr_family:-} -n "$ns_c" route show)
	s_routes=$(ctl show $fib fib json 2>/dev/null | tr -d ' \t\n')
}
kernel_has() { # prefix [protocol]
	echo "$k_routes" | grep -q "^$1 .*proto ${2:-}"
}
sluice_has() { # prefix [protocol]: [from Linux as protocol via 10.1.0.2 on a]
	local r
	r=$(echo "$s_routes" | grep -o "{\"prefix\":\"$1\"[^}]*}") || return 1
	[ -z "${2:-}" ] && return 0
	case $r in *"${frr_nh:-\"next_hop\":\"10.1.0.2\"}"*'"interface":"a"'*"\"source\":\"linux/$2\",\"protocol\":\"$2\""*) return 0 ;; esac
	return 1
}

# frr_wait SECONDS in|out PROTOCOL PREFIX...: up to SECONDS for every
# prefix to be in (from Linux as PROTOCOL) or out of both ctl's kernel
# table and sluice's FIB; kernel_ms and sluice_ms get when each first
# agreed (now_ms).
frr_wait() {
	local n=$(($1 * 20)) want=$2 proto=$3 p k s
	shift 3
	kernel_ms=
	sluice_ms=
	for _ in $(seq "$n"); do
		frr_look
		k=1
		s=1
		for p in "$@"; do
			if [ "$want" = in ]; then
				kernel_has "$p" "$proto" || k=
				sluice_has "$p" "$proto" || s=
			else
				kernel_has "$p" && k=
				sluice_has "$p" && s=
			fi
		done
		[ -n "$k" ] && [ -z "$kernel_ms" ] && kernel_ms=$(now_ms)
		if [ -n "$s" ]; then
			sluice_ms=$(now_ms)
			[ -n "$kernel_ms" ] || kernel_ms=$sluice_ms
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# if_counter INTERFACE NAME: a counter of `show interface NAME json`.
if_counter() {
	ctl show interface "$1" json | tr -d ' \t\n' | grep -Eo "\"$2\":[0-9]+" | head -1 | grep -Eo '[0-9]+$'
}

# frr_forwarded: h2 pings far 20 times and runs iperf3 to it for 2 s; b's
# RX and a's TX grow by at least the packets that crossed (sluice forwarded
# them: ctl's Linux does not forward).
frr_forwarded() {
	local a_tx0 b_rx0 bytes a_tx b_rx min
	a_tx0=$(if_counter a TX-packets)
	b_rx0=$(if_counter b RX-packets)
	netns_ping_all "$ns_b" 10.99.0.2 20 "$tmp/ping" || { cat "$tmp/ping" >&2; ctl show errors >&2; fail "h2 -> far 10.99.0.2"; }
	echo "ping h2 -> far: $(grep rtt "$tmp/ping")"
	ip netns exec "$ns_f" iperf3 -s -1 -B 10.99.0.2 -p 5299 > "$tmp/iperf-s" 2>&1 &
	iperf_pid=$!
	until_s 5 eval 'ip netns exec "$ns_f" ss -ltn | grep -q ":5299"' || fail "iperf3 server did not listen"
	timeout 20 ip netns exec "$ns_b" iperf3 -c 10.99.0.2 -p 5299 -t 2 -J > "$tmp/iperf.json" 2>&1 ||
		{ cat "$tmp/iperf.json" >&2; fail "iperf3 h2 -> far"; }
	wait "$iperf_pid"
	iperf_pid=
	bytes=$(tr -d ' \t\n' < "$tmp/iperf.json" | grep -Eo '"sum_received":\{[^}]*"bytes":[0-9]+' | grep -Eo '[0-9]+$')
	[ "${bytes:-0}" -gt 100000 ] || fail "iperf3 moved ${bytes:-0} bytes"
	a_tx=$(($(if_counter a TX-packets) - a_tx0))
	b_rx=$(($(if_counter b RX-packets) - b_rx0))
	# 20 echo requests, and at least one segment per 2 x 1448 bytes of
	# iperf3's (a segment may carry up to 64 KB with GSO on af-packet).
	min=$((20 + bytes / 65536))
	[ "$a_tx" -ge "$min" ] && [ "$b_rx" -ge "$min" ] ||
		fail "sluice's counters: a TX +$a_tx, b RX +$b_rx, expected at least $min each (not forwarded by sluice?)"
	local bps
	bps=$(tr -d ' \t\n' < "$tmp/iperf.json" | grep -Eo '"sum_received":\{[^}]*"bits_per_second":[0-9.e+]+' | grep -Eo '[0-9.e+]+$')
	echo "iperf3 h2 -> far: $bytes bytes, $(awk -v b="${bps:-0}" 'BEGIN { printf "%.0f", b / 1e6 }') Mbit/s received; sluice b RX +$b_rx, a TX +$a_tx packets"
}
