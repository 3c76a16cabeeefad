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
 * A source's route is one path or several (ECMP, up to IP4_LB_MAX_PATHS).
 * The store itself (hash, incremental rehash, slots per source) is the
 * template both families share, nodes/fib_src.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/fib_src.h"
#include "nodes/ip4/ip4_route_private.h"

static uint32_t key_hash(const uint32_t *prefix_h, uint8_t len)
{
	uint32_t k = *prefix_h ^ ((uint32_t)len * 0x9e3779b9u);
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	return k;
}

static bool key_eq(const uint32_t *a, const uint32_t *b)
{
	return *a == *b;
}

FIB_SRC_ENTRY(src_entry, uint32_t, struct ip4_route_path, IP4_SRC_N);

static int check_path(struct ip4_route_path *p, char *err, size_t errlen);
static bool same_path(const struct ip4_route_path *a, const struct ip4_route_path *b);
static bool multipath_ok(const struct ip4_route_path *p);
static int install_best(struct src_entry *e, char *err, size_t errlen);

FIB_SRC_DEFINE(rs, src_entry, uint32_t, struct ip4_route_path, IP4_SRC_N, IP4_LB_MAX_PATHS,
	       ip4_fib_quiesce(ip4_fib_main))

uint64_t ip4_route_src_rehashed(void)
{
	return rs_store.rehashed;
}

static bool is_address_route(uint32_t prefix_h, uint8_t len)
{
	return ip4_fib_main && ip4_route_is_address(prefix_h, len);
}

/* Make e hold e's best (or nothing), unless an address owns it. */
static int install_best(struct src_entry *e, char *err, size_t errlen)
{
	if (is_address_route(e->key, e->len))
		return 0;
	int s = rs_best(e);
	if (s < 0) {
		ip4_route_uninstall(e->key, e->len);
		return 0;
	}
	const struct ip4_route_path *p = rs_paths(e, s);
	if (e->n[s] > 1)
		return ip4_route_install_multi(e->key, e->len, p, e->n[s], err, errlen);
	return ip4_route_install(e->key, e->len, p->kind, p->if_index, ntohl(p->next_hop), err, errlen);
}

static bool is_next_hop(uint8_t kind)
{
	return kind == IP4_ADJ_REWRITE || kind == IP4_ADJ_GLEAN;
}

static bool same_path(const struct ip4_route_path *a, const struct ip4_route_path *b)
{
	return a->kind == b->kind && a->next_hop == b->next_hop && a->if_index == b->if_index;
}

static bool multipath_ok(const struct ip4_route_path *p)
{
	return is_next_hop(p->kind);
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
	return rs_check_paths(p, n, err, errlen);
}

int ip4_route_src_set(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *path,
		      uint32_t n, char *err, size_t errlen)
{
	struct ip4_route_path p[IP4_LB_MAX_PATHS];
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
	return rs_commit(&prefix_h, plen, src, p, n, err, errlen);
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
	struct src_entry *e = rs_get(&prefix_h, plen, false);
	if (!e || !(e->present & (1u << src))) {
		if (ip4_fib_main && is_address_route(prefix_h, plen)) {
			snprintf(err, errlen, "a connected or local route: remove the address instead");
			return -EPERM;
		}
		snprintf(err, errlen, "no such route");
		return -ENOENT;
	}
	rs_remove_src(e, src, err, errlen);
	return 0;
}

/* src's paths for prefix/plen (network order) into out: how many (0: none). */
static uint32_t src_paths(enum ip4_route_src src, uint32_t prefix, uint8_t plen, struct ip4_route_path *out)
{
	if (plen > 32)
		return 0;
	uint32_t prefix_h = ntohl(prefix & ip4_plen_mask(plen));
	return rs_copy(&prefix_h, plen, src, out);
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
	int merged = rs_merge(cur, m, add, n, true, err, errlen);
	if (merged < 0)
		return merged;
	return ip4_route_src_set(src, prefix, plen, cur, (uint32_t)merged, err, errlen);
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
	struct src_entry *e = rs_get(&prefix_h, plen, false);
	int s = e && !is_address_route(prefix_h, plen) ? rs_best(e) : -1;
	if (s < 0)
		return 0;
	memcpy(out, rs_paths(e, s), MIN(max, e->n[s]) * sizeof(*out));
	return e->n[s];
}

int ip4_route_src_best(uint32_t prefix_h, uint8_t plen, struct ip4_route_path *p)
{
	struct src_entry *e = rs_get(&prefix_h, plen, false);
	int s = e && !is_address_route(prefix_h, plen) ? rs_best(e) : -1;
	if (s >= 0 && p)
		*p = *rs_paths(e, s);
	return s;
}

void ip4_route_src_reinstall(uint32_t prefix_h, uint8_t len)
{
	char err[64];
	struct src_entry *e = rs_get(&prefix_h, len, false);
	if (e)
		install_best(e, err, sizeof(err));
}

/* src's paths in e without those drop() accepts: whether any went. */
static bool filter_paths(struct src_entry *e, int src, bool (*drop)(const struct ip4_route_path *p, int src, uint32_t arg),
			 uint32_t arg)
{
	struct ip4_route_path *p = rs_paths(e, src), keep[IP4_LB_MAX_PATHS];
	uint32_t n = e->n[src], k = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!drop(&p[i], src, arg))
			keep[k++] = p[i];
	if (k == n)
		return false;
	if (k == 0 || rs_set_paths(e, (enum ip4_route_src)src, keep, k))
		rs_clear(e, (enum ip4_route_src)src);
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
	rs_settle(); /* a walk of every entry anyway */
	FIB_SRC_FOREACH(rs, src_entry, e)
	{
		uint8_t before = e->present;
		bool changed = false;
		for (int s = 0; s < IP4_SRC_N; s++)
			if (e->present & (1u << s))
				changed |= filter_paths(e, s, drop, arg);
		if (!changed)
			continue;
		n += (uint32_t)__builtin_popcount(before & ~e->present);
		install_best(e, err, sizeof(err));
		rs_drop_if_empty(e);
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
	return src < IP4_SRC_N ? rs_store.n_src[src] : 0;
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
	rs_free();
}
