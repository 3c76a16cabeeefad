/* ethernet-input: the first node after every <driver>-input.
 *
 * Frames shorter than an Ethernet header are runts and dropped. Frames of
 * an interface in L2 cross-connect mode go to l2-xconnect untouched (the
 * whole frame is handed on without a copy when all of it goes there).
 * Frames of an interface in L3 mode must be addressed to the interface's MAC
 * or be broadcast/multicast (af-packet interfaces are promiscuous and see
 * the whole segment; group frames get BUFFER_F_L2_GROUP, which ip4-input
 * reads); those are classified by ethertype, their Ethernet
 * header stripped (l2_len and l3_offset say where it was), IPv4 to
 * ip4-input and ARP to arp-input; 802.1Q and 802.1ad (QinQ) tags on these
 * untagged interfaces are counted apart from other ethertypes (IPv6
 * included), and all of them dropped.
 *
 * Next nodes: error-drop, l2-xconnect, ip4-input, arp-input.
 * Errors: runt; not for this interface's MAC (L3); unknown ethertype on an
 *   L3 interface; no such rx interface; VLAN/QinQ tag on an untagged
 *   interface.
 * Trace: rx interface name and index, length, Ethernet header, next node.
 * CLI: `show errors`, `trace add pcap-input N` / `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ethernet.h"

enum ethernet_input_next {
	ETHERNET_INPUT_NEXT_DROP = 0,
	ETHERNET_INPUT_NEXT_L2_XCONNECT,
	ETHERNET_INPUT_NEXT_IP4_INPUT,
	ETHERNET_INPUT_NEXT_ARP_INPUT,
	ETHERNET_INPUT_N_NEXT,
};

enum ethernet_input_error {
	ETHERNET_INPUT_ERROR_RUNT = 0,
	ETHERNET_INPUT_ERROR_NOT_FOR_US,
	ETHERNET_INPUT_ERROR_UNKNOWN_TYPE,
	ETHERNET_INPUT_ERROR_NO_INTERFACE,
	ETHERNET_INPUT_ERROR_TAGGED,
	ETHERNET_INPUT_N_ERROR,
};

static const char *const ethernet_input_error_strings[ETHERNET_INPUT_N_ERROR] = {
	[ETHERNET_INPUT_ERROR_RUNT] = "runt (shorter than an Ethernet header)",
	[ETHERNET_INPUT_ERROR_NOT_FOR_US] = "destination MAC not this interface's (L3)",
	[ETHERNET_INPUT_ERROR_UNKNOWN_TYPE] = "unknown ethertype on an L3 interface",
	[ETHERNET_INPUT_ERROR_NO_INTERFACE] = "no such rx interface",
	[ETHERNET_INPUT_ERROR_TAGGED] = "VLAN or QinQ tag on an untagged interface",
};

static const char *const ethernet_input_next_names[ETHERNET_INPUT_N_NEXT] = {
	[ETHERNET_INPUT_NEXT_DROP] = "error-drop",
	[ETHERNET_INPUT_NEXT_L2_XCONNECT] = "l2-xconnect",
	[ETHERNET_INPUT_NEXT_IP4_INPUT] = "ip4-input",
	[ETHERNET_INPUT_NEXT_ARP_INPUT] = "arp-input",
};

struct ethernet_input_trace {
	uint32_t rx_if;
	uint16_t length;
	uint8_t next;
	uint8_t error; /* this node's error code when next is error-drop */
	uint8_t eth[ETH_HDR_LEN];
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct ethernet_input_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ethernet_input_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ethernet_input_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "%.*s (if %u) length %u: ", ETH_TRACE_NAME_SIZE, t.name, t.rx_if, t.length);
	if (n < 0 || (size_t)n >= len)
		return n;
	n += eth_format_header(buf + n, len - (size_t)n, t.eth);
	if ((size_t)n >= len)
		return n;
	const char *next = t.next < ETHERNET_INPUT_N_NEXT ? ethernet_input_next_names[t.next] : "?";
	if (t.next == ETHERNET_INPUT_NEXT_DROP && t.error < ETHERNET_INPUT_N_ERROR)
		return n + snprintf(buf + n, len - (size_t)n, " -> %s (%s)", next,
				    ethernet_input_error_strings[t.error]);
	return n + snprintf(buf + n, len - (size_t)n, " -> %s", next);
}

/* ---- helpers ---- */

/* Where a frame of an L3 interface goes: by destination MAC, then by
 * ethertype. *error is set when the answer is error-drop. */
static uint16_t l3_next(struct buffer *b, const struct device *dev, uint16_t *error)
{
	const uint8_t *p = buffer_data(b);
	/* Group bit: broadcast and multicast are for every station; the flag
	 * saves ip4-input a look back at the Ethernet header. */
	if (p[0] & 1) {
		b->flags |= BUFFER_F_L2_GROUP;
	} else if (unlikely(memcmp(p, dev->mac, 6) != 0)) {
		*error = ETHERNET_INPUT_ERROR_NOT_FOR_US;
		return ETHERNET_INPUT_NEXT_DROP;
	}
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	uint16_t next;
	if (likely(type == ETH_TYPE_IP4))
		next = ETHERNET_INPUT_NEXT_IP4_INPUT;
	else if (type == ETH_TYPE_ARP)
		next = ETHERNET_INPUT_NEXT_ARP_INPUT;
	else {
		/* 802.1Q, 802.1ad, and the pre-standard QinQ 0x9100. */
		bool tagged = type == 0x8100 || type == 0x88a8 || type == 0x9100;
		*error = tagged ? ETHERNET_INPUT_ERROR_TAGGED : ETHERNET_INPUT_ERROR_UNKNOWN_TYPE;
		return ETHERNET_INPUT_NEXT_DROP;
	}
	b->l2_len = ETH_HDR_LEN;
	b->l3_offset = (uint16_t)(b->current_data + ETH_HDR_LEN);
	return next;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, uint16_t next, uint16_t error)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct ethernet_input_trace t = {
		.rx_if = b->rx_if,
		.length = b->current_length,
		.next = (uint8_t)next,
		.error = (uint8_t)error,
	};
	eth_trace_header(t.eth, b);
	eth_trace_name(t.name, b->rx_if);
	memcpy(detail, &t, sizeof(t));
}

/* ---- the node ---- */

static uint32_t ethernet_input_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_l2 = 0;
	uint32_t last_if = DEV_INDEX_INVALID;
	const struct device *dev = NULL;

	/* Plain loop: frames come from one input burst, so the interface
	 * lookup is cached across runs of one rx_if; an L2 interface's frames
	 * are decided from the header line alone, without touching data. */
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint16_t next = ETHERNET_INPUT_NEXT_DROP;
		uint16_t error;
		if (unlikely(b->rx_if != last_if)) {
			last_if = b->rx_if;
			dev = dev_by_index(last_if);
		}
		if (unlikely(b->current_length < ETH_HDR_LEN))
			error = ETHERNET_INPUT_ERROR_RUNT;
		else if (unlikely(!dev))
			error = ETHERNET_INPUT_ERROR_NO_INTERFACE;
		else if (dev->mode == DEV_MODE_L2_XCONNECT) {
			next = ETHERNET_INPUT_NEXT_L2_XCONNECT;
			error = 0;
			b->l2_len = ETH_HDR_LEN;
			n_l2++;
		} else {
			error = 0;
			next = l3_next(b, dev, &error);
		}
		if (next == ETHERNET_INPUT_NEXT_DROP)
			b->error = node_error(rt, error);
		nexts[i] = next;
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_one(rt, b, next, error);
		/* The L3 nodes start at their header; the trace saw the frame. */
		if (next >= ETHERNET_INPUT_NEXT_IP4_INPUT)
			buffer_advance(b, ETH_HDR_LEN);
	}

	if (likely(n_l2 == n))
		node_forward_frame(rt, ETHERNET_INPUT_NEXT_L2_XCONNECT, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ethernet_input_node = {
	.name = "ethernet-input",
	.type = NODE_TYPE_INTERNAL,
	.fn = ethernet_input_fn,
	.n_next = ETHERNET_INPUT_N_NEXT,
	.next_nodes = {
		[ETHERNET_INPUT_NEXT_DROP] = "error-drop",
		[ETHERNET_INPUT_NEXT_L2_XCONNECT] = "l2-xconnect",
		[ETHERNET_INPUT_NEXT_IP4_INPUT] = "ip4-input",
		[ETHERNET_INPUT_NEXT_ARP_INPUT] = "arp-input",
	},
	.n_errors = ETHERNET_INPUT_N_ERROR,
	.error_strings = ethernet_input_error_strings,
	.format_trace = ethernet_input_format_trace,
};
NODE_REGISTER(ethernet_input_node)
