#!/bin/bash
# VPP's everyday commands against a live daemon: every row of the mapping
# in docs/vpp-cli.md, in table order. A row that sluice has (same, alias,
# new, abbrev) must be known and answer: exit 0, no "unknown command", some
# output for a `show`, and with json: yes, valid JSON for `LINE json`. A
# `missing` row must still be refused (adding the command means updating
# the row); `lead` rows belong to other branches and are not run. Then the
# registry and the table agree: every alias the daemon has (`help json`,
# "VPP's name for") is an alias row, and every `new` row's command is
# registered.
#
# No root needed: null interfaces and a generator stream, the CLI socket
# in a temporary directory the trap removes with the daemon. As root, the
# host-interface rows ({hostif}) get a veth of their own
# (removed by the trap); without root they are skipped and say so.
#
#   test_vpp_cli.sh SLUICE SLUICECTL DOC SLUICE_STATS
set -u
sluice=$1
sluicectl=$2
doc=$3
stats=$4
. "$(dirname "$0")/../lib/daemon.sh"
daemon_init vppcli gentle
daemon_fail_tail=30
command -v python3 > /dev/null || fail "python3 not found"

# Two frames 10 ms apart that cap0 replays forever at their own pace: a
# queue that always has something, to see which thread polls it.
python3 - "$tmp/in.pcap" <<'PY' || fail "cannot write in.pcap"
import struct, sys
frame = bytes.fromhex("020000000002" "020000000001" "0800") + bytes(50)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    for usec in (0, 10000):
        f.write(struct.pack("<IIII", 0, usec, len(frame), len(frame)) + frame)
PY

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
cpu { workers 1 }
interfaces {
  nul0 { driver null }
  nul1 { driver null }
  nul2 { driver null }
  cap0 { driver pcap  rx-file $tmp/in.pcap  rx-loops 0  rx-pace recorded }
}
packet-generator {
  pg0 { rate 1kpps  size 64  next-node error-drop }
}
CONF
hostif=
if [ "$(id -u)" = 0 ] && command -v ip > /dev/null; then
	# A veth pair of its own, no address, nothing sent on it (the name
	# carries the pid: other tests run at the same time).
	hostif=vcli$$
	if ip link add "$hostif" type veth peer name "vclp$$"; then
		trap 'daemon_cleanup; ip link del "$hostif" 2> /dev/null' EXIT
	else
		echo "SKIP: cannot make veth $hostif: the host-interface rows are not run"
		hostif=
	fi
fi

daemon_start "$tmp/startup.conf"
daemon_wait_running 200 || fail "sluice did not come up within 20 s"

python3 - "$sluicectl" "$tmp/cli.sock" "$doc" "$tmp" "$hostif" <<'PY' || fail "VPP commands"
import json, re, subprocess, sys
ctl, sock, doc, tmp, hostif = sys.argv[1:]

def ctl_run(line):
    p = subprocess.run([ctl, "-s", sock] + line.split(), capture_output=True, text=True, timeout=15)
    return p.returncode, p.stdout + p.stderr

# The table: the first one whose header is VPP | sluice | kind | test | json.
rows, in_table = [], False
for l in open(doc):
    cells = [c.strip() for c in l.strip().strip("|").split("|")] if l.startswith("|") else None
    if cells == ["VPP", "sluice", "kind", "test", "json"]:
        in_table = True
        continue
    if in_table and cells is None:
        break
    if in_table and not set(l.strip()) <= set("|-"):
        assert len(cells) == 5, f"row with {len(cells)} cells: {l!r}"
        # The sluice cell may say more after its command: the command is
        # its first `...` span.
        m = re.match(r"`([^`]*)`", cells[1])
        cells[1] = m.group(1) if m else cells[1]
        rows.append([c.strip("`") for c in cells])
assert len(rows) >= 60, f"only {len(rows)} rows in {doc}"
kinds = {"same", "alias", "new", "abbrev", "missing", "lead"}
bad, ran = [], 0
for vpp, sluice_cmd, kind, test, js in rows:
    assert kind in kinds, f"{vpp}: kind {kind!r}"
    if kind == "lead":
        continue
    line = test.replace("{tmp}", tmp)
    if "{hostif}" in line:
        if not hostif:
            print(f"SKIP (not root): {line}")
            continue
        line = line.replace("{hostif}", hostif)
    assert line and line != "-", f"{vpp}: no test line"
    rc, out = ctl_run(line)
    ran += 1
    if kind == "missing":
        if rc == 0:
            bad.append(f"{line}: exit 0, but the table says sluice lacks it; update the row")
        continue
    if rc != 0 or re.search(r"unknown command|invalid command", out):
        bad.append(f"{line}: exit {rc}: {out[:300]}")
        continue
    words = line.split()
    if words[0] in ("show", "sh") and not out.strip():
        bad.append(f"{line}: printed nothing")
    if js == "yes":
        rc, out = ctl_run(line + " json")
        try:
            doc_json = json.loads(out) if rc == 0 else None
        except ValueError as e:
            doc_json = None
            out = f"{e}: {out[:200]}"
        if rc != 0 or not doc_json:
            bad.append(f"{line} json: exit {rc}, not a JSON document: {out[:300]}")

# The registry and the table agree.
rc, out = ctl_run("help json")
assert rc == 0, out
commands = json.loads(out)["commands"]
paths = {c["path"] for c in commands}
aliases = [c["path"] for c in commands if c["help"].startswith("VPP's name for")]
assert len(aliases) >= 8, aliases

def covers(test, path):
    t, p = test.split(), path.split()
    return len(t) >= len(p) and all(pw.startswith(tw) for tw, pw in zip(t, p))

for a in aliases:
    if not any(k == "alias" and covers(t, a) for _, _, k, t, _ in rows):
        bad.append(f"alias '{a}' has no alias row in {doc}")
for vpp, sluice_cmd, kind, test, js in rows:
    if kind == "new" and sluice_cmd.split(" [")[0].split(" (")[0] not in paths:
        bad.append(f"new command '{sluice_cmd}' is not registered")
for b in bad:
    print("FAIL:", b, file=sys.stderr)
print(f"{ran} VPP command rows run, {len(aliases)} aliases registered")
sys.exit(1 if bad else 0)
PY

ctl() { "$sluicectl" -s "$tmp/cli.sock" "$@" > "$tmp/out" 2>&1 || fail "$*: $(cat "$tmp/out")"; }

# A loopback is real: what it sends comes back to it. Three packets of TTL
# 3 for a prefix routed out of loop0 to a neighbour at loop0's own MAC go
# out, come back, go out again (TTL 2, then 1) and expire: 6 sent and 6
# received on loop0, 3 TTL-expired in ip4-rewrite, and the first trace of
# loopback-input is a frame to and from loop0's MAC.
ctl create loopback interface instance 9
ctl show hardware-interfaces loop9 json
read -r loopmac loopidx <<< "$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1]))["interfaces"][0]; print(i["mac"], i["index"])' "$tmp/out")" ||
	fail "loop9 MAC: $(cat "$tmp/out")"
ctl set interface ip address loop9 10.77.0.1/24
ctl set interface state loop9 up
ctl set ip neighbor loop9 10.77.0.2 "$loopmac" static
ctl ip route add 10.88.0.0/16 via 10.77.0.2 loop9
ctl clear errors
ctl clear trace
ctl trace add loopback-input 1
ctl packet-generator new lo9 limit 3 rate 1kpps size 64 dst-mac "$loopmac" ethertype 0x0800 dst-ip 10.88.0.1 \
	ttl 3 rx-if "$loopidx" next-node ethernet-input
ctl packet-generator enable-stream lo9
for _ in $(seq 50); do
	ctl show interface loop9 json
	python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))[0]["counters"]; sys.exit(c["RX-packets"] < 6)' "$tmp/out" && break
	sleep 0.1
done
cp "$tmp/out" "$tmp/loop9.json"
ctl show errors json
python3 - "$tmp/loop9.json" "$tmp/out" <<'PY' || fail "loopback: tx does not come back as rx"
import json, sys
c = json.load(open(sys.argv[1]))[0]["counters"]
assert (c["TX-packets"], c["RX-packets"], c["TX-dropped"]) == (6, 6, 0), c
errs = json.load(open(sys.argv[2]))["errors"]
ttl = [e for e in errs if e["node"] == "ip4-rewrite" and "TTL" in e["reason"]]
assert ttl and ttl[0]["count"] == 3, ttl
PY
ctl show trace
grep -q "loop9 (if [0-9]*) rx queue 0 length 64: $loopmac -> $loopmac type 0x0800" "$tmp/out" ||
	fail "loopback-input trace: $(head -5 "$tmp/out")"
ctl packet-generator delete lo9
ctl delete loopback interface intfc loop9
"$sluicectl" -s "$tmp/cli.sock" show interface loop9 > /dev/null 2>&1 && fail "loop9 still there after delete"

# show memory counts the dispatch trace's rings while it holds them.
ctl pcap dispatch trace on max 5 file "$tmp/dtrace.pcap"
ctl show memory json
python3 - "$tmp/out" <<'PY' || fail "show memory: no dispatch trace rings: $(cat "$tmp/out")"
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["memory"]["subsystems"] if r["subsystem"] == "dtrace"]
assert len(rows) == 1 and rows[0]["bytes"] > 0, rows
PY
ctl pcap dispatch trace off

# A host-interface is the af-packet interface on it, with the MAC asked
# for; it comes up (its sockets bound) and goes.
if [ -n "$hostif" ]; then
	ctl create host-interface name "$hostif" hw-addr 02:00:00:00:00:22
	ctl set interface state "host-$hostif" up
	ctl show hardware-interfaces "host-$hostif" json
	python3 - "$tmp/out" <<'PY' || fail "host-interface: $(cat "$tmp/out")"
import json, sys
i = json.load(open(sys.argv[1]))["interfaces"][0]
assert i["driver"] == "af-packet" and i["mac"] == "02:00:00:00:00:22" and i["admin"] == "up", i
PY
	ctl delete host-interface name "$hostif"
fi

# set interface rx-placement moves the polling: pcap-input's vectors for
# cap0 come from the thread it names, none from the other (runtime cleared
# after each move, half a second of the ~100 frames/s it replays).
vectors_by_thread() {
	"$sluicectl" -s "$tmp/cli.sock" clear runtime > /dev/null || return 1
	sleep 0.5
	"$sluicectl" -s "$tmp/cli.sock" show runtime json | python3 -c '
import json, sys
threads = json.load(sys.stdin)["threads"]
print(" ".join(str(sum(n["vectors"] for n in t["nodes"] if n["name"] == "pcap-input")) for t in threads))'
}
placed=()
for where in "main:0" "worker 0:1" "main:0"; do
	"$sluicectl" -s "$tmp/cli.sock" set interface rx-placement cap0 ${where%:*} > "$tmp/out" ||
		fail "set interface rx-placement cap0 ${where%:*}: $(cat "$tmp/out")"
	v=$(vectors_by_thread) || fail "show runtime json"
	read -r v0 v1 <<< "$v"
	if [ "${where#*:}" = 0 ]; then
		[ "$v0" -gt 0 ] && [ "$v1" -eq 0 ] || fail "cap0 on main: pcap-input vectors per thread $v"
	else
		[ "$v1" -gt 0 ] && [ "$v0" -eq 0 ] || fail "cap0 on worker 0: pcap-input vectors per thread $v"
	fi
	# The running-config writes the queue's thread once it differs from
	# where start-up placed it (docs/running-config.md): the exact line, or
	# none when the queue is back where it started.
	"$sluicectl" -s "$tmp/cli.sock" show running-config > "$tmp/rc" || fail "show running-config"
	line=$(grep 'rx-placement cap0' "$tmp/rc")
	[ -z "$line" ] || [ "$line" = "set interface rx-placement cap0 queue 0 ${where%:*}" ] ||
		fail "running-config after rx-placement ${where%:*}: '$line'"
	placed+=("${line:+x}")
done
# Of main then worker 0, exactly one differs from start-up's thread, and
# the final move back to main gives what the first did.
[ "${placed[0]}${placed[1]}" = x ] && [ "${placed[2]}" = "${placed[0]}" ] ||
	fail "running-config rx-placement lines over main, worker 0, main: '${placed[*]}'"
"$sluicectl" -s "$tmp/cli.sock" set interface rx-placement cap0 worker 1 > "$tmp/out" &&
	fail "worker 1 of 1 worker was accepted"
grep -q "the workers are 0..0" "$tmp/out" || fail "worker 1: $(cat "$tmp/out")"

# The log ring's counters: show logging json and the stats segment agree,
# and clear logging (a row above) lowered neither.
"$sluicectl" -s "$tmp/cli.sock" show logging json > "$tmp/logging.json" || fail "show logging json"
sleep 0.3
"$stats" -s "$tmp/stats.sock" --json dump /log > "$tmp/seglog.json" || fail "sluice-stats dump /log"
python3 - "$tmp/logging.json" "$tmp/seglog.json" <<'PY' || fail "/log/ differs from show logging json"
import json, sys
log = json.load(open(sys.argv[1]))["logging"]
seg = {c["name"]: c["value"] for c in json.load(open(sys.argv[2]))["counters"]}
# clear logging ran after start-up's lines: they are gone from the ring,
# not from the count.
assert log["logged"] >= 8 and len(log["lines"]) < log["logged"], log
assert seg["/log/lines"] == log["logged"] and seg["/log/overwritten"] == log["overwritten"] == 0, (seg, log)
PY

# quit ended only its session: the daemon still answers, and stops clean.
"$sluicectl" -s "$tmp/cli.sock" show version > /dev/null || fail "sluice stopped answering"
daemon_stop 50 || fail "sluice still running 5 s after SIGTERM"
[ "$daemon_rc" -eq 0 ] || fail "sluice exit status $daemon_rc"
grep -q "^sluice: exit: every buffer returned$" "$tmp/err" || fail "exit log: buffers not all returned"
echo "ok: every VPP command in the mapping answers as the table says"
