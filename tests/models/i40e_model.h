/* An in-process XL710 physical function for tests: BAR0's registers, the
 * firmware behind the admin queue, the HMC-held LAN queue contexts and the
 * NIC's DMA, as the X710/XL710 datasheet describes them,
 * behind a struct pci_io that the real i40e driver programs unchanged.
 *
 * Register offsets, context bit positions and descriptor layouts are
 * transcribed here from the datasheet independently of the driver's
 * header. DMA goes only through memory the driver mapped, at IOVA = VA + a
 * non-zero offset, so a driver handing the NIC virtual addresses is caught.
 *
 * Admin queue: an ATQT write runs every command from ATQH to ATQT (get
 * version, queue shutdown, function capabilities, MAC address read, clear
 * PXE, switch config, update/get VSI parameters, promiscuous modes, MAC
 * config, link status; anything else completes with ENOSYS), writes the
 * response and DD|CMP (|ERR) back and advances ATQH. An error completion
 * can be injected for an opcode, and the firmware can be stalled. Link
 * changes arrive on the ARQ as 0x0607 events once the driver enabled them.
 *
 * Queues: a QRX_ENA/QTX_ENA request makes the model read the queue's
 * context from the HMC segment the driver registered (SD 0, direct) and
 * check it; QENA_STAT follows QENA_REQ only after a number of reads of the
 * register (default 3), so a driver that does not wait is caught. rx
 * (i40e_model_rx) writes 32-byte descriptors back (DD, length; on a
 * frame's last EOF, RSS hash with FLTSTAT 3, PTYPE) a cache line of four
 * at a time, or when vector 0's ITR expires for a queue bound to it with
 * WB_ON_ITR (docs/nic.md 3.7a), only up to QRX_TAIL, a
 * frame longer than the context's dbuff over several; frames to the VSI's
 * broadcast address only with its broadcast flag (set VSI promiscuous
 * modes). tx is asynchronous (nic_model.h): what a QTX_TAIL write handed
 * over goes out ticks later (i40e_model_tick), a batch per tick; data
 * descriptors are gathered to EOP and RS descriptors marked done (DTYPE
 * 0xF) as they are sent.
 *
 * Interrupts (datasheet 7.5), vectors 1..n: a completed rx descriptor sets
 * its queue's cause event (QINT_RQCTL) for the vector MSIX_INDX names; the
 * vector fires (eventfd, nic_model.h) when PFINT_DYN_CTLN.INTENA is set,
 * after its ITR since the last message, writing its list's held
 * descriptors back first; firing clears the events and INTENA (auto-mask);
 * an event while INTENA is 0 fires when it is set; SWINT_TRIG and
 * INTENA_MSK as the datasheet says. WB_ON_ITR and the write-back timing
 * follow the vector a queue's cause is on.
 *
 * Misprogramming is reported through the error callback (default: counted
 * and kept in last_error): unaligned rings, a tail past the ring, DMA
 * outside mapped memory, a register written in the wrong state (during the
 * PF reset, the ATQ while disabled, a queue's enable register while a
 * request is in flight, a tx tail of a disabled queue, a tx queue enabled
 * before QTX_CTL or the pre-queue-disable was cleared), a queue context
 * field out of range, unknown or read-only registers.
 *
 * Single-threaded: the test and the driver run on one thread.
 */
#ifndef SLUICE_TESTS_I40E_MODEL_H
#define SLUICE_TESTS_I40E_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct i40e_model;
struct pci_io;
struct nic_model;


/* The model's firmware identity and resources. */
#define I40E_MODEL_FW_MAJOR 9
#define I40E_MODEL_FW_MINOR 20
#define I40E_MODEL_API_MAJOR 1
#define I40E_MODEL_API_MINOR 15
#define I40E_MODEL_N_QUEUES 64     /* queue pairs of the function */
#define I40E_MODEL_BASE_QUEUE 128  /* absolute index of its queue 0 */
#define I40E_MODEL_VSI_SEID 390
#define I40E_MODEL_QS_HANDLE 7
#define I40E_MODEL_LUT_SIZE 512

/* A model answering for PCI address addr, device ID 0x1583 (XL710 QSFP+),
 * port MAC mac, 40G link partner connected. NULL when out of memory. */
struct i40e_model *i40e_model_create(const char *addr, const uint8_t mac[6]);
void i40e_model_destroy(struct i40e_model *m);

/* Answer as another device ID of the family (an X722, 0x37D0): set before
 * the driver opens the model. */
void i40e_model_set_device_id(struct i40e_model *m, uint16_t device);

/* Whether the model can be 8086:device, and the speed its port links at. */
bool i40e_model_knows(uint16_t device, uint32_t *speed_mbps);

/* Resets and firmware take time (nic_model.h, virtual time): the model
 * starts in a global reset (GLGEN_RSTAT.DEVSTATE) that ends, then the NVM
 * loads (GLNVM_ULD), PFSWR self-clears a delay after it is written, each
 * admin command is answered a delay after it became the next, the link
 * comes up a delay after the PHY is (re)configured or the cable goes in.
 * Steps named here never complete (a broken device). */
enum {
	I40E_MODEL_STEP_GLOBAL_RESET = 1,
	I40E_MODEL_STEP_NVM = 2,
	I40E_MODEL_STEP_PF_RESET = 4,
	I40E_MODEL_STEP_FIRMWARE = 8,
	I40E_MODEL_STEP_LINK = 16,
};
void i40e_model_never(struct i40e_model *m, uint32_t steps);

/* The common part: error and tx hooks, misprogramming seen, the pci_io
 * provider (nic_model_open) for every live model (tests/models/nic_model.h). */
struct nic_model *i40e_model_nic(struct i40e_model *m);

/* The next n commands with this opcode complete with ERR and retval rc. */
void i40e_model_aq_inject_error(struct i40e_model *m, uint16_t opcode, uint16_t rc, uint32_t n);
/* Firmware stops answering (ATQH stays) until unstalled. */
void i40e_model_aq_stall(struct i40e_model *m, bool stall);
/* Reads of a QxX_ENA register before QENA_STAT follows QENA_REQ. */
void i40e_model_set_ena_delay(struct i40e_model *m, uint32_t reads);

/* A frame from the wire (len bytes, no FCS): the rx queue it was written
 * to, or -1 when the NIC dropped it (counted where the NIC counts). */
int i40e_model_rx(struct i40e_model *m, const uint8_t *frame, uint32_t len);
/* Descriptors rx queue q can still fill. */
uint32_t i40e_model_rx_room(const struct i40e_model *m, uint16_t q);
/* Hold transmission: descriptors stay pending until released. */
void i40e_model_tx_hold(struct i40e_model *m, bool hold);
/* One poll's worth of time passes (the test or bench calls it before each
 * poll): transmission goes on, tx_delay ticks after a tail write, a batch
 * per tick (nic_model_set_tx_pace). Returns the descriptors handed over
 * and not yet sent (0 while held). */
uint32_t i40e_model_tick(struct i40e_model *m);
/* Cable in or out (a link event on the ARQ when events are enabled). */
void i40e_model_set_cable(struct i40e_model *m, bool connected);
/* Port statistics counter lo (a 48-bit pair's low register, or a 32-bit
 * counter) moved by delta, wrapping at its width as the NIC's does: the
 * traffic of a long uptime in one step. */
void i40e_model_count(struct i40e_model *m, uint32_t lo, uint64_t delta);
/* A register's value without a read's side effects. */
uint32_t i40e_model_peek(const struct i40e_model *m, uint32_t reg);

/* A queue as the model loaded it from its context. */
struct i40e_model_queue {
	bool enabled;
	uint64_t base;     /* ring IOVA */
	uint32_t qlen, head, tail;
	uint32_t dbuff;    /* rx: bytes */
	uint32_t rxmax;    /* rx */
	uint32_t rdylist;  /* tx */
};
void i40e_model_queue(const struct i40e_model *m, bool rx, uint16_t q, struct i40e_model_queue *out);

struct i40e_model_stats {
	uint64_t rx_frames, rx_dropped, rx_filtered;
	uint64_t tx_frames, tx_no_crc;
	uint64_t rx_wraps[16], tx_wraps[16];
	uint64_t resets;
	uint64_t aq_commands, aq_error_completions, arq_events;
	uint64_t ena_waits;   /* reads of an enable register while a request was pending */
	uint16_t last_opcode;
	uint64_t phy_abilities_asked, phy_config_set;
	uint8_t phy_speeds;     /* link speed bits of the last set PHY config */
	uint16_t phy_int_mask;  /* set PHY interrupt mask's events masked */
	bool promisc_unicast, promisc_multicast, promisc_broadcast, lse;
	uint32_t max_frame, vsi_queues;
};
void i40e_model_stats(const struct i40e_model *m, struct i40e_model_stats *st);

#endif
