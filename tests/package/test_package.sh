#!/usr/bin/env bash
# The Debian package (issue 25 point 2), end to end: build it from a
# temporary copy of the tree (dpkg-buildpackage writes into the parent
# folder) with DEB_BUILD_OPTIONS=nocheck (and noddebs: no debug symbols
# package, which nothing here checks), lintian without errors, the
# binaries at the x86-64-v2 baseline, install it, `sluice --check` on the
# installed startup.conf, systemd-analyze verify on the unit, the manual
# pages, then purge and nothing is left: files, the unit, the group.
#   test_package.sh SRCROOT
set -euo pipefail
src=$(cd "$1" && pwd)
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (dpkg -i, dpkg --purge)"
for t in dpkg-buildpackage dh lintian fakeroot; do
	command -v "$t" >/dev/null || skip "no $t (scripts/deps.sh test)"
done
installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }
! installed sluice || skip "a sluice package is already installed here; this test would replace and purge it"
! getent group sluice >/dev/null || skip "a group sluice exists already; purge could not be checked"

# What was there before the package (sluice run from the tree, as the
# README's first command does, makes /run/sluice) is not the purge's to
# remove: it is left out of the check below, and said.
pre_existing=" "
for d in /etc/sluice /usr/lib/sluice /usr/include/sluice /run/sluice; do
	[ ! -e "$d" ] || pre_existing+="$d "
done
[ "$pre_existing" = " " ] || echo "note: there before the package, not checked after purge:$pre_existing"

work=$(mktemp -d /tmp/sluice-package.XXXXXX)
ours=0
cleanup() {
	rc=$?
	if [ "$ours" = 1 ] && { installed sluice || installed sluice-dev || dpkg-query -W sluice >/dev/null 2>&1; }; then
		echo "cleanup: purging the sluice packages"
		dpkg --purge sluice-dev sluice >/dev/null 2>&1 || true
	fi
	rm -rf "$work"
	exit $rc
}
trap cleanup EXIT
t0=$(date +%s)

# The tree as git knows it (tracked and new files, no build directories).
mkdir "$work/sluice"
if git -C "$src" rev-parse --git-dir >/dev/null 2>&1; then
	git -C "$src" ls-files -co --exclude-standard -z |
		tar -C "$src" --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -C "$work/sluice" -xf -
else
	tar -C "$src" --exclude='./build*' -cf - . | tar -C "$work/sluice" -xf -
fi
[ -f "$work/sluice/debian/control" ] || fail "no debian/ in the copy"

# debian/changelog's version is the project's.
project=$(sed -n "s/^ *version : '\([^']*\)'.*/\1/p" "$work/sluice/meson.build" | head -1)
deb=$(cd "$work/sluice" && dpkg-parsechangelog -S Version)
[ "${deb%%-*}" = "$project" ] || fail "debian/changelog $deb, meson.build $project"

echo "== dpkg-buildpackage (log: build.log)"
(cd "$work/sluice" && DEB_BUILD_OPTIONS="nocheck noddebs parallel=2" nice dpkg-buildpackage -us -uc -b) >"$work/build.log" 2>&1 ||
	{ tail -40 "$work/build.log" >&2; fail "dpkg-buildpackage"; }
# dh runs ninja -v: every compile command is in the log.
grep -q -- '-march=native' "$work/build.log" && fail "the package build used -march=native"
arch=$(dpkg --print-architecture)
if [ "$arch" = amd64 ]; then
	grep -q -- '-march=x86-64-v2 ' "$work/build.log" || fail "the package build did not use -march=x86-64-v2"
fi
pkg=$work/sluice_${deb}_${arch}.deb dev=$work/sluice-dev_${deb}_${arch}.deb
[ -f "$pkg" ] && [ -f "$dev" ] || fail "no $(basename "$pkg") or $(basename "$dev"): $(ls "$work")"
echo "built in $(($(date +%s) - t0)) s: $(cd "$work" && ls ./*.deb | tr '\n' ' ')"
echo "compiler warnings with Debian's flags (-Dwerror=false): $(grep -c ' warning: ' "$work/build.log" || true)"
grep ' warning: ' "$work/build.log" | head -5 || true

echo "== lintian"
lintian --fail-on error --display-info "$work/sluice_${deb}_${arch}.changes" | tee "$work/lintian.txt" ||
	fail "lintian reports errors"
grep -q '^E: ' "$work/lintian.txt" && fail "lintian: errors"

# The baseline: x86-64-v2 has no AVX, so no ymm/zmm register may appear.
if [ "$arch" = amd64 ] && command -v objdump >/dev/null; then
	mkdir "$work/x"
	dpkg-deb -x "$pkg" "$work/x"
	for b in sluice sluicectl sluice-stats; do
		n=$(objdump -d --no-show-raw-insn "$work/x/usr/bin/$b" | grep -c '%[yz]mm' || true)
		[ "$n" = 0 ] || fail "$b: $n instructions on ymm/zmm registers (beyond x86-64-v2)"
	done
	echo "baseline: no AVX instruction in the binaries"
fi

echo "== install"
ours=1
dpkg -i "$pkg" "$dev" >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; fail "dpkg -i"; }
getent group sluice >/dev/null || fail "installing made no group sluice"
dpkg-query -W -f='${Conffiles}\n' sluice | grep -q '^ /etc/sluice/startup.conf ' || fail "startup.conf is not a conffile"
sluice --check /etc/sluice/startup.conf >"$work/check.out" || fail "sluice --check /etc/sluice/startup.conf"
grep -qx '  cli-group sluice' "$work/check.out" || fail "--check: no cli-group sluice"
grep -qx '  cli-mode 0660' "$work/check.out" || fail "--check: no cli-mode 0660"
unit=$(dpkg -L sluice | grep '/systemd/system/sluice.service$') || fail "no unit in the package"
grep -qx 'ExecStart=/usr/bin/sluice -c /etc/sluice/startup.conf' "$unit" || fail "unit: $(grep ExecStart "$unit")"
grep -qx 'Type=notify' "$unit" || fail "unit: $(grep Type= "$unit")"
if command -v systemd-analyze >/dev/null; then
	systemd-analyze verify "$unit" || fail "systemd-analyze verify $unit"
	echo "systemd-analyze verify: ok"
else
	echo "no systemd-analyze: unit not verified"
fi
for p in 8:sluice 8:sluicectl 8:sluice-stats 5:startup.conf; do
	if command -v man >/dev/null; then
		man -w "${p%%:*}" "${p#*:}" >/dev/null || fail "man -w ${p#*:}(${p%%:*})"
	else
		[ -f "/usr/share/man/man${p%%:*}/${p#*:}.${p%%:*}.gz" ] || fail "no ${p#*:}(${p%%:*})"
	fi
done
sluicectl -h | grep -q '^usage: sluicectl' || fail "sluicectl -h"
sluice-stats -h | grep -q '^usage: sluice-stats' || fail "sluice-stats -h"
dpkg -L sluice >"$work/files.txt"

echo "== purge"
dpkg --purge sluice-dev sluice >"$work/purge.log" 2>&1 || { cat "$work/purge.log" >&2; fail "dpkg --purge"; }
ours=0
! dpkg-query -W sluice >/dev/null 2>&1 || [ -z "$(dpkg-query -W -f='${Status}' sluice | grep -v 'not-installed')" ] ||
	fail "dpkg still knows sluice: $(dpkg-query -W -f='${Status}' sluice)"
! getent group sluice >/dev/null || fail "purge left the group sluice"
for d in /etc/sluice /usr/lib/sluice /usr/include/sluice /run/sluice; do
	case "$pre_existing" in *" $d "*) continue ;; esac
	[ ! -e "$d" ] || fail "purge left $d"
done
while read -r f; do
	[ -d "$f" ] || [ ! -e "$f" ] || fail "purge left $f"
done <"$work/files.txt"
echo "package: ok in $(($(date +%s) - t0)) s"
