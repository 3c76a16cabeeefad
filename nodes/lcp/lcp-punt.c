/* lcp-punt: packets for the router that sluice does not answer itself go
 * up to the TAP paired with the port they came in on (linux-cp, lcp.h).
 *
 * Senders decide what is punted, and punt only when the rx port has a
 * pair (else their old drop stands): ip4-local (every local packet but an
 * ICMP echo request: TCP and UDP to sluice's addresses, BGP's 179, SSH,
 * other protocols such as OSPF's 89 and VRRP's 112, ICMP other than echo
 * requests, fragments, which Linux reassembles), ip4-input (multicast to
 * 224.0.0.0/24, RFC 5771's local network control block: OSPF's
 * 224.0.0.5/6, VRRP's 224.0.0.18, RIP's 224.0.0.9) and arp-input (ARP
 * replies for our addresses, after sluice has learnt from them, so that
 * Linux's neighbour table fills too); for IPv6 ip6-local (TCP, UDP and
 * other protocols to sluice's addresses, ICMPv6 other than echo, NS/NA,
 * RS and MLD, fragments; link-scope multicast such as OSPFv3's ff02::5/6)
 * and ip6-nd (Neighbor Advertisements, after sluice learnt from them). This node puts the Ethernet header
 * back in front (ethernet-input left it in place; l2_len says how long it
 * is), points the packet at the TAP and hands it to interface-output,
 * whose tap-tx copies it into the TAP's tx ring: no system call here.
 *
 * A full ring means Linux does not read as fast as we punt: the packet is
 * dropped here under its own error, counted per TAP ring as it fills, so
 * that the loss has a name rather than being a TX-dropped on the TAP.
 *
 * Next nodes: error-drop, interface-output.
 * Errors: punt queue full: Linux is slow; no lcp pair for the rx
 *   interface (the pair was deleted while the packet was in flight).
 *   Counters (not drops): punted ARP replies, IPv4 multicast, IPv4 to a
 *   local address, IPv6 NAs, IPv6 link-scope multicast, IPv6 to a local
 *   address.
 * Trace: rx port, TAP, what was punted, verdict.
 * CLI: `show errors`, `show trace`, `show lcp`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/lcp/lcp.h"

enum lcp_punt_next {
	LCP_PUNT_NEXT_DROP = 0,
	LCP_PUNT_NEXT_OUTPUT,
	LCP_PUNT_N_NEXT,
};

enum lcp_punt_error {
	LCP_PUNT_ERROR_QUEUE_FULL = 0,
	LCP_PUNT_ERROR_NO_PAIR,
	LCP_PUNT_COUNT_ARP,
	LCP_PUNT_COUNT_MULTICAST,
	LCP_PUNT_COUNT_LOCAL,
	LCP_PUNT_COUNT_NA6,
	LCP_PUNT_COUNT_MULTICAST6,
	LCP_PUNT_COUNT_LOCAL6,
	LCP_PUNT_N_ERROR,
};

static const char *const lcp_punt_error_strings[LCP_PUNT_N_ERROR] = {
	[LCP_PUNT_ERROR_QUEUE_FULL] = "punt queue full: Linux is slow",
	[LCP_PUNT_ERROR_NO_PAIR] = "no lcp pair for the rx interface",
	[LCP_PUNT_COUNT_ARP] = "punted: ARP reply (copy for Linux's neighbour table)",
	[LCP_PUNT_COUNT_MULTICAST] = "punted: IPv4 multicast 224.0.0.0/24",
	[LCP_PUNT_COUNT_LOCAL] = "punted: IPv4 to a local address",
	[LCP_PUNT_COUNT_NA6] = "punted: IPv6 Neighbor Advertisement (copy for Linux's neighbour table)",
	[LCP_PUNT_COUNT_MULTICAST6] = "punted: IPv6 link-scope multicast",
	[LCP_PUNT_COUNT_LOCAL6] = "punted: IPv6 to a local address",
};

struct lcp_punt_trace {
	uint32_t rx_if;
	uint32_t tap;
	uint8_t kind;    /* LCP_PUNT_COUNT_* */
	uint8_t verdict; /* LCP_PUNT_ERROR_*, or LCP_PUNT_N_ERROR: sent */
	char rx_name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct lcp_punt_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int lcp_punt_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct lcp_punt_trace t;
	memcpy(&t, detail, sizeof(t));
	const char *kind = lcp_punt_error_strings[t.kind] + sizeof("punted: ") - 1;
	if (t.verdict < LCP_PUNT_N_ERROR)
		return snprintf(buf, len, "%.*s (if %u): %s: dropped, %s", ETH_TRACE_NAME_SIZE, t.rx_name, t.rx_if,
				kind, lcp_punt_error_strings[t.verdict]);
	return snprintf(buf, len, "%.*s (if %u): %s -> tap if %u", ETH_TRACE_NAME_SIZE, t.rx_name, t.rx_if, kind,
			t.tap);
}

/* ---- helpers ---- */

/* What b is, from its Ethernet header (now at buffer_data). */
static uint16_t kind_of(struct buffer *b)
{
	const uint8_t *p = buffer_data(b);
	if (p[12] == (ETH_TYPE_ARP >> 8) && p[13] == (ETH_TYPE_ARP & 0xff))
		return LCP_PUNT_COUNT_ARP;
	if (p[12] == 0x86 && p[13] == 0xdd) { /* ip6-nd sends only NAs; multicast: ff00::/8 */
		if (p[ETH_HDR_LEN + 6] == 58 && p[ETH_HDR_LEN + 40] == 136)
			return LCP_PUNT_COUNT_NA6;
		return p[ETH_HDR_LEN + 24] == 0xff ? LCP_PUNT_COUNT_MULTICAST6 : LCP_PUNT_COUNT_LOCAL6;
	}
	/* IPv4: the first byte of the destination address is 224 only in
	 * 224.0.0.0/24 here (ip4-input punts no other multicast). */
	return p[ETH_HDR_LEN + 16] == 224 ? LCP_PUNT_COUNT_MULTICAST : LCP_PUNT_COUNT_LOCAL;
}

/* Slots left in each TAP's tx ring for this thread, read once per frame. */
struct room {
	uint32_t left[DEV_MAX];
	uint64_t known; /* bit per interface index: left[] read */
};

static bool take_slot(struct room *r, uint32_t tap, uint32_t thread_index)
{
	const struct device *d = dev_by_index(tap);
	if (!tap_is(d))
		return true; /* another driver's tx queue says for itself */
	if (!(r->known & (1ull << tap))) {
		r->known |= 1ull << tap;
		r->left[tap] = tap_tx_room(d, dev_tx_queue(d, thread_index));
	}
	if (!r->left[tap])
		return false;
	r->left[tap]--;
	return true;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, uint32_t tap, uint16_t kind, uint16_t verdict)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct lcp_punt_trace t = { .rx_if = b->rx_if, .tap = tap, .kind = (uint8_t)kind, .verdict = (uint8_t)verdict };
	eth_trace_name(t.rx_name, b->rx_if);
	memcpy(detail, &t, sizeof(t));
}

/* ---- the node ---- */

static uint32_t lcp_punt_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint64_t counts[LCP_PUNT_N_ERROR] = { 0 };
	struct room room;
	room.known = 0;
	_Static_assert(DEV_MAX <= 64, "one bit per interface");

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		buffer_advance(b, -(int)b->l2_len);
		uint16_t kind = kind_of(b);
		uint32_t tap = lcp_tap_of(b->rx_if);
		uint16_t verdict = LCP_PUNT_N_ERROR;
		if (unlikely(tap == DEV_INDEX_INVALID))
			verdict = LCP_PUNT_ERROR_NO_PAIR;
		else if (unlikely(!take_slot(&room, tap, rt->thread_index)))
			verdict = LCP_PUNT_ERROR_QUEUE_FULL;
		if (likely(verdict == LCP_PUNT_N_ERROR)) {
			b->tx_if = tap;
			nexts[i] = LCP_PUNT_NEXT_OUTPUT;
			counts[kind]++;
		} else {
			b->error = node_error(rt, verdict);
			nexts[i] = LCP_PUNT_NEXT_DROP;
		}
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_one(rt, b, tap, kind, verdict);
	}
	for (uint16_t k = LCP_PUNT_COUNT_ARP; k < LCP_PUNT_N_ERROR; k++)
		if (counts[k])
			node_count_error(rt, k, counts[k]);
	node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg lcp_punt_node = {
	.name = "lcp-punt",
	.type = NODE_TYPE_INTERNAL,
	.fn = lcp_punt_fn,
	.n_next = LCP_PUNT_N_NEXT,
	.next_nodes = {
		[LCP_PUNT_NEXT_DROP] = "error-drop",
		[LCP_PUNT_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = LCP_PUNT_N_ERROR,
	.error_strings = lcp_punt_error_strings,
	.format_trace = lcp_punt_format_trace,
};
NODE_REGISTER(lcp_punt_node)
