/* ip6-rewrite: the last IPv6 node before interface-output (RFC 8200 §3,
 * RFC 4443 §3.2).
 *
 * For each packet, from its adjacency (ip6_opaque, set by ip6-lookup): a
 * packet longer than the output interface's MTU gets an ICMPv6 Packet Too
 * Big with that MTU (icmp6_error.h: rate-limited, back out of the rx
 * interface; routers never fragment, RFC 8200 §5); else the hop limit is
 * decremented (ip6-input already answered hop limit 1 or 0 in transit
 * with Time Exceeded; packets sluice made keep theirs), the adjacency's
 * Ethernet header (next hop's MAC, the interface's, 0x86dd) is prepended
 * and tx_if set. There is no header checksum to fix in IPv6.
 *
 * Next nodes: error-drop, interface-output, ip6-glean (an adjacency
 * unresolved since ip6-lookup).
 * Errors: Packet Too Big sent (counted, not dropped); rate-limited; not
 *   allowed; output interface gone.
 * Trace: adjacency, output interface, hop limit before, what happened.
 * CLI: `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "nodes/ip6/icmp6_error.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_route.h"

enum ip6_rewrite_next {
	IP6_REWRITE_NEXT_DROP = 0,
	IP6_REWRITE_NEXT_OUTPUT,
	IP6_REWRITE_NEXT_GLEAN,
	IP6_REWRITE_N_NEXT,
};

enum ip6_rewrite_error {
	IP6_REWRITE_ERROR_PTB = 0,
	IP6_REWRITE_ERROR_RATE_LIMITED,
	IP6_REWRITE_ERROR_NOT_ALLOWED,
	IP6_REWRITE_ERROR_NO_INTERFACE,
	IP6_REWRITE_N_ERROR,
};

static const char *const ip6_rewrite_error_strings[IP6_REWRITE_N_ERROR] = {
	[IP6_REWRITE_ERROR_PTB] = "over MTU: ICMPv6 packet too big sent",
	[IP6_REWRITE_ERROR_RATE_LIMITED] = "over MTU: ICMPv6 error rate-limited (dropped)",
	[IP6_REWRITE_ERROR_NOT_ALLOWED] = "over MTU: no ICMPv6 error allowed (dropped)",
	[IP6_REWRITE_ERROR_NO_INTERFACE] = "output interface gone",
};

#define TRACE_SENT 0xff

struct ip6_rewrite_trace {
	uint32_t adj_index;
	uint32_t tx_if;
	uint8_t hop_limit;
	uint8_t what;
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct ip6_rewrite_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip6_rewrite_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip6_rewrite_trace t;
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "adjacency %u -> %.*s (if %u) hop limit %u: %s", t.adj_index, ETH_TRACE_NAME_SIZE,
			t.name, t.tx_if, t.hop_limit,
			t.what < IP6_REWRITE_N_ERROR ? ip6_rewrite_error_strings[t.what] : "rewritten");
}

static void trace_one(struct node_runtime *rt, struct buffer *b, uint32_t adj, uint32_t tx_if, uint8_t hl, uint8_t what)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	struct ip6_rewrite_trace t = { .adj_index = adj, .tx_if = tx_if, .hop_limit = hl, .what = what };
	eth_trace_name(t.name, tx_if);
	memcpy(detail, &t, sizeof(t));
}

/* The adjacency of the last packet, with its interface's MTU. */
struct rw_state {
	uint32_t last_adj;
	const struct ip6_adj *a;
	uint32_t mtu; /* 0: interface gone */
	uint64_t now;
	uint32_t n_ptb, n_other;
};

static inline void use_adj(struct rw_state *st, uint32_t adj)
{
	st->last_adj = adj;
	st->a = ip6_adj_get(adj);
	const struct device *dev = dev_by_index(st->a->if_index);
	st->mtu = dev && st->a->kind == IP6_ADJ_REWRITE ? dev->mtu : 0;
}

/* Packet Too Big about b (RFC 4443 §3.2): its error, or the count of one
 * sent with *next interface-output. */
static uint16_t too_big(struct icmp6_error_bucket *bk, struct rw_state *st, struct buffer *b, uint16_t *next)
{
	if (ip6_opaque(b)->flags & IP6_OPAQUE_F_LOCAL_ORIGIN)
		return IP6_REWRITE_ERROR_NOT_ALLOWED;
	switch (icmp6_error_make(bk, &st->now, b, ICMP6_PACKET_TOO_BIG, 0, st->mtu)) {
	case ICMP6_ERROR_BUILT:
		*next = IP6_REWRITE_NEXT_OUTPUT;
		st->n_ptb++;
		return IP6_REWRITE_ERROR_PTB;
	case ICMP6_ERROR_RATE_LIMITED:
		return IP6_REWRITE_ERROR_RATE_LIMITED;
	default:
		return IP6_REWRITE_ERROR_NOT_ALLOWED;
	}
}

static uint16_t rewrite_one(struct node_runtime *rt, struct icmp6_error_bucket *bk, struct rw_state *st,
			    struct buffer *b)
{
	struct ip6_header *h = (struct ip6_header *)buffer_data(b);
	struct ip6_opaque *o = ip6_opaque(b);
	uint8_t hl = h->hop_limit;
	uint16_t what = IP6_REWRITE_N_ERROR, next = IP6_REWRITE_NEXT_DROP;
	if (unlikely(o->adj_index != st->last_adj))
		use_adj(st, o->adj_index);
	const struct ip6_adj *a = st->a;
	if (unlikely(!st->mtu)) {
		what = IP6_REWRITE_ERROR_NO_INTERFACE;
	} else if (unlikely(!__atomic_load_n(&a->rewrite_len, __ATOMIC_ACQUIRE))) {
		next = IP6_REWRITE_NEXT_GLEAN; /* unresolved since ip6-lookup */
	} else if (unlikely(IP6_HDR_LEN + (uint32_t)ntohs(h->payload_length) > st->mtu)) {
		what = too_big(bk, st, b, &next);
	} else {
		if (likely(!(o->flags & IP6_OPAQUE_F_LOCAL_ORIGIN)))
			h->hop_limit = (uint8_t)(hl - 1);
		buffer_advance(b, -ETH_HDR_LEN);
		memcpy(buffer_data(b), a->rewrite, ETH_HDR_LEN);
		b->tx_if = a->if_index;
		next = IP6_REWRITE_NEXT_OUTPUT;
	}
	st->n_other += next != IP6_REWRITE_NEXT_OUTPUT || what == IP6_REWRITE_ERROR_PTB;
	if (next == IP6_REWRITE_NEXT_DROP)
		b->error = node_error(rt, what);
	if (unlikely(b->flags & BUFFER_F_TRACED))
		trace_one(rt, b, st->last_adj, a->if_index, hl,
			  next == IP6_REWRITE_NEXT_OUTPUT && what != IP6_REWRITE_ERROR_PTB ? TRACE_SENT : (uint8_t)what);
	return next;
}

/* Whether b needs only rewrite_fast: on the current adjacency, within
 * the MTU, forwarded (not made here), not traced. */
static inline bool fast_ok(struct buffer *b, uint32_t adj, uint32_t mtu)
{
	const struct ip6_header *h = (const struct ip6_header *)buffer_data(b);
	const struct ip6_opaque *o = ip6_opaque(b);
	return o->adj_index == adj && IP6_HDR_LEN + (uint32_t)ntohs(h->payload_length) <= mtu &&
	       !(b->flags & BUFFER_F_TRACED) && !(o->flags & IP6_OPAQUE_F_LOCAL_ORIGIN);
}

static inline void rewrite_fast(struct buffer *b, const struct ip6_adj *a)
{
	struct ip6_header *h = (struct ip6_header *)buffer_data(b);
	h->hop_limit--; /* > 1: ip6-input answered the rest */
	memcpy((uint8_t *)h - ETH_HDR_LEN, a->rewrite, ETH_HDR_LEN);
	buffer_advance(b, -ETH_HDR_LEN);
	b->tx_if = a->if_index;
}

static uint32_t ip6_rewrite_fn(struct node_runtime *rt, struct frame *f)
{
	struct icmp6_error_bucket *bk = rt->data;
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	struct rw_state st = { 0 };
#define B(k) ((struct buffer *)(base + bi[k] * stride))
	use_adj(&st, ip6_opaque(B(0))->adj_index);
	uint32_t i = 0;
	/* Four per turn while the four share the adjacency and need nothing
	 * but the rewrite (as ip4-rewrite); the headers were read by
	 * ip6-input and ip6-lookup in this frame, so no prefetch. */
	for (; i + 4 <= n; i += 4) {
		const uint32_t adj = st.last_adj, mtu = st.mtu;
		struct buffer *b0 = B(i), *b1 = B(i + 1), *b2 = B(i + 2), *b3 = B(i + 3);
		if (likely(mtu && __atomic_load_n(&st.a->rewrite_len, __ATOMIC_ACQUIRE) && fast_ok(b0, adj, mtu) &&
			   fast_ok(b1, adj, mtu) && fast_ok(b2, adj, mtu) && fast_ok(b3, adj, mtu))) {
			rewrite_fast(b0, st.a);
			rewrite_fast(b1, st.a);
			rewrite_fast(b2, st.a);
			rewrite_fast(b3, st.a);
			nexts[i] = nexts[i + 1] = nexts[i + 2] = nexts[i + 3] = IP6_REWRITE_NEXT_OUTPUT;
			continue;
		}
		nexts[i] = rewrite_one(rt, bk, &st, B(i));
		nexts[i + 1] = rewrite_one(rt, bk, &st, B(i + 1));
		nexts[i + 2] = rewrite_one(rt, bk, &st, B(i + 2));
		nexts[i + 3] = rewrite_one(rt, bk, &st, B(i + 3));
	}
	for (; i < n; i++)
		nexts[i] = rewrite_one(rt, bk, &st, B(i));
#undef B
	if (unlikely(st.n_ptb))
		node_count_error(rt, IP6_REWRITE_ERROR_PTB, st.n_ptb);
	if (likely(!st.n_other))
		node_forward_frame(rt, IP6_REWRITE_NEXT_OUTPUT, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip6_rewrite_node = {
	.name = "ip6-rewrite",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_rewrite_fn,
	.n_next = IP6_REWRITE_N_NEXT,
	.next_nodes = {
		[IP6_REWRITE_NEXT_DROP] = "error-drop",
		[IP6_REWRITE_NEXT_OUTPUT] = "interface-output",
		[IP6_REWRITE_NEXT_GLEAN] = "ip6-glean",
	},
	.n_errors = IP6_REWRITE_N_ERROR,
	.error_strings = ip6_rewrite_error_strings,
	.format_trace = ip6_rewrite_format_trace,
	.runtime_data_size = sizeof(struct icmp6_error_bucket),
};
NODE_REGISTER(ip6_rewrite_node)
