/* The IPv6 neighbour table (RFC 4861 §5.1's Neighbor Cache) and its
 * Neighbor Unreachability Detection (§7.3): MAC and state per interface
 * and address, learnt by ND or configured, and the few packets held for
 * each next hop still unresolved.
 *
 * States (§7.3.2) and who moves them:
 *   INCOMPLETE  ip6-glean made it for a packet (held, up to IP6_NBR_HOLD;
 *               on overflow the oldest is dropped, §7.2.2) and sent the
 *               first multicast NS; the ip6-nd-timer node retransmits
 *               every RetransTimer, MAX_MULTICAST_SOLICIT in all, then
 *               gives up: each held packet gets an ICMPv6 Destination
 *               Unreachable, code 3 (RFC 4443 §3.1), and the entry goes.
 *   REACHABLE   a solicited NA (§7.2.5), or `set ip neighbor` without
 *               static; after ReachableTime (BaseReachableTime x a
 *               uniform [0.5, 1.5], §6.3.2) it becomes STALE.
 *   STALE       a MAC not confirmed: learnt from an NS's source option
 *               (§7.2.3) or an unsolicited NA, or REACHABLE timed out.
 *               No timer; the adjacencies via it lose their rewrite so
 *               that the first packet sent to it passes ip6-glean, which
 *               sends it on the cached MAC and moves the entry to DELAY
 *               (§7.3.3: no per-packet check on the forwarding path).
 *   DELAY       DELAY_FIRST_PROBE_TIME for an upper-layer hint; then
 *               PROBE: unicast NS to the cached MAC every RetransTimer,
 *               MAX_UNICAST_SOLICIT in all; a solicited NA makes it
 *               REACHABLE, silence deletes it (its rewrites and host
 *               route go; the next packet resolves afresh).
 * Static entries (`set ip neighbor ... static`) have no timer and do not
 * change by ND.
 *
 * Timers: one per entry on thread 0's timer service (sched/timer.h). Any
 * thread changes an entry under the lock and asks for its timer with
 * ip6_nbr_timer_want(); the ip6-nd-timer process node (thread 0, every
 * millisecond) arms, moves or cancels it, so a deadline counts from that
 * moment (at most about a millisecond late); the expiry runs on thread 0.
 * An entry keeps a generation across reuse: an event for an earlier
 * occupant of the slot is ignored.
 *
 * A learnt MAC is marked IP6_NBR_F_APPLY and given to the adjacencies on
 * thread 0 (ip6_route.h); held packets are released to ip6-lookup then.
 *
 * One spinlock, taken at most once per frame by ip6-nd and ip6-glean and
 * by thread 0 and the control path; the forwarding path never takes it.
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
#define IP6_NBR_HOLD 4  /* packets held per unresolved next hop */

/* RFC 4861 §10's protocol constants. */
#define IP6_ND_MAX_MULTICAST_SOLICIT 3
#define IP6_ND_MAX_UNICAST_SOLICIT 3
#define IP6_ND_RETRANS_TIMER_NS 1000000000ull       /* RETRANS_TIMER */
#define IP6_ND_REACHABLE_TIME_NS 30000000000ull     /* REACHABLE_TIME (the base) */
#define IP6_ND_DELAY_FIRST_PROBE_NS 5000000000ull   /* DELAY_FIRST_PROBE_TIME */

/* The timings in use: the RFC's unless `set ip6 neighbor-config` or a
 * test changed them (control path, barrier held). */
struct ip6_nd_timing {
	uint64_t reachable_ns; /* BaseReachableTime */
	uint64_t retrans_ns;   /* RetransTimer */
	uint64_t delay_ns;     /* DELAY_FIRST_PROBE_TIME */
};
extern struct ip6_nd_timing ip6_nd_timing;

enum ip6_nbr_state {
	IP6_NBR_FREE = 0,
	IP6_NBR_INCOMPLETE, /* resolution under way: multicast NS, packets held */
	IP6_NBR_REACHABLE,  /* confirmed: a solicited NA */
	IP6_NBR_STALE,      /* known MAC, not confirmed (RFC 4861 §7.3.2) */
	IP6_NBR_DELAY,      /* used while STALE: waiting before probing */
	IP6_NBR_PROBE,      /* unicast NS sent, waiting for a solicited NA */
};

#define IP6_NBR_F_STATIC (1u << 0)     /* configured: ND does not change it */
#define IP6_NBR_F_APPLY (1u << 1)      /* a MAC learnt that the adjacencies lack yet */
#define IP6_NBR_F_HOST_ROUTE (1u << 2) /* its /128 is in the FIB (ip6_route.h) */
#define IP6_NBR_F_ARM (1u << 3)        /* its timer is to be (re)armed by ip6-nd-timer */

struct ip6_nbr {
	uint32_t if_index;
	struct in6_addr ip;
	uint8_t mac[6];
	uint8_t state; /* enum ip6_nbr_state */
	uint8_t flags;
	bool is_router; /* the R flag of its last NA */
	uint8_t n_held;
	uint8_t n_probes; /* NS sent in this INCOMPLETE or PROBE spell */
	uint32_t gen;     /* bumped when the slot is freed */
	uint32_t held[IP6_NBR_HOLD];
	uint64_t updated_ns; /* last state change or confirmation */
	uint64_t created_ns;
	uint64_t timer;          /* timer_handle_t on thread 0's service, 0: none */
	uint64_t timer_in_ns;    /* with IP6_NBR_F_ARM: fire this long from arming (0: cancel) */
};

/* An INCOMPLETE entry this old may be reused for another address when the
 * table is full (its held packets dropped): RFC 4861 §7.3.3 gives up after
 * MAX_MULTICAST_SOLICIT (3) solicitations RetransTimer (1 s) apart. */
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
 * (plen 0: all of them; if_index DEV_INDEX_INVALID: every interface's),
 * with their rewrites, host routes and held packets (freed). */
void ip6_nbr_flush(uint32_t if_index, const ip6_addr_a2 *prefix, uint8_t plen);

/* Control path: ip on if_index is at mac, static or not (`set ip
 * neighbor`; a dynamic one is REACHABLE). 0, or -ENOSPC with a reason in
 * err. */
int ip6_nbr_set(uint32_t if_index, const ip6_addr_a2 *ip, const uint8_t mac[6], bool is_static, char *err,
		size_t errlen);

/* Set when some entry has IP6_NBR_F_APPLY (ip6-neighbor polls it). */
extern atomic_bool ip6_nbr_dirty;

/* Set when some entry has IP6_NBR_F_ARM (ip6-nd-timer polls it). */
extern atomic_bool ip6_nbr_arm_dirty;

/* Set with IP6_NBR_F_APPLY: ip6-nd-timer looks for held packets to
 * release (ip6-neighbor may have applied the MAC first). */
extern atomic_bool ip6_nbr_release_dirty;

/* With the lock held: n's MAC (or, STALE, its absence) is to be given to
 * the adjacencies via it. */
void ip6_nbr_mark_apply(struct ip6_nbr *n);

/* With the lock held: fn for every entry with IP6_NBR_F_APPLY and a MAC,
 * whose flag is then cleared; a STALE one has its rewrites cleared instead
 * (ip6_route_nbr_unresolve), so that its next use passes ip6-glean.
 * Thread 0 or control path. Returns how many. */
uint32_t ip6_nbr_take_pending(void (*fn)(struct ip6_nbr *n));

/* With the lock held: n's timer to fire in_ns from now (0: none), armed by
 * ip6-nd-timer. */
void ip6_nbr_timer_want(struct ip6_nbr *n, uint64_t in_ns);

/* With the lock held: n enters state (its probe count reset, its timer
 * asked for: ReachableTime randomized, DELAY_FIRST_PROBE_TIME, or none). */
void ip6_nbr_set_state(struct ip6_nbr *n, enum ip6_nbr_state state, uint64_t now_ns);

/* With the lock held: b (at its IPv6 header) held on n, the oldest held
 * dropped into *dropped (BUFFER_INVALID: none) when IP6_NBR_HOLD are. */
void ip6_nbr_hold(struct ip6_nbr *n, uint32_t bi, uint32_t *dropped);

/* With the lock held: forget n (its rewrites and host route, thread 0 or
 * control path); its held packets go to out (room for IP6_NBR_HOLD),
 * their count returned. */
uint32_t ip6_nbr_forget(struct ip6_nbr *n, uint32_t *out);

/* With the lock held: the index of n in the table and its generation, as
 * a timer cookie, and the entry back from one (NULL when gone). */
uint64_t ip6_nbr_cookie(const struct ip6_nbr *n);
struct ip6_nbr *ip6_nbr_from_cookie(uint64_t cookie);
/* With the lock held: the entry in use at index (a timer's 32-bit cookie),
 * NULL when that slot is free. */
struct ip6_nbr *ip6_nbr_at(uint32_t index);

/* Visit every entry in use with the lock held by the caller; fn may
 * change or forget the entry. */
void ip6_nbr_each_locked(void (*fn)(struct ip6_nbr *n, void *ctx), void *ctx);

/* A Neighbor Solicitation for target out of if_index in a fresh buffer
 * (RFC 4861 §7.2.2): from the interface's address for target, our MAC in
 * a source link-layer option; to target's solicited-node group, or, with
 * dst_mac, unicast to target at dst_mac (NUD's probes, §7.3.3). Its
 * index (tx_if set, at the Ethernet header), or BUFFER_INVALID (no buffer,
 * no interface or no IPv6 source there). */
uint32_t ip6_nbr_ns_make(uint32_t if_index, const ip6_addr_a2 *target, const uint8_t *dst_mac);

/* Make b (at its IPv6 header; a chain is freed) the ND message type
 * (ICMP6_ND_NS or ICMP6_ND_NA, RFC 4861 §4.3/§4.4) from src to dst about
 * target, with flags (an NA's, host order) and one link-layer address
 * option (ND_OPT_SOURCE_LLADDR or ND_OPT_TARGET_LLADDR) carrying mac: 72
 * bytes with hop limit 255 and the checksum set. */
void ip6_nd_msg_make(struct buffer *b, uint8_t type, uint32_t flags, const ip6_addr_a2 *src,
		     const ip6_addr_a2 *dst, const ip6_addr_a2 *target, uint8_t opt, const uint8_t mac[6]);

/* Entries in use. */
uint32_t ip6_nbr_count(void);

/* "reachable", "stale", "delay", "probe", "incomplete" or "static". */
const char *ip6_nbr_state_name(const struct ip6_nbr *n);

#endif
