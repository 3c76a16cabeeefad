/* Event queue throughput: one queue, one producer and one consumer thread,
 * the work peer_eventdev.c gives DPDK's event_sw and event_dsw, so the
 * figures sit beside theirs: the producer thread (CPU0) is also the
 * scheduler's owner and runs evq_schedule after every enqueue burst, as the
 * peer runs event_sw's scheduler service inline; the consumer (CPU1)
 * dequeues bursts with implicit release and sums the payloads. Events
 * carry a 64-bit counter, 1024 flows round robin, and an atomic queue has
 * 1024 flow slots (the peer configures 1024 flows).
 *
 *   sluice-bench-sched MODE [--secs S] [--warmup S] [--burst B] [--depth D]
 *                      [--prio mixed] [--cpus P,C] [--no-huge]
 *   sluice-bench-sched MODE --rounds N       (one thread, for callgrind)
 *
 * MODE: atomic | ordered | parallel | ordered-out. ordered-out: the
 * consumer forwards every event to the output and the producer takes the
 * output back in restored order (the reorder window's whole path).
 * --prio mixed: events cycle through the 8 levels.
 * Memory: the event queues' memory is on 2 MB hugepages (one MAP_HUGETLB
 * mapping; the bench fails without them), as DPDK's event devices are under
 * --in-memory; --no-huge leaves it on the C heap's 4 KB pages, as DPDK's
 * --no-huge.
 *
 * Prints one line: "mode=... pages=2M|4K events=N seconds=S mpps=M"
 * (events counted by the consumer over S seconds after the warm-up, 1 s by
 * default). With --rounds, the function evq_bench_rounds does N rounds of
 * enqueue B, schedule, dequeue B on one thread: run it under `valgrind
 * --tool=callgrind --toggle-collect=evq_bench_rounds` and divide Ir by N * B.
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
#include "sched/evq.h"

#define FLOWS 1024
#define MAX_BURST 256
#define ARENA_BYTES (4u << 20)

/* The hugepage arena: the peer's event device lives in hugepage memzones
 * (DPDK --in-memory), so evq's memory is on 2 MB pages too. The executable
 * is linked with --wrap=aligned_alloc and --wrap=free (meson.build), so
 * evq.c's allocations come here without the library knowing; nothing in the
 * arena is freed on its own (it is the queues' memory for the whole run).
 * Not mapped (--no-huge): the C heap's 4 KB pages. */
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
	struct evq_port *port;
	bool out_mode;
	uint32_t burst;
	int cons_cpu;
	_Atomic bool stop;
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

static void *consumer(void *arg)
{
	struct bench *b = arg;
	struct evq_event ev[MAX_BURST];
	uint64_t n = 0, sum = 0;
	pin(b->cons_cpu);
	while (!atomic_load_explicit(&b->stop, memory_order_relaxed)) {
		uint32_t k = evq_port_dequeue(b->port, ev, b->burst);
		for (uint32_t i = 0; i < k; i++)
			sum += ev[i].u64;
		if (b->out_mode && k) {
			for (uint32_t i = 0; i < k; i++)
				ev[i].queue = EVQ_QUEUE_OUT;
			evq_port_forward(b->port, ev, k);
		}
		n += k;
		atomic_store_explicit(&b->consumed, n, memory_order_relaxed);
	}
	b->sum = sum;
	return NULL;
}

static void fill(struct evq_event *ev, uint32_t n, uint64_t *seq, bool mixed)
{
	for (uint32_t i = 0; i < n; i++, (*seq)++)
		ev[i] = (struct evq_event){.flow = (uint32_t)(*seq % FLOWS), .queue = 0,
					   .priority = (uint8_t)(mixed ? *seq & 7 : 4), .u64 = *seq};
}

/* The callgrind region: rounds of enqueue, schedule, dequeue on one thread. */
__attribute__((noinline)) uint64_t evq_bench_rounds(struct bench *b, uint64_t rounds, bool mixed)
{
	struct evq_event ev[MAX_BURST], out[MAX_BURST];
	uint64_t seq = 0, got = 0;
	for (uint64_t r = 0; r < rounds; r++) {
		fill(ev, b->burst, &seq, mixed);
		evq_enqueue(b->q, ev, b->burst);
		evq_schedule(b->q);
		uint32_t k = evq_port_dequeue(b->port, out, b->burst);
		if (b->out_mode) {
			for (uint32_t i = 0; i < k; i++)
				out[i].queue = EVQ_QUEUE_OUT;
			evq_port_forward(b->port, out, k);
			evq_schedule(b->q);
			k = evq_output(b->q, out, b->burst);
		}
		got += k;
	}
	return got;
}

static int usage(void)
{
	fprintf(stderr, "usage: sluice-bench-sched atomic|ordered|parallel|ordered-out [--secs S] [--warmup S] "
			"[--burst B] [--depth D] [--prio mixed] [--rounds N] [--cpus P,C] [--no-huge]\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return usage();
	const char *mode = argv[1];
	uint32_t type;
	bool out_mode = false;
	if (!strcmp(mode, "atomic"))
		type = EVQ_ATOMIC;
	else if (!strcmp(mode, "ordered"))
		type = EVQ_ORDERED;
	else if (!strcmp(mode, "ordered-out"))
		type = EVQ_ORDERED, out_mode = true;
	else if (!strcmp(mode, "parallel"))
		type = EVQ_PARALLEL;
	else
		return usage();
	double secs = 5, warmup = 1;
	uint32_t burst = 32, depth = 256;
	uint64_t rounds = 0;
	bool mixed = false, huge = true;
	int prod_cpu = 0, cons_cpu = 1;
	for (int i = 2; i < argc; i++) {
		const char *k = argv[i];
		if (!strcmp(k, "--no-huge")) {
			huge = false;
			continue;
		}
		if (i + 1 >= argc)
			return usage();
		const char *v = argv[++i];
		if (!strcmp(k, "--secs"))
			secs = atof(v);
		else if (!strcmp(k, "--warmup"))
			warmup = atof(v);
		else if (!strcmp(k, "--burst"))
			burst = (uint32_t)atoi(v);
		else if (!strcmp(k, "--depth"))
			depth = (uint32_t)atoi(v);
		else if (!strcmp(k, "--prio"))
			mixed = !strcmp(v, "mixed");
		else if (!strcmp(k, "--rounds"))
			rounds = strtoull(v, NULL, 0);
		else if (!strcmp(k, "--cpus"))
			sscanf(v, "%d,%d", &prod_cpu, &cons_cpu);
		else
			return usage();
	}
	if (burst < 1 || burst > MAX_BURST || warmup < 0)
		return usage();
	if (huge && !arena_map())
		return 1;

	struct evq_config cfg;
	evq_config_default(&cfg);
	cfg.port_depth = depth;
	char err[128];
	struct evq *q = evq_create(&cfg, err, sizeof(err));
	if (!q) {
		fprintf(stderr, "evq_create: %s\n", err);
		return 1;
	}
	struct evq_queue_config qc;
	evq_queue_config_default(&qc);
	qc.type = type;
	qc.flows = FLOWS;
	if (evq_queue_setup(q, 0, &qc) || evq_port_link(q, 0, 0)) {
		fprintf(stderr, "queue setup failed\n");
		return 1;
	}
	struct bench *b = aligned_alloc(CACHE_LINE_SIZE, ROUND_UP(sizeof(*b), CACHE_LINE_SIZE));
	memset(b, 0, sizeof(*b));
	*b = (struct bench){.q = q, .port = evq_port(q, 0), .out_mode = out_mode, .burst = burst, .cons_cpu = cons_cpu};

	if (rounds) {
		uint64_t got = evq_bench_rounds(b, rounds, mixed);
		printf("mode=%s rounds=%" PRIu64 " burst=%u events=%" PRIu64 "\n", mode, rounds, burst, got);
		evq_destroy(q);
		free(b);
		return 0;
	}

	pin(prod_cpu);
	pthread_t th;
	pthread_create(&th, NULL, consumer, b);
	struct evq_event ev[MAX_BURST], out[MAX_BURST];
	uint64_t seq = 0, calls = 0, c0 = 0, t_c0 = 0;
	uint32_t pending = 0;
	const double hz = cpu_ticks_per_second();
	const uint64_t t_start = cpu_ticks(), t_warm = t_start + (uint64_t)(warmup * hz);
	const uint64_t t_end = t_warm + (uint64_t)(secs * hz);
	bool warmed = false;
	for (;;) {
		if (!pending) {
			fill(ev, burst, &seq, mixed);
			pending = burst;
		}
		pending -= evq_enqueue(q, ev + (burst - pending), pending);
		evq_schedule(q);
		if (out_mode)
			while (evq_output(q, out, MAX_BURST) == MAX_BURST)
				;
		if ((++calls & 63) == 0) {
			uint64_t now = cpu_ticks();
			if (!warmed && now >= t_warm) {
				c0 = atomic_load_explicit(&b->consumed, memory_order_relaxed);
				t_c0 = now;
				warmed = true;
			} else if (warmed && now >= t_end) {
				uint64_t c1 = atomic_load_explicit(&b->consumed, memory_order_relaxed);
				double dt = (double)(now - t_c0) / hz;
				printf("mode=%s prio=%s burst=%u depth=%u flows=%u pages=%s events=%" PRIu64
				       " seconds=%.4f mpps=%.3f\n",
				       mode, mixed ? "mixed" : "one", burst, depth, FLOWS, huge ? "2M" : "4K", c1 - c0, dt,
				       (double)(c1 - c0) / dt / 1e6);
				break;
			}
		}
	}
	atomic_store(&b->stop, true);
	pthread_join(th, NULL);
	struct evq_stats st;
	evq_stats(q, &st);
	fprintf(stderr,
		"# enqueued %" PRIu64 " refused %" PRIu64 " dispatched %" PRIu64 " output %" PRIu64
		" hugepage arena %zu KB\n",
		st.enqueued, st.refused, st.dispatched, st.output, arena.used >> 10);
	evq_destroy(q);
	free(b);
	return 0;
}
