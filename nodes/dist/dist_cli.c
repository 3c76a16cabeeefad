/* The distributor's CLI: `show distributor` and `clear distributor`.
 *
 * Built as its own library (sluice_dist_cli) that the daemon links whole,
 * so that nodes/ does not depend on cli/. Reads only the counters and
 * levels the library publishes for other threads; clearing takes a
 * baseline, so neither command needs the barrier.
 */
#include <errno.h>
#include <stdio.h>

#include "cli/cli.h"
#include "base/util.h"
#include "nodes/dist/dist_graph.h"

#define STALLED_NS 100000000ull /* no completion for 100 ms while holding packets */

static cJSON *worker_json(uint32_t w, const struct dist_worker_stats *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "worker", w);
	const struct {
		const char *name;
		uint64_t v;
	} f[] = {
		{ "in_flight", st->in_flight }, { "backlog", st->backlog },       { "flows", st->flows },
		{ "ring_used", st->ring_used }, { "ring_lines", st->ring_lines }, { "handed", st->handed },
		{ "returned", st->returned },   { "matched", st->matched },       { "migrations", st->migrations },
		{ "drops", st->drops },         { "ordered", st->ordered },       { "parallel", st->parallel },
		{ "idle_ns", st->idle_ns },
	};
	for (size_t i = 0; i < ARRAY_LEN(f); i++)
		cJSON_AddNumberToObject(o, f[i].name, (double)f[i].v);
	cJSON_AddBoolToObject(o, "stalled", st->idle_ns > STALLED_NS);
	return o;
}

/* {"distributor": {"enabled", "workers": [...], "drops": {...}, "reorder_window": {...}}} */
static cJSON *dist_json(struct dist *d)
{
	cJSON *root = cJSON_CreateObject();
	cJSON *o = cJSON_AddObjectToObject(root, "distributor");
	cJSON_AddBoolToObject(o, "enabled", d != NULL);
	cJSON *workers = cJSON_AddArrayToObject(o, "workers");
	if (!d)
		return root;
	for (uint32_t w = 0; w < dist_n_workers(d); w++) {
		struct dist_worker_stats st;
		if (!dist_worker_stats(d, w, &st))
			cJSON_AddItemToArray(workers, worker_json(w, &st));
	}
	struct dist_stats ds;
	dist_stats(d, &ds);
	cJSON *drops = cJSON_AddObjectToObject(o, "drops");
	cJSON_AddNumberToObject(drops, "worker_full", (double)ds.drops[DIST_DROP_WORKER_FULL]);
	cJSON_AddNumberToObject(drops, "all_full", (double)ds.drops[DIST_DROP_ALL_FULL]);
	cJSON_AddNumberToObject(drops, "shutdown", (double)ds.drops[DIST_DROP_SHUTDOWN]);
	cJSON_AddNumberToObject(drops, "spread_full", (double)ds.drops[DIST_DROP_SPREAD_FULL]);
	cJSON_AddNumberToObject(drops, "window_full", (double)ds.drops[DIST_DROP_WINDOW_FULL]);
	cJSON_AddNumberToObject(drops, "unordered_full", (double)ds.drops[DIST_DROP_UNORDERED_FULL]);
	cJSON *win = cJSON_AddObjectToObject(o, "reorder_window");
	cJSON_AddNumberToObject(win, "used", ds.window_used);
	cJSON_AddNumberToObject(win, "size", ds.window_size);
	cJSON_AddNumberToObject(win, "released", (double)ds.released);
	cJSON_AddNumberToObject(win, "gaps", (double)ds.gaps);
	cJSON_AddNumberToObject(win, "unordered", (double)ds.unordered);
	cJSON_AddNumberToObject(o, "bad_returns", (double)ds.bad_returns);
	return root;
}

/*
 * sluice> show distributor
 * Worker  In flight  Backlog  Flows  Ring   Handed    Returned  Matched  Migrations  Drops  Ordered  Parallel  State
 * 0              24        0      9  3/64   1843200   1843176   71.2%    10233       0      20480    0         ok
 * 1             512        8    130  64/64  1204417   1203897   69.8%    9987        4121   19968    0         stalled 2.3 s
 * drops: flow's worker busy 4121, new flow with every worker busy 0, at shutdown 0, ordered/parallel with every worker busy 0, reorder window full 0
 * reorder window: 12/4096 in use, released in order 40436, gaps skipped 0, sent unordered 0
 * sluice> show distributor json
 * {"distributor": {"enabled": true, "workers": [{"worker": 0, "in_flight": 24, ..., "stalled": false}],
 *   "drops": {"worker_full": 4121, ...}, "reorder_window": {"used": 12, "size": 4096, ...}, "bad_returns": 0}}
 */
static int show_dist(struct cli_session *s, int argc, char **argv)
{
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	struct dist *d = dist_attached();
	if (json) {
		cli_json_print(s, dist_json(d));
		return 0;
	}
	if (!d) {
		cli_printf(s, "distributor: not enabled (distributor { enable } with cpu workers)");
		return 0;
	}
	static const struct cli_table_col cols[] = {
		{ "Worker", false }, { "In flight", true }, { "Backlog", true },    { "Flows", true },
		{ "Ring", true },    { "Handed", true },    { "Returned", true },   { "Matched", true },
		{ "Migrations", true }, { "Drops", true },  { "Ordered", true },    { "Parallel", true },
		{ "State", false },
	};
	struct cli_table *t = cli_table_create(cols, ARRAY_LEN(cols));
	if (!t)
		return cli_fail(s, -ENOMEM, "out of memory");
	for (uint32_t w = 0; w < dist_n_workers(d); w++) {
		struct dist_worker_stats st;
		if (dist_worker_stats(d, w, &st))
			continue;
		cli_table_cell(t, "%u", w);
		cli_table_cell(t, "%u", st.in_flight);
		cli_table_cell(t, "%u", st.backlog);
		cli_table_cell(t, "%u", st.flows);
		cli_table_cell(t, "%u/%u", st.ring_used, st.ring_lines);
		cli_table_cell(t, "%llu", (unsigned long long)st.handed);
		cli_table_cell(t, "%llu", (unsigned long long)st.returned);
		cli_table_cell(t, "%.1f%%", st.handed ? 100.0 * (double)st.matched / (double)st.handed : 0.0);
		cli_table_cell(t, "%llu", (unsigned long long)st.migrations);
		cli_table_cell(t, "%llu", (unsigned long long)st.drops);
		cli_table_cell(t, "%llu", (unsigned long long)st.ordered);
		cli_table_cell(t, "%llu", (unsigned long long)st.parallel);
		if (st.idle_ns > STALLED_NS)
			cli_table_cell(t, "stalled %.1f s", (double)st.idle_ns / 1e9);
		else
			cli_table_cell(t, "ok");
	}
	cli_table_print(s, t);
	struct dist_stats ds;
	dist_stats(d, &ds);
	cli_printf(s,
		   "drops: flow's worker busy %llu, new flow with every worker busy %llu, at shutdown %llu, "
		   "ordered/parallel with every worker busy %llu, reorder window full %llu",
		   (unsigned long long)ds.drops[DIST_DROP_WORKER_FULL], (unsigned long long)ds.drops[DIST_DROP_ALL_FULL],
		   (unsigned long long)ds.drops[DIST_DROP_SHUTDOWN], (unsigned long long)ds.drops[DIST_DROP_SPREAD_FULL],
		   (unsigned long long)ds.drops[DIST_DROP_WINDOW_FULL]);
	cli_printf(s, "reorder window: %u/%u in use, released in order %llu, gaps skipped %llu, sent unordered %llu",
		   ds.window_used, ds.window_size, (unsigned long long)ds.released, (unsigned long long)ds.gaps,
		   (unsigned long long)ds.unordered);
	if (ds.drops[DIST_DROP_UNORDERED_FULL])
		cli_printf(s, "sent unordered, no room (freed): %llu", (unsigned long long)ds.drops[DIST_DROP_UNORDERED_FULL]);
	if (ds.bad_returns)
		cli_printf(s, "completions for tags not owned: %llu (a bug)", (unsigned long long)ds.bad_returns);
	return 0;
}

/*
 * sluice> clear distributor
 */
static int clear_dist(struct cli_session *s, int argc, char **argv)
{
	int rc = cli_args_parse(s, argc, argv, NULL, 0);
	if (rc)
		return rc;
	struct dist *d = dist_attached();
	if (d)
		dist_clear_stats(d);
	return 0;
}

CLI_COMMAND(show_dist_cmd, "show distributor",
	    "show distributor [json]",
	    "Per worker: packets in flight, backlog, flows, handed (ordered, parallel), returned, matched share, "
	    "migrations, drops; the reorder window",
	    show_dist)

CLI_COMMAND(clear_dist_cmd, "clear distributor",
	    "clear distributor",
	    "Start the distributor's counters from zero",
	    clear_dist)
