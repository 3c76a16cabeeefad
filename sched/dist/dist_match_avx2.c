/* The tag matcher with AVX2 (meson builds this file when the target has
 * it): one gather reads the 8 lanes' flow table entries, one byte shuffle
 * and permute pull their owner bytes together; duplicates as in
 * dist_match_x86.h. */
#include "sched/dist/dist_match_x86.h"

const char dist_match_vector_isa[] = "avx2";

void dist_match_vector(const uint32_t *table, const uint16_t *tags, struct dist_match *m)
{
	__m128i t = match_load_tags(tags);
	__m256i e = _mm256_i32gather_epi32((const int *)table, _mm256_cvtepu16_epi32(t), 4);
	/* Byte 2 of each entry is its owner: bytes 0..3 of each 128-bit half. */
	const __m256i pick = _mm256_setr_epi8(2, 6, 10, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, 2, 6,
					      10, 14, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1);
	__m256i o = _mm256_shuffle_epi8(e, pick);
	o = _mm256_permutevar8x32_epi32(o, _mm256_setr_epi32(0, 4, 1, 1, 1, 1, 1, 1));
	_mm_storel_epi64((__m128i *)m->owner, _mm256_castsi256_si128(o));
	match_lead(t, m->lead);
}
