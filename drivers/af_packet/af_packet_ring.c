/* af-packet's sockets and rings: the key table, opening the rx sockets
 * (TPACKET_V3 or V2 ring, PACKET_FANOUT_HASH group over the rx queues) and tx
 * sockets (TPACKET_V2 ring, PACKET_LOSS, PACKET_QDISC_BYPASS), start and
 * stop, link, kernel drop counters, `show hardware`, creation and
 * registration. The driver as a whole is described in af_packet.c. */
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

#include "drivers/af_packet/af_packet_private.h"
#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

/* In enum afp_rx_ring's order. */
static const char *const afp_rx_rings[] = { "auto", "frame", "block", NULL };

const char *afp_rx_ring_name(enum afp_rx_ring r)
{
	return (size_t)r < ARRAY_LEN(afp_rx_rings) - 1 ? afp_rx_rings[r] : "?";
}

static const struct conf_key afp_keys[] = {
	{ .name = "host-if", .type = CONF_STRING, CONF_FIELD(struct afp_conf, host_if),
	  .doc = "the Linux interface to open" },
	{ .name = "rx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct afp_conf, rx_queues), .doc = "rx queues (PACKET_FANOUT hash when more than 1)" },
	{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct afp_conf, tx_queues), .doc = "tx queues, one socket each" },
	{ .name = "rx-block-size", .type = CONF_SIZE, .def = "128K", .min = 4096, .max = 1u << 24,
	  CONF_FIELD(struct afp_conf, rx_block_size), .doc = "rx ring block size (V3: holds a whole GSO frame)" },
	{ .name = "rx-blocks", .type = CONF_UINT, .def = "32", .min = 2, .max = 65536,
	  CONF_FIELD(struct afp_conf, rx_blocks), .doc = "blocks per rx ring" },
	{ .name = "tx-frame-size", .type = CONF_SIZE, .def = "2048", .min = 128, .max = 65536,
	  CONF_FIELD(struct afp_conf, tx_frame_size), .doc = "tx ring frame size" },
	{ .name = "tx-frames", .type = CONF_UINT, .def = "1024", .min = 16, .max = 1u << 20,
	  CONF_FIELD(struct afp_conf, tx_frames), .doc = "frames per tx ring" },
	{ .name = "rx-ring", .type = CONF_ENUM, .def = "auto", .choices = afp_rx_rings,
	  CONF_FIELD(struct afp_conf, rx_ring),
	  .doc = "rx ring kind: frame (per-frame readiness), block (throughput), auto (block if polling)" },
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
	.doc = "a Linux interface through packet rings (rx: rx-ring; tx V2)",
	.keys = afp_keys,
	.size = sizeof(struct afp_conf),
	.check = afp_check,
};

/* ---- sockets ---- */

/* ifr's name is set here; the rest is the caller's (zeroed, or the value
 * to set). */
static int afp_host_ioctl(const char *ifname, unsigned long req, struct ifreq *ifr)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	snprintf(ifr->ifr_name, sizeof(ifr->ifr_name), "%s", ifname);
	int rc = ioctl(fd, req, ifr) < 0 ? -errno : 0;
	close(fd);
	return rc;
}

static int host_mtu(const char *ifname)
{
	struct ifreq ifr = { 0 };
	int rc = afp_host_ioctl(ifname, SIOCGIFMTU, &ifr);
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

/* TPACKET_V3: blocks handed over when full or after AFP_RX_RETIRE_MS, the
 * throughput ring (queues in polling mode). */
static int ring_v3(struct afp_dev *ad, struct afp_rxq *rq)
{
	uint32_t bs = ad->conf.rx_block_size;
	struct tpacket_req3 req = {
		.tp_block_size = bs,
		.tp_block_nr = ad->conf.rx_blocks,
		.tp_frame_size = AFP_RX_FRAME_HINT,
		.tp_frame_nr = bs / AFP_RX_FRAME_HINT * ad->conf.rx_blocks,
		.tp_retire_blk_tov = AFP_RX_RETIRE_MS,
	};
	return setsockopt(rq->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req));
}

/* TPACKET_V2: fixed frames, each the user's (and the socket readable) as
 * soon as it is written, so a lone frame waits for no block timeout.
 * Frames of the smallest power of two that holds the header and an
 * MTU-sized frame with its L2 header, in the same memory as the V3 ring;
 * longer frames (GSO super-frames) come whole through the socket
 * (PACKET_COPY_THRESH, TP_STATUS_COPY). */
static int ring_v2(struct afp_dev *ad, struct afp_rxq *rq)
{
	uint32_t need = TPACKET_ALIGN(TPACKET2_HDRLEN + 16) + ad->dev.mtu + AFP_L2_MAX;
	uint32_t fs = AFP_RX_V2_FRAME_MIN;
	while (fs < need && fs < ad->conf.rx_block_size)
		fs <<= 1;
	rq->frame_size = fs;
	rq->n_frames = ad->conf.rx_block_size / fs * ad->conf.rx_blocks;
	rq->frame = 0;
	rq->copy_buf = malloc(AFP_RX_COPY_MAX);
	if (!rq->copy_buf) {
		errno = ENOMEM;
		return -1;
	}
	int one = 1;
	if (setsockopt(rq->fd, SOL_PACKET, PACKET_COPY_THRESH, &one, sizeof(one)) < 0)
		return -1;
	int rcv = AFP_RX_RCVBUF;
	if (setsockopt(rq->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)) < 0)
		(void)setsockopt(rq->fd, SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv));
	struct tpacket_req req = {
		.tp_block_size = ad->conf.rx_block_size,
		.tp_block_nr = ad->conf.rx_blocks,
		.tp_frame_size = fs,
		.tp_frame_nr = rq->n_frames,
	};
	return setsockopt(rq->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req));
}

/* Whether queue q gets the per-frame ring (TPACKET_V2) rather than the
 * block ring (TPACKET_V3): rx-ring says, or with auto the queue's rx mode
 * as it is now, at start (polling: blocks). */
static bool rxq_frames(const struct afp_dev *ad, uint16_t q)
{
	switch ((enum afp_rx_ring)ad->conf.rx_ring) {
	case AFP_RX_RING_FRAME:
		return true;
	case AFP_RX_RING_BLOCK:
		return false;
	default:
		return dev_rx_mode(&ad->dev, q) != DEV_RX_MODE_POLLING;
	}
}

/* fanout: the group id queue 0 got, for the others to join (-1: none yet). */
static int rxq_open(struct afp_dev *ad, uint16_t q, int *fanout)
{
	struct afp_rxq *rq = &ad->rxq[q];
	int rc;
	rq->v2 = rxq_frames(ad, q);
	rq->fd = packet_socket(rq->v2 ? TPACKET_V2 : TPACKET_V3);
	if (rq->fd < 0) {
		base_log("af-packet", "%s: packet socket: %s", ad->dev.name, strerror(-rq->fd));
		return rq->fd;
	}
	TRY("rx ring", rq->v2 ? ring_v2(ad, rq) : ring_v3(ad, rq));
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
		free(rq->copy_buf);
		rq->copy_buf = NULL;
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
		rc = rxq_open(ad, q, &fanout);
	for (uint16_t q = 0; q < dev->n_tx_queues && rc == 0; q++)
		rc = txq_open(ad, &ad->txq[q]);
	if (rc < 0)
		afp_stop(dev);
	return rc;
}

static void afp_link(struct device *dev, struct dev_link *link)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct ifreq ifr = { 0 };
	/* Up only while the host-if our sockets are bound to exists: once it
	 * is deleted they are bound to nothing (the kernel unbinds them), even
	 * after an interface of the same name comes back; `set interface state
	 * NAME up` then restarts the driver on the new one. */
	bool same = (int)if_nametoindex(ad->conf.host_if) == ad->ifindex;
	if (same && afp_host_ioctl(ad->conf.host_if, SIOCGIFFLAGS, &ifr) == 0)
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

static int afp_rx_fd(struct device *dev, uint16_t queue)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	return ad->rxq[queue].fd >= 0 ? ad->rxq[queue].fd : DEV_RX_FD_NONE;
}

static void afp_destroy(struct device *dev)
{
	afp_stop(dev);
	free(container_of(dev, struct afp_dev, dev));
}

/* `show hardware`:
 *   host-if veth0 (ifindex 7), rx-ring auto, rx ring 32 x 131072-byte blocks, TPACKET_V2 tx 1024 x 2048-byte frames
 *   rx queue 0: fd 12, TPACKET_V3, block 3, kernel drops 0
 *   tx queue 0: fd 13, head 17
 */
static int afp_format_hw(struct device *dev, char *buf, size_t len)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	size_t o = 0;
#define OUT(...) o += (size_t)snprintf(buf + MIN(o, len), len - MIN(o, len), __VA_ARGS__)
	OUT("host-if %s (ifindex %d), rx-ring %s, rx ring %u x %u-byte blocks, TPACKET_V2 tx %u x %u-byte frames",
	    ad->conf.host_if, ad->ifindex, afp_rx_ring_name((enum afp_rx_ring)ad->conf.rx_ring), ad->conf.rx_blocks, ad->conf.rx_block_size, ad->conf.tx_frames,
	    ad->conf.tx_frame_size);
	for (uint16_t q = 0; q < dev->n_rx_queues; q++) {
		rxq_harvest(&ad->rxq[q]);
		const struct afp_rxq *rq = &ad->rxq[q];
		if (rq->v2)
			OUT("\nrx queue %u: fd %d, TPACKET_V2 %u x %u-byte frames, frame %u, kernel drops %" PRIu64, q,
			    rq->fd, rq->n_frames, rq->frame_size, rq->frame,
			    __atomic_load_n(&rq->kernel_drops, __ATOMIC_RELAXED));
		else
			OUT("\nrx queue %u: fd %d, TPACKET_V3, block %u, kernel drops %" PRIu64, q, rq->fd, rq->block,
			    __atomic_load_n(&rq->kernel_drops, __ATOMIC_RELAXED));
	}
	for (uint16_t q = 0; q < dev->n_tx_queues; q++)
		OUT("\ntx queue %u: fd %d, head %u%s", q, ad->txq[q].fd, ad->txq[q].head,
		    ad->txq[q].gone ? ", host-if gone" : "");
#undef OUT
	return (int)o;
}

/* `set interface mtu`: the host interface's MTU (as VPP's af_packet does),
 * which afp_start reads back on every start. */
static int afp_set_mtu(struct device *dev, uint32_t mtu)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct ifreq ifr = { .ifr_mtu = (int)mtu };
	return afp_host_ioctl(ad->conf.host_if, SIOCSIFMTU, &ifr);
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
	.set_mtu = afp_set_mtu,
	.rx_fd = afp_rx_fd,
};

bool afp_dev_info(struct device *dev, char *host_if, size_t size, enum afp_rx_ring *setting)
{
	if (dev->ops != &afp_ops)
		return false;
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	snprintf(host_if, size, "%s", ad->conf.host_if);
	*setting = (enum afp_rx_ring)ad->conf.rx_ring;
	return true;
}

void afp_rxq_info(struct device *dev, uint16_t q, struct afp_rxq_info *info)
{
	struct afp_dev *ad = container_of(dev, struct afp_dev, dev);
	struct afp_rxq *rq = &ad->rxq[q];
	rxq_harvest(rq);
	*info = (struct afp_rxq_info){
		.open = rq->ring != NULL,
		.ring = rq->v2 ? AFP_RX_RING_FRAME : AFP_RX_RING_BLOCK,
		.slots = rq->v2 ? rq->n_frames : ad->conf.rx_blocks,
		.slot_size = rq->v2 ? rq->frame_size : ad->conf.rx_block_size,
		.kernel_drops = __atomic_load_n(&rq->kernel_drops, __ATOMIC_RELAXED),
	};
}

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
