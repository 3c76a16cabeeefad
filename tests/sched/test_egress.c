/* sched/egress.h on a simulated clock: shaper byte accounting and release
 * times (exact, in ns), delay and jitter release order and times, strict
 * priority under the shaper, max-held overflow, and the pool whole after
 * every case.
 */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/buffer.h"
#include "sched/egress.h"
#include "sched/impair.h"
#include "tests/check_run.h"

#define MS 1000000ull
#define US 1000ull

/* A packet of len bytes in class c; its first byte is tag. */
static uint32_t pkt(uint32_t len, uint32_t c, uint8_t tag)
{
	uint32_t bi;
	ck_assert_uint_eq(buffer_alloc(&bi, 1, -1), 1);
	struct buffer *b = buffer_get(bi);
	b->current_length = (uint16_t)len;
	buffer_data(b)[0] = tag;
	sched_buffer_set_class(b, c);
	return bi;
}

static uint8_t tag_of(uint32_t bi)
{
	return buffer_data(buffer_get(bi))[0];
}

#include "tests/sched/sched_pool.h"

static void setup(void)
{
	sched_pool_up(4096, 0);
}

static void teardown(void)
{
	sched_pool_down();
}

static struct sched_egress *make(uint32_t max_held)
{
	char err[256];
	struct sched_egress *e = sched_egress_create(max_held, 42, err, sizeof(err));
	ck_assert_msg(e, "%s", err);
	return e;
}

static void enqueue_one(struct sched_egress *e, uint32_t bi, uint64_t now)
{
	uint32_t drop;
	ck_assert_uint_eq(sched_egress_enqueue(e, &bi, 1, prio, now, &drop), 0);
}

/* Dequeue at now, expecting exactly n packets; frees them and returns the
 * tag of the first. */
static int take(struct sched_egress *e, uint64_t now, uint32_t n)
{
	uint32_t out[256];
	return sched_took(out, sched_egress_dequeue(e, now, out, 256), now, n);
}

/* 10 Mbit/s, 3000-byte bucket, 1000-byte frames: three leave at once (the
 * full bucket), then one every 8000 bits / 10 Mbit/s = 800 us exactly. */
START_TEST(test_shaper_times)
{
	struct sched_egress *e = make(64);
	uint64_t t0 = 5 * MS;
	ck_assert_int_eq(sched_egress_set_shaper(e, 10000000, 3000, t0), 0);
	for (uint8_t i = 0; i < 10; i++)
		enqueue_one(e, pkt(1000, 0, i), t0);
	ck_assert_int_eq(take(e, t0, 3), 0);
	for (uint32_t k = 1; k <= 7; k++) {
		uint64_t due = t0 + k * 800 * US;
		ck_assert_uint_eq(sched_egress_next_ns(e), due);
		take(e, due - 1, 0);
		ck_assert_int_eq(take(e, due, 1), (int)(2 + k));
	}
	ck_assert_uint_eq(sched_egress_next_ns(e), UINT64_MAX);
	struct sched_egress_stats st;
	sched_egress_stats(e, &st);
	ck_assert_uint_eq(st.enqueued, 10);
	ck_assert_uint_eq(st.released, 10);
	ck_assert_uint_eq(st.held, 0);
	ck_assert_int_eq(st.tokens_bytes, 0);
	sched_egress_destroy(e);
}
END_TEST

/* Frame bytes, chain included: a 1514-byte frame in two buffers costs
 * 12112 bits, 1211.2 us at 10 Mbit/s; a late run releases what the
 * elapsed time paid for, up to the bucket's depth. */
START_TEST(test_shaper_bytes)
{
	struct sched_egress *e = make(64);
	ck_assert_int_eq(sched_egress_set_shaper(e, 10000000, 2 * 1514, 0), 0);
	for (uint8_t i = 0; i < 5; i++) {
		uint32_t bi = pkt(1000, 0, i);
		struct buffer *b = buffer_get(bi);
		uint32_t tail = pkt(514, 0, 99);
		b->flags |= BUFFER_F_NEXT_PRESENT;
		b->next_buffer = tail;
		b->total_length_not_including_first = 514;
		enqueue_one(e, bi, 0);
	}
	ck_assert_int_eq(take(e, 0, 2), 0);
	ck_assert_uint_eq(sched_egress_next_ns(e), 1211200);
	take(e, 1211199, 0);
	ck_assert_int_eq(take(e, 1211200, 1), 2);
	/* Two frame times and 5 ns later: two frames' worth, the bucket's depth. */
	ck_assert_uint_eq(take(e, 1211200 + 2 * 1211200 + 5, 2), 3);
	sched_egress_destroy(e);
}
END_TEST

/* A late run catches up: credit accrued while packets waited is not lost
 * to the bucket's cap; once the queues are empty, it is. */
START_TEST(test_shaper_catch_up)
{
	struct sched_egress *e = make(64);
	ck_assert_int_eq(sched_egress_set_shaper(e, 8000000, 1000, 0), 0); /* 1 byte per us */
	for (uint8_t i = 0; i < 10; i++)
		enqueue_one(e, pkt(1000, 0, i), 0);
	ck_assert_int_eq(take(e, 0, 1), 0);
	ck_assert_int_eq(take(e, 5000 * US, 5), 1); /* 5 ms late: 5 frames paid for */
	ck_assert_uint_eq(sched_egress_next_ns(e), 6000 * US);
	ck_assert_int_eq(take(e, 20000 * US, 4), 6); /* 14 ms of credit, 4 frames left */
	enqueue_one(e, pkt(1000, 0, 10), 20000 * US);
	enqueue_one(e, pkt(1000, 0, 11), 20000 * US);
	ck_assert_int_eq(take(e, 20000 * US, 1), 10); /* the leftover was capped to one frame */
	ck_assert_uint_eq(sched_egress_next_ns(e), 21000 * US);
	sched_egress_destroy(e);
}
END_TEST

/* A packet waiting for tokens is overtaken by a higher class that arrives
 * later; the lower one leaves at the next token time. */
START_TEST(test_strict_priority)
{
	struct sched_egress *e = make(256);
	prio[1] = 0; /* class 1: highest */
	prio[2] = 5;
	ck_assert_int_eq(sched_egress_set_shaper(e, 8000000, 1000, 0), 0); /* 1 byte per us */
	for (uint8_t i = 0; i < 50; i++)
		enqueue_one(e, pkt(1000, 0, i), 0); /* unclassified: lowest */
	ck_assert_int_eq(take(e, 0, 1), 0);
	enqueue_one(e, pkt(1000, 2, 200), 10 * US);
	enqueue_one(e, pkt(1000, 1, 100), 20 * US);
	enqueue_one(e, pkt(1000, 1, 101), 20 * US);
	ck_assert_uint_eq(sched_egress_next_ns(e), 1000 * US);
	ck_assert_int_eq(take(e, 1000 * US, 1), 100);
	ck_assert_int_eq(take(e, 2000 * US, 1), 101);
	ck_assert_int_eq(take(e, 3000 * US, 1), 200);
	ck_assert_int_eq(take(e, 4000 * US, 1), 1);
	struct sched_egress_stats st;
	sched_egress_stats(e, &st);
	ck_assert_uint_eq(st.released_class[1], 2);
	ck_assert_uint_eq(st.released_class[2], 1);
	ck_assert_uint_eq(st.held_class[0], 48);
	sched_egress_destroy(e); /* frees the 48 still held */
}
END_TEST

/* Fixed delay: each packet leaves delay after it came, in order. */
START_TEST(test_delay_times)
{
	struct sched_egress *e = make(64);
	ck_assert_int_eq(sched_egress_set_delay(e, 20 * MS, 0), 0);
	enqueue_one(e, pkt(100, 0, 0), 1 * MS);
	enqueue_one(e, pkt(100, 0, 1), 6 * MS);
	enqueue_one(e, pkt(100, 0, 2), 6 * MS);
	take(e, 6 * MS, 0);
	ck_assert_uint_eq(sched_egress_next_ns(e), 21 * MS);
	take(e, 21 * MS - 1, 0);
	ck_assert_int_eq(take(e, 21 * MS, 1), 0);
	ck_assert_uint_eq(sched_egress_next_ns(e), 26 * MS);
	ck_assert_int_eq(take(e, 30 * MS, 2), 1);
	ck_assert_uint_eq(sched_egress_next_ns(e), UINT64_MAX);
	sched_egress_destroy(e);
}
END_TEST

/* Jitter (netem's: uniform, and it may reorder): each packet's departure
 * within delay +- jitter of its arrival, released at its departure time
 * (never before, and here exactly: the clock steps to next_ns), spread
 * both ways. */
/* 400 dense (100 us apart), then 600 sparse (5 ms apart). */
static uint64_t arrival_of(uint32_t i)
{
	return i < 400 ? i * 100 * US : 40 * MS + (i - 400) * 5 * MS;
}

START_TEST(test_delay_jitter)
{
	struct sched_egress *e = make(2048);
	ck_assert_int_eq(sched_egress_set_delay(e, 10 * MS, 2 * MS), 0);
	uint64_t early = 0, late = 0, reordered = 0;
	for (uint32_t i = 0; i < 1000; i++) {
		uint32_t bi = pkt(100, 0, (uint8_t)i);
		enqueue_one(e, bi, arrival_of(i));
		uint64_t dep = buffer_get(bi)->timestamp_ns; /* what the impairer computed */
		ck_assert_uint_le(dep, arrival_of(i) + 12 * MS);
		ck_assert_uint_ge(dep, arrival_of(i) + 8 * MS);
		early += dep < arrival_of(i) + 10 * MS;
		late += dep > arrival_of(i) + 10 * MS;
	}
	uint32_t n = 0, out[1];
	uint64_t last_dep = 0;
	for (uint64_t t = 0; n < 1000; t = sched_egress_next_ns(e)) {
		ck_assert_uint_ne(t, UINT64_MAX);
		while (sched_egress_dequeue(e, t, out, 1) == 1) {
			uint64_t dep = buffer_get(out[0])->timestamp_ns;
			ck_assert_uint_le(dep, t); /* never early */
			ck_assert_uint_le(t - dep, 1024); /* the 1.024 us slot at most */
			reordered += dep < last_dep;
			last_dep = dep > last_dep ? dep : last_dep;
			n++;
			buffer_free(out, 1);
		}
	}
	ck_assert_uint_gt(early, 200);
	ck_assert_uint_gt(late, 200);
	ck_assert_uint_eq(reordered, 0); /* released in departure order (slots apart) */
	sched_egress_destroy(e);
}
END_TEST

/* Shaper then delay: a packet leaves the shaper at its token time and the
 * line delay after that. */
START_TEST(test_shaper_and_delay)
{
	struct sched_egress *e = make(64);
	ck_assert_int_eq(sched_egress_set_shaper(e, 8000000, 1000, 0), 0);
	ck_assert_int_eq(sched_egress_set_delay(e, 5 * MS, 0), 0);
	enqueue_one(e, pkt(1000, 0, 0), 0);
	enqueue_one(e, pkt(1000, 0, 1), 0);
	take(e, 0, 0);
	ck_assert_uint_eq(sched_egress_next_ns(e), 1 * MS); /* the shaper's, first */
	take(e, 1 * MS, 0);
	ck_assert_uint_eq(sched_egress_next_ns(e), 5 * MS);
	ck_assert_int_eq(take(e, 5 * MS, 1), 0);
	ck_assert_int_eq(take(e, 6 * MS, 1), 1);
	sched_egress_destroy(e);
}
END_TEST

/* Over max-held the arriving packets are refused, in order, and counted
 * per class; a slot freed by a release is usable again. */
START_TEST(test_max_held)
{
	struct sched_egress *e = make(5);
	ck_assert_int_eq(sched_egress_set_delay(e, 1 * MS, 0), 0);
	uint32_t bi[8], drop[8];
	for (uint32_t i = 0; i < 8; i++)
		bi[i] = pkt(100, i < 6 ? 0 : 3, (uint8_t)i);
	ck_assert_uint_eq(sched_egress_enqueue(e, bi, 8, prio, 0, drop), 3);
	ck_assert_uint_eq(tag_of(drop[0]), 5);
	ck_assert_uint_eq(tag_of(drop[2]), 7);
	buffer_free(drop, 3);
	struct sched_egress_stats st;
	sched_egress_stats(e, &st);
	ck_assert_uint_eq(st.held, 5);
	ck_assert_uint_eq(st.dropped, 3);
	ck_assert_uint_eq(st.dropped_class[0], 1);
	ck_assert_uint_eq(st.dropped_class[3], 2);
	take(e, 1 * MS, 5);
	bi[0] = pkt(100, 0, 8);
	ck_assert_uint_eq(sched_egress_enqueue(e, bi, 1, prio, 1 * MS, drop), 0);
	sched_egress_destroy(e);
}
END_TEST

START_TEST(test_bad_config)
{
	char err[256];
	struct sched_egress *e = make(4);
	ck_assert_int_eq(sched_egress_set_shaper(e, 999, 16384, 0), -EINVAL);
	ck_assert_int_eq(sched_egress_set_shaper(e, 10000000, 10, 0), -EINVAL);
	ck_assert_int_eq(sched_egress_set_delay(e, 1 * MS, 2 * MS), -EINVAL);
	ck_assert_int_eq(sched_egress_set_max_held(e, 0), -EINVAL);
	struct sched_egress_stats st;
	sched_egress_stats(e, &st);
	ck_assert_uint_eq(st.cfg.rate_bps, 0);
	ck_assert_uint_eq(st.cfg.delay_ns, 0);
	ck_assert_ptr_null(sched_egress_create(0, 1, err, sizeof(err)));
	/* Nothing configured: due at once. */
	enqueue_one(e, pkt(60, 0, 7), 123);
	ck_assert_int_eq(take(e, 123, 1), 7);
	sched_egress_destroy(e);
}
END_TEST

/* The impairment in the schedule: losses wait in take_dropped with their
 * reason, duplicates count in, and the per-class counters add up: every
 * packet taken or made is released or dropped, nothing stays held. */
START_TEST(test_impair_accounting)
{
	struct sched_egress *e = make(4096);
	struct sched_impair_config c = {
		.delay_ns = 1 * MS,
		.loss_model = SCHED_IMPAIR_LOSS_RANDOM,
		.loss = SCHED_IMPAIR_P_ONE / 10,
		.duplicate = SCHED_IMPAIR_P_ONE / 10,
		.seed = 3,
	};
	char err[128];
	ck_assert_int_eq(sched_egress_set_impair(e, &c, err, sizeof(err)), 0);
	uint32_t n_in = 0, n_out = 0, n_drop = 0, out[256];
	for (uint32_t i = 0; i < 1000; i++) {
		enqueue_one(e, pkt(100, 2, (uint8_t)i), i * 10 * US);
		n_in++;
		uint32_t k;
		while ((k = sched_egress_take_dropped(e, out, 256)) != 0) {
			for (uint32_t j = 0; j < k; j++)
				ck_assert_uint_eq(sched_impair_drop_reason(buffer_get(out[j])), SCHED_IMPAIR_DROP_LOSS_RANDOM);
			buffer_free(out, k);
			n_drop += k;
		}
	}
	for (uint64_t t = sched_egress_next_ns(e); t != UINT64_MAX; t = sched_egress_next_ns(e)) {
		uint32_t k = sched_egress_dequeue(e, t, out, 256);
		for (uint32_t j = 0; j < k; j++)
			ck_assert_uint_le(buffer_get(out[j])->timestamp_ns, t);
		buffer_free(out, k);
		n_out += k;
	}
	struct sched_impair_stats is;
	sched_impair_stats(sched_egress_impair(e), &is);
	struct sched_egress_stats st;
	sched_egress_stats(e, &st);
	ck_assert_uint_gt(is.duplicated, 50);
	ck_assert_uint_gt(is.lost_random, 50);
	ck_assert_uint_eq(n_drop, is.lost_random);
	ck_assert_uint_eq(n_in + is.duplicated, n_out + n_drop);
	ck_assert_uint_eq(st.enqueued, n_in + is.duplicated);
	ck_assert_uint_eq(st.released, n_out);
	ck_assert_uint_eq(st.dropped, n_drop);
	ck_assert_uint_eq(st.held, 0);
	ck_assert_uint_eq(st.held_class[2], 0);
	ck_assert_uint_eq(st.released_class[2], n_out);
	ck_assert_uint_eq(st.dropped_class[2], n_drop);
	ck_assert_uint_eq(st.cfg.delay_ns, 1 * MS);
	/* off: nothing impaired from now on */
	ck_assert_int_eq(sched_egress_set_impair(e, NULL, err, sizeof(err)), 0);
	enqueue_one(e, pkt(100, 0, 7), 50 * MS);
	ck_assert_int_eq(take(e, 50 * MS, 1), 7);
	sched_egress_destroy(e);
}
END_TEST

/* A class's impairment: class 1's packets wait 5 ms before its class
 * queue, class 0's do not; under a shaper the delayed packet then takes
 * its turn by priority; with the interface's impairment on top, both
 * stages add up. */
START_TEST(test_class_impair)
{
	struct sched_egress *e = make(64);
	struct sched_impair_config c = { .delay_ns = 5 * MS };
	char err[128];
	ck_assert_int_eq(sched_egress_set_class_impair(e, 1, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(sched_egress_set_class_impair(e, SCHED_MAX_CLASSES, &c, err, sizeof(err)), -EINVAL);
	ck_assert(sched_egress_impaired(e));
	enqueue_one(e, pkt(100, 1, 1), 1 * MS);
	enqueue_one(e, pkt(100, 0, 2), 1 * MS);
	ck_assert_int_eq(take(e, 1 * MS, 1), 2);
	ck_assert_uint_eq(sched_egress_next_ns(e), 6 * MS);
	take(e, 6 * MS - 1, 0);
	ck_assert_int_eq(take(e, 6 * MS, 1), 1);
	/* Under a shaper of 8 Mbit/s (a byte a us) with a 100-byte bucket,
	 * priority 0 for class 1: released at 5 ms, it leaves at once. */
	prio[1] = 0;
	ck_assert_int_eq(sched_egress_set_shaper(e, 8000000, 100, 10 * MS), 0);
	enqueue_one(e, pkt(100, 1, 3), 10 * MS);
	ck_assert_uint_eq(sched_egress_next_ns(e), 15 * MS);
	ck_assert_int_eq(take(e, 15 * MS, 1), 3);
	/* Interface delay 2 ms on top: 5 + 2. */
	ck_assert_int_eq(sched_egress_set_shaper(e, 0, 0, 20 * MS), 0);
	ck_assert_int_eq(sched_egress_set_delay(e, 2 * MS, 0), 0);
	enqueue_one(e, pkt(100, 1, 4), 20 * MS);
	ck_assert_uint_eq(sched_egress_next_ns(e), 25 * MS);
	take(e, 25 * MS, 0);
	ck_assert_uint_eq(sched_egress_next_ns(e), 27 * MS);
	ck_assert_int_eq(take(e, 27 * MS, 1), 4);
	/* off: class 1 passes straight on; held packets none */
	ck_assert_int_eq(sched_egress_set_class_impair(e, 1, NULL, err, sizeof(err)), 0);
	ck_assert_int_eq(sched_egress_set_delay(e, 0, 0), 0);
	ck_assert(!sched_egress_impaired(e));
	enqueue_one(e, pkt(100, 1, 5), 30 * MS);
	ck_assert_int_eq(take(e, 30 * MS, 1), 5);
	prio[1] = SCHED_PRIO_LOWEST;
	sched_egress_destroy(e);
}
END_TEST

/* A new max-held reaches the class impairers as well as the interface's:
 * created at 4, raised to 8, class 1's impairer holds 8 (at 4 it would
 * drop four as over max-held), the schedule refuses the ninth, and all 8
 * leave after the delay. */
START_TEST(test_max_held_reaches_classes)
{
	struct sched_egress *e = make(4);
	struct sched_impair_config c = { .delay_ns = 5 * MS };
	char err[128];
	ck_assert_int_eq(sched_egress_set_class_impair(e, 1, &c, err, sizeof(err)), 0);
	ck_assert_int_eq(sched_egress_set_max_held(e, 8), 0);
	for (uint8_t i = 0; i < 8; i++)
		enqueue_one(e, pkt(100, 1, i), 1 * MS);
	struct sched_impair_stats st;
	sched_impair_stats(sched_egress_class_impair(e, 1), &st);
	ck_assert_uint_eq(st.over_max_held, 0);
	ck_assert_uint_eq(st.max_held, 8);
	uint32_t bi = pkt(100, 1, 9), dropped;
	ck_assert_uint_eq(sched_egress_enqueue(e, &bi, 1, prio, 1 * MS, &dropped), 1);
	ck_assert_uint_eq(dropped, bi);
	buffer_free(&dropped, 1);
	ck_assert_uint_eq(sched_egress_take_dropped(e, &dropped, 1), 0);
	take(e, 6 * MS - 1, 0);
	ck_assert_int_eq(take(e, 6 * MS, 8), 0);
	ck_assert_int_eq(sched_egress_set_max_held(e, SCHED_HELD_MAX + 1), -EINVAL);
	sched_impair_stats(sched_egress_class_impair(e, 1), &st);
	ck_assert_uint_eq(st.max_held, 8);
	sched_egress_destroy(e);
}
END_TEST

static Suite *egress_suite(void)
{
	Suite *s = suite_create("sched-egress");
	TCase *tc = tcase_create("egress");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_shaper_times);
	tcase_add_test(tc, test_shaper_bytes);
	tcase_add_test(tc, test_shaper_catch_up);
	tcase_add_test(tc, test_strict_priority);
	tcase_add_test(tc, test_delay_times);
	tcase_add_test(tc, test_delay_jitter);
	tcase_add_test(tc, test_shaper_and_delay);
	tcase_add_test(tc, test_max_held);
	tcase_add_test(tc, test_bad_config);
	tcase_add_test(tc, test_impair_accounting);
	tcase_add_test(tc, test_class_impair);
	tcase_add_test(tc, test_max_held_reaches_classes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(egress_suite());
}
