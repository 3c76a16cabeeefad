/* Helpers for every folder's commands (*_cli.c) that act on the engine:
 * the session's graph, and the barrier around a control change. */
#ifndef SLUICE_GRAPH_GRAPH_CLI_H
#define SLUICE_GRAPH_GRAPH_CLI_H

#include <errno.h>

#include "cli/cli.h"
#include "graph/graph.h"

/* The session's graph, or NULL after printing "error: no graph is running". */
static inline struct graph *need_graph(struct cli_session *s)
{
	struct graph *g = cli_graph(s);
	if (!g)
		cli_fail(s, -ENODEV, "no graph is running");
	return g;
}

/* Park the datapath threads around a control change (no-op without a
 * graph: commands also run before start-up and in tests). */
static inline void graph_cli_barrier_sync(struct cli_session *s)
{
	struct graph *g = cli_graph(s);
	if (g)
		graph_barrier_sync(g);
}

static inline void graph_cli_barrier_release(struct cli_session *s)
{
	struct graph *g = cli_graph(s);
	if (g)
		graph_barrier_release(g);
}

#endif
