/* The 82599 model's own register map: every offset and bit the model
 * decodes, transcribed from the Intel 82599 10 GbE Controller Datasheet,
 * chapter 8 (8.2.3 register descriptions: 8.2.3.1 general control, 8.2.3.2
 * EEPROM/flash, 8.2.3.5 interrupts, 8.2.3.7 receive filters, 8.2.3.8
 * receive DMA, 8.2.3.9 transmit, 8.2.3.10 DCB, 8.2.3.22 MAC, 8.2.3.23
 * statistics) and written without looking at drivers/ixgbe/ixgbe_regs.h,
 * which a model must never include: a shared misreading would pass.
 * tests/nic/regs_ixgbe.c compares the two for every register both use.
 *
 * Private to tests/models/ixgbe_model.c and the comparison test.
 */
#ifndef SLUICE_TESTS_IXGBE_MODEL_REGS_H
#define SLUICE_TESTS_IXGBE_MODEL_REGS_H

/* registers (82599 datasheet chapter 8) */
enum {
	R_CTRL = 0x00000, R_STATUS = 0x00008, R_CTRL_EXT = 0x00018, R_EICR = 0x00800, R_EIAC = 0x00810,
	R_EIMS = 0x00880, R_EIMC = 0x00888, R_EIAM = 0x00890, R_RDRXCTL = 0x02F00, R_RXDGPC = 0x02F50,
	R_RXCTRL = 0x03000, R_HLREG0 = 0x04240, R_MAXFRS = 0x04268, R_MFLCN = 0x04294, R_AUTOC = 0x042A0,
	R_LINKS = 0x042A4, R_RTTDCS = 0x04900, R_DMATXCTL = 0x04A80, R_RXCSUM = 0x05000, R_FCTRL = 0x05080,
	R_VLNCTRL = 0x05088, R_MRQC = 0x05818, R_MRQC_ALIAS = 0x0EC80, R_DTXMXSZRQ = 0x08100, R_MTQC = 0x08120,
	R_TXDGPC = 0x087A0, R_EEC = 0x10010, R_SWSM = 0x10140,
	R_CRCERRS = 0x04000, R_ILLERRC = 0x04004, R_ERRBC = 0x04008, R_MSPDC = 0x04010, R_MLFC = 0x04034,
	R_MRFC = 0x04038, R_RLEC = 0x04040, R_GPRC = 0x04074, R_BPRC = 0x04078, R_MPRC = 0x0407C,
	R_GPTC = 0x04080, R_GORCL = 0x04088, R_GORCH = 0x0408C, R_GOTCL = 0x04090, R_GOTCH = 0x04094,
	R_RUC = 0x040A4, R_RFC = 0x040A8, R_ROC = 0x040AC, R_RJC = 0x040B0, R_MNGPDC = 0x040B8,
	R_TORL = 0x040C0, R_TORH = 0x040C4, R_TPR = 0x040D0, R_TPT = 0x040D4, R_MPTC = 0x040F0,
	R_BPTC = 0x040F4, R_LXONRXCNT = 0x041A4, R_LXOFFRXCNT = 0x041A8,
};
#define R_EIMS_EX(i) (0x00AA0 + 4 * (i))
/* interrupts in MSI-X mode (8.2.3.5): EICR bits 15:0 are vectors 0..15 */
#define R_EICS 0x00808
#define R_EITR(n) (0x00820 + 4 * (n)) /* n < 24 */
#define R_GPIE 0x00898
#define R_IVAR(n) (0x00900 + 4 * (n)) /* n < 64: rx 2n, tx 2n, rx 2n+1, tx 2n+1, a byte each */
#define EICR_RTXQ_MASK 0xFFFFu
#define GPIE_MSIX_MODE (1u << 4)
#define GPIE_EIAME (1u << 30)
#define GPIE_PBA_SUPPORT (1u << 31)
#define IVAR_ALLOC_VAL 0x80u
#define IVAR_VECTOR_MASK 0x3Fu
#define EITR_INTERVAL_MASK 0x0FF8u /* bits 11:3, in 2 us units at 1 and 10 Gb/s */
#define EITR_INTERVAL_NS 2000u
#define R_EIMC_EX(i) (0x00AB0 + 4 * (i))
#define R_RXPBSIZE(i) (0x03C00 + 4 * (i))
#define R_MPC(i) (0x03FA0 + 4 * (i))
#define R_MTA(i) (0x05200 + 4 * (i))
#define R_RAL(i) ((i) < 16 ? 0x05400 + 8 * (i) : 0x0A200 + 8 * (i))
#define R_RAH(i) (R_RAL(i) + 4)
#define R_RETA(i) (0x05C00 + 4 * (i))
#define R_RSSRK(i) (0x05C80 + 4 * (i))
#define R_TXPBSIZE(i) (0x0CC00 + 4 * (i))
#define R_RQSMR(i) (0x02300 + 4 * (i))
#define R_TQSM(i) (0x08600 + 4 * (i))
#define R_QBTC_L(n) (0x08700 + 8 * (n))
/* per rx queue n < 64: block at 0x01000 + 0x40 n */
#define RXQ_BASE 0x01000
#define TXQ_BASE 0x06000
enum { Q_BAL = 0x00, Q_BAH = 0x04, Q_LEN = 0x08, Q_DCA = 0x0C, Q_HEAD = 0x10, Q_SRRCTL = 0x14, Q_TAIL = 0x18,
       Q_CTL = 0x28, Q_RSCCTL = 0x2C, Q_STAT0 = 0x30, Q_STAT1 = 0x34, Q_WBAL = 0x38, Q_WBAH = 0x3C };
#define RXQ(n, r) (RXQ_BASE + 0x40 * (n) + (r))
#define TXQ(n, r) (TXQ_BASE + 0x40 * (n) + (r))

/* bits */
#define CTRL_RST_MASK ((1u << 26) | (1u << 3))
#define RDRXCTL_CRCSTRIP (1u << 1)
#define RDRXCTL_DMAIDONE (1u << 3)
#define RXCTRL_RXEN 1u
#define HLREG0_TXCRCEN (1u << 0)
#define HLREG0_RXCRCSTRP (1u << 1)
#define HLREG0_JUMBOEN (1u << 2)
#define HLREG0_TXPADEN (1u << 10)
#define AUTOC_AN_RESTART (1u << 12)
#define AUTOC_LMS_SHIFT 13             /* link mode select, bits 15:13 (8.2.3.22.19) */
#define AUTOC_LMS_MASK (7u << AUTOC_LMS_SHIFT)
#define AUTOC_LMS_10G_SERIAL (3u << AUTOC_LMS_SHIFT) /* 011b: 10 GbE serial, SFI: the SFP+ ports' */
#define LINKS_UP (1u << 30)
#define LINKS_10G (3u << 28)
#define DMATXCTL_TE 1u
#define FCTRL_MPE (1u << 8)
#define FCTRL_UPE (1u << 9)
#define FCTRL_BAM (1u << 10)
#define RAH_AV (1u << 31)
#define EEC_ARD (1u << 9)
#define QCTL_ENABLE (1u << 25)
#define SRRCTL_DESCTYPE(v) (((v) >> 25) & 7u)
#define SRRCTL_DROP_EN (1u << 28)

/* more bits (8.2.3.7.12 MRQC, 8.2.3.8.1 DCA_RXCTRL) */
#define MRQC_TCPIPV4 (1u << 16)
#define MRQC_IPV4 (1u << 17)
#define MRQC_IPV6 (1u << 20)
#define MRQC_TCPIPV6 (1u << 21)
#define MRQC_UDPIPV4 (1u << 22)
#define MRQC_UDPIPV6 (1u << 23)
#define DCA_RXCTRL_RSVD12 (1u << 12) /* reads 1 after reset, must be written 0 */
#define SRRCTL_BSIZEPACKET_MASK 0x7Fu /* 1 KB units */
#define QPRDC(n) RXQ(16 + (n), Q_STAT0) /* n < 16: 8.2.3.23, in the rx block of queue 16 + n */

/* RXDCTL / TXDCTL (8.2.3.8.6, 8.2.3.9.10): PTHRESH 6:0, HTHRESH 14:8,
 * WTHRESH 22:16, ENABLE 25 */
#define DCTL_WTHRESH_SHIFT 16
#define RXDCTL_WTHRESH_MAX 0x7Fu

/* advanced receive descriptor write-back (7.1.6.2): quadword 1 */
#define RXD_STAT_DD 1ull
#define RXD_STAT_EOP 2ull
#define RXD_LEN_SHIFT 32
/* advanced transmit data descriptor (7.2.3.2.4): cmd_type_len and olinfo_status */
#define TXD_DTALEN_MASK 0xFFFFu
#define TXD_DTYP_SHIFT 20
#define TXD_DTYP_CTXT 2u
#define TXD_DTYP_DATA 3u
#define TXD_DCMD_EOP (1u << 24)
#define TXD_DCMD_IFCS (1u << 25)
#define TXD_DCMD_RS (1u << 27)
#define TXD_DCMD_DEXT (1u << 29)
#define TXD_PAYLEN_SHIFT 14
#define TXD_STA_DD (1ull << 32) /* write-back: DD in the upper dword of quadword 1 */

#endif
