#!/bin/sh
# The installed example startup.conf: the repository's with the socket
# group the package creates (cli-group sluice, cli-mode 0660). Fails when
# the repository's file no longer has the lines it rewrites, so that an
# edit there cannot silently install sockets only root can use.
set -eu
in=$1 out=$2
grep -q '^  cli-mode 0600' "$in" || { echo "$0: $in: no '  cli-mode 0600' line in unix { }" >&2; exit 1; }
grep -q '^  # cli-group sluice' "$in" || { echo "$0: $in: no '  # cli-group sluice' line in unix { }" >&2; exit 1; }
sed -e 's/^  cli-mode 0600/  cli-mode 0660                     # the group sluice may use the sockets/' \
    -e 's/^  # cli-group sluice /  cli-group sluice   /' "$in" >"$out.tmp"
mv "$out.tmp" "$out"
