/* The hierarchy (sched/hqos.h) on interfaces: made, changed and removed
 * under the graph's barrier, as sched_io.h's shapers are. sched-egress
 * puts an interface's packets in its hierarchy when it has one; what the
 * hierarchy releases leaves, or enters the interface's delay line.
 *
 * The port level is the interface's `sched shaper` (rate, burst): with a
 * hierarchy the egress schedule's own shaper is off and the hierarchy's
 * port bucket runs at that rate instead, so nothing is shaped twice;
 * without a shaper the port is not limited. Removing the hierarchy puts
 * the shaper back on the egress schedule.
 *
 * Subscriber names are unique over all interfaces (`no sched subscriber
 * NAME` names no interface).
 */
#ifndef SLUICE_NODES_SCHED_HQOS_H
#define SLUICE_NODES_SCHED_HQOS_H

#include <stddef.h>
#include <stdint.h>

#include "nodes/sched/sched_io.h"
#include "sched/hqos.h"

struct graph;

/* Port settings of if_index's hierarchy, made if need be (with only the
 * default subscriber). 0 or a negative errno, reason in err. */
int sched_hqos_set_port(struct graph *g, uint32_t if_index, const struct hqos_port_config *cfg, char *err,
			size_t errlen);

/* Remove if_index's hierarchy: its packets go back to the pool (counted
 * in *freed). 0 or -ENOENT. */
int sched_hqos_off(struct graph *g, uint32_t if_index, uint64_t *freed);

/* Add or change a subscriber on if_index (the hierarchy made with
 * defaults if need be). Returns its id, or a negative errno with the
 * reason in err (-EEXIST: the name is on another interface). */
int sched_hqos_sub_set(struct graph *g, uint32_t if_index, const struct hqos_sub_config *c, char *err,
		       size_t errlen);

/* Remove a subscriber by name, wherever it is; its packets are freed
 * (*freed). 0, -ENOENT, or -EINVAL for default. */
int sched_hqos_sub_remove(struct graph *g, const char *name, uint64_t *freed);

/* The impairment of the subscriber called name (NULL or inactive: off),
 * applied at the barrier (hqos_sub_set_impair). 0, -ENOENT, or what
 * hqos_sub_set_impair returns, reason in err. */
int sched_hqos_sub_impair(struct graph *g, const char *name, const struct sched_impair_config *c, char *err,
			  size_t errlen);

/* The interface and id of the subscriber called name, or -ENOENT. */
int sched_hqos_sub_find(const char *name, uint32_t *if_index);

#endif
