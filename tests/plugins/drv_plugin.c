/* A plugin that adds an interface driver, `plugtest`: its startup.conf
 * keys come with it (interfaces { X { driver plugtest tx-queues 1 } }),
 * the engine makes its plugtest-input and plugtest-tx nodes from the
 * driver registry's templates, and tx frees what it is given (the
 * interface's TX counters say how many). Nothing arrives on rx. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app/plugin.h"

struct plugtest_conf {
	uint32_t tx_queues;
};

static const struct conf_key plugtest_keys[] = {
	{ .name = "tx-queues", .type = CONF_UINT, .def = "1", .min = 1, .max = DEV_MAX_QUEUES,
	  CONF_FIELD(struct plugtest_conf, tx_queues), .doc = "tx queues" },
	{ 0 },
};

static const struct conf_driver plugtest_conf_driver = {
	.name = "plugtest",
	.doc = "a plugin's driver: tx frees",
	.keys = plugtest_keys,
	.size = sizeof(struct plugtest_conf),
};

static uint32_t plugtest_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	(void)dev;
	(void)queue;
	(void)bi;
	(void)n;
	return 0;
}

static uint32_t plugtest_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	(void)dev;
	(void)queue;
	buffer_free(bi, n);
	return n;
}

static void plugtest_destroy(struct device *dev)
{
	free(dev);
}

static int plugtest_rx_fd(struct device *dev, uint16_t queue)
{
	(void)dev;
	(void)queue;
	return DEV_RX_FD_SELF;
}

static const struct device_ops plugtest_ops = {
	.rx_fd = plugtest_rx_fd,
	.tx_node = "plugtest-tx",
	.rx_burst = plugtest_rx_burst,
	.tx_burst = plugtest_tx_burst,
	.destroy = plugtest_destroy,
};

static struct device *plugtest_create(const void *conf, char *err, size_t errlen)
{
	const struct plugtest_conf *c = conf;
	struct device *dev = aligned_alloc(64, ROUND_UP(sizeof(*dev), 64));
	if (!dev) {
		snprintf(err, errlen, "plugtest: out of memory");
		return NULL;
	}
	memset(dev, 0, sizeof(*dev));
	dev->ops = &plugtest_ops;
	dev->n_rx_queues = 1;
	dev->n_tx_queues = (uint16_t)c->tx_queues;
	return dev;
}

static const struct dev_driver plugtest_driver = {
	.name = "plugtest",
	.conf = &plugtest_conf_driver,
	.create = plugtest_create,
};
DEV_DRIVER_REGISTER(plugtest_driver)

SLUICE_PLUGIN(.name = "plugtest", .version = "0.1", .description = "a driver from a plugin");
