/* Test-only nodes shared by the engine suites. */
#include <stdatomic.h>

#include "tests/graph/test_nodes.h"

struct tn_source tn_source;
struct tn_sink_log *tn_sink_logs[3];
uint32_t tn_source_next; /* 0: tn-classify, 1: tn-forward */

static uint32_t source_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t t = rt->thread_index;
	uint64_t left = tn_source.budget[t] - tn_source.produced[t];
	uint32_t want = (uint32_t)MIN((uint64_t)tn_source.burst, left);
	uint32_t bi[FRAME_SIZE];
	if (want == 0)
		return 0;
	uint32_t n = buffer_alloc(bi, MIN(want, (uint32_t)FRAME_SIZE), -1);
	uint32_t seq = atomic_fetch_add(&tn_source.next_seq, n);
	for (uint32_t i = 0; i < n; i++) {
		tn_set_seq(bi[i], seq + i);
		buffer_get(bi[i])->current_length = 64;
	}
	tn_source.produced[t] += n;
	node_trace_input(rt, bi, n);
	node_enqueue(rt, (uint16_t)tn_source_next, bi, n);
	return n;
}

const struct node_reg tn_source_node = {
	.name = "tn-source",
	.type = NODE_TYPE_INPUT,
	.fn = source_fn,
	.n_next = 2,
	.next_nodes = { "tn-classify", "tn-forward" },
};

enum { CL_NEXT_DROP, CL_NEXT_A, CL_NEXT_B, CL_NEXT_C, CL_N_NEXT };
enum { CL_ERROR_SEVENTH, CL_N_ERROR };
static const char *const classify_errors[] = { "every seventh packet" };

struct classify_trace {
	uint32_t seq;
	uint16_t next;
};

static int classify_format(char *buf, size_t len, const uint8_t *detail)
{
	const struct classify_trace *t = (const void *)detail;
	return snprintf(buf, len, "seq %u next %u", t->seq, t->next);
}

static uint32_t classify_fn(struct node_runtime *rt, struct frame *f)
{
	uint16_t nexts[FRAME_SIZE];
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		uint32_t seq = tn_seq(f->buffers[i]);
		struct buffer *b = buffer_get(f->buffers[i]);
		nexts[i] = (uint16_t)(CL_NEXT_A + seq % 3);
		if (seq % 7 == 6) {
			nexts[i] = CL_NEXT_DROP;
			b->error = node_error(rt, CL_ERROR_SEVENTH);
		}
		if (b->flags & BUFFER_F_TRACED) {
			struct classify_trace *t = (void *)node_trace_detail(rt, b);
			if (t) {
				t->seq = seq;
				t->next = nexts[i];
			}
		}
	}
	node_enqueue_to_nexts(rt, f->buffers, nexts, f->n_vectors);
	return f->n_vectors;
}

const struct node_reg tn_classify_node = {
	.name = "tn-classify",
	.fn = classify_fn,
	.n_next = CL_N_NEXT,
	.next_nodes = { [CL_NEXT_DROP] = "error-drop", [CL_NEXT_A] = "tn-sink-a", [CL_NEXT_B] = "tn-sink-b",
			[CL_NEXT_C] = "tn-sink-c" },
	.n_errors = CL_N_ERROR,
	.error_strings = classify_errors,
	.format_trace = classify_format,
};

static uint32_t forward_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	node_forward_frame(rt, 0, f);
	return n;
}

const struct node_reg tn_forward_node = {
	.name = "tn-forward",
	.fn = forward_fn,
	.n_next = 1,
	.next_nodes = { "tn-sink-a" },
};

static uint32_t sink(int which, struct frame *f)
{
	struct tn_sink_log *log = tn_sink_logs[which];
	for (uint32_t i = 0; log && i < f->n_vectors && log->n < TN_MAX_SEEN; i++)
		log->seq[log->n++] = tn_seq(f->buffers[i]);
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static uint32_t sink_a_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	return sink(0, f);
}

static uint32_t sink_b_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	return sink(1, f);
}

static uint32_t sink_c_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	return sink(2, f);
}

const struct node_reg tn_sink_a_node = { .name = "tn-sink-a", .fn = sink_a_fn };
const struct node_reg tn_sink_b_node = { .name = "tn-sink-b", .fn = sink_b_fn };
const struct node_reg tn_sink_c_node = { .name = "tn-sink-c", .fn = sink_c_fn };

const struct node_reg tn_bad_node = {
	.name = "tn-bad",
	.fn = sink_a_fn,
	.n_next = 2,
	.next_nodes = { "tn-sink-a", "no-such-node" },
};

struct graph *tn_graph(const struct node_reg *const *regs, uint32_t n)
{
	char err[256];
	struct graph *g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, node_registry_find("error-drop"), err, sizeof(err)), 0);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_msg(graph_add_node(g, regs[i], err, sizeof(err)) >= 0, "%s", err);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	return g;
}

void tn_buffers(uint32_t n)
{
	char err[256];
	struct buffer_config cfg;
	buffer_config_default(&cfg);
	cfg.buffers_per_numa = n;
	cfg.page_size = 4096;
	ck_assert_msg(buffer_main_init(&cfg, err, sizeof(err)) == 0, "%s", err);
}
