/* The peer side of bench/ip6's FIB comparison: DPDK's rte_lpm6 and rte_fib6
 * (its "trie", 24 + 8 x 13 strides) given the same routes in the same order
 * and the same lookup addresses as sluice-bench-ip6-fib (bench/ip6/
 * fib6bench.h), timed the same way: ticks of the whole add loop / routes, of
 * each lookup pass / lookups (batches of 4096 generated untimed), of the
 * whole delete loop / routes. Written for bench/ip6 from DPDK's public API
 * (rte_lpm6.h, rte_fib6.h); not lpm6_perf_autotest, whose table is 1,000
 * routes and whose delete timing includes lookups.
 *
 *   peer_fib6 EAL-ARGS -- [--seed N] [--routes N] [--groups N] [--iterations N]
 *
 * Built by bench/ip6/run.sh against libdpdk, never by meson.
 *
 * Tables, sized as sluice's (--groups 256-entry groups each):
 *   rte_lpm6: max_rules = routes, number_tbl8s = groups; lookups:
 *             rte_lpm6_lookup (single), rte_lpm6_lookup_bulk_func of 32; a
 *             miss (-1) counts 0.
 *   rte_fib6: RTE_FIB6_TRIE, 4-byte next hops (sluice's entries are 32
 *             bits), num_tbl8 = groups, default next hop 0 (sluice's miss);
 *             rte_fib6_lookup_bulk of 32, and of 1 for "single" (it has no
 *             single lookup); RTE_FIB6_LOOKUP_DEFAULT (scalar on x86 unless
 *             EAL allows 512-bit SIMD), then, when this CPU and build allow,
 *             RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512.
 * Output: "bench: lpm6.KEY VALUE", "bench: fib6.KEY VALUE", "mem: ..." lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_fib6.h>
#include <rte_lpm6.h>
#include <rte_vect.h>

#include "bench/ip6/fib6bench.h"

static uint8_t (*batch)[16];
static const struct route6 *routes;
static uint32_t n_routes, iterations, all;

/* ---- rte_lpm6 ---- */

static double lpm6_single(const struct rte_lpm6 *lpm, uint64_t *sum, uint64_t *miss)
{
	uint64_t ticks = 0, s = 0, m = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		uint64_t t0 = fib6_ticks();
		for (uint32_t j = 0; j < BATCH; j++) {
			uint32_t nh;
			int hit = rte_lpm6_lookup(lpm, batch[j], &nh) == 0;
			s += hit ? nh : 0;
			m += !hit;
		}
		ticks += fib6_ticks() - t0;
	}
	*sum = s;
	*miss = m;
	return (double)ticks / ((double)iterations * BATCH);
}

static double lpm6_bulk(const struct rte_lpm6 *lpm, uint64_t *sum)
{
	uint64_t ticks = 0, s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		uint64_t t0 = fib6_ticks();
		for (uint32_t j = 0; j < BATCH; j += BULK) {
			int32_t nh[BULK];
			rte_lpm6_lookup_bulk_func(lpm, &batch[j], nh, BULK);
			for (int k = 0; k < BULK; k++)
				s += nh[k] < 0 ? 0 : (uint64_t)nh[k];
		}
		ticks += fib6_ticks() - t0;
	}
	*sum = s;
	return (double)ticks / ((double)iterations * BATCH);
}

static int run_lpm6(uint32_t groups)
{
	struct rte_lpm6_config cfg = { .max_rules = n_routes, .number_tbl8s = groups, .flags = 0 };
	struct rte_lpm6 *lpm = rte_lpm6_create("bench_lpm6", 0, &cfg);
	if (!lpm) {
		fprintf(stderr, "rte_lpm6_create failed\n");
		return -1;
	}
	char got[160];
	page_report6(lpm, got, sizeof(got));
	printf("mem: rte_lpm6 tables %s\n", got);
	uint32_t ok = 0, n = n_routes;
	uint64_t t0 = fib6_ticks();
	for (uint32_t i = 0; i < n; i++)
		ok += rte_lpm6_add(lpm, routes[i].a, routes[i].len, result6_of(i)) == 0;
	double add = (double)(fib6_ticks() - t0) / n;
	if (ok != n) {
		fprintf(stderr, "rte_lpm6: %u of %u adds failed\n", n - ok, n);
		return -1;
	}
	uint64_t sum, sb, miss;
	iterations = all < WARMUP ? all : WARMUP; /* untimed: caches and TLB warm */
	lpm6_single(lpm, &sum, &miss);
	iterations = all;
	double single = lpm6_single(lpm, &sum, &miss);
	double bulk = lpm6_bulk(lpm, &sb);
	t0 = fib6_ticks();
	for (uint32_t i = 0; i < n; i++)
		rte_lpm6_delete(lpm, routes[i].a, routes[i].len);
	double del = (double)(fib6_ticks() - t0) / n;
	if (sb != sum) {
		fprintf(stderr, "rte_lpm6 sums differ: %llu %llu\n", (unsigned long long)sum,
			(unsigned long long)sb);
		return -1;
	}
	double miss_pct = 100.0 * (double)miss / ((double)iterations * BATCH);
	printf("rte_lpm6: add %.0f, lookup single %.1f, bulk(32) %.1f, delete %.0f ticks "
	       "(miss %.1f%%, sum %llu)\n", add, single, bulk, del, miss_pct, (unsigned long long)sum);
	printf("bench: lpm6.routes %u\nbench: lpm6.add_all %.1f\nbench: lpm6.lookup_single %.3f\n"
	       "bench: lpm6.lookup_bulk %.3f\nbench: lpm6.del_all %.1f\nbench: lpm6.miss_pct %.2f\n"
	       "bench: lpm6.sum %llu\n",
	       n, add, single, bulk, del, miss_pct, (unsigned long long)sum);
	rte_lpm6_free(lpm);
	return 0;
}

/* ---- rte_fib6 (trie) ---- */

static double fib6_pass(struct rte_fib6 *fib, uint32_t k, uint64_t *sum, uint64_t *miss)
{
	uint64_t ticks = 0, s = 0, m = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		uint64_t t0 = fib6_ticks();
		for (uint32_t j = 0; j < BATCH; j += k) {
			uint64_t nh[BULK];
			rte_fib6_lookup_bulk(fib, &batch[j], nh, (int)k);
			for (uint32_t q = 0; q < k; q++) {
				s += nh[q];
				m += nh[q] == 0;
			}
		}
		ticks += fib6_ticks() - t0;
	}
	*sum = s;
	*miss = m;
	return (double)ticks / ((double)iterations * BATCH);
}

static int run_fib6(uint32_t groups)
{
	struct rte_fib6_conf cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.type = RTE_FIB6_TRIE;
	cfg.default_nh = 0;
	cfg.max_routes = (int)n_routes;
	cfg.trie.nh_sz = RTE_FIB6_TRIE_4B;
	cfg.trie.num_tbl8 = groups;
	struct rte_fib6 *fib = rte_fib6_create("bench_fib6", 0, &cfg);
	if (!fib) {
		fprintf(stderr, "rte_fib6_create failed\n");
		return -1;
	}
	char got[160];
	page_report6(rte_fib6_get_dp(fib), got, sizeof(got));
	printf("mem: rte_fib6 trie %s\n", got);
	uint32_t ok = 0, n = n_routes;
	uint64_t t0 = fib6_ticks();
	for (uint32_t i = 0; i < n; i++)
		ok += rte_fib6_add(fib, routes[i].a, routes[i].len, result6_of(i)) == 0;
	double add = (double)(fib6_ticks() - t0) / n;
	if (ok != n) {
		fprintf(stderr, "rte_fib6: %u of %u adds failed\n", n - ok, n);
		return -1;
	}
	uint64_t sum, s1, sv, miss, m;
	iterations = all < WARMUP ? all : WARMUP;
	fib6_pass(fib, 1, &s1, &m);
	iterations = all;
	double single = fib6_pass(fib, 1, &s1, &m);
	double bulk = fib6_pass(fib, BULK, &sum, &miss);
	double vec = 0;
	if (rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) == 0 &&
	    rte_fib6_select_lookup(fib, RTE_FIB6_LOOKUP_TRIE_VECTOR_AVX512) == 0) {
		vec = fib6_pass(fib, BULK, &sv, &m);
		if (sv != sum) {
			fprintf(stderr, "rte_fib6 AVX-512 sum differs: %llu %llu\n",
				(unsigned long long)sv, (unsigned long long)sum);
			return -1;
		}
	}
	t0 = fib6_ticks();
	for (uint32_t i = 0; i < n; i++)
		rte_fib6_delete(fib, routes[i].a, routes[i].len);
	double del = (double)(fib6_ticks() - t0) / n;
	if (s1 != sum) {
		fprintf(stderr, "rte_fib6 sums differ: %llu %llu\n", (unsigned long long)sum,
			(unsigned long long)s1);
		return -1;
	}
	double miss_pct = 100.0 * (double)miss / ((double)iterations * BATCH);
	printf("rte_fib6: add %.0f, lookup single (bulk of 1) %.1f, bulk(32) %.1f, AVX-512 bulk(32) "
	       "%.1f, delete %.0f ticks (miss %.1f%%, sum %llu)\n", add, single, bulk, vec, del,
	       miss_pct, (unsigned long long)sum);
	printf("bench: fib6.routes %u\nbench: fib6.add_all %.1f\nbench: fib6.lookup_single %.3f\n"
	       "bench: fib6.lookup_bulk %.3f\nbench: fib6.del_all %.1f\nbench: fib6.miss_pct %.2f\n"
	       "bench: fib6.sum %llu\n",
	       n, add, single, bulk, del, miss_pct, (unsigned long long)sum);
	if (vec > 0)
		printf("bench: fib6.lookup_bulk_avx512 %.3f\n", vec);
	rte_fib6_free(fib);
	return 0;
}

int main(int argc, char **argv)
{
	int e = rte_eal_init(argc, argv);
	if (e < 0) {
		fprintf(stderr, "rte_eal_init failed\n");
		return 1;
	}
	argc -= e;
	argv += e;
	struct fib6_opts o;
	struct route6 *r = NULL;
	n_routes = fib6_setup(argc, argv, &o, &r, &batch);
	if (!n_routes)
		return 2;
	routes = r;
	all = iterations = o.iterations;
	int rc = run_lpm6(o.groups) || run_fib6(o.groups);
	free(r);
	free(batch);
	rte_eal_cleanup();
	return rc ? 1 : 0;
}
