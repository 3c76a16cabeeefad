# Bounded waits shared by the shell tests (sourced by daemon tests and
# tests/lib/netns.sh).

# wait_for_line PATTERN TENTHS FILE: wait up to TENTHS tenths of a second
# for PATTERN (grep) in FILE; 0 when it appeared, 1 when it did not.
wait_for_line() {
	for _ in $(seq "$2"); do
		grep -q "$1" "$3" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}
