/* Engine suite: frames and per-next order, arcs, clones, barrier, trace. */
#include <check.h>

#include "tests/check_run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph.h"
#include "tests/graph/test_nodes.h"

static const struct node_reg *const classify_graph[] = { &tn_source_node, &tn_classify_node, &tn_forward_node,
							  &tn_sink_a_node, &tn_sink_b_node, &tn_sink_c_node };

static void logs_alloc(void)
{
	for (int i = 0; i < 3; i++) {
		tn_sink_logs[i] = calloc(1, sizeof(struct tn_sink_log));
		ck_assert_ptr_nonnull(tn_sink_logs[i]);
	}
}

static void logs_free(void)
{
	for (int i = 0; i < 3; i++) {
		free(tn_sink_logs[i]);
		tn_sink_logs[i] = NULL;
	}
}

static void source_reset(uint32_t burst)
{
	memset(&tn_source, 0, sizeof(tn_source));
	tn_source.burst = burst;
	tn_source_next = 0;
}

/* Every sink sees exactly its packets, in the order they were produced,
 * including across frames when one call enqueues more than 256. */
START_TEST(test_enqueue_keeps_per_next_order)
{
	tn_buffers(8192);
	logs_alloc();
	source_reset(FRAME_SIZE);
	tn_source.budget[0] = 5000;
	struct graph *g = tn_graph(classify_graph, ARRAY_LEN(classify_graph));
	for (int i = 0; i < 100; i++)
		graph_main_poll(g);
	uint32_t expect_n[3] = { 0, 0, 0 };
	for (uint32_t s = 0; s < 5000; s++)
		if (s % 7 != 6)
			expect_n[s % 3]++;
	for (int k = 0; k < 3; k++) {
		ck_assert_uint_eq(tn_sink_logs[k]->n, expect_n[k]);
		uint32_t s = (uint32_t)k;
		for (uint32_t i = 0; i < tn_sink_logs[k]->n; i++, s += 3) {
			while (s % 7 == 6)
				s += 3;
			ck_assert_uint_eq(tn_sink_logs[k]->seq[i], s);
		}
	}
	int cl = graph_node_index(g, "tn-classify");
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)cl, 0), 5000 / 7);
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)cl, 0), 5000 / 7);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	graph_destroy(g);
	logs_free();
	buffer_main_free();
}
END_TEST

/* One call enqueueing more than a frame holds: several frames, in order. */
static uint32_t big_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	static int done;
	if (done++)
		return 0;
	uint32_t bi[1000];
	ck_assert_uint_eq(buffer_alloc(bi, 1000, -1), 1000);
	for (uint32_t i = 0; i < 1000; i++)
		tn_set_seq(bi[i], i);
	node_enqueue(rt, 0, bi, 1000);
	return 1000;
}

static const struct node_reg big_node = {
	.name = "tn-big", .type = NODE_TYPE_INPUT, .fn = big_fn, .n_next = 1, .next_nodes = { "tn-sink-a" }
};

START_TEST(test_enqueue_spans_frames)
{
	tn_buffers(2048);
	logs_alloc();
	const struct node_reg *regs[] = { &big_node, &tn_sink_a_node };
	struct graph *g = tn_graph(regs, 2);
	graph_main_poll(g);
	ck_assert_uint_eq(tn_sink_logs[0]->n, 1000);
	for (uint32_t i = 0; i < 1000; i++)
		ck_assert_uint_eq(tn_sink_logs[0]->seq[i], i);
	struct node_stats st;
	graph_node_stats(g, 0, (uint32_t)graph_node_index(g, "tn-sink-a"), &st);
	ck_assert_uint_eq(st.calls, 4); /* 256 + 256 + 256 + 232 */
	ck_assert_uint_eq(st.vectors, 1000);
	graph_destroy(g);
	logs_free();
	buffer_main_free();
}
END_TEST

/* The per-object helpers (node_enqueue_x1/_x4, the speculative frame)
 * mixed with the bulk ones in one call, over two next indices that lead to
 * the same node: each sink sees exactly its packets in order, each arc
 * counts exactly what went along it, and no frame is overwritten. */
enum { SPEC_NEXT_A, SPEC_NEXT_B, SPEC_NEXT_A2, SPEC_N_NEXT };
#define SPEC_PACKETS 3000u

static uint16_t spec_next_of(uint32_t s)
{
	if ((s / 5) % 2)
		return SPEC_NEXT_B;
	return s % 3 == 0 ? SPEC_NEXT_A2 : SPEC_NEXT_A;
}

static uint32_t spec_src_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	static uint32_t made;
	uint32_t bi[303];
	uint32_t n = MIN(303u, SPEC_PACKETS - made);
	if (!n)
		return 0;
	ck_assert_uint_eq(buffer_alloc(bi, n, -1), n);
	for (uint32_t i = 0; i < n; i++)
		tn_set_seq(bi[i], made + i);
	made += n;
	node_enqueue(rt, 0, bi, n);
	return n;
}

/* Chunks of four, each by one way: _x4 with per-packet nexts, four _x1,
 * or two node_enqueue and two node_next_slots/commit; the tail by _x1. */
static uint32_t spec_split_fn(struct node_runtime *rt, struct frame *f)
{
	const uint32_t *bi = f->buffers;
	uint32_t n = f->n_vectors, i = 0;
	for (; i + 4 <= n; i += 4) {
		uint16_t nx[4];
		for (int k = 0; k < 4; k++)
			nx[k] = spec_next_of(tn_seq(bi[i + k]));
		switch ((tn_seq(bi[i]) / 4) % 3) {
		case 0:
			node_enqueue_x4(rt, bi + i, nx[0], nx[1], nx[2], nx[3]);
			break;
		case 1:
			for (int k = 0; k < 4; k++)
				node_enqueue_x1(rt, nx[k], bi[i + k]);
			break;
		default:
			node_enqueue(rt, nx[0], bi + i, 1);
			node_enqueue(rt, nx[1], bi + i + 1, 1);
			for (int k = 2; k < 4; k++) {
				*node_next_slots(rt, nx[k], 1) = bi[i + k];
				node_next_commit(rt, nx[k], 1);
			}
			break;
		}
	}
	for (; i < n; i++)
		node_enqueue_x1(rt, spec_next_of(tn_seq(bi[i])), bi[i]);
	return n;
}

static const struct node_reg spec_src_node = {
	.name = "tn-spec-src", .type = NODE_TYPE_INPUT, .fn = spec_src_fn, .n_next = 1,
	.next_nodes = { "tn-spec-split" }
};
static const struct node_reg spec_split_node = {
	.name = "tn-spec-split", .fn = spec_split_fn, .n_next = SPEC_N_NEXT,
	.next_nodes = { [SPEC_NEXT_A] = "tn-sink-a", [SPEC_NEXT_B] = "tn-sink-b", [SPEC_NEXT_A2] = "tn-sink-a" }
};

START_TEST(test_enqueue_x1_x4_mixed_with_bulk)
{
	tn_buffers(8192);
	logs_alloc();
	const struct node_reg *regs[] = { &spec_src_node, &spec_split_node, &tn_sink_a_node, &tn_sink_b_node };
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	for (int i = 0; i < 20; i++)
		graph_main_poll(g);
	uint32_t n_a = 0, n_b = 0;
	uint64_t arc[SPEC_N_NEXT] = { 0 };
	for (uint32_t s = 0; s < SPEC_PACKETS; s++) {
		uint16_t nx = spec_next_of(s);
		arc[nx]++;
		if (nx == SPEC_NEXT_B)
			ck_assert_uint_eq(tn_sink_logs[1]->seq[n_b++], s);
		else
			ck_assert_uint_eq(tn_sink_logs[0]->seq[n_a++], s);
	}
	ck_assert_uint_eq(tn_sink_logs[0]->n, n_a);
	ck_assert_uint_eq(tn_sink_logs[1]->n, n_b);
	uint32_t split = (uint32_t)graph_node_index(g, "tn-spec-split");
	for (uint16_t k = 0; k < SPEC_N_NEXT; k++)
		ck_assert_uint_eq(graph_arc_packets(g, split, k), arc[k]);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	graph_destroy(g);
	logs_free();
	buffer_main_free();
}
END_TEST

START_TEST(test_missing_next_names_both_nodes)
{
	char err[256] = "";
	struct graph *g = graph_create(NULL, err, sizeof(err));
	ck_assert_int_ge(graph_add_node(g, &tn_bad_node, err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &tn_sink_a_node, err, sizeof(err)), 0);
	ck_assert_int_eq(graph_build(g, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "graph: node 'tn-bad' names next node 'no-such-node', which does not exist");
	graph_destroy(g);
}
END_TEST

START_TEST(test_duplicate_node_refused)
{
	char err[256] = "";
	struct graph *g = graph_create(NULL, err, sizeof(err));
	ck_assert_int_ge(graph_add_node(g, &tn_sink_a_node, err, sizeof(err)), 0);
	ck_assert_int_eq(graph_add_node(g, &tn_sink_a_node, err, sizeof(err)), -EEXIST);
	ck_assert_str_eq(err, "graph: node 'tn-sink-a' is registered twice");
	graph_destroy(g);
}
END_TEST

START_TEST(test_set_next_repoints_arc)
{
	tn_buffers(2048);
	logs_alloc();
	source_reset(10);
	tn_source_next = 1;
	tn_source.budget[0] = 20;
	struct graph *g = tn_graph(classify_graph, ARRAY_LEN(classify_graph));
	uint32_t fw = (uint32_t)graph_node_index(g, "tn-forward");
	char err[256];
	graph_main_poll(g);
	ck_assert_int_eq(graph_set_next(g, fw, 0, "tn-sink-b", err, sizeof(err)), 0);
	ck_assert_int_eq(graph_node_next(g, fw, 0), graph_node_index(g, "tn-sink-b"));
	graph_main_poll(g);
	ck_assert_uint_eq(tn_sink_logs[0]->n, 10);
	ck_assert_uint_eq(tn_sink_logs[1]->n, 10);
	ck_assert_uint_eq(tn_sink_logs[1]->seq[0], 10);
	ck_assert_int_eq(graph_set_next(g, fw, 0, "nowhere", err, sizeof(err)), -ENOENT);
	ck_assert_int_eq(graph_set_next(g, fw, 5, "tn-sink-a", err, sizeof(err)), -ENOENT);
	int k = graph_add_next(g, fw, "tn-sink-c", err, sizeof(err));
	ck_assert_int_eq(k, 1);
	ck_assert_int_eq(graph_add_next(g, fw, "tn-sink-c", err, sizeof(err)), 1);
	graph_destroy(g);
	logs_free();
	buffer_main_free();
}
END_TEST

/* Each thread's clone counts only its own work. */
START_TEST(test_clones_count_independently)
{
	tn_buffers(8192);
	source_reset(32);
	tn_source.budget[0] = 320;
	tn_source.budget[1] = 3200;
	struct graph *g = tn_graph(classify_graph, ARRAY_LEN(classify_graph));
	char err[256];
	int cpus[1] = { -1 };
	ck_assert_msg(graph_workers_start(g, cpus, 1, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(graph_n_threads(g), 2);
	for (int i = 0; i < 20; i++)
		graph_main_poll(g);
	uint32_t src = (uint32_t)graph_node_index(g, "tn-source");
	uint32_t cl = (uint32_t)graph_node_index(g, "tn-classify");
	struct node_stats s0, s1;
	for (int i = 0; i < 5000; i++) {
		/* The worker's error counts land after its vector counts: wait
		 * for both, or a loaded box sees the last vector's drops missing. */
		graph_node_stats(g, 1, cl, &s1);
		if (s1.vectors == 3200 && graph_node_error_count(g, cl, 0) == 502)
			break;
		usleep(1000);
	}
	graph_node_stats(g, 0, src, &s0);
	graph_node_stats(g, 1, src, &s1);
	ck_assert_uint_eq(s0.vectors, 320);
	ck_assert_uint_eq(s1.vectors, 3200);
	graph_node_stats(g, 0, cl, &s0);
	graph_node_stats(g, 1, cl, &s1);
	ck_assert_uint_eq(s0.vectors, 320);
	ck_assert_uint_eq(s1.vectors, 3200);
	ck_assert_uint_eq(s0.calls, 10);
	ck_assert_uint_eq(s1.calls, 100);
	/* seq numbers 0..3519 were shared out; every seventh was dropped once */
	ck_assert_uint_eq(graph_node_error_count(g, cl, 0), 502);
	graph_clear_runtime(g);
	graph_node_stats(g, 1, cl, &s1);
	ck_assert_uint_eq(s1.vectors, 0);
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

/* A worker dispatches without pause while the control thread re-points the
 * forwarder's arc 1,000 times: every packet arrives exactly once. */
START_TEST(test_barrier_repoint_loses_nothing)
{
	enum { N = 2000000 };
	tn_buffers(16384);
	logs_alloc();
	source_reset(64);
	tn_source_next = 1;
	tn_source.budget[1] = N;
	struct graph_config gc;
	graph_config_default(&gc);
	gc.idle_mode = GRAPH_IDLE_POLL;
	char err[256];
	struct graph *g = graph_create(&gc, err, sizeof(err));
	ck_assert_int_ge(graph_add_node(g, node_registry_find("error-drop"), err, sizeof(err)), 0);
	for (uint32_t i = 0; i < ARRAY_LEN(classify_graph); i++)
		ck_assert_int_ge(graph_add_node(g, classify_graph[i], err, sizeof(err)), 0);
	ck_assert_int_eq(graph_build(g, err, sizeof(err)), 0);
	uint32_t fw = (uint32_t)graph_node_index(g, "tn-forward");
	ck_assert_int_eq(graph_workers_start(g, NULL, 1, err, sizeof(err)), 0);
	for (int i = 0; i < 1000; i++) {
		ck_assert_int_eq(graph_set_next(g, fw, 0, (i & 1) ? "tn-sink-a" : "tn-sink-b", err, sizeof(err)), 0);
		usleep(200);
	}
	uint32_t sink_b = (uint32_t)graph_node_index(g, "tn-sink-b");
	uint32_t sink_a = (uint32_t)graph_node_index(g, "tn-sink-a");
	for (int i = 0; i < 30000; i++) {
		struct node_stats sa, sb;
		graph_node_stats(g, 1, sink_a, &sa);
		graph_node_stats(g, 1, sink_b, &sb);
		if (sa.vectors + sb.vectors == N)
			break;
		usleep(1000);
	}
	graph_workers_stop(g);
	uint8_t *seen = calloc(N, 1);
	uint32_t total = 0;
	for (int k = 0; k < 2; k++) {
		ck_assert_uint_gt(tn_sink_logs[k]->n, 0);
		for (uint32_t i = 0; i < tn_sink_logs[k]->n; i++) {
			uint32_t s = tn_sink_logs[k]->seq[i];
			ck_assert_uint_lt(s, N);
			ck_assert_msg(!seen[s], "packet %u seen twice", s);
			seen[s] = 1;
			total++;
		}
	}
	ck_assert_uint_eq(total, N);
	free(seen);
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	logs_free();
	buffer_main_free();
}
END_TEST

/* Traced packets carry exactly the records of the nodes they visited. */
START_TEST(test_trace_records_path)
{
	tn_buffers(2048);
	source_reset(4);
	tn_source.budget[0] = 16;
	struct graph *g = tn_graph(classify_graph, ARRAY_LEN(classify_graph));
	char err[256];
	ck_assert_int_eq(graph_trace_add(g, "tn-classify", 5, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "trace: 'tn-classify' is not an input node");
	ck_assert_int_eq(graph_trace_add(g, "tn-source", 9, err, sizeof(err)), 0);
	for (int i = 0; i < 10; i++)
		graph_main_poll(g);
	ck_assert_uint_eq(graph_trace_n_packets(g), 9);
	int src = graph_node_index(g, "tn-source"), cl = graph_node_index(g, "tn-classify");
	int drop = graph_node_index(g, "error-drop");
	int sinks[3] = { graph_node_index(g, "tn-sink-a"), graph_node_index(g, "tn-sink-b"),
			 graph_node_index(g, "tn-sink-c") };
	for (uint32_t p = 0; p < 9; p++) {
		const struct trace_record *r;
		uint32_t n = graph_trace_packet(g, p, &r, NULL);
		ck_assert_uint_eq(n, 3);
		ck_assert_int_eq(r[0].node_index, src);
		ck_assert_int_eq(r[1].node_index, cl);
		ck_assert_int_eq(r[2].node_index, p % 7 == 6 ? drop : sinks[p % 3]);
		ck_assert_uint_le(r[0].ticks, r[1].ticks);
		ck_assert_uint_le(r[1].ticks, r[2].ticks);
		char buf[128];
		graph_trace_format(g, &r[1], buf, sizeof(buf));
		char want[64];
		snprintf(want, sizeof(want), "seq %u next %u", p, p % 7 == 6 ? 0 : 1 + p % 3);
		ck_assert_str_eq(buf, want);
		if (p == 6) {
			graph_trace_format(g, &r[2], buf, sizeof(buf));
			ck_assert_str_eq(buf, "tn-classify: every seventh packet");
		}
	}
	graph_trace_clear(g);
	ck_assert_uint_eq(graph_trace_n_packets(g), 0);
	graph_destroy(g);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

static uint32_t hook_calls[GRAPH_MAX_THREADS];

static uint32_t count_hook(struct graph_thread *t, void *arg)
{
	ck_assert_ptr_eq(arg, hook_calls);
	__atomic_add_fetch(&hook_calls[graph_thread_index(t)], 1, __ATOMIC_RELAXED);
	return 0;
}

/* The loop hook runs once per loop on every datapath thread. */
START_TEST(test_loop_hook_runs_per_loop)
{
	tn_buffers(1024);
	struct graph *g = tn_graph(classify_graph, ARRAY_LEN(classify_graph));
	graph_set_loop_hook(g, count_hook, hook_calls);
	for (int i = 0; i < 10; i++)
		graph_main_poll(g);
	ck_assert_uint_eq(hook_calls[0], 10);
	char err[256];
	ck_assert_int_eq(graph_workers_start(g, NULL, 1, err, sizeof(err)), 0);
	for (int i = 0; i < 5000 && __atomic_load_n(&hook_calls[1], __ATOMIC_RELAXED) < 3; i++)
		usleep(1000);
	ck_assert_uint_ge(__atomic_load_n(&hook_calls[1], __ATOMIC_RELAXED), 3);
	graph_set_loop_hook(g, NULL, NULL);
	uint32_t frozen = __atomic_load_n(&hook_calls[1], __ATOMIC_RELAXED);
	usleep(20000);
	ck_assert_uint_eq(__atomic_load_n(&hook_calls[1], __ATOMIC_RELAXED), frozen);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* Two producers feeding one node, and a node sending to itself: the ready
 * FIFO holds a node while its pending list is not empty. tv-p and tv-q
 * each make 200 numbered packets for tv-merge in one loop (one frame of
 * 256 and one of 144, run back to back in one visit); tv-merge forwards
 * them whole to tv-hop, which sends every packet back to itself until it
 * has passed three times (each pass a new list, so a new turn at the back
 * of the FIFO), then to tv-end. */
#define TV_PER_SOURCE 200u
#define TV_LOG 32

static struct {
	char node[TV_LOG];
	uint16_t n[TV_LOG];
	uint32_t calls;
	uint32_t seen;
	uint32_t seq[2 * TV_PER_SOURCE];
} tv;

static void tv_log(char node, uint16_t n)
{
	ck_assert_uint_lt(tv.calls, TV_LOG);
	tv.node[tv.calls] = node;
	tv.n[tv.calls++] = n;
}

static uint32_t tv_make(struct node_runtime *rt, uint32_t first)
{
	static uint32_t made[2];
	uint32_t k = first ? 1 : 0;
	if (made[k]++)
		return 0;
	uint32_t bi[TV_PER_SOURCE];
	ck_assert_uint_eq(buffer_alloc(bi, TV_PER_SOURCE, -1), TV_PER_SOURCE);
	for (uint32_t i = 0; i < TV_PER_SOURCE; i++) {
		tn_set_seq(bi[i], first + i);
		buffer_get(bi[i])->opaque[4] = 0; /* passes through tv-hop */
	}
	node_enqueue(rt, 0, bi, TV_PER_SOURCE);
	return TV_PER_SOURCE;
}

static uint32_t tv_p_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	return tv_make(rt, 0);
}

static uint32_t tv_q_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	return tv_make(rt, TV_PER_SOURCE);
}

static uint32_t tv_merge_fn(struct node_runtime *rt, struct frame *f)
{
	tv_log('m', f->n_vectors);
	uint32_t n = f->n_vectors;
	node_forward_frame(rt, 0, f);
	return n;
}

static uint32_t tv_hop_fn(struct node_runtime *rt, struct frame *f)
{
	tv_log('h', f->n_vectors);
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		uint8_t *passes = &buffer_get(f->buffers[i])->opaque[4];
		node_enqueue_x1(rt, ++*passes < 3 ? 0 : 1, f->buffers[i]);
	}
	return f->n_vectors;
}

static uint32_t tv_end_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	tv_log('e', f->n_vectors);
	for (uint32_t i = 0; i < f->n_vectors && tv.seen < 2 * TV_PER_SOURCE; i++)
		tv.seq[tv.seen++] = tn_seq(f->buffers[i]);
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg tv_p_node = {
	.name = "tv-p", .type = NODE_TYPE_INPUT, .fn = tv_p_fn, .n_next = 1, .next_nodes = { "tv-merge" }
};
static const struct node_reg tv_q_node = {
	.name = "tv-q", .type = NODE_TYPE_INPUT, .fn = tv_q_fn, .n_next = 1, .next_nodes = { "tv-merge" }
};
static const struct node_reg tv_merge_node = {
	.name = "tv-merge", .fn = tv_merge_fn, .n_next = 1, .next_nodes = { "tv-hop" }
};
static const struct node_reg tv_hop_node = {
	.name = "tv-hop", .fn = tv_hop_fn, .n_next = 2, .next_nodes = { "tv-hop", "tv-end" }
};
static const struct node_reg tv_end_node = { .name = "tv-end", .fn = tv_end_fn };

static struct node_stats tv_stats(struct graph *g, const char *node)
{
	struct node_stats st;
	ck_assert_int_eq(graph_node_stats(g, 0, (uint32_t)graph_node_index(g, node), &st), 0);
	return st;
}

START_TEST(test_visits_two_producers_and_self_send)
{
	tn_buffers(2048);
	memset(&tv, 0, sizeof(tv));
	const struct node_reg *regs[] = { &tv_p_node, &tv_q_node, &tv_merge_node, &tv_hop_node, &tv_end_node };
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	ck_assert_uint_eq(graph_main_poll(g), 2 * TV_PER_SOURCE);
	static const char node[] = "mmhhhhhhee";
	static const uint16_t n[] = { 256, 144, 256, 144, 256, 144, 256, 144, 256, 144 };
	ck_assert_uint_eq(tv.calls, ARRAY_LEN(n));
	for (uint32_t i = 0; i < ARRAY_LEN(n); i++) {
		ck_assert_msg(tv.node[i] == node[i] && tv.n[i] == n[i], "call %u: %c with %u, expected %c with %u", i,
			      tv.node[i], tv.n[i], node[i], n[i]);
	}
	ck_assert_uint_eq(tv.seen, 2 * TV_PER_SOURCE);
	for (uint32_t i = 0; i < tv.seen; i++)
		ck_assert_uint_eq(tv.seq[i], i);
	/* A visit adds its calls and vectors once: the figures are the calls'. */
	ck_assert_uint_eq(tv_stats(g, "tv-merge").calls, 2);
	ck_assert_uint_eq(tv_stats(g, "tv-merge").vectors, 2 * TV_PER_SOURCE);
	ck_assert_uint_eq(tv_stats(g, "tv-hop").calls, 6);
	ck_assert_uint_eq(tv_stats(g, "tv-hop").vectors, 6 * TV_PER_SOURCE);
	ck_assert_uint_eq(tv_stats(g, "tv-end").calls, 2);
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)graph_node_index(g, "tv-hop"), 0), 4 * TV_PER_SOURCE);
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)graph_node_index(g, "tv-hop"), 1), 2 * TV_PER_SOURCE);
	/* Nothing left pending: the next loop runs no node. */
	ck_assert_uint_eq(graph_main_poll(g), 0);
	ck_assert_uint_eq(tv.calls, ARRAY_LEN(n));
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("graph");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_enqueue_keeps_per_next_order);
	tcase_add_test(tc, test_enqueue_spans_frames);
	tcase_add_test(tc, test_enqueue_x1_x4_mixed_with_bulk);
	tcase_add_test(tc, test_missing_next_names_both_nodes);
	tcase_add_test(tc, test_duplicate_node_refused);
	tcase_add_test(tc, test_set_next_repoints_arc);
	tcase_add_test(tc, test_clones_count_independently);
	tcase_add_test(tc, test_barrier_repoint_loses_nothing);
	tcase_add_test(tc, test_trace_records_path);
	tcase_add_test(tc, test_loop_hook_runs_per_loop);
	tcase_add_test(tc, test_visits_two_producers_and_self_send);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
