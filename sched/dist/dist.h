/* The flow-pinning distributor: one rx thread hands packets to N workers in
 * 64-byte lines of 8 (graph/handoff.h), never letting one flow run on two
 * workers at once and never letting it overtake itself.
 *
 * Every packet carries a 15-bit flow tag. The distributor owns one table
 * entry per tag: the worker that owns the tag and how many of its packets
 * that worker has not finished (staged in the backlog, in the ring, being
 * processed, or finished but not yet reported). A packet whose tag is owned
 * goes to the owner; any other packet opens the flow on the least-loaded
 * worker. A tag is released only when its owner reports the last of those
 * packets complete, by count: lines complete in the order they were
 * published, so a worker adds the number of lines it finished to one
 * counter and the distributor releases its own copies of them (no line
 * travels back; the worker cannot report a tag it was not given). DPDK's
 * burst distributor forgets a slow worker's tags when it publishes the next
 * line (DPDK Programmer's Guide, "Distributor Library"); here nothing but a
 * completion releases one.
 *
 * Completion: a worker's packets are complete when the worker polls again
 * (dist_worker_poll) or says so (dist_worker_done). In the graph, that
 * poll is handoff-input's next call, which comes after the dispatch loop has
 * run every frame of the previous batch to its end: handed to a tx queue by
 * interface-output, or dropped. A node that keeps buffers past the dispatch
 * loop (a shaper) must not run on distributor workers until it reports its
 * own completions.
 *
 * Scheduling types (sched/sched_type.h). The distributor is the one
 * implementation of atomic, ordered and parallel in the tree: the event
 * queues in front of it (sched/evq.h) only decide which class's packets
 * come next, and hand each packet here with its class's type. Why here:
 * the promises are about workers, and this is the stage that knows them
 * (sched_type.h says more). Atomic is the pinning above; parallel packets
 * go to the least-loaded worker with no flow-table entry, eight at a time
 * when a chunk of the call's packets is all parallel (one line to one
 * worker, as DPDK's distributor hands bursts of 8), else one by one;
 * ordered packets are spread one by one and put back in arrival order
 * before transmit.
 * Each ordered packet gets a sequence number from a reorder window owned by
 * the distributor thread; on its worker, interface-output sends it along
 * its arc to distributor-return, which hands it back (dist_worker_return, a
 * ring per worker) instead of transmitting it, and the distributor thread
 * releases the window's in-order prefix (dist_ordered_take) to its own
 * interface-output. A sequence number whose packet was dropped or consumed
 * on the worker is a gap, skipped once its batch is complete, so drops
 * never stall the window. The type travels in the handoff line's tag
 * (DIST_TAG_*), so completing a parallel or ordered packet never touches
 * the flow table.
 *
 * Backpressure: each worker has a ring of ring_lines lines and a backlog of
 * `backlog` packets at the distributor. When both are full, that worker's
 * packets are dropped and counted (DIST_DROP_WORKER_FULL); new flows go to
 * other workers, and only when every worker is full are they dropped
 * (DIST_DROP_ALL_FULL). The distributor never waits for a worker, and
 * nothing grows: all memory is allocated by dist_create.
 *
 * Thread-safety: dist_process, dist_flush, dist_outstanding and
 * dist_reclaim belong to one distributor thread; dist_worker_poll and
 * dist_worker_done to worker w's thread alone; dist_stats may be called
 * from any thread at any time; dist_create, dist_free and dist_clear_stats
 * are control calls (dist_clear_stats takes a baseline, it writes nothing
 * the datapath writes).
 */
#ifndef SLUICE_SCHED_DIST_H
#define SLUICE_SCHED_DIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "graph/handoff.h"
#include "sched/sched_type.h"

#define DIST_MAX_WORKERS 63 /* a tag's owner is a byte; 0 means none */
#define DIST_N_TAGS (HANDOFF_TAG_MASK + 1)
#define DIST_BACKLOG_DEFAULT 8
#define DIST_BACKLOG_MAX 4096
#define DIST_RING_LINES_DEFAULT 64
#define DIST_RING_LINES_MAX 1024
#define DIST_WORKER_BATCH_LINES 32 /* lines a worker takes per poll: one frame */
#define DIST_WINDOW_DEFAULT 4096
#define DIST_WINDOW_MAX 8192 /* sequence numbers are 14 bits: room to spot a stale one */

/* A tag in a handoff line: atomic packets carry their 15-bit flow tag (top
 * bit clear); the others have DIST_TAG_SPREAD set, and ordered ones also
 * DIST_TAG_ORDERED with their sequence number in DIST_SEQ_MASK. */
#define DIST_TAG_SPREAD 0x8000u
#define DIST_TAG_ORDERED 0x4000u
#define DIST_SEQ_MASK 0x3fffu

struct dist;

struct dist_config {
	uint32_t n_workers;  /* 1..DIST_MAX_WORKERS */
	uint32_t backlog;    /* packets held per worker while its ring is full; rounded up to 8s */
	uint32_t ring_lines; /* lines per worker ring, a mailbox at every depth (a power of
			      * two; 1: one line in flight at a time, the depth of DPDK's burst
			      * distributor, the completion count posted back in that line:
			      * handoff_mailbox_create) */
	uint32_t window;     /* reorder window: power of two 8..DIST_WINDOW_MAX; 0: the default */
	bool match_always;   /* one worker: still stage packet by packet through the flow
			      * matcher, as with many (false, the default: whole chunks of 8
			      * with no worker to choose). For benchmarks' matched rows. */
};

/* Why the distributor dropped a packet. */
enum dist_drop_reason {
	DIST_DROP_WORKER_FULL = 0, /* its flow's worker has a full ring and backlog */
	DIST_DROP_ALL_FULL,        /* a new flow, and every worker is full */
	DIST_DROP_SHUTDOWN,        /* still queued for a worker when the workers stopped */
	DIST_DROP_SPREAD_FULL,     /* ordered or parallel, and every worker is full */
	DIST_DROP_WINDOW_FULL,     /* ordered, and the reorder window is full */
	DIST_DROP_UNORDERED_FULL,  /* returned out of its window slot, with no room to send it on */
	DIST_N_DROP,
};

extern const char *const dist_drop_reason_strings[DIST_N_DROP];

void dist_config_default(struct dist_config *c);

/* A distributor for c->n_workers workers; NULL with the reason in err. */
struct dist *dist_create(const struct dist_config *c, char *err, size_t errlen);

/* Release everything. Buffers still queued are not freed: reclaim first. */
void dist_free(struct dist *d);

uint32_t dist_n_workers(const struct dist *d);

/* ---- the distributor thread ---- */

/* Hand bi[0..n) with their tags (low 15 bits used) to the workers, each as
 * types[i] (enum sched_type; types NULL: all atomic, the fast path). Returns
 * how many were taken; the others are written in order to dropped[] with
 * their reasons in reason[] (both room for n), and stay the caller's: it
 * frees and counts them. When assigned is not NULL, assigned[i] gets the
 * worker index + 1 that packet i went to (0: dropped), for trace; the
 * ordered packets taken got consecutive sequence numbers from
 * dist_ordered_next() as it was before the call. Harvests completions first
 * and publishes everything staged before returning. */
uint32_t dist_process(struct dist *d, const uint32_t *bi, const uint16_t *tags, const uint8_t *types, uint32_t n,
		      uint32_t *dropped, uint8_t *reason, uint8_t *assigned);

/* The sequence number the next ordered packet gets (mod 2^14 in the tag). */
uint32_t dist_ordered_next(const struct dist *d);

/* Ordered packets ready to transmit, into bi[0..max): first any that came
 * back out of their window slot (a second packet for one sequence number,
 * or a stale one), then the window's in-order prefix. The caller sends
 * them to interface-output. Returns how many. */
uint32_t dist_ordered_take(struct dist *d, uint32_t *bi, uint32_t max);

/* Harvest completions and publish what the backlogs hold (a call with no
 * packets). Returns packets published plus completions harvested: 0 means
 * nothing moved. */
uint32_t dist_flush(struct dist *d);

/* Packets taken and not yet reported complete, over every worker, plus
 * ordered packets not yet released by dist_ordered_take. */
uint64_t dist_outstanding(const struct dist *d);

/* The distributor thread may sleep (graph/sleep.c): nothing waits in a
 * backlog or in the reorder window, so whatever is left is at the workers,
 * whose completions are counted, not kicked: so also none of its packets is
 * at a worker (this thread stays up to harvest them; a worker reports at its
 * next poll, right after its dispatch loop). */
bool dist_idle(const struct dist *d);

/* Worker w may sleep: it holds no batch it could not report yet (a full
 * staged line of ordered packets), so the distributor's next lines kick it. */
bool dist_worker_idle(const struct dist *d, uint32_t w);

/* Packets worker w can still be given without a drop: free backlog slots. */
uint32_t dist_room(const struct dist *d, uint32_t w);

/* The worker (index + 1) that owns flow tag `tag` now, 0 when none: where
 * an atomic packet of the flow goes while its earlier ones are not
 * complete. Distributor thread. */
uint32_t dist_flow_owner(const struct dist *d, uint16_t tag);

/* After the workers have stopped for good: take back the packets no worker
 * received (backlogs, then rings) into bi[0..max), counting them as
 * DIST_DROP_SHUTDOWN, and treat every batch a worker received as complete;
 * then the ordered packets workers handed back and nobody took (also
 * counted as DIST_DROP_SHUTDOWN). Returns how many were written; call until
 * 0, freeing them. */
uint32_t dist_reclaim(struct dist *d, uint32_t *bi, uint32_t max);

/* Tags owned right now, over every worker (0 once everything is complete). */
uint32_t dist_flows_owned(const struct dist *d);

/* ---- worker w's thread ---- */

/* Report the previous batch complete, then take up to max packets (whole
 * lines; max >= 8 to take any) into bi[]. Returns how many. Reporting never
 * waits (a count). tags, when not NULL, receives the tags. */
uint32_t dist_worker_poll(struct dist *d, uint32_t w, uint32_t *bi, uint16_t *tags, uint32_t max);

/* Report the current batch complete without taking more (a worker that
 * stops). Returns 0: reporting is a count and never waits. */
int dist_worker_done(struct dist *d, uint32_t w);

/* Whether the batch worker w last polled holds ordered packets (their tags
 * have DIST_TAG_ORDERED; the worker marks those buffers). */
bool dist_worker_has_ordered(const struct dist *d, uint32_t w);

/* Hand ordered packets back to the distributor thread instead of
 * transmitting them, seqs[i] being the tag packet i came with. Call before
 * the batch is reported complete. Returns how many were taken; the caller
 * transmits the rest itself (counted as reorder_full: the ring is sized
 * so that this does not happen). */
uint32_t dist_worker_return(struct dist *d, uint32_t w, const uint32_t *bi, const uint16_t *seqs, uint32_t n);

/* ---- statistics ---- */

struct dist_worker_stats {
	uint64_t handed;     /* packets taken for this worker */
	uint64_t matched;    /* of those, packets whose flow the worker already owned */
	uint64_t returned;   /* completions harvested */
	uint64_t migrations; /* flows opened here that last ran on another worker */
	uint64_t drops;      /* DIST_DROP_WORKER_FULL for this worker */
	uint64_t polled;     /* packets the worker took from its ring (its own count) */
	uint64_t ordered;    /* of handed, ordered packets */
	uint64_t parallel;   /* of handed, parallel packets */
	uint64_t returned_ordered; /* ordered packets the worker handed back (its own count) */
	uint64_t reorder_full;     /* ordered packets it sent itself, its reorder ring full */
	uint32_t in_flight;  /* handed and not yet complete, backlog excluded */
	uint32_t backlog;    /* staged at the distributor */
	uint32_t flows;      /* tags owned */
	uint32_t ring_used;  /* lines in its ring */
	uint32_t ring_lines; /* the ring's size */
	uint64_t idle_ns;    /* since its last completion while it had packets; 0 when it had none,
			      * or while that completion waits for the clock (read every 64th
			      * dist_process/dist_flush call: late by at most that, never early) */
};

struct dist_stats {
	uint64_t drops[DIST_N_DROP]; /* by reason, over every worker */
	uint64_t bad_returns;        /* completions for a tag the worker did not own: a bug */
	uint64_t released;           /* ordered packets released in order */
	uint64_t gaps;               /* sequence numbers completed with no packet (dropped or consumed) */
	uint64_t unordered;          /* ordered packets sent out of order: a second or stale one */
	uint32_t window_used;        /* sequence numbers issued and not yet released */
	uint32_t window_size;
	uint32_t n_workers;
};

/* Counters since the last dist_clear_stats (levels are current). */
void dist_stats(const struct dist *d, struct dist_stats *st);
int dist_worker_stats(const struct dist *d, uint32_t w, struct dist_worker_stats *st);
/* The same counters since the distributor was created, what
 * dist_clear_stats hid included (they only go up: the stats segment). */
int dist_worker_stats_total(const struct dist *d, uint32_t w, struct dist_worker_stats *st);
/* dist_stats since the distributor was created (what dist_clear_stats hid
 * included): the stats segment's. */
void dist_stats_total(const struct dist *d, struct dist_stats *st);
void dist_clear_stats(struct dist *d);

/* ---- startup.conf: distributor { enable  backlog 8  ring-lines 64 } ---- */

struct dist_conf {
	bool enable;
	uint32_t backlog;
	uint32_t ring_lines;
};

struct conf_section;
extern const struct conf_section dist_conf_section; /* struct dist_conf */

#endif
