/* ip4-input: IPv4 header validation, RFC 1812 §5.2.2, for every IPv4
 * packet ethernet-input hands over (the buffer starts at the IP header).
 *
 * In order, each failure under its own error: shorter than 20 bytes;
 * version not 4; IHL below 5; header (options included) longer than the
 * frame; total length beyond the frame; total length below the header;
 * header checksum. Then destinations this router never forwards: multicast
 * (no multicast routing) and the limited broadcast; then martian addresses
 * (RFC 1812 §5.3.7: a source in 0/8, 127/8 or 224/3, a destination in
 * 0/8 or 127/8); then unicast IP that arrived as link-layer broadcast or
 * multicast (§5.3.4: not forwarded, and not answered either: nobody
 * legitimate sends it; ethernet-input marks such frames BUFFER_F_L2_GROUP). Options and fragments
 * pass untouched (neither is processed here). Ethernet padding beyond the
 * total length is trimmed so that later nodes and the output see the IP
 * packet only (for a chained buffer the padding is left in place).
 *
 * Multicast to 224.0.0.0/24 (RFC 5771's local network control block:
 * OSPF, VRRP, RIP) that came in on a port paired with a Linux TAP goes to
 * lcp-punt instead of being dropped (nodes/lcp, docs/lcp.md).
 *
 * Next nodes: ip4-lookup, error-drop, lcp-punt.
 * Errors: the seven validation failures; multicast or broadcast
 *   destination; martian address; unicast IP in a link-layer broadcast.
 * Trace: source, destination, TTL, protocol, total length, and the error.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip4/ip4.h"
#include "nodes/lcp/lcp.h"

enum ip4_input_next {
	IP4_INPUT_NEXT_DROP = 0,
	IP4_INPUT_NEXT_LOOKUP,
	IP4_INPUT_NEXT_LCP_PUNT,
	IP4_INPUT_N_NEXT,
};

enum ip4_input_error {
	IP4_INPUT_ERROR_TOO_SHORT = 0,
	IP4_INPUT_ERROR_VERSION,
	IP4_INPUT_ERROR_IHL,
	IP4_INPUT_ERROR_HEADER_BEYOND_FRAME,
	IP4_INPUT_ERROR_LENGTH_BEYOND_FRAME,
	IP4_INPUT_ERROR_LENGTH_BELOW_HEADER,
	IP4_INPUT_ERROR_CHECKSUM,
	IP4_INPUT_ERROR_MULTICAST,
	IP4_INPUT_ERROR_MARTIAN,
	IP4_INPUT_ERROR_L2_BROADCAST,
	IP4_INPUT_N_ERROR,
};
#define IP4_INPUT_VALID IP4_INPUT_N_ERROR /* check()'s verdict for a good packet */
#define IP4_INPUT_PUNT (IP4_INPUT_N_ERROR + 1) /* link-local multicast for a paired port's TAP */

static const char *const ip4_input_error_strings[IP4_INPUT_N_ERROR] = {
	[IP4_INPUT_ERROR_TOO_SHORT] = "shorter than an IPv4 header",
	[IP4_INPUT_ERROR_VERSION] = "IP version not 4",
	[IP4_INPUT_ERROR_IHL] = "header length below 5 words",
	[IP4_INPUT_ERROR_HEADER_BEYOND_FRAME] = "header longer than the frame",
	[IP4_INPUT_ERROR_LENGTH_BEYOND_FRAME] = "total length beyond the frame",
	[IP4_INPUT_ERROR_LENGTH_BELOW_HEADER] = "total length below the header length",
	[IP4_INPUT_ERROR_CHECKSUM] = "bad header checksum",
	[IP4_INPUT_ERROR_MULTICAST] = "multicast or broadcast destination (not forwarded)",
	[IP4_INPUT_ERROR_MARTIAN] = "martian source or destination address",
	[IP4_INPUT_ERROR_L2_BROADCAST] = "unicast IP in a link-layer broadcast or multicast",
};

struct ip4_input_trace {
	uint32_t src, dst;
	uint16_t total_length;
	uint8_t ttl;
	uint8_t protocol;
	uint8_t error;
};
_Static_assert(sizeof(struct ip4_input_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip4_input_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip4_input_trace t;
	char s[16], d[16];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%s -> %s ttl %u proto %u length %u: %s", ip4_format_addr(s, t.src),
			ip4_format_addr(d, t.dst), t.ttl, t.protocol, t.total_length,
			t.error < IP4_INPUT_N_ERROR ? ip4_input_error_strings[t.error]
			: t.error == IP4_INPUT_PUNT ? "224.0.0.0/24 -> lcp-punt"
						    : "valid");
}

/* ---- helpers ---- */

/* RFC 1812 §5.3.7: "this network" (0/8) and loopback (127/8) either way,
 * and a class D or E source. Host order. */
static inline bool martian(uint32_t src, uint32_t dst)
{
	uint32_t s8 = src >> 24, d8 = dst >> 24;
	return s8 == 0 || s8 == 127 || s8 >= 224 || d8 == 0 || d8 == 127;
}

/* The verdict on one packet: IP4_INPUT_VALID or an error code. */
static inline uint16_t check(struct buffer *b, const struct ip4_header *h, uint32_t frame_len)
{
	if (unlikely(b->current_length < IP4_HDR_LEN))
		return IP4_INPUT_ERROR_TOO_SHORT;
	/* One compare for the common header: version 4, IHL 5. */
	if (unlikely(h->ver_ihl != 0x45)) {
		if ((h->ver_ihl >> 4) != 4)
			return IP4_INPUT_ERROR_VERSION;
		if ((h->ver_ihl & 0xf) < 5)
			return IP4_INPUT_ERROR_IHL;
		if (ip4_header_bytes(h) > b->current_length)
			return IP4_INPUT_ERROR_HEADER_BEYOND_FRAME;
	}
	uint32_t total = ntohs(h->total_length);
	if (unlikely(total > frame_len))
		return IP4_INPUT_ERROR_LENGTH_BEYOND_FRAME;
	if (unlikely(total < ip4_header_bytes(h)))
		return IP4_INPUT_ERROR_LENGTH_BELOW_HEADER;
	if (unlikely(!ip4_header_csum_ok(h)))
		return IP4_INPUT_ERROR_CHECKSUM;
	/* 224/4 and 255.255.255.255: the first byte >= 224 covers both with
	 * 240/4 (reserved, RFC 1812 §5.3.7: not forwarded either). */
	uint32_t dst = ntohl(h->dst), src = ntohl(h->src);
	if (unlikely((dst >> 28) >= 0xe))
		return (dst >> 8) == 0xe00000 && lcp_tap_of(b->rx_if) != DEV_INDEX_INVALID ? IP4_INPUT_PUNT
											    : IP4_INPUT_ERROR_MULTICAST;
	if (unlikely(martian(src, dst)))
		return IP4_INPUT_ERROR_MARTIAN;
	if (unlikely(b->flags & BUFFER_F_L2_GROUP))
		return IP4_INPUT_ERROR_L2_BROADCAST;
	if (unlikely(total < frame_len && !(b->flags & BUFFER_F_NEXT_PRESENT)))
		b->current_length = (uint16_t)total; /* Ethernet padding */
	return IP4_INPUT_VALID;
}

/* First address bytes check() refuses either way: 0/8 and 127/8, and
 * 224/3 (multicast and reserved as a destination, martian as a source). */
static const uint8_t unusual8[256] = { [0] = 1, [127] = 1, [224 ... 255] = 1 };

/* The common case, decided without a branch: one buffer, not traced, IHL
 * 5, total length within the frame, right checksum, ordinary addresses,
 * not from a link-layer broadcast; then the padding is trimmed. Returns 0
 * for it; anything else (current_length left alone) sends the packet
 * through check(), which finds the exact reason (or none).
 *
 * The checksum: the 20 bytes as two 64-bit words and one 32-bit word,
 * added with end-around carry. Their one's-complement sum folds to 0xffff
 * exactly when that sum is a non-zero multiple of 0xffff (2^16, 2^32 and
 * 2^64 are all 1 modulo 0xffff, so neither the word size nor the carries
 * change the residue), and it is non-zero when the first byte is 0x45.
 * The length test: total - 20 and len - total are both non-negative
 * (both are below 2^16, so the sign bit of their OR says). */
static inline bool fast_ok(struct buffer *b, const uint8_t *p)
{
	uint64_t q0, q1, s;
	uint32_t w4;
	uint16_t total_be;
	memcpy(&q0, p, sizeof(q0));
	memcpy(&q1, p + 8, sizeof(q1));
	memcpy(&w4, p + 16, sizeof(w4));
	memcpy(&total_be, p + 2, sizeof(total_be));
	uint64_t carry = __builtin_add_overflow(q0, q1, &s);
	carry = __builtin_add_overflow(s, (uint64_t)w4 + carry, &s);
	s += carry;
	uint32_t total = ntohs(total_be);
	if (!(p[0] == 0x45 && total >= IP4_HDR_LEN && total <= b->current_length && s % 0xffff == 0 &&
	      !(unusual8[p[12]] | unusual8[p[16]]) &&
	      !(b->flags & (BUFFER_F_NEXT_PRESENT | BUFFER_F_TRACED | BUFFER_F_L2_GROUP))))
		return false;
	b->current_length = (uint16_t)total; /* Ethernet padding, if any */
	return true;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, const struct ip4_header *h, uint16_t error)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct ip4_input_trace t = { .error = (uint8_t)error };
	if (b->current_length >= IP4_HDR_LEN) {
		t.src = h->src;
		t.dst = h->dst;
		t.ttl = h->ttl;
		t.protocol = h->protocol;
		t.total_length = ntohs(h->total_length);
	}
	memcpy(detail, &t, sizeof(t));
}

/* ---- the node ---- */

/* Every check for one packet, with its error and trace. */
static uint16_t input_one(struct node_runtime *rt, struct buffer *b)
{
	const struct ip4_header *h = (const struct ip4_header *)buffer_data(b);
	uint16_t error = check(b, h, eth_packet_length(b));
	uint16_t next = IP4_INPUT_NEXT_LOOKUP;
	if (likely(error == IP4_INPUT_VALID))
		ip4_opaque(b)->flags = 0;
	else if (error == IP4_INPUT_PUNT)
		next = IP4_INPUT_NEXT_LCP_PUNT;
	else {
		next = IP4_INPUT_NEXT_DROP;
		b->error = node_error(rt, error);
	}
	if (unlikely(b->flags & BUFFER_F_TRACED))
		trace_one(rt, b, h, error);
	return next;
}

static uint32_t ip4_input_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_off = 0, i = 0; /* packets not for ip4-lookup */
	/* Locals: stores to buffers could otherwise alias the pool geometry. */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
#define B(k) ((struct buffer *)(base + bi[k] * stride))

	/* Four at a time through fast_ok; a packet that is not the common
	 * case, or a traced one, goes through input_one. No prefetch:
	 * ethernet-input read these header lines within the same frame (and
	 * prefetched them). Instructions per packet (bench/ip4, callgrind,
	 * vector 256): 118.2 with one general loop (buffer_get,
	 * eth_packet_length and the generic checksum per packet); 68.2 with
	 * five 32-bit words summed branch-free, the Ethernet header read back
	 * for its group bit and the next four prefetched; 36.3 here (two 64-bit
	 * words and one 32-bit, carries folded back; the group bit from the
	 * buffer's flags; short-circuit tests). */
	for (; i + 4 <= n; i += 4) {
		struct buffer *b0 = B(i), *b1 = B(i + 1), *b2 = B(i + 2), *b3 = B(i + 3);
		if (likely(fast_ok(b0, buffer_data(b0)) && fast_ok(b1, buffer_data(b1)) && fast_ok(b2, buffer_data(b2)) &&
			   fast_ok(b3, buffer_data(b3)))) {
			ip4_opaque(b0)->flags = 0;
			ip4_opaque(b1)->flags = 0;
			ip4_opaque(b2)->flags = 0;
			ip4_opaque(b3)->flags = 0;
			nexts[i] = nexts[i + 1] = nexts[i + 2] = nexts[i + 3] = IP4_INPUT_NEXT_LOOKUP;
			continue;
		}
		struct buffer *b[4] = { b0, b1, b2, b3 };
		for (uint32_t k = 0; k < 4; k++) {
			nexts[i + k] = input_one(rt, b[k]);
			n_off += nexts[i + k] != IP4_INPUT_NEXT_LOOKUP;
		}
	}
	for (; i < n; i++) {
		nexts[i] = input_one(rt, B(i));
		n_off += nexts[i] != IP4_INPUT_NEXT_LOOKUP;
	}
#undef B

	if (likely(!n_off))
		node_forward_frame(rt, IP4_INPUT_NEXT_LOOKUP, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip4_input_node = {
	.name = "ip4-input",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip4_input_fn,
	.n_next = IP4_INPUT_N_NEXT,
	.next_nodes = {
		[IP4_INPUT_NEXT_DROP] = "error-drop",
		[IP4_INPUT_NEXT_LOOKUP] = "ip4-lookup",
		[IP4_INPUT_NEXT_LCP_PUNT] = "lcp-punt",
	},
	.n_errors = IP4_INPUT_N_ERROR,
	.error_strings = ip4_input_error_strings,
	.format_trace = ip4_input_format_trace,
};
NODE_REGISTER(ip4_input_node)
