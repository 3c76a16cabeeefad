/* What the IPv6 FIB benches share, so that sluice (fib.c) and rte_lpm6 /
 * rte_fib6 (peer_fib6.c, built against libdpdk by run.sh) get the same
 * routes, the same addresses, and are timed the same way:
 *   - the route set: a synthetic table shaped like the public IPv6 table
 *     (its prefix-length mix: half /48, then /32, /44, /40, /36, /29 ...;
 *     every prefix under one of 2^17 "allocation" /32s in six RIR /12s,
 *     the longer ones under the first four /40s of their allocation, as
 *     assignments cluster), --routes of them from --seed;
 *   - the lookup addresses: a route picked uniformly, its host bits random
 *     (traffic to routed destinations: each lookup walks as deep as its
 *     route), from their own generator restarted for every pass, so each
 *     pass of each table sees the same stream, batch by batch;
 *   - WARMUP batches of single lookups, untimed, first;
 *   - batches of BATCH addresses generated outside the timed region, then
 *     looked up inside it (single, x4 or bulk of BULK); ticks per lookup =
 *     the pass's ticks over its lookups;
 *   - the sum of each pass's results (a miss adds 0), printed so run.sh can
 *     check that every table answered the same;
 *   - the clock: rdtsc (fib6_ticks);
 *   - the table size every side gets: --groups 256-entry groups.
 * Header-only, plain C: no sluice and no DPDK header beyond bench/ip4's
 * smaps.h. */
#ifndef SLUICE_BENCH_IP6_FIB6BENCH_H
#define SLUICE_BENCH_IP6_FIB6BENCH_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/ip4/smaps.h"

#define BATCH 4096
#define BULK 32   /* a quarter of a sluice frame; rte_fib6's bulk in its tests */
#define WARMUP 16 /* batches of single lookups, untimed, before the passes */
#define N_ALLOC (1u << 17)

struct route6 {
	uint8_t a[16];
	uint8_t len;
};

static inline uint64_t fib6_ticks(void)
{
	uint32_t lo, hi;
	__asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
}

static uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Prefix lengths per mille, the shape of the public IPv6 table's
 * distribution (bgp.potaroo.net's IPv6 prefix-length report, rounded). */
static const uint16_t mix6[][2] = {
	{ 19, 1 },   { 20, 2 },   { 22, 2 },  { 24, 3 },  { 28, 10 }, { 29, 30 }, { 30, 5 },
	{ 31, 3 },   { 32, 110 }, { 33, 8 },  { 34, 8 },  { 35, 5 },  { 36, 40 }, { 37, 5 },
	{ 38, 10 },  { 39, 5 },   { 40, 70 }, { 41, 5 },  { 42, 15 }, { 43, 5 },  { 44, 90 },
	{ 45, 10 },  { 46, 30 },  { 47, 20 }, { 48, 480 }, { 52, 3 }, { 56, 10 }, { 60, 2 },
	{ 64, 14 },  { 128, 5 },
};

static const uint16_t rir12[6] = { 0x200, 0x240, 0x260, 0x280, 0x2a0, 0x2c0 };

/* n routes from seed: per length its share of n, in length order (as a
 * table dump lists them), each under a random allocation. */
static uint32_t make_routes6(struct route6 *r, uint32_t n, uint64_t seed)
{
	uint64_t s = seed ? seed : 88172645463325252ull;
	uint32_t total = 0, k = 0;
	for (size_t i = 0; i < sizeof(mix6) / sizeof(mix6[0]); i++)
		total += mix6[i][1];
	for (size_t i = 0; i < sizeof(mix6) / sizeof(mix6[0]) && k < n; i++) {
		uint32_t count = (uint32_t)(((uint64_t)n * mix6[i][1] + total / 2) / total);
		unsigned len = mix6[i][0];
		for (uint32_t c = 0; c < count && k < n; c++, k++) {
			uint64_t x = xs(&s), y = xs(&s);
			uint32_t alloc = (uint32_t)(x % N_ALLOC);
			/* the allocation's /32: a RIR /12 and 20 bits of its own */
			uint32_t top = ((uint32_t)rir12[alloc % 6] << 20) | ((alloc * 2654435761u) & 0xfffff);
			struct route6 *p = &r[k];
			memset(p, 0, sizeof(*p));
			for (int b = 0; b < 4; b++)
				p->a[b] = (uint8_t)(top >> (24 - 8 * b));
			p->a[4] = (uint8_t)((x >> 32) & 3); /* the first four /40s */
			for (int b = 5; b < 16; b++)
				p->a[b] = (uint8_t)(y >> (8 * (b % 8)));
			for (unsigned b = len; b < 128; b++) /* clear the host bits */
				p->a[b / 8] &= (uint8_t) ~(0x80 >> (b % 8));
			p->len = (uint8_t)len;
		}
	}
	return k;
}

static uint64_t addr_state;

static void addr_restart(void)
{
	addr_state = 0x2545f4914f6cdd1dull;
}

/* BATCH addresses (16 bytes each, packed as DPDK takes them): a random
 * route's prefix with random host bits. */
static void fill_batch6(uint8_t (*b)[16], const struct route6 *r, uint32_t n)
{
	for (uint32_t j = 0; j < BATCH; j++) {
		const struct route6 *p = &r[xs(&addr_state) % n];
		uint64_t h0 = xs(&addr_state), h1 = xs(&addr_state);
		for (unsigned i = 0; i < 16; i++) {
			uint8_t rnd = (uint8_t)((i < 8 ? h0 : h1) >> (8 * (i % 8)));
			unsigned keep = p->len >= 8 * (i + 1) ? 8 : p->len > 8 * i ? p->len - 8 * i : 0;
			uint8_t m = (uint8_t)(0xff00 >> keep);
			b[j][i] = (uint8_t)((p->a[i] & m) | (rnd & ~m));
		}
	}
}

/* The pages behind addr: "2 MB hugetlb", "THP n of m MB" or "4 KB". */
static void page_report6(const void *addr, char *buf, size_t len)
{
	struct smaps_kb m;
	snprintf(buf, len, "unknown (no smaps)");
	if (!smaps_of(addr, &m))
		return;
	if (m.kernel_page >= 2048)
		snprintf(buf, len, "2 MB hugetlb");
	else if (m.anon_huge + m.shmem_pmd > 0)
		snprintf(buf, len, "THP %ld of %ld MB", (m.anon_huge + m.shmem_pmd) >> 10, m.size >> 10);
	else if (m.kernel_page)
		snprintf(buf, len, "4 KB");
}

struct fib6_opts {
	uint64_t seed;
	uint32_t routes;     /* the set's size */
	uint32_t groups;     /* 256-entry groups every table gets */
	uint32_t iterations; /* lookup batches per pass */
	uint32_t churn;      /* sluice only */
	bool no_huge;        /* sluice only: IP6_FIB_MEM_4K */
};

/* Options, the route set and the batch buffer; 0 on a bad option. */
static uint32_t fib6_setup(int argc, char **argv, struct fib6_opts *o, struct route6 **routes,
			   uint8_t (**batch)[16])
{
	static const struct option opts[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "routes", required_argument, NULL, 'r' },
		{ "groups", required_argument, NULL, 'g' },
		{ "iterations", required_argument, NULL, 'i' },
		{ "churn", required_argument, NULL, 'c' },
		{ "no-huge", no_argument, NULL, 'n' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (struct fib6_opts){ .routes = 1000000, .groups = 1u << 19, .iterations = 1024,
				 .churn = 100000 };
	optind = 1;
	for (int c; (c = getopt_long(argc, argv, "", opts, NULL)) != -1;) {
		if (c == 's')
			o->seed = strtoull(optarg, NULL, 0);
		else if (c == 'r')
			o->routes = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'g')
			o->groups = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'i')
			o->iterations = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'c')
			o->churn = (uint32_t)strtoul(optarg, NULL, 0);
		else if (c == 'n')
			o->no_huge = true;
		else
			return 0;
	}
	*batch = malloc(BATCH * sizeof(**batch));
	*routes = malloc((size_t)o->routes * sizeof(**routes));
	if (!*batch || !*routes || !o->iterations || !o->routes || !o->groups) {
		fprintf(stderr, "usage: [--seed N] [--routes N>0] [--groups N>0] [--iterations N>0] "
				"[--churn N] [--no-huge]\n");
		return 0;
	}
	return make_routes6(*routes, o->routes, o->seed);
}

static inline uint32_t result6_of(uint32_t i)
{
	return 1 + i % 65535;
}

#endif
