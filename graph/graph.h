/* The vector graph engine: node registration, graph build, frames, per-thread
 * clones, dispatch, the barrier, runtime statistics and packet trace.
 *
 * Thread-safety in one paragraph: a graph is built once on the control
 * thread; each datapath thread then owns its clone of the node runtimes and
 * touches nothing shared per packet. Control changes (arcs, node state,
 * trace, clearing counters) take the barrier, which parks every datapath
 * thread at a loop boundary. Statistics may be read at any time (relaxed,
 * tear-free on 64-bit).
 */
#ifndef SLUICE_GRAPH_GRAPH_H
#define SLUICE_GRAPH_GRAPH_H

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
	uint8_t scheduled;
	uint8_t frame_taken; /* the node forwarded its input frame whole */
	uint8_t type;
	uint32_t trace_budget; /* input nodes: packets left to mark */
	uint64_t *error_counts; /* this thread's counters, indexed by global error */
	/* runtime statistics, written by the owning thread only */
	alignas(64) uint64_t calls;
	uint64_t vectors;
	uint64_t suspends;
	uint64_t clocks;
	uint64_t next_run_ns; /* process nodes */
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

/* Append n buffer indices to next node `next`, in order, opening frames as
 * needed. Every index is taken. */
static inline void node_enqueue(struct node_runtime *rt, uint16_t next, const uint32_t *bi, uint32_t n)
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

static inline void node_enqueue_x1(struct node_runtime *rt, uint16_t next, uint32_t bi)
{
	node_enqueue(rt, next, &bi, 1);
}

/* Slots for writing up to n indices straight into next's open frame
 * (n <= FRAME_SIZE). Write them, then call node_next_commit with how many
 * were used. Lets a node scatter packets over a few next nodes with one
 * store per packet. */
static inline uint32_t *node_next_slots(struct node_runtime *rt, uint16_t next, uint32_t n)
{
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

/* Process nodes: do not run again for ns nanoseconds (counts a suspend). */
void node_suspend(struct node_runtime *rt, uint64_t ns);

/* ---- graph build ---- */

enum graph_idle_mode {
	GRAPH_IDLE_POLL = 0, /* spin: lowest latency, burns the core */
	GRAPH_IDLE_SLEEP,    /* sleep with a growing interval, up to idle_max_us */
};

struct graph_config {
	enum graph_idle_mode idle_mode;
	uint32_t idle_max_us;  /* upper bound of the idle sleep, default 1000 */
	uint32_t trace_max;    /* packets the trace buffer holds, default 1024 */
};

void graph_config_default(struct graph_config *cfg);

/* An empty graph. NULL on failure with the reason in err. */
struct graph *graph_create(const struct graph_config *cfg, char *err, size_t errlen);

/* Add one node (before graph_build). Returns its index or a negative errno. */
int graph_add_node(struct graph *g, const struct node_reg *reg, char *err, size_t errlen);

/* Add every registered node. Returns 0 or a negative errno. */
int graph_add_registered(struct graph *g, char *err, size_t errlen);

/* Resolve arcs by name and create thread 0's runtimes (the calling thread).
 * A missing next node is an error naming both nodes. Returns 0 or -errno. */
int graph_build(struct graph *g, char *err, size_t errlen);

/* Dispatch what is pending, stop workers, free every buffer still in frames,
 * and release the graph. */
void graph_destroy(struct graph *g);

uint32_t graph_n_nodes(const struct graph *g);
int graph_node_index(const struct graph *g, const char *name);
const struct node_reg *graph_node_reg(const struct graph *g, uint32_t node_index);
/* Runtime of a node on one thread (tests, control code). */
struct node_runtime *graph_node_runtime(struct graph *g, uint32_t thread_index, uint32_t node_index);
/* Arcs a node has now (its registration's, plus any added at run time). */
uint16_t graph_node_n_next(const struct graph *g, uint32_t node_index);
/* Target node index of an arc, or -ENOENT. */
int graph_node_next(const struct graph *g, uint32_t node_index, uint16_t next_index);

/* Re-point an arc to another node on every thread, under the barrier.
 * Returns 0 or a negative errno (unknown node or next index). */
int graph_set_next(struct graph *g, uint32_t node_index, uint16_t next_index, const char *target,
		   char *err, size_t errlen);

/* Add an arc at run time (under the barrier); returns the new next index. */
int graph_add_next(struct graph *g, uint32_t node_index, const char *target, char *err, size_t errlen);

/* Enable or disable an input node on one thread (under the barrier). */
int graph_node_set_state(struct graph *g, uint32_t thread_index, uint32_t node_index, enum node_state st);

/* ---- threads and dispatch ---- */

/* Start n workers pinned to cpus[i] (-1: unpinned). Thread 0 stays with the
 * caller. Returns 0 or a negative errno with the reason in err. */
int graph_workers_start(struct graph *g, const int *cpus, uint32_t n, char *err, size_t errlen);

/* Stop and join the workers after they drain their pending frames. */
void graph_workers_stop(struct graph *g);

uint32_t graph_n_threads(const struct graph *g);

/* Pin thread 0 (the caller) to cpu and record its NUMA node.
 * Returns 0 or a negative errno with the reason in err. */
int graph_main_pin(struct graph *g, int cpu, char *err, size_t errlen);

/* One loop of thread 0: barrier check, poll inputs, dispatch everything
 * pending, run due process nodes. Returns packets produced by inputs. */
uint32_t graph_main_poll(struct graph *g);

/* Run thread 0's loop until *stop becomes true, idling as configured. */
void graph_main_loop(struct graph *g, const atomic_bool *stop);

/* A function every datapath thread runs once per loop, after its inputs and
 * pending frames (the timer service hangs here: due timers become events).
 * It returns how much work it did; 0 lets the thread idle. Set it before
 * workers start or under the barrier; NULL removes it. */
typedef uint32_t(graph_loop_hook_fn_t)(struct graph_thread *t, void *arg);
void graph_set_loop_hook(struct graph *g, graph_loop_hook_fn_t *fn, void *arg);

/* Cap the calling thread's next idle sleep at ns nanoseconds (the timer
 * service calls it from the loop hook with the time to its next expiry, so
 * that back-off never makes a timer late). Holds for one loop. */
void graph_thread_wake_within(struct graph_thread *t, uint64_t ns);

/* A function shown every buffer error-drop is about to free (pcap capture
 * drop); it must not keep or free them. NULL removes it. Takes the barrier. */
typedef void(graph_drop_tap_fn_t)(void *arg, const uint32_t *bi, uint32_t n);
void graph_set_drop_tap(struct graph *g, graph_drop_tap_fn_t *fn, void *arg);

/* Index of a datapath thread (0: main). */
uint32_t graph_thread_index(const struct graph_thread *t);

/* Per-thread pointer owned by whoever set it (e.g. the thread's timer
 * service); NULL until set. */
void *graph_thread_user(const struct graph_thread *t);
void graph_thread_set_user(struct graph_thread *t, void *p);

/* Dispatch the calling datapath thread's pending frames until none are left. */
void graph_dispatch_pending(struct graph_thread *t);

/* Park every datapath thread but the caller at a loop boundary; nests.
 * Control threads (CLI, tests) and thread 0 may call it. */
void graph_barrier_sync(struct graph *g);
void graph_barrier_release(struct graph *g);

/* The graph thread of the caller, or NULL for control threads. */
struct graph_thread *graph_thread_self(void);
struct graph_thread *graph_thread_get(struct graph *g, uint32_t thread_index);

struct graph_thread_info {
	char name[16];
	int cpu;         /* pinned core, -1 when not pinned */
	int numa_node;
	int tid;
	uint64_t loops;
	uint64_t last_loop_ns; /* heartbeat: end of its last loop, ns since graph creation */
	uint64_t heartbeat_age_ns; /* how long ago that was */
	uint64_t idle_loops;
	bool running;
	bool parked;  /* at the barrier */
	bool stalled; /* the watchdog judged it stalled and has not seen it loop since */
};
int graph_thread_info(struct graph *g, uint32_t thread_index, struct graph_thread_info *info);

/* ---- watchdog ---- */

/* Start a control thread that reads every datapath thread's heartbeat (its
 * loop count and the time its last loop ended) a few times per stall_ns and
 * logs one line when a thread has not ended a loop for stall_ns ("watchdog:
 * thread 1 (worker 0) stalled: ...") and one when it loops again ("...
 * recovered after ..."). A thread parked at the barrier is not judged.
 * stall_ns must exceed the idle sleep bound (an idle thread ends a loop at
 * least that often). stall_ns 0: nothing started. Call after the workers
 * started; graph_workers_stop and graph_destroy stop it. Returns 0 or a
 * negative errno with the reason in err. */
int graph_watchdog_start(struct graph *g, uint64_t stall_ns, char *err, size_t errlen);

/* Stop the watchdog thread (nothing when none runs). Control thread. */
void graph_watchdog_stop(struct graph *g);

/* ---- statistics ---- */

struct node_stats {
	uint64_t calls;
	uint64_t vectors;
	uint64_t suspends;
	uint64_t clocks;
};

/* One node on one thread. Returns 0 or -ENOENT. */
int graph_node_stats(struct graph *g, uint32_t thread_index, uint32_t node_index, struct node_stats *st);

/* Packets sent along one arc, summed over threads. */
uint64_t graph_arc_packets(struct graph *g, uint32_t node_index, uint16_t next_index);

/* Zero node runtime statistics and arc counters on every thread. */
void graph_clear_runtime(struct graph *g);

/* Errors: global index -> (node, code, string); counts summed over threads. */
uint32_t graph_n_errors(const struct graph *g);
int graph_error_info(const struct graph *g, uint32_t error_index, uint32_t *node_index, const char **string);
uint64_t graph_error_count(struct graph *g, uint32_t error_index);
/* Count of one node's error by code, summed over threads. */
uint64_t graph_node_error_count(struct graph *g, uint32_t node_index, uint16_t code);
void graph_clear_errors(struct graph *g);

/* Seconds since the runtime counters were last cleared. */
double graph_runtime_seconds(const struct graph *g);

/* ---- packet trace ---- */

struct trace_record {
	uint64_t ticks;
	uint32_t node_index;
	uint16_t thread_index;
	uint16_t reserved;
	uint8_t detail[NODE_TRACE_DETAIL_SIZE];
};
_Static_assert(sizeof(struct trace_record) == 56, "trace record is fixed-size");

#define TRACE_MAX_RECORDS_PER_PACKET 32

/* Mark the next n packets produced by input node `node_name` (on every
 * thread that runs it). Returns 0 or a negative errno with reason in err. */
int graph_trace_add(struct graph *g, const char *node_name, uint32_t n, char *err, size_t errlen);

/* Forget every trace record and disarm. */
void graph_trace_clear(struct graph *g);

/* Traced packets so far, in marking order. */
uint32_t graph_trace_n_packets(struct graph *g);

/* Records of traced packet i in the order the nodes appended them.
 * Returns the count (0 when i is out of range); *records stays valid until
 * the next graph_trace_clear. Records dropped for lack of room are counted
 * in *n_lost when n_lost is not NULL. */
uint32_t graph_trace_packet(struct graph *g, uint32_t i, const struct trace_record **records,
			    uint32_t *n_lost);

/* Format one record's detail with its node's formatter ("" when none). */
int graph_trace_format(struct graph *g, const struct trace_record *r, char *buf, size_t len);

/* Seconds since the graph was created for a trace tick value. */
double graph_ticks_to_seconds(const struct graph *g, uint64_t ticks);

#endif
