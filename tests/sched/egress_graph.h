/* The sched-egress graph fixture of tests/sched (test_sched_nodes.c,
 * test_hqos_nodes.c): the whole registered graph plus a test input node
 * (test-tx-source) that hands the staged packets to interface-output, a
 * test device e0 (served by null-tx) whose transmissions the suite records,
 * and thread 0's timer service on a clock the test sets; expiries run when
 * the test advances it. The suite defines MAX_REC, MS, err[256] and g
 * before including this file, and egress_record(bi) (one sent packet:
 * record it and count it in n_sent). */
#ifndef SLUICE_TESTS_SCHED_EGRESS_GRAPH_H
#define SLUICE_TESTS_SCHED_EGRESS_GRAPH_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "sched/timer.h"

static uint64_t sim_now;
static struct timer_service *ts;
static struct device *dev;
static uint32_t n_sent; /* written by the sending thread, read with acquire */
static uint32_t staged[FRAME_SIZE], n_staged;

static void egress_record(uint32_t bi);

static uint32_t stage_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	if (rt->thread_index != 0) /* the staged packets are thread 0's */
		return 0;
	uint32_t n = n_staged;
	if (n)
		node_enqueue(rt, 0, staged, n);
	n_staged = 0;
	return n;
}

static const struct node_reg stage_egress = {
	.name = "test-tx-source", .type = NODE_TYPE_INPUT, .fn = stage_fn, .n_next = 1,
	.next_nodes = { "interface-output" },
};

static uint64_t sim_clock(void *arg)
{
	(void)arg;
	return sim_now;
}

static uint32_t tdev_rx(struct device *d, uint16_t q, uint32_t *bi, uint32_t n)
{
	(void)d, (void)q, (void)bi, (void)n;
	return 0;
}

static uint32_t tdev_tx(struct device *d, uint16_t q, const uint32_t *bi, uint32_t n)
{
	(void)d, (void)q;
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_lt(n_sent, MAX_REC);
		egress_record(bi[i]);
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

static struct device *tdev_create(const char *name)
{
	struct device *d = aligned_alloc(64, ROUND_UP(sizeof(*d), 64));
	ck_assert_ptr_nonnull(d);
	memset(d, 0, sizeof(*d));
	d->ops = &tdev_ops;
	d->driver = dev_driver_find("null"); /* served by null-tx */
	d->n_tx_queues = 1;
	ck_assert_int_eq(dev_register(d, name), 0);
	ck_assert_int_eq(dev_set_admin_up(d, true), 0);
	return d;
}

/* g: the registered graph plus the source, attached to the devices. */
static void egress_graph_build(void)
{
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_msg(graph_add_registered(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_ge(graph_add_node(g, &stage_egress, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(dev_graph_attach(g, err, sizeof(err)) == 0, "%s", err);
}

/* The graph, the test device e0, thread 0's timer service on the
 * simulated clock (at 1 ms); nothing sent or staged. */
static void egress_graph_up(void)
{
	egress_graph_build();
	struct timer_config c;
	timer_config_default(&c);
	c.max_timers = 1024;
	sim_now = 1 * MS;
	ts = timer_service_create(&c, sim_clock, NULL, err, sizeof(err));
	ck_assert_msg(ts, "%s", err);
	ck_assert_int_eq(timer_service_bind(ts, g, 0), 0);
	graph_thread_set_user(graph_thread_get(g, 0), ts);
	dev = tdev_create("e0");
	n_sent = n_staged = 0;
}

static void egress_graph_down(void)
{
	graph_thread_set_user(graph_thread_get(g, 0), NULL);
	timer_service_destroy(ts);
	dev_graph_detach(g);
	graph_destroy(g);
}

/* The clock moves to t; due timers run and what they release is sent. */
static void advance(uint64_t t)
{
	sim_now = t;
	timer_advance(ts, t);
	graph_dispatch_pending(graph_thread_get(g, 0));
}

#endif
