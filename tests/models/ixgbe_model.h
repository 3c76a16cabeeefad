/* An in-process 82599 for tests: BAR0's register file and the NIC's DMA
 * behaviour, as the 82599 datasheet describes them, behind
 * a struct pci_io that the real ixgbe driver programs unchanged.
 *
 * The model decodes register offsets itself (with the aliases the
 * datasheet lists), so a wrong offset in the driver is an unknown register here,
 * not a shared mistake. DMA goes only through memory the driver mapped,
 * translated from IOVA with a non-zero offset so that a driver handing the
 * NIC virtual addresses is caught.
 *
 * Wire: ixgbe_model_rx() puts a frame (without FCS) on the wire towards
 * the NIC; it lands in an rx queue's ring as the datasheet says (filters,
 * RSS queue choice, DD/EOP/length/RSS hash/packet type write-back, only up
 * to RDT; write-backs held until RXDCTL.WTHRESH of them are ready) or is
 * dropped and counted. Transmission is asynchronous (nic_model.h): what a
 * TDT write handed over goes out ticks later (ixgbe_model_tick), a batch
 * per tick, or at once when the hold is released: data descriptors are
 * gathered up to EOP, the frame goes to the tx callback, DD is written back
 * on RS (TXDCTL.WTHRESH 0) or in batches of WTHRESH. A descriptor rewritten
 * before its write-back, or a tail handing over slots the NIC still owns,
 * is reported.
 *
 * Interrupts (datasheet 7.3, MSI-X mode): an rx queue's write-back sets the
 * EICR cause of the vector its IVAR entry names; an enabled cause (EIMS)
 * sends the vector's message (its eventfd written, nic_model.h) unless the
 * EITR interval since the last has not passed (then at its end, on a
 * tick); the message auto-clears (EIAC) and auto-masks (EIAM with
 * GPIE.EIAME); a masked cause stays pending and is sent when EIMS enables
 * it; EICR is cleared by a read or by writing 1s, EICS sets causes.
 *
 * Misprogramming is reported through the error callback (default: counted
 * and kept in last_error): unaligned rings and bad ring lengths, a tail past
 * the ring, DMA outside mapped memory, a register written in the wrong state
 * (queue configuration while the queue runs, anything during reset, tx queue
 * enabled before DMATXCTL.TE, inconsistent CRC strip), unknown or read-only
 * registers, malformed descriptors.
 *
 * Single-threaded: the test and the driver run on one thread.
 */
#ifndef SLUICE_TESTS_IXGBE_MODEL_H
#define SLUICE_TESTS_IXGBE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ixgbe_model;
struct pci_io;
struct nic_model;


/* A model answering for PCI address addr ("0000:03:00.0"), device ID 0x10FB,
 * port MAC mac, cable connected. NULL when out of memory. */
struct ixgbe_model *ixgbe_model_create(const char *addr, const uint8_t mac[6]);
void ixgbe_model_destroy(struct ixgbe_model *m);

/* Initialisation takes time (82599 datasheet 4.6.3, 4.6.4): after a CTRL.RST
 * write the reset bits self-clear, then EEC.ARD, then RDRXCTL.DMAIDONE are
 * set, each after a delay drawn from the seeded generator (nic_model.h);
 * until then only EIMC and CTRL may be written. LINKS says up a delay after
 * AUTOC.AN_RESTART. Steps named here never complete (a broken device). */
enum {
	IXGBE_MODEL_STEP_RESET = 1,
	IXGBE_MODEL_STEP_EEPROM = 2,
	IXGBE_MODEL_STEP_DMA_INIT = 4,
	IXGBE_MODEL_STEP_AUTONEG = 8,
};
void ixgbe_model_never(struct ixgbe_model *m, uint32_t steps);
/* Whether the model can be 8086:device: the 82599 SFP+ IDs. */
bool ixgbe_model_knows(uint16_t device);
/* Answer as another 82599 SFP+ device ID (before the driver opens the model). */
void ixgbe_model_set_device_id(struct ixgbe_model *m, uint16_t device);

/* The common part: error and tx hooks, misprogramming seen, the pci_io
 * provider (nic_model_open) for every live model (tests/models/nic_model.h). */
struct nic_model *ixgbe_model_nic(struct ixgbe_model *m);

/* A frame from the wire (len bytes, no FCS). Returns the rx queue it was
 * written to, or -1 when the NIC dropped it (counted where the NIC counts). */
int ixgbe_model_rx(struct ixgbe_model *m, const uint8_t *frame, uint32_t len);

/* Descriptors rx queue q can still fill (RDT - RDH modulo the ring). */
uint32_t ixgbe_model_rx_room(const struct ixgbe_model *m, uint16_t q);

/* Hold transmission (a stalled link partner): descriptors stay pending
 * until released. */
void ixgbe_model_tx_hold(struct ixgbe_model *m, bool hold);

/* One poll's worth of time passes (the test or bench calls it before each
 * poll): transmission goes on, tx_delay ticks after a tail write, a batch
 * per tick (nic_model_set_tx_pace). Returns the descriptors handed over
 * and not yet sent (0 while held). */
uint32_t ixgbe_model_tick(struct ixgbe_model *m);

/* Cable in or out. */
void ixgbe_model_set_cable(struct ixgbe_model *m, bool connected);

/* A register's value without a read's side effects (clear-on-read...). */
uint32_t ixgbe_model_peek(const struct ixgbe_model *m, uint32_t reg);

/* What the model did, for assertions. */
struct ixgbe_model_stats {
	uint64_t rx_frames;       /* written to a ring */
	uint64_t rx_dropped;      /* no descriptor (QPRDC/MPC) */
	uint64_t rx_filtered;     /* not for us, rx disabled, queue off, size */
	uint64_t tx_frames;
	uint64_t tx_no_fcs;       /* sent without IFCS: a bad frame on the wire */
	uint64_t rx_wraps[16];    /* times RDH went past the end of the ring */
	uint64_t tx_wraps[16];
	uint64_t resets;
	uint64_t rx_writebacks;   /* receive descriptors written back (DD) */
	uint64_t rx_no_link;      /* frames onto a link that was down */
};
void ixgbe_model_stats(const struct ixgbe_model *m, struct ixgbe_model_stats *st);

#endif
