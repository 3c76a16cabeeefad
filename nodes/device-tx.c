/* <driver>-tx: the tx node of every driver (null-tx, pcap-tx,
 * af-packet-tx, ixgbe-tx, i40e-tx), one function for all of them.
 *
 * Each frame holds packets for one interface and tx queue, named in its
 * scalar area with their byte count (device_tx.h; interface-output batches
 * them). The node copies them into a running `pcap capture tx`, hands them to
 * the driver's tx burst in one call and counts TX-packets and TX-bytes for
 * what the driver took. What it did not take comes back to us (the burst
 * contract): counted as TX-dropped and sent to error-drop, which frees it.
 * One template (graph/node.h) makes the node of every registered driver
 * (dev_driver_instance), the driver its context: a new driver needs no line
 * here, only the node's name in its ops (tx_node), from which the device
 * layer adds the arcs to it.
 *
 * Next nodes: error-drop.
 * Errors: tx queue full (not taken by the driver); frame not for this
 *   driver (its interface is gone, or a stream was pointed at a tx node).
 * Trace: interface name and index, tx queue, length.
 * CLI: `show interface` (TX-*), `show errors`, `show trace`,
 *   `pcap capture tx`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/capture.h"
#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/device_tx.h"
#include "nodes/ethernet.h"

enum device_tx_next {
	DEVICE_TX_NEXT_DROP = 0,
	DEVICE_TX_N_NEXT,
};

enum device_tx_error {
	DEVICE_TX_ERROR_FULL = 0,
	DEVICE_TX_ERROR_NOT_OURS,
	DEVICE_TX_N_ERROR,
};

static const char *const device_tx_error_strings[DEVICE_TX_N_ERROR] = {
	[DEVICE_TX_ERROR_FULL] = "tx queue full (not taken by the driver)",
	[DEVICE_TX_ERROR_NOT_OURS] = "frame not for an interface of this driver",
};

struct device_tx_trace {
	uint32_t tx_if;
	uint16_t queue;
	uint16_t length;
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct device_tx_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int device_tx_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct device_tx_trace t;
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "%.*s (if %u) tx queue %u length %u", ETH_TRACE_NAME_SIZE, t.name, t.tx_if,
			t.queue, t.length);
}

/* ---- helpers ---- */

static void trace_batch(struct node_runtime *rt, uint32_t tx_if, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (!(b->flags & BUFFER_F_TRACED))
			continue;
		uint8_t *detail = node_trace_detail(rt, b);
		if (!detail)
			continue;
		struct device_tx_trace t = { .tx_if = tx_if, .queue = queue, .length = b->current_length };
		eth_trace_name(t.name, tx_if);
		memcpy(detail, &t, sizeof(t));
	}
}

static void drop(struct node_runtime *rt, const uint32_t *bi, uint32_t n, uint16_t code)
{
	uint16_t error = node_error(rt, code);
	for (uint32_t i = 0; i < n; i++)
		buffer_get(bi[i])->error = error;
	node_enqueue(rt, DEVICE_TX_NEXT_DROP, bi, n);
}

/* ---- the node ---- */

/* No pass over the packets unless one is traced or the driver leaves some:
 * interface-output's pass already summed their bytes (the scalar). Callgrind,
 * bench/io: 0.2 instructions per packet for this node with
 * null's tx (its buffer_free not included). */
static uint32_t device_tx_fn(struct node_runtime *rt, struct frame *f)
{
	const struct dev_driver *driver = rt->reg->context;
	struct device_tx_scalar s = device_tx_get(f);
	const uint32_t *bi = f->buffers;
	uint32_t n = f->n_vectors;
	struct device *dev = dev_by_index(s.tx_if);
	if (unlikely(!dev || dev->driver != driver || s.queue >= dev->n_tx_queues)) {
		drop(rt, bi, n, DEVICE_TX_ERROR_NOT_OURS);
		return n;
	}
	/* Both before the driver takes the buffers: it may free them at once. */
	if (unlikely(s.traced))
		trace_batch(rt, s.tx_if, s.queue, bi, n);
	if (dev_capture_on(DEV_CAPTURE_TX))
		dev_capture_packets(s.tx_if, bi, n);
	struct dev_counters *c = &dev->txq[s.queue].c;
	uint32_t taken = dev_tx_burst(dev, s.queue, bi, n);
	if (unlikely(taken < n)) {
		for (uint32_t i = taken; i < n; i++)
			s.bytes -= eth_packet_length(buffer_get(bi[i]));
		drop(rt, bi + taken, n - taken, DEVICE_TX_ERROR_FULL);
		stat_add(&c->tx_dropped, n - taken);
	}
	stat_add(&c->tx_packets, taken);
	stat_add(&c->tx_bytes, s.bytes);
	return n;
}

static const struct node_template device_tx_node = {
	.reg = {
		.name = "device-tx",
		.type = NODE_TYPE_INTERNAL,
		.fn = device_tx_fn,
		.n_next = DEVICE_TX_N_NEXT,
		.next_nodes = { [DEVICE_TX_NEXT_DROP] = "error-drop" },
		.n_errors = DEVICE_TX_N_ERROR,
		.error_strings = device_tx_error_strings,
		.format_trace = device_tx_format_trace,
	},
	.suffix = "-tx",
	.instance = dev_driver_instance,
};
NODE_TEMPLATE_REGISTER(device_tx_node)
