/* sluice's IPv6 FIB alone: TSC ticks per add and per delete (the whole
 * table, in order) and per lookup (single, x4, bulk of 32), with the route
 * set and addresses bench/ip6/peer_fib6.c gives rte_lpm6 and rte_fib6,
 * timed the same way (bench/ip6/fib6bench.h).
 *
 *   sluice-bench-ip6-fib [--seed N] [--routes N] [--groups N] [--iterations N]
 *                        [--churn N] [--no-huge]
 *
 * Memory: the tables on 2 MB hugepages (IP6_FIB_MEM_HUGETLB: exit 1 when
 * there are too few), with --no-huge on 4 KB pages without THP
 * (IP6_FIB_MEM_4K); the pages each got are printed (/proc/self/smaps).
 * Route i has result 1 + i % 65535, so the sum of a pass's results tells
 * whether two tables answered the same.
 *
 * After the matched part, sluice-only figures: churn in the full table
 * (delete and re-add one route at a time, each call timed) and the table's
 * memory per route. Output: human lines, then "bench: sluice.KEY VALUE" and
 * "mem: ..." lines for run.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_fib.h"

#include "bench/ip6/fib6bench.h"

static uint8_t (*batch)[16];
static const struct route6 *routes;
static uint32_t n_routes;

static const struct in6_addr *addr_at(uint32_t j)
{
	return (const struct in6_addr *)(const void *)batch[j];
}

static double pass_single(const struct ip6_fib *fib, uint32_t iterations, uint64_t *sum,
			  uint64_t *miss)
{
	uint64_t ticks = 0, s = 0, m = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		uint64_t t0 = fib6_ticks();
		for (uint32_t j = 0; j < BATCH; j++) {
			uint32_t r = ip6_fib_lookup(fib, addr_at(j));
			s += r;
			m += r == IP6_FIB_MISS;
		}
		ticks += fib6_ticks() - t0;
	}
	*sum = s;
	*miss = m;
	return (double)ticks / ((double)iterations * BATCH);
}

static double pass_x4(const struct ip6_fib *fib, uint32_t iterations, uint64_t *sum)
{
	uint64_t ticks = 0, s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		uint64_t t0 = fib6_ticks();
		for (uint32_t j = 0; j < BATCH; j += 4) {
			uint32_t out[4];
			ip6_fib_lookup_x4(fib, addr_at(j), addr_at(j + 1), addr_at(j + 2), addr_at(j + 3),
					  out);
			s += out[0] + out[1] + out[2] + out[3];
		}
		ticks += fib6_ticks() - t0;
	}
	*sum = s;
	return (double)ticks / ((double)iterations * BATCH);
}

static double pass_bulk(const struct ip6_fib *fib, uint32_t iterations, uint64_t *sum)
{
	uint64_t ticks = 0, s = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		uint64_t t0 = fib6_ticks();
		for (uint32_t j = 0; j < BATCH; j += BULK) {
			uint32_t out[BULK];
			ip6_fib_lookup_bulk(fib, addr_at(j), out, BULK);
			for (int k = 0; k < BULK; k++)
				s += out[k];
		}
		ticks += fib6_ticks() - t0;
	}
	*sum = s;
	return (double)ticks / ((double)iterations * BATCH);
}

static const struct in6_addr *prefix_of(const struct route6 *r)
{
	return (const struct in6_addr *)(const void *)r->a;
}

/* Delete then re-add random routes of the full table, each call timed. */
static void churn(struct ip6_fib *fib, uint32_t n, double *del, double *add, uint64_t *worst)
{
	uint64_t td = 0, ta = 0, w = 0, s = 0x5eed;
	uint32_t done = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct route6 *x = &routes[xs(&s) % n_routes];
		uint32_t result;
		if (ip6_fib_get(fib, prefix_of(x), x->len, &result))
			continue;
		ip6_fib_quiesce(fib); /* as under the barrier */
		uint64_t t0 = fib6_ticks();
		int rc = ip6_fib_del(fib, prefix_of(x), x->len);
		uint64_t t1 = fib6_ticks();
		rc |= ip6_fib_add(fib, prefix_of(x), x->len, result);
		uint64_t t2 = fib6_ticks();
		if (rc) {
			fprintf(stderr, "churn: update failed (%d)\n", rc);
			exit(1);
		}
		td += t1 - t0;
		ta += t2 - t1;
		w = t2 - t1 > w ? t2 - t1 : w;
		done++;
	}
	*del = done ? (double)td / done : 0;
	*add = done ? (double)ta / done : 0;
	*worst = w;
}

/* How deep this set's lookups go: the table loads of each lookup of one
 * pass's addresses (tbl24's and one per 8-bit stride below it), counted by
 * walking the tables as ip6_fib_lookup does. Untimed. */
static void report_loads(const struct ip6_fib *fib, uint32_t iterations)
{
	const struct ip6_fib_tables *t = ip6_fib_tables(fib);
	uint64_t hist[15] = { 0 }, total = 0, n = 0;
	addr_restart();
	for (uint32_t i = 0; i < iterations; i++) {
		fill_batch6(batch, routes, n_routes);
		for (uint32_t j = 0; j < BATCH; j++) {
			const struct in6_addr *a = addr_at(j);
			uint32_t e = t->tbl24[ip6_fib_index24(a)];
			unsigned loads = 1;
			for (unsigned b = 3; e & IP6_FIB_E_EXT; b++, loads++)
				e = ip6_fib_step(t->groups_ext, e, a->s6_addr[b]);
			hist[loads]++;
			total += loads;
			n++;
		}
	}
	printf("  table loads per lookup: mean %.3f;", (double)total / (double)n);
	for (unsigned l = 1; l < 15; l++)
		if (hist[l])
			printf(" %u: %.1f%%", l, 100.0 * (double)hist[l] / (double)n);
	printf("\nbench: sluice.loads_mean %.3f\n", (double)total / (double)n);
}

static void report_memory(const struct ip6_fib *fib)
{
	char got24[160], gotg[160];
	page_report6(ip6_fib_tables(fib)->tbl24, got24, sizeof(got24));
	page_report6(ip6_fib_tables(fib)->groups, gotg, sizeof(gotg));
	struct ip6_fib_stats st;
	ip6_fib_stats(fib, &st);
	printf("mem: sluice tbl24 %s (mapped %s)\nmem: sluice groups %s (mapped %s)\n", got24,
	       ip6_fib_pages_name(st.tbl24_pages), gotg, ip6_fib_pages_name(st.groups_pages));
}

int main(int argc, char **argv)
{
	struct fib6_opts o;
	struct route6 *r = NULL;
	n_routes = fib6_setup(argc, argv, &o, &r, &batch);
	if (!n_routes)
		return 2;
	routes = r;
	char err[256];
	struct ip6_fib_config cfg;
	ip6_fib_config_default(&cfg);
	cfg.mem = o.no_huge ? IP6_FIB_MEM_4K : IP6_FIB_MEM_HUGETLB;
	cfg.n_groups = o.groups;
	struct ip6_fib *fib = ip6_fib_create(&cfg, err, sizeof(err));
	if (!fib) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	report_memory(fib);

	/* ---- matched with peer_fib6.c: add all in order, lookups, delete all ---- */
	uint32_t n = n_routes, n_ok = 0;
	uint64_t t0 = fib6_ticks();
	for (uint32_t i = 0; i < n; i++)
		n_ok += ip6_fib_add(fib, prefix_of(&r[i]), r[i].len, result6_of(i)) == 0;
	double add_all = (double)(fib6_ticks() - t0) / n;
	struct ip6_fib_stats st;
	ip6_fib_stats(fib, &st);
	printf("%u routes (%u unique): add %.0f ticks each; %u of %u groups (by level:", n,
	       st.n_routes, add_all, st.n_groups_used, st.n_groups);
	for (int l = 1; l < 14; l++)
		printf(" %u", st.n_groups_by_level[l]);
	printf("); %.1f MB, %.0f bytes per route\n", (double)st.mem_bytes / (1 << 20),
	       (double)st.mem_bytes / st.n_routes);
	if (n_ok != n) {
		fprintf(stderr, "%u adds failed (groups: --groups)\n", n - n_ok);
		return 1;
	}
	report_loads(fib, o.iterations);
	uint64_t sum, s4, sb, miss;
	pass_single(fib, o.iterations < WARMUP ? o.iterations : WARMUP, &sum, &miss); /* warm */
	double single = pass_single(fib, o.iterations, &sum, &miss);
	double x4 = pass_x4(fib, o.iterations, &s4);
	double bulk = pass_bulk(fib, o.iterations, &sb);
	if (s4 != sum || sb != sum) {
		fprintf(stderr, "lookup sums differ: single %llu, x4 %llu, bulk %llu\n",
			(unsigned long long)sum, (unsigned long long)s4, (unsigned long long)sb);
		return 1;
	}
	double miss_pct = 100.0 * (double)miss / ((double)o.iterations * BATCH);
	printf("  lookup single %.1f, x4 %.1f, bulk(32) %.1f ticks (miss %.1f%%, sum %llu)\n", single,
	       x4, bulk, miss_pct, (unsigned long long)sum);
	t0 = fib6_ticks();
	for (uint32_t i = 0; i < n; i++)
		ip6_fib_del(fib, prefix_of(&r[i]), r[i].len);
	double del_all = (double)(fib6_ticks() - t0) / n;
	ip6_fib_stats(fib, &st);
	printf("  delete all in order: %.0f ticks each; %u routes left\n", del_all, st.n_routes);
	if (st.n_routes)
		return 1;
	printf("bench: sluice.routes %u\nbench: sluice.add_all %.1f\nbench: sluice.lookup_single %.3f\n"
	       "bench: sluice.lookup_x4 %.3f\nbench: sluice.lookup_bulk %.3f\n"
	       "bench: sluice.del_all %.1f\nbench: sluice.miss_pct %.2f\nbench: sluice.sum %llu\n",
	       n, add_all, single, x4, bulk, del_all, miss_pct, (unsigned long long)sum);

	/* ---- sluice only: churn in the full table ---- */
	ip6_fib_quiesce(fib);
	for (uint32_t i = 0; i < n; i++)
		ip6_fib_add(fib, prefix_of(&r[i]), r[i].len, result6_of(i));
	ip6_fib_stats(fib, &st);
	double cd, ca;
	uint64_t worst;
	churn(fib, o.churn, &cd, &ca, &worst);
	printf("  churn in the full table: delete %.0f, re-add %.0f ticks (worst add %llu)\n", cd, ca,
	       (unsigned long long)worst);
	printf("bench: sluice.churn_add %.0f\nbench: sluice.churn_del %.0f\n"
	       "bench: sluice.unique %u\nbench: sluice.groups_used %u\nbench: sluice.bytes_per_route %.0f\n",
	       ca, cd, st.n_routes, st.n_groups_used, (double)st.mem_bytes / st.n_routes);
	ip6_fib_destroy(fib);
	free(r);
	free(batch);
	return 0;
}
