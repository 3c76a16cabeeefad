#!/bin/bash
# Overload: the packet generator at full speed into a graph with a node too
# slow for it and one worker. sluice-test runs the distributor (main thread:
# pg-input -> distributor) and one worker (handoff-input -> test-slow ->
# ethernet-input -> l2-xconnect -> nul0); `test slow 20000` makes test-slow
# sleep 20 us per packet, so the worker takes at most ~50 kpps while the
# generator offers as much as the main thread can make. nul0 leaves
# through sched-egress shaped to 3 Mbit/s, ~5.9 kpps of these 64-byte
# frames, with at most 256 packets held (`sched { max-held 256 }`): what
# the worker forwards under overload (~40 kpps, 12 kpps on a busy box)
# overflows the hold; the 2 kpps stream after it passes. Expects:
#   - drops are counted where they happen: at the handoff (distributor
#     "flow's worker busy") and at the sched hold (sched-egress "over
#     max-held"), both rising while the overload lasts; the generator
#     never runs out of buffers (pg-input "no buffers" stays 0: nothing
#     piles up), and `show buffers` mid-overload attributes every buffer
#     in use (to the distributor's ring and backlog, and the sched hold),
#     nothing unattributed;
#   - resident memory stays flat: VmRSS sampled every 0.25 s (16 samples or
#     more, after 1.5 s of warm-up) varies by at most 1 MB;
#   - forwarding recovers when the load drops: the flood stream is disabled
#     and a 2 kpps stream enabled; recovered is the first 0.5 s window with
#     no new drop in which nul0 sent what the generator made (within the
#     12,288 packets the ring and backlog can hold and the 256 held: 12,600),
#     reached within 20 s (each look is a few CLI round trips, slow on a
#     shared machine: the figure printed is an upper bound); in the window
#     after it, no drop anywhere and nul0 sends what the 2 kpps stream
#     generated (within the same 12,600): forwarding is
#     back at the offered rate, whatever rate a busy machine let the
#     generator reach;
#   - every packet is accounted for at the end: generated = sent by nul0 +
#     dropped at the handoff + dropped at the sched hold, exactly; SIGTERM:
#     exit 0, every buffer back.
# Prints: offered and forwarded rates, drops per place, peak RSS and its
# spread, recovery time.
#
#   test_overload.sh SLUICE_TEST SLUICECTL
set -u
sluice=$1
sluicectl=$2
tmp=$(mktemp -d /tmp/flt-overload-XXXXXX)
. "$(dirname "$0")/lib.sh"

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
cpu { workers 1 }
interfaces {
  pg0  { driver null  l2-xconnect nul0 }
  nul0 { driver null }
}
packet-generator {
  flood  { size 64  next-node ethernet-input  rx-if 0  disabled }
  paced  { rate 2kpps  size 64  next-node ethernet-input  rx-if 0  disabled }
}
# Room for 12k packets between the main thread and the worker (6 s of
# the paced stream), so the worker being descheduled for a while on a
# shared machine does not pass for overload once the load has dropped.
distributor { enable  ring-lines 1024  backlog 4096 }
sched { max-held 256 }
CONF
netns_start_sluice
ctl sched shaper interface nul0 rate 3mbit > /dev/null || fail "sched shaper interface nul0 rate 3mbit"
# "generated sent handoff_drops no_buffers sched_drops": the generator's
# packets (both streams), nul0's TX-packets, the distributor's drops,
# pg-input's no-buffers, sched-egress's drops (every reason that drops).
figures() {
	{
		ctl show packet-generator
		echo "--"
		ctl show interface nul0 json
		echo "--"
		ctl show errors json
	} | python3 -c '
import json, sys
pg, ifs, errs = sys.stdin.read().split("--\n")
gen = sum(int(l.split()[3]) for l in pg.splitlines()[1:] if l.strip())
sent = json.loads(ifs)[0]["counters"]["TX-packets"]
drops = sum(e["count"] for e in json.loads(errs)["errors"] if e["node"] == "distributor")
nobuf = sum(e["count"] for e in json.loads(errs)["errors"] if e["node"] == "pg-input" and "buffer" in e["reason"])
held = sum(e["count"] for e in json.loads(errs)["errors"] if e["node"] == "sched-egress" and "dropped" in e["reason"])
print(int(gen), int(sent), int(drops), int(nobuf), int(held))'
}
rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status"
}

ctl test slow 20000 > /dev/null || fail "test slow 20000"
ctl packet-generator enable flood > /dev/null || fail "enable flood"
t0=$(now_ms)
read -r g0 s0 d0 _ h0 <<< "$(figures)"
# RSS from a sampler of its own, so that slow CLI round trips on a busy
# machine do not thin the samples; the first 1.5 s are warm-up.
( sleep 1.5; for _ in $(seq 120); do rss_kb; sleep 0.25; done ) > "$tmp/rss" 2>/dev/null &
sampler=$!
sleep 3
ctl show buffers > "$tmp/buffers" || fail "show buffers under overload"
while [ "$(wc -l < "$tmp/rss")" -lt 16 ] && [ $(($(now_ms) - t0)) -lt 30000 ]; do
	sleep 0.25
done
kill "$sampler" 2>/dev/null
wait "$sampler" 2>/dev/null
read -r g1 s1 d1 nb1 h1 <<< "$(figures)"
t1=$(now_ms)
kill -0 "$pid" 2>/dev/null || fail "sluice-test died under overload"
secs=$(python3 -c "print(($t1 - $t0) / 1000)")
echo "overload ($secs s): offered $(python3 -c "print('%.0f' % (($g1 - $g0) / $secs))") pps, forwarded $(python3 -c "print('%.0f' % (($s1 - $s0) / $secs))") pps"
echo "drops: handoff (distributor, flow's worker busy) $((d1 - d0)), rx (pg-input no buffers) $nb1, sched hold (sched-egress over max-held 256) $((h1 - h0))"
[ $((d1 - d0)) -gt 0 ] || fail "no drop counted at the handoff under overload"
[ $((h1 - h0)) -gt 0 ] || fail "no drop counted at the sched hold under overload"
[ "$nb1" -eq 0 ] || fail "the generator ran out of buffers ($nb1): something holds them"
[ $((s1 - s0)) -gt 0 ] || fail "nothing forwarded under overload"
grep -Eq "^unattributed +- +0$" "$tmp/buffers" || { cat "$tmp/buffers" >&2; fail "show buffers under overload: buffers unattributed"; }
grep -Eq "^distributor +worker 0 ring +[1-9]" "$tmp/buffers" || { cat "$tmp/buffers" >&2; fail "show buffers under overload: the full ring is not named"; }
grep -Eq "^sched" "$tmp/buffers" || { cat "$tmp/buffers" >&2; fail "show buffers under overload: the sched hold is not named"; }
n_rss=$(wc -l < "$tmp/rss")
read -r rss_min rss_max <<< "$(sort -n "$tmp/rss" | sed -n '1p;$p' | tr '\n' ' ')"
echo "VmRSS: $n_rss samples after warm-up, peak $rss_max kB, spread $((rss_max - rss_min)) kB"
[ "$n_rss" -ge 16 ] || fail "only $n_rss RSS samples"
[ $((rss_max - rss_min)) -le 1024 ] || { cat "$tmp/rss" | tr '\n' ' ' >&2; fail "VmRSS grew by $((rss_max - rss_min)) kB under overload"; }

# ---- the load drops ----
ctl packet-generator disable flood > /dev/null || fail "disable flood"
ctl packet-generator enable paced > /dev/null || fail "enable paced"
t2=$(now_ms)
recovered= last=
slack=12600 # packets that may be in flight: 12,288 in the ring and backlog, 256 held
read -r ga sa da _ ha <<< "$(figures)"
ta=$(now_ms)
while [ $(($(now_ms) - t2)) -lt 20000 ]; do
	sleep 0.5
	read -r gb sb db _ hb <<< "$(figures)"
	tb=$(now_ms)
	lag=$(((gb - ga) - (sb - sa)))
	if [ "$db" -eq "$da" ] && [ "$hb" -eq "$ha" ] && [ "${lag#-}" -le "$slack" ] && [ $((sb - sa)) -gt 0 ]; then
		recovered=$tb
		break
	fi
	last="generated $((gb - ga)), sent $((sb - sa)), handoff drops $((db - da)), sched hold drops $((hb - ha))"
	ga=$gb sa=$sb da=$db ha=$hb ta=$tb
done
[ -n "$recovered" ] || fail "forwarding did not recover within 20 s of the load dropping (last 0.5 s: ${last:-none})"
# The rate once recovered, over the next window (the one above may still
# drain what the overload left queued).
sleep 1
read -r gc sc dc _ hc <<< "$(figures)"
tc=$(now_ms)
rate=$(python3 -c "print('%.0f' % (($sc - $sb) * 1000 / ($tc - $tb)))")
offered=$(python3 -c "print('%.0f' % (($gc - $gb) * 1000 / ($tc - $tb)))")
[ "$dc" -eq "$db" ] || fail "drops again after recovery ($db -> $dc)"
[ "$hc" -eq "$hb" ] || fail "sched hold drops again after recovery ($hb -> $hc)"
[ $((sc - sb)) -ge $((gc - gb - slack)) ] && [ $((sc - sb)) -gt 0 ] \
	|| fail "after recovery nul0 sent $((sc - sb)) of $((gc - gb)) generated"
echo "recovered: $((recovered - t2)) ms after the load dropped; then forwarding $rate pps of $offered pps generated (stream rate 2000)"

# ---- every packet accounted for ----
ctl packet-generator disable > /dev/null || fail "disable every stream"
for _ in $(seq 50); do
	ctl show buffers json | python3 -c 'import json, sys; sys.exit(0 if json.load(sys.stdin)["in_use"] == 0 else 1)' && break
	sleep 0.1
done
read -r g2 s2 d2 _ h2 <<< "$(figures)"
echo "accounted: generated $g2 = sent $s2 + dropped at the handoff $d2 + dropped at the sched hold $h2"
[ "$g2" -eq $((s2 + d2 + h2)) ] || fail "generated $g2, sent $s2 + dropped $d2 + $h2 = $((s2 + d2 + h2))"

netns_stop_sluice
echo PASS
