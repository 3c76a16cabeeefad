/* icmp4-echo: answers ICMP echo requests to the router's addresses
 * (RFC 792), the buffer at the IP header, from ip4-local.
 *
 * The request's ICMP checksum is verified over the whole message, across
 * a buffer chain when the request is larger than one buffer (the IP and
 * ICMP headers must lie in the first: a driver's chain always has them
 * there). The reply
 * is the same buffer: addresses swapped (the source is the address that was
 * pinged), TTL 64, a fresh header checksum, type 0, and the ICMP checksum
 * patched for the type change with RFC 1624 (the payload is not summed
 * again). It goes to ip4-lookup towards the requester, marked as sluice's
 * own so that ip4-rewrite leaves its TTL alone.
 *
 * Next nodes: error-drop, ip4-lookup.
 * Errors: echo replies sent (counted); bad ICMP checksum; truncated.
 * Trace: requester, pinged address, id, sequence, and the verdict.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ip4/ip4.h"

enum icmp4_echo_next {
	ICMP4_ECHO_NEXT_DROP = 0,
	ICMP4_ECHO_NEXT_LOOKUP,
	ICMP4_ECHO_N_NEXT,
};

enum icmp4_echo_error {
	ICMP4_ECHO_ERROR_REPLIED = 0,
	ICMP4_ECHO_ERROR_CHECKSUM,
	ICMP4_ECHO_ERROR_TRUNCATED,
	ICMP4_ECHO_N_ERROR,
};

static const char *const icmp4_echo_error_strings[ICMP4_ECHO_N_ERROR] = {
	[ICMP4_ECHO_ERROR_REPLIED] = "echo replies sent",
	[ICMP4_ECHO_ERROR_CHECKSUM] = "bad ICMP checksum",
	[ICMP4_ECHO_ERROR_TRUNCATED] = "echo request shorter than an ICMP header",
};

struct icmp4_echo_trace {
	uint32_t src, dst;
	uint16_t id, seq;
	uint8_t verdict;
};
_Static_assert(sizeof(struct icmp4_echo_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int icmp4_echo_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct icmp4_echo_trace t;
	char s[16], d[16];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "echo request %s -> %s id %u seq %u: %s", ip4_format_addr(s, t.src),
			ip4_format_addr(d, t.dst), t.id, t.seq,
			t.verdict == ICMP4_ECHO_ERROR_REPLIED ? "replied" : icmp4_echo_error_strings[t.verdict]);
}

/* ---- helpers ---- */

/* Check the request and turn it into the reply. Returns REPLIED or an error. */
static uint16_t reply(struct buffer *b)
{
	struct ip4_header *h = (struct ip4_header *)buffer_data(b);
	uint32_t ihl = ip4_header_bytes(h);
	uint32_t total = ntohs(h->total_length);
	if (total < ihl + ICMP4_HDR_LEN || ihl + ICMP4_HDR_LEN > b->current_length)
		return ICMP4_ECHO_ERROR_TRUNCATED;
	struct icmp4_header *icmp = (struct icmp4_header *)((uint8_t *)h + ihl);
	uint32_t sum;
	if (likely(!(b->flags & BUFFER_F_NEXT_PRESENT))) {
		if (total > b->current_length)
			return ICMP4_ECHO_ERROR_TRUNCATED;
		sum = ip4_csum_add(0, icmp, total - ihl);
	} else if (!ip4_chain_sum(b, ihl, total - ihl, &sum)) {
		return ICMP4_ECHO_ERROR_TRUNCATED;
	}
	if (ip4_csum_fold(sum) != 0xffff)
		return ICMP4_ECHO_ERROR_CHECKSUM;
	uint16_t old_word, new_word;
	memcpy(&old_word, icmp, 2);
	icmp->type = ICMP4_ECHO_REPLY;
	memcpy(&new_word, icmp, 2);
	icmp->checksum = ip4_csum_update16(icmp->checksum, old_word, new_word);
	uint32_t src = h->src;
	h->src = h->dst;
	h->dst = src;
	h->ttl = IP4_TTL_DEFAULT;
	ip4_header_csum_set(h);
	ip4_opaque(b)->flags |= IP4_OPAQUE_F_LOCAL_ORIGIN;
	return ICMP4_ECHO_ERROR_REPLIED;
}

/* ---- the node ---- */

static uint32_t icmp4_echo_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_replied = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		struct icmp4_echo_trace t = { 0 };
		bool traced = b->flags & BUFFER_F_TRACED;
		if (unlikely(traced)) {
			const struct ip4_header *h = (const struct ip4_header *)buffer_data(b);
			const struct icmp4_header *icmp =
				(const struct icmp4_header *)((const uint8_t *)h + ip4_header_bytes(h));
			t.src = h->src;
			t.dst = h->dst;
			t.id = ntohs(icmp->id);
			t.seq = ntohs(icmp->seq);
		}
		uint16_t verdict = reply(b);
		if (verdict == ICMP4_ECHO_ERROR_REPLIED) {
			nexts[i] = ICMP4_ECHO_NEXT_LOOKUP;
			n_replied++;
		} else {
			nexts[i] = ICMP4_ECHO_NEXT_DROP;
			b->error = node_error(rt, verdict);
		}
		if (unlikely(traced)) {
			uint8_t *detail = node_trace_detail(rt, b);
			if (detail) {
				t.verdict = (uint8_t)verdict;
				memcpy(detail, &t, sizeof(t));
			}
		}
	}
	if (n_replied)
		node_count_error(rt, ICMP4_ECHO_ERROR_REPLIED, n_replied);
	if (likely(n_replied == n))
		node_forward_frame(rt, ICMP4_ECHO_NEXT_LOOKUP, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg icmp4_echo_node = {
	.name = "icmp4-echo",
	.type = NODE_TYPE_INTERNAL,
	.fn = icmp4_echo_fn,
	.n_next = ICMP4_ECHO_N_NEXT,
	.next_nodes = {
		[ICMP4_ECHO_NEXT_DROP] = "error-drop",
		[ICMP4_ECHO_NEXT_LOOKUP] = "ip4-lookup",
	},
	.n_errors = ICMP4_ECHO_N_ERROR,
	.error_strings = icmp4_echo_error_strings,
	.format_trace = icmp4_echo_format_trace,
};
NODE_REGISTER(icmp4_echo_node)
