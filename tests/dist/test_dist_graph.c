/* Distributor nodes in a real graph: a source on the main thread (its arc to
 * ethernet-input re-pointed to `distributor` by dist_graph_attach), 2
 * worker clones running handoff-input -> a sink that checks order and
 * atomicity and frees ("transmits") each packet. Half of the flows carry a
 * NIC hash, the other half are UDP packets hashed by the software Toeplitz.
 * Checks: per-flow order, no overlap, every packet transmitted or counted
 * under the distributor's errors or reclaimed at shutdown, no buffer left,
 * and traced packets name the worker that then handled them.
 *
 * Scheduling types: the same graph with the workers' handoff-input leading
 * to a node that delays packets at random and sends them to a test device
 * through interface-output; one flow typed ordered, one parallel (through
 * the distributor node's test hook), the rest atomic. The ordered flow must
 * leave the device from thread 0 in exactly its input order, having run on
 * both workers and come back out of order; the parallel one from both
 * workers.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "base/toeplitz.h"
#include "nodes/dist/dist_graph.h"
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

/* ---- scheduling types through interface-output ---- */

#define TYPED_ORDERED_FLOW 0
#define TYPED_PARALLEL_FLOW 1
#define ID_OFFSET 42 /* the packet id in the UDP payload: what the device reads */

static struct {
	uint32_t budget, next;
	uint32_t flow_seq[N_FLOWS];
	uint32_t last_out[N_FLOWS];
	uint8_t *seen;
	_Atomic uint32_t owner[DIST_N_TAGS];
	_Atomic uint32_t max_ordered; /* highest ordered id processed + 1 */
	_Atomic uint64_t violations, order_errors, late_ordered;
	_Atomic uint64_t parallel_on[N_WORKERS + 1];
	/* what the device sent, per graph thread */
	uint32_t *sent[N_WORKERS + 1];
	uint32_t n_sent[N_WORKERS + 1];
	uint32_t if_index;
} ty;

/* Packet id -> its flow: every third packet ordered, every third parallel. */
static uint32_t typed_flow(uint32_t id)
{
	return id % 3 == 0 ? TYPED_ORDERED_FLOW : id % 3 == 1 ? TYPED_PARALLEL_FLOW : 2 + (id * 7919u) % (N_FLOWS - 2);
}

static uint32_t packet_id(const struct buffer *b)
{
	uint32_t id;
	memcpy(&id, buffer_data((struct buffer *)b) + ID_OFFSET, sizeof(id));
	return id;
}

static uint8_t typed_type(const struct buffer *b)
{
	uint32_t f = typed_flow(packet_id(b));
	return f == TYPED_ORDERED_FLOW ? SCHED_TYPE_ORDERED : f == TYPED_PARALLEL_FLOW ? SCHED_TYPE_PARALLEL : SCHED_TYPE_ATOMIC;
}

static uint32_t typed_source_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (rt->thread_index != 0 || ty.next >= ty.budget)
		return 0;
	struct dist *d = dist_attached();
	if (d && dist_outstanding(d) > 1024)
		return 0;
	uint32_t bi[64];
	uint32_t n = buffer_alloc(bi, MIN(64u, ty.budget - ty.next), -1);
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint32_t id = ty.next++, flow = typed_flow(id);
		build_packet(b, flow);
		memcpy(buffer_data(b) + ID_OFFSET, &id, sizeof(id));
		struct meta m = { .id = id, .flow = flow, .seq = ty.flow_seq[flow]++ };
		memcpy(b->opaque, &m, sizeof(m));
	}
	node_trace_input(rt, bi, n);
	node_enqueue(rt, 0, bi, n);
	return n;
}

static const struct node_reg typed_source_node = {
	.name = "dtg-typed-source",
	.type = NODE_TYPE_INPUT,
	.fn = typed_source_fn,
	.n_next = 1,
	.next_nodes = { "ethernet-input" },
	.default_state = NODE_STATE_DISABLED,
};
NODE_REGISTER(typed_source_node)

/* On a worker: atomic packets checked as the sink does; ordered ones noted
 * when they run behind a later one; now and then a pause, so that the
 * workers' batches finish out of order; then all go to the test device. */
static uint32_t typed_work_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t w1 = rt->thread_index;
	uint64_t s = 0x9e3779b97f4a7c15ull ^ ((uint64_t)w1 << 32) ^ f->n_vectors;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		struct meta m;
		memcpy(&m, b->opaque, sizeof(m));
		b->tx_if = ty.if_index;
		if (m.flow == TYPED_ORDERED_FLOW) {
			uint32_t max = atomic_load(&ty.max_ordered);
			while (max < m.id + 1 && !atomic_compare_exchange_weak(&ty.max_ordered, &max, m.id + 1))
				;
			if (max > m.id + 1)
				atomic_fetch_add(&ty.late_ordered, 1);
			continue;
		}
		if (m.flow == TYPED_PARALLEL_FLOW) {
			atomic_fetch_add(&ty.parallel_on[w1], 1);
			continue;
		}
		uint32_t expect = 0, tag = b->flow_tag & HANDOFF_TAG_MASK;
		if (!atomic_compare_exchange_strong(&ty.owner[tag], &expect, w1) && expect != w1)
			atomic_fetch_add(&ty.violations, 1);
		if (m.seq + 1 <= ty.last_out[m.flow])
			atomic_fetch_add(&ty.order_errors, 1);
		ty.last_out[m.flow] = m.seq + 1;
	}
	s ^= s << 13;
	s ^= s >> 7;
	if (s % 4 == 0) { /* a pause of up to 50 us */
		uint64_t end = time_now_ns() + s % 50000;
		while (time_now_ns() < end)
			cpu_relax();
	}
	/* Atomic flows are released at the next poll, after the device has
	 * them: the owner word goes first. */
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		if (!(b->flags & BUFFER_F_DIST_ORDERED) && typed_type(b) == SCHED_TYPE_ATOMIC)
			atomic_store(&ty.owner[b->flow_tag & HANDOFF_TAG_MASK], 0);
	}
	node_forward_frame(rt, 0, f);
	return f->n_vectors;
}

static const struct node_reg typed_work_node = {
	.name = "dtg-typed-work",
	.type = NODE_TYPE_INTERNAL,
	.fn = typed_work_fn,
	.n_next = 1,
	.next_nodes = { "interface-output" },
};
NODE_REGISTER(typed_work_node)

/* The test device: records each packet's id per sending thread, frees. */
static uint32_t tdev_rx(struct device *d, uint16_t q, uint32_t *bi, uint32_t n)
{
	(void)d, (void)q, (void)bi, (void)n;
	return 0;
}

static uint32_t tdev_tx(struct device *d, uint16_t q, const uint32_t *bi, uint32_t n)
{
	(void)d, (void)q;
	struct graph_thread *self = graph_thread_self();
	uint32_t t = self ? graph_thread_index(self) : 0;
	for (uint32_t i = 0; i < n; i++)
		ty.sent[t][ty.n_sent[t]++] = packet_id(buffer_get(bi[i]));
	buffer_free(bi, n);
	return n;
}

static void tdev_destroy(struct device *d)
{
	free(d);
}

static const struct device_ops tdev_ops = {
	.tx_node = "null-tx", .rx_burst = tdev_rx, .tx_burst = tdev_tx, .destroy = tdev_destroy
};

START_TEST(test_graph_scheduling_types)
{
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 16384;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	ty.budget = opt_packets / 2;
	ty.seen = calloc(ty.budget, 1);
	for (uint32_t t = 0; t <= N_WORKERS; t++)
		ty.sent[t] = calloc(ty.budget, sizeof(uint32_t));
	/* The device first: workers read the interface table without locks. */
	struct device *dev = aligned_alloc(64, ROUND_UP(sizeof(*dev), 64));
	ck_assert_ptr_nonnull(dev);
	memset(dev, 0, sizeof(*dev));
	dev->ops = &tdev_ops;
	dev->driver = dev_driver_find("null");
	dev->n_tx_queues = N_WORKERS + 1;    /* one per thread */
	ck_assert_int_eq(dev_register(dev, "t0"), 0);
	ck_assert_int_eq(dev_set_admin_up(dev, true), 0);
	ty.if_index = dev->index;

	struct graph_config gc;
	graph_config_default(&gc);
	gc.idle_max_us = 50;
	struct graph *g = graph_create(&gc, err, sizeof(err));
	ck_assert_msg(g && graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(dev_graph_attach(g, err, sizeof(err)) == 0, "%s", err); /* the arc to null-tx */
	ck_assert_msg(graph_workers_start(g, NULL, N_WORKERS, err, sizeof(err)) == 0, "%s", err);
	struct dist_config dc;
	dist_config_default(&dc);
	dc.n_workers = N_WORKERS;
	dc.backlog = 64;
	struct dist *d = dist_create(&dc, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	/* The untyped source stays off: this case has its own. */
	graph_node_set_state(g, 0, (uint32_t)graph_node_index(g, "dtg-source"), NODE_STATE_DISABLED);
	graph_node_set_state(g, 0, (uint32_t)graph_node_index(g, "dtg-typed-source"), NODE_STATE_POLLING);
	ck_assert_msg(dist_graph_attach(g, d, err, sizeof(err)) == 0, "%s", err);
	dist_graph_set_type_fn(typed_type);
	int hin = graph_node_index(g, "handoff-input");
	ck_assert_int_eq(graph_set_next(g, (uint32_t)hin, 0, "dtg-typed-work", err, sizeof(err)), 0);
	ck_assert_int_eq(graph_trace_add(g, "dtg-typed-source", 6, err, sizeof(err)), 0);

	while (ty.next < ty.budget)
		graph_main_poll(g);
	ck_assert_uint_eq(dist_graph_drain(g, d, 30000000000ull), 0);
	graph_workers_stop(g);
	ck_assert_uint_eq(dist_graph_detach(g, d), 0);
	dist_graph_set_type_fn(NULL);

	/* Thread 0 sent the ordered flow alone, in exactly its input order. */
	uint32_t last = 0;
	for (uint32_t i = 0; i < ty.n_sent[0]; i++) {
		uint32_t id = ty.sent[0][i];
		ck_assert_uint_eq(typed_flow(id), TYPED_ORDERED_FLOW);
		if (i && id <= last)
			ck_abort_msg("ordered output %u: id %u after %u", i, id, last);
		last = id;
	}
	struct dist_stats st;
	dist_stats(d, &st);
	struct dist_worker_stats ws[N_WORKERS];
	uint64_t ordered = 0, parallel_sent = 0;
	for (uint32_t w = 0; w < N_WORKERS; w++) {
		dist_worker_stats(d, w, &ws[w]);
		ck_assert_uint_gt(ws[w].ordered, 0);
		ck_assert_uint_gt(ws[w].parallel, 0);
		ck_assert_uint_gt(atomic_load(&ty.parallel_on[w + 1]), 0);
		ck_assert_uint_eq(ws[w].reorder_full, 0);
		ordered += ws[w].ordered;
		for (uint32_t i = 0; i < ty.n_sent[w + 1]; i++) {
			ck_assert_uint_ne(typed_flow(ty.sent[w + 1][i]), TYPED_ORDERED_FLOW);
			parallel_sent += typed_flow(ty.sent[w + 1][i]) == TYPED_PARALLEL_FLOW;
		}
	}
	/* Every ordered packet handed to a worker left, none as a gap. */
	ck_assert_uint_eq(ty.n_sent[0], ordered);
	ck_assert_uint_eq(st.released, ordered);
	ck_assert_uint_eq(st.gaps, 0);
	ck_assert_uint_eq(st.unordered, 0);
	ck_assert_uint_eq(st.bad_returns, 0);
	ck_assert_uint_eq(parallel_sent, ws[0].parallel + ws[1].parallel);
	ck_assert_uint_gt(atomic_load(&ty.late_ordered), 0);
	ck_assert_uint_eq(atomic_load(&ty.violations), 0);
	ck_assert_uint_eq(atomic_load(&ty.order_errors), 0);
	/* Everything sent or counted at the distributor. */
	int dn = graph_node_index(g, "distributor");
	uint64_t dropped = 0;
	for (uint32_t r = 0; r < DIST_N_DROP; r++)
		dropped += graph_node_error_count(g, (uint32_t)dn, r);
	uint64_t total = 0;
	for (uint32_t t = 0; t <= N_WORKERS; t++)
		total += ty.n_sent[t];
	ck_assert_uint_eq(total + dropped, ty.budget);
	printf("graph, types: %u packets; ordered %llu (workers %llu / %llu, %llu ran behind a later one), all sent "
	       "in order from thread 0; parallel on workers %llu / %llu; %llu dropped at the distributor\n",
	       ty.budget, (unsigned long long)ordered, (unsigned long long)ws[0].ordered,
	       (unsigned long long)ws[1].ordered, (unsigned long long)atomic_load(&ty.late_ordered),
	       (unsigned long long)ws[0].parallel, (unsigned long long)ws[1].parallel, (unsigned long long)dropped);

	/* Traced packets 0..5: the distributor's record says the type, and the
	 * ordered ones their sequence numbers 0, 1 (ids 0 and 3). */
	ck_assert_uint_eq(graph_trace_n_packets(g), 6);
	uint32_t n_ordered = 0, n_parallel = 0, n_atomic = 0, seq_sum = 0;
	for (uint32_t p = 0; p < 6; p++) {
		const struct trace_record *r;
		uint32_t n = graph_trace_packet(g, p, &r, NULL);
		for (uint32_t i = 0; i < n; i++) {
			char buf[160];
			graph_trace_format(g, &r[i], buf, sizeof(buf));
			if ((int)r[i].node_index != dn)
				continue;
			const char *k = strstr(buf, " ordered seq ");
			n_ordered += k != NULL;
			if (k)
				seq_sum += (uint32_t)atoi(k + 13) + 1;
			n_parallel += strstr(buf, " parallel -> worker ") != NULL;
			n_atomic += strstr(buf, " atomic -> worker ") != NULL;
		}
	}
	ck_assert_uint_eq(n_ordered, 2);
	ck_assert_uint_eq(seq_sum, 3); /* seq 0 and 1 */
	ck_assert_uint_eq(n_parallel, 2);
	ck_assert_uint_eq(n_atomic, 2);

	dist_free(d);
	dev_graph_detach(g);
	graph_destroy(g);
	dev_delete_all();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
	for (uint32_t t = 0; t <= N_WORKERS; t++)
		free(ty.sent[t]);
	free(ty.seen);
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
	tcase_add_test(tc, test_graph_scheduling_types);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
