/* The dispatch trace on a test graph (tn-source -> tn-classify -> a sink or
 * error-drop): every node's input recorded once per packet with one trace
 * id, exactly max records, a full ring dropping records (counted) but no
 * packet, and the file libpcap reads back. */
#include <check.h>
#include <errno.h>
#include <pcap/pcap.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check_run.h"
#include "tests/graph/test_nodes.h"
#include "graph/pkt_filter.h"

static const struct node_reg *const classify_graph[] = { &tn_source_node, &tn_classify_node, &tn_forward_node,
							  &tn_sink_a_node, &tn_sink_b_node, &tn_sink_c_node };

static char path[64];

static void setup(void)
{
	tn_buffers(4096);
	memset(&tn_source, 0, sizeof(tn_source));
	for (int i = 0; i < 3; i++) {
		tn_sink_logs[i] = calloc(1, sizeof(struct tn_sink_log));
		ck_assert_ptr_nonnull(tn_sink_logs[i]);
	}
	snprintf(path, sizeof(path), "/tmp/sluice-dtrace-%d.pcapng", (int)getpid());
}

static void teardown(void)
{
	for (int i = 0; i < 3; i++)
		free(tn_sink_logs[i]);
	unlink(path);
}

static const char *filter; /* for the next start, NULL: none */

static struct graph *start(uint32_t max, uint32_t burst, uint64_t packets, const char *node)
{
	tn_source.burst = burst;
	tn_source.budget[0] = packets;
	struct graph *g = tn_graph(classify_graph, ARRAY_LEN(classify_graph));
	char err[256];
	struct graph_dtrace_params p = { .max = max, .mark_node = node ? graph_node_index(g, node) : -1,
					 .file = fopen(path, "w"), .path = path };
	ck_assert_ptr_nonnull(p.file);
	if (filter)
		ck_assert_ptr_nonnull(p.filter = pkt_filter_compile(filter, err, sizeof(err)));
	ck_assert_int_eq(graph_dtrace_start(g, &p, err, sizeof(err)), 0);
	struct graph_dtrace_params again = p;
	again.file = fopen("/dev/null", "w");
	again.filter = NULL; /* the first start took it */
	ck_assert_int_eq(graph_dtrace_start(g, &again, err, sizeof(err)), -EBUSY);
	return g;
}

/* Records in the file, each 64 bytes (the test packets' length). */
static uint32_t read_back(void)
{
	char err[PCAP_ERRBUF_SIZE];
	pcap_t *pc = pcap_open_offline(path, err);
	ck_assert_msg(pc != NULL, "%s", err);
	struct pcap_pkthdr *h;
	const u_char *data;
	uint32_t n = 0;
	while (pcap_next_ex(pc, &h, &data) == 1) {
		ck_assert_uint_eq(h->caplen, 64);
		n++;
	}
	pcap_close(pc);
	return n;
}

START_TEST(test_every_node_once)
{
	struct graph *g = start(1000, 4, 21, NULL);
	for (int i = 0; i < 10; i++)
		graph_main_poll(g);
	ck_assert_int_eq(graph_dtrace_stop(g), 0);
	ck_assert_int_eq(graph_dtrace_stop(g), -ENOENT);
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	ck_assert(!st.on);
	/* source, classify, then a sink or error-drop: 3 records a packet. */
	ck_assert_uint_eq(st.claimed, 63);
	ck_assert_uint_eq(st.written, 63);
	ck_assert_uint_eq(st.dropped, 0);
	ck_assert_uint_eq(read_back(), 63);
	graph_destroy(g);
}
END_TEST

START_TEST(test_max_exact)
{
	struct graph *g = start(10, 4, 40, NULL);
	for (int i = 0; i < 12; i++)
		graph_main_poll(g);
	struct graph_dtrace_status st;
	for (int i = 0; i < 500; i++) { /* the writer closes on its own at max: 5 s at most */
		graph_dtrace_status(g, &st);
		if (st.written == 10)
			break;
		usleep(10000);
	}
	ck_assert(st.on && !st.armed);
	ck_assert_uint_eq(st.claimed, 10);
	ck_assert_uint_eq(st.written, 10);
	ck_assert_int_eq(graph_dtrace_stop(g), 0);
	ck_assert_uint_eq(read_back(), 10);
	graph_destroy(g);
}
END_TEST

/* From tn-classify on only: 2 records a packet. */
START_TEST(test_from_node)
{
	struct graph *g = start(1000, 8, 16, "tn-classify");
	for (int i = 0; i < 4; i++)
		graph_main_poll(g);
	ck_assert_int_eq(graph_dtrace_stop(g), 0);
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	ck_assert_uint_eq(st.written, 32);
	graph_destroy(g);
}
END_TEST

/* A filter decides at the input node; what it takes is recorded at every
 * node after, what it refuses nowhere. */
static uint64_t filtered(const char *expr)
{
	filter = expr;
	struct graph *g = start(1000, 8, 16, NULL);
	filter = NULL;
	for (int i = 0; i < 4; i++)
		graph_main_poll(g);
	ck_assert_int_eq(graph_dtrace_stop(g), 0);
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	ck_assert_str_eq(st.filter, expr);
	graph_destroy(g);
	return st.written;
}

START_TEST(test_filter)
{
	ck_assert_uint_eq(filtered("len == 64"), 48);
	ck_assert_uint_eq(filtered("len != 64"), 0);
}
END_TEST

/* Full frames far faster than the writer: records are dropped and counted,
 * every packet still reaches its sink, every buffer comes back. */
START_TEST(test_full_ring_drops_records_not_packets)
{
	const uint32_t n = 40000;
	struct graph *g = start(GRAPH_DTRACE_MAX, FRAME_SIZE, n, NULL);
	for (uint32_t i = 0; i < n / FRAME_SIZE + 2; i++)
		graph_main_poll(g);
	ck_assert_int_eq(graph_dtrace_stop(g), 0);
	struct graph_dtrace_status st;
	graph_dtrace_status(g, &st);
	ck_assert_uint_eq(st.written + st.dropped, 3ull * n);
	ck_assert_uint_eq(st.written, st.claimed);
	ck_assert_uint_gt(st.dropped, 0);
	uint32_t seen = tn_sink_logs[0]->n + tn_sink_logs[1]->n + tn_sink_logs[2]->n;
	uint32_t sevenths = 0;
	for (uint32_t s = 0; s < n; s++)
		sevenths += s % 7 == 6;
	ck_assert_uint_eq(seen, n - sevenths);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)graph_node_index(g, "tn-classify"), 0), sevenths);
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dispatch-trace");
	TCase *tc = tcase_create("dtrace");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_every_node_once);
	tcase_add_test(tc, test_max_exact);
	tcase_add_test(tc, test_from_node);
	tcase_add_test(tc, test_filter);
	tcase_add_test(tc, test_full_ring_drops_records_not_packets);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
