/* sched-dist: on the rx thread, hands the packets waiting in the class
 * queues (nodes/sched/sched_io.h, "the class queues in front of the
 * distributor") to the distributor, only as many as the workers have room
 * for: the highest priority first, the classes of one priority in turns of
 * their weights, each packet with its class's scheduling type (atomic,
 * ordered, parallel). Under worker backpressure the rest waits in its
 * class queue, so priority still decides who goes next.
 *
 * Polled every loop on thread 0 while the class queues exist. Each poll
 * takes about as many packets as the workers' free backlog slots add up to
 * (intake()), and places each on paper first: an atomic packet whose flow a worker owns
 * (dist_flow_owner) needs a slot of that worker, any other packet a slot
 * of the worker with the most. A packet with no slot is held back, and so
 * is every later packet of its flow tag in that poll; held packets wait in
 * a stash, in order, and are placed first on the next poll. So a worker
 * that falls behind holds back only its own flows, nothing overtakes a
 * packet of its flow that waits, and the distributor is offered only what
 * it should take. (It may still refuse one, when a flow's last packet
 * completes between the placing and the call and the flow then opens on
 * a worker that is full. Such a packet goes back to the front of the
 * stash, to be offered first next time, unless a later packet of its flow
 * tag was taken in the same call: a retry would then leave after it, so
 * it is dropped with the distributor's reason instead.) The stash holds
 * SCHED_FRONT_STASH packets: past that, the lowest priority is dropped.
 *
 * Next nodes: error-drop.
 * Errors: the distributor's drop reasons (dist_drop_reason_strings).
 * Trace: a traced packet (sched-ingress's record says class, priority,
 *   type and "queued for the workers") gets a record here as it is offered
 *   to the distributor: its class, type, flow tag and the worker it was
 *   placed on (a refused offer is offered again, with a record again); the
 *   next records are the worker's. Looked for only while a trace is armed.
 * CLI: `show sched` (per class: held, sent, dropped), `show errors`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/dist/dist_graph.h"
#include "nodes/sched/sched_io.h"

enum sched_dist_next {
	SCHED_DIST_NEXT_DROP = 0,
	SCHED_DIST_N_NEXT,
};

struct sched_dist_trace {
	uint16_t tag;
	uint8_t class_id;
	uint8_t type;
	uint8_t worker;
	char name[SCHED_CLASS_NAME_SIZE];
};
_Static_assert(sizeof(struct sched_dist_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int sched_dist_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct sched_dist_trace t;
	memcpy(&t, detail, sizeof(t));
	return snprintf(buf, len, "to the distributor: class %u %.*s type %s, flow tag %u, worker %u", t.class_id,
			SCHED_CLASS_NAME_SIZE, t.class_id ? t.name : "(none)",
			t.type < SCHED_N_TYPES ? sched_type_names[t.type] : "?", t.tag, t.worker);
}

/* ---- helpers ---- */

/* Out of line: only while a trace is armed, for the packets it marked. */
static __attribute__((noinline)) void trace_offer(struct node_runtime *rt, const struct evq_event *e, uint8_t type,
						  uint32_t worker)
{
	struct buffer *b = buffer_get(e->buffer_index);
	uint8_t *detail = (b->flags & BUFFER_F_TRACED) ? node_trace_append(rt, b) : NULL;
	if (!detail)
		return;
	struct sched_dist_trace t = { .tag = (uint16_t)e->flow, .class_id = e->queue, .type = type,
				      .worker = (uint8_t)worker };
	memcpy(t.name, sched_class_table.cls[e->queue].name, sizeof(t.name));
	memcpy(detail, &t, sizeof(t));
}

struct sched_dist_data {
	struct evq_event ev[FRAME_SIZE];   /* this poll's: the stash's, then new ones */
	struct evq_event off[FRAME_SIZE];  /* placed: offered to the distributor */
	uint32_t bi[FRAME_SIZE];
	uint16_t tags[FRAME_SIZE];
	uint8_t types[FRAME_SIZE];
	uint32_t refused[FRAME_SIZE];      /* the distributor's answer: the refused buffers, in order */
	uint8_t reason[FRAME_SIZE];
	uint32_t dropped[FRAME_SIZE];      /* to error-drop */
	uint8_t assigned[FRAME_SIZE];      /* rebuilt from refused[] when the distributor refused some */
	uint8_t overtaken[FRAME_SIZE];     /* refused, and a later packet of its tag was taken */
	struct evq_event retry[FRAME_SIZE]; /* refused, offered again first next poll */
	uint32_t room[DIST_MAX_WORKERS];   /* free slots left on paper */
	uint16_t touched[FRAME_SIZE];      /* tags marked below, to unmark */
	uint8_t opened[DIST_N_TAGS];       /* worker + 1 an atomic flow opens on this poll */
	uint8_t blocked[DIST_N_TAGS / 8];  /* tags with a packet held back this poll */
};

/* The workers' free backlog slots, into room[]; returns their sum. */
static uint32_t rooms(const struct dist *d, uint32_t *room)
{
	uint32_t sum = 0;
	for (uint32_t w = 0; w < dist_n_workers(d); w++)
		sum += room[w] = dist_room(d, w);
	return sum;
}

/* New packets to take: the room less what the stash holds (its packets
 * mostly wait for a worker that is behind: more would only join them), but
 * at least half the room, so that a stalled worker's flows, filling the
 * stash, slow the others and never stop them. */
static uint32_t intake(uint32_t sum, uint32_t n_stash)
{
	uint32_t n = sum > n_stash ? sum - n_stash : 0;
	n = MAX(n, sum / 2);
	return MIN(n, (uint32_t)FRAME_SIZE - n_stash);
}

static uint32_t most_room(const uint32_t *room, uint32_t n_workers)
{
	uint32_t best = 0;
	for (uint32_t w = 1; w < n_workers; w++)
		if (room[w] > room[best])
			best = w;
	return best;
}

/* Worker + 1 that gets e, with a slot taken on paper; 0: hold it back. */
static uint32_t place(struct sched_dist_data *d, const struct dist *dist, const struct evq_event *e, uint8_t type,
		      uint32_t *n_touched)
{
	uint16_t tag = (uint16_t)e->flow;
	if (d->blocked[tag / 8] & (1u << (tag % 8)))
		return 0;
	uint32_t w1 = 0;
	if (type == SCHED_TYPE_ATOMIC)
		w1 = d->opened[tag] ? d->opened[tag] : dist_flow_owner(dist, tag);
	bool opens = !w1;
	if (opens)
		w1 = most_room(d->room, dist_n_workers(dist)) + 1;
	if (d->room[w1 - 1]) {
		d->room[w1 - 1]--;
		if (opens && type == SCHED_TYPE_ATOMIC) {
			d->opened[tag] = (uint8_t)w1;
			d->touched[(*n_touched)++] = tag;
		}
		return w1;
	}
	d->blocked[tag / 8] |= (uint8_t)(1u << (tag % 8));
	d->touched[(*n_touched)++] = tag;
	return 0;
}

/* The stash is full and e is held back too: e takes the place of the
 * newest stashed packet of a lower priority, which is dropped instead, so
 * that a full stash costs the lowest priority first. Returns the packet to
 * drop: e itself when none is lower. Cold: only a worker that falls
 * behind fills the stash. */
static __attribute__((noinline)) struct evq_event evict(struct evq_event *stash, struct evq_event e)
{
	uint32_t worst = SCHED_FRONT_STASH;
	for (uint32_t j = SCHED_FRONT_STASH; j--;)
		if (stash[j].priority > (worst == SCHED_FRONT_STASH ? e.priority : stash[worst].priority))
			worst = j;
	if (worst == SCHED_FRONT_STASH)
		return e;
	struct evq_event out = stash[worst];
	memmove(&stash[worst], &stash[worst + 1], (SCHED_FRONT_STASH - 1 - worst) * sizeof(stash[0]));
	stash[SCHED_FRONT_STASH - 1] = e;
	return out;
}

static void drop(struct node_runtime *rt, struct sched_dist_data *d, struct sched_front *fr, uint32_t *n_drop,
		 const struct evq_event *e, uint8_t reason)
{
	stat_add(&fr->dist_dropped[e->queue], 1);
	buffer_get(e->buffer_index)->error = node_error(rt, reason);
	d->dropped[(*n_drop)++] = e->buffer_index;
}

/* Place every packet of ev[0..n): the placed ones into off[] (returns how
 * many), the others back into the stash in order. A full stash drops (the
 * lowest priority first) as the flow's worker would: DIST_DROP_WORKER_FULL. */
static uint32_t sort_out(struct node_runtime *rt, struct sched_dist_data *d, struct sched_front *fr,
			 const struct dist *dist, uint32_t n, uint32_t *n_drop)
{
	const uint8_t *types = sched_class_table.type;
	const bool tracing = node_trace_armed(rt);
	uint32_t n_off = 0, n_stash = 0, n_touched = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct evq_event *e = &d->ev[i];
		uint8_t type = types[e->queue];
		uint32_t w1 = place(d, dist, e, type, &n_touched);
		if (likely(w1)) {
			if (unlikely(tracing))
				trace_offer(rt, e, type, w1 - 1);
			d->types[n_off] = type;
			d->off[n_off++] = *e;
		} else if (n_stash < SCHED_FRONT_STASH) {
			fr->stash[n_stash++] = *e;
		} else {
			struct evq_event out = evict(fr->stash, *e);
			drop(rt, d, fr, n_drop, &out, DIST_DROP_WORKER_FULL);
		}
	}
	fr->n_stash = n_stash;
	for (uint32_t i = 0; i < n_touched; i++) {
		uint16_t tag = d->touched[i];
		d->opened[tag] = 0;
		d->blocked[tag / 8] = 0;
	}
	return n_off;
}

/* The distributor refused some of off[0..n): each goes back to the front
 * of the stash, in order, ahead of the packets held back this poll (all of
 * them later in their flows), unless a later packet of its tag was taken
 * (a retry would reorder the flow) or the stash has no room: those are
 * dropped with the distributor's reason. Cold: placement on paper makes a
 * refusal rare. */
static __attribute__((noinline)) void refused(struct node_runtime *rt, struct sched_dist_data *d,
					      struct sched_front *fr, uint32_t n, uint32_t taken, uint32_t *n_drop)
{
	uint32_t n_touched = 0, n_retry = 0;
	/* Which were taken, from the refused buffers (in offer order, each
	 * buffer offered once): dist_process was not asked for assigned[],
	 * which would have sent every call down its traced copy. */
	for (uint32_t i = 0, k = 0; i < n; i++) {
		bool r = k < n - taken && d->refused[k] == d->bi[i];
		d->assigned[i] = !r;
		k += r;
	}
	for (uint32_t i = n; i--;) { /* backwards: "taken later" is known when i is reached */
		uint16_t tag = d->tags[i];
		bool later = d->blocked[tag / 8] & (1u << (tag % 8));
		d->overtaken[i] = !d->assigned[i] && later;
		if (d->assigned[i] && !later) {
			d->blocked[tag / 8] |= (uint8_t)(1u << (tag % 8));
			d->touched[n_touched++] = tag;
		}
	}
	for (uint32_t i = 0; i < n_touched; i++)
		d->blocked[d->touched[i] / 8] = 0;
	for (uint32_t i = 0, k = 0; i < n; i++) {
		if (likely(d->assigned[i])) {
			stat_add(&fr->sent[d->off[i].queue], 1);
			continue;
		}
		uint8_t reason = d->reason[k++];
		if (!d->overtaken[i] && fr->n_stash + n_retry < SCHED_FRONT_STASH)
			d->retry[n_retry++] = d->off[i];
		else
			drop(rt, d, fr, n_drop, &d->off[i], reason);
	}
	memmove(fr->stash + n_retry, fr->stash, fr->n_stash * sizeof(fr->stash[0]));
	memcpy(fr->stash, d->retry, n_retry * sizeof(fr->stash[0]));
	fr->n_stash += n_retry;
}

/* ---- the node ---- */

static uint32_t sched_dist_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	struct sched_dist_data *d = rt->data;
	struct sched_front *fr = &sched_front;
	struct dist *dist = dist_attached();
	if (unlikely(!sched_front_on(rt->thread_index) || !dist))
		return 0;
	uint32_t sum = rooms(dist, d->room), n = fr->n_stash;
	if (!sum) /* every backlog full: nothing can be placed */
		return 0;
	memcpy(d->ev, fr->stash, n * sizeof(d->ev[0]));
	n += evq_dequeue(fr->evq, d->ev + n, intake(sum, n)); /* priority order */
	uint32_t n_drop = 0, n_off = sort_out(rt, d, fr, dist, n, &n_drop);
	uint32_t taken = 0;
	if (n_off) {
		for (uint32_t i = 0; i < n_off; i++) {
			d->bi[i] = d->off[i].buffer_index;
			d->tags[i] = (uint16_t)d->off[i].flow;
		}
		taken = dist_process(dist, d->bi, d->tags, d->types, n_off, d->refused, d->reason, NULL);
		if (likely(taken == n_off))
			for (uint32_t i = 0; i < n_off; i++)
				stat_add(&fr->sent[d->off[i].queue], 1);
		else
			refused(rt, d, fr, n_off, taken, &n_drop);
	}
	if (n_drop)
		node_enqueue(rt, SCHED_DIST_NEXT_DROP, d->dropped, n_drop);
	return taken + n_drop;
}

static const struct node_reg sched_dist_node = {
	.name = "sched-dist",
	.type = NODE_TYPE_INPUT,
	.fn = sched_dist_fn,
	.n_next = SCHED_DIST_N_NEXT,
	.next_nodes = { [SCHED_DIST_NEXT_DROP] = "error-drop" },
	.n_errors = DIST_N_DROP,
	.error_strings = dist_drop_reason_strings,
	.format_trace = sched_dist_format_trace,
	.runtime_data_size = sizeof(struct sched_dist_data),
	.default_state = NODE_STATE_DISABLED,
};
NODE_REGISTER(sched_dist_node)
