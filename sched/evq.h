/* Event queues: the priority stage in front of the distributor. Strict
 * priority between 8 levels and weighted round robin between the queues
 * of one level, taken out by one consumer.
 *
 * An event is 16 bytes: a flow tag, a queue, a priority and a 64-bit
 * payload (a buffer index, a pointer, a word).
 *
 * Priority is work-conserving: evq_dequeue takes from a level only once
 * every queue of the levels above is empty. Within a level the queues
 * that hold events take turns of `weight` events each; a turn that the
 * caller's `max` cuts short goes on at the next evq_dequeue, so that the
 * shares are the weights exactly while the queues stay backlogged.
 *
 * What this stage does not do: it has no scheduling type, no flow
 * pinning, no reorder window and no consumer ports. Atomic, ordered and
 * parallel are the distributor's (sched/dist/dist.h), the one stage that
 * knows the workers (sched/sched_type.h says why the types live there).
 * In the daemon this stage's one consumer is sched-dist, which takes as
 * many events as the workers have room for and hands each packet to the
 * distributor with its class's type (nodes/sched/sched_io.h, "the class
 * queues in front of the distributor"). The flow tag rides along for it.
 * Events leave when they are taken: nothing is dispatched ahead of the
 * consumer, so a higher-priority event that arrives later waits behind
 * none.
 *
 * Threads: none of its own, and no shared state: every call is made by
 * the one thread that owns the queues (in the daemon thread 0, and the
 * control thread under the graph's barrier).
 *
 * Nothing is allocated per event: the queues are preallocated at setup,
 * sizes are powers of two. A full queue refuses enqueue (counted), and so
 * does an invalid queue or priority.
 */
#ifndef SLUICE_SCHED_EVQ_H
#define SLUICE_SCHED_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct evq;

#define EVQ_LEVELS 8       /* priorities 0 (highest) .. 7 */
#define EVQ_MAX_QUEUES 64

struct evq_event {
	uint32_t flow;       /* flow tag: carried, not read (the distributor's) */
	uint8_t queue;       /* destination on enqueue; the source queue on dequeue */
	uint8_t priority;    /* 0 (highest) .. EVQ_LEVELS - 1 */
	uint8_t reserved[2]; /* carried, not read */
	union {
		uint64_t u64;
		void *ptr;
		uint32_t buffer_index;
	};
};
_Static_assert(sizeof(struct evq_event) == 16, "event is 16 bytes");

struct evq_queue_config {
	uint32_t weight; /* events per round-robin turn among its level's queues, 1 .. 65535, default 1 */
	uint32_t depth;  /* events held (all levels together; power of two), default 1024 */
};

struct evq_stats {
	uint64_t enqueued;   /* accepted by evq_enqueue */
	uint64_t refused;    /* refused by evq_enqueue: queue full */
	uint64_t invalid;    /* refused by evq_enqueue: bad queue or priority */
	uint64_t dispatched; /* taken by evq_dequeue */
	uint64_t dispatched_level[EVQ_LEVELS];
};

struct evq_queue_stats {
	uint64_t enqueued;
	uint64_t refused;
	uint64_t dispatched;
	uint32_t held;       /* waiting in the queue now */
};

void evq_queue_config_default(struct evq_queue_config *qc);

/* A scheduler for n_queues queues (1 .. EVQ_MAX_QUEUES), set up next. NULL
 * with the reason in err. */
struct evq *evq_create(uint32_t n_queues, char *err, size_t errlen);

/* Bytes the queue set holds: itself and every configured queue's FIFOs
 * (`show memory`). */
size_t evq_mem_bytes(const struct evq *q);

/* Free the scheduler and its queues (events in them are dropped). */
void evq_destroy(struct evq *q);

/* Set up queue `queue` (before any event enters it). 0 or a negative
 * errno (-EINVAL: bad index or sizes, -EBUSY: already set up, -ENOMEM). */
int evq_queue_setup(struct evq *q, uint32_t queue, const struct evq_queue_config *qc);

/* Change queue `queue`'s round-robin weight (1 .. 65535) while events
 * flow. A turn in progress is cut to the new weight at most; the next
 * turns take the new weight. 0, or -EINVAL (bad index, queue not set up,
 * weight out of range: nothing changed). */
int evq_queue_set_weight(struct evq *q, uint32_t queue, uint32_t weight);

/* Enqueue n events (queue and priority read from each). Returns how many
 * were taken: always a prefix; it stops at the first event whose queue is
 * full (counted as refused, with the rest of the burst) or invalid
 * (counted as invalid). The caller still owns the rest. */
uint32_t evq_enqueue(struct evq *q, const struct evq_event *ev, uint32_t n);

/* Take up to max events into ev[]: strict priority between levels,
 * weighted round robin within a level, each queue's events of one level
 * in the order they came. Returns the count (0: nothing held). */
uint32_t evq_dequeue(struct evq *q, struct evq_event *ev, uint32_t max);

/* Events held over every queue. 0 means drained. */
uint64_t evq_held(const struct evq *q);

void evq_stats(const struct evq *q, struct evq_stats *st);
int evq_queue_stats(const struct evq *q, uint32_t queue, struct evq_queue_stats *st);

#endif
