/* The IPv4 FIB alone: TSC ticks per lookup (single, x4, bulk of 32) and per
 * add and delete, with 1 route and with ~1.07M routes of a BGP-like
 * prefix-length mix, shaped like DPDK's lpm_perf_autotest so that
 * bench/ip4/run.sh can print the two side by side.
 *
 *   sluice-bench-ip4-fib [--seed N] [--iterations N]
 *
 * Output: human lines, then "key value" lines prefixed "fib:" for run.sh.
 *
 * The route mix: per address class (leading bits 0, 10, 110) and depth, the
 * route counts of the real table dump that lpm_perf_autotest also uses
 * (1,076,806 routes, 64% /24, most of the rest /16../23), each depth's
 * routes spread evenly over the class from a random start; then the same
 * five extra routes. Lookups: uniformly random 32-bit addresses in batches
 * of 4096, 1024 batches, as there.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/util.h"
#include "nodes/ip4_fib.h"

#include "bench/ip4/routes.h"

#define BATCH 4096
#define BULK 32
#define CHURN 100000 /* routes deleted and re-added one at a time */

struct lookup_figures {
	double single, x4, bulk, miss_pct;
};

static uint32_t *batch;

static void fill_batch(void)
{
	for (uint32_t j = 0; j < BATCH; j++)
		batch[j] = (uint32_t)(rnd64() >> 32);
}

static struct lookup_figures measure_lookups(const struct ip4_fib *fib, uint32_t iterations)
{
	struct lookup_figures f;
	uint64_t ticks = 0, miss = 0;
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch();
		uint64_t t0 = cpu_ticks();
		for (uint32_t j = 0; j < BATCH; j++)
			miss += ip4_fib_lookup(fib, batch[j]) == IP4_FIB_MISS;
		ticks += cpu_ticks() - t0;
	}
	f.single = (double)ticks / ((double)iterations * BATCH);
	f.miss_pct = 100.0 * (double)miss / ((double)iterations * BATCH);

	ticks = 0;
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch();
		uint64_t t0 = cpu_ticks();
		for (uint32_t j = 0; j < BATCH; j += 4) {
			uint32_t out[4];
			ip4_fib_lookup_x4(fib, &batch[j], out);
			for (int k = 0; k < 4; k++)
				miss += out[k] == IP4_FIB_MISS;
		}
		ticks += cpu_ticks() - t0;
	}
	f.x4 = (double)ticks / ((double)iterations * BATCH);

	ticks = 0;
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch();
		uint64_t t0 = cpu_ticks();
		for (uint32_t j = 0; j < BATCH; j += BULK) {
			uint32_t out[BULK];
			ip4_fib_lookup_bulk(fib, &batch[j], out, BULK);
			for (int k = 0; k < BULK; k++)
				miss += out[k] == IP4_FIB_MISS;
		}
		ticks += cpu_ticks() - t0;
	}
	f.bulk = (double)ticks / ((double)iterations * BATCH);
	if (miss == UINT64_MAX) /* keeps the counting loops alive */
		puts("");
	return f;
}

/* Delete then re-add routes of the table one at a time, timing each call:
 * the churn of a full table. Returns the mean ticks of each in *del, *add. */
static void measure_churn(struct ip4_fib *fib, const struct route *r, uint32_t n_routes,
			  uint32_t n, double *del, double *add, uint64_t *worst_add)
{
	uint64_t td = 0, ta = 0, w = 0;
	uint32_t done = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct route *x = &r[rnd64() % n_routes];
		uint32_t result;
		if (ip4_fib_get(fib, x->prefix, x->len, &result))
			continue;
		ip4_fib_quiesce(fib); /* as under the barrier */
		uint64_t t0 = cpu_ticks();
		int rc = ip4_fib_del(fib, x->prefix, x->len);
		uint64_t t1 = cpu_ticks();
		rc |= ip4_fib_add(fib, x->prefix, x->len, result);
		uint64_t t2 = cpu_ticks();
		if (rc) {
			fprintf(stderr, "churn: update failed (%d)\n", rc);
			exit(1);
		}
		td += t1 - t0;
		ta += t2 - t1;
		w = MAX(w, t2 - t1);
		done++;
	}
	*del = (double)td / done;
	*add = (double)ta / done;
	*worst_add = w;
}

int main(int argc, char **argv)
{
	uint32_t iterations = 1024;
	uint64_t seed = 0;
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "iterations", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 },
	};
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (c == 's')
			seed = strtoull(optarg, NULL, 0);
		else if (c == 'i')
			iterations = (uint32_t)strtoul(optarg, NULL, 0);
		else
			return 2;
	}
	if (seed)
		rng_state = seed;
	batch = malloc(BATCH * sizeof(*batch));
	struct route *routes = malloc(1200000 * sizeof(*routes));
	if (!batch || !routes)
		return 1;
	uint32_t n = make_routes(routes);

	char err[256];
	struct ip4_fib_config cfg;
	ip4_fib_config_default(&cfg);
	struct ip4_fib *fib = ip4_fib_create(&cfg, err, sizeof(err));
	if (!fib) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct ip4_fib_stats st;

	/* ---- one route ---- */
	if (ip4_fib_add(fib, 0x0a000000, 8, 1))
		return 1;
	struct lookup_figures l1 = measure_lookups(fib, iterations);
	/* add and delete the mix's routes one at a time beside the one route */
	uint64_t ta = 0, td = 0;
	uint32_t n1 = 0;
	for (uint32_t i = 0; i < CHURN; i++) {
		const struct route *x = &routes[rnd64() % n];
		if (x->prefix == 0x0a000000 && x->len == 8)
			continue;
		uint64_t t0 = cpu_ticks();
		int rc = ip4_fib_add(fib, x->prefix, x->len, 2);
		uint64_t t1 = cpu_ticks();
		rc |= ip4_fib_del(fib, x->prefix, x->len);
		uint64_t t2 = cpu_ticks();
		ip4_fib_quiesce(fib);
		if (rc)
			return 1;
		ta += t1 - t0;
		td += t2 - t1;
		n1++;
	}
	double add1 = (double)ta / n1, del1 = (double)td / n1;
	ip4_fib_stats(fib, &st);
	printf("1 route: lookup single %.1f, x4 %.1f, bulk(32) %.1f ticks (miss %.1f%%); "
	       "add %.0f, delete %.0f ticks (mix routes, one at a time)\n",
	       l1.single, l1.x4, l1.bulk, l1.miss_pct, add1, del1);
	ip4_fib_del(fib, 0x0a000000, 8);

	/* ---- the full table, in the dump's order, as lpm_perf_autotest adds ---- */
	uint64_t t0 = cpu_ticks();
	uint32_t n_ok = 0;
	for (uint32_t i = 0; i < n; i++)
		n_ok += ip4_fib_add(fib, routes[i].prefix, routes[i].len, 0xaa) == 0;
	double add_all = (double)(cpu_ticks() - t0) / n;
	ip4_fib_stats(fib, &st);
	printf("%u routes (%u unique): add %.0f ticks each; %u tbl8 groups, %.1f MB, tbl24 on %s\n",
	       n, st.n_routes, add_all, st.n_tbl8_used, (double)st.mem_bytes / (1 << 20),
	       st.tbl24_hugepages ? "2 MB hugepages" : "THP-advised pages");
	if (n_ok != n) {
		fprintf(stderr, "%u adds failed\n", n - n_ok);
		return 1;
	}
	struct lookup_figures lm = measure_lookups(fib, iterations);
	printf("  lookup single %.1f, x4 %.1f, bulk(32) %.1f ticks (miss %.1f%%)\n", lm.single,
	       lm.x4, lm.bulk, lm.miss_pct);
	double churn_del, churn_add;
	uint64_t worst;
	measure_churn(fib, routes, n, CHURN, &churn_del, &churn_add, &worst);
	printf("  churn in the full table: delete %.0f, re-add %.0f ticks (worst add %llu)\n",
	       churn_del, churn_add, (unsigned long long)worst);
	t0 = cpu_ticks();
	for (uint32_t i = 0; i < n; i++)
		ip4_fib_del(fib, routes[i].prefix, routes[i].len);
	double del_all = (double)(cpu_ticks() - t0) / n;
	ip4_fib_stats(fib, &st);
	printf("  delete all in order: %.0f ticks each; %u routes left\n", del_all, st.n_routes);

	printf("fib: one.lookup_single %.2f\nfib: one.lookup_x4 %.2f\nfib: one.lookup_bulk %.2f\n"
	       "fib: one.add %.0f\nfib: one.del %.0f\n",
	       l1.single, l1.x4, l1.bulk, add1, del1);
	printf("fib: big.routes %u\nfib: big.lookup_single %.2f\nfib: big.lookup_x4 %.2f\n"
	       "fib: big.lookup_bulk %.2f\nfib: big.miss_pct %.1f\nfib: big.add_all %.0f\n"
	       "fib: big.del_all %.0f\nfib: big.churn_add %.0f\nfib: big.churn_del %.0f\n",
	       n, lm.single, lm.x4, lm.bulk, lm.miss_pct, add_all, del_all, churn_add, churn_del);
	ip4_fib_destroy(fib);
	free(routes);
	free(batch);
	return 0;
}
