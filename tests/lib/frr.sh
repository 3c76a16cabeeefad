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

# ---- the BGP tests' common steps ----

# frr_bgp_init TAG SHORT MODE: the names of the BGP tests' namespaces
# (sluice-TAG-p/h/c/f-PID), veths (SHORTa/SHORTb PID), tmp, the EXIT trap,
# and the preflight (root, tools, FRR, MODE nhobj or no-nhobj). Call it
# right after sourcing netns.sh and this file.
frr_bgp_init() {
	local id=$$
	ns_a=sluice-$1-p-$id # peer: FRR AS 65002
	ns_b=sluice-$1-h-$id # h2, on b's side
	ns_c=sluice-$1-c-$id # ctl: the TAPs and FRR AS 65001
	ns_f=sluice-$1-f-$id # far, behind peer
	if_a=$2a$id
	if_b=$2b$id
	host_a=$2a${id}h
	host_b=$2b${id}h
	tmp=$(mktemp -d "/tmp/sluice-$1-XXXXXX")
	trap frr_topology_cleanup EXIT
	netns_preflight ip ping iperf3 timeout vtysh
	[ -x /usr/lib/frr/zebra ] && [ -x /usr/lib/frr/bgpd ] || fail "FRR not installed (scripts/deps.sh test)"
	case $3 in nhobj | no-nhobj) ;; *) fail "mode: expected nhobj or no-nhobj, not $3" ;; esac
}

# frr_bgp_start FAMILY MODE CTL-RID PEER-RID CTL-ADDR PEER-ADDR CTL-NET
# PEER-NET...: zebra and bgpd in ctl (AS 65001, announcing CTL-NET) and in
# peer (AS 65002, announcing the PEER-NETs), one eBGP session between
# CTL-ADDR and PEER-ADDR; t0 is when ctl's zebra was started (now_ms).
frr_bgp_start() {
	local fam=$1 mode=$2 crid=$3 prid=$4 caddr=$5 paddr=$6 cnet=$7
	shift 7
	frr_zebra_conf ctl "$mode" > "$(frr_dir ctl)/zebra.conf"
	frr_zebra_conf peer "$mode" > "$(frr_dir peer)/zebra.conf"
	frr_bgpd_conf "$fam" peer 65002 "$prid" "$caddr" 65001 "$@" > "$(frr_dir peer)/bgpd.conf"
	frr_bgpd_conf "$fam" ctl 65001 "$crid" "$paddr" 65002 "$cnet" > "$(frr_dir ctl)/bgpd.conf"
	t0=$(now_ms)
	frr_start ctl "$ns_c" zebra
	frr_start ctl "$ns_c" bgpd
	frr_start peer "$ns_a" zebra
	frr_start peer "$ns_a" bgpd
}

# frr_bgp_established PEER-ADDR: up to 20 s for ctl's session to PEER-ADDR
# to be Established, else the failure; t1 is when it was (now_ms).
frr_bgp_established() {
	frr_established_nbr=$1
	until_s 20 frr_is_established || { vty ctl -c "show bgp summary" >&2; ctl show errors >&2; frr_logs; fail "BGP session not Established within 20 s"; }
	t1=$(now_ms)
	echo "bgp: ctl <-> peer $1 Established $((t1 - t0)) ms after zebra started"
}
frr_is_established() {
	vty ctl -c "show bgp neighbors $frr_established_nbr json" 2>/dev/null | grep -q '"bgpState":"Established"'
}

# frr_bgp_withdraw FAMILY PEER-NET...: `no network` for each in peer's
# bgpd; every PEER-NET out of ctl's kernel table and sluice's FIB within
# 5 s, and out of sluice within 1 s of the kernel (sluice's part is what
# follows the kernel's table; FRR's own part, peer's bgpd, ctl's bgpd and
# zebra, takes 0.2 to 2 s on this shared 2-CPU box).
frr_bgp_withdraw() {
	local fam=$1 p fib=ip withdraw
	shift
	[ "$fam" = ipv6 ] && fib=ip6
	withdraw=(-c "configure terminal" -c "router bgp 65002" -c "address-family $fam unicast")
	for p in "$@"; do withdraw+=(-c "no network $p"); done
	vty peer "${withdraw[@]}" > "$tmp/vty" 2>&1 || { cat "$tmp/vty" >&2; fail "vtysh no network"; }
	local t3
	t3=$(now_ms)
	frr_wait 5 out "" "$@" || { ctl show $fib fib >&2; fail "prefixes still in sluice 5 s after 'no network'"; }
	echo "withdraw: gone from ctl's kernel $((kernel_ms - t3)) ms after vtysh returned, from sluice $((sluice_ms - kernel_ms)) ms later"
	[ $((sluice_ms - kernel_ms)) -le 1000 ] ||
		fail "withdrawn prefixes left sluice $((sluice_ms - kernel_ms)) ms after the kernel's table, not within 1 s"
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

# frr_topology_make CTL-SYSCTLS: the namespaces and veths (peer and h2 on
# their pairs, ctl, far), ctl's loopback up and CTL-SYSCTLS (a sh command
# run in ctl); the peer-far veth pf0 (peer) -- pf1 (far), unaddressed.
frr_topology_make() {
	netns_make_pairs
	ip netns add "$ns_c" || fail "ip netns add $ns_c"
	ip netns add "$ns_f" || fail "ip netns add $ns_f"
	ip netns exec "$ns_c" sh -c "ip link set lo up && $1" || fail "ctl setup"
	ip -n "$ns_a" link add pf0 type veth peer name pf1 netns "$ns_f" || fail "veth peer-far"
}

# frr_start_sluice: sluice on a and b, their linux-cp TAPs s-eth0 and
# s-eth1 in ctl.
frr_start_sluice() {
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
}

frr_topology() {
	frr_topology_make 'sysctl -qw net.ipv6.conf.default.disable_ipv6=1 && sysctl -qw net.ipv4.ip_forward=0'
	netns_setup_l2_host "$ns_a" "$host_a" 10.1.0.2
	netns_setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
	ip netns exec "$ns_a" sh -c 'ip addr add 10.99.0.1/24 dev pf0 && ip link set pf0 up &&
		sysctl -qw net.ipv4.ip_forward=1' || fail "peer: pf0"
	netns_setup_host "$ns_f" pf1 10.99.0.2 10.99.0.1
	frr_start_sluice
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

# frr_forwarded [FAR PORT -6]: h2 pings FAR (10.99.0.2) 20 times and runs
# iperf3 to it (server port PORT, 5299) for 2 s; b's RX and a's TX grow by
# at least the packets that crossed (sluice forwarded them: ctl's Linux
# does not forward). -6: IPv6 (ping -6, iperf3 -6, the ND table on failure).
frr_forwarded() {
	local far=${1:-10.99.0.2} port=${2:-5299} v6=${3:-} a_tx0 b_rx0 bytes a_tx b_rx min
	a_tx0=$(if_counter a TX-packets)
	b_rx0=$(if_counter b RX-packets)
	netns_ping_all "$ns_b" "$far" 20 "$tmp/ping" || {
		cat "$tmp/ping" >&2
		ctl show errors >&2
		[ -n "$v6" ] && ctl show ip6 neighbors >&2
		fail "ping ${v6:+$v6 }h2 -> far $far"
	}
	echo "ping ${v6:+$v6 }h2 -> far: $(grep rtt "$tmp/ping")"
	ip netns exec "$ns_f" iperf3 -s -1 -B "$far" -p "$port" > "$tmp/iperf-s" 2>&1 &
	iperf_pid=$!
	until_s 5 eval 'ip netns exec "$ns_f" ss -ltn | grep -q ":$port"' || fail "iperf3 server did not listen"
	# shellcheck disable=SC2086
	timeout 20 ip netns exec "$ns_b" iperf3 $v6 -c "$far" -p "$port" -t 2 -J > "$tmp/iperf.json" 2>&1 ||
		{ cat "$tmp/iperf.json" >&2; fail "iperf3 ${v6:+$v6 }h2 -> far"; }
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
	echo "iperf3 ${v6:+$v6 }h2 -> far: $bytes bytes, $(awk -v b="${bps:-0}" 'BEGIN { printf "%.0f", b / 1e6 }') Mbit/s received; sluice b RX +$b_rx, a TX +$a_tx packets"
}
