/* sluice-bench-elog: what logging one event costs, timed the way DPDK's
 * trace_perf_autotest times rte_trace (app/test/test_trace_perf.c): a
 * thread logs in blocks of 100 x 100 calls, reading the TSC around each
 * block, for --ms milliseconds; ticks per event is the pass's ticks over
 * its events. A round is one pass; the bench prints every round and the
 * median.
 *
 * Per event, the datapath path (--path thread, the default) does what a
 * graph thread does: cpu_ticks(), six relaxed stores of the 32-byte record
 * into its own ring and a release store of the head; one u64 argument, as
 * the peer's generic_u64 point. --path control logs through the shared
 * control track (a mutex a event): what a CLI session or the watchdog
 * pays, not the datapath.
 *
 * --count N logs exactly N events and exits, untimed: callgrind.sh counts
 * instructions per event from two such runs.
 *
 * Usage: sluice-bench-elog [--path thread|control] [--rounds R] [--ms MS]
 *                          [--size N] [--cpu C] [--count N]
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/elog.h"

static struct elog_type bench_type = {
	.name = "bench", .category = "bench",
	.arg_name = { "a", "u64" }, .arg_kind = { ELOG_ARG_UINT, ELOG_ARG_UINT },
};
ELOG_TYPE_REGISTER(bench_type)

#define STEP 100
#define CENT(op)                                                                               \
	do {                                                                                   \
		for (int k_ = 0; k_ < 100; k_++)                                               \
			op;                                                                    \
	} while (0)

/* Not inlined into main: the block is one function, as the peer's worker. */
static __attribute__((noinline)) uint64_t block(void)
{
	uint64_t start = cpu_ticks();
	for (int i = 0; i < STEP; i++)
		CENT(elog_log(&bench_type, 0, 0x120000, 0));
	return cpu_ticks() - start;
}

static double pass(double ticks_per_ms, uint32_t ms)
{
	uint64_t until = cpu_ticks() + (uint64_t)(ticks_per_ms * ms);
	uint64_t ticks = 0, blocks = 0;
	while (cpu_ticks() < until) {
		ticks += block();
		blocks++;
	}
	return (double)ticks / (double)(blocks * STEP * 100);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (pthread_setaffinity_np(pthread_self(), sizeof(set), &set))
		fprintf(stderr, "sluice-bench-elog: cannot pin to cpu %d\n", cpu);
}

int main(int argc, char **argv)
{
	const char *path = "thread";
	uint32_t rounds = 7, ms = 100, size = ELOG_SIZE_DEFAULT;
	long count = -1;
	int cpu = -1;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--path"))
			path = argv[i + 1];
		else if (!strcmp(argv[i], "--rounds"))
			rounds = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--ms"))
			ms = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--size"))
			size = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--cpu"))
			cpu = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--count"))
			count = atol(argv[i + 1]);
		else
			return fprintf(stderr, "sluice-bench-elog: unknown option %s\n", argv[i]), 2;
	}
	if (cpu >= 0)
		pin(cpu);
	elog_set_size(size);
	if (elog_track_register(0, "main"))
		return fprintf(stderr, "sluice-bench-elog: out of memory\n"), 1;
	elog_thread_bind(strcmp(path, "control") ? 0 : ELOG_TRACK_CONTROL);
	if (count >= 0) {
		for (long i = 0; i < count; i++)
			elog_log(&bench_type, 0, 0x120000, 0);
		return 0;
	}
	double hz = cpu_ticks_per_second();
	double r[64];
	rounds = rounds < 1 ? 1 : rounds > 64 ? 64 : rounds;
	pass(hz / 1e3, 10); /* warm: the ring's pages, the branch predictors */
	for (uint32_t i = 0; i < rounds; i++) {
		r[i] = pass(hz / 1e3, ms);
		printf("round\t%s\t%u\t%.2f\t%.2f\n", path, i, r[i], r[i] / hz * 1e9);
	}
	qsort(r, rounds, sizeof(r[0]), cmp_double);
	double med = r[rounds / 2];
	printf("median\t%s\t%.2f\t%.2f\t%.0f\n", path, med, med / hz * 1e9, hz);
	return 0;
}
