/* Distributor nodes in a real graph: a source on the main thread (its arc to
 * ethernet-input re-pointed to `distributor` by dist_graph_attach), 2
 * worker clones running handoff-input -> a sink that checks order and
 * atomicity and frees ("transmits") each packet. Half of the flows carry a
 * NIC hash, the other half are UDP packets hashed by the software Toeplitz.
 * Checks: per-flow order, no overlap, every packet transmitted or counted
 * under the distributor's errors or reclaimed at shutdown, no buffer left,
 * and traced packets name the worker that then handled them.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "graph/toeplitz.h"
#include "nodes/dist.h"
#include "tests/check_run.h"

#define N_FLOWS 512
#define N_WORKERS 2

static uint32_t opt_packets = 200000;

static struct {
	uint32_t budget, next, burst;
	uint32_t flow_seq[N_FLOWS];
	uint32_t last_out[N_FLOWS]; /* plain: ordered by the handoff */
	uint8_t *seen;
	_Atomic uint32_t owner[DIST_N_TAGS];
	_Atomic uint64_t violations, order_errors, sent;
} t;

struct meta {
	uint32_t id, flow, seq;
};

static void build_packet(struct buffer *b, uint32_t flow)
{
	uint8_t *p = buffer_data(b);
	memset(p, 0, 64);
	memcpy(p, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", 14);
	p[14] = 0x45;
	p[23] = 17; /* UDP */
	uint32_t src = 0x0a000000u + flow, dst = 0xc0a80001u;
	for (int i = 0; i < 4; i++) {
		p[26 + i] = (uint8_t)(src >> (24 - 8 * i));
		p[30 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	p[34] = (uint8_t)((1024 + flow) >> 8);
	p[35] = (uint8_t)(1024 + flow);
	p[37] = 53;
	b->current_length = 64;
	if (flow & 1) { /* as if the NIC had hashed it */
		b->flow_hash = flow * 2654435761u;
		b->flags |= BUFFER_F_FLOW_HASH;
	}
}

static uint32_t source_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (rt->thread_index != 0 || t.next >= t.budget)
		return 0;
	/* Paced like a link the workers can keep up with, most of the time:
	 * drops are for the library suite to exercise. */
	struct dist *d = dist_attached();
	if (d && dist_outstanding(d) > 1024)
		return 0;
	uint32_t bi[64];
	uint32_t n = buffer_alloc(bi, MIN(t.burst, t.budget - t.next), -1);
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint32_t flow = (t.next * 7919u) % N_FLOWS;
		struct meta m = { .id = t.next++, .flow = flow, .seq = t.flow_seq[flow]++ };
		build_packet(b, flow);
		memcpy(b->opaque, &m, sizeof(m));
	}
	node_trace_input(rt, bi, n);
	node_enqueue(rt, 0, bi, n);
	return n;
}

static const struct node_reg source_node = {
	.name = "dtg-source",
	.type = NODE_TYPE_INPUT,
	.fn = source_fn,
	.n_next = 1,
	.next_nodes = { "ethernet-input" },
};
NODE_REGISTER(source_node)

static uint32_t sink_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t w1 = rt->thread_index;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		struct meta m;
		memcpy(&m, b->opaque, sizeof(m));
		uint32_t expect = 0, tag = b->flow_tag & HANDOFF_TAG_MASK;
		if (!atomic_compare_exchange_strong(&t.owner[tag], &expect, w1) && expect != w1)
			atomic_fetch_add(&t.violations, 1);
		if (m.seq + 1 <= t.last_out[m.flow])
			atomic_fetch_add(&t.order_errors, 1);
		t.last_out[m.flow] = m.seq + 1;
		t.seen[m.id]++;
	}
	for (uint32_t i = 0; i < f->n_vectors; i++)
		atomic_store(&t.owner[buffer_get(f->buffers[i])->flow_tag & HANDOFF_TAG_MASK], 0);
	atomic_fetch_add(&t.sent, f->n_vectors);
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg sink_node = {
	.name = "dtg-sink",
	.type = NODE_TYPE_INTERNAL,
	.fn = sink_fn,
};
NODE_REGISTER(sink_node)

START_TEST(test_graph_two_workers)
{
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 16384;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	t.budget = opt_packets;
	t.burst = 64;
	t.seen = calloc(opt_packets, 1);
	struct graph_config gc;
	graph_config_default(&gc);
	gc.idle_max_us = 50;
	struct graph *g = graph_create(&gc, err, sizeof(err));
	ck_assert_msg(g && graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_workers_start(g, NULL, N_WORKERS, err, sizeof(err)) == 0, "%s", err);
	struct dist_config dc;
	dist_config_default(&dc);
	dc.n_workers = N_WORKERS;
	dc.backlog = 64;
	struct dist *d = dist_create(&dc, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	ck_assert_msg(dist_graph_attach(g, d, err, sizeof(err)) == 0, "%s", err);
	int hin = graph_node_index(g, "handoff-input");
	ck_assert_int_eq(graph_set_next(g, (uint32_t)hin, 0, "dtg-sink", err, sizeof(err)), 0);
	ck_assert_int_eq(graph_trace_add(g, "dtg-source", 8, err, sizeof(err)), 0);

	while (t.next < t.budget)
		graph_main_poll(g);
	ck_assert_uint_eq(dist_graph_drain(g, d, 30000000000ull), 0);
	graph_workers_stop(g);
	uint64_t reclaimed = dist_graph_detach(g, d);

	int dn = graph_node_index(g, "distributor");
	uint64_t dropped = graph_node_error_count(g, (uint32_t)dn, DIST_DROP_WORKER_FULL) +
			   graph_node_error_count(g, (uint32_t)dn, DIST_DROP_ALL_FULL);
	ck_assert_uint_eq(atomic_load(&t.violations), 0);
	ck_assert_uint_eq(atomic_load(&t.order_errors), 0);
	ck_assert_uint_eq(reclaimed, 0);
	ck_assert_uint_eq(atomic_load(&t.sent) + dropped, opt_packets);
	uint32_t dup = 0;
	for (uint32_t i = 0; i < opt_packets; i++)
		dup += t.seen[i] > 1;
	ck_assert_uint_eq(dup, 0);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	struct dist_worker_stats ws[N_WORKERS];
	for (uint32_t w = 0; w < N_WORKERS; w++) {
		dist_worker_stats(d, w, &ws[w]);
		ck_assert_uint_eq(ws[w].handed, ws[w].returned);
		ck_assert_uint_gt(ws[w].handed, 0);
	}
	printf("graph: %u packets, %llu sent, %llu dropped at the distributor, workers %llu / %llu\n", opt_packets,
	       (unsigned long long)atomic_load(&t.sent), (unsigned long long)dropped,
	       (unsigned long long)ws[0].handed, (unsigned long long)ws[1].handed);

	/* Each traced packet: the distributor's record names worker k, and the
	 * sink's record comes from graph thread k + 1. */
	int sink = graph_node_index(g, "dtg-sink");
	ck_assert_uint_eq(graph_trace_n_packets(g), 8);
	for (uint32_t p = 0; p < 8; p++) {
		const struct trace_record *r;
		uint32_t n = graph_trace_packet(g, p, &r, NULL);
		int worker = -1, sink_thread = -1;
		for (uint32_t i = 0; i < n; i++) {
			char buf[160];
			graph_trace_format(g, &r[i], buf, sizeof(buf));
			const char *k = strstr(buf, "-> worker ");
			if ((int)r[i].node_index == dn && k)
				worker = atoi(k + 10);
			if ((int)r[i].node_index == sink)
				sink_thread = r[i].thread_index;
		}
		ck_assert_int_ge(worker, 0);
		ck_assert_int_eq(sink_thread, worker + 1);
	}
	dist_free(d);
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
	free(t.seen);
}
END_TEST

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "--packets"))
		opt_packets = (uint32_t)strtoul(argv[2], NULL, 0);
	Suite *s = suite_create("dist-graph");
	TCase *tc = tcase_create("nodes");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_graph_two_workers);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
