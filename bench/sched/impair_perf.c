/* The impairer (sched/impair.h) on one thread, as sched-egress runs it:
 * packets enter at `now`, each gets its departure time and waits in the
 * two-level wheel, and every step releases what is due.
 *
 *   sluice-bench-impair throughput [--packets N] [--warm N] [--rate PPS] [--config WORDS]
 *   sluice-bench-impair lateness   [--secs S] [--rate PPS] [--config WORDS]
 *
 * throughput: a simulated clock advancing as if packets were offered at
 *   --rate (default 10 Mpps) in bursts of 32, so with `delay 10ms` the
 *   wheel holds rate * 10 ms packets (100K at 10 Mpps) once warm; the
 *   thread runs as fast as it can through N packets (default 20M after
 *   a warm-up of 2M) and the line gives packets per wall second. Per
 *   burst: buffer_alloc of 32 (as an rx node gets them), length set,
 *   enqueue, dequeue of what is due, buffer_free of the released and the
 *   lost (as tx and error-drop do): that work is in the figure.
 * lateness: the real clock (CLOCK_MONOTONIC), packets offered at --rate
 *   (default 1 Mpps) as time passes, the thread polling the wheel in a
 *   busy loop (no timer service: the daemon adds its wake-up, one tick of
 *   10 us by default, on top); each released packet's lateness, now minus
 *   its departure time, is kept and the line gives p50, p99, p99.9, max.
 * Default config: "delay 10ms loss random 1% seed 1".
 *
 * Prints one line: mode=... config="..." packets=N held_max=H seconds=S
 * mpps=M cpu_seconds=C mpps_per_cpu_second=P (throughput: P divides by
 * the thread's CPU time, the fairer figure on a shared box) or lateness_ns_p50=.. p99=.. p999=.. max=..
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/buffer.h"
#include "sched/impair.h"

#define BURST 32

static uint64_t clock_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* CPU time of this thread: on a shared box, the figure per CPU second
 * says what the code costs when the thread has the core. */
static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct sched_impair *make(const char *words, uint32_t max_held)
{
	char err[256], buf[512];
	char *argv[32];
	int argc = 0;
	snprintf(buf, sizeof(buf), "%s", words);
	for (char *w = strtok(buf, " "); w && argc < 32; w = strtok(NULL, " "))
		argv[argc++] = w;
	struct sched_impair_config c;
	struct sched_impair *m = NULL;
	if (sched_impair_parse(&c, argc, argv, err, sizeof(err)) ||
	    !(m = sched_impair_create(max_held, 1, err, sizeof(err))) || sched_impair_set(m, &c, err, sizeof(err))) {
		fprintf(stderr, "impair: %s: %s\n", words, err);
		exit(2);
	}
	return m;
}

/* One burst in at now, what is due out; returns packets released. */
static uint32_t step(struct sched_impair *m, uint64_t now, uint32_t *held_max, uint64_t *late, uint64_t *n_late,
		     uint64_t late_cap)
{
	uint32_t bi[BURST], dropped[2 * BURST], dup[BURST], n_dup, out[256];
	uint32_t n = buffer_alloc(bi, BURST, -1);
	for (uint32_t i = 0; i < n; i++)
		buffer_get(bi[i])->current_length = 64;
	uint32_t d = sched_impair_enqueue(m, bi, n, now, dropped, dup, &n_dup);
	if (d)
		buffer_free(dropped, d);
	uint32_t held = sched_impair_held(m);
	if (held > *held_max)
		*held_max = held;
	uint32_t k, total = 0;
	while ((k = sched_impair_dequeue(m, now, out, 256)) != 0) {
		for (uint32_t i = 0; late && i < k && *n_late < late_cap; i++)
			late[(*n_late)++] = now - buffer_get(out[i])->timestamp_ns;
		buffer_free(out, k);
		total += k;
		if (k < 256)
			break;
	}
	return total;
}

/* The measured part, a function of its own for callgrind
 * (--toggle-collect=impair_bench_run): Ir / packets is the per-packet cost,
 * buffer alloc and free included. */
__attribute__((noinline)) uint64_t impair_bench_run(struct sched_impair *m, uint64_t packets, uint64_t now,
						    uint64_t gap, uint32_t *held_max);
uint64_t impair_bench_run(struct sched_impair *m, uint64_t packets, uint64_t now, uint64_t gap, uint32_t *held_max)
{
	for (uint64_t p = 0; p < packets; p += BURST, now += gap)
		step(m, now, held_max, NULL, NULL, 0);
	return now;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "throughput";
	const char *cfg = "delay 10ms loss random 1% seed 1";
	uint64_t packets = 20000000, rate = 0, warm_packets = 2000000;
	double secs = 2;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--packets"))
			packets = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--rate"))
			rate = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--warm"))
			warm_packets = strtoull(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--config"))
			cfg = argv[i + 1];
		else {
			fprintf(stderr, "unknown option %s\n", argv[i]);
			return 2;
		}
	}
	bool lateness = !strcmp(mode, "lateness");
	if (!rate)
		rate = lateness ? 1000000 : 10000000;
	char err[256];
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 262144; /* 100K held at 10 Mpps * 10 ms, twice over */
	bc.data_size = 128;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "buffers: %s\n", err);
		return 2;
	}
	buffer_thread_register();
	struct sched_impair *m = make(cfg, 200000);
	uint32_t held_max = 0;
	if (!lateness) {
		uint64_t gap = BURST * 1000000000ull / rate, now = 1000000000ull;
		for (uint64_t p = 0; p < warm_packets; p += BURST, now += gap) /* warm: the wheel fills */
			step(m, now, &held_max, NULL, NULL, 0);
		uint64_t t0 = clock_ns(), c0 = cpu_ns();
		now = impair_bench_run(m, packets, now, gap, &held_max);
		double s = (double)(clock_ns() - t0) / 1e9, cs = (double)(cpu_ns() - c0) / 1e9;
		printf("mode=throughput config=\"%s\" offered_rate=%" PRIu64 " packets=%" PRIu64
		       " held_max=%u seconds=%.3f mpps=%.2f cpu_seconds=%.3f mpps_per_cpu_second=%.2f\n",
		       cfg, rate, packets, held_max, s, (double)packets / s / 1e6, cs, (double)packets / cs / 1e6);
	} else {
		uint64_t cap = (uint64_t)(secs * (double)rate) + 1000000, n_late = 0;
		uint64_t *late = malloc(cap * sizeof(*late));
		uint64_t t0 = clock_ns(), end = t0 + (uint64_t)(secs * 1e9), offered = 0;
		uint64_t warm = t0 + 200000000ull; /* 200 ms: the first departures come after 10 ms */
		for (uint64_t now = t0; now < end; now = clock_ns()) {
			uint64_t due = (now - t0) * rate / 1000000000ull;
			uint64_t *l = now > warm ? late : NULL;
			if (offered + BURST <= due) {
				step(m, now, &held_max, l, &n_late, cap);
				offered += BURST;
			} else {
				uint32_t out[256], k;
				while ((k = sched_impair_dequeue(m, now, out, 256)) != 0) {
					for (uint32_t i = 0; l && i < k && n_late < cap; i++)
						late[n_late++] = now - buffer_get(out[i])->timestamp_ns;
					buffer_free(out, k);
				}
			}
		}
		qsort(late, n_late, sizeof(*late), cmp_u64);
		printf("mode=lateness config=\"%s\" offered_rate=%" PRIu64 " offered=%" PRIu64 " released=%" PRIu64
		       " held_max=%u lateness_ns_p50=%" PRIu64 " p99=%" PRIu64 " p999=%" PRIu64 " max=%" PRIu64 "\n",
		       cfg, rate, offered, n_late, held_max, n_late ? late[n_late / 2] : 0,
		       n_late ? late[n_late * 99 / 100] : 0, n_late ? late[n_late * 999 / 1000] : 0,
		       n_late ? late[n_late - 1] : 0);
		free(late);
	}
	sched_impair_destroy(m);
	buffer_thread_unregister();
	buffer_main_free();
	return 0;
}
