/* ip6-local: IPv6 packets addressed to the router itself (one of its
 * addresses or a group it joined), from ip6-input, the buffer at the IPv6
 * header and ip6_opaque holding the upper layer's protocol and offset.
 *
 * ICMPv6 has its checksum verified over the pseudo-header (RFC 4443 §2.3,
 * RFC 8200 §8.1; across a buffer chain too) and goes by type: echo
 * requests to icmp6-echo, Neighbor Solicitations and Advertisements to
 * ip6-nd. The rest is counted and dropped, each under its own error:
 * fragments (no reassembly), MLD (RFC 2710/3810: sluice runs no multicast
 * routing and needs no reports to hear its own groups),
 * other ICMPv6 types, other protocols (no local service). Router
 * Solicitations go to ip6-rs. On a port mirrored into Linux (nodes/lcp),
 * fragments, other ICMPv6 types and other protocols (TCP and UDP to
 * sluice's addresses: BGP, SSH, DHCPv6; OSPFv3's 89, VRRP's 112; and the
 * link-scope groups ip6-input lets in for the daemons) go to lcp-punt
 * instead, as ip4-local's do: sluice keeps echo, NS/NA and RS for itself
 * (docs/lcp.md says which packets go where).
 *
 * Next nodes: error-drop, icmp6-echo, ip6-nd, ip6-rs, lcp-punt.
 * Errors: fragment; ICMPv6 truncated; bad ICMPv6 checksum; MLD; ICMPv6
 *   type not handled; protocol not handled.
 * Trace: source, destination, upper-layer protocol, ICMPv6 type, verdict.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ip6/ip6.h"
#include "nodes/lcp/lcp.h"

enum ip6_local_next {
	IP6_LOCAL_NEXT_DROP = 0,
	IP6_LOCAL_NEXT_ECHO,
	IP6_LOCAL_NEXT_ND,
	IP6_LOCAL_NEXT_RS,
	IP6_LOCAL_NEXT_LCP_PUNT,
	IP6_LOCAL_N_NEXT,
};

enum ip6_local_error {
	IP6_LOCAL_ERROR_FRAGMENT = 0,
	IP6_LOCAL_ERROR_TRUNCATED,
	IP6_LOCAL_ERROR_CHECKSUM,
	IP6_LOCAL_ERROR_MLD,
	IP6_LOCAL_ERROR_ICMP_TYPE,
	IP6_LOCAL_ERROR_PROTOCOL,
	IP6_LOCAL_N_ERROR,
};

static const char *const ip6_local_error_strings[IP6_LOCAL_N_ERROR] = {
	[IP6_LOCAL_ERROR_FRAGMENT] = "fragment to sluice (no reassembly)",
	[IP6_LOCAL_ERROR_TRUNCATED] = "ICMPv6 shorter than its header",
	[IP6_LOCAL_ERROR_CHECKSUM] = "bad ICMPv6 checksum",
	[IP6_LOCAL_ERROR_MLD] = "MLD message (counted, not answered)",
	[IP6_LOCAL_ERROR_ICMP_TYPE] = "ICMPv6 type not handled",
	[IP6_LOCAL_ERROR_PROTOCOL] = "protocol not handled",
};

#define VERDICT_ECHO 0xff
#define VERDICT_ND 0xfe
#define VERDICT_RS 0xfd
#define VERDICT_LCP 0xfc

struct ip6_local_trace {
	struct in6_addr src, dst;
	uint8_t l4_proto;
	uint8_t icmp_type;
	uint8_t verdict; /* error code, VERDICT_ECHO, VERDICT_ND or VERDICT_RS */
};
_Static_assert(sizeof(struct ip6_local_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip6_local_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip6_local_trace t;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%s -> %s proto %u icmp6 type %u: %s", ip6_format_addr(s, &t.src),
			ip6_format_addr(d, &t.dst), t.l4_proto, t.icmp_type,
			t.verdict < IP6_LOCAL_N_ERROR ? ip6_local_error_strings[t.verdict]
			: t.verdict == VERDICT_ECHO   ? "-> icmp6-echo"
			: t.verdict == VERDICT_RS     ? "-> ip6-rs"
			: t.verdict == VERDICT_LCP    ? "-> lcp-punt"
						      : "-> ip6-nd");
}

/* ---- helpers ---- */

/* ICMPv6 of b: checked, then by type. */
static uint16_t icmp6(struct buffer *b, const struct ip6_header *h, uint8_t *type)
{
	const struct ip6_opaque *o = ip6_opaque(b);
	uint32_t l4_len = IP6_HDR_LEN + ntohs(h->payload_length) - o->l4_offset;
	if (l4_len < ICMP6_HDR_LEN || (uint32_t)o->l4_offset + ICMP6_HDR_LEN > b->current_length)
		return IP6_LOCAL_ERROR_TRUNCATED;
	uint32_t sum;
	if (!ip4_chain_sum(b, o->l4_offset, l4_len, &sum))
		return IP6_LOCAL_ERROR_TRUNCATED;
	if (ip4_csum_fold(sum + ip4_csum_fold(ip6_pseudo_sum(h, l4_len, IP6_NH_ICMP6))) != 0xffff)
		return IP6_LOCAL_ERROR_CHECKSUM;
	*type = buffer_data(b)[o->l4_offset];
	switch (*type) {
	case ICMP6_ECHO_REQUEST:
		return VERDICT_ECHO;
	case ICMP6_ND_NS:
	case ICMP6_ND_NA:
		return VERDICT_ND;
	case ICMP6_MLD_QUERY:
	case ICMP6_MLD_REPORT:
	case ICMP6_MLD_DONE:
	case ICMP6_MLD2_REPORT:
		return IP6_LOCAL_ERROR_MLD;
	case ICMP6_ND_RS:
		return VERDICT_RS;
	default:
		return IP6_LOCAL_ERROR_ICMP_TYPE;
	}
}

static uint16_t local_one(struct buffer *b, uint8_t *type)
{
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	switch (ip6_opaque(b)->l4_proto) {
	case IP6_NH_FRAGMENT:
		return IP6_LOCAL_ERROR_FRAGMENT;
	case IP6_NH_ICMP6:
		return icmp6(b, h, type);
	default:
		return IP6_LOCAL_ERROR_PROTOCOL;
	}
}

/* ---- the node ---- */

static uint32_t ip6_local_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint8_t type = 0xff;
		uint16_t verdict = local_one(b, &type);
		if (verdict == VERDICT_ECHO) {
			nexts[i] = IP6_LOCAL_NEXT_ECHO;
		} else if (verdict == VERDICT_ND) {
			nexts[i] = IP6_LOCAL_NEXT_ND;
		} else if (verdict == VERDICT_RS) {
			nexts[i] = IP6_LOCAL_NEXT_RS;
		} else if (verdict != IP6_LOCAL_ERROR_TRUNCATED && verdict != IP6_LOCAL_ERROR_CHECKSUM &&
			   verdict != IP6_LOCAL_ERROR_MLD && lcp_tap_of(b->rx_if) != DEV_INDEX_INVALID) {
			verdict = VERDICT_LCP; /* Linux's, through the port's TAP */
			nexts[i] = IP6_LOCAL_NEXT_LCP_PUNT;
		} else {
			nexts[i] = IP6_LOCAL_NEXT_DROP;
			b->error = node_error(rt, verdict);
		}
		if (unlikely(b->flags & BUFFER_F_TRACED)) {
			uint8_t *detail = node_trace_detail(rt, b);
			const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
			if (detail) {
				struct ip6_local_trace t = { .src = h->src,
							     .dst = h->dst,
							     .l4_proto = ip6_opaque(b)->l4_proto,
							     .icmp_type = type,
							     .verdict = (uint8_t)verdict };
				memcpy(detail, &t, sizeof(t));
			}
		}
	}
	node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip6_local_node = {
	.name = "ip6-local",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_local_fn,
	.n_next = IP6_LOCAL_N_NEXT,
	.next_nodes = {
		[IP6_LOCAL_NEXT_DROP] = "error-drop",
		[IP6_LOCAL_NEXT_ECHO] = "icmp6-echo",
		[IP6_LOCAL_NEXT_ND] = "ip6-nd",
		[IP6_LOCAL_NEXT_RS] = "ip6-rs",
		[IP6_LOCAL_NEXT_LCP_PUNT] = "lcp-punt",
	},
	.n_errors = IP6_LOCAL_N_ERROR,
	.error_strings = ip6_local_error_strings,
	.format_trace = ip6_local_format_trace,
};
NODE_REGISTER(ip6_local_node)
