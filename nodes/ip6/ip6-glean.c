/* ip6-glean: packets whose next hop's MAC is not in their adjacency (a
 * connected prefix's glean adjacency: the destination is the next hop; or
 * a route's or host route's rewrite adjacency not resolved, or cleared
 * because its neighbour went STALE). The neighbour table (ip6_neighbor.h)
 * decides, lock held once per frame:
 *
 *   no entry: an INCOMPLETE one is made and the first Neighbor
 *     Solicitation leaves at once (RFC 4861 §7.2.2: to the solicited-node
 *     group, from the outgoing interface's address, our MAC in a Source
 *     Link-Layer Address option) in a fresh buffer; the packet is held.
 *     ip6-nd-timer retransmits and, after MAX_MULTICAST_SOLICIT, answers
 *     the held packets with Destination Unreachable code 3.
 *   INCOMPLETE: the packet is held, at most IP6_NBR_HOLD per neighbour;
 *     beyond that the oldest held one is dropped (§7.2.2).
 *   a MAC known (STALE, DELAY, PROBE, or REACHABLE not yet given to the
 *     adjacencies): the packet leaves on it (§7.3.3: a STALE entry is
 *     used), with its hop limit decremented as ip6-rewrite would; a STALE
 *     entry moves to DELAY and the adjacencies get its MAC back, so the
 *     packets after it take ip6-rewrite again. A packet over the
 *     interface's MTU is held instead, to meet ip6-rewrite's Packet Too
 *     Big when released.
 *
 * Next nodes: error-drop, interface-output.
 * Errors: held (counted, not dropped); NS sent; oldest held packet
 *   dropped; sent on the cached MAC (counted); STALE neighbour used;
 *   neighbour table full; no source address; no buffer for an NS.
 * Trace: next hop, interface, what happened.
 * CLI: `show errors`, `show ip6 neighbors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"

enum ip6_glean_next {
	IP6_GLEAN_NEXT_DROP = 0,
	IP6_GLEAN_NEXT_OUTPUT,
	IP6_GLEAN_N_NEXT,
};

enum ip6_glean_error {
	IP6_GLEAN_ERROR_HELD = 0,
	IP6_GLEAN_ERROR_NS_SENT,
	IP6_GLEAN_ERROR_HOLD_FULL,
	IP6_GLEAN_ERROR_SENT_CACHED,
	IP6_GLEAN_ERROR_STALE_USED,
	IP6_GLEAN_ERROR_TABLE_FULL,
	IP6_GLEAN_ERROR_NO_SOURCE,
	IP6_GLEAN_ERROR_NO_BUFFER,
	IP6_GLEAN_N_ERROR,
};

static const char *const ip6_glean_error_strings[IP6_GLEAN_N_ERROR] = {
	[IP6_GLEAN_ERROR_HELD] = "held for neighbour resolution",
	[IP6_GLEAN_ERROR_NS_SENT] = "NS sent (resolution started)",
	[IP6_GLEAN_ERROR_HOLD_FULL] = "hold queue full: oldest held packet dropped",
	[IP6_GLEAN_ERROR_SENT_CACHED] = "sent on the neighbour's cached MAC",
	[IP6_GLEAN_ERROR_STALE_USED] = "STALE neighbour used: DELAY",
	[IP6_GLEAN_ERROR_TABLE_FULL] = "neighbour table full (dropped)",
	[IP6_GLEAN_ERROR_NO_SOURCE] = "no IPv6 source address on the interface (dropped)",
	[IP6_GLEAN_ERROR_NO_BUFFER] = "no buffer for an NS",
};

struct ip6_glean_trace {
	struct in6_addr next_hop;
	uint32_t if_index;
	uint8_t what;
	uint8_t state;
};
_Static_assert(sizeof(struct ip6_glean_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip6_glean_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	static const char *const states[] = { "none", "incomplete", "reachable", "stale", "delay", "probe" };
	struct ip6_glean_trace t;
	char a[INET6_ADDRSTRLEN];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "next hop %s (if %u, %s): %s", ip6_format_addr(a, &t.next_hop), t.if_index,
			t.state < ARRAY_LEN(states) ? states[t.state] : "?",
			t.what < IP6_GLEAN_N_ERROR ? ip6_glean_error_strings[t.what] : "?");
}

/* What one frame produced besides the packets' own verdicts. */
struct glean_out {
	uint32_t ns[FRAME_SIZE];
	uint32_t drops[2 * FRAME_SIZE]; /* packets dropped, and oldest held ones pushed out */
	uint32_t n_ns, n_drops, n_held, n_cached, n_stale, n_nobuf;
	uint16_t err_full; /* the error of a held packet pushed out */
	uint64_t now;
};

/* bi held on n; the oldest pushed out to the drops. */
static void hold(struct ip6_nbr *n, uint32_t bi, struct glean_out *o)
{
	uint32_t out;
	ip6_nbr_hold(n, bi, &out);
	if (out == BUFFER_INVALID)
		return;
	buffer_get(out)->error = o->err_full;
	o->drops[o->n_drops++] = out;
}

/* b leaves on n's cached MAC, or is held when over the MTU (released to
 * ip6-lookup later, where ip6-rewrite sends Packet Too Big). */
static uint16_t send_cached(struct buffer *b, struct ip6_nbr *n, uint32_t bi, struct glean_out *o)
{
	const struct device *dev = dev_by_index(n->if_index);
	struct ip6_header *h = (struct ip6_header *)buffer_data(b);
	if (IP6_HDR_LEN + (uint32_t)ntohs(h->payload_length) > dev->mtu) {
		hold(n, bi, o);
		return IP6_GLEAN_ERROR_HELD;
	}
	if (!(ip6_opaque(b)->flags & IP6_OPAQUE_F_LOCAL_ORIGIN))
		h->hop_limit--; /* > 1 in transit: ip6-input answered the rest */
	buffer_advance(b, -ETH_HDR_LEN);
	ip6_eth_rewrite(buffer_data(b), n->if_index, n->mac);
	b->tx_if = n->if_index;
	return IP6_GLEAN_ERROR_SENT_CACHED;
}

/* One packet, lock held: its verdict (HELD: kept on the entry;
 * SENT_CACHED: to interface-output; else dropped). */
static uint16_t glean_one(struct buffer *b, uint32_t bi, struct glean_out *o, struct in6_addr *target,
			  uint32_t *if_index, uint8_t *state)
{
	const struct ip6_adj *a = ip6_adj_get(ip6_opaque(b)->adj_index);
	*target = a->kind == IP6_ADJ_GLEAN ? ((const struct ip6_header *)buffer_data(b))->dst : a->next_hop;
	*if_index = a->if_index;
	struct in6_addr src;
	if (!dev_by_index(a->if_index) || !ip6_if_source_for(a->if_index, target, &src))
		return IP6_GLEAN_ERROR_NO_SOURCE;
	struct ip6_nbr *n = ip6_nbr_lookup(a->if_index, target);
	if (!n) {
		n = ip6_nbr_create(a->if_index, target, o->now);
		if (!n)
			return IP6_GLEAN_ERROR_TABLE_FULL;
		uint32_t ns = ip6_nbr_ns_make(a->if_index, target, NULL);
		if (ns != BUFFER_INVALID)
			o->ns[o->n_ns++] = ns;
		else
			o->n_nobuf++;
		n->n_probes = 1;
		ip6_nbr_timer_want(n, ip6_nd_timing.retrans_ns);
	}
	*state = n->state;
	if (n->state == IP6_NBR_INCOMPLETE) {
		hold(n, bi, o);
		return IP6_GLEAN_ERROR_HELD;
	}
	if (n->state == IP6_NBR_STALE) {
		ip6_nbr_set_state(n, IP6_NBR_DELAY, o->now);
		o->n_stale++;
	}
	/* The adjacencies lack the MAC (STALE, or not applied yet): give it. */
	ip6_nbr_mark_apply(n);
	return send_cached(b, n, bi, o);
}

static void trace_one(struct node_runtime *rt, struct buffer *b, const struct in6_addr *nh, uint32_t if_index,
		      uint8_t state, uint16_t what)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct ip6_glean_trace t = { .next_hop = *nh, .if_index = if_index, .what = (uint8_t)what, .state = state };
	memcpy(detail, &t, sizeof(t));
}

static uint32_t ip6_glean_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	uint32_t sent[FRAME_SIZE], n_sent = 0;
	struct glean_out o;
	o.n_ns = o.n_drops = o.n_held = o.n_cached = o.n_stale = o.n_nobuf = 0;
	o.err_full = node_error(rt, IP6_GLEAN_ERROR_HOLD_FULL);
	o.now = ip6_nbr_now();
	ip6_nbr_lock();
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		struct in6_addr nh = { 0 };
		uint32_t if_index = 0;
		uint8_t state = 0;
		bool traced = b->flags & BUFFER_F_TRACED;
		uint16_t e = glean_one(b, f->buffers[i], &o, &nh, &if_index, &state);
		if (unlikely(traced))
			trace_one(rt, b, &nh, if_index, state, e);
		if (e == IP6_GLEAN_ERROR_HELD) {
			o.n_held++;
		} else if (e == IP6_GLEAN_ERROR_SENT_CACHED) {
			sent[n_sent++] = f->buffers[i];
			o.n_cached++;
		} else {
			b->error = node_error(rt, e);
			o.drops[o.n_drops++] = f->buffers[i];
		}
	}
	ip6_nbr_unlock();
	node_count_error(rt, IP6_GLEAN_ERROR_HELD, o.n_held);
	node_count_error(rt, IP6_GLEAN_ERROR_NS_SENT, o.n_ns);
	node_count_error(rt, IP6_GLEAN_ERROR_SENT_CACHED, o.n_cached);
	node_count_error(rt, IP6_GLEAN_ERROR_STALE_USED, o.n_stale);
	node_count_error(rt, IP6_GLEAN_ERROR_NO_BUFFER, o.n_nobuf);
	node_enqueue(rt, IP6_GLEAN_NEXT_DROP, o.drops, o.n_drops);
	node_enqueue(rt, IP6_GLEAN_NEXT_OUTPUT, o.ns, o.n_ns);
	node_enqueue(rt, IP6_GLEAN_NEXT_OUTPUT, sent, n_sent);
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
	.format_trace = ip6_glean_format_trace,
};
NODE_REGISTER(ip6_glean_node)
