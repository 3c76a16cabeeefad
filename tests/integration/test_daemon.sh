#!/bin/bash
# The sluice daemon end to end: --check of the repo's startup.conf equals
# the built-in default's; run it for a second, SIGTERM it, and expect exit 0
# within 2 s with an exit log that shows packets processed (and the output
# nodes, on the worker) and every buffer returned; counters rise through
# sluicectl while it runs; then the same in daemon mode with a pidfile and a
# log file. Every wait is bounded; everything started is stopped. What the
# default's pipeline does is test_default.sh's.
#
#   test_daemon.sh SLUICE STARTUP_CONF [SLUICECTL]
set -u
sluice=$1
conf_src=$2
sluicectl=${3:-}
. "$(dirname "$0")/../lib/daemon.sh"
daemon_init daemon

. "$(dirname "$0")/../lib/wait.sh"

daemon_conf_from "$conf_src"

# --check of startup.conf is the built-in default written out.
"$sluice" --check -c "$conf_src" | tail -n +2 > "$tmp/check_file" || fail "--check startup.conf"
"$sluice" --check | tail -n +2 > "$tmp/check_default" || fail "--check of the default"
diff -u "$tmp/check_default" "$tmp/check_file" || fail "startup.conf differs from the built-in default"

# ---- foreground ----
daemon_start "$tmp/startup.conf"
daemon_wait_running 200 || fail "sluice did not come up within 20 s"
for stage in config buffers interfaces graph threads cli; do
	grep -q "^sluice: $stage:" "$tmp/err" || fail "no start-up line for stage $stage"
done

if [ -n "$sluicectl" ]; then
	pg_vectors() {
		timeout 5 "$sluicectl" -s "$tmp/cli.sock" show runtime > "$tmp/runtime" || return
		awk '$1 == "pg-input" { print $4; exit }' "$tmp/runtime"
	}
	a=$(pg_vectors)
	sleep 0.5
	b=$(pg_vectors)
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] || fail "pg-input vectors did not rise through sluicectl ($a -> $b)"
	# The default cross-connects the generator's pg0 into nul0 (shaped, on
	# the worker): its TX-packets rise.
	nul0_tx() {
		timeout 5 "$sluicectl" -s "$tmp/cli.sock" show interface nul0 > "$tmp/ifs" || return
		awk '$1 == "nul0" { print $10; exit }' "$tmp/ifs"
	}
	a=$(nul0_tx)
	sleep 0.5
	b=$(nul0_tx)
	[ -n "$a" ] && [ -n "$b" ] && [ "$b" -gt "$a" ] || fail "nul0 TX-packets did not rise ($a -> $b)"
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" show config > "$tmp/show_config" || fail "show config"
	"$sluice" --check -c "$tmp/startup.conf" > "$tmp/check_run"
	diff -u "$tmp/check_run" "$tmp/show_config" || fail "show config differs from --check"
fi

sleep 1
daemon_stop 20 || fail "sluice still running 2 s after SIGTERM"
[ "$daemon_rc" -eq 0 ] || fail "exit status $daemon_rc after SIGTERM"
n=$(sed -n 's/^sluice: exit: \([0-9]*\) packets processed (.*)$/\1/p' "$tmp/err")
[ -n "$n" ] && [ "$n" -gt 0 ] || fail "exit log shows no packets processed"
grep -q "^sluice: exit: every buffer returned$" "$tmp/err" || fail "exit log: buffers not all returned"
grep -q "^sluice: exit: node interface-output: " "$tmp/err" || fail "exit log: no interface-output counters"
echo "foreground: $n packets processed, every buffer returned"

# ---- daemon mode ----
sed -i "s|^  nodaemon .*|  daemon\n  pidfile $tmp/sluice.pid\n  log $tmp/sluice.log|" "$tmp/startup.conf"
rm -f "$tmp/err"
timeout 10 "$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" || fail "daemon start returned non-zero"
wait_for_line "main: running" 200 "$tmp/sluice.log" || fail "daemon did not log running within 20 s"
[ -s "$tmp/sluice.pid" ] || fail "no pidfile"
pid=$(cat "$tmp/sluice.pid")
kill -0 "$pid" || fail "pidfile names no process"
sleep 0.5
kill -TERM "$pid"
daemon_wait_gone "$pid" 20 || fail "daemon still running 2 s after SIGTERM"
pid=
grep -q "^sluice: exit: every buffer returned$" "$tmp/sluice.log" || fail "daemon log: buffers not all returned"
[ ! -e "$tmp/sluice.pid" ] || fail "pidfile left behind"
echo "daemon: pidfile and log file ok"
exit 0
