/* One egress interface's schedule (egress.h): class queues under a
 * token-bucket shaper, then a delay line, both lists of buffers linked
 * through the buffer's opaque area.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/egress.h"

#define UNITS_PER_BYTE 8000000000ll /* credit units: 1/8e9 byte, so 1 ns at r bit/s adds r */
#define CATCH_UP_MAX (INT64_MAX / 4)   /* credit a late run may spend on a backlog: 288 MB */

/* A FIFO of buffers linked through opaque[0..3]. */
struct pktq {
	uint32_t head, tail, n;
};

struct sched_egress {
	struct pktq cls[SCHED_N_PRIO];
	struct pktq line; /* the delay line, in release order */
	uint32_t mask;    /* bit p: cls[p] is not empty */
	bool backlogged;  /* the class queues held packets at the last run's end */
	uint32_t held, max_held;
	uint64_t rate_bps, burst_bytes;
	uint64_t delay_ns, jitter_ns;
	int64_t tokens, cap; /* credit units */
	uint64_t last_ns;    /* tokens are as of this time */
	uint64_t last_release_ns;
	uint64_t rng;
	uint64_t enqueued, released, dropped;
	uint64_t held_class[SCHED_MAX_CLASSES];
	uint64_t released_class[SCHED_MAX_CLASSES];
	uint64_t dropped_class[SCHED_MAX_CLASSES];
};

/* Counters are written by the owner only and read anywhere. */
static inline void add(uint64_t *p, int64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + (uint64_t)n, __ATOMIC_RELAXED);
}

static inline uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t *link_of(uint32_t bi)
{
	return (uint32_t *)buffer_get(bi)->opaque;
}

static inline void q_push(struct pktq *q, uint32_t bi)
{
	*link_of(bi) = BUFFER_INVALID;
	if (q->n)
		*link_of(q->tail) = bi;
	else
		q->head = bi;
	q->tail = bi;
	q->n++;
}

static inline uint32_t q_pop(struct pktq *q)
{
	uint32_t bi = q->head;
	q->head = *link_of(bi);
	q->n--;
	return bi;
}

/* Ethernet frame bytes: the buffer's length, chain included. */
static inline uint64_t frame_bytes(const struct buffer *b)
{
	uint64_t len = b->current_length;
	if (b->flags & BUFFER_F_NEXT_PRESENT)
		len += b->total_length_not_including_first;
	return len;
}

static uint64_t rng_next(struct sched_egress *e)
{
	e->rng ^= e->rng >> 12;
	e->rng ^= e->rng << 25;
	e->rng ^= e->rng >> 27;
	return e->rng * 0x2545f4914f6cdd1dull;
}

struct sched_egress *sched_egress_create(uint32_t max_held, uint64_t seed, char *err, size_t errlen)
{
	if (max_held < 1 || max_held > SCHED_HELD_MAX) {
		snprintf(err, errlen, "max-held %u: expected 1..%u", max_held, SCHED_HELD_MAX);
		return NULL;
	}
	struct sched_egress *e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	e->max_held = max_held;
	e->rng = seed ? seed : 0x9e3779b97f4a7c15ull;
	return e;
}

void sched_egress_destroy(struct sched_egress *e)
{
	if (!e)
		return;
	uint32_t bi[256], n;
	while ((n = sched_egress_flush(e, bi, 256)) != 0)
		buffer_free(bi, n);
	free(e);
}

int sched_egress_set_shaper(struct sched_egress *e, uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns)
{
	if (rate_bps && (rate_bps < SCHED_RATE_MIN || rate_bps > SCHED_RATE_MAX || burst_bytes < SCHED_BURST_MIN ||
			 burst_bytes > SCHED_BURST_MAX))
		return -EINVAL;
	e->rate_bps = rate_bps;
	e->burst_bytes = rate_bps ? burst_bytes : 0;
	e->cap = (int64_t)e->burst_bytes * UNITS_PER_BYTE;
	e->tokens = e->cap;
	e->last_ns = now_ns;
	return 0;
}

int sched_egress_set_delay(struct sched_egress *e, uint64_t delay_ns, uint64_t jitter_ns)
{
	if (delay_ns > SCHED_DELAY_MAX || jitter_ns > delay_ns)
		return -EINVAL;
	e->delay_ns = delay_ns;
	e->jitter_ns = jitter_ns;
	return 0;
}

int sched_egress_set_max_held(struct sched_egress *e, uint32_t max_held)
{
	if (max_held < 1 || max_held > SCHED_HELD_MAX)
		return -EINVAL;
	e->max_held = max_held;
	return 0;
}

/* Tokens as of now: t ns add t * rate units, up to the bucket's depth;
 * but while packets wait, without that cap: a shaper served continuously
 * would have spent the credit on them as it came, so a run that comes
 * late (its thread did not get the CPU) releases what that shaper would
 * have sent meanwhile, and only what is left when the queues run empty is
 * capped (run_shaper). */
static void refill(struct sched_egress *e, uint64_t now_ns)
{
	if (now_ns <= e->last_ns)
		return;
	uint64_t dt = now_ns - e->last_ns;
	int64_t limit = e->backlogged && e->cap < CATCH_UP_MAX ? CATCH_UP_MAX : e->cap;
	e->last_ns = now_ns;
	if (e->tokens >= limit)
		return;
	uint64_t room = (uint64_t)(limit - e->tokens);
	int64_t t = dt > room / e->rate_bps ? limit : e->tokens + (int64_t)(dt * e->rate_bps);
	__atomic_store_n(&e->tokens, t, __ATOMIC_RELAXED);
}

/* What the head packet must find in the bucket to leave: its cost, or a
 * full bucket for a frame longer than the burst. */
static inline int64_t cost_of(const struct sched_egress *e, const struct buffer *b, int64_t *full)
{
	*full = (int64_t)frame_bytes(b) * UNITS_PER_BYTE;
	return *full < e->cap ? *full : e->cap;
}

/* A packet leaving the shaper at now enters the delay line: its release
 * time, never before now nor before the packet ahead of it. */
static void line_push(struct sched_egress *e, uint32_t bi, uint64_t now_ns)
{
	uint64_t t = now_ns + e->delay_ns;
	if (e->jitter_ns) {
		uint64_t span = 2 * e->jitter_ns + 1;
		t = t + rng_next(e) % span - e->jitter_ns;
	}
	if (t < e->last_release_ns)
		t = e->last_release_ns;
	e->last_release_ns = t;
	buffer_get(bi)->timestamp_ns = t;
	q_push(&e->line, bi);
}

static inline void count_out(struct sched_egress *e, uint32_t bi)
{
	uint32_t c = sched_buffer_class(buffer_get(bi));
	add(&e->held_class[c], -1);
	add(&e->released_class[c], 1);
}

uint32_t sched_egress_enqueue(struct sched_egress *e, const uint32_t *bi, uint32_t n,
			      const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns, uint32_t *dropped)
{
	uint32_t n_drop = 0, n_in = 0;
	uint32_t held = e->held;
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = sched_buffer_class(buffer_get(bi[i]));
		if (unlikely(held >= e->max_held)) {
			dropped[n_drop++] = bi[i];
			add(&e->dropped_class[c], 1);
			continue;
		}
		add(&e->held_class[c], 1);
		n_in++;
		held++;
		if (e->rate_bps) {
			uint32_t p = prio[c] & (SCHED_N_PRIO - 1);
			q_push(&e->cls[p], bi[i]);
			e->mask |= 1u << p;
		} else {
			line_push(e, bi[i], now_ns);
		}
	}
	add(&e->enqueued, n_in);
	add(&e->dropped, n_drop);
	__atomic_store_n(&e->held, held, __ATOMIC_RELAXED);
	return n_drop;
}

/* Shaper: the head of the highest-priority class leaves while the bucket
 * holds its cost. Straight to out when nothing waits in the delay line
 * and there is no delay; else into the line. */
static uint32_t run_shaper(struct sched_egress *e, uint64_t now_ns, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	if (e->rate_bps)
		refill(e, now_ns);
	while (e->mask) {
		uint32_t p = (uint32_t)__builtin_ctz(e->mask);
		struct pktq *q = &e->cls[p];
		bool direct = !e->line.n && !e->delay_ns && !e->jitter_ns;
		if (direct && n == max)
			break;
		if (e->rate_bps) {
			int64_t full, need = cost_of(e, buffer_get(q->head), &full);
			if (e->tokens < need)
				break;
			__atomic_store_n(&e->tokens, e->tokens - full, __ATOMIC_RELAXED);
		}
		uint32_t bi = q_pop(q);
		if (!q->n)
			e->mask &= ~(1u << p);
		if (direct) {
			out[n++] = bi;
			count_out(e, bi);
		} else {
			line_push(e, bi, now_ns);
		}
	}
	if (!e->mask && e->tokens > e->cap)
		__atomic_store_n(&e->tokens, e->cap, __ATOMIC_RELAXED);
	e->backlogged = e->mask != 0;
	return n;
}

uint32_t sched_egress_dequeue(struct sched_egress *e, uint64_t now_ns, uint32_t *out, uint32_t max)
{
	uint32_t n = run_shaper(e, now_ns, out, max);
	while (n < max && e->line.n && buffer_get(e->line.head)->timestamp_ns <= now_ns) {
		uint32_t bi = q_pop(&e->line);
		out[n++] = bi;
		count_out(e, bi);
	}
	if (n) {
		__atomic_store_n(&e->held, e->held - n, __ATOMIC_RELAXED);
		add(&e->released, n);
	}
	return n;
}

uint64_t sched_egress_next_ns(const struct sched_egress *e)
{
	uint64_t next = UINT64_MAX;
	if (e->line.n)
		next = buffer_get(e->line.head)->timestamp_ns;
	if (e->mask) {
		uint64_t t = e->last_ns;
		if (e->rate_bps) {
			uint32_t p = (uint32_t)__builtin_ctz(e->mask);
			int64_t full, need = cost_of(e, buffer_get(e->cls[p].head), &full);
			if (e->tokens < need)
				t += ((uint64_t)(need - e->tokens) + e->rate_bps - 1) / e->rate_bps;
		}
		next = t < next ? t : next;
	}
	return next;
}

uint32_t sched_egress_flush(struct sched_egress *e, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	while (n < max && e->line.n) {
		out[n] = q_pop(&e->line);
		count_out(e, out[n++]);
	}
	while (n < max && e->mask) {
		uint32_t p = (uint32_t)__builtin_ctz(e->mask);
		out[n] = q_pop(&e->cls[p]);
		count_out(e, out[n++]);
		if (!e->cls[p].n)
			e->mask &= ~(1u << p);
	}
	__atomic_store_n(&e->held, e->held - n, __ATOMIC_RELAXED);
	return n;
}

uint32_t sched_egress_held(const struct sched_egress *e)
{
	return __atomic_load_n(&e->held, __ATOMIC_RELAXED);
}

static uint64_t q_buffers(const struct pktq *q)
{
	uint64_t n = 0;
	uint32_t bi = q->head;
	for (uint32_t k = 0; k < q->n; k++, bi = *link_of(bi))
		n += buffer_chain_length(bi);
	return n;
}

uint64_t sched_egress_held_buffers(const struct sched_egress *e)
{
	uint64_t n = q_buffers(&e->line);
	for (uint32_t p = 0; p < SCHED_N_PRIO; p++)
		n += q_buffers(&e->cls[p]);
	return n;
}

void sched_egress_stats(const struct sched_egress *e, struct sched_egress_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cfg.rate_bps = e->rate_bps;
	st->cfg.burst_bytes = e->burst_bytes;
	st->cfg.delay_ns = e->delay_ns;
	st->cfg.jitter_ns = e->jitter_ns;
	st->cfg.max_held = e->max_held;
	st->tokens_bytes = __atomic_load_n(&e->tokens, __ATOMIC_RELAXED) / UNITS_PER_BYTE;
	st->held = sched_egress_held(e);
	st->enqueued = rd(&e->enqueued);
	st->released = rd(&e->released);
	st->dropped = rd(&e->dropped);
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++) {
		st->held_class[c] = rd(&e->held_class[c]);
		st->released_class[c] = rd(&e->released_class[c]);
		st->dropped_class[c] = rd(&e->dropped_class[c]);
	}
}
