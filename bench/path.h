/* What bench/ip4/path.c and bench/ip6/path.c share: the whole forwarding
 * path on one core, fed by an input node that writes a prebuilt frame into
 * fresh buffers and patches in the next of a ring of precomputed
 * destinations (the family's part: path_patch), counted out of nul1. */
#ifndef SLUICE_BENCH_PATH_H
#define SLUICE_BENCH_PATH_H

#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "drivers/device.h"
#include "graph/graph.h"

/* The source's state: rx_if the interface its packets arrive on. */
struct path_source {
	uint32_t next, vector, rx_if;
	uint64_t produced;
};

/* One poll of the source: a vector of fresh buffers, each frame_bytes of
 * frame with destination k patched in by patch (k the ring's next, ring a
 * power of two). Always inlined, so patch is a direct call the compiler
 * inlines too and the generator's cost stays a copy and a few stores. */
static inline __attribute__((always_inline)) uint32_t
path_source_poll(struct node_runtime *rt, struct path_source *s, const uint8_t *frame, uint32_t frame_bytes,
		 uint32_t ring, void (*patch)(uint8_t *p, uint32_t k))
{
	uint32_t bi[FRAME_SIZE];
	uint32_t n = buffer_alloc(bi, s->vector, -1);
	uint32_t k = s->next;
	for (uint32_t i = 0; i < n; i++, k = (k + 1) & (ring - 1)) {
		struct buffer *b = buffer_get(bi[i]);
		b->current_data = 0;
		b->current_length = (uint16_t)frame_bytes;
		b->flags = 0;
		b->rx_if = s->rx_if;
		uint8_t *p = buffer_data(b);
		memcpy(p, frame, frame_bytes);
		patch(p, k);
	}
	s->next = k;
	s->produced += n;
	node_enqueue(rt, 0, bi, n);
	return n;
}

/* The source node NAME (an input node into ethernet-input), its function
 * source_fn (the callgrind tables name it), polling path_source_poll on
 * STATE (a struct with frame, s) with PATCH. */
#define PATH_SOURCE_DEFINE(NAME, STATE, FRAME_BYTES_, RING, PATCH)                                          \
	static uint32_t source_fn(struct node_runtime *rt, struct frame *f)                                 \
	{                                                                                                   \
		(void)f;                                                                                    \
		return path_source_poll(rt, &(STATE).s, (STATE).frame, FRAME_BYTES_, RING, PATCH);          \
	}                                                                                                   \
	static const struct node_reg source_node = {                                                        \
		.name = NAME,                                                                               \
		.type = NODE_TYPE_INPUT,                                                                    \
		.fn = source_fn,                                                                            \
		.n_next = 1,                                                                                \
		.next_nodes = { "ethernet-input" },                                                         \
	};                                                                                                  \
	NODE_REGISTER(source_node)

/* The region callgrind collects (--toggle-collect=NAME): n loops of the
 * main thread. */
#define PATH_POLLS_DEFINE(name)                                                                             \
	__attribute__((noinline)) static uint64_t name(struct graph *g, uint64_t n)                         \
	{                                                                                                   \
		uint64_t pkts = 0;                                                                          \
		for (uint64_t i = 0; i < n; i++)                                                            \
			pkts += graph_main_poll(g);                                                         \
		return pkts;                                                                                \
	}

static inline uint64_t path_forwarded(struct device *d)
{
	struct dev_counters c;
	dev_counters_get(d, &c);
	return c.tx_packets;
}

/* This thread on cpu (< 0: anywhere). 0 or -1 (errno set). */
static inline int path_pin(int cpu)
{
	if (cpu < 0)
		return 0;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/* Buffers (4 KB pages when no_huge) and the whole registered graph in poll
 * mode, attached; then nul0 and nul1 (null driver), up. NULL on failure,
 * *what naming the step and err the reason. */
static inline struct graph *path_graph_up(bool no_huge, struct device **in, struct device **out, const char **what,
					  char *err, size_t errlen)
{
	struct buffer_config bc;
	buffer_config_default(&bc);
	if (no_huge)
		bc.page_size = 4096;
	*what = "buffers";
	if (buffer_main_init(&bc, err, errlen))
		return NULL;
	struct graph_config cfg;
	graph_config_default(&cfg);
	cfg.idle_mode = GRAPH_IDLE_POLL;
	*what = "graph";
	struct graph *g = graph_create(&cfg, err, errlen);
	if (!g || graph_add_registered(g, err, errlen) || graph_build(g, err, errlen) || dev_graph_attach(g, err, errlen))
		return NULL;
	*what = "interfaces";
	*in = dev_create("nul0", "null", NULL, 0, err, errlen);
	*out = *in ? dev_create("nul1", "null", NULL, 0, err, errlen) : NULL;
	if (!*in || !*out)
		return NULL;
	if (dev_set_admin_up(*in, true) || dev_set_admin_up(*out, true)) {
		snprintf(err, errlen, "cannot bring them up");
		return NULL;
	}
	return g;
}

/* The graph, the family's state (family_free), the interfaces and the
 * buffers gone. */
static inline void path_graph_down(struct graph *g, void (*family_free)(void))
{
	dev_graph_detach(g);
	graph_destroy(g);
	family_free();
	dev_delete_all();
	buffer_main_free();
}

#endif
