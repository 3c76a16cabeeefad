/* ip6-nd-timer: Neighbor Unreachability Detection's clock and the release
 * of held packets (RFC 4861 §7.2.2, §7.3.3; ip6_neighbor.h has the state
 * machine). A process node on thread 0, run when poked (graph_poke_processes:
 * a MAC learnt, a timer wanted; the barrier's release) or every 100 ms, every
 * millisecond while held packets remain to release:
 *   - gives learnt MACs to the adjacencies (as ip6-neighbor does; the
 *     first of the two to run does it) and sends the packets held on a
 *     neighbour whose MAC is now known back to ip6-lookup;
 *   - arms, moves or cancels the timers that entries asked for
 *     (ip6_nbr_timer_want), one per entry, on thread 0's timer service
 *     (sched/timer.h), whose expiries come back to on_timer:
 *       INCOMPLETE: the next multicast NS, RetransTimer later again, until
 *         MAX_MULTICAST_SOLICIT were sent; then resolution failed: each
 *         held packet gets an ICMPv6 Destination Unreachable, code 3
 *         (address unreachable, RFC 4443 §3.1; icmp6_error.h: rate-limited
 *         per thread, never about an error or a multicast) and the entry
 *         goes;
 *       REACHABLE: ReachableTime is over: STALE (its rewrites cleared so
 *         its next use passes ip6-glean);
 *       DELAY: PROBE, the first unicast NS to the cached MAC;
 *       PROBE: the next unicast NS until MAX_UNICAST_SOLICIT were sent;
 *         then the entry is deleted with its rewrites and host route.
 * Without a timer service on thread 0 (unit tests that install none)
 * nothing times out: entries stay as they are until flushed.
 *
 * Next nodes: error-drop, interface-output (NS, Destination
 *   Unreachable), ip6-lookup (released packets).
 * Errors: NS retransmitted; unicast probes sent; held packets released;
 *   resolution failed (entries); Destination Unreachable sent; rate-limited
 *   (dropped); not allowed (dropped); neighbours gone STALE; neighbours
 *   unreachable (deleted); no buffer for an NS; timer not armed.
 * Trace: none (a process node marks no packets).
 * CLI: `show ip6 neighbors`, `show errors`, `set ip6 neighbor-config`.
 */
#include <string.h>

#include "graph/node.h"
#include "nodes/ip6/icmp6_error.h"
#include "nodes/ip6/ip6.h"
#include "nodes/ip6/ip6_neighbor.h"
#include "nodes/ip6/ip6_route.h"
#include "sched/timer.h"

enum ip6_nd_timer_next {
	IP6_ND_TIMER_NEXT_DROP = 0,
	IP6_ND_TIMER_NEXT_OUTPUT,
	IP6_ND_TIMER_NEXT_LOOKUP,
	IP6_ND_TIMER_N_NEXT,
};

enum ip6_nd_timer_error {
	IP6_ND_TIMER_ERROR_NS_RETRANS = 0,
	IP6_ND_TIMER_ERROR_PROBE,
	IP6_ND_TIMER_ERROR_RELEASED,
	IP6_ND_TIMER_ERROR_FAILED,
	IP6_ND_TIMER_ERROR_UNREACH_SENT,
	IP6_ND_TIMER_ERROR_RATE_LIMITED,
	IP6_ND_TIMER_ERROR_NOT_ALLOWED,
	IP6_ND_TIMER_ERROR_STALE,
	IP6_ND_TIMER_ERROR_UNREACHABLE,
	IP6_ND_TIMER_ERROR_NO_BUFFER,
	IP6_ND_TIMER_ERROR_NO_TIMER,
	IP6_ND_TIMER_N_ERROR,
};

static const char *const ip6_nd_timer_error_strings[IP6_ND_TIMER_N_ERROR] = {
	[IP6_ND_TIMER_ERROR_NS_RETRANS] = "multicast NS retransmitted",
	[IP6_ND_TIMER_ERROR_PROBE] = "unicast NS probe sent",
	[IP6_ND_TIMER_ERROR_RELEASED] = "held packets released",
	[IP6_ND_TIMER_ERROR_FAILED] = "address resolution failed",
	[IP6_ND_TIMER_ERROR_UNREACH_SENT] = "held packet: ICMPv6 address unreachable sent",
	[IP6_ND_TIMER_ERROR_RATE_LIMITED] = "held packet: ICMPv6 error rate-limited (dropped)",
	[IP6_ND_TIMER_ERROR_NOT_ALLOWED] = "held packet: no ICMPv6 error allowed (dropped)",
	[IP6_ND_TIMER_ERROR_STALE] = "neighbour went STALE (ReachableTime over)",
	[IP6_ND_TIMER_ERROR_UNREACHABLE] = "neighbour unreachable: probes unanswered (deleted)",
	[IP6_ND_TIMER_ERROR_NO_BUFFER] = "no buffer for an NS",
	[IP6_ND_TIMER_ERROR_NO_TIMER] = "neighbour timer not armed (timer pool full)",
};

#define SCAN_INTERVAL_NS 1000000ull
/* Nothing flagged: every store of the flags below pokes this node, and the
 * timers' expiries come through the timer service, so an idle thread 0 need
 * not wake for it more often than this (docs/power.md). */
#define IDLE_SCAN_NS 100000000ull
#define CHUNK 64 /* events handled per lock hold */

struct nd_timer_data {
	struct timer_service *ts; /* the service target was registered on */
	int target;
	struct icmp6_error_bucket bk;
};

/* What one pass produced, sent once the lock is dropped. */
struct nd_out {
	uint32_t ns[CHUNK];
	uint32_t failed[CHUNK * IP6_NBR_HOLD];
	uint32_t n_ns, n_failed;
};

/* n's timer to fire in_ns from now (0: cancelled). Lock held, thread 0. */
static void arm(struct node_runtime *rt, struct timer_service *ts, struct ip6_nbr *n, uint64_t in_ns)
{
	struct nd_timer_data *d = rt->data;
	if (!in_ns) {
		if (n->timer)
			timer_cancel(ts, n->timer);
		n->timer = 0;
		return;
	}
	if (n->timer && timer_rearm(ts, n->timer, 0, in_ns) == 0)
		return;
	struct timer_spec spec = {
		.interval_ns = in_ns,
		.cookie = (uint32_t)ip6_nbr_cookie(n), /* the index: the handle tells stale from live */
		.target = (uint16_t)d->target,
	};
	n->timer = 0;
	if (timer_arm(ts, &spec, &n->timer) != 0) {
		n->timer = 0;
		node_count_error(rt, IP6_ND_TIMER_ERROR_NO_TIMER, 1);
	}
}

/* One NS for n (multicast, or unicast to its cached MAC) into o. */
static void send_ns(struct node_runtime *rt, struct ip6_nbr *n, bool unicast, struct nd_out *o)
{
	uint32_t bi = ip6_nbr_ns_make(n->if_index, &n->ip, unicast ? n->mac : NULL);
	if (bi == BUFFER_INVALID) {
		node_count_error(rt, IP6_ND_TIMER_ERROR_NO_BUFFER, 1);
		return;
	}
	o->ns[o->n_ns++] = bi;
	node_count_error(rt, unicast ? IP6_ND_TIMER_ERROR_PROBE : IP6_ND_TIMER_ERROR_NS_RETRANS, 1);
}

/* n's timer fired. Lock held. */
static void expire(struct node_runtime *rt, struct timer_service *ts, struct ip6_nbr *n, struct nd_out *o)
{
	uint64_t now = ip6_nbr_now();
	switch (n->state) {
	case IP6_NBR_INCOMPLETE:
		if (n->n_probes < IP6_ND_MAX_MULTICAST_SOLICIT) {
			send_ns(rt, n, false, o);
			n->n_probes++;
			arm(rt, ts, n, ip6_nd_timing.retrans_ns);
			return;
		}
		node_count_error(rt, IP6_ND_TIMER_ERROR_FAILED, 1);
		o->n_failed += ip6_nbr_forget(n, o->failed + o->n_failed);
		return;
	case IP6_NBR_REACHABLE:
		ip6_nbr_set_state(n, IP6_NBR_STALE, now);
		ip6_nbr_mark_apply(n); /* its rewrites cleared */
		node_count_error(rt, IP6_ND_TIMER_ERROR_STALE, 1);
		return;
	case IP6_NBR_DELAY:
		ip6_nbr_set_state(n, IP6_NBR_PROBE, now);
		__attribute__((fallthrough)); /* the first probe */
	case IP6_NBR_PROBE:
		if (n->n_probes < IP6_ND_MAX_UNICAST_SOLICIT) {
			send_ns(rt, n, true, o);
			n->n_probes++;
			arm(rt, ts, n, ip6_nd_timing.retrans_ns);
			return;
		}
		node_count_error(rt, IP6_ND_TIMER_ERROR_UNREACHABLE, 1);
		o->n_failed += ip6_nbr_forget(n, o->failed + o->n_failed);
		return;
	default:
		return;
	}
}

/* Held packets of a failed resolution: Destination Unreachable code 3
 * each (RFC 4861 §7.2.2), or dropped. */
static void send_failed(struct node_runtime *rt, struct nd_out *o)
{
	struct nd_timer_data *d = rt->data;
	uint32_t drops[CHUNK * IP6_NBR_HOLD], errs[CHUNK * IP6_NBR_HOLD], n_drops = 0, n_errs = 0;
	uint64_t now = 0;
	for (uint32_t i = 0; i < o->n_failed; i++) {
		struct buffer *b = buffer_get(o->failed[i]);
		switch (icmp6_error_make(&d->bk, &now, b, ICMP6_DEST_UNREACH, ICMP6_DU_ADDR_UNREACHABLE, 0)) {
		case ICMP6_ERROR_BUILT:
			errs[n_errs++] = o->failed[i];
			break;
		case ICMP6_ERROR_RATE_LIMITED:
			b->error = node_error(rt, IP6_ND_TIMER_ERROR_RATE_LIMITED);
			drops[n_drops++] = o->failed[i];
			break;
		default:
			b->error = node_error(rt, IP6_ND_TIMER_ERROR_NOT_ALLOWED);
			drops[n_drops++] = o->failed[i];
			break;
		}
	}
	node_count_error(rt, IP6_ND_TIMER_ERROR_UNREACH_SENT, n_errs);
	node_enqueue(rt, IP6_ND_TIMER_NEXT_OUTPUT, errs, n_errs);
	node_enqueue(rt, IP6_ND_TIMER_NEXT_DROP, drops, n_drops);
}

static void flush_out(struct node_runtime *rt, struct nd_out *o)
{
	node_enqueue(rt, IP6_ND_TIMER_NEXT_OUTPUT, o->ns, o->n_ns);
	send_failed(rt, o);
	o->n_ns = o->n_failed = 0;
}

/* Expiries, in chunks of CHUNK per lock hold. An event whose handle is not
 * its entry's timer (the entry was freed, reused or re-armed since: handles
 * are never reused, sched/timer.h) or for an entry waiting to be re-armed
 * (IP6_NBR_F_ARM) is stale. */
static void on_timer(struct timer_service *ts, const struct timer_event *ev, uint32_t n, void *arg)
{
	struct node_runtime *rt = arg;
	static struct nd_out o; /* thread 0 only */
	for (uint32_t i = 0; i < n;) {
		uint32_t end = i + CHUNK < n ? i + CHUNK : n;
		ip6_nbr_lock();
		for (; i < end; i++) {
			struct ip6_nbr *e = ip6_nbr_at(ev[i].cookie);
			if (!e || e->timer != ev[i].handle || (e->flags & (IP6_NBR_F_ARM | IP6_NBR_F_STATIC)))
				continue;
			e->timer = 0;
			expire(rt, ts, e, &o);
		}
		ip6_nbr_unlock();
		flush_out(rt, &o);
	}
}

/* ---- the process node ---- */

struct pass {
	struct node_runtime *rt;
	struct timer_service *ts;
	uint32_t released[IP6_NBR_MAX * IP6_NBR_HOLD / 8];
	uint32_t n_released;
	bool arm, release, more;
};

static void pass_one(struct ip6_nbr *n, void *ctx)
{
	struct pass *p = ctx;
	if (p->arm && (n->flags & IP6_NBR_F_ARM)) {
		n->flags &= (uint8_t)~IP6_NBR_F_ARM;
		arm(p->rt, p->ts, n, n->timer_in_ns);
	}
	if (p->release && n->n_held && n->state != IP6_NBR_INCOMPLETE && !(n->flags & IP6_NBR_F_APPLY)) {
		if (p->n_released + n->n_held > ARRAY_LEN(p->released)) {
			p->more = true; /* the rest at the next run */
			return;
		}
		memcpy(p->released + p->n_released, n->held, n->n_held * sizeof(n->held[0]));
		p->n_released += n->n_held;
		n->n_held = 0;
	}
}

static uint32_t ip6_nd_timer_fn(struct node_runtime *rt, struct frame *f)
{
	(void)f;
	struct nd_timer_data *d = rt->data;
	static struct pass p; /* thread 0 only */
	node_suspend(rt, IDLE_SCAN_NS);
	struct timer_service *ts = timer_service_of(rt->thread);
	if (ts && ts != d->ts) {
		d->ts = ts;
		d->target = timer_target_callback(ts, on_timer, rt);
	}
	if (d->target < 0)
		ts = NULL;
	if (atomic_load_explicit(&ip6_nbr_dirty, memory_order_acquire))
		ip6_route_nbr_apply_all();
	p.rt = rt;
	p.ts = ts;
	p.n_released = 0;
	p.more = false;
	p.arm = ts && atomic_exchange_explicit(&ip6_nbr_arm_dirty, false, memory_order_acq_rel);
	p.release = atomic_exchange_explicit(&ip6_nbr_release_dirty, false, memory_order_acq_rel);
	if (!p.arm && !p.release)
		return 0;
	ip6_nbr_lock();
	ip6_nbr_each_locked(pass_one, &p);
	ip6_nbr_unlock();
	if (p.more) {
		atomic_store_explicit(&ip6_nbr_release_dirty, true, memory_order_relaxed);
		node_suspend(rt, SCAN_INTERVAL_NS);
	}
	node_count_error(rt, IP6_ND_TIMER_ERROR_RELEASED, p.n_released);
	node_enqueue(rt, IP6_ND_TIMER_NEXT_LOOKUP, p.released, p.n_released);
	return p.n_released;
}

static int ip6_nd_timer_init(struct node_runtime *rt)
{
	struct nd_timer_data *d = rt->data;
	d->ts = NULL;
	d->target = -1;
	return 0;
}

static const struct node_reg ip6_nd_timer_node = {
	.name = "ip6-nd-timer",
	.type = NODE_TYPE_PROCESS,
	.fn = ip6_nd_timer_fn,
	.n_next = IP6_ND_TIMER_N_NEXT,
	.next_nodes = {
		[IP6_ND_TIMER_NEXT_DROP] = "error-drop",
		[IP6_ND_TIMER_NEXT_OUTPUT] = "interface-output",
		[IP6_ND_TIMER_NEXT_LOOKUP] = "ip6-lookup",
	},
	.n_errors = IP6_ND_TIMER_N_ERROR,
	.error_strings = ip6_nd_timer_error_strings,
	.runtime_data_size = sizeof(struct nd_timer_data),
	.init = ip6_nd_timer_init,
};
NODE_REGISTER(ip6_nd_timer_node)
