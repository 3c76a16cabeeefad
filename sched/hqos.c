/* The hierarchy (hqos.h): subscribers in two deficit-round-robin lists
 * (green; green and yellow) and on a timing wheel of release times, eight strict
 * priority queues each, CoDel per queue; the match tables that select a
 * subscriber per packet. Everything indexed by subscriber id, so the
 * arrays may grow at the barrier without dangling pointers.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/hqos_private.h"

/* ---- queues ---- */

static inline void q_push(struct hq_queue *q, uint32_t bi, uint32_t len)
{
	uint32_t *l = hq_link(bi);
	l[0] = NIL;
	l[1] = 0;
	if (q->n) {
		l = hq_link(q->tail);
		l[0] = bi;
		l[1] = len;
	} else {
		q->head = bi;
		q->head_len = len;
	}
	q->tail = bi;
	q->n++;
	q->bytes += len;
}

/* The head (NIL when empty) and its length in *len. */
static inline uint32_t q_pop(struct hq_queue *q, uint32_t *len)
{
	if (!q->n)
		return NIL;
	uint32_t bi = q->head;
	const uint32_t *l = hq_link(bi);
	*len = q->head_len;
	q->bytes -= q->head_len;
	q->head = l[0];
	q->head_len = l[1];
	q->n--;
	return bi;
}

/* ---- lists (L_GREEN, L_BORROW) ---- */

static void list_push(struct hqos *h, uint32_t w, uint32_t id)
{
	struct hq_list *l = &h->list[w];
	struct hq_sub *s = &h->sub[id];
	s->lk[w][0] = l->tail;
	s->lk[w][1] = NIL;
	if (l->n)
		h->sub[l->tail].lk[w][1] = id;
	else
		l->head = id;
	l->tail = id;
	l->n++;
}

static void list_del(struct hqos *h, uint32_t w, uint32_t id)
{
	struct hq_list *l = &h->list[w];
	struct hq_sub *s = &h->sub[id];
	uint32_t prev = s->lk[w][0], next = s->lk[w][1];
	if (prev != NIL)
		h->sub[prev].lk[w][1] = next;
	else
		l->head = next;
	if (next != NIL)
		h->sub[next].lk[w][0] = prev;
	else
		l->tail = prev;
	l->n--;
}

/* Bit w: a subscriber in that state is in list w. */
static inline uint32_t lists_of(uint8_t state)
{
	return state == ST_GREEN ? 3u : state == ST_YELLOW ? 1u << L_BORROW : 0;
}

static void lists_move(struct hqos *h, uint32_t id, uint8_t from, uint8_t to)
{
	uint32_t was = lists_of(from), now = lists_of(to);
	for (uint32_t w = 0; w < 2; w++) {
		if ((was & ~now) >> w & 1)
			list_del(h, w, id);
		if ((now & ~was) >> w & 1)
			list_push(h, w, id);
	}
}

/* ---- the wheel ----
 *
 * Slot i holds the subscribers whose wake time falls in absolute slot
 * cur .. cur + WHEEL_SLOTS - 1 with that index; one further out is parked
 * in the last slot and put back when reached. wmin[i] is an early bound
 * of the slot's wake times (exact until an entry leaves), so the first
 * non-empty slot after cur gives the next wake time in O(1) words. */

static void wbit_set(struct hqos *h, uint32_t i)
{
	h->wbits[i / 64] |= 1ull << (i % 64);
	h->wsum[i / 4096] |= 1ull << (i / 64 % 64);
}

static void wbit_clear(struct hqos *h, uint32_t i)
{
	h->wbits[i / 64] &= ~(1ull << (i % 64));
	if (!h->wbits[i / 64])
		h->wsum[i / 4096] &= ~(1ull << (i / 64 % 64));
}

/* The first non-empty slot index >= from (no wrap), or NIL. */
static uint32_t wfind(const struct hqos *h, uint32_t from)
{
	uint32_t w = from / 64;
	uint64_t bits = h->wbits[w] & (~0ull << (from % 64));
	if (bits)
		return w * 64 + (uint32_t)__builtin_ctzll(bits);
	for (uint32_t nw = w + 1; nw < WHEEL_WORDS;) {
		uint32_t sw = nw / 64;
		uint64_t m = h->wsum[sw] & (~0ull << (nw % 64));
		if (m) {
			uint32_t ww = sw * 64 + (uint32_t)__builtin_ctzll(m);
			return ww * 64 + (uint32_t)__builtin_ctzll(h->wbits[ww]);
		}
		nw = (sw + 1) * 64;
	}
	return NIL;
}

/* The first non-empty slot from cur on, in wheel order, or NIL. */
static uint32_t wfirst(const struct hqos *h)
{
	if (!h->n_wheel)
		return NIL;
	uint32_t at = (uint32_t)(h->cur & WHEEL_MASK);
	uint32_t i = wfind(h, at);
	return i != NIL ? i : wfind(h, 0);
}

static void wheel_del(struct hqos *h, uint32_t id)
{
	struct hq_sub *s = &h->sub[id];
	uint32_t i = s->wslot;
	if (i == NIL)
		return;
	if (s->wprev != NIL)
		h->sub[s->wprev].wnext = s->wnext;
	else
		h->whead[i] = s->wnext;
	if (s->wnext != NIL)
		h->sub[s->wnext].wprev = s->wprev;
	if (h->whead[i] == NIL) {
		wbit_clear(h, i);
		h->wmin[i] = UINT64_MAX;
	}
	s->wslot = NIL;
	h->n_wheel--;
}

static void wheel_add(struct hqos *h, uint32_t id, uint64_t t)
{
	struct hq_sub *s = &h->sub[id];
	uint64_t abs = t >> WHEEL_SHIFT, bound = t;
	if (abs < h->cur)
		abs = h->cur;
	if (abs >= h->cur + WHEEL_SLOTS) { /* parked: the slot's end stands for it */
		abs = h->cur + WHEEL_SLOTS - 1;
		bound = ((abs + 1) << WHEEL_SHIFT) - 1;
	}
	uint32_t i = (uint32_t)(abs & WHEEL_MASK);
	s->wake_ns = t;
	s->wslot = i;
	s->wprev = NIL;
	s->wnext = h->whead[i];
	if (s->wnext != NIL)
		h->sub[s->wnext].wprev = id;
	h->whead[i] = id;
	if (bound < h->wmin[i])
		h->wmin[i] = bound;
	wbit_set(h, i);
	h->n_wheel++;
}

/* ---- buckets ---- */

static int64_t bucket_add(int64_t tok, int64_t cap, uint64_t dt, uint64_t rate)
{
	if (!rate || tok >= cap)
		return tok;
	uint64_t room = (uint64_t)(cap - tok);
	return dt > room / rate ? cap : tok + (int64_t)(dt * rate);
}

static void sub_refill(struct hq_sub *s, uint64_t now)
{
	if (now <= s->last_ns)
		return;
	uint64_t dt = now - s->last_ns;
	s->last_ns = now;
	s->tokens = bucket_add(s->tokens, s->cap, dt, s->rate);
	if (s->ceil != s->rate && s->ceil != CEIL_NONE)
		s->ctokens = bucket_add(s->ctokens, s->cap, dt, s->ceil);
}

/* When a bucket at rate holding tok will hold need, from now. */
static uint64_t bucket_time(int64_t tok, int64_t need, uint64_t rate, uint64_t now)
{
	if (tok >= need)
		return now;
	if (!rate)
		return UINT64_MAX;
	return now + ((uint64_t)(need - tok) + rate - 1) / rate;
}

static inline uint64_t head_bytes(const struct hq_sub *s)
{
	return s->q[__builtin_ctz(s->mask)].head_len;
}

/* Green, yellow or asleep at now for the head packet (tokens as of now),
 * and for the last two the time the wheel wakes it. */
static uint8_t sub_decide(const struct hq_sub *s, uint64_t now, uint64_t *wake)
{
	int64_t full = (int64_t)(head_bytes(s) + s->overhead) * UNITS_PER_BYTE;
	int64_t need = full < s->cap ? full : s->cap;
	uint64_t t_rate = s->rate ? bucket_time(s->tokens, need, s->rate, now) : UINT64_MAX;
	uint64_t t_ceil = s->ceil == CEIL_NONE ? now
			  : s->ceil == s->rate ? t_rate
					       : bucket_time(s->ctokens, need, s->ceil, now);
	uint64_t t_green = t_rate > t_ceil ? t_rate : t_ceil;
	if (t_green <= now)
		return ST_GREEN;
	*wake = t_green;
	if (t_ceil <= now)
		return ST_YELLOW;
	*wake = t_ceil;
	return ST_ASLEEP;
}

/* Put s where its state at now says: idle (empty), a list, the wheel. */
void hqos_sub_place(struct hqos *h, uint32_t id, uint64_t now)
{
	struct hq_sub *s = &h->sub[id];
	uint64_t wake = UINT64_MAX;
	uint8_t st = ST_IDLE;
	if (s->mask) {
		sub_refill(s, now);
		st = sub_decide(s, now, &wake);
	}
	if (st != s->state) {
		lists_move(h, id, s->state, st);
		s->state = st;
	}
	if (!s->mask)
		s->deficit[L_GREEN] = s->deficit[L_BORROW] = 0;
	if (s->wslot != NIL && (wake == UINT64_MAX || wake != s->wake_ns))
		wheel_del(h, id);
	if (wake != UINT64_MAX && s->wslot == NIL)
		wheel_add(h, id, wake);
}

/* The wheel up to now. First every slot before now's, and now's own if
 * something in it is due, is taken off whole; then, with cur at now,
 * those due go to their list (or back on the wheel, as their buckets
 * say) and the rest (parked far, or later in now's slot) go back on the
 * wheel nearer. Each subscriber is touched once per wake, or once per
 * wheel turn while parked. */
static void wheel_advance(struct hqos *h, uint64_t now)
{
	uint64_t now_abs = now >> WHEEL_SHIFT;
	uint32_t pending = NIL;
	if (now_abs < h->cur)
		return;
	while (h->n_wheel) {
		uint32_t i = wfirst(h);
		uint64_t abs = h->cur + ((i - (uint32_t)(h->cur & WHEEL_MASK)) & WHEEL_MASK);
		if (abs > now_abs || (abs == now_abs && h->wmin[i] > now))
			break;
		for (uint32_t id = h->whead[i], next; id != NIL; id = next) {
			next = h->sub[id].wnext;
			h->sub[id].wslot = NIL;
			h->sub[id].wnext = pending;
			pending = id;
			h->n_wheel--;
		}
		h->whead[i] = NIL;
		h->wmin[i] = UINT64_MAX;
		wbit_clear(h, i);
	}
	h->cur = now_abs;
	for (uint32_t id = pending, next; id != NIL; id = next) {
		next = h->sub[id].wnext;
		if (h->sub[id].wake_ns <= now)
			hqos_sub_place(h, id, now);
		else
			wheel_add(h, id, h->sub[id].wake_ns);
	}
}

/* ---- the port bucket ---- */

static void port_refill(struct hqos *h, uint64_t now)
{
	if (!h->rate_bps || now <= h->last_ns)
		return;
	uint64_t dt = now - h->last_ns;
	int64_t limit = h->backlogged && h->cap < CATCH_UP_MAX ? CATCH_UP_MAX : h->cap;
	h->last_ns = now;
	__atomic_store_n(&h->tokens, bucket_add(h->tokens, limit, dt, h->rate_bps), __ATOMIC_RELAXED);
}

static inline int64_t port_need(const struct hqos *h, uint64_t bytes)
{
	int64_t full = (int64_t)(bytes + h->cfg.overhead) * UNITS_PER_BYTE;
	return full < h->cap ? full : h->cap;
}

/* ---- CoDel (RFC 8289 section 5) ---- */

static uint64_t control_law(uint64_t t, uint64_t interval, uint32_t count)
{
	return t + (uint64_t)((double)interval / sqrt((double)count));
}

/* RFC 3168 section 5: CE on an ECT(0) or ECT(1) packet; IPv4's checksum
 * updated incrementally (RFC 1624, eqn. 3). False for Not-ECT or not IP. */
static bool ecn_mark(uint32_t bi)
{
	struct buffer *b = buffer_get(bi);
	uint8_t *p = buffer_data(b);
	uint32_t len = b->current_length, off = 14;
	if (len < 18)
		return false;
	uint16_t type = (uint16_t)(p[12] << 8 | p[13]);
	if (type == 0x8100 || type == 0x88a8) {
		type = (uint16_t)(p[16] << 8 | p[17]);
		off = 18;
	}
	if (type == 0x0800 && len >= off + 20) {
		uint8_t *ip = p + off;
		if ((ip[1] & 3) == 0)
			return false;
		uint16_t old = (uint16_t)(ip[0] << 8 | ip[1]);
		uint16_t neu = (uint16_t)(old | 3);
		uint32_t sum = (uint16_t)~(ip[10] << 8 | ip[11]);
		sum += (uint16_t)~old;
		sum += neu;
		sum = (sum & 0xffff) + (sum >> 16);
		sum = (sum & 0xffff) + (sum >> 16);
		ip[1] |= 3;
		ip[10] = (uint8_t)(~sum >> 8);
		ip[11] = (uint8_t)~sum;
		return true;
	}
	if (type == 0x86dd && len >= off + 40) {
		uint8_t *ip = p + off; /* traffic class: bits 4..11; ECN its low two */
		if ((ip[1] & 0x30) == 0)
			return false;
		ip[1] |= 0x30;
		return true;
	}
	return false;
}

/* RFC 8289's dodequeue: the head and whether its sojourn has been above
 * target for an interval. */
static uint32_t codel_head(struct hq_queue *q, struct hq_codel *cd, const struct hqos_port_config *c,
			   uint64_t now, bool *ok_to_drop, uint32_t *len)
{
	*ok_to_drop = false;
	uint32_t bi = q_pop(q, len);
	if (bi == NIL) {
		cd->first_above = 0;
		return NIL;
	}
	uint64_t ts = buffer_get(bi)->timestamp_ns;
	uint64_t sojourn = now > ts ? now - ts : 0;
	if (sojourn < c->codel_target_ns || q->bytes <= CODEL_MAXPACKET)
		cd->first_above = 0;
	else if (!cd->first_above)
		cd->first_above = now + c->codel_interval_ns;
	else if (now >= cd->first_above)
		*ok_to_drop = true;
	return bi;
}

static inline bool stash(struct hqos *h, struct hq_sub *s, uint32_t bi)
{
	if (h->n_stash == HQOS_DROP_STASH)
		return false;
	h->stash[h->n_stash++] = bi;
	hq_add(&s->c.dropped_codel, 1);
	return true;
}

/* RFC 8289's dequeue: the packet to send from q[p], NIL when CoDel
 * dropped all it took. Marks instead of drops with ecn (as section 5.4
 * allows for ECN-capable packets). */
static uint32_t codel_pop(struct hqos *h, struct hq_sub *s, uint32_t p, uint64_t now, uint32_t *len)
{
	const struct hqos_port_config *c = &h->cfg;
	struct hq_queue *q = &s->q[p];
	struct hq_codel *cd = &s->codel[p];
	bool dropping = s->dropping >> p & 1, ok;
	uint32_t bi = codel_head(q, cd, c, now, &ok, len);
	if (bi == NIL) {
		dropping = false;
	} else if (dropping) {
		if (!ok)
			dropping = false;
		while (dropping && now >= cd->drop_next) {
			cd->count++;
			if (c->ecn && ecn_mark(bi)) {
				hq_add(&s->c.marked, 1);
				cd->drop_next = control_law(cd->drop_next, c->codel_interval_ns, cd->count);
				break;
			}
			if (!stash(h, s, bi)) {
				cd->count--;
				break;
			}
			bi = codel_head(q, cd, c, now, &ok, len);
			if (!ok)
				dropping = false;
			else
				cd->drop_next = control_law(cd->drop_next, c->codel_interval_ns, cd->count);
		}
	} else if (ok) {
		if (c->ecn && ecn_mark(bi))
			hq_add(&s->c.marked, 1);
		else if (stash(h, s, bi))
			bi = codel_head(q, cd, c, now, &ok, len);
		dropping = true;
		uint32_t delta = cd->count - cd->lastcount;
		cd->count = delta > 1 && (int64_t)(now - cd->drop_next) < 16 * (int64_t)c->codel_interval_ns ? delta : 1;
		cd->drop_next = control_law(now, c->codel_interval_ns, cd->count);
		cd->lastcount = cd->count;
	}
	s->dropping = (uint8_t)((s->dropping & ~(1u << p)) | (uint32_t)dropping << p);
	if (!q->n)
		s->mask &= (uint8_t)~(1u << p);
	return bi;
}

static inline uint32_t sub_pop(struct hqos *h, struct hq_sub *s, uint64_t now, uint32_t *len)
{
	uint32_t p = (uint32_t)__builtin_ctz(s->mask);
	if (h->cfg.codel)
		return codel_pop(h, s, p, now, len);
	uint32_t bi = q_pop(&s->q[p], len);
	if (!s->q[p].n)
		s->mask &= (uint8_t)~(1u << p);
	return bi;
}

/* ---- enqueue, dequeue ---- */

static uint32_t sub_backlog(const struct hq_sub *s)
{
	uint32_t n = 0;
	for (uint32_t m = s->mask; m; m &= m - 1)
		n += s->q[__builtin_ctz(m)].n;
	return n;
}

/* The port holds max-held packets and a packet for s arrives. A tail drop
 * here would let whichever subscribers' packets arrive first fill the
 * port, and one whose queue ran dry lose its turn to those that still
 * hold dozens: with thousands of subscribers, some fall well below their
 * rates. So, as FQ-CoDel does at its packet limit (RFC 8290 section 4.1),
 * the packet goes in and the head of the fattest subscriber's lowest
 * priority queue goes out, unless s is itself among the fattest. The
 * fattest is a hint kept in O(1): the longest backlog met here; an arrival
 * whose own is as long takes its place (and is the one dropped). The
 * victim in *victim; false: the arrival is dropped. */
static __attribute__((noinline)) bool push_out(struct hqos *h, uint32_t id, uint64_t now_ns, uint32_t *victim)
{
	uint32_t mine = sub_backlog(&h->sub[id]);
	struct hq_sub *f = &h->sub[h->fat];
	uint32_t theirs = h->fat != id && f->in_use ? sub_backlog(f) : 0;
	if (theirs <= mine + 1) { /* s is as fat: tail drop; s is the hint now */
		if (mine >= theirs)
			h->fat = id;
		return false;
	}
	uint32_t p = 31u - (uint32_t)__builtin_clz(f->mask), len;
	*victim = q_pop(&f->q[p], &len);
	if (!f->q[p].n)
		f->mask &= (uint8_t)~(1u << p);
	hq_add(&f->c.dropped_limit, 1);
	hqos_sub_place(h, h->fat, now_ns); /* its head may be another packet now */
	return true;
}

/* One packet into its subscriber's queue: 1 (held one more), 0 (dropped:
 * over its queue's limit, or the port full), or 2 (taken, the port full:
 * another subscriber's packet, *victim, pushed out instead). */
static inline uint32_t enqueue_one(struct hqos *h, uint32_t bi, uint32_t id, const uint8_t prio[SCHED_MAX_CLASSES],
				   uint64_t now_ns, uint64_t held, uint32_t *victim)
{
	struct buffer *b = buffer_get(bi);
	struct hq_sub *s = &h->sub[id];
	uint32_t p = prio[sched_buffer_class(b)] & (SCHED_N_PRIO - 1);
	struct hq_queue *q = &s->q[p];
	uint32_t r = 1;
	if (unlikely(q->n >= h->cfg.queue_limit || held >= h->cfg.max_held)) {
		if (q->n >= h->cfg.queue_limit || !push_out(h, id, now_ns, victim)) {
			hq_add(&s->c.dropped_limit, 1);
			return 0;
		}
		r = 2;
	}
	b->timestamp_ns = now_ns;
	q_push(q, bi, (uint32_t)hq_frame_bytes(b));
	hq_add(&s->c.enqueued, 1);
	uint8_t was = s->mask;
	s->mask |= (uint8_t)(1u << p);
	/* idle, or a new head of higher priority (another cost) */
	if (!was || (s->state == ST_ASLEEP && (1u << p) < (uint32_t)(was & -was)))
		hqos_sub_place(h, id, now_ns);
	return r;
}

#define ENQ_CHUNK HQ_CLASSIFY_MAX

/* m packets of one chunk into the queues of their subscribers ids[]. */
static inline uint32_t enqueue_chunk(struct hqos *h, const uint32_t *v, const uint32_t *ids, uint32_t m,
				     const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns, uint64_t *held,
				     uint32_t *dropped)
{
	uint32_t n_drop = 0;
	for (uint32_t i = 0; i < m; i++) {
		if (unlikely(h->sub[ids[i]].in_use == SUB_IMPAIRED)) {
			hqos_impair_in(h, ids[i], v[i], now_ns);
			continue;
		}
		uint32_t victim = NIL, r = enqueue_one(h, v[i], ids[i], prio, now_ns, *held, &victim);
		*held += r == 1;
		dropped[n_drop] = r == 2 ? victim : v[i];
		n_drop += r != 1;
	}
	return n_drop;
}

static inline void enqueue_start(struct hqos *h, const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns)
{
	if (unlikely(h->n_imp))
		memcpy(h->prio, prio, sizeof(h->prio));
	if (!h->n_wheel && (now_ns >> WHEEL_SHIFT) > h->cur)
		h->cur = now_ns >> WHEEL_SHIFT;
}

uint32_t hqos_enqueue_one(struct hqos *h, uint32_t bi, uint32_t id, uint64_t now_ns, uint32_t *victim)
{
	if (!h->n_wheel && (now_ns >> WHEEL_SHIFT) > h->cur)
		h->cur = now_ns >> WHEEL_SHIFT;
	uint32_t r = enqueue_one(h, bi, id, h->prio, now_ns, h->held, victim);
	if (r == 1)
		__atomic_store_n(&h->held, h->held + 1, __ATOMIC_RELAXED);
	return r;
}

/* In chunks: first every packet's subscriber (the match), prefetching
 * the subscriber's state, then the queues; with thousands of
 * subscribers the state is rarely in cache, and this overlaps the misses. */
uint32_t hqos_enqueue(struct hqos *h, const uint32_t *bi, uint32_t n, const uint8_t prio[SCHED_MAX_CLASSES],
		      uint64_t now_ns, uint32_t *dropped)
{
	uint32_t n_drop = 0, ids[ENQ_CHUNK];
	uint64_t held = h->held;
	enqueue_start(h, prio, now_ns);
	for (uint32_t base = 0; base < n; base += ENQ_CHUNK) {
		uint32_t m = n - base < ENQ_CHUNK ? n - base : ENQ_CHUNK;
		const uint32_t *v = bi + base;
		hqos_classify_burst(h, v, m, ids);
		n_drop += enqueue_chunk(h, v, ids, m, prio, now_ns, &held, dropped + n_drop);
	}
	__atomic_store_n(&h->held, held, __ATOMIC_RELAXED);
	return n_drop;
}

/* The same chunks, the subscribers given (an id not in use: default). */
uint32_t hqos_enqueue_ids(struct hqos *h, const uint32_t *bi, const uint32_t *given, uint32_t n,
			  const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns, uint32_t *dropped)
{
	uint32_t n_drop = 0, ids[ENQ_CHUNK];
	uint64_t held = h->held;
	enqueue_start(h, prio, now_ns);
	for (uint32_t base = 0; base < n; base += ENQ_CHUNK) {
		uint32_t m = n - base < ENQ_CHUNK ? n - base : ENQ_CHUNK;
		for (uint32_t i = 0; i < m; i++) {
			uint32_t id = given[base + i];
			if (i + 8 < m)
				__builtin_prefetch(buffer_get(bi[base + i + 8]));
			__builtin_prefetch((const char *)&h->sub[id < h->n_alloc ? id : 0] + 64);
			ids[i] = id < h->n_alloc && h->sub[id].in_use ? id : HQOS_DEFAULT_ID;
		}
		n_drop += enqueue_chunk(h, bi + base, ids, m, prio, now_ns, &held, dropped + n_drop);
	}
	__atomic_store_n(&h->held, held, __ATOMIC_RELAXED);
	return n_drop;
}

/* The subscriber to serve next and the list it is served from: deficit
 * round robin by weight in the green list, else in the borrowing one;
 * NIL when both are empty. A visit adds weight x QUANTUM_UNIT, at least
 * one frame, so the loop ends. */
static uint32_t pick(struct hqos *h, uint32_t *which)
{
	for (;;) {
		uint32_t w = h->list[L_GREEN].n ? L_GREEN : L_BORROW;
		struct hq_list *l = &h->list[w];
		if (!l->n)
			return NIL;
		uint32_t id = l->head;
		struct hq_sub *s = &h->sub[id];
		*which = w;
		uint32_t nx = s->lk[w][1];
		if (nx != NIL) { /* a pipeline: the next one's head packet, the one after's state */
			const struct hq_sub *ns = &h->sub[nx];
			if (ns->mask)
				__builtin_prefetch(buffer_get(ns->q[__builtin_ctz(ns->mask)].head));
			if (ns->lk[w][1] != NIL)
				__builtin_prefetch(&h->sub[ns->lk[w][1]]);
		}
		if (s->deficit[w] >= (int32_t)(head_bytes(s) + s->overhead))
			return id;
		s->deficit[w] += (int32_t)s->quantum;
		if (l->n > 1) {
			list_del(h, w, id);
			list_push(h, w, id);
		}
	}
}

uint32_t hqos_dequeue(struct hqos *h, uint64_t now_ns, uint32_t *out, uint32_t max)
{
	uint32_t n = 0, gone = 0;
	bool blocked = false;
	h->run_ns = now_ns;
	if (unlikely(h->n_imp))
		hqos_impair_release(h, now_ns);
	wheel_advance(h, now_ns);
	port_refill(h, now_ns);
	while (n < max && h->n_stash < HQOS_DROP_STASH) {
		uint32_t w;
		uint32_t id = pick(h, &w);
		if (id == NIL)
			break;
		struct hq_sub *s = &h->sub[id];
		uint64_t bytes = head_bytes(s);
		if (h->rate_bps && h->tokens < port_need(h, bytes)) {
			blocked = true;
			break;
		}
		uint32_t before = h->n_stash, len;
		uint32_t bi = sub_pop(h, s, now_ns, &len);
		gone += h->n_stash - before;
		if (s->mask) /* its next packet, most likely the next one out */
			__builtin_prefetch(buffer_get(s->q[__builtin_ctz(s->mask)].head));
		if (bi != NIL) {
			bytes = len;
			int64_t cost = (int64_t)(bytes + s->overhead) * UNITS_PER_BYTE;
			if (h->rate_bps)
				__atomic_store_n(&h->tokens, h->tokens - (int64_t)(bytes + h->cfg.overhead) * UNITS_PER_BYTE,
						 __ATOMIC_RELAXED);
			/* Borrowed bytes cost the ceil bucket only (as HTB's
			 * charge: a class's own tokens pay for what it sends
			 * at its own level) */
			if (w == L_GREEN)
				s->tokens -= cost;
			if (s->ceil != s->rate && s->ceil != CEIL_NONE)
				s->ctokens -= cost;
			s->deficit[w] -= (int32_t)(bytes + s->overhead);
			hq_add(&s->c.departed_packets, 1);
			hq_add(&s->c.departed_bytes, bytes);
			out[n++] = bi;
			gone++;
		}
		hqos_sub_place(h, id, now_ns);
	}
	/* Credit past the port's burst only while packets wait for the port
	 * itself (a late run then catches up, as the egress shaper does);
	 * subscribers waiting for their own tokens do not count. */
	h->backlogged = blocked || (n == max && h->list[L_BORROW].n);
	if (!h->backlogged && h->tokens > h->cap)
		__atomic_store_n(&h->tokens, h->cap, __ATOMIC_RELAXED);
	__atomic_store_n(&h->held, h->held - gone, __ATOMIC_RELAXED);
	return n;
}

uint32_t hqos_take_drops(struct hqos *h, uint32_t *out, uint32_t max)
{
	uint32_t n = h->n_stash < max ? h->n_stash : max;
	memcpy(out, h->stash, n * sizeof(*out));
	memmove(h->stash, h->stash + n, (h->n_stash - n) * sizeof(*out));
	h->n_stash -= n;
	return n;
}

uint64_t hqos_next_ns(const struct hqos *h)
{
	uint64_t next = UINT64_MAX;
	if (h->n_stash)
		return h->run_ns;
	const struct hq_list *l = &h->list[h->list[L_GREEN].n ? L_GREEN : L_BORROW];
	if (l->n) {
		next = h->rate_bps ? h->last_ns : h->run_ns;
		int64_t need = port_need(h, head_bytes(&h->sub[l->head]));
		if (h->rate_bps && h->tokens < need)
			next += ((uint64_t)(need - h->tokens) + h->rate_bps - 1) / h->rate_bps;
	}
	uint32_t i = wfirst(h);
	if (i != NIL && h->wmin[i] < next)
		next = h->wmin[i];
	if (unlikely(h->n_imp)) {
		uint64_t t = hqos_impair_next_ns(h);
		next = t < next ? t : next;
	}
	return next;
}

/* ---- flush, counts ---- */

uint32_t hqos_flush(struct hqos *h, uint32_t *out, uint32_t max)
{
	uint32_t n = hqos_take_drops(h, out, max);
	for (uint32_t id = 0; id < h->n_alloc && n < max; id++) {
		struct hq_sub *s = &h->sub[id];
		while (s->mask && n < max) {
			uint32_t p = (uint32_t)__builtin_ctz(s->mask);
			uint32_t len;
			out[n++] = q_pop(&s->q[p], &len);
			if (!s->q[p].n)
				s->mask &= (uint8_t)~(1u << p);
		}
		if (s->in_use)
			hqos_sub_place(h, id, h->last_ns);
	}
	__atomic_store_n(&h->held, h->held - n, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < h->n_imp && n < max; i++)
		while (n < max && sched_impair_held(h->imp[i].m))
			n += sched_impair_flush(h->imp[i].m, out + n, max - n);
	if (n < max)
		n += hqos_take_impair_drops(h, out + n, max - n);
	return n;
}

uint64_t hqos_held(const struct hqos *h)
{
	uint64_t n = __atomic_load_n(&h->held, __ATOMIC_RELAXED) + __atomic_load_n(&h->n_idrop, __ATOMIC_RELAXED);
	for (uint32_t i = 0; i < h->n_imp; i++)
		n += sched_impair_held(h->imp[i].m);
	return n;
}

uint64_t hqos_held_buffers(const struct hqos *h)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < h->n_stash; i++)
		n += buffer_chain_length(h->stash[i]);
	for (uint32_t i = 0; i < h->n_imp; i++)
		n += sched_impair_held_buffers(h->imp[i].m);
	for (uint32_t k = 0, bi = h->idrop_head; k < h->n_idrop; k++, bi = *hq_link(bi))
		n += buffer_chain_length(bi);
	for (uint32_t id = 0; id < h->n_alloc; id++)
		for (uint32_t p = 0; p < SCHED_N_PRIO; p++) {
			const struct hq_queue *q = &h->sub[id].q[p];
			uint32_t bi = q->head;
			for (uint32_t k = 0; k < q->n; k++, bi = *hq_link(bi))
				n += buffer_chain_length(bi);
		}
	return n;
}

size_t hqos_mem_bytes(const struct hqos *h)
{
	size_t n = sizeof(*h) + (size_t)h->n_alloc * (sizeof(struct hq_sub) + sizeof(struct hqos_sub_config)) +
		   (size_t)(h->names_mask + 1) * sizeof(*h->names) +
		   (h->mt.slot ? (size_t)(h->mt.mask + 1) * sizeof(struct hq_match_slot) : 0);
	for (uint32_t i = 0; i < h->n_imp; i++)
		if (h->imp[i].m)
			n += sched_impair_mem_bytes(h->imp[i].m);
	return n;
}

size_t hqos_sub_state_bytes(void)
{
	return sizeof(struct hq_sub) + sizeof(struct hqos_sub_config) + 2 * sizeof(uint32_t) /* name hash */ +
	       2 * sizeof(struct hq_match_slot) + 2 * sizeof(uint64_t) /* IPv4 table */;
}

void hqos_sub_unlink(struct hqos *h, uint32_t id)
{
	struct hq_sub *s = &h->sub[id];
	lists_move(h, id, s->state, ST_IDLE);
	wheel_del(h, id);
	s->state = ST_IDLE;
}

void hqos_wheel_init(struct hqos *h)
{
	for (uint32_t i = 0; i < WHEEL_SLOTS; i++) {
		h->whead[i] = NIL;
		h->wmin[i] = UINT64_MAX;
	}
}
