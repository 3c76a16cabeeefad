/* What the device models (ixgbe_model, i40e_model) share: the struct
 * pci_io the driver programs, the memory the driver mapped for DMA and the
 * translation of the device's addresses into it, the reports of
 * misprogramming, the wire on the transmit side, and the table of live
 * models behind one pci_io provider.
 *
 * A model embeds struct nic_model as its first member `base`, passes its
 * pci_io_ops (whose dma_map/dma_unmap are nic_model_dma_map/unmap) to
 * nic_model_register, and reaches everything here through &m->base.
 *
 * Single-threaded: the test and the driver run on one thread.
 */
#ifndef SLUICE_TESTS_NIC_MODEL_H
#define SLUICE_TESTS_NIC_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/pci/pci.h"

#define NIC_MODEL_MAX_REGIONS 64
#define NIC_MODEL_MAX_VECTORS 64 /* MSI-X vectors a model delivers */

typedef void(nic_model_error_fn)(void *ctx, const char *msg);
typedef void(nic_model_tx_fn)(void *ctx, uint16_t queue, const uint8_t *frame, uint32_t len);

struct nic_model {
	struct pci_io io;
	bool open;
	struct nic_model_region {
		uintptr_t va;
		size_t len;
	} regions[NIC_MODEL_MAX_REGIONS];
	uint32_t n_regions;
	nic_model_error_fn *on_error;
	void *error_ctx;
	nic_model_tx_fn *on_tx;
	void *tx_ctx;
	uint64_t n_errors;
	uint64_t rx_written; /* receive descriptors written back done */
	char last_error[256];
	uint64_t now;      /* ticks: one per poll of the test or bench */
	uint32_t tx_delay; /* ticks from a tail write to its descriptors going out */
	uint32_t tx_batch; /* descriptors a tx queue sends per tick */
	/* MSI-X (pci_io_ops.irq_set): vector i raised is a write of 1 to
	 * irq_fd[i] (what vfio's handler does on hardware), counted in irqs[i]. */
	int irq_fd[NIC_MODEL_MAX_VECTORS];
	uint32_t n_vectors;
	uint64_t irqs[NIC_MODEL_MAX_VECTORS];
};

/* Asynchronous transmit, one per tx queue: the NIC fetches what a tail
 * write handed over and sends it some ticks later, a batch per tick (82599
 * datasheet 7.2.3.4 descriptor fetch; X710 datasheet, transmit descriptor
 * fetch), and keeps a copy of each descriptor as handed over, so that a
 * driver writing a slot again before the NIC wrote it back done is caught. */
#define NIC_MODEL_TX_POSTS 32
struct nic_model_txq {
	uint8_t *shadow;  /* qlen descriptors of desc_size bytes */
	uint32_t qlen, desc_size;
	uint32_t tail;    /* the last tail written */
	uint32_t ready;   /* the NIC may send up to here */
	uint32_t n_posts;
	struct {
		uint32_t tail;
		uint64_t tick;
	} posts[NIC_MODEL_TX_POSTS];
};

/* Answer for PCI address addr as 8086:device, the device's addresses being
 * VA + iova_offset. 0, or -ENOSPC when too many models live. */
int nic_model_register(struct nic_model *b, const struct pci_io_ops *ops, const char *addr, uint16_t device,
		       int64_t iova_offset);
void nic_model_unregister(struct nic_model *b);

/* The pci_io provider for every live model (pci_io_provider_set). An
 * address no model answers for is "not found". */
struct pci_io *nic_model_open(void *ctx, const char *addr, char *err, size_t errlen);

/* Hooks: misprogramming reports (default: counted and kept), frames the
 * NIC put on its wire. */
void nic_model_on_error(struct nic_model *b, nic_model_error_fn *fn, void *ctx);
void nic_model_on_tx(struct nic_model *b, nic_model_tx_fn *fn, void *ctx);
/* Misprogramming seen so far, and the last message. */
uint64_t nic_model_errors(const struct nic_model *b);
const char *nic_model_last_error(const struct nic_model *b);

/* Ticks from a tail write to the first descriptor going out (default 2),
 * descriptors per queue per tick (default 64). */
void nic_model_set_tx_pace(struct nic_model *b, uint32_t delay, uint32_t batch);

/* ---- time ----
 *
 * The models live in virtual time, in nanoseconds, one clock for all of
 * them. While a model is registered that clock is the drivers' clock too
 * (drivers/pci/pci_clock.h): a driver's sleep advances it at once, so a
 * wait of seconds costs nothing and a model that never completes shows the
 * driver's bound passing. A tick (a poll of the test or bench) advances it
 * by nic_model_tick_ns (default NIC_MODEL_TICK_NS).
 *
 * Delays the datasheets give as ranges (resets, EEPROM and DMA
 * initialisation, NVM load, auto-negotiation, firmware responses) are drawn
 * from a seedable generator, so a failure is replayed by its seed. */
#define NIC_MODEL_TICK_NS 1000u
uint64_t nic_model_now_ns(void);
/* Virtual time moves on by ns (a test waiting for a link, say). */
void nic_model_advance_ns(uint64_t ns);
void nic_model_set_tick_ns(uint32_t ns);
/* Seed of the delays (default 1); the seed in use. */
void nic_model_seed(uint64_t seed);
uint64_t nic_model_seed_used(void);
/* A delay in [lo_ns, hi_ns] from the seeded generator. */
uint64_t nic_model_delay_ns(uint64_t lo_ns, uint64_t hi_ns);
/* Delays at their upper ends (true) instead of drawn: the slowest device
 * the bounds allow. */
void nic_model_delays_slowest(bool on);

/* ---- for the models ---- */

/* A tx queue enabled with qlen descriptors of desc_size bytes, head and
 * tail at head; 0 or -ENOMEM. Stop frees it (idempotent). */
int nic_model_txq_start(struct nic_model_txq *t, uint32_t qlen, uint32_t desc_size, uint32_t head);
void nic_model_txq_stop(struct nic_model_txq *t);
/* A tail write of queue q (ring: the descriptors, head: the NIC's next):
 * false (reported) when it hands over descriptors the NIC still owns. */
bool nic_model_tx_post(struct nic_model *b, struct nic_model_txq *t, uint16_t q, const volatile void *ring,
		       uint32_t head, uint32_t tail);
/* Descriptors from head the NIC may send this tick (at most tx_batch);
 * all of them when unpaced (a partner releasing what it held). */
uint32_t nic_model_tx_ready(struct nic_model *b, struct nic_model_txq *t, uint32_t head, bool unpaced);
/* Descriptor slot as the tail write handed it over; false (reported)
 * when the driver wrote it again since. */
bool nic_model_tx_unchanged(struct nic_model *b, const struct nic_model_txq *t, uint16_t q,
			    const volatile void *ring, uint32_t slot);

/* pci_io_ops.irq_set of every model: keep the eventfds (n <= NIC_MODEL_MAX_VECTORS). */
int nic_model_irq_set(struct pci_io *io, uint32_t n, const int *fds);
/* The NIC sends vector v's MSI-X message: counted, and its eventfd written
 * when the driver gave one (a vector without one is reported). */
void nic_model_irq_raise(struct nic_model *b, uint32_t v);

/* A tick of model b: its tick count and virtual time move on. */
void nic_model_tick_time(struct nic_model *b);
void nic_model_fail(struct nic_model *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int nic_model_dma_map(struct pci_io *io, void *va, size_t len);
void nic_model_dma_unmap(struct pci_io *io, void *va, size_t len);
/* The memory at device address iova, len bytes, or NULL (reported: what). */
void *nic_model_dma(struct nic_model *b, uint64_t iova, size_t len, const char *what);
/* A frame onto the transmit wire. */
void nic_model_emit(struct nic_model *b, uint16_t queue, const uint8_t *frame, uint32_t len);
/* The Ethernet FCS of p[0..n). */
uint32_t nic_model_crc32(const uint8_t *p, uint32_t n);

#endif
