/* IPv6 state of each interface: whether IPv6 is enabled on it, its
 * link-local address and its global (or unique-local) addresses, as VPP
 * keeps them. IPv6 is enabled by the first address or by
 * `enable ip6 interface NAME`; the link-local address is then made from
 * the MAC (modified EUI-64, RFC 4291 §2.5.1 and appendix A) unless one
 * was configured (a fe80::/10 address given to ip6_if_addr_add).
 *
 * The datapath (ip6-input, ip6-local, ip6-nd, icmp6-echo) reads
 * ip6_interfaces[] without locks; every control call here runs with the
 * datapath parked (graph barrier) or before it starts, one at a time.
 *
 * Routes for the addresses (a local /128, a connected prefix) go into
 * the main IPv6 FIB (nodes/ip6/ip6_route.h) as they are added; ip6-input
 * still decides "for us" from these tables (a scan), ip6-lookup routes
 * the rest.
 */
#ifndef SLUICE_NODES_IP6_INTERFACE_H
#define SLUICE_NODES_IP6_INTERFACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_route.h"

#define IP6_IF_MAX_ADDRS 8

struct ip6_if_addr {
	struct in6_addr addr;
	uint8_t plen;
};

struct ip6_interface {
	bool enabled;
	bool ll_configured; /* the link-local address was given, not made from the MAC */
	struct in6_addr link_local;
	uint32_t n_addrs;
	struct ip6_if_addr addrs[IP6_IF_MAX_ADDRS]; /* global and unique-local; first: the primary */
};

extern struct ip6_interface ip6_interfaces[DEV_MAX];

static inline const struct ip6_interface *ip6_if(uint32_t if_index)
{
	return if_index < DEV_MAX && ip6_interfaces[if_index].enabled ? &ip6_interfaces[if_index] : NULL;
}

/* True when addr is one of if_index's own unicast addresses (link-local
 * included). */
static inline bool ip6_if_is_local(uint32_t if_index, const ip6_addr_a2 *addr)
{
	const struct ip6_interface *ifc = ip6_if(if_index);
	if (!ifc)
		return false;
	if (ip6_addr_eq(&ifc->link_local, addr))
		return true;
	for (uint32_t i = 0; i < ifc->n_addrs; i++)
		if (ip6_addr_eq(&ifc->addrs[i].addr, addr))
			return true;
	return false;
}

/* True when the link-scope multicast addr is one if_index listens to:
 * all-nodes, all-routers, or the solicited-node address of one of its own
 * (RFC 4291 §2.8: a router joins these), and the MLDv2 routers' group
 * (so that reports reach ip6-local, which counts them). */
static inline bool ip6_if_is_joined(uint32_t if_index, const ip6_addr_a2 *addr)
{
	const struct ip6_interface *ifc = ip6_if(if_index);
	if (!ifc)
		return false;
	if (ip6_addr_is_all_nodes(addr) || ip6_addr_is_all_routers(addr) || ip6_addr_is_mld2_routers(addr))
		return true;
	if (!ip6_addr_is_solicited_node(addr))
		return false;
	if (!memcmp(ifc->link_local.s6_addr + 13, addr->s6_addr + 13, 3))
		return true;
	for (uint32_t i = 0; i < ifc->n_addrs; i++)
		if (!memcmp(ifc->addrs[i].addr.s6_addr + 13, addr->s6_addr + 13, 3))
			return true;
	return false;
}

/* True when addr is one of sluice's own unicast addresses as seen from
 * rx_if: any interface's global address (the weak host model: its local
 * /128 in the main FIB, one lookup), a link-local one only of rx_if. (A
 * scan of every interface's addresses cost ~750 instructions per packet
 * with DEV_MAX 64: bench/ip6/path.c under callgrind.) */
static inline bool ip6_is_for_us(uint32_t rx_if, const ip6_addr_a2 *addr)
{
	if (ip6_if_is_local(rx_if, addr))
		return true;
	if (ip6_addr_is_link_local(addr) || !ip6_fib_main)
		return false;
	return ip6_adj_get(ip6_fib_lookup(ip6_fib_main, addr))->kind == IP6_ADJ_LOCAL;
}

/* Put an Ethernet header for IPv6 to dst_mac in front of b (at its IPv6
 * header) and send it out of the interface it came in on: replies on the
 * link (NA, echo reply, ICMPv6 errors) until ip6-lookup routes them. */
static inline void ip6_eth_push(struct buffer *b, const uint8_t dst_mac[6])
{
	const struct device *d = dev_by_index(b->rx_if);
	buffer_advance(b, -14);
	uint8_t *eth = buffer_data(b);
	memmove(eth, dst_mac, 6);
	if (d)
		memcpy(eth + 6, d->mac, 6);
	else
		memset(eth + 6, 0, 6);
	eth[12] = 0x86;
	eth[13] = 0xdd;
	b->tx_if = b->rx_if;
}

/* The source for a packet sluice sends out of if_index to peer (RFC 6724
 * rule 2 in short: the link-local address to a link-local or link-scope
 * multicast peer, else the address whose prefix holds peer, else the
 * primary, else the link-local one). False when IPv6 is not enabled. */
bool ip6_if_source_for(uint32_t if_index, const ip6_addr_a2 *peer, ip6_addr_a2 *src);

/* ---- control calls (barrier held) ---- */

/* Enable IPv6 on the interface: its link-local address from the MAC.
 * Idempotent. 0 or -EINVAL (no such interface). */
int ip6_if_enable(uint32_t if_index, char *err, size_t errlen);

/* Add addr/plen (enabling IPv6 first). A link-local address replaces the
 * one made from the MAC. 0 or a negative errno (-EEXIST: on this or
 * another interface; -ENOSPC; -EINVAL: multicast, unspecified, loopback
 * or IPv4-embedded, a bad length) with a reason in err; nothing changes
 * on error. */
int ip6_if_addr_add(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen);

/* Remove addr/plen and the neighbours learnt on its prefix (a configured
 * link-local address goes back to the one from the MAC). IPv6 stays
 * enabled. 0 or -ENOENT. */
int ip6_if_addr_del(uint32_t if_index, const ip6_addr_a2 *addr, uint8_t plen, char *err, size_t errlen);

/* Forget all of the interface's IPv6 state (it is being deleted). */
void ip6_if_clear(uint32_t if_index);

/* "2001:db8::1/64" into addr and plen; plen_optional lets "2001:db8::1"
 * through as /128. */
bool ip6_parse_prefix(const char *w, ip6_addr_a2 *addr, uint8_t *plen, bool plen_optional);

#endif
