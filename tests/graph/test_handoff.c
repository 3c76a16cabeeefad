/* Handoff ring suite: full, empty, wrap, exact contents, two threads. */
#include <check.h>

#include "tests/check_run.h"
#include <pthread.h>

#include "graph/handoff.h"
#include "base/util.h"

START_TEST(test_full_empty_wrap)
{
	struct handoff_ring *r = handoff_ring_create(4, -1);
	uint32_t in[64], out[64];
	uint16_t tags[64], otags[64];
	uint32_t next_in = 0, next_out = 0;
	ck_assert_uint_eq(handoff_dequeue(r, out, otags, 64), 0);
	for (int round = 0; round < 10; round++) {
		for (int i = 0; i < 64; i++) {
			in[i] = next_in + (uint32_t)i;
			tags[i] = (uint16_t)(0x8000 | (in[i] * 7));
		}
		/* 20 buffers: lines of 8, 8, 4 */
		ck_assert_uint_eq(handoff_enqueue(r, in, tags, 20), 20);
		ck_assert_uint_eq(handoff_count(r), 3);
		/* one line left: 8 of the next 20 go in, the caller keeps 12 */
		ck_assert_uint_eq(handoff_enqueue(r, in + 20, tags + 20, 20), 8);
		ck_assert_uint_eq(handoff_enqueue(r, in + 28, tags + 28, 1), 0);
		next_in += 28;
		struct handoff_stats st;
		handoff_ring_stats(r, &st);
		ck_assert_uint_eq(st.congestion, 2u * (round + 1));
		ck_assert_uint_eq(st.used, 4);
		/* a consumer with room for 12 takes one whole line of 8 only... */
		ck_assert_uint_eq(handoff_dequeue(r, out, otags, 12), 8);
		/* ...then the rest */
		ck_assert_uint_eq(handoff_dequeue(r, out + 8, otags + 8, 56), 20);
		for (uint32_t i = 0; i < 28; i++) {
			ck_assert_uint_eq(out[i], next_out + i);
			ck_assert_uint_eq(otags[i], ((next_out + i) * 7) & HANDOFF_TAG_MASK);
		}
		next_out += 28;
		ck_assert_uint_eq(handoff_count(r), 0);
	}
	handoff_ring_free(r);
}
END_TEST

START_TEST(test_lines_api)
{
	struct handoff_ring *r = handoff_ring_create(3, -1); /* rounded to 4 */
	struct handoff_line l[6] = { 0 };
	for (int i = 0; i < 6; i++) {
		l[i].n = (uint8_t)(i + 1);
		l[i].bi[0] = (uint32_t)i;
	}
	ck_assert_uint_eq(handoff_enqueue_lines(r, l, 6), 4);
	struct handoff_line o[8];
	ck_assert_uint_eq(handoff_dequeue_lines(r, o, 8), 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(o[i].n, i + 1);
		ck_assert_uint_eq(o[i].bi[0], i);
	}
	struct handoff_stats st;
	handoff_ring_stats(r, &st);
	ck_assert_uint_eq(st.buffers_in, 10);
	ck_assert_uint_eq(st.buffers_out, 10);
	ck_assert_uint_eq(st.congestion, 1);
	handoff_ring_free(r);
}
END_TEST

enum { N_XFER = 1000000 };

static void *producer(void *arg)
{
	struct handoff_ring *r = arg;
	uint32_t buf[37];
	uint32_t next = 0;
	while (next < N_XFER) {
		uint32_t n = MIN((uint32_t)ARRAY_LEN(buf), N_XFER - next);
		for (uint32_t i = 0; i < n; i++)
			buf[i] = next + i;
		uint32_t k = handoff_enqueue(r, buf, NULL, n);
		next += k;
		if (k < n)
			cpu_relax();
	}
	return NULL;
}

START_TEST(test_two_threads_in_order)
{
	struct handoff_ring *r = handoff_ring_create(64, -1);
	pthread_t th;
	pthread_create(&th, NULL, producer, r);
	uint32_t out[64], expect = 0;
	while (expect < N_XFER) {
		uint32_t n = handoff_dequeue(r, out, NULL, 64);
		for (uint32_t i = 0; i < n; i++)
			ck_assert_uint_eq(out[i], expect++);
	}
	pthread_join(th, NULL);
	ck_assert_uint_eq(handoff_count(r), 0);
	handoff_ring_free(r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("handoff");
	TCase *tc = tcase_create("ring");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, test_full_empty_wrap);
	tcase_add_test(tc, test_lines_api);
	tcase_add_test(tc, test_two_threads_in_order);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
