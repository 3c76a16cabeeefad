#!/bin/bash
# The Prometheus endpoint scraped by a real Prometheus server. sluice
# cross-connects two af-packet interfaces between two namespaces with
# `statseg { prometheus 127.0.0.1:PORT }`; N pings cross it; then a
# Prometheus server (Debian's package) on another free loopback port
# scrapes it every second into a temporary storage directory. Expects:
#   - --check refuses a non-loopback address (naming the key) and accepts
#     it with prometheus-allow-remote yes, and [::1]:PORT;
#   - Prometheus' HTTP API (polled, 30 s at most: new targets are applied
#     on a 5 s tick) reports up{job="sluice"} = 1, and per interface the
#     sum over queues of sluice_interface_{rx,tx}_packets_total plus the
#     driver's own counter equals show interface json's RX-/TX-packets, at
#     least N each way (read after the traffic stopped and after more than
#     an update-interval);
#   - promtool check metrics on a scrape prints nothing and exits 0;
#   - Accept: application/openmetrics-text gets the OpenMetrics content
#     type and a body ending in # EOF; no Accept gets text 0.0.4; another
#     path is 404, POST is 405;
#   - sluice-stats metrics prints the same families as the endpoint.
# Needs root, ip, ping, prometheus, promtool, curl, python3 (scripts/deps.sh
# test). The trap kills Prometheus and sluice and removes the namespaces
# even on failure; every wait is bounded.
#
#   test_prometheus.sh SLUICE SLUICECTL SLUICE_STATS
set -u
sluice=$1
sluicectl=$2
stats=$3
id=$$
N=20
ns_a=sluice-pma-$id
ns_b=sluice-pmb-$id
if_a=pma$id
if_b=pmb$id
host_a=pma${id}h
host_b=pmb${id}h
tmp=$(mktemp -d /tmp/sluice-prom-XXXXXX)
prom_pid=
. "$(dirname "$0")/../lib/netns.sh"
cleanup() {
	[ -n "$prom_pid" ] && kill -KILL "$prom_pid" 2>/dev/null
	netns_cleanup
}
trap cleanup EXIT
netns_preflight ip ping prometheus promtool curl python3 timeout

# Two free loopback TCP ports (bound and released: nothing else on this
# box takes ports from that range in between).
read -r port prom_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
[ -n "$prom_port" ] || fail "no free ports"

# ---- --check: the loopback rule ----
printf 'statseg { prometheus 0.0.0.0:%s }\n' "$port" > "$tmp/remote.conf"
"$sluice" --check -c "$tmp/remote.conf" > "$tmp/out" 2>&1 && fail "--check accepted prometheus 0.0.0.0:$port"
grep -q "prometheus 0.0.0.0:$port': not a loopback address" "$tmp/out" || { cat "$tmp/out" >&2; fail "--check: no reason"; }
printf 'statseg { prometheus 0.0.0.0:%s prometheus-allow-remote yes }\n' "$port" > "$tmp/remote.conf"
"$sluice" --check -c "$tmp/remote.conf" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "--check refused allow-remote"; }
printf 'statseg { prometheus [::1]:%s }\n' "$port" > "$tmp/v6.conf"
"$sluice" --check -c "$tmp/v6.conf" > "$tmp/out" 2>&1 || { cat "$tmp/out" >&2; fail "--check refused [::1]"; }

# ---- sluice between the namespaces, N pings ----
netns_make_pairs
netns_setup_l2_hosts 10.9.0.1 10.9.0.2
netns_xconnect_conf
printf 'statseg { socket-name %s update-interval 50ms prometheus 127.0.0.1:%s }\n' "$tmp/stats.sock" "$port" \
	>> "$tmp/startup.conf"
netns_start_sluice
grep -q "prometheus: http://127.0.0.1:$port/metrics" "$tmp/err" || fail "no endpoint in the log"
netns_ping_all "$ns_a" 10.9.0.2 "$N" "$tmp/ping" || { cat "$tmp/ping" >&2; fail "pings lost"; }
sleep 0.3 # six update-intervals: the segment holds the final counts
ctl show interface json > "$tmp/if.json" || fail "show interface json"

# ---- the endpoint itself ----
url=http://127.0.0.1:$port/metrics
curl -sf -D "$tmp/h.txt" -o "$tmp/m.txt" "$url" || fail "curl $url"
grep -qi '^content-type: text/plain; version=0.0.4; charset=utf-8' "$tmp/h.txt" || fail "text content type"
promtool check metrics < "$tmp/m.txt" > "$tmp/lint" 2>&1 || { cat "$tmp/lint" >&2; fail "promtool check metrics"; }
[ -s "$tmp/lint" ] && { cat "$tmp/lint" >&2; fail "promtool check metrics printed problems"; }
curl -sf -D "$tmp/h.om" -o "$tmp/m.om" -H 'Accept: application/openmetrics-text; version=1.0.0' "$url" ||
	fail "curl openmetrics"
grep -qi '^content-type: application/openmetrics-text; version=1.0.0; charset=utf-8' "$tmp/h.om" ||
	fail "openmetrics content type"
[ "$(tail -n 1 "$tmp/m.om")" = "# EOF" ] || fail "openmetrics: no # EOF at the end"
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/")" = 404 ] || fail "/ is not 404"
[ "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$url")" = 405 ] || fail "POST is not 405"
# One connection serves scrape after scrape (a scraper keeps it open): three
# GETs, a 404 among them, over one TCP connection, every one answered.
curl -sv -o /dev/null -o /dev/null -o /dev/null "$url" "http://127.0.0.1:$port/none" "$url" 2>"$tmp/keep.txt" ||
	fail "three requests on one connection"
[ "$(grep -c '^\* Connected to' "$tmp/keep.txt")" = 1 ] || fail "keep-alive: $(grep -E '^(\* Connected|< Connection)' "$tmp/keep.txt")"
[ "$(grep -c '^< HTTP/1.1 200' "$tmp/keep.txt")" = 2 ] && [ "$(grep -c '^< HTTP/1.1 404' "$tmp/keep.txt")" = 1 ] ||
	fail "keep-alive answers: $(grep '^< HTTP' "$tmp/keep.txt")"
timeout 10 "$stats" -s "$tmp/stats.sock" metrics > "$tmp/s.txt" || fail "sluice-stats metrics"
diff <(grep '^# TYPE' "$tmp/m.txt") <(grep '^# TYPE' "$tmp/s.txt") > "$tmp/out" ||
	{ cat "$tmp/out" >&2; fail "sluice-stats metrics has other families"; }

# ---- a real Prometheus ----
cat > "$tmp/prometheus.yml" <<EOF
global: { scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s }
scrape_configs:
  - job_name: sluice
    static_configs: [ { targets: ["127.0.0.1:$port"] } ]
EOF
prometheus --config.file="$tmp/prometheus.yml" --storage.tsdb.path="$tmp/tsdb" \
	--web.listen-address="127.0.0.1:$prom_port" > "$tmp/prometheus.log" 2>&1 &
prom_pid=$!

python3 - "$prom_port" "$tmp/if.json" "$N" <<'EOF' > "$tmp/out" 2>&1 ||
import json, sys, time, urllib.parse, urllib.request
port, ifs, n = sys.argv[1], json.load(open(sys.argv[2])), int(sys.argv[3])
ifs = ifs if isinstance(ifs, list) else ifs["interfaces"]
def query(q):
    u = "http://127.0.0.1:%s/api/v1/query?%s" % (port, urllib.parse.urlencode({"query": q}))
    try:
        with urllib.request.urlopen(u, timeout=2) as r:
            return json.load(r)["data"]["result"]
    except OSError:
        return None  # not listening yet
def per_interface(q):
    return {r["metric"]["interface"]: int(float(r["value"][1])) for r in (query(q) or [])}
want = {(i["name"], d): i["counters"][d.upper() + "-packets"] for i in ifs for d in ("rx", "tx")}
got, deadline = {}, time.time() + 30
while time.time() < deadline:
    up = query('up{job="sluice"}')
    if up and up[0]["value"][1] == "1":
        for d in ("rx", "tx"):
            q = "sum by (interface) (sluice_interface_%s_packets_total) + on (interface) " \
                "sluice_interface_driver_%s_packets_total" % (d, d)
            for name, v in per_interface(q).items():
                got[(name, d)] = v
        if got == want:
            break
    time.sleep(0.5)
else:
    sys.exit("after 30 s: up=%s, Prometheus %s, show interface %s" % (up, got, want))
assert all(want[(i, d)] >= n for i in ("a", "b") for d in ("rx", "tx")), want
print("up = 1; %d interface counters equal show interface's" % len(got))
EOF
	{ cat "$tmp/out" >&2; tail -20 "$tmp/prometheus.log" >&2; fail "Prometheus' view"; }
cat "$tmp/out"

# Prometheus scraped OpenMetrics (what it asks for first) without a parse
# error: the target's last error is empty.
curl -sf "http://127.0.0.1:$prom_port/api/v1/targets" | python3 -c '
import json, sys
t = json.load(sys.stdin)["data"]["activeTargets"][0]
assert t["health"] == "up" and not t["lastError"], t' || fail "the target is not healthy"

kill -TERM "$prom_pid"
wait "$prom_pid" 2>/dev/null
prom_pid=
netns_stop_sluice
echo "ok: prometheus endpoint, $N pings"
