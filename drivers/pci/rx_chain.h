/* A frame assembled over several rx descriptors (a frame longer than one
 * buffer), shared by the native drivers (ixgbe, i40e): the buffers chain as
 * they arrive, and at the frame's last descriptor it goes up whole, or, when
 * a buffer had no replacement (drop) or the NIC flagged an error, it is
 * freed and counted as RX-dropped or RX-errors. The state lives across
 * bursts in the rx queue.
 *
 * Single-threaded: one queue, one thread.
 */
#ifndef SLUICE_DRIVERS_PCI_RX_CHAIN_H
#define SLUICE_DRIVERS_PCI_RX_CHAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

struct rx_chain {
	uint32_t head, tail; /* BUFFER_INVALID: no frame in progress */
	bool drop, error;
};

static inline void rx_chain_reset(struct rx_chain *c)
{
	c->head = BUFFER_INVALID;
	c->drop = c->error = false;
}

/* Buffer b_i, already holding its current_length, joins the frame. */
static inline void rx_chain_add(struct rx_chain *c, uint32_t b_i)
{
	if (c->head == BUFFER_INVALID) {
		c->head = b_i;
	} else {
		struct buffer *t = buffer_get(c->tail);
		t->next_buffer = b_i;
		t->flags |= BUFFER_F_NEXT_PRESENT;
		buffer_get(c->head)->total_length_not_including_first += buffer_get(b_i)->current_length;
	}
	c->tail = b_i;
}

/* The frame's last descriptor: returns 1 when the frame went to *out, 0
 * when it was dropped or in error (freed, counted on dev's rx queue). */
static inline uint32_t rx_chain_end(struct rx_chain *c, struct device *dev, uint16_t queue, uint32_t *out)
{
	uint32_t head = c->head, taken = 0;
	if (likely(!c->drop && !c->error)) {
		*out = head;
		taken = 1;
	} else {
		if (head != BUFFER_INVALID)
			buffer_free(&head, 1);
		stat_add(c->error ? &dev->rxq[queue].c.rx_errors : &dev->rxq[queue].c.rx_dropped, 1);
	}
	rx_chain_reset(c);
	return taken;
}

#endif
