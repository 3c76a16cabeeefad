/* The null driver: a device with no wire.
 *
 *   nul0 { driver null  rx-queues 1  tx-queues 1 }            # rx: nothing
 *   nul0 { driver null  rx-recycle  rx-size 64 }              # rx: as fast as it can
 *
 * rx produces nothing by default. With rx-recycle every burst allocates a
 * full burst of buffers from the calling thread's cache and hands them up
 * with rx-size bytes, data untouched, like testpmd's net_null: what is
 * measured is the graph, not a packet copy. tx frees what it is given; the
 * caller counts it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/buffer.h"
#include "graph/node.h"

struct null_conf {
	uint32_t rx_queues;
	uint32_t tx_queues;
	bool rx_recycle;
	uint32_t rx_size;
};

static const struct conf_key null_keys[] = {
	{ .name = "rx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct null_conf, rx_queues), .doc = "rx queues" },
	{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct null_conf, tx_queues), .doc = "tx queues" },
	{ .name = "rx-recycle", .type = CONF_FLAG, CONF_FIELD(struct null_conf, rx_recycle),
	  .doc = "rx hands up fresh buffers as fast as it can (benchmarks)" },
	{ .name = "rx-size", .type = CONF_UINT, .def = "64", .min = 14, .max = 65535,
	  CONF_FIELD(struct null_conf, rx_size), .doc = "length of recycled rx packets" },
	{ 0 },
};

static int null_check(void *obj, struct conf_check *chk)
{
	struct null_conf *c = obj;
	if (buffer_main.data_size && c->rx_size > buffer_main.data_size) {
		chk->key = "rx-size";
		snprintf(chk->msg, sizeof(chk->msg), "rx-size %u is larger than the buffer data size %u",
			 c->rx_size, buffer_main.data_size);
		return -EINVAL;
	}
	return 0;
}

static const struct conf_driver null_conf_driver = {
	.name = "null",
	.doc = "no wire: rx produces nothing (or recycles buffers), tx frees",
	.keys = null_keys,
	.size = sizeof(struct null_conf),
	.check = null_check,
};
_Static_assert(sizeof(struct null_conf) <= CONF_DRIVER_CONF_SIZE, "null conf fits");

struct null_dev {
	struct device dev;
	bool rx_recycle;
	uint16_t rx_size;
};

static uint32_t null_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct null_dev *nd = container_of(dev, struct null_dev, dev);
	if (!nd->rx_recycle)
		return 0;
	uint32_t got = buffer_alloc(bi, n, -1);
	if (unlikely(got < n))
		stat_add(&dev->rxq[queue].c.rx_dropped, n - got);
	/* Locals: the stores could otherwise alias the buffer geometry and the
	 * size, reloaded per packet (9.3 instructions per packet, now
	 * 6.1, in bench/io). */
	uint8_t *const base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	const uint16_t size = nd->rx_size;
	for (uint32_t i = 0; i < got; i++)
		((struct buffer *)(base + bi[i] * stride))->current_length = size;
	return got;
}

static uint32_t null_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	(void)dev;
	(void)queue;
	buffer_free(bi, n);
	return n;
}

static void null_destroy(struct device *dev)
{
	free(container_of(dev, struct null_dev, dev));
}

/* `show hardware`:
 *   rx recycle, 64-byte frames (no packet data written)
 */
static int null_format_hw(struct device *dev, char *buf, size_t len)
{
	const struct null_dev *nd = container_of(dev, struct null_dev, dev);
	if (!nd->rx_recycle)
		return snprintf(buf, len, "rx none (tx frees what it is given)");
	return snprintf(buf, len, "rx recycle, %u-byte frames (no packet data written)", nd->rx_size);
}

/* Without rx-recycle nothing arrives: its thread may sleep. With it, a
 * poll finds nothing only when the pool is empty, and buffers come back
 * without a wakeup: its thread backs off instead. */
static int null_rx_fd(struct device *dev, uint16_t queue)
{
	(void)queue;
	return container_of(dev, struct null_dev, dev)->rx_recycle ? DEV_RX_FD_NONE : DEV_RX_FD_SELF;
}

static const struct device_ops null_ops = {
	.rx_fd = null_rx_fd,
	.tx_node = "null-tx",
	.format_hw = null_format_hw,
	.rx_burst = null_rx_burst,
	.tx_burst = null_tx_burst,
	.destroy = null_destroy,
};

static struct device *null_create(const void *conf, char *err, size_t errlen)
{
	const struct null_conf *c = conf;
	struct null_dev *nd = aligned_alloc(64, ROUND_UP(sizeof(*nd), 64));
	if (!nd) {
		snprintf(err, errlen, "null: out of memory");
		return NULL;
	}
	memset(nd, 0, sizeof(*nd));
	nd->dev.ops = &null_ops;
	nd->dev.n_rx_queues = (uint16_t)c->rx_queues;
	nd->dev.n_tx_queues = (uint16_t)c->tx_queues;
	nd->rx_recycle = c->rx_recycle;
	nd->rx_size = (uint16_t)c->rx_size;
	return &nd->dev;
}

static const struct dev_driver null_driver = {
	.name = "null",
	.conf = &null_conf_driver,
	.create = null_create,
};
DEV_DRIVER_REGISTER(null_driver)
