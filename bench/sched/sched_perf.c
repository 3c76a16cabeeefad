/* The daemon's scheduling path with workers, as a benchmark beside DPDK's
 * event devices (peer_eventdev.c does their side of the same work).
 *
 * The path is the one sluice runs when scheduling classes are defined and
 * distributor workers run (nodes/sched/sched_io.h): on the rx thread (CPU0)
 * events enter a class queue of the priority stage (sched/evq.h, as
 * sched-ingress does), the rx thread takes them out in priority order
 * (evq_dequeue), as many as the workers have backlog room for (as
 * sched-dist does), and hands them to the
 * distributor (sched/dist/dist.h: dist_process with the queue's scheduling
 * type: atomic pins each flow to a worker, ordered and parallel spread),
 * which publishes them to the worker's handoff ring; the worker (CPU1)
 * polls its ring (dist_worker_poll, which reports the previous batch
 * complete: the implicit release), sums the payloads and, for ordered,
 * hands the packets back (dist_worker_return, as distributor-return does);
 * the rx thread harvests completions and takes the ordered packets back in
 * arrival order (dist_ordered_take, as distributor-flush does).
 *
 * Left out: the daemon's sched-dist places each packet on paper before the
 * distributor (a worker's room, the stash for one that falls behind); with
 * one worker that keeps up it holds none back, and this path skips it.
 *
 * Events carry a 32-bit counter (the buffer index in the daemon), flow
 * tags 1024 flows round robin. Sizes: the worker's ring is DEPTH / 8 lines
 * of 8 (the peer consumer's dequeue depth), the distributor's backlog is
 * the burst, its reorder window 1024 (the peer's sequence numbers).
 *
 *   sluice-bench-sched MODE [--secs S] [--warmup S] [--burst B] [--depth D]
 *                      [--prio mixed] [--cpus P,C] [--no-huge]
 *   sluice-bench-sched MODE --rounds N       (one thread, for callgrind)
 *
 * MODE: atomic | ordered | parallel (the scheduling type of the queue).
 * --prio mixed: events cycle through the 8 priority levels.
 * Memory: the event queue's and the distributor's aligned allocations are
 * on 2 MB hugepages (one MAP_HUGETLB mapping; the bench fails without
 * them), as DPDK's event devices are under --in-memory; --no-huge leaves
 * them on the C heap's 4 KB pages, as DPDK's --no-huge.
 *
 * Prints one line: "mode=... pages=2M|4K events=N seconds=S mpps=M
 * dropped=D" (events the worker took over S seconds after the warm-up;
 * dropped: by the distributor, which the room check keeps at 0). With
 * --rounds, the function sched_bench_rounds does N rounds of the rx
 * thread's step and the worker's step on one thread: run it under
 * `valgrind --tool=callgrind --toggle-collect=sched_bench_rounds`, subtract
 * bench_fill (making the events) and divide Ir by N * B.
 */
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/util.h"
#include "sched/dist/dist.h"
#include "sched/evq.h"
#if !__has_include("sched/sched_type.h")
#include "sched/class.h" /* BEFORE= an engine older than sched_type.h: the same enum is here */
#endif

#define FLOWS 1024
#define MAX_BURST 256
#define WINDOW 1024
#define ARENA_BYTES (8u << 20)

/* The hugepage arena: the peer's event device lives in hugepage memzones
 * (DPDK --in-memory), so sluice's memory is on 2 MB pages too. The
 * executable is linked with --wrap=aligned_alloc and --wrap=free
 * (meson.build), so the libraries' aligned allocations come here without
 * them knowing; nothing in the arena is freed on its own (it is their
 * memory for the whole run). Not mapped (--no-huge): the C heap's pages. */
static struct {
	char *base;
	size_t used;
} arena;

void *__real_aligned_alloc(size_t align, size_t size);
void __real_free(void *p);

void *__wrap_aligned_alloc(size_t align, size_t size)
{
	if (!arena.base)
		return __real_aligned_alloc(align, size);
	size_t at = ROUND_UP(arena.used, align);
	if (at + size > ARENA_BYTES) {
		fprintf(stderr, "sluice-bench-sched: the %u MB hugepage arena is too small\n", ARENA_BYTES >> 20);
		exit(1);
	}
	arena.used = at + size;
	return arena.base + at;
}

void __wrap_free(void *p)
{
	if (arena.base && (char *)p >= arena.base && (char *)p < arena.base + ARENA_BYTES)
		return;
	__real_free(p);
}

static bool arena_map(void)
{
	void *p = mmap(NULL, ARENA_BYTES, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
	if (p == MAP_FAILED) {
		perror("sluice-bench-sched: 2 MB hugepages (use --no-huge for 4 KB pages)");
		return false;
	}
	arena.base = p;
	return true;
}

struct bench {
	struct evq *q;
	struct dist *d;
	uint8_t type; /* enum sched_type */
	bool mixed;
	uint32_t burst;
	int cons_cpu;
	_Atomic bool stop;
	/* the rx thread's, written every step: on lines of their own, so that
	 * the worker, which reads the line above every poll, does not take it
	 * back from the rx thread every step (the peer's producer keeps its
	 * state on its stack) */
	alignas(CACHE_LINE_SIZE) uint64_t seq;
	uint32_t pending; /* ev[burst - pending, burst) not yet taken by the class queue */
	uint64_t out;     /* ordered packets taken back in order */
	uint64_t dropped;
	struct evq_event ev[MAX_BURST];
	struct evq_event taken[MAX_BURST];
	uint32_t bi[MAX_BURST];
	uint16_t tags[MAX_BURST];
	uint8_t types[MAX_BURST];
	uint32_t refused[MAX_BURST];
	uint8_t reason[MAX_BURST];
	/* the worker's */
	alignas(CACHE_LINE_SIZE) _Atomic uint64_t consumed;
	uint64_t sum;
};

static void pin(int cpu)
{
	if (cpu < 0)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

/* The worker's step: take a batch (reporting the last one complete), sum
 * the payloads, hand ordered packets back. Returns the packets taken. */
static inline uint32_t worker_step(struct bench *b, uint32_t *bi, uint16_t *tags, uint64_t *sum)
{
	uint32_t n = dist_worker_poll(b->d, 0, bi, tags, b->burst);
	for (uint32_t i = 0; i < n; i++)
		*sum += bi[i];
	if (n && b->type == SCHED_TYPE_ORDERED)
		dist_worker_return(b->d, 0, bi, tags, n);
	return n;
}

static void *worker(void *arg)
{
	struct bench *b = arg;
	uint32_t bi[MAX_BURST];
	uint16_t tags[MAX_BURST];
	uint64_t n = 0, sum = 0;
	pin(b->cons_cpu);
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		n += worker_step(b, bi, tags, &sum);
		atomic_store_explicit(&b->consumed, n, memory_order_relaxed);
	}
	dist_worker_done(b->d, 0);
	b->sum = sum;
	return NULL;
}

__attribute__((noinline)) void bench_fill(struct evq_event *ev, uint32_t n, uint64_t *seq, bool mixed)
{
	for (uint32_t i = 0; i < n; i++, (*seq)++)
		ev[i] = (struct evq_event){.flow = (uint32_t)(*seq % FLOWS), .queue = 0,
					   .priority = (uint8_t)(mixed ? *seq & 7 : 4), .u64 = *seq};
}

#ifdef EVQ_MAX_PORTS
/* BEFORE= an engine whose event queues dispatched to consumer ports: its
 * sched-dist took events through one 8-deep port, released at once. */
static struct evq *class_queue(const struct evq_queue_config *qc, char *err, size_t errlen)
{
	struct evq_config cfg;
	evq_config_default(&cfg);
	cfg.port_depth = 8;
	struct evq *q = evq_create(&cfg, err, errlen);
	if (q && (evq_queue_setup(q, 0, qc) || evq_port_link(q, 0, 0))) {
		evq_destroy(q);
		snprintf(err, errlen, "queue setup failed");
		return NULL;
	}
	return q;
}

static uint32_t take(struct bench *b, uint32_t max)
{
	struct evq_port *port = evq_port(b->q, 0);
	uint32_t got = 0, k;
	while (got < max) {
		evq_schedule(b->q);
		if (!(k = evq_port_dequeue(port, b->taken + got, max - got)))
			break;
		evq_port_release(port, k);
		got += k;
	}
	return got;
}
#else
/* One class queue, its one consumer the rx thread (as sched_io.c's). */
static struct evq *class_queue(const struct evq_queue_config *qc, char *err, size_t errlen)
{
	struct evq *q = evq_create(1, err, errlen);
	if (q && evq_queue_setup(q, 0, qc)) {
		evq_destroy(q);
		snprintf(err, errlen, "queue setup failed");
		return NULL;
	}
	return q;
}

/* sched-dist's take: up to max events in priority order. */
static uint32_t take(struct bench *b, uint32_t max)
{
	return evq_dequeue(b->q, b->taken, max);
}
#endif

/* The rx thread's step: a burst into the class queue (what it takes),
 * then as many events as the worker has backlog room for to the
 * distributor with the queue's type, then the ordered packets back. */
static inline void rx_step(struct bench *b)
{
	if (!b->pending) {
		bench_fill(b->ev, b->burst, &b->seq, b->mixed);
		b->pending = b->burst;
	}
	b->pending -= evq_enqueue(b->q, b->ev + (b->burst - b->pending), b->pending);
	uint32_t n = take(b, MIN(dist_room(b->d, 0), (uint32_t)MAX_BURST));
	for (uint32_t i = 0; i < n; i++) {
		b->bi[i] = b->taken[i].buffer_index;
		b->tags[i] = (uint16_t)(b->taken[i].flow & HANDOFF_TAG_MASK);
		b->types[i] = b->type;
	}
	if (n)
		b->dropped += n - dist_process(b->d, b->bi, b->tags, b->types, n, b->refused, b->reason, NULL);
	else
		dist_flush(b->d);
	if (b->type == SCHED_TYPE_ORDERED) {
		uint32_t k;
		while ((k = dist_ordered_take(b->d, b->refused, MAX_BURST)) != 0)
			b->out += k;
	}
}

/* The callgrind region: rounds of the rx step and the worker step on one
 * thread. */
__attribute__((noinline)) uint64_t sched_bench_rounds(struct bench *b, uint64_t rounds)
{
	uint32_t bi[MAX_BURST];
	uint16_t tags[MAX_BURST];
	uint64_t got = 0, sum = 0;
	for (uint64_t r = 0; r < rounds; r++) {
		rx_step(b);
		got += worker_step(b, bi, tags, &sum);
	}
	b->sum = sum;
	return got;
}

static int usage(void)
{
	fprintf(stderr, "usage: sluice-bench-sched atomic|ordered|parallel [--secs S] [--warmup S] [--burst B] "
			"[--depth D] [--prio mixed] [--rounds N] [--cpus P,C] [--no-huge] [--match-always]\n");
	return 2;
}

struct opts {
	double secs, warmup;
	uint32_t burst, depth;
	uint64_t rounds;
	bool mixed, huge;
	bool match_always; /* the distributor's general worker choice with one worker */
	int prod_cpu, cons_cpu;
};

static bool parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){.secs = 5, .warmup = 1, .burst = 32, .depth = 128, .huge = true, .cons_cpu = 1};
	for (int i = 2; i < argc; i++) {
		const char *k = argv[i];
		if (!strcmp(k, "--no-huge")) {
			o->huge = false;
			continue;
		}
		if (!strcmp(k, "--match-always")) {
			o->match_always = true;
			continue;
		}
		if (i + 1 >= argc)
			return false;
		const char *v = argv[++i];
		if (!strcmp(k, "--secs"))
			o->secs = atof(v);
		else if (!strcmp(k, "--warmup"))
			o->warmup = atof(v);
		else if (!strcmp(k, "--burst"))
			o->burst = (uint32_t)atoi(v);
		else if (!strcmp(k, "--depth"))
			o->depth = (uint32_t)atoi(v);
		else if (!strcmp(k, "--prio"))
			o->mixed = !strcmp(v, "mixed");
		else if (!strcmp(k, "--rounds"))
			o->rounds = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--cpus"))
			sscanf(v, "%d,%d", &o->prod_cpu, &o->cons_cpu);
		else
			return false;
	}
	return o->burst >= 8 && o->burst <= MAX_BURST && o->depth >= 8 && o->warmup >= 0;
}

/* The class queue and the distributor for one worker; NULL with the
 * reason printed. */
static struct bench *setup(const struct opts *o, uint8_t type)
{
	char err[160];
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	struct evq *q = class_queue(&qc, err, sizeof(err));
	if (!q) {
		fprintf(stderr, "event queue setup failed: %s\n", err);
		return NULL;
	}
	struct dist_config dc;
	dist_config_default(&dc);
	dc.backlog = o->burst;
	dc.ring_lines = o->depth / 8;
	dc.window = WINDOW;
	dc.match_always = o->match_always;
	struct dist *d = dist_create(&dc, err, sizeof(err));
	if (!d) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	struct bench *b = aligned_alloc(CACHE_LINE_SIZE, ROUND_UP(sizeof(*b), CACHE_LINE_SIZE));
	memset(b, 0, sizeof(*b));
	b->q = q;
	b->d = d;
	b->type = type;
	b->mixed = o->mixed;
	b->burst = o->burst;
	b->cons_cpu = o->cons_cpu;
	return b;
}

/* Producer loop on this thread until the measurement is over: prints the
 * line. */
static void measure(struct bench *b, const struct opts *o, const char *mode)
{
	pin(o->prod_cpu);
	pthread_t th;
	pthread_create(&th, NULL, worker, b);
	uint64_t calls = 0, c0 = 0, t_c0 = 0;
	const double hz = cpu_ticks_per_second();
	const uint64_t t_warm = cpu_ticks() + (uint64_t)(o->warmup * hz);
	const uint64_t t_end = t_warm + (uint64_t)(o->secs * hz);
	bool warmed = false;
	for (;;) {
		rx_step(b);
		if ((++calls & 63) != 0)
			continue;
		uint64_t now = cpu_ticks();
		if (!warmed && now >= t_warm) {
			c0 = atomic_load_explicit(&b->consumed, memory_order_relaxed);
			t_c0 = now;
			warmed = true;
		} else if (warmed && now >= t_end) {
			uint64_t c1 = atomic_load_explicit(&b->consumed, memory_order_relaxed);
			double dt = (double)(now - t_c0) / hz;
			printf("mode=%s prio=%s burst=%u depth=%u flows=%u pages=%s events=%" PRIu64
			       " seconds=%.4f mpps=%.3f dropped=%" PRIu64 "\n",
			       mode, b->mixed ? "mixed" : "one", b->burst, o->depth, FLOWS, o->huge ? "2M" : "4K",
			       c1 - c0, dt, (double)(c1 - c0) / dt / 1e6, b->dropped);
			break;
		}
	}
	atomic_store(&b->stop, true);
	pthread_join(th, NULL);
}

int main(int argc, char **argv)
{
	struct opts o;
	if (argc < 2 || !parse(argc, argv, &o))
		return usage();
	const char *mode = argv[1];
	int type = sched_type_parse(mode);
	if (type < 0)
		return usage();
	if (o.huge && !arena_map())
		return 1;
	struct bench *b = setup(&o, (uint8_t)type);
	if (!b)
		return 1;
	if (o.rounds) {
		uint64_t got = sched_bench_rounds(b, o.rounds);
		printf("mode=%s rounds=%" PRIu64 " burst=%u events=%" PRIu64 " dropped=%" PRIu64 "\n", mode, o.rounds,
		       o.burst, got, b->dropped);
	} else {
		measure(b, &o, mode);
	}
	struct evq_stats st;
	evq_stats(b->q, &st);
	fprintf(stderr,
		"# enqueued %" PRIu64 " refused %" PRIu64 " dispatched %" PRIu64 " distributor dropped %" PRIu64
		" ordered out %" PRIu64 " hugepage arena %zu KB\n",
		st.enqueued, st.refused, st.dispatched, b->dropped, b->out, arena.used >> 10);
	uint32_t bi[MAX_BURST];
	while (dist_reclaim(b->d, bi, MAX_BURST) != 0)
		;
	int rc = b->dropped ? 1 : 0;
	dist_free(b->d);
	evq_destroy(b->q);
	free(b);
	return rc;
}
