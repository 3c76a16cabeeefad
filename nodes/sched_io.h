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
#include "graph/handoff.h"
#include "sched/class.h"
#include "sched/egress.h"
#include "sched/timer.h"

struct graph;

/* One interface's schedule. Fields below `e` are the owner thread's. */
struct sched_io_if {
	struct sched_egress *e; /* NULL: never configured */
	uint32_t gen;           /* bumped when e goes: stale timers are ignored */
	uint16_t owner;         /* graph thread */
	bool shaper, delay;     /* configured now */
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

/* Shaper on if_index: rate_bps 0 removes it. Delay: delay_ns and
 * jitter_ns 0 remove it. Take the barrier; return 0 or a negative errno
 * with the reason in err (nothing changed then). */
int sched_io_set_shaper(struct graph *g, uint32_t if_index, uint64_t rate_bps, uint64_t burst_bytes, char *err,
			size_t errlen);
int sched_io_set_delay(struct graph *g, uint32_t if_index, uint64_t delay_ns, uint64_t jitter_ns, char *err,
		       size_t errlen);

/* Define or remove a class under the barrier (sched_class_set/remove). */
int sched_io_class_set(struct graph *g, const struct sched_class *c, char *err, size_t errlen);
int sched_io_class_remove(struct graph *g, const char *name);

/* Free every schedule and the buffers they hold, and every class
 * (shutdown, after the workers stopped; tests). */
void sched_io_free_all(void);

#endif
