/* Event queues: the scheduling pass, on the owner thread only.
 *
 * A pass (1) takes in each port's completions, in the order the port
 * dequeued them: atomic flows' in-flight counts drop (a flow at 0 is
 * unpinned), ordered events land in their queue's reorder window, other
 * forwards go to their queue; (2) releases each reorder window from its
 * oldest sequence while completed; (3) dispatches: the lowest level with
 * queued events first, round robin between that level's queues, `weight`
 * events per turn; a queue that cannot go on (its ports full, an atomic
 * head pinned to a full port, its window full) gives its turn up for the
 * pass; (4) publishes each port's new tail once.
 *
 * An atomic queue's head waits while its flow's port is full (no events
 * set aside and put back as event_sw does): the queue's other flows wait
 * behind it for the pass. Simple and order-preserving; the cost is some
 * head-of-line blocking behind one slow port.
 */
#include <string.h>

#include "sched/evq_private.h"

#define NO_PORT UINT32_MAX
#define FLOW_HASH 0x9e3779b1u /* Fibonacci hashing: the top bits of tag * 2^32/phi */

/* ---- completions ---------------------------------------------------- */

/* Completions come in runs from one queue (a queue has one type): each
 * run is taken by a loop of its type, with the queue's tables in locals. */
static uint32_t complete_atomic(struct evq *q, struct evq_port *p, struct evq_queue *eq, uint32_t queue,
				uint32_t seen, uint32_t done, uint32_t *n_fwd)
{
	const struct evq_hist *hist = p->hist;
	struct evq_event *ring = p->ring;
	struct evq_flow *flows = eq->flows;
	uint32_t mask = p->mask;
	for (; seen != done; seen++) {
		uint32_t idx = seen & mask;
		struct evq_hist h = hist[idx];
		if (h.queue != queue)
			break;
		if (unlikely(ring[idx].op == EVQ_OP_FORWARD)) {
			if (!evq_place(q, &ring[idx]))
				break; /* destination full: retried next pass, the flow stays pinned */
			(*n_fwd)++;
		}
		flows[h.key].count--;
	}
	return seen;
}

static uint32_t complete_ordered(struct evq_port *p, struct evq_queue *eq, uint32_t queue, uint32_t seen,
				 uint32_t done, uint32_t *n_fwd)
{
	const struct evq_hist *hist = p->hist;
	const struct evq_event *ring = p->ring;
	struct evq_event *window = eq->window;
	uint32_t mask = p->mask, wmask = eq->window_mask, start = seen;
	for (; seen != done; seen++) {
		uint32_t idx = seen & mask;
		struct evq_hist h = hist[idx];
		if (h.queue != queue)
			break;
		/* The window entry takes the forward (op FORWARD) or just the
		 * mark that the event is done. */
		struct evq_event *w = &window[h.key & wmask];
		if (ring[idx].op == EVQ_OP_FORWARD) {
			*w = ring[idx];
			(*n_fwd)++;
		} else {
			w->op = EVQ_OP_RELEASE;
		}
	}
	eq->window_ready += seen - start;
	return seen;
}

static uint32_t complete_parallel(struct evq *q, struct evq_port *p, uint32_t queue, uint32_t seen, uint32_t done,
				  uint32_t *n_fwd)
{
	const struct evq_hist *hist = p->hist;
	struct evq_event *ring = p->ring;
	uint32_t mask = p->mask;
	for (; seen != done; seen++) {
		uint32_t idx = seen & mask;
		if (hist[idx].queue != queue)
			break;
		if (ring[idx].op == EVQ_OP_FORWARD) {
			if (!evq_place(q, &ring[idx]))
				break;
			(*n_fwd)++;
		}
	}
	return seen;
}

static void take_completions(struct evq *q, struct evq_port *p)
{
	uint32_t done = atomic_load_explicit(&p->done, memory_order_acquire);
	uint32_t seen = p->o_seen, n_fwd = 0;
	while (seen != done) {
		uint32_t queue = p->hist[seen & p->mask].queue, next;
		struct evq_queue *eq = &q->queues[queue];
		if (eq->type == EVQ_ATOMIC)
			next = complete_atomic(q, p, eq, queue, seen, done, &n_fwd);
		else if (eq->type == EVQ_ORDERED)
			next = complete_ordered(p, eq, queue, seen, done, &n_fwd);
		else
			next = complete_parallel(q, p, queue, seen, done, &n_fwd);
		bool blocked = next != done && p->hist[next & p->mask].queue == queue;
		seen = next;
		if (blocked)
			break;
	}
	q->st.completed += seen - p->o_seen;
	q->st.forwarded += n_fwd;
	p->o_seen = seen;
}

static void release_window(struct evq *q, struct evq_queue *eq)
{
	while (eq->window_head != eq->window_tail) {
		struct evq_event *w = &eq->window[eq->window_head & eq->window_mask];
		if (w->op == EVQ_OP_PENDING)
			break;
		if (w->op == EVQ_OP_FORWARD && !evq_place(q, w))
			break;
		eq->window_head++;
		eq->window_ready--;
	}
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
 * fields read through pointers are reloaded after every ring store. With
 * the word copy in cur_put: 67 -> 57 instructions per atomic dispatch
 * (callgrind, bench/sched, one flow per event, so each picks a port). */
struct cursor {
	uint32_t pi; /* NO_PORT: none */
	uint32_t tail;
	uint32_t room;
	uint32_t mask;
	struct evq_event *ring;
	struct evq_hist *hist;
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
	*c = (struct cursor){.pi = pi, .tail = p->o_tail, .room = q->space[pi], .mask = p->mask, .ring = p->ring,
			     .hist = p->hist};
}

/* Room of a port, whether or not the cursor holds it. */
static inline uint32_t room_of(const struct evq *q, const struct cursor *c, uint32_t pi)
{
	return pi == c->pi ? c->room : q->space[pi];
}

static inline __attribute__((unused)) void cur_put(struct evq *q, struct cursor *c, const struct evq_event *ev, struct evq_hist h)
{
	uint32_t idx = c->tail++ & c->mask;
	/* As two words, type and op set in the first: the field-wise copy
	 * compiled to 14 instructions. */
	uint64_t w[2];
	memcpy(w, ev, sizeof(w));
	w[0] = (w[0] & EVQ_W0_KEEP) | (uint64_t)h.type << EVQ_W0_TYPE_SHIFT | (uint64_t)EVQ_OP_RELEASE << EVQ_W0_OP_SHIFT;
	memcpy(&c->ring[idx], w, sizeof(w));
	c->hist[idx] = h;
	if (--c->room == 0)
		q->space_ports &= ~(1ull << c->pi); /* pick_port reads the mask only */
}

/* An atomic event's port when the fast path below cannot take it: its
 * flow is pinned to another port than the cursor's or the cursor's port is
 * full, or it is a new flow with several ports to choose from. Moves the
 * cursor there; false when the event must wait (its port full, or no port
 * with room for a new flow). */
static bool atomic_port(struct evq *q, struct cursor *c, struct evq_queue *eq, struct evq_flow *f)
{
	uint32_t pi;
	if (f->count) {
		pi = f->port;
		if (!room_of(q, c, pi))
			return false;
	} else {
		pi = pick_port(q, eq);
		if (pi == NO_PORT)
			return false;
		f->port = (uint8_t)pi;
	}
	cur_to(q, c, pi);
	return true;
}

/* The one port with room that new flows of eq would go to, NO_PORT when
 * there are several (they rotate: atomic_port) or none. */
static inline uint32_t sole_port(const struct evq *q, const struct evq_queue *eq)
{
	uint64_t cand = eq->ports & q->space_ports;
	return cand && !(cand & (cand - 1)) ? (uint32_t)__builtin_ctzll(cand) : NO_PORT;
}

/* The common event goes in a straight line: its flow pinned to the
 * cursor's port, or new while that port is the only one with room; the
 * cursor's port has room. Everything else takes atomic_port. One run of
 * the FIFO without wrapping, walked by pointer, and the history entry as
 * one word, so that the loop's state fits in registers. */
static uint32_t atomic_run(struct evq *q, struct cursor *cp, struct evq_queue *eq, const struct evq_event *ev,
			   uint32_t n, uint64_t hist_word)
{
	struct cursor cc = *cp, *c = &cc; /* in registers: see struct cursor */
	struct evq_flow *flows = eq->flows;
	const struct evq_event *start = ev, *end = ev + n;
	uint32_t shift = eq->flow_shift, sole = sole_port(q, eq);
	for (; ev != end; ev++) {
		uint32_t slot = (ev->flow * FLOW_HASH) >> shift;
		struct evq_flow *f = &flows[slot];
		uint32_t pi = f->count ? f->port : sole;
		if (likely(pi == c->pi && c->room)) {
			f->port = (uint8_t)pi;
		} else {
			if (!atomic_port(q, c, eq, f))
				break;
			sole = sole_port(q, eq);
		}
		f->count++;
		uint32_t idx = c->tail++ & c->mask;
		uint64_t w[2], hw = hist_word | slot;
		memcpy(w, ev, sizeof(w));
		w[0] = (w[0] & EVQ_W0_KEEP) | (uint64_t)EVQ_ATOMIC << EVQ_W0_TYPE_SHIFT |
		       (uint64_t)EVQ_OP_RELEASE << EVQ_W0_OP_SHIFT;
		memcpy(&c->ring[idx], w, sizeof(w));
		memcpy(&c->hist[idx], &hw, sizeof(hw));
		if (--c->room == 0)
			q->space_ports &= ~(1ull << c->pi);
	}
	*cp = cc;
	return (uint32_t)(ev - start);
}

/* Callgrind, bench/sched atomic (one consumer port, a new flow per
 * event): 55.8 -> 39.8 instructions per dispatch, serve() inclusive. */
static uint32_t serve_atomic(struct evq *q, struct cursor *c, struct evq_queue *eq, const struct evq_iq *iq,
			     uint32_t queue, uint32_t max)
{
	struct evq_hist h = {.queue = (uint8_t)queue, .type = EVQ_ATOMIC};
	uint64_t hist_word;
	memcpy(&hist_word, &h, sizeof(hist_word));
	uint32_t first = iq->head & eq->iq_mask, n1 = MIN(max, eq->iq_mask + 1 - first);
	uint32_t n = atomic_run(q, c, eq, &iq->ev[first], n1, hist_word);
	if (n == n1 && n < max)
		n += atomic_run(q, c, eq, iq->ev, max - n, hist_word);
	return n;
}

/* Ordered and parallel: round robin between the ports in runs of up to
 * SPREAD_RUN events (whole cache lines of a port's ring; one port choice
 * per run instead of per event: 71 -> 54 instructions per ordered dispatch). */
#define SPREAD_RUN 8

/* k events from the FIFO (from index `from`) to the cursor's port, which
 * has room for them: copies with type and op set, history entries of one
 * word (ordered: the sequence as key, and each window entry pending). */
static inline __attribute__((always_inline)) void spread_put(struct evq *q, struct cursor *c, struct evq_queue *eq,
							     const struct evq_iq *iq, uint32_t from, uint32_t k,
							     uint64_t hist_word, bool ordered)
{
	const struct evq_event *iqev = iq->ev;
	struct evq_event *ring = c->ring, *window = eq->window;
	struct evq_hist *hist = c->hist;
	uint32_t fmask = eq->iq_mask, rmask = c->mask, tail = c->tail, seq = eq->window_tail, wmask = eq->window_mask;
	uint64_t tw = (uint64_t)eq->type << EVQ_W0_TYPE_SHIFT | (uint64_t)EVQ_OP_RELEASE << EVQ_W0_OP_SHIFT;
	for (uint32_t j = 0; j < k; j++) {
		uint32_t idx = (tail + j) & rmask;
		uint64_t w[2], hw = hist_word;
		memcpy(w, &iqev[(from + j) & fmask], sizeof(w));
		w[0] = (w[0] & EVQ_W0_KEEP) | tw;
		memcpy(&ring[idx], w, sizeof(w));
		if (ordered) {
			hw |= seq + j;
			window[(seq + j) & wmask].op = EVQ_OP_PENDING;
		}
		memcpy(&hist[idx], &hw, sizeof(hw));
	}
	if (ordered)
		eq->window_tail = seq + k;
	c->tail = tail + k;
	c->room -= k;
	if (!c->room)
		q->space_ports &= ~(1ull << c->pi); /* pick_port reads the mask only */
}

static inline __attribute__((always_inline)) uint32_t spread(struct evq *q, struct cursor *c, struct evq_queue *eq,
							     const struct evq_iq *iq, uint32_t max, uint64_t hist_word,
							     bool ordered)
{
	uint32_t i = 0;
	while (i < max) {
		uint32_t pi = pick_port(q, eq);
		if (pi == NO_PORT)
			break;
		cur_to(q, c, pi);
		uint32_t k = MIN(c->room, MIN(max - i, SPREAD_RUN));
		spread_put(q, c, eq, iq, iq->head + i, k, hist_word, ordered);
		i += k;
	}
	return i;
}

/* Callgrind, bench/sched (one consumer port), instructions per dispatch,
 * serve() inclusive: parallel 36.9 -> 28.5, ordered 53.1 -> 37.4. */
static uint32_t serve_spread(struct evq *q, struct cursor *cp, struct evq_queue *eq, const struct evq_iq *iq,
			     uint32_t queue, uint32_t max)
{
	struct cursor cc = *cp; /* in registers: see struct cursor */
	struct evq_hist h = {.queue = (uint8_t)queue, .type = eq->type};
	uint64_t hist_word;
	memcpy(&hist_word, &h, sizeof(hist_word));
	uint32_t n;
	if (eq->type == EVQ_ORDERED) {
		uint32_t room = eq->window_mask + 1 - (eq->window_tail - eq->window_head);
		n = spread(q, &cc, eq, iq, MIN(max, room), hist_word, true);
	} else {
		n = spread(q, &cc, eq, iq, max, hist_word, false);
	}
	*cp = cc;
	return n;
}

/* Dispatch up to max events of one (queue, level); returns how many went. */
static uint32_t serve(struct evq *q, struct cursor *c, uint32_t queue, uint32_t lvl, uint32_t max)
{
	struct evq_queue *eq = &q->queues[queue];
	struct evq_iq *iq = &eq->iq[lvl];
	uint32_t avail = iq->tail - iq->head;
	if (max > avail)
		max = avail;
	uint32_t n = eq->type == EVQ_ATOMIC ? serve_atomic(q, c, eq, iq, queue, max)
					    : serve_spread(q, c, eq, iq, queue, max);
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
	for (uint64_t m = q->ordered_queues; m; m &= m - 1)
		release_window(q, &q->queues[__builtin_ctzll(m)]);
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
