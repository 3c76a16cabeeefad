/* The clock the NIC drivers' bounded waits read: resets, EEPROM and DMA
 * initialisation, NVM loads, admin-queue completions, queue enables.
 *
 * On hardware it is CLOCK_MONOTONIC and nanosleep. A test installs its own
 * (tests/models/nic_model.c: virtual time that a sleep advances and the
 * device models' delays are measured in), so that the seconds a datasheet
 * allows for a reset cost a test suite nothing, and a model that never
 * completes shows the bound being reached without waiting for it.
 *
 * Control path only (creation, start, stop): never called per packet.
 */
#ifndef SLUICE_DRIVERS_PCI_CLOCK_H
#define SLUICE_DRIVERS_PCI_CLOCK_H

#include <stdint.h>

struct pci_io;

struct pci_clock_ops {
	uint64_t (*now_ns)(void *ctx);
	void (*sleep_us)(void *ctx, uint32_t us);
};

/* Install a clock (ops NULL: the real one again). */
void pci_clock_set(const struct pci_clock_ops *ops, void *ctx);
uint64_t pci_clock_now_ns(void);
void pci_clock_sleep_us(uint32_t us);

/* Read reg every step_us until (value & mask) == want, for at most
 * timeout_us of the clock (one read after the bound passes, so a register
 * that reached its value during the last sleep is not missed).
 * 0 or -ETIMEDOUT. */
int pci_wait_reg(struct pci_io *io, uint32_t reg, uint32_t mask, uint32_t want, uint32_t timeout_us,
		 uint32_t step_us);

#endif
