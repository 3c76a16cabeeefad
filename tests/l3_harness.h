/* Test harness for the L3 node suites (tests/ip4, tests/ip6): the whole
 * registered graph between a test input node, which hands frames queued by
 * inject() to ethernet-input, and a test driver under the test interfaces,
 * which records the exact frames interface-output gives it. The including
 * file defines `g` (its graph) before including this. */
#ifndef SLUICE_TESTS_L3_HARNESS_H
#define SLUICE_TESTS_L3_HARNESS_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "graph/node.h"

/* ---- the test driver: records what it is given ---- */

#define TX_MAX 64

struct tx_pkt {
	uint32_t if_index;
	uint32_t len;
	uint8_t bytes[4096]; /* a chained packet is copied whole */
};
static struct tx_pkt *txs;
static uint32_t n_tx;

static uint32_t tdev_rx(struct device *d, uint16_t q, uint32_t *bi, uint32_t n)
{
	(void)d, (void)q, (void)bi, (void)n;
	return 0;
}

static uint32_t tdev_tx(struct device *d, uint16_t q, const uint32_t *bi, uint32_t n)
{
	(void)q;
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		ck_assert_uint_lt(n_tx, TX_MAX);
		txs[n_tx].if_index = d->index;
		buffer_chain_copy_out(b, txs[n_tx].bytes, sizeof(txs[n_tx].bytes), &txs[n_tx].len);
		n_tx++;
	}
	buffer_free(bi, n);
	return n;
}

static void tdev_destroy(struct device *d)
{
	free(d);
}

static const struct device_ops tdev_ops = {
	.tx_node = "null-tx", .rx_burst = tdev_rx, .tx_burst = tdev_tx, .destroy = tdev_destroy
};

/* A test interface with that MAC, up. interface-output hands packets to the
 * tx node the ops name: null-tx, which serves the null driver's
 * interfaces, calls these ops like any driver's. */
static struct device *tdev_create(const char *name, const uint8_t mac[6])
{
	struct device *d = aligned_alloc(64, ROUND_UP(sizeof(*d), 64));
	ck_assert_ptr_nonnull(d);
	memset(d, 0, sizeof(*d));
	d->ops = &tdev_ops;
	d->driver = dev_driver_find("null");
	d->n_tx_queues = 1;
	memcpy(d->mac, mac, 6);
	ck_assert_int_eq(dev_register(d, name), 0);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	return d;
}

/* ---- the test input: frames queued by inject() ---- */

static uint32_t inq[FRAME_SIZE];
static uint32_t n_inq;

static uint32_t tin_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	uint32_t n = n_inq;
	node_enqueue(rt, 0, inq, n);
	n_inq = 0;
	return n;
}

static const struct node_reg tin_node = {
	.name = "l3-test-input",
	.type = NODE_TYPE_INPUT,
	.fn = tin_fn,
	.n_next = 1,
	.next_nodes = { "ethernet-input" },
};
NODE_REGISTER(tin_node)

/* Queue a frame as received on d. */
static void inject(struct device *d, const uint8_t *bytes, uint32_t len)
{
	uint32_t bi = buffer_from_bytes(bytes, len, -1);
	ck_assert_uint_ne(bi, BUFFER_INVALID);
	buffer_get(bi)->rx_if = d->index;
	ck_assert_uint_lt(n_inq, FRAME_SIZE);
	inq[n_inq++] = bi;
}

static void poll_n(uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		graph_main_poll(g);
}

/* The i-th frame sent left by d and is exactly want. */
static void expect_tx(uint32_t i, struct device *d, const uint8_t *want, uint32_t len)
{
	ck_assert_uint_gt(n_tx, i);
	ck_assert_uint_eq(txs[i].if_index, d->index);
	ck_assert_uint_eq(txs[i].len, len);
	for (uint32_t k = 0; k < len; k++)
		ck_assert_msg(txs[i].bytes[k] == want[k], "tx %u byte %u: %02x, want %02x", i, k, txs[i].bytes[k],
			      want[k]);
}

/* The count of node's error whose string is what (the suite's graph g). */
static inline uint64_t l3_error_count(const char *node, const char *what)
{
	int i = graph_node_index(g, node);
	ck_assert_int_ge(i, 0);
	const struct node_reg *r = node_registry_find(node);
	ck_assert_ptr_nonnull(r);
	for (uint16_t c = 0; c < r->n_errors; c++)
		if (!strcmp(r->error_strings[c], what))
			return graph_node_error_count(g, (uint32_t)i, c);
	ck_abort_msg("%s has no error '%s'", node, what);
	return 0;
}

/* ---- a graph of every registered node, and its end ---- */

/* Buffers (n of them, 4 KB pages), the recorder, and the whole registered
 * graph attached to the devices; a failure's reason goes to why. */
static inline void l3_graph_up(uint32_t n_buffers, char *why, size_t why_len)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = n_buffers;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, why, why_len) == 0, "%s", why);
	txs = calloc(TX_MAX, sizeof(*txs));
	n_tx = n_inq = 0;
	g = graph_create(NULL, why, why_len);
	ck_assert_msg(g, "%s", why);
	ck_assert_msg(graph_add_registered(g, why, why_len) == 0, "%s", why);
	ck_assert_msg(graph_build(g, why, why_len) == 0, "%s", why);
	ck_assert_msg(dev_graph_attach(g, why, why_len) == 0, "%s", why);
}

/* The graph, the devices, the family's state (family_free) and the
 * buffers gone, none of them left in use. */
static inline void l3_graph_down(void (*family_free)(void))
{
	dev_graph_detach(g);
	graph_destroy(g);
	g = NULL;
	dev_delete_all();
	family_free();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_thread_unregister();
	buffer_main_free();
	free(txs);
}

#endif
