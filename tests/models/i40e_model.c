/* The XL710 PF device model: see i40e_model.h. Offsets, bits, context
 * fields and descriptor layouts are the model's own (i40e_model_regs.h, from
 * the X710/XL710 datasheet), never drivers/i40e/i40e_regs.h. Where the datasheet
 * names a structure but not its layout (VSI properties, switch elements,
 * link status response, PTYPE values), the model follows the firmware
 * interface as DPDK's headers describe it; those spots say so.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/pci/pci.h"
#include "base/toeplitz.h"
#include "base/util.h"
#include "tests/models/i40e_model.h"
#include "tests/models/i40e_model_regs.h"
#include "tests/models/nic_model.h"

#define BAR_SIZE 0x400000u
#define NQ I40E_MODEL_N_QUEUES
#define TX_FRAME_MAX 16384
#define IOVA_OFFSET 0x200000000000ll

enum { A_KNOWN = 1, A_RO = 2 };

struct queue {
	bool enabled;           /* QENA_STAT */
	uint32_t pending;       /* reads until STAT follows REQ */
	uint64_t base;
	uint32_t qlen, head, tail, dbuff, rxmax, rdylist;
	bool crcstrip;
	uint32_t txlen;
	bool icrc;
	uint8_t txbuf[TX_FRAME_MAX];
};

/* Receive write-backs held until their cache line is complete or the
 * queue's ITR expires with WB_ON_ITR (docs/nic.md 4): slot and quadwords. */
struct rxwb {
	uint32_t n;
	struct {
		uint32_t slot;
		uint64_t q0, q1;
	} d[RX_WB_LINE];
	uint64_t itr_due_ns; /* 0: no ITR running */
};

/* Transmit DD write-backs held the same way: slot and its done quadword. */
struct txwb {
	uint32_t n;
	struct {
		uint32_t slot;
		uint64_t q1;
	} d[TX_WB_LINE];
	uint64_t itr_due_ns; /* 0: no ITR running */
};

/* What a device ID's port links at (get PHY abilities, get link status). */
struct family {
	uint16_t device;
	uint8_t speed;        /* SPEED_* */
	uint8_t phy_type;     /* get link status: the PHY type's number */
	uint32_t phy_types;   /* get PHY abilities: bitmap of PHY types 0..31 */
	uint8_t phy_type_ext; /* 25G types */
};

struct i40e_model {
	struct nic_model base;
	uint32_t *regs;
	uint8_t *attr;
	/* time (nic_model.h): each instant at which a step is done */
	uint32_t never;       /* I40E_MODEL_STEP_* that never complete */
	uint64_t devstate_ns, uld_ns, pfswr_ns, aq_due_ns, link_ns;
	bool in_reset;
	bool link_enabled;    /* set PHY config: ENABLE_LINK (the NVM's default: on) */
	bool link_was;        /* the link as last reported to the driver */
	uint16_t phy_int_mask;
	const struct family *fam;
	struct rxwb wb[NQ];
	struct txwb txwb[NQ];
	bool cable, tx_hold, aq_stall;
	bool sd_valid;
	uint64_t sd_pa;
	uint16_t inject_op, inject_rc;
	uint32_t inject_n;
	uint32_t ena_delay;
	uint8_t mac[6];
	bool txpre_qdis[NQ];
	struct queue rxq[NQ], txq[NQ];
	struct nic_model_txq txa[NQ]; /* asynchronous transmit (nic_model.h) */
	struct i40e_model_stats st;
	/* Vectors 1..NQ (index v - 1): no message before throttle_ns (the
	 * ITR), a software-triggered event pending. */
	uint64_t throttle_ns[NQ];
	bool swint[NQ];
};

/* The common part (tests/models/nic_model.h), through the model. */
#define fail(m, ...) nic_model_fail(&(m)->base, __VA_ARGS__)
#define dma(m, iova, len, what) nic_model_dma(&(m)->base, iova, len, what)

#define REG(m, off) ((m)->regs[(off) / 4])

static void mark(struct i40e_model *m, uint32_t off, uint8_t a)
{
	m->attr[off / 4] = (uint8_t)(A_KNOWN | a);
}

static void build_map(struct i40e_model *m)
{
	static const uint32_t rw[] = { R_ATQBAL, R_ARQBAL, R_ATQBAH, R_ARQBAH, R_ATQLEN, R_ARQLEN, R_ATQH, R_ARQH,
				       R_ATQT, R_ARQT, R_PFGEN_CTRL, R_PFINT_DYN_CTL0, R_PFINT_ICR0_ENA, R_SDCMD,
				       R_SDDATALOW, R_SDDATAHIGH, R_PDINV, R_GLQF_CTL, R_PFQF_CTL_0,
				       R_PFINT_LNKLST0, R_PFINT_ITR0(0), R_PFINT_ITR0(1), R_PFINT_ITR0(2) };
	static const uint32_t ro[] = { R_GLGEN_RSTAT, R_GLNVM_ULD, R_PF_FUNC_RID, R_PFGEN_PORTNUM, R_PFLAN_QALLOC,
				       R_LANQMAX, R_LANTXOBJSZ, R_LANRXOBJSZ, S_GORCL, S_GORCH, S_UPRCL, S_UPRCH,
				       S_MPRCL, S_MPRCH, S_BPRCL, S_BPRCH, S_RDPC, S_GOTCL, S_GOTCH, S_UPTCL,
				       S_UPTCH, S_MPTCL, S_BPTCL, S_CRCERRS, S_RLEC, S_ILLERRC, S_RUC, S_ROC,
				       S_MLFC, S_TDOLD };
	for (size_t i = 0; i < ARRAY_LEN(rw); i++)
		mark(m, rw[i], 0);
	for (size_t i = 0; i < ARRAY_LEN(ro); i++)
		mark(m, ro[i], A_RO);
	for (uint32_t q = 0; q < NQ; q++) {
		mark(m, R_QTX_ENA(q), 0);
		mark(m, R_QTX_CTL(q), 0);
		mark(m, R_QTX_HEAD(q), 0);
		mark(m, R_QTX_TAIL(q), 0);
		mark(m, R_QRX_ENA(q), 0);
		mark(m, R_QRX_TAIL(q), 0);
		mark(m, R_QINT_RQCTL(q), 0);
		mark(m, R_QINT_TQCTL(q), 0);
		mark(m, R_PFINT_DYN_CTLN(q), 0);
		mark(m, R_PFINT_LNKLSTN(q), 0);
		for (uint32_t i = 0; i < 3; i++)
			mark(m, R_PFINT_ITRN(i, q), 0);
	}
	for (uint32_t i = 0; i < 12; i++)
		mark(m, R_TXPRE_QDIS(i), 0);
	for (uint32_t f = 0; f < 16; f++) {
		mark(m, R_LANTXBASE(f), 0);
		mark(m, R_LANTXCNT(f), 0);
		mark(m, R_LANRXBASE(f), 0);
		mark(m, R_LANRXCNT(f), 0);
	}
	for (uint32_t i = 0; i < 2; i++)
		mark(m, R_HENA(i), 0);
	for (uint32_t i = 0; i < 13; i++)
		mark(m, R_HKEY(i), 0);
	for (uint32_t i = 0; i < 128; i++)
		mark(m, R_HLUT(i), 0);
}


static bool is_stat(uint32_t off)
{
	return off >= 0x300000 && off <= S_TDOLD;
}

/* PF software reset: the function's registers and queues back to their
 * defaults; the port counters (global, free running) keep counting. */
static void pf_reset(struct i40e_model *m)
{
	for (uint32_t off = 0; off < BAR_SIZE; off += 4)
		if (!is_stat(off))
			REG(m, off) = 0;
	REG(m, R_PFLAN_QALLOC) = I40E_MODEL_BASE_QUEUE | (uint32_t)(I40E_MODEL_BASE_QUEUE + NQ - 1) << 16 | 1u << 31;
	REG(m, R_LANQMAX) = 1536;
	REG(m, R_LANTXOBJSZ) = 7; /* 128-byte TX contexts */
	REG(m, R_LANRXOBJSZ) = 5; /* 32-byte RX contexts */
	memset(m->rxq, 0, sizeof(m->rxq));
	memset(m->txq, 0, sizeof(m->txq));
	for (uint32_t q = 0; q < NQ; q++)
		nic_model_txq_stop(&m->txa[q]);
	for (uint32_t q = 0; q < NQ; q++)
		m->txpre_qdis[q] = true;
	m->sd_valid = false;
	memset(m->wb, 0, sizeof(m->wb));
	memset(m->txwb, 0, sizeof(m->txwb));
	memset(m->throttle_ns, 0, sizeof(m->throttle_ns));
	memset(m->swint, 0, sizeof(m->swint));
	m->phy_int_mask = 0;
	m->st.lse = m->st.promisc_unicast = m->st.promisc_multicast = m->st.promisc_broadcast = false;
	m->st.vsi_queues = 0;
	m->st.max_frame = 9728;
	m->st.resets++;
}

/* ---- time (nic_model.h) ----
 *
 * Delays drawn from the seeded generator, inside the bounds the public
 * drivers wait (Linux: the NVM load 200 times 10-20 ms, PFSWR 200 times
 * 1-2 ms, an admin command 250 ms) and sluice's (drivers/i40e/
 * i40e_private.h). The model starts coming out of a global reset. */
#define DEVSTATE_NS_HI 500000000ull  /* the global reset: 0 .. 500 ms after power-up */
#define ULD_NS_LO 10000000ull         /* NVM configuration loaded 10 ms .. 2 s after it */
#define ULD_NS_HI 2000000000ull
#define PFSWR_NS_LO 1000000ull        /* PFSWR self-clears 1 .. 200 ms after the write */
#define PFSWR_NS_HI 200000000ull
#define AQ_NS_LO 10000ull             /* firmware answers a command in 10 us .. 20 ms */
#define AQ_NS_HI 20000000ull
#define LINK_NS_LO 10000000ull        /* link up 10 .. 500 ms after the PHY is (re)configured */
#define LINK_NS_HI 500000000ull
#define NEVER UINT64_MAX

static uint64_t step_at(struct i40e_model *m, uint32_t step, uint64_t from, uint64_t lo, uint64_t hi)
{
	uint64_t d = nic_model_delay_ns(lo, hi);
	return (m->never & step) || from == NEVER ? NEVER : from + d;
}

static bool link_up(const struct i40e_model *m)
{
	return m->cable && m->link_enabled && nic_model_now_ns() >= m->link_ns;
}

static void aq_run(struct i40e_model *m);
static void arq_link_event(struct i40e_model *m);
static void rx_flush(struct i40e_model *m, uint32_t q);
static void irq_eval(struct i40e_model *m, uint32_t v);
static void rx_cause(struct i40e_model *m, uint32_t q);
static void dyn_ctln_write(struct i40e_model *m, uint32_t n, uint32_t v);
static void tx_flush(struct i40e_model *m, uint32_t q);

/* What time has completed since the last access: the global reset, the NVM
 * load, the PF reset, firmware's answers, the link (an event when it
 * changed), receive and transmit ITRs. */
static void time_settle(struct i40e_model *m)
{
	uint64_t now = nic_model_now_ns();
	REG(m, R_GLGEN_RSTAT) = now < m->devstate_ns ? 1 : 0;
	REG(m, R_GLNVM_ULD) = now >= m->uld_ns ? GLNVM_ULD_CORE_GLOBAL_DONE : 0;
	if (m->in_reset && now >= m->pfswr_ns) {
		m->in_reset = false;
		REG(m, R_PFGEN_CTRL) &= ~PFGEN_CTRL_PFSWR;
	}
	if (!m->in_reset && (REG(m, R_ATQLEN) & AQLEN_ENABLE))
		aq_run(m);
	if (link_up(m) != m->link_was)
		arq_link_event(m);
	for (uint32_t q = 0; q < NQ; q++)
		if (m->wb[q].itr_due_ns && now >= m->wb[q].itr_due_ns)
			rx_flush(m, q);
	for (uint32_t q = 0; q < NQ; q++)
		if (m->txwb[q].itr_due_ns && now >= m->txwb[q].itr_due_ns)
			tx_flush(m, q);
	for (uint32_t v = 1; v < m->base.n_vectors && v <= NQ; v++)
		irq_eval(m, v); /* events whose ITR expired */
}

static void add48(struct i40e_model *m, uint32_t lo, uint32_t hi, uint64_t v)
{
	uint64_t x = ((uint64_t)REG(m, hi) << 32 | REG(m, lo)) + v;
	REG(m, lo) = (uint32_t)x;
	if (hi)
		REG(m, hi) = (uint32_t)(x >> 32) & 0xFFFF;
}

/* ---- admin queue (docs/nic.md 3.4, 4) ---- */

/* The descriptor as firmware reads it. */
struct aqd {
	uint16_t flags, opcode, datalen, retval;
	uint32_t cookie_high, cookie_low;
	uint8_t p[16];
};

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static void put16le(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
}

static void put32le(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* The indirect buffer of c, at least min bytes, in the direction given. */
static uint8_t *aq_buf(struct i40e_model *m, const struct aqd *c, uint32_t min, bool to_fw)
{
	if (!(c->flags & AQ_BUF) || c->datalen < min || !(c->flags & AQ_RD) != !to_fw) {
		fail(m, "admin command 0x%04x: indirect buffer missing, shorter than %u bytes or without %s", c->opcode,
		     min, to_fw ? "RD" : "RD clear");
		return NULL;
	}
	uint64_t addr = (uint64_t)(get16(c->p + 8) | (uint32_t)get16(c->p + 10) << 16) << 32 |
			(get16(c->p + 12) | (uint32_t)get16(c->p + 14) << 16);
	return dma(m, addr, c->datalen, "admin command buffer");
}

static void link_params(struct i40e_model *m, uint8_t *p)
{
	bool up = link_up(m);
	m->link_was = up;
	p[2] = m->fam->phy_type;
	p[3] = up ? m->fam->speed : 0;
	p[4] = (up ? 1u : 0) | (m->cable ? 1u << 6 : 0); /* link up, media available */
	put16le(p + 8, (uint16_t)m->st.max_frame);
}

static uint16_t aq_exec(struct i40e_model *m, struct aqd *c)
{
	uint8_t *b;
	if (m->inject_n && c->opcode == m->inject_op) {
		m->inject_n--;
		m->st.aq_error_completions++;
		return m->inject_rc;
	}
	switch (c->opcode) {
	case AQC_GET_VERSION: /* get version */
		memset(c->p, 0, 16);
		put32le(c->p, 0x00010002);
		put32le(c->p + 4, 0x5e1a);
		put16le(c->p + 8, I40E_MODEL_FW_MAJOR);
		put16le(c->p + 10, I40E_MODEL_FW_MINOR);
		put16le(c->p + 12, I40E_MODEL_API_MAJOR);
		put16le(c->p + 14, I40E_MODEL_API_MINOR);
		return 0;
	case AQC_QUEUE_SHUTDOWN: /* queue shutdown */
	case AQC_CLEAR_PXE: /* clear PXE mode */
		return 0;
	case AQC_LIST_FUNC_CAPS: { /* list function capabilities */
		static const uint32_t caps[][4] = { /* id, number, logical_id, phys_id */
			{ 0x0040, I40E_MODEL_LUT_SIZE, 6, 0 },
			{ 0x0041, NQ, 0, I40E_MODEL_BASE_QUEUE },
			{ 0x0042, NQ, 0, I40E_MODEL_BASE_QUEUE },
			{ 0x0043, 129, 0, 0 },
		};
		if (!(b = aq_buf(m, c, sizeof(caps) / 16 * 32, false)))
			return RC_EINVAL;
		memset(b, 0, c->datalen);
		for (uint32_t i = 0; i < ARRAY_LEN(caps); i++) {
			put16le(b + 32 * i, (uint16_t)caps[i][0]);
			b[32 * i + 2] = 1;
			put32le(b + 32 * i + 4, caps[i][1]);
			put32le(b + 32 * i + 8, caps[i][2]);
			put32le(b + 32 * i + 12, caps[i][3]);
		}
		put32le(c->p + 4, ARRAY_LEN(caps));
		c->datalen = (uint16_t)(ARRAY_LEN(caps) * 32);
		return 0;
	}
	case AQC_MAC_ADDRESS_READ: /* MAC address read: LAN MAC at 0, port MAC at 12 */
		if (!(b = aq_buf(m, c, 24, false)))
			return RC_EINVAL;
		memcpy(b, m->mac, 6);
		memcpy(b + 12, m->mac, 6);
		return 0;
	case AQC_GET_SWITCH_CONFIG: { /* get switch config: header, then MAC, PF and VSI elements */
		static const uint16_t el[][2] = { { 0x01, 2 }, { 0x10, 16 }, { 0x13, I40E_MODEL_VSI_SEID } };
		if (!(b = aq_buf(m, c, 16 + 16 * ARRAY_LEN(el), false)))
			return RC_EINVAL;
		memset(b, 0, 16 + 16 * ARRAY_LEN(el));
		put16le(b, ARRAY_LEN(el));
		put16le(b + 2, ARRAY_LEN(el));
		for (uint32_t i = 0; i < ARRAY_LEN(el); i++) {
			b[16 + 16 * i] = (uint8_t)el[i][0];
			put16le(b + 16 + 16 * i + 2, el[i][1]);
		}
		return 0;
	}
	case AQC_UPDATE_VSI: { /* update VSI parameters: the queue map of TC0 */
		if (get16(c->p) != I40E_MODEL_VSI_SEID)
			return RC_EINVAL;
		if (!(b = aq_buf(m, c, 128, true)))
			return RC_EINVAL;
		if (get16(b) & (1u << 6)) {
			uint16_t tc0 = get16(b + 62);
			uint32_t count = 1u << ((tc0 >> 9) & 0xF);
			if ((tc0 & 0x1FF) || get16(b + 30) != 0 || count > NQ)
				return RC_EINVAL;
			m->st.vsi_queues = count;
		}
		return 0;
	}
	case AQC_GET_VSI_PARAMS: /* get VSI parameters */
		if (get16(c->p) != I40E_MODEL_VSI_SEID)
			return RC_EINVAL;
		if (!(b = aq_buf(m, c, 128, false)))
			return RC_EINVAL;
		memset(b, 0, 128);
		put16le(b, 1u << 6);
		uint32_t lg = 0;
		while ((1u << lg) < m->st.vsi_queues)
			lg++;
		put16le(b + 62, (uint16_t)(lg << 9));
		put16le(b + 96, I40E_MODEL_QS_HANDLE);
		return 0;
	case AQC_SET_VSI_PROMISC: { /* set VSI promiscuous modes */
		uint16_t flags = get16(c->p), valid = get16(c->p + 2);
		if (get16(c->p + 4) != I40E_MODEL_VSI_SEID)
			return RC_EINVAL;
		if (valid & PROMISC_UNICAST)
			m->st.promisc_unicast = flags & PROMISC_UNICAST;
		if (valid & PROMISC_MULTICAST)
			m->st.promisc_multicast = flags & PROMISC_MULTICAST;
		if (valid & PROMISC_BROADCAST)
			m->st.promisc_broadcast = flags & PROMISC_BROADCAST;
		return 0;
	}
	case AQC_SET_MAC_CONFIG: { /* set MAC config */
		uint16_t mfs = get16(c->p);
		if (mfs < 64 || mfs > 9728)
			return RC_EINVAL;
		m->st.max_frame = mfs;
		return 0;
	}
	case AQC_GET_PHY_ABILITIES: /* the PHY's types and speeds, the NVM's or the current ones */
		if (!(b = aq_buf(m, c, PHY_ABILITIES_SIZE, false)))
			return RC_EINVAL;
		memset(b, 0, PHY_ABILITIES_SIZE);
		put32le(b, m->fam->phy_types);
		b[4] = m->fam->speed;
		b[5] = PHY_ENABLE_AN | (m->link_enabled ? PHY_ENABLE_LINK : 0);
		b[13] = m->fam->phy_type_ext;
		m->st.phy_abilities_asked++;
		return 0;
	case AQC_SET_PHY_CONFIG: { /* direct: the types and speeds to link at, link and AN enables */
		uint32_t types = (uint32_t)get16(c->p) | (uint32_t)get16(c->p + 2) << 16;
		uint8_t speed = c->p[4], ab = c->p[5], ext = c->p[13];
		if ((types & ~m->fam->phy_types) || (ext & ~m->fam->phy_type_ext) || (speed & ~m->fam->speed) ||
		    (!types && !ext && (ab & PHY_ENABLE_LINK)) || ((ab & PHY_ENABLE_LINK) && !(speed & m->fam->speed)))
			return RC_EINVAL;
		m->st.phy_speeds = speed;
		m->st.phy_config_set++;
		m->link_enabled = ab & PHY_ENABLE_LINK;
		if (ab & PHY_ENABLE_ATOMIC) /* the link restarts with the new configuration */
			m->link_ns = step_at(m, I40E_MODEL_STEP_LINK, nic_model_now_ns(), LINK_NS_LO, LINK_NS_HI);
		return 0;
	}
	case AQC_SET_PHY_INT_MASK:
		m->phy_int_mask = get16(c->p + 8);
		m->st.phy_int_mask = m->phy_int_mask;
		return 0;
	case AQC_GET_LINK_STATUS: /* get link status, events on (3) or off (2) */
		if ((get16(c->p) & 3) == 3)
			m->st.lse = true;
		else if ((get16(c->p) & 3) == 2)
			m->st.lse = false;
		memset(c->p + 2, 0, 14);
		link_params(m, c->p);
		return 0;
	default:
		return RC_ENOSYS;
	}
}

static bool aq_ring_ok(struct i40e_model *m, const char *name, uint32_t bal, uint32_t bah, uint32_t len)
{
	uint64_t base = (uint64_t)REG(m, bah) << 32 | REG(m, bal);
	uint32_t n = REG(m, len) & AQLEN_MASK;
	if (base & 63) {
		fail(m, "%s ring base 0x%" PRIx64 " is not 64-byte aligned", name, base);
		return false;
	}
	return dma(m, base, 32ull * n, name) != NULL;
}

/* Firmware answers each command from ATQH to ATQT a delay after it became
 * the next to answer. */
static void aq_run(struct i40e_model *m)
{
	if (m->aq_stall)
		return;
	uint32_t n = REG(m, R_ATQLEN) & AQLEN_MASK;
	uint64_t base = (uint64_t)REG(m, R_ATQBAH) << 32 | REG(m, R_ATQBAL);
	while (REG(m, R_ATQH) != REG(m, R_ATQT)) {
		if (!m->aq_due_ns)
			m->aq_due_ns = step_at(m, I40E_MODEL_STEP_FIRMWARE, nic_model_now_ns(), AQ_NS_LO, AQ_NS_HI);
		if (nic_model_now_ns() < m->aq_due_ns)
			return;
		m->aq_due_ns = 0;
		uint32_t h = REG(m, R_ATQH);
		uint8_t *d = dma(m, base + 32ull * h, 32, "admin command descriptor");
		if (!d)
			return;
		struct aqd c;
		memcpy(&c, d, sizeof(c));
		m->st.aq_commands++;
		m->st.last_opcode = c.opcode;
		uint16_t rc = aq_exec(m, &c);
		c.retval = rc;
		c.flags = (uint16_t)(c.flags | AQ_DD | AQ_CMP | (rc ? AQ_ERR : 0));
		memcpy(d, &c, sizeof(c));
		REG(m, R_ATQH) = (h + 1) % n;
	}
}

/* A link event on the ARQ (firmware's side of the admin queue's receive queue, docs/nic.md 3.4). */
static void arq_link_event(struct i40e_model *m)
{
	if (!m->st.lse || (m->phy_int_mask & PHY_EVENT_LINK_UPDOWN) || !(REG(m, R_ARQLEN) & AQLEN_ENABLE)) {
		m->link_was = link_up(m); /* nobody to tell */
		return;
	}
	uint32_t n = REG(m, R_ARQLEN) & 0x3FF, h = REG(m, R_ARQH);
	if (h == REG(m, R_ARQT)) {
		REG(m, R_ARQLEN) |= AQLEN_OVFL; /* OVFL: no buffer posted */
		return;
	}
	uint64_t base = (uint64_t)REG(m, R_ARQBAH) << 32 | REG(m, R_ARQBAL);
	uint8_t *d = dma(m, base + 32ull * h, 32, "admin event descriptor");
	if (!d)
		return;
	struct aqd c;
	memcpy(&c, d, sizeof(c));
	if (!(c.flags & AQ_BUF) || !c.datalen) {
		fail(m, "ARQ descriptor %u given to firmware without a buffer", h);
		return;
	}
	c.opcode = AQC_GET_LINK_STATUS;
	c.retval = 0;
	c.flags = (uint16_t)(c.flags | AQ_DD | AQ_CMP);
	memset(c.p, 0, 8);
	link_params(m, c.p);
	memcpy(d, &c, 24); /* flags .. params[0..7]; the buffer address stays */
	REG(m, R_ARQH) = (h + 1) % n;
	m->st.arq_events++;
}

/* ---- LAN queue contexts (docs/nic.md 3.5) ---- */

static uint64_t ctx_get(const uint8_t *ctx, uint32_t lsb, uint32_t width)
{
	uint64_t v = 0;
	for (uint32_t i = 0; i < width; i++)
		v |= (uint64_t)((ctx[(lsb + i) / 8] >> ((lsb + i) % 8)) & 1) << i;
	return v;
}

/* The context object of queue q (PF 0), or NULL (reported). */
static const uint8_t *ctx_find(struct i40e_model *m, bool rx, uint32_t q)
{
	const char *name = rx ? "rx" : "tx";
	if (!m->sd_valid) {
		fail(m, "%s queue %u enabled without a valid HMC segment descriptor", name, q);
		return NULL;
	}
	uint32_t cnt = REG(m, rx ? R_LANRXCNT(0) : R_LANTXCNT(0));
	if (q >= cnt) {
		fail(m, "%s queue %u enabled beyond GLHMC_LAN%sCNT %u", name, q, rx ? "RX" : "TX", cnt);
		return NULL;
	}
	uint64_t off = (uint64_t)REG(m, rx ? R_LANRXBASE(0) : R_LANTXBASE(0)) * 512 + (uint64_t)q * (rx ? 32 : 128);
	return dma(m, m->sd_pa + off, rx ? 32 : 128, rx ? "rx queue context (HMC)" : "tx queue context (HMC)");
}

static bool qlen_ok(struct i40e_model *m, const char *name, uint32_t q, uint32_t qlen, uint32_t head)
{
	if (qlen < 32 || qlen > 8160) {
		fail(m, "%s queue %u context: qlen %u out of range (32..8160)", name, q, qlen);
		return false;
	}
	if (head >= qlen) {
		fail(m, "%s queue %u context: head %u past the ring of %u", name, q, head, qlen);
		return false;
	}
	return true;
}

static bool rx_load(struct i40e_model *m, uint32_t q)
{
	const uint8_t *c = ctx_find(m, true, q);
	if (!c)
		return false;
	struct queue *Q = &m->rxq[q];
	uint32_t head = (uint32_t)ctx_get(c, RXC_HEAD), qlen = (uint32_t)ctx_get(c, RXC_QLEN);
	uint32_t dbuff = (uint32_t)ctx_get(c, RXC_DBUFF) * 128, rxmax = (uint32_t)ctx_get(c, RXC_RXMAX);
	if (!qlen_ok(m, "rx", q, qlen, head))
		return false;
	if (!dbuff || rxmax < 64 || rxmax > 9728) {
		fail(m, "rx queue %u context: dbuff %u or rxmax %u out of range", q, dbuff, rxmax);
		return false;
	}
	if (ctx_get(c, RXC_DSIZE) != 1 || ctx_get(c, RXC_DTYPE) != 0) {
		fail(m, "rx queue %u context: dsize/dtype out of range (the model does 32-byte, no split)", q);
		return false;
	}
	if (ctx_get(c, RXC_PREFENA) != 1) {
		fail(m, "rx queue %u context: prefena is 0, must be 1", q);
		return false;
	}
	uint64_t base = ctx_get(c, RXC_BASE) << 7;
	if (!dma(m, base, 32ull * qlen, "rx descriptor ring"))
		return false;
	uint32_t tail = REG(m, R_QRX_TAIL(q));
	if (tail >= qlen) {
		fail(m, "rx queue %u: tail %u past the ring of %u descriptors", q, tail, qlen);
		return false;
	}
	*Q = (struct queue){ .base = base, .qlen = qlen, .head = head, .tail = tail, .dbuff = dbuff,
			     .rxmax = rxmax, .crcstrip = ctx_get(c, RXC_CRCSTRIP) };
	return true;
}

static bool tx_load(struct i40e_model *m, uint32_t q)
{
	uint32_t ctl = REG(m, R_QTX_CTL(q));
	if ((ctl & 3) != QTX_CTL_PFQUEUE || ((ctl >> 2) & 0xF) != 0) {
		fail(m, "tx queue %u enabled before QTX_CTL names it a queue of PF 0 (0x%x)", q, ctl);
		return false;
	}
	if (m->txpre_qdis[q]) {
		fail(m, "tx queue %u enabled while GLLAN_TXPRE_QDIS still disables it", q);
		return false;
	}
	const uint8_t *c = ctx_find(m, false, q);
	if (!c)
		return false;
	uint32_t head = (uint32_t)ctx_get(c, TXC_HEAD), qlen = (uint32_t)ctx_get(c, TXC_QLEN);
	uint32_t rdylist = (uint32_t)ctx_get(c, TXC_RDYLIST);
	if (!qlen_ok(m, "tx", q, qlen, head))
		return false;
	if (rdylist != I40E_MODEL_QS_HANDLE) {
		fail(m, "tx queue %u context: rdylist %u out of range (the VSI's queue-set handle is %u)", q, rdylist,
		     I40E_MODEL_QS_HANDLE);
		return false;
	}
	uint64_t base = ctx_get(c, TXC_BASE) << 7;
	if (!dma(m, base, 16ull * qlen, "tx descriptor ring"))
		return false;
	uint32_t hreg = REG(m, R_QTX_HEAD(q));
	if (hreg >= qlen) {
		fail(m, "tx queue %u: QTX_HEAD %u past the ring", q, hreg);
		return false;
	}
	struct queue *Q = &m->txq[q];
	Q->base = base, Q->qlen = qlen, Q->head = hreg, Q->tail = hreg, Q->rdylist = rdylist, Q->txlen = 0;
	if (nic_model_txq_start(&m->txa[q], qlen, 16, hreg)) {
		fail(m, "tx queue %u: out of memory", q);
		return false;
	}
	return true;
}

static void settle(struct i40e_model *m, bool rx, uint32_t q)
{
	uint32_t reg = rx ? R_QRX_ENA(q) : R_QTX_ENA(q);
	struct queue *Q = rx ? &m->rxq[q] : &m->txq[q];
	Q->enabled = REG(m, reg) & ENA_REQ;
	REG(m, reg) = (REG(m, reg) & ~ENA_STAT) | (Q->enabled ? ENA_STAT : 0);
	if (rx && !Q->enabled) /* a queue stopping writes back what it holds */
		rx_flush(m, q);
	if (!rx && !Q->enabled) {
		tx_flush(m, q);
		nic_model_txq_stop(&m->txa[q]);
	}
}

static void ena_write(struct i40e_model *m, bool rx, uint32_t q, uint32_t v)
{
	uint32_t reg = rx ? R_QRX_ENA(q) : R_QTX_ENA(q);
	struct queue *Q = rx ? &m->rxq[q] : &m->txq[q];
	if (Q->pending) {
		fail(m, "%s queue %u: enable register written while a request is in flight (QENA_REQ != QENA_STAT)",
		     rx ? "rx" : "tx", q);
		return;
	}
	bool was = REG(m, reg) & ENA_REQ, now = v & ENA_REQ;
	if (now && !was && !(rx ? rx_load(m, q) : tx_load(m, q)))
		return;
	REG(m, reg) = (REG(m, reg) & ENA_STAT) | (v & (ENA_REQ | 2u));
	if (now != was) {
		Q->pending = m->ena_delay;
		if (!Q->pending)
			settle(m, rx, q);
	}
}

/* ---- tx (docs/nic.md 3.8, 4) ---- */

static void tx_emit(struct i40e_model *m, uint32_t q)
{
	struct queue *Q = &m->txq[q];
	uint32_t len = Q->txlen;
	if (len < 60) { /* the MAC pads short frames */
		memset(Q->txbuf + len, 0, 60 - len);
		len = 60;
	}
	if (!Q->icrc)
		m->st.tx_no_crc++;
	add48(m, S_GOTCL, S_GOTCH, len + 4);
	if (!(Q->txbuf[0] & 1))
		add48(m, S_UPTCL, S_UPTCH, 1);
	m->st.tx_frames++;
	nic_model_emit(&m->base, (uint16_t)q, Q->txbuf, len);
	Q->txlen = 0;
}

static int64_t queue_itr_ns(struct i40e_model *m, bool rx, uint32_t q);

/* n write-backs held, the last for slot: write them back now (the line is
 * complete, or the ITR's interval is 0), or start the ITR that will. */
static bool wb_due(struct i40e_model *m, bool rx, uint32_t q, uint32_t slot, uint32_t n, uint32_t line,
		   uint64_t *itr_due_ns)
{
	if (slot % line == line - 1 || n == line)
		return true;
	if (*itr_due_ns)
		return false;
	int64_t itr = queue_itr_ns(m, rx, q);
	if (itr > 0)
		*itr_due_ns = nic_model_now_ns() + (uint64_t)itr;
	return itr == 0;
}

/* Transmit descriptor write-back without head write-back (X710 datasheet,
 * transmit descriptor write-back): an RS descriptor's done (DTYPE 0xF) is
 * written back with its cache line of eight, or when the ITR of the vector
 * the queue's cause is bound to expires with WB_ON_ITR, or when the queue
 * is disabled; at once when that ITR's interval is 0. */
static void tx_flush(struct i40e_model *m, uint32_t q)
{
	struct txwb *w = &m->txwb[q];
	for (uint32_t i = 0; i < w->n; i++) {
		volatile uint64_t *d = dma(m, m->txq[q].base + 16ull * w->d[i].slot, 16, "tx descriptor");
		if (!d)
			break;
		d[1] = w->d[i].q1;
	}
	w->n = 0;
	w->itr_due_ns = 0;
}

static void tx_complete(struct i40e_model *m, uint32_t q, uint32_t slot, uint64_t q1)
{
	struct txwb *w = &m->txwb[q];
	w->d[w->n].slot = slot, w->d[w->n].q1 = q1;
	w->n++;
	if (wb_due(m, false, q, slot, w->n, TX_WB_LINE, &w->itr_due_ns))
		tx_flush(m, q);
}

/* Send what the tail handed over some ticks ago, a batch per tick
 * (nic_model.h), or all of it when unpaced; an RS descriptor is done
 * (DTYPE 0xF) as it is sent, written back as above. */
static void tx_run(struct i40e_model *m, uint32_t q, bool unpaced)
{
	struct queue *Q = &m->txq[q];
	if (m->tx_hold || !Q->enabled)
		return;
	const volatile void *ring = dma(m, Q->base, 16ull * Q->qlen, "tx descriptor ring");
	for (uint32_t k = ring ? nic_model_tx_ready(&m->base, &m->txa[q], Q->head, unpaced) : 0; k; k--) {
		volatile uint64_t *d = dma(m, Q->base + 16ull * Q->head, 16, "tx descriptor");
		if (!d || !nic_model_tx_unchanged(&m->base, &m->txa[q], (uint16_t)q, ring, Q->head))
			return;
		uint64_t addr = d[0], q1 = d[1];
		if ((q1 & TXD_DTYPE_MASK) != 0) {
			fail(m, "tx queue %u descriptor %u: DTYPE 0x%x is not a data descriptor", q, Q->head,
			     (unsigned)(q1 & 0xF));
			return;
		}
		uint32_t size = (uint32_t)((q1 >> TXD_SIZE_SHIFT) & TXD_SIZE_MASK);
		if (Q->txlen == 0)
			Q->icrc = q1 & TXD_CMD_ICRC;
		if (Q->txlen + size > TX_FRAME_MAX) {
			fail(m, "tx queue %u: frame longer than %u bytes", q, TX_FRAME_MAX);
			return;
		}
		const void *src = size ? dma(m, addr, size, "tx data buffer") : Q->txbuf;
		if (!src)
			return;
		memcpy(Q->txbuf + Q->txlen, src, size);
		Q->txlen += size;
		if (q1 & TXD_CMD_RS) /* RS: the descriptor reads done, in time */
			tx_complete(m, q, Q->head, q1 | TXD_DTYPE_DONE);
		Q->head = (Q->head + 1) % Q->qlen;
		if (Q->head == 0)
			m->st.tx_wraps[q % 16]++;
		REG(m, R_QTX_HEAD(q)) = Q->head;
		if (q1 & TXD_CMD_EOP)
			tx_emit(m, q);
	}
}

/* ---- register access ---- */

static bool in(uint32_t off, uint32_t base, uint32_t *q)
{
	if (off < base || off >= base + 4 * NQ)
		return false;
	*q = (off - base) / 4;
	return true;
}

static uint32_t io_read32(struct pci_io *io, uint32_t off)
{
	struct i40e_model *m = container_of(io, struct i40e_model, base.io);
	if (off % 4 || off >= BAR_SIZE || !(m->attr[off / 4] & A_KNOWN)) {
		fail(m, "read of unmodelled register 0x%06x", off);
		return 0xFFFFFFFF;
	}
	uint32_t q;
	time_settle(m);
	bool rx = in(off, R_QRX_ENA(0), &q);
	if (rx || in(off, R_QTX_ENA(0), &q)) {
		struct queue *Q = rx ? &m->rxq[q] : &m->txq[q];
		if (Q->pending) {
			m->st.ena_waits++;
			if (--Q->pending == 0)
				settle(m, rx, q);
		}
	}
	return REG(m, off);
}

static void io_write32(struct pci_io *io, uint32_t off, uint32_t v)
{
	struct i40e_model *m = container_of(io, struct i40e_model, base.io);
	if (off % 4 || off >= BAR_SIZE || !(m->attr[off / 4] & A_KNOWN)) {
		fail(m, "write of 0x%x to unmodelled register 0x%06x", v, off);
		return;
	}
	time_settle(m);
	if (m->in_reset) {
		fail(m, "register 0x%06x written while the PF reset is in progress (poll PFGEN_CTRL first)", off);
		return;
	}
	if (m->attr[off / 4] & A_RO) {
		fail(m, "write to read-only register 0x%06x", off);
		return;
	}
	uint32_t q;
	if (in(off, R_QRX_ENA(0), &q)) {
		ena_write(m, true, q, v);
	} else if (in(off, R_QTX_ENA(0), &q)) {
		ena_write(m, false, q, v);
	} else if (in(off, R_QRX_TAIL(0), &q)) {
		if (m->rxq[q].enabled && v >= m->rxq[q].qlen) {
			fail(m, "rx queue %u: tail %u past the ring of %u descriptors", q, v, m->rxq[q].qlen);
			return;
		}
		REG(m, off) = v;
		m->rxq[q].tail = v;
	} else if (in(off, R_QTX_TAIL(0), &q)) {
		if (!m->txq[q].enabled) {
			fail(m, "tx queue %u: tail written while the queue is not enabled (QENA_STAT 0)", q);
			return;
		}
		if (v >= m->txq[q].qlen) {
			fail(m, "tx queue %u: tail %u past the ring of %u descriptors", q, v, m->txq[q].qlen);
			return;
		}
		const volatile void *ring = dma(m, m->txq[q].base, 16ull * m->txq[q].qlen, "tx descriptor ring");
		if (!ring || !nic_model_tx_post(&m->base, &m->txa[q], (uint16_t)q, ring, m->txq[q].head, v))
			return;
		REG(m, off) = m->txq[q].tail = v;
	} else if (in(off, R_QTX_HEAD(0), &q) || in(off, R_QTX_CTL(0), &q)) {
		if (m->txq[q].enabled || m->txq[q].pending) {
			fail(m, "tx queue %u: register 0x%06x written while the queue is enabled", q, off);
			return;
		}
		REG(m, off) = v;
	} else if (off >= R_TXPRE_QDIS(0) && off <= R_TXPRE_QDIS(11)) {
		uint32_t abs = (off - R_TXPRE_QDIS(0)) / 4 * 128 + (v & 0x7FF);
		if (abs < I40E_MODEL_BASE_QUEUE || abs >= I40E_MODEL_BASE_QUEUE + NQ) {
			fail(m, "GLLAN_TXPRE_QDIS names absolute queue %u, not one of this function's", abs);
			return;
		}
		if (v & TXPRE_QDIS_SET)
			m->txpre_qdis[abs - I40E_MODEL_BASE_QUEUE] = true;
		if (v & TXPRE_QDIS_CLEAR)
			m->txpre_qdis[abs - I40E_MODEL_BASE_QUEUE] = false;
		REG(m, off) = v;
	} else if (in(off, R_PFINT_DYN_CTLN(0), &q)) {
		dyn_ctln_write(m, q, v);
	} else if (off == R_PFGEN_CTRL) {
		if ((v & PFGEN_CTRL_PFSWR) && (REG(m, R_GLGEN_RSTAT) & 3 || REG(m, R_GLNVM_ULD) != GLNVM_ULD_CORE_GLOBAL_DONE)) {
			fail(m, "PF reset requested before the global reset ended and the NVM configuration loaded "
				"(poll GLGEN_RSTAT and GLNVM_ULD first)");
			return;
		}
		if (v & PFGEN_CTRL_PFSWR) {
			pf_reset(m);
			m->in_reset = true;
			m->pfswr_ns = step_at(m, I40E_MODEL_STEP_PF_RESET, nic_model_now_ns(), PFSWR_NS_LO, PFSWR_NS_HI);
		}
		REG(m, off) = v;
	} else if (off == R_ATQT || off == R_ARQT) {
		bool atq = off == R_ATQT;
		uint32_t len = REG(m, atq ? R_ATQLEN : R_ARQLEN);
		const char *name = atq ? "admin send queue" : "admin receive queue";
		if (!(len & AQLEN_ENABLE)) {
			/* Clearing the tail before enabling is set-up (docs/nic.md 3.4); posting is not. */
			if (v)
				fail(m, "%s tail written while the queue is disabled (LEN.ENABLE 0)", name);
			else
				REG(m, off) = 0;
			return;
		}
		if (v >= (len & 0x3FF)) {
			fail(m, "%s: tail %u past the ring of %u descriptors", name, v, len & 0x3FF);
			return;
		}
		if (!aq_ring_ok(m, name, atq ? R_ATQBAL : R_ARQBAL, atq ? R_ATQBAH : R_ARQBAH, atq ? R_ATQLEN : R_ARQLEN))
			return;
		REG(m, off) = v;
		if (atq)
			aq_run(m);
	} else if (off == R_SDCMD) {
		REG(m, off) = v;
		if (!(v & SDCMD_WRITE))
			return;
		uint32_t lo = REG(m, R_SDDATALOW);
		if ((v & 0xFFF) != 0 || ((lo & SDDATALOW_VALID) && !(lo & SDDATALOW_DIRECT))) {
			fail(m, "HMC segment %u of type %s: the model has one direct segment, 0", v & 0xFFF,
			     lo & 2 ? "direct" : "paged");
			return;
		}
		uint32_t pages = (lo >> SDDATALOW_BPCOUNT_SHIFT) & SDDATALOW_BPCOUNT_MASK;
		uint64_t pa = (uint64_t)REG(m, R_SDDATAHIGH) << 32 | (lo & 0xFFFFF000u);
		if ((lo & SDDATALOW_VALID) && pages != SD_DIRECT_PAGES) {
			fail(m, "HMC segment 0: direct with %u backing pages (a direct segment backs %u pages of 4 KB, 2 MB)",
			     pages, SD_DIRECT_PAGES);
			return;
		}
		/* The NIC may use all of it: all of it must be the driver's. */
		if ((lo & SDDATALOW_VALID) && !dma(m, pa, (size_t)SD_DIRECT_PAGES * SD_PAGE_SIZE, "HMC segment (2 MB)"))
			return;
		m->sd_valid = lo & SDDATALOW_VALID;
		m->sd_pa = pa;
	} else {
		REG(m, off) = v;
	}
}

/* ---- rx (docs/nic.md 3.8, 3.9) ---- */

/* Receive descriptor write-back (X710 datasheet, receive descriptor
 * write-back and PFINT_DYN_CTL0): completed descriptors are written to host
 * memory a cache line (128 bytes: four 32-byte descriptors) at a time;
 * with WB_ON_ITR set on the vector a queue's cause is bound to, a completed
 * descriptor also starts that vector's ITR, and when it expires whatever
 * is left is written back. Only vector 0 (PFINT_LNKLST0) is modelled;
 * transmit queues' causes (QINT_TQCTL) on its list flush the same way. */

/* Vector v's registers: vector 0 has its own, vectors 1..n the N ones. */
static uint32_t vec_dyn(uint32_t v)
{
	return v ? R_PFINT_DYN_CTLN(v - 1) : R_PFINT_DYN_CTL0;
}

static uint32_t vec_itr(uint32_t v, uint32_t i)
{
	return v ? R_PFINT_ITRN(i, v - 1) : R_PFINT_ITR0(i);
}

/* The ITR interval of rx (or tx) queue q in ns on the vector its cause is
 * bound to (QINT_xQCTL.MSIX_INDX, the queue on that vector's list), or -1
 * when nothing flushes it: neither WB_ON_ITR nor INTENA on the vector. */
static int64_t queue_itr_ns(struct i40e_model *m, bool rx, uint32_t q)
{
	uint32_t own = REG(m, rx ? R_QINT_RQCTL(q) : R_QINT_TQCTL(q)), v = own & QINT_MSIX_INDX_MASK;
	if (v > NQ || !(REG(m, vec_dyn(v)) & (DYN_CTL0_WB_ON_ITR | DYN_CTL0_INTENA)))
		return -1;
	uint32_t l = REG(m, v ? R_PFINT_LNKLSTN(v - 1) : R_PFINT_LNKLST0), at = l & LNKLST_INDX_MASK,
		 type = (l >> LNKLST0_TYPE_SHIFT) & 3;
	for (uint32_t hops = 0; at != LNKLST_END && hops < 2 * NQ; hops++) {
		if (at >= NQ)
			return -1;
		uint32_t c = REG(m, type == 0 ? R_QINT_RQCTL(at) : R_QINT_TQCTL(at));
		if (type == (rx ? 0u : 1u) && at == q) {
			if (!(c & QINT_CAUSE_ENA))
				return -1;
			uint32_t itr = (c >> QINT_ITR_INDX_SHIFT) & 3;
			return itr == 3 ? 0 : (int64_t)(REG(m, vec_itr(v, itr)) & ITR_INTERVAL_MASK) * ITR_UNIT_NS;
		}
		at = (c >> QINT_NEXTQ_INDX_SHIFT) & LNKLST_INDX_MASK;
		type = (c >> QINT_NEXTQ_TYPE_SHIFT) & 3;
	}
	return -1;
}

static void rx_flush(struct i40e_model *m, uint32_t q)
{
	struct rxwb *w = &m->wb[q];
	for (uint32_t i = 0; i < w->n; i++) {
		volatile uint64_t *d = dma(m, m->rxq[q].base + 32ull * w->d[i].slot, 32, "rx descriptor");
		if (!d)
			break;
		d[0] = w->d[i].q0;
		d[2] = d[3] = 0;
		__atomic_thread_fence(__ATOMIC_RELEASE);
		d[1] = w->d[i].q1;
		m->base.rx_written++;
	}
	w->n = 0;
	w->itr_due_ns = 0;
}

/* Descriptor slot of rx queue q is done: held, or written back with its
 * cache line, or at once when the ITR's interval is 0. */
static void rx_complete(struct i40e_model *m, uint32_t q, uint32_t slot, uint64_t q0, uint64_t q1)
{
	struct rxwb *w = &m->wb[q];
	w->d[w->n].slot = slot, w->d[w->n].q0 = q0, w->d[w->n].q1 = q1;
	w->n++;
	if (wb_due(m, true, q, slot, w->n, RX_WB_LINE, &w->itr_due_ns))
		rx_flush(m, q);
	rx_cause(m, q);
}

/* ---- interrupts (X710 datasheet 7.5: PFINT_DYN_CTLN, PFINT_LNKLSTN,
 * QINT_RQCTL, PFINT_ITRN) ----
 *
 * Vectors 1..n only (vector 0 carries write-back, no interrupt, here). A
 * completed receive descriptor sets its queue's cause event (INTEVENT)
 * when the cause is enabled. Vector v sends its message when INTENA is set
 * in its DYN_CTLN, a cause on its list has an event (or software
 * triggered it, SWINT_TRIG) and its ITR since the last message has
 * expired; the message comes after the list's held descriptors are written
 * back, clears the events and INTENA (the vector stays masked until the
 * driver enables it again), and starts the ITR of the cause's index. An
 * event while INTENA is 0 waits, and fires when INTENA is set. */
static void irq_eval(struct i40e_model *m, uint32_t v)
{
	if (!v || v > NQ || !(REG(m, vec_dyn(v)) & DYN_CTL0_INTENA) || nic_model_now_ns() < m->throttle_ns[v - 1])
		return;
	bool event = m->swint[v - 1];
	uint32_t itr = 3;
	uint32_t l = REG(m, R_PFINT_LNKLSTN(v - 1)), at = l & LNKLST_INDX_MASK, type = (l >> LNKLST0_TYPE_SHIFT) & 3;
	for (uint32_t hops = 0; at < NQ && hops < 2 * NQ; hops++) {
		uint32_t r = type == 0 ? R_QINT_RQCTL(at) : R_QINT_TQCTL(at), c = REG(m, r);
		if (c & QINT_INTEVENT) {
			event = true;
			itr = MIN(itr, (c >> QINT_ITR_INDX_SHIFT) & 3);
		}
		at = (c >> QINT_NEXTQ_INDX_SHIFT) & LNKLST_INDX_MASK;
		type = (c >> QINT_NEXTQ_TYPE_SHIFT) & 3;
	}
	if (!event)
		return;
	at = l & LNKLST_INDX_MASK, type = (l >> LNKLST0_TYPE_SHIFT) & 3;
	for (uint32_t hops = 0; at < NQ && hops < 2 * NQ; hops++) {
		uint32_t r = type == 0 ? R_QINT_RQCTL(at) : R_QINT_TQCTL(at);
		REG(m, r) &= ~QINT_INTEVENT;
		if (type == 0 && m->wb[at].n)
			rx_flush(m, at);
		at = (REG(m, r) >> QINT_NEXTQ_INDX_SHIFT) & LNKLST_INDX_MASK;
		type = (REG(m, r) >> QINT_NEXTQ_TYPE_SHIFT) & 3;
	}
	m->swint[v - 1] = false;
	REG(m, vec_dyn(v)) &= ~DYN_CTL0_INTENA;
	uint64_t ns = itr == 3 ? 0 : (uint64_t)(REG(m, vec_itr(v, itr)) & ITR_INTERVAL_MASK) * ITR_UNIT_NS;
	m->throttle_ns[v - 1] = nic_model_now_ns() + ns;
	nic_model_irq_raise(&m->base, v);
}

/* Rx queue q completed a descriptor: its cause's event, its vector's look. */
static void rx_cause(struct i40e_model *m, uint32_t q)
{
	uint32_t c = REG(m, R_QINT_RQCTL(q));
	if (!(c & QINT_CAUSE_ENA))
		return;
	REG(m, R_QINT_RQCTL(q)) = c | QINT_INTEVENT;
	irq_eval(m, c & QINT_MSIX_INDX_MASK);
}

/* A write of DYN_CTLN(n): INTENA as written unless INTENA_MSK; SWINT_TRIG
 * an event of its own; CLEARPBA and the trigger do not stay set. */
static void dyn_ctln_write(struct i40e_model *m, uint32_t n, uint32_t v)
{
	uint32_t old = REG(m, R_PFINT_DYN_CTLN(n));
	if (v & DYN_CTL_INTENA_MSK)
		v = (v & ~DYN_CTL0_INTENA) | (old & DYN_CTL0_INTENA);
	if (v & DYN_CTL_SWINT_TRIG)
		m->swint[n] = true;
	REG(m, R_PFINT_DYN_CTLN(n)) = v & ~(DYN_CTL_CLEARPBA | DYN_CTL_SWINT_TRIG | DYN_CTL_INTENA_MSK);
	irq_eval(m, n + 1);
}

struct rx_class {
	uint32_t ptype;  /* DPDK's PTYPE numbers: 1 L2, 11 ARP, 22..28 IPv4, 87..93 IPv6 */
	uint32_t pctype; /* 0: none */
	bool hashed;
	uint32_t hash;
};

static void classify(struct i40e_model *m, const uint8_t *f, uint32_t len, struct rx_class *c)
{
	memset(c, 0, sizeof(*c));
	c->ptype = 1;
	uint16_t et = (uint16_t)(f[12] << 8 | f[13]);
	uint8_t in[36];
	uint32_t n_in = 0;
	if (et == 0x0806) {
		c->ptype = 11;
	} else if (et == 0x0800 && len >= 34) {
		const uint8_t *ip = f + 14;
		uint32_t ihl = (ip[0] & 0xFu) * 4;
		bool frag = ((ip[6] & 0x3F) | ip[7]) != 0, l4 = !frag && len >= 14 + ihl + 4;
		memcpy(in, ip + 12, 8);
		n_in = 8;
		c->ptype = frag ? 22 : 23, c->pctype = frag ? 36 : 35;
		if (l4 && (ip[9] == 6 || ip[9] == 17)) {
			memcpy(in + 8, ip + ihl, 4);
			n_in = 12;
			c->ptype = ip[9] == 6 ? 26 : 24, c->pctype = ip[9] == 6 ? 33 : 31;
		}
	} else if (et == 0x86DD && len >= 54) {
		const uint8_t *ip = f + 14;
		memcpy(in, ip + 8, 32);
		n_in = 32;
		c->ptype = 88, c->pctype = 45;
		if (len >= 58 && (ip[6] == 6 || ip[6] == 17)) {
			memcpy(in + 32, ip + 40, 4);
			n_in = 36;
			c->ptype = ip[6] == 6 ? 91 : 89, c->pctype = ip[6] == 6 ? 43 : 41;
		}
	}
	uint64_t hena = (uint64_t)REG(m, R_HENA(1)) << 32 | REG(m, R_HENA(0));
	if (!c->pctype || !(hena >> c->pctype & 1))
		return;
	if (!(REG(m, R_GLQF_CTL) & GLQF_CTL_HTOEP)) {
		fail(m, "RSS hashing enabled (PFQF_HENA) with GLQF_CTL.HTOEP clear: the simple XOR hash is not modelled");
		return;
	}
	uint8_t key[52];
	for (uint32_t k = 0; k < 52; k++)
		key[k] = (uint8_t)(REG(m, R_HKEY(k / 4)) >> (8 * (k % 4)));
	c->hashed = true;
	c->hash = toeplitz_hash(key, sizeof(key), in, n_in);
}

static bool accept(const struct i40e_model *m, const uint8_t *f)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	if (!memcmp(f, bcast, 6)) /* only with the VSI's broadcast flag (set VSI promiscuous modes) */
		return m->st.promisc_broadcast;
	if (f[0] & 1)
		return m->st.promisc_multicast;
	return m->st.promisc_unicast || !memcmp(f, m->mac, 6);
}

uint32_t i40e_model_rx_room(const struct i40e_model *m, uint16_t q)
{
	const struct queue *Q = &m->rxq[q];
	return Q->enabled ? (Q->tail + Q->qlen - Q->head) % Q->qlen : 0;
}

int i40e_model_rx(struct i40e_model *m, const uint8_t *frame, uint32_t len)
{
	if (!link_up(m)) { /* nothing arrives on a link that is down */
		m->st.rx_filtered++;
		return -1;
	}
	if (len < 60 || len + 4 > m->st.max_frame) {
		add48(m, len < 60 ? S_RUC : S_ROC, 0, 1);
		m->st.rx_filtered++;
		return -1;
	}
	if (!accept(m, frame)) {
		m->st.rx_filtered++;
		return -1;
	}
	struct rx_class c;
	classify(m, frame, len, &c);
	uint32_t q = 0;
	if (c.hashed) {
		uint32_t size = REG(m, R_PFQF_CTL_0) & PFQF_CTL_0_HASHLUTSIZE ? 512 : 128, e = c.hash & (size - 1);
		q = (REG(m, R_HLUT(e / 4)) >> (8 * (e % 4))) & 0x3F;
		if (q >= MAX(m->st.vsi_queues, 1u)) {
			fail(m, "RSS LUT entry %u names queue %u beyond the VSI's %u", e, q, m->st.vsi_queues);
			return -1;
		}
	}
	struct queue *Q = &m->rxq[q];
	if (!Q->enabled) {
		m->st.rx_filtered++;
		return -1;
	}
	if (len + 4 > Q->rxmax) {
		add48(m, S_ROC, 0, 1);
		m->st.rx_filtered++;
		return -1;
	}
	uint32_t data_len = Q->crcstrip ? len : len + 4;
	uint32_t n_desc = (data_len + Q->dbuff - 1) / Q->dbuff; /* a frame over several buffers */
	if (i40e_model_rx_room(m, (uint16_t)q) < n_desc) {
		add48(m, S_RDPC, 0, 1);
		m->st.rx_dropped++;
		return -1;
	}
	uint8_t whole[TX_FRAME_MAX + 4];
	memcpy(whole, frame, len);
	if (!Q->crcstrip) {
		uint32_t fcs = nic_model_crc32(frame, len);
		memcpy(whole + len, &fcs, 4);
	}
	for (uint32_t off = 0, k = 0; k < n_desc; k++) {
		uint32_t part = MIN(Q->dbuff, data_len - off);
		bool eof = k == n_desc - 1;
		volatile uint64_t *d = dma(m, Q->base + 32ull * Q->head, 32, "rx descriptor");
		if (!d)
			return -1;
		if (d[1] & 1)
			fail(m, "rx queue %u descriptor %u handed over with DD set (hdr_addr bit 0 not cleared)", q,
			     Q->head);
		uint8_t *dst = dma(m, d[0], part, "rx data buffer");
		if (!dst)
			return -1;
		memcpy(dst, whole + off, part);
		off += part;
		/* Hash, filter status and packet type on the frame's last. */
		rx_complete(m, q, Q->head, eof && c.hashed ? (uint64_t)c.hash << 32 : 0,
			    RXD_DD |
				    (eof ? RXD_EOF | (c.hashed ? RXD_FLTSTAT_RSS << RXD_FLTSTAT_SHIFT : 0) |
						   (uint64_t)c.ptype << RXD_PTYPE_SHIFT
					 : 0) |
				    (uint64_t)part << RXD_LEN_SHIFT);
		Q->head = (Q->head + 1) % Q->qlen;
		if (Q->head == 0)
			m->st.rx_wraps[q % 16]++;
	}
	add48(m, S_GORCL, S_GORCH, len + 4);
	if (!(frame[0] & 1))
		add48(m, S_UPRCL, S_UPRCH, 1);
	else
		add48(m, memcmp(frame, "\xff\xff\xff\xff\xff\xff", 6) ? S_MPRCL : S_BPRCL,
		      memcmp(frame, "\xff\xff\xff\xff\xff\xff", 6) ? S_MPRCH : S_BPRCH, 1);
	m->st.rx_frames++;
	return (int)q;
}

/* ---- the model's life ---- */

static void io_close(struct pci_io *io)
{
	struct i40e_model *m = container_of(io, struct i40e_model, base.io);
	for (uint32_t q = 0; q < NQ; q++)
		if (m->rxq[q].enabled || m->txq[q].enabled)
			fail(m, "closed with queue pair %u still enabled", q);
	if ((REG(m, R_ATQLEN) | REG(m, R_ARQLEN)) & AQLEN_ENABLE)
		fail(m, "closed with the admin queue still enabled");
	m->base.open = false;
}

/* The device IDs the model answers as and the port each has (PHY type
 * numbers and speed bits as the public drivers define the firmware
 * interface; 25G types are in the extended byte). */
#define SPEED_1G 0x04u
static const struct family families[] = {
	{ 0x1572, SPEED_10G, 0x14, 1u << 0x14, 0 },    /* X710 SFP+: 10GBASE-SR */
	{ 0x1580, SPEED_40G, 0x04, 1u << 0x04, 0 },    /* XL710 KX B: 40GBASE-KR4 */
	{ 0x1581, SPEED_10G, 0x03, 1u << 0x03, 0 },    /* X710 KX C: 10GBASE-KR */
	{ 0x1583, SPEED_40G, 0x18, 1u << 0x18, 0 },    /* XL710 QSFP+: 40GBASE-CR4 */
	{ 0x1584, SPEED_40G, 0x18, 1u << 0x18, 0 },
	{ 0x1585, SPEED_40G, 0x19, 1u << 0x19, 0 },    /* 40GBASE-SR4 */
	{ 0x1586, SPEED_10G, 0x13, 1u << 0x13, 0 },    /* X710 10GBASE-T */
	{ 0x1587, SPEED_20G, 0x1E, 1u << 0x1E, 0 },    /* XL710 20GBASE-KR2 */
	{ 0x1588, SPEED_20G, 0x1E, 1u << 0x1E, 0 },
	{ 0x1589, SPEED_10G, 0x13, 1u << 0x13, 0 },    /* X710-T4 */
	{ 0x158A, SPEED_25G, 0x1F, 0, 0x01 },          /* XXV710 25GBASE-KR */
	{ 0x158B, SPEED_25G, 0x21, 0, 0x04 },          /* XXV710 SFP28: 25GBASE-SR */
	{ 0x104E, SPEED_10G, 0x14, 1u << 0x14, 0 },    /* X710 10G SFP */
	{ 0x104F, SPEED_10G, 0x14, 1u << 0x14, 0 },
	{ 0x37CE, SPEED_10G, 0x03, 1u << 0x03, 0 },    /* X722 KX */
	{ 0x37CF, SPEED_10G, 0x14, 1u << 0x14, 0 },    /* X722 QSFP (10G ports) */
	{ 0x37D0, SPEED_10G, 0x14, 1u << 0x14, 0 },    /* X722 SFP */
	{ 0x37D1, SPEED_1G, 0x12, 1u << 0x12, 0 },     /* X722 1000BASE-T */
	{ 0x37D2, SPEED_10G, 0x13, 1u << 0x13, 0 },    /* X722 10GBASE-T */
	{ 0x37D3, SPEED_10G, 0x14, 1u << 0x14, 0 },
	{ 0x0DDA, SPEED_10G, 0x14, 1u << 0x14, 0 },
};

static const struct family *family_of(uint16_t device)
{
	for (size_t i = 0; i < ARRAY_LEN(families); i++)
		if (families[i].device == device)
			return &families[i];
	return NULL;
}

bool i40e_model_knows(uint16_t device, uint32_t *speed_mbps)
{
	static const struct {
		uint8_t bit;
		uint32_t mbps;
	} sp[] = { { SPEED_1G, 1000 }, { SPEED_10G, 10000 }, { SPEED_20G, 20000 }, { SPEED_25G, 25000 }, { SPEED_40G, 40000 } };
	const struct family *f = family_of(device);
	for (size_t i = 0; f && speed_mbps && i < ARRAY_LEN(sp); i++)
		if (f->speed == sp[i].bit)
			*speed_mbps = sp[i].mbps;
	return f != NULL;
}

static const struct pci_io_ops model_ops = {
	.read32 = io_read32,
	.write32 = io_write32,
	.dma_map = nic_model_dma_map,
	.dma_unmap = nic_model_dma_unmap,
	.irq_set = nic_model_irq_set,
	.close = io_close,
};

struct i40e_model *i40e_model_create(const char *addr, const uint8_t mac[6])
{
	struct i40e_model *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->regs = calloc(BAR_SIZE / 4, sizeof(uint32_t));
	m->attr = calloc(BAR_SIZE / 4, 1);
	if (!m->regs || !m->attr || nic_model_register(&m->base, &model_ops, addr, 0x1583, IOVA_OFFSET)) {
		free(m->regs);
		free(m->attr);
		free(m);
		return NULL;
	}
	memcpy(m->mac, mac, 6);
	m->cable = true;
	m->ena_delay = 3;
	m->fam = family_of(0x1583);
	build_map(m);
	pf_reset(m);
	m->st.resets = 0;
	/* Powered up into a global reset: it ends, the NVM loads, the link
	 * comes up with the NVM's PHY configuration. */
	m->devstate_ns = nic_model_now_ns() + nic_model_delay_ns(0, DEVSTATE_NS_HI);
	m->uld_ns = step_at(m, 0, m->devstate_ns, ULD_NS_LO, ULD_NS_HI);
	m->link_enabled = true;
	m->link_ns = step_at(m, 0, m->uld_ns, LINK_NS_LO, LINK_NS_HI);
	return m;
}

void i40e_model_never(struct i40e_model *m, uint32_t steps)
{
	m->never = steps;
	if (steps & I40E_MODEL_STEP_GLOBAL_RESET)
		m->devstate_ns = NEVER;
	if (steps & (I40E_MODEL_STEP_GLOBAL_RESET | I40E_MODEL_STEP_NVM))
		m->uld_ns = NEVER;
	if (steps & I40E_MODEL_STEP_LINK)
		m->link_ns = NEVER;
}

void i40e_model_set_device_id(struct i40e_model *m, uint16_t device)
{
	const struct family *f = family_of(device);
	if (!f) {
		fail(m, "device ID 8086:%04x is not one the model can be", device);
		return;
	}
	m->base.io.device = device;
	m->fam = f;
}

void i40e_model_destroy(struct i40e_model *m)
{
	for (uint32_t q = 0; q < NQ; q++)
		nic_model_txq_stop(&m->txa[q]);
	nic_model_unregister(&m->base);
	free(m->regs);
	free(m->attr);
	free(m);
}

struct nic_model *i40e_model_nic(struct i40e_model *m)
{
	return &m->base;
}

void i40e_model_aq_inject_error(struct i40e_model *m, uint16_t opcode, uint16_t rc, uint32_t n)
{
	m->inject_op = opcode;
	m->inject_rc = rc;
	m->inject_n = n;
}

void i40e_model_aq_stall(struct i40e_model *m, bool stall)
{
	m->aq_stall = stall;
	if (!stall && (REG(m, R_ATQLEN) & AQLEN_ENABLE))
		aq_run(m);
}

void i40e_model_set_ena_delay(struct i40e_model *m, uint32_t reads)
{
	m->ena_delay = reads;
}

void i40e_model_tx_hold(struct i40e_model *m, bool hold)
{
	m->tx_hold = hold;
	if (!hold) /* the partner takes everything it held at once */
		for (uint32_t q = 0; q < NQ; q++)
			tx_run(m, q, true);
}

uint32_t i40e_model_tick(struct i40e_model *m)
{
	nic_model_tick_time(&m->base);
	time_settle(m);
	uint32_t pending = 0;
	for (uint32_t q = 0; q < NQ; q++) {
		struct queue *Q = &m->txq[q];
		if (!Q->enabled)
			continue;
		tx_run(m, q, false);
		if (!m->tx_hold)
			pending += (Q->tail + Q->qlen - Q->head) % Q->qlen;
	}
	return pending;
}

void i40e_model_set_cable(struct i40e_model *m, bool connected)
{
	if (m->cable == connected)
		return;
	m->cable = connected;
	if (connected) /* the link trains again */
		m->link_ns = step_at(m, I40E_MODEL_STEP_LINK, nic_model_now_ns(), LINK_NS_LO, LINK_NS_HI);
	time_settle(m);
}

void i40e_model_count(struct i40e_model *m, uint32_t lo, uint64_t delta)
{
	bool pair = lo == S_GORCL || lo == S_UPRCL || lo == S_GOTCL || lo == S_UPTCL || lo == S_MPRCL || lo == S_BPRCL;
	if (pair)
		add48(m, lo, lo + 4, delta);
	else if (is_stat(lo))
		REG(m, lo) += (uint32_t)delta;
}

uint32_t i40e_model_peek(const struct i40e_model *m, uint32_t reg)
{
	return reg < BAR_SIZE ? m->regs[reg / 4] : 0;
}

void i40e_model_queue(const struct i40e_model *m, bool rx, uint16_t q, struct i40e_model_queue *out)
{
	const struct queue *Q = rx ? &m->rxq[q] : &m->txq[q];
	*out = (struct i40e_model_queue){ .enabled = Q->enabled, .base = Q->base, .qlen = Q->qlen, .head = Q->head,
					  .tail = Q->tail, .dbuff = Q->dbuff, .rxmax = Q->rxmax,
					  .rdylist = Q->rdylist };
}

void i40e_model_stats(const struct i40e_model *m, struct i40e_model_stats *st)
{
	*st = m->st;
}
