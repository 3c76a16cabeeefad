/* ip6-input: IPv6 header validation, RFC 8200, for every IPv6 packet
 * ethernet-input hands over (the buffer starts at the IPv6 header).
 *
 * In order, each failure under its own error: shorter than 40 bytes;
 * version not 6; payload length beyond the frame; IPv6 not enabled on the
 * rx interface (by an address or `enable ip6 interface`). Then addresses
 * (RFC 4291): a multicast source; loopback either way; an unspecified
 * destination; IPv4-mapped or -compatible either way; multicast of
 * interface-local or reserved scope (§2.7: never on a link); link-scope
 * multicast the interface has not joined (all-nodes, all-routers and the
 * solicited-node addresses of its own are joined, §2.8); multicast beyond
 * link scope (no multicast routing); unicast in a link-layer group frame.
 * Packets to one of sluice's addresses or joined groups are local; the
 * others are transit, where an unspecified source and link-local
 * addresses (§2.5.6: never forwarded off the link) are dropped too.
 *
 * Then the extension headers are walked to the upper layer (ip6_ext.h:
 * bounded in number and length; Hop-by-Hop options honoured, router alert
 * noted; RFC 5095's Routing Header type 0: Parameter Problem when to us
 * with segments left, dropped in transit with segments left). The walk
 * leaves the upper layer's offset and protocol in ip6_opaque for
 * ip6-local. Transit with hop limit 1 or 0 gets Time Exceeded (RFC 4443
 * §3.3). Ethernet padding beyond the payload length is trimmed.
 *
 * ICMPv6 errors (Parameter Problem, Time Exceeded) are built in place by
 * icmp6_error_make (rate-limited; RFC 4443 §2.4(e)) and go out of the rx
 * interface; a packet whose error is sent counts under its cause and
 * "ICMPv6 error sent", one whose error may not be sent is dropped under its
 * cause and counts "not allowed" or "rate-limited" too.
 *
 * Transit goes to ip6-lookup (IP6_INPUT_LOOKUP_NODE; the "transit: no
 * IPv6 FIB wired" counter stays for builds that set it to error-drop).
 *
 * The common packet (fast_ok: no extension header, hop limit above 1,
 * global or unique-local addresses both ways, ...) passes every check
 * above whether it is to sluice or in transit: it goes to ip6-lookup
 * without the "for us" lookup, and ip6-lookup's local adjacency sends it to
 * ip6-local when it is sluice's (as IPv4 leaves locality to ip4-lookup).
 * The rest take the checks one by one (docs/ipv6.md, the path's cost).
 *
 * Next nodes: error-drop, ip6-lookup (transit, and the common packet to
 *   sluice), ip6-local, interface-output (ICMPv6 errors).
 * Errors: the causes above; ICMPv6 error sent, rate-limited, not allowed.
 * Trace: source, destination, hop limit, next header, payload length,
 *   upper layer, and the verdict.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/icmp6_error.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_ext.h"
#include "nodes/ip6/ip6_interface.h"
#include "nodes/lcp/lcp.h"

/* Transit's next node: the main IPv6 FIB's lookup (nodes/ip6/ip6_route.h). */
#define IP6_INPUT_LOOKUP_NODE "ip6-lookup"
#define IP6_INPUT_HAVE_LOOKUP 1

enum ip6_input_next {
	IP6_INPUT_NEXT_DROP = 0,
	IP6_INPUT_NEXT_LOOKUP,
	IP6_INPUT_NEXT_LOCAL,
	IP6_INPUT_NEXT_OUTPUT,
	IP6_INPUT_N_NEXT,
};

/* The extension-header verdicts first, in ip6_ext.h's order. */
enum ip6_input_error {
	IP6_INPUT_ERROR_EXT_TOO_MANY = IP6_EXT_TOO_MANY - 1,
	IP6_INPUT_ERROR_EXT_TOO_LONG,
	IP6_INPUT_ERROR_EXT_TRUNCATED,
	IP6_INPUT_ERROR_HBH_NOT_FIRST,
	IP6_INPUT_ERROR_OPT_TOO_MANY,
	IP6_INPUT_ERROR_OPT_TRUNCATED,
	IP6_INPUT_ERROR_OPT_DISCARD,
	IP6_INPUT_ERROR_OPT_UNKNOWN,
	IP6_INPUT_ERROR_RH0,
	IP6_INPUT_ERROR_RH_UNKNOWN,
	IP6_INPUT_ERROR_RH0_TRANSIT,
	IP6_INPUT_ERROR_TOO_SHORT,
	IP6_INPUT_ERROR_VERSION,
	IP6_INPUT_ERROR_LENGTH_BEYOND_FRAME,
	IP6_INPUT_ERROR_NOT_ENABLED,
	IP6_INPUT_ERROR_SRC_MULTICAST,
	IP6_INPUT_ERROR_LOOPBACK,
	IP6_INPUT_ERROR_DST_UNSPECIFIED,
	IP6_INPUT_ERROR_V4_EMBEDDED,
	IP6_INPUT_ERROR_MCAST_SCOPE,
	IP6_INPUT_ERROR_MCAST_NOT_JOINED,
	IP6_INPUT_ERROR_MCAST_ROUTING,
	IP6_INPUT_ERROR_L2_GROUP,
	IP6_INPUT_ERROR_SRC_UNSPECIFIED,
	IP6_INPUT_ERROR_LINK_LOCAL,
	IP6_INPUT_ERROR_HOP_LIMIT,
	IP6_INPUT_ERROR_NO_LOOKUP,
	IP6_INPUT_ERROR_ICMP_SENT,
	IP6_INPUT_ERROR_ICMP_RATE_LIMITED,
	IP6_INPUT_ERROR_ICMP_NOT_ALLOWED,
	IP6_INPUT_N_ERROR,
};
_Static_assert(IP6_INPUT_ERROR_RH0_TRANSIT == IP6_EXT_RH0_TRANSIT - 1, "ip6_ext.h's order");
#define IP6_INPUT_LOCAL IP6_INPUT_N_ERROR         /* check()'s verdict: for us */
#define IP6_INPUT_TRANSIT (IP6_INPUT_N_ERROR + 1) /* check()'s verdict: to forward */

static const char *const ip6_input_error_strings[IP6_INPUT_N_ERROR] = {
	[IP6_INPUT_ERROR_EXT_TOO_MANY] = "more than 8 extension headers",
	[IP6_INPUT_ERROR_EXT_TOO_LONG] = "extension headers longer than 512 bytes",
	[IP6_INPUT_ERROR_EXT_TRUNCATED] = "extension header beyond the packet",
	[IP6_INPUT_ERROR_HBH_NOT_FIRST] = "Hop-by-Hop header not first",
	[IP6_INPUT_ERROR_OPT_TOO_MANY] = "more than 16 options in an options header",
	[IP6_INPUT_ERROR_OPT_TRUNCATED] = "option beyond its header",
	[IP6_INPUT_ERROR_OPT_DISCARD] = "unrecognized option (discard silently)",
	[IP6_INPUT_ERROR_OPT_UNKNOWN] = "unrecognized option (Parameter Problem)",
	[IP6_INPUT_ERROR_RH0] = "Routing Header type 0 with segments left (RFC 5095)",
	[IP6_INPUT_ERROR_RH_UNKNOWN] = "unrecognized Routing type with segments left",
	[IP6_INPUT_ERROR_RH0_TRANSIT] = "Routing Header type 0 in transit (dropped: policy)",
	[IP6_INPUT_ERROR_TOO_SHORT] = "shorter than an IPv6 header",
	[IP6_INPUT_ERROR_VERSION] = "IP version not 6",
	[IP6_INPUT_ERROR_LENGTH_BEYOND_FRAME] = "payload length beyond the frame",
	[IP6_INPUT_ERROR_NOT_ENABLED] = "IPv6 not enabled on the interface",
	[IP6_INPUT_ERROR_SRC_MULTICAST] = "multicast source address",
	[IP6_INPUT_ERROR_LOOPBACK] = "loopback source or destination address",
	[IP6_INPUT_ERROR_DST_UNSPECIFIED] = "unspecified destination address",
	[IP6_INPUT_ERROR_V4_EMBEDDED] = "IPv4-mapped or -compatible address",
	[IP6_INPUT_ERROR_MCAST_SCOPE] = "multicast of interface-local or reserved scope",
	[IP6_INPUT_ERROR_MCAST_NOT_JOINED] = "link-scope multicast group not joined",
	[IP6_INPUT_ERROR_MCAST_ROUTING] = "multicast beyond link scope (not forwarded)",
	[IP6_INPUT_ERROR_L2_GROUP] = "unicast IPv6 in a link-layer broadcast or multicast",
	[IP6_INPUT_ERROR_SRC_UNSPECIFIED] = "unspecified source in transit",
	[IP6_INPUT_ERROR_LINK_LOCAL] = "link-local source or destination in transit",
	[IP6_INPUT_ERROR_HOP_LIMIT] = "hop limit exceeded in transit",
	[IP6_INPUT_ERROR_NO_LOOKUP] = "transit: no IPv6 FIB wired (ip6-lookup missing)",
	[IP6_INPUT_ERROR_ICMP_SENT] = "ICMPv6 error sent",
	[IP6_INPUT_ERROR_ICMP_RATE_LIMITED] = "ICMPv6 error rate-limited (packet dropped)",
	[IP6_INPUT_ERROR_ICMP_NOT_ALLOWED] = "ICMPv6 error not allowed (packet dropped)",
};

struct ip6_input_trace {
	struct in6_addr src, dst;
	uint16_t payload_length;
	uint16_t l4_offset;
	uint8_t hop_limit;
	uint8_t next_header;
	uint8_t l4_proto;
	uint8_t verdict;
};
_Static_assert(sizeof(struct ip6_input_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip6_input_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip6_input_trace t;
	char s[INET6_ADDRSTRLEN], d[INET6_ADDRSTRLEN];
	memcpy(&t, detail, sizeof(t));
	const char *v = t.verdict < IP6_INPUT_N_ERROR ? ip6_input_error_strings[t.verdict]
			: t.verdict == IP6_INPUT_LOCAL ? "local -> ip6-local"
						       : "transit -> ip6-lookup";
	return snprintf(buf, len, "%s -> %s hlim %u nh %u length %u upper %u at %u: %s", ip6_format_addr(s, &t.src),
			ip6_format_addr(d, &t.dst), t.hop_limit, t.next_header, t.payload_length, t.l4_proto,
			t.l4_offset, v);
}

/* ---- helpers ---- */

/* A multicast destination: local when joined (link scope), else why not. */
static uint16_t multicast_dst(uint32_t rx_if, const ip6_addr_a2 *dst)
{
	uint8_t scope = ip6_mcast_scope(dst);
	if (scope <= 1)
		return IP6_INPUT_ERROR_MCAST_SCOPE;
	if (scope > 2)
		return IP6_INPUT_ERROR_MCAST_ROUTING;
	if (ip6_if_is_joined(rx_if, dst))
		return IP6_INPUT_LOCAL;
	/* On a port mirrored into Linux, the link-scope groups routing daemons
	 * join there (OSPFv3's ff02::5/6, VRRP's ff02::12, DHCPv6's ff02::1:2,
	 * RIPng's ff02::9, PIM's ff02::d) are local too: ip6-local punts them
	 * (docs/lcp.md). Not others' solicited-node groups: their NS is no one's here. */
	return lcp_tap_of(rx_if) != DEV_INDEX_INVALID && !ip6_addr_is_solicited_node(dst)
		       ? IP6_INPUT_LOCAL
		       : IP6_INPUT_ERROR_MCAST_NOT_JOINED;
}

/* The address checks: IP6_INPUT_LOCAL, IP6_INPUT_TRANSIT or an error. */
static uint16_t addresses(const struct buffer *b, const struct ip6_header *h)
{
	if (ip6_addr_is_multicast(&h->src))
		return IP6_INPUT_ERROR_SRC_MULTICAST;
	if (ip6_addr_is_loopback(&h->src) || ip6_addr_is_loopback(&h->dst))
		return IP6_INPUT_ERROR_LOOPBACK;
	if (ip6_addr_is_unspecified(&h->dst))
		return IP6_INPUT_ERROR_DST_UNSPECIFIED;
	if (ip6_addr_is_v4_embedded(&h->src) || ip6_addr_is_v4_embedded(&h->dst))
		return IP6_INPUT_ERROR_V4_EMBEDDED;
	if (ip6_addr_is_multicast(&h->dst))
		return multicast_dst(b->rx_if, &h->dst);
	if (b->flags & BUFFER_F_L2_GROUP)
		return IP6_INPUT_ERROR_L2_GROUP;
	if (ip6_is_for_us(b->rx_if, &h->dst))
		return IP6_INPUT_LOCAL;
	if (ip6_addr_is_unspecified(&h->src))
		return IP6_INPUT_ERROR_SRC_UNSPECIFIED;
	if (ip6_addr_is_link_local(&h->src) || ip6_addr_is_link_local(&h->dst))
		return IP6_INPUT_ERROR_LINK_LOCAL;
	return IP6_INPUT_TRANSIT;
}

/* The verdict on one packet: IP6_INPUT_LOCAL, IP6_INPUT_TRANSIT or an
 * error code; w gets the walk (and the Parameter Problem to send). */
static uint16_t check(struct buffer *b, const struct ip6_header *h, uint32_t frame_len, struct ip6_ext_walk *w)
{
	if (unlikely(b->current_length < IP6_HDR_LEN))
		return IP6_INPUT_ERROR_TOO_SHORT;
	if (unlikely((buffer_data(b)[0] >> 4) != 6))
		return IP6_INPUT_ERROR_VERSION;
	uint32_t total = IP6_HDR_LEN + ntohs(h->payload_length);
	if (unlikely(total > frame_len))
		return IP6_INPUT_ERROR_LENGTH_BEYOND_FRAME;
	if (unlikely(!ip6_if(b->rx_if)))
		return IP6_INPUT_ERROR_NOT_ENABLED;
	uint16_t where = addresses(b, h);
	if (where < IP6_INPUT_N_ERROR)
		return where;
	if (total < frame_len && !(b->flags & BUFFER_F_NEXT_PRESENT))
		b->current_length = (uint16_t)total; /* Ethernet padding */
	/* The walk reads the first buffer only: RFC 7112 puts the whole
	 * chain in the first fragment, and the first buffer holds 2 KB. */
	uint32_t walk_len = MIN(total, (uint32_t)b->current_length);
	enum ip6_ext_verdict v =
		ip6_ext_walk(buffer_data(b), walk_len, where == IP6_INPUT_LOCAL, ip6_addr_is_multicast(&h->dst), w);
	if (v != IP6_EXT_OK)
		return (uint16_t)(v - 1);
	if (where == IP6_INPUT_TRANSIT && h->hop_limit <= 1)
		return IP6_INPUT_ERROR_HOP_LIMIT;
	return where;
}

/* The ICMPv6 error a cause sends, if any: type (0: none), code, param. */
static uint8_t error_to_send(uint16_t cause, const struct ip6_ext_walk *w, uint8_t *code, uint32_t *param)
{
	switch (cause) {
	case IP6_INPUT_ERROR_HBH_NOT_FIRST:
	case IP6_INPUT_ERROR_OPT_UNKNOWN:
	case IP6_INPUT_ERROR_RH0:
	case IP6_INPUT_ERROR_RH_UNKNOWN:
		*code = w->icmp_code;
		*param = w->pointer;
		return ICMP6_PARAM_PROBLEM;
	case IP6_INPUT_ERROR_HOP_LIMIT:
		*code = 0; /* hop limit exceeded in transit */
		*param = 0;
		return ICMP6_TIME_EXCEEDED;
	default:
		return 0;
	}
}

struct ip6_input_state {
	struct icmp6_error_bucket *bucket;
	uint64_t now;
};

/* A packet with an error: an ICMPv6 error about it when one is due and
 * allowed (next: output), else dropped under its cause. */
static uint16_t fail(struct node_runtime *rt, struct ip6_input_state *st, struct buffer *b, uint16_t cause,
		     const struct ip6_ext_walk *w)
{
	uint8_t code;
	uint32_t param;
	uint8_t type = error_to_send(cause, w, &code, &param);
	if (type) {
		enum icmp6_error_verdict v = icmp6_error_make(st->bucket, &st->now, b, type, code, param);
		if (v == ICMP6_ERROR_BUILT) {
			node_count_error(rt, cause, 1);
			node_count_error(rt, IP6_INPUT_ERROR_ICMP_SENT, 1);
			return IP6_INPUT_NEXT_OUTPUT;
		}
		node_count_error(rt, v == ICMP6_ERROR_RATE_LIMITED ? IP6_INPUT_ERROR_ICMP_RATE_LIMITED
								   : IP6_INPUT_ERROR_ICMP_NOT_ALLOWED, 1);
	}
	b->error = node_error(rt, cause);
	return IP6_INPUT_NEXT_DROP;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, const struct ip6_input_trace *t)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (detail)
		memcpy(detail, t, sizeof(*t));
}

/* ---- the node ---- */

static uint16_t input_one(struct node_runtime *rt, struct ip6_input_state *st, struct buffer *b)
{
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	struct ip6_ext_walk w = { .l4_proto = 0xff };
	struct ip6_input_trace t = { 0 };
	bool traced = b->flags & BUFFER_F_TRACED;
	if (unlikely(traced) && b->current_length >= IP6_HDR_LEN)
		t = (struct ip6_input_trace){ .src = h->src,
					      .dst = h->dst,
					      .payload_length = ntohs(h->payload_length),
					      .hop_limit = h->hop_limit,
					      .next_header = h->next_header };
	uint16_t verdict = check(b, h, eth_packet_length(b), &w);
	struct ip6_opaque *o = ip6_opaque(b);
	o->flags = w.router_alert ? IP6_OPAQUE_F_ROUTER_ALERT : 0;
	o->l4_proto = w.l4_proto;
	o->l4_offset = w.l4_offset;
	uint16_t next;
	if (verdict == IP6_INPUT_LOCAL) {
		next = IP6_INPUT_NEXT_LOCAL;
	} else if (verdict == IP6_INPUT_TRANSIT) {
		next = IP6_INPUT_NEXT_LOOKUP;
		if (!IP6_INPUT_HAVE_LOOKUP)
			b->error = node_error(rt, IP6_INPUT_ERROR_NO_LOOKUP);
	} else {
		next = fail(rt, st, b, verdict, &w);
	}
	if (unlikely(traced)) {
		t.l4_proto = w.l4_proto;
		t.l4_offset = w.l4_offset;
		t.verdict = (uint8_t)verdict;
		trace_one(rt, b, &t);
	}
	return next;
}

/* First address bytes of the common case, either way: global unicast
 * (2000::/3, RFC 4291 §2.4) and unique local (fc00::/7, RFC 4193). None
 * is multicast, loopback, unspecified, IPv4-mapped or -compatible (all
 * under 0000::/8) or link-local (fe80::/10): of addresses(), only "one of
 * sluice's" is left to decide, and ip6-lookup does (the local /128 every
 * global address has in the main FIB, the weak host model). */
static const uint8_t ordinary8[256] = { [0x20 ... 0x3f] = 1, [0xfc ... 0xfd] = 1 };

/* The common case, decided without a branch: one buffer, not traced, not
 * from a link-layer group, on the interface the frame's first packet came
 * in on (IPv6 enabled there: en_if, else never equal), version 6, payload
 * length within the buffer, no extension header, hop limit above 1, both
 * addresses ordinary (above). Every check() makes gives such a packet
 * "valid" whether it is to sluice or in transit, and its walk ends at the
 * fixed header; so it goes to ip6-lookup, whose adjacency says which, as
 * ip4-input leaves locality to ip4-lookup. Then the padding is trimmed and
 * the opaque set as the walk would. Anything else (current_length left
 * alone) goes through input_one, which finds the exact reason (or none). */
static inline bool fast_ok(struct buffer *b, const uint8_t *p, uint32_t en_if)
{
	uint16_t plen_be;
	memcpy(&plen_be, p + 4, sizeof(plen_be));
	uint32_t total = IP6_HDR_LEN + (uint32_t)ntohs(plen_be);
	if (!((p[0] >> 4) == 6 && total <= b->current_length && !ip6_ext_is_header[p[6]] && p[7] > 1 &&
	      (ordinary8[p[8]] & ordinary8[p[24]]) && b->rx_if == en_if &&
	      !(b->flags & (BUFFER_F_NEXT_PRESENT | BUFFER_F_TRACED | BUFFER_F_L2_GROUP))))
		return false;
	b->current_length = (uint16_t)total; /* Ethernet padding, if any */
	return true;
}

static inline void fast_opaque(struct buffer *b, const uint8_t *p)
{
	struct ip6_opaque *o = ip6_opaque(b);
	o->flags = 0;
	o->l4_proto = p[6];
	o->l4_offset = IP6_HDR_LEN;
}

static uint32_t ip6_input_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	struct ip6_input_state st = { .bucket = rt->data };
	uint32_t n_off = 0, i = 0; /* packets not for ip6-lookup */
	/* Locals: stores to buffers could otherwise alias the pool geometry. */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
#define B(k) ((struct buffer *)(base + bi[k] * stride))
	/* A frame comes from one interface as a rule: IPv6 enabled there is
	 * looked up once (UINT32_MAX matches no buffer's rx_if). */
	uint32_t en_if = B(0)->rx_if;
	if (!ip6_if(en_if))
		en_if = UINT32_MAX;

	/* Four at a time through fast_ok; a packet that is not the common
	 * case goes through input_one. No prefetch: ethernet-input read these
	 * headers within the same frame. Instructions per packet (bench/ip6,
	 * callgrind, vector 256, 1 route): 225.1 with input_one for every
	 * packet (the full address checks, a FIB lookup for "for us", the
	 * walk's call); 43.8 here (docs/ipv6.md). */
	for (; i + 4 <= n; i += 4) {
		struct buffer *b0 = B(i), *b1 = B(i + 1), *b2 = B(i + 2), *b3 = B(i + 3);
		const uint8_t *p0 = buffer_data(b0), *p1 = buffer_data(b1), *p2 = buffer_data(b2),
			      *p3 = buffer_data(b3);
		if (likely(IP6_INPUT_HAVE_LOOKUP && fast_ok(b0, p0, en_if) && fast_ok(b1, p1, en_if) && fast_ok(b2, p2, en_if) &&
			   fast_ok(b3, p3, en_if))) {
			fast_opaque(b0, p0);
			fast_opaque(b1, p1);
			fast_opaque(b2, p2);
			fast_opaque(b3, p3);
			nexts[i] = nexts[i + 1] = nexts[i + 2] = nexts[i + 3] = IP6_INPUT_NEXT_LOOKUP;
			continue;
		}
		/* fast_ok trimmed the ones it passed: input_one agrees. */
		for (uint32_t k = 0; k < 4; k++) {
			nexts[i + k] = input_one(rt, &st, B(i + k));
			n_off += nexts[i + k] != IP6_INPUT_NEXT_LOOKUP;
		}
	}
	for (; i < n; i++) {
		nexts[i] = input_one(rt, &st, B(i));
		n_off += nexts[i] != IP6_INPUT_NEXT_LOOKUP;
	}
#undef B
	if (likely(!n_off))
		node_forward_frame(rt, IP6_INPUT_NEXT_LOOKUP, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip6_input_node = {
	.name = "ip6-input",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_input_fn,
	.n_next = IP6_INPUT_N_NEXT,
	.next_nodes = {
		[IP6_INPUT_NEXT_DROP] = "error-drop",
		[IP6_INPUT_NEXT_LOOKUP] = IP6_INPUT_LOOKUP_NODE,
		[IP6_INPUT_NEXT_LOCAL] = "ip6-local",
		[IP6_INPUT_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = IP6_INPUT_N_ERROR,
	.error_strings = ip6_input_error_strings,
	.format_trace = ip6_input_format_trace,
	.runtime_data_size = sizeof(struct icmp6_error_bucket),
};
NODE_REGISTER(ip6_input_node)
