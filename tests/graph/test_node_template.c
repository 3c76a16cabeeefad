/* Node templates (graph/node.h): one node per instance a provider names,
 * "<instance><suffix>" with the instance's context; instances added later
 * get their node at the next read of the registry, once; a name already
 * taken is left to the node that has it; each node's function sees its own
 * context. */
#include <check.h>

#include "graph/graph.h"
#include "tests/check_run.h"
#include "tests/graph/test_nodes.h"

struct inst {
	const char *name;
	uint32_t polls; /* calls of its node */
};
static struct inst insts[] = { { .name = "alpha" }, { .name = "beta" }, { .name = "taken" }, { .name = "gamma" } };
static uint32_t n_insts = 3; /* gamma comes later */

static bool probe_instance(uint32_t i, const char **name, const void **context)
{
	if (i >= n_insts)
		return false;
	*name = insts[i].name;
	*context = &insts[i];
	return true;
}

static uint32_t probe_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	struct inst *in = (struct inst *)rt->reg->context;
	in->polls++;
	return 0;
}

static const struct node_template probe_template = {
	.reg = {
		.name = "probe",
		.type = NODE_TYPE_INPUT,
		.fn = probe_fn,
		.default_state = NODE_STATE_POLLING,
	},
	.suffix = "-probe",
	.instance = probe_instance,
};
NODE_TEMPLATE_REGISTER(probe_template)

/* A static node already called "taken-probe": the template skips it. */
static uint32_t taken_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	(void)f;
	return 0;
}
static const struct node_reg taken_node = {
	.name = "taken-probe",
	.type = NODE_TYPE_INPUT,
	.fn = taken_fn,
};
NODE_REGISTER(taken_node)

START_TEST(test_instances_become_nodes)
{
	const struct node_reg *a = node_registry_find("alpha-probe");
	const struct node_reg *b = node_registry_find("beta-probe");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_eq(a->context, &insts[0]);
	ck_assert_ptr_eq(b->context, &insts[1]);
	ck_assert_ptr_eq(a->fn, probe_fn);
	ck_assert_int_eq(a->type, NODE_TYPE_INPUT);
	ck_assert_ptr_null(node_registry_find("probe")); /* the template is no node */
	ck_assert_ptr_eq(node_registry_find("taken-probe"), &taken_node);
	ck_assert_ptr_null(node_registry_find("gamma-probe"));

	/* A later instance: its node once, at the next read. */
	uint32_t before = node_registry_count();
	ck_assert_uint_eq(node_registry_count(), before);
	n_insts = 4;
	const struct node_reg *c = node_registry_find("gamma-probe");
	ck_assert_ptr_nonnull(c);
	ck_assert_ptr_eq(c->context, &insts[3]);
	ck_assert_uint_eq(node_registry_count(), before + 1);
	ck_assert_uint_eq(node_registry_count(), before + 1);
}
END_TEST

START_TEST(test_each_node_its_context)
{
	tn_buffers(1024);
	const struct node_reg *regs[] = { node_registry_find("alpha-probe"), node_registry_find("beta-probe") };
	struct graph *g = tn_graph(regs, 2);
	for (int i = 0; i < 5; i++)
		graph_main_poll(g);
	ck_assert_uint_eq(insts[0].polls, 5);
	ck_assert_uint_eq(insts[1].polls, 5);
	ck_assert_uint_eq(insts[2].polls, 0);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("node_template");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, test_instances_become_nodes);
	tcase_add_test(tc, test_each_node_its_context);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
