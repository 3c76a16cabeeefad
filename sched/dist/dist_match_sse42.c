/* The tag matcher with SSE4.2 (meson builds this file when the target has
 * it but not AVX2): no gather, so the 8 owners are scalar loads; the
 * duplicate search is the vector part (dist_match_x86.h). */
#include "sched/dist/dist_match_x86.h"

const char dist_match_vector_isa[] = "sse4.2";

void dist_match_vector(const uint32_t *table, const uint16_t *tags, struct dist_match *m)
{
	__m128i t = match_load_tags(tags);
	/* Unrolled: the counted loop cost 3 instructions a lane (callgrind). */
#pragma GCC unroll 8
	for (uint32_t i = 0; i < 8; i++)
		m->owner[i] = (uint8_t)DIST_E_OWNER(table[tags[i] & HANDOFF_TAG_MASK]);
	match_lead(t, m->lead);
}
