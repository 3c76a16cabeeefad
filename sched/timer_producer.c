/* Producers: other threads arming timers on a service.
 *
 * Two paths, chosen per service (timer_config.xmode), measured side by
 * side by bench/timers:
 *   ring:  the producer owns a range of the owner's timer pool and a stack
 *          of free handles; an arm writes a 32-byte request on its SPSC
 *          ring and returns the handle at once; the owner drains the ring
 *          at its next run and arms into its own wheel. Freed timers come
 *          back on a return ring sized to hold them all, so it never fills.
 *          No lock anywhere; one release store per burst.
 *   shard: the producer has a wheel of its own under a spinlock; an arm
 *          takes the lock and places the timer at once; the owner takes
 *          the lock once per run to expire the shard and delivers outside
 *          it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/timer_private.h"

void producer_lock(struct timer_producer *p)
{
	while (atomic_flag_test_and_set_explicit(&p->lock, memory_order_acquire))
		cpu_relax();
}

void producer_unlock(struct timer_producer *p)
{
	atomic_flag_clear_explicit(&p->lock, memory_order_release);
}

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;
	while (p < n)
		p <<= 1;
	return p;
}

static int ring_init(struct timer_service *ts, struct timer_producer *p)
{
	const struct timer_config *c = &ts->cfg;
	uint32_t ret_size = pow2_at_least(c->producer_timers);
	p->ring = aligned_alloc(64, ROUND_UP((size_t)c->ring_size * sizeof(struct timer_request), 64));
	p->ret = calloc(ret_size, sizeof(timer_handle_t));
	p->stack = calloc(c->producer_timers, sizeof(timer_handle_t));
	if (!p->ring || !p->ret || !p->stack)
		return -ENOMEM;
	p->ring_mask = c->ring_size - 1;
	p->ret_mask = ret_size - 1;
	p->first_index = ts->w.foreign_start + p->index * c->producer_timers;
	/* Lowest index on top: the first arms touch the first lines. */
	for (uint32_t k = 0; k < c->producer_timers; k++)
		p->stack[k] = make_handle(&ts->w, p->first_index + c->producer_timers - 1 - k, 1);
	p->n_stack = c->producer_timers;
	return 0;
}

static int shard_init(struct timer_service *ts, struct timer_producer *p)
{
	const struct timer_config *c = &ts->cfg;
	atomic_flag_clear(&p->lock);
	return wheel_init(&p->shard, c->producer_timers, 0, c->levels, c->tick_ns, c->max_skiplist / 4,
			  c->max_periodic / 4, p->index + 1, ts->clock(ts->clock_arg));
}

void producer_free(struct timer_producer *p)
{
	if (p->mode == TIMER_XMODE_SHARD)
		wheel_fini(&p->shard);
	free(p->ring);
	free(p->ret);
	free(p->stack);
	free(p);
}

struct timer_producer *timer_producer_attach(struct timer_service *ts, char *err, size_t errlen)
{
	uint32_t n = atomic_load(&ts->n_producers);
	uint32_t max = ts->cfg.xmode == TIMER_XMODE_RING ? ts->cfg.max_producers : TIMER_MAX_PRODUCERS;
	if (n >= max) {
		snprintf(err, errlen, "at most %u producers", max);
		return NULL;
	}
	struct timer_producer *p = aligned_alloc(64, ROUND_UP(sizeof(*p), 64));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(p, 0, sizeof(*p));
	p->ts = ts;
	p->index = n;
	p->mode = ts->cfg.xmode;
	int rc = p->mode == TIMER_XMODE_RING ? ring_init(ts, p) : shard_init(ts, p);
	if (rc) {
		snprintf(err, errlen, "out of memory");
		producer_free(p);
		return NULL;
	}
	ts->producers[n] = p;
	atomic_store_explicit(&ts->n_producers, n + 1, memory_order_release);
	return p;
}

struct timer_producer *producer_of(struct timer_service *ts, timer_handle_t h)
{
	uint32_t k = handle_shard(h) - 1;
	if (k >= atomic_load_explicit(&ts->n_producers, memory_order_acquire))
		return NULL;
	struct timer_producer *p = ts->producers[k];
	return p->mode == TIMER_XMODE_SHARD ? p : NULL;
}

/* ---- ring mode: producer side ---- */

static void refill(struct timer_producer *p)
{
	uint32_t tail = atomic_load_explicit(&p->ret_tail, memory_order_acquire);
	while (p->ret_head != tail)
		p->stack[p->n_stack++] = p->ret[p->ret_head++ & p->ret_mask];
}

static uint32_t ring_room(struct timer_producer *p)
{
	uint32_t size = p->ring_mask + 1;
	if (p->tail - p->head_cache == size)
		p->head_cache = atomic_load_explicit(&p->pub_head, memory_order_acquire);
	return size - (p->tail - p->head_cache);
}

static uint32_t ring_arm(struct timer_producer *p, const struct timer_spec *spec, uint32_t n, timer_handle_t *h)
{
	uint32_t i = 0;
	uint32_t room = ring_room(p); /* once: MIN evaluates its arguments twice */
	n = MIN(n, room);
	if (p->n_stack < n)
		refill(p);
	for (; i < n && p->n_stack; i++) {
		struct wheel_arm_args a;
		if (!service_resolve(p->ts, &spec[i], &a))
			break;
		struct timer_request *r = &p->ring[p->tail++ & p->ring_mask];
		h[i] = p->stack[--p->n_stack];
		*r = (struct timer_request){ .handle = h[i], .deadline_ns = a.deadline_ns, .period_ns = a.period_ns,
					     .cookie = a.cookie, .target = a.target, .op = REQ_ARM,
					     .flags = (uint8_t)a.flags };
	}
	if (i)
		atomic_store_explicit(&p->pub_tail, p->tail, memory_order_release);
	return i;
}

/* ---- shard mode: producer side ---- */

static uint32_t shard_arm(struct timer_producer *p, const struct timer_spec *spec, uint32_t n, timer_handle_t *h)
{
	uint32_t i = 0;
	producer_lock(p);
	for (; i < n; i++) {
		struct wheel_arm_args a;
		if (!service_resolve(p->ts, &spec[i], &a) || wheel_arm(&p->shard, &a, &h[i]))
			break;
	}
	producer_unlock(p);
	return i;
}

uint32_t timer_producer_arm_burst(struct timer_producer *p, const struct timer_spec *spec, uint32_t n,
				  timer_handle_t *h)
{
	return p->mode == TIMER_XMODE_RING ? ring_arm(p, spec, n, h) : shard_arm(p, spec, n, h);
}

int timer_producer_arm(struct timer_producer *p, const struct timer_spec *spec, timer_handle_t *h)
{
	if (timer_producer_arm_burst(p, spec, 1, h) == 1)
		return 0;
	struct wheel_arm_args a;
	return service_resolve(p->ts, spec, &a) ? -ENOSPC : -EINVAL;
}

int timer_producer_cancel(struct timer_producer *p, timer_handle_t h)
{
	if (p->mode == TIMER_XMODE_SHARD) {
		producer_lock(p);
		int rc = wheel_cancel(&p->shard, h);
		producer_unlock(p);
		return rc;
	}
	if (!ring_room(p))
		return -ENOSPC;
	p->ring[p->tail++ & p->ring_mask] = (struct timer_request){ .handle = h, .op = REQ_CANCEL };
	atomic_store_explicit(&p->pub_tail, p->tail, memory_order_release);
	return 0;
}

/* ---- owner side ---- */

static void drain_ring(struct timer_service *ts, struct timer_producer *p)
{
	uint32_t head = atomic_load_explicit(&p->pub_head, memory_order_relaxed);
	uint32_t tail = atomic_load_explicit(&p->pub_tail, memory_order_acquire);
	if (head == tail)
		return;
	ts->producer_requests += tail - head;
	for (; head != tail; head++) {
		const struct timer_request *r = &p->ring[head & p->ring_mask];
		struct wheel_arm_args a = { .deadline_ns = r->deadline_ns, .period_ns = r->period_ns,
					    .cookie = r->cookie, .target = r->target, .flags = r->flags };
		int rc = r->op == REQ_ARM ? wheel_arm_reserved(&ts->w, r->handle, &a) : 0;
		if (r->op == REQ_CANCEL)
			wheel_cancel(&ts->w, r->handle); /* -ENOENT: it fired first */
		ts->producer_refused += rc != 0;
	}
	atomic_store_explicit(&p->pub_head, head, memory_order_release);
}

void producers_drain(struct timer_service *ts)
{
	uint32_t n = atomic_load_explicit(&ts->n_producers, memory_order_acquire);
	for (uint32_t i = 0; i < n; i++)
		if (ts->producers[i]->mode == TIMER_XMODE_RING)
			drain_ring(ts, ts->producers[i]);
}

/* Expire each shard under its lock a batch at a time; callbacks run
 * outside it, so they may arm, cancel or re-arm shard timers. */
static uint32_t expire_shard(struct timer_service *ts, struct timer_producer *p, uint64_t now_ns)
{
	uint32_t total = 0, room, n;
	producer_lock(p);
	wheel_advance(&p->shard, now_ns);
	while ((room = service_room(ts)) && (n = wheel_take(&p->shard, ts->ev, ts->tg, room))) {
		producer_unlock(p);
		total += service_deliver(ts, n);
		producer_lock(p);
	}
	producer_unlock(p);
	return total;
}

uint32_t producers_expire(struct timer_service *ts, uint64_t now_ns)
{
	uint32_t n = atomic_load_explicit(&ts->n_producers, memory_order_acquire), total = 0;
	for (uint32_t i = 0; i < n; i++)
		if (ts->producers[i]->mode == TIMER_XMODE_SHARD)
			total += expire_shard(ts, ts->producers[i], now_ns);
	return total;
}
