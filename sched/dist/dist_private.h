/* Layouts only the distributor touches, and the tag matchers.
 *
 * Who writes what: struct dist_tx and the flow table are the distributor
 * thread's; struct dist_rx is worker w's. Each sits on its own cache lines
 * (alignas(64), padded), so neither side's stores pull the other's lines;
 * the first line of struct dist, which the workers read, is written only
 * by dist_create. docs/distributor.md counts the lines a round trip moves.
 */
#ifndef SLUICE_SCHED_DIST_PRIVATE_H
#define SLUICE_SCHED_DIST_PRIVATE_H

#include <stdalign.h>
#include <stdbool.h>
#include <stdint.h>

#include "sched/dist/dist.h"

/* A flow table entry, one per tag:
 *   bits  0..15  packets the owner has not finished (backlog included)
 *   bits 16..23  owner worker + 1, 0 when nobody owns the tag
 *   bits 24..31  the last owner + 1, kept after release to count migrations
 * The count cannot overflow: a worker holds at most backlog + 2 rings +
 * one batch of packets, < 2^16 with the limits in dist.h. */
#define DIST_E_COUNT_MASK 0xffffu
#define DIST_E_OWNER(e) (((e) >> 16) & 0xffu)
#define DIST_E_LAST(e) ((e) >> 24)
_Static_assert(DIST_BACKLOG_MAX + (2 * DIST_RING_LINES_MAX + DIST_WORKER_BATCH_LINES) * HANDOFF_LINE_SLOTS <
		       (1 << 16),
	       "a tag's packet count fits 16 bits");

/* Matching one chunk of 8 tags: owner[i] is the table's owner + 1 of lane
 * i (0: none), lead[i] the first lane j <= i with the same tag. The caller
 * pads a short chunk with any tag; lanes never look at later lanes. */
struct dist_match {
	uint8_t owner[8];
	uint8_t lead[8];
};

/* Plain C, always built: the reference the vector version must agree with. */
void dist_match_scalar(const uint32_t *table, const uint16_t *tags, struct dist_match *m);
/* The build's choice (meson: AVX2 gather, or SSE4.2 compares, or the scalar
 * code when the target has neither). */
void dist_match_vector(const uint32_t *table, const uint16_t *tags, struct dist_match *m);
extern const char dist_match_vector_isa[]; /* "avx2", "sse4.2" or "scalar" */

/* handoff_line.flags of a line holding ordered or parallel packets: only
 * those lines take the slow path when completed. */
#define DIST_LINE_SPREAD 0x1u
#define DIST_LINE_ORDERED 0x2u
/* ... and of a line that 8 parallel packets filled whole (dist.c
 * assign_parallel8): completing it drops the spread count by 8 and reads
 * no tag. Only a line staged whole has it; one that shutdown's reclaim
 * moves packets into loses it. */
#define DIST_LINE_PARALLEL 0x4u

#define DIST_TX_SIZE 512

/* The distributor's side of one worker. Its lines are one ring that is
 * both the backlog and the copy of what is out: lines [done, head) were
 * published and are not yet reported complete; from head on lie the
 * backlog's lines, which staging fills in place (packet n of the backlog
 * is slot n % 8 of line head + n / 8; a line's count is set as it is
 * published). Publishing hands lines [head, head + k) to the worker's ring
 * and moves head: nothing is copied here and nothing moves up, and a full
 * ring leaves the rest where it is. The worker reports by count
 * (dist_rx.done_lines): lines complete in the order they were published,
 * so the count says which lines to release, and no line travels back
 * between the cores. Room: at most out_max lines out, so the backlog's
 * lines never reach an unreleased one. */
struct dist_tx {
	/* Aligned to its power-of-two size: d->tx[w] is then a shift, not a
	 * multiply (callgrind: one instruction a packet on the atomic path). */
	alignas(DIST_TX_SIZE) struct handoff_ring *ring; /* to the worker */
	struct handoff_line *lines;            /* [mask + 1]: out, then the backlog */
	struct handoff_line *stage;            /* the line the next packet staged goes into */
	struct handoff_ring *reorder;          /* ordered packets it hands back */
	uint32_t n_backlog;                    /* packets */
	uint32_t in_flight;   /* published and not yet complete */
	uint32_t flows;       /* tags owned */
	uint32_t spread_in_flight; /* ordered and parallel packets staged or in flight: while 0,
				    * completions take the atomic loop alone */
	bool one_line;        /* ring_lines 1: at most one line in the ring */
	uint32_t mask;
	uint32_t head;        /* lines published (free-running) */
	uint32_t done;        /* of those, released here (free-running) */
	uint32_t out_max;     /* lines that may be out: mask + 1 less the backlog's */
	uint64_t last_return_ticks; /* cpu_ticks of the last completion; 0: due (dist.c stamp_due) */
	struct dist_worker_stats st; /* counters and levels, this thread's working copy */
	/* The same, copied once per call for readers on other threads. */
	alignas(64) struct dist_worker_stats pub;
	uint64_t pub_last_return_ticks;
};

_Static_assert(sizeof(struct dist_tx) == DIST_TX_SIZE, "struct dist_tx fills DIST_TX_SIZE exactly");

/* Line i of worker tx's backlog. */
static inline struct handoff_line *dist_staged_line(const struct dist_tx *tx, uint32_t i)
{
	return &tx->lines[(tx->head + i) & tx->mask];
}

#define DIST_WORKER_BATCH (DIST_WORKER_BATCH_LINES * HANDOFF_LINE_SLOTS)

/* Worker w's side: the batch it holds, to be reported complete, as the
 * lines it came in. Reporting adds their number to done_lines (release),
 * which the distributor thread reads (acquire) to release its lines.
 *
 * Cache lines: the first is the worker's alone (written at every poll,
 * read by stats readers), with its own copies of the ring pointers so that
 * a poll reads no line the distributor thread writes (dist_tx's first
 * line changes with every packet staged). done_lines sits alone on the
 * second: the one line the distributor thread reads, written once per
 * report. At one line in flight the count is also posted in the mailbox
 * (handoff_mailbox_post), and the distributor thread reads it there: the
 * worker posts as it takes the mailbox's line, which it writes anyway, and
 * the distributor reads it with that line's count, so a round trip moves
 * the mailbox line alone (docs/distributor.md). */
struct dist_rx {
	alignas(64) struct handoff_ring *ring; /* dist_tx.ring, dist_tx.reorder: set at create */
	struct handoff_ring *reorder;
	bool one_line;               /* dist_tx.one_line: reports are posted in the mailbox */
	uint32_t n_held;             /* lines of the batch not yet reported */
	uint8_t flags;               /* DIST_LINE_* over the batch's lines */
	uint64_t polled;             /* packets taken (read by any thread) */
	uint64_t returned_ordered;   /* ordered packets handed back (read by any thread) */
	uint64_t reorder_full;       /* ordered packets sent here, the ring full (read by any thread) */
	alignas(64) uint32_t done_lines; /* lines reported complete (free-running; atomic) */
	/* Ordered packets being handed back, staged into whole lines; the
	 * partial line goes just before the batch is reported. */
	alignas(64) struct handoff_line ret_line;
	alignas(64) struct handoff_line lines[DIST_WORKER_BATCH_LINES];
};

/* A reorder window slot: sequence number s lives in slot s & mask. */
enum { DIST_SLOT_FREE = 0, DIST_SLOT_ISSUED, DIST_SLOT_DONE };
struct dist_slot {
	uint32_t bi;  /* the packet handed back, BUFFER_INVALID until then */
	uint16_t seq; /* the 14-bit sequence number it was issued as */
	uint8_t state;
};

/* The reorder window, the distributor thread's: sequence numbers issued in
 * [head, next), released from head in order once done. */
struct dist_window {
	struct dist_slot *slot; /* [size] */
	uint32_t size, mask;
	uint32_t head, next;    /* free-running, compared by difference */
	uint32_t *loose;        /* [size] handed back out of their slot: sent unordered */
	uint32_t n_loose;
	uint32_t n_placed;      /* slots holding a packet */
	uint64_t released, gaps, unordered;
};

struct dist {
	/* Read by the workers (rx), written only at create. */
	struct dist_config cfg;
	uint32_t n_workers;
	struct dist_tx *tx;   /* [n_workers] */
	struct dist_rx *rx;   /* [n_workers] */
	/* The distributor thread's from here on. */
	alignas(64) uint32_t cursor; /* where the least-loaded scan starts: ties rotate, per instance */
	uint64_t drops[DIST_N_DROP];
	uint64_t bad_returns;
	uint64_t pub_drops[DIST_N_DROP]; /* copied once per call, for other threads */
	uint64_t pub_bad_returns;
	uint64_t pub_released, pub_gaps, pub_unordered;
	uint32_t pub_window_used;
	bool typed_stats; /* ordered/parallel counters changed since publish_all copied them */
	bool drops_changed; /* drops[] changed since publish_all copied it */
	uint32_t clock_calls; /* calls so far, wrapping: each 64th fills the due stamps (dist.c clock_tick) */
	struct dist_window win;
	struct dist_stats base;                 /* dist_clear_stats baselines */
	struct dist_worker_stats *worker_base;  /* [n_workers] */
	alignas(64) uint32_t table[DIST_N_TAGS];
};

/* The slot of 14-bit sequence number seq when it is issued and not yet
 * done, else NULL (stale, or a bug). */
static inline struct dist_slot *dist_issued_slot(struct dist_window *win, uint16_t seq)
{
	struct dist_slot *sl = &win->slot[seq & win->mask];
	return sl->state == DIST_SLOT_ISSUED && sl->seq == seq ? sl : NULL;
}

/* Sequence number seq's packet is finished on its worker: whatever it
 * handed back for it has been placed. Inline: harvest runs it for every
 * ordered completion. */
static inline void dist_window_done(struct dist *d, uint16_t seq)
{
	struct dist_slot *sl = dist_issued_slot(&d->win, seq & DIST_SEQ_MASK);
	if (__builtin_expect(!sl, 0)) {
		d->bad_returns++;
		return;
	}
	sl->state = DIST_SLOT_DONE;
}

/* The reorder window's other steps (dist_complete.c), for the distributor
 * thread: a packet worker handed back for seq into its slot (or to be sent
 * unordered); everything worker w handed back so far, placed; the loose
 * packets then the in-order prefix into bi[0..max), counted as released
 * when `send` (else taken back at shutdown). */
void dist_window_place(struct dist *d, uint32_t bi, uint16_t seq);
void dist_window_drain(struct dist *d, uint32_t w);
uint32_t dist_window_take(struct dist *d, uint32_t *bi, uint32_t max, bool send);

#endif
