/* bench/timers/peer_timer.c: rte_timer timed the way timers.c times
 * sluice's timer service, so that bench/timers/run.sh compares like with
 * like. Written for this bench from DPDK's public API (rte_timer.h); run.sh
 * compiles it against Debian's libdpdk with pkg-config (never meson: DPDK
 * is a peer, not a dependency of sluice).
 *
 *   peer-timer EAL-ARGS... -- [--rte-malloc] [sizes...]
 *                                    default 1000 100000 1000000
 *
 * One lcore (EAL's -l 0: CPU 0, where timers.c pins itself). Per size N,
 * the passes of timers.c, each figure the MEAN over the pass (its ticks over
 * its operations, as DPDK's timer_perf_autotest reports), the median
 * 1024-operation chunk beside:
 *   arm     rte_timer_reset of N stopped timers, 1 s ahead (SINGLE)
 *   expire  sleep 1.1 s, then rte_timer_manage until all N callbacks ran;
 *           ticks per expiry
 *   rearm   arm N again (not timed), then rte_timer_reset of every armed one
 *           to a random delay in [0, 1 s): the delays timers.c draws
 *           (rand() after srand(1), in the same order), in timer ticks
 *   expire_random  those expired the same way
 *   cancel  arm N again (not timed), rte_timer_stop of each
 *   idle    rte_timer_manage with nothing armed (mean of 1000)
 * timer_perf_autotest has no stop pass, and its "Resetting" pass resets
 * timers that already expired (stopped), not armed ones: this harness times
 * what sluice's cancel and rearm do.
 *
 * Memory per timer: the application owns each struct rte_timer. They are
 * one aligned_alloc'd array from the ordinary heap, as sluice's service
 * allocates its pools (4 KB pages on both sides whatever EAL's memory
 * mode), so timer_bytes is sizeof(struct rte_timer), alloc_overhead what
 * malloc_usable_size gives beyond the request (per timer), and
 * subsystem_bytes the timer library's own memzones (per-lcore lists,
 * fixed, found by name); bytes_per_timer counts all three over N, as
 * sluice's figure counts everything its service holds.
 *
 * --rte-malloc: the timers in rte_malloc memory instead, as
 * timer_perf_autotest keeps them (EAL's hugepages when it has them): not
 * matched, since sluice's pools are on the ordinary heap; run.sh prints it
 * as rte_timer at its best memory.
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_common.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_malloc.h>
#include <rte_memzone.h>
#include <rte_timer.h>

#include "pass.h"

#define NS_PER_SECOND 1000000000ull

static uint64_t n_callbacks;
static bool use_rte_malloc;

static void count_cb(struct rte_timer *t, void *arg)
{
	(void)t;
	(void)arg;
	n_callbacks++;
}

struct size_run {
	struct rte_timer *t;
	uint64_t *delay; /* timer ticks */
	uint64_t second; /* timer ticks in 1 s */
	uint32_t n;
	unsigned lcore;
};

enum op { OP_ARM, OP_REARM, OP_CANCEL };

static void do_op(struct size_run *r, enum op op, uint32_t i)
{
	int rc;
	if (op == OP_ARM)
		rc = rte_timer_reset(&r->t[i], r->second, SINGLE, r->lcore, count_cb, NULL);
	else if (op == OP_REARM)
		rc = rte_timer_reset(&r->t[i], r->delay[i], SINGLE, r->lcore, count_cb, NULL);
	else
		rc = rte_timer_stop(&r->t[i]);
	if (rc) {
		fprintf(stderr, "operation %d on timer %u failed: %d\n", op, i, rc);
		exit(1);
	}
}

/* The pass of op over every timer, timed by pass.h (as timers.c). */
static void timed_pass(struct size_run *r, enum op op, struct pass *p)
{
#define DO_OP(k) do_op(r, op, k)
	PASS_TIME(p, r->n, rte_rdtsc, DO_OP);
#undef DO_OP
}

static double expire_all(struct size_run *r)
{
	usleep(1100000);
	n_callbacks = 0;
	uint64_t t0 = rte_rdtsc();
	while (n_callbacks < r->n)
		rte_timer_manage();
	return (double)(rte_rdtsc() - t0) / r->n;
}

static void add_timer_zone(const struct rte_memzone *mz, void *arg)
{
	if (strstr(mz->name, "timer"))
		*(size_t *)arg += mz->len;
}

static size_t subsystem_bytes(void)
{
	size_t sum = 0;
	rte_memzone_walk(add_timer_zone, &sum);
	return sum;
}

/* The delays timers.c draws for a size of n: the same generator, the same
 * order, then nanoseconds as timer ticks. */
static void draw_delays(struct size_run *r)
{
	double ticks_per_ns = (double)rte_get_timer_hz() / NS_PER_SECOND;
	for (uint32_t i = 0; i < r->n; i++)
		r->delay[i] = (uint64_t)((double)pass_delay_ns() * ticks_per_ns);
}

static void run_size(uint32_t n)
{
	struct size_run r = { .n = n, .second = rte_get_timer_hz(), .lcore = rte_lcore_id() };
	size_t want = RTE_ALIGN_CEIL((size_t)n * sizeof(struct rte_timer), 64);
	r.t = use_rte_malloc ? rte_malloc("timers", want, 64) : aligned_alloc(64, want);
	r.delay = malloc((size_t)n * sizeof(*r.delay));
	struct pass p = { .chunk = malloc((n / PASS_CHUNK + 1) * sizeof(uint64_t)) };
	if (!r.t || !r.delay || !p.chunk) {
		fprintf(stderr, "out of memory for %u timers\n", n);
		exit(1);
	}
	for (uint32_t i = 0; i < n; i++)
		rte_timer_init(&r.t[i]); /* also faults the pages in before timing */
	draw_delays(&r);
	double mean[3], med[3];
	timed_pass(&r, OP_ARM, &p);
	mean[OP_ARM] = (double)p.total / n, med[OP_ARM] = pass_median(&p, n);
	double expire = expire_all(&r);
	timed_pass(&r, OP_ARM, &p);
	timed_pass(&r, OP_REARM, &p);
	mean[OP_REARM] = (double)p.total / n, med[OP_REARM] = pass_median(&p, n);
	double expire_random = expire_all(&r);
	timed_pass(&r, OP_ARM, &p);
	timed_pass(&r, OP_CANCEL, &p);
	mean[OP_CANCEL] = (double)p.total / n, med[OP_CANCEL] = pass_median(&p, n);
	uint64_t t0 = rte_rdtsc();
	for (uint32_t i = 0; i < 1000; i++)
		rte_timer_manage();
	double idle = (double)(rte_rdtsc() - t0) / 1000;
	size_t usable = 0;
	if (use_rte_malloc)
		rte_malloc_validate(r.t, &usable);
	else
		usable = malloc_usable_size(r.t);
	double overhead = ((double)usable - (double)n * sizeof(struct rte_timer)) / n;
	size_t sub = subsystem_bytes();
	printf("rte_timer n=%u arm=%.1f rearm=%.1f cancel=%.1f expire=%.1f expire_random=%.1f idle=%.1f "
	       "arm_median=%.1f rearm_median=%.1f cancel_median=%.1f timer_bytes=%zu alloc_overhead=%.2f "
	       "subsystem_bytes=%zu bytes_per_timer=%.1f\n",
	       n, mean[OP_ARM], mean[OP_REARM], mean[OP_CANCEL], expire, expire_random, idle, med[OP_ARM],
	       med[OP_REARM], med[OP_CANCEL], sizeof(struct rte_timer), overhead, sub,
	       sizeof(struct rte_timer) + overhead + (double)sub / n);
	fflush(stdout);
	if (use_rte_malloc)
		rte_free(r.t);
	else
		free(r.t);
	free(r.delay);
	free(p.chunk);
}

int main(int argc, char **argv)
{
	int used = rte_eal_init(argc, argv);
	if (used < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	argc -= used;
	argv += used;
	if (rte_timer_subsystem_init() < 0) {
		fprintf(stderr, "rte_timer_subsystem_init failed\n");
		return 1;
	}
	srand(1); /* timers.c's seed: the same delays */
	printf("tsc_hz=%llu timer_hz=%llu\n", (unsigned long long)rte_get_tsc_hz(),
	       (unsigned long long)rte_get_timer_hz());
	int first = 1;
	if (argc > 1 && !strcmp(argv[1], "--rte-malloc")) {
		use_rte_malloc = true;
		first = 2;
	}
	if (argc > first) {
		for (int i = first; i < argc; i++)
			run_size((uint32_t)strtoul(argv[i], NULL, 0));
	} else {
		static const uint32_t sizes[] = { 1000, 100000, 1000000 };
		for (uint32_t i = 0; i < RTE_DIM(sizes); i++)
			run_size(sizes[i]);
	}
	rte_timer_subsystem_finalize();
	rte_eal_cleanup();
	return 0;
}
