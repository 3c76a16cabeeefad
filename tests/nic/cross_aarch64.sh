#!/usr/bin/env bash
# drivers/ cross-compiled for aarch64 (issue 24, memory ordering): every C
# file under drivers/ builds with Debian's gcc-aarch64-linux-gnu and the
# project's warnings, and the native drivers' datapath objects carry the
# aarch64 I/O barriers of drivers/pci/io_barrier.h (DMB OSHST before a tail
# write, DMB OSHLD after a descriptor-done read). Compile only: nothing runs
# on aarch64 here.
#
#   tests/nic/cross_aarch64.sh SOURCE_ROOT BUILD_ROOT
#
# Exit 77 (meson: skipped) without aarch64-linux-gnu-gcc; apt-get install
# gcc-aarch64-linux-gnu to run it.
set -euo pipefail
src=${1:?source root} bld=${2:?build root}
cc=aarch64-linux-gnu-gcc objdump=aarch64-linux-gnu-objdump
command -v "$cc" >/dev/null && command -v "$objdump" >/dev/null || {
	echo "cross_aarch64: $cc not installed (apt-get install gcc-aarch64-linux-gnu): skipped"
	exit 77
}
out=$(mktemp -d "${TMPDIR:-/tmp}/cross-aarch64.XXXXXX")
trap 'rm -rf "$out"' EXIT
n=0 bad=0
while IFS= read -r f; do
	o=$out/$(echo "$f" | tr / _).o
	if ! "$cc" -std=gnu11 -D_GNU_SOURCE -O2 -fno-strict-aliasing -Wall -Wextra -Werror -I"$src" -I"$bld" \
		-c "$src/$f" -o "$o" 2>"$o.err"; then
		echo "cross_aarch64: $f does not build for aarch64:" >&2
		cat "$o.err" >&2
		bad=$((bad + 1))
	fi
	n=$((n + 1))
done < <(cd "$src" && find drivers -name '*.c' | sort)
[ "$bad" -eq 0 ] || { echo "cross_aarch64: $bad of $n files failed" >&2; exit 1; }
# The barriers reach the datapath: each driver's burst functions (ixgbe.c,
# i40e.c) and the i40e admin queue use both kinds.
for f in drivers/ixgbe/ixgbe.c drivers/i40e/i40e.c drivers/i40e/i40e_adminq.c; do
	o=$out/$(echo "$f" | tr / _).o
	"$objdump" -d "$o" >"$o.s"
	for b in oshst oshld; do
		grep -q "dmb[[:space:]]*$b" "$o.s" || {
			echo "cross_aarch64: no dmb $b in $f's aarch64 code: an I/O barrier is missing" >&2
			exit 1
		}
	done
done
echo "cross_aarch64: $n files under drivers/ build for aarch64; dmb oshst/oshld in the ixgbe and i40e datapaths"
