/* The sample plugin's counters in the stats segment (app/statseg.h):
 *
 *   /plugins/sample/flows/names    one row per flow of every thread,
 *                                  "THREAD/PROTO/SRC:SPORT/DST:DPORT"
 *   /plugins/sample/flows/packets  what `show sample flows` counts
 *   /plugins/sample/flows/bytes
 *
 * Read on the stats segment's thread without the barrier: a slot counts
 * once its `used` is seen (an acquire load pairing with sample-flow's
 * release store after the key), its counts with relaxed loads of the
 * node's relaxed stores. `clear sample flows` zeroes the tables under the
 * CLI command lock the segment's thread holds while it reads, so a pass
 * never sees half a clear. */
#include <stdio.h>

#include "app/statseg.h"
#include "graph/graph.h"
#include "sample.h"

static void sample_stats_collect(struct graph *g, struct statseg_rows *rows)
{
	int node = graph_node_index(g, "sample-flow");
	if (node < 0)
		return;
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		struct node_runtime *rt = graph_node_runtime(g, t, (uint32_t)node);
		const struct sample_flows *ft = rt ? rt->data : NULL;
		for (uint32_t i = 0; ft && i < SAMPLE_FLOWS_MAX; i++) {
			const struct sample_flow *f = &ft->flow[i];
			if (!__atomic_load_n(&f->used, __ATOMIC_ACQUIRE))
				continue;
			char name[64];
			snprintf(name, sizeof(name), "%u/%u/%u.%u.%u.%u:%u/%u.%u.%u.%u:%u", t, f->proto, f->src >> 24,
				 (f->src >> 16) & 255, (f->src >> 8) & 255, f->src & 255, f->sport, f->dst >> 24,
				 (f->dst >> 16) & 255, (f->dst >> 8) & 255, f->dst & 255, f->dport);
			const uint64_t v[2] = { __atomic_load_n(&f->packets, __ATOMIC_RELAXED),
						__atomic_load_n(&f->bytes, __ATOMIC_RELAXED) };
			if (statseg_rows_add(rows, name, v))
				return; /* out of memory: the rest wait for a pass that has it */
		}
	}
}

static const char *const sample_stats_columns[] = { "packets", "bytes" };

static const struct statseg_counters sample_stats = {
	.prefix = "/plugins/sample/flows",
	.row_dim = "flow",
	.n_columns = 2,
	.columns = sample_stats_columns,
	.collect = sample_stats_collect,
};
STATSEG_COUNTERS_REGISTER(sample_stats)
