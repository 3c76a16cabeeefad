/* Scheduling from startup.conf (app/sched_conf.c): the `sched-classes`
 * section (one block per class, the words of `sched class`) and the
 * `shaper "rate R [burst B]"` key every interface block takes (the words of
 * `sched shaper interface NAME`).
 *
 * Thread-safety: the tables are immutable; app_sched_apply is a control
 * call (it takes the graph's barrier through sched_io's calls).
 */
#ifndef SLUICE_APP_SCHED_CONF_H
#define SLUICE_APP_SCHED_CONF_H

#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "sched/class.h"

struct graph;

#define APP_SCHED_MAX_CLASSES (SCHED_MAX_CLASSES - 1) /* ids 1..15 */
#define APP_SHAPER_BURST_DEFAULT 16384                /* as `sched shaper`'s */

struct app_sched_class_conf {
	char name[CONF_NAME_SIZE];
	uint32_t priority;
	uint32_t weight;
	uint32_t type;   /* enum sched_type */
	char match[48];  /* "dscp 46", "protocol udp", "interface pg0" */
	/* the match's words, parsed by the block's check */
	uint8_t match_kind; /* enum sched_match */
	uint32_t match_value;
	char match_if[CONF_NAME_SIZE];
};
_Static_assert(SCHED_CLASS_NAME_SIZE == CONF_NAME_SIZE, "class names are block names");

struct app_sched_conf {
	uint32_t n_classes;
	struct app_sched_class_conf classes[APP_SCHED_MAX_CLASSES];
};

extern const struct conf_section app_sched_conf_section; /* struct app_sched_conf */

/* The words of a `shaper` value: rate_bps (above 0) and burst_bytes
 * (APP_SHAPER_BURST_DEFAULT unless given). "" is no shaper (rate 0).
 * Returns 0, or -EINVAL with the reason in why. */
int app_shaper_parse(const char *words, uint64_t *rate_bps, uint64_t *burst_bytes, char *why, size_t len);

/* Define the section's classes in order, then shape every interface whose
 * block has a shaper. Needs the interfaces made and the threads and their
 * timer services running. Returns 0 or a negative errno with the class or
 * interface and the reason in err; *n_shapers counts the shapers set. */
int app_sched_apply(struct graph *g, const struct app_sched_conf *sc, const struct conf_interfaces *ifs,
		    uint32_t *n_shapers, char *err, size_t errlen);

#endif
