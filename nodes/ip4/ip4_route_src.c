/* Routes per source (ip4_interface.h): a hash of prefixes, each with one
 * slot per source, beside the FIB, which holds only the best. The FIB stays
 * the datapath's single structure; this store is control-path only (barrier
 * held) and costs a prefix's bytes once per route, not per packet.
 *
 * Precedence, first wins: an address's connected/local route (it is in the
 * FIB, not here, and a route of any source for that prefix is refused),
 * then IP4_SRC_CLI, then IP4_SRC_LINUX. The operator's own `ip route add`
 * beats a learnt route as VPP's FIB sources do (CLI above the interface
 * sources of linux-cp) and as an administrative distance would.
 *
 * A source's route is one path or several (ECMP, up to IP4_LB_MAX_PATHS):
 * one is kept in the entry, several in an array of their own, so the
 * 100,000s of single-path routes a routing daemon brings cost no more than
 * before. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip4/ip4_route_private.h"

struct src_entry {
	struct src_entry *next;
	uint32_t prefix_h;
	uint8_t len;
	uint8_t present; /* bit per source */
	uint8_t n[IP4_SRC_N]; /* paths per source */
	struct ip4_route_path one[IP4_SRC_N];   /* a source's path when it has one */
	struct ip4_route_path *more[IP4_SRC_N]; /* its paths when several (malloc) */
};

/* Chained by (prefix, len). Growing rehashes under the barrier, so it goes
 * a few buckets per update (Redis's incremental rehash): while old is set,
 * its buckets from moved on still hold entries and are searched too. */
#define REHASH_STEP 16u /* old buckets moved per update */

static struct {
	struct src_entry **b;
	uint32_t mask; /* buckets - 1 */
	uint32_t n;
	uint32_t n_src[IP4_SRC_N];
	struct src_entry **old; /* the buckets being moved out, or NULL */
	uint32_t old_mask, moved;
	uint64_t rehashed; /* entries moved, ever (tests bound it per update) */
} store;

static uint32_t key_hash(uint32_t prefix_h, uint8_t len)
{
	uint32_t k = prefix_h ^ ((uint32_t)len * 0x9e3779b9u);
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	return k;
}

static struct src_entry **chain_find(struct src_entry **pp, uint32_t prefix_h, uint8_t len)
{
	while (*pp && ((*pp)->prefix_h != prefix_h || (*pp)->len != len))
		pp = &(*pp)->next;
	return pp;
}

/* The link holding prefix/len, or (absent) the end of its chain in the
 * live buckets, where an insert goes. */
static struct src_entry **slot_of(uint32_t prefix_h, uint8_t len)
{
	if (!store.b)
		return NULL;
	uint32_t h = key_hash(prefix_h, len);
	struct src_entry **pp = chain_find(&store.b[h & store.mask], prefix_h, len);
	if (*pp || !store.old || (h & store.old_mask) < store.moved)
		return pp;
	struct src_entry **op = chain_find(&store.old[h & store.old_mask], prefix_h, len);
	return *op ? op : pp;
}

/* Move REHASH_STEP old buckets over; free the old array after the last. */
static void rehash_step(void)
{
	for (uint32_t end = store.moved + REHASH_STEP; store.old && store.moved < end; store.moved++) {
		if (store.moved > store.old_mask) {
			free(store.old);
			store.old = NULL;
			break;
		}
		for (struct src_entry *e = store.old[store.moved], *nx; e; e = nx) {
			nx = e->next;
			uint32_t h = key_hash(e->prefix_h, e->len) & store.mask;
			e->next = store.b[h];
			store.b[h] = e;
			store.rehashed++;
		}
		store.old[store.moved] = NULL;
	}
}

static void rehash_settle(void)
{
	while (store.old)
		rehash_step();
}

/* Keep the chains short: at one entry per bucket, twice the buckets (fresh
 * zero pages from calloc), which the updates that follow fill. */
static int grow(void)
{
	rehash_step();
	if (store.b && (store.n < store.mask + 1 || store.old))
		return 0;
	uint32_t nb = store.b ? 2 * (store.mask + 1) : 256;
	struct src_entry **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	store.old = store.b;
	store.old_mask = store.mask;
	store.moved = 0;
	store.b = b;
	store.mask = nb - 1;
	return 0;
}

uint64_t ip4_route_src_rehashed(void)
{
	return store.rehashed;
}

static struct src_entry *entry_get(uint32_t prefix_h, uint8_t len, bool create)
{
	struct src_entry **pp = slot_of(prefix_h, len);
	if (pp && *pp)
		return *pp;
	if (!create || grow())
		return NULL;
	struct src_entry *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->prefix_h = prefix_h;
	e->len = len;
	pp = slot_of(prefix_h, len);
	*pp = e;
	store.n++;
	return e;
}

static void entry_drop_if_empty(struct src_entry *e)
{
	if (e->present)
		return;
	struct src_entry **pp = slot_of(e->prefix_h, e->len);
	*pp = e->next;
	free(e);
	store.n--;
	rehash_step();
}

static int best_src(const struct src_entry *e)
{
	for (int s = 0; s < IP4_SRC_N; s++)
		if (e->present & (1u << s))
			return s;
	return -1;
}

static bool is_address_route(uint32_t prefix_h, uint8_t len)
{
	return ip4_fib_main && ip4_route_is_address(prefix_h, len);
}

static struct ip4_route_path *paths_of(struct src_entry *e, int s)
{
	return e->n[s] > 1 ? e->more[s] : &e->one[s];
}

/* Make e hold e's best (or nothing), unless an address owns it. */
static int install_best(struct src_entry *e, char *err, size_t errlen)
{
	if (is_address_route(e->prefix_h, e->len))
		return 0;
	int s = best_src(e);
	if (s < 0) {
		ip4_route_uninstall(e->prefix_h, e->len);
		return 0;
	}
	const struct ip4_route_path *p = paths_of(e, s);
	if (e->n[s] > 1)
		return ip4_route_install_multi(e->prefix_h, e->len, p, e->n[s], err, errlen);
	return ip4_route_install(e->prefix_h, e->len, p->kind, p->if_index, ntohl(p->next_hop), err, errlen);
}

/* src's paths become a copy of p[0..n) (n >= 1). 0 or -ENOMEM. */
static int set_paths(struct src_entry *e, enum ip4_route_src src, const struct ip4_route_path *p, uint32_t n)
{
	struct ip4_route_path *m = NULL;
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

static void clear_path(struct src_entry *e, enum ip4_route_src src)
{
	if (e->present & (1u << src))
		store.n_src[src]--;
	e->present &= ~(1u << src);
	free(e->more[src]);
	e->more[src] = NULL;
	e->n[src] = 0;
}

static bool is_next_hop(uint8_t kind)
{
	return kind == IP4_ADJ_REWRITE || kind == IP4_ADJ_GLEAN;
}

static bool same_path(const struct ip4_route_path *a, const struct ip4_route_path *b)
{
	return a->kind == b->kind && a->next_hop == b->next_hop && a->if_index == b->if_index;
}

static int check_path(struct ip4_route_path *p, char *err, size_t errlen)
{
	if (p->weight > 256) {
		snprintf(err, errlen, "weight above 256");
		return -EINVAL;
	}
	if (p->kind == IP4_ADJ_DROP)
		p->kind = IP4_ADJ_BLACKHOLE;
	if (p->kind == IP4_ADJ_BLACKHOLE || p->kind == IP4_ADJ_UNREACH || p->kind == IP4_ADJ_PROHIBIT) {
		p->if_index = 0;
		p->next_hop = 0;
		return 0;
	}
	if (!is_next_hop(p->kind)) {
		snprintf(err, errlen, "a route is next hops, a device, blackhole, unreachable or prohibit");
		return -EINVAL;
	}
	if (p->kind == IP4_ADJ_GLEAN)
		p->next_hop = 0;
	if (p->kind == IP4_ADJ_REWRITE && p->if_index == DEV_INDEX_INVALID) {
		p->if_index = ip4_connected_if(p->next_hop);
		if (p->if_index == DEV_INDEX_INVALID) {
			snprintf(err, errlen, "next hop is on no connected subnet: name the interface");
			return -EINVAL;
		}
	} else if (!dev_by_index(p->if_index)) {
		snprintf(err, errlen, "no such interface");
		return -EINVAL;
	}
	return 0;
}

/* Check (and complete: interfaces, the kind's fields) n paths in place. */
static int check_paths(uint8_t plen, struct ip4_route_path *p, uint32_t n, char *err, size_t errlen)
{
	if (plen > 32) {
		snprintf(err, errlen, "prefix length above 32");
		return -EINVAL;
	}
	if (n < 1 || n > IP4_LB_MAX_PATHS) {
		snprintf(err, errlen, "1 to %u paths", IP4_LB_MAX_PATHS);
		return -EINVAL;
	}
	for (uint32_t i = 0; i < n; i++) {
		int rc = check_path(&p[i], err, errlen);
		if (rc)
			return rc;
		if (n > 1 && !is_next_hop(p[i].kind)) {
			snprintf(err, errlen, "only next hops and devices make a multipath route");
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

int ip4_route_src_set(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *path,
		      uint32_t n, char *err, size_t errlen)
{
	struct ip4_route_path p[IP4_LB_MAX_PATHS], old[IP4_LB_MAX_PATHS];
	if (n > IP4_LB_MAX_PATHS)
		n = 0; /* refused by check_paths */
	memcpy(p, path, n * sizeof(*p));
	int rc = check_paths(plen, p, n, err, errlen);
	if (rc || (rc = ip4_main_init(err, errlen)))
		return rc;
	uint32_t prefix_h = ntohl(prefix & ip4_plen_mask(plen));
	if (is_address_route(prefix_h, plen)) {
		snprintf(err, errlen, "a connected or local route: remove the address instead");
		return -EPERM;
	}
	struct src_entry *e = entry_get(prefix_h, plen, true);
	uint32_t old_n = e && (e->present & (1u << src)) ? e->n[src] : 0;
	if (old_n)
		memcpy(old, paths_of(e, src), old_n * sizeof(*old));
	if (!e || set_paths(e, src, p, n)) {
		if (e)
			entry_drop_if_empty(e);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ip4_fib_quiesce(ip4_fib_main);
	rc = install_best(e, err, errlen);
	if (rc) { /* nothing changes: the FIB kept the old route */
		if (!old_n || set_paths(e, src, old, old_n))
			clear_path(e, src);
		entry_drop_if_empty(e);
	}
	return rc;
}

int ip4_route_src_add(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *path,
		      char *err, size_t errlen)
{
	return ip4_route_src_set(src, prefix, plen, path, 1, err, errlen);
}

int ip4_route_src_del(enum ip4_route_src src, uint32_t prefix, uint8_t plen, char *err, size_t errlen)
{
	if (plen > 32) {
		snprintf(err, errlen, "prefix length above 32");
		return -EINVAL;
	}
	uint32_t prefix_h = ntohl(prefix & ip4_plen_mask(plen));
	struct src_entry *e = entry_get(prefix_h, plen, false);
	if (!e || !(e->present & (1u << src))) {
		if (ip4_fib_main && is_address_route(prefix_h, plen)) {
			snprintf(err, errlen, "a connected or local route: remove the address instead");
			return -EPERM;
		}
		snprintf(err, errlen, "no such route");
		return -ENOENT;
	}
	clear_path(e, src);
	ip4_fib_quiesce(ip4_fib_main);
	install_best(e, err, errlen); /* a removal or an install of a known-good path */
	entry_drop_if_empty(e);
	return 0;
}

/* src's paths for prefix/plen (network order) into out: how many (0: none). */
static uint32_t src_paths(enum ip4_route_src src, uint32_t prefix, uint8_t plen, struct ip4_route_path *out)
{
	struct src_entry *e = plen <= 32 ? entry_get(ntohl(prefix & ip4_plen_mask(plen)), plen, false) : NULL;
	if (!e || !(e->present & (1u << src)))
		return 0;
	memcpy(out, paths_of(e, src), e->n[src] * sizeof(*out));
	return e->n[src];
}

int ip4_route_src_path_add(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *path,
			   uint32_t n, char *err, size_t errlen)
{
	struct ip4_route_path cur[IP4_LB_MAX_PATHS], add[IP4_LB_MAX_PATHS];
	if (n > IP4_LB_MAX_PATHS)
		n = 0;
	memcpy(add, path, n * sizeof(*add));
	int rc = check_paths(plen, add, n, err, errlen);
	if (rc)
		return rc;
	uint32_t m = src_paths(src, prefix, plen, cur);
	if (m == 0 || !is_next_hop(cur[0].kind) || !is_next_hop(add[0].kind))
		return ip4_route_src_set(src, prefix, plen, add, n, err, errlen);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = 0;
		while (k < m && !same_path(&cur[k], &add[i]))
			k++;
		if (k == IP4_LB_MAX_PATHS) {
			snprintf(err, errlen, "at most %u paths", IP4_LB_MAX_PATHS);
			return -EINVAL;
		}
		add[i].gen = k < m ? cur[k].gen : add[i].gen;
		cur[k] = add[i];
		m += k == m;
	}
	return ip4_route_src_set(src, prefix, plen, cur, m, err, errlen);
}

int ip4_route_src_path_del(enum ip4_route_src src, uint32_t prefix, uint8_t plen, uint32_t next_hop,
			   uint32_t if_index, char *err, size_t errlen)
{
	struct ip4_route_path cur[IP4_LB_MAX_PATHS];
	uint32_t m = src_paths(src, prefix, plen, cur), k = 0;
	for (uint32_t i = 0; i < m; i++)
		if (!is_next_hop(cur[i].kind) || cur[i].next_hop != next_hop ||
		    (if_index != DEV_INDEX_INVALID && cur[i].if_index != if_index))
			cur[k++] = cur[i];
	if (k == m) {
		snprintf(err, errlen, "no such path");
		return -ENOENT;
	}
	if (k == 0)
		return ip4_route_src_del(src, prefix, plen, err, errlen);
	return ip4_route_src_set(src, prefix, plen, cur, k, err, errlen);
}

uint32_t ip4_route_src_paths(uint32_t prefix_h, uint8_t plen, struct ip4_route_path *out, uint32_t max)
{
	struct src_entry *e = entry_get(prefix_h, plen, false);
	int s = e && !is_address_route(prefix_h, plen) ? best_src(e) : -1;
	if (s < 0)
		return 0;
	memcpy(out, paths_of(e, s), MIN(max, e->n[s]) * sizeof(*out));
	return e->n[s];
}

int ip4_route_src_best(uint32_t prefix_h, uint8_t plen, struct ip4_route_path *p)
{
	struct src_entry *e = entry_get(prefix_h, plen, false);
	int s = e && !is_address_route(prefix_h, plen) ? best_src(e) : -1;
	if (s >= 0 && p)
		*p = *paths_of(e, s);
	return s;
}

void ip4_route_src_reinstall(uint32_t prefix_h, uint8_t len)
{
	char err[64];
	struct src_entry *e = entry_get(prefix_h, len, false);
	if (e)
		install_best(e, err, sizeof(err));
}

/* src's paths in e without those drop() accepts: whether any went. */
static bool filter_paths(struct src_entry *e, int src, bool (*drop)(const struct ip4_route_path *p, int src, uint32_t arg),
			 uint32_t arg)
{
	struct ip4_route_path *p = paths_of(e, src), keep[IP4_LB_MAX_PATHS];
	uint32_t n = e->n[src], k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!drop(&p[i], src, arg))
			keep[k++] = p[i];
	if (k == n)
		return false;
	if (k == 0 || set_paths(e, (enum ip4_route_src)src, keep, k))
		clear_path(e, (enum ip4_route_src)src);
	return true;
}

/* Remove from every entry the paths accepted by drop(path, arg) (a route
 * goes with its last path), then put each touched entry's best back. How
 * many routes went. */
static uint32_t remove_where(bool (*drop)(const struct ip4_route_path *p, int src, uint32_t arg), uint32_t arg)
{
	uint32_t n = 0;
	char err[64];
	if (ip4_fib_main)
		ip4_fib_quiesce(ip4_fib_main);
	rehash_settle(); /* a walk of every entry anyway */
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			uint8_t before = e->present;
			bool changed = false;
			for (int s = 0; s < IP4_SRC_N; s++)
				if (e->present & (1u << s))
					changed |= filter_paths(e, s, drop, arg);
			if (!changed)
				continue;
			n += (uint32_t)__builtin_popcount(before & ~e->present);
			install_best(e, err, sizeof(err));
			entry_drop_if_empty(e);
		}
	return n;
}

static bool via_if(const struct ip4_route_path *p, int src, uint32_t if_index)
{
	(void)src;
	return is_next_hop(p->kind) && p->if_index == if_index;
}

static enum ip4_route_src sweep_src;
static uint32_t sweep_owner;

static bool stale(const struct ip4_route_path *p, int src, uint32_t gen)
{
	return src == (int)sweep_src && p->gen != gen && ((p->gen ^ gen) & sweep_owner) == 0;
}

void ip4_route_src_forget_if(uint32_t if_index)
{
	remove_where(via_if, if_index);
}

uint32_t ip4_route_src_sweep(enum ip4_route_src src, uint32_t gen, uint32_t owner_mask)
{
	sweep_src = src;
	sweep_owner = owner_mask;
	return remove_where(stale, gen);
}

uint32_t ip4_route_src_count(enum ip4_route_src src)
{
	return src < IP4_SRC_N ? store.n_src[src] : 0;
}

const char *ip4_route_src_name(enum ip4_route_src src)
{
	static const char *const names[] = { "cli", "linux" };
	return src < IP4_SRC_N ? names[src] : "?";
}

/* rtnetlink(7)'s rtm_protocol values, as iproute2's rt_protos names them. */
const char *ip4_route_protocol_name(uint8_t protocol)
{
	switch (protocol) {
	case 0: return "";
	case 2: return "kernel";
	case 3: return "boot";
	case 4: return "static";
	case 11: return "zebra";
	case 12: return "bird";
	case 16: return "dhcp";
	case 186: return "bgp";
	case 187: return "isis";
	case 188: return "ospf";
	case 189: return "rip";
	case 192: return "eigrp";
	default: return "other";
	}
}

int ip4_route_add(uint32_t prefix, uint8_t plen, uint32_t next_hop, uint32_t if_index, char *err, size_t errlen)
{
	struct ip4_route_path p = { .kind = IP4_ADJ_REWRITE, .next_hop = next_hop, .if_index = if_index };
	return ip4_route_src_set(IP4_SRC_CLI, prefix, plen, &p, 1, err, errlen);
}

int ip4_route_del(uint32_t prefix, uint8_t plen, char *err, size_t errlen)
{
	return ip4_route_src_del(IP4_SRC_CLI, prefix, plen, err, errlen);
}

void ip4_route_src_free(void)
{
	rehash_settle();
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			for (int s = 0; s < IP4_SRC_N; s++)
				free(e->more[s]);
			free(e);
		}
	free(store.b);
	memset(&store, 0, sizeof(store));
}
