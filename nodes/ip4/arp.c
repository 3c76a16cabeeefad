/* arp-input: ARP packets received on L3 interfaces (RFC 826), the buffer
 * starting at the ARP header (ethernet-input stripped the Ethernet one).
 *
 * Requests for one of the receiving interface's addresses are answered in
 * place (the same buffer becomes the reply, out of the same interface).
 * The sender of a request or reply for one of our addresses is learnt into
 * the neighbour table (a new entry, or a changed MAC); other ARP traffic
 * only refreshes entries we already have (gratuitous ARP). A reply for us
 * that came in on a port paired with a Linux TAP then goes on to lcp-punt
 * (Linux's neighbour table fills from it too; docs/lcp.md); requests stay
 * sluice's to answer. Learning wakes
 * the ip4-neighbor process node, which updates the FIB and releases held
 * packets. The neighbour table's lock is taken at most once per frame.
 *
 * Next nodes: error-drop, interface-output (replies), lcp-punt.
 * Errors: request answered (counted); reply or request consumed after
 *   learning (dropped: nothing more to do); not for us; too short; not
 *   Ethernet/IPv4; bad opcode.
 * Trace: opcode, sender and target addresses, and what happened.
 * CLI: `show ip neighbors`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ip4/arp.h"
#include "nodes/ethernet.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_interface.h"
#include "nodes/ip4/ip4_neighbor.h"
#include "nodes/lcp/lcp.h"

enum arp_input_next {
	ARP_INPUT_NEXT_DROP = 0,
	ARP_INPUT_NEXT_OUTPUT,
	ARP_INPUT_NEXT_LCP_PUNT,
	ARP_INPUT_N_NEXT,
};

enum arp_input_error {
	ARP_INPUT_ERROR_REPLIED = 0,
	ARP_INPUT_ERROR_CONSUMED,
	ARP_INPUT_ERROR_NOT_FOR_US,
	ARP_INPUT_ERROR_TOO_SHORT,
	ARP_INPUT_ERROR_NOT_IP4,
	ARP_INPUT_ERROR_OPCODE,
	ARP_INPUT_N_ERROR,
};

static const char *const arp_input_error_strings[ARP_INPUT_N_ERROR] = {
	[ARP_INPUT_ERROR_REPLIED] = "ARP request for us answered",
	[ARP_INPUT_ERROR_CONSUMED] = "ARP for us consumed (sender learnt)",
	[ARP_INPUT_ERROR_NOT_FOR_US] = "ARP target not our address",
	[ARP_INPUT_ERROR_TOO_SHORT] = "ARP packet too short",
	[ARP_INPUT_ERROR_NOT_IP4] = "ARP not Ethernet/IPv4",
	[ARP_INPUT_ERROR_OPCODE] = "ARP opcode neither request nor reply",
};

struct arp_input_trace {
	uint32_t spa, tpa;
	uint8_t sha[6];
	uint16_t op;
	uint8_t what;
};
_Static_assert(sizeof(struct arp_input_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int arp_input_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct arp_input_trace t;
	char s[16], d[16];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%s %s is-at %02x:%02x:%02x:%02x:%02x:%02x, for %s: %s",
			t.op == ARP_OP_REQUEST ? "request" : t.op == ARP_OP_REPLY ? "reply" : "op?",
			ip4_format_addr(s, t.spa), t.sha[0], t.sha[1], t.sha[2], t.sha[3], t.sha[4], t.sha[5],
			ip4_format_addr(d, t.tpa), t.what < ARP_INPUT_N_ERROR ? arp_input_error_strings[t.what] : "?");
}

/* ---- helpers ---- */

/* Turn the request in b into our reply (same buffer, same interface). */
static void make_reply(struct buffer *b, struct arp_packet *arp, const struct device *dev)
{
	uint8_t ip[4];
	memcpy(ip, arp->tpa, 4);
	memcpy(arp->tha, arp->sha, 6);
	memcpy(arp->tpa, arp->spa, 4);
	memcpy(arp->sha, dev->mac, 6);
	memcpy(arp->spa, ip, 4);
	arp->op = htons(ARP_OP_REPLY);
	buffer_advance(b, -ETH_HDR_LEN);
	uint8_t *eth = buffer_data(b);
	memcpy(eth, arp->tha, 6);
	memcpy(eth + 6, dev->mac, 6);
	b->tx_if = b->rx_if;
}

/* What to do with one ARP packet; learns with the lock (taken on first
 * need, *locked says so). Returns an error code; REPLIED means "send". */
static uint16_t handle(struct buffer *b, bool *locked, uint64_t *now)
{
	if (b->current_length < ARP_PKT_LEN)
		return ARP_INPUT_ERROR_TOO_SHORT;
	struct arp_packet *arp = (struct arp_packet *)buffer_data(b);
	if (arp->htype != htons(ARP_HTYPE_ETHERNET) || arp->ptype != htons(ETH_TYPE_IP4) || arp->hlen != 6 ||
	    arp->plen != 4)
		return ARP_INPUT_ERROR_NOT_IP4;
	uint16_t op = ntohs(arp->op);
	if (op != ARP_OP_REQUEST && op != ARP_OP_REPLY)
		return ARP_INPUT_ERROR_OPCODE;
	const struct device *dev = dev_by_index(b->rx_if);
	uint32_t spa, tpa;
	memcpy(&spa, arp->spa, 4);
	memcpy(&tpa, arp->tpa, 4);
	bool for_us = dev && ip4_if_is_local(b->rx_if, tpa);
	/* A sender of 0.0.0.0 (an address probe, RFC 5227) teaches nothing;
	 * a group MAC is never a neighbour's. */
	if (spa != 0 && !(arp->sha[0] & 1)) {
		if (!*locked) {
			ip4_nbr_lock();
			*locked = true;
			*now = ip4_nbr_now();
		}
		struct ip4_nbr *n = ip4_nbr_lookup(b->rx_if, spa);
		if (!n && for_us)
			n = ip4_nbr_create(b->rx_if, spa, *now);
		if (n)
			ip4_nbr_learn(n, arp->sha, *now);
	}
	if (!for_us)
		return ARP_INPUT_ERROR_NOT_FOR_US;
	if (op == ARP_OP_REPLY)
		return ARP_INPUT_ERROR_CONSUMED;
	make_reply(b, arp, dev);
	return ARP_INPUT_ERROR_REPLIED;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, const struct arp_packet *before, uint16_t what)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct arp_input_trace t = { .op = ntohs(before->op), .what = (uint8_t)what };
	memcpy(&t.spa, before->spa, 4);
	memcpy(&t.tpa, before->tpa, 4);
	memcpy(t.sha, before->sha, 6);
	memcpy(detail, &t, sizeof(t));
}

/* ---- the node ---- */

static uint32_t arp_input_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_replied = 0;
	bool locked = false;
	uint64_t now = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		struct arp_packet before;
		bool traced = b->flags & BUFFER_F_TRACED;
		if (unlikely(traced)) {
			memset(&before, 0, sizeof(before));
			memcpy(&before, buffer_data(b), MIN(b->current_length, sizeof(before)));
		}
		uint16_t what = handle(b, &locked, &now);
		if (what == ARP_INPUT_ERROR_REPLIED) {
			nexts[i] = ARP_INPUT_NEXT_OUTPUT;
			n_replied++;
		} else if (what == ARP_INPUT_ERROR_CONSUMED && lcp_tap_of(b->rx_if) != DEV_INDEX_INVALID) {
			nexts[i] = ARP_INPUT_NEXT_LCP_PUNT;
		} else {
			nexts[i] = ARP_INPUT_NEXT_DROP;
			b->error = node_error(rt, what);
		}
		if (unlikely(traced))
			trace_one(rt, b, &before, what);
	}
	if (locked)
		ip4_nbr_unlock();

	if (n_replied)
		node_count_error(rt, ARP_INPUT_ERROR_REPLIED, n_replied);
	node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg arp_input_node = {
	.name = "arp-input",
	.type = NODE_TYPE_INTERNAL,
	.fn = arp_input_fn,
	.n_next = ARP_INPUT_N_NEXT,
	.next_nodes = {
		[ARP_INPUT_NEXT_DROP] = "error-drop",
		[ARP_INPUT_NEXT_OUTPUT] = "interface-output",
		[ARP_INPUT_NEXT_LCP_PUNT] = "lcp-punt",
	},
	.n_errors = ARP_INPUT_N_ERROR,
	.error_strings = arp_input_error_strings,
	.format_trace = arp_input_format_trace,
};
NODE_REGISTER(arp_input_node)
