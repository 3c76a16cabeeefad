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
	char last_error[256];
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

/* ---- for the models ---- */

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
