/* Packet trace: input nodes mark packets; every node a marked packet reaches
 * gets a fixed-size record appended before it runs. Records live in one slot
 * per packet, written only by the thread that owns the packet at the time
 * (handoff passes ownership with release/acquire), so tracing takes no lock. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph_private.h"

/* The file's link type is Ethernet for every node (libpcap takes one link
 * type per file), so at an L3 node, whose packet starts at the IP header,
 * the Ethernet header ethernet-input stripped is copied from in front of
 * it: it is still there, as received, and the rest is as the node sees it. */
void graph_pcap_copy(struct graph_pcap_rec *rec, uint8_t *data, uint32_t max, const struct buffer *b)
{
	rec->flags = b->flags;
	rec->error = b->error;
	uint32_t l2 = b->l2_len && b->current_data == (int)b->l3_offset && b->current_data >= (int)b->l2_len
			      ? MIN((uint32_t)b->l2_len, max)
			      : 0;
	memcpy(data, (const uint8_t *)b + sizeof(*b) + BUFFER_HEADROOM + b->current_data - l2, l2);
	rec->caplen = l2 + buffer_chain_copy_out(b, data + l2, max - l2, &rec->len);
	rec->len += l2;
}

static void trace_append(struct node_runtime *rt, struct buffer *b, uint64_t ticks)
{
	struct trace_packet *p = &rt->graph->trace[b->trace_handle];
	if (p->n_records == TRACE_MAX_RECORDS_PER_PACKET) {
		p->n_lost++;
		return;
	}
	struct trace_bytes *tb = &rt->graph->trace_bytes[b->trace_handle * TRACE_MAX_RECORDS_PER_PACKET + p->n_records];
	struct trace_record *r = &p->records[p->n_records++];
	graph_pcap_copy(&tb->h, tb->data, TRACE_SNAPLEN, b);
	tb->h.ticks = ticks;
	tb->h.node_index = rt->node_index;
	tb->h.thread = rt->thread_index;
	tb->h.id = b->trace_handle + 1;
	r->ticks = ticks;
	r->node_index = rt->node_index;
	r->thread_index = rt->thread_index;
	r->reserved = 0;
	memset(r->detail, 0, sizeof(r->detail));
}

/* Start packet b's trace in the next free slot; false when the buffer is full. */
static bool trace_start(struct node_runtime *rt, struct buffer *b, uint64_t ticks)
{
	struct graph *g = rt->graph;
	uint32_t slot = atomic_fetch_add(&g->trace_next, 1);
	if (slot >= g->trace_cap)
		return false;
	b->flags |= BUFFER_F_TRACED;
	b->trace_handle = slot;
	g->trace[slot].n_records = 0;
	g->trace[slot].n_lost = 0;
	trace_append(rt, b, ticks);
	return true;
}

/* Only reached while the node has budget (node_trace_input), so the filter
 * costs nothing when no trace is armed. A packet the filter refuses is not
 * traced and does not use up the budget. */
void node_trace_input_mark(struct node_runtime *rt, const uint32_t *bi, uint32_t n)
{
	const struct pkt_filter *f = rt->graph->nodes[rt->node_index].trace_filter;
	uint64_t ticks = cpu_ticks();
	uint32_t k = 0, budget = rt->trace_budget & ~TRACE_BUDGET_DTRACE;
	for (uint32_t i = 0; i < n && k < budget; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (f && !pkt_filter_match(f, b))
			continue;
		if (!trace_start(rt, b, ticks)) {
			/* Trace buffer full: stop marking until `clear trace`. */
			k = budget;
			break;
		}
		k++;
	}
	rt->trace_budget -= k;
	/* After marking: a traced packet's trace id is its trace's number. */
	if (unlikely(rt->trace_budget & TRACE_BUDGET_DTRACE))
		graph_dtrace_frame(rt, bi, n);
}

/* Per frame while GRAPH_TAP_* is set: before the node runs, so both see the
 * bytes as the node receives them. */
void graph_trace_frame(struct node_runtime *rt, const struct frame *f)
{
	uint32_t taps = atomic_load_explicit(&rt->graph->frame_taps, memory_order_relaxed);
	if (taps & GRAPH_TAP_DTRACE)
		graph_dtrace_frame(rt, f->buffers, f->n_vectors);
	if (!(taps & GRAPH_TAP_TRACE))
		return;
	uint64_t ticks = cpu_ticks();
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		if (unlikely(b->flags & BUFFER_F_TRACED) && b->trace_handle < rt->graph->trace_cap)
			trace_append(rt, b, ticks);
	}
}

bool node_trace_armed(const struct node_runtime *rt)
{
	return atomic_load_explicit(&rt->graph->frame_taps, memory_order_relaxed) & GRAPH_TAP_TRACE;
}

uint8_t *node_trace_append(struct node_runtime *rt, struct buffer *b)
{
	if (!(b->flags & BUFFER_F_TRACED) || b->trace_handle >= rt->graph->trace_cap)
		return NULL;
	trace_append(rt, b, cpu_ticks());
	return node_trace_detail(rt, b);
}

uint8_t *node_trace_detail(struct node_runtime *rt, struct buffer *b)
{
	if (!(b->flags & BUFFER_F_TRACED) || b->trace_handle >= rt->graph->trace_cap)
		return NULL;
	struct trace_packet *p = &rt->graph->trace[b->trace_handle];
	if (p->n_records == 0)
		return NULL;
	struct trace_record *r = &p->records[p->n_records - 1];
	if (r->node_index != rt->node_index || r->thread_index != rt->thread_index)
		return NULL;
	return r->detail;
}

int graph_trace_add_filtered(struct graph *g, const char *node_name, uint32_t n, const char *filter, char *err,
			     size_t errlen)
{
	int ni = graph_node_index(g, node_name);
	if (ni < 0) {
		snprintf(err, errlen, "trace: no node named '%s'", node_name);
		return -ENOENT;
	}
	if (g->nodes[ni].reg->type != NODE_TYPE_INPUT) {
		snprintf(err, errlen, "trace: '%s' is not an input node", node_name);
		return -EINVAL;
	}
	struct pkt_filter *f = NULL;
	if (filter && !(f = pkt_filter_compile(filter, err, errlen)))
		return -EBADMSG;
	graph_barrier_sync(g);
	struct pkt_filter *old = g->nodes[ni].trace_filter;
	g->nodes[ni].trace_filter = f;
	for (uint32_t i = 0; i < g->n_threads; i++)
		g->threads[i]->rts[ni].trace_budget += n;
	atomic_fetch_or(&g->frame_taps, GRAPH_TAP_TRACE);
	graph_barrier_release(g);
	pkt_filter_free(old); /* no thread can be reading it now */
	return 0;
}

int graph_trace_add(struct graph *g, const char *node_name, uint32_t n, char *err, size_t errlen)
{
	return graph_trace_add_filtered(g, node_name, n, NULL, err, errlen);
}

const char *graph_trace_filter(struct graph *g, uint32_t node_index)
{
	if (node_index >= g->n_nodes || !g->nodes[node_index].trace_filter)
		return NULL;
	return pkt_filter_expr(g->nodes[node_index].trace_filter);
}

/* Caller holds the barrier, or the graph has no running thread. */
void graph_trace_filters_free(struct graph *g)
{
	for (uint32_t k = 0; k < g->n_nodes; k++) {
		pkt_filter_free(g->nodes[k].trace_filter);
		g->nodes[k].trace_filter = NULL;
	}
}

void graph_trace_clear(struct graph *g)
{
	graph_barrier_sync(g);
	for (uint32_t i = 0; i < g->n_threads; i++)
		for (uint32_t k = 0; k < g->n_nodes; k++)
			g->threads[i]->rts[k].trace_budget &= TRACE_BUDGET_DTRACE;
	graph_trace_filters_free(g);
	uint32_t next = atomic_load(&g->trace_next);
	uint32_t used = MIN(next, g->trace_cap);
	memset(g->trace, 0, used * sizeof(*g->trace));
	atomic_store(&g->trace_next, 0);
	atomic_fetch_and(&g->frame_taps, ~GRAPH_TAP_TRACE);
	graph_barrier_release(g);
}

uint32_t graph_trace_n_packets(struct graph *g)
{
	uint32_t next = atomic_load(&g->trace_next); /* once: MIN evaluates twice */
	return MIN(next, g->trace_cap);
}

uint32_t graph_trace_packet(struct graph *g, uint32_t i, const struct trace_record **records, uint32_t *n_lost)
{
	if (i >= graph_trace_n_packets(g))
		return 0;
	*records = g->trace[i].records;
	if (n_lost)
		*n_lost = g->trace[i].n_lost;
	return g->trace[i].n_records;
}

const struct graph_pcap_rec *graph_trace_packet_bytes(struct graph *g, uint32_t i, uint32_t k,
						      const uint8_t **data)
{
	if (i >= graph_trace_n_packets(g) || k >= g->trace[i].n_records)
		return NULL;
	struct trace_bytes *tb = &g->trace_bytes[i * TRACE_MAX_RECORDS_PER_PACKET + k];
	*data = tb->data;
	return &tb->h;
}

int graph_trace_format(struct graph *g, const struct trace_record *r, char *buf, size_t len)
{
	if (len)
		buf[0] = 0;
	if (r->node_index >= g->n_nodes)
		return 0;
	node_format_trace_fn_t *fmt = g->nodes[r->node_index].reg->format_trace;
	return fmt ? fmt(buf, len, r->detail) : 0;
}
