/* ip6-lookup: longest-prefix match of each packet's destination in the
 * main IPv6 FIB (ip6_fib.h), four at a time with ip6_fib_lookup_x4 (their
 * table loads issued together), and dispatch by the adjacency's kind
 * (ip6_route.h): local -> ip6-local; a resolved rewrite -> ip6-rewrite;
 * glean and unresolved rewrites -> ip6-glean; no route -> an ICMPv6
 * Destination Unreachable, code 0 (RFC 4443 §3.1), built in place by
 * icmp6_error_make (rate-limited, never about an error or a multicast;
 * back out of the rx interface), else error-drop. The adjacency index
 * goes to ip6_opaque for the next node.
 * A multipath route's LB adjacency: the packet's flow takes one bucket
 * (ip6_flow_hash, ip6_lb_pick) and the opaque gets that path's adjacency,
 * so the nodes after never see an LB.
 *
 * Next nodes: error-drop, ip6-local, ip6-rewrite, ip6-glean,
 *   interface-output (Destination Unreachable).
 * Errors: no route (every such packet); ICMPv6 destination unreachable
 *   sent.
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
	IP6_LOOKUP_N_ERROR,
};

static const char *const ip6_lookup_error_strings[IP6_LOOKUP_N_ERROR] = {
	[IP6_LOOKUP_ERROR_NO_ROUTE] = "no route",
	[IP6_LOOKUP_ERROR_UNREACH_SENT] = "no route: ICMPv6 destination unreachable sent",
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

static inline const ip6_addr_a2 *dst_of(struct buffer *b)
{
	return &((const struct ip6_header *)buffer_data(b))->dst;
}

static uint32_t ip6_lookup_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	uint32_t adj[FRAME_SIZE + 3];
	const struct ip6_fib *fib = ip6_fib_main;
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	uint32_t i = 0, flags = 0;

#define B(k) ((struct buffer *)(base + bi[k] * stride))
	if (unlikely(!fib)) {
		memset(adj, 0, n * sizeof(adj[0]));
	} else {
		for (; i + 4 <= n; i += 4) {
			/* The next four's headers, read in the next turn. */
			if (i + 8 <= n) {
				__builtin_prefetch(buffer_data(B(i + 4)) + 24);
				__builtin_prefetch(buffer_data(B(i + 5)) + 24);
				__builtin_prefetch(buffer_data(B(i + 6)) + 24);
				__builtin_prefetch(buffer_data(B(i + 7)) + 24);
			}
			ip6_fib_lookup_x4(fib, dst_of(B(i)), dst_of(B(i + 1)), dst_of(B(i + 2)), dst_of(B(i + 3)),
					  adj + i);
		}
		for (; i < n; i++)
			adj[i] = ip6_fib_lookup(fib, dst_of(B(i)));
	}
	/* The next node is the adjacency's, decided once per run of one. */
	uint32_t last_adj = adj[0], n_sent = 0;
	uint16_t last_next = next_of(last_adj);
	uint64_t now = 0;
	bool whole = true;
	for (i = 0; i < n; i++) {
		struct buffer *b = B(i);
		if (unlikely(adj[i] != last_adj)) {
			last_adj = adj[i];
			last_next = next_of(last_adj);
		}
		uint16_t next = last_next;
		if (unlikely(next == IP6_LOOKUP_NEXT_LB)) { /* ECMP: this flow's path */
			adj[i] = ip6_lb_pick(ip6_adj_get(adj[i]), ip6_flow_hash((const struct ip6_header *)buffer_data(b)));
			next = next_of(adj[i]);
		}
		ip6_opaque(b)->adj_index = adj[i];
		flags |= b->flags; /* before: the error replaces the packet */
		nexts[i] = unlikely(next == IP6_LOOKUP_NEXT_DROP) ? no_route(rt, &now, b, &n_sent) : next;
		whole &= nexts[i] == nexts[0];
	}
	if (unlikely(n_sent)) {
		node_count_error(rt, IP6_LOOKUP_ERROR_NO_ROUTE, n_sent);
		node_count_error(rt, IP6_LOOKUP_ERROR_UNREACH_SENT, n_sent);
	}
	if (unlikely(flags & BUFFER_F_TRACED))
		for (i = 0; i < n; i++)
			if (B(i)->flags & BUFFER_F_TRACED)
				trace_one(rt, B(i));
#undef B
	if (likely(whole))
		node_forward_frame(rt, nexts[0], f);
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
