/* sched-egress: shaping and delay for packets leaving through an interface
 * (sched/egress.h, nodes/sched/sched_io.h).
 *
 * interface-output sends it the frames of interfaces that have a shaper or
 * a delay (sched_egress_on), one interface per frame as for a tx node. On
 * the interface's owner thread the packets enter its schedule (class
 * queues by the class sched-ingress gave them, then the delay line); what
 * is due at once leaves in the same call, in frames to the interface's
 * driver tx node; for the rest one timer per interface is armed at the
 * schedule's next release time on the owner's timer service, and each
 * expiry releases everything then due as a batch. On any other thread the
 * frame goes, whole, into the handoff ring from that thread to the owner
 * (sched-handoff-input brings it back here on the owner).
 *
 * Next nodes: error-drop, then the <driver>-tx nodes, added at run time
 *   as interface-output's are (drivers/device.h, dev tx senders; the arc
 *   per interface is in sched_egress_tx).
 * Errors: held packets over max-held (dropped); handoff ring to the owner
 *   full (dropped); interface down or gone at release (dropped); no timer
 *   service on the owner thread (sent at once, unscheduled); with a
 *   hierarchy (sched_hqos.h, in front of the delay line): subscriber
 *   queue full or hqos max-held, CoDel's drops (dropped);
 *   impairment: random loss, Gilbert-Elliott loss, over max-held in the
 *   impairer (duplicates count there) (all dropped).
 * Trace: interface, class and priority, queued or dropped, packets held
 *   after it, release time from now when known (delay line).
 * CLI: `sched shaper|delay|impair interface ...`, `show sched [impair]`,
 *   `show errors`.
 */
#include <stdio.h>
#include <string.h>

#include "graph/node.h"
#include "nodes/device_tx.h"
#include "nodes/ethernet.h"
#include "nodes/sched/sched_hqos.h"
#include "nodes/sched/sched_io.h"

enum sched_egress_next {
	SCHED_EGRESS_NEXT_DROP = 0, /* also "no tx node" in sched_egress_tx */
	SCHED_EGRESS_N_NEXT, /* the tx nodes' arcs follow, added at run time */
};

enum sched_egress_error {
	SCHED_EGRESS_ERROR_MAX_HELD = 0,
	SCHED_EGRESS_ERROR_HANDOFF_FULL,
	SCHED_EGRESS_ERROR_DOWN,
	SCHED_EGRESS_ERROR_NO_TIMERS,
	SCHED_EGRESS_ERROR_HQOS_LIMIT,
	SCHED_EGRESS_ERROR_HQOS_CODEL,
	SCHED_EGRESS_ERROR_LOSS_RANDOM,
	SCHED_EGRESS_ERROR_LOSS_GEMODEL,
	SCHED_EGRESS_ERROR_IMPAIR_MAX_HELD,
	SCHED_EGRESS_N_ERROR,
};

static const char *const sched_egress_error_strings[SCHED_EGRESS_N_ERROR] = {
	[SCHED_EGRESS_ERROR_MAX_HELD] = "held packets over max-held (dropped)",
	[SCHED_EGRESS_ERROR_HANDOFF_FULL] = "handoff ring to the owner thread full (dropped)",
	[SCHED_EGRESS_ERROR_DOWN] = "interface down or gone at release (dropped)",
	[SCHED_EGRESS_ERROR_NO_TIMERS] = "no timer service on the owner thread (sent unscheduled)",
	[SCHED_EGRESS_ERROR_HQOS_LIMIT] = "subscriber queue full or hqos max-held (dropped)",
	[SCHED_EGRESS_ERROR_HQOS_CODEL] = "subscriber queue CoDel (dropped)",
	[SCHED_EGRESS_ERROR_LOSS_RANDOM] = "impairment: lost (loss random)",
	[SCHED_EGRESS_ERROR_LOSS_GEMODEL] = "impairment: lost (loss gemodel)",
	[SCHED_EGRESS_ERROR_IMPAIR_MAX_HELD] = "impairment: over max-held (dropped)",
};

struct sched_egress_trace {
	uint32_t tx_if;
	uint32_t held;
	uint64_t release_in_ns; /* UINT64_MAX: not known yet (waits for the shaper) */
	uint8_t class_id;
	uint8_t priority;
	uint8_t dropped;
	uint8_t handed_to; /* owner thread + 1 when handed off, else 0 */
	char name[ETH_TRACE_NAME_SIZE];
};
_Static_assert(sizeof(struct sched_egress_trace) <= NODE_TRACE_DETAIL_SIZE, "trace fits the record");

static int sched_egress_format_trace(char *buf, size_t len, const uint8_t *detail)
{
	struct sched_egress_trace t;
	memcpy(&t, detail, sizeof(t));
	int n = snprintf(buf, len, "%.*s (if %u) class %u priority %u: ", ETH_TRACE_NAME_SIZE, t.name, t.tx_if,
			 t.class_id, t.priority);
	if (n < 0 || (size_t)n >= len)
		return n;
	if (t.handed_to)
		return n + snprintf(buf + n, len - (size_t)n, "handed to owner thread %u", t.handed_to - 1);
	if (t.dropped)
		return n + snprintf(buf + n, len - (size_t)n, "dropped, %u held", t.held);
	if (t.release_in_ns == UINT64_MAX)
		return n + snprintf(buf + n, len - (size_t)n, "queued for the shaper, %u held", t.held);
	return n + snprintf(buf + n, len - (size_t)n, "release in %lluus, %u held",
			    (unsigned long long)(t.release_in_ns / 1000), t.held);
}

/* ---- helpers ---- */

/* Per interface: the arc to its driver's tx node (kept by the device
 * layer). */
static struct dev_tx_sender sched_egress_tx = { .node = "sched-egress" };
DEV_TX_SENDER_REGISTER(sched_egress_tx)

struct sched_egress_data {
	int target; /* timer callback on this thread's service; -1 until first needed */
	uint32_t out[FRAME_SIZE];
	uint32_t drop[FRAME_SIZE];
};

static int sched_egress_init(struct node_runtime *rt)
{
	struct sched_egress_data *d = rt->data;
	d->target = -1;
	return 0;
}

static void drop(struct node_runtime *rt, const uint32_t *bi, uint32_t n, uint16_t code)
{
	uint16_t error = node_error(rt, code);
	for (uint32_t i = 0; i < n; i++)
		buffer_get(bi[i])->error = error;
	node_enqueue(rt, SCHED_EGRESS_NEXT_DROP, bi, n);
}

/* n packets of if_index, due now, to its driver's tx node in a frame of
 * their own on this thread's tx queue. */
static void send_tx(struct node_runtime *rt, uint32_t if_index, const uint32_t *bi, uint32_t n)
{
	struct device *dev = dev_by_index(if_index);
	uint16_t next = dev && dev->admin_up ? sched_egress_tx.next[if_index] : SCHED_EGRESS_NEXT_DROP;
	if (unlikely(next == SCHED_EGRESS_NEXT_DROP)) {
		drop(rt, bi, n, SCHED_EGRESS_ERROR_DOWN);
		if (dev)
			stat_add(&dev->txq[dev_tx_queue(dev, rt->thread_index)].c.tx_dropped, n);
		return;
	}
	struct device_tx_scalar s = { .tx_if = if_index, .queue = dev_tx_queue(dev, rt->thread_index) };
	uint32_t flags = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct buffer *b = buffer_get(bi[i]);
		flags |= b->flags;
		s.bytes += eth_packet_length(b);
	}
	s.traced = (flags & BUFFER_F_TRACED) != 0;
	device_tx_enqueue_batch(rt, next, bi, n, &s);
}

static void on_timer(struct timer_service *ts, const struct timer_event *ev, uint32_t n, void *arg);

/* What the impairment dropped, to error-drop under its reason. */
/* n impairment drops, each under its reason's error (opaque[4]). */
static void drop_by_reason(struct node_runtime *rt, uint32_t *bi, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		uint8_t why = sched_impair_drop_reason(b);
		uint16_t code = why == SCHED_IMPAIR_DROP_LOSS_RANDOM	? SCHED_EGRESS_ERROR_LOSS_RANDOM
				: why == SCHED_IMPAIR_DROP_LOSS_GEMODEL ? SCHED_EGRESS_ERROR_LOSS_GEMODEL
				: why == HQOS_DROP_IMPAIR_LIMIT		? SCHED_EGRESS_ERROR_HQOS_LIMIT
									: SCHED_EGRESS_ERROR_IMPAIR_MAX_HELD;
		b->error = node_error(rt, code);
	}
	node_enqueue(rt, SCHED_EGRESS_NEXT_DROP, bi, n);
}

static void drop_impaired(struct node_runtime *rt, struct sched_io_if *sif)
{
	struct sched_egress_data *d = rt->data;
	uint32_t n;
	while ((n = sched_egress_take_dropped(sif->e, d->drop, FRAME_SIZE)) != 0) {
		drop_by_reason(rt, d->drop, n);
		if (n < FRAME_SIZE)
			break;
	}
	/* the hierarchy's subscriber impairers (sched/hqos.h) */
	while (sif->hq && (n = hqos_take_impair_drops(sif->hq, d->drop, FRAME_SIZE)) != 0) {
		drop_by_reason(rt, d->drop, n);
		if (n < FRAME_SIZE)
			break;
	}
}

/* One timer per interface at the schedule's next release: armed, moved or
 * cancelled to match it. */
static void arm(struct node_runtime *rt, struct sched_io_if *sif, uint32_t if_index, struct timer_service *ts)
{
	struct sched_egress_data *d = rt->data;
	uint64_t next = sched_egress_next_ns(sif->e);
	if (sif->hq) {
		uint64_t h = hqos_next_ns(sif->hq);
		next = h < next ? h : next;
	}
	if (sif->timer && sif->timer_ns == next)
		return;
	if (next == UINT64_MAX) {
		if (sif->timer)
			timer_cancel(ts, sif->timer);
		sif->timer = 0;
		return;
	}
	next = next ? next : 1; /* deadline 0 means "relative" to the service */
	if (sif->timer && timer_rearm(ts, sif->timer, next, 0) == 0) {
		sif->timer_ns = next;
		return;
	}
	if (d->target < 0)
		d->target = timer_target_callback(ts, on_timer, rt);
	struct timer_spec spec = {
		.deadline_ns = next,
		.cookie = if_index,
		.target = (uint16_t)d->target,
	};
	sif->timer = 0;
	if (d->target >= 0 && timer_arm(ts, &spec, &sif->timer) == 0)
		sif->timer_ns = next;
}

/* The hierarchy (sched/hqos.h) in front of the delay line: what it
 * releases at now leaves at once, or enters the delay line when there is
 * one; CoDel's drops are counted. */
static void release_hqos(struct node_runtime *rt, struct sched_io_if *sif, uint32_t if_index, uint64_t now)
{
	struct sched_egress_data *d = rt->data;
	for (;;) {
		uint32_t n = hqos_dequeue(sif->hq, now, d->out, FRAME_SIZE);
		uint32_t nd = hqos_take_drops(sif->hq, d->drop, FRAME_SIZE);
		if (nd)
			drop(rt, d->drop, nd, SCHED_EGRESS_ERROR_HQOS_CODEL);
		if (n && !sif->delay)
			send_tx(rt, if_index, d->out, n);
		else if (n && (nd = sched_egress_enqueue(sif->e, d->out, n, sched_class_table.prio, now, d->drop)) != 0)
			drop(rt, d->drop, nd, SCHED_EGRESS_ERROR_MAX_HELD);
		if (n < FRAME_SIZE && !nd)
			break;
	}
}

/* Everything due at now leaves; the timer follows the next release. */
static void release(struct node_runtime *rt, struct sched_io_if *sif, uint32_t if_index, struct timer_service *ts,
		    uint64_t now)
{
	struct sched_egress_data *d = rt->data;
	uint32_t n;
	if (sif->hq)
		release_hqos(rt, sif, if_index, now);
	while ((n = sched_egress_dequeue(sif->e, now, d->out, FRAME_SIZE)) != 0) {
		send_tx(rt, if_index, d->out, n);
		if (n < FRAME_SIZE)
			break;
	}
	drop_impaired(rt, sif);
	arm(rt, sif, if_index, ts);
}

/* Expiries of this thread's interface timers, in one batch. */
static void on_timer(struct timer_service *ts, const struct timer_event *ev, uint32_t n, void *arg)
{
	struct node_runtime *rt = arg;
	uint64_t now = timer_now(ts);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t if_index = (uint32_t)ev[i].cookie;
		struct sched_io_if *sif = if_index < DEV_MAX ? &sched_io_ifs[if_index] : NULL;
		/* Handles are never reused (sched/timer.h): one that is not the
		 * interface's armed timer is an expiry from before if_free or a
		 * re-arm, however many generations ago. */
		if (!sif || !sif->e || sif->timer != ev[i].handle)
			continue;
		sif->timer = 0;
		release(rt, sif, if_index, ts, now);
	}
}

static void trace_frame(struct node_runtime *rt, const struct sched_io_if *sif, uint32_t if_index,
			const uint32_t *bi, uint32_t n, uint64_t now, uint32_t handed_to)
{
	uint32_t held = sched_egress_held(sif->e);
	for (uint32_t i = 0; i < n; i++) {
		struct buffer *b = buffer_get(bi[i]);
		if (!(b->flags & BUFFER_F_TRACED))
			continue;
		uint8_t *detail = node_trace_detail(rt, b);
		if (!detail)
			continue;
		uint32_t c = sched_buffer_class(b);
		struct sched_egress_trace t = {
			.tx_if = if_index,
			.held = held,
			.release_in_ns = UINT64_MAX,
			.class_id = (uint8_t)c,
			.priority = sched_class_table.prio[c],
			.dropped = b->error == node_error(rt, SCHED_EGRESS_ERROR_MAX_HELD) ||
				   b->error == node_error(rt, SCHED_EGRESS_ERROR_HQOS_LIMIT),
			.handed_to = (uint8_t)handed_to,
		};
		/* In the delay line: its release time is in timestamp_ns. */
		if (!t.dropped && !handed_to && !sif->shaper && b->timestamp_ns >= now)
			t.release_in_ns = b->timestamp_ns - now;
		eth_trace_name(t.name, if_index);
		memcpy(detail, &t, sizeof(t));
	}
}

/* Not the owner: the frame goes to the owner through this thread's ring. */
static void hand_off(struct node_runtime *rt, struct sched_io_if *sif, uint32_t if_index, const uint32_t *bi,
		     uint32_t n, bool traced)
{
	if (unlikely(traced))
		trace_frame(rt, sif, if_index, bi, n, 0, sif->owner + 1u);
	uint32_t taken = handoff_enqueue(sif->ring[rt->thread_index], bi, NULL, n);
	if (unlikely(taken < n))
		drop(rt, bi + taken, n - taken, SCHED_EGRESS_ERROR_HANDOFF_FULL);
}

/* ---- the node ---- */

static uint32_t sched_egress_fn(struct node_runtime *rt, struct frame *f)
{
	struct sched_egress_data *d = rt->data;
	struct device_tx_scalar s = device_tx_get(f);
	const uint32_t *bi = f->buffers;
	uint32_t n = f->n_vectors;
	struct sched_io_if *sif = s.tx_if < DEV_MAX ? &sched_io_ifs[s.tx_if] : NULL;
	if (unlikely(!sif || !sif->e)) { /* unconfigured between interface-output and here */
		send_tx(rt, s.tx_if, bi, n);
		return n;
	}
	if (rt->thread_index != sif->owner) {
		hand_off(rt, sif, s.tx_if, bi, n, s.traced);
		return n;
	}
	struct timer_service *ts = timer_service_of(rt->thread);
	if (unlikely(!ts)) {
		node_count_error(rt, SCHED_EGRESS_ERROR_NO_TIMERS, n);
		send_tx(rt, s.tx_if, bi, n);
		return n;
	}
	uint64_t now = timer_now(ts);
	uint32_t n_drop = sif->hq ? hqos_enqueue(sif->hq, bi, n, sched_class_table.prio, now, d->drop)
				  : sched_egress_enqueue(sif->e, bi, n, sched_class_table.prio, now, d->drop);
	if (unlikely(n_drop)) {
		struct device *dev = dev_by_index(s.tx_if);
		drop(rt, d->drop, n_drop, sif->hq ? SCHED_EGRESS_ERROR_HQOS_LIMIT : SCHED_EGRESS_ERROR_MAX_HELD);
		if (dev)
			stat_add(&dev->txq[s.queue].c.tx_dropped, n_drop);
	}
	if (unlikely(s.traced))
		trace_frame(rt, sif, s.tx_if, bi, n, now, 0);
	release(rt, sif, s.tx_if, ts, now);
	return n;
}

static const struct node_reg sched_egress_node = {
	.name = "sched-egress",
	.type = NODE_TYPE_INTERNAL,
	.fn = sched_egress_fn,
	.n_next = SCHED_EGRESS_N_NEXT,
	.next_nodes = {
		[SCHED_EGRESS_NEXT_DROP] = "error-drop",
	},
	.n_errors = SCHED_EGRESS_N_ERROR,
	.error_strings = sched_egress_error_strings,
	.format_trace = sched_egress_format_trace,
	.runtime_data_size = sizeof(struct sched_egress_data),
	.init = sched_egress_init,
};
NODE_REGISTER(sched_egress_node)
