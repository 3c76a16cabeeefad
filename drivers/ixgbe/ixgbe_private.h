/* ixgbe internals shared by the datapath (ixgbe.c) and the bring-up and
 * configuration (ixgbe_init.c). */
#ifndef SLUICE_DRIVERS_IXGBE_PRIVATE_H
#define SLUICE_DRIVERS_IXGBE_PRIVATE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "drivers/device.h"
#include "drivers/ixgbe/ixgbe_regs.h"
#include "drivers/pci/pci.h"
#include "drivers/pci/pci_nic.h"
#include "drivers/pci/rx_chain.h"
#include "drivers/pci/rx_ring.h"
#include "drivers/pci/tx_ring.h"
#include "drivers/pci/tx_slots.h"

#define IXGBE_MAX_QUEUES 16     /* 82599 RSS spans at most 16 queues */
#define IXGBE_POLL_TIMEOUT_MS 1000 /* every register wait: reset, EEPROM, DMA init, queue enables */
#define IXGBE_POLL_STEP_US 1000
#define IXGBE_MAX_FRAME_HW 9728 /* largest frame we let MAXFRS accept */

/* Clear-on-read statistics registers, accumulated. */
struct ixgbe_hw_stats {
	uint64_t gprc, gptc, gorc, gotc;
	uint64_t mpc, qprdc[IXGBE_MAX_QUEUES];
	uint64_t crcerrs, illerrc, rlec, ruc, rfc, roc, rjc;
};

struct ixgbe_dev {
	struct device dev;
	struct pci_io *io;
	struct pci_rxq rxq[IXGBE_MAX_QUEUES];
	struct pci_txq txq[IXGBE_MAX_QUEUES];
	uint32_t n_rx_desc, n_tx_desc;
	uint32_t max_frame;
	bool promisc;
	bool running;
	bool buffers_mapped;
	uint8_t mac[6];
	struct ixgbe_hw_stats hw;
	char addr[PCI_ADDR_SIZE];
	char wait_err[160];       /* the last wait that passed its bound */
	/* MSI-X (ixgbe_irq.c): rx queue q's vector q delivered to irq_fd[q];
	 * n_irq 0: no interrupts, the queues stay polled. */
	uint32_t n_irq;
	int irq_fd[IXGBE_MAX_QUEUES];
};

static inline uint32_t rd(struct ixgbe_dev *xd, uint32_t reg)
{
	return pci_read32(xd->io, reg);
}

static inline void wr(struct ixgbe_dev *xd, uint32_t reg, uint32_t v)
{
	pci_write32(xd->io, reg, v);
}

/* ---- ixgbe_init.c ---- */

void ixgbe_set_bits(struct ixgbe_dev *xd, uint32_t reg, uint32_t bits);
void ixgbe_clear_bits(struct ixgbe_dev *xd, uint32_t reg, uint32_t bits);
/* Poll until (reg & mask) == want, at most IXGBE_POLL_TIMEOUT_MS of the
 * drivers' clock (drivers/pci/pci_clock.h); 0, or -ETIMEDOUT with
 * xd->wait_err saying what (the step's name) was not done, and logged. */
int ixgbe_wait_reg(struct ixgbe_dev *xd, uint32_t reg, uint32_t mask, uint32_t want, const char *what);
/* Read every clear-on-read counter we keep into the running totals. */
void ixgbe_hw_stats_update(struct ixgbe_dev *xd);

/* ---- ixgbe_irq.c ---- */

/* The interval EITR throttles each rx vector to (82599 datasheet 7.3.2.1):
 * at most one interrupt per queue every 10 us (100,000 a second), so that
 * a queue in interrupt mode under load costs the host a bounded rate of
 * wakeups; its first frame after a quiet spell is not delayed by it. */
#define IXGBE_ITR_US 10

/* An eventfd per rx queue as its MSI-X vector (vfio). Without them (an io
 * without interrupts, too few vectors) n_irq stays 0 and the queues stay
 * polled; never fails the interface. */
void ixgbe_irq_open(struct ixgbe_dev *xd);
void ixgbe_irq_close(struct ixgbe_dev *xd);
/* Program the causes after a start: MSI-X mode, auto-clear and auto-mask,
 * rx queue q -> vector q, its throttle; every cause masked (polling). */
void ixgbe_irq_program(struct ixgbe_dev *xd);
/* Enable rx queue q's interrupt: stale eventfd count read, stale cause
 * cleared, the cause unmasked and the write flushed to the NIC. */
void ixgbe_irq_enable(struct ixgbe_dev *xd, uint16_t q);
/* device_ops.rx_fd and rx_arm (device.h). */
int ixgbe_rx_fd(struct device *dev, uint16_t q);
bool ixgbe_rx_arm(struct device *dev, uint16_t q);

/* ---- ixgbe.c ---- */

extern const struct device_ops ixgbe_ops;
/* Whether rx queue q's next descriptor is done (DD). */
bool ixgbe_rx_pending(struct ixgbe_dev *xd, uint16_t q);
void ixgbe_link(struct device *dev, struct dev_link *link);
/* `show hardware` and `show nic`: link, queue heads and tails, drop and
 * hardware counters, read from the registers. */
int ixgbe_format_hw(struct device *dev, char *buf, size_t len);

#endif
