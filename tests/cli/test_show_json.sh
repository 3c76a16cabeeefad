#!/bin/bash
# Every registered `show` command answers `json` with valid JSON, on a live
# daemon that has something to show: an interface of each software driver
# (null, pcap, af-packet on a veth whose other end is in a namespace made
# here), a worker and the distributor, an IPv4 address, a route and a
# static neighbour, a generator stream that ran, a sched class, a trace.
#
# The commands come from the registry itself (`help json`), so a `show`
# command added later without `json` fails here: its usage must say
# `json`, `COMMAND json` must succeed and print one JSON document whose top
# level is an object (README "JSON output"; `show interface` is the one
# documented exception, a top-level array), and a command whose usage needs
# a word must have one in args_for below. Then exact values per command:
# the route with its prefix and next hop, the neighbour's MAC, the stream's
# counts, the drivers, the CLI socket, ...
#
# Root (network namespace, veth, packet socket) and python3. Names carry the
# PID; the trap removes the namespace, the veth, sluice and the directory
# on any exit; every wait is bounded.
#
#   test_show_json.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
id=$$
ns_a=sluice-json-a-$id
ns_b=sluice-json-b-$id
if_a=jsna$id
if_b=jsnb$id
host_a=jsna${id}h
host_b=jsnb${id}h
tmp=$(mktemp -d /tmp/sluice-json-XXXXXX)
. "$(dirname "$0")/../lib/netns.sh"
netns_preflight ip python3 timeout
netns_make_pairs

# A pcap file with one 64-byte frame for the pcap interface to read.
python3 - "$tmp/in.pcap" <<'PY' || fail "cannot write in.pcap"
import struct, sys
frame = bytes.fromhex("020000000002" "020000000001" "0800") + bytes(50)
with open(sys.argv[1], "wb") as f:
    f.write(struct.pack("<IHHiIII", 0xa1b2c3d4, 2, 4, 0, 0, 65535, 1))
    f.write(struct.pack("<IIII", 0, 0, len(frame), len(frame)) + frame)
PY

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
cpu { workers 1 }
interfaces {
  nul0 { driver null }
  cap0 { driver pcap  rx-file $tmp/in.pcap  tx-file $tmp/out.pcap }
  eth0 { driver af-packet  host-if $if_a }
}
packet-generator {
  s1 { limit 100  size 64-128  next-node error-drop  disabled }
}
distributor { enable }
CONF
netns_start_sluice

run() { ctl "$@" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "'$*' failed"; }; }
run set interface ip address nul0 10.1.0.1/24
run set ip neighbor nul0 10.1.0.2 02:00:00:00:00:07 static
run ip route add 10.9.0.0/16 via 10.1.0.2
run sched class ef priority 0 match dscp 46
run trace add pg-input 5
# The distributor receives every rx queue on main: a worker is refused,
# and the placement stays.
ctl set interface rx-placement nul0 worker 0 > "$tmp/out" 2>&1 && fail "rx-placement on a worker with the distributor"
grep -q "the distributor receives every rx queue on the main thread" "$tmp/out" || fail "rx-placement: $(cat "$tmp/out")"
run set interface rx-placement nul0 main
run packet-generator enable s1
for _ in $(seq 50); do
	ctl show packet-generator json | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin)["streams"][0]["sent"] == 100 else 1)' && break
	sleep 0.1
done

# ---- every show command, from the registry ----
ctl help json > "$tmp/help.json" || fail "help json"
python3 - "$sluicectl" "$tmp/cli.sock" "$tmp/help.json" "$tmp/all.json" <<'PY' || fail "a show command without valid json"
import json, re, subprocess, sys
ctl, sock, help_file, out_file = sys.argv[1:]
# Words for commands whose usage needs one.
args_for = {"show node": ["pg-input"], "show interface features": ["eth0"]}
# Top-level arrays kept for the tests and scripts that read them.
array_ok = {"show interface"}
commands = json.load(open(help_file))["commands"]
shows = [c for c in commands if c["path"].startswith("show ")]
assert len(shows) >= 20, f"only {len(shows)} show commands registered"
bad, docs = [], {}
for c in shows:
    path, usage = c["path"], c["usage"]
    if not re.search(r"\bjson\b", usage):
        bad.append(f"{path}: usage '{usage}' has no json")
        continue
    rest = usage[len(path):]
    needed = [w for w in re.sub(r"\[[^]]*\]", "", rest).split() if w.isupper()]
    if needed and path not in args_for:
        bad.append(f"{path}: needs {needed}; add its words to args_for")
        continue
    argv = path.split() + args_for.get(path, []) + ["json"]
    p = subprocess.run([ctl, "-s", sock] + argv, capture_output=True, text=True, timeout=10)
    if p.returncode:
        bad.append(f"{' '.join(argv)}: exit {p.returncode}: {p.stdout}{p.stderr}")
        continue
    try:
        doc = json.loads(p.stdout)
    except ValueError as e:
        bad.append(f"{' '.join(argv)}: invalid JSON ({e}): {p.stdout[:200]!r}")
        continue
    if not (isinstance(doc, dict) and doc) and not (path in array_ok and isinstance(doc, list)):
        bad.append(f"{' '.join(argv)}: top level is not an object with a key: {p.stdout[:200]!r}")
        continue
    docs[path] = doc
for b in bad:
    print("FAIL:", b, file=sys.stderr)
print(f"{len(docs)} show commands answered json")
json.dump(docs, open(out_file, "w"))
sys.exit(1 if bad else 0)
PY

# ---- exact values ----
python3 - "$tmp/all.json" "$tmp/cli.sock" "$if_a" <<'PY' || fail "show json values"
import json, sys
d = json.load(open(sys.argv[1]))
sock, if_a = sys.argv[2], sys.argv[3]

def one(items, **kv):
    found = [x for x in items if all(x.get(k) == v for k, v in kv.items())]
    assert len(found) == 1, f"{kv}: {len(found)} matches in {items}"
    return found[0]

r = one(d["show ip fib"]["routes"], prefix="10.9.0.0/16")
assert (r["kind"], r["next_hop"], r["interface"]) == ("rewrite", "10.1.0.2", "nul0"), r
assert (r["rewrite"], r["resolved"]) == ("02:00:00:00:00:07", True), r
one(d["show ip fib"]["routes"], prefix="10.1.0.1/32", kind="local", interface="nul0")
n = one(d["show ip neighbors"]["neighbors"], address="10.1.0.2")
assert (n["interface"], n["mac"], n["state"], n["held"]) == ("nul0", "02:00:00:00:00:07", "static", 0), n
assert one(d["show ip interface"]["interfaces"], name="nul0")["addresses"] == ["10.1.0.1/24"]
assert one(d["show ip interface"]["interfaces"], name="cap0")["addresses"] == []

hw = d["show hardware-interfaces"]["interfaces"]
assert {(i["name"], i["driver"]) for i in hw} == {("nul0", "null"), ("cap0", "pcap"), ("eth0", "af-packet")}, hw
nul0 = one(hw, name="nul0")
assert (nul0["admin"], nul0["rx_burst"], nul0["tx_queues"], nul0["rx_queues"]) == ("up", 256, 1, [{"queue": 0, "thread": 0}]), nul0
assert isinstance(one(hw, name="eth0")["driver_lines"], list)
afp = one(d["show af-packet"]["interfaces"], name="eth0")  # the default rx-mode adaptive: the frame ring
assert (afp["host_if"], afp["rx_ring"], len(d["show af-packet"]["interfaces"])) == (if_a, "auto", 1), afp
assert [(q["queue"], q["rx_mode"], q["ring"], q["tpacket"]) for q in afp["rx_queues"]] == [(0, "adaptive", "frame", "v2")], afp
placement = {(p["interface"], p["queue"], p["node"]) for p in d["show interface rx-placement"]["rx_placement"]}
assert placement == {("nul0", 0, "null-input"), ("cap0", 0, "pcap-input"), ("eth0", 0, "af-packet-input")}, placement

s1 = one(d["show packet-generator"]["streams"], name="s1")
assert (s1["enabled"], s1["sent"], s1["packets"], s1["limit"]) == (False, 100, 100, 100), s1
assert (s1["size_min_bytes"], s1["size_max_bytes"], s1["next_node"]) == (64, 128, "error-drop"), s1
assert 6400 <= s1["bytes"] <= 12800, s1

dist = d["show distributor"]["distributor"]
assert dist["enabled"] is True and [w["worker"] for w in dist["workers"]] == [0], dist
assert set(dist["reorder_window"]) == {"used", "size", "released", "gaps", "unordered"}, dist
timers = d["show timers"]["timers"]
assert [t["thread"] for t in timers] == [0, 1] and all(t["tick_ns"] == 10000 for t in timers), timers
assert all(len(t["late"]) == 8 and t["late"][0]["bucket"] == "<tick/4" for t in timers), timers
assert all(sum(v for k, v in t["memory"].items() if k != "entry_bytes") == t["memory_bytes"] for t in timers), timers

cli = d["show cli"]["cli"]
assert (cli["listen"], cli["transport"], cli["socket_mode"], cli["max_sessions"]) == (sock, "unix", "0600", 8), cli
assert cli["sessions_open"] >= 1 and cli["accepted"] >= 9, cli  # the 6 set-up commands, a poll, help, show buffers, itself
assert d["show config"]["config"]["unix"]["cli-listen"] == sock
assert d["show config"]["config"]["interfaces"]["eth0"]["host-if"] == if_a
assert d["show config"]["config"]["packet-generator"]["s1"]["limit"] == "100"
assert d["show config"]["config"]["unix"]["nodaemon"] is True

node = d["show node"]["nodes"]
assert len(node) == 1 and (node[0]["name"], node[0]["type"]) == ("pg-input", "input"), node
assert any(a["name"] == "error-drop" and a["packets"] == 100 for a in node[0]["next"]), node
assert sum(t["vectors"] for t in node[0]["threads"]) == 100, node
assert d["show version"]["version"]["version"]
assert d["show nic"] == {"nics": []}, d["show nic"]
assert isinstance(d["show pci"]["pci_functions"], list)
assert "ef" in json.dumps(d["show sched"]), d["show sched"]
assert one(d["show errors"]["errors"], node="pg-input", reason="generated into error-drop")["count"] == 100
PY

netns_stop_sluice
echo "ok: every show command prints json; values checked"
