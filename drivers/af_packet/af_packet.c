/* The af-packet driver: a Linux interface through mmap'd packet rings.
 *
 *   eth0 { driver af-packet  host-if veth0  rx-queues 2 }
 *
 * rx: one AF_PACKET socket per rx queue, each with a TPACKET_V3 ring of
 * rx-blocks blocks of rx-block-size bytes, bound to host-if for every
 * protocol, in promiscuous mode (PACKET_ADD_MEMBERSHIP, undone by the
 * kernel when the socket closes). With more than one rx queue the sockets
 * form a PACKET_FANOUT_HASH group, so a flow stays on one queue. A block is
 * handed to us when full or after 1 ms (tp_retire_blk_tov), which bounds the
 * latency a quiet link adds. Frames are copied out of the ring into pool
 * buffers allocated in bulk (one buffer_alloc per block or per burst), and
 * the block goes back to the kernel once all its frames are taken. Frames
 * the kernel shows us going out (our own tx included) are skipped.
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
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "drivers/af_packet/offload.h"
#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

#define AFP_RX_FRAME_HINT 2048 /* V3 ignores frame boundaries; the kernel wants a count */
#define AFP_RX_RETIRE_MS 1
#define AFP_L2_MAX 18          /* Ethernet header and one VLAN tag */
#define AFP_VLAN_LEN 4

struct afp_conf {
	char host_if[IFNAMSIZ];
	uint32_t rx_queues;
	uint32_t tx_queues;
	uint32_t rx_block_size;
	uint32_t rx_blocks;
	uint32_t tx_frame_size;
	uint32_t tx_frames;
};
_Static_assert(sizeof(struct afp_conf) <= CONF_DRIVER_CONF_SIZE, "af-packet conf fits");

static const struct conf_key afp_keys[] = {
	{ .name = "host-if", .type = CONF_STRING, CONF_FIELD(struct afp_conf, host_if),
	  .doc = "the Linux interface to open" },
	{ .name = "rx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct afp_conf, rx_queues), .doc = "rx queues (PACKET_FANOUT hash when more than 1)" },
	{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct afp_conf, tx_queues), .doc = "tx queues, one socket each" },
	{ .name = "rx-block-size", .type = CONF_SIZE, .def = "128K", .min = 4096, .max = 1u << 24,
	  CONF_FIELD(struct afp_conf, rx_block_size), .doc = "TPACKET_V3 block size (holds a whole GSO frame)" },
	{ .name = "rx-blocks", .type = CONF_UINT, .def = "32", .min = 2, .max = 65536,
	  CONF_FIELD(struct afp_conf, rx_blocks), .doc = "blocks per rx ring" },
	{ .name = "tx-frame-size", .type = CONF_SIZE, .def = "2048", .min = 128, .max = 65536,
	  CONF_FIELD(struct afp_conf, tx_frame_size), .doc = "tx ring frame size" },
	{ .name = "tx-frames", .type = CONF_UINT, .def = "1024", .min = 16, .max = 1u << 20,
	  CONF_FIELD(struct afp_conf, tx_frames), .doc = "frames per tx ring" },
	{ 0 },
};

static int afp_check(void *obj, struct conf_check *chk)
{
	struct afp_conf *c = obj;
	if (!c->host_if[0]) {
		chk->key = NULL;
		snprintf(chk->msg, sizeof(chk->msg), "host-if is required");
		return -EINVAL;
	}
	if (c->rx_block_size % (uint32_t)sysconf(_SC_PAGESIZE)) {
		chk->key = "rx-block-size";
		snprintf(chk->msg, sizeof(chk->msg), "rx-block-size %u is not a multiple of the page size %ld",
			 c->rx_block_size, sysconf(_SC_PAGESIZE));
		return -EINVAL;
	}
	if (c->tx_frame_size % TPACKET_ALIGNMENT) {
		chk->key = "tx-frame-size";
		snprintf(chk->msg, sizeof(chk->msg), "tx-frame-size %u is not a multiple of %u", c->tx_frame_size,
			 TPACKET_ALIGNMENT);
		return -EINVAL;
	}
	return 0;
}

static const struct conf_driver afp_conf_driver = {
	.name = "af-packet",
	.doc = "a Linux interface through TPACKET_V3 rx and TPACKET_V2 tx rings",
	.keys = afp_keys,
	.size = sizeof(struct afp_conf),
	.check = afp_check,
};

struct afp_rxq {
	int fd;
	uint8_t *ring;
	uint32_t block;     /* the block we read or wait for */
	uint32_t pkts_left; /* frames of that block not yet taken; 0: not opened */
	uint8_t *pkt;       /* next frame in it */
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

/* ---- rx ---- */

/* Put the tag the kernel took out back behind the MAC addresses, in the
 * buffer's headroom. */
static void vlan_insert(struct buffer *b, const struct tpacket3_hdr *h)
{
	uint16_t tpid = (h->tp_status & TP_STATUS_VLAN_TPID_VALID) ? h->hv1.tp_vlan_tpid : ETH_P_8021Q;
	buffer_advance(b, -AFP_VLAN_LEN);
	uint8_t *p = buffer_data(b);
	memmove(p, p + AFP_VLAN_LEN, 12);
	p[12] = (uint8_t)(tpid >> 8);
	p[13] = (uint8_t)tpid;
	p[14] = (uint8_t)(h->hv1.tp_vlan_tci >> 8);
	p[15] = (uint8_t)h->hv1.tp_vlan_tci;
}

enum take { TAKEN, NO_ROOM };

/* One frame of the ring into bi[*got..]: buffers bi[*got..*have) are
 * allocated and empty; more are allocated here as needed, want_more at a
 * time. Returns NO_ROOM when its segments do not fit in n (the frame stays
 * in the ring for the next burst), else TAKEN (used, dropped or counted as
 * an error). */
static enum take take_frame(struct afp_dev *ad, struct dev_counters *c, const struct tpacket3_hdr *h,
			    uint32_t *bi, uint32_t *got, uint32_t *have, uint32_t n, uint32_t want_more)
{
	const struct sockaddr_ll *sll = (const void *)((const uint8_t *)h + TPACKET_ALIGN(sizeof(*h)));
	if (sll->sll_pkttype == PACKET_OUTGOING)
		return TAKEN;
	const uint8_t *data = (const uint8_t *)h + h->tp_mac;
	uint32_t len = h->tp_len;
	uint32_t l3 = h->tp_net - h->tp_mac;
	uint32_t vlan = (h->tp_status & TP_STATUS_VLAN_VALID) ? AFP_VLAN_LEN : 0;
	uint32_t data_size = buffer_main.data_size;
	if (unlikely(h->tp_snaplen < len)) {
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
			if (h->tp_status & TP_STATUS_CSUMNOTREADY)
				afp_l4_csum_complete(dst, len, l3);
		}
		if (unlikely(vlan))
			vlan_insert(b, h);
	}
	*got += need;
	return TAKEN;
}

static uint32_t afp_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct afp_rxq *rq = &ad->rxq[queue];
	struct dev_counters *c = &dev->rxq[queue].c;
	uint32_t got = 0, have = 0;
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
			if (take_frame(ad, c, h, bi, &got, &have, n, rq->pkts_left) == NO_ROOM)
				break;
			rq->pkt += h->tp_next_offset;
			if (--rq->pkts_left)
				continue;
		}
		/* Every frame taken: the block goes back to the kernel. */
		__atomic_store_n(&bd->hdr.bh1.block_status, TP_STATUS_KERNEL, __ATOMIC_RELEASE);
		rq->block = rq->block + 1 == ad->conf.rx_blocks ? 0 : rq->block + 1;
	}
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
static uint32_t afp_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
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

/* ---- sockets ---- */

static int host_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	memset(ifr, 0, sizeof(*ifr));
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	int rc = ioctl(fd, req, ifr) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

static int host_mtu(const char *ifname)
{
	struct ifreq ifr;
	int rc = host_ioctl(ifname, SIOCGIFMTU, &ifr);
	return rc < 0 ? rc : ifr.ifr_mtu;
}

/* A packet socket that receives nothing until bound with a protocol. */
static int packet_socket(int version)
{
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (setsockopt(fd, SOL_PACKET, PACKET_VERSION, &version, sizeof(version)) < 0) {
		int e = errno;
		close(fd);
		return -e;
	}
	return fd;
}

static int bind_if(int fd, int ifindex, uint16_t proto)
{
	struct sockaddr_ll sll = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(proto),
		.sll_ifindex = ifindex,
	};
	return bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0 ? -errno : 0;
}

#define TRY(what, call)                                                                        \
	do {                                                                                   \
		if ((call) < 0) {                                                              \
			rc = -errno;                                                           \
			base_log("af-packet", "%s: %s: %s", ad->dev.name, what, strerror(errno)); \
			return rc;                                                             \
		}                                                                              \
	} while (0)

/* fanout: the group id queue 0 got, for the others to join (-1: none yet). */
static int rxq_open(struct afp_dev *ad, struct afp_rxq *rq, int *fanout)
{
	int rc;
	rq->fd = packet_socket(TPACKET_V3);
	if (rq->fd < 0) {
		base_log("af-packet", "%s: packet socket: %s", ad->dev.name, strerror(-rq->fd));
		return rq->fd;
	}
	uint32_t bs = ad->conf.rx_block_size;
	struct tpacket_req3 req = {
		.tp_block_size = bs,
		.tp_block_nr = ad->conf.rx_blocks,
		.tp_frame_size = AFP_RX_FRAME_HINT,
		.tp_frame_nr = bs / AFP_RX_FRAME_HINT * ad->conf.rx_blocks,
		.tp_retire_blk_tov = AFP_RX_RETIRE_MS,
	};
	TRY("rx ring", setsockopt(rq->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)));
	void *ring = mmap(NULL, ad->rx_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, rq->fd, 0);
	TRY("rx ring mmap", ring == MAP_FAILED ? -1 : 0);
	rq->ring = ring;
	rq->block = 0;
	rq->pkts_left = 0;
	rc = bind_if(rq->fd, ad->ifindex, ETH_P_ALL);
	if (rc < 0) {
		base_log("af-packet", "%s: bind: %s", ad->dev.name, strerror(-rc));
		return rc;
	}
	if (ad->dev.n_rx_queues > 1) {
		/* The kernel picks an unused group id for the first socket; the
		 * others join that group. */
		int type_flags = PACKET_FANOUT_HASH | PACKET_FANOUT_FLAG_DEFRAG;
		int arg;
		if (*fanout < 0) {
			arg = (type_flags | PACKET_FANOUT_FLAG_UNIQUEID) << 16;
			TRY("fanout", setsockopt(rq->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)));
			socklen_t l = sizeof(arg);
			TRY("fanout id", getsockopt(rq->fd, SOL_PACKET, PACKET_FANOUT, &arg, &l));
			*fanout = arg & 0xffff;
		} else {
			arg = type_flags << 16 | *fanout;
			TRY("fanout join", setsockopt(rq->fd, SOL_PACKET, PACKET_FANOUT, &arg, sizeof(arg)));
		}
	}
	/* Skipping our own tx in the kernel saves copies; rx also checks the
	 * packet type, since a fanout group does not honour this. */
	int one = 1;
	(void)setsockopt(rq->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one));
	struct packet_mreq mr = { .mr_ifindex = ad->ifindex, .mr_type = PACKET_MR_PROMISC };
	TRY("promiscuous mode", setsockopt(rq->fd, SOL_PACKET, PACKET_ADD_MEMBERSHIP, &mr, sizeof(mr)));
	return 0;
}

static int txq_open(struct afp_dev *ad, struct afp_txq *tq)
{
	int rc;
	tq->fd = packet_socket(TPACKET_V2);
	if (tq->fd < 0) {
		base_log("af-packet", "%s: packet socket: %s", ad->dev.name, strerror(-tq->fd));
		return tq->fd;
	}
	int one = 1;
	TRY("tx loss mode", setsockopt(tq->fd, SOL_PACKET, PACKET_LOSS, &one, sizeof(one)));
	/* A sent frame's skb holds send-buffer memory until the peer consumes
	 * it. With the default buffer (about 90 full frames) a slow peer made
	 * the kick fail with EAGAIN part way through the ring, leaving frames
	 * marked for sending until a later burst kicked again: late, or never
	 * at the end of a stream, and counted nowhere. Room for the whole ring
	 * (which itself bounds the frames in flight) takes that failure away;
	 * without CAP_NET_ADMIN the plain option, capped by wmem_max. */
	int sndbuf = (int)MIN((uint64_t)ad->tx_n_frames * (ad->conf.tx_frame_size + 1024u), (uint64_t)INT_MAX / 2);
	if (setsockopt(tq->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sndbuf, sizeof(sndbuf)) < 0)
		(void)setsockopt(tq->fd, SOL_SOCKET, SO_SNDBUF, &sndbuf, sizeof(sndbuf));
	(void)setsockopt(tq->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one, sizeof(one));
	struct tpacket_req req = {
		.tp_block_size = ad->tx_block_size,
		.tp_block_nr = ad->tx_n_frames / ad->tx_fpb,
		.tp_frame_size = ad->conf.tx_frame_size,
		.tp_frame_nr = ad->tx_n_frames,
	};
	TRY("tx ring", setsockopt(tq->fd, SOL_PACKET, PACKET_TX_RING, &req, sizeof(req)));
	void *ring = mmap(NULL, ad->tx_ring_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, tq->fd, 0);
	TRY("tx ring mmap", ring == MAP_FAILED ? -1 : 0);
	tq->ring = ring;
	tq->head = 0;
	tq->lock = false;
	tq->gone = false;
	/* Protocol 0: this socket sends only; the kernel takes the protocol
	 * from each frame's Ethernet header. */
	rc = bind_if(tq->fd, ad->ifindex, 0);
	if (rc < 0)
		base_log("af-packet", "%s: tx bind: %s", ad->dev.name, strerror(-rc));
	return rc;
}

#undef TRY

/* Fold the kernel's drop count (reset by each read) into the queue's sum. */
static void rxq_harvest(struct afp_rxq *rq)
{
	struct tpacket_stats_v3 st;
	socklen_t l = sizeof(st);
	if (rq->fd >= 0 && getsockopt(rq->fd, SOL_PACKET, PACKET_STATISTICS, &st, &l) == 0)
		__atomic_add_fetch(&rq->kernel_drops, st.tp_drops, __ATOMIC_RELAXED);
}

static void afp_stop(struct device *dev)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	for (uint16_t q = 0; q < DEV_MAX_QUEUES; q++) {
		struct afp_rxq *rq = &ad->rxq[q];
		rxq_harvest(rq);
		if (rq->ring)
			munmap(rq->ring, ad->rx_ring_size);
		if (rq->fd >= 0)
			close(rq->fd);
		rq->ring = NULL;
		rq->fd = -1;
		struct afp_txq *tq = &ad->txq[q];
		if (tq->ring)
			munmap(tq->ring, ad->tx_ring_size);
		if (tq->fd >= 0)
			close(tq->fd);
		tq->ring = NULL;
		tq->fd = -1;
	}
}

static int afp_start(struct device *dev)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	/* By name each time: a host-if deleted and made again has a new index,
	 * and sockets bound to the old one would never see a frame. */
	int ifindex = (int)if_nametoindex(ad->conf.host_if);
	if (!ifindex) {
		int rc = -errno;
		base_log("af-packet", "%s: host-if %s: %s", dev->name, ad->conf.host_if, strerror(errno));
		return rc;
	}
	ad->ifindex = ifindex;
	int mtu = host_mtu(ad->conf.host_if);
	if (mtu > 0)
		dev->mtu = (uint16_t)MIN(mtu, UINT16_MAX);
	int fanout = -1;
	int rc = 0;
	for (uint16_t q = 0; q < dev->n_rx_queues && rc == 0; q++)
		rc = rxq_open(ad, &ad->rxq[q], &fanout);
	for (uint16_t q = 0; q < dev->n_tx_queues && rc == 0; q++)
		rc = txq_open(ad, &ad->txq[q]);
	if (rc < 0)
		afp_stop(dev);
	return rc;
}

static void afp_link(struct device *dev, struct dev_link *link)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct ifreq ifr;
	/* Up only while the host-if our sockets are bound to exists: once it
	 * is deleted they are bound to nothing (the kernel unbinds them), even
	 * after an interface of the same name comes back; `set interface state
	 * NAME up` then restarts the driver on the new one. */
	bool same = (int)if_nametoindex(ad->conf.host_if) == ad->ifindex;
	if (same && host_ioctl(ad->conf.host_if, SIOCGIFFLAGS, &ifr) == 0)
		link->up = dev->admin_up && (ifr.ifr_flags & IFF_UP) && (ifr.ifr_flags & IFF_RUNNING);
	link->full_duplex = link->up;
}

static void afp_stats(struct device *dev, struct dev_counters *c)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
		rxq_harvest(&ad->rxq[q]);
		c->rx_dropped += __atomic_load_n(&ad->rxq[q].kernel_drops, __ATOMIC_RELAXED);
	}
}

static void afp_destroy(struct device *dev)
{
	afp_stop(dev);
	free(container_of(dev, struct afp_dev, dev));
}

/* `show hardware`:
 *   host-if veth0 (ifindex 7), TPACKET_V3 rx 32 x 131072-byte blocks, TPACKET_V2 tx 512 x 2048-byte frames
 *   rx queue 0: fd 12, block 3, kernel drops 0
 *   tx queue 0: fd 13, head 17
 */
static int afp_format_hw(struct device *dev, char *buf, size_t len)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	size_t o = 0;
#define OUT(...) o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__)
	OUT("host-if %s (ifindex %d), TPACKET_V3 rx %u x %u-byte blocks, TPACKET_V2 tx %u x %u-byte frames",
	    ad->conf.host_if, ad->ifindex, ad->conf.rx_blocks, ad->conf.rx_block_size, ad->conf.tx_frames,
	    ad->conf.tx_frame_size);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
		rxq_harvest(&ad->rxq[q]);
		OUT("\nrx queue %u: fd %d, block %u, kernel drops %" PRIu64, q, ad->rxq[q].fd, ad->rxq[q].block,
		    __atomic_load_n(&ad->rxq[q].kernel_drops, __ATOMIC_RELAXED));
	}
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		OUT("\ntx queue %u: fd %d, head %u%s", q, ad->txq[q].fd, ad->txq[q].head,
		    ad->txq[q].gone ? ", host-if gone" : "");
#undef OUT
	return (int)o;
}

static const struct device_ops afp_ops = {
	.tx_node = "af-packet-tx",
	.format_hw = afp_format_hw,
	.start = afp_start,
	.stop = afp_stop,
	.rx_burst = afp_rx_burst,
	.tx_burst = afp_tx_burst,
	.link = afp_link,
	.stats = afp_stats,
	.destroy = afp_destroy,
};

static struct device *afp_create(const void *conf, char *err, size_t errlen)
{
	const struct afp_conf *c = conf;
	int ifindex = (int)if_nametoindex(c->host_if);
	if (!ifindex) {
		snprintf(err, errlen, "af-packet: host-if %s: %s", c->host_if, strerror(errno));
		return NULL;
	}
	int mtu = host_mtu(c->host_if);
	if (mtu < 0) {
		snprintf(err, errlen, "af-packet: host-if %s: MTU: %s", c->host_if, strerror(-mtu));
		return NULL;
	}
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		snprintf(err, errlen, "af-packet: packet socket: %s (needs CAP_NET_RAW)", strerror(errno));
		return NULL;
	}
	close(fd);
	struct afp_dev *ad = aligned_alloc(64, ROUND_UP(sizeof(*ad), 64));
	if (!ad) {
		snprintf(err, errlen, "af-packet: out of memory");
		return NULL;
	}
	memset(ad, 0, sizeof(*ad));
	ad->conf = *c;
	ad->ifindex = ifindex;
	ad->dev.ops = &afp_ops;
	ad->dev.n_rx_queues = (uint16_t)c->rx_queues;
	ad->dev.n_tx_queues = (uint16_t)c->tx_queues;
	ad->dev.mtu = (uint16_t)MIN(mtu, UINT16_MAX);
	for (uint16_t q = 0; q < DEV_MAX_QUEUES; q++)
		ad->rxq[q].fd = ad->txq[q].fd = -1;
	ad->rx_ring_size = (size_t)c->rx_block_size * c->rx_blocks;
	uint32_t page = (uint32_t)sysconf(_SC_PAGESIZE);
	ad->tx_block_size = ROUND_UP(c->tx_frame_size, page);
	ad->tx_fpb = ad->tx_block_size / c->tx_frame_size;
	ad->tx_n_frames = ROUND_UP(c->tx_frames, ad->tx_fpb);
	ad->tx_ring_size = (size_t)ad->tx_block_size * (ad->tx_n_frames / ad->tx_fpb);
	ad->tx_data_off = TPACKET2_HDRLEN - sizeof(struct sockaddr_ll);
	ad->tx_data_max = c->tx_frame_size - ad->tx_data_off;
	if ((uint32_t)mtu + AFP_L2_MAX > ad->tx_data_max) {
		snprintf(err, errlen, "af-packet: tx-frame-size %u holds frames of %u bytes; host-if %s (MTU %d) needs %u",
			 c->tx_frame_size, ad->tx_data_max, c->host_if, mtu, (uint32_t)mtu + AFP_L2_MAX);
		free(ad);
		return NULL;
	}
	return &ad->dev;
}

static const struct dev_driver afp_driver = {
	.name = "af-packet",
	.conf = &afp_conf_driver,
	.create = afp_create,
};
DEV_DRIVER_REGISTER(afp_driver)
