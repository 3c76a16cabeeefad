#!/usr/bin/env bash
# bench/run.sh and bench/summary.py keep their promises:
#  - with the DPDK peers missing and nothing installable, bench/run.sh exits
#    non-zero naming the missing peer, before it builds anything;
#  - a row whose peer has no figure (did not run) or a nan is refused;
#  - rows carry min / median / max per side and the ratio of the medians,
#    the verdict follows which way is better, and the JSON parses.
#   test_bench_contract.sh REPO
set -uo pipefail
repo=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# ---- a peer missing: a PATH with the shell's tools but none of DPDK's -------
mkdir "$tmp/bin"
for c in env bash sh dirname basename mktemp rm mkdir cat sed tail head grep awk sort wc tr cut python3 \
	git date uname nproc pkg-config meson ninja cc gcc tar cp apt-get dpkg-query; do
	p=$(command -v "$c") && ln -s "$p" "$tmp/bin/$c"
done
PATH=$tmp/bin BENCH_NO_INSTALL=1 BENCH_OUT=$tmp/out BENCH_BUILD_ROOT=$tmp/builds \
	"$repo/bench/run.sh" --quick >"$tmp/run.out" 2>&1
rc=$?
cat "$tmp/run.out"
[ "$rc" -ne 0 ] || fail "bench/run.sh exited 0 with no DPDK peer on PATH"
grep -q "peer dpdk-testpmd is missing" "$tmp/run.out" || fail "bench/run.sh did not name the missing peer"
[ ! -d "$tmp/builds" ] || fail "bench/run.sh built before checking its peers"

# ---- rows ----------------------------------------------------------------
rows=$tmp/rows.jsonl
row() { python3 "$repo/bench/summary.py" row --file "$rows" --burst 32 --memory "4 KB pages" --isa corei7 \
	--statistic "median of rounds" "$@"; }
row --bench io --what fwd --unit Mpps --better higher --sluice "90 100 95" --peer-name testpmd --peer "70 80 60" ||
	fail "a good row was refused"
row --bench timers --what arm --unit ticks --better lower --sluice "60 50 55" --peer-name rte_timer --peer "50" ||
	fail "a good row was refused"
row --bench x --what y --unit u --better lower --sluice 1 --peer-name p --peer "" 2>"$tmp/err" &&
	fail "a row with no peer figure was taken"
grep -q "no figure" "$tmp/err" || fail "no reason given for the refused row: $(cat "$tmp/err")"
row --bench x --what y --unit u --better lower --sluice 1 --peer-name p --peer "nan" 2>/dev/null &&
	fail "a row with a nan was taken"
# Paired rounds where the box changed speed between rounds: the medians
# (63 vs 119) flatter sluice; the per-round ratios (1.7, 2.1, 1.6) do not.
row --bench distributor --what tpp --unit ticks --better lower --sluice "62 264 63" --peer-name rte \
	--peer "38 123 119" --paired || fail "a paired row was refused"
row --bench x --what y --unit u --better lower --sluice "1 2" --peer-name p --peer "1" --paired 2>/dev/null &&
	fail "a paired row with unequal rounds was taken"
[ "$(wc -l <"$rows")" -eq 3 ] || fail "refused rows were written"
python3 "$repo/bench/summary.py" json "$rows" --meta tsc_hz=2100000000 >"$tmp/s.json" || fail "summary.py json failed"
python3 - "$tmp/s.json" <<'PY' || fail "the summary JSON is not what the rows say"
import json, sys
d = json.load(open(sys.argv[1]))
io, tm, dist = d["rows"]
assert dist["ratio"] < 1 and dist["paired_ratio"] > 1.6 and dist["verdict"] == "behind", dist
assert io["paired_ratio"] is None
assert d["meta"]["tsc_hz"] == "2100000000"
assert (io["sluice"]["min"], io["sluice"]["median"], io["sluice"]["max"]) == (90, 95, 100), io["sluice"]
assert (io["peer"]["min"], io["peer"]["median"], io["peer"]["max"]) == (60, 70, 80), io["peer"]
assert abs(io["ratio"] - 95 / 70) < 1e-9 and io["verdict"] == "ahead", io
# lower is better: 55 ticks against 50 is behind
assert abs(tm["ratio"] - 1.1) < 1e-9 and tm["verdict"] == "behind", tm
for r in (io, tm):
    assert set(r["matched"]) == {"burst", "memory", "isa", "statistic"}
print("summary.json: ok")
PY
python3 "$repo/bench/summary.py" table "$rows" >"$tmp/t.md"
grep -q "| io | fwd | Mpps (higher) | 90.0 / \*\*95.0\*\* / 100 | testpmd | 60.0 / \*\*70.0\*\* / 80.0 | 1.36 | ahead |" "$tmp/t.md" ||
	{ cat "$tmp/t.md"; fail "the table row for io is not as expected"; }
grep -q "^- timers: arm (sluice): 55.0 vs rte_timer 50.0 ticks" "$tmp/t.md" ||
	{ cat "$tmp/t.md"; fail "the row where sluice is behind is not listed"; }
# A row with no peer (bench/statseg's scrape): it says why, has no ratio,
# and the table prints it; --no-peer or a peer, never neither.
rows=$tmp/nopeer.jsonl
row --bench statseg --what scrape --unit ms --better lower --sluice "2 1 3" --no-peer "no DPDK endpoint" ||
	fail "a row without a peer was refused"
row --bench x --what y --unit u --better lower --sluice 1 2>/dev/null && fail "a row with neither peer nor --no-peer was taken"
python3 "$repo/bench/summary.py" table "$rows" >"$tmp/t.md"
grep -q "| statseg | scrape | ms (lower) | 1.00 / \*\*2.00\*\* / 3.00 | none (no DPDK endpoint) | – | – | no peer |" "$tmp/t.md" ||
	{ cat "$tmp/t.md"; fail "the row without a peer is not as expected"; }
echo PASS
