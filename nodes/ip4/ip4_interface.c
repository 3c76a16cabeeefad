/* IPv4 addresses, routes and the FIB instance (see ip4_interface.h).
 * Control path only: every call runs with the datapath parked. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/ip4/ip4_route_private.h"

struct ip4_interface ip4_interfaces[DEV_MAX];
struct ip4_fib *ip4_fib_main;

int ip4_main_init(char *err, size_t errlen)
{
	if (ip4_fib_main)
		return 0;
	struct ip4_fib_config c;
	ip4_fib_config_default(&c);
	ip4_fib_main = ip4_fib_create(&c, err, errlen);
	return ip4_fib_main ? 0 : -ENOMEM;
}

void ip4_main_free(void)
{
	ip4_nbr_flush(DEV_INDEX_INVALID, 0, 0);
	ip4_route_src_free();
	ip4_fib_destroy(ip4_fib_main);
	ip4_fib_main = NULL;
	memset(ip4_interfaces, 0, sizeof(ip4_interfaces));
}

void ip4_eth_rewrite(uint8_t rw[14], uint32_t if_index, const uint8_t dst_mac[6])
{
	const struct device *d = dev_by_index(if_index);
	memcpy(rw, dst_mac, 6);
	if (d)
		memcpy(rw + 6, d->mac, 6);
	else
		memset(rw + 6, 0, 6);
	rw[12] = 0x08;
	rw[13] = 0x00;
}

/* Point prefix/len at a fresh reference to adjacency (kind, if, nh): the
 * route's old adjacency, if any, loses its reference. */
static int route_set(uint32_t prefix_h, uint8_t len, enum ip4_adj_kind kind, uint32_t if_index, uint32_t nh_h,
		     char *err, size_t errlen)
{
	int adj = ip4_adj_add(ip4_fib_main, kind, if_index, nh_h);
	if (adj < 0) {
		snprintf(err, errlen, "adjacency table full");
		return adj;
	}
	uint32_t old;
	bool had = ip4_fib_get(ip4_fib_main, prefix_h, len, &old) == 0;
	int rc = ip4_fib_add(ip4_fib_main, prefix_h, len, (uint32_t)adj);
	if (rc) {
		ip4_adj_release(ip4_fib_main, (uint32_t)adj);
		snprintf(err, errlen, "FIB: %s", strerror(-rc));
		return rc;
	}
	if (had)
		ip4_adj_release(ip4_fib_main, old);
	return 0;
}

/* Remove prefix/len and release its adjacency. */
static int route_unset(uint32_t prefix_h, uint8_t len)
{
	uint32_t old;
	if (ip4_fib_get(ip4_fib_main, prefix_h, len, &old))
		return -ENOENT;
	int rc = ip4_fib_del(ip4_fib_main, prefix_h, len);
	if (rc == 0)
		ip4_adj_release(ip4_fib_main, old);
	return rc;
}

static const struct ip4_adj *route_adj(uint32_t prefix_h, uint8_t len)
{
	uint32_t r;
	if (!ip4_fib_main || ip4_fib_get(ip4_fib_main, prefix_h, len, &r))
		return NULL;
	return ip4_adj_get(ip4_fib_main, r);
}

int ip4_if_addr_add(uint32_t if_index, uint32_t addr, uint8_t plen, char *err, size_t errlen)
{
	if (if_index >= DEV_MAX || !dev_by_index(if_index) || plen > 32) {
		snprintf(err, errlen, "bad interface or prefix length");
		return -EINVAL;
	}
	struct ip4_interface *ifc = &ip4_interfaces[if_index];
	uint32_t mask = ip4_plen_mask(plen);
	uint32_t subnet_h = ntohl(addr & mask);
	for (uint32_t i = 0; i < ifc->n_addrs; i++)
		if (ifc->addrs[i].addr == addr) {
			snprintf(err, errlen, "address already on the interface");
			return -EEXIST;
		}
	if (ifc->n_addrs == IP4_IF_MAX_ADDRS) {
		snprintf(err, errlen, "at most %u addresses per interface", IP4_IF_MAX_ADDRS);
		return -ENOSPC;
	}
	int rc = ip4_main_init(err, errlen);
	if (rc)
		return rc;
	ip4_fib_quiesce(ip4_fib_main);
	const struct ip4_adj *a = route_adj(subnet_h, plen);
	if (plen < 32 && a && (a->kind != IP4_ADJ_GLEAN || a->if_index != if_index)) {
		snprintf(err, errlen, "the subnet is routed already (ip route del it, or its other address)");
		return -EEXIST;
	}
	a = route_adj(ntohl(addr), 32);
	if (a && a->kind == IP4_ADJ_LOCAL) {
		snprintf(err, errlen, "the address is another interface's");
		return -EEXIST;
	}
	rc = route_set(ntohl(addr), 32, IP4_ADJ_LOCAL, if_index, 0, err, errlen);
	if (rc)
		return rc;
	if (plen < 32) {
		rc = route_set(subnet_h, plen, IP4_ADJ_GLEAN, if_index, 0, err, errlen);
		if (rc) {
			route_unset(ntohl(addr), 32);
			return rc;
		}
	}
	ifc->addrs[ifc->n_addrs++] = (struct ip4_if_addr){ .addr = addr, .mask = mask, .plen = plen };
	return 0;
}

int ip4_if_addr_del(uint32_t if_index, uint32_t addr, uint8_t plen, char *err, size_t errlen)
{
	if (if_index >= DEV_MAX) {
		snprintf(err, errlen, "no such interface");
		return -ENOENT;
	}
	struct ip4_interface *ifc = &ip4_interfaces[if_index];
	uint32_t i = 0;
	while (i < ifc->n_addrs && (ifc->addrs[i].addr != addr || ifc->addrs[i].plen != plen))
		i++;
	if (i == ifc->n_addrs) {
		snprintf(err, errlen, "no such address on the interface");
		return -ENOENT;
	}
	uint32_t mask = ifc->addrs[i].mask;
	ip4_fib_quiesce(ip4_fib_main);
	/* Another address of this interface on the same subnet keeps it. */
	bool subnet_shared = false;
	for (uint32_t k = 0; k < ifc->n_addrs; k++)
		if (k != i && ifc->addrs[k].plen == plen && ((ifc->addrs[k].addr ^ addr) & mask) == 0)
			subnet_shared = true;
	if (!subnet_shared) {
		ip4_nbr_flush(if_index, addr, mask);
		if (plen < 32)
			route_unset(ntohl(addr & mask), plen);
	}
	route_unset(ntohl(addr), 32);
	ip4_route_src_reinstall(ntohl(addr), 32);
	if (!subnet_shared && plen < 32)
		ip4_route_src_reinstall(ntohl(addr & mask), plen);
	memmove(&ifc->addrs[i], &ifc->addrs[i + 1], (ifc->n_addrs - i - 1) * sizeof(ifc->addrs[0]));
	ifc->n_addrs--;
	return 0;
}

/* Routes out of one interface, gathered by a walk (the FIB must not change
 * during it) and removed after. */
struct if_routes {
	uint32_t if_index;
	uint32_t n, cap;
	struct ip4_route *r;
};

static int gather_if_route(const struct ip4_route *r, void *ctx)
{
	struct if_routes *l = ctx;
	const struct ip4_adj *a = ip4_adj_get(ip4_fib_main, r->result);
	if (a->kind != IP4_ADJ_REWRITE || a->if_index != l->if_index)
		return 0;
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 64;
		struct ip4_route *nr = realloc(l->r, cap * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		l->r = nr;
		l->cap = cap;
	}
	l->r[l->n++] = *r;
	return 0;
}

void ip4_if_clear(uint32_t if_index)
{
	char err[64];
	if (if_index >= DEV_MAX)
		return;
	while (ip4_interfaces[if_index].n_addrs) {
		const struct ip4_if_addr *a = &ip4_interfaces[if_index].addrs[0];
		ip4_if_addr_del(if_index, a->addr, a->plen, err, sizeof(err));
	}
	ip4_nbr_flush(if_index, 0, 0);
	if (!ip4_fib_main)
		return;
	ip4_route_src_forget_if(if_index);
	/* Routes via a next hop out of it: a later interface may reuse the
	 * index. Out of memory leaves the rest (they then go nowhere). */
	struct if_routes l = { .if_index = if_index };
	ip4_fib_walk(ip4_fib_main, gather_if_route, &l);
	if (l.n)
		ip4_fib_quiesce(ip4_fib_main);
	for (uint32_t i = 0; i < l.n; i++)
		route_unset(l.r[i].prefix, l.r[i].len);
	free(l.r);
}

/* An interface's new MAC (`set interface mac address`, linux-cp's TAP ->
 * port) becomes the source half of every rewrite out of it at once. */
static int new_source_mac(uint32_t adj_index, const struct ip4_adj *a, void *ctx)
{
	const struct device *d = ctx;
	if (a->kind != IP4_ADJ_REWRITE || a->if_index != d->index || a->rewrite_len < 12 ||
	    !memcmp(a->rewrite + 6, d->mac, 6))
		return 0;
	uint8_t rw[IP4_ADJ_REWRITE_MAX];
	memcpy(rw, a->rewrite, a->rewrite_len);
	memcpy(rw + 6, d->mac, 6);
	ip4_adj_set_rewrite(ip4_fib_main, adj_index, rw, a->rewrite_len);
	return 0;
}

static void ip4_if_changed(uint32_t if_index)
{
	struct device *d = dev_by_index(if_index);
	if (!ip4_fib_main || !d)
		return;
	ip4_nbr_lock(); /* the neighbours' process node writes rewrites too */
	ip4_adj_walk(ip4_fib_main, new_source_mac, d);
	ip4_nbr_unlock();
}

/* Interface deletion (drivers/device.h) clears its IPv4 state; a change
 * refreshes its rewrites. */
static void __attribute__((constructor)) ip4_if_register_delete_hook(void)
{
	dev_on_delete(ip4_if_clear);
	dev_on_change(ip4_if_changed);
}

/* The interface whose connected subnet holds nh (network order; the
 * longest such), or DEV_INDEX_INVALID. */
uint32_t ip4_connected_if(uint32_t nh)
{
	uint32_t best = DEV_INDEX_INVALID;
	int best_plen = -1;
	for (uint32_t i = 0; i < DEV_MAX; i++)
		for (uint32_t k = 0; k < ip4_interfaces[i].n_addrs; k++) {
			const struct ip4_if_addr *a = &ip4_interfaces[i].addrs[k];
			if (((a->addr ^ nh) & a->mask) == 0 && a->plen > best_plen) {
				best = i;
				best_plen = a->plen;
			}
		}
	return best;
}

/* Install prefix/len (host order) -> (kind, if_index, nh_h); a REWRITE via a
 * neighbour already resolved is complete from the start. */
int ip4_route_install(uint32_t prefix_h, uint8_t len, enum ip4_adj_kind kind, uint32_t if_index,
		      uint32_t nh_h, char *err, size_t errlen)
{
	int rc = route_set(prefix_h, len, kind, if_index, nh_h, err, errlen);
	if (rc || kind != IP4_ADJ_REWRITE)
		return rc;
	uint32_t r;
	ip4_fib_get(ip4_fib_main, prefix_h, len, &r);
	const struct ip4_adj *a = ip4_adj_get(ip4_fib_main, r);
	if (a->rewrite_len)
		return 0;
	uint8_t rw[14];
	bool known = false;
	ip4_nbr_lock();
	const struct ip4_nbr *n = ip4_nbr_lookup(if_index, htonl(nh_h));
	if (n && n->state == IP4_NBR_REACHABLE) {
		ip4_eth_rewrite(rw, if_index, n->mac);
		known = true;
	}
	ip4_nbr_unlock();
	if (known)
		ip4_adj_set_rewrite(ip4_fib_main, r, rw, sizeof(rw));
	return 0;
}

int ip4_route_uninstall(uint32_t prefix_h, uint8_t len)
{
	return route_unset(prefix_h, len);
}

const struct ip4_adj *ip4_route_adj(uint32_t prefix_h, uint8_t len)
{
	return route_adj(prefix_h, len);
}
