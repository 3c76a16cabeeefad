/* Features (graph/node.h, NODE_FEATURE_REGISTER): a node placed on the arc
 * between two existing nodes at build, in registration order; the first
 * node's next index is kept; a feature whose node or arc is missing, or a
 * node on two arcs, is refused by graph_build, naming it. Per interface
 * (graph.h): exact counts of what each feature saw per interface, the
 * arcs as they are rewired, the split only while partly on. Features are process-wide, so each
 * case registers its own (Check runs each case in its own process). */
#include <check.h>
#include <errno.h>

#include "graph/graph.h"
#include "tests/check_run.h"
#include "tests/graph/test_nodes.h"

static uint32_t pass_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	return f->n_vectors;
}

/* src: next 0 drop, next 1 dst, next 2 other. */
static const struct node_reg src_node = { .name = "ft-src", .fn = pass_fn, .n_next = 3,
					  .next_nodes = { "ft-drop", "ft-dst", "ft-other" } };
static const struct node_reg dst_node = { .name = "ft-dst", .fn = pass_fn };
static const struct node_reg other_node = { .name = "ft-other", .fn = pass_fn };
static const struct node_reg drop_node = { .name = "ft-drop", .fn = pass_fn };
static const struct node_reg f1_node = { .name = "ft-f1", .fn = pass_fn, .n_next = 2,
					 .next_nodes = { "ft-drop", "ft-dst" } };
static const struct node_reg f2_node = { .name = "ft-f2", .fn = pass_fn, .n_next = 1, .next_nodes = { "ft-dst" } };
static const struct node_reg lost_node = { .name = "ft-lost", .fn = pass_fn, .n_next = 1,
					   .next_nodes = { "ft-other" } };

static struct graph *make(char *err, size_t len)
{
	struct graph *g = graph_create(NULL, err, len);
	const struct node_reg *all[] = { &src_node, &dst_node, &other_node, &drop_node, &f1_node, &f2_node, &lost_node };
	for (size_t i = 0; i < ARRAY_LEN(all); i++)
		ck_assert_int_ge(graph_add_node(g, all[i], err, len), 0);
	return g;
}

static const char *next_name(struct graph *g, const char *node, uint16_t k)
{
	int t = graph_node_next(g, (uint32_t)graph_node_index(g, node), k);
	ck_assert_int_ge(t, 0);
	return graph_node_reg(g, (uint32_t)t)->name;
}

START_TEST(test_no_feature)
{
	char err[256] = "";
	struct graph *g = make(err, sizeof(err));
	ck_assert_int_eq(graph_build(g, err, sizeof(err)), 0);
	ck_assert_str_eq(next_name(g, "ft-src", 1), "ft-dst");
	ck_assert_str_eq(next_name(g, "ft-f1", 1), "ft-dst");
	graph_destroy(g);
}
END_TEST

START_TEST(test_two_features_chain)
{
	static const struct node_feature f1 = { .node = "ft-f1", .from = "ft-src", .to = "ft-dst" };
	static const struct node_feature f2 = { .node = "ft-f2", .from = "ft-src", .to = "ft-dst" };
	node_feature_register(&f1);
	node_feature_register(&f2);
	char err[256] = "";
	struct graph *g = make(err, sizeof(err));
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	/* src -> f1 -> f2 -> dst on the same next indices; other arcs kept. */
	ck_assert_str_eq(next_name(g, "ft-src", 0), "ft-drop");
	ck_assert_str_eq(next_name(g, "ft-src", 1), "ft-f1");
	ck_assert_str_eq(next_name(g, "ft-src", 2), "ft-other");
	ck_assert_str_eq(next_name(g, "ft-f1", 0), "ft-drop");
	ck_assert_str_eq(next_name(g, "ft-f1", 1), "ft-f2");
	ck_assert_str_eq(next_name(g, "ft-f2", 0), "ft-dst");
	graph_destroy(g);
}
END_TEST

START_TEST(test_feature_refused)
{
	static const struct node_feature cases[] = {
		{ .node = "ft-none", .from = "ft-src", .to = "ft-dst" },
		{ .node = "ft-f1", .from = "ft-none", .to = "ft-dst" },
		{ .node = "ft-f1", .from = "ft-dst", .to = "ft-other" },
		{ .node = "ft-lost", .from = "ft-src", .to = "ft-dst" },
	};
	static const char *const why[] = {
		"graph: feature 'ft-none' on ft-src -> ft-dst: the node does not exist",
		"graph: feature 'ft-f1' on ft-none -> ft-dst: the arc's first node does not exist",
		"graph: feature 'ft-f1' on ft-dst -> ft-other: the first node has no such next node",
		"graph: feature 'ft-lost' on ft-src -> ft-dst: the node does not name the arc's end as a next node",
	};
	node_feature_register(&cases[_i]);
	char err[256] = "";
	struct graph *g = make(err, sizeof(err));
	ck_assert_int_eq(graph_build(g, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, why[_i]);
	graph_destroy(g);
}
END_TEST

/* ---- per interface: packets of interfaces 0, 1, 2 and of none (rx_if 100) ---- */

#define PI_N 40 /* packets per poll: rx_if i % 4 -> 0, 1, 2, 100 */
#define PI_NONE 100

static uint64_t pi_count[2][4]; /* [feature][0, 1, 2, none] */
static uint64_t pi_dst[4];
static uint32_t pi_order[PI_N * 4], pi_n_order;

static uint32_t pi_slot(uint32_t bi)
{
	uint32_t rx = buffer_get(bi)->rx_if;
	return rx < 3 ? rx : 3;
}

static uint32_t pi_src_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t bi[PI_N];
	ck_assert_uint_eq(buffer_alloc(bi, PI_N, -1), PI_N);
	for (uint32_t i = 0; i < PI_N; i++) {
		buffer_get(bi[i])->rx_if = i % 4 == 3 ? PI_NONE : i % 4;
		buffer_get(bi[i])->opaque[0] = (uint8_t)i;
	}
	node_enqueue(rt, 0, bi, PI_N);
	return PI_N;
}

/* pi-f1 counts and forwards the frame whole; pi-f2 counts and enqueues. */
static uint32_t pi_f1_fn(struct node_runtime *rt, struct frame *f)
{
	for (uint32_t i = 0; i < f->n_vectors; i++)
		pi_count[0][pi_slot(f->buffers[i])]++;
	uint32_t n = f->n_vectors;
	node_forward_frame(rt, 1, f);
	return n;
}

static uint32_t pi_f2_fn(struct node_runtime *rt, struct frame *f)
{
	for (uint32_t i = 0; i < f->n_vectors; i++)
		pi_count[1][pi_slot(f->buffers[i])]++;
	node_enqueue(rt, 0, f->buffers, f->n_vectors);
	return f->n_vectors;
}

static uint32_t pi_dst_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		pi_dst[pi_slot(f->buffers[i])]++;
		if (pi_n_order < ARRAY_LEN(pi_order))
			pi_order[pi_n_order++] = buffer_get(f->buffers[i])->opaque[0];
	}
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg pi_src = { .name = "pi-src", .type = NODE_TYPE_INPUT, .fn = pi_src_fn, .n_next = 1,
					.next_nodes = { "pi-dst" } };
static const struct node_reg pi_f1 = { .name = "pi-f1", .fn = pi_f1_fn, .n_next = 2,
				       .next_nodes = { "error-drop", "pi-dst" } };
static const struct node_reg pi_f2 = { .name = "pi-f2", .fn = pi_f2_fn, .n_next = 1, .next_nodes = { "pi-dst" } };
static const struct node_reg pi_dst_node = { .name = "pi-dst", .fn = pi_dst_fn };
static const struct node_feature pi_feat1 = { .node = "pi-f1", .from = "pi-src", .to = "pi-dst" };
static const struct node_feature pi_feat2 = { .node = "pi-f2", .from = "pi-src", .to = "pi-dst", .default_off = true };

static struct graph *pi_graph(void)
{
	node_feature_register(&pi_feat1);
	node_feature_register(&pi_feat2);
	tn_buffers(1024);
	memset(pi_count, 0, sizeof(pi_count));
	memset(pi_dst, 0, sizeof(pi_dst));
	pi_n_order = 0;
	const struct node_reg *regs[] = { &pi_src, &pi_f1, &pi_f2, &pi_dst_node };
	return tn_graph(regs, ARRAY_LEN(regs));
}

/* One poll: PI_N packets, 10 of each interface; counters from zero. */
static void pi_poll(struct graph *g)
{
	memset(pi_count, 0, sizeof(pi_count));
	memset(pi_dst, 0, sizeof(pi_dst));
	pi_n_order = 0;
	graph_main_poll(g);
	for (uint32_t i = 0; i < 4; i++)
		ck_assert_uint_eq(pi_dst[i], PI_N / 4); /* nothing lost, whatever is on */
	ck_assert_uint_eq(buffer_n_in_use(), 0);
}

static bool fn_is_own(struct graph *g, const char *node)
{
	int n = graph_node_index(g, node);
	return graph_node_runtime(g, 0, (uint32_t)n)->fn == graph_node_reg(g, (uint32_t)n)->fn;
}

static void assert_counts(int feature, uint64_t a, uint64_t b, uint64_t c, uint64_t none)
{
	ck_assert_uint_eq(pi_count[feature][0], a);
	ck_assert_uint_eq(pi_count[feature][1], b);
	ck_assert_uint_eq(pi_count[feature][2], c);
	ck_assert_uint_eq(pi_count[feature][3], none);
}

/* Registration defaults: f1 on everywhere (its own function, every
 * packet), f2 off everywhere (out of the path: f1 leads to the end). */
START_TEST(test_if_defaults)
{
	struct graph *g = pi_graph();
	struct graph_feature_info fi;
	ck_assert_uint_eq(graph_feature_count(), 2);
	ck_assert_int_eq(graph_feature_info(0, &fi), 0);
	ck_assert(fi.default_on && fi.on == UINT64_MAX);
	ck_assert_str_eq(fi.node, "pi-f1");
	ck_assert_int_eq(graph_feature_info(1, &fi), 0);
	ck_assert(!fi.default_on && fi.on == 0);
	ck_assert_int_eq(graph_feature_info(2, &fi), -ENOENT);
	ck_assert_str_eq(next_name(g, "pi-src", 0), "pi-f1");
	ck_assert_str_eq(next_name(g, "pi-f1", 1), "pi-dst");
	ck_assert_str_eq(next_name(g, "pi-f1", 0), "error-drop");
	ck_assert(fn_is_own(g, "pi-f1") && fn_is_own(g, "pi-f2"));
	pi_poll(g);
	assert_counts(0, 10, 10, 10, 10);
	assert_counts(1, 0, 0, 0, 0);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* f2 on for interface 0 only: it sees interface 0's packets and nothing
 * else; f1 still sees all; off again: out of the path. */
START_TEST(test_if_one_interface)
{
	struct graph *g = pi_graph();
	ck_assert_int_eq(graph_feature_set(g, 1, 0, true), 0);
	ck_assert_str_eq(next_name(g, "pi-f1", 1), "pi-f2");
	ck_assert_str_eq(next_name(g, "pi-f2", 0), "pi-dst");
	ck_assert(!fn_is_own(g, "pi-f2"));
	pi_poll(g);
	assert_counts(0, 10, 10, 10, 10);
	assert_counts(1, 10, 0, 0, 0);
	struct node_stats st;
	graph_node_stats(g, 0, (uint32_t)graph_node_index(g, "pi-f2"), &st);
	ck_assert_uint_eq(st.vectors, 10);
	/* Skipped packets go on along f2's arc to the end. */
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)graph_node_index(g, "pi-f2"), 0), PI_N);
	ck_assert_int_eq(graph_feature_set(g, 1, 0, false), 0);
	ck_assert_str_eq(next_name(g, "pi-f1", 1), "pi-dst");
	ck_assert(fn_is_own(g, "pi-f2"));
	pi_poll(g);
	assert_counts(1, 0, 0, 0, 0);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* f1 (forwards frames whole) off for interface 1: the others' packets in
 * their order, interface 1's and those of no interface skip it; then off
 * for every interface: the source leads straight to the end. */
START_TEST(test_if_off_for_one)
{
	struct graph *g = pi_graph();
	ck_assert_int_eq(graph_feature_set(g, 0, 1, false), 0);
	ck_assert_str_eq(next_name(g, "pi-src", 0), "pi-f1");
	pi_poll(g);
	assert_counts(0, 10, 0, 10, 0);
	/* The skipped ones first (enqueued before f1 forwarded the rest). */
	uint32_t k = 0;
	for (uint32_t i = 0; i < PI_N; i++)
		if (i % 4 == 1 || i % 4 == 3)
			ck_assert_uint_eq(pi_order[k++], i);
	for (uint32_t i = 0; i < PI_N; i++)
		if (i % 4 == 0 || i % 4 == 2)
			ck_assert_uint_eq(pi_order[k++], i);
	for (uint32_t i = 0; i < GRAPH_FEATURE_IF_MAX; i++)
		ck_assert_int_eq(graph_feature_set(g, 0, i, false), 0);
	ck_assert_str_eq(next_name(g, "pi-src", 0), "pi-dst");
	pi_poll(g);
	assert_counts(0, 0, 0, 0, 0);
	/* Back on for all: its own function again. */
	for (uint32_t i = 0; i < GRAPH_FEATURE_IF_MAX; i++)
		ck_assert_int_eq(graph_feature_set(g, 0, i, true), 0);
	ck_assert_str_eq(next_name(g, "pi-src", 0), "pi-f1");
	ck_assert(fn_is_own(g, "pi-f1"));
	pi_poll(g);
	assert_counts(0, 10, 10, 10, 10);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* An interface gone: each feature back to its default for its index. */
START_TEST(test_if_reset)
{
	struct graph *g = pi_graph();
	ck_assert_int_eq(graph_feature_set(g, 0, 2, false), 0);
	ck_assert_int_eq(graph_feature_set(g, 1, 2, true), 0);
	graph_feature_if_reset(NULL, 2); /* the graph wired last */
	struct graph_feature_info fi;
	graph_feature_info(0, &fi);
	ck_assert(fi.on == UINT64_MAX);
	graph_feature_info(1, &fi);
	ck_assert(fi.on == 0);
	ck_assert_str_eq(next_name(g, "pi-f1", 1), "pi-dst");
	ck_assert(fn_is_own(g, "pi-f1") && fn_is_own(g, "pi-f2"));
	pi_poll(g);
	assert_counts(0, 10, 10, 10, 10);
	assert_counts(1, 0, 0, 0, 0);
	/* Out of range: refused, nothing changed. */
	ck_assert_int_eq(graph_feature_set(g, 2, 0, true), -EINVAL);
	ck_assert_int_eq(graph_feature_set(g, 1, GRAPH_FEATURE_IF_MAX, true), -EINVAL);
	graph_feature_info(1, &fi);
	ck_assert(fi.on == 0);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* Interfaces 0 and 2 exist: f1 off for both is off "everywhere" (out of
 * the path: packets of no interface skip it too), on for both is its own
 * function; interface 1 made: partly on again, then gone: back. */
START_TEST(test_if_live)
{
	struct graph *g = pi_graph();
	graph_feature_if_live(g, 0, true);
	graph_feature_if_live(NULL, 2, true);
	ck_assert_int_eq(graph_feature_set(g, 0, 0, false), 0);
	ck_assert(!fn_is_own(g, "pi-f1"));
	ck_assert_int_eq(graph_feature_set(g, 0, 2, false), 0);
	ck_assert_str_eq(next_name(g, "pi-src", 0), "pi-dst");
	pi_poll(g);
	assert_counts(0, 0, 0, 0, 0);
	ck_assert_int_eq(graph_feature_set(g, 0, 0, true), 0);
	ck_assert_int_eq(graph_feature_set(g, 0, 2, true), 0);
	ck_assert_str_eq(next_name(g, "pi-src", 0), "pi-f1");
	ck_assert(fn_is_own(g, "pi-f1"));
	ck_assert_int_eq(graph_feature_set(g, 0, 1, false), 0); /* no interface 1: nothing to split */
	ck_assert(fn_is_own(g, "pi-f1"));
	graph_feature_if_live(g, 1, true);
	ck_assert(!fn_is_own(g, "pi-f1"));
	pi_poll(g);
	assert_counts(0, 10, 0, 10, 0);
	graph_feature_if_live(g, 1, false);
	ck_assert(fn_is_own(g, "pi-f1"));
	pi_poll(g);
	assert_counts(0, 10, 10, 10, 10);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* Set before the graph is built (startup.conf): wired at build. */
START_TEST(test_if_before_build)
{
	node_feature_register(&pi_feat1);
	node_feature_register(&pi_feat2);
	ck_assert_int_eq(graph_feature_set(NULL, 1, 2, true), 0);
	tn_buffers(1024);
	const struct node_reg *regs[] = { &pi_src, &pi_f1, &pi_f2, &pi_dst_node };
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	ck_assert_str_eq(next_name(g, "pi-f1", 1), "pi-f2");
	pi_poll(g);
	assert_counts(1, 0, 0, 10, 0);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* One node on two arcs: refused (its split could not tell the arcs apart). */
START_TEST(test_two_arcs_refused)
{
	static const struct node_feature a = { .node = "ft-f1", .from = "ft-src", .to = "ft-dst" };
	static const struct node_feature b = { .node = "ft-f1", .from = "ft-src", .to = "ft-drop" };
	node_feature_register(&a);
	node_feature_register(&b);
	char err[256] = "";
	struct graph *g = make(err, sizeof(err));
	ck_assert_int_eq(graph_build(g, err, sizeof(err)), -ENOENT);
	ck_assert_str_eq(err, "graph: feature 'ft-f1' on ft-src -> ft-drop: the node is a feature on another arc already");
	graph_destroy(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("feature");
	TCase *tc = tcase_create("feature");
	tcase_add_test(tc, test_no_feature);
	tcase_add_test(tc, test_two_features_chain);
	tcase_add_loop_test(tc, test_feature_refused, 0, 4);
	tcase_add_test(tc, test_two_arcs_refused);
	tcase_add_test(tc, test_if_defaults);
	tcase_add_test(tc, test_if_one_interface);
	tcase_add_test(tc, test_if_off_for_one);
	tcase_add_test(tc, test_if_reset);
	tcase_add_test(tc, test_if_before_build);
	tcase_add_test(tc, test_if_live);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
