#!/bin/bash
# Interfaces and the packet generator made at run time, through sluicectl
# only: two null interfaces, a one-way cross-connect, a stream with a limit
# entering on the first; the second's TX-packets rise by exactly the limit.
# Bad commands print usage, exit non-zero and change nothing. Every wait is
# bounded; the daemon is stopped and the directory removed on any exit.
#
#   test_interfaces.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
. "$(dirname "$0")/../lib/daemon.sh"
daemon_cli_init ifcli

# Column $3 of the row of `show interface $1` whose first word is $1.
if_counter() {
	ctl show interface "$1" || return 1
	awk -v n="$1" -v c="$2" '$1 == n { print $c; exit }' "$tmp/out"
}
tx_packets() { if_counter "$1" 10; }

# Wait up to 5 s for stream $1 to finish its run (Enabled back to "no").
wait_stream_done() {
	for _ in $(seq 50); do
		ctl show packet-generator || return 1
		[ "$(awk -v n="$1" '$1 == n { print $2 }' "$tmp/out")" = no ] && return 0
		sleep 0.1
	done
	return 1
}

state() {
	ctl show interface json && cat "$tmp/out"
	ctl show packet-generator && awk '{ print $1, $2, $6, $7, $8, $9, $10, $11 }' "$tmp/out"
	ctl show interface rx-placement && cat "$tmp/out"
}

daemon_write_conf
daemon_start "$tmp/startup.conf"
daemon_wait_cli 50 || fail "sluice did not answer within 5 s"

# ---- made at run time ----
ok create interface a driver null
ok create interface b driver null rx-queues 2
ok set interface state a up
ok set interface state b up
ok set interface l2 xconnect a b
ok show interface a
grep -q '^a .* up  *l2-xconnect  *b ' "$tmp/out" || fail "a is not up in l2-xconnect to b"
ok show interface rx-placement
[ "$(grep -c null-input "$tmp/out")" -eq 3 ] || fail "rx-placement does not list 3 queues"
ok show hardware b
grep -q "2 rx queue(s)" "$tmp/out" || fail "show hardware: b has not 2 rx queues"

before=$(tx_packets b)
[ "$before" = 0 ] || fail "b TX-packets $before before any stream"
ok packet-generator new s1 limit 1000 size 64-128 rx-if a
ok show packet-generator
grep -q '^s1 *no ' "$tmp/out" || fail "a new stream is not disabled"
ok packet-generator enable s1
wait_stream_done s1 || fail "s1 did not finish its 1000 packets within 5 s"
after=$(tx_packets b)
[ "$after" = 1000 ] || fail "b TX-packets $before -> $after, expected +1000"
[ "$(tx_packets a)" = 0 ] || fail "a sent packets (the cross-connect is one way)"
[ "$(if_counter b 12)" = 0 ] || fail "b TX-dropped"
n_checks=$((n_checks + 1))

# JSON carries the same counters.
ok show interface b json
grep -q '"TX-packets":[[:space:]]*1000' "$tmp/out" || fail "show interface b json lacks TX-packets 1000"

# A second run of the same stream counts its limit again.
ok packet-generator enable s1
wait_stream_done s1 || fail "s1 second run did not finish"
[ "$(tx_packets b)" = 2000 ] || fail "b TX-packets $(tx_packets b) after two runs, expected 2000"

# Down: interface-output counts what reaches b as TX-dropped, not TX-packets.
ok set interface state b down
ok packet-generator new s2 limit 100 rx-if 0
ok packet-generator enable s2
wait_stream_done s2 || fail "s2 did not finish"
[ "$(tx_packets b)" = 2000 ] && [ "$(if_counter b 12)" = 100 ] || fail "b down: TX-packets/TX-dropped wrong"
ok set interface state b up

# ---- bad commands: usage, non-zero, nothing changed ----
state > "$tmp/state0"
bad() {
	if ctl "$@"; then fail "'$*' succeeded"; fi
	grep -q "^usage: " "$tmp/out" || fail "'$*' printed no usage"
	n_checks=$((n_checks + 1))
}
bad create interface c
bad create interface c driver
bad create interface c drive null
bad create interface c driver nope
bad create interface c driver null bogus 1
bad create interface c driver null rx-queues 99
bad create interface c driver null rx-queues
bad create interface a driver null
bad delete interface
bad delete interface zz
bad show interface zz
bad show interface a b c
bad show hardware zz
bad set interface state a
bad set interface state a sideways
bad set interface state zz up
bad set interface l2 xconnect a
bad set interface l2 xconnect a a
bad set interface l2 xconnect a zz
bad set interface l2 xconnect zz a
bad set interface l3
bad set interface l3 zz
bad clear interfaces now
bad show interface rx-placement a
bad packet-generator new
bad packet-generator new s1 limit 5
bad packet-generator new s3 bogus 1
bad packet-generator new s3 limit
bad packet-generator new s3 limit x
bad packet-generator new s3 size 2
bad packet-generator new s3 rx-if zz
bad packet-generator new s3 next-node no-such-node
bad packet-generator enable zz
bad packet-generator disable zz
bad packet-generator delete
bad packet-generator delete zz
bad show packet-generator x
state > "$tmp/state1"
diff -u "$tmp/state0" "$tmp/state1" > "$tmp/out" || fail "a bad command changed something"

# ---- back to L3, clear, delete ----
ok set interface l3 a
ok packet-generator enable s1
wait_stream_done s1 || fail "s1 third run did not finish"
[ "$(tx_packets b)" = 2000 ] || fail "a in L3 still forwards to b"
ok clear interfaces
[ "$(tx_packets b)" = 0 ] && [ "$(if_counter b 12)" = 0 ] || fail "clear interfaces left counters"
ok packet-generator delete s1
ok packet-generator delete s2
ok delete interface a
ok show interface
grep -q '^a ' "$tmp/out" && fail "a still listed after delete"
grep -q '^b ' "$tmp/out" || fail "b gone with a"
ok show packet-generator
grep -q '^s1 ' "$tmp/out" && fail "s1 still listed after delete"

daemon_stop 50 || fail "sluice still running 5 s after SIGTERM"
[ "$daemon_rc" -eq 0 ] || fail "exit status $daemon_rc"
grep -q "^sluice: exit: every buffer returned$" "$tmp/err" || fail "buffers not all returned"
echo "interfaces and packet-generator CLI: $n_checks checks passed"
exit 0
