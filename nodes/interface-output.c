/* interface-output: hands packets to their tx interface's driver.
 *
 * Packets are grouped per tx interface (b->tx_if), keeping their order
 * within each interface, and each group goes to the driver's tx burst on the
 * calling thread's tx queue in one call. TX-packets and TX-bytes count what
 * the driver took; what it did not take, and everything for an interface
 * that is administratively down, is counted as TX-dropped on that queue and
 * dropped under this node's errors.
 *
 * Next nodes: error-drop.
 * Errors: interface down; tx queue full (the driver did not take it); no
 *   such tx interface.
 * Trace: tx interface name and index, tx queue, length, Ethernet header.
 * CLI: `show interface`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/ethernet.h"

enum interface_output_next {
	INTERFACE_OUTPUT_NEXT_DROP = 0,
	INTERFACE_OUTPUT_N_NEXT,
};

enum interface_output_error {
	INTERFACE_OUTPUT_ERROR_DOWN = 0,
	INTERFACE_OUTPUT_ERROR_TX_FULL,
	INTERFACE_OUTPUT_ERROR_NO_INTERFACE,
	INTERFACE_OUTPUT_N_ERROR,
};

static const char *const interface_output_error_strings[INTERFACE_OUTPUT_N_ERROR] = {
	[INTERFACE_OUTPUT_ERROR_DOWN] = "interface down",
	[INTERFACE_OUTPUT_ERROR_TX_FULL] = "tx queue full (not taken by the driver)",
	[INTERFACE_OUTPUT_ERROR_NO_INTERFACE] = "no such tx interface",
};

struct interface_output_trace {
	uint32_t tx_if;
	uint16_t queue;
	uint16_t length;
	uint8_t eth[ETH_HDR_LEN];
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct interface_output_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int interface_output_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct interface_output_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "%.*s (if %u) tx queue %u length %u: ", ETH_TRACE_NAME_SIZE, t.name,
			 t.tx_if, t.queue, t.length);
	if (n < 0 || (size_t)n >= len)
		return n;
	return n + eth_format_header(buf + n, len - (size_t)n, t.eth);
}

/* ---- helpers ---- */

/* Per thread: room to gather one interface's packets out of a mixed frame. */
struct interface_output_data {
	uint32_t group[FRAME_SIZE];
	uint32_t rest[FRAME_SIZE];
};

/* Drop n packets under error `code`; TX-dropped when the interface exists. */
static void drop(struct node_runtime *rt, struct dev_counters *c, const uint32_t *bi, uint32_t n, uint16_t code)
{
	uint16_t error = node_error(rt, code);
	for (uint32_t i = 0; i < n; i++)
		buffer_get(bi[i])->error = error;
	node_enqueue(rt, INTERFACE_OUTPUT_NEXT_DROP, bi, n);
	if (c)
		stat_add(&c->tx_dropped, n);
}

static void trace_group(struct node_runtime *rt, uint32_t tx_if, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (!(b->flags & BUFFER_F_TRACED))
			continue;
		uint8_t *detail = node_trace_detail(rt, b);
		if (!detail)
			continue;
		struct interface_output_trace t = { .tx_if = tx_if, .queue = queue, .length = b->current_length };
		eth_trace_header(t.eth, b);
		eth_trace_name(t.name, tx_if);
		memcpy(detail, &t, sizeof(t));
	}
}

/* Send n packets, all for interface tx_if, of `bytes` bytes in total. */
static void send_group(struct node_runtime *rt, uint32_t tx_if, const uint32_t *bi, uint32_t n, uint64_t bytes,
		       bool traced)
{
	struct device *dev = dev_by_index(tx_if);
	if (unlikely(!dev)) {
		drop(rt, NULL, bi, n, INTERFACE_OUTPUT_ERROR_NO_INTERFACE);
		return;
	}
	uint16_t q = dev_tx_queue(dev, rt->thread_index);
	struct dev_counters *c = &dev->txq[q].c;
	/* Trace before the driver takes the buffers: it may free them at once. */
	if (unlikely(traced))
		trace_group(rt, tx_if, q, bi, n);
	if (unlikely(!dev->admin_up)) {
		drop(rt, c, bi, n, INTERFACE_OUTPUT_ERROR_DOWN);
		return;
	}
	uint32_t taken = dev_tx_burst(dev, q, bi, n);
	if (unlikely(taken < n)) {
		/* Ours again: take their bytes off the count and drop them. */
		for (uint32_t i = taken; i < n; i++)
			bytes -= eth_packet_length(buffer_get(bi[i]));
		drop(rt, c, bi + taken, n - taken, INTERFACE_OUTPUT_ERROR_TX_FULL);
	}
	stat_add(&c->tx_packets, taken);
	stat_add(&c->tx_bytes, bytes);
}

/* ---- the node ---- */

static uint32_t interface_output_fn(struct node_runtime *rt, struct frame *f)
{
	struct interface_output_data *d = rt->data;
	uint32_t n = f->n_vectors;
	uint32_t tx_if = buffer_get(f->buffers[0])->tx_if;
	uint64_t bytes = 0;
	uint32_t traced = 0;
	uint32_t i;

	/* Common case: the whole frame leaves through one interface. One pass
	 * over the header lines, then one driver call. */
	for (i = 0; i < n; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		if (unlikely(b->tx_if != tx_if))
			break;
		bytes += eth_packet_length(b);
		traced |= b->flags & BUFFER_F_TRACED;
	}
	if (likely(i == n)) {
		send_group(rt, tx_if, f->buffers, n, bytes, traced);
		return n;
	}

	/* Mixed frame: peel off one interface's packets at a time (in order),
	 * so each driver still gets one call; O(packets x interfaces), and a
	 * frame rarely spans more than a few. */
	const uint32_t *todo = f->buffers;
	uint32_t n_todo = n;
	while (n_todo) {
		uint32_t n_group = 0, n_rest = 0;
		tx_if = buffer_get(todo[0])->tx_if;
		bytes = 0;
		traced = 0;
		for (i = 0; i < n_todo; i++) {
			struct buffer *b = buffer_get(todo[i]);
			if (b->tx_if == tx_if) {
				d->group[n_group++] = todo[i];
				bytes += eth_packet_length(b);
				traced |= b->flags & BUFFER_F_TRACED;
			} else {
				d->rest[n_rest++] = todo[i];
			}
		}
		send_group(rt, tx_if, d->group, n_group, bytes, traced);
		/* rest may be compacted in place: reads stay ahead of writes. */
		todo = d->rest;
		n_todo = n_rest;
	}
	return n;
}

static const struct node_reg interface_output_node = {
	.name = "interface-output",
	.type = NODE_TYPE_INTERNAL,
	.fn = interface_output_fn,
	.n_next = INTERFACE_OUTPUT_N_NEXT,
	.next_nodes = { [INTERFACE_OUTPUT_NEXT_DROP] = "error-drop" },
	.n_errors = INTERFACE_OUTPUT_N_ERROR,
	.error_strings = interface_output_error_strings,
	.format_trace = interface_output_format_trace,
	.runtime_data_size = sizeof(struct interface_output_data),
};
NODE_REGISTER(interface_output_node)
