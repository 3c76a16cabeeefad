/* The engine's events in the event log (base/elog.h): a track per thread,
 * barrier holds, graph changes, watchdog stalls and drop bursts.
 *
 * Drop bursts: error-drop sees every dropped packet, and a log entry per
 * drop would overwrite the whole ring in a fraction of a second under a
 * flood and cost the drop path a store per packet. Instead each thread
 * compares its per-error counters (which it keeps anyway) with what it last
 * logged, at most once per GRAPH_ELOG_DROPS_NS, from error-drop's dispatch,
 * and logs one event per reason that grew, with the count. The first drop
 * after a quiet spell is logged at once (its frame's count); a sustained
 * flood costs at most 1000 / 100 = 10 events a second per reason. The
 * check per error-drop dispatch is a cycle-counter read and a compare. An
 * event says how many drops of one reason the thread saw since its
 * previous drop events, or since it started (over_ns): the last of a burst is counted with the
 * next drop after the period, not when the burst ends (nothing runs on a
 * thread for drops that did not happen).
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph/graph_private.h"

static struct elog_type barrier_type = {
	.name = "barrier", .category = "graph", .duration = true,
	.arg_name = { "threads", "park_ns" }, .arg_kind = { ELOG_ARG_UINT, ELOG_ARG_TICKS },
};
ELOG_TYPE_REGISTER(barrier_type)

static struct elog_type build_type = {
	.name = "graph-build", .category = "graph", .duration = true,
	.arg_name = { "nodes", "errors" }, .arg_kind = { ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(build_type)

static struct elog_type arc_type = {
	.name = "graph-arc", .category = "graph",
	.arg_name = { "node", "next_index", "target" }, .arg_kind = { ELOG_ARG_STR, ELOG_ARG_UINT, ELOG_ARG_STR },
};
ELOG_TYPE_REGISTER(arc_type)

static struct elog_type node_state_type = {
	.name = "node-state", .category = "graph",
	.arg_name = { "node", "thread", "enabled" }, .arg_kind = { ELOG_ARG_STR, ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(node_state_type)

static struct elog_type drops_type = {
	.name = "drops", .category = "drop",
	.arg_name = { "reason", "count", "over_ns" }, .arg_kind = { ELOG_ARG_STR, ELOG_ARG_UINT, ELOG_ARG_TICKS },
};
ELOG_TYPE_REGISTER(drops_type)

static struct elog_type stall_type = {
	.name = "stall", .category = "watchdog",
	.arg_name = { "thread", "no_loop_ns", "loops" }, .arg_kind = { ELOG_ARG_UINT, ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(stall_type)

static struct elog_type stalled_type = {
	.name = "stalled", .category = "watchdog", .duration = true,
	.arg_name = { "thread", "loops" }, .arg_kind = { ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(stalled_type)

/* ---- tracks ---- */

void graph_thread_name(uint32_t index, char *buf, size_t len)
{
	if (index == 0)
		snprintf(buf, len, "main");
	else
		snprintf(buf, len, "worker %u", (index - 1) % 1000u);
}

int graph_elog_track(struct graph_thread *t)
{
	char name[16];
	graph_thread_name(t->index, name, sizeof(name));
	return elog_track_register(t->index, name);
}

/* ---- barrier ---- */

void graph_elog_barrier(struct graph *g)
{
	elog_duration(&barrier_type, g->barrier_start_ticks, g->barrier_parked, g->barrier_park_ticks);
}

/* ---- graph changes ---- */

uint64_t graph_elog_build_begin(void)
{
	return cpu_ticks();
}

/* "node: reason" per error, interned now: error-drop logs the ids. */
static int intern_errors(struct graph *g)
{
	g->error_elog_str = calloc(g->n_errors, sizeof(uint32_t));
	if (!g->error_elog_str)
		return -1;
	for (uint32_t e = 0; e < g->n_errors; e++) {
		uint32_t node;
		const char *reason;
		char text[160];
		if (graph_error_info(g, e, &node, &reason) == 0)
			snprintf(text, sizeof(text), "%s: %s", graph_node_reg(g, node)->name, reason);
		else
			snprintf(text, sizeof(text), "error %u (no reason set)", e);
		g->error_elog_str[e] = elog_string(text);
	}
	return 0;
}

int graph_elog_build_end(struct graph *g, uint64_t start)
{
	if (intern_errors(g))
		return -1;
	struct graph_thread *t = g->threads[0];
	if (graph_elog_track(t))
		return -1;
	elog_thread_bind(0);
	elog_duration(&build_type, start, g->n_nodes, g->n_errors);
	return 0;
}

void graph_elog_arc(struct graph *g, uint32_t node_index, uint16_t next_index, uint32_t target)
{
	elog_log(&arc_type, elog_string(g->nodes[node_index].reg->name), next_index,
		 elog_string(g->nodes[target].reg->name));
}

void graph_elog_node_state(struct graph *g, uint32_t thread_index, uint32_t node_index, enum node_state st)
{
	elog_log(&node_state_type, elog_string(g->nodes[node_index].reg->name), thread_index,
		 st != NODE_STATE_DISABLED);
}

/* ---- watchdog ---- */

void graph_elog_stall(struct graph_thread *t, uint64_t age_ns)
{
	elog_log(&stall_type, t->index, age_ns, stat_read(&t->loops));
}

void graph_elog_recovered(struct graph_thread *t, uint64_t stalled_ns)
{
	uint64_t ticks = (uint64_t)((double)stalled_ns * cpu_ticks_per_second() / 1e9);
	elog_duration(&stalled_type, cpu_ticks() - ticks, t->index, stat_read(&t->loops));
}

/* ---- drops ---- */

void graph_elog_drops_flush(struct graph_thread *t, uint64_t now)
{
	struct graph *g = t->graph;
	uint64_t over = now - t->drops_since_ticks;
	t->drops_logged_ticks = now;
	t->drops_since_ticks = now;
	for (uint32_t e = 0; e < g->n_errors; e++) {
		uint64_t n = t->error_counts[e];
		if (n == t->drops_logged[e])
			continue;
		elog_log(&drops_type, g->error_elog_str[e], n - t->drops_logged[e], over);
		t->drops_logged[e] = n;
	}
}
