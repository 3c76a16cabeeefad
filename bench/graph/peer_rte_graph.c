/* The peer of sluice-bench-graph --loops: rte_graph on the same seven
 * topologies (topos.h), for callgrind's instructions per object beside
 * sluice's. dpdk-test graph_perf_autotest gives the timed figures, but it
 * runs for a fixed time on two lcores and its node functions have no
 * symbols in Debian's binary, so nothing there can be counted per object;
 * this harness, ours, built by run.sh with cc against Debian's libdpdk,
 * does the autotest's work through the public rte_graph API:
 *   source  reserves its share of RTE_GRAPH_BURST_SIZE objects (or of one,
 *           for the 1-object topology) in each next's stream and puts it
 *           back without writing a pointer (rte_node_next_stream_get, _put);
 *   worker  with one next moves its stream (rte_node_next_stream_move);
 *           with several walks each next's share in fours while the count
 *           left is a multiple of four, else one, two or two plus one
 *           (rte_node_enqueue_x4, _x1, _x2), the last next also taking the
 *           rounding remainder (rte_node_enqueue);
 *   sink    returns its count.
 * Node statistics are on (RTE_LIBRTE_GRAPH_STATS in Debian's build): the
 * walk reads the TSC around every node call, as in the autotest.
 *
 *   sluice-peer-rte-graph EAL-ARGS -- --loops N [--only TOPOLOGY]
 *
 * For every topology: 64 walks to warm up (streams grow to what two
 * sources need), then N walks inside peer_walks, which a run under
 * `valgrind --tool=callgrind --toggle-collect=peer_walks` counts alone.
 * Prints "loops: TOPOLOGY N loops, X objects through the sinks, T ns of
 * thread CPU time per object", X and T over the N walks only, as
 * sluice-bench-graph --loops does.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_graph.h>
#include <rte_graph_worker.h>
#include <rte_lcore.h>

#include "topos.h"

#define WARMUP_WALKS 64
#define MAX_NODES (2 * MAX_ENDS + MAX_STAGES * MAX_WIDTH)

/* What a node's init copies into node->ctx: its next count, the share of
 * each next, and its topology's burst (sources). */
struct peer_ctx {
	uint8_t n_next;
	uint8_t pct[MAX_OUT];
	uint16_t burst;
};
_Static_assert(sizeof(struct peer_ctx) <= RTE_NODE_CTX_SZ, "fits rte_node's ctx");

/* Per clone id, filled before rte_graph_create runs the inits. */
static struct {
	rte_node_t id;
	struct peer_ctx ctx;
} cfg[MAX_NODES];
static unsigned n_cfg;

static int peer_init(const struct rte_graph *graph, struct rte_node *node)
{
	(void)graph;
	for (unsigned i = 0; i < n_cfg; i++)
		if (cfg[i].id == node->id) {
			memcpy(node->ctx, &cfg[i].ctx, sizeof(cfg[i].ctx));
			return 0;
		}
	return -1;
}

static uint16_t peer_source(struct rte_graph *graph, struct rte_node *node, void **objs, uint16_t nb_objs)
{
	const struct peer_ctx *c = (const struct peer_ctx *)node->ctx;
	(void)objs;
	(void)nb_objs;
	for (uint8_t k = 0; k < c->n_next; k++) {
		uint16_t n = (uint16_t)(c->pct[k] * c->burst / 100);
		rte_node_next_stream_get(graph, node, k, n);
		rte_node_next_stream_put(graph, node, k, n);
	}
	return c->burst;
}

/* One next's share, as the autotest's worker hands it on. */
static inline void peer_share(struct rte_graph *graph, struct rte_node *node, rte_edge_t next, void **objs,
			      uint16_t n)
{
	while (n) {
		switch (n & 3) {
		case 0:
			rte_node_enqueue_x4(graph, node, next, objs[0], objs[1], objs[2], objs[3]);
			objs += 4;
			n -= 4;
			break;
		case 1:
			rte_node_enqueue_x1(graph, node, next, objs[0]);
			objs += 1;
			n -= 1;
			break;
		case 2:
			rte_node_enqueue_x2(graph, node, next, objs[0], objs[1]);
			objs += 2;
			n -= 2;
			break;
		default:
			rte_node_enqueue_x2(graph, node, next, objs[0], objs[1]);
			rte_node_enqueue_x1(graph, node, next, objs[2]);
			objs += 3;
			n -= 3;
			break;
		}
	}
}

static uint16_t peer_worker(struct rte_graph *graph, struct rte_node *node, void **objs, uint16_t nb_objs)
{
	const struct peer_ctx *c = (const struct peer_ctx *)node->ctx;
	if (c->n_next == 1) {
		rte_node_next_stream_move(graph, node, 0);
		return nb_objs;
	}
	uint16_t done = 0;
	rte_edge_t k = 0;
	for (; k < c->n_next; k++) {
		uint16_t n = (uint16_t)(c->pct[k] * nb_objs / 100);
		peer_share(graph, node, k, objs + done, n);
		done = (uint16_t)(done + n);
	}
	if (done != nb_objs)
		rte_node_enqueue(graph, node, (rte_edge_t)(k - 1), objs + done, (uint16_t)(nb_objs - done));
	return nb_objs;
}

static uint16_t peer_sink(struct rte_graph *graph, struct rte_node *node, void **objs, uint16_t nb_objs)
{
	(void)graph;
	(void)node;
	(void)objs;
	return nb_objs;
}

static struct rte_node_register peer_source_reg = {
	.name = "sluice_peer_source",
	.flags = RTE_NODE_SOURCE_F,
	.process = peer_source,
	.init = peer_init,
};
RTE_NODE_REGISTER(peer_source_reg);

static struct rte_node_register peer_worker_reg = {
	.name = "sluice_peer_worker",
	.process = peer_worker,
	.init = peer_init,
};
RTE_NODE_REGISTER(peer_worker_reg);

static struct rte_node_register peer_sink_reg = {
	.name = "sluice_peer_sink",
	.process = peer_sink,
	.init = peer_init,
};
RTE_NODE_REGISTER(peer_sink_reg);

__attribute__((noinline)) void peer_walks(struct rte_graph *graph, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		rte_graph_walk(graph);
}

/* Clone base as "<base>-t<topo>-<name>"; its full name into names. */
static rte_node_t clone(const char *base, unsigned topo, const char *name, char names[][RTE_NODE_NAMESIZE],
			unsigned *n_names)
{
	char suffix[RTE_NODE_NAMESIZE / 2];
	snprintf(suffix, sizeof(suffix), "t%u-%s", topo, name);
	rte_node_t id = rte_node_clone(rte_node_from_name(base), suffix);
	if (id == RTE_NODE_ID_INVALID) {
		fprintf(stderr, "peer: cannot clone %s as %s\n", base, suffix);
		exit(1);
	}
	snprintf(names[*n_names], RTE_NODE_NAMESIZE, "%s", rte_node_id_to_name(id));
	cfg[n_cfg].id = id;
	memset(&cfg[n_cfg].ctx, 0, sizeof(cfg[n_cfg].ctx));
	(*n_names)++;
	n_cfg++;
	return id;
}

/* Point id's edges at targets with their shares (zero shares skipped). */
static void edges(rte_node_t id, const rte_node_t *targets, const uint8_t *pct, unsigned n)
{
	struct peer_ctx *c = NULL;
	for (unsigned i = 0; i < n_cfg; i++)
		if (cfg[i].id == id)
			c = &cfg[i].ctx;
	const char *names[MAX_OUT];
	for (unsigned k = 0; k < n; k++) {
		if (!pct[k])
			continue;
		names[c->n_next] = rte_node_id_to_name(targets[k]);
		c->pct[c->n_next++] = pct[k];
	}
	if (rte_node_edge_update(id, 0, names, c->n_next) != c->n_next) {
		fprintf(stderr, "peer: cannot add the edges of %s\n", rte_node_id_to_name(id));
		exit(1);
	}
}

static int run(unsigned ti, uint64_t loops)
{
	const struct topo *t = &topos[ti];
	static char names[MAX_NODES][RTE_NODE_NAMESIZE];
	unsigned n_names = 0;
	rte_node_t src[MAX_ENDS], snk[MAX_ENDS], stage[MAX_STAGES][MAX_WIDTH];
	char name[NAME_LEN];
	unsigned first_snk;
	n_cfg = 0;
	for (unsigned i = 0; i < t->n_src; i++) {
		snprintf(name, sizeof(name), "source-%u", i);
		src[i] = clone("sluice_peer_source", ti, name, names, &n_names);
		cfg[n_cfg - 1].ctx.burst = t->burst;
	}
	for (unsigned s = 0; s < t->n_stages; s++)
		for (unsigned j = 0; j < t->width[s]; j++) {
			snprintf(name, sizeof(name), "worker-%u-%u", s, j);
			stage[s][j] = clone("sluice_peer_worker", ti, name, names, &n_names);
		}
	first_snk = n_names;
	for (unsigned i = 0; i < t->n_snk; i++) {
		snprintf(name, sizeof(name), "sink-%u", i);
		snk[i] = clone("sluice_peer_sink", ti, name, names, &n_names);
	}
	for (unsigned i = 0; i < t->n_src; i++)
		edges(src[i], stage[0], t->src[i], t->width[0]);
	for (unsigned s = 0; s < t->n_stages; s++)
		for (unsigned j = 0; j < t->width[s]; j++) {
			bool last = s + 1 == t->n_stages;
			edges(stage[s][j], last ? snk : stage[s + 1], last ? t->snk[j] : t->edge[s][j],
			      last ? t->n_snk : t->width[s + 1]);
		}
	const char *patterns[MAX_NODES];
	for (unsigned i = 0; i < n_names; i++)
		patterns[i] = names[i];
	char gname[RTE_GRAPH_NAMESIZE];
	snprintf(gname, sizeof(gname), "sluice_peer_t%u", ti);
	struct rte_graph_param prm = { .socket_id = SOCKET_ID_ANY, .nb_node_patterns = (uint16_t)n_names,
				       .node_patterns = patterns };
	rte_graph_t gid = rte_graph_create(gname, &prm);
	if (gid == RTE_GRAPH_ID_INVALID) {
		fprintf(stderr, "peer: %s: rte_graph_create failed (%d)\n", t->name, rte_errno);
		return -1;
	}
	struct rte_graph *graph = rte_graph_lookup(gname);
	for (unsigned i = 0; i < WARMUP_WALKS; i++) /* not in peer_walks: callgrind leaves it out */
		rte_graph_walk(graph);
	uint64_t before = 0, after = 0;
	for (unsigned i = first_snk; i < n_names; i++)
		before += rte_graph_node_get_by_name(gname, names[i])->total_objs;
	struct timespec c0, c1;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	peer_walks(graph, loops);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	for (unsigned i = first_snk; i < n_names; i++)
		after += rte_graph_node_get_by_name(gname, names[i])->total_objs;
	double cpu_ns = (double)(c1.tv_sec - c0.tv_sec) * 1e9 + (double)(c1.tv_nsec - c0.tv_nsec);
	printf("loops: %s %" PRIu64 " loops, %" PRIu64 " objects through the sinks, %.4f ns of thread CPU time "
	       "per object\n", t->name, loops, after - before, after > before ? cpu_ns / (double)(after - before) : 0.0);
	rte_graph_destroy(gid);
	return after > before ? 0 : -1;
}

int main(int argc, char **argv)
{
	int used = rte_eal_init(argc, argv);
	if (used < 0)
		return fprintf(stderr, "rte_eal_init failed\n"), 1;
	uint64_t loops = 0;
	const char *only = NULL;
	for (int i = used + 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--loops") == 0)
			loops = strtoull(argv[i + 1], NULL, 10);
		else if (strcmp(argv[i], "--only") == 0)
			only = argv[i + 1];
		else
			loops = 0, i = argc;
	}
	if (!loops)
		return fprintf(stderr, "usage: sluice-peer-rte-graph EAL-ARGS -- --loops N [--only TOPOLOGY]\n"), 2;
	int rc = 0;
	for (unsigned i = 0; i < N_TOPOS; i++)
		if (!only || strcmp(only, topos[i].name) == 0)
			rc |= run(i, loops) ? 1 : 0;
	fflush(stdout);
	rte_eal_cleanup();
	return rc;
}
