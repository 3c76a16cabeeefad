/* i40e internals shared by the datapath (i40e.c), the admin queue
 * (i40e_adminq.c) and the bring-up and configuration (i40e_init.c). */
#ifndef SLUICE_DRIVERS_I40E_PRIVATE_H
#define SLUICE_DRIVERS_I40E_PRIVATE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"
#include "drivers/i40e/i40e_regs.h"
#include "drivers/pci/pci.h"
#include "drivers/pci/pci_nic.h"
#include "drivers/pci/rx_chain.h"
#include "drivers/pci/rx_ring.h"
#include "drivers/pci/tx_ring.h"
#include "drivers/pci/tx_slots.h"

#define I40E_MAX_QUEUES 16      /* DEV_MAX_QUEUES; a VSI TC spans a power of two */
/* Bounds of the waits, on the drivers' clock (drivers/pci/pci_clock.h).
 * The public drivers wait for the NVM load up to 200 times 10-20 ms and for
 * PFSWR up to 200 times 1-2 ms; sluice takes the upper ends. */
#define I40E_POLL_TIMEOUT_MS 1000          /* queue enable and disable */
#define I40E_GLOBAL_RESET_TIMEOUT_MS 10000 /* a global reset in progress at start */
#define I40E_NVM_LOAD_TIMEOUT_MS 4000      /* GLNVM_ULD core and global done */
#define I40E_PF_RESET_TIMEOUT_MS 400       /* PFGEN_CTRL.PFSWR self-clearing */
#define I40E_POLL_STEP_US 1000
/* ITR 0 of vector 0, in 2 us units: how long a completed receive
 * descriptor may wait for its cache line before it is written back anyway
 * (i40e.c, rx_wb_on_itr). The smallest: low-rate latency over PCIe
 * efficiency; at any rate that fills a line in 2 us it does not matter. */
#define I40E_RX_WB_ITR 1
#define I40E_AQ_ENTRIES 32      /* DPDK's admin ring size */
#define I40E_AQ_BUF_SIZE 4096
#define I40E_AQ_TIMEOUT_US 250000 /* DPDK's I40E_ASQ_CMD_TIMEOUT */
#define I40E_AQ_POLL_US 50
#define I40E_API_MAJOR 1        /* newest admin-queue API major we speak */
#define I40E_MAX_FRAME_HW 9728 /* the MAC's largest max frame size */

/* One admin ring (ATQ or ARQ) and its buffers, in DMA memory. */
struct i40e_aq_ring {
	volatile struct i40e_aq_desc *desc;
	uint8_t *bufs;        /* ATQ: one command buffer; ARQ: one per entry */
	uint32_t next;        /* ATQ: next_to_use; ARQ: next_to_clean */
};

/* Port counters are free running and wrap (48-bit octet and packet pairs,
 * 32-bit drops and errors; X710 datasheet, statistics registers): each read
 * adds what a counter moved since the last read, modulo its width, into a
 * 64-bit total, so the totals survive any number of wraps as long as a
 * counter is read more often than it wraps (a 48-bit octet counter at
 * 40 Gb/s: about 16 hours). */
struct i40e_hw_stats {
	uint64_t gorc, uprc, gotc, uptc, rdpc, crcerrs, rlec, illerrc, ruc, roc;
};

struct i40e_dev {
	struct device dev;
	struct pci_io *io;
	struct pci_rxq rxq[I40E_MAX_QUEUES];
	struct pci_txq txq[I40E_MAX_QUEUES];
	uint32_t n_rx_desc, n_tx_desc;
	uint32_t pf_id, port;
	uint32_t base_queue;      /* absolute index of PF queue 0 (capability 0x0041) */
	uint32_t n_hw_queues;     /* queue pairs the function has */
	uint32_t lut_size;        /* RSS LUT entries: 128 or 512 */
	uint32_t max_frame;       /* mtu + 18: MAC config and rxmax */
	uint16_t vsi_seid;
	uint16_t qs_handle;       /* TC0's queue set: TX contexts' rdylist */
	uint16_t fw_major, fw_minor, api_major, api_minor;
	struct i40e_aq_ring atq, arq;
	uint16_t aq_last_rc;      /* retval of the last failed command */
	uint8_t *hmc;             /* SD 0, direct: TX contexts then RX contexts */
	size_t hmc_size;
	uint32_t hmc_rx_base;     /* byte offset of RX contexts in hmc */
	struct dev_link link;     /* from get link status and link events */
	uint8_t phy_speeds;       /* the PHY's speeds (get PHY abilities), configured */
	uint64_t n_link_events;
	bool aq_up;
	bool running;
	bool buffers_mapped;
	bool promisc;
	uint8_t mac[6];
	struct i40e_hw_stats hw_last;  /* raw values at the last read */
	struct i40e_hw_stats hw;       /* totals since bring-up */
	char addr[PCI_ADDR_SIZE];
	char wait_err[160];       /* the last wait that passed its bound */
	/* MSI-X (i40e.c): rx queue q's cause on vector q + 1, delivered to
	 * irq_fd[q]; n_irq 0: no interrupts, every cause on vector 0. */
	uint32_t n_irq;
	int irq_fd[I40E_MAX_QUEUES];
};

static inline uint32_t rd(struct i40e_dev *id, uint32_t reg)
{
	return pci_read32(id->io, reg);
}

static inline void wr(struct i40e_dev *id, uint32_t reg, uint32_t v)
{
	pci_write32(id->io, reg, v);
}

/* X722 (as the Linux and DPDK i40e drivers treat it): RSS key and LUT only through the admin queue. */
static inline bool i40e_is_x722(uint16_t device)
{
	return (device >= 0x37CE && device <= 0x37D3) || device == 0x0DDA;
}

/* ---- i40e_adminq.c ---- */

/* Set up both admin rings and hand the ARQ's buffers to firmware
 * (X710/XL710 datasheet, admin queue).
 * 0 or a negative errno. */
int i40e_aq_init(struct i40e_dev *id);
/* Tell firmware we go (queue shutdown), disable and free both rings. */
void i40e_aq_shutdown(struct i40e_dev *id);
/* Send one command and wait for its completion: *desc is the command on
 * entry and the firmware's response on return. buf (len bytes, at most
 * I40E_AQ_BUF_SIZE) is the indirect buffer, or NULL; to_fw says it carries
 * data to firmware (RD), else the response is copied back into it.
 * 0; -ETIMEDOUT (no completion in 250 ms); -EIO (error completion:
 * id->aq_last_rc holds the firmware's code); -EINVAL. */
int i40e_aq_cmd(struct i40e_dev *id, struct i40e_aq_desc *desc, void *buf, uint16_t len, bool to_fw);
/* Process firmware events (ARQ) up to its head: link-status events update
 * id->link. Returns how many events were taken. */
uint32_t i40e_arq_poll(struct i40e_dev *id);
/* "EBUSY" for a firmware return code. */
const char *i40e_aq_rc_name(uint16_t rc);
/* Fill id->link from a get link status response. */
void i40e_link_from_desc(struct i40e_dev *id, const struct i40e_aq_desc *d);

/* ---- i40e_init.c ---- */

/* Poll until (reg & mask) == want, at most timeout_ms of the drivers'
 * clock (drivers/pci/pci_clock.h); 0, or -ETIMEDOUT with id->wait_err
 * saying what (the step's name) was not done, and logged. */
int i40e_wait_reg(struct i40e_dev *id, uint32_t reg, uint32_t mask, uint32_t want, uint32_t timeout_ms,
		  const char *what);
void i40e_hw_stats_update(struct i40e_dev *id);
/* Pack value into ctx at bits [lsb, lsb+width) (little-endian bit order). */
void i40e_ctx_set(uint8_t *ctx, uint32_t lsb, uint32_t width, uint64_t value);

/* ---- i40e.c ---- */

extern const struct device_ops i40e_ops;
/* Whether rx queue q's next descriptor is done (DD). */
bool i40e_rx_pending(struct i40e_dev *id, uint16_t q);

/* ---- i40e_irq.c ---- */

/* An eventfd per rx queue as its MSI-X vector q + 1 (vfio); without them
 * n_irq stays 0 and every cause stays on vector 0 (polled). */
void i40e_irq_open(struct i40e_dev *id);
void i40e_irq_close(struct i40e_dev *id);
/* Each rx queue's cause alone on its vector's list (on) or off. */
void i40e_irq_lists(struct i40e_dev *id, bool on);
/* Enable rx queue q's vector: stale eventfd count read, INTENA set, the
 * write flushed to the NIC. */
void i40e_irq_enable(struct i40e_dev *id, uint16_t q);
int i40e_rx_fd(struct device *dev, uint16_t q);
bool i40e_rx_arm(struct device *dev, uint16_t q);
void i40e_link(struct device *dev, struct dev_link *link);
/* `show hardware` and `show nic`: link, queue tails, the tx heads, enable
 * registers, drop and error counters, read from the registers. */
int i40e_format_hw(struct device *dev, char *buf, size_t len);

#endif
