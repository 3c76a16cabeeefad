/* Helpers shared by the engine's CLI files (graph_cli.c, trace_cli.c). */
#ifndef SLUICE_GRAPH_CLI_PRIVATE_H
#define SLUICE_GRAPH_CLI_PRIVATE_H

#include <errno.h>

#include "cli/cli.h"
#include "graph/graph.h"

static inline struct graph *need_graph(struct cli_session *s)
{
	struct graph *g = cli_graph(s);
	if (!g)
		cli_fail(s, -ENODEV, "no graph is running");
	return g;
}

#define GRAPH_CLI(id, p, u, h, f)                                                                   \
	static const struct cli_command_reg id = { .path = p, .usage = u, .help = h, .fn = f };    \
	CLI_COMMAND_REGISTER(id)

#endif
