#!/bin/bash
# The default configuration's whole pipeline in a running daemon (issue 25
# point 6): the repo's startup.conf, which test_daemon.sh proves equal to
# the built-in default, with its CLI socket in a directory of our own. After
# a few seconds:
#   - show sched json: both classes saw packets, matched by DSCP (46 and 8),
#     in about the streams' 1:2 ratio (nearer 1:1 on a starved box); both went through the class queues
#     for the worker; nul0 is shaped at 2 Mbit/s on the worker and released
#     packets of both classes;
#   - show distributor json: the worker was handed packets and returned them;
#   - a trace of pg-input per stream (filtered by DSCP): each packet crosses
#     sched-ingress (its class, "queued for the workers") and sched-dist ("to
#     the distributor: ... worker 0") on the main thread and then, on the
#     worker, ethernet-input, l2-xconnect, interface-output and sched-egress;
#   - nul0's departures over 3 s (TX-bytes) against the shaper's 2 Mbit/s:
#     never above it (+2% and the 16k bucket), and above half of it (the
#     offered 2.4 Mbit/s keeps its queue full, so a quiet box measures 2.0;
#     a worker starved past the bucket's 65 ms loses tokens, which only
#     lowers it: 1.2 was seen with the box's load at 8 on 2 cores);
#   - show graph dot has the scheduling nodes;
#   - SIGTERM: exit 0, every buffer returned.
# Every wait is bounded (a CLI command 20 s: a barrier on a box with load 13
# on 2 cores took more than 5); the daemon is killed on any failure. About 12 s.
#
#   test_default.sh SLUICE SLUICECTL STARTUP_CONF
set -u
sluice=$1
sluicectl=$2
conf_src=$3
. "$(dirname "$0")/../lib/daemon.sh"
daemon_init default
# The exit log's per-node lines hide what failed.
fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && sed 's/^/  | /' "$tmp/err" | grep -v "exit: node" | tail -30 >&2
	exit 1
}

ctl() {
	timeout 20 "$sluicectl" -s "$tmp/cli.sock" "$@"
}

daemon_conf_from "$conf_src"
daemon_start "$tmp/startup.conf"
daemon_wait_running 200 "sluice exited during start-up" || fail "sluice did not come up within 20 s"
grep -q "^sluice: sched: 2 class(es), 1 shaped interface(s)$" "$tmp/err" || fail "no sched start-up line"
grep -q "^sluice: distributor: main thread receives for 1 worker(s)" "$tmp/err" || fail "no distributor line"

sleep 3
ctl show sched json > "$tmp/sched.json" || fail "show sched json"
ctl show distributor json > "$tmp/dist.json" || fail "show distributor json"
python3 - "$tmp/sched.json" "$tmp/dist.json" <<'EOF' || fail "show sched / show distributor"
import json, sys
sched = json.load(open(sys.argv[1]))
dist = json.load(open(sys.argv[2]))["distributor"]
cls = {c["name"]: c for c in sched["classes"]}
assert set(cls) == {"ef", "bulk"}, cls
assert cls["ef"]["match"] == "dscp 46" and cls["bulk"]["match"] == "dscp 8", cls
assert cls["ef"]["priority"] < cls["bulk"]["priority"], cls
ef, bulk = cls["ef"]["packets"], cls["bulk"]["packets"]
assert ef > 0 and bulk > 0, cls
# 100 pps against 200 pps: 0.5 on a quiet box. Each stream's bucket holds
# at most a frame, so a main thread starved for seconds (load 10 on 2 cores)
# draws them nearer 1 (0.68 was seen); never beyond.
ratio = ef / bulk
assert 0.25 < ratio <= 1.0, f"ef/bulk {ratio:.2f}, expected about 0.5"
queues = {q["class"]: q for q in sched["class_queues"]}
for name in ("ef", "bulk"):
    assert queues[name]["queued"] > 0 and queues[name]["sent"] > 0, queues
assert not any(q["class"] == "(none)" and q["queued"] for q in sched["class_queues"]), queues
(nul0,) = sched["interfaces"]
assert nul0["interface"] == "nul0" and nul0["rate_bps"] == 2000000, nul0
assert nul0["owner_thread"] == 1, nul0  # shaped on the worker
released = {c["class"]: c["released"] for c in nul0["classes"]}
assert released.get("ef", 0) > 0 and released.get("bulk", 0) > 0, nul0
(w,) = dist["workers"]
assert w["handed"] > 0 and w["returned"] > 0, w
assert w["handed"] >= ef + bulk - 64, (w, ef, bulk)  # all but what the class queues still hold
print(f"classes ef {ef} bulk {bulk}; worker handed {w['handed']} returned {w['returned']}; "
      f"nul0 released {nul0['released']} dropped {nul0['dropped']}")
EOF

# A trace across both threads, one per stream: a tcpdump filter on the
# DSCP (the TOS byte's upper six bits) picks each, since on a loaded box
# one paced stream's burst can fill an unfiltered trace.
trace_stream() { # NAME DSCP
	ctl clear trace > /dev/null || fail "clear trace"
	ctl trace add pg-input 10 filter "\"ip[1] & 0xfc == $(($2 << 2))\"" > /dev/null || fail "trace add pg-input 10 filter"
	for _ in $(seq 50); do
		ctl show trace json > "$tmp/trace.json" || fail "show trace json"
		python3 -c 'import json,sys; p=json.load(open(sys.argv[1]))["packets"]; sys.exit(len(p) < 10 or any(len(x["records"]) < 7 for x in p))' \
			"$tmp/trace.json" && break
		sleep 0.1
	done
	python3 - "$tmp/trace.json" "$1" "$2" <<'EOF2' || fail "trace of $1"
import json, sys
packets = json.load(open(sys.argv[1]))["packets"]
name, dscp = sys.argv[2], sys.argv[3]
assert len(packets) == 10, len(packets)
path = [(0, "pg-input"), (0, "sched-ingress"), (0, "sched-dist"), (1, "ethernet-input"),
        (1, "l2-xconnect"), (1, "interface-output"), (1, "sched-egress")]
for p in packets:
    recs = p["records"]
    got = [(r["thread"], r["node"]) for r in recs[:len(path)]]
    assert got == path, (p["packet"], got)
    assert recs[0]["detail"].startswith(f"stream {name} "), recs[0]
    assert f" {name} priority " in recs[1]["detail"] and f"dscp {dscp} " in recs[1]["detail"] \
        and recs[1]["detail"].endswith("queued for the workers"), recs[1]
    assert recs[2]["detail"].startswith("to the distributor: class ") and f" {name} type atomic" in recs[2]["detail"] \
        and recs[2]["detail"].endswith(", worker 0"), recs[2]
print(f"trace of {name}: 10 packets, each pg-input -> sched-ingress -> sched-dist (the distributor) -> the worker's nodes")
EOF2
}
trace_stream ef 46
trace_stream bulk 8

# Departures against the shaper's rate.
tx_bytes() {
	ctl show interface json | python3 -c 'import json,sys; print(next(i["counters"]["TX-bytes"] for i in json.load(sys.stdin) if i["name"] == "nul0"))'
}
t0=$(date +%s.%N); b0=$(tx_bytes) || fail "show interface json"
sleep 3
t1=$(date +%s.%N); b1=$(tx_bytes) || fail "show interface json"
python3 - "$t0" "$b0" "$t1" "$b1" <<'EOF' || fail "departure rate"
import sys
t0, b0, t1, b1 = (float(x) for x in sys.argv[1:])
bps = (b1 - b0) * 8 / (t1 - t0)
print(f"nul0 departures {bps / 1e6:.3f} Mbit/s over {t1 - t0:.2f} s (shaper 2 Mbit/s)")
# Never above the rate (plus the 16k bucket spread over the window); below
# it only when the worker was starved past the bucket (a loaded box).
assert bps <= 2e6 * 1.02 + 16384 * 8 / (t1 - t0), bps
assert bps > 0.5 * 2e6, bps
EOF

ctl show graph dot > "$tmp/graph.dot" || fail "show graph dot"
for n in pg-input sched-ingress sched-dist sched-egress handoff-input; do
	grep -q "\"$n\"" "$tmp/graph.dot" || fail "show graph dot lacks $n"
done

daemon_stop 50 || fail "sluice still running 5 s after SIGTERM"
[ "$daemon_rc" -eq 0 ] || fail "exit status $daemon_rc after SIGTERM"
grep -q "^sluice: exit: every buffer returned$" "$tmp/err" || fail "exit log: buffers not all returned"
grep -q "^sluice: exit: node sched-egress: " "$tmp/err" || fail "exit log: no sched-egress counters (the worker's)"
echo "default pipeline ok"
exit 0
