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
 * A route with several paths (ECMP) points at an LB adjacency, a table of
 * buckets by flow hash (ip6_lb.h, the buckets nodes/fib_lb.c's as IPv4's).
 * Routes come from sources (ip6_route_src.c: the CLI, Linux through the
 * netlink listener), the best of each prefix installed, as IPv4's.
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
	IP6_ADJ_LB, /* a multipath route: if_index names an ip6_lbs[] slot (ip6_lb.h) */
	/* Routes that refuse, as Linux's of those types (ip6-lookup): */
	IP6_ADJ_BLACKHOLE, /* discarded silently, counted apart from "no route" */
	IP6_ADJ_UNREACH,   /* ICMPv6 destination unreachable, code 0 no route (RFC 4443 §3.1) */
	IP6_ADJ_PROHIBIT,  /* ICMPv6 destination unreachable, code 1 administratively prohibited */
	IP6_ADJ_N_KIND,
};

/* Whether a kind refuses the packet (drop, blackhole, unreachable,
 * prohibit): no interface, no next hop. */
static inline bool ip6_adj_kind_rejects(uint8_t kind)
{
	return kind == IP6_ADJ_DROP || kind >= IP6_ADJ_BLACKHOLE;
}

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

/* "drop", "local", "glean", "rewrite", "multipath", "blackhole",
 * "unreachable" or "prohibit". */
const char *ip6_adj_kind_name(uint8_t kind);

/* ---- control calls (barrier held, or before the datapath starts) ---- */

/* Create the main FIB if it is not there. 0 or -ENOMEM with err. */
int ip6_main_init(char *err, size_t errlen);

/* Routes, adjacencies and the FIB freed (shutdown, tests). */
void ip6_main_free(void);

/* The CLI source's route (ip6_route_src_set with one path): prefix/plen
 * via next hop nh, on if_index or, with DEV_INDEX_INVALID, on the
 * interface whose connected prefix holds nh. 0 or a negative errno with a
 * reason in err; nothing changes on error (-EPERM: a connected or local
 * route). */
int ip6_route_add(const ip6_addr_a2 *prefix, uint8_t plen, const ip6_addr_a2 *nh, uint32_t if_index,
		  char *err, size_t errlen);

/* Delete the CLI's route for prefix/plen. 0, -ENOENT or -EPERM (an address's route). */
int ip6_route_del(const ip6_addr_a2 *prefix, uint8_t plen, char *err, size_t errlen);

/* The local /128 and the connected prefix of an address (ip6_interface.c). */
int ip6_route_addr_add(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen);
void ip6_route_addr_del(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen);

/* ---- routes per source (ip6_route_src.c) ----
 *
 * Each prefix holds at most one route per source; the FIB holds the best:
 * an address's own local /128 or connected prefix over everything, then
 * the CLI's `ip route add`, then Linux's (the netlink listener,
 * nodes/lcp). One source never overwrites or removes another's route. The
 * same precedence as IPv4's (nodes/ip4/ip4_interface.h). */
enum ip6_route_src {
	IP6_SRC_CLI = 0,
	IP6_SRC_LINUX,
	IP6_SRC_N,
};

#define IP6_ROUTE_MAX_PATHS 16 /* FIB_LB_MAX_PATHS */

/* One path: REWRITE via next_hop on if_index (DEV_INDEX_INVALID: the
 * interface whose connected prefix holds it), GLEAN (a device route:
 * the destination itself is solicited on if_index), or a route's only
 * path of kind BLACKHOLE, UNREACH or PROHIBIT (no interface, no next hop). */
struct ip6_route_path {
	uint8_t kind;     /* IP6_ADJ_REWRITE, IP6_ADJ_GLEAN, or one of the three */
	uint8_t protocol; /* Linux's rtm_protocol (bgp 186, ospf 188...); 0 from the CLI */
	uint16_t weight;  /* 1..256 (0: 1); multipath only */
	uint32_t if_index;
	uint32_t gen;     /* the source's mark, for mark-and-sweep */
	uint32_t tag;     /* the source's own (Linux: the nexthop object, RTA_NH_ID) */
	struct in6_addr next_hop;
};

/* src's route for prefix/plen becomes exactly p[0..n) (1..16 paths; n > 1:
 * a load balance whose buckets keep the flows of the paths that stay), and
 * the best source's is installed. -EPERM: an address's route; -EINVAL,
 * -ENOSPC, -ENOMEM with a reason in err; nothing changes on error. */
int ip6_route_src_set(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
		      const struct ip6_route_path *p, uint32_t n, char *err, size_t errlen);

/* Add paths to src's route (the CLI's `ip route add` of a routed prefix,
 * as VPP's): a path already there takes the new weight. */
int ip6_route_src_path_add(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
			   const struct ip6_route_path *p, uint32_t n, char *err, size_t errlen);

/* Remove src's route; the next best comes back. 0, -ENOENT, -EPERM. */
int ip6_route_src_del(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen, char *err, size_t errlen);

/* The installed route's source (-1: none, or an address's) and its paths
 * (at most max into out; *n how many it has). */
int ip6_route_src_best(const ip6_addr_a2 *prefix, uint8_t plen, struct ip6_route_path *out, uint32_t max,
		       uint32_t *n);

/* Remove every route of src whose paths' gen differs from gen but agrees
 * with it under owner_mask (a listener's sweep); how many. */
uint32_t ip6_route_src_sweep(enum ip6_route_src src, uint32_t gen, uint32_t owner_mask);

/* The same in steps, each until deadline_ns (time_now_ns) or the end
 * (true): from bucket *bucket of a store of *mask + 1 (both 0 to begin; a
 * store grown since the last step begins again). *swept counts what went.
 * For a sweep in bounded barrier holds (linux-cp's listener). */
bool ip6_route_src_sweep_step(enum ip6_route_src src, uint32_t gen, uint32_t owner_mask, uint32_t *bucket,
			      uint32_t *mask, uint64_t deadline_ns, uint32_t *swept);

/* Call fn for each of src's routes (fn may set or delete the route it is
 * given, no other). How many. */
uint32_t ip6_route_src_each(enum ip6_route_src src,
			    void (*fn)(const struct in6_addr *prefix, uint8_t plen, const struct ip6_route_path *p,
				       uint32_t n, void *arg),
			    void *arg);

/* Remove path (its kind, next hop and interface; DEV_INDEX_INVALID: any)
 * from src's route; the route goes with its last path. 0, -ENOENT. */
int ip6_route_src_path_del(enum ip6_route_src src, const ip6_addr_a2 *prefix, uint8_t plen,
			   const struct ip6_route_path *path, char *err, size_t errlen);

/* Routes src holds. */
uint32_t ip6_route_src_count(enum ip6_route_src src);

/* "cli" or "linux". */
const char *ip6_route_src_name(enum ip6_route_src src);

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
