#!/bin/bash
# The daemon on the repo's startup.conf (the built-in default) for a few
# seconds while the CLI and the stats segment are read over and over from
# outside (show threads, show timers, show runtime; sluice-stats dump),
# then SIGTERM: it must exit 0 within the bound, and the generator's packets
# must have reached nul0 meanwhile. Built with -Db_sanitize=thread (.ci/run's
# TSan list) a data race between the datapath and the control threads that
# read it (graph_thread_info beside graph_main_pin, timer_stats beside the
# wheel) makes sluice exit 66 and this test fail; otherwise it is a short
# daemon check. No root: null interfaces, sockets in a directory of its own.
#
#   test_daemon_smoke.sh SLUICE STARTUP_CONF SLUICECTL SLUICE_STATS [SECONDS]
# (KEEP=FILE in the environment keeps the daemon's stderr there, reports and all.)
set -u
sluice=$1
conf_src=$2
sluicectl=$3
stats=$4
seconds=${5:-4}
tmp=$(mktemp -d /tmp/sluice-smoke-XXXXXX)
pid=
fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && tail -n 60 "$tmp/err" | sed 's/^/  | /' >&2
	exit 1
}
cleanup() {
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	[ -n "${KEEP:-}" ] && cp "$tmp/err" "$KEEP"; rm -rf "$tmp"
}
trap cleanup EXIT

# The tx packets of nul0 in the stats segment (0 when absent).
nul0_tx() {
	timeout 10 "$stats" -s "$tmp/stats.sock" dump 2>/dev/null |
		awk '$1 == "/if/tx[nul0][0]" { print $2; found = 1 } END { if (!found) print 0 }'
}

sed "s|/run/sluice/cli.sock|$tmp/cli.sock|" "$conf_src" > "$tmp/startup.conf"
"$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" &
pid=$!
for _ in $(seq 300); do
	grep -q "main: running" "$tmp/err" 2>/dev/null && break
	kill -0 "$pid" 2>/dev/null || break
	sleep 0.1
done
grep -q "main: running" "$tmp/err" || fail "sluice did not come up within 30 s"

first=$(nul0_tx)
end=$((SECONDS + seconds))
reads=0
while [ "$SECONDS" -lt "$end" ] && [ "$reads" -lt 1000 ]; do
	for cmd in "show threads json" "show timers json" "show runtime"; do
		# shellcheck disable=SC2086 # the command's words
		timeout 10 "$sluicectl" -s "$tmp/cli.sock" $cmd > /dev/null || fail "sluicectl $cmd"
	done
	timeout 10 "$stats" -s "$tmp/stats.sock" dump > "$tmp/seg" || fail "sluice-stats dump"
	grep -q '^/timers/expiries\[main\]' "$tmp/seg" || fail "no /timers/expiries[main] in the stats segment"
	reads=$((reads + 1))
done
last=$(nul0_tx)
[ "$last" -gt "$first" ] || fail "nul0 tx did not rise in ${seconds} s: $first -> $last"

kill -TERM "$pid"
rc=
for _ in $(seq 300); do
	state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
	if [ -z "$state" ] || [ "$state" = Z ]; then # ended: a zombie until waited for
		wait "$pid"
		rc=$?
		break
	fi
	sleep 0.1
done
[ -n "$rc" ] || fail "sluice still running 30 s after SIGTERM"
pid=
grep -q "ThreadSanitizer" "$tmp/err" && fail "ThreadSanitizer reported (exit $rc)"
[ "$rc" -eq 0 ] || fail "exit $rc after SIGTERM"
grep -q "exit: every buffer returned" "$tmp/err" || fail "not every buffer returned"
echo "ok: $reads rounds of CLI and stats reads over ${seconds} s, nul0 tx $first -> $last, exit 0"
