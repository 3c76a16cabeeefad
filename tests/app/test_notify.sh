#!/usr/bin/env bash
# sd_notify under a stand-in for systemd: with NOTIFY_SOCKET set, sluice
# sends READY=1 once the graph runs and the CLI listens (sluicectl answers
# the moment READY=1 arrives), then STOPPING=1 on SIGTERM, in that order,
# and exits 0. The unit's Type=notify (app/sluice.service.in) relies on it.
#   test_notify.sh SLUICE SLUICECTL HAVE_LIBSYSTEMD(true|false)
set -euo pipefail
sluice=$1 sluicectl=$2
[ "$3" = true ] || { echo "SKIP: built without libsystemd (-Dsystemd=disabled)"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: no python3"; exit 77; }
tmp=$(mktemp -d /tmp/sluice-notify.XXXXXX)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; [ -f "$tmp/log" ] && tail -20 "$tmp/log" >&2; exit 1; }

# The notify socket: one line per datagram, its newlines shown as spaces.
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
open(sys.argv[1] + ".bound", "w").close()
with open(sys.argv[2], "a") as out:
    while True:
        out.write(s.recv(4096).decode().replace("\n", " ") + "\n")
        out.flush()
' "$tmp/notify" "$tmp/messages" &
pids+=($!)
for _ in $(seq 100); do [ -e "$tmp/notify.bound" ] && break; sleep 0.05; done
[ -e "$tmp/notify.bound" ] || fail "the notify listener did not start"
: >"$tmp/messages"

cat >"$tmp/startup.conf" <<CONF
unix { cli-listen $tmp/cli.sock }
statseg { socket-name $tmp/stats.sock }
CONF
NOTIFY_SOCKET=$tmp/notify "$sluice" -c "$tmp/startup.conf" >"$tmp/log" 2>&1 &
daemon=$!
pids+=($daemon)
for _ in $(seq 400); do grep -q READY=1 "$tmp/messages" && break; sleep 0.05; done
grep -q '^READY=1' "$tmp/messages" || fail "no READY=1 within 20 s: $(cat "$tmp/messages")"
# READY=1 promised a listening CLI.
"$sluicectl" -s "$tmp/cli.sock" show version >/dev/null || fail "READY=1 came, the CLI does not answer"
grep -q STOPPING "$tmp/messages" && fail "STOPPING before any signal"
kill -TERM "$daemon"
rc=0
wait "$daemon" || rc=$?
[ "$rc" = 0 ] || fail "sluice exited $rc after SIGTERM"
for _ in $(seq 40); do grep -q STOPPING=1 "$tmp/messages" && break; sleep 0.05; done
got=$(cut -d' ' -f1 "$tmp/messages" | tr '\n' ' ')
[ "$got" = "READY=1 STOPPING=1 " ] || fail "messages in order: '$got', expected 'READY=1 STOPPING=1 '"
echo "notify: READY=1 with the CLI listening, STOPPING=1 on SIGTERM"
