/* sched-handoff-input: on the owner thread of shaped or delayed
 * interfaces (nodes/sched/sched_io.h), takes the packets other threads handed
 * over for them and passes them to sched-egress, one frame per interface,
 * as interface-output would have. Disabled until an interface gets a
 * schedule while workers run; enabled on its owner thread only.
 *
 * Next nodes: sched-egress.
 * Errors: none (a full ring is counted by the sender, sched-egress).
 * Trace: none of its own (the packets were traced by the sending thread).
 * CLI: `show sched` (owner thread per interface), `show runtime`.
 */
#include "graph/node.h"
#include "nodes/device_tx.h"
#include "nodes/sched/sched_io.h"

enum sched_handoff_input_next {
	SCHED_HANDOFF_INPUT_NEXT_SCHED_EGRESS = 0,
	SCHED_HANDOFF_INPUT_N_NEXT,
};

static uint32_t sched_handoff_input_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)frame;
	uint32_t bi[FRAME_SIZE], total = 0;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct sched_io_if *sif = &sched_io_ifs[i];
		if (!sif->e || sif->owner != rt->thread_index)
			continue;
		for (uint32_t t = 0; t < GRAPH_MAX_THREADS; t++) {
			if (!sif->ring[t])
				continue;
			uint32_t n = handoff_dequeue(sif->ring[t], bi, NULL, FRAME_SIZE);
			if (!n)
				continue;
			struct device *dev = dev_by_index(i);
			struct device_tx_scalar s = { .tx_if = i, .queue = dev ? dev_tx_queue(dev, rt->thread_index) : 0 };
			device_tx_enqueue_batch(rt, SCHED_HANDOFF_INPUT_NEXT_SCHED_EGRESS, bi, n, &s);
			total += n;
		}
	}
	return total;
}

static const struct node_reg sched_handoff_input_node = {
	.name = "sched-handoff-input",
	.type = NODE_TYPE_INPUT,
	.fn = sched_handoff_input_fn,
	.n_next = SCHED_HANDOFF_INPUT_N_NEXT,
	.next_nodes = { [SCHED_HANDOFF_INPUT_NEXT_SCHED_EGRESS] = "sched-egress" },
	.default_state = NODE_STATE_DISABLED,
	.can_sleep = true, /* sched-egress kicks through the handoff ring */
};
NODE_REGISTER(sched_handoff_input_node)
