/* The class table (class.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sched/class.h"

struct sched_class_table sched_class_table = {
	.prio = { [0 ... SCHED_MAX_CLASSES - 1] = SCHED_PRIO_LOWEST },
};

int sched_class_find(const char *name)
{
	for (uint32_t id = 1; id < SCHED_MAX_CLASSES; id++)
		if (sched_class_table.cls[id].name[0] && strcmp(sched_class_table.cls[id].name, name) == 0)
			return (int)id;
	return -ENOENT;
}

static int check(const struct sched_class *c, char *err, size_t errlen)
{
	size_t len = strnlen(c->name, sizeof(c->name));
	if (!len || len == sizeof(c->name)) {
		snprintf(err, errlen, "class name: expected 1..%d characters", SCHED_CLASS_NAME_SIZE - 1);
		return -EINVAL;
	}
	if (c->priority >= SCHED_N_PRIO) {
		snprintf(err, errlen, "priority %u: expected 0..%d", c->priority, SCHED_N_PRIO - 1);
		return -EINVAL;
	}
	if (c->weight < 1 || c->weight > SCHED_WEIGHT_MAX) {
		snprintf(err, errlen, "weight %u: expected 1..%d", c->weight, SCHED_WEIGHT_MAX);
		return -EINVAL;
	}
	if (c->type >= SCHED_N_TYPES) {
		snprintf(err, errlen, "type %u: expected atomic, ordered or parallel", c->type);
		return -EINVAL;
	}
	if ((c->match == SCHED_MATCH_DSCP && c->value > 63) || (c->match == SCHED_MATCH_PROTOCOL && c->value > 255) ||
	    c->match > SCHED_MATCH_INTERFACE) {
		snprintf(err, errlen, "match value %u out of range", c->value);
		return -EINVAL;
	}
	return 0;
}

int sched_class_set(const struct sched_class *c, char *err, size_t errlen)
{
	int rc = check(c, err, errlen);
	if (rc)
		return rc;
	struct sched_class_table *t = &sched_class_table;
	int id = sched_class_find(c->name);
	if (id < 0) {
		for (id = 1; id < SCHED_MAX_CLASSES && t->cls[id].name[0]; id++)
			;
		if (id == SCHED_MAX_CLASSES) {
			snprintf(err, errlen, "%d classes defined already", SCHED_MAX_CLASSES - 1);
			return -ENOSPC;
		}
		t->order[t->n] = (uint8_t)id;
		__atomic_store_n(&t->n, t->n + 1, __ATOMIC_RELAXED);
	}
	t->cls[id] = *c;
	t->prio[id] = c->priority;
	t->type[id] = c->type;
	return id;
}

int sched_class_remove(const char *name)
{
	struct sched_class_table *t = &sched_class_table;
	int id = sched_class_find(name);
	if (id < 0)
		return id;
	uint32_t k = 0;
	while (t->order[k] != id)
		k++;
	memmove(&t->order[k], &t->order[k + 1], t->n - k - 1);
	__atomic_store_n(&t->n, t->n - 1, __ATOMIC_RELAXED);
	memset(&t->cls[id], 0, sizeof(t->cls[id]));
	t->prio[id] = SCHED_PRIO_LOWEST;
	t->type[id] = SCHED_TYPE_ATOMIC;
	return 0;
}

void sched_class_clear(void)
{
	while (sched_class_table.n)
		sched_class_remove(sched_class_table.cls[sched_class_table.order[0]].name);
}
