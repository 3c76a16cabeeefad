/* The IPv4 FIB's load balances (ip4_fib.h): a route's several paths as a
 * power-of-two table of buckets, each a path's adjacency, as VPP's
 * load_balance_t and its ip_multipath_normalize_next_hops.
 *
 * Bucket shares: path i of weight w_i out of W gets B * w_i / W buckets.
 * B is the smallest of 16, 32, 64 (and not below the table's current size)
 * for which every share is whole; else 64 and Hamilton's largest-remainder
 * rounding, every path at least one bucket. So 1:3 is 4/12 of 16 buckets
 * exactly, and three equal paths 22/21/21 of 64 (a 1.6% skew at most).
 *
 * Stickiness: an update keeps each bucket whose path is still there and
 * within its new share, and gives only the freed buckets to the paths
 * below their share, so a removed path's flows move and no other flow does
 * (RFC 2992 analyses how recomputed hash-threshold regions disrupt flows of
 * the paths that stay too; Linux's resilient nexthop groups keep buckets the
 * same way). A table that grows is first doubled by
 * copying (bucket k of 2B is bucket k mod B of B, the same one a flow's
 * hash & (B - 1) chose), so growing moves no flow either; it never shrinks.
 */
#include "nodes/ip4/ip4_fib_private.h"

#include <errno.h>
#include <string.h>

static uint32_t weight_of(const struct ip4_lb_path *p)
{
	return p->weight ? p->weight : 1;
}

static int paths_check(const struct ip4_fib *fib, const struct ip4_lb_path *paths, uint32_t n)
{
	if (n < 2 || n > IP4_LB_MAX_PATHS)
		return -EINVAL;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t a = paths[i].adj_index;
		if (a == 0 || a >= fib->adj_hw || paths[i].weight > 256 ||
		    (fib->adj[a].kind != IP4_ADJ_REWRITE && fib->adj[a].kind != IP4_ADJ_GLEAN))
			return -EINVAL;
	}
	return 0;
}

/* The table size for these weights, at least min_b. */
static uint32_t buckets_for(const struct ip4_lb_path *paths, uint32_t n, uint32_t min_b)
{
	uint32_t w = 0;
	for (uint32_t i = 0; i < n; i++)
		w += weight_of(&paths[i]);
	uint32_t b = min_b < IP4_LB_MIN_BUCKETS ? IP4_LB_MIN_BUCKETS : min_b;
	for (; b < IP4_LB_MAX_BUCKETS; b *= 2) {
		bool exact = true;
		for (uint32_t i = 0; i < n; i++)
			exact &= (b * weight_of(&paths[i])) % w == 0;
		if (exact)
			break;
	}
	return b;
}

/* Each path's share of b buckets (largest remainder, at least one). */
static void shares(const struct ip4_lb_path *paths, uint32_t n, uint32_t b, uint32_t *share)
{
	uint32_t w = 0, given = 0, rem[IP4_LB_MAX_PATHS];
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

/* Fill lb (b buckets; want[k] the current adjacency per bucket, or 0)
 * with paths by their shares, keeping what may stay. */
static void buckets_assign(struct ip4_lb *lb, const uint32_t *want, uint32_t b, const struct ip4_lb_path *paths,
			   uint32_t n)
{
	uint32_t share[IP4_LB_MAX_PATHS], used[IP4_LB_MAX_PATHS] = { 0 }, next[IP4_LB_MAX_BUCKETS];
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
		__atomic_store_n(&lb->buckets[k], paths[next[k]].adj_index, __ATOMIC_RELAXED);
}

int ip4_lb_create(struct ip4_fib *fib, const struct ip4_lb_path *paths, uint32_t n)
{
	if (paths_check(fib, paths, n))
		return -EINVAL;
	uint32_t l;
	if (fib->n_lb_free)
		l = fib->lb_free[fib->n_lb_free - 1];
	else if (fib->lb_hw < fib->max_lb)
		l = fib->lb_hw;
	else
		return -ENOSPC;
	uint32_t b = buckets_for(paths, n, IP4_LB_MIN_BUCKETS);
	int a = ip4_adj_alloc(fib, &(struct ip4_adj){ .kind = IP4_ADJ_LB, .if_index = l, .next_hop = b - 1, .n_refs = 1 });
	if (a < 0)
		return a;
	if (fib->n_lb_free)
		fib->n_lb_free--;
	else
		fib->lb_hw++;
	uint32_t none[IP4_LB_MAX_BUCKETS] = { 0 };
	buckets_assign(&fib->lb[l], none, b, paths, n);
	fib->lb_ctl[l].n_paths = n;
	memcpy(fib->lb_ctl[l].paths, paths, n * sizeof(*paths));
	return a;
}

int ip4_lb_update(struct ip4_fib *fib, uint32_t lb_adj, const struct ip4_lb_path *paths, uint32_t n)
{
	if (lb_adj >= fib->adj_hw || fib->adj[lb_adj].kind != IP4_ADJ_LB || paths_check(fib, paths, n))
		return -EINVAL;
	struct ip4_adj *a = &fib->adj[lb_adj];
	struct ip4_lb *lb = &fib->lb[a->if_index];
	struct ip4_lb_ctl *c = &fib->lb_ctl[a->if_index];
	uint32_t old_b = a->next_hop + 1, b = buckets_for(paths, n, old_b);
	uint32_t want[IP4_LB_MAX_BUCKETS];
	for (uint32_t k = 0; k < b; k++)
		want[k] = lb->buckets[k % old_b];
	for (uint32_t k = old_b; k < b; k++) /* the copies first, then the mask */
		__atomic_store_n(&lb->buckets[k], want[k], __ATOMIC_RELAXED);
	__atomic_store_n(&a->next_hop, b - 1, __ATOMIC_RELEASE);
	buckets_assign(lb, want, b, paths, n);
	struct ip4_lb_ctl old = *c;
	c->n_paths = n;
	memcpy(c->paths, paths, n * sizeof(*paths));
	for (uint32_t i = 0; i < old.n_paths; i++)
		ip4_adj_release(fib, old.paths[i].adj_index);
	return 0;
}

uint32_t ip4_lb_paths(const struct ip4_fib *fib, uint32_t lb_adj, struct ip4_lb_path *out, uint32_t max)
{
	if (lb_adj >= fib->adj_hw || fib->adj[lb_adj].kind != IP4_ADJ_LB)
		return 0;
	const struct ip4_lb_ctl *c = &fib->lb_ctl[fib->adj[lb_adj].if_index];
	uint32_t n = c->n_paths < max ? c->n_paths : max;
	memcpy(out, c->paths, n * sizeof(*out));
	return c->n_paths;
}

void ip4_lb_free(struct ip4_fib *fib, uint32_t l)
{
	struct ip4_lb_ctl *c = &fib->lb_ctl[l];
	for (uint32_t i = 0; i < c->n_paths; i++)
		ip4_adj_release(fib, c->paths[i].adj_index);
	c->n_paths = 0;
	fib->lb_free[fib->n_lb_free++] = l;
}
