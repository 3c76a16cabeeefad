/* The log ring (base/log_ring.h): order, wrap, what counts as lost, cut
 * lines, clear, base_log's own ring, and writers racing a reader (in the
 * TSan list). */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/check_run.h"
#include "base/log_ring.h"
#include "base/util.h"

static void put_n(struct log_ring *r, uint32_t from, uint32_t to)
{
	for (uint32_t i = from; i <= to; i++) {
		char text[32];
		snprintf(text, sizeof(text), "line %u", i);
		log_ring_put(r, "test", text);
	}
}

START_TEST(wraps_oldest_first)
{
	struct log_ring r;
	ck_assert_int_eq(log_ring_init(&r, 4), 0);
	struct log_ring_entry e[16];
	uint64_t lost = 99;
	ck_assert_uint_eq(log_ring_read(&r, 0, e, 16, &lost), 0);
	ck_assert_uint_eq(lost, 0);
	put_n(&r, 1, 3);
	ck_assert_uint_eq(log_ring_read(&r, 0, e, 16, &lost), 3);
	ck_assert_uint_eq(lost, 0);
	ck_assert_str_eq(e[0].text, "line 1");
	ck_assert_str_eq(e[2].text, "line 3");
	put_n(&r, 4, 10);
	ck_assert_uint_eq(log_ring_read(&r, 0, e, 16, &lost), 4);
	ck_assert_uint_eq(lost, 6); /* lines 1..6 were overwritten */
	for (uint32_t i = 0; i < 4; i++) {
		char want[32];
		snprintf(want, sizeof(want), "line %u", 7 + i);
		ck_assert_uint_eq(e[i].seq, 7 + i);
		ck_assert_str_eq(e[i].text, want);
		ck_assert_str_eq(e[i].subsystem, "test");
		ck_assert(!e[i].cut);
		if (i)
			ck_assert_uint_ge(e[i].time_ns, e[i - 1].time_ns);
	}
	/* From a seq still held: nothing lost. */
	ck_assert_uint_eq(log_ring_read(&r, 9, e, 16, &lost), 2);
	ck_assert_uint_eq(e[0].seq, 9);
	ck_assert_uint_eq(lost, 0);
	/* Fewer than held: the newest, and what was skipped is not lost. */
	ck_assert_uint_eq(log_ring_read(&r, 7, e, 2, &lost), 2);
	ck_assert_uint_eq(e[0].seq, 9);
	ck_assert_uint_eq(e[1].seq, 10);
	ck_assert_uint_eq(lost, 0);
	/* From beyond the newest: nothing. */
	ck_assert_uint_eq(log_ring_read(&r, 11, e, 16, &lost), 0);
	ck_assert_uint_eq(lost, 0);
	uint64_t lines, overwritten;
	log_ring_counters(&r, &lines, &overwritten);
	ck_assert_uint_eq(lines, 10);
	ck_assert_uint_eq(overwritten, 6);
	log_ring_free(&r);
}
END_TEST

START_TEST(cuts_long_lines)
{
	struct log_ring r;
	ck_assert_int_eq(log_ring_init(&r, 2), 0);
	char text[LOG_RING_TEXT + 10], sub[LOG_RING_SUBSYSTEM + 10];
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = 0;
	memset(sub, 's', sizeof(sub) - 1);
	sub[sizeof(sub) - 1] = 0;
	log_ring_put(&r, sub, text);
	text[LOG_RING_TEXT] = 0; /* one more than fits */
	log_ring_put(&r, "a", text);
	struct log_ring_entry e[2];
	ck_assert_uint_eq(log_ring_read(&r, 0, e, 2, NULL), 2);
	ck_assert(e[0].cut);
	ck_assert_uint_eq(strlen(e[0].text), LOG_RING_TEXT - 1);
	ck_assert_uint_eq(strlen(e[0].subsystem), LOG_RING_SUBSYSTEM - 1);
	ck_assert(e[1].cut);
	ck_assert_uint_eq(strlen(e[1].text), LOG_RING_TEXT - 1);
	text[LOG_RING_TEXT - 1] = 0; /* exactly what fits: whole */
	log_ring_put(&r, "a", text);
	ck_assert_uint_eq(log_ring_read(&r, 3, e, 2, NULL), 1);
	ck_assert(!e[0].cut);
	ck_assert_str_eq(e[0].text, text);
	log_ring_free(&r);
}
END_TEST

START_TEST(clear_restarts_numbering)
{
	struct log_ring r;
	ck_assert_int_eq(log_ring_init(&r, 3), 0);
	put_n(&r, 1, 5);
	log_ring_clear(&r);
	struct log_ring_entry e[4];
	uint64_t lost = 99;
	ck_assert_uint_eq(log_ring_read(&r, 0, e, 4, &lost), 0);
	ck_assert_uint_eq(lost, 0);
	put_n(&r, 1, 1);
	ck_assert_uint_eq(log_ring_read(&r, 0, e, 4, &lost), 1);
	ck_assert_uint_eq(e[0].seq, 1);
	ck_assert_uint_eq(lost, 0);
	/* The counters only go up: clear lowers neither, and refilling what
	 * the clear emptied overwrites nothing. */
	put_n(&r, 2, 3);
	uint64_t lines, overwritten;
	log_ring_counters(&r, &lines, &overwritten);
	ck_assert_uint_eq(lines, 8);
	ck_assert_uint_eq(overwritten, 2);
	log_ring_free(&r);
	struct log_ring none;
	ck_assert_int_eq(log_ring_init(&none, 0), -EINVAL);
	log_ring_free(&none); /* nothing to free: fine */
}
END_TEST

/* base_log's lines land in the process's ring, stamped with the wall clock. */
START_TEST(base_log_fills_process_ring)
{
	struct log_ring *r = base_log_ring();
	ck_assert_ptr_nonnull(r);
	ck_assert_uint_eq(r->size, LOG_RING_SIZE);
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	base_log("ringtest", "hello %d", 42);
	struct log_ring_entry e;
	ck_assert_uint_eq(log_ring_read(r, 0, &e, 1, NULL), 1);
	ck_assert_str_eq(e.subsystem, "ringtest");
	ck_assert_str_eq(e.text, "hello 42");
	uint64_t t = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	ck_assert_uint_ge(e.time_ns, t);
	ck_assert_uint_lt(e.time_ns, t + 10ull * 1000000000ull);
}
END_TEST

/* Writers race a reader that follows the ring: every line read is whole
 * (its text names its writer and number, and matches its subsystem), each
 * writer's numbers rise, seqs rise by one except across what the read says
 * was lost, and read + lost is every line written. */
#define RACE_WRITERS 3
#define RACE_LINES 20000

struct race {
	struct log_ring r;
	int done;
};

struct writer_arg {
	struct race *race;
	uint32_t id;
};

static void *race_writer(void *p)
{
	struct writer_arg *a = p;
	char sub[16];
	snprintf(sub, sizeof(sub), "w%u", a->id);
	for (uint32_t i = 0; i < RACE_LINES; i++) {
		char text[48];
		snprintf(text, sizeof(text), "w%u %u", a->id, i);
		log_ring_put(&a->race->r, sub, text);
	}
	return NULL;
}

START_TEST(writers_race_reader)
{
	struct race race = { 0 };
	ck_assert_int_eq(log_ring_init(&race.r, 64), 0);
	pthread_t w[RACE_WRITERS];
	struct writer_arg args[RACE_WRITERS];
	for (uint32_t i = 0; i < RACE_WRITERS; i++) {
		args[i] = (struct writer_arg){ &race, i };
		ck_assert_int_eq(pthread_create(&w[i], NULL, race_writer, &args[i]), 0);
	}
	struct log_ring_entry e[64];
	uint64_t next = 1, lost_total = 0, read_total = 0;
	int64_t last[RACE_WRITERS];
	for (uint32_t i = 0; i < RACE_WRITERS; i++)
		last[i] = -1;
	for (uint32_t round = 0; next <= (uint64_t)RACE_WRITERS * RACE_LINES && round < 10000000; round++) {
		uint64_t lost;
		uint32_t n = log_ring_read(&race.r, next, e, 64, &lost);
		if (n)
			ck_assert_uint_eq(e[0].seq, next + lost);
		lost_total += lost;
		for (uint32_t k = 0; k < n; k++) {
			if (k)
				ck_assert_uint_eq(e[k].seq, e[k - 1].seq + 1);
			uint32_t id, num;
			ck_assert_int_eq(sscanf(e[k].text, "w%u %u", &id, &num), 2);
			ck_assert_uint_lt(id, RACE_WRITERS);
			char sub[16];
			snprintf(sub, sizeof(sub), "w%u", id);
			ck_assert_str_eq(e[k].subsystem, sub);
			ck_assert_int_gt((int64_t)num, last[id]);
			last[id] = num;
		}
		read_total += n;
		if (n)
			next = e[n - 1].seq + 1;
	}
	for (uint32_t i = 0; i < RACE_WRITERS; i++)
		pthread_join(w[i], NULL);
	ck_assert_uint_eq(read_total + lost_total, (uint64_t)RACE_WRITERS * RACE_LINES);
	ck_assert_uint_gt(read_total, 0);
	/* What the ring holds at the end: the newest 64, up to the last seq. */
	ck_assert_uint_eq(log_ring_read(&race.r, 0, e, 64, NULL), 64);
	ck_assert_uint_eq(e[63].seq, (uint64_t)RACE_WRITERS * RACE_LINES);
	log_ring_free(&race.r);
}
END_TEST

static Suite *log_ring_suite(void)
{
	Suite *s = suite_create("log_ring");
	TCase *tc = tcase_create("ring");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, wraps_oldest_first);
	tcase_add_test(tc, cuts_long_lines);
	tcase_add_test(tc, clear_restarts_numbering);
	tcase_add_test(tc, base_log_fills_process_ring);
	tcase_add_test(tc, writers_race_reader);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(log_ring_suite());
}
