/* The event log: rings (wraparound, clear, copies beside a writer), the
 * string table, the engine's events, and the commands (show, clear, save
 * as Trace Event JSON under cli-file-dir). */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "base/elog.h"
#include "cli/cli.h"
#include "tests/check_run.h"
#include "tests/graph/test_nodes.h"

static struct elog_type seq_type = {
	.name = "test-seq", .category = "test",
	.arg_name = { "seq", "twice", "thrice" }, .arg_kind = { ELOG_ARG_UINT, ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(seq_type)

/* ---- rings ---- */

START_TEST(test_wraparound_keeps_newest)
{
	elog_set_size(16);
	ck_assert_int_eq(elog_track_register(3, "t3"), 0);
	elog_thread_bind(3);
	for (uint32_t i = 0; i < 40; i++)
		elog_log(&seq_type, i, 2ull * i, 3ull * i);
	/* size - 1: the slot after the newest is the one a writer rewrites. */
	ck_assert_uint_eq(elog_track_count(3), 15);
	struct elog_event ev[16];
	ck_assert_uint_eq(elog_track_copy(3, ev, 16), 15);
	for (uint32_t i = 0; i < 15; i++) {
		ck_assert_uint_eq(ev[i].a, 25 + i);
		ck_assert_uint_eq(ev[i].b, 2ull * (25 + i));
		ck_assert_uint_eq(ev[i].c, 3ull * (25 + i));
		ck_assert_uint_eq(ev[i].type, seq_type.id);
		ck_assert_uint_eq(ev[i].track, 3);
		if (i)
			ck_assert_uint_ge(ev[i].ticks, ev[i - 1].ticks);
	}
	/* At most max: the newest. */
	ck_assert_uint_eq(elog_track_copy(3, ev, 5), 5);
	ck_assert_uint_eq(ev[0].a, 35);
	ck_assert_uint_eq(ev[4].a, 39);
	ck_assert_str_eq(elog_track_name(3), "t3");
}
END_TEST

START_TEST(test_clear_then_new_events)
{
	elog_set_size(16);
	ck_assert_int_eq(elog_track_register(0, "main"), 0);
	elog_thread_bind(0);
	for (uint32_t i = 0; i < 10; i++)
		elog_log(&seq_type, i, 0, 0);
	elog_clear();
	ck_assert_uint_eq(elog_track_count(0), 0);
	elog_log(&seq_type, 100, 0, 0);
	elog_log(&seq_type, 101, 0, 0);
	struct elog_event ev[16];
	ck_assert_uint_eq(elog_track_copy(0, ev, 16), 2);
	ck_assert_uint_eq(ev[0].a, 100);
	ck_assert_uint_eq(ev[1].a, 101);
}
END_TEST

START_TEST(test_size_rounds_to_power_of_two)
{
	elog_set_size(100);
	ck_assert_uint_eq(elog_size(), 128);
	elog_set_size(1);
	ck_assert_uint_eq(elog_size(), ELOG_SIZE_MIN);
	elog_set_size(UINT32_MAX);
	ck_assert_uint_eq(elog_size(), ELOG_SIZE_MAX);
}
END_TEST

START_TEST(test_strings_interned)
{
	uint32_t a = elog_string("eth0");
	uint32_t b = elog_string("eth1");
	ck_assert_uint_ne(a, 0);
	ck_assert_uint_ne(a, b);
	ck_assert_uint_eq(elog_string("eth0"), a);
	ck_assert_str_eq(elog_string_get(a), "eth0");
	ck_assert_str_eq(elog_string_get(b), "eth1");
	ck_assert_str_eq(elog_string_get(0), "?");
	char name[32];
	for (uint32_t i = 0; i < 3000; i++) { /* grows the table */
		snprintf(name, sizeof(name), "s%u", i);
		ck_assert_str_eq(elog_string_get(elog_string(name)), name);
	}
	ck_assert_uint_eq(elog_string("eth1"), b);
}
END_TEST

/* Unbound threads share the control track. */
START_TEST(test_unbound_logs_to_control)
{
	elog_thread_bind(ELOG_TRACK_CONTROL);
	elog_log(&seq_type, 7, 0, 0);
	struct elog_event ev[4];
	ck_assert_uint_eq(elog_track_copy(ELOG_TRACK_CONTROL, ev, 4), 1);
	ck_assert_uint_eq(ev[0].a, 7);
	ck_assert_str_eq(elog_track_name(ELOG_TRACK_CONTROL), "control");
}
END_TEST

/* ---- a writer beside a reader (also under ThreadSanitizer) ---- */

#define XT_EVENTS 2000000u

static void *xt_writer(void *arg)
{
	(void)arg;
	elog_thread_bind(1);
	for (uint32_t i = 0; i < XT_EVENTS; i++)
		elog_log(&seq_type, i, 2ull * i, 3ull * i);
	return NULL;
}

/* Every copy made while the writer laps the ring is whole events in order:
 * what the writer overwrote meanwhile was dropped, nothing torn kept. */
START_TEST(test_copy_beside_writer)
{
	elog_set_size(64);
	ck_assert_int_eq(elog_track_register(1, "worker 0"), 0);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, xt_writer, NULL), 0);
	static struct elog_event ev[64];
	uint32_t copies = 0;
	for (;;) {
		uint32_t n = elog_track_copy(1, ev, 64);
		for (uint32_t i = 0; i < n; i++) {
			ck_assert_uint_eq(ev[i].b, 2ull * ev[i].a);
			ck_assert_uint_eq(ev[i].c, 3ull * ev[i].a);
			ck_assert_uint_eq(ev[i].type, seq_type.id);
			if (i)
				ck_assert_uint_eq(ev[i].a, ev[i - 1].a + 1);
		}
		copies++;
		if (n && ev[n - 1].a == XT_EVENTS - 1)
			break;
	}
	pthread_join(th, NULL);
	ck_assert_uint_gt(copies, 0);
	ck_assert_uint_eq(elog_track_copy(1, ev, 64), 63);
	ck_assert_uint_eq(ev[62].a, XT_EVENTS - 1);
}
END_TEST

/* ---- the engine and the commands ---- */

static char dir[PATH_MAX];

static struct graph *elog_graph(uint32_t workers)
{
	tn_buffers(4096);
	memset(&tn_source, 0, sizeof(tn_source));
	tn_source.burst = 70;
	tn_source_next = 0;
	const struct node_reg *regs[] = { &tn_source_node, &tn_classify_node, &tn_forward_node, &tn_sink_a_node,
					  &tn_sink_b_node, &tn_sink_c_node };
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	char err[256];
	if (workers)
		ck_assert_msg(graph_workers_start(g, NULL, workers, err, sizeof(err)) == 0, "%s", err);
	/* Each worker running before a test takes the barrier: one not yet in
	 * its loop is not parked by it (and the barrier event counts 0). */
	for (uint32_t i = 1; i <= workers; i++) {
		struct graph_thread_info info = { 0 };
		for (int k = 0; k < 5000 && !info.running; k++) {
			ck_assert_int_eq(graph_thread_info(g, i, &info), 0);
			if (!info.running)
				usleep(1000);
		}
		ck_assert_msg(info.running, "worker %u not running after 5 s", i);
	}
	cli_set_graph(g);
	snprintf(dir, sizeof(dir), "/tmp/test-elog.XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
	char e[256];
	ck_assert_int_eq(cli_set_file_dir(dir, e, sizeof(e)), 0);
	return g;
}

static void elog_graph_done(struct graph *g)
{
	graph_destroy(g);
	buffer_main_free();
	char cmd[PATH_MAX + 16];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

struct cmd_run {
	const char *line;
	char *out;
	int rc;
};

static void *cmd_thread(void *arg)
{
	struct cmd_run *r = arg;
	r->rc = cli_exec_line(r->line, &r->out);
	return NULL;
}

/* Run a command on a thread of its own, as a CLI session does (the control
 * track). The caller frees the output. */
static int run(const char *line, char **out)
{
	struct cmd_run r = { .line = line };
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, cmd_thread, &r), 0);
	pthread_join(th, NULL);
	if (out)
		*out = r.out;
	else
		free(r.out);
	return r.rc;
}

static cJSON *load_json(const char *path)
{
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	static char text[8 << 20];
	size_t n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = 0;
	cJSON *root = cJSON_Parse(text);
	ck_assert_msg(root, "not JSON: %.200s", text);
	return root;
}

static const char *arg_str(cJSON *ev, const char *key)
{
	cJSON *v = cJSON_GetObjectItem(cJSON_GetObjectItem(ev, "args"), key);
	return cJSON_IsString(v) ? v->valuestring : "";
}

/* The saved file is Trace Event JSON: every event has ph, ts, pid and tid,
 * spans have dur; the barrier `clear runtime` takes is a span > 0 inside
 * the span of the command, on the control track, which is named. */
START_TEST(test_save_trace_event_json)
{
	struct graph *g = elog_graph(1);
	ck_assert_int_eq(run("clear runtime", NULL), 0);
	char line[PATH_MAX + 64], path[PATH_MAX + 16];
	snprintf(path, sizeof(path), "%s/elog.json", dir);
	snprintf(line, sizeof(line), "event-logger save %s", path);
	char *out;
	ck_assert_int_eq(run(line, &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "saved "));
	free(out);
	cJSON *root = load_json(path);
	ck_assert_str_eq(cJSON_GetObjectItem(root, "displayTimeUnit")->valuestring, "ns");
	cJSON *evs = cJSON_GetObjectItem(root, "traceEvents");
	ck_assert(cJSON_IsArray(evs));
	int pid = (int)getpid();
	cJSON *barrier = NULL, *cmd = NULL, *ev;
	bool control_named = false, worker_named = false;
	cJSON_ArrayForEach(ev, evs) {
		const char *ph = cJSON_GetObjectItem(ev, "ph")->valuestring;
		ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(ev, "ts")));
		ck_assert_int_eq(cJSON_GetObjectItem(ev, "pid")->valueint, pid);
		ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(ev, "tid")));
		ck_assert(!strcmp(ph, "X") || !strcmp(ph, "i") || !strcmp(ph, "M"));
		if (!strcmp(ph, "X"))
			ck_assert(cJSON_IsNumber(cJSON_GetObjectItem(ev, "dur")));
		if (!strcmp(ph, "i"))
			ck_assert_str_eq(cJSON_GetObjectItem(ev, "s")->valuestring, "t");
		const char *name = cJSON_GetObjectItem(ev, "name")->valuestring;
		int tid = cJSON_GetObjectItem(ev, "tid")->valueint;
		if (!strcmp(ph, "M") && !strcmp(name, "thread_name")) {
			control_named |= tid == ELOG_TRACK_CONTROL && !strcmp(arg_str(ev, "name"), "control");
			worker_named |= tid == 1 && !strcmp(arg_str(ev, "name"), "worker 0");
		}
		if (!strcmp(name, "barrier") && tid == ELOG_TRACK_CONTROL)
			barrier = ev;
		if (!strcmp(name, "cli") && !strcmp(arg_str(ev, "command"), "clear runtime"))
			cmd = ev;
	}
	ck_assert(control_named);
	ck_assert(worker_named);
	ck_assert_ptr_nonnull(barrier);
	ck_assert_ptr_nonnull(cmd);
	ck_assert_str_eq(cJSON_GetObjectItem(barrier, "ph")->valuestring, "X");
	ck_assert_double_gt(cJSON_GetObjectItem(barrier, "dur")->valuedouble, 0);
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(barrier, "args"), "threads")->valueint, 1);
	ck_assert_int_eq(cJSON_GetObjectItem(cmd, "tid")->valueint, ELOG_TRACK_CONTROL);
	ck_assert_int_eq(cJSON_GetObjectItem(cJSON_GetObjectItem(cmd, "args"), "status")->valueint, 0);
	/* The barrier lies inside the command that took it. */
	double bts = cJSON_GetObjectItem(barrier, "ts")->valuedouble, cts = cJSON_GetObjectItem(cmd, "ts")->valuedouble;
	ck_assert_double_ge(bts, cts);
	ck_assert_double_le(bts + cJSON_GetObjectItem(barrier, "dur")->valuedouble,
			    cts + cJSON_GetObjectItem(cmd, "dur")->valuedouble);
	cJSON_Delete(root);
	elog_graph_done(g);
}
END_TEST

START_TEST(test_save_outside_file_dir_refused)
{
	struct graph *g = elog_graph(0);
	char *out;
	ck_assert_int_lt(run("event-logger save /tmp/test-elog-outside.json", &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "outside cli-file-dir"));
	free(out);
	struct stat st;
	ck_assert_int_ne(stat("/tmp/test-elog-outside.json", &st), 0);
	elog_graph_done(g);
}
END_TEST

/* Bad arguments print usage and change nothing: the log is not cleared. */
START_TEST(test_bad_arguments)
{
	struct graph *g = elog_graph(0);
	static const char *const bad[] = { "show event-logger zero", "show event-logger 0", "show event-logger 5 6",
					   "event-logger clear now", "event-logger save", "event-logger save a b" };
	ck_assert_int_eq(run("clear runtime", NULL), 0);
	uint32_t before = elog_track_count(ELOG_TRACK_CONTROL);
	ck_assert_uint_ge(before, 2);
	for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
		char *out;
		ck_assert_int_eq(run(bad[i], &out), -EINVAL);
		ck_assert_msg(strstr(out, "usage: "), "%s: %s", bad[i], out);
		free(out);
	}
	/* Each failed command is itself logged (status -22), nothing else. */
	ck_assert_uint_eq(elog_track_count(ELOG_TRACK_CONTROL), before + ARRAY_LEN(bad));
	elog_graph_done(g);
}
END_TEST

/* show: the newest N, oldest first, in text and JSON. */
START_TEST(test_show)
{
	struct graph *g = elog_graph(0);
	ck_assert_int_eq(run("event-logger clear", NULL), 0);
	ck_assert_int_eq(run("clear runtime", NULL), 0);
	char *out;
	ck_assert_int_eq(run("show event-logger 2 json", &out), 0);
	cJSON *root = cJSON_Parse(out);
	free(out);
	ck_assert_ptr_nonnull(root);
	cJSON *evs = cJSON_GetObjectItem(root, "events");
	ck_assert_int_eq(cJSON_GetArraySize(evs), 2);
	/* After the clear's own event: clear runtime's command and, inside
	 * it, its barrier. Events sort by when they began: command first. */
	cJSON *e0 = cJSON_GetArrayItem(evs, 0), *e1 = cJSON_GetArrayItem(evs, 1);
	ck_assert_str_eq(cJSON_GetObjectItem(e0, "event")->valuestring, "cli");
	ck_assert_str_eq(arg_str(e0, "command"), "clear runtime");
	ck_assert_str_eq(cJSON_GetObjectItem(e1, "event")->valuestring, "barrier");
	ck_assert_str_eq(cJSON_GetObjectItem(e1, "thread")->valuestring, "control");
	ck_assert_double_gt(cJSON_GetObjectItem(e1, "duration_ns")->valuedouble, 0);
	cJSON_Delete(root);
	ck_assert_int_eq(run("show event-logger", &out), 0);
	ck_assert_ptr_nonnull(strstr(out, "Thread"));
	ck_assert_ptr_nonnull(strstr(out, "command \"clear runtime\" status 0"));
	ck_assert_ptr_nonnull(strstr(out, "barrier"));
	free(out);
	elog_graph_done(g);
}
END_TEST

/* Drops: one event per reason per period, with the count. The first drop
 * of a thread is logged at once. */
START_TEST(test_drop_burst)
{
	struct graph *g = elog_graph(0);
	tn_source.budget[0] = 70; /* seq 6, 13, ... 69: 10 dropped */
	for (int i = 0; i < 4; i++)
		graph_main_poll(g);
	struct elog_event ev[64];
	uint32_t n = elog_track_copy(0, ev, 64);
	uint32_t found = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct elog_type *t = elog_type_get(ev[i].type);
		if (strcmp(t->name, "drops"))
			continue;
		found++;
		ck_assert_str_eq(elog_string_get(ev[i].a), "tn-classify: every seventh packet");
		ck_assert_uint_eq(ev[i].b, 10);
	}
	ck_assert_uint_eq(found, 1);
	elog_graph_done(g);
}
END_TEST

/* The build and an arc change are logged on the thread that made them. */
START_TEST(test_graph_events)
{
	struct graph *g = elog_graph(0);
	char err[256];
	int node = graph_node_index(g, "tn-classify");
	ck_assert_int_eq(graph_set_next(g, (uint32_t)node, 1, "tn-sink-b", err, sizeof(err)), 0);
	struct elog_event ev[64];
	uint32_t n = elog_track_copy(0, ev, 64);
	bool build = false, arc = false;
	for (uint32_t i = 0; i < n; i++) {
		const char *name = elog_type_get(ev[i].type)->name;
		if (!strcmp(name, "graph-build"))
			build = ev[i].a == graph_n_nodes(g);
		if (!strcmp(name, "graph-arc"))
			arc = !strcmp(elog_string_get(ev[i].a), "tn-classify") && ev[i].b == 1 &&
			      !strcmp(elog_string_get((uint32_t)ev[i].c), "tn-sink-b");
	}
	ck_assert(build);
	ck_assert(arc);
	elog_graph_done(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("elog");
	TCase *tc = tcase_create("ring");
	tcase_add_test(tc, test_wraparound_keeps_newest);
	tcase_add_test(tc, test_clear_then_new_events);
	tcase_add_test(tc, test_size_rounds_to_power_of_two);
	tcase_add_test(tc, test_strings_interned);
	tcase_add_test(tc, test_unbound_logs_to_control);
	tcase_add_test(tc, test_copy_beside_writer);
	suite_add_tcase(s, tc);
	tc = tcase_create("cli");
	tcase_add_test(tc, test_save_trace_event_json);
	tcase_add_test(tc, test_save_outside_file_dir_refused);
	tcase_add_test(tc, test_bad_arguments);
	tcase_add_test(tc, test_show);
	tcase_add_test(tc, test_drop_burst);
	tcase_add_test(tc, test_graph_events);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
