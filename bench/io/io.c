/* io: sluice's forwarding path between two null interfaces on one core, the
 * same work as `dpdk-testpmd --forward-mode=io` between two net_null ports.
 *
 *   nul0 (null, rx-recycle) -> null-input -> ethernet-input -> l2-xconnect
 *     -> interface-output -> null-tx -> nul1 (frees)
 * and the same from nul1 to nul0 (two one-way cross-connects), every
 * registered node in the graph, as the daemon has it. The null driver's
 * rx-recycle mode allocates a full burst of fresh buffers per poll and
 * touches no packet data, as net_null does; its tx frees them.
 *
 * Rate: the graph runs in graph_main_loop on the calling thread (pinned with
 * --cpu); a sampler thread, asleep but twice, reads both interfaces'
 * TX-packets after --warmup and again --seconds later. Printed: packets
 * forwarded per second by the one core (both directions), as testpmd's
 * Rx-pps of port 0 plus port 1.
 *
 * Burst: --burst N (1..256, default 256 = a frame) sets both interfaces'
 * rx burst (the engine's per-interface `rx-burst`, as `set interface
 * rx-burst`): each poll of each interface takes at most N packets, as
 * testpmd's --burst=N does per rte_eth_rx_burst call. bench/io/run.sh
 * sweeps testpmd's burst for its best on the box, then runs this program
 * built -march=corei7 (Debian's DPDK baseline) at that burst (the matched
 * row), at 256 (each side at its own burst), built -march=native at that
 * burst (the ISA row), and under callgrind at that burst. Built against an
 * engine from before the per-interface rx burst (BEFORE=REV), it polls a
 * whole frame and refuses any other --burst (exit 3).
 *
 * Instructions: with --polls N it runs N loops of graph_main_poll inside
 * io_polls() and prints the packets forwarded; run it under
 * `valgrind --tool=callgrind --toggle-collect=io_polls` and divide the
 * collected Ir by those packets (bench/io/run.sh does).
 *
 * Usage: sluice-bench-io [--seconds S] [--warmup S] [--cpu N] [--no-huge]
 *                        [--polls N] [--size BYTES] [--burst N] [--dtrace SNAPLEN]
 *
 * --rx-mode polling|adaptive (default polling, as testpmd polls): both
 * queues' rx mode (drivers/device_rx_mode.c). adaptive: the thread may
 * block once the queues stay empty for 200 us, which under this bench's
 * full load they never are; what it measures is what adaptive costs a
 * thread that is never idle (a cycle-counter read per poll of each queue).
 *
 * --dtrace SNAPLEN runs the polls with the dispatch trace on (every record
 * to /dev/null) and prints its records and drops: the per-record cost.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "drivers/device.h"
#include "graph/graph.h"

struct opts {
	double seconds, warmup;
	int cpu;
	bool no_huge;
	uint64_t polls;
	const char *size;
	uint32_t burst;
	uint32_t dtrace; /* --dtrace SNAPLEN: the dispatch trace on, to /dev/null */
	bool adaptive;   /* --rx-mode adaptive */
};

static struct device *nul[2];

#ifdef DEV_RX_BURST_MAX
#define IO_BURST_MAX DEV_RX_BURST_MAX
/* Both interfaces take at most n packets per poll. */
static int set_burst(uint32_t n)
{
	return dev_set_rx_burst(nul[0], n) || dev_set_rx_burst(nul[1], n);
}
#else
/* An engine from before the per-interface rx burst (BEFORE=REV builds this
 * file against older revisions): it always polls a whole frame. */
#define IO_BURST_MAX FRAME_SIZE
static int set_burst(uint32_t n)
{
	if (n == FRAME_SIZE)
		return 0;
	fprintf(stderr, "io: this engine polls a whole frame (%u) and has no rx burst to set\n", FRAME_SIZE);
	exit(3);
}
#endif

#ifdef DEV_RX_ADAPTIVE_NS
/* Both queues' rx mode, and whether the thread may block (it spins in
 * polling mode, as the daemon's `cpu { rx-mode polling }` makes it). */
static void set_rx_mode(struct graph_config *cfg, bool adaptive)
{
	dev_rx_mode_set_default(adaptive ? DEV_RX_MODE_ADAPTIVE : DEV_RX_MODE_POLLING);
	cfg->idle_mode = adaptive ? GRAPH_IDLE_SLEEP : GRAPH_IDLE_POLL;
}
#else
/* An engine from before rx modes: it polls, and has no adaptive mode. */
static void set_rx_mode(struct graph_config *cfg, bool adaptive)
{
	if (adaptive) {
		fprintf(stderr, "io: this engine has no rx modes\n");
		exit(3);
	}
	cfg->idle_mode = GRAPH_IDLE_POLL;
}
#endif

static uint64_t forwarded(void)
{
	uint64_t n = 0;
	for (int i = 0; i < 2; i++) {
		struct dev_counters c;
		dev_counters_get(nul[i], &c);
		n += c.tx_packets;
	}
	return n;
}

struct sampler {
	double warmup, seconds;
	uint64_t n0, n1, t0, t1;
	atomic_bool stop;
};

static void sleep_s(double s)
{
	struct timespec d = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	sleep_s(s->warmup);
	s->t0 = time_now_ns();
	s->n0 = forwarded();
	sleep_s(s->seconds);
	s->t1 = time_now_ns();
	s->n1 = forwarded();
	atomic_store(&s->stop, true);
	return NULL;
}

/* The region callgrind collects: N loops of the main thread. */
__attribute__((noinline)) static uint64_t io_polls(struct graph *g, uint64_t n)
{
	uint64_t pkts = 0;
	for (uint64_t i = 0; i < n; i++)
		pkts += graph_main_poll(g);
	return pkts;
}

static void usage(void)
{
	fprintf(stderr, "usage: sluice-bench-io [--seconds S] [--warmup S] [--cpu N] [--no-huge] [--polls N] "
			"[--dtrace SNAPLEN] [--rx-mode polling|adaptive] "
			"[--size BYTES] [--burst 1..%u]\n", IO_BURST_MAX);
	exit(2);
}

/* 1..IO_BURST_MAX, whole: anything else is a usage error, not a silently
 * different burst. */
static uint32_t burst_arg(const char *v)
{
	char *end;
	unsigned long n = strtoul(v, &end, 10);
	if (*v < '0' || *v > '9' || *end || n < 1 || n > IO_BURST_MAX)
		usage();
	return (uint32_t)n;
}

/* The per-record cost: every node's input recorded (snaplen bytes each)
 * into the rings, written to /dev/null by the writer thread. */
static int dtrace_on(struct graph *g, uint32_t snaplen)
{
	char err[256];
	struct graph_dtrace_params p = { .max = GRAPH_DTRACE_MAX, .snaplen = snaplen, .mark_node = -1,
					 .file = fopen("/dev/null", "w"), .path = "/dev/null" };
	if (graph_dtrace_start(g, &p, err, sizeof(err))) {
		fprintf(stderr, "io: dispatch trace: %s\n", err);
		return -1;
	}
	return 0;
}

static void dtrace_report(struct graph *g)
{
	struct graph_dtrace_status st;
	graph_dtrace_stop(g);
	graph_dtrace_status(g, &st);
	printf("io: dtrace records %llu dropped %llu written %llu\n", (unsigned long long)st.claimed,
	       (unsigned long long)st.dropped, (unsigned long long)st.written);
}

static void parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .seconds = 5, .warmup = 2, .cpu = -1, .size = "64", .burst = IO_BURST_MAX };
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--no-huge")) {
			o->no_huge = true;
			continue;
		}
		if (i + 1 >= argc)
			usage();
		const char *v = argv[++i];
		if (!strcmp(a, "--seconds"))
			o->seconds = atof(v);
		else if (!strcmp(a, "--warmup"))
			o->warmup = atof(v);
		else if (!strcmp(a, "--cpu"))
			o->cpu = atoi(v);
		else if (!strcmp(a, "--polls"))
			o->polls = strtoull(v, NULL, 10);
		else if (!strcmp(a, "--size"))
			o->size = v;
		else if (!strcmp(a, "--burst"))
			o->burst = burst_arg(v);
		else if (!strcmp(a, "--dtrace"))
			o->dtrace = (uint32_t)strtoul(v, NULL, 10);
		else if (!strcmp(a, "--rx-mode") && (!strcmp(v, "polling") || !strcmp(v, "adaptive")))
			o->adaptive = !strcmp(v, "adaptive");
		else
			usage();
	}
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256];
	parse(argc, argv, &o);
	if (o.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		/* The sampler inherits this; it wakes only twice. */
		if (sched_setaffinity(0, sizeof(set), &set)) {
			perror("sched_setaffinity");
			return 1;
		}
	}
	struct buffer_config bc;
	buffer_config_default(&bc);
	if (o.no_huge)
		bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "io: %s\n", err);
		return 1;
	}
	struct graph_config cfg;
	graph_config_default(&cfg);
	set_rx_mode(&cfg, o.adaptive);
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	if (!g || graph_add_registered(g, err, sizeof(err)) || graph_build(g, err, sizeof(err)) ||
	    dev_graph_attach(g, err, sizeof(err))) {
		fprintf(stderr, "io: graph: %s\n", err);
		return 1;
	}
	const char *words[] = { "rx-recycle", "rx-size", o.size };
	for (int i = 0; i < 2; i++) {
		char name[8];
		snprintf(name, sizeof(name), "nul%d", i);
		nul[i] = dev_create(name, "null", words, 3, err, sizeof(err));
		if (!nul[i]) {
			fprintf(stderr, "io: %s\n", err);
			return 1;
		}
	}
	if (dev_set_xconnect(nul[0], nul[1]) || dev_set_xconnect(nul[1], nul[0]) ||
	    set_burst(o.burst) ||
	    dev_set_admin_up(nul[0], true) || dev_set_admin_up(nul[1], true)) {
		fprintf(stderr, "io: cannot set up the cross-connect\n");
		return 1;
	}
	printf("io: nul0 <-> nul1 l2-xconnect, null rx-recycle %s bytes, burst %u, rx-mode %s, %s\n", o.size, o.burst,
	       o.adaptive ? "adaptive" : "polling",
	       o.no_huge ? "4 KB pages" : "hugepages when available (see the buffers line)");

	if (o.polls) {
		/* Warm caches and frame pools outside the collected region. */
		for (int i = 0; i < 1000; i++)
			graph_main_poll(g);
		if (o.dtrace && dtrace_on(g, o.dtrace))
			return 1;
		uint64_t pkts = io_polls(g, o.polls);
		printf("io: polls %llu packets %llu\n", (unsigned long long)o.polls, (unsigned long long)pkts);
		if (o.dtrace)
			dtrace_report(g);
	} else {
		struct sampler s = { .warmup = o.warmup, .seconds = o.seconds };
		pthread_t tid;
		if (pthread_create(&tid, NULL, sampler_main, &s)) {
			fprintf(stderr, "io: cannot start the sampler\n");
			return 1;
		}
		graph_main_loop(g, &s.stop);
		pthread_join(tid, NULL);
		double secs = (double)(s.t1 - s.t0) / 1e9;
		printf("io: %.3f s, %llu packets, %.2f Mpps\n", secs, (unsigned long long)(s.n1 - s.n0),
		       (double)(s.n1 - s.n0) / secs / 1e6);
	}
	dev_graph_detach(g);
	graph_destroy(g);
	dev_delete_all();
	buffer_main_free();
	return 0;
}
