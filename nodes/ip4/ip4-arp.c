/* ip4-arp: packets whose next hop has no MAC yet.
 *
 * They come from ip4-lookup with a glean adjacency (a connected subnet: the
 * next hop is the destination itself) or a rewrite adjacency not yet
 * resolved (the adjacency's next hop). Each is held on its neighbour entry
 * (created incomplete on first sight), up to IP4_NBR_HOLD per next hop;
 * beyond that it is dropped. A broadcast ARP request for the next hop goes
 * out of the adjacency's interface when the entry is new and then at most
 * once per ip4_nbr_request_interval_ns. The ip4-neighbor process node
 * releases held packets once arp-input learns the MAC, or drops them after
 * the resolution timeout (see ip4_neighbor.h). A neighbour already resolved
 * and applied that the FIB still sends here (its host route could not be
 * added) has the packet dropped instead. The neighbour table's lock is
 * taken once per frame.
 *
 * Next nodes: error-drop, interface-output (ARP requests).
 * Errors: packet held (counted, not dropped); ARP request sent (counted);
 *   hold queue full; neighbour table full; subnet broadcast (not
 *   resolved); no buffer for a request; resolved but not in the FIB.
 * Trace: next hop, interface, and what happened.
 * CLI: `show ip neighbors`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ip4/arp.h"
#include "nodes/ethernet.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"

enum ip4_arp_next {
	IP4_ARP_NEXT_DROP = 0,
	IP4_ARP_NEXT_OUTPUT,
	IP4_ARP_N_NEXT,
};

enum ip4_arp_error {
	IP4_ARP_ERROR_HELD = 0,
	IP4_ARP_ERROR_REQUEST_SENT,
	IP4_ARP_ERROR_HOLD_FULL,
	IP4_ARP_ERROR_TABLE_FULL,
	IP4_ARP_ERROR_BROADCAST,
	IP4_ARP_ERROR_NO_BUFFER,
	IP4_ARP_ERROR_NOT_APPLIED,
	IP4_ARP_N_ERROR,
};

static const char *const ip4_arp_error_strings[IP4_ARP_N_ERROR] = {
	[IP4_ARP_ERROR_HELD] = "held for ARP resolution",
	[IP4_ARP_ERROR_REQUEST_SENT] = "ARP request sent",
	[IP4_ARP_ERROR_HOLD_FULL] = "ARP hold queue full (dropped)",
	[IP4_ARP_ERROR_TABLE_FULL] = "neighbour table full (dropped)",
	[IP4_ARP_ERROR_BROADCAST] = "subnet broadcast destination (not resolved)",
	[IP4_ARP_ERROR_NO_BUFFER] = "no buffer for an ARP request",
	[IP4_ARP_ERROR_NOT_APPLIED] = "neighbour resolved but not in the FIB (dropped)",
};

struct ip4_arp_trace {
	uint32_t next_hop;
	uint32_t if_index;
	uint8_t what;
};
_Static_assert(sizeof(struct ip4_arp_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip4_arp_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip4_arp_trace t;
	char a[16];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "next hop %s (if %u): %s", ip4_format_addr(a, t.next_hop), t.if_index,
			t.what < IP4_ARP_N_ERROR ? ip4_arp_error_strings[t.what] : "?");
}

/* ---- helpers ---- */

/* ---- the node ---- */

static uint32_t ip4_arp_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint32_t drops[FRAME_SIZE], requests[FRAME_SIZE];
	uint32_t n_drops = 0, n_requests = 0, n_held = 0, n_nobuf = 0;
	const struct ip4_fib *fib = ip4_fib_main;
	uint64_t now = ip4_nbr_now();

	ip4_nbr_lock();
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		const struct ip4_adj *a = ip4_adj_get(fib, ip4_opaque(b)->adj_index);
		uint32_t nh = a->kind == IP4_ADJ_GLEAN ? ((const struct ip4_header *)buffer_data(b))->dst
						      : htonl(a->next_hop);
		uint16_t what = IP4_ARP_ERROR_HELD;
		struct ip4_nbr *e = NULL;
		if (a->kind == IP4_ADJ_GLEAN && ip4_if_is_subnet_broadcast(a->if_index, nh))
			what = IP4_ARP_ERROR_BROADCAST;
		else if (!(e = ip4_nbr_lookup(a->if_index, nh)) && !(e = ip4_nbr_create(a->if_index, nh, now)))
			what = IP4_ARP_ERROR_TABLE_FULL;
		else if (e->n_held == IP4_NBR_HOLD)
			what = IP4_ARP_ERROR_HOLD_FULL;
		else if (e->state == IP4_NBR_REACHABLE && !(e->flags & IP4_NBR_F_APPLY))
			what = IP4_ARP_ERROR_NOT_APPLIED; /* holding would loop: nothing would release it */
		if (what == IP4_ARP_ERROR_HELD) {
			e->held[e->n_held++] = bi[i];
			n_held++;
		} else {
			b->error = node_error(rt, what);
			drops[n_drops++] = bi[i];
		}
		if (e && e->state == IP4_NBR_INCOMPLETE &&
		    (!e->n_requests || now - e->request_ns >= ip4_nbr_request_interval_ns)) {
			uint32_t r = ip4_nbr_request_make(a->if_index, nh, NULL);
			if (r != BUFFER_INVALID) {
				requests[n_requests++] = r;
				e->request_ns = now;
				if (e->n_requests < UINT8_MAX)
					e->n_requests++;
			} else {
				n_nobuf++;
			}
		}
		if (unlikely(b->flags & BUFFER_F_TRACED)) {
			uint8_t *detail = node_trace_detail(rt, b);
			if (detail) {
				struct ip4_arp_trace t = { .next_hop = nh, .if_index = a->if_index, .what = (uint8_t)what };
				memcpy(detail, &t, sizeof(t));
			}
		}
	}
	ip4_nbr_unlock();

	node_count_error(rt, IP4_ARP_ERROR_HELD, n_held);
	node_count_error(rt, IP4_ARP_ERROR_REQUEST_SENT, n_requests);
	if (n_nobuf)
		node_count_error(rt, IP4_ARP_ERROR_NO_BUFFER, n_nobuf);
	node_enqueue(rt, IP4_ARP_NEXT_DROP, drops, n_drops);
	node_enqueue(rt, IP4_ARP_NEXT_OUTPUT, requests, n_requests);
	return n;
}

static const struct node_reg ip4_arp_node = {
	.name = "ip4-arp",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip4_arp_fn,
	.n_next = IP4_ARP_N_NEXT,
	.next_nodes = {
		[IP4_ARP_NEXT_DROP] = "error-drop",
		[IP4_ARP_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = IP4_ARP_N_ERROR,
	.error_strings = ip4_arp_error_strings,
	.format_trace = ip4_arp_format_trace,
};
NODE_REGISTER(ip4_arp_node)
