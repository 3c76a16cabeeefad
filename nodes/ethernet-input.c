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
 * ip4-input, ARP to arp-input and IPv6 to ip6-input; 802.1Q and 802.1ad
 * (QinQ) tags on these untagged interfaces are counted apart from other
 * ethertypes, and all of them dropped.
 *
 * Next nodes: error-drop, l2-xconnect, ip4-input, arp-input, lcp-xc,
 *   ip6-input.
 * Errors: runt; not for this interface's MAC (L3); unknown ethertype on an
 *   L3 interface; no such rx interface; VLAN/QinQ tag on an untagged
 *   interface.
 * Trace: rx interface name and index, length, Ethernet header, next node.
 * CLI: `show errors`, `trace add pcap-input N` / `show trace`.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"

enum ethernet_input_next {
	ETHERNET_INPUT_NEXT_DROP = 0,
	ETHERNET_INPUT_NEXT_L2_XCONNECT,
	ETHERNET_INPUT_NEXT_IP4_INPUT,
	ETHERNET_INPUT_NEXT_ARP_INPUT,
	ETHERNET_INPUT_NEXT_LCP_XC,
	ETHERNET_INPUT_NEXT_IP6_INPUT,
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
	[ETHERNET_INPUT_NEXT_LCP_XC] = "lcp-xc",
	[ETHERNET_INPUT_NEXT_IP6_INPUT] = "ip6-input",
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
	/* IPv4 keeps the first compare and ARP the second: IPv6 after them
	 * leaves their instruction counts as they were. */
	if (likely(type == ETH_TYPE_IP4))
		next = ETHERNET_INPUT_NEXT_IP4_INPUT;
	else if (type == ETH_TYPE_ARP)
		next = ETHERNET_INPUT_NEXT_ARP_INPUT;
	else if (type == ETH_TYPE_IP6)
		next = ETHERNET_INPUT_NEXT_IP6_INPUT;
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

/* Whether b is the common case: a frame of interface rx_if (L3, MAC
 * mac_0..mac_4), at least a header long, addressed to that MAC, carrying
 * type_be (IPv4, or IPv6 when the frame's first packet is), not traced.
 * (Short-circuit: each test is one compare.) */
static inline bool l3_fast_ok(struct buffer *b, uint32_t rx_if, uint32_t mac_0, uint16_t mac_4, uint16_t type_be)
{
	const uint8_t *p = buffer_data(b);
	uint32_t d0;
	uint16_t d4, type;
	memcpy(&d0, p, sizeof(d0));
	memcpy(&d4, p + 4, sizeof(d4));
	memcpy(&type, p + 12, sizeof(type));
	return b->rx_if == rx_if && b->current_length >= ETH_HDR_LEN && d0 == mac_0 && d4 == mac_4 &&
	       type == type_be && !(b->flags & BUFFER_F_TRACED);
}

/* What l3_next and the loop do for such a frame. */
static inline void l3_take(struct buffer *b)
{
	b->l2_len = ETH_HDR_LEN;
	b->l3_offset = (uint16_t)(b->current_data + ETH_HDR_LEN);
	buffer_advance(b, ETH_HDR_LEN);
}

/* Whether b is the common case of an L2 cross-connect interface rx_if: a
 * frame of it, at least a header long, not traced. */
static inline bool l2_fast_ok(const struct buffer *b, uint32_t rx_if)
{
	return b->rx_if == rx_if && b->current_length >= ETH_HDR_LEN && !(b->flags & BUFFER_F_TRACED);
}

/* Every case for one frame; returns its next node. */
static uint16_t input_one(struct node_runtime *rt, struct buffer *b, const struct device *dev, uint32_t *n_l2)
{
	uint16_t next = ETHERNET_INPUT_NEXT_DROP;
	uint16_t error;
	if (unlikely(b->current_length < ETH_HDR_LEN))
		error = ETHERNET_INPUT_ERROR_RUNT;
	else if (unlikely(!dev))
		error = ETHERNET_INPUT_ERROR_NO_INTERFACE;
	else if (dev->mode == DEV_MODE_L2_XCONNECT) {
		next = ETHERNET_INPUT_NEXT_L2_XCONNECT;
		error = 0;
		b->l2_len = ETH_HDR_LEN;
		(*n_l2)++;
	} else if (dev->mode == DEV_MODE_LCP) {
		next = ETHERNET_INPUT_NEXT_LCP_XC;
		error = 0;
		b->l2_len = ETH_HDR_LEN;
	} else {
		error = 0;
		next = l3_next(b, dev, &error);
	}
	if (next == ETHERNET_INPUT_NEXT_DROP)
		b->error = node_error(rt, error);
	if (unlikely(b->flags & BUFFER_F_TRACED))
		trace_one(rt, b, next, error);
	/* The L3 nodes start at their header; the trace saw the frame. */
	if (next == ETHERNET_INPUT_NEXT_IP4_INPUT || next == ETHERNET_INPUT_NEXT_ARP_INPUT ||
	    next == ETHERNET_INPUT_NEXT_IP6_INPUT)
		buffer_advance(b, ETH_HDR_LEN);
	return next;
}

/* The L3 frames of rx_if from the frame's start while four at a time
 * pass l3_fast_ok with type_be (a constant at each call); returns how
 * many were taken. The first node to read the packets: the next four's
 * data lines are prefetched, through pointers the next turn uses. */
static inline __attribute__((always_inline)) uint32_t l3_fast_loop(uint8_t *const base, const uint64_t stride,
								    const uint32_t *bi, uint32_t n, uint32_t rx_if,
								    uint32_t mac_0, uint16_t mac_4, uint16_t type_be)
{
#define B(k) ((struct buffer *)(base + bi[k] * stride))
	uint32_t i = 0;
	struct buffer *c0 = NULL, *c1 = NULL, *c2 = NULL, *c3 = NULL;
	if (n >= 4)
		c0 = B(0), c1 = B(1), c2 = B(2), c3 = B(3);
	for (; i + 4 <= n; i += 4) {
		struct buffer *b0 = c0, *b1 = c1, *b2 = c2, *b3 = c3;
		if (i + 8 <= n) {
			c0 = B(i + 4), c1 = B(i + 5), c2 = B(i + 6), c3 = B(i + 7);
			PREFETCH_READ(buffer_data(c0));
			PREFETCH_READ(buffer_data(c1));
			PREFETCH_READ(buffer_data(c2));
			PREFETCH_READ(buffer_data(c3));
		}
		if (unlikely(!(l3_fast_ok(b0, rx_if, mac_0, mac_4, type_be) &&
			       l3_fast_ok(b1, rx_if, mac_0, mac_4, type_be) &&
			       l3_fast_ok(b2, rx_if, mac_0, mac_4, type_be) &&
			       l3_fast_ok(b3, rx_if, mac_0, mac_4, type_be))))
			break;
		l3_take(b0);
		l3_take(b1);
		l3_take(b2);
		l3_take(b3);
	}
#undef B
	return i;
}

static uint32_t ethernet_input_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_l2 = 0, n_l3 = 0, i = 0;
	/* Locals: stores to buffers could otherwise alias the pool geometry. */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
#define B(k) ((struct buffer *)(base + bi[k] * stride))

	/* Frames come from one input burst: four at a time while all four are
	 * frames of the first one's interface that need nothing but the
	 * common case (an L2 interface's frames are decided from the header
	 * line alone; an L3 one's are IPv4 to its MAC, or IPv6 when the
	 * first frame is: bench/ip6's path, 58.6 instructions per packet
	 * through the general loop, 37.6 here, as IPv4); no per-frame
	 * interface lookup, no nexts[]. Instructions per packet (callgrind,
	 * vector 256, bench/ip4): 48.1 one at a time; 32.6 four at a time;
	 * 38.8 with the L3 loop's prefetch (taken from ip4-input, which had
	 * it as the first node to read the IP header). */
	const struct device *dev = n ? dev_by_index(B(0)->rx_if) : NULL;
	uint16_t fast_next = ETHERNET_INPUT_NEXT_IP4_INPUT, l3_fast = ETHERNET_INPUT_NEXT_IP4_INPUT;
	if (dev && dev->mode == DEV_MODE_L2_XCONNECT) {
		uint32_t rx_if = dev->index;
		for (; i + 4 <= n; i += 4) {
			struct buffer *b0 = B(i), *b1 = B(i + 1), *b2 = B(i + 2), *b3 = B(i + 3);
			if (unlikely(!(l2_fast_ok(b0, rx_if) && l2_fast_ok(b1, rx_if) && l2_fast_ok(b2, rx_if) &&
				       l2_fast_ok(b3, rx_if))))
				break;
			b0->l2_len = b1->l2_len = b2->l2_len = b3->l2_len = ETH_HDR_LEN;
		}
		fast_next = ETHERNET_INPUT_NEXT_L2_XCONNECT;
		n_l2 = i;
	} else if (dev && dev->mode == DEV_MODE_L3) {
		uint32_t rx_if = dev->index, mac_0;
		uint16_t mac_4;
		memcpy(&mac_0, dev->mac, sizeof(mac_0));
		memcpy(&mac_4, dev->mac + 4, sizeof(mac_4));
		bool ip6 = B(0)->current_length >= ETH_HDR_LEN && buffer_data(B(0))[12] == (ETH_TYPE_IP6 >> 8) &&
			   buffer_data(B(0))[13] == (ETH_TYPE_IP6 & 0xff);
		if (ip6)
			fast_next = l3_fast = ETHERNET_INPUT_NEXT_IP6_INPUT;
		/* The type a constant in each copy of the loop: in a register
		 * it cost IPv4 one instruction a packet. */
		i = ip6 ? l3_fast_loop(base, stride, bi, n, rx_if, mac_0, mac_4, htons(ETH_TYPE_IP6))
			: l3_fast_loop(base, stride, bi, n, rx_if, mac_0, mac_4, htons(ETH_TYPE_IP4));
		n_l3 = i;
	}

	/* One by one from there, the interface looked up again only when
	 * rx_if changes; an L2 interface's frames are decided from the header
	 * line alone, without touching data. */
	uint32_t last_if = DEV_INDEX_INVALID;
	for (uint32_t k = i; k < n; k++) {
		struct buffer *b = B(k);
		if (unlikely(b->rx_if != last_if)) {
			last_if = b->rx_if;
			dev = dev_by_index(last_if);
		}
		nexts[k] = input_one(rt, b, dev, &n_l2);
		n_l3 += nexts[k] == l3_fast;
	}
#undef B

	if (likely(n_l3 == n))
		node_forward_frame(rt, l3_fast, f);
	else if (n_l2 == n)
		node_forward_frame(rt, ETHERNET_INPUT_NEXT_L2_XCONNECT, f);
	else {
		for (uint32_t k = 0; k < i; k++)
			nexts[k] = fast_next;
		node_enqueue_to_nexts(rt, bi, nexts, n);
	}
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
		[ETHERNET_INPUT_NEXT_LCP_XC] = "lcp-xc",
		[ETHERNET_INPUT_NEXT_IP6_INPUT] = "ip6-input",
	},
	.n_errors = ETHERNET_INPUT_N_ERROR,
	.error_strings = ethernet_input_error_strings,
	.format_trace = ethernet_input_format_trace,
};
NODE_REGISTER(ethernet_input_node)
