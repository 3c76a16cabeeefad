/* Layouts only the event queues touch.
 *
 * Ownership: everything in struct evq and struct evq_queue is the owner
 * thread's. A port is split by cache line: one line the owner writes and
 * the consumer reads (tail), one the consumer writes and the owner reads
 * (done), then each side's private fields on lines of their own, so the
 * only lines that move between cores are the two counters and the ring
 * slots themselves.
 *
 * A ring slot passes owner -> consumer when `tail` is published (release)
 * and consumer -> owner when `done` is (release); the consumer may rewrite
 * the slot in between (a forward), and the owner reads it back after
 * acquiring `done`. The owner reuses a slot only once it has taken in its
 * completion, so in-flight events per port are bounded by the ring.
 */
#ifndef SLUICE_SCHED_EVQ_PRIVATE_H
#define SLUICE_SCHED_EVQ_PRIVATE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"
#include "sched/evq.h"

/* struct evq_event.op in a ring slot */
enum {
	EVQ_OP_RELEASE = 0, /* as dispatched: completed without output */
	EVQ_OP_FORWARD,     /* the consumer wrote a forward into the slot */
};

/* The event's first 8 bytes as a little-endian word: flow in bits 0-31,
 * queue 32-39, priority 40-47, reserved 48-55, op 56-63. */
#define EVQ_W0_OP_SHIFT 56
#define EVQ_W0_KEEP ((1ull << EVQ_W0_OP_SHIFT) - 1)
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "EVQ_W0_* assume little-endian");
_Static_assert(offsetof(struct evq_event, op) == 7, "EVQ_W0_* layout");

/* One (queue, level) FIFO; head and tail run free, mask = size - 1. */
struct evq_iq {
	struct evq_event *ev;
	uint32_t head;
	uint32_t tail;
};

struct evq_queue {
	struct evq_iq iq[EVQ_LEVELS];
	uint32_t iq_mask;      /* each level's FIFO: 2 * depth - 1 */
	uint32_t depth;        /* new events refused when held == depth */
	uint32_t held;
	uint8_t configured;
	uint16_t weight;
	uint64_t ports;        /* linked ports */
	uint32_t rr_port;      /* where the next port search starts */
	uint64_t n_enqueued;
	uint64_t n_refused;
	uint64_t n_dispatched;
};

struct evq_port {
	/* owner -> consumer: events dispatched (published once per pass) */
	alignas(CACHE_LINE_SIZE) _Atomic uint32_t tail;
	/* consumer -> owner: events completed, in dequeue order */
	alignas(CACHE_LINE_SIZE) _Atomic uint32_t done;
	_Atomic uint64_t n_invalid; /* forwards refused as invalid (rare: counted here, read by stats) */
	/* consumer's */
	alignas(CACHE_LINE_SIZE) struct evq_event *c_ring;
	uint32_t c_mask;
	uint32_t c_tail;       /* last tail read */
	uint32_t c_deq;        /* dequeued */
	uint32_t c_done;       /* completed (<= c_deq) */
	const struct evq *c_evq; /* to check forwards' queues (set up before ports run) */
	/* owner's */
	alignas(CACHE_LINE_SIZE) struct evq_event *ring;
	uint32_t mask;
	uint32_t o_tail;       /* dispatched */
	uint32_t o_published;  /* last tail stored */
	uint32_t o_seen;       /* completions taken in */
	uint64_t n_dispatched;
};

struct evq {
	uint32_t n_queues;
	uint32_t n_ports;
	uint32_t port_depth;
	/* scheduling state */
	uint8_t level_mask;              /* levels with a non-empty queue */
	uint64_t level_queues[EVQ_LEVELS]; /* per level: queues non-empty at it */
	uint32_t rr_queue[EVQ_LEVELS];   /* queue whose turn it is */
	uint32_t rr_left[EVQ_LEVELS];    /* events left in that turn */
	uint64_t space_ports;            /* ports with ring room, during a pass */
	uint32_t space[EVQ_MAX_PORTS];   /* ring room per port, during a pass */
	/* output ring (owner only) */
	struct evq_event *out;
	uint32_t out_mask;
	uint32_t out_head;
	uint32_t out_tail;
	struct evq_stats st;
	struct evq_queue queues[EVQ_MAX_QUEUES];
	struct evq_port *ports[EVQ_MAX_PORTS];
};

/* Place one event (a forward) in its queue or on the output. false when it is full: the caller keeps
 * the event and retries on a later pass. */
bool evq_place(struct evq *q, const struct evq_event *ev);

#endif
