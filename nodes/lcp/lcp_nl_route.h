/* Private to the netlink listener (lcp_nl_map.c, lcp_nl_route.c): the
 * book of the Linux routes the listeners installed. Barrier held.
 *
 * Why a book beside the FIB's route store: the sweep after a resync walks
 * it in steps, each a short barrier hold, rather than the whole store in
 * one; and it indexes routes by the kernel's nexthop object id (RTA_NH_ID),
 * so that a nexthop object replaced or deleted changes exactly the routes
 * through it: the kernel changes those without a route message of their
 * own (ip-nexthop(8): routes "reference" the object). */
#ifndef SLUICE_NODES_LCP_NL_ROUTE_H
#define SLUICE_NODES_LCP_NL_ROUTE_H

#include <stdbool.h>
#include <stdint.h>

/* One Linux route as the book keeps it. */
struct lcp_nl_route {
	uint32_t dst;  /* network order */
	uint32_t nhid; /* the nexthop object it goes through, 0: none */
	uint32_t gen;  /* the dump generation that last showed it (lcp_nl_ctx) */
	uint8_t plen, protocol, type;
};

/* Record (or update) dst/plen after sluice installed it. 0 or -ENOMEM. */
int lcp_nl_route_note(const struct lcp_nl_route *r);

/* Forget dst/plen (deleted, or swept). */
void lcp_nl_route_forget(uint32_t dst, uint8_t plen);

/* Call fn for each route through nexthop object nhid; fn may forget the
 * route it is given. How many. */
uint32_t lcp_nl_route_each_nh(uint32_t nhid, void (*fn)(const struct lcp_nl_route *r, void *arg), void *arg);

/* One step of the sweep of gen's listener: routes of its owner whose gen
 * differs, from *cursor until the end (true) or deadline_ns (false; *cursor
 * is where to go on). Each is deleted from sluice and forgotten; *swept
 * counts them. */
bool lcp_nl_route_sweep_step(uint32_t gen, uint32_t owner_mask, uint32_t *cursor, uint64_t deadline_ns,
			     uint32_t *swept);

/* Remove the addresses Linux gave that gen's dump did not show (the
 * sweep's last step; lcp_nl_map.c keeps them). How many. */
uint32_t lcp_nl_sweep_addrs(uint32_t gen);

/* Records the book's incremental rehash moved, ever (tests bound it per
 * note). */
uint64_t lcp_nl_route_rehashed(void);

/* Outside the barrier, before a batch: fault in the FIB pages the route
 * of nlh (an RTM_NEWROUTE, else nothing) will write (ip4_fib_prefault),
 * so that its hold pays no page fault. */
struct nlmsghdr;
void lcp_nl_route_prefault(const struct nlmsghdr *nlh);

/* Empty the book (lcp_nl_map_reset). */
void lcp_nl_route_reset(void);

#endif
