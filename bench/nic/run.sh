#!/usr/bin/env bash
# The native drivers' rx and tx, instructions per packet, against their
# device models: model rx -> ixgbe-input/i40e-input -> ethernet-input ->
# l2-xconnect -> interface-output -> ixgbe-tx/i40e-tx -> model tx, one core.
#
#   bench/nic/run.sh [BUILD_DIR]
#
# Installs what it uses (Debian packages) when missing, builds
# sluice-bench-nic for x86-64-v3 (callgrind cannot run AVX-512 code) into
# BUILD_DIR (default $TMPDIR/sluice-bench-nic), and, when BEFORE names a
# revision, a second copy of today's tree with drivers/ixgbe and
# drivers/i40e as they were at BEFORE (the same bench, the old datapath).
# Then, per driver, per burst (BURSTS), per tree: callgrind over the
# bench's nic_polls() region and callgrind_annotate's inclusive costs:
#
#   rx, tx   the driver's rx_burst / tx_burst, minus the device model's
#            register functions they call (io_read32/io_write32: on a NIC one
#            MMIO access each; in the model a decode and, on a tx tail write,
#            the whole transmission). Buffer allocation and freeing done
#            inside them are included; "pool" says how much of rx + tx they
#            are (graph/buffer.c, shared with every driver).
#   model    everything the model did: frames onto the wire (DMA into the
#            ring, write-back) and its register functions.
#   rest     the graph and its nodes (input dispatch, ethernet-input,
#            l2-xconnect, interface-output, the tx node), for scale.
#
# Instruction counts are deterministic (no rounds or medians needed; the box's
# load does not change them). The goal for the drivers: rx + tx under 40
# instructions per packet at burst 32 or more.
#
# With TESTPMD=1 it also runs ../shared/bench/dpdk/testpmd_callgrind.sh at
# burst 32 and prints its figure: testpmd's whole io-forwarding thread
# between two net_null ports (a PMD with no descriptors: its rx allocates
# mbufs, its tx frees them), a floor for "poll, rx, forward, tx" that no
# descriptor-ring driver gets under. There is no fairer DPDK peer here:
# the ixgbe and i40e PMDs need the hardware.
#
# Environment: BURSTS ("32 64 256"), PKTS (packets per measurement, 16384),
# BEFORE (revision for the "before" column, default ca21b6d: the drivers
# before the fast paths; "" skips it), TESTPMD (0).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-${TMPDIR:-/tmp}/sluice-bench-nic}
BURSTS=${BURSTS:-32 64 256}
PKTS=${PKTS:-16384}
BEFORE=${BEFORE-ca21b6d}
TESTPMD=${TESTPMD:-0}
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-nic.XXXXXX")
trap 'rm -rf "$out"' EXIT

. "$root/bench/lib.sh"
log() { bench_log "$@"; }

# ---- packages -------------------------------------------------------------
if [ "$TESTPMD" = 1 ]; then bench_need dpdk-testpmd=dpdk; else bench_need; fi

# ---- build ----------------------------------------------------------------
build_bench() { # source dir, build dir
	if [ ! -f "$2/build.ninja" ]; then
		meson setup "$2" "$1" -Dtests=false -Dcpu_arch=x86-64-v3 >"$out/meson.log" 2>&1 ||
			{ cat "$out/meson.log" >&2; exit 1; }
	fi
	ninja -C "$2" bench/nic/sluice-bench-nic >"$out/ninja.log" 2>&1 || { cat "$out/ninja.log" >&2; exit 1; }
}
build_bench "$root" "$build"
trees=(after)
bins=("$build/bench/nic/sluice-bench-nic")
if [ -n "$BEFORE" ]; then
	src=$out/src-before
	mkdir -p "$src"
	# Today's tree (as checked out, uncommitted changes too) with the
	# drivers' datapath of BEFORE.
	(cd "$root" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null) |
		tar -xf - -C "$src"
	git -C "$root" archive "$BEFORE" drivers/ixgbe drivers/i40e | tar -xf - -C "$src"
	log "building the drivers of $BEFORE ($(git -C "$root" log -1 --format=%h "$BEFORE"))"
	build_bench "$src" "$out/build-before"
	trees=(before after)
	bins=("$out/build-before/bench/nic/sluice-bench-nic" "${bins[0]}")
fi

# ---- callgrind --------------------------------------------------------------
# Per-packet figures from one callgrind profile: rx tx pool model rest total.
figures() { # profile, driver, packets
	callgrind_annotate --inclusive=yes --tree=caller --threshold=100 --auto=no "$1" 2>/dev/null | awk -v drv="$2" -v pk="$3" '
	function fname(s) { sub(/ \[.*$/, "", s); sub(/ \([0-9,]+x\)$/, "", s); sub(/^.*:/, "", s); return s }
	function num(s) { gsub(/,/, "", s); return s + 0 }
	/^ *[0-9,]+ .* < / { n_c++; c_cost[n_c] = num($1); c_name[n_c] = fname($0); next }
	/^ *[0-9,]+ .* \* / {
		f = fname($0); v = num($1)
		if (v > incl[f]) incl[f] = v
		for (i = 1; i <= n_c; i++) from[f, c_name[i]] += c_cost[i]
		n_c = 0; next
	}
	/^$/ { n_c = 0 }
	/PROGRAM TOTALS/ { total = num($1) }
	END {
		rx = drv "_rx_burst"; tx = drv "_tx_burst"
		io_rx = from["io_read32", rx] + from["io_write32", rx]
		io_tx = from["io_read32", tx] + from["io_write32", tx]
		pool = from["buffer_alloc", rx] + from["buffer_free", rx] + from["buffer_alloc", tx] + from["buffer_free", tx]
		model = incl[drv "_model_rx"] + incl["io_read32"] + incl["io_write32"]
		r = incl[rx] - io_rx; t = incl[tx] - io_tx
		printf "%.1f %.1f %.1f %.1f %.1f %.1f\n", r / pk, t / pk, pool / pk, model / pk,
			(total - r - t - model) / pk, total / pk
	}'
}

for drv in ixgbe i40e; do
	for b in $BURSTS; do
		polls=$(((PKTS + b - 1) / b))
		for i in "${!trees[@]}"; do
			tree=${trees[$i]}
			log "callgrind: $drv burst $b, $polls polls, $tree"
			prof=$out/cg.$drv.$b.$tree
			( cd "$out" && timeout 900 valgrind --tool=callgrind --toggle-collect=nic_polls \
				--callgrind-out-file="$prof" "${bins[$i]}" --driver "$drv" --burst "$b" --polls "$polls" \
				>"$prof.txt" 2>&1 ) || { cat "$prof.txt" >&2; exit 1; }
			pk=$(awk '/^nic: driver/ {print $11}' "$prof.txt")
			echo "$drv $b $tree $(figures "$prof" "$drv" "$pk")" >>"$out/rows.txt"
		done
	done
done

pmd=-
if [ "$TESTPMD" = 1 ]; then
	log "testpmd io between net_null ports under callgrind, burst 32"
	pmd=$("$root/../shared/bench/dpdk/testpmd_callgrind.sh" io 32 10 2>"$out/testpmd.err" |
		awk '/instructions\/packet:/ {print $NF}') || true
	[ -n "$pmd" ] || { pmd=-; log "testpmd_callgrind.sh gave no figure:"; tail -5 "$out/testpmd.err" >&2; }
fi

# ---- report ---------------------------------------------------------------
echo "== bench/nic: driver rx/tx against the device models, callgrind instructions per packet =="
echo "   64-byte frames, one rx and one tx queue per port, $PKTS packets per row$([ -n "$BEFORE" ] && echo ", before = drivers of $(git -C "$root" log -1 --format=%h "$BEFORE")")"
printf '%-6s %5s %-6s %7s %7s %8s %8s %10s %7s %7s %8s\n' driver burst tree rx tx "rx+tx" "of pool" "rx+tx-pool" \
	model rest total
awk '{ printf "%-6s %5s %-6s %7s %7s %8.1f %8s %10.1f %7s %7s %8s\n", $1, $2, $3, $4, $5, $4 + $5, $6, $4 + $5 - $6,
	$7, $8, $9 }' "$out/rows.txt"
if [ -n "$BEFORE" ]; then
	echo "rx+tx after / before:"
	awk '$3 == "before" {b[$1 " " $2] = $4 + $5} $3 == "after" {a[$1 " " $2] = $4 + $5}
	     END {for (k in a) if (b[k]) printf "  %-10s %.1f -> %.1f (%.2fx)\n", k, b[k], a[k], a[k] / b[k]}' \
		"$out/rows.txt" | sort -k1,1 -k2n
fi
awk '$3 == "after" && $2 >= 32 {printf "goal rx + tx < 40 at burst %s, %s: %s (%.1f; %.1f without the pool)\n",
	$2, $1, ($4 + $5 < 40 ? "met" : "not met"), $4 + $5, $4 + $5 - $6}' "$out/rows.txt"
[ "$pmd" = - ] || echo "testpmd io net_null<->net_null, burst 32, whole forwarding thread: $pmd instructions per packet"
exit 0
