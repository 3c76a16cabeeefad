/* The 82599 device model: see ixgbe_model.h. Register offsets and bits are
 * the model's own (ixgbe_model_regs.h, from the 82599 datasheet), never the
 * driver's header, aliases included (MRQC at 0x05818 and 0x0EC80, SRRCTL and
 * DCA_RXCTRL 0..15 in both windows, RAL/RAH 0..15 at 0x05400 and 0x0A200,
 * QPTC at 0x06030 + 0x40n and 0x08680 + 4n).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pci/pci.h"
#include "base/toeplitz.h"
#include "base/util.h"
#include "tests/models/ixgbe_model.h"
#include "tests/models/ixgbe_model_regs.h"
#include "tests/models/nic_model.h"

#define BAR_SIZE 0x20000u
#define N_RXQ 64
#define N_TXQ 64
#define TX_FRAME_MAX 16384
#define IOVA_OFFSET 0x100000000000ll /* device addresses differ from virtual ones */

/* register attributes */
enum { A_KNOWN = 1, A_RO = 2, A_COR = 4 };

struct ixgbe_model {
	struct nic_model base;
	uint32_t regs[BAR_SIZE / 4];
	uint8_t attr[BAR_SIZE / 4];
	/* Initialisation in virtual time (nic_model.h): the reset, then the
	 * EEPROM auto-read, then the DMA initialisation, each done at its
	 * instant (0: done); auto-negotiation from AN_RESTART. */
	bool in_reset, init_pending, an_started;
	uint64_t rst_done_ns, ard_ns, dmai_ns, an_ns;
	uint32_t never;            /* IXGBE_MODEL_STEP_* that never complete */
	bool cable, tx_hold;
	uint64_t gorc, gotc, tor;  /* 64-bit octet counters behind L/H pairs */
	uint32_t latch_gorch, latch_gotch, latch_torh;
	uint8_t mac[6];
	struct ixgbe_model_stats st;
	uint32_t txlen[N_TXQ];     /* bytes gathered of the frame in progress */
	uint32_t paylen[N_TXQ];
	bool ifcs[N_TXQ];
	uint8_t txbuf[N_TXQ][TX_FRAME_MAX];
	struct nic_model_txq txa[N_TXQ]; /* asynchronous transmit (nic_model.h) */
	uint32_t txwb_from[N_TXQ];       /* oldest descriptor sent, not yet written back */
	/* Receive write-backs held until RXDCTL.WTHRESH of them are ready
	 * (82599 datasheet 7.1.9 and 8.2.3.8.6): slot and both quadwords. */
	struct rxwb {
		uint32_t slot;
		uint64_t q0, q1;
	} rxwb[N_RXQ][RXDCTL_WTHRESH_MAX + 1];
	uint32_t n_rxwb[N_RXQ];
	/* EITR (8.2.3.5.12): vector v sends no message before throttle_ns[v]. */
	uint64_t throttle_ns[16];
};

/* The common part (tests/models/nic_model.h), through the model. */
#define fail(m, ...) nic_model_fail(&(m)->base, __VA_ARGS__)
#define dma(m, iova, len, what) nic_model_dma(&(m)->base, iova, len, what)

/* ---- register map ---- */

static void mark(struct ixgbe_model *m, uint32_t off, uint8_t a)
{
	m->attr[off / 4] = (uint8_t)(A_KNOWN | a);
}

static void build_map(struct ixgbe_model *m)
{
	static const uint32_t rw[] = { R_CTRL, R_CTRL_EXT, R_EIAC, R_EIMS, R_EIMC, R_EIAM, R_RDRXCTL, R_RXCTRL,
				       R_HLREG0, R_MAXFRS, R_MFLCN, R_AUTOC, R_RTTDCS, R_DMATXCTL, R_RXCSUM,
				       R_FCTRL, R_VLNCTRL, R_MRQC, R_DTXMXSZRQ, R_MTQC, R_EEC, R_SWSM };
	static const uint32_t cor[] = { R_EICR, R_CRCERRS, R_ILLERRC, R_ERRBC, R_MSPDC, R_MLFC, R_MRFC, R_RLEC,
					R_GPRC, R_BPRC, R_MPRC, R_GPTC, R_GORCL, R_GORCH, R_GOTCL, R_GOTCH,
					R_RUC, R_RFC, R_ROC, R_RJC, R_MNGPDC, R_TORL, R_TORH, R_TPR, R_TPT,
					R_MPTC, R_BPTC, R_LXONRXCNT, R_LXOFFRXCNT, R_RXDGPC, R_TXDGPC };
	for (size_t i = 0; i < ARRAY_LEN(rw); i++)
		mark(m, rw[i], 0);
	for (size_t i = 0; i < ARRAY_LEN(cor); i++)
		mark(m, cor[i], A_RO | A_COR);
	mark(m, R_EICR, A_COR); /* read: cleared; write: 1s clear (8.2.3.5.1) */
	mark(m, R_EICS, 0);
	mark(m, R_GPIE, 0);
	for (uint32_t i = 0; i < 24; i++)
		mark(m, R_EITR(i), 0);
	for (uint32_t i = 0; i < 64; i++)
		mark(m, R_IVAR(i), 0);
	mark(m, R_STATUS, A_RO);
	mark(m, R_LINKS, A_RO);
	for (uint32_t i = 0; i < 2; i++) {
		mark(m, R_EIMS_EX(i), 0);
		mark(m, R_EIMC_EX(i), 0);
	}
	for (uint32_t i = 0; i < 8; i++) {
		mark(m, R_RXPBSIZE(i), 0);
		mark(m, R_TXPBSIZE(i), 0);
		mark(m, R_MPC(i), A_RO | A_COR);
	}
	for (uint32_t i = 0; i < 128; i++) {
		mark(m, R_MTA(i), 0);
		mark(m, R_RAL(i), 0);
		mark(m, R_RAH(i), 0);
	}
	for (uint32_t i = 0; i < 32; i++) {
		mark(m, R_RETA(i), 0);
		mark(m, R_RQSMR(i), 0);
		mark(m, R_TQSM(i), 0);
	}
	for (uint32_t i = 0; i < 10; i++)
		mark(m, R_RSSRK(i), 0);
	for (uint32_t n = 0; n < N_RXQ; n++) {
		static const uint32_t q[] = { Q_BAL, Q_BAH, Q_LEN, Q_DCA, Q_HEAD, Q_SRRCTL, Q_TAIL, Q_CTL, Q_RSCCTL };
		for (size_t k = 0; k < ARRAY_LEN(q); k++)
			mark(m, RXQ(n, q[k]), 0);
		if (n < 16) { /* QPRC, QBRC_L */
			mark(m, RXQ(n, Q_STAT0), A_RO | A_COR);
			mark(m, RXQ(n, Q_STAT1), A_RO | A_COR);
			mark(m, R_QBTC_L(n), A_RO | A_COR);
		} else if (n < 32) { /* QPRDC(n - 16) lives at 0x01430 + 0x40 (n - 16) */
			mark(m, RXQ(n, Q_STAT0), A_RO | A_COR);
		}
	}
	for (uint32_t n = 0; n < N_TXQ; n++) {
		static const uint32_t q[] = { Q_BAL, Q_BAH, Q_LEN, Q_DCA, Q_HEAD, Q_TAIL, Q_CTL, Q_WBAL, Q_WBAH };
		for (size_t k = 0; k < ARRAY_LEN(q); k++)
			mark(m, TXQ(n, q[k]), 0);
		if (n < 16)
			mark(m, TXQ(n, Q_STAT0), A_RO | A_COR); /* QPTC */
	}
}

/* The datasheet's register aliases, to the one offset the model keeps. */
static uint32_t canon(uint32_t off)
{
	if (off == R_MRQC_ALIAS)
		return R_MRQC;
	if (off >= 0x02100 && off < 0x02140) /* SRRCTL 0..15 */
		return RXQ((off - 0x02100) / 4, Q_SRRCTL);
	if (off >= 0x02200 && off < 0x02240) /* DCA_RXCTRL 0..15 */
		return RXQ((off - 0x02200) / 4, Q_DCA);
	if (off >= 0x0A200 && off < 0x0A280) /* RAL/RAH 0..15, second window */
		return 0x05400 + (off - 0x0A200);
	if (off >= 0x08680 && off < 0x086C0) /* QPTC 0..15 */
		return TXQ((off - 0x08680) / 4, Q_STAT0);
	return off;
}

#define REG(m, off) ((m)->regs[(off) / 4])

static void cor_add(struct ixgbe_model *m, uint32_t off, uint32_t v)
{
	REG(m, off) += v;
}

static void device_reset(struct ixgbe_model *m)
{
	memset(m->regs, 0, sizeof(m->regs));
	m->gorc = m->gotc = m->tor = 0;
	m->latch_gorch = m->latch_gotch = m->latch_torh = 0;
	m->an_started = false;
	memset(m->txlen, 0, sizeof(m->txlen));
	memset(m->n_rxwb, 0, sizeof(m->n_rxwb));
	memset(m->throttle_ns, 0, sizeof(m->throttle_ns));
	for (uint32_t n = 0; n < N_TXQ; n++)
		nic_model_txq_stop(&m->txa[n]);
	REG(m, R_MAXFRS) = 1518u << 16;
	REG(m, R_RXPBSIZE(0)) = 512u << 10;
	REG(m, R_TXPBSIZE(0)) = 160u << 10;
	REG(m, R_RAL(0)) = (uint32_t)m->mac[0] | (uint32_t)m->mac[1] << 8 | (uint32_t)m->mac[2] << 16 |
			   (uint32_t)m->mac[3] << 24;
	REG(m, R_RAH(0)) = (uint32_t)m->mac[4] | (uint32_t)m->mac[5] << 8 | RAH_AV;
	for (uint32_t n = 0; n < N_RXQ; n++) {
		REG(m, RXQ(n, Q_SRRCTL)) = 2;          /* BSIZEPACKET 2 KB, legacy descriptors */
		REG(m, RXQ(n, Q_DCA)) = DCA_RXCTRL_RSVD12;
	}
	m->st.resets++;
}

static bool ring_check(struct ixgbe_model *m, uint32_t block, const char *name, uint32_t n)
{
	uint64_t base = (uint64_t)REG(m, block + Q_BAH) << 32 | REG(m, block + Q_BAL);
	uint32_t len = REG(m, block + Q_LEN);
	if (base & 0xF) {
		fail(m, "%s queue %u: ring base 0x%" PRIx64 " is not 16-byte aligned", name, n, base);
		return false;
	}
	if (len == 0 || len % 128) {
		fail(m, "%s queue %u: ring length %u bytes is not a non-zero multiple of 128", name, n, len);
		return false;
	}
	if (REG(m, block + Q_HEAD) >= len / 16) {
		fail(m, "%s queue %u: head %u past the ring", name, n, REG(m, block + Q_HEAD));
		return false;
	}
	return dma(m, base, len, "descriptor ring") != NULL;
}

static volatile uint64_t *desc(struct ixgbe_model *m, uint32_t block, uint32_t i)
{
	uint64_t base = (uint64_t)REG(m, block + Q_BAH) << 32 | REG(m, block + Q_BAL);
	return dma(m, base + 16ull * i, 16, "descriptor");
}

static void tx_run(struct ixgbe_model *m, uint32_t n, bool unpaced);

/* ---- initialisation in time (82599 datasheet 4.6.3, 4.6.3.2, 4.6.4) ----
 *
 * Delays drawn from the seeded generator (nic_model.h), within the bounds
 * below. The datasheet gives the order, not every duration: the ranges are
 * the model's, chosen inside the public drivers' and sluice's bounds (the
 * reset polled for 1 s, the EEPROM and DMA waits 1 s each; Linux allows
 * auto-negotiation seconds), so a driver that does not wait, or waits less
 * than the slow end, is caught on some seed. */
#define RST_NS_LO 1000ull             /* 1 us .. 1 ms: RST and LNK_RST self-clear */
#define RST_NS_HI 1000000ull
#define ARD_NS_LO 1000000ull          /* 1 .. 20 ms: the EEPROM auto-read after the reset */
#define ARD_NS_HI 20000000ull
#define DMAI_NS_LO 10000ull           /* 10 us .. 1 ms: DMA initialisation after the auto-read */
#define DMAI_NS_HI 1000000ull
#define AN_NS_LO 10000000ull          /* 10 .. 500 ms: link up after AN_RESTART */
#define AN_NS_HI 500000000ull
#define NEVER UINT64_MAX

static uint64_t step_at(struct ixgbe_model *m, uint32_t step, uint64_t from, uint64_t lo, uint64_t hi)
{
	uint64_t d = nic_model_delay_ns(lo, hi); /* drawn even when never: the sequence stays the seed's */
	return (m->never & step) || from == NEVER ? NEVER : from + d;
}

/* What time has completed since the last access. */
static void settle(struct ixgbe_model *m)
{
	uint64_t now = nic_model_now_ns();
	if (m->in_reset && now >= m->rst_done_ns) {
		m->in_reset = false;
		REG(m, R_CTRL) &= ~CTRL_RST_MASK;
	}
	if (m->init_pending && !m->in_reset) {
		if (now >= m->ard_ns)
			REG(m, R_EEC) |= EEC_ARD;
		if (now >= m->dmai_ns)
			REG(m, R_RDRXCTL) |= RDRXCTL_DMAIDONE;
		m->init_pending = !(REG(m, R_EEC) & EEC_ARD) || !(REG(m, R_RDRXCTL) & RDRXCTL_DMAIDONE);
	}
}

static void reset_start(struct ixgbe_model *m)
{
	device_reset(m);
	m->in_reset = m->init_pending = true;
	m->rst_done_ns = step_at(m, IXGBE_MODEL_STEP_RESET, nic_model_now_ns(), RST_NS_LO, RST_NS_HI);
	m->ard_ns = step_at(m, IXGBE_MODEL_STEP_EEPROM, m->rst_done_ns, ARD_NS_LO, ARD_NS_HI);
	m->dmai_ns = step_at(m, IXGBE_MODEL_STEP_DMA_INIT, m->ard_ns, DMAI_NS_LO, DMAI_NS_HI);
}

/* The model is an SFP+ port: the link comes up in 10 Gb/s serial (SFI)
 * link mode only (82599 datasheet 4.6.4: AUTOC.LMS). */
static bool link_up(struct ixgbe_model *m)
{
	return m->cable && m->an_started && (REG(m, R_AUTOC) & AUTOC_LMS_MASK) == AUTOC_LMS_10G_SERIAL &&
	       nic_model_now_ns() >= m->an_ns;
}

/* ---- interrupts (82599 datasheet 7.3) ----
 *
 * MSI-X mode only (GPIE.MSIX_MODE): EICR bit v (v < 16) is vector v's
 * cause, set by an rx queue whose IVAR entry is valid and names v (7.3.4),
 * or by software through EICS. A cause set and enabled in EIMS sends the
 * vector's message unless EITR's interval since its last one has not
 * passed (7.3.2.1: then it is sent when the interval ends); the message
 * clears the cause when EIAC has its bit (7.3.1.4 auto-clear) and the
 * enable when GPIE.EIAME and EIAM have it (auto-mask, 7.3.1.5). A cause
 * set while masked stays in EICR (pending, in the PBA with GPIE.PBA_SUPPORT)
 * and is sent when EIMS enables it. */
static void irq_eval(struct ixgbe_model *m)
{
	if (!(REG(m, R_GPIE) & GPIE_MSIX_MODE))
		return;
	uint64_t now = nic_model_now_ns();
	uint32_t due = REG(m, R_EICR) & REG(m, R_EIMS) & EICR_RTXQ_MASK;
	for (uint32_t v = 0; due; v++, due >>= 1) {
		if (!(due & 1) || now < m->throttle_ns[v])
			continue;
		uint32_t bit = 1u << v;
		if (REG(m, R_EIAC) & bit)
			REG(m, R_EICR) &= ~bit;
		if ((REG(m, R_GPIE) & GPIE_EIAME) && (REG(m, R_EIAM) & bit))
			REG(m, R_EIMS) &= ~bit;
		uint32_t itr = (v < 24 ? REG(m, R_EITR(v)) : 0) & EITR_INTERVAL_MASK;
		m->throttle_ns[v] = now + (uint64_t)(itr >> 3) * EITR_INTERVAL_NS;
		nic_model_irq_raise(&m->base, v);
	}
}

/* Rx queue q wrote descriptors back: its cause, through its IVAR entry. */
static void rx_cause(struct ixgbe_model *m, uint32_t q)
{
	uint32_t ivar = (REG(m, R_IVAR(q / 2)) >> (16 * (q % 2))) & 0xFF;
	if (!(ivar & IVAR_ALLOC_VAL))
		return;
	uint32_t v = ivar & IVAR_VECTOR_MASK;
	if (v >= 16) {
		fail(m, "rx queue %u mapped to vector %u: the model has vectors 0..15 (EICR, not EICR_EX)", q, v);
		return;
	}
	REG(m, R_EICR) |= 1u << v;
	irq_eval(m);
}

/* ---- register access ---- */

static uint32_t io_read32(struct pci_io *io, uint32_t off)
{
	struct ixgbe_model *m = container_of(io, struct ixgbe_model, base.io);
	if (off % 4 || off >= BAR_SIZE) {
		fail(m, "read of BAR0 offset 0x%05x: unaligned or outside BAR0", off);
		return 0xFFFFFFFF;
	}
	off = canon(off);
	uint8_t a = m->attr[off / 4];
	if (!(a & A_KNOWN)) {
		fail(m, "read of unmodelled register 0x%05x", off);
		return 0xFFFFFFFF;
	}
	settle(m);
	uint32_t v = REG(m, off);
	switch (off) {
	case R_LINKS:
		return link_up(m) ? LINKS_UP | LINKS_10G : 0;
	case R_GORCL:
		m->latch_gorch = (uint32_t)(m->gorc >> 32);
		v = (uint32_t)m->gorc;
		m->gorc = 0;
		return v;
	case R_GORCH:
		v = m->latch_gorch;
		m->latch_gorch = 0;
		return v;
	case R_GOTCL:
		m->latch_gotch = (uint32_t)(m->gotc >> 32);
		v = (uint32_t)m->gotc;
		m->gotc = 0;
		return v;
	case R_GOTCH:
		v = m->latch_gotch;
		m->latch_gotch = 0;
		return v;
	case R_TORL:
		m->latch_torh = (uint32_t)(m->tor >> 32);
		v = (uint32_t)m->tor;
		m->tor = 0;
		return v;
	case R_TORH:
		v = m->latch_torh;
		m->latch_torh = 0;
		return v;
	}
	if (a & A_COR)
		REG(m, off) = 0;
	return v;
}

static bool queue_enabled(struct ixgbe_model *m, uint32_t block)
{
	return REG(m, block + Q_CTL) & QCTL_ENABLE;
}

/* Writes to an rx or tx queue's block; false when refused. */
static bool queue_write(struct ixgbe_model *m, uint32_t off, uint32_t v)
{
	bool rx = off < 0x02000;
	uint32_t base = rx ? RXQ_BASE : TXQ_BASE;
	uint32_t n = (off - base) / 0x40, r = (off - base) % 0x40, block = base + 0x40 * n;
	const char *name = rx ? "rx" : "tx";
	switch (r) {
	case Q_BAL: case Q_BAH: case Q_LEN: case Q_HEAD: case Q_SRRCTL: case Q_DCA:
		if (queue_enabled(m, block)) {
			fail(m, "%s queue %u: configuration register 0x%05x written while the queue is enabled", name,
			     n, off);
			return false;
		}
		return true;
	case Q_TAIL: {
		uint32_t count = REG(m, block + Q_LEN) / 16;
		if (v >= count) {
			fail(m, "%s queue %u: tail %u past the ring of %u descriptors", name, n, v, count);
			return false;
		}
		return true;
	}
	case Q_CTL: {
		bool was = queue_enabled(m, block), now = v & QCTL_ENABLE;
		if (now && !was) {
			if (!rx && !(REG(m, R_DMATXCTL) & DMATXCTL_TE)) {
				fail(m, "tx queue %u enabled before DMATXCTL.TE", n);
				return false;
			}
			if (rx && SRRCTL_DESCTYPE(REG(m, block + Q_SRRCTL)) != 1) {
				fail(m, "rx queue %u enabled with SRRCTL.DESCTYPE %u (the model does advanced one-buffer, 1)",
				     n, SRRCTL_DESCTYPE(REG(m, block + Q_SRRCTL)));
				return false;
			}
			if (!ring_check(m, block, name, n))
				return false;
			if (!rx && nic_model_txq_start(&m->txa[n], REG(m, block + Q_LEN) / 16, 16, REG(m, block + Q_HEAD))) {
				fail(m, "tx queue %u: out of memory", n);
				return false;
			}
			if (!rx)
				m->txwb_from[n] = REG(m, block + Q_HEAD);
		} else if (!now && was) {
			if (rx)
				m->n_rxwb[n] = 0; /* the queue goes: what was held is dropped */
			else
				nic_model_txq_stop(&m->txa[n]);
		}
		return true;
	}
	default:
		return true;
	}
}

static void io_write32(struct pci_io *io, uint32_t off, uint32_t v)
{
	struct ixgbe_model *m = container_of(io, struct ixgbe_model, base.io);
	if (off % 4 || off >= BAR_SIZE) {
		fail(m, "write of BAR0 offset 0x%05x: unaligned or outside BAR0", off);
		return;
	}
	off = canon(off);
	uint8_t a = m->attr[off / 4];
	if (!(a & A_KNOWN)) {
		fail(m, "write of 0x%x to unmodelled register 0x%05x", v, off);
		return;
	}
	settle(m);
	if (m->in_reset) {
		fail(m, "register 0x%05x written while the reset is in progress (poll CTRL first)", off);
		return;
	}
	/* After a reset, only interrupt masking until the EEPROM auto-read
	 * and the DMA initialisation are done (82599 datasheet 4.6.3's order). */
	if (m->init_pending && off != R_EIMC && off != R_CTRL) {
		fail(m, "register 0x%05x written before %s after the reset", off,
		     REG(m, R_EEC) & EEC_ARD ? "the DMA initialisation completed (poll RDRXCTL.DMAIDONE first)"
					     : "the EEPROM auto-read completed (poll EEC.ARD first)");
		return;
	}
	if (a & A_RO) {
		fail(m, "write to read-only register 0x%05x", off);
		return;
	}
	if ((off >= RXQ_BASE && off < RXQ_BASE + 0x40 * N_RXQ) || (off >= TXQ_BASE && off < TXQ_BASE + 0x40 * N_TXQ)) {
		if (!queue_write(m, off, v))
			return;
		if (off >= TXQ_BASE && (off - TXQ_BASE) % 0x40 == Q_TAIL) {
			uint32_t n = (off - TXQ_BASE) / 0x40, block = TXQ(n, 0);
			if (queue_enabled(m, block) &&
			    !nic_model_tx_post(&m->base, &m->txa[n], (uint16_t)n, desc(m, block, 0), REG(m, block + Q_HEAD), v))
				return;
		}
		REG(m, off) = v;
		return;
	}
	switch (off) {
	case R_CTRL:
		REG(m, R_CTRL) = v;
		if (v & CTRL_RST_MASK) {
			reset_start(m);
			REG(m, R_CTRL) = v;
		}
		return;
	case R_EIMS:
		REG(m, R_EIMS) |= v;
		irq_eval(m); /* a pending cause is sent now */
		return;
	case R_EICR:
		REG(m, R_EICR) &= ~v;
		return;
	case R_EICS:
		REG(m, R_EICR) |= v & 0x7FFFFFFFu;
		irq_eval(m);
		return;
	case R_EIMC:
		REG(m, R_EIMS) &= ~v;
		return;
	case R_AUTOC:
		if (v & AUTOC_AN_RESTART) { /* link up once the partner answered */
			m->an_started = true;
			m->an_ns = step_at(m, IXGBE_MODEL_STEP_AUTONEG, nic_model_now_ns(), AN_NS_LO, AN_NS_HI);
		}
		REG(m, R_AUTOC) = v & ~AUTOC_AN_RESTART;
		return;
	case R_RDRXCTL: /* DMAIDONE is read-only */
		REG(m, R_RDRXCTL) = (v & ~RDRXCTL_DMAIDONE) | (REG(m, R_RDRXCTL) & RDRXCTL_DMAIDONE);
		return;
	case R_EEC: /* ARD is read-only */
		REG(m, R_EEC) = (v & ~EEC_ARD) | (REG(m, R_EEC) & EEC_ARD);
		return;
	case R_RXCTRL:
		if ((v & RXCTRL_RXEN) &&
		    !(REG(m, R_HLREG0) & HLREG0_RXCRCSTRP) != !(REG(m, R_RDRXCTL) & RDRXCTL_CRCSTRIP)) {
			fail(m, "RXCTRL.RXEN set with HLREG0.RXCRCSTRP and RDRXCTL.CRCSTRIP disagreeing");
			return;
		}
		REG(m, R_RXCTRL) = v;
		return;
	case R_DMATXCTL:
		REG(m, R_DMATXCTL) = v;
		return;
	default:
		REG(m, off) = v;
	}
}

/* ---- tx ---- */

static void tx_emit(struct ixgbe_model *m, uint32_t n)
{
	uint32_t len = m->txlen[n];
	if (len != m->paylen[n])
		fail(m, "tx queue %u: PAYLEN %u but the data descriptors carry %u bytes", n, m->paylen[n], len);
	if (len < 60 && (REG(m, R_HLREG0) & HLREG0_TXPADEN)) {
		memset(m->txbuf[n] + len, 0, 60 - len);
		len = 60;
	}
	if (!m->ifcs[n])
		m->st.tx_no_fcs++;
	cor_add(m, R_GPTC, 1);
	cor_add(m, R_TPT, 1);
	m->gotc += len + 4;
	if (n < 16)
		cor_add(m, TXQ(n, Q_STAT0), 1);
	m->st.tx_frames++;
	nic_model_emit(&m->base, (uint16_t)n, m->txbuf[n], len);
	m->txlen[n] = 0;
}

/* Transmit write-back (82599 datasheet 7.2.3.5, TXDCTL.WTHRESH 8.2.3.9.10):
 * with WTHRESH 0 each RS descriptor is written back done as it is sent;
 * otherwise the sent descriptors are held until WTHRESH of them are, then
 * the RS ones among them written back together. */
static void tx_writeback(struct ixgbe_model *m, uint32_t n, uint32_t block, uint32_t count)
{
	uint32_t wthresh = (REG(m, block + Q_CTL) >> DCTL_WTHRESH_SHIFT) & RXDCTL_WTHRESH_MAX;
	uint32_t head = REG(m, block + Q_HEAD), from = m->txwb_from[n];
	if ((head + count - from) % count < MAX(wthresh, 1u))
		return;
	for (uint32_t s = from; s != head; s = (s + 1) % count) {
		volatile uint64_t *d = desc(m, block, s);
		if (d && ((uint32_t)d[1] & TXD_DCMD_RS))
			d[1] = (d[1] & 0xFFFFFFFFull) | TXD_STA_DD;
	}
	m->txwb_from[n] = head;
}

/* Send what the tail handed over some ticks ago, a batch per tick (82599
 * datasheet 7.2; nic_model.h), or all of it when unpaced. */
static void tx_run(struct ixgbe_model *m, uint32_t n, bool unpaced)
{
	uint32_t block = TXQ(n, 0);
	if (m->tx_hold || !(REG(m, R_DMATXCTL) & DMATXCTL_TE) || !queue_enabled(m, block))
		return;
	uint32_t count = REG(m, block + Q_LEN) / 16;
	for (uint32_t k = nic_model_tx_ready(&m->base, &m->txa[n], REG(m, block + Q_HEAD), unpaced); k; k--) {
		uint32_t head = REG(m, block + Q_HEAD);
		volatile uint64_t *d = desc(m, block, head);
		if (!d || !nic_model_tx_unchanged(&m->base, &m->txa[n], (uint16_t)n, desc(m, block, 0), head))
			return;
		uint64_t addr = d[0], q1 = d[1];
		uint32_t cmd = (uint32_t)q1, olinfo = (uint32_t)(q1 >> 32);
		uint32_t dtyp = (cmd >> TXD_DTYP_SHIFT) & 0xF;
		if (!(cmd & TXD_DCMD_DEXT) || (dtyp != TXD_DTYP_DATA && dtyp != TXD_DTYP_CTXT)) {
			fail(m, "tx queue %u descriptor %u: not an advanced descriptor (DEXT %u, DTYP %u)", n, head,
			     (cmd >> 29) & 1, dtyp);
			return;
		}
		if (dtyp == 3) {
			uint32_t len = cmd & TXD_DTALEN_MASK;
			if (m->txlen[n] == 0) {
				m->paylen[n] = olinfo >> TXD_PAYLEN_SHIFT;
				m->ifcs[n] = (cmd & TXD_DCMD_IFCS) != 0;
			}
			if (m->txlen[n] + len > TX_FRAME_MAX) {
				fail(m, "tx queue %u: frame longer than %u bytes", n, TX_FRAME_MAX);
				return;
			}
			const void *src = len ? dma(m, addr, len, "tx data buffer") : m->txbuf[n];
			if (!src)
				return;
			memcpy(m->txbuf[n] + m->txlen[n], src, len);
			m->txlen[n] += len;
		}
		head = (head + 1) % count;
		if (head == 0)
			m->st.tx_wraps[n % 16]++;
		REG(m, block + Q_HEAD) = head;
		if (dtyp == TXD_DTYP_DATA && (cmd & TXD_DCMD_EOP))
			tx_emit(m, n);
		tx_writeback(m, n, block, count);
	}
}

/* ---- rx ---- */

struct rx_class {
	uint32_t ptype;    /* packet type bits, at their place in the low dword */
	uint32_t rss_type; /* 0 none, 1 IPv4+TCP, 2 IPv4, 3 IPv6+TCP, 5 IPv6, 7 IPv4+UDP, 8 IPv6+UDP */
	uint32_t hash;
};

static void rss_key(const struct ixgbe_model *m, uint8_t key[40])
{
	for (uint32_t k = 0; k < 40; k++)
		key[k] = (uint8_t)(m->regs[R_RSSRK(k / 4) / 4] >> (8 * (k % 4)));
}

/* Packet type and RSS hash of a frame (82599 datasheet 7.1.6 and 7.1.2.8;
 * MRQC fields 8.2.3.7.12). */
static void classify(const struct ixgbe_model *m, const uint8_t *f, uint32_t len, struct rx_class *c)
{
	memset(c, 0, sizeof(*c));
	if (len < 14)
		return;
	uint32_t off = 14;
	uint16_t et = (uint16_t)(f[12] << 8 | f[13]);
	if (et == 0x8100 && len >= 18) {
		et = (uint16_t)(f[16] << 8 | f[17]);
		off = 18;
	}
	uint32_t mrqc = m->regs[R_MRQC / 4];
	uint8_t in[36];
	uint32_t n_in = 0;
	if (et == 0x0800 && len >= off + 20) {
		const uint8_t *ip = f + off;
		uint32_t ihl = (ip[0] & 0xFu) * 4;
		bool frag = ((ip[6] & 0x3F) | ip[7]) != 0;
		uint8_t proto = ip[9];
		c->ptype = 1u << 4 | (ihl > 20 ? 1u << 5 : 0);
		bool l4 = !frag && len >= off + ihl + 4;
		if (!frag && proto == 6)
			c->ptype |= 1u << 8;
		if (!frag && proto == 17)
			c->ptype |= 1u << 9;
		memcpy(in, ip + 12, 8);
		if (l4 && proto == 6 && (mrqc & MRQC_TCPIPV4)) {
			memcpy(in + 8, ip + ihl, 4);
			c->rss_type = 1, n_in = 12;
		} else if (l4 && proto == 17 && (mrqc & MRQC_UDPIPV4)) {
			memcpy(in + 8, ip + ihl, 4);
			c->rss_type = 7, n_in = 12;
		} else if (mrqc & MRQC_IPV4) {
			c->rss_type = 2, n_in = 8;
		}
	} else if (et == 0x86DD && len >= off + 40) {
		const uint8_t *ip = f + off;
		uint8_t nh = ip[6];
		c->ptype = 1u << 6;
		bool l4 = len >= off + 44;
		if (nh == 6)
			c->ptype |= 1u << 8;
		else if (nh == 17)
			c->ptype |= 1u << 9;
		else if (nh == 0 || nh == 43 || nh == 44 || nh == 60)
			c->ptype |= 1u << 7; /* extension headers: 2-tuple only here */
		memcpy(in, ip + 8, 32);
		if (l4 && nh == 6 && (mrqc & MRQC_TCPIPV6)) {
			memcpy(in + 32, ip + 40, 4);
			c->rss_type = 3, n_in = 36;
		} else if (l4 && nh == 17 && (mrqc & MRQC_UDPIPV6)) {
			memcpy(in + 32, ip + 40, 4);
			c->rss_type = 8, n_in = 36;
		} else if (mrqc & MRQC_IPV6) {
			c->rss_type = 5, n_in = 32;
		}
	}
	if ((mrqc & 0xF) != 1 || !c->rss_type) {
		c->rss_type = 0;
		return;
	}
	uint8_t key[40];
	rss_key(m, key);
	c->hash = toeplitz_hash(key, sizeof(key), in, n_in);
}

/* Destination address filters (FCTRL, RAL/RAH). */
static bool accept(const struct ixgbe_model *m, const uint8_t *f)
{
	uint32_t fctrl = m->regs[R_FCTRL / 4];
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	if (!memcmp(f, bcast, 6))
		return fctrl & FCTRL_BAM;
	if (f[0] & 1)
		return fctrl & FCTRL_MPE;
	if (fctrl & FCTRL_UPE)
		return true;
	for (uint32_t i = 0; i < 16; i++) {
		uint32_t ral = m->regs[R_RAL(i) / 4], rah = m->regs[R_RAH(i) / 4];
		uint8_t a[6] = { (uint8_t)ral, (uint8_t)(ral >> 8), (uint8_t)(ral >> 16), (uint8_t)(ral >> 24),
				 (uint8_t)rah, (uint8_t)(rah >> 8) };
		if ((rah & RAH_AV) && !memcmp(a, f, 6))
			return true;
	}
	return false;
}

uint32_t ixgbe_model_rx_room(const struct ixgbe_model *m, uint16_t q)
{
	uint32_t block = RXQ(q, 0);
	uint32_t count = m->regs[(block + Q_LEN) / 4] / 16;
	if (!count)
		return 0;
	return (m->regs[(block + Q_TAIL) / 4] + count - m->regs[(block + Q_HEAD) / 4]) % count;
}

/* Receive write-back (82599 datasheet 7.1.9, RXDCTL.WTHRESH 8.2.3.8.6):
 * a used descriptor is written back at once with WTHRESH 0, else held until
 * WTHRESH of them are ready (or an interrupt flushes them, which a polled
 * driver never has). The buffer's data is already in memory; DD is not. */
static void rx_writeback(struct ixgbe_model *m, uint32_t q, uint32_t block, uint32_t slot, uint64_t q0, uint64_t q1)
{
	uint32_t wthresh = (REG(m, block + Q_CTL) >> DCTL_WTHRESH_SHIFT) & RXDCTL_WTHRESH_MAX;
	m->rxwb[q][m->n_rxwb[q]++] = (struct rxwb){ .slot = slot, .q0 = q0, .q1 = q1 };
	if (m->n_rxwb[q] < MAX(wthresh, 1u))
		return;
	for (uint32_t i = 0; i < m->n_rxwb[q]; i++) {
		volatile uint64_t *d = desc(m, block, m->rxwb[q][i].slot);
		if (!d)
			continue;
		d[0] = m->rxwb[q][i].q0;
		__atomic_thread_fence(__ATOMIC_RELEASE);
		d[1] = m->rxwb[q][i].q1;
		m->st.rx_writebacks++;
		m->base.rx_written++;
	}
	m->n_rxwb[q] = 0;
	rx_cause(m, q);
}

int ixgbe_model_rx(struct ixgbe_model *m, const uint8_t *frame, uint32_t len)
{
	if (!link_up(m)) { /* nothing arrives on a link that is down */
		m->st.rx_no_link++;
		return -1;
	}
	cor_add(m, R_TPR, 1);
	m->tor += len + 4;
	uint32_t hl = m->regs[R_HLREG0 / 4];
	uint32_t max = (hl & HLREG0_JUMBOEN) ? m->regs[R_MAXFRS / 4] >> 16 : 1518;
	if (len + 4 < 64 || len + 4 > max) {
		cor_add(m, len + 4 < 64 ? R_RUC : R_ROC, 1);
		m->st.rx_filtered++;
		return -1;
	}
	if (!(m->regs[R_RXCTRL / 4] & RXCTRL_RXEN) || !accept(m, frame)) {
		m->st.rx_filtered++;
		return -1;
	}
	struct rx_class c;
	classify(m, frame, len, &c);
	uint32_t q = 0;
	if (c.rss_type) {
		uint32_t e = c.hash & 0x7F;
		q = (m->regs[R_RETA(e / 4) / 4] >> (8 * (e % 4))) & 0xF; /* 82599: low 4 bits */
	}
	uint32_t block = RXQ(q, 0);
	if (!queue_enabled(m, block)) {
		cor_add(m, R_MPC(0), 1);
		m->st.rx_filtered++;
		return -1;
	}
	/* The frame as the NIC stores it: FCS stripped or kept. */
	uint8_t crc[4];
	uint32_t fcs = nic_model_crc32(frame, len);
	memcpy(crc, &fcs, 4);
	uint32_t data_len = (hl & HLREG0_RXCRCSTRP) ? len : len + 4;
	uint32_t srrctl = REG(m, block + Q_SRRCTL);
	uint32_t bsize = (srrctl & SRRCTL_BSIZEPACKET_MASK) * 1024;
	if (!bsize) {
		fail(m, "rx queue %u: SRRCTL.BSIZEPACKET is 0", q);
		return -1;
	}
	uint32_t needed = (data_len + bsize - 1) / bsize;
	if (ixgbe_model_rx_room(m, (uint16_t)q) < needed) {
		if (srrctl & SRRCTL_DROP_EN) {
			if (q < 16)
				cor_add(m, RXQ(16 + q, Q_STAT0), 1); /* QPRDC(q) */
		} else {
			cor_add(m, R_MPC(0), 1);
		}
		m->st.rx_dropped++;
		return -1;
	}
	uint32_t count = REG(m, block + Q_LEN) / 16;
	uint64_t lo = c.rss_type | c.ptype | (uint64_t)c.hash << 32;
	for (uint32_t done = 0; done < data_len;) {
		uint32_t head = REG(m, block + Q_HEAD);
		volatile uint64_t *d = desc(m, block, head);
		if (!d)
			return -1;
		uint64_t pkt_addr = d[0], hdr_addr = d[1];
		if (hdr_addr & 1)
			fail(m, "rx queue %u descriptor %u handed over with DD set (hdr_addr not zeroed)", q, head);
		uint32_t k = MIN(bsize, data_len - done);
		uint8_t *dst = dma(m, pkt_addr, k, "rx data buffer");
		if (!dst)
			return -1;
		for (uint32_t i = 0; i < k; i++, done++)
			dst[i] = done < len ? frame[done] : crc[done - len];
		bool eop = done == data_len;
		rx_writeback(m, q, block, head, lo, RXD_STAT_DD | (eop ? RXD_STAT_EOP : 0) | (uint64_t)k << RXD_LEN_SHIFT);
		head = (head + 1) % count;
		if (head == 0)
			m->st.rx_wraps[q % 16]++;
		REG(m, block + Q_HEAD) = head;
	}
	cor_add(m, R_GPRC, 1);
	m->gorc += len + 4;
	if (frame[0] & 1)
		cor_add(m, memcmp(frame, "\xff\xff\xff\xff\xff\xff", 6) ? R_MPRC : R_BPRC, 1);
	if (q < 16) {
		cor_add(m, RXQ(q, Q_STAT0), 1);
		cor_add(m, RXQ(q, Q_STAT1), len + 4);
	}
	m->st.rx_frames++;
	return (int)q;
}

/* ---- the model's life ---- */

static void io_close(struct pci_io *io)
{
	struct ixgbe_model *m = container_of(io, struct ixgbe_model, base.io);
	for (uint32_t n = 0; n < N_RXQ; n++)
		if (queue_enabled(m, RXQ(n, 0)))
			fail(m, "closed with rx queue %u still enabled", n);
	m->base.open = false;
}

static const struct pci_io_ops model_ops = {
	.read32 = io_read32,
	.write32 = io_write32,
	.dma_map = nic_model_dma_map,
	.dma_unmap = nic_model_dma_unmap,
	.irq_set = nic_model_irq_set,
	.close = io_close,
};

struct ixgbe_model *ixgbe_model_create(const char *addr, const uint8_t mac[6])
{
	struct ixgbe_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	if (nic_model_register(&m->base, &model_ops, addr, 0x10FB, IOVA_OFFSET)) {
		free(m);
		return NULL;
	}
	memcpy(m->mac, mac, 6);
	m->cable = true;
	build_map(m);
	device_reset(m); /* powered up long ago: the auto-read and DMA init done */
	REG(m, R_EEC) = EEC_ARD;
	REG(m, R_RDRXCTL) = RDRXCTL_DMAIDONE;
	m->st.resets = 0;
	return m;
}

void ixgbe_model_never(struct ixgbe_model *m, uint32_t steps)
{
	m->never = steps;
}

/* The 82599 SFP+ device IDs: the same MAC with an SFP+ cage (SFI). */
static const uint16_t sfp_ids[] = { 0x10FB, 0x1507, 0x154D, 0x1557, 0x1529 };

bool ixgbe_model_knows(uint16_t device)
{
	for (size_t i = 0; i < ARRAY_LEN(sfp_ids); i++)
		if (sfp_ids[i] == device)
			return true;
	return false;
}

void ixgbe_model_set_device_id(struct ixgbe_model *m, uint16_t device)
{
	if (!ixgbe_model_knows(device)) {
		fail(m, "device ID 8086:%04x is not one the model can be (an 82599 SFP+ port)", device);
		return;
	}
	m->base.io.device = device;
}

void ixgbe_model_destroy(struct ixgbe_model *m)
{
	for (uint32_t n = 0; n < N_TXQ; n++)
		nic_model_txq_stop(&m->txa[n]);
	nic_model_unregister(&m->base);
	free(m);
}

struct nic_model *ixgbe_model_nic(struct ixgbe_model *m)
{
	return &m->base;
}

void ixgbe_model_tx_hold(struct ixgbe_model *m, bool hold)
{
	m->tx_hold = hold;
	if (!hold) /* the partner takes everything it held at once */
		for (uint32_t n = 0; n < N_TXQ; n++)
			tx_run(m, n, true);
}

uint32_t ixgbe_model_tick(struct ixgbe_model *m)
{
	nic_model_tick_time(&m->base);
	irq_eval(m); /* causes whose throttle interval ended */
	uint32_t pending = 0;
	for (uint32_t n = 0; n < N_TXQ; n++) {
		if (!m->txa[n].qlen)
			continue;
		tx_run(m, n, false);
		uint32_t head = REG(m, TXQ(n, Q_HEAD));
		if (!m->tx_hold)
			pending += (m->txa[n].tail + m->txa[n].qlen - head) % m->txa[n].qlen;
	}
	return pending;
}

void ixgbe_model_set_cable(struct ixgbe_model *m, bool connected)
{
	m->cable = connected;
}

uint32_t ixgbe_model_peek(const struct ixgbe_model *m, uint32_t reg)
{
	return reg < BAR_SIZE ? m->regs[canon(reg) / 4] : 0;
}

void ixgbe_model_stats(const struct ixgbe_model *m, struct ixgbe_model_stats *st)
{
	*st = m->st;
}
