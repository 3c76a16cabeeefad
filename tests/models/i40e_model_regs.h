/* The XL710 model's own register map: every offset, bit, admin-queue flag,
 * queue-context field and descriptor bit the model decodes, transcribed from
 * the Intel Ethernet Controller X710/XXV710/XL710 Datasheet (cited by
 * chapter title: the register chapter, the admin queue, the Host Memory
 * Cache and LAN queue contexts with Tables 8-12 and 8-22, receive and
 * transmit descriptors) and written without looking at
 * drivers/i40e/i40e_regs.h, which a model must never include: a shared
 * misreading would pass. tests/nic/regs_i40e.c compares the two for every
 * register, bit and field both use.
 *
 * Private to tests/models/i40e_model.c and the comparison test.
 */
#ifndef SLUICE_TESTS_I40E_MODEL_REGS_H
#define SLUICE_TESTS_I40E_MODEL_REGS_H

/* registers (datasheet, register chapter: admin queue, PF general, HMC, LAN
 * queue, receive filter/RSS and port statistics registers) */
enum {
	R_ATQBAL = 0x80000, R_ARQBAL = 0x80080, R_ATQBAH = 0x80100, R_ARQBAH = 0x80180, R_ATQLEN = 0x80200,
	R_ARQLEN = 0x80280, R_ATQH = 0x80300, R_ARQH = 0x80380, R_ATQT = 0x80400, R_ARQT = 0x80480,
	R_PFGEN_CTRL = 0x92400, R_GLGEN_RSTAT = 0xB8188, R_GLNVM_ULD = 0xB6008, R_PF_FUNC_RID = 0x9C000,
	R_PFGEN_PORTNUM = 0x1C0480, R_PFLAN_QALLOC = 0x1C0400, R_PFINT_DYN_CTL0 = 0x38480,
	R_PFINT_ICR0_ENA = 0x38800, R_LANQMAX = 0xC2008, R_LANTXOBJSZ = 0xC2004, R_LANRXOBJSZ = 0xC200C,
	R_SDCMD = 0xC0000, R_SDDATALOW = 0xC0100, R_SDDATAHIGH = 0xC0200, R_PDINV = 0xC0300,
	R_GLQF_CTL = 0x269BA4, R_PFQF_CTL_0 = 0x1C0AC0, R_PFINT_LNKLST0 = 0x38500,
};
/* interrupt registers (datasheet, register chapter: PF interrupt
 * registers): the ITR intervals of vector 0, the cause control of each
 * queue (which vector, which ITR, the next queue of the vector's list) */
#define R_PFINT_ITR0(i) (0x38000 + 128 * (i))
#define R_QINT_RQCTL(q) (0x3A000 + 4 * (q))
/* vectors 1..n (n - 1 indexes these): dynamic control, first queue of the
 * list, the three ITR intervals */
#define R_PFINT_DYN_CTLN(n) (0x34800 + 4 * (n))
#define R_PFINT_LNKLSTN(n) (0x35000 + 4 * (n))
#define R_PFINT_ITRN(i, n) (0x30000 + 0x800 * (i) + 4 * (n))
#define R_QINT_TQCTL(q) (0x3C000 + 4 * (q))
#define R_QTX_ENA(q) (0x100000 + 4 * (q))
#define R_QTX_CTL(q) (0x104000 + 4 * (q))
#define R_QTX_HEAD(q) (0x0E4000 + 4 * (q))
#define R_QTX_TAIL(q) (0x108000 + 4 * (q))
#define R_QRX_ENA(q) (0x120000 + 4 * (q))
#define R_QRX_TAIL(q) (0x128000 + 4 * (q))
#define R_TXPRE_QDIS(i) (0x0E6500 + 4 * (i))
#define R_LANTXBASE(f) (0xC6200 + 4 * (f))
#define R_LANTXCNT(f) (0xC6300 + 4 * (f))
#define R_LANRXBASE(f) (0xC6400 + 4 * (f))
#define R_LANRXCNT(f) (0xC6500 + 4 * (f))
#define R_HENA(i) (0x245900 + 128 * (i))
#define R_HKEY(i) (0x244800 + 128 * (i))
#define R_HLUT(i) (0x240000 + 128 * (i))
/* port 0 statistics (low, high) */
enum {
	S_GORCL = 0x300000, S_GORCH = 0x300004, S_UPRCL = 0x3005A0, S_UPRCH = 0x3005A4, S_MPRCL = 0x3005C0,
	S_MPRCH = 0x3005C4, S_BPRCL = 0x3005E0, S_BPRCH = 0x3005E4, S_RDPC = 0x300600, S_GOTCL = 0x300680,
	S_GOTCH = 0x300684, S_UPTCL = 0x3009C0, S_UPTCH = 0x3009C4, S_MPTCL = 0x3009E0, S_BPTCL = 0x300A00,
	S_CRCERRS = 0x300080, S_RLEC = 0x3000A0, S_ILLERRC = 0x3000E0, S_RUC = 0x300100, S_ROC = 0x300120,
	S_MLFC = 0x300020, S_TDOLD = 0x300A20,
};

/* admin queue registers' fields */
#define AQLEN_MASK 0x3FFu
#define AQLEN_OVFL (1u << 29)
#define AQLEN_ENABLE (1u << 31)
/* PFGEN_CTRL, GLNVM_ULD */
#define PFGEN_CTRL_PFSWR 1u
#define GLNVM_ULD_CORE_GLOBAL_DONE 0x18u /* CONF_CORE_DONE (3) | CONF_GLOBAL_DONE (4) */
/* QTX_CTL, GLLAN_TXPRE_QDIS */
#define QTX_CTL_PFQUEUE 2u
#define TXPRE_QDIS_SET (1u << 30)
#define TXPRE_QDIS_CLEAR (1u << 31)
/* HMC segment descriptor */
#define SDCMD_WRITE (1u << 31)
#define SDDATALOW_VALID 1u
#define SDDATALOW_DIRECT 2u
#define SDDATALOW_BPCOUNT_SHIFT 2
#define SDDATALOW_BPCOUNT_MASK 0x3FFu
#define SD_DIRECT_PAGES 512u  /* a direct segment: 512 backing pages of 4 KB, 2 MB */
#define SD_PAGE_SIZE 4096u
/* PFINT_DYN_CTL0: INTENA, ITR_INDX (3: no ITR update), WB_ON_ITR (completed
 * descriptors trigger the ITR and are written back when it expires, with
 * interrupts disabled) */
#define DYN_CTL0_INTENA 1u
#define DYN_CTL0_ITR_INDX_SHIFT 3
#define DYN_CTL0_WB_ON_ITR (1u << 30)
/* DYN_CTL0 and DYN_CTLN alike: CLEARPBA, SWINT_TRIG, INTENA_MSK (INTENA
 * left as it is by this write) */
#define DYN_CTL_CLEARPBA (1u << 1)
#define DYN_CTL_SWINT_TRIG (1u << 2)
#define DYN_CTL_INTENA_MSK (1u << 31)
#define QINT_INTEVENT (1u << 31) /* the cause's event, pending until its vector fires */
/* PFINT_ITR0: interval, 2 us units, bits 11:0 */
#define ITR_INTERVAL_MASK 0xFFFu
#define ITR_UNIT_NS 2000u
/* PFINT_LNKLST0 / QINT_RQCTL: queue index bits 10:0 (0x7FF: end of list),
 * type bits 12:11 (LNKLST0) or 28:27 (RQCTL NEXTQ), 0 rx 1 tx */
#define LNKLST_INDX_MASK 0x7FFu
#define LNKLST_END 0x7FFu
#define LNKLST0_TYPE_SHIFT 11
#define QINT_MSIX_INDX_MASK 0xFFu
#define QINT_ITR_INDX_SHIFT 11
#define QINT_NEXTQ_INDX_SHIFT 16
#define QINT_NEXTQ_TYPE_SHIFT 27
#define QINT_CAUSE_ENA (1u << 30)
/* receive descriptors are written back a cache line at a time: 128 bytes,
 * four 32-byte descriptors (datasheet, receive descriptor write-back) */
#define RX_WB_LINE 4u
/* transmit descriptors likewise (datasheet, transmit descriptor write-back,
 * no head write-back): 128 bytes, eight 16-byte data descriptors */
#define TX_WB_LINE 8u
/* RSS */
#define GLQF_CTL_HTOEP 2u
#define PFQF_CTL_0_HASHLUTSIZE (1u << 16)

/* admin descriptor flags (datasheet, admin queue: descriptor format) */
#define AQ_DD 1u
#define AQ_CMP 2u
#define AQ_ERR 4u
#define AQ_LB (1u << 9)
#define AQ_RD (1u << 10)
#define AQ_BUF (1u << 12)
#define AQ_SI (1u << 13)
/* admin command opcodes the model's firmware answers (datasheet, admin
 * queue commands) */
#define AQC_GET_VERSION 0x0001
#define AQC_QUEUE_SHUTDOWN 0x0003
#define AQC_LIST_FUNC_CAPS 0x000A
#define AQC_MAC_ADDRESS_READ 0x0107
#define AQC_CLEAR_PXE 0x0110
#define AQC_GET_SWITCH_CONFIG 0x0200
#define AQC_UPDATE_VSI 0x0211
#define AQC_GET_VSI_PARAMS 0x0212
#define AQC_SET_VSI_PROMISC 0x0254
#define AQC_SET_MAC_CONFIG 0x0603
#define AQC_GET_LINK_STATUS 0x0607
#define AQC_GET_PHY_ABILITIES 0x0600
#define AQC_SET_PHY_CONFIG 0x0601
#define AQC_SET_PHY_INT_MASK 0x0613
/* get PHY abilities (0x0600) response, set PHY configuration (0x0601)
 * parameters: phy_type u32 at 0, link_speed u8 at 4, abilities u8 at 5,
 * phy_type_ext u8 at 13; the response is 0x218 bytes (24 + 16 module
 * descriptors of 32) */
#define PHY_ABILITIES_SIZE 0x218
#define PHY_REPORT_INIT 2u          /* get PHY abilities flag: the NVM's defaults */
#define PHY_ENABLE_LINK 0x08u
#define PHY_ENABLE_AN 0x10u
#define PHY_ENABLE_ATOMIC 0x20u
/* link speed bits (get link status byte 3, PHY abilities byte 4) */
#define SPEED_10G 0x08u
#define SPEED_40G 0x10u
#define SPEED_20G 0x20u
#define SPEED_25G 0x40u
/* set PHY interrupt mask (0x0613): event mask u16 at 8, a set bit masks */
#define PHY_EVENT_LINK_UPDOWN 0x0002u
/* QRX_ENA / QTX_ENA */
#define ENA_REQ 1u
#define ENA_STAT 4u
/* firmware return codes */
#define RC_EINVAL 14
#define RC_ENOSYS 17
/* set VSI promiscuous modes (0x0254): flags and valid bits */
#define PROMISC_UNICAST 1u
#define PROMISC_MULTICAST 2u
#define PROMISC_BROADCAST 4u

/* LAN queue contexts: {lsb, width} (datasheet, LAN queue contexts: receive
 * queue context Table 8-12, transmit queue context Table 8-22) */
#define RXC_HEAD 0, 13
#define RXC_BASE 32, 57
#define RXC_QLEN 89, 13
#define RXC_DBUFF 102, 7
#define RXC_HBUFF 109, 5
#define RXC_DTYPE 114, 2
#define RXC_DSIZE 116, 1
#define RXC_CRCSTRIP 117, 1
#define RXC_L2TSEL 119, 1
#define RXC_RXMAX 174, 14
#define RXC_LRXQTHRESH 198, 3
#define RXC_PREFENA 201, 1
#define TXC_HEAD 0, 13
#define TXC_NEW_CONTEXT 30, 1
#define TXC_BASE 32, 57
#define TXC_QLEN 161, 13
#define TXC_RDYLIST 980, 10
#define RX_CTX_SIZE 32
#define TX_CTX_SIZE 128

/* receive descriptor write-back, quadword 1 (datasheet, receive descriptors) */
#define RXD_DD 1ull
#define RXD_EOF 2ull
#define RXD_FLTSTAT_SHIFT 12
#define RXD_FLTSTAT_RSS 3ull
#define RXD_RXE (1ull << 19)
#define RXD_PTYPE_SHIFT 30
#define RXD_LEN_SHIFT 38
/* transmit data descriptor, quadword 1 (datasheet, transmit descriptors) */
#define TXD_DTYPE_MASK 0xFull
#define TXD_DTYPE_DONE 0xFull
#define TXD_CMD_EOP (1ull << 4)
#define TXD_CMD_RS (1ull << 5)
#define TXD_CMD_ICRC (1ull << 6)
#define TXD_SIZE_SHIFT 34
#define TXD_SIZE_MASK 0x3FFFull

#endif
