/* sluice-bench-hqos: the subscriber hierarchy (sched/hqos.h) on one
 * thread, as bench/sched/hqos_run.sh runs it beside DPDK's rte_sched
 * (peer_rte_sched.c, the same traffic and sizes).
 *
 * N subscribers on one port, each matched by a /32 destination; four
 * classes (priorities 0..3). Rates high enough that nothing is shaped
 * (port unlimited, subscribers at 400 Gbit/s): what is measured is the
 * scheduler's work per packet. A fixed set of INFLIGHT 64-byte packets
 * circulates: filled in once, round robin over subscribers and classes
 * (packet k: subscriber k mod N, class (k / N) mod 4), then each step
 * enqueues a burst and dequeues a burst, and what leaves is enqueued
 * again the next step (its destination rewritten to the next subscriber
 * in the round robin, as a new packet would bring). Enqueue includes the
 * match lookup (a hash probe per packet); rte_sched is handed the pipe.
 * --given-sub 1: sluice is handed the subscriber too (hqos_enqueue_ids,
 * the id noted beside the rewrite, as the peer's pkt_write notes the
 * pipe): the like-for-like figure, without the match.
 * --rounds R: exactly R steps (enqueue a burst, dequeue a burst) in
 * hqos_bench_rounds, for callgrind --toggle-collect=hqos_bench_rounds;
 * the rewrite of what left (address) is its own function, so its cost
 * can be taken out (callgrind_annotate --inclusive).
 *
 *   sluice-bench-hqos --subs N [--secs S] [--warmup S] [--burst B] [--inflight P] [--pages 4k]
 *                     [--given-sub 0|1] [--rounds R]
 *
 * Prints "subs=N packets=P seconds=S mpps=M cycles_per_packet=C".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/util.h"
#include "graph/buffer.h"
#include "sched/hqos.h"

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The thread's CPU time: on a box other processes load, the time this
 * thread ran, not the time it waited for a CPU. */
static double cpu_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint32_t n_subs = 1, burst = 32, inflight = 4096;
static double secs = 3, warmup = 1;
static uint32_t next_k; /* the round robin over (subscriber, class) */
static bool pages_4k;   /* --pages 4k: buffers on 4 KB pages, as the peer's --no-huge */
static bool given_sub;  /* --given-sub 1: hqos_enqueue_ids */
static uint64_t rounds; /* --rounds R: a counted run (callgrind) */
static uint32_t *sub_id; /* subscriber i's id, as hqos_sub_set returned it */

/* Packet bi's next destination and class; its subscriber's id back (for
 * --given-sub). Not inlined: callgrind takes its cost out. */
static __attribute__((noinline)) uint32_t address(uint32_t bi)
{
	uint8_t *p = buffer_data(buffer_get(bi));
	uint32_t k = next_k++;
	uint32_t a = 0x0a000000u + k % n_subs;
	p[30] = (uint8_t)(a >> 24), p[31] = (uint8_t)(a >> 16), p[32] = (uint8_t)(a >> 8), p[33] = (uint8_t)a;
	sched_buffer_set_class(buffer_get(bi), 1 + (k / n_subs) % 4);
	return sub_id[k % n_subs];
}

static int parse(int argc, char **argv)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--subs"))
			n_subs = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--warmup"))
			warmup = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--burst"))
			burst = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--inflight"))
			inflight = (uint32_t)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--pages"))
			pages_4k = !strcmp(argv[i + 1], "4k");
		else if (!strcmp(argv[i], "--given-sub"))
			given_sub = atoi(argv[i + 1]) != 0;
		else if (!strcmp(argv[i], "--rounds"))
			rounds = strtoull(argv[i + 1], NULL, 0);
		else
			return -1;
	}
	return n_subs >= 1 && n_subs < HQOS_SUBS_MAX && burst >= 1 && burst <= 256 && inflight >= burst ? 0 : -1;
}

static struct hqos *build(void)
{
	char err[256];
	struct hqos_port_config pc;
	hqos_port_config_default(&pc);
	pc.queue_limit = HQOS_QUEUE_LIMIT_MAX;
	pc.max_held = SCHED_HELD_MAX;
	struct hqos *h = hqos_create(&pc, err, sizeof(err));
	for (uint32_t i = 0; h && i < n_subs; i++) {
		struct hqos_sub_config c = { .rate_bps = SCHED_RATE_MAX, .burst_bytes = 1 << 20, .weight = 1 };
		snprintf(c.name, sizeof(c.name), "s%u", i);
		c.match.kind = HQOS_MATCH_DST4;
		c.match.plen = 32;
		uint32_t a = 0x0a000000u + i;
		for (int k = 0; k < 4; k++)
			c.match.addr[k] = (uint8_t)(a >> (24 - 8 * k));
		int id = hqos_sub_set(h, &c, 0, err, sizeof(err));
		if (id < 0) {
			fprintf(stderr, "subscriber %u: %s\n", i, err);
			return NULL;
		}
		sub_id[i] = (uint32_t)id;
	}
	if (!h)
		fprintf(stderr, "%s\n", err);
	return h;
}

static uint8_t prio[SCHED_MAX_CLASSES] = { 7, 0, 1, 2, 3, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7 };
static uint32_t out[256], ids[256], drop[256], n_in;

/* One step: what left last time goes in again (one burst), one burst
 * leaves and is rewritten for the next. -1 if anything was dropped (the
 * rates shape nothing and the queues have room: a drop is a bug). */
static inline int step(struct hqos *h, uint64_t now_ns)
{
	uint32_t nd = given_sub ? hqos_enqueue_ids(h, out, ids, n_in, prio, now_ns, drop)
				: hqos_enqueue(h, out, n_in, prio, now_ns, drop);
	if (nd)
		return -1;
	n_in = hqos_dequeue(h, now_ns, out, burst);
	for (uint32_t i = 0; i < n_in; i++)
		ids[i] = address(out[i]);
	return 0;
}

/* The counted run callgrind collects (--toggle-collect): r steps. */
__attribute__((noinline)) uint64_t hqos_bench_rounds(struct hqos *h, uint64_t r, uint64_t now_ns);
uint64_t hqos_bench_rounds(struct hqos *h, uint64_t r, uint64_t now_ns)
{
	uint64_t packets = 0;
	for (uint64_t i = 0; i < r; i++, now_ns += 100) {
		if (step(h, now_ns))
			return UINT64_MAX;
		packets += n_in;
	}
	return packets;
}

int main(int argc, char **argv)
{
	char err[256];
	if (parse(argc, argv)) {
		fprintf(stderr, "usage: sluice-bench-hqos --subs N (< %u) [--secs S] [--warmup S] [--burst B] "
				"[--inflight P] [--pages 4k] [--given-sub 0|1] [--rounds R]\n", HQOS_SUBS_MAX);
		return 2;
	}
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = inflight + 1024;
	bc.data_size = 256;
	if (pages_4k)
		bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	sub_id = calloc(n_subs, sizeof(*sub_id));
	struct hqos *h = sub_id ? build() : NULL;
	if (!h)
		return 1;
	uint32_t *pool = calloc(inflight, sizeof(*pool)), *pool_ids = calloc(inflight, sizeof(*pool_ids));
	static const uint8_t frame[64] = { [12] = 0x08, [14] = 0x45, [22] = 64, [23] = 17 };
	for (uint32_t i = 0; i < inflight; i++) {
		pool[i] = buffer_from_bytes(frame, sizeof(frame), -1);
		if (pool[i] == BUFFER_INVALID) {
			fprintf(stderr, "out of buffers\n");
			return 1;
		}
		pool_ids[i] = address(pool[i]);
	}
	/* all but one burst queued; the last burst goes in at the first step */
	uint32_t queued = inflight - burst;
	for (uint32_t i = 0; i < queued; i += burst)
		if (hqos_enqueue(h, pool + i, queued - i < burst ? queued - i : burst, prio, 0, drop)) {
			fprintf(stderr, "dropped while filling\n");
			return 1;
		}
	n_in = burst;
	memcpy(out, pool + queued, burst * sizeof(*out));
	memcpy(ids, pool_ids + queued, burst * sizeof(*ids));
	free(pool_ids);
	uint64_t packets = 0, now_ns = 1;
	if (rounds) {
		packets = hqos_bench_rounds(h, rounds, now_ns);
		if (packets == UINT64_MAX) {
			fprintf(stderr, "dropped\n");
			return 1;
		}
		printf("subs=%u given_sub=%d rounds=%llu packets=%llu\n", n_subs, given_sub,
		       (unsigned long long)rounds, (unsigned long long)packets);
		return 0;
	}
	double t_end = now_s() + warmup, t_start = 0, cpu_start = 0;
	bool measuring = false;
	for (;;) {
		for (uint32_t rep = 0; rep < 64; rep++, now_ns += 100) {
			if (step(h, now_ns)) {
				fprintf(stderr, "dropped\n");
				return 1;
			}
			packets += measuring ? n_in : 0;
		}
		double t = now_s();
		if (t < t_end)
			continue;
		if (measuring)
			break;
		measuring = true;
		t_start = t;
		cpu_start = cpu_s();
		t_end = t + secs;
	}
	double cpu = cpu_s() - cpu_start, elapsed = now_s() - t_start;
	/* per second of the thread's CPU time, and TSC cycles of it per packet
	 * (enqueue, dequeue and the rewrite of the destination) */
	printf("subs=%u given_sub=%d packets=%llu seconds=%.3f cpu_seconds=%.3f mpps=%.3f cycles_per_packet=%.1f\n",
	       n_subs, given_sub, (unsigned long long)packets, elapsed, cpu, (double)packets / cpu / 1e6,
	       cpu * cpu_ticks_per_second() / (double)packets);
	uint32_t n;
	buffer_free(out, n_in);
	while ((n = hqos_flush(h, out, 256)) != 0)
		buffer_free(out, n);
	hqos_destroy(h);
	free(pool);
	free(sub_id);
	buffer_main_free();
	return 0;
}
