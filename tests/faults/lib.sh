# Shared by the fault tests that run one daemon without namespaces. The
# sourcing script sets sluice, sluicectl and tmp (a directory it made) and
# may define extra_cleanup (run on exit before $tmp goes). The daemon runs
# on $tmp/startup.conf with its CLI on $tmp/cli.sock; everything is stopped
# and removed on exit, failure included.

pid=

fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && sed 's/^/  | /' "$tmp/err" | grep -v "exit: node" | tail -30 >&2
	exit 1
}

daemon_cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	declare -F extra_cleanup > /dev/null && extra_cleanup
	rm -rf "$tmp"
}
trap daemon_cleanup EXIT
trap 'exit 1' INT TERM HUP

ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}

now_ms() {
	date +%s%3N
}

# Start the daemon and wait (5 s at most) until it runs.
daemon_start() {
	"$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" &
	pid=$!
	for _ in $(seq 200); do grep -q "main: running" "$tmp/err" && return 0; sleep 0.1; done
	fail "$(basename "$sluice") did not come up within 20 s"
}

# Stop it with SIGTERM, 5 s at most: exit 0, every buffer returned.
daemon_stop() {
	kill -TERM "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -0 "$pid" 2>/dev/null && fail "still running 5 s after SIGTERM"
	wait "$pid"
	local rc=$?
	pid=
	[ "$rc" -eq 0 ] || fail "exit status $rc"
	grep -q "^sluice: exit: every buffer returned$" "$tmp/err" || fail "exit log: buffers not all returned"
}

# `show buffers` names a holder for every buffer in use.
assert_all_attributed() {
	ctl show buffers > "$tmp/buffers" || fail "show buffers"
	grep -Eq "^unattributed +- +0$" "$tmp/buffers" || { cat "$tmp/buffers" >&2; fail "show buffers: buffers unattributed${1:+ $1}"; }
}
