/* testdrv (testdrv.h): rx hands up what the test injected, tx copies what
 * it is given into a list the test reads and frees the buffers, taking at
 * most tx-limit packets per burst (the rest is left to the caller, as a
 * full ring would).
 *
 *   t0 { driver testdrv  tx-limit 256 }
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/buffer.h"
#include "tests/drivers/testdrv/testdrv.h"

struct testdrv_conf {
	uint32_t tx_limit;
};

static const struct conf_key testdrv_keys[] = {
	{ .name = "tx-limit", .type = CONF_UINT, .def = "256", .min = 0, .max = 256,
	  CONF_FIELD(struct testdrv_conf, tx_limit), .doc = "packets tx takes per burst" },
	{ 0 },
};

static const struct conf_driver testdrv_conf_driver = {
	.name = "testdrv",
	.doc = "tests only: rx what the test injects, tx into a list",
	.keys = testdrv_keys,
	.size = sizeof(struct testdrv_conf),
};

struct testdrv_pkt {
	uint16_t len;
	uint8_t bytes[TESTDRV_MAX_LEN];
};

struct testdrv_dev {
	struct device dev;
	uint32_t tx_limit;
	uint32_t rx_head, rx_tail; /* injected, not yet received: [head, tail) */
	uint32_t n_sent;
	struct testdrv_pkt rx[TESTDRV_MAX_PKTS];
	struct testdrv_pkt sent[TESTDRV_MAX_PKTS];
};

#define TD(d) container_of(d, struct testdrv_dev, dev)

int testdrv_inject(struct device *dev, const uint8_t *bytes, uint16_t len)
{
	struct testdrv_dev *td = TD(dev);
	if (td->rx_tail == TESTDRV_MAX_PKTS || len > TESTDRV_MAX_LEN)
		return -ENOSPC;
	struct testdrv_pkt *p = &td->rx[td->rx_tail++];
	p->len = len;
	memcpy(p->bytes, bytes, len);
	return 0;
}

const uint8_t *testdrv_sent(const struct device *dev, uint32_t i, uint16_t *len)
{
	const struct testdrv_dev *td = container_of(dev, const struct testdrv_dev, dev);
	if (i >= td->n_sent)
		return NULL;
	*len = td->sent[i].len;
	return td->sent[i].bytes;
}

uint32_t testdrv_n_sent(const struct device *dev)
{
	return container_of(dev, const struct testdrv_dev, dev)->n_sent;
}

static uint32_t testdrv_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
{
	struct testdrv_dev *td = TD(dev);
	if (queue != 0)
		return 0;
	n = MIN(n, td->rx_tail - td->rx_head);
	n = buffer_alloc(bi, n, -1);
	for (uint32_t i = 0; i < n; i++) {
		const struct testdrv_pkt *p = &td->rx[td->rx_head++];
		struct buffer *b = buffer_get(bi[i]);
		memcpy(buffer_data(b), p->bytes, p->len);
		b->current_length = p->len;
	}
	if (td->rx_head == td->rx_tail)
		td->rx_head = td->rx_tail = 0;
	return n;
}

static uint32_t testdrv_tx_burst(struct device *dev, uint16_t queue, const uint32_t *bi, uint32_t n)
{
	(void)queue;
	struct testdrv_dev *td = TD(dev);
	n = MIN(n, td->tx_limit);
	for (uint32_t i = 0; i < n && td->n_sent < TESTDRV_MAX_PKTS; i++) {
		struct buffer *b = buffer_get(bi[i]);
		struct testdrv_pkt *p = &td->sent[td->n_sent++];
		p->len = (uint16_t)MIN(b->current_length, TESTDRV_MAX_LEN);
		memcpy(p->bytes, buffer_data(b), p->len);
	}
	buffer_free(bi, n);
	return n;
}

static void testdrv_destroy(struct device *dev)
{
	free(TD(dev));
}

static const struct device_ops testdrv_ops = {
	.tx_node = "testdrv-tx",
	.rx_burst = testdrv_rx_burst,
	.tx_burst = testdrv_tx_burst,
	.destroy = testdrv_destroy,
};

static struct device *testdrv_create(const void *conf, char *err, size_t errlen)
{
	const struct testdrv_conf *c = conf;
	struct testdrv_dev *td = aligned_alloc(64, ROUND_UP(sizeof(*td), 64));
	if (!td) {
		snprintf(err, errlen, "testdrv: out of memory");
		return NULL;
	}
	memset(td, 0, sizeof(*td));
	td->dev.ops = &testdrv_ops;
	td->dev.n_rx_queues = 1;
	td->dev.n_tx_queues = 1;
	td->tx_limit = c->tx_limit;
	return &td->dev;
}

static const struct dev_driver testdrv_driver = {
	.name = "testdrv",
	.conf = &testdrv_conf_driver,
	.create = testdrv_create,
};
DEV_DRIVER_REGISTER(testdrv_driver)
