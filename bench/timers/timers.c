/* bench/timers: the timer service's costs, in TSC ticks per operation,
 * measured the way bench/timers/peer_timer.c measures rte_timer (run.sh runs
 * both and emits the comparison rows).
 *
 *   sluice-bench-timers [--sim] [sizes...]  default 1000 100000 1000000
 *   sluice-bench-timers producer SECS       the cross-thread figures only
 *
 * --sim: a simulated clock (20 ns per read; the 1.1 s sleeps are steps of
 * the clock) so that every run does exactly the same work, for counting
 * instructions with callgrind (callgrind.sh); its ticks mean nothing.
 *
 * Per size N, one thread on CPU 0; the figure of each pass is its MEAN, the
 * whole pass's ticks over its operations, as DPDK's timer_perf_autotest
 * reports rte_timer (one rdtsc pair around the loop; "Time per timer",
 * "Time per callback"). The median 1024-operation chunk is printed beside
 * (the *_median keys): on a shared box a preempted chunk costs millions of
 * ticks, and the median shows what the code costs when nothing intervenes.
 *   arm_rel N timers 1 s after the service's last run (timer_arm_ticks:
 *           no clock read, VPP's relative start), first pass of a fresh
 *           service of its own (as arm is of the service below)
 *   arm     N timers, all 1 s ahead (relative form: one clock read each)
 *   expire  sleep 1.1 s, then run the service until all N callbacks ran;
 *           ticks per expiry (timer_perf_autotest's "Time per callback")
 *   rearm   arm N again (not timed), then move every armed one to a random
 *           delay in [0, 1 s) (rand() after srand(1), the draw
 *           peer_timer.c makes: the same delays on both sides)
 *   expire_random  the re-armed ones expired the same way
 *   cancel  arm N timers 1 s ahead again (not timed), cancel each
 *   idle    a run with nothing armed (mean of 1000)
 * and the service's memory with N armed (memory_bytes, everything the
 * service holds; bytes_per_timer is that over N) plus the handle the caller
 * keeps per timer (handle_bytes).
 *
 * Producer: the owner runs its loop on CPU 1, a producer on CPU 0 arms
 * timers 10 us ahead (tick 1 us) as fast as the service lets it, singly or
 * in bursts of 32, through each cross-thread path. Printed: arms/s, ticks
 * per arm call (what DPDK calls arm latency), expiries/s at the owner, and
 * how late expiries were delivered after their deadline (mean, p99).
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"
#include "sched/timer.h"

#include "pass.h"

static uint64_t n_callbacks;
static bool sim;
static uint64_t sim_ns = 1000000000ull;

static uint64_t sim_clock(void *arg)
{
	(void)arg;
	return sim_ns += 20;
}

static void count_cb(struct timer_service *ts, const struct timer_event *ev, uint32_t n, void *arg)
{
	(void)ts;
	(void)ev;
	(void)arg;
	n_callbacks += n;
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* n_producers 0: the pool holds the owner's n timers and nothing else. */
static struct timer_service *make_service(uint32_t n, uint64_t tick_ns, enum timer_xmode mode,
					  uint32_t n_producers, timer_clock_fn_t *clock)
{
	struct timer_config c;
	char err[128];
	timer_config_default(&c);
	c.max_timers = n;
	c.tick_ns = tick_ns;
	c.xmode = mode;
	c.max_producers = n_producers;
	c.producer_timers = 16384; /* outstanding timers, as the DPDK harness's pool */
	struct timer_service *ts = timer_service_create(&c, clock, NULL, err, sizeof(err));
	if (!ts) {
		fprintf(stderr, "timer_service_create: %s\n", err);
		exit(1);
	}
	return ts;
}

/* ---- single thread, per size ---- */

enum op { OP_ARM, OP_REARM, OP_CANCEL, OP_ARM_TICKS };

struct size_run {
	struct timer_service *ts;
	int tg;
	timer_handle_t *h;
	uint32_t *delay;
	uint32_t n;
	uint64_t second_ticks; /* 1 s in the service's ticks, for OP_ARM_TICKS */
};

static void do_op(struct size_run *r, enum op op, uint32_t i)
{
	int rc = 0;
	if (op == OP_ARM)
		rc = timer_arm(r->ts, &(struct timer_spec){ .interval_ns = 1000000000ull, .cookie = i, .target = (uint16_t)r->tg },
			       &r->h[i]);
#ifdef TIMER_HAS_ARM_TICKS
	else if (op == OP_ARM_TICKS)
		rc = timer_arm_ticks(r->ts, r->second_ticks, i, (uint16_t)r->tg, &r->h[i]);
#endif
	else if (op == OP_REARM)
		rc = timer_rearm(r->ts, r->h[i], 0, r->delay[i]);
	else
		rc = timer_cancel(r->ts, r->h[i]);
	if (rc) {
		fprintf(stderr, "operation %d on timer %u failed: %d\n", op, i, rc);
		exit(1);
	}
}

/* The pass of op over every timer, timed by pass.h (as peer_timer.c). */
static void timed_pass(struct size_run *r, enum op op, struct pass *p)
{
#define DO_OP(k) do_op(r, op, k)
	PASS_TIME(p, r->n, cpu_ticks, DO_OP);
#undef DO_OP
}

/* Sleep past the deadlines (as timer_perf_autotest does), then run the
 * service until every pending timer's callback ran; ticks per expiry. */
static double expire_all(struct size_run *r)
{
	if (sim)
		sim_ns += 1100000000ull;
	else
		usleep(1100000);
	n_callbacks = 0;
	uint64_t t0 = cpu_ticks();
	while (n_callbacks < r->n)
		timer_service_run(r->ts);
	return (double)(cpu_ticks() - t0) / r->n;
}

/* Where bytes_per_timer goes, per armed timer (the goal is a total, the
 * handle included, so each part's share shows what to shrink). */
static void print_memory(uint32_t n, const struct timer_stats *st)
{
	const struct timer_memory *m = &st->mem;
	printf("sluice_memory n=%u entry_bytes=%u timers=%.2f heads=%.3f skiplist=%.3f periodic=%.3f service=%.3f "
	       "producers=%.3f handle=%zu total=%.2f\n",
	       n, m->entry_bytes, (double)m->timers / n, (double)m->heads / n, (double)m->skiplist / n,
	       (double)m->periodic / n, (double)m->service / n, (double)m->producers / n, sizeof(timer_handle_t),
	       (double)st->memory_bytes / n + (double)sizeof(timer_handle_t));
}

/* The relative arm (timer_arm_ticks: 1 s after the service's last run, no
 * clock read) timed as the first pass of a fresh service of its own, as
 * the arm pass below is of its service: both start from the same state. */
static void arm_ticks_pass(struct size_run *r, struct pass *p, double *mean, double *med)
{
#ifndef TIMER_HAS_ARM_TICKS /* a revision before it (run.sh BEFORE=): no figure */
	(void)r, (void)p;
	*mean = *med = -1;
	return;
#endif
	struct size_run t = *r;
	t.ts = make_service(r->n, TIMER_TICK_NS_DEFAULT, TIMER_XMODE_RING, 0, sim ? sim_clock : NULL);
	t.tg = timer_target_callback(t.ts, count_cb, NULL);
#ifdef TIMER_HAS_ARM_TICKS
	t.second_ticks = timer_ticks(t.ts, 1000000000ull);
#endif
	timed_pass(&t, OP_ARM_TICKS, p);
	*mean = (double)p->total / r->n, *med = pass_median(p, r->n);
	timer_service_destroy(t.ts);
}

static void run_size(uint32_t n)
{
	struct size_run r = { .n = n };
	r.h = malloc((size_t)n * sizeof(*r.h));
	r.delay = malloc((size_t)n * sizeof(*r.delay));
	struct pass p = { .chunk = malloc((n / PASS_CHUNK + 1) * sizeof(uint64_t)) };
	/* Fault the pages in before timing. Not with zeros: GCC turns malloc
	 * and a memset of 0 into calloc, which leaves fresh mmap'd pages
	 * untouched, and the first timed pass (arm_rel) then took a page
	 * fault every 512 arms: at 1M, 54.7 ticks an arm instead of ~10.5. */
	memset(r.h, 0xff, (size_t)n * sizeof(*r.h));
	for (uint32_t i = 0; i < n; i++)
		r.delay[i] = pass_delay_ns();
	double mean[4], med[4];
	arm_ticks_pass(&r, &p, &mean[OP_ARM_TICKS], &med[OP_ARM_TICKS]);
	r.ts = make_service(n, TIMER_TICK_NS_DEFAULT, TIMER_XMODE_RING, 0, sim ? sim_clock : NULL);
	r.tg = timer_target_callback(r.ts, count_cb, NULL);
	timed_pass(&r, OP_ARM, &p);
	mean[OP_ARM] = (double)p.total / n, med[OP_ARM] = pass_median(&p, n);
	struct timer_stats st;
	timer_stats(r.ts, &st);
	double expire = expire_all(&r);
	timed_pass(&r, OP_ARM, &p);
	timed_pass(&r, OP_REARM, &p);
	mean[OP_REARM] = (double)p.total / n, med[OP_REARM] = pass_median(&p, n);
	double expire_random = expire_all(&r);
	timed_pass(&r, OP_ARM, &p);
	timed_pass(&r, OP_CANCEL, &p);
	mean[OP_CANCEL] = (double)p.total / n, med[OP_CANCEL] = pass_median(&p, n);
	uint64_t t0 = cpu_ticks();
	for (uint32_t i = 0; i < 1000; i++)
		timer_service_run(r.ts);
	double idle = (double)(cpu_ticks() - t0) / 1000;
	printf("sluice n=%u arm=%.1f rearm=%.1f cancel=%.1f expire=%.1f expire_random=%.1f idle=%.1f "
	       "arm_median=%.1f rearm_median=%.1f cancel_median=%.1f memory_bytes=%llu bytes_per_timer=%.2f "
	       "handle_bytes=%zu",
	       n, mean[OP_ARM], mean[OP_REARM], mean[OP_CANCEL], expire, expire_random, idle, med[OP_ARM],
	       med[OP_REARM], med[OP_CANCEL], (unsigned long long)st.memory_bytes, (double)st.memory_bytes / n,
	       sizeof(timer_handle_t));
	if (mean[OP_ARM_TICKS] >= 0)
		printf(" arm_rel=%.1f arm_rel_median=%.1f", mean[OP_ARM_TICKS], med[OP_ARM_TICKS]);
	printf("\n");
	print_memory(n, &st);
	free(r.h);
	free(r.delay);
	free(p.chunk);
	timer_service_destroy(r.ts);
}

/* ---- producer thread ---- */

#define LATE_US_MAX 1000

struct xrun {
	struct timer_service *ts;
	_Atomic bool stop;
	uint64_t expiries;
	uint64_t late_sum_ns;
	uint32_t late_us[LATE_US_MAX + 1];
};

static void late_cb(struct timer_service *ts, const struct timer_event *ev, uint32_t n, void *arg)
{
	struct xrun *x = arg;
	uint64_t now = timer_now(ts);
	for (uint32_t i = 0; i < n; i++) {
		/* the cookie is the deadline's low 32 bits (4.3 s): lateness mod 2^32 */
		uint32_t d = (uint32_t)now - (uint32_t)ev[i].cookie;
		uint64_t late = d < (1u << 31) ? d : 0;
		x->late_sum_ns += late;
		x->late_us[MIN(late / 1000, (uint64_t)LATE_US_MAX)]++;
	}
	x->expiries += n;
}

static void *owner_main(void *arg)
{
	struct xrun *x = arg;
	pin(1);
	while (!atomic_load_explicit(&x->stop, memory_order_relaxed))
		timer_service_run(x->ts);
	timer_service_run(x->ts);
	return NULL;
}

static double late_p99_us(const struct xrun *x)
{
	uint64_t seen = 0;
	for (uint32_t i = 0; i <= LATE_US_MAX; i++) {
		seen += x->late_us[i];
		if (seen * 100 >= x->expiries * 99)
			return i + 1;
	}
	return LATE_US_MAX;
}

/* Arm for secs from this thread (CPU 0) in bursts of `burst`. */
static void run_producer(enum timer_xmode mode, uint32_t burst, double secs)
{
	static struct xrun x;
	memset(&x, 0, sizeof(x));
	x.ts = make_service(1024, 1000, mode, 1, NULL);
	int tg = timer_target_callback(x.ts, late_cb, &x);
	char err[128];
	struct timer_producer *p = timer_producer_attach(x.ts, err, sizeof(err));
	if (!p) {
		fprintf(stderr, "attach: %s\n", err);
		exit(1);
	}
	pthread_t th;
	pthread_create(&th, NULL, owner_main, &x);
	pin(0);
	struct timer_spec s[32];
	timer_handle_t h[32];
	uint64_t armed = 0, arm_cycles = 0, calls = 0;
	uint64_t end = timer_now(x.ts) + (uint64_t)(secs * 1e9), start = timer_now(x.ts);
	for (;;) {
		uint64_t now = timer_now(x.ts);
		if (now >= end)
			break;
		for (uint32_t k = 0; k < burst; k++)
			s[k] = (struct timer_spec){ .deadline_ns = now + 10000, .cookie = (uint32_t)(now + 10000),
						    .target = (uint16_t)tg };
		uint64_t t0 = cpu_ticks();
		uint32_t done = burst == 1 ? timer_producer_arm(p, s, h) == 0 : timer_producer_arm_burst(p, s, burst, h);
		uint64_t t1 = cpu_ticks();
		if (done) {
			arm_cycles += t1 - t0;
			armed += done;
			calls++;
		}
	}
	double wall = (double)(timer_now(x.ts) - start) / 1e9;
	atomic_store(&x.stop, true);
	pthread_join(th, NULL);
	printf("producer mode=%s burst=%u arms_per_s=%.3fM cycles_per_arm=%.1f cycles_per_call=%.1f "
	       "expiries_per_s=%.3fM late_mean_us=%.2f late_p99_us<=%.0f\n",
	       mode == TIMER_XMODE_RING ? "ring" : "shard", burst, armed / wall / 1e6,
	       armed ? (double)arm_cycles / armed : 0, calls ? (double)arm_cycles / calls : 0,
	       x.expiries / wall / 1e6, x.expiries ? x.late_sum_ns / 1e3 / x.expiries : 0, late_p99_us(&x));
	timer_service_destroy(x.ts);
}

static void run_producers(double secs)
{
	static const enum timer_xmode modes[] = { TIMER_XMODE_RING, TIMER_XMODE_SHARD };
	static const uint32_t bursts[] = { 1, 32 };
	for (uint32_t m = 0; m < 2; m++)
		for (uint32_t b = 0; b < 2; b++)
			run_producer(modes[m], bursts[b], secs);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "producer")) {
		run_producers(argc > 2 ? atof(argv[2]) : 1.0);
		return 0;
	}
	pin(0);
	srand(1);
	printf("tsc_hz=%.0f\n", cpu_ticks_per_second());
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "--sim")) {
		sim = true;
		first = 2;
	}
	if (argc > first) {
		for (int i = first; i < argc; i++)
			run_size((uint32_t)strtoul(argv[i], NULL, 0));
		return 0;
	}
	static const uint32_t sizes[] = { 1000, 100000, 1000000 };
	for (uint32_t i = 0; i < ARRAY_LEN(sizes); i++)
		run_size(sizes[i]);
	return 0;
}
