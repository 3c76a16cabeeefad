/* <driver>-input: the input node of every driver (null-input, pcap-input,
 * af-packet-input, ixgbe-input, i40e-input), one function for all of them.
 *
 * Each call polls the rx queues placed on the calling thread (dev_poll_list)
 * that belong to this node's driver and whose interface is up: one burst of
 * up to the interface's rx burst (a frame by default; startup.conf
 * `rx-burst N`, `set interface rx-burst NAME N`) per queue, received
 * straight into ethernet-input's open frame. Each buffer gets rx_if;
 * RX-packets and RX-bytes are added to the queue's counters once per burst.
 * One template (graph/node.h) makes the node of every registered driver
 * (dev_driver_instance), the driver its context: a new driver needs no line
 * here.
 *
 * Next nodes: ethernet-input; sched-ingress instead while a scheduling
 *   class is defined.
 * Errors: none (the driver counts RX-dropped and RX-errors on the queue).
 * Trace: interface name and index, rx queue, length, Ethernet header.
 * CLI: `show interface`, `show interface rx-placement`, `set interface rx-burst`,
 *   `trace add pcap-input N`,
 *   `pcap capture rx` (each burst is copied there while it runs).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "drivers/capture.h"
#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/ethernet.h"
#include "sched/class.h"

enum device_input_next {
	DEVICE_INPUT_NEXT_ETHERNET_INPUT = 0,
	DEVICE_INPUT_NEXT_SCHED_INGRESS,
	DEVICE_INPUT_N_NEXT,
};

struct device_input_trace {
	uint32_t if_index;
	uint16_t queue;
	uint16_t length;
	uint8_t eth[ETH_HDR_LEN];
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct device_input_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int device_input_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct device_input_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "%.*s (if %u) rx queue %u length %u: ", ETH_TRACE_NAME_SIZE, t.name,
			 t.if_index, t.queue, t.length);
	if (n < 0 || (size_t)n >= len)
		return n;
	return n + eth_format_header(buf + n, len - (size_t)n, t.eth);
}

/* DEV_RX_ADAPTIVE_NS in cpu ticks (the same for every thread). */
static uint64_t adaptive_ticks;

/* ---- helpers ---- */

static void trace_fill(struct node_runtime *rt, const struct dev_poll *p, const uint32_t *bi, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (!(b->flags & BUFFER_F_TRACED))
			continue;
		uint8_t *detail = node_trace_detail(rt, b);
		if (!detail)
			continue;
		struct device_input_trace t = {
			.if_index = p->dev->index,
			.queue = p->queue,
			.length = b->current_length,
		};
		eth_trace_header(t.eth, b);
		eth_trace_name(t.name, p->dev->index);
		memcpy(detail, &t, sizeof(t));
	}
}

/* One burst of up to the interface's rx burst (dev->rx_burst, a frame
 * unless `rx-burst` or `set interface rx-burst` said less: read once per
 * poll) from one queue into ethernet-input's frame (sched-ingress's while
 * a scheduling class is defined: one test per burst); returns its size. */
static uint32_t poll_queue(struct node_runtime *rt, const struct dev_poll *p)
{
	struct device *dev = p->dev;
	uint16_t next = unlikely(sched_classes_active()) ? DEVICE_INPUT_NEXT_SCHED_INGRESS
							 : DEVICE_INPUT_NEXT_ETHERNET_INPUT;
	uint32_t *bi = node_next_slots(rt, next, FRAME_SIZE);
	uint32_t n = dev_rx_burst(dev, p->queue, bi, dev->rx_burst);
	if (!n)
		return 0;
	/* Plain loop: one store and one load in the header line per packet,
	 * which the driver has just written. */
	uint64_t bytes = 0;
	uint32_t rx_if = dev->index;
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		b->rx_if = rx_if;
		bytes += eth_packet_length(b); /* a chained jumbo frame whole */
	}
	bool tracing = rt->trace_budget != 0;
	node_trace_input(rt, bi, n);
	if (unlikely(tracing))
		trace_fill(rt, p, bi, n);
	if (dev_capture_on(DEV_CAPTURE_RX))
		dev_capture_packets(rx_if, bi, n);
	node_next_commit(rt, next, n);
	struct dev_counters *c = &dev->rxq[p->queue].c;
	stat_add(&c->rx_packets, n);
	stat_add(&c->rx_bytes, bytes);
	return n;
}

/* The thread is about to block (its last look) and the queue was empty:
 * the driver arms the queue's wakeup and looks again (device_ops.rx_arm);
 * a frame that came in between keeps the thread awake. */
__attribute__((noinline, cold)) static void rx_arm(struct graph_thread *t, const struct dev_poll *p)
{
	if (p->dev->ops->rx_arm(p->dev, p->queue))
		graph_thread_stay_awake(t);
}

/* What the queue's rx mode (drivers/device_rx_mode.c) asks of the thread
 * after a poll that found n frames: spin (polling, adaptive within its
 * window), back off (a queue that cannot wake a blocked thread), or
 * nothing (the thread may block; in its last look the queue's wakeup is
 * armed). One cycle-counter read per empty poll of an adaptive queue (none
 * while it finds frames), one load per empty poll of a queue that may
 * sleep. */
static void rx_mode_after_poll(struct node_runtime *rt, const struct dev_poll *p, uint32_t n)
{
	struct dev_queue *q = &p->dev->rxq[p->queue];
	struct graph_thread *t = rt->thread;
	if (p->rx_mode == DEV_RX_MODE_POLLING) {
		graph_thread_stay_awake(t);
		return;
	}
	if (p->rx_mode == DEV_RX_MODE_ADAPTIVE) {
		/* The window starts at the first empty poll after frames, at
		 * most one loop after the last frame: a queue that finds frames
		 * on every poll reads no clock. */
		if (n) {
			q->last_rx_ticks = 0;
			graph_thread_stay_awake(t);
			return;
		}
		uint64_t now = cpu_ticks();
		if (!q->last_rx_ticks)
			q->last_rx_ticks = now;
		if (now - q->last_rx_ticks < adaptive_ticks) {
			graph_thread_stay_awake(t);
			return;
		}
	}
	if (unlikely(q->rx_wait == DEV_RX_WAIT_POLL))
		graph_thread_no_block(t);
	else if (!n && p->dev->ops->rx_arm && q->rx_wait == DEV_RX_WAIT_FD && unlikely(graph_thread_sleeping(t)))
		rx_arm(t, p);
}

/* ---- the node ---- */

static int device_input_init(struct node_runtime *rt)
{
	(void)rt;
	if (!adaptive_ticks)
		adaptive_ticks = (uint64_t)(cpu_ticks_per_second() * (double)DEV_RX_ADAPTIVE_NS / 1e9);
	return 0;
}

static uint32_t device_input_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)frame;
	const struct dev_driver *driver = rt->reg->context;
	uint32_t n_poll;
	const struct dev_poll *poll = dev_poll_list(rt->thread_index, &n_poll);
	uint32_t n = 0;
	for (uint32_t i = 0; i < n_poll; i++) {
		const struct dev_poll *p = &poll[i];
		if (p->dev->driver == driver && p->dev->admin_up) {
			uint32_t k = poll_queue(rt, p);
			rx_mode_after_poll(rt, p, k);
			n += k;
		}
	}
	return n;
}

static const struct node_template device_input_node = {
	.reg = {
		.name = "device-input",
		.type = NODE_TYPE_INPUT,
		.fn = device_input_fn,
		.n_next = DEVICE_INPUT_N_NEXT,
		.next_nodes = { [DEVICE_INPUT_NEXT_ETHERNET_INPUT] = "ethernet-input",
				[DEVICE_INPUT_NEXT_SCHED_INGRESS] = "sched-ingress" },
		.format_trace = device_input_format_trace,
		.default_state = NODE_STATE_POLLING,
		.init = device_input_init,
		.can_sleep = true,
	},
	.suffix = "-input",
	.instance = dev_driver_instance,
};
NODE_TEMPLATE_REGISTER(device_input_node)
