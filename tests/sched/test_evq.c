/* Event queues: the priority stage as the daemon uses it (sched-ingress
 * enqueues, sched-dist dequeues, both on thread 0), exact orders and
 * counters on one thread.
 *
 *   - strict priority: over every dequeue, levels come out in order, each
 *     (queue, level) first in first out; higher levels that arrive midway
 *     go next; counters per level;
 *   - weighted round robin: the exact turn order of 3 backlogged queues,
 *     shares exactly 1:3:6 whatever the burst size cuts the turns into,
 *     a queue that empties mid-turn gives the turn up;
 *   - set-weight: shares follow the new weights from the next turn, a
 *     turn in progress is cut, bad changes refused;
 *   - bounds: full queues refuse and count, room again once taken, a
 *     burst taken up to its first refusal; bad queues and priorities
 *     refused and counted; FIFOs that wrap keep their order; setup errors;
 *   - runs: bursts of every length to 40 with the key changing at every
 *     place are split exactly there (the enqueue's eight-at-a-time scan).
 */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sched/evq.h"
#include "tests/check_run.h"

static struct evq *make_evq(uint32_t n_queues)
{
	char err[128];
	struct evq *q = evq_create(n_queues, err, sizeof(err));
	ck_assert_msg(q != NULL, "%s", err);
	return q;
}

static void setup_queue(struct evq *q, uint32_t queue, uint32_t weight, uint32_t depth)
{
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	qc.weight = weight;
	qc.depth = depth;
	ck_assert_int_eq(evq_queue_setup(q, queue, &qc), 0);
}

static struct evq_event event(uint32_t queue, uint32_t prio, uint64_t seq)
{
	return (struct evq_event){.flow = (uint32_t)seq, .queue = (uint8_t)queue, .priority = (uint8_t)prio, .u64 = seq};
}

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* ---- strict priority ---------------------------------------------------- */

#define PRIO_EACH 500

struct prio_check {
	uint64_t last[2][EVQ_LEVELS]; /* last seq + 1 seen per (queue, level) */
	uint64_t got[EVQ_LEVELS];
	uint32_t lowest;              /* the highest level number seen so far */
};

static void prio_see(struct prio_check *c, const struct evq_event *ev, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t l = ev[i].priority;
		ck_assert_msg(l >= c->lowest, "level %u after level %u", l, c->lowest);
		c->lowest = l;
		ck_assert_uint_gt(ev[i].u64 + 1, c->last[ev[i].queue][l]); /* first in, first out */
		c->last[ev[i].queue][l] = ev[i].u64 + 1;
		c->got[l]++;
	}
}

START_TEST(test_strict_priority)
{
	struct evq *q = make_evq(2);
	for (uint32_t i = 0; i < 2; i++)
		setup_queue(q, i, 1 + i, 8192);
	uint64_t enq[EVQ_LEVELS] = {0}, rng = 12345, seq = 0;
	/* Everything queued first, levels and queues shuffled. */
	for (uint32_t i = 0; i < PRIO_EACH * EVQ_LEVELS; i++) {
		struct evq_event ev = event(xorshift(&rng) & 1, xorshift(&rng) % EVQ_LEVELS, seq++);
		ck_assert_uint_eq(evq_enqueue(q, &ev, 1), 1);
		enq[ev.priority]++;
	}
	struct prio_check c = {0};
	struct evq_event ev[13];
	uint32_t n;
	bool injected = false;
	while ((n = evq_dequeue(q, ev, 1 + (uint32_t)(xorshift(&rng) % 13))) != 0) {
		prio_see(&c, ev, n);
		/* Midway, higher-priority events arrive: they go next. */
		if (!injected && c.got[5]) {
			for (uint32_t i = 0; i < PRIO_EACH; i++) {
				struct evq_event e = event(i & 1, 1 + i % 2, seq++);
				ck_assert_uint_eq(evq_enqueue(q, &e, 1), 1);
				enq[e.priority]++;
			}
			ck_assert_uint_eq(evq_dequeue(q, ev, 1), 1);
			ck_assert_uint_eq(ev[0].priority, 1);
			c.lowest = 1;
			prio_see(&c, ev, 1);
			injected = true;
		}
	}
	ck_assert(injected);
	ck_assert_uint_eq(evq_held(q), 0);
	struct evq_stats st;
	evq_stats(q, &st);
	for (uint32_t l = 0; l < EVQ_LEVELS; l++) {
		ck_assert_uint_eq(c.got[l], enq[l]);
		ck_assert_uint_eq(st.dispatched_level[l], enq[l]);
	}
	ck_assert_uint_eq(st.dispatched, seq);
	ck_assert_uint_eq(st.enqueued, seq);
	evq_destroy(q);
}
END_TEST

/* ---- weighted round robin ----------------------------------------------- */

static const uint32_t weights[3] = {1, 3, 6};

/* Keep queues 0 .. n_queues - 1 backlogged: each holds at least 64 events
 * at level `prio`. */
static void backlog(struct evq *q, uint32_t n_queues, uint32_t prio, uint64_t *seq)
{
	for (uint32_t i = 0; i < n_queues; i++) {
		struct evq_queue_stats qs;
		ck_assert_int_eq(evq_queue_stats(q, i, &qs), 0);
		for (; qs.held < 64; qs.held++) {
			struct evq_event e = event(i, prio, (*seq)++);
			ck_assert_uint_eq(evq_enqueue(q, &e, 1), 1);
		}
	}
}

START_TEST(test_weighted_order)
{
	struct evq *q = make_evq(3);
	for (uint32_t i = 0; i < 3; i++)
		setup_queue(q, i, weights[i], 1024);
	uint64_t seq = 0;
	backlog(q, 3, 3, &seq);
	/* Turns in queue order after the last turn's queue (none yet: queue 0
	 * had it), each `weight` long. */
	struct evq_event ev[20];
	ck_assert_uint_eq(evq_dequeue(q, ev, 20), 20);
	static const uint8_t want[20] = {1, 1, 1, 2, 2, 2, 2, 2, 2, 0, 1, 1, 1, 2, 2, 2, 2, 2, 2, 0};
	for (uint32_t k = 0; k < 20; k++)
		ck_assert_uint_eq(ev[k].queue, want[k]);
	evq_destroy(q);
}
END_TEST

/* Bursts of every size from 1 to 17 cut the turns anywhere: the shares
 * stay exactly the weights over every multiple of 10 events. */
START_TEST(test_weighted_shares)
{
	struct evq *q = make_evq(3);
	for (uint32_t i = 0; i < 3; i++)
		setup_queue(q, i, weights[i], 1024);
	uint64_t seq = 0, d[3] = {0}, total = 0;
	struct evq_event ev[17];
	for (uint32_t round = 0; round < 2000; round++) {
		backlog(q, 3, 3, &seq);
		uint32_t n = evq_dequeue(q, ev, 1 + round % 17);
		ck_assert_uint_eq(n, 1 + round % 17);
		for (uint32_t k = 0; k < n; k++) {
			d[ev[k].queue]++;
			if (++total % 10 == 0)
				for (uint32_t i = 0; i < 3; i++)
					ck_assert_uint_eq(d[i], total / 10 * weights[i]);
		}
	}
	struct evq_stats st;
	evq_stats(q, &st);
	ck_assert_uint_eq(st.dispatched, total);
	ck_assert_uint_eq(st.dispatched_level[3], total);
	ck_assert_uint_eq(st.refused, 0);
	for (uint32_t i = 0; i < 3; i++) {
		struct evq_queue_stats qs;
		ck_assert_int_eq(evq_queue_stats(q, i, &qs), 0);
		ck_assert_uint_eq(qs.dispatched, d[i]);
	}
	evq_destroy(q);
}
END_TEST

/* A queue that empties in its turn gives the turn up: the others go on,
 * and a higher level served meanwhile does not disturb the turns. */
START_TEST(test_weighted_empty_turn)
{
	struct evq *q = make_evq(3);
	setup_queue(q, 0, 4, 64);
	setup_queue(q, 1, 4, 64);
	setup_queue(q, 2, 1, 64);
	uint64_t seq = 0;
	struct evq_event in[8] = {event(0, 6, seq++), event(0, 6, seq++), event(1, 6, seq++), event(1, 6, seq++),
				  event(1, 6, seq++), event(1, 6, seq++), event(1, 6, seq++), event(1, 6, seq++)};
	ck_assert_uint_eq(evq_enqueue(q, in, 8), 8);
	struct evq_event ev[8];
	/* queue 1's turn (4), queue 0's (2: emptied), queue 1's again (2) */
	ck_assert_uint_eq(evq_dequeue(q, ev, 5), 5);
	ck_assert_uint_eq(evq_dequeue(q, ev + 5, 8), 3);
	static const uint8_t want[8] = {1, 1, 1, 1, 0, 0, 1, 1};
	for (uint32_t k = 0; k < 8; k++)
		ck_assert_uint_eq(ev[k].queue, want[k]);
	ck_assert_uint_eq(evq_dequeue(q, ev, 8), 0);
	/* One queue alone at a level is served whole; a level above first. */
	struct evq_event more[3] = {event(2, 6, seq++), event(2, 6, seq++), event(2, 0, seq++)};
	ck_assert_uint_eq(evq_enqueue(q, more, 3), 3);
	ck_assert_uint_eq(evq_dequeue(q, ev, 8), 3);
	ck_assert_uint_eq(ev[0].u64, more[2].u64);
	ck_assert_uint_eq(ev[1].u64, more[0].u64);
	ck_assert_uint_eq(ev[2].u64, more[1].u64);
	ck_assert_uint_eq(evq_held(q), 0);
	evq_destroy(q);
}
END_TEST

/* ---- set-weight --------------------------------------------------------- */

/* `calls` dequeues of 8 (sched-dist's take with 8 slots free), counted per
 * queue. */
static void set_weight_run(struct evq *q, uint32_t calls, uint64_t got[2], uint64_t *seq)
{
	struct evq_event ev[8];
	got[0] = got[1] = 0;
	for (uint32_t i = 0; i < calls; i++) {
		backlog(q, 2, 2, seq);
		ck_assert_uint_eq(evq_dequeue(q, ev, 8), 8);
		for (uint32_t k = 0; k < 8; k++)
			got[ev[k].queue]++;
	}
}

START_TEST(test_set_weight)
{
	struct evq *q = make_evq(3);
	setup_queue(q, 0, 1, 1024);
	setup_queue(q, 1, 1, 1024);
	uint64_t seq = 0, got[2];
	set_weight_run(q, 100, got, &seq);
	ck_assert_uint_eq(got[0], 400);
	ck_assert_uint_eq(got[1], 400);
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 3), 0);
	set_weight_run(q, 1, got, &seq); /* the turn in progress ends */
	set_weight_run(q, 100, got, &seq);
	ck_assert_uint_eq(got[0], 200);
	ck_assert_uint_eq(got[1], 600);
	/* Refused, nothing changed: the shares stay 1:3. */
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 0), -EINVAL);
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 65536), -EINVAL);
	ck_assert_int_eq(evq_queue_set_weight(q, 2, 5), -EINVAL); /* never set up */
	ck_assert_int_eq(evq_queue_set_weight(q, 3, 5), -EINVAL); /* no such queue */
	set_weight_run(q, 100, got, &seq);
	ck_assert_uint_eq(got[0], 200);
	ck_assert_uint_eq(got[1], 600);
	/* A turn in progress is cut to a lower new weight. The 1:3 calls end
	 * with queue 0's turn; at weight 20 queue 1 takes a whole call and has
	 * 12 left in its turn; cut to 2, it takes 2, then the turns alternate
	 * 1, 2 (uncut, it would take the next call whole). */
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 20), 0);
	set_weight_run(q, 1, got, &seq);
	ck_assert_uint_eq(got[0], 0);
	ck_assert_uint_eq(got[1], 8);
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 2), 0);
	backlog(q, 2, 2, &seq);
	struct evq_event ev[8];
	ck_assert_uint_eq(evq_dequeue(q, ev, 8), 8);
	static const uint8_t want[8] = {1, 1, 0, 1, 1, 0, 1, 1};
	for (uint32_t k = 0; k < 8; k++)
		ck_assert_uint_eq(ev[k].queue, want[k]);
	evq_destroy(q);
}
END_TEST

/* ---- bounds and bad input ----------------------------------------------- */

START_TEST(test_full_refused)
{
	struct evq *q = make_evq(2);
	setup_queue(q, 0, 1, 64);
	setup_queue(q, 1, 1, 16);
	struct evq_event ev[80];
	for (uint32_t i = 0; i < 80; i++)
		ev[i] = event(0, i < 40 ? 0 : 5, i);
	/* Depth 64 over all levels: 40 at level 0, 24 at level 5, then no more. */
	ck_assert_uint_eq(evq_enqueue(q, ev, 80), 64);
	ck_assert_uint_eq(evq_enqueue(q, ev + 64, 1), 0);
	ck_assert_uint_eq(evq_enqueue(q, ev, 3), 0);
	struct evq_stats st;
	evq_stats(q, &st);
	ck_assert_uint_eq(st.enqueued, 64);
	ck_assert_uint_eq(st.refused, 16 + 1 + 3);
	struct evq_queue_stats qs;
	ck_assert_int_eq(evq_queue_stats(q, 0, &qs), 0);
	ck_assert_uint_eq(qs.held, 64);
	ck_assert_uint_eq(qs.enqueued, 64);
	ck_assert_uint_eq(qs.refused, 20);
	/* The other queue still takes events. */
	struct evq_event e1 = event(1, 7, 100);
	ck_assert_uint_eq(evq_enqueue(q, &e1, 1), 1);
	ck_assert_uint_eq(evq_held(q), 65);
	/* Room again once 8 are taken (level 0 first). */
	struct evq_event out[8];
	ck_assert_uint_eq(evq_dequeue(q, out, 8), 8);
	ck_assert_uint_eq(out[0].u64, 0);
	ck_assert_uint_eq(out[7].u64, 7);
	ck_assert_uint_eq(evq_enqueue(q, ev + 64, 16), 8);
	evq_stats(q, &st);
	ck_assert_uint_eq(st.refused, 16 + 1 + 3 + 8);
	ck_assert_uint_eq(st.dispatched, 8);
	ck_assert_int_eq(evq_queue_stats(q, 0, &qs), 0);
	ck_assert_uint_eq(qs.held, 64);
	ck_assert_uint_eq(qs.dispatched, 8);
	ck_assert_int_eq(evq_queue_stats(q, 2, &qs), -EINVAL);
	/* A burst of runs is taken up to its first refusal, which refuses the
	 * rest of the burst too, whatever its queues (the caller keeps the
	 * order): 4 to queue 1 at two levels, then queue 0's (full). */
	for (uint32_t i = 0; i < 20; i++)
		ev[i] = event(i < 4 || i >= 14 ? 1 : 0, i & 1, 200 + i);
	ck_assert_uint_eq(evq_enqueue(q, ev, 20), 4);
	ck_assert_int_eq(evq_queue_stats(q, 1, &qs), 0);
	ck_assert_uint_eq(qs.held, 5);
	ck_assert_uint_eq(qs.refused, 0);
	ck_assert_int_eq(evq_queue_stats(q, 0, &qs), 0);
	ck_assert_uint_eq(qs.refused, 20 + 8 + 16);
	evq_destroy(q);
}
END_TEST

START_TEST(test_invalid_refused)
{
	struct evq *q = make_evq(2);
	setup_queue(q, 0, 1, 64);
	/* queue 1 exists but was never set up */
	struct evq_event bad[3] = {{.queue = 2}, {.queue = 0, .priority = EVQ_LEVELS}, {.queue = 1}};
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(evq_enqueue(q, &bad[i], 1), 0);
	struct evq_event mix[3] = {{.queue = 0, .u64 = 1}, {.queue = 9}, {.queue = 0}};
	ck_assert_uint_eq(evq_enqueue(q, mix, 3), 1);
	struct evq_stats st;
	evq_stats(q, &st);
	ck_assert_uint_eq(st.invalid, 4);
	ck_assert_uint_eq(st.enqueued, 1);
	ck_assert_uint_eq(st.refused, 0);
	ck_assert_uint_eq(evq_held(q), 1);
	struct evq_event got;
	ck_assert_uint_eq(evq_dequeue(q, &got, 1), 1);
	ck_assert_uint_eq(got.u64, 1);
	ck_assert_uint_eq(evq_dequeue(q, &got, 1), 0);
	ck_assert_uint_eq(evq_held(q), 0);
	/* Setup errors leave things as they were. */
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	ck_assert_int_eq(evq_queue_setup(q, 0, &qc), -EBUSY);
	qc.depth = 100;
	ck_assert_int_eq(evq_queue_setup(q, 1, &qc), -EINVAL);
	evq_queue_config_default(&qc);
	qc.weight = 0;
	ck_assert_int_eq(evq_queue_setup(q, 1, &qc), -EINVAL);
	ck_assert_int_eq(evq_queue_setup(q, 2, &qc), -EINVAL);
	char err[128] = "";
	ck_assert_ptr_null(evq_create(0, err, sizeof(err)));
	ck_assert_str_eq(err, "queues: 0 is not in 1..64");
	ck_assert_ptr_null(evq_create(EVQ_MAX_QUEUES + 1, err, sizeof(err)));
	ck_assert_str_eq(err, "queues: 65 is not in 1..64");
	evq_destroy(q);
	evq_destroy(NULL);
}
END_TEST

/* FIFOs wrap many times over, in bursts that straddle the end: every
 * event comes out once, in order, with its payload. */
START_TEST(test_wrap_order)
{
	struct evq *q = make_evq(1);
	setup_queue(q, 0, 1, 16);
	uint64_t in = 0, out = 0, rng = 99;
	struct evq_event ev[16];
	for (uint32_t round = 0; round < 5000; round++) {
		uint32_t n = (uint32_t)(xorshift(&rng) % 17);
		for (uint32_t k = 0; k < n; k++)
			ev[k] = event(0, 3, in + k);
		in += evq_enqueue(q, ev, n);
		uint32_t m = evq_dequeue(q, ev, (uint32_t)(xorshift(&rng) % 17));
		for (uint32_t k = 0; k < m; k++, out++) {
			ck_assert_uint_eq(ev[k].u64, out);
			ck_assert_uint_eq(ev[k].flow, (uint32_t)out);
			ck_assert_uint_eq(ev[k].queue, 0);
			ck_assert_uint_eq(ev[k].priority, 3);
		}
		ck_assert_uint_eq(evq_held(q), in - out);
	}
	ck_assert_uint_gt(in, 5000);
	evq_destroy(q);
}
END_TEST

/* Runs: a burst is taken in runs of one (queue, priority), found eight
 * events at a time. For every burst length 1..40 and every place the key
 * changes (the queue, or the priority; the reserved bytes, which are not
 * read, change too and must not end a run): every event is taken into its
 * own (queue, level) in order, the per-queue counters exact; and the same
 * burst with an invalid priority at that place is taken up to it exactly. */
static void runs_check(uint32_t n, uint32_t at, bool by_queue)
{
	struct evq *q = make_evq(2);
	setup_queue(q, 0, 1, 64);
	setup_queue(q, 1, 1, 64);
	struct evq_event ev[64];
	uint32_t bq = by_queue ? 1 : 0, bl = by_queue ? 1 : 2;
	for (uint32_t k = 0; k < n; k++) {
		ev[k] = k < at ? event(0, 1, k) : event(bq, bl, k);
		ev[k].reserved[0] = (uint8_t)k;
	}
	ck_assert_uint_eq(evq_enqueue(q, ev, n), n);
	struct evq_queue_stats st0, st1;
	evq_queue_stats(q, 0, &st0);
	evq_queue_stats(q, 1, &st1);
	ck_assert_uint_eq(st0.enqueued, by_queue ? at : n);
	ck_assert_uint_eq(st1.enqueued, by_queue ? n - at : 0);
	uint64_t next[2] = {0, at}; /* the next seq of key A, of key B */
	uint32_t m = evq_dequeue(q, ev, 64);
	ck_assert_uint_eq(m, n);
	for (uint32_t k = 0; k < m; k++) {
		bool b = ev[k].u64 >= at;
		ck_assert_uint_eq(ev[k].queue, b ? bq : 0);
		ck_assert_uint_eq(ev[k].priority, b ? bl : 1);
		ck_assert_uint_eq(ev[k].reserved[0], (uint8_t)ev[k].u64);
		ck_assert_uint_eq(ev[k].u64, next[b]++);
	}
	ck_assert_uint_eq(next[0], at);
	ck_assert_uint_eq(next[1], n);
	/* an invalid priority at `at` ends the burst there */
	for (uint32_t k = 0; k < n; k++)
		ev[k] = event(0, 1, k);
	if (at < n) {
		ev[at].priority = EVQ_LEVELS;
		ck_assert_uint_eq(evq_enqueue(q, ev, n), at);
		struct evq_stats st;
		evq_stats(q, &st);
		ck_assert_uint_eq(st.invalid, 1);
		ck_assert_uint_eq(evq_held(q), at);
	}
	evq_destroy(q);
}

START_TEST(test_run_ends)
{
	for (uint32_t n = 1; n <= 40; n++)
		for (uint32_t at = 0; at <= n; at++) {
			runs_check(n, at, true);
			runs_check(n, at, false);
		}
}
END_TEST

static Suite *evq_suite(void)
{
	Suite *s = suite_create("evq");
	TCase *tc = tcase_create("evq");
	tcase_add_test(tc, test_full_refused);
	tcase_add_test(tc, test_invalid_refused);
	tcase_add_test(tc, test_wrap_order);
	tcase_add_test(tc, test_run_ends);
	tcase_add_test(tc, test_strict_priority);
	tcase_add_test(tc, test_weighted_order);
	tcase_add_test(tc, test_weighted_shares);
	tcase_add_test(tc, test_weighted_empty_turn);
	tcase_add_test(tc, test_set_weight);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(evq_suite());
}
