/* The hierarchical timing wheel: levels of 64 slots (6 bits of ticks each),
 * a bitmap per level, a preallocated pool of 20-byte timers linked by index,
 * and two skiplists (timer_skiplist.c) for far and precise deadlines.
 *
 * Placement (as William Ahern's timeout.c and VPP's tw_timer do, in our own
 * words): with `cur` the last tick processed, a timer with expiry tick E > cur
 * sits at the level of the highest 6-bit digit in which E and cur differ, in
 * the slot named by E's digit at that level. When time moves from cur to T,
 * only the slots whose digit lies in (cur, T] at their level (all slots of a
 * level whose higher digits changed) can hold timers that are due or that
 * must move down; those slots, found through the bitmaps, are detached and
 * each timer in them either expires (E <= T) or is placed again relative to
 * T, always on a lower level. Every other timer keeps its slot, so arm and
 * cancel are O(1) and a timer moves at most `levels` times in its life.
 *
 * A timer whose E differs from cur above the top level (past the horizon)
 * waits in the far skiplist and moves into the wheel when T comes within
 * the horizon. TIMER_PRECISE timers wait in the precise skiplist, keyed by
 * their deadline in ns, and expire straight from it.
 *
 * Nothing here allocates after wheel_init or takes a lock: one thread owns
 * a wheel (the service adds the locking shard mode needs).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched/timer_private.h"

/* ---- circular index lists with heads in the pool ---- */

static inline void list_init(struct timer *t, uint32_t h)
{
	t[h].next = t[h].prev = h;
}

static inline bool list_empty(const struct timer *t, uint32_t h)
{
	return t[h].next == h;
}

/* ---- pools ---- */

static uint32_t per_alloc(struct timer_wheel *w)
{
	uint32_t p = w->per_free;
	if (p != NIL) {
		w->per_free = w->per[p].next_free;
		TIMER_STAT_ADD(w->n_periodic, 1);
	}
	return p;
}

static void per_release(struct timer_wheel *w, uint32_t p)
{
	w->per[p].next_free = w->per_free;
	w->per_free = p;
	TIMER_STAT_SUB(w->n_periodic, 1);
}

/* Bump the generation so every handle to the old timer goes stale. A
 * timer whose 24-bit generation wraps is retired (never handed out again,
 * so no handle can alias a later timer) while fewer than cap / 64 are;
 * past that bound it starts again at generation 1, and a handle kept
 * across its 2^24 - 1 uses since could name its new timer (timer.h).
 * Producers' timers go back to their producer. */
void wheel_free_slow(struct timer_wheel *w, uint32_t i)
{
	struct timer *t = &w->t[i];
	if ((t->meta & META_TARGET) == TARGET_PERIODIC)
		per_release(w, t->cookie);
	TIMER_STAT_SUB(w->n_armed, 1);
	t->prev = TL_FREE;
	t->lo = LO_OFF;
	t->meta = (t->meta + (1u << META_GEN_SHIFT)) & ~META_TARGET;
	if (t->meta == 0) { /* the generation wrapped */
		if (w->n_retired < w->retire_max) {
			w->n_retired++; /* retired: prev TL_FREE, generation 0, off every list */
			return;
		}
		t->meta = 1u << META_GEN_SHIFT;
	}
	if (i >= w->foreign_start) {
		w->foreign_free(w->foreign_arg, i, t->meta >> META_GEN_SHIFT);
		return;
	}
	t->next = w->free_head;
	w->free_head = i;
}

/* ---- placement ---- */

static inline bool beyond_horizon(const struct timer_wheel *w, uint64_t e)
{
	return ((e ^ w->cur) >> w->horizon_bits) != 0;
}

/* Timer i onto due list `head` with lo's low bits from x (a tick <= cur,
 * or a precise deadline <= now: `ref`), kept within LO_CLAMP of ref so
 * that the late histogram can rebuild it (a timer later than that counts
 * in the last bucket either way, unless tick_ns is above 33 ms). */
static void make_due(struct timer_wheel *w, uint32_t i, uint32_t head, uint64_t x, uint64_t ref, uint32_t off)
{
	if (x + LO_CLAMP < ref)
		x = ref - LO_CLAMP;
	w->t[i].lo = off | ((uint32_t)x & LO_MASK);
	list_add(w->t, head, i);
	TIMER_STAT_ADD(w->n_due, 1);
}

static inline void make_due_tick(struct timer_wheel *w, uint32_t i, uint32_t head, uint64_t e)
{
	make_due(w, i, head, e, w->cur, LO_OFF);
}

static inline void make_due_precise(struct timer_wheel *w, uint32_t i, uint32_t head, uint64_t deadline_ns)
{
	make_due(w, i, head, deadline_ns, w->now_ns, LO_PRECISE);
}

/* Whether timer t is a precise one: in the precise skiplist or due as one. */
static inline bool timer_precise(const struct timer *t)
{
	return t->prev == TL_PRECISE || (t->prev < TL_PRECISE && (t->lo & LO_PRECISE) == LO_PRECISE);
}

static int skip_wait(struct timer_wheel *w, struct skiplist *l, uint64_t key, uint32_t i, uint32_t where)
{
	int rc = skip_insert(w, l, key, i);
	if (rc == 0) {
		w->t[i].prev = where;
		w->t[i].lo = LO_OFF;
	}
	return rc;
}

/* Put timer i at expiry tick e where it belongs relative to cur. Fails
 * only when it needs the far skiplist and that is full. */
static int place(struct timer_wheel *w, uint32_t i, uint64_t e)
{
	if (e <= w->cur) {
		make_due_tick(w, i, due_head(w), e);
		return 0;
	}
	if (unlikely(beyond_horizon(w, e)))
		return skip_wait(w, &w->far, e, i, TL_FAR);
	wheel_link(w, i, e, e ^ w->cur, (uint32_t)e & LO_MASK, true);
	return 0;
}

static int place_deadline(struct timer_wheel *w, uint32_t i, uint64_t deadline_ns, bool precise)
{
	if (!precise)
		return place(w, i, to_tick(w, deadline_ns));
	if (deadline_ns <= w->now_ns) {
		make_due_precise(w, i, due_head(w), deadline_ns);
		return 0;
	}
	return skip_wait(w, &w->precise, deadline_ns, i, TL_PRECISE);
}

/* Take timer i out of wherever it waits (it stays allocated). */
static void unlink_timer(struct timer_wheel *w, uint32_t i)
{
	struct timer *t = &w->t[i];
	if (t->prev == TL_FAR) {
		skip_remove(w, &w->far, t->next);
	} else if (t->prev == TL_PRECISE) {
		skip_remove(w, &w->precise, t->next);
	} else if (!(t->lo & LO_OFF)) {
		wheel_unlink(w, i, wheel_level(w, t->lo));
	} else {
		list_del(w->t, i);
		TIMER_STAT_SUB(w->n_due, 1);
	}
}

/* Whether placing timer t at deadline_ns needs a skiplist node it does
 * not hold yet (checked before unlinking, so a failing re-arm changes
 * nothing). */
static bool needs_node(const struct timer_wheel *w, const struct timer *t, uint64_t deadline_ns, bool precise)
{
	if (t->prev == TL_FAR || t->prev == TL_PRECISE)
		return false;
	if (precise)
		return deadline_ns > w->now_ns;
	return beyond_horizon(w, to_tick(w, deadline_ns)) && to_tick(w, deadline_ns) > w->cur;
}

/* ---- the API the service uses ---- */

static struct timer *lookup(struct timer_wheel *w, timer_handle_t h, uint32_t *index)
{
	uint32_t i = handle_index(h);
	if (handle_shard(h) != w->shard || i >= w->cap)
		return NULL;
	struct timer *t = &w->t[i];
	if ((uint64_t)(t->meta >> META_GEN_SHIFT) != h >> 32 || t->prev == TL_FREE)
		return NULL;
	*index = i;
	return t;
}

/* Cookie, target and place of free timer i; on failure it is left free
 * as it was. */
static int setup(struct timer_wheel *w, uint32_t i, const struct wheel_arm_args *a)
{
	struct timer *t = &w->t[i];
	uint32_t p = NIL, gen = t->meta & ~META_TARGET;
	if (a->period_ns && (p = per_alloc(w)) == NIL)
		return -ENOSPC;
	t->cookie = a->cookie;
	t->meta = gen | a->target;
	if (p != NIL) {
		w->per[p] = (struct timer_periodic){ .period_ns = a->period_ns, .deadline_ns = a->deadline_ns,
						     .cookie = a->cookie, .target = a->target };
		t->cookie = p;
		t->meta = gen | TARGET_PERIODIC;
	}
	int rc = place_deadline(w, i, a->deadline_ns, a->flags & TIMER_PRECISE);
	if (rc && p != NIL)
		per_release(w, p);
	if (rc)
		t->meta = gen;
	return rc;
}

int wheel_arm(struct timer_wheel *w, const struct wheel_arm_args *a, timer_handle_t *h)
{
	if (!a->period_ns && !a->flags && wheel_arm_fast(w, a->deadline_ns, a->cookie, a->target, h))
		return 0;
	uint32_t i = w->free_head;
	if (i == NIL)
		return -ENOSPC;
	w->free_head = w->t[i].next;
	int rc = setup(w, i, a);
	if (rc) {
		w->t[i].next = w->free_head;
		w->free_head = i;
		return rc;
	}
	TIMER_STAT_ADD(w->n_armed, 1);
	TIMER_STAT_ADD(w->arms, 1);
	*h = make_handle(w, i, w->t[i].meta >> META_GEN_SHIFT);
	return 0;
}

/* A ring producer's timer: it chose the index and knows the generation. */
int wheel_arm_reserved(struct timer_wheel *w, timer_handle_t h, const struct wheel_arm_args *a)
{
	uint32_t i = handle_index(h);
	if (handle_shard(h) != w->shard || i < w->foreign_start || i >= w->cap)
		return -EINVAL;
	struct timer *t = &w->t[i];
	if (t->prev != TL_FREE || (uint64_t)(t->meta >> META_GEN_SHIFT) != h >> 32 || !(t->meta >> META_GEN_SHIFT))
		return -EINVAL;
	int rc = setup(w, i, a);
	if (rc) {
		/* Hand the index back under a new generation: the producer's
		 * handle is dead, and the producer gets its timer back. */
		TIMER_STAT_ADD(w->n_armed, 1);
		wheel_free_slow(w, i);
		return rc;
	}
	TIMER_STAT_ADD(w->n_armed, 1);
	TIMER_STAT_ADD(w->arms, 1);
	return 0;
}

int wheel_cancel(struct timer_wheel *w, timer_handle_t h)
{
	uint32_t i;
	if (wheel_cancel_fast(w, h))
		return 0;
	if (!lookup(w, h, &i))
		return -ENOENT;
	unlink_timer(w, i);
	wheel_free_slow(w, i);
	TIMER_STAT_ADD(w->cancels, 1);
	return 0;
}

int wheel_rearm(struct timer_wheel *w, timer_handle_t h, uint64_t deadline_ns, uint64_t period_ns)
{
	uint32_t i;
	if (wheel_rearm_fast(w, h, deadline_ns))
		return 0;
	struct timer *t = lookup(w, h, &i);
	if (!t)
		return -ENOENT;
	bool precise = timer_precise(t);
	if (needs_node(w, t, deadline_ns, precise) && w->sn_free == NIL)
		return -ENOSPC;
	TIMER_STAT_ADD(w->rearms, 1);
	if ((t->meta & META_TARGET) == TARGET_PERIODIC) {
		struct timer_periodic *p = &w->per[t->cookie];
		p->deadline_ns = deadline_ns;
		if (period_ns)
			p->period_ns = period_ns;
	}
	/* Same slot: only the expiry changes (Linux's mod_timer shortcut). */
	if (t->prev < TL_PRECISE && !(t->lo & LO_OFF)) {
		uint64_t e = to_tick(w, deadline_ns), x = e ^ w->cur;
		if (e > w->cur && !beyond_horizon(w, e) &&
		    wheel_same_slot(t->lo, wheel_level(w, t->lo), e, level_of_x(x))) {
			t->lo = (uint32_t)e & LO_MASK;
			return 0;
		}
	}
	unlink_timer(w, i);
	return place_deadline(w, i, deadline_ns, precise);
}

/* ---- time ---- */

/* Slots of level l that moving from cur to T makes due or moves down. */
static uint64_t slots_passed(uint64_t cur, uint64_t t, uint32_t l)
{
	uint32_t above = SLOT_BITS * (l + 1);
	if (above < 64 && (cur >> above) != (t >> above))
		return ~0ull;
	uint32_t lo = digit(cur, l), hi = digit(t, l);
	if (lo == hi)
		return 0;
	return ((2ull << hi) - 1) & ~((2ull << lo) - 1);
}

/* Detach one slot and send each of its timers on: due ones to the
 * expired list, the others one level down (or more). Their expiries
 * agree with `old` (cur before the advance) above digit l, and digit l
 * is s: with lo's low 30 bits that is all of them. */
static void drain_slot(struct timer_wheel *w, uint32_t l, uint32_t s, uint64_t old, uint64_t t_now)
{
	struct timer *pool = w->t;
	uint32_t h = slot_head(w, l, s), eh = expired_head(w);
	uint32_t i = pool[h].next, last = pool[h].prev, n = 1;
	uint64_t hi = l == TOP_LEVEL ? (old >> (SLOT_BITS * (TOP_LEVEL + 1)) << (SLOT_BITS * (TOP_LEVEL + 1))) |
					       (uint64_t)s << LO_BITS
				     : old & ~(uint64_t)LO_MASK;
	/* due ones are at most the advance behind t_now: lo needs no clamp
	 * unless the advance is LO_CLAMP or more */
	bool clamp = t_now - old >= LO_CLAMP;
	uint32_t n_due = 0;
	list_init(pool, h);
	w->occupied[l] &= ~(1ull << s);
	for (;; n++) {
		struct timer *t = &pool[i];
		uint32_t next = t->next, lo = t->lo & LO_MASK;
		uint64_t e = hi | lo;
		PREFETCH_WRITE(&pool[next]); /* the walk's misses overlap the placing */
		if (e <= t_now) {
			if (unlikely(clamp) && e + LO_CLAMP < t_now)
				lo = (uint32_t)(t_now - LO_CLAMP) & LO_MASK;
			t->lo = LO_OFF | lo;
			list_add(pool, eh, i);
			n_due++;
		} else { /* cur is t_now already: a lower level, within the horizon */
			wheel_link(w, i, e, e ^ t_now, lo, false);
		}
		if (i == last)
			break;
		i = next;
	}
	TIMER_STAT_SUB(w->n_level[l], n);
	TIMER_STAT_ADD(w->n_due, n_due);
}

/* Level by level from the bottom: timers that move down land on levels
 * already done, so each is touched once per advance. */
static void advance_wheel(struct timer_wheel *w, uint64_t t_now)
{
	uint64_t old = w->cur;
	w->cur = t_now;
	w->cur_lo = (uint32_t)t_now & LO_MASK;
	w->next_tick_ns = (t_now + 1) * w->tick_ns;
	for (uint32_t l = 0; l < w->levels; l++) {
		uint64_t bits = w->occupied[l] & slots_passed(old, t_now, l);
		while (bits) {
			uint32_t s = (uint32_t)__builtin_ctzll(bits);
			bits &= bits - 1;
			drain_slot(w, l, s, old, t_now);
		}
	}
}

/* Far timers enter the wheel once they share cur's digits above the top
 * level; the skiplist's order makes the first one the only one to check. */
static void migrate_far(struct timer_wheel *w)
{
	uint32_t n;
	while ((n = skip_first(w, &w->far)) != NIL) {
		uint64_t e = w->sn[n].key;
		uint32_t i = w->sn[n].timer;
		if (e > w->cur && beyond_horizon(w, e))
			break;
		skip_remove(w, &w->far, n);
		if (e <= w->cur)
			make_due_tick(w, i, expired_head(w), e);
		else
			place(w, i, e);
	}
}

static void expire_precise(struct timer_wheel *w)
{
	uint32_t n;
	while ((n = skip_first(w, &w->precise)) != NIL && w->sn[n].key <= w->now_ns) {
		uint32_t i = w->sn[n].timer;
		uint64_t d = w->sn[n].key;
		skip_remove(w, &w->precise, n);
		make_due_precise(w, i, expired_head(w), d);
	}
}

/* Move the due list onto the expired list: those fire in this run. */
static void take_due(struct timer_wheel *w)
{
	struct timer *t = w->t;
	uint32_t d = due_head(w), e = expired_head(w);
	if (list_empty(t, d))
		return;
	uint32_t first = t[d].next, last = t[d].prev, tail = t[e].prev;
	t[tail].next = first;
	t[first].prev = tail;
	t[last].next = e;
	t[e].prev = last;
	list_init(t, d);
}

void wheel_advance(struct timer_wheel *w, uint64_t now_ns)
{
	if (now_ns > w->now_ns) /* a clock that steps back holds time still */
		w->now_ns = now_ns;
	take_due(w);
	uint64_t t_now = w->now_ns / w->tick_ns;
	if (t_now > w->cur)
		advance_wheel(w, t_now);
	migrate_far(w);
	expire_precise(w);
}

/* The late-histogram bucket of a timer that should have fired at fire_ns
 * and fires now. Bucket b >= 1 holds q * 2^(b-1) <= late < q * 2^b: 1 +
 * floor(log2(late / q)), from the two leading-bit positions and one compare. */
static uint32_t late_bucket(const struct timer_wheel *w, uint64_t fire_ns)
{
	uint64_t late = w->now_ns > fire_ns ? w->now_ns - fire_ns : 0;
	uint64_t q = w->late_q;
	if (late < q)
		return 0;
	uint32_t k = TIMER_LATE_BUCKETS - 2;
	if (q) {
		k = (uint32_t)(__builtin_clzll(q) - __builtin_clzll(late));
		if ((q << k) > late)
			k--;
	}
	return 1 + MIN(k, (uint32_t)TIMER_LATE_BUCKETS - 2);
}

/* A periodic timer goes on to its next period boundary after now (missed
 * periods are coalesced). */
static void next_period(struct timer_wheel *w, uint32_t i, bool precise)
{
	struct timer_periodic *p = &w->per[w->t[i].cookie];
	uint64_t d = p->deadline_ns + p->period_ns;
	if (d <= w->now_ns)
		d = p->deadline_ns + ((w->now_ns - p->deadline_ns) / p->period_ns + 1) * p->period_ns;
	p->deadline_ns = d;
	if (place_deadline(w, i, d, precise)) /* its skiplist node went to another timer meanwhile */
		wheel_free_slow(w, i);
}

/* The expired list is walked, not unlinked from, one timer at a time: the
 * taken prefix is cut off at the end (nothing here adds to that list).
 * Timers of one slot share their fire time, so the late bucket of the one
 * before is usually the one. */
/* The fire time of a due timer from its lo (the low 30 bits of its tick,
 * or of a precise one's ns, within LO_CLAMP of cur or now). */
static uint64_t due_fire_ns(const struct timer_wheel *w, uint32_t lo)
{
	if ((lo & LO_PRECISE) == LO_PRECISE)
		return w->now_ns - (((uint32_t)w->now_ns - lo) & LO_MASK);
	return (w->cur - (((uint32_t)w->cur - lo) & LO_MASK)) * w->tick_ns;
}

uint32_t wheel_take(struct timer_wheel *w, struct timer_event *ev, uint16_t *target, uint32_t max)
{
	struct timer *pool = w->t;
	uint32_t h = expired_head(w), i = pool[h].next, n = 0, bucket = 0, run = 0, freed = 0;
	uint32_t last_lo = 0; /* never a due timer's: LO_OFF is set in theirs */
	uint64_t shard = (uint64_t)w->shard << HANDLE_SHARD_SHIFT;
	for (; n < max && i != h; n++) {
		struct timer *t = &pool[i];
		uint32_t next = t->next, lo = t->lo, meta = t->meta, cookie = t->cookie;
		PREFETCH_WRITE(&pool[next]);
		if (lo != last_lo) {
			uint32_t b = late_bucket(w, due_fire_ns(w, lo));
			last_lo = lo;
			if (b != bucket) {
				TIMER_STAT_ADD(w->late[bucket], run);
				bucket = b;
				run = 0;
			}
		}
		run++;
		ev[n].handle = (uint64_t)(meta & ~META_TARGET) << (32 - META_GEN_SHIFT) | shard | i;
		ev[n].reserved = 0;
		if (unlikely((meta & META_TARGET) == TARGET_PERIODIC)) {
			const struct timer_periodic *p = &w->per[cookie];
			ev[n].cookie = p->cookie;
			target[n] = (uint16_t)p->target;
			next_period(w, i, (lo & LO_PRECISE) == LO_PRECISE);
		} else {
			ev[n].cookie = cookie;
			target[n] = (uint16_t)(meta & META_TARGET);
			if (likely(wheel_free_fast(w, t, i, meta)))
				freed++;
			else
				wheel_free_slow(w, i);
		}
		i = next;
	}
	pool[h].next = i;
	pool[i].prev = h;
	TIMER_STAT_ADD(w->late[bucket], run);
	TIMER_STAT_SUB(w->n_armed, freed);
	TIMER_STAT_SUB(w->n_due, n);
	TIMER_STAT_ADD(w->expiries, n);
	return n;
}

uint64_t wheel_next_ticks(const struct timer_wheel *w)
{
	if (w->n_due)
		return 0;
	uint64_t best = UINT64_MAX;
	for (uint32_t l = 0; l < w->levels; l++) {
		if (!w->occupied[l])
			continue;
		uint32_t s = (uint32_t)__builtin_ctzll(w->occupied[l]);
		uint32_t above = SLOT_BITS * (l + 1);
		uint64_t first = (above < 64 ? (w->cur >> above) << above : 0) | (uint64_t)s << (SLOT_BITS * l);
		best = MIN(best, first - w->cur);
	}
	return best;
}

/* ---- life ---- */

static int alloc_pools(struct timer_wheel *w, uint32_t n_entries)
{
	w->t = aligned_alloc(64, ROUND_UP((size_t)n_entries * sizeof(struct timer), 64));
	w->sn = aligned_alloc(64, ((size_t)w->sn_cap + 2) * sizeof(struct skip_node));
	w->per = calloc(MAX(w->per_cap, 1u), sizeof(struct timer_periodic));
	if (!w->t || !w->sn || !w->per)
		return -ENOMEM;
	memset(w->t, 0, (size_t)n_entries * sizeof(struct timer));
	return 0;
}

static void init_free_lists(struct timer_wheel *w)
{
	for (uint32_t i = 0; i < w->cap; i++) {
		w->t[i].meta = 1u << META_GEN_SHIFT; /* handles are never 0 */
		w->t[i].next = i + 1 < w->foreign_start ? i + 1 : NIL;
		w->t[i].prev = TL_FREE;
		w->t[i].lo = LO_OFF;
	}
	w->free_head = w->foreign_start ? 0 : NIL;
	for (uint32_t i = 0; i < w->sn_cap; i++)
		w->sn[i + 2].next[0] = i + 1 < w->sn_cap ? i + 3 : NIL;
	w->sn_free = w->sn_cap ? 2 : NIL;
	for (uint32_t i = 0; i < w->per_cap; i++)
		w->per[i].next_free = i + 1 < w->per_cap ? i + 1 : NIL;
	w->per_free = w->per_cap ? 0 : NIL;
}

int wheel_init(struct timer_wheel *w, uint32_t cap, uint32_t n_foreign, uint32_t levels, uint64_t tick_ns,
	       uint32_t max_skiplist, uint32_t max_periodic, uint32_t shard, uint64_t now_ns)
{
	memset(w, 0, sizeof(*w));
	if (!levels || levels > TIMER_MAX_LEVELS || !tick_ns || (uint64_t)cap + n_foreign > TIMER_MAX_TIMERS)
		return -EINVAL;
	w->cap = cap + n_foreign;
	w->foreign_start = cap;
	w->retire_max = w->cap / 64;
	w->levels = levels;
	w->tick_ns = tick_ns;
	w->tick_recip = UINT64_MAX / tick_ns;
	w->horizon_bits = SLOT_BITS * levels;
	w->fast_bits = MIN(w->horizon_bits, (uint32_t)LO_BITS); /* the top level takes the slow path */
	w->late_q = tick_ns / 4;
	w->shard = shard;
	w->sn_cap = max_skiplist;
	w->per_cap = max_periodic;
	w->now_ns = now_ns;
	w->cur = now_ns / tick_ns;
	w->cur_lo = (uint32_t)w->cur & LO_MASK;
	w->next_tick_ns = (w->cur + 1) * tick_ns;
	w->rng = 0x9e3779b97f4a7c15ull ^ ((uint64_t)shard << 17);
	uint32_t n_entries = w->cap + levels * SLOTS + 3;
	if (alloc_pools(w, n_entries)) {
		wheel_fini(w);
		return -ENOMEM;
	}
	init_free_lists(w);
	for (uint32_t h = w->cap; h < n_entries; h++)
		list_init(w->t, h);
	skip_init(w, &w->far, 0);
	skip_init(w, &w->precise, 1);
	return 0;
}

void wheel_fini(struct timer_wheel *w)
{
	free(w->t);
	free(w->sn);
	free(w->per);
	w->t = NULL;
	w->sn = NULL;
	w->per = NULL;
}

void wheel_memory(const struct timer_wheel *w, struct timer_memory *mem)
{
	size_t n_heads = (size_t)w->levels * SLOTS + 3;
	size_t pool = ROUND_UP(((size_t)w->cap + n_heads) * sizeof(struct timer), 64);
	size_t timers = (size_t)w->cap * sizeof(struct timer);
	mem->timers += timers;
	mem->heads += pool - timers + sizeof(*w); /* the pool's rounding goes with the heads */
	mem->skiplist += ((size_t)w->sn_cap + 2) * sizeof(struct skip_node);
	mem->periodic += MAX(w->per_cap, 1u) * sizeof(struct timer_periodic);
	mem->entry_bytes = sizeof(struct timer);
}
