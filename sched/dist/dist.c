/* The distributor library: flow table, backlogs, handoff and completions
 * (see dist.h for the contract, dist_private.h for who writes what).
 *
 * One call of dist_process: harvest every worker's completions (releasing
 * tags whose count drops to 0), match the packets 8 at a time against the
 * flow table, stage each in its worker's backlog, and publish the backlogs
 * to the rings. A backlog that fills mid-call is published at once; what a
 * full ring does not take stays staged, and once the backlog is full too
 * the worker's packets are dropped.
 *
 * This file is the distributor thread's hot path (harvest, publish, assign)
 * and what shares its static helpers (reclaim); the worker's side and the
 * reorder window are in dist_complete.c, setup and statistics in
 * dist_setup.c.
 */
#include <string.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "graph/node.h"
#include "sched/dist/dist_private.h"

uint32_t dist_n_workers(const struct dist *d)
{
	return d->n_workers;
}

/* The idle time dist_worker_stats shows (idle_ns, the "stalled" flag of
 * `show distributor` past 100 ms) counts from a worker's last completion,
 * or from the publish that gave an idle worker work. Reading the clock
 * there cost ~50 TSC ticks a call on this VM, ~6 a packet when lines of 8
 * go one at a time (DPDK's depth), for a flag about 100 ms. So a harvest
 * or publish only marks the worker's stamp due (0: "just now", which the
 * readers show as no idle time), and the clock is read once every
 * DIST_CLOCK_CALLS calls of dist_process or dist_flush to fill the due
 * stamps. A stamp is then late by at most that many calls, never early,
 * so a worker is never shown idle for longer than it was; and a worker
 * that holds packets keeps this thread calling (dist_idle), so a stall
 * still shows, that many calls late at most. */
#define DIST_CLOCK_CALLS 64u

/* Copy one thread's counter for readers elsewhere (relaxed, tear-free). */
#define PUB(dst, src) __atomic_store_n(&(dst), (src), __ATOMIC_RELAXED)

static __attribute__((noinline)) void stamp_due(struct dist *d)
{
	uint64_t now = cpu_ticks();
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct dist_tx *tx = &d->tx[w];
		if (!tx->last_return_ticks) {
			tx->last_return_ticks = now;
			PUB(tx->pub_last_return_ticks, now);
		}
	}
}

/* Once per dist_process or dist_flush call (the first call of an
 * instance, then every DIST_CLOCK_CALLS-th): one count, one test. */
static inline void clock_tick(struct dist *d)
{
	if (unlikely((d->clock_calls++ & (DIST_CLOCK_CALLS - 1)) == 0))
		stamp_due(d);
}

/* ---- completions: what the workers report, harvested here ---- */

/* Whether entry e is owned by owner byte w1 with packets outstanding: its
 * low 24 bits lie in [w1 << 16 | 1, w1 << 16 | 0xffff]. */
static inline bool owned_by(uint32_t e, uint32_t w1)
{
	return ((e & 0xffffffu) - (w1 << 16 | 1)) < DIST_E_COUNT_MASK;
}

/* A completion for a tag worker w does not own: a bug, counted. */
static __attribute__((noinline, cold)) void bad_return(struct dist *d)
{
	d->bad_returns++;
}

/* Release one completed packet of worker w (owner byte w1); returns 1
 * when it was the flow's last packet out (the tag is free now). */
static inline uint32_t release_tag(struct dist *d, uint32_t w1, uint16_t tag)
{
	uint32_t *e = &d->table[tag & HANDOFF_TAG_MASK];
	uint32_t v = *e;
	if (unlikely(!owned_by(v, w1))) {
		bad_return(d);
		return 0;
	}
	v--;
	if ((v & DIST_E_COUNT_MASK) == 0) {
		*e = v & 0xff000000u; /* nobody owns it; the last owner stays */
		return 1;
	}
	*e = v;
	return 0;
}

/* One completed (or taken back) packet of worker w, whatever its type. */
static void release_one(struct dist *d, struct dist_tx *tx, uint32_t w1, uint16_t tag)
{
	if (!(tag & DIST_TAG_SPREAD)) {
		tx->flows -= release_tag(d, w1, tag);
		return;
	}
	tx->spread_in_flight--;
	if (tag & DIST_TAG_ORDERED)
		dist_window_done(d, tag);
}

/* Completed lines of worker w, oldest first: one pass, the counters once.
 * Inlined twice: lines of atomic packets only (no ordered or parallel
 * packet out) release tags straight, the rest out of line; only the rest
 * can have flagged lines, and clears their flags: the lines are the
 * backlog's again, and a reused line starts unflagged. */
__attribute__((always_inline)) static inline void release_lines_as(struct dist *d, uint32_t w,
								   struct handoff_line *lines, uint32_t n_lines,
								   bool typed)
{
	struct dist_tx *tx = &d->tx[w];
	uint32_t n = 0, freed = 0;
	for (uint32_t l = 0; l < n_lines; l++) {
		const uint16_t *tag = lines[l].tag;
		uint32_t cnt = lines[l].n; /* once: the table's stores may alias a byte */
		if (typed && lines[l].flags == (DIST_LINE_SPREAD | DIST_LINE_PARALLEL)) {
			tx->spread_in_flight -= cnt; /* release_one's whole work for each */
		} else if (!typed && likely(cnt == HANDOFF_LINE_SLOTS)) {
			/* A full line, the usual one: 8 known lanes, unrolled
			 * (callgrind: the counted loop cost ~4 instructions a
			 * packet at one line a call). */
#pragma GCC unroll 8
			for (uint32_t s = 0; s < HANDOFF_LINE_SLOTS; s++)
				freed += release_tag(d, w + 1, tag[s]);
		} else {
			for (uint32_t s = 0; s < cnt; s++) {
				if (typed)
					release_one(d, tx, w + 1, tag[s]);
				else
					freed += release_tag(d, w + 1, tag[s]);
			}
		}
		if (typed)
			lines[l].flags = 0;
		n += cnt;
	}
	tx->flows -= freed;
	tx->in_flight -= n;
	tx->st.returned += n;
}

static __attribute__((noinline)) void release_lines_typed(struct dist *d, uint32_t w, struct handoff_line *lines,
							     uint32_t n_lines)
{
	release_lines_as(d, w, lines, n_lines, true);
}

static void release_lines(struct dist *d, uint32_t w, struct handoff_line *lines, uint32_t n_lines)
{
	if (unlikely(d->tx[w].spread_in_flight))
		release_lines_typed(d, w, lines, n_lines);
	else
		release_lines_as(d, w, lines, n_lines, false);
}

/* Release worker w's lines up to line number `upto` (free-running), in at
 * most two contiguous pieces of its lines. */
static inline __attribute__((always_inline)) void release_sent(struct dist *d, uint32_t w, uint32_t upto)
{
	struct dist_tx *tx = &d->tx[w];
	while (tx->done != upto) {
		uint32_t i = tx->done & tx->mask;
		uint32_t k = MIN(upto - tx->done, tx->mask + 1 - i);
		release_lines(d, w, tx->lines + i, k);
		tx->done += k;
	}
}

/* Harvest worker w's completions: the lines it reported since the last
 * look. With ordered packets out, the count is read first, then what it
 * handed back (all of it enqueued before it counted those lines), and only
 * then are the completed sequence numbers marked done. Returns packets
 * released. */
static inline uint32_t harvest_worker(struct dist *d, uint32_t w)
{
	struct dist_tx *tx = &d->tx[w];
	uint32_t done = tx->one_line ? handoff_mailbox_posted(tx->ring)
				     : __atomic_load_n(&d->rx[w].done_lines, __ATOMIC_ACQUIRE);
	if (done == tx->done)
		return 0;
	uint32_t before = tx->in_flight;
	if (d->win.head != d->win.next)
		dist_window_drain(d, w);
	release_sent(d, w, done);
	tx->last_return_ticks = 0; /* due: stamp_due fills it */
	return before - tx->in_flight;
}

/* Harvest every worker's completions; returns packets released. */
static uint32_t harvest(struct dist *d)
{
	uint32_t total = 0;
	for (uint32_t w = 0; w < d->n_workers; w++)
		if (d->tx[w].in_flight)
			total += harvest_worker(d, w);
	return total;
}

/* ---- publishing ---- */

/* Hand worker w's backlog to its ring: whole lines only, or everything
 * (the last line partial) when `all`. Returns packets published. Out of
 * line: the per-packet paths call it only when a backlog is full. The
 * lines stay where they are: published, they are the copies completions
 * release (dist_private.h, struct dist_tx). */
/* harvest_worker out of line, for the paths that inline publish_one_line. */
static __attribute__((noinline)) void harvest_one(struct dist *d, uint32_t w)
{
	harvest_worker(d, w);
}

/* publish at one line in flight (ring_lines 1, DPDK's burst
 * distributor's depth: one cache line of 8 per worker, here a mailbox):
 * the first line of the backlog or nothing, and none of the general
 * case's arithmetic for many lines in two pieces (callgrind: ~5
 * instructions a packet at DPDK's depth, where every call publishes). */
static inline uint32_t publish_one_line(struct dist *d, struct dist_tx *tx, bool all)
{
	uint32_t n = tx->n_backlog;
	uint32_t k = n >= HANDOFF_LINE_SLOTS ? HANDOFF_LINE_SLOTS : all ? n : 0;
	if (!k)
		return 0;
	/* At most out_max lines out (publish says why). */
	if (unlikely(tx->head - tx->done == tx->out_max)) {
		harvest_one(d, (uint32_t)(tx - d->tx));
		if (tx->head - tx->done == tx->out_max)
			return 0;
	}
	struct handoff_line *l = dist_staged_line(tx, 0);
	l->n = (uint8_t)k;
	/* The mailbox takes none while the worker has not taken the last
	 * one (the line's count says so: the one line this reads). */
	if (!handoff_enqueue_lines(tx->ring, l, 1))
		return 0;
	tx->head++;
	tx->n_backlog = n - k;
	tx->stage = dist_staged_line(tx, (n - k) / HANDOFF_LINE_SLOTS);
	if (!tx->in_flight)
		tx->last_return_ticks = 0; /* idle time counts from here (due: stamp_due) */
	tx->in_flight += k;
	return k;
}

static __attribute__((noinline)) uint32_t publish(struct dist *d, struct dist_tx *tx, bool all)
{
	if (tx->one_line)
		return publish_one_line(d, tx, all);
	uint32_t full = tx->n_backlog / HANDOFF_LINE_SLOTS, part = tx->n_backlog % HANDOFF_LINE_SLOTS;
	uint32_t want = full + (all && part);
	if (!want)
		return 0;
	/* At most out_max lines out, so that the backlog's lines never reach
	 * one not yet released: when that many are out, the worker has
	 * reported some (it cannot hold that many) and a harvest frees them. */
	uint32_t w = (uint32_t)(tx - d->tx);
	if (unlikely(tx->out_max - (tx->head - tx->done) < want)) {
		harvest_worker(d, w);
		want = MIN(want, tx->out_max - (tx->head - tx->done));
	}
	for (uint32_t l = 0; l < want; l++)
		dist_staged_line(tx, l)->n = l < full ? HANDOFF_LINE_SLOTS : (uint8_t)part;
	/* In at most two pieces: the lines wrap at the end of the array. */
	uint32_t i = tx->head & tx->mask, first = MIN(want, tx->mask + 1 - i);
	uint32_t taken = handoff_enqueue_lines(tx->ring, tx->lines + i, first);
	if (unlikely(taken == first && want > first))
		taken += handoff_enqueue_lines(tx->ring, tx->lines, want - first);
	uint32_t k = taken == want && want > full ? tx->n_backlog : taken * HANDOFF_LINE_SLOTS;
	tx->head += taken;
	tx->n_backlog -= k;
	tx->stage = dist_staged_line(tx, tx->n_backlog / HANDOFF_LINE_SLOTS);
	if (!tx->in_flight && k)
		tx->last_return_ticks = 0; /* idle time counts from here (due: stamp_due) */
	tx->in_flight += k;
	return k;
}

/* The ordered and parallel counters, only after they changed: the atomic
 * path pays one test per call for them. */
static __attribute__((noinline)) void publish_typed(struct dist *d)
{
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct dist_tx *tx = &d->tx[w];
		PUB(tx->pub.ordered, tx->st.ordered);
		PUB(tx->pub.parallel, tx->st.parallel);
	}
	PUB(d->pub_released, d->win.released);
	PUB(d->pub_gaps, d->win.gaps);
	PUB(d->pub_unordered, d->win.unordered);
	PUB(d->pub_window_used, d->win.next - d->win.head);
	d->typed_stats = d->win.next != d->win.head || d->win.n_loose; /* until the window is empty */
}

static uint32_t publish_all(struct dist *d)
{
	uint32_t n = 0;
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct dist_tx *tx = &d->tx[w];
		if (tx->n_backlog) /* one line in flight: inlined, every call publishes there */
			n += tx->one_line ? publish_one_line(d, tx, true) : publish(d, tx, true);
		PUB(tx->pub.handed, tx->st.handed);
		PUB(tx->pub.matched, tx->st.matched);
		PUB(tx->pub.returned, tx->st.returned);
		PUB(tx->pub.migrations, tx->st.migrations);
		PUB(tx->pub.drops, tx->st.drops);
		PUB(tx->pub.in_flight, tx->in_flight);
		PUB(tx->pub.backlog, tx->n_backlog);
		PUB(tx->pub.flows, tx->flows);
		PUB(tx->pub_last_return_ticks, tx->last_return_ticks);
	}
	if (unlikely(d->drops_changed)) {
		for (uint32_t r = 0; r < DIST_N_DROP; r++)
			PUB(d->pub_drops[r], d->drops[r]);
		d->drops_changed = false;
	}
	PUB(d->pub_bad_returns, d->bad_returns);
	if (unlikely(d->typed_stats))
		publish_typed(d);
	return n;
}

/* ---- assignment ---- */

/* The worker with the fewest packets not yet complete (backlog included)
 * that has backlog room; ties go round the workers from the cursor. Returns
 * its index + 1, or 0 when every worker is full. */
static inline uint32_t least_loaded(struct dist *d)
{
	if (d->n_workers == 1) /* nothing to compare */
		return d->tx[0].n_backlog < d->cfg.backlog || publish(d, &d->tx[0], false);
	uint32_t best = 0, best_load = UINT32_MAX, w = d->cursor;
	for (uint32_t i = 0; i < d->n_workers; i++) {
		struct dist_tx *tx = &d->tx[w];
		uint32_t load = tx->in_flight + tx->n_backlog;
		if (load < best_load && (tx->n_backlog < d->cfg.backlog || publish(d, tx, false))) {
			best = w + 1;
			best_load = load;
		}
		if (++w == d->n_workers)
			w = 0;
	}
	return best;
}

/* Stage one packet for worker w1 - 1; false when its backlog is full and
 * its ring takes no whole line. */
static inline bool stage(struct dist *d, uint32_t w1, uint32_t bi, uint16_t tag)
{
	struct dist_tx *tx = &d->tx[w1 - 1];
	uint32_t n = tx->n_backlog;
	if (unlikely(n == d->cfg.backlog)) {
		if (!publish(d, tx, false))
			return false;
		n = tx->n_backlog;
	}
	/* Straight into the line it will be published in; the counts from
	 * locals, stored after the slots (which could alias them). */
	uint32_t s = n % HANDOFF_LINE_SLOTS;
	struct handoff_line *l = tx->stage;
	l->bi[s] = bi;
	l->tag[s] = tag;
	tx->n_backlog = n + 1;
	tx->st.handed++;
	if (s == HANDOFF_LINE_SLOTS - 1)
		tx->stage = dist_staged_line(tx, (n + 1) / HANDOFF_LINE_SLOTS);
	return true;
}

/* One whole staged line from 8 packets: their indices, and their tags as
 * (tag & keep) | set (set: the type bits of a parallel line). Two stores
 * of indices and one of tags where the per-packet staging costs ~6
 * instructions a packet (callgrind, bench/sched). */
static inline void stage_line8(struct handoff_line *l, const uint32_t *bi, const uint16_t *tags, uint16_t keep,
			       uint16_t set)
{
#ifdef __SSE2__
	_mm_storeu_si128((__m128i *)(void *)l->bi, _mm_loadu_si128((const __m128i *)(const void *)bi));
	_mm_storeu_si128((__m128i *)(void *)(l->bi + 4), _mm_loadu_si128((const __m128i *)(const void *)(bi + 4)));
	__m128i t = _mm_and_si128(_mm_loadu_si128((const __m128i *)(const void *)tags), _mm_set1_epi16((short)keep));
	_mm_storeu_si128((__m128i *)(void *)l->tag, _mm_or_si128(t, _mm_set1_epi16((short)set)));
#else
	memcpy(l->bi, bi, sizeof(l->bi));
	for (uint32_t i = 0; i < HANDOFF_LINE_SLOTS; i++)
		l->tag[i] = (uint16_t)((tags[i] & keep) | set);
#endif
}

/* Stage 8 packets for worker tx at once; the caller has made sure its
 * backlog has room for 8. A backlog that ends on a line boundary (the
 * usual case: whole chunks in, whole lines out) takes them as one line;
 * otherwise they fill the current line's end and the next one's start.
 * `flags` (DIST_LINE_*) go on every line they land in, `whole` as well on
 * a line they fill alone. */
static inline __attribute__((always_inline)) void stage8(struct dist_tx *tx, const uint32_t *bi,
							 const uint16_t *tags, uint16_t keep, uint16_t set,
							 uint8_t flags, uint8_t whole)
{
	uint32_t nb = tx->n_backlog, s = nb % HANDOFF_LINE_SLOTS;
	struct handoff_line *l = tx->stage, *next = dist_staged_line(tx, nb / HANDOFF_LINE_SLOTS + 1);
	if (likely(s == 0)) {
		stage_line8(l, bi, tags, keep, set);
		flags |= whole;
	} else {
		for (uint32_t i = 0; i < HANDOFF_LINE_SLOTS; i++) {
			struct handoff_line *to = s + i < HANDOFF_LINE_SLOTS ? l : next;
			to->bi[(s + i) % HANDOFF_LINE_SLOTS] = bi[i];
			to->tag[(s + i) % HANDOFF_LINE_SLOTS] = (uint16_t)((tags[i] & keep) | set);
		}
		if (flags)
			next->flags |= flags;
	}
	if (flags)
		l->flags |= flags;
	tx->stage = next;
	tx->n_backlog = nb + HANDOFF_LINE_SLOTS;
	tx->st.handed += HANDOFF_LINE_SLOTS;
}

/* Lanes of a match whose flow a worker owned: the nonzero bytes of
 * owner[], counted without a loop. */
static inline uint32_t match_owned(const struct dist_match *m)
{
	uint64_t x;
	memcpy(&x, m->owner, sizeof(x));
	uint64_t hi = (((x & 0x7f7f7f7f7f7f7f7full) + 0x7f7f7f7f7f7f7f7full) | x) & 0x8080808080808080ull;
	return (uint32_t)(((hi >> 7) * 0x0101010101010101ull) >> 56);
}

/* Whether the 8 bytes at p all equal v. */
static inline bool all8(const uint8_t *p, uint8_t v)
{
	uint64_t x;
	memcpy(&x, p, sizeof(x));
	return x == v * 0x0101010101010101ull;
}

/* An ordered or parallel packet: to the least-loaded worker, no flow-table
 * entry; an ordered one also takes the next sequence number. Returns the
 * worker index + 1, or 0 with the drop reason in *why. */
static uint32_t spread(struct dist *d, uint32_t bi, uint16_t tag, uint8_t type, uint8_t *why)
{
	struct dist_window *win = &d->win;
	bool ordered = type == SCHED_TYPE_ORDERED;
	uint16_t t = (uint16_t)(DIST_TAG_SPREAD | (tag & DIST_SEQ_MASK));
	if (ordered) {
		*why = DIST_DROP_WINDOW_FULL;
		if (win->next - win->head == win->size)
			return 0;
		t = (uint16_t)(DIST_TAG_SPREAD | DIST_TAG_ORDERED | (win->next & DIST_SEQ_MASK));
	}
	*why = DIST_DROP_SPREAD_FULL;
	uint32_t w1 = least_loaded(d);
	if (!w1 || !stage(d, w1, bi, t))
		return 0;
	struct dist_tx *tx = &d->tx[w1 - 1];
	dist_staged_line(tx, (tx->n_backlog - 1) / HANDOFF_LINE_SLOTS)->flags |=
		ordered ? DIST_LINE_SPREAD | DIST_LINE_ORDERED : DIST_LINE_SPREAD;
	tx->spread_in_flight++;
	d->typed_stats = true;
	if (ordered) {
		struct dist_slot *sl = &win->slot[win->next & win->mask];
		sl->bi = BUFFER_INVALID;
		sl->seq = t & DIST_SEQ_MASK;
		sl->state = DIST_SLOT_ISSUED;
		win->next++;
		tx->st.ordered++;
	} else {
		tx->st.parallel++;
	}
	return w1;
}

/* A full chunk of parallel packets: one line to the least-loaded worker
 * (no flow-table entry, no sequence number), where the per-packet loop
 * would choose for each. Returns false, having changed nothing, when that
 * worker's backlog has no room for 8. */
static inline bool assign_parallel8(struct dist *d, const uint32_t *bi, const uint16_t *tags, uint8_t *assigned)
{
	uint32_t w1 = least_loaded(d);
	if (!w1 || d->tx[w1 - 1].n_backlog + HANDOFF_LINE_SLOTS > d->cfg.backlog)
		return false;
	struct dist_tx *tx = &d->tx[w1 - 1];
	stage8(tx, bi, tags, DIST_SEQ_MASK, DIST_TAG_SPREAD, DIST_LINE_SPREAD, DIST_LINE_PARALLEL);
	tx->spread_in_flight += HANDOFF_LINE_SLOTS;
	tx->st.parallel += HANDOFF_LINE_SLOTS;
	d->typed_stats = true;
	if (assigned)
		memset(assigned, (int)w1, HANDOFF_LINE_SLOTS);
	return true;
}

/* The packets, 8 at a time through the matcher. Inlined twice: with types
 * NULL the compiler drops every test of a type, so the atomic path costs
 * what it did before types existed. A lane of another type may share a
 * chunk with an atomic one of the same tag: it changes no table entry, so
 * the atomic lane's fallback (reading the table) stays right. */
static inline __attribute__((always_inline)) uint32_t assign(struct dist *d, const uint32_t *bi,
							     const uint16_t *tags, const uint8_t *types, uint32_t n,
							     uint32_t *dropped, uint8_t *reason, uint8_t *assigned)
{
	uint32_t n_drop = 0;
	for (uint32_t c = 0; c < n; c += 8) {
		uint32_t k = MIN(8u, n - c);
		const uint16_t *chunk = tags + c;
		alignas(16) uint16_t last[8] = { 0 };
		if (unlikely(k < 8)) { /* the matcher reads 8 lanes */
			memcpy(last, chunk, k * sizeof(uint16_t));
			chunk = last;
		}
		if (k == HANDOFF_LINE_SLOTS && types && all8(types + c, SCHED_TYPE_PARALLEL) &&
		    assign_parallel8(d, bi + c, chunk, assigned ? assigned + c : NULL))
			goto next_chunk;
		struct dist_match m;
		dist_match_vector(d->table, chunk, &m);
		for (uint32_t i = 0; i < k; i++) {
			uint16_t tag = chunk[i] & HANDOFF_TAG_MASK;
			uint8_t why;
			uint32_t w1;
			if (types && types[c + i] != SCHED_TYPE_ATOMIC) {
				w1 = spread(d, bi[c + i], tag, types[c + i], &why);
				if (w1)
					goto placed;
				goto drop;
			}
			uint32_t *e = &d->table[tag];
			w1 = m.owner[i];
			/* An earlier lane of this chunk may have opened the flow. */
			if (!w1 && m.lead[i] != i)
				w1 = DIST_E_OWNER(*e);
			why = DIST_DROP_WORKER_FULL;
			if (likely(w1)) {
				if (likely(stage(d, w1, bi[c + i], tag))) {
					(*e)++;
					d->tx[w1 - 1].st.matched += m.owner[i] != 0;
					goto placed;
				}
				d->tx[w1 - 1].st.drops++;
			} else {
				w1 = least_loaded(d);
				why = DIST_DROP_ALL_FULL;
				if (w1 && stage(d, w1, bi[c + i], tag)) {
					struct dist_tx *tx = &d->tx[w1 - 1];
					uint32_t last = DIST_E_LAST(*e);
					if (last != w1 && last) /* a branch: the sum cost 7 instructions */
						tx->st.migrations++;
					tx->flows++;
					*e = w1 << 24 | w1 << 16 | 1;
					goto placed;
				}
			}
drop:			/* The flow keeps whatever it owned. */
			d->drops[why]++;
			d->drops_changed = true;
			dropped[n_drop] = bi[c + i];
			reason[n_drop++] = why;
			w1 = 0;
placed:
			if (assigned)
				assigned[c + i] = (uint8_t)w1;
		}
next_chunk:
		if (++d->cursor >= d->n_workers)
			d->cursor = 0;
	}
	return n_drop;
}

/* Atomic packets for a distributor of one worker, whole chunks of 8 while
 * its backlog has room for all 8 (the rest, and anything short, goes
 * through assign). Every packet goes to the one worker whoever owns its
 * flow, so nothing is chosen, refused or migrated: per packet, a slot of
 * the line and the flow's count; per chunk, the counters. The matcher
 * still says which flows were owned before the chunk (the `matched`
 * counter, as assign counts it). The daemon with one worker and DPDK's
 * depth (one line a call) both run it; more workers take assign. */
static inline uint32_t assign_one_worker(struct dist *d, const uint32_t *bi, const uint16_t *tags, uint32_t n,
					 uint32_t *dropped, uint8_t *reason)
{
	struct dist_tx *tx = &d->tx[0];
	uint32_t c = 0;
	for (; c + HANDOFF_LINE_SLOTS <= n; c += HANDOFF_LINE_SLOTS) {
		/* A full backlog is published first, as stage() would. */
		if (tx->n_backlog + HANDOFF_LINE_SLOTS > d->cfg.backlog &&
		    (!publish(d, tx, false) || tx->n_backlog + HANDOFF_LINE_SLOTS > d->cfg.backlog))
			break;
		struct dist_match m;
		dist_match_vector(d->table, tags + c, &m);
		stage8(tx, bi + c, tags + c, HANDOFF_TAG_MASK, 0, 0, 0);
		uint32_t opened = 0;
		for (uint32_t i = 0; i < HANDOFF_LINE_SLOTS; i++) {
			uint32_t *e = &d->table[tags[c + i] & HANDOFF_TAG_MASK];
			uint32_t v = *e;
			if (v & DIST_E_COUNT_MASK) {
				*e = v + 1;
			} else {
				*e = 1u << 24 | 1u << 16 | 1; /* owner and last owner: worker 0 */
				opened++;
			}
		}
		tx->st.matched += match_owned(&m);
		tx->flows += opened;
	}
	return c < n ? assign(d, bi + c, tags + c, NULL, n - c, dropped, reason, NULL) : 0;
}

/* The typed copy, out of line: the atomic one keeps dist_process to itself. */
static __attribute__((noinline)) uint32_t assign_typed(struct dist *d, const uint32_t *bi, const uint16_t *tags,
						       const uint8_t *types, uint32_t n, uint32_t *dropped,
						       uint8_t *reason, uint8_t *assigned)
{
	return assign(d, bi, tags, types, n, dropped, reason, assigned);
}

/* Atomic packets with assigned[] (a traced frame), out of line too: the
 * copy inlined in dist_process writes no assigned[] and tests for none. */
static __attribute__((noinline)) uint32_t assign_traced(struct dist *d, const uint32_t *bi, const uint16_t *tags,
							uint32_t n, uint32_t *dropped, uint8_t *reason,
							uint8_t *assigned)
{
	return assign(d, bi, tags, NULL, n, dropped, reason, assigned);
}

/* Whether types[0..n) holds anything but SCHED_TYPE_ATOMIC (0), 8 at a time. */
static bool any_typed(const uint8_t *types, uint32_t n)
{
	uint64_t or = 0;
	uint32_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t v;
		memcpy(&v, types + i, sizeof(v));
		or |= v;
	}
	for (; i < n; i++)
		or |= types[i];
	return or != 0;
}

uint32_t dist_process(struct dist *d, const uint32_t *bi, const uint16_t *tags, const uint8_t *types, uint32_t n,
		      uint32_t *dropped, uint8_t *reason, uint8_t *assigned)
{
	bool typed = types && any_typed(types, n);
	uint32_t n_drop = 0, off = 0;
	/* In pieces of at most DIST_WORKER_BATCH, each after a harvest: one
	 * piece publishes at most DIST_WORKER_BATCH_LINES + 1 lines to a
	 * worker, so the lines out stay below what dist_create sized them
	 * for and publish never has to harvest in the middle of an assign
	 * (which would leave the matcher's owners stale). */
	do {
		uint32_t k = MIN(n - off, (uint32_t)DIST_WORKER_BATCH);
		harvest(d);
		if (unlikely(typed))
			n_drop += assign_typed(d, bi + off, tags + off, types + off, k, dropped + n_drop, reason + n_drop,
					       assigned ? assigned + off : NULL);
		else if (unlikely(assigned != NULL))
			n_drop += assign_traced(d, bi + off, tags + off, k, dropped + n_drop, reason + n_drop,
						assigned + off);
		else if (d->n_workers == 1 && !d->cfg.match_always)
			n_drop += assign_one_worker(d, bi + off, tags + off, k, dropped + n_drop, reason + n_drop);
		else
			n_drop += assign(d, bi + off, tags + off, NULL, k, dropped + n_drop, reason + n_drop, NULL);
		off += k;
	} while (off < n);
	clock_tick(d);
	publish_all(d);
	return n - n_drop;
}

/* ---- the distributor thread's other calls, and shutdown ---- */

uint32_t dist_flush(struct dist *d)
{
	/* At one line in flight (ring_lines 1) a caller flushes to wait for
	 * the worker to take its line: a staged line goes out first, as soon
	 * as the worker's consumer index shows the ring empty, before the
	 * worker's completion count is read (one more cache-line miss on the
	 * round trip's path). publish reads no flow-table entry, so the order
	 * changes nothing else. */
	uint32_t n = 0;
	bool staged = false;
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct dist_tx *tx = &d->tx[w];
		if (tx->one_line && tx->n_backlog)
			n += publish(d, tx, true);
		else
			staged |= tx->n_backlog != 0;
	}
	n += harvest(d);
	clock_tick(d);
	/* Nothing moved, no ring's backlog to publish and no ordered counter
	 * changed (dist_ordered_take's): the statistics are what the last
	 * call copied, and a caller that polls (a distributor waiting for its
	 * worker) spins on the two looks above alone. */
	if (!n && !staged && !d->typed_stats)
		return 0;
	return n + publish_all(d);
}

bool dist_idle(const struct dist *d)
{
	/* Completions kick nobody (a worker only counts them): while a
	 * worker holds packets, this thread stays up to harvest them. */
	for (uint32_t w = 0; w < d->n_workers; w++)
		if (d->tx[w].n_backlog || d->tx[w].in_flight)
			return false;
	return d->win.next == d->win.head && !d->win.n_loose;
}

uint64_t dist_outstanding(const struct dist *d)
{
	uint64_t n = 0;
	for (uint32_t w = 0; w < d->n_workers; w++)
		n += d->tx[w].in_flight + d->tx[w].n_backlog;
	return n + (d->win.next - d->win.head) + d->win.n_loose;
}

uint32_t dist_room(const struct dist *d, uint32_t w)
{
	return w < d->n_workers ? d->cfg.backlog - d->tx[w].n_backlog : 0;
}

uint32_t dist_flow_owner(const struct dist *d, uint16_t tag)
{
	return DIST_E_OWNER(d->table[tag & HANDOFF_TAG_MASK]);
}

uint32_t dist_flows_owned(const struct dist *d)
{
	uint32_t n = 0;
	for (uint32_t w = 0; w < d->n_workers; w++)
		n += d->tx[w].flows;
	return n;
}

/* Worker w's count as reclaim sets it (the worker is gone): where the
 * worker's reports go. */
static void dist_post_done(struct dist_rx *rx, uint32_t done)
{
	if (rx->one_line)
		handoff_mailbox_post(rx->ring, done);
	__atomic_store_n(&rx->done_lines, done, __ATOMIC_RELAXED);
}

uint32_t dist_reclaim(struct dist *d, uint32_t *bi, uint32_t max)
{
	uint32_t got = 0;
	/* What each worker handed back goes into the window first (the worker
	 * is gone: this thread may take its staged line), then what it took
	 * is done, reported or not. */
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct dist_rx *rx = &d->rx[w];
		dist_window_drain(d, w);
		for (uint32_t s = 0; s < rx->ret_line.n; s++)
			dist_window_place(d, rx->ret_line.bi[s], rx->ret_line.tag[s]);
		rx->ret_line.n = 0;
		dist_post_done(rx, rx->done_lines + rx->n_held);
		rx->n_held = 0;
	}
	harvest(d);
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct dist_tx *tx = &d->tx[w];
		/* What is left out is what its ring holds: each packet gives its
		 * tag back (from the copies, as a completion, not counted as
		 * returned), then the ring is taken, oldest first (the worker is
		 * gone, so this thread may consume), then the backlog. */
		if (tx->done != tx->head) {
			uint64_t returned = tx->st.returned;
			release_sent(d, w, tx->head);
			tx->st.returned = returned;
			/* The count agrees again: nothing is out. */
			dist_post_done(&d->rx[w], tx->head);
		}
		uint32_t k;
		while ((k = handoff_dequeue(tx->ring, bi + got, NULL, MIN(max - got, (uint32_t)DIST_WORKER_BATCH))) != 0)
			got += k;
		k = MIN(max - got, tx->n_backlog);
		for (uint32_t i = 0; i < k; i++) {
			const struct handoff_line *l = dist_staged_line(tx, i / HANDOFF_LINE_SLOTS);
			release_one(d, tx, w + 1, l->tag[i % HANDOFF_LINE_SLOTS]);
			bi[got + i] = l->bi[i % HANDOFF_LINE_SLOTS];
		}
		/* The rest to the front, slot by slot (shutdown only); a moved
		 * line keeps the slow path on completion, and the lines emptied
		 * are unflagged for their next use. */
		uint32_t lines_before = (tx->n_backlog + HANDOFF_LINE_SLOTS - 1) / HANDOFF_LINE_SLOTS;
		for (uint32_t i = k; i < tx->n_backlog; i++) {
			const struct handoff_line *from = dist_staged_line(tx, i / HANDOFF_LINE_SLOTS);
			struct handoff_line *to = dist_staged_line(tx, (i - k) / HANDOFF_LINE_SLOTS);
			to->bi[(i - k) % HANDOFF_LINE_SLOTS] = from->bi[i % HANDOFF_LINE_SLOTS];
			to->tag[(i - k) % HANDOFF_LINE_SLOTS] = from->tag[i % HANDOFF_LINE_SLOTS];
			to->flags = (uint8_t)((to->flags | from->flags) & ~DIST_LINE_PARALLEL);
		}
		tx->n_backlog -= k;
		for (uint32_t l = (tx->n_backlog + HANDOFF_LINE_SLOTS - 1) / HANDOFF_LINE_SLOTS; l < lines_before; l++)
			dist_staged_line(tx, l)->flags = 0;
		tx->stage = dist_staged_line(tx, tx->n_backlog / HANDOFF_LINE_SLOTS);
		got += k;
	}
	/* Every batch is complete now: the window releases all it holds. */
	got += dist_window_take(d, bi + got, max - got, false);
	d->drops[DIST_DROP_SHUTDOWN] += got;
	d->drops_changed = true;
	publish_all(d);
	return got;
}

