#!/usr/bin/env bash
# The datapath makes no allocation and no system call per packet: runs of
# 1M and 2M packets make the same number of each.
set -euo pipefail
run=$1
a1=$("$run" 1000000 | sed -n 's/.*allocs_total=\([0-9]*\).*/\1/p')
a2=$("$run" 2000000 | sed -n 's/.*allocs_total=\([0-9]*\).*/\1/p')
echo "allocator calls: 1M packets $a1, 2M packets $a2"
[ -n "$a1" ] && [ "$a1" = "$a2" ] || { echo "FAIL: allocator calls differ"; exit 1; }

syscalls() {
	strace -f -c -o "$tmp/strace.$1" "$run" "$1" >/dev/null
	awk '$NF == "total" { print $4 }' "$tmp/strace.$1"
}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
s1=$(syscalls 1000000)
s2=$(syscalls 2000000)
echo "system calls: 1M packets $s1, 2M packets $s2"
[ -n "$s1" ] && [ "$s1" = "$s2" ] || { echo "FAIL: system calls differ"; cat "$tmp/strace.2000000"; exit 1; }
echo "1 passed, 0 failed"
