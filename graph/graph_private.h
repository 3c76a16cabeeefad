/* Layouts only the engine touches. */
#ifndef SLUICE_GRAPH_PRIVATE_H
#define SLUICE_GRAPH_PRIVATE_H

#include <pthread.h>
#include <stdatomic.h>

#include "base/elog.h"
#include "graph/graph.h"
#include "graph/pkt_filter.h"

#define FRAME_POOL_CHUNK 64

/* The registry as it is, without expanding templates (node_template.c). */
const struct node_reg *node_registry_lookup(const char *name);
/* Register the node of every template instance not yet made. */
void node_templates_expand(void);

struct graph_node {
	const struct node_reg *reg;
	uint32_t index;
	uint32_t error_base;
	uint16_t n_next;
	int32_t next_index[NODE_MAX_NEXT]; /* target node index per arc */
	node_fn_t *fn;      /* what its runtimes call: reg->fn, or feature.c's split while a feature is partly on */
	int32_t feature;    /* feature.c's record of this node, -1: not a feature */
	uint16_t feature_to; /* a feature's next index naming its arc's end */
	struct pkt_filter *trace_filter; /* input nodes: `trace add ... filter`, or NULL */
};

/* One traced packet: its records in the order nodes appended them. Only the
 * thread that owns the packet writes, so no lock is needed. */
struct trace_packet {
	uint32_t n_records;
	uint32_t n_lost;
	struct trace_record records[TRACE_MAX_RECORDS_PER_PACKET];
};

struct graph_thread {
	alignas(64) struct graph *graph;
	struct node_runtime *rts; /* one per node, cache-line aligned array */
	/* FIFO of the nodes with pending frames: a node is in it exactly while
	 * its pending list is not empty (pushed when the list goes from empty
	 * to one frame, popped when its visit takes the list), so it never
	 * holds more than n_nodes. Free-running indices, masked on use. */
	struct node_runtime **ready;
	uint32_t ready_head, ready_tail, ready_mask;
	struct frame *free_frames;
	uint32_t n_frames_allocated;
	uint64_t *error_counts;
	/* What `clear runtime` and `clear errors` saw: the counters above only
	 * go up (the stats segment exports them); readers subtract these. */
	struct node_stats *rt_base;
	uint64_t *error_base;
	uint32_t index;
	int cpu;
	int numa_node;
	int tid;
	pthread_t pthread;
	bool started;
	/* heartbeat, read by `show threads` */
	uint64_t loops;
	uint64_t idle_loops;
	uint64_t last_loop_ns;
	uint64_t last_loop_ticks;
	/* Where the time goes, in cpu_ticks (loop_time in dispatch.c; they only
	 * go up); sleep is part of idle. */
	uint64_t busy_ticks, idle_ticks, sleep_ticks, overhead_ticks;
	uint64_t loop_mark;       /* end of the previous loop; UINT64_MAX: nothing to count from */
	uint64_t hook_busy_ticks; /* node time inside this loop's hook */
	uint64_t gap_is_idle;     /* all ones: the thread backed off after its last loop */
	bool slept;               /* and slept */
	struct graph_thread_time time_base; /* what `clear runtime` saw */
	atomic_bool stalled; /* set and cleared by the watchdog */
	uint32_t idle_sleep_us;
	uint64_t wake_within_ns; /* cap on the next idle sleep, UINT64_MAX: none */
	/* Blocking (graph/sleep.c). can_block: every input enabled here
	 * declared node_reg.can_sleep (update_lists); stay_awake: a source
	 * asked to be polled again this loop (graph_thread_stay_awake). */
	bool can_block;
	bool stay_awake;
	bool no_block;
	int epfd;     /* epoll: rx fds (graph_rx_watch), wake_fd, timer_fd */
	int wake_fd;  /* eventfd written by graph_thread_kick */
	int timer_fd; /* armed for wake_within before blocking */
	bool timer_armed; /* timer_fd may still be armed from an earlier sleep */
	/* Woken ahead (graph_thread_wake_ahead): poll until ahead_until_ticks,
	 * or until thread ahead_of has ended two more loops than
	 * ahead_loops (it has read the frame and handed it over). */
	uint64_t ahead_until_ticks;
	uint64_t ahead_loops;
	uint32_t ahead_of;
	uint64_t sleeps;                    /* epoll_waits entered */
	uint64_t wakeups[GRAPH_WAKE_N];     /* by cause, stats only go up */
	uint32_t *inputs; /* node indices of input nodes polling here */
	uint32_t n_inputs;
	uint32_t *processes; /* process nodes (thread 0 only) */
	uint32_t n_processes;
	void *user;
	/* drop bursts in the event log (graph_elog.c): per error, the count last logged */
	uint64_t *drops_logged;
	uint64_t drops_logged_ticks; /* when last logged (0: never, so the first drop is logged at once) */
	uint64_t drops_since_ticks;  /* what the counts last logged covered up to (from the thread's start) */
	/* chunks of frames, freed at destroy */
	void **frame_chunks;
	uint32_t n_frame_chunks;
	/* The sleep handshake (graph/sleep.c): the thread stores
	 * GRAPH_SLEEP_ANNOUNCED before its last look at its sources and
	 * GRAPH_SLEEP_AWAKE once back; a producer publishes, then reads this,
	 * and writes wake_fd only when it was announced (seq_cst on both
	 * sides: one of the two sees the other). kick_causes: what the
	 * kickers wanted, a bit per enum graph_wake_cause. */
	alignas(64) atomic_uint sleep_state;
	atomic_uint kick_causes;
	alignas(64) atomic_uint active; /* inside its loop: the barrier waits for it */
	atomic_uint parked;             /* barrier generation it is parked for, 0: running */
};

struct graph {
	struct graph_config cfg;
	struct graph_node *nodes;
	uint32_t n_nodes;
	uint32_t cap_nodes;
	uint32_t n_errors;
	bool built;
	struct graph_thread *threads[GRAPH_MAX_THREADS];
	/* epoll fd of each thread index, made by the first of graph_rx_watch
	 * and the thread's allocation (control thread), 0: none yet. */
	int epfd[GRAPH_MAX_THREADS];
	/* The same thread's rx fds alone, 0: none yet: what wakes the threads
	 * it hands its frames to ahead of the handoff (graph_thread_wake_ahead). */
	int rx_epfd[GRAPH_MAX_THREADS];
	uint32_t n_threads;
	atomic_uint n_threads_published; /* what a barrier requester may walk */
	uint64_t created_ticks;
	uint64_t runtime_cleared_ticks;
	/* barrier */
	pthread_mutex_t barrier_lock;
	alignas(64) atomic_uint barrier_request;
	atomic_uint barrier_gen;
	uint64_t barrier_start_ticks; /* for the event log, under barrier_lock */
	uint64_t barrier_park_ticks;  /* how long parking everyone took */
	uint32_t barrier_parked;      /* threads parked */
	/* graph_barrier_stats: written under barrier_lock, read by anyone
	 * (relaxed atomics); `clear runtime` zeroes them. */
	uint64_t barrier_holds, barrier_hold_total_ticks, barrier_hold_max_ticks, barrier_wait_max_ticks;
	/* event log: error index -> interned "node: reason"; drop-burst period */
	uint32_t *error_elog_str;
	uint64_t drops_log_ticks;
	alignas(64) atomic_bool workers_stop;
	graph_drop_tap_fn_t *drop_tap;
	void *drop_tap_arg;
	atomic_uint process_poke; /* graph_poke_processes: run thread 0's process nodes now */
	graph_loop_hook_fn_t *loop_hook;
	void *loop_hook_arg;
	/* watchdog */
	pthread_t watchdog;
	bool watchdog_running;
	atomic_bool watchdog_stop;
	pthread_mutex_t watchdog_lock; /* with watchdog_wake: stop ends its wait at once */
	pthread_cond_t watchdog_wake;
	uint64_t stall_ns;
	/* trace */
	struct trace_packet *trace;
	uint32_t trace_cap;
	struct trace_bytes *trace_bytes; /* [trace_cap][TRACE_MAX_RECORDS_PER_PACKET] */
	alignas(64) atomic_uint trace_next; /* next free packet slot */
	/* What dispatch_frame calls per frame (GRAPH_TAP_*): one load and one
	 * predictable branch per frame while nothing is on. */
	atomic_uint frame_taps;
	/* dispatch trace (dispatch_trace.c), NULL when never started */
	struct dtrace *dtrace;
	uint64_t pcapng_epoch_ns; /* trace_pcapng.c: wall clock at created_ticks */
};

#define GRAPH_TAP_TRACE (1u << 0)  /* a packet trace is armed */
#define GRAPH_TAP_DTRACE (1u << 1) /* the dispatch trace records */

/* The bytes a trace record keeps (graph_trace_packet_bytes). */
struct trace_bytes {
	struct graph_pcap_rec h;
	uint8_t data[TRACE_SNAPLEN];
};

/* Input nodes' trace_budget: this bit set, the dispatch trace records what
 * the node produces (node_trace_input already branches on the budget, so
 * it costs inputs nothing while off); the rest counts packets to mark. */
#define TRACE_BUDGET_DTRACE (1u << 31)

extern __thread struct graph_thread *graph_thread_current;

/* graph.c */
struct graph_thread *graph_thread_alloc(struct graph *g, uint32_t index, char *err, size_t errlen);
void graph_thread_release(struct graph_thread *t);
void graph_thread_resolve_arcs(struct graph *g, struct graph_thread *t);
void graph_thread_update_lists(struct graph *g, struct graph_thread *t);

/* feature.c: check features and wire their arcs at build (after the
 * arcs are resolved by name); forget the graph at destroy. */
int graph_features_build(struct graph *g, char *err, size_t errlen);
void graph_features_forget(struct graph *g);

/* dispatch.c */
uint32_t graph_thread_loop_once(struct graph_thread *t);
void graph_thread_idle(struct graph_thread *t, uint32_t produced);
void graph_thread_free_pending(struct graph_thread *t);
void graph_frame_free(struct graph_thread *t, struct frame *f);
buffer_holder_fn_t graph_frames_holder;

/* threads.c */
void graph_barrier_check(struct graph_thread *t);

/* sleep.c */
enum { GRAPH_SLEEP_AWAKE = 0, GRAPH_SLEEP_ANNOUNCED = 1 };
int graph_thread_sleep_init(struct graph *g, struct graph_thread *t, char *err, size_t errlen);
void graph_thread_sleep_release(struct graph_thread *t);
/* Announce, look again at every source (one more loop), block in
 * epoll_wait up to cap_ns when still nothing; false when the look found
 * work (the thread did not block). */
bool graph_thread_block(struct graph_thread *t, uint64_t cap_ns);
/* Kick every thread that announced sleep (barrier request, stop). */
void graph_kick_all(struct graph *g, enum graph_wake_cause cause);
void graph_epoll_close_all(struct graph *g);
bool graph_thread_sleeping(const struct graph_thread *t);

/* watchdog.c: time since t last ended a loop; 0 when it is not looping or
 * is parked at the barrier. */
uint64_t graph_thread_heartbeat_age(struct graph_thread *t);

/* trace.c */
void graph_trace_frame(struct node_runtime *rt, const struct frame *f);
/* The packet's length and up to max bytes of it into rec and data. */
void graph_pcap_copy(struct graph_pcap_rec *rec, uint8_t *data, uint32_t max, const struct buffer *b);
/* The packet's trace id (graph_pcap_rec.id): its trace's packet number when
 * traced, else what the dispatch trace gave it. */
static inline uint32_t graph_packet_id(const struct graph *g, const struct buffer *b)
{
	return b->flags & BUFFER_F_TRACED ? b->trace_handle + 1 : g->trace_cap + 1 + b->trace_handle;
}

/* dispatch_trace.c */
void graph_dtrace_frame(struct node_runtime *rt, const uint32_t *bi, uint32_t n);
void graph_dtrace_free(struct graph *g);
void graph_trace_filters_free(struct graph *g);

/* graph_elog.c: the engine's events in the event log */
#define GRAPH_ELOG_DROPS_NS 100000000ull /* at most one drop event per reason per 100 ms a thread */
/* "main", "worker 0": how `show threads`, the watchdog and the event log name a thread. */
void graph_thread_name(uint32_t index, char *buf, size_t len);
int graph_elog_track(struct graph_thread *t);
void graph_elog_barrier(struct graph *g);
uint64_t graph_elog_build_begin(void);
int graph_elog_build_end(struct graph *g, uint64_t start);
void graph_elog_arc(struct graph *g, uint32_t node_index, uint16_t next_index, uint32_t target);
void graph_elog_node_state(struct graph *g, uint32_t thread_index, uint32_t node_index, enum node_state st);
void graph_elog_stall(struct graph_thread *t, uint64_t age_ns);
void graph_elog_recovered(struct graph_thread *t, uint64_t stalled_ns);
void graph_elog_drops_flush(struct graph_thread *t, uint64_t now);

/* error-drop, once per frame: log drop bursts when the period is up (one
 * cycle-counter read a frame, not a packet). */
static inline void graph_elog_drops(struct graph_thread *t)
{
	uint64_t now = cpu_ticks();
	if (unlikely(now - t->drops_logged_ticks >= t->graph->drops_log_ticks))
		graph_elog_drops_flush(t, now);
}

static inline bool graph_barrier_requested(const struct graph *g)
{
	return atomic_load_explicit(&g->barrier_request, memory_order_acquire) != 0;
}

/* Whether t's own state (its pending frames) holds still for the caller:
 * t is the caller, is not running, or is parked at the barrier the caller
 * holds. False only for a thread graph_barrier_sync_unstalled let go. With
 * no barrier requested it is the caller's word (tests driving the graph
 * from thread 0 with the workers stopped). */
bool graph_thread_held(const struct graph *g, const struct graph_thread *t);

#endif
