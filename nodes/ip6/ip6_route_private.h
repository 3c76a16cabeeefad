/* Shared by ip6_route.c (adjacencies, the FIB), ip6_lb.c (load balances)
 * and ip6_route_src.c (routes per source): adjacency references and the
 * one place that installs a route. Control path, barrier held. */
#ifndef SLUICE_NODES_IP6_IP6_ROUTE_PRIVATE_H
#define SLUICE_NODES_IP6_IP6_ROUTE_PRIVATE_H

#include "nodes/ip6/ip6_route.h"

/* A reference to (kind, if_index, nh): its index or -ENOSPC. A REWRITE
 * via a known neighbour gets its rewrite at once. */
int ip6_adj_ref(enum ip6_adj_kind kind, uint32_t if_index, const ip6_addr_a2 *nh);

/* A fresh LB adjacency naming LB slot l: index or -ENOSPC. */
int ip6_adj_new_lb(uint32_t l);

/* Drop one reference (the last frees it; an LB's frees its slot). */
void ip6_adj_release(uint32_t adj_index);

/* prefix/plen -> adj (a reference the FIB takes over; released on error).
 * 0 or a negative errno with err. */
int ip6_route_fib_set(const ip6_addr_a2 *prefix, uint8_t plen, int adj, char *err, size_t errlen);

/* Remove prefix/plen from the FIB (its adjacency released). */
void ip6_route_fib_unset(const ip6_addr_a2 *prefix, uint8_t plen);

/* The installed adjacency of prefix/plen, or -ENOENT. */
int ip6_route_adj_of(const ip6_addr_a2 *prefix, uint8_t plen);

/* True when prefix/plen is an address's own route: a local /128 or a
 * connected prefix of an interface's address. */
bool ip6_route_is_address(const ip6_addr_a2 *prefix, uint8_t plen);

/* The interface whose connected prefix holds nh, or DEV_INDEX_INVALID. */
uint32_t ip6_connected_if(const ip6_addr_a2 *nh);

/* prefix masked to plen bits. */
void ip6_prefix_mask(ip6_addr_a2 *p, uint8_t plen);

/* The best source's route for prefix/plen back into the FIB (an address
 * that covered it went). */
void ip6_route_src_reinstall(const ip6_addr_a2 *prefix, uint8_t plen);

/* Forget the sources' routes (ip6_main_free). */
void ip6_route_src_free(void);

#endif
