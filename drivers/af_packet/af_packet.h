/* af-packet: a Linux interface through mmap'd packet rings (af_packet.c
 * describes the driver). What the rest of sluice may ask of it: which rx
 * ring each queue has, for `show af-packet` (af_packet_cli.c). */
#ifndef SLUICE_DRIVERS_AF_PACKET_H
#define SLUICE_DRIVERS_AF_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"

/* `rx-ring`, per interface: the kind of rx ring its queues get when it
 * starts. */
enum afp_rx_ring {
	AFP_RX_RING_AUTO = 0, /* block for a queue in polling mode, frame otherwise */
	AFP_RX_RING_FRAME,    /* TPACKET_V2: each frame readable as soon as it is written */
	AFP_RX_RING_BLOCK,    /* TPACKET_V3: blocks handed over when full or after 1 ms */
};

/* "auto", "frame", "block" (the key's words). */
const char *afp_rx_ring_name(enum afp_rx_ring r);

/* One rx queue as `show af-packet` shows it. */
struct afp_rxq_info {
	bool open;             /* the interface is up: the ring exists */
	enum afp_rx_ring ring; /* FRAME or BLOCK: the ring the queue has (when open) */
	uint32_t slots;        /* frames (frame ring) or blocks (block ring) */
	uint32_t slot_size;    /* bytes each */
	uint64_t kernel_drops; /* frames the kernel had no room for, since creation */
};

/* True when dev is an af-packet interface; then its host-if name (into
 * host_if, size bytes) and its rx-ring setting. */
bool afp_dev_info(struct device *dev, char *host_if, size_t size, enum afp_rx_ring *setting);

/* Queue q of af-packet interface dev (control thread: reads the kernel's
 * drop count). */
void afp_rxq_info(struct device *dev, uint16_t q, struct afp_rxq_info *info);

#endif
