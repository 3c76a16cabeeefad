/* distributor: on the rx thread, hands every packet to a worker through the
 * attached distributor (sched/dist/dist.h), keeping each flow on one worker at a
 * time; distributor-flush: the rx thread's per-loop poll that harvests
 * completions and publishes backlogs when no packets arrive, and sends the
 * ordered packets the workers handed back, in arrival order, to
 * interface-output on this thread.
 *
 * Packets reaching this node are atomic (nothing classified them); sched's
 * event queues call dist_process with their types themselves. A test hook
 * (dist_graph_set_type_fn) may type them here.
 *
 * A packet's flow tag is the NIC's RSS hash when the buffer has one, else
 * the software Toeplitz hash of its 5-tuple (dist_buffer_tag). With no
 * distributor attached (no workers), frames go straight to ethernet-input.
 *
 * Next nodes: error-drop, ethernet-input (no distributor attached);
 *   distributor-flush: interface-output.
 * Errors: the flow's worker busy (ring and backlog full); a new flow with
 *   every worker busy; ordered/parallel with every worker busy; the reorder
 *   window full.
 * Trace: flow tag, whether the hash came from the NIC, the scheduling type
 *   (and sequence number when ordered), and the worker the packet went to
 *   (or the drop).
 * CLI: `show distributor`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/dist/dist_graph.h"

enum distributor_next {
	DISTRIBUTOR_NEXT_DROP = 0,
	DISTRIBUTOR_NEXT_ETHERNET_INPUT,
	DISTRIBUTOR_N_NEXT,
};

/* The node's errors are the library's drop reasons (dist_drop_reason_strings),
 * in the same order. */

struct distributor_trace {
	uint32_t flow_hash;
	uint32_t seq;   /* ordered and taken: its sequence number */
	uint16_t tag;
	uint8_t worker; /* index + 1; 0: dropped */
	uint8_t reason; /* enum dist_drop_reason when dropped */
	uint8_t nic_hash;
	uint8_t type;   /* enum sched_type */
};
_Static_assert(sizeof(struct distributor_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int distributor_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct distributor_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "flow tag 0x%04x (%s hash 0x%08x) %s", t.tag, t.nic_hash ? "nic" : "software",
			 t.flow_hash, t.type < SCHED_N_TYPES ? sched_type_names[t.type] : "?");
	if (n >= 0 && (size_t)n < len && t.type == SCHED_TYPE_ORDERED && t.worker)
		n += snprintf(buf + n, len - (size_t)n, " seq %u", t.seq);
	if (n >= 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n, " -> ");
	if (n < 0 || (size_t)n >= len)
		return n;
	if (t.worker)
		return n + snprintf(buf + n, len - (size_t)n, "worker %u", t.worker - 1);
	return n + snprintf(buf + n, len - (size_t)n, "dropped (%s)",
			    t.reason < DIST_N_DROP ? dist_drop_reason_strings[t.reason] : "?");
}

/* ---- helpers ---- */

/* Per thread scratch: a frame's tags and the library's answers. */
struct distributor_data {
	uint16_t tags[FRAME_SIZE];
	uint8_t types[FRAME_SIZE];
	uint32_t dropped[FRAME_SIZE];
	uint8_t reason[FRAME_SIZE];
	uint8_t assigned[FRAME_SIZE];
	uint8_t nic_hash[FRAME_SIZE];
	/* Traced packets: taken before dist_process hands them to a worker,
	 * after which the packet (and its trace slot's count) is the worker's. */
	uint8_t *detail[FRAME_SIZE];
	uint32_t flow_hash[FRAME_SIZE];
};

/* Fills the records found by trace_prepare; touches no buffer, since the
 * workers may already be running the packets. The record itself is this
 * node's own: a worker only appends after it. Ordered packets taken got
 * consecutive sequence numbers from seq. */
static void trace_frame(const struct distributor_data *d, const uint8_t *types, uint32_t n, uint32_t seq)
{
	uint32_t k = 0; /* walks the dropped list alongside */
	for (uint32_t i = 0; i < n; i++) {
		uint8_t reason = 0, type = types ? types[i] : SCHED_TYPE_ATOMIC;
		uint32_t s = 0;
		if (!d->assigned[i])
			reason = d->reason[k++];
		else if (type == SCHED_TYPE_ORDERED)
			s = seq++;
		uint8_t *detail = d->detail[i];
		if (!detail)
			continue;
		struct distributor_trace t = {
			.flow_hash = d->flow_hash[i],
			.tag = d->tags[i],
			.worker = d->assigned[i],
			.reason = reason,
			.nic_hash = d->nic_hash[i],
			.type = type,
			.seq = s,
		};
		memcpy(detail, &t, sizeof(t));
	}
}

/* ---- the nodes ---- */

static uint32_t distributor_fn(struct node_runtime *rt, struct frame *f)
{
	struct distributor_data *d = rt->data;
	struct dist *dist = dist_attached();
	uint32_t n = f->n_vectors;
	if (unlikely(!dist)) {
		node_forward_frame(rt, DISTRIBUTOR_NEXT_ETHERNET_INPUT, f);
		return n;
	}
	bool traced = false;
	dist_type_fn_t *type_fn = dist_graph_type_fn();
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		d->detail[i] = NULL;
		if (unlikely(type_fn))
			d->types[i] = type_fn(b);
		bool nic_hash = (b->flags & BUFFER_F_FLOW_HASH) != 0;
		d->tags[i] = dist_buffer_tag(b);
		if (unlikely(b->flags & BUFFER_F_TRACED)) {
			traced = true;
			d->nic_hash[i] = nic_hash;
			d->flow_hash[i] = b->flow_hash;
			d->detail[i] = node_trace_detail(rt, b);
		}
	}
	const uint8_t *types = type_fn ? d->types : NULL;
	uint32_t seq = dist_ordered_next(dist);
	uint32_t taken = dist_process(dist, f->buffers, d->tags, types, n, d->dropped, d->reason,
				      traced ? d->assigned : NULL);
	if (unlikely(traced))
		trace_frame(d, types, n, seq);
	if (unlikely(taken < n)) {
		for (uint32_t i = 0; i < n - taken; i++)
			buffer_get(d->dropped[i])->error = node_error(rt, d->reason[i]);
		node_enqueue(rt, DISTRIBUTOR_NEXT_DROP, d->dropped, n - taken);
	}
	return n;
}

static const struct node_reg distributor_node = {
	.name = "distributor",
	.type = NODE_TYPE_INTERNAL,
	.fn = distributor_fn,
	.n_next = DISTRIBUTOR_N_NEXT,
	.next_nodes = {
		[DISTRIBUTOR_NEXT_DROP] = "error-drop",
		[DISTRIBUTOR_NEXT_ETHERNET_INPUT] = "ethernet-input",
	},
	.n_errors = DIST_N_DROP,
	.error_strings = dist_drop_reason_strings,
	.format_trace = distributor_format_trace,
	.runtime_data_size = sizeof(struct distributor_data),
};
NODE_REGISTER(distributor_node)

enum distributor_flush_next {
	DISTRIBUTOR_FLUSH_NEXT_INTERFACE_OUTPUT = 0,
	DISTRIBUTOR_FLUSH_N_NEXT,
};

/* Polled every loop on the rx thread once a distributor is attached: frees
 * tags as workers finish and publishes what full rings left behind, so a
 * quiet input does not hold packets back; then sends the ordered packets
 * now in order. Returns packets moved, so the loop does not sleep while
 * there is work. */
static uint32_t distributor_flush_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	struct dist *dist = dist_attached();
	if (!dist)
		return 0;
	uint32_t n = dist_flush(dist);
	uint32_t bi[FRAME_SIZE]; /* not a frame: most loops have nothing to send */
	uint32_t k = dist_ordered_take(dist, bi, FRAME_SIZE);
	if (k)
		node_enqueue(rt, DISTRIBUTOR_FLUSH_NEXT_INTERFACE_OUTPUT, bi, k);
	else if (!n && !dist_idle(dist))
		graph_thread_stay_awake(rt->thread); /* a backlog or the reorder window to move on */
	return n + k;
}

static const struct node_reg distributor_flush_node = {
	.name = "distributor-flush",
	.type = NODE_TYPE_INPUT,
	.fn = distributor_flush_fn,
	.n_next = DISTRIBUTOR_FLUSH_N_NEXT,
	.next_nodes = { [DISTRIBUTOR_FLUSH_NEXT_INTERFACE_OUTPUT] = "interface-output" },
	.default_state = NODE_STATE_DISABLED,
	.can_sleep = true, /* dist_idle: not while a worker holds packets (completions are counted, not kicked) */
};
NODE_REGISTER(distributor_flush_node)
