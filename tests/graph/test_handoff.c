/* Handoff ring suite: full, empty, wrap, exact contents, two threads. */
#include <check.h>

#include "tests/check_run.h"
#include <pthread.h>
#include <string.h>

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

/* A mailbox: one line, full or empty by its own count; exact contents
 * through both call pairs, refusals counted as congestion, statistics as a
 * ring of one line. */
START_TEST(test_mailbox)
{
	struct handoff_ring *r = handoff_mailbox_create(1, -1);
	ck_assert_ptr_nonnull(r);
	struct handoff_line l[2] = { 0 }, o[2];
	for (uint32_t s = 0; s < 5; s++) {
		l[0].bi[s] = 100 + s;
		l[0].tag[s] = (uint16_t)(0x1000 + s);
	}
	l[0].n = 5;
	l[0].flags = 0x3;
	l[1].n = 8;
	ck_assert_uint_eq(handoff_count(r), 0);
	ck_assert_uint_eq(handoff_dequeue_lines(r, o, 2), 0);
	/* Two lines offered: one taken, the call counted as congested. */
	ck_assert_uint_eq(handoff_enqueue_lines(r, l, 2), 1);
	ck_assert_uint_eq(handoff_count(r), 1);
	/* Full: refused until the consumer takes it. */
	ck_assert_uint_eq(handoff_enqueue_lines(r, l + 1, 1), 0);
	uint32_t bi[8] = { 0 };
	ck_assert_uint_eq(handoff_enqueue(r, bi, NULL, 3), 0);
	/* A consumer with room for 4 takes nothing: a line is never split. */
	ck_assert_uint_eq(handoff_dequeue(r, bi, NULL, 4), 0);
	memset(o, 0, sizeof(o));
	ck_assert_uint_eq(handoff_dequeue_lines(r, o, 2), 1);
	ck_assert_uint_eq(o[0].n, 5);
	ck_assert_uint_eq(o[0].flags, 0x3);
	for (uint32_t s = 0; s < 5; s++) {
		ck_assert_uint_eq(o[0].bi[s], 100 + s);
		ck_assert_uint_eq(o[0].tag[s], 0x1000 + s);
	}
	ck_assert_uint_eq(handoff_count(r), 0);
	/* The buffer calls: 11 offered, a line of 8 taken, tags masked. */
	uint32_t in[11];
	uint16_t tags[11], otags[8];
	for (uint32_t i = 0; i < 11; i++) {
		in[i] = 7 * i;
		tags[i] = (uint16_t)(0x8000 | i);
	}
	ck_assert_uint_eq(handoff_enqueue(r, in, tags, 11), 8);
	ck_assert_uint_eq(handoff_dequeue(r, bi, otags, 8), 8);
	for (uint32_t i = 0; i < 8; i++) {
		ck_assert_uint_eq(bi[i], 7 * i);
		ck_assert_uint_eq(otags[i], i);
	}
	ck_assert_uint_eq(handoff_dequeue(r, bi, otags, 8), 0);
	struct handoff_stats st;
	handoff_ring_stats(r, &st);
	ck_assert_uint_eq(st.n_lines, 1);
	ck_assert_uint_eq(st.used, 0);
	ck_assert_uint_eq(st.lines_in, 2);
	ck_assert_uint_eq(st.lines_out, 2);
	ck_assert_uint_eq(st.buffers_in, 13);
	ck_assert_uint_eq(st.buffers_out, 13);
	ck_assert_uint_eq(st.congestion, 4); /* 2 lines offered, full twice, 11 buffers for one line */
	handoff_ring_free(r);

	/* 3 lines rounded to 4; lines leave in order across the wrap. */
	r = handoff_mailbox_create(3, -1);
	struct handoff_line w[6] = { 0 }, wo[6];
	for (uint32_t i = 0; i < 6; i++) {
		w[i].n = (uint8_t)(i + 1);
		w[i].bi[0] = 50 + i;
	}
	ck_assert_uint_eq(handoff_enqueue_lines(r, w, 6), 4);
	ck_assert_uint_eq(handoff_count(r), 4);
	ck_assert_uint_eq(handoff_dequeue_lines(r, wo, 2), 2);
	ck_assert_uint_eq(handoff_count(r), 2); /* lines in less lines out */
	ck_assert_uint_eq(handoff_enqueue_lines(r, w + 4, 2), 2);
	ck_assert_uint_eq(handoff_count(r), 4);
	/* Room for 11 buffers: lines of 3 and 4 (7), not the 5 after them. */
	ck_assert_uint_eq(handoff_dequeue(r, bi, NULL, 11), 7);
	ck_assert_uint_eq(bi[0], 52);
	ck_assert_uint_eq(bi[3], 53);
	ck_assert_uint_eq(handoff_dequeue_lines(r, wo + 2, 4), 2);
	ck_assert_uint_eq(wo[0].bi[0], 50);
	ck_assert_uint_eq(wo[1].bi[0], 51);
	ck_assert_uint_eq(wo[2].bi[0], 54);
	ck_assert_uint_eq(wo[3].bi[0], 55);
	ck_assert_uint_eq(wo[3].n, 6);
	handoff_ring_stats(r, &st);
	ck_assert_uint_eq(st.n_lines, 4);
	ck_assert_uint_eq(st.used, 0);
	handoff_ring_free(r);
}
END_TEST

enum { N_XFER = 1000000 };
/* Buffers the producer sends: a mailbox of one line moves at most 8 per
 * handoff, a round trip each, so it sends fewer (a loaded 2-vCPU box
 * time-shares the two threads), and the deep mailbox a quarter. */
static uint32_t n_xfer;

static void *producer(void *arg)
{
	struct handoff_ring *r = arg;
	uint32_t buf[37];
	uint32_t next = 0;
	while (next < n_xfer) {
		uint32_t n = MIN((uint32_t)ARRAY_LEN(buf), n_xfer - next);
		for (uint32_t i = 0; i < n; i++)
			buf[i] = next + i;
		uint32_t k = handoff_enqueue(r, buf, NULL, n);
		next += k;
		if (k < n)
			cpu_relax();
	}
	return NULL;
}

/* A mailbox's word posted back rides in its first line: 0 before any post,
 * the last one after; no line's contents carry it either way, and a full
 * line keeps its slots. */
START_TEST(test_mailbox_post)
{
	struct handoff_ring *m = handoff_mailbox_create(2, -1);
	ck_assert_ptr_nonnull(m);
	struct handoff_line l[1] = { 0 }, o[1];
	ck_assert_uint_eq(handoff_mailbox_posted(m), 0);
	handoff_mailbox_post(m, 7);
	for (uint32_t s = 0; s < 8; s++)
		l[0].bi[s] = 40 + s;
	l[0].n = 8;
	l[0].post = 99;
	ck_assert_uint_eq(handoff_enqueue_lines(m, l, 1), 1);
	ck_assert_uint_eq(handoff_mailbox_posted(m), 7);
	handoff_mailbox_post(m, 8);
	memset(o, 0, sizeof(o));
	ck_assert_uint_eq(handoff_dequeue_lines(m, o, 1), 1);
	ck_assert_uint_eq(o[0].n, 8);
	ck_assert_uint_eq(o[0].post, 0);
	for (uint32_t s = 0; s < 8; s++)
		ck_assert_uint_eq(o[0].bi[s], 40 + s);
	ck_assert_uint_eq(handoff_mailbox_posted(m), 8);
	handoff_ring_free(m);
}
END_TEST

/* The same stream through a ring of 64 lines (_i 0), a mailbox of one
 * line (_i 1) and a mailbox of 64 (_i 2, the distributor's default
 * depth), in order and nothing lost. */
START_TEST(test_two_threads_in_order)
{
	struct handoff_ring *r = _i == 0 ? handoff_ring_create(64, -1) : handoff_mailbox_create(_i == 1 ? 1 : 64, -1);
	n_xfer = _i == 0 ? N_XFER : _i == 1 ? N_XFER / 50 : N_XFER / 4;
	pthread_t th;
	pthread_create(&th, NULL, producer, r);
	uint32_t out[64], expect = 0;
	while (expect < n_xfer) {
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
	tcase_add_test(tc, test_mailbox);
	tcase_add_test(tc, test_mailbox_post);
	tcase_add_loop_test(tc, test_two_threads_in_order, 0, 3);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
