/* The ixgbe driver: Intel 82599, polled, multi-queue, from
 * user space through a struct pci_io (vfio-pci, or a device model in tests).
 *
 *   xe0 { driver ixgbe  dev 0000:03:00.0  rx-queues 2  rx-desc 1024  tx-desc 1024 }
 *
 * Create resets and initialises the NIC in the 82599 datasheet's order (section 4.6):
 * interrupts off, global reset, EEPROM and DMA-init waits, 10G serial link
 * with auto-negotiation restarted, statistics cleared, rx and tx global
 * setup, RSS (key, RETA round robin over the rx queues, MRQC) when there is
 * more than one rx queue, promiscuous mode. Start sets up the rings (advanced
 * one-buffer rx descriptors with DROP_EN, advanced tx data descriptors),
 * fills every rx descriptor, enables the queues and receive; stop disables
 * them and takes every buffer back.
 *
 * The datapath (rx/tx bursts, rings, link, statistics) is in ixgbe.c.
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

#include "drivers/ixgbe/ixgbe_private.h"
#include "drivers/pci/pci_clock.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* 82599 datasheet 7.1.2.8.3: the Microsoft default key. */
static const uint8_t ixgbe_rss_key[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/* ---- configuration ---- */

static const struct conf_key ixgbe_keys[] = PCI_NIC_KEYS(IXGBE_MAX_QUEUES, IXGBE_MAX_FRAME_HW);

static const struct conf_driver ixgbe_conf_driver = {
	.name = "ixgbe",
	.doc = "Intel 82599 through vfio-pci",
	.keys = ixgbe_keys,
	.size = sizeof(struct pci_nic_conf),
	.check = pci_nic_conf_check,
};

/* ---- registers ---- */

void ixgbe_set_bits(struct ixgbe_dev *xd, uint32_t reg, uint32_t bits)
{
	wr(xd, reg, rd(xd, reg) | bits);
}

void ixgbe_clear_bits(struct ixgbe_dev *xd, uint32_t reg, uint32_t bits)
{
	wr(xd, reg, rd(xd, reg) & ~bits);
}

int ixgbe_wait_reg(struct ixgbe_dev *xd, uint32_t reg, uint32_t mask, uint32_t want, const char *what)
{
	if (!pci_wait_reg(xd->io, reg, mask, want, IXGBE_POLL_TIMEOUT_MS * 1000u, IXGBE_POLL_STEP_US))
		return 0;
	snprintf(xd->wait_err, sizeof(xd->wait_err), "%s not done after %u ms (register 0x%05x, mask 0x%x, want 0x%x)",
		 what, IXGBE_POLL_TIMEOUT_MS, reg, mask, want);
	base_log("ixgbe", "%s: %s", xd->addr, xd->wait_err);
	return -ETIMEDOUT;
}

/* Read every clear-on-read counter we keep into the running totals. */
void ixgbe_hw_stats_update(struct ixgbe_dev *xd)
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


/*
 * sluice> show nic xe0
 * xe0: ixgbe 0000:03:00.0 8086:10fb, mac 02:00:00:00:00:01
 *   link up 10000 Mb/s, promisc on, max frame 1518
 *   rings: 1024 rx, 1024 tx descriptors per queue
 *   rx queue 0: RDH 17 RDT 16 next 17, missed-by-queue 0
 *   tx queue 0: TDH 40 TDT 40 clean 32
 *   hw: GPRC 1000 GPTC 1000 GORC 64000 GOTC 64000 MPC 0 CRCERRS 0 RLEC 0 ROC 0
 */
int ixgbe_format_hw(struct device *dev, char *buf, size_t len)
{
	struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
	struct dev_link link;
	ixgbe_link(dev, &link);
	ixgbe_hw_stats_update(xd);
	size_t o = 0;
#define OUT(...) o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__)
	OUT("%s: ixgbe %s %04x:%04x, mac %02x:%02x:%02x:%02x:%02x:%02x\n", dev->name, xd->addr, xd->io->vendor,
	    xd->io->device, xd->mac[0], xd->mac[1], xd->mac[2], xd->mac[3], xd->mac[4], xd->mac[5]);
	OUT("  link %s %u Mb/s, promisc %s, max frame %u, %s\n", link.up ? "up" : "down", link.speed_mbps,
	    xd->promisc ? "on" : "off", xd->max_frame, xd->running ? "running" : "stopped");
	OUT("  rings: %u rx, %u tx descriptors per queue\n", xd->n_rx_desc, xd->n_tx_desc);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++)
		OUT("  rx queue %u: RDH %u RDT %u next %u, drops %" PRIu64 "\n", q, rd(xd, IXGBE_RDH(q)),
		    rd(xd, IXGBE_RDT(q)), xd->rxq[q].next, xd->hw.qprdc[q]);
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		OUT("  tx queue %u: TDH %u TDT %u clean %u\n", q, rd(xd, IXGBE_TDH(q)), rd(xd, IXGBE_TDT(q)),
		    xd->txq[q].slots.clean);
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

/* The initialization sequence (82599 datasheet 4.6; docs/nic.md 2.2 lists
 * the steps) and the RSS set-up: everything but the queues. */
static int reset_and_init(struct ixgbe_dev *xd, uint32_t n_rx)
{
	irq_disable(xd);
	wr(xd, IXGBE_CTRL, IXGBE_CTRL_RST_MASK);
	/* Nothing but CTRL may be touched until RST and LNK_RST self-clear,
	 * then the EEPROM auto-read (EEC.ARD) and the DMA initialisation
	 * (RDRXCTL.DMAIDONE) must be done before any other register is
	 * programmed (82599 datasheet 4.6.3, 4.6.3.2). Each wait is bounded
	 * (IXGBE_POLL_TIMEOUT_MS) on the injectable clock (pci_clock.h). */
	if (ixgbe_wait_reg(xd, IXGBE_CTRL, IXGBE_CTRL_RST_MASK, 0, "device reset (CTRL.RST, CTRL.LNK_RST)"))
		return -ETIMEDOUT;
	pci_clock_sleep_us(10000);
	irq_disable(xd);
	if (ixgbe_wait_reg(xd, IXGBE_EEC, IXGBE_EEC_ARD, IXGBE_EEC_ARD, "EEPROM auto-read (EEC.ARD)") ||
	    ixgbe_wait_reg(xd, IXGBE_RDRXCTL, IXGBE_RDRXCTL_DMAIDONE, IXGBE_RDRXCTL_DMAIDONE,
			   "DMA initialisation (RDRXCTL.DMAIDONE)"))
		return -ETIMEDOUT;
	uint32_t ral = rd(xd, IXGBE_RAL(0)), rah = rd(xd, IXGBE_RAH(0));
	for (int i = 0; i < 4; i++)
		xd->mac[i] = (uint8_t)(ral >> (8 * i));
	xd->mac[4] = (uint8_t)rah;
	xd->mac[5] = (uint8_t)(rah >> 8);
	memcpy(xd->dev.mac, xd->mac, sizeof(xd->mac)); /* the interface's address (L3) */

	/* Link (82599 datasheet 4.6.4): 10G serial, XAUI PMA/PMD, restart auto-negotiation. */
	uint32_t autoc = rd(xd, IXGBE_AUTOC);
	autoc = (autoc & ~(IXGBE_AUTOC_LMS_MASK | IXGBE_AUTOC_10G_PMA_PMD_MASK)) | IXGBE_AUTOC_LMS_10G_SERIAL;
	wr(xd, IXGBE_AUTOC, autoc);
	wr(xd, IXGBE_AUTOC, autoc | IXGBE_AUTOC_AN_RESTART);

	ixgbe_hw_stats_update(xd); /* clear-on-read: start from zero */
	memset(&xd->hw, 0, sizeof(xd->hw));

	/* rx (82599 datasheet 4.6.7): one 128 KB packet buffer, CRC stripped, broadcast in. */
	ixgbe_clear_bits(xd, IXGBE_RXCTRL, IXGBE_RXCTRL_RXEN);
	wr(xd, IXGBE_RXPBSIZE(0), 128u << 10);
	for (uint32_t i = 1; i < 8; i++)
		wr(xd, IXGBE_RXPBSIZE(i), 0);
	ixgbe_set_bits(xd, IXGBE_HLREG0, IXGBE_HLREG0_RXCRCSTRP);
	ixgbe_set_bits(xd, IXGBE_RDRXCTL, IXGBE_RDRXCTL_CRCSTRIP);
	ixgbe_set_bits(xd, IXGBE_FCTRL, IXGBE_FCTRL_BAM);
	if (xd->max_frame > 1518)
		ixgbe_set_bits(xd, IXGBE_HLREG0, IXGBE_HLREG0_JUMBOEN);
	wr(xd, IXGBE_MAXFRS, xd->max_frame << 16);
	ixgbe_set_bits(xd, IXGBE_CTRL_EXT, IXGBE_CTRL_EXT_NS_DIS);

	/* tx (82599 datasheet 4.6.8): CRC and padding by the MAC, one 40 KB packet buffer. */
	ixgbe_set_bits(xd, IXGBE_HLREG0, IXGBE_HLREG0_TXCRCEN | IXGBE_HLREG0_TXPADEN);
	wr(xd, IXGBE_TXPBSIZE(0), 40u << 10);
	for (uint32_t i = 1; i < 8; i++)
		wr(xd, IXGBE_TXPBSIZE(i), 0);
	wr(xd, IXGBE_DTXMXSZRQ, 0xFFFF);
	ixgbe_clear_bits(xd, IXGBE_RTTDCS, IXGBE_RTTDCS_ARBDIS);

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
		ixgbe_set_bits(xd, IXGBE_FCTRL, IXGBE_FCTRL_MPE | IXGBE_FCTRL_UPE);
	return 0;
}

static struct device *ixgbe_create(const void *conf, char *err, size_t errlen)
{
	const struct pci_nic_conf *c = conf;
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
	xd->n_rx_desc = c->rx_desc;
	xd->n_tx_desc = c->tx_desc;
	xd->max_frame = c->mtu + 18;
	xd->promisc = c->promisc;
	for (uint16_t q = 0; q < IXGBE_MAX_QUEUES; q++)
		rx_chain_reset(&xd->rxq[q].chain);
	if (pci_nic_conf_apply(c, "ixgbe", &xd->dev, xd->addr, err, errlen))
		goto fail;
	xd->io = pci_nic_open(xd->addr, "ixgbe", &xd->dev, err, errlen);
	if (!xd->io)
		goto fail;
	int rc = pci_dma_map_buffers(xd->io);
	if (rc) {
		snprintf(err, errlen, "ixgbe: %s: cannot map the buffer pools for DMA: %s", xd->addr, strerror(-rc));
		goto fail;
	}
	xd->buffers_mapped = true;
	if (reset_and_init(xd, c->rx_queues)) {
		snprintf(err, errlen, "ixgbe: %s: the NIC did not come out of reset: %s", xd->addr, xd->wait_err);
		goto fail;
	}
	ixgbe_irq_open(xd);
	return &xd->dev;
fail:
	ixgbe_ops.destroy(&xd->dev);
	return NULL;
}

static const struct dev_driver ixgbe_driver = {
	.name = "ixgbe",
	.conf = &ixgbe_conf_driver,
	.create = ixgbe_create,
};
DEV_DRIVER_REGISTER(ixgbe_driver)

/* The 82599 SFP+ physical functions (device IDs as DPDK's ixgbe_type.h
 * lists them). Only these: the bring-up selects the 10 Gb/s serial (SFI)
 * link mode (AUTOC.LMS 011b, 82599 datasheet 4.6.4), which is the SFP+
 * ports'. The KX4/KR backplane (10F7, 10F8, 152A), CX4 (10F9) and XAUI
 * (10FC) ports need other link modes and the T3 (151C) an external PHY's
 * set-up, and the X540 and X550 bring their link up through their PHY:
 * this driver would bring them up wrong, so it does not claim them
 * (docs/nic.md 2.1). */
static const struct pci_id ixgbe_ids[] = {
	{ 0x8086, 0x10FB, "82599 SFP+" },      { 0x8086, 0x1507, "82599 SFP EM" },
	{ 0x8086, 0x154D, "82599 SFP SF2" },   { 0x8086, 0x1557, "82599EN SFP" },
	{ 0x8086, 0x1529, "82599 SFP FCoE" },
	{ 0, 0, NULL },
};

static const struct pci_driver ixgbe_pci_driver = {
	.name = "ixgbe",
	.ids = ixgbe_ids,
	.format_hw = ixgbe_format_hw,
};
PCI_DRIVER_REGISTER(ixgbe_pci_driver)
