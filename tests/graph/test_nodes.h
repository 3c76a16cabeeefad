/* Test-only nodes for the engine suites: a source that emits numbered
 * packets, a classifier, a forwarder and sinks that record what they saw. */
#ifndef SLUICE_TESTS_GRAPH_TEST_NODES_H
#define SLUICE_TESTS_GRAPH_TEST_NODES_H

#include <check.h>
#include <stdio.h>
#include <string.h>

#include "graph/graph.h"

#define TN_MAX_SEEN (4u << 20)

/* Sequence number of a test packet, kept in the buffer's scratch area. */
static inline uint32_t tn_seq(uint32_t bi)
{
	uint32_t s;
	memcpy(&s, buffer_get(bi)->opaque, sizeof(s));
	return s;
}

static inline void tn_set_seq(uint32_t bi, uint32_t s)
{
	memcpy(buffer_get(bi)->opaque, &s, sizeof(s));
}

/* Source budget per thread index; burst per poll. */
struct tn_source {
	uint64_t budget[GRAPH_MAX_THREADS];
	uint64_t produced[GRAPH_MAX_THREADS];
	uint32_t burst;
	_Atomic uint32_t next_seq;
};
extern struct tn_source tn_source;
extern uint32_t tn_source_next; /* 0: tn-classify, 1: tn-forward */

/* What each sink saw, in order (single-threaded use). */
struct tn_sink_log {
	uint32_t n;
	uint32_t seq[TN_MAX_SEEN];
};
extern struct tn_sink_log *tn_sink_logs[3];

extern const struct node_reg tn_source_node; /* "tn-source" -> tn-classify */
extern const struct node_reg tn_classify_node; /* "tn-classify" -> tn-sink-a|b|c by seq % 3 */
extern const struct node_reg tn_forward_node;  /* "tn-forward" -> next 0 (tn-sink-a) */
extern const struct node_reg tn_sink_a_node, tn_sink_b_node, tn_sink_c_node;
extern const struct node_reg tn_bad_node; /* names a next node that does not exist */

/* A graph of the given regs plus error-drop, built on the calling thread. */
struct graph *tn_graph(const struct node_reg *const *regs, uint32_t n);

/* Initialise buffers (n per pool) or fail the test. */
void tn_buffers(uint32_t n);

#endif
