/* A driver that lives in its own folder and is named by one meson line
 * only (testdrv, this folder) gets its "testdrv-input" and "testdrv-tx"
 * nodes in a graph built from the registry, receives through the first and
 * sends through the second: exact frames and counters, and what its tx
 * leaves counted as dropped by the tx node. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "tests/check_run.h"
#include "tests/graph_fixture.h"
#include "tests/drivers/testdrv/testdrv.h"

#define N_FRAMES 10

static struct graph *g;
static char err[256];

static void setup(void)
{
	fixture_buffers_up(4096);
	g = fixture_graph_up();
}

static void teardown(void)
{
	fixture_graph_down(g);
	g = NULL;
	fixture_buffers_down();
}

static struct device *create(const char *name, const char *const *words, uint32_t n)
{
	struct device *d = dev_create(name, "testdrv", words, n, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	return d;
}

static void run(void)
{
	for (uint32_t idle = 0, loops = 0; idle < 3 && loops < 1000; loops++)
		idle = graph_main_poll(g) ? 0 : idle + 1;
}

static int node(const char *name)
{
	int i = graph_node_index(g, name);
	ck_assert_msg(i >= 0, "no node %s in the graph", name);
	return i;
}

/* Frame i: broadcast, 60 + i bytes, its bytes a pattern of i. */
static uint16_t frame(uint32_t i, uint8_t *p)
{
	uint16_t len = (uint16_t)(60 + i);
	memset(p, 0xff, 6);
	for (uint16_t k = 6; k < len; k++)
		p[k] = (uint8_t)(i * 31 + k);
	p[12] = 0x88; /* an ethertype nothing above takes: xconnect only */
	p[13] = 0xb5;
	return len;
}

/* t0 -> l2 xconnect -> t1: N_FRAMES injected into t0; returns their bytes. */
static uint64_t send_through(struct device *t0, struct device *t1)
{
	uint8_t p[TESTDRV_MAX_LEN];
	uint64_t bytes = 0;
	ck_assert_int_eq(dev_set_xconnect(t0, t1), 0);
	ck_assert_int_eq(dev_set_admin_up(t0, true), 0);
	ck_assert_int_eq(dev_set_admin_up(t1, true), 0);
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		uint16_t len = frame(i, p);
		bytes += len;
		ck_assert_int_eq(testdrv_inject(t0, p, len), 0);
	}
	run();
	return bytes;
}

START_TEST(nodes_from_the_driver_registry)
{
	const struct dev_driver *drv = dev_driver_find("testdrv");
	ck_assert_ptr_nonnull(drv);
	const struct node_reg *in = node_registry_find("testdrv-input");
	const struct node_reg *tx = node_registry_find("testdrv-tx");
	ck_assert_ptr_nonnull(in);
	ck_assert_ptr_nonnull(tx);
	ck_assert_ptr_eq(in->context, drv);
	ck_assert_ptr_eq(tx->context, drv);
	ck_assert_int_eq(in->type, NODE_TYPE_INPUT);
	ck_assert_int_eq(tx->type, NODE_TYPE_INTERNAL);
	node("testdrv-input");
	node("testdrv-tx");
	/* The real drivers' nodes keep their names. */
	const char *names[] = { "null-input", "null-tx", "pcap-input", "pcap-tx", "af-packet-input",
				"af-packet-tx", "ixgbe-input", "ixgbe-tx", "i40e-input", "i40e-tx" };
	for (uint32_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		node(names[i]);
	/* No node for the templates themselves. */
	ck_assert_ptr_null(node_registry_find("device-input"));
	ck_assert_ptr_null(node_registry_find("device-tx"));
}
END_TEST

START_TEST(rx_and_tx_exact)
{
	struct device *t0 = create("t0", NULL, 0);
	struct device *t1 = create("t1", NULL, 0);
	uint64_t bytes = send_through(t0, t1);
	ck_assert_uint_eq(testdrv_n_sent(t1), N_FRAMES);
	uint8_t want[TESTDRV_MAX_LEN];
	for (uint32_t i = 0; i < N_FRAMES; i++) {
		uint16_t len, want_len = frame(i, want);
		const uint8_t *got = testdrv_sent(t1, i, &len);
		ck_assert_ptr_nonnull(got);
		ck_assert_uint_eq(len, want_len);
		ck_assert_mem_eq(got, want, len);
	}
	ck_assert_uint_eq(testdrv_n_sent(t0), 0);
	struct dev_counters c0, c1;
	dev_counters_get(t0, &c0);
	dev_counters_get(t1, &c1);
	ck_assert_uint_eq(c0.rx_packets, N_FRAMES);
	ck_assert_uint_eq(c0.rx_bytes, bytes);
	ck_assert_uint_eq(c1.tx_packets, N_FRAMES);
	ck_assert_uint_eq(c1.tx_bytes, bytes);
	ck_assert_uint_eq(c1.tx_dropped, 0);
	/* Through the driver's own nodes. */
	ck_assert_uint_eq(graph_arc_packets(g, (uint32_t)node("testdrv-input"), 0), N_FRAMES);
	struct node_stats st;
	ck_assert_int_eq(graph_node_stats(g, 0, (uint32_t)node("testdrv-tx"), &st), 0);
	ck_assert_uint_eq(st.vectors, N_FRAMES);
}
END_TEST

START_TEST(tx_leaves_are_dropped)
{
	const char *words[] = { "tx-limit", "3" };
	struct device *t0 = create("t0", NULL, 0);
	struct device *t1 = create("t1", words, 2);
	send_through(t0, t1);
	ck_assert_uint_eq(testdrv_n_sent(t1), 3);
	struct dev_counters c1;
	dev_counters_get(t1, &c1);
	ck_assert_uint_eq(c1.tx_packets, 3);
	ck_assert_uint_eq(c1.tx_bytes, 60 + 61 + 62);
	ck_assert_uint_eq(c1.tx_dropped, N_FRAMES - 3);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)node("testdrv-tx"), 0), N_FRAMES - 3);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("testdrv");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, nodes_from_the_driver_registry);
	tcase_add_test(tc, rx_and_tx_exact);
	tcase_add_test(tc, tx_leaves_are_dropped);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
