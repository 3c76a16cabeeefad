/* The route mix both IPv4 benches use (fib.c, path.c): per address class
 * (leading bits 0, 10, 110) and depth, the route counts of the real table
 * dump that DPDK's lpm_perf_autotest also uses (1,076,806 routes, 64% /24,
 * most of the rest /16../23), each depth's routes spread evenly over the
 * class from a random start, then the dump's five extras at random places.
 * Header-only: each bench is one file plus this (bench/ip4/peer_fib.c, our
 * rte_lpm/rte_fib harness, includes it too: the same routes, same order). */
#ifndef SLUICE_BENCH_IP4_ROUTES_H
#define SLUICE_BENCH_IP4_ROUTES_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#define ROUTES_MAX 1200000 /* room for the mix */

/* Routes per depth 1..32: class A (0...), B (10...), C (110...). */
static const uint32_t mix[3][32] = {
	{ 0, 0, 1, 0, 2, 1, 3, 185, 26, 16, 39, 144, 233, 528, 866, 3856,
	  3268, 5662, 17301, 22226, 11147, 16746, 17120, 77578, 401, 656, 1107, 1121, 2316, 717,
	  10, 66 },
	{ 0, 0, 0, 0, 1, 1, 1, 3, 3, 30, 25, 168, 305, 569, 1129, 50800,
	  1645, 1820, 3506, 3258, 3424, 4971, 6885, 39771, 424, 170, 433, 92, 366, 377, 2, 200 },
	{ 0, 0, 0, 0, 0, 0, 0, 12, 8, 9, 33, 69, 237, 1007, 1717, 14663,
	  8070, 16185, 48261, 36870, 33960, 50638, 61422, 466549, 1829, 4824, 4927, 5914, 10254,
	  4905, 1, 716 },
};

#define IPV4(a, b, c, d) (((uint32_t)(a) << 24) | ((b) << 16) | ((c) << 8) | (d))

struct route {
	uint32_t prefix;
	uint8_t len;
};

static uint64_t rng_state = 88172645463325252ull;

static uint64_t rnd64(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* The mix with every depth's count divided by div (1: the whole ~1.07M;
 * QUICK runs use 8), same shape, same order. */
static uint32_t make_routes_div(struct route *r, uint32_t div)
{
	static const uint32_t lead[3] = { 0x00000000, 0x80000000, 0xc0000000 };
	static const uint32_t lead_bits[3] = { 1, 2, 3 };
	uint32_t n = 0;
	for (int c = 0; c < 3; c++) {
		for (uint32_t d = 1; d <= 32; d++) {
			uint32_t count = (mix[c][d - 1] + div / 2) / div;
			if (!count)
				continue;
			uint32_t free_bits = d - lead_bits[c];
			uint32_t span = 1u << free_bits, m = span - 1;
			uint32_t step = span <= count ? 1 : (uint32_t)lround((double)span / count);
			uint32_t at = (uint32_t)rnd64() & m;
			for (uint32_t k = 0; k < count; k++, at = (at + step) & m)
				r[n++] = (struct route){ lead[c] | (at << (32 - d)), (uint8_t)d };
		}
	}
	/* the dump's private and default-ish extras, at random positions */
	static const struct route extra[] = {
		{ IPV4(0, 0, 0, 0), 8 },       { IPV4(10, 2, 23, 147), 32 },
		{ IPV4(192, 168, 100, 10), 24 }, { IPV4(192, 168, 25, 100), 24 },
		{ IPV4(192, 168, 129, 124), 32 },
	};
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++) {
		uint32_t at = (uint32_t)(rnd64() % n);
		r[n++] = r[at];
		r[at] = extra[i];
	}
	return n;
}

static inline uint32_t make_routes(struct route *r)
{
	return make_routes_div(r, 1);
}

#endif
