/* distributor-return: the ordered packets' way back. On a distributor
 * worker, interface-output sends here the packets marked
 * BUFFER_F_DIST_ORDERED (handoff-input marks them, their handoff tag in
 * flow_tag), and this node hands them back to the distributor thread
 * (dist_worker_return) instead of transmitting them; the distributor
 * thread's distributor-flush sends them to its own interface-output in
 * arrival order (sched/dist/dist.h, "Scheduling types"). It runs in the
 * same dispatch loop as interface-output, before handoff-input reports the
 * batch complete, as dist_worker_return requires.
 *
 * The mark is cleared on every packet here: a packet that leaves this node
 * is an ordinary one. Not on a worker (no distributor attached any more,
 * or thread 0), or when the worker's return ring is full (counted by the
 * library as reorder_full: the ring is sized so that it does not happen),
 * the packets go back to interface-output on this thread.
 *
 * Why an arc and not a call from interface-output: interface-output then
 * knows nothing of the distributor, and its common path (no ordered
 * packet in the frame) tests one flag per frame, as before.
 *
 * Next nodes: interface-output.
 * Errors: none (nothing is dropped here).
 * Trace: the sequence number, and the worker that hands it back or that
 *   it is sent on from here.
 * CLI: `show distributor` (returned, reorder-full), `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/dist/dist_graph.h"

enum distributor_return_next {
	DISTRIBUTOR_RETURN_NEXT_INTERFACE_OUTPUT = 0,
	DISTRIBUTOR_RETURN_N_NEXT,
};

struct distributor_return_trace {
	uint16_t seq;     /* the 14-bit sequence number */
	uint8_t worker;   /* worker index + 1; 0: not on a worker */
};
_Static_assert(sizeof(struct distributor_return_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int distributor_return_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct distributor_return_trace t;
	memcpy(&t, detail, sizeof(t));
	if (!t.worker)
		return snprintf(buf, len, "ordered seq %u: not on a distributor worker, sent on here",
				t.seq & DIST_SEQ_MASK);
	return snprintf(buf, len, "ordered seq %u: worker %u hands it back to the distributor thread",
			t.seq & DIST_SEQ_MASK, t.worker - 1);
}

/* Per thread: the frame's sequence numbers. */
struct distributor_return_data {
	uint16_t seq[FRAME_SIZE];
};

/* Traced packets' records, written before the packets leave this thread. */
static void trace_frame(struct node_runtime *rt, const uint32_t *bi, const uint16_t *seq, uint32_t n,
			uint8_t worker)
{
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint8_t *detail = (b->flags & BUFFER_F_TRACED) ? node_trace_detail(rt, b) : NULL;
		if (!detail)
			continue;
		struct distributor_return_trace t = { .seq = seq[i], .worker = worker };
		memcpy(detail, &t, sizeof(t));
	}
}

static uint32_t distributor_return_fn(struct node_runtime *rt, struct frame *f)
{
	struct distributor_return_data *d = rt->data;
	struct dist *dist = dist_attached();
	const uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint32_t w = (uint32_t)rt->thread_index - 1;
	bool worker = dist && rt->thread_index && w < dist_n_workers(dist);
	uint32_t traced = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		/* Cleared before it leaves this thread: the distributor thread
		 * sends it on as an ordinary packet. */
		b->flags &= ~BUFFER_F_DIST_ORDERED;
		traced |= b->flags & BUFFER_F_TRACED;
		d->seq[i] = b->flow_tag;
	}
	if (unlikely(traced))
		trace_frame(rt, bi, d->seq, n, worker ? (uint8_t)(w + 1) : 0);
	uint32_t k = worker ? dist_worker_return(dist, w, bi, d->seq, n) : 0;
	if (unlikely(k < n))
		node_enqueue(rt, DISTRIBUTOR_RETURN_NEXT_INTERFACE_OUTPUT, bi + k, n - k);
	return n;
}

static const struct node_reg distributor_return_node = {
	.name = "distributor-return",
	.type = NODE_TYPE_INTERNAL,
	.fn = distributor_return_fn,
	.n_next = DISTRIBUTOR_RETURN_N_NEXT,
	.next_nodes = { [DISTRIBUTOR_RETURN_NEXT_INTERFACE_OUTPUT] = "interface-output" },
	.format_trace = distributor_return_format_trace,
	.runtime_data_size = sizeof(struct distributor_return_data),
};
NODE_REGISTER(distributor_return_node)
