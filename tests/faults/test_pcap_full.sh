#!/bin/bash
# Fault: a pcap tx-file on a full disk. A 64 KB tmpfs holds cap0's tx-file;
# the packet generator sends 20 kpps through pg0 (cross-connected to cap0)
# and 10 kpps through pg1 (cross-connected to the null interface nul0).
# Expects:
#   - within 10 s the write fails: one log line naming cap0 and "No space
#     left on device", `show hardware cap0` says so, cap0's TX-dropped
#     counts what is sent to it from then on (rising) while its TX-packets
#     stay put;
#   - sluice keeps running and forwarding: nul0's TX-packets keep rising;
#   - `show buffers`: nothing unattributed; SIGTERM: exit 0, every buffer
#     returned.
# Prints: time to the failure, file size, drops. Needs root (mount); the
# trap unmounts and removes everything even on failure.
#
#   test_pcap_full.sh SLUICE SLUICECTL
set -u
sluice=$1
sluicectl=$2
tmp=$(mktemp -d /tmp/flt-pcapfull-XXXXXX)
mnt=$tmp/disk
extra_cleanup() {
	mountpoint -q "$mnt" && umount "$mnt"
}
. "$(dirname "$0")/lib.sh"
[ "$(id -u)" -eq 0 ] || fail "needs root (mount)"
mkdir "$mnt" && mount -t tmpfs -o size=64k tmpfs "$mnt" || fail "mount a 64k tmpfs"

cat > "$tmp/startup.conf" <<CONF
unix { nodaemon  cli-listen $tmp/cli.sock }
interfaces {
  pg0  { driver null  l2-xconnect cap0 }
  cap0 { driver pcap  tx-file $mnt/out.pcap }
  pg1  { driver null  l2-xconnect nul0 }
  nul0 { driver null }
}
packet-generator {
  to-disk { rate 20kpps  size 64  next-node ethernet-input  rx-if 0 }
  to-null { rate 10kpps  size 64  next-node ethernet-input  rx-if 2 }
}
CONF
netns_start_sluice
t0=$(now_ms)

# "TX-packets TX-dropped" of interface $1.
tx() {
	ctl show interface "$1" json | python3 -c '
import json, sys
c = json.load(sys.stdin)[0]["counters"]
print(c["TX-packets"], c["TX-dropped"])'
}

failed=
for _ in $(seq 100); do
	grep -q "pcap: cap0: tx-file: No space left on device" "$tmp/err" && { failed=$(now_ms); break; }
	sleep 0.1
done
[ -n "$failed" ] || { df "$mnt" >&2; fail "no write failure logged within 10 s"; }
echo "disk full: write failure $((failed - t0)) ms after start, file $(stat -c %s "$mnt/out.pcap") bytes"
ctl show hardware cap0 | grep -q "tx-file: write failed: No space left on device" \
	|| { ctl show hardware cap0 >&2; fail "show hardware cap0 does not name the failure"; }
read -r cap_tx1 cap_drop1 <<< "$(tx cap0)"
read -r nul_tx1 _ <<< "$(tx nul0)"
sleep 1
read -r cap_tx2 cap_drop2 <<< "$(tx cap0)"
read -r nul_tx2 _ <<< "$(tx nul0)"
kill -0 "$pid" 2>/dev/null || fail "sluice died on the full disk"
echo "after (1 s): cap0 TX-packets +$((cap_tx2 - cap_tx1)) TX-dropped +$((cap_drop2 - cap_drop1)), nul0 TX-packets +$((nul_tx2 - nul_tx1))"
[ "$cap_drop2" -gt "$cap_drop1" ] || fail "cap0 TX-dropped does not count what is sent to it ($cap_drop1 -> $cap_drop2)"
[ "$cap_tx2" -eq "$cap_tx1" ] || fail "cap0 TX-packets still rising on a full disk ($cap_tx1 -> $cap_tx2)"
[ "$nul_tx2" -gt "$nul_tx1" ] || fail "forwarding to nul0 stopped ($nul_tx1 -> $nul_tx2)"
[ "$(grep -c "No space left on device" "$tmp/err")" -eq 1 ] || fail "the failure is not logged exactly once"

assert_all_attributed

netns_stop_sluice
echo PASS
