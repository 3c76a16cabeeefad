/* Event queues: scheduling semantics with consumer threads whose random
 * processing delays make completions arrive out of dispatch order (each
 * test that relies on it asserts that they did).
 *
 *   - strict priority: no event of a level is dispatched while a higher
 *     level holds one (checked after every pass, also when higher events
 *     arrive mid-run), and each port sees priorities in order;
 *   - weighted round robin: shares of 3 backlogged queues within 1% of
 *     their weights over EVQ_SHARE_EVENTS dispatches;
 *   - spread: one flow tag for every event, yet every consumer gets a
 *     share (the queues pin no flow: atomic, ordered and parallel are the
 *     distributor's, tested in tests/dist);
 *   - bounds: full queues refuse and count, invalid events are refused
 *     and counted, forwards to a full queue wait and are not lost.
 *
 * Counts come from meson (EVQ_EVENTS, EVQ_SHARE_EVENTS): smaller under the
 * sanitizers.
 */
#include <check.h>
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "sched/evq.h"
#include "tests/check_run.h"

#ifndef EVQ_EVENTS
#define EVQ_EVENTS 200000
#endif
#ifndef EVQ_SHARE_EVENTS
#define EVQ_SHARE_EVENTS 1000000
#endif

#define MAX_CONS 4
#define RUN_LIMIT_NS (120ull * 1000000000ull)

enum cons_mode {
	CM_RELEASE,     /* release each event after processing it */
	CM_DRAIN,       /* dequeue bursts, implicit release, no delay */
};

struct run {
	struct evq *q;
	enum cons_mode mode;
	bool delays;
	_Atomic bool stop;
	/* completion order */
	_Atomic uint32_t ticket;
	uint32_t *comp; /* comp[ticket] = arrival seq */
	uint32_t comp_size;
};

struct cons {
	pthread_t th;
	struct run *run;
	struct evq_port *port;
	uint32_t index;
	uint64_t rng;
	uint64_t n_events;
	uint64_t prio_inversions;
	uint32_t last_prio;
};

static uint64_t xorshift(uint64_t *s)
{
	uint64_t x = *s;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *s = x;
}

/* Enough spread that a port holding a burst finishes after another port
 * that got later events: mostly short spins, now and then a sleep. */
static void delay(struct cons *c)
{
	uint64_t r = xorshift(&c->rng);
	if ((r & 63) == 0) {
		struct timespec ts = {0, 20000 + (long)((r >> 8) % 50000)};
		nanosleep(&ts, NULL);
		return;
	}
	for (uint32_t i = (uint32_t)((r >> 8) % 200); i; i--)
		cpu_relax();
}

static void note_completion(struct run *r, uint32_t arrival)
{
	uint32_t t = atomic_fetch_add(&r->ticket, 1);
	if (t < r->comp_size)
		r->comp[t] = arrival;
}

static void process(struct cons *c, struct evq_event *ev)
{
	struct run *r = c->run;
	c->n_events++;
	if (ev->priority < c->last_prio)
		c->prio_inversions++;
	c->last_prio = ev->priority;
	if (r->mode == CM_RELEASE) {
		if (r->delays)
			delay(c);
		note_completion(r, (uint32_t)ev->u64);
		ck_assert_uint_eq(evq_port_release(c->port, 1), 1);
	}
}

static void *consumer(void *arg)
{
	struct cons *c = arg;
	struct evq_event ev[32];
	uint32_t burst = c->run->mode == CM_DRAIN ? 32 : 8;
	while (!atomic_load_explicit(&c->run->stop, memory_order_relaxed)) {
		uint32_t n = evq_port_dequeue(c->port, ev, burst);
		if (!n) {
			sched_yield();
			continue;
		}
		for (uint32_t i = 0; i < n; i++)
			process(c, &ev[i]);
	}
	evq_port_release(c->port, evq_port_outstanding(c->port));
	return NULL;
}

static void start_consumers(struct run *r, struct cons *c, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		c[i] = (struct cons){.run = r, .port = evq_port(r->q, i), .index = i, .rng = 0x9e3779b97f4a7c15ull * (i + 1)};
		ck_assert_int_eq(pthread_create(&c[i].th, NULL, consumer, &c[i]), 0);
	}
}

static void stop_consumers(struct run *r, struct cons *c, uint32_t n)
{
	atomic_store(&r->stop, true);
	for (uint32_t i = 0; i < n; i++)
		pthread_join(c[i].th, NULL);
}

/* Positions where a completion came after one of a later arrival. */
static uint64_t descents(const struct run *r)
{
	uint32_t n = atomic_load(&r->ticket);
	if (n > r->comp_size)
		n = r->comp_size;
	uint64_t d = 0;
	for (uint32_t t = 1; t < n; t++)
		d += r->comp[t] < r->comp[t - 1];
	return d;
}

static struct evq *make_evq(uint32_t n_queues, uint32_t n_ports, uint32_t port_depth)
{
	struct evq_config cfg;
	evq_config_default(&cfg);
	cfg.n_queues = n_queues;
	cfg.n_ports = n_ports;
	cfg.port_depth = port_depth;
	char err[128];
	struct evq *q = evq_create(&cfg, err, sizeof(err));
	ck_assert_msg(q != NULL, "%s", err);
	return q;
}

static void setup_queue(struct evq *q, uint32_t queue, uint32_t weight, uint32_t depth, uint32_t n_ports)
{
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	qc.weight = weight;
	qc.depth = depth;
	ck_assert_int_eq(evq_queue_setup(q, queue, &qc), 0);
	for (uint32_t p = 0; p < n_ports; p++)
		ck_assert_int_eq(evq_port_link(q, p, queue), 0);
}

static void run_init(struct run *r, struct evq *q, enum cons_mode mode, uint32_t comp_size)
{
	memset(r, 0, sizeof(*r));
	r->q = q;
	r->mode = mode;
	r->delays = true;
	r->comp_size = comp_size;
	r->comp = comp_size ? calloc(comp_size, sizeof(uint32_t)) : NULL;
}

static uint64_t elapsed_ns(uint64_t t0)
{
	return time_now_ns() - t0;
}

/* The owner's loop: enqueue `total` events made by mk (a prefix at a time
 * as queues take them), schedule, hand outputs to out_fn, until all are in
 * and the scheduler is drained. */
typedef void(mk_fn)(uint32_t seq, struct evq_event *ev, void *arg);
typedef void(out_fn)(const struct evq_event *ev, uint32_t n, void *arg);

static void owner_loop(struct evq *q, uint32_t total, mk_fn *mk, out_fn *out, void *arg)
{
	struct evq_event ev[32], o[64];
	uint32_t sent = 0, made = 0, burst = 0, pending = 0; /* ev[burst - pending, burst) not taken yet */
	uint64_t t0 = time_now_ns();
	while (sent < total || evq_in_flight(q)) {
		ck_assert_msg(elapsed_ns(t0) < RUN_LIMIT_NS, "owner loop: %u of %u sent, %lu in flight", sent, total,
			      (unsigned long)evq_in_flight(q));
		if (!pending && made < total) {
			burst = MIN(32u, total - made);
			for (uint32_t i = 0; i < burst; i++)
				mk(made + i, &ev[i], arg);
			made += burst;
			pending = burst;
		}
		uint32_t k = pending ? evq_enqueue(q, ev + (burst - pending), pending) : 0;
		sent += k;
		pending -= k;
		uint32_t moved = evq_schedule(q);
		uint32_t n_out;
		while ((n_out = evq_output(q, o, 64)) > 0) {
			if (out)
				out(o, n_out, arg);
			moved += n_out;
		}
		if (!moved && !k)
			sched_yield();
	}
}

/* ---- strict priority ---------------------------------------------------- */

#define PRIO_EACH 500

START_TEST(test_strict_priority)
{
	struct evq *q = make_evq(2, 2, 8);
	for (uint32_t i = 0; i < 2; i++)
		setup_queue(q, i, 1, 16384, 2);
	struct run r;
	run_init(&r, q, CM_RELEASE, 0);
	struct cons c[2];
	uint64_t enq[EVQ_LEVELS] = {0};
	/* Everything queued before the first pass, levels shuffled. */
	uint64_t rng = 12345;
	for (uint32_t i = 0; i < PRIO_EACH * EVQ_LEVELS; i++) {
		uint32_t lvl = i % EVQ_LEVELS;
		struct evq_event ev = {.flow = i, .queue = (uint8_t)(xorshift(&rng) & 1), .priority = (uint8_t)lvl, .u64 = i};
		ck_assert_uint_eq(evq_enqueue(q, &ev, 1), 1);
		enq[lvl]++;
	}
	start_consumers(&r, c, 2);
	uint64_t t0 = time_now_ns();
	bool injected = false;
	uint64_t passes = 0;
	while (evq_in_flight(q)) {
		ck_assert_msg(elapsed_ns(t0) < RUN_LIMIT_NS, "priority run did not drain");
		struct evq_stats before, after;
		evq_stats(q, &before);
		if (!evq_schedule(q)) {
			sched_yield();
			continue;
		}
		passes++;
		evq_stats(q, &after);
		/* A level got events in this pass only if every level above
		 * it had nothing left queued once the pass was over. */
		for (uint32_t l = 1; l < EVQ_LEVELS; l++) {
			if (after.dispatched_level[l] == before.dispatched_level[l])
				continue;
			for (uint32_t h = 0; h < l; h++)
				ck_assert_msg(after.dispatched_level[h] == enq[h],
					      "level %u dispatched while level %u held %lu", l, h,
					      (unsigned long)(enq[h] - after.dispatched_level[h]));
		}
		/* Midway, higher-priority events arrive: they go next. */
		if (!injected && after.dispatched_level[5]) {
			for (uint32_t i = 0; i < PRIO_EACH; i++) {
				struct evq_event ev = {.flow = i, .queue = (uint8_t)(i & 1), .priority = (uint8_t)(1 + i % 2), .u64 = i};
				ck_assert_uint_eq(evq_enqueue(q, &ev, 1), 1);
				enq[1 + i % 2]++;
			}
			injected = true;
		}
	}
	stop_consumers(&r, c, 2);
	ck_assert(injected);
	ck_assert_uint_gt(passes, 100); /* port depth 8: many passes, so the check saw the order */
	struct evq_stats st;
	evq_stats(q, &st);
	for (uint32_t l = 0; l < EVQ_LEVELS; l++)
		ck_assert_uint_eq(st.dispatched_level[l], enq[l]);
	/* Before the injection each port saw levels in order; after it, at
	 * most one step back (to the injected levels). */
	for (uint32_t i = 0; i < 2; i++)
		ck_assert_uint_le(c[i].prio_inversions, 1);
	ck_assert_uint_eq(c[0].n_events + c[1].n_events, st.dispatched);
	evq_destroy(q);
}
END_TEST

/* ---- weighted round robin ----------------------------------------------- */

START_TEST(test_weighted_shares)
{
	static const uint32_t weights[3] = {1, 3, 6};
	struct evq *q = make_evq(3, 2, 64);
	for (uint32_t i = 0; i < 3; i++)
		setup_queue(q, i, weights[i], 1024, 2);
	struct run r;
	run_init(&r, q, CM_DRAIN, 0);
	r.delays = false;
	struct cons c[2];
	start_consumers(&r, c, 2);
	struct evq_event ev[64];
	uint64_t seq = 0, t0 = time_now_ns();
	struct evq_stats st;
	for (;;) {
		evq_stats(q, &st);
		if (st.dispatched >= EVQ_SHARE_EVENTS)
			break;
		ck_assert_msg(elapsed_ns(t0) < RUN_LIMIT_NS, "weighted run: %lu dispatched", (unsigned long)st.dispatched);
		/* Keep every queue backlogged beyond what one pass can take
		 * (2 ports x 64), so the shares are the scheduler's alone. */
		for (uint32_t i = 0; i < 3; i++) {
			struct evq_queue_stats qs;
			ck_assert_int_eq(evq_queue_stats(q, i, &qs), 0);
			uint32_t room = 1024 - qs.held;
			while (room) {
				uint32_t n = MIN(room, 64u);
				for (uint32_t k = 0; k < n; k++)
					ev[k] = (struct evq_event){.flow = (uint32_t)seq, .queue = (uint8_t)i, .priority = 3, .u64 = seq++};
				ck_assert_uint_eq(evq_enqueue(q, ev, n), n);
				room -= n;
			}
		}
		if (!evq_schedule(q))
			sched_yield();
	}
	uint64_t d[3], total = 0;
	for (uint32_t i = 0; i < 3; i++) {
		struct evq_queue_stats qs;
		evq_queue_stats(q, i, &qs);
		d[i] = qs.dispatched;
		total += d[i];
	}
	ck_assert_uint_eq(total, st.dispatched);
	for (uint32_t i = 0; i < 3; i++) {
		double share = (double)d[i] / (double)total, want = weights[i] / 10.0;
		ck_assert_msg(share > want * 0.99 && share < want * 1.01, "queue %u (weight %u): share %.5f, want %.5f", i,
			      weights[i], share, want);
	}
	ck_assert_uint_eq(st.refused, 0);
	stop_consumers(&r, c, 2);
	ck_assert_uint_gt(c[0].n_events, 0);
	ck_assert_uint_gt(c[1].n_events, 0);
	evq_destroy(q);
}
END_TEST

/* Weights changed while both queues stay backlogged, on one thread (the
 * owner drains its own port, as sched-dist does): shares follow the new
 * weights exactly from the next turn on; bad changes are refused and
 * change nothing. */
static void set_weight_fill(struct evq *q, uint64_t *seq)
{
	struct evq_event ev[64];
	for (uint32_t i = 0; i < 2; i++) {
		struct evq_queue_stats qs;
		ck_assert_int_eq(evq_queue_stats(q, i, &qs), 0);
		uint32_t n = MIN(1024 - qs.held, 64u);
		for (uint32_t k = 0; k < n; k++)
			ev[k] = (struct evq_event){.flow = (uint32_t)*seq, .queue = (uint8_t)i, .priority = 2, .u64 = (*seq)++};
		ck_assert_uint_eq(evq_enqueue(q, ev, n), n);
	}
}

/* Dispatch `passes` passes of 8 (the port's depth) and count per queue. */
static void set_weight_run(struct evq *q, uint32_t passes, uint64_t got[2], uint64_t *seq)
{
	struct evq_port *p = evq_port(q, 0);
	struct evq_event ev[8];
	got[0] = got[1] = 0;
	for (uint32_t i = 0; i < passes; i++) {
		set_weight_fill(q, seq);
		ck_assert_uint_eq(evq_schedule(q), 8);
		ck_assert_uint_eq(evq_port_dequeue(p, ev, 8), 8);
		ck_assert_uint_eq(evq_port_release(p, 8), 8);
		for (uint32_t k = 0; k < 8; k++)
			got[ev[k].queue]++;
	}
}

START_TEST(test_set_weight)
{
	struct evq *q = make_evq(3, 1, 8);
	setup_queue(q, 0, 1, 1024, 1);
	setup_queue(q, 1, 1, 1024, 1);
	uint64_t seq = 0, got[2];
	set_weight_run(q, 100, got, &seq);
	ck_assert_uint_eq(got[0], 400);
	ck_assert_uint_eq(got[1], 400);
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 3), 0);
	set_weight_run(q, 1, got, &seq); /* the turn in progress ends */
	set_weight_run(q, 100, got, &seq);
	ck_assert_uint_eq(got[0], 200);
	ck_assert_uint_eq(got[1], 600);
	/* Refused, nothing changed: the shares stay 1:3. */
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 0), -EINVAL);
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 65536), -EINVAL);
	ck_assert_int_eq(evq_queue_set_weight(q, 2, 5), -EINVAL); /* never set up */
	ck_assert_int_eq(evq_queue_set_weight(q, 3, 5), -EINVAL); /* no such queue */
	set_weight_run(q, 100, got, &seq);
	ck_assert_uint_eq(got[0], 200);
	ck_assert_uint_eq(got[1], 600);
	/* A turn in progress is cut to a lower new weight. The 1:3 passes end
	 * with queue 0's turn; at weight 20 queue 1 takes a whole pass and has
	 * 12 left in its turn; cut to 2, it takes 2, then the turns alternate
	 * 1, 2 (uncut, it would take the next pass whole). */
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 20), 0);
	set_weight_run(q, 1, got, &seq);
	ck_assert_uint_eq(got[0], 0);
	ck_assert_uint_eq(got[1], 8);
	ck_assert_int_eq(evq_queue_set_weight(q, 1, 2), 0);
	set_weight_fill(q, &seq);
	ck_assert_uint_eq(evq_schedule(q), 8);
	struct evq_event ev[8];
	ck_assert_uint_eq(evq_port_dequeue(evq_port(q, 0), ev, 8), 8);
	static const uint8_t want[8] = {1, 1, 0, 1, 1, 0, 1, 1};
	for (uint32_t k = 0; k < 8; k++)
		ck_assert_uint_eq(ev[k].queue, want[k]);
	evq_destroy(q);
}
END_TEST

/* ---- spread over the ports -------------------------------------------- */

static void mk_one_flow(uint32_t seq, struct evq_event *ev, void *arg)
{
	(void)arg;
	*ev = (struct evq_event){.flow = 0, .queue = 0, .priority = 0, .u64 = seq};
}

START_TEST(test_one_flow_spreads)
{
	const uint32_t n_cons = 3;
	struct evq *q = make_evq(1, n_cons, 16);
	setup_queue(q, 0, 1, 1024, n_cons);
	struct run r;
	run_init(&r, q, CM_RELEASE, EVQ_EVENTS / 2);
	struct cons c[MAX_CONS];
	start_consumers(&r, c, n_cons);
	owner_loop(q, EVQ_EVENTS / 2, mk_one_flow, NULL, NULL);
	stop_consumers(&r, c, n_cons);
	uint64_t sum = 0;
	/* One flow tag for every event, yet all consumers take part. */
	for (uint32_t i = 0; i < n_cons; i++) {
		ck_assert_msg(c[i].n_events >= EVQ_EVENTS / 2 / 100, "consumer %u got %lu of %u", i,
			      (unsigned long)c[i].n_events, EVQ_EVENTS / 2);
		sum += c[i].n_events;
	}
	ck_assert_uint_eq(sum, EVQ_EVENTS / 2);
	ck_assert_uint_gt(descents(&r), 0);
	free(r.comp);
	evq_destroy(q);
}
END_TEST

/* ---- bounds and bad input ----------------------------------------------- */

START_TEST(test_full_refused)
{
	struct evq *q = make_evq(2, 1, 8);
	setup_queue(q, 0, 1, 64, 1);
	setup_queue(q, 1, 1, 16, 1);
	struct evq_event ev[80];
	for (uint32_t i = 0; i < 80; i++)
		ev[i] = (struct evq_event){.flow = i, .queue = 0, .priority = (uint8_t)(i < 40 ? 0 : 5), .u64 = i};
	/* Depth 64 over all levels: 40 at level 0, 24 at level 5, then no more. */
	ck_assert_uint_eq(evq_enqueue(q, ev, 80), 64);
	ck_assert_uint_eq(evq_enqueue(q, ev + 64, 1), 0);
	ck_assert_uint_eq(evq_enqueue(q, ev, 3), 0);
	struct evq_stats st;
	evq_stats(q, &st);
	ck_assert_uint_eq(st.enqueued, 64);
	ck_assert_uint_eq(st.refused, 16 + 1 + 3);
	struct evq_queue_stats qs;
	ck_assert_int_eq(evq_queue_stats(q, 0, &qs), 0);
	ck_assert_uint_eq(qs.held, 64);
	ck_assert_uint_eq(qs.refused, 20);
	/* The other queue still takes events. */
	struct evq_event e1 = {.queue = 1, .priority = 7};
	ck_assert_uint_eq(evq_enqueue(q, &e1, 1), 1);
	/* Room again after the port takes some. */
	ck_assert_uint_eq(evq_schedule(q), 8); /* port depth 8 */
	ck_assert_uint_eq(evq_enqueue(q, ev + 64, 16), 8);
	evq_stats(q, &st);
	ck_assert_uint_eq(st.refused, 16 + 1 + 3 + 8);
	evq_destroy(q);
}
END_TEST

START_TEST(test_invalid_refused)
{
	struct evq *q = make_evq(2, 1, 8);
	setup_queue(q, 0, 1, 64, 1);
	/* queue 1 exists but was never set up */
	struct evq_event bad[3] = {{.queue = 2}, {.queue = 0, .priority = EVQ_LEVELS}, {.queue = 1}};
	for (uint32_t i = 0; i < 3; i++)
		ck_assert_uint_eq(evq_enqueue(q, &bad[i], 1), 0);
	struct evq_event mix[3] = {{.queue = 0, .u64 = 1}, {.queue = 9}, {.queue = 0}};
	ck_assert_uint_eq(evq_enqueue(q, mix, 3), 1);
	struct evq_stats st;
	evq_stats(q, &st);
	ck_assert_uint_eq(st.invalid, 4);
	ck_assert_uint_eq(st.enqueued, 1);
	ck_assert_uint_eq(st.refused, 0);
	ck_assert_uint_eq(evq_in_flight(q), 1);
	/* A forward to a bad queue is refused at the port, nothing completes. */
	struct evq_port *p = evq_port(q, 0);
	ck_assert_uint_eq(evq_schedule(q), 1);
	struct evq_event got;
	ck_assert_uint_eq(evq_port_dequeue(p, &got, 1), 1);
	ck_assert_uint_eq(got.u64, 1);
	got.queue = 1;
	ck_assert_uint_eq(evq_port_forward(p, &got, 1), 0);
	ck_assert_uint_eq(evq_port_outstanding(p), 1);
	evq_stats(q, &st);
	ck_assert_uint_eq(st.invalid, 5);
	got.queue = EVQ_QUEUE_OUT;
	ck_assert_uint_eq(evq_port_forward(p, &got, 1), 1);
	ck_assert_uint_eq(evq_port_forward(p, &got, 1), 0); /* nothing outstanding */
	evq_schedule(q);
	ck_assert_uint_eq(evq_output(q, &got, 1), 1);
	ck_assert_uint_eq(got.u64, 1);
	ck_assert_uint_eq(evq_in_flight(q), 0);
	/* Setup errors leave things as they were. */
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	ck_assert_int_eq(evq_queue_setup(q, 0, &qc), -EBUSY);
	qc.depth = 100;
	ck_assert_int_eq(evq_queue_setup(q, 1, &qc), -EINVAL);
	ck_assert_int_eq(evq_queue_setup(q, 2, &qc), -EINVAL);
	ck_assert_int_eq(evq_port_link(q, 1, 0), -EINVAL);
	ck_assert_int_eq(evq_port_link(q, 0, 1), -EINVAL);
	ck_assert_ptr_null(evq_port(q, 1));
	struct evq_config cfg;
	evq_config_default(&cfg);
	cfg.port_depth = 100;
	char err[128] = "";
	ck_assert_ptr_null(evq_create(&cfg, err, sizeof(err)));
	ck_assert_str_eq(err, "port depth: 100 is not a power of two in 8..32768");
	evq_destroy(q);
}
END_TEST

/* A forward to a full queue waits in the port's ring, holding the port's
 * later completions back, and goes through once there is room. */
START_TEST(test_forward_backpressure)
{
	struct evq *q = make_evq(2, 2, 64);
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	qc.depth = 64;
	ck_assert_int_eq(evq_queue_setup(q, 0, &qc), 0);
	qc.depth = 8; /* each level's FIFO holds 16 */
	ck_assert_int_eq(evq_queue_setup(q, 1, &qc), 0);
	ck_assert_int_eq(evq_port_link(q, 0, 0), 0);
	ck_assert_int_eq(evq_port_link(q, 1, 1), 0);
	struct evq_event ev[32];
	for (uint32_t i = 0; i < 32; i++)
		ev[i] = (struct evq_event){.queue = 0, .u64 = i};
	ck_assert_uint_eq(evq_enqueue(q, ev, 32), 32);
	ck_assert_uint_eq(evq_schedule(q), 32);
	struct evq_port *p0 = evq_port(q, 0), *p1 = evq_port(q, 1);
	ck_assert_uint_eq(evq_port_dequeue(p0, ev, 32), 32);
	for (uint32_t i = 0; i < 32; i++)
		ev[i].queue = 1;
	ck_assert_uint_eq(evq_port_forward(p0, ev, 32), 32);
	/* 16 fit; queue 1 dispatches 16 to port 1 in the same pass. */
	ck_assert_uint_eq(evq_schedule(q), 16);
	struct evq_stats st;
	evq_stats(q, &st);
	ck_assert_uint_eq(st.completed, 16);
	ck_assert_uint_eq(evq_in_flight(q), 32);
	uint32_t got = 0;
	for (int round = 0; round < 4 && got < 32; round++) {
		got += evq_port_dequeue(p1, ev + got, 32 - got);
		evq_port_release(p1, evq_port_outstanding(p1));
		evq_schedule(q);
	}
	ck_assert_uint_eq(got, 32);
	for (uint32_t i = 0; i < 32; i++)
		ck_assert_uint_eq(ev[i].u64, i);
	evq_schedule(q);
	ck_assert_uint_eq(evq_in_flight(q), 0);
	evq_stats(q, &st);
	ck_assert_uint_eq(st.completed, 64);
	ck_assert_uint_eq(st.forwarded, 32);
	evq_destroy(q);
}
END_TEST

static Suite *evq_suite(void)
{
	Suite *s = suite_create("evq");
	TCase *tc = tcase_create("evq");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, test_full_refused);
	tcase_add_test(tc, test_invalid_refused);
	tcase_add_test(tc, test_forward_backpressure);
	tcase_add_test(tc, test_strict_priority);
	tcase_add_test(tc, test_weighted_shares);
	tcase_add_test(tc, test_set_weight);
	tcase_add_test(tc, test_one_flow_spreads);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return check_run_suite(evq_suite());
}
