/* The hierarchies on interfaces (sched_hqos.h): every change with the
 * datapath parked at the barrier, so sched-egress reads without locks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "nodes/sched/sched_hqos.h"

int sched_hqos_sub_find(const char *name, uint32_t *if_index)
{
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct hqos *hq = sched_io_ifs[i].hq;
		int id = hq ? hqos_sub_find(hq, name) : -ENOENT;
		if (id >= 0) {
			*if_index = i;
			return id;
		}
	}
	return -ENOENT;
}

static int check_if(uint32_t if_index, char *err, size_t errlen)
{
	if (if_index >= DEV_MAX || !dev_by_index(if_index)) {
		snprintf(err, errlen, "no interface %u", if_index);
		return -ENOENT;
	}
	return 0;
}

/* Attach hq (made and checked before the barrier) to if_index; the
 * shaper moves from the egress schedule to its port level. Barrier held. */
static int attach(struct graph *g, uint32_t if_index, struct hqos *hq, char *err, size_t errlen)
{
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	int rc = sched_io_ensure(g, if_index, err, errlen);
	if (rc)
		return rc;
	struct sched_egress_stats st;
	sched_egress_stats(sif->e, &st);
	uint64_t now = sched_io_owner_now(g, sif);
	hqos_set_rate(hq, st.cfg.rate_bps, st.cfg.burst_bytes, now);
	sched_egress_set_shaper(sif->e, 0, 0, now);
	sif->hq = hq;
	sched_io_publish(if_index);
	return 0;
}

int sched_hqos_set_port(struct graph *g, uint32_t if_index, const struct hqos_port_config *cfg, char *err,
			size_t errlen)
{
	int rc = check_if(if_index, err, errlen);
	if (rc)
		return rc;
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	struct hqos *made = NULL;
	if (!sif->hq && !(made = hqos_create(cfg, err, errlen)))
		return strcmp(err, "out of memory") ? -EINVAL : -ENOMEM;
	graph_barrier_sync(g);
	rc = made ? attach(g, if_index, made, err, errlen) : hqos_set_port(sif->hq, cfg, err, errlen);
	graph_barrier_release(g);
	if (rc && made)
		hqos_destroy(made);
	return rc;
}

int sched_hqos_off(struct graph *g, uint32_t if_index, uint64_t *freed)
{
	*freed = 0;
	if (if_index >= DEV_MAX || !sched_io_ifs[if_index].hq)
		return -ENOENT;
	graph_barrier_sync(g);
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	struct hqos_port_stats st;
	hqos_port_stats(sif->hq, &st);
	*freed = hqos_held(sif->hq);
	hqos_destroy(sif->hq);
	sif->hq = NULL;
	sched_egress_set_shaper(sif->e, st.rate_bps, st.burst_bytes, sched_io_owner_now(g, sif));
	sched_io_publish(if_index);
	graph_barrier_release(g);
	return 0;
}

int sched_hqos_sub_set(struct graph *g, uint32_t if_index, const struct hqos_sub_config *c, char *err,
		       size_t errlen)
{
	int rc = check_if(if_index, err, errlen);
	if (rc)
		return rc;
	uint32_t other;
	if (sched_hqos_sub_find(c->name, &other) >= 0 && other != if_index) {
		const struct device *d = dev_by_index(other);
		snprintf(err, errlen, "subscriber %s is on interface %s", c->name, d ? d->name : "?");
		return -EEXIST;
	}
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	struct hqos *made = NULL;
	if (!sif->hq) { /* a new hierarchy, with the subscriber in it before it is attached */
		struct hqos_port_config pc;
		hqos_port_config_default(&pc);
		if (!(made = hqos_create(&pc, err, errlen)))
			return -ENOMEM;
		if ((rc = hqos_sub_set(made, c, 0, err, errlen)) < 0) {
			hqos_destroy(made);
			return rc;
		}
	}
	graph_barrier_sync(g);
	if (made)
		rc = attach(g, if_index, made, err, errlen) ?: rc;
	else
		rc = hqos_sub_set(sif->hq, c, sched_io_owner_now(g, sif), err, errlen);
	graph_barrier_release(g);
	if (rc < 0 && made)
		hqos_destroy(made);
	return rc;
}

int sched_hqos_sub_impair(struct graph *g, const char *name, const struct sched_impair_config *c, char *err,
			  size_t errlen)
{
	uint32_t if_index;
	int id = sched_hqos_sub_find(name, &if_index);
	if (id < 0) {
		snprintf(err, errlen, "no subscriber %s (sched subscriber NAME interface ... defines one)", name);
		return -ENOENT;
	}
	int rc = sched_impair_check(c, err, errlen);
	if (rc)
		return rc;
	graph_barrier_sync(g);
	rc = hqos_sub_set_impair(sched_io_ifs[if_index].hq, (uint32_t)id, c, err, errlen);
	graph_barrier_release(g);
	return rc;
}

int sched_hqos_sub_remove(struct graph *g, const char *name, uint64_t *freed)
{
	uint32_t if_index;
	*freed = 0;
	if (sched_hqos_sub_find(name, &if_index) < 0)
		return -ENOENT;
	graph_barrier_sync(g);
	int rc = hqos_sub_remove(sched_io_ifs[if_index].hq, name, freed);
	graph_barrier_release(g);
	return rc;
}
