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
 * replacement for each) runs without per-packet state (drivers/pci/rx_ring.h).
 * tx: 16-byte data descriptors, ICRC on each, EOP on a frame's last; RS on
 * every 32nd slot and on a burst's last descriptor (drivers/pci/tx_slots.h),
 * everything up to an RS descriptor that reads DTYPE 0xF reclaimed at once
 * (X710/XL710 datasheet, transmit descriptors). A burst writes its descriptors and QTX_TAIL once; what does not
 * fit is left to the caller, who counts it as TX-dropped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/i40e/i40e_private.h"
#include "drivers/pci/io_barrier.h"
#include "drivers/pci/pci_clock.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* ---- rx ---- */

/* The X710/XL710's 32-byte receive descriptor, write-back format
 * (X710/XL710 datasheet 8.3): status, errors, filter status and length in
 * the second quadword; the RSS hash in the upper half of the first when the
 * filter status says RSS. A chained frame's hash is in its last
 * descriptor. */
__attribute__((always_inline)) static inline uint16_t i40e_rx_len(uint64_t q1)
{
	return (uint16_t)((q1 >> I40E_RXD_LEN_SHIFT) & I40E_RXD_LEN_MASK);
}

/* The length (bits 51:38 of q1) from the descriptor's bytes 12..15: a
 * 32-bit load, one shift and a mask. */
__attribute__((always_inline)) static inline uint16_t i40e_rx_len_at(volatile const uint64_t *d)
{
	uint32_t w = *(volatile const uint32_t *)((volatile const uint8_t *)d + 12);
	return (uint16_t)((w >> (I40E_RXD_LEN_SHIFT - 32)) & I40E_RXD_LEN_MASK);
}

__attribute__((always_inline)) static inline void i40e_rx_hash(struct buffer *b, volatile const uint64_t *d,
								uint64_t q1)
{
	uint64_t q0 = d[0];
	if (((q1 >> I40E_RXD_FLTSTAT_SHIFT) & 3) == I40E_RXD_FLTSTAT_RSS) {
		b->flow_hash = (uint32_t)(q0 >> 32);
		b->flags |= BUFFER_F_FLOW_HASH;
	}
}

static const struct pci_rx_fmt i40e_rx_fmt = {
	.desc_size = sizeof(union i40e_rx_desc),
	.dd = I40E_RXD_DD,
	.eop = I40E_RXD_EOF,
	.rxe = I40E_RXD_ERR_RXE,
	.len = i40e_rx_len,
	.len_at = i40e_rx_len_at,
	.len_shift = I40E_RXD_LEN_SHIFT,
	.len_mask = I40E_RXD_LEN_MASK,
	.hash = i40e_rx_hash,
	.hash_at_eop = true,
};
_Static_assert(((I40E_RXD_DD | I40E_RXD_EOF) >> I40E_RXD_LEN_SHIFT) == 0,
	       "the length lies above DD and EOP (pci_rx_fmt.len_shift)");

/* The batch, once the next descriptor reads done (pci_rx_poll). */
__attribute__((noinline)) static uint32_t i40e_rx_batch(struct device *dev, uint16_t queue, struct pci_rxq *rq,
							 uint32_t *bi, uint32_t n)
{
	return pci_rx_burst(dev, queue, rq, bi, n, &i40e_rx_fmt);
}

static uint32_t i40e_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	return pci_rx_poll(dev, queue, &id->rxq[queue], bi, n, &i40e_rx_fmt, i40e_rx_batch);
}

bool i40e_rx_pending(struct i40e_dev *id, uint16_t q)
{
	return pci_rx_done(&id->rxq[q], 1, &i40e_rx_fmt) != 0;
}

/* ---- tx ---- */

/* The X710/XL710's transmit data descriptor (X710/XL710 datasheet,
 * transmit descriptors): buffer address; DTYPE data, ICRC, EOP on a
 * frame's last, RS when a write-back is wanted, the buffer's size. A
 * descriptor sent with RS reads back DTYPE 0xF once done. */
static inline uint64_t tx_cmd(uint32_t len, bool eop)
{
	return I40E_TXD_DTYPE_DATA | I40E_TXD_CMD_ICRC | (eop ? I40E_TXD_CMD_EOP : 0) |
	       (uint64_t)len << I40E_TXD_SIZE_SHIFT;
}

__attribute__((always_inline)) static inline bool i40e_tx_done(volatile const void *p)
{
	volatile const struct i40e_tx_desc *d = p;
	return (d->cmd & I40E_TXD_DTYPE_MASK) == I40E_TXD_DTYPE_DONE;
}

__attribute__((always_inline)) static inline void i40e_tx_put(volatile void *p, const struct buffer *b,
							      uint64_t data0)
{
	volatile struct i40e_tx_desc *d = p;
	d->addr = (uint64_t)(uintptr_t)b + data0 + (uint64_t)(int64_t)b->current_data;
	d->cmd = tx_cmd(b->current_length, true);
}

#if defined(__SSE4_1__)
/* Two of i40e_tx_put's descriptors from lanes (tx_slots_fast): the length
 * (w: the headers' first quadwords) shuffled and shifted to its field, the
 * command bits ORed. */
__attribute__((always_inline)) static inline void i40e_tx_put2(volatile void *p, __m128i addr, __m128i w)
{
	const __m128i cmd = _mm_set1_epi64x((int64_t)tx_cmd(0, true));
	/* current_length to bits 47:32, then shifted to 47:34 */
	const __m128i k = _mm_setr_epi8(-1, -1, -1, -1, 4, 5, -1, -1, -1, -1, -1, -1, 6, 7, -1, -1);
	_Static_assert(I40E_TXD_SIZE_SHIFT >= 32, "the length's shuffle puts it at bit 32");
	tx_slots_store2(p, addr, _mm_or_si128(_mm_slli_epi64(_mm_shuffle_epi8(w, k), I40E_TXD_SIZE_SHIFT - 32), cmd));
}
#else
#define i40e_tx_put2 NULL
#endif

__attribute__((always_inline)) static inline void i40e_tx_put_seg(volatile void *p, uint64_t iova, uint32_t len,
								  bool last, uint32_t total)
{
	(void)total;
	volatile struct i40e_tx_desc *d = p;
	d->addr = iova;
	d->cmd = tx_cmd(len, last);
}

__attribute__((always_inline)) static inline void i40e_tx_set_rs(volatile void *p)
{
	volatile struct i40e_tx_desc *d = p;
	d->cmd |= I40E_TXD_CMD_RS;
}

static const struct pci_tx_fmt i40e_tx_fmt = {
	.desc_size = sizeof(struct i40e_tx_desc),
	.done = i40e_tx_done,
	.put = i40e_tx_put,
	.put2 = i40e_tx_put2,
	.put_seg = i40e_tx_put_seg,
	.set_rs = i40e_tx_set_rs,
};

static uint32_t i40e_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	return pci_tx_burst(&id->txq[queue], bi, n, &i40e_tx_fmt);
}

/* ---- queue contexts and the enable handshake (X710/XL710 datasheet: LAN queue contexts, queue enable) ---- */

static int queue_enable(struct i40e_dev *id, uint32_t ena_reg)
{
	/* No request in flight, then ask and wait for the NIC to confirm. */
	uint32_t v = rd(id, ena_reg);
	if (((v & I40E_QENA_REQ) != 0) != ((v & I40E_QENA_STAT) != 0) &&
	    i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, (v & I40E_QENA_REQ) ? I40E_QENA_STAT : 0,
			  I40E_POLL_TIMEOUT_MS, "queue request in flight (QENA_STAT)"))
		return -ETIMEDOUT;
	wr(id, ena_reg, rd(id, ena_reg) | I40E_QENA_REQ);
	return i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, I40E_QENA_STAT, I40E_POLL_TIMEOUT_MS,
			     "queue enable (QENA_STAT)");
}

static int queue_disable(struct i40e_dev *id, uint32_t ena_reg)
{
	if (!(rd(id, ena_reg) & (I40E_QENA_REQ | I40E_QENA_STAT)))
		return 0;
	if (i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, I40E_QENA_STAT, I40E_POLL_TIMEOUT_MS,
			  "queue enable before disable (QENA_STAT)"))
		return -ETIMEDOUT;
	wr(id, ena_reg, rd(id, ena_reg) & ~I40E_QENA_REQ);
	return i40e_wait_reg(id, ena_reg, I40E_QENA_STAT, 0, I40E_POLL_TIMEOUT_MS, "queue disable (QENA_STAT)");
}

/* GLLAN_TXPRE_QDIS for PF queue q: clear (before enable) or set (before
 * disable) the pre-queue-disable, by absolute index; then 10 us. */
static void tx_pre_qdis(struct i40e_dev *id, uint16_t q, bool set)
{
	uint32_t abs = id->base_queue + q;
	wr(id, I40E_GLLAN_TXPRE_QDIS(abs / 128),
	   (abs % 128) | (set ? I40E_TXPRE_QDIS_SET : I40E_TXPRE_QDIS_CLEAR));
	pci_clock_sleep_us(10);
}

static void rxq_release(struct i40e_dev *id, struct pci_rxq *rq)
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

static void txq_release(struct i40e_dev *id, struct pci_txq *tq)
{
	size_t ring_bytes = (tq->slots.mask + 1) * sizeof(struct i40e_tx_desc);
	tx_slots_release(&tq->slots);
	pci_dma_free(id->io, (void *)tq->ring, ring_bytes);
	memset(tq, 0, sizeof(*tq));
}

static int rxq_start(struct i40e_dev *id, uint16_t q)
{
	struct pci_rxq *rq = &id->rxq[q];
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
		pci_rx_arm(pci_rx_desc(rq->ring, sizeof(union i40e_rx_desc), i),
			   rq->iova_data0 + (uint64_t)bufs[i] * rq->stride);
	}
	/* The rx queue context (X710/XL710 datasheet, LAN rx queue context): a ring 128-byte aligned (pci_dma_alloc gives 4 KB). */
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
	pci_io_wmb();
	wr(id, I40E_QRX_TAIL(q), n - 1); /* the ring starts full */
	return queue_enable(id, I40E_QRX_ENA(q));
}

static int txq_start(struct i40e_dev *id, uint16_t q)
{
	struct pci_txq *tq = &id->txq[q];
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
	pci_io_wmb();
	wr(id, I40E_QTX_CTL(q), I40E_QTX_CTL_PF_QUEUE | id->pf_id << I40E_QTX_CTL_PF_INDX_SHIFT);
	(void)rd(id, I40E_GLGEN_RSTAT); /* flush */
	tx_pre_qdis(id, q, false);
	wr(id, I40E_QTX_HEAD(q), 0);
	return queue_enable(id, I40E_QTX_ENA(q));
}

/* Descriptor write-back for polled queues. The X710 writes completed
 * receive descriptors back a cache line (four 32-byte descriptors) at a
 * time, and without head write-back transmit DD likewise (eight 16-byte
 * descriptors), so a polled queue at a low rate would hold frames, or the
 * buffers of sent ones, until more come. With WB_ON_ITR in PFINT_DYN_CTL0
 * and interrupts left disabled (INTENA 0), a completed descriptor starts
 * the ITR of the vector its queue's cause is bound to, and when the ITR
 * expires what is left is written back, no interrupt raised (X710/XL710
 * datasheet: receive and transmit descriptor write-back; PFINT_DYN_CTL0,
 * PFINT_ITR0, PFINT_LNKLST0, QINT_RQCTL, QINT_TQCTL). So: every rx queue's
 * cause (unless it has its own vector: i40e_irq.c), then every tx queue's, on vector 0's list (LNKLST0 first, each
 * QINT_xQCTL naming the next, the last the end of the list), ITR index 0
 * at I40E_RX_WB_ITR, then WB_ON_ITR with ITR_INDX NONE (leave the ITRs as
 * written). */
static void rx_wb_on_itr(struct i40e_dev *id, bool on)
{
	uint16_t n = id->n_irq ? 0 : id->dev.n_rx_queues, nt = id->dev.n_tx_queues; /* n: rx causes on vector 0 */
	if (!on) {
		wr(id, I40E_PFINT_DYN_CTL0, 0);
		wr(id, I40E_PFINT_LNKLST0, I40E_QUEUE_END_OF_LIST);
		for (uint16_t q = 0; q < id->dev.n_rx_queues; q++)
			wr(id, I40E_QINT_RQCTL(q), 0);
		for (uint16_t q = 0; q < nt; q++)
			wr(id, I40E_QINT_TQCTL(q), 0);
		i40e_irq_lists(id, false);
		return;
	}
	wr(id, I40E_PFINT_ITR0(0), I40E_RX_WB_ITR);
	for (uint16_t q = 0; q < n; q++) { /* the next rx queue (type 0), after the last tx queue 0 (type 1) */
		bool last = q + 1u == n;
		uint32_t next = !last ? q + 1u : nt ? 0u : I40E_QUEUE_END_OF_LIST, type = last && nt ? 1u : 0u;
		wr(id, I40E_QINT_RQCTL(q), I40E_QINT_CAUSE_ENA | 0u << I40E_QINT_ITR_INDX_SHIFT |
						   next << I40E_QINT_NEXTQ_INDX_SHIFT | type << I40E_QINT_NEXTQ_TYPE_SHIFT);
	}
	for (uint16_t q = 0; q < nt; q++) {
		uint32_t next = q + 1u < nt ? q + 1u : I40E_QUEUE_END_OF_LIST; /* the next tx queue (type 1) */
		wr(id, I40E_QINT_TQCTL(q), I40E_QINT_CAUSE_ENA | 0u << I40E_QINT_ITR_INDX_SHIFT |
						   next << I40E_QINT_NEXTQ_INDX_SHIFT | 1u << I40E_QINT_NEXTQ_TYPE_SHIFT);
	}
	/* rx queue 0 first, or tx queue 0 when the rx queues have vectors of their own */
	uint32_t first = n ? 0u : nt ? 0u | 1u << I40E_PFINT_LNKLST0_FIRSTQ_TYPE_SHIFT : I40E_QUEUE_END_OF_LIST;
	wr(id, I40E_PFINT_LNKLST0, first);
	wr(id, I40E_PFINT_DYN_CTL0, I40E_PFINT_DYN_CTL0_WB_ON_ITR | I40E_PFINT_DYN_CTL0_ITR_NONE);
	i40e_irq_lists(id, true);
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
	rx_wb_on_itr(id, false);
	id->running = false;
}

static int i40e_start(struct device *dev)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	int rc = 0;
	id->running = true;
	for (uint16_t q = 0; q < dev->n_tx_queues && !rc; q++)
		rc = txq_start(id, q);
	if (!rc)
		rx_wb_on_itr(id, true);
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
	const struct i40e_hw_stats *h = &id->hw;
	c->rx_dropped += h->rdpc; /* receive overruns: no descriptor (X710 datasheet, GLPRT_RDPC) */
	c->rx_errors += h->crcerrs + h->illerrc + h->rlec + h->ruc + h->roc;
}

/* The ring's buffers, the frame being assembled, and the frames sent and
 * not yet reclaimed (each chain whole). */
static uint32_t i40e_n_buffers_held(struct device *dev, bool rx, uint16_t queue)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	if (!rx)
		return tx_slots_n_held(&id->txq[queue].slots);
	struct pci_rxq *rq = &id->rxq[queue];
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
		i40e_irq_close(id);
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
	.rx_fd = i40e_rx_fd,
	.rx_arm = i40e_rx_arm,
	.destroy = i40e_destroy,
};
