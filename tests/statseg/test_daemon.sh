#!/bin/bash
# sluice-stats against the real daemon: after the generator forwarded a
# known number of packets (pg0 cross-connected to nul0), `sluice-stats dump
# --json` equals `show interface json`, `show errors json` and the vectors
# of `show runtime verbose json`; glob, name and --regex patterns select
# the right entries and poll --json gives rates over the writer's own
# interval; the socket is 0600; it answers while every CLI session is
# taken; readers killed mid-poll and readers that
# connect and never read leave the daemon copying and answering; `clear
# interfaces` changes the CLI, not the segment; the socket is removed at
# exit; with a worker and the distributor, /dist counts every packet and
# `clear distributor` does not lower it; /cli/ and the distributor's global
# /dist/ entries equal `show cli json` and `show distributor json`. Every wait is bounded; the daemon
# is killed and the directory removed on any exit.
#
#   test_daemon.sh SLUICE SLUICECTL SLUICE_STATS
set -u
sluice=$1
sluicectl=$2
stats=$3
tmp=$(mktemp -d /tmp/sluice-statseg-XXXXXX)
pid=
pids=()
n_checks=0
fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/out" ] && sed 's/^/  | /' "$tmp/out" >&2
	[ -f "$tmp/err" ] && sed 's/^/  log| /' "$tmp/err" >&2
	exit 1
}
cleanup() {
	for p in "${pids[@]}"; do kill -KILL "$p" 2>/dev/null; done
	[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
pass() { n_checks=$((n_checks + 1)); }

ctl() { timeout 10 "$sluicectl" -s "$tmp/cli.sock" "$@" > "$tmp/out" 2>&1; }
st() { timeout 10 "$stats" -s "$tmp/stats.sock" "$@"; }

# The one packet count everything below is checked against.
N=5000
cat > "$tmp/startup.conf" <<EOF
unix { cli-listen $tmp/cli.sock cli-max-sessions 2 }
interfaces {
  pg0 { driver null l2-xconnect nul0 }
  nul0 { driver null }
}
packet-generator { s0 { limit $N rate 100kpps size 64 next-node ethernet-input rx-if 0 } }
statseg { update-interval 20ms }
EOF
"$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" &
pid=$!
for _ in $(seq 50); do
	ctl show version && break
	sleep 0.1
done
ctl show version || fail "the daemon did not answer"

[ "$(stat -c %a "$tmp/stats.sock")" = 600 ] || fail "stats.sock mode $(stat -c %a "$tmp/stats.sock"), expected 600"
pass

# The stream's N packets, then one more copy of the segment.
tx_nul0() { st dump /if/tx | awk '$1 == "/if/tx[nul0][0]" { print $2 }'; }
for _ in $(seq 100); do
	[ "$(tx_nul0)" = "$N" ] && break
	sleep 0.05
done
[ "$(tx_nul0)" = "$N" ] || fail "/if/tx[nul0][0] is $(tx_nul0), expected $N"
pass

# The segment equals the CLI's JSON, counter by counter.
ctl show interface json && cp "$tmp/out" "$tmp/if.json" || fail "show interface json"
ctl show errors json && cp "$tmp/out" "$tmp/err.json" || fail "show errors json"
ctl show runtime verbose json && cp "$tmp/out" "$tmp/rt.json" || fail "show runtime json"
st --json dump > "$tmp/seg.json" || fail "sluice-stats dump --json"
python3 - "$tmp" "$N" <<'EOF' > "$tmp/out" 2>&1 || fail "the segment differs from the CLI"
import json, sys
d, n = sys.argv[1], int(sys.argv[2])
seg = {c["name"]: c for c in json.load(open(d + "/seg.json"))["counters"]}
def rows(name):
    return seg[name].get("values", [])
def if_total(ifname, entry, key, driver):
    q = sum(v[key] for v in rows(entry) if v["interface"] == ifname)
    return q + sum(v["value"] for v in rows(driver) if v["interface"] == ifname)
ifs = json.load(open(d + "/if.json"))
ifs = ifs if isinstance(ifs, list) else ifs["interfaces"]
cols = {"RX-packets": ("/if/rx", "packets"), "RX-bytes": ("/if/rx", "bytes"),
        "RX-dropped": ("/if/rx-dropped", "value"), "RX-errors": ("/if/rx-errors", "value"),
        "TX-packets": ("/if/tx", "packets"), "TX-bytes": ("/if/tx", "bytes"),
        "TX-dropped": ("/if/tx-dropped", "value")}
checked = 0
for i in ifs:
    for cli, (entry, key) in cols.items():
        drv = "/if/driver/" + cli.lower()
        got = if_total(i["name"], entry, key, drv)
        assert got == i["counters"][cli], (i["name"], cli, got, i["counters"][cli])
        checked += 1
assert [i for i in ifs if i["name"] == "nul0"][0]["counters"]["TX-packets"] == n
for e in json.load(open(d + "/err.json"))["errors"]:
    name = "/err/%s/%s" % (e["node"], e["reason"])
    got = sum(v["value"] for v in seg[name]["values"])  # a counter per thread
    assert got == e["count"], (name, got, e["count"])
    checked += 1
vec = {(v["thread"], v["node"]): v["value"] for v in rows("/node/vectors")}
for t in json.load(open(d + "/rt.json"))["threads"]:
    for nd in t["nodes"]:
        assert vec[(t["name"], nd["name"])] == nd["vectors"], (t["name"], nd["name"])
        checked += 1
assert vec[("main", "ethernet-input")] == n
print("%d counters equal" % checked)
EOF
pass

# PATTERN: a glob, a name and what is under it, or a regular expression;
# poll prints rates (nothing moves once the stream is done: 0 per second).
st ls '/err/*TTL*' > "$tmp/out" || fail "ls glob"
[ "$(wc -l < "$tmp/out")" = 1 ] && grep -q "^/err/ip4-rewrite/TTL expired: ICMP time-exceeded sent " "$tmp/out" ||
	fail "ls '/err/*TTL*'"
[ "$(st ls /if/tx | awk '{ print $1 }')" = "/if/tx" ] || fail "ls /if/tx: $(st ls /if/tx)"
[ "$(st ls /buffer | wc -l)" = 4 ] || fail "ls /buffer: $(st ls /buffer)"
[ "$(st --regex ls '^/node/(calls|vectors)$' | awk '{ print $1 }' | tr '\n' ' ')" = "/node/calls /node/vectors " ] ||
	fail "ls --regex: $(st --regex ls '^/node/(calls|vectors)$')"
st --json poll /if/tx --interval 100ms --count 2 > "$tmp/poll.json" || fail "poll"
python3 - "$tmp/poll.json" <<'EOF' > "$tmp/out" 2>&1 || fail "poll --json"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 2, len(lines)
for l in lines:
    assert 0.05 < l["seconds"] < 1, l["seconds"]
    (tx,) = [c for c in l["counters"] if c["name"] == "/if/tx"]
    nul0 = [v for v in tx["values"] if v["interface"] == "nul0"]
    assert nul0 == [{"interface": "nul0", "queue": 0, "packets_per_second": 0, "bytes_per_second": 0}], nul0
EOF
pass

# Every CLI session taken: the CLI refuses a third, sluice-stats answers.
for i in 1 2; do
	sleep 5 | timeout 10 "$sluicectl" -s "$tmp/cli.sock" > "$tmp/held$i" 2>&1 &
	pids+=($!)
done
for _ in $(seq 30); do
	[ "$(cat "$tmp/held1" "$tmp/held2" 2>/dev/null | grep -c "debug CLI")" = 2 ] && break
	sleep 0.1
done
ctl show version
[ $? = 2 ] || fail "a third CLI session was not refused"
[ "$(tx_nul0)" = "$N" ] || fail "sluice-stats with the CLI saturated: $(tx_nul0)"
pass

# Readers killed mid-poll, and readers that connect and never read.
updates() { st --json dump /sys/threads/loops | python3 -c 'import json,sys; print(json.load(sys.stdin)["updates"])'; }
u0=$(updates) || fail "updates"
for i in $(seq 8); do
	"$stats" -s "$tmp/stats.sock" poll --interval 1ms > /dev/null 2>&1 &
	pids+=($!)
done
python3 - "$tmp/stats.sock" <<'EOF' &
import socket, sys, time
held = []
for _ in range(200):  # connect and never read: the daemon must not wait
    s = socket.socket(socket.AF_UNIX)
    s.connect(sys.argv[1])
    held.append(s)
time.sleep(2)
EOF
pids+=($!)
sleep 0.3
for p in "${pids[@]:2:8}"; do kill -KILL "$p" 2>/dev/null; done
sleep 0.3
u1=$(updates) || fail "sluice-stats after the killed readers"
[ "$u1" -gt "$u0" ] || fail "the segment stopped being copied ($u0 -> $u1)"
[ "$(tx_nul0)" = "$N" ] || fail "after the killed readers: $(tx_nul0)"
pass
wait "${pids[@]:0:2}" 2>/dev/null
for _ in $(seq 50); do
	ctl show version && break
	sleep 0.1
done
ctl show version || fail "the CLI did not come back after the holders left"
pass

# The CLI server's own counters equal `show cli json`'s; the session that
# asked has closed since (one fewer open).
ctl event-logger save && fail "event-logger save without FILE worked"  # one command that fails
ctl show cli json && cp "$tmp/out" "$tmp/cli.json" || fail "show cli json"
sleep 0.2
st --json dump /cli > "$tmp/segcli.json" || fail "sluice-stats dump /cli"
python3 - "$tmp/cli.json" "$tmp/segcli.json" <<'EOF' > "$tmp/out" 2>&1 || fail "/cli/ differs from show cli json"
import json, sys
cli = json.load(open(sys.argv[1]))["cli"]
seg = {c["name"]: c["value"] for c in json.load(open(sys.argv[2]))["counters"]}
for k in ("accepted", "refused_busy", "logins", "login_failures", "idle_closed", "long_lines"):
    assert seg["/cli/" + k.replace("_", "-")] == cli[k], (k, seg, cli)
assert seg["/cli/sessions-open"] == cli["sessions_open"] - 1 == 0, (seg, cli)
assert cli["refused_busy"] >= 1 and seg["/cli/closed"] == cli["accepted"], (seg, cli)
# show cli json itself is counted once it has run: one more command, no more errors.
assert seg["/cli/commands"] == cli["commands"] + 1 and cli["commands"] >= 5, (seg, cli)
assert seg["/cli/command-errors"] == cli["command_errors"] >= 1, (seg, cli)
EOF
pass

# clear interfaces: the CLI starts again from 0, the segment does not.
ctl clear interfaces || fail "clear interfaces"
ctl show interface json || fail "show interface json"
python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); j=j if isinstance(j,list) else j["interfaces"]; assert [i for i in j if i["name"]=="nul0"][0]["counters"]["TX-packets"]==0' "$tmp/out" ||
	fail "clear interfaces: the CLI still counts"
sleep 0.1
[ "$(tx_nul0)" = "$N" ] || fail "clear interfaces lowered the exported counter: $(tx_nul0)"
pass

kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "the daemon exited $rc"
[ -e "$tmp/stats.sock" ] && fail "stats.sock left behind"
pass

# With a worker and the distributor: every packet is handed to the worker
# or dropped there (/dist/handed + /dist/drops = the stream), and `clear
# distributor` leaves the segment's counters where they were.
cat > "$tmp/startup.conf" <<EOF
unix { cli-listen $tmp/cli.sock }
cpu { workers 1 }
distributor { enable }
interfaces {
  pg0 { driver null l2-xconnect nul0 }
  nul0 { driver null }
}
packet-generator { s0 { limit $N rate 100kpps size 64 next-node ethernet-input rx-if 0 } }
statseg { update-interval 20ms }
EOF
"$sluice" -c "$tmp/startup.conf" 2> "$tmp/err" &
pid=$!
dist_sum() { st dump /dist 2>/dev/null | awk '$1 == "/dist/handed[0]" || $1 == "/dist/drops[0]" { n += $2 } END { print n + 0 }'; }
for _ in $(seq 100); do
	[ "$(dist_sum)" = "$N" ] && break
	sleep 0.05
done
[ "$(dist_sum)" = "$N" ] || fail "/dist/handed + /dist/drops of worker 0: $(dist_sum), expected $N"
pass
# The distributor's global counters equal `show distributor json`'s.
ctl show distributor json && cp "$tmp/out" "$tmp/dist.json" || fail "show distributor json"
st --json dump /dist > "$tmp/segdist.json" || fail "sluice-stats dump /dist"
python3 - "$tmp/dist.json" "$tmp/segdist.json" <<'EOF' > "$tmp/out" 2>&1 || fail "/dist/ differs from show distributor json"
import json, sys
d = json.load(open(sys.argv[1]))["distributor"]
seg = {c["name"]: c for c in json.load(open(sys.argv[2]))["counters"]}
# rows in the order of enum dist_drop_reason, the JSON's keys in that order
keys = ["worker_full", "all_full", "shutdown", "spread_full", "window_full", "unordered_full"]
rows = seg["/dist/drops-by-reason"]["values"]
assert [r["value"] for r in rows] == [d["drops"][k] for k in keys], (rows, d["drops"])
assert all(r["reason"] for r in rows), rows
for k in ("used", "size", "released", "gaps", "unordered"):
    assert seg["/dist/window/" + k]["value"] == d["reorder_window"][k], (k, seg["/dist/window/" + k], d)
assert seg["/dist/window/size"]["value"] > 0
assert seg["/dist/bad-returns"]["value"] == d["bad_returns"] == 0
EOF
pass
handed=$(st dump /dist/handed | awk '{ print $2 }')
ctl clear distributor || fail "clear distributor"
sleep 0.1
[ "$(st dump /dist/handed | awk '{ print $2 }')" = "$handed" ] || fail "clear distributor changed /dist/handed"
pass
kill -TERM "$pid"
wait "$pid"
rc=$?
pid=
[ "$rc" = 0 ] || fail "the daemon with a worker exited $rc"
echo "ok: $n_checks checks"
