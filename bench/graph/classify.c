/* classify: the per-packet cost of a node that reads one header byte and
 * picks one of two next nodes, at vector 256.
 *
 * Graph: classify-source (input, 256 fixed buffers per call) -> classify ->
 * classify-sink-0 / classify-sink-1 (discard). The byte is the first byte of
 * the packet; bit 0 chooses the next node, and the buffers hold a
 * pseudo-random mix so the choice is not predictable.
 *
 * Run it under `valgrind --tool=callgrind --toggle-collect=classify_node`:
 * the collected Ir divided by the packets printed here is instructions per
 * packet (bench/graph/run.sh does exactly that). Natively it also prints TSC
 * ticks per packet from the engine's clocks.
 *
 * Usage: sluice-bench-classify [--calls N] [--no-huge]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"

enum { CLASSIFY_NEXT_0, CLASSIFY_NEXT_1, CLASSIFY_N_NEXT };

static uint32_t src_indices[FRAME_SIZE];

static uint32_t source_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)frame;
	node_trace_input(rt, src_indices, FRAME_SIZE);
	uint32_t *to = node_next_slots(rt, 0, FRAME_SIZE);
	memcpy(to, src_indices, sizeof(src_indices));
	node_next_commit(rt, 0, FRAME_SIZE);
	return FRAME_SIZE;
}

/* Where packet bi goes: bit 0 of its first byte. */
static inline uint32_t classify_one(const uint8_t *base, const uint8_t *data, uint64_t stride, uint32_t bi)
{
	uint64_t off = bi * stride;
	int16_t cd = ((const struct buffer *)(base + off))->current_data;
	return data[off + cd] & 1;
}

/* One store per packet: the index goes straight into the open frame of the
 * chosen next node, through a write pointer per next kept in a 2-entry
 * array indexed by the decision. The buffer geometry is read into locals
 * first: stores into frames could otherwise alias buffer_main and force a
 * reload per packet. Four packets per turn to spread the loop's own cost.
 * Measured with callgrind: 12.8 instructions per packet (gcc 12 -O2,
 * x86-64-v3, 256 per call): 11 per packet (load the index, copy it for the
 * multiply by the run-time stride, load current_data, add, load the byte,
 * mask, then load/store/bump/store the write pointer), 1.25 of loop, 0.55
 * of per-call slot opening and commits. */
__attribute__((noinline)) static uint32_t classify_node(struct node_runtime *rt, struct frame *frame)
{
	const uint32_t n = frame->n_vectors;
	const uint32_t *from = frame->buffers;
	uint32_t *start[CLASSIFY_N_NEXT] = {
		node_next_slots(rt, CLASSIFY_NEXT_0, n),
		node_next_slots(rt, CLASSIFY_NEXT_1, n),
	};
	uint32_t *to[CLASSIFY_N_NEXT] = { start[0], start[1] };
	const uint8_t *base = buffer_main.base;
	const uint64_t stride = buffer_main.stride;
	const uint8_t *data = base + sizeof(struct buffer) + BUFFER_HEADROOM;

	uint32_t i = 0;
	for (; i + 4 <= n; i += 4) {
		uint32_t b0 = from[i], b1 = from[i + 1], b2 = from[i + 2], b3 = from[i + 3];
		*to[classify_one(base, data, stride, b0)]++ = b0;
		*to[classify_one(base, data, stride, b1)]++ = b1;
		*to[classify_one(base, data, stride, b2)]++ = b2;
		*to[classify_one(base, data, stride, b3)]++ = b3;
	}
	for (; i < n; i++) {
		uint32_t b0 = from[i];
		*to[classify_one(base, data, stride, b0)]++ = b0;
	}
	node_next_commit(rt, CLASSIFY_NEXT_0, (uint32_t)(to[0] - start[0]));
	node_next_commit(rt, CLASSIFY_NEXT_1, (uint32_t)(to[1] - start[1]));
	return n;
}

static uint32_t sink_fn(struct node_runtime *rt, struct frame *frame)
{
	(void)rt;
	return frame->n_vectors;
}

static const struct node_reg source_reg = {
	.name = "classify-source",
	.type = NODE_TYPE_INPUT,
	.fn = source_fn,
	.n_next = 1,
	.next_nodes = { "classify" },
};

static const struct node_reg classify_reg = {
	.name = "classify",
	.fn = classify_node,
	.n_next = CLASSIFY_N_NEXT,
	.next_nodes = {
		[CLASSIFY_NEXT_0] = "classify-sink-0",
		[CLASSIFY_NEXT_1] = "classify-sink-1",
	},
};

static const struct node_reg sink0_reg = { .name = "classify-sink-0", .fn = sink_fn };
static const struct node_reg sink1_reg = { .name = "classify-sink-1", .fn = sink_fn };

int main(int argc, char **argv)
{
	char err[256];
	uint64_t calls = 4096;
	bool no_huge = false;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--no-huge") == 0)
			no_huge = true;
		else if (strcmp(argv[i], "--calls") == 0 && i + 1 < argc)
			calls = strtoull(argv[++i], NULL, 10);
		else {
			fprintf(stderr, "usage: sluice-bench-classify [--calls N] [--no-huge]\n");
			return 2;
		}
	}
	struct buffer_config bc;
	buffer_config_default(&bc);
	bc.buffers_per_numa = 4096;
	if (no_huge)
		bc.page_size = 4096;
	if (buffer_main_init(&bc, err, sizeof(err))) {
		fprintf(stderr, "classify: %s\n", err);
		return 1;
	}
	struct graph_config cfg;
	graph_config_default(&cfg);
	cfg.idle_mode = GRAPH_IDLE_POLL;
	struct graph *g = graph_create(&cfg, err, sizeof(err));
	const struct node_reg *regs[] = { &source_reg, &classify_reg, &sink0_reg, &sink1_reg };
	for (size_t i = 0; g && i < ARRAY_LEN(regs); i++) {
		if (graph_add_node(g, regs[i], err, sizeof(err)) < 0) {
			fprintf(stderr, "classify: %s\n", err);
			return 1;
		}
	}
	if (!g || graph_build(g, err, sizeof(err))) {
		fprintf(stderr, "classify: %s\n", err);
		return 1;
	}
	if (buffer_alloc(src_indices, FRAME_SIZE, -1) != FRAME_SIZE) {
		fprintf(stderr, "classify: cannot allocate %d buffers\n", FRAME_SIZE);
		return 1;
	}
	/* A fixed pseudo-random pattern of first bytes (xorshift), with the
	 * packet start moved a little so current_data matters. */
	uint32_t x = 2463534242u;
	for (uint32_t i = 0; i < FRAME_SIZE; i++) {
		struct buffer *b = buffer_get(src_indices[i]);
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		b->current_data = (int16_t)(i % 3) * 2;
		b->current_length = 64;
		memset(buffer_data(b), 0, 64);
		buffer_data(b)[0] = (uint8_t)(0x44 | (x & 1));
	}
	for (uint64_t c = 0; c < calls; c++)
		graph_main_poll(g);

	uint32_t ci = (uint32_t)graph_node_index(g, "classify");
	struct node_stats st;
	graph_node_stats(g, 0, ci, &st);
	printf("classify: packets %llu calls %llu next0 %llu next1 %llu ticks/packet %.2f\n",
	       (unsigned long long)st.vectors, (unsigned long long)st.calls,
	       (unsigned long long)graph_arc_packets(g, ci, CLASSIFY_NEXT_0),
	       (unsigned long long)graph_arc_packets(g, ci, CLASSIFY_NEXT_1),
	       st.vectors ? (double)st.clocks / (double)st.vectors : 0.0);
	graph_destroy(g);
	buffer_free(src_indices, FRAME_SIZE);
	buffer_thread_unregister();
	buffer_main_free();
	return 0;
}
