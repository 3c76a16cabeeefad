/* Where a thread's time goes (graph_thread_time): busy is exactly the
 * clocks of node calls that had work, idle exactly those of polls that
 * found nothing plus the back-off between loops (sleep part of it),
 * overhead the rest of the loop (a loop hook's own work lands there);
 * clear runtime takes a baseline and the totals keep going up; a reader on
 * another thread sees each figure only go up (also under ThreadSanitizer). */
#include <check.h>

#include "tests/check_run.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/graph.h"
#include "tests/graph/test_nodes.h"

#define BURN_TICKS 20000 /* what one burning call takes at least */

static void burn(uint64_t ticks)
{
	uint64_t t0 = cpu_ticks();
	while (cpu_ticks() - t0 < ticks)
		;
}

/* tt-empty: polls, burns, finds nothing. */
static uint32_t empty_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	(void)f;
	burn(BURN_TICKS);
	return 0;
}

/* tt-feed: while `feed`, a burst of 8 packets to tt-burn per poll. */
static atomic_bool feed;

static uint32_t feed_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (!atomic_load_explicit(&feed, memory_order_relaxed))
		return 0;
	uint32_t bi[8];
	uint32_t n = buffer_alloc(bi, 8, -1);
	node_enqueue(rt, 0, bi, n);
	return n;
}

/* tt-burn: burns, frees its frame's packets. */
static uint32_t burn_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	burn(BURN_TICKS);
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg empty_node = { .name = "tt-empty", .type = NODE_TYPE_INPUT, .fn = empty_fn };
static const struct node_reg feed_node = {
	.name = "tt-feed", .type = NODE_TYPE_INPUT, .fn = feed_fn, .n_next = 1, .next_nodes = { "tt-burn" }
};
static const struct node_reg burn_node = { .name = "tt-burn", .type = NODE_TYPE_INTERNAL, .fn = burn_fn };
static const struct node_reg *const regs[] = { &empty_node, &feed_node, &burn_node };

static uint64_t clocks(struct graph *g, uint32_t thread, const char *node)
{
	struct node_stats st;
	ck_assert_int_eq(graph_node_stats_total(g, thread, (uint32_t)graph_node_index(g, node), &st), 0);
	return st.clocks;
}

static uint64_t all_clocks(struct graph *g, uint32_t thread)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < graph_n_nodes(g); i++)
		n += clocks(g, thread, graph_node_reg(g, i)->name);
	return n;
}

static struct graph_thread_time total(struct graph *g, uint32_t thread)
{
	struct graph_thread_time tt;
	ck_assert_int_eq(graph_thread_time_total(g, thread, &tt), 0);
	return tt;
}

/* Loop hook: burns (overhead), and every other loop hands tt-burn a packet
 * through graph_dispatch_pending (busy, as the timer service's delivery). */
struct hook_ctx {
	struct graph *g;
	uint64_t calls;
};

static uint32_t hook_fn(struct graph_thread *t, void *arg)
{
	struct hook_ctx *h = arg;
	burn(BURN_TICKS);
	if (h->calls++ % 2)
		return 0;
	uint32_t bi;
	ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
	node_enqueue(graph_node_runtime(h->g, 0, (uint32_t)graph_node_index(h->g, "tt-feed")), 0, &bi, 1);
	graph_dispatch_pending(t);
	return 0;
}

/* Driven by graph_main_poll (no time between polls is counted): busy is
 * exactly the clocks of the calls that had work, idle those of the empty
 * polls; busy + idle + overhead fits in the time the polls took. */
START_TEST(test_split_is_exact)
{
	tn_buffers(1024);
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	atomic_store(&feed, false);
	uint64_t t0 = cpu_ticks();
	for (int i = 0; i < 50; i++)
		graph_main_poll(g);
	uint64_t wall = cpu_ticks() - t0;
	struct graph_thread_time tt = total(g, 0);
	ck_assert_uint_eq(tt.busy, 0);
	ck_assert_uint_eq(tt.idle, clocks(g, 0, "tt-empty") + clocks(g, 0, "tt-feed"));
	ck_assert_uint_ge(tt.idle, 50ull * BURN_TICKS);
	ck_assert_uint_eq(tt.sleep, 0);
	ck_assert_uint_le(tt.busy + tt.idle + tt.overhead, wall);

	atomic_store(&feed, true);
	uint64_t idle0 = tt.idle, empty0 = clocks(g, 0, "tt-empty");
	t0 = cpu_ticks();
	for (int i = 0; i < 50; i++)
		graph_main_poll(g);
	wall += cpu_ticks() - t0;
	tt = total(g, 0);
	ck_assert_uint_eq(tt.idle - idle0, clocks(g, 0, "tt-empty") - empty0);
	ck_assert_uint_eq(tt.busy, clocks(g, 0, "tt-burn") + clocks(g, 0, "tt-feed") - (idle0 - empty0));
	ck_assert_uint_ge(tt.busy, 50ull * BURN_TICKS);
	ck_assert_uint_eq(tt.busy + tt.idle, all_clocks(g, 0));
	ck_assert_uint_le(tt.busy + tt.idle + tt.overhead, wall);

	/* A hook's own work is overhead; what it hands the nodes is busy. */
	struct hook_ctx h = { .g = g };
	graph_set_loop_hook(g, hook_fn, &h);
	uint64_t over0 = tt.overhead, burn0 = clocks(g, 0, "tt-burn");
	for (int i = 0; i < 50; i++)
		graph_main_poll(g);
	graph_set_loop_hook(g, NULL, NULL);
	tt = total(g, 0);
	ck_assert_uint_ge(tt.overhead - over0, 50ull * BURN_TICKS);
	ck_assert_uint_ge(clocks(g, 0, "tt-burn") - burn0, 75ull * BURN_TICKS); /* 50 polls + 25 from the hook */
	ck_assert_uint_eq(tt.busy + tt.idle, all_clocks(g, 0));
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* tt-count: an empty poll that stops graph_main_loop at its count_limit-th. */
static atomic_bool count_stop;
static uint32_t count_polls, count_limit;

static uint32_t count_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	(void)f;
	if (++count_polls == count_limit)
		atomic_store(&count_stop, true);
	return 0;
}

static const struct node_reg count_node = { .name = "tt-count", .type = NODE_TYPE_INPUT, .fn = count_fn };

/* A thread that never backs off and has no hook reads the clock only for
 * its polls and visits: each loop starts at the previous one's end, so
 * its overhead is none and busy + idle is exactly its node clocks. The
 * time before graph_main_loop (here after a graph_main_poll, whose end a
 * stale start could reach back to) is the caller's, counted nowhere: the
 * loop's figures fit in the call's time. */
START_TEST(test_busy_loops_read_no_extra_clock)
{
	tn_buffers(1024);
	const struct node_reg *const with_count[] = { &count_node, &feed_node, &burn_node };
	struct graph *g = tn_graph(with_count, ARRAY_LEN(with_count));
	atomic_store(&feed, true);
	graph_main_poll(g);
	struct graph_thread_time tt0 = total(g, 0);
	uint64_t clocks0 = all_clocks(g, 0);
	burn(100ull * BURN_TICKS); /* the caller's time */
	count_polls = 0;
	count_limit = 40;
	atomic_store(&count_stop, false);
	uint64_t t0 = cpu_ticks();
	graph_main_loop(g, &count_stop);
	uint64_t wall = cpu_ticks() - t0;
	struct graph_thread_time tt = total(g, 0);
	ck_assert_uint_eq(count_polls, 40);
	ck_assert_uint_eq(tt.overhead, tt0.overhead);
	ck_assert_uint_eq(tt.sleep, tt0.sleep);
	ck_assert_uint_eq(tt.busy + tt.idle - tt0.busy - tt0.idle, all_clocks(g, 0) - clocks0);
	ck_assert_uint_ge(tt.busy - tt0.busy, 40ull * BURN_TICKS);
	ck_assert_uint_le(tt.busy + tt.idle - tt0.busy - tt0.idle, wall);
	atomic_store(&feed, false);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* graph_main_loop as the daemon runs it: the back-off between empty loops
 * is idle, the sleep part of it, and the loop's accounting covers the time
 * between its first and last hook calls. */
struct stop_ctx {
	atomic_bool stop;
	uint32_t loops, limit;
	uint64_t first, last;
};

static uint32_t stop_hook(struct graph_thread *t, void *arg)
{
	(void)t;
	struct stop_ctx *c = arg;
	uint64_t now = cpu_ticks();
	if (!c->loops++)
		c->first = now;
	c->last = now;
	if (c->loops == c->limit)
		atomic_store(&c->stop, true);
	return 0;
}

static struct graph_thread_time run_loop(enum graph_idle_mode mode, uint64_t *wall, struct stop_ctx *c)
{
	char err[256];
	struct graph_config cfg;
	graph_config_default(&cfg);
	cfg.idle_mode = mode;
	cfg.idle_max_us = 50;
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, &empty_node, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	graph_set_loop_hook(g, stop_hook, c);
	uint64_t t0 = cpu_ticks();
	graph_main_loop(g, &c->stop);
	*wall = cpu_ticks() - t0;
	struct graph_thread_time tt = total(g, 0);
	ck_assert_uint_ge(tt.idle, clocks(g, 0, "tt-empty") + tt.sleep); /* the polls, and the gaps */
	graph_destroy(g);
	return tt;
}

START_TEST(test_backoff_is_idle)
{
	for (int mode = GRAPH_IDLE_POLL; mode <= GRAPH_IDLE_SLEEP; mode++) {
		struct stop_ctx c = { .limit = 200 };
		uint64_t wall;
		struct graph_thread_time tt = run_loop((enum graph_idle_mode)mode, &wall, &c);
		ck_assert_uint_eq(tt.busy, 0);
		ck_assert_uint_ge(tt.idle, 200ull * BURN_TICKS);
		ck_assert_uint_le(tt.busy + tt.idle + tt.overhead, wall);
		ck_assert_uint_ge(tt.busy + tt.idle + tt.overhead, c.last - c.first);
		if (mode == GRAPH_IDLE_POLL) {
			ck_assert_uint_eq(tt.sleep, 0);
			continue;
		}
		/* nanosleep sleeps at least the 1 us it is asked for each time */
		ck_assert_uint_ge(tt.sleep, (uint64_t)(199 * cpu_ticks_per_second() / 1e6));
		ck_assert_uint_lt(tt.sleep, tt.idle);
	}
}
END_TEST

/* clear runtime: a baseline for graph_thread_time, the totals go on. */
START_TEST(test_clear_is_a_baseline)
{
	tn_buffers(1024);
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	atomic_store(&feed, true);
	for (int i = 0; i < 20; i++)
		graph_main_poll(g);
	struct graph_thread_time before = total(g, 0), now;
	ck_assert_uint_gt(before.busy, 0);
	graph_clear_runtime(g);
	ck_assert_int_eq(graph_thread_time(g, 0, &now), 0);
	ck_assert_uint_eq(now.busy + now.idle + now.overhead + now.sleep, 0);
	graph_main_poll(g);
	ck_assert_int_eq(graph_thread_time(g, 0, &now), 0);
	struct graph_thread_time after = total(g, 0);
	ck_assert_uint_eq(now.busy, after.busy - before.busy);
	ck_assert_uint_eq(now.idle, after.idle - before.idle);
	ck_assert_uint_eq(now.overhead, after.overhead - before.overhead);
	ck_assert_uint_ge(now.busy, BURN_TICKS);
	ck_assert_int_eq(graph_thread_time(g, 1, &now), -ENOENT);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* The barrier's account: every hold counted at its release, the longest
 * kept, a hold that sleeps 2 ms is at least 2 ms long, and clear runtime
 * starts it again (its own hold is the first of the new count). */
START_TEST(test_barrier_holds)
{
	tn_buffers(1024);
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	char err[256];
	ck_assert_int_eq(graph_workers_start(g, NULL, 1, err, sizeof(err)), 0);
	struct graph_barrier_stats b;
	graph_clear_runtime(g);
	graph_barrier_stats(g, &b);
	ck_assert_uint_eq(b.holds, 1);
	graph_barrier_sync(g);
	usleep(2000);
	graph_barrier_release(g);
	graph_barrier_sync(g);
	graph_barrier_release(g);
	graph_barrier_stats(g, &b);
	ck_assert_uint_eq(b.holds, 3);
	ck_assert_uint_ge(b.hold_max_ns, 2000000);
	ck_assert_uint_ge(b.hold_total_ns, b.hold_max_ns);
	graph_clear_runtime(g);
	graph_barrier_stats(g, &b);
	ck_assert_uint_eq(b.holds, 1);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

/* A worker loops while this thread reads its figures: each only goes up
 * (the stats segment's thread reads them the same way). */
START_TEST(test_reader_sees_them_grow)
{
	tn_buffers(1024);
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	atomic_store(&feed, true);
	char err[256];
	ck_assert_int_eq(graph_workers_start(g, NULL, 1, err, sizeof(err)), 0);
	struct graph_thread_time prev = { 0 }, tt;
	for (int i = 0; i < 2000; i++) {
		ck_assert_int_eq(graph_thread_time_total(g, 1, &tt), 0);
		ck_assert_uint_ge(tt.busy, prev.busy);
		ck_assert_uint_ge(tt.idle, prev.idle);
		ck_assert_uint_ge(tt.overhead, prev.overhead);
		prev = tt;
		if (tt.busy > 100ull * BURN_TICKS && tt.idle > 100ull * BURN_TICKS)
			break;
		usleep(500);
	}
	ck_assert_uint_gt(prev.busy, 100ull * BURN_TICKS);
	ck_assert_uint_gt(prev.idle, 100ull * BURN_TICKS);
	graph_destroy(g);
	buffer_main_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("thread-time");
	TCase *tc = tcase_create("thread-time");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_split_is_exact);
	tcase_add_test(tc, test_backoff_is_idle);
	tcase_add_test(tc, test_busy_loops_read_no_extra_clock);
	tcase_add_test(tc, test_clear_is_a_baseline);
	tcase_add_test(tc, test_reader_sees_them_grow);
	tcase_add_test(tc, test_barrier_holds);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
