/* IPv6 routes per source (ip6_route.h): a chained hash of prefixes, each
 * with one slot per source, beside the FIB, which holds only the best.
 * Control path only (barrier held), as IPv4's (nodes/ip4/ip4_route_src.c);
 * the precedence is the same: an address's connected/local route (in the
 * FIB, not here; a route of any source for that prefix is refused), then
 * the CLI, then Linux. The store (hash, incremental rehash, one path in
 * the entry and several in an array of their own) is the template both
 * families share, nodes/fib_src.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "nodes/fib_src.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_route_private.h"

static uint32_t key_hash(const ip6_addr_a2 *p, uint8_t len)
{
	uint64_t w[2];
	memcpy(w, p, 16);
	uint64_t k = (w[0] * 0x9e3779b97f4a7c15ull) ^ w[1] ^ len;
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (uint32_t)k;
}

static bool key_eq(const ip6_addr_a2 *a, const ip6_addr_a2 *b)
{
	return ip6_addr_eq(a, b);
}

FIB_SRC_ENTRY(src6_entry, struct in6_addr, struct ip6_route_path, IP6_SRC_N);

static int check_path(struct ip6_route_path *p, char *err, size_t errlen);
static bool same_path(const struct ip6_route_path *a, const struct ip6_route_path *b);
static int install_best(struct src6_entry *e, char *err, size_t errlen);

/* A blackhole, unreachable or prohibit route has one path: it refuses
 * the traffic, there is nothing to share it with. */
static bool multipath_ok(const struct ip6_route_path *p)
{
	return !ip6_adj_kind_rejects(p->kind);
}

FIB_SRC_DEFINE(rs, src6_entry, struct in6_addr, struct ip6_route_path, IP6_SRC_N, IP6_ROUTE_MAX_PATHS, (void)0)

/* A load balance over p[0..n) into the FIB: the installed one updated in
 * place when only this route holds it (its flows stay), else a new one. */
static int install_lb(const struct src6_entry *e, const struct ip6_route_path *p, uint32_t n, char *err,
		      size_t errlen)
{
	struct fib_lb_path lp[IP6_ROUTE_MAX_PATHS];
	uint32_t k = 0;
	for (; k < n; k++) {
		int a = ip6_adj_ref(p[k].kind, p[k].if_index, &p[k].next_hop);
		if (a < 0)
			break;
		lp[k] = (struct fib_lb_path){ .adj_index = (uint32_t)a, .weight = p[k].weight };
	}
	int cur = ip6_route_adj_of(&e->key, e->len), rc = -ENOSPC;
	if (k == n && cur > 0 && ip6_adjs[cur].kind == IP6_ADJ_LB && ip6_adjs[cur].n_refs == 1) {
		ip6_lb_update((uint32_t)cur, lp, n);
		return 0;
	}
	int lb = k == n ? ip6_lb_create(lp, n) : -ENOSPC;
	if (lb >= 0)
		return ip6_route_fib_set(&e->key, e->len, lb, err, errlen);
	while (k--)
		ip6_adj_release(lp[k].adj_index);
	snprintf(err, errlen, "adjacency or load-balance table full");
	return rc;
}

/* Make the FIB hold e's best (or nothing), unless an address owns it. */
static int install_best(struct src6_entry *e, char *err, size_t errlen)
{
	if (ip6_route_is_address(&e->key, e->len))
		return 0;
	int s = rs_best(e);
	if (s < 0) {
		ip6_route_fib_unset(&e->key, e->len);
		return 0;
	}
	const struct ip6_route_path *p = rs_paths(e, s);
	if (e->n[s] > 1)
		return install_lb(e, p, e->n[s], err, errlen);
	return ip6_route_fib_set(&e->key, e->len, ip6_adj_ref(p->kind, p->if_index, &p->next_hop), err, errlen);
}

static bool same_path(const struct ip6_route_path *a, const struct ip6_route_path *b)
{
	return a->kind == b->kind && a->if_index == b->if_index && ip6_addr_eq(&a->next_hop, &b->next_hop);
}

static int check_path(struct ip6_route_path *p, char *err, size_t errlen)
{
	if (p->weight > 256) {
		snprintf(err, errlen, "weight above 256");
		return -EINVAL;
	}
	if (p->kind >= IP6_ADJ_BLACKHOLE && p->kind < IP6_ADJ_N_KIND) { /* a route's only path (check_paths) */
		memset(&p->next_hop, 0, sizeof(p->next_hop));
		p->if_index = DEV_INDEX_INVALID;
		return 0;
	}
	if (p->kind == IP6_ADJ_GLEAN) {
		memset(&p->next_hop, 0, sizeof(p->next_hop));
	} else if (p->kind != IP6_ADJ_REWRITE || ip6_addr_is_multicast(&p->next_hop) ||
		   ip6_addr_is_unspecified(&p->next_hop)) {
		snprintf(err, errlen, "a path is a unicast next hop or a device");
		return -EINVAL;
	}
	if (p->if_index == DEV_INDEX_INVALID && p->kind == IP6_ADJ_REWRITE && !ip6_addr_is_link_local(&p->next_hop))
		p->if_index = ip6_connected_if(&p->next_hop);
	if (p->if_index == DEV_INDEX_INVALID || !ip6_if(p->if_index)) {
		snprintf(err, errlen, "next hop not on a connected prefix of an IPv6 interface (name the interface)");
		return -EINVAL;
	}
	return 0;
}

static int check_paths(uint8_t plen, struct ip6_route_path *p, uint32_t n, char *err, size_t errlen)
{
	if (plen > 128) {
		snprintf(err, errlen, "bad prefix length");
		return -EINVAL;
	}
	return rs_check_paths(p, n, err, errlen);
}

int ip6_route_src_set(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
		      const struct ip6_route_path *path, uint32_t n, char *err, size_t errlen)
{
	struct ip6_route_path p[IP6_ROUTE_MAX_PATHS];
	if (n > IP6_ROUTE_MAX_PATHS)
		n = 0; /* refused by check_paths */
	memcpy(p, path, n * sizeof(*p));
	int rc = check_paths(plen, p, n, err, errlen);
	if (rc || (rc = ip6_main_init(err, errlen)))
		return rc;
	struct in6_addr pfx = *prefix;
	ip6_prefix_mask(&pfx, plen);
	if (ip6_route_is_address(&pfx, plen)) {
		snprintf(err, errlen, "a connected or local route: remove the address instead");
		return -EPERM;
	}
	return rs_commit(&pfx, plen, src, p, n, err, errlen);
}

int ip6_route_src_path_add(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
			   const struct ip6_route_path *path, uint32_t n, char *err, size_t errlen)
{
	struct ip6_route_path cur[IP6_ROUTE_MAX_PATHS], add[IP6_ROUTE_MAX_PATHS];
	if (n > IP6_ROUTE_MAX_PATHS)
		n = 0;
	memcpy(add, path, n * sizeof(*add));
	int rc = check_paths(plen, add, n, err, errlen);
	if (rc)
		return rc;
	struct in6_addr pfx = *prefix;
	ip6_prefix_mask(&pfx, plen);
	uint32_t m = rs_copy(&pfx, plen, src, cur);
	if (m == 1 && ip6_adj_kind_rejects(cur[0].kind))
		m = 0; /* a route that refuses has no paths to add to: replaced */
	int merged = rs_merge(cur, m, add, n, false, err, errlen);
	if (merged < 0)
		return merged;
	return ip6_route_src_set(src, &pfx, plen, cur, (uint32_t)merged, err, errlen);
}

int ip6_route_src_del(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen, char *err, size_t errlen)
{
	if (plen > 128) {
		snprintf(err, errlen, "bad prefix length");
		return -EINVAL;
	}
	struct in6_addr pfx = *prefix;
	ip6_prefix_mask(&pfx, plen);
	struct src6_entry *e = rs_get(&pfx, plen, false);
	if (!e || !(e->present & (1u << src))) {
		bool addr = ip6_fib_main && ip6_route_is_address(&pfx, plen);
		snprintf(err, errlen, addr ? "a connected or local route: remove the address instead" : "no such route");
		return addr ? -EPERM : -ENOENT;
	}
	rs_remove_src(e, src, err, errlen);
	return 0;
}

int ip6_route_src_best(const ip6_addr_a2 *prefix, uint8_t plen, struct ip6_route_path *out, uint32_t max,
		       uint32_t *n)
{
	struct in6_addr key = *prefix; /* the store's key is 4-byte aligned, the argument 2 */
	struct src6_entry *e = plen <= 128 ? rs_get(&key, plen, false) : NULL;
	int s = e && !ip6_route_is_address(prefix, plen) ? rs_best(e) : -1;
	*n = s < 0 ? 0 : e->n[s];
	if (s >= 0)
		memcpy(out, rs_paths(e, s), (*n < max ? *n : max) * sizeof(*out));
	return s;
}

void ip6_route_src_reinstall(const ip6_addr_a2 *prefix, uint8_t plen)
{
	char err[64];
	struct in6_addr key = *prefix; /* the store's key is 4-byte aligned, the argument 2 */
	struct src6_entry *e = rs_get(&key, plen, false);
	if (e)
		install_best(e, err, sizeof(err));
}

bool ip6_route_src_sweep_step(enum ip6_route_src src, uint32_t gen, uint32_t owner_mask, uint32_t *bucket,
			      uint32_t *mask, uint64_t deadline_ns, uint32_t *swept)
{
	char err[64];
	uint32_t seen = 0;
	/* A rehash in flight moves entries from bucket to bucket under a walk:
	 * finished first, in steps too (the clock every 64). */
	while (rs_store.old) {
		rs_rehash_step();
		if ((++seen & 63) == 0 && time_now_ns() >= deadline_ns)
			return false;
	}
	if (!rs_store.b)
		return true;
	if (*mask != rs_store.mask) { /* begun, or grown since the last step: again (the sweep is idempotent) */
		*mask = rs_store.mask;
		*bucket = 0;
	}
	for (; *bucket <= rs_store.mask; (*bucket)++) {
		if ((++seen & 63) == 0 && time_now_ns() >= deadline_ns)
			return false;
		for (struct src6_entry *e = rs_store.b[*bucket], *nx; e; e = nx) {
			nx = e->next; /* e may go */
			if (!(e->present & (1u << src)))
				continue;
			uint32_t g = rs_paths(e, src)->gen;
			if (g == gen || ((g ^ gen) & owner_mask))
				continue;
			rs_remove_src(e, src, err, sizeof(err));
			(*swept)++;
		}
	}
	return true;
}

uint32_t ip6_route_src_sweep(enum ip6_route_src src, uint32_t gen, uint32_t owner_mask)
{
	uint32_t n = 0, bucket = 0, mask = 0;
	while (!ip6_route_src_sweep_step(src, gen, owner_mask, &bucket, &mask, UINT64_MAX, &n))
		;
	return n;
}

uint32_t ip6_route_src_each(enum ip6_route_src src,
			    void (*fn)(const struct in6_addr *prefix, uint8_t plen, const struct ip6_route_path *p,
				       uint32_t n, void *arg),
			    void *arg)
{
	uint32_t k = 0;
	rs_settle();
	FIB_SRC_FOREACH(rs, src6_entry, e)
	{
		if (!(e->present & (1u << src)))
			continue;
		struct ip6_route_path p[IP6_ROUTE_MAX_PATHS];
		uint32_t n = e->n[src];
		struct in6_addr pfx = e->key;
		memcpy(p, rs_paths(e, src), n * sizeof(*p));
		fn(&pfx, e->len, p, n, arg);
		k++;
	}
	return k;
}

int ip6_route_src_path_del(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
			   const struct ip6_route_path *path, char *err, size_t errlen)
{
	struct in6_addr pfx = *prefix;
	ip6_prefix_mask(&pfx, plen);
	struct src6_entry *e = plen <= 128 ? rs_get(&pfx, plen, false) : NULL;
	struct ip6_route_path keep[IP6_ROUTE_MAX_PATHS];
	uint32_t n = e && (e->present & (1u << src)) ? e->n[src] : 0, k = 0;
	const struct ip6_route_path *p = n ? rs_paths(e, src) : NULL;
	for (uint32_t i = 0; i < n; i++)
		if (p[i].kind != path->kind || !ip6_addr_eq(&p[i].next_hop, &path->next_hop) ||
		    (path->if_index != DEV_INDEX_INVALID && p[i].if_index != path->if_index))
			keep[k++] = p[i];
	if (k == n) {
		snprintf(err, errlen, "no such path");
		return -ENOENT;
	}
	if (k == 0)
		return ip6_route_src_del(src, &pfx, plen, err, errlen);
	return ip6_route_src_set(src, &pfx, plen, keep, k, err, errlen);
}

uint32_t ip6_route_src_count(enum ip6_route_src src)
{
	return src < IP6_SRC_N ? rs_store.n_src[src] : 0;
}

const char *ip6_route_src_name(enum ip6_route_src src)
{
	static const char *const names[] = { "cli", "linux" };
	return src < IP6_SRC_N ? names[src] : "?";
}

void ip6_route_src_free(void)
{
	rs_free();
}
