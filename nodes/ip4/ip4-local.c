/* ip4-local: IPv4 packets addressed to the router itself (a local
 * adjacency from ip4-lookup), the buffer at the IP header.
 *
 * ICMP echo requests that are not fragments go to icmp4-echo. The router
 * has no other local service: fragments (no reassembly), other ICMP and
 * every other protocol are punted: to lcp-punt, and so to Linux, when the
 * rx port is paired with a TAP (linux-cp: BGP, SSH, OSPF, Linux's own
 * pings' replies; docs/lcp.md), else counted and dropped, each under its
 * own error.
 *
 * Next nodes: error-drop, icmp4-echo, lcp-punt.
 * Errors: punt: protocol not handled; punt: ICMP type not handled;
 *   punt: fragment (no reassembly).
 * Trace: source, destination, protocol, ICMP type, and the verdict.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ip4/ip4.h"
#include "nodes/lcp/lcp.h"

enum ip4_local_next {
	IP4_LOCAL_NEXT_DROP = 0,
	IP4_LOCAL_NEXT_ECHO,
	IP4_LOCAL_NEXT_LCP_PUNT,
	IP4_LOCAL_N_NEXT,
};

enum ip4_local_error {
	IP4_LOCAL_ERROR_PROTOCOL = 0,
	IP4_LOCAL_ERROR_ICMP_TYPE,
	IP4_LOCAL_ERROR_FRAGMENT,
	IP4_LOCAL_N_ERROR,
};

static const char *const ip4_local_error_strings[IP4_LOCAL_N_ERROR] = {
	[IP4_LOCAL_ERROR_PROTOCOL] = "punt: protocol not handled",
	[IP4_LOCAL_ERROR_ICMP_TYPE] = "punt: ICMP type not handled",
	[IP4_LOCAL_ERROR_FRAGMENT] = "punt: fragment (no reassembly)",
};

#define VERDICT_ECHO 0xff
#define VERDICT_LCP 0xfe

struct ip4_local_trace {
	uint32_t src, dst;
	uint8_t protocol;
	uint8_t icmp_type;
	uint8_t verdict; /* error code, VERDICT_ECHO or VERDICT_LCP */
	uint8_t why;     /* VERDICT_LCP: the error code it would have been dropped under */
};
_Static_assert(sizeof(struct ip4_local_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip4_local_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip4_local_trace t;
	char s[16], d[16];
	memcpy(&t, detail, sizeof(t));
	if (t.verdict == VERDICT_LCP)
		return snprintf(buf, len, "%s -> %s proto %u icmp type %u: %s -> lcp-punt", ip4_format_addr(s, t.src),
				ip4_format_addr(d, t.dst), t.protocol, t.icmp_type, ip4_local_error_strings[t.why]);
	return snprintf(buf, len, "%s -> %s proto %u icmp type %u: %s", ip4_format_addr(s, t.src),
			ip4_format_addr(d, t.dst), t.protocol, t.icmp_type,
			t.verdict < IP4_LOCAL_N_ERROR ? ip4_local_error_strings[t.verdict] : "-> icmp4-echo");
}

/* ---- the node ---- */

static uint32_t ip4_local_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];

	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		const struct ip4_header *h = (const struct ip4_header *)buffer_data(b);
		uint32_t ihl = ip4_header_bytes(h);
		uint8_t type = ntohs(h->total_length) > ihl ? buffer_data(b)[ihl] : 0xff;
		uint16_t verdict;
		if (h->frag_off & htons(IP4_FRAG_MASK))
			verdict = IP4_LOCAL_ERROR_FRAGMENT;
		else if (h->protocol != IP4_PROTO_ICMP)
			verdict = IP4_LOCAL_ERROR_PROTOCOL;
		else if (type != ICMP4_ECHO_REQUEST)
			verdict = IP4_LOCAL_ERROR_ICMP_TYPE;
		else
			verdict = VERDICT_ECHO;
		uint16_t why = verdict;
		if (verdict == VERDICT_ECHO) {
			nexts[i] = IP4_LOCAL_NEXT_ECHO;
		} else if (lcp_tap_of(b->rx_if) != DEV_INDEX_INVALID) {
			verdict = VERDICT_LCP;
			nexts[i] = IP4_LOCAL_NEXT_LCP_PUNT;
		} else {
			nexts[i] = IP4_LOCAL_NEXT_DROP;
			b->error = node_error(rt, verdict);
		}
		if (unlikely(b->flags & BUFFER_F_TRACED)) {
			uint8_t *detail = node_trace_detail(rt, b);
			if (detail) {
				struct ip4_local_trace t = { .src = h->src,
							     .dst = h->dst,
							     .protocol = h->protocol,
							     .icmp_type = type,
							     .verdict = (uint8_t)verdict,
							     .why = (uint8_t)why };
				memcpy(detail, &t, sizeof(t));
			}
		}
	}
	node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip4_local_node = {
	.name = "ip4-local",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip4_local_fn,
	.n_next = IP4_LOCAL_N_NEXT,
	.next_nodes = {
		[IP4_LOCAL_NEXT_DROP] = "error-drop",
		[IP4_LOCAL_NEXT_ECHO] = "icmp4-echo",
		[IP4_LOCAL_NEXT_LCP_PUNT] = "lcp-punt",
	},
	.n_errors = IP4_LOCAL_N_ERROR,
	.error_strings = ip4_local_error_strings,
	.format_trace = ip4_local_format_trace,
};
NODE_REGISTER(ip4_local_node)
