/* What the ixgbe and i40e suites share: two ports of one driver against
 * their device models, xconnected, frames onto port 0's wire and port 1's
 * wire compared with what was expected, the fixture's buffers and graph, a
 * 1,000-frame pcap replayed through it all.
 *
 * Each suite defines nic_suite (its driver, port names and addresses, and
 * how to put a frame on port 0's wire) and installs nic_model_error and
 * nic_wire_tx as its models' error and tx hooks.
 */
#ifndef SLUICE_TESTS_NIC_HARNESS_H
#define SLUICE_TESTS_NIC_HARNESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"
#include "drivers/pci/tx_ring.h"
#include "tests/models/nic_model.h"
#include "graph/graph.h"

#ifdef TEST_SANITIZED
#define REPLAYS 100
#else
#define REPLAYS 1000
#endif
#define N_FRAMES 1000
#define MAX_FRAME 9100

struct wframe {
	uint32_t len;
	uint8_t bytes[MAX_FRAME];
};

struct nic_suite {
	const char *driver;          /* "ixgbe" */
	const char *name[2];         /* "xe0", "xe1" */
	const char *addr[2];
	/* A frame onto port 0's wire: the rx queue it landed in, or -1. */
	int (*wire_rx)(const uint8_t *frame, uint32_t len);
	/* Descriptors port 0's rx queue 0 can still fill. */
	uint32_t (*wire_rx_room)(void);
	/* Port 1's link partner stops taking frames (true) or takes them
	 * again, what was held going out then. */
	void (*wire_tx_hold)(bool hold);
	/* One poll's worth of time for both ports' models: the descriptors
	 * they were handed and have not sent yet. */
	uint32_t (*tick)(void);
	/* The driver's tx queue q of d, and port i's model. */
	struct pci_txq *(*txq)(struct device *d, uint16_t q);
	struct nic_model *(*model)(int port);
	/* Port 0's model made again (nothing open on it), its steps `never`
	 * (the model's *_MODEL_STEP_* bits) never completing. */
	void (*model_again)(uint32_t never);
};
extern const struct nic_suite nic_suite;

extern struct graph *g;
extern char err[1024];
extern struct wframe *frames; /* N_FRAMES of them */
extern uint32_t n_frames;
extern bool expect_errors;    /* negative tests: the models' reports are wanted */

/* What port 1's wire carried, compared with the expected sequence. */
extern struct nic_wire {
	const struct wframe *want;
	uint32_t n_want;
	uint64_t seen;
	uint64_t mismatches;
	uint64_t first_bad;
} wire;

uint32_t rnd(void);
/* Model hooks: an error fails the test unless expect_errors. */
void nic_model_error(void *ctx, const char *msg);
void nic_wire_tx(void *ctx, uint16_t queue, const uint8_t *bytes, uint32_t len);
void wire_expect(const struct wframe *want, uint32_t n);

/* Fixture halves around the suite's models: buffers, frames and graph up;
 * graph and interfaces down with every buffer back; the rest freed. */
void nic_setup(void);
void nic_teardown_devices(void);
void nic_teardown_buffers(void);

/* An interface of the suite's driver on addr, created or the test fails;
 * then NIC_LINK_WAIT_NS of virtual time pass, so that its link is up. */
#define NIC_LINK_WAIT_NS 1000000000ull
struct device *nic_dev(const char *name, const char *addr, const char *const *words, uint32_t n);
/* Port 0 -> port 1 cross-connected and up. */
void pair(const char *const *w0, uint32_t n0, const char *const *w1, uint32_t n1, struct device **d0,
	  struct device **d1);
/* One poll: the models' time moves on a tick, then the graph polls. */
uint32_t nic_poll(void);
/* Poll until three idle polls with nothing left to send; the packets
 * moved. */
uint64_t run(void);
/* Frames f[0..n) onto port 0's wire, polling until everything moved and
 * went out whenever its ring is full and after every 64; inject() also runs
 * the graph dry. */
void feed(const struct wframe *f, uint32_t n);
void inject(const struct wframe *f, uint32_t n);
/* Ethernet frame i of a random size in [lo, hi], unicast, not IP. */
void make_frame(struct wframe *f, uint32_t i, uint32_t lo, uint32_t hi);

/* The acceptance replay: a 1,000-frame pcap written and read back into
 * frames[], replayed REPLAYS times from port 0 to port 1; asserts the
 * wire byte-identical and in order and the interface counters exact. */
void nic_pcap_replay(struct device **d0, struct device **d1);

/* RSS over 4 rx queues of d (up, nothing else running): 700 flows of every
 * kind and Microsoft's first IPv4 row onto port 0's wire, each must land in
 * the queue the Toeplitz hash and a table of lut entries filled i % 4 say,
 * with that hash in its buffer. */
void nic_check_rss(struct device *d, uint32_t lut);

/* Frames[0..n) one at a time, gap idle polls apart, onto port 0's wire
 * (d0 up): the most polls any took to be received counted from the poll in
 * which port 0's model wrote its descriptor back (nic_model.rx_written),
 * or max_polls + 1 when one was not received within max_polls of going
 * onto the wire. */
uint32_t nic_rx_latency(struct device *d0, uint32_t n, uint32_t gap, uint32_t max_polls);

/* 20 single frames, 5 idle polls apart, each written back within 10 polls
 * of going onto the wire and received within 2 polls of its write-back
 * (the drivers program what the datasheets prescribe for polled queues:
 * RXDCTL.WTHRESH 0 on the 82599, WB_ON_ITR on the X710), then forwarded
 * byte-identical. */
void nic_check_rx_low_rate(void);

/* The same with a driver step made wrong (wrong_step, after start): a
 * lone frame is held by the NIC (not received in 50 polls) until line - 1
 * more complete its write-back batch, then all arrive. */
void nic_check_rx_held(void (*wrong_step)(struct device *d0), uint32_t line);

/* Transmit is asynchronous: 200 frames taken in one poll go out two ticks
 * later, 64 a tick, and their slots return to the driver only after the
 * NIC wrote them back done. */
void nic_check_tx_async(void);

/* A driver step made wrong: RS slots reclaimed without their write-back,
 * then reused while the NIC still owns them; the model refuses the tail
 * write and reports the rewritten descriptor. */
void nic_check_tx_reuse_caught(void);

/* Port 1 (mtu 9000, a tx ring of 64) sends 400 frames, every 7th a chain
 * of 3-5 buffers, in bursts of 24, then 300 of one buffer: all out
 * byte-identical and in order, no buffer held once the ports are down. */
void nic_check_tx_chains_mixed(void);

/* Port 0 (mtu 9000) receives 100 frames at once, frames 45 and 77 jumbo
 * (two to five descriptors each) and the rest of one: whole chunks of 32
 * are judged as they are taken (rx_ring.h, pci_rx_full) and a chain inside
 * one sends the rest of its chunk through the slow path, the replacements
 * left over back to the pool. All 100 out byte-identical and in order,
 * none dropped, no buffer held once the ports are down. */
void nic_check_rx_chunk_chains(void);

/* Port 1's tx burst called directly with 11 frames of one buffer each
 * whose data starts at other offsets than rx leaves (current_data from
 * -128, the whole headroom, to +200, every sign and parity; two turns of
 * the four-a-turn path and three after): each descriptor's address and
 * length from its header, the wire byte-identical and in order. */
void nic_check_tx_offsets(void);

/* Port 1's ring of 64 full (the partner holds): 63 sent, 137 counted as
 * TX-dropped, then traffic flows again. */
void nic_check_tx_ring_full(void);

/* ---- interrupts ---- */

/* What the eventfd of d's rx queue 0 counted (its wakeups), read away. */
uint64_t nic_wakeups(struct device *d);
/* d's rx packets so far. */
uint64_t nic_rx_packets(struct device *d);
/* Frame i (frames[]) onto port 0's wire; it must land in rx queue 0. */
void nic_frame_in(uint32_t i);
/* Port 0 -> port 1 up, frames[0..8) made and expected on port 1's wire;
 * port 0's interface. */
struct device *nic_irq_pair(void);

/* A bring-up step that never completes: creating an interface of name on
 * port 0 fails naming the step (what), after the driver's bound (bound_ms)
 * passed in virtual time. */
struct nic_never {
	uint32_t step;
	const char *what;
	uint64_t bound_ms;
};
void nic_check_never_completes(const char *name, const struct nic_never *cases, size_t n);

/* Delays drawn from nine seeds, the last at every upper end: each time an
 * interface of name on port 0 comes up with its link at mbps. */
void nic_check_any_delays(const char *name, uint32_t mbps);

#endif
