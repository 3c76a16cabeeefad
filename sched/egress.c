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
#include "sched/impair.h"

#define UNITS_PER_BYTE 8000000000ll /* credit units: 1/8e9 byte, so 1 ns at r bit/s adds r */
#define CATCH_UP_MAX (INT64_MAX / 4)   /* credit a late run may spend on a backlog: 288 MB */
#define BATCH 256 /* packets handed to the impairer at once */

/* A FIFO of buffers linked through opaque[0..3]. */
struct pktq {
	uint32_t head, tail, n;
};

struct sched_egress {
	struct pktq cls[SCHED_N_PRIO];
	struct pktq line; /* due at once (no impairment): leaves at the next dequeue */
	struct sched_impair *imp; /* the interface's impairment (the delay line) */
	bool imp_on;              /* packets leaving the shaper go through imp */
	struct pktq dropq;        /* dropped by imp, for sched_egress_take_dropped */
	struct sched_impair *imp_cls[SCHED_MAX_CLASSES]; /* per class, before the shaper; NULL: never set */
	uint32_t imp_cls_on;      /* bit c: class c's packets go through imp_cls[c] */
	uint32_t imp_cls_any;     /* bit c: imp_cls[c] exists (may still hold packets) */
	uint8_t cls_prio[SCHED_MAX_CLASSES]; /* the priorities of the last enqueue, for class impairers' releases */
	uint32_t mask;    /* bit p: cls[p] is not empty */
	bool backlogged;  /* the class queues held packets at the last run's end */
	uint32_t held, max_held;
	uint64_t rate_bps, burst_bytes;
	int64_t tokens, cap; /* credit units */
	uint64_t last_ns;    /* tokens are as of this time */
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

size_t sched_egress_mem_bytes(const struct sched_egress *e)
{
	size_t n = sizeof(*e) + (e->imp ? sched_impair_mem_bytes(e->imp) : 0);
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++)
		if (e->imp_cls[c])
			n += sched_impair_mem_bytes(e->imp_cls[c]);
	return n;
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
	e->imp = sched_impair_create(max_held, seed, err, errlen);
	if (!e->imp) {
		free(e);
		return NULL;
	}
	return e;
}

void sched_egress_destroy(struct sched_egress *e)
{
	if (!e)
		return;
	uint32_t bi[256], n;
	while ((n = sched_egress_flush(e, bi, 256)) != 0)
		buffer_free(bi, n);
	while ((n = sched_egress_take_dropped(e, bi, 256)) != 0)
		buffer_free(bi, n);
	sched_impair_destroy(e->imp);
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++)
		sched_impair_destroy(e->imp_cls[c]);
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
	struct sched_impair_config c = { .delay_ns = delay_ns, .jitter_ns = jitter_ns };
	char err[128];
	return sched_egress_set_impair(e, &c, err, sizeof(err));
}

int sched_egress_set_impair(struct sched_egress *e, const struct sched_impair_config *c, char *err, size_t errlen)
{
	static const struct sched_impair_config off;
	if (!c)
		c = &off;
	int rc = sched_impair_set(e->imp, c, err, errlen);
	if (rc == 0)
		e->imp_on = sched_impair_active(c);
	return rc;
}

const struct sched_impair *sched_egress_impair(const struct sched_egress *e)
{
	return e->imp;
}

int sched_egress_set_class_impair(struct sched_egress *e, uint32_t class_id, const struct sched_impair_config *c,
				  char *err, size_t errlen)
{
	static const struct sched_impair_config off;
	if (class_id >= SCHED_MAX_CLASSES) {
		snprintf(err, errlen, "class id %u: expected 0..%u", class_id, SCHED_MAX_CLASSES - 1);
		return -EINVAL;
	}
	c = c ? c : &off;
	if (!e->imp_cls[class_id]) {
		if (!sched_impair_active(c))
			return 0;
		e->imp_cls[class_id] = sched_impair_create(e->max_held, 0x5eed0000ull + class_id, err, errlen);
		if (!e->imp_cls[class_id])
			return -ENOMEM;
		e->imp_cls_any |= 1u << class_id;
	}
	int rc = sched_impair_set(e->imp_cls[class_id], c, err, errlen);
	if (rc == 0) {
		e->imp_cls_on &= ~(1u << class_id);
		e->imp_cls_on |= (uint32_t)sched_impair_active(c) << class_id;
	}
	return rc;
}

const struct sched_impair *sched_egress_class_impair(const struct sched_egress *e, uint32_t class_id)
{
	return class_id < SCHED_MAX_CLASSES ? e->imp_cls[class_id] : NULL;
}

bool sched_egress_impaired(const struct sched_egress *e)
{
	return e->imp_on || e->imp_cls_on;
}

uint32_t sched_egress_take_dropped(struct sched_egress *e, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	while (n < max && e->dropq.n)
		out[n++] = q_pop(&e->dropq);
	return n;
}

int sched_egress_set_max_held(struct sched_egress *e, uint32_t max_held)
{
	if (max_held < 1 || max_held > SCHED_HELD_MAX)
		return -EINVAL;
	/* The bound holds wherever a packet may wait: the interface's
	 * impairer and each class's. All or none: a class whose pool cannot
	 * grow puts the others back (setting the old bound again only lowers
	 * it, which needs no memory). */
	int rc = sched_impair_set_max_held(e->imp, max_held);
	uint32_t c = 0;
	for (; rc == 0 && c < SCHED_MAX_CLASSES; c++)
		if (e->imp_cls[c])
			rc = sched_impair_set_max_held(e->imp_cls[c], max_held);
	if (rc) {
		while (c-- > 0)
			if (e->imp_cls[c])
				sched_impair_set_max_held(e->imp_cls[c], e->max_held);
		sched_impair_set_max_held(e->imp, e->max_held);
		return rc;
	}
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

static inline void count_out(struct sched_egress *e, uint32_t bi)
{
	uint32_t c = sched_buffer_class(buffer_get(bi));
	add(&e->held_class[c], -1);
	add(&e->released_class[c], 1);
}

/* Packets leaving the shaper (or arriving, without one) at now: through
 * the impairment when there is one (its drops wait in dropq for the node,
 * its duplicates count in as held), else due at once. Returns the change
 * in packets held: duplicates less drops. */
static int32_t impair_in(struct sched_egress *e, struct sched_impair *imp, const uint32_t *bi, uint32_t n,
			 uint64_t now_ns);

static int32_t line_push(struct sched_egress *e, const uint32_t *bi, uint32_t n, uint64_t now_ns)
{
	if (!e->imp_on) {
		for (uint32_t i = 0; i < n; i++) {
			buffer_get(bi[i])->timestamp_ns = now_ns;
			q_push(&e->line, bi[i]);
		}
		return 0;
	}
	return impair_in(e, e->imp, bi, n, now_ns);
}

/* n packets into an impairer (the interface's or a class's): drops to
 * dropq, duplicates counted in. Returns duplicates less drops. */
static int32_t impair_in(struct sched_egress *e, struct sched_impair *imp, const uint32_t *bi, uint32_t n,
			 uint64_t now_ns)
{
	uint32_t dropped[2 * BATCH], dup[BATCH], n_dup;
	int32_t delta = 0;
	for (uint32_t k = 0; k < n; k += BATCH) {
		uint32_t m = n - k < BATCH ? n - k : BATCH;
		uint32_t d = sched_impair_enqueue(imp, bi + k, m, now_ns, dropped, dup, &n_dup);
		for (uint32_t i = 0; i < n_dup; i++)
			add(&e->held_class[sched_buffer_class(buffer_get(dup[i]))], 1);
		for (uint32_t i = 0; i < d; i++) {
			uint32_t c = sched_buffer_class(buffer_get(dropped[i]));
			add(&e->held_class[c], -1);
			add(&e->dropped_class[c], 1);
			q_push(&e->dropq, dropped[i]);
		}
		add(&e->enqueued, n_dup);
		add(&e->dropped, d);
		delta += (int32_t)n_dup - (int32_t)d;
	}
	return delta;
}

static inline void held_add(struct sched_egress *e, int32_t delta)
{
	if (delta)
		__atomic_store_n(&e->held, (uint32_t)((int32_t)e->held + delta), __ATOMIC_RELAXED);
}

uint32_t sched_egress_enqueue(struct sched_egress *e, const uint32_t *bi, uint32_t n,
			      const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns, uint32_t *dropped)
{
	uint32_t n_drop = 0, n_in = 0;
	uint32_t held = e->held;
	uint32_t direct[BATCH], n_direct = 0;
	if (unlikely(e->imp_cls_any))
		memcpy(e->cls_prio, prio, sizeof(e->cls_prio));
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
		if (unlikely(e->imp_cls_on >> c & 1)) {
			held += (uint32_t)impair_in(e, e->imp_cls[c], &bi[i], 1, now_ns);
		} else if (e->rate_bps) {
			uint32_t p = prio[c] & (SCHED_N_PRIO - 1);
			q_push(&e->cls[p], bi[i]);
			e->mask |= 1u << p;
		} else {
			direct[n_direct++] = bi[i];
			if (n_direct == BATCH) {
				held += (uint32_t)line_push(e, direct, n_direct, now_ns);
				n_direct = 0;
			}
		}
	}
	if (n_direct)
		held += (uint32_t)line_push(e, direct, n_direct, now_ns);
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
		bool direct = !e->line.n && !e->imp_on && !sched_impair_held(e->imp);
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
			held_add(e, line_push(e, &bi, 1, now_ns));
		}
	}
	if (!e->mask && e->tokens > e->cap)
		__atomic_store_n(&e->tokens, e->cap, __ATOMIC_RELAXED);
	e->backlogged = e->mask != 0;
	return n;
}

/* What the class impairers release at now goes on as an arrival would:
 * into its class queue under a shaper, else through the line. */
static void release_classes(struct sched_egress *e, uint64_t now_ns)
{
	uint32_t tmp[BATCH], k;
	for (uint32_t any = e->imp_cls_any; any; any &= any - 1) {
		uint32_t c = (uint32_t)__builtin_ctz(any);
		while ((k = sched_impair_dequeue(e->imp_cls[c], now_ns, tmp, BATCH)) != 0) {
			if (e->rate_bps) {
				uint32_t p = e->cls_prio[c] & (SCHED_N_PRIO - 1);
				for (uint32_t i = 0; i < k; i++)
					q_push(&e->cls[p], tmp[i]);
				e->mask |= 1u << p;
			} else {
				held_add(e, line_push(e, tmp, k, now_ns));
			}
			if (k < BATCH)
				break;
		}
	}
}

uint32_t sched_egress_dequeue(struct sched_egress *e, uint64_t now_ns, uint32_t *out, uint32_t max)
{
	if (unlikely(e->imp_cls_any))
		release_classes(e, now_ns);
	uint32_t n = run_shaper(e, now_ns, out, max);
	if (n < max && sched_impair_held(e->imp)) {
		uint32_t k = sched_impair_dequeue(e->imp, now_ns, out + n, max - n);
		for (uint32_t i = 0; i < k; i++)
			count_out(e, out[n + i]);
		n += k;
	}
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
	uint64_t next = sched_impair_next_ns(e->imp);
	for (uint32_t any = e->imp_cls_any; any; any &= any - 1) {
		uint64_t t = sched_impair_next_ns(e->imp_cls[__builtin_ctz(any)]);
		next = t < next ? t : next;
	}
	if (e->line.n && buffer_get(e->line.head)->timestamp_ns < next)
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
	uint32_t n = sched_impair_flush(e->imp, out, max);
	for (uint32_t any = e->imp_cls_any; any && n < max; any &= any - 1)
		n += sched_impair_flush(e->imp_cls[__builtin_ctz(any)], out + n, max - n);
	for (uint32_t i = 0; i < n; i++)
		count_out(e, out[i]);
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
	uint64_t n = q_buffers(&e->line) + sched_impair_held_buffers(e->imp);
	for (uint32_t any = e->imp_cls_any; any; any &= any - 1)
		n += sched_impair_held_buffers(e->imp_cls[__builtin_ctz(any)]);
	for (uint32_t p = 0; p < SCHED_N_PRIO; p++)
		n += q_buffers(&e->cls[p]);
	return n;
}

void sched_egress_stats(const struct sched_egress *e, struct sched_egress_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cfg.rate_bps = e->rate_bps;
	st->cfg.burst_bytes = e->burst_bytes;
	struct sched_impair_stats is;
	sched_impair_stats(e->imp, &is);
	st->cfg.delay_ns = e->imp_on ? is.cfg.delay_ns : 0;
	st->cfg.jitter_ns = e->imp_on ? is.cfg.jitter_ns : 0;
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
