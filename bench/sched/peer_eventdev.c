/* The peer of sluice-bench-sched: DPDK's software event devices doing the
 * same work as sched_perf.c (the daemon's scheduling path: priority stage,
 * distributor, one worker), through the public rte_eventdev API only.
 *
 * One event queue of the given type, two event ports: port 0 is the
 * producer (unlinked, it only enqueues NEW events), port 1 the consumer
 * (linked to the queue). The main lcore (put it on CPU0 with -l 0,1) makes
 * bursts of events, each carrying a 64-bit counter, flow ids round robin
 * over FLOWS, and enqueues them; when the device has a scheduler service
 * (event_sw) it runs one iteration of it inline after every enqueue burst
 * (rte_service_run_iter_on_app_lcore), as sluice's producer thread runs
 * the priority stage and the distributor, so no third busy thread
 * time-shares the two CPUs. Devices without a service (event_dsw: distributed, scheduling happens inside
 * enqueue and dequeue) just enqueue. The worker lcore (CPU1) dequeues
 * bursts with implicit release (the next dequeue releases the previous
 * burst, RTE_EVENT_PORT_CFG_DISABLE_IMPL_REL unset) and sums the counters,
 * as sched_perf.c's worker does.
 *
 *   sluice-peer-eventdev EAL-ARGS --vdev=event_sw0|event_dsw0 -- \
 *       atomic|ordered|parallel [--secs S] [--warmup S] [--burst B]
 *       [--flows F] [--depth D] [--window W]
 *   sluice-peer-eventdev -l 0 ... --vdev=... -- TYPE --rounds N [...]
 *
 * --depth: the consumer port's dequeue depth (event_sw sizes its per-port
 * completion ring by it; clamped to the device's maximum, printed).
 * --window: an ordered queue's sequence numbers (its reorder window).
 * Prints one line "dev=... type=... events=N seconds=S mpps=M": events the
 * consumer dequeued over S seconds after the warm-up. Exits non-zero when
 * any step fails or the consumer saw no event.
 *
 * --rounds N: no threads and no clock: the function peer_rounds does N
 * rounds of the producer's step then the consumer's on the one lcore, as
 * sched_perf.c's --rounds does sluice's: run it under `valgrind
 * --tool=callgrind --toggle-collect=peer_rounds`, subtract peer_fill
 * (making the events) and divide Ir by the events taken, for instructions
 * per event beside sluice's.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_eventdev.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_service.h>

#define MAX_BURST 256
#define PROD_PORT 0
#define CONS_PORT 1

struct opts {
	uint8_t type;
	const char *type_name;
	double secs, warmup;
	unsigned burst, flows, depth, window;
	uint64_t rounds; /* --rounds: one lcore, for callgrind */
};

struct run {
	uint8_t dev;
	unsigned burst;
	bool has_service;
	uint32_t service;
	bool needs_maintain;
	const char *driver;
	volatile bool stop;
	uint64_t consumed __rte_cache_aligned; /* written by the consumer only */
	uint64_t sum;
};

static int usage(void)
{
	fprintf(stderr, "usage: sluice-peer-eventdev EAL-ARGS -- atomic|ordered|parallel [--secs S] [--warmup S] "
			"[--burst B] [--flows F] [--depth D] [--window W]\n");
	return 2;
}

static bool parse_type(const char *s, struct opts *o)
{
	static const struct {
		const char *name;
		uint8_t type;
	} types[] = {{"atomic", RTE_SCHED_TYPE_ATOMIC},
		     {"ordered", RTE_SCHED_TYPE_ORDERED},
		     {"parallel", RTE_SCHED_TYPE_PARALLEL}};
	for (size_t i = 0; i < RTE_DIM(types); i++)
		if (!strcmp(s, types[i].name)) {
			o->type = types[i].type;
			o->type_name = types[i].name;
			return true;
		}
	return false;
}

static bool parse_opts(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.secs = 5, .warmup = 1, .burst = 32, .flows = 1024, .depth = 128, .window = 1024};
	if (argc < 2 || !parse_type(argv[1], o))
		return false;
	for (int i = 2; i + 1 < argc; i += 2) {
		const char *k = argv[i], *v = argv[i + 1];
		if (!strcmp(k, "--secs"))
			o->secs = atof(v);
		else if (!strcmp(k, "--warmup"))
			o->warmup = atof(v);
		else if (!strcmp(k, "--burst"))
			o->burst = (unsigned)atoi(v);
		else if (!strcmp(k, "--flows"))
			o->flows = (unsigned)atoi(v);
		else if (!strcmp(k, "--depth"))
			o->depth = (unsigned)atoi(v);
		else if (!strcmp(k, "--window"))
			o->window = (unsigned)atoi(v);
		else if (!strcmp(k, "--rounds"))
			o->rounds = strtoull(v, NULL, 0);
		else
			return false;
	}
	return argc % 2 == 0 && o->secs > 0 && o->warmup >= 0 && o->burst >= 1 && o->burst <= MAX_BURST &&
	       o->flows >= 1 && o->depth >= 1 && o->window >= 1;
}

/* Device, queue and ports as described at the top; the depths are clamped
 * to what the device reports (rte_event_dev_info_get). */
static int setup(struct run *r, struct opts *o)
{
	struct rte_event_dev_info info;
	if (rte_event_dev_info_get(r->dev, &info))
		return fprintf(stderr, "rte_event_dev_info_get failed\n"), -1;
	if (o->flows > info.max_event_queue_flows)
		return fprintf(stderr, "%s: %u flows > max %u\n", info.driver_name, o->flows,
			       info.max_event_queue_flows), -1;
	o->depth = RTE_MIN(o->depth, info.max_event_port_dequeue_depth);
	o->depth = RTE_MAX(o->depth, o->burst);
	if (o->depth > info.max_event_port_dequeue_depth || o->burst > info.max_event_port_enqueue_depth)
		return fprintf(stderr, "%s: burst %u beyond its port depths\n", info.driver_name, o->burst), -1;
	struct rte_event_dev_config dc = {
		.nb_event_queues = 1,
		.nb_event_ports = 2,
		.nb_events_limit = info.max_num_events,
		.nb_event_queue_flows = o->flows,
		.nb_event_port_dequeue_depth = info.max_event_port_dequeue_depth,
		.nb_event_port_enqueue_depth = info.max_event_port_enqueue_depth,
		.dequeue_timeout_ns = info.min_dequeue_timeout_ns,
	};
	int rc = rte_event_dev_configure(r->dev, &dc);
	if (rc)
		return fprintf(stderr, "rte_event_dev_configure: %d\n", rc), -1;

	struct rte_event_queue_conf qc;
	rte_event_queue_default_conf_get(r->dev, 0, &qc);
	qc.schedule_type = o->type;
	qc.nb_atomic_flows = o->flows;
	qc.nb_atomic_order_sequences = o->window;
	qc.priority = RTE_EVENT_DEV_PRIORITY_NORMAL;
	rc = rte_event_queue_setup(r->dev, 0, &qc);
	if (rc)
		return fprintf(stderr, "%s: %s queue: %d\n", info.driver_name, o->type_name, rc), -1;

	for (uint8_t p = 0; p < 2; p++) {
		struct rte_event_port_conf pc;
		rte_event_port_default_conf_get(r->dev, p, &pc);
		pc.new_event_threshold = (int32_t)info.max_num_events;
		pc.enqueue_depth = RTE_MAX(pc.enqueue_depth, o->burst);
		pc.dequeue_depth = p == CONS_PORT ? o->depth : RTE_MIN(pc.dequeue_depth, o->depth);
		pc.event_port_cfg = 0; /* implicit release */
		if ((rc = rte_event_port_setup(r->dev, p, &pc)))
			return fprintf(stderr, "rte_event_port_setup %u: %d\n", p, rc), -1;
	}
	uint8_t q = 0;
	if (rte_event_port_link(r->dev, CONS_PORT, &q, NULL, 1) != 1)
		return fprintf(stderr, "rte_event_port_link failed\n"), -1;

	/* event_sw schedules in a service; the producer's lcore runs it, so it
	 * is not mapped to a service core and the start-time check for one is
	 * switched off. */
	r->has_service = rte_event_dev_service_id_get(r->dev, &r->service) == 0;
	if (r->has_service &&
	    (rte_service_runstate_set(r->service, 1) || rte_service_set_runstate_mapped_check(r->service, 0)))
		return fprintf(stderr, "service run state failed\n"), -1;
	r->needs_maintain = !(info.event_dev_cap & RTE_EVENT_DEV_CAP_MAINTENANCE_FREE);
	if ((rc = rte_event_dev_start(r->dev)))
		return fprintf(stderr, "rte_event_dev_start: %d\n", rc), -1;
	r->driver = info.driver_name;
	return 0;
}

/* The consumer's step: a burst out (releasing the last one), summed. */
static inline uint16_t consume_step(struct run *r, struct rte_event *ev, uint64_t *sum)
{
	uint16_t k = rte_event_dequeue_burst(r->dev, CONS_PORT, ev, r->burst, 0);
	for (uint16_t i = 0; i < k; i++)
		*sum += ev[i].u64;
	return k;
}

static int consumer(void *arg)
{
	struct run *r = arg;
	struct rte_event ev[MAX_BURST];
	uint64_t n = 0, sum = 0;
	while (!r->stop) {
		n += consume_step(r, ev, &sum);
		__atomic_store_n(&r->consumed, n, __ATOMIC_RELAXED);
	}
	r->sum = sum;
	return 0;
}

__attribute__((noinline)) void peer_fill(struct rte_event *ev, unsigned n, uint64_t *seq, const struct opts *o)
{
	for (unsigned i = 0; i < n; i++, (*seq)++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].flow_id = (uint32_t)(*seq % o->flows);
		ev[i].op = RTE_EVENT_OP_NEW;
		ev[i].sched_type = o->type;
		ev[i].queue_id = 0;
		ev[i].event_type = RTE_EVENT_TYPE_CPU;
		ev[i].priority = RTE_EVENT_DEV_PRIORITY_NORMAL;
		ev[i].u64 = *seq;
	}
}

struct producer {
	struct rte_event ev[MAX_BURST];
	uint64_t seq;
	uint64_t calls;
	unsigned pending; /* ev[burst - pending, burst) not yet taken by the device */
};

/* The producer's step: a burst in (what the device takes of it), the
 * scheduler service run once inline (event_sw), and every 64 steps the
 * maintenance of the port: devices without
 * RTE_EVENT_DEV_CAP_MAINTENANCE_FREE want it on a port that never
 * dequeues (rte_event_maintain's documentation). True on those 64th
 * steps. */
static inline bool produce_step(struct run *r, const struct opts *o, struct producer *p)
{
	if (!p->pending) {
		peer_fill(p->ev, o->burst, &p->seq, o);
		p->pending = o->burst;
	}
	p->pending -= rte_event_enqueue_new_burst(r->dev, PROD_PORT, p->ev + (o->burst - p->pending), p->pending);
	if (r->has_service)
		rte_service_run_iter_on_app_lcore(r->service, 1);
	if ((++p->calls & 63) != 0)
		return false;
	if (r->needs_maintain)
		rte_event_maintain(r->dev, PROD_PORT, 0);
	return true;
}

/* The producer loop on the main lcore: prints the figure; -1 when the
 * consumer saw no event. */
static int produce(struct run *r, const struct opts *o)
{
	static struct producer p;
	uint64_t c0 = 0, t0 = 0;
	const double hz = (double)rte_get_tsc_hz();
	const uint64_t t_warm = rte_rdtsc() + (uint64_t)(o->warmup * hz);
	const uint64_t t_end = t_warm + (uint64_t)(o->secs * hz);
	bool warmed = false;
	for (;;) {
		if (!produce_step(r, o, &p))
			continue;
		uint64_t now = rte_rdtsc();
		if (!warmed && now >= t_warm) {
			c0 = __atomic_load_n(&r->consumed, __ATOMIC_RELAXED);
			t0 = now;
			warmed = true;
		} else if (warmed && now >= t_end) {
			uint64_t n = __atomic_load_n(&r->consumed, __ATOMIC_RELAXED) - c0;
			double dt = (double)(now - t0) / hz;
			printf("dev=%s type=%s burst=%u flows=%u depth=%u events=%" PRIu64 " seconds=%.4f mpps=%.3f\n",
			       r->driver, o->type_name, o->burst, o->flows, o->depth, n, dt, (double)n / dt / 1e6);
			return n ? 0 : -1;
		}
	}
}

/* The callgrind region (--rounds): rounds of the producer's step (a burst
 * in, event_sw's scheduler run once) and the consumer's (a burst out,
 * summed) on the one lcore, as sched_perf.c's sched_bench_rounds. Returns
 * the events the consumer took. */
__attribute__((noinline)) uint64_t peer_rounds(struct run *r, const struct opts *o, uint64_t rounds)
{
	static struct producer p;
	struct rte_event out[MAX_BURST];
	uint64_t got = 0, sum = 0;
	for (uint64_t i = 0; i < rounds; i++) {
		produce_step(r, o, &p);
		got += consume_step(r, out, &sum);
	}
	r->sum = sum;
	return got;
}

int main(int argc, char **argv)
{
	int used = rte_eal_init(argc, argv);
	if (used < 0)
		return fprintf(stderr, "rte_eal_init failed\n"), 1;
	struct opts o;
	if (!parse_opts(argc - used, argv + used, &o))
		return usage();
	if (rte_event_dev_count() != 1 || rte_lcore_count() != (o.rounds ? 1 : 2))
		return fprintf(stderr, "need exactly one event device (--vdev) and %s\n",
			       o.rounds ? "one lcore (-l 0) with --rounds" : "two lcores (-l 0,1)"), 1;
	static struct run r;
	r.dev = 0;
	r.burst = o.burst;
	if (setup(&r, &o))
		return 1;
	if (o.rounds) {
		uint64_t got = peer_rounds(&r, &o, o.rounds);
		printf("dev=%s type=%s rounds=%" PRIu64 " burst=%u events=%" PRIu64 "\n", r.driver, o.type_name,
		       o.rounds, o.burst, got);
		rte_event_dev_stop(r.dev);
		rte_event_dev_close(r.dev);
		rte_eal_cleanup();
		return got ? 0 : 1;
	}
	unsigned worker = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
	if (rte_eal_remote_launch(consumer, &r, worker))
		return fprintf(stderr, "cannot launch the consumer\n"), 1;
	int rc = produce(&r, &o);
	r.stop = true;
	rte_eal_mp_wait_lcore();
	if (rc)
		fprintf(stderr, "the consumer dequeued no event\n");
	rte_event_dev_stop(r.dev);
	rte_event_dev_close(r.dev);
	rte_eal_cleanup();
	return rc ? 1 : 0;
}
