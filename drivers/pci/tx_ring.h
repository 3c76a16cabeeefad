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
 * Returns the index of the first frame that did not fit. Out of line (the
 * rare path): the burst keeps fewer values live. */
__attribute__((noinline)) static uint32_t pci_tx_chains(struct pci_txq *tq, const uint32_t *bi,
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

/* The fast path over n frames from slot start, in at most two runs
 * (before and after the ring's end); returns how many it wrote. */
__attribute__((always_inline)) static inline uint32_t pci_tx_runs(struct pci_txq *tq, volatile void *ring,
								 uint32_t *bufs, uint32_t mask, uint32_t start,
								 const uint32_t *bi, uint32_t n, bool one_pool,
								 const struct pci_tx_fmt *f)
{
	uint8_t *base = buffer_main.base;
	uint64_t stride = buffer_main.stride;
	uint64_t data0 = (uint64_t)tq->io->iova_offset + sizeof(struct buffer) + BUFFER_HEADROOM;
	uint32_t run = MIN(n, mask + 1 - start);
	uint32_t i = tx_slots_fast(pci_tx_desc(ring, f->desc_size, start), f->desc_size, f->put, f->put2,
				   &bufs[start], bi, run, base, stride, data0, one_pool);
	if (unlikely(run < n) && i == run)
		i += tx_slots_fast(ring, f->desc_size, f->put, f->put2, bufs, bi + run, n - run, base, stride, data0,
				   one_pool);
	return i;
}

/* The fast path with buffers of several pools (each header's pool index
 * read): out of line, the one-pool case is the burst's. */
__attribute__((noinline)) static uint32_t pci_tx_runs_pools(struct pci_txq *tq, volatile void *ring, uint32_t *bufs,
							     uint32_t mask, uint32_t start, const uint32_t *bi,
							     uint32_t n, const struct pci_tx_fmt *f)
{
	return pci_tx_runs(tq, ring, bufs, mask, start, bi, n, false, f);
}

/* The tx burst (struct device_ops tx_burst) of a queue whose descriptors
 * have format f: returns how many frames were taken. The queue's fields
 * are read once into locals and written back once: with
 * -fno-strict-aliasing every store through a buffer header would reload
 * them (bench/nic: the per-burst part, docs/nic.md 1.4a). */
__attribute__((always_inline)) static inline uint32_t pci_tx_burst(struct pci_txq *tq, const uint32_t *bi,
								  uint32_t n, const struct pci_tx_fmt *f)
{
	struct tx_slots *t = &tq->slots;
	volatile void *ring = tq->ring;
	uint32_t *rs = t->rs, *bufs = t->bufs;
	uint32_t mask = t->mask, rs_head = t->rs_head, rs_tail = t->rs_tail, clean = t->clean, start = t->tail;

	/* Reclaim: while the oldest RS descriptor reads done, every frame up
	 * to it is sent (a done RS descriptor means every earlier one is:
	 * 82599 datasheet 7.2.3, X710/XL710 datasheet 8.4). */
	while (rs_head != rs_tail) {
		uint32_t last = rs[rs_head & mask];
		if (!f->done(pci_tx_desc(ring, f->desc_size, last)))
			break;
		rs_head++;
		tx_slots_free_to(t, clean, last);
		clean = (last + 1) & mask;
	}
	t->rs_head = rs_head;
	t->clean = clean;

	/* Fast path (one slot always stays empty). */
	uint32_t n_fit = MIN(n, mask - ((start - clean) & mask));
	uint32_t i = likely(buffer_main.n_pools == 1) ? pci_tx_runs(tq, ring, bufs, mask, start, bi, n_fit, true, f)
						       : pci_tx_runs_pools(tq, ring, bufs, mask, start, bi, n_fit, f);
	uint32_t tail = (start + i) & mask;
	if (unlikely(i < n_fit)) {
		t->tail = tail;
		i = pci_tx_chains(tq, bi, i, n, f);
		if (t->tail != tail) {
			t->slow = true;
			t->slow_end = t->tail;
		}
		tail = t->tail;
	}
	if (!i)
		return 0;
	/* RS on every TX_SLOTS_RS_BATCH-th descriptor and on the burst's last
	 * (tx_slots.h); each joins the FIFO reclaim reads. */
	uint32_t written = (tail - start) & mask, last = (tail - 1) & mask;
	uint32_t s = start | (TX_SLOTS_RS_BATCH - 1);
	for (uint32_t off = (s - start) & mask; off < written - 1;
	     off += TX_SLOTS_RS_BATCH, s = (s + TX_SLOTS_RS_BATCH) & mask) {
		rs[rs_tail++ & mask] = s;
		f->set_rs(pci_tx_desc(ring, f->desc_size, s));
	}
	rs[rs_tail++ & mask] = last;
	f->set_rs(pci_tx_desc(ring, f->desc_size, last));
	t->rs_tail = rs_tail;
	t->tail = tail;
	/* Every descriptor written before the tail write hands them over
	 * (82599 datasheet 7.2, X710/XL710 datasheet 8.4). */
	pci_io_wmb();
	pci_write32(tq->io, tq->tail_reg, tail);
	return i;
}

#endif
