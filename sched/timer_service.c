/* The timer service: one wheel per datapath thread, its targets, and
 * delivery of expiries in batches (callbacks get arrays, nodes get frames
 * of buffers carrying the event).
 *
 * Per timer operation the owner allocates nothing and takes no lock: the
 * wheel's pools are sized at creation; node events ride in buffers taken
 * from the thread's buffer cache in bulk, a batch at a time; the only locks
 * are the shards' (shard mode), taken once per shard per run.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "graph/graph.h"
#include "sched/timer_private.h"

/* ---- clock ---- */

static _Atomic double ns_per_cycle;
static pthread_once_t clock_once = PTHREAD_ONCE_INIT;

static void clock_init(void)
{
	atomic_store_explicit(&ns_per_cycle, 1e9 / cpu_ticks_per_second(), memory_order_release);
}

/* The cycle counter scaled by a double: monotonic (rounding is), exact to
 * the ns for 104 days of uptime, and cheaper than clock_gettime. Every arm
 * reads it: once the scale is known, a load (free on x86) instead of a
 * call to pthread_once. */
uint64_t timer_clock_ns(void *unused)
{
	(void)unused;
	double k = atomic_load_explicit(&ns_per_cycle, memory_order_acquire);
	if (unlikely(k == 0)) {
		pthread_once(&clock_once, clock_init);
		k = atomic_load_explicit(&ns_per_cycle, memory_order_acquire);
	}
	return (uint64_t)((double)cpu_ticks() * k);
}

uint64_t timer_now(const struct timer_service *ts)
{
	return service_clock(ts);
}

/* ---- life ---- */

void timer_config_default(struct timer_config *cfg)
{
	*cfg = (struct timer_config){
		.tick_ns = TIMER_TICK_NS_DEFAULT,
		.max_timers = 1u << 18,
		.levels = TIMER_LEVELS_DEFAULT,
		.max_skiplist = 16384,
		.max_periodic = 4096,
		.max_producers = 2,
		.producer_timers = 65536,
		.ring_size = 4096,
		.xmode = TIMER_XMODE_RING,
		.max_held = 4096,
		.class_depth = 1024,
	};
}

/* A ring producer's timers live in the owner's pool, past its own; a
 * freed one goes back to its producer on the return ring, which has room
 * for all of them and so never fills. */
static void return_to_producer(void *arg, uint32_t index, uint32_t gen)
{
	struct timer_service *ts = arg;
	uint32_t k = (index - ts->w.foreign_start) / ts->cfg.producer_timers;
	struct timer_producer *p = ts->producers[k];
	uint32_t tail = atomic_load_explicit(&p->ret_tail, memory_order_relaxed);
	p->ret[tail & p->ret_mask] = make_handle(&ts->w, index, gen);
	atomic_store_explicit(&p->ret_tail, tail + 1, memory_order_release);
}

static bool config_ok(const struct timer_config *c, char *err, size_t errlen)
{
	const char *why = NULL;
	if (!c->tick_ns)
		why = "tick must be at least 1ns";
	else if (!c->levels || c->levels > TIMER_MAX_LEVELS)
		why = "levels must be 1-6";
	else if (!c->max_timers || (uint64_t)c->max_timers + (uint64_t)c->max_producers * c->producer_timers >
					   TIMER_MAX_TIMERS)
		why = "max-timers plus the producers' timers must be 1-16777216";
	else if (c->max_producers > TIMER_MAX_PRODUCERS)
		why = "at most 16 producers";
	else if (c->ring_size < 2 || (c->ring_size & (c->ring_size - 1)))
		why = "ring-size must be a power of two";
	if (why)
		snprintf(err, errlen, "%s", why);
	return !why;
}

/* Holder "timers": the buffers a service keeps ready for node events (an
 * event in flight is in a frame, and the wheel itself holds none). */
static void timer_holder(void *ctx, struct buffer_tally *t)
{
	const struct timer_service *ts = ctx;
	char where[BUFFER_WHERE_SIZE];
	if (ts->thread)
		snprintf(where, sizeof(where), "thread %u event spares", graph_thread_index(ts->thread));
	else
		snprintf(where, sizeof(where), "event spares");
	buffer_tally_add(t, where, ts->n_spare);
}

struct timer_service *timer_service_create(const struct timer_config *cfg, timer_clock_fn_t *clock,
					   void *clock_arg, char *err, size_t errlen)
{
	if (!config_ok(cfg, err, errlen))
		return NULL;
	struct timer_service *ts = aligned_alloc(64, ROUND_UP(sizeof(*ts), 64));
	if (!ts) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(ts, 0, sizeof(*ts));
	ts->cfg = *cfg;
	ts->clock = clock ? clock : timer_clock_ns;
	ts->clock_arg = clock_arg;
	if (!clock) {
		timer_clock_ns(NULL); /* sets the scale */
		ts->ns_per_cycle = atomic_load_explicit(&ns_per_cycle, memory_order_acquire);
	}
	uint32_t n_foreign = cfg->xmode == TIMER_XMODE_RING ? cfg->max_producers * cfg->producer_timers : 0;
	if (wheel_init(&ts->w, cfg->max_timers, n_foreign, cfg->levels, cfg->tick_ns, cfg->max_skiplist,
		       cfg->max_periodic, 0, ts->clock(clock_arg))) {
		snprintf(err, errlen, "out of memory for %u timers", cfg->max_timers + n_foreign);
		free(ts);
		return NULL;
	}
	ts->w.foreign_free = return_to_producer;
	ts->w.foreign_arg = ts;
	buffer_holder_register("timers", timer_holder, ts);
	return ts;
}

void timer_service_destroy(struct timer_service *ts)
{
	if (!ts)
		return;
	buffer_holder_unregister(timer_holder, ts);
	for (uint32_t i = 0; i < atomic_load(&ts->n_producers); i++)
		producer_free(ts->producers[i]);
	if (ts->n_spare)
		buffer_free(ts->spare, ts->n_spare);
	wheel_fini(&ts->w);
	free(ts);
}

int timer_service_bind(struct timer_service *ts, struct graph *g, uint32_t thread_index)
{
	struct graph_thread *t = graph_thread_get(g, thread_index);
	if (!t)
		return -ENOENT;
	ts->graph = g;
	ts->thread = t;
	return 0;
}

/* ---- targets ---- */

int timer_target_callback(struct timer_service *ts, timer_fn_t *fn, void *arg)
{
	if (!fn)
		return -EINVAL;
	if (ts->n_targets == TIMER_MAX_TARGETS)
		return -ENOSPC;
	ts->targets[ts->n_targets] = (struct timer_target){ .kind = TARGET_CALLBACK, .fn = fn, .arg = arg };
	return (int)ts->n_targets++;
}

int timer_target_node(struct timer_service *ts, uint32_t node_index)
{
	if (!ts->graph)
		return -EINVAL;
	struct node_runtime *rt = graph_node_runtime(ts->graph, graph_thread_index(ts->thread), node_index);
	if (!rt)
		return -ENOENT;
	if (ts->n_targets == TIMER_MAX_TARGETS)
		return -ENOSPC;
	ts->targets[ts->n_targets] = (struct timer_target){ .kind = TARGET_NODE, .rt = rt };
	ts->has_node_targets = true;
	return (int)ts->n_targets++;
}

/* ---- operations ---- */

/* The slow paths of the three below: anything but a common wheel timer. */
static __attribute__((noinline)) int arm_slow(struct timer_service *ts, const struct timer_spec *spec,
					      uint64_t deadline_ns, timer_handle_t *h)
{
	struct wheel_arm_args a;
	if (!service_resolve(ts, &(struct timer_spec){ .deadline_ns = deadline_ns, .interval_ns = spec->interval_ns,
						       .cookie = spec->cookie, .target = spec->target,
						       .flags = spec->flags },
			     &a))
		return -EINVAL;
	return wheel_arm(&ts->w, &a, h);
}

int timer_arm(struct timer_service *ts, const struct timer_spec *spec, timer_handle_t *h)
{
	uint64_t d = spec->deadline_ns;
	if (!d) /* read once: the slow path must see the same deadline */
		d = service_clock(ts) + spec->interval_ns;
	if (likely(!spec->flags && spec->target < ts->n_targets) &&
	    likely(wheel_arm_fast(&ts->w, d, spec->cookie, spec->target, h)))
		return 0;
	return arm_slow(ts, spec, d, h);
}

uint64_t timer_ticks(const struct timer_service *ts, uint64_t ns)
{
	uint64_t tick = ts->w.tick_ns;
	return ns / tick + (ns % tick != 0);
}

/* The deadline timer_arm_ticks stands for, saturated (it then waits in
 * the far skiplist like any deadline past the horizon). */
static __attribute__((noinline)) int arm_ticks_slow(struct timer_service *ts, uint64_t ticks, uint32_t cookie,
						    uint16_t target, timer_handle_t *h)
{
	const struct timer_wheel *w = &ts->w;
	if (target >= ts->n_targets)
		return -EINVAL;
	uint64_t d = ticks > (UINT64_MAX - w->now_ns) / w->tick_ns ? UINT64_MAX : w->now_ns + ticks * w->tick_ns;
	return wheel_arm(&ts->w, &(struct wheel_arm_args){ .deadline_ns = d, .cookie = cookie, .target = target }, h);
}

int timer_arm_ticks(struct timer_service *ts, uint64_t ticks, uint32_t cookie, uint16_t target, timer_handle_t *h)
{
	if (likely(target < ts->n_targets) &&
	    likely(wheel_arm_tick_fast(&ts->w, wheel_tick_after(&ts->w, ticks), cookie, target, h)))
		return 0;
	return arm_ticks_slow(ts, ticks, cookie, target, h);
}

int timer_cancel(struct timer_service *ts, timer_handle_t h)
{
	if (likely(wheel_cancel_fast(&ts->w, h)))
		return 0;
	if (likely(handle_shard(h) == 0))
		return wheel_cancel(&ts->w, h);
	struct timer_producer *p = producer_of(ts, h);
	if (!p)
		return -ENOENT;
	producer_lock(p);
	int rc = wheel_cancel(&p->shard, h);
	producer_unlock(p);
	return rc;
}

int timer_rearm(struct timer_service *ts, timer_handle_t h, uint64_t deadline_ns, uint64_t interval_ns)
{
	if (!deadline_ns)
		deadline_ns = service_clock(ts) + interval_ns;
	if (likely(wheel_rearm_fast(&ts->w, h, deadline_ns)))
		return 0;
	if (likely(handle_shard(h) == 0))
		return wheel_rearm(&ts->w, h, deadline_ns, interval_ns);
	struct timer_producer *p = producer_of(ts, h);
	if (!p)
		return -ENOENT;
	producer_lock(p);
	int rc = wheel_rearm(&p->shard, h, deadline_ns, interval_ns);
	producer_unlock(p);
	return rc;
}

/* ---- delivery ---- */

/* How many expiries the next batch may take: a batch of buffers is kept
 * for node events, and when the pool is dry the expiries wait on their
 * list for a later run (none is dropped). */
uint32_t service_room(struct timer_service *ts)
{
	if (!ts->has_node_targets)
		return EVENT_BATCH;
	if (ts->n_spare < EVENT_BATCH)
		ts->n_spare += buffer_alloc(ts->spare + ts->n_spare, 2 * EVENT_BATCH - ts->n_spare, -1);
	return MIN(ts->n_spare, (uint32_t)EVENT_BATCH);
}

/* One buffer per event, appended to the node's open frame as
 * node_enqueue would (the service is no node, so it has no arc). */
static void to_node(struct timer_service *ts, struct node_runtime *rt, const struct timer_event *ev, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		uint32_t bi = ts->spare[--ts->n_spare];
		memcpy(buffer_get(bi)->opaque, &ev[i], sizeof(ev[i]));
		struct frame *f = rt->pending_tail;
		if (unlikely(!f || f->n_vectors == FRAME_SIZE))
			f = node_frame_open(rt);
		f->buffers[f->n_vectors++] = bi;
	}
}

/* Deliver ts->ev[0..n): runs of one target go out as one batch. */
uint32_t service_deliver(struct timer_service *ts, uint32_t n)
{
	bool to_nodes = false;
	for (uint32_t i = 0, j; i < n; i = j) {
		for (j = i + 1; j < n && ts->tg[j] == ts->tg[i];)
			j++;
		const struct timer_target *t = &ts->targets[ts->tg[i]];
		if (t->kind == TARGET_CALLBACK) {
			t->fn(ts, ts->ev + i, j - i, t->arg);
		} else {
			to_node(ts, t->rt, ts->ev + i, j - i);
			to_nodes = true;
		}
	}
	/* Let the nodes consume (and free) this batch's buffers before the
	 * next one, so a flood of expiries needs one batch of buffers. */
	if (to_nodes && graph_thread_self() == ts->thread)
		graph_dispatch_pending(ts->thread);
	return n;
}

static uint32_t deliver_own(struct timer_service *ts)
{
	uint32_t total = 0, room, n;
	while ((room = service_room(ts)) && (n = wheel_take(&ts->w, ts->ev, ts->tg, room)))
		total += service_deliver(ts, n);
	if (!room && ts->w.n_due)
		ts->deferred++;
	return total;
}

/* Whether a run at now_ns has nothing to do but note the time: no
 * producers, nothing due or held back, no tick boundary crossed since the
 * last run (so no slot or far timer can have come due) and no precise
 * timer due. Every datapath loop runs the service, most of them in this
 * case: 149 -> 37 instructions a run (callgrind, bench/timers --sim). */
static inline bool run_is_idle(struct timer_service *ts, uint64_t now_ns)
{
	const struct timer_wheel *w = &ts->w;
	if (atomic_load_explicit(&ts->n_producers, memory_order_relaxed) || w->n_due || now_ns >= w->next_tick_ns ||
	    now_ns < w->now_ns)
		return false;
	uint32_t first = skip_first(w, &w->precise);
	return first == NIL || w->sn[first].key > now_ns;
}

static __attribute__((noinline)) uint32_t advance(struct timer_service *ts, uint64_t now_ns)
{
	if (atomic_load_explicit(&ts->n_producers, memory_order_acquire))
		producers_drain(ts);
	wheel_advance(&ts->w, now_ns);
	uint32_t n = deliver_own(ts);
	if (atomic_load_explicit(&ts->n_producers, memory_order_relaxed))
		n += producers_expire(ts, now_ns);
	return n;
}

uint32_t timer_advance(struct timer_service *ts, uint64_t now_ns)
{
	if (likely(run_is_idle(ts, now_ns))) {
		ts->w.now_ns = now_ns;
		return 0;
	}
	return advance(ts, now_ns);
}

uint32_t timer_service_run(struct timer_service *ts)
{
	return timer_advance(ts, service_clock(ts));
}

uint64_t timer_next_ticks(const struct timer_service *ts)
{
	return wheel_next_ticks(&ts->w);
}

/* ---- statistics ---- */

#define RD(x) __atomic_load_n(&(x), __ATOMIC_RELAXED)

static void add_wheel(struct timer_stats *st, const struct timer_wheel *w)
{
	for (uint32_t l = 0; l < w->levels; l++)
		st->armed_level[l] += RD(w->n_level[l]);
	st->armed_far += RD(w->far.n);
	st->armed_precise += RD(w->precise.n);
	st->armed_pending += RD(w->n_due);
	st->armed_total += RD(w->n_armed);
	st->periodic += RD(w->n_periodic);
	st->expiries += RD(w->expiries);
	st->arms += RD(w->arms);
	st->cancels += RD(w->cancels);
	st->rearms += RD(w->rearms);
	for (uint32_t b = 0; b < TIMER_LATE_BUCKETS; b++)
		st->late[b] += RD(w->late[b]);
	wheel_memory(w, &st->mem);
}

void timer_stats(const struct timer_service *ts, struct timer_stats *st)
{
	memset(st, 0, sizeof(*st));
	add_wheel(st, &ts->w);
	st->levels = ts->w.levels;
	st->tick_ns = ts->w.tick_ns;
	st->producer_requests = RD(ts->producer_requests);
	st->deferred = RD(ts->deferred);
	st->producer_refused = RD(ts->producer_refused);
	st->mem.service = sizeof(*ts) - sizeof(ts->w);
	uint32_t np = atomic_load_explicit(&ts->n_producers, memory_order_acquire);
	for (uint32_t i = 0; i < np; i++) {
		const struct timer_producer *p = ts->producers[i];
		/* the return ring and the stack of free handles: 2 x */
		st->mem.producers += sizeof(*p) + (size_t)(p->ring_mask + 1) * sizeof(struct timer_request) +
				     (size_t)(p->ret_mask + 1) * 2 * sizeof(timer_handle_t);
		if (p->mode == TIMER_XMODE_SHARD) {
			st->mem.producers -= sizeof(p->shard); /* counted with its wheel */
			add_wheel(st, &p->shard);
		}
	}
	st->memory_bytes = st->mem.timers + st->mem.heads + st->mem.skiplist + st->mem.periodic + st->mem.service +
			   st->mem.producers;
}

/* ---- the graph's threads ---- */

/* Runs due timers, then tells the thread how long it may idle: until the
 * first tick of the earliest wheel slot, or one tick when precise timers or
 * producers may need a look sooner (their deadlines are not in the wheel's
 * bitmaps). The bound is from the run's time to that tick, not a count of
 * whole ticks from now, which would add up to a tick.
 *
 * An idle thread sleeps in nanosleep, which Linux lets run late by the
 * thread's timer slack (50 us by default): five ticks at the default tick,
 * beyond the one-tick promise. The owner thread's slack goes to 1 ns the
 * first time its hook runs (prctl: per thread, so it must be that thread). */
static uint32_t loop_hook(struct graph_thread *t, void *arg)
{
	(void)arg;
	struct timer_service *ts = graph_thread_user(t);
	if (!ts)
		return 0;
	if (unlikely(!ts->slack_set)) {
		prctl(PR_SET_TIMERSLACK, 1ul, 0ul, 0ul, 0ul);
		ts->slack_set = true;
	}
	uint32_t n = timer_service_run(ts);
	const struct timer_wheel *w = &ts->w;
	uint64_t ticks = timer_next_ticks(ts);
	if (w->precise.n || atomic_load_explicit(&ts->n_producers, memory_order_relaxed))
		ticks = MIN(ticks, (uint64_t)1);
	if (ticks != UINT64_MAX) {
		uint64_t at = (w->cur + ticks) * w->tick_ns;
		graph_thread_wake_within(t, at > w->now_ns ? at - w->now_ns : 0);
	}
	return n;
}

struct timer_service *timer_service_of(const struct graph_thread *t)
{
	return graph_thread_user(t);
}

/* Every installed service, so that uninstall after the workers stopped
 * (their threads, and the user pointers, are gone then) still frees them. */
static struct timer_service *installed[GRAPH_MAX_THREADS];
static uint32_t n_installed;

int timer_services_install(struct graph *g, const struct timer_config *cfg, char *err, size_t errlen)
{
	uint32_t n = graph_n_threads(g);
	for (uint32_t i = 0; i < n; i++) {
		struct timer_service *ts = timer_service_create(cfg, NULL, NULL, err, errlen);
		if (!ts) {
			timer_services_uninstall(g);
			return -EINVAL;
		}
		timer_service_bind(ts, g, i);
		graph_thread_set_user(graph_thread_get(g, i), ts);
		installed[i] = ts;
		n_installed = i + 1;
	}
	/* The hook's barrier publishes the user pointers set above. */
	graph_set_loop_hook(g, loop_hook, NULL);
	return 0;
}

void timer_services_uninstall(struct graph *g)
{
	graph_set_loop_hook(g, NULL, NULL);
	for (uint32_t i = 0; i < graph_n_threads(g); i++)
		graph_thread_set_user(graph_thread_get(g, i), NULL);
	for (uint32_t i = 0; i < n_installed; i++) {
		timer_service_destroy(installed[i]);
		installed[i] = NULL;
	}
	n_installed = 0;
}
