/* ip6-glean: packets whose next hop's MAC is not known yet (a connected
 * prefix's glean adjacency: the destination is the next hop; or a route's
 * rewrite adjacency not resolved). RFC 4861 §7.2.2: the next hop gets an
 * INCOMPLETE neighbour entry and a Neighbor Solicitation to its
 * solicited-node multicast address, from the outgoing interface's address
 * (ip6_if_source_for) with our MAC in a Source Link-Layer Address option;
 * at most one per RetransTimer (RFC 4861 §10: 1 s) per neighbour. The
 * solicitation is built in the packet's buffer, so the packet is not held:
 * it is dropped under "NS sent" (holding a bounded few per neighbour, as
 * ip4-arp does, is a later step, as are the retries' limit, ICMPv6
 * address unreachable, RFC 4443 §3.1 code 3, and the entries' expiry).
 * The NA that answers reaches ip6-nd, which fills the entry; the
 * ip6-neighbor process node then gives the MAC to the adjacencies.
 *
 * The neighbour lock is taken once per frame (a slow path).
 *
 * Next nodes: error-drop, interface-output.
 * Errors: NS sent; resolution in progress; resolved, not applied yet;
 *   neighbour table full; no source address.
 * CLI: `show errors`, `show ip6 neighbors`.
 */
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"

#define IP6_ND_RETRANS_NS 1000000000ull /* RFC 4861 §10 RETRANS_TIMER */

enum ip6_glean_next {
	IP6_GLEAN_NEXT_DROP = 0,
	IP6_GLEAN_NEXT_OUTPUT,
	IP6_GLEAN_N_NEXT,
};

enum ip6_glean_error {
	IP6_GLEAN_ERROR_NS_SENT = 0,
	IP6_GLEAN_ERROR_PENDING,
	IP6_GLEAN_ERROR_NOT_APPLIED,
	IP6_GLEAN_ERROR_TABLE_FULL,
	IP6_GLEAN_ERROR_NO_SOURCE,
	IP6_GLEAN_N_ERROR,
};

static const char *const ip6_glean_error_strings[IP6_GLEAN_N_ERROR] = {
	[IP6_GLEAN_ERROR_NS_SENT] = "next hop unresolved: NS sent (packet dropped)",
	[IP6_GLEAN_ERROR_PENDING] = "next hop unresolved: resolution in progress (dropped)",
	[IP6_GLEAN_ERROR_NOT_APPLIED] = "next hop resolved, adjacency not updated yet (dropped)",
	[IP6_GLEAN_ERROR_TABLE_FULL] = "neighbour table full (dropped)",
	[IP6_GLEAN_ERROR_NO_SOURCE] = "no IPv6 source address on the interface (dropped)",
};

/* Make b the solicitation for nh out of if_index from src (§4.3). */
static void make_ns(struct buffer *b, uint32_t if_index, const ip6_addr_a2 *src, const ip6_addr_a2 *nh)
{
	const struct device *dev = dev_by_index(if_index);
	struct in6_addr sn;
	ip6_solicited_node(&sn, nh);
	ip6_nd_msg_make(b, ICMP6_ND_NS, 0, src, &sn, nh, ND_OPT_SOURCE_LLADDR, dev->mac);
	ip6_opaque(b)->flags |= IP6_OPAQUE_F_LOCAL_ORIGIN;
	buffer_advance(b, -ETH_HDR_LEN);
	uint8_t mac[6];
	ip6_mcast_mac(mac, &sn);
	ip6_eth_rewrite(buffer_data(b), if_index, mac);
	b->tx_if = if_index;
}

/* One packet, lock held: its error (NS_SENT: b is the solicitation). */
static uint16_t glean_one(struct buffer *b, uint64_t now)
{
	const struct ip6_adj *a = ip6_adj_get(ip6_opaque(b)->adj_index);
	const ip6_addr_a2 *nh =
		a->kind == IP6_ADJ_GLEAN ? &((const struct ip6_header *)buffer_data(b))->dst : &a->next_hop;
	struct in6_addr target = *nh, src;
	if (!dev_by_index(a->if_index) || !ip6_if_source_for(a->if_index, &target, &src))
		return IP6_GLEAN_ERROR_NO_SOURCE;
	struct ip6_nbr *n = ip6_nbr_lookup(a->if_index, &target);
	if (n && n->state != IP6_NBR_INCOMPLETE) {
		n->flags |= IP6_NBR_F_APPLY;
		atomic_store_explicit(&ip6_nbr_dirty, true, memory_order_release);
		graph_poke_processes(graph_thread_self()); /* ip6-neighbor applies it at once */
		return IP6_GLEAN_ERROR_NOT_APPLIED;
	}
	if (!n) {
		n = ip6_nbr_create(a->if_index, &target, now);
		if (!n)
			return IP6_GLEAN_ERROR_TABLE_FULL;
	} else if (now - n->updated_ns < IP6_ND_RETRANS_NS) {
		return IP6_GLEAN_ERROR_PENDING;
	}
	n->updated_ns = now;
	make_ns(b, a->if_index, &src, &target);
	return IP6_GLEAN_ERROR_NS_SENT;
}

static uint32_t ip6_glean_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_sent = 0;
	uint64_t now = ip6_nbr_now();
	ip6_nbr_lock();
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		uint16_t e = glean_one(b, now);
		nexts[i] = e == IP6_GLEAN_ERROR_NS_SENT ? IP6_GLEAN_NEXT_OUTPUT : IP6_GLEAN_NEXT_DROP;
		n_sent += e == IP6_GLEAN_ERROR_NS_SENT;
		if (e != IP6_GLEAN_ERROR_NS_SENT)
			b->error = node_error(rt, e);
	}
	ip6_nbr_unlock();
	node_count_error(rt, IP6_GLEAN_ERROR_NS_SENT, n_sent);
	node_enqueue_to_nexts(rt, f->buffers, nexts, n);
	return n;
}

static const struct node_reg ip6_glean_node = {
	.name = "ip6-glean",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_glean_fn,
	.n_next = IP6_GLEAN_N_NEXT,
	.next_nodes = {
		[IP6_GLEAN_NEXT_DROP] = "error-drop",
		[IP6_GLEAN_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = IP6_GLEAN_N_ERROR,
	.error_strings = ip6_glean_error_strings,
};
NODE_REGISTER(ip6_glean_node)
