/* Layouts only the timer subsystem touches: the wheel (pool, levels,
 * skiplists, periodic table), producer lanes and the service.
 *
 * The wheel is single-threaded; the service wraps one for its owner and,
 * in shard mode, one per producer under a lock.
 */
#ifndef SLUICE_SCHED_TIMER_PRIVATE_H
#define SLUICE_SCHED_TIMER_PRIVATE_H

#include <stdalign.h>
#include <stdatomic.h>

#include "base/util.h"
#include "sched/timer.h"

#define SLOT_BITS 6
#define SLOTS (1u << SLOT_BITS)
#define NIL UINT32_MAX
#define SKIP_MAX_H 12 /* p = 1/4: 4^12 = 16M entries before the top level thins out */
#define HANDLE_SHARD_SHIFT 24
#define HANDLE_INDEX_MASK ((1u << HANDLE_SHARD_SHIFT) - 1)
#define EVENT_BATCH 256

/* The wheel's counts and statistics (n_armed, n_level, n_due, the
 * skiplists' n, expiries, late, ...) are read by timer_stats from another
 * thread (the stats segment's writer, the CLI's) while the owner changes
 * them. One thread writes each wheel at a time, so a plain read and a
 * relaxed atomic store are exact; the store is the plain mov it was on
 * x86 and the reader's relaxed load (RD in timer_service.c) sees a whole
 * value, never a torn one, and no data race. */
#define TIMER_STAT_ADD(x, d) __atomic_store_n(&(x), (x) + (d), __ATOMIC_RELAXED)
#define TIMER_STAT_SUB(x, d) __atomic_store_n(&(x), (x) - (d), __ATOMIC_RELAXED)

/* Where a timer is: its prev link says free (or retired), far or precise
 * (waiting in that skiplist, next naming its node); any other prev is a
 * list link, and then the top bits of lo say wheel (bit 31 clear) or due
 * (on the due or expired list, bit 31 set). */
#define TL_FREE NIL          /* free, reserved by a ring producer, or retired */
#define TL_FAR (NIL - 1)     /* far skiplist, keyed by expiry tick */
#define TL_PRECISE (NIL - 2) /* precise skiplist, keyed by deadline ns */

/* lo: an expiry's low 30 bits, and where the timer is. A wheel timer at
 * level l < 5 agrees with cur above digit l and differs in it (digits are
 * 6 bits, 5 of them fit in 30), so its level is that of (lo ^ cur)'s top
 * bit and its slot lo's digit; at level 5 (LO_TOP) the slot is bits 30-35,
 * known only to the drain of that slot. A due timer keeps its tick, a due
 * precise one (LO_PRECISE) its deadline's ns, clamped to 2^29 before the
 * run that made it due, for the late histogram. */
#define LO_BITS 30
#define LO_MASK ((1u << LO_BITS) - 1)
#define LO_TOP (1u << 30)                /* wheel: the top level (5) */
#define LO_OFF (1u << 31)                /* not in the wheel */
#define LO_PRECISE (LO_OFF | (1u << 30)) /* due, precise: the deadline's ns */
#define LO_CLAMP (1ull << 29)
#define TOP_LEVEL 5
_Static_assert(TIMER_MAX_LEVELS == TOP_LEVEL + 1, "levels below the top fit in lo's 30 bits");

/* meta: generation << 8 | target; target 0xff marks a periodic timer,
 * whose cookie field holds its periodic-table entry (which keeps the
 * cookie and the target). */
#define META_GEN_SHIFT 8
#define META_TARGET 0xffu
#define TARGET_PERIODIC 0xffu
#define GEN_MAX ((1u << 24) - 1)

/* 20 bytes: 1M timers take 20 MB. Wheel and list links are pool indices;
 * list heads are pool entries past the timers, so unlinking never
 * branches on "first in slot". */
struct timer {
	uint32_t cookie; /* the caller's; a periodic timer's periodic-table entry */
	uint32_t next;   /* wheel/due/expired list; free list; skiplist node when in one */
	uint32_t prev;   /* list link, or TL_FREE, TL_FAR, TL_PRECISE */
	uint32_t lo;     /* expiry's low bits and LO_* */
	uint32_t meta;   /* generation (24 bits) << 8 | target */
};
_Static_assert(sizeof(struct timer) == 20, "timer is 20 bytes");

/* Periodic timers keep their period, exact deadline, cookie and target
 * here, so that the 20-byte timer needs no field most timers would not use. */
struct timer_periodic {
	uint64_t period_ns;
	uint64_t deadline_ns;
	uint32_t cookie;
	union {
		uint32_t next_free; /* free */
		uint32_t target;    /* in use */
	};
};

/* A skiplist node of fixed height: 64 bytes, from a pool separate from the
 * timers because only far or precise timers need one. */
struct skip_node {
	uint64_t key;
	uint32_t timer;
	uint32_t height;
	uint32_t next[SKIP_MAX_H];
};
_Static_assert(sizeof(struct skip_node) == 64, "skiplist node is one line");

struct skiplist {
	uint32_t head; /* a node of full height, key unused */
	uint32_t level; /* levels in use */
	uint32_t n;
};

struct timer_wheel {
	struct timer *t;       /* cap timers, then heads: levels * SLOTS, due, expired, todo */
	uint32_t cap;          /* timers: the wheel's own, then ring producers' */
	uint32_t free_head;
	uint32_t n_armed;
	uint32_t levels;
	uint32_t shard;        /* goes into handles */
	uint32_t horizon_bits; /* SLOT_BITS * levels: ticks past cur above these are far */
	uint32_t fast_bits;    /* MIN(horizon_bits, LO_BITS): the fast paths' reach (below the top level) */
	uint64_t tick_ns;
	uint64_t tick_recip;   /* floor((2^64 - 1) / tick_ns), for to_tick */
	uint64_t late_q;       /* tick_ns / 4: the first bound of the late histogram */
	uint64_t cur;          /* last tick processed: every expiry <= cur has fired */
	uint32_t cur_lo;       /* cur & LO_MASK, for wheel_level */
	uint64_t now_ns;       /* time of the last advance */
	uint64_t next_tick_ns; /* (cur + 1) * tick_ns: from then on a run has a tick to process */
	uint64_t occupied[TIMER_MAX_LEVELS]; /* bit s: slot s of the level is not empty */
	uint32_t n_level[TIMER_MAX_LEVELS];
	uint32_t n_due; /* on the due and expired lists */
	/* skiplists */
	struct skip_node *sn;
	uint32_t sn_cap, sn_free;
	struct skiplist far, precise;
	uint64_t rng;
	/* periodic */
	struct timer_periodic *per;
	uint32_t per_cap, per_free, n_periodic;
	/* freed timers whose id belongs to a ring producer go back to it */
	void (*foreign_free)(void *arg, uint32_t index, uint32_t gen);
	void *foreign_arg;
	uint32_t foreign_start; /* indices >= this belong to producers */
	uint32_t n_retired, retire_max; /* timers retired at a generation wrap, and the bound (cap / 64) */
	/* statistics, written by the owner */
	uint64_t expiries, arms, cancels, rearms;
	uint64_t late[TIMER_LATE_BUCKETS];
};

/* Head indices. */
static inline uint32_t slot_head(const struct timer_wheel *w, uint32_t level, uint32_t slot)
{
	return w->cap + level * SLOTS + slot;
}
static inline uint32_t due_head(const struct timer_wheel *w)
{
	return w->cap + w->levels * SLOTS;
}
static inline uint32_t expired_head(const struct timer_wheel *w)
{
	return due_head(w) + 1;
}
static inline uint32_t todo_head(const struct timer_wheel *w)
{
	return due_head(w) + 2;
}

static inline timer_handle_t make_handle(const struct timer_wheel *w, uint32_t index, uint32_t gen)
{
	return (uint64_t)gen << 32 | (uint64_t)w->shard << HANDLE_SHARD_SHIFT | index;
}
static inline uint32_t handle_shard(timer_handle_t h)
{
	return (uint32_t)(h >> HANDLE_SHARD_SHIFT) & 0xff;
}
static inline uint32_t handle_index(timer_handle_t h)
{
	return (uint32_t)h & HANDLE_INDEX_MASK;
}
static inline uint32_t handle_gen(timer_handle_t h)
{
	return (uint32_t)(h >> 32);
}

/* What the wheel needs to arm: resolved deadline (ns) and period. */
struct wheel_arm_args {
	uint64_t deadline_ns;
	uint64_t period_ns; /* 0: one-shot */
	uint32_t cookie;
	uint16_t target;
	uint16_t flags;     /* TIMER_PRECISE or 0 */
};


/* ---- the service and its producers ---- */

/* A request on a producer's ring: 32 bytes. */
struct timer_request {
	timer_handle_t handle;
	uint64_t deadline_ns;
	uint64_t period_ns;
	uint32_t cookie;
	uint16_t target;
	uint8_t op; /* REQ_ARM, REQ_CANCEL */
	uint8_t flags;
};
enum { REQ_ARM = 1, REQ_CANCEL };

struct timer_producer {
	struct timer_service *ts;
	uint32_t index; /* 0-based; shard mode uses index + 1 in handles */
	uint32_t mode;
	/* ring mode, the producer's side */
	alignas(64) uint32_t tail;      /* next request slot (producer-private copy) */
	uint32_t head_cache;            /* the owner's head as last seen */
	uint32_t ret_head;              /* next returned id to read (the return ring
	                                 * holds every id at most once: it never fills) */
	uint32_t n_stack;               /* free handles held locally */
	timer_handle_t *stack;
	/* ring mode, shared: each index written by one side only */
	alignas(64) _Atomic uint32_t pub_tail; /* producer: requests published */
	alignas(64) _Atomic uint32_t pub_head; /* owner: requests consumed */
	alignas(64) _Atomic uint32_t ret_tail; /* owner: ids returned */
	struct timer_request *ring;
	uint32_t ring_mask;
	timer_handle_t *ret;            /* returned ids, owner -> producer */
	uint32_t ret_mask;
	uint32_t first_index;           /* its range of the owner's pool */
	/* shard mode: the producer's own wheel, locked by whoever touches it */
	alignas(64) atomic_flag lock;
	struct timer_wheel shard;
};

enum target_kind { TARGET_NONE = 0, TARGET_CALLBACK, TARGET_NODE };

struct timer_target {
	uint8_t kind;
	timer_fn_t *fn;
	void *arg;
	struct node_runtime *rt; /* node targets, on the bound thread */
};

struct timer_service {
	struct timer_wheel w;
	struct timer_config cfg;
	timer_clock_fn_t *clock;
	void *clock_arg;
	double ns_per_cycle; /* the default clock's scale, read inline; 0: call clock */
	struct graph *graph;
	struct graph_thread *thread;
	bool slack_set; /* the owner thread's timer slack is 1 ns (loop_hook) */
	uint32_t n_targets;
	bool has_node_targets;
	struct timer_target targets[TIMER_MAX_TARGETS];
	struct timer_producer *producers[TIMER_MAX_PRODUCERS];
	_Atomic uint32_t n_producers;
	uint64_t producer_requests, producer_refused, deferred;
	/* one delivery batch */
	struct timer_event ev[EVENT_BATCH];
	uint16_t tg[EVENT_BATCH];
	uint32_t n_spare; /* buffers kept for node events */
	uint32_t spare[2 * EVENT_BATCH];
};

/* timer_producer.c */
void producers_drain(struct timer_service *ts);
uint32_t producers_expire(struct timer_service *ts, uint64_t now_ns);
struct timer_producer *producer_of(struct timer_service *ts, timer_handle_t h);
void producer_free(struct timer_producer *p);
void producer_lock(struct timer_producer *p);
void producer_unlock(struct timer_producer *p);
/* timer_service.c */
uint32_t service_deliver(struct timer_service *ts, uint32_t n);
uint32_t service_room(struct timer_service *ts);
/* The service's clock: the default one inline (timer_clock_ns's very
 * formula, so both give the same time), any other through its pointer. */
static inline uint64_t service_clock(const struct timer_service *ts)
{
	if (likely(ts->ns_per_cycle != 0))
		return (uint64_t)((double)cpu_ticks() * ts->ns_per_cycle);
	return ts->clock(ts->clock_arg);
}

/* Spec to wheel arguments: absolute deadline, period. False when the spec
 * is malformed. Callers on other threads use it too: it reads only the
 * target count (fixed once producers run) and the clock. Inline: it is a
 * quarter of an arm's instructions as a call. */
static inline bool service_resolve(struct timer_service *ts, const struct timer_spec *spec,
				   struct wheel_arm_args *a)
{
	bool periodic = spec->flags & TIMER_PERIODIC;
	if (unlikely(spec->target >= ts->n_targets || (periodic && !spec->interval_ns)))
		return false;
	a->deadline_ns = spec->deadline_ns ? spec->deadline_ns : service_clock(ts) + spec->interval_ns;
	a->period_ns = periodic ? spec->interval_ns : 0;
	a->cookie = spec->cookie;
	a->target = spec->target;
	a->flags = spec->flags & TIMER_PRECISE;
	return true;
}

/* timer_wheel.c */
int wheel_init(struct timer_wheel *w, uint32_t cap, uint32_t n_foreign, uint32_t levels, uint64_t tick_ns,
	       uint32_t max_skiplist, uint32_t max_periodic, uint32_t shard, uint64_t now_ns);
void wheel_fini(struct timer_wheel *w);
/* Adds the wheel's memory to mem's timers, heads, skiplist and periodic. */
void wheel_memory(const struct timer_wheel *w, struct timer_memory *mem);
int wheel_arm(struct timer_wheel *w, const struct wheel_arm_args *a, timer_handle_t *h);
int wheel_arm_reserved(struct timer_wheel *w, timer_handle_t h, const struct wheel_arm_args *a);
int wheel_cancel(struct timer_wheel *w, timer_handle_t h);
int wheel_rearm(struct timer_wheel *w, timer_handle_t h, uint64_t deadline_ns, uint64_t period_ns);
void wheel_advance(struct timer_wheel *w, uint64_t now_ns);
/* Up to max expiries: events and their targets, side by side. */
uint32_t wheel_take(struct timer_wheel *w, struct timer_event *ev, uint16_t *target, uint32_t max);
uint64_t wheel_next_ticks(const struct timer_wheel *w);

/* The hand-out and return of a timer that no fast path below covers:
 * periodic ones, generations that wrap, producers' timers. */
void wheel_free_slow(struct timer_wheel *w, uint32_t i);

/* The fast paths below must inline into the service's entry points (GCC's
 * size heuristics otherwise call wheel_arm_tick_fast out of line: 16 more
 * instructions per arm). */
#define TIMER_INLINE static inline __attribute__((always_inline))

/* ---- the wheel's fast paths, inline in the service's entry points ----
 * The common timer (one-shot, on tick, ahead of the wheel's time and within
 * its horizon) is armed, cancelled and moved here in a straight line; each
 * returns false for anything else, and the caller takes the out-of-line
 * path, which decides everything again from the start. */

/* Circular index lists whose heads are pool entries past the timers. */
static inline void list_add(struct timer *t, uint32_t h, uint32_t i)
{
	uint32_t last = t[h].prev;
	t[i].next = h;
	t[i].prev = last;
	t[last].next = i;
	t[h].prev = i;
}

/* Unlink i; true when its list is left empty. A list is empty when its
 * head is its only entry, and then i's two neighbours are that head. */
static inline bool list_del(struct timer *t, uint32_t i)
{
	uint32_t prev = t[i].prev, next = t[i].next;
	t[prev].next = next;
	t[next].prev = prev;
	return prev == next;
}

/* Round up, never down: E * tick >= deadline. A multiply by the
 * reciprocal instead of a 64-bit divide (a third of an arm's cycles when
 * measured): the product's high half is floor(ns / tick) or one less, and
 * a compare corrects it. */
static inline uint64_t to_tick(const struct timer_wheel *w, uint64_t ns)
{
	uint64_t q = (uint64_t)(((unsigned __int128)ns * w->tick_recip) >> 64);
	uint64_t r = ns - q * w->tick_ns;
	while (unlikely(r >= w->tick_ns)) { /* once at most below 2^63 ns */
		q++;
		r -= w->tick_ns;
	}
	return q + (r != 0);
}

/* The level of expiry e is that of the highest digit in which it differs
 * from cur (x = e ^ cur, not 0); a multiply-shift stands for / SLOT_BITS. */
static inline uint32_t level_of_x(uint64_t x)
{
	return ((uint32_t)(63 - __builtin_clzll(x)) * 43) >> 8;
}
_Static_assert(SLOT_BITS == 6, "level_of_x divides by 6");

static inline uint32_t digit(uint64_t e, uint32_t level)
{
	return (uint32_t)(e >> (level * SLOT_BITS)) & (SLOTS - 1);
}

/* The level of wheel timer lo: that of the top bit in which its expiry
 * differs from cur, or 5 when LO_TOP (bit 30: level_of_x gives 5) is set
 * (bit 31, LO_OFF, is clear in the wheel). */
static inline uint32_t wheel_level(const struct timer_wheel *w, uint32_t lo)
{
	uint32_t x = lo ^ w->cur_lo;
	return ((uint32_t)(31 ^ __builtin_clz(x)) * 43) >> 8; /* 32 bits: one bsr */
}
_Static_assert(((30 * 43) >> 8) == TOP_LEVEL, "LO_TOP reads as the top level");

/* Link timer i (expiry e, ahead of cur and within the horizon) into its
 * slot at level l; lo is e's low 30 bits. may_top: it may go to the top
 * level (false when it moves down from a drained slot). The caller counts
 * n_level (statistics stores come last: the compiler must assume they
 * clobber the pool). */
TIMER_INLINE void wheel_link_at(struct timer_wheel *w, struct timer *pool, uint32_t i, uint64_t e, uint32_t l,
				    uint32_t lo, bool may_top)
{
	uint32_t s = digit(e, l);
	uint32_t h = w->cap + l * SLOTS + s, last = pool[h].prev;
	struct timer *t = &pool[i];
	if (may_top) /* l <= 5: (l + 3) has bit 3 only at 5 */
		lo |= ((l + 3) << 27) & LO_TOP;
	t->next = h;
	t->prev = last;
	t->lo = lo;
	pool[last].next = i;
	pool[h].prev = i;
	w->occupied[l] |= 1ull << s;
}
_Static_assert(TOP_LEVEL == 5 && LO_TOP == 8u << 27, "wheel_link_at's top bit");

/* The same, x = e ^ cur, counted. */
TIMER_INLINE void wheel_link(struct timer_wheel *w, uint32_t i, uint64_t e, uint64_t x, uint32_t lo, bool may_top)
{
	uint32_t l = level_of_x(x);
	wheel_link_at(w, w->t, i, e, l, lo, may_top);
	TIMER_STAT_ADD(w->n_level[l], 1);
}

/* Unlink wheel timer i (level l) from its slot; the slot's bit goes when it empties
 * (heads are laid out level by level, so the head's offset is the bit's). */
TIMER_INLINE void wheel_unlink_in(struct timer_wheel *w, struct timer *pool, uint32_t i)
{
	uint32_t prev = pool[i].prev, next = pool[i].next;
	pool[prev].next = next;
	pool[next].prev = prev;
	if (prev == next) { /* only the head is left */
		uint32_t bit = prev - w->cap;
		w->occupied[bit / SLOTS] &= ~(1ull << (bit % SLOTS));
	}
}

TIMER_INLINE void wheel_unlink_nostat(struct timer_wheel *w, uint32_t i)
{
	wheel_unlink_in(w, w->t, i);
}

TIMER_INLINE void wheel_unlink(struct timer_wheel *w, uint32_t i, uint32_t l)
{
	wheel_unlink_nostat(w, i);
	TIMER_STAT_SUB(w->n_level[l], 1);
}

/* Whether handle h's generation is timer t's and t is not periodic: one
 * 64-bit compare (a handle with stray high bits matches nothing). */
static inline bool meta_oneshot_of(const struct timer *t, timer_handle_t h)
{
	return (uint64_t)t->meta - ((h >> 32) << META_GEN_SHIFT) < TARGET_PERIODIC;
}

/* The timer a handle names when it is a common wheel timer of w. */
TIMER_INLINE struct timer *wheel_common(struct timer_wheel *w, timer_handle_t h, uint32_t i)
{
	if (unlikely(i >= w->cap || handle_shard(h) != w->shard))
		return NULL;
	struct timer *t = &w->t[i];
	if (unlikely(!meta_oneshot_of(t, h) || (t->lo & LO_OFF)))
		return NULL;
	return t;
}

/* Arm a common timer at expiry tick e (any e: false unless it is ahead of
 * cur and below the top level, and the pool has a timer). */
TIMER_INLINE bool wheel_arm_tick_fast(struct timer_wheel *w, uint64_t e, uint32_t cookie, uint16_t target,
				       timer_handle_t *h)
{
	uint32_t i = w->free_head;
	uint64_t x = e ^ w->cur;
	if (unlikely(i == NIL || e <= w->cur || (x >> w->fast_bits)))
		return false;
	struct timer *pool = w->t, *t = &pool[i];
	uint32_t next = t->next, meta = t->meta; /* a free timer's target bits are 0 */
	w->free_head = next;
	/* Freed in expiry order, the free list wanders over the pool: fetch
	 * the next arm's line now rather than miss on it then. */
	if (next != NIL)
		PREFETCH_WRITE(&pool[next]);
	t->cookie = cookie;
	t->meta = meta | target;
	uint32_t l = level_of_x(x);
	wheel_link_at(w, pool, i, e, l, (uint32_t)e & LO_MASK, false);
	TIMER_STAT_ADD(w->n_level[l], 1);
	TIMER_STAT_ADD(w->n_armed, 1);
	TIMER_STAT_ADD(w->arms, 1);
	/* The handle last: *h may alias anything, so nothing is reloaded after it. */
	*h = (uint64_t)meta << (32 - META_GEN_SHIFT) | (uint64_t)w->shard << HANDLE_SHARD_SHIFT | i;
	return true;
}

TIMER_INLINE bool wheel_arm_fast(struct timer_wheel *w, uint64_t deadline_ns, uint32_t cookie, uint16_t target,
				  timer_handle_t *h)
{
	return wheel_arm_tick_fast(w, to_tick(w, deadline_ns), cookie, target, h);
}

/* The expiry tick of the deadline `ticks` ticks after the last advance,
 * ceil((now_ns + ticks * tick_ns) / tick_ns), without a divide: cur is
 * floor(now_ns / tick_ns) (every advance keeps it so), and the ceiling
 * adds one when now_ns is past cur's boundary. May wrap for huge ticks;
 * then it is <= cur and the caller's slow path decides. */
static inline uint64_t wheel_tick_after(const struct timer_wheel *w, uint64_t ticks)
{
	return w->cur + ticks + (w->now_ns > w->next_tick_ns - w->tick_ns);
}

/* Free one-shot timer t = i of the owner's pool (unlinked, its meta
 * `meta`): its generation moves on, so every handle to it goes stale, and
 * its target bits clear. Its prev and lo are left as they were: no handle
 * names the new generation until an arm sets them again. False (nothing
 * done) when its generation would wrap or it is a producer's: the caller
 * then takes wheel_free_slow. The caller counts n_armed. */
TIMER_INLINE bool wheel_free_fast(struct timer_wheel *w, struct timer *t, uint32_t i, uint32_t meta)
{
	uint32_t next_meta = (meta | META_TARGET) + 1;
	if (unlikely(next_meta == 0 || i >= w->foreign_start))
		return false;
	t->meta = next_meta;
	t->next = w->free_head;
	w->free_head = i;
	return true;
}

TIMER_INLINE bool wheel_cancel_fast(struct timer_wheel *w, timer_handle_t h)
{
	uint32_t i = handle_index(h);
	struct timer *t = wheel_common(w, h, i);
	if (!t)
		return false;
	uint32_t meta = t->meta, l = wheel_level(w, t->lo);
	wheel_unlink_nostat(w, i);
	TIMER_STAT_SUB(w->n_level[l], 1);
	if (likely(wheel_free_fast(w, t, i, meta)))
		TIMER_STAT_SUB(w->n_armed, 1);
	else
		wheel_free_slow(w, i);
	TIMER_STAT_ADD(w->cancels, 1);
	return true;
}

/* Whether wheel timer lo (level l) moved to expiry e (level ln) stays in
 * its slot. A top-level timer's slot is not in lo: it moves. */
static inline bool wheel_same_slot(uint32_t lo, uint32_t l, uint64_t e, uint32_t ln)
{
	return ln == l && l != TOP_LEVEL && digit(e, l) == digit(lo, l);
}

/* A new deadline in the same slot changes only the expiry (Linux's
 * mod_timer shortcut); otherwise the timer moves to its new slot. */
TIMER_INLINE bool wheel_rearm_fast(struct timer_wheel *w, timer_handle_t h, uint64_t deadline_ns)
{
	uint32_t i = handle_index(h);
	struct timer *t = wheel_common(w, h, i);
	if (!t)
		return false;
	uint64_t e = to_tick(w, deadline_ns), x = e ^ w->cur;
	if (unlikely(e <= w->cur || (x >> w->fast_bits)))
		return false;
	uint32_t lo = t->lo, l = wheel_level(w, lo), ln = level_of_x(x);
	if (wheel_same_slot(lo, l, e, ln)) {
		t->lo = (uint32_t)e & LO_MASK;
	} else {
		/* One pool base for both: the build has no strict aliasing, so
		 * w->t read again after the unlink's stores would be a load. */
		struct timer *pool = w->t;
		wheel_unlink_in(w, pool, i);
		wheel_link_at(w, pool, i, e, ln, (uint32_t)e & LO_MASK, false);
		TIMER_STAT_SUB(w->n_level[l], 1);
		TIMER_STAT_ADD(w->n_level[ln], 1);
	}
	TIMER_STAT_ADD(w->rearms, 1);
	return true;
}

/* timer_skiplist.c */
void skip_init(struct timer_wheel *w, struct skiplist *l, uint32_t head);
int skip_insert(struct timer_wheel *w, struct skiplist *l, uint64_t key, uint32_t timer);
void skip_remove(struct timer_wheel *w, struct skiplist *l, uint32_t node);
/* The first node, NIL when empty. */
static inline uint32_t skip_first(const struct timer_wheel *w, const struct skiplist *l)
{
	return w->sn[l->head].next[0];
}

#endif
