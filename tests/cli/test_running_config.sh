#!/bin/bash
# Save and restore (issue 25 points 4 and 5), on the real daemon through
# sluicectl only, no root:
#  1. a daemon is configured through the CLI (interfaces made and deleted,
#     settings, addresses and routes of both families, static neighbours, a
#     generator stream, a startup.conf interface deleted), saved with
#     `write running-config`, stopped; a second daemon starts from the same
#     startup.conf plus `unix { exec SAVED }`. Their `show ... json` outputs
#     (counters removed) are equal, and so are their saved files.
#  2. runtime `exec FILE`: a script whose line 3 fails applies lines 1-2,
#     names FILE:3 and the error, and runs nothing after it.
#  3. exec nested deeper than the limit fails; a file outside cli-file-dir
#     is refused.
#
#   test_running_config.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
. "$(dirname "$0")/../lib/daemon.sh"
daemon_cli_init runcfg

check() {
	"$@" || fail "check failed: $*"
	n_checks=$((n_checks + 1))
}

start() { # CONF
	daemon_start "$1" append
	daemon_wait_cli 100 && return 0
	cat "$tmp/err" >&2
	fail "sluice did not start with $1"
}
stop() {
	daemon_stop 100 || fail "sluice did not stop"
	[ "$daemon_rc" = 0 ] || { cp "$tmp/err" "$tmp/out"; fail "sluice exited with status $daemon_rc"; }
	grep -q "Sanitizer" "$tmp/err" && { cp "$tmp/err" "$tmp/out"; fail "a sanitizer report"; }
}

# Every show whose state the script configures, as JSON without what is no
# configuration: counters (named below), and internal numbers: interface
# indices (a deleted interface leaves a gap the restored daemon does not
# have), class and subscriber ids, adjacency ids (a load balance's buckets
# keep their pattern, ids renamed in order of appearance). Rows left with
# nothing but a name (a class's per-interface counters) go, and so does
# `show sched`'s idle entry of an interface whose schedule was set and then
# turned off (it keeps its queues; the replay never made them).
snapshot() { # OUT
	local i=0
	rm -rf "$tmp/shows" && mkdir "$tmp/shows"
	for c in "show interface" "show ip fib" "show ip6 fib" "show ip neighbors" "show ip6 neighbors" \
		"show packet-generator" "show interface rx-placement" "show ip6 interface" "show ip interface" \
		"show sched" "show sched subscriber" "show sched impair" "show ip6 nd"; do
		ctl $c json || fail "$c json"
		i=$((i + 1))
		{ echo "$c"; cat "$tmp/out"; } > "$tmp/shows/$(printf %02d $i)"
	done
	python3 - "$tmp/shows"/* > "$1" <<'PY' || fail "a show's json does not parse"
import json, re, sys
counters = re.compile(r'^(RX-|TX-|dropped|release_lateness|backlog_|departed_|corrupt|duplicate|lost_)|'
                      r'^(age_ns|held|bytes|packets|sent|enqueued|released|tokens_bytes|ctokens_bytes|marked|'
                      r'delayed|gemodel_bad_entered|over_max_held|reordered)$|(_ago_ns|next_in_ns|_sent|solicit|initial)')
ids = ('index', 'if_index', 'id', 'adjacency', 'rx_if')
def buckets(b):
    seen = {}
    return [seen.setdefault(x, len(seen)) for x in b]
def idle_schedule(x):
    return isinstance(x, dict) and x.get('impair') == 'off' and x.get('hqos') is False and not x.get('rate_bps')
def strip(v):
    if isinstance(v, dict):
        return {k: (buckets(x) if k == 'buckets' else strip(x)) for k, x in v.items()
                if k not in ids and not counters.search(k)}
    if isinstance(v, list):
        rows = [strip(x) for x in v if not idle_schedule(x)]
        return [x for x in rows if not (isinstance(x, dict) and list(x) == ['class'])]
    return v
for path in sys.argv[1:]:
    with open(path) as f:
        print('==', f.readline().strip())
        print(json.dumps(strip(json.load(f)), sort_keys=True, indent=1))
PY
}

mkdir -p "$tmp/files"
cat > "$tmp/startup.conf" <<CONF
unix { cli-listen $tmp/cli.sock  cli-file-dir $tmp/files }
interfaces {
  pg0 { driver null }
  nul0 { driver null }
  old0 { driver null }
}
CONF

# ---- 1. configure, save, restore, compare ----
start "$tmp/startup.conf"
ok show running-config
check [ "$(grep -vc '^#' "$tmp/out")" = 0 ] # nothing configured yet
ok sh run # VPP's abbreviation of show runtime stays so
check grep -q "Vectors/Call" "$tmp/out"
ok sh runn json
check grep -q '"running_config"' "$tmp/out"
while read -r line; do
	[ -n "$line" ] && ok $line
done <<'CMDS'
set interface mac address pg0 02:00:00:00:aa:00
set interface mac address nul0 02:00:00:00:aa:01
create interface nul1 driver null rx-queues 2
create interface nul2 driver null
create interface gone0 driver null
create loopback interface instance 3
set interface ip address loop3 10.3.0.1/24
set interface state loop3 up
set interface state nul1 up
set interface state nul2 up
set interface mtu 9000 nul1
set interface rx-burst nul2 32
set interface rx-mode nul1 queue 1 polling
set interface l2 xconnect pg0 nul2
set interface ip address nul1 10.1.0.1/24
set interface ip address nul1 10.1.1.1/24
set interface ip address nul1 2001:db8:1::1/64
set interface ip address gone0 10.5.0.1/24
set interface ip address nul0 10.2.0.1/24
set interface state nul0 up
ip route add 10.9.0.0/16 via 10.1.0.2 nul1 via 10.2.0.2 nul0 weight 3
ip route add 10.66.0.0/16 unreachable
ip route add 10.8.0.0/16 via nul1
ip route add 10.7.0.0/16 via 10.1.0.9
ip route add 2001:db8:9::/48 via 2001:db8:1::2 nul1
ip route add 2001:db8:8::/48 via 2001:db8:1::3 nul1
set ip neighbor nul1 10.1.0.2 02:00:00:00:00:07 static
set ip neighbor nul1 2001:db8:1::2 02:00:00:00:00:08 static
set ip neighbor-config age 120
set ip6 neighbor-config reachable 20000 retrans 2000 delay 4000
ip6 nd interface nul1 ra interval 30 lifetime 600 prefix 2001:db8:1::/64 valid 86400 preferred 3600 managed rdnss 2001:db8::53
packet-generator new s1 limit 10 rate 1kpps size 64-128 rx-if nul2
packet-generator new s2 limit 5 rate 1kpps
set interface ip address del nul1 10.1.1.1/24
ip route del 10.7.0.0/16
ip route del 2001:db8:8::/48
packet-generator delete s2
sched class ef priority 0 match dscp 46
sched class bulk priority 7 weight 3 type ordered match protocol tcp
sched class gone priority 3 match interface nul1
no sched class gone
sched shaper interface nul0 rate 30mbit
sched hqos interface nul0 overhead 24 queue-limit 256 codel ecn
sched subscriber alice interface nul0 rate 20mbit ceil 30mbit match dst 10.1.0.0/24
sched subscriber bob interface nul0 rate 5mbit weight 2 match vlan 20
sched subscriber carol interface nul0 rate 1mbit match src 2001:db8::/32
no sched subscriber carol
sched impair interface nul1 delay 20ms jitter 5ms loss random 1% seed 9
sched impair class ef interface nul1 loss gemodel 1% 10%
sched impair class bulk interface nul1 delay 5ms
sched impair class bulk interface nul1 off
sched delay interface nul2 10ms
sched delay interface nul2 off
delete interface gone0
delete interface old0
CMDS
# A driver value with a blank (a file name) is written quoted, and reads
# back as one word when the second daemon replays it.
ok create interface cap9 driver pcap tx-file "\"$tmp/files/cap 9.pcap\""
ok show running-config
cp "$tmp/out" "$tmp/running1"
check grep -qx "create interface cap9 driver pcap tx-file \"$tmp/files/cap 9.pcap\"" "$tmp/running1"
# The impairment's seed: a replay draws the same numbers.
check grep -qx 'sched impair interface nul1 delay 20ms jitter 5ms loss random 1% seed 9' "$tmp/running1"
check grep -qx 'create interface loop3 driver loopback' "$tmp/running1"
# show memory counts what the scheduling commands above made: nul1's
# schedule (its impairers), nul0's subscriber hierarchy (alice, bob and the
# default: carol was removed).
ok show memory json
check python3 -c '
import json, sys
rows = json.load(open(sys.argv[1]))["memory"]["subsystems"]
def one(sub, what):
    r = [x for x in rows if x["subsystem"] == sub and x["what"].startswith(what)]
    assert len(r) == 1 and r[0]["bytes"] > 0, (sub, what, rows)
one("sched", "nul1: schedule")
one("hqos", "nul0: 3 subscriber(s)")' "$tmp/out"
for absent in gone0 s2 10.1.1.1 10.7.0.0 2001:db8:8:: "10.5.0.1" carol "class gone" "impair interface nul2" "impair class bulk"; do
	grep -q -- "$absent" "$tmp/running1" && fail "$absent (made then deleted) is in the running-config"
	n_checks=$((n_checks + 1))
done
check grep -qx 'delete interface old0' "$tmp/running1"
check grep -q '^sched impair class ef interface nul1 loss gemodel 1%' "$tmp/running1"
ok show running-config json
check python3 -c 'import json,sys; l=json.load(open(sys.argv[1]))["running_config"]; t=[x for x in open(sys.argv[2]).read().splitlines() if not x.startswith("#")]; sys.exit(l != t)' "$tmp/out" "$tmp/running1"
ok write running-config "$tmp/files/saved.cli"
check grep -q "line(s) written" "$tmp/out"
check [ -z "$(ls "$tmp/files" | grep tmp)" ] # the temporary file was renamed
ctl write running-config /tmp/outside-$$.cli && fail "write outside cli-file-dir worked"
check [ ! -e /tmp/outside-$$.cli ]
snapshot "$tmp/snap1"
for seen in '"10.9.0.0/16"' '"2001:db8:9::/48"' '"alice"' '"rate_bps": 30000000' '"s1"' '"managed": true'; do
	check grep -q -- "$seen" "$tmp/snap1" # the comparison has the state in it
done
stop

sed "s|cli-file-dir $tmp/files|cli-file-dir $tmp/files  exec $tmp/files/saved.cli|" "$tmp/startup.conf" > "$tmp/restore.conf"
start "$tmp/restore.conf"
# What the datapath applies after a command returns (a static neighbour's
# host route, by the neighbour process node) may land a little later on a
# loaded box: compare until equal, at most 5 s.
for _ in $(seq 20); do
	snapshot "$tmp/snap2"
	cmp -s "$tmp/snap1" "$tmp/snap2" && break
	sleep 0.25
done
diff -u "$tmp/snap1" "$tmp/snap2" > "$tmp/out" || fail "the restored daemon differs"
n_checks=$((n_checks + 1))
ok write running-config "$tmp/files/saved2.cli"
cmp "$tmp/files/saved.cli" "$tmp/files/saved2.cli" > "$tmp/out" 2>&1 ||
	{ diff -u "$tmp/files/saved.cli" "$tmp/files/saved2.cli" > "$tmp/out"; fail "the saved files differ"; }
n_checks=$((n_checks + 1))

# ---- 2. runtime exec: line 3 fails ----
ok show running-config
cp "$tmp/out" "$tmp/before"
cat > "$tmp/files/script.cli" <<'SCRIPT'
# two that work, one that fails, one never run
create interface ex0 driver null
set interface ip address ex0 10.44.0.1/24

set interface state nosuch0 up
create interface ex1 driver null
SCRIPT
ctl exec "$tmp/files/script.cli" && fail "exec of a failing script worked"
check grep -q "script.cli:5: set interface state nosuch0 up" "$tmp/out"
check grep -q "no interface nosuch0" "$tmp/out"
check grep -q "2 command(s) applied; line 5 failed" "$tmp/out"
ok show running-config
diff "$tmp/before" "$tmp/out" > "$tmp/delta"
check [ "$(grep -c '^>' "$tmp/delta")" = 3 ] # ex0, its MAC, its address; nothing of ex1
check grep -q '> create interface ex0 driver null' "$tmp/delta"
check grep -q '> set interface ip address ex0 10.44.0.1/24' "$tmp/delta"
check [ "$(grep -c '^<' "$tmp/delta")" = 0 ]
ctl show interface ex1 && fail "line 6 of the script ran"

# A script that works, run from a script: output relayed, counts said.
printf 'delete interface ex0\n' > "$tmp/files/inner.cli"
printf 'exec %s\n' "$tmp/files/inner.cli" > "$tmp/files/outer.cli"
ok exec "$tmp/files/outer.cli"
check grep -q "ex0 deleted" "$tmp/out"
check grep -q "outer.cli: 1 command(s) applied" "$tmp/out"

# ---- 3. bounds ----
printf 'exec %s\n' "$tmp/files/self.cli" > "$tmp/files/self.cli"
ctl exec "$tmp/files/self.cli" && fail "a script running itself worked"
check grep -q "nested deeper than 8" "$tmp/out"
printf 'show version\n' > "$tmp/outside.cli"
ctl exec "$tmp/outside.cli" && fail "exec outside cli-file-dir worked"
check grep -q "outside cli-file-dir" "$tmp/out"
ok show running-config
cmp -s "$tmp/before" "$tmp/out" || fail "exec bounds changed the configuration"
stop
grep -q "every buffer returned" "$tmp/err" || fail "buffers not all returned at exit"

# ---- 4. unix { exec } at start stops at the first failure and names it ----
printf 'create interface st0 driver null\nset interface state nosuch0 up\ncreate interface st1 driver null\n' \
	> "$tmp/files/bad.cli"
sed "s|cli-file-dir $tmp/files|cli-file-dir $tmp/files  exec $tmp/files/bad.cli|" "$tmp/startup.conf" > "$tmp/bad.conf"
: > "$tmp/err"
timeout 20 "$sluice" -c "$tmp/bad.conf" 2> "$tmp/err"
status=$?
cp "$tmp/err" "$tmp/out"
check [ "$status" != 0 ]
check [ "$status" != 124 ] # it exited by itself
check grep -q "bad.cli:2: set interface state nosuch0 up" "$tmp/err"
grep -q "exec $tmp/files/bad.cli:3" "$tmp/err" && fail "the line after the failure ran"
n_checks=$((n_checks + 1))
echo "running-config: $n_checks checks passed"
