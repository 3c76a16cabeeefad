/* interface-output: hands packets to their tx interface's driver tx node.
 *
 * Packets are grouped per tx interface (b->tx_if), keeping their order
 * within each interface, and each group goes, as one frame naming the
 * interface and the calling thread's tx queue (device_tx.h), to the tx node
 * of the interface's driver (null-tx, pcap-tx, af-packet-tx), which calls
 * the driver and counts TX-packets and TX-bytes. A frame that leaves whole
 * through one interface (the common case) is handed on as it is: no copy.
 * Everything for an interface that is administratively down, or whose
 * driver has no tx node, is counted here as TX-dropped on that queue and
 * dropped under this node's errors.
 *
 * Next nodes: error-drop, sched-egress, which takes the frames of shaped or
 *   delayed interfaces (sched_egress_on) and passes them on to the same tx
 *   node in time, distributor-return, which takes the packets marked
 *   BUFFER_F_DIST_ORDERED (ordered packets on a distributor worker: they
 *   go back to the distributor thread, which sends them in arrival order;
 *   nodes/dist/distributor-return.c), then the <driver>-tx nodes, each
 *   added when the first interface whose driver's ops name it is created
 *   (drivers/device.h, dev tx senders; the arc per interface is in
 *   interface_output_tx).
 * Errors: interface down; no such tx interface; no tx node for the driver.
 * Trace: tx interface name and index, tx queue, length, Ethernet header.
 * CLI: `show interface`, `show errors`, `show trace`.
 */
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"
#include "nodes/device_tx.h"
#include "nodes/ethernet.h"
#include "nodes/sched/sched_io.h"

enum interface_output_next {
	INTERFACE_OUTPUT_NEXT_DROP = 0, /* also "no tx node" in interface_output_tx */
	INTERFACE_OUTPUT_NEXT_SCHED_EGRESS,
	INTERFACE_OUTPUT_NEXT_DIST_RETURN,
	INTERFACE_OUTPUT_N_NEXT, /* the tx nodes' arcs follow, added at run time */
};

enum interface_output_error {
	INTERFACE_OUTPUT_ERROR_DOWN = 0,
	INTERFACE_OUTPUT_ERROR_NO_INTERFACE,
	INTERFACE_OUTPUT_ERROR_NO_TX_NODE,
	INTERFACE_OUTPUT_N_ERROR,
};

static const char *const interface_output_error_strings[INTERFACE_OUTPUT_N_ERROR] = {
	[INTERFACE_OUTPUT_ERROR_DOWN] = "interface down",
	[INTERFACE_OUTPUT_ERROR_NO_INTERFACE] = "no such tx interface",
	[INTERFACE_OUTPUT_ERROR_NO_TX_NODE] = "no tx node for the interface's driver",
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

/* Per interface: the arc to its driver's tx node (the device layer keeps
 * it, the same on every thread). */
static struct dev_tx_sender interface_output_tx = { .node = "interface-output" };
DEV_TX_SENDER_REGISTER(interface_output_tx)

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

/* Send n packets, all for interface tx_if, of `bytes` bytes in total, to its
 * driver's tx node: frame f itself when it is given (it holds exactly these
 * packets), else a frame of their own. */
static void send_group(struct node_runtime *rt, uint32_t tx_if, const uint32_t *bi, uint32_t n, uint64_t bytes,
		       bool traced, struct frame *f)
{
	struct device *dev = dev_by_index(tx_if);
	if (unlikely(!dev)) {
		drop(rt, NULL, bi, n, INTERFACE_OUTPUT_ERROR_NO_INTERFACE);
		return;
	}
	uint16_t q = dev_tx_queue(dev, rt->thread_index);
	if (unlikely(traced))
		trace_group(rt, tx_if, q, bi, n);
	if (unlikely(!dev->admin_up)) {
		drop(rt, &dev->txq[q].c, bi, n, INTERFACE_OUTPUT_ERROR_DOWN);
		return;
	}
	uint16_t next = interface_output_tx.next[tx_if];
	if (unlikely(next == INTERFACE_OUTPUT_NEXT_DROP)) {
		drop(rt, &dev->txq[q].c, bi, n, INTERFACE_OUTPUT_ERROR_NO_TX_NODE);
		return;
	}
	/* A shaped or delayed interface: sched-egress holds the packets and
	 * hands them to the same tx node in time (one test per frame). */
	if (unlikely(sched_egress_on[tx_if]))
		next = INTERFACE_OUTPUT_NEXT_SCHED_EGRESS;
	struct device_tx_scalar s = { .tx_if = tx_if, .queue = q, .traced = traced, .bytes = bytes };
	if (f) {
		device_tx_set(f, &s);
		node_forward_frame(rt, next, f);
	} else {
		device_tx_enqueue_batch(rt, next, bi, n, &s);
	}
}

/* The packets marked BUFFER_F_DIST_ORDERED go to distributor-return (in
 * their order); the others, in order, to rest[]. Returns how many those
 * are. Out of line: only frames with an ordered packet come here. */
static __attribute__((noinline)) uint32_t divert_ordered(struct node_runtime *rt, const uint32_t *bi, uint32_t n,
							  uint32_t *ord, uint32_t *rest)
{
	uint32_t n_ord = 0, n_rest = 0;
	for (uint32_t i = 0; i < n; i++) {
		if (buffer_get(bi[i])->flags & BUFFER_F_DIST_ORDERED)
			ord[n_ord++] = bi[i];
		else
			rest[n_rest++] = bi[i];
	}
	node_enqueue(rt, INTERFACE_OUTPUT_NEXT_DIST_RETURN, ord, n_ord);
	return n_rest;
}

/* ---- the node ---- */

/* Common case first: one pass, four packets a turn and no branch per
 * packet, over the header lines (tx interface, flags, length), then the
 * frame goes on whole to the tx node. Callgrind, bench/io (256 per frame,
 * one interface per frame, x86-64-v3): 11.8 instructions per packet, its
 * tx arc one table read per frame (the loop bound is n & ~3: with i + 4 <= n
 * gcc spilled i, one more instruction per turn). Before
 * the tx nodes, this node called the driver itself: 19.5 per packet, of
 * which 8.7 were a one-packet loop with a branch per packet and 4 the byte
 * count. */
static uint32_t interface_output_fn(struct node_runtime *rt, struct frame *f)
{
	struct interface_output_data *d = rt->data;
	const uint32_t n = f->n_vectors;
	const uint32_t *bi = f->buffers;
	uint32_t tx_if = buffer_get(bi[0])->tx_if;
	uint32_t diff = 0, flags = 0;
	uint64_t bytes = 0;
	uint32_t i = 0;

	for (const uint32_t n4 = n & ~3u; i < n4; i += 4) {
		const struct buffer *b0 = buffer_get(bi[i]), *b1 = buffer_get(bi[i + 1]);
		const struct buffer *b2 = buffer_get(bi[i + 2]), *b3 = buffer_get(bi[i + 3]);
		diff |= (b0->tx_if ^ tx_if) | (b1->tx_if ^ tx_if) | (b2->tx_if ^ tx_if) | (b3->tx_if ^ tx_if);
		flags |= b0->flags | b1->flags | b2->flags | b3->flags;
		bytes += (uint32_t)b0->current_length + b1->current_length + b2->current_length + b3->current_length;
	}
	for (; i < n; i++) {
		const struct buffer *b = buffer_get(bi[i]);
		diff |= b->tx_if ^ tx_if;
		flags |= b->flags;
		bytes += b->current_length;
	}
	if (likely(!diff && !(flags & (BUFFER_F_NEXT_PRESENT | BUFFER_F_DIST_ORDERED)))) {
		send_group(rt, tx_if, bi, n, bytes, flags & BUFFER_F_TRACED, f);
		return n;
	}

	const uint32_t *todo = bi;
	uint32_t n_todo = n;
	/* Ordered packets on a distributor worker take the arc back to the
	 * distributor, which sends them in arrival order; the rest go on. */
	if (unlikely(flags & BUFFER_F_DIST_ORDERED)) {
		n_todo = divert_ordered(rt, bi, n, d->group, d->rest);
		todo = d->rest;
	}

	/* Mixed frame (or chains): peel off one interface's packets at a time
	 * (in order), each into a frame of its own; O(packets x interfaces),
	 * and a frame rarely spans more than a few. */
	while (n_todo) {
		uint32_t n_group = 0, n_rest = 0;
		tx_if = buffer_get(todo[0])->tx_if;
		flags = 0;
		bytes = 0;
		for (i = 0; i < n_todo; i++) {
			struct buffer *b = buffer_get(todo[i]);
			if (b->tx_if == tx_if) {
				d->group[n_group++] = todo[i];
				flags |= b->flags;
				bytes += eth_packet_length(b);
			} else {
				d->rest[n_rest++] = todo[i];
			}
		}
		/* The input frame itself when it is all one interface. */
		send_group(rt, tx_if, d->group, n_group, bytes, flags & BUFFER_F_TRACED,
			   n_group == n && todo == bi ? f : NULL);
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
	.next_nodes = {
		[INTERFACE_OUTPUT_NEXT_DROP] = "error-drop",
		[INTERFACE_OUTPUT_NEXT_SCHED_EGRESS] = "sched-egress",
		[INTERFACE_OUTPUT_NEXT_DIST_RETURN] = "distributor-return",
	},
	.n_errors = INTERFACE_OUTPUT_N_ERROR,
	.error_strings = interface_output_error_strings,
	.format_trace = interface_output_format_trace,
	.runtime_data_size = sizeof(struct interface_output_data),
};
NODE_REGISTER(interface_output_node)
