/* ip4-rewrite: the last IPv4 node before interface-output.
 *
 * For each packet, from its adjacency (ip4 opaque, set by ip4-lookup):
 * TTL 1 or 0 -> ICMP time-exceeded to the source; total length over the
 * output MTU -> ICMP fragmentation-needed (with the next-hop MTU, RFC 1191)
 * when DF is set, dropped otherwise (no fragmentation); else the TTL is
 * decremented with the RFC 1624 incremental checksum update, the
 * adjacency's Ethernet header (neighbour MAC, interface MAC, 0x0800) is
 * prepended and tx_if set. Packets sluice made itself (echo replies, ICMP
 * errors: IP4_OPAQUE_F_LOCAL_ORIGIN) keep their TTL.
 *
 * ICMP errors are built in place: the new IP and ICMP headers go into the
 * 28 bytes before the offending packet, whose header and first 8 payload
 * bytes are the quote; the result goes back to ip4-lookup towards the
 * source. RFC 1812 §4.3.2.7 forbids some (about ICMP errors, non-first
 * fragments, from a non-unicast source); they are dropped. Per thread, a
 * token bucket bounds them to IP4_ICMP_ERROR_RATE per second with bursts
 * of IP4_ICMP_ERROR_BURST; what exceeds it is dropped and counted.
 *
 * Unreachable and prohibit routes (adjacencies IP4_ADJ_UNREACH/PROHIBIT)
 * come here for their ICMP errors, through the same builder and bucket:
 * destination unreachable with code 1, host unreachable (RFC 792), as Linux
 * answers an RTN_UNREACHABLE route (fib_props[] gives it -EHOSTUNREACH,
 * which ip_error() in net/ipv4/route.c sends as ICMP_HOST_UNREACH), and
 * code 13, communication administratively prohibited (RFC 1812 §5.2.7.1;
 * Linux's RTN_PROHIBIT, -EACCES, is ICMP_PKT_FILTERED, the same 13).
 *
 * Next nodes: error-drop, interface-output, ip4-lookup (ICMP errors).
 * Errors: time-exceeded sent; fragmentation-needed sent; unreachable route
 *   and prohibit route ICMP sent (all four counted, not dropped); ICMP error
 *   rate-limited; ICMP error not allowed; over MTU
 *   without DF; output interface gone.
 * Trace: adjacency, output interface, TTL before, and what happened.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"

#define IP4_ICMP_ERROR_RATE 100 /* per second and thread */
#define IP4_ICMP_ERROR_BURST 10
#define ICMP_ERROR_HDRS (IP4_HDR_LEN + ICMP4_HDR_LEN)

enum ip4_rewrite_next {
	IP4_REWRITE_NEXT_DROP = 0,
	IP4_REWRITE_NEXT_OUTPUT,
	IP4_REWRITE_NEXT_LOOKUP,
	IP4_REWRITE_N_NEXT,
};

enum ip4_rewrite_error {
	IP4_REWRITE_ERROR_TIME_EXCEEDED = 0,
	IP4_REWRITE_ERROR_FRAG_NEEDED,
	IP4_REWRITE_ERROR_RATE_LIMITED,
	IP4_REWRITE_ERROR_NOT_ALLOWED,
	IP4_REWRITE_ERROR_FRAGMENTATION,
	IP4_REWRITE_ERROR_NO_INTERFACE,
	IP4_REWRITE_ERROR_UNREACH, /* last: the codes before keep their numbers */
	IP4_REWRITE_ERROR_PROHIBIT,
	IP4_REWRITE_N_ERROR,
};

static const char *const ip4_rewrite_error_strings[IP4_REWRITE_N_ERROR] = {
	[IP4_REWRITE_ERROR_TIME_EXCEEDED] = "TTL expired: ICMP time-exceeded sent",
	[IP4_REWRITE_ERROR_FRAG_NEEDED] = "over MTU with DF: ICMP fragmentation-needed sent",
	[IP4_REWRITE_ERROR_UNREACH] = "unreachable route: ICMP host-unreachable sent",
	[IP4_REWRITE_ERROR_PROHIBIT] = "prohibit route: ICMP administratively-prohibited sent",
	[IP4_REWRITE_ERROR_RATE_LIMITED] = "ICMP error rate-limited (packet dropped)",
	[IP4_REWRITE_ERROR_NOT_ALLOWED] = "no ICMP error allowed for the packet (dropped)",
	[IP4_REWRITE_ERROR_FRAGMENTATION] = "over MTU without DF (fragmentation not supported)",
	[IP4_REWRITE_ERROR_NO_INTERFACE] = "output interface gone",
};

#define TRACE_SENT 0xff /* trace's error field: rewritten and sent */

struct ip4_rewrite_trace {
	uint32_t adj_index;
	uint32_t tx_if;
	uint8_t ttl;
	uint8_t what; /* error code, or TRACE_SENT */
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct ip4_rewrite_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip4_rewrite_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip4_rewrite_trace t;
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "adjacency %u -> %.*s (if %u) ttl %u: %s", t.adj_index, ETH_TRACE_NAME_SIZE,
			t.name, t.tx_if, t.ttl,
			t.what < IP4_REWRITE_N_ERROR ? ip4_rewrite_error_strings[t.what] : "rewritten");
}

/* ---- helpers ---- */

/* Per thread: the ICMP error token bucket. */
struct ip4_rewrite_data {
	struct icmp_rate_bucket bucket;
};

/* RFC 1812 §4.3.2.7: no ICMP error about an ICMP error, a non-first
 * fragment, or a packet whose source is not a unicast host. */
static bool icmp_error_allowed(const struct ip4_header *h, uint32_t total)
{
	uint32_t src = ntohl(h->src);
	if ((ntohs(h->frag_off) & 0x1fff) != 0)
		return false;
	if (src == 0 || (src >> 24) == 127 || (src >> 28) >= 0xe)
		return false;
	if (h->protocol == IP4_PROTO_ICMP) {
		uint32_t ihl = ip4_header_bytes(h);
		if (total < ihl + 1)
			return false;
		uint8_t type = ((const uint8_t *)h)[ihl];
		if (type != ICMP4_ECHO_REPLY && type != ICMP4_ECHO_REQUEST && type != 13 && type != 14 &&
		    type != 15 && type != 16 && type != 17 && type != 18)
			return false;
	}
	return true;
}

/* Turn b (starting at its IP header) into an ICMP error about it, addressed
 * to its source. Returns IP4_REWRITE_N_ERROR when built, else the error
 * that drops it. */
static uint16_t icmp_error(struct ip4_rewrite_data *d, uint64_t *now, struct buffer *b, uint8_t type, uint8_t code,
			   uint16_t mtu)
{
	const struct ip4_header *h = (const struct ip4_header *)buffer_data(b);
	uint32_t total = ntohs(h->total_length);
	/* Room in front for the new headers and, later, Ethernet. */
	if (!icmp_error_allowed(h, total) ||
	    b->current_data - ICMP_ERROR_HDRS - ETH_HDR_LEN < -BUFFER_HEADROOM)
		return IP4_REWRITE_ERROR_NOT_ALLOWED;
	uint32_t src = ip4_if_source_for(b->rx_if, h->src);
	if (!src)
		return IP4_REWRITE_ERROR_NOT_ALLOWED;
	if (!icmp_rate_take(&d->bucket, now, IP4_ICMP_ERROR_RATE, IP4_ICMP_ERROR_BURST))
		return IP4_REWRITE_ERROR_RATE_LIMITED;
	uint32_t quote = MIN(total, ip4_header_bytes(h) + ICMP4_ERROR_QUOTE_PAYLOAD);
	uint32_t dst = h->src;
	if (b->flags & BUFFER_F_NEXT_PRESENT) {
		buffer_free(&b->next_buffer, 1);
		b->flags &= ~BUFFER_F_NEXT_PRESENT;
		b->total_length_not_including_first = 0;
	}
	buffer_advance(b, -ICMP_ERROR_HDRS);
	b->current_length = (uint16_t)(ICMP_ERROR_HDRS + quote);
	struct ip4_header *ip = (struct ip4_header *)buffer_data(b);
	struct icmp4_header *icmp = (struct icmp4_header *)(ip + 1);
	*ip = (struct ip4_header){
		.ver_ihl = 0x45,
		.tos = 0xc0, /* internetwork control, RFC 1812 §4.3.2.5 */
		.total_length = htons((uint16_t)(ICMP_ERROR_HDRS + quote)),
		.ttl = IP4_TTL_DEFAULT,
		.protocol = IP4_PROTO_ICMP,
		.src = src,
		.dst = dst,
	};
	ip4_header_csum_set(ip);
	*icmp = (struct icmp4_header){ .type = type, .code = code, .seq = htons(mtu) };
	icmp->checksum = ip4_csum(icmp, ICMP4_HDR_LEN + quote);
	ip4_opaque(b)->flags |= IP4_OPAQUE_F_LOCAL_ORIGIN;
	return IP4_REWRITE_N_ERROR;
}

static void trace_one(struct node_runtime *rt, struct buffer *b, uint32_t adj_index, uint32_t tx_if, uint8_t ttl,
		      uint8_t what)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct ip4_rewrite_trace t = { .adj_index = adj_index, .tx_if = tx_if, .ttl = ttl, .what = what };
	eth_trace_name(t.name, tx_if);
	memcpy(detail, &t, sizeof(t));
}

/* ---- the node ---- */

/* What one frame's loop keeps across packets: the adjacency of the last
 * packet with its interface's verdict and MTU, and the counts. */
struct rw_state {
	const struct ip4_fib *fib;
	uint32_t last_adj;
	const struct ip4_adj *a;
	uint32_t mtu, if_index;
	uint64_t rw_0, rw_6; /* the rewrite's bytes 0..7 and 6..13, for rewrite_fast */
	bool dev_ok;
	uint64_t now;
	uint32_t n_other, n_time_exceeded, n_frag_needed; /* n_other: not to interface-output */
	uint32_t n_unreach, n_prohibit;
};

static inline void use_adj(struct rw_state *st, uint32_t adj_index)
{
	st->last_adj = adj_index;
	st->a = ip4_adj_get(st->fib, adj_index);
	const struct device *dev = dev_by_index(st->a->if_index);
	st->dev_ok = dev != NULL && st->a->kind == IP4_ADJ_REWRITE; /* else a route kind's ICMP */
	st->mtu = st->a->mtu ? st->a->mtu : dev ? dev->mtu : 0;
	st->if_index = st->a->if_index;
	memcpy(&st->rw_0, st->a->rewrite, sizeof(st->rw_0));
	memcpy(&st->rw_6, st->a->rewrite + 6, sizeof(st->rw_6));
}

/* An unreachable or prohibit route's ICMP error for b: its error code
 * (counted when sent), *next ip4-lookup when sent. */
static uint16_t route_kind_icmp(struct ip4_rewrite_data *d, struct rw_state *st, struct buffer *b, uint16_t *next)
{
	bool unreach = st->a->kind == IP4_ADJ_UNREACH;
	if (st->a->kind != IP4_ADJ_UNREACH && st->a->kind != IP4_ADJ_PROHIBIT)
		return IP4_REWRITE_ERROR_NO_INTERFACE;
	if (ip4_opaque(b)->flags & IP4_OPAQUE_F_LOCAL_ORIGIN) /* never an error about our own */
		return IP4_REWRITE_ERROR_NOT_ALLOWED;
	uint16_t what = icmp_error(d, &st->now, b, ICMP4_DEST_UNREACH,
				   unreach ? ICMP4_HOST_UNREACH : ICMP4_ADMIN_PROHIBITED, 0);
	if (what != IP4_REWRITE_N_ERROR)
		return what;
	*next = IP4_REWRITE_NEXT_LOOKUP;
	st->n_unreach += unreach;
	st->n_prohibit += !unreach;
	return unreach ? IP4_REWRITE_ERROR_UNREACH : IP4_REWRITE_ERROR_PROHIBIT;
}

/* Every case for one packet; returns its next node. */
static uint16_t rewrite_one(struct node_runtime *rt, struct ip4_rewrite_data *d, struct rw_state *st,
			    struct buffer *b)
{
	struct ip4_header *h = (struct ip4_header *)buffer_data(b);
	struct ip4_opaque *o = ip4_opaque(b);
	uint8_t ttl = h->ttl;
	uint16_t what = IP4_REWRITE_N_ERROR, next = IP4_REWRITE_NEXT_DROP;
	if (unlikely(o->adj_index != st->last_adj))
		use_adj(st, o->adj_index);
	const struct ip4_adj *a = st->a;
	if (unlikely(!st->dev_ok)) {
		what = route_kind_icmp(d, st, b, &next);
	} else if (unlikely(ttl <= 1 && !(o->flags & IP4_OPAQUE_F_LOCAL_ORIGIN))) {
		what = icmp_error(d, &st->now, b, ICMP4_TIME_EXCEEDED, ICMP4_TTL_EXCEEDED, 0);
		if (what == IP4_REWRITE_N_ERROR) {
			next = IP4_REWRITE_NEXT_LOOKUP;
			what = IP4_REWRITE_ERROR_TIME_EXCEEDED;
			st->n_time_exceeded++;
		}
	} else if (unlikely(ntohs(h->total_length) > st->mtu)) {
		if (!(h->frag_off & htons(IP4_FLAG_DF)))
			what = IP4_REWRITE_ERROR_FRAGMENTATION;
		else if (o->flags & IP4_OPAQUE_F_LOCAL_ORIGIN)
			what = IP4_REWRITE_ERROR_NOT_ALLOWED;
		else {
			what = icmp_error(d, &st->now, b, ICMP4_DEST_UNREACH, ICMP4_FRAG_NEEDED, (uint16_t)st->mtu);
			if (what == IP4_REWRITE_N_ERROR) {
				next = IP4_REWRITE_NEXT_LOOKUP;
				what = IP4_REWRITE_ERROR_FRAG_NEEDED;
				st->n_frag_needed++;
			}
		}
	} else {
		if (likely(!(o->flags & IP4_OPAQUE_F_LOCAL_ORIGIN)))
			ip4_ttl_decrement(h);
		buffer_advance(b, -ETH_HDR_LEN);
		memcpy(buffer_data(b), a->rewrite, ETH_HDR_LEN);
		b->tx_if = a->if_index;
		next = IP4_REWRITE_NEXT_OUTPUT;
	}
	st->n_other += next != IP4_REWRITE_NEXT_OUTPUT;
	if (next == IP4_REWRITE_NEXT_DROP)
		b->error = node_error(rt, what);
	if (unlikely(b->flags & BUFFER_F_TRACED))
		trace_one(rt, b, st->last_adj, a->if_index, ttl, next == IP4_REWRITE_NEXT_OUTPUT ? TRACE_SENT : (uint8_t)what);
	return next;
}

/* ip4_ttl_decrement for a TTL above 1, in fewer instructions. RFC 1624:
 * the TTL/protocol word drops by 0x0100, so the checksum rises by 0x0100
 * in one's complement: a sum x reaching 0xffff wraps to x + 1 (mod 2^16),
 * which is eqn. 3's result (the two agree on all 65536 checksums, either
 * byte order). One's-complement sums do not depend on byte order: the
 * checksum is taken as it lies in memory, the increment too (htons). */
static inline void ttl_decrement_fast(struct ip4_header *h)
{
	uint32_t x = (uint32_t)h->checksum + htons(0x0100);
	h->checksum = (uint16_t)(x + ((x + 1) >> 16));
	h->ttl--;
}

/* The common case of rewrite_one, once the caller has checked it (fast_ok):
 * ip is the packet's IP header. The 14-byte rewrite goes in as two
 * overlapping 8-byte stores (its bytes 0..7 and 6..13) of values the
 * caller loaded once. */
static inline void rewrite_fast(struct buffer *b, uint8_t *ip, uint32_t if_index, uint64_t rw_0, uint64_t rw_6)
{
	ttl_decrement_fast((struct ip4_header *)ip);
	memcpy(ip - ETH_HDR_LEN, &rw_0, sizeof(rw_0));
	memcpy(ip - ETH_HDR_LEN + 6, &rw_6, sizeof(rw_6));
	buffer_advance(b, -ETH_HDR_LEN);
	b->tx_if = if_index;
}

/* Whether rewrite_fast applies: a forwarded packet on the current
 * adjacency, TTL above 1, within the MTU, not traced. (Short-circuit: the
 * branch-free form measured 49.7 instructions per packet against 46.4.) */
static inline bool fast_ok(const struct buffer *b, const uint8_t *ip, uint32_t adj, uint16_t mtu)
{
	const struct ip4_header *h = (const struct ip4_header *)ip;
	const struct ip4_opaque *o = (const struct ip4_opaque *)b->opaque;
	return o->adj_index == adj && h->ttl > 1 && (uint16_t)ntohs(h->total_length) <= mtu &&
	       !(b->flags & BUFFER_F_TRACED) && !(o->flags & IP4_OPAQUE_F_LOCAL_ORIGIN);
}

static uint32_t ip4_rewrite_fn(struct node_runtime *rt, struct frame *f)
{
	struct ip4_rewrite_data *d = rt->data;
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	/* Locals: stores to buffers could otherwise alias the pool geometry. */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	struct rw_state st = { .fib = ip4_fib_main };
	uint32_t i = 0;

	use_adj(&st, ip4_opaque((struct buffer *)(base + bi[0] * stride))->adj_index);
	/* Four at a time while the four share the adjacency and need nothing
	 * but the rewrite; any other packet goes through rewrite_one. No
	 * prefetch: ip4-input and ip4-lookup touched these headers within the
	 * same frame (256 x 2 lines, in L1/L2), and prefetching them again
	 * cost 8 instructions per packet for nothing. Instructions per packet
	 * (bench/ip4, callgrind, vector 256, 1 route): 73.3 with one general
	 * loop; 46.4 with a 14-byte memcpy from the adjacency and RFC 1624
	 * eqn. 3 per packet; 34.7 here (35.7 with the rewrite's bytes loaded
	 * per turn and nexts[] counted). */
	for (; i + 4 <= n; i += 4) {
		const uint32_t adj = st.last_adj;
		const uint16_t mtu = (uint16_t)MIN(st.mtu, 0xffffu);
		struct buffer *b0 = (struct buffer *)(base + bi[i] * stride);
		struct buffer *b1 = (struct buffer *)(base + bi[i + 1] * stride);
		struct buffer *b2 = (struct buffer *)(base + bi[i + 2] * stride);
		struct buffer *b3 = (struct buffer *)(base + bi[i + 3] * stride);
		uint8_t *p0 = buffer_data(b0), *p1 = buffer_data(b1), *p2 = buffer_data(b2), *p3 = buffer_data(b3);
		if (likely(st.dev_ok && fast_ok(b0, p0, adj, mtu) && fast_ok(b1, p1, adj, mtu) && fast_ok(b2, p2, adj, mtu) &&
			   fast_ok(b3, p3, adj, mtu))) {
			rewrite_fast(b0, p0, st.if_index, st.rw_0, st.rw_6);
			rewrite_fast(b1, p1, st.if_index, st.rw_0, st.rw_6);
			rewrite_fast(b2, p2, st.if_index, st.rw_0, st.rw_6);
			rewrite_fast(b3, p3, st.if_index, st.rw_0, st.rw_6);
			nexts[i] = nexts[i + 1] = nexts[i + 2] = nexts[i + 3] = IP4_REWRITE_NEXT_OUTPUT;
			continue;
		}
		nexts[i] = rewrite_one(rt, d, &st, b0);
		nexts[i + 1] = rewrite_one(rt, d, &st, b1);
		nexts[i + 2] = rewrite_one(rt, d, &st, b2);
		nexts[i + 3] = rewrite_one(rt, d, &st, b3);
	}
	for (; i < n; i++)
		nexts[i] = rewrite_one(rt, d, &st, (struct buffer *)(base + bi[i] * stride));

	if (unlikely(st.n_time_exceeded))
		node_count_error(rt, IP4_REWRITE_ERROR_TIME_EXCEEDED, st.n_time_exceeded);
	if (unlikely(st.n_frag_needed))
		node_count_error(rt, IP4_REWRITE_ERROR_FRAG_NEEDED, st.n_frag_needed);
	if (unlikely(st.n_unreach | st.n_prohibit)) {
		node_count_error(rt, IP4_REWRITE_ERROR_UNREACH, st.n_unreach);
		node_count_error(rt, IP4_REWRITE_ERROR_PROHIBIT, st.n_prohibit);
	}
	if (likely(!st.n_other))
		node_forward_frame(rt, IP4_REWRITE_NEXT_OUTPUT, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip4_rewrite_node = {
	.name = "ip4-rewrite",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip4_rewrite_fn,
	.n_next = IP4_REWRITE_N_NEXT,
	.next_nodes = {
		[IP4_REWRITE_NEXT_DROP] = "error-drop",
		[IP4_REWRITE_NEXT_OUTPUT] = "interface-output",
		[IP4_REWRITE_NEXT_LOOKUP] = "ip4-lookup",
	},
	.n_errors = IP4_REWRITE_N_ERROR,
	.error_strings = ip4_rewrite_error_strings,
	.format_trace = ip4_rewrite_format_trace,
	.runtime_data_size = sizeof(struct ip4_rewrite_data),
};
NODE_REGISTER(ip4_rewrite_node)
