/* The stats segment, writer and reader in one process over the real engine
 * and commands: the exported counters equal what the CLI's JSON says after
 * a known number of packets; clearing changes the CLI, not the segment; the
 * reader's descriptor cannot map the segment writable; interfaces come and
 * go with the directory; and (case "stress", also under ThreadSanitizer)
 * 2,000 interface create/delete cycles against the stats thread and a
 * reader that checks every copy it takes: no torn name, no counter of
 * another interface. */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "tests/check_run.h"
#include "tests/graph_fixture.h"
#include "app/statseg.h"
#include "base/statseg.h"
#include "cli/cli.h"
#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/pg/pg.h"
#include "nodes/sched/sched_io.h"
#include "sched/timer.h"

static struct graph *g;
static char err[256];

static void cli_ok(const char *line)
{
	char *out = NULL;
	int rc = cli_exec_line(line, &out);
	ck_assert_msg(rc == 0, "'%s' failed: %s", line, out ? out : "");
	free(out);
}

static cJSON *cli_json(const char *line)
{
	char *out = NULL;
	ck_assert_msg(cli_exec_line(line, &out) == 0, "'%s' failed: %s", line, out ? out : "");
	cJSON *j = cJSON_Parse(out);
	ck_assert_msg(j, "'%s' is not JSON: %s", line, out);
	free(out);
	return j;
}

static void setup(void)
{
	fixture_buffers_up(4096);
	g = fixture_graph_up();
	ck_assert_msg(pg_attach(g, err, sizeof(err)) == 0, "%s", err);
	cli_set_graph(g);
	cli_ok("create interface pg0 driver null");
	cli_ok("create interface nul0 driver null tx-queues 2");
	cli_ok("set interface l2 xconnect pg0 nul0");
	cli_ok("set interface state pg0 up");
	cli_ok("set interface state nul0 up");
}

static void teardown(void)
{
	sched_io_free_all();
	pg_stream_delete_all();
	pg_detach();
	fixture_graph_down(g);
	g = NULL;
	cli_set_graph(NULL);
	fixture_buffers_down();
}

/* Enable the generator's streams and run them to their limits on thread 0
 * (bounded: 5 s). */
static void forward(void)
{
	cli_ok("packet-generator enable");
	uint64_t deadline = time_now_ns() + 5000000000ull;
	for (bool busy = true; busy && time_now_ns() < deadline;) {
		graph_main_poll(g);
		busy = false;
		struct pg_stream_info si;
		for (uint32_t i = 0; pg_stream_info(i, &si) == 0; i++)
			busy |= si.enabled;
	}
	while (graph_main_poll(g))
		;
}

/* ---- the writer and a reader of it ---- */

struct pair {
	struct statseg_writer *w;
	struct statseg_client c;
	struct statseg_snapshot s;
};

static void pair_open(struct pair *p)
{
	p->w = statseg_writer_create(1 << 20, 1000000, err, sizeof(err));
	ck_assert_msg(p->w, "%s", err);
	ck_assert_int_eq(statseg_writer_update(p->w, g), 0);
	int fd = statseg_writer_reader_fd(p->w);
	ck_assert_int_ge(fd, 0);
	ck_assert_msg(statseg_map_fd(&p->c, fd, err, sizeof(err)) == 0, "%s", err);
	memset(&p->s, 0, sizeof(p->s));
}

static void pair_read(struct pair *p)
{
	statseg_snapshot_free(&p->s);
	ck_assert_int_eq(statseg_writer_update(p->w, g), 0);
	ck_assert_msg(statseg_snapshot(&p->c, NULL, NULL, 10, &p->s, err, sizeof(err)) == 0, "%s", err);
}

static void pair_close(struct pair *p)
{
	statseg_snapshot_free(&p->s);
	statseg_disconnect(&p->c);
	statseg_writer_free(p->w);
}

static const struct statseg_value *find(const struct statseg_snapshot *s, const char *name)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->vals[i].e.name, name))
			return &s->vals[i];
	ck_abort_msg("no entry %s", name);
	return NULL;
}

/* Index of dimension k labelled `label`, or -1. */
static int index_of(const struct statseg_snapshot *s, const struct statseg_value *v, unsigned k, const char *label)
{
	for (uint32_t i = 0; i < v->e.dims[k]; i++) {
		const char *l = statseg_label(s, v, k, i);
		if (l && !strcmp(l, label))
			return (int)i;
	}
	return -1;
}

/* Row of dimension 0 labelled `label`, or -1. */
static int row(const struct statseg_snapshot *s, const struct statseg_value *v, const char *label)
{
	return index_of(s, v, 0, label);
}

/* Word w of element [i][j]. */
static uint64_t at(const struct statseg_value *v, uint32_t i, uint32_t j, uint32_t w)
{
	return v->v[((uint64_t)i * v->e.dims[1] + j) * statseg_elem_words(v->e.type) + w];
}

/* An interface's counter as `show interface` adds it up: its queues plus
 * what the driver adds. */
static uint64_t if_total(const struct statseg_snapshot *s, const char *ifname, const char *entry, uint32_t w,
			 const char *driver_entry)
{
	const struct statseg_value *v = find(s, entry), *d = find(s, driver_entry);
	int i = row(s, v, ifname);
	ck_assert_int_ge(i, 0);
	uint64_t n = at(d, (uint32_t)i, 0, 0);
	for (uint32_t q = 0; q < statseg_row_length(s, v, (uint32_t)i); q++)
		n += at(v, (uint32_t)i, q, w);
	return n;
}

static uint64_t num(const cJSON *o, const char *key)
{
	const cJSON *x = cJSON_GetObjectItem(o, key);
	ck_assert_msg(cJSON_IsNumber(x), "no number %s", key);
	return (uint64_t)x->valuedouble;
}

static void check_interfaces(const struct statseg_snapshot *s)
{
	static const struct {
		const char *cli, *entry, *driver;
		uint32_t w;
	} map[] = {
		{ "RX-packets", "/if/rx", "/if/driver/rx-packets", 0 },
		{ "RX-bytes", "/if/rx", "/if/driver/rx-bytes", 1 },
		{ "RX-dropped", "/if/rx-dropped", "/if/driver/rx-dropped", 0 },
		{ "RX-errors", "/if/rx-errors", "/if/driver/rx-errors", 0 },
		{ "TX-packets", "/if/tx", "/if/driver/tx-packets", 0 },
		{ "TX-bytes", "/if/tx", "/if/driver/tx-bytes", 1 },
		{ "TX-dropped", "/if/tx-dropped", "/if/driver/tx-dropped", 0 },
	};
	cJSON *j = cli_json("show interface json");
	const cJSON *ifs = cJSON_IsArray(j) ? j : cJSON_GetObjectItem(j, "interfaces");
	ck_assert_int_eq(cJSON_GetArraySize(ifs), 2);
	const cJSON *o;
	cJSON_ArrayForEach(o, ifs) {
		const char *name = cJSON_GetObjectItem(o, "name")->valuestring;
		const cJSON *c = cJSON_GetObjectItem(o, "counters");
		for (size_t k = 0; k < ARRAY_LEN(map); k++)
			ck_assert_msg(num(c, map[k].cli) == if_total(s, name, map[k].entry, map[k].w, map[k].driver),
				      "%s %s: cli %llu", name, map[k].cli, (unsigned long long)num(c, map[k].cli));
		const struct statseg_value *admin = find(s, "/if/admin-up");
		ck_assert_uint_eq(at(admin, (uint32_t)row(s, admin, name), 0, 0),
				  !strcmp(cJSON_GetObjectItem(o, "state")->valuestring, "up"));
	}
	cJSON_Delete(j);
}

static void check_runtime(const struct statseg_snapshot *s)
{
	static const char *const what[] = { "calls", "vectors", "suspends", "clocks" };
	cJSON *j = cli_json("show runtime verbose json");
	const cJSON *t, *n;
	uint32_t checked = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "threads")) {
		uint32_t ti = (uint32_t)num(t, "index");
		cJSON_ArrayForEach(n, cJSON_GetObjectItem(t, "nodes")) {
			for (size_t k = 0; k < ARRAY_LEN(what); k++) {
				char entry[32];
				snprintf(entry, sizeof(entry), "/node/%s", what[k]);
				const struct statseg_value *v = find(s, entry);
				int col = -1;
				for (uint32_t c = 0; c < v->e.dims[1]; c++)
					if (!strcmp(statseg_label(s, v, 1, c), cJSON_GetObjectItem(n, "name")->valuestring))
						col = (int)c;
				ck_assert_int_ge(col, 0);
				ck_assert_uint_eq(num(n, what[k]), at(v, ti, (uint32_t)col, 0));
			}
			checked++;
		}
	}
	ck_assert_uint_eq(checked, graph_n_nodes(g));
	cJSON_Delete(j);
}

static void check_errors(const struct statseg_snapshot *s)
{
	cJSON *j = cli_json("show errors json");
	const cJSON *e;
	cJSON_ArrayForEach(e, cJSON_GetObjectItem(j, "errors")) {
		char name[STATSEG_NAME_SIZE];
		snprintf(name, sizeof(name), "/err/%s/%s", cJSON_GetObjectItem(e, "node")->valuestring,
			 cJSON_GetObjectItem(e, "reason")->valuestring);
		const struct statseg_value *v = find(s, name);
		uint64_t sum = 0; /* a counter per thread */
		for (uint32_t t = 0; t < v->e.dims[0]; t++)
			sum += at(v, t, 0, 0);
		ck_assert_uint_eq(num(e, "count"), sum);
	}
	cJSON_Delete(j);
}

/* busy, idle, sleep, overhead clocks per thread, and the TSC rate. */
static void check_thread_times(const struct statseg_snapshot *s)
{
	static const char *const what[] = { "busy", "idle", "sleep", "overhead" };
	cJSON *j = cli_json("show runtime json");
	const cJSON *t;
	uint32_t checked = 0;
	cJSON_ArrayForEach(t, cJSON_GetObjectItem(j, "threads")) {
		for (size_t k = 0; k < ARRAY_LEN(what); k++) {
			char entry[64], key[32];
			snprintf(entry, sizeof(entry), "/sys/threads/%s-clocks", what[k]);
			snprintf(key, sizeof(key), "%s_clocks", what[k]);
			const struct statseg_value *v = find(s, entry);
			ck_assert_uint_eq(num(t, key), at(v, (uint32_t)num(t, "index"), 0, 0));
		}
		ck_assert_uint_gt(num(t, "idle_clocks") + num(t, "busy_clocks"), 0);
		const cJSON *pct[] = { cJSON_GetObjectItem(t, "busy_percent"), cJSON_GetObjectItem(t, "idle_percent"),
				       cJSON_GetObjectItem(t, "overhead_percent") };
		double sum = 0;
		for (size_t k = 0; k < ARRAY_LEN(pct); k++) {
			ck_assert(cJSON_IsNumber(pct[k]));
			sum += pct[k]->valuedouble;
		}
		ck_assert_double_eq_tol(sum, 100.0, 1e-6);
		ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(t, "sleep_percent")));
		checked++;
	}
	ck_assert_uint_eq(checked, graph_n_threads(g));
	ck_assert_uint_eq(find(s, "/sys/tsc-hz")->v[0], (uint64_t)cpu_ticks_per_second());
	cJSON_Delete(j);
}

static uint64_t tx_packets(const struct statseg_snapshot *s, const char *ifname)
{
	return if_total(s, ifname, "/if/tx", 0, "/if/driver/tx-packets");
}

START_TEST(equals_cli_json)
{
	cli_ok("packet-generator new s0 limit 1000 size 64 next-node ethernet-input rx-if 0");
	cli_ok("packet-generator new s1 limit 77 size 100 next-node error-drop");
	forward();
	struct pair p;
	pair_open(&p);
	pair_read(&p);
	ck_assert_uint_eq(tx_packets(&p.s, "nul0"), 1000);
	ck_assert_uint_eq(if_total(&p.s, "nul0", "/if/tx", 1, "/if/driver/tx-bytes"), 64000);
	ck_assert_uint_eq(find(&p.s, "/err/pg-input/generated into error-drop")->v[0], 77);
	check_interfaces(&p.s);
	check_runtime(&p.s);
	check_errors(&p.s);
	check_thread_times(&p.s);
	/* the server is not running here: its counters are there, at 0 */
	ck_assert_uint_eq(find(&p.s, "/cli/accepted")->v[0], 0);
	ck_assert_uint_eq(find(&p.s, "/cli/sessions-open")->v[0], 0);
	pair_close(&p);
}
END_TEST

/* Clearing is an offset for the CLI: the segment's counters keep going up. */
START_TEST(clear_keeps_totals)
{
	cli_ok("packet-generator new s0 limit 600 size 64 next-node ethernet-input rx-if 0");
	forward();
	struct pair p;
	pair_open(&p);
	pair_read(&p);
	const struct statseg_value *calls = find(&p.s, "/node/calls");
	uint32_t eth = (uint32_t)graph_node_index(g, "ethernet-input");
	uint64_t calls_before = at(calls, 0, eth, 0);
	ck_assert_uint_gt(calls_before, 0);
	uint64_t busy_before = at(find(&p.s, "/sys/threads/busy-clocks"), 0, 0, 0);
	ck_assert_uint_gt(busy_before, 0);
	cli_ok("clear interfaces");
	cli_ok("clear runtime");
	cli_ok("clear errors");
	struct node_stats st;
	ck_assert_int_eq(graph_node_stats(g, 0, eth, &st), 0);
	ck_assert_uint_eq(st.calls, 0);
	cJSON *rt = cli_json("show runtime json");
	ck_assert_uint_eq(num(cJSON_GetArrayItem(cJSON_GetObjectItem(rt, "threads"), 0), "busy_clocks"), 0);
	cJSON_Delete(rt);
	pair_read(&p);
	ck_assert_uint_eq(tx_packets(&p.s, "nul0"), 600);
	ck_assert_uint_eq(at(find(&p.s, "/node/calls"), 0, eth, 0), calls_before);
	ck_assert_uint_eq(at(find(&p.s, "/sys/threads/busy-clocks"), 0, 0, 0), busy_before);
	cli_ok("packet-generator delete s0");
	cli_ok("packet-generator new s1 limit 250 size 64 next-node ethernet-input rx-if 0");
	forward();
	pair_read(&p);
	ck_assert_uint_eq(tx_packets(&p.s, "nul0"), 850);
	struct dev_counters c;
	dev_counters_get(dev_by_name("nul0"), &c);
	ck_assert_uint_eq(c.tx_packets, 250);
	ck_assert_int_eq(graph_node_stats(g, 0, eth, &st), 0);
	ck_assert_uint_eq(at(find(&p.s, "/node/calls"), 0, eth, 0), calls_before + st.calls);
	pair_close(&p);
}
END_TEST

/* A shaped interface and a class: /sched/ equals `show sched json`,
 * without the barrier. */
START_TEST(sched_equals_cli_json)
{
	struct timer_config tc;
	timer_config_default(&tc);
	tc.max_timers = 1024;
	ck_assert_int_eq(timer_services_install(g, &tc, err, sizeof(err)), 0); /* sched-egress's timers */
	cli_ok("sched shaper interface nul0 rate 10kbit burst 16k");
	cli_ok("sched class ef priority 0 match dscp 46");
	cli_ok("packet-generator new s0 limit 1000 size 64 next-node ethernet-input rx-if 0");
	forward();
	struct pair p;
	pair_open(&p);
	pair_read(&p);
	cJSON *j = cli_json("show sched json");
	const cJSON *ifs = cJSON_GetObjectItem(j, "interfaces");
	ck_assert_int_eq(cJSON_GetArraySize(ifs), 1);
	const cJSON *o = cJSON_GetArrayItem(ifs, 0);
	int i = row(&p.s, find(&p.s, "/sched/if/held"), "nul0");
	ck_assert_int_ge(i, 0);
	ck_assert_int_eq(row(&p.s, find(&p.s, "/sched/if/held"), "pg0"), -1);
	static const char *const per_if[] = { "held", "enqueued", "released", "dropped" };
	for (size_t k = 0; k < ARRAY_LEN(per_if); k++) {
		char entry[64];
		snprintf(entry, sizeof(entry), "/sched/if/%s", per_if[k]);
		ck_assert_uint_eq(num(o, per_if[k]), at(find(&p.s, entry), (uint32_t)i, 0, 0));
	}
	ck_assert_uint_gt(num(o, "held"), 0); /* 1000 packets of 64 bytes do not fit in a 16k burst */
	ck_assert_uint_eq(num(o, "enqueued"), 1000);
	const cJSON *c;
	uint32_t classes = 0;
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(o, "classes")) {
		static const char *const per_class[] = { "held", "released", "dropped" };
		for (size_t k = 0; k < ARRAY_LEN(per_class); k++) {
			char entry[64];
			snprintf(entry, sizeof(entry), "/sched/if/class/%s", per_class[k]);
			const struct statseg_value *v = find(&p.s, entry);
			int cl = index_of(&p.s, v, 1, cJSON_GetObjectItem(c, "class")->valuestring);
			ck_assert_int_ge(cl, 0);
			ck_assert_uint_eq(num(c, per_class[k]), at(v, (uint32_t)i, (uint32_t)cl, 0));
		}
		classes++;
	}
	ck_assert_uint_eq(classes, 1); /* (none): these packets carry no class */
	cJSON_ArrayForEach(c, cJSON_GetObjectItem(j, "classes")) {
		const struct statseg_value *v = find(&p.s, "/sched/classes/packets");
		int r = row(&p.s, v, cJSON_GetObjectItem(c, "name")->valuestring);
		ck_assert_int_ge(r, 0);
		ck_assert_uint_eq(num(c, "packets"), at(v, (uint32_t)r, 0, 0));
	}
	ck_assert_ptr_null(cJSON_GetObjectItem(j, "class_queues")); /* no distributor: no front */
	cJSON_Delete(j);
	/* a removed schedule leaves the directory */
	uint64_t epoch = p.s.epoch;
	sched_io_free_all();
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	for (uint32_t k = 0; k < p.s.n; k++)
		ck_assert_msg(strncmp(p.s.vals[k].e.name, "/sched/if/", 10), "%s", p.s.vals[k].e.name);
	pair_close(&p);
	timer_services_uninstall(g);
}
END_TEST

/* The hierarchy's subscribers, one row each ("IF/NAME"), equal `show
 * sched subscriber json`'s counters, without the barrier; a removed
 * subscriber leaves the rows. */
START_TEST(sched_subscribers_equal_cli_json)
{
	struct timer_config tc;
	timer_config_default(&tc);
	tc.max_timers = 1024;
	ck_assert_int_eq(timer_services_install(g, &tc, err, sizeof(err)), 0); /* sched-egress's timers */
	cli_ok("sched shaper interface nul0 rate 10mbit burst 16k");
	cli_ok("sched hqos interface nul0 queue-limit 100");
	cli_ok("sched subscriber a interface nul0 rate 10kbit burst 16k match interface pg0");
	cli_ok("sched subscriber b interface nul0 rate 1mbit match dst 10.9.9.0/24");
	cli_ok("packet-generator new s0 limit 1000 size 64 next-node ethernet-input rx-if 0");
	forward();
	struct pair p;
	pair_open(&p);
	pair_read(&p);
	cJSON *j = cli_json("show sched subscriber json");
	const cJSON *port = cJSON_GetArrayItem(cJSON_GetObjectItem(j, "interfaces"), 0), *o;
	uint32_t subs = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(port, "subscribers")) {
		char label[96];
		snprintf(label, sizeof(label), "nul0/%s", cJSON_GetObjectItem(o, "name")->valuestring);
		static const char *const per_sub[] = { "departed_packets", "departed_bytes", "dropped_limit",
						       "dropped_codel", "marked" };
		static const char *const entry[] = { "departed-packets", "departed-bytes", "dropped-limit",
						     "dropped-codel", "marked" };
		for (size_t k = 0; k < ARRAY_LEN(per_sub); k++) {
			char name[64];
			snprintf(name, sizeof(name), "/sched/subscribers/%s", entry[k]);
			const struct statseg_value *v = find(&p.s, name);
			int r = row(&p.s, v, label);
			ck_assert_msg(r >= 0, "%s: no row %s", name, label);
			ck_assert_uint_eq(num(o, per_sub[k]), at(v, (uint32_t)r, 0, 0));
		}
		if (!strcmp(label, "nul0/a")) { /* 1000 x 64 bytes at 10 kbit/s: the burst, the rest held or dropped */
			ck_assert_uint_gt(num(o, "departed_packets"), 0);
			ck_assert_uint_gt(num(o, "dropped_limit"), 0);
		}
		subs++;
	}
	ck_assert_uint_eq(subs, 3); /* default, a, b */
	cJSON_Delete(j);
	uint64_t epoch = p.s.epoch;
	cli_ok("no sched subscriber b");
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	const struct statseg_value *v = find(&p.s, "/sched/subscribers/departed-bytes");
	ck_assert_int_ge(row(&p.s, v, "nul0/a"), 0);
	ck_assert_int_eq(row(&p.s, v, "nul0/b"), -1);
	ck_assert_uint_eq(v->e.dims[0], 2);
	pair_close(&p);
	sched_io_free_all();
	timer_services_uninstall(g);
}
END_TEST

/* The impaired subscribers, one row each ("IF/NAME"), equal `show sched
 * impair json`'s subscriber entries, counters and lateness buckets; a
 * subscriber without an impairer has no row; one whose impairer is set
 * off keeps its row (its counters stay), a removed one leaves. */
START_TEST(sched_subscriber_impair_equal_cli_json)
{
	struct timer_config tc;
	timer_config_default(&tc);
	tc.max_timers = 1024;
	ck_assert_int_eq(timer_services_install(g, &tc, err, sizeof(err)), 0); /* sched-egress's timers */
	cli_ok("sched shaper interface nul0 rate 10mbit burst 16k");
	cli_ok("sched hqos interface nul0 queue-limit 1000");
	cli_ok("sched subscriber a interface nul0 rate 10mbit burst 16k match interface pg0");
	cli_ok("sched subscriber b interface nul0 rate 1mbit match dst 10.9.9.0/24");
	cli_ok("sched impair subscriber a loss random 30% duplicate 10% seed 7");
	cli_ok("packet-generator new s0 limit 500 size 64 next-node ethernet-input rx-if 0");
	forward();
	struct pair p;
	pair_open(&p);
	pair_read(&p);
	static const char *const json_name[] = { "held",	   "lost_random", "lost_gemodel",      "over_max_held",
						 "duplicated",	   "duplicate_no_buffer", "reordered",	     "corrupted",
						 "corrupt_no_buffer", "delayed",     "released" };
	static const char *const entry[] = { "held",	  "lost-random", "lost-gemodel",      "over-max-held",
					     "duplicated", "duplicate-no-buffer", "reordered",	  "corrupted",
					     "corrupt-no-buffer", "delayed",	 "released" };
	cJSON *j = cli_json("show sched impair json");
	const cJSON *o;
	uint32_t subs = 0;
	cJSON_ArrayForEach(o, cJSON_GetObjectItem(j, "interfaces")) {
		const cJSON *sub = cJSON_GetObjectItem(o, "subscriber");
		if (!sub)
			continue;
		char label[96], name[80];
		snprintf(label, sizeof(label), "%s/%s", cJSON_GetObjectItem(o, "interface")->valuestring,
			 sub->valuestring);
		ck_assert_str_eq(label, "nul0/a");
		for (size_t k = 0; k < ARRAY_LEN(entry); k++) {
			snprintf(name, sizeof(name), "/sched/subscribers/impair/%s", entry[k]);
			const struct statseg_value *v = find(&p.s, name);
			int r = row(&p.s, v, label);
			ck_assert_msg(r >= 0, "%s: no row %s", name, label);
			ck_assert_uint_eq(num(o, json_name[k]), at(v, (uint32_t)r, 0, 0));
		}
		const struct statseg_value *late = find(&p.s, "/sched/subscribers/impair/release-lateness");
		int r = row(&p.s, late, label);
		ck_assert_int_ge(r, 0);
		uint64_t released = 0;
		for (uint32_t b = 0; b < SCHED_IMPAIR_LATE_BUCKETS; b++) {
			const cJSON *x = cJSON_GetArrayItem(cJSON_GetObjectItem(o, "release_lateness"), (int)b);
			ck_assert_uint_eq(num(x, "packets"), at(late, (uint32_t)r, b, 0));
			released += at(late, (uint32_t)r, b, 0);
		}
		/* 500 offered: some lost, some duplicated, the rest released or held */
		ck_assert_uint_gt(num(o, "lost_random"), 0);
		ck_assert_uint_gt(num(o, "duplicated"), 0);
		ck_assert_uint_eq(num(o, "released"), released);
		ck_assert_uint_eq(num(o, "lost_random") + num(o, "released") + num(o, "held"), 500 + num(o, "duplicated"));
		subs++;
	}
	ck_assert_uint_eq(subs, 1);
	cJSON_Delete(j);
	const struct statseg_value *v = find(&p.s, "/sched/subscribers/impair/released");
	ck_assert_uint_eq(v->e.dims[0], 1);
	ck_assert_int_eq(row(&p.s, v, "nul0/b"), -1);
	uint64_t epoch = p.s.epoch;
	cli_ok("sched impair subscriber a off"); /* the impairer and its counters stay */
	pair_read(&p);
	ck_assert_uint_eq(p.s.epoch, epoch);
	ck_assert_int_eq(row(&p.s, find(&p.s, "/sched/subscribers/impair/released"), "nul0/a"), 0);
	cli_ok("sched impair subscriber b delay 1ms");
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	v = find(&p.s, "/sched/subscribers/impair/released");
	ck_assert_uint_eq(v->e.dims[0], 2);
	ck_assert_int_ge(row(&p.s, v, "nul0/b"), 0);
	epoch = p.s.epoch;
	cli_ok("no sched subscriber a");
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	v = find(&p.s, "/sched/subscribers/impair/released");
	ck_assert_int_eq(row(&p.s, v, "nul0/a"), -1);
	ck_assert_int_eq(row(&p.s, v, "nul0/b"), 0);
	pair_close(&p);
	sched_io_free_all();
	timer_services_uninstall(g);
}
END_TEST

/* What a reader receives maps read-only only. */
START_TEST(reader_fd_is_read_only)
{
	struct pair p;
	pair_open(&p);
	void *x = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, p.c.fd, 0);
	ck_assert_ptr_eq(x, MAP_FAILED);
	ck_assert_int_eq(errno, EACCES);
	ck_assert_int_ne(mprotect((void *)(uintptr_t)p.c.base, 4096, PROT_READ | PROT_WRITE), 0);
	pair_close(&p);
}
END_TEST

/* Interfaces appear and disappear with a new epoch. */
START_TEST(directory_follows_interfaces)
{
	struct pair p;
	pair_open(&p);
	pair_read(&p);
	uint64_t epoch = p.s.epoch;
	ck_assert_int_eq(row(&p.s, find(&p.s, "/if/names"), "x9"), -1);
	cli_ok("create interface x9 driver null rx-queues 3");
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	const struct statseg_value *rx = find(&p.s, "/if/rx");
	int i = row(&p.s, rx, "x9");
	ck_assert_int_eq(i, 2);
	ck_assert_uint_eq(statseg_row_length(&p.s, rx, (uint32_t)i), 3);
	epoch = p.s.epoch;
	pair_read(&p); /* nothing changed: the same directory */
	ck_assert_uint_eq(p.s.epoch, epoch);
	cli_ok("delete interface x9");
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	ck_assert_int_eq(row(&p.s, find(&p.s, "/if/names"), "x9"), -1);
	pair_close(&p);
}
END_TEST


/* ---- counters registered by a provider (app/statseg.h) ---- */

static uint32_t prov_n;
static const char *prov_names[3];
static uint64_t prov_base;

static void prov_collect(struct graph *gr, struct statseg_rows *rows)
{
	(void)gr;
	for (uint32_t i = 0; i < prov_n; i++) {
		const uint64_t v[2] = { prov_base + i, 10 * (prov_base + i) };
		ck_assert_int_eq(statseg_rows_add(rows, prov_names[i], v), 0);
	}
}

static const char *const prov_cols[] = { "packets", "bytes" };
static const char *const prov_cols_bad[] = { "packets", "names" };
static const char *const prov_cols_twice[] = { "bytes", "bytes" };
static const char *const prov_cols_upper[] = { "Bytes" };

static bool has(const struct statseg_snapshot *s, const char *name)
{
	for (uint32_t i = 0; i < s->n; i++)
		if (!strcmp(s->vals[i].e.name, name))
			return true;
	return false;
}

static int reg(const char *prefix, const char *dim, uint32_t n_cols, const char *const *cols, bool collect)
{
	static struct statseg_counters c[32]; /* registered ones must stay */
	static int n;
	ck_assert_int_lt(n, 32);
	c[n] = (struct statseg_counters){ .prefix = prefix, .row_dim = dim, .n_columns = n_cols, .columns = cols,
					  .collect = collect ? prov_collect : NULL };
	err[0] = 0;
	int rc = statseg_counters_register(&c[n++], err, sizeof(err));
	ck_assert_msg(rc == 0 || err[0], "refused without a reason");
	return rc;
}

/* Bad names refused with a reason; rows appear, are renamed and go with a
 * new epoch each; values alone change in place. */
START_TEST(registered_counters)
{
	ck_assert_int_eq(reg("test/t", "row", 2, prov_cols, true), -EINVAL);     /* no leading '/' */
	ck_assert_int_eq(reg("/test//t", "row", 2, prov_cols, true), -EINVAL);   /* empty word */
	ck_assert_int_eq(reg("/test/t/", "row", 2, prov_cols, true), -EINVAL);   /* trailing '/' */
	ck_assert_int_eq(reg("/Test", "row", 2, prov_cols, true), -EINVAL);      /* [a-z0-9_-] */
	ck_assert_int_eq(reg("/if/mine", "row", 2, prov_cols, true), -EINVAL);   /* built-in */
	ck_assert_int_eq(reg("/sched", "row", 2, prov_cols, true), -EINVAL);
	ck_assert_int_eq(reg("/test/t", "", 2, prov_cols, true), -EINVAL);
	ck_assert_int_eq(reg("/test/t", "a-row-dimension-name", 2, prov_cols, true), -EINVAL); /* >= 16 */
	ck_assert_int_eq(reg("/test/t", "row", 0, prov_cols, true), -EINVAL);
	ck_assert_int_eq(reg("/test/t", "row", 9, prov_cols, true), -EINVAL);
	ck_assert_int_eq(reg("/test/t", "row", 2, prov_cols_bad, true), -EINVAL);   /* "names" */
	ck_assert_int_eq(reg("/test/t", "row", 2, prov_cols_twice, true), -EINVAL);
	ck_assert_int_eq(reg("/test/t", "row", 1, prov_cols_upper, true), -EINVAL);
	ck_assert_int_eq(reg("/test/t", "row", 2, prov_cols, false), -EINVAL);      /* no collect */
	ck_assert_int_eq(reg("/test/t", "row", 2, prov_cols, true), 0);
	ck_assert_int_eq(reg("/test/t", "row", 2, prov_cols, true), -EINVAL);      /* twice */
	ck_assert_int_eq(reg("/test/t/sub", "row", 2, prov_cols, true), -EINVAL);  /* inside it */
	ck_assert_int_eq(reg("/test", "row", 2, prov_cols, true), -EINVAL);        /* around it */
	ck_assert_msg(strstr(err, "overlaps '/test/t'"), "%s", err);

	struct pair p;
	prov_n = 0;
	pair_open(&p);
	pair_read(&p);
	ck_assert(!has(&p.s, "/test/t/names") && !has(&p.s, "/test/t/packets"));
	uint64_t epoch = p.s.epoch;

	prov_n = 2, prov_names[0] = "a", prov_names[1] = "b", prov_base = 5;
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	const struct statseg_value *pk = find(&p.s, "/test/t/packets"), *by = find(&p.s, "/test/t/bytes");
	ck_assert_int_eq(pk->e.type, STATSEG_COUNTER_VECTOR);
	ck_assert_str_eq(pk->e.dim_names[0], "row");
	ck_assert_int_eq(row(&p.s, pk, "a"), 0);
	ck_assert_int_eq(row(&p.s, by, "b"), 1);
	ck_assert_uint_eq(at(pk, 1, 0, 0), 6);
	ck_assert_uint_eq(at(by, 1, 0, 0), 60);
	epoch = p.s.epoch;

	prov_base = 7; /* values only: the same directory */
	pair_read(&p);
	ck_assert_uint_eq(p.s.epoch, epoch);
	pk = find(&p.s, "/test/t/packets");
	ck_assert_uint_eq(at(pk, 0, 0, 0), 7);

	prov_names[1] = "c"; /* as many rows, another name: a new directory */
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	pk = find(&p.s, "/test/t/packets");
	ck_assert_int_eq(row(&p.s, pk, "b"), -1);
	ck_assert_int_eq(row(&p.s, pk, "c"), 1);
	epoch = p.s.epoch;

	prov_n = 0; /* every row gone: so are the entries */
	pair_read(&p);
	ck_assert_uint_gt(p.s.epoch, epoch);
	ck_assert(!has(&p.s, "/test/t/names") && !has(&p.s, "/test/t/bytes"));
	pair_close(&p);
}
END_TEST

/* ---- stress: create/delete against the stats thread and a reader ---- */

#define STRESS_CYCLES 2000

static atomic_bool stress_stop;
static char stress_socket[128];

struct reader_result {
	uint64_t snapshots, rows_checked, retries_exhausted;
	char failure[256];
};

/* cN was made with (N % 3) + 1 rx queues and RX-packets N * 1000 + 7. */
static bool row_ok(const struct statseg_snapshot *s, const struct statseg_value *rx, const struct statseg_value *nq,
		   uint32_t i, struct reader_result *r)
{
	const char *name = statseg_label(s, rx, 0, i);
	if (!name || !name[0] || !strcmp(name, "pg0") || !strcmp(name, "nul0"))
		return true;
	char *end;
	if (name[0] != 'c' || !name[1])
		goto torn;
	unsigned long n = strtoul(name + 1, &end, 10);
	if (*end)
		goto torn;
	r->rows_checked++;
	if (at(nq, i, 0, 0) == n % 3 + 1 && at(rx, i, 0, 0) == n * 1000 + 7)
		return true;
	snprintf(r->failure, sizeof(r->failure), "%s: %llu queues, %llu packets", name,
		 (unsigned long long)at(nq, i, 0, 0), (unsigned long long)at(rx, i, 0, 0));
	return false;
torn:
	snprintf(r->failure, sizeof(r->failure), "torn name '%.64s'", name);
	return false;
}

static void *stress_reader(void *arg)
{
	struct reader_result *r = arg;
	struct statseg_client c;
	if (statseg_connect(&c, stress_socket, r->failure, sizeof(r->failure)))
		return NULL;
	while (!atomic_load(&stress_stop) && !r->failure[0]) {
		struct statseg_snapshot s;
		char e[256];
		if (statseg_snapshot(&c, NULL, NULL, 100000, &s, e, sizeof(e))) {
			r->retries_exhausted++;
			continue;
		}
		r->snapshots++;
		const struct statseg_value *rx = find(&s, "/if/rx"), *nq = find(&s, "/if/rx-queues");
		for (uint32_t i = 0; i < rx->e.dims[0] && !r->failure[0]; i++)
			if (!row_ok(&s, rx, nq, i, r))
				break;
		statseg_snapshot_free(&s);
	}
	statseg_disconnect(&c);
	return NULL;
}

struct cycle {
	uint32_t n;
	struct device *dev;
};

static void create_locked(void *arg)
{
	struct cycle *c = arg;
	char name[16], queues[8];
	snprintf(name, sizeof(name), "c%u", c->n);
	snprintf(queues, sizeof(queues), "%u", c->n % 3 + 1);
	const char *words[] = { "rx-queues", queues };
	c->dev = dev_create(name, "null", words, 2, err, sizeof(err));
	if (c->dev) /* before the writer can see it: its mark */
		c->dev->rxq[0].c.rx_packets = (uint64_t)c->n * 1000 + 7;
}

static void delete_locked(void *arg)
{
	struct cycle *c = arg;
	dev_delete(c->dev);
}

START_TEST(stress)
{
	char dir[] = "/tmp/sluice-statseg-XXXXXX";
	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(stress_socket, sizeof(stress_socket), "%s/stats.sock", dir);
	struct statseg_conf conf = { .size = 1 << 20, .interval_ns = 200000 };
	snprintf(conf.socket_name, sizeof(conf.socket_name), "%s", stress_socket);
	struct statseg_start_config sc = { .conf = &conf, .socket_mode = 0600, .socket_group = "", .g = g };
	ck_assert_msg(statseg_start(&sc, err, sizeof(err)) == 0, "%s", err);
	atomic_store(&stress_stop, false);
	struct reader_result r = { 0 };
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, stress_reader, &r), 0);
	struct cycle c[2] = { 0 };
	for (uint32_t n = 0; n < STRESS_CYCLES && !r.failure[0]; n++) {
		/* two alive at a time, so that indices are reused by others */
		struct cycle *x = &c[n % 2];
		if (x->dev)
			cli_command_locked(delete_locked, x);
		x->n = n;
		cli_command_locked(create_locked, x);
		ck_assert_msg(x->dev, "cycle %u: %s", n, err);
		if (n % 64 == 0)
			usleep(1000); /* let the stats thread copy some of the cycles */
	}
	atomic_store(&stress_stop, true);
	pthread_join(t, NULL);
	statseg_stop();
	rmdir(dir);
	ck_assert_msg(!r.failure[0], "%s", r.failure);
	ck_assert_uint_gt(r.snapshots, 0);
	ck_assert_uint_gt(r.rows_checked, 0);
	fprintf(stderr, "stress: %d cycles, %llu snapshots, %llu rows checked, %llu gave up\n", STRESS_CYCLES,
		(unsigned long long)r.snapshots, (unsigned long long)r.rows_checked,
		(unsigned long long)r.retries_exhausted);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("statseg");
	TCase *tc = tcase_create("segment");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, equals_cli_json);
	tcase_add_test(tc, clear_keeps_totals);
	tcase_add_test(tc, sched_equals_cli_json);
	tcase_add_test(tc, sched_subscribers_equal_cli_json);
	tcase_add_test(tc, sched_subscriber_impair_equal_cli_json);
	tcase_add_test(tc, reader_fd_is_read_only);
	tcase_add_test(tc, directory_follows_interfaces);
	tcase_add_test(tc, registered_counters);
	suite_add_tcase(s, tc);
	TCase *st = tcase_create("stress");
	tcase_add_checked_fixture(st, setup, teardown);
	tcase_set_timeout(st, 600);
	tcase_add_test(st, stress);
	suite_add_tcase(s, st);
	return check_run_suite(s);
}
