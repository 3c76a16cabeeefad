/* The peer of sluice-bench-hqos: DPDK's rte_sched doing the same work as
 * hqos_perf.c, through its public API only (ours; built by
 * bench/sched/hqos_run.sh with cc against Debian's libdpdk, never by meson).
 *
 * One port, one subport, N pipes (a power of two: rte_sched's rule), four
 * traffic classes used (TCs 0..3, strict priority, one queue each), rates
 * high enough that nothing is shaped (port, subport, pipes and TCs at the
 * port rate). The same traffic as the sluice side: INFLIGHT 64-byte
 * packets (mbufs) circulating, packet k to pipe k mod N, TC (k / N) mod 4;
 * each step enqueues a burst and dequeues a burst, and what leaves goes
 * back in the next step with the next (pipe, TC) of the round robin
 * written by rte_sched_port_pkt_write (the application's classification:
 * rte_sched is handed the pipe, where sluice looks its subscriber up).
 *
 *   sluice-peer-rte-sched EAL-ARGS -- --pipes N [--secs S] [--warmup S] [--burst B] [--inflight P]
 *
 * Prints "pipes=N packets=P seconds=S cpu_seconds=C mpps=M cycles_per_packet=X"
 * (per second of the thread's CPU time, as the sluice side).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_sched.h>

static unsigned n_pipes = 1, burst = 32, inflight = 4096;
static double secs = 3, warmup = 1;
static unsigned next_k;

static double now_s(clockid_t c)
{
	struct timespec t;
	clock_gettime(c, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void classify(struct rte_sched_port *port, struct rte_mbuf *m)
{
	unsigned k = next_k++;
	rte_sched_port_pkt_write(port, m, 0, k % n_pipes, (k / n_pipes) % 4, 0, RTE_COLOR_GREEN);
}

static int parse(int argc, char **argv)
{
	for (int i = 0; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--pipes"))
			n_pipes = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--secs"))
			secs = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--warmup"))
			warmup = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--burst"))
			burst = (unsigned)atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--inflight"))
			inflight = (unsigned)atoi(argv[i + 1]);
		else
			return -1;
	}
	return n_pipes && !(n_pipes & (n_pipes - 1)) && burst >= 1 && burst <= 256 && inflight >= burst ? 0 : -1;
}

/* Queue size per TC: room for all of a pipe's packets in one queue (strict
 * priority lets the lowest TC collect them: inflight / pipes, at least
 * 16), a power of two; sluice's queue limit is above it too. */
static uint16_t queue_size(void)
{
	unsigned per = inflight / n_pipes + 1, q = 16;
	while (q < per)
		q <<= 1;
	return (uint16_t)q;
}

static struct rte_sched_port *build(void)
{
	const uint64_t rate = 50000000000ull; /* bytes/s: 400 Gbit/s, as the sluice side */
	static struct rte_sched_subport_profile_params sp;
	static struct rte_sched_pipe_params pp;
	sp.tb_rate = rate;
	sp.tb_size = 1 << 20;
	pp.tb_rate = rate;
	pp.tb_size = 1 << 20;
	for (int tc = 0; tc < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; tc++) { /* TCs unused: no queue, no rate */
		sp.tc_rate[tc] = rate;
		pp.tc_rate[tc] = tc < 4 || tc == RTE_SCHED_TRAFFIC_CLASS_BE ? rate : 0;
	}
	sp.tc_period = pp.tc_period = 10;
	pp.tc_ov_weight = 1;
	for (int q = 0; q < RTE_SCHED_BE_QUEUES_PER_PIPE; q++)
		pp.wrr_weights[q] = 1;
	struct rte_sched_port_params port = {
		.name = "bench",
		.socket = 0,
		.rate = rate,
		.mtu = 1522,
		.frame_overhead = RTE_SCHED_FRAME_OVERHEAD_DEFAULT,
		.n_subports_per_port = 1,
		.subport_profiles = &sp,
		.n_subport_profiles = 1,
		.n_max_subport_profiles = 1,
		.n_pipes_per_subport = n_pipes,
	};
	struct rte_sched_subport_params sub = {
		.n_pipes_per_subport_enabled = n_pipes,
		.pipe_profiles = &pp,
		.n_pipe_profiles = 1,
		.n_max_pipe_profiles = 1,
	};
	uint16_t qs = queue_size();
	for (int tc = 0; tc < RTE_SCHED_TRAFFIC_CLASSES_PER_PIPE; tc++)
		sub.qsize[tc] = tc < 4 || tc == RTE_SCHED_TRAFFIC_CLASS_BE ? qs : 0;
	struct rte_sched_port *p = rte_sched_port_config(&port);
	if (!p || rte_sched_subport_config(p, 0, &sub, 0)) {
		fprintf(stderr, "rte_sched port or subport config failed\n");
		return NULL;
	}
	for (unsigned i = 0; i < n_pipes; i++)
		if (rte_sched_pipe_config(p, 0, i, 0)) {
			fprintf(stderr, "pipe %u config failed\n", i);
			return NULL;
		}
	return p;
}

int main(int argc, char **argv)
{
	int used = rte_eal_init(argc, argv);
	if (used < 0 || parse(argc - used - 1, argv + used + 1)) {
		fprintf(stderr, "usage: sluice-peer-rte-sched EAL-ARGS -- --pipes N (power of 2) [--secs S] "
				"[--warmup S] [--burst B] [--inflight P]\n");
		return 2;
	}
	struct rte_mempool *mp = rte_pktmbuf_pool_create("bench", inflight + 1024, 0, 0, 256, 0);
	struct rte_sched_port *port = mp ? build() : NULL;
	if (!port)
		return 1;
	struct rte_mbuf **pool = calloc(inflight, sizeof(*pool)), *out[256];
	for (unsigned i = 0; i < inflight; i++) {
		pool[i] = rte_pktmbuf_alloc(mp);
		if (!pool[i] || !rte_pktmbuf_append(pool[i], 64))
			return 1;
		classify(port, pool[i]);
	}
	unsigned queued = inflight - burst;
	for (unsigned i = 0; i < queued; i += burst) {
		unsigned n = queued - i < burst ? queued - i : burst;
		if (rte_sched_port_enqueue(port, pool + i, n) != (int)n) {
			fprintf(stderr, "dropped while filling\n");
			return 1;
		}
	}
	int n_in = (int)burst;
	memcpy(out, pool + queued, burst * sizeof(*out));
	uint64_t packets = 0;
	double t_end = now_s(CLOCK_MONOTONIC) + warmup, t_start = 0, cpu_start = 0;
	int measuring = 0;
	for (;;) {
		for (int rep = 0; rep < 64; rep++) {
			if (rte_sched_port_enqueue(port, out, (uint32_t)n_in) != n_in) {
				fprintf(stderr, "dropped\n");
				return 1;
			}
			n_in = rte_sched_port_dequeue(port, out, burst);
			for (int i = 0; i < n_in; i++)
				classify(port, out[i]);
			packets += measuring ? (uint64_t)n_in : 0;
		}
		double t = now_s(CLOCK_MONOTONIC);
		if (t < t_end)
			continue;
		if (measuring)
			break;
		measuring = 1;
		t_start = t;
		cpu_start = now_s(CLOCK_THREAD_CPUTIME_ID);
		t_end = t + secs;
	}
	double cpu = now_s(CLOCK_THREAD_CPUTIME_ID) - cpu_start, elapsed = now_s(CLOCK_MONOTONIC) - t_start;
	printf("pipes=%u packets=%llu seconds=%.3f cpu_seconds=%.3f mpps=%.3f cycles_per_packet=%.1f\n", n_pipes,
	       (unsigned long long)packets, elapsed, cpu, (double)packets / cpu / 1e6,
	       cpu * (double)rte_get_tsc_hz() / (double)packets);
	rte_sched_port_free(port);
	rte_eal_cleanup();
	return 0;
}
