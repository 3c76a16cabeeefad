/* Packet scheduling in the graph: the per-interface schedules that
 * sched-egress runs (shaper, delay; sched/egress.h) and the classes that
 * sched-ingress assigns (sched/class.h), with the control calls the CLI
 * and the app make.
 *
 * Owner rule. A shaped or delayed interface is transmitted by one owner
 * thread, the only one that touches its schedule and its timer: thread 0
 * without workers, else worker 1 + (if_index mod workers). sched-egress on
 * any other thread hands that interface's packets to the owner through a
 * handoff ring (one per other thread), which sched-handoff-input, enabled
 * on owner threads, drains.
 *
 * Thread-safety: the control calls take the graph's barrier themselves and
 * run on the control thread (or thread 0 between loops); the datapath reads
 * sched_egress_on and the schedules without locks.
 */
#ifndef SLUICE_NODES_SCHED_IO_H
#define SLUICE_NODES_SCHED_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "drivers/device.h"
#include "graph/graph.h"
#include "graph/handoff.h"
#include "sched/class.h"
#include "sched/egress.h"
#include "sched/evq.h"
#include "sched/hqos.h"
#include "sched/impair.h"
#include "sched/timer.h"

struct graph;

/* One interface's schedule. Fields below `e` are the owner thread's. */
struct sched_io_if {
	struct sched_egress *e; /* NULL: never configured */
	struct hqos *hq;        /* the hierarchy in front of e's delay line (sched_hqos.h); NULL: none */
	uint32_t gen;           /* bumped when e goes */
	uint16_t owner;         /* graph thread */
	bool shaper, delay;     /* configured now (delay: an impairment, sched_impair_active) */
	struct handoff_ring *ring[GRAPH_MAX_THREADS]; /* from thread t to the owner; NULL for the owner */
	uint64_t handoff_dropped; /* packets a full ring refused (counted by their sender) */
	timer_handle_t timer;   /* on the owner's service; 0: none armed */
	uint64_t timer_ns;      /* its deadline */
};

/* interface-output's one test per frame: nonzero sends the frame to
 * sched-egress instead of the driver's tx node. */
extern uint8_t sched_egress_on[DEV_MAX];

extern struct sched_io_if sched_io_ifs[DEV_MAX];

/* The owner thread of if_index in a graph of n_threads threads. */
static inline uint16_t sched_io_owner(uint32_t if_index, uint32_t n_threads)
{
	return n_threads <= 1 ? 0 : (uint16_t)(1 + if_index % (n_threads - 1));
}

/* Packets held per interface from now on (the `sched { max-held }` key);
 * schedules that exist keep theirs until reconfigured. */
void sched_io_set_max_held(uint32_t max_held);
uint32_t sched_io_max_held(void);

/* Packets per class queue in front of the workers (the `sched {
 * class-queue-depth }` key, a power of two), for queues made from now on;
 * queues that exist keep theirs until the distributor detaches. */
void sched_io_set_class_depth(uint32_t depth);

/* Shaper on if_index: rate_bps 0 removes it. Delay: delay_ns and
 * jitter_ns 0 remove it. Take the barrier; return 0 or a negative errno
 * with the reason in err (nothing changed then). */
int sched_io_set_shaper(struct graph *g, uint32_t if_index, uint64_t rate_bps, uint64_t burst_bytes, char *err,
			size_t errlen);
int sched_io_set_delay(struct graph *g, uint32_t if_index, uint64_t delay_ns, uint64_t jitter_ns, char *err,
		       size_t errlen);

/* For sched_hqos.c: the schedule of if_index, made if need be, and
 * sched_egress_on set from what is configured (barrier held); the owner
 * thread's clock. */
int sched_io_ensure(struct graph *g, uint32_t if_index, char *err, size_t errlen);
void sched_io_publish(uint32_t if_index);
uint64_t sched_io_owner_now(struct graph *g, const struct sched_io_if *sif);
/* The interface's impairment (sched/impair.h; the delay line): c NULL or
 * doing nothing turns it off, held packets keeping their departure times.
 * `sched delay D jitter J` is sched_io_set_delay: the impairment `delay D
 * jitter J`. Barrier taken; 0 or a negative errno with the reason in err
 * (nothing changed then). */
int sched_io_set_impair(struct graph *g, uint32_t if_index, const struct sched_impair_config *c, char *err,
			size_t errlen);

/* The same for class class_id's packets on if_index, before its shaper
 * (sched_egress_set_class_impair). */
int sched_io_set_class_impair(struct graph *g, uint32_t if_index, uint32_t class_id,
			      const struct sched_impair_config *c, char *err, size_t errlen);

/* Packets sched-ingress put in each class id (0: unclassified), summed
 * over threads; any thread (relaxed reads). */
void sched_io_class_packets(struct graph *g, uint64_t counts[SCHED_MAX_CLASSES]);

/* Define or remove a class under the barrier (sched_class_set/remove). */
int sched_io_class_set(struct graph *g, const struct sched_class *c, char *err, size_t errlen);
int sched_io_class_remove(struct graph *g, const char *name);

/* ---- the class queues in front of the distributor ----
 *
 * With a distributor attached (workers run) and a class defined,
 * sched-ingress on thread 0 puts each packet in its class's event queue
 * (sched/evq.h: queue = class id, priority = the class's, flow = the
 * packet's flow tag, payload = its buffer index; class-queue-depth packets
 * per class at most, SCHED_FRONT_DEPTH unless configured, more are dropped
 * as "class queue full"), and
 * sched-dist, polled on thread 0, hands the distributor only as many as
 * the workers have room for: highest priority first, the classes of one
 * priority in turns of their weights, each packet with its class's
 * scheduling type. Under worker backpressure packets wait in their class
 * queue, where priority still applies, instead of being dropped at the
 * distributor regardless of priority.
 *
 * The queues are the evq's, with sched-dist their one consumer: it takes
 * packets out only when it hands them on, so a packet of higher priority
 * arriving later waits behind none already taken; the distributor applies
 * the types, the one place they are implemented (sched/sched_type.h).
 * A packet the distributor refuses (its flow's worker full, or every
 * worker) waits in a small stash and is offered again first (up to
 * SCHED_FRONT_STASH; past that it is dropped under the distributor's
 * reason; sched-dist.c says why order holds).
 *
 * Created the first time a class is defined while a distributor is
 * attached; freed by dist_graph_detach (what it holds then is freed and
 * counted as dropped at shutdown) or sched_io_free_all. Thread 0's, and
 * the control thread's under the barrier; counters read with stat_read. */
#define SCHED_FRONT_DEPTH 1024 /* the default class-queue-depth */
#define SCHED_FRONT_STASH 128 /* half a frame: a poll always has room for new packets */

struct sched_front {
	struct evq *evq;       /* NULL: not in use; drained by sched-dist */
	uint32_t depth;        /* packets per class queue */
	uint32_t n_stash;
	struct evq_event stash[SCHED_FRONT_STASH]; /* refused by the distributor, in order */
	/* per class id */
	uint64_t queued[SCHED_MAX_CLASSES];     /* taken into the class queue */
	uint64_t queue_full[SCHED_MAX_CLASSES]; /* dropped by sched-ingress: class queue full */
	uint64_t sent[SCHED_MAX_CLASSES];       /* taken by the distributor */
	uint64_t dist_dropped[SCHED_MAX_CLASSES]; /* dropped by the distributor (reasons in show errors) */
	uint64_t shutdown[SCHED_MAX_CLASSES];   /* still held at detach: freed */
};

extern struct sched_front sched_front;

/* Whether sched-ingress on thread_index queues for the distributor. */
static inline bool sched_front_on(uint32_t thread_index)
{
	return thread_index == 0 && sched_front.evq != NULL;
}

/* Packets the front holds (class queues and stash). Thread 0 or barrier. */
uint64_t sched_front_held(void);

/* Held per class now (barrier or thread 0). */
uint32_t sched_front_held_class(uint32_t id);

/* The same from the class's monotonic counters, queued - sent -
 * dist_dropped - shutdown, any thread without the barrier (the stats
 * segment): equal to sched_front_held_class whenever thread 0 is between
 * loops; read outs first, so never below 0 (clamped, for a store seen out of
 * order). Counts since the first front, so also 0 when there is none. */
uint64_t sched_front_held_counted(uint32_t id);

/* Free every schedule and the buffers they hold, the class queues and
 * what they hold, and every class (shutdown, after the workers stopped;
 * tests). */
void sched_io_free_all(void);

#endif
