/* The peer side of bench/ip4's FIB comparison: DPDK's rte_lpm and rte_fib
 * (DIR-24-8) given the same routes, in the same order, and the same lookup
 * addresses as sluice-bench-ip4-fib (bench/ip4/routes.h, fibbench.h), timed
 * the same way: ticks of the whole add loop / routes, of each lookup batch
 * (4096 addresses generated untimed; the median over a pass's batches, its
 * mean beside), of the whole delete loop / routes. Written for bench/ip4 from DPDK's public API documentation
 * (rte_lpm.h, rte_fib.h); it is not lpm_perf_autotest, whose delete timing
 * also holds a lookup pass.
 *
 *   peer_fib EAL-ARGS -- [--seed N] [--iterations N] [--route-div N]
 *
 * Built by bench/ip4/run.sh with `cc $(pkg-config --cflags libdpdk) ...
 * $(pkg-config --libs libdpdk)`, never by meson: DPDK is a peer, not a
 * dependency of sluice.
 *
 * Tables, sized to hold the whole set (lpm_perf_autotest's 2048 tbl8 groups
 * do not: part of its set is never added):
 *   rte_lpm: max_rules = routes, 65,536 tbl8 groups (sluice's default);
 *            lookups: rte_lpm_lookup, rte_lpm_lookupx4, rte_lpm_lookup_bulk
 *            of 32; a result counts when RTE_LPM_LOOKUP_SUCCESS is set.
 *   rte_fib: RTE_FIB_DIR24_8 with 4-byte next hops (sluice's entries are 32
 *            bits), 65,536 tbl8 groups, default next hop 0 (sluice's miss);
 *            lookups: rte_fib_lookup_bulk of 32; of 1 for "single" (it has
 *            no single lookup); no x4. Its bulk lookup is the one
 *            RTE_FIB_LOOKUP_DEFAULT picks under EAL's SIMD limit (scalar
 *            on x86 unless 512 bits are allowed), then, when this CPU and
 *            build allow, again with RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512.
 * Each route i has next hop 1 + i % 65535, as in sluice's bench; the sum of
 * the results of a lookup pass is printed so run.sh can check that all
 * three tables answered the same.
 *
 * Output: "bench: lpm.KEY VALUE", "bench: fib.KEY VALUE" and "mem: ..."
 * lines (the pages each table actually got, from /proc/self/smaps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_eal.h>
#include <rte_fib.h>
#include <rte_lpm.h>
#include <rte_vect.h>

#include "bench/ip4/fibbench.h"

#define N_TBL8 65536

static uint32_t *batch;
static uint32_t iterations, all; /* this pass's batches; the option's */

static uint32_t result_of(uint32_t i)
{
	return 1 + i % 65535;
}

static uint32_t lpm_hop(uint32_t e)
{
	return e & RTE_LPM_LOOKUP_SUCCESS ? e & 0x00ffffff : 0;
}

/* ---- rte_lpm ---- */

static struct pass_fig lpm_single(const struct rte_lpm *lpm, uint64_t *sum, uint64_t *miss)
{
	uint64_t s = 0, m = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j++) {
			uint32_t nh;
			int hit = rte_lpm_lookup(lpm, batch[j], &nh) == 0;
			s += hit ? nh : 0;
			m += !hit;
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	*miss = m;
	return pass_figure(iterations);
}

static struct pass_fig lpm_x4(const struct rte_lpm *lpm, uint64_t *sum)
{
	uint64_t s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j += 4) {
			uint32_t hop[4];
			xmm_t ip = _mm_loadu_si128((const __m128i *)&batch[j]);
			rte_lpm_lookupx4(lpm, ip, hop, 0);
			s += hop[0] + hop[1] + hop[2] + hop[3];
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	return pass_figure(iterations);
}

static struct pass_fig lpm_bulk(const struct rte_lpm *lpm, uint64_t *sum)
{
	uint64_t s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j += BULK) {
			uint32_t nh[BULK];
			rte_lpm_lookup_bulk(lpm, &batch[j], nh, BULK);
			for (int k = 0; k < BULK; k++)
				s += lpm_hop(nh[k]);
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	return pass_figure(iterations);
}

static int run_lpm(const struct route *r, uint32_t n)
{
	struct rte_lpm_config cfg = { .max_rules = n, .number_tbl8s = N_TBL8, .flags = 0 };
	struct rte_lpm *lpm = rte_lpm_create("bench_lpm", 0, &cfg);
	if (!lpm) {
		fprintf(stderr, "rte_lpm_create failed\n");
		return -1;
	}
	char got[160];
	page_report(lpm->tbl24, got, sizeof(got));
	printf("mem: rte_lpm tbl24 %s\n", got);
	page_report(lpm->tbl8, got, sizeof(got));
	printf("mem: rte_lpm tbl8 %s\n", got);

	uint32_t ok = 0;
	uint64_t t0 = fib_ticks();
	for (uint32_t i = 0; i < n; i++)
		ok += rte_lpm_add(lpm, r[i].prefix, r[i].len, result_of(i)) == 0;
	double add = (double)(fib_ticks() - t0) / n;
	if (ok != n) {
		fprintf(stderr, "rte_lpm: %u of %u adds failed\n", n - ok, n);
		return -1;
	}
	uint64_t sum, s4, sb, miss;
	iterations = MIN(all, WARMUP); /* untimed: caches and TLB warm */
	lpm_single(lpm, &sum, &miss);
	iterations = all;
	struct pass_fig single = lpm_single(lpm, &sum, &miss);
	struct pass_fig x4 = lpm_x4(lpm, &s4);
	struct pass_fig bulk = lpm_bulk(lpm, &sb);
	t0 = fib_ticks();
	for (uint32_t i = 0; i < n; i++)
		rte_lpm_delete(lpm, r[i].prefix, r[i].len);
	double del = (double)(fib_ticks() - t0) / n;
	if (s4 != sum || sb != sum) {
		fprintf(stderr, "rte_lpm sums differ: %llu %llu %llu\n", (unsigned long long)sum,
			(unsigned long long)s4, (unsigned long long)sb);
		return -1;
	}
	printf("rte_lpm: add %.0f, lookup single %.1f, x4 %.1f, bulk(32) %.1f (batch medians; pass "
	       "means %.1f, %.1f, %.1f), delete %.0f ticks (miss %.1f%%, sum %llu)\n", add,
	       single.median, x4.median, bulk.median, single.mean, x4.mean, bulk.mean, del,
	       100.0 * (double)miss / ((double)iterations * BATCH), (unsigned long long)sum);
	printf("bench: lpm.routes %u\nbench: lpm.add_all %.1f\nbench: lpm.del_all %.1f\n"
	       "bench: lpm.miss_pct %.2f\nbench: lpm.sum %llu\n",
	       n, add, del, 100.0 * (double)miss / ((double)iterations * BATCH), (unsigned long long)sum);
	print_pass("lpm", "lookup_single", single);
	print_pass("lpm", "lookup_x4", x4);
	print_pass("lpm", "lookup_bulk", bulk);
	rte_lpm_free(lpm);
	return 0;
}

/* ---- rte_fib (DIR-24-8) ---- */

/* Batches of k addresses through rte_fib_lookup_bulk. */
static struct pass_fig fib_pass(struct rte_fib *fib, uint32_t k, uint64_t *sum, uint64_t *miss)
{
	uint64_t s = 0, m = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j += k) {
			uint64_t nh[BULK];
			rte_fib_lookup_bulk(fib, &batch[j], nh, (int)k);
			for (uint32_t q = 0; q < k; q++) {
				s += nh[q];
				m += nh[q] == 0;
			}
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	*miss = m;
	return pass_figure(iterations);
}

static int run_fib(const struct route *r, uint32_t n)
{
	struct rte_fib_conf cfg;
	memset(&cfg, 0, sizeof(cfg));
	cfg.type = RTE_FIB_DIR24_8;
	cfg.default_nh = 0;
	cfg.max_routes = (int)n;
	cfg.dir24_8.nh_sz = RTE_FIB_DIR24_8_4B;
	cfg.dir24_8.num_tbl8 = N_TBL8;
	struct rte_fib *fib = rte_fib_create("bench_fib", 0, &cfg);
	if (!fib) {
		fprintf(stderr, "rte_fib_create failed\n");
		return -1;
	}
	char got[160];
	page_report(rte_fib_get_dp(fib), got, sizeof(got));
	printf("mem: rte_fib dir24_8 %s\n", got);

	uint32_t ok = 0;
	uint64_t t0 = fib_ticks();
	for (uint32_t i = 0; i < n; i++)
		ok += rte_fib_add(fib, r[i].prefix, r[i].len, result_of(i)) == 0;
	double add = (double)(fib_ticks() - t0) / n;
	if (ok != n) {
		fprintf(stderr, "rte_fib: %u of %u adds failed\n", n - ok, n);
		return -1;
	}
	uint64_t sum, s1, sv, miss, m;
	iterations = MIN(all, WARMUP); /* untimed: caches and TLB warm */
	fib_pass(fib, 1, &s1, &m);
	iterations = all;
	struct pass_fig single = fib_pass(fib, 1, &s1, &m);
	struct pass_fig bulk = fib_pass(fib, BULK, &sum, &miss);
	struct pass_fig vec = { 0, 0 };
	/* Its AVX-512 lookup, for the row against sluice -march=native. */
	if (rte_vect_set_max_simd_bitwidth(RTE_VECT_SIMD_512) == 0 &&
	    rte_fib_select_lookup(fib, RTE_FIB_LOOKUP_DIR24_8_VECTOR_AVX512) == 0) {
		vec = fib_pass(fib, BULK, &sv, &m);
		if (sv != sum) {
			fprintf(stderr, "rte_fib AVX-512 sum differs: %llu %llu\n",
				(unsigned long long)sv, (unsigned long long)sum);
			return -1;
		}
	}
	t0 = fib_ticks();
	for (uint32_t i = 0; i < n; i++)
		rte_fib_delete(fib, r[i].prefix, r[i].len);
	double del = (double)(fib_ticks() - t0) / n;
	if (s1 != sum) {
		fprintf(stderr, "rte_fib sums differ: %llu %llu\n", (unsigned long long)sum,
			(unsigned long long)s1);
		return -1;
	}
	printf("rte_fib: add %.0f, lookup single (bulk of 1) %.1f, bulk(32) %.1f, AVX-512 bulk(32) "
	       "%.1f (batch medians), delete %.0f ticks (miss %.1f%%, sum %llu)\n", add, single.median,
	       bulk.median, vec.median, del, 100.0 * (double)miss / ((double)iterations * BATCH),
	       (unsigned long long)sum);
	printf("bench: fib.routes %u\nbench: fib.add_all %.1f\nbench: fib.del_all %.1f\n"
	       "bench: fib.miss_pct %.2f\nbench: fib.sum %llu\n",
	       n, add, del, 100.0 * (double)miss / ((double)iterations * BATCH), (unsigned long long)sum);
	print_pass("fib", "lookup_single", single);
	print_pass("fib", "lookup_bulk", bulk);
	if (vec.median > 0)
		print_pass("fib", "lookup_bulk_avx512", vec);
	rte_fib_free(fib);
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
	struct fib_opts o;
	struct route *routes = NULL;
	uint32_t n = fib_setup(argc, argv, &o, &routes, &batch);
	if (!n)
		return 2;
	all = iterations = o.iterations;
	int rc = run_lpm(routes, n) || run_fib(routes, n);
	free(routes);
	free(batch);
	free(batch_ticks);
	rte_eal_cleanup();
	return rc ? 1 : 0;
}
