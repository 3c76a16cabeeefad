/* Scheduling classes: named, with a priority (0 highest .. 7 lowest), a
 * weight for round robin among classes of one priority, a scheduling type
 * for the workers (sched_type.h: what the distributor does with the
 * class's packets when workers run), and one match
 * (DSCP, IP protocol or rx interface). sched-ingress gives each packet the
 * id of the first class, in the order they were defined, that matches it
 * (sched_buffer_class, egress.h); sched-egress queues it at that class's
 * priority. Unclassified packets (class 0) have the lowest priority.
 *
 * The table is one per process. The datapath reads it without a lock; the
 * control thread changes it only with the datapath parked at the barrier
 * (the functions below do not take it: the caller does).
 */
#ifndef SLUICE_SCHED_CLASS_H
#define SLUICE_SCHED_CLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched/egress.h"
#include "sched/sched_type.h"

#define SCHED_CLASS_NAME_SIZE 32
#define SCHED_WEIGHT_MAX 1000

enum sched_match {
	SCHED_MATCH_DSCP = 0,  /* value: 0..63 */
	SCHED_MATCH_PROTOCOL,  /* value: IP protocol number (icmp 1, tcp 6, udp 17) */
	SCHED_MATCH_INTERFACE, /* value: rx interface index */
};

struct sched_class {
	char name[SCHED_CLASS_NAME_SIZE];
	uint8_t priority;
	uint8_t match; /* enum sched_match */
	uint16_t weight;
	uint32_t value;
	uint8_t type; /* enum sched_type */
};

/* What the datapath reads. order[0..n) are the class ids (1..15) in match
 * order; prio and type map every id (0 included) to its priority and its
 * scheduling type (unclassified: lowest priority, atomic). */
struct sched_class_table {
	uint32_t n;
	uint8_t order[SCHED_MAX_CLASSES];
	uint8_t prio[SCHED_MAX_CLASSES];
	uint8_t type[SCHED_MAX_CLASSES];
	struct sched_class cls[SCHED_MAX_CLASSES]; /* by id; name "" is free */
};

extern struct sched_class_table sched_class_table;

/* Whether any class is defined: the one test the rx path makes per frame. */
static inline bool sched_classes_active(void)
{
	return __atomic_load_n(&sched_class_table.n, __ATOMIC_RELAXED) != 0;
}

/* Define a class, or redefine the class of that name in place (same id,
 * same place in the match order). Returns its id (1..15), or -EINVAL (bad
 * priority, weight, type, match value or name: reason in err) or -ENOSPC. */
int sched_class_set(const struct sched_class *c, char *err, size_t errlen);

/* Remove the class called name. Returns 0 or -ENOENT. Packets carrying its
 * id count as unclassified from now on. */
int sched_class_remove(const char *name);

/* The id of the class called name, or -ENOENT. */
int sched_class_find(const char *name);

/* Remove every class (tests, shutdown). */
void sched_class_clear(void);

#endif
