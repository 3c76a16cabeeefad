/* ip4-lookup: longest-prefix match of each packet's destination in the FIB
 * (nodes/ip4_fib.h), four at a time, and dispatch by the adjacency's kind.
 *
 * The adjacency index goes to the buffer's ip4 opaque for the next node.
 * local -> ip4-local; glean (a connected subnet) and rewrite adjacencies
 * not yet resolved -> ip4-arp; resolved rewrite -> ip4-rewrite; drop (no
 * route: IP4_FIB_MISS is the drop adjacency) -> error-drop.
 *
 * Next nodes: error-drop, ip4-local, ip4-arp, ip4-rewrite.
 * Errors: no route.
 * Trace: destination, adjacency index and kind.
 * CLI: `show ip fib`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "nodes/ip4.h"
#include "nodes/ip4_fib.h"
#include "nodes/ip4_interface.h"

enum ip4_lookup_next {
	IP4_LOOKUP_NEXT_DROP = 0,
	IP4_LOOKUP_NEXT_LOCAL,
	IP4_LOOKUP_NEXT_ARP,
	IP4_LOOKUP_NEXT_REWRITE,
	IP4_LOOKUP_N_NEXT,
};

enum ip4_lookup_error {
	IP4_LOOKUP_ERROR_NO_ROUTE = 0,
	IP4_LOOKUP_N_ERROR,
};

static const char *const ip4_lookup_error_strings[IP4_LOOKUP_N_ERROR] = {
	[IP4_LOOKUP_ERROR_NO_ROUTE] = "no route",
};

static const char *const adj_kind_names[] = { "drop", "local", "glean", "rewrite" };

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
			t.kind < ARRAY_LEN(adj_kind_names) ? adj_kind_names[t.kind] : "?",
			t.kind == IP4_ADJ_REWRITE && !t.resolved ? ", unresolved" : "");
}

/* ---- helpers ---- */

/* Adjacency kind -> next node, rewrite split by resolution (index 4). */
static const uint8_t kind_next[5] = {
	[IP4_ADJ_DROP] = IP4_LOOKUP_NEXT_DROP,
	[IP4_ADJ_LOCAL] = IP4_LOOKUP_NEXT_LOCAL,
	[IP4_ADJ_GLEAN] = IP4_LOOKUP_NEXT_ARP,
	[IP4_ADJ_REWRITE] = IP4_LOOKUP_NEXT_ARP, /* not yet resolved */
	[4] = IP4_LOOKUP_NEXT_REWRITE,
};

static inline uint16_t next_of(struct node_runtime *rt, const struct ip4_fib *fib, struct buffer *b,
			       uint32_t adj_index)
{
	const struct ip4_adj *a = ip4_adj_get(fib, adj_index);
	ip4_opaque(b)->adj_index = adj_index;
	uint16_t next = kind_next[a->kind + (a->kind == IP4_ADJ_REWRITE && a->rewrite_len)];
	if (unlikely(next == IP4_LOOKUP_NEXT_DROP))
		b->error = node_error(rt, IP4_LOOKUP_ERROR_NO_ROUTE);
	if (unlikely(b->flags & BUFFER_F_TRACED)) {
		uint8_t *detail = node_trace_detail(rt, b);
		if (detail) {
			struct ip4_lookup_trace t = { .dst = ((struct ip4_header *)buffer_data(b))->dst,
						      .adj_index = adj_index,
						      .kind = a->kind,
						      .resolved = a->rewrite_len != 0 };
			memcpy(detail, &t, sizeof(t));
		}
	}
	return next;
}

static inline uint32_t dst_of(uint32_t bi)
{
	return ntohl(((const struct ip4_header *)buffer_data(buffer_get(bi)))->dst);
}

/* ---- the node ---- */

static uint32_t ip4_lookup_fn(struct node_runtime *rt, struct frame *f)
{
	uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint16_t nexts[FRAME_SIZE];
	const struct ip4_fib *fib = ip4_fib_main;
	uint32_t i = 0;

	if (unlikely(!fib)) {
		for (i = 0; i < n; i++)
			buffer_get(bi[i])->error = node_error(rt, IP4_LOOKUP_ERROR_NO_ROUTE);
		node_forward_frame(rt, IP4_LOOKUP_NEXT_DROP, f);
		return n;
	}

	/* Four at a time: the four tbl24 loads are issued together and the
	 * headers of the next four are prefetched meanwhile. */
	for (; i + 4 <= n; i += 4) {
		if (i + 8 <= n)
			for (uint32_t k = 4; k < 8; k++)
				PREFETCH_READ(buffer_data(buffer_get(bi[i + k])));
		uint32_t dst[4] = { dst_of(bi[i]), dst_of(bi[i + 1]), dst_of(bi[i + 2]), dst_of(bi[i + 3]) };
		uint32_t adj[4];
		ip4_fib_lookup_x4(fib, dst, adj);
		for (uint32_t k = 0; k < 4; k++)
			nexts[i + k] = next_of(rt, fib, buffer_get(bi[i + k]), adj[k]);
	}
	for (; i < n; i++)
		nexts[i] = next_of(rt, fib, buffer_get(bi[i]), ip4_fib_lookup(fib, dst_of(bi[i])));

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
