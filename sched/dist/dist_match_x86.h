/* The part of the x86 matchers both builds share: in-chunk duplicates. */
#ifndef SLUICE_NODES_DIST_MATCH_X86_H
#define SLUICE_NODES_DIST_MATCH_X86_H

#include <immintrin.h>

#include "sched/dist/dist_private.h"

/* lead[i] = the first lane j <= i holding lane i's tag. Lane i is compared
 * with lane i - k for k = 1..7 (the lanes shifted in from below are 0xffff,
 * which no 15-bit tag equals); a later, larger k overrides, so the smallest
 * j wins. 7 x (align, compare, blend) for 8 lanes instead of 28 scalar
 * compares. */
static inline void match_lead(__m128i t, uint8_t *lead)
{
	const __m128i ones = _mm_set1_epi16(-1);
	const __m128i iota = _mm_setr_epi16(0, 1, 2, 3, 4, 5, 6, 7);
	__m128i l = iota;
#define LEAD_STEP(k)                                                                                \
	do {                                                                                        \
		__m128i sh = _mm_alignr_epi8(t, ones, 16 - 2 * (k));                                \
		__m128i eq = _mm_cmpeq_epi16(t, sh);                                                \
		l = _mm_blendv_epi8(l, _mm_sub_epi16(iota, _mm_set1_epi16(k)), eq);                 \
	} while (0)
	LEAD_STEP(1);
	LEAD_STEP(2);
	LEAD_STEP(3);
	LEAD_STEP(4);
	LEAD_STEP(5);
	LEAD_STEP(6);
	LEAD_STEP(7);
#undef LEAD_STEP
	_mm_storel_epi64((__m128i *)lead, _mm_packus_epi16(l, l));
}

static inline __m128i match_load_tags(const uint16_t *tags)
{
	return _mm_and_si128(_mm_loadu_si128((const __m128i *)tags), _mm_set1_epi16(HANDOFF_TAG_MASK));
}

#endif
