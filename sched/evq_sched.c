/* Event queues: the scheduling pass, on the owner thread only.
 *
 * A pass (1) takes in each port's completions, in the order the port
 * dequeued them: forwards go to their queue or the output; (2) dispatches:
 * the lowest level with queued events first, round robin between that
 * level's queues, `weight` events per turn, each queue's events spread
 * over its linked ports in runs; a queue that cannot go on (its ports
 * full) gives its turn up for the pass; (3) publishes each port's new tail
 * once.
 *
 * No flow pinning and no reorder window here: which worker a flow runs on,
 * and the order it leaves in, is the distributor's (sched/sched_type.h
 * says why).
 */
#include <string.h>

#include "sched/evq_private.h"

#define NO_PORT UINT32_MAX

/* ---- completions ---------------------------------------------------- */

/* A forward whose destination is full stays in its slot, holding the
 * port's later completions back until a later pass places it. */
static void take_completions(struct evq *q, struct evq_port *p)
{
	uint32_t done = atomic_load_explicit(&p->done, memory_order_acquire);
	uint32_t seen = p->o_seen, n_fwd = 0;
	struct evq_event *ring = p->ring;
	for (; seen != done; seen++) {
		struct evq_event *ev = &ring[seen & p->mask];
		if (ev->op == EVQ_OP_FORWARD) {
			if (!evq_place(q, ev))
				break;
			n_fwd++;
		}
	}
	q->st.completed += seen - p->o_seen;
	q->st.forwarded += n_fwd;
	p->o_seen = seen;
}

/* ---- dispatch --------------------------------------------------------- */

/* The next of the queue's ports with room, round robin. */
static inline uint32_t pick_port(struct evq *q, struct evq_queue *eq)
{
	uint64_t cand = eq->ports & q->space_ports;
	if (!cand)
		return NO_PORT;
	if (!(cand & (cand - 1)))
		return (uint32_t)__builtin_ctzll(cand); /* one choice: nothing to rotate */
	uint64_t from = cand & (~0ull << eq->rr_port);
	uint32_t p = (uint32_t)__builtin_ctzll(from ? from : cand);
	eq->rr_port = (p + 1) & (EVQ_MAX_PORTS - 1);
	return p;
}

/* The port being written to, its tail and room kept in locals while
 * consecutive events go to it: the build has -fno-strict-aliasing, so
 * fields read through pointers are reloaded after every ring store. */
struct cursor {
	uint32_t pi; /* NO_PORT: none */
	uint32_t tail;
	uint32_t room;
	uint32_t mask;
	struct evq_event *ring;
};

static inline void cur_flush(struct evq *q, struct cursor *c)
{
	if (c->pi == NO_PORT)
		return;
	q->ports[c->pi]->o_tail = c->tail;
	q->space[c->pi] = c->room;
	c->pi = NO_PORT;
}

static inline void cur_to(struct evq *q, struct cursor *c, uint32_t pi)
{
	if (c->pi == pi)
		return;
	cur_flush(q, c);
	const struct evq_port *p = q->ports[pi];
	*c = (struct cursor){.pi = pi, .tail = p->o_tail, .room = q->space[pi], .mask = p->mask, .ring = p->ring};
}

/* Round robin between the ports in runs of up to SPREAD_RUN events (whole
 * cache lines of a port's ring; one port choice per run instead of per
 * event). */
#define SPREAD_RUN 8

/* k events from the FIFO (from index `from`) to the cursor's port, which
 * has room for them, copied as two words with op set to release (a
 * field-wise copy compiled to 14 instructions). */
static inline void spread_put(struct evq *q, struct cursor *c, struct evq_queue *eq, const struct evq_iq *iq,
			      uint32_t from, uint32_t k)
{
	const struct evq_event *iqev = iq->ev;
	struct evq_event *ring = c->ring;
	uint32_t fmask = eq->iq_mask, rmask = c->mask, tail = c->tail;
	for (uint32_t j = 0; j < k; j++) {
		uint64_t w[2];
		memcpy(w, &iqev[(from + j) & fmask], sizeof(w));
		w[0] = (w[0] & EVQ_W0_KEEP) | (uint64_t)EVQ_OP_RELEASE << EVQ_W0_OP_SHIFT;
		memcpy(&ring[(tail + j) & rmask], w, sizeof(w));
	}
	c->tail = tail + k;
	c->room -= k;
	if (!c->room)
		q->space_ports &= ~(1ull << c->pi); /* pick_port reads the mask only */
}

/* Dispatch up to max events of one (queue, level); returns how many went. */
static uint32_t serve(struct evq *q, struct cursor *cp, uint32_t queue, uint32_t lvl, uint32_t max)
{
	struct evq_queue *eq = &q->queues[queue];
	struct evq_iq *iq = &eq->iq[lvl];
	uint32_t avail = iq->tail - iq->head;
	if (max > avail)
		max = avail;
	struct cursor c = *cp; /* in registers: see struct cursor */
	uint32_t n = 0;
	while (n < max) {
		uint32_t pi = pick_port(q, eq);
		if (pi == NO_PORT)
			break;
		cur_to(q, &c, pi);
		uint32_t k = MIN(c.room, MIN(max - n, SPREAD_RUN));
		spread_put(q, &c, eq, iq, iq->head + n, k);
		n += k;
	}
	*cp = c;
	iq->head += n;
	eq->held -= n;
	eq->n_dispatched += n;
	q->st.dispatched += n;
	q->st.dispatched_level[lvl] += n;
	if (iq->head == iq->tail) {
		q->level_queues[lvl] &= ~(1ull << queue);
		if (!q->level_queues[lvl])
			q->level_mask &= (uint8_t)~(1u << lvl);
	}
	return n;
}

/* The lowest set bit of cand above `after`, else the lowest. */
static inline uint32_t next_queue(uint64_t cand, uint32_t after)
{
	uint64_t above = after >= 63 ? 0 : cand & (~0ull << (after + 1));
	return (uint32_t)__builtin_ctzll(above ? above : cand);
}

/* Round robin within one level. A turn survives the end of a pass only
 * when the ports ran out of room in the middle of it, so that weights
 * hold exactly while every queue of the level stays backlogged. */
static void dispatch_level(struct evq *q, struct cursor *c, uint32_t lvl)
{
	uint64_t cand = q->level_queues[lvl];
	if (!(cand & (cand - 1))) {
		/* One queue at this level: no turns to keep, serve it whole. */
		if (cand)
			serve(q, c, (uint32_t)__builtin_ctzll(cand), lvl, UINT32_MAX);
		return;
	}
	while (cand && q->space_ports) {
		uint32_t queue = q->rr_queue[lvl];
		if (!q->rr_left[lvl] || !(cand & (1ull << queue))) {
			queue = next_queue(cand, queue);
			q->rr_queue[lvl] = queue;
			q->rr_left[lvl] = q->queues[queue].weight;
		}
		uint32_t want = q->rr_left[lvl];
		uint32_t n = serve(q, c, queue, lvl, want);
		q->rr_left[lvl] -= n;
		if (n < want)
			cand &= ~(1ull << queue); /* emptied or blocked: its turn is over for this pass */
	}
}

uint32_t evq_schedule(struct evq *q)
{
	uint64_t before = q->st.dispatched;
	q->space_ports = 0;
	for (uint32_t pi = 0; pi < q->n_ports; pi++) {
		struct evq_port *p = q->ports[pi];
		take_completions(q, p);
		q->space[pi] = q->port_depth - (p->o_tail - p->o_seen);
		if (q->space[pi])
			q->space_ports |= 1ull << pi;
	}
	/* Strict priority: a level is served only once every queue of the
	 * levels above it is empty or blocked. */
	struct cursor c = {.pi = NO_PORT};
	for (uint32_t levels = q->level_mask; levels && q->space_ports; levels &= levels - 1)
		dispatch_level(q, &c, (uint32_t)__builtin_ctz(levels));
	cur_flush(q, &c);
	for (uint32_t pi = 0; pi < q->n_ports; pi++) {
		struct evq_port *p = q->ports[pi];
		if (p->o_tail != p->o_published) {
			p->o_published = p->o_tail;
			atomic_store_explicit(&p->tail, p->o_tail, memory_order_release);
		}
	}
	return (uint32_t)(q->st.dispatched - before);
}
