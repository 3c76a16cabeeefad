/* icmp6-echo: answers ICMPv6 echo requests to the router's addresses and
 * joined groups (RFC 4443 §4.2), from ip6-local (which verified the
 * checksum), the buffer at the IPv6 header.
 *
 * The reply is the same buffer: extension headers of the request dropped,
 * source the address that was pinged (for a multicast destination, the rx
 * interface's address for the requester, RFC 4443 §4.2), destination the
 * requester, hop limit 64, type 129 and a fresh checksum over the
 * pseudo-header (the whole message is summed again, across a buffer chain
 * too: the source may change). Until ip6-lookup routes it, it goes back out
 * of the rx interface to the request's link-layer source.
 *
 * Next nodes: error-drop, interface-output.
 * Errors: echo replies sent (counted); request from the unspecified
 *   address; no source address for a multicast request.
 * Trace: requester, pinged address, id, sequence, and the verdict.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_interface.h"

enum icmp6_echo_next {
	ICMP6_ECHO_NEXT_DROP = 0,
	ICMP6_ECHO_NEXT_OUTPUT,
	ICMP6_ECHO_N_NEXT,
};

enum icmp6_echo_error {
	ICMP6_ECHO_ERROR_REPLIED = 0,
	ICMP6_ECHO_ERROR_UNSPECIFIED,
	ICMP6_ECHO_ERROR_NO_SOURCE,
	ICMP6_ECHO_N_ERROR,
};

static const char *const icmp6_echo_error_strings[ICMP6_ECHO_N_ERROR] = {
	[ICMP6_ECHO_ERROR_REPLIED] = "echo replies sent",
	[ICMP6_ECHO_ERROR_UNSPECIFIED] = "echo request from the unspecified address",
	[ICMP6_ECHO_ERROR_NO_SOURCE] = "no source address for the reply",
};

struct icmp6_echo_trace {
	struct in6_addr src, dst;
	uint16_t id, seq;
	uint8_t verdict;
};
_Static_assert(sizeof(struct icmp6_echo_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int icmp6_echo_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct icmp6_echo_trace t;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "echo request %s -> %s id %u seq %u: %s", ip6_format_addr(s, &t.src),
			ip6_format_addr(d, &t.dst), t.id, t.seq,
			t.verdict == ICMP6_ECHO_ERROR_REPLIED ? "replied" : icmp6_echo_error_strings[t.verdict]);
}

/* ---- helpers ---- */

/* Turn the request into the reply. Returns REPLIED or an error. */
static uint16_t reply(struct buffer *b)
{
	struct ip6_header *h = (struct ip6_header *)buffer_data(b);
	if (ip6_addr_is_unspecified(&h->src))
		return ICMP6_ECHO_ERROR_UNSPECIFIED;
	struct in6_addr src = h->dst;
	if (ip6_addr_is_multicast(&h->dst) && !ip6_if_source_for(b->rx_if, &h->src, &src))
		return ICMP6_ECHO_ERROR_NO_SOURCE;
	uint8_t peer_mac[6];
	memcpy(peer_mac, buffer_data(b) - ETH_HDR_LEN + 6, 6);
	/* Extension headers were the request's: the reply goes without. */
	uint32_t skip = ip6_opaque(b)->l4_offset - IP6_HDR_LEN;
	uint32_t l4_len = IP6_HDR_LEN + ntohs(h->payload_length) - ip6_opaque(b)->l4_offset;
	if (skip) {
		memmove((uint8_t *)h + skip, h, IP6_HDR_LEN);
		buffer_advance(b, (int)skip);
		h = (struct ip6_header *)buffer_data(b);
	}
	h->ver_tc_flow = htonl(6u << 28);
	h->payload_length = htons((uint16_t)l4_len);
	h->next_header = IP6_NH_ICMP6;
	h->hop_limit = IP6_HOP_LIMIT_DEFAULT;
	h->dst = h->src;
	h->src = src;
	struct icmp6_header *icmp = (struct icmp6_header *)(h + 1);
	icmp->type = ICMP6_ECHO_REPLY;
	icmp->code = 0;
	icmp->checksum = 0;
	uint32_t sum = 0;
	ip4_chain_sum(b, IP6_HDR_LEN, l4_len, &sum); /* ip6-local summed the same bytes */
	icmp->checksum = (uint16_t)~ip4_csum_fold(sum + ip4_csum_fold(ip6_pseudo_sum(h, l4_len, IP6_NH_ICMP6)));
	ip6_opaque(b)->flags |= IP6_OPAQUE_F_LOCAL_ORIGIN;
	b->flags &= ~BUFFER_F_L2_GROUP;
	ip6_eth_push(b, peer_mac);
	return ICMP6_ECHO_ERROR_REPLIED;
}

/* ---- the node ---- */

static uint32_t icmp6_echo_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t n_replied = 0;

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		struct icmp6_echo_trace t = { 0 };
		bool traced = b->flags & BUFFER_F_TRACED;
		if (unlikely(traced)) {
			const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
			const uint8_t *icmp = buffer_data(b) + ip6_opaque(b)->l4_offset;
			t.src = h->src;
			t.dst = h->dst;
			t.id = (uint16_t)(icmp[4] << 8 | icmp[5]);
			t.seq = (uint16_t)(icmp[6] << 8 | icmp[7]);
		}
		uint16_t verdict = reply(b);
		if (verdict == ICMP6_ECHO_ERROR_REPLIED) {
			nexts[i] = ICMP6_ECHO_NEXT_OUTPUT;
			n_replied++;
		} else {
			nexts[i] = ICMP6_ECHO_NEXT_DROP;
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
		node_count_error(rt, ICMP6_ECHO_ERROR_REPLIED, n_replied);
	if (likely(n_replied == n))
		node_forward_frame(rt, ICMP6_ECHO_NEXT_OUTPUT, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg icmp6_echo_node = {
	.name = "icmp6-echo",
	.type = NODE_TYPE_INTERNAL,
	.fn = icmp6_echo_fn,
	.n_next = ICMP6_ECHO_N_NEXT,
	.next_nodes = {
		[ICMP6_ECHO_NEXT_DROP] = "error-drop",
		[ICMP6_ECHO_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = ICMP6_ECHO_N_ERROR,
	.error_strings = icmp6_echo_error_strings,
	.format_trace = icmp6_echo_format_trace,
};
NODE_REGISTER(icmp6_echo_node)
