/* Sleeping threads (graph/sleep.c): a worker whose inputs can all sleep
 * blocks in epoll_wait and is woken by a handoff producer's kick, its rx
 * fd, its timerfd and the barrier, and the handshake never loses a kick
 * (hammered from another thread; this suite runs under ThreadSanitizer).
 * A worker woken ahead by another thread's rx fd (graph_thread_wake_ahead)
 * is woken once per edge, not for as long as the fd stays readable.
 * The safety bound of a sleep is 1 s (cause "timeout"): a lost kick shows
 * as a timeout wakeup, which the hammer forbids, and as a value that takes
 * that long to arrive. A process node on thread 0 that suspends itself
 * runs again on time, the thread asleep in between.
 */
#include <check.h>
#include <errno.h>

#include "tests/check_run.h"
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "graph/graph.h"
#include "graph/handoff.h"

/* ---- the nodes ---- */

/* sl-ring: takes values from `ring` on the thread it runs on, counts them
 * and checks they come in order. */
static struct handoff_ring *ring;
static atomic_uint_fast64_t received;
static atomic_bool out_of_order;

static uint32_t ring_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (graph_thread_index(rt->thread) == 0 || !ring)
		return 0;
	uint32_t v[64];
	uint32_t n = handoff_dequeue(ring, v, NULL, 64);
	uint64_t next = atomic_load_explicit(&received, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		if (v[i] != (uint32_t)(next + i))
			atomic_store(&out_of_order, true);
	atomic_store_explicit(&received, next + n, memory_order_release);
	return n;
}

/* sl-fd: reads the eventfd `efd` when readable (the thread watches it). */
static int efd = -1;
static atomic_uint fd_reads;

static uint32_t fd_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (graph_thread_index(rt->thread) == 0 || efd < 0)
		return 0;
	uint64_t v;
	if (read(efd, &v, sizeof(v)) != sizeof(v))
		return 0;
	atomic_fetch_add(&fd_reads, 1);
	return 1;
}

/* sl-timer: asks to be woken `timer_ns` from now once per `arm`. */
static atomic_uint_fast64_t timer_ns;
static atomic_uint timer_fired;
static atomic_bool timer_cancel; /* forget the time asked for */
static uint64_t timer_at;

static uint32_t timer_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (graph_thread_index(rt->thread) == 0)
		return 0;
	uint64_t ns = atomic_exchange(&timer_ns, 0);
	uint64_t now = time_now_ns();
	if (atomic_exchange(&timer_cancel, false))
		timer_at = 0;
	if (ns) {
		timer_at = now + ns;
	} else if (timer_at && now >= timer_at) {
		timer_at = 0;
		atomic_fetch_add(&timer_fired, 1);
		return 1;
	}
	if (timer_at)
		graph_thread_wake_within(rt->thread, timer_at - now);
	return 0;
}

static const struct node_reg ring_node = { .name = "sl-ring", .type = NODE_TYPE_INPUT, .fn = ring_fn, .can_sleep = true };
static const struct node_reg fd_node = { .name = "sl-fd", .type = NODE_TYPE_INPUT, .fn = fd_fn, .can_sleep = true };
static const struct node_reg timer_node = { .name = "sl-timer", .type = NODE_TYPE_INPUT, .fn = timer_fn, .can_sleep = true };

/* ---- helpers ---- */

static struct graph *make_graph(void)
{
	char err[256];
	struct graph_config cfg;
	graph_config_default(&cfg);
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, &ring_node, err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &fd_node, err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &timer_node, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(graph_workers_start(g, NULL, 1, err, sizeof(err)), 0);
	return g;
}

static struct graph_thread_info info(struct graph *g)
{
	struct graph_thread_info ti;
	ck_assert_int_eq(graph_thread_info(g, 1, &ti), 0);
	return ti;
}

/* Up to 2 s for the worker to say it is asleep. */
static bool wait_asleep(struct graph *g)
{
	for (int i = 0; i < 20000; i++) {
		if (info(g).asleep)
			return true;
		usleep(100);
	}
	return false;
}

static void pause_us(uint32_t us)
{
	struct timespec d = { 0, (long)us * 1000 };
	nanosleep(&d, NULL);
}

/* ---- cases ---- */

/* An idle worker blocks: it sleeps, it is not spinning its loop. */
START_TEST(test_idle_blocks)
{
	struct graph *g = make_graph();
	ck_assert(wait_asleep(g));
	uint64_t loops = info(g).loops;
	usleep(200000);
	struct graph_thread_info ti = info(g);
	ck_assert(ti.asleep);
	ck_assert_uint_ge(ti.sleeps, 1);
	ck_assert_uint_le(ti.loops - loops, 4); /* asleep, not looping */
	graph_destroy(g);
}
END_TEST

/* The hammer: 200000 values one to eight at a time, often just as the
 * worker announced sleep, sometimes after it blocked; every value arrives,
 * in order, and no sleep ran into its 1 s bound. */
START_TEST(test_kick_never_lost)
{
	ring = handoff_ring_create(64, -1);
	atomic_store(&received, 0);
	atomic_store(&out_of_order, false);
	struct graph *g = make_graph();
	const uint32_t total = 200000;
	uint32_t sent = 0, seed = 12345;
	while (sent < total) {
		seed = seed * 1103515245u + 12345u;
		uint32_t k = 1 + (seed >> 16) % 8, v[8];
		k = k < total - sent ? k : total - sent;
		for (uint32_t i = 0; i < k; i++)
			v[i] = sent + i;
		uint32_t taken = handoff_enqueue(ring, v, NULL, k);
		sent += taken;
		switch ((seed >> 8) % 16) {
		case 0: /* let it fall asleep completely, then kick */
			while (!info(g).asleep && atomic_load(&received) < sent)
				;
			break;
		case 1:
			pause_us(20);
			break;
		default: /* straight on: the window between announce and block */
			break;
		}
	}
	/* Every value within 500 ms of the last send: a lost kick waits 1 s. */
	uint64_t until = time_now_ns() + 500000000ull;
	while (atomic_load(&received) < total && time_now_ns() < until)
		usleep(100);
	struct graph_thread_info ti = info(g);
	printf("hammer: %u values, %llu sleeps, %llu handoff wakeups\n", total, (unsigned long long)ti.sleeps,
	       (unsigned long long)ti.wakeups[GRAPH_WAKE_HANDOFF]);
	ck_assert_uint_eq(atomic_load(&received), total);
	ck_assert(!atomic_load(&out_of_order));
	ck_assert_uint_eq(ti.wakeups[GRAPH_WAKE_TIMEOUT], 0);
	ck_assert_uint_gt(ti.sleeps, 0);
	ck_assert_uint_gt(ti.wakeups[GRAPH_WAKE_HANDOFF], 0);
	graph_destroy(g);
	handoff_ring_free(ring);
	ring = NULL;
}
END_TEST

/* A watched fd wakes it (cause rx), each write read once. */
START_TEST(test_rx_fd_wakes)
{
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	atomic_store(&fd_reads, 0);
	struct graph *g = make_graph();
	ck_assert_int_eq(graph_rx_watch(g, 1, efd, true), 0);
	for (uint32_t i = 1; i <= 5; i++) {
		ck_assert(wait_asleep(g));
		uint64_t one = 1;
		ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one));
		uint64_t until = time_now_ns() + 500000000ull;
		while (atomic_load(&fd_reads) < i && time_now_ns() < until)
			usleep(50);
		ck_assert_uint_eq(atomic_load(&fd_reads), i);
	}
	ck_assert_uint_ge(info(g).wakeups[GRAPH_WAKE_RX], 5);
	ck_assert_int_eq(graph_rx_watch(g, 1, efd, false), 0);
	graph_destroy(g);
	close(efd);
	efd = -1;
}
END_TEST

/* graph_thread_wake_within: the timerfd wakes it on time (cause timer),
 * neither early nor 1 s late. */
START_TEST(test_timer_wakes)
{
	atomic_store(&timer_fired, 0);
	struct graph *g = make_graph();
	ck_assert(wait_asleep(g));
	uint64_t t0 = time_now_ns();
	atomic_store(&timer_ns, 30000000ull); /* the worker sees it at its next loop: kick one */
	graph_barrier_sync(g);
	graph_barrier_release(g);
	while (!atomic_load(&timer_fired) && time_now_ns() - t0 < 2000000000ull)
		usleep(100);
	uint64_t took = time_now_ns() - t0;
	ck_assert_uint_eq(atomic_load(&timer_fired), 1);
	ck_assert_uint_ge(took, 30000000ull);
	ck_assert_uint_lt(took, 500000000ull);
	ck_assert_uint_ge(info(g).wakeups[GRAPH_WAKE_TIMER], 1);
	ck_assert_uint_eq(info(g).wakeups[GRAPH_WAKE_TIMEOUT], 0);
	graph_destroy(g);
}
END_TEST

/* A wakeup by something else leaves the timer armed (no system call
 * between the frame and its receive); the next sleep, which needs no timer,
 * disarms it first: the stale expiry wakes nothing. */
START_TEST(test_stale_timer_wakes_nothing)
{
	efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(efd, 0);
	atomic_store(&fd_reads, 0);
	atomic_store(&timer_fired, 0);
	struct graph *g = make_graph();
	ck_assert_int_eq(graph_rx_watch(g, 1, efd, true), 0);
	ck_assert(wait_asleep(g));
	atomic_store(&timer_ns, 50000000ull); /* asleep with the timer armed for 50 ms */
	graph_barrier_sync(g);
	graph_barrier_release(g);
	pause_us(5000);
	ck_assert(wait_asleep(g));
	atomic_store(&timer_cancel, true); /* woken by the fd, it no longer wants the timer */
	uint64_t one = 1;
	ck_assert_int_eq(write(efd, &one, sizeof(one)), sizeof(one));
	uint64_t until = time_now_ns() + 500000000ull;
	while (atomic_load(&fd_reads) < 1 && time_now_ns() < until)
		usleep(50);
	ck_assert_uint_eq(atomic_load(&fd_reads), 1);
	pause_us(150000); /* well past the 50 ms */
	ck_assert(wait_asleep(g));
	struct graph_thread_info ti = info(g);
	ck_assert_uint_eq(atomic_load(&timer_fired), 0);
	ck_assert_uint_eq(ti.wakeups[GRAPH_WAKE_TIMER], 0);
	ck_assert_uint_eq(ti.wakeups[GRAPH_WAKE_TIMEOUT], 0);
	ck_assert_uint_ge(ti.wakeups[GRAPH_WAKE_RX], 1);
	ck_assert_int_eq(graph_rx_watch(g, 1, efd, false), 0);
	graph_destroy(g);
	close(efd);
	efd = -1;
}
END_TEST

/* Up to 500 ms for the worker's handoff wakeups to reach n. */
static bool wait_handoff_wakeups(struct graph *g, uint64_t n)
{
	uint64_t until = time_now_ns() + 500000000ull;
	while (info(g).wakeups[GRAPH_WAKE_HANDOFF] < n && time_now_ns() < until)
		usleep(50);
	return info(g).wakeups[GRAPH_WAKE_HANDOFF] >= n;
}

/* graph_thread_wake_ahead: an fd watched on thread 0 wakes the worker too
 * (cause handoff), once per time it becomes readable: the fd stays
 * readable (thread 0 does not loop here and nothing reads it), and the
 * worker still goes back to sleep after its window, woken again only by
 * the next write. Off: the write wakes it no more. */
START_TEST(test_wake_ahead)
{
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct graph *g = make_graph();
	ck_assert_int_eq(graph_thread_wake_ahead(g, 1, 1, true), -EINVAL);
	ck_assert_int_eq(graph_rx_watch(g, 0, fd, true), 0);
	ck_assert_int_eq(graph_thread_wake_ahead(g, 0, 1, true), 0);
	ck_assert(wait_asleep(g));
	struct graph_thread_info t0 = info(g);
	uint64_t one = 1;
	for (uint64_t i = 1; i <= 3; i++) {
		ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
		ck_assert(wait_handoff_wakeups(g, t0.wakeups[GRAPH_WAKE_HANDOFF] + i));
		pause_us(20000); /* 100 windows: readable all along, yet asleep */
		ck_assert(wait_asleep(g));
		ck_assert_uint_eq(info(g).wakeups[GRAPH_WAKE_HANDOFF], t0.wakeups[GRAPH_WAKE_HANDOFF] + i);
	}
	ck_assert_int_eq(graph_thread_wake_ahead(g, 0, 1, false), 0);
	ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
	pause_us(50000);
	struct graph_thread_info t1 = info(g);
	ck_assert_uint_eq(t1.wakeups[GRAPH_WAKE_HANDOFF], t0.wakeups[GRAPH_WAKE_HANDOFF] + 3);
	ck_assert_uint_eq(t1.wakeups[GRAPH_WAKE_RX], t0.wakeups[GRAPH_WAKE_RX]);
	ck_assert_uint_eq(t1.wakeups[GRAPH_WAKE_TIMEOUT], 0);
	ck_assert_int_eq(graph_rx_watch(g, 0, fd, false), 0);
	graph_destroy(g);
	close(fd);
}
END_TEST

/* A worker pinned to thread 0's core is not woken ahead: it would take
 * the core from thread 0 while thread 0 reads the frame. */
START_TEST(test_wake_ahead_not_same_core)
{
	char err[256];
	int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	ck_assert_int_ge(fd, 0);
	struct graph_config cfg;
	graph_config_default(&cfg);
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, &ring_node, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	int cpu0 = 0;
	ck_assert_msg(graph_main_pin(g, cpu0, err, sizeof(err)) == 0, "%s", err); /* this forked test's thread */
	ck_assert_int_eq(graph_workers_start(g, &cpu0, 1, err, sizeof(err)), 0);
	ck_assert_int_eq(graph_rx_watch(g, 0, fd, true), 0);
	ck_assert_int_eq(graph_thread_wake_ahead(g, 0, 1, true), 0);
	ck_assert(wait_asleep(g));
	uint64_t h0 = info(g).wakeups[GRAPH_WAKE_HANDOFF];
	uint64_t one = 1;
	ck_assert_int_eq(write(fd, &one, sizeof(one)), sizeof(one));
	pause_us(50000);
	ck_assert_uint_eq(info(g).wakeups[GRAPH_WAKE_HANDOFF], h0);
	ck_assert_int_eq(graph_rx_watch(g, 0, fd, false), 0);
	graph_destroy(g);
	close(fd);
}
END_TEST

/* The barrier wakes a sleeping thread at once (cause control), and the
 * watchdog does not call a sleeping thread stalled. */
START_TEST(test_barrier_and_watchdog)
{
	char err[256];
	struct graph *g = make_graph();
	ck_assert_int_eq(graph_watchdog_start(g, 50000000ull, err, sizeof(err)), 0);
	ck_assert(wait_asleep(g));
	uint64_t control = info(g).wakeups[GRAPH_WAKE_CONTROL];
	uint64_t t0 = time_now_ns();
	graph_barrier_sync(g);
	uint64_t took = time_now_ns() - t0;
	graph_barrier_release(g);
	ck_assert_uint_lt(took, 200000000ull); /* not the 1 s bound */
	ck_assert_uint_gt(info(g).wakeups[GRAPH_WAKE_CONTROL], control);
	ck_assert(wait_asleep(g));
	usleep(300000); /* six stall thresholds asleep */
	struct graph_thread_info ti = info(g);
	ck_assert(!ti.stalled);
	ck_assert_uint_eq(ti.heartbeat_age_ns, 0);
	graph_destroy(g);
}
END_TEST

/* A process node on thread 0 that suspends itself (node_suspend) runs
 * again once its time is up, judged by the loop's own clock reading, and
 * in between the thread sleeps (the wake is the timer's), not spins. */
#define PROC_RUNS 4
#define PROC_GAP_NS 30000000ull
static uint64_t proc_at[PROC_RUNS];
static uint32_t proc_runs;
static atomic_bool proc_stop;
static uint64_t proc_t0;

static uint32_t proc_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	proc_at[proc_runs++] = time_now_ns();
	if (proc_runs == PROC_RUNS)
		atomic_store(&proc_stop, true);
	node_suspend(rt, PROC_GAP_NS);
	return 0;
}

/* sl-quiet: never has work, can sleep; stops a broken loop after 3 s. */
static uint32_t quiet_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	(void)f;
	if (time_now_ns() - proc_t0 > 3000000000ull)
		atomic_store(&proc_stop, true);
	return 0;
}

static const struct node_reg proc_node = { .name = "sl-proc", .type = NODE_TYPE_PROCESS, .fn = proc_fn };
static const struct node_reg quiet_node = { .name = "sl-quiet", .type = NODE_TYPE_INPUT, .fn = quiet_fn, .can_sleep = true };

START_TEST(test_process_resumes_on_time)
{
	char err[256];
	struct graph_config cfg;
	graph_config_default(&cfg);
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, &quiet_node, err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &proc_node, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	proc_runs = 0;
	atomic_store(&proc_stop, false);
	proc_t0 = time_now_ns();
	graph_main_loop(g, &proc_stop);
	ck_assert_uint_eq(proc_runs, PROC_RUNS);
	for (int i = 1; i < PROC_RUNS; i++) {
		uint64_t gap = proc_at[i] - proc_at[i - 1];
		/* not early (1% for the tick rate's calibration), not 1 s late */
		ck_assert_uint_ge(gap, PROC_GAP_NS - PROC_GAP_NS / 100);
		ck_assert_uint_lt(gap, 500000000ull);
	}
	struct graph_thread_info ti;
	ck_assert_int_eq(graph_thread_info(g, 0, &ti), 0);
	ck_assert_uint_ge(ti.wakeups[GRAPH_WAKE_TIMER], PROC_RUNS - 1);
	ck_assert_uint_eq(ti.wakeups[GRAPH_WAKE_TIMEOUT], 0);
	ck_assert_uint_le(ti.loops, 20 * PROC_RUNS); /* slept between runs */
	graph_destroy(g);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sleep");
	TCase *tc = tcase_create("sleep");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_idle_blocks);
	tcase_add_test(tc, test_kick_never_lost);
	tcase_add_test(tc, test_rx_fd_wakes);
	tcase_add_test(tc, test_timer_wakes);
	tcase_add_test(tc, test_stale_timer_wakes_nothing);
	tcase_add_test(tc, test_barrier_and_watchdog);
	tcase_add_test(tc, test_wake_ahead);
	tcase_add_test(tc, test_wake_ahead_not_same_core);
	tcase_add_test(tc, test_process_resumes_on_time);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
