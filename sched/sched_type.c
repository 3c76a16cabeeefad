/* The scheduling types' names (sched_type.h). */
#include <errno.h>
#include <string.h>

#include "sched/sched_type.h"

const char *const sched_type_names[SCHED_N_TYPES] = {
	[SCHED_TYPE_ATOMIC] = "atomic",
	[SCHED_TYPE_ORDERED] = "ordered",
	[SCHED_TYPE_PARALLEL] = "parallel",
};

int sched_type_parse(const char *name)
{
	for (int i = 0; i < SCHED_N_TYPES; i++)
		if (strcmp(name, sched_type_names[i]) == 0)
			return i;
	return -EINVAL;
}
