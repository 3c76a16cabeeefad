#!/bin/bash
# The event log in the daemon: one worker, `event-logger { size 64 }`, the
# CLI under cli-file-dir. Through sluicectl (a CLI session, so the control
# track):
#   - `clear runtime` and `set interface state nul0 down|up` appear with
#     their barrier spans (2 threads parked: main and the worker), and the
#     admin changes;
#   - no track shows more than size - 1 = 63 events: the main thread's
#     shows 63 after the 100 commands of the `exec` file it ran;
#   - `event-logger save` writes Trace Event JSON under cli-file-dir (every
#     event with ph, ts, pid = the daemon's pid, tid; spans with dur; the
#     tracks named main, worker 0, control) and refuses a path outside it;
#   - bad arguments print usage.
#
#   test_elog.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
tmp=$(mktemp -d /tmp/elog-daemon-XXXXXX)
. "$(dirname "$0")/../faults/lib.sh"

mkdir -p "$tmp/files"
for _ in $(seq 100); do echo "show version"; done > "$tmp/setup.cli"
cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock  cli-file-dir $tmp/files  exec $tmp/setup.cli }
cpu { workers 1 }
interfaces {
  pg0  { driver null  l2-xconnect nul0 }
  nul0 { driver null }
}
packet-generator { s0 { rate 10kpps  size 64  next-node ethernet-input  rx-if 0 } }
event-logger { size 64 }
CONF
netns_start_sluice

ctl clear runtime > /dev/null || fail "clear runtime"
ctl set interface state nul0 down > /dev/null || fail "set interface state nul0 down"
ctl set interface state nul0 up > /dev/null || fail "set interface state nul0 up"
ctl show event-logger 20 json > "$tmp/show.json" || fail "show event-logger 20 json"
python3 - "$tmp/show.json" <<'PY' || fail "show event-logger: the commands, their barriers and the admin changes"
import json, sys
ev = json.load(open(sys.argv[1]))["events"]
cmds = [e for e in ev if e["event"] == "cli" and e["thread"] == "control"]
bars = [e for e in ev if e["event"] == "barrier" and e["thread"] == "control"]
admin = [(e["args"]["interface"], e["args"]["up"]) for e in ev if e["event"] == "admin"]
assert [c["args"]["command"] for c in cmds][:3] == ["clear runtime", "set interface state", "set interface state"], cmds
for c in cmds[:3]:
    inside = [b for b in bars if c["time_ns"] <= b["time_ns"] and
              b["time_ns"] + b["duration_ns"] <= c["time_ns"] + c["duration_ns"]]
    assert len(inside) >= 1 and inside[0]["duration_ns"] > 0 and inside[0]["args"]["threads"] == 2, (c, bars)
assert admin[-2:] == [("nul0", 0), ("nul0", 1)], admin
PY

ctl show event-logger 100000 json | python3 -c '
import collections, json, sys
n = collections.Counter(e["track"] for e in json.load(sys.stdin)["events"])
print("events per track:", dict(n))
sys.exit(0 if n and max(n.values()) <= 63 and n[0] == 63 else 1)' || fail "a track shows more than size - 1 events"

out=$(ctl event-logger save "$tmp/files/elog.json") || fail "event-logger save: $out"
grep -q "^saved [0-9]* events to $tmp/files/elog.json" <<< "$out" || fail "event-logger save said: $out"
python3 - "$tmp/files/elog.json" "$pid" <<'PY' || fail "the saved file is not the Trace Event JSON expected"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["displayTimeUnit"] == "ns"
names = {}
for e in d["traceEvents"]:
    for k in ("ph", "ts", "pid", "tid"):
        assert k in e, (k, e)
    assert e["pid"] == int(sys.argv[2]), e
    if e["ph"] == "X":
        assert e["dur"] >= 0, e
    if e["ph"] == "M" and e["name"] == "thread_name":
        names[e["tid"]] = e["args"]["name"]
assert names == {0: "main", 1: "worker 0", 64: "control"}, names
PY
out=$(ctl event-logger save /tmp/elog-outside-$$.json 2>&1) && fail "a save outside cli-file-dir was accepted"
grep -q "outside cli-file-dir" <<< "$out" || fail "save outside cli-file-dir said: $out"
[ ! -e "/tmp/elog-outside-$$.json" ] || fail "a file was written outside cli-file-dir"
out=$(ctl show event-logger many 2>&1) && fail "show event-logger many was accepted"
grep -q "usage: show event-logger \[N\] \[json\]" <<< "$out" || fail "no usage for a bad argument: $out"

netns_stop_sluice
echo PASS
