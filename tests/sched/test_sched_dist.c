/* The class queues in front of the distributor, in a real graph: a source
 * on thread 0 sends to sched-ingress (classes defined through the CLI,
 * after the distributor attached), 2 worker clones run handoff-input -> a
 * deliberately slow sink that checks per-flow order and exclusivity and
 * frees ("transmits") each packet.
 *
 * The source is paced by the workers, not by a clock: after a first
 * SOURCE_LEAD bursts it sends one burst of 64 per 16 packets delivered,
 * four times what the workers take, so the class queues fill however fast
 * or slow the box is.
 *
 *   - priority: EF (priority 0, 1 packet in 32) is delivered whole, exact
 *     count, while bulk (priority 7) is dropped as "class queue full";
 *     every packet is delivered or counted, per class, exactly once;
 *   - weights 1:3 between two classes of one priority: their shares of
 *     what the workers took while both were backlogged are 1/4 and 3/4
 *     (within 0.03);
 *   - detach with packets still queued: show buffers names them under
 *     "sched", nothing unattributed; they are freed and counted as
 *     dropped at shutdown, the pool is whole;
 *   - the CLI: type parsed and shown, a bad type refused with nothing
 *     changed; traces name class, priority, type and worker.
 */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "graph/graph.h"
#include "nodes/dist/dist_graph.h"
#include "nodes/sched/sched_io.h"
#include "tests/check_run.h"

#define N_WORKERS 2
#define N_FLOWS 64
#define BURST 64
#define SOURCE_LEAD 64 /* bursts sent before pacing starts: fills the queues */
#define PACE 16        /* packets delivered per burst sent after that */
#define MAX_DSCP 64

static struct {
	/* the source's plan: dscp per packet slot of a burst */
	uint8_t plan[BURST];
	uint32_t bursts, sent_bursts;
	uint64_t sent_dscp[MAX_DSCP];
	uint32_t flow_seq[MAX_DSCP][N_FLOWS];
	/* the sink's */
	uint32_t last[MAX_DSCP][N_FLOWS]; /* seq + 1 of the last delivered: one worker per flow at a time */
	_Atomic uint32_t owner[DIST_N_TAGS];
	_Atomic uint64_t delivered, delivered_dscp[MAX_DSCP];
	_Atomic uint64_t order_errors, overlaps;
	_Atomic uint32_t slow_ns; /* per packet */
	bool spread[MAX_DSCP];    /* a parallel class: no order or exclusivity to check */
} t;

struct meta {
	uint8_t dscp;
	uint32_t flow, seq;
};

static void build_packet(struct buffer *b, uint8_t dscp, uint32_t flow)
{
	uint8_t *p = buffer_data(b);
	memset(p, 0, 64);
	memcpy(p, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00", 14);
	p[14] = 0x45;
	p[15] = (uint8_t)(dscp << 2);
	p[23] = 17; /* UDP */
	uint32_t src = 0x0a000000u + flow + dscp * 256u, dst = 0xc0a80001u;
	for (int i = 0; i < 4; i++) {
		p[26 + i] = (uint8_t)(src >> (24 - 8 * i));
		p[30 + i] = (uint8_t)(dst >> (24 - 8 * i));
	}
	p[34] = (uint8_t)((1024 + flow) >> 8);
	p[35] = (uint8_t)(1024 + flow);
	p[37] = 53;
	b->current_length = 64;
}

static bool source_may_send(void)
{
	if (t.sent_bursts >= t.bursts)
		return false;
	if (t.sent_bursts < SOURCE_LEAD)
		return true;
	return atomic_load(&t.delivered) >= (uint64_t)PACE * (t.sent_bursts - SOURCE_LEAD);
}

static uint32_t source_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (rt->thread_index != 0 || !source_may_send())
		return 0;
	uint32_t bi[BURST];
	uint32_t n = buffer_alloc(bi, BURST, -1);
	for (uint32_t i = 0; i < n; i++) {
		uint8_t dscp = t.plan[i];
		uint32_t flow = (t.sent_bursts * 7u + i) % N_FLOWS;
		struct meta m = { .dscp = dscp, .flow = flow, .seq = t.flow_seq[dscp][flow]++ };
		build_packet(buffer_get(bi[i]), dscp, flow);
		memcpy(buffer_get(bi[i])->opaque, &m, sizeof(m));
		t.sent_dscp[dscp]++;
	}
	t.sent_bursts++;
	node_trace_input(rt, bi, n);
	node_enqueue(rt, 0, bi, n);
	return n;
}

static const struct node_reg source_node = {
	.name = "sdt-source",
	.type = NODE_TYPE_INPUT,
	.fn = source_fn,
	.n_next = 1,
	.next_nodes = { "sched-ingress" },
	.default_state = NODE_STATE_DISABLED,
};
NODE_REGISTER(source_node)

static uint32_t sink_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t w1 = rt->thread_index, n = f->n_vectors;
	uint64_t ns = (uint64_t)atomic_load(&t.slow_ns) * n;
	struct timespec d = { (time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull) };
	if (ns)
		nanosleep(&d, NULL);
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		struct meta m;
		memcpy(&m, b->opaque, sizeof(m));
		atomic_fetch_add(&t.delivered_dscp[m.dscp], 1);
		if (t.spread[m.dscp])
			continue;
		uint32_t expect = 0, tag = b->flow_tag & HANDOFF_TAG_MASK;
		if (!atomic_compare_exchange_strong(&t.owner[tag], &expect, w1) && expect != w1)
			atomic_fetch_add(&t.overlaps, 1);
		if (m.seq + 1 <= t.last[m.dscp][m.flow])
			atomic_fetch_add(&t.order_errors, 1);
		t.last[m.dscp][m.flow] = m.seq + 1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct meta m;
		memcpy(&m, buffer_get(f->buffers[i])->opaque, sizeof(m));
		if (!t.spread[m.dscp])
			atomic_store(&t.owner[buffer_get(f->buffers[i])->flow_tag & HANDOFF_TAG_MASK], 0);
	}
	atomic_fetch_add(&t.delivered, n);
	buffer_free(f->buffers, n);
	return n;
}

static const struct node_reg sink_node = {
	.name = "sdt-sink",
	.type = NODE_TYPE_INTERNAL,
	.fn = sink_fn,
};
NODE_REGISTER(sink_node)

/* ---- fixture ---- */

static struct graph *g;
static struct dist *d;

static void setup(void)
{
	char err[256];
	memset(&t, 0, sizeof(t));
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 16384;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	struct graph_config gc;
	graph_config_default(&gc);
	gc.idle_max_us = 50;
	g = graph_create(&gc, err, sizeof(err));
	ck_assert_msg(g && graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(graph_workers_start(g, NULL, N_WORKERS, err, sizeof(err)) == 0, "%s", err);
	struct dist_config dc;
	dist_config_default(&dc);
	dc.n_workers = N_WORKERS;
	dc.backlog = 8;
	dc.ring_lines = 4; /* 32 packets: backpressure reaches the class queues at once */
	d = dist_create(&dc, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	ck_assert_msg(dist_graph_attach(g, d, err, sizeof(err)) == 0, "%s", err);
	int hin = graph_node_index(g, "handoff-input");
	ck_assert_int_eq(graph_set_next(g, (uint32_t)hin, 0, "sdt-sink", err, sizeof(err)), 0);
	cli_set_graph(g);
}

static void teardown(void)
{
	cli_set_graph(NULL);
	sched_io_free_all();
	dist_free(d);
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}

static void cli_ok(const char *line)
{
	char *out = NULL;
	int rc = cli_exec_line(line, &out);
	ck_assert_msg(rc == 0, "%s: %d %s", line, rc, out ? out : "");
	free(out);
}

static void run_source(uint32_t bursts)
{
	t.bursts = bursts;
	int src = graph_node_index(g, "sdt-source");
	graph_node_set_state(g, 0, (uint32_t)src, NODE_STATE_POLLING);
	while (t.sent_bursts < t.bursts)
		graph_main_poll(g);
	graph_node_set_state(g, 0, (uint32_t)src, NODE_STATE_DISABLED);
}

static uint64_t node_errors(const char *node, uint16_t code)
{
	return graph_node_error_count(g, (uint32_t)graph_node_index(g, node), code);
}

/* ---- priority under backpressure ---- */

START_TEST(test_priority_under_backpressure)
{
	cli_ok("sched class ef priority 0 match dscp 46");
	cli_ok("sched class bulk priority 7 match dscp 10");
	int ef = sched_class_find("ef"), bulk = sched_class_find("bulk");
	ck_assert_ptr_nonnull(sched_front.evq);
	for (uint32_t i = 0; i < BURST; i++)
		t.plan[i] = i % 32 == 0 ? 46 : 10;
	atomic_store(&t.slow_ns, 5000);
	char err[256];
	ck_assert_int_eq(graph_trace_add(g, "sdt-source", 8, err, sizeof(err)), 0);
	run_source(600);
	ck_assert_uint_eq(dist_graph_drain(g, d, 60000000000ull), 0);
	graph_workers_stop(g);
	ck_assert_uint_eq(dist_graph_detach(g, d), 0);

	const struct sched_front *f = &sched_front;
	uint64_t sent_ef = t.sent_dscp[46], sent_bulk = t.sent_dscp[10];
	uint64_t got_ef = atomic_load(&t.delivered_dscp[46]), got_bulk = atomic_load(&t.delivered_dscp[10]);
	printf("priority: ef %llu sent %llu delivered; bulk %llu sent %llu delivered %llu class queue full %llu "
	       "distributor drops\n",
	       (unsigned long long)sent_ef, (unsigned long long)got_ef, (unsigned long long)sent_bulk,
	       (unsigned long long)got_bulk, (unsigned long long)f->queue_full[bulk],
	       (unsigned long long)f->dist_dropped[bulk]);
	printf("ef: queued %llu sent %llu queue full %llu dist dropped %llu\n", (unsigned long long)f->queued[ef],
	       (unsigned long long)f->sent[ef], (unsigned long long)f->queue_full[ef],
	       (unsigned long long)f->dist_dropped[ef]);
	fflush(stdout);
	ck_assert_uint_eq(sent_ef + sent_bulk, 600 * BURST);
	ck_assert_uint_eq(got_ef, sent_ef);
	ck_assert_uint_eq(f->queue_full[ef], 0);
	ck_assert_uint_eq(f->dist_dropped[ef], 0);
	ck_assert_uint_gt(f->queue_full[bulk], 0);
	ck_assert_uint_eq(got_bulk + f->queue_full[bulk] + f->dist_dropped[bulk], sent_bulk);
	ck_assert_uint_eq(f->sent[ef], got_ef);
	ck_assert_uint_eq(f->sent[bulk], got_bulk);
	ck_assert_uint_eq(node_errors("sched-ingress", 0), f->queue_full[bulk]);
	ck_assert_uint_eq(atomic_load(&t.order_errors), 0);
	ck_assert_uint_eq(atomic_load(&t.overlaps), 0);
	ck_assert_ptr_null(f->evq); /* detached: the queues went with the distributor */

	/* Traced packets: sched-ingress's record gives class, priority, type
	 * and "queued for the workers"; the sink's record is a worker's. */
	int sin = graph_node_index(g, "sched-ingress"), sink = graph_node_index(g, "sdt-sink");
	ck_assert_uint_eq(graph_trace_n_packets(g), 8);
	for (uint32_t p = 0; p < 8; p++) {
		const struct trace_record *r;
		uint32_t n = graph_trace_packet(g, p, &r, NULL);
		bool queued = false;
		int sink_thread = -1;
		for (uint32_t i = 0; i < n; i++) {
			char buf[160];
			graph_trace_format(g, &r[i], buf, sizeof(buf));
			if ((int)r[i].node_index == sin) {
				const char *want = p ? "class 2 bulk priority 7 type atomic" : "class 1 ef priority 0 type atomic";
				ck_assert_msg(strstr(buf, want), "%s", buf);
				queued = strstr(buf, "queued for the workers") != NULL;
			}
			if ((int)r[i].node_index == sink)
				sink_thread = r[i].thread_index;
		}
		/* the first burst found the queues empty: all 8 were delivered */
		ck_assert(queued);
		ck_assert_int_ge(sink_thread, 1);
	}
}
END_TEST

/* ---- weights within one priority ---- */

START_TEST(test_weights_under_backpressure)
{
	cli_ok("sched class a priority 3 weight 1 match dscp 12");
	cli_ok("sched class b priority 3 weight 3 type parallel match dscp 14");
	int a = sched_class_find("a"), b = sched_class_find("b");
	for (uint32_t i = 0; i < BURST; i++)
		t.plan[i] = i % 2 ? 14 : 12;
	t.spread[14] = true;
	atomic_store(&t.slow_ns, 5000);
	run_source(600);
	/* Both still backlogged: the shares so far are the scheduler's. */
	const struct sched_front *f = &sched_front;
	uint64_t sa = stat_read(&f->sent[a]), sb = stat_read(&f->sent[b]);
	ck_assert_uint_gt(f->queue_full[a], 0);
	ck_assert_uint_gt(f->queue_full[b], 0);
	ck_assert_uint_gt(sched_front_held_class((uint32_t)a), 0);
	ck_assert_uint_gt(sched_front_held_class((uint32_t)b), 0);
	/* thread 0 between loops: the count from the counters (the stats
	 * segment's, no barrier) is the queues' own */
	ck_assert_uint_eq(sched_front_held_counted((uint32_t)a), sched_front_held_class((uint32_t)a));
	ck_assert_uint_eq(sched_front_held_counted((uint32_t)b), sched_front_held_class((uint32_t)b));
	/* What sched-dist took out of the class queues is 1:3 to a turn; what
	 * the workers took differs by what waited in the stash or was dropped
	 * from it. */
	struct evq_queue_stats qa, qb;
	ck_assert_int_eq(evq_queue_stats(f->evq, (uint32_t)a, &qa), 0);
	ck_assert_int_eq(evq_queue_stats(f->evq, (uint32_t)b, &qb), 0);
	double dshare = (double)qb.dispatched / (double)(qa.dispatched + qb.dispatched);
	double share = (double)sb / (double)(sa + sb);
	printf("weights 1:3: dispatched a %llu b %llu (b's share %.4f), taken by the distributor a %llu b %llu "
	       "(b's share %.4f), dropped from the stash a %llu b %llu\n",
	       (unsigned long long)qa.dispatched, (unsigned long long)qb.dispatched, dshare, (unsigned long long)sa,
	       (unsigned long long)sb, share, (unsigned long long)f->dist_dropped[a],
	       (unsigned long long)f->dist_dropped[b]);
	ck_assert_msg(dshare > 0.745 && dshare < 0.755, "b's dispatched share %.4f, want 0.75", dshare);
	ck_assert_msg(share > 0.70 && share < 0.80, "b's share %.4f, want 0.75", share);
	atomic_store(&t.slow_ns, 0);
	ck_assert_uint_eq(dist_graph_drain(g, d, 60000000000ull), 0);
	graph_workers_stop(g);
	ck_assert_uint_eq(dist_graph_detach(g, d), 0);
	for (uint32_t dscp = 12; dscp <= 14; dscp += 2) {
		uint32_t id = (uint32_t)(dscp == 12 ? a : b);
		ck_assert_uint_eq(atomic_load(&t.delivered_dscp[dscp]) + f->queue_full[id] + f->dist_dropped[id],
				  t.sent_dscp[dscp]);
	}
	ck_assert_uint_eq(atomic_load(&t.order_errors), 0);
	ck_assert_uint_eq(atomic_load(&t.overlaps), 0);
}
END_TEST

/* ---- detach with packets queued ---- */

START_TEST(test_detach_frees_queued)
{
	cli_ok("sched class bulk priority 7 match dscp 10");
	int bulk = sched_class_find("bulk");
	for (uint32_t i = 0; i < BURST; i++)
		t.plan[i] = 10;
	atomic_store(&t.slow_ns, 200000); /* 0.2 ms a packet: the queue stays full */
	run_source(SOURCE_LEAD);
	uint64_t left = dist_graph_drain(g, d, 20000000ull);
	ck_assert_uint_gt(left, 0);
	atomic_store(&t.slow_ns, 0);
	graph_workers_stop(g);
	const struct sched_front *f = &sched_front;
	uint64_t held = sched_front_held();
	ck_assert_uint_gt(held, 0);
	ck_assert_uint_eq(sched_front_held_counted((uint32_t)bulk), held);
	/* show buffers: the class queues name what they hold, and every
	 * buffer in use has a holder. */
	struct buffer_attribution ba;
	ck_assert_int_eq(buffer_attribute(&ba), 0);
	uint64_t in_queues = 0;
	for (uint32_t i = 0; i < ba.n_holdings; i++)
		if (!strcmp(ba.holdings[i].holder, "sched") && !strcmp(ba.holdings[i].where, "class queues for the workers"))
			in_queues += ba.holdings[i].n;
	int64_t unattributed = ba.n_unattributed;
	buffer_attribution_free(&ba);
	ck_assert_uint_eq(in_queues, held);
	ck_assert_int_eq(unattributed, 0);
	uint64_t freed = dist_graph_detach(g, d);
	ck_assert_uint_ge(freed, held);
	ck_assert_uint_eq(f->shutdown[bulk], held);
	ck_assert_uint_eq(sched_front_held_counted((uint32_t)bulk), 0);
	struct dist_stats ds;
	dist_stats(d, &ds);
	ck_assert_uint_eq(freed, held + ds.drops[DIST_DROP_SHUTDOWN]);
	ck_assert_uint_eq(atomic_load(&t.delivered_dscp[10]) + f->queue_full[bulk] + f->dist_dropped[bulk] + freed,
			  t.sent_dscp[10]);
}
END_TEST

/* ---- class-queue-depth ---- */

/* `sched { class-queue-depth 128 }`: with the workers too slow the queue
 * fills to exactly 128 (1024 by default), the rest is "class queue full",
 * and show sched says the depth. */
START_TEST(test_class_queue_depth)
{
	sched_io_set_class_depth(128);
	cli_ok("sched class bulk priority 7 match dscp 10");
	int bulk = sched_class_find("bulk");
	const struct sched_front *f = &sched_front;
	ck_assert_uint_eq(f->depth, 128);
	for (uint32_t i = 0; i < BURST; i++)
		t.plan[i] = 10;
	atomic_store(&t.slow_ns, 200000); /* 0.2 ms a packet: the queue stays full */
	run_source(SOURCE_LEAD);
	struct evq_queue_stats st;
	ck_assert_int_eq(evq_queue_stats(f->evq, (uint32_t)bulk, &st), 0);
	ck_assert_uint_eq(st.held, 128);
	ck_assert_uint_gt(f->queue_full[bulk], 0);
	char *out = NULL;
	ck_assert_int_eq(cli_exec_line("show sched", &out), 0);
	ck_assert_msg(out && strstr(out, "Class queues for the workers (128 packets per class)"), "%s", out);
	free(out);
	atomic_store(&t.slow_ns, 0);
	ck_assert_uint_eq(dist_graph_drain(g, d, 60000000000ull), 0);
	graph_workers_stop(g);
	dist_graph_detach(g, d);
	ck_assert_uint_eq(atomic_load(&t.delivered_dscp[10]) + f->queue_full[bulk] + f->dist_dropped[bulk],
			  t.sent_dscp[10]);
	sched_io_set_class_depth(SCHED_FRONT_DEPTH);
}
END_TEST

/* ---- the CLI ---- */

START_TEST(test_cli_type)
{
	char *out = NULL;
	cli_ok("sched class ef priority 0 type ordered match dscp 46");
	int ef = sched_class_find("ef");
	ck_assert_int_gt(ef, 0);
	ck_assert_uint_eq(sched_class_table.type[ef], SCHED_TYPE_ORDERED);
	/* Bad: nothing changes. */
	static const char *const bad[] = {
		"sched class ef priority 0 type bogus match dscp 46",
		"sched class ef priority 0 type match dscp 46",
		"sched class ef priority 0 type Atomic match dscp 46",
		"sched class x priority 1 type parallel",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_ne(cli_exec_line(bad[i], &out), 0);
		free(out);
		out = NULL;
	}
	ck_assert_uint_eq(sched_class_table.n, 1);
	ck_assert_uint_eq(sched_class_table.type[ef], SCHED_TYPE_ORDERED);
	ck_assert_int_lt(sched_class_find("x"), 0);
	cli_ok("sched class p priority 2 weight 4 type parallel match protocol udp");
	ck_assert_int_eq(cli_exec_line("show sched", &out), 0);
	ck_assert_msg(strstr(out, "ef priority 0 weight 1 type ordered match dscp 46"), "%s", out);
	ck_assert_msg(strstr(out, "p priority 2 weight 4 type parallel match protocol udp"), "%s", out);
	ck_assert_msg(strstr(out, "Class queues for the workers"), "%s", out);
	free(out);
	ck_assert_int_eq(cli_exec_line("show sched json", &out), 0);
	ck_assert_msg(strstr(out, "\"parallel\""), "%s", out);
	free(out);
	graph_workers_stop(g);
	dist_graph_detach(g, d);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sched-dist");
	TCase *tc = tcase_create("front");
	tcase_set_timeout(tc, 180);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_cli_type);
	tcase_add_test(tc, test_priority_under_backpressure);
	tcase_add_test(tc, test_weights_under_backpressure);
	tcase_add_test(tc, test_detach_frees_queued);
	tcase_add_test(tc, test_class_queue_depth);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
