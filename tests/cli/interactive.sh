#!/bin/sh
# Start the test daemon on a private socket, run the expect script against
# sluicectl, and always stop the daemon.
# usage: interactive.sh SLUICECTL DAEMON EXPECT_SCRIPT
set -u
ctl=$1 daemon=$2 script=$3
dir=$(mktemp -d /tmp/cli-inter-XXXXXX)
sock=$dir/cli.sock
"$daemon" "$sock" 2>"$dir/daemon.log" &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
i=0
until "$ctl" -s "$sock" show version >/dev/null 2>&1; do
  i=$((i + 1))
  if [ $i -gt 100 ]; then echo "daemon did not start"; cat "$dir/daemon.log"; exit 1; fi
  sleep 0.05
done
timeout 60 expect -f "$script" "$ctl" "$sock"
