/* error-drop: the sink for everything a node rejects.
 *
 * Next nodes: none. Errors: none of its own; it counts each buffer under the
 * error index the rejecting node stored in b->error (`show errors`).
 * Trace: the error index and its node. CLI: `show errors`, `clear errors`.
 */
#include <stdio.h>

#include "graph/graph_private.h"

/* Pointers to the registration's static strings: valid for the process. */
struct error_drop_trace {
	const char *node;
	const char *reason;
	uint16_t error;
};

static int error_drop_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	const struct error_drop_trace *t = (const void *)detail;
	if (!t->node)
		return snprintf(buf, len, "error %u", t->error);
	return snprintf(buf, len, "%s: %s", t->node, t->reason);
}

static void error_drop_trace(struct node_runtime *rt, struct buffer *b)
{
	struct error_drop_trace *t = (void *)node_trace_detail(rt, b);
	uint32_t node;
	const char *reason;
	if (!t)
		return;
	t->error = b->error;
	if (graph_error_info(rt->graph, b->error, &node, &reason) == 0) {
		t->node = graph_node_reg(rt->graph, node)->name;
		t->reason = reason;
	}
}

static uint32_t error_drop_fn(struct node_runtime *rt, struct frame *f)
{
	uint64_t *counts = rt->error_counts;
	uint32_t n_errors = rt->graph->n_errors;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		if (likely(b->error < n_errors))
			stat_add(&counts[b->error], 1);
		if (unlikely(b->flags & BUFFER_F_TRACED))
			error_drop_trace(rt, b);
	}
	struct graph *g = rt->graph;
	if (unlikely(g->drop_tap))
		g->drop_tap(g->drop_tap_arg, f->buffers, f->n_vectors);
	buffer_free(f->buffers, f->n_vectors);
	graph_elog_drops(rt->thread); /* drop bursts in the event log, rate-limited */
	return f->n_vectors;
}

const struct node_reg error_drop_node = {
	.name = "error-drop",
	.type = NODE_TYPE_INTERNAL,
	.fn = error_drop_fn,
	.format_trace = error_drop_format_trace,
};
