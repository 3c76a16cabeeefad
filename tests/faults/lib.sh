# Shared by the fault tests that run one daemon without namespaces. The
# sourcing script sets sluice, sluicectl and tmp (a directory it made) and
# may define extra_cleanup (run on exit before $tmp goes). The daemon runs
# on $tmp/startup.conf with its CLI on $tmp/cli.sock; everything is stopped
# and removed on exit, failure included.
#
# It is started and stopped as the namespace tests do it (tests/lib/netns.sh:
# netns_start_sluice, netns_stop_sluice, which also checks that every buffer
# came back; ctl, now_ms and assert_all_attributed are netns.sh's too); fail
# and the exit trap below replace netns.sh's, as there are no namespaces here.
. "$(dirname "${BASH_SOURCE[0]}")/../lib/netns.sh"

fail() {
	echo "FAIL: $*" >&2
	[ -f "$tmp/err" ] && sed 's/^/  | /' "$tmp/err" | grep -v "exit: node" | tail -30 >&2
	exit 1
}

daemon_cleanup() {
	if [ -n "$pid" ]; then
		kill -TERM "$pid" 2>/dev/null
		for _ in $(seq 20); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null
	fi
	declare -F extra_cleanup > /dev/null && extra_cleanup
	rm -rf "$tmp"
}
trap daemon_cleanup EXIT
trap 'exit 1' INT TERM HUP
