#!/bin/sh
# The folders' dependency order (docs/architecture.md):
#   base <- cli <- graph <- {drivers, sched} <- nodes <- app
# A file may include headers of its own folder and of folders before it;
# drivers and sched do not include each other. Prints every include that
# breaks the order and exits 1 if there is one. Run from anywhere.
cd "$(dirname "$0")/.." || exit 2
git ls-files -- 'base/*' 'cli/*' 'graph/*' 'drivers/*' 'sched/*' 'nodes/*' 'app/*' |
	grep -E '\.(c|h)$' | xargs grep -Hn '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' |
	awk '
	BEGIN {
		rank["base"] = 0; rank["cli"] = 1; rank["graph"] = 2
		rank["drivers"] = 3; rank["sched"] = 3; rank["nodes"] = 4; rank["app"] = 5
		bad = 0
	}
	{
		split($0, f, ":"); from = f[1]; sub(/\/.*/, "", from)
		if (!match($0, /"[^"]+"/)) next
		inc = substr($0, RSTART + 1, RLENGTH - 2)
		if (inc !~ /\//) next
		to = inc; sub(/\/.*/, "", to)
		if (!(to in rank) || to == from) next
		if (rank[to] >= rank[from]) {
			printf "%s:%s: %s may not include %s (order: base <- cli <- graph <- {drivers, sched} <- nodes <- app)\n", f[1], f[2], from, inc
			bad = 1
		}
	}
	END { exit bad }'
