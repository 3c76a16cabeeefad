#!/bin/bash
# Fault: a worker stops making progress. sluice-test (the daemon with the
# test-only test-stall node) runs one worker behind the distributor with the
# packet generator at 20 kpps and cpu { stall-warn 500ms }; `test stall 1
# 3000` makes worker 0 sleep 3 s inside its loop. Expects:
#   - `show threads` says worker 0 is stalled with a heartbeat age of at
#     least 0.5 s while it sleeps, and `show buffers` answers without
#     waiting for it at the barrier (and says so);
#   - the log says "watchdog: thread 1 (worker 0) stalled", then
#     "... recovered after S s" with S about the 3 s it slept (2.5 to 5;
#     a loaded box may add shorter stalls of the worker's own, and lines);
#   - the event log has a watchdog `stall` event and a `stalled` span of
#     about 3 s for thread 1;
#   - afterwards worker 0 is running, its loop count rising, and packets
#     reach nul0 again;
#   - SIGTERM: exit 0, every buffer returned.
# On a loaded machine the main thread (at full speed here) may itself miss
# the threshold while descheduled; such lines are real and not judged here.
#
#   test_stall.sh SLUICE_TEST SLUICECTL
set -u
sluice=$1
sluicectl=$2
tmp=$(mktemp -d /tmp/flt-stall-XXXXXX)
. "$(dirname "$0")/lib.sh"

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
cpu { workers 1  stall-warn 500ms }
interfaces {
  pg0  { driver null  l2-xconnect nul0 }
  nul0 { driver null }
}
packet-generator { s0 { rate 20kpps  size 64  next-node ethernet-input  rx-if 0 } }
distributor { enable }
CONF
netns_start_sluice
# Field $2 ("loops", "heartbeat_age_ns", "state") of thread $1.
thread() {
	ctl show threads json | python3 -c '
import json, sys
t = json.load(sys.stdin)["threads"][int(sys.argv[1])]
print(t[sys.argv[2]])' "$1" "$2"
}
nul0_tx() {
	ctl show interface nul0 json | python3 -c 'import json, sys; print(json.load(sys.stdin)[0]["counters"]["TX-packets"])'
}
sleep 1
[ "$(thread 1 state)" != stalled ] || fail "worker 0 stalled before the test stalled it"

# Recovery lines from before the test's stall (a loaded box can stall the
# worker on its own) are not the test's.
n_before=$(grep -c "watchdog: thread 1 (worker 0) recovered after" "$tmp/err")
t0=$(now_ms)
ctl test stall 1 3000 | grep -qx "thread 1 stalls for 3000 ms" || fail "test stall 1 3000"
seen=
for _ in $(seq 30); do
	ctl show threads > "$tmp/threads"
	if awk '$1 == 1 && $NF == "stalled"' "$tmp/threads" | grep -q .; then seen=$(now_ms); break; fi
	sleep 0.1
done
[ -n "$seen" ] || { cat "$tmp/threads" >&2; fail "show threads did not say worker 0 stalled within 3 s"; }
# show buffers does not wait at the barrier for the stalled thread.
ctl show buffers > "$tmp/buffers" || fail "show buffers while a worker is stalled"
grep -q "thread 1 is stalled: read without waiting for it at the barrier" "$tmp/buffers" || { cat "$tmp/buffers" >&2; fail "show buffers does not say it read without the barrier"; }
age=$(thread 1 heartbeat_age_ns)
echo "stalled: show threads says so $((seen - t0)) ms after the stall began, heartbeat age $((age / 1000000)) ms"
cat "$tmp/threads"
[ "$age" -ge 500000000 ] || fail "heartbeat age $age ns while stalled, expected at least 0.5 s"
grep -q "watchdog: thread 1 (worker 0) stalled: no loop for" "$tmp/err" || fail "no stall line in the log"

# The recovery from the test's stall: among the lines logged since it was
# asked for, one after about the 3 s it slept (2.5 to 5 s). A loaded box
# may add shorter stalls of its own, each with its line.
recovered_after() {
	grep "watchdog: thread 1 (worker 0) recovered after" "$tmp/err" | tail -n +$((n_before + 1)) |
		sed 's/.*recovered after \([0-9.]*\) s.*/\1/'
}
line=
for _ in $(seq 50); do
	line=$(recovered_after | python3 -c "import sys; print(' '.join(a for a in sys.stdin.read().split() if 2.5 <= float(a) <= 5.0))")
	[ -n "$line" ] && break
	sleep 0.1
done
echo "recovered after (s, since the stall was asked for): $(recovered_after | tr '\n' ' ')"
[ -n "$line" ] || fail "no recovery line of 2.5 to 5 s within 5 s of a 3 s stall: $(recovered_after | tr '\n' ' ')"
l1=$(thread 1 loops)
tx1=$(nul0_tx)
sleep 0.5
l2=$(thread 1 loops)
tx2=$(nul0_tx)
[ "$l2" -gt "$l1" ] || fail "worker 0 loops not rising after recovery ($l1 -> $l2)"
[ "$tx2" -gt "$tx1" ] || fail "nul0 TX-packets not rising after recovery ($tx1 -> $tx2)"
[ "$(thread 1 state)" != stalled ] || fail "worker 0 still stalled after its recovery line"
# The event log has the stall (an instant) and the stalled span, about 3 s.
ctl show event-logger 1000 json | python3 -c '
import json, sys
ev = [e for e in json.load(sys.stdin)["events"] if e["category"] == "watchdog" and e["args"]["thread"] == 1]
stall = [e for e in ev if e["event"] == "stall"]
span = [e for e in ev if e["event"] == "stalled"]
ok = any(2.5e9 <= p["duration_ns"] <= 5e9 and
	 any(p["time_ns"] < s["time_ns"] < p["time_ns"] + p["duration_ns"] for s in stall) for p in span)
print("event log:", ev)
sys.exit(0 if ok else 1)' || fail "show event-logger: no stall and stalled span of about 3 s for thread 1"

netns_stop_sluice
echo PASS
