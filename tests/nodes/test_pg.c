/* pg-input and the packet-generator API: a tiny graph of pg-input, error-drop
 * and a capturing sink; exact bytes out, checksums recomputed here, sizes,
 * limit, rate (with a tolerance), trace records, pool exhaustion, and the
 * `packet-generator` config table. */
#include <check.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/check_run.h"
#include "base/conf.h"
#include "graph/graph.h"
#include "nodes/pg/pg.h"
#include "nodes/sched/sched_io.h"

/* ---- the sink: records the bytes of what reaches it ---- */

#define CAP_MAX 4096
#define HOLD_MAX 65536

struct cap_pkt {
	uint32_t len;
	uint32_t rx_if;
	uint8_t bytes[2048];
};

static struct cap_pkt *cap;
static uint32_t n_cap, n_seen;
static bool sink_hold; /* keep the buffers instead of freeing them */
static uint32_t held[HOLD_MAX], n_held;

static uint32_t sink_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	for (uint32_t i = 0; i < f->n_vectors; i++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		if (n_cap < CAP_MAX) {
			struct cap_pkt *c = &cap[n_cap++];
			c->len = b->current_length;
			c->rx_if = b->rx_if;
			memcpy(c->bytes, buffer_data(b), MIN(b->current_length, sizeof(c->bytes)));
		}
	}
	n_seen += f->n_vectors;
	if (sink_hold) {
		ck_assert_uint_le(n_held + f->n_vectors, HOLD_MAX);
		memcpy(held + n_held, f->buffers, f->n_vectors * sizeof(uint32_t));
		n_held += f->n_vectors;
	} else {
		buffer_free(f->buffers, f->n_vectors);
	}
	return f->n_vectors;
}

static const struct node_reg sink_node = { .name = "pg-test-sink", .fn = sink_fn };

/* A stand-in for ethernet-input (the real one would pull in the whole L2/L3
 * graph): records the DSCP and the class of each packet, in order. */
static uint8_t eth_dscp[CAP_MAX], eth_class[CAP_MAX];
static uint32_t n_eth;

static uint32_t eth_standin_fn(struct node_runtime *rt, struct frame *f)
{
	(void)rt;
	for (uint32_t i = 0; i < f->n_vectors && n_eth < CAP_MAX; i++, n_eth++) {
		struct buffer *b = buffer_get(f->buffers[i]);
		eth_dscp[n_eth] = (uint8_t)(buffer_data(b)[15] >> 2);
		eth_class[n_eth] = (uint8_t)sched_buffer_class(b);
	}
	buffer_free(f->buffers, f->n_vectors);
	return f->n_vectors;
}

static const struct node_reg eth_standin_node = { .name = "ethernet-input", .fn = eth_standin_fn };

/* ---- fixture ---- */

static struct graph *g;
static int pg_index, sink_index;
static char err[256];

/* The graph: error-drop, pg-input, the sink; with_sched adds sched-ingress
 * and the ethernet-input stand-in it leads to. */
static void start_graph(uint32_t n_buffers, bool with_sched)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = n_buffers;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	cap = calloc(CAP_MAX, sizeof(*cap));
	ck_assert_ptr_nonnull(cap);
	n_cap = n_seen = n_held = 0;
	sink_hold = false;

	g = graph_create(NULL, err, sizeof(err));
	ck_assert_msg(g, "%s", err);
	ck_assert_int_ge(graph_add_node(g, node_registry_find("error-drop"), err, sizeof(err)), 0);
	ck_assert_msg(node_registry_find("pg-input"), "pg-input registers itself");
	pg_index = graph_add_node(g, node_registry_find("pg-input"), err, sizeof(err));
	ck_assert_msg(pg_index >= 0, "%s", err);
	sink_index = graph_add_node(g, &sink_node, err, sizeof(err));
	ck_assert_msg(sink_index >= 0, "%s", err);
	if (with_sched) {
		ck_assert_msg(node_registry_find("sched-ingress"), "sched-ingress registers itself");
		ck_assert_int_ge(graph_add_node(g, node_registry_find("sched-ingress"), err, sizeof(err)), 0);
		ck_assert_int_ge(graph_add_node(g, &eth_standin_node, err, sizeof(err)), 0);
	}
	n_eth = 0;
	ck_assert_msg(graph_build(g, err, sizeof(err)) == 0, "%s", err);
}

static void start(uint32_t n_buffers)
{
	start_graph(n_buffers, false);
}

static void setup(void)
{
	start(8192);
	ck_assert_msg(pg_attach(g, err, sizeof(err)) == 0, "%s", err);
}

static void teardown(void)
{
	if (n_held)
		buffer_free(held, n_held);
	n_held = 0;
	pg_stream_delete_all();
	pg_detach();
	graph_destroy(g);
	g = NULL;
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	/* The main thread's cache outlives the graph and would outlive the
	 * pools too; hand it back so a no-fork run starts each test clean. */
	buffer_thread_unregister();
	buffer_main_free();
	free(cap);
	cap = NULL;
}

/* Poll thread 0 until the generator goes idle (or max loops); returns the
 * packets produced. Asserts one call never makes more than a frame per stream. */
static uint64_t run(uint32_t max_loops)
{
	uint64_t total = 0;
	for (uint32_t i = 0; i < max_loops; i++) {
		uint32_t n = graph_main_poll(g);
		ck_assert_uint_le(n, FRAME_SIZE * pg_stream_count());
		if (!n)
			break;
		total += n;
	}
	return total;
}

static struct pg_stream_config stream(const char *name, uint64_t limit)
{
	struct pg_stream_config c;
	pg_stream_config_default(&c);
	snprintf(c.name, sizeof(c.name), "%s", name);
	snprintf(c.next_node, sizeof(c.next_node), "pg-test-sink");
	c.limit = limit;
	c.enabled = true;
	return c;
}

static void add(const struct pg_stream_config *c)
{
	ck_assert_msg(pg_stream_add(c, err, sizeof(err)) == 0, "%s", err);
}

/* ---- reference checksums, computed the plain RFC 1071 way ---- */

static uint16_t csum(const uint8_t *p, size_t n, uint32_t init)
{
	uint64_t s = init;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (uint32_t)p[i] << 8 | p[i + 1];
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t rd16(const uint8_t *p)
{
	return (uint32_t)p[0] << 8 | p[1];
}

static uint32_t rd32(const uint8_t *p)
{
	return rd16(p) << 16 | rd16(p + 2);
}

/* Lengths and both checksums of a captured IPv4 packet are right. */
static void verify_ip4(const struct cap_pkt *c)
{
	const uint8_t *ip = c->bytes + 14;
	const uint8_t *l4 = ip + 20;
	uint32_t l4_len = c->len - 34;
	ck_assert_uint_eq(rd16(c->bytes + 12), 0x0800);
	ck_assert_uint_eq(ip[0], 0x45);
	ck_assert_uint_eq(rd16(ip + 2), c->len - 14);
	ck_assert_uint_eq(csum(ip, 20, 0), 0);
	uint32_t pseudo = rd16(ip + 12) + rd16(ip + 14) + rd16(ip + 16) + rd16(ip + 18) + ip[9] + l4_len;
	switch (ip[9]) {
	case 17:
		ck_assert_uint_eq(rd16(l4 + 4), l4_len);
		ck_assert_uint_ne(rd16(l4 + 6), 0);
		ck_assert_uint_eq(csum(l4, l4_len, pseudo), 0);
		break;
	case 6:
		ck_assert_uint_eq(csum(l4, l4_len, pseudo), 0);
		break;
	case 1:
		ck_assert_uint_eq(csum(l4, l4_len, 0), 0);
		break;
	default:
		ck_abort_msg("unexpected protocol %u", ip[9]);
	}
}

/* ---- packets ---- */

START_TEST(udp_exact_bytes)
{
	struct pg_stream_config c = stream("s0", 3);
	static const uint8_t smac[6] = { 0x02, 0x11, 0x22, 0x33, 0x44, 0x55 };
	static const uint8_t dmac[6] = { 0x02, 0x66, 0x77, 0x88, 0x99, 0xaa };
	memcpy(c.src_mac, smac, 6);
	memcpy(c.dst_mac, dmac, 6);
	c.src_ip = 0xc0a8010a; /* 192.168.1.10 */
	c.dst_ip = 0xc0a80214; /* 192.168.2.20 */
	c.ttl = 17;
	c.dscp = 46;
	c.src_port = 1111;
	c.dst_port = 2222;
	c.rx_if = 7;
	add(&c);
	ck_assert_uint_eq(run(10), 3);
	ck_assert_uint_eq(n_cap, 3);

	/* Checksums worked out by hand (RFC 1071) for this exact packet. */
	uint8_t want[64] = {
		0x02, 0x66, 0x77, 0x88, 0x99, 0xaa, 0x02, 0x11, 0x22, 0x33, 0x44, 0x55, 0x08, 0x00,
		0x45, 0xb8, 0x00, 0x32, 0x00, 0x00, 0x00, 0x00, 0x11, 0x11, 0x24, 0x95,
		0xc0, 0xa8, 0x01, 0x0a, 0xc0, 0xa8, 0x02, 0x14,
		0x04, 0x57, 0x08, 0xae, 0x00, 0x1e, 0xff, 0xc4,
	};
	for (int k = 0; k < 22; k++)
		want[42 + k] = (uint8_t)k;
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(cap[i].len, 64);
		ck_assert_uint_eq(cap[i].rx_if, 7);
		ck_assert_mem_eq(cap[i].bytes, want, 64);
	}
	struct pg_stream_info info;
	ck_assert_int_eq(pg_stream_info_by_name("s0", &info), 0);
	ck_assert_uint_eq(info.packets_sent, 3);
	ck_assert_uint_eq(info.bytes_total, 192);
	ck_assert(!info.enabled);
}
END_TEST

START_TEST(incrementing_fields)
{
	struct pg_stream_config c = stream("inc", 24);
	c.src_ip = 0x0a000001;
	c.src_ip_count = 4;
	c.dst_ip = 0x0a0001fe; /* 10.0.1.254 .. 10.0.2.0: crosses an octet */
	c.dst_ip_count = 3;
	c.src_port = 1000;
	c.src_port_last = 1002;
	c.dst_port = 53;
	add(&c);
	ck_assert_uint_eq(run(10), 24);
	for (uint32_t k = 0; k < 24; k++) {
		const uint8_t *ip = cap[k].bytes + 14;
		ck_assert_uint_eq(rd32(ip + 12), 0x0a000001 + k % 4);
		ck_assert_uint_eq(rd32(ip + 16), 0x0a0001fe + k % 3);
		ck_assert_uint_eq(rd16(ip + 20), 1000 + k % 3);
		ck_assert_uint_eq(rd16(ip + 22), 53);
		verify_ip4(&cap[k]);
	}
}
END_TEST

START_TEST(tcp_and_icmp_checksums)
{
	struct pg_stream_config t = stream("tcp", 200);
	t.proto = PG_L4_TCP;
	t.size_mode = PG_SIZE_RANDOM;
	t.size_min = 54;
	t.size_max = 1518;
	t.src_port = 40000;
	t.src_port_last = 40010;
	t.dst_port = 80;
	add(&t);
	struct pg_stream_config i = stream("icmp", 200);
	i.proto = PG_L4_ICMP;
	i.size_mode = PG_SIZE_INCREMENT;
	i.size_min = 42;
	i.size_max = 99;
	i.src_ip_count = 7;
	add(&i);
	ck_assert_uint_eq(run(10), 400);
	uint32_t n_tcp = 0, n_icmp = 0;
	for (uint32_t k = 0; k < n_cap; k++) {
		const uint8_t *ip = cap[k].bytes + 14;
		verify_ip4(&cap[k]);
		if (ip[9] == 6) {
			ck_assert_uint_eq(ip[20 + 12], 0x50);
			ck_assert_uint_eq(ip[20 + 13], 0x10);
			ck_assert_uint_eq(rd16(ip + 20), 40000 + n_tcp % 11);
			n_tcp++;
		} else {
			ck_assert_uint_eq(ip[20], 8); /* echo request */
			ck_assert_uint_eq(rd16(ip + 26), n_icmp); /* sequence */
			ck_assert_uint_eq(cap[k].len, 42 + n_icmp % 58);
			n_icmp++;
		}
	}
	ck_assert_uint_eq(n_tcp, 200);
	ck_assert_uint_eq(n_icmp, 200);
}
END_TEST

START_TEST(size_increment)
{
	struct pg_stream_config c = stream("inc", 25);
	c.size_mode = PG_SIZE_INCREMENT;
	c.size_min = 60;
	c.size_max = 70;
	add(&c);
	ck_assert_uint_eq(run(10), 25);
	for (uint32_t k = 0; k < 25; k++) {
		ck_assert_uint_eq(cap[k].len, 60 + k % 11);
		verify_ip4(&cap[k]);
		/* payload: byte j of it is j mod 256 */
		for (uint32_t j = 42; j < cap[k].len; j++)
			ck_assert_uint_eq(cap[k].bytes[j], (j - 42) & 255);
	}
}
END_TEST

START_TEST(size_random)
{
	struct pg_stream_config c = stream("rnd", 2000);
	c.size_mode = PG_SIZE_RANDOM;
	c.size_min = 64;
	c.size_max = 1518;
	add(&c);
	ck_assert_uint_eq(run(20), 2000);
	uint32_t lo = UINT32_MAX, hi = 0, buckets[4] = { 0 };
	for (uint32_t k = 0; k < n_cap; k++) {
		uint32_t len = cap[k].len;
		ck_assert_uint_ge(len, 64);
		ck_assert_uint_le(len, 1518);
		lo = MIN(lo, len);
		hi = MAX(hi, len);
		buckets[(len - 64) * 4 / 1455]++;
		verify_ip4(&cap[k]);
	}
	ck_assert_uint_lt(lo, 80);
	ck_assert_uint_gt(hi, 1500);
	for (int b = 0; b < 4; b++) /* uniform: 500 each, loosely */
		ck_assert_msg(buckets[b] > 400 && buckets[b] < 600, "bucket %d has %u", b, buckets[b]);
}
END_TEST

START_TEST(raw_data_and_other_ethertype)
{
	struct pg_stream_config r = stream("raw", 2);
	for (int k = 0; k < 20; k++)
		r.data[k] = (uint8_t)(0xa0 + k);
	r.data_len = 20;
	r.size_min = r.size_max = 30;
	add(&r);
	struct pg_stream_config e = stream("arp", 1);
	e.ethertype = 0x0806;
	e.size_min = e.size_max = 60;
	add(&e);
	ck_assert_uint_eq(run(10), 3);
	ck_assert_uint_eq(n_cap, 3);
	uint8_t want[30] = { 0 };
	memcpy(want, r.data, 20);
	ck_assert_uint_eq(cap[0].len, 30);
	ck_assert_mem_eq(cap[0].bytes, want, 30);
	ck_assert_mem_eq(cap[1].bytes, want, 30);
	ck_assert_uint_eq(cap[2].len, 60);
	ck_assert_uint_eq(rd16(cap[2].bytes + 12), 0x0806);
	for (uint32_t j = 14; j < 60; j++)
		ck_assert_uint_eq(cap[2].bytes[j], j - 14);
}
END_TEST

/* ---- limit, rate, enable ---- */

START_TEST(limit_exact_and_restart)
{
	struct pg_stream_config c = stream("lim", 1000);
	add(&c);
	ck_assert_uint_eq(run(100), 1000);
	ck_assert_uint_eq(run(100), 0);
	ck_assert_uint_eq(n_seen, 1000);
	struct pg_stream_info info;
	ck_assert_int_eq(pg_stream_info(0, &info), 0);
	ck_assert(!info.enabled);
	ck_assert_uint_eq(info.packets_sent, 1000);

	ck_assert_int_eq(pg_stream_enable("lim", true), 0);
	ck_assert_uint_eq(run(100), 1000);
	ck_assert_int_eq(pg_stream_info(0, &info), 0);
	ck_assert_uint_eq(info.packets_sent, 1000);
	ck_assert_uint_eq(info.packets_total, 2000);
	ck_assert_uint_eq(n_seen, 2000);
	/* a new run starts its fields over: packet 1000 equals packet 0 */
	ck_assert_mem_eq(cap[1000].bytes, cap[0].bytes, 64);
}
END_TEST

START_TEST(disable_and_other_thread)
{
	struct pg_stream_config c = stream("off", 0);
	c.enabled = false;
	add(&c);
	struct pg_stream_config t1 = stream("t1", 0);
	t1.thread_index = 1;
	add(&t1);
	ck_assert_uint_eq(run(5), 0);
	ck_assert_int_eq(pg_stream_enable("off", true), 0);
	ck_assert_uint_eq(graph_main_poll(g), FRAME_SIZE);
	ck_assert_int_eq(pg_stream_enable("off", false), 0);
	ck_assert_uint_eq(run(5), 0);
	ck_assert_uint_eq(n_seen, FRAME_SIZE);
	ck_assert_int_eq(pg_stream_enable("nope", true), -ENOENT);
}
END_TEST

START_TEST(rate_within_tolerance)
{
	/* 500 pps: the bucket holds one frame (512 ms of tokens), so a loop
	 * descheduled for a while on a loaded machine (or slowed by the
	 * sanitizers) loses none of them. The time is taken when the last
	 * poll began: what that poll could send was earned by then. */
	struct pg_stream_config c = stream("rate", 0);
	c.rate_pps = 500;
	add(&c);
	uint64_t t0 = time_now_ns(), end = t0 + 2000000000ull, last = t0;
	while ((last = time_now_ns()) < end)
		ck_assert_uint_le(graph_main_poll(g), FRAME_SIZE);
	double secs = (double)(last - t0) / 1e9;
	double want = 500 * secs;
	ck_assert_msg(n_seen > want * 0.9 && n_seen < want * 1.1, "%u packets in %.3f s, want %.0f",
		      n_seen, secs, want);
}
END_TEST

/* ---- trace, errors, exhaustion ---- */

START_TEST(trace_records)
{
	struct pg_stream_config c = stream("traced", 20);
	c.rx_if = 3;
	add(&c);
	ck_assert_msg(graph_trace_add(g, "pg-input", 5, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(run(10), 20);
	ck_assert_uint_eq(graph_trace_n_packets(g), 5);
	for (uint32_t i = 0; i < 5; i++) {
		const struct trace_record *r;
		char buf[128], want[128];
		ck_assert_uint_eq(graph_trace_packet(g, i, &r, NULL), 2);
		ck_assert_uint_eq(r[0].node_index, pg_index);
		ck_assert_uint_eq(r[1].node_index, sink_index);
		graph_trace_format(g, &r[0], buf, sizeof(buf));
		snprintf(want, sizeof(want), "stream traced packet %u length 64 rx-if 3", i);
		ck_assert_str_eq(buf, want);
	}
}
END_TEST

START_TEST(to_error_drop_and_missing_next)
{
	struct pg_stream_config c = stream("eth", 0);
	snprintf(c.next_node, sizeof(c.next_node), "ethernet-input");
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -ENOENT);
	ck_assert_msg(strstr(err, "'ethernet-input'"), "%s", err);
	ck_assert_uint_eq(pg_stream_count(), 0);

	struct pg_stream_config d = stream("drop", 300);
	snprintf(d.next_node, sizeof(d.next_node), "error-drop");
	add(&d);
	ck_assert_uint_eq(run(10), 300);
	ck_assert_uint_eq(n_seen, 0);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)pg_index, PG_INPUT_ERROR_DROPPED), 300);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)pg_index, PG_INPUT_ERROR_NO_BUFFERS), 0);
}
END_TEST

START_TEST(pool_exhaustion_counted)
{
	start(1024);
	ck_assert_msg(pg_attach(g, err, sizeof(err)) == 0, "%s", err);
	sink_hold = true;
	struct pg_stream_config c = stream("flood", 0);
	add(&c);
	for (int i = 0; i < 20; i++)
		ck_assert_uint_le(graph_main_poll(g), FRAME_SIZE);
	uint64_t lost = graph_node_error_count(g, (uint32_t)pg_index, PG_INPUT_ERROR_NO_BUFFERS);
	ck_assert_uint_gt(lost, 0);
	ck_assert_uint_eq(n_held, n_seen);
	ck_assert_uint_eq(buffer_n_in_use(), n_held);
	struct pg_stream_info info;
	ck_assert_int_eq(pg_stream_info(0, &info), 0);
	ck_assert_uint_eq(info.packets_total, n_held);
	/* every call asked for a frame: what it did not get was counted */
	ck_assert_uint_eq(info.packets_total + lost, 20 * FRAME_SIZE);
}
END_TEST

/* ---- control API ---- */

START_TEST(config_errors)
{
	struct pg_stream_config c = stream("bad", 0);
	c.size_min = c.size_max = 41; /* below Ethernet + IPv4 + UDP */
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EINVAL);
	ck_assert_msg(strstr(err, "size 41-41"), "%s", err);
	c = stream("bad", 0);
	c.size_min = c.size_max = 4000; /* above the 2048-byte buffers */
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EINVAL);
	c = stream("bad", 0);
	c.size_max = 100; /* a range in fixed mode */
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EINVAL);
	c = stream("bad", 0);
	c.dscp = 64;
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EINVAL);
	c = stream("", 0);
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EINVAL);
	c = stream("bad", 0);
	c.src_port = 10;
	c.src_port_last = 5;
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(pg_stream_count(), 0);

	c = stream("a", 0);
	add(&c);
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -EEXIST);
	c = stream("b", 0);
	add(&c);
	ck_assert_uint_eq(pg_stream_count(), 2);
	ck_assert_int_eq(pg_stream_delete("a"), 0);
	ck_assert_int_eq(pg_stream_delete("a"), -ENOENT);
	struct pg_stream_info info;
	ck_assert_int_eq(pg_stream_info(0, &info), 0);
	ck_assert_str_eq(info.name, "b");
	ck_assert_int_eq(pg_stream_info(1, &info), -ENOENT);
}
END_TEST

START_TEST(streams_before_attach)
{
	start(4096);
	struct pg_stream_config c = stream("early", 10);
	ck_assert_int_eq(pg_stream_add(&c, err, sizeof(err)), -ENOENT); /* sink is not registered */
	snprintf(c.next_node, sizeof(c.next_node), "error-drop");
	add(&c);
	ck_assert_uint_eq(run(5), 0); /* not attached: pg-input stays idle */
	ck_assert_msg(pg_attach(g, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(run(5), 10);
	ck_assert_uint_eq(graph_node_error_count(g, (uint32_t)pg_index, PG_INPUT_ERROR_DROPPED), 10);
}
END_TEST

/* ---- the packet-generator config table ---- */

static const struct conf_key *key(const char *name)
{
	const struct conf_key *k = conf_key_find(pg_conf_section.block->keys, name);
	ck_assert_msg(k, "key %s", name);
	return k;
}

START_TEST(conf_values)
{
	struct pg_stream_config c;
	char buf[64];
	pg_stream_config_default(&c);
	ck_assert_str_eq(pg_conf_section.name, "packet-generator");

	ck_assert_int_eq(conf_value_parse(key("size"), "64-1518", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.size_min, 64);
	ck_assert_uint_eq(c.size_max, 1518);
	conf_value_format(key("size"), &c, buf, sizeof(buf));
	ck_assert_str_eq(buf, "64-1518");
	ck_assert_int_eq(conf_value_parse(key("size"), "10", &c, err, sizeof(err)), -ERANGE);
	ck_assert_int_eq(conf_value_parse(key("size"), "big", &c, err, sizeof(err)), -EINVAL);
	ck_assert_uint_eq(c.size_min, 64);

	ck_assert_int_eq(conf_value_parse(key("src-ip"), "10.0.0.1-10.0.0.100", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.src_ip, 0x0a000001);
	ck_assert_uint_eq(c.src_ip_count, 100);
	conf_value_format(key("src-ip"), &c, buf, sizeof(buf));
	ck_assert_str_eq(buf, "10.0.0.1-10.0.0.100");
	ck_assert_int_eq(conf_value_parse(key("dst-ip"), "10.0.0.9-10.0.0.1", &c, err, sizeof(err)), -ERANGE);
	ck_assert_int_eq(conf_value_parse(key("dst-ip"), "10.0.0", &c, err, sizeof(err)), -EINVAL);

	ck_assert_int_eq(conf_value_parse(key("src-port"), "1024-2047", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.src_port, 1024);
	ck_assert_uint_eq(c.src_port_last, 2047);
	ck_assert_int_eq(conf_value_parse(key("dst-port"), "70000", &c, err, sizeof(err)), -ERANGE);

	ck_assert_int_eq(conf_value_parse(key("data"), "0x0a0B0c", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.data_len, 3);
	ck_assert_uint_eq(c.data[1], 0x0b);
	conf_value_format(key("data"), &c, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0a0b0c");
	ck_assert_int_eq(conf_value_parse(key("data"), "abc", &c, err, sizeof(err)), -EINVAL);

	ck_assert_int_eq(conf_value_parse(key("protocol"), "icmp", &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.proto, PG_L4_ICMP);
	ck_assert_int_eq(conf_value_parse(key("size-mode"), "random", &c, err, sizeof(err)), 0);
	ck_assert_int_eq(c.size_mode, PG_SIZE_RANDOM);
	ck_assert_int_eq(conf_value_parse(key("rate"), "10kpps", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.rate_pps, 10000);
	ck_assert_int_eq(conf_value_parse(key("dscp"), "64", &c, err, sizeof(err)), -ERANGE);
	c.enabled = true;
	ck_assert_int_eq(conf_value_parse(key("disabled"), NULL, &c, err, sizeof(err)), 0);
	ck_assert(!c.enabled);
}
END_TEST

static uint64_t bit(const char *name)
{
	return 1ull << (key(name) - pg_conf_section.block->keys);
}

START_TEST(conf_check_and_apply)
{
	const struct conf_block *blk = pg_conf_section.block;
	struct pg_conf *pc = calloc(1, sizeof(*pc));
	ck_assert_ptr_nonnull(pc);
	for (int i = 0; i < 2; i++) {
		blk->init(&pc->streams[i]);
		snprintf(pc->streams[i].name, PG_NAME_MAX, "c%d", i);
		ck_assert(pc->streams[i].enabled);
	}
	pc->n_streams = 2;

	struct conf_check chk = { .keys = blk->keys, .set = bit("size") };
	struct pg_stream_config *s = &pc->streams[0];
	s->size_min = 64;
	s->size_max = 128;
	ck_assert_int_eq(blk->check(s, &chk), 0);
	ck_assert_int_eq(s->size_mode, PG_SIZE_INCREMENT);
	s->size_min = 20;
	ck_assert_int_eq(blk->check(s, &chk), -EINVAL);
	ck_assert_str_eq(chk.key, "size");
	s->size_min = 64;
	s->size_mode = PG_SIZE_FIXED;
	chk.set = bit("size") | bit("size-mode");
	ck_assert_int_eq(blk->check(s, &chk), -EINVAL);
	ck_assert_str_eq(chk.key, "size-mode");
	s->size_mode = PG_SIZE_RANDOM;
	ck_assert_int_eq(blk->check(s, &chk), 0);

	struct pg_stream_config *r = &pc->streams[1];
	r->data_len = 20;
	chk = (struct conf_check){ .keys = blk->keys, .set = bit("data") | bit("ttl") };
	ck_assert_int_eq(blk->check(r, &chk), 0); /* ttl 64 is the default: --check prints it */
	r->ttl = 9;
	ck_assert_int_eq(blk->check(r, &chk), -EINVAL);
	ck_assert_str_eq(chk.key, "ttl");
	r->ttl = 64;
	chk.set = bit("data");
	ck_assert_int_eq(blk->check(r, &chk), 0);

	/* c1 names ethernet-input, absent here: nothing is added */
	snprintf(s->next_node, PG_NAME_MAX, "pg-test-sink");
	ck_assert_int_eq(pg_conf_apply(pc, err, sizeof(err)), -ENOENT);
	ck_assert_uint_eq(pg_stream_count(), 0);
	snprintf(r->next_node, PG_NAME_MAX, "pg-test-sink");
	ck_assert_msg(pg_conf_apply(pc, err, sizeof(err)) == 0, "%s", err);
	ck_assert_uint_eq(pg_stream_count(), 2);
	ck_assert_uint_gt(run(3), 0);
	free(pc);
}
END_TEST

/* ---- the path of a received frame ---- */

static void class_set(const char *name, uint8_t prio, uint32_t dscp)
{
	struct sched_class c = { .priority = prio, .weight = 1, .match = SCHED_MATCH_DSCP, .value = dscp };
	snprintf(c.name, sizeof(c.name), "%s", name);
	ck_assert_msg(sched_class_set(&c, err, sizeof(err)) > 0, "%s", err);
}

static void setup_sched(void)
{
	start_graph(8192, true);
	ck_assert_msg(pg_attach(g, err, sizeof(err)) == 0, "%s", err);
}

static void teardown_sched(void)
{
	sched_class_clear();
	teardown();
}

/* With classes defined, streams into ethernet-input go through
 * sched-ingress as a device's received frames do: classified by DSCP
 * (exact counts per class), handed on in priority order within the frame
 * (ef's 10 before bulk's 20, though bulk was generated first), each buffer
 * carrying its class; a stream naming another node is not diverted.
 * Without classes they go straight to ethernet-input again, in the order
 * generated, and sched-ingress counts nothing more. */
START_TEST(received_path_through_sched_ingress)
{
	class_set("ef", 0, 46);
	class_set("bulk", 7, 8);
	struct pg_stream_config bulk = stream("bulk", 20), ef = stream("ef", 10), direct = stream("direct", 5);
	bulk.dscp = 8;
	ef.dscp = 46;
	direct.dscp = 46;
	snprintf(bulk.next_node, sizeof(bulk.next_node), "ethernet-input");
	snprintf(ef.next_node, sizeof(ef.next_node), "ethernet-input");
	add(&bulk);
	add(&ef);
	add(&direct);
	ck_assert_uint_eq(run(10), 35);

	uint64_t counts[SCHED_MAX_CLASSES];
	sched_io_class_packets(g, counts);
	ck_assert_uint_eq(counts[0], 0);
	ck_assert_uint_eq(counts[sched_class_find("ef")], 10);
	ck_assert_uint_eq(counts[sched_class_find("bulk")], 20);
	ck_assert_uint_eq(n_seen, 5); /* direct: straight to its node */
	ck_assert_uint_eq(n_eth, 30);
	for (uint32_t i = 0; i < 30; i++) {
		ck_assert_uint_eq(eth_dscp[i], i < 10 ? 46 : 8);
		ck_assert_uint_eq(eth_class[i], (uint32_t)sched_class_find(i < 10 ? "ef" : "bulk"));
	}

	sched_class_clear();
	n_eth = 0;
	ck_assert_int_eq(pg_stream_enable("bulk", true), 0);
	ck_assert_int_eq(pg_stream_enable("ef", true), 0);
	ck_assert_uint_eq(run(10), 30);
	uint64_t after[SCHED_MAX_CLASSES];
	sched_io_class_packets(g, after);
	ck_assert_mem_eq(after, counts, sizeof(after));
	ck_assert_uint_eq(n_eth, 30);
	for (uint32_t i = 0; i < 30; i++)
		ck_assert_uint_eq(eth_dscp[i], i < 20 ? 8 : 46);
}
END_TEST

static Suite *pg_suite(void)
{
	Suite *s = suite_create("pg");
	TCase *tc = tcase_create("packets");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, udp_exact_bytes);
	tcase_add_test(tc, incrementing_fields);
	tcase_add_test(tc, tcp_and_icmp_checksums);
	tcase_add_test(tc, size_increment);
	tcase_add_test(tc, size_random);
	tcase_add_test(tc, raw_data_and_other_ethertype);
	tcase_add_test(tc, limit_exact_and_restart);
	tcase_add_test(tc, disable_and_other_thread);
	tcase_add_test(tc, rate_within_tolerance);
	tcase_add_test(tc, trace_records);
	tcase_add_test(tc, to_error_drop_and_missing_next);
	tcase_add_test(tc, config_errors);
	tcase_add_test(tc, conf_check_and_apply);
	suite_add_tcase(s, tc);

	TCase *own = tcase_create("own-setup"); /* tests that start the graph themselves */
	tcase_add_checked_fixture(own, NULL, teardown);
	tcase_add_test(own, pool_exhaustion_counted);
	tcase_add_test(own, streams_before_attach);
	suite_add_tcase(s, own);

	TCase *path = tcase_create("received-path");
	tcase_add_checked_fixture(path, setup_sched, teardown_sched);
	tcase_add_test(path, received_path_through_sched_ingress);
	suite_add_tcase(s, path);

	TCase *conf = tcase_create("conf");
	tcase_add_test(conf, conf_values);
	suite_add_tcase(s, conf);
	return s;
}

int main(void)
{
	return check_run_suite(pg_suite());
}
