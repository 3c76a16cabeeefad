/* Watchdog suite: heartbeats, the stall and recovery log lines, and the
 * barrier not counting as a stall.
 *
 * One worker polls tw-stall, a test-only input node that sleeps for as
 * long as the test asks, once, on the thread it names; everything else
 * about the loop is the engine's. Log lines are read from the file
 * base_log_set_file copies them to. Times are physical (sleeps), so the
 * bounds are tolerances around the stall the test made. */
#include <check.h>

#include "tests/check_run.h"
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"
#include "tests/graph/test_nodes.h"

#define STALL_WARN_NS 200000000ull /* 200 ms */

static _Atomic uint32_t stall_ms[GRAPH_MAX_THREADS];

static void sleep_ms(uint32_t ms)
{
	struct timespec d = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	nanosleep(&d, NULL);
}

static uint32_t stall_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t ms = atomic_exchange(&stall_ms[rt->thread_index], 0);
	if (ms)
		sleep_ms(ms);
	return 0;
}

static const struct node_reg tw_stall_node = {
	.name = "tw-stall",
	.type = NODE_TYPE_INPUT,
	.fn = stall_fn,
};

static FILE *log_file;

/* Lines logged so far that contain `what`. */
static uint32_t log_count(const char *what, char *last, size_t len)
{
	fflush(log_file);
	rewind(log_file);
	char line[512];
	uint32_t n = 0;
	while (fgets(line, sizeof(line), log_file))
		if (strstr(line, what)) {
			n++;
			if (last)
				snprintf(last, len, "%s", line);
		}
	fseek(log_file, 0, SEEK_END);
	return n;
}

static struct graph *start_n(uint32_t n_workers)
{
	static const struct node_reg *const regs[] = { &tw_stall_node };
	char err[256];
	tn_buffers(1024);
	log_file = tmpfile();
	ck_assert_ptr_nonnull(log_file);
	base_log_set_file(log_file);
	struct graph *g = tn_graph(regs, ARRAY_LEN(regs));
	ck_assert_int_eq(graph_workers_start(g, NULL, n_workers, err, sizeof(err)), 0);
	ck_assert_msg(graph_watchdog_start(g, STALL_WARN_NS, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(graph_watchdog_start(g, STALL_WARN_NS, err, sizeof(err)), -EBUSY);
	return g;
}

static struct graph *start(void)
{
	return start_n(1);
}

static void stop(struct graph *g)
{
	graph_destroy(g);
	base_log_set_file(NULL);
	fclose(log_file);
	buffer_main_free();
}

static struct graph_thread_info thread_info(struct graph *g, uint32_t i)
{
	struct graph_thread_info ti;
	ck_assert_int_eq(graph_thread_info(g, i, &ti), 0);
	return ti;
}

static struct graph_thread_info worker_info(struct graph *g)
{
	return thread_info(g, 1);
}

/* Wait up to ms for worker 0's stalled flag to read `want`. */
static bool wait_stalled(struct graph *g, bool want, uint32_t ms)
{
	for (uint32_t i = 0; i < ms / 10; i++) {
		if (worker_info(g).stalled == want)
			return true;
		sleep_ms(10);
	}
	return false;
}

/* A worker that sleeps 1 s in a node: `show threads` material says
 * stalled with an age past the threshold, a line says so, and a line says
 * it recovered, after about the time it slept. The main thread, which is
 * not looping here, is never judged. On a loaded machine the worker may
 * also miss the threshold on its own (descheduled): such stalls are real
 * and logged too, so the test looks at the lines its stall made and checks
 * that every stall line has its recovery. */
START_TEST(test_stall_reported_then_recovered)
{
	struct graph *g = start();
	sleep_ms(300);
	struct graph_thread_info ti = worker_info(g);
	ck_assert(ti.running);
	ck_assert_uint_gt(ti.loops, 0);
	ck_assert_msg(wait_stalled(g, false, 3000), "worker stalled before the test stalled it");
	uint32_t stalls_before = log_count("thread 1 (worker 0) stalled", NULL, 0);

	atomic_store(&stall_ms[1], 1000);
	ck_assert_msg(wait_stalled(g, true, 1000), "no stall seen within 1 s of a 1 s stall");
	ti = worker_info(g);
	ck_assert_uint_ge(ti.heartbeat_age_ns, STALL_WARN_NS);
	uint64_t loops_stalled = ti.loops;
	char line[512];
	ck_assert_uint_eq(log_count("thread 1 (worker 0) stalled: no loop for", line, sizeof(line)), stalls_before + 1);

	ck_assert_msg(wait_stalled(g, false, 3000), "no recovery within 3 s");
	ck_assert_uint_gt(worker_info(g).loops, loops_stalled);
	uint32_t n_recovered = log_count("thread 1 (worker 0) recovered after", line, sizeof(line));
	ck_assert_uint_eq(n_recovered, stalls_before + 1);
	double after = 0;
	const char *p = strstr(line, "thread 1 (worker 0) recovered after ");
	ck_assert_msg(p && sscanf(p, "thread 1 (worker 0) recovered after %lf", &after) == 1, "%s", line);
	ck_assert_msg(after >= 0.8 && after <= 2.5, "recovered after %.2f s of a 1 s stall", after);
	ck_assert_uint_eq(log_count("thread 0", NULL, 0), 0);
	stop(g);
}
END_TEST

/* Held at the barrier for twice the threshold, the worker is parked, not
 * stalled: its age reads 0 and no stall is logged while it waits. */
START_TEST(test_barrier_is_not_a_stall)
{
	struct graph *g = start();
	sleep_ms(100);
	ck_assert_msg(wait_stalled(g, false, 3000), "worker stalled before the barrier");
	graph_barrier_sync(g);
	uint32_t stalls_before = log_count("stalled", NULL, 0);
	sleep_ms(2 * STALL_WARN_NS / 1000000);
	struct graph_thread_info ti = worker_info(g);
	ck_assert(ti.parked);
	ck_assert(!ti.stalled);
	ck_assert_uint_eq(ti.heartbeat_age_ns, 0);
	ck_assert_uint_eq(log_count("stalled", NULL, 0), stalls_before);
	graph_barrier_release(g);
	stop(g);
}
END_TEST

/* Two workers, the second asleep 1.5 s in a node: the barrier that lets
 * stalled threads go parks the first and returns at once, the second still
 * stalled and not parked (`show buffers` reads with it). With no stall it
 * parks everyone and lets nobody go. */
START_TEST(test_barrier_lets_stalled_go)
{
	struct graph *g = start_n(2);
	sleep_ms(100);
	ck_assert_uint_eq(graph_barrier_sync_unstalled(g), 0);
	ck_assert(thread_info(g, 1).parked);
	ck_assert(thread_info(g, 2).parked);
	graph_barrier_release(g);

	atomic_store(&stall_ms[2], 1500);
	bool seen = false;
	for (uint32_t i = 0; i < 100 && !seen; i++) {
		seen = thread_info(g, 2).stalled;
		if (!seen)
			sleep_ms(10);
	}
	ck_assert_msg(seen, "thread 2 not stalled within 1 s of a 1.5 s stall");
	ck_assert_uint_eq(graph_barrier_sync_unstalled(g), 1);
	struct graph_thread_info t1 = thread_info(g, 1), t2 = thread_info(g, 2);
	ck_assert(t1.parked);
	ck_assert(!t2.parked);
	ck_assert(t2.stalled);
	graph_barrier_release(g);
	for (uint32_t i = 0; i < 300 && thread_info(g, 2).stalled; i++)
		sleep_ms(10);
	ck_assert_msg(!thread_info(g, 2).stalled, "thread 2 did not recover within 3 s");
	stop(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("watchdog");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_stall_reported_then_recovered);
	tcase_add_test(tc, test_barrier_is_not_a_stall);
	tcase_add_test(tc, test_barrier_lets_stalled_go);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
