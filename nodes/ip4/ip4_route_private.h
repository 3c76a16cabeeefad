/* Shared by ip4_interface.c (addresses, the FIB instance) and
 * ip4_route_src.c (routes per source): the one place that installs a route
 * into the FIB, and the hooks the address code calls so that routes of
 * other sources come back when an address stops covering their prefix.
 * Control path, barrier held. Prefixes in host order. */
#ifndef SLUICE_NODES_IP4_ROUTE_PRIVATE_H
#define SLUICE_NODES_IP4_ROUTE_PRIVATE_H

#include "nodes/ip4/ip4_interface.h"

/* prefix/len -> a fresh adjacency (kind, if_index, nh_h); a REWRITE to a
 * resolved neighbour gets its rewrite at once. 0 or a negative errno. */
int ip4_route_install(uint32_t prefix_h, uint8_t len, enum ip4_adj_kind kind, uint32_t if_index,
		      uint32_t nh_h, char *err, size_t errlen);
int ip4_route_uninstall(uint32_t prefix_h, uint8_t len);

/* prefix/len -> a load balance over n (2..IP4_LB_MAX_PATHS) REWRITE or
 * GLEAN paths; an installed load balance is updated in place (the flows of
 * paths that stay keep their path). 0 or a negative errno. */
int ip4_route_install_multi(uint32_t prefix_h, uint8_t len, const struct ip4_route_path *p, uint32_t n,
			    char *err, size_t errlen);

/* The installed route's adjacency, or NULL. */
const struct ip4_adj *ip4_route_adj(uint32_t prefix_h, uint8_t len);

/* The interface whose connected subnet holds nh (network order). */
uint32_t ip4_connected_if(uint32_t nh);

/* Install the best source's route for prefix/len, if any (an address
 * that covered it went away). */
void ip4_route_src_reinstall(uint32_t prefix_h, uint8_t len);

/* Forget every source's route via if_index (it is being deleted). */
void ip4_route_src_forget_if(uint32_t if_index);

/* Entries the store's incremental rehash moved, ever: each update moves
 * at most a few buckets' worth (tests bound it). */
uint64_t ip4_route_src_rehashed(void);

/* Free the store (ip4_main_free). */
void ip4_route_src_free(void);

#endif
