/* The distributor library: configuration, creation and teardown, the drop
 * reasons' names and the statistics readers (any thread: they read the
 * copies the distributor thread publishes once per call).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/node.h"
#include "sched/dist/dist_private.h"

const char *const dist_drop_reason_strings[DIST_N_DROP] = {
	[DIST_DROP_WORKER_FULL] = "flow's worker busy (ring and backlog full)",
	[DIST_DROP_ALL_FULL] = "new flow, every worker busy",
	[DIST_DROP_SHUTDOWN] = "queued for a worker at shutdown",
	[DIST_DROP_SPREAD_FULL] = "ordered/parallel: every worker busy",
	[DIST_DROP_WINDOW_FULL] = "ordered: reorder window full",
	[DIST_DROP_UNORDERED_FULL] = "ordered: returned out of order, no room",
};

void dist_config_default(struct dist_config *c)
{
	c->n_workers = 1;
	c->backlog = DIST_BACKLOG_DEFAULT;
	c->ring_lines = DIST_RING_LINES_DEFAULT;
	c->window = DIST_WINDOW_DEFAULT;
	c->match_always = false;
}

/* Holder "distributor": per worker, its ring to the worker, its backlog,
 * and the ordered packets it handed back (ring and staged line); then the
 * reorder window's packets and those to be sent unordered. The lines out
 * (dist_tx.lines before head) are copies of packets counted where they are
 * (a ring, a worker) or already finished (freed or sent), so they hold
 * nothing. */
static void dist_holder(void *ctx, struct buffer_tally *t)
{
	const struct dist *d = ctx;
	char where[BUFFER_WHERE_SIZE];
	for (uint32_t w = 0; w < d->n_workers; w++) {
		struct handoff_stats hs;
		handoff_ring_stats(d->tx[w].ring, &hs);
		snprintf(where, sizeof(where), "worker %u ring", w);
		buffer_tally_add(t, where, hs.buffers_in - hs.buffers_out);
		snprintf(where, sizeof(where), "worker %u backlog", w);
		buffer_tally_add(t, where, d->tx[w].n_backlog);
		handoff_ring_stats(d->tx[w].reorder, &hs);
		snprintf(where, sizeof(where), "worker %u reorder ring", w);
		buffer_tally_add(t, where, hs.buffers_in - hs.buffers_out + d->rx[w].ret_line.n);
	}
	buffer_tally_add(t, "reorder window", d->win.n_placed);
	buffer_tally_add(t, "to send unordered", d->win.n_loose);
}

void dist_free(struct dist *d)
{
	if (!d)
		return;
	buffer_holder_unregister(dist_holder, d);
	for (uint32_t w = 0; d->tx && w < d->n_workers; w++) {
		handoff_ring_free(d->tx[w].ring);
		free(d->tx[w].lines);
		handoff_ring_free(d->tx[w].reorder);
	}
	free(d->win.slot);
	free(d->win.loose);
	free(d->tx);
	free(d->rx);
	free(d->worker_base);
	free(d);
}

struct dist *dist_create(const struct dist_config *c, char *err, size_t errlen)
{
	uint32_t window = c->window ? c->window : DIST_WINDOW_DEFAULT;
	if (c->n_workers < 1 || c->n_workers > DIST_MAX_WORKERS || c->backlog < 1 || c->backlog > DIST_BACKLOG_MAX ||
	    c->ring_lines < 1 || c->ring_lines > DIST_RING_LINES_MAX || window < 8 || window > DIST_WINDOW_MAX ||
	    (window & (window - 1))) {
		snprintf(err, errlen,
			 "distributor: expected 1-%d workers, backlog 1-%d, ring-lines 1-%d, window a power of two 8-%d",
			 DIST_MAX_WORKERS, DIST_BACKLOG_MAX, DIST_RING_LINES_MAX, DIST_WINDOW_MAX);
		return NULL;
	}
	struct dist *d = aligned_alloc(64, ROUND_UP(sizeof(*d), 64));
	if (!d)
		goto oom;
	memset(d, 0, sizeof(*d));
	d->cfg = *c;
	d->cfg.backlog = ROUND_UP(c->backlog, HANDOFF_LINE_SLOTS);
	d->cfg.window = window;
	d->n_workers = c->n_workers;
	d->win.size = window;
	d->win.mask = window - 1;
	d->win.slot = calloc(window, sizeof(*d->win.slot));
	d->win.loose = calloc(window, sizeof(*d->win.loose));
	if (!d->win.slot || !d->win.loose)
		goto oom;
	d->tx = aligned_alloc(DIST_TX_SIZE, sizeof(*d->tx) * c->n_workers);
	d->rx = aligned_alloc(64, ROUND_UP(sizeof(*d->rx) * c->n_workers, 64));
	d->worker_base = calloc(c->n_workers, sizeof(*d->worker_base));
	if (!d->tx || !d->rx || !d->worker_base) {
		free(d->tx);
		d->tx = NULL;
		goto oom;
	}
	memset(d->tx, 0, sizeof(*d->tx) * c->n_workers);
	memset(d->rx, 0, sizeof(*d->rx) * c->n_workers);
	for (uint32_t w = 0; w < c->n_workers; w++) {
		struct dist_tx *tx = &d->tx[w];
		/* A mailbox at every depth: each line's count its full/empty
		 * word, so the worker finds a line and its packets with one miss
		 * and no head or tail line moves between the cores (a ring of
		 * shared indices cost bench/sched's atomic path 40% of its
		 * rate: docs/distributor.md). At ring_lines 1 (one line in
		 * flight, DPDK's burst depth) the worker also posts its
		 * completion count in that line (dist_private.h, struct
		 * dist_rx), so a round trip moves that one line there and back. */
		tx->one_line = c->ring_lines == 1;
		tx->ring = handoff_mailbox_create(c->ring_lines, -1);
		/* The lines out: the ring's, the batch the worker holds, and as
		 * many again for those it reported that the next harvest has not
		 * read; then the backlog's. After a harvest at most the ring's
		 * and one batch are out, and dist_process harvests before each
		 * piece of 256, which publishes at most 33 lines to a worker: so
		 * publish never finds them all out in the middle of an assign
		 * (its harvest there would leave the matcher's owners stale). */
		struct handoff_stats hs = { 0 };
		if (tx->ring)
			handoff_ring_stats(tx->ring, &hs);
		uint32_t out = 2 * (hs.n_lines + DIST_WORKER_BATCH_LINES), backlog_lines = d->cfg.backlog / HANDOFF_LINE_SLOTS;
		uint32_t size = 1;
		while (size < out + backlog_lines)
			size <<= 1;
		tx->mask = size - 1;
		tx->out_max = size - backlog_lines;
		tx->lines = aligned_alloc(64, size * sizeof(struct handoff_line));
		tx->stage = tx->lines;
		/* Ordered packets handed back wait there until the batch they
		 * came in is harvested: at most the lines out plus the one being
		 * processed, in whole lines but for one partial line per batch.
		 * So it cannot fill. A mailbox too, for the same reason. */
		tx->reorder = handoff_mailbox_create(2 * (tx->out_max + DIST_WORKER_BATCH_LINES), -1);
		if (!tx->ring || !tx->lines || !tx->reorder)
			goto oom;
		memset(tx->lines, 0, size * sizeof(struct handoff_line));
		d->rx[w].ring = tx->ring;
		d->rx[w].reorder = tx->reorder;
		d->rx[w].one_line = tx->one_line;
	}
	buffer_holder_register("distributor", dist_holder, d);
	return d;
oom:
	snprintf(err, errlen, "distributor: out of memory");
	dist_free(d);
	return NULL;
}

/* ---- statistics ---- */

void dist_stats(const struct dist *d, struct dist_stats *st)
{
	memset(st, 0, sizeof(*st));
	for (uint32_t r = 0; r < DIST_N_DROP; r++)
		st->drops[r] = stat_read(&d->pub_drops[r]) - d->base.drops[r];
	st->bad_returns = stat_read(&d->pub_bad_returns);
	st->released = stat_read(&d->pub_released) - d->base.released;
	st->gaps = stat_read(&d->pub_gaps) - d->base.gaps;
	st->unordered = stat_read(&d->pub_unordered) - d->base.unordered;
	st->window_used = __atomic_load_n(&d->pub_window_used, __ATOMIC_RELAXED);
	st->window_size = d->win.size;
	st->n_workers = d->n_workers;
}

void dist_stats_total(const struct dist *d, struct dist_stats *st)
{
	dist_stats(d, st);
	for (uint32_t r = 0; r < DIST_N_DROP; r++)
		st->drops[r] += d->base.drops[r];
	st->released += d->base.released;
	st->gaps += d->base.gaps;
	st->unordered += d->base.unordered;
}

int dist_worker_stats(const struct dist *d, uint32_t w, struct dist_worker_stats *st)
{
	if (w >= d->n_workers)
		return -ENOENT;
	const struct dist_worker_stats *p = &d->tx[w].pub;
	const struct dist_worker_stats *b = &d->worker_base[w];
	memset(st, 0, sizeof(*st));
	st->handed = stat_read(&p->handed) - b->handed;
	st->matched = stat_read(&p->matched) - b->matched;
	st->returned = stat_read(&p->returned) - b->returned;
	st->migrations = stat_read(&p->migrations) - b->migrations;
	st->drops = stat_read(&p->drops) - b->drops;
	st->polled = stat_read(&d->rx[w].polled) - b->polled;
	st->ordered = stat_read(&p->ordered) - b->ordered;
	st->parallel = stat_read(&p->parallel) - b->parallel;
	st->returned_ordered = stat_read(&d->rx[w].returned_ordered) - b->returned_ordered;
	st->reorder_full = stat_read(&d->rx[w].reorder_full) - b->reorder_full;
	st->in_flight = __atomic_load_n(&p->in_flight, __ATOMIC_RELAXED);
	st->backlog = __atomic_load_n(&p->backlog, __ATOMIC_RELAXED);
	st->flows = __atomic_load_n(&p->flows, __ATOMIC_RELAXED);
	struct handoff_stats hs;
	handoff_ring_stats(d->tx[w].ring, &hs);
	st->ring_used = hs.used;
	st->ring_lines = hs.n_lines;
	uint64_t last = __atomic_load_n(&d->tx[w].pub_last_return_ticks, __ATOMIC_RELAXED);
	if (st->in_flight && last) {
		uint64_t now = cpu_ticks();
		st->idle_ns = now > last ? (uint64_t)((double)(now - last) * 1e9 / cpu_ticks_per_second()) : 0;
	}
	return 0;
}

int dist_worker_stats_total(const struct dist *d, uint32_t w, struct dist_worker_stats *st)
{
	int rc = dist_worker_stats(d, w, st);
	if (rc)
		return rc;
	const struct dist_worker_stats *b = &d->worker_base[w];
	st->handed += b->handed;
	st->matched += b->matched;
	st->returned += b->returned;
	st->migrations += b->migrations;
	st->drops += b->drops;
	st->polled += b->polled;
	st->ordered += b->ordered;
	st->parallel += b->parallel;
	st->returned_ordered += b->returned_ordered;
	st->reorder_full += b->reorder_full;
	return 0;
}

void dist_clear_stats(struct dist *d)
{
	for (uint32_t r = 0; r < DIST_N_DROP; r++)
		d->base.drops[r] = stat_read(&d->pub_drops[r]);
	d->base.released = stat_read(&d->pub_released);
	d->base.gaps = stat_read(&d->pub_gaps);
	d->base.unordered = stat_read(&d->pub_unordered);
	for (uint32_t w = 0; w < d->n_workers; w++) {
		const struct dist_worker_stats *p = &d->tx[w].pub;
		struct dist_worker_stats *b = &d->worker_base[w];
		b->handed = stat_read(&p->handed);
		b->matched = stat_read(&p->matched);
		b->returned = stat_read(&p->returned);
		b->migrations = stat_read(&p->migrations);
		b->drops = stat_read(&p->drops);
		b->polled = stat_read(&d->rx[w].polled);
		b->ordered = stat_read(&p->ordered);
		b->parallel = stat_read(&p->parallel);
		b->returned_ordered = stat_read(&d->rx[w].returned_ordered);
		b->reorder_full = stat_read(&d->rx[w].reorder_full);
	}
}

