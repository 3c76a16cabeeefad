/* ixgbe (82599) BAR0 registers, bits and descriptor layouts
 * the driver uses, from the Intel 82599 10 GbE Controller datasheet (section
 * numbers in the comments) and the public Linux ixgbe and DPDK ixgbe base
 * headers, which agree with it.
 * Private to drivers/ixgbe: the device model keeps its own decode, so that
 * a wrong offset here is caught rather than shared.
 */
#ifndef SLUICE_DRIVERS_IXGBE_REGS_H
#define SLUICE_DRIVERS_IXGBE_REGS_H

#include <stdint.h>

/* ---- general (82599 datasheet 8, device registers) ---- */
#define IXGBE_CTRL 0x00000
#define IXGBE_CTRL_LNK_RST (1u << 3)
#define IXGBE_CTRL_RST (1u << 26)
#define IXGBE_CTRL_RST_MASK (IXGBE_CTRL_LNK_RST | IXGBE_CTRL_RST)
#define IXGBE_STATUS 0x00008
#define IXGBE_CTRL_EXT 0x00018
#define IXGBE_CTRL_EXT_NS_DIS (1u << 16)
#define IXGBE_EICR 0x00800
#define IXGBE_EIMS 0x00880
#define IXGBE_EIMC 0x00888
/* interrupts, MSI-X mode (82599 datasheet 7.3, 8.2.3.5): EICR bit v is
 * vector v's cause for v < 16 */
#define IXGBE_EICS 0x00808
#define IXGBE_EIAC 0x00810
#define IXGBE_EITR(n) (0x00820 + 4 * (n)) /* n < 24 */
#define IXGBE_EITR_ITR_MASK 0x00000FF8u   /* interval, bits 11:3, 2 us units */
#define IXGBE_EITR_CNT_WDIS (1u << 31)
#define IXGBE_EIAM 0x00890
#define IXGBE_GPIE 0x00898
#define IXGBE_GPIE_MSIX_MODE (1u << 4)
#define IXGBE_GPIE_EIAME (1u << 30)
#define IXGBE_GPIE_PBA_SUPPORT (1u << 31)
#define IXGBE_IVAR(n) (0x00900 + 4 * (n)) /* rx 2n, tx 2n, rx 2n+1, tx 2n+1: a byte each */
#define IXGBE_IVAR_ALLOC_VAL 0x80u
#define IXGBE_RDRXCTL 0x02F00
#define IXGBE_RDRXCTL_CRCSTRIP (1u << 1)
#define IXGBE_RDRXCTL_DMAIDONE (1u << 3)
#define IXGBE_RXCTRL 0x03000
#define IXGBE_RXCTRL_RXEN (1u << 0)
#define IXGBE_RXPBSIZE(i) (0x03C00 + 4 * (i))
#define IXGBE_HLREG0 0x04240
#define IXGBE_HLREG0_TXCRCEN (1u << 0)
#define IXGBE_HLREG0_RXCRCSTRP (1u << 1)
#define IXGBE_HLREG0_JUMBOEN (1u << 2)
#define IXGBE_HLREG0_TXPADEN (1u << 10)
#define IXGBE_MAXFRS 0x04268
#define IXGBE_AUTOC 0x042A0
#define IXGBE_AUTOC_AN_RESTART (1u << 12)
#define IXGBE_AUTOC_LMS_SHIFT 13
#define IXGBE_AUTOC_LMS_MASK (7u << 13)
#define IXGBE_AUTOC_LMS_10G_SERIAL (3u << 13)
#define IXGBE_AUTOC_10G_PMA_PMD_MASK (3u << 7)
#define IXGBE_LINKS 0x042A4
#define IXGBE_LINKS_UP (1u << 30)
#define IXGBE_LINKS_SPEED_SHIFT 28
#define IXGBE_LINKS_SPEED_MASK (3u << 28)
#define IXGBE_RTTDCS 0x04900
#define IXGBE_RTTDCS_ARBDIS (1u << 6)
#define IXGBE_DMATXCTL 0x04A80
#define IXGBE_DMATXCTL_TE (1u << 0)
#define IXGBE_FCTRL 0x05080
#define IXGBE_FCTRL_MPE (1u << 8)
#define IXGBE_FCTRL_UPE (1u << 9)
#define IXGBE_FCTRL_BAM (1u << 10)
#define IXGBE_RAL(i) (0x05400 + 8 * (i))
#define IXGBE_RAH(i) (0x05404 + 8 * (i))
#define IXGBE_MRQC 0x05818 /* the address Linux and DPDK use; the 82599
                            * datasheet also lists an alias at 0x0EC80 */
#define IXGBE_MRQC_RSSEN 0x1u
#define IXGBE_MRQC_TCPIPV4 (1u << 16)
#define IXGBE_MRQC_IPV4 (1u << 17)
#define IXGBE_MRQC_IPV6 (1u << 20)
#define IXGBE_MRQC_TCPIPV6 (1u << 21)
#define IXGBE_MRQC_UDPIPV4 (1u << 22)
#define IXGBE_MRQC_UDPIPV6 (1u << 23)
#define IXGBE_RETA(i) (0x05C00 + 4 * (i))
#define IXGBE_RETA_ENTRIES 128
#define IXGBE_RSSRK(i) (0x05C80 + 4 * (i))
#define IXGBE_DTXMXSZRQ 0x08100
#define IXGBE_TXPBSIZE(i) (0x0CC00 + 4 * (i))
#define IXGBE_EEC 0x10010
#define IXGBE_EEC_ARD (1u << 9)

/* ---- per queue, queues 0..63 ---- */
#define IXGBE_RDBAL(n) (0x01000 + 0x40 * (n))
#define IXGBE_RDBAH(n) (0x01004 + 0x40 * (n))
#define IXGBE_RDLEN(n) (0x01008 + 0x40 * (n))
#define IXGBE_DCA_RXCTRL(n) (0x0100C + 0x40 * (n))
#define IXGBE_DCA_RXCTRL_BIT12 (1u << 12)
#define IXGBE_RDH(n) (0x01010 + 0x40 * (n))
#define IXGBE_SRRCTL(n) (0x01014 + 0x40 * (n))
#define IXGBE_SRRCTL_BSIZEPKT_MASK 0x7Fu
#define IXGBE_SRRCTL_DESCTYPE_MASK (7u << 25)
#define IXGBE_SRRCTL_DESCTYPE_ADV_ONEBUF (1u << 25)
#define IXGBE_SRRCTL_DROP_EN (1u << 28)
#define IXGBE_RDT(n) (0x01018 + 0x40 * (n))
#define IXGBE_RXDCTL(n) (0x01028 + 0x40 * (n))
#define IXGBE_RXDCTL_ENABLE (1u << 25)
/* RXDCTL and TXDCTL thresholds (8.2.3.8.6, 8.2.3.9.10): prefetch (PTHRESH
 * 6:0), host (HTHRESH 14:8) and write-back (WTHRESH 22:16) */
#define IXGBE_DCTL_HTHRESH_SHIFT 8
#define IXGBE_DCTL_WTHRESH_SHIFT 16
#define IXGBE_DCTL_WTHRESH_MASK (0x7Fu << 16)
#define IXGBE_TDBAL(n) (0x06000 + 0x40 * (n))
#define IXGBE_TDBAH(n) (0x06004 + 0x40 * (n))
#define IXGBE_TDLEN(n) (0x06008 + 0x40 * (n))
#define IXGBE_TDH(n) (0x06010 + 0x40 * (n))
#define IXGBE_TDT(n) (0x06018 + 0x40 * (n))
#define IXGBE_TXDCTL(n) (0x06028 + 0x40 * (n))
#define IXGBE_TXDCTL_ENABLE (1u << 25)

/* ---- statistics, clear on read ---- */
#define IXGBE_CRCERRS 0x04000
#define IXGBE_ILLERRC 0x04004
#define IXGBE_RLEC 0x04040
#define IXGBE_GPRC 0x04074
#define IXGBE_GPTC 0x04080
#define IXGBE_GORCL 0x04088
#define IXGBE_GORCH 0x0408C
#define IXGBE_GOTCL 0x04090
#define IXGBE_GOTCH 0x04094
#define IXGBE_RUC 0x040A4
#define IXGBE_RFC 0x040A8
#define IXGBE_ROC 0x040AC
#define IXGBE_RJC 0x040B0
#define IXGBE_MPC(i) (0x03FA0 + 4 * (i))
#define IXGBE_QPRDC(n) (0x01430 + 0x40 * (n)) /* n < 16 */

/* ---- advanced descriptors (82599 datasheet 7.1 receive, 7.2 transmit) ---- */

/* rx, read format: pkt_addr, hdr_addr (0: its low bit is where DD lands).
 * Write-back: lo_dword (rss type 3:0, packet type 16:4), rss hash,
 * status_error (DD bit 0, EOP bit 1, errors 31:20), length, vlan. */
union ixgbe_rx_desc {
	struct {
		uint64_t pkt_addr;
		uint64_t hdr_addr;
	} read;
	struct {
		uint32_t lo_dword;
		uint32_t rss;
		uint32_t status_error;
		uint16_t length;
		uint16_t vlan;
	} wb;
	uint64_t q[2];
};
_Static_assert(sizeof(union ixgbe_rx_desc) == 16, "16-byte rx descriptor");

#define IXGBE_RXD_STAT_DD (1u << 0)
#define IXGBE_RXD_STAT_EOP (1u << 1)
#define IXGBE_RXD_ERR_RXE (1u << 29)
#define IXGBE_RXD_RSSTYPE_MASK 0xFu

/* tx data descriptor: buffer address, cmd_type_len, olinfo_status. */
union ixgbe_tx_desc {
	struct {
		uint64_t buffer_addr;
		uint32_t cmd_type_len;
		uint32_t olinfo_status;
	} read;
	struct {
		uint64_t rsvd;
		uint32_t nxtseq_seed;
		uint32_t status;
	} wb;
};
_Static_assert(sizeof(union ixgbe_tx_desc) == 16, "16-byte tx descriptor");

#define IXGBE_TXD_DTYP_DATA (3u << 20)
#define IXGBE_TXD_CMD_EOP (1u << 24)
#define IXGBE_TXD_CMD_IFCS (1u << 25)
#define IXGBE_TXD_CMD_RS (1u << 27)
#define IXGBE_TXD_CMD_DEXT (1u << 29)
#define IXGBE_TXD_PAYLEN_SHIFT 14
#define IXGBE_TXD_STAT_DD (1u << 0)

#endif
