#!/usr/bin/env bash
# The native drivers' forwarding loop, instructions per packet, against
# their device models, beside testpmd's io forwarding between two net_null
# ports (the floor: a PMD with no descriptors).
#
#   bench/nic/run.sh
#
# sluice: model rx -> ixgbe-input/i40e-input -> ethernet-input ->
# l2-xconnect -> interface-output -> ixgbe-tx/i40e-tx -> model tx, one core,
# 64-byte frames, one rx and one tx queue per port (bench/nic/nic.c).
# testpmd: `dpdk-testpmd --forward-mode=io` between net_null0 and net_null1,
# one forwarding core (its two streams, each port's rx to the other's tx).
#
# Checks for its peer (dpdk-testpmd, Debian 12's dpdk-dev) and builds
# bench/nic/sluice-bench-nic in the shared $isa build (bench_builds:
# -march=corei7, Debian's DPDK baseline, and valgrind cannot run the
# AVX-512 code of -march=native). Everything is counted under
# `valgrind --tool=callgrind`; instruction counts do not depend on the
# box's load, so there are no rounds and no waiting for a quiet box, and
# the testpmd runs go on beside the sluice ones (the box has 2 cores).
#
# sluice, per driver, per burst (32 and BURSTS): callgrind dumps exactly the
# bench's nic_polls() region (--dump-before/--dump-after: its costs and its
# call counts), after a warm-up outside it. From callgrind_annotate's
# inclusive costs, per packet:
#   rx, tx   the driver's rx_burst / tx_burst. The device model's register
#            functions they call (io_read32/io_write32: on a NIC one MMIO
#            access each; in the model a decode and, on a tx tail write, the
#            whole transmission) are taken out and each call counted as
#            what vfio's accessor (vfio_read32/vfio_write32, drivers/pci/
#            vfio.c) is in this build (4 instructions: the real access).
#            Buffer allocation and freeing inside them are included; "pool"
#            says how much of rx + tx they are (graph/buffer.c).
#   rest     the rest of graph_main_poll: input dispatch, ethernet-input,
#            l2-xconnect, interface-output, the frames between the nodes.
#   loop     rx + tx + rest: all of graph_main_poll, the whole forwarding
#            loop, with the model's register functions replaced as above.
#            Any other device-model function called from inside the loop
#            fails the bench (it would have to be accounted for).
#   model    what is outside loop: the model putting frames on the wire (DMA
#            into the ring, write-back, its FCS), the bench's feeding loop,
#            and the model's register functions. Not sluice's cost.
# testpmd, per burst: the callgrind count of its forwarding lcore's thread
# (all of it: launched by `start`, the poll loop over both streams, net_null
# rx allocating mbufs, io forwarding, net_null tx freeing them, testpmd's
# per-burst stats, until `stop`) over the RX-packets of that run. Under
# valgrind: --no-huge -m 64 and --total-num-mbufs=4096 (a shorter start;
# only in-flight mbufs matter to net_null, burst x 2 plus the mempool cache).
#
# Rows (bench_report), per driver at burst 32: sluice's loop ($isa) against
# testpmd io's forwarding thread. Not like for like, and labelled so:
# net_null has no descriptors (rx hands out fresh mbufs, tx frees them), the
# ixgbe and i40e PMDs need hardware; so testpmd's figure is a floor for
# "poll, rx, forward, tx" no descriptor-ring driver gets under, and sluice's
# loop also parses Ethernet and looks up the cross-connect, and polls port
# 1's rx, empty, every loop (its cost, counted; net_null's rx is never
# empty). Memory: both on 4 KB pages (sluice's buffers page_size 4096,
# testpmd --no-huge). At burst 256 testpmd's mempool cache (250, its
# default) is smaller than a burst: its figure there includes going to the
# pool's ring (the table shows it; the rows are at burst 32).
#
# BEFORE=REV (no default: unset, there is no before column): the contract's
# $before_isa build (bench_builds: REV's whole tree, engine, drivers and
# device models, with today's bench/), run the same way, as rows "sluice at
# REV" against the same testpmd figures and a before/after table. The old
# drivers run with the device layer, graph and device models of their own
# revision (the models' cost is taken out either way). The script used to
# overlay only REV's drivers/ixgbe and drivers/i40e onto today's tree: that
# mixes revisions (since 2fe114d the device layer reaches a driver's tx node
# only through the node its ops name, so ca21b6d's drivers put 0 of 16384
# frames on port 1's wire) and would not be "sluice at REV" for the whole
# loop. A revision that cannot build today's bench/nic/nic.c (before
# e6f7ba9, which gave the models nic_model.h: ca21b6d, the old default, is
# one) or whose frames do not reach the wire fails the bench (exit 1) with
# the reason.
#
# Environment: BURSTS ("32 64 256"; QUICK 32), PKTS (packets per sluice
# measurement, 16384; QUICK 2048), WARM (warm-up polls, 200; QUICK 50),
# PMD_SECS (seconds testpmd forwards under callgrind per burst, 3; QUICK 1),
# BEFORE (a git revision), QUICK.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/../.." && pwd)
out=$(mktemp -d "${TMPDIR:-/tmp}/bench-nic.XXXXXX")
# The testpmd runs in the background, if any, go with us: the loop first
# (it starts no other), then the valgrind it is waiting for.
cleanup() {
	[ -z "${pmd_job:-}" ] || kill "$pmd_job" 2>/dev/null || true
	pkill -f -- "--file-prefix=pmd$$_" 2>/dev/null || true
	rm -rf "$out" /var/run/dpdk/pmd$$_* 2>/dev/null || true
}
trap cleanup EXIT
# shellcheck source=../lib.sh
. "$root/bench/lib.sh"

if [ "$QUICK" = 1 ]; then
	BURSTS=${BURSTS:-32} PKTS=${PKTS:-2048} WARM=${WARM:-50} PMD_SECS=${PMD_SECS:-1}
else
	BURSTS=${BURSTS:-32 64 256} PKTS=${PKTS:-16384} WARM=${WARM:-200} PMD_SECS=${PMD_SECS:-3}
fi
BEFORE=${BEFORE:-}
# Burst 32 always (the rows), then BURSTS, each once.
bursts=$(printf '%s\n' 32 $BURSTS | awk '!seen[$1]++' | tr '\n' ' ')

bench_need objdump=binutils
bench_need_peer dpdk-testpmd
# Today's builds first; then a revision that does not build fails here with
# bench_builds' log, and this says why.
BEFORE='' bench_builds bench/nic/sluice-bench-nic
if [ -n "$BEFORE" ]; then
	(bench_builds bench/nic/sluice-bench-nic) || {
		echo "bench/nic: BEFORE=$BEFORE: today's bench/nic/nic.c does not build against that revision's" \
			"engine and device models (it needs tests/models/nic_model.h, e6f7ba9 on)" >&2
		exit 1
	}
fi
bench_builds bench/nic/sluice-bench-nic
peer_isa=$(bench_peer_isa)
trees=(after)
bins=("$isa/bench/nic/sluice-bench-nic")
if [ -n "$before_isa" ]; then
	trees=(before after)
	bins=("$before_isa/bench/nic/sluice-bench-nic" "${bins[0]}")
fi

# ---- testpmd under callgrind ------------------------------------------------
# pmd_callgrind BURST: "BURST instructions/packet packets" of the forwarding
# thread (bench/lib.sh bench_testpmd_cg).
pmd_callgrind() {
	local r
	r=$(bench_testpmd_cg "$1" "$PMD_SECS" "nic$1") || return 1
	echo "$1 $r"
}

bench_log "testpmd io net_null<->net_null under callgrind, bursts $bursts, $PMD_SECS s each (in the background)"
(
	for b in $bursts; do pmd_callgrind "$b" || exit 1; done >"$out/pmd.txt"
) 2>"$out/pmd.err" &
pmd_job=$!

# ---- sluice under callgrind ---------------------------------------------------
# vfio_cost BIN FUNC: instructions of vfio's register accessor in BIN, to
# its ret (what one register access is on hardware).
vfio_cost() {
	objdump -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '
		$2 == f {on = 1; next}
		on && (/^$/ || $2 ~ /^ret/) {n += NF >= 2; on = 0; done = 1}
		on && NF >= 2 {n++}
		END {print done ? n : 0}'
}

# figures PROFILE DRIVER PACKETS VFIO_READ VFIO_WRITE: per packet
# "rx tx pool rest loop model total" from the nic_polls() dump.
figures() {
	callgrind_annotate --inclusive=yes --tree=caller --threshold=100 --auto=no "$1" | awk -v drv="$2" \
		-v pk="$3" -v vr="$4" -v vw="$5" '
	function fname(s) { sub(/ \[.*$/, "", s); sub(/ \([0-9,]+x\)$/, "", s); sub(/^.*:/, "", s); return s }
	function num(s) { gsub(/,/, "", s); return s + 0 }
	function calls(s) { if (!match(s, /\([0-9,]+x\)/)) return 0; return num(substr(s, RSTART + 1, RLENGTH - 3)) }
	function model(s) { return s ~ /\/tests\/models\// }
	/^ *[0-9,]+ .* < / { n_c++; c_cost[n_c] = num($1); c_line[n_c] = $0; next }
	/^ *[0-9,]+ .* \* / {
		f = fname($0); v = num($1)
		if (v > incl[f]) incl[f] = v
		for (i = 1; i <= n_c; i++) {
			c = fname(c_line[i])
			from[f, c] += c_cost[i]
			# A call from sluice (not the model, not the bench feeding the
			# wire) into the model: a register access, or something unknown.
			if (model($0) && !model(c_line[i]) && c_line[i] !~ /bench\/nic\/nic\.c:/) {
				if (f != "io_read32" && f != "io_write32") { bad = bad " " c "->" f; continue }
				io[c] += c_cost[i]; io_all += c_cost[i]
				add[c] += calls(c_line[i]) * (f == "io_read32" ? vr : vw)
				add_all += calls(c_line[i]) * (f == "io_read32" ? vr : vw)
			}
		}
		n_c = 0; next
	}
	/^$/ { n_c = 0 }
	/PROGRAM TOTALS/ { total = num($1) }
	END {
		if (bad != "") { print "sluice called device-model code the bench does not account for:" bad > "/dev/stderr"; exit 1 }
		rx = drv "_rx_burst"; tx = drv "_tx_burst"; poll = incl["graph_main_poll"]
		if (!poll || !incl[rx] || !incl[tx] || !pk) { print "no graph_main_poll/" rx "/" tx " in the profile" > "/dev/stderr"; exit 1 }
		# The rx burst calls its batch (DRIVER_rx_batch) once a descriptor
		# is done: the batch is inside the inclusive cost of the burst, its
		# register accesses and pool calls are its own.
		rb = drv "_rx_batch"
		pool = from["buffer_alloc", rx] + from["buffer_free", rx] + from["buffer_alloc", rb] + from["buffer_free", rb] + from["buffer_alloc", tx] + from["buffer_free", tx] + from["buffer_free_reset", tx]
		r = incl[rx] - io[rx] - io[rb] + add[rx] + add[rb]; t = incl[tx] - io[tx] + add[tx]
		loop = poll - io_all + add_all
		printf "%.1f %.1f %.1f %.1f %.1f %.1f %.1f\n", r / pk, t / pk, pool / pk, (loop - r - t) / pk, loop / pk,
			(total - poll + io_all) / pk, total / pk
	}'
}

: >"$out/rows.txt"
for drv in ixgbe i40e; do
	for b in $bursts; do
		polls=$(((PKTS + b - 1) / b))
		for i in "${!trees[@]}"; do
			tree=${trees[$i]} bin=${bins[$i]}
			label=$([ "$tree" = before ] && echo "$before_label" || echo "sluice")
			bench_log "callgrind: $drv burst $b, $polls polls, $label"
			prof=$out/cg.$drv.$b.$tree
			( cd "$out" && timeout 900 valgrind --tool=callgrind --dump-before=nic_polls --dump-after=nic_polls \
				--callgrind-out-file="$prof" "$bin" --driver "$drv" --burst "$b" --polls "$polls" --warm "$WARM" \
				>"$prof.txt" 2>&1 ) || {
				tail -20 "$prof.txt" >&2
				echo "bench/nic: $label: $drv burst $b did not forward every frame (above)" >&2
				exit 1
			}
			# Dumps: .1 up to nic_polls, .2 nic_polls itself, the base file the rest.
			pk=$(awk '/^nic: driver/ {print $11}' "$prof.txt")
			vr=$(vfio_cost "$bin" vfio_read32) vw=$(vfio_cost "$bin" vfio_write32)
			[ "$vr" -gt 0 ] && [ "$vw" -gt 0 ] || { echo "bench/nic: no vfio_read32/vfio_write32 in $bin" >&2; exit 1; }
			f=$(figures "$prof.2" "$drv" "$pk" "$vr" "$vw") || exit 1
			echo "$drv $b $tree $f" >>"$out/rows.txt"
		done
	done
done

bench_log "waiting for the testpmd callgrind runs"
pmd_rc=0
wait "$pmd_job" || pmd_rc=$?
pmd_job=
[ "$pmd_rc" -eq 0 ] || { cat "$out/pmd.err" >&2; echo "bench/nic: peer dpdk-testpmd did not run (above)" >&2; exit 1; }

# ---- report ---------------------------------------------------------------
pmd_at() { awk -v b="$1" '$1 == b {print $2}' "$out/pmd.txt"; }
echo "== bench/nic: the drivers' forwarding loop against their device models, callgrind instructions per packet =="
echo "   64-byte frames, one rx and one tx queue per port, $PKTS packets per sluice row, $isa_label$([ -n "$before_isa" ] && echo ", before = $before_label")"
echo "   loop = rx + tx + rest = graph_main_poll, the model's register functions replaced by vfio's accessor;" \
	"model = outside loop (not sluice's)"
printf '%-6s %5s %-6s %7s %7s %8s %8s %10s %7s %7s %8s %8s %12s\n' driver burst tree rx tx "rx+tx" "of pool" \
	"rx+tx-pool" rest loop model total "testpmd io"
awk 'FNR == NR {pmd[$1] = $2; next}
	{printf "%-6s %5s %-6s %7s %7s %8.1f %8s %10.1f %7s %7s %8s %8s %12s\n", $1, $2, $3, $4, $5, $4 + $5, $6,
		$4 + $5 - $6, $7, $8, $9, $10, pmd[$2]}' "$out/pmd.txt" "$out/rows.txt"
echo "testpmd io net_null<->net_null, whole forwarding thread under callgrind (burst, instr/packet, packets):"
sed 's/^/  /' "$out/pmd.txt"
if [ -n "$before_isa" ]; then
	echo "loop (rx+tx+rest) before -> after ($before_label -> today):"
	awk '$3 == "before" {b[$1 " " $2] = $8} $3 == "after" {a[$1 " " $2] = $8}
	     END {for (k in a) if (b[k]) printf "  %-10s %.1f -> %.1f (%.2fx)\n", k, b[k], a[k], a[k] / b[k]}' \
		"$out/rows.txt" | sort -k1,1 -k2n
fi
awk '$3 == "after" && $2 >= 32 {printf "goal rx + tx < 40 at burst %s, %s: %s (%.1f; %.1f without the pool)\n",
	$2, $1, ($4 + $5 < 40 ? "met" : "not met"), $4 + $5, $4 + $5 - $6}' "$out/rows.txt"

pmd32=$(pmd_at 32)
for drv in ixgbe i40e; do
	for tree in "${trees[@]}"; do
		loop=$(awk -v d="$drv" -v t="$tree" '$1 == d && $2 == 32 && $3 == t {print $8}' "$out/rows.txt")
		lbl=()
		[ "$tree" = after ] || lbl=(--sluice-label "$before_label")
		bench_row --bench nic --what "$drv: whole forwarding loop per packet (sluice: graph_main_poll = rx + nodes + tx, device-model code out, a register access counted as vfio's; testpmd io: its forwarding lcore's thread)" \
			--unit "instr/packet" --better lower --sluice "$loop" --peer-name "testpmd io (net_null)" --peer "$pmd32" \
			--burst "32 both" --memory "4 KB pages both (sluice buffers 4 KB, testpmd --no-huge)" \
			--isa "both -march=$peer_isa" --statistic "callgrind instructions / packets (one count)" \
			--differs "sluice: ixgbe/i40e descriptor rings against a device model (model cost excluded); testpmd: net_null, no descriptors" \
			"${lbl[@]}"
	done
done
bench_report
