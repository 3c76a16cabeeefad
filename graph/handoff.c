/* SPSC rings of 64-byte lines.
 *
 * Producer and consumer indices sit on their own cache lines, and each side
 * keeps a private copy of the other's index so that it reads the shared one
 * only when its copy says the ring looks full (or empty): one cache-line
 * transfer per burst, not per line.
 *
 * Waking the consumer: the graph thread that dequeues is noted in the ring
 * (a store only when it changes), and a producer that publishes kicks it
 * through graph_thread_kick, which costs a fence and a load unless the
 * consumer has announced it is going to sleep (graph/sleep.c). The
 * consumer's last look before sleeping dequeues from the ring, so it is
 * always noted by then.
 *
 * A mailbox (handoff_mailbox_create) is a ring without shared indices:
 * each line's own count n is its full/empty word (FastForward-style,
 * Giacomoni et al., PPoPP 2008: 1..8 full, 0 empty), and each side keeps
 * its index to itself.
 * The producer writes a line's slots, then n (release); the consumer reads
 * n (acquire), copies the line, then stores 0 (release). A handoff then
 * moves only the data line between the two cores (there, and emptied
 * back), where a ring moves the head line, the data line and the tail
 * line, each a dependent miss. Waking and counters are the ring's. The
 * first line also carries one word back (handoff_mailbox_post): a consumer
 * that posts, say, a completion count as it takes the line sends it with
 * the line it empties anyway, and the producer reads it with the count it
 * reads for room.
 */
#include <errno.h>
#include <numa.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph_private.h"
#include "graph/handoff.h"
#include "base/util.h"

struct handoff_ring {
	alignas(64) atomic_uint head; /* written by the producer */
	uint32_t cached_tail;          /* producer's copy of tail */
	uint64_t lines_in;
	uint64_t buffers_in;
	uint64_t congestion;
	alignas(64) atomic_uint tail; /* written by the consumer */
	uint32_t cached_head;          /* consumer's copy of head */
	uint64_t lines_out;
	uint64_t buffers_out;
	alignas(64) _Atomic(struct graph *) kick_graph; /* the consumer's graph and index + 1 */
	atomic_uint kick_thread;
	uint32_t mask;
	uint32_t n_lines;
	int numa_node;
	bool mailbox; /* each line's n its full/empty word; head and tail each side's own */
	struct handoff_line *lines;
};

/* Counters are written by one side and read from any thread. */
static inline void counter_add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* n lines (a power of two) on numa_node (-1: any), zeroed. */
static struct handoff_ring *ring_alloc(uint32_t n, int numa_node)
{
	struct handoff_ring *r = aligned_alloc(64, sizeof(*r));
	if (!r)
		return NULL;
	memset(r, 0, sizeof(*r));
	size_t bytes = (size_t)n * sizeof(struct handoff_line);
	if (numa_node >= 0 && numa_available() >= 0)
		r->lines = numa_alloc_onnode(bytes, numa_node);
	else
		r->lines = aligned_alloc(64, bytes);
	if (!r->lines) {
		free(r);
		return NULL;
	}
	r->numa_node = (numa_node >= 0 && numa_available() >= 0) ? numa_node : -1;
	memset(r->lines, 0, bytes);
	r->n_lines = n;
	r->mask = n - 1;
	return r;
}

struct handoff_ring *handoff_ring_create(uint32_t n_lines, int numa_node)
{
	uint32_t n = 2;
	while (n < n_lines && n < (1u << 30))
		n <<= 1;
	return ring_alloc(n, numa_node);
}

struct handoff_ring *handoff_mailbox_create(uint32_t n_lines, int numa_node)
{
	uint32_t n = 1;
	while (n < n_lines && n < (1u << 30))
		n <<= 1;
	struct handoff_ring *r = ring_alloc(n, numa_node);
	if (r)
		r->mailbox = true;
	return r;
}

void handoff_ring_free(struct handoff_ring *r)
{
	if (!r)
		return;
	if (r->numa_node >= 0)
		numa_free(r->lines, (size_t)r->n_lines * sizeof(struct handoff_line));
	else
		free(r->lines);
	free(r);
}

/* Consumer side: remember which graph thread takes from the ring. */
static inline void note_consumer(struct handoff_ring *r)
{
	struct graph_thread *t = graph_thread_current;
	if (t && atomic_load_explicit(&r->kick_thread, memory_order_relaxed) != t->index + 1) {
		atomic_store_explicit(&r->kick_graph, t->graph, memory_order_relaxed);
		atomic_store_explicit(&r->kick_thread, t->index + 1, memory_order_release);
	}
}

/* Producer side, after publishing: wake the consumer if it sleeps. */
static inline void kick_consumer(struct handoff_ring *r)
{
	unsigned i = atomic_load_explicit(&r->kick_thread, memory_order_acquire);
	if (!i)
		return;
	struct graph *g = atomic_load_explicit(&r->kick_graph, memory_order_relaxed);
	if (i - 1 < atomic_load_explicit(&g->n_threads_published, memory_order_acquire))
		graph_thread_kick(g->threads[i - 1], GRAPH_WAKE_HANDOFF);
}

/* Lines the producer may write now. */
static inline uint32_t producer_room(struct handoff_ring *r, uint32_t head, uint32_t want)
{
	uint32_t room = r->n_lines - (head - r->cached_tail);
	if (room < want) {
		r->cached_tail = atomic_load_explicit(&r->tail, memory_order_acquire);
		room = r->n_lines - (head - r->cached_tail);
	}
	return room;
}

static inline uint32_t consumer_avail(struct handoff_ring *r, uint32_t tail, uint32_t want)
{
	uint32_t avail = r->cached_head - tail;
	if (avail < want) {
		r->cached_head = atomic_load_explicit(&r->head, memory_order_acquire);
		avail = r->cached_head - tail;
	}
	return avail;
}

/* Producer, after writing k of the n lines offered (buffers in all) from
 * head: count, publish the head (a mailbox's consumer never reads it, so
 * release costs it nothing), wake the consumer. Returns k. */
static inline uint32_t published(struct handoff_ring *r, uint32_t head, uint32_t k, uint32_t n, uint32_t buffers)
{
	if (k < n)
		counter_add(&r->congestion, 1);
	if (k) {
		atomic_store_explicit(&r->head, head + k, memory_order_release);
		counter_add(&r->lines_in, k);
		counter_add(&r->buffers_in, buffers);
		kick_consumer(r);
	}
	return k;
}

/* Consumer, after taking k lines (buffers in all) from tail. */
static inline void consumed(struct handoff_ring *r, uint32_t tail, uint32_t k, uint32_t buffers)
{
	if (k) {
		atomic_store_explicit(&r->tail, tail + k, memory_order_release);
		counter_add(&r->lines_out, k);
		counter_add(&r->buffers_out, buffers);
	}
}

/* ---- the mailbox: each line's count its full/empty word ---- */

/* Line i's count, as the other side left it. */
static inline uint8_t mbox_n(const struct handoff_ring *r, uint32_t i)
{
	return __atomic_load_n(&r->lines[i & r->mask].n, __ATOMIC_ACQUIRE);
}

/* Producer: up to n lines, each into the next line if it is empty; returns
 * lines taken. The slots first, the count last (release). */
static inline uint32_t mbox_put(struct handoff_ring *r, const struct handoff_line *lines, uint32_t n)
{
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed), k = 0, buffers = 0;
	for (; k < n && !mbox_n(r, head + k); k++) {
		struct handoff_line *m = &r->lines[(head + k) & r->mask];
		memcpy(m->bi, lines[k].bi, sizeof(m->bi));
		memcpy(m->tag, lines[k].tag, sizeof(m->tag));
		m->flags = lines[k].flags;
		__atomic_store_n(&m->n, lines[k].n, __ATOMIC_RELEASE);
		buffers += lines[k].n;
	}
	return published(r, head, k, n, buffers);
}

void handoff_mailbox_post(struct handoff_ring *r, uint32_t v)
{
	__atomic_store_n(&r->lines[0].post, v, __ATOMIC_RELEASE);
}

uint32_t handoff_mailbox_posted(const struct handoff_ring *r)
{
	return __atomic_load_n(&r->lines[0].post, __ATOMIC_ACQUIRE);
}

/* Consumer: up to max_lines full lines holding at most max buffers in
 * all, into lines[]; returns lines taken. */
static inline uint32_t mbox_take(struct handoff_ring *r, struct handoff_line *lines, uint32_t max_lines, uint32_t max)
{
	note_consumer(r);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed), k = 0, buffers = 0, c;
	for (; k < max_lines && (c = mbox_n(r, tail + k)) != 0 && buffers + c <= max; k++) {
		struct handoff_line *m = &r->lines[(tail + k) & r->mask];
		memcpy(lines[k].bi, m->bi, sizeof(m->bi));
		memcpy(lines[k].tag, m->tag, sizeof(m->tag));
		lines[k].flags = m->flags;
		lines[k].n = (uint8_t)c;
		__atomic_store_n(&m->n, 0, __ATOMIC_RELEASE);
		buffers += c;
	}
	consumed(r, tail, k, buffers);
	return k;
}

/* ---- the ring ---- */

uint32_t handoff_enqueue(struct handoff_ring *r, const uint32_t *bi, const uint16_t *tags, uint32_t n)
{
	if (unlikely(r->mailbox)) {
		/* At most 4 lines a call here: the line buffer stays small. */
		struct handoff_line l[4];
		uint32_t want = MIN(4u, (n + HANDOFF_LINE_SLOTS - 1) / HANDOFF_LINE_SLOTS), taken = 0;
		for (uint32_t i = 0; i < want; i++) {
			l[i].n = (uint8_t)MIN((uint32_t)HANDOFF_LINE_SLOTS, n - i * HANDOFF_LINE_SLOTS);
			l[i].flags = 0;
			memcpy(l[i].bi, bi + i * HANDOFF_LINE_SLOTS, l[i].n * sizeof(uint32_t));
			for (uint32_t s = 0; s < l[i].n; s++)
				l[i].tag[s] = tags ? (uint16_t)(tags[i * HANDOFF_LINE_SLOTS + s] & HANDOFF_TAG_MASK) : 0;
		}
		uint32_t k = mbox_put(r, l, want);
		for (uint32_t i = 0; i < k; i++)
			taken += l[i].n;
		if (k == want && taken < n) /* more than 4 lines offered: the rest was not looked at */
			counter_add(&r->congestion, 1);
		return taken;
	}
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t want = (n + HANDOFF_LINE_SLOTS - 1) / HANDOFF_LINE_SLOTS;
	uint32_t room = producer_room(r, head, want);
	uint32_t n_lines = MIN(room, want);
	uint32_t taken = 0;
	for (uint32_t l = 0; l < n_lines; l++) {
		struct handoff_line *line = &r->lines[(head + l) & r->mask];
		uint32_t k = MIN((uint32_t)HANDOFF_LINE_SLOTS, n - taken);
		memcpy(line->bi, bi + taken, k * sizeof(uint32_t));
		for (uint32_t s = 0; s < k; s++)
			line->tag[s] = tags ? (uint16_t)(tags[taken + s] & HANDOFF_TAG_MASK) : 0;
		line->n = (uint8_t)k;
		line->flags = 0;
		taken += k;
	}
	published(r, head, n_lines, want, taken);
	return taken;
}

uint32_t handoff_enqueue_lines(struct handoff_ring *r, const struct handoff_line *lines, uint32_t n)
{
	if (unlikely(r->mailbox))
		return mbox_put(r, lines, n);
	uint32_t head = atomic_load_explicit(&r->head, memory_order_relaxed);
	/* MIN would evaluate producer_room twice, and the second look may see
	 * more room than n. */
	uint32_t room = producer_room(r, head, n);
	uint32_t k = MIN(n, room);
	uint32_t buffers = 0;
	for (uint32_t l = 0; l < k; l++) {
		r->lines[(head + l) & r->mask] = lines[l];
		buffers += lines[l].n;
	}
	return published(r, head, k, n, buffers);
}

uint32_t handoff_dequeue(struct handoff_ring *r, uint32_t *bi, uint16_t *tags, uint32_t max)
{
	if (unlikely(r->mailbox)) {
		struct handoff_line l[4];
		uint32_t k = mbox_take(r, l, 4, max), got = 0;
		for (uint32_t i = 0; i < k; i++) {
			memcpy(bi + got, l[i].bi, l[i].n * sizeof(uint32_t));
			if (tags)
				memcpy(tags + got, l[i].tag, l[i].n * sizeof(uint16_t));
			got += l[i].n;
		}
		return got;
	}
	note_consumer(r);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t avail = consumer_avail(r, tail, max / HANDOFF_LINE_SLOTS);
	uint32_t got = 0, l = 0;
	for (; l < avail; l++) {
		const struct handoff_line *line = &r->lines[(tail + l) & r->mask];
		if (got + line->n > max)
			break;
		memcpy(bi + got, line->bi, line->n * sizeof(uint32_t));
		if (tags)
			memcpy(tags + got, line->tag, line->n * sizeof(uint16_t));
		got += line->n;
	}
	consumed(r, tail, l, got);
	return got;
}

uint32_t handoff_dequeue_lines(struct handoff_ring *r, struct handoff_line *lines, uint32_t max)
{
	if (unlikely(r->mailbox))
		return mbox_take(r, lines, max, UINT32_MAX);
	note_consumer(r);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t avail = consumer_avail(r, tail, max);
	uint32_t k = MIN(max, avail);
	uint32_t buffers = 0;
	for (uint32_t l = 0; l < k; l++) {
		lines[l] = r->lines[(tail + l) & r->mask];
		buffers += lines[l].n;
	}
	consumed(r, tail, k, buffers);
	return k;
}

uint32_t handoff_count(const struct handoff_ring *r)
{
	if (r->mailbox) {
		/* From the counters: reading the lines' counts would pull data
		 * lines from both cores. The producer counts a line after its
		 * count word, so the consumer's count may be ahead for a moment. */
		uint64_t out = __atomic_load_n(&r->lines_out, __ATOMIC_ACQUIRE);
		uint64_t in = __atomic_load_n(&r->lines_in, __ATOMIC_ACQUIRE);
		return in > out ? (uint32_t)(in - out) : 0;
	}
	uint32_t head = atomic_load_explicit(&r->head, memory_order_acquire);
	uint32_t tail = atomic_load_explicit(&r->tail, memory_order_acquire);
	return head - tail;
}

void handoff_ring_stats(const struct handoff_ring *r, struct handoff_stats *st)
{
	st->lines_in = __atomic_load_n(&r->lines_in, __ATOMIC_RELAXED);
	st->lines_out = __atomic_load_n(&r->lines_out, __ATOMIC_RELAXED);
	st->buffers_in = __atomic_load_n(&r->buffers_in, __ATOMIC_RELAXED);
	st->buffers_out = __atomic_load_n(&r->buffers_out, __ATOMIC_RELAXED);
	st->congestion = __atomic_load_n(&r->congestion, __ATOMIC_RELAXED);
	st->n_lines = r->n_lines;
	st->used = handoff_count(r);
}
