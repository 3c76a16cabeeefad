/* The scheduling types, once for the whole tree: what the distributor
 * (sched/dist/dist.h) does with a packet when workers run.
 *
 * Where they live, and why. sluice schedules in two stages, as the design
 * draws it: an event-scheduling stage (the class table, class.h; the event
 * queues, evq.h: strict priorities, weighted round robin, timed release by
 * the timer service) decides WHEN a packet goes on; the distributor decides
 * WHERE (which worker) and restores order on the way out. Atomic, ordered
 * and parallel are promises about workers (one flow on one worker at a
 * time; arrival order restored before transmit; no promise), so they are
 * kept by the one stage that knows the workers: the distributor pins flows
 * (its flow table) and owns the one reorder window. The event queues carry
 * a class's packets to it in priority order and know no type: an event
 * queue of its own with pinning and a reorder window would be a second
 * implementation of the same promises, in front of a stage that has to
 * keep them anyway (the daemon's front stage has one consumer, the
 * distributor, so pinning there promised nothing).
 *
 * The numbering is the table's wire format: a class's `type`
 * (class.h), the distributor's types[] (dist_process) and its trace. */
#ifndef SLUICE_SCHED_SCHED_TYPE_H
#define SLUICE_SCHED_SCHED_TYPE_H

enum sched_type {
	SCHED_TYPE_ATOMIC = 0, /* a flow on one worker at a time, its order kept (the default) */
	SCHED_TYPE_ORDERED,    /* spread over the workers, arrival order restored before transmit */
	SCHED_TYPE_PARALLEL,   /* spread over the workers, no promise of order */
	SCHED_N_TYPES,
};

extern const char *const sched_type_names[SCHED_N_TYPES]; /* "atomic", "ordered", "parallel" */

/* The type called name ("atomic", "ordered", "parallel"), or -EINVAL. */
int sched_type_parse(const char *name);

#endif
