/* Load-balance buckets for both families (fib_lb.h). */
#include "nodes/fib_lb.h"

#include <stdbool.h>

static uint32_t weight_of(const struct fib_lb_path *p)
{
	return p->weight ? p->weight : 1;
}

uint32_t fib_lb_buckets_for(const struct fib_lb_path *paths, uint32_t n, uint32_t min_b)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < n; i++)
		w += weight_of(&paths[i]);
	uint32_t b = min_b < FIB_LB_MIN_BUCKETS ? FIB_LB_MIN_BUCKETS : min_b;
	for (; b < FIB_LB_MAX_BUCKETS; b *= 2) {
		bool exact = true;
		for (uint32_t i = 0; i < n; i++)
			exact &= (b * weight_of(&paths[i])) % w == 0;
		if (exact)
			break;
	}
	return b;
}

/* Each path's share of b buckets (largest remainder, at least one). */
static void shares(const struct fib_lb_path *paths, uint32_t n, uint32_t b, uint32_t *share)
{
	uint32_t w = 0, given = 0, rem[FIB_LB_MAX_PATHS];
	for (uint32_t i = 0; i < n; i++)
		w += weight_of(&paths[i]);
	for (uint32_t i = 0; i < n; i++) {
		share[i] = b * weight_of(&paths[i]) / w;
		rem[i] = b * weight_of(&paths[i]) % w;
		given += share[i];
	}
	for (; given < b; given++) { /* the largest remainder first, ties in path order */
		uint32_t best = 0;
		for (uint32_t i = 1; i < n; i++)
			if (rem[i] > rem[best])
				best = i;
		share[best]++;
		rem[best] = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		while (share[i] == 0) { /* a tiny weight: one bucket from the largest share */
			uint32_t big = 0;
			for (uint32_t k = 1; k < n; k++)
				if (share[k] > share[big])
					big = k;
			share[big]--;
			share[i]++;
		}
}

void fib_lb_assign(uint32_t *buckets, const uint32_t *want, uint32_t b, const struct fib_lb_path *paths,
			   uint32_t n)
{
	uint32_t share[FIB_LB_MAX_PATHS], used[FIB_LB_MAX_PATHS] = { 0 }, next[FIB_LB_MAX_BUCKETS];
	shares(paths, n, b, share);
	for (uint32_t k = 0; k < b; k++) {
		next[k] = UINT32_MAX;
		for (uint32_t i = 0; i < n; i++)
			if (want[k] == paths[i].adj_index && used[i] < share[i]) {
				used[i]++;
				next[k] = i;
				break;
			}
	}
	uint32_t i = 0;
	for (uint32_t k = 0; k < b; k++) {
		if (next[k] != UINT32_MAX)
			continue;
		while (used[i] >= share[i])
			i++;
		used[i]++;
		next[k] = i;
	}
	for (uint32_t k = 0; k < b; k++)
		__atomic_store_n(&buckets[k], paths[next[k]].adj_index, __ATOMIC_RELAXED);
}

void fib_lb_update(uint32_t *buckets, uint32_t *mask, const struct fib_lb_path *paths, uint32_t n)
{
	uint32_t old_b = *mask + 1, b = fib_lb_buckets_for(paths, n, old_b);
	uint32_t want[FIB_LB_MAX_BUCKETS];
	for (uint32_t k = 0; k < b; k++)
		want[k] = buckets[k % old_b];
	for (uint32_t k = old_b; k < b; k++) /* the copies first, then the mask */
		__atomic_store_n(&buckets[k], want[k], __ATOMIC_RELAXED);
	__atomic_store_n(mask, b - 1, __ATOMIC_RELEASE);
	fib_lb_assign(buckets, want, b, paths, n);
}
