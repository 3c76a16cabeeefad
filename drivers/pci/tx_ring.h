/* The tx burst of the native drivers (ixgbe, i40e), once: reclaim up to the
 * RS descriptors the NIC reports done, the fast path over frames of one
 * buffer (tx_slots_fast, four a turn), chained frames one descriptor per
 * buffer, RS marking and the one tail write (tx_slots.h keeps the slots).
 * What differs between the NICs is the data descriptor; the driver gives it
 * as a struct pci_tx_fmt of small inline functions, and its burst is one
 * call:
 *
 *   static uint32_t ixgbe_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
 *   {
 *           struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
 *           return pci_tx_burst(&xd->txq[queue], bi, n, &ixgbe_tx_fmt);
 *   }
 *
 * The formats: the 82599's advanced transmit data descriptor (82599
 * datasheet 7.2) and the X710/XL710's transmit data descriptor (X710/XL710
 * datasheet, transmit descriptors), 16 bytes each. Everything is inlined into the driver's
 * burst with its format a constant (bench/nic measures it).
 *
 * Single-threaded: one queue, one thread.
 */
#ifndef SLUICE_DRIVERS_PCI_TX_RING_H
#define SLUICE_DRIVERS_PCI_TX_RING_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/pci/io_barrier.h"
#include "drivers/pci/pci.h"
#include "drivers/pci/tx_slots.h"
#include "graph/buffer.h"

/* One tx queue's software side. */
struct pci_txq {
	alignas(64) volatile void *ring; /* the descriptors (the driver's type) */
	struct pci_io *io;
	uint32_t tail_reg; /* the tail register's offset (TDT, QTX_TAIL) */
	struct tx_slots slots;
};

/* A driver's data descriptor format. */
struct pci_tx_fmt {
	uint32_t desc_size; /* bytes */
	/* The NIC wrote descriptor d (sent with RS) back as done. */
	bool (*done)(volatile const void *d);
	/* One frame of one buffer b into d (data0: see tx_slots_fast). */
	tx_slots_put_fn *put;
	/* Two such frames from SSE lanes (tx_slots_fast; x86 only). */
	tx_slots_put2_fn *put2;
	/* One buffer of a chained frame: its data at iova, len bytes, last
	 * of the frame or not; total is the frame's length. */
	void (*put_seg)(volatile void *d, uint64_t iova, uint32_t len, bool last, uint32_t total);
	/* Ask for a write-back of d. */
	void (*set_rs)(volatile void *d);
};

static inline volatile void *pci_tx_desc(volatile void *ring, uint32_t desc_size, uint32_t slot)
{
	return (volatile uint8_t *)ring + (size_t)slot * desc_size;
}

/* Frames from bi[i] on, any of them chained: one descriptor per buffer.
 * Returns the index of the first frame that did not fit. */
__attribute__((always_inline)) static inline uint32_t pci_tx_chains(struct pci_txq *tq, const uint32_t *bi,
								   uint32_t i, uint32_t n,
								   const struct pci_tx_fmt *f)
{
	struct tx_slots *t = &tq->slots;
	uint32_t room = tx_slots_room(t);
	for (; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint32_t n_seg = 1, total = b->current_length;
		if (b->flags & BUFFER_F_NEXT_PRESENT) {
			total += b->total_length_not_including_first;
			for (struct buffer *s = b; s->flags & BUFFER_F_NEXT_PRESENT; s = buffer_get(s->next_buffer))
				n_seg++;
		}
		if (n_seg > room)
			break;
		room -= n_seg;
		for (struct buffer *s = b;; s = buffer_get(s->next_buffer)) {
			bool last = !(s->flags & BUFFER_F_NEXT_PRESENT);
			f->put_seg(pci_tx_desc(tq->ring, f->desc_size, t->tail), pci_iova(tq->io, buffer_data(s)),
				   s->current_length, last, total);
			t->bufs[t->tail] = last ? bi[i] : BUFFER_INVALID;
			t->tail = (t->tail + 1) & t->mask;
			if (last)
				break;
		}
	}
	return i;
}

/* The fast path over n frames from the ring's tail, in at most two runs
 * (before and after the ring's end); returns how many it wrote. */
__attribute__((always_inline)) static inline uint32_t pci_tx_runs(struct pci_txq *tq, const uint32_t *bi, uint32_t n,
								 bool one_pool, const struct pci_tx_fmt *f)
{
	struct tx_slots *t = &tq->slots;
	uint32_t start = t->tail;
	uint8_t *base = buffer_main.base;
	uint64_t stride = buffer_main.stride;
	uint64_t data0 = (uint64_t)tq->io->iova_offset + sizeof(struct buffer) + BUFFER_HEADROOM;
	uint32_t run = MIN(n, t->mask + 1 - start);
	uint32_t i = tx_slots_fast(pci_tx_desc(tq->ring, f->desc_size, start), f->desc_size, f->put, f->put2,
				   &t->bufs[start],
				   bi, run, base, stride, data0, one_pool);
	if (unlikely(run < n) && i == run)
		i += tx_slots_fast(tq->ring, f->desc_size, f->put, f->put2, t->bufs, bi + run, n - run, base, stride, data0,
				   one_pool);
	return i;
}

/* The tx burst (struct device_ops tx_burst) of a queue whose descriptors
 * have format f: returns how many frames were taken. */
__attribute__((always_inline)) static inline uint32_t pci_tx_burst(struct pci_txq *tq, const uint32_t *bi,
								  uint32_t n, const struct pci_tx_fmt *f)
{
	struct tx_slots *t = &tq->slots;
	int64_t rs;
	while ((rs = tx_slots_oldest_rs(t)) >= 0 && f->done(pci_tx_desc(tq->ring, f->desc_size, (uint32_t)rs)))
		tx_slots_reclaim_rs(t);

	/* Fast path; the queue's fields go in as values (see pci_rx_burst). */
	uint32_t mask = t->mask, start = t->tail;
	uint32_t n_fit = MIN(n, tx_slots_room(t));
	uint32_t i = likely(buffer_main.n_pools == 1) ? pci_tx_runs(tq, bi, n_fit, true, f)
						       : pci_tx_runs(tq, bi, n_fit, false, f);
	t->tail = (start + i) & mask;
	if (unlikely(i < n_fit)) {
		uint32_t tail0 = t->tail;
		i = pci_tx_chains(tq, bi, i, n, f);
		if (t->tail != tail0) {
			t->slow = true;
			t->slow_end = t->tail;
		}
	}
	if (!i)
		return 0;
	uint32_t k = t->rs_tail;
	tx_slots_mark_rs(t, start);
	volatile void *ring = tq->ring;
	const uint32_t *rs_fifo = t->rs;
	for (uint32_t end = t->rs_tail; k != end; k++)
		f->set_rs(pci_tx_desc(ring, f->desc_size, rs_fifo[k & mask]));
	/* Every descriptor written before the tail write hands them over
	 * (82599 datasheet 7.2, X710/XL710 datasheet 8.4). */
	pci_io_wmb();
	pci_write32(tq->io, tq->tail_reg, t->tail);
	return i;
}

#endif
