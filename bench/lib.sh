# Shared by the bench/*/run.sh scripts: source it after setting `root`
# (the repository) and `out` (a scratch directory the caller removes).
#   bench_log MSG             a "# " line on stderr
#   bench_need [CMD=PKG...]   install what is missing (Debian packages): the
#                             build tools, the libraries, valgrind, plus the
#                             extra command=package pairs given
#   bench_need_peer CMD...    the DPDK programs the bench measures against
#                             (dpdk-test, dpdk-testpmd, dpdk-test-fib: all in
#                             Debian 12's dpdk-dev); installs them, and exits
#                             3 naming the one still missing
#   bench_need_libdpdk        libdpdk-dev for the peer harnesses of our own
#   bench_build DIR [ARGS...] meson setup DIR (tests off) once, with ARGS
#   bench_builds TARGET...    the shared builds every bench uses, built for
#                             TARGET...: $native (-march=native) and $isa
#                             (-march= the peer's baseline, bench_peer_isa;
#                             also the callgrind build: no AVX-512 there);
#                             with BEFORE=REV also $before and $before_isa
#   bench_peer_isa            the -march Debian's DPDK was built for
#   bench_tsc_hz              the TSC rate, measured here (Hz)
#   bench_mem_mode            DPDK_MEM_MODE=huge|nohuge as the DPDK anchor
#                             scripts set it up; sets dpdk_mem, sluice_mem,
#                             mem_label (falls back to 4 KB pages)
#   bench_daemon_stop         stop the daemon $pid started (SIGTERM, 5 s, then
#                             SIGKILL) and clear pid
#   bench_busy_pct            share of all CPUs busy over one second
#   bench_wait_quiet [OWN]    wait (up to QUIET_MAX s) for a box < 10% busy
#                             besides OWN percent the bench's own running
#                             processes take (a polling daemon: 100/nproc);
#                             nothing under QUICK=1
#   bench_mmm                 numbers on stdin -> "min median max"
#   bench_row ARGS...         one comparison row of the summary (see
#                             bench/summary.py row --help); appended to
#                             $BENCH_ROWS
#   bench_report              this bench's rows as a markdown table
#   bench_pmd_open/_cmd/_close  testpmd -i driven through a fifo, each
#                             command waiting for the prompt after it
#   bench_testpmd_cg BURST SECS TAG   testpmd io between net_null ports
#                             under callgrind: "instructions/packet packets"
#
# QUICK=1 (bench/run.sh --quick): small sizes, one round, no waiting for a
# quiet box; the figures are not judged, only that every bench still builds,
# runs and finds its peer.
QUICK=${QUICK:-0}
BENCH_ROWS=${BENCH_ROWS:-$out/rows.jsonl}
BENCH_BUILD_ROOT=${BENCH_BUILD_ROOT:-${TMPDIR:-/tmp}/sluice-bench}

bench_log() { echo "# $*" >&2; }

bench_need() {
	local need=() pair p
	command -v meson >/dev/null 2>&1 || need+=(meson)
	command -v ninja >/dev/null 2>&1 || need+=(ninja-build)
	command -v cc >/dev/null 2>&1 || need+=(gcc)
	command -v pkg-config >/dev/null 2>&1 || need+=(pkg-config)
	command -v python3 >/dev/null 2>&1 || need+=(python3)
	command -v valgrind >/dev/null 2>&1 || need+=(valgrind)
	for pair in "$@"; do
		command -v "${pair%%=*}" >/dev/null 2>&1 || need+=(${pair#*=})
	done
	for p in libnuma-dev libcjson-dev libpcap-dev libcli-dev; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || need+=("$p")
	done
	[ "${#need[@]}" -gt 0 ] || return 0
	if [ "${BENCH_NO_INSTALL:-0}" = 1 ]; then
		echo "bench: missing ${need[*]} (BENCH_NO_INSTALL=1: not installing)" >&2
		exit 3
	fi
	bench_log "installing: ${need[*]}"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
}

bench_build() {
	local dir=$1
	shift
	if [ -f "$dir/build.ninja" ]; then
		# A build left by another checkout (BENCH_BUILD_ROOT is shared under
		# /tmp) would regenerate from that tree, or fail when it is gone.
		local from
		from=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
			"$dir/meson-info/meson-info.json" 2>/dev/null)
		[ "$from" = "$(cd "$root" && pwd -P)" ] && return 0
		bench_log "$dir was set up from ${from:-an unknown tree}: setting it up again from $root"
		rm -rf "$dir"
	fi
	meson setup "$dir" "$root" -Dtests=false "$@" >"$out/meson-$(basename "$dir").log" 2>&1 ||
		{ cat "$out/meson-$(basename "$dir").log" >&2; exit 1; }
}

bench_mem_mode() {
	dpdk_mem=(--no-huge -m 1024)
	sluice_mem=(--no-huge)
	mem_label="4 KB pages (sluice --no-huge, DPDK --no-huge -m 1024)"
	[ "${DPDK_MEM_MODE:-huge}" = huge ] || return 0
	local total
	total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
	[ "${total:-0}" -ge 1024 ] || echo 1024 >/proc/sys/vm/nr_hugepages 2>/dev/null || true
	if ! grep -q ' hugetlbfs ' /proc/mounts; then
		mkdir -p /dev/hugepages
		mount -t hugetlbfs nodev /dev/hugepages 2>/dev/null || true
	fi
	total=$(awk '/^HugePages_Total:/ {print $2}' /proc/meminfo)
	if [ "${total:-0}" -ge 256 ] && grep -q ' hugetlbfs ' /proc/mounts; then
		dpdk_mem=(--in-memory)
		sluice_mem=()
		mem_label="2 MB hugepages (HugePages_Total=$total; DPDK --in-memory)"
	else
		bench_log "hugepages unavailable: both sides on 4 KB pages"
	fi
}

bench_daemon_stop() {
	kill -TERM "$pid"
	for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
}

bench_busy_pct() {
	local a b
	read -ra a < <(head -1 /proc/stat)
	sleep 1
	read -ra b < <(head -1 /proc/stat)
	local idle=$(((b[4] + b[5]) - (a[4] + a[5]))) total=0 i
	for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
	echo $((total > 0 ? 100 * (total - idle) / total : 0))
}

bench_wait_quiet() { # [OWN_PCT: the share the bench's own running processes take]
	[ "$QUICK" != 1 ] || return 0
	local waited=0 busy limit=$((10 + ${1:-0}))
	while busy=$(bench_busy_pct) && [ "$busy" -ge "$limit" ]; do
		if [ "$waited" -ge "${QUIET_MAX:-120}" ]; then
			bench_log "WARNING: box still ${busy}% busy after ${waited}s; figures may be low"
			return 0
		fi
		sleep 4
		waited=$((waited + 5))
	done
	[ "$waited" -eq 0 ] || bench_log "waited ${waited}s for an idle box"
}

# The DPDK programs a bench runs as its peer. A peer that cannot run makes
# the bench fail: a table with a missing peer is not a comparison.
bench_need_peer() {
	local c missing=()
	for c in "$@"; do command -v "$c" >/dev/null 2>&1 || missing+=("$c"); done
	if [ "${#missing[@]}" -gt 0 ] && [ "${BENCH_NO_INSTALL:-0}" != 1 ]; then
		bench_log "installing dpdk dpdk-dev (${missing[*]}: Debian 12 ships them in dpdk-dev)"
		apt-get -o DPkg::Lock::Timeout=600 update -qq >/dev/null 2>&1 || true
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
			dpdk dpdk-dev >/dev/null 2>&1 || true
	fi
	for c in "$@"; do
		command -v "$c" >/dev/null 2>&1 && continue
		echo "bench: peer $c is missing and could not be installed (Debian 12: apt-get install dpdk-dev)" >&2
		exit 3
	done
}

bench_need_libdpdk() {
	pkg-config --exists libdpdk 2>/dev/null && return 0
	if [ "${BENCH_NO_INSTALL:-0}" != 1 ]; then
		bench_log "installing libdpdk-dev (the peer harnesses build against it)"
		DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq \
			dpdk-dev libdpdk-dev >/dev/null 2>&1 || true
	fi
	pkg-config --exists libdpdk 2>/dev/null && return 0
	echo "bench: peer library libdpdk is missing and could not be installed (apt-get install libdpdk-dev)" >&2
	exit 3
}

# Debian builds DPDK for a generic baseline (its pkg-config flags carry the
# -march), sluice for -march=native: the $isa build matches the peer.
bench_peer_isa() {
	local m
	m=$(pkg-config --cflags libdpdk 2>/dev/null | tr ' ' '\n' | sed -n 's/^-march=//p' | head -1)
	echo "${m:-corei7}"
}

# bench_builds TARGET...: the shared builds, set up once per BENCH_BUILD_ROOT
# (bench/run.sh shares them between the benches), each built for TARGETs.
bench_builds() {
	local peer_isa
	bench_need_libdpdk
	peer_isa=$(bench_peer_isa)
	native=$BENCH_BUILD_ROOT/native
	isa=$BENCH_BUILD_ROOT/isa-$peer_isa
	isa_label="-march=$peer_isa (Debian's DPDK baseline)"
	native_label="-march=native ($(bench_native_isa))"
	bench_build "$native"
	bench_build "$isa" -Dcpu_arch="$peer_isa"
	bench_ninja "$native" bench/sluice-bench-tsc "$@"
	bench_ninja "$isa" "$@"
	before= before_isa=
	[ -n "${BEFORE:-}" ] || return 0
	local rev src
	rev=$(git -C "$root" rev-parse --short "$BEFORE")
	src=$BENCH_BUILD_ROOT/src-$rev
	if [ ! -d "$src" ]; then
		# That revision's engine with today's bench programs (their options may
		# be newer than the revision), unless BEFORE_BENCH=old keeps its own.
		mkdir -p "$src"
		git -C "$root" archive "$BEFORE" | tar -x -C "$src"
		[ "${BEFORE_BENCH:-new}" = old ] || { rm -rf "$src/bench"; cp -r "$root/bench" "$src/bench"; }
	fi
	before=$BENCH_BUILD_ROOT/before-$rev
	before_isa=$BENCH_BUILD_ROOT/before-$rev-isa-$peer_isa
	before_label="sluice at $rev"
	(root=$src; bench_build "$before" && bench_build "$before_isa" -Dcpu_arch="$peer_isa") || exit 1
	bench_ninja "$before" "$@"
	bench_ninja "$before_isa" "$@"
}

bench_ninja() {
	local dir=$1
	shift
	ninja -C "$dir" "$@" >"$out/ninja-$(basename "$dir").log" 2>&1 ||
		{ cat "$out/ninja-$(basename "$dir").log" >&2; exit 1; }
}

# The widest vector ISA -march=native gives this box, for the row labels.
bench_native_isa() {
	local f
	f=$(grep -m1 '^flags' /proc/cpuinfo)
	case "$f" in
	*avx512f*) echo "AVX-512" ;;
	*avx2*) echo "AVX2" ;;
	*) echo "SSE" ;;
	esac
}

bench_tsc_hz() {
	if [ -z "${BENCH_TSC_HZ:-}" ]; then
		BENCH_TSC_HZ=$("$BENCH_BUILD_ROOT/native/bench/sluice-bench-tsc")
		export BENCH_TSC_HZ
	fi
	echo "$BENCH_TSC_HZ"
}

bench_mmm() {
	sort -g | awk '{a[NR] = $1} END {
		if (!NR) { print "nan nan nan"; exit }
		med = NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2
		print a[1], med, a[NR] }'
}

bench_row() {
	python3 "$root/bench/summary.py" row --file "$BENCH_ROWS" "$@"
}

bench_report() {
	python3 "$root/bench/summary.py" table "$BENCH_ROWS"
}

# testpmd -i driven through a fifo: each command waits for the prompt that
# follows it (the prompt is written unbuffered), so a slow start (EAL init,
# valgrind) never eats into a timed interval.
bench_pmd_prompts() { grep -o 'testpmd> ' "$out/pmd-$1.txt" 2>/dev/null | wc -l; }

bench_pmd_wait() { # TAG N LIMIT_S: until the Nth prompt
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		[ "$(bench_pmd_prompts "$1")" -ge "$2" ] && return 0
		kill -0 "$pmd_pid" 2>/dev/null || break
		sleep 0.1
	done
	bench_log "testpmd ($1): no prompt after ${3}s:"
	tail -20 "$out/pmd-$1.txt" >&2
	exit 1
}

bench_pmd_open() { # TAG LIMIT_S COMMAND...
	local tag=$1 limit=$2
	shift 2
	mkfifo "$out/pmd-$tag.in"
	timeout -k 10 "$limit" "$@" <"$out/pmd-$tag.in" >"$out/pmd-$tag.txt" 2>&1 &
	pmd_pid=$!
	exec {pmd_fd}>"$out/pmd-$tag.in"
	bench_pmd_wait "$tag" 1 "$limit"
}

bench_pmd_cmd() { # TAG COMMAND
	local n
	n=$(bench_pmd_prompts "$1")
	echo "$2" >&"$pmd_fd"
	bench_pmd_wait "$1" $((n + 1)) 120
}

bench_pmd_close() { # TAG: quit, and the exit status must be 0
	echo quit >&"$pmd_fd"
	exec {pmd_fd}>&-
	wait "$pmd_pid" || { bench_log "testpmd ($1) failed:"; tail -20 "$out/pmd-$1.txt" >&2; exit 1; }
	pmd_pid=
}

# bench_testpmd_cg BURST SECS TAG: "instructions/packet packets" of
# testpmd's io forwarding lcore between two net_null ports under callgrind
# (--no-huge: valgrind). A small mbuf pool (8192) and -m 256 keep valgrind's
# start and exit short; the per-packet path (per-lcore mempool cache,
# net_null rx/tx) is the same. Debian's testpmd has no symbols: the
# forwarding thread is the one, among those of >= 1% of the busiest, that
# ran the most of librte_net_null (the busiest can be the main thread).
bench_testpmd_cg() {
	local b=$1 secs=$2 tag=$3 f t nn best=0 best_nn=0 pk
	bench_pmd_open "$tag" $((600 + secs)) valgrind --tool=callgrind --separate-threads=yes --fair-sched=yes \
		--callgrind-out-file="$out/cg-$tag.%p" dpdk-testpmd -l 0,1 --main-lcore 0 --no-pci \
		--file-prefix="pmd$$_$tag" --no-huge -m 256 --vdev=net_null0 --vdev=net_null1 -- -i \
		--forward-mode=io --nb-cores=1 --burst="$b" --rxq=1 --txq=1 --total-num-mbufs=8192
	bench_pmd_cmd "$tag" start
	sleep "$secs"
	bench_pmd_cmd "$tag" stop
	bench_pmd_close "$tag"
	pk=$(grep -A1 'Accumulated forward statistics' "$out/pmd-$tag.txt" | grep -oE 'RX-packets: [0-9]+' |
		awk '{print $2}' | tail -1)
	for f in "$out"/cg-"$tag".*-*; do
		echo "$(awk '/^summary:/ {s = $2} /^totals:/ {t = $2} END {print (t ? t : s) + 0}' "$f") $f"
	done | sort -rn | awk 'NR == 1 {top = $1} $1 * 100 >= top' >"$out/cg-$tag-threads.txt"
	while read -r t f; do
		nn=$(callgrind_annotate --threshold=100 "$f" 2>/dev/null |
			awk '/librte_net_null/ {gsub(",", "", $1); s += $1} END {print s + 0}')
		if [ "$nn" -gt "$best_nn" ]; then best_nn=$nn best=$t; fi
	done <"$out/cg-$tag-threads.txt"
	if [ -z "$pk" ] || [ "$pk" -eq 0 ] || [ "$best" -eq 0 ]; then
		bench_log "testpmd burst $b under callgrind forwarded nothing (packets ${pk:-none}):"
		tail -20 "$out/pmd-$tag.txt" >&2
		return 1
	fi
	awk -v i="$best" -v p="$pk" 'BEGIN {printf "%.1f %d\n", i / p, p}'
}
