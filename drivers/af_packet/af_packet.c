/* The af-packet driver: a Linux interface through mmap'd packet rings.
 *
 *   eth0 { driver af-packet  host-if veth0  rx-queues 2  rx-ring frame }
 *
 * rx: one AF_PACKET socket per rx queue, bound to host-if for every
 * protocol, in promiscuous mode (PACKET_ADD_MEMBERSHIP, undone by the
 * kernel when the socket closes). With more than one rx queue the sockets
 * form a PACKET_FANOUT_HASH group, so a flow stays on one queue. The ring
 * (rx-blocks blocks of rx-block-size bytes) is chosen per queue when the
 * interface starts, by the interface's rx-ring key: block, frame, or auto
 * (the default), which picks block for a queue in rx mode polling at that
 * moment and frame for any other (drivers/device_rx_mode.c):
 *   - block: TPACKET_V3. A block is handed to us when full or after 1 ms
 *     (tp_retire_blk_tov, in ms: 1 is the smallest), so a lone frame on a
 *     quiet link waits up to 1 ms: the throughput ring, for a spinning
 *     thread under load;
 *   - frame: TPACKET_V2, frames of the smallest power of two
 *     that holds an MTU-sized frame (2048 at MTU 1500), each the user's as
 *     soon as it is written, and the socket readable from then on: the
 *     thread blocked in epoll_wait wakes per frame, not per block. A frame
 *     longer than a ring frame (a GSO super-frame) leaves its head in the
 *     ring marked TP_STATUS_COPY and its whole self on the socket
 *     (PACKET_COPY_THRESH), which one recv per such frame takes, in ring
 *     order; 4 MB of socket buffer leave room for those.
 *     Polling on it (rx-ring frame) is the lowest latency at any rate.
 * Changing a queue's mode at run time keeps its ring until the next start
 * (`show af-packet` and `show hardware` say which ring each queue has).
 * Frames are copied out of the ring into pool buffers allocated in bulk
 * (one buffer_alloc per block, or per 32 frames of a V2 ring), and each block or frame goes back
 * to the kernel once taken. Frames the kernel shows us going out (our own
 * tx included) are skipped. The socket's fd is what wakes the thread the
 * queue is placed on (ops->rx_fd).
 * On the way out of the ring:
 *   - TP_STATUS_CSUMNOTREADY (a local stack left the TCP/UDP checksum to
 *     "hardware"): the L4 checksum is computed over the pseudo-header and
 *     segment (offload.c), so the frame is right on any wire;
 *   - GSO super-frames (a TSO-capable sender behind the veth hands TCP in
 *     up to 64 KB) longer than the MTU: segmented here into MTU-sized TCP
 *     segments (offload.c). We segment rather than ask the kernel not to
 *     build them because the sender's offloads live on the far end of the
 *     veth, in another namespace, out of this driver's reach; the host keeps
 *     its offloads. Anything else longer than the MTU, or cut short by the
 *     ring, is an RX-error;
 *   - a VLAN tag the kernel moved into the frame header (TP_STATUS_VLAN_VALID)
 *     is put back into the frame, so L2 forwarding is transparent;
 *   - the kernel's rx hash is not taken as the flow hash: on a veth or tap
 *     it is the sending socket's random tx hash, which the kernel changes
 *     on a retransmission timeout (and which control-socket replies lack),
 *     so one TCP stream would carry several hashes over its life and the
 *     distributor would treat its parts as different flows and let them
 *     overtake each other. Consumers compute the Toeplitz hash of the
 *     5-tuple instead (dist_buffer_tag).
 * Kernel drops (PACKET_STATISTICS, read-and-reset by the kernel, so summed
 * here) are added to RX-dropped; so are frames for which no buffer was left.
 *
 * tx: one socket per tx queue with a TPACKET_V2 ring of tx-frames frames of
 * tx-frame-size bytes (V2 rather than V3: fixed frames, and V3 adds nothing
 * to tx). A burst copies each packet into the next free frame, marks it for
 * sending, and kicks the kernel with one sendto(MSG_DONTWAIT) per burst;
 * PACKET_LOSS makes the kernel skip a frame it cannot send rather than stop
 * the ring, and PACKET_QDISC_BYPASS skips the qdisc layer; the send buffer
 * holds the whole ring, so a kick never stops part way for want of it.
 * Threads sharing a tx queue take its lock once per burst.
 *
 * The host-if deleted under a running interface: the kernel unbinds the
 * sockets, rx sees nothing more, and the first tx kick that fails with ENXIO
 * marks the queue gone (later bursts take nothing, no system call: the
 * caller counts TX-dropped); the link reads down from then on, since the
 * name no longer leads to the index the sockets were bound to. `set
 * interface state NAME up` once it exists again restarts the driver, which
 * looks the index up by name anew.
 * The MTU is read from the kernel at creation and on every start. Sockets
 * exist only while the interface is up; stop closes them (after folding
 * their kernel drops into the totals).
 *
 * This file is the datapath (rx and tx bursts); the key table, sockets and
 * rings, start and stop, counters and registration are in af_packet_ring.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "drivers/af_packet/af_packet_private.h"
#include "drivers/af_packet/offload.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* ---- rx ---- */

/* One frame as either ring version shows it. */
struct afp_frame {
	const uint8_t *data; /* the MAC header */
	uint32_t len;        /* on the wire (a GSO super-frame whole) */
	uint32_t snaplen;    /* bytes at data */
	uint32_t l3;         /* offset of the network header */
	uint32_t status;     /* TP_STATUS_* */
	uint16_t vlan_tci, vlan_tpid;
	uint8_t pkttype;     /* PACKET_OUTGOING: our own, skipped */
};

static void frame_v3(struct afp_frame *f, const struct tpacket3_hdr *h)
{
	const struct sockaddr_ll *sll = (const void *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
	*f = (struct afp_frame){ .data = (const uint8_t *)h + h->tp_mac, .len = h->tp_len, .snaplen = h->tp_snaplen,
				 .l3 = (uint32_t)(h->tp_net - h->tp_mac), .status = h->tp_status,
				 .vlan_tci = (uint16_t)h->hv1.tp_vlan_tci, .vlan_tpid = (uint16_t)h->hv1.tp_vlan_tpid,
				 .pkttype = sll->sll_pkttype };
}

static void frame_v2(struct afp_frame *f, const struct tpacket2_hdr *h, uint32_t status)
{
	const struct sockaddr_ll *sll = (const void *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
	*f = (struct afp_frame){ .data = (const uint8_t *)h + h->tp_mac, .len = h->tp_len, .snaplen = h->tp_snaplen,
				 .l3 = (uint32_t)(h->tp_net - h->tp_mac), .status = status,
				 .vlan_tci = h->tp_vlan_tci, .vlan_tpid = h->tp_vlan_tpid, .pkttype = sll->sll_pkttype };
}

/* Put the tag the kernel took out back behind the MAC addresses, in the
 * buffer's headroom. */
static void vlan_insert(struct buffer *b, const struct afp_frame *f)
{
	uint16_t tpid = (f->status & TP_STATUS_VLAN_TPID_VALID) ? f->vlan_tpid : ETH_P_8021Q;
	buffer_advance(b, -AFP_VLAN_LEN);
	uint8_t *p = buffer_data(b);
	memmove(p, p + AFP_VLAN_LEN, 12);
	p[12] = (uint8_t)(tpid >> 8);
	p[13] = (uint8_t)tpid;
	p[14] = (uint8_t)(f->vlan_tci >> 8);
	p[15] = (uint8_t)f->vlan_tci;
}

enum take { TAKEN, NO_ROOM };

/* One frame of the ring into bi[*got..]: buffers bi[*got..*have) are
 * allocated and empty; more are allocated here as needed, want_more at a
 * time. Returns NO_ROOM when its segments do not fit in n (the frame stays
 * in the ring for the next burst), else TAKEN (used, dropped or counted as
 * an error). */
static enum take take_frame(struct afp_dev *ad, struct dev_counters *c, const struct afp_frame *f, uint32_t *bi,
			    uint32_t *got, uint32_t *have, uint32_t n, uint32_t want_more)
{
	if (f->pkttype == PACKET_OUTGOING)
		return TAKEN;
	const uint8_t *data = f->data;
	uint32_t len = f->len;
	uint32_t l3 = f->l3;
	uint32_t vlan = (f->status & TP_STATUS_VLAN_VALID) ? AFP_VLAN_LEN : 0;
	uint32_t data_size = buffer_main.data_size;
	if (unlikely(f->snaplen < len)) {
		stat_add(&c->rx_errors, 1); /* cut short by the ring: rx-block-size */
		return TAKEN;
	}
	struct afp_tso tso;
	uint32_t need = 1;
	bool gso = len > l3 + ad->dev.mtu;
	if (unlikely(gso)) {
		if (afp_tso_plan(data, len, l3, ad->dev.mtu, &tso) < 0 || tso.hdr_len + tso.mss + vlan > data_size) {
			stat_add(&c->rx_errors, 1);
			return TAKEN;
		}
		need = tso.n_segs;
	} else if (unlikely(len + vlan > data_size)) {
		stat_add(&c->rx_errors, 1);
		return TAKEN;
	}
	if (unlikely(need > n - *got)) {
		if (*got)
			return NO_ROOM;
		stat_add(&c->rx_errors, 1); /* more segments than a whole burst */
		return TAKEN;
	}
	if (*have - *got < need) {
		uint32_t want = MIN(MAX(need, want_more), n - *got) - (*have - *got);
		*have += buffer_alloc(bi + *have, want, -1);
		if (unlikely(*have - *got < need)) {
			stat_add(&c->rx_dropped, 1);
			return TAKEN;
		}
	}
	for (uint32_t i = 0; i < need; i++) {
		struct buffer *b = buffer_get(bi[*got + i]);
		uint8_t *dst = buffer_data(b);
		if (unlikely(gso)) {
			b->current_length = (uint16_t)afp_tso_segment(data, &tso, i, dst);
		} else {
			memcpy(dst, data, len);
			b->current_length = (uint16_t)len;
			if (f->status & TP_STATUS_CSUMNOTREADY)
				afp_l4_csum_complete(dst, len, l3);
		}
		if (unlikely(vlan))
			vlan_insert(b, f);
	}
	*got += need;
	return TAKEN;
}

static uint32_t rx_burst_v3(struct afp_dev *ad, struct afp_rxq *rq, struct dev_counters *c, uint32_t *bi,
			    uint32_t n, uint32_t *have)
{
	uint32_t got = 0;
	while (got < n) {
		struct tpacket_block_desc *bd = (void *)(rq->ring + (size_t)rq->block * ad->conf.rx_block_size);
		if (!rq->pkts_left) {
			if (!(__atomic_load_n(&bd->hdr.bh1.block_status, __ATOMIC_ACQUIRE) & TP_STATUS_USER))
				break;
			rq->pkts_left = bd->hdr.bh1.num_pkts;
			rq->pkt = (uint8_t *)bd + bd->hdr.bh1.offset_to_first_pkt;
		}
		if (rq->pkts_left) {
			const struct tpacket3_hdr *h = (const void *)rq->pkt;
			struct afp_frame f;
			frame_v3(&f, h);
			if (take_frame(ad, c, &f, bi, &got, have, n, rq->pkts_left) == NO_ROOM)
				break;
			rq->pkt += h->tp_next_offset;
			if (--rq->pkts_left)
				continue;
		}
		/* Every frame taken: the block goes back to the kernel. */
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		rq->block = rq->block + 1 == ad->conf.rx_blocks ? 0 : rq->block + 1;
	}
	return got;
}

/* A frame longer than a V2 ring frame: the ring holds its head, marked
 * TP_STATUS_COPY, and the kernel queued the whole of it on the socket
 * (PACKET_COPY_THRESH), in ring order. One recv per such frame (a GSO
 * super-frame: tens of segments), never per ordinary frame. False when the
 * queue had nothing after all (then the ring's head is all there is). */
static bool copy_whole(struct afp_rxq *rq, struct afp_frame *f)
{
	ssize_t r = recv(rq->fd, rq->copy_buf, AFP_RX_COPY_MAX, MSG_DONTWAIT | MSG_TRUNC);
	if (r < 0)
		return false;
	f->data = rq->copy_buf;
	f->len = (uint32_t)r;
	f->snaplen = (uint32_t)MIN((size_t)r, (size_t)AFP_RX_COPY_MAX);
	return true;
}

/* TPACKET_V2: each frame is the user's as soon as its status says so, and
 * the socket is readable from then on (per-frame readiness). */
static uint32_t rx_burst_v2(struct afp_dev *ad, struct afp_rxq *rq, struct dev_counters *c, uint32_t *bi,
			    uint32_t n, uint32_t *have)
{
	(void)ad;
	uint32_t got = 0;
	while (got < n) {
		struct tpacket2_hdr *h = (void *)(rq->ring + (size_t)rq->frame * rq->frame_size);
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);
		if (!(st & TP_STATUS_USER))
			break;
		struct afp_frame f;
		frame_v2(&f, h, st);
		if (unlikely(st & TP_STATUS_COPY)) {
			if (got)
				break; /* first in a burst: its segments always fit */
			if (!copy_whole(rq, &f))
				stat_add(&c->rx_errors, 1);
			else if (take_frame(ad, c, &f, bi, &got, have, n, 1) == NO_ROOM)
				stat_add(&c->rx_errors, 1); /* cannot happen with got 0 */
		} else if (take_frame(ad, c, &f, bi, &got, have, n, MIN(n - got, AFP_RX_V2_ALLOC)) == NO_ROOM) {
			break;
		}
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		rq->frame = rq->frame + 1 == rq->n_frames ? 0 : rq->frame + 1;
	}
	return got;
}

uint32_t afp_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct afp_rxq *rq = &ad->rxq[queue];
	struct dev_counters *c = &dev->rxq[queue].c;
	uint32_t have = 0;
	uint32_t got = rq->v2 ? rx_burst_v2(ad, rq, c, bi, n, &have) : rx_burst_v3(ad, rq, c, bi, n, &have);
	if (have > got)
		buffer_free(bi + got, have - got);
	return got;
}

/* ---- tx ---- */

static inline struct tpacket2_hdr *tx_frame(const struct afp_dev *ad, const struct afp_txq *tq, uint32_t i)
{
	return (void *)(tq->ring + (size_t)(i / ad->tx_fpb) * ad->tx_block_size +
			(size_t)(i % ad->tx_fpb) * ad->conf.tx_frame_size);
}

/* The packet (chain) into dst; its length, or 0 when it is longer than max. */
static uint32_t copy_out(struct buffer *b, uint8_t *dst, uint32_t max)
{
	uint32_t off = 0;
	for (;;) {
		if (b->current_length > max - off)
			return 0;
		memcpy(dst + off, buffer_data(b), b->current_length);
		off += b->current_length;
		if (!(b->flags & BUFFER_F_NEXT_PRESENT))
			return off;
		b = buffer_get(b->next_buffer);
	}
}

/* The errors a tx kick gets once the interface the socket was bound to is
 * unregistered (the kernel drops its cached device: ENXIO). */
static bool host_if_gone(int err)
{
	return err == ENXIO || err == ENODEV;
}

/* Takes a prefix of bi: it stops at a full ring, or at a packet longer than
 * a tx frame can hold (which cannot happen between interfaces of the same
 * MTU: creation checks the frame holds MTU + 18). The caller drops and
 * counts the rest. */
uint32_t afp_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct afp_txq *tq = &ad->txq[queue];
	while (__atomic_test_and_set(&tq->lock, __ATOMIC_ACQUIRE))
		cpu_relax();
	if (unlikely(tq->gone)) {
		__atomic_clear(&tq->lock, __ATOMIC_RELEASE);
		return 0;
	}
	uint32_t i;
	bool full = false;
	for (i = 0; i < n; i++) {
		struct tpacket2_hdr *h = tx_frame(ad, tq, tq->head);
		if (__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) != TP_STATUS_AVAILABLE) {
			full = true;
			break;
		}
		uint32_t len = copy_out(buffer_get(bi[i]), (uint8_t *)h + ad->tx_data_off, ad->tx_data_max);
		if (unlikely(!len))
			break;
		h->tp_len = len;
		__atomic_store_n(&h->tp_status, TP_STATUS_SEND_REQUEST, __ATOMIC_RELEASE);
		tq->head = tq->head + 1 == ad->tx_n_frames ? 0 : tq->head + 1;
	}
	/* One kick per burst; also when the ring is full, so frames left
	 * waiting by an earlier failed kick (ENOBUFS) get another chance. */
	if ((i || full) && sendto(tq->fd, NULL, 0, MSG_DONTWAIT, NULL, 0) < 0 && host_if_gone(errno)) {
		/* The host-if was deleted: what was put in the ring will never
		 * leave, so none of it counts as sent. From now on bursts return
		 * at once (no system call); the caller counts TX-dropped. */
		tq->gone = true;
		i = 0;
	}
	__atomic_clear(&tq->lock, __ATOMIC_RELEASE);
	buffer_free(bi, i);
	return i;
}
