# Shared by the bench/*/run.sh scripts: source it after setting `root`
# (the repository) and `out` (a scratch directory the caller removes).
#   bench_log MSG             a "# " line on stderr
#   bench_need [CMD=PKG...]   install what is missing (Debian packages): the
#                             build tools, the libraries, valgrind, plus the
#                             extra command=package pairs given
#   bench_build DIR [ARGS...] meson setup DIR (tests off) once, with ARGS
#   bench_mem_mode            DPDK_MEM_MODE=huge|nohuge as the DPDK anchor
#                             scripts set it up; sets dpdk_mem, sluice_mem,
#                             mem_label (falls back to 4 KB pages)
#   bench_busy_pct            share of all CPUs busy over one second
#   bench_wait_quiet          wait (up to QUIET_MAX s) for a box < 10% busy

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
	bench_log "installing: ${need[*]}"
	apt-get update -qq >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
}

bench_build() {
	local dir=$1
	shift
	[ -f "$dir/build.ninja" ] && return 0
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

bench_busy_pct() {
	local a b
	read -ra a < <(head -1 /proc/stat)
	sleep 1
	read -ra b < <(head -1 /proc/stat)
	local idle=$(((b[4] + b[5]) - (a[4] + a[5]))) total=0 i
	for i in 1 2 3 4 5 6 7 8; do total=$((total + b[i] - a[i])); done
	echo $((total > 0 ? 100 * (total - idle) / total : 0))
}

bench_wait_quiet() {
	local waited=0 busy
	while busy=$(bench_busy_pct) && [ "$busy" -ge 10 ]; do
		if [ "$waited" -ge "${QUIET_MAX:-120}" ]; then
			bench_log "WARNING: box still ${busy}% busy after ${waited}s; figures may be low"
			return 0
		fi
		sleep 4
		waited=$((waited + 5))
	done
	[ "$waited" -eq 0 ] || bench_log "waited ${waited}s for an idle box"
}
