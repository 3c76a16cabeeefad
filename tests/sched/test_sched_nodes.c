/* sched-ingress and sched-egress in a graph, on a simulated clock.
 *
 * sched-ingress: a test input node hands it one frame of exact packets and
 * a sink standing in for ethernet-input records the order they leave in
 * and the class each carries. sched-egress: the whole registered graph, a
 * test input node handing packets to interface-output for a test device
 * (served by null-tx) that records what it sends and when, and thread 0's
 * timer service on a clock the test sets; expiries run when the test
 * advances it. Every case ends with every buffer back in its pool.
 */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "nodes/sched/sched_io.h"
#include "tests/check_run.h"

#define US 1000ull
#define MS 1000000ull
#define MAX_REC 64

static char err[256];
static struct graph *g;

/* ---- packets ---- */

enum { TCP = 6, UDP = 17, ICMP = 1 };

/* A 64-byte frame: IPv4 with tos and proto (proto 0: ARP instead), one
 * VLAN tag when vlan; byte 60 is the tag the test follows it by. */
static uint32_t frame(uint8_t tag, uint8_t proto, uint8_t tos, bool vlan, uint32_t rx_if, uint32_t tx_if)
{
	uint8_t p[64] = { 0 };
	uint32_t off = 12;
	if (vlan) {
		p[off] = 0x81, p[off + 1] = 0x00, p[off + 3] = 5;
		off += 4;
	}
	p[off] = 0x08, p[off + 1] = proto ? 0x00 : 0x06;
	off += 2;
	if (proto) {
		p[off] = 0x45;
		p[off + 1] = tos;
		p[off + 9] = proto;
	}
	p[60] = tag;
	uint32_t bi = buffer_from_bytes(p, sizeof(p), -1);
	ck_assert_uint_ne(bi, BUFFER_INVALID);
	buffer_get(bi)->rx_if = rx_if;
	buffer_get(bi)->tx_if = tx_if;
	return bi;
}

/* A 64-byte frame: IPv6 with traffic class tc, next header nh and a
 * flow label of all ones (its bits sit beside the class's), one VLAN tag
 * when vlan; byte 60 is the tag. */
static uint32_t frame6(uint8_t tag, uint8_t nh, uint8_t tc, bool vlan)
{
	uint8_t p[64] = { 0 };
	uint32_t off = 12;
	if (vlan) {
		p[off] = 0x81, p[off + 1] = 0x00, p[off + 3] = 5;
		off += 4;
	}
	p[off] = 0x86, p[off + 1] = 0xdd;
	off += 2;
	p[off] = (uint8_t)(0x60 | tc >> 4);
	p[off + 1] = (uint8_t)(tc << 4 | 0x0f);
	p[off + 2] = p[off + 3] = 0xff;
	p[off + 6] = nh;
	p[off + 7] = 64;
	p[60] = tag;
	uint32_t bi = buffer_from_bytes(p, sizeof(p), -1);
	ck_assert_uint_ne(bi, BUFFER_INVALID);
	return bi;
}

static uint8_t tag_of(uint32_t bi)
{
	return buffer_data(buffer_get(bi))[60];
}

/* ---- the staged input, the egress graph (tests/sched/egress_graph.h) ---- */

#include "tests/sched/egress_graph.h"

/* ---- sched-ingress ---- */

static uint32_t sunk[MAX_REC], n_sunk;

static uint32_t sink_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		ck_assert_uint_lt(n_sunk, MAX_REC);
		sunk[n_sunk++] = f->buffers[i];
	}
	return f->n_vectors;
}

static const struct node_reg stage_ingress = {
	.name = "test-rx", .type = NODE_TYPE_INPUT, .fn = stage_fn, .n_next = 1, .next_nodes = { "sched-ingress" },
};
static const struct node_reg eth_sink = { .name = "ethernet-input", .type = NODE_TYPE_INTERNAL, .fn = sink_fn };

static void fixture_up(void)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	n_sunk = n_staged = 0;
}

static void fixture_down(void)
{
	sched_io_free_all();
	dev_delete_all();
	buffer_thread_unregister();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}

static int set_class(const char *name, uint8_t prio, uint16_t weight, enum sched_match m, uint32_t v)
{
	struct sched_class c = { .priority = prio, .weight = weight, .match = (uint8_t)m, .value = v };
	snprintf(c.name, sizeof(c.name), "%s", name);
	return sched_io_class_set(g, &c, err, sizeof(err));
}

/* Classes by first match in definition order; the frame leaves priority
 * by priority, weighted turns within one, arrival order within a class. */
START_TEST(test_ingress_order)
{
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, node_registry_find("sched-ingress"), err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, node_registry_find("error-drop"), err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &stage_ingress, err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &eth_sink, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(set_class("ef", 0, 1, SCHED_MATCH_DSCP, 46), 1);
	ck_assert_int_eq(set_class("tcp", 3, 2, SCHED_MATCH_PROTOCOL, TCP), 2);
	ck_assert_int_eq(set_class("udp", 3, 1, SCHED_MATCH_PROTOCOL, UDP), 3);
	ck_assert_int_eq(set_class("port7", 5, 1, SCHED_MATCH_INTERFACE, 7), 4);
	ck_assert_int_eq(set_class("bad", 8, 1, SCHED_MATCH_DSCP, 1), -EINVAL);
	ck_assert_int_eq(set_class("bad", 1, 1, SCHED_MATCH_DSCP, 64), -EINVAL);
	ck_assert_int_eq(set_class("bad", 1, 0, SCHED_MATCH_DSCP, 1), -EINVAL);
	ck_assert_uint_eq(sched_class_table.n, 4);
	const struct {
		uint8_t proto, dscp;
		bool vlan;
		uint32_t rx_if, want_class;
	} in[] = {
		{ TCP, 0, false, 0, 2 }, { UDP, 0, false, 0, 3 },  { ICMP, 0, false, 0, 0 }, { ICMP, 46, false, 0, 1 },
		{ TCP, 0, false, 0, 2 }, { TCP, 0, false, 0, 2 },  { UDP, 0, false, 0, 3 },  { TCP, 46, false, 0, 1 },
		{ 0, 0, false, 7, 4 },   { UDP, 10, true, 0, 3 },
	};
	for (uint32_t i = 0; i < ARRAY_LEN(in); i++)
		staged[n_staged++] = frame((uint8_t)i, in[i].proto, (uint8_t)(in[i].dscp << 2), in[i].vlan, in[i].rx_if, 0);
	graph_main_poll(g);
	const uint8_t want[] = { 3, 7, 0, 4, 1, 5, 6, 9, 8, 2 };
	ck_assert_uint_eq(n_sunk, ARRAY_LEN(want));
	for (uint32_t i = 0; i < n_sunk; i++) {
		uint8_t t = tag_of(sunk[i]);
		ck_assert_msg(t == want[i], "position %u: packet %u, expected %u", i, t, want[i]);
		ck_assert_uint_eq(sched_buffer_class(buffer_get(sunk[i])), in[t].want_class);
	}
	const struct sched_ingress_counts {
		uint64_t classified[SCHED_MAX_CLASSES];
	} *counts = graph_node_runtime(g, 0, (uint32_t)graph_node_index(g, "sched-ingress"))->data;
	const uint64_t want_counts[] = { 1, 2, 3, 3, 1 };
	for (uint32_t c = 0; c < ARRAY_LEN(want_counts); c++)
		ck_assert_uint_eq(counts->classified[c], want_counts[c]);
	/* One class only: the frame goes on whole, in order. */
	ck_assert_int_eq(sched_io_class_remove(g, "tcp"), 0);
	ck_assert_int_eq(sched_io_class_remove(g, "tcp"), -ENOENT);
	buffer_free(sunk, n_sunk);
	n_sunk = 0;
	for (uint32_t i = 0; i < 5; i++)
		staged[n_staged++] = frame((uint8_t)i, TCP, 0, false, 0, 0);
	graph_main_poll(g);
	ck_assert_uint_eq(n_sunk, 5);
	for (uint32_t i = 0; i < 5; i++) {
		ck_assert_uint_eq(tag_of(sunk[i]), i);
		ck_assert_uint_eq(sched_buffer_class(buffer_get(sunk[i])), 0);
	}
	buffer_free(sunk, n_sunk);
	graph_destroy(g);
}
END_TEST

/* IPv6: `match dscp` reads the Traffic Class's six DSCP bits (RFC 8200
 * §7), `match protocol` the fixed header's Next Header; version 4 under
 * 0x86dd, and a frame too short for the fixed header, match neither. */
START_TEST(test_ingress_ip6)
{
	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, node_registry_find("sched-ingress"), err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, node_registry_find("error-drop"), err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &stage_ingress, err, sizeof(err)), 0);
	ck_assert_int_ge(graph_add_node(g, &eth_sink, err, sizeof(err)), 0);
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_int_eq(set_class("ef", 0, 1, SCHED_MATCH_DSCP, 46), 1);
	ck_assert_int_eq(set_class("af11", 1, 1, SCHED_MATCH_DSCP, 10), 2);
	ck_assert_int_eq(set_class("udp", 2, 1, SCHED_MATCH_PROTOCOL, UDP), 3);
	const struct {
		uint8_t nh, dscp, ecn;
		bool vlan;
		uint32_t want_class;
	} in[] = {
		{ UDP, 0, 0, false, 3 },  { TCP, 46, 0, false, 1 }, { TCP, 46, 3, false, 1 }, { TCP, 10, 1, true, 2 },
		{ TCP, 47, 0, false, 0 }, { UDP, 10, 0, false, 2 }, { 58, 0, 3, false, 0 },
	};
	for (uint32_t i = 0; i < ARRAY_LEN(in); i++)
		staged[n_staged++] = frame6((uint8_t)i, in[i].nh, (uint8_t)(in[i].dscp << 2 | in[i].ecn), in[i].vlan);
	uint32_t v4 = frame6(ARRAY_LEN(in), UDP, 46 << 2, false); /* version 4 under 0x86dd */
	buffer_data(buffer_get(v4))[14] = 0x4b;
	staged[n_staged++] = v4;
	graph_main_poll(g);
	ck_assert_uint_eq(n_sunk, ARRAY_LEN(in) + 1);
	for (uint32_t i = 0; i < n_sunk; i++) {
		uint8_t t = tag_of(sunk[i]);
		uint32_t want = t < ARRAY_LEN(in) ? in[t].want_class : 0;
		ck_assert_msg(sched_buffer_class(buffer_get(sunk[i])) == want, "packet %u: class %u, want %u", t,
			      sched_buffer_class(buffer_get(sunk[i])), want);
	}
	/* Priority order: ef (1, 2), af11 (3, 5), udp (0), none (4, 6, 7). */
	const uint8_t order[] = { 1, 2, 3, 5, 0, 4, 6, 7 };
	for (uint32_t i = 0; i < n_sunk; i++)
		ck_assert_uint_eq(tag_of(sunk[i]), order[i]);
	buffer_free(sunk, n_sunk);
	n_sunk = 0;
	graph_destroy(g);
}
END_TEST

/* ---- sched-egress ---- */

/* sim_now 0: tdev_tx records real time. */
static struct {
	uint8_t tag;
	uint64_t at;
	uint32_t thread;
} sent[MAX_REC];

static void egress_record(uint32_t bi)
{
	struct graph_thread *self = graph_thread_self();
	sent[n_sent].tag = tag_of(bi);
	sent[n_sent].at = sim_now ? sim_now : timer_clock_ns(NULL);
	sent[n_sent].thread = self ? graph_thread_index(self) : UINT32_MAX;
	__atomic_store_n(&n_sent, n_sent + 1, __ATOMIC_RELEASE);
}

/* The egress graph; max_held packets held per interface at most. */
static void egress_up(uint32_t max_held)
{
	egress_graph_up();
	sched_io_set_max_held(max_held);
}

static void egress_down(void)
{
	egress_graph_down();
}

static void send_now(const uint8_t *tags, uint32_t n, uint32_t class_id)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = frame(tags[i], UDP, 0, false, 0, dev->index);
		buffer_get(bi)->current_length = 1000;
		sched_buffer_set_class(buffer_get(bi), class_id);
		staged[n_staged++] = bi;
	}
	graph_main_poll(g);
}

/* A 5 ms delay: nothing leaves before, all leave at 5 ms, by the timer. */
START_TEST(test_egress_delay)
{
	egress_up(64);
	ck_assert_int_eq(sched_io_set_delay(g, dev->index, 5 * MS, 0, err, sizeof(err)), 0);
	ck_assert_int_eq(sched_io_set_delay(g, dev->index, 1 * MS, 2 * MS, err, sizeof(err)), -EINVAL);
	send_now((const uint8_t[]){ 0, 1, 2 }, 3, 0);
	ck_assert_uint_eq(n_sent, 0);
	ck_assert_uint_eq(sched_egress_held(sched_io_ifs[dev->index].e), 3);
	advance(6 * MS - 1);
	ck_assert_uint_eq(n_sent, 0);
	advance(6 * MS);
	ck_assert_uint_eq(n_sent, 3);
	for (uint32_t i = 0; i < 3; i++) {
		ck_assert_uint_eq(sent[i].tag, i);
		ck_assert_uint_eq(sent[i].at, 6 * MS);
	}
	/* Off: packets pass at once. */
	ck_assert_int_eq(sched_io_set_delay(g, dev->index, 0, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(sched_egress_on[dev->index], 0);
	send_now((const uint8_t[]){ 9 }, 1, 0);
	ck_assert_uint_eq(n_sent, 4);
	egress_down();
}
END_TEST

/* Impairment in the graph: `loss random 100%` sends every packet to
 * error-drop under "impairment: lost (loss random)" (error 6 of
 * sched-egress), nothing to the interface, the pool whole; then
 * `duplicate 100%` sends each packet twice, the copy first. */
START_TEST(test_egress_impair)
{
	egress_up(64);
	struct sched_impair_config c = { .loss_model = SCHED_IMPAIR_LOSS_RANDOM, .loss = SCHED_IMPAIR_P_ONE };
	ck_assert_int_eq(sched_io_set_impair(g, dev->index, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(sched_egress_on[dev->index], 1);
	send_now((const uint8_t[]){ 0, 1, 2 }, 3, 0);
	ck_assert_uint_eq(n_sent, 0);
	int node = graph_node_index(g, "sched-egress");
	ck_assert_int_ge(node, 0);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)node, 6), 3);
	struct sched_impair_config d = { .duplicate = SCHED_IMPAIR_P_ONE };
	ck_assert_int_eq(sched_io_set_impair(g, dev->index, &d, err, sizeof(err)), 0);
	send_now((const uint8_t[]){ 5, 6 }, 2, 0);
	ck_assert_uint_eq(n_sent, 4);
	ck_assert_uint_eq(sent[0].tag, 5);
	ck_assert_uint_eq(sent[1].tag, 5);
	ck_assert_uint_eq(sent[2].tag, 6);
	ck_assert_uint_eq(sent[3].tag, 6);
	struct sched_impair_config bad = { .loss = SCHED_IMPAIR_P_ONE + 1, .loss_model = SCHED_IMPAIR_LOSS_RANDOM };
	ck_assert_int_eq(sched_io_set_impair(g, dev->index, &bad, err, sizeof(err)), -EINVAL);
	ck_assert_int_eq(sched_io_set_impair(g, dev->index, NULL, err, sizeof(err)), 0);
	ck_assert_uint_eq(sched_egress_on[dev->index], 0);
	egress_down();
}
END_TEST

/* 8 Mbit/s (a byte a microsecond), bucket of one 1000-byte frame: bulk
 * leaves a frame a millisecond; an EF frame arriving later overtakes the
 * bulk still waiting and takes the next slot. */
START_TEST(test_egress_shaper_priority)
{
	egress_up(64);
	struct sched_class ef = { .name = "ef", .priority = 0, .weight = 1, .match = SCHED_MATCH_DSCP, .value = 46 };
	ck_assert_int_eq(sched_io_class_set(g, &ef, err, sizeof(err)), 1);
	ck_assert_int_eq(sched_io_set_shaper(g, dev->index, 8000000, 1000, err, sizeof(err)), 0);
	ck_assert_int_eq(sched_io_set_shaper(g, dev->index, 999, 1000, err, sizeof(err)), -EINVAL);
	send_now((const uint8_t[]){ 0, 1, 2, 3 }, 4, 0);
	ck_assert_uint_eq(n_sent, 1); /* the full bucket */
	advance(1 * MS + 300 * US);
	send_now((const uint8_t[]){ 100 }, 1, 1);
	ck_assert_uint_eq(n_sent, 1);
	for (uint64_t t = 2 * MS; t <= 5 * MS; t += 1 * MS) {
		advance(t - 1);
		advance(t);
	}
	const uint8_t want[] = { 0, 100, 1, 2, 3 };
	ck_assert_uint_eq(n_sent, ARRAY_LEN(want));
	for (uint32_t i = 0; i < n_sent; i++) {
		ck_assert_uint_eq(sent[i].tag, want[i]);
		ck_assert_uint_eq(sent[i].at, (i + 1) * MS);
	}
	struct sched_egress_stats st;
	sched_egress_stats(sched_io_ifs[dev->index].e, &st);
	ck_assert_uint_eq(st.released_class[1], 1);
	ck_assert_uint_eq(st.released_class[0], 4);
	egress_down();
}
END_TEST

/* max-held 2: the rest of a frame is dropped under the node's named error
 * and as TX-dropped; a packet still held at the end goes back to the pool
 * with the schedule. */
START_TEST(test_egress_max_held)
{
	egress_up(2);
	ck_assert_int_eq(sched_io_set_delay(g, dev->index, 10 * MS, 0, err, sizeof(err)), 0);
	send_now((const uint8_t[]){ 0, 1, 2, 3, 4 }, 5, 0);
	int node = graph_node_index(g, "sched-egress");
	ck_assert_int_ge(node, 0);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)node, 0), 3);
	struct dev_counters c;
	dev_counters_get(dev, &c);
	ck_assert_uint_eq(c.tx_dropped, 3);
	/* show buffers: the two held are the sched holder's, nobody else's. */
	struct buffer_attribution a;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	uint64_t held = 0;
	for (uint32_t i = 0; i < a.n_holdings; i++)
		if (strcmp(a.holdings[i].holder, "sched") == 0 && strcmp(a.holdings[i].where, "e0 egress held") == 0)
			held = a.holdings[i].n;
	ck_assert_uint_eq(held, 2);
	ck_assert_int_eq(a.n_unattributed, 0);
	buffer_attribution_free(&a);
	advance(11 * MS);
	ck_assert_uint_eq(n_sent, 2);
	send_now((const uint8_t[]){ 5 }, 1, 0); /* held when the test ends */
	egress_down();
}
END_TEST

/* One worker: the interface's owner is thread 1. Packets that thread 0
 * sends for it are handed over, held by thread 1's schedule and timer
 * (real time here: the services the daemon installs) and sent by thread 1
 * only, in order, no earlier than the delay. */
START_TEST(test_egress_owner_handoff)
{
	egress_graph_build();
	dev = tdev_create("e0"); /* before the worker polls the interface table */
	ck_assert_msg(graph_workers_start(g, NULL, 1, err, sizeof(err)) == 0, "%s", err);
	struct timer_config c;
	timer_config_default(&c);
	c.max_timers = 1024;
	ck_assert_int_eq(timer_services_install(g, &c, err, sizeof(err)), 0);
	sched_io_set_max_held(64);
	n_sent = 0;
	sim_now = 0;
	ck_assert_int_eq(sched_io_set_delay(g, dev->index, 2 * MS, 0, err, sizeof(err)), 0);
	ck_assert_uint_eq(sched_io_ifs[dev->index].owner, 1);
	ck_assert_ptr_nonnull(sched_io_ifs[dev->index].ring[0]);
	ck_assert_ptr_null(sched_io_ifs[dev->index].ring[1]);
	uint64_t t0 = timer_clock_ns(NULL);
	send_now((const uint8_t[]){ 0, 1, 2, 3 }, 4, 0);
	while (__atomic_load_n(&n_sent, __ATOMIC_ACQUIRE) < 4 && timer_clock_ns(NULL) - t0 < 2000 * MS)
		graph_main_poll(g);
	graph_workers_stop(g);
	ck_assert_uint_eq(n_sent, 4);
	for (uint32_t i = 0; i < 4; i++) {
		ck_assert_uint_eq(sent[i].tag, i);
		ck_assert_uint_eq(sent[i].thread, 1);
		ck_assert_uint_ge(sent[i].at, t0 + 2 * MS); /* never early */
	}
	int node = graph_node_index(g, "sched-egress");
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)node, 1), 0); /* no handoff drop */
	timer_services_uninstall(g);
	dev_graph_detach(g);
	graph_destroy(g);
}
END_TEST

static Suite *nodes_suite(void)
{
	Suite *s = suite_create("sched-nodes");
	TCase *tc = tcase_create("nodes");
	tcase_add_checked_fixture(tc, fixture_up, fixture_down);
	tcase_add_test(tc, test_ingress_order);
	tcase_add_test(tc, test_ingress_ip6);
	tcase_add_test(tc, test_egress_delay);
	tcase_add_test(tc, test_egress_impair);
	tcase_add_test(tc, test_egress_shaper_priority);
	tcase_add_test(tc, test_egress_max_held);
	tcase_add_test(tc, test_egress_owner_handoff);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(nodes_suite());
}
