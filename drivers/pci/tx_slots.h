/* The software side of a NIC tx ring, shared by the native drivers (ixgbe,
 * i40e): the buffer behind each descriptor, the FIFO of descriptors sent
 * with RS, and reclaim up to an RS descriptor the NIC reports done. The
 * descriptors themselves (layout, the RS bit, how "done" reads) stay in the
 * driver.
 *
 * RS goes on every TX_SLOTS_RS_BATCH-th descriptor and on each burst's
 * last (DPDK's tx_rs_thresh): the NIC writes back only those, a done RS
 * descriptor means every earlier one is done (82599 datasheet 7.2.3; X710/XL710 datasheet, transmit descriptors), and a
 * burst's tail end never waits for a batch to fill.
 *
 * Single-threaded: one queue, one thread.
 */
#ifndef SLUICE_DRIVERS_PCI_TX_SLOTS_H
#define SLUICE_DRIVERS_PCI_TX_SLOTS_H

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include "graph/buffer.h"
#include "base/util.h"

#define TX_SLOTS_RS_BATCH 32   /* RS at least every 32nd descriptor */
#define TX_SLOTS_FREE_BATCH 32 /* frames per buffer_free on the chain path */

struct tx_slots {
	uint32_t *bufs;         /* a frame's last descriptor: its head buffer;
				 * a chain's other descriptors: BUFFER_INVALID */
	uint32_t *rs;           /* FIFO of the slots sent with RS, oldest first */
	uint32_t mask;
	uint32_t tail;          /* next free descriptor */
	uint32_t clean;         /* oldest descriptor not yet reclaimed */
	uint32_t rs_head, rs_tail; /* rs[] indices (free running, masked) */
	/* Slots the chain path wrote (tx_ring.h) are in flight up to
	 * slow_end (exclusive): their heads are not reset and may chain, so
	 * reclaim frees them through buffer_free until clean passes it. */
	bool slow;
	uint32_t slow_end;
	uint32_t done[TX_SLOTS_FREE_BATCH];
};

/* Arrays for a ring of n (a power of two) descriptors. 0 or -ENOMEM. */
static inline int tx_slots_init(struct tx_slots *t, uint32_t n)
{
	*t = (struct tx_slots){ .mask = n - 1 };
	t->bufs = malloc(n * sizeof(uint32_t));
	t->rs = malloc(n * sizeof(uint32_t));
	return t->bufs && t->rs ? 0 : -ENOMEM;
}

/* Free the frames still in flight and the arrays. */
static inline void tx_slots_release(struct tx_slots *t)
{
	if (t->bufs)
		for (uint32_t s = t->clean; s != t->tail; s = (s + 1) & t->mask)
			if (t->bufs[s] != BUFFER_INVALID)
				buffer_free(&t->bufs[s], 1);
	free(t->bufs);
	free(t->rs);
	*t = (struct tx_slots){ 0 };
}

/* Buffers in flight (handed to the NIC, not yet reclaimed), each chain
 * whole: for `show buffers`. */
static inline uint32_t tx_slots_n_held(const struct tx_slots *t)
{
	uint32_t n = 0;
	if (t->bufs)
		for (uint32_t s = t->clean; s != t->tail; s = (s + 1) & t->mask)
			if (t->bufs[s] != BUFFER_INVALID)
				n += buffer_chain_length(t->bufs[s]);
	return n;
}

/* Descriptors free for a burst (one slot always stays empty). */
static inline uint32_t tx_slots_room(const struct tx_slots *t)
{
	return t->mask - ((t->tail - t->clean) & t->mask);
}

/* The oldest RS descriptor not yet reclaimed, or -1. */
static inline int64_t tx_slots_oldest_rs(const struct tx_slots *t)
{
	return t->rs_head != t->rs_tail ? (int64_t)t->rs[t->rs_head & t->mask] : -1;
}

/* Free every frame in slots from..last (the oldest RS descriptor, read
 * done; from is t->clean, which the caller moves past last). Without a
 * slot of the chain path in the range every slot holds a frame of one
 * buffer that tx_slots_fast reset when it wrote the descriptor, and they go
 * to buffer_free_reset straight from the ring (indices only), in at most
 * two runs. Otherwise every frame goes through buffer_free (its chain with
 * it; a header already reset is reset again, the same state). */
static inline void tx_slots_free_to(struct tx_slots *t, uint32_t from, uint32_t last)
{
	uint32_t mask = t->mask;
	uint32_t n = ((last - from) & mask) + 1;
	if (likely(!t->slow)) {
		uint32_t first = MIN(n, mask + 1 - from);
		buffer_free_reset(&t->bufs[from], first);
		if (unlikely(n > first))
			buffer_free_reset(t->bufs, n - first);
		return;
	}
	/* In flight never exceeds mask slots, so slow_end - from is 1..mask. */
	if (((t->slow_end - from) & mask) <= n)
		t->slow = false;
	uint32_t k = 0;
	for (uint32_t s = from;; s = (s + 1) & mask) {
		if (t->bufs[s] != BUFFER_INVALID)
			t->done[k++] = t->bufs[s];
		if (k == TX_SLOTS_FREE_BATCH || s == last) {
			buffer_free(t->done, k);
			k = 0;
		}
		if (s == last)
			break;
	}
}

/* The oldest RS descriptor reads done: free every frame up to it
 * (tx_slots_free_to). */
static inline void tx_slots_reclaim_rs(struct tx_slots *t)
{
	uint32_t from = t->clean, last = t->rs[t->rs_head++ & t->mask];
	t->clean = (last + 1) & t->mask;
	tx_slots_free_to(t, from, last);
}

/* Writes one frame of one buffer b into the descriptor at d, in the
 * driver's layout. */
typedef void tx_slots_put_fn(volatile void *d, const struct buffer *b, uint64_t data0);

#if defined(__SSE4_1__)
/* Two frames of one buffer each into the descriptors at d and d + 32 (of
 * 16 bytes: the even or the odd two of four, tx_slots_fast), in
 * the driver's layout: addr holds their data's IOVAs, one per 64-bit lane;
 * w their headers' first quadwords interleaved by 16-bit words
 * (tx_slots_head2: the lengths are bytes 4..5 and 6..7). */
typedef void tx_slots_put2_fn(volatile void *d, __m128i addr, __m128i w);

/* The first quadword of two headers (current_data, current_length, flags)
 * interleaved by 16-bit words: current_data of each in words 0 and 1,
 * current_length in 2 and 3, the flags' low halves in 4 and 5, their high
 * halves in 6 and 7. Two loads and one PUNPCKLWD; the sign extension of
 * the offsets is then one PMOVSXWQ. */
__attribute__((always_inline)) static inline __m128i tx_slots_head2(const struct buffer *b0, const struct buffer *b1)
{
	return _mm_unpacklo_epi16(_mm_loadl_epi64((const __m128i *)b0), _mm_loadl_epi64((const __m128i *)b1));
}

/* Flag bits f of both headers, where tx_slots_head2 puts them. */
#define TX_SLOTS_HEAD2_FLAGS(f)                                                                          \
	_mm_set_epi64x((int64_t)((uint64_t)((f) & 0xffffu) * 0x10001u | (uint64_t)((f) >> 16) * 0x10001u << 32), 0)

/* Their data's IOVAs: header address (h, per lane) + data0 + current_data
 * sign-extended. */
__attribute__((always_inline)) static inline __m128i tx_slots_addr2(__m128i w, __m128i h, __m128i vd0)
{
	return _mm_add_epi64(_mm_add_epi64(h, vd0), _mm_cvtepi16_epi64(w));
}

/* Two descriptors of 16 bytes at d and d + 32 from (addr, q1) lanes:
 * each one 16-byte store. Tx rings are 4 KB aligned, the store aligned. */
__attribute__((always_inline)) static inline void tx_slots_store2(volatile void *d, __m128i addr, __m128i q1)
{
	__m128i *p = (__m128i *)(uintptr_t)d;
	_mm_store_si128(p, _mm_unpacklo_epi64(addr, q1));
	_mm_store_si128(p + 2, _mm_unpackhi_epi64(addr, q1));
}
#else
typedef void tx_slots_put2_fn(void); /* SSE4.1 only; the scalar loop uses put */
#endif

/* The tx fast path over n descriptors of desc_size bytes in a row from d
 * (no wrap): frames of one buffer each, one descriptor each (RS comes
 * after, tx_slots_mark_rs). Four a turn with one test of their chain flags;
 * stops at the first chain; returns how many it wrote, with their buffers
 * in bufs[]. Each header is put back in buffer_reset's state once its
 * descriptor is written (two stores while the line is in cache: the queue
 * owns the buffer now and the NIC reads only its data), so that reclaim
 * hands the batch back by index (buffer_free_reset); one_pool (a constant
 * at each call): every buffer is pool 0's, its index not read. Always
 * inlined, so that put, put2 and desc_size are the driver's constants.
 * Measured (bench/nic, burst 32, callgrind): a driver's tx burst less its
 * buffer_free, 26.7-28.6 instructions per packet one at a time, 23.0-24.9
 * four at a time; with the reset here and reclaim by index, ixgbe's tx with
 * its pool share 36.1 -> 31.0 (docs/nic.md, 1.4a).
 *
 * With SSE4.1 (the x86 build baseline) the four headers' first quadwords
 * (current_data, current_length, flags) are loaded two per register: the
 * chain flags are one OR and one PTEST for the four, and put2 builds two
 * descriptors from the lanes (addresses by a shuffle, a sign extension and
 * two adds per pair; the command words from the lanes by the driver),
 * each one 16-byte store. Other architectures take the scalar loop with put. */
__attribute__((always_inline)) static inline uint32_t tx_slots_fast(volatile void *d, size_t desc_size,
								    tx_slots_put_fn *put, tx_slots_put2_fn *put2,
								    uint32_t *bufs, const uint32_t *bi, uint32_t n,
								    uint8_t *base, uint64_t stride, uint64_t data0,
								    bool one_pool)
{
	volatile uint8_t *p = d;
	/* The indices go to the slots before their chain flags are tested:
	 * slots past the tail hold nothing (tx_slots_n_held). */
#if defined(__SSE4_1__)
	const __m128i vs = _mm_set1_epi64x((int64_t)stride), vb = _mm_set1_epi64x((int64_t)(uintptr_t)base);
	const __m128i vd0 = _mm_set1_epi64x((int64_t)data0);
	const __m128i vnext = TX_SLOTS_HEAD2_FLAGS(BUFFER_F_NEXT_PRESENT);
	_Static_assert(offsetof(struct buffer, current_data) == 0 && offsetof(struct buffer, current_length) == 2 &&
			       offsetof(struct buffer, flags) == 4,
		       "tx_slots_head2's quadword: current_data, current_length, flags");
	/* One 64-bit counter for the indices (scaled addressing) and the
	 * descriptor pointer. */
	size_t k = 0, n4 = n & ~3u;
	for (; k != n4; p += 4 * desc_size, k += 4) {
		struct buffer *b0, *b1, *b2, *b3;
		/* The four indices copied as one 16-byte load and store; their
		 * headers two per multiply and add, (b0, b2) and (b1, b3):
		 * PMULUDQ reads each 64-bit lane's low half, the indices as
		 * they are and shifted by 32. */
		__m128i x = _mm_loadu_si128((const __m128i *)&bi[k]);
		_mm_storeu_si128((__m128i *)&bufs[k], x);
		__m128i h02 = _mm_add_epi64(_mm_mul_epu32(x, vs), vb);
		__m128i h13 = _mm_add_epi64(_mm_mul_epu32(_mm_srli_epi64(x, 32), vs), vb);
		b0 = (struct buffer *)(uintptr_t)_mm_cvtsi128_si64(h02);
		b2 = (struct buffer *)(uintptr_t)_mm_extract_epi64(h02, 1);
		b1 = (struct buffer *)(uintptr_t)_mm_cvtsi128_si64(h13);
		b3 = (struct buffer *)(uintptr_t)_mm_extract_epi64(h13, 1);
		__m128i w02 = tx_slots_head2(b0, b2), w13 = tx_slots_head2(b1, b3);
		if (unlikely(!_mm_testz_si128(_mm_or_si128(w02, w13), vnext)))
			break;
		put2(p, tx_slots_addr2(w02, h02, vd0), w02);
		put2(p + desc_size, tx_slots_addr2(w13, h13, vd0), w13);
		buffer_reset(b0, one_pool ? 0 : b0->pool_index);
		buffer_reset(b1, one_pool ? 0 : b1->pool_index);
		buffer_reset(b2, one_pool ? 0 : b2->pool_index);
		buffer_reset(b3, one_pool ? 0 : b3->pool_index);
	}
	uint32_t i = (uint32_t)k;
#else
	(void)put2;
	/* Pointers, not i + k: the loop keeps no index arithmetic per
	 * buffer. */
	const uint32_t *src = bi, *end4 = bi + (n & ~3u);
	uint32_t *dst = bufs;
	for (; src != end4; p += 4 * desc_size, src += 4, dst += 4) {
		struct buffer *b0, *b1, *b2, *b3;
		uint32_t x[4];
		memcpy(x, src, sizeof(x));
		memcpy(dst, x, sizeof(x));
		b0 = (struct buffer *)(base + x[0] * stride);
		b1 = (struct buffer *)(base + x[1] * stride);
		b2 = (struct buffer *)(base + x[2] * stride);
		b3 = (struct buffer *)(base + x[3] * stride);
		if (unlikely((b0->flags | b1->flags | b2->flags | b3->flags) & BUFFER_F_NEXT_PRESENT))
			break;
		put(p, b0, data0);
		put(p + desc_size, b1, data0);
		put(p + 2 * desc_size, b2, data0);
		put(p + 3 * desc_size, b3, data0);
		buffer_reset(b0, one_pool ? 0 : b0->pool_index);
		buffer_reset(b1, one_pool ? 0 : b1->pool_index);
		buffer_reset(b2, one_pool ? 0 : b2->pool_index);
		buffer_reset(b3, one_pool ? 0 : b3->pool_index);
	}
	uint32_t i = (uint32_t)(src - bi);
#endif
	for (; i < n; i++, p += desc_size) {
		struct buffer *b = (struct buffer *)(base + bi[i] * stride);
		if (unlikely(b->flags & BUFFER_F_NEXT_PRESENT))
			break;
		put(p, b, data0);
		buffer_reset(b, one_pool ? 0 : b->pool_index);
		bufs[i] = bi[i];
	}
	return i;
}

#endif
