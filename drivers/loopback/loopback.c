/* The loopback driver: an interface whose tx comes back as its rx.
 *
 *   loop0 { driver loopback }
 *   loop0 { driver loopback  ring-size 4096  mac 02:00:00:00:00:01 }
 *
 * VPP's loopback (`create loopback interface`): an interface that holds
 * addresses and routes without a wire. What is sent on it is received on
 * it again, through loopback-input and ethernet-input, with rx_if the
 * loopback: a frame addressed to its own MAC goes up to the L3 nodes, any
 * other is dropped by ethernet-input's filter (as a frame from a wire
 * would be).
 *
 * One rx queue and one tx queue joined by a ring of ring-size buffer
 * indices: tx moves the buffers themselves into the ring (no copy), rx
 * hands them up. The buffers' metadata is put back to what a fresh buffer
 * has (buffer_reset's fields, the chain kept) on the way in, so nothing of
 * their trip out (trace, scheduling class, distributor order) follows
 * them back. tx may run on several threads at once (they share the one tx
 * queue): they take the ring's lock once per burst, as af-packet's shared
 * tx queues do; rx runs on the one thread the queue is placed on and takes
 * no lock (the indices' acquire/release order the slots). A full ring
 * takes a prefix of the burst: the caller counts the rest as TX-dropped.
 * The ring is emptied (buffers freed) when the interface goes down.
 *
 * rx has no fd to wake a sleeping thread: its thread backs off instead of
 * blocking (DEV_RX_FD_NONE), so a frame waits at most one back-off.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

#define LOOP_RING_MIN 16
#define LOOP_RING_MAX 65536

struct loop_conf {
	uint32_t ring_size;
	uint8_t mac[6];
};

static const struct conf_key loop_keys[] = {
	{ .name = "ring-size", .type = CONF_UINT, .def = "1024", .min = LOOP_RING_MIN, .max = LOOP_RING_MAX,
	  CONF_FIELD(struct loop_conf, ring_size), .doc = "packets between tx and rx (a power of two)" },
	{ .name = "mac", .type = CONF_MAC, CONF_FIELD(struct loop_conf, mac),
	  .doc = "its MAC address (default: a random locally administered one)" },
	{ 0 },
};

static int loop_check(void *obj, struct conf_check *chk)
{
	const struct loop_conf *c = obj;
	if (c->ring_size & (c->ring_size - 1)) {
		chk->key = "ring-size";
		snprintf(chk->msg, sizeof(chk->msg), "ring-size %u: expected a power of two", c->ring_size);
		return -EINVAL;
	}
	if (c->mac[0] & 1) {
		chk->key = "mac";
		snprintf(chk->msg, sizeof(chk->msg), "expected a unicast MAC");
		return -EINVAL;
	}
	return 0;
}

static const struct conf_driver loop_conf_driver = {
	.name = "loopback",
	.doc = "no wire: what is sent on it is received on it again (VPP's loopback)",
	.keys = loop_keys,
	.size = sizeof(struct loop_conf),
	.check = loop_check,
};
_Static_assert(sizeof(struct loop_conf) <= CONF_DRIVER_CONF_SIZE, "loopback conf fits");

struct loop_dev {
	struct device dev;
	uint32_t mask; /* ring-size - 1 */
	uint32_t *ring;
	alignas(64) uint32_t tail; /* written by tx (under lock), read by rx */
	bool lock;
	alignas(64) uint32_t head; /* written by rx, read by tx */
};

static inline struct loop_dev *loop_of(struct device *dev)
{
	return container_of(dev, struct loop_dev, dev);
}

/* What a fresh buffer has (buffer_reset), the chain and the data kept. */
static inline void loop_meta_reset(struct buffer *b)
{
	b->flags &= BUFFER_F_NEXT_PRESENT;
	b->trace_handle = 0;
	b->error = 0;
	b->l2_len = 0;
}

static uint32_t loop_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	(void)queue;
	struct loop_dev *ld = loop_of(dev);
	while (__atomic_test_and_set(&ld->lock, __ATOMIC_ACQUIRE))
		cpu_relax();
	uint32_t tail = ld->tail;
	uint32_t room = ld->mask + 1 - (tail - __atomic_load_n(&ld->head, __ATOMIC_ACQUIRE));
	uint32_t k = MIN(n, room);
	for (uint32_t i = 0; i < k; i++) {
		loop_meta_reset(buffer_get(bi[i]));
		ld->ring[(tail + i) & ld->mask] = bi[i];
	}
	__atomic_store_n(&ld->tail, tail + k, __ATOMIC_RELEASE);
	__atomic_clear(&ld->lock, __ATOMIC_RELEASE);
	return k;
}

static uint32_t loop_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	(void)queue;
	struct loop_dev *ld = loop_of(dev);
	uint32_t head = ld->head;
	uint32_t k = MIN(n, __atomic_load_n(&ld->tail, __ATOMIC_ACQUIRE) - head);
	for (uint32_t i = 0; i < k; i++)
		bi[i] = ld->ring[(head + i) & ld->mask];
	__atomic_store_n(&ld->head, head + k, __ATOMIC_RELEASE);
	return k;
}

/* Down (datapath parked): what is still in the ring is freed. */
static void loop_stop(struct device *dev)
{
	struct loop_dev *ld = loop_of(dev);
	while (ld->head != ld->tail) {
		uint32_t bi = ld->ring[ld->head & ld->mask];
		buffer_free(&bi, 1);
		ld->head++;
	}
}

static uint32_t loop_n_buffers_held(struct device *dev, bool rx, uint16_t queue)
{
	(void)queue;
	struct loop_dev *ld = loop_of(dev);
	return rx ? ld->tail - ld->head : 0;
}

static void loop_destroy(struct device *dev)
{
	struct loop_dev *ld = loop_of(dev);
	loop_stop(dev);
	free(ld->ring);
	free(ld);
}

/* `show hardware`:
 *   loopback: tx comes back as rx, ring 1024 packets, 0 waiting
 */
static int loop_format_hw(struct device *dev, char *buf, size_t len)
{
	struct loop_dev *ld = loop_of(dev);
	return snprintf(buf, len, "loopback: tx comes back as rx, ring %u packets, %u waiting", ld->mask + 1,
			ld->tail - ld->head);
}

static const struct device_ops loop_ops = {
	.tx_node = "loopback-tx",
	.stop = loop_stop,
	.format_hw = loop_format_hw,
	.rx_burst = loop_rx_burst,
	.tx_burst = loop_tx_burst,
	.n_buffers_held = loop_n_buffers_held,
	.destroy = loop_destroy,
};

static struct device *loop_create(const void *conf, char *err, size_t errlen)
{
	const struct loop_conf *c = conf;
	struct loop_dev *ld = aligned_alloc(64, ROUND_UP(sizeof(*ld), 64));
	uint32_t *ring = calloc(c->ring_size, sizeof(*ring));
	if (!ld || !ring) {
		free(ld);
		free(ring);
		snprintf(err, errlen, "loopback: out of memory");
		return NULL;
	}
	memset(ld, 0, sizeof(*ld));
	ld->dev.ops = &loop_ops;
	ld->dev.n_rx_queues = 1;
	ld->dev.n_tx_queues = 1;
	memcpy(ld->dev.mac, c->mac, sizeof(ld->dev.mac)); /* all zeros: dev_register makes one */
	ld->ring = ring;
	ld->mask = c->ring_size - 1;
	return &ld->dev;
}

static const struct dev_driver loop_driver = {
	.name = "loopback",
	.conf = &loop_conf_driver,
	.create = loop_create,
};
DEV_DRIVER_REGISTER(loop_driver)
