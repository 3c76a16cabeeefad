/* The contract between interface-output (or any node placed before a
 * driver's tx) and the <driver>-tx nodes (device-tx.c).
 *
 * A frame for a <driver>-tx node holds packets for one interface and one tx
 * queue only, named in the frame's scalar area. So a sender never appends
 * to the tx node's open frame (node_enqueue would mix interfaces): it hands
 * its own input frame on whole (node_forward_frame, after device_tx_set) or
 * opens a fresh frame per batch (device_tx_enqueue_batch).
 */
#ifndef SLUICE_NODES_DEVICE_TX_H
#define SLUICE_NODES_DEVICE_TX_H

#include <stdint.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/node.h"

/* bytes and traced are what the sender learnt in its own pass over the
 * packets' header lines, so that the tx node need not read them again:
 * the sum of their lengths (chains included) and whether any is traced. */
struct device_tx_scalar {
	uint32_t tx_if;
	uint16_t queue;
	uint8_t traced;
	uint8_t reserved;
	uint64_t bytes;
};
_Static_assert(sizeof(struct device_tx_scalar) <= FRAME_SCALAR_SIZE, "fits the frame's scalar area");

static inline void device_tx_set(struct frame *f, const struct device_tx_scalar *s)
{
	memcpy(f->scalar, s, sizeof(*s));
}

static inline struct device_tx_scalar device_tx_get(const struct frame *f)
{
	struct device_tx_scalar s;
	memcpy(&s, f->scalar, sizeof(s));
	return s;
}

/* n (<= FRAME_SIZE) packets for s->tx_if/queue into a frame of their own
 * for next node `next`. */
static inline void device_tx_enqueue_batch(struct node_runtime *rt, uint16_t next, const uint32_t *bi, uint32_t n,
					   const struct device_tx_scalar *s)
{
	struct frame *f = node_frame_open(rt->next[next]);
	memcpy(f->buffers, bi, n * sizeof(uint32_t));
	f->n_vectors = (uint16_t)n;
	device_tx_set(f, s);
	rt->arc_packets[next] += n;
}

#endif
