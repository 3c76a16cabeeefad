/* The impairer (impair.h): netem's decisions per packet, departure times,
 * and the two-level wheel that holds packets until then.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/impair.h"

#define SLOT_SHIFT 10 /* 1.024 us per slot */
#define FINE_BITS 14
#define FINE (1u << FINE_BITS)
#define FINE_MASK (FINE - 1)
#define PAGE_SHIFT (SLOT_SHIFT + FINE_BITS) /* a page: one turn of the fine wheel */
#define COARSE_BITS 10
#define COARSE (1u << COARSE_BITS)
#define COARSE_MASK (COARSE - 1)
#define NONE UINT64_MAX

#define TABLE_BITS 12
#define TABLE_N (1u << TABLE_BITS)
#define TABLE_SCALE 65536.0 /* table entries in units of jitter / 65536 */
#define DIST_CLAMP 4.0      /* netem's tables hold int16 / 8192: at most 4 jitters */

const char *const sched_impair_dist_names[SCHED_IMPAIR_N_DIST] = {
	[SCHED_IMPAIR_DIST_UNIFORM] = "uniform",
	[SCHED_IMPAIR_DIST_NORMAL] = "normal",
	[SCHED_IMPAIR_DIST_PARETO] = "pareto",
	[SCHED_IMPAIR_DIST_PARETONORMAL] = "paretonormal",
};

/* A slot holds its packets' indices in chunks of CHUNK_N (64 bytes each,
 * from the impairer's pool), linked head to tail: a release reads them in
 * order from contiguous memory and prefetches the buffers a chunk ahead,
 * where a list linked through the buffers' headers is a chain of
 * dependent loads, one cache miss each once the held headers outgrow the
 * caches (100K held at 10 Mpps). Entries [lo, hi) are live; only the head
 * chunk has lo > 0 (released from, or pushed at the front), only the tail
 * hi < CHUNK_N. */
#define CHUNK_N 14
#define CNONE UINT32_MAX

struct chunk {
	uint32_t next;
	uint8_t lo, hi;
	uint16_t pad;
	uint32_t bi[CHUNK_N];
};
_Static_assert(sizeof(struct chunk) == 64, "a chunk is one cache line");

struct slotq {
	uint32_t head, tail; /* chunks, CNONE when the slot is empty */
};

struct crnd {
	uint64_t rho;  /* fraction of SCHED_IMPAIR_P_ONE */
	uint32_t last;
};

struct sched_impair {
	struct sched_impair_config cfg;
	uint64_t s[4]; /* xoshiro256** */
	struct crnd c_delay, c_loss, c_dup, c_reorder, c_corrupt;
	bool ge_bad;
	uint32_t counter; /* packets since the last reordered one */
	uint32_t held, max_held;
	uint32_t n_fine;
	struct chunk *chunks; /* the pool: pool_need(max_held) of them */
	uint32_t n_chunks, free_chunk, n_free;
	uint64_t cur;     /* the wheel's tick: every slot before it is empty */
	uint64_t last_t;  /* latest departure given to a held packet (the rate's reference) */
	uint64_t st_enqueued, st_released, st_lost_random, st_lost_gemodel, st_over;
	uint64_t st_dup, st_dup_nobuf, st_reordered, st_corrupted, st_corrupt_nobuf, st_delayed, st_ge_bad;
	uint64_t st_late[SCHED_IMPAIR_LATE_BUCKETS];
	uint64_t fine_bits[FINE / 64];
	uint64_t coarse_bits[COARSE / 64];
	struct slotq coarse[COARSE];
	uint64_t coarse_min[COARSE]; /* earliest departure in each coarse slot (next_ns exact) */
	struct slotq fine[FINE];
};

/* ---- counters: written by the owner, read anywhere ---- */

static inline void add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline uint64_t rd(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline void set_held(struct sched_impair *m, uint32_t n)
{
	__atomic_store_n(&m->held, n, __ATOMIC_RELAXED);
}

/* ---- random numbers: splitmix64 seeds xoshiro256** ---- */

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void rng_seed(struct sched_impair *m, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		m->s[i] = splitmix64(&seed);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline uint64_t rng64(struct sched_impair *m)
{
	uint64_t *s = m->s;
	uint64_t r = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return r;
}

static inline uint32_t rng32(struct sched_impair *m)
{
	return (uint32_t)(rng64(m) >> 32);
}

/* netem's correlated draw: (1 - rho) of a fresh value plus rho of the
 * previous one (tc-netem(8) CORRELATION). */
static inline uint32_t crandom(struct sched_impair *m, struct crnd *c)
{
	uint32_t v = rng32(m);
	if (!c->rho)
		return v;
	uint64_t a = ((uint64_t)v * (SCHED_IMPAIR_P_ONE - c->rho) + (uint64_t)c->last * c->rho) >> 32;
	c->last = (uint32_t)a;
	return (uint32_t)a;
}

static inline bool event(struct sched_impair *m, struct crnd *c, uint64_t p)
{
	return p && crandom(m, c) < p;
}

/* ---- distributions: inverse CDF tables ---- */

static int32_t tables[SCHED_IMPAIR_N_DIST][TABLE_N + 1];
static bool tables_built;

/* Standard normal quantile by bisection on erfc: 60 steps per point, at
 * table build only. */
static double normal_q(double u)
{
	if (u <= 0)
		return -DIST_CLAMP;
	if (u >= 1)
		return DIST_CLAMP;
	double lo = -10, hi = 10;
	for (int i = 0; i < 80; i++) {
		double mid = (lo + hi) / 2;
		if (0.5 * erfc(-mid / sqrt(2.0)) < u)
			lo = mid;
		else
			hi = mid;
	}
	return (lo + hi) / 2;
}

/* netem's pareto table: shape 3 on x >= 1, shifted by its mean 1.5 and
 * scaled by 4/3 (mean 0). */
static double pareto_q(double u)
{
	if (u >= 1)
		return DIST_CLAMP;
	return (4.0 / 3.0) * (pow(1.0 - u, -1.0 / 3.0) - 1.5);
}

static double clamp4(double x)
{
	return x < -DIST_CLAMP ? -DIST_CLAMP : x > DIST_CLAMP ? DIST_CLAMP : x;
}

double sched_impair_quantile(enum sched_impair_dist d, double u)
{
	switch (d) {
	case SCHED_IMPAIR_DIST_NORMAL:
		return clamp4(normal_q(u));
	case SCHED_IMPAIR_DIST_PARETO:
		return clamp4(pareto_q(u));
	case SCHED_IMPAIR_DIST_PARETONORMAL:
		return clamp4(0.25 * clamp4(normal_q(u)) + 0.75 * clamp4(pareto_q(u)));
	default:
		return 2 * u - 1;
	}
}

static void tables_build(void)
{
	if (tables_built)
		return;
	for (uint32_t d = SCHED_IMPAIR_DIST_NORMAL; d < SCHED_IMPAIR_N_DIST; d++)
		for (uint32_t i = 0; i <= TABLE_N; i++)
			tables[d][i] = (int32_t)lrint(sched_impair_quantile(d, (double)i / TABLE_N) * TABLE_SCALE);
	tables_built = true;
}

/* mu + sigma * X, X from the distribution: uniform on [-1, 1) as netem
 * without a table, else the table at the draw's top 12 bits, linear
 * between neighbours by the next 16. */
static int64_t tabledist(struct sched_impair *m)
{
	const struct sched_impair_config *c = &m->cfg;
	int64_t mu = (int64_t)c->delay_ns, sigma = (int64_t)c->jitter_ns;
	if (!sigma)
		return mu;
	uint32_t rnd = crandom(m, &m->c_delay);
	if (c->dist == SCHED_IMPAIR_DIST_UNIFORM)
		return mu - sigma + (int64_t)(((unsigned __int128)rnd * (uint64_t)(2 * sigma)) >> 32);
	const int32_t *t = tables[c->dist];
	uint32_t i = rnd >> (32 - TABLE_BITS), frac = (rnd >> (16 - TABLE_BITS)) & 0xffff;
	int64_t v = t[i] + (((int64_t)(t[i + 1] - t[i]) * frac) >> 16);
	return mu + ((sigma * v) >> 16);
}

int64_t sched_impair_draw_delay(struct sched_impair *m)
{
	return tabledist(m);
}

/* ---- the wheel ---- */

static inline struct buffer *buf(uint32_t bi)
{
	return buffer_get(bi);
}

/* ---- the chunk pool: allocated on the control path, never per packet ---- */

/* Chunks enough for max_held packets however they spread: a slot of n
 * packets takes at most n chunks and at most n / CHUNK_N + 2 (full ones
 * between a partial head and tail), and at most FINE + COARSE slots hold
 * packets; plus 2 for a page's move between wheels (set_cur), which fills
 * a chunk before it frees one. */
static uint32_t pool_need(uint32_t max_held)
{
	uint64_t slots = FINE + COARSE, h = max_held;
	uint64_t spread = h / CHUNK_N + 2 * (h < slots ? h : slots);
	return (uint32_t)((spread < h ? spread : h) + 2);
}

/* Grow the pool to pool_need(max_held) (indices stay valid). */
static int pool_grow(struct sched_impair *m, uint32_t max_held)
{
	uint32_t need = pool_need(max_held);
	if (need <= m->n_chunks)
		return 0;
	struct chunk *c = aligned_alloc(64, (size_t)need * sizeof(*c));
	if (!c)
		return -ENOMEM;
	if (m->chunks)
		memcpy(c, m->chunks, (size_t)m->n_chunks * sizeof(*c));
	for (uint32_t i = need; i-- > m->n_chunks;) {
		c[i].next = m->free_chunk;
		m->free_chunk = i;
	}
	m->n_free += need - m->n_chunks;
	free(m->chunks);
	m->chunks = c;
	m->n_chunks = need;
	return 0;
}

static inline uint32_t chunk_get(struct sched_impair *m, uint32_t next, uint8_t at)
{
	uint32_t c = m->free_chunk;
	struct chunk *ch = &m->chunks[c];
	m->free_chunk = ch->next;
	m->n_free--;
	ch->next = next;
	ch->lo = ch->hi = at;
	return c;
}

static inline void chunk_put(struct sched_impair *m, uint32_t c)
{
	m->chunks[c].next = m->free_chunk;
	m->free_chunk = c;
	m->n_free++;
}

static inline void sq_push(struct sched_impair *m, struct slotq *q, uint32_t bi)
{
	if (q->head == CNONE) {
		q->head = q->tail = chunk_get(m, CNONE, 0);
	} else if (m->chunks[q->tail].hi == CHUNK_N) {
		uint32_t c = chunk_get(m, CNONE, 0);
		m->chunks[q->tail].next = c;
		q->tail = c;
	}
	struct chunk *ch = &m->chunks[q->tail];
	ch->bi[ch->hi++] = bi;
}

static inline void sq_push_front(struct sched_impair *m, struct slotq *q, uint32_t bi)
{
	if (q->head == CNONE) {
		q->head = q->tail = chunk_get(m, CNONE, CHUNK_N);
	} else if (m->chunks[q->head].lo == 0) {
		q->head = chunk_get(m, q->head, CHUNK_N);
	}
	struct chunk *ch = &m->chunks[q->head];
	ch->bi[--ch->lo] = bi;
}

/* Free the chunks from c to the end of its list. */
static void chunks_put_from(struct sched_impair *m, uint32_t c)
{
	while (c != CNONE) {
		uint32_t next = m->chunks[c].next;
		chunk_put(m, c);
		c = next;
	}
}

static inline void bit_set(uint64_t *w, uint32_t i)
{
	w[i >> 6] |= 1ull << (i & 63);
}

static inline void bit_clr(uint64_t *w, uint32_t i)
{
	w[i >> 6] &= ~(1ull << (i & 63));
}

/* The first set bit at or after `from` in ring order over n bits, within
 * `span` positions; returns its distance from `from`, or NONE. */
static uint64_t ring_find(const uint64_t *w, uint32_t n, uint32_t from, uint64_t span)
{
	uint64_t d = 0;
	while (d < span) {
		uint32_t i = (uint32_t)((from + d) & (n - 1));
		uint64_t word = w[i >> 6] >> (i & 63);
		if (word) {
			d += (uint64_t)__builtin_ctzll(word);
			return d < span ? d : NONE;
		}
		d += 64 - (i & 63);
	}
	return NONE;
}

static void coarse_put(struct sched_impair *m, uint32_t bi, uint64_t tick)
{
	uint64_t page = tick >> FINE_BITS, cur_page = m->cur >> FINE_BITS;
	if (page > cur_page + COARSE)
		page = cur_page + COARSE; /* parked: re-filed when this page comes */
	uint32_t s = (uint32_t)(page & COARSE_MASK);
	uint64_t t = buf(bi)->timestamp_ns;
	if (m->coarse[s].head == CNONE || t < m->coarse_min[s])
		m->coarse_min[s] = t;
	sq_push(m, &m->coarse[s], bi);
	bit_set(m->coarse_bits, s);
}

static inline void fine_put(struct sched_impair *m, uint32_t bi, uint64_t tick, bool front)
{
	uint32_t s = (uint32_t)(tick & FINE_MASK);
	if (front)
		sq_push_front(m, &m->fine[s], bi);
	else
		sq_push(m, &m->fine[s], bi);
	bit_set(m->fine_bits, s);
	m->n_fine++;
}

static inline void wheel_put(struct sched_impair *m, uint32_t bi, uint64_t t)
{
	uint64_t tick = t >> SLOT_SHIFT;
	if (tick < m->cur)
		tick = m->cur;
	if (tick < m->cur + FINE)
		fine_put(m, bi, tick, false);
	else
		coarse_put(m, bi, tick);
}

/* The wheel enters a new page at tick: the coarse slot of that page moves
 * into the fine wheel, ahead of what went there directly (they were filed
 * earlier: a packet goes to the coarse wheel only while its slot is
 * beyond the horizon, so before any packet of the same slot went to the
 * fine wheel). Parked packets of later pages are filed again. */
static void set_cur(struct sched_impair *m, uint64_t tick)
{
	bool new_page = (tick >> FINE_BITS) != (m->cur >> FINE_BITS);
	m->cur = tick;
	if (!new_page)
		return;
	uint32_t s = (uint32_t)((tick >> FINE_BITS) & COARSE_MASK);
	struct slotq q = m->coarse[s];
	if (q.head == CNONE)
		return;
	m->coarse[s].head = m->coarse[s].tail = CNONE;
	bit_clr(m->coarse_bits, s);
	/* Reverse the chunks, then push each packet, last first, to the
	 * front of its slot: order kept. */
	uint32_t rev = CNONE, c = q.head;
	while (c != CNONE) {
		uint32_t next = m->chunks[c].next;
		m->chunks[c].next = rev;
		rev = c;
		c = next;
	}
	for (c = rev; c != CNONE;) {
		struct chunk *ch = &m->chunks[c];
		for (uint32_t i = ch->hi; i-- > ch->lo;) {
			uint32_t bi = ch->bi[i];
			uint64_t t = buf(bi)->timestamp_ns >> SLOT_SHIFT;
			if (t < tick)
				t = tick;
			if (t < tick + FINE)
				fine_put(m, bi, t, true);
			else
				coarse_put(m, bi, t);
		}
		uint32_t next = ch->next;
		chunk_put(m, c);
		c = next;
	}
}

static inline void count_late(struct sched_impair *m, uint64_t now, uint64_t t)
{
	uint64_t us = now > t ? (now - t) / 1000 : 0;
	uint32_t b = us ? 64 - (uint32_t)__builtin_clzll(us) : 0;
	add(&m->st_late[b < SCHED_IMPAIR_LATE_BUCKETS ? b : SCHED_IMPAIR_LATE_BUCKETS - 1], 1);
}

/* Slot k's packets due at now to out (all of them when the slot is over,
 * else those whose time has come); returns how many. The packets kept
 * (not due, or past max) close up in place behind the read position,
 * order kept; chunks emptied go back to the pool. */
static uint32_t release_slot(struct sched_impair *m, uint64_t k, uint64_t now, uint32_t *out, uint32_t max)
{
	uint32_t s = (uint32_t)(k & FINE_MASK), n = 0;
	struct slotq *q = &m->fine[s];
	bool whole = k < (now >> SLOT_SHIFT);
	uint32_t wc = CNONE, wpos = 0; /* where the next kept packet goes; CNONE: none kept yet */
	uint32_t c = q->head;
	while (c != CNONE) {
		struct chunk *ch = &m->chunks[c];
		uint32_t next = ch->next, lo = ch->lo, hi = ch->hi;
		if (next != CNONE)
			__builtin_prefetch(&m->chunks[next]);
		for (uint32_t i = lo; i < hi; i++)
			__builtin_prefetch(buf(ch->bi[i]));
		if (wc == CNONE && n >= max) { /* the rest stays as it is */
			ch->lo = (uint8_t)lo;
			q->head = c;
			goto kept;
		}
		for (uint32_t i = lo; i < hi; i++) {
			uint32_t bi = ch->bi[i];
			uint64_t t = buf(bi)->timestamp_ns;
			if (n < max && (whole || t <= now)) {
				out[n++] = bi;
				count_late(m, now, t);
				continue;
			}
			if (wc == CNONE) {
				if (n >= max) { /* nothing kept before: the rest stays */
					ch->lo = (uint8_t)i;
					q->head = c;
					goto kept;
				}
				wc = c;
				wpos = lo;
				q->head = c;
				ch->lo = (uint8_t)lo;
			} else if (wpos == CHUNK_N) {
				wc = m->chunks[wc].next;
				wpos = 0;
			}
			m->chunks[wc].bi[wpos++] = bi;
		}
		if (wc == CNONE)
			chunk_put(m, c); /* all released */
		c = next;
	}
	if (wc == CNONE) {
		q->head = q->tail = CNONE;
		bit_clr(m->fine_bits, s);
	} else {
		chunks_put_from(m, m->chunks[wc].next);
		m->chunks[wc].next = CNONE;
		m->chunks[wc].hi = (uint8_t)wpos;
		q->tail = wc;
	}
kept:
	m->n_fine -= n;
	return n;
}

uint32_t sched_impair_dequeue(struct sched_impair *m, uint64_t now, uint32_t *out, uint32_t max)
{
	uint64_t now_tick = now >> SLOT_SHIFT;
	uint32_t n = 0;
	while (n < max && m->held > n && m->cur <= now_tick) {
		uint64_t page_end = m->cur | FINE_MASK;
		uint64_t lim = now_tick < page_end ? now_tick : page_end;
		uint64_t d = m->n_fine ? ring_find(m->fine_bits, FINE, (uint32_t)(m->cur & FINE_MASK), lim - m->cur + 1)
				       : NONE;
		if (d == NONE) {
			if (lim == now_tick) {
				set_cur(m, now_tick);
				break;
			}
			uint64_t next = page_end + 1;
			if (!m->n_fine) { /* skip to the first page with packets */
				uint32_t from = (uint32_t)(((page_end + 1) >> FINE_BITS) & COARSE_MASK);
				uint64_t pd = ring_find(m->coarse_bits, COARSE, from, COARSE);
				if (pd == NONE)
					break;
				next = (((page_end + 1) >> FINE_BITS) + pd) << FINE_BITS;
				if (next > now_tick) {
					set_cur(m, now_tick);
					break;
				}
			}
			set_cur(m, next);
			continue;
		}
		uint64_t k = m->cur + d;
		m->cur = k;
		uint32_t got = release_slot(m, k, now, out + n, max - n);
		n += got;
		if (m->fine[k & FINE_MASK].head != CNONE)
			break; /* out full, or the rest of now's slot is not due */
		if (k < now_tick)
			set_cur(m, k + 1);
	}
	if (n) {
		set_held(m, m->held - n);
		add(&m->st_released, n);
	}
	return n;
}

uint64_t sched_impair_next_ns(struct sched_impair *m)
{
	if (!m->held)
		return NONE;
	/* The first fine slot's earliest, or the first coarse page's start
	 * if sooner: a packet filed coarse while its slot was beyond the
	 * horizon may be due before packets filed fine later. */
	uint64_t t = NONE;
	if (m->n_fine) {
		uint64_t d = ring_find(m->fine_bits, FINE, (uint32_t)(m->cur & FINE_MASK), FINE);
		for (uint32_t c = d == NONE ? CNONE : m->fine[(m->cur + d) & FINE_MASK].head; c != CNONE;
		     c = m->chunks[c].next)
			for (uint32_t i = m->chunks[c].lo; i < m->chunks[c].hi; i++) {
				uint64_t tb = buf(m->chunks[c].bi[i])->timestamp_ns;
				t = tb < t ? tb : t;
			}
	}
	uint64_t page = (m->cur >> FINE_BITS) + 1;
	uint64_t pd = ring_find(m->coarse_bits, COARSE, (uint32_t)(page & COARSE_MASK), COARSE);
	uint64_t tc = pd == NONE ? NONE : m->coarse_min[(page + pd) & COARSE_MASK];
	return tc < t ? tc : t;
}

uint32_t sched_impair_flush(struct sched_impair *m, uint32_t *out, uint32_t max)
{
	uint32_t n = 0;
	struct slotq *qs[2] = { m->fine, m->coarse };
	uint32_t sizes[2] = { FINE, COARSE };
	uint64_t *bits[2] = { m->fine_bits, m->coarse_bits };
	for (int w = 0; w < 2; w++) {
		for (uint32_t s = 0; s < sizes[w] && n < max; s++) {
			struct slotq *q = &qs[w][s];
			while (n < max && q->head != CNONE) {
				struct chunk *ch = &m->chunks[q->head];
				out[n++] = ch->bi[ch->lo++];
				m->n_fine -= w == 0;
				if (ch->lo == ch->hi) {
					uint32_t c = q->head;
					q->head = ch->next;
					chunk_put(m, c);
				}
			}
			if (q->head == CNONE) {
				q->tail = CNONE;
				bit_clr(bits[w], s);
			}
		}
	}
	set_held(m, m->held - n);
	return n;
}

uint32_t sched_impair_held(const struct sched_impair *m)
{
	return __atomic_load_n(&m->held, __ATOMIC_RELAXED);
}

uint64_t sched_impair_held_buffers(const struct sched_impair *m)
{
	uint64_t n = 0;
	const struct slotq *qs[2] = { m->fine, m->coarse };
	uint32_t sizes[2] = { FINE, COARSE };
	for (int w = 0; w < 2; w++)
		for (uint32_t s = 0; s < sizes[w]; s++)
			for (uint32_t c = qs[w][s].head; c != CNONE; c = m->chunks[c].next)
				for (uint32_t i = m->chunks[c].lo; i < m->chunks[c].hi; i++)
					n += buffer_chain_length(m->chunks[c].bi[i]);
	return n;
}

/* ---- life ---- */

size_t sched_impair_mem_bytes(const struct sched_impair *m)
{
	(void)m;
	return (sizeof(struct sched_impair) + 63) & ~(size_t)63;
}

struct sched_impair *sched_impair_create(uint32_t max_held, uint64_t seed, char *err, size_t errlen)
{
	if (!max_held) {
		snprintf(err, errlen, "max-held 0: expected at least 1");
		return NULL;
	}
	struct sched_impair *m = aligned_alloc(64, (sizeof(*m) + 63) & ~(size_t)63);
	if (!m) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	memset(m, 0, sizeof(*m));
	memset(m->fine, 0xff, sizeof(m->fine));
	memset(m->coarse, 0xff, sizeof(m->coarse));
	m->max_held = max_held;
	m->cur = 0;
	m->free_chunk = CNONE;
	rng_seed(m, seed ? seed : 1);
	tables_build();
	return m;
}

void sched_impair_destroy(struct sched_impair *m)
{
	if (!m)
		return;
	uint32_t bi[256], n;
	while ((n = sched_impair_flush(m, bi, 256)) != 0)
		buffer_free(bi, n);
	free(m->chunks);
	free(m);
}

bool sched_impair_active(const struct sched_impair_config *c)
{
	return c->delay_ns || c->jitter_ns || c->loss_model || c->duplicate || c->reorder || c->corrupt ||
	       c->rate_bps;
}

int sched_impair_check(const struct sched_impair_config *c, char *err, size_t errlen)
{
	const uint64_t one = SCHED_IMPAIR_P_ONE;
	if (c->delay_ns > SCHED_IMPAIR_DELAY_MAX || c->jitter_ns > SCHED_IMPAIR_DELAY_MAX) {
		snprintf(err, errlen, "delay and jitter: expected at most 10s each");
		return -EINVAL;
	}
	if (c->dist >= SCHED_IMPAIR_N_DIST || c->loss_model > SCHED_IMPAIR_LOSS_GEMODEL) {
		snprintf(err, errlen, "unknown distribution or loss model");
		return -EINVAL;
	}
	uint64_t ps[] = { c->delay_corr, c->loss, c->loss_corr, c->ge_p, c->ge_r, c->ge_1h, c->ge_1k,
			  c->duplicate, c->duplicate_corr, c->reorder, c->reorder_corr, c->corrupt, c->corrupt_corr };
	for (size_t i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		if (ps[i] > one) {
			snprintf(err, errlen, "a percentage over 100%%");
			return -EINVAL;
		}
	if (c->reorder && !c->delay_ns && !c->jitter_ns) {
		snprintf(err, errlen, "reorder needs a delay (the packets not reordered are delayed)");
		return -EINVAL;
	}
	if (c->rate_bps && (c->rate_bps < 1000 || c->rate_bps > 400000000000ull)) {
		snprintf(err, errlen, "rate: expected 1kbit..400gbit");
		return -EINVAL;
	}
	if (c->packet_overhead < -SCHED_IMPAIR_OVERHEAD_MAX || c->packet_overhead > SCHED_IMPAIR_OVERHEAD_MAX) {
		snprintf(err, errlen, "packet-overhead: expected -%d..%d", SCHED_IMPAIR_OVERHEAD_MAX,
			 SCHED_IMPAIR_OVERHEAD_MAX);
		return -EINVAL;
	}
	return 0;
}

int sched_impair_set(struct sched_impair *m, const struct sched_impair_config *c, char *err, size_t errlen)
{
	int rc = sched_impair_check(c, err, errlen);
	if (rc)
		return rc;
	if (sched_impair_active(c) && pool_grow(m, m->max_held)) {
		snprintf(err, errlen, "out of memory for %u held packets' slots", m->max_held);
		return -ENOMEM;
	}
	m->cfg = *c;
	if (m->cfg.reorder && !m->cfg.gap)
		m->cfg.gap = 1;
	m->c_delay.rho = c->delay_corr;
	m->c_loss.rho = c->loss_corr;
	m->c_dup.rho = c->duplicate_corr;
	m->c_reorder.rho = c->reorder_corr;
	m->c_corrupt.rho = c->corrupt_corr;
	m->counter = 0;
	m->ge_bad = false;
	if (c->seed)
		rng_seed(m, c->seed);
	return 0;
}

int sched_impair_set_max_held(struct sched_impair *m, uint32_t max_held)
{
	if (!max_held)
		return -EINVAL;
	if (m->chunks && pool_grow(m, max_held))
		return -ENOMEM;
	m->max_held = max_held;
	return 0;
}

/* ---- per packet ---- */

static inline uint64_t frame_bytes(const struct buffer *b)
{
	uint64_t len = b->current_length;
	if (b->flags & BUFFER_F_NEXT_PRESENT)
		len += b->total_length_not_including_first;
	return len;
}

/* Gilbert-Elliott (netem's loss_gilb_ell): move, then lose by the new
 * state. */
static inline bool ge_lost(struct sched_impair *m)
{
	const struct sched_impair_config *c = &m->cfg;
	if (!m->ge_bad) {
		if ((uint64_t)rng32(m) < c->ge_p) {
			m->ge_bad = true;
			add(&m->st_ge_bad, 1);
		}
	} else if ((uint64_t)rng32(m) < c->ge_r) {
		m->ge_bad = false;
	}
	return (uint64_t)rng32(m) < (m->ge_bad ? c->ge_1h : c->ge_1k);
}

/* A fresh copy of the packet (chain included), its metadata with it. */
static uint32_t copy_packet(uint32_t bi)
{
	uint32_t nb = buffer_chain_length(bi);
	uint32_t fresh[64];
	if (nb > 64)
		return BUFFER_INVALID;
	uint32_t got = buffer_alloc(fresh, nb, -1);
	if (got != nb) {
		buffer_free(fresh, got);
		return BUFFER_INVALID;
	}
	uint32_t src = bi;
	for (uint32_t i = 0; i < nb; i++) {
		struct buffer *s = buf(src), *d = buf(fresh[i]);
		uint8_t pool = d->pool_index;
		memcpy(d, s, sizeof(*d));
		d->pool_index = pool;
		memcpy(buffer_data(d), buffer_data(s), s->current_length);
		d->next_buffer = i + 1 < nb ? fresh[i + 1] : BUFFER_INVALID;
		src = s->next_buffer;
	}
	return fresh[0];
}

static inline void drop(struct sched_impair *m, uint32_t bi, uint8_t why, uint32_t *dropped, uint32_t *n_drop)
{
	(void)m;
	buf(bi)->opaque[4] = why;
	dropped[(*n_drop)++] = bi;
}

/* Steps 2-5 of impair.h for one packet (the original, or a duplicate with
 * duplication off). */
static void one(struct sched_impair *m, uint32_t bi, bool lost, uint64_t now, uint32_t *dropped, uint32_t *n_drop)
{
	const struct sched_impair_config *c = &m->cfg;
	if (lost) {
		bool ge = c->loss_model == SCHED_IMPAIR_LOSS_GEMODEL;
		add(ge ? &m->st_lost_gemodel : &m->st_lost_random, 1);
		drop(m, bi, ge ? SCHED_IMPAIR_DROP_LOSS_GEMODEL : SCHED_IMPAIR_DROP_LOSS_RANDOM, dropped, n_drop);
		return;
	}
	if (unlikely(event(m, &m->c_corrupt, c->corrupt))) {
		uint32_t fresh = copy_packet(bi);
		uint32_t r1 = rng32(m), r2 = rng32(m);
		if (fresh == BUFFER_INVALID) {
			add(&m->st_corrupt_nobuf, 1); /* flipped in place: the buffer is ours alone */
		} else {
			buffer_free(&bi, 1);
			bi = fresh;
		}
		struct buffer *b = buf(bi);
		if (b->current_length)
			buffer_data(b)[r1 % b->current_length] ^= (uint8_t)(1u << (r2 & 7));
		add(&m->st_corrupted, 1);
	}
	if (unlikely(m->held >= m->max_held || m->n_free < 2)) { /* n_free: the pool's allocation failed */
		add(&m->st_over, 1);
		drop(m, bi, SCHED_IMPAIR_DROP_MAX_HELD, dropped, n_drop);
		return;
	}
	uint64_t t;
	if (c->gap == 0 || m->counter < c->gap - 1 || !event(m, &m->c_reorder, c->reorder)) {
		int64_t delay = tabledist(m);
		uint64_t from = now;
		if (c->rate_bps) {
			if (m->held && m->last_t > now) { /* behind the latest departure held */
				delay -= (int64_t)(m->last_t - now);
				from = m->last_t;
			}
			if (delay < 0)
				delay = 0;
			int64_t len = (int64_t)frame_bytes(buf(bi)) + c->packet_overhead;
			delay += len > 0 ? (int64_t)((uint64_t)len * 8000000000ull / c->rate_bps) : 0;
		}
		int64_t tt = (int64_t)from + delay;
		t = tt > (int64_t)now ? (uint64_t)tt : now;
		m->counter++;
		if (t > now)
			add(&m->st_delayed, 1);
	} else {
		t = now;
		m->counter = 0;
		add(&m->st_reordered, 1);
	}
	if (!m->held || t > m->last_t)
		m->last_t = t;
	buf(bi)->timestamp_ns = t;
	wheel_put(m, bi, t);
	set_held(m, m->held + 1);
}

uint32_t sched_impair_enqueue(struct sched_impair *m, const uint32_t *bi, uint32_t n, uint64_t now_ns,
			      uint32_t *dropped, uint32_t *dup, uint32_t *n_dup)
{
	const struct sched_impair_config *c = &m->cfg;
	uint32_t n_drop = 0, nd = 0;
	if (unlikely(!m->chunks))
		pool_grow(m, m->max_held); /* used unconfigured (as a plain delay line): once */
	if (m->held == 0 && (now_ns >> SLOT_SHIFT) > m->cur)
		set_cur(m, now_ns >> SLOT_SHIFT); /* an empty wheel moves to now at once */
	for (uint32_t i = 0; i < n; i++) {
		if (i + 1 < n)
			__builtin_prefetch(buf(bi[i + 1]), 1);
		bool twice = event(m, &m->c_dup, c->duplicate);
		bool lost = false;
		if (c->loss_model == SCHED_IMPAIR_LOSS_RANDOM)
			lost = event(m, &m->c_loss, c->loss);
		else if (c->loss_model == SCHED_IMPAIR_LOSS_GEMODEL)
			lost = ge_lost(m);
		if (unlikely(twice && !lost)) {
			/* netem: the copy goes through the rest on its own first. */
			uint32_t cp = copy_packet(bi[i]);
			if (cp == BUFFER_INVALID) {
				add(&m->st_dup_nobuf, 1);
			} else {
				add(&m->st_dup, 1);
				dup[nd++] = cp;
				bool cp_lost = false;
				if (c->loss_model == SCHED_IMPAIR_LOSS_RANDOM)
					cp_lost = event(m, &m->c_loss, c->loss);
				else if (c->loss_model == SCHED_IMPAIR_LOSS_GEMODEL)
					cp_lost = ge_lost(m);
				one(m, cp, cp_lost, now_ns, dropped, &n_drop);
			}
		}
		/* A duplicated packet that is lost is the one copy lost: the
		 * other goes on (netem counts copies, and loss takes one). */
		one(m, bi[i], lost && !twice, now_ns, dropped, &n_drop);
	}
	add(&m->st_enqueued, n);
	*n_dup = nd;
	return n_drop;
}

void sched_impair_stats(const struct sched_impair *m, struct sched_impair_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cfg = m->cfg;
	st->max_held = m->max_held;
	st->held = sched_impair_held(m);
	st->enqueued = rd(&m->st_enqueued);
	st->released = rd(&m->st_released);
	st->lost_random = rd(&m->st_lost_random);
	st->lost_gemodel = rd(&m->st_lost_gemodel);
	st->over_max_held = rd(&m->st_over);
	st->duplicated = rd(&m->st_dup);
	st->duplicate_no_buffer = rd(&m->st_dup_nobuf);
	st->reordered = rd(&m->st_reordered);
	st->corrupted = rd(&m->st_corrupted);
	st->corrupt_no_buffer = rd(&m->st_corrupt_nobuf);
	st->delayed = rd(&m->st_delayed);
	st->ge_bad_entries = rd(&m->st_ge_bad);
	for (uint32_t i = 0; i < SCHED_IMPAIR_LATE_BUCKETS; i++)
		st->late[i] = rd(&m->st_late[i]);
}
