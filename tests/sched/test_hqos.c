/* sched/hqos.h on a simulated clock: exact departure times for a
 * subscriber's rate (overhead counted), a far wake (parked on the wheel),
 * strict priority inside a subscriber, weighted shares of the port, ceil
 * borrowing, the port limit, queue-limit drops, CoDel's drop and mark
 * decisions against RFC 8289's pseudo-code run on the same script, the
 * match tables, removal at run time, 65,535 subscribers; the pool whole
 * after every case.
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "graph/buffer.h"
#include "sched/hqos.h"
#include "tests/check_run.h"

#define MS 1000000ull
#define US 1000ull
#define SEC 1000000000ull
#define MBIT 1000000ull

/* An IPv4 frame of len bytes to dst (host order) in class c, ECN bits
 * ecn, tagged (the IPv4 id) with tag. */
static uint32_t pkt4(uint32_t len, uint32_t dst, uint32_t c, uint16_t tag, uint8_t ecn)
{
	uint32_t bi;
	ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
	struct buffer *b = buffer_get(bi);
	uint8_t *p = buffer_data(b);
	memset(p, 0, 34);
	p[12] = 0x08;
	p[14] = 0x45;
	p[15] = ecn;
	p[18] = (uint8_t)(tag >> 8);
	p[19] = (uint8_t)tag;
	p[22] = 64;
	p[23] = 17;
	p[26] = 192, p[27] = 0, p[28] = 2, p[29] = 1;
	for (int i = 0; i < 4; i++)
		p[30 + i] = (uint8_t)(dst >> (24 - 8 * i));
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(p[14 + i] << 8 | p[15 + i]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	p[24] = (uint8_t)(~sum >> 8);
	p[25] = (uint8_t)~sum;
	b->current_length = (uint16_t)len;
	b->rx_if = 0;
	sched_buffer_set_class(b, c);
	return bi;
}

static uint16_t tag_of(uint32_t bi)
{
	const uint8_t *p = buffer_data(buffer_get(bi));
	return (uint16_t)(p[18] << 8 | p[19]);
}

#include "tests/sched/sched_pool.h"

static void setup(void)
{
	sched_pool_up(140000, 256); /* lengths below are set, not written: headers suffice */
}

static void teardown(void)
{
	sched_pool_down();
}

static bool ip4_csum_ok(uint32_t bi)
{
	const uint8_t *p = buffer_data(buffer_get(bi)) + 14;
	uint32_t sum = 0;
	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

static struct hqos *make(const struct hqos_port_config *pc)
{
	char err[256];
	struct hqos_port_config d;
	hqos_port_config_default(&d);
	struct hqos *h = hqos_create(pc ? pc : &d, err, sizeof(err));
	ck_assert_msg(h, "%s", err);
	return h;
}

static int sub(struct hqos *h, const char *name, uint64_t rate, uint64_t ceil, uint64_t burst, uint32_t weight,
	       const char *dst)
{
	char err[256];
	struct hqos_sub_config c = { .rate_bps = rate, .ceil_bps = ceil, .burst_bytes = burst, .weight = weight };
	snprintf(c.name, sizeof(c.name), "%s", name);
	if (dst)
		ck_assert_int_eq(hqos_match_prefix(&c.match, true, dst), 0);
	int id = hqos_sub_set(h, &c, 0, err, sizeof(err));
	ck_assert_msg(id > 0, "%s: %s", name, err);
	return id;
}

static void put(struct hqos *h, uint32_t bi, uint64_t now)
{
	uint32_t drop;
	ck_assert_uint_eq(hqos_enqueue(h, &bi, 1, prio, now, &drop), 0);
}

/* Dequeue at now, expecting n packets; frees them, returns the first's tag. */
static int take(struct hqos *h, uint64_t now, uint32_t n)
{
	uint32_t out[256];
	return sched_took(out, hqos_dequeue(h, now, out, 256), now, n);
}

/* Keeps every subscriber's queue topped up (a saturating source) while
 * running; dst octets in dsts[]. */
static void run_saturated(struct hqos *h, const uint8_t *dsts, uint32_t n_dst, uint64_t from, uint64_t until,
			  uint64_t *bytes)
{
	uint64_t t = 0;
	for (uint32_t step = 0; step < 1000000 && t <= until; step++) {
		for (uint32_t k = 0; k < n_dst; k++) {
			struct hqos_sub_stats st;
			int id = hqos_sub_find(h, (char[]){ (char)('a' + k), 0 });
			ck_assert_int_eq(hqos_sub_stats(h, (uint32_t)id, &st), 0);
			for (uint64_t j = st.backlog_packets; j < 8; j++)
				put(h, pkt4(1500, 0x0a000000u | dsts[k], 0, 0, 0), t);
		}
		t = hqos_next_ns(h);
		if (t > until)
			break;
		uint32_t out[256];
		uint32_t n = hqos_dequeue(h, t, out, 256);
		for (uint32_t i = 0; i < n; i++)
			if (t >= from)
				bytes[buffer_data(buffer_get(out[i]))[33]] += 1500;
		buffer_free(out, n);
	}
	uint32_t out[256], n;
	while ((n = hqos_flush(h, out, 256)) != 0)
		buffer_free(out, n);
}

/* Subscriber impairment (hqos_sub_set_impair): netem's words on one
 * subscriber of two. */
static void impair(struct hqos *h, int id, const char *words)
{
	char buf[256], err[256], *argv[16];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", words);
	for (char *w = strtok(buf, " "); w && argc < 16; w = strtok(NULL, " "))
		argv[argc++] = w;
	struct sched_impair_config c;
	ck_assert_msg(sched_impair_parse(&c, argc, argv, err, sizeof(err)) == 0, "%s", err);
	ck_assert_msg(hqos_sub_set_impair(h, (uint32_t)id, &c, err, sizeof(err)) == 0, "%s", err);
}

static uint8_t dst_of(uint32_t bi)
{
	return buffer_data(buffer_get(bi))[33];
}

/* loss random 100% on a: every packet of a dropped (reason: random loss),
 * none of b's; off again: a's packets pass. */
START_TEST(test_sub_impair_loss)
{
	struct hqos *h = make(NULL);
	int a = sub(h, "a", 1000 * MBIT, 0, 1 << 20, 1, "10.0.0.1/32");
	int b = sub(h, "b", 1000 * MBIT, 0, 1 << 20, 1, "10.0.0.2/32");
	impair(h, a, "loss random 100% seed 3");
	ck_assert_ptr_null(hqos_sub_impair(h, (uint32_t)b));
	for (uint16_t i = 0; i < 60; i++) { /* the queue limit is 64 */
		put(h, pkt4(100, 0x0a000001, 0, i, 0), 1000);
		put(h, pkt4(100, 0x0a000002, 0, i, 0), 1000);
	}
	uint32_t out[256], n = hqos_dequeue(h, 1000, out, 256);
	ck_assert_uint_eq(n, 60);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(dst_of(out[i]), 2);
		ck_assert_uint_eq(tag_of(out[i]), i);
	}
	buffer_free(out, n);
	ck_assert_uint_eq(hqos_held(h), 60); /* the drops, until taken */
	n = hqos_take_impair_drops(h, out, 256);
	ck_assert_uint_eq(n, 60);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(dst_of(out[i]), 1);
		ck_assert_uint_eq(sched_impair_drop_reason(buffer_get(out[i])), SCHED_IMPAIR_DROP_LOSS_RANDOM);
	}
	buffer_free(out, n);
	ck_assert_uint_eq(hqos_take_impair_drops(h, out, 256), 0);
	ck_assert_uint_eq(hqos_held(h), 0);
	struct sched_impair_stats is;
	sched_impair_stats(hqos_sub_impair(h, (uint32_t)a), &is);
	ck_assert_uint_eq(is.enqueued, 60);
	ck_assert_uint_eq(is.lost_random, 60);
	struct hqos_sub_stats sa, sb;
	ck_assert_int_eq(hqos_sub_stats(h, (uint32_t)a, &sa), 0);
	ck_assert_int_eq(hqos_sub_stats(h, (uint32_t)b, &sb), 0);
	ck_assert_uint_eq(sa.c.departed_packets, 0);
	ck_assert_uint_eq(sb.c.departed_packets, 60);
	/* off: the impairer (and its counters) stays, packets pass it by */
	char err[256];
	ck_assert_int_eq(hqos_sub_set_impair(h, (uint32_t)a, NULL, err, sizeof(err)), 0);
	for (uint16_t i = 0; i < 5; i++)
		put(h, pkt4(100, 0x0a000001, 0, i, 0), 2000);
	ck_assert_int_eq(take(h, 2000, 5), 0);
	sched_impair_stats(hqos_sub_impair(h, (uint32_t)a), &is);
	ck_assert_uint_eq(is.enqueued, 60);
	/* a change of the subscriber keeps its impairment */
	impair(h, a, "loss random 100%");
	sub(h, "a", 500 * MBIT, 0, 1 << 20, 1, "10.0.0.1/32");
	put(h, pkt4(100, 0x0a000001, 0, 0, 0), 3000);
	take(h, 3000, 0);
	ck_assert_uint_eq(hqos_take_impair_drops(h, out, 256), 1);
	buffer_free(out, 1);
	hqos_destroy(h);
}
END_TEST

/* delay 5ms on a: a's packets depart exactly 5 ms after their arrival
 * (virtual time), b's at once; duplicate 100% on b then doubles b's. */
START_TEST(test_sub_impair_delay)
{
	struct hqos *h = make(NULL);
	int a = sub(h, "a", 1000 * MBIT, 0, 1 << 20, 1, "10.0.0.1/32");
	int b = sub(h, "b", 1000 * MBIT, 0, 1 << 20, 1, "10.0.0.2/32");
	impair(h, a, "delay 5ms");
	uint64_t t0 = 7 * MS + 123;
	for (uint16_t i = 0; i < 10; i++) {
		put(h, pkt4(100, 0x0a000001, 0, i, 0), t0);
		put(h, pkt4(100, 0x0a000002, 0, (uint16_t)(100 + i), 0), t0);
	}
	uint32_t out[256], n = hqos_dequeue(h, t0, out, 256);
	ck_assert_uint_eq(n, 10);
	for (uint32_t i = 0; i < n; i++)
		ck_assert_uint_eq(dst_of(out[i]), 2);
	buffer_free(out, n);
	ck_assert_uint_eq(hqos_held(h), 10);
	ck_assert_uint_eq(hqos_held_buffers(h), 10);
	ck_assert_uint_eq(hqos_next_ns(h), t0 + 5 * MS);
	take(h, t0 + 5 * MS - 1, 0);
	n = hqos_dequeue(h, t0 + 5 * MS, out, 256);
	ck_assert_uint_eq(n, 10);
	for (uint32_t i = 0; i < n; i++) {
		ck_assert_uint_eq(dst_of(out[i]), 1);
		ck_assert_uint_eq(tag_of(out[i]), i);
	}
	buffer_free(out, n);
	ck_assert_uint_eq(hqos_next_ns(h), UINT64_MAX);
	struct hqos_sub_stats sa;
	ck_assert_int_eq(hqos_sub_stats(h, (uint32_t)a, &sa), 0);
	ck_assert_uint_eq(sa.c.enqueued, 10);
	ck_assert_uint_eq(sa.c.departed_packets, 10);
	/* duplicate 100% on b: 2 out for 1 in, both at once */
	impair(h, b, "duplicate 100%");
	for (uint16_t i = 0; i < 4; i++)
		put(h, pkt4(100, 0x0a000002, 0, i, 0), t0 + 6 * MS);
	take(h, t0 + 6 * MS, 8);
	/* removal with packets held in a's impairer: freed and counted */
	put(h, pkt4(100, 0x0a000001, 0, 0, 0), t0 + 7 * MS);
	put(h, pkt4(100, 0x0a000001, 0, 1, 0), t0 + 7 * MS);
	uint64_t freed;
	ck_assert_int_eq(hqos_sub_remove(h, "a", &freed), 0);
	ck_assert_uint_eq(freed, 2);
	ck_assert_uint_eq(hqos_held(h), 0);
	ck_assert_uint_eq(hqos_next_ns(h), UINT64_MAX);
	/* and a's packets now go to default, unimpaired */
	put(h, pkt4(100, 0x0a000001, 0, 0, 0), t0 + 8 * MS);
	take(h, t0 + 8 * MS, 1);
	/* destroy with packets held in b's impairer: the pool comes back whole */
	impair(h, b, "delay 1s");
	put(h, pkt4(100, 0x0a000002, 0, 0, 0), t0 + 9 * MS);
	ck_assert_uint_eq(hqos_held(h), 1);
	hqos_destroy(h);
}
END_TEST

/* Errors change nothing: an unknown id, too many impaired subscribers. */
START_TEST(test_sub_impair_errors)
{
	struct hqos *h = make(NULL);
	char err[256];
	struct sched_impair_config c = { .delay_ns = MS };
	ck_assert_int_eq(hqos_sub_set_impair(h, 999, &c, err, sizeof(err)), -ENOENT);
	for (uint32_t i = 0; i <= HQOS_IMPAIR_MAX; i++) {
		char name[16], dst[32];
		snprintf(name, sizeof(name), "s%u", i);
		snprintf(dst, sizeof(dst), "10.1.%u.%u/32", i >> 8, i & 255);
		int id = sub(h, name, MBIT, 0, 1500, 1, dst);
		ck_assert_int_eq(hqos_sub_set_impair(h, (uint32_t)id, &c, err, sizeof(err)),
				 i < HQOS_IMPAIR_MAX ? 0 : -ENOSPC);
		ck_assert_int_eq(hqos_sub_impair(h, (uint32_t)id) != NULL, i < HQOS_IMPAIR_MAX);
	}
	hqos_destroy(h);
}
END_TEST

/* 8 Mbit/s is one byte per us. Bucket 1000 bytes, 1000-byte frames: one
 * at once, then one every 1000 us; with 24 bytes of overhead, 1024 us. */
START_TEST(test_rate_exact)
{
	for (uint32_t oh = 0; oh <= 24; oh += 24) {
		struct hqos_port_config pc;
		hqos_port_config_default(&pc);
		pc.overhead = oh;
		struct hqos *h = make(&pc);
		sub(h, "a", 8 * MBIT, 0, 1000, 1, "10.0.0.1/32");
		uint64_t t0 = 0;
		for (uint16_t i = 0; i < 6; i++)
			put(h, pkt4(1000, 0x0a000001, 0, i, 0), t0);
		int64_t cost = 1000 + oh;
		ck_assert_int_eq(take(h, t0, 1), 0);
		for (uint32_t k = 1; k < 6; k++) {
			uint64_t due = t0 + k * (uint64_t)cost * US;
			ck_assert_uint_eq(hqos_next_ns(h), due);
			take(h, due - 1, 0);
			ck_assert_int_eq(take(h, due, 1), (int)k);
		}
		ck_assert_uint_eq(hqos_next_ns(h), UINT64_MAX);
		struct hqos_sub_stats st;
		ck_assert_int_eq(hqos_sub_stats(h, (uint32_t)hqos_sub_find(h, "a"), &st), 0);
		ck_assert_uint_eq(st.c.departed_packets, 6);
		ck_assert_uint_eq(st.c.departed_bytes, 6000);
		ck_assert_uint_eq(st.backlog_packets, 0);
		hqos_destroy(h);
	}
}
END_TEST

/* 1 kbit/s and 1000-byte frames: 8 s apart, beyond the wheel's 67 ms,
 * so the wake is parked and moved nearer as the wheel turns. */
START_TEST(test_far_wake)
{
	struct hqos *h = make(NULL);
	sub(h, "a", 1000, 0, 1000, 1, "10.0.0.1/32");
	uint64_t t0 = 3 * SEC + 17;
	put(h, pkt4(1000, 0x0a000001, 0, 1, 0), t0);
	put(h, pkt4(1000, 0x0a000001, 0, 2, 0), t0);
	ck_assert_int_eq(take(h, t0, 1), 1);
	uint32_t steps = 0;
	for (uint64_t t; (t = hqos_next_ns(h)) < t0 + 8 * SEC; steps++) {
		ck_assert_uint_ge(t, t0);
		ck_assert_uint_lt(steps, 1000);
		take(h, t, 0);
	}
	ck_assert_uint_eq(hqos_next_ns(h), t0 + 8 * SEC);
	ck_assert_int_eq(take(h, t0 + 8 * SEC, 1), 2);
	hqos_destroy(h);
}
END_TEST

/* Inside a subscriber, a higher class arriving later leaves first. */
START_TEST(test_priority)
{
	struct hqos *h = make(NULL);
	prio[1] = 0;
	prio[2] = 3;
	sub(h, "a", 8 * MBIT, 0, 1000, 1, "10.0.0.0/24");
	for (uint16_t i = 0; i < 5; i++)
		put(h, pkt4(1000, 0x0a000005, 0, i, 0), 0);
	ck_assert_int_eq(take(h, 0, 1), 0);
	put(h, pkt4(1000, 0x0a000006, 2, 200, 0), 10 * US);
	put(h, pkt4(1000, 0x0a000007, 1, 100, 0), 20 * US);
	put(h, pkt4(1000, 0x0a000007, 1, 101, 0), 20 * US);
	ck_assert_int_eq(take(h, 1000 * US, 1), 100);
	ck_assert_int_eq(take(h, 2000 * US, 1), 101);
	ck_assert_int_eq(take(h, 3000 * US, 1), 200);
	ck_assert_int_eq(take(h, 4000 * US, 1), 1);
	hqos_destroy(h); /* frees the 3 still held */
}
END_TEST

/* Port 10 Mbit/s; a and b guaranteed 1 Mbit/s each, ceil 10, weights 1
 * and 3: each gets its rate, and the 8 Mbit/s left is shared 1:3. Over
 * 2 s after a 100 ms warm-up: a 3 Mbit/s, b 7 Mbit/s, within 1%. */
START_TEST(test_weights)
{
	struct hqos *h = make(NULL);
	ck_assert_int_eq(hqos_set_rate(h, 10 * MBIT, 3000, 0), 0);
	sub(h, "a", 1 * MBIT, 10 * MBIT, 3000, 1, "10.0.0.1/32");
	sub(h, "b", 1 * MBIT, 10 * MBIT, 3000, 3, "10.0.0.2/32");
	uint64_t bytes[256] = { 0 };
	run_saturated(h, (const uint8_t[]){ 1, 2 }, 2, 100 * MS, 2100 * MS, bytes);
	double a = (double)bytes[1] * 8 / 2, b = (double)bytes[2] * 8 / 2;
	ck_assert_msg(fabs(a - 3e6) < 3e4 && fabs(b - 7e6) < 7e4, "a %.0f b %.0f bit/s", a, b);
	hqos_destroy(h);
}
END_TEST

/* The case: port 30 Mbit/s, a 20 (ceil 30), b 5 (ceil 5), both
 * saturated: b its 5, a 25 (its 20 and the 5 left, up to its ceil). Then
 * b alone: 5 (its ceil); a alone with ceil 25: 25. Within 1% each. */
START_TEST(test_ceil_borrowing)
{
	struct hqos *h = make(NULL);
	ck_assert_int_eq(hqos_set_rate(h, 30 * MBIT, 16384, 0), 0);
	sub(h, "a", 20 * MBIT, 30 * MBIT, 3000, 1, "10.0.0.1/32");
	sub(h, "b", 5 * MBIT, 0, 3000, 1, "10.0.0.2/32");
	uint64_t bytes[256] = { 0 };
	run_saturated(h, (const uint8_t[]){ 1, 2 }, 2, 100 * MS, 1100 * MS, bytes);
	double a = (double)bytes[1] * 8, b = (double)bytes[2] * 8;
	ck_assert_msg(fabs(a - 25e6) < 25e4 && fabs(b - 5e6) < 5e4, "both: a %.0f b %.0f bit/s", a, b);
	hqos_destroy(h);

	h = make(NULL);
	ck_assert_int_eq(hqos_set_rate(h, 30 * MBIT, 16384, 0), 0);
	sub(h, "a", 20 * MBIT, 25 * MBIT, 3000, 1, "10.0.0.1/32");
	sub(h, "b", 5 * MBIT, 0, 3000, 1, "10.0.0.2/32");
	memset(bytes, 0, sizeof(bytes));
	run_saturated(h, (const uint8_t[]){ 1 }, 1, 100 * MS, 1100 * MS, bytes);
	a = (double)bytes[1] * 8;
	ck_assert_msg(fabs(a - 25e6) < 25e4, "a alone, ceil 25: %.0f bit/s", a);
	hqos_destroy(h);
}
END_TEST

/* Sum of guarantees above the port: the port is the limit, and green
 * subscribers share it by weight (2:1 here). */
START_TEST(test_port_limit)
{
	struct hqos *h = make(NULL);
	ck_assert_int_eq(hqos_set_rate(h, 9 * MBIT, 3000, 0), 0);
	sub(h, "a", 20 * MBIT, 0, 3000, 2, "10.0.0.1/32");
	sub(h, "b", 20 * MBIT, 0, 3000, 1, "10.0.0.2/32");
	uint64_t bytes[256] = { 0 };
	run_saturated(h, (const uint8_t[]){ 1, 2 }, 2, 100 * MS, 1100 * MS, bytes);
	double a = (double)bytes[1] * 8, b = (double)bytes[2] * 8;
	ck_assert_msg(fabs(a - 6e6) < 6e4 && fabs(b - 3e6) < 3e4, "a %.0f b %.0f bit/s", a, b);
	hqos_destroy(h);
}
END_TEST

/* Tail drop at the queue limit, per queue, counted per subscriber; the
 * default subscriber takes what no match selects. */
START_TEST(test_queue_limit)
{
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.queue_limit = 4;
	struct hqos *h = make(&pc);
	int a = sub(h, "a", 8 * MBIT, 0, 1000, 1, "10.0.0.1/32");
	uint32_t bi[10], drop[10];
	for (uint16_t i = 0; i < 10; i++)
		bi[i] = pkt4(1000, 0x0a000001, 0, i, 0);
	ck_assert_uint_eq(hqos_enqueue(h, bi, 10, prio, 0, drop), 6);
	for (uint32_t i = 0; i < 6; i++)
		ck_assert_uint_eq(tag_of(drop[i]), 4 + i);
	buffer_free(drop, 6);
	prio[1] = 0; /* another queue of the same subscriber has its own limit */
	for (uint16_t i = 0; i < 4; i++)
		bi[i] = pkt4(1000, 0x0a000001, 1, (uint16_t)(20 + i), 0);
	ck_assert_uint_eq(hqos_enqueue(h, bi, 4, prio, 0, drop), 0);
	bi[0] = pkt4(1000, 0x0b000001, 0, 50, 0);
	ck_assert_uint_eq(hqos_enqueue(h, bi, 1, prio, 0, drop), 0);
	struct hqos_sub_stats st;
	hqos_sub_stats(h, (uint32_t)a, &st);
	ck_assert_uint_eq(st.c.dropped_limit, 6);
	ck_assert_uint_eq(st.c.enqueued, 8);
	ck_assert_uint_eq(st.backlog_packets, 8);
	hqos_sub_stats(h, HQOS_DEFAULT_ID, &st);
	ck_assert_uint_eq(st.backlog_packets, 1);
	ck_assert_str_eq(st.state, "yellow");
	ck_assert_uint_eq(hqos_held(h), 9);
	hqos_destroy(h);
}
END_TEST

/* One packet to dst tagged tag at 0: the tag of what was dropped (the
 * packet itself, or the one it pushed out), -1 for none. */
static int put_one(struct hqos *h, uint32_t dst, uint16_t tag)
{
	uint32_t bi = pkt4(1000, dst, 0, tag, 0), drop[1];
	uint32_t n = hqos_enqueue(h, &bi, 1, prio, 0, drop);
	ck_assert_uint_le(n, 1);
	int t = n ? tag_of(drop[0]) : -1;
	buffer_free(drop, n);
	return t;
}

/* At max-held the fattest subscriber pays (RFC 8290 section 4.1's drop
 * from the fattest queue): a's own arrival is dropped while a holds
 * everything; b's arrivals push out a's oldest packets until b's backlog
 * is within one of a's; then b's arrival is the one dropped. The port
 * never holds more than max-held, and each drop is a's or b's counter. */
START_TEST(test_max_held_push_out)
{
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.max_held = 4;
	struct hqos *h = make(&pc);
	int a = sub(h, "a", 8 * MBIT, 0, 1000, 1, "10.0.0.1/32");
	int b = sub(h, "b", 8 * MBIT, 0, 1000, 1, "10.0.0.2/32");
	for (uint16_t i = 0; i < 4; i++)
		ck_assert_int_eq(put_one(h, 0x0a000001, i), -1);
	ck_assert_int_eq(put_one(h, 0x0a000001, 4), 4);   /* a: its own */
	ck_assert_int_eq(put_one(h, 0x0a000002, 10), 0);  /* b 0 vs a 4: a's head out */
	ck_assert_int_eq(put_one(h, 0x0a000002, 11), 1);  /* b 1 vs a 3 */
	ck_assert_int_eq(put_one(h, 0x0a000002, 12), 12); /* b 2 vs a 2: b's own */
	ck_assert_int_eq(put_one(h, 0x0a000001, 5), 5);   /* a 2 vs b 2 (now the fattest met) */
	ck_assert_uint_eq(hqos_held(h), 4);
	struct hqos_sub_stats st;
	hqos_sub_stats(h, (uint32_t)a, &st);
	ck_assert_uint_eq(st.c.dropped_limit, 4);
	ck_assert_uint_eq(st.c.enqueued, 4);
	ck_assert_uint_eq(st.backlog_packets, 2);
	hqos_sub_stats(h, (uint32_t)b, &st);
	ck_assert_uint_eq(st.c.dropped_limit, 1);
	ck_assert_uint_eq(st.c.enqueued, 2);
	ck_assert_uint_eq(st.backlog_packets, 2);
	struct hqos_port_stats ps;
	hqos_port_stats(h, &ps);
	ck_assert_uint_eq(ps.c.dropped_limit, 5);
	/* What is left leaves in order, a's 2 and 3 and b's 10 and 11, each
	 * subscriber at its rate: one frame at once, the next 1 ms later. */
	uint32_t out[8], n = hqos_dequeue(h, 0, out, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(tag_of(out[0]) + tag_of(out[1]), 2 + 10);
	buffer_free(out, n);
	n = hqos_dequeue(h, 1000 * US, out, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(tag_of(out[0]) + tag_of(out[1]), 3 + 11);
	buffer_free(out, n);
	ck_assert_uint_eq(hqos_held(h), 0);
	hqos_destroy(h);
}
END_TEST

/* ---- CoDel against RFC 8289's pseudo-code ----
 *
 * The reference below is the RFC's section 5 code on an array (the
 * queue: enqueue times and sizes), marking instead of dropping when
 * asked and the packet is ECT. The script: one packet of 1000 bytes
 * enqueued every 0.8 ms, one dequeued every 1 ms (a queue that grows:
 * sojourn rises past target), for 2 s; then arrivals stop and the queue
 * drains. The hierarchy must send, drop and mark exactly the same
 * packets at the same times. */

struct ref {
	uint64_t ts[4096];
	uint32_t head, tail;
	uint64_t first_above, drop_next;
	uint32_t count, lastcount;
	bool dropping, ecn;
	uint64_t target, interval;
};

static uint32_t ref_bytes(const struct ref *r)
{
	return (r->tail - r->head) * 1000;
}

static int ref_dodequeue(struct ref *r, uint64_t now, bool *ok)
{
	*ok = false;
	if (r->head == r->tail) {
		r->first_above = 0;
		return -1;
	}
	int p = (int)r->head++;
	uint64_t sojourn = now - r->ts[p];
	if (sojourn < r->target || ref_bytes(r) <= 1514) {
		r->first_above = 0;
	} else {
		if (r->first_above == 0)
			r->first_above = now + r->interval;
		else if (now >= r->first_above)
			*ok = true;
	}
	return p;
}

static uint64_t ref_law(const struct ref *r, uint64_t t)
{
	return t + (uint64_t)((double)r->interval / sqrt((double)r->count));
}

/* Returns the packet sent (-1: none); dropped[]/marked[] by packet. */
static int ref_dequeue(struct ref *r, uint64_t now, uint8_t *fate)
{
	bool ok;
	int p = ref_dodequeue(r, now, &ok);
	if (p < 0) {
		r->dropping = false;
		return p;
	}
	if (r->dropping) {
		if (!ok) {
			r->dropping = false;
		} else {
			while (now >= r->drop_next && r->dropping) {
				r->count++;
				if (r->ecn) {
					fate[p] = 2;
					r->drop_next = ref_law(r, r->drop_next);
					break;
				}
				fate[p] = 1;
				p = ref_dodequeue(r, now, &ok);
				if (!ok)
					r->dropping = false;
				else
					r->drop_next = ref_law(r, r->drop_next);
			}
		}
	} else if (ok) {
		if (r->ecn) {
			fate[p] = 2;
		} else {
			fate[p] = 1;
			p = ref_dodequeue(r, now, &ok);
		}
		r->dropping = true;
		uint32_t delta = r->count - r->lastcount;
		if (delta > 1 && (int64_t)(now - r->drop_next) < 16 * (int64_t)r->interval)
			r->count = delta;
		else
			r->count = 1;
		r->drop_next = ref_law(r, now);
		r->lastcount = r->count;
	}
	return p;
}

static void codel_script(bool ecn)
{
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.codel = true;
	pc.ecn = ecn;
	pc.queue_limit = 4096;
	struct hqos *h = make(&pc);
	sub(h, "a", 100000 * MBIT, 0, 1 << 20, 1, "10.0.0.1/32");
	static struct ref r;
	static uint8_t fate[4096], got[4096];
	memset(&r, 0, sizeof(r));
	memset(fate, 0, sizeof(fate));
	memset(got, 0, sizeof(got));
	r.ecn = ecn;
	r.target = 5 * MS;
	r.interval = 100 * MS;
	uint32_t n_in = 0, sent = 0, ref_sent = 0, marks = 0;
	for (uint64_t t = 0; t <= 3000 * MS; t += 100 * US) {
		if (t % (800 * US) == 0 && t < 2000 * MS) {
			put(h, pkt4(1000, 0x0a000001, 0, (uint16_t)n_in, ecn ? 2 : 0), t);
			r.ts[r.tail++] = t;
			n_in++;
		}
		if (t % MS)
			continue;
		int p = ref_dequeue(&r, t, fate);
		uint32_t out[1], drops[HQOS_DROP_STASH];
		uint32_t n = hqos_dequeue(h, t, out, 1);
		uint32_t nd = hqos_take_drops(h, drops, HQOS_DROP_STASH);
		for (uint32_t i = 0; i < nd; i++)
			got[tag_of(drops[i])] = 1;
		buffer_free(drops, nd);
		ck_assert_msg((p >= 0) == (n == 1), "at %llu ms: reference sends %d, hqos %u", (unsigned long long)(t / MS),
			      p, n);
		if (n) {
			const uint8_t *ip = buffer_data(buffer_get(out[0])) + 14;
			ck_assert_uint_eq(tag_of(out[0]), (uint32_t)p);
			if ((ip[1] & 3) == 3) {
				got[p] = 2;
				ck_assert(ip4_csum_ok(out[0]));
			}
			buffer_free(out, 1);
			sent++;
			ref_sent++;
		}
	}
	uint32_t dropped = 0;
	for (uint32_t i = 0; i < n_in; i++) {
		ck_assert_msg(got[i] == fate[i], "packet %u: hqos %u, reference %u", i, got[i], fate[i]);
		dropped += fate[i] == 1;
		marks += fate[i] == 2;
	}
	/* the script makes CoDel act: a queue growing 0.25 packets/ms */
	ck_assert_uint_gt(ecn ? marks : dropped, 10);
	struct hqos_sub_stats st;
	hqos_sub_stats(h, (uint32_t)hqos_sub_find(h, "a"), &st);
	ck_assert_uint_eq(st.c.dropped_codel, dropped);
	ck_assert_uint_eq(st.c.marked, marks);
	ck_assert_uint_eq(st.c.departed_packets, sent);
	ck_assert_uint_eq(sent + dropped + st.backlog_packets, n_in);
	hqos_destroy(h);
}

START_TEST(test_codel_drop)
{
	codel_script(false);
}
END_TEST

START_TEST(test_codel_ecn)
{
	codel_script(true);
}
END_TEST

/* The first drop exactly: sojourn above target from the first dequeue
 * at t1 on, the first drop at the first dequeue at or after t1 + 100 ms,
 * the next 100 ms / sqrt(1) later, then 100 / sqrt(2) = 70.71 ms. */
START_TEST(test_codel_times)
{
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.codel = true;
	pc.queue_limit = 4096;
	struct hqos *h = make(&pc);
	sub(h, "a", 100000 * MBIT, 0, 1 << 20, 1, "10.0.0.1/32");
	for (uint16_t i = 0; i < 1000; i++)
		put(h, pkt4(1000, 0x0a000001, 0, i, 0), 0);
	uint64_t drop_at[4];
	uint32_t n_drop = 0;
	for (uint64_t t = 10 * MS; t <= 400 * MS && n_drop < 4; t += MS) {
		uint32_t out[1], drops[8];
		uint32_t n = hqos_dequeue(h, t, out, 1);
		buffer_free(out, n);
		uint32_t nd = hqos_take_drops(h, drops, 8);
		buffer_free(drops, nd);
		for (uint32_t i = 0; i < nd && n_drop < 4; i++)
			drop_at[n_drop++] = t;
	}
	ck_assert_uint_eq(n_drop, 4);
	ck_assert_uint_eq(drop_at[0], 110 * MS);
	ck_assert_uint_eq(drop_at[1], 210 * MS);
	ck_assert_uint_eq(drop_at[2], 281 * MS); /* 210 + 70.71 */
	ck_assert_uint_eq(drop_at[3], 339 * MS); /* 280.71 + 57.74 */
	hqos_destroy(h);
}
END_TEST

/* Longest prefix, dst before src, IPv6, VLAN, rx interface, default. */
START_TEST(test_match)
{
	struct hqos *h = make(NULL);
	char err[256];
	int net = sub(h, "net", MBIT, 0, 3000, 1, "10.1.0.0/16");
	int host = sub(h, "host", MBIT, 0, 3000, 1, "10.1.2.3/32");
	struct hqos_sub_config c = { .name = "src", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	ck_assert_int_eq(hqos_match_prefix(&c.match, false, "192.0.2.0/24"), 0);
	int src = hqos_sub_set(h, &c, 0, err, sizeof(err));
	ck_assert_int_gt(src, 0);
	struct hqos_sub_config v = { .name = "v6", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	ck_assert_int_eq(hqos_match_prefix(&v.match, true, "2001:db8:1::/48"), 0);
	int v6 = hqos_sub_set(h, &v, 0, err, sizeof(err));
	ck_assert_int_gt(v6, 0);
	struct hqos_sub_config vl = { .name = "vl", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	vl.match.kind = HQOS_MATCH_VLAN;
	vl.match.value = 100;
	int vlan = hqos_sub_set(h, &vl, 0, err, sizeof(err));
	struct hqos_sub_config rx = { .name = "rx", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	rx.match.kind = HQOS_MATCH_RX_IF;
	rx.match.value = 7;
	int rxif = hqos_sub_set(h, &rx, 0, err, sizeof(err));
	/* the same match twice, host bits, default with a match: refused */
	struct hqos_sub_config dup = c;
	memcpy(dup.name, "dup", 4);
	ck_assert_int_eq(hqos_sub_set(h, &dup, 0, err, sizeof(err)), -EEXIST);
	struct hqos_match m;
	ck_assert_int_eq(hqos_match_prefix(&m, true, "10.1.2.3/16"), -EINVAL);
	ck_assert_int_eq(hqos_match_prefix(&m, true, "10.1.2.0/33"), -EINVAL);
	struct hqos_sub_config d = { .name = "default", .burst_bytes = 3000, .weight = 1, .match = c.match };
	ck_assert_int_eq(hqos_sub_set(h, &d, 0, err, sizeof(err)), -EINVAL);

	uint32_t bi = pkt4(100, 0x0a010203, 0, 0, 0);
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)host);
	buffer_data(buffer_get(bi))[33] = 4;
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)net);
	buffer_data(buffer_get(bi))[30] = 11; /* 11.1.2.4 from 192.0.2.1 */
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)src);
	buffer_data(buffer_get(bi))[26] = 198;
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), HQOS_DEFAULT_ID);
	buffer_get(bi)->rx_if = 7;
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)rxif);
	/* a VLAN tag: 8100, vid 100, then IPv4 (shifted by 4) */
	uint8_t *p = buffer_data(buffer_get(bi));
	memmove(p + 18, p + 14, 40);
	p[12] = 0x81, p[13] = 0x00, p[14] = 0x00, p[15] = 100, p[16] = 0x08, p[17] = 0x00;
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)vlan);
	/* IPv6 to 2001:db8:1:5::1 */
	memset(p, 0, 64);
	p[12] = 0x86, p[13] = 0xdd, p[14] = 0x60;
	uint8_t dst6[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, 0, 5, [15] = 1 };
	memcpy(p + 14 + 24, dst6, 16);
	buffer_get(bi)->rx_if = 0;
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)v6);
	p[14 + 24 + 5] = 2;
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), HQOS_DEFAULT_ID);
	buffer_free(&bi, 1);
	/* gone from the table with the subscriber */
	uint64_t freed;
	ck_assert_int_eq(hqos_sub_remove(h, "host", &freed), 0);
	bi = pkt4(100, 0x0a010203, 0, 0, 0);
	ck_assert_uint_eq(hqos_classify(h, buffer_get(bi)), (uint32_t)net);
	buffer_free(&bi, 1);
	ck_assert_int_eq(hqos_sub_remove(h, "default", &freed), -EINVAL);
	ck_assert_int_eq(hqos_sub_remove(h, "nope", &freed), -ENOENT);
	hqos_destroy(h);
}
END_TEST

/* The burst match (hqos_enqueue's chunks, the compact IPv4 table first)
 * against a model of the match order, packet by packet: 300 /32 hosts
 * (every third then removed: the table's deletions), a /24 and a /16
 * under them, a source /24, a VLAN and an rx interface; frames hitting a
 * host, missing it for the /24 or /16, matching only by source, tagged,
 * IPv6, too short. Each subscriber's enqueued count equals the model's,
 * and hqos_classify agrees with it for every frame. */
#define MB_HOSTS 300
#define MB_FRAMES 420

START_TEST(test_match_burst)
{
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.queue_limit = 1024;
	struct hqos *h = make(&pc);
	char err[256], name[16];
	int host[MB_HOSTS];
	for (uint32_t i = 0; i < MB_HOSTS; i++) {
		char pfx[32];
		snprintf(name, sizeof(name), "h%u", i);
		snprintf(pfx, sizeof(pfx), "10.2.%u.%u/32", i / 256, i % 256);
		host[i] = sub(h, name, MBIT, 0, 3000, 1, pfx);
	}
	int n16 = sub(h, "n16", MBIT, 0, 3000, 1, "10.2.0.0/16");
	int n24 = sub(h, "n24", MBIT, 0, 3000, 1, "10.2.1.0/24");
	struct hqos_sub_config c = { .name = "src", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	ck_assert_int_eq(hqos_match_prefix(&c.match, false, "192.0.2.0/24"), 0);
	int src = hqos_sub_set(h, &c, 0, err, sizeof(err));
	struct hqos_sub_config vl = { .name = "vl", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	vl.match.kind = HQOS_MATCH_VLAN;
	vl.match.value = 100;
	int vlan = hqos_sub_set(h, &vl, 0, err, sizeof(err));
	struct hqos_sub_config rx = { .name = "rx", .rate_bps = MBIT, .burst_bytes = 3000, .weight = 1 };
	rx.match.kind = HQOS_MATCH_RX_IF;
	rx.match.value = 7;
	int rxif = hqos_sub_set(h, &rx, 0, err, sizeof(err));
	ck_assert_int_gt(src, 0);
	ck_assert_int_gt(vlan, 0);
	ck_assert_int_gt(rxif, 0);
	uint64_t freed;
	for (uint32_t i = 0; i < MB_HOSTS; i += 3) {
		snprintf(name, sizeof(name), "h%u", i);
		ck_assert_int_eq(hqos_sub_remove(h, name, &freed), 0);
		host[i] = -1;
	}
	static uint32_t bi[MB_FRAMES], want[MB_FRAMES];
	static uint64_t expect[HQOS_SUBS_MAX];
	memset(expect, 0, sizeof(expect));
	for (uint32_t i = 0; i < MB_FRAMES; i++) {
		uint32_t k = i % 400; /* 10.2.0.0 .. 10.2.1.143: hosts, removed hosts, past them */
		bi[i] = pkt4(100, 0x0a020000u + k, 0, 0, 0);
		want[i] = k < MB_HOSTS && host[k] >= 0 ? (uint32_t)host[k] : k >= 256 ? (uint32_t)n24 : (uint32_t)n16;
		uint8_t *p = buffer_data(buffer_get(bi[i]));
		if (i >= 400) { /* the rest: not matched by destination */
			p[30] = 11; /* 11.2.x.y from 192.0.2.1 */
			want[i] = (uint32_t)src;
			switch (i % 5) {
			case 1: /* another source: default, or rx interface 7 */
				p[26] = 198;
				want[i] = HQOS_DEFAULT_ID;
				break;
			case 2:
				p[26] = 198;
				buffer_get(bi[i])->rx_if = 7;
				want[i] = (uint32_t)rxif;
				break;
			case 3: /* tagged, vid 100: the IPv4 inside matches first, else the VLAN */
				memmove(p + 18, p + 14, 40);
				p[12] = 0x81, p[13] = 0x00, p[14] = 0x00, p[15] = 100, p[16] = 0x08, p[17] = 0x00;
				p[30 + 4] = 10, p[26 + 4] = 198; /* 10.2.x.y: the host or net again */
				want[i] = k < MB_HOSTS && host[k] >= 0 ? (uint32_t)host[k] : k >= 256 ? (uint32_t)n24 : (uint32_t)n16;
				if (i % 2) {
					p[30 + 4] = 11;
					want[i] = (uint32_t)vlan;
				}
				buffer_get(bi[i])->current_length = 104;
				break;
			case 4: /* IPv6 or too short for IPv4: default */
				if (i % 2) {
					memset(p, 0, 64);
					p[12] = 0x86, p[13] = 0xdd, p[14] = 0x60;
				} else {
					buffer_get(bi[i])->current_length = 30;
				}
				want[i] = HQOS_DEFAULT_ID;
				break;
			}
		}
		ck_assert_msg(hqos_classify(h, buffer_get(bi[i])) == want[i], "frame %u: %u, not %u", i,
			      hqos_classify(h, buffer_get(bi[i])), want[i]);
		expect[want[i]]++;
	}
	static uint32_t dropped[MB_FRAMES];
	static const uint8_t prio[SCHED_MAX_CLASSES];
	ck_assert_uint_eq(hqos_enqueue(h, bi, MB_FRAMES, prio, 0, dropped), 0);
	uint32_t subs = 0;
	for (int id = hqos_sub_next(h, -1); id >= 0; id = hqos_sub_next(h, id), subs++) {
		struct hqos_sub_stats st;
		ck_assert_int_eq(hqos_sub_stats(h, (uint32_t)id, &st), 0);
		ck_assert_msg(st.c.enqueued == expect[id], "%s: %llu enqueued, %llu expected", st.cfg.name,
			      (unsigned long long)st.c.enqueued, (unsigned long long)expect[id]);
	}
	ck_assert_uint_eq(subs, 1 + MB_HOSTS - MB_HOSTS / 3 + 5);
	ck_assert_uint_gt(expect[HQOS_DEFAULT_ID], 0);
	ck_assert_uint_gt(expect[vlan], 0);
	hqos_destroy(h);
}
END_TEST

/* Removing a backlogged subscriber frees its packets; the other keeps
 * its exact schedule. */
START_TEST(test_remove_running)
{
	struct hqos *h = make(NULL);
	sub(h, "a", 8 * MBIT, 0, 1000, 1, "10.0.0.1/32");
	sub(h, "b", 8 * MBIT, 0, 1000, 1, "10.0.0.2/32");
	for (uint16_t i = 0; i < 5; i++) {
		put(h, pkt4(1000, 0x0a000001, 0, i, 0), 0);
		put(h, pkt4(1000, 0x0a000002, 0, (uint16_t)(100 + i), 0), 0);
	}
	take(h, 0, 2);
	uint64_t freed;
	ck_assert_int_eq(hqos_sub_remove(h, "b", &freed), 0);
	ck_assert_uint_eq(freed, 4);
	ck_assert_uint_eq(hqos_held(h), 4);
	for (uint32_t k = 1; k < 5; k++) {
		ck_assert_uint_eq(hqos_next_ns(h), k * 1000 * US);
		ck_assert_int_eq(take(h, k * 1000 * US, 1), (int)k);
	}
	struct hqos_port_stats ps;
	hqos_port_stats(h, &ps);
	ck_assert_uint_eq(ps.subscribers, 2);
	ck_assert_uint_eq(ps.c.departed_packets, 6);
	ck_assert_uint_eq(ps.c.dropped_limit, 4);
	/* the id is used again */
	sub(h, "c", 8 * MBIT, 0, 1000, 1, "10.0.0.2/32");
	hqos_destroy(h);
}
END_TEST

/* 65,535 subscribers at 1 Mbit/s with a 1514-byte bucket, two 1514-byte
 * frames each (with 24 bytes of overhead): every first frame leaves at
 * once, every second exactly 1538 * 8 us later (12.304 ms), all 65,535
 * of them on the same wheel slot. */
START_TEST(test_scale)
{
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.overhead = 24;
	pc.max_held = 1 << 20;
	struct hqos *h = make(&pc);
	char err[256];
	uint32_t n = HQOS_SUBS_MAX - 1;
	for (uint32_t i = 0; i < n; i++) {
		struct hqos_sub_config c = { .rate_bps = MBIT, .burst_bytes = 1538, .weight = 1 };
		snprintf(c.name, sizeof(c.name), "s%u", i);
		c.match.kind = HQOS_MATCH_DST4;
		c.match.plen = 32;
		uint32_t a = 0x0a000000u + i;
		for (int k = 0; k < 4; k++)
			c.match.addr[k] = (uint8_t)(a >> (24 - 8 * k));
		ck_assert_int_eq(hqos_sub_set(h, &c, 0, err, sizeof(err)), (int)i + 1);
	}
	struct hqos_sub_config over = { .name = "over", .rate_bps = MBIT, .burst_bytes = 1538, .weight = 1 };
	ck_assert_int_eq(hqos_match_prefix(&over.match, true, "11.0.0.0/8"), 0);
	ck_assert_int_eq(hqos_sub_set(h, &over, 0, err, sizeof(err)), -ENOSPC);
	uint64_t t0 = 1 * SEC;
	uint32_t bi[256], drop[256];
	for (uint32_t i = 0; i < n; i += 128) {
		uint32_t m = n - i < 128 ? n - i : 128;
		for (uint32_t k = 0; k < m; k++) {
			bi[2 * k] = pkt4(1514, 0x0a000000u + i + k, 0, 1, 0);
			bi[2 * k + 1] = pkt4(1514, 0x0a000000u + i + k, 0, 2, 0);
		}
		ck_assert_uint_eq(hqos_enqueue(h, bi, 2 * m, prio, t0, drop), 0);
	}
	uint32_t first = 0, second = 0;
	uint32_t out[256], got;
	while ((got = hqos_dequeue(h, t0, out, 256)) != 0) {
		for (uint32_t k = 0; k < got; k++)
			ck_assert_uint_eq(tag_of(out[k]), 1);
		first += got;
		buffer_free(out, got);
	}
	ck_assert_uint_eq(first, n);
	ck_assert_uint_eq(hqos_next_ns(h), t0 + 1538 * 8 * US);
	take(h, t0 + 1538 * 8 * US - 1, 0);
	while ((got = hqos_dequeue(h, t0 + 1538 * 8 * US, out, 256)) != 0) {
		for (uint32_t k = 0; k < got; k++)
			ck_assert_uint_eq(tag_of(out[k]), 2);
		second += got;
		buffer_free(out, got);
	}
	ck_assert_uint_eq(second, n);
	ck_assert_uint_eq(hqos_held(h), 0);
	ck_assert_uint_eq(hqos_next_ns(h), UINT64_MAX);
	fprintf(stderr, "state per subscriber: %zu bytes\n", hqos_sub_state_bytes());
	hqos_destroy(h);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("hqos");
	TCase *tc = tcase_create("hqos");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_rate_exact);
	tcase_add_test(tc, test_far_wake);
	tcase_add_test(tc, test_priority);
	tcase_add_test(tc, test_weights);
	tcase_add_test(tc, test_ceil_borrowing);
	tcase_add_test(tc, test_port_limit);
	tcase_add_test(tc, test_queue_limit);
	tcase_add_test(tc, test_max_held_push_out);
	tcase_add_test(tc, test_codel_drop);
	tcase_add_test(tc, test_codel_ecn);
	tcase_add_test(tc, test_codel_times);
	tcase_add_test(tc, test_match);
	tcase_add_test(tc, test_match_burst);
	tcase_add_test(tc, test_remove_running);
	tcase_add_test(tc, test_scale);
	tcase_add_test(tc, test_sub_impair_loss);
	tcase_add_test(tc, test_sub_impair_delay);
	tcase_add_test(tc, test_sub_impair_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(suite());
}
