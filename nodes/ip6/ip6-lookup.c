/* ip6-lookup: longest-prefix match of each packet's destination in the
 * main IPv6 FIB (ip6_fib.h), two at a time (their tbl24 loads issued
 * together, then each walk to its leaf), and dispatch by the adjacency's kind
 * (ip6_route.h): local -> ip6-local; a resolved rewrite -> ip6-rewrite;
 * glean and unresolved rewrites -> ip6-glean; no route -> an ICMPv6
 * Destination Unreachable, code 0 (RFC 4443 §3.1), built in place by
 * icmp6_error_make (rate-limited, never about an error or a multicast;
 * back out of the rx interface), else error-drop. Routes that refuse
 * (Linux's blackhole, unreachable, prohibit, through linux-cp): a
 * blackhole drops silently; unreachable sends Destination Unreachable
 * code 0 and prohibit code 1 (administratively prohibited), as Linux's
 * ip6_pkt_discard and ip6_pkt_prohibit answer them. The adjacency index
 * goes to ip6_opaque for the next node.
 * A multipath route's LB adjacency: the packet's flow takes one bucket
 * (ip6_flow_hash, ip6_lb_pick) and the opaque gets that path's adjacency,
 * so the nodes after never see an LB.
 *
 * Next nodes: error-drop, ip6-local, ip6-rewrite, ip6-glean,
 *   interface-output (Destination Unreachable).
 * Errors: no route (every such packet); ICMPv6 destination unreachable
 *   sent; blackhole route; unreachable / prohibit route with their
 *   ICMPv6 sent, or dropped without one.
 * Trace: destination, adjacency index and kind.
 * CLI: `show ip6 fib`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "nodes/ip6/ip6_addr.h"
#include "graph/node.h"
#include "nodes/ip6/icmp6_error.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_lb.h"
#include "nodes/ip6/ip6_route.h"

enum ip6_lookup_next {
	IP6_LOOKUP_NEXT_DROP = 0,
	IP6_LOOKUP_NEXT_LOCAL,
	IP6_LOOKUP_NEXT_REWRITE,
	IP6_LOOKUP_NEXT_GLEAN,
	IP6_LOOKUP_NEXT_OUTPUT,
	IP6_LOOKUP_N_NEXT,
	IP6_LOOKUP_NEXT_LB = IP6_LOOKUP_N_NEXT, /* not a next: pick a path first */
};

enum ip6_lookup_error {
	IP6_LOOKUP_ERROR_NO_ROUTE = 0,
	IP6_LOOKUP_ERROR_UNREACH_SENT,
	IP6_LOOKUP_ERROR_BLACKHOLE,
	IP6_LOOKUP_ERROR_UNREACH_ROUTE,
	IP6_LOOKUP_ERROR_PROHIBIT_ROUTE,
	IP6_LOOKUP_ERROR_REFUSED_SILENT,
	IP6_LOOKUP_N_ERROR,
};

static const char *const ip6_lookup_error_strings[IP6_LOOKUP_N_ERROR] = {
	[IP6_LOOKUP_ERROR_NO_ROUTE] = "no route",
	[IP6_LOOKUP_ERROR_UNREACH_SENT] = "no route: ICMPv6 destination unreachable sent",
	[IP6_LOOKUP_ERROR_BLACKHOLE] = "blackhole route (dropped)",
	[IP6_LOOKUP_ERROR_UNREACH_ROUTE] = "unreachable route: ICMPv6 no route sent",
	[IP6_LOOKUP_ERROR_PROHIBIT_ROUTE] = "prohibit route: ICMPv6 administratively prohibited sent",
	[IP6_LOOKUP_ERROR_REFUSED_SILENT] = "unreachable or prohibit route: dropped without ICMPv6 (rate, or not allowed)",
};

struct ip6_lookup_trace {
	struct in6_addr dst;
	uint32_t adj_index;
	uint8_t kind;
	uint8_t resolved;
};
_Static_assert(sizeof(struct ip6_lookup_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip6_lookup_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip6_lookup_trace t;
	char d[INET6_ADDRSTRLEN];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%s: adjacency %u (%s%s)", ip6_format_addr(d, &t.dst), t.adj_index,
			ip6_adj_kind_name(t.kind), t.kind == IP6_ADJ_REWRITE && !t.resolved ? ", unresolved" : "");
}

static const uint8_t kind_next[IP6_ADJ_N_KIND] = {
	[IP6_ADJ_DROP] = IP6_LOOKUP_NEXT_DROP,
	[IP6_ADJ_LOCAL] = IP6_LOOKUP_NEXT_LOCAL,
	[IP6_ADJ_GLEAN] = IP6_LOOKUP_NEXT_GLEAN,
	[IP6_ADJ_REWRITE] = IP6_LOOKUP_NEXT_GLEAN, /* until resolved */
	[IP6_ADJ_LB] = IP6_LOOKUP_NEXT_LB,
	[IP6_ADJ_BLACKHOLE] = IP6_LOOKUP_NEXT_DROP, /* refuse() */
	[IP6_ADJ_UNREACH] = IP6_LOOKUP_NEXT_DROP,
	[IP6_ADJ_PROHIBIT] = IP6_LOOKUP_NEXT_DROP,
};

static inline uint16_t next_of(uint32_t adj_index)
{
	const struct ip6_adj *a = ip6_adj_get(adj_index);
	if (a->kind == IP6_ADJ_REWRITE && __atomic_load_n(&a->rewrite_len, __ATOMIC_ACQUIRE))
		return IP6_LOOKUP_NEXT_REWRITE;
	return kind_next[a->kind];
}

static void trace_one(struct node_runtime *rt, struct buffer *b)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	uint32_t adj = ip6_opaque(b)->adj_index;
	const struct ip6_adj *a = ip6_adj_get(adj);
	struct ip6_lookup_trace t = { .dst = ((const struct ip6_header *)buffer_data(b))->dst,
				      .adj_index = adj, .kind = a->kind, .resolved = a->rewrite_len != 0 };
	memcpy(detail, &t, sizeof(t));
}

/* No route for b: a Destination Unreachable, code 0, when allowed (its
 * next node), else the drop. */
static uint16_t no_route(struct node_runtime *rt, uint64_t *now, struct buffer *b, uint32_t *n_sent)
{
	struct icmp6_error_bucket *bk = rt->data;
	if (icmp6_error_make(bk, now, b, ICMP6_DEST_UNREACH, 0, 0) == ICMP6_ERROR_BUILT) {
		++*n_sent; /* "no route" too, as a drop is counted by error-drop */
		return IP6_LOOKUP_NEXT_OUTPUT;
	}
	b->error = node_error(rt, IP6_LOOKUP_ERROR_NO_ROUTE);
	return IP6_LOOKUP_NEXT_DROP;
}

/* A route that refuses b (adjacency kind): silently, or with its ICMPv6
 * error when allowed. Out of line: such routes are rare and deliberate. */
static __attribute__((noinline)) uint16_t refuse(struct node_runtime *rt, uint64_t *now, struct buffer *b,
						 uint8_t kind)
{
	if (kind == IP6_ADJ_BLACKHOLE) {
		b->error = node_error(rt, IP6_LOOKUP_ERROR_BLACKHOLE);
		return IP6_LOOKUP_NEXT_DROP;
	}
	bool prohibit = kind == IP6_ADJ_PROHIBIT;
	if (icmp6_error_make(rt->data, now, b, ICMP6_DEST_UNREACH, prohibit ? ICMP6_DU_ADMIN_PROHIBITED : 0, 0) ==
	    ICMP6_ERROR_BUILT) {
		node_count_error(rt, prohibit ? IP6_LOOKUP_ERROR_PROHIBIT_ROUTE : IP6_LOOKUP_ERROR_UNREACH_ROUTE, 1);
		return IP6_LOOKUP_NEXT_OUTPUT;
	}
	b->error = node_error(rt, IP6_LOOKUP_ERROR_REFUSED_SILENT);
	return IP6_LOOKUP_NEXT_DROP;
}

static inline const ip6_addr_a2 *dst_of(struct buffer *b)
{
	return &((const struct ip6_header *)buffer_data(b))->dst;
}

/* Whether a next node needs per-packet work here: no route (the ICMPv6
 * error). A load-balance kind's per-flow pick belongs here too, as a
 * branch of the general loop below (ip4-lookup's lb_resolve). */
static inline bool next_is_special(uint16_t next)
{
	return next == IP6_LOOKUP_NEXT_DROP || next == IP6_LOOKUP_NEXT_LB;
}

static uint32_t ip6_lookup_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	const struct ip6_fib *fib = ip6_fib_main;
	/* Locals: stores to buffers could otherwise alias the pool geometry. */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	uint32_t i = 0, flags = 0;

#define B(k) ((struct buffer *)(base + bi[k] * stride))
#define LOOKUP(b) (likely(fib != NULL) ? ip6_fib_lookup(fib, dst_of(b)) : IP6_FIB_MISS)
	/* The next node is the adjacency's, remembered across a run of one
	 * adjacency (a frame to one next hop decides it once). */
	uint32_t last_adj = LOOKUP(B(0));
	uint16_t last_next = next_of(last_adj);
	const uint16_t first_next = last_next;

	/* Two at a time while the two share the first packet's adjacency: both
	 * tbl24 loads, the misses that matter most with 1M routes, issued
	 * together, then each walk to its leaf (ip6_fib_finish) with its
	 * result stored as it ends; nothing is kept per packet but the
	 * adjacency in its opaque. A packet of another adjacency breaks out
	 * (the general loop below stores and ors its pair again), as do the
	 * frame's last n % 2 and every packet of a frame whose first one needs
	 * work of its own (next_is_special). No header prefetch: ip6-input
	 * read these headers within the same frame. Instructions per packet
	 * (bench/ip6, callgrind, -march=corei7, vector 256, 1 route / ~1M
	 * routes): 46.9 / 95.9 with a prefetch of the next four headers,
	 * nexts[] and a run check per packet and four walks stride by stride;
	 * 19.4 / 57.2 four at a time with the old group entries (a mask and a
	 * shift a stride); 19.9 / 38.5 four at a time with today's (the four
	 * walks' pointers left no register for groups_ext: a reload a stride);
	 * 18.5 / 32.9 two at a time here (docs/ipv6.md). */
	const uint32_t n_run = fib && !next_is_special(last_next) ? n : 0;
	const uint32_t *const tbl24 = n_run ? ip6_fib_tables(fib)->tbl24 : NULL;
	const uintptr_t gx = n_run ? ip6_fib_tables(fib)->groups_ext : 0;
	for (; i + 2 <= n_run; i += 2) {
		struct buffer *b0 = B(i), *b1 = B(i + 1);
		flags |= b0->flags | b1->flags;
		const ip6_addr_a2 *a0 = dst_of(b0), *a1 = dst_of(b1);
		uint32_t r0 = ip6_fib_first(tbl24, a0), r1 = ip6_fib_first(tbl24, a1);
		r0 = ip6_fib_finish(gx, r0, a0);
		ip6_opaque(b0)->adj_index = r0;
		r1 = ip6_fib_finish(gx, r1, a1);
		ip6_opaque(b1)->adj_index = r1;
		if (unlikely((r0 ^ last_adj) | (r1 ^ last_adj)))
			break;
	}

	/* One by one from the first packet the loop above did not take:
	 * nexts[] from here on, and whether all of them still go where the
	 * first packet goes (then the frame is handed on whole). */
	uint32_t n_sent = 0;
	uint64_t now = 0;
	bool whole = true;
	for (uint32_t k = i; k < n; k++) {
		struct buffer *b = B(k);
		uint32_t adj = LOOKUP(b);
		if (adj != last_adj) {
			last_adj = adj;
			last_next = next_of(adj);
		}
		uint16_t next = last_next;
		if (unlikely(next_is_special(next))) {
			if (next == IP6_LOOKUP_NEXT_LB) { /* ECMP: this flow's path */
				adj = ip6_lb_pick(ip6_adj_get(adj),
						  ip6_flow_hash((const struct ip6_header *)buffer_data(b)));
				next = next_of(adj);
			}
			ip6_opaque(b)->adj_index = adj;
			flags |= b->flags; /* before: the error replaces the packet */
			uint8_t kind = ip6_adj_get(adj)->kind;
			if (next == IP6_LOOKUP_NEXT_DROP)
				next = kind == IP6_ADJ_DROP ? no_route(rt, &now, b, &n_sent) : refuse(rt, &now, b, kind);
		} else {
			ip6_opaque(b)->adj_index = adj;
			flags |= b->flags;
		}
		nexts[k] = next;
		whole &= next == first_next;
	}
	if (unlikely(!whole))
		for (uint32_t k = 0; k < i; k++)
			nexts[k] = first_next;
	if (unlikely(n_sent)) {
		node_count_error(rt, IP6_LOOKUP_ERROR_NO_ROUTE, n_sent);
		node_count_error(rt, IP6_LOOKUP_ERROR_UNREACH_SENT, n_sent);
	}
	if (unlikely(flags & BUFFER_F_TRACED))
		for (i = 0; i < n; i++)
			if (B(i)->flags & BUFFER_F_TRACED)
				trace_one(rt, B(i));
#undef LOOKUP
#undef B
	if (likely(whole))
		node_forward_frame(rt, first_next, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip6_lookup_node = {
	.name = "ip6-lookup",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip6_lookup_fn,
	.n_next = IP6_LOOKUP_N_NEXT,
	.next_nodes = {
		[IP6_LOOKUP_NEXT_DROP] = "error-drop",
		[IP6_LOOKUP_NEXT_LOCAL] = "ip6-local",
		[IP6_LOOKUP_NEXT_REWRITE] = "ip6-rewrite",
		[IP6_LOOKUP_NEXT_GLEAN] = "ip6-glean",
		[IP6_LOOKUP_NEXT_OUTPUT] = "interface-output",
	},
	.n_errors = IP6_LOOKUP_N_ERROR,
	.error_strings = ip6_lookup_error_strings,
	.format_trace = ip6_lookup_format_trace,
	.runtime_data_size = sizeof(struct icmp6_error_bucket),
};
NODE_REGISTER(ip6_lookup_node)
