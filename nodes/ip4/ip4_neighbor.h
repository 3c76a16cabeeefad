/* The IPv4 neighbour table: next hops resolved by ARP (MAC per interface and
 * address), and the few packets held for each next hop still unresolved.
 *
 * Who touches it:
 *   arp-input (any thread) learns MACs from ARP packets for us;
 *   ip4-arp (any thread) creates incomplete entries, holds packets, and
 *     sends requests;
 *   the ip4-neighbor process node (thread 0) applies what was learnt to the
 *     FIB (the rewrite of adjacencies via the neighbour, a /32 host route
 *     for a neighbour on a connected subnet), releases held packets to
 *     ip4-lookup and drops them once resolution times out;
 *   the CLI reads it and flushes entries when an address goes away.
 * The table has one spinlock, taken once per frame by those nodes (never by
 * the forwarding path: packets to resolved next hops never come here) and
 * by the control path.
 *
 * Timeouts are timestamp checks made by the process node every millisecond
 * or so, against ip4_nbr_now() (time_now_ns unless a test sets
 * ip4_nbr_clock).
 *
 * Aging: a learnt (dynamic) reachable entry lives ip4_nbr_reachable_timeout_ns
 * (300 s; `set ip neighbor-config age S`; 0: never) from the last ARP packet
 * that confirmed it. In its last IP4_NBR_PROBES request intervals the
 * process node re-ARPs it: a request unicast to the known MAC, at most once
 * per ip4_nbr_request_interval_ns; an answer (any ARP from it) renews it.
 * Unanswered, it is forgotten at the deadline like a flushed entry (its
 * rewrites cleared, its host route removed) and the next packet to it
 * resolves afresh. Static entries (`set ip neighbor ... static`) never age
 * and ARP does not change them; they stay until cleared by address
 * removal, interface deletion or `set ip neighbor` without `static`.
 */
#ifndef SLUICE_NODES_IP4_NEIGHBOR_H
#define SLUICE_NODES_IP4_NEIGHBOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

#define IP4_NBR_MAX 512 /* entries; a scan of all of them is the slow path's cost */
#define IP4_NBR_HOLD 4  /* packets held per unresolved next hop */
#define IP4_NBR_PROBES 3 /* re-ARP requests before a reachable entry ages out */

enum ip4_nbr_state {
	IP4_NBR_FREE = 0,
	IP4_NBR_INCOMPLETE, /* request sent, no answer yet */
	IP4_NBR_REACHABLE,  /* MAC known */
};

#define IP4_NBR_F_APPLY (1u << 0)      /* MAC learnt or changed: the process node applies it */
#define IP4_NBR_F_HOST_ROUTE (1u << 1) /* the process node added ip/32 via this neighbour */
#define IP4_NBR_F_STATIC (1u << 2)     /* configured: never ages, ARP does not change it */

struct ip4_nbr {
	uint32_t if_index;
	uint32_t ip; /* network order */
	uint8_t mac[6];
	uint8_t state; /* enum ip4_nbr_state */
	uint8_t flags;
	uint8_t n_held;
	uint8_t n_requests;
	uint32_t held[IP4_NBR_HOLD];
	uint64_t created_ns;
	uint64_t request_ns; /* last request (or re-ARP probe) sent */
	uint64_t updated_ns; /* last learnt or confirmed */
};

/* Tunables (tests shorten them). */
extern uint64_t ip4_nbr_resolve_timeout_ns; /* drop held packets after this; default 3 s */
extern uint64_t ip4_nbr_request_interval_ns; /* at most one request per entry per this; default 1 s */
extern uint64_t ip4_nbr_reachable_timeout_ns; /* dynamic entries age out; default 300 s, 0: never */
extern uint64_t (*ip4_nbr_clock)(void);        /* NULL: time_now_ns (tests set a simulated clock) */

/* The neighbour table's clock, in ns. */
static inline uint64_t ip4_nbr_now(void)
{
	return ip4_nbr_clock ? ip4_nbr_clock() : time_now_ns();
}

void ip4_nbr_lock(void);
void ip4_nbr_unlock(void);

/* With the lock held: the entry for (if_index, ip) or NULL. */
struct ip4_nbr *ip4_nbr_lookup(uint32_t if_index, uint32_t ip);

/* With the lock held: a new incomplete entry, or NULL when the table is full. */
struct ip4_nbr *ip4_nbr_create(uint32_t if_index, uint32_t ip, uint64_t now_ns);

/* With the lock held: the neighbour's MAC is mac (from an ARP packet).
 * A static entry is left as it is. */
void ip4_nbr_learn(struct ip4_nbr *n, const uint8_t mac[6], uint64_t now_ns);

/* An ARP request for ip out of if_index in a fresh buffer (tx_if set),
 * broadcast, or unicast to dst_mac when not NULL: its index, or
 * BUFFER_INVALID when the interface is gone or no buffer is free. */
uint32_t ip4_nbr_request_make(uint32_t if_index, uint32_t ip, const uint8_t *dst_mac);

/* Visit every entry in use, lock held (fn must not call back into the
 * table). A non-zero return stops the walk and is returned. */
int ip4_nbr_walk(int (*fn)(const struct ip4_nbr *n, void *ctx), void *ctx);

/* Control path (barrier held): forget the neighbours of if_index whose
 * address matches addr under mask (mask 0: all of them), with their host
 * routes, the rewrites of adjacencies via them, and their held packets. */
void ip4_nbr_flush(uint32_t if_index, uint32_t addr, uint32_t mask);

/* Control path (barrier held): ip on if_index is at mac, static or
 * dynamic (`set ip neighbor`); replaces what the entry held and is applied
 * to the FIB by the process node within a millisecond. 0, or -ENOSPC
 * (table full) with a reason in err. */
int ip4_nbr_set(uint32_t if_index, uint32_t ip, const uint8_t mac[6], bool is_static, char *err, size_t errlen);

/* Control path (barrier held): forget every dynamic entry, resolved or not,
 * as ip4_nbr_flush does (`clear ip neighbors`); static entries stay.
 * Returns how many were forgotten. */
uint32_t ip4_nbr_clear_dynamic(void);

/* Entries in use. */
uint32_t ip4_nbr_count(void);

#endif
