/* The tag matcher in plain C: the reference every vector build must agree
 * with (tests/dist checks them on random chunks), and the whole matcher on
 * targets with neither AVX2 nor SSE4.2. */
#include "sched/dist/dist_private.h"

void dist_match_scalar(const uint32_t *table, const uint16_t *tags, struct dist_match *m)
{
	for (uint32_t i = 0; i < 8; i++) {
		uint32_t t = tags[i] & HANDOFF_TAG_MASK;
		m->owner[i] = (uint8_t)DIST_E_OWNER(table[t]);
		uint32_t j = 0;
		while ((tags[j] & HANDOFF_TAG_MASK) != t)
			j++;
		m->lead[i] = (uint8_t)j;
	}
}
