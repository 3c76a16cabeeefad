/* Network impairment with Linux netem's semantics (tc-netem(8)), as one
 * self-contained stage that holds packets until their departure time.
 *
 * An impairer takes packets at a time `now`, decides per packet, in
 * netem's order:
 *   1. duplicate (probability, correlation): one more copy, in a fresh
 *      buffer, that then goes through 2-5 itself with duplication off;
 *   2. loss: `random P [C]` or the Gilbert-Elliott chain `gemodel p r 1-h
 *      1-k` (state moves first, then the packet is lost with 1-k in Good,
 *      1-h in Bad); a lost packet goes to the caller's drop list;
 *   3. corrupt (probability): the packet moves to a fresh buffer with one
 *      random bit of its first buffer's data flipped;
 *   4. the limit (max-held): over it, dropped;
 *   5. its departure time: reorder gives a share of packets (after the
 *      first gap-1 since the last reordered one) departure `now`, sent at
 *      once ahead of the held ones; every other packet departs at
 *      now + delay + jitter drawn from the distribution (uniform, or
 *      normal, pareto, paretonormal in units of the jitter, as netem's
 *      tables); with a rate, the packet also waits its serialisation time,
 *      (frame bytes + packet-overhead) * 8 / rate, behind the latest
 *      departure held (netem's rate: departures never reorder then).
 *   Without a rate, jitter reorders packets as in netem (its queue is kept
 *   in time order).
 * "Correlation" is netem's: each draw is (1-rho) * fresh + rho * previous.
 *
 * Held packets sit in a two-level timing wheel (Carousel): 2^14 slots of
 * 1.024 us (16.7 ms) for departures within that horizon, 2^10 pages of
 * 16.7 ms beyond it (17 s; further still, parked in the last page and
 * re-filed when it comes round). A packet departs at its time or later,
 * never earlier: the slot of `now` is filtered packet by packet. Each
 * released packet adds its lateness (now - departure) to a histogram.
 *
 * Random numbers: xoshiro256** seeded through splitmix64 from `seed` (the
 * same seed and the same packets give the same decisions). Distribution
 * draws are a table lookup with linear interpolation into a 4097-point
 * inverse CDF built once (libm at build time only, never per packet).
 *
 * A slot holds its packets' indices in 64-byte chunks of 14, linked, from
 * a pool allocated when an impairment is first set (or at the first
 * enqueue) and grown by set_max_held, sized for max_held however the
 * packets spread: 64 B x (min(H, H/14 + 2 min(H, 17408)) + 2) for
 * max_held H (262 KB at 4096, 2.5 MB at 65536). A held packet's departure
 * time is in timestamp_ns from enqueue on (the test hook: a test reads it
 * there); the rest of its header is untouched.
 * A dropped packet carries its reason in opaque[4]
 * (sched_impair_drop_reason).
 *
 * Attach point: anything that owns packets and a clock can hold an
 * impairer (an interface's schedule, a class on it, a subscriber): it
 * calls enqueue with the packets, dequeue when next_ns comes, and counts
 * what it gets back. The impairer knows no interface, class or node.
 *
 * Thread-safety: one owner thread (or the control thread with the owner
 * parked); sched_impair_stats from any thread (relaxed reads).
 */
#ifndef SLUICE_SCHED_IMPAIR_H
#define SLUICE_SCHED_IMPAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/buffer.h"

#define SCHED_IMPAIR_P_ONE (1ull << 32) /* probability 1 (100%): events are rnd32 < p */
#define SCHED_IMPAIR_DELAY_MAX 10000000000ull /* 10 s, delay and jitter each */
#define SCHED_IMPAIR_OVERHEAD_MAX 4096
#define SCHED_IMPAIR_LATE_BUCKETS 16 /* [0,1us) [1,2us) [2,4us) ... [8.2ms,16.4ms) [16.4ms,inf) */

enum sched_impair_dist {
	SCHED_IMPAIR_DIST_UNIFORM = 0,
	SCHED_IMPAIR_DIST_NORMAL,
	SCHED_IMPAIR_DIST_PARETO,
	SCHED_IMPAIR_DIST_PARETONORMAL,
	SCHED_IMPAIR_N_DIST,
};
extern const char *const sched_impair_dist_names[SCHED_IMPAIR_N_DIST];

enum sched_impair_loss {
	SCHED_IMPAIR_LOSS_NONE = 0,
	SCHED_IMPAIR_LOSS_RANDOM,
	SCHED_IMPAIR_LOSS_GEMODEL,
};

/* Why a packet was dropped (opaque[4] of a dropped buffer). */
enum sched_impair_drop {
	SCHED_IMPAIR_DROP_LOSS_RANDOM = 1,
	SCHED_IMPAIR_DROP_LOSS_GEMODEL,
	SCHED_IMPAIR_DROP_MAX_HELD,
};

/* Probabilities and correlations are fractions of SCHED_IMPAIR_P_ONE. */
struct sched_impair_config {
	uint64_t delay_ns, jitter_ns, delay_corr;
	uint8_t dist;       /* enum sched_impair_dist */
	uint8_t loss_model; /* enum sched_impair_loss */
	uint64_t loss, loss_corr;                 /* random */
	uint64_t ge_p, ge_r, ge_1h, ge_1k;        /* gemodel: Good->Bad, Bad->Good, loss in Bad, loss in Good */
	uint64_t duplicate, duplicate_corr;
	uint64_t reorder, reorder_corr;
	uint32_t gap;                             /* 1 when reorder is set without gap (as tc) */
	uint64_t corrupt, corrupt_corr;
	uint64_t rate_bps;                        /* 0: none */
	int32_t packet_overhead;                  /* bytes added to each frame for the rate */
	uint64_t seed;                            /* 0: keep the generator's state */
};

struct sched_impair_stats {
	struct sched_impair_config cfg;
	uint32_t max_held;
	uint64_t held;
	uint64_t enqueued, released;
	uint64_t lost_random, lost_gemodel, over_max_held;
	uint64_t duplicated, duplicate_no_buffer;
	uint64_t reordered, corrupted, corrupt_no_buffer;
	uint64_t delayed;       /* given a departure after their arrival */
	uint64_t ge_bad_entries; /* Good -> Bad transitions */
	uint64_t late[SCHED_IMPAIR_LATE_BUCKETS];
};

struct sched_impair;

/* An impairer doing nothing (every packet departs at once) that holds at
 * most max_held packets. NULL with the reason in err. */
struct sched_impair *sched_impair_create(uint32_t max_held, uint64_t seed, char *err, size_t errlen);

/* Bytes the impairer holds (its wheel of held packets lives in their
 * buffers): `show memory`. */
size_t sched_impair_mem_bytes(const struct sched_impair *m);

/* Free it and every buffer it holds. */
void sched_impair_destroy(struct sched_impair *m);

/* Check a configuration: 0, or -EINVAL with the reason in err. */
int sched_impair_check(const struct sched_impair_config *c, char *err, size_t errlen);

/* Apply c (checked) to packets from now on; held packets keep their
 * times. A nonzero seed restarts the generator from it. -ENOMEM (nothing
 * changed) when the slots' pool cannot be allocated. */
int sched_impair_set(struct sched_impair *m, const struct sched_impair_config *c, char *err, size_t errlen);

/* Whether c impairs anything at all. */
bool sched_impair_active(const struct sched_impair_config *c);

/* 0, -EINVAL for 0, or -ENOMEM when the pool cannot grow (unchanged). */
int sched_impair_set_max_held(struct sched_impair *m, uint32_t max_held);

/* Take n packets at now. Dropped ones (lost, over max-held) go to
 * dropped[] (room for 2n), reason in opaque[4]; duplicates made (held or
 * dropped) go to dup[] (room for n), so the caller can count them in.
 * Returns the number dropped; *n_dup the duplicates. */
uint32_t sched_impair_enqueue(struct sched_impair *m, const uint32_t *bi, uint32_t n, uint64_t now_ns,
			      uint32_t *dropped, uint32_t *dup, uint32_t *n_dup);

/* Hand back up to max packets due at now, roughly in departure order
 * (exactly, between packets more than 1.024 us apart). Returns how many;
 * when it returns max, call again. */
uint32_t sched_impair_dequeue(struct sched_impair *m, uint64_t now_ns, uint32_t *out, uint32_t max);

/* The earliest departure held, UINT64_MAX when empty. */
uint64_t sched_impair_next_ns(struct sched_impair *m);

/* Hand back up to max held packets whatever their time (tear-down). */
uint32_t sched_impair_flush(struct sched_impair *m, uint32_t *out, uint32_t max);

uint32_t sched_impair_held(const struct sched_impair *m);

/* Buffers held, chains counted whole (owner thread or parked). */
uint64_t sched_impair_held_buffers(const struct sched_impair *m);

void sched_impair_stats(const struct sched_impair *m, struct sched_impair_stats *st);

static inline uint8_t sched_impair_drop_reason(const struct buffer *b)
{
	return b->opaque[4];
}

/* Parse netem-style words into c (zeroed first): any of
 *   delay D [jitter J [CORR]] | delay D [J [CORR]]
 *   distribution uniform|normal|pareto|paretonormal
 *   loss random P [CORR] | loss gemodel p [r [1-h [1-k]]]
 *   duplicate P [CORR]  reorder P [CORR] [gap N]  corrupt P [CORR]
 *   rate R [packet-overhead N]  seed N
 * P and CORR as percentages (1%, 0.5%). Defaults as tc: gemodel r = 1-p,
 * 1-h = 100%, 1-k = 0; reorder gap 1. Returns 0 or -EINVAL with the
 * offending word and what was expected in err. */
int sched_impair_parse(struct sched_impair_config *c, int argc, char **argv, char *err, size_t errlen);

/* c in the words sched_impair_parse takes ("delay 20ms jitter 5ms ... seed 7"),
 * the seed last and only when one was given. */
void sched_impair_format(const struct sched_impair_config *c, char *buf, size_t len);

/* A percentage as "12.5%" from a fraction of SCHED_IMPAIR_P_ONE. */
void sched_impair_format_percent(uint64_t p, char *buf, size_t len);

/* The sampler alone, for tests: the delay (ns, may be below 0 before the
 * clamp to now) the next packet would draw, advancing the generator as a
 * packet would. */
int64_t sched_impair_draw_delay(struct sched_impair *m);

/* The inverse CDF the table distributions follow, at u in [0,1] (units of
 * the jitter, clamped to [-4, 4] as netem's tables): tests compare samples
 * against the CDF built from it. */
double sched_impair_quantile(enum sched_impair_dist d, double u);

#endif
