/* Distributor cycles per packet, measured the way DPDK 22.11's
 * distributor_perf_autotest measures rte_distributor's burst mode: the main
 * thread hands the same 64 packets (flow tags 0..63) to the workers CALLS
 * times; each worker takes its lines and reports them done at its next poll
 * (its "graph" does nothing). The figure is TSC ticks spent in the
 * distributor loop per packet handed, over the whole timed loop (a mean, as
 * DPDK's "Time per packet" is total ticks / packets), waiting for room
 * included: DPDK's rte_distributor_process() spins inside release() on a
 * worker whose backlog is full; sluice's dist_process never waits (it drops
 * what does not fit), so this loop hands each burst in pieces no bigger
 * than the smallest worker's free backlog (dist_room) and, when that is 0,
 * flushes (harvest completions, publish) until there is room: no packet is
 * ever dropped, and the waiting is timed, as DPDK's is.
 *
 * The hand-back: a sluice worker's next dist_worker_poll reports its batch
 * complete by adding its number of lines to a counter, and
 * dist_process/dist_flush harvest the count: each packet of those lines
 * has its flow-table count released, from the distributor's own copy of
 * the line (lines complete in the order they were published). DPDK's
 * worker writes the packets back into its return cache line
 * (rte_distributor_get_pkt's oldpkt) and process() stores each into a
 * 128-entry circular returns array, which the autotest never reads in the
 * timed loop (it clears it after). What differs: no packet index travels
 * back on sluice's side (a count does) and sluice hands no returned index
 * to its caller (no rte_distributor_returned_pkts for atomic packets); it
 * updates the flow table per completed packet instead. Ordered packets
 * (--type ordered) are handed back one by one (dist_worker_return).
 *
 *   sluice-bench-distributor [--workers N] [--calls C] [--warmup W]
 *                            [--backlog B] [--ring-lines L] [--poll-max P]
 *                            [--dist-cpu C] [--worker-cpus a,b,...]
 *                            [--inline | --inline-hold] [--type atomic|ordered|parallel]
 *                            [--match-always]
 *
 * DPDK's depth is --backlog 8 --ring-lines 1 --poll-max 8: one cache line
 * of 8 in flight per worker (RTE_DIST_BURST_SIZE), a backlog of 8, and the
 * worker takes one line per call; sluice then hands lines through a
 * mailbox each way (handoff_mailbox_create), no ring indices. sluice's defaults are deeper (64 lines,
 * a backlog of 64, 256 packets per poll).
 *
 * --inline runs no worker threads: between calls the main thread plays
 * every worker (take the lines, report them complete at once), so that
 * callgrind counts one fixed interleaving: each call's flows are all new
 * again, as when a worker on its own core keeps up. --inline-hold has the
 * workers hold each batch until the next call, so every flow is still in
 * flight when its next packet comes (the matched path).
 *
 * --match-always: with one worker, dist_process still stages packet by
 * packet through the flow matcher and its worker choice, as with many
 * workers and as DPDK's process() does with one (the matched row beside the
 * one-worker chunk loop the daemon runs).
 *
 * --type gives every packet that scheduling type through dist_process's
 * types array (without it: types NULL, the atomic fast path). Ordered
 * packets are handed back by the workers with dist_worker_return and
 * collected by the main thread (dist_ordered_take) inside the measured
 * loop: sluice's one API that returns packets to the distributor's caller.
 *
 * --warmup W untimed calls first (10000; DPDK's test has none).
 *
 * --window-log2 N also times each window of 2^N calls and prints the best
 * window's ticks/packet (best_window=): on a box shared with other work,
 * a window in which both threads kept their CPUs (peer_distributor.c
 * prints the same from its loop).
 *
 * Prints one line: workers, cpus, depth, ticks/packet, Mpps at the TSC
 * rate, ticks per call, dist_process calls per burst, drops (always 0: the
 * loop waits for room), the share of packets whose flow was still in flight
 * (matched), the matcher.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "sched/dist/dist.h"
#include "sched/dist/dist_private.h"
#if !__has_include("sched/sched_type.h")
#include "sched/class.h" /* BEFORE= an engine older than sched_type.h: the same enum is here */
#endif

#define BURST 64

static struct dist *d;
static bool inline_workers, inline_hold;
static uint32_t poll_max = 256; /* packets a worker takes per poll */
static int type = -1; /* enum sched_type, -1: types NULL */
/* The one global a worker reads in its loop, on a line of its own: the
 * main thread's stores (process_calls) must not share it, or every
 * dist_process call costs the worker a miss that DPDK's harness (whose
 * worker reads only its quit flag) does not pay. */
static alignas(64) atomic_bool stop;
static atomic_uint ready;

struct worker_arg {
	uint32_t w;
	int cpu;
	pthread_t th;
	uint64_t got;
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

static void *worker(void *p)
{
	struct worker_arg *a = p;
	uint32_t bi[256];
	uint16_t tags[256];
	/* Locals: the loop reads no global but stop, writes none. */
	struct dist *dd = d;
	uint32_t w = a->w, max = poll_max;
	bool ordered = type == SCHED_TYPE_ORDERED;
	uint64_t got = 0;
	pin(a->cpu);
	atomic_fetch_add(&ready, 1);
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		uint32_t n = dist_worker_poll(dd, w, bi, tags, max);
		if (n && ordered)
			dist_worker_return(dd, w, bi, tags, n);
		got += n;
		if (!n)
			cpu_relax();
	}
	dist_worker_done(dd, w);
	a->got = got;
	return NULL;
}

/* --inline: every worker takes its lines and reports them complete (an
 * ordered batch handed back first). */
static void play_workers(void)
{
	static uint32_t bi[DIST_MAX_WORKERS][256], held[DIST_MAX_WORKERS];
	static uint16_t tags[DIST_MAX_WORKERS][256];
	for (uint32_t w = 0; w < dist_n_workers(d); w++) {
		if (type == SCHED_TYPE_ORDERED && held[w])
			dist_worker_return(d, w, bi[w], tags[w], held[w]);
		held[w] = 0;
		/* Holding: one poll reports the previous batch and takes this one. */
		if (inline_hold) {
			held[w] = dist_worker_poll(d, w, bi[w], tags[w], poll_max);
			continue;
		}
		uint32_t n;
		while ((n = dist_worker_poll(d, w, bi[w], tags[w], poll_max)) != 0)
			if (type == SCHED_TYPE_ORDERED)
				dist_worker_return(d, w, bi[w], tags[w], n);
		dist_worker_done(d, w);
	}
}

/* The main thread sends what the window released (ordered only). */
static void take_ordered(void)
{
	uint32_t out[256];
	if (type == SCHED_TYPE_ORDERED)
		while (dist_ordered_take(d, out, 256))
			;
}

/* Packets that fit without a drop now: the smallest worker's free backlog
 * (a piece may all go to one worker). */
static uint32_t room(void)
{
	if (inline_workers)
		play_workers();
	take_ordered();
	uint32_t r = UINT32_MAX;
	for (uint32_t w = 0; w < dist_n_workers(d); w++)
		r = MIN(r, dist_room(d, w));
	return r;
}

static alignas(64) uint64_t process_calls;

/* One burst, in pieces that fit: DPDK's process() waits inside for a full
 * worker, this waits outside (flush until there is room). Returns the
 * packets taken (all of them: nothing is handed that does not fit). */
static uint32_t hand_burst(const uint32_t *bi, const uint16_t *tags, const uint8_t *types, uint32_t n)
{
	uint32_t dropped[BURST], off = 0, taken = 0;
	uint8_t reason[BURST];
	while (off < n) {
		uint32_t r = room();
		if (unlikely(!r)) {
			if (!dist_flush(d))
				cpu_relax();
			continue;
		}
		uint32_t k = MIN(r, n - off);
		taken += dist_process(d, bi + off, tags + off, types ? types + off : NULL, k, dropped, reason, NULL);
		process_calls++;
		off += k;
	}
	return taken;
}

int main(int argc, char **argv)
{
	uint32_t workers = 1, calls = 1u << 21, backlog = 64, ring_lines = 64, warmup = 10000, window_log2 = 0;
	int dist_cpu = 0, wcpus[DIST_MAX_WORKERS];
	bool match_always = false;
	for (uint32_t i = 0; i < DIST_MAX_WORKERS; i++)
		wcpus[i] = 1;
	for (int i = 1; i < argc; i += 2) {
		const char *k = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
		if (!strcmp(k, "--inline") || !strcmp(k, "--inline-hold")) {
			inline_workers = true;
			inline_hold = !strcmp(k, "--inline-hold");
			i--;
		} else if (!strcmp(k, "--match-always")) {
			match_always = true;
			i--;
		} else if (!strcmp(k, "--workers"))
			workers = (uint32_t)atoi(v);
		else if (!strcmp(k, "--type")) {
			for (int t = 0; t < SCHED_N_TYPES; t++)
				if (!strcmp(v, sched_type_names[t]))
					type = t;
			if (type < 0) {
				fprintf(stderr, "--type: atomic, ordered or parallel\n");
				return 2;
			}
		} else if (!strcmp(k, "--calls"))
			calls = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "--window-log2"))
			window_log2 = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "--warmup"))
			warmup = (uint32_t)strtoul(v, NULL, 0);
		else if (!strcmp(k, "--poll-max"))
			poll_max = (uint32_t)atoi(v);
		else if (!strcmp(k, "--backlog"))
			backlog = (uint32_t)atoi(v);
		else if (!strcmp(k, "--ring-lines"))
			ring_lines = (uint32_t)atoi(v);
		else if (!strcmp(k, "--dist-cpu"))
			dist_cpu = atoi(v);
		else if (!strcmp(k, "--worker-cpus")) {
			char *s = strdup(v), *save = NULL;
			uint32_t n = 0;
			for (char *t = strtok_r(s, ",", &save); t && n < DIST_MAX_WORKERS; t = strtok_r(NULL, ",", &save))
				wcpus[n++] = atoi(t);
			for (uint32_t j = n; n && j < DIST_MAX_WORKERS; j++)
				wcpus[j] = wcpus[j % n];
			free(s);
		} else {
			fprintf(stderr, "unknown option %s\n", k);
			return 2;
		}
	}
	if (poll_max < 8 || poll_max > 256) {
		fprintf(stderr, "--poll-max: 8-256 (whole lines of 8)\n");
		return 2;
	}
	struct dist_config c = { .n_workers = workers, .backlog = backlog, .ring_lines = ring_lines,
				 .match_always = match_always };
	char err[256];
	d = dist_create(&c, err, sizeof(err));
	if (!d) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	pin(dist_cpu);
	struct worker_arg wa[DIST_MAX_WORKERS];
	uint32_t threads = inline_workers ? 0 : workers;
	for (uint32_t w = 0; w < threads; w++) {
		wa[w] = (struct worker_arg){ .w = w, .cpu = wcpus[w] };
		pthread_create(&wa[w].th, NULL, worker, &wa[w]);
	}
	while (atomic_load(&ready) < threads)
		cpu_relax();
	uint32_t bi[BURST];
	uint16_t tags[BURST];
	uint8_t types_all[BURST];
	for (uint32_t i = 0; i < BURST; i++) {
		bi[i] = i;
		tags[i] = (uint16_t)i;
		types_all[i] = (uint8_t)(type < 0 ? 0 : type);
	}
	const uint8_t *types = type < 0 ? NULL : types_all;
	uint64_t handed = 0, drops = 0;
	/* Warm up, then measure. */
	for (uint32_t i = 0; i < warmup; i++)
		hand_burst(bi, tags, types, BURST);
	process_calls = 0;
	uint32_t window = window_log2 ? 1u << MIN(window_log2, 30u) : 0;
	double best = 0;
	uint64_t t0 = cpu_ticks(), tw = t0, hw = 0;
	for (uint32_t i = 0; i < calls; i++) {
		uint32_t k = hand_burst(bi, tags, types, BURST);
		handed += k;
		drops += BURST - k;
		if (window && ((i + 1) & (window - 1)) == 0) {
			uint64_t now = cpu_ticks();
			double t = (double)(now - tw) / (double)(handed - hw);
			best = best == 0 || t < best ? t : best;
			tw = now;
			hw = handed;
		}
	}
	uint64_t ticks = cpu_ticks() - t0;
	const char *mode = inline_hold ? " inline-hold" : inline_workers ? " inline" : "";
	inline_hold = false; /* let the last batches complete */
	while (dist_outstanding(d)) {
		if (inline_workers)
			play_workers();
		dist_flush(d);
		take_ordered();
	}
	atomic_store(&stop, true);
	for (uint32_t w = 0; w < threads; w++)
		pthread_join(wa[w].th, NULL);
	uint64_t matched = 0, all = 0;
	for (uint32_t w = 0; w < workers; w++) {
		struct dist_worker_stats st;
		dist_worker_stats(d, w, &st);
		matched += st.matched;
		all += st.handed;
	}
	double tpp = (double)ticks / (double)handed;
	printf("workers=%u dist_cpu=%d worker_cpus=", workers, dist_cpu);
	for (uint32_t w = 0; w < workers; w++)
		printf("%s%d", w ? "," : "", wcpus[w]);
	printf(" backlog=%u ring_lines=%u poll_max=%u ticks_per_packet=%.2f mpps=%.1f ticks_per_call=%.0f "
	       "process_per_burst=%.2f drops=%llu matched=%.1f%% matcher=%s%s%s%s\n",
	       backlog, ring_lines, poll_max, tpp, cpu_ticks_per_second() / tpp / 1e6, (double)ticks / calls,
	       (double)process_calls / calls, (unsigned long long)drops, all ? 100.0 * (double)matched / (double)all : 0.0, dist_match_vector_isa,
	       mode, type < 0 ? "" : " type ", type < 0 ? "" : sched_type_names[type]);
	if (window)
		printf("best_window=%.2f window_calls=%u\n", best, window);
	dist_free(d);
	return 0;
}
