/* sluice's IPv4 FIB alone: TSC ticks per add and per delete (the whole
 * table, in order) and per lookup (single, x4, bulk of 32), with the route
 * set and lookup addresses that bench/ip4/peer_fib.c gives rte_lpm and
 * rte_fib, timed the same way (bench/ip4/fibbench.h):
 *
 *   add:    ticks of the loop adding all routes in order / routes offered
 *   lookup: per pass, batches of 4096 addresses generated untimed, looked
 *           up timed, each batch on its own (--iterations batches); the
 *           median over the batches of ticks / lookups, the mean beside
 *   delete: ticks of the loop deleting all routes in order / routes
 *
 *   sluice-bench-ip4-fib [--seed N] [--iterations N] [--route-div N]
 *                        [--no-huge] [--churn N] [--dump PATH]
 *
 * --dump PATH writes the route set and the lookup addresses for
 * dpdk-test-fib (PATH.routes, PATH.ips) and exits.
 *
 * Memory: by default the FIB's tables on 2 MB hugepages (IP4_FIB_MEM_HUGETLB:
 * no FIB, exit 1, when there are none), with --no-huge on 4 KB pages without
 * THP (IP4_FIB_MEM_4K), like DPDK's tables under --in-memory / --no-huge.
 * The pages each table actually got are printed (/proc/self/smaps).
 *
 * The route mix (bench/ip4/routes.h): lpm_perf_autotest's ~1.07M routes,
 * each depth's count divided by --route-div (QUICK runs use a smaller set).
 * Each route i gets result 1 + i % 65535, so the sum of the lookup results
 * tells whether two tables answered the same.
 *
 * After the matched part, sluice-only figures: churn in the full table
 * (delete and re-add one route at a time, --churn routes) and the 1-route
 * table. Output: human lines, then "bench: sluice.KEY VALUE" and
 * "mem: ..." lines for run.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "nodes/ip4/ip4_fib.h"

#include "bench/ip4/fibbench.h"

struct lookup_figures {
	struct pass_fig single, x4, bulk;
	double miss_pct;
	uint64_t sum;
};

static uint32_t *batch;

static struct pass_fig pass_single(const struct ip4_fib *fib, uint32_t iterations, uint64_t *sum,
			  uint64_t *miss)
{
	uint64_t s = 0, m = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j++) {
			uint32_t r = ip4_fib_lookup(fib, batch[j]);
			s += r;
			m += r == IP4_FIB_MISS;
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	*miss = m;
	return pass_figure(iterations);
}

static struct pass_fig pass_x4(const struct ip4_fib *fib, uint32_t iterations, uint64_t *sum)
{
	uint64_t s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j += 4) {
			uint32_t out[4];
			ip4_fib_lookup_x4(fib, &batch[j], out);
			s += out[0] + out[1] + out[2] + out[3];
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	return pass_figure(iterations);
}

static struct pass_fig pass_bulk(const struct ip4_fib *fib, uint32_t iterations, uint64_t *sum)
{
	uint64_t s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch(batch);
		uint64_t t0 = fib_ticks();
		for (uint32_t j = 0; j < BATCH; j += BULK) {
			uint32_t out[BULK];
			ip4_fib_lookup_bulk(fib, &batch[j], out, BULK);
			for (int k = 0; k < BULK; k++)
				s += out[k];
		}
		pass_batch(i, fib_ticks() - t0);
	}
	*sum = s;
	return pass_figure(iterations);
}

/* The three passes; exits when they disagree (a lookup variant is wrong). */
static struct lookup_figures measure_lookups(const struct ip4_fib *fib, uint32_t iterations)
{
	struct lookup_figures f;
	uint64_t miss, s4, sb;
	pass_single(fib, MIN(iterations, WARMUP), &s4, &miss); /* untimed: caches and TLB warm */
	f.single = pass_single(fib, iterations, &f.sum, &miss);
	f.x4 = pass_x4(fib, iterations, &s4);
	f.bulk = pass_bulk(fib, iterations, &sb);
	f.miss_pct = 100.0 * (double)miss / ((double)iterations * BATCH);
	if (s4 != f.sum || sb != f.sum) {
		fprintf(stderr, "lookup sums differ: single %llu, x4 %llu, bulk %llu\n",
			(unsigned long long)f.sum, (unsigned long long)s4, (unsigned long long)sb);
		exit(1);
	}
	return f;
}

static uint32_t result_of(uint32_t i)
{
	return 1 + i % 65535;
}

/* Delete then re-add routes of the table one at a time, timing each call:
 * the churn of a full table. Mean ticks of each in *del, *add. */
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
		uint64_t t0 = fib_ticks();
		int rc = ip4_fib_del(fib, x->prefix, x->len);
		uint64_t t1 = fib_ticks();
		rc |= ip4_fib_add(fib, x->prefix, x->len, result);
		uint64_t t2 = fib_ticks();
		if (rc) {
			fprintf(stderr, "churn: update failed (%d)\n", rc);
			exit(1);
		}
		td += t1 - t0;
		ta += t2 - t1;
		w = MAX(w, t2 - t1);
		done++;
	}
	*del = done ? (double)td / done : 0;
	*add = done ? (double)ta / done : 0;
	*worst_add = w;
}

/* The 1-route table: lookups, then mix routes added and deleted one at a
 * time beside it. */
static void one_route(struct ip4_fib *fib, const struct route *routes, uint32_t n,
		      uint32_t iterations, uint32_t churn)
{
	if (ip4_fib_add(fib, 0x0a000000, 8, 1))
		exit(1);
	struct lookup_figures l1 = measure_lookups(fib, iterations);
	uint64_t ta = 0, td = 0;
	uint32_t n1 = 0;
	for (uint32_t i = 0; i < churn; i++) {
		const struct route *x = &routes[rnd64() % n];
		if (x->prefix == 0x0a000000 && x->len == 8)
			continue;
		uint64_t t0 = fib_ticks();
		int rc = ip4_fib_add(fib, x->prefix, x->len, 2);
		uint64_t t1 = fib_ticks();
		rc |= ip4_fib_del(fib, x->prefix, x->len);
		uint64_t t2 = fib_ticks();
		ip4_fib_quiesce(fib);
		if (rc)
			exit(1);
		ta += t1 - t0;
		td += t2 - t1;
		n1++;
	}
	double add1 = n1 ? (double)ta / n1 : 0, del1 = n1 ? (double)td / n1 : 0;
	printf("1 route: lookup single %.1f, x4 %.1f, bulk(32) %.1f ticks (batch medians; miss %.1f%%); "
	       "add %.0f, delete %.0f ticks (mix routes, one at a time)\n",
	       l1.single.median, l1.x4.median, l1.bulk.median, l1.miss_pct, add1, del1);
	print_pass("sluice", "one.lookup_single", l1.single);
	print_pass("sluice", "one.lookup_x4", l1.x4);
	print_pass("sluice", "one.lookup_bulk", l1.bulk);
	printf("bench: sluice.one.add %.0f\nbench: sluice.one.del %.0f\n", add1, del1);
	ip4_fib_del(fib, 0x0a000000, 8);
	ip4_fib_quiesce(fib);
}

/* The route set and the lookup addresses as dpdk-test-fib reads them (-f:
 * "a.b.c.d/len nexthop" lines, -t: one address a line), for its figures
 * beside ours: DIR.routes and DIR.ips. */
static int dump_set(const char *dir, const struct route *r, uint32_t n, uint32_t iterations)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s.routes", dir);
	FILE *f = fopen(path, "w");
	for (uint32_t i = 0; f && i < n; i++)
		fprintf(f, "%u.%u.%u.%u/%u %u\n", r[i].prefix >> 24, (r[i].prefix >> 16) & 0xff,
			(r[i].prefix >> 8) & 0xff, r[i].prefix & 0xff, r[i].len, result_of(i));
	if (!f || fclose(f))
		return 1;
	snprintf(path, sizeof(path), "%s.ips", dir);
	f = fopen(path, "w");
	addr_restart();
	for (uint32_t i = 0; f && i < iterations; i++) {
		fill_batch(batch);
		for (uint32_t j = 0; j < BATCH; j++)
			fprintf(f, "%u.%u.%u.%u\n", batch[j] >> 24, (batch[j] >> 16) & 0xff,
				(batch[j] >> 8) & 0xff, batch[j] & 0xff);
	}
	return !f || fclose(f);
}

static void report_memory(const struct ip4_fib *fib)
{
	char got24[160], got8[160];
	page_report(ip4_fib_tables(fib)->tbl24, got24, sizeof(got24));
	page_report(ip4_fib_tables(fib)->tbl8, got8, sizeof(got8));
#ifdef IP4_FIB_HAS_MEM_MODE
	struct ip4_fib_stats st;
	ip4_fib_stats(fib, &st);
	printf("mem: sluice tbl24 %s (mapped %s)\nmem: sluice tbl8 %s (mapped %s)\n", got24,
	       ip4_fib_pages_name(st.tbl24_pages), got8, ip4_fib_pages_name(st.tbl8_pages));
#else /* an engine before the memory modes (BEFORE=REV): its own choice */
	printf("mem: sluice tbl24 %s (no memory mode)\nmem: sluice tbl8 %s (no memory mode)\n",
	       got24, got8);
#endif
}

int main(int argc, char **argv)
{
	struct fib_opts o;
	struct route *routes = NULL;
	uint32_t n = fib_setup(argc, argv, &o, &routes, &batch);
	if (!n)
		return 2;
	uint32_t iterations = o.iterations;
	if (o.dump)
		return dump_set(o.dump, routes, n, iterations);

	char err[256];
	struct ip4_fib_config cfg;
	ip4_fib_config_default(&cfg);
#ifdef IP4_FIB_HAS_MEM_MODE
	cfg.mem = o.no_huge ? IP4_FIB_MEM_4K : IP4_FIB_MEM_HUGETLB;
#endif
	struct ip4_fib *fib = ip4_fib_create(&cfg, err, sizeof(err));
	if (!fib) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	report_memory(fib);

	/* ---- matched with peer_fib.c: add all in order, lookups, delete all ---- */
	uint64_t t0 = fib_ticks();
	uint32_t n_ok = 0;
	for (uint32_t i = 0; i < n; i++)
		n_ok += ip4_fib_add(fib, routes[i].prefix, routes[i].len, result_of(i)) == 0;
	double add_all = (double)(fib_ticks() - t0) / n;
	struct ip4_fib_stats st;
	ip4_fib_stats(fib, &st);
	uint32_t unique = st.n_routes;
	printf("%u routes (%u unique): add %.0f ticks each; %u of %u tbl8 groups, %.1f MB\n", n,
	       unique, add_all, st.n_tbl8_used, st.n_tbl8, (double)st.mem_bytes / (1 << 20));
	if (n_ok != n) {
		fprintf(stderr, "%u adds failed\n", n - n_ok);
		return 1;
	}
	struct lookup_figures lm = measure_lookups(fib, iterations);
	printf("  lookup single %.1f, x4 %.1f, bulk(32) %.1f ticks (batch medians; pass means %.1f, "
	       "%.1f, %.1f; miss %.1f%%, sum %llu)\n",
	       lm.single.median, lm.x4.median, lm.bulk.median, lm.single.mean, lm.x4.mean, lm.bulk.mean,
	       lm.miss_pct, (unsigned long long)lm.sum);
	t0 = fib_ticks();
	for (uint32_t i = 0; i < n; i++)
		ip4_fib_del(fib, routes[i].prefix, routes[i].len);
	double del_all = (double)(fib_ticks() - t0) / n;
	ip4_fib_stats(fib, &st);
	printf("  delete all in order: %.0f ticks each; %u routes left\n", del_all, st.n_routes);
	if (st.n_routes)
		return 1;
	printf("bench: sluice.routes %u\nbench: sluice.unique %u\nbench: sluice.add_all %.1f\n"
	       "bench: sluice.del_all %.1f\nbench: sluice.miss_pct %.2f\nbench: sluice.sum %llu\n",
	       n, unique, add_all, del_all, lm.miss_pct, (unsigned long long)lm.sum);
	print_pass("sluice", "lookup_single", lm.single);
	print_pass("sluice", "lookup_x4", lm.x4);
	print_pass("sluice", "lookup_bulk", lm.bulk);

	/* ---- sluice only: churn in the full table, the 1-route table ---- */
	ip4_fib_quiesce(fib);
	for (uint32_t i = 0; i < n; i++)
		ip4_fib_add(fib, routes[i].prefix, routes[i].len, result_of(i));
	double churn_del, churn_add;
	uint64_t worst;
	measure_churn(fib, routes, n, o.churn, &churn_del, &churn_add, &worst);
	printf("  churn in the full table: delete %.0f, re-add %.0f ticks (worst add %llu)\n",
	       churn_del, churn_add, (unsigned long long)worst);
	printf("bench: sluice.churn_add %.0f\nbench: sluice.churn_del %.0f\n", churn_add, churn_del);
	ip4_fib_flush(fib);
	ip4_fib_quiesce(fib);
	one_route(fib, routes, n, iterations, o.churn);
	ip4_fib_destroy(fib);
	free(routes);
	free(batch);
	free(batch_ticks);
	return 0;
}
