/* What the daemon says about its run as it exits (app/exit_report.h). */
#include <stdint.h>

#include "app/exit_report.h"
#include "base/util.h"
#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/graph.h"
#include "nodes/pg/pg.h"

/* Packets that entered the graph: each interface's rx and each generator
 * stream's output. Not the input nodes' vectors: the handoff and
 * distributor inputs take in again what another thread received. */
static uint64_t packets_received(uint64_t *from_pg)
{
	uint64_t rx = 0;
	struct dev_counters c;
	struct device *d;
	DEV_FOREACH(d)
	{
		dev_counters_get(d, &c);
		rx += c.rx_packets;
	}
	struct pg_stream_info si;
	*from_pg = 0;
	for (uint32_t i = 0; pg_stream_info(i, &si) == 0; i++)
		*from_pg += si.packets_total;
	return rx + *from_pg;
}

void app_log_node_counters(struct graph *g)
{
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		struct node_stats sum = { 0 }, st;
		for (uint32_t t = 0; t < graph_n_threads(g); t++)
			if (graph_node_stats(g, t, n, &st) == 0) {
				sum.calls += st.calls;
				sum.vectors += st.vectors;
			}
		if (sum.calls)
			base_log("exit", "node %s: %llu vectors in %llu calls", graph_node_reg(g, n)->name,
				  (unsigned long long)sum.vectors, (unsigned long long)sum.calls);
	}
	uint64_t from_pg, total = packets_received(&from_pg);
	base_log("exit", "%llu packets processed (%llu received on interfaces, %llu generated)",
		  (unsigned long long)total, (unsigned long long)(total - from_pg), (unsigned long long)from_pg);
}

/* Who still holds buffers at exit: what a holder names was not released
 * by its subsystem's shutdown; "unattributed" was leaked. */
static void log_buffer_holders(void)
{
	struct buffer_attribution a;
	if (buffer_attribute(&a))
		return;
	for (uint32_t i = 0; i < a.n_holdings; i++)
		if (a.holdings[i].n)
			base_log("exit", "  held by %s %s: %llu", a.holdings[i].holder, a.holdings[i].where,
				  (unsigned long long)a.holdings[i].n);
	base_log("exit", "  unattributed: %lld", (long long)a.n_unattributed);
	buffer_attribution_free(&a);
}

/* Returns the buffers not back in their pools. */
uint64_t app_log_buffer_accounting(void)
{
	uint64_t in_use = 0;
	struct buffer_pool_stats st;
	for (uint32_t i = 0; buffer_pool_stats(i, &st) == 0; i++) {
		base_log("exit", "buffer pool %u (numa %u): %u total, %u free, %u cached, %u in use", i, st.numa_node,
			  st.n_total, st.n_free_pool, st.n_cached, st.n_in_use);
		in_use += st.n_in_use;
	}
	if (in_use) {
		base_log("exit", "%llu buffers not returned", (unsigned long long)in_use);
		log_buffer_holders();
	} else
		base_log("exit", "every buffer returned");
	return in_use;
}
