/* The i40e datapath and queues: rx and tx bursts, queue contexts and the
 * enable/disable handshake, link and statistics. Bring-up, configuration
 * and registration are in i40e_init.c, the admin queue in i40e_adminq.c.
 *
 * rx: 32-byte descriptors; those done (DD) from the software index are
 * taken as a batch, one bulk allocation gives their replacements and one
 * QRX_TAIL write hands the batch back. Without a replacement the frame is
 * dropped, its buffer re-armed and the drop counted as RX-dropped, so the
 * ring never runs dry. Frames fit one buffer (rxmax 1518 <= buffer size);
 * a descriptor without EOF, or with RXE, is counted as RX-errors.
 * tx: 16-byte data descriptors, EOP|ICRC on each; RS on every 32nd slot
 * (DPDK's rs_thresh) and on a burst's last descriptor, so that a partial
 * batch does not hold the ring; everything up to an RS descriptor that
 * reads DTYPE 0xF is reclaimed at once (2.11), the RS slots kept in order.
 * A burst writes its descriptors and QTX_TAIL once; what does not fit is
 * left to the caller, who counts it as TX-dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/i40e/i40e_private.h"
#include "graph/buffer.h"
#include "graph/graph.h"

/* ---- rx ---- */

static uint32_t i40e_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	struct i40e_rxq *rq = &id->rxq[queue];
	volatile union i40e_rx_desc *ring = rq->ring;
	uint32_t mask = rq->mask, next = rq->next;
	if (n > I40E_RX_BURST_MAX)
		n = I40E_RX_BURST_MAX;
	uint32_t c = 0;
	while (c < n && (ring[(next + c) & mask].q[1] & I40E_RXD_DD))
		c++;
	if (!c)
		return 0;
	__atomic_thread_fence(__ATOMIC_ACQUIRE); /* the rest of each descriptor after DD */
	uint32_t got = buffer_alloc(rq->fresh, c, -1);
	uint32_t n_out = 0, n_drop = 0, n_err = 0;
	for (uint32_t i = 0; i < c; i++) {
		uint32_t slot = (next + i) & mask;
		volatile union i40e_rx_desc *d = &ring[slot];
		uint64_t q0 = d->q[0], q1 = d->q[1];
		if (unlikely(i >= got)) {
			n_drop++; /* no replacement: the buffer stays armed */
		} else if (unlikely(!(q1 & I40E_RXD_EOF) || (q1 & I40E_RXD_ERR_RXE))) {
			n_err++;
			buffer_free(&rq->fresh[i], 1);
		} else {
			uint32_t b_i = rq->bufs[slot];
			struct buffer *b = buffer_get(b_i);
			b->current_length = (uint16_t)((q1 >> I40E_RXD_LEN_SHIFT) & I40E_RXD_LEN_MASK);
			if (((q1 >> I40E_RXD_FLTSTAT_SHIFT) & 3) == I40E_RXD_FLTSTAT_RSS) {
				b->flow_hash = (uint32_t)(q0 >> 32);
				b->flags |= BUFFER_F_FLOW_HASH;
			}
			bi[n_out++] = b_i;
			rq->bufs[slot] = rq->fresh[i];
		}
		d->read.pkt_addr = rq->iova_data0 + (uint64_t)rq->bufs[slot] * rq->stride;
		d->read.hdr_addr = 0; /* DD lands here: clear before handing back */
	}
	if (n_drop)
		stat_add(&dev->rxq[queue].c.rx_dropped, n_drop);
	if (n_err)
		stat_add(&dev->rxq[queue].c.rx_errors, n_err);
	rq->next = (next + c) & mask;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(rq->io, rq->tail_reg, (rq->next - 1) & mask);
	return n_out;
}

/* ---- tx ---- */

/* Free everything up to each RS descriptor that reads done, oldest first. */
static inline void tx_reclaim(struct i40e_txq *tq)
{
	uint32_t mask = tq->mask;
	while (tq->rs_head != tq->rs_tail) {
		uint32_t last = tq->rs[tq->rs_head & mask];
		if ((tq->ring[last].cmd & I40E_TXD_DTYPE_MASK) != I40E_TXD_DTYPE_DONE)
			break;
		uint32_t k = 0;
		for (uint32_t s = tq->clean;; s = (s + 1) & mask) {
			tq->done[k++] = tq->bufs[s];
			if (k == I40E_TX_RS_BATCH || s == last) {
				buffer_free(tq->done, k);
				k = 0;
			}
			if (s == last)
				break;
		}
		tq->clean = (last + 1) & mask;
		tq->rs_head++;
	}
}

static uint32_t i40e_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	struct i40e_txq *tq = &id->txq[queue];
	tx_reclaim(tq);
	uint32_t mask = tq->mask, tail = tq->tail;
	uint32_t room = mask - ((tail - tq->clean) & mask); /* one slot stays empty */
	if (n > room)
		n = room;
	if (!n)
		return 0;
	struct pci_io *io = tq->io;
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		volatile struct i40e_tx_desc *d = &tq->ring[tail];
		bool rs = (tail & (I40E_TX_RS_BATCH - 1)) == I40E_TX_RS_BATCH - 1 || i == n - 1;
		d->addr = pci_iova(io, buffer_data(b));
		d->cmd = I40E_TXD_DTYPE_DATA | I40E_TXD_CMD_EOP | I40E_TXD_CMD_ICRC | (rs ? I40E_TXD_CMD_RS : 0) |
			 (uint64_t)b->current_length << I40E_TXD_SIZE_SHIFT;
		tq->bufs[tail] = bi[i];
		if (rs)
			tq->rs[tq->rs_tail++ & mask] = tail;
		tail = (tail + 1) & mask;
	}
	tq->tail = tail;
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(io, tq->tail_reg, tail);
	return n;
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
	pci_dma_free(id->io, (void *)rq->ring, (rq->mask + 1) * sizeof(union i40e_rx_desc));
	memset(rq, 0, sizeof(*rq));
}

static void txq_release(struct i40e_dev *id, struct i40e_txq *tq)
{
	if (tq->bufs) {
		for (uint32_t s = tq->clean; s != tq->tail; s = (s + 1) & tq->mask)
			buffer_free(&tq->bufs[s], 1);
		free(tq->bufs);
	}
	free(tq->rs);
	pci_dma_free(id->io, (void *)tq->ring, (tq->mask + 1) * sizeof(struct i40e_tx_desc));
	memset(tq, 0, sizeof(*tq));
}

static int rxq_start(struct i40e_dev *id, uint16_t q)
{
	struct i40e_rxq *rq = &id->rxq[q];
	uint32_t n = id->n_rx_desc;
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
	i40e_ctx_set(ctx, I40E_RXCTX_RXMAX, I40E_MAX_FRAME);
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
	tq->mask = n - 1;
	tq->tail_reg = I40E_QTX_TAIL(q);
	tq->ring = pci_dma_alloc(id->io, n * sizeof(struct i40e_tx_desc));
	tq->bufs = malloc(n * sizeof(uint32_t));
	tq->rs = malloc(n * sizeof(uint32_t));
	if (!tq->ring || !tq->bufs || !tq->rs)
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
		graph_log("i40e", "%s: start failed: %s", id->addr, strerror(-rc));
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

/* The ring's buffers, and what was sent and not yet reclaimed. */
static uint32_t i40e_n_buffers_held(struct device *dev, bool rx, uint16_t queue)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	if (rx)
		return id->rxq[queue].bufs ? id->rxq[queue].mask + 1 : 0;
	struct i40e_txq *tq = &id->txq[queue];
	uint32_t n = 0;
	if (tq->bufs)
		for (uint32_t s = tq->clean; s != tq->tail; s = (s + 1) & tq->mask)
			n += buffer_chain_length(tq->bufs[s]);
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
