/* IPv6 forwarding state: the adjacency table, the main IPv6 FIB
 * (ip6_fib.h) and the routes in it, as the IPv4 family has them
 * (docs/architecture.md §3.14, §3.16).
 *
 * A route's FIB result is an adjacency index: 0 drop (IP6_FIB_MISS),
 * local (one of our addresses: ip6-local), glean (a connected prefix:
 * the destination is the next hop) or rewrite (towards a next hop on an
 * interface; resolved once the neighbour's MAC is known, when its 14-byte
 * Ethernet header is filled in). Adjacencies are shared by reference
 * count between routes. A neighbour learnt on a connected prefix gets a
 * /128 host route to a rewrite adjacency, so that packets to hosts on
 * the link take ip6-rewrite as routed ones do.
 *
 * ECMP is not there yet: one path per route (IPv4's load balances,
 * ip4_fib_lb.c, are tied to its FIB; TODO).
 *
 * Thread-safety: the datapath (ip6-lookup, ip6-rewrite, ip6-glean) reads
 * ip6_fib_main and ip6_adjs[] without locks. Routes change under the graph
 * barrier (control calls) or in the ip6-neighbor process node on thread
 * 0, with the neighbour lock held: one updater at a time, as the FIB asks.
 * A rewrite is filled before the release store of its length.
 */
#ifndef SLUICE_NODES_IP6_ROUTE_H
#define SLUICE_NODES_IP6_ROUTE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/ip6/ip6_addr.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_fib.h"
#include "nodes/ip6/ip6_neighbor.h"

#define IP6_ADJ_MAX 4096
#define IP6_ADJ_INDEX_DROP 0u

enum ip6_adj_kind {
	IP6_ADJ_DROP = 0,
	IP6_ADJ_LOCAL,
	IP6_ADJ_GLEAN,
	IP6_ADJ_REWRITE,
	IP6_ADJ_N_KIND,
};

struct ip6_adj {
	uint8_t kind;        /* enum ip6_adj_kind */
	uint8_t rewrite_len; /* 14 once resolved, else 0 (read with acquire) */
	uint8_t rewrite[14]; /* next hop's MAC, the interface's, 0x86dd */
	uint32_t if_index;
	uint32_t n_refs;
	struct in6_addr next_hop; /* rewrite: the neighbour */
};

extern struct ip6_adj ip6_adjs[IP6_ADJ_MAX];
extern struct ip6_fib *ip6_fib_main; /* NULL until the first address or route */

static inline const struct ip6_adj *ip6_adj_get(uint32_t adj_index)
{
	return &ip6_adjs[adj_index < IP6_ADJ_MAX ? adj_index : 0];
}

/* "drop", "local", "glean" or "rewrite". */
const char *ip6_adj_kind_name(uint8_t kind);

/* ---- control calls (barrier held, or before the datapath starts) ---- */

/* Create the main FIB if it is not there. 0 or -ENOMEM with err. */
int ip6_main_init(char *err, size_t errlen);

/* Routes, adjacencies and the FIB freed (shutdown, tests). */
void ip6_main_free(void);

/* Add or replace prefix/plen via next hop nh, on if_index or, with
 * DEV_INDEX_INVALID, on the interface whose connected prefix holds nh.
 * 0 or a negative errno with a reason in err; nothing changes on error
 * (-EPERM: a connected or local route). */
int ip6_route_add(const ip6_addr_a2 *prefix, uint8_t plen, const ip6_addr_a2 *nh, uint32_t if_index,
		  char *err, size_t errlen);

/* Delete prefix/plen. 0, -ENOENT or -EPERM (an address's route). */
int ip6_route_del(const ip6_addr_a2 *prefix, uint8_t plen, char *err, size_t errlen);

/* The local /128 and the connected prefix of an address (ip6_interface.c). */
int ip6_route_addr_add(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen);
void ip6_route_addr_del(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen);

/* ---- neighbours (neighbour lock held) ---- */

/* Apply every learnt MAC not yet applied: rewrites of the adjacencies via
 * it and its host route. Thread 0 or control path. Returns how many. */
uint32_t ip6_route_nbr_apply_all(void);

/* n is being forgotten: its rewrites cleared, its host route removed
 * (control path). */
void ip6_route_nbr_forget(const struct ip6_nbr *n);

/* n went STALE: the rewrites of the adjacencies via it are cleared (its
 * host route stays), so that its next use passes ip6-glean (RFC 4861
 * §7.3.3, ip6_neighbor.h). Thread 0 or control path. */
void ip6_route_nbr_unresolve(const struct ip6_nbr *n);

/* The Ethernet header for IPv6 from if_index to dst_mac. */
void ip6_eth_rewrite(uint8_t rw[14], uint32_t if_index, const uint8_t dst_mac[6]);

#endif
