/* graph-perf: sluice's engine on the topologies of DPDK's graph_perf_autotest.
 *
 * Each topology is a few sources, stages of pass-through nodes and sinks,
 * with the share of objects every node sends to each of its next nodes. A
 * source hands on its burst's slots without filling them (no allocation and
 * no store per object, as rte_graph's test source hands on stream slots it
 * never fills); a
 * stage with one next node forwards its frame whole (rte_graph's test worker
 * moves its stream: rte_node_next_stream_move); a sink discards.
 *
 * A stage with several next nodes gives each next its share of the frame as
 * a contiguous run (the last next also takes the rounding remainder, as
 * rte_graph's test worker does). How it hands a run on is --stage:
 *   objects  (default) the peer's work: its worker walks each run calling
 *            rte_node_enqueue_x4 while the count left is a multiple of
 *            four, else _x1 or _x2 (each checks the next's room and stores
 *            the pointers) rather than copying the run at once; sluice's
 *            stage makes the same walk with node_enqueue_x4 and
 *            node_enqueue_x1 (two _x1 for the peer's _x2);
 *   runs     one node_enqueue per run (a memcpy of the run into the next's
 *            frame): less work than the peer on the fan-out topologies, so
 *            its figures are a labelled second row, never the matched one.
 *
 * The graph runs in graph_main_loop on the calling thread (pinned with
 * --cpu); a sampler thread, mostly asleep, reads the counters after --warmup
 * and again --seconds later, then stops the loop (rte_graph's test: 0.3 s,
 * then 1 s). Printed per node: calls, objects, objects/s and TSC ticks per
 * call. Our ticks per call count from the end of the previous node's call
 * (the engine's `show runtime` clocks), so they include the dispatch between
 * nodes; rte_graph's test counts only inside the call.
 *
 * Usage: sluice-bench-graph [--stage objects|runs] [--seconds S] [--warmup S]
 *                           [--cpu N] [--no-huge] [--tsv FILE] [--only NAME]
 *                           [--loops N]
 * --loops N runs N loops untimed instead (for callgrind: run_topo_loops).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graph/graph.h"

#include "topos.h"

_Static_assert(MAX_OUT >= MAX_WIDTH && MAX_OUT >= MAX_ENDS, "a node can reach a whole stage");

/* A bench node: its registration and the shares of its next nodes. */
struct bench_node {
	struct node_reg reg;
	char name[NAME_LEN];
	char next_name[MAX_OUT][NAME_LEN];
	uint8_t pct[MAX_OUT];
	uint16_t burst;
	uint8_t is_sink;
};

/* Per-thread copy of what the node function reads. */
struct bench_rt {
	uint16_t n_next;
	uint16_t burst;
	uint8_t pct[MAX_OUT];
};

static int bench_init(struct node_runtime *rt)
{
	const struct bench_node *bn = container_of(rt->reg, struct bench_node, reg);
	struct bench_rt *d = rt->data;
	d->n_next = bn->reg.n_next;
	d->burst = bn->burst;
	memcpy(d->pct, bn->pct, sizeof(d->pct));
	return 0;
}

/* Each next's share of the burst, reserved in its open frame and handed
 * on without writing an index, as the peer's source reserves stream slots
 * (rte_node_next_stream_get) and puts them back (_put) without writing a
 * pointer: no work per object on either side. The slots hold whatever the
 * frame's memory held; nothing here reads a buffer through them (stages
 * copy indices, sinks drop frames), as nothing in the peer dereferences
 * its objects. */
static uint32_t source_fn(struct node_runtime *rt, struct frame *frame)
{
	const struct bench_rt *d = rt->data;
	uint32_t total = 0;
	(void)frame;
	for (uint16_t k = 0; k < d->n_next; k++) {
		uint32_t n = (uint32_t)d->pct[k] * d->burst / 100;
		uint32_t *to = node_next_slots(rt, k, n);
		node_trace_input(rt, to, n); /* one branch: nothing traces here */
		node_next_commit(rt, k, n);
		total += n;
	}
	return total;
}

/* --loops: source-0 stops graph_main_loop after loops_left polls, so the
 * counted loops take the timed loops' path (graph_main_poll would add a
 * fresh clock reading and a fence per loop). Sluice's side only: three
 * instructions a loop that the peer does not pay. */
static uint64_t loops_left;
static atomic_bool loops_stop;
static bool count_loops;

static uint32_t source_counted_fn(struct node_runtime *rt, struct frame *frame)
{
	if (--loops_left == 0)
		atomic_store_explicit(&loops_stop, true, memory_order_relaxed);
	return source_fn(rt, frame);
}

/* --stage runs: each next's share handed on as one run. */
static uint32_t stage_runs_fn(struct node_runtime *rt, struct frame *frame)
{
	const struct bench_rt *d = rt->data;
	uint32_t n = frame->n_vectors;
	if (d->n_next == 1) {
		node_forward_frame(rt, 0, frame);
		return n;
	}
	uint32_t off = 0;
	uint16_t last = (uint16_t)(d->n_next - 1);
	for (uint16_t k = 0; k < last; k++) {
		uint32_t c = d->pct[k] * n / 100;
		node_enqueue(rt, k, frame->buffers + off, c);
		off += c;
	}
	node_enqueue(rt, last, frame->buffers + off, n - off);
	return n;
}

/* k objects from bi to next as graph_perf_autotest's worker hands a run
 * on: fours while the count left is a multiple of four, a single object
 * while it is one more than one, two (as two singles: sluice has no _x2,
 * the peer's rte_node_enqueue_x2) while two or three more. */
static inline void stage_run_x4(struct node_runtime *rt, uint16_t next, const uint32_t *bi, uint32_t k)
{
	while (k) {
		switch (k & 3) {
		case 0:
			node_enqueue_x4(rt, bi, next, next, next, next);
			bi += 4;
			k -= 4;
			break;
		case 1:
			node_enqueue_x1(rt, next, bi[0]);
			bi += 1;
			k -= 1;
			break;
		default: /* 2 or 3: the peer's x2 */
			node_enqueue_x1(rt, next, bi[0]);
			node_enqueue_x1(rt, next, bi[1]);
			bi += 2;
			k -= 2;
			break;
		}
	}
}

/* --stage objects: the same shares, objects handed on in fours and ones
 * as graph_perf_autotest's worker does. */
static uint32_t stage_objects_fn(struct node_runtime *rt, struct frame *frame)
{
	const struct bench_rt *d = rt->data;
	uint32_t n = frame->n_vectors;
	if (d->n_next == 1) {
		node_forward_frame(rt, 0, frame);
		return n;
	}
	const uint32_t *bi = frame->buffers;
	uint32_t off = 0;
	uint16_t last = (uint16_t)(d->n_next - 1);
	for (uint16_t k = 0; k < last; k++) {
		uint32_t c = d->pct[k] * n / 100;
		stage_run_x4(rt, k, bi + off, c);
		off += c;
	}
	stage_run_x4(rt, last, bi + off, n - off);
	return n;
}

static node_fn_t *stage_fn = stage_objects_fn;

static uint32_t sink_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)rt;
	return frame->n_vectors;
}

/* ---- building a topology ---- */

struct built {
	struct graph *g;
	struct bench_node *nodes;
	uint32_t n_nodes;
};

static struct bench_node *node_new(struct built *b, const char *name)
{
	struct bench_node *bn = &b->nodes[b->n_nodes++];
	memset(bn, 0, sizeof(*bn));
	snprintf(bn->name, NAME_LEN, "%s", name);
	bn->reg.name = bn->name;
	bn->reg.type = NODE_TYPE_INTERNAL;
	bn->reg.fn = stage_fn;
	bn->reg.init = bench_init;
	bn->reg.runtime_data_size = sizeof(struct bench_rt);
	return bn;
}

static void node_next(struct bench_node *bn, const char *target, uint8_t pct)
{
	if (!pct)
		return;
	uint16_t k = bn->reg.n_next++;
	snprintf(bn->next_name[k], NAME_LEN, "%s", target);
	bn->reg.next_nodes[k] = bn->next_name[k];
	bn->pct[k] = pct;
}

static void stage_name(char *buf, uint32_t s, uint32_t j)
{
	snprintf(buf, NAME_LEN, "worker-%u-%u", s, j);
}

static int topo_build(const struct topo *t, struct built *b, char *err, size_t errlen)
{
	char name[NAME_LEN];
	uint32_t max_nodes = t->n_src + t->n_snk + MAX_STAGES * MAX_WIDTH;
	b->nodes = calloc(max_nodes, sizeof(*b->nodes));
	b->n_nodes = 0;
	if (!b->nodes) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->n_src; i++) {
		snprintf(name, NAME_LEN, "source-%u", i);
		struct bench_node *bn = node_new(b, name);
		bn->reg.type = NODE_TYPE_INPUT;
		bn->reg.fn = count_loops && i == 0 ? source_counted_fn : source_fn;
		bn->burst = t->burst;
		for (uint32_t j = 0; j < t->width[0]; j++) {
			stage_name(name, 0, j);
			node_next(bn, name, t->src[i][j]);
		}
	}
	for (uint32_t s = 0; s < t->n_stages; s++) {
		for (uint32_t j = 0; j < t->width[s]; j++) {
			stage_name(name, s, j);
			struct bench_node *bn = node_new(b, name);
			bool last = s + 1 == t->n_stages;
			uint32_t n_to = last ? t->n_snk : t->width[s + 1];
			for (uint32_t k = 0; k < n_to; k++) {
				if (last)
					snprintf(name, NAME_LEN, "sink-%u", k);
				else
					stage_name(name, s + 1, k);
				node_next(bn, name, last ? t->snk[j][k] : t->edge[s][j][k]);
			}
		}
	}
	for (uint32_t i = 0; i < t->n_snk; i++) {
		snprintf(name, NAME_LEN, "sink-%u", i);
		struct bench_node *bn = node_new(b, name);
		bn->reg.fn = sink_fn;
		bn->is_sink = 1;
	}
	struct graph_config cfg;
	graph_config_default(&cfg);
	cfg.idle_mode = GRAPH_IDLE_POLL;
	b->g = graph_create(&cfg, err, errlen);
	if (!b->g)
		return -ENOMEM;
	for (uint32_t i = 0; i < b->n_nodes; i++) {
		int rv = graph_add_node(b->g, &b->nodes[i].reg, err, errlen);
		if (rv < 0)
			return rv;
	}
	return graph_build(b->g, err, errlen);
}

static void topo_free(struct built *b)
{
	graph_destroy(b->g);
	free(b->nodes);
	memset(b, 0, sizeof(*b));
}

/* ---- measuring ---- */

/* Samples the counters while thread 0 runs graph_main_loop, as rte_graph's
 * test samples its worker: after the warm-up, again after the measured
 * interval, then stops the loop. */
struct sampler {
	struct built *b;
	double warmup, seconds;
	struct node_stats *s0, *s1;
	uint64_t t0, t1;
	atomic_bool stop;
};

static void sleep_s(double s)
{
	struct timespec d = { (time_t)s, (long)((s - (double)(time_t)s) * 1e9) };
	while (nanosleep(&d, &d) && errno == EINTR)
		;
}

static void snapshot(struct built *b, struct node_stats *st, uint64_t *t)
{
	*t = cpu_ticks();
	for (uint32_t i = 0; i < b->n_nodes; i++)
		graph_node_stats(b->g, 0, (uint32_t)graph_node_index(b->g, b->nodes[i].name), &st[i]);
}

static void *sampler_main(void *arg)
{
	struct sampler *s = arg;
	sleep_s(s->warmup);
	snapshot(s->b, s->s0, &s->t0);
	sleep_s(s->seconds);
	snapshot(s->b, s->s1, &s->t1);
	atomic_store(&s->stop, true);
	return NULL;
}

struct opts {
	double seconds, warmup;
	uint64_t loops; /* --loops: that many loops, untimed (callgrind) */
	int cpu;
	bool no_huge;
	const char *tsv;
	const char *only;
	const char *stage;
};

/* --loops N: after WARMUP_LOOPS loops (frame pools grow), N loops inside
 * bench_loops and no sampler thread, so that a run under callgrind
 * (--toggle-collect=bench_loops) is the same instructions every time;
 * prints the objects through the sinks over those N, which the collected
 * Ir is divided by (peer_rte_graph.c does the same for rte_graph), and the
 * thread's CPU time per object over them (natively: on a loaded box a
 * steadier figure than objects per second of wall time, never the row's). */
#define WARMUP_LOOPS 64

static void run_loops(struct graph *g, uint64_t n)
{
	loops_left = n;
	atomic_store(&loops_stop, false);
	graph_main_loop(g, &loops_stop);
}

__attribute__((noinline)) void bench_loops(struct graph *g, uint64_t n)
{
	run_loops(g, n);
}

static uint64_t sink_objects(struct built *b)
{
	uint64_t through = 0;
	for (uint32_t i = 0; i < b->n_nodes; i++) {
		struct node_stats st;
		graph_node_stats_total(b->g, 0, (uint32_t)graph_node_index(b->g, b->nodes[i].name), &st);
		if (b->nodes[i].is_sink)
			through += st.vectors;
	}
	return through;
}

static int run_topo_loops(const struct topo *t, const struct opts *o, struct built *b)
{
	run_loops(b->g, WARMUP_LOOPS);
	uint64_t before = sink_objects(b);
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	bench_loops(b->g, o->loops);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	uint64_t through = sink_objects(b) - before;
	double cpu_ns = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	printf("loops: %s %llu loops, %llu objects through the sinks, %.4f ns of thread CPU time per object\n",
	       t->name, (unsigned long long)o->loops, (unsigned long long)through,
	       through ? cpu_ns / (double)through : 0.0);
	topo_free(b);
	return 0;
}

static int run_topo(const struct topo *t, const struct opts *o, FILE *tsv)
{
	char err[256];
	struct built b = { 0 };
	if (topo_build(t, &b, err, sizeof(err))) {
		fprintf(stderr, "graph-perf: %s: %s\n", t->name, err);
		if (b.g)
			topo_free(&b);
		return -1;
	}
	if (o->loops)
		return run_topo_loops(t, o, &b);
	double hz = cpu_ticks_per_second();
	struct node_stats *s0 = calloc(b.n_nodes, sizeof(*s0));
	struct node_stats *s1 = calloc(b.n_nodes, sizeof(*s1));
	struct sampler smp = { .b = &b, .warmup = o->warmup, .seconds = o->seconds, .s0 = s0, .s1 = s1 };
	pthread_t tid;
	if (!s0 || !s1 || pthread_create(&tid, NULL, sampler_main, &smp)) {
		free(s0);
		free(s1);
		topo_free(&b);
		return -1;
	}
	graph_main_loop(b.g, &smp.stop);
	pthread_join(tid, NULL);
	double secs = (double)(smp.t1 - smp.t0) / hz;

	printf("\n%s (%s, %u object%s per source call), %.3f s\n", t->name, t->shape, t->burst,
	       t->burst == 1 ? "" : "s", secs);
	printf("  %-14s %14s %16s %10s %12s %12s\n", "node", "calls", "objs", "objs/call", "Mobjs/s",
	       "ticks/call");
	double sink_rate = 0;
	for (uint32_t i = 0; i < b.n_nodes; i++) {
		uint64_t calls = s1[i].calls - s0[i].calls;
		uint64_t objs = s1[i].vectors - s0[i].vectors;
		uint64_t clocks = s1[i].clocks - s0[i].clocks;
		double rate = (double)objs / secs;
		double per_call = calls ? (double)clocks / (double)calls : 0;
		if (b.nodes[i].is_sink)
			sink_rate += rate;
		printf("  %-14s %14llu %16llu %10.1f %12.2f %12.1f\n", b.nodes[i].name, (unsigned long long)calls,
		       (unsigned long long)objs, calls ? (double)objs / (double)calls : 0.0, rate / 1e6, per_call);
		if (tsv)
			fprintf(tsv, "sluice\t%s\t%s\t%llu\t%llu\t%.3f\t%.1f\n", t->name, b.nodes[i].name,
				(unsigned long long)calls, (unsigned long long)objs, rate / 1e6, per_call);
	}
	printf("  through the sinks: %.2f M objs/s\n", sink_rate / 1e6);
	free(s0);
	free(s1);
	topo_free(&b);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: sluice-bench-graph [--stage objects|runs] [--seconds S] [--warmup S] "
			"[--cpu N] [--no-huge] [--tsv FILE] [--only TOPOLOGY] [--loops N]\n");
}

static int parse(int argc, char **argv, struct opts *o)
{
	o->seconds = 1.0;
	o->warmup = 0.3;
	o->cpu = -1;
	o->stage = "objects";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (strcmp(a, "--no-huge") == 0) {
			o->no_huge = true;
			continue;
		}
		if (!v) {
			usage();
			return -1;
		}
		if (strcmp(a, "--seconds") == 0)
			o->seconds = atof(v);
		else if (strcmp(a, "--warmup") == 0)
			o->warmup = atof(v);
		else if (strcmp(a, "--cpu") == 0)
			o->cpu = atoi(v);
		else if (strcmp(a, "--tsv") == 0)
			o->tsv = v;
		else if (strcmp(a, "--only") == 0)
			o->only = v;
		else if (strcmp(a, "--stage") == 0)
			o->stage = v;
		else if (strcmp(a, "--loops") == 0)
			count_loops = (o->loops = strtoull(v, NULL, 10)) > 0;
		else {
			usage();
			return -1;
		}
		i++;
	}
	if (strcmp(o->stage, "runs") == 0)
		stage_fn = stage_runs_fn;
	else if (strcmp(o->stage, "objects") != 0) {
		usage();
		return -1;
	}
	return o->seconds > 0 ? 0 : -1;
}

int main(int argc, char **argv)
{
	struct opts o = { 0 };
	char err[256];
	if (parse(argc, argv, &o))
		return 2;
	if (o.cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(o.cpu, &set);
		/* The sampler inherits this; it wakes only twice per topology. */
		if (sched_setaffinity(0, sizeof(set), &set))
			fprintf(stderr, "graph-perf: cannot pin to cpu %d: %s\n", o.cpu, strerror(errno));
	}
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	if (o.no_huge)
		bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "graph-perf: %s\n", err);
		return 1;
	}
	struct buffer_pool_stats ps;
	buffer_pool_stats(0, &ps);
	printf("sluice graph-perf: stage %s, buffers %s, frames in malloc'd memory (4 KB pages), cpu %d, "
	       "%.2f GHz TSC\n", o.stage, ps.hugepages ? "on 2 MB hugepages" : "on 4 KB pages", o.cpu,
	       cpu_ticks_per_second() / 1e9);
	FILE *tsv = NULL;
	if (o.tsv && !(tsv = fopen(o.tsv, "a"))) {
		fprintf(stderr, "graph-perf: %s: %s\n", o.tsv, strerror(errno));
		return 1;
	}
	int rc = 0;
	for (size_t i = 0; i < ARRAY_LEN(topos); i++) {
		if (o.only && strcmp(o.only, topos[i].name) != 0)
			continue;
		if (run_topo(&topos[i], &o, tsv))
			rc = 1;
		fflush(stdout);
	}
	if (tsv)
		fclose(tsv);
	buffer_thread_unregister();
	buffer_main_free();
	return rc;
}
