/* bench/timers/pass.h: how a pass is timed and which delays it draws,
 * shared by timers.c (sluice) and peer_timer.c (rte_timer) so that both
 * sides are timed by the same code.
 *
 * A pass of n operations is timed as a whole (the mean, the figure
 * compared: ticks over operations, as DPDK's timer_perf_autotest reports)
 * and in chunks of PASS_CHUNK operations (the median chunk, printed beside:
 * it shows what the code costs when nothing preempts it). The chunks cost
 * two more clock reads per PASS_CHUNK operations, on both sides alike.
 */
#ifndef SLUICE_BENCH_TIMERS_PASS_H
#define SLUICE_BENCH_TIMERS_PASS_H

#include <stdint.h>
#include <stdlib.h>

#define PASS_CHUNK 1024

struct pass {
	uint64_t *chunk; /* room for n / PASS_CHUNK + 1 */
	uint32_t n_chunks;
	uint64_t total;
};

static inline int pass_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* The median full chunk per operation (the mean when no chunk is full). */
static inline double pass_median(struct pass *p, uint32_t n)
{
	if (!p->n_chunks)
		return (double)p->total / n;
	qsort(p->chunk, p->n_chunks, sizeof(uint64_t), pass_cmp_u64);
	return (double)p->chunk[p->n_chunks / 2] / PASS_CHUNK;
}

/* Time OP(k) for k in [0, n) with the clock TICKS() into *P. A macro, not a
 * function taking pointers: each side's operation is inlined into the loop,
 * with no indirect call in the timed code. */
#define PASS_TIME(P, N, TICKS, OP)                                                                       \
	do {                                                                                             \
		struct pass *p_ = (P);                                                                   \
		uint32_t n_ = (N);                                                                       \
		p_->n_chunks = 0;                                                                        \
		uint64_t start_ = TICKS();                                                               \
		for (uint32_t i_ = 0; i_ < n_; i_ += PASS_CHUNK) {                                       \
			uint32_t end_ = n_ - i_ < PASS_CHUNK ? n_ : i_ + PASS_CHUNK;                     \
			uint64_t t0_ = TICKS();                                                          \
			for (uint32_t k = i_; k < end_; k++)                                             \
				OP(k);                                                                   \
			if (end_ - i_ == PASS_CHUNK)                                                     \
				p_->chunk[p_->n_chunks++] = TICKS() - t0_;                               \
		}                                                                                        \
		p_->total = TICKS() - start_;                                                            \
	} while (0)

/* The re-arm delays, in ns in [0, 1 s): rand() after srand(1), drawn in the
 * same order on both sides, so both re-arm to the same spread. Two
 * statements: the order of two rand() calls in one expression is
 * unspecified. */
static inline uint32_t pass_delay_ns(void)
{
	uint64_t hi = (uint64_t)rand();
	uint64_t lo = (uint64_t)rand();
	return (uint32_t)((hi << 16 ^ lo) % 1000000000ull);
}

#endif
