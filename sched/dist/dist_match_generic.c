/* The build's matcher on targets with neither AVX2 nor SSE4.2 (meson picks
 * this file then): the scalar code under the vector name. */
#include "sched/dist/dist_private.h"

const char dist_match_vector_isa[] = "scalar";

void dist_match_vector(const uint32_t *table, const uint16_t *tags, struct dist_match *m)
{
	dist_match_scalar(table, tags, m);
}
