/* IPv6 adjacencies, the main FIB and its routes (see ip6_route.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_route.h"
#include "nodes/ip6/ip6_route_private.h"

struct ip6_adj ip6_adjs[IP6_ADJ_MAX];
struct ip6_fib *ip6_fib_main;
static uint32_t adj_hw = 1; /* adjacencies ever used; 0 is the drop one */

const char *ip6_adj_kind_name(uint8_t kind)
{
	static const char *const names[IP6_ADJ_N_KIND] = { "drop",	"local",       "glean",	 "rewrite",
							   "multipath", "blackhole", "unreachable", "prohibit" };
	return kind < IP6_ADJ_N_KIND ? names[kind] : "?";
}

void ip6_eth_rewrite(uint8_t rw[14], uint32_t if_index, const uint8_t dst_mac[6])
{
	const struct device *d = dev_by_index(if_index);
	memcpy(rw, dst_mac, 6);
	if (d)
		memcpy(rw + 6, d->mac, 6);
	else
		memset(rw + 6, 0, 6);
	rw[12] = 0x86;
	rw[13] = 0xdd;
}

/* ---- adjacencies ---- */

/* A reference to (kind, if_index, nh). Index or -ENOSPC. */
static int adj_add(enum ip6_adj_kind kind, uint32_t if_index, const ip6_addr_a2 *nh)
{
	static const struct in6_addr zero;
	if (!nh)
		nh = &zero;
	uint32_t free_i = 0;
	/* A linear scan: adjacencies change at control-plane pace. */
	for (uint32_t i = 1; i < adj_hw; i++) {
		struct ip6_adj *a = &ip6_adjs[i];
		if (!a->n_refs) {
			free_i = free_i ? free_i : i;
			continue;
		}
		if (a->kind == kind && a->if_index == if_index && ip6_addr_eq(&a->next_hop, nh)) {
			a->n_refs++;
			return (int)i;
		}
	}
	if (!free_i && adj_hw == IP6_ADJ_MAX)
		return -ENOSPC;
	uint32_t i = free_i ? free_i : adj_hw++;
	struct ip6_adj *a = &ip6_adjs[i];
	*a = (struct ip6_adj){ .kind = (uint8_t)kind, .if_index = if_index, .next_hop = *nh, .n_refs = 1 };
	return (int)i;
}

int ip6_adj_new_lb(uint32_t l)
{
	uint32_t i = 1;
	while (i < adj_hw && ip6_adjs[i].n_refs)
		i++;
	if (i == IP6_ADJ_MAX)
		return -ENOSPC;
	adj_hw += i == adj_hw;
	ip6_adjs[i] = (struct ip6_adj){ .kind = IP6_ADJ_LB, .if_index = l, .n_refs = 1 };
	return (int)i;
}

/* A rewrite adjacency via a neighbour already known gets its rewrite. */
static int adj_resolve(int i)
{
	if (i <= 0 || ip6_adjs[i].rewrite_len)
		return i;
	struct ip6_adj *a = &ip6_adjs[i];
	ip6_nbr_lock();
	const struct ip6_nbr *n = ip6_nbr_lookup(a->if_index, &a->next_hop);
	if (n && n->state != IP6_NBR_INCOMPLETE) {
		ip6_eth_rewrite(a->rewrite, a->if_index, n->mac);
		__atomic_store_n(&a->rewrite_len, 14, __ATOMIC_RELEASE);
	}
	ip6_nbr_unlock();
	return i;
}

void ip6_adj_release(uint32_t i)
{
	if (!i || i >= adj_hw || !ip6_adjs[i].n_refs || --ip6_adjs[i].n_refs)
		return;
	uint32_t lb = ip6_adjs[i].kind == IP6_ADJ_LB ? ip6_adjs[i].if_index : 0;
	ip6_adjs[i] = (struct ip6_adj){ 0 };
	if (lb)
		ip6_lb_free(lb);
}

int ip6_adj_ref(enum ip6_adj_kind kind, uint32_t if_index, const ip6_addr_a2 *nh)
{
	return adj_resolve(adj_add(kind, if_index, kind == IP6_ADJ_REWRITE ? nh : NULL));
}

/* Set (mac) or clear (NULL) the rewrite of every adjacency via (if, nh). */
static void set_rewrites(uint32_t if_index, const ip6_addr_a2 *nh, const uint8_t *mac)
{
	for (uint32_t i = 1; i < adj_hw; i++) {
		struct ip6_adj *a = &ip6_adjs[i];
		if (!a->n_refs || a->kind != IP6_ADJ_REWRITE || a->if_index != if_index || !ip6_addr_eq(&a->next_hop, nh))
			continue;
		if (!mac) {
			__atomic_store_n(&a->rewrite_len, 0, __ATOMIC_RELEASE);
			continue;
		}
		/* A MAC that changes under a reader may tear for one packet:
		 * as IPv4's (ip4_neighbor.c). */
		ip6_eth_rewrite(a->rewrite, if_index, mac);
		__atomic_store_n(&a->rewrite_len, 14, __ATOMIC_RELEASE);
	}
}

/* ---- the FIB ---- */

int ip6_main_init(char *err, size_t errlen)
{
	if (ip6_fib_main)
		return 0;
	struct ip6_fib_config c;
	ip6_fib_config_default(&c);
	ip6_fib_main = ip6_fib_create(&c, err, errlen);
	return ip6_fib_main ? 0 : -ENOMEM;
}

void ip6_main_free(void)
{
	ip6_nbr_flush(DEV_INDEX_INVALID, NULL, 0);
	ip6_fib_destroy(ip6_fib_main);
	ip6_fib_main = NULL;
	ip6_route_src_free();
	ip6_lb_reset();
	memset(ip6_adjs, 0, sizeof(ip6_adjs));
	adj_hw = 1;
}

/* The route prefix/plen's adjacency, or -ENOENT. */
int ip6_route_adj_of(const ip6_addr_a2 *prefix, uint8_t plen)
{
	uint32_t r;
	if (!ip6_fib_main || ip6_fib_get(ip6_fib_main, prefix, plen, &r))
		return -ENOENT;
	return (int)r;
}

/* prefix/plen -> adjacency adj (a reference the FIB takes over). */
int ip6_route_fib_set(const ip6_addr_a2 *prefix, uint8_t plen, int adj, char *err, size_t errlen)
{
	if (adj < 0) {
		snprintf(err, errlen, "adjacency table full (%u)", IP6_ADJ_MAX);
		return adj;
	}
	int old = ip6_route_adj_of(prefix, plen);
	ip6_fib_quiesce(ip6_fib_main); /* the barrier is held: no lookup in flight */
	int rc = ip6_fib_add(ip6_fib_main, prefix, plen, (uint32_t)adj);
	if (rc) {
		snprintf(err, errlen, "FIB full or bad prefix (%s)", strerror(-rc));
		ip6_adj_release((uint32_t)adj);
		return rc;
	}
	if (old >= 0)
		ip6_adj_release((uint32_t)old);
	return 0;
}

void ip6_route_fib_unset(const ip6_addr_a2 *prefix, uint8_t plen)
{
	int old = ip6_route_adj_of(prefix, plen);
	ip6_fib_quiesce(ip6_fib_main);
	if (old >= 0 && ip6_fib_del(ip6_fib_main, prefix, plen) == 0)
		ip6_adj_release((uint32_t)old);
}

bool ip6_route_is_address(const ip6_addr_a2 *prefix, uint8_t plen)
{
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct ip6_interface *ifc = ip6_if(i);
		for (uint32_t k = 0; ifc && k < ifc->n_addrs; k++) {
			const struct ip6_if_addr *x = &ifc->addrs[k];
			if ((plen == 128 && ip6_addr_eq(&x->addr, prefix)) ||
			    (plen == x->plen && ip6_prefix_match(&x->addr, prefix, plen)))
				return true;
		}
	}
	return false;
}

/* The interface whose connected prefix holds nh (the longest), or
 * DEV_INDEX_INVALID. */
uint32_t ip6_connected_if(const ip6_addr_a2 *nh)
{
	uint32_t best = DEV_INDEX_INVALID, best_len = 0;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct ip6_interface *ifc = ip6_if(i);
		for (uint32_t k = 0; ifc && k < ifc->n_addrs; k++) {
			const struct ip6_if_addr *x = &ifc->addrs[k];
			if (x->plen < 128 && x->plen >= best_len && ip6_prefix_match(&x->addr, nh, x->plen)) {
				best = i;
				best_len = x->plen;
			}
		}
	}
	return best;
}

void ip6_prefix_mask(ip6_addr_a2 *p, uint8_t plen)
{
	for (uint32_t i = 0; i < 16; i++) {
		uint32_t keep = plen >= 8 * (i + 1) ? 8 : plen > 8 * i ? plen - 8 * i : 0;
		p->s6_addr[i] &= (uint8_t)(0xff00u >> keep);
	}
}

int ip6_route_add(const ip6_addr_a2 *prefix, uint8_t plen, const ip6_addr_a2 *nh, uint32_t if_index,
		  char *err, size_t errlen)
{
	struct ip6_route_path p = { .kind = IP6_ADJ_REWRITE, .if_index = if_index, .next_hop = *nh };
	return ip6_route_src_set(IP6_SRC_CLI, prefix, plen, &p, 1, err, errlen);
}

int ip6_route_del(const ip6_addr_a2 *prefix, uint8_t plen, char *err, size_t errlen)
{
	return ip6_route_src_del(IP6_SRC_CLI, prefix, plen, err, errlen);
}

int ip6_route_addr_add(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen)
{
	int rc = ip6_main_init(err, errlen);
	if (rc || (rc = ip6_route_fib_set(addr, 128, adj_add(IP6_ADJ_LOCAL, if_index, NULL), err, errlen)))
		return rc;
	struct in6_addr p = *addr;
	ip6_prefix_mask(&p, plen);
	if (plen < 128 && (rc = ip6_route_fib_set(&p, plen, adj_add(IP6_ADJ_GLEAN, if_index, NULL), err, errlen)))
		ip6_route_fib_unset(addr, 128);
	return rc;
}

void ip6_route_addr_del(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen)
{
	if (!ip6_fib_main)
		return;
	ip6_route_fib_unset(addr, 128);
	ip6_route_src_reinstall(addr, 128);
	/* The connected prefix stays while another address of the interface
	 * is on it (called after the address left the interface). */
	const struct ip6_interface *ifc = ip6_if(if_index);
	for (uint32_t k = 0; ifc && k < ifc->n_addrs; k++)
		if (ifc->addrs[k].plen == plen && ip6_prefix_match(&ifc->addrs[k].addr, addr, plen))
			return;
	struct in6_addr p = *addr;
	ip6_prefix_mask(&p, plen);
	int adj = ip6_route_adj_of(&p, plen);
	if (plen < 128 && adj >= 0 && ip6_adjs[adj].kind == IP6_ADJ_GLEAN)
		ip6_route_fib_unset(&p, plen);
	ip6_route_src_reinstall(&p, plen); /* a source's route the address covered */
}

/* ---- neighbours ---- */

/* n's MAC to the adjacencies via it, and its /128 when it sits on a
 * connected prefix of its interface. Lock held. */
static void nbr_apply(struct ip6_nbr *n)
{
	set_rewrites(n->if_index, &n->ip, n->mac);
	if ((n->flags & IP6_NBR_F_HOST_ROUTE) || !ip6_fib_main || ip6_connected_if(&n->ip) != n->if_index)
		return;
	int adj = adj_add(IP6_ADJ_REWRITE, n->if_index, &n->ip);
	if (adj < 0)
		return;
	struct ip6_adj *a = &ip6_adjs[adj];
	if (!a->rewrite_len) { /* adj_resolve would take the lock we hold */
		ip6_eth_rewrite(a->rewrite, n->if_index, n->mac);
		__atomic_store_n(&a->rewrite_len, 14, __ATOMIC_RELEASE);
	}
	if (ip6_fib_add(ip6_fib_main, &n->ip, 128, (uint32_t)adj) == 0)
		n->flags |= IP6_NBR_F_HOST_ROUTE;
	else
		ip6_adj_release((uint32_t)adj);
}

uint32_t ip6_route_nbr_apply_all(void)
{
	ip6_nbr_lock();
	uint32_t k = ip6_nbr_take_pending(nbr_apply);
	ip6_nbr_unlock();
	return k;
}

void ip6_route_nbr_forget(const struct ip6_nbr *n)
{
	if (!ip6_fib_main)
		return;
	set_rewrites(n->if_index, &n->ip, NULL);
	int adj = ip6_route_adj_of(&n->ip, 128);
	if ((n->flags & IP6_NBR_F_HOST_ROUTE) && adj > 0 && ip6_adjs[adj].kind == IP6_ADJ_REWRITE &&
	    ip6_fib_del(ip6_fib_main, &n->ip, 128) == 0)
		ip6_adj_release((uint32_t)adj);
}

void ip6_route_nbr_unresolve(const struct ip6_nbr *n)
{
	set_rewrites(n->if_index, &n->ip, NULL);
}

/* ip6-neighbor: thread 0's updater of the adjacencies and host routes for
 * what ip6-nd learnt (the FIB takes one updater at a time; ip6-nd runs on
 * every worker). Every millisecond, work only when something changed. */
#define IP6_NBR_SCAN_NS 1000000ull
/* Nothing dirty: whoever sets ip6_nbr_dirty on the datapath pokes it
 * (graph_poke_processes), and the barrier does for the control plane; this
 * bound is a safety net only. */
#define IP6_NBR_IDLE_NS 100000000ull

static uint32_t ip6_neighbor_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (!atomic_load_explicit(&ip6_nbr_dirty, memory_order_acquire)) {
		node_suspend(rt, IP6_NBR_IDLE_NS);
		return 0;
	}
	node_suspend(rt, IP6_NBR_SCAN_NS);
	uint32_t k = ip6_route_nbr_apply_all();
	node_count_error(rt, 0, k);
	return 0;
}

static const char *const ip6_neighbor_errors[] = { "neighbour MAC applied to adjacencies" };

static const struct node_reg ip6_neighbor_node = {
	.name = "ip6-neighbor",
	.type = NODE_TYPE_PROCESS,
	.fn = ip6_neighbor_fn,
	.n_errors = 1,
	.error_strings = ip6_neighbor_errors,
};
NODE_REGISTER(ip6_neighbor_node)
