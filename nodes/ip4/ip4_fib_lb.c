/* The IPv4 FIB's load balances (ip4_fib.h): a route's several paths as a
 * power-of-two table of buckets, each a path's adjacency, as VPP's
 * load_balance_t and its ip_multipath_normalize_next_hops.
 *
 * The bucket shares and their stickiness: nodes/fib_lb.h, shared with
 * IPv6.
 */
#include "nodes/ip4/ip4_fib_private.h"

#include <errno.h>
#include <string.h>

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
	uint32_t b = fib_lb_buckets_for(paths, n, IP4_LB_MIN_BUCKETS);
	int a = ip4_adj_alloc(fib, &(struct ip4_adj){ .kind = IP4_ADJ_LB, .if_index = l, .next_hop = b - 1, .n_refs = 1 });
	if (a < 0)
		return a;
	if (fib->n_lb_free)
		fib->n_lb_free--;
	else
		fib->lb_hw++;
	uint32_t none[IP4_LB_MAX_BUCKETS] = { 0 };
	fib_lb_assign(fib->lb[l].buckets, none, b, paths, n);
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
	fib_lb_update(lb->buckets, &a->next_hop, paths, n);
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
