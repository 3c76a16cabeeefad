#!/usr/bin/env bash
# The Prometheus endpoint (statseg { prometheus }): what a scrape costs, and
# whether scraping disturbs forwarding.
#
#   bench/statseg/run.sh
#
#  1. Scrape: the daemon with 64 null interfaces (no traffic), every node,
#     and 2 datapath threads (main + 1 worker, one core each); then with
#     more threads than cores: main + 3 workers where the box has 4 CPUs,
#     else as many as the configuration allows on it sharing the cores
#     (corelist-workers refuses a core twice: on 2 CPUs, main + 2 workers,
#     main and one worker on one core); the row says which. SCRAPES
#     scrapes by curl (`-w %{time_total} %{size_download}`: the request,
#     from connect to the last byte, without curl's own start), one after
#     another; figures: ms per scrape and bytes per scrape (text 0.0.4).
#  2. Beside bench/io: the daemon forwarding bench/io's path (nul0 and
#     nul1, null rx-recycle -> ethernet-input -> l2-xconnect -> null-tx,
#     both ways) on the main thread alone (main-core CPU), the rate read
#     from the stats segment (TX-packets of both over the writer's own
#     update_ns, SECS after WARM). ROUNDS rounds, each without a scraper,
#     with one (a single curl on the other CPU asking 10 times a second
#     over one kept-alive connection, as Prometheus does) and with the
#     control (the same client asking for a path that is not there: a 404,
#     no snapshot): paired figures, printed with their medians and
#     spread. The scraper changes nothing measurable when |median with -
#     median without| is within the spread (max - min) of the rounds
#     without; where it does not, the control says whether the scrape or
#     merely a process running on the other CPU made the difference (on a
#     2-vCPU VM any work on the other vCPU slows the datapath's).
#
# Peers: there is none. DPDK serves no Prometheus endpoint of its own (its
# telemetry library answers JSON on a unix socket, a different thing), so
# the scrape rows are printed with `--no-peer` (summary.py: "none (...)",
# no ratio); the beside-bench/io row compares sluice with a scraper against
# the same daemon without one (--paired), which is the comparison the issue
# asks for.
#
# Time after the builds: QUICK about 20 s; a full run about 2 minutes.
#
# Environment: SCRAPES (50; QUICK 10), ROUNDS (5; QUICK 1), SECS (3; QUICK
# 1), WARM (1; QUICK 0.5), CPU (1), BUILD (an existing build directory to
# run instead of the shared native build), BENCH_BUILD_ROOT,
# BENCH_NO_INSTALL, QUICK.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-statseg.XXXXXX")
pid=
scraper=
cleanup() {
	[ -z "$scraper" ] || kill "$scraper" 2>/dev/null || true
	[ -z "$pid" ] || kill -KILL "$pid" 2>/dev/null || true
	rm -rf "$out"
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$here/../lib.sh"

if [ "$QUICK" = 1 ]; then
	SCRAPES=${SCRAPES:-10} ROUNDS=${ROUNDS:-1} SECS=${SECS:-1} WARM=${WARM:-0.5}
else
	SCRAPES=${SCRAPES:-50} ROUNDS=${ROUNDS:-5} SECS=${SECS:-3} WARM=${WARM:-1}
fi
CPU=${CPU:-1}
other=$((CPU == 0 ? 1 : 0))
ncpu=$(nproc)

# ---- what it uses ------------------------------------------------------------
[ "${BENCH_NO_INSTALL:-0}" = 1 ] || bench_need curl=curl
if [ -n "${BUILD:-}" ]; then
	build=$(cd "$BUILD" && pwd)
else
	bench_builds app/sluice cli/sluice-stats
	build=$native
fi
sluice=$build/app/sluice
stats=$build/cli/sluice-stats
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port/metrics

# start CONF_BODY: the daemon on $out/startup.conf, its endpoint answering.
start() {
	{
		echo "unix { nodaemon  cli-listen $out/cli.sock }"
		echo "statseg { socket-name $out/stats.sock  update-interval 10ms  prometheus 127.0.0.1:$port }"
		echo "$1"
	} >"$out/startup.conf"
	"$sluice" -c "$out/startup.conf" 2>"$out/err" &
	pid=$!
	for _ in $(seq 100); do
		curl -sf -o /dev/null "$url" && return 0
		sleep 0.1
	done
	cat "$out/err" >&2
	exit 1
}

stop() {
	bench_daemon_stop
}

# ---- 1. scrape -------------------------------------------------------------------
# scrape_run TAG CPU_CONF: SCRAPES scrapes; "$out/ms-TAG", "$out/bytes-TAG",
# and the daemon's thread count in "$out/threads-TAG".
scrape_run() {
	local ifs='' i
	for i in $(seq 0 63); do ifs+="  if$i { driver null }"$'\n'; done
	start "cpu { $2 }"$'\n'"interfaces {"$'\n'"$ifs}"
	curl -sf -o "$out/sample-$1.txt" "$url"
	for _ in $(seq "$SCRAPES"); do
		curl -sf -o /dev/null -w '%{time_total} %{size_download}\n' "$url"
	done >"$out/scrapes-$1.txt"
	awk '{printf "%.3f\n", $1 * 1000}' "$out/scrapes-$1.txt" >"$out/ms-$1.txt"
	awk '{print $2}' "$out/scrapes-$1.txt" >"$out/bytes-$1.txt"
	grep -c '^sluice_thread_info' "$out/sample-$1.txt" >"$out/threads-$1.txt"
	stop
}

bench_wait_quiet
scrape_run t2 "main-core 0  corelist-workers 1"
t2=$(cat "$out/threads-t2.txt")
if [ "$ncpu" -ge 4 ]; then
	many_conf="main-core 0  corelist-workers 1,2,3" many_note="main + 3 workers, one core each"
else
	many_conf="main-core 0  corelist-workers 0-$((ncpu - 1))"
	many_note="main + $ncpu workers sharing $ncpu cores"
fi
bench_wait_quiet
scrape_run many "$many_conf"
tm=$(cat "$out/threads-many.txt")
bench_log "scrape: $t2 threads: $(bench_mmm <"$out/ms-t2.txt") ms; $tm threads: $(bench_mmm <"$out/ms-many.txt") ms"

# ---- 2. beside bench/io ----------------------------------------------------------
# The TX-packets of nul0 and nul1 and the writer's time of that copy.
tx_reading() {
	timeout 10 "$stats" -s "$out/stats.sock" --json dump /if/tx | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(v["packets"] for c in d["counters"] for v in c["values"]), d["update_time"])'
}

# Mpps over SECS, by the segment's own clock.
io_rate() {
	local p0 t0 p1 t1
	read -r p0 t0 < <(tx_reading)
	sleep "$SECS"
	read -r p1 t1 < <(tx_reading)
	awk -v a="$p0" -v b="$p1" -v s="$t0" -v e="$t1" 'BEGIN {printf "%.3f\n", (b - a) / (e - s) / 1e6}'
}

# The scraper: one curl on the other CPU asking 10 times a second over one
# kept-alive connection (`--rate 10/s` and a URL range, as Prometheus
# holds one connection per target), of /metrics, or of a path that is not
# there (the control: the same client and requests, a 404 instead of a
# scrape). A new curl process every 100 ms would measure process start-up
# on the sibling vCPU rather than the scrape.
scrape_loop() { # URL
	exec curl -s --rate 10/s "$1?n=[1-100000]" >/dev/null
}

start "cpu { main-core $CPU }
interfaces {
  nul0 { driver null  rx-recycle  l2-xconnect nul1 }
  nul1 { driver null  rx-recycle  l2-xconnect nul0 }
}"
sleep "$WARM"
scraper_start() { # URL
	taskset -c "$other" bash -c "$(declare -f scrape_loop); scrape_loop $1" &
	scraper=$!
	sleep "$WARM"
}
scraper_stop() {
	kill "$scraper"
	wait "$scraper" 2>/dev/null || true
	scraper=
}
# One round: without, with the scraper, with the control; odd rounds in
# that order, even rounds the other way round, so that a drift of the box
# over a round does not side with one of them.
measure() { # without|with|control
	case $1 in
	without) io_rate >>"$out/io-without.txt" ;;
	with) scraper_start "$url"; io_rate >>"$out/io-with.txt"; scraper_stop ;;
	control) scraper_start "${url%/metrics}/none"; io_rate >>"$out/io-control.txt"; scraper_stop ;;
	esac
}
for r in $(seq "$ROUNDS"); do
	bench_wait_quiet $((100 / ncpu)) # the daemon polls one CPU
	order=(without with control)
	[ $((r % 2)) = 1 ] || order=(control with without)
	for m in "${order[@]}"; do measure "$m"; done
	bench_log "round $r/$ROUNDS: $(tail -1 "$out/io-without.txt") Mpps without a scraper," \
		"$(tail -1 "$out/io-with.txt") with one at 10 Hz, $(tail -1 "$out/io-control.txt") with 10 Hz 404s"
done
stop

# ---- report ----------------------------------------------------------------------------
figs() { tr '\n' ' ' <"$out/$1.txt"; }
mmm() { bench_mmm <"$out/$1.txt" | awk '{printf "%9.3f %9.3f %9.3f", $1, $2, $3}'; }
echo "== bench/statseg: the Prometheus endpoint; $ncpu CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) =="
printf '%-64s %s\n' "scrape of 64 null interfaces, every node" "   min    median       max"
printf '%-64s %s\n' "  $t2 threads (main + 1 worker), ms per scrape" "$(mmm ms-t2)"
printf '%-64s %s\n' "  $t2 threads, bytes per scrape" "$(mmm bytes-t2)"
printf '%-64s %s\n' "  $tm threads, ms per scrape" "$(mmm ms-many)"
echo "    ($many_note)"
printf '%-64s %s\n' "  $tm threads, bytes per scrape" "$(mmm bytes-many)"
printf '%-64s %s\n' "bench/io's path in the daemon (CPU $CPU), Mpps without a scraper" "$(mmm io-without)"
printf '%-64s %s\n' "  with a 10 Hz scraper on CPU $other" "$(mmm io-with)"
printf '%-64s %s\n' "  with 10 Hz requests of a 404 on CPU $other (control)" "$(mmm io-control)"
read -r wmin wmed wmax < <(bench_mmm <"$out/io-without.txt")
read -r _ smed _ < <(bench_mmm <"$out/io-with.txt")
awk -v a="$wmed" -v b="$smed" -v lo="$wmin" -v hi="$wmax" 'BEGIN {
	d = b - a; if (d < 0) d = -d
	pct = a > 0 ? 100 * (b - a) / a : 0
	verdict = d <= hi - lo ? "within the noise" : "BEYOND the noise"
	printf "  median change %.3f Mpps (%.2f%%); run-to-run spread without: %.3f Mpps: %s\n", b - a, pct, hi - lo, verdict }'
[ "$QUICK" != 1 ] || echo "  (QUICK: one round has no spread; the figures are not judged)"
echo "from a scrape ($t2 threads; $(wc -l <"$out/sample-t2.txt") lines):"
grep -E '^(# TYPE )?sluice_(build_info|interface_rx_packets_total|node_calls_total|buffers)[ {]' "$out/sample-t2.txt" |
	grep -E -v 'interface="if([1-9]|[0-9][0-9])"|node="[^e]' | head -14 | sed 's/^/  /'

nopeer="DPDK serves no Prometheus endpoint"
common=(--bench statseg --burst "n/a" --memory "the daemon's default (4 KB pages or hugepages as configured)"
	--isa "$([ -n "${BUILD:-}" ] && echo "BUILD=$BUILD" || echo "sluice $native_label")")
scrape_stat="median of $SCRAPES scrapes by curl (time_total, size_download), text 0.0.4"
bench_row "${common[@]}" --what "scrape, 64 interfaces, $t2 threads" --unit "ms/scrape" --better lower \
	--sluice "$(figs ms-t2)" --no-peer "$nopeer" --statistic "$scrape_stat"
bench_row "${common[@]}" --what "scrape size, 64 interfaces, $t2 threads" --unit "bytes/scrape" --better lower \
	--sluice "$(figs bytes-t2)" --no-peer "$nopeer" --statistic "$scrape_stat"
bench_row "${common[@]}" --what "scrape, 64 interfaces, $tm threads" --unit "ms/scrape" --better lower \
	--sluice "$(figs ms-many)" --no-peer "$nopeer" --statistic "$scrape_stat" --differs "$many_note"
bench_row "${common[@]}" --what "scrape size, 64 interfaces, $tm threads" --unit "bytes/scrape" --better lower \
	--sluice "$(figs bytes-many)" --no-peer "$nopeer" --statistic "$scrape_stat" --differs "$many_note"
bench_row "${common[@]}" --what "bench/io's path in the daemon, 10 Hz scraper beside it" --unit Mpps \
	--better higher --sluice "$(figs io-with)" --peer-name "the same daemon, no scraper" \
	--peer "$(figs io-without)" --paired --sluice-label "sluice, scraped at 10 Hz" \
	--statistic "median of $ROUNDS paired rounds of $SECS s (rate by the segment's update_ns)"
bench_row "${common[@]}" --what "bench/io's path in the daemon, 10 Hz scraper beside it" --unit Mpps \
	--better higher --sluice "$(figs io-with)" --peer-name "the same daemon, 10 Hz curl of a 404 (control)" \
	--peer "$(figs io-control)" --paired --sluice-label "sluice, scraped at 10 Hz" \
	--statistic "median of $ROUNDS paired rounds of $SECS s (rate by the segment's update_ns)" \
	--differs "the requests: scrapes of /metrics, or of a path that is not there"
echo
bench_report
