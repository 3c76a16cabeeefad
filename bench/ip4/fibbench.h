/* What the FIB benches share, so that sluice (fib.c) and rte_lpm/rte_fib
 * (peer_fib.c, built against libdpdk by run.sh) do the same work, timed the
 * same way:
 *   - the lookup addresses: uniformly random 32-bit addresses from their
 *     own generator, restarted for every pass, so each lookup pass of each
 *     table sees the same stream, batch by batch;
 *   - a warm-up: WARMUP batches of single lookups, untimed, first;
 *   - the batching: BATCH addresses are generated outside the timed region,
 *     then looked up inside it (single, x4, or bulk of BULK), each batch
 *     timed on its own; a pass's figure is the median over its batches of
 *     ticks per lookup (pass_figure), its mean beside it. The median is the
 *     row: on a box shared with other work a batch (~50 us) that holds a
 *     preemption or another process's cache flush counts as one batch, not
 *     as its whole stall spread over the pass (bench/ip4, 5 rounds, on the
 *     2-vCPU box at load 9-20: sluice's single lookups 27.7 ticks as batch
 *     medians, 92.8 as pass means, rte_lpm's 41.3 and 94.0);
 *   - what a pass keeps of each result: its sum (a miss adds 0), printed so
 *     run.sh can check that every table answered the same;
 *   - the clock: fib_ticks(), rdtsc;
 *   - the options (--seed, --iterations, --route-div) and the route set;
 *   - the report of which pages a table actually got (/proc/self/smaps).
 * Header-only, plain C: no sluice and no DPDK header beyond routes.h and
 * smaps.h. */
#ifndef SLUICE_BENCH_IP4_FIBBENCH_H
#define SLUICE_BENCH_IP4_FIBBENCH_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ip4/routes.h"
#include "bench/ip4/smaps.h"

#define BATCH 4096
#define BULK 32 /* lpm_perf_autotest's bulk and a sluice frame's quarter */
#define WARMUP 16 /* batches of single lookups, untimed, before the passes */
#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif

/* The TSC, read the same way on both sides (sluice's cpu_ticks, DPDK's
 * rte_rdtsc: a plain rdtsc, no fence). */
static inline uint64_t fib_ticks(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t addr_state;

/* Ticks per lookup of each batch of the pass being timed (fib_setup
 * allocates one slot per --iterations batch). */
static double *batch_ticks;

/* A pass's figures: the median and the mean over its batches. */
struct pass_fig {
	double median, mean;
};

static inline void pass_batch(uint32_t i, uint64_t ticks)
{
	batch_ticks[i] = (double)ticks / BATCH;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* The figures of the pass's n batches (sorts batch_ticks). */
static struct pass_fig pass_figure(uint32_t n)
{
	double sum = 0;
	for (uint32_t i = 0; i < n; i++)
		sum += batch_ticks[i];
	qsort(batch_ticks, n, sizeof(*batch_ticks), cmp_double);
	double med = n % 2 ? batch_ticks[n / 2] : (batch_ticks[n / 2 - 1] + batch_ticks[n / 2]) / 2;
	return (struct pass_fig){ .median = med, .mean = n ? sum / n : 0 };
}

static void addr_restart(void)
{
	addr_state = 0x2545f4914f6cdd1dull;
}

static void fill_batch(uint32_t *b)
{
	for (uint32_t j = 0; j < BATCH; j++) {
		uint64_t x = addr_state;
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		addr_state = x;
		b[j] = (uint32_t)(x >> 32);
	}
}

/* A pass's "bench: SIDE.KEY median" and "bench: SIDE.KEY_mean mean" lines
 * (run.sh's rows take the median; the mean is shown beside it). */
static void print_pass(const char *side, const char *key, struct pass_fig f)
{
	printf("bench: %s.%s %.3f\nbench: %s.%s_mean %.3f\n", side, key, f.median, side, key, f.mean);
}

/* The pages behind addr as the kernel shows them: "2 MB hugetlb", "THP n of
 * m MB" or "4 KB" (with the mapping's name when it has one, e.g. DPDK's
 * memfd). */
static void page_report(const void *addr, char *buf, size_t len)
{
	struct smaps_kb m;
	snprintf(buf, len, "unknown (no smaps)");
	if (!smaps_of(addr, &m))
		return;
	const char *sep = m.name[0] ? ", " : "";
	if (m.kernel_page >= 2048)
		snprintf(buf, len, "2 MB hugetlb%s%s", sep, m.name);
	else if (m.anon_huge + m.shmem_pmd > 0)
		snprintf(buf, len, "THP %ld of %ld MB%s%s", (m.anon_huge + m.shmem_pmd) >> 10, m.size >> 10,
			 sep, m.name);
	else if (m.kernel_page)
		snprintf(buf, len, "4 KB%s%s", sep, m.name);
}

/* The options both benches take; the peer ignores --churn, --no-huge (its
 * memory is EAL's) and --dump. */
struct fib_opts {
	uint64_t seed;       /* the route set's (0: routes.h's default) */
	uint32_t iterations; /* lookup batches per pass */
	uint32_t div;        /* the mix divided by */
	uint32_t churn;      /* sluice only: churn operations */
	bool no_huge;        /* sluice only: IP4_FIB_MEM_4K */
	const char *dump;    /* sluice only: write the set for dpdk-test-fib */
};

/* Parse the options, then make the route set (*routes, returned count) and
 * the batch buffer; 0 on a bad option or no memory. */
static uint32_t fib_setup(int argc, char **argv, struct fib_opts *o, struct route **routes,
			  uint32_t **batch)
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "route-div", required_argument, NULL, 'd' },
		{ "churn", required_argument, NULL, 'c' },
		{ "no-huge", no_argument, NULL, 'n' },
		{ "dump", required_argument, NULL, 'w' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct fib_opts){ .iterations = 1024, .div = 1, .churn = 100000 };
	optind = 1;
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (c == 's')
			o->seed = strtoull(optarg, NULL, 0);
		else if (c == 'i')
			o->iterations = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'd')
			o->div = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'c')
			o->churn = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'n')
			o->no_huge = true;
		else if (c == 'w')
			o->dump = optarg;
		else
			return 0;
	}
	if (o->seed)
		rng_state = o->seed;
	*batch = malloc(BATCH * sizeof(**batch));
	*routes = malloc(ROUTES_MAX * sizeof(**routes));
	batch_ticks = o->iterations ? malloc(o->iterations * sizeof(*batch_ticks)) : NULL;
	if (!*batch || !*routes || !batch_ticks || !o->div) {
		fprintf(stderr, "usage: [--seed N] [--iterations N>0] [--route-div N>0] [--churn N] "
				"[--no-huge] [--dump PATH]\n");
		return 0;
	}
	return make_routes_div(*routes, o->div);
}

#endif
