/* The timer service's CLI: `show timers`, one block per datapath thread.
 * Built as its own library (sluice_sched_cli) that the daemon links whole,
 * so sched/ does not depend on cli/.
 *
 * sluice> show timers
 * Thread 0: tick 10000ns, 6 levels, 9.2 MB
 *   armed 3 (level 0: 1, level 1: 2, level 2: 0, level 3: 0, level 4: 0, level 5: 0, far 0, precise 0, due 0), periodic 1
 *   expiries 1204, arms 1207, cancels 0, rearms 0, producer requests 0 (refused 0), deferred 0
 *   late  <tick/4 1200  <tick/2 3  <1 tick 1  <2 ticks 0  <4 ticks 0  <8 ticks 0  <16 ticks 0  more 0
 */
#include <errno.h>
#include <stdio.h>

#include "base/util.h"
#include "cli/cli.h"
#include "graph/graph.h"
#include "sched/timer.h"

static const char *const late_names[TIMER_LATE_BUCKETS] = {
	"<tick/4", "<tick/2", "<1 tick", "<2 ticks", "<4 ticks", "<8 ticks", "<16 ticks", "more",
};

static void print_levels(struct cli_session *s, const struct timer_stats *st)
{
	char buf[256];
	int off = 0;
	for (uint32_t l = 0; l < st->levels; l++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off, "level %u: %llu, ", l,
				(unsigned long long)st->armed_level[l]);
	cli_printf(s, "  armed %llu (%sfar %llu, precise %llu, due %llu), periodic %llu",
		   (unsigned long long)st->armed_total, buf, (unsigned long long)st->armed_far,
		   (unsigned long long)st->armed_precise, (unsigned long long)st->armed_pending,
		   (unsigned long long)st->periodic);
}

static void print_late(struct cli_session *s, const struct timer_stats *st)
{
	char buf[512];
	int off = 0;
	for (uint32_t b = 0; b < TIMER_LATE_BUCKETS; b++)
		off += snprintf(buf + off, sizeof(buf) - (size_t)off, "  %s %llu", late_names[b],
				(unsigned long long)st->late[b]);
	cli_printf(s, "  late%s", buf);
}

static void print_service(struct cli_session *s, uint32_t thread, const struct timer_stats *st)
{
	cli_printf(s, "Thread %u: tick %lluns, %u levels, %.1f MB", thread, (unsigned long long)st->tick_ns,
		   st->levels, (double)st->memory_bytes / (1 << 20));
	print_levels(s, st);
	cli_printf(s, "  expiries %llu, arms %llu, cancels %llu, rearms %llu, producer requests %llu (refused %llu), "
		      "deferred %llu",
		   (unsigned long long)st->expiries, (unsigned long long)st->arms, (unsigned long long)st->cancels,
		   (unsigned long long)st->rearms, (unsigned long long)st->producer_requests,
		   (unsigned long long)st->producer_refused, (unsigned long long)st->deferred);
	print_late(s, st);
}

static cJSON *service_json(uint32_t thread, const struct timer_stats *st)
{
	cJSON *o = cJSON_CreateObject();
	cJSON_AddNumberToObject(o, "thread", thread);
	cJSON_AddNumberToObject(o, "tick_ns", (double)st->tick_ns);
	cJSON_AddNumberToObject(o, "levels", st->levels);
	cJSON_AddNumberToObject(o, "memory_bytes", (double)st->memory_bytes);
	cJSON *mem = cJSON_AddObjectToObject(o, "memory");
	cJSON_AddNumberToObject(mem, "entry_bytes", st->mem.entry_bytes);
	cJSON_AddNumberToObject(mem, "timers", (double)st->mem.timers);
	cJSON_AddNumberToObject(mem, "heads", (double)st->mem.heads);
	cJSON_AddNumberToObject(mem, "skiplist", (double)st->mem.skiplist);
	cJSON_AddNumberToObject(mem, "periodic", (double)st->mem.periodic);
	cJSON_AddNumberToObject(mem, "service", (double)st->mem.service);
	cJSON_AddNumberToObject(mem, "producers", (double)st->mem.producers);
	cJSON_AddNumberToObject(o, "armed", (double)st->armed_total);
	cJSON *lv = cJSON_AddArrayToObject(o, "armed_per_level");
	for (uint32_t l = 0; l < st->levels; l++)
		cJSON_AddItemToArray(lv, cJSON_CreateNumber((double)st->armed_level[l]));
	const struct {
		const char *name;
		uint64_t v;
	} counters[] = {
		{ "armed_far", st->armed_far },
		{ "armed_precise", st->armed_precise },
		{ "armed_due", st->armed_pending },
		{ "periodic", st->periodic },
		{ "expiries", st->expiries },
		{ "arms", st->arms },
		{ "cancels", st->cancels },
		{ "rearms", st->rearms },
		{ "producer_requests", st->producer_requests },
		{ "producer_refused", st->producer_refused },
		{ "deferred", st->deferred },
	};
	for (size_t i = 0; i < ARRAY_LEN(counters); i++)
		cJSON_AddNumberToObject(o, counters[i].name, (double)counters[i].v);
	cJSON *late = cJSON_AddArrayToObject(o, "late");
	for (uint32_t b = 0; b < TIMER_LATE_BUCKETS; b++) {
		cJSON *x = cJSON_CreateObject();
		cJSON_AddStringToObject(x, "bucket", late_names[b]);
		cJSON_AddNumberToObject(x, "count", (double)st->late[b]);
		cJSON_AddItemToArray(late, x);
	}
	return o;
}

/*
 * sluice> show timers json
 * {"timers": [{"thread": 0, "tick_ns": 10000, "levels": 6, "memory_bytes": 9646080,
 *   "memory": {"entry_bytes": 32, "timers": 8388608, "heads": ..., "skiplist": ..., "periodic": ...,
 *   "service": ..., "producers": ...}, "armed": 3,
 *   "armed_per_level": [1, 2, 0, 0, 0, 0], "armed_far": 0, ..., "deferred": 0,
 *   "late": [{"bucket": "<tick/4", "count": 1200}, ...]}]}
 * (an empty list when no thread has a timer service)
 */
static int show_timers(struct cli_session *s, int argc, char **argv)
{
	struct graph *g = cli_graph(s);
	if (!g)
		return cli_fail(s, -ENODEV, "no graph");
	bool json = false;
	int rc = cli_json_arg(s, argc, argv, &json);
	if (rc)
		return rc;
	cJSON *root = json ? cJSON_CreateObject() : NULL;
	cJSON *list = json ? cJSON_AddArrayToObject(root, "timers") : NULL;
	uint32_t shown = 0;
	for (uint32_t i = 0; i < graph_n_threads(g); i++) {
		const struct timer_service *ts = timer_service_of(graph_thread_get(g, i));
		struct timer_stats st;
		if (!ts)
			continue;
		timer_stats(ts, &st);
		if (json)
			cJSON_AddItemToArray(list, service_json(i, &st));
		else
			print_service(s, i, &st);
		shown++;
	}
	if (json)
		cli_json_print(s, root);
	else if (!shown)
		cli_printf(s, "no timer service");
	return 0;
}

CLI_COMMAND(show_timers_cmd, "show timers",
	    "show timers [json]",
	    "Timers per thread: armed per level and in the skiplists, expiries, lateness",
	    show_timers)
