/* Features (graph/node.h, NODE_FEATURE_REGISTER): a node placed on the arc
 * between two existing nodes at build, in registration order; the first
 * node's next index is kept; a feature whose node or arc is missing is
 * refused by graph_build, naming it. Features are process-wide, so each
 * case registers its own (Check runs each case in its own process). */
#include <check.h>
#include <errno.h>

#include "graph/graph.h"
#include "tests/check_run.h"

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

int main(void)
{
	Suite *s = suite_create("feature");
	TCase *tc = tcase_create("feature");
	tcase_add_test(tc, test_no_feature);
	tcase_add_test(tc, test_two_features_chain);
	tcase_add_loop_test(tc, test_feature_refused, 0, 4);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
