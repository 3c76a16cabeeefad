/* The ixgbe datapath and queues: rx and tx bursts, ring start and stop,
 * link and statistics. Bring-up, configuration and registration are in
 * ixgbe_init.c; the driver as a whole is described there.
 *
 * rx: descriptors done (DD) from the software index are taken as a batch;
 * one bulk allocation gives their replacements and one RDT write hands the
 * batch back (82599 datasheet 7.1, receive descriptor ring). Without a replacement buffer the frame is dropped,
 * the descriptor re-armed with its own buffer and the drop counted as
 * RX-dropped, so the ring never runs dry of buffers. A frame spanning
 * descriptors (mtu above the buffer size) becomes a buffer chain. The
 * common case (one descriptor a frame, no error, a replacement for each)
 * runs in rx_fast without per-packet state.
 * tx: RS on every 32nd descriptor and on a burst's last
 * (drivers/pci/tx_slots.h); everything up to an RS descriptor whose DD is
 * set is reclaimed at once. A burst writes its descriptors (a chain takes
 * one per buffer) and TDT once. What does not fit is left to the caller,
 * who counts it as TX-dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/ixgbe/ixgbe_private.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* ---- rx ---- */

/* How many descriptors from next the NIC has finished, in order, at most
 * n: four DD bits at a time up to the ring's end, then one by one. */
static inline uint32_t rx_done(volatile union ixgbe_rx_desc *ring, uint32_t mask, uint32_t next, uint32_t n)
{
	uint32_t c = 0, lim = MIN(n, mask + 1 - next) & ~3u;
	for (volatile union ixgbe_rx_desc *d = &ring[next]; c < lim; c += 4, d += 4)
		if (!(d[0].wb.status_error & d[1].wb.status_error & d[2].wb.status_error & d[3].wb.status_error &
		      IXGBE_RXD_STAT_DD))
			break;
	while (c < n && (ring[(next + c) & mask].wb.status_error & IXGBE_RXD_STAT_DD))
		c++;
	return c;
}

/* One frame's descriptor d (status word q1 already read and checked): its
 * buffer bufs[i] goes to out[i], the slot is re-armed with fresh[i]. With
 * rss (a constant at each call), the hash of an RSS-typed frame is kept. */
static inline void rx_take(volatile union ixgbe_rx_desc *d, uint64_t q1, uint32_t *bufs, const uint32_t *fresh,
			   uint32_t *out, uint32_t i, uint8_t *base, uint64_t stride, uint64_t iova0, bool rss)
{
	uint32_t b_i = bufs[i];
	struct buffer *b = (struct buffer *)(base + b_i * stride);
	b->current_length = (uint16_t)(q1 >> 32);
	if (rss) {
		uint64_t q0 = d->q[0];
		if (q0 & IXGBE_RXD_RSSTYPE_MASK) {
			b->flow_hash = (uint32_t)(q0 >> 32);
			b->flags |= BUFFER_F_FLOW_HASH;
		}
	}
	out[i] = b_i;
	uint32_t f = fresh[i];
	bufs[i] = f;
	d->read.pkt_addr = iova0 + f * stride;
	d->read.hdr_addr = 0;
}

/* Whether q1 is a whole frame's descriptor without error. */
static inline bool rx_plain(uint64_t q1)
{
	return ((uint32_t)q1 & (IXGBE_RXD_STAT_EOP | IXGBE_RXD_ERR_RXE)) == IXGBE_RXD_STAT_EOP;
}

/* The rx fast path over n descriptors in a row (no wrap): one descriptor
 * per frame, no error; each frame's buffer goes to out[], its slot is
 * re-armed with fresh[]. Four descriptors a turn, their status words read
 * and judged together; stops at the first other descriptor; returns how
 * many it took. rss: RSS is on (more than one rx queue), so frames may
 * carry a hash; without it the first quadword is never read (inlined at
 * each call so that the test goes with the constant). Measured
 * (bench/nic, one queue, burst 32, callgrind): ixgbe_rx_burst less its
 * buffer_alloc, 36.1 instructions per packet one at a time with the RSS
 * test, 31.9 four at a time without it. */
__attribute__((always_inline)) static inline uint32_t rx_fast(volatile union ixgbe_rx_desc *d, uint32_t *bufs,
							     const uint32_t *fresh, uint32_t *out, uint32_t n,
							     uint8_t *base, uint64_t stride, uint64_t iova0, bool rss)
{
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4, d += 4) {
		uint64_t s0 = d[0].q[1], s1 = d[1].q[1], s2 = d[2].q[1], s3 = d[3].q[1];
		if (unlikely((~(s0 & s1 & s2 & s3) & IXGBE_RXD_STAT_EOP) | ((s0 | s1 | s2 | s3) & IXGBE_RXD_ERR_RXE)))
			break;
		rx_take(&d[0], s0, bufs, fresh, out, i, base, stride, iova0, rss);
		rx_take(&d[1], s1, bufs, fresh, out, i + 1, base, stride, iova0, rss);
		rx_take(&d[2], s2, bufs, fresh, out, i + 2, base, stride, iova0, rss);
		rx_take(&d[3], s3, bufs, fresh, out, i + 3, base, stride, iova0, rss);
	}
	for (; i < n; i++, d++) {
		uint64_t q1 = d->q[1];
		if (unlikely(!rx_plain(q1)))
			break;
		rx_take(d, q1, bufs, fresh, out, i, base, stride, iova0, rss);
	}
	return i;
}

/* Descriptors i.. of the batch one by one: chains, errors, frames without
 * a replacement buffer. Returns the frames handed to bi[] from n_out on. */
static uint32_t rx_slow(struct device *dev, uint16_t queue, struct ixgbe_rxq *rq, uint32_t i, uint32_t c,
			uint32_t got, uint32_t *bi, uint32_t n_out)
{
	volatile union ixgbe_rx_desc *ring = rq->ring;
	uint32_t mask = rq->mask, next = rq->next;
	for (; i < c; i++) {
		uint32_t slot = (next + i) & mask;
		volatile union ixgbe_rx_desc *d = &ring[slot];
		uint64_t q0 = d->q[0], q1 = d->q[1];
		uint32_t status = (uint32_t)q1;
		uint32_t b_i = rq->bufs[slot];
		if (likely(i < got)) {
			rq->bufs[slot] = rq->fresh[i];
			struct buffer *b = buffer_get(b_i);
			b->current_length = (uint16_t)(q1 >> 32);
			if (rq->chain.head == BUFFER_INVALID && (q0 & IXGBE_RXD_RSSTYPE_MASK)) {
				b->flow_hash = (uint32_t)(q0 >> 32);
				b->flags |= BUFFER_F_FLOW_HASH;
			}
			rx_chain_add(&rq->chain, b_i);
		} else {
			/* No replacement: the frame is lost, the buffer stays. */
			rq->chain.drop = true;
		}
		if (unlikely(status & IXGBE_RXD_ERR_RXE))
			rq->chain.error = true;
		d->read.pkt_addr = rq->iova_data0 + (uint64_t)rq->bufs[slot] * rq->stride;
		d->read.hdr_addr = 0;
		if (status & IXGBE_RXD_STAT_EOP)
			n_out += rx_chain_end(&rq->chain, dev, queue, &bi[n_out]);
	}
	return n_out;
}

static uint32_t ixgbe_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	struct ixgbe_rxq *rq = &xd->rxq[queue];
	volatile union ixgbe_rx_desc *ring = rq->ring;
	uint32_t mask = rq->mask, next = rq->next;
	uint32_t c = rx_done(ring, mask, next, MIN(n, (uint32_t)IXGBE_RX_BURST_MAX));
	if (!c)
		return 0;
	/* The fields below are read after DD. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint32_t got = buffer_alloc(rq->fresh, c, -1);

	/* Fast path: a replacement for each and no frame in progress, in at
	 * most two runs (before and after the ring's end). Anything else
	 * finishes the batch in rx_slow. The queue's fields go in as values:
	 * with -fno-strict-aliasing every store through a buffer would reload
	 * them. */
	uint32_t i = 0;
	if (likely(got == c && rq->chain.head == BUFFER_INVALID)) {
		uint8_t *base = buffer_main.base;
		uint64_t stride = rq->stride, iova0 = rq->iova_data0;
		uint32_t run = MIN(c, mask + 1 - next);
		if (dev->n_rx_queues > 1) {
			i = rx_fast(&ring[next], &rq->bufs[next], rq->fresh, bi, run, base, stride, iova0, true);
			if (i == run && run < c)
				i += rx_fast(ring, rq->bufs, rq->fresh + run, bi + run, c - run, base, stride, iova0,
					     true);
		} else {
			i = rx_fast(&ring[next], &rq->bufs[next], rq->fresh, bi, run, base, stride, iova0, false);
			if (i == run && run < c)
				i += rx_fast(ring, rq->bufs, rq->fresh + run, bi + run, c - run, base, stride, iova0,
					     false);
		}
	}
	uint32_t n_out = i < c ? rx_slow(dev, queue, rq, i, c, got, bi, i) : i;
	rq->next = (next + c) & mask;
	/* Descriptors re-armed before the NIC may use them: one tail write
	 * naming the last descriptor handed back (82599 datasheet 7.2, transmit). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(rq->io, rq->rdt, (rq->next - 1) & mask);
	return n_out;
}

/* ---- tx ---- */

/* Frames from bi[i] on, any of them chained: one descriptor per buffer.
 * Returns the index of the first frame that did not fit. */
static uint32_t tx_chains(struct ixgbe_txq *tq, const uint32_t *bi, uint32_t i, uint32_t n)
{
	struct tx_slots *t = &tq->slots;
	uint32_t room = tx_slots_room(t);
	for (; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint32_t n_seg = 1;
		uint32_t total = b->current_length;
		if (b->flags & BUFFER_F_NEXT_PRESENT) {
			total += b->total_length_not_including_first;
			for (struct buffer *s = b; s->flags & BUFFER_F_NEXT_PRESENT; s = buffer_get(s->next_buffer))
				n_seg++;
		}
		if (n_seg > room)
			break;
		room -= n_seg;
		t->n_chain_slots += n_seg - 1;
		uint32_t olinfo = total << IXGBE_TXD_PAYLEN_SHIFT;
		for (struct buffer *s = b;; s = buffer_get(s->next_buffer)) {
			bool last = !(s->flags & BUFFER_F_NEXT_PRESENT);
			volatile union ixgbe_tx_desc *d = &tq->ring[t->tail];
			d->read.buffer_addr = pci_iova(tq->io, buffer_data(s));
			d->read.cmd_type_len = IXGBE_TXD_DTYP_DATA | IXGBE_TXD_CMD_DEXT | IXGBE_TXD_CMD_IFCS |
					       (last ? IXGBE_TXD_CMD_EOP : 0) | s->current_length;
			d->read.olinfo_status = olinfo;
			t->bufs[t->tail] = last ? bi[i] : BUFFER_INVALID;
			t->tail = (t->tail + 1) & t->mask;
			if (last)
				break;
		}
	}
	return i;
}

/* One frame of one buffer b into descriptor d. */
static inline void tx_put(volatile void *p, const struct buffer *b, uint64_t data0)
{
	volatile union ixgbe_tx_desc *d = p;
	uint32_t len = b->current_length;
	d->read.buffer_addr = (uint64_t)(uintptr_t)b + data0 + (uint64_t)(int64_t)b->current_data;
	d->read.cmd_type_len = IXGBE_TXD_DTYP_DATA | IXGBE_TXD_CMD_DEXT | IXGBE_TXD_CMD_IFCS | IXGBE_TXD_CMD_EOP | len;
	d->read.olinfo_status = len << IXGBE_TXD_PAYLEN_SHIFT;
}

static inline uint32_t tx_fast(volatile union ixgbe_tx_desc *d, uint32_t *bufs, const uint32_t *bi, uint32_t n, uint8_t *base,
			       uint64_t stride, uint64_t data0)
{
	return tx_slots_fast(d, sizeof(*d), tx_put, bufs, bi, n, base, stride, data0);
}

static uint32_t ixgbe_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	struct ixgbe_txq *tq = &xd->txq[queue];
	struct tx_slots *t = &tq->slots;
	int64_t rs;
	while ((rs = tx_slots_oldest_rs(t)) >= 0 && (tq->ring[rs].wb.status & IXGBE_TXD_STAT_DD))
		tx_slots_reclaim_rs(t);

	/* Fast path in at most two runs (before and after the ring's end);
	 * the queue's fields go in as values, see ixgbe_rx_burst. */
	uint32_t mask = t->mask, start = t->tail;
	uint32_t n_fit = MIN(n, tx_slots_room(t));
	uint8_t *base = buffer_main.base;
	uint64_t stride = buffer_main.stride;
	uint64_t data0 = (uint64_t)tq->io->iova_offset + sizeof(struct buffer) + BUFFER_HEADROOM;
	uint32_t run = MIN(n_fit, mask + 1 - start);
	uint32_t i = tx_fast(&tq->ring[start], &t->bufs[start], bi, run, base, stride, data0);
	if (i == run && run < n_fit)
		i += tx_fast(tq->ring, t->bufs, bi + run, n_fit - run, base, stride, data0);
	t->tail = (start + i) & mask;
	if (unlikely(i < n_fit))
		i = tx_chains(tq, bi, i, n);
	if (!i)
		return 0;
	uint32_t k = t->rs_tail;
	tx_slots_mark_rs(t, start);
	for (; k != t->rs_tail; k++)
		tq->ring[t->rs[k & mask]].read.cmd_type_len |= IXGBE_TXD_CMD_RS;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(tq->io, tq->tdt, t->tail);
	return i;
}

/* ---- start / stop ---- */

static void rxq_release(struct ixgbe_dev *xd, struct ixgbe_rxq *rq)
{
	if (rq->bufs) {
		buffer_free(rq->bufs, rq->mask + 1);
		free(rq->bufs);
	}
	if (rq->chain.head != BUFFER_INVALID)
		buffer_free(&rq->chain.head, 1);
	pci_dma_free(xd->io, (void *)rq->ring, (rq->mask + 1) * sizeof(union ixgbe_rx_desc));
	memset(rq, 0, sizeof(*rq));
	rx_chain_reset(&rq->chain);
}

static void txq_release(struct ixgbe_dev *xd, struct ixgbe_txq *tq)
{
	size_t ring_bytes = (tq->slots.mask + 1) * sizeof(union ixgbe_tx_desc);
	tx_slots_release(&tq->slots);
	pci_dma_free(xd->io, (void *)tq->ring, ring_bytes);
	memset(tq, 0, sizeof(*tq));
}

/* Ring, registers and a full set of buffers for rx queue q (82599 datasheet 4.6.7 step
 * 9 and 11); the queue is enabled and its tail written. */
static int rxq_start(struct ixgbe_dev *xd, uint16_t q)
{
	struct ixgbe_rxq *rq = &xd->rxq[q];
	uint32_t n = xd->n_rx_desc;
	size_t ring_bytes = n * sizeof(union ixgbe_rx_desc);
	rx_chain_reset(&rq->chain);
	rq->io = xd->io;
	rq->mask = n - 1;
	rq->rdt = IXGBE_RDT(q);
	rq->stride = buffer_main.stride;
	rq->iova_data0 = pci_iova(xd->io, buffer_data_area(buffer_get(0)));
	rq->ring = pci_dma_alloc(xd->io, ring_bytes);
	if (!rq->ring)
		return -ENOMEM;
	uint32_t *bufs = malloc(n * sizeof(uint32_t));
	if (!bufs)
		return -ENOMEM;
	uint32_t got = buffer_alloc(bufs, n, xd->io->numa_node);
	if (got < n) { /* not enough for a full ring: give back what came */
		buffer_free(bufs, got);
		free(bufs);
		return -ENOBUFS;
	}
	rq->bufs = bufs;
	for (uint32_t i = 0; i < n; i++) {
		rq->ring[i].read.pkt_addr = rq->iova_data0 + (uint64_t)rq->bufs[i] * rq->stride;
		rq->ring[i].read.hdr_addr = 0;
	}
	uint64_t iova = pci_iova(xd->io, (const void *)rq->ring);
	wr(xd, IXGBE_RDBAL(q), (uint32_t)iova);
	wr(xd, IXGBE_RDBAH(q), (uint32_t)(iova >> 32));
	wr(xd, IXGBE_RDLEN(q), (uint32_t)ring_bytes);
	uint32_t bsize = buffer_main.data_size >> 10; /* 1 KB units */
	wr(xd, IXGBE_SRRCTL(q), IXGBE_SRRCTL_DESCTYPE_ADV_ONEBUF | IXGBE_SRRCTL_DROP_EN | bsize);
	ixgbe_clear_bits(xd, IXGBE_DCA_RXCTRL(q), IXGBE_DCA_RXCTRL_BIT12);
	wr(xd, IXGBE_RDH(q), 0);
	wr(xd, IXGBE_RDT(q), 0);
	ixgbe_set_bits(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE);
	if (ixgbe_wait_reg(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE, IXGBE_RXDCTL_ENABLE))
		return -ETIMEDOUT;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr(xd, IXGBE_RDT(q), n - 1); /* the ring starts full */
	return 0;
}

static int txq_start(struct ixgbe_dev *xd, uint16_t q)
{
	struct ixgbe_txq *tq = &xd->txq[q];
	uint32_t n = xd->n_tx_desc;
	size_t ring_bytes = n * sizeof(union ixgbe_tx_desc);
	tq->io = xd->io;
	tq->tdt = IXGBE_TDT(q);
	tq->ring = pci_dma_alloc(xd->io, ring_bytes);
	if (!tq->ring || tx_slots_init(&tq->slots, n))
		return -ENOMEM;
	uint64_t iova = pci_iova(xd->io, (const void *)tq->ring);
	wr(xd, IXGBE_TDBAL(q), (uint32_t)iova);
	wr(xd, IXGBE_TDBAH(q), (uint32_t)(iova >> 32));
	wr(xd, IXGBE_TDLEN(q), (uint32_t)ring_bytes);
	wr(xd, IXGBE_TDH(q), 0);
	wr(xd, IXGBE_TDT(q), 0);
	/* PTHRESH 36, HTHRESH 8 as ixy; WTHRESH 0: every RS descriptor is
	 * written back at once, which the reclaim by RS slots relies on. */
	wr(xd, IXGBE_TXDCTL(q), 36 | 8 << 8);
	ixgbe_set_bits(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE);
	return ixgbe_wait_reg(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE, IXGBE_TXDCTL_ENABLE);
}

static void ixgbe_stop(struct device *dev)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	if (!xd->running)
		return;
	ixgbe_clear_bits(xd, IXGBE_RXCTRL, IXGBE_RXCTRL_RXEN);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
		if (xd->rxq[q].ring) {
			ixgbe_clear_bits(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE);
			ixgbe_wait_reg(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE, 0);
		}
		rxq_release(xd, &xd->rxq[q]);
	}
	for (uint16_t q = 0; q < dev->n_tx_queues; q++) {
		if (xd->txq[q].ring) {
			ixgbe_clear_bits(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE);
			ixgbe_wait_reg(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE, 0);
		}
		txq_release(xd, &xd->txq[q]);
	}
	xd->running = false;
}

static int ixgbe_start(struct device *dev)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	int rc = 0;
	xd->running = true;
	/* Transmit DMA before the tx queues (DPDK's order), receive last. */
	ixgbe_set_bits(xd, IXGBE_DMATXCTL, IXGBE_DMATXCTL_TE);
	for (uint16_t q = 0; q < dev->n_tx_queues && !rc; q++)
		rc = txq_start(xd, q);
	for (uint16_t q = 0; q < dev->n_rx_queues && !rc; q++)
		rc = rxq_start(xd, q);
	if (rc) {
		base_log("ixgbe", "%s: start failed: %s", xd->addr, strerror(-rc));
		ixgbe_stop(dev);
		return rc;
	}
	ixgbe_set_bits(xd, IXGBE_RXCTRL, IXGBE_RXCTRL_RXEN);
	return 0;
}

/* ---- link, statistics ---- */

void ixgbe_link(struct device *dev, struct dev_link *link)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	uint32_t v = rd(xd, IXGBE_LINKS);
	static const uint32_t speeds[4] = { 0, 100, 1000, 10000 };
	link->up = (v & IXGBE_LINKS_UP) != 0;
	link->full_duplex = link->up;
	link->speed_mbps = link->up ? speeds[(v & IXGBE_LINKS_SPEED_MASK) >> IXGBE_LINKS_SPEED_SHIFT] : 0;
}

static void ixgbe_stats(struct device *dev, struct dev_counters *c)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	ixgbe_hw_stats_update(xd);
	const struct ixgbe_hw_stats *h = &xd->hw;
	c->rx_dropped += h->mpc;
	for (uint16_t q = 0; q < IXGBE_MAX_QUEUES; q++)
		c->rx_dropped += h->qprdc[q];
	c->rx_errors += h->crcerrs + h->illerrc + h->rlec + h->ruc + h->rfc + h->roc + h->rjc;
}

/* The ring's buffers, the frame being assembled, and the frames sent and
 * not yet reclaimed (each slot holding a head counts its whole chain). */
static uint32_t ixgbe_n_buffers_held(struct device *dev, bool rx, uint16_t queue)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	if (!rx)
		return tx_slots_n_held(&xd->txq[queue].slots);
	struct ixgbe_rxq *rq = &xd->rxq[queue];
	uint32_t n = rq->bufs ? rq->mask + 1 : 0;
	if (rq->chain.head != BUFFER_INVALID)
		n += buffer_chain_length(rq->chain.head);
	return n;
}

static void ixgbe_destroy(struct device *dev)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	ixgbe_stop(dev);
	if (xd->io) {
		if (xd->buffers_mapped)
			pci_dma_unmap_buffers(xd->io);
		pci_release(xd->addr);
		pci_io_close(xd->io);
	}
	free(xd);
}

const struct device_ops ixgbe_ops = {
	.tx_node = "ixgbe-tx",
	.start = ixgbe_start,
	.stop = ixgbe_stop,
	.rx_burst = ixgbe_rx_burst,
	.tx_burst = ixgbe_tx_burst,
	.link = ixgbe_link,
	.stats = ixgbe_stats,
	.format_hw = ixgbe_format_hw,
	.n_buffers_held = ixgbe_n_buffers_held,
	.destroy = ixgbe_destroy,
};
