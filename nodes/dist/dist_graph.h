/* The distributor in the graph (nodes/dist/dist_graph.c): the flow tag of
 * a packet, attaching a distributor (sched/dist/dist.h, the library) to the
 * graph, draining and detaching it, and the hooks the distributor nodes
 * and the stage in front of them (sched's class queues) use.
 *
 * Thread-safety: attach, drain, detach and the setters are control calls
 * (drain on thread 0 at shutdown); dist_attached and dist_graph_type_fn
 * are read by the datapath.
 */
#ifndef SLUICE_NODES_DIST_GRAPH_H
#define SLUICE_NODES_DIST_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "sched/dist/dist.h"

struct buffer;
struct graph;

/* Flow tag of a packet: the NIC's RSS hash when the buffer has one
 * (BUFFER_F_FLOW_HASH), else the Toeplitz hash (default key) of its IPv4 or
 * IPv6 4-tuple (TCP, UDP; the 2-tuple for other protocols and fragments),
 * or of its MAC addresses when it is not IP. Stores the software hash in
 * flow_hash with BUFFER_F_FLOW_HASH set, and the tag in flow_tag. */
uint16_t dist_buffer_tag(struct buffer *b);

/* Make d the graph's distributor: every input node's arc to ethernet-input
 * now leads to `distributor`, distributor-flush polls on thread 0, and
 * handoff-input on each worker thread (graph threads 1..n_workers, which
 * must be running). Returns 0 or a negative errno with a message in err. */
int dist_graph_attach(struct graph *g, struct dist *d, char *err, size_t errlen);

/* The attached distributor, or NULL (the distributor node then passes
 * packets straight to ethernet-input). */
struct dist *dist_attached(void);

/* Test hook: the distributor node asks fn for each packet's type (NULL,
 * the default: all atomic, as for any traffic nothing classified). Control
 * path, with the datapath parked or not yet running. */
typedef uint8_t(dist_type_fn_t)(const struct buffer *b);
void dist_graph_set_type_fn(dist_type_fn_t *fn);

/* The hook set above, for the distributor node (NULL: none). */
dist_type_fn_t *dist_graph_type_fn(void);

/* A stage on thread 0 that holds packets in front of the distributor
 * (sched's class queues, nodes/sched/sched_io.h). dist_graph_drain leaves its
 * input node polling and waits for held() to reach 0 as well;
 * dist_graph_detach calls release(g), which frees what the stage still
 * holds (counting it under its own reason) and returns how many. */
struct dist_front {
	const char *node;
	uint64_t (*held)(void);
	uint64_t (*release)(struct graph *g);
};

/* Register the front stage (NULL: none). Control thread. */
void dist_graph_set_front(const struct dist_front *f);

/* On thread 0 at shutdown, workers still running: stop thread 0's other
 * inputs and run its loop until every packet taken (and every packet the
 * front stage holds) is complete or timeout_ns passes. Returns the packets
 * still outstanding. */
uint64_t dist_graph_drain(struct graph *g, struct dist *d, uint64_t timeout_ns);

/* After graph_workers_stop: free what no worker received (counted as
 * DIST_DROP_SHUTDOWN), restore the arcs and detach. Returns the packets
 * freed. The caller frees d. */
uint64_t dist_graph_detach(struct graph *g, struct dist *d);

#endif
