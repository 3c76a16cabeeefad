#!/bin/bash
# CLI access against the real daemon, through its real sockets: the unix
# socket's mode and group, cli-max-sessions, cli-max-line (one-shot and
# interactive), cli-file-dir for trace save, pcap capture and a pcap
# tx-file (`..`, symlinked files and directories, FIFOs and hard links
# refused, nothing written);
# then TCP on 127.0.0.1 with a password file (sluicectl -a, the env var, a
# wrong password, interactive sluicectl's exit status after a refused
# login, libcli's own login prompt, cli-idle-timeout closing an
# idle session); and --check refusing what sluice would refuse at start.
# Every wait is bounded; daemons are stopped and files removed on any exit.
#
#   test_access.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
tmp=$(mktemp -d /tmp/sluice-access-XXXXXX)
pids=()
n_checks=0
fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/out" ] && sed 's/^/  | /' "$tmp/out" >&2
	exit 1
}
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap cleanup EXIT
pass() { n_checks=$((n_checks + 1)); }

where=$tmp/cli.sock
ctl() { timeout 10 "$sluicectl" -s "$where" "$@" > "$tmp/out" 2>&1; }
ok() {
	ctl "$@" || fail "'$*' failed"
	pass
}
# refused WANT CMD...: the command fails (exit 1) and prints WANT.
refused() {
	local want=$1
	shift
	ctl "$@"
	local rc=$?
	[ "$rc" = 1 ] || fail "'$*' exited $rc, expected 1"
	grep -qF -- "$want" "$tmp/out" || fail "'$*' did not say '$want'"
	pass
}

# start CONF: run sluice on it and wait (5 s at most) until it answers.
start() {
	"$sluice" -c "$1" 2>> "$tmp/err" &
	pids+=($!)
	for _ in $(seq 50); do
		ctl show version && return 0
		grep -q "needs a login" "$tmp/out" 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$tmp/err" >&2
	fail "sluice did not answer within 5 s"
}
stop() {
	kill -TERM "${pids[-1]}"
	timeout 10 tail --pid="${pids[-1]}" -f /dev/null || fail "sluice did not stop within 10 s"
	unset 'pids[-1]'
}

# ---- --check ----
# check_refuses TEXT LINE:COL MESSAGE
check_refuses() {
	printf '%b' "$1" > "$tmp/bad.conf"
	timeout 10 "$sluice" --check -c "$tmp/bad.conf" > /dev/null 2> "$tmp/out"
	local rc=$?
	[ "$rc" = 2 ] || fail "--check on '$1' exited $rc, expected 2"
	grep -qF -- "$tmp/bad.conf:$2: error: " "$tmp/out" && grep -qF -- "$3" "$tmp/out" ||
		fail "--check on '$1' did not say '$2: ... $3'"
	pass
}
check_refuses 'unix {\n  cli-listen 0.0.0.0:5002\n}\n' 2:14 \
	"'cli-listen 0.0.0.0:5002': not a loopback address: a CLI reachable from the network needs cli-password-file"
check_refuses 'unix {\n  cli-listen [::]:5002\n}\n' 2:14 "not a loopback address"
check_refuses 'unix {\n  cli-group no-such-group-x\n}\n' 2:13 "'cli-group no-such-group-x': no group"
check_refuses "unix {\n  cli-file-dir $tmp/nowhere\n}\n" 2:16 "No such file or directory"
printf 'op:right\n' > "$tmp/pw"
chmod 0644 "$tmp/pw"
check_refuses "unix {\n  cli-listen 0.0.0.0:5002 cli-password-file $tmp/pw\n}\n" 2:45 "lets others read or write it"
chmod 0600 "$tmp/pw"
printf 'unix { cli-listen 0.0.0.0:5002 cli-password-file %s }\n' "$tmp/pw" > "$tmp/ok.conf"
timeout 10 "$sluice" --check -c "$tmp/ok.conf" > "$tmp/out" 2>&1 || fail "--check refused 0.0.0.0 with a password file"
pass

# ---- unix socket: mode, group, sessions, line length, file directory ----
mkdir -p "$tmp/files/sub" "$tmp/outside"
ln -s "$tmp/outside/stolen.json" "$tmp/files/link.json"
ln -s "$tmp/outside" "$tmp/files/outdir"
mkfifo "$tmp/files/fifo"
echo "outside" > "$tmp/outside/kept"
ln "$tmp/outside/kept" "$tmp/files/hard"
cat > "$tmp/unix.conf" << EOF
unix {
  cli-listen $where
  cli-mode 0660
  cli-group daemon
  cli-max-sessions 2
  cli-max-line 256
  cli-idle-timeout 60s
  cli-file-dir $tmp/files
}
EOF
timeout 10 "$sluice" --check -c "$tmp/unix.conf" > "$tmp/out" 2>&1 || fail "--check of unix.conf"
for kv in "cli-mode 0660" "cli-group daemon" "cli-max-sessions 2" "cli-max-line 256" "cli-idle-timeout 1m" \
	"cli-file-dir $tmp/files" 'cli-password-file ""'; do
	grep -qxF "  $kv" "$tmp/out" || fail "--check does not print '$kv'"
done
pass
start "$tmp/unix.conf"
[ "$(stat -c '%a %G' "$where")" = "660 daemon" ] || fail "socket is $(stat -c '%a %G' "$where"), expected 660 daemon"
pass
ok show cli
grep -q "^sessions  *1 open of 2$" "$tmp/out" || fail "show cli: not 1 open of 2"
pass

# Two interactive sessions fill cli-max-sessions 2: the third is told so.
# The holders' input ends after 4 s, which ends their sessions.
for i in 1 2; do
	sleep 4 | timeout 10 "$sluicectl" -s "$where" > "$tmp/held$i" 2>&1 &
	holders[i]=$!
done
for _ in $(seq 30); do
	[ "$(cat "$tmp/held1" "$tmp/held2" 2>/dev/null | grep -c "debug CLI")" = 2 ] && break
	sleep 0.1
done
ctl show version
rc=$?
[ "$rc" = 2 ] || fail "a third session exited $rc, expected 2 (refused)"
grep -qF "error: too many CLI sessions (cli-max-sessions 2), try again later" "$tmp/out" || fail "third session: no refusal"
pass
wait "${holders[@]}"
for _ in $(seq 50); do
	ctl show cli && break
	sleep 0.1
done
# the third session, and any try above that came before a slot freed
grep -q "^refused-busy  *[1-9][0-9]*$" "$tmp/out" || fail "show cli: refused-busy not counted"
pass

# Lines over 256 bytes run nothing, one-shot or typed; the server goes on.
long=$(printf 'L%.0s' $(seq 250))
refused "error: command line longer than 256 bytes; nothing was run" trace save "$tmp/files/$long"
[ ! -e "$tmp/files/$long" ] || fail "an overlong trace save wrote its file"
printf 'trace save %s/files/%s\rshow version\rquit\r' "$tmp" "$long" |
	timeout 10 "$sluicectl" -s "$where" > "$tmp/out" 2>&1
grep -q "error: command line of 2[0-9][0-9] bytes is longer than 256; nothing was run" "$tmp/out" ||
	fail "interactive: overlong line not refused"
grep -q "^sluice " "$tmp/out" || fail "interactive: show version after the long line did not answer"
[ ! -e "$tmp/files/$long" ] || fail "an overlong typed trace save wrote its file"
pass
huge=$(printf 'H%.0s' $(seq 5000))
printf 'show %s\rshow version\rquit\r' "$huge" | timeout 10 "$sluicectl" -s "$where" > "$tmp/out" 2>&1
grep -q "^sluice " "$tmp/out" || fail "interactive: no answer after a 5000-byte line"
ok show cli
grep -q "^long-lines  *3$" "$tmp/out" || fail "show cli: long-lines is not 3"
pass

# cli-file-dir: inside is written, every way out is refused and writes nothing.
ok trace save "$tmp/files/t.json"
[ -s "$tmp/files/t.json" ] || fail "trace save inside cli-file-dir wrote nothing"
ok trace save "$tmp/files/sub/../t2.json"
[ -s "$tmp/files/t2.json" ] || fail "trace save through sub/.. wrote nothing"
refused "outside cli-file-dir" trace save "$tmp/files/../outside/escaped.json"
refused "outside cli-file-dir" trace save "$tmp/outside/direct.json"
refused "outside cli-file-dir" trace save "$tmp/files/outdir/via-dir-link.json"
refused "is a symbolic link" trace save "$tmp/files/link.json"
refused "outside cli-file-dir" pcap capture rx max 1 file "$tmp/files/../outside/c.pcap"
refused "is a symbolic link" pcap capture rx max 1 file "$tmp/files/link.json"
# Opened as checked, not after: a FIFO is refused at once (no reader
# needed), a hard link to a file outside is refused and the file keeps its bytes.
refused "not a plain file" trace save "$tmp/files/fifo"
refused "has other hard links" trace save "$tmp/files/hard"
refused "has other hard links" pcap capture rx max 1 file "$tmp/files/hard"
[ "$(cat "$tmp/outside/kept")" = outside ] || fail "a file outside was changed through its hard link"
rm "$tmp/files/hard"
ok pcap capture rx max 1 file "$tmp/files/c.pcap"
ok pcap capture off
[ -s "$tmp/files/c.pcap" ] || fail "pcap capture inside cli-file-dir wrote nothing"
refused "outside cli-file-dir" create interface p0 driver pcap tx-file "$tmp/outside/tx.pcap"
ctl show interface p0 && fail "a refused create interface made p0"
ok create interface p0 driver pcap tx-file "$tmp/files/tx.pcap"
[ -e "$tmp/files/tx.pcap" ] || fail "pcap tx-file inside cli-file-dir not created"
[ "$(ls -A "$tmp/outside")" = kept ] || fail "something was written outside: $(ls "$tmp/outside")"
pass
stop

# ---- TCP on 127.0.0.1 with a password file ----
hash=$(perl -e 'print crypt("hashed secret", q($6$sluiceab$))')
printf '# sluice CLI logins\nop:right pass\nadmin:%s\n' "$hash" > "$tmp/pw"
chmod 0600 "$tmp/pw"
printf 'op:right pass\n' > "$tmp/good"
printf 'admin:hashed secret\n' > "$tmp/good-hash"
printf 'op:wrong\n' > "$tmp/bad"
chmod 0600 "$tmp/good" "$tmp/good-hash" "$tmp/bad"
# A free port: bind 0 and let it go; a race with another bind just retries.
for attempt in 1 2 3; do
	port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
	where=127.0.0.1:$port
	# The stats socket beside the test's files: with a TCP CLI its default is
	# the system's (/run/sluice/stats.sock), which another daemon may hold.
	printf 'unix {\n  cli-listen %s\n  cli-password-file %s\n  cli-idle-timeout 2s\n}\nstatseg { socket-name %s }\n' \
		"$where" "$tmp/pw" "$tmp/stats.sock" > "$tmp/tcp.conf"
	: > "$tmp/err"
	"$sluice" -c "$tmp/tcp.conf" 2>> "$tmp/err" &
	pids+=($!)
	for _ in $(seq 50); do
		ctl show version
		grep -q "needs a login" "$tmp/out" && break
		kill -0 "${pids[-1]}" 2>/dev/null || break
		sleep 0.1
	done
	grep -q "needs a login" "$tmp/out" && break
	wait "${pids[-1]}" 2>/dev/null
	unset 'pids[-1]'
	[ "$attempt" = 3 ] && { cat "$tmp/err" >&2; fail "sluice did not listen on TCP"; }
done
refused "error: this CLI needs a login (sluicectl -a FILE)" show version
ctl -a "$tmp/good" show version || fail "sluicectl -a with the right password failed"
grep -q "^sluice " "$tmp/out" || fail "sluicectl -a: no version"
pass
SLUICECTL_AUTH_FILE=$tmp/good-hash ctl show version || fail "\$SLUICECTL_AUTH_FILE with a hashed entry failed"
pass
refused "error: login refused" -a "$tmp/bad" show version
# Interactive sluicectl exits as the one-shot does: 1 after a refused login
# (-a, or three wrong passwords at libcli's prompt), 0 after a session; the
# status the server sends after a refusal is not printed.
# interactive RC INPUT [ARGS...]: pipe INPUT into sluicectl; it must exit RC.
interactive() {
	local want=$1 input=$2
	shift 2
	printf '%b' "$input" | timeout 20 "$sluicectl" -s "$where" "$@" > "$tmp/out" 2>&1
	local rc=$?
	[ "$rc" = "$want" ] || fail "interactive sluicectl $* exited $rc, expected $want"
	[ "$(tr -cd '\000' < "$tmp/out" | wc -c)" = 0 ] || fail "interactive sluicectl printed the status mark"
}
interactive 1 'show version\rquit\r' -a "$tmp/bad"
grep -q "error: login refused" "$tmp/out" || fail "interactive: the refusal was not said"
grep -q "^sluice [0-9.]*, built" "$tmp/out" && fail "interactive: a refused login ran show version"
pass
interactive 1 'op\rno1\rop\rno2\rop\rno3\rshow version\r'
grep -q "too many failed logins" "$tmp/out" || fail "interactive: no refusal after three wrong passwords"
grep -q "^sluice [0-9.]*, built" "$tmp/out" && fail "interactive: show version ran after three refusals"
pass
interactive 0 'show version\rquit\r' -a "$tmp/good"
grep -q "^sluice [0-9.]*, built" "$tmp/out" || fail "interactive -a with the right password: no version"
pass
chmod 0644 "$tmp/good"
ctl -a "$tmp/good" show version
[ $? = 2 ] || fail "sluicectl used a credentials file others may read"
grep -q "others may read or write it" "$tmp/out" || fail "sluicectl did not say why it refused the file"
chmod 0600 "$tmp/good"
pass

# libcli's own login prompt, as telnet sees it (bash's /dev/tcp).
# telnet_session INPUT: send INPUT after the prompt; print what came back.
telnet_session() {
	exec 3<> "/dev/tcp/127.0.0.1/$port" || fail "cannot connect to $where"
	sleep 0.5 # past the server's hello wait
	printf '%b' "$1" >&3
	timeout 15 cat <&3
	exec 3<&-
}
telnet_session 'op\rwrong\rop\rright pass\rshow cli\rquit\r' > "$tmp/out" 2>&1
grep -q "Access denied" "$tmp/out" || fail "telnet: a wrong password was not denied"
grep -q "^login  *password file" "$tmp/out" || fail "telnet: show cli did not run after the right password"
pass
telnet_session 'op\rno1\rop\rno2\rop\rno3\rop\rright pass\rshow version\r' > "$tmp/out" 2>&1
grep -q "too many failed logins" "$tmp/out" || fail "telnet: no refusal after three tries"
grep -q "^sluice " "$tmp/out" && fail "telnet: a fourth try got in after three refusals"
pass

# cli-idle-timeout 2s: a logged-in session that sends nothing is closed.
start_ns=$(date +%s%N)
telnet_session 'op\rright pass\r' > "$tmp/out" 2>&1
idle_ms=$((($(date +%s%N) - start_ns) / 1000000))
grep -q "idle for 2s: session closed" "$tmp/out" || fail "no idle timeout message"
# libcli compares whole seconds (time(2) at the last key against time(2)
# now, checked about once a second): a 2 s timeout closes a session after
# more than 1 s and at most about 3 s of silence, and the login itself
# waits 0.5 s first (a run closed it after 1,511 ms). A loaded machine
# gets slack above.
[ "$idle_ms" -ge 1000 ] && [ "$idle_ms" -le 9000 ] || fail "idle session closed after ${idle_ms} ms, expected ~1.5-3.5 s"
echo "idle session closed after ${idle_ms} ms (cli-idle-timeout 2s)"
pass
ctl -a "$tmp/good" show cli || fail "show cli over TCP"
grep -q "^idle-closed  *1$" "$tmp/out" || fail "show cli: idle-closed is not 1"
grep -q "^login-failures  *[1-9]" "$tmp/out" || fail "show cli: no login failures counted"
pass
stop

echo "ok: $n_checks checks"
