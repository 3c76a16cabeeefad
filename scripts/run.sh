#!/usr/bin/env bash
# Build sluice and run it. With no arguments it runs the embedded default
# configuration (startup.conf at the top of the tree, written out): no NIC
# needed, two cores, a few percent of a core. Two paced packet-generator
# streams of different DSCP enter as frames received on pg0, sched-ingress
# classifies them into two classes, the distributor hands their flows to
# one worker, which cross-connects them to nul0 and shapes it to 2 Mbit/s.
# Extra arguments go to sluice, e.g. scripts/run.sh -c startup.conf
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
if [ $# -eq 0 ]; then
	cat >&2 <<'HINT'
sluice: the default pipeline; from another terminal, try
  build/cli/sluicectl show sched            # classes, the shaper's queue, the class queues
  build/cli/sluicectl show distributor      # what the worker was handed
  build/cli/sluicectl trace add pg-input 4; build/cli/sluicectl show trace
  build/cli/sluicectl show runtime          # both threads, asleep most of the time
HINT
fi
exec build/app/sluice "$@"
