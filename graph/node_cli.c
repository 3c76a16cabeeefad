/* The graph's shape with its counters: `show node` (one node's arcs,
 * errors and per-thread statistics) and `show graph` (every node and arc,
 * as a table, JSON or Graphviz DOT). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"
#include "graph/graph_cli_private.h"

static void node_nexts(struct cli_session *s, struct graph *g, uint32_t node, const struct node_reg *reg)
{
	cli_printf(s, "  next nodes:");
	for (uint16_t i = 0; i < graph_node_n_next(g, node); i++) {
		int target = graph_node_next(g, node, i);
		cli_printf(s, "    [%u] %-24s packets %llu", i,
			   target >= 0 ? graph_node_reg(g, (uint32_t)target)->name : reg->next_nodes[i],
			   (unsigned long long)graph_arc_packets(g, node, i));
	}
}

static void node_errors(struct cli_session *s, struct graph *g, uint32_t node, const struct node_reg *reg)
{
	if (!reg->n_errors)
		return;
	cli_printf(s, "  errors:");
	for (uint16_t i = 0; i < reg->n_errors; i++)
		cli_printf(s, "    [%u] %-24s count %llu", i, reg->error_strings[i],
			   (unsigned long long)graph_node_error_count(g, node, i));
}

/* A node's arcs: [{"name", "index", "packets"}] (name "" and index -1 for
 * an arc whose target is not in the graph). */
static cJSON *arcs_json(struct graph *g, uint32_t n)
{
	cJSON *next = cJSON_CreateArray();
	for (uint16_t i = 0; i < graph_node_n_next(g, n); i++) {
		int target = graph_node_next(g, n, i);
		cJSON *arc = cJSON_CreateObject();
		cJSON_AddStringToObject(arc, "name", target >= 0 ? graph_node_reg(g, (uint32_t)target)->name : "");
		cJSON_AddNumberToObject(arc, "index", target);
		cJSON_AddNumberToObject(arc, "packets", (double)graph_arc_packets(g, n, i));
		cJSON_AddItemToArray(next, arc);
	}
	return next;
}

/* {"nodes": [one node: "name", "index", "type", "next": [{"name", "index",
 * "packets"}], "errors": [{"index", "reason", "count"}], "threads": [the
 * show runtime fields with "thread" and "state"]}] */
static cJSON *node_json(struct graph *g, uint32_t node, const struct node_reg *reg)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *o = cJSON_CreateObject();
	cJSON_AddItemToArray(cJSON_AddArrayToObject(root, "nodes"), o);
	cJSON_AddStringToObject(o, "name", reg->name);
	cJSON_AddNumberToObject(o, "index", node);
	cJSON_AddStringToObject(o, "type", graph_cli_type_name(reg->type));
	cJSON_AddItemToObject(o, "next", arcs_json(g, node));
	cJSON *errors = cJSON_AddArrayToObject(o, "errors");
	for (uint16_t i = 0; i < reg->n_errors; i++) {
		cJSON *e = cJSON_CreateObject();
		cJSON_AddNumberToObject(e, "index", i);
		cJSON_AddStringToObject(e, "reason", reg->error_strings[i]);
		cJSON_AddNumberToObject(e, "count", (double)graph_node_error_count(g, node, i));
		cJSON_AddItemToArray(errors, e);
	}
	cJSON *threads = cJSON_AddArrayToObject(o, "threads");
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		struct node_stats st;
		if (graph_node_stats(g, t, node, &st))
			continue;
		cJSON *x = graph_cli_stats_json(&st);
		cJSON_AddNumberToObject(x, "thread", t);
		cJSON_AddStringToObject(x, "state", graph_cli_state_name(g, t, node));
		cJSON_AddItemToArray(threads, x);
	}
	return root;
}

/*
 * sluice> show node ip4-lookup
 * node ip4-lookup: internal, index 5
 *   next nodes:
 *     [0] ip4-rewrite              packets 81920
 *     [1] error-drop               packets 3
 *   errors:
 *     [0] no route                 count 3
 *   thread 0: active, calls 320, vectors 81923, suspends 0, clocks/vector 2.31e+01
 * sluice> show node ip4-lookup json
 * {"nodes": [{"name": "ip4-lookup", "index": 5, "type": "internal",
 *   "next": [{"name": "ip4-rewrite", "index": 6, "packets": 81920}, ...],
 *   "errors": [{"index": 0, "reason": "no route", "count": 3}],
 *   "threads": [{"calls": 320, "vectors": 81923, ..., "thread": 0, "state": "active"}]}]}
 */
static int show_node(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	bool json = false;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 }, { CLI_ARG_FLAG, "json", &json, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	int node = graph_node_index(g, name);
	if (node < 0)
		return cli_fail(s, -ENOENT, "no node named '%s'", name);
	const struct node_reg *reg = graph_node_reg(g, (uint32_t)node);
	if (json) {
		cli_json_print(s, node_json(g, (uint32_t)node, reg));
		return 0;
	}
	cli_printf(s, "node %s: %s, index %d", reg->name, graph_cli_type_name(reg->type), node);
	node_nexts(s, g, (uint32_t)node, reg);
	node_errors(s, g, (uint32_t)node, reg);
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		struct node_stats st;
		if (graph_node_stats(g, t, (uint32_t)node, &st))
			continue;
		cli_printf(s, "  thread %u: %s, calls %llu, vectors %llu, suspends %llu, clocks/vector %.2e", t,
			   graph_cli_state_name(g, t, (uint32_t)node), (unsigned long long)st.calls,
			   (unsigned long long)st.vectors, (unsigned long long)st.suspends, graph_cli_clocks_per_unit(&st));
	}
	return 0;
}

static void graph_text(struct cli_session *s, struct graph *g)
{
	static const struct cli_table_col cols[] = { { "Node", false },	  { "Type", false },
						     { "Vectors", true },	  { "Clocks/Vector", true },
						     { "Next (packets)", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		const struct node_reg *reg = graph_node_reg(g, n);
		struct node_stats st;
		graph_cli_node_totals(g, n, &st);
		char next[512] = "";
		size_t len = 0;
		for (uint16_t i = 0; i < graph_node_n_next(g, n) && len < sizeof(next); i++) {
			int target = graph_node_next(g, n, i);
			len += (size_t)snprintf(next + len, sizeof(next) - len, "%s%s (%llu)", i ? ", " : "",
						target >= 0 ? graph_node_reg(g, (uint32_t)target)->name : "?",
						(unsigned long long)graph_arc_packets(g, n, i));
		}
		cli_table_cell(t, "%s", reg->name);
		cli_table_cell(t, "%s", graph_cli_type_name(reg->type));
		cli_table_cell(t, "%llu", (unsigned long long)st.vectors);
		cli_table_cell(t, "%.2e", graph_cli_clocks_per_unit(&st));
		cli_table_cell(t, "%s", next);
	}
	cli_table_print(s, t);
}

static cJSON *graph_json(struct graph *g)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		const struct node_reg *reg = graph_node_reg(g, n);
		struct node_stats st;
		graph_cli_node_totals(g, n, &st);
		cJSON *o = graph_cli_stats_json(&st);
		cJSON_AddStringToObject(o, "name", reg->name);
		cJSON_AddNumberToObject(o, "index", n);
		cJSON_AddStringToObject(o, "type", graph_cli_type_name(reg->type));
		cJSON_AddItemToObject(o, "next", arcs_json(g, n));
		cJSON_AddItemToArray(nodes, o);
	}
	return root;
}

static char *graph_dot(struct graph *g)
{
	struct cli_dot *d = cli_dot_create("sluice");
	cli_dot_statement(d, "rankdir=LR");
	cli_dot_statement(d, "node [shape=box, style=rounded, fontname=\"monospace\"]");
	cli_dot_statement(d, "edge [fontname=\"monospace\", fontsize=10]");
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		const struct node_reg *reg = graph_node_reg(g, n);
		struct node_stats st;
		graph_cli_node_totals(g, n, &st);
		char label[256];
		snprintf(label, sizeof(label), "%s\nvectors %llu\nclocks/vector %.1f", reg->name,
			 (unsigned long long)st.vectors, graph_cli_clocks_per_unit(&st));
		cli_dot_node(d, reg->name, label, reg->type == NODE_TYPE_INPUT ? "shape=invhouse" : NULL);
	}
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		const struct node_reg *reg = graph_node_reg(g, n);
		for (uint16_t i = 0; i < graph_node_n_next(g, n); i++) {
			int target = graph_node_next(g, n, i);
			if (target < 0)
				continue;
			uint64_t packets = graph_arc_packets(g, n, i);
			char label[64];
			snprintf(label, sizeof(label), "%llu pkts", (unsigned long long)packets);
			cli_dot_edge(d, reg->name, graph_node_reg(g, (uint32_t)target)->name, label,
				     packets ? NULL : "style=dashed, color=gray");
		}
	}
	return cli_dot_finish(d);
}

/*
 * sluice> show graph
 * Node        Type      Vectors  Clocks/Vector  Next (packets)
 * pg-input    input      819200       2.10e+01  error-drop (819200)
 * error-drop  internal   819200       9.80e+00
 *
 * sluice> show graph dot
 * digraph "sluice" {
 *   rankdir=LR;
 *   ...
 *   "pg-input" [label="pg-input\nvectors 819200\nclocks/vector 21.0", shape=invhouse];
 *   "pg-input" -> "error-drop" [label="819200 pkts"];
 * }
 *
 * `json`: {"nodes": [{"name", "index", "type", "calls", "vectors", ...,
 * "next": [{"name", "index", "packets"}]}]}. Counters are summed over
 * threads; arcs that carried nothing are drawn dashed.
 */
static int show_graph(struct cli_session *s, int argc, char **argv)
{
	bool json = false, dot = false;
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "json", &json, 0, 0 }, { CLI_ARG_FLAG, "dot", &dot, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	if (json && dot)
		return cli_fail(s, -EINVAL, "choose one of json and dot");
	if (json) {
		cli_json_print(s, graph_json(g));
	} else if (dot) {
		char *text = graph_dot(g);
		if (!text)
			return cli_fail(s, -ENOMEM, "out of memory");
		cli_printf(s, "%s", text);
		free(text);
	} else
		graph_text(s, g);
	return 0;
}

/*
 * sluice> show vlib graphviz
 * digraph "sluice" { ... }
 *
 * VPP's name for the graph as Graphviz DOT: `show graph dot`'s text (the
 * live counters on nodes and arcs). `json`: {"graphviz": {"dot": TEXT}}.
 */
static int show_vlib_graphviz(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	struct graph *g = need_graph(s);
	int rc = g ? cli_json_arg(s, argc, argv, &json) : -ENODEV;
	if (rc)
		return rc;
	char *text = graph_dot(g);
	if (!text)
		return cli_fail(s, -ENOMEM, "out of memory");
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON_AddStringToObject(cJSON_AddObjectToObject(root, "graphviz"), "dot", text);
		cli_json_print(s, root);
	} else {
		cli_printf(s, "%s", text);
	}
	free(text);
	return 0;
}

/* ---- show vlib graph: VPP's layout of the same arcs ---- */

static int by_node_name(const void *x, const void *y, void *gp)
{
	const struct graph *g = gp;
	return strcmp(graph_node_reg(g, *(const uint32_t *)x)->name, graph_node_reg(g, *(const uint32_t *)y)->name);
}

/* The nodes with an arc to node, in index order, into prev; returns the count. */
static uint32_t node_previous(struct graph *g, uint32_t node, uint32_t *prev)
{
	uint32_t n = 0;
	for (uint32_t p = 0; p < graph_n_nodes(g); p++)
		for (uint16_t i = 0; i < graph_node_n_next(g, p); i++)
			if (graph_node_next(g, p, i) == (int)node) {
				prev[n++] = p;
				break;
			}
	return n;
}

static const char *arc_name(struct graph *g, uint32_t node, uint16_t i)
{
	int t = graph_node_next(g, node, i);
	return t >= 0 ? graph_node_reg(g, (uint32_t)t)->name : graph_node_reg(g, node)->next_nodes[i];
}

static void vlib_graph_node_text(struct cli_table *t, struct graph *g, uint32_t node, uint32_t *prev)
{
	uint32_t n_prev = node_previous(g, node, prev);
	uint32_t rows = MAX(MAX((uint32_t)graph_node_n_next(g, node), n_prev), 1u);
	for (uint32_t r = 0; r < rows; r++) {
		cli_table_cell(t, "%s", r ? "" : graph_node_reg(g, node)->name);
		if (r < graph_node_n_next(g, node))
			cli_table_cell(t, "%s [%u]", arc_name(g, node, (uint16_t)r), r);
		else
			cli_table_cell(t, "%s", "");
		cli_table_cell(t, "%s", r < n_prev ? graph_node_reg(g, prev[r])->name : "");
	}
}

static cJSON *vlib_graph_node_json(struct graph *g, uint32_t node, uint32_t *prev)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "name", graph_node_reg(g, node)->name);
	cJSON_AddNumberToObject(o, "index", node);
	cJSON *next = cJSON_AddArrayToObject(o, "next");
	for (uint16_t i = 0; i < graph_node_n_next(g, node); i++) {
		cJSON *a = cJSON_CreateObject();
		cJSON_AddNumberToObject(a, "slot", i);
		cJSON_AddStringToObject(a, "name", arc_name(g, node, i));
		cJSON_AddItemToArray(next, a);
	}
	cJSON *pr = cJSON_AddArrayToObject(o, "previous");
	uint32_t n_prev = node_previous(g, node, prev);
	for (uint32_t i = 0; i < n_prev; i++)
		cJSON_AddItemToArray(pr, cJSON_CreateString(graph_node_reg(g, prev[i])->name));
	return o;
}

/*
 * sluice> show vlib graph ethernet-input
 * Name            Next                 Previous
 * ethernet-input  error-drop [0]       af-packet-input
 *                 l2-xconnect [1]      pcap-input
 *                 ip4-input [2]
 *
 * VPP's `show vlib graph`: every node by name (or the one named), its next
 * nodes by slot and the nodes with an arc to it. `show graph` has the
 * same arcs with their packet counts.
 * `json`: {"nodes": [{"name", "index", "next": [{"slot", "name"}], "previous": [names]}]}
 */
static int show_vlib_graph(struct cli_session *s, int argc, char **argv)
{
	bool json = cli_take_flag(&argc, argv, "json");
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NODE", &name, 0, 0 } };
	struct graph *g = need_graph(s);
	if (!g)
		return -ENODEV;
	if (argc && cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)))
		return -EINVAL;
	uint32_t n = graph_n_nodes(g);
	uint32_t *order = malloc((size_t)(2 * n + 1) * sizeof(*order)), *prev = order + n;
	if (!order)
		return cli_fail(s, -ENOMEM, "out of memory");
	uint32_t k = 0;
	if (name) {
		int i = graph_node_index(g, name);
		if (i < 0) {
			free(order);
			return cli_fail(s, -ENOENT, "no node named '%s'", name);
		}
		order[k++] = (uint32_t)i;
	} else {
		for (; k < n; k++)
			order[k] = k;
		qsort_r(order, k, sizeof(*order), by_node_name, g);
	}
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *nodes = cJSON_AddArrayToObject(root, "nodes");
		for (uint32_t i = 0; i < k; i++)
			cJSON_AddItemToArray(nodes, vlib_graph_node_json(g, order[i], prev));
		cli_json_print(s, root);
	} else {
		static const struct cli_table_col cols[] = { { "Name", false }, { "Next", false }, { "Previous", false } };
		struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
		for (uint32_t i = 0; t && i < k; i++)
			vlib_graph_node_text(t, g, order[i], prev);
		cli_table_print(s, t);
	}
	free(order);
	return 0;
}

CLI_COMMAND(show_vlib_graph_cmd, "show vlib graph", "show vlib graph [NODE] [json]",
	    "Every node's next nodes and previous nodes, VPP's layout", show_vlib_graph)
CLI_COMMAND(show_node_cmd, "show node", "show node NAME [json]", "One node: arcs, errors, per-thread statistics", show_node)
CLI_COMMAND(show_graph_cmd, "show graph", "show graph [json|dot]", "The node graph with live counters", show_graph)
CLI_COMMAND(show_vlib_graphviz_cmd, "show vlib graphviz", "show vlib graphviz [json]",
	    "The node graph as Graphviz DOT, live counters on it (VPP's name; show graph dot)", show_vlib_graphviz)
