/* The i40e datapath and queues: rx and tx bursts, queue contexts and the
 * enable/disable handshake, link and statistics. Bring-up, configuration
 * and registration are in i40e_init.c, the admin queue in i40e_adminq.c.
 *
 * rx: 32-byte descriptors; those done (DD) from the software index are
 * taken as a batch, one bulk allocation gives their replacements and one
 * QRX_TAIL write hands the batch back. Without a replacement the frame is
 * dropped, its buffer re-armed and the drop counted as RX-dropped, so the
 * ring never runs dry. A frame over several descriptors (mtu above the
 * buffer size) becomes a buffer chain; one with RXE is counted as
 * RX-errors. The common case (one descriptor a frame, no error, a
 * replacement for each) runs in rx_fast without per-packet state.
 * tx: 16-byte data descriptors, ICRC on each, EOP on a frame's last; RS on
 * every 32nd slot and on a burst's last descriptor (drivers/pci/tx_slots.h),
 * everything up to an RS descriptor that reads DTYPE 0xF reclaimed at once
 * (2.11). A burst writes its descriptors and QTX_TAIL once; what does not
 * fit is left to the caller, who counts it as TX-dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/i40e/i40e_private.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* ---- rx ---- */

/* How many descriptors from next the NIC has finished, in order, at most
 * n: four DD bits at a time up to the ring's end, then one by one. */
static inline uint32_t rx_done(volatile union i40e_rx_desc *ring, uint32_t mask, uint32_t next, uint32_t n)
{
	uint32_t c = 0, lim = MIN(n, mask + 1 - next) & ~3u;
	for (volatile union i40e_rx_desc *d = &ring[next]; c < lim; c += 4, d += 4)
		if (!(d[0].q[1] & d[1].q[1] & d[2].q[1] & d[3].q[1] & I40E_RXD_DD))
			break;
	while (c < n && (ring[(next + c) & mask].q[1] & I40E_RXD_DD))
		c++;
	return c;
}

static inline void rx_hash(struct buffer *b, uint64_t q0, uint64_t q1)
{
	if (((q1 >> I40E_RXD_FLTSTAT_SHIFT) & 3) == I40E_RXD_FLTSTAT_RSS) {
		b->flow_hash = (uint32_t)(q0 >> 32);
		b->flags |= BUFFER_F_FLOW_HASH;
	}
}

/* One frame's descriptor d (status quadword q1 already read and checked):
 * its buffer bufs[i] goes to out[i], the slot is re-armed with fresh[i].
 * With rss (a constant at each call), the hash of an RSS-filtered frame is
 * kept. */
static inline void rx_take(volatile union i40e_rx_desc *d, uint64_t q1, uint32_t *bufs, const uint32_t *fresh,
			   uint32_t *out, uint32_t i, uint8_t *base, uint64_t stride, uint64_t iova0, bool rss)
{
	uint32_t b_i = bufs[i];
	struct buffer *b = (struct buffer *)(base + b_i * stride);
	b->current_length = (uint16_t)((q1 >> I40E_RXD_LEN_SHIFT) & I40E_RXD_LEN_MASK);
	if (rss)
		rx_hash(b, d->q[0], q1);
	out[i] = b_i;
	uint32_t f = fresh[i];
	bufs[i] = f;
	d->read.pkt_addr = iova0 + f * stride;
	d->read.hdr_addr = 0; /* DD lands here: clear before handing back */
}

/* The rx fast path over n descriptors in a row (no wrap): one descriptor
 * per frame, no error; each frame's buffer goes to out[], its slot is
 * re-armed with fresh[]. Four descriptors a turn, their status quadwords
 * read and judged together; stops at the first other descriptor; returns
 * how many it took. rss: RSS is on (more than one rx queue), so frames may
 * carry a hash; without it the hash is never looked at (inlined at each
 * call so that the test goes with the constant). Measured (bench/nic, one
 * queue, burst 32, callgrind): i40e_rx_burst less its buffer_alloc, 39.2
 * instructions per packet one at a time with the RSS test, 33.1 four at a
 * time without it. */
__attribute__((always_inline)) static inline uint32_t rx_fast(volatile union i40e_rx_desc *d, uint32_t *bufs,
							     const uint32_t *fresh, uint32_t *out, uint32_t n,
							     uint8_t *base, uint64_t stride, uint64_t iova0, bool rss)
{
	uint32_t i = 0;
	for (; i + 4 <= n; i += 4, d += 4) {
		uint64_t s0 = d[0].q[1], s1 = d[1].q[1], s2 = d[2].q[1], s3 = d[3].q[1];
		if (unlikely((~(s0 & s1 & s2 & s3) & I40E_RXD_EOF) | ((s0 | s1 | s2 | s3) & I40E_RXD_ERR_RXE)))
			break;
		rx_take(&d[0], s0, bufs, fresh, out, i, base, stride, iova0, rss);
		rx_take(&d[1], s1, bufs, fresh, out, i + 1, base, stride, iova0, rss);
		rx_take(&d[2], s2, bufs, fresh, out, i + 2, base, stride, iova0, rss);
		rx_take(&d[3], s3, bufs, fresh, out, i + 3, base, stride, iova0, rss);
	}
	for (; i < n; i++, d++) {
		uint64_t q1 = d->q[1];
		if (unlikely((q1 & (I40E_RXD_EOF | I40E_RXD_ERR_RXE)) != I40E_RXD_EOF))
			break;
		rx_take(d, q1, bufs, fresh, out, i, base, stride, iova0, rss);
	}
	return i;
}

/* Descriptors i.. of the batch one by one: frames over several buffers
 * (chained, the hash from the last descriptor), errors, frames without a
 * replacement buffer. Returns the frames handed to bi[] from n_out on. */
static uint32_t rx_slow(struct device *dev, uint16_t queue, struct i40e_rxq *rq, uint32_t i, uint32_t c,
			uint32_t got, uint32_t *bi, uint32_t n_out)
{
	volatile union i40e_rx_desc *ring = rq->ring;
	uint32_t mask = rq->mask, next = rq->next;
	for (; i < c; i++) {
		uint32_t slot = (next + i) & mask;
		volatile union i40e_rx_desc *d = &ring[slot];
		uint64_t q0 = d->q[0], q1 = d->q[1];
		uint32_t b_i = rq->bufs[slot];
		if (likely(i < got)) {
			rq->bufs[slot] = rq->fresh[i];
			buffer_get(b_i)->current_length = (uint16_t)((q1 >> I40E_RXD_LEN_SHIFT) & I40E_RXD_LEN_MASK);
			rx_chain_add(&rq->chain, b_i);
		} else {
			rq->chain.drop = true; /* no replacement: the frame is lost, the buffer stays */
		}
		if (unlikely(q1 & I40E_RXD_ERR_RXE))
			rq->chain.error = true;
		d->read.pkt_addr = rq->iova_data0 + (uint64_t)rq->bufs[slot] * rq->stride;
		d->read.hdr_addr = 0;
		if (q1 & I40E_RXD_EOF) {
			if (rq->chain.head != BUFFER_INVALID)
				rx_hash(buffer_get(rq->chain.head), q0, q1);
			n_out += rx_chain_end(&rq->chain, dev, queue, &bi[n_out]);
		}
	}
	return n_out;
}

static uint32_t i40e_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	struct i40e_rxq *rq = &id->rxq[queue];
	volatile union i40e_rx_desc *ring = rq->ring;
	uint32_t mask = rq->mask, next = rq->next;
	uint32_t c = rx_done(ring, mask, next, MIN(n, (uint32_t)I40E_RX_BURST_MAX));
	if (!c)
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the rest of each descriptor after DD */
	uint32_t got = buffer_alloc(rq->fresh, c, -1);

	/* Fast path: a replacement for each and no frame in progress, in at
	 * most two runs (before and after the ring's end); anything else
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
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(rq->io, rq->tail_reg, (rq->next - 1) & mask);
	return n_out;
}

/* ---- tx ---- */

static inline uint64_t tx_cmd(uint32_t len, bool eop)
{
	return I40E_TXD_DTYPE_DATA | I40E_TXD_CMD_ICRC | (eop ? I40E_TXD_CMD_EOP : 0) |
	       (uint64_t)len << I40E_TXD_SIZE_SHIFT;
}

/* Frames from bi[i] on, any of them chained: one descriptor per buffer.
 * Returns the index of the first frame that did not fit. */
static uint32_t tx_chains(struct i40e_txq *tq, const uint32_t *bi, uint32_t i, uint32_t n)
{
	struct tx_slots *t = &tq->slots;
	uint32_t room = tx_slots_room(t);
	for (; i < n; i++) {
		uint32_t n_seg = 1;
		for (struct buffer *s = buffer_get(bi[i]); s->flags & BUFFER_F_NEXT_PRESENT; s = buffer_get(s->next_buffer))
			n_seg++;
		if (n_seg > room)
			break;
		room -= n_seg;
		t->n_chain_slots += n_seg - 1;
		for (struct buffer *s = buffer_get(bi[i]);; s = buffer_get(s->next_buffer)) {
			bool last = !(s->flags & BUFFER_F_NEXT_PRESENT);
			volatile struct i40e_tx_desc *d = &tq->ring[t->tail];
			d->addr = pci_iova(tq->io, buffer_data(s));
			d->cmd = tx_cmd(s->current_length, last);
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
	volatile struct i40e_tx_desc *d = p;
	d->addr = (uint64_t)(uintptr_t)b + data0 + (uint64_t)(int64_t)b->current_data;
	d->cmd = tx_cmd(b->current_length, true);
}

static inline uint32_t tx_fast(volatile struct i40e_tx_desc *d, uint32_t *bufs, const uint32_t *bi, uint32_t n, uint8_t *base,
			       uint64_t stride, uint64_t data0)
{
	return tx_slots_fast(d, sizeof(*d), tx_put, bufs, bi, n, base, stride, data0);
}

static uint32_t i40e_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	struct i40e_txq *tq = &id->txq[queue];
	struct tx_slots *t = &tq->slots;
	int64_t rs;
	while ((rs = tx_slots_oldest_rs(t)) >= 0 && (tq->ring[rs].cmd & I40E_TXD_DTYPE_MASK) == I40E_TXD_DTYPE_DONE)
		tx_slots_reclaim_rs(t);

	/* Fast path in at most two runs (before and after the ring's end). */
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
		tq->ring[t->rs[k & mask]].cmd |= I40E_TXD_CMD_RS;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(tq->io, tq->tail_reg, t->tail);
	return i;
}

/* ---- queue contexts and the enable handshake (2.7 - 2.9) ---- */

static int queue_enable(struct i40e_dev *id, uint32_t ena_reg)
{
	/* No request in flight, then ask and wait for the NIC to confirm. */
	uint32_t v = rd(id, ena_reg);
	if (((v & I40E_QENA_REQ) != 0) != ((v & I40E_QENA_STAT) != 0) &&
	    i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, (v & I40E_QENA_REQ) ? I40E_QENA_STAT : 0))
		return -ETIMEDOUT;
	wr(id, ena_reg, rd(id, ena_reg) | I40E_QENA_REQ);
	return i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, I40E_QENA_STAT);
}

static int queue_disable(struct i40e_dev *id, uint32_t ena_reg)
{
	if (!(rd(id, ena_reg) & (I40E_QENA_REQ | I40E_QENA_STAT)))
		return 0;
	if (i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, I40E_QENA_STAT))
		return -ETIMEDOUT;
	wr(id, ena_reg, rd(id, ena_reg) & ~I40E_QENA_REQ);
	return i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, 0);
}

/* GLLAN_TXPRE_QDIS for PF queue q: clear (before enable) or set (before
 * disable) the pre-queue-disable, by absolute index; then 10 us. */
static void tx_pre_qdis(struct i40e_dev *id, uint16_t q, bool set)
{
	uint32_t abs = id->base_queue + q;
	wr(id, I40E_GLLAN_TXPRE_QDIS(abs / 128),
	   (abs % 128) | (set ? I40E_TXPRE_QDIS_SET : I40E_TXPRE_QDIS_CLEAR));
	usleep(10);
}

static void rxq_release(struct i40e_dev *id, struct i40e_rxq *rq)
{
	if (rq->bufs) {
		buffer_free(rq->bufs, rq->mask + 1);
		free(rq->bufs);
	}
	if (rq->chain.head != BUFFER_INVALID)
		buffer_free(&rq->chain.head, 1);
	pci_dma_free(id->io, (void *)rq->ring, (rq->mask + 1) * sizeof(union i40e_rx_desc));
	memset(rq, 0, sizeof(*rq));
	rx_chain_reset(&rq->chain);
}

static void txq_release(struct i40e_dev *id, struct i40e_txq *tq)
{
	size_t ring_bytes = (tq->slots.mask + 1) * sizeof(struct i40e_tx_desc);
	tx_slots_release(&tq->slots);
	pci_dma_free(id->io, (void *)tq->ring, ring_bytes);
	memset(tq, 0, sizeof(*tq));
}

static int rxq_start(struct i40e_dev *id, uint16_t q)
{
	struct i40e_rxq *rq = &id->rxq[q];
	uint32_t n = id->n_rx_desc;
	rx_chain_reset(&rq->chain);
	rq->io = id->io;
	rq->mask = n - 1;
	rq->tail_reg = I40E_QRX_TAIL(q);
	rq->stride = buffer_main.stride;
	rq->iova_data0 = pci_iova(id->io, buffer_data_area(buffer_get(0)));
	rq->ring = pci_dma_alloc(id->io, n * sizeof(union i40e_rx_desc));
	if (!rq->ring)
		return -ENOMEM;
	uint32_t *bufs = malloc(n * sizeof(uint32_t));
	if (!bufs)
		return -ENOMEM;
	uint32_t got = buffer_alloc(bufs, n, id->io->numa_node);
	if (got < n) {
		buffer_free(bufs, got);
		free(bufs);
		return -ENOBUFS;
	}
	rq->bufs = bufs;
	for (uint32_t i = 0; i < n; i++) {
		rq->ring[i].read.pkt_addr = rq->iova_data0 + (uint64_t)bufs[i] * rq->stride;
		rq->ring[i].read.hdr_addr = 0;
	}
	/* The context (2.7): a ring 128-byte aligned (pci_dma_alloc gives 4 KB). */
	uint8_t *ctx = id->hmc + id->hmc_rx_base + (size_t)q * I40E_HMC_RX_CTX_SIZE;
	memset(ctx, 0, I40E_HMC_RX_CTX_SIZE);
	i40e_ctx_set(ctx, I40E_RXCTX_BASE, pci_iova(id->io, (const void *)rq->ring) >> 7);
	i40e_ctx_set(ctx, I40E_RXCTX_QLEN, n);
	i40e_ctx_set(ctx, I40E_RXCTX_DBUFF, MIN(buffer_main.data_size, 127u * 128) >> 7);
	i40e_ctx_set(ctx, I40E_RXCTX_DSIZE, 1);    /* 32-byte descriptors */
	i40e_ctx_set(ctx, I40E_RXCTX_CRCSTRIP, 1);
	i40e_ctx_set(ctx, I40E_RXCTX_L2TSEL, 1);
	i40e_ctx_set(ctx, I40E_RXCTX_RXMAX, id->max_frame);
	i40e_ctx_set(ctx, I40E_RXCTX_LRXQTHRESH, 2);
	i40e_ctx_set(ctx, I40E_RXCTX_PREFENA, 1);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr(id, I40E_QRX_TAIL(q), n - 1); /* the ring starts full */
	return queue_enable(id, I40E_QRX_ENA(q));
}

static int txq_start(struct i40e_dev *id, uint16_t q)
{
	struct i40e_txq *tq = &id->txq[q];
	uint32_t n = id->n_tx_desc;
	tq->io = id->io;
	tq->tail_reg = I40E_QTX_TAIL(q);
	tq->ring = pci_dma_alloc(id->io, n * sizeof(struct i40e_tx_desc));
	if (!tq->ring || tx_slots_init(&tq->slots, n))
		return -ENOMEM;
	uint8_t *ctx = id->hmc + (size_t)q * I40E_HMC_TX_CTX_SIZE;
	memset(ctx, 0, I40E_HMC_TX_CTX_SIZE);
	i40e_ctx_set(ctx, I40E_TXCTX_NEW_CONTEXT, 1);
	i40e_ctx_set(ctx, I40E_TXCTX_BASE, pci_iova(id->io, (const void *)tq->ring) >> 7);
	i40e_ctx_set(ctx, I40E_TXCTX_QLEN, n);
	i40e_ctx_set(ctx, I40E_TXCTX_RDYLIST, id->qs_handle);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	wr(id, I40E_QTX_CTL(q), I40E_QTX_CTL_PF_QUEUE | id->pf_id << I40E_QTX_CTL_PF_INDX_SHIFT);
	(void)rd(id, I40E_GLGEN_RSTAT); /* flush */
	tx_pre_qdis(id, q, false);
	wr(id, I40E_QTX_HEAD(q), 0);
	return queue_enable(id, I40E_QTX_ENA(q));
}

static void i40e_stop(struct device *dev)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	if (!id->running)
		return;
	for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
		if (id->rxq[q].ring)
			queue_disable(id, I40E_QRX_ENA(q));
		rxq_release(id, &id->rxq[q]);
	}
	for (uint16_t q = 0; q < dev->n_tx_queues; q++) {
		if (id->txq[q].ring) {
			tx_pre_qdis(id, q, true);
			queue_disable(id, I40E_QTX_ENA(q));
		}
		txq_release(id, &id->txq[q]);
	}
	id->running = false;
}

static int i40e_start(struct device *dev)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	int rc = 0;
	id->running = true;
	for (uint16_t q = 0; q < dev->n_tx_queues && !rc; q++)
		rc = txq_start(id, q);
	for (uint16_t q = 0; q < dev->n_rx_queues && !rc; q++)
		rc = rxq_start(id, q);
	if (rc) {
		base_log("i40e", "%s: start failed: %s", id->addr, strerror(-rc));
		i40e_stop(dev);
	}
	return rc;
}

/* ---- link, statistics ---- */

/* Link state as the firmware's link events last said (ARQ drained here). */
void i40e_link(struct device *dev, struct dev_link *link)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	i40e_arq_poll(id);
	*link = id->link;
}

static void i40e_stats(struct device *dev, struct dev_counters *c)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	i40e_hw_stats_update(id);
	const struct i40e_hw_stats *h = &id->hw, *b = &id->hw_base;
	c->rx_dropped += I40E_SINCE32(h, b, rdpc);
	c->rx_errors += I40E_SINCE32(h, b, crcerrs) + I40E_SINCE32(h, b, illerrc) + I40E_SINCE32(h, b, rlec) +
			I40E_SINCE32(h, b, ruc) + I40E_SINCE32(h, b, roc);
}

/* The ring's buffers, the frame being assembled, and the frames sent and
 * not yet reclaimed (each chain whole). */
static uint32_t i40e_n_buffers_held(struct device *dev, bool rx, uint16_t queue)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	if (!rx)
		return tx_slots_n_held(&id->txq[queue].slots);
	struct i40e_rxq *rq = &id->rxq[queue];
	uint32_t n = rq->bufs ? rq->mask + 1 : 0;
	if (rq->chain.head != BUFFER_INVALID)
		n += buffer_chain_length(rq->chain.head);
	return n;
}

static void i40e_destroy(struct device *dev)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	i40e_stop(dev);
	if (id->io) {
		i40e_aq_shutdown(id);
		pci_dma_free(id->io, id->hmc, id->hmc_size);
		if (id->buffers_mapped)
			pci_dma_unmap_buffers(id->io);
		pci_release(id->addr);
		pci_io_close(id->io);
	}
	free(id);
}

const struct device_ops i40e_ops = {
	.tx_node = "i40e-tx",
	.start = i40e_start,
	.stop = i40e_stop,
	.rx_burst = i40e_rx_burst,
	.tx_burst = i40e_tx_burst,
	.link = i40e_link,
	.stats = i40e_stats,
	.format_hw = i40e_format_hw,
	.n_buffers_held = i40e_n_buffers_held,
	.destroy = i40e_destroy,
};
