/* The IPv4 FIB's adjacency table: what a route's result names (drop,
 * local, glean, or a rewrite towards a next hop), shared by reference count
 * between the routes that use it. Index 0 is the drop adjacency, always
 * there. */
#include "nodes/ip4/ip4_fib_private.h"

#include <errno.h>
#include <string.h>

int ip4_adj_alloc(struct ip4_fib *fib, const struct ip4_adj *init)
{
	uint32_t i;
	if (fib->n_adj_free)
		i = fib->adj_free[--fib->n_adj_free];
	else if (fib->adj_hw < fib->max_adj)
		i = fib->adj_hw++;
	else
		return -ENOSPC;
	fib->adj[i] = *init;
	fib->n_adj++;
	return (int)i;
}

int ip4_adj_add(struct ip4_fib *fib, enum ip4_adj_kind kind, uint32_t if_index,
		uint32_t next_hop)
{
	if (kind == IP4_ADJ_DROP)
		return IP4_ADJ_INDEX_DROP;
	if (kind >= IP4_ADJ_N_KIND || kind == IP4_ADJ_LB)
		return -EINVAL;
	if (kind > IP4_ADJ_LB) /* the route kinds: one shared adjacency each */
		if_index = next_hop = 0;
	/* A linear scan: adjacencies number in the thousands and change at
	 * control-plane pace. */
	for (uint32_t i = 1; i < fib->adj_hw; i++) {
		struct ip4_adj *a = &fib->adj[i];
		if (a->n_refs && a->kind == kind && a->if_index == if_index &&
		    a->next_hop == next_hop) {
			a->n_refs++;
			return (int)i;
		}
	}
	return ip4_adj_alloc(fib, &(struct ip4_adj){
		.kind = (uint8_t)kind, .if_index = if_index, .next_hop = next_hop, .n_refs = 1,
	});
}

int ip4_adj_release(struct ip4_fib *fib, uint32_t adj_index)
{
	if (adj_index == IP4_ADJ_INDEX_DROP)
		return 0;
	if (adj_index >= fib->adj_hw || fib->adj[adj_index].n_refs == 0)
		return -EINVAL;
	struct ip4_adj *a = &fib->adj[adj_index];
	if (--a->n_refs == 0) {
		if (a->kind == IP4_ADJ_LB)
			ip4_lb_free(fib, a->if_index);
		*a = (struct ip4_adj){ 0 };
		fib->adj_free[fib->n_adj_free++] = adj_index;
		fib->n_adj--;
	}
	return 0;
}

int ip4_adj_set_rewrite(struct ip4_fib *fib, uint32_t adj_index, const uint8_t *rewrite,
			uint8_t len)
{
	if (adj_index == IP4_ADJ_INDEX_DROP || adj_index >= fib->adj_hw ||
	    fib->adj[adj_index].n_refs == 0 || len > IP4_ADJ_REWRITE_MAX || (len && !rewrite))
		return -EINVAL;
	struct ip4_adj *a = &fib->adj[adj_index];
	if (len)
		memcpy(a->rewrite, rewrite, len);
	memset(a->rewrite + len, 0, IP4_ADJ_REWRITE_MAX - len);
	a->rewrite_len = len;
	return 0;
}

int ip4_adj_walk(const struct ip4_fib *fib,
		 int (*fn)(uint32_t adj_index, const struct ip4_adj *a, void *ctx), void *ctx)
{
	for (uint32_t i = 0; i < fib->adj_hw; i++) {
		if (fib->adj[i].n_refs == 0)
			continue;
		int rc = fn(i, &fib->adj[i], ctx);
		if (rc)
			return rc;
	}
	return 0;
}

const char *ip4_adj_kind_name(uint8_t kind)
{
	static const char *const names[IP4_ADJ_N_KIND] = {
		"drop", "local", "glean", "rewrite", "multipath", "blackhole", "unreachable", "prohibit",
	};
	return kind < IP4_ADJ_N_KIND ? names[kind] : "?";
}
