/* The buffer pool and class priorities the tests/sched unit suites of one
 * scheduler object share (test_egress.c, test_hqos.c): n buffers of
 * data_size bytes (0: the default), every class at the lowest priority,
 * and at the end the pool whole. The suite defines tag_of(bi) before
 * including this file; sched_took checks a dequeue. */
#ifndef SLUICE_TESTS_SCHED_POOL_H
#define SLUICE_TESTS_SCHED_POOL_H

#include <check.h>

#include "graph/buffer.h"
#include "sched/egress.h"

static uint8_t prio[SCHED_MAX_CLASSES];

static inline void sched_pool_up(uint32_t n, uint32_t data_size)
{
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = n;
	if (data_size)
		bc.data_size = data_size;
	bc.page_size = 4096;
	ck_assert_msg(buffer_main_init(&bc, err, sizeof(err)) == 0, "%s", err);
	for (uint32_t c = 0; c < SCHED_MAX_CLASSES; c++)
		prio[c] = SCHED_PRIO_LOWEST;
}

static inline void sched_pool_down(void)
{
	buffer_thread_unregister();
	ck_assert_uint_eq(buffer_n_in_use(), 0);
	buffer_main_free();
}

/* A dequeue at now gave got packets in out, n expected: frees them and
 * returns the first's tag (-1: none). */
static inline int sched_took(uint32_t *out, uint32_t got, uint64_t now, uint32_t n)
{
	ck_assert_msg(got == n, "at %llu ns: %u released, expected %u", (unsigned long long)now, got, n);
	int first = got ? (int)tag_of(out[0]) : -1;
	buffer_free(out, got);
	return first;
}

#endif
