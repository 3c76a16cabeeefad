/* af-packet internals shared by the datapath (af_packet.c) and the
 * sockets, rings and registration (af_packet_ring.c). */
#ifndef SLUICE_DRIVERS_AF_PACKET_PRIVATE_H
#define SLUICE_DRIVERS_AF_PACKET_PRIVATE_H

#include <net/if.h>
#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/af_packet/af_packet.h"
#include "drivers/device.h"

#define AFP_RX_FRAME_HINT 2048 /* V3 ignores frame boundaries; the kernel wants a count */
#define AFP_RX_RETIRE_MS 1
#define AFP_L2_MAX 18          /* Ethernet header and one VLAN tag */
#define AFP_VLAN_LEN 4
/* TPACKET_V2 rx (rx-ring frame, or auto and the queue not in polling mode): */
#define AFP_RX_V2_FRAME_MIN 2048 /* ring frame size: a power of two holding MTU + L2 + header */
#define AFP_RX_COPY_MAX (65536 + 256) /* the largest frame recv'd whole (TP_STATUS_COPY) */
#define AFP_RX_V2_ALLOC 32 /* buffers allocated at a time while frames keep coming */
#define AFP_RX_RCVBUF (4u << 20) /* room on the socket for whole copies of long frames */

struct afp_conf {
	char host_if[IFNAMSIZ];
	uint32_t rx_queues;
	uint32_t tx_queues;
	uint32_t rx_block_size;
	uint32_t rx_blocks;
	uint32_t tx_frame_size;
	uint32_t tx_frames;
	uint32_t rx_ring; /* enum afp_rx_ring */
};
_Static_assert(sizeof(struct afp_conf) <= CONF_DRIVER_CONF_SIZE, "af-packet conf fits");

struct afp_rxq {
	int fd;
	bool v2;            /* TPACKET_V2 frames, else TPACKET_V3 blocks (chosen at start: afp_rxq_frames) */
	uint8_t *ring;
	uint32_t block;     /* V3: the block we read or wait for */
	uint32_t pkts_left; /* frames of that block not yet taken; 0: not opened */
	uint8_t *pkt;       /* next frame in it */
	uint32_t frame;      /* V2: the frame we read or wait for */
	uint32_t frame_size; /* V2 */
	uint32_t n_frames;   /* V2 */
	uint8_t *copy_buf;   /* V2: AFP_RX_COPY_MAX bytes for TP_STATUS_COPY frames */
	uint64_t kernel_drops; /* PACKET_STATISTICS so far (control thread) */
};

struct afp_txq {
	alignas(64) int fd;
	bool lock;
	uint8_t *ring;
	uint32_t head; /* next frame to fill */
	bool gone;     /* the kernel said the host-if is gone: take nothing until restart */
};

struct afp_dev {
	struct device dev;
	struct afp_conf conf;
	int ifindex;
	size_t rx_ring_size;
	/* tx ring geometry: frame i sits in block i / fpb at slot i % fpb */
	uint32_t tx_block_size, tx_fpb, tx_n_frames;
	size_t tx_ring_size;
	uint32_t tx_data_off, tx_data_max;
	struct afp_rxq rxq[DEV_MAX_QUEUES];
	struct afp_txq txq[DEV_MAX_QUEUES];
};

/* ---- af_packet.c: the datapath ---- */

uint32_t afp_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n);
uint32_t afp_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n);

#endif
