/* The IPv6 neighbour table (RFC 4861 §5.1's Neighbor Cache): MAC per
 * interface and address, learnt by ip6-nd or configured.
 *
 * What fills it so far (RFC 4861 §7.2.3 and §7.2.5):
 *   a Neighbor Solicitation for one of our addresses with a Source
 *     Link-Layer Address option creates the sender's entry as STALE, or
 *     updates it (STALE when the MAC changed);
 *   a Neighbor Advertisement updates an entry that exists (REACHABLE when
 *     solicited, else STALE on a new MAC; the Override flag decides
 *     whether a known MAC is replaced); one for an address without an
 *     entry is discarded (§7.2.5), counted by ip6-nd;
 *   `set ip neighbor NAME X:X::X MAC [static]`: static entries never change
 *     by ND.
 * ip6-glean creates INCOMPLETE entries for next hops it solicits (no
 * packets held yet); a learnt MAC is marked IP6_NBR_F_APPLY and given to
 * the adjacencies by the ip6-neighbor process node (ip6_route.h). The
 * DELAY and PROBE states, their timers and expiry come later.
 *
 * One spinlock, taken at most once per frame by ip6-nd and by the control
 * path; the forwarding path never takes it.
 */
#ifndef SLUICE_NODES_IP6_NEIGHBOR_H
#define SLUICE_NODES_IP6_NEIGHBOR_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/ip6/ip6_addr.h"
#include "base/util.h"
#include "nodes/ip6/ip6.h"

#define IP6_NBR_MAX 512 /* entries; a scan of all of them is the slow path's cost */

enum ip6_nbr_state {
	IP6_NBR_FREE = 0,
	IP6_NBR_INCOMPLETE, /* resolution under way (none started yet: ip6-rewrite) */
	IP6_NBR_REACHABLE,  /* confirmed: a solicited NA */
	IP6_NBR_STALE,      /* known MAC, not confirmed (RFC 4861 §7.3.2) */
};

#define IP6_NBR_F_STATIC (1u << 0)     /* configured: ND does not change it */
#define IP6_NBR_F_APPLY (1u << 1)      /* a MAC learnt that the adjacencies lack yet */
#define IP6_NBR_F_HOST_ROUTE (1u << 2) /* its /128 is in the FIB (ip6_route.h) */

struct ip6_nbr {
	uint32_t if_index;
	struct in6_addr ip;
	uint8_t mac[6];
	uint8_t state; /* enum ip6_nbr_state */
	uint8_t flags;
	bool is_router; /* the R flag of its last NA */
	uint64_t updated_ns; /* INCOMPLETE: when the last NS went (ip6-glean) */
	uint64_t created_ns;
};

/* An INCOMPLETE entry this old may be reused for another address when the
 * table is full: RFC 4861 §7.3.3 gives up after MAX_MULTICAST_SOLICIT (3)
 * solicitations RetransTimer (1 s) apart. */
#define IP6_NBR_INCOMPLETE_MAX_NS 3000000000ull

extern uint64_t (*ip6_nbr_clock)(void); /* NULL: time_now_ns (tests set a simulated clock) */

static inline uint64_t ip6_nbr_now(void)
{
	return ip6_nbr_clock ? ip6_nbr_clock() : time_now_ns();
}

void ip6_nbr_lock(void);
void ip6_nbr_unlock(void);

/* With the lock held: the entry for (if_index, ip) or NULL. */
struct ip6_nbr *ip6_nbr_lookup(uint32_t if_index, const ip6_addr_a2 *ip);

/* With the lock held: a new INCOMPLETE entry (in a free slot, else in an
 * INCOMPLETE one older than IP6_NBR_INCOMPLETE_MAX_NS), or NULL when the
 * table is full. */
struct ip6_nbr *ip6_nbr_create(uint32_t if_index, const ip6_addr_a2 *ip, uint64_t now_ns);

/* With the lock held: ND says ip is at mac (from an NS's source option,
 * or an NA's target option when mac is not NULL), RFC 4861 §7.2.3/§7.2.5.
 * solicited and override are the NA's flags (an NS: false, true). A
 * static entry is left as it is. */
void ip6_nbr_update(struct ip6_nbr *n, const uint8_t *mac, bool solicited, bool override, bool is_router,
		    uint64_t now_ns);

/* Visit every entry in use, lock held (fn must not call back into the
 * table). A non-zero return stops the walk and is returned. */
int ip6_nbr_walk(int (*fn)(const struct ip6_nbr *n, void *ctx), void *ctx);

/* Control path: forget the neighbours of if_index within prefix/plen
 * (plen 0: all of them; if_index DEV_INDEX_INVALID: every interface's). */
void ip6_nbr_flush(uint32_t if_index, const ip6_addr_a2 *prefix, uint8_t plen);

/* Control path: ip on if_index is at mac, static or not (`set ip
 * neighbor`; a dynamic one is REACHABLE). 0, or -ENOSPC with a reason in
 * err. */
int ip6_nbr_set(uint32_t if_index, const ip6_addr_a2 *ip, const uint8_t mac[6], bool is_static, char *err,
		size_t errlen);

/* Set when some entry has IP6_NBR_F_APPLY (ip6-neighbor polls it). */
extern atomic_bool ip6_nbr_dirty;

/* With the lock held: fn for every entry with IP6_NBR_F_APPLY and a MAC,
 * whose flag is then cleared. Returns how many. */
uint32_t ip6_nbr_take_pending(void (*fn)(struct ip6_nbr *n));

/* Make b (at its IPv6 header; a chain is freed) the ND message type
 * (ICMP6_ND_NS or ICMP6_ND_NA, RFC 4861 §4.3/§4.4) from src to dst about
 * target, with flags (an NA's, host order) and one link-layer address
 * option (ND_OPT_SOURCE_LLADDR or ND_OPT_TARGET_LLADDR) carrying mac: 72
 * bytes with hop limit 255 and the checksum set. */
void ip6_nd_msg_make(struct buffer *b, uint8_t type, uint32_t flags, const ip6_addr_a2 *src,
		     const ip6_addr_a2 *dst, const ip6_addr_a2 *target, uint8_t opt, const uint8_t mac[6]);

/* Entries in use. */
uint32_t ip6_nbr_count(void);

/* "reachable", "stale", "incomplete" or "static". */
const char *ip6_nbr_state_name(const struct ip6_nbr *n);

#endif
