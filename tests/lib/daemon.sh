# Shared by the tests that run a sluice daemon with its CLI socket (and
# stats socket) in a directory of their own, no root needed. The sourcing
# script sets sluice (and sluicectl for daemon_ctl / daemon_wait_cli), then
# calls daemon_init; it reads tmp, pid (the running daemon) and, after
# daemon_stop, daemon_rc. The daemon is killed and the directory removed on
# any exit, failure included.

pid=
daemon_rc=
# fail() shows this file of $tmp (its last $daemon_fail_tail lines, or all).
daemon_fail_log=err
daemon_fail_tail=
# Non-empty: the exit trap stops the daemon with SIGTERM first (3 s) and
# INT/TERM/HUP end the script through it; else SIGKILL at once.
daemon_gentle=

fail() {
	echo "FAIL: $*" >&2
	if [ -f "$tmp/$daemon_fail_log" ]; then
		if [ -n "$daemon_fail_tail" ]; then
			sed 's/^/  | /' "$tmp/$daemon_fail_log" | tail -"$daemon_fail_tail" >&2
		else
			sed 's/^/  | /' "$tmp/$daemon_fail_log" >&2
		fi
	fi
	exit 1
}

daemon_cleanup() {
	if [ -n "$pid" ] && [ -n "$daemon_gentle" ]; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 30); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	fi
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}

# daemon_init NAME [gentle]: tmp=/tmp/sluice-NAME-XXXXXX and the traps.
daemon_init() {
	tmp=$(mktemp -d "/tmp/sluice-$1-XXXXXX")
	daemon_gentle=${2:-}
	trap daemon_cleanup EXIT
	[ -n "$daemon_gentle" ] && trap 'exit 1' INT TERM HUP
	return 0
}

# daemon_cli_init NAME: daemon_init for a test driven through sluicectl:
# fail() shows the last command's output; ctl runs one (daemon_ctl) and ok
# one that must succeed, counted in n_checks.
daemon_cli_init() {
	daemon_init "$1"
	daemon_fail_log=out
	n_checks=0
	ctl() { daemon_ctl "$@"; }
	ok() {
		ctl "$@" || fail "'$*' failed"
		n_checks=$((n_checks + 1))
	}
}

# $tmp/startup.conf with only the CLI socket in $tmp.
daemon_write_conf() {
	printf 'unix { cli-listen %s }\n' "$tmp/cli.sock" > "$tmp/startup.conf"
}

# The repo's startup.conf $1 as $tmp/startup.conf, its CLI socket moved into
# $tmp: no /run/sluice needed, never another sluice met.
daemon_conf_from() {
	sed "s|/run/sluice/cli.sock|$tmp/cli.sock|" "$1" > "$tmp/startup.conf"
}

# daemon_start CONF [append]: sluice in the background on CONF, its stderr
# in $tmp/err (appended to with "append", else written anew); sets pid.
daemon_start() {
	if [ "${2:-}" = append ]; then
		"$sluice" -c "$1" 2>> "$tmp/err" &
	else
		"$sluice" -c "$1" 2> "$tmp/err" &
	fi
	pid=$!
}

# sluicectl on our socket, bounded at 10 s, its output in $tmp/out.
daemon_ctl() { timeout 10 "$sluicectl" -s "$tmp/cli.sock" "$@" > "$tmp/out" 2>&1; }

# Up to $1 tenths of a second for the CLI to answer `show version`;
# 1 at once if the daemon has exited.
daemon_wait_cli() {
	for _ in $(seq "$1"); do
		daemon_ctl show version && return 0
		kill -0 "$pid" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# daemon_wait_running TENTHS [EXITED_MESSAGE]: up to TENTHS tenths of a
# second for "main: running" in $tmp/err. With EXITED_MESSAGE, a daemon
# that exits meanwhile fails the test with it.
daemon_wait_running() {
	for _ in $(seq "$1"); do
		grep -q "main: running" "$tmp/err" 2>/dev/null && return 0
		[ -n "${2:-}" ] && { kill -0 "$pid" 2>/dev/null || fail "$2"; }
		sleep 0.1
	done
	return 1
}

# Up to $2 tenths of a second for process $1 to end. A daemon that left us
# waits as a zombie until its new parent (pid 1) reaps it, which can take a
# second: a zombie has ended.
daemon_wait_gone() {
	for _ in $(seq "$2"); do
		kill -0 "$1" 2>/dev/null || return 0
		[ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" = Z ] && return 0
		sleep 0.1
	done
	return 1
}

# SIGTERM to the daemon, up to $1 tenths of a second for it to end, then its
# exit status in daemon_rc and pid cleared; 1 (still running) otherwise.
daemon_stop() {
	kill -TERM "$pid"
	daemon_wait_gone "$pid" "$1" || return 1
	wait "$pid"
	daemon_rc=$?
	pid=
	return 0
}
