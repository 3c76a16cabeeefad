/* graph_perf_autotest's seven topologies, shared by sluice's bench
 * (perf.c) and its rte_graph peer harness (peer_rte_graph.c), so both
 * build the same graphs from one table. Plain C: the peer compiles it
 * against libdpdk without sluice's headers.
 */
#ifndef SLUICE_BENCH_GRAPH_TOPOS_H
#define SLUICE_BENCH_GRAPH_TOPOS_H

#include <stdint.h>

#define MAX_STAGES 5
#define MAX_WIDTH 4 /* nodes per stage */
#define MAX_ENDS 4  /* sources or sinks */
#define MAX_OUT 4   /* next nodes per bench node */
#define NAME_LEN 32

/* One topology, named like the rte_graph test case it reproduces. Shares are
 * percentages written from -> to. */
struct topo {
	const char *name;
	const char *shape;
	uint16_t burst; /* objects a source produces per call */
	uint8_t n_src, n_snk, n_stages;
	uint8_t width[MAX_STAGES];
	uint8_t src[MAX_ENDS][MAX_WIDTH];                /* source -> stage 0 node */
	uint8_t edge[MAX_STAGES][MAX_WIDTH][MAX_WIDTH];  /* (s, from) -> (s + 1, to) */
	uint8_t snk[MAX_WIDTH][MAX_ENDS];                /* last stage node -> sink */
};

#define CHAIN4 .n_stages = 4, .width = { 1, 1, 1, 1 }, \
	.edge = { { { 100 } }, { { 100 } }, { { 100 } } }
#define IDENTITY_4 { { 100 }, { 0, 100 }, { 0, 0, 100 }, { 0, 0, 0, 100 } }

static const struct topo topos[] = {
	{ .name = "graph_hr_4s_1n_1src_1snk", .shape = "1 src -> 4 stages -> 1 sink", .burst = 256,
	  .n_src = 1, .n_snk = 1, CHAIN4, .src = { { 100 } }, .snk = { { 100 } } },
	{ .name = "graph_hr_4s_1n_1src_1snk_brst_one", .shape = "same chain, 1 object per call", .burst = 1,
	  .n_src = 1, .n_snk = 1, CHAIN4, .src = { { 100 } }, .snk = { { 100 } } },
	{ .name = "graph_hr_4s_1n_2src_1snk", .shape = "2 src -> 4 stages -> 1 sink", .burst = 256,
	  .n_src = 2, .n_snk = 1, CHAIN4, .src = { { 100 }, { 100 } }, .snk = { { 100 } } },
	{ .name = "graph_hr_4s_1n_1src_2snk", .shape = "1 src -> 4 stages -> 2 sinks 50/50", .burst = 256,
	  .n_src = 1, .n_snk = 2, CHAIN4, .src = { { 100 } }, .snk = { { 50, 50 } } },
	{ .name = "graph_tree_4s_4n_1src_4snk", .shape = "tree 1-2-3-4, 4 sinks", .burst = 256,
	  .n_src = 1, .n_snk = 4, .n_stages = 4, .width = { 1, 2, 3, 4 },
	  .src = { { 100 } },
	  .edge = { { { 50, 50 } },
		    { { 33, 34, 33 }, { 33, 34, 33 } },
		    { { 25, 25, 25, 25 }, { 25, 25, 25, 25 }, { 25, 25, 25, 25 } } },
	  .snk = IDENTITY_4 },
	{ .name = "graph_reverse_tree_3s_4n_1src_1snk", .shape = "fan-out 4-3-2 stages, all-to-all, 1 sink",
	  .burst = 256, .n_src = 1, .n_snk = 1, .n_stages = 3, .width = { 4, 3, 2 },
	  .src = { { 25, 25, 25, 25 } },
	  .edge = { { { 33, 33, 34 }, { 33, 33, 34 }, { 33, 33, 34 }, { 33, 33, 34 } },
		    { { 50, 50 }, { 50, 50 }, { 50, 50 } } },
	  .snk = { { 100 }, { 100 } } },
	{ .name = "graph_parallel_tree_5s_4n_4src_4snk", .shape = "4 parallel chains of 5 stages",
	  .burst = 256, .n_src = 4, .n_snk = 4, .n_stages = 5, .width = { 4, 4, 4, 4, 4 },
	  .src = IDENTITY_4, .edge = { IDENTITY_4, IDENTITY_4, IDENTITY_4, IDENTITY_4 }, .snk = IDENTITY_4 },
};
#define N_TOPOS (sizeof(topos) / sizeof(topos[0]))

#endif
