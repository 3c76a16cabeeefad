#!/bin/bash
# Impairment (sched impair, netem's semantics) on real traffic: sluice
# routes between two network namespaces over af-packet,
#   host A 10.1.0.2/24 --veth-- [a 10.1.0.1  sluice  b 10.2.0.1] --veth-- host B 10.2.0.2/24
# with only the way out through b impaired (A -> B), the replies not:
#   1. the startup file (unix { exec }) sets `sched impair interface b
#      loss random 5% seed 5`; `ping -i 0.01 -c 2000` A -> B reports a loss
#      within [3.45%, 6.65%] (the 99.9% binomial interval), and sluice's
#      "impairment: lost (loss random)" error counts what ping lost;
#   2. `sched impair interface b delay 50ms jitter 10ms distribution normal
#      seed 9`: 1000 pings 10 ms apart (they overlap) have RTT mean 50 +- 2
#      ms over the idle mean (200 pings before, same run) and standard
#      deviation 10 +- 1.5 ms;
#   3. `sched delay interface b 20ms` is the impairment `delay 20ms`;
#      `sched impair interface b off` turns it off; a bad word changes
#      nothing; a class's impairment is shown as the class's, an unknown
#      class refused.
# Seeded: the impairer's draws repeat run to run; the bounds hold the
# idle RTT and a loaded box's wake-up noise besides. About 35 s.
# Needs root, ip, ping, awk. Names carry the PID and the prefix imp; the
# trap removes namespaces, veths and sluice even on failure.
#
#   test_impair_netns.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
. "$(dirname "$0")/../lib/netns.sh"
netns_names imp
netns_preflight ip ping timeout awk
netns_routed_start "" "sched { max-held 4096 }"

# Warm-up before any impairment: ARP both ways.
timeout 30 ip netns exec "$ns_a" ping -c 5 -i 0.1 -W 2 -w 10 10.2.0.2 > "$tmp/ping" 2>&1 ||
	{ cat "$tmp/ping" >&2; fail "no connectivity A -> B"; }

# The idle RTT, for the delay check: what the path adds without delay.
rtt_stats() { # file -> "n mean sd"
	sed -n 's/.*time=\([0-9.]*\) ms.*/\1/p' "$1" |
		awk '{ s += $1; q += $1 * $1 } END { m = s / NR; printf "%d %.3f %.3f\n", NR, m, sqrt(q / NR - m * m) }'
}
timeout 30 ip netns exec "$ns_a" ping -n -c 200 -i 0.01 -W 2 10.2.0.2 > "$tmp/ping" 2>&1
read -r _ idle _ < <(rtt_stats "$tmp/ping")
echo "idle RTT mean $idle ms"

# 1. loss random 5%: up to 3 attempts (a loaded box may lose a reply
# elsewhere; each attempt restarts the generator from the seed).
for attempt in 1 2 3; do
	ctl sched impair interface b loss random 5% seed 5 || fail "sched impair ... loss random 5%"
	before=$(ctl show sched impair json | tr -d ' \t\n' | sed -n 's/.*"lost_random":\([0-9]*\).*/\1/p')
	timeout 60 ip netns exec "$ns_a" ping -n -q -c 2000 -i 0.01 -W 2 10.2.0.2 > "$tmp/ping" 2>&1
	sent=$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\1/p' "$tmp/ping")
	recv=$(sed -n 's/^\([0-9]*\) packets transmitted, \([0-9]*\) received.*/\2/p' "$tmp/ping")
	[ "${sent:-0}" -eq 2000 ] || { cat "$tmp/ping" >&2; fail "ping sent ${sent:-nothing}"; }
	lost=$((sent - recv))
	after=$(ctl show sched impair json | tr -d ' \t\n' | sed -n 's/.*"lost_random":\([0-9]*\).*/\1/p')
	counted=$((after - before))
	echo "loss random 5% attempt $attempt: ping lost $lost of $sent, sluice's impairer $counted"
	[ "$lost" -ge 69 ] && [ "$lost" -le 133 ] && [ "$counted" -ge "$lost" ] && [ "$counted" -le $((lost + 2)) ] &&
		break
	ctl show interface | head -5
	[ "$attempt" -lt 3 ] || fail "lost $lost of 2000 (impairer $counted): outside [3.45%, 6.65%] (69..133)"
done
ctl show errors > "$tmp/errors" || fail "show errors"
grep -q "impairment: lost (loss random)" "$tmp/errors" || { cat "$tmp/errors"; fail "no loss error counter"; }

# 2. delay 50ms jitter 10ms distribution normal: up to 3 attempts (the
# wake-ups of a loaded box add to the RTTs; each attempt restarts the
# generator from the seed).
for attempt in 1 2 3; do
	ctl sched impair interface b delay 50ms jitter 10ms distribution normal seed 9 || fail "sched impair ... delay"
	timeout 60 ip netns exec "$ns_a" ping -n -c 1000 -i 0.01 -W 3 10.2.0.2 > "$tmp/ping" 2>&1
	read -r n mean sd < <(rtt_stats "$tmp/ping")
	added=$(awk -v m="$mean" -v i="$idle" 'BEGIN { printf "%.3f", m - i }')
	echo "delay 50ms jitter 10ms normal attempt $attempt: $n RTTs, mean $mean ms ($added ms over idle), sd $sd ms"
	[ "$n" -ge 1000 ] && awk -v m="$added" -v s="$sd" 'BEGIN { exit !(m >= 48 && m <= 52 && s >= 8.5 && s <= 11.5) }' &&
		break
	ctl show sched impair
	[ "$attempt" -lt 3 ] ||
		fail "$n RTTs, mean $mean (idle $idle) sd $sd: expected 1000, idle + 50 +- 2 and 10 +- 1.5"
done
ctl show sched > "$tmp/sched" || fail "show sched"
grep -q "release lateness" "$tmp/sched" || { cat "$tmp/sched"; fail "show sched has no release lateness"; }
grep -E "impair|lateness" "$tmp/sched"

# 3. the alias, off, a bad word
ctl sched delay interface b 20ms || fail "sched delay interface b 20ms"
ctl show sched impair > "$tmp/imp" || fail "show sched impair"
grep -q "^Interface b (if [0-9]*): delay 20ms$" "$tmp/imp" || { cat "$tmp/imp"; fail "sched delay is not the impairment delay 20ms"; }
ctl sched impair interface b loss random 5 > "$tmp/bad" 2>&1 && fail "loss random 5 (no %) accepted"
ctl show sched impair > "$tmp/imp2" || fail "show sched impair"
cmp -s <(head -1 "$tmp/imp") <(head -1 "$tmp/imp2") || fail "a refused command changed the impairment"
ctl sched class ef priority 0 match dscp 46 || fail "sched class ef"
ctl sched impair class ef interface b delay 5ms loss random 1% || fail "sched impair class ef interface b ..."
ctl sched impair class nope interface b delay 1ms > "$tmp/bad" 2>&1 && fail "an unknown class accepted"
ctl show sched impair > "$tmp/imp" || fail "show sched impair"
grep -q "^Class ef on interface b (if [0-9]*): delay 5ms loss random 1%$" "$tmp/imp" ||
	{ cat "$tmp/imp"; fail "no class impairment shown"; }
ctl sched impair class ef interface b off || fail "sched impair class ef interface b off"
ctl sched impair interface b off || fail "sched impair interface b off"
ctl show sched impair > "$tmp/imp" || fail "show sched impair"
grep -q "^Interface b (if [0-9]*): off$" "$tmp/imp" || { cat "$tmp/imp"; fail "off did not turn it off"; }

netns_stop_sluice
echo "PASS"
exit 0
