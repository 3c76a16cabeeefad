/* Event queues: the event-scheduling stage. Strict priority between 8
 * levels and weighted round robin between the queues of one level, from
 * one scheduler to M consumer ports.
 *
 * An event is 16 bytes: a flow tag, a queue, a priority and a 64-bit
 * payload (a buffer index, a pointer, a word).
 *
 * Priority is work-conserving: a level is served only when every queue of
 * the levels above is empty or cannot go on (its ports are full).
 *
 * What this stage does not do: it has no scheduling type. Events of a
 * queue are spread over the queue's linked ports in runs, with no flow
 * pinning and no reorder window. Atomic, ordered and parallel are the
 * distributor's (sched/dist/dist.h), the one stage that knows the workers:
 * in the daemon this stage's single consumer is sched-dist, which hands
 * each packet to the distributor with its class's type (sched/sched_type.h
 * says why the types live there). The flow tag rides along for it.
 *
 * Completion: a port completes its events in the order it dequeued them
 * (eventdev's sw device does so too; the API cannot say otherwise): the
 * next evq_port_dequeue releases every event not yet completed, and
 * evq_port_forward / evq_port_release complete the oldest ones explicitly.
 * Ports complete independently of one another, in any order.
 *
 * Threads. One owner thread runs the scheduler (evq_enqueue, evq_schedule,
 * evq_output, the setup calls and the stats); each port belongs to one
 * consumer thread (the evq_port_* calls). Why one scheduler, as event_sw,
 * rather than dsw's distributed one: priority and weighted round robin are
 * decisions over every queue and port at once; made on one thread, over
 * memory only that thread touches, they need no atomic instruction and no
 * lock. In sluice the rx thread already
 * is the one place packets enter (it runs the distributor), so the
 * scheduler costs no extra thread. What two threads share is one ring per
 * port and two counters on their own cache lines (owner -> port: events
 * dispatched; port -> owner: events completed), each written once per
 * burst. A forwarded event is written back into the ring slot it was
 * dequeued from, so the port needs no second ring.
 *
 * Nothing is allocated per event: rings and queues are preallocated at
 * setup, sizes are powers of two. A full queue refuses enqueue (counted).
 * Forwards have room beyond that: a level of a queue holds up to twice its
 * depth, so a destination whose depth is at least the sum of all ports'
 * depths always takes them; past that a forward waits in its port's ring
 * (backpressure, never dropped), which also holds the port's later
 * completions back.
 */
#ifndef SLUICE_SCHED_EVQ_H
#define SLUICE_SCHED_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct evq;
struct evq_port;

#define EVQ_LEVELS 8       /* priorities 0 (highest) .. 7 */
#define EVQ_MAX_QUEUES 64
#define EVQ_MAX_PORTS 64
#define EVQ_QUEUE_OUT 255  /* forward destination: the owner's output (evq_output) */

struct evq_event {
	uint32_t flow;    /* flow tag: carried, not read (the distributor's) */
	uint8_t queue;    /* destination on enqueue/forward; the source queue on dequeue */
	uint8_t priority; /* 0 (highest) .. EVQ_LEVELS - 1 */
	uint8_t reserved; /* carried, not read */
	uint8_t op;       /* the library's: leave it */
	union {
		uint64_t u64;
		void *ptr;
		uint32_t buffer_index;
	};
};
_Static_assert(sizeof(struct evq_event) == 16, "event is 16 bytes");

struct evq_config {
	uint32_t n_queues;    /* 1 .. EVQ_MAX_QUEUES */
	uint32_t n_ports;     /* 1 .. EVQ_MAX_PORTS */
	uint32_t port_depth;  /* events in flight per port (power of two, 8 .. 32768), default 256 */
	uint32_t output_size; /* the owner's output ring (power of two), default 4096 */
};

struct evq_queue_config {
	uint32_t weight; /* events per round-robin turn among its level's queues, 1 .. 65535, default 1 */
	uint32_t depth;  /* events held (all levels together; power of two), default 1024 */
};

struct evq_stats {
	uint64_t enqueued;   /* accepted by evq_enqueue */
	uint64_t refused;    /* refused by evq_enqueue: queue full */
	uint64_t invalid;    /* refused by evq_enqueue / evq_port_forward: bad queue or priority */
	uint64_t dispatched; /* handed to ports */
	uint64_t completed;  /* completions the scheduler has taken in */
	uint64_t forwarded;  /* of which forwards */
	uint64_t output;     /* forwarded to EVQ_QUEUE_OUT and placed on the output ring */
	uint64_t dispatched_level[EVQ_LEVELS];
};

struct evq_queue_stats {
	uint64_t enqueued;   /* by evq_enqueue and by forwards */
	uint64_t refused;    /* by evq_enqueue */
	uint64_t dispatched;
	uint32_t held;       /* waiting in the queue now */
};

void evq_config_default(struct evq_config *cfg);
void evq_queue_config_default(struct evq_queue_config *qc);

/* A scheduler with its ports and output preallocated; queues are set up
 * next. NULL with the reason in err. */
struct evq *evq_create(const struct evq_config *cfg, char *err, size_t errlen);

/* Free the scheduler, its queues and ports (events in them are dropped).
 * No port may be in use. */
void evq_destroy(struct evq *q);

/* Set up queue `queue` (before any event enters it). 0 or a negative
 * errno (-EINVAL: bad index or sizes, -EBUSY: already set up, -ENOMEM). */
int evq_queue_setup(struct evq *q, uint32_t queue, const struct evq_queue_config *qc);

/* Owner: change queue `queue`'s round-robin weight (1 .. 65535) while
 * events flow. A turn in progress is cut to the new weight at most; the
 * next turns take the new weight. 0, or -EINVAL (bad index, queue not set
 * up, weight out of range: nothing changed). */
int evq_queue_set_weight(struct evq *q, uint32_t queue, uint32_t weight);

/* Let port `port` take events of queue `queue` (before any event enters
 * the queue). 0 or -EINVAL. */
int evq_port_link(struct evq *q, uint32_t port, uint32_t queue);

/* The consumer's handle of port `index` (NULL when out of range). */
struct evq_port *evq_port(struct evq *q, uint32_t index);

/* Owner: enqueue n events (queue and priority read from each). Returns how
 * many were taken: always a prefix; it stops at the first event whose
 * queue is full (counted as refused, with the rest of the burst) or
 * invalid (counted as invalid). The caller still owns the rest. */
uint32_t evq_enqueue(struct evq *q, const struct evq_event *ev, uint32_t n);

/* Owner: one scheduling pass. Takes in every port's completions (forwards
 * go to their queue or the output), then dispatches queued events to the
 * ports: strict priority between levels, weighted round robin within
 * a level, until the ports are full or nothing more can go. Returns the
 * events dispatched. */
uint32_t evq_schedule(struct evq *q);

/* Owner: take up to max events forwarded to EVQ_QUEUE_OUT, in the order
 * their completions were taken in. Returns the count. */
uint32_t evq_output(struct evq *q, struct evq_event *ev, uint32_t max);

/* Owner: events anywhere in the scheduler (queued, dispatched and not yet
 * completed, on the output ring). 0 means drained. */
uint64_t evq_in_flight(const struct evq *q);

void evq_stats(const struct evq *q, struct evq_stats *st);
int evq_queue_stats(const struct evq *q, uint32_t queue, struct evq_queue_stats *st);

/* Port thread: release every event dequeued and not yet completed (the
 * implicit release), then take up to max dispatched events. Returns the
 * count (0 when none are waiting: poll again). */
uint32_t evq_port_dequeue(struct evq_port *p, struct evq_event *ev, uint32_t max);

/* Port thread: complete the n oldest outstanding events by forwarding
 * ev[0..n) in their place (ev[i].queue is the destination queue or
 * EVQ_QUEUE_OUT; flow, priority and payload as the caller sets them).
 * Returns how many were
 * forwarded: a prefix, stopping at an invalid queue or priority (counted)
 * or when nothing is outstanding. */
uint32_t evq_port_forward(struct evq_port *p, const struct evq_event *ev, uint32_t n);

/* Port thread: complete the n oldest outstanding events without output.
 * Returns how many were released (at most the outstanding count). */
uint32_t evq_port_release(struct evq_port *p, uint32_t n);

/* Port thread: events dequeued and not yet completed. */
uint32_t evq_port_outstanding(const struct evq_port *p);

#endif
