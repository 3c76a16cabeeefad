#!/bin/bash
# Plugins end to end (app/plugin_loader.h, docs/plugins.md).
#
# (a) The sample plugin, enabled from a plugin directory made here, in a
#     running daemon: a generator stream of 2 flows x 10 UDP packets
#     crosses ethernet-input -> sample-flow -> ip4-input (show graph json:
#     the arcs and their packet counts); show sample flows json gives each
#     flow's exact packets and bytes; show plugins json lists it loaded and
#     a second file disabled; show config prints its section; the trace
#     shows its record; the stats segment's /plugins/sample/flows/ rows
#     (sluice-stats) equal show sample flows json, flow by flow, and are
#     gone after clear sample flows empties the table. Again with
#     `sample { max-flows 1 }`: one flow counted, the other 10 packets
#     counted as "flow table full". A second plugin, beside the sample,
#     adds a driver: an interface of it made from startup.conf sends the
#     stream's 2 x 10 packets (its TX-packets), through plugtest-tx.
# (b) Refusals at start: each exits 2 before any stage starts, naming the
#     plugin's path and the reason (file or directory writable by others,
#     not owned by root or us when run as root, another API version, other
#     struct sizes, a node, driver, section or CLI command that exists,
#     stats segment counters under a built-in prefix, a failing init,
#     an unresolved symbol, no descriptor, an enabled file that is not
#     there); a good plugin loaded before a bad one does not make a start.
# (c) Out of the tree: meson install --destdir, every installed header
#     compiles alone with `pkg-config --cflags sluice`, the sample's sources
#     build into a .so with `pkg-config --cflags --libs sluice`, and that
#     .so passes (a)'s checks in the in-tree daemon.
# No root needed (the ownership case runs only as root). About 10 s.
#
#   test_plugins.sh SLUICE SLUICECTL SLUICE_STATS SAMPLE_SO DRV_SO SRC_ROOT BUILD_ROOT BAD_SO...
set -u
sluice=$1
sluicectl=$2
stats=$3
sample=$4
drv=$5
src=$6
build=$7
shift 7
bad=("$@")
N=10 # packets per flow
. "$(dirname "$0")/../lib/daemon.sh"
daemon_init plugins

bad_so() { # the built bad plugin called bad_$1.so
	for f in "${bad[@]}"; do
		[ "$(basename "$f")" = "bad_$1.so" ] && { echo "$f"; return; }
	done
	fail "no bad_$1.so among the arguments"
}

# A plugin directory $tmp/$1 (0755) holding copies (0644) of the other arguments.
plugin_dir() {
	local d=$tmp/$1
	shift
	mkdir -p "$d" && chmod 0755 "$d" || fail "mkdir $d"
	for f in "$@"; do
		cp "$f" "$d/" && chmod 0644 "$d/$(basename "$f")" || fail "copy $f"
	done
	echo "$d"
}

# startup.conf: the plugins section $1, more sections $2; pg0 an L3 null
# interface; the stream: 2 flows (10.0.0.1 and .2 to 10.0.1.1, UDP
# 1000 -> 2000), 64-byte frames (IPv4 total length 50), broadcast so that
# ethernet-input takes them for us.
write_conf() {
	cat > "$tmp/startup.conf" <<CONF
unix { cli-listen $tmp/cli.sock }
plugins { $1 }
$2
interfaces { pg0 { driver null ${3:-} } ${4:-} }
packet-generator {
  s0 { limit $((2 * N))  rate 10kpps  size 64  next-node ethernet-input  rx-if 0  dst-mac ff:ff:ff:ff:ff:ff
       ethertype 0x0800  src-ip 10.0.0.1-10.0.0.2  dst-ip 10.0.1.1  protocol udp  src-port 1000  dst-port 2000
       disabled }
}
CONF
}

ctl() {
	timeout 5 "$sluicectl" -s "$tmp/cli.sock" "$@"
}

start() {
	daemon_start "$tmp/startup.conf"
	daemon_wait_running 200 "sluice exited at start" && return 0
	fail "sluice did not come up within 20 s"
}

stop() {
	daemon_stop 50 || fail "sluice still running 5 s after SIGTERM"
	[ "$daemon_rc" -eq 0 ] || fail "sluice exited $daemon_rc after SIGTERM"
	grep -q "every buffer returned" "$tmp/err" || fail "buffers not all returned"
}

# Run the stream, wait until its packets crossed sample-flow (bounded).
run_stream() {
	ctl packet-generator enable s0 > /dev/null || fail "enable s0"
	for _ in $(seq 100); do
		n=$(ctl show graph json | python3 -c '
import json, sys
for n in json.load(sys.stdin)["nodes"]:
    if n["name"] == "sample-flow":
        print(n["vectors"])')
		[ "${n:-0}" -ge $((2 * N)) ] && return 0
		sleep 0.1
	done
	fail "sample-flow saw ${n:-0} of $((2 * N)) packets"
}

# The segment's /plugins/sample/flows/ rows as "THREAD/PROTO/SRC:SPORT/DST:DPORT
# PACKETS BYTES" lines, sorted (empty when the entries are absent).
seg_rows() {
	timeout 5 "$stats" -s "$tmp/stats.sock" --json dump '/plugins/sample/flows/*' > "$tmp/seg.json" || return 1
	python3 - "$tmp/seg.json" <<'PY'
import json, sys
seg = {c["name"]: c for c in json.load(open(sys.argv[1]))["counters"]}
if "/plugins/sample/flows/packets" not in seg:
    sys.exit(0)
pk = {v["flow"]: v["value"] for v in seg["/plugins/sample/flows/packets"]["values"]}
by = {v["flow"]: v["value"] for v in seg["/plugins/sample/flows/bytes"]["values"]}
assert set(pk) == set(by), (pk, by)
for f in sorted(pk):
    print(f, pk[f], by[f])
PY
}

# The segment's rows equal show sample flows json ($1) exactly, within a
# few of the writer's 20 ms passes.
seg_flows() {
	local want got=
	want=$(python3 -c '
import json, sys
for f in json.load(open(sys.argv[1]))["flows"]:
    print("%d/%d/%s:%d/%s:%d %d %d" % (f["thread"], f["proto"], f["src"], f["sport"], f["dst"], f["dport"], f["packets"], f["bytes"]))' "$1" | sort)
	[ -n "$want" ] || fail "no flows to compare with the segment"
	for _ in $(seq 50); do
		got=$(seg_rows) || fail "sluice-stats dump: $(cat "$tmp/seg.json")"
		[ "$got" = "$want" ] && return 0
		sleep 0.1
	done
	fail "the segment's flows differ from show sample flows json: got '$got', want '$want'"
}

seg_flows_gone() {
	local got=
	for _ in $(seq 50); do
		got=$(seg_rows) || fail "sluice-stats dump after clear"
		[ -z "$got" ] && return 0
		sleep 0.1
	done
	fail "the segment still has flows after clear sample flows: $got"
}

# (a): $1 the plugin directory the sample is in, $2 its file name.
check_sample() {
	local dir=$1 file=$2
	write_conf "path $dir  plugin default { disable }  plugin $file { enable }" \
		"sample { max-flows 16 }  statseg { socket-name $tmp/stats.sock  update-interval 20ms }"
	start
	ctl trace add pg-input 1 > /dev/null || fail "trace add"
	run_stream
	ctl show plugins json > "$tmp/plugins.json" || fail "show plugins json"
	python3 - "$tmp/plugins.json" "$dir" "$file" <<'PY' || fail "show plugins json: $(cat "$tmp/plugins.json")"
import json, sys
d = json.load(open(sys.argv[1]))
dir, file = sys.argv[2], sys.argv[3]
assert d["path"] == dir, d["path"]
got = {p["file"]: p for p in d["plugins"]}
p = got[file]
assert (p["state"], p["name"], p["version"], p["path"], p["api_version"]) == ("loaded", "sample", "1.0", dir + "/" + file, 2), p
assert p["description"] == "counts IPv4 packets per flow after ethernet-input", p
others = [f for f in got if f != file]
assert all(got[f]["state"] == "disabled" and "name" not in got[f] for f in others), got
PY
	ctl show plugins | grep -Eq "^$file +sample +1\.0 +loaded +counts IPv4" || fail "show plugins: $(ctl show plugins)"
	ctl show sample flows json > "$tmp/flows.json" || fail "show sample flows json"
	python3 - "$tmp/flows.json" "$N" <<'PY' || fail "show sample flows json: $(cat "$tmp/flows.json")"
import json, sys
n = int(sys.argv[2])
flows = json.load(open(sys.argv[1]))["flows"]
want = [{"thread": 0, "src": "10.0.0.%d" % i, "dst": "10.0.1.1", "proto": 17, "sport": 1000, "dport": 2000,
         "packets": n, "bytes": 50 * n} for i in (1, 2)]
assert flows == want, flows
PY
	ctl show graph json > "$tmp/graph.json" || fail "show graph json"
	python3 - "$tmp/graph.json" "$N" <<'PY' || fail "show graph json: the feature's arcs"
import json, sys
n = 2 * int(sys.argv[2])
nodes = {x["name"]: x for x in json.load(open(sys.argv[1]))["nodes"]}
arcs = lambda name: {a["name"]: a["packets"] for a in nodes[name]["next"]}
eth, smp = arcs("ethernet-input"), arcs("sample-flow")
assert "ip4-input" not in eth and eth["sample-flow"] == n, eth
assert smp == {"ip4-input": n}, smp
assert nodes["ip4-input"]["vectors"] == n, nodes["ip4-input"]
PY
	ctl show trace > "$tmp/trace" || fail "show trace"
	grep -A1 "sample-flow" "$tmp/trace" | grep -q "flow 10.0.0.1:1000 -> 10.0.1.1:2000 proto 17, packet 1$" ||
		fail "show trace: no sample-flow record: $(cat "$tmp/trace")"
	ctl show config > "$tmp/config" || fail "show config"
	grep -A2 "^sample {" "$tmp/config" | grep -q "max-flows 16" || fail "show config: no sample section"
	grep -q "^  plugin $file {" "$tmp/config" || fail "show config: no plugin block"
	seg_flows "$tmp/flows.json"
	ctl clear sample flows > /dev/null || fail "clear sample flows"
	[ "$(ctl show sample flows)" = "no flows" ] || fail "flows left after clear"
	seg_flows_gone
	ctl show sample flows bogus > "$tmp/out" 2>&1 && fail "show sample flows bogus succeeded"
	stop
}

# (a) in the tree, with a second plugin file in the directory, disabled.
d=$(plugin_dir good "$sample")
cp "$d/sample_plugin.so" "$d/zz_other.so" || fail "copy"
check_sample "$d" sample_plugin.so
echo "ok: sample plugin in the tree"

# max-flows 1: the second flow's packets count as table-full, not per flow.
write_conf "path $d  plugin default { disable }  plugin sample_plugin.so { enable }" "sample { max-flows 1 }"
start
run_stream
flows=$(ctl show sample flows json | python3 -c 'import json,sys; print(" ".join("%s=%d" % (f["src"], f["packets"]) for f in json.load(sys.stdin)["flows"]))')
[ "$flows" = "10.0.0.1=$N" ] || fail "max-flows 1: flows $flows"
full=$(ctl show errors json | python3 -c '
import json, sys
print(sum(e["count"] for e in json.load(sys.stdin)["errors"] if e["node"] == "sample-flow" and e["reason"].startswith("flow table full")))')
[ "$full" = "$N" ] || fail "max-flows 1: $full packets counted as table-full, not $N"
stop
echo "ok: max-flows 1"

# A driver from a plugin, beside the sample (both loaded).
d=$(plugin_dir drv "$sample" "$drv")
write_conf "path $d" "" "l2-xconnect pt0" "pt0 { driver plugtest  tx-queues 1 }"
start
ctl set interface state pt0 up > /dev/null || fail "pt0 up"
ctl packet-generator enable s0 > /dev/null || fail "enable s0"
for _ in $(seq 100); do
	tx=$(ctl show interface pt0 json | python3 -c '
import json, sys
d = json.load(sys.stdin)
d = d["interfaces"] if isinstance(d, dict) and "interfaces" in d else d
d = d[0] if isinstance(d, list) else d
print(d["counters"]["TX-packets"])')
	[ "${tx:-0}" -ge $((2 * N)) ] && break
	sleep 0.1
done
[ "${tx:-0}" -eq $((2 * N)) ] || fail "plugtest interface pt0 sent ${tx:-0} of $((2 * N))"
ctl show plugins json | python3 -c '
import json, sys
got = sorted((p["file"], p["state"], p.get("name")) for p in json.load(sys.stdin)["plugins"])
assert got == [("drv_plugin.so", "loaded", "plugtest"), ("sample_plugin.so", "loaded", "sample")], got' ||
	fail "show plugins json with two plugins"
ctl show graph json | python3 -c '
import json, sys
nodes = {n["name"]: n for n in json.load(sys.stdin)["nodes"]}
assert "plugtest-input" in nodes, "no plugtest-input"
assert nodes["plugtest-tx"]["vectors"] == int(sys.argv[1]), nodes["plugtest-tx"]' $((2 * N)) ||
	fail "show graph json: the driver's nodes"
stop
echo "ok: a driver from a plugin"

# ---- (a2) per interface: set interface feature, startup.conf, running-config ----
# pg0 and pg1 (null); s0 (2 flows x N) arrives on pg0, s1 (1 flow x N) on
# pg1; pg1 starts with the feature off (feature-disable). $1: more unix keys.
write_if_conf() {
	cat > "$tmp/startup.conf" <<CONF
unix { cli-listen $tmp/cli.sock  cli-file-dir $tmp/files ${1:-} }
plugins { path $dp  plugin default { disable }  plugin sample_plugin.so { enable } }
interfaces { pg0 { driver null }  pg1 { driver null  feature-disable sample-flow } }
packet-generator {
  s0 { limit $((2 * N))  rate 10kpps  size 64  next-node ethernet-input  rx-if 0  dst-mac ff:ff:ff:ff:ff:ff
       ethertype 0x0800  src-ip 10.0.0.1-10.0.0.2  dst-ip 10.0.1.1  protocol udp  src-port 1000  dst-port 2000
       disabled }
  s1 { limit $N  rate 10kpps  size 64  next-node ethernet-input  rx-if 1  dst-mac ff:ff:ff:ff:ff:ff
       ethertype 0x0800  src-ip 10.0.2.1  dst-ip 10.0.1.1  protocol udp  src-port 1000  dst-port 2000
       disabled }
}
CONF
}

# Both streams through ethernet-input (3N packets at ip4-input); then
# sample-flow's vectors, and its flows as "src=packets ...".
run_both() {
	ctl clear runtime > /dev/null && ctl clear sample flows > /dev/null || fail "clear"
	ctl packet-generator enable s0 > /dev/null && ctl packet-generator enable s1 > /dev/null || fail "enable"
	for _ in $(seq 100); do
		n=$(ctl show graph json | python3 -c '
import json, sys
print({n["name"]: n["vectors"] for n in json.load(sys.stdin)["nodes"]}["ip4-input"])')
		[ "${n:-0}" -ge $((3 * N)) ] && break
		sleep 0.1
	done
	[ "${n:-0}" -eq $((3 * N)) ] || fail "ip4-input saw ${n:-0} of $((3 * N)) packets"
	ctl show graph json | python3 -c '
import json, sys
print({n["name"]: n["vectors"] for n in json.load(sys.stdin)["nodes"]}["sample-flow"])' > "$tmp/vec"
	ctl show sample flows json | python3 -c '
import json, sys
print(" ".join("%s=%d" % (f["src"], f["packets"]) for f in json.load(sys.stdin)["flows"]))' > "$tmp/fl"
}

features_of() { # IF: "node=on|off ..."
	ctl show interface features "$1" json | python3 -c '
import json, sys
d = json.load(sys.stdin)
assert d["interface"] == sys.argv[1], d
print(" ".join("%s:%s>%s=%s" % (f["node"], a["from"], a["to"], "on" if f["on"] else "off") for a in d["arcs"] for f in a["features"]))' "$1"
}

arcs_of_eth() {
	ctl show graph json | python3 -c '
import json, sys
n = {x["name"]: x for x in json.load(sys.stdin)["nodes"]}
print(" ".join(sorted(a["name"] for a in n["ethernet-input"]["next"] if a["name"] in ("sample-flow", "ip4-input"))))'
}

dp=$(plugin_dir perif "$sample")
mkdir -p "$tmp/files" && chmod 0700 "$tmp/files"
write_if_conf
start
[ "$(features_of pg0)" = "sample-flow:ethernet-input>ip4-input=on" ] || fail "pg0 features: $(features_of pg0)"
[ "$(features_of pg1)" = "sample-flow:ethernet-input>ip4-input=off" ] || fail "pg1 features: $(features_of pg1)"
ctl show interface features pg1 | grep -Eq "^ +sample-flow +off +\(default on\)$" || fail "show interface features pg1: $(ctl show interface features pg1)"
run_both
[ "$(cat "$tmp/vec")" = $((2 * N)) ] || fail "on for pg0 only: sample-flow saw $(cat "$tmp/vec") packets, not $((2 * N))"
[ "$(cat "$tmp/fl")" = "10.0.0.1=$N 10.0.0.2=$N" ] || fail "on for pg0 only: flows $(cat "$tmp/fl")"
# Off for pg0 as well: off for every interface, out of the path.
ctl set interface feature pg0 sample-flow disable > "$tmp/out" || fail "set interface feature pg0 disable"
grep -q "^pg0: sample-flow off (ethernet-input -> ip4-input)$" "$tmp/out" || fail "set answered: $(cat "$tmp/out")"
[ "$(arcs_of_eth)" = "ip4-input" ] || fail "off everywhere: ethernet-input's arcs $(arcs_of_eth)"
run_both
[ "$(cat "$tmp/vec")" = 0 ] || fail "off everywhere: sample-flow saw $(cat "$tmp/vec") packets"
# Bad commands: usage, nothing changed.
before="$(features_of pg0) $(features_of pg1)"
for words in "nosuch sample-flow" "pg0 nonode" "pg0 sample-flow arc ethernet-input:ip6-input" "pg0 sample-flow bogus" \
	"pg0" "pg0 sample-flow disable disable" "pg0 sample-flow arc"; do
	ctl set interface feature $words > "$tmp/out" 2>&1 && fail "set interface feature $words succeeded"
	grep -q "usage: set interface feature NAME NODE" "$tmp/out" || fail "set interface feature $words: no usage: $(cat "$tmp/out")"
done
ctl show interface features nosuch json > "$tmp/out" 2>&1 && fail "show interface features nosuch succeeded"
[ "$before" = "$(features_of pg0) $(features_of pg1)" ] || fail "a bad command changed the features"
# On for pg1 only (with the arc named): pg1's packets only.
ctl set interface feature pg1 sample-flow arc ethernet-input:ip4-input > /dev/null || fail "set interface feature pg1"
[ "$(arcs_of_eth)" = "sample-flow" ] || fail "on for pg1: ethernet-input's arcs $(arcs_of_eth)"
run_both
[ "$(cat "$tmp/vec")" = "$N" ] || fail "on for pg1 only: sample-flow saw $(cat "$tmp/vec") packets, not $N"
[ "$(cat "$tmp/fl")" = "10.0.2.1=$N" ] || fail "on for pg1 only: flows $(cat "$tmp/fl")"
# The running configuration says both changes, and replays them.
ctl show running-config > "$tmp/rc" || fail "show running-config"
[ "$(grep "feature" "$tmp/rc")" = "set interface feature pg0 sample-flow disable
set interface feature pg1 sample-flow" ] || fail "running-config: $(cat "$tmp/rc")"
ctl write running-config "$tmp/files/saved.cli" > /dev/null || fail "write running-config"
want="$(features_of pg0) $(features_of pg1)"
stop
write_if_conf "exec $tmp/files/saved.cli"
start
[ "$want" = "$(features_of pg0) $(features_of pg1)" ] || fail "restored: $(features_of pg0) $(features_of pg1), not $want"
run_both
[ "$(cat "$tmp/vec")" = "$N" ] || fail "restored: sample-flow saw $(cat "$tmp/vec") packets, not $N"
# pg1 deleted: its bit back to the default; a new interface at its index has the feature on.
ctl delete interface pg1 > /dev/null || fail "delete interface pg1"
ctl create interface pg1 driver null > /dev/null || fail "create interface pg1"
[ "$(features_of pg1)" = "sample-flow:ethernet-input>ip4-input=on" ] || fail "re-made pg1: $(features_of pg1)"
stop
# startup.conf: a word that is not a feature is refused with the line.
sed -i 's/feature-disable sample-flow/feature-disable nosuch/' "$tmp/startup.conf"
timeout 20 "$sluice" --check -c "$tmp/startup.conf" > /dev/null 2> "$tmp/err"
[ $? -eq 2 ] || fail "feature-disable nosuch: --check did not exit 2"
grep -q "interface 'pg1' (line 3): feature-disable nosuch: not a feature node" "$tmp/err" || fail "feature-disable nosuch: $(cat "$tmp/err")"
echo "ok: features per interface"

# ---- (b) refusals ----
# expect_refused WHAT PLUGINS_SECTION REGEX [MORE_SECTIONS]: a real start
# and --check both exit 2 with REGEX on stderr; no stage after config ran.
expect_refused() {
	write_conf "$2" "${4:-}"
	timeout 20 "$sluice" -c "$tmp/startup.conf" > /dev/null 2> "$tmp/err"
	local rc=$?
	[ "$rc" -eq 2 ] || fail "$1: exit $rc, not 2"
	grep -Eq -- "$3" "$tmp/err" || fail "$1: no /$3/ on stderr"
	grep -Eq "^sluice: (buffers|interfaces|threads|main):|^sluice: graph: [0-9]+ nodes|^sluice: cli: listening" "$tmp/err" &&
		fail "$1: a stage ran"
	timeout 20 "$sluice" --check -c "$tmp/startup.conf" > /dev/null 2> "$tmp/err"
	rc=$?
	[ "$rc" -eq 2 ] || fail "$1: --check exit $rc, not 2"
	grep -Eq -- "$3" "$tmp/err" || fail "$1: --check: no /$3/ on stderr"
	echo "ok: refused: $1"
}
esc() { printf '%s' "$1" | sed 's/[.[\*^$()+?{}|]/\\&/g'; }

d=$(plugin_dir writable "$sample")
chmod 0666 "$d/sample_plugin.so"
expect_refused "world-writable file" "path $d" "error: plugin $(esc "$d")/sample_plugin\.so: file writable by group and others \(mode 0666\)"
chmod 0644 "$d/sample_plugin.so"
chmod 0757 "$d"
expect_refused "world-writable directory" "path $d" "error: plugin $(esc "$d"): directory writable by others \(mode 0757\)"
chmod 0755 "$d"
if [ "$(id -u)" -eq 0 ]; then
	chown 65534 "$d/sample_plugin.so"
	expect_refused "foreign owner" "path $d" "plugin $(esc "$d")/sample_plugin\.so: owned by uid 65534, neither root nor sluice's user"
fi

for case in "version|built for plugin API version 1000, this sluice has version 2" \
	"abi|built against other headers: struct buffer is [0-9]+ bytes there, [0-9]+ here" \
	"dup_node|registers node 'ethernet-input', which exists already" \
	"init|init failed: the sample device is not present" \
	"symbol|dlopen: .*undefined symbol: sluice_no_such_function" \
	"no_desc|no descriptor \(symbol 'sluice_plugin'\)" \
	"dup_section|registers startup.conf section 'unix', which exists already" \
	"dup_cli|registers CLI command 'show plugins', which exists already" \
	"dup_driver|registers driver 'null', which exists already" \
	"many_drivers|registers [0-9]+ driver\\(s\\) the driver table \\(16 entries\\) has no room for" \
	"counters|statseg counters: prefix '/if/mine' is inside the built-in '/if'"; do
	name=${case%%|*}
	d=$(plugin_dir "bad-$name" "$(bad_so "$name")")
	expect_refused "bad_$name.so" "path $d" "error: plugin $(esc "$d")/bad_$name\.so: ${case#*|}"
done

# All or nothing: the sample loads first (file order), the bad one after.
d=$(plugin_dir half "$sample" "$(bad_so init)")
mv "$d/bad_init.so" "$d/zz_bad_init.so" || fail "rename"
expect_refused "good then bad" "path $d" "plugin $(esc "$d")/zz_bad_init\.so: init failed"
grep -q "loaded $d/sample_plugin.so" "$tmp/err" || fail "good then bad: the sample did not load first"

d=$(plugin_dir missing "$sample")
expect_refused "enabled, not there" "path $d  plugin nothere.so { enable }" "plugin nothere\.so: enabled in startup.conf but not in $(esc "$d")"
expect_refused "a plugin's section without it" "path $d  plugin default { disable }" \
	"unknown section 'sample'" "sample { max-flows 4 }"
expect_refused "neither enable nor disable" "path $d  plugin sample_plugin.so { }" \
	"plugin 'sample_plugin.so': expected one of enable, disable"
expect_refused "not NAME.so" "path $d  plugin sample { enable }" "plugin 'sample': expected NAME.so"
expect_refused "no such directory" "path $tmp/nowhere" "plugin $(esc "$tmp")/nowhere: No such file or directory"

# ---- (c) out of the tree ----
meson install -C "$build" --no-rebuild --quiet --destdir "$tmp/dest" > "$tmp/install.log" 2>&1 ||
	{ cat "$tmp/install.log" >&2; fail "meson install --destdir"; }
pc=$(find "$tmp/dest" -name sluice.pc | head -1)
[ -n "$pc" ] || fail "no sluice.pc installed"
export PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$tmp/dest
cflags=$(pkg-config --cflags sluice) || fail "pkg-config --cflags sluice"
plugin_cflags=$(pkg-config --variable=plugin_cflags sluice) || fail "pkg-config --variable=plugin_cflags sluice"
[ "$plugin_cflags" = "-fPIC -fvisibility=hidden" ] || fail "plugin_cflags is '$plugin_cflags'"
libs=$(pkg-config --libs sluice) || fail "pkg-config --libs sluice"
inc=$(find "$tmp/dest" -type d -path '*/include/sluice' | head -1)
[ -n "$inc" ] || fail "no include/sluice installed"
n_hdr=0
for h in $(cd "$inc" && find . -name '*.h' | sort); do
	printf '#include "%s"\n' "${h#./}" | cc -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -x c - $cflags 2> "$tmp/cc.err" ||
		{ cat "$tmp/cc.err" >&2; fail "installed header $h does not compile alone"; }
	n_hdr=$((n_hdr + 1))
done
[ "$n_hdr" -ge 8 ] || fail "only $n_hdr headers installed"
echo "ok: $n_hdr installed headers compile alone"
mkdir -p "$tmp/oot" && chmod 0755 "$tmp/oot"
cc -std=gnu11 -O2 -Wall -Wextra -Werror -shared -o "$tmp/oot/sample_plugin.so" "$src"/plugins/sample/*.c $cflags $plugin_cflags $libs 2> "$tmp/cc.err" ||
	{ cat "$tmp/cc.err" >&2; fail "out-of-tree build of plugins/sample"; }
chmod 0644 "$tmp/oot/sample_plugin.so"
unset PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
check_sample "$tmp/oot" sample_plugin.so
echo "ok: sample plugin built out of the tree"
echo PASS
