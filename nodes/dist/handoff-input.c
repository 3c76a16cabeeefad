/* handoff-input: a worker's input in distributor mode. Each call reports
 * the previous batch complete (every frame of it has been dispatched to its
 * end: handed to a tx queue or dropped) and takes the next lines from this
 * worker's handoff ring straight into ethernet-input's frame.
 *
 * Ordered packets (tags with DIST_TAG_ORDERED) are marked
 * BUFFER_F_DIST_ORDERED with their tag in flow_tag (their flow tag is of no
 * further use: nothing pins them): interface-output then sends them along
 * its arc to distributor-return, which hands them back to the distributor
 * thread, which sends them in arrival order.
 *
 * Graph thread k (k >= 1) is distributor worker k - 1. Disabled until
 * dist_graph_attach enables it on the worker threads.
 *
 * Next nodes: ethernet-input.
 * Errors: none (drops happen at the distributor, which counts them).
 * Trace: none of its own; a packet traced at rx shows the distributor's
 *   record (with the worker) and then ethernet-input's on this thread.
 * CLI: `show distributor`, `show runtime`.
 */
#include "graph/node.h"
#include "nodes/dist/dist_graph.h"

enum handoff_input_next {
	HANDOFF_INPUT_NEXT_ETHERNET_INPUT = 0,
	HANDOFF_INPUT_N_NEXT,
};

/* Per thread: the batch's tags; when lines last came. */
struct handoff_input_data {
	uint16_t tags[FRAME_SIZE];
	uint64_t last_ticks;
};

/* Like an adaptive rx queue (drivers/device_rx_mode.c): the worker keeps
 * polling for this long after its last lines, so a flow whose packets come
 * closer than this does not pay a wakeup per packet (a ping's reply comes
 * back through this worker tens of microseconds after its request). */
#define HANDOFF_INPUT_SPIN_NS 200000ull
static uint64_t spin_ticks;

static int handoff_input_init(struct node_runtime *rt)
{
	(void)rt;
	if (!spin_ticks)
		spin_ticks = (uint64_t)(cpu_ticks_per_second() * (double)HANDOFF_INPUT_SPIN_NS / 1e9);
	return 0;
}

/* ---- helpers ---- */

/* Out of line: only batches holding ordered packets come here. */
static __attribute__((noinline)) void mark_ordered(const uint32_t *bi, const uint16_t *tags, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		if ((tags[i] & (DIST_TAG_SPREAD | DIST_TAG_ORDERED)) != (DIST_TAG_SPREAD | DIST_TAG_ORDERED))
			continue;
		struct buffer *b = buffer_get(bi[i]);
		b->flags |= BUFFER_F_DIST_ORDERED;
		b->flow_tag = tags[i];
	}
}

/* ---- the node ---- */

static uint32_t handoff_input_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)frame;
	struct handoff_input_data *hd = rt->data;
	struct dist *d = dist_attached();
	uint32_t w = (uint32_t)rt->thread_index - 1;
	if (unlikely(!d || rt->thread_index == 0 || w >= dist_n_workers(d)))
		return 0;
	uint32_t *bi = node_next_slots(rt, HANDOFF_INPUT_NEXT_ETHERNET_INPUT, FRAME_SIZE);
	uint32_t n = dist_worker_poll(d, w, bi, hd->tags, FRAME_SIZE);
	if (unlikely(dist_worker_has_ordered(d, w)))
		mark_ordered(bi, hd->tags, n);
	uint64_t now = cpu_ticks();
	if (n) {
		node_next_commit(rt, HANDOFF_INPUT_NEXT_ETHERNET_INPUT, n);
		hd->last_ticks = now;
	} else if (unlikely(!dist_worker_idle(d, w)) || now - hd->last_ticks < spin_ticks) {
		graph_thread_stay_awake(rt->thread); /* a report not taken yet, or lines came just now */
	}
	return n;
}

static const struct node_reg handoff_input_node = {
	.name = "handoff-input",
	.type = NODE_TYPE_INPUT,
	.fn = handoff_input_fn,
	.n_next = HANDOFF_INPUT_N_NEXT,
	.next_nodes = { [HANDOFF_INPUT_NEXT_ETHERNET_INPUT] = "ethernet-input" },
	.default_state = NODE_STATE_DISABLED,
	.runtime_data_size = sizeof(struct handoff_input_data),
	.init = handoff_input_init,
	.can_sleep = true, /* the distributor kicks through the handoff ring */
};
NODE_REGISTER(handoff_input_node)
