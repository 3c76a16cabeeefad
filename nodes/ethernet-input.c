/* ethernet-input: the first node after every <driver>-input.
 *
 * Frames shorter than an Ethernet header are runts and dropped. Frames of
 * an interface in L2 cross-connect mode go to l2-xconnect untouched (the
 * whole frame is handed on without a copy when all of it goes there).
 * Frames of an interface in L3 mode are classified by ethertype and, until
 * the IPv4 and ARP nodes exist, counted and dropped under their own errors.
 *
 * Next nodes: error-drop, l2-xconnect.
 * Errors: runt; ip4 (no ip4-input yet); arp (no arp node yet); unknown
 *   ethertype on an L3 interface; no such rx interface.
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
	ETHERNET_INPUT_N_NEXT,
};

enum ethernet_input_error {
	ETHERNET_INPUT_ERROR_RUNT = 0,
	ETHERNET_INPUT_ERROR_IP4,
	ETHERNET_INPUT_ERROR_ARP,
	ETHERNET_INPUT_ERROR_UNKNOWN_TYPE,
	ETHERNET_INPUT_ERROR_NO_INTERFACE,
	ETHERNET_INPUT_N_ERROR,
};

static const char *const ethernet_input_error_strings[ETHERNET_INPUT_N_ERROR] = {
	[ETHERNET_INPUT_ERROR_RUNT] = "runt (shorter than an Ethernet header)",
	[ETHERNET_INPUT_ERROR_IP4] = "IPv4 on an L3 interface (no ip4-input yet)",
	[ETHERNET_INPUT_ERROR_ARP] = "ARP on an L3 interface (no arp node yet)",
	[ETHERNET_INPUT_ERROR_UNKNOWN_TYPE] = "unknown ethertype on an L3 interface",
	[ETHERNET_INPUT_ERROR_NO_INTERFACE] = "no such rx interface",
};

static const char *const ethernet_input_next_names[ETHERNET_INPUT_N_NEXT] = {
	[ETHERNET_INPUT_NEXT_DROP] = "error-drop",
	[ETHERNET_INPUT_NEXT_L2_XCONNECT] = "l2-xconnect",
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

/* Where a frame of an L3 interface goes today: dropped, by ethertype. */
static uint16_t l3_error(struct buffer *b)
{
	const uint8_t *p = buffer_data(b);
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	switch (type) {
	case ETH_TYPE_IP4: return ETHERNET_INPUT_ERROR_IP4;
	case ETH_TYPE_ARP: return ETHERNET_INPUT_ERROR_ARP;
	default: return ETHERNET_INPUT_ERROR_UNKNOWN_TYPE;
	}
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
		} else
			error = l3_error(b);
		if (next == ETHERNET_INPUT_NEXT_DROP)
			b->error = node_error(rt, error);
		nexts[i] = next;
		if (unlikely(b->flags & BUFFER_F_TRACED))
			trace_one(rt, b, next, error);
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
	},
	.n_errors = ETHERNET_INPUT_N_ERROR,
	.error_strings = ethernet_input_error_strings,
	.format_trace = ethernet_input_format_trace,
};
NODE_REGISTER(ethernet_input_node)
