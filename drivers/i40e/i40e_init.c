/* The i40e driver: Intel X710 / XL710 physical functions, polled,
 * multi-queue, from user space through a struct pci_io (vfio-pci, or a
 * device model in tests).
 *
 *   xl0 { driver i40e  dev 0000:05:00.0  rx-queues 4  rx-desc 1024  tx-desc 1024 }
 *
 * Frames up to mtu + 18 bytes (the MAC's max frame and the rx queues'
 * rxmax); a frame longer than one buffer arrives over several descriptors
 * and becomes a buffer chain, and a chain goes out one descriptor per
 * buffer.
 *
 * Create brings the PF up in the order DPDK's i40e PF start-up uses (eth_i40e_dev_init): wait out a
 * global reset and the firmware's configuration, PF software reset,
 * interrupts off, admin queue, get version (retried while firmware is busy,
 * newer API majors refused), clear PXE mode, function capabilities (queue
 * count, base queue, RSS LUT size), HMC for the LAN queue contexts (one
 * direct segment), MAC address, the main VSI (switch config, VSI
 * parameters, TC0 over our queues, its queue-set handle), MAC config with
 * CRC, link status with link events on, promiscuous mode, and RSS (Toeplitz
 * key, LUT round robin over the rx queues, hashed PCTYPEs) when there is
 * more than one rx queue. Start writes the queue contexts and enables the
 * queues with the enable handshake's waits (docs/nic.md 3.7; i40e.c); stop
 * disables them.
 *
 * Port counters are free running: the values at bring-up are the zero, and
 * stats() folds drops (RDPC) into RX-dropped and MAC errors into RX-errors.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/i40e/i40e_private.h"
#include "drivers/pci/pci_clock.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* The Microsoft default RSS key (82599 datasheet 7.1.2.8.3), then 12 more bytes: the XL710 key is 52 bytes,
 * and only the first n + 4 (40 for IPv6 with ports) reach the hash. */
static const uint8_t i40e_rss_key[I40E_RSS_KEY_SIZE] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d, 0x43, 0xa3,
	0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb, 0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3,
	0x80, 0x30, 0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa, 0x6d, 0x5a,
	0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67, 0x25, 0x3d,
};

/* ---- configuration ---- */

static const struct conf_key i40e_keys[] = PCI_NIC_KEYS(I40E_MAX_QUEUES, I40E_MAX_FRAME_HW);

static const struct conf_driver i40e_conf_driver = {
	.name = "i40e",
	.doc = "Intel X710/XL710 through vfio-pci",
	.keys = i40e_keys,
	.size = sizeof(struct pci_nic_conf),
	.check = pci_nic_conf_check,
};

/* ---- registers, contexts, counters ---- */

int i40e_wait_reg(struct i40e_dev *id, uint32_t reg, uint32_t mask, uint32_t want, uint32_t timeout_ms,
		  const char *what)
{
	if (!pci_wait_reg(id->io, reg, mask, want, timeout_ms * 1000u, I40E_POLL_STEP_US))
		return 0;
	snprintf(id->wait_err, sizeof(id->wait_err), "%s not done after %u ms (register 0x%08x, mask 0x%x, want 0x%x)",
		 what, timeout_ms, reg, mask, want);
	base_log("i40e", "%s: %s", id->addr, id->wait_err);
	return -ETIMEDOUT;
}

void i40e_ctx_set(uint8_t *ctx, uint32_t lsb, uint32_t width, uint64_t value)
{
	for (uint32_t i = 0; i < width; i++) {
		uint32_t bit = lsb + i;
		uint8_t m = (uint8_t)(1u << (bit % 8));
		if ((value >> i) & 1)
			ctx[bit / 8] |= m;
		else
			ctx[bit / 8] &= (uint8_t)~m;
	}
}

static uint64_t rd48(struct i40e_dev *id, uint32_t lo, uint32_t hi)
{
	uint64_t l = rd(id, lo);
	return l | (uint64_t)(rd(id, hi) & 0xFFFF) << 32;
}

/* The port counters as they stand. */
static void hw_stats_read(struct i40e_dev *id, struct i40e_hw_stats *h)
{
	uint32_t p = id->port;
	h->gorc = rd48(id, I40E_GLPRT_GORCL(p), I40E_GLPRT_GORCH(p));
	h->uprc = rd48(id, I40E_GLPRT_UPRCL(p), I40E_GLPRT_UPRCH(p));
	h->gotc = rd48(id, I40E_GLPRT_GOTCL(p), I40E_GLPRT_GOTCH(p));
	h->uptc = rd48(id, I40E_GLPRT_UPTCL(p), I40E_GLPRT_UPTCH(p));
	h->rdpc = rd(id, I40E_GLPRT_RDPC(p));
	h->crcerrs = rd(id, I40E_GLPRT_CRCERRS(p));
	h->rlec = rd(id, I40E_GLPRT_RLEC(p));
	h->illerrc = rd(id, I40E_GLPRT_ILLERRC(p));
	h->ruc = rd(id, I40E_GLPRT_RUC(p));
	h->roc = rd(id, I40E_GLPRT_ROC(p));
}

#define I40E_MASK48 (((uint64_t)1 << 48) - 1)
#define I40E_MASK32 0xFFFFFFFFull

void i40e_hw_stats_update(struct i40e_dev *id)
{
	struct i40e_hw_stats now, *t = &id->hw, *l = &id->hw_last;
	hw_stats_read(id, &now);
#define ADD(f, mask) t->f += (now.f - l->f) & (mask)
	ADD(gorc, I40E_MASK48), ADD(uprc, I40E_MASK48), ADD(gotc, I40E_MASK48), ADD(uptc, I40E_MASK48);
	ADD(rdpc, I40E_MASK32), ADD(crcerrs, I40E_MASK32), ADD(rlec, I40E_MASK32), ADD(illerrc, I40E_MASK32);
	ADD(ruc, I40E_MASK32), ADD(roc, I40E_MASK32);
#undef ADD
	*l = now;
}

/*
 * sluice> show hardware xl0
 * ...
 *   xl0: i40e 0000:05:00.0 8086:1583, mac 02:00:00:00:00:20, fw 9.20 api 1.15
 *   link up 40000 Mb/s, promisc on, max frame 1518, pf 0 port 0, vsi seid 512 qs 7, running
 *   rings: 1024 rx, 1024 tx descriptors per queue
 *   rx queue 0: QRX_TAIL 1023 ENA 0x5 next 0
 *   tx queue 0: QTX_HEAD 0 QTX_TAIL 0 ENA 0x5 clean 0
 *   hw: GORC 0 UPRC 0 GOTC 0 UPTC 0 RDPC 0 CRCERRS 0 ILLERRC 0 RLEC 0 RUC 0 ROC 0
 * (the rx head lives in the queue context, not in a register; RDPC is the
 * port's rx drops, counted since bring-up)
 */
int i40e_format_hw(struct device *dev, char *buf, size_t len)
{
	struct i40e_dev *id = container_of(dev, struct i40e_dev, dev);
	struct dev_link link;
	i40e_link(dev, &link);
	i40e_hw_stats_update(id);
	size_t o = 0;
#define OUT(...) o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__)
	OUT("%s: i40e %s %04x:%04x, mac %02x:%02x:%02x:%02x:%02x:%02x, fw %u.%u api %u.%u\n", dev->name, id->addr,
	    id->io->vendor, id->io->device, id->mac[0], id->mac[1], id->mac[2], id->mac[3], id->mac[4], id->mac[5],
	    id->fw_major, id->fw_minor, id->api_major, id->api_minor);
	OUT("  link %s %u Mb/s, promisc %s, max frame %u, pf %u port %u, vsi seid %u qs %u, %s\n",
	    link.up ? "up" : "down", link.speed_mbps, id->promisc ? "on" : "off", id->max_frame, id->pf_id, id->port,
	    id->vsi_seid, id->qs_handle, id->running ? "running" : "stopped");
	OUT("  rings: %u rx, %u tx descriptors per queue\n", id->n_rx_desc, id->n_tx_desc);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++)
		OUT("  rx queue %u: QRX_TAIL %u ENA 0x%x next %u\n", q, rd(id, I40E_QRX_TAIL(q)),
		    rd(id, I40E_QRX_ENA(q)), id->rxq[q].next);
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		OUT("  tx queue %u: QTX_HEAD %u QTX_TAIL %u ENA 0x%x clean %u\n", q, rd(id, I40E_QTX_HEAD(q)),
		    rd(id, I40E_QTX_TAIL(q)), rd(id, I40E_QTX_ENA(q)), id->txq[q].slots.clean);
	const struct i40e_hw_stats *h = &id->hw;
	OUT("  hw: GORC %" PRIu64 " UPRC %" PRIu64 " GOTC %" PRIu64 " UPTC %" PRIu64 " RDPC %" PRIu64
	    " CRCERRS %" PRIu64 " ILLERRC %" PRIu64 " RLEC %" PRIu64 " RUC %" PRIu64 " ROC %" PRIu64 "\n",
	    h->gorc, h->uprc, h->gotc, h->uptc, h->rdpc, h->crcerrs, h->illerrc, h->rlec, h->ruc, h->roc);
#undef OUT
	return (int)o;
}

/* ---- bring-up ---- */

/* PF software reset, once the device is out of global reset and the NVM is
 * loaded (GLGEN_RSTAT, GLNVM_ULD, PFGEN_CTRL.PFSWR). */
static int pf_reset(struct i40e_dev *id)
{
	if (i40e_wait_reg(id, I40E_GLGEN_RSTAT, I40E_GLGEN_RSTAT_DEVSTATE_MASK, 0, I40E_GLOBAL_RESET_TIMEOUT_MS,
			  "global reset (GLGEN_RSTAT.DEVSTATE)") ||
	    i40e_wait_reg(id, I40E_GLNVM_ULD, I40E_GLNVM_ULD_DONE, I40E_GLNVM_ULD_DONE, I40E_NVM_LOAD_TIMEOUT_MS,
			  "NVM configuration load (GLNVM_ULD core and global done)"))
		return -ETIMEDOUT;
	wr(id, I40E_PFGEN_CTRL, rd(id, I40E_PFGEN_CTRL) | I40E_PFGEN_CTRL_PFSWR);
	return i40e_wait_reg(id, I40E_PFGEN_CTRL, I40E_PFGEN_CTRL_PFSWR, 0, I40E_PF_RESET_TIMEOUT_MS,
			     "PF software reset (PFGEN_CTRL.PFSWR)");
}

static int aq(struct i40e_dev *id, uint16_t op, struct i40e_aq_desc *d, void *buf, uint16_t len, bool to_fw,
	      char *err, size_t errlen, const char *what)
{
	d->opcode = op;
	int rc = i40e_aq_cmd(id, d, buf, len, to_fw);
	if (rc == -EIO)
		snprintf(err, errlen, "i40e: %s: %s failed: firmware returned %s (%u)", id->addr, what,
			 i40e_aq_rc_name(id->aq_last_rc), id->aq_last_rc);
	else if (rc)
		snprintf(err, errlen, "i40e: %s: %s: %s", id->addr, what, strerror(-rc));
	return rc;
}

/* Get version, retried while firmware boots or is busy. */
static int get_version(struct i40e_dev *id, char *err, size_t errlen)
{
	struct i40e_aq_desc d;
	int rc = 0;
	for (int tries = 0; tries < 10; tries++) {
		memset(&d, 0, sizeof(d));
		rc = aq(id, I40E_AQC_GET_VERSION, &d, NULL, 0, false, err, errlen, "get version");
		if (!rc || (rc == -EIO && id->aq_last_rc != I40E_AQ_RC_EBUSY))
			break;
		pci_clock_sleep_us(100000);
	}
	if (rc)
		return rc;
	uint16_t v[4];
	memcpy(v, d.params.raw + 8, sizeof(v)); /* fw major, minor, api major, minor */
	id->fw_major = v[0], id->fw_minor = v[1], id->api_major = v[2], id->api_minor = v[3];
	if (id->api_major > I40E_API_MAJOR) {
		snprintf(err, errlen, "i40e: %s: firmware admin API %u.%u is newer than this driver's %u.x", id->addr,
			 id->api_major, id->api_minor, I40E_API_MAJOR);
		return -ENOTSUP;
	}
	return 0;
}

static int capabilities(struct i40e_dev *id, uint8_t *buf, char *err, size_t errlen)
{
	struct i40e_aq_desc d = { 0 };
	int rc = aq(id, I40E_AQC_LIST_FUNC_CAPS, &d, buf, I40E_AQ_BUF_SIZE, false, err, errlen, "list capabilities");
	if (rc)
		return rc;
	uint32_t n = MIN(d.params.ext.param1, (uint32_t)(I40E_AQ_BUF_SIZE / I40E_CAP_ELEM_SIZE));
	id->lut_size = 128;
	for (uint32_t i = 0; i < n; i++) {
		const uint8_t *e = buf + i * I40E_CAP_ELEM_SIZE;
		uint16_t cap;
		uint32_t number, phys_id;
		memcpy(&cap, e, 2);
		memcpy(&number, e + 4, 4);
		memcpy(&phys_id, e + 12, 4);
		if (cap == I40E_CAP_RXQ) {
			id->n_hw_queues = number;
			id->base_queue = phys_id;
		} else if (cap == I40E_CAP_RSS) {
			id->lut_size = number >= 512 ? 512 : 128;
		}
	}
	if (id->dev.n_rx_queues > id->n_hw_queues || id->dev.n_tx_queues > id->n_hw_queues) {
		snprintf(err, errlen, "i40e: %s: the function has %u queue pairs, fewer than configured", id->addr,
			 id->n_hw_queues);
		return -ERANGE;
	}
	return 0;
}

/* One direct segment holding the TX contexts, then the RX contexts at the
 * next 512-byte boundary (X710/XL710 datasheet, HMC). A direct segment
 * descriptor declares 512 backing pages of 4 KB: the NIC may use the whole
 * 2 MB behind it, so the whole 2 MB is allocated and mapped, not only the
 * few KB the contexts take (the public drivers back it the same way). */
static int hmc_setup(struct i40e_dev *id)
{
	uint32_t n_tx = id->dev.n_tx_queues, n_rx = id->dev.n_rx_queues;
	uint32_t tx_size = 1u << (rd(id, I40E_GLHMC_LANTXOBJSZ) & 0xF);
	uint32_t rx_size = 1u << (rd(id, I40E_GLHMC_LANRXOBJSZ) & 0xF);
	if (tx_size != I40E_HMC_TX_CTX_SIZE || rx_size != I40E_HMC_RX_CTX_SIZE)
		return -ENOTSUP;
	id->hmc_rx_base = ROUND_UP(n_tx * tx_size, I40E_HMC_UNIT);
	if (id->hmc_rx_base + n_rx * rx_size > I40E_HMC_DIRECT_SIZE)
		return -ENOSPC;
	id->hmc_size = I40E_HMC_DIRECT_SIZE;
	id->hmc = pci_dma_alloc(id->io, id->hmc_size);
	if (!id->hmc)
		return -ENOMEM;
	wr(id, I40E_GLHMC_LANTXBASE(id->pf_id), 0);
	wr(id, I40E_GLHMC_LANTXCNT(id->pf_id), n_tx);
	wr(id, I40E_GLHMC_LANRXBASE(id->pf_id), id->hmc_rx_base / I40E_HMC_UNIT);
	wr(id, I40E_GLHMC_LANRXCNT(id->pf_id), n_rx);
	uint64_t pa = pci_iova(id->io, id->hmc);
	wr(id, I40E_PFHMC_SDDATAHIGH, (uint32_t)(pa >> 32));
	wr(id, I40E_PFHMC_SDDATALOW, ((uint32_t)pa & 0xFFFFF000u) |
					     I40E_HMC_DIRECT_PAGES << I40E_PFHMC_SDDATALOW_BPCOUNT_SHIFT |
					     I40E_PFHMC_SDDATALOW_DIRECT | I40E_PFHMC_SDDATALOW_VALID);
	wr(id, I40E_PFHMC_SDCMD, 0 | I40E_PFHMC_SDCMD_WRITE);
	return 0;
}

/* The main VSI: its SEID, then TC0 over queues 0..2^k-1, then its queue
 * set handle. */
static int vsi_setup(struct i40e_dev *id, uint8_t *buf, char *err, size_t errlen)
{
	struct i40e_aq_desc d = { 0 };
	int rc = aq(id, I40E_AQC_GET_SWITCH_CONFIG, &d, buf, I40E_AQ_BUF_SIZE, false, err, errlen,
		    "get switch config");
	if (rc)
		return rc;
	uint16_t n;
	memcpy(&n, buf, 2);
	id->vsi_seid = 0;
	for (uint32_t i = 0; i < n && I40E_SWITCH_HDR_SIZE + (i + 1) * I40E_SWITCH_ELEM_SIZE <= I40E_AQ_BUF_SIZE; i++) {
		const uint8_t *e = buf + I40E_SWITCH_HDR_SIZE + i * I40E_SWITCH_ELEM_SIZE;
		if (e[0] == I40E_SWITCH_ELEM_VSI) {
			memcpy(&id->vsi_seid, e + 2, 2);
			break;
		}
	}
	if (!id->vsi_seid) {
		snprintf(err, errlen, "i40e: %s: the switch has no VSI for this function", id->addr);
		return -ENOENT;
	}
	uint32_t n_q = MAX(id->dev.n_rx_queues, id->dev.n_tx_queues), log2q = 0;
	while ((1u << log2q) < n_q)
		log2q++;
	uint16_t v16;
	memset(buf, 0, I40E_VSI_PROPS_SIZE);
	v16 = I40E_VSI_PROP_QUEUE_MAP_VALID;
	memcpy(buf + I40E_VSI_VALID_SECTIONS, &v16, 2);
	v16 = 0; /* contiguous, from queue 0 */
	memcpy(buf + I40E_VSI_MAPPING_FLAGS, &v16, 2);
	memcpy(buf + I40E_VSI_QUEUE_MAPPING, &v16, 2);
	v16 = (uint16_t)(log2q << I40E_VSI_TC_QCOUNT_SHIFT);
	memcpy(buf + I40E_VSI_TC_MAPPING, &v16, 2);
	memset(&d, 0, sizeof(d));
	memcpy(d.params.raw, &id->vsi_seid, 2);
	rc = aq(id, I40E_AQC_UPDATE_VSI, &d, buf, I40E_VSI_PROPS_SIZE, true, err, errlen, "update VSI parameters");
	if (rc)
		return rc;
	memset(&d, 0, sizeof(d));
	memcpy(d.params.raw, &id->vsi_seid, 2);
	rc = aq(id, I40E_AQC_GET_VSI_PARAMS, &d, buf, I40E_VSI_PROPS_SIZE, false, err, errlen, "get VSI parameters");
	if (rc)
		return rc;
	memcpy(&id->qs_handle, buf + I40E_VSI_QS_HANDLE, 2);
	return 0;
}

static void rss_setup(struct i40e_dev *id)
{
	uint32_t n_rx = id->dev.n_rx_queues;
	wr(id, I40E_GLQF_CTL, rd(id, I40E_GLQF_CTL) | I40E_GLQF_CTL_HTOEP);
	uint32_t ctl = rd(id, I40E_PFQF_CTL_0) & ~I40E_PFQF_CTL_0_HASHLUTSIZE;
	wr(id, I40E_PFQF_CTL_0, ctl | (id->lut_size == 512 ? I40E_PFQF_CTL_0_HASHLUTSIZE : 0));
	for (uint32_t i = 0; i < I40E_RSS_KEY_SIZE / 4; i++) {
		const uint8_t *k = &i40e_rss_key[4 * i];
		wr(id, I40E_PFQF_HKEY(i),
		   (uint32_t)k[0] | (uint32_t)k[1] << 8 | (uint32_t)k[2] << 16 | (uint32_t)k[3] << 24);
	}
	for (uint32_t r = 0; r < id->lut_size / 4; r++) {
		uint32_t v = 0;
		for (uint32_t j = 0; j < 4; j++)
			v |= ((4 * r + j) % n_rx) << (8 * j);
		wr(id, I40E_PFQF_HLUT(r), v);
	}
	uint64_t hena = 1ull << I40E_PCTYPE_IPV4_UDP | 1ull << I40E_PCTYPE_IPV4_TCP | 1ull << I40E_PCTYPE_IPV4_OTHER |
			1ull << I40E_PCTYPE_IPV6_UDP | 1ull << I40E_PCTYPE_IPV6_TCP | 1ull << I40E_PCTYPE_IPV6_OTHER;
	wr(id, I40E_PFQF_HENA(0), (uint32_t)hena);
	wr(id, I40E_PFQF_HENA(1), (uint32_t)(hena >> 32));
}

/* Receive filters of the main VSI, one set VSI promiscuous modes command:
 * broadcast always (firmware's VSI receives no broadcast frame, ARP requests
 * included, unless the flag is set: X710/XL710 datasheet, admin queue
 * commands, "Set VSI Promiscuous Modes"; the public drivers set it at start
 * too), unicast and multicast with `promisc on`. All three flags are valid,
 * so `promisc off` clears what a previous owner left. */
static int set_promisc(struct i40e_dev *id, char *err, size_t errlen)
{
	struct i40e_aq_desc d = { 0 };
	uint16_t flags = I40E_PROMISC_BROADCAST | (id->promisc ? I40E_PROMISC_UNICAST | I40E_PROMISC_MULTICAST : 0);
	uint16_t p[3] = { flags, I40E_PROMISC_UNICAST | I40E_PROMISC_MULTICAST | I40E_PROMISC_BROADCAST,
			  id->vsi_seid };
	memcpy(d.params.raw, p, sizeof(p));
	return aq(id, I40E_AQC_SET_VSI_PROMISC, &d, NULL, 0, false, err, errlen, "set promiscuous modes");
}

/* The link from firmware, as the public drivers start it: link events on
 * (set PHY interrupt mask: link up/down, media not available and module
 * qualification unmasked, as Linux's i40e), the PHY's NVM defaults (get
 * PHY abilities with "report initial values"), that configuration applied
 * with the link and auto-negotiation enabled and ATOMIC (the link restarts
 * on it: DPDK's start path does the same), then get link status with
 * link-status events enabled. The speed comes from that answer and later
 * from the events (X710/XL710 datasheet, admin queue: PHY commands, link
 * status event). */
static int link_setup(struct i40e_dev *id, uint8_t *buf, char *err, size_t errlen)
{
	struct i40e_aq_desc d = { 0 };
	uint16_t mask = (uint16_t)~(I40E_PHY_EVENT_LINK_UPDOWN | I40E_PHY_EVENT_MEDIA_NA | I40E_PHY_EVENT_MODULE_QUAL_FAIL);
	memcpy(d.params.raw + I40E_PHY_INT_MASK_OFF, &mask, 2);
	int rc = aq(id, I40E_AQC_SET_PHY_INT_MASK, &d, NULL, 0, false, err, errlen, "set PHY interrupt mask");
	if (rc)
		return rc;
	memset(&d, 0, sizeof(d));
	d.params.raw[0] = I40E_PHY_REPORT_INIT;
	if ((rc = aq(id, I40E_AQC_GET_PHY_ABILITIES, &d, buf, I40E_PHY_ABILITIES_SIZE, false, err, errlen,
		     "get PHY abilities")))
		return rc;
	memset(&d, 0, sizeof(d));
	memcpy(d.params.raw, buf, 4);                                 /* phy_type */
	d.params.raw[4] = buf[4];                                     /* every speed it has */
	d.params.raw[5] = (uint8_t)((buf[5] & I40E_PHY_PAUSE_MASK) | I40E_PHY_ENABLE_LINK | I40E_PHY_ENABLE_AN |
				    I40E_PHY_ENABLE_ATOMIC);
	memcpy(d.params.raw + 6, buf + 6, 6);                         /* EEE capability and EEER */
	d.params.raw[12] = buf[12];                                   /* low-power control from D3 LPAN */
	d.params.raw[13] = buf[13];                                   /* phy_type_ext: 25G types */
	d.params.raw[14] = buf[14] & I40E_PHY_FEC_MASK;
	id->phy_speeds = buf[4];
	/* A refused PHY configuration leaves the link as firmware has it (the
	 * NVM's): logged, not fatal, as the link is still read and followed. */
	if ((rc = aq(id, I40E_AQC_SET_PHY_CONFIG, &d, NULL, 0, false, err, errlen, "set PHY config"))) {
		if (rc != -EIO)
			return rc;
		base_log("i40e", "%s: set PHY config refused: firmware returned %s (%u); the link stays as firmware "
			 "configured it", id->addr, i40e_aq_rc_name(id->aq_last_rc), id->aq_last_rc);
		id->phy_speeds = 0;
		err[0] = '\0';
	}
	memset(&d, 0, sizeof(d));
	d.params.raw[I40E_LINK_CMD_FLAGS] = I40E_LINK_LSE_ENABLE;
	if ((rc = aq(id, I40E_AQC_GET_LINK_STATUS, &d, NULL, 0, false, err, errlen, "get link status")))
		return rc;
	i40e_link_from_desc(id, &d);
	return 0;
}

/* Everything but the queues: PF reset, admin queue, firmware version,
 * HMC, the main VSI, MAC, promiscuous mode and RSS, in the order DPDK's
 * eth_i40e_dev_init takes them (docs/nic.md 3.3 lists the steps). */
static int bring_up(struct i40e_dev *id, char *err, size_t errlen)
{
	if (pf_reset(id)) {
		snprintf(err, errlen, "i40e: %s: the NIC did not come out of reset: %s", id->addr, id->wait_err);
		return -ETIMEDOUT;
	}
	id->pf_id = rd(id, I40E_PF_FUNC_RID) & 0x7;
	id->port = rd(id, I40E_PFGEN_PORTNUM) & 0x3;
	wr(id, I40E_PFINT_ICR0_ENA, 0); /* polled: no interrupt causes */
	wr(id, I40E_PFINT_DYN_CTL0, 0);
	int rc = i40e_aq_init(id);
	if (rc) {
		snprintf(err, errlen, "i40e: %s: admin queue set-up failed: %s", id->addr, strerror(-rc));
		return rc;
	}
	uint8_t *buf = malloc(I40E_AQ_BUF_SIZE);
	if (!buf)
		return -ENOMEM;
	struct i40e_aq_desc d = { 0 };
	d.params.raw[0] = 0x2; /* as DPDK sends it */
	if ((rc = get_version(id, err, errlen)) ||
	    (rc = aq(id, I40E_AQC_CLEAR_PXE, &d, NULL, 0, false, err, errlen, "clear PXE mode")) ||
	    (rc = capabilities(id, buf, err, errlen)))
		goto out;
	if ((rc = hmc_setup(id))) {
		snprintf(err, errlen, "i40e: %s: HMC set-up failed: %s", id->addr, strerror(-rc));
		goto out;
	}
	memset(&d, 0, sizeof(d));
	if ((rc = aq(id, I40E_AQC_MAC_ADDRESS_READ, &d, buf, 24, false, err, errlen, "MAC address read")))
		goto out;
	memcpy(id->mac, buf, 6);
	memcpy(id->dev.mac, id->mac, 6);
	if ((rc = vsi_setup(id, buf, err, errlen)))
		goto out;
	memset(&d, 0, sizeof(d));
	uint16_t max_frame = (uint16_t)id->max_frame;
	memcpy(d.params.raw, &max_frame, 2);
	d.params.raw[2] = 1u << 2; /* CRC enable */
	if ((rc = aq(id, I40E_AQC_SET_MAC_CONFIG, &d, NULL, 0, false, err, errlen, "set MAC config")))
		goto out;
	if ((rc = link_setup(id, buf, err, errlen)))
		goto out;
	if ((rc = set_promisc(id, err, errlen)))
		goto out;
	if (id->dev.n_rx_queues > 1)
		rss_setup(id);
	hw_stats_read(id, &id->hw_last); /* the zero; totals start at 0 */
	memset(&id->hw, 0, sizeof(id->hw));
out:
	free(buf);
	return rc;
}

static struct device *i40e_create(const void *conf, char *err, size_t errlen)
{
	const struct pci_nic_conf *c = conf;
	if (buffer_main.data_size < 1024) {
		snprintf(err, errlen, "i40e: buffers of %u data bytes are too small for the NIC (1 KB at least)",
			 buffer_main.data_size);
		return NULL;
	}
	struct i40e_dev *id = aligned_alloc(64, ROUND_UP(sizeof(*id), 64));
	if (!id) {
		snprintf(err, errlen, "i40e: out of memory");
		return NULL;
	}
	memset(id, 0, sizeof(*id));
	id->dev.ops = &i40e_ops;
	id->max_frame = c->mtu + 18;
	id->n_rx_desc = c->rx_desc;
	id->n_tx_desc = c->tx_desc;
	id->promisc = c->promisc;
	for (uint16_t q = 0; q < I40E_MAX_QUEUES; q++)
		rx_chain_reset(&id->rxq[q].chain);
	if (pci_nic_conf_apply(c, "i40e", &id->dev, id->addr, err, errlen))
		goto fail;
	id->io = pci_nic_open(id->addr, "i40e", &id->dev, err, errlen);
	if (!id->io)
		goto fail;
	if (id->dev.n_rx_queues > 1 && i40e_is_x722(id->io->device)) {
		snprintf(err, errlen,
			 "i40e: %s: X722 (8086:%04x) takes its RSS key and lookup table through the admin queue, "
			 "which this driver does not do yet: configure rx-queues 1",
			 id->addr, id->io->device);
		goto fail;
	}
	int rc = pci_dma_map_buffers(id->io);
	if (rc) {
		snprintf(err, errlen, "i40e: %s: cannot map the buffer pools for DMA: %s", id->addr, strerror(-rc));
		goto fail;
	}
	id->buffers_mapped = true;
	if (bring_up(id, err, errlen))
		goto fail;
	i40e_irq_open(id);
	return &id->dev;
fail:
	i40e_ops.destroy(&id->dev);
	return NULL;
}

static const struct dev_driver i40e_driver = {
	.name = "i40e",
	.conf = &i40e_conf_driver,
	.create = i40e_create,
};
DEV_DRIVER_REGISTER(i40e_driver)

/* The X710 / XL710 / XXV710 / X722 physical functions (device IDs as DPDK's
 * i40e_devids.h lists them). */
static const struct pci_id i40e_ids[] = {
	{ 0x8086, 0x1572, "X710 SFP+" },        { 0x8086, 0x1580, "XL710 KX_B" },
	{ 0x8086, 0x1581, "XL710 KX_C" },       { 0x8086, 0x1583, "XL710 QSFP+ A" },
	{ 0x8086, 0x1584, "XL710 QSFP+ B" },    { 0x8086, 0x1585, "XL710 QSFP+ C" },
	{ 0x8086, 0x1586, "X710 10GBASE-T" },   { 0x8086, 0x1587, "XL710 20G KR2" },
	{ 0x8086, 0x1588, "XL710 20G KR2 A" },  { 0x8086, 0x1589, "X710-T4 10GBASE-T" },
	{ 0x8086, 0x158A, "XXV710 25G backplane" }, { 0x8086, 0x158B, "XXV710 SFP28" },
	{ 0x8086, 0x104E, "X710 10G SFP" },     { 0x8086, 0x104F, "X710 10G B" },
	/* Not the X710-T "BC" ports (15FF, 101F, 0DD2): they link at 2.5 and
	 * 5 Gb/s too, speeds get link status reports in a field this driver
	 * does not read, so it would report their link wrong. */
	/* X722 (Lewisburg): the same PF programming but for RSS (key and LUT
	 * through admin commands 0x0B02/0x0B03, X710/XL710 datasheet admin queue commands), so with one
	 * rx queue only. */
	{ 0x8086, 0x37CE, "X722 KX" },         { 0x8086, 0x37CF, "X722 QSFP" },
	{ 0x8086, 0x37D0, "X722 SFP" },        { 0x8086, 0x37D1, "X722 1G-T" },
	{ 0x8086, 0x37D2, "X722 10G-T" },      { 0x8086, 0x37D3, "X722 SFP_I" },
	{ 0x8086, 0x0DDA, "X722 SFP_A" },
	{ 0, 0, NULL },
};

static const struct pci_driver i40e_pci_driver = {
	.name = "i40e",
	.ids = i40e_ids,
	.format_hw = i40e_format_hw,
};
PCI_DRIVER_REGISTER(i40e_pci_driver)
