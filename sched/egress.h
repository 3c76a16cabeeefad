/* One egress interface's packet schedule: a token-bucket shaper with strict
 * priority between classes, then a delay line (fixed delay plus optional
 * uniform jitter), holding packets until their release time, Carousel
 * style: every held packet has a time, the queues are in time order, and
 * whoever owns the schedule runs one timer for the earliest of them
 * (sched_egress_next_ns), not one per packet.
 *
 * Shaper. rate in bit/s, burst in bytes (the bucket's depth; full when the
 * shaper is set). It counts Ethernet frame bytes: destination MAC to the
 * end of the payload, no preamble, no FCS (the buffer's length, chain
 * included). Arithmetic is exact, in integers: a credit unit is 1/8e9 of a
 * byte, so t ns at r bit/s add exactly t * r units and a frame of L bytes
 * costs L * 8e9. The head packet of the highest-priority non-empty class
 * leaves at the first time t with tokens(t) >= its cost (a frame longer
 * than the burst waits for a full bucket and leaves the bucket in debt);
 * so a high-priority packet never waits behind a saturated lower class,
 * only for tokens. Priority 0 is the highest, 7 the lowest. A run that
 * comes late (the owner thread was off the CPU) releases what an ideal
 * shaper would have sent meanwhile: while packets wait, credit accrues
 * past the bucket's depth, and only what is left when the queues run
 * empty is capped to it.
 *
 * Impairment (the delay line). A packet leaving the shaper (or arriving,
 * without one) at t goes through the interface's impairer (sched/impair.h:
 * netem's delay, jitter and distributions, loss, duplication, reordering,
 * corruption, rate), which holds it until its departure time. `delay D
 * jitter J` is the impairment `delay D jitter J` (uniform jitter, which as
 * in netem may reorder packets). Packets it drops wait for the owner in
 * sched_egress_take_dropped, their reason in opaque[4].
 *
 * Packets held (class queues and delay line together) are bounded by
 * max_held; enqueue refuses the excess, which the caller drops.
 *
 * Held packets are linked through their buffer's opaque area (the first 4
 * bytes) and carry their release time in timestamp_ns: the schedule owns
 * them until dequeue hands them back.
 *
 * Thread-safety: one owner thread calls enqueue, dequeue, next_ns and the
 * setters (or the control thread with the owner parked at the barrier);
 * sched_egress_stats may be called from any thread (relaxed reads).
 */
#ifndef SLUICE_SCHED_EGRESS_H
#define SLUICE_SCHED_EGRESS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/buffer.h"

#define SCHED_N_PRIO 8
#define SCHED_PRIO_LOWEST (SCHED_N_PRIO - 1)
#define SCHED_MAX_CLASSES 16 /* class ids 1..15 name classes; 0 is "unclassified" */
#define SCHED_RATE_MIN 1000ull              /* 1 kbit/s */
#define SCHED_RATE_MAX 400000000000ull      /* 400 gbit/s */
#define SCHED_BURST_MIN 64ull
#define SCHED_BURST_MAX (256ull << 20)
#define SCHED_DELAY_MAX 10000000000ull      /* 10 s */
#define SCHED_HELD_MAX (1u << 20)

/* The class sched-ingress gave a packet travels in buffer.flags
 * (BUFFER_SCHED_CLASS_*, graph/buffer.h's table of flag bits; 0: none). */

static inline uint32_t sched_buffer_class(const struct buffer *b)
{
	return b->flags >> BUFFER_SCHED_CLASS_SHIFT;
}

static inline void sched_buffer_set_class(struct buffer *b, uint32_t class_id)
{
	b->flags = (b->flags & ~BUFFER_SCHED_CLASS_MASK) | (class_id << BUFFER_SCHED_CLASS_SHIFT);
}

struct sched_egress_config {
	uint64_t rate_bps;    /* 0: no shaper */
	uint64_t burst_bytes;
	uint64_t delay_ns;    /* 0 (and jitter 0): no delay */
	uint64_t jitter_ns;
	uint32_t max_held;
};

struct sched_egress_stats {
	struct sched_egress_config cfg;
	int64_t tokens_bytes;  /* at the last run; negative: in debt */
	uint64_t held;
	uint64_t enqueued, released, dropped;
	uint64_t held_class[SCHED_MAX_CLASSES];
	uint64_t released_class[SCHED_MAX_CLASSES];
	uint64_t dropped_class[SCHED_MAX_CLASSES];
};

struct sched_egress;

/* A schedule with nothing configured (every packet due at once) holding at
 * most max_held (1..SCHED_HELD_MAX); seed drives the jitter. NULL with the
 * reason in err. */
struct sched_egress *sched_egress_create(uint32_t max_held, uint64_t seed, char *err, size_t errlen);

/* Bytes of state the schedule holds, its impairers included (the packets
 * it queues are linked through their buffers, counted in the pools):
 * `show memory`. */
size_t sched_egress_mem_bytes(const struct sched_egress *e);

/* Free the schedule and every buffer it still holds. */
void sched_egress_destroy(struct sched_egress *e);

/* Shaper at rate_bps with a bucket of burst_bytes, full at now; rate 0
 * removes it (packets in its class queues are then due at once).
 * Returns 0 or -EINVAL (out of SCHED_RATE_* / SCHED_BURST_*). */
int sched_egress_set_shaper(struct sched_egress *e, uint64_t rate_bps, uint64_t burst_bytes, uint64_t now_ns);

/* Delay and jitter for packets leaving the shaper from now on (jitter <=
 * delay, delay <= SCHED_DELAY_MAX); 0, 0 removes it. Packets in the delay
 * line keep their release times. Returns 0 or -EINVAL. */
int sched_egress_set_delay(struct sched_egress *e, uint64_t delay_ns, uint64_t jitter_ns);

struct sched_impair;
struct sched_impair_config;

/* The interface's impairment for packets from now on (NULL or nothing
 * set: off; held packets keep their departure times). 0 or -EINVAL with
 * the reason in err. */
int sched_egress_set_impair(struct sched_egress *e, const struct sched_impair_config *c, char *err, size_t errlen);

/* The impairer (always there; sched_impair_stats for its counters). */
const struct sched_impair *sched_egress_impair(const struct sched_egress *e);

/* Class class_id's impairment on this interface: its packets go through
 * it before the shaper's class queues (as netem under an HTB class), then
 * on as if they arrived at their departure. Created when first set (an
 * impairer per class: 150 KB). NULL or nothing set: off. 0, -EINVAL or
 * -ENOMEM with the reason in err. */
int sched_egress_set_class_impair(struct sched_egress *e, uint32_t class_id, const struct sched_impair_config *c,
				  char *err, size_t errlen);

/* Class class_id's impairer, NULL if never set. */
const struct sched_impair *sched_egress_class_impair(const struct sched_egress *e, uint32_t class_id);

/* Whether any impairment (interface or class) is on. */
bool sched_egress_impaired(const struct sched_egress *e);

/* Packets the impairment dropped (lost, over max-held) since the last
 * call, up to max: the caller frees them or sends them to error-drop. */
uint32_t sched_egress_take_dropped(struct sched_egress *e, uint32_t *out, uint32_t max);

/* New bound on held packets, for the interface's impairment and every
 * class's; those held beyond it stay (and leave in time). Returns 0,
 * -EINVAL, or -ENOMEM with nothing changed. */
int sched_egress_set_max_held(struct sched_egress *e, uint32_t max_held);

/* Take n packets at now; prio maps a class id (sched_buffer_class) to its
 * priority. Packets over max_held are not taken: they go to dropped[] in
 * order (counted in the stats), and the return is their number. */
uint32_t sched_egress_enqueue(struct sched_egress *e, const uint32_t *bi, uint32_t n,
			      const uint8_t prio[SCHED_MAX_CLASSES], uint64_t now_ns, uint32_t *dropped);

/* Run the shaper and the delay line at now and hand back, in release
 * order, up to max packets that are due. Returns how many; when it
 * returns max, call again (more may be due). */
uint32_t sched_egress_dequeue(struct sched_egress *e, uint64_t now_ns, uint32_t *out, uint32_t max);

/* The earliest time at which dequeue will have something (after the last
 * dequeue), UINT64_MAX when nothing is held. */
uint64_t sched_egress_next_ns(const struct sched_egress *e);

/* Hand back up to max held packets whatever their time (tear-down).
 * Returns how many. */
uint32_t sched_egress_flush(struct sched_egress *e, uint32_t *out, uint32_t max);

/* Packets held now. */
uint32_t sched_egress_held(const struct sched_egress *e);

/* Buffers held now, chains counted whole (`show buffers`). Walks the
 * queues: owner thread, or control thread with the owner parked. */
uint64_t sched_egress_held_buffers(const struct sched_egress *e);

/* Configuration and counters; any thread. */
void sched_egress_stats(const struct sched_egress *e, struct sched_egress_stats *st);

#endif
