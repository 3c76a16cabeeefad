/* IPv6 routes per source (ip6_route.h): a chained hash of prefixes, each
 * with one slot per source, beside the FIB, which holds only the best.
 * Control path only (barrier held), as IPv4's (nodes/ip4/ip4_route_src.c);
 * the precedence is the same: an address's connected/local route (in the
 * FIB, not here; a route of any source for that prefix is refused), then
 * the CLI, then Linux. A source's one path is kept in the entry, several
 * in an array of their own, so single-path routes by the 100,000 cost no
 * more than one path each. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_route_private.h"

struct src6_entry {
	struct src6_entry *next;
	struct in6_addr prefix; /* masked */
	uint8_t len;
	uint8_t present;       /* bit per source */
	uint8_t n[IP6_SRC_N]; /* paths per source */
	struct ip6_route_path one[IP6_SRC_N];
	struct ip6_route_path *more[IP6_SRC_N]; /* several paths (malloc) */
};

static struct {
	struct src6_entry **b;
	uint32_t mask;
	uint32_t n;
	uint32_t n_src[IP6_SRC_N];
} store;

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

static struct src6_entry **slot_of(const ip6_addr_a2 *p, uint8_t len)
{
	if (!store.b)
		return NULL;
	struct src6_entry **pp = &store.b[key_hash(p, len) & store.mask];
	while (*pp && ((*pp)->len != len || !ip6_addr_eq(&(*pp)->prefix, p)))
		pp = &(*pp)->next;
	return pp;
}

static int grow(void)
{
	if (store.b && store.n < store.mask + 1)
		return 0;
	uint32_t nb = store.b ? 2 * (store.mask + 1) : 256;
	struct src6_entry **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src6_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			uint32_t h = key_hash(&e->prefix, e->len) & (nb - 1);
			e->next = b[h];
			b[h] = e;
		}
	free(store.b);
	store.b = b;
	store.mask = nb - 1;
	return 0;
}

static struct src6_entry *entry_get(const ip6_addr_a2 *p, uint8_t len, bool create)
{
	struct src6_entry **pp = slot_of(p, len);
	if (pp && *pp)
		return *pp;
	if (!create || grow())
		return NULL;
	struct src6_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->prefix = *p;
	e->len = len;
	*slot_of(p, len) = e;
	store.n++;
	return e;
}

static void entry_drop_if_empty(struct src6_entry *e)
{
	if (e->present)
		return;
	struct src6_entry **pp = slot_of(&e->prefix, e->len);
	*pp = e->next;
	free(e);
	store.n--;
}

static int best_src(const struct src6_entry *e)
{
	for (int s = 0; s < IP6_SRC_N; s++)
		if (e->present & (1u << s))
			return s;
	return -1;
}

static struct ip6_route_path *paths_of(struct src6_entry *e, int s)
{
	return e->n[s] > 1 ? e->more[s] : &e->one[s];
}

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
	int cur = ip6_route_adj_of(&e->prefix, e->len), rc = -ENOSPC;
	if (k == n && cur > 0 && ip6_adjs[cur].kind == IP6_ADJ_LB && ip6_adjs[cur].n_refs == 1) {
		ip6_lb_update((uint32_t)cur, lp, n);
		return 0;
	}
	int lb = k == n ? ip6_lb_create(lp, n) : -ENOSPC;
	if (lb >= 0)
		return ip6_route_fib_set(&e->prefix, e->len, lb, err, errlen);
	while (k--)
		ip6_adj_release(lp[k].adj_index);
	snprintf(err, errlen, "adjacency or load-balance table full");
	return rc;
}

/* Make the FIB hold e's best (or nothing), unless an address owns it. */
static int install_best(struct src6_entry *e, char *err, size_t errlen)
{
	if (ip6_route_is_address(&e->prefix, e->len))
		return 0;
	int s = best_src(e);
	if (s < 0) {
		ip6_route_fib_unset(&e->prefix, e->len);
		return 0;
	}
	const struct ip6_route_path *p = paths_of(e, s);
	if (e->n[s] > 1)
		return install_lb(e, p, e->n[s], err, errlen);
	return ip6_route_fib_set(&e->prefix, e->len, ip6_adj_ref(p->kind, p->if_index, &p->next_hop), err, errlen);
}

static int set_paths(struct src6_entry *e, enum ip6_route_src src, const struct ip6_route_path *p, uint32_t n)
{
	struct ip6_route_path *m = NULL;
	if (n > 1) {
		if (!(m = malloc(n * sizeof(*m))))
			return -ENOMEM;
		memcpy(m, p, n * sizeof(*m));
	} else {
		e->one[src] = p[0];
	}
	free(e->more[src]);
	e->more[src] = m;
	e->n[src] = (uint8_t)n;
	if (!(e->present & (1u << src)))
		store.n_src[src]++;
	e->present |= 1u << src;
	return 0;
}

static void clear_paths(struct src6_entry *e, enum ip6_route_src src)
{
	if (e->present & (1u << src))
		store.n_src[src]--;
	e->present &= ~(1u << src);
	free(e->more[src]);
	e->more[src] = NULL;
	e->n[src] = 0;
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
	if (n < 1 || n > IP6_ROUTE_MAX_PATHS) {
		snprintf(err, errlen, "1 to %u paths", IP6_ROUTE_MAX_PATHS);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n; i++) {
		int rc = check_path(&p[i], err, errlen);
		if (rc)
			return rc;
		if (n > 1 && ip6_adj_kind_rejects(p[i].kind)) {
			snprintf(err, errlen, "a blackhole, unreachable or prohibit route has one path");
			return -EINVAL;
		}
		for (uint32_t k = 0; k < i; k++)
			if (same_path(&p[k], &p[i])) {
				snprintf(err, errlen, "the same path twice");
				return -EINVAL;
			}
	}
	return 0;
}

int ip6_route_src_set(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
		      const struct ip6_route_path *path, uint32_t n, char *err, size_t errlen)
{
	struct ip6_route_path p[IP6_ROUTE_MAX_PATHS], old[IP6_ROUTE_MAX_PATHS];
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
	struct src6_entry *e = entry_get(&pfx, plen, true);
	uint32_t old_n = e && (e->present & (1u << src)) ? e->n[src] : 0;
	if (old_n)
		memcpy(old, paths_of(e, src), old_n * sizeof(*old));
	if (!e || set_paths(e, src, p, n)) {
		if (e)
			entry_drop_if_empty(e);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	rc = install_best(e, err, errlen);
	if (rc) { /* the FIB kept the old route: so does the store */
		if (!old_n || set_paths(e, src, old, old_n))
			clear_paths(e, src);
		entry_drop_if_empty(e);
	}
	return rc;
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
	struct src6_entry *e = entry_get(&pfx, plen, false);
	uint32_t m = e && (e->present & (1u << src)) ? e->n[src] : 0;
	if (m)
		memcpy(cur, paths_of(e, src), m * sizeof(*cur));
	if (m == 1 && ip6_adj_kind_rejects(cur[0].kind))
		m = 0; /* a route that refuses has no paths to add to: replaced */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (k < m && !same_path(&cur[k], &add[i]))
			k++;
		if (k == IP6_ROUTE_MAX_PATHS) {
			snprintf(err, errlen, "at most %u paths", IP6_ROUTE_MAX_PATHS);
			return -EINVAL;
		}
		cur[k] = add[i];
		m += k == m;
	}
	return ip6_route_src_set(src, &pfx, plen, cur, m, err, errlen);
}

int ip6_route_src_del(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen, char *err, size_t errlen)
{
	if (plen > 128) {
		snprintf(err, errlen, "bad prefix length");
		return -EINVAL;
	}
	struct in6_addr pfx = *prefix;
	ip6_prefix_mask(&pfx, plen);
	struct src6_entry *e = entry_get(&pfx, plen, false);
	if (!e || !(e->present & (1u << src))) {
		bool addr = ip6_fib_main && ip6_route_is_address(&pfx, plen);
		snprintf(err, errlen, addr ? "a connected or local route: remove the address instead" : "no such route");
		return addr ? -EPERM : -ENOENT;
	}
	clear_paths(e, src);
	install_best(e, err, errlen); /* a removal, or a path that was good before */
	entry_drop_if_empty(e);
	return 0;
}

int ip6_route_src_best(const ip6_addr_a2 *prefix, uint8_t plen, struct ip6_route_path *out, uint32_t max,
		       uint32_t *n)
{
	struct src6_entry *e = plen <= 128 ? entry_get(prefix, plen, false) : NULL;
	int s = e && !ip6_route_is_address(prefix, plen) ? best_src(e) : -1;
	*n = s < 0 ? 0 : e->n[s];
	if (s >= 0)
		memcpy(out, paths_of(e, s), (*n < max ? *n : max) * sizeof(*out));
	return s;
}

void ip6_route_src_reinstall(const ip6_addr_a2 *prefix, uint8_t plen)
{
	char err[64];
	struct src6_entry *e = entry_get(prefix, plen, false);
	if (e)
		install_best(e, err, sizeof(err));
}

uint32_t ip6_route_src_sweep(enum ip6_route_src src, uint32_t gen, uint32_t owner_mask)
{
	uint32_t n = 0;
	char err[64];
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src6_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			if (!(e->present & (1u << src)))
				continue;
			uint32_t g = paths_of(e, src)->gen;
			if (g == gen || ((g ^ gen) & owner_mask))
				continue;
			clear_paths(e, src);
			install_best(e, err, sizeof(err));
			entry_drop_if_empty(e);
			n++;
		}
	return n;
}

uint32_t ip6_route_src_each(enum ip6_route_src src,
			    void (*fn)(const struct in6_addr *prefix, uint8_t plen, const struct ip6_route_path *p,
				       uint32_t n, void *arg),
			    void *arg)
{
	uint32_t k = 0;
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src6_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			if (!(e->present & (1u << src)))
				continue;
			struct ip6_route_path p[IP6_ROUTE_MAX_PATHS];
			uint32_t n = e->n[src];
			struct in6_addr pfx = e->prefix;
			memcpy(p, paths_of(e, src), n * sizeof(*p));
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
	struct src6_entry *e = plen <= 128 ? entry_get(&pfx, plen, false) : NULL;
	struct ip6_route_path keep[IP6_ROUTE_MAX_PATHS];
	uint32_t n = e && (e->present & (1u << src)) ? e->n[src] : 0, k = 0;
	const struct ip6_route_path *p = n ? paths_of(e, src) : NULL;
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
	return src < IP6_SRC_N ? store.n_src[src] : 0;
}

const char *ip6_route_src_name(enum ip6_route_src src)
{
	static const char *const names[] = { "cli", "linux" };
	return src < IP6_SRC_N ? names[src] : "?";
}

void ip6_route_src_free(void)
{
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src6_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			for (int s = 0; s < IP6_SRC_N; s++)
				free(e->more[s]);
			free(e);
		}
	free(store.b);
	memset(&store, 0, sizeof(store));
}
