/* Intel X710/XL710 (i40e) PF registers, admin-queue and descriptor layouts,
 * from the Intel Ethernet Controller X710/XXV710/XL710 datasheet (section
 * numbers in the comments) and the public Linux i40e and DPDK i40e base
 * headers, which agree with it. All registers are 32-bit BAR0 offsets. */
#ifndef SLUICE_DRIVERS_I40E_REGS_H
#define SLUICE_DRIVERS_I40E_REGS_H

#include <stdint.h>

/* ---- admin queue (X710/XL710 datasheet, admin queue) ---- */
#define I40E_PF_ATQBAL 0x00080000
#define I40E_PF_ARQBAL 0x00080080
#define I40E_PF_ATQBAH 0x00080100
#define I40E_PF_ARQBAH 0x00080180
#define I40E_PF_ATQLEN 0x00080200
#define I40E_PF_ARQLEN 0x00080280
#define I40E_PF_ATQH 0x00080300
#define I40E_PF_ARQH 0x00080380
#define I40E_PF_ATQT 0x00080400
#define I40E_PF_ARQT 0x00080480
#define I40E_AQLEN_LEN_MASK 0x3FFu
#define I40E_AQLEN_VFE (1u << 28)
#define I40E_AQLEN_OVFL (1u << 29)
#define I40E_AQLEN_CRIT (1u << 30)
#define I40E_AQLEN_ENABLE (1u << 31)
#define I40E_AQH_MASK 0x3FFu

/* ---- reset, identity ---- */
#define I40E_PFGEN_CTRL 0x00092400
#define I40E_PFGEN_CTRL_PFSWR 1u
#define I40E_GLGEN_RSTAT 0x000B8188
#define I40E_GLGEN_RSTAT_DEVSTATE_MASK 3u
#define I40E_GLNVM_ULD 0x000B6008
#define I40E_GLNVM_ULD_DONE ((1u << 3) | (1u << 4)) /* CONF_CORE_DONE | CONF_GLOBAL_DONE */
#define I40E_PF_FUNC_RID 0x0009C000
#define I40E_PFGEN_PORTNUM 0x001C0480
#define I40E_PFLAN_QALLOC 0x001C0400
#define I40E_PFINT_DYN_CTL0 0x00038480
#define I40E_PFINT_ICR0_ENA 0x00038800

/* ---- interrupt causes of vector 0, for receive write-back (X710/XL710
 * datasheet, interrupts: PFINT_DYN_CTL0, PFINT_ITR0, PFINT_LNKLST0,
 * QINT_RQCTL, QINT_TQCTL) ---- */
#define I40E_PFINT_DYN_CTL0_INTENA 1u
#define I40E_PFINT_DYN_CTL0_ITR_INDX_SHIFT 3
#define I40E_PFINT_DYN_CTL0_ITR_NONE (3u << I40E_PFINT_DYN_CTL0_ITR_INDX_SHIFT) /* no ITR update */
#define I40E_PFINT_DYN_CTL0_WB_ON_ITR (1u << 30)
#define I40E_PFINT_ITR0(i) (0x00038000 + 128 * (i)) /* interval bits 11:0, 2 us units */
#define I40E_PFINT_LNKLST0 0x00038500
#define I40E_PFINT_LNKLST0_FIRSTQ_TYPE_SHIFT 11 /* 0: rx queue */
#define I40E_QINT_RQCTL(q) (0x0003A000 + 4 * (q))
#define I40E_QINT_TQCTL(q) (0x0003C000 + 4 * (q))
#define I40E_QINT_ITR_INDX_SHIFT 11
#define I40E_QINT_NEXTQ_INDX_SHIFT 16
#define I40E_QINT_NEXTQ_TYPE_SHIFT 27
#define I40E_QINT_CAUSE_ENA (1u << 30)
#define I40E_QUEUE_END_OF_LIST 0x7FFu
/* vectors 1..n (register index n - 1): an rx queue's own interrupt
 * (X710/XL710 datasheet 7.5, PFINT_DYN_CTLN, PFINT_LNKLSTN, PFINT_ITRN) */
#define I40E_PFINT_DYN_CTLN(n) (0x00034800 + 4 * (n))
#define I40E_PFINT_DYN_CTLN_CLEARPBA (1u << 1)
#define I40E_PFINT_LNKLSTN(n) (0x00035000 + 4 * (n))
#define I40E_PFINT_ITRN(i, n) (0x00030000 + 0x800 * (i) + 4 * (n))
#define I40E_QINT_MSIX_INDX_SHIFT 0

/* ---- LAN queues (X710/XL710 datasheet, queue enable) ---- */
#define I40E_QTX_ENA(q) (0x00100000 + 4 * (q))
#define I40E_QTX_CTL(q) (0x00104000 + 4 * (q))
#define I40E_QTX_HEAD(q) (0x000E4000 + 4 * (q))
#define I40E_QTX_TAIL(q) (0x00108000 + 4 * (q))
#define I40E_QRX_ENA(q) (0x00120000 + 4 * (q))
#define I40E_QRX_TAIL(q) (0x00128000 + 4 * (q))
#define I40E_QENA_REQ 1u
#define I40E_QENA_FAST_QDIS (1u << 1)
#define I40E_QENA_STAT (1u << 2)
#define I40E_QTX_CTL_PF_QUEUE 2u
#define I40E_QTX_CTL_PF_INDX_SHIFT 2
#define I40E_GLLAN_TXPRE_QDIS(i) (0x000E6500 + 4 * (i))
#define I40E_TXPRE_QDIS_QINDX_MASK 0x7FFu
#define I40E_TXPRE_QDIS_SET (1u << 30)
#define I40E_TXPRE_QDIS_CLEAR (1u << 31)

/* ---- HMC (X710/XL710 datasheet, host memory cache) ---- */
#define I40E_GLHMC_LANTXBASE(f) (0x000C6200 + 4 * (f))
#define I40E_GLHMC_LANTXCNT(f) (0x000C6300 + 4 * (f))
#define I40E_GLHMC_LANRXBASE(f) (0x000C6400 + 4 * (f))
#define I40E_GLHMC_LANRXCNT(f) (0x000C6500 + 4 * (f))
#define I40E_GLHMC_LANQMAX 0x000C2008
#define I40E_GLHMC_LANTXOBJSZ 0x000C2004
#define I40E_GLHMC_LANRXOBJSZ 0x000C200C
#define I40E_PFHMC_SDCMD 0x000C0000
#define I40E_PFHMC_SDCMD_WRITE (1u << 31)
#define I40E_PFHMC_SDDATALOW 0x000C0100
#define I40E_PFHMC_SDDATALOW_VALID 1u
#define I40E_PFHMC_SDDATALOW_DIRECT (1u << 1)
#define I40E_PFHMC_SDDATALOW_BPCOUNT_SHIFT 2
#define I40E_PFHMC_SDDATAHIGH 0x000C0200
#define I40E_HMC_UNIT 512u /* FPM bases are in 512-byte units */
#define I40E_HMC_DIRECT_PAGES 512u /* backing pages of a direct segment, 4 KB each */
#define I40E_HMC_DIRECT_SIZE (I40E_HMC_DIRECT_PAGES * 4096u) /* 2 MB */

/* ---- RSS (X710/XL710 datasheet, receive-side scaling) ---- */
#define I40E_GLQF_CTL 0x00269BA4
#define I40E_GLQF_CTL_HTOEP (1u << 1)
#define I40E_PFQF_CTL_0 0x001C0AC0
#define I40E_PFQF_CTL_0_HASHLUTSIZE (1u << 16)
#define I40E_PFQF_HENA(i) (0x00245900 + 128 * (i))
#define I40E_PFQF_HKEY(i) (0x00244800 + 128 * (i))
#define I40E_PFQF_HLUT(i) (0x00240000 + 128 * (i))
#define I40E_RSS_KEY_SIZE 52
/* PCTYPEs hashed */
#define I40E_PCTYPE_IPV4_UDP 31
#define I40E_PCTYPE_IPV4_TCP 33
#define I40E_PCTYPE_IPV4_OTHER 35
#define I40E_PCTYPE_IPV6_UDP 41
#define I40E_PCTYPE_IPV6_TCP 43
#define I40E_PCTYPE_IPV6_OTHER 45

/* ---- port statistics, + 8 * port: free running, not cleared on read ---- */
#define I40E_GLPRT_GORCL(p) (0x00300000 + 8 * (p))
#define I40E_GLPRT_GORCH(p) (0x00300004 + 8 * (p))
#define I40E_GLPRT_UPRCL(p) (0x003005A0 + 8 * (p))
#define I40E_GLPRT_UPRCH(p) (0x003005A4 + 8 * (p))
#define I40E_GLPRT_RDPC(p) (0x00300600 + 8 * (p))
#define I40E_GLPRT_GOTCL(p) (0x00300680 + 8 * (p))
#define I40E_GLPRT_GOTCH(p) (0x00300684 + 8 * (p))
#define I40E_GLPRT_UPTCL(p) (0x003009C0 + 8 * (p))
#define I40E_GLPRT_UPTCH(p) (0x003009C4 + 8 * (p))
#define I40E_GLPRT_CRCERRS(p) (0x00300080 + 8 * (p))
#define I40E_GLPRT_RLEC(p) (0x003000A0 + 8 * (p))
#define I40E_GLPRT_ILLERRC(p) (0x003000E0 + 8 * (p))
#define I40E_GLPRT_RUC(p) (0x00300100 + 8 * (p))
#define I40E_GLPRT_ROC(p) (0x00300120 + 8 * (p))

/* ---- admin queue descriptor (X710/XL710 datasheet, admin queue) ---- */
struct i40e_aq_desc {
	uint16_t flags;
	uint16_t opcode;
	uint16_t datalen;
	uint16_t retval;
	uint32_t cookie_high;
	uint32_t cookie_low;
	union {
		uint8_t raw[16];
		struct {
			uint32_t param0;
			uint32_t param1;
			uint32_t addr_high;
			uint32_t addr_low;
		} ext;
	} params;
};
_Static_assert(sizeof(struct i40e_aq_desc) == 32, "AQ descriptor is 32 bytes");

#define I40E_AQ_FLAG_DD (1u << 0)
#define I40E_AQ_FLAG_CMP (1u << 1)
#define I40E_AQ_FLAG_ERR (1u << 2)
#define I40E_AQ_FLAG_LB (1u << 9)
#define I40E_AQ_FLAG_RD (1u << 10)
#define I40E_AQ_FLAG_BUF (1u << 12)
#define I40E_AQ_FLAG_SI (1u << 13)

enum i40e_aq_opcode {
	I40E_AQC_GET_VERSION = 0x0001,
	I40E_AQC_QUEUE_SHUTDOWN = 0x0003,
	I40E_AQC_LIST_FUNC_CAPS = 0x000A,
	I40E_AQC_MAC_ADDRESS_READ = 0x0107,
	I40E_AQC_CLEAR_PXE = 0x0110,
	I40E_AQC_GET_SWITCH_CONFIG = 0x0200,
	I40E_AQC_UPDATE_VSI = 0x0211,
	I40E_AQC_GET_VSI_PARAMS = 0x0212,
	I40E_AQC_SET_VSI_PROMISC = 0x0254,
	I40E_AQC_SET_MAC_CONFIG = 0x0603,
	I40E_AQC_GET_PHY_ABILITIES = 0x0600,
	I40E_AQC_SET_PHY_CONFIG = 0x0601,
	I40E_AQC_GET_LINK_STATUS = 0x0607,
	I40E_AQC_SET_PHY_INT_MASK = 0x0613,
};

/* get PHY abilities (0x0600, indirect, 0x218-byte response) and set PHY
 * config (0x0601, direct): phy_type u32 at 0, link_speed u8 at 4,
 * abilities u8 at 5, eee_capability u16 at 6, eeer u32 at 8, d3_lpan /
 * low_power_ctrl u8 at 12, phy_type_ext u8 at 13, FEC u8 at 14. */
#define I40E_PHY_ABILITIES_SIZE 0x218
#define I40E_PHY_REPORT_INIT 0x2u       /* get PHY abilities: the NVM's defaults */
#define I40E_PHY_PAUSE_MASK 0x3u        /* abilities bits 1:0: pause tx, rx */
#define I40E_PHY_ENABLE_LINK 0x08u
#define I40E_PHY_ENABLE_AN 0x10u
#define I40E_PHY_ENABLE_ATOMIC 0x20u    /* apply now: the link restarts */
#define I40E_PHY_FEC_MASK 0x1Fu
/* set PHY interrupt mask (0x0613): u16 at 8, a set bit masks the event */
#define I40E_PHY_INT_MASK_OFF 8
#define I40E_PHY_EVENT_LINK_UPDOWN 0x0002u
#define I40E_PHY_EVENT_MEDIA_NA 0x0004u
#define I40E_PHY_EVENT_MODULE_QUAL_FAIL 0x0100u

/* set VSI promiscuous modes (0x0254) direct parameters: flags u16, valid
 * u16 (which flags the command sets), seid u16 (X710/XL710 datasheet, admin
 * queue commands, "Set VSI Promiscuous Modes"). Broadcast is a promiscuous
 * mode of its own: a VSI without it receives no broadcast frame. */
#define I40E_PROMISC_UNICAST (1u << 0)
#define I40E_PROMISC_MULTICAST (1u << 1)
#define I40E_PROMISC_BROADCAST (1u << 2)

/* Firmware return codes (retval) the driver names. */
enum i40e_aq_rc {
	I40E_AQ_RC_OK = 0,
	I40E_AQ_RC_EPERM = 1,
	I40E_AQ_RC_ENOENT = 2,
	I40E_AQ_RC_EIO = 5,
	I40E_AQ_RC_ENOMEM = 9,
	I40E_AQ_RC_EBUSY = 12,
	I40E_AQ_RC_EEXIST = 13,
	I40E_AQ_RC_EINVAL = 14,
	I40E_AQ_RC_ENOSPC = 16,
	I40E_AQ_RC_ENOSYS = 17,
};

/* Capability element (0x000A response, 32 bytes): id, major, minor,
 * number, logical_id, phys_id. */
#define I40E_CAP_ELEM_SIZE 32
#define I40E_CAP_RSS 0x0040
#define I40E_CAP_RXQ 0x0041
#define I40E_CAP_TXQ 0x0042

/* get switch config (0x0200) response: 16-byte header, then 16-byte
 * elements {type u8, revision u8, seid u16, ...}; type 0x13 is a VSI. */
#define I40E_SWITCH_HDR_SIZE 16
#define I40E_SWITCH_ELEM_SIZE 16
#define I40E_SWITCH_ELEM_VSI 0x13

/* VSI properties (0x0211/0x0212 buffer, 128 bytes). Offsets follow the
 * firmware's section layout (DPDK i40e_aqc_vsi_properties_data; the datasheet's
 * admin-queue chapter names only the queue map and qs_handle). */
#define I40E_VSI_PROPS_SIZE 128
#define I40E_VSI_VALID_SECTIONS 0
#define I40E_VSI_PROP_QUEUE_MAP_VALID (1u << 6)
#define I40E_VSI_MAPPING_FLAGS 28 /* 0: contiguous queues */
#define I40E_VSI_QUEUE_MAPPING 30 /* u16[16]: [0] = first queue */
#define I40E_VSI_TC_MAPPING 62    /* u16[8]: offset bits 8:0, log2(count) bits 12:9 */
#define I40E_VSI_TC_QCOUNT_SHIFT 9
#define I40E_VSI_QS_HANDLE 96     /* u16[8], written by firmware */

/* get link status (0x0607) direct parameters. */
#define I40E_LINK_CMD_FLAGS 0    /* u16: 3 = enable link-status events */
#define I40E_LINK_SPEED 3        /* u8: bit 1 100M, 2 1G, 3 10G, 4 40G, 5 20G, 6 25G */
#define I40E_LINK_INFO 4         /* u8: bit 0 link up */
#define I40E_LINK_MAX_FRAME 8    /* u16 */
#define I40E_LINK_LSE_ENABLE 3u

/* ---- RX descriptor, 32 bytes (X710/XL710 datasheet 8.3) ---- */
union i40e_rx_desc {
	struct {
		uint64_t pkt_addr;
		uint64_t hdr_addr; /* bit 0: where DD lands; 0 when armed */
		uint64_t rsvd1;
		uint64_t rsvd2;
	} read;
	uint64_t q[4]; /* write-back: qword0 hash, qword1 status/error/length */
};
_Static_assert(sizeof(union i40e_rx_desc) == 32, "32-byte rx descriptor");

#define I40E_RXD_DD (1ull << 0)
#define I40E_RXD_EOF (1ull << 1)
#define I40E_RXD_FLTSTAT_SHIFT 12
#define I40E_RXD_FLTSTAT_RSS 3ull
#define I40E_RXD_ERR_RXE (1ull << 19)
#define I40E_RXD_PTYPE_SHIFT 30
#define I40E_RXD_LEN_SHIFT 38
#define I40E_RXD_LEN_MASK 0x3FFFull

/* ---- TX data descriptor, 16 bytes (X710/XL710 datasheet, transmit descriptors) ---- */
struct i40e_tx_desc {
	uint64_t addr;
	uint64_t cmd; /* DTYPE 3:0, CMD 13:4, OFFSET 33:16, size 47:34, L2TAG1 63:48 */
};
_Static_assert(sizeof(struct i40e_tx_desc) == 16, "16-byte tx descriptor");

#define I40E_TXD_DTYPE_MASK 0xFull
#define I40E_TXD_DTYPE_DATA 0x0ull
#define I40E_TXD_DTYPE_DONE 0xFull
#define I40E_TXD_CMD_EOP (1ull << 4)
#define I40E_TXD_CMD_RS (1ull << 5)
#define I40E_TXD_CMD_ICRC (1ull << 6)
#define I40E_TXD_SIZE_SHIFT 34

/* ---- LAN queue contexts in HMC memory (X710/XL710 datasheet, LAN queue contexts): {lsb, width} ---- */
#define I40E_HMC_RX_CTX_SIZE 32
#define I40E_HMC_TX_CTX_SIZE 128
#define I40E_RXCTX_HEAD 0, 13
#define I40E_RXCTX_BASE 32, 57
#define I40E_RXCTX_QLEN 89, 13
#define I40E_RXCTX_DBUFF 102, 7
#define I40E_RXCTX_HBUFF 109, 5
#define I40E_RXCTX_DTYPE 114, 2
#define I40E_RXCTX_DSIZE 116, 1
#define I40E_RXCTX_CRCSTRIP 117, 1
#define I40E_RXCTX_L2TSEL 119, 1
#define I40E_RXCTX_RXMAX 174, 14
#define I40E_RXCTX_LRXQTHRESH 198, 3
#define I40E_RXCTX_PREFENA 201, 1
#define I40E_TXCTX_HEAD 0, 13
#define I40E_TXCTX_NEW_CONTEXT 30, 1
#define I40E_TXCTX_BASE 32, 57
#define I40E_TXCTX_QLEN 161, 13
#define I40E_TXCTX_RDYLIST 980, 10

#endif
