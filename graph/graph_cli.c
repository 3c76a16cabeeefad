/* The engine's CLI commands: version, threads, runtime statistics and
 * errors, with the helpers every engine command prints nodes with
 * (graph_cli_private.h). `show buffers` is in buffer_cli.c, `show node` and
 * `show graph` in node_cli.c, packet trace in trace_cli.c.
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
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "graph/graph.h"
#include "graph/graph_cli.h"
#include "graph/graph_cli_private.h"
#include "sluice_version.h"

const char *graph_cli_type_name(enum node_type t)
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

const char *graph_cli_state_name(struct graph *g, uint32_t thread, uint32_t node)
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
double graph_cli_clocks_per_unit(const struct node_stats *st)
{
	if (st->vectors)
		return (double)st->clocks / (double)st->vectors;
	return st->calls ? (double)st->clocks / (double)st->calls : 0;
}

double graph_cli_per_call(const struct node_stats *st)
{
	return st->calls ? (double)st->vectors / (double)st->calls : 0;
}

/* A node's statistics summed over threads. */
void graph_cli_node_totals(struct graph *g, uint32_t node, struct node_stats *sum)
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

/* The source's date (meson.build: SOURCE_DATE_EPOCH or the commit's time)
 * as "2026-12-03 02:14:09 UTC", "unknown" outside git without it. Never
 * the build's own clock: two builds of one source print the same. */
static const char *source_date(char *buf, size_t len)
{
	time_t t = (time_t)SLUICE_SOURCE_EPOCH;
	struct tm tm;
	if (!t || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm))
		snprintf(buf, len, "unknown");
	return buf;
}

/*
 * sluice> show version
 * sluice 0.1.0, built from de23074 (2026-12-03 02:14:09 UTC) with gcc 12.2.0
 * sluice> show version json
 * {"version": {"version": "0.1.0", "revision": "de23074", "source_date": "2026-12-03 02:14:09 UTC",
 *              "compiler": "gcc 12.2.0"}}
 */
static int show_version(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	char date[40];
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc || !json) {
		if (!rc)
			cli_printf(s, "sluice %s, built from %s (%s) with gcc %s", SLUICE_VERSION, SLUICE_REVISION,
				   source_date(date, sizeof(date)), __VERSION__);
		return rc;
	}
	cJSON *root = cJSON_CreateObject();
	cJSON *o = cJSON_AddObjectToObject(root, "version");
	cJSON_AddStringToObject(o, "version", SLUICE_VERSION);
	cJSON_AddStringToObject(o, "revision", SLUICE_REVISION);
	cJSON_AddStringToObject(o, "source_date", source_date(date, sizeof(date)));
	cJSON_AddStringToObject(o, "compiler", "gcc " __VERSION__);
	cli_json_print(s, root);
	return 0;
}

static const char *thread_state(const struct graph_thread_info *ti)
{
	if (!ti->running)
		return "stopped";
	if (ti->stalled)
		return "stalled";
	if (ti->parked)
		return "parked";
	return ti->asleep ? "asleep" : "running";
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
 * ID  Name      TID    CPU  NUMA   Loops  Idle loops  Heartbeat  Busy  Polling  Asleep  Wakeups  State
 *  0  main      41233    0     0   18933       18002      412us  0.2%     0.1%   99.6%      912  asleep
 *  1  worker 0  41240    2     0   22103       22098      2.31s  0.0%     0.0%    0.0%        0  stalled
 * wakeups of main: rx 850, handoff 0, control 12, timer 50, timeout 0
 *
 * Heartbeat: how long ago the thread last ended a dispatch loop. "asleep":
 * blocked in epoll_wait (graph/sleep.c); asleep is not stalled. "stalled":
 * the watchdog (cpu { stall-warn }) saw no loop for that long and logged
 * it; "parked": at the barrier. Busy, Polling, Asleep: shares of the
 * thread's time since `clear runtime`: in node calls that had work, in
 * polls that found nothing (and back-off), blocked. Wakeups (since start):
 * times it came out of epoll_wait; the line below the table names the
 * causes (rx: an rx fd, handoff: a producer's kick, control: the barrier or
 * stop, timer: its timerfd, process: work left for a process node by
 * another thread, timeout: the 1 s safety bound). `json`:
 * {"threads": [{"index", "name", "tid", "cpu", "numa", "loops",
 * "idle_loops", "heartbeat_age_ns", "state", "busy_percent",
 * "polling_percent", "asleep_percent", "sleeps", "wakeups": {"rx",
 * "handoff", "control", "timer", "process", "timeout"}}], "barrier": {"holds",
 * "hold_max_ns", "hold_mean_ns", "wait_max_ns"}}.
 *
 * barrier: holds 412, hold max 212us mean 31us, wait max 1.1ms (since clear runtime)
 *
 * A hold is the time every datapath thread sat parked at the barrier (the
 * datapath did nothing); the wait, from the request until all parked (a
 * sleeping thread is woken at once by the request).
 */
/* A share of the thread's accounted time, in percent (0 before any). */
static double share(uint64_t part, const struct graph_thread_time *tt)
{
	uint64_t all = tt->busy + tt->idle + tt->overhead;
	return all ? 100.0 * (double)part / (double)all : 0;
}

/* The sleep side of a thread (graph/sleep.c): shares, sleeps, wakeups by
 * cause. `show threads json` and `show runtime json`. */
static void sleep_json(cJSON *o, const struct graph_thread_info *ti, const struct graph_thread_time *tt)
{
	cJSON_AddNumberToObject(o, "busy_percent", share(tt->busy, tt));
	cJSON_AddNumberToObject(o, "polling_percent", share(tt->idle - tt->sleep, tt));
	cJSON_AddNumberToObject(o, "asleep_percent", share(tt->sleep, tt));
	cJSON_AddNumberToObject(o, "sleeps", (double)ti->sleeps);
	cJSON *w = cJSON_AddObjectToObject(o, "wakeups");
	for (uint32_t c = 0; c < GRAPH_WAKE_N; c++)
		cJSON_AddNumberToObject(w, graph_wake_cause_name((enum graph_wake_cause)c), (double)ti->wakeups[c]);
}

static void wakeups_text(struct cli_session *s, struct graph *g, uint32_t thread)
{
	struct graph_thread_info ti;
	if (graph_thread_info(g, thread, &ti))
		return;
	char line[256];
	size_t o = (size_t)snprintf(line, sizeof(line), "wakeups of %s:", ti.name);
	for (uint32_t c = 0; c < GRAPH_WAKE_N && o < sizeof(line); c++)
		o += (size_t)snprintf(line + o, sizeof(line) - o, "%s %s %llu", c ? "," : "",
				      graph_wake_cause_name((enum graph_wake_cause)c), (unsigned long long)ti.wakeups[c]);
	cli_printf(s, "%s", line);
}

static void barrier_out(struct cli_session *s, struct graph *g, cJSON *root)
{
	struct graph_barrier_stats b;
	graph_barrier_stats(g, &b);
	uint64_t mean = b.holds ? b.hold_total_ns / b.holds : 0;
	if (root) {
		cJSON *o = cJSON_AddObjectToObject(root, "barrier");
		cJSON_AddNumberToObject(o, "holds", (double)b.holds);
		cJSON_AddNumberToObject(o, "hold_max_ns", (double)b.hold_max_ns);
		cJSON_AddNumberToObject(o, "hold_mean_ns", (double)mean);
		cJSON_AddNumberToObject(o, "wait_max_ns", (double)b.wait_max_ns);
		return;
	}
	char max[32], avg[32], wait[32];
	format_age(max, sizeof(max), b.hold_max_ns);
	format_age(avg, sizeof(avg), mean);
	format_age(wait, sizeof(wait), b.wait_max_ns);
	cli_printf(s, "barrier: holds %llu, hold max %s mean %s, wait max %s (since clear runtime)",
		   (unsigned long long)b.holds, max, avg, wait);
}

static int show_threads(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	struct graph *g = need_graph(s);
	int rc = g ? cli_json_arg(s, argc, argv, &json) : -ENODEV;
	if (rc)
		return rc;
	static const struct cli_table_col cols[] = {
		{ "ID", true },	       { "Name", false }, { "TID", true },     { "CPU", true },
		{ "NUMA", true },      { "Loops", true }, { "Idle loops", true }, { "Heartbeat", true },
		{ "Busy", true },      { "Polling", true }, { "Asleep", true }, { "Wakeups", true },
		{ "State", false },
	};
	struct cli_table *t = json ? NULL : cli_table_create(cols, ARRAY_LEN(cols));
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "threads") : NULL;
	for (uint32_t i = 0; i < graph_n_threads(g); i++) {
		struct graph_thread_info ti;
		struct graph_thread_time tt = { 0 };
		if (graph_thread_info(g, i, &ti))
			continue;
		(void)graph_thread_time(g, i, &tt);
		uint64_t wakeups = 0;
		for (uint32_t c = 0; c < GRAPH_WAKE_N; c++)
			wakeups += ti.wakeups[c];
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
			sleep_json(o, &ti, &tt);
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
		cli_table_cell(t, "%.1f%%", share(tt.busy, &tt));
		cli_table_cell(t, "%.1f%%", share(tt.idle - tt.sleep, &tt));
		cli_table_cell(t, "%.1f%%", share(tt.sleep, &tt));
		cli_table_cell(t, "%llu", (unsigned long long)wakeups);
		cli_table_cell(t, "%s", thread_state(&ti));
	}
	if (!json) {
		cli_table_print(s, t);
		for (uint32_t i = 0; i < graph_n_threads(g); i++)
			wakeups_text(s, g, i);
	}
	barrier_out(s, g, root);
	if (json)
		cli_json_print(s, root);
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

static void time_text(struct cli_session *s, const struct graph_thread_time *tt)
{
	cli_printf(s, "Busy %.3e clocks (%.1f%%), idle %.3e (%.1f%%, asleep %.1f%%), overhead %.3e (%.1f%%)",
		   (double)tt->busy, share(tt->busy, tt), (double)tt->idle, share(tt->idle, tt), share(tt->sleep, tt),
		   (double)tt->overhead, share(tt->overhead, tt));
}

static void time_json(cJSON *o, const struct graph_thread_time *tt)
{
	const struct {
		const char *name;
		uint64_t v;
	} f[] = { { "busy", tt->busy }, { "idle", tt->idle }, { "sleep", tt->sleep }, { "overhead", tt->overhead } };
	for (size_t i = 0; i < ARRAY_LEN(f); i++) {
		char key[32];
		snprintf(key, sizeof(key), "%s_clocks", f[i].name);
		cJSON_AddNumberToObject(o, key, (double)f[i].v);
		snprintf(key, sizeof(key), "%s_percent", f[i].name);
		cJSON_AddNumberToObject(o, key, share(f[i].v, tt));
	}
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
	struct graph_thread_time tt;
	if (graph_thread_time(g, thread, &tt) == 0)
		time_text(s, &tt);
	wakeups_text(s, g, thread);
	static const struct cli_table_col cols[] = { { "Name", false },	 { "State", false }, { "Calls", true },
						     { "Vectors", true }, { "Suspends", true }, { "Clocks", true },
						     { "Vectors/Call", true } };
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		struct node_stats st;
		if (graph_node_stats(g, thread, n, &st) || (!st.calls && !verbose))
			continue;
		cli_table_cell(t, "%s", graph_node_reg(g, n)->name);
		cli_table_cell(t, "%s", graph_cli_state_name(g, thread, n));
		cli_table_cell(t, "%llu", (unsigned long long)st.calls);
		cli_table_cell(t, "%llu", (unsigned long long)st.vectors);
		cli_table_cell(t, "%llu", (unsigned long long)st.suspends);
		cli_table_cell(t, "%.2e", graph_cli_clocks_per_unit(&st));
		cli_table_cell(t, "%.2f", graph_cli_per_call(&st));
	}
	cli_table_print(s, t);
}

cJSON *graph_cli_stats_json(const struct node_stats *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "calls", (double)st->calls);
	cJSON_AddNumberToObject(o, "vectors", (double)st->vectors);
	cJSON_AddNumberToObject(o, "suspends", (double)st->suspends);
	cJSON_AddNumberToObject(o, "clocks", (double)st->clocks);
	cJSON_AddNumberToObject(o, "clocks_per_vector", graph_cli_clocks_per_unit(st));
	cJSON_AddNumberToObject(o, "vectors_per_call", graph_cli_per_call(st));
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
	struct graph_thread_time tt;
	if (graph_thread_time(g, thread, &tt) == 0) {
		time_json(o, &tt);
		sleep_json(o, &ti, &tt);
	}
	cJSON *nodes = cJSON_AddArrayToObject(o, "nodes");
	for (uint32_t n = 0; n < graph_n_nodes(g); n++) {
		struct node_stats st;
		if (graph_node_stats(g, thread, n, &st) || (!st.calls && !verbose))
			continue;
		cJSON *node = graph_cli_stats_json(&st);
		cJSON_AddStringToObject(node, "name", graph_node_reg(g, n)->name);
		cJSON_AddStringToObject(node, "state", graph_cli_state_name(g, thread, n));
		cJSON_AddItemToArray(nodes, node);
	}
	return o;
}

/*
 * sluice> show runtime
 * Thread 0 main (unpinned)
 * Time 4.2, average vectors/node 32.00, input rate 1.95e+05 pkts/s
 * Busy 1.806e+08 clocks (3.0%), idle 5.776e+09 (95.0%, asleep 94.6%), overhead 1.211e+08 (2.0%)
 * Name        State    Calls  Vectors  Suspends    Clocks  Vectors/Call
 * pg-input    polling  25600   819200         0  2.10e+01         32.00
 * error-drop  active   25600   819200         0  9.80e+00         32.00
 *
 * Busy, idle, overhead: where the thread's time went since `clear runtime`
 * (graph_thread_time; docs/architecture.md, "Where the time goes"); asleep
 * is part of idle. Clocks is per vector, and a vector is a packet: clocks
 * per packet (for an input node, its empty polls included). `verbose`
 * also lists nodes that never ran; `json` prints {"threads": [{"index",
 * "name", "cpu", "time", "average_vectors_per_node", "input_rate",
 * "busy_clocks", "busy_percent", "idle_clocks", "idle_percent",
 * "sleep_clocks", "sleep_percent", "overhead_clocks", "overhead_percent",
 * "nodes": [{"name", "state", "calls", "vectors", ...}]}]}.
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

/* `clear runtime` and `clear errors`: zero with the datapath parked, then
 * say what was cleared. */
static int clear_counters(struct cli_session *s, int argc, char **argv, void (*clear)(struct graph *g),
			  const char *done)
{
	struct graph *g = need_graph(s);
	int rc = g ? cli_args_parse(s, argc, argv, NULL, 0) : -ENODEV;
	if (rc)
		return rc;
	graph_barrier_sync(g);
	clear(g);
	graph_barrier_release(g);
	cli_printf(s, "%s", done);
	return 0;
}

/*
 * sluice> clear runtime
 * runtime statistics cleared
 */
static int clear_runtime(struct cli_session *s, int argc, char **argv)
{
	return clear_counters(s, argc, argv, graph_clear_runtime, "runtime statistics cleared");
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
	struct graph *g = need_graph(s);
	int rc = g ? cli_json_arg(s, argc, argv, &json) : -ENODEV;
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
	return clear_counters(s, argc, argv, graph_clear_errors, "error counters cleared");
}


/* ---- registration ---- */

CLI_COMMAND(show_version_cmd, "show version", "show version [json]", "Version and build of this sluice", show_version)
CLI_COMMAND(show_threads_cmd, "show threads", "show threads [json]",
	    "Datapath threads: cores, loop counts, heartbeat age, stalls", show_threads)
CLI_COMMAND(show_runtime_cmd, "show runtime", "show runtime [verbose] [json]",
	    "Per thread and node: calls, vectors, suspends, clocks; per thread: busy, idle, overhead", show_runtime)
CLI_COMMAND(clear_runtime_cmd, "clear runtime", "clear runtime", "Zero the runtime statistics", clear_runtime)
CLI_COMMAND(show_errors_cmd, "show errors", "show errors [json]", "Error counters per node", show_errors)
CLI_COMMAND(clear_errors_cmd, "clear errors", "clear errors", "Zero every error counter", clear_errors)
/* VPP's other names for the error counters (docs/vpp-cli.md). */
CLI_ALIAS(show_node_counters_alias, "show node counters", "show node counters [json]", "show errors", NULL)
CLI_ALIAS(clear_node_counters_alias, "clear node counters", "clear node counters", "clear errors", NULL)
