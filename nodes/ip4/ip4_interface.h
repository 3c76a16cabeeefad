/* IPv4 state outside the nodes: the FIB instance they look up, the
 * addresses configured on each interface, and the control calls that keep
 * the two consistent (`set interface ip address` adds a local /32 and a
 * connected glean route; `ip route add` makes an adjacency via a next hop).
 * The interface's MAC is struct device's.
 *
 * Addresses in this API are in network byte order (as on the wire and in
 * the nodes); the FIB's own API is in host order.
 *
 * Thread-safety: the datapath reads ip4_fib_main and ip4_interfaces[]
 * without locks. Every control call here runs with the datapath parked
 * (graph barrier) or before it starts, one at a time; each begins with
 * ip4_fib_quiesce as the FIB's grace-period rule asks. The one other FIB
 * updater is the ip4-neighbor process node on thread 0, which never runs
 * while the barrier is held.
 */
#ifndef SLUICE_NODES_IP4_INTERFACE_H
#define SLUICE_NODES_IP4_INTERFACE_H

#include <arpa/inet.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"
#include "nodes/ip4/ip4_fib.h"

#define IP4_IF_MAX_ADDRS 8

struct ip4_if_addr {
	uint32_t addr; /* network order */
	uint32_t mask; /* network order, from plen */
	uint8_t plen;
};

struct ip4_interface {
	uint32_t n_addrs;
	struct ip4_if_addr addrs[IP4_IF_MAX_ADDRS]; /* first: the primary, used as ICMP source */
};

extern struct ip4_interface ip4_interfaces[DEV_MAX];

/* The FIB the nodes use; NULL until IPv4 is first configured (the nodes
 * then drop everything as unrouted). */
extern struct ip4_fib *ip4_fib_main;

/* Network-order mask of a prefix length (0..32). */
static inline uint32_t ip4_plen_mask(uint8_t plen)
{
	return plen ? htonl(~0u << (32 - plen)) : 0;
}

/* True when addr is one of if_index's own addresses. */
static inline bool ip4_if_is_local(uint32_t if_index, uint32_t addr)
{
	if (if_index >= DEV_MAX)
		return false;
	const struct ip4_interface *ifc = &ip4_interfaces[if_index];
	for (uint32_t i = 0; i < ifc->n_addrs; i++)
		if (ifc->addrs[i].addr == addr)
			return true;
	return false;
}

/* The interface's address on the subnet of `peer`, else its primary
 * address, else 0. Source of ARP requests and ICMP errors. */
static inline uint32_t ip4_if_source_for(uint32_t if_index, uint32_t peer)
{
	if (if_index >= DEV_MAX || !ip4_interfaces[if_index].n_addrs)
		return 0;
	const struct ip4_interface *ifc = &ip4_interfaces[if_index];
	for (uint32_t i = 0; i < ifc->n_addrs; i++)
		if (((ifc->addrs[i].addr ^ peer) & ifc->addrs[i].mask) == 0)
			return ifc->addrs[i].addr;
	return ifc->addrs[0].addr;
}

/* True when addr is the broadcast address of one of the interface's
 * subnets (shorter than /31). */
static inline bool ip4_if_is_subnet_broadcast(uint32_t if_index, uint32_t addr)
{
	if (if_index >= DEV_MAX)
		return false;
	const struct ip4_interface *ifc = &ip4_interfaces[if_index];
	for (uint32_t i = 0; i < ifc->n_addrs; i++) {
		const struct ip4_if_addr *a = &ifc->addrs[i];
		if (a->plen < 31 && ((a->addr ^ addr) & a->mask) == 0 && (addr | a->mask) == 0xffffffffu)
			return true;
	}
	return false;
}

/* ---- control calls (barrier held) ---- */

/* Create the FIB if there is none. 0 or a negative errno, reason in err. */
int ip4_main_init(char *err, size_t errlen);

/* Release everything: held packets, neighbours, routes, the FIB, every
 * address. After the datapath has stopped (shutdown, tests). */
void ip4_main_free(void);

/* Add addr/plen to the interface with its local /32 and, below /32, its
 * connected glean route. Returns 0 or a negative errno (-EEXIST: the
 * address is there, or another interface has that subnet; -ENOSPC), with a
 * reason in err; nothing changes on error. */
int ip4_if_addr_add(uint32_t if_index, uint32_t addr, uint8_t plen, char *err, size_t errlen);

/* Remove addr/plen, its routes and the neighbours learnt on its subnet.
 * Returns 0 or -ENOENT. */
int ip4_if_addr_del(uint32_t if_index, uint32_t addr, uint8_t plen, char *err, size_t errlen);

/* Forget every address of the interface, its neighbours and the routes via
 * next hops out of it (it is being deleted: dev_delete calls this through
 * its delete hook). */
void ip4_if_clear(uint32_t if_index);

/* ---- routes per source ----
 *
 * Each prefix holds at most one route per source; the FIB holds the best:
 * an address's own connected/local route over everything, then the CLI's
 * `ip route add`, then Linux's (the netlink listener, nodes/lcp). One source
 * never overwrites or removes another's route: deleting the CLI's route
 * brings Linux's back, and Linux deleting its own leaves the CLI's. */
enum ip4_route_src {
	IP4_SRC_CLI = 0,
	IP4_SRC_LINUX,
	IP4_SRC_N,
};

/* One path of a route. A route is one path of any kind, or 2 to
 * IP4_LB_MAX_PATHS paths of kinds REWRITE and GLEAN (ECMP: a load balance
 * in the FIB, weights kept). */
struct ip4_route_path {
	uint8_t kind;      /* IP4_ADJ_REWRITE (via next_hop), IP4_ADJ_GLEAN (a device
	                    * route: the destination is the next hop, by ARP),
	                    * IP4_ADJ_BLACKHOLE (IP4_ADJ_DROP means the same),
	                    * IP4_ADJ_UNREACH, IP4_ADJ_PROHIBIT */
	uint8_t protocol;  /* Linux's rtm_protocol (RTPROT_STATIC, RTPROT_BGP...); 0 from the CLI */
	uint16_t weight;   /* 1..256 (0: 1); multipath only */
	uint32_t next_hop; /* network order (REWRITE) */
	uint32_t if_index; /* REWRITE, GLEAN */
	uint32_t gen;      /* the source's mark, for mark-and-sweep */
};

/* Add or replace src's route for prefix/plen (network order) and install
 * the best. -EPERM when the prefix is an address's connected or local
 * route, -EINVAL (bad length, interface), -ENOSPC; reason in err. */
int ip4_route_src_add(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *p,
		      char *err, size_t errlen);

/* The same with n paths (1..IP4_LB_MAX_PATHS): src's route becomes exactly
 * these (a multipath route's buckets keep the flows of paths that stay). */
int ip4_route_src_set(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *p,
		      uint32_t n, char *err, size_t errlen);

/* Add paths to src's route (VPP's `ip route add` of a routed prefix adds
 * paths): a path already there (same kind, next hop and interface) takes
 * the new weight; a route kind (blackhole...) replaces, and is replaced by,
 * next hops. Creates the route when src has none. */
int ip4_route_src_path_add(enum ip4_route_src src, uint32_t prefix, uint8_t plen, const struct ip4_route_path *p,
			   uint32_t n, char *err, size_t errlen);

/* Remove one path (next_hop network order, 0 for a device path; if_index
 * DEV_INDEX_INVALID: any interface) of src's route; the route goes with
 * its last path. -ENOENT when there is no such path. */
int ip4_route_src_path_del(enum ip4_route_src src, uint32_t prefix, uint8_t plen, uint32_t next_hop,
			   uint32_t if_index, char *err, size_t errlen);

/* The paths of the route installed for prefix/plen (host order) from the
 * sources' store: how many (at most max copied), 0 when none is. */
uint32_t ip4_route_src_paths(uint32_t prefix_h, uint8_t plen, struct ip4_route_path *out, uint32_t max);

/* Remove src's route; the next best, if any, is installed. -ENOENT when
 * src has none there. */
int ip4_route_src_del(enum ip4_route_src src, uint32_t prefix, uint8_t plen, char *err, size_t errlen);

/* Which source's route is installed for prefix/plen (host order), with its
 * (first) path: -1 when none is (no route, or an address's). */
int ip4_route_src_best(uint32_t prefix_h, uint8_t plen, struct ip4_route_path *p);

/* True when prefix/len (host order) is an address's own route (local /32,
 * connected subnet) rather than a source's. */
bool ip4_route_is_address(uint32_t prefix_h, uint8_t len);

/* Remove every route of src whose gen differs from gen but agrees with it
 * under owner_mask (the sweep of one listener's resync); how many. */
uint32_t ip4_route_src_sweep(enum ip4_route_src src, uint32_t gen, uint32_t owner_mask);

/* Routes src holds. */
uint32_t ip4_route_src_count(enum ip4_route_src src);

/* rtm_protocol's name as `ip route` shows it ("bgp", "ospf", "static",
 * "kernel", "boot", ...; "" for 0, "other" for values without one). */
const char *ip4_route_protocol_name(uint8_t protocol);

/* "cli" or "linux". */
const char *ip4_route_src_name(enum ip4_route_src src);

/* The CLI's route: prefix/plen via next_hop out of if_index
 * (DEV_INDEX_INVALID: the interface whose connected subnet holds next_hop).
 * Returns 0 or a negative errno with a reason in err. */
int ip4_route_add(uint32_t prefix, uint8_t plen, uint32_t next_hop, uint32_t if_index, char *err, size_t errlen);

/* Remove the CLI's route. -ENOENT (none), -EPERM (a connected or local
 * route: remove the address instead). */
int ip4_route_del(uint32_t prefix, uint8_t plen, char *err, size_t errlen);

/* The 14-byte Ethernet header for IPv4 from the interface to dst_mac. */
void ip4_eth_rewrite(uint8_t rw[14], uint32_t if_index, const uint8_t dst_mac[6]);

#endif
