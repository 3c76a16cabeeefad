/* The ixgbe driver: Intel 82599 / X540 / X550, polled, multi-queue, from
 * user space through a struct pci_io (vfio-pci, or a device model in tests).
 *
 *   xe0 { driver ixgbe  dev 0000:03:00.0  rx-queues 2  rx-desc 1024  tx-desc 1024 }
 *
 * Create resets and initialises the NIC in the facts sheet's order (1.8):
 * interrupts off, global reset, EEPROM and DMA-init waits, 10G serial link
 * with auto-negotiation restarted, statistics cleared, rx and tx global
 * setup, RSS (key, RETA round robin over the rx queues, MRQC) when there is
 * more than one rx queue, promiscuous mode. Start sets up the rings (advanced
 * one-buffer rx descriptors with DROP_EN, advanced tx data descriptors),
 * fills every rx descriptor, enables the queues and receive; stop disables
 * them and takes every buffer back.
 *
 * rx: descriptors done (DD) from the software index are taken as a batch;
 * one bulk allocation gives their replacements and one RDT write hands the
 * batch back (1.9). Without a replacement buffer the frame is dropped, the
 * descriptor re-armed with its own buffer and the drop counted as
 * RX-dropped, so the ring never runs dry of buffers. A frame spanning
 * descriptors (mtu above the buffer size) becomes a buffer chain.
 * tx: completions are reclaimed 32 descriptors at a time by the DD bit of
 * the batch's last descriptor (one by one only when a burst finds too little
 * room, so that a partial batch never blocks the ring); a burst writes its descriptors (a chain takes
 * one per buffer) and TDT once. What does not fit is left to the caller,
 * who counts it as TX-dropped.
 * Statistics registers (clear on read) are folded into the device counters
 * by stats(): missed and per-queue drops into RX-dropped, MAC errors into
 * RX-errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/device.h"
#include "drivers/ixgbe/ixgbe_regs.h"
#include "drivers/pci/pci.h"
#include "graph/buffer.h"
#include "graph/graph.h"

#define IXGBE_MAX_QUEUES 16     /* 82599 RSS spans at most 16 queues */
#define IXGBE_TX_CLEAN_BATCH 32 /* descriptors reclaimed per DD check */
#define IXGBE_RX_BURST_MAX 256  /* descriptors looked at per rx burst */
#define IXGBE_POLL_TIMEOUT_MS 1000
#define IXGBE_MAX_FRAME_HW 9728 /* largest frame we let MAXFRS accept */

/* 82599 datasheet 7.1.2.8.3 / facts 3.3: the Microsoft default key. */
static const uint8_t ixgbe_rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* ---- configuration ---- */

struct ixgbe_conf {
	char dev[PCI_ADDR_SIZE];
	uint32_t rx_queues;
	uint32_t tx_queues;
	uint32_t rx_desc;
	uint32_t tx_desc;
	uint32_t mtu;
	bool promisc;
};
_Static_assert(sizeof(struct ixgbe_conf) <= CONF_DRIVER_CONF_SIZE, "ixgbe conf fits");

static const struct conf_key ixgbe_keys[] = {
	{ .name = "dev", .type = CONF_STRING, CONF_FIELD(struct ixgbe_conf, dev),
	  .doc = "PCI address of the port, bound to vfio-pci (0000:03:00.0)" },
	{ .name = "rx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = IXGBE_MAX_QUEUES,
	  CONF_FIELD(struct ixgbe_conf, rx_queues), .doc = "rx queues (RSS spreads flows over them)" },
	{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = IXGBE_MAX_QUEUES,
	  CONF_FIELD(struct ixgbe_conf, tx_queues), .doc = "tx queues" },
	{ .name = "rx-desc", .type = CONF_UINT, .def = "1024", .min = 64, .max = 4096,
	  CONF_FIELD(struct ixgbe_conf, rx_desc), .doc = "rx ring size (power of two)" },
	{ .name = "tx-desc", .type = CONF_UINT, .def = "1024", .min = 64, .max = 4096,
	  CONF_FIELD(struct ixgbe_conf, tx_desc), .doc = "tx ring size (power of two)" },
	{ .name = "mtu", .type = CONF_UINT, .def = "1500", .min = 68, .max = IXGBE_MAX_FRAME_HW - 18,
	  CONF_FIELD(struct ixgbe_conf, mtu), .doc = "largest IP packet; above the buffer size frames chain" },
	{ .name = "promisc", .type = CONF_BOOL, .def = "on", CONF_FIELD(struct ixgbe_conf, promisc),
	  .doc = "unicast and multicast promiscuous mode" },
	{ 0 },
};

static int ixgbe_check(void *obj, struct conf_check *chk)
{
	struct ixgbe_conf *c = obj;
	char canon[PCI_ADDR_SIZE];
	if (!c->dev[0] || pci_addr_canon(c->dev, canon)) {
		chk->key = c->dev[0] ? "dev" : NULL;
		snprintf(chk->msg, sizeof(chk->msg), "%s", c->dev[0] ? "expected a PCI address like 0000:03:00.0"
								     : "dev (the PCI address) is required");
		return -EINVAL;
	}
	memcpy(c->dev, canon, sizeof(canon));
	if (c->rx_desc & (c->rx_desc - 1) || c->tx_desc & (c->tx_desc - 1)) {
		chk->key = c->rx_desc & (c->rx_desc - 1) ? "rx-desc" : "tx-desc";
		snprintf(chk->msg, sizeof(chk->msg), "ring sizes must be powers of two");
		return -EINVAL;
	}
	return 0;
}

static const struct conf_driver ixgbe_conf_driver = {
	.name = "ixgbe",
	.doc = "Intel 82599/X540/X550 through vfio-pci",
	.keys = ixgbe_keys,
	.size = sizeof(struct ixgbe_conf),
	.check = ixgbe_check,
};

/* ---- state ---- */

struct ixgbe_rxq {
	alignas(64) volatile union ixgbe_rx_desc *ring;
	uint32_t *bufs;       /* buffer armed in each descriptor */
	struct pci_io *io;
	uint64_t iova_data0;  /* IOVA of buffer 0's data area; + index * stride */
	uint32_t stride;
	uint32_t mask;
	uint32_t next;        /* next descriptor to look at */
	uint32_t rdt;         /* RDT register offset */
	/* The frame being assembled across descriptors (and bursts). */
	uint32_t head, tail;
	bool drop, error;
	uint32_t fresh[IXGBE_RX_BURST_MAX];
};

struct ixgbe_txq {
	alignas(64) volatile union ixgbe_tx_desc *ring;
	uint32_t *bufs;       /* on a frame's last descriptor: its head buffer */
	struct pci_io *io;
	uint32_t mask;
	uint32_t tail;        /* next free descriptor */
	uint32_t clean;       /* oldest descriptor not yet reclaimed */
	uint32_t tdt;         /* TDT register offset */
	uint32_t done[IXGBE_TX_CLEAN_BATCH];
};

/* Clear-on-read statistics registers, accumulated. */
struct ixgbe_hw_stats {
	uint64_t gprc, gptc, gorc, gotc;
	uint64_t mpc, qprdc[IXGBE_MAX_QUEUES];
	uint64_t crcerrs, illerrc, rlec, ruc, rfc, roc, rjc;
};

struct ixgbe_dev {
	struct device dev;
	struct pci_io *io;
	struct ixgbe_rxq rxq[IXGBE_MAX_QUEUES];
	struct ixgbe_txq txq[IXGBE_MAX_QUEUES];
	uint32_t n_rx_desc, n_tx_desc;
	uint32_t max_frame;
	bool promisc;
	bool running;
	bool buffers_mapped;
	uint8_t mac[6];
	struct ixgbe_hw_stats hw;
	char addr[PCI_ADDR_SIZE];
};

static inline uint32_t rd(struct ixgbe_dev *xd, uint32_t reg)
{
	return pci_read32(xd->io, reg);
}

static inline void wr(struct ixgbe_dev *xd, uint32_t reg, uint32_t v)
{
	pci_write32(xd->io, reg, v);
}

static void set_bits(struct ixgbe_dev *xd, uint32_t reg, uint32_t bits)
{
	wr(xd, reg, rd(xd, reg) | bits);
}

static void clear_bits(struct ixgbe_dev *xd, uint32_t reg, uint32_t bits)
{
	wr(xd, reg, rd(xd, reg) & ~bits);
}

/* Poll until (reg & mask) == want; 0 or -ETIMEDOUT. */
static int wait_reg(struct ixgbe_dev *xd, uint32_t reg, uint32_t mask, uint32_t want)
{
	for (int ms = 0; ms < IXGBE_POLL_TIMEOUT_MS; ms++) {
		if ((rd(xd, reg) & mask) == want)
			return 0;
		usleep(1000);
	}
	graph_log("ixgbe", "%s: register 0x%05x did not reach 0x%x under mask 0x%x", xd->addr, reg, want, mask);
	return -ETIMEDOUT;
}

/* ---- rx ---- */

/* The frame being assembled is complete (or abandoned): hand it up or drop
 * it. Returns 1 when it goes to bi[]. */
static inline uint32_t rx_frame_end(struct device *dev, uint16_t queue, struct ixgbe_rxq *rq, uint32_t *out)
{
	uint32_t head = rq->head;
	uint32_t taken = 0;
	if (likely(!rq->drop && !rq->error)) {
		*out = head;
		taken = 1;
	} else {
		if (head != BUFFER_INVALID)
			buffer_free(&head, 1);
		stat_add(rq->error ? &dev->rxq[queue].c.rx_errors : &dev->rxq[queue].c.rx_dropped, 1);
	}
	rq->head = BUFFER_INVALID;
	rq->drop = rq->error = false;
	return taken;
}

static uint32_t ixgbe_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	struct ixgbe_rxq *rq = &xd->rxq[queue];
	volatile union ixgbe_rx_desc *ring = rq->ring;
	uint32_t mask = rq->mask, next = rq->next;
	if (n > IXGBE_RX_BURST_MAX)
		n = IXGBE_RX_BURST_MAX;

	/* How many descriptors the NIC has finished, in order. */
	uint32_t c = 0;
	while (c < n && (ring[(next + c) & mask].wb.status_error & IXGBE_RXD_STAT_DD))
		c++;
	if (!c)
		return 0;
	/* The fields below are read after DD. */
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	uint32_t got = buffer_alloc(rq->fresh, c, -1);

	uint32_t n_out = 0;
	for (uint32_t i = 0; i < c; i++) {
		uint32_t slot = (next + i) & mask;
		volatile union ixgbe_rx_desc *d = &ring[slot];
		uint64_t q0 = d->q[0], q1 = d->q[1];
		uint32_t status = (uint32_t)q1;
		uint32_t b_i = rq->bufs[slot];
		if (likely(i < got)) {
			rq->bufs[slot] = rq->fresh[i];
			struct buffer *b = buffer_get(b_i);
			b->current_length = (uint16_t)(q1 >> 32);
			if (rq->head == BUFFER_INVALID) {
				rq->head = b_i;
				if (q0 & IXGBE_RXD_RSSTYPE_MASK) {
					b->flow_hash = (uint32_t)(q0 >> 32);
					b->flags |= BUFFER_F_FLOW_HASH;
				}
			} else {
				struct buffer *t = buffer_get(rq->tail);
				t->next_buffer = b_i;
				t->flags |= BUFFER_F_NEXT_PRESENT;
				buffer_get(rq->head)->total_length_not_including_first += b->current_length;
			}
			rq->tail = b_i;
		} else {
			/* No replacement: the frame is lost, the buffer stays. */
			rq->drop = true;
		}
		if (unlikely(status & IXGBE_RXD_ERR_RXE))
			rq->error = true;
		d->read.pkt_addr = rq->iova_data0 + (uint64_t)rq->bufs[slot] * rq->stride;
		d->read.hdr_addr = 0;
		if (status & IXGBE_RXD_STAT_EOP)
			n_out += rx_frame_end(dev, queue, rq, &bi[n_out]);
	}
	rq->next = (next + c) & mask;
	/* Descriptors re-armed before the NIC may use them: one tail write
	 * naming the last descriptor handed back (facts 1.9). */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	pci_write32(rq->io, rq->rdt, (rq->next - 1) & mask);
	return n_out;
}

/* ---- tx ---- */

/* Free every batch of 32 whose last descriptor is done. */
static inline void tx_reclaim(struct ixgbe_txq *tq)
{
	uint32_t mask = tq->mask;
	while (((tq->tail - tq->clean) & mask) >= IXGBE_TX_CLEAN_BATCH) {
		uint32_t last = (tq->clean + IXGBE_TX_CLEAN_BATCH - 1) & mask;
		if (!(tq->ring[last].wb.status & IXGBE_TXD_STAT_DD))
			break;
		uint32_t k = 0;
		for (uint32_t i = 0; i < IXGBE_TX_CLEAN_BATCH; i++) {
			uint32_t slot = (tq->clean + i) & mask;
			if (tq->bufs[slot] != BUFFER_INVALID) {
				tq->done[k++] = tq->bufs[slot];
				tq->bufs[slot] = BUFFER_INVALID;
			}
		}
		if (k)
			buffer_free(tq->done, k);
		tq->clean = (tq->clean + IXGBE_TX_CLEAN_BATCH) & mask;
	}
}

/* Short of room: reclaim descriptor by descriptor what the batches left
 * (fewer than 32 outstanding, all of them possibly done). */
static void tx_reclaim_rest(struct ixgbe_txq *tq)
{
	uint32_t mask = tq->mask, k = 0;
	while (tq->clean != tq->tail && (tq->ring[tq->clean].wb.status & IXGBE_TXD_STAT_DD)) {
		if (tq->bufs[tq->clean] != BUFFER_INVALID) {
			tq->done[k++] = tq->bufs[tq->clean];
			tq->bufs[tq->clean] = BUFFER_INVALID;
			if (k == IXGBE_TX_CLEAN_BATCH) {
				buffer_free(tq->done, k);
				k = 0;
			}
		}
		tq->clean = (tq->clean + 1) & mask;
	}
	if (k)
		buffer_free(tq->done, k);
}

static uint32_t ixgbe_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	struct ixgbe_txq *tq = &xd->txq[queue];
	tx_reclaim(tq);
	uint32_t mask = tq->mask, tail = tq->tail;
	uint32_t room = mask - ((tail - tq->clean) & mask); /* one slot stays empty */
	if (unlikely(room < n)) {
		tx_reclaim_rest(tq);
		room = mask - ((tail - tq->clean) & mask);
	}
	struct pci_io *io = tq->io;
	uint32_t i;
	for (i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint32_t n_seg = 1;
		uint32_t total = b->current_length;
		if (unlikely(b->flags & BUFFER_F_NEXT_PRESENT)) {
			total += b->total_length_not_including_first;
			for (struct buffer *s = b; s->flags & BUFFER_F_NEXT_PRESENT; s = buffer_get(s->next_buffer))
				n_seg++;
		}
		if (n_seg > room)
			break;
		room -= n_seg;
		uint32_t olinfo = total << IXGBE_TXD_PAYLEN_SHIFT;
		for (struct buffer *s = b;; s = buffer_get(s->next_buffer)) {
			bool last = !(s->flags & BUFFER_F_NEXT_PRESENT);
			volatile union ixgbe_tx_desc *d = &tq->ring[tail];
			d->read.buffer_addr = pci_iova(io, buffer_data(s));
			d->read.cmd_type_len = IXGBE_TXD_DTYP_DATA | IXGBE_TXD_CMD_DEXT | IXGBE_TXD_CMD_IFCS |
					       IXGBE_TXD_CMD_RS | (last ? IXGBE_TXD_CMD_EOP : 0) | s->current_length;
			d->read.olinfo_status = olinfo;
			tq->bufs[tail] = last ? bi[i] : BUFFER_INVALID;
			tail = (tail + 1) & mask;
			if (last)
				break;
		}
	}
	if (i) {
		tq->tail = tail;
		__atomic_thread_fence(__ATOMIC_RELEASE);
		pci_write32(io, tq->tdt, tail);
	}
	return i;
}

/* ---- start / stop ---- */

static void rxq_release(struct ixgbe_dev *xd, struct ixgbe_rxq *rq)
{
	if (rq->bufs) {
		buffer_free(rq->bufs, rq->mask + 1);
		free(rq->bufs);
	}
	if (rq->head != BUFFER_INVALID)
		buffer_free(&rq->head, 1);
	pci_dma_free(xd->io, (void *)rq->ring, (rq->mask + 1) * sizeof(union ixgbe_rx_desc));
	memset(rq, 0, sizeof(*rq));
	rq->head = BUFFER_INVALID;
}

static void txq_release(struct ixgbe_dev *xd, struct ixgbe_txq *tq)
{
	if (tq->bufs) {
		for (uint32_t s = 0; s <= tq->mask; s++)
			if (tq->bufs[s] != BUFFER_INVALID)
				buffer_free(&tq->bufs[s], 1);
		free(tq->bufs);
	}
	pci_dma_free(xd->io, (void *)tq->ring, (tq->mask + 1) * sizeof(union ixgbe_tx_desc));
	memset(tq, 0, sizeof(*tq));
}

/* Ring, registers and a full set of buffers for rx queue q (facts 1.8 step
 * 9 and 11); the queue is enabled and its tail written. */
static int rxq_start(struct ixgbe_dev *xd, uint16_t q)
{
	struct ixgbe_rxq *rq = &xd->rxq[q];
	uint32_t n = xd->n_rx_desc;
	size_t ring_bytes = n * sizeof(union ixgbe_rx_desc);
	rq->head = BUFFER_INVALID;
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
	clear_bits(xd, IXGBE_DCA_RXCTRL(q), IXGBE_DCA_RXCTRL_BIT12);
	wr(xd, IXGBE_RDH(q), 0);
	wr(xd, IXGBE_RDT(q), 0);
	set_bits(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE);
	if (wait_reg(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE, IXGBE_RXDCTL_ENABLE))
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
	tq->mask = n - 1;
	tq->tdt = IXGBE_TDT(q);
	tq->ring = pci_dma_alloc(xd->io, ring_bytes);
	tq->bufs = malloc(n * sizeof(uint32_t));
	if (!tq->ring || !tq->bufs)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++)
		tq->bufs[i] = BUFFER_INVALID;
	uint64_t iova = pci_iova(xd->io, (const void *)tq->ring);
	wr(xd, IXGBE_TDBAL(q), (uint32_t)iova);
	wr(xd, IXGBE_TDBAH(q), (uint32_t)(iova >> 32));
	wr(xd, IXGBE_TDLEN(q), (uint32_t)ring_bytes);
	wr(xd, IXGBE_TDH(q), 0);
	wr(xd, IXGBE_TDT(q), 0);
	/* PTHRESH 36, HTHRESH 8 as ixy; WTHRESH 0: every RS descriptor is
	 * written back at once, which the batched DD check relies on. */
	wr(xd, IXGBE_TXDCTL(q), 36 | 8 << 8);
	set_bits(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE);
	return wait_reg(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE, IXGBE_TXDCTL_ENABLE);
}

static void ixgbe_stop(struct device *dev)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	if (!xd->running)
		return;
	clear_bits(xd, IXGBE_RXCTRL, IXGBE_RXCTRL_RXEN);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
		if (xd->rxq[q].ring) {
			clear_bits(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE);
			wait_reg(xd, IXGBE_RXDCTL(q), IXGBE_RXDCTL_ENABLE, 0);
		}
		rxq_release(xd, &xd->rxq[q]);
	}
	for (uint16_t q = 0; q < dev->n_tx_queues; q++) {
		if (xd->txq[q].ring) {
			clear_bits(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE);
			wait_reg(xd, IXGBE_TXDCTL(q), IXGBE_TXDCTL_ENABLE, 0);
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
	set_bits(xd, IXGBE_DMATXCTL, IXGBE_DMATXCTL_TE);
	for (uint16_t q = 0; q < dev->n_tx_queues && !rc; q++)
		rc = txq_start(xd, q);
	for (uint16_t q = 0; q < dev->n_rx_queues && !rc; q++)
		rc = rxq_start(xd, q);
	if (rc) {
		graph_log("ixgbe", "%s: start failed: %s", xd->addr, strerror(-rc));
		ixgbe_stop(dev);
		return rc;
	}
	set_bits(xd, IXGBE_RXCTRL, IXGBE_RXCTRL_RXEN);
	return 0;
}

/* ---- link, statistics ---- */

static void ixgbe_link(struct device *dev, struct dev_link *link)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	uint32_t v = rd(xd, IXGBE_LINKS);
	static const uint32_t speeds[4] = { 0, 100, 1000, 10000 };
	link->up = (v & IXGBE_LINKS_UP) != 0;
	link->full_duplex = link->up;
	link->speed_mbps = link->up ? speeds[(v & IXGBE_LINKS_SPEED_MASK) >> IXGBE_LINKS_SPEED_SHIFT] : 0;
}

/* Read every clear-on-read counter we keep into the running totals. */
static void hw_stats_update(struct ixgbe_dev *xd)
{
	struct ixgbe_hw_stats *h = &xd->hw;
	h->gprc += rd(xd, IXGBE_GPRC);
	h->gptc += rd(xd, IXGBE_GPTC);
	h->gorc += rd(xd, IXGBE_GORCL);
	h->gorc += (uint64_t)rd(xd, IXGBE_GORCH) << 32; /* low first, then high */
	h->gotc += rd(xd, IXGBE_GOTCL);
	h->gotc += (uint64_t)rd(xd, IXGBE_GOTCH) << 32;
	for (uint32_t i = 0; i < 8; i++)
		h->mpc += rd(xd, IXGBE_MPC(i));
	for (uint16_t q = 0; q < xd->dev.n_rx_queues; q++)
		h->qprdc[q] += rd(xd, IXGBE_QPRDC(q));
	h->crcerrs += rd(xd, IXGBE_CRCERRS);
	h->illerrc += rd(xd, IXGBE_ILLERRC);
	h->rlec += rd(xd, IXGBE_RLEC);
	h->ruc += rd(xd, IXGBE_RUC);
	h->rfc += rd(xd, IXGBE_RFC);
	h->roc += rd(xd, IXGBE_ROC);
	h->rjc += rd(xd, IXGBE_RJC);
}

static void ixgbe_stats(struct device *dev, struct dev_counters *c)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	hw_stats_update(xd);
	const struct ixgbe_hw_stats *h = &xd->hw;
	c->rx_dropped += h->mpc;
	for (uint16_t q = 0; q < IXGBE_MAX_QUEUES; q++)
		c->rx_dropped += h->qprdc[q];
	c->rx_errors += h->crcerrs + h->illerrc + h->rlec + h->ruc + h->rfc + h->roc + h->rjc;
}

/*
 * sluice> show nic xe0
 * xe0: ixgbe 0000:03:00.0 8086:10fb, mac 02:00:00:00:00:01
 *   link up 10000 Mb/s, promisc on, max frame 1518
 *   rx queue 0: RDH 17 RDT 16 next 17, missed-by-queue 0
 *   tx queue 0: TDH 40 TDT 40 clean 32
 *   hw: GPRC 1000 GPTC 1000 GORC 64000 GOTC 64000 MPC 0 CRCERRS 0 RLEC 0 ROC 0
 */
static int ixgbe_format_hw(struct device *dev, char *buf, size_t len)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	struct dev_link link;
	ixgbe_link(dev, &link);
	hw_stats_update(xd);
	size_t o = 0;
#define OUT(...) o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__)
	OUT("%s: ixgbe %s %04x:%04x, mac %02x:%02x:%02x:%02x:%02x:%02x\n", dev->name, xd->addr, xd->io->vendor,
	    xd->io->device, xd->mac[0], xd->mac[1], xd->mac[2], xd->mac[3], xd->mac[4], xd->mac[5]);
	OUT("  link %s %u Mb/s, promisc %s, max frame %u, %s\n", link.up ? "up" : "down", link.speed_mbps,
	    xd->promisc ? "on" : "off", xd->max_frame, xd->running ? "running" : "stopped");
	for (uint16_t q = 0; q < dev->n_rx_queues; q++)
		OUT("  rx queue %u: RDH %u RDT %u next %u, drops %" PRIu64 "\n", q, rd(xd, IXGBE_RDH(q)),
		    rd(xd, IXGBE_RDT(q)), xd->rxq[q].next, xd->hw.qprdc[q]);
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		OUT("  tx queue %u: TDH %u TDT %u clean %u\n", q, rd(xd, IXGBE_TDH(q)), rd(xd, IXGBE_TDT(q)),
		    xd->txq[q].clean);
	const struct ixgbe_hw_stats *h = &xd->hw;
	OUT("  hw: GPRC %" PRIu64 " GPTC %" PRIu64 " GORC %" PRIu64 " GOTC %" PRIu64 " MPC %" PRIu64
	    " CRCERRS %" PRIu64 " RLEC %" PRIu64 " ROC %" PRIu64 "\n",
	    h->gprc, h->gptc, h->gorc, h->gotc, h->mpc, h->crcerrs, h->rlec, h->roc);
#undef OUT
	return (int)o;
}

/* ---- bring-up ---- */

static void irq_disable(struct ixgbe_dev *xd)
{
	wr(xd, IXGBE_EIMC, 0xFFFFFFFF);
	(void)rd(xd, IXGBE_EICR);
}

/* Facts 1.8 steps 1..10 and the RSS set-up: everything but the queues. */
static int reset_and_init(struct ixgbe_dev *xd, uint32_t n_rx)
{
	irq_disable(xd);
	wr(xd, IXGBE_CTRL, IXGBE_CTRL_RST_MASK);
	if (wait_reg(xd, IXGBE_CTRL, IXGBE_CTRL_RST_MASK, 0))
		return -ETIMEDOUT;
	usleep(10000);
	irq_disable(xd);
	if (wait_reg(xd, IXGBE_EEC, IXGBE_EEC_ARD, IXGBE_EEC_ARD) ||
	    wait_reg(xd, IXGBE_RDRXCTL, IXGBE_RDRXCTL_DMAIDONE, IXGBE_RDRXCTL_DMAIDONE))
		return -ETIMEDOUT;
	uint32_t ral = rd(xd, IXGBE_RAL(0)), rah = rd(xd, IXGBE_RAH(0));
	for (int i = 0; i < 4; i++)
		xd->mac[i] = (uint8_t)(ral >> (8 * i));
	xd->mac[4] = (uint8_t)rah;
	xd->mac[5] = (uint8_t)(rah >> 8);
	memcpy(xd->dev.mac, xd->mac, sizeof(xd->mac)); /* the interface's address (L3) */

	/* Link (4.6.4): 10G serial, XAUI PMA/PMD, restart auto-negotiation. */
	uint32_t autoc = rd(xd, IXGBE_AUTOC);
	autoc = (autoc & ~(IXGBE_AUTOC_LMS_MASK | IXGBE_AUTOC_10G_PMA_PMD_MASK)) | IXGBE_AUTOC_LMS_10G_SERIAL;
	wr(xd, IXGBE_AUTOC, autoc);
	wr(xd, IXGBE_AUTOC, autoc | IXGBE_AUTOC_AN_RESTART);

	hw_stats_update(xd); /* clear-on-read: start from zero */
	memset(&xd->hw, 0, sizeof(xd->hw));

	/* rx (4.6.7): one 128 KB packet buffer, CRC stripped, broadcast in. */
	clear_bits(xd, IXGBE_RXCTRL, IXGBE_RXCTRL_RXEN);
	wr(xd, IXGBE_RXPBSIZE(0), 128u << 10);
	for (uint32_t i = 1; i < 8; i++)
		wr(xd, IXGBE_RXPBSIZE(i), 0);
	set_bits(xd, IXGBE_HLREG0, IXGBE_HLREG0_RXCRCSTRP);
	set_bits(xd, IXGBE_RDRXCTL, IXGBE_RDRXCTL_CRCSTRIP);
	set_bits(xd, IXGBE_FCTRL, IXGBE_FCTRL_BAM);
	if (xd->max_frame > 1518)
		set_bits(xd, IXGBE_HLREG0, IXGBE_HLREG0_JUMBOEN);
	wr(xd, IXGBE_MAXFRS, xd->max_frame << 16);
	set_bits(xd, IXGBE_CTRL_EXT, IXGBE_CTRL_EXT_NS_DIS);

	/* tx (4.6.8): CRC and padding by the MAC, one 40 KB packet buffer. */
	set_bits(xd, IXGBE_HLREG0, IXGBE_HLREG0_TXCRCEN | IXGBE_HLREG0_TXPADEN);
	wr(xd, IXGBE_TXPBSIZE(0), 40u << 10);
	for (uint32_t i = 1; i < 8; i++)
		wr(xd, IXGBE_TXPBSIZE(i), 0);
	wr(xd, IXGBE_DTXMXSZRQ, 0xFFFF);
	clear_bits(xd, IXGBE_RTTDCS, IXGBE_RTTDCS_ARBDIS);

	/* RSS: key, RETA round robin over the rx queues, then MRQC (before RXEN). */
	if (n_rx > 1) {
		for (uint32_t i = 0; i < 10; i++)
			wr(xd, IXGBE_RSSRK(i),
			   (uint32_t)ixgbe_rss_key[4 * i] | (uint32_t)ixgbe_rss_key[4 * i + 1] << 8 |
				   (uint32_t)ixgbe_rss_key[4 * i + 2] << 16 | (uint32_t)ixgbe_rss_key[4 * i + 3] << 24);
		for (uint32_t r = 0; r < IXGBE_RETA_ENTRIES / 4; r++) {
			uint32_t v = 0;
			for (uint32_t j = 0; j < 4; j++)
				v |= ((4 * r + j) % n_rx) << (8 * j);
			wr(xd, IXGBE_RETA(r), v);
		}
		wr(xd, IXGBE_MRQC,
		   IXGBE_MRQC_RSSEN | IXGBE_MRQC_TCPIPV4 | IXGBE_MRQC_IPV4 | IXGBE_MRQC_UDPIPV4 | IXGBE_MRQC_IPV6 |
			   IXGBE_MRQC_TCPIPV6 | IXGBE_MRQC_UDPIPV6);
	}
	if (xd->promisc)
		set_bits(xd, IXGBE_FCTRL, IXGBE_FCTRL_MPE | IXGBE_FCTRL_UPE);
	return 0;
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

static const struct device_ops ixgbe_ops = {
	.start = ixgbe_start,
	.stop = ixgbe_stop,
	.rx_burst = ixgbe_rx_burst,
	.tx_burst = ixgbe_tx_burst,
	.link = ixgbe_link,
	.stats = ixgbe_stats,
	.destroy = ixgbe_destroy,
};

static struct device *ixgbe_create(const void *conf, char *err, size_t errlen)
{
	const struct ixgbe_conf *c = conf;
	if (buffer_main.data_size < 1024) {
		snprintf(err, errlen, "ixgbe: buffers of %u data bytes are smaller than the NIC's 1 KB unit",
			 buffer_main.data_size);
		return NULL;
	}
	struct ixgbe_dev *xd = aligned_alloc(64, ROUND_UP(sizeof(*xd), 64));
	if (!xd) {
		snprintf(err, errlen, "ixgbe: out of memory");
		return NULL;
	}
	memset(xd, 0, sizeof(*xd));
	xd->dev.ops = &ixgbe_ops;
	xd->dev.n_rx_queues = (uint16_t)c->rx_queues;
	xd->dev.n_tx_queues = (uint16_t)c->tx_queues;
	xd->dev.mtu = (uint16_t)c->mtu;
	xd->n_rx_desc = c->rx_desc;
	xd->n_tx_desc = c->tx_desc;
	xd->max_frame = c->mtu + 18;
	xd->promisc = c->promisc;
	for (uint16_t q = 0; q < IXGBE_MAX_QUEUES; q++)
		xd->rxq[q].head = BUFFER_INVALID;
	if (pci_addr_canon(c->dev, xd->addr)) {
		snprintf(err, errlen, "ixgbe: '%s' is not a PCI address", c->dev);
		goto fail;
	}
	if (pci_claimed_by(xd->addr)) {
		snprintf(err, errlen, "ixgbe: %s is already used by %s", xd->addr, pci_claimed_by(xd->addr)->name);
		goto fail;
	}
	char why[512];
	xd->io = pci_io_open(xd->addr, "ixgbe", why, sizeof(why));
	if (!xd->io) {
		snprintf(err, errlen, "ixgbe: %s", why);
		goto fail;
	}
	pci_claim(xd->addr, &xd->dev);
	int rc = pci_dma_map_buffers(xd->io);
	if (rc) {
		snprintf(err, errlen, "ixgbe: %s: cannot map the buffer pools for DMA: %s", xd->addr, strerror(-rc));
		goto fail;
	}
	xd->buffers_mapped = true;
	if (reset_and_init(xd, c->rx_queues)) {
		snprintf(err, errlen, "ixgbe: %s: the NIC did not come out of reset", xd->addr);
		goto fail;
	}
	return &xd->dev;
fail:
	ixgbe_destroy(&xd->dev);
	return NULL;
}

static const struct dev_driver ixgbe_driver = {
	.name = "ixgbe",
	.conf = &ixgbe_conf_driver,
	.create = ixgbe_create,
};
DEV_DRIVER_REGISTER(ixgbe_driver)

/* Facts 1.1: the 82599, X540 and X550 physical functions. */
static const struct pci_id ixgbe_ids[] = {
	{ 0x8086, 0x10FB, "82599 SFP+" },      { 0x8086, 0x10F7, "82599 KX4" },
	{ 0x8086, 0x10F8, "82599 combo backplane" }, { 0x8086, 0x10F9, "82599 CX4" },
	{ 0x8086, 0x10FC, "82599 XAUI" },      { 0x8086, 0x151C, "82599 T3" },
	{ 0x8086, 0x1507, "82599 SFP EM" },    { 0x8086, 0x154D, "82599 SFP SF2" },
	{ 0x8086, 0x1557, "82599EN SFP" },     { 0x8086, 0x1529, "82599 SFP FCoE" },
	{ 0x8086, 0x152A, "82599 backplane FCoE" }, { 0x8086, 0x1528, "X540-T" },
	{ 0x8086, 0x1560, "X540-T1" },         { 0x8086, 0x1563, "X550-T" },
	{ 0x8086, 0x15D1, "X550-T1" },         { 0x8086, 0x15AA, "X550EM_x KX4" },
	{ 0x8086, 0x15AB, "X550EM_x KR" },     { 0x8086, 0x15AC, "X550EM_x SFP" },
	{ 0x8086, 0x15AD, "X550EM_x 10G-T" },  { 0x8086, 0x15AE, "X550EM_x 1G-T" },
	{ 0, 0, NULL },
};

static const struct pci_driver ixgbe_pci_driver = {
	.name = "ixgbe",
	.ids = ixgbe_ids,
	.format_hw = ixgbe_format_hw,
};
PCI_DRIVER_REGISTER(ixgbe_pci_driver)
