/* Event queues: setup, the owner's enqueue and output, statistics.
 * The scheduling pass is in evq_sched.c, the ports' side in evq_port.c. */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "sched/evq_private.h"

static bool pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

static void *alloc_lines(size_t bytes)
{
	void *p = aligned_alloc(CACHE_LINE_SIZE, ROUND_UP(bytes, CACHE_LINE_SIZE));
	if (p)
		memset(p, 0, ROUND_UP(bytes, CACHE_LINE_SIZE));
	return p;
}

static void fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

void evq_config_default(struct evq_config *cfg)
{
	*cfg = (struct evq_config){
		.n_queues = 1,
		.n_ports = 1,
		.port_depth = 256,
		.output_size = 4096,
	};
}

void evq_queue_config_default(struct evq_queue_config *qc)
{
	*qc = (struct evq_queue_config){
		.weight = 1,
		.depth = 1024,
	};
}

static void port_free(struct evq_port *p)
{
	if (!p)
		return;
	free(p->ring);
	free(p);
}

static struct evq_port *port_create(uint32_t depth)
{
	struct evq_port *p = alloc_lines(sizeof(*p));
	if (!p)
		return NULL;
	p->ring = alloc_lines((size_t)depth * sizeof(struct evq_event));
	if (!p->ring) {
		port_free(p);
		return NULL;
	}
	p->mask = depth - 1;
	p->c_ring = p->ring;
	p->c_mask = depth - 1;
	return p;
}

struct evq *evq_create(const struct evq_config *cfg, char *err, size_t errlen)
{
	if (cfg->n_queues < 1 || cfg->n_queues > EVQ_MAX_QUEUES) {
		fail(err, errlen, "queues: %u is not in 1..%u", cfg->n_queues, EVQ_MAX_QUEUES);
		return NULL;
	}
	if (cfg->n_ports < 1 || cfg->n_ports > EVQ_MAX_PORTS) {
		fail(err, errlen, "ports: %u is not in 1..%u", cfg->n_ports, EVQ_MAX_PORTS);
		return NULL;
	}
	if (!pow2(cfg->port_depth) || cfg->port_depth < 8 || cfg->port_depth > 32768) {
		fail(err, errlen, "port depth: %u is not a power of two in 8..32768", cfg->port_depth);
		return NULL;
	}
	if (!pow2(cfg->output_size)) {
		fail(err, errlen, "output size: %u is not a power of two", cfg->output_size);
		return NULL;
	}
	struct evq *q = alloc_lines(sizeof(*q));
	if (!q) {
		fail(err, errlen, "out of memory");
		return NULL;
	}
	q->n_queues = cfg->n_queues;
	q->n_ports = cfg->n_ports;
	q->port_depth = cfg->port_depth;
	q->out = alloc_lines((size_t)cfg->output_size * sizeof(struct evq_event));
	q->out_mask = cfg->output_size - 1;
	bool ok = q->out != NULL;
	for (uint32_t i = 0; ok && i < cfg->n_ports; i++) {
		q->ports[i] = port_create(cfg->port_depth);
		ok = q->ports[i] != NULL;
		if (ok)
			q->ports[i]->c_evq = q;
	}
	if (!ok) {
		evq_destroy(q);
		fail(err, errlen, "out of memory");
		return NULL;
	}
	return q;
}

static void queue_free(struct evq_queue *eq)
{
	for (uint32_t l = 0; l < EVQ_LEVELS; l++)
		free(eq->iq[l].ev);
	memset(eq, 0, sizeof(*eq));
}

void evq_destroy(struct evq *q)
{
	if (!q)
		return;
	for (uint32_t i = 0; i < EVQ_MAX_QUEUES; i++)
		queue_free(&q->queues[i]);
	for (uint32_t i = 0; i < EVQ_MAX_PORTS; i++)
		port_free(q->ports[i]);
	free(q->out);
	free(q);
}

int evq_queue_setup(struct evq *q, uint32_t queue, const struct evq_queue_config *qc)
{
	if (queue >= q->n_queues || qc->weight < 1 || qc->weight > 65535 || !pow2(qc->depth))
		return -EINVAL;
	struct evq_queue *eq = &q->queues[queue];
	if (eq->configured)
		return -EBUSY;
	/* Each level's FIFO holds twice the depth: new events are refused at
	 * `depth` over all levels together, forwards only when their level's
	 * FIFO is full, so that forwards always have `depth` of headroom. */
	bool ok = true;
	for (uint32_t l = 0; l < EVQ_LEVELS && ok; l++) {
		eq->iq[l].ev = alloc_lines((size_t)qc->depth * 2 * sizeof(struct evq_event));
		ok = eq->iq[l].ev != NULL;
	}
	if (!ok) {
		queue_free(eq);
		return -ENOMEM;
	}
	eq->iq_mask = qc->depth * 2 - 1;
	eq->depth = qc->depth;
	eq->weight = (uint16_t)qc->weight;
	eq->configured = 1;
	return 0;
}

int evq_queue_set_weight(struct evq *q, uint32_t queue, uint32_t weight)
{
	if (queue >= q->n_queues || !q->queues[queue].configured || weight < 1 || weight > 65535)
		return -EINVAL;
	q->queues[queue].weight = (uint16_t)weight;
	for (uint32_t l = 0; l < EVQ_LEVELS; l++)
		if (q->rr_queue[l] == queue && q->rr_left[l] > weight)
			q->rr_left[l] = weight;
	return 0;
}

int evq_port_link(struct evq *q, uint32_t port, uint32_t queue)
{
	if (port >= q->n_ports || queue >= q->n_queues || !q->queues[queue].configured)
		return -EINVAL;
	q->queues[queue].ports |= 1ull << port;
	return 0;
}

struct evq_port *evq_port(struct evq *q, uint32_t index)
{
	return index < q->n_ports ? q->ports[index] : NULL;
}

static inline void mark_queued(struct evq *q, uint32_t queue, uint32_t lvl)
{
	q->level_queues[lvl] |= 1ull << queue;
	q->level_mask |= (uint8_t)(1u << lvl);
}

static inline void iq_push(struct evq *q, struct evq_queue *eq, uint32_t queue, const struct evq_event *ev)
{
	struct evq_iq *iq = &eq->iq[ev->priority];
	iq->ev[iq->tail++ & eq->iq_mask] = *ev;
	eq->held++;
	eq->n_enqueued++;
	mark_queued(q, queue, ev->priority);
}

/* queue and priority side by side: one compare finds a run's end */
static inline uint16_t run_key(const struct evq_event *ev)
{
	return (uint16_t)(ev->queue | ev->priority << 8);
}

/* Copy a run of n events of one (queue, level) into its FIFO: at most two
 * memcpy, as the FIFO wraps. */
static void iq_copy(struct evq_queue *eq, struct evq_iq *iq, const struct evq_event *ev, uint32_t n)
{
	uint32_t at = iq->tail & eq->iq_mask, first = eq->iq_mask + 1 - at;
	if (first > n)
		first = n;
	memcpy(&iq->ev[at], ev, first * sizeof(*ev));
	memcpy(&iq->ev[0], ev + first, (n - first) * sizeof(*ev));
	iq->tail += n;
}

/* Runs of one (queue, priority) are taken whole: checks and bookkeeping
 * once a run, a copy per event (a producer's burst is usually one run). */
uint32_t evq_enqueue(struct evq *q, const struct evq_event *ev, uint32_t n)
{
	uint32_t i = 0;
	while (i < n) {
		uint32_t queue = ev[i].queue, lvl = ev[i].priority;
		if (unlikely(queue >= q->n_queues || lvl >= EVQ_LEVELS || !q->queues[queue].configured)) {
			q->st.invalid++;
			break;
		}
		struct evq_queue *eq = &q->queues[queue];
		uint16_t key = run_key(&ev[i]);
		uint32_t end = i + 1;
		while (end < n && run_key(&ev[end]) == key)
			end++;
		uint32_t room = eq->depth - eq->held, take = end - i;
		if (take > room)
			take = room;
		if (likely(take)) {
			iq_copy(eq, &eq->iq[lvl], ev + i, take);
			eq->held += take;
			eq->n_enqueued += take;
			mark_queued(q, queue, lvl);
			i += take;
		}
		if (unlikely(i < end)) {
			eq->n_refused += n - i;
			q->st.refused += n - i;
			break;
		}
	}
	q->st.enqueued += i;
	return i;
}

bool evq_place(struct evq *q, const struct evq_event *ev)
{
	if (ev->queue == EVQ_QUEUE_OUT) {
		if (q->out_tail - q->out_head > q->out_mask)
			return false;
		q->out[q->out_tail++ & q->out_mask] = *ev;
		q->st.output++;
		return true;
	}
	/* evq_port_forward checked queue and priority */
	struct evq_queue *eq = &q->queues[ev->queue];
	const struct evq_iq *iq = &eq->iq[ev->priority];
	if (iq->tail - iq->head > eq->iq_mask)
		return false;
	iq_push(q, eq, ev->queue, ev);
	return true;
}

uint32_t evq_output(struct evq *q, struct evq_event *ev, uint32_t max)
{
	uint32_t n = q->out_tail - q->out_head;
	if (n > max)
		n = max;
	for (uint32_t i = 0; i < n; i++)
		ev[i] = q->out[(q->out_head + i) & q->out_mask];
	q->out_head += n;
	return n;
}

uint64_t evq_in_flight(const struct evq *q)
{
	uint64_t n = q->out_tail - q->out_head;
	for (uint32_t i = 0; i < q->n_queues; i++) {
		const struct evq_queue *eq = &q->queues[i];
		n += eq->held;
	}
	for (uint32_t i = 0; i < q->n_ports; i++) {
		const struct evq_port *p = q->ports[i];
		n += p->o_tail - p->o_seen;
	}
	return n;
}

void evq_stats(const struct evq *q, struct evq_stats *st)
{
	*st = q->st;
	for (uint32_t i = 0; i < q->n_ports; i++)
		st->invalid += atomic_load_explicit(&q->ports[i]->n_invalid, memory_order_relaxed);
}

int evq_queue_stats(const struct evq *q, uint32_t queue, struct evq_queue_stats *st)
{
	if (queue >= q->n_queues)
		return -EINVAL;
	const struct evq_queue *eq = &q->queues[queue];
	*st = (struct evq_queue_stats){
		.enqueued = eq->n_enqueued,
		.refused = eq->n_refused,
		.dispatched = eq->n_dispatched,
		.held = eq->held,
	};
	return 0;
}
