/* The tap driver's device: key table, create and destroy, and the
 * datapath's two bursts, which touch only the rings (tap.h says why).
 *
 * rx: up to n frames out of the rx ring, each copied into a buffer of the
 * calling thread's cache (bulk buffer_alloc; a frame longer than a buffer
 * becomes a chain). The copy is the price of never letting the control
 * thread near a per-thread buffer cache or the pool, and of a ring whose
 * memory Linux can never make hold more than its slots: what goes this way
 * is a router's own control traffic (BGP, OSPF, ARP), thousands of frames
 * a second at most, where a copy of 1.5 KB costs well under a microsecond.
 * tx: each packet (its whole chain) copied into the next slot of its
 * queue's ring and freed; a full ring takes a prefix, and the caller
 * counts the rest as TX-dropped (lcp-punt checks the room first, to drop
 * under its own name).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "drivers/tap/tap_private.h"
#include "graph/buffer.h"
#include "graph/node.h"

struct tap_conf {
	char host_if[TAP_IFNAME_SIZE];
	char netns[TAP_NETNS_SIZE];
	uint8_t mac[6];
	uint32_t mtu;
	uint32_t tx_queues;
	uint32_t ring_size;
};

static const struct conf_key tap_keys[] = {
	{ .name = "host-if", .type = CONF_STRING, CONF_FIELD(struct tap_conf, host_if),
	  .doc = "name of the Linux TAP to make (15 characters at most)" },
	{ .name = "netns", .type = CONF_STRING, CONF_FIELD(struct tap_conf, netns),
	  .doc = "network namespace to make it in (a name under /var/run/netns; default: sluice's)" },
	{ .name = "mac", .type = CONF_MAC, CONF_FIELD(struct tap_conf, mac),
	  .doc = "its MAC address (default: a random locally administered one)" },
	{ .name = "mtu", .type = CONF_UINT, .def = "1500", .min = 68, .max = 9216,
	  CONF_FIELD(struct tap_conf, mtu), .doc = "its MTU (also sizes the ring slots: MTU + 18 bytes)" },
	{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct tap_conf, tx_queues), .doc = "tx queues, one ring each: one per datapath thread" },
	{ .name = "ring-size", .type = CONF_UINT, .def = "256", .min = 16, .max = 4096,
	  CONF_FIELD(struct tap_conf, ring_size), .doc = "frames each ring holds (a power of two)" },
	{ 0 },
};

static int tap_check(void *obj, struct conf_check *chk)
{
	const struct tap_conf *c = obj;
	if (!c->host_if[0] || strlen(c->host_if) >= TAP_IFNAME_SIZE || strchr(c->host_if, '/')) {
		chk->key = "host-if";
		snprintf(chk->msg, sizeof(chk->msg), "expected a Linux interface name of 1 to %u characters",
			 TAP_IFNAME_SIZE - 1);
		return -EINVAL;
	}
	if (strchr(c->netns, '/')) {
		chk->key = "netns";
		snprintf(chk->msg, sizeof(chk->msg), "expected a namespace name, not a path");
		return -EINVAL;
	}
	if (c->ring_size & (c->ring_size - 1)) {
		chk->key = "ring-size";
		snprintf(chk->msg, sizeof(chk->msg), "expected a power of two");
		return -EINVAL;
	}
	return 0;
}

static const struct conf_driver tap_conf_driver = {
	.name = "tap",
	.doc = "a Linux TAP (linux-cp's host side); its fd is served by a control thread",
	.keys = tap_keys,
	.size = sizeof(struct tap_conf),
	.check = tap_check,
};
_Static_assert(sizeof(struct tap_conf) <= CONF_DRIVER_CONF_SIZE, "tap conf fits");

/* ---- datapath ---- */

static uint32_t tap_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	struct tap_ring *r = &td->rx;
	uint32_t avail = tap_ring_count(r);
	if (likely(!avail))
		return 0;
	uint32_t fresh[DEV_RX_BURST_MAX];
	n = MIN(MIN(n, avail), (uint32_t)DEV_RX_BURST_MAX);
	uint32_t got = buffer_alloc(fresh, n, -1);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t out = 0;
	for (uint32_t i = 0; i < got; i++) {
		uint32_t *len;
		const uint8_t *p = tap_slot(r, tail + i, &len);
		struct buffer *b = buffer_get(fresh[i]);
		if (likely(*len <= buffer_main.data_size)) {
			memcpy(buffer_data(b), p, *len);
			b->current_length = (uint16_t)*len;
			bi[out++] = fresh[i];
			continue;
		}
		/* A jumbo frame: a chain, as a NIC driver builds one. */
		uint32_t c = buffer_chain_from_bytes(p, *len, -1);
		buffer_free(&fresh[i], 1);
		if (c == BUFFER_INVALID)
			stat_add(&dev->rxq[queue].c.rx_dropped, 1);
		else
			bi[out++] = c;
	}
	/* Frames no buffer was left for stay in the ring for the next poll. */
	atomic_store_explicit(&r->tail, tail + got, memory_order_release);
	return out;
}

static uint32_t tap_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	struct tap_ring *r = &td->tx[queue];
	n = MIN(n, tap_ring_room(r));
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t *len, total;
		uint8_t *p = tap_slot(r, head + i, &len);
		*len = buffer_chain_copy_out(buffer_get(bi[i]), p, r->slot_size, &total);
		if (unlikely(total > r->slot_size))
			*len = 0; /* the control thread skips it and counts it */
	}
	atomic_store_explicit(&r->head, head + n, memory_order_release);
	buffer_free(bi, n);
	return n;
}

uint32_t tap_tx_room(const struct device *dev, uint16_t queue)
{
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	return tap_ring_room(&td->tx[queue]);
}

/* ---- control ---- */

static int tap_start(struct device *dev)
{
	atomic_store(&container_of(dev, struct tap_dev, dev)->running, true);
	return 0;
}

static void tap_stop(struct device *dev)
{
	atomic_store(&container_of(dev, struct tap_dev, dev)->running, false);
}

static void tap_link(struct device *dev, struct dev_link *link)
{
	const struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	link->up = dev->admin_up && td->fd >= 0 && !atomic_load(&td->gone);
	link->full_duplex = true;
}

static void tap_stats(struct device *dev, struct dev_counters *c)
{
	struct tap_host_stats st;
	tap_host_stats_get(dev, &st);
	c->rx_dropped += st.rx_ring_full + st.rx_oversize;
	c->tx_dropped += st.write_errors;
}

static int tap_format_hw(struct device *dev, char *buf, size_t len)
{
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	struct tap_host_stats st;
	tap_host_stats_get(dev, &st);
	return snprintf(buf, len,
			"host-if %s (ifindex %u) netns %s\nrings: %u slots of %u bytes, rx + %u tx\n"
			"to linux %llu, from linux %llu, rx ring full %llu, oversize %llu, write errors %llu",
			td->host_if, st.host_ifindex, td->netns[0] ? td->netns : "(sluice's)", td->rx.mask + 1,
			td->rx.slot_size, dev->n_tx_queues, (unsigned long long)st.to_linux,
			(unsigned long long)st.from_linux, (unsigned long long)st.rx_ring_full,
			(unsigned long long)st.rx_oversize, (unsigned long long)st.write_errors);
}

static void tap_free(struct tap_dev *td)
{
	if (td->fd >= 0)
		close(td->fd);
	if (td->sock >= 0)
		close(td->sock);
	free(td->rx.mem);
	for (uint32_t q = 0; q < DEV_MAX_QUEUES; q++)
		free(td->tx[q].mem);
	free(td);
}

static void tap_destroy(struct device *dev)
{
	struct tap_dev *td = container_of(dev, struct tap_dev, dev);
	tap_thread_remove(td);
	tap_free(td);
}

/* The tap thread kicks the polling thread after it fills the rx ring
 * (tap_thread.c): the thread may sleep. */
static int tap_rx_fd(struct device *dev, uint16_t queue)
{
	(void)dev;
	(void)queue;
	return DEV_RX_FD_SELF;
}

static const struct device_ops tap_ops = {
	.rx_fd = tap_rx_fd,
	.tx_node = "tap-tx",
	.start = tap_start,
	.stop = tap_stop,
	.rx_burst = tap_rx_burst,
	.tx_burst = tap_tx_burst,
	.link = tap_link,
	.stats = tap_stats,
	.format_hw = tap_format_hw,
	.destroy = tap_destroy,
	.set_mtu = tap_host_set_mtu, /* refused above the ring slots' size */
	.set_mac = tap_host_set_mac,
};

bool tap_is(const struct device *dev)
{
	return dev && dev->ops == &tap_ops;
}

const char *tap_host_if(const struct device *dev)
{
	return tap_is(dev) ? container_of(dev, struct tap_dev, dev)->host_if : "";
}

const char *tap_netns(const struct device *dev)
{
	return tap_is(dev) ? container_of(dev, struct tap_dev, dev)->netns : "";
}

void tap_host_stats_get(const struct device *dev, struct tap_host_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!tap_is(dev))
		return;
	const struct tap_host_stats *s = &container_of(dev, struct tap_dev, dev)->st;
	st->to_linux = stat_read(&s->to_linux);
	st->from_linux = stat_read(&s->from_linux);
	st->rx_ring_full = stat_read(&s->rx_ring_full);
	st->rx_oversize = stat_read(&s->rx_oversize);
	st->write_errors = stat_read(&s->write_errors);
	st->host_ifindex = s->host_ifindex;
	st->host_gone = atomic_load(&container_of(dev, struct tap_dev, dev)->gone);
}

static int ring_init(struct tap_ring *r, uint32_t slots, uint32_t slot_size)
{
	r->mask = slots - 1;
	r->slot_size = slot_size;
	r->mem = calloc(slots, 4 + (size_t)slot_size);
	return r->mem ? 0 : -ENOMEM;
}

static struct device *tap_create(const void *conf, char *err, size_t errlen)
{
	const struct tap_conf *c = conf;
	struct tap_dev *td = aligned_alloc(64, ROUND_UP(sizeof(*td), 64));
	if (!td) {
		snprintf(err, errlen, "tap: out of memory");
		return NULL;
	}
	memset(td, 0, sizeof(*td));
	td->fd = td->sock = -1;
	td->dev.ops = &tap_ops;
	td->dev.n_rx_queues = 1;
	td->dev.n_tx_queues = (uint16_t)c->tx_queues;
	td->dev.mtu = (uint16_t)c->mtu;
	memcpy(td->dev.mac, c->mac, 6);
	static const uint8_t zero[6];
	if (!memcmp(td->dev.mac, zero, 6))
		dev_mac_generate(td->dev.mac); /* the TAP gets the MAC sluice shows */
	snprintf(td->host_if, sizeof(td->host_if), "%s", c->host_if);
	snprintf(td->netns, sizeof(td->netns), "%s", c->netns);
	/* Ethernet header and one VLAN tag (no FCS), and a byte to see a cut read by. */
	uint32_t slot = ROUND_UP(c->mtu + 18 + 1, 64);
	int rc = ring_init(&td->rx, c->ring_size, slot);
	for (uint32_t q = 0; rc == 0 && q < c->tx_queues; q++)
		rc = ring_init(&td->tx[q], c->ring_size, slot);
	if (rc)
		snprintf(err, errlen, "tap: out of memory for the rings");
	if (rc || tap_host_open(td, err, errlen) || tap_thread_add(td, err, errlen)) {
		tap_free(td);
		return NULL;
	}
	return &td->dev;
}

static const struct dev_driver tap_driver = {
	.name = "tap",
	.conf = &tap_conf_driver,
	.create = tap_create,
};
DEV_DRIVER_REGISTER(tap_driver)
