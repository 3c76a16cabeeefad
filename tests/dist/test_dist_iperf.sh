#!/bin/bash
# The distributor with real traffic: sluice routes IPv4 between two network
# namespaces with `distributor { enable }` and 2 workers, and 8 parallel
# iperf3 TCP streams cross it.
#   host A 10.1.0.2/24 --veth-- [a 10.1.0.1/24  sluice  b 10.2.0.1/24] --veth-- host B 10.2.0.2/24
# Expects:
#   - iperf3 -P 8 -t 5 completes;
#   - per TCP stream, both directions, the segments leave sluice's egress
#     port in the order they arrived at its ingress port: the egress list of
#     (seq, length, IP id) is the ingress list with only dropped packets left
#     out (tcp-order), and every segment missing is one sluice or the kernel
#     counted as dropped;
#   - both workers handled packets (show distributor), no completion for a
#     tag its worker did not own;
#   - sluice exits 0 with every buffer returned.
# With a fourth argument `ordered`, the TCP packets are first put in a
# scheduling class of type ordered (`sched class tcp priority 7 type ordered
# match protocol tcp`): the distributor then spreads each stream over both
# workers and restores its order on the rx thread before transmit, and the
# same per-stream order check holds; each worker must have been handed
# ordered packets, and show sched must say the class queue handed TCP on.
# Where it looks: ingress is tcpdump on sluice's own veth end (-Q in: the
# kernel hands each frame to sluice's socket and tcpdump's in turn); egress
# is tcpdump on the far end in the host namespace, because sluice transmits
# with PACKET_QDISC_BYPASS, which the kernel's capture taps do not see.
# A veth delivers on the sending CPU's backlog, so frames sent from two CPUs
# (a host's TCP stack, or sluice's two workers) are received on two CPUs at
# once, and two capture sockets on one port could see them in different
# orders; RPS on all four ends steers every received frame to CPU 0's
# backlog, which gives each port one order that every socket on it sees.
# The hosts' TSO and GSO are off so that a frame is a segment on both sides.
#
# Needs root, ip, iperf3, tcpdump, ethtool (scripts/deps.sh test). Names
# carry the PID; the trap removes namespaces, veths, sluice, iperf3 and
# tcpdump even on failure; every wait is bounded.
#
#   test_dist_iperf.sh SLUICE SLUICECTL TCP_ORDER [ordered]
set -u
sluice=$1
sluicectl=$2
tcp_order=$3
mode=${4:-atomic}
case "$mode" in atomic | ordered) ;; *) echo "unknown mode $mode" >&2; exit 2 ;; esac
id=$$
ns_a=sluice-di-a-$id
ns_b=sluice-di-b-$id
if_a=dia$id      # root ends, opened by sluice (names stay under 16 bytes)
if_b=dib$id
host_a=dia${id}h # namespace ends
host_b=dib${id}h
tmp=$(mktemp -d /tmp/sluice-dist-iperf-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip ping iperf3 tcpdump ethtool timeout
dumps=()
stop_dumps() {
	for p in "${dumps[@]}"; do kill -INT "$p" 2>/dev/null; done
	for p in "${dumps[@]}"; do
		for _ in $(seq 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	dumps=()
}
trap 'stop_dumps; netns_cleanup' EXIT

netns_make_pairs
setup_host() { # ns ifname address gateway
	ip netns exec "$1" sh -c "echo 1 > /proc/sys/net/ipv6/conf/$2/disable_ipv6 &&
		ip link set lo up && ip addr add $3/24 dev $2 && ip link set $2 up &&
		ip route add default via $4 &&
		ethtool -K $2 tso off gso off > /dev/null &&
		echo 1 > /sys/class/net/$2/queues/rx-0/rps_cpus" || fail "host $3 in $1"
}
setup_host "$ns_a" "$host_a" 10.1.0.2 10.1.0.1
setup_host "$ns_b" "$host_b" 10.2.0.2 10.2.0.1
for ifn in "$if_a" "$if_b"; do
	echo 1 > "/sys/class/net/$ifn/queues/rx-0/rps_cpus" || fail "RPS on $ifn"
done

# Two workers: on spare cores when there are any; on this 2-core class of
# machine one shares core 0 with the rx thread, which the idle back-off
# must let work.
n_cpus=$(nproc)
if [ "$n_cpus" -ge 3 ]; then workers=1,2; elif [ "$n_cpus" -eq 2 ]; then workers=0,1; else workers=0,0; fi
cat > "$tmp/setup.cli" <<CLI
set interface ip address a 10.1.0.1/24
set interface ip address b 10.2.0.1/24
CLI
[ "$mode" = ordered ] && echo "sched class tcp priority 7 type ordered match protocol tcp" >> "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  exec $tmp/setup.cli }
cpu { corelist-workers $workers }
distributor { enable  ring-lines 256  backlog 64 }
interfaces {
  a { driver af-packet  host-if $if_a }
  b { driver af-packet  host-if $if_b }
}
CONF
netns_start_sluice
ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}
ctl show distributor > "$tmp/show" || fail "sluicectl show distributor"
grep -q "^1 " "$tmp/show" || { cat "$tmp/show" >&2; fail "distributor not running with 2 workers"; }

# ---- resolve both hosts, then start counting from zero ----
timeout 30 ip netns exec "$ns_a" ping -c 10 -i 0.05 -W 2 -w 15 10.2.0.2 > "$tmp/ping" 2>&1 ||
	{ cat "$tmp/ping" >&2; fail "ping A -> B failed"; }
ctl clear interfaces > /dev/null && ctl clear distributor > /dev/null || fail "clear counters"

# Kernel drops on the four veth ends: a frame sluice sent that the far
# end's backlog refused, or one sluice's socket could not take.
kernel_drops() {
	local n=0 v
	for f in rx_dropped tx_dropped; do
		for ifn in "$if_a" "$if_b"; do v=$(cat "/sys/class/net/$ifn/statistics/$f"); n=$((n + v)); done
		v=$(ip netns exec "$ns_a" cat "/sys/class/net/$host_a/statistics/$f"); n=$((n + v))
		v=$(ip netns exec "$ns_b" cat "/sys/class/net/$host_b/statistics/$f"); n=$((n + v))
	done
	echo "$n"
}
kdrops0=$(kernel_drops)

# ---- captures: ingress at sluice's ends, egress at the far ends ----
dump() { # name ns-or-"" ifname
	local run=()
	[ -n "$2" ] && run=(ip netns exec "$2")
	timeout 60 "${run[@]}" tcpdump -i "$3" -Q in -n -s 96 -B 65536 -w "$tmp/$1.pcap" tcp 2> "$tmp/$1.log" &
	dumps+=($!)
	wait_for_line "listening on" 50 "$tmp/$1.log" || fail "tcpdump $1 did not start"
}
dump ab_in "" "$if_a"
dump ab_out "$ns_b" "$host_b"
dump ba_in "" "$if_b"
dump ba_out "$ns_a" "$host_a"

# ---- 8 TCP streams A -> B ----
timeout 40 ip netns exec "$ns_b" iperf3 -s -B 10.2.0.2 -1 > "$tmp/iperf_server" 2>&1 &
iperf_pid=$!
for _ in $(seq 50); do
	ip netns exec "$ns_b" ss -ltn 2>/dev/null | grep -q "10.2.0.2:5201" && break
	sleep 0.1
done
timeout 40 ip netns exec "$ns_a" iperf3 -c 10.2.0.2 -P 8 -t 5 > "$tmp/iperf" 2>&1
rc=$?
[ "$rc" -eq 0 ] && grep -q "SUM.*receiver" "$tmp/iperf" || { cat "$tmp/iperf" >&2; fail "iperf3 -P 8 did not complete (rc $rc)"; }
grep "SUM" "$tmp/iperf"
for _ in $(seq 50); do kill -0 "$iperf_pid" 2>/dev/null || break; sleep 0.1; done
iperf_pid=
# tcpdump reads the kernel's capture ring a block at a time, and a block
# is handed over when full or after its timeout (1 s): wait that out so
# that the last segments are written before it stops.
sleep 2
stop_dumps
for d in ab_in ab_out ba_in ba_out; do
	grep -q "^0 packets dropped by kernel" "$tmp/$d.log" ||
		{ cat "$tmp/$d.log" >&2; fail "tcpdump $d lost packets: the comparison would be incomplete"; }
done

# ---- what sluice counted ----
ctl show distributor > "$tmp/dist" || fail "show distributor"
ctl show interface > "$tmp/intf" || fail "show interface"
cat "$tmp/dist" "$tmp/intf"
kdrops=$(( $(kernel_drops) - kdrops0 ))
col() { # file header-name row-key: the cell under a one-word header in the row starting with row-key
	awk -v h="$2" -v k="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == h) c = i; next }
		$1 == k { print $c }' "$1"
}
for w in 0 1; do
	# Worker, In flight, Backlog, Flows, Ring, Handed, Returned, ...
	handed=$(awk -v w="$w" '$1 == w { print $6 }' "$tmp/dist")
	returned=$(awk -v w="$w" '$1 == w { print $7 }' "$tmp/dist")
	[ -n "$handed" ] && [ "$handed" -ge 100 ] || fail "worker $w handled ${handed:-no} packets: the run did not use 2 workers"
	[ "$handed" -eq "$returned" ] || fail "worker $w: $handed handed, $returned returned after the run"
	if [ "$mode" = ordered ]; then
		# Column 11 is Ordered (Worker, In flight, Backlog, Flows, Ring,
		# Handed, Returned, Matched, Migrations, Drops, Ordered, Parallel).
		ordered=$(awk -v w="$w" '$1 == w { print $11 }' "$tmp/dist")
		[ -n "$ordered" ] && [ "$ordered" -ge 100 ] || fail "worker $w was handed ${ordered:-no} ordered packets"
	fi
done
if [ "$mode" = ordered ]; then
	ctl show sched > "$tmp/sched" || fail "show sched"
	cat "$tmp/sched"
	sent=$(awk '/^Class queues/ { q = 1; next } q && $1 == "tcp" { print $4 }' "$tmp/sched")
	[ "${sent:-0}" -gt 1000 ] || fail "the class queue handed ${sent:-no} TCP packets to the distributor"
fi
grep -q "completions for tags not owned" "$tmp/dist" && fail "completions for tags a worker did not own"
dist_drops=$(sed -n 's/^drops: flow.s worker busy \([0-9]*\), new flow with every worker busy \([0-9]*\),.*/\1 \2/p' "$tmp/dist" |
	awk '{print $1 + $2}')
rx=0 tx=0 rx_dropped=0
for i in a b; do
	rx=$((rx + $(col "$tmp/intf" RX-packets "$i")))
	tx=$((tx + $(col "$tmp/intf" TX-packets "$i")))
	rx_dropped=$((rx_dropped + $(col "$tmp/intf" RX-dropped "$i")))
done
# Everything received and not sent (all of it TCP being routed), plus what
# the sockets could not take.
lost=$((rx - tx + rx_dropped))
echo "sluice: received $rx, sent $tx, not sent $((rx - tx)) (distributor drops $dist_drops), socket drops $rx_dropped; kernel drops on the veths $kdrops"

# ---- per stream order, both directions ----
missing=0
for dir in ab ba; do
	"$tcp_order" "$tmp/${dir}_in.pcap" "$tmp/${dir}_out.pcap" > "$tmp/$dir.order" 2>&1
	rc=$?
	cat "$tmp/$dir.order"
	[ "$rc" -eq 0 ] || fail "$dir: a TCP stream left sluice out of order (tcp-order rc $rc)"
	read -r i e m < <(sed -n 's/^total: streams [0-9]* ingress \([0-9]*\) egress \([0-9]*\) missing \(-*[0-9]*\)$/\1 \2 \3/p' "$tmp/$dir.order")
	[ -n "${m:-}" ] || fail "$dir: no total from tcp-order"
	# Each direction carried real traffic, and sluice invented nothing:
	# more segments out than in would be duplicates.
	[ "$i" -ge 1000 ] || fail "$dir: only $i TCP segments captured at ingress"
	[ "$e" -le "$i" ] || fail "$dir: egress $e segments, more than the $i that came in (duplicates)"
	missing=$((missing + m))
done
n_streams=$(grep -c "^ok 10.1.0.2:[0-9]* > 10.2.0.2:5201: ingress [0-9]\{3,\}" "$tmp/ab.order")
[ "$n_streams" -ge 8 ] || fail "$n_streams streams A -> B with 100+ segments, expected 8 (and the control connection)"
echo "segments missing at egress: $missing; counted dropped: sluice $lost, kernel $kdrops"
[ "$missing" -le $((lost + kdrops)) ] || fail "$missing segments missing at egress, only $((lost + kdrops)) counted as dropped"

# ---- shutdown ----
netns_stop_sluice
echo "PASS"
exit 0
