/* Duplicate Address Detection for sluice's own addresses (RFC 4862 §5.4),
 * run by the ip6-ra process node (thread 0): each address an interface
 * gains (the link-local one included) is probed once with a Neighbor
 * Solicitation from :: to its solicited-node group (DupAddrDetectTransmits
 * 1); a Neighbor Advertisement for it (ip6-nd, any thread) marks it
 * duplicated, otherwise it is preferred after RetransTimer (1 s).
 *
 * The address is used meanwhile (as RFC 4429's optimistic addresses are)
 * and stays in use when duplicated: `show ip6 interface` says so and the
 * operator decides (RFC 4862 §5.4.5 leaves the action to the node).
 */
#ifndef SLUICE_NODES_IP6_DAD_H
#define SLUICE_NODES_IP6_DAD_H

#include <stdbool.h>
#include <stdint.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"

#define IP6_DAD_RETRANS_NS (1000ull * 1000000) /* RetransTimer's default, RFC 4861 §10 */

enum ip6_dad_state {
	IP6_DAD_FREE = 0,
	IP6_DAD_NEW,       /* not probed yet (interface down, or just added) */
	IP6_DAD_TENTATIVE, /* probe sent, waiting RetransTimer */
	IP6_DAD_PREFERRED, /* nobody answered */
	IP6_DAD_DUPLICATE, /* another node advertised it */
};

struct ip6_dad_addr {
	struct in6_addr addr;
	uint8_t state; /* enum ip6_dad_state; written with release semantics */
	uint64_t sent_ns;
};

struct ip6_dad_if {
	struct ip6_dad_addr a[IP6_IF_MAX_ADDRS + 1];
};

extern struct ip6_dad_if ip6_dad_ifs[DEV_MAX];

/* DupAddrDetectTransmits (RFC 4862 §5.1): 1, or 0 for no DAD (tests that
 * count every frame sent). */
extern uint32_t ip6_dad_transmits;

/* Thread 0: track the interfaces' addresses, write due probes as buffers
 * to out (at most room), move tentative addresses on. Returns how many. */
uint32_t ip6_dad_run(uint64_t now, uint32_t *out, uint32_t room);

/* Any thread: an advertisement for target arrived on if_index; marks it
 * duplicated when it is one of the addresses being (or already) checked. */
void ip6_dad_conflict(uint32_t if_index, const ip6_addr_a2 *target);

/* The state of addr on if_index (IP6_DAD_FREE when not tracked). */
enum ip6_dad_state ip6_dad_state(uint32_t if_index, const ip6_addr_a2 *addr);

/* "tentative", "preferred", "duplicate" or "-". */
const char *ip6_dad_state_name(enum ip6_dad_state s);

#endif
