/* The per-interface schedules and the classes, as the CLI and the app
 * change them (sched_io.h). Every change runs with the datapath parked at
 * the barrier, so sched-egress and sched-ingress read without locks.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"
#include "nodes/dist/dist_graph.h"
#include "nodes/sched/sched_io.h"

#define SCHED_IO_RING_LINES 512 /* per (thread, owner): 4096 packets */

uint8_t sched_egress_on[DEV_MAX];
struct sched_io_if sched_io_ifs[DEV_MAX];
static uint32_t max_held = 4096;

void sched_io_set_max_held(uint32_t n)
{
	max_held = n;
}

uint32_t sched_io_max_held(void)
{
	return max_held;
}

static uint32_t class_depth = SCHED_FRONT_DEPTH;

void sched_io_set_class_depth(uint32_t depth)
{
	class_depth = depth;
}

/* The owner's clock: the schedule's times are on it. */
uint64_t sched_io_owner_now(struct graph *g, const struct sched_io_if *sif)
{
	const struct timer_service *ts = timer_service_of(graph_thread_get(g, sif->owner));
	return ts ? timer_now(ts) : timer_clock_ns(NULL);
}

/* A schedule for if_index with nothing configured, its owner, and the
 * rings other threads hand it packets through. Barrier held. */
int sched_io_ensure(struct graph *g, uint32_t if_index, char *err, size_t errlen)
{
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	if (sif->e)
		return 0;
	uint32_t n_threads = graph_n_threads(g);
	sif->owner = sched_io_owner(if_index, n_threads);
	for (uint32_t t = 0; t < n_threads && n_threads > 1; t++) {
		if (t == sif->owner)
			continue;
		sif->ring[t] = handoff_ring_create(SCHED_IO_RING_LINES, -1);
		if (!sif->ring[t]) {
			snprintf(err, errlen, "out of memory for handoff rings");
			goto fail;
		}
	}
	sif->e = sched_egress_create(max_held, if_index + 1, err, errlen);
	if (!sif->e)
		goto fail;
	int hin = graph_node_index(g, "sched-handoff-input");
	if (n_threads > 1 && hin >= 0)
		graph_node_set_state(g, sif->owner, (uint32_t)hin, NODE_STATE_POLLING);
	return 0;
fail:
	for (uint32_t t = 0; t < GRAPH_MAX_THREADS; t++) {
		handoff_ring_free(sif->ring[t]);
		sif->ring[t] = NULL;
	}
	return -ENOMEM;
}

static int check_if(uint32_t if_index, char *err, size_t errlen)
{
	if (if_index >= DEV_MAX || !dev_by_index(if_index)) {
		snprintf(err, errlen, "no interface %u", if_index);
		return -ENOENT;
	}
	return 0;
}

void sched_io_publish(uint32_t if_index)
{
	const struct sched_io_if *sif = &sched_io_ifs[if_index];
	__atomic_store_n(&sched_egress_on[if_index], (uint8_t)(sif->shaper || sif->delay || sif->hq), __ATOMIC_RELAXED);
}

int sched_io_set_shaper(struct graph *g, uint32_t if_index, uint64_t rate_bps, uint64_t burst_bytes, char *err,
			size_t errlen)
{
	int rc = check_if(if_index, err, errlen);
	if (rc)
		return rc;
	if (rate_bps && (rate_bps < SCHED_RATE_MIN || rate_bps > SCHED_RATE_MAX)) {
		snprintf(err, errlen, "rate %llu bit/s: expected 1kbit..400gbit", (unsigned long long)rate_bps);
		return -EINVAL;
	}
	if (rate_bps && (burst_bytes < SCHED_BURST_MIN || burst_bytes > SCHED_BURST_MAX)) {
		snprintf(err, errlen, "burst %llu bytes: expected 64..256M", (unsigned long long)burst_bytes);
		return -EINVAL;
	}
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	if (!rate_bps && !sif->e)
		return 0;
	graph_barrier_sync(g);
	rc = sched_io_ensure(g, if_index, err, errlen);
	if (!rc) {
		uint64_t now = sched_io_owner_now(g, sif);
		if (sif->hq) /* the hierarchy's port level (sched_hqos.h) */
			hqos_set_rate(sif->hq, rate_bps, burst_bytes, now);
		sched_egress_set_shaper(sif->e, sif->hq ? 0 : rate_bps, burst_bytes, now);
		sif->shaper = rate_bps != 0;
		sched_io_publish(if_index);
	}
	graph_barrier_release(g);
	return rc;
}

int sched_io_set_delay(struct graph *g, uint32_t if_index, uint64_t delay_ns, uint64_t jitter_ns, char *err,
		       size_t errlen)
{
	int rc = check_if(if_index, err, errlen);
	if (rc)
		return rc;
	if (delay_ns > SCHED_DELAY_MAX || jitter_ns > delay_ns) {
		snprintf(err, errlen, "delay %lluns jitter %lluns: expected delay up to 10s and jitter up to the delay",
			 (unsigned long long)delay_ns, (unsigned long long)jitter_ns);
		return -EINVAL;
	}
	struct sched_impair_config c = { .delay_ns = delay_ns, .jitter_ns = jitter_ns };
	return sched_io_set_impair(g, if_index, &c, err, errlen);
}

int sched_io_set_impair(struct graph *g, uint32_t if_index, const struct sched_impair_config *c, char *err,
			size_t errlen)
{
	static const struct sched_impair_config off;
	int rc = check_if(if_index, err, errlen);
	if (rc)
		return rc;
	c = c ? c : &off;
	if ((rc = sched_impair_check(c, err, errlen)) != 0)
		return rc;
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	bool on = sched_impair_active(c);
	if (!on && !sif->e)
		return 0;
	graph_barrier_sync(g);
	rc = sched_io_ensure(g, if_index, err, errlen);
	if (!rc)
		rc = sched_egress_set_impair(sif->e, c, err, errlen);
	if (!rc) {
		sif->delay = sched_egress_impaired(sif->e);
		sched_io_publish(if_index);
	}
	graph_barrier_release(g);
	return rc;
}

int sched_io_set_class_impair(struct graph *g, uint32_t if_index, uint32_t class_id,
			      const struct sched_impair_config *c, char *err, size_t errlen)
{
	static const struct sched_impair_config off;
	int rc = check_if(if_index, err, errlen);
	if (rc)
		return rc;
	c = c ? c : &off;
	if ((rc = sched_impair_check(c, err, errlen)) != 0)
		return rc;
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	if (!sched_impair_active(c) && !sif->e)
		return 0;
	graph_barrier_sync(g);
	rc = sched_io_ensure(g, if_index, err, errlen);
	if (!rc)
		rc = sched_egress_set_class_impair(sif->e, class_id, c, err, errlen);
	if (!rc) {
		sif->delay = sched_egress_impaired(sif->e);
		sched_io_publish(if_index);
	}
	graph_barrier_release(g);
	return rc;
}

void sched_io_class_packets(struct graph *g, uint64_t counts[SCHED_MAX_CLASSES])
{
	memset(counts, 0, SCHED_MAX_CLASSES * sizeof(counts[0]));
	int node = graph_node_index(g, "sched-ingress");
	if (node < 0)
		return;
	for (uint32_t t = 0; t < graph_n_threads(g); t++) {
		const struct node_runtime *rt = graph_node_runtime(g, t, (uint32_t)node);
		const uint64_t *c = rt ? rt->data : NULL; /* its data starts with the counters */
		for (uint32_t i = 0; c && i < SCHED_MAX_CLASSES; i++)
			counts[i] += __atomic_load_n(&c[i], __ATOMIC_RELAXED);
	}
}

/* ---- the class queues in front of the distributor ---- */

struct sched_front sched_front;

uint64_t sched_front_held(void)
{
	if (!sched_front.evq)
		return 0;
	return evq_held(sched_front.evq) + sched_front.n_stash;
}

uint32_t sched_front_held_class(uint32_t id)
{
	struct evq_queue_stats st;
	if (!sched_front.evq || evq_queue_stats(sched_front.evq, id, &st))
		return 0;
	uint32_t n = st.held;
	for (uint32_t i = 0; i < sched_front.n_stash; i++)
		n += sched_front.stash[i].queue == id;
	return n;
}

uint64_t sched_front_held_counted(uint32_t id)
{
	const struct sched_front *f = &sched_front;
	uint64_t out = stat_read(&f->sent[id]) + stat_read(&f->dist_dropped[id]) + stat_read(&f->shutdown[id]);
	uint64_t queued = stat_read(&f->queued[id]);
	return queued > out ? queued - out : 0;
}

/* Everything still held goes back to the pool, counted per class as
 * dropped at shutdown; then the queues go. Workers stopped (or the
 * datapath parked). Returns the packets freed. */
static uint64_t front_release(struct graph *g)
{
	struct sched_front *f = &sched_front;
	if (!f->evq)
		return 0;
	uint64_t freed = 0;
	struct evq_event ev[FRAME_SIZE];
	uint32_t bi[FRAME_SIZE];
	for (uint32_t i = 0; i < f->n_stash; i++) {
		stat_add(&f->shutdown[f->stash[i].queue], 1);
		buffer_free(&f->stash[i].buffer_index, 1);
	}
	freed += f->n_stash;
	f->n_stash = 0;
	uint32_t n;
	while ((n = evq_dequeue(f->evq, ev, FRAME_SIZE)) != 0) {
		for (uint32_t i = 0; i < n; i++) {
			bi[i] = ev[i].buffer_index;
			stat_add(&f->shutdown[ev[i].queue], 1);
		}
		buffer_free(bi, n);
		freed += n;
	}
	evq_destroy(f->evq);
	f->evq = NULL;
	int node = g ? graph_node_index(g, "sched-dist") : -1;
	if (node >= 0)
		graph_node_set_state(g, 0, (uint32_t)node, NODE_STATE_DISABLED);
	dist_graph_set_front(NULL);
	return freed;
}

static const struct dist_front front_hooks = {
	.node = "sched-dist",
	.held = sched_front_held,
	.release = front_release,
};

/* The queues, once a distributor is attached and a class defined (the
 * daemon defines classes from the CLI, after the distributor attached).
 * Barrier held. A failure leaves the classes working as without workers'
 * queues: packets go straight to the distributor. */
static void front_sync(struct graph *g)
{
	struct sched_front *f = &sched_front;
	const struct sched_class_table *t = &sched_class_table;
	int node = graph_node_index(g, "sched-dist");
	if (!f->evq && dist_attached() && t->n && node >= 0) {
		char err[128];
		struct evq *q = evq_create(SCHED_MAX_CLASSES, err, sizeof(err));
		struct evq_queue_config qc;
		evq_queue_config_default(&qc);
		qc.depth = class_depth;
		for (uint32_t id = 0; q && id < SCHED_MAX_CLASSES; id++) {
			if (evq_queue_setup(q, id, &qc)) {
				evq_destroy(q);
				q = NULL;
			}
		}
		if (!q) {
			base_log("sched", "warning: no class queues for the workers (out of memory)");
			return;
		}
		f->evq = q;
		f->depth = class_depth;
		f->n_stash = 0;
		dist_graph_set_front(&front_hooks);
		graph_node_set_state(g, 0, (uint32_t)node, NODE_STATE_POLLING);
	}
	for (uint32_t id = 1; f->evq && id < SCHED_MAX_CLASSES; id++)
		evq_queue_set_weight(f->evq, id, t->cls[id].name[0] ? t->cls[id].weight : 1);
}

int sched_io_class_set(struct graph *g, const struct sched_class *c, char *err, size_t errlen)
{
	graph_barrier_sync(g);
	int rc = sched_class_set(c, err, errlen);
	if (rc >= 0)
		front_sync(g);
	graph_barrier_release(g);
	return rc;
}

int sched_io_class_remove(struct graph *g, const char *name)
{
	graph_barrier_sync(g);
	int rc = sched_class_remove(name);
	if (rc == 0)
		front_sync(g);
	graph_barrier_release(g);
	return rc;
}

/* The interface goes (or the process ends): its held packets and those in
 * its rings go back to the pool. A timer still armed for it finds its
 * handle no longer the interface's (timer 0) and does nothing. Datapath
 * parked. */
static void if_free(uint32_t if_index)
{
	if (if_index >= DEV_MAX)
		return;
	struct sched_io_if *sif = &sched_io_ifs[if_index];
	sched_egress_on[if_index] = 0;
	for (uint32_t t = 0; t < GRAPH_MAX_THREADS; t++) {
		uint32_t bi[256], n;
		if (!sif->ring[t])
			continue;
		while ((n = handoff_dequeue(sif->ring[t], bi, NULL, 256)) != 0)
			buffer_free(bi, n);
		handoff_ring_free(sif->ring[t]);
	}
	sched_egress_destroy(sif->e);
	hqos_destroy(sif->hq);
	uint32_t gen = sif->gen + 1;
	memset(sif, 0, sizeof(*sif));
	sif->gen = gen;
}

void sched_io_free_all(void)
{
	for (uint32_t i = 0; i < DEV_MAX; i++)
		if_free(i);
	front_release(NULL);
	memset(&sched_front, 0, sizeof(sched_front));
	sched_class_clear();
}

/* `show buffers`: what each schedule holds, and what waits in the
 * handoff rings to its owner (datapath parked). */
static void holder(void *ctx, struct buffer_tally *t)
{
	(void)ctx;
	for (uint32_t i = 0; i < DEV_MAX; i++) {
		const struct sched_io_if *sif = &sched_io_ifs[i];
		const struct device *d = dev_by_index(i);
		char where[BUFFER_WHERE_SIZE];
		uint64_t ring = 0;
		if (!sif->e)
			continue;
		for (uint32_t k = 0; k < GRAPH_MAX_THREADS; k++) {
			struct handoff_stats st;
			if (!sif->ring[k])
				continue;
			handoff_ring_stats(sif->ring[k], &st);
			ring += st.buffers_in - st.buffers_out;
		}
		snprintf(where, sizeof(where), "%s egress held", d ? d->name : "?");
		buffer_tally_add(t, where, sched_egress_held_buffers(sif->e));
		if (sif->hq) {
			snprintf(where, sizeof(where), "%s hqos held", d ? d->name : "?");
			buffer_tally_add(t, where, hqos_held_buffers(sif->hq));
		}
		snprintf(where, sizeof(where), "%s egress handoff", d ? d->name : "?");
		buffer_tally_add(t, where, ring);
	}
	if (sched_front.evq)
		buffer_tally_add(t, "class queues for the workers", sched_front_held());
}

static void __attribute__((constructor)) sched_io_register_hooks(void)
{
	dev_on_delete(if_free);
	buffer_holder_register("sched", holder, NULL);
}
