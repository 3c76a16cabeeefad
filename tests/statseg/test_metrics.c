/* The Prometheus / OpenMetrics formatter (base/statseg_metrics.h) over a
 * hand-built snapshot: the exact text 0.0.4 exposition (HELP and TYPE once
 * per family, labels from dimensions and names, escaping, holes and
 * missing queues left out, name vectors not samples, the names of our own
 * for /err/ and /buffer/), the OpenMetrics differences (family names
 * without _total, info type, # EOF) and content negotiation. */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_run.h"
#include "base/statseg.h"
#include "base/statseg_metrics.h"

#define MAX_VALS 200

static struct statseg_value vals[MAX_VALS];
static uint64_t data[MAX_VALS][16];
static char names[MAX_VALS][4][STATSEG_LABEL_SIZE];
static struct statseg_snapshot snap;

struct dim {
	const char *name;
	uint32_t n, labels;
};
static const struct dim ONE = { "", 1, STATSEG_NO_LABELS };

static uint32_t add(const char *name, uint32_t type, struct dim d0, struct dim d1)
{
	uint32_t i = snap.n++;
	struct statseg_value *v = &vals[i];
	memset(v, 0, sizeof(*v));
	snprintf(v->e.name, sizeof(v->e.name), "%s", name);
	v->e.type = type;
	v->e.dims[0] = d0.n;
	v->e.dims[1] = d1.n;
	v->e.dim_labels[0] = d0.labels;
	v->e.dim_labels[1] = d1.labels;
	snprintf(v->e.dim_names[0], STATSEG_DIM_NAME_SIZE, "%s", d0.name);
	snprintf(v->e.dim_names[1], STATSEG_DIM_NAME_SIZE, "%s", d1.name);
	v->e.row_lengths = STATSEG_NO_LABELS;
	v->dir_index = i;
	v->matched = true;
	if (type == STATSEG_NAME_VECTOR)
		v->labels = names[i];
	else
		v->v = data[i];
	return i;
}

static void set(uint32_t ent, const uint64_t *w, size_t n)
{
	memcpy(data[ent], w, n * sizeof(*w));
}

/* Two interfaces and a hole between them (a deleted interface), eth0 with
 * two rx queues, the other (a name to escape) with one; two threads, two
 * nodes; two errors of one node; a pool; a generic counter and a gauge
 * vector whose dimension has no names. */
static void build(void)
{
	memset(&snap, 0, sizeof(snap));
	snap.updates = 7;
	snap.update_ns = 1500000000ull;
	uint32_t thr = add("/sys/threads/names", STATSEG_NAME_VECTOR, (struct dim){ "thread", 2, STATSEG_NO_LABELS }, ONE);
	strcpy(names[thr][0], "main");
	strcpy(names[thr][1], "worker 0");
	uint32_t ifn = add("/if/names", STATSEG_NAME_VECTOR, (struct dim){ "interface", 3, STATSEG_NO_LABELS }, ONE);
	strcpy(names[ifn][0], "eth0");
	strcpy(names[ifn][1], "");
	strcpy(names[ifn][2], "we\"ird\\na\nme");
	struct dim ifs = { "interface", 3, ifn }, q = { "queue", 2, STATSEG_NO_LABELS };
	uint32_t rxq = add("/if/rx-queues", STATSEG_GAUGE_VECTOR, ifs, ONE);
	set(rxq, (uint64_t[]){ 2, 0, 1 }, 3);
	uint32_t rx = add("/if/rx", STATSEG_COMBINED_VECTOR, ifs, q);
	vals[rx].e.row_lengths = rxq;
	set(rx, (uint64_t[]){ 10, 640, 20, 1280, 99, 99, 99, 99, 5, 300, 99, 99 }, 12);
	uint32_t nn = add("/node/names", STATSEG_NAME_VECTOR, (struct dim){ "node", 2, STATSEG_NO_LABELS }, ONE);
	strcpy(names[nn][0], "ip4-input");
	strcpy(names[nn][1], "ip4-lookup");
	struct dim t = { "thread", 2, thr };
	uint32_t calls = add("/node/calls", STATSEG_COUNTER_VECTOR, t, (struct dim){ "node", 2, nn });
	set(calls, (uint64_t[]){ 1, 2, 3, 4 }, 4);
	set(add("/err/ip4-input/ttl expired", STATSEG_COUNTER_VECTOR, t, ONE), (uint64_t[]){ 6, 7 }, 2);
	set(add("/err/ip4-input/bad \"checksum\"/length", STATSEG_COUNTER_VECTOR, t, ONE), (uint64_t[]){ 0, 1 }, 2);
	set(add("/buffer/pool0/total", STATSEG_SCALAR_GAUGE, ONE, ONE), (uint64_t[]){ 100 }, 1);
	set(add("/buffer/pool0/in-use", STATSEG_SCALAR_GAUGE, ONE, ONE), (uint64_t[]){ 3 }, 1);
	set(add("/cli/commands-run", STATSEG_SCALAR_COUNTER, ONE, ONE), (uint64_t[]){ 12 }, 1);
	set(add("/dist/in-flight", STATSEG_GAUGE_VECTOR, (struct dim){ "worker", 2, STATSEG_NO_LABELS }, ONE),
	    (uint64_t[]){ 8, 9 }, 2);
	snap.vals = vals;
}

static const char expected_text[] =
	"# HELP sluice_build_info The sluice version serving these metrics\n"
	"# TYPE sluice_build_info gauge\n"
	"sluice_build_info{version=\"1.2.3\"} 1\n"
	"# HELP sluice_statseg_updates_total Copy passes of the stats segment's writer\n"
	"# TYPE sluice_statseg_updates_total counter\n"
	"sluice_statseg_updates_total 7\n"
	"# HELP sluice_statseg_update_timestamp_seconds When the stats segment's writer last copied the counters "
	"(seconds since 1970)\n"
	"# TYPE sluice_statseg_update_timestamp_seconds gauge\n"
	"sluice_statseg_update_timestamp_seconds 1.5\n"
	"# HELP sluice_thread_info The name of each datapath thread by index\n"
	"# TYPE sluice_thread_info gauge\n"
	"sluice_thread_info{thread=\"0\",name=\"main\"} 1\n"
	"sluice_thread_info{thread=\"1\",name=\"worker 0\"} 1\n"
	"# HELP sluice_interface_rx_queues Receive queues of the interface\n"
	"# TYPE sluice_interface_rx_queues gauge\n"
	"sluice_interface_rx_queues{interface=\"eth0\"} 2\n"
	"sluice_interface_rx_queues{interface=\"we\\\"ird\\\\na\\nme\"} 1\n"
	"# HELP sluice_interface_rx_packets_total Received on the interface's rx queue: packets\n"
	"# TYPE sluice_interface_rx_packets_total counter\n"
	"sluice_interface_rx_packets_total{interface=\"eth0\",queue=\"0\"} 10\n"
	"sluice_interface_rx_packets_total{interface=\"eth0\",queue=\"1\"} 20\n"
	"sluice_interface_rx_packets_total{interface=\"we\\\"ird\\\\na\\nme\",queue=\"0\"} 5\n"
	"# HELP sluice_interface_rx_bytes_total Received on the interface's rx queue: bytes\n"
	"# TYPE sluice_interface_rx_bytes_total counter\n"
	"sluice_interface_rx_bytes_total{interface=\"eth0\",queue=\"0\"} 640\n"
	"sluice_interface_rx_bytes_total{interface=\"eth0\",queue=\"1\"} 1280\n"
	"sluice_interface_rx_bytes_total{interface=\"we\\\"ird\\\\na\\nme\",queue=\"0\"} 300\n"
	"# HELP sluice_node_calls_total Times the node ran on the thread\n"
	"# TYPE sluice_node_calls_total counter\n"
	"sluice_node_calls_total{node=\"ip4-input\",thread=\"0\"} 1\n"
	"sluice_node_calls_total{node=\"ip4-lookup\",thread=\"0\"} 2\n"
	"sluice_node_calls_total{node=\"ip4-input\",thread=\"1\"} 3\n"
	"sluice_node_calls_total{node=\"ip4-lookup\",thread=\"1\"} 4\n"
	"# HELP sluice_errors_total Packets counted by a node's error counter, by reason (show errors)\n"
	"# TYPE sluice_errors_total counter\n"
	"sluice_errors_total{node=\"ip4-input\",reason=\"ttl expired\",thread=\"0\"} 6\n"
	"sluice_errors_total{node=\"ip4-input\",reason=\"ttl expired\",thread=\"1\"} 7\n"
	"sluice_errors_total{node=\"ip4-input\",reason=\"bad \\\"checksum\\\"/length\",thread=\"0\"} 0\n"
	"sluice_errors_total{node=\"ip4-input\",reason=\"bad \\\"checksum\\\"/length\",thread=\"1\"} 1\n"
	"# HELP sluice_buffer_pool_buffers Buffers the pool holds in all (free + cached + in_use)\n"
	"# TYPE sluice_buffer_pool_buffers gauge\n"
	"sluice_buffer_pool_buffers{pool=\"0\"} 100\n"
	"# HELP sluice_buffers Buffers of the pool by state: free in the pool, cached per thread, in_use by packets\n"
	"# TYPE sluice_buffers gauge\n"
	"sluice_buffers{pool=\"0\",state=\"in_use\"} 3\n"
	"# HELP sluice_cli_commands_run_total sluice stats segment entry /cli/commands-run\n"
	"# TYPE sluice_cli_commands_run_total counter\n"
	"sluice_cli_commands_run_total 12\n"
	"# HELP sluice_distributor_in_flight The distributor, per worker: in-flight\n"
	"# TYPE sluice_distributor_in_flight gauge\n"
	"sluice_distributor_in_flight{worker=\"0\"} 8\n"
	"sluice_distributor_in_flight{worker=\"1\"} 9\n";

static char *format(enum statseg_metrics_format f)
{
	char *text;
	size_t len;
	ck_assert_int_eq(statseg_metrics_format(&snap, f, "1.2.3", &text, &len), 0);
	ck_assert_uint_eq(strlen(text), len);
	return text;
}

START_TEST(text_exact)
{
	build();
	char *text = format(STATSEG_METRICS_TEXT);
	ck_assert_str_eq(text, expected_text);
	free(text);
}
END_TEST

static bool has_line(const char *text, const char *line)
{
	size_t n = strlen(line);
	for (const char *p = text; (p = strstr(p, line)); p += n)
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return true;
	return false;
}

static unsigned count_prefix(const char *text, const char *prefix)
{
	unsigned n = 0;
	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		n += !strncmp(p, prefix, strlen(prefix));
	return n;
}

/* The same samples; families named without _total/_info, counters typed
 * counter, info typed info, escaped HELP quotes, and # EOF last. */
START_TEST(openmetrics)
{
	build();
	char *om = format(STATSEG_METRICS_OPENMETRICS), *text = format(STATSEG_METRICS_TEXT);
	ck_assert(has_line(om, "# TYPE sluice_interface_rx_packets counter"));
	ck_assert(has_line(om, "# HELP sluice_interface_rx_packets Received on the interface's rx queue: packets"));
	ck_assert(has_line(om, "sluice_interface_rx_packets_total{interface=\"eth0\",queue=\"1\"} 20"));
	ck_assert(has_line(om, "# TYPE sluice_build info"));
	ck_assert(has_line(om, "sluice_build_info{version=\"1.2.3\"} 1"));
	ck_assert(has_line(om, "# TYPE sluice_errors counter"));
	ck_assert(has_line(om, "# TYPE sluice_buffers gauge"));
	size_t n = strlen(om);
	ck_assert(n > 6 && !strcmp(om + n - 6, "# EOF\n"));
	ck_assert_uint_eq(count_prefix(om, "# EOF"), 1);
	/* one HELP and one TYPE per family, in both formats, and the samples
	 * themselves the same lines */
	ck_assert_uint_eq(count_prefix(om, "# TYPE "), 13);
	ck_assert_uint_eq(count_prefix(om, "# HELP "), 13);
	ck_assert_uint_eq(count_prefix(text, "# TYPE "), 13);
	ck_assert_uint_eq(count_prefix(text, "# TYPE sluice_errors_total "), 1);
	ck_assert_uint_eq(count_prefix(om, "sluice_"), count_prefix(text, "sluice_"));
	ck_assert_uint_eq(count_prefix(om, "sluice_errors_total{"), 4);
	free(om);
	free(text);
}
END_TEST

/* A hole leaves out its row in every entry; name vectors are never
 * samples; an escaped HELP in OpenMetrics. */
START_TEST(holes_and_names)
{
	build();
	char *text = format(STATSEG_METRICS_TEXT);
	ck_assert_ptr_null(strstr(text, "interface=\"\""));
	ck_assert_ptr_null(strstr(text, " 99\n"));
	ck_assert_ptr_null(strstr(text, "sluice_if_names"));
	ck_assert_ptr_null(strstr(text, "sluice_node_names"));
	ck_assert_uint_eq(count_prefix(text, "sluice_interface_rx_packets_total{"), 3);
	free(text);
}
END_TEST

/* More families than the formatter's first allocation (64): each
 * family's stream keeps writing where it was opened (it once wrote through
 * a moved array, and sluice's scrape hung in fflush on a freed lock). */
START_TEST(many_families)
{
	memset(&snap, 0, sizeof(snap));
	snap.vals = vals;
	for (uint32_t i = 0; i < MAX_VALS; i++) {
		char name[32];
		snprintf(name, sizeof(name), "/many/c%u", i);
		set(add(name, STATSEG_SCALAR_COUNTER, ONE, ONE), (uint64_t[]){ 1000 + i }, 1);
	}
	char *text = format(STATSEG_METRICS_TEXT);
	ck_assert_uint_eq(count_prefix(text, "# TYPE sluice_many_c"), MAX_VALS);
	for (uint32_t i = 0; i < MAX_VALS; i++) {
		char line[64];
		snprintf(line, sizeof(line), "sluice_many_c%u_total %u", i, 1000 + i);
		ck_assert_msg(has_line(text, line), "%s", line);
	}
	free(text);
}
END_TEST

START_TEST(negotiate)
{
	static const struct {
		const char *accept;
		enum statseg_metrics_format f;
	} cases[] = {
		{ NULL, STATSEG_METRICS_TEXT },
		{ "", STATSEG_METRICS_TEXT },
		{ "*/*", STATSEG_METRICS_TEXT },
		{ "text/plain;version=0.0.4", STATSEG_METRICS_TEXT },
		{ "application/openmetrics-text", STATSEG_METRICS_OPENMETRICS },
		/* what Prometheus 2.x sends */
		{ "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,"
		  "text/plain;version=0.0.4;q=0.5,*/*;q=0.1",
		  STATSEG_METRICS_OPENMETRICS },
		{ "text/plain;version=0.0.4;q=1, application/openmetrics-text;q=0.5", STATSEG_METRICS_TEXT },
		{ "application/openmetrics-text; version=1.0.0; q=0", STATSEG_METRICS_TEXT },
		{ "Application/OpenMetrics-Text ; q=0.9, */*;q=0.1", STATSEG_METRICS_OPENMETRICS },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		ck_assert_msg(statseg_metrics_negotiate(cases[i].accept) == cases[i].f, "Accept: %s", cases[i].accept);
	ck_assert_str_eq(statseg_metrics_content_type(STATSEG_METRICS_TEXT), "text/plain; version=0.0.4; charset=utf-8");
	ck_assert_str_eq(statseg_metrics_content_type(STATSEG_METRICS_OPENMETRICS),
			 "application/openmetrics-text; version=1.0.0; charset=utf-8");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("statseg_metrics");
	TCase *tc = tcase_create("format");
	tcase_add_test(tc, text_exact);
	tcase_add_test(tc, openmetrics);
	tcase_add_test(tc, holes_and_names);
	tcase_add_test(tc, negotiate);
	tcase_add_test(tc, many_families);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
