/* Internals shared by the engine's commands (graph_cli.c, node_cli.c): how
 * a node's type, state and statistics are printed. */
#ifndef SLUICE_GRAPH_GRAPH_CLI_PRIVATE_H
#define SLUICE_GRAPH_GRAPH_CLI_PRIVATE_H

#include "cli/cli.h"
#include "graph/graph.h"

/* "input", "process" or "internal". */
const char *graph_cli_type_name(enum node_type t);

/* A node's state on one thread as `show runtime` prints it: "polling",
 * "disabled", "active" (internal nodes) or "process". */
const char *graph_cli_state_name(struct graph *g, uint32_t thread, uint32_t node);

/* Clocks per vector, or per call for nodes that move no vectors (process
 * nodes), as VPP prints them. */
double graph_cli_clocks_per_unit(const struct node_stats *st);

/* Vectors per call (0 before the first call). */
double graph_cli_per_call(const struct node_stats *st);

/* A node's statistics summed over threads. */
void graph_cli_node_totals(struct graph *g, uint32_t node, struct node_stats *sum);

/* {"calls", "vectors", "suspends", "clocks", "clocks_per_vector",
 * "vectors_per_call"}: one node's statistics in JSON output. */
cJSON *graph_cli_stats_json(const struct node_stats *st);

#endif
