/* Buffer holder suite: the leak finder behind `show buffers`.
 *
 * A graph of tl-source -> tl-leak -> tn-sink-a, where tl-leak (this file
 * only) forgets every tenth packet it sees: "unattributed" must equal the
 * packets forgotten, and every holder must report nothing. Holders that do
 * keep buffers (frames pending at a node, a subsystem's own store) are
 * named with their exact counts and leave "unattributed" alone. */
#include <check.h>

#include "tests/check_run.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "tests/graph/test_nodes.h"

static uint32_t leak_every; /* tl-leak forgets packets whose seq % leak_every == 0; 0: none */
static uint64_t n_leaked;

static uint32_t leak_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t keep[FRAME_SIZE], n = 0;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		if (leak_every && tn_seq(f->buffers[i]) % leak_every == 0)
			n_leaked++; /* the bug under test: neither freed nor passed on */
		else
			keep[n++] = f->buffers[i];
	}
	node_enqueue(rt, 0, keep, n);
	return f->n_vectors;
}

static const struct node_reg tl_leak_node = {
	.name = "tl-leak",
	.fn = leak_fn,
	.n_next = 1,
	.next_nodes = { "tn-sink-a" },
};

/* A source of numbered packets for tl-leak, tn_source's budget and burst. */
static uint32_t source_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t want = (uint32_t)MIN((uint64_t)FRAME_SIZE, tn_source.budget[0] - tn_source.produced[0]);
	uint32_t bi[FRAME_SIZE];
	uint32_t n = want ? buffer_alloc(bi, want, -1) : 0;
	for (uint32_t i = 0; i < n; i++)
		tn_set_seq(bi[i], (uint32_t)tn_source.produced[0] + i);
	tn_source.produced[0] += n;
	node_enqueue(rt, 0, bi, n);
	return n;
}

static const struct node_reg tl_source_node = {
	.name = "tl-source",
	.type = NODE_TYPE_INPUT,
	.fn = source_fn,
	.n_next = 1,
	.next_nodes = { "tl-leak" },
};

static const struct node_reg *const leak_graph[] = { &tl_source_node, &tl_leak_node, &tn_sink_a_node };

static struct graph *graph_with_leak(uint32_t every, uint64_t budget)
{
	memset(&tn_source, 0, sizeof(tn_source));
	tn_source.budget[0] = budget;
	leak_every = every;
	n_leaked = 0;
	return tn_graph(leak_graph, ARRAY_LEN(leak_graph));
}

static void run(struct graph *g, int loops)
{
	for (int i = 0; i < loops; i++)
		graph_main_poll(g);
}

static const struct buffer_holding *find(const struct buffer_attribution *a, const char *holder, const char *where)
{
	for (uint32_t i = 0; i < a->n_holdings; i++)
		if (!strcmp(a->holdings[i].holder, holder) && !strcmp(a->holdings[i].where, where))
			return &a->holdings[i];
	return NULL;
}

static void assert_nothing_held(const struct buffer_attribution *a)
{
	for (uint32_t i = 0; i < a->n_holdings; i++)
		ck_assert_msg(a->holdings[i].n == 0, "holder %s (%s) claims %llu", a->holdings[i].holder,
			      a->holdings[i].where, (unsigned long long)a->holdings[i].n);
	ck_assert_uint_eq(a->n_attributed, 0);
}

/* A clean run: nothing in use, nothing held, nothing unattributed; the
 * graph's own holder is consulted (one line of 0). */
START_TEST(test_clean_run_attributes_nothing)
{
	tn_buffers(4096);
	struct graph *g = graph_with_leak(0, 3000);
	run(g, 40);
	ck_assert_uint_eq(tn_source.produced[0], 3000);
	struct buffer_attribution a;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_uint_eq(a.n_total, 4096);
	ck_assert_uint_eq(a.n_in_use, 0);
	ck_assert_int_eq(a.n_unattributed, 0);
	ck_assert_ptr_nonnull(find(&a, "frames", ""));
	assert_nothing_held(&a);
	buffer_attribution_free(&a);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* The leaking node makes "unattributed" grow by exactly what it forgot,
 * run after run, and no holder is blamed. */
START_TEST(test_leak_shows_as_unattributed)
{
	tn_buffers(4096);
	struct graph *g = graph_with_leak(10, 1000);
	run(g, 20);
	ck_assert_uint_eq(n_leaked, 100); /* seq 0, 10, ..., 990 */
	struct buffer_attribution a;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_uint_eq(a.n_in_use, 100);
	ck_assert_int_eq(a.n_unattributed, 100);
	assert_nothing_held(&a);
	buffer_attribution_free(&a);

	tn_source.budget[0] += 500; /* seq 1000..1499: 50 more */
	run(g, 20);
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_uint_eq(a.n_in_use, 150);
	ck_assert_int_eq(a.n_unattributed, 150);
	assert_nothing_held(&a);
	buffer_attribution_free(&a);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* A subsystem's store, registered as a holder. */
struct store {
	uint32_t bi[64];
	uint32_t n;
};

static void store_holder(void *ctx, struct buffer_tally *t)
{
	const struct store *s = ctx;
	buffer_tally_add(t, "kept", s->n);
	buffer_tally_add(t, "empty place", 0);
}

/* Buffers a holder claims are attributed to it by name and count, frames
 * pending at a node to that node (chains counted whole), and only the leak
 * stays unattributed. A holder counting what it does not hold shows as a
 * negative figure. */
START_TEST(test_holders_named_with_counts)
{
	tn_buffers(4096);
	struct graph *g = graph_with_leak(10, 100);
	run(g, 5);
	ck_assert_uint_eq(n_leaked, 10);

	struct store st = { .n = 40 };
	ck_assert_uint_eq(buffer_alloc(st.bi, st.n, -1), st.n);
	ck_assert_int_eq(buffer_holder_register("store", store_holder, &st), 0);
	ck_assert_int_eq(buffer_holder_register("store", store_holder, &st), -EEXIST);

	/* 7 packets, one a chain of 3, pending at tn-sink-a, not dispatched. */
	uint32_t p[9];
	ck_assert_uint_eq(buffer_alloc(p, 9, -1), 9);
	for (int i = 0; i < 2; i++) {
		buffer_get(p[i])->flags |= BUFFER_F_NEXT_PRESENT;
		buffer_get(p[i])->next_buffer = p[i + 1];
	}
	uint32_t heads[7] = { p[0], p[3], p[4], p[5], p[6], p[7], p[8] };
	struct node_runtime *leak = graph_node_runtime(g, 0, (uint32_t)graph_node_index(g, "tl-leak"));
	node_enqueue(leak, 0, heads, 7);

	struct buffer_attribution a;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_uint_eq(a.n_in_use, 10 + 40 + 9);
	const struct buffer_holding *h = find(&a, "frames", "tn-sink-a");
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->n, 9);
	h = find(&a, "store", "kept");
	ck_assert_ptr_nonnull(h);
	ck_assert_uint_eq(h->n, 40);
	ck_assert_ptr_nonnull(find(&a, "store", "empty place"));
	ck_assert_uint_eq(a.n_attributed, 49);
	ck_assert_int_eq(a.n_unattributed, 10);
	buffer_attribution_free(&a);

	/* Double counting is visible, not hidden. */
	st.n = 50;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_int_eq(a.n_unattributed, 0);
	st.n = 60;
	buffer_attribution_free(&a);
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_int_eq(a.n_unattributed, -10);
	buffer_attribution_free(&a);
	st.n = 40;

	graph_dispatch_pending(graph_thread_get(g, 0));
	buffer_free(st.bi, st.n);
	st.n = 0;
	buffer_holder_unregister(store_holder, &st);
	ck_assert_int_eq(buffer_attribute(&a), 0);
	ck_assert_ptr_null(find(&a, "store", "kept"));
	ck_assert_ptr_null(find(&a, "frames", "tn-sink-a"));
	ck_assert_int_eq(a.n_unattributed, 10);
	buffer_attribution_free(&a);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

static void null_holder(void *ctx, struct buffer_tally *t)
{
	(void)ctx;
	(void)t;
}

/* The registry is bounded and says so. */
START_TEST(test_registry_full)
{
	static char ctx[BUFFER_MAX_HOLDERS + 1];
	uint32_t n = 0;
	int rc;
	while ((rc = buffer_holder_register("x", null_holder, &ctx[n])) == 0)
		n++;
	ck_assert_int_eq(rc, -ENOSPC);
	ck_assert_uint_le(n, BUFFER_MAX_HOLDERS);
	for (uint32_t i = 0; i < n; i++)
		buffer_holder_unregister(null_holder, &ctx[i]);
	ck_assert_int_eq(buffer_holder_register("x", null_holder, &ctx[0]), 0);
	buffer_holder_unregister(null_holder, &ctx[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("buffer_holders");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_clean_run_attributes_nothing);
	tcase_add_test(tc, test_leak_shows_as_unattributed);
	tcase_add_test(tc, test_holders_named_with_counts);
	tcase_add_test(tc, test_registry_full);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
