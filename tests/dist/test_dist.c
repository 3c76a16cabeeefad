/* Distributor library suite: matching, pinning, backpressure, reclaim, and
 * the threaded invariants of flow pinning: the slow-worker scenario
 * DPDK's burst mode fails, and stress with heavy-tailed
 * worker delays. Workers check atomicity themselves with an owner word per
 * tag claimed by compare-and-swap, and per-flow order with sequence numbers
 * kept in plain memory (so ThreadSanitizer also checks that the handoff
 * orders each flow's accesses).
 *
 *   test_dist [--packets N] [--max-workers M]   (2,000,000 and 4 by default)
 */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/conf.h"
#include "graph/buffer.h"
#include "base/toeplitz.h"
#include "base/util.h"
#include "sched/dist/dist.h"
#include "sched/dist/dist_private.h"
#include "tests/check_run.h"

static uint32_t opt_packets = 2000000;
static uint32_t opt_max_workers = 4;

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static struct dist *make_with(uint32_t workers, uint32_t backlog, uint32_t ring_lines, bool match_always)
{
	struct dist_config c;
	dist_config_default(&c);
	c.n_workers = workers;
	c.backlog = backlog;
	c.ring_lines = ring_lines;
	c.match_always = match_always;
	char err[256];
	struct dist *d = dist_create(&c, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	return d;
}

static struct dist *make(uint32_t workers, uint32_t backlog, uint32_t ring_lines)
{
	return make_with(workers, backlog, ring_lines, false);
}

/* ---- matching ---- */

/* Vector and scalar matchers agree on random tables and chunks: random
 * tags, few distinct tags (duplicates), 0, 0x7fff, and the unused top bit. */
START_TEST(test_matchers_agree)
{
	uint32_t *table = aligned_alloc(64, DIST_N_TAGS * sizeof(uint32_t));
	uint64_t s = 88172645463325252ull;
	for (uint32_t t = 0; t < DIST_N_TAGS; t++)
		table[t] = (uint32_t)rng_next(&s);
	for (uint32_t it = 0; it < 1000000; it++) {
		alignas(16) uint16_t tags[8];
		uint32_t mode = it % 4;
		for (int i = 0; i < 8; i++) {
			uint64_t r = rng_next(&s);
			tags[i] = mode == 0 ? (uint16_t)r : mode == 1 ? (uint16_t)(r % 3) : mode == 2 ? (uint16_t)((r % 2) * 0x7fff) : (uint16_t)(0x8000 | (r % 4));
		}
		struct dist_match a, b;
		dist_match_scalar(table, tags, &a);
		dist_match_vector(table, tags, &b);
		/* Plain ifs: each ck_assert costs a message to the runner. */
		if (memcmp(&a, &b, sizeof(a)) != 0)
			ck_abort_msg("matchers differ at iteration %u (%s)", it, dist_match_vector_isa);
		for (int i = 0; i < 8; i++)
			if (a.lead[i] > i || (tags[a.lead[i]] & 0x7fff) != (tags[i] & 0x7fff) ||
			    a.owner[i] != ((table[tags[i] & 0x7fff] >> 16) & 0xff))
				ck_abort_msg("scalar matcher wrong at iteration %u lane %d", it, i);
	}
	free(table);
}
END_TEST

/* ---- single-threaded behaviour ---- */

static uint32_t process(struct dist *d, const uint32_t *bi, const uint16_t *tags, uint32_t n, uint8_t *assigned,
			uint32_t *n_drop)
{
	uint32_t dropped[256];
	uint8_t reason[256];
	uint32_t taken = dist_process(d, bi, tags, NULL, n, dropped, reason, assigned);
	if (n_drop)
		*n_drop = n - taken;
	return taken;
}

/* A flow stays on the worker processing it, however loaded, until that
 * worker reports completion; DPDK's hole (a call without the tag between
 * two with it) does not open; then the flow may move, and that counts. */
START_TEST(test_pinning_and_release)
{
	struct dist *d = make(2, 64, 8);
	uint32_t bi[16], got[256];
	uint16_t tags[16];
	uint8_t as[16];
	for (int i = 0; i < 8; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = 100;
	}
	ck_assert_uint_eq(process(d, bi, tags, 8, as, NULL), 8);
	for (int i = 0; i < 8; i++)
		ck_assert_uint_eq(as[i], 1);
	/* A new flow goes to the idle worker. */
	bi[0] = 8;
	tags[0] = 200;
	ck_assert_uint_eq(process(d, bi, tags, 1, as, NULL), 1);
	ck_assert_uint_eq(as[0], 2);
	/* Worker 0 takes its batch and is now processing tag 100. */
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 256), 8);
	/* A call without tag 100 (DPDK would forget it here)... */
	bi[0] = 9;
	tags[0] = 300;
	process(d, bi, tags, 1, as, NULL);
	/* ...then tag 100 again, with worker 0 the busier: still worker 0. */
	bi[0] = 10;
	tags[0] = 100;
	ck_assert_uint_eq(process(d, bi, tags, 1, as, NULL), 1);
	ck_assert_uint_eq(as[0], 1);
	/* Completing the first batch does not release: packet 10 is queued.
	 * Packet 9, a new flow, went to the idle worker 1. */
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 256), 1);
	ck_assert_uint_eq(got[0], 10);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	ck_assert_uint_eq(dist_worker_poll(d, 1, got, NULL, 256), 2);
	ck_assert_int_eq(dist_worker_done(d, 1), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	/* Released: tag 100 goes to the least-loaded worker now. Load worker 0
	 * with another flow first so that it must move. */
	for (int i = 0; i < 4; i++) {
		bi[i] = 20 + (uint32_t)i;
		tags[i] = 400;
	}
	process(d, bi, tags, 4, as, NULL);
	uint32_t busy = as[0];
	bi[0] = 30;
	tags[0] = 100;
	process(d, bi, tags, 1, as, NULL);
	ck_assert_uint_ne(as[0], busy);
	struct dist_worker_stats ws[2];
	dist_worker_stats(d, 0, &ws[0]);
	dist_worker_stats(d, 1, &ws[1]);
	ck_assert_uint_eq(ws[0].migrations + ws[1].migrations, as[0] == 1 ? 0 : 1);
	ck_assert_uint_eq(ws[0].handed + ws[1].handed, 16);
	/* Only packet 10 found its flow in flight; lanes 1..7 of the first
	 * chunk followed lane 0 within the call. */
	ck_assert_uint_eq(ws[0].matched, 1);
	ck_assert_uint_eq(ws[1].matched, 0);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.bad_returns, 0);
	uint32_t k, n = 0;
	while ((k = dist_reclaim(d, got, 256)) != 0)
		n += k;
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	dist_free(d);
}
END_TEST


/* Completions by count: a worker reports the lines it finished, and the
 * distributor releases the tags from its own copies, in the order the
 * lines went out, over more lines than the copy ring holds at once (ring
 * of 2 lines, batches of 1 line, 1000 rounds). While a worker holds
 * packets the distributor thread is not idle (nothing would kick it for
 * their completions); once they are harvested it is. */
START_TEST(test_completion_by_count)
{
	struct dist_config c;
	dist_config_default(&c);
	c.n_workers = 1;
	c.ring_lines = 2;
	c.backlog = 16;
	char err[128];
	struct dist *d = dist_create(&c, err, sizeof(err));
	ck_assert_ptr_nonnull(d);
	uint32_t bi[8], got[8];
	uint16_t tags[8], got_tags[8];
	uint8_t as[8];
	ck_assert(dist_idle(d));
	for (uint32_t round = 0; round < 1000; round++) {
		/* 5 packets, two of one flow and three others, new every round. */
		for (uint32_t i = 0; i < 5; i++) {
			bi[i] = round * 8 + i;
			tags[i] = (uint16_t)((round * 4 + (i < 2 ? 0 : i)) & HANDOFF_TAG_MASK);
		}
		ck_assert_uint_eq(process(d, bi, tags, 5, as, NULL), 5);
		ck_assert(!dist_idle(d)); /* published, at the worker */
		ck_assert_uint_eq(dist_flows_owned(d), 4);
		ck_assert_uint_eq(dist_worker_poll(d, 0, got, got_tags, 8), 5);
		ck_assert_mem_eq(got, bi, 5 * sizeof(uint32_t));
		ck_assert_mem_eq(got_tags, tags, 5 * sizeof(uint16_t));
		dist_flush(d);
		ck_assert(!dist_idle(d)); /* held, not reported */
		ck_assert_uint_eq(dist_flows_owned(d), 4);
		ck_assert_uint_eq(dist_flow_owner(d, tags[0]), 1);
		ck_assert_int_eq(dist_worker_done(d, 0), 0);
		ck_assert_uint_eq(dist_flush(d), 5); /* 5 completions harvested */
		ck_assert(dist_idle(d));
		ck_assert_uint_eq(dist_flows_owned(d), 0);
		ck_assert_uint_eq(dist_flow_owner(d, tags[0]), 0);
	}
	struct dist_worker_stats ws;
	dist_worker_stats(d, 0, &ws);
	ck_assert_uint_eq(ws.handed, 5000);
	ck_assert_uint_eq(ws.returned, 5000);
	ck_assert_uint_eq(ws.polled, 5000);
	ck_assert_uint_eq(ws.in_flight, 0);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.bad_returns, 0);
	dist_free(d);
}
END_TEST

/* A worker that never polls: its flows are dropped once its ring and
 * backlog are full, counted against it; new flows go to the other worker,
 * which keeps running; when both are full, new flows drop too. */
START_TEST(test_backpressure_isolates_a_stalled_worker)
{
	struct dist *d = make(2, 8, 2);
	uint32_t bi[64], got[256], n_drop;
	uint16_t tags[64];
	uint8_t as[64];
	for (int i = 0; i < 64; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = 7;
	}
	/* ring 2 lines (16) + backlog 8 = 24 accepted for the stalled worker */
	ck_assert_uint_eq(process(d, bi, tags, 64, as, &n_drop), 24);
	ck_assert_uint_eq(as[0], 1);
	ck_assert_uint_eq(as[24], 0);
	/* Other flows keep flowing through worker 1, many times its ring. */
	uint32_t seen = 0;
	for (int round = 0; round < 100; round++) {
		for (int i = 0; i < 8; i++) {
			bi[i] = 1000 + (uint32_t)(round * 8 + i);
			tags[i] = (uint16_t)(500 + i);
		}
		ck_assert_uint_eq(process(d, bi, tags, 8, as, NULL), 8);
		for (int i = 0; i < 8; i++)
			ck_assert_uint_eq(as[i], 2);
		seen += dist_worker_poll(d, 1, got, NULL, 256);
	}
	ck_assert_int_eq(dist_worker_done(d, 1), 0);
	ck_assert_uint_eq(seen, 800);
	struct dist_worker_stats w0;
	dist_worker_stats(d, 0, &w0);
	ck_assert_uint_eq(w0.drops, 40);
	ck_assert_uint_eq(w0.in_flight, 16);
	ck_assert_uint_eq(w0.backlog, 8);
	ck_assert_uint_eq(w0.ring_used, 2);
	/* Stall worker 1 too: its ring and backlog fill with new flows, then
	 * new flows have nowhere to go. */
	for (int i = 0; i < 64; i++) {
		bi[i] = 5000 + (uint32_t)i;
		tags[i] = (uint16_t)(1000 + i);
	}
	ck_assert_uint_eq(process(d, bi, tags, 64, as, &n_drop), 24);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.drops[DIST_DROP_WORKER_FULL], 40);
	ck_assert_uint_eq(st.drops[DIST_DROP_ALL_FULL], 40);
	/* Shutdown: every queued packet comes back, once. */
	uint32_t k, n = 0;
	while ((k = dist_reclaim(d, got, 256)) != 0)
		n += k;
	ck_assert_uint_eq(n, 48);
	dist_stats(d, &st);
	ck_assert_uint_eq(st.drops[DIST_DROP_SHUTDOWN], 48);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	for (uint32_t t = 0; t < DIST_N_TAGS; t++)
		if (d->table[t] & 0xffffff)
			ck_abort_msg("tag %u still counted or owned: 0x%08x", t, d->table[t]);
	dist_clear_stats(d);
	dist_stats(d, &st);
	ck_assert_uint_eq(st.drops[DIST_DROP_SHUTDOWN], 0);
	dist_free(d);
}
END_TEST

/* ring_lines 1: one line of 8 in flight per worker, as DPDK's burst
 * distributor has (one cache line per worker and a backlog of 8): a stalled
 * worker is given 8 in its ring and 8 in the backlog, no more; the next
 * line goes only once the worker has taken the last one. */
START_TEST(test_one_line_in_flight)
{
	struct dist *d = make(1, 8, 1);
	uint32_t bi[32], got[256], n_drop;
	uint16_t tags[32];
	for (int i = 0; i < 32; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = (uint16_t)i;
	}
	ck_assert_uint_eq(process(d, bi, tags, 32, NULL, &n_drop), 16);
	ck_assert_uint_eq(n_drop, 16);
	struct dist_worker_stats w0;
	dist_worker_stats(d, 0, &w0);
	ck_assert_uint_eq(w0.ring_used, 1);
	ck_assert_uint_eq(w0.ring_lines, 1);
	ck_assert_uint_eq(w0.backlog, 8);
	ck_assert_uint_eq(w0.in_flight, 8);
	/* A flush publishes nothing while the line is still in the ring. */
	ck_assert_uint_eq(dist_flush(d), 0);
	/* The worker takes the line (at most 256 asked: still one line). */
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 256), 8);
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_uint_eq(got[i], i);
	/* Now the backlog goes, and a partial backlog goes whole. */
	ck_assert_uint_eq(dist_flush(d), 8);
	ck_assert_uint_eq(process(d, bi + 16, tags + 16, 3, NULL, &n_drop), 3);
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 256), 8);
	ck_assert_uint_eq(got[0], 8);
	/* The first batch's completions came back with that poll. */
	ck_assert_uint_eq(dist_flush(d), 8 + 3);
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 256), 3);
	ck_assert_uint_eq(got[0], 16);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	dist_free(d);
}
END_TEST

/* The idle time behind the "stalled" flag: counted from the publish that
 * gave an idle worker work, then from its last completion; a completion's
 * stamp waits for the clock, read every 64th dist_process/dist_flush call,
 * and shows as no idle time until then (late, never early). */
START_TEST(test_idle_time_stamped)
{
	struct dist *d = make(1, 8, 1);
	uint32_t bi[16], got[8], n_drop;
	uint16_t tags[16];
	for (int i = 0; i < 16; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = (uint16_t)i;
	}
	/* Call 0 reads the clock: the line just published starts the count. */
	ck_assert_uint_eq(process(d, bi, tags, 16, NULL, &n_drop), 16);
	usleep(20000);
	struct dist_worker_stats w0;
	dist_worker_stats(d, 0, &w0);
	ck_assert_uint_eq(w0.in_flight, 8);
	ck_assert_uint_ge(w0.idle_ns, 20000000);
	ck_assert_uint_lt(w0.idle_ns, 10000000000ull);
	/* The worker takes its line, then reports it; call 1 harvests that
	 * and publishes the backlog: the stamp is due, shown as 0. */
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 8), 8);
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 8), 0);
	ck_assert_uint_eq(dist_flush(d), 16);
	usleep(20000);
	for (int call = 2; call < 64; call++) {
		dist_flush(d);
		dist_worker_stats(d, 0, &w0);
		ck_assert_uint_eq(w0.in_flight, 8);
		ck_assert_uint_eq(w0.idle_ns, 0);
	}
	/* Call 64 reads the clock and fills the stamp. */
	dist_flush(d);
	usleep(20000);
	dist_worker_stats(d, 0, &w0);
	ck_assert_uint_ge(w0.idle_ns, 20000000);
	ck_assert_uint_lt(w0.idle_ns, 10000000000ull);
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, NULL, 8), 8);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	dist_free(d);
}
END_TEST

/* One worker: dist_process takes whole chunks through its own loop
 * (assign_one_worker) while the backlog has room for 8; a traced call
 * (assigned[] given) takes the general one, and so does an untraced call
 * with match_always set (the benchmark's matched row). All three must do
 * the same: the same calls on three distributors, random tags with repeats (flows owned,
 * opened, repeated within a chunk), random sizes and depths, the worker
 * taking and reporting at random: the same packets taken and dropped,
 * the same lines polled, the same flow table and counters throughout. */
START_TEST(test_one_worker_path_agrees)
{
	static const uint32_t depth[][2] = { { 8, 1 }, { 64, 64 }, { 24, 2 } }; /* backlog, ring lines */
	uint64_t rng = 0x9e3779b97f4a7c15ull;
	for (uint32_t cfg = 0; cfg < 3; cfg++) {
		struct dist *a = make(1, depth[cfg][0], depth[cfg][1]), *b = make(1, depth[cfg][0], depth[cfg][1]);
		struct dist *m = make_with(1, depth[cfg][0], depth[cfg][1], true);
		uint32_t bi[64], got_a[256], got_b[256], got_m[256], drop_a, drop_b, drop_m;
		uint16_t tags[64], tg_a[256], tg_b[256], tg_m[256];
		uint8_t as[64];
		for (uint32_t it = 0; it < 20000; it++) {
			uint32_t n = (uint32_t)(rng_next(&rng) % 65), spread = it % 3 ? 16 : 200;
			for (uint32_t i = 0; i < n; i++) {
				bi[i] = it * 64 + i;
				tags[i] = (uint16_t)(rng_next(&rng) % spread);
			}
			uint32_t ta = process(a, bi, tags, n, NULL, &drop_a);
			ck_assert_uint_eq(ta, process(b, bi, tags, n, as, &drop_b));
			ck_assert_uint_eq(ta, process(m, bi, tags, n, NULL, &drop_m));
			ck_assert_uint_eq(drop_a, drop_b);
			ck_assert_uint_eq(drop_a, drop_m);
			if (rng_next(&rng) % 2) {
				uint32_t max = 8 * (1 + (uint32_t)(rng_next(&rng) % 32));
				uint32_t ka = dist_worker_poll(a, 0, got_a, tg_a, max);
				ck_assert_uint_eq(ka, dist_worker_poll(b, 0, got_b, tg_b, max));
				ck_assert_uint_eq(ka, dist_worker_poll(m, 0, got_m, tg_m, max));
				ck_assert(!memcmp(got_a, got_b, ka * sizeof(got_a[0])));
				ck_assert(!memcmp(tg_a, tg_b, ka * sizeof(tg_a[0])));
				ck_assert(!memcmp(got_a, got_m, ka * sizeof(got_a[0])));
				ck_assert(!memcmp(tg_a, tg_m, ka * sizeof(tg_a[0])));
			}
			if (it % 7 == 0) {
				dist_flush(a);
				dist_flush(b);
				dist_flush(m);
			}
			struct dist_worker_stats sa, sb, sm;
			dist_worker_stats(a, 0, &sa);
			dist_worker_stats(b, 0, &sb);
			dist_worker_stats(m, 0, &sm);
			sa.idle_ns = sb.idle_ns = sm.idle_ns = 0;
			if (memcmp(&sa, &sb, sizeof(sa)) || memcmp(a->table, b->table, sizeof(a->table)))
				ck_abort_msg("depth %u, call %u: the one-worker path differs", cfg, it);
			if (memcmp(&sa, &sm, sizeof(sa)) || memcmp(a->table, m->table, sizeof(a->table)))
				ck_abort_msg("depth %u, call %u: match_always differs", cfg, it);
		}
		ck_assert_uint_gt(a->tx[0].st.matched, 0);
		ck_assert_uint_gt(a->tx[0].st.drops + a->drops[DIST_DROP_ALL_FULL], 0);
		ck_assert_uint_eq(a->tx[0].st.matched, m->tx[0].st.matched);
		dist_free(a);
		dist_free(b);
		dist_free(m);
	}
}
END_TEST

/* The backlog is staged in the lines it is published from, a ring of
 * lines reused round and round: many rounds of odd-sized calls, with a ring
 * that takes a part of the backlog at a time, wrap it many times. Every
 * packet comes out once, in order, with its tag; every flow is released. */
START_TEST(test_backlog_lines_wrap)
{
	struct dist *d = make(1, 24, 2);
	uint32_t bi[13], got[256], next = 0, expect = 0, n_drop;
	uint16_t tags[13], tg[256];
	for (uint32_t round = 0; round < 2000; round++) {
		uint32_t n = 1 + round % 13;
		n = MIN(n, dist_room(d, 0));
		for (uint32_t i = 0; i < n; i++) {
			bi[i] = next + i;
			tags[i] = (uint16_t)((next + i) % 7);
		}
		ck_assert_uint_eq(process(d, bi, tags, n, NULL, &n_drop), n);
		next += n;
		/* The worker takes one line in three rounds: the ring stays
		 * full and the backlog deep. */
		if (round % 3 == 0 || round >= 1990) {
			uint32_t k = dist_worker_poll(d, 0, got, tg, 8);
			for (uint32_t i = 0; i < k; i++, expect++) {
				ck_assert_uint_eq(got[i], expect);
				ck_assert_uint_eq(tg[i], expect % 7);
			}
		}
	}
	for (int i = 0; i < 1000 && dist_outstanding(d); i++) {
		dist_flush(d);
		uint32_t k = dist_worker_poll(d, 0, got, tg, 256);
		for (uint32_t j = 0; j < k; j++, expect++)
			ck_assert_uint_eq(got[j], expect);
		dist_worker_done(d, 0);
	}
	ck_assert_uint_eq(expect, next);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.bad_returns, 0);
	dist_free(d);
}
END_TEST

/* startup.conf's ring-lines takes what dist_create takes: 1 (one line in
 * flight, the test above) up to DIST_RING_LINES_MAX; 0 is refused. */
START_TEST(test_conf_ring_lines_range)
{
	const struct conf_key *k = conf_key_find(dist_conf_section.keys, "ring-lines");
	ck_assert_ptr_nonnull(k);
	struct dist_conf c = { 0 };
	char err[128], max[16];
	ck_assert_int_eq(conf_value_parse(k, "1", &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.ring_lines, 1);
	snprintf(max, sizeof(max), "%u", DIST_RING_LINES_MAX);
	ck_assert_int_eq(conf_value_parse(k, max, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.ring_lines, DIST_RING_LINES_MAX);
	ck_assert_int_eq(conf_value_parse(k, "0", &c, err, sizeof(err)), -ERANGE);
	ck_assert_uint_eq(c.ring_lines, DIST_RING_LINES_MAX);
	struct dist *d = make(1, 8, 1);
	dist_free(d);
}
END_TEST

/* ---- scheduling types, single-threaded ---- */

static struct dist *make_window(uint32_t workers, uint32_t window)
{
	struct dist_config c;
	dist_config_default(&c);
	c.n_workers = workers;
	c.backlog = 64;
	c.ring_lines = 8;
	c.window = window;
	char err[256];
	struct dist *d = dist_create(&c, err, sizeof(err));
	ck_assert_msg(d, "%s", err);
	return d;
}

static uint32_t process_typed(struct dist *d, const uint32_t *bi, const uint16_t *tags, const uint8_t *types,
			      uint32_t n, uint8_t *assigned, uint8_t *reason)
{
	uint32_t dropped[256];
	uint8_t why[256];
	uint32_t taken = dist_process(d, bi, tags, types, n, dropped, why, assigned);
	if (reason)
		memcpy(reason, why, n - taken);
	return taken;
}

/* Parallel packets of one flow go to every worker, own no flow-table entry,
 * carry DIST_TAG_SPREAD, and complete without touching the table. */
START_TEST(test_parallel_spreads_one_flow)
{
	struct dist *d = make_window(2, 0);
	uint32_t bi[16], got[256];
	uint16_t tags[16], gtags[256];
	uint8_t types[16], as[16];
	for (int i = 0; i < 16; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = 100;
		types[i] = SCHED_TYPE_PARALLEL;
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 16, as, NULL), 16);
	uint32_t per[3] = { 0 };
	for (int i = 0; i < 16; i++)
		per[as[i]]++;
	ck_assert_uint_eq(per[1], 8);
	ck_assert_uint_eq(per[2], 8);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	ck_assert_uint_eq(d->table[100], 0);
	for (uint32_t w = 0; w < 2; w++) {
		uint32_t n = dist_worker_poll(d, w, got, gtags, 256);
		ck_assert_uint_eq(n, 8);
		ck_assert(!dist_worker_has_ordered(d, w));
		for (uint32_t i = 0; i < n; i++)
			ck_assert_uint_eq(gtags[i], DIST_TAG_SPREAD | 100);
		ck_assert_int_eq(dist_worker_done(d, w), 0);
	}
	dist_flush(d);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	struct dist_worker_stats ws;
	dist_worker_stats(d, 0, &ws);
	ck_assert_uint_eq(ws.parallel, 8);
	ck_assert_uint_eq(ws.returned, 8);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.bad_returns, 0);
	ck_assert_uint_eq(d->table[100], 0);
	dist_free(d);
}
END_TEST

/* A chunk of 8 parallel packets goes to one worker as a line (dist.c
 * assign_parallel8). Staged on a line boundary it fills one line, flagged
 * whole, whose completion drops the spread count by 8 without reading a
 * tag; staged behind 3 packets still waiting (the one-line mailbox full)
 * it ends one line and starts the next, neither flagged whole. Either
 * way every packet arrives once with its tag, and the counts come back
 * to 0. */
START_TEST(test_parallel_lines_whole_and_split)
{
	struct dist *d = make(1, 64, 1);
	struct dist_tx *tx = &d->tx[0];
	uint32_t bi[8], got[64];
	uint16_t tags[8], gtags[64];
	uint8_t types[8];
	/* 8 atomic (tags 1..8) fill the mailbox; 3 more (tags 9..11) wait. */
	for (uint32_t i = 0; i < 8; i++) {
		bi[i] = i;
		tags[i] = (uint16_t)(i + 1);
		types[i] = SCHED_TYPE_ATOMIC;
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 8, NULL, NULL), 8);
	for (uint32_t i = 0; i < 3; i++) {
		bi[i] = 8 + i;
		tags[i] = (uint16_t)(9 + i);
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 3, NULL, NULL), 3);
	ck_assert_uint_eq(tx->n_backlog, 3);
	/* 8 parallel behind them: slots 3..7 of one line, 0..2 of the next. */
	for (uint32_t i = 0; i < 8; i++) {
		bi[i] = 100 + i;
		tags[i] = 0x7000 | (uint16_t)i; /* bit 14 set: the tag keeps 14 bits */
		types[i] = SCHED_TYPE_PARALLEL;
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 8, NULL, NULL), 8);
	ck_assert_uint_eq(tx->n_backlog, 11);
	ck_assert_uint_eq(tx->spread_in_flight, 8);
	ck_assert_uint_eq(dist_staged_line(tx, 0)->flags, DIST_LINE_SPREAD);
	ck_assert_uint_eq(dist_staged_line(tx, 1)->flags, DIST_LINE_SPREAD);
	ck_assert_uint_eq(dist_staged_line(tx, 0)->tag[3], DIST_TAG_SPREAD | 0x3000);
	ck_assert_uint_eq(dist_staged_line(tx, 1)->tag[2], DIST_TAG_SPREAD | 0x3007);
	/* The worker takes everything, a line at a time. */
	uint32_t n = 0;
	for (int round = 0; round < 16 && n < 19; round++) {
		uint32_t k = dist_worker_poll(d, 0, got + n, gtags + n, 64 - n);
		n += k;
		dist_flush(d);
	}
	ck_assert_uint_eq(n, 19);
	for (uint32_t i = 0; i < 11; i++) {
		ck_assert_uint_eq(got[i], i);
		ck_assert_uint_eq(gtags[i], i + 1);
	}
	for (uint32_t i = 0; i < 8; i++) {
		ck_assert_uint_eq(got[11 + i], 100 + i);
		ck_assert_uint_eq(gtags[11 + i], DIST_TAG_SPREAD | 0x3000 | i);
	}
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	ck_assert_uint_eq(tx->spread_in_flight, 0);
	/* Now on a line boundary: one line, flagged whole. */
	for (uint32_t i = 0; i < 8; i++)
		bi[i] = 200 + i;
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 8, NULL, NULL), 8);
	ck_assert_uint_eq(tx->spread_in_flight, 8);
	ck_assert_uint_eq(tx->lines[(tx->head - 1) & tx->mask].flags, DIST_LINE_SPREAD | DIST_LINE_PARALLEL);
	ck_assert_uint_eq(dist_worker_poll(d, 0, got, gtags, 64), 8);
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_uint_eq(got[i], 200 + i);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	ck_assert_uint_eq(tx->spread_in_flight, 0);
	struct dist_worker_stats ws;
	dist_worker_stats(d, 0, &ws);
	ck_assert_uint_eq(ws.parallel, 16);
	ck_assert_uint_eq(ws.handed, 27);
	ck_assert_uint_eq(ws.returned, 27);
	ck_assert_uint_eq(ws.flows, 0);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.bad_returns, 0);
	for (uint32_t t = 1; t <= 11; t++)
		ck_assert_uint_eq(d->table[t] & DIST_E_COUNT_MASK, 0);
	dist_free(d);
}
END_TEST

/* Ordered packets of one flow spread over both workers; worker 1 finishes
 * first, so nothing is released until worker 0's batch completes; a packet
 * worker 0 consumed is a gap, skipped; a second packet for one sequence
 * number goes out unordered, counted. */
START_TEST(test_ordered_restores_order)
{
	struct dist *d = make_window(2, 0);
	uint32_t bi[16], got[256], out[64];
	uint16_t tags[16], gtags[256];
	uint8_t types[16], as[16];
	for (int i = 0; i < 16; i++) {
		bi[i] = 1000 + (uint32_t)i;
		tags[i] = 100;
		types[i] = SCHED_TYPE_ORDERED;
	}
	ck_assert_uint_eq(dist_ordered_next(d), 0);
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 16, as, NULL), 16);
	ck_assert_uint_eq(dist_ordered_next(d), 16);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	uint32_t n1 = dist_worker_poll(d, 1, got, gtags, 256);
	ck_assert_uint_eq(n1, 8);
	ck_assert(dist_worker_has_ordered(d, 1));
	for (uint32_t i = 0; i < n1; i++)
		ck_assert_uint_eq(gtags[i], DIST_TAG_SPREAD | DIST_TAG_ORDERED | (got[i] - 1000));
	ck_assert_uint_eq(dist_worker_return(d, 1, got, gtags, n1), n1);
	ck_assert_uint_eq(dist_worker_return(d, 1, got, gtags, 1), 1); /* the same seq again */
	ck_assert_int_eq(dist_worker_done(d, 1), 0);
	dist_flush(d);
	/* Only the duplicate is out: seq 0 is worker 0's, not done. */
	ck_assert_uint_eq(dist_ordered_take(d, out, 64), 1);
	ck_assert_uint_eq(out[0], got[0]);
	uint32_t n0 = dist_worker_poll(d, 0, got, gtags, 256);
	ck_assert_uint_eq(n0, 8);
	/* Worker 0 consumed its packet of seq 4 (1004): it hands back the rest. */
	uint32_t keep[8], kt = 0;
	uint16_t ktags[8];
	for (uint32_t i = 0; i < n0; i++) {
		if (got[i] == 1004)
			continue;
		keep[kt] = got[i];
		ktags[kt++] = gtags[i];
	}
	ck_assert_uint_eq(kt, 7);
	ck_assert_uint_eq(dist_worker_return(d, 0, keep, ktags, kt), kt);
	ck_assert_uint_eq(dist_outstanding(d), 16 + 8);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_ordered_take(d, out, 64), 15);
	for (uint32_t i = 0, want = 1000; i < 15; i++, want++) {
		if (want == 1004)
			want++;
		ck_assert_uint_eq(out[i], want);
	}
	ck_assert_uint_eq(dist_outstanding(d), 0);
	dist_flush(d);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.released, 15);
	ck_assert_uint_eq(st.gaps, 1);
	ck_assert_uint_eq(st.unordered, 1);
	ck_assert_uint_eq(st.window_used, 0);
	ck_assert_uint_eq(st.bad_returns, 0);
	struct dist_worker_stats w0, w1;
	dist_worker_stats(d, 0, &w0);
	dist_worker_stats(d, 1, &w1);
	ck_assert_uint_eq(w0.ordered + w1.ordered, 16);
	ck_assert_uint_eq(w0.returned_ordered, 7);
	ck_assert_uint_eq(w1.returned_ordered, 9);
	dist_free(d);
}
END_TEST

/* A full window drops new ordered packets at the distributor (its own
 * reason), consuming no sequence number; drops for a full worker consume
 * none either, so neither leaves a gap that would hold the window. */
START_TEST(test_ordered_window_full)
{
	struct dist *d = make_window(1, 8);
	uint32_t bi[12], got[256], out[64];
	uint16_t tags[12], gtags[256];
	uint8_t types[12], why[12];
	for (int i = 0; i < 12; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = (uint16_t)i;
		types[i] = SCHED_TYPE_ORDERED;
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 12, NULL, why), 8);
	for (int i = 0; i < 4; i++)
		ck_assert_uint_eq(why[i], DIST_DROP_WINDOW_FULL);
	ck_assert_uint_eq(dist_ordered_next(d), 8);
	uint32_t n = dist_worker_poll(d, 0, got, gtags, 256);
	ck_assert_uint_eq(dist_worker_return(d, 0, got, gtags, n), 8);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_ordered_take(d, out, 64), 8);
	/* Room again. */
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 8, NULL, why), 8);
	struct dist_stats st;
	dist_stats(d, &st);
	ck_assert_uint_eq(st.drops[DIST_DROP_WINDOW_FULL], 4);
	ck_assert_uint_eq(st.window_used, 8);
	uint32_t k, total = 0;
	while ((k = dist_reclaim(d, got, 256)) != 0)
		total += k;
	ck_assert_uint_eq(total, 8);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	dist_free(d);
}
END_TEST

/* One call mixing the three types on one tag: only the atomic packets pin
 * the flow; releasing them all leaves the table as it was. */
START_TEST(test_mixed_types_one_call)
{
	struct dist *d = make_window(2, 0);
	uint32_t bi[24], got[256], out[64];
	uint16_t tags[24], gtags[256];
	uint8_t types[24], as[24];
	for (int i = 0; i < 24; i++) {
		bi[i] = (uint32_t)i;
		tags[i] = 7;
		types[i] = (uint8_t)(i % 3);
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 24, as, NULL), 24);
	ck_assert_uint_eq(dist_flows_owned(d), 1);
	uint32_t atomic_worker = as[0];
	for (int i = 0; i < 24; i += 3)
		ck_assert_uint_eq(as[i], atomic_worker);
	ck_assert_uint_eq(d->table[7] & DIST_E_COUNT_MASK, 8);
	uint32_t returned = 0;
	for (uint32_t w = 0; w < 2; w++) {
		uint32_t n = dist_worker_poll(d, w, got, gtags, 256);
		uint32_t ord[256], no = 0;
		uint16_t otags[256];
		for (uint32_t i = 0; i < n; i++) {
			ck_assert_uint_eq(types[got[i]] == SCHED_TYPE_ATOMIC, !(gtags[i] & DIST_TAG_SPREAD));
			if (types[got[i]] == SCHED_TYPE_ORDERED) {
				ord[no] = got[i];
				otags[no++] = gtags[i];
			}
		}
		returned += dist_worker_return(d, w, ord, otags, no);
		ck_assert_int_eq(dist_worker_done(d, w), 0);
	}
	ck_assert_uint_eq(returned, 8);
	dist_flush(d);
	ck_assert_uint_eq(dist_ordered_take(d, out, 64), 8);
	for (uint32_t i = 0; i < 8; i++)
		ck_assert_uint_eq(out[i], 3 * i + 1);
	ck_assert_uint_eq(dist_flows_owned(d), 0);
	ck_assert_uint_eq(d->table[7] & 0xffffff, 0);
	ck_assert_uint_eq(dist_outstanding(d), 0);
	dist_free(d);
}
END_TEST

/* What `show buffers` says of ordered packets: handed back and staged on
 * the worker or in its reorder ring, then waiting in the window for an
 * earlier sequence number; nothing once they are sent. Real buffers. */
static uint64_t held_at(const char *where)
{
	struct buffer_attribution a;
	ck_assert_int_eq(buffer_attribute(&a), 0);
	uint64_t n = UINT64_MAX;
	for (uint32_t i = 0; i < a.n_holdings; i++)
		if (!strcmp(a.holdings[i].holder, "distributor") && !strcmp(a.holdings[i].where, where))
			n = a.holdings[i].n;
	ck_assert_int_eq(a.n_unattributed, 0);
	buffer_attribution_free(&a);
	return n;
}

START_TEST(test_ordered_buffers_attributed)
{
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 1024;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	struct dist *d = make_window(2, 0);
	uint32_t bi[16], got[256], out[64];
	uint16_t tags[16], gtags[256];
	uint8_t types[16];
	ck_assert_uint_eq(buffer_alloc(bi, 16, -1), 16);
	for (int i = 0; i < 16; i++) {
		tags[i] = 9;
		types[i] = SCHED_TYPE_ORDERED;
	}
	ck_assert_uint_eq(process_typed(d, bi, tags, types, 16, NULL, NULL), 16);
	ck_assert_uint_eq(held_at("worker 1 ring"), 8);
	uint32_t n1 = dist_worker_poll(d, 1, got, gtags, 256);
	ck_assert_uint_eq(dist_worker_return(d, 1, got, gtags, n1), 8);
	ck_assert_uint_eq(held_at("worker 1 reorder ring"), 8);
	ck_assert_int_eq(dist_worker_done(d, 1), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_ordered_take(d, out, 64), 0); /* seq 0 is worker 0's */
	ck_assert_uint_eq(held_at("worker 1 reorder ring"), 0);
	ck_assert_uint_eq(held_at("reorder window"), 8);
	uint32_t n0 = dist_worker_poll(d, 0, got, gtags, 256);
	ck_assert_uint_eq(dist_worker_return(d, 0, got, gtags, n0), 8);
	ck_assert_int_eq(dist_worker_done(d, 0), 0);
	dist_flush(d);
	ck_assert_uint_eq(dist_ordered_take(d, out, 64), 16);
	buffer_free(out, 16); /* sent: the caller's from the take on */
	ck_assert_uint_eq(held_at("reorder window"), 0);
	dist_free(d);
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}
END_TEST

/* ---- threaded harness ---- */

struct run {
	/* configuration */
	uint32_t n_workers, packets, flows, backlog, ring_lines;
	uint32_t min_burst, max_burst;
	uint32_t slow_worker_ms; /* worker 0 sleeps this long per batch (0: none) */
	bool heavy_tail;         /* random per-packet delays, Pareto-like */
	bool skip_flow;          /* flow 0 appears in exactly every other call */
	uint32_t pace_us;        /* pause between calls */
	uint32_t stop_at;        /* packets offered before stopping */
	bool abrupt;             /* workers leave without draining */
	uint8_t type_mode;       /* TYPES_*: the scheduling type of each flow */
	uint32_t consume_one_in; /* workers consume (drop) 1 in N ordered packets (0: none) */
	uint32_t window;         /* reorder window (0: default) */
	/* per packet and per flow */
	uint16_t *flow_of;
	uint32_t *seq_of;
	uint16_t *tag_of_flow;
	uint8_t *type_of_flow;
	uint32_t *last_out; /* per flow: last sequence + 1 seen at the output */
	uint8_t *seen, *dropped;
	_Atomic uint32_t owner[DIST_N_TAGS];
	/* results */
	_Atomic uint64_t violations, order_errors, tag_errors;
	_Atomic uint64_t consumed;      /* ordered packets workers consumed */
	_Atomic uint64_t late_returns;  /* ordered packets handed back after a later one */
	_Atomic uint32_t max_returned;  /* highest packet id handed back + 1 */
	uint32_t last_ordered_out;      /* thread 0: last ordered packet id sent + 1 */
	uint64_t ordered_out, out_order_errors;
	atomic_bool stop;
	struct dist *d;
};

struct wctx {
	struct run *r;
	uint32_t w;
	pthread_t th;
};

static void spin_ns(uint64_t ns)
{
	uint64_t end = time_now_ns() + ns;
	while (time_now_ns() < end)
		cpu_relax();
}

enum { TYPES_NONE = 0, TYPES_ORDERED, TYPES_PARALLEL, TYPES_MIXED };

/* Flow f's scheduling type in mode m: every flow of one type, or a third
 * of the flows each. */
static uint8_t flow_type(uint8_t m, uint32_t f)
{
	switch (m) {
	case TYPES_ORDERED:
		return SCHED_TYPE_ORDERED;
	case TYPES_PARALLEL:
		return SCHED_TYPE_PARALLEL;
	case TYPES_MIXED:
		return (uint8_t)(f % 3);
	default:
		return SCHED_TYPE_ATOMIC;
	}
}

/* A packet's random wait on a worker: 1 in 100 waits 200 ns / u^(2/3)
 * (mean 600 ns, a long tail). */
static void heavy_tail_wait(uint64_t *s)
{
	if (rng_next(s) % 100 == 0) {
		double u = (double)(rng_next(s) % 1000000 + 1) / 1e6;
		spin_ns(MIN((uint64_t)(200.0 / (cbrt(u) * cbrt(u))), 200000u));
	}
}

/* An ordered or parallel packet on worker c: its tag says its type; an
 * ordered one is handed back (or now and then consumed), a parallel one
 * is delivered here. Returns whether it was handed back (into ret). */
static bool worker_spread(struct wctx *c, uint32_t bi, uint16_t tag, uint64_t *s)
{
	struct run *r = c->r;
	uint32_t f = r->flow_of[bi];
	bool ordered = (tag & DIST_TAG_ORDERED) != 0;
	if (ordered != (r->type_of_flow[f] == SCHED_TYPE_ORDERED) ||
	    (!ordered && (tag & DIST_SEQ_MASK) != (r->tag_of_flow[f] & DIST_SEQ_MASK)))
		atomic_fetch_add(&r->tag_errors, 1);
	if (r->heavy_tail)
		heavy_tail_wait(s);
	if (!ordered) {
		r->seen[bi]++;
		return false;
	}
	if (r->consume_one_in && rng_next(s) % r->consume_one_in == 0) {
		r->dropped[bi]++;
		atomic_fetch_add(&r->consumed, 1);
		return false;
	}
	uint32_t m = atomic_load(&r->max_returned);
	while (m < bi + 1 && !atomic_compare_exchange_weak(&r->max_returned, &m, bi + 1))
		;
	if (m > bi + 1)
		atomic_fetch_add(&r->late_returns, 1);
	return true;
}

static void *worker(void *arg)
{
	struct wctx *c = arg;
	struct run *r = c->r;
	uint32_t bi[256];
	uint16_t tags[256];
	uint64_t s = 0x9e3779b97f4a7c15ull * (c->w + 1);
	uint32_t idle = 0;
	for (;;) {
		if (r->abrupt && atomic_load(&r->stop))
			break;
		uint32_t n = dist_worker_poll(r->d, c->w, bi, tags, 256);
		if (!n) {
			if (atomic_load(&r->stop))
				break;
			/* The threads outnumber the cores: an idle worker sleeps
			 * rather than spin against the ones with work. */
			if (++idle > 64)
				usleep(20);
			else
				cpu_relax();
			continue;
		}
		idle = 0;
		uint32_t ret[256], n_ret = 0;
		uint16_t ret_tags[256];
		for (uint32_t i = 0; i < n; i++) {
			if (tags[i] & DIST_TAG_SPREAD) {
				if (worker_spread(c, bi[i], tags[i], &s)) {
					ret[n_ret] = bi[i];
					ret_tags[n_ret++] = tags[i];
				}
				continue;
			}
			uint32_t f = r->flow_of[bi[i]];
			uint16_t t = tags[i] & HANDOFF_TAG_MASK;
			if (t != r->tag_of_flow[f])
				atomic_fetch_add(&r->tag_errors, 1);
			uint32_t expect = 0;
			if (!atomic_compare_exchange_strong(&r->owner[t], &expect, c->w + 1) && expect != c->w + 1)
				atomic_fetch_add(&r->violations, 1);
			uint32_t seq = r->seq_of[bi[i]];
			if (seq + 1 <= r->last_out[f])
				atomic_fetch_add(&r->order_errors, 1);
			r->last_out[f] = seq + 1;
			r->seen[bi[i]]++;
			if (r->heavy_tail)
				heavy_tail_wait(&s);
		}
		/* As interface-output does: before the batch is reported. */
		if (n_ret && dist_worker_return(r->d, c->w, ret, ret_tags, n_ret) != n_ret)
			atomic_fetch_add(&r->tag_errors, 1); /* sized never to refuse */
		if (r->heavy_tail && rng_next(&s) % 4000 == 0)
			usleep(1000); /* now and then a stall, as a descheduled core */
		if (r->slow_worker_ms && c->w == 0)
			usleep(r->slow_worker_ms * 1000);
		for (uint32_t i = 0; i < n; i++)
			if (!(tags[i] & DIST_TAG_SPREAD))
				atomic_store_explicit(&r->owner[tags[i] & HANDOFF_TAG_MASK], 0, memory_order_release);
	}
	return NULL;
}

static void run_setup(struct run *r)
{
	r->flow_of = malloc(r->packets * sizeof(uint16_t));
	r->seq_of = malloc(r->packets * sizeof(uint32_t));
	r->seen = calloc(r->packets, 1);
	r->dropped = calloc(r->packets, 1);
	r->tag_of_flow = malloc(r->flows * sizeof(uint16_t));
	r->type_of_flow = malloc(r->flows);
	r->last_out = calloc(r->flows, sizeof(uint32_t));
	uint32_t *next = calloc(r->flows, sizeof(uint32_t));
	ck_assert(r->flow_of && r->seq_of && r->seen && r->dropped && r->tag_of_flow && r->type_of_flow && r->last_out &&
		  next);
	const struct toeplitz_table *t = toeplitz_default_table();
	for (uint32_t f = 0; f < r->flows; f++) {
		uint8_t in[12];
		toeplitz_ip4_input(in, 0x0a000000u + f, 0xc0a80001u, (uint16_t)(1024 + f), 80, 1);
		r->tag_of_flow[f] = (uint16_t)(toeplitz_hash_table(t, in, 12) & HANDOFF_TAG_MASK);
		r->type_of_flow[f] = flow_type(r->type_mode, f);
	}
	uint64_t s = 0x2545f4914f6cdd1dull;
	for (uint32_t i = 0; i < r->packets; i++) {
		uint32_t f = (uint32_t)(rng_next(&s) % r->flows);
		r->flow_of[i] = (uint16_t)f;
		r->seq_of[i] = next[f]++;
	}
	free(next);
	for (uint32_t i = 0; i < DIST_N_TAGS; i++)
		atomic_init(&r->owner[i], 0);
	if (!r->stop_at)
		r->stop_at = r->packets;
	struct dist_config c;
	dist_config_default(&c);
	c.n_workers = r->n_workers;
	c.backlog = r->backlog;
	c.ring_lines = r->ring_lines;
	c.window = r->window;
	char err[256];
	r->d = dist_create(&c, err, sizeof(err));
	ck_assert_msg(r->d, "%s", err);
}

static void run_free(struct run *r)
{
	dist_free(r->d);
	free(r->flow_of);
	free(r->seq_of);
	free(r->seen);
	free(r->dropped);
	free(r->tag_of_flow);
	free(r->type_of_flow);
	free(r->last_out);
}

/* Thread 0 sends what the window released: ordered packets leave in
 * arrival order, which is packet id order. */
static void take_ordered(struct run *r)
{
	uint32_t out[256], k;
	while ((k = dist_ordered_take(r->d, out, 256)) != 0) {
		for (uint32_t i = 0; i < k; i++) {
			if (out[i] + 1 <= r->last_ordered_out)
				r->out_order_errors++;
			r->last_ordered_out = out[i] + 1;
			r->seen[out[i]]++;
		}
		r->ordered_out += k;
	}
}

/* Offer packets 0..stop_at as the rx thread would, stop as configured, and
 * check: no overlap, per-flow order, every packet seen or dropped exactly
 * once, ordered packets sent in arrival order, nothing owned at the end. */
static void run_go(struct run *r)
{
	struct wctx w[DIST_MAX_WORKERS];
	for (uint32_t i = 0; i < r->n_workers; i++) {
		w[i] = (struct wctx){ .r = r, .w = i };
		pthread_create(&w[i].th, NULL, worker, &w[i]);
	}
	uint32_t bi[300], dropped[300];
	uint16_t tags[300];
	uint8_t reason[300], types[300];
	uint64_t s = 0x853c49e6748fea9bull;
	uint32_t next = 0, call = 0, held = UINT32_MAX; /* skip_flow: packet of flow 0 held back */
	while (next < r->stop_at || held != UINT32_MAX) {
		uint32_t k = r->min_burst + (uint32_t)(rng_next(&s) % (r->max_burst - r->min_burst + 1));
		uint32_t n = 0;
		if (r->skip_flow && (call & 1) == 0 && held != UINT32_MAX) {
			bi[n] = held; /* flow 0 only in even calls */
			types[n] = r->type_of_flow[0];
			tags[n++] = r->tag_of_flow[0];
			held = UINT32_MAX;
		}
		while (n < k && next < r->stop_at) {
			uint32_t p = next++;
			if (r->skip_flow && r->flow_of[p] == 0) {
				if (held != UINT32_MAX) { /* one per even call; the rest are lost to the test */
					r->dropped[p] = 1;
					continue;
				}
				held = p;
				continue;
			}
			bi[n] = p;
			types[n] = r->type_of_flow[r->flow_of[p]];
			tags[n++] = r->tag_of_flow[r->flow_of[p]];
		}
		uint32_t taken = dist_process(r->d, bi, tags, r->type_mode ? types : NULL, n, dropped, reason, NULL);
		take_ordered(r);
		for (uint32_t i = 0; i < n - taken; i++)
			r->dropped[dropped[i]]++;
		call++;
		if (taken < n)
			usleep(20); /* the workers are behind: let them run (they share the cores) */
		if (r->pace_us)
			usleep(r->pace_us);
		if (next >= r->stop_at && !(r->skip_flow && (call & 1)))
			break;
	}
	if (!r->abrupt) {
		uint64_t deadline = time_now_ns() + 60000000000ull;
		while (dist_outstanding(r->d) && time_now_ns() < deadline) {
			if (!dist_flush(r->d))
				sched_yield();
			take_ordered(r);
		}
		ck_assert_uint_eq(dist_outstanding(r->d), 0);
	}
	atomic_store(&r->stop, true);
	for (uint32_t i = 0; i < r->n_workers; i++)
		pthread_join(w[i].th, NULL);
	uint32_t back[256], k;
	while ((k = dist_reclaim(r->d, back, 256)) != 0)
		for (uint32_t i = 0; i < k; i++)
			r->dropped[back[i]]++;
	if (held != UINT32_MAX)
		r->dropped[held]++;
	ck_assert_uint_eq(atomic_load(&r->violations), 0);
	ck_assert_uint_eq(atomic_load(&r->order_errors), 0);
	ck_assert_uint_eq(atomic_load(&r->tag_errors), 0);
	ck_assert_uint_eq(r->out_order_errors, 0);
	for (uint32_t i = 0; i < r->stop_at; i++)
		if (r->seen[i] + r->dropped[i] != 1)
			ck_abort_msg("packet %u seen %u dropped %u", i, r->seen[i], r->dropped[i]);
	struct dist_stats st;
	dist_stats(r->d, &st);
	ck_assert_uint_eq(st.bad_returns, 0);
	ck_assert_uint_eq(st.unordered, 0);
	ck_assert_uint_eq(st.window_used, 0);
	ck_assert_uint_eq(st.released, r->ordered_out);
	if (!r->abrupt) /* else the sequence numbers of packets taken back are gaps too */
		ck_assert_uint_eq(st.gaps, atomic_load(&r->consumed));
	ck_assert_uint_eq(dist_outstanding(r->d), 0);
	ck_assert_uint_eq(dist_flows_owned(r->d), 0);
}

static uint64_t total_seen(const struct run *r)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < r->stop_at; i++)
		n += r->seen[i];
	return n;
}

/* The slow-worker scenario: worker 0 takes ~10 ms per batch, worker 1
 * is fast, 64 flows, 1-4 packets per call, and flow 0 present in every
 * other call only (the call in between is where DPDK forgets its tag). */
START_TEST(test_slow_worker_scenario)
{
	static struct run r;
	memset(&r, 0, sizeof(r));
	r.n_workers = 2;
	r.packets = 6000;
	r.flows = 64;
	r.backlog = 8;
	r.ring_lines = 64;
	r.min_burst = 1;
	r.max_burst = 4;
	r.slow_worker_ms = 10;
	r.skip_flow = true;
	r.pace_us = 100;
	run_setup(&r);
	run_go(&r);
	struct dist_worker_stats w0, w1;
	dist_worker_stats(r.d, 0, &w0);
	dist_worker_stats(r.d, 1, &w1);
	/* The slow worker held flows across calls and got their packets. */
	ck_assert_uint_gt(w0.matched, 0);
	ck_assert_uint_gt(w1.handed, w0.handed);
	printf("slow-worker scenario: %u packets, seen %llu, slow worker %llu (matched %llu), fast %llu, "
	       "0 overlaps\n",
	       r.stop_at, (unsigned long long)total_seen(&r), (unsigned long long)w0.handed,
	       (unsigned long long)w0.matched, (unsigned long long)w1.handed);
	run_free(&r);
}
END_TEST

/* 1..max workers, random heavy-tailed delays, opt_packets packets over
 * 10,000 flows: exact per-flow order, exact accounting, no overlap. */
START_TEST(test_stress_heavy_tail)
{
	static struct run r;
	uint32_t n = (uint32_t)_i + 1;
	memset(&r, 0, sizeof(r));
	r.n_workers = n;
	r.packets = opt_packets;
	r.flows = 10000;
	r.backlog = 256;
	r.ring_lines = 64;
	r.min_burst = 1;
	r.max_burst = 64;
	r.heavy_tail = true;
	run_setup(&r);
	uint64_t t0 = time_now_ns();
	run_go(&r);
	struct dist_stats st;
	dist_stats(r.d, &st);
	uint64_t mig = 0;
	for (uint32_t w = 0; w < n; w++) {
		struct dist_worker_stats ws;
		dist_worker_stats(r.d, w, &ws);
		mig += ws.migrations;
	}
	printf("stress %u worker(s): %u packets, %llu delivered, drops worker-full %llu all-full %llu, "
	       "%llu migrations, %.2f s\n",
	       n, r.packets, (unsigned long long)total_seen(&r), (unsigned long long)st.drops[DIST_DROP_WORKER_FULL],
	       (unsigned long long)st.drops[DIST_DROP_ALL_FULL], (unsigned long long)mig,
	       (double)(time_now_ns() - t0) / 1e9);
	ck_assert_uint_gt(total_seen(&r), r.packets / 2);
	run_free(&r);
}
END_TEST

/* Equal-speed workers: each gets at least 1/(2N) of the packets, and flows
 * move between workers as they go idle. The calls are paced so that the
 * workers keep up even when the box gives one of them less CPU (2 cores,
 * N + 1 threads, TSan): equal speed is then what the test sets, not what
 * the scheduler happens to give (unpaced, a worker descheduled for a few
 * slices kept its flows and got 22% of 2 under TSan on a busy box). */
START_TEST(test_balance_equal_workers)
{
	static struct run r;
	uint32_t n = (uint32_t)_i + 2;
	memset(&r, 0, sizeof(r));
	r.n_workers = n;
	r.packets = opt_packets / 4;
	r.flows = 10000;
	r.backlog = 256;
	r.ring_lines = 64;
	r.min_burst = 32;
	r.max_burst = 32;
	r.pace_us = 20;
	run_setup(&r);
	run_go(&r);
	uint64_t total = 0, mig = 0, handed[DIST_MAX_WORKERS];
	for (uint32_t w = 0; w < n; w++) {
		struct dist_worker_stats ws;
		dist_worker_stats(r.d, w, &ws);
		handed[w] = ws.handed;
		total += ws.handed;
		mig += ws.migrations;
	}
	printf("balance %u workers:", n);
	for (uint32_t w = 0; w < n; w++)
		printf(" %.1f%%", 100.0 * (double)handed[w] / (double)total);
	printf(", %llu migrations\n", (unsigned long long)mig);
	for (uint32_t w = 0; w < n; w++)
		ck_assert_msg(handed[w] * 2 * n >= total, "worker %u got %llu of %llu", w,
			      (unsigned long long)handed[w], (unsigned long long)total);
	ck_assert_uint_gt(mig, 0);
	run_free(&r);
}
END_TEST

/* Shutdown in the middle of the stream: with a drain, and with workers that
 * leave at once (their rings and backlogs come back through reclaim). */
START_TEST(test_shutdown_mid_stream)
{
	static struct run r;
	memset(&r, 0, sizeof(r));
	r.n_workers = MIN(3u, opt_max_workers);
	r.packets = opt_packets / 10;
	r.flows = 1000;
	r.backlog = 64;
	r.ring_lines = 16;
	r.min_burst = 1;
	r.max_burst = 64;
	r.heavy_tail = true;
	r.stop_at = r.packets / 2 + r.packets / 7;
	r.abrupt = _i == 1;
	run_setup(&r);
	run_go(&r);
	struct dist_stats st;
	dist_stats(r.d, &st);
	printf("shutdown (%s) after %u packets: %llu delivered, %llu reclaimed at shutdown\n",
	       r.abrupt ? "abrupt" : "drained", r.stop_at, (unsigned long long)total_seen(&r),
	       (unsigned long long)st.drops[DIST_DROP_SHUTDOWN]);
	if (!r.abrupt)
		ck_assert_uint_eq(st.drops[DIST_DROP_SHUTDOWN], 0);
	run_free(&r);
}
END_TEST

/* Ordered packets of one flow, 2..max workers with heavy-tailed delays:
 * every worker gets some, they come back out of order (asserted), and
 * they leave in exactly their arrival order, consumed ones skipped. */
START_TEST(test_ordered_one_flow_threads)
{
	static struct run r;
	uint32_t n = (uint32_t)_i + 2;
	memset(&r, 0, sizeof(r));
	r.n_workers = n;
	r.packets = MAX(opt_packets / 10, 20000u);
	r.flows = 1;
	r.backlog = 64;
	r.ring_lines = 16;
	r.min_burst = 1;
	r.max_burst = 64;
	r.heavy_tail = true;
	r.type_mode = TYPES_ORDERED;
	r.consume_one_in = 64;
	run_setup(&r);
	run_go(&r);
	struct dist_stats st;
	dist_stats(r.d, &st);
	printf("ordered, one flow, %u workers: %u packets, %llu sent in order, %llu consumed (gaps %llu), "
	       "%llu handed back late, drops: workers busy %llu, window full %llu; per worker",
	       n, r.packets, (unsigned long long)r.ordered_out, (unsigned long long)atomic_load(&r.consumed),
	       (unsigned long long)st.gaps, (unsigned long long)atomic_load(&r.late_returns),
	       (unsigned long long)st.drops[DIST_DROP_SPREAD_FULL], (unsigned long long)st.drops[DIST_DROP_WINDOW_FULL]);
	for (uint32_t w = 0; w < n; w++) {
		struct dist_worker_stats ws;
		dist_worker_stats(r.d, w, &ws);
		printf(" %llu", (unsigned long long)ws.ordered);
		ck_assert_uint_gt(ws.ordered, 0);
		ck_assert_uint_eq(ws.flows, 0);
	}
	printf("\n");
	ck_assert_uint_gt(atomic_load(&r.late_returns), 0);
	ck_assert_uint_gt(atomic_load(&r.consumed), 0);
	ck_assert_uint_gt(r.ordered_out, r.packets / 2);
	run_free(&r);
}
END_TEST

/* Parallel packets of one flow reach every worker, pin nothing, and are
 * each delivered exactly once. */
START_TEST(test_parallel_one_flow_threads)
{
	static struct run r;
	uint32_t n = (uint32_t)_i + 2;
	memset(&r, 0, sizeof(r));
	r.n_workers = n;
	r.packets = MAX(opt_packets / 10, 20000u);
	r.flows = 1;
	r.backlog = 64;
	r.ring_lines = 16;
	r.min_burst = 1;
	r.max_burst = 64;
	r.heavy_tail = true;
	r.type_mode = TYPES_PARALLEL;
	run_setup(&r);
	run_go(&r);
	printf("parallel, one flow, %u workers:", n);
	for (uint32_t w = 0; w < n; w++) {
		struct dist_worker_stats ws;
		dist_worker_stats(r.d, w, &ws);
		printf(" %llu", (unsigned long long)ws.parallel);
		ck_assert_uint_gt(ws.parallel, 0);
		ck_assert_uint_eq(ws.matched, 0);
	}
	printf(" (%llu delivered of %u)\n", (unsigned long long)total_seen(&r), r.packets);
	ck_assert_uint_gt(total_seen(&r), r.packets / 2);
	run_free(&r);
}
END_TEST

/* A third of 1,000 flows each type in one stream: atomic flows keep their
 * guarantees (the owner-word CAS sees no overlap, per-flow order at the
 * worker), ordered ones leave in arrival order, parallel ones arrive once.
 * Then the same with a window of 64 and small rings: packets are dropped
 * for a full window and for busy workers, and none of it stalls the window
 * or leaves a packet unaccounted. */
START_TEST(test_mixed_types_threads)
{
	static struct run r;
	bool tight = _i == 1;
	memset(&r, 0, sizeof(r));
	r.n_workers = MIN(3u, opt_max_workers);
	r.packets = opt_packets / 4;
	r.flows = 1000;
	r.backlog = tight ? 8 : 256;
	r.ring_lines = tight ? 4 : 64;
	r.window = tight ? 16 : 0;
	r.min_burst = 1;
	r.max_burst = 64;
	r.heavy_tail = true;
	r.type_mode = TYPES_MIXED;
	r.consume_one_in = 100;
	run_setup(&r);
	run_go(&r);
	struct dist_stats st;
	dist_stats(r.d, &st);
	uint64_t ordered = 0, parallel = 0, handed = 0;
	for (uint32_t w = 0; w < r.n_workers; w++) {
		struct dist_worker_stats ws;
		dist_worker_stats(r.d, w, &ws);
		ordered += ws.ordered;
		parallel += ws.parallel;
		handed += ws.handed;
	}
	printf("mixed types%s, %u workers: %llu handed (ordered %llu, parallel %llu), %llu ordered sent in order, "
	       "drops: worker busy %llu, new flow %llu, ordered/parallel %llu, window full %llu\n",
	       tight ? " (window 16, small rings)" : "", r.n_workers, (unsigned long long)handed,
	       (unsigned long long)ordered, (unsigned long long)parallel, (unsigned long long)r.ordered_out,
	       (unsigned long long)st.drops[DIST_DROP_WORKER_FULL], (unsigned long long)st.drops[DIST_DROP_ALL_FULL],
	       (unsigned long long)st.drops[DIST_DROP_SPREAD_FULL], (unsigned long long)st.drops[DIST_DROP_WINDOW_FULL]);
	ck_assert_uint_gt(ordered, 0);
	ck_assert_uint_gt(parallel, 0);
	ck_assert_uint_gt(handed - ordered - parallel, 0);
	if (tight) {
		ck_assert_uint_gt(st.drops[DIST_DROP_WINDOW_FULL], 0);
		/* Busy-worker drops depend on how the threads are scheduled: a
		 * ThreadSanitizer run on a loaded 2-vCPU box saw none (stop 32).
		 * Printed above; whatever was dropped is accounted by run_go. */
	}
	run_free(&r);
}
END_TEST

/* Shutdown in the middle of a mixed stream, workers leaving at once: what
 * they handed back, what sat in the window and what they never took all
 * come back through reclaim; every packet is accounted exactly once.
 * _i 2 and 3: the same at one line in flight (ring_lines 1: a mailbox
 * each way, each line's count its full/empty word, a backlog of 8): no
 * flow on two workers at once, order kept, the mailboxes' lines taken
 * back. */
START_TEST(test_shutdown_mixed_types)
{
	static struct run r;
	bool one_line = _i >= 2;
	memset(&r, 0, sizeof(r));
	r.n_workers = MIN(3u, opt_max_workers);
	r.packets = opt_packets / 10;
	r.flows = 300;
	r.backlog = one_line ? 8 : 64;
	r.ring_lines = one_line ? 1 : 16;
	r.min_burst = 1;
	r.max_burst = 64;
	r.heavy_tail = true;
	r.type_mode = TYPES_MIXED;
	r.consume_one_in = 100;
	r.stop_at = r.packets / 2 + r.packets / 7;
	r.abrupt = _i & 1;
	run_setup(&r);
	run_go(&r);
	struct dist_stats st;
	dist_stats(r.d, &st);
	printf("shutdown mixed types (%s%s) after %u packets: %llu delivered, %llu reclaimed, %llu ordered sent\n",
	       r.abrupt ? "abrupt" : "drained", one_line ? ", one line in flight" : "", r.stop_at,
	       (unsigned long long)total_seen(&r), (unsigned long long)st.drops[DIST_DROP_SHUTDOWN],
	       (unsigned long long)r.ordered_out);
	if (!r.abrupt)
		ck_assert_uint_eq(st.drops[DIST_DROP_SHUTDOWN], 0);
	for (uint32_t w = 0; one_line && w < r.n_workers; w++) {
		struct dist_worker_stats ws;
		dist_worker_stats(r.d, w, &ws);
		ck_assert_uint_eq(ws.ring_lines, 1);
		ck_assert_uint_eq(ws.ring_used, 0);
		ck_assert_uint_gt(ws.handed, 0);
	}
	run_free(&r);
}
END_TEST

int main(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--packets"))
			opt_packets = (uint32_t)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--max-workers"))
			opt_max_workers = (uint32_t)strtoul(argv[i + 1], NULL, 0);
	}
	printf("test_dist: %u packets, up to %u workers, matcher %s\n", opt_packets, opt_max_workers,
	       dist_match_vector_isa);
	Suite *s = suite_create("dist");
	TCase *tc = tcase_create("lib");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_matchers_agree);
	tcase_add_test(tc, test_pinning_and_release);
	tcase_add_test(tc, test_completion_by_count);
	tcase_add_test(tc, test_backpressure_isolates_a_stalled_worker);
	tcase_add_test(tc, test_one_line_in_flight);
	tcase_add_test(tc, test_idle_time_stamped);
	tcase_add_test(tc, test_one_worker_path_agrees);
	tcase_add_test(tc, test_conf_ring_lines_range);
	tcase_add_test(tc, test_backlog_lines_wrap);
	tcase_add_test(tc, test_parallel_spreads_one_flow);
	tcase_add_test(tc, test_parallel_lines_whole_and_split);
	tcase_add_test(tc, test_ordered_restores_order);
	tcase_add_test(tc, test_ordered_window_full);
	tcase_add_test(tc, test_mixed_types_one_call);
	tcase_add_test(tc, test_ordered_buffers_attributed);
	tcase_add_test(tc, test_slow_worker_scenario);
	tcase_add_loop_test(tc, test_stress_heavy_tail, 0, (int)opt_max_workers);
	tcase_add_loop_test(tc, test_balance_equal_workers, 0, (int)opt_max_workers - 1);
	tcase_add_loop_test(tc, test_shutdown_mid_stream, 0, 2);
	tcase_add_loop_test(tc, test_ordered_one_flow_threads, 0, (int)MIN(opt_max_workers, 3u) - 1);
	tcase_add_loop_test(tc, test_parallel_one_flow_threads, 0, (int)MIN(opt_max_workers, 3u) - 1);
	tcase_add_loop_test(tc, test_mixed_types_threads, 0, 2);
	tcase_add_loop_test(tc, test_shutdown_mixed_types, 0, 4);
	suite_add_tcase(s, tc);
	return check_run_suite(s);
}
