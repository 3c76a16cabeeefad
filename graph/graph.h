/* The vector graph engine's control API: graph build, per-thread clones,
 * threads and dispatch, the barrier, the watchdog, runtime statistics and
 * packet trace. Node authors need graph/node.h only (included here).
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

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "graph/node.h"

struct pkt_filter;

/* ---- graph build ---- */

enum graph_idle_mode {
	GRAPH_IDLE_POLL = 0, /* spin: lowest latency, burns the core (cpu { rx-mode polling }) */
	GRAPH_IDLE_SLEEP,    /* block in epoll_wait when every input can be woken (graph/sleep.c),
			      * else sleep with a growing interval, up to idle_max_us */
};

struct graph_config {
	enum graph_idle_mode idle_mode;
	uint32_t idle_max_us;  /* upper bound of the back-off sleep, default 1000 */
	uint32_t trace_max;    /* packets the trace buffer holds, default 1024 */
	uint32_t elog_size;    /* event-log events per thread (base/elog.h), default 4096 */
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

/* ---- features per interface (graph/feature.c; node.h's NODE_FEATURE_REGISTER) ----
 *
 * Each registered feature keeps one bit per interface index (b->rx_if),
 * GRAPH_FEATURE_IF_MAX of them (drivers/ has as many interfaces): all set
 * at registration, or none with default_off. Its arc leads to it while
 * the bit of some interface that exists is set (graph_feature_if_live;
 * every index counts until the interface layer tells), and straight on to
 * the next feature or the arc's end when none is. While it is on for some
 * of those interfaces but not all, its runtimes call a split instead of
 * the node: one pass over the frame sends the packets of interfaces where
 * it is off (and those with rx_if past the table) to its next `to`, and
 * the node gets the rest in the same frame; on for all of them or for
 * none, the node's own function runs, nothing added per packet.
 * Process-wide like the registrations; changes take the barrier. */
#define GRAPH_FEATURE_IF_MAX 64

struct graph_feature_info {
	const char *node, *from, *to; /* the registration's */
	bool default_on;
	uint64_t on; /* bit i: on for interface i */
};

uint32_t graph_feature_count(void);
/* Feature i, in registration order: 0 or -ENOENT. */
int graph_feature_info(uint32_t i, struct graph_feature_info *fi);

/* Turn feature i on or off for interface if_index, and rewire its arc on
 * every thread of g under the barrier when that changes whether it is on
 * anywhere. g NULL (or not built yet): the bit only, wired at graph_build.
 * 0, or -EINVAL for a feature or interface index out of range. */
int graph_feature_set(struct graph *g, uint32_t i, uint32_t if_index, bool on);

/* The interface layer: interface if_index now exists (or no longer), in
 * g or (NULL) the graph the features were last built into; rewires what
 * that changes under the barrier. */
void graph_feature_if_live(struct graph *g, uint32_t if_index, bool is_live);

/* Every feature back to its default for if_index (the interface is gone),
 * in g, or (NULL) in the graph the features were last built into. */
void graph_feature_if_reset(struct graph *g, uint32_t if_index);

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


/* A function shown every buffer error-drop is about to free (pcap capture
 * drop); it must not keep or free them. NULL removes it. Takes the barrier. */
typedef void(graph_drop_tap_fn_t)(void *arg, const uint32_t *bi, uint32_t n);
void graph_set_drop_tap(struct graph *g, graph_drop_tap_fn_t *fn, void *arg);



/* Dispatch the calling datapath thread's pending frames until none are left. */
void graph_dispatch_pending(struct graph_thread *t);

/* Park every datapath thread but the caller at a loop boundary; nests.
 * Control threads (CLI, tests) and thread 0 may call it. */
void graph_barrier_sync(struct graph *g);
void graph_barrier_release(struct graph *g);

/* graph_barrier_sync that does not wait for a thread the watchdog calls
 * stalled (it would hold the caller for as long as that thread sleeps in a
 * node): every other thread parks. Returns how many threads were not waited
 * for. Their own state may change under the caller; holders walking it
 * (graph_frames_holder) check graph_thread_held. Released as usual. */
uint32_t graph_barrier_sync_unstalled(struct graph *g);

/* The barrier's cost to the datapath since the last graph_clear_runtime:
 * hold is from the moment every thread is parked to the release (the time
 * the datapath does nothing), wait from the request to that moment (the
 * threads finish their loop or their idle sleep meanwhile). */
struct graph_barrier_stats {
	uint64_t holds;
	uint64_t hold_total_ns, hold_max_ns;
	uint64_t wait_max_ns;
};
void graph_barrier_stats(struct graph *g, struct graph_barrier_stats *st);

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
	bool asleep;  /* blocked in epoll_wait (graph/sleep.c), or about to */
	uint64_t sleeps;                 /* times it blocked */
	uint64_t wakeups[GRAPH_WAKE_N];  /* by cause (enum graph_wake_cause) */
};
int graph_thread_info(struct graph *g, uint32_t thread_index, struct graph_thread_info *info);

/* Where a thread's time went, in cpu_ticks (docs/architecture.md, "Where
 * the time goes"): busy in node calls that had work (a frame, or a poll
 * that returned packets), idle in polls that found nothing and between
 * loops when the thread backed off, of which sleep asleep; overhead the
 * rest of the loop (frame bookkeeping, the barrier check, the loop hook).
 * busy + idle + overhead is the time the thread spent in its loop, parked
 * at the barrier and between graph_main_poll calls excluded. */
struct graph_thread_time {
	uint64_t busy, idle, sleep, overhead;
};
/* Since the last graph_clear_runtime; 0 or -ENOENT. */
int graph_thread_time(struct graph *g, uint32_t thread_index, struct graph_thread_time *tt);
/* Since the thread started: these only go up (the stats segment). */
int graph_thread_time_total(struct graph *g, uint32_t thread_index, struct graph_thread_time *tt);

/* ---- sleeping and waking (graph/sleep.c) ---- */

/* The longest a blocked thread sleeps even when nothing wakes it: a safety
 * bound, never the wakeup anything relies on (cause "timeout"). */
#define GRAPH_SLEEP_MAX_NS 1000000000ull

/* Wake thread_index when fd becomes readable (on) / no longer (off). The
 * fd must be removed before it is closed or handed to another thread.
 * Control thread; works before the thread exists. 0 or a negative errno. */
int graph_rx_watch(struct graph *g, uint32_t thread_index, int fd, bool on);

/* Wake thread `to` as well, in parallel with `from`, when an rx fd watched
 * on thread `from` becomes readable (on) / no longer (off): a worker that
 * `from` hands its frames to (the distributor) starts waking with `from`
 * instead of after it, and after such a wakeup (counted as cause
 * "handoff") polls until `from` has been through two more loops (it has
 * read the frame and handed it over), at most GRAPH_WAKE_AHEAD_NS, so
 * that the handoff finds it awake.
 * Edge-triggered: one wakeup per frame arriving, none while `from` has
 * frames left to read. Nothing when both are pinned to the same core (`to`
 * would take it from `from`). Control thread; 0 or a negative errno. */
int graph_thread_wake_ahead(struct graph *g, uint32_t from, uint32_t to, bool on);
#define GRAPH_WAKE_AHEAD_NS 200000ull

/* graph_thread_kick by index, from a control thread that feeds a
 * datapath thread (the tap driver's reader); nothing for an index without
 * a running thread. */
void graph_kick_index(struct graph *g, uint32_t thread_index, enum graph_wake_cause cause);

/* "rx", "handoff", "control", "timer", "process", "timeout". */
const char *graph_wake_cause_name(enum graph_wake_cause c);

/* ---- watchdog ---- */

/* Start a control thread that reads every datapath thread's heartbeat (its
 * loop count and the time its last loop ended) a few times per stall_ns and
 * logs one line when a thread has not ended a loop for stall_ns ("watchdog:
 * thread 1 (worker 0) stalled: ...") and one when it loops again ("...
 * recovered after ..."). A thread parked at the barrier or asleep in
 * epoll_wait (graph/sleep.c) is not judged.
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

/* One node on one thread since the last graph_clear_runtime. Returns 0 or
 * -ENOENT. */
int graph_node_stats(struct graph *g, uint32_t thread_index, uint32_t node_index, struct node_stats *st);
/* The same since the graph was built: these only go up (the stats segment). */
int graph_node_stats_total(struct graph *g, uint32_t thread_index, uint32_t node_index, struct node_stats *st);

/* Packets sent along one arc, summed over threads. */
uint64_t graph_arc_packets(struct graph *g, uint32_t node_index, uint16_t next_index);

/* Start node runtime statistics and thread times from zero (a baseline:
 * the datapath's counters keep going up) and zero the arc counters, on
 * every thread. */
void graph_clear_runtime(struct graph *g);

/* Errors: global index -> (node, code, string); counts summed over threads. */
uint32_t graph_n_errors(const struct graph *g);
int graph_error_info(const struct graph *g, uint32_t error_index, uint32_t *node_index, const char **string);
uint64_t graph_error_count(struct graph *g, uint32_t error_index);
/* The same including what graph_clear_errors hid (it takes a baseline). */
uint64_t graph_error_count_total(struct graph *g, uint32_t error_index);
/* One thread's part of that (the stats segment's per-thread vectors). */
uint64_t graph_error_count_thread(struct graph *g, uint32_t thread_index, uint32_t error_index);
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

/* As graph_trace_add, but only packets the tcpdump expression `filter`
 * accepts (graph/pkt_filter.h) are marked and counted against n; NULL: every
 * packet. The node's filter is replaced (a later add without a filter
 * removes it). A bad expression: -EBADMSG with libpcap's message in err,
 * and nothing changed. */
int graph_trace_add_filtered(struct graph *g, const char *node_name, uint32_t n, const char *filter, char *err,
			     size_t errlen);

/* The filter expression in force on node node_index, or NULL. */
const char *graph_trace_filter(struct graph *g, uint32_t node_index);

/* Forget every trace record, disarm and free every filter. */
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

/* ---- packets as nodes saw them, in pcapng (graph/trace_pcapng.c) ----
 *
 * One record: a packet's bytes as node node_index received them on thread
 * `thread`, with its buffer flags then and, at error-drop, the error it was
 * counted under. The trace keeps one per trace record (up to
 * TRACE_SNAPLEN bytes); the dispatch trace writes one per node visit. */
#define TRACE_SNAPLEN 96

struct graph_pcap_rec {
	uint64_t ticks;
	uint32_t node_index;
	uint16_t thread;
	uint16_t error; /* b->error (meaningful at error-drop) */
	uint32_t id;    /* the packet's trace id: the same at every node and thread */
	uint32_t flags; /* b->flags */
	uint32_t len;   /* the packet's length then (whole chain) */
	uint32_t caplen; /* bytes kept */
};
_Static_assert(sizeof(struct graph_pcap_rec) == 32, "pcap record header is fixed-size");

/* The bytes kept with trace record k of traced packet i, and their header
 * (NULL when out of range). */
const struct graph_pcap_rec *graph_trace_packet_bytes(struct graph *g, uint32_t i, uint32_t k,
						      const uint8_t **data);

struct pcapng_file;
/* Start a pcapng file on f (taken): section header, then one interface per
 * node (if_id = node index, if_name the node's name, linktype Ethernet,
 * nanosecond times) so that Wireshark shows the node of every record. */
int graph_pcapng_open(struct graph *g, struct pcapng_file *p, FILE *f, uint32_t snaplen);

/* Write rec (data: rec->caplen bytes) as an enhanced packet block whose
 * comment reads `node NAME thread T trace-id ID flags 0x..[ error "node:
 * reason"]`, then "; " and extra (a trace's detail; NULL: none). */
int graph_pcapng_write(struct graph *g, struct pcapng_file *p, const struct graph_pcap_rec *rec, const uint8_t *data,
		       const char *extra);

/* ---- dispatch trace (graph/dispatch_trace.c) ----
 *
 * `pcap dispatch trace`: while on, every node records the packets it
 * receives (and input nodes what they produce), up to snaplen bytes each,
 * into per-thread rings that a writer thread of its own drains into a
 * pcapng file. Nothing is allocated, locked or called per packet on the
 * datapath; a full ring drops the record (counted), never the packet. */
struct graph_dtrace_params {
	uint32_t max;       /* records, then it stops on its own */
	uint32_t snaplen;   /* 0: GRAPH_DTRACE_SNAPLEN_DEFAULT */
	int32_t mark_node;  /* -1: every packet; else only packets from this node on */
	struct pkt_filter *filter; /* at mark_node (or input nodes): only what it accepts; taken */
	FILE *file;         /* opened by the caller; taken */
	const char *path;
};
#define GRAPH_DTRACE_SNAPLEN_DEFAULT 512u
#define GRAPH_DTRACE_MAX 10000000u

/* Arm it and start the writer. 0, -EBUSY (one is on), -EINVAL, -ENOMEM. */
int graph_dtrace_start(struct graph *g, const struct graph_dtrace_params *p, char *err, size_t errlen);

/* Disarm, write what is left, close the file. -ENOENT when none was on. */
int graph_dtrace_stop(struct graph *g);

struct graph_dtrace_status {
	bool on;         /* started and not stopped */
	bool armed;      /* still recording (not at max) */
	uint32_t max, snaplen;
	uint64_t claimed, written, dropped;
	int error;       /* first write error (errno), 0: none */
	char path[256];
	char node[64];   /* "" for every packet */
	char filter[256];
	uint64_t ring_bytes; /* the per-thread rings it holds (kept after it stops, until the next start) */
};
void graph_dtrace_status(struct graph *g, struct graph_dtrace_status *st);

#endif
