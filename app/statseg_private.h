/* The stats segment writer's insides, shared by app/statseg.c (the
 * segment, the directory, the engine's and the interfaces' counters) and
 * app/statseg_sched.c (scheduling classes and holds, the distributor's
 * global counters, the CLI server's). Nothing here is for other
 * subsystems: app/statseg.h is the writer's API. */
#ifndef SLUICE_APP_STATSEG_PRIVATE_H
#define SLUICE_APP_STATSEG_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "app/statseg.h"
#include "base/statseg.h"
#include "drivers/device.h"
#include "sched/class.h"
#include "sched/egress.h"

struct graph;

#define NONE STATSEG_NO_LABELS
#define N_DRIVER_COUNTERS 7
#define N_TIMER_COUNTERS 5
#define N_DIST_COUNTERS 9
#define N_THREAD_TIMES 4   /* busy, idle, sleep, overhead */
#define N_DIST_GLOBALS 6   /* window used, size; released, gaps, unordered, bad returns */
#define N_SCHED_IF 4       /* held; enqueued, released, dropped */
#define N_SCHED_IF_CLASS 3 /* held; released, dropped */
#define N_SCHED_IMPAIR 11  /* the impairer's counters (statseg_sched.c) */
#define N_SCHED_FRONT 6    /* held; queued, sent, queue full, dist dropped, shutdown */
#define N_SCHED_HQOS 6     /* subscriber hierarchy: held; departed packets, bytes, dropped limit, codel, marked */
#define N_SCHED_SUB 5      /* per subscriber: departed packets, bytes, dropped limit, codel, marked */
#define N_CLI_COUNTERS 10  /* sessions open; accepted ... closed; commands, command errors */
#define N_LOG_COUNTERS 2   /* log lines, overwritten in the ring (base/log_ring.h) */
#define N_LCP_SCALARS 28   /* linux-cp's netlink listeners (app/statseg_lcp.c) */

/* What app/statseg_sched.c's entries describe. */
struct statseg_sched_shape {
	uint32_t n_ifs; /* rows of the per-interface entries: last scheduled index + 1, 0: none */
	bool scheduled[DEV_MAX];
	bool front; /* the class queues in front of the distributor exist */
	char classes[SCHED_MAX_CLASSES][SCHED_CLASS_NAME_SIZE];
	uint32_t n_subs;           /* subscribers over every interface's hierarchy */
	uint64_t sub_gen[DEV_MAX]; /* each hierarchy's generation (hqos_sub_count) */
	uint32_t n_imp_subs;       /* subscribers with an impairer, every interface */
	uint32_t imp_subs[DEV_MAX]; /* each hierarchy's (hqos_impair_count) */
};

/* What app/statseg_counters.c's entries describe: each provider's rows
 * this pass and the generation of their names. */
struct statseg_counters_shape {
	uint32_t n; /* providers */
	uint32_t n_rows[STATSEG_COUNTERS_MAX];
	uint64_t gen[STATSEG_COUNTERS_MAX];
};

/* What the directory describes; a new directory when any of it changes. */
struct shape {
	uint32_t n_threads, n_nodes, n_errors, n_pools, n_ifs, max_rxq, max_txq;
	const struct dist *dist; /* the distributor attached, if any */
	uint32_t n_dist_workers;
	uint64_t n_deletes;
	struct {
		const struct device *dev;
		uint16_t n_rx, n_tx;
		char name[DEV_NAME_SIZE];
	} devs[DEV_MAX];
	struct statseg_sched_shape sched;
	struct statseg_counters_shape counters;
};

/* Directory indices of the entries the copy pass fills (NONE: not laid out). */
struct entries {
	uint32_t thread_names, loops, idle_loops, heartbeat_age, times[N_THREAD_TIMES], tsc_hz;
	uint32_t wake_causes, sleeps, wakeups; /* graph/sleep.c: names, per thread, thread x cause */
	uint32_t timers[N_TIMER_COUNTERS];
	uint32_t if_names, rx_queues, tx_queues, rx, rx_dropped, rx_errors, tx, tx_dropped;
	uint32_t driver[N_DRIVER_COUNTERS], admin_up, link_up, link_speed;
	uint32_t node_names, node[4];
	uint32_t err0;  /* error i (of those with a node) at err0 + i */
	uint32_t pool0; /* pool p's total, free, cached, in-use at pool0 + 4p */
	uint32_t dist[N_DIST_COUNTERS];
	uint32_t dist_reasons, dist_drops, dist_globals[N_DIST_GLOBALS];
	uint32_t class_names, class_packets;
	uint32_t sched_if_names, sched_if[N_SCHED_IF], sched_if_class[N_SCHED_IF_CLASS];
	uint32_t sched_impair[N_SCHED_IMPAIR], sched_impair_late;
	uint32_t front[N_SCHED_FRONT];
	uint32_t sched_hqos[N_SCHED_HQOS];
	uint32_t sub_names, sub[N_SCHED_SUB];
	uint32_t sub_imp_names, sub_imp[N_SCHED_IMPAIR], sub_imp_late; /* impaired subscribers */
	uint32_t cli[N_CLI_COUNTERS];
	uint32_t log[N_LOG_COUNTERS];
	uint32_t lcp[N_LCP_SCALARS], lcp_reasons, lcp_ignored, lcp_kinds, lcp_applied;
	uint32_t ctr_names[STATSEG_COUNTERS_MAX], ctr[STATSEG_COUNTERS_MAX][STATSEG_COUNTERS_MAX_COLUMNS];
};

struct statseg_writer {
	int fd;
	uint8_t *base;
	size_t size;
	struct statseg_header *h;
	struct shape cur;
	bool have_shape, full_logged;
	struct statseg_entry *dir;
	uint32_t n_dir, cap_dir;
	uint64_t data_used;
	bool overflow;
	struct entries e;
};

/* A dimension of an entry: its name ("interface", "thread", ...; NULL for
 * none), its size, and the name vector labelling it (NONE: the index is
 * the label). */
struct dim {
	const char *name;
	uint32_t n, labels;
};

static const struct dim ONE = { NULL, 1, NONE };

/* Append an entry to the directory being laid out; its index, or NONE
 * when out of memory (the layout then fails). */
uint32_t statseg_add(struct statseg_writer *w, const char *name, uint32_t type, struct dim d0, struct dim d1);
uint32_t statseg_add_scalar(struct statseg_writer *w, const char *name, uint32_t type);

/* Word k of element [i][j] of entry ent (nothing when ent is NONE). */
void statseg_put_elem(struct statseg_writer *w, uint32_t ent, uint32_t i, uint32_t j, uint32_t k, uint64_t v);
/* Label i of name vector ent. */
void statseg_put_label(struct statseg_writer *w, uint32_t ent, uint32_t i, const char *s);

/* app/statseg_sched.c: the shape, layout, labels and values of the
 * /sched/, the distributor's global /dist/ and the /cli/ entries. */
void statseg_sched_shape(struct statseg_sched_shape *s);
void statseg_sched_layout(struct statseg_writer *w, const struct shape *s);
void statseg_sched_names(struct statseg_writer *w, const struct shape *s);
void statseg_sched_fill(struct statseg_writer *w, const struct shape *s, struct graph *g);

/* app/statseg_lcp.c: the /lcp/netlink/ entries (always laid out: zeros
 * until a listener starts). */
void statseg_lcp_layout(struct statseg_writer *w);
void statseg_lcp_names(struct statseg_writer *w);
void statseg_lcp_fill(struct statseg_writer *w);

/* app/statseg_counters.c: the registered providers' entries. _shape
 * collects every provider's rows for this pass (the others use them). */
/* On while the segment's thread runs (statseg_start .. statseg_stop):
 * registrations are then refused. */
void statseg_counters_freeze(bool on);
void statseg_counters_shape(struct graph *g, struct statseg_counters_shape *s);
void statseg_counters_layout(struct statseg_writer *w, const struct statseg_counters_shape *s);
void statseg_counters_names(struct statseg_writer *w, const struct statseg_counters_shape *s);
void statseg_counters_fill(struct statseg_writer *w, const struct statseg_counters_shape *s);

#endif
