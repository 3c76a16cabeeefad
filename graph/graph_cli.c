/* The engine's CLI commands: version, threads, runtime statistics, errors,
 * buffers, nodes and the graph (text, JSON, DOT); packet trace is in
 * trace_cli.c.
 *
 * Reads take no lock (statistics are tear-free); commands that change what
 * the datapath sees hold the barrier. Output that is built from state the
 * datapath writes (trace records) is built under the barrier into memory and
 * printed after release, so a slow client never holds the workers.
 *
 * Built as its own library (sluice_graph_cli) that the daemon links whole,
 * so that graph/ does not depend on cli/.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"
#include "sluice_version.h"

static const char *type_name(enum node_type t)
{
	switch (t) {
	case NODE_TYPE_INPUT:
		return "input";
	case NODE_TYPE_PROCESS:
		return "process";
	case NODE_TYPE_INTERNAL:
		break;
	}
	return "internal";
}

static const char *state_name(struct graph *g, uint32_t thread, uint32_t node)
{
	const struct node_runtime *rt = graph_node_runtime(g, thread, node);
	const struct node_reg *reg = graph_node_reg(g, node);
	if (reg->type == NODE_TYPE_PROCESS)
		return "process";
	if (reg->type == NODE_TYPE_INTERNAL)
		return "active";
	return rt && rt->state == NODE_STATE_DISABLED ? "disabled" : "polling";
}

/* Clocks per vector, or per call for nodes that move no vectors (process
 * nodes), as VPP prints them. */
static double clocks_per_unit(const struct node_stats *st)
{
	if (st->vectors)
		return (double)st->clocks / (double)st->vectors;
	return st->calls ? (double)st->clocks / (double)st->calls : 0;
}

static double per_call(const struct node_stats *st)
{
	return st->calls ? (double)st->vectors / (double)st->calls : 0;
}

/* A node's statistics summed over threads. */
static void node_totals(struct graph *g, uint32_t node, struct node_stats *sum)
{
	memset(sum, 0, sizeof(*sum));
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		struct node_stats st;
		if (graph_node_stats(g, t, node, &st))
			continue;
		sum->calls += st.calls;
		sum->vectors += st.vectors;
		sum->suspends += st.suspends;
		sum->clocks += st.clocks;
	}
}

/*
 * sluice> show version
 * sluice 0.1.0, built Jun  2 2025 10:12:01 with gcc 12.2.0
 */
static int show_version(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (!rc)
		cli_printf(s, "sluice %s, built %s %s with gcc %s", SLUICE_VERSION, __DATE__, __TIME__, __VERSION__);
	return rc;
}

static const char *thread_state(const struct graph_thread_info *ti)
{
	if (!ti->running)
		return "stopped";
	if (ti->stalled)
		return "stalled";
	return ti->parked ? "parked" : "running";
}

/* A heartbeat age for people: us below 1 ms, ms below 1 s, then s. */
static void format_age(char *buf, size_t len, uint64_t ns)
{
	if (ns < 1000000)
		snprintf(buf, len, "%lluus", (unsigned long long)(ns / 1000));
	else if (ns < 1000000000)
		snprintf(buf, len, "%.1fms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.2fs", (double)ns / 1e9);
}

/*
 * sluice> show threads
 * ID  Name      TID    CPU  NUMA    Loops  Idle loops  Heartbeat  State
 *  0  main      41233    0     0  1893321     1890002      412us  running
 *  1  worker 0  41240    2     0  2210003     2209876      2.31s  stalled
 *
 * Heartbeat: how long ago the thread last ended a dispatch loop (an idle
 * thread ends one at least every idle-max). "stalled": the watchdog
 * (cpu { stall-warn }) saw no loop for that long and logged it; "parked":
 * at the barrier. `json`: {"threads": [{"index", "name", "tid", "cpu",
 * "numa", "loops", "idle_loops", "heartbeat_age_ns", "state"}]}.
 */
static int show_threads(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "json", &json, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = { { "ID", true },	{ "Name", false },	{ "TID", true },
						     { "CPU", true },	{ "NUMA", true },	{ "Loops", true },
						     { "Idle loops", true }, { "Heartbeat", true }, { "State", false } };
	struct cli_table *t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols));
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "threads") : NULL;
	for (uint32_t i = 0; i < graph_n_threads(g); i++) {
		struct graph_thread_info ti;
		if (graph_thread_info(g, i, &ti))
			continue;
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "index", i);
			cJSON_AddStringToObject(o, "name", ti.name);
			cJSON_AddNumberToObject(o, "tid", ti.tid);
			cJSON_AddNumberToObject(o, "cpu", ti.cpu);
			cJSON_AddNumberToObject(o, "numa", ti.numa_node);
			cJSON_AddNumberToObject(o, "loops", (double)ti.loops);
			cJSON_AddNumberToObject(o, "idle_loops", (double)ti.idle_loops);
			cJSON_AddNumberToObject(o, "heartbeat_age_ns", (double)ti.heartbeat_age_ns);
			cJSON_AddStringToObject(o, "state", thread_state(&ti));
			cJSON_AddItemToArray(list, o);
			continue;
		}
		char age[32];
		format_age(age, sizeof(age), ti.heartbeat_age_ns);
		cli_table_cell(t, "%u", i);
		cli_table_cell(t, "%s", ti.name);
		cli_table_cell(t, "%d", ti.tid);
		cli_table_cell(t, ti.cpu < 0 ? "-" : "%d", ti.cpu);
		cli_table_cell(t, "%d", ti.numa_node);
		cli_table_cell(t, "%llu", (unsigned long long)ti.loops);
		cli_table_cell(t, "%llu", (unsigned long long)ti.idle_loops);
		cli_table_cell(t, "%s", age);
		cli_table_cell(t, "%s", thread_state(&ti));
	}
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, t);
	return 0;
}

/* ---- show runtime ---- */

/* One thread's totals: what the heading line of `show runtime` says. */
struct thread_summary {
	double seconds;
	double avg_vectors_per_node; /* internal nodes: vectors / calls */
	double input_rate;           /* packets produced by input nodes per second */
};

static void summarise(struct graph *g, uint32_t thread, struct thread_summary *sum)
{
	uint64_t calls = 0, vectors = 0, input = 0;
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		struct node_stats st;
		if (graph_node_stats(g, thread, n, &st))
			continue;
		enum node_type type = graph_node_reg(g, n)->type;
		if (type == NODE_TYPE_INPUT)
			input += st.vectors;
		if (type == NODE_TYPE_INTERNAL) {
			calls += st.calls;
			vectors += st.vectors;
		}
	}
	sum->seconds = graph_runtime_seconds(g);
	sum->avg_vectors_per_node = calls ? (double)vectors / (double)calls : 0;
	sum->input_rate = sum->seconds > 0 ? (double)input / sum->seconds : 0;
}

static void runtime_text(struct cli_session *s, struct graph *g, uint32_t thread, bool verbose)
{
	struct graph_thread_info ti;
	struct thread_summary sum;
	graph_thread_info(g, thread, &ti);
	summarise(g, thread, &sum);
	if (ti.cpu < 0)
		cli_printf(s, "Thread %u %s (unpinned)", thread, ti.name);
	else
		cli_printf(s, "Thread %u %s (cpu %d)", thread, ti.name, ti.cpu);
	cli_printf(s, "Time %.1f, average vectors/node %.2f, input rate %.2e pkts/s", sum.seconds,
		   sum.avg_vectors_per_node, sum.input_rate);
	static const struct cli_table_col cols[] = { { "Name", false },	 { "State", false }, { "Calls", true },
						     { "Vectors", true }, { "Suspends", true }, { "Clocks", true },
						     { "Vectors/Call", true } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		struct node_stats st;
		if (graph_node_stats(g, thread, n, &st) || (!st.calls && !verbose))
			continue;
		cli_table_cell(t, "%s", graph_node_reg(g, n)->name);
		cli_table_cell(t, "%s", state_name(g, thread, n));
		cli_table_cell(t, "%llu", (unsigned long long)st.calls);
		cli_table_cell(t, "%llu", (unsigned long long)st.vectors);
		cli_table_cell(t, "%llu", (unsigned long long)st.suspends);
		cli_table_cell(t, "%.2e", clocks_per_unit(&st));
		cli_table_cell(t, "%.2f", per_call(&st));
	}
	cli_table_print(s, t);
}

static cJSON *stats_json(const struct node_stats *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "calls", (double)st->calls);
	cJSON_AddNumberToObject(o, "vectors", (double)st->vectors);
	cJSON_AddNumberToObject(o, "suspends", (double)st->suspends);
	cJSON_AddNumberToObject(o, "clocks", (double)st->clocks);
	cJSON_AddNumberToObject(o, "clocks_per_vector", clocks_per_unit(st));
	cJSON_AddNumberToObject(o, "vectors_per_call", per_call(st));
	return o;
}

static cJSON *runtime_json(struct graph *g, uint32_t thread, bool verbose)
{
	struct graph_thread_info ti;
	struct thread_summary sum;
	graph_thread_info(g, thread, &ti);
	summarise(g, thread, &sum);
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "index", thread);
	cJSON_AddStringToObject(o, "name", ti.name);
	cJSON_AddNumberToObject(o, "cpu", ti.cpu);
	cJSON_AddNumberToObject(o, "time", sum.seconds);
	cJSON_AddNumberToObject(o, "average_vectors_per_node", sum.avg_vectors_per_node);
	cJSON_AddNumberToObject(o, "input_rate", sum.input_rate);
	cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		struct node_stats st;
		if (graph_node_stats(g, thread, n, &st) || (!st.calls && !verbose))
			continue;
		cJSON *node = stats_json(&st);
		cJSON_AddStringToObject(node, "name", graph_node_reg(g, n)->name);
		cJSON_AddStringToObject(node, "state", state_name(g, thread, n));
		cJSON_AddItemToArray(nodes, node);
	}
	return o;
}

/*
 * sluice> show runtime
 * Thread 0 main (unpinned)
 * Time 4.2, average vectors/node 32.00, input rate 1.95e+05 pkts/s
 * Name        State    Calls  Vectors  Suspends    Clocks  Vectors/Call
 * pg-input    polling  25600   819200         0  2.10e+01         32.00
 * error-drop  active   25600   819200         0  9.80e+00         32.00
 *
 * `verbose` also lists nodes that never ran; `json` prints
 * {"threads": [{"index", "name", "cpu", "time", "average_vectors_per_node",
 * "input_rate", "nodes": [{"name", "state", "calls", "vectors", ...}]}]}.
 */
static int show_runtime(struct cli_session *s, int argc, char **argv)
{
	bool verbose = false, json = false;
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "verbose", &verbose, 0, 0 }, { CLI_ARG_FLAG, "json", &json, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	if (json) {
		cJSON *root = cJSON_CreateObject();
		cJSON *threads = cJSON_AddArrayToObject(root, "threads");
		for (uint32_t t = 0; t < graph_n_threads(g); t++)
			cJSON_AddItemToArray(threads, runtime_json(g, t, verbose));
		cli_json_print(s, root);
		return 0;
	}
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		if (t)
			cli_printf(s, "%s", "");
		runtime_text(s, g, t, verbose);
	}
	return 0;
}

/*
 * sluice> clear runtime
 * runtime statistics cleared
 */
static int clear_runtime(struct cli_session *s, int argc, char **argv)
{
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, NULL, 0) : -ENODEV;
	if (rc)
		return rc;
	graph_barrier_sync(g);
	graph_clear_runtime(g);
	graph_barrier_release(g);
	cli_printf(s, "runtime statistics cleared");
	return 0;
}

/* ---- errors ---- */

/*
 * sluice> show errors
 * Count  Node        Reason
 *   512  ip4-input   bad checksum
 *     3  ip4-lookup  no route
 *
 * Text lists non-zero counters; `json` lists every counter:
 * {"errors": [{"index", "node", "reason", "count"}]}.
 */
static int show_errors(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "json", &json, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = { { "Count", true }, { "Node", false }, { "Reason", false } };
	struct cli_table *t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols));
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "errors") : NULL;
	for (uint32_t e = 0; e < graph_n_errors(g); e++) {
		uint32_t node;
		const char *reason;
		if (graph_error_info(g, e, &node, &reason))
			continue;
		uint64_t count = graph_error_count(g, e);
		const char *name = graph_node_reg(g, node)->name;
		if (json) {
			cJSON *o = cJSON_CreateObject();
			cJSON_AddNumberToObject(o, "index", e);
			cJSON_AddStringToObject(o, "node", name);
			cJSON_AddStringToObject(o, "reason", reason);
			cJSON_AddNumberToObject(o, "count", (double)count);
			cJSON_AddItemToArray(list, o);
		} else if (count) {
			cli_table_cell(t, "%llu", (unsigned long long)count);
			cli_table_cell(t, "%s", name);
			cli_table_cell(t, "%s", reason);
		}
	}
	if (json)
		cli_json_print(s, root);
	else
		cli_table_print(s, t);
	return 0;
}

/*
 * sluice> clear errors
 * error counters cleared
 */
static int clear_errors(struct cli_session *s, int argc, char **argv)
{
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, NULL, 0) : -ENODEV;
	if (rc)
		return rc;
	graph_barrier_sync(g);
	graph_clear_errors(g);
	graph_barrier_release(g);
	cli_printf(s, "error counters cleared");
	return 0;
}

/* ---- show buffers ---- */

static void pools_text(struct cli_session *s, const struct buffer_pool_stats *st, uint32_t n)
{
	static const struct cli_table_col cols[] = { { "Pool", true },   { "NUMA", true },   { "Total", true },
						     { "Free", true },   { "Cached", true }, { "In use", true },
						     { "Pages", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t p = 0; p < n; p++) {
		cli_table_cell(t, "%u", p);
		cli_table_cell(t, "%u", st[p].numa_node);
		cli_table_cell(t, "%u", st[p].n_total);
		cli_table_cell(t, "%u", st[p].n_free_pool);
		cli_table_cell(t, "%u", st[p].n_cached);
		cli_table_cell(t, "%u", st[p].n_in_use);
		cli_table_cell(t, "%s", st[p].hugepages ? "2M" : "4K");
	}
	cli_table_print(s, t);
	for (uint32_t p = 0; p < n; p++) {
		char line[1024];
		int len = snprintf(line, sizeof(line), "pool %u thread caches:", p);
		for (uint32_t c = 0; c < st[p].n_caches && c < BUFFER_MAX_CACHES && len < (int)sizeof(line); c++)
			len += snprintf(line + len, sizeof(line) - (size_t)len, " %u:%u", c, st[p].cached[c]);
		cli_printf(s, "%s", line);
	}
}

/* Places holding nothing are left out; a holder holding nothing anywhere
 * prints once, as "-" and 0, so that the list shows who was asked. */
static void holders_text(struct cli_session *s, const struct buffer_attribution *a)
{
	static const struct cli_table_col cols[] = { { "Holder", false }, { "Where", false }, { "Buffers", true } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t i = 0, j; i < a->n_holdings; i = j) {
		uint64_t total = 0;
		for (j = i; j < a->n_holdings && !strcmp(a->holdings[j].holder, a->holdings[i].holder); j++)
			total += a->holdings[j].n;
		for (uint32_t k = i; k < j; k++) {
			const struct buffer_holding *h = &a->holdings[k];
			if (total && !h->n)
				continue;
			cli_table_cell(t, "%s", h->holder);
			cli_table_cell(t, "%s", total && h->where[0] ? h->where : "-");
			cli_table_cell(t, "%llu", (unsigned long long)h->n);
			if (!total)
				break;
		}
	}
	cli_table_cell(t, "%s", "unattributed");
	cli_table_cell(t, "%s", "-");
	cli_table_cell(t, "%lld", (long long)a->n_unattributed);
	cli_table_print(s, t);
}

/* The first thread the watchdog calls stalled, or -1. The barrier would
 * wait for it for as long as it stalls, and `show buffers` is what one
 * runs to look at a stall. */
static int stalled_thread(struct graph *g)
{
	for (uint32_t i = 0; i < graph_n_threads(g); i++) {
		struct graph_thread_info ti;
		if (graph_thread_info(g, i, &ti) == 0 && ti.stalled)
			return (int)i;
	}
	return -1;
}

static cJSON *buffers_json(const struct buffer_pool_stats *st, uint32_t n, const struct buffer_attribution *a,
			   bool exact)
{
	cJSON *root = cJSON_CreateObject();
	cJSON_AddBoolToObject(root, "exact", exact);
	cJSON *pools = cJSON_AddArrayToObject(root, "pools");
	for (uint32_t p = 0; p < n; p++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddNumberToObject(o, "index", p);
		cJSON_AddNumberToObject(o, "numa", st[p].numa_node);
		cJSON_AddNumberToObject(o, "total", st[p].n_total);
		cJSON_AddNumberToObject(o, "free", st[p].n_free_pool);
		cJSON_AddNumberToObject(o, "cached", st[p].n_cached);
		cJSON_AddNumberToObject(o, "in_use", st[p].n_in_use);
		cJSON_AddBoolToObject(o, "hugepages", st[p].hugepages);
		cJSON *caches = cJSON_AddArrayToObject(o, "thread_caches");
		for (uint32_t c = 0; c < st[p].n_caches && c < BUFFER_MAX_CACHES; c++)
			cJSON_AddItemToArray(caches, cJSON_CreateNumber(st[p].cached[c]));
		cJSON_AddItemToArray(pools, o);
	}
	cJSON *holders = cJSON_AddArrayToObject(root, "holders");
	for (uint32_t i = 0; i < a->n_holdings; i++) {
		cJSON *o = cJSON_CreateObject();
		cJSON_AddStringToObject(o, "holder", a->holdings[i].holder);
		cJSON_AddStringToObject(o, "where", a->holdings[i].where);
		cJSON_AddNumberToObject(o, "buffers", (double)a->holdings[i].n);
		cJSON_AddItemToArray(holders, o);
	}
	cJSON_AddNumberToObject(root, "in_use", (double)a->n_in_use);
	cJSON_AddNumberToObject(root, "attributed", (double)a->n_attributed);
	cJSON_AddNumberToObject(root, "unattributed", (double)a->n_unattributed);
	return root;
}

/*
 * sluice> show buffers
 * Pool  NUMA  Total   Free  Cached  In use  Pages
 *    0     0  16384  15104     768     512  4K
 * pool 0 thread caches: 0:256 1:512
 * Holder        Where          Buffers
 * ip4-neighbor  -                    0
 * device        xe0 rx 0           512
 * frames        -                    0
 * distributor   -                    0
 * timers        -                    0
 * unattributed  -                    0
 *
 * Every buffer in use is set against the holder that has it (see
 * buffer_holder_register); "unattributed" is what no holder claims: a leak
 * (or, negative, a holder counting twice). The pools and holders are read
 * with the datapath parked, so the figures are one moment's and add up
 * (unless a thread is stalled: then they are read as they are, and a line
 * says so, rather than wait at the barrier for that thread).
 * Packet trace and pcap capture copy bytes and hold no buffer. `json`:
 * {"exact", "pools": [{"index", "numa", "total", "free", "cached", "in_use",
 * "hugepages", "thread_caches": [n...]}], "holders": [{"holder", "where",
 * "buffers"}], "in_use", "attributed", "unattributed"}.
 */
static int show_buffers(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	const struct cli_arg args[] = { { CLI_ARG_FLAG, "json", &json, 0, 0 } };
	int rc = cli_args_parse(s, argc, argv, args, ARRAY_LEN(args));
	if (rc)
		return rc;
	struct graph *g = cli_graph(s);
	struct buffer_pool_stats st[BUFFER_MAX_POOLS];
	struct buffer_attribution a;
	uint32_t n = 0;
	int stalled = g ? stalled_thread(g) : -1;
	bool parked = g && stalled < 0;
	if (parked)
		graph_barrier_sync(g);
	while (n < BUFFER_MAX_POOLS && buffer_pool_stats(n, &st[n]) == 0)
		n++;
	rc = buffer_attribute(&a);
	if (parked)
		graph_barrier_release(g);
	if (rc)
		return cli_fail(s, rc, "out of memory");
	if (stalled >= 0 && !json)
		cli_printf(s, "thread %d is stalled: read without the barrier, the figures are approximate", stalled);
	if (json)
		cli_json_print(s, buffers_json(st, n, &a, stalled < 0));
	else if (n) {
		pools_text(s, st, n);
		holders_text(s, &a);
	} else
		cli_printf(s, "no buffer pools");
	buffer_attribution_free(&a);
	return 0;
}

/* ---- show node ---- */

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

/*
 * sluice> show node ip4-lookup
 * node ip4-lookup: internal, index 5
 *   next nodes:
 *     [0] ip4-rewrite              packets 81920
 *     [1] error-drop               packets 3
 *   errors:
 *     [0] no route                 count 3
 *   thread 0: active, calls 320, vectors 81923, suspends 0, clocks/vector 2.31e+01
 */
static int show_node(struct cli_session *s, int argc, char **argv)
{
	const char *name = NULL;
	const struct cli_arg args[] = { { CLI_ARG_WORD, "NAME", &name, 0, 0 } };
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, args, ARRAY_LEN(args)) : -ENODEV;
	if (rc)
		return rc;
	int node = graph_node_index(g, name);
	if (node < 0)
		return cli_fail(s, -ENOENT, "no node named '%s'", name);
	const struct node_reg *reg = graph_node_reg(g, (uint32_t)node);
	cli_printf(s, "node %s: %s, index %d", reg->name, type_name(reg->type), node);
	node_nexts(s, g, (uint32_t)node, reg);
	node_errors(s, g, (uint32_t)node, reg);
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		struct node_stats st;
		if (graph_node_stats(g, t, (uint32_t)node, &st))
			continue;
		cli_printf(s, "  thread %u: %s, calls %llu, vectors %llu, suspends %llu, clocks/vector %.2e", t,
			   state_name(g, t, (uint32_t)node), (unsigned long long)st.calls,
			   (unsigned long long)st.vectors, (unsigned long long)st.suspends, clocks_per_unit(&st));
	}
	return 0;
}

/* ---- show graph ---- */

static void graph_text(struct cli_session *s, struct graph *g)
{
	static const struct cli_table_col cols[] = { { "Node", false },	  { "Type", false },
						     { "Vectors", true },	  { "Clocks/Vector", true },
						     { "Next (packets)", false } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		const struct node_reg *reg = graph_node_reg(g, n);
		struct node_stats st;
		node_totals(g, n, &st);
		char next[512] = "";
		size_t len = 0;
		for (uint16_t i = 0; i < graph_node_n_next(g, n) && len < sizeof(next); i++) {
			int target = graph_node_next(g, n, i);
			len += (size_t)snprintf(next + len, sizeof(next) - len, "%s%s (%llu)", i ? ", " : "",
						target >= 0 ? graph_node_reg(g, (uint32_t)target)->name : "?",
						(unsigned long long)graph_arc_packets(g, n, i));
		}
		cli_table_cell(t, "%s", reg->name);
		cli_table_cell(t, "%s", type_name(reg->type));
		cli_table_cell(t, "%llu", (unsigned long long)st.vectors);
		cli_table_cell(t, "%.2e", clocks_per_unit(&st));
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
		node_totals(g, n, &st);
		cJSON *o = stats_json(&st);
		cJSON_AddStringToObject(o, "name", reg->name);
		cJSON_AddNumberToObject(o, "index", n);
		cJSON_AddStringToObject(o, "type", type_name(reg->type));
		cJSON *next = cJSON_AddArrayToObject(o, "next");
		for (uint16_t i = 0; i < graph_node_n_next(g, n); i++) {
			int target = graph_node_next(g, n, i);
			cJSON *arc = cJSON_CreateObject();
			cJSON_AddStringToObject(arc, "name", target >= 0 ? graph_node_reg(g, (uint32_t)target)->name : "");
			cJSON_AddNumberToObject(arc, "index", target);
			cJSON_AddNumberToObject(arc, "packets", (double)graph_arc_packets(g, n, i));
			cJSON_AddItemToArray(next, arc);
		}
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
		node_totals(g, n, &st);
		char label[256];
		snprintf(label, sizeof(label), "%s\nvectors %llu\nclocks/vector %.1f", reg->name,
			 (unsigned long long)st.vectors, clocks_per_unit(&st));
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

/* ---- registration ---- */


CLI_COMMAND(show_version_cmd, "show version", "show version", "Version and build of this sluice", show_version)
CLI_COMMAND(show_threads_cmd, "show threads", "show threads [json]",
	    "Datapath threads: cores, loop counts, heartbeat age, stalls", show_threads)
CLI_COMMAND(show_runtime_cmd, "show runtime", "show runtime [verbose] [json]",
	    "Per thread and node: calls, vectors, suspends, clocks", show_runtime)
CLI_COMMAND(clear_runtime_cmd, "clear runtime", "clear runtime", "Zero the runtime statistics", clear_runtime)
CLI_COMMAND(show_errors_cmd, "show errors", "show errors [json]", "Error counters per node", show_errors)
CLI_COMMAND(clear_errors_cmd, "clear errors", "clear errors", "Zero every error counter", clear_errors)
CLI_COMMAND(show_buffers_cmd, "show buffers", "show buffers [json]",
	    "Buffer pools, and who holds each buffer in use (unattributed: a leak)", show_buffers)
CLI_COMMAND(show_node_cmd, "show node", "show node NAME", "One node: arcs, errors, per-thread statistics", show_node)
CLI_COMMAND(show_graph_cmd, "show graph", "show graph [json|dot]", "The node graph with live counters", show_graph)
