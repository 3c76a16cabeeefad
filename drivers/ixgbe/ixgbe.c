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
 * runs without per-packet state. Both bursts are drivers/pci/rx_ring.h's and
 * tx_ring.h's skeletons over this NIC's descriptor format.
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
#include "drivers/pci/io_barrier.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* ---- rx ---- */

/* The 82599's advanced receive descriptor, write-back format (82599
 * datasheet 7.1): status and errors in the low half of the second
 * quadword, the length above them; the RSS type in the low bits of the
 * first quadword and the hash in its upper half. A chained frame's hash is
 * in its first descriptor. */
__attribute__((always_inline)) static inline uint16_t ixgbe_rx_len(uint64_t q1)
{
	return (uint16_t)(q1 >> 32);
}

/* The length is bytes 12..13 of the descriptor (bits 47:32 of q1): one
 * 16-bit load. */
__attribute__((always_inline)) static inline uint16_t ixgbe_rx_len_at(volatile const uint64_t *d)
{
	return *(volatile const uint16_t *)((volatile const uint8_t *)d + 12);
}

__attribute__((always_inline)) static inline void ixgbe_rx_hash(struct buffer *b, volatile const uint64_t *d,
								 uint64_t q1)
{
	(void)q1;
	uint64_t q0 = d[0];
	if (q0 & IXGBE_RXD_RSSTYPE_MASK) {
		b->flow_hash = (uint32_t)(q0 >> 32);
		b->flags |= BUFFER_F_FLOW_HASH;
	}
}

static const struct pci_rx_fmt ixgbe_rx_fmt = {
	.desc_size = sizeof(union ixgbe_rx_desc),
	.dd = IXGBE_RXD_STAT_DD,
	.eop = IXGBE_RXD_STAT_EOP,
	.rxe = IXGBE_RXD_ERR_RXE,
	.len = ixgbe_rx_len,
	.len_at = ixgbe_rx_len_at,
	.len_shift = 32,
	.len_mask = 0xffff,
	.hash = ixgbe_rx_hash,
	.hash_at_eop = false,
};
_Static_assert((uint64_t)(IXGBE_RXD_STAT_DD | IXGBE_RXD_STAT_EOP) >> 32 == 0,
	       "the length lies above DD and EOP (pci_rx_fmt.len_shift)");

/* The batch, once the next descriptor reads done (pci_rx_poll). */
__attribute__((noinline)) static uint32_t ixgbe_rx_batch(struct device *dev, uint16_t queue, struct pci_rxq *rq,
							 uint32_t *bi, uint32_t n)
{
	return pci_rx_burst(dev, queue, rq, bi, n, &ixgbe_rx_fmt);
}

static uint32_t ixgbe_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	return pci_rx_poll(dev, queue, &xd->rxq[queue], bi, n, &ixgbe_rx_fmt, ixgbe_rx_batch);
}

bool ixgbe_rx_pending(struct ixgbe_dev *xd, uint16_t q)
{
	return pci_rx_done(&xd->rxq[q], 1, &ixgbe_rx_fmt) != 0;
}

/* ---- tx ---- */

/* The 82599's advanced transmit data descriptor (82599 datasheet 7.2):
 * buffer address; DTYP data, DEXT, IFCS, EOP on a frame's last, RS when a
 * write-back is wanted, the buffer's length; the frame's length as PAYLEN.
 * A descriptor sent with RS reads back DD in its status. */
__attribute__((always_inline)) static inline bool ixgbe_tx_done(volatile const void *p)
{
	volatile const union ixgbe_tx_desc *d = p;
	return d->wb.status & IXGBE_TXD_STAT_DD;
}

__attribute__((always_inline)) static inline void ixgbe_tx_put(volatile void *p, const struct buffer *b,
							       uint64_t data0)
{
	volatile union ixgbe_tx_desc *d = p;
	/* cmd_type_len and olinfo_status as one quadword: the length in both
	 * DTALEN (bits 15:0) and PAYLEN (bits 63:46), one multiply puts it in
	 * both places (a 16-bit length cannot carry into the other). */
	uint64_t both = 1 | 1ull << (32 + IXGBE_TXD_PAYLEN_SHIFT);
	/* Kept in a register: one imul, where the compiler would otherwise
	 * spell the constant multiply as a move, a shift and an add. */
	__asm__("" : "+r"(both));
	const uint64_t cmd = IXGBE_TXD_DTYP_DATA | IXGBE_TXD_CMD_DEXT | IXGBE_TXD_CMD_IFCS | IXGBE_TXD_CMD_EOP;
	d->read.buffer_addr = (uint64_t)(uintptr_t)b + data0 + (uint64_t)(int64_t)b->current_data;
	*(volatile uint64_t *)&d->read.cmd_type_len = (uint64_t)b->current_length * both | cmd;
}

#if defined(__SSE4_1__)
/* Two of ixgbe_tx_put's descriptors from lanes (tx_slots_fast). The
 * length goes to both its fields by one shuffle (to bits 15:0 and 47:32)
 * and one PMULLD (the upper copy times 2^14: PAYLEN, bits 63:46); then
 * the command bits. */
__attribute__((always_inline)) static inline void ixgbe_tx_put2(volatile void *p, __m128i addr, __m128i w)
{
	const __m128i cmd = _mm_set1_epi64x(IXGBE_TXD_DTYP_DATA | IXGBE_TXD_CMD_DEXT | IXGBE_TXD_CMD_IFCS |
					    IXGBE_TXD_CMD_EOP);
	const __m128i dup = _mm_setr_epi8(4, 5, -1, -1, 4, 5, -1, -1, 6, 7, -1, -1, 6, 7, -1, -1);
	const __m128i mul = _mm_setr_epi32(1, 1 << IXGBE_TXD_PAYLEN_SHIFT, 1, 1 << IXGBE_TXD_PAYLEN_SHIFT);
	tx_slots_store2(p, addr, _mm_or_si128(_mm_mullo_epi32(_mm_shuffle_epi8(w, dup), mul), cmd));
}
#else
#define ixgbe_tx_put2 NULL
#endif

__attribute__((always_inline)) static inline void ixgbe_tx_put_seg(volatile void *p, uint64_t iova, uint32_t len,
								   bool last, uint32_t total)
{
	volatile union ixgbe_tx_desc *d = p;
	d->read.buffer_addr = iova;
	d->read.cmd_type_len = IXGBE_TXD_DTYP_DATA | IXGBE_TXD_CMD_DEXT | IXGBE_TXD_CMD_IFCS |
			       (last ? IXGBE_TXD_CMD_EOP : 0) | len;
	d->read.olinfo_status = total << IXGBE_TXD_PAYLEN_SHIFT;
}

__attribute__((always_inline)) static inline void ixgbe_tx_set_rs(volatile void *p)
{
	volatile union ixgbe_tx_desc *d = p;
	d->read.cmd_type_len |= IXGBE_TXD_CMD_RS;
}

static const struct pci_tx_fmt ixgbe_tx_fmt = {
	.desc_size = sizeof(union ixgbe_tx_desc),
	.done = ixgbe_tx_done,
	.put = ixgbe_tx_put,
	.put2 = ixgbe_tx_put2,
	.put_seg = ixgbe_tx_put_seg,
	.set_rs = ixgbe_tx_set_rs,
};

static uint32_t ixgbe_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	return pci_tx_burst(&xd->txq[queue], bi, n, &ixgbe_tx_fmt);
}

/* ---- start / stop ---- */

static void rxq_release(struct ixgbe_dev *xd, struct pci_rxq *rq)
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

static void txq_release(struct ixgbe_dev *xd, struct pci_txq *tq)
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
	struct pci_rxq *rq = &xd->rxq[q];
	uint32_t n = xd->n_rx_desc;
	size_t ring_bytes = n * sizeof(union ixgbe_rx_desc);
	rx_chain_reset(&rq->chain);
	rq->io = xd->io;
	rq->mask = n - 1;
	rq->tail_reg = IXGBE_RDT(q);
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
	for (uint32_t i = 0; i < n; i++)
		pci_rx_arm(pci_rx_desc(rq->ring, sizeof(union ixgbe_rx_desc), i),
			   rq->iova_data0 + (uint64_t)rq->bufs[i] * rq->stride);
	uint64_t iova = pci_iova(xd->io, (const void *)rq->ring);
	wr(xd, IXGBE_RDBAL(q), (uint32_t)iova);
	wr(xd, IXGBE_RDBAH(q), (uint32_t)(iova >> 32));
	wr(xd, IXGBE_RDLEN(q), (uint32_t)ring_bytes);
	uint32_t bsize = buffer_main.data_size >> 10; /* 1 KB units */
	wr(xd, IXGBE_SRRCTL(q), IXGBE_SRRCTL_DESCTYPE_ADV_ONEBUF | IXGBE_SRRCTL_DROP_EN | bsize);
	ixgbe_clear_bits(xd, IXGBE_DCA_RXCTRL(q), IXGBE_DCA_RXCTRL_BIT12);
	wr(xd, IXGBE_RDH(q), 0);
	wr(xd, IXGBE_RDT(q), 0);
	/* WTHRESH 0: each used descriptor is written back at once. Above 0
	 * the NIC holds write-backs until WTHRESH are ready or an interrupt
	 * (EITR) flushes them (82599 datasheet 7.1.9, 8.2.3.8.6); a polled
	 * queue has no interrupt, so a frame at a low rate would wait for the
	 * next ones. Written whole: nothing a previous owner left stays. */
	wr(xd, IXGBE_RXDCTL(q), 0);
	ixgbe_set_bits(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE);
	if (ixgbe_wait_reg(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE, IXGBE_RXDCTL_ENABLE, "rx queue enable"))
		return -ETIMEDOUT;
	pci_io_wmb();
	wr(xd, IXGBE_RDT(q), n - 1); /* the ring starts full */
	return 0;
}

static int txq_start(struct ixgbe_dev *xd, uint16_t q)
{
	struct pci_txq *tq = &xd->txq[q];
	uint32_t n = xd->n_tx_desc;
	size_t ring_bytes = n * sizeof(union ixgbe_tx_desc);
	tq->io = xd->io;
	tq->tail_reg = IXGBE_TDT(q);
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
	 * written back as soon as it is sent (82599 datasheet 7.2.3.5,
	 * 8.2.3.9.10), so that a frame sent at a low rate is reclaimed without
	 * waiting for a batch; the reclaim still waits for DD (tx_slots.h). */
	wr(xd, IXGBE_TXDCTL(q), 36 | 8 << IXGBE_DCTL_HTHRESH_SHIFT | 0 << IXGBE_DCTL_WTHRESH_SHIFT);
	ixgbe_set_bits(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE);
	return ixgbe_wait_reg(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE, IXGBE_TXDCTL_ENABLE, "tx queue enable");
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
			ixgbe_wait_reg(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE, 0, "rx queue disable");
		}
		rxq_release(xd, &xd->rxq[q]);
	}
	for (uint16_t q = 0; q < dev->n_tx_queues; q++) {
		if (xd->txq[q].ring) {
			ixgbe_clear_bits(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE);
			ixgbe_wait_reg(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE, 0, "tx queue disable");
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
	ixgbe_irq_program(xd);
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
	struct pci_rxq *rq = &xd->rxq[queue];
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
		ixgbe_irq_close(xd);
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
	.rx_fd = ixgbe_rx_fd,
	.rx_arm = ixgbe_rx_arm,
	.destroy = ixgbe_destroy,
};
