/* Event queues (evq.h): setup, enqueue, the priority and weighted round
 * robin dequeue, statistics. One thread's: no atomics, no locks.
 *
 * Each queue holds one FIFO per level, each `depth` events: new events are
 * refused once the queue holds `depth` over all levels together, so no
 * FIFO can overflow. Two bitmaps find the work: level_mask (levels with a
 * non-empty queue) and level_queues[l] (the queues non-empty at level l).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sched/evq.h"

/* One (queue, level) FIFO; head and tail run free, mask = size - 1. */
struct evq_iq {
	struct evq_event *ev;
	uint32_t head;
	uint32_t tail;
};

struct evq_queue {
	struct evq_iq iq[EVQ_LEVELS];
	uint32_t iq_mask;      /* each level's FIFO: depth - 1 */
	uint32_t depth;        /* new events refused when held == depth */
	uint32_t held;
	uint8_t configured;
	uint16_t weight;
	uint64_t n_enqueued;
	uint64_t n_refused;
	uint64_t n_dispatched;
};

struct evq {
	uint32_t n_queues;
	uint8_t level_mask;                /* levels with a non-empty queue */
	uint64_t level_queues[EVQ_LEVELS]; /* per level: queues non-empty at it */
	uint32_t rr_queue[EVQ_LEVELS];     /* queue whose turn it is */
	uint32_t rr_left[EVQ_LEVELS];      /* events left in that turn */
	struct evq_stats st;
	struct evq_queue queues[EVQ_MAX_QUEUES];
};

/* ---- setup ---------------------------------------------------------- */

static bool pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

static void *alloc_lines(size_t bytes)
{
	void *p = aligned_alloc(CACHE_LINE_SIZE, ROUND_UP(bytes, CACHE_LINE_SIZE));
	if (p)
		memset(p, 0, ROUND_UP(bytes, CACHE_LINE_SIZE));
	return p;
}

void evq_queue_config_default(struct evq_queue_config *qc)
{
	*qc = (struct evq_queue_config){
		.weight = 1,
		.depth = 1024,
	};
}

struct evq *evq_create(uint32_t n_queues, char *err, size_t errlen)
{
	if (n_queues < 1 || n_queues > EVQ_MAX_QUEUES) {
		if (err && errlen)
			snprintf(err, errlen, "queues: %u is not in 1..%u", n_queues, EVQ_MAX_QUEUES);
		return NULL;
	}
	struct evq *q = alloc_lines(sizeof(*q));
	if (!q) {
		if (err && errlen)
			snprintf(err, errlen, "out of memory");
		return NULL;
	}
	q->n_queues = n_queues;
	return q;
}

static void queue_free(struct evq_queue *eq)
{
	for (uint32_t l = 0; l < EVQ_LEVELS; l++)
		free(eq->iq[l].ev);
	memset(eq, 0, sizeof(*eq));
}

size_t evq_mem_bytes(const struct evq *q)
{
	size_t n = ROUND_UP(sizeof(*q), CACHE_LINE_SIZE);
	for (uint32_t i = 0; i < q->n_queues; i++)
		if (q->queues[i].configured)
			n += EVQ_LEVELS * ROUND_UP((size_t)q->queues[i].depth * sizeof(struct evq_event), CACHE_LINE_SIZE);
	return n;
}

void evq_destroy(struct evq *q)
{
	if (!q)
		return;
	for (uint32_t i = 0; i < EVQ_MAX_QUEUES; i++)
		queue_free(&q->queues[i]);
	free(q);
}

int evq_queue_setup(struct evq *q, uint32_t queue, const struct evq_queue_config *qc)
{
	if (queue >= q->n_queues || qc->weight < 1 || qc->weight > 65535 || !pow2(qc->depth))
		return -EINVAL;
	struct evq_queue *eq = &q->queues[queue];
	if (eq->configured)
		return -EBUSY;
	for (uint32_t l = 0; l < EVQ_LEVELS; l++) {
		eq->iq[l].ev = alloc_lines((size_t)qc->depth * sizeof(struct evq_event));
		if (!eq->iq[l].ev) {
			queue_free(eq);
			return -ENOMEM;
		}
	}
	eq->iq_mask = qc->depth - 1;
	eq->depth = qc->depth;
	eq->weight = (uint16_t)qc->weight;
	eq->configured = 1;
	return 0;
}

int evq_queue_set_weight(struct evq *q, uint32_t queue, uint32_t weight)
{
	if (queue >= q->n_queues || !q->queues[queue].configured || weight < 1 || weight > 65535)
		return -EINVAL;
	q->queues[queue].weight = (uint16_t)weight;
	for (uint32_t l = 0; l < EVQ_LEVELS; l++)
		if (q->rr_queue[l] == queue && q->rr_left[l] > weight)
			q->rr_left[l] = weight;
	return 0;
}

/* ---- enqueue ------------------------------------------------------- */

/* queue and priority side by side: one compare finds a run's end */
static inline uint16_t run_key(const struct evq_event *ev)
{
	return (uint16_t)(ev->queue | ev->priority << 8);
}

/* Whether any of e[0..8) has another key than `key`: the eight keys'
 * differences OR-ed into one test. */
static inline bool differ8(const struct evq_event *e, uint32_t key)
{
	uint32_t diff = 0;
#pragma GCC unroll 8
	for (uint32_t k = 0; k < 8; k++)
		diff |= (uint32_t)run_key(&e[k]) ^ key;
	return diff != 0;
}

/* The end of the run of `key` that starts at ev[i] (ev[i] is of it).
 * Eight events a test, so that a burst that is one run (the usual
 * producer's) costs a branch per eight events instead of one per event;
 * fewer than eight left are tested as the burst's last eight, overlapping
 * events known to be of the run. Where a test fails, one by one. */
static inline uint32_t run_end(const struct evq_event *ev, uint32_t i, uint32_t n, uint32_t key)
{
	const struct evq_event *e = ev + i + 1, *last = ev + n;
	while (last - e >= 8 && !differ8(e, key))
		e += 8;
	if (e < last && last - e < 8 && last - 8 >= ev + i && !differ8(last - 8, key))
		return n;
	while (e < last && run_key(e) == key)
		e++;
	return (uint32_t)(e - ev);
}

/* Copy a run of n events of one (queue, level) into its FIFO: at most two
 * memcpy, as the FIFO wraps. */
static void iq_copy(struct evq_queue *eq, struct evq_iq *iq, const struct evq_event *ev, uint32_t n)
{
	uint32_t at = iq->tail & eq->iq_mask, first = MIN(n, eq->iq_mask + 1 - at);
	memcpy(&iq->ev[at], ev, first * sizeof(*ev));
	if (unlikely(first < n))
		memcpy(&iq->ev[0], ev + first, (n - first) * sizeof(*ev));
	iq->tail += n;
}

/* Runs of one (queue, priority) are taken whole: checks and bookkeeping
 * once a run, a copy per event (a producer's burst is usually one run). */
uint32_t evq_enqueue(struct evq *q, const struct evq_event *ev, uint32_t n)
{
	uint32_t i = 0;
	while (i < n) {
		uint32_t queue = ev[i].queue, lvl = ev[i].priority;
		if (unlikely(queue >= q->n_queues || lvl >= EVQ_LEVELS || !q->queues[queue].configured)) {
			q->st.invalid++;
			break;
		}
		struct evq_queue *eq = &q->queues[queue];
		uint32_t end = run_end(ev, i, n, run_key(&ev[i]));
		uint32_t take = MIN(end - i, eq->depth - eq->held);
		if (likely(take)) {
			iq_copy(eq, &eq->iq[lvl], ev + i, take);
			eq->held += take;
			eq->n_enqueued += take;
			q->level_queues[lvl] |= 1ull << queue;
			q->level_mask |= (uint8_t)(1u << lvl);
			i += take;
		}
		if (unlikely(i < end)) {
			eq->n_refused += n - i;
			q->st.refused += n - i;
			break;
		}
	}
	q->st.enqueued += i;
	return i;
}

/* ---- dequeue ------------------------------------------------------- */

/* Up to max events of one (queue, level) into ev[], from the FIFO's head
 * (at most two memcpy); returns how many. */
static inline __attribute__((always_inline)) uint32_t serve(struct evq *q, uint32_t queue, uint32_t lvl,
							    struct evq_event *ev, uint32_t max)
{
	struct evq_queue *eq = &q->queues[queue];
	struct evq_iq *iq = &eq->iq[lvl];
	uint32_t n = MIN(max, iq->tail - iq->head);
	uint32_t at = iq->head & eq->iq_mask, first = MIN(n, eq->iq_mask + 1 - at);
	memcpy(ev, &iq->ev[at], first * sizeof(*ev));
	if (unlikely(first < n))
		memcpy(ev + first, iq->ev, (n - first) * sizeof(*ev));
	iq->head += n;
	eq->held -= n;
	eq->n_dispatched += n;
	q->st.dispatched += n;
	q->st.dispatched_level[lvl] += n;
	if (iq->head == iq->tail) {
		q->level_queues[lvl] &= ~(1ull << queue);
		if (!q->level_queues[lvl])
			q->level_mask &= (uint8_t)~(1u << lvl);
	}
	return n;
}

/* The lowest set bit of cand above `after`, else the lowest. */
static inline uint32_t next_queue(uint64_t cand, uint32_t after)
{
	uint64_t above = after >= 63 ? 0 : cand & (~0ull << (after + 1));
	return (uint32_t)__builtin_ctzll(above ? above : cand);
}

/* Round robin within one level of two or more queues, up to max events. A
 * turn outlives the call only when max cut it short, so that weights hold
 * exactly while every queue of the level stays backlogged. */
static __attribute__((noinline)) uint32_t dequeue_turns(struct evq *q, uint32_t lvl, struct evq_event *ev,
							 uint32_t max)
{
	uint64_t cand = q->level_queues[lvl];
	uint32_t got = 0;
	while (cand && got < max) {
		uint32_t queue = q->rr_queue[lvl];
		if (!q->rr_left[lvl] || !(cand & (1ull << queue))) {
			queue = next_queue(cand, queue);
			q->rr_queue[lvl] = queue;
			q->rr_left[lvl] = q->queues[queue].weight;
		}
		uint32_t want = MIN(q->rr_left[lvl], max - got);
		uint32_t n = serve(q, queue, lvl, ev + got, want);
		q->rr_left[lvl] -= n;
		got += n;
		if (n < want)
			cand &= ~(1ull << queue); /* emptied: its turn is over */
	}
	return got;
}

/* One level, up to max events: a level of one queue (the usual: one class
 * per priority) is served inline, with no turns to keep. */
static inline uint32_t dequeue_level(struct evq *q, uint32_t lvl, struct evq_event *ev, uint32_t max)
{
	uint64_t cand = q->level_queues[lvl];
	if (likely(!(cand & (cand - 1))))
		return serve(q, (uint32_t)__builtin_ctzll(cand), lvl, ev, max);
	return dequeue_turns(q, lvl, ev, max);
}

/* Strict priority: a level is served only once every level above it is
 * empty. The levels only empty while this runs, so one snapshot of the
 * mask is enough. */
uint32_t evq_dequeue(struct evq *q, struct evq_event *ev, uint32_t max)
{
	uint32_t got = 0;
	for (uint32_t levels = q->level_mask; levels && got < max; levels &= levels - 1)
		got += dequeue_level(q, (uint32_t)__builtin_ctz(levels), ev + got, max - got);
	return got;
}

/* ---- statistics ---------------------------------------------------- */

uint64_t evq_held(const struct evq *q)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < q->n_queues; i++)
		n += q->queues[i].held;
	return n;
}

void evq_stats(const struct evq *q, struct evq_stats *st)
{
	*st = q->st;
}

int evq_queue_stats(const struct evq *q, uint32_t queue, struct evq_queue_stats *st)
{
	if (queue >= q->n_queues)
		return -EINVAL;
	const struct evq_queue *eq = &q->queues[queue];
	*st = (struct evq_queue_stats){
		.enqueued = eq->n_enqueued,
		.refused = eq->n_refused,
		.dispatched = eq->n_dispatched,
		.held = eq->held,
	};
	return 0;
}
