/* Routes per source (ip4_interface.h): a hash of prefixes, each with one
 * slot per source, beside the FIB, which holds only the best. The FIB stays
 * the datapath's single structure; this store is control-path only (barrier
 * held) and costs a prefix's bytes once per route, not per packet.
 *
 * Precedence, first wins: an address's connected/local route (it is in the
 * FIB, not here, and a route of any source for that prefix is refused),
 * then IP4_SRC_CLI, then IP4_SRC_LINUX. The operator's own `ip route add`
 * beats a learnt route as VPP's FIB sources do (CLI above the interface
 * sources of linux-cp) and as an administrative distance would. */
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
	struct ip4_route_path p[IP4_SRC_N];
};

static struct {
	struct src_entry **b;
	uint32_t mask; /* buckets - 1 */
	uint32_t n;
	uint32_t n_src[IP4_SRC_N];
} store;

static uint32_t key_hash(uint32_t prefix_h, uint8_t len)
{
	uint32_t k = prefix_h ^ ((uint32_t)len * 0x9e3779b9u);
	k ^= k >> 16;
	k *= 0x85ebca6bu;
	k ^= k >> 13;
	return k;
}

static struct src_entry **slot_of(uint32_t prefix_h, uint8_t len)
{
	if (!store.b)
		return NULL;
	struct src_entry **pp = &store.b[key_hash(prefix_h, len) & store.mask];
	while (*pp && ((*pp)->prefix_h != prefix_h || (*pp)->len != len))
		pp = &(*pp)->next;
	return pp;
}

/* Keep the chains short: double at one entry per bucket. */
static int grow(void)
{
	uint32_t nb = store.b ? 2 * (store.mask + 1) : 256;
	if (store.b && store.n < store.mask + 1)
		return 0;
	struct src_entry **b = calloc(nb, sizeof(*b));
	if (!b)
		return -ENOMEM;
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			uint32_t h = key_hash(e->prefix_h, e->len) & (nb - 1);
			e->next = b[h];
			b[h] = e;
		}
	free(store.b);
	store.b = b;
	store.mask = nb - 1;
	return 0;
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
	const struct ip4_adj *a = ip4_route_adj(prefix_h, len);
	return a && (a->kind == IP4_ADJ_LOCAL || a->kind == IP4_ADJ_GLEAN);
}

/* Make the FIB hold e's best (or nothing), unless an address owns it. */
static int install_best(const struct src_entry *e, char *err, size_t errlen)
{
	if (is_address_route(e->prefix_h, e->len))
		return 0;
	int s = best_src(e);
	if (s < 0) {
		ip4_route_uninstall(e->prefix_h, e->len);
		return 0;
	}
	const struct ip4_route_path *p = &e->p[s];
	return ip4_route_install(e->prefix_h, e->len, p->kind, p->if_index, ntohl(p->next_hop), err, errlen);
}

static void set_path(struct src_entry *e, enum ip4_route_src src, const struct ip4_route_path *p)
{
	if (!(e->present & (1u << src)))
		store.n_src[src]++;
	e->present |= 1u << src;
	e->p[src] = *p;
}

static void clear_path(struct src_entry *e, enum ip4_route_src src)
{
	if (e->present & (1u << src))
		store.n_src[src]--;
	e->present &= ~(1u << src);
}

static int check_path(uint8_t plen, struct ip4_route_path *p, char *err, size_t errlen)
{
	if (plen > 32) {
		snprintf(err, errlen, "prefix length above 32");
		return -EINVAL;
	}
	if (p->kind == IP4_ADJ_DROP) {
		p->if_index = 0;
		p->next_hop = 0;
		return 0;
	}
	if (p->kind != IP4_ADJ_REWRITE) {
		snprintf(err, errlen, "a route is a next hop or a drop");
		return -EINVAL;
	}
	if (p->if_index == DEV_INDEX_INVALID) {
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

int ip4_route_src_add(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *path,
		      char *err, size_t errlen)
{
	struct ip4_route_path p = *path;
	int rc = check_path(plen, &p, err, errlen);
	if (rc || (rc = ip4_main_init(err, errlen)))
		return rc;
	uint32_t prefix_h = ntohl(prefix & ip4_plen_mask(plen));
	if (is_address_route(prefix_h, plen)) {
		snprintf(err, errlen, "a connected or local route: remove the address instead");
		return -EPERM;
	}
	struct src_entry *e = entry_get(prefix_h, plen, true);
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	struct src_entry old = *e;
	set_path(e, src, &p);
	ip4_fib_quiesce(ip4_fib_main);
	rc = install_best(e, err, errlen);
	if (rc) { /* nothing changes: the FIB kept the old route */
		if (!(old.present & (1u << src)))
			clear_path(e, src);
		else
			e->p[src] = old.p[src];
		entry_drop_if_empty(e);
	}
	return rc;
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

int ip4_route_src_best(uint32_t prefix_h, uint8_t plen, struct ip4_route_path *p)
{
	const struct src_entry *e = entry_get(prefix_h, plen, false);
	int s = e && !is_address_route(prefix_h, plen) ? best_src(e) : -1;
	if (s >= 0 && p)
		*p = e->p[s];
	return s;
}

void ip4_route_src_reinstall(uint32_t prefix_h, uint8_t len)
{
	char err[64];
	const struct src_entry *e = entry_get(prefix_h, len, false);
	if (e)
		install_best(e, err, sizeof(err));
}

/* Remove from every entry the paths accepted by drop(path, arg), then put
 * each touched entry's best back. */
static uint32_t remove_where(bool (*drop)(const struct ip4_route_path *p, int src, uint32_t arg), uint32_t arg)
{
	uint32_t n = 0;
	char err[64];
	if (ip4_fib_main)
		ip4_fib_quiesce(ip4_fib_main);
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			uint8_t before = e->present;
			for (int s = 0; s < IP4_SRC_N; s++)
				if ((e->present & (1u << s)) && drop(&e->p[s], s, arg))
					clear_path(e, (enum ip4_route_src)s);
			if (e->present == before)
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
	return p->kind == IP4_ADJ_REWRITE && p->if_index == if_index;
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
	return ip4_route_src_add(IP4_SRC_CLI, prefix, plen, &p, err, errlen);
}

int ip4_route_del(uint32_t prefix, uint8_t plen, char *err, size_t errlen)
{
	return ip4_route_src_del(IP4_SRC_CLI, prefix, plen, err, errlen);
}

void ip4_route_src_free(void)
{
	for (uint32_t i = 0; store.b && i <= store.mask; i++)
		for (struct src_entry *e = store.b[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	free(store.b);
	memset(&store, 0, sizeof(store));
}
