/* IPv6 load balances (ip6_lb.h); the buckets are nodes/fib_lb.c's. */
#include <errno.h>
#include <string.h>

#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_route_private.h"

struct ip6_lb ip6_lbs[IP6_LB_MAX];

static struct {
	uint32_t n_paths; /* 0: the slot is free */
	struct fib_lb_path paths[IP6_LB_MAX_PATHS];
} ctl[IP6_LB_MAX];

int ip6_lb_create(const struct fib_lb_path *paths, uint32_t n)
{
	uint32_t l = 1; /* slot 0 stays empty: an out-of-range index reads it */
	while (l < IP6_LB_MAX && ctl[l].n_paths)
		l++;
	if (l == IP6_LB_MAX || n < 2 || n > IP6_LB_MAX_PATHS)
		return -ENOSPC;
	int a = ip6_adj_new_lb(l);
	if (a < 0)
		return a;
	uint32_t b = fib_lb_buckets_for(paths, n, FIB_LB_MIN_BUCKETS);
	uint32_t none[FIB_LB_MAX_BUCKETS] = { 0 };
	fib_lb_assign(ip6_lbs[l].buckets, none, b, paths, n);
	__atomic_store_n(&ip6_lbs[l].mask, b - 1, __ATOMIC_RELEASE);
	ctl[l].n_paths = n;
	memcpy(ctl[l].paths, paths, n * sizeof(*paths));
	return a;
}

void ip6_lb_update(uint32_t lb_adj, const struct fib_lb_path *paths, uint32_t n)
{
	uint32_t l = ip6_adjs[lb_adj].if_index;
	struct ip6_lb *lb = &ip6_lbs[l];
	fib_lb_update(lb->buckets, &lb->mask, paths, n);
	uint32_t old_n = ctl[l].n_paths;
	struct fib_lb_path old[IP6_LB_MAX_PATHS];
	memcpy(old, ctl[l].paths, old_n * sizeof(*old));
	ctl[l].n_paths = n;
	memcpy(ctl[l].paths, paths, n * sizeof(*paths));
	for (uint32_t i = 0; i < old_n; i++)
		ip6_adj_release(old[i].adj_index);
}

uint32_t ip6_lb_paths(uint32_t lb_adj, struct fib_lb_path *out, uint32_t max)
{
	const struct ip6_adj *a = ip6_adj_get(lb_adj);
	if (a->kind != IP6_ADJ_LB || a->if_index >= IP6_LB_MAX)
		return 0;
	uint32_t n = ctl[a->if_index].n_paths;
	memcpy(out, ctl[a->if_index].paths, (n < max ? n : max) * sizeof(*out));
	return n;
}

void ip6_lb_free(uint32_t l)
{
	if (l >= IP6_LB_MAX || !ctl[l].n_paths)
		return;
	uint32_t n = ctl[l].n_paths;
	ctl[l].n_paths = 0;
	for (uint32_t i = 0; i < n; i++)
		ip6_adj_release(ctl[l].paths[i].adj_index);
}

void ip6_lb_reset(void)
{
	memset(ctl, 0, sizeof(ctl));
	memset(ip6_lbs, 0, sizeof(ip6_lbs));
}
