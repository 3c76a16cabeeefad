/* The node author's API: what a node's file needs to declare a node and to
 * run it. A node registers itself from its own file (NODE_REGISTER), names
 * its next nodes, error strings and trace formatter; its function receives a
 * frame of buffer indices and enqueues them to next nodes in bulk, counts
 * errors, adds trace records, and asks which thread it runs on. Nothing
 * here builds, starts or inspects a graph: that is graph/graph.h, the
 * control API, which includes this header.
 *
 * A node function runs on one datapath thread at a time with its own
 * runtime (per-thread clone): it touches nothing shared per packet.
 */
#ifndef SLUICE_GRAPH_NODE_H
#define SLUICE_GRAPH_NODE_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "graph/buffer.h"
#include "base/util.h"

#define FRAME_SIZE 256
#define FRAME_SCALAR_SIZE 16
#define NODE_MAX_NEXT 32
#define NODE_TRACE_DETAIL_SIZE 40
#define GRAPH_MAX_THREADS 64

enum node_type {
	NODE_TYPE_INTERNAL = 0, /* runs when a frame is pending for it */
	NODE_TYPE_INPUT,        /* polled every loop on threads where it is enabled */
	NODE_TYPE_PROCESS,      /* runs on thread 0 when due; suspends itself */
};

enum node_state {
	NODE_STATE_POLLING = 0,
	NODE_STATE_DISABLED,
};

/* A vector of buffer indices in flight between two nodes. */
struct frame {
	struct frame *next; /* link in the target's pending list or the free list */
	uint16_t n_vectors;
	uint16_t flags;
	uint32_t reserved;
	uint8_t scalar[FRAME_SCALAR_SIZE];
	alignas(64) uint32_t buffers[FRAME_SIZE];
};

struct node_runtime;
struct graph;
struct graph_thread;

/* Internal nodes get a frame and return its vector count; input and process
 * nodes get NULL and return how many packets they produced (0: idle). */
typedef uint32_t(node_fn_t)(struct node_runtime *rt, struct frame *frame);

/* Format a node's trace detail (what it stored through node_trace_detail)
 * into buf; returns the snprintf-style length. */
typedef int(node_format_trace_fn_t)(char *buf, size_t len, const uint8_t *detail);

/* Per-thread initialisation after cloning; rt->data is zeroed before.
 * Returns 0 or a negative errno. */
typedef int(node_init_fn_t)(struct node_runtime *rt);

/* A node's static description, registered from its own file. */
struct node_reg {
	const char *name;
	enum node_type type;
	node_fn_t *fn;
	uint16_t n_next;
	const char *next_nodes[NODE_MAX_NEXT];
	uint16_t n_errors;
	const char *const *error_strings;
	node_format_trace_fn_t *format_trace;
	uint32_t runtime_data_size;
	node_init_fn_t *init;
	enum node_state default_state; /* input nodes only */
	const void *context;           /* the registering subsystem's own pointer (e.g. its driver) */
	/* Input nodes: the node arranges to be woken for everything it waits
	 * on (an fd given to graph_rx_watch, a kick of graph_thread_kick, a
	 * time given to graph_thread_wake_within) and calls
	 * graph_thread_stay_awake when it must be polled again, so a thread
	 * whose inputs all say so may block in epoll_wait (graph/sleep.c).
	 * Without it the thread backs off with growing sleeps instead. */
	bool can_sleep;
};

/* Link a registration into the binary's node list (objects holding nodes are
 * linked whole so that the constructor survives static linking). */
void node_registry_add(const struct node_reg *reg);
#define NODE_REGISTER(reg)                                                                    \
	static void __attribute__((constructor)) node_register_##reg(void)                    \
	{                                                                                     \
		node_registry_add(&(reg));                                                    \
	}

/* Look a registered node up by name; NULL when absent. */
const struct node_reg *node_registry_find(const char *name);
uint32_t node_registry_count(void);
const struct node_reg *node_registry_get(uint32_t i);

/* ---- features: a node placed on an arc between two existing nodes ---- */

/* Put node `node` on the arc from `from` to its next node `to` (a plugin's
 * node after ethernet-input on the IPv4 path: from "ethernet-input", to
 * "ip4-input"). When the graph is built, `from`'s next `to` leads to
 * `node` instead, and `node`'s own next `to` (it must name it among its
 * next_nodes) leads on to `to`. Several features on one arc run in the
 * order they registered: from -> first -> second -> to. The next index
 * `from` uses does not change, so its code needs no edit, and the rewiring
 * happens once, at build: a packet pays only for the node itself. A
 * feature is on or off per interface (b->rx_if; graph.h, "features per
 * interface", `set interface feature`): on for every interface unless
 * default_off. graph_build refuses a feature whose node or arc does not
 * exist, and a node that is a feature on two arcs. */
struct node_feature {
	const char *node;
	const char *from;
	const char *to;
	bool default_off; /* off on every interface until turned on for one */
};

/* From a constructor; see NODE_FEATURE_REGISTER. */
void node_feature_register(const struct node_feature *f);
#define NODE_FEATURE_REGISTER(f)                                                              \
	static void __attribute__((constructor)) node_feature_register_##f(void)              \
	{                                                                                     \
		node_feature_register(&(f));                                                  \
	}

/* ---- node templates ---- */

/* The i-th instance of a template: its name and the context its node gets
 * (node_reg.context); false past the last. Instances are only ever added. */
typedef bool(node_instance_fn_t)(uint32_t i, const char **name, const void **context);

/* One node per instance of something a layer below keeps a registry of
 * (nodes/device-input.c: "<driver>-input" for every registered driver), so
 * that a new instance gets its node without a line in the node's file. The
 * engine adds to the registry a copy of reg per instance, named
 * "<instance><suffix>" with the instance's context, whenever the registry
 * is read (node_registry_find/count/get, graph_add_registered) and the
 * provider names more instances than before. reg.name names the template
 * itself in messages; reg.context is replaced. */
struct node_template {
	struct node_reg reg;
	const char *suffix;
	node_instance_fn_t *instance;
};

void node_template_register(const struct node_template *t);
#define NODE_TEMPLATE_REGISTER(t)                                                             \
	static void __attribute__((constructor)) node_template_register_##t(void)             \
	{                                                                                     \
		node_template_register(&(t));                                                 \
	}

/* Per-thread, per-node state. Fields are the engine's: nodes use the inline
 * helpers below and may read thread_index, data and n_next. */
struct node_runtime {
	alignas(64) node_fn_t *fn;
	struct frame *pending_head;
	struct frame *pending_tail; /* open for appends while it has room */
	struct node_runtime **next; /* target runtime per next index, same thread */
	uint64_t *arc_packets;      /* packets sent per next index */
	struct graph_thread *thread;
	void *data; /* runtime_data_size bytes, per thread */
	uint32_t node_index;
	uint32_t error_base; /* global error index of this node's error 0 */
	uint16_t thread_index;
	uint16_t n_next;
	uint8_t state;
	uint8_t frame_taken; /* the node forwarded its input frame whole */
	uint8_t type;
	uint32_t trace_budget; /* input nodes: packets left to mark */
	uint64_t *error_counts; /* this thread's counters, indexed by global error */
	/* The speculative enqueue of node_enqueue_x1/_x4 (VPP keeps the same
	 * three in a node's locals): the open frame of next spec_next, written
	 * through spec_to up to spec_end while the next repeats. Its n_vectors
	 * and the arc's count catch up when the node enqueues anywhere else or
	 * its call returns (node_spec_close). spec_end NULL: nothing open. */
	uint32_t *spec_to;
	uint32_t *spec_end;
	uint16_t spec_next;
	/* runtime statistics, written by the owning thread only */
	alignas(64) uint64_t calls;
	uint64_t vectors;
	uint64_t suspends;
	uint64_t clocks;
	uint64_t next_run_ticks; /* process nodes: cpu_ticks() at which to run again */
	const struct node_reg *reg;
	struct graph *graph;
};

/* Engine entry points the inline helpers fall back to (out of line). */
struct frame *node_frame_open(struct node_runtime *target);
void node_trace_input_mark(struct node_runtime *rt, const uint32_t *bi, uint32_t n);

static inline void stat_add(uint64_t *p, uint64_t n)
{
	__atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

static inline uint64_t stat_read(const uint64_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

/* The speculative frame's slow paths (out of line). node_spec_flush
 * brings the open frame's count and the arc's up to date and forgets it;
 * node_spec_open makes `next` the open one with room for at least `room`
 * indices (<= FRAME_SIZE), opening a frame when its target's tail has
 * less, and returns where to write. */
void node_spec_flush(struct node_runtime *rt);
uint32_t *node_spec_open(struct node_runtime *rt, uint16_t next, uint32_t room);

/* Close the speculative frame, if any. The engine calls it when a node's
 * call returns; every other enqueue helper calls it first, so a node may
 * mix them freely. Code that enqueues with _x1/_x4 outside a node call (a
 * loop hook) calls it after its last one. */
static inline void node_spec_close(struct node_runtime *rt)
{
	if (rt->spec_end)
		node_spec_flush(rt);
}

/* node_enqueue without closing the speculative frame (the caller did). */
static inline void node_enqueue_open(struct node_runtime *rt, uint16_t next, const uint32_t *bi, uint32_t n)
{
	struct node_runtime *t = rt->next[next];
	rt->arc_packets[next] += n;
	while (n) {
		struct frame *f = t->pending_tail;
		if (unlikely(!f || f->n_vectors == FRAME_SIZE))
			f = node_frame_open(t);
		uint32_t k = MIN(n, (uint32_t)(FRAME_SIZE - f->n_vectors));
		memcpy(f->buffers + f->n_vectors, bi, k * sizeof(uint32_t));
		f->n_vectors = (uint16_t)(f->n_vectors + k);
		bi += k;
		n -= k;
	}
}

/* Append n buffer indices to next node `next`, in order, opening frames as
 * needed. Every index is taken. */
static inline void node_enqueue(struct node_runtime *rt, uint16_t next, const uint32_t *bi, uint32_t n)
{
	node_spec_close(rt);
	node_enqueue_open(rt, next, bi, n);
}

/* One buffer index to `next`. While consecutive calls name the same next
 * it is one compare, one store and a pointer bump (the speculative frame:
 * no per-object count, no lookup of the target); a different next closes
 * that frame and opens the new next's. For a node's function: see
 * node_spec_close for other callers. */
static inline void node_enqueue_x1(struct node_runtime *rt, uint16_t next, uint32_t bi)
{
	uint32_t *to = rt->spec_to;
	if (unlikely(next != rt->spec_next || to == rt->spec_end))
		to = node_spec_open(rt, next, 1);
	*to = bi;
	rt->spec_to = to + 1;
}

/* Four buffer indices bi[0..3] to next0..next3. When all four go to the
 * open speculative next with room for four it is four stores and one
 * bump; when all four go to one other next, that next is opened once with
 * room for four; otherwise each goes as node_enqueue_x1. Given the same
 * variable four times (four objects to one next, as rte_node_enqueue_x4),
 * the compiler folds the comparisons between them away. */
static inline void node_enqueue_x4(struct node_runtime *rt, const uint32_t *bi, uint16_t next0, uint16_t next1,
				   uint16_t next2, uint16_t next3)
{
	uint32_t b0 = bi[0], b1 = bi[1], b2 = bi[2], b3 = bi[3];
	if (likely(next0 == next1 && next0 == next2 && next0 == next3)) {
		uint32_t *to = rt->spec_to;
		if (unlikely(next0 != rt->spec_next || rt->spec_end - to < 4))
			to = node_spec_open(rt, next0, 4);
		to[0] = b0;
		to[1] = b1;
		to[2] = b2;
		to[3] = b3;
		rt->spec_to = to + 4;
		return;
	}
	node_enqueue_x1(rt, next0, b0);
	node_enqueue_x1(rt, next1, b1);
	node_enqueue_x1(rt, next2, b2);
	node_enqueue_x1(rt, next3, b3);
}

/* Slots for writing up to n indices straight into next's open frame
 * (n <= FRAME_SIZE). Write them, then call node_next_commit with how many
 * were used. Lets a node scatter packets over a few next nodes with one
 * store per packet. No _x1/_x4 between the two (they would write into the
 * same slots). */
static inline uint32_t *node_next_slots(struct node_runtime *rt, uint16_t next, uint32_t n)
{
	node_spec_close(rt);
	struct node_runtime *t = rt->next[next];
	struct frame *f = t->pending_tail;
	if (unlikely(!f || (uint32_t)(FRAME_SIZE - f->n_vectors) < n))
		f = node_frame_open(t);
	return f->buffers + f->n_vectors;
}

static inline void node_next_commit(struct node_runtime *rt, uint16_t next, uint32_t n_used)
{
	struct frame *f = rt->next[next]->pending_tail;
	f->n_vectors = (uint16_t)(f->n_vectors + n_used);
	rt->arc_packets[next] += n_used;
}

/* Enqueue each bi[i] to nexts[i], grouping runs of the same next. */
void node_enqueue_to_nexts(struct node_runtime *rt, const uint32_t *bi, const uint16_t *nexts, uint32_t n);

/* Hand the input frame on whole when every packet in it goes to `next`: no
 * copy. The frame then belongs to the next node. */
void node_forward_frame(struct node_runtime *rt, uint16_t next, struct frame *frame);

/* Global error index for this node's error `code`: store it in b->error
 * before sending the buffer to error-drop. */
static inline uint16_t node_error(const struct node_runtime *rt, uint16_t code)
{
	return (uint16_t)(rt->error_base + code);
}

/* Count n occurrences of error `code` without dropping anything. */
static inline void node_count_error(struct node_runtime *rt, uint16_t code, uint64_t n)
{
	stat_add(&rt->error_counts[rt->error_base + code], n);
}

/* Input nodes: call on each burst before enqueueing it; marks packets for
 * tracing while `trace add` has budget left. One branch when not tracing. */
static inline void node_trace_input(struct node_runtime *rt, const uint32_t *bi, uint32_t n)
{
	if (unlikely(rt->trace_budget))
		node_trace_input_mark(rt, bi, n);
}

/* The detail bytes of this node's trace record for a traced buffer (the
 * engine appended the record when the frame arrived), or NULL. Nodes test
 * (b->flags & BUFFER_F_TRACED) first, as an unlikely branch. */
uint8_t *node_trace_detail(struct node_runtime *rt, struct buffer *b);

/* For an input node that passes on packets an earlier node traced and then
 * held (sched-dist takes sched-ingress's out of the class queues): whether
 * a packet trace is armed (one call per poll, not per packet), and this
 * node's record appended to b's trace, returning its detail bytes (NULL
 * when b is not traced or its trace is full). Append before the packet can
 * reach another thread: a trace's records are written by its holder. */
bool node_trace_armed(const struct node_runtime *rt);
uint8_t *node_trace_append(struct node_runtime *rt, struct buffer *b);

/* Process nodes: do not run again for ns nanoseconds (counts a suspend). */
void node_suspend(struct node_runtime *rt, uint64_t ns);

/* ---- the thread a node runs on ---- */

/* Cap the calling thread's next idle sleep at ns nanoseconds (the timer
 * service calls it from the loop hook with the time to its next expiry, so
 * that back-off never makes a timer late). Holds for one loop. */
void graph_thread_wake_within(struct graph_thread *t, uint64_t ns);

/* The calling thread must not block after this loop: a source it polls
 * has no wakeup of its own (a queue in polling mode, an adaptive queue
 * still inside its polling window, a driver without an fd). Holds for one
 * loop. */
void graph_thread_stay_awake(struct graph_thread *t);

/* Whether t announced that it is about to block (graph/sleep.c): this
 * loop is its last look, in which a source whose wakeup must be armed (a
 * NIC queue's interrupt cause) arms it and looks once more. */
bool graph_thread_sleeping(const struct graph_thread *t);

/* The calling thread must not block after this loop, but may back off
 * (sleeps of growing length up to cpu { idle-max }): a source it polls
 * has nothing to wake it with (a NIC queue without its interrupt). Holds
 * for one loop. */
void graph_thread_no_block(struct graph_thread *t);

/* Why a sleeping thread woke (show threads, the stats segment). */
enum graph_wake_cause {
	GRAPH_WAKE_RX = 0,  /* an rx fd became readable */
	GRAPH_WAKE_HANDOFF, /* a producer kicked (handoff ring, distributor), or a frame for the thread that hands to this one (graph_thread_wake_ahead) */
	GRAPH_WAKE_CONTROL, /* the barrier (CLI, control plane), stop */
	GRAPH_WAKE_TIMER,   /* the time given to graph_thread_wake_within */
	GRAPH_WAKE_PROCESS, /* work for thread 0's process nodes (graph_poke_processes) */
	GRAPH_WAKE_TIMEOUT, /* the safety bound on a sleep (GRAPH_SLEEP_MAX_NS) */
	GRAPH_WAKE_N,
};

/* Wake t if it announced it is going to sleep; otherwise one fence and one
 * load (a producer calls it after publishing, once per burst). Any thread;
 * async-signal-safe. */
void graph_thread_kick(struct graph_thread *t, enum graph_wake_cause cause);

/* Another thread left work for thread 0's process nodes (a neighbour
 * learnt, an entry to resolve): they run at thread 0's next loop whatever
 * their suspend time, and thread 0 is woken if it sleeps. Any datapath
 * thread (NULL: nothing); a fence, a load and a store when thread 0 is
 * awake. */
void graph_poke_processes(struct graph_thread *t);

/* Index of a datapath thread (0: main). */
uint32_t graph_thread_index(const struct graph_thread *t);

/* Per-thread pointer owned by whoever set it (e.g. the thread's timer
 * service); NULL until set. */
void *graph_thread_user(const struct graph_thread *t);
void graph_thread_set_user(struct graph_thread *t, void *p);

/* The graph thread of the caller, or NULL for control threads. */
struct graph_thread *graph_thread_self(void);

#endif
