/* pcap-capture: writes what `pcap capture` copied on the datapath into its
 * file, from thread 0, a bounded batch per run.
 *
 * A process node, disabled until `pcap capture ...` enables it (so it costs
 * the loop nothing otherwise). Each run writes up to PCAP_CAPTURE_BUDGET
 * captured packets through libpcap's buffered stdio (one write system call
 * per megabyte), so the thread is held for tens of microseconds at most;
 * when the batch was full it runs again on the next loop, else it sleeps a
 * millisecond. Once the capture's max packets are written the file is
 * closed (drivers/capture.c) and the node sleeps until `pcap capture off`
 * disables it.
 *
 * Next nodes: none. Errors: none. Trace: none.
 * CLI: `pcap capture rx|tx|drop ...`, `pcap capture off`, `show runtime`.
 */
#include "drivers/capture.h"
#include "graph/node.h"

#define PCAP_CAPTURE_BUDGET 256
#define PCAP_CAPTURE_IDLE_NS 1000000ull

static uint32_t pcap_capture_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)frame;
	uint32_t n = dev_capture_flush(PCAP_CAPTURE_BUDGET);
	if (n < PCAP_CAPTURE_BUDGET)
		node_suspend(rt, PCAP_CAPTURE_IDLE_NS);
	return n;
}

static const struct node_reg pcap_capture_node = {
	.name = "pcap-capture",
	.type = NODE_TYPE_PROCESS,
	.fn = pcap_capture_fn,
	.default_state = NODE_STATE_DISABLED,
};
NODE_REGISTER(pcap_capture_node)
