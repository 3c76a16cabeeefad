/* ip4-lookup: longest-prefix match of each packet's destination in the FIB
 * (nodes/ip4/ip4_fib.h), four at a time, and dispatch by the adjacency's kind.
 *
 * The adjacency index goes to the buffer's ip4 opaque for the next node.
 * local -> ip4-local; glean (a connected subnet) and rewrite adjacencies
 * not yet resolved -> ip4-arp; resolved rewrite -> ip4-rewrite; drop (no
 * route: IP4_FIB_MISS is the drop adjacency) and blackhole routes ->
 * error-drop; unreachable and prohibit routes -> ip4-rewrite, which sends
 * their ICMP errors. A multipath route's load balance is resolved here to
 * one path by the packet's flow hash (ip4_flow_hash, ip4_lb_pick): the
 * opaque gets the path's adjacency, so the nodes after never see an LB.
 *
 * Next nodes: error-drop, ip4-local, ip4-arp, ip4-rewrite.
 * Errors: no route; blackhole route.
 * Trace: destination, adjacency index and kind.
 * CLI: `show ip fib`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/ip4/ip4.h"
#include "nodes/ip4/ip4_fib.h"
#include "nodes/ip4/ip4_interface.h"

enum ip4_lookup_next {
	IP4_LOOKUP_NEXT_DROP = 0,
	IP4_LOOKUP_NEXT_LOCAL,
	IP4_LOOKUP_NEXT_ARP,
	IP4_LOOKUP_NEXT_REWRITE,
	IP4_LOOKUP_N_NEXT,
	IP4_LOOKUP_NEXT_LB = IP4_LOOKUP_N_NEXT, /* not a next: pick a path first */
};

enum ip4_lookup_error {
	IP4_LOOKUP_ERROR_NO_ROUTE = 0,
	IP4_LOOKUP_ERROR_BLACKHOLE,
	IP4_LOOKUP_N_ERROR,
};

static const char *const ip4_lookup_error_strings[IP4_LOOKUP_N_ERROR] = {
	[IP4_LOOKUP_ERROR_NO_ROUTE] = "no route",
	[IP4_LOOKUP_ERROR_BLACKHOLE] = "blackhole route (dropped)",
};

struct ip4_lookup_trace {
	uint32_t dst;
	uint32_t adj_index;
	uint8_t kind;
	uint8_t resolved;
};
_Static_assert(sizeof(struct ip4_lookup_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int ip4_lookup_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct ip4_lookup_trace t;
	char d[16];
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%s: adjacency %u (%s%s)", ip4_format_addr(d, t.dst), t.adj_index,
			ip4_adj_kind_name(t.kind),
			t.kind == IP4_ADJ_REWRITE && !t.resolved ? ", unresolved" : "");
}

/* ---- helpers ---- */

/* Adjacency kind -> next node (a resolved rewrite: ip4-rewrite). */
static const uint8_t kind_next[IP4_ADJ_N_KIND] = {
	[IP4_ADJ_DROP] = IP4_LOOKUP_NEXT_DROP,
	[IP4_ADJ_LOCAL] = IP4_LOOKUP_NEXT_LOCAL,
	[IP4_ADJ_GLEAN] = IP4_LOOKUP_NEXT_ARP,
	[IP4_ADJ_REWRITE] = IP4_LOOKUP_NEXT_ARP, /* not yet resolved */
	[IP4_ADJ_LB] = IP4_LOOKUP_NEXT_LB,
	[IP4_ADJ_BLACKHOLE] = IP4_LOOKUP_NEXT_DROP,
	[IP4_ADJ_UNREACH] = IP4_LOOKUP_NEXT_REWRITE, /* its ICMP error */
	[IP4_ADJ_PROHIBIT] = IP4_LOOKUP_NEXT_REWRITE,
};

/* The next node of adjacency adj_index (drop: no route or blackhole). */
static uint16_t next_of_adj(const struct ip4_fib *fib, uint32_t adj_index)
{
	const struct ip4_adj *a = ip4_adj_get(fib, adj_index);
	return a->kind == IP4_ADJ_REWRITE && a->rewrite_len ? IP4_LOOKUP_NEXT_REWRITE : kind_next[a->kind];
}

/* The path a packet's flow takes through LB adjacency lb_adj. */
static inline uint32_t lb_resolve(const struct ip4_fib *fib, uint32_t lb_adj, struct buffer *b)
{
	return ip4_lb_pick(fib, ip4_adj_get(fib, lb_adj), ip4_flow_hash((const struct ip4_header *)buffer_data(b)));
}

/* The drop's reason: the adjacency tells a blackhole from no route. */
static uint16_t drop_error(struct node_runtime *rt, const struct ip4_fib *fib, struct buffer *b)
{
	bool bh = ip4_adj_get(fib, ip4_opaque(b)->adj_index)->kind == IP4_ADJ_BLACKHOLE;
	return node_error(rt, bh ? IP4_LOOKUP_ERROR_BLACKHOLE : IP4_LOOKUP_ERROR_NO_ROUTE);
}

static void trace_one(struct node_runtime *rt, const struct ip4_fib *fib, struct buffer *b)
{
	uint8_t *detail = node_trace_detail(rt, b);
	if (!detail)
		return;
	uint32_t adj_index = ip4_opaque(b)->adj_index;
	const struct ip4_adj *a = ip4_adj_get(fib, adj_index);
	struct ip4_lookup_trace t = { .dst = ((struct ip4_header *)buffer_data(b))->dst,
				      .adj_index = adj_index,
				      .kind = a->kind,
				      .resolved = a->rewrite_len != 0 };
	memcpy(detail, &t, sizeof(t));
}

static inline uint32_t dst_of(struct buffer *b)
{
	return ntohl(((const struct ip4_header *)buffer_data(b))->dst);
}

/* ---- the node ---- */

static uint32_t ip4_lookup_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	const struct ip4_fib *fib = ip4_fib_main;
	/* Locals: stores to buffers could otherwise alias the pool geometry. */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	uint32_t i = 0, flags = 0;

	if (unlikely(!fib)) {
		for (i = 0; i < n; i++)
			buffer_get(bi[i])->error = node_error(rt, IP4_LOOKUP_ERROR_NO_ROUTE);
		node_forward_frame(rt, IP4_LOOKUP_NEXT_DROP, f);
		return n;
	}
#define B(k) ((struct buffer *)(base + bi[k] * stride))
	/* The next node is the adjacency's, remembered across a run of one
	 * adjacency (a frame to one next hop decides it once). */
	uint32_t last_adj = ip4_fib_lookup(fib, dst_of(B(0)));
	uint16_t last_next = next_of_adj(fib, last_adj);
	/* A load balance: the first packet's path decides the frame's
	 * default next, and every packet goes through the loop below. */
	const uint16_t first_next = likely(last_next != IP4_LOOKUP_NEXT_LB)
					    ? last_next : next_of_adj(fib, lb_resolve(fib, last_adj, B(0)));

	/* Four at a time while the four share the first packet's adjacency,
	 * judged from their tbl24 entries (the four loads, the misses that
	 * matter with 1M routes, issued together): the same entry but for the
	 * depth, the first not a tbl8 group; other entries are looked up to
	 * the end and the run goes on if they give the same adjacency.
	 * Nothing is kept per packet but the adjacency in its opaque. The
	 * first packet of another adjacency, and the frame's last n % 4, go
	 * to the general loop below. No header prefetch: ip4-input read these
	 * headers within the same frame; prefetching them again cost 6
	 * instructions per packet for nothing. Instructions per packet
	 * (bench/ip4, callgrind, vector 256, 1 route / ~1.07M routes): 65.1
	 * with buffer_get, next_of and node_enqueue_to_nexts per packet (1M);
	 * 26.7 / 28.3 with a run cache, nexts[] per packet and the
	 * whole-frame hand-off; 16.2 / 18.3 here. */
	const uint32_t run_e = ip4_fib_entry24(fib, dst_of(B(0)));
	const uint32_t n_run = (run_e & IP4_FIB_E_EXT) || last_next == IP4_LOOKUP_NEXT_LB ? 0 : n;
	for (i = 0; i + 4 <= n_run; i += 4) {
		struct buffer *b0 = B(i), *b1 = B(i + 1), *b2 = B(i + 2), *b3 = B(i + 3);
		uint32_t e0 = ip4_fib_entry24(fib, dst_of(b0)), e1 = ip4_fib_entry24(fib, dst_of(b1));
		uint32_t e2 = ip4_fib_entry24(fib, dst_of(b2)), e3 = ip4_fib_entry24(fib, dst_of(b3));
		/* Other entries (tbl8 groups among them) may still give the
		 * same adjacency: then the run goes on. */
		if (unlikely(((e0 ^ run_e) | (e1 ^ run_e) | (e2 ^ run_e) | (e3 ^ run_e)) & ~IP4_FIB_E_DEPTH_MASK) &&
		    ((ip4_fib_entry_result(fib, e0, dst_of(b0)) ^ last_adj) |
		     (ip4_fib_entry_result(fib, e1, dst_of(b1)) ^ last_adj) |
		     (ip4_fib_entry_result(fib, e2, dst_of(b2)) ^ last_adj) |
		     (ip4_fib_entry_result(fib, e3, dst_of(b3)) ^ last_adj)))
			break;
		ip4_opaque(b0)->adj_index = last_adj;
		ip4_opaque(b1)->adj_index = last_adj;
		ip4_opaque(b2)->adj_index = last_adj;
		ip4_opaque(b3)->adj_index = last_adj;
		flags |= b0->flags | b1->flags | b2->flags | b3->flags;
	}

	/* One by one from the first packet the loop above did not take:
	 * nexts[] from here on, and whether all of them still go where the
	 * first packet goes (then the frame is handed on whole). */
	bool whole = true;
	for (uint32_t k = i; k < n; k++) {
		struct buffer *b = B(k);
		uint32_t adj = ip4_fib_lookup(fib, dst_of(b));
		flags |= b->flags;
		if (adj != last_adj) {
			last_adj = adj;
			last_next = next_of_adj(fib, last_adj);
		}
		uint16_t next = last_next;
		if (unlikely(next == IP4_LOOKUP_NEXT_LB)) {
			adj = lb_resolve(fib, adj, b);
			next = next_of_adj(fib, adj);
		}
		ip4_opaque(b)->adj_index = adj;
		nexts[k] = next;
		whole &= next == first_next;
	}
	if (unlikely(!whole))
		for (uint32_t k = 0; k < i; k++)
			nexts[k] = first_next;

	if (unlikely(!whole || first_next == IP4_LOOKUP_NEXT_DROP))
		for (i = 0; i < n; i++)
			if ((whole ? first_next : nexts[i]) == IP4_LOOKUP_NEXT_DROP)
				B(i)->error = drop_error(rt, fib, B(i));
	if (unlikely(flags & BUFFER_F_TRACED))
		for (i = 0; i < n; i++)
			if (B(i)->flags & BUFFER_F_TRACED)
				trace_one(rt, fib, B(i));
#undef B
	if (likely(whole))
		node_forward_frame(rt, first_next, f);
	else
		node_enqueue_to_nexts(rt, bi, nexts, n);
	return n;
}

static const struct node_reg ip4_lookup_node = {
	.name = "ip4-lookup",
	.type = NODE_TYPE_INTERNAL,
	.fn = ip4_lookup_fn,
	.n_next = IP4_LOOKUP_N_NEXT,
	.next_nodes = {
		[IP4_LOOKUP_NEXT_DROP] = "error-drop",
		[IP4_LOOKUP_NEXT_LOCAL] = "ip4-local",
		[IP4_LOOKUP_NEXT_ARP] = "ip4-arp",
		[IP4_LOOKUP_NEXT_REWRITE] = "ip4-rewrite",
	},
	.n_errors = IP4_LOOKUP_N_ERROR,
	.error_strings = ip4_lookup_error_strings,
	.format_trace = ip4_lookup_format_trace,
};
NODE_REGISTER(ip4_lookup_node)
