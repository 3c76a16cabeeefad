/* The rx burst of the native drivers (ixgbe, i40e), once: whole chunks of
 * 32 done taken as they are judged (pci_rx_full), otherwise the walk over
 * the descriptors the NIC is done with first (pci_rx_take); the bulk
 * refill, the fast path (one descriptor a frame, four a turn) and the slow
 * path (chains through rx_chain.h, errors, frames without a replacement
 * buffer), the tail write.
 * What differs between the NICs is the descriptor's write-back format; the
 * driver gives it as a struct pci_rx_fmt of constants and two small inline
 * functions, and its burst is two short functions (the batch out of line,
 * pci_rx_poll says why):
 *
 *   static uint32_t ixgbe_rx_batch(struct device *dev, uint16_t queue, struct pci_rxq *rq,
 *                                  uint32_t *bi, uint32_t n)       (noinline)
 *   {
 *           return pci_rx_burst(dev, queue, rq, bi, n, &ixgbe_rx_fmt);
 *   }
 *   static uint32_t ixgbe_rx_burst(struct device *dev, uint16_t queue, uint32_t *bi, uint32_t n)
 *   {
 *           struct ixgbe_dev *xd = container_of(dev, struct ixgbe_dev, dev);
 *           return pci_rx_poll(dev, queue, &xd->rxq[queue], bi, n, &ixgbe_rx_fmt, ixgbe_rx_batch);
 *   }
 *
 * Both formats this serves arm a descriptor with the buffer's address in
 * its first quadword and 0 in its second (where DD lands), and write back
 * the status, error and length bits in the second quadword and the RSS hash
 * in the upper half of the first: the 82599's advanced receive descriptors
 * (82599 datasheet 7.1, 16 bytes) and the X710/XL710's 32-byte receive
 * descriptors (X710/XL710 datasheet 8.3).
 *
 * Everything is inlined into the driver's burst with its format a constant,
 * so that no test or call per packet is added by the sharing (bench/nic
 * measures it).
 *
 * Single-threaded: one queue, one thread.
 */
#ifndef SLUICE_DRIVERS_PCI_RX_RING_H
#define SLUICE_DRIVERS_PCI_RX_RING_H

#include <stdalign.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#if defined(__SSE4_1__)
#include <smmintrin.h>
#endif

#include "drivers/device.h"
#include "drivers/pci/io_barrier.h"
#include "drivers/pci/pci.h"
#include "drivers/pci/rx_chain.h"
#include "graph/buffer.h"
#include "graph/node.h"

#define PCI_RX_BURST_MAX 256 /* descriptors looked at per rx burst */
#define PCI_RX_CHUNK 32      /* pci_rx_full's unit: a chunk whose last descriptor reads done */

/* One rx queue's software side. */
struct pci_rxq {
	alignas(64) volatile void *ring; /* the descriptors (the driver's type) */
	uint32_t *bufs;       /* buffer armed in each descriptor */
	struct pci_io *io;
	uint64_t iova_data0;  /* IOVA of buffer 0's data area; + index * stride */
	uint32_t stride;
	uint32_t mask;
	uint32_t next;        /* next descriptor to look at */
	uint32_t tail_reg;    /* the tail register's offset (RDT, QRX_TAIL) */
	struct rx_chain chain; /* the frame being assembled (across bursts) */
	uint32_t fresh[PCI_RX_BURST_MAX];
};

/* A driver's descriptor format. q1 is the written-back second quadword. */
struct pci_rx_fmt {
	uint32_t desc_size; /* bytes */
	uint64_t dd, eop, rxe; /* bits of q1: done, end of frame, receive error */
	/* The frame's length in this descriptor's buffer. */
	uint16_t (*len)(uint64_t q1);
	/* The same, read from the written-back descriptor d itself (the
	 * fast path: a narrow load of the length's bytes, no shift where the
	 * field is byte-aligned). */
	uint16_t (*len_at)(volatile const uint64_t *d);
	/* The length's place in q1, for the fast path with SSE (lengths of
	 * two descriptors from their status quadwords at once): its lowest bit
	 * and its mask (at most 16 bits). Above dd and eop: the lengths are
	 * read from the quadwords XORed with them (pci_rx_ok4). */
	uint8_t len_shift;
	uint16_t len_mask;
	/* Keep the NIC's RSS hash in b when the descriptor d carries one. */
	void (*hash)(struct buffer *b, volatile const uint64_t *d, uint64_t q1);
	/* A chained frame's hash is in its last descriptor (else its first). */
	bool hash_at_eop;
};

static inline volatile uint64_t *pci_rx_desc(volatile void *ring, uint32_t desc_size, uint32_t slot)
{
	return (volatile uint64_t *)((volatile uint8_t *)ring + (size_t)slot * desc_size);
}

/* Arm descriptor d with the buffer at IOVA iova. */
static inline void pci_rx_arm(volatile uint64_t *d, uint64_t iova)
{
	d[0] = iova;
	d[1] = 0; /* DD lands here: clear before handing back */
}

/* How many descriptors from next the NIC has finished, in order, at most
 * n: four DD bits at a time up to the ring's end, then one by one. Only
 * the status quadword is read (DD, EOP and the errors are written back in
 * it together; the rest of a descriptor only after pci_io_rmb). *all and
 * *any get the AND and the OR of the status quadwords of those counted:
 * every one a whole frame without error is (all & eop) && !(any & rxe),
 * the fast path's test for the batch, judged in this same pass. */
__attribute__((always_inline)) static inline uint32_t pci_rx_scan(const struct pci_rxq *rq, uint32_t n,
								 const struct pci_rx_fmt *f, uint64_t *all,
								 uint64_t *any)
{
	uint32_t mask = rq->mask, next = rq->next, sz = f->desc_size;
	uint32_t c = 0, lim = MIN(n, mask + 1 - next) & ~3u;
	uint64_t a = ~0ull, o = 0;
#if defined(__SSE4_1__)
	/* The four status quadwords as two pairs; one PTEST says whether DD
	 * is set in all four (its carry: no DD bit clear in their AND). Plain
	 * (not volatile) loads, each read once here; pci_io_rmb after the
	 * scan keeps every later read of the descriptors after them. */
	__m128i va = _mm_set1_epi64x(-1), vo = _mm_setzero_si128(), vdd = _mm_set1_epi64x((int64_t)f->dd);
	for (volatile uint64_t *d = pci_rx_desc(rq->ring, sz, next); c < lim; c += 4, d += sz / 2) {
		const uint64_t *p = (const uint64_t *)(uintptr_t)d;
		__m128i s01 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)&p[1]),
						 _mm_loadl_epi64((const __m128i *)&p[sz / 8 + 1]));
		__m128i s23 = _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)&p[2 * sz / 8 + 1]),
						 _mm_loadl_epi64((const __m128i *)&p[3 * sz / 8 + 1]));
		__m128i a4 = _mm_and_si128(s01, s23);
		if (!_mm_testc_si128(a4, vdd))
			break;
		va = _mm_and_si128(va, a4);
		vo = _mm_or_si128(vo, _mm_or_si128(s01, s23));
	}
	a = (uint64_t)_mm_cvtsi128_si64(va) & (uint64_t)_mm_extract_epi64(va, 1);
	o = (uint64_t)_mm_cvtsi128_si64(vo) | (uint64_t)_mm_extract_epi64(vo, 1);
#else
	for (volatile uint64_t *d = pci_rx_desc(rq->ring, sz, next); c < lim; c += 4, d += sz / 2) {
		uint64_t s0 = d[1], s1 = d[sz / 8 + 1], s2 = d[2 * sz / 8 + 1], s3 = d[3 * sz / 8 + 1];
		uint64_t a4 = s0 & s1 & s2 & s3;
		if (!(a4 & f->dd))
			break;
		a &= a4;
		o |= s0 | s1 | s2 | s3;
	}
#endif
	for (; c < n; c++) {
		uint64_t s = pci_rx_desc(rq->ring, sz, (next + c) & mask)[1];
		if (!(s & f->dd))
			break;
		a &= s;
		o |= s;
	}
	*all = a;
	*any = o;
	return c;
}

__attribute__((always_inline)) static inline uint32_t pci_rx_done(const struct pci_rxq *rq, uint32_t n,
								 const struct pci_rx_fmt *f)
{
	uint64_t all, any;
	return pci_rx_scan(rq, n, f, &all, &any);
}

/* The fast path over n descriptors in a row from d (no wrap), every one
 * already judged a whole frame without error (pci_rx_scan): each frame's
 * buffer goes to out[], its slot is re-armed with fresh[]. Four a turn, no
 * test per packet. rss: RSS is on (more than one rx queue), so frames may
 * carry a hash; without it the hash is never looked at. Measured (bench/nic,
 * one queue, burst 32, callgrind), a driver's rx burst less its
 * buffer_alloc: 36.1-39.2 instructions per packet one at a time with the
 * RSS test, 31.9-33.1 four at a time without it, judging in the DD scan
 * instead of here: see docs/nic.md.
 *
 * With SSE4.1 (the x86 build baseline): the four indices each way are one
 * 16-byte load and store, and the re-arm computes two IOVAs per multiply
 * (pmuludq) and writes each descriptor whole, address and the zeroed
 * status quadword, with one 16-byte store. Every length (and hash) is read
 * before its descriptor is re-armed. Other architectures take the scalar
 * loop. */
#if defined(__SSE4_1__)
/* Descriptor d re-armed with the IOVA in the low lane of a (its high lane
 * ignored): one 16-byte store of (iova, 0), DD cleared with it. Descriptors
 * are 16-byte aligned (rings are 4 KB aligned, 16 or 32 bytes each); the
 * store is ordered before the tail write by pci_io_wmb (a memory clobber
 * on x86, DMB OSHST on aarch64, whose build does not take this path). */
__attribute__((always_inline)) static inline void pci_rx_arm_lo(volatile uint64_t *d, __m128i a)
{
	_mm_store_si128((__m128i *)(uintptr_t)d, _mm_move_epi64(a));
}

/* The same with the high lane's IOVA. */
__attribute__((always_inline)) static inline void pci_rx_arm_hi(volatile uint64_t *d, __m128i a)
{
	_mm_store_si128((__m128i *)(uintptr_t)d, _mm_unpackhi_epi64(a, _mm_setzero_si128()));
}
#endif

/* Buffer b_i gets the length of the frame in d (and its hash with rss). */
__attribute__((always_inline)) static inline void pci_rx_len(volatile uint64_t *d, uint32_t b_i, uint8_t *base,
							     uint64_t stride, bool rss, const struct pci_rx_fmt *f)
{
	struct buffer *b = (struct buffer *)(base + b_i * stride);
	b->current_length = f->len_at(d);
	if (rss)
		f->hash(b, d, d[1]);
}

/* The fast path one descriptor at a time: pci_rx_fast's last few, and
 * the part of a batch after the ring's end. */
__attribute__((always_inline)) static inline void pci_rx_fast1(volatile uint64_t *d, uint32_t *bufs,
								   const uint32_t *fresh, uint32_t *out, uint32_t n,
								   uint8_t *base, uint64_t stride, uint64_t iova0,
								   bool rss, const struct pci_rx_fmt *f)
{
	for (uint32_t i = 0; i < n; i++, d += f->desc_size / 8) {
		uint32_t o = bufs[i], r = fresh[i];
		out[i] = o;
		bufs[i] = r;
		pci_rx_len(d, o, base, stride, rss, f);
		pci_rx_arm(d, iova0 + r * stride);
	}
}

#if defined(__SSE4_1__)
/* The status quadwords of descriptors d and d + 1 (q quadwords apart) as
 * one register's lanes: plain loads (pci_rx_scan says why). */
__attribute__((always_inline)) static inline __m128i pci_rx_status2(volatile uint64_t *d, uint32_t q)
{
	const uint64_t *p = (const uint64_t *)(uintptr_t)d;
	return _mm_unpacklo_epi64(_mm_loadl_epi64((const __m128i *)&p[1]),
				  _mm_loadl_epi64((const __m128i *)&p[q + 1]));
}

/* Four descriptors' status quadwords (two pairs) each done (DD), one whole
 * frame (EOP) and without error (RXE): XORed with DD | EOP, ORed, and one
 * PTEST against DD | EOP | RXE. pci_rx_fast's test when it judges as it
 * takes (check). */
__attribute__((always_inline)) static inline bool pci_rx_ok4(__m128i *s01, __m128i *s23, const struct pci_rx_fmt *f)
{
	const __m128i w = _mm_set1_epi64x((int64_t)(f->dd | f->eop)),
		      m = _mm_set1_epi64x((int64_t)(f->dd | f->eop | f->rxe));
	/* XORed in place: the lengths (above bit 31) are read from them
	 * after, unchanged, and the registers need no copies. */
	*s01 = _mm_xor_si128(*s01, w);
	*s23 = _mm_xor_si128(*s23, w);
	return _mm_testz_si128(_mm_or_si128(*s01, *s23), m);
}

/* The lengths in four status quadwords (two pairs, s01 and s23): where
 * the field is bits 47:32 (the 82599's) the quadwords as they are (*l01,
 * *l23); else their upper halves gathered into one register (SHUFPS),
 * shifted and masked once for the four (*l01). pci_rx_len_k takes each
 * out with one PEXTRW. The field lies in the upper half (len_shift >= 32,
 * and len_shift - 32 + its width <= 32). */
#define PCI_RX_LEN_W32(f) ((f)->len_shift == 32 && (f)->len_mask == 0xffff)
__attribute__((always_inline)) static inline void pci_rx_len4(__m128i s01, __m128i s23, __m128i *l01, __m128i *l23,
							      const struct pci_rx_fmt *f)
{
	if (PCI_RX_LEN_W32(f)) {
		*l01 = s01;
		*l23 = s23;
		return;
	}
	__m128i hi = _mm_castps_si128(
		_mm_shuffle_ps(_mm_castsi128_ps(s01), _mm_castsi128_ps(s23), _MM_SHUFFLE(3, 1, 3, 1)));
	*l01 = _mm_and_si128(_mm_srli_epi32(hi, f->len_shift - 32), _mm_set1_epi32(f->len_mask));
	*l23 = *l01;
}

/* Descriptor k's (0..3) length from pci_rx_len4. */
__attribute__((always_inline)) static inline uint16_t pci_rx_len_k(__m128i l01, __m128i l23, int k,
								  const struct pci_rx_fmt *f)
{
	if (PCI_RX_LEN_W32(f))
		return (uint16_t)(k == 0 ? _mm_extract_epi16(l01, 2)
				  : k == 1 ? _mm_extract_epi16(l01, 6)
				  : k == 2 ? _mm_extract_epi16(l23, 2)
					   : _mm_extract_epi16(l23, 6));
	return (uint16_t)(k == 0 ? _mm_extract_epi16(l01, 0)
			  : k == 1 ? _mm_extract_epi16(l01, 2)
			  : k == 2 ? _mm_extract_epi16(l01, 4)
				   : _mm_extract_epi16(l01, 6));
}
#else
/* The same test, scalar (pci_rx_fast without SSE). */
__attribute__((always_inline)) static inline bool pci_rx_ok4(volatile uint64_t *d, const struct pci_rx_fmt *f)
{
	uint32_t q = f->desc_size / 8;
	const uint64_t *p = (const uint64_t *)(uintptr_t)d;
	uint64_t w = f->dd | f->eop;
	return !(((p[1] ^ w) | (p[q + 1] ^ w) | (p[2 * q + 1] ^ w) | (p[3 * q + 1] ^ w)) & (w | f->rxe));
}
#endif

/* Buffer b_i gets the length len (and, with rss, the hash of the frame in
 * d). */
__attribute__((always_inline)) static inline void pci_rx_len_v(volatile uint64_t *d, uint32_t b_i, uint16_t len,
							       uint8_t *base, uint64_t stride, bool rss,
							       const struct pci_rx_fmt *f)
{
	struct buffer *b = (struct buffer *)(base + b_i * stride);
	b->current_length = len;
	if (rss)
		f->hash(b, d, d[1]);
}

/* check: n is a multiple of four not yet judged; each four is judged
 * first (pci_rx_ok4) and the loop stops at the first four that is not all
 * fast-path frames. Returns how many descriptors it took. */
__attribute__((always_inline)) static inline uint32_t pci_rx_fast(volatile uint64_t *d, uint32_t *bufs,
								  const uint32_t *fresh, uint32_t *out, uint32_t n,
								  uint8_t *base, uint64_t stride, uint64_t iova0,
								  bool rss, bool check, const struct pci_rx_fmt *f)
{
	uint32_t q = f->desc_size / 8, i = 0;
#if defined(__SSE4_1__)
	const __m128i vs = _mm_set1_epi64x((int64_t)stride), vi = _mm_set1_epi64x((int64_t)iova0);
	/* One 64-bit counter to the last whole four, by != (with a 32-bit
	 * i + 4 <= n the compiler kept two, and widened them each turn). */
	size_t k = 0;
	for (size_t n4 = n & ~3u; k != n4; k += 4, d += 4 * q) {
		/* The status quadwords, where the lengths are too: with check
		 * the same loads that showed DD (the NIC writes DD, EOP, the
		 * errors and the length back in one quadword: 82599 datasheet
		 * 7.1.6.2, X710/XL710 datasheet 8.3.2.1); without it, the
		 * batch's DD was read first (pci_rx_scan, pci_io_rmb). */
		__m128i s01 = pci_rx_status2(d, q), s23 = pci_rx_status2(d + 2 * q, q);
		if (check) {
			if (!pci_rx_ok4(&s01, &s23, f))
				return (uint32_t)k;
			pci_io_rmb(); /* the rest of the four (the hash) after their DD */
		}
		__m128i o = _mm_loadu_si128((const __m128i *)&bufs[k]);
		__m128i r = _mm_loadu_si128((const __m128i *)&fresh[k]);
		_mm_storeu_si128((__m128i *)&out[k], o);
		_mm_storeu_si128((__m128i *)&bufs[k], r);
		__m128i l01, l23;
		pci_rx_len4(s01, s23, &l01, &l23, f);
		pci_rx_len_v(d, (uint32_t)_mm_cvtsi128_si32(o), pci_rx_len_k(l01, l23, 0, f), base, stride, rss, f);
		pci_rx_len_v(d + q, (uint32_t)_mm_extract_epi32(o, 1), pci_rx_len_k(l01, l23, 1, f), base, stride,
			     rss, f);
		pci_rx_len_v(d + 2 * q, (uint32_t)_mm_extract_epi32(o, 2), pci_rx_len_k(l01, l23, 2, f), base,
			     stride, rss, f);
		pci_rx_len_v(d + 3 * q, (uint32_t)_mm_extract_epi32(o, 3), pci_rx_len_k(l01, l23, 3, f), base,
			     stride, rss, f);
		/* (r0, r2) and (r1, r3) as 64-bit lanes (PMULUDQ reads each
		 * lane's low half: r as it is, and shifted by 32), times the
		 * stride, plus buffer 0's data IOVA. */
		__m128i a02 = _mm_add_epi64(_mm_mul_epu32(r, vs), vi);
		__m128i a13 = _mm_add_epi64(_mm_mul_epu32(_mm_srli_epi64(r, 32), vs), vi);
		pci_rx_arm_lo(d, a02);
		pci_rx_arm_lo(d + q, a13);
		pci_rx_arm_hi(d + 2 * q, a02);
		pci_rx_arm_hi(d + 3 * q, a13);
	}
	i = (uint32_t)k;
#else
	for (; i + 4 <= n; i += 4, d += 4 * q) {
		if (check) {
			if (!pci_rx_ok4(d, f))
				return i;
			pci_io_rmb(); /* the rest of the four after their DD */
		}
		/* The four indices each way in one 16-byte copy. */
		uint32_t o[4], r[4];
		memcpy(o, &bufs[i], sizeof(o));
		memcpy(r, &fresh[i], sizeof(r));
		memcpy(&out[i], o, sizeof(o));
		memcpy(&bufs[i], r, sizeof(r));
		for (uint32_t k = 0; k < 4; k++) {
			pci_rx_len(d + k * q, o[k], base, stride, rss, f);
			pci_rx_arm(d + k * q, iova0 + r[k] * stride);
		}
	}
#endif
	if (!check)
		pci_rx_fast1(d, bufs + i, fresh + i, out + i, n - i, base, stride, iova0, rss, f);
	return n;
}

/* Descriptors i..c-1 of the batch one by one: frames over several buffers,
 * errors, frames without a replacement buffer. Returns the frames handed to
 * bi[] from n_out on. Out of line (the rare path): the bursts keep fewer
 * values live. */
__attribute__((noinline)) static uint32_t pci_rx_slow(struct device *dev, uint16_t queue,
								 struct pci_rxq *rq, uint32_t i, uint32_t c,
								 uint32_t got, uint32_t *bi, uint32_t n_out,
								 const struct pci_rx_fmt *f)
{
	uint32_t mask = rq->mask, next = rq->next;
	for (; i < c; i++) {
		uint32_t slot = (next + i) & mask;
		volatile uint64_t *d = pci_rx_desc(rq->ring, f->desc_size, slot);
		uint64_t q1 = d[1];
		uint32_t b_i = rq->bufs[slot];
		if (likely(i < got)) {
			rq->bufs[slot] = rq->fresh[i];
			struct buffer *b = buffer_get(b_i);
			b->current_length = f->len(q1);
			if (!f->hash_at_eop && rq->chain.head == BUFFER_INVALID)
				f->hash(b, d, q1);
			rx_chain_add(&rq->chain, b_i);
		} else {
			rq->chain.drop = true; /* no replacement: the frame is lost, the buffer stays */
		}
		if (unlikely(q1 & f->rxe))
			rq->chain.error = true;
		if ((q1 & f->eop) && f->hash_at_eop && rq->chain.head != BUFFER_INVALID)
			f->hash(buffer_get(rq->chain.head), d, q1);
		pci_rx_arm(d, rq->iova_data0 + (uint64_t)rq->bufs[slot] * rq->stride);
		if (q1 & f->eop)
			n_out += rx_chain_end(&rq->chain, dev, queue, &bi[n_out]);
	}
	return n_out;
}

/* Whether the NIC is done with the queue's next descriptor: one status
 * read, before anything else of the queue is loaded (a polled queue is often
 * empty). A driver tests it in its rx burst and calls the rest
 * (pci_rx_burst, in a function of its own) only when it holds, so that an
 * empty poll saves no registers and sets nothing up. */
__attribute__((always_inline)) static inline bool pci_rx_ready(const struct pci_rxq *rq, const struct pci_rx_fmt *f)
{
	return pci_rx_desc(rq->ring, f->desc_size, rq->next)[1] & f->dd;
}

/* A driver's rx burst: batch (the driver's function around pci_rx_burst,
 * not inlined) only once the next descriptor reads done, so that an empty
 * poll costs one status read and no prologue. */
__attribute__((always_inline)) static inline uint32_t pci_rx_poll(struct device *dev, uint16_t queue,
								 struct pci_rxq *rq, uint32_t *bi, uint32_t n,
								 const struct pci_rx_fmt *f,
								 uint32_t (*batch)(struct device *, uint16_t,
										   struct pci_rxq *, uint32_t *,
										   uint32_t))
{
	if (!pci_rx_ready(rq, f))
		return 0;
	/* The queue goes in too: the batch does not find it again. */
	uint32_t got = batch(dev, queue, rq, bi, n);
	/* A call, not a jump: bench/nic counts the batch inside the burst
	 * (a tail call would charge it to the burst's caller). Two
	 * instructions. */
	__asm__("" : "+r"(got));
	return got;
}

/* One tail write naming the last descriptor handed back, after the
 * re-armed descriptors (the NIC owns every descriptor up to the tail: 82599
 * datasheet 7.1, X710/XL710 datasheet 8.3): the barrier orders the tail
 * write after them. */
__attribute__((always_inline)) static inline void pci_rx_tail(struct pci_rxq *rq, uint32_t next)
{
	rq->next = next;
	pci_io_wmb();
	pci_write32(rq->io, rq->tail_reg, (next - 1) & rq->mask);
}

/* A whole burst of n descriptors (a multiple of four, before the ring's
 * end) whose last reads done: n replacements first, then the fast path
 * judging each four as it takes them (pci_rx_ok4: DD, EOP and no RXE
 * before anything else of them is read). The NIC writes descriptors back
 * in order, so usually every four passes; from the first four that does not
 * (a chain, an error, a descriptor not yet done) the descriptors done are
 * counted and go through the slow path with the replacements left, and
 * those left over go back to the pool (reset, as buffer_alloc gave them).
 * UINT32_MAX: fewer than n replacements; nothing taken, the caller's
 * path allocates for what is done and drops what gets none. */
__attribute__((always_inline)) static inline uint32_t pci_rx_full(struct device *dev, uint16_t queue,
								 struct pci_rxq *rq, uint32_t *bi, uint32_t n,
								 const struct pci_rx_fmt *f)
{
	uint32_t next = rq->next;
	uint32_t got = buffer_alloc(rq->fresh, n, -1);
	if (unlikely(got < n)) {
		buffer_free(rq->fresh, got);
		return UINT32_MAX;
	}
	volatile uint64_t *d0 = pci_rx_desc(rq->ring, f->desc_size, next);
	uint8_t *base = buffer_main.base;
	uint64_t stride = rq->stride, iova0 = rq->iova_data0;
	uint32_t i = dev->n_rx_queues > 1
			     ? pci_rx_fast(d0, &rq->bufs[next], rq->fresh, bi, n, base, stride, iova0, true, true, f)
			     : pci_rx_fast(d0, &rq->bufs[next], rq->fresh, bi, n, base, stride, iova0, false, true, f);
	uint32_t n_out = i;
	if (unlikely(i < n)) {
		/* From descriptor i on: those done, one by one. */
		rq->next = next + i;
		uint64_t all, any;
		uint32_t c = i + pci_rx_scan(rq, n - i, f, &all, &any);
		rq->next = next;
		pci_io_rmb(); /* the rest of each descriptor after DD */
		n_out = pci_rx_slow(dev, queue, rq, i, c, n, bi, i, f);
		if (c < n)
			buffer_free_reset(rq->fresh + c, n - c);
		i = c;
	}
	pci_rx_tail(rq, (next + i) & rq->mask);
	return n_out;
}

static inline uint32_t pci_rx_take(struct device *dev, uint16_t queue, struct pci_rxq *rq, uint32_t *bi,
				   uint32_t n, const struct pci_rx_fmt *f);

/* The rx burst (struct device_ops rx_burst) of a queue whose descriptors
 * have format f. Drivers call it once the next descriptor reads done
 * (pci_rx_poll): it does not test that again (nothing done still returns 0,
 * through pci_rx_take's count). */
__attribute__((always_inline)) static inline uint32_t pci_rx_burst(struct device *dev, uint16_t queue,
								  struct pci_rxq *rq, uint32_t *bi, uint32_t n,
								  const struct pci_rx_fmt *f)
{
	n = MIN(n, (uint32_t)PCI_RX_BURST_MAX);
	uint32_t n_out = 0;
	/* Whole chunks of PCI_RX_CHUNK waiting (each chunk's last descriptor
	 * reads done, before the ring's end, no frame in progress): judged as
	 * they are taken (pci_rx_full). What is done after them takes the
	 * path below. */
	if (likely(rq->chain.head == BUFFER_INVALID)) {
		volatile void *ring = rq->ring;
		uint32_t next = rq->next, lim = MIN(n, rq->mask + 1 - next), want = 0;
		/* more: something may be done after the chunks (the descriptor
		 * after them read done, or the ring's end reached first). */
		bool more = true;
		while (want + PCI_RX_CHUNK <= lim &&
		       (pci_rx_desc(ring, f->desc_size, next + want + PCI_RX_CHUNK - 1)[1] & f->dd)) {
			want += PCI_RX_CHUNK;
			if (want == n || (want < lim && !(pci_rx_desc(ring, f->desc_size, next + want)[1] & f->dd))) {
				more = false;
				break;
			}
		}
		if (want) {
			uint32_t got = pci_rx_full(dev, queue, rq, bi, want, f);
			if (got != UINT32_MAX) {
				if (!more)
					return got;
				n_out = got;
				bi += got;
				n -= want;
			}
		}
	}
	return n_out + pci_rx_take(dev, queue, rq, bi, n, f);
}

/* pci_rx_burst's path for any batch: the descriptors done counted first
 * (pci_rx_scan), their replacements in one allocation, then the fast path
 * or the slow one. */
__attribute__((always_inline)) static inline uint32_t pci_rx_take(struct device *dev, uint16_t queue,
								 struct pci_rxq *rq, uint32_t *bi, uint32_t n,
								 const struct pci_rx_fmt *f)
{
	uint32_t mask = rq->mask, next = rq->next;
	uint64_t all, any;
	/* DD before anything else of a descriptor is used (82599 datasheet
	 * 7.1.9 and X710/XL710 datasheet 8.3: the NIC sets DD when it has
	 * written the descriptor back). */
	uint32_t c = pci_rx_scan(rq, n, f, &all, &any);
	if (!c)
		return 0;
	pci_io_rmb(); /* the rest of each descriptor after DD */
	uint32_t got = buffer_alloc(rq->fresh, c, -1);

	/* Fast path: every descriptor a whole frame (EOP) without error (RXE;
	 * a frame over several descriptors and the error bits are the slow
	 * path's: 82599 datasheet 7.1, X710/XL710 datasheet 8.3),
	 * a replacement for each and no frame in progress, in at most two runs
	 * (before and after the ring's end); anything else takes the whole
	 * batch through the slow path (chains, errors counted, drops). The
	 * queue's fields go in as values: with -fno-strict-aliasing every store
	 * through a buffer would reload them. */
	uint32_t n_out;
	if (likely((all & f->eop) && !(any & f->rxe) && got == c && rq->chain.head == BUFFER_INVALID)) {
		volatile void *ring = rq->ring;
		uint8_t *base = buffer_main.base;
		uint64_t stride = rq->stride, iova0 = rq->iova_data0;
		uint32_t run = MIN(c, mask + 1 - next);
		volatile uint64_t *d0 = pci_rx_desc(ring, f->desc_size, next), *d1 = pci_rx_desc(ring, f->desc_size, 0);
		bool rss = dev->n_rx_queues > 1;
		if (rss)
			pci_rx_fast(d0, &rq->bufs[next], rq->fresh, bi, run, base, stride, iova0, true, false, f);
		else
			pci_rx_fast(d0, &rq->bufs[next], rq->fresh, bi, run, base, stride, iova0, false, false, f);
		/* The part after the ring's end, if the batch wraps (rarely:
		 * not inlined a second time). */
		if (unlikely(run < c))
			pci_rx_fast1(d1, rq->bufs, rq->fresh + run, bi + run, c - run, base, stride, iova0, rss, f);
		n_out = c;
	} else {
		n_out = pci_rx_slow(dev, queue, rq, 0, c, got, bi, 0, f);
	}
	pci_rx_tail(rq, (next + c) & mask);
	return n_out;
}

#endif
