#!/usr/bin/env bash
# `meson install --destdir TMP` from the build: the programs, the example
# startup.conf (with the socket group), the systemd unit naming this
# install's bindir and sysconfdir, the sysusers.d group, the sysctl.d
# hugepages and the four manual pages, each where it belongs.
#   test_install.sh BUILDDIR PREFIX SYSCONFDIR BINDIR MANDIR UNITDIR
set -euo pipefail
build=$1 prefix=$2 sysconfdir=$3 bindir=$4 mandir=$5 unitdir=$6
tmp=$(mktemp -d /tmp/sluice-install.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

meson install -C "$build" --no-rebuild --quiet --destdir "$tmp" >"$tmp.log" 2>&1 || { cat "$tmp.log" >&2; rm -f "$tmp.log"; fail "meson install"; }
rm -f "$tmp.log"
root=$tmp

# The user-facing programs, and nothing else in bindir (no test or bench).
[ "$(ls "$root$bindir" | sort | tr '\n' ' ')" = "sluice sluice-stats sluicectl " ] ||
	fail "bindir holds: $(ls "$root$bindir" | tr '\n' ' ')"
for p in sluice sluicectl sluice-stats; do
	[ -x "$root$bindir/$p" ] || fail "$bindir/$p not executable"
done

conf=$root$sysconfdir/sluice/startup.conf
[ -f "$conf" ] || fail "no $sysconfdir/sluice/startup.conf"
grep -qx '  cli-group sluice .*' "$conf" || fail "startup.conf: no cli-group sluice"
grep -qx '  cli-mode 0660 .*' "$conf" || fail "startup.conf: no cli-mode 0660"
# It parses (without the group, which this machine may lack).
grep -v '^  cli-group sluice' "$conf" >"$tmp/nogroup.conf"
"$root$bindir/sluice" --check "$tmp/nogroup.conf" >"$tmp/check.out" || fail "sluice --check on the installed startup.conf"
grep -qx '  cli-mode 0660' "$tmp/check.out" || fail "--check does not print cli-mode 0660"

unit=$root$unitdir/sluice.service
[ -f "$unit" ] || fail "no $unitdir/sluice.service"
grep -qx "ExecStart=$bindir/sluice -c $sysconfdir/sluice/startup.conf" "$unit" ||
	fail "unit ExecStart: $(grep ExecStart "$unit")"
grep -qx 'Type=notify\|Type=simple' "$unit" || fail "unit Type: $(grep Type= "$unit")"
! grep -q '@' "$unit" || fail "unit has an unsubstituted @VAR@"
# systemd reads it without a complaint (an unknown key is only a message),
# pointed at the build's sluice since nothing is installed under bindir.
if command -v systemd-analyze >/dev/null; then
	sed "s|^ExecStart=$bindir/sluice |ExecStart=$build/app/sluice |" "$unit" >"$tmp/sluice.service"
	out=$(systemd-analyze verify --man=no "$tmp/sluice.service" 2>&1) || fail "systemd-analyze verify: $out"
	[ -z "$out" ] || fail "systemd-analyze verify: $out"
fi
grep -qx 'g sluice -' "$root$prefix/lib/sysusers.d/sluice.conf" || fail "no sysusers.d group"
grep -qx 'vm.nr_hugepages = [0-9]*' "$root$prefix/lib/sysctl.d/80-sluice.conf" || fail "no sysctl.d hugepages"

for page in man8/sluice.8 man8/sluicectl.8 man8/sluice-stats.8 man5/startup.conf.5; do
	f=$root$mandir/$page
	[ -s "$f" ] || fail "no $mandir/$page"
	! grep -q '@[A-Z_]*@' "$f" || fail "$page has an unsubstituted @VAR@"
	# man-db's own check: groff warnings (bad requests, escapes) on stderr.
	if command -v man >/dev/null; then
		warn=$(MANWIDTH=80 man --warnings -l "$f" 2>&1 >/dev/null) || fail "man -l $page"
		[ -z "$warn" ] || fail "$page: $warn"
	fi
done
grep -q '^\.SS "statseg"$' "$root$mandir/man5/startup.conf.5" || fail "startup.conf.5 lacks statseg"
echo "install-destdir: ok ($(cd "$root" && find . -type f | wc -l) files)"
