/* The distributor library: the workers' side (taking batches, reporting
 * them complete, handing ordered packets back) and the reorder window the
 * distributor thread keeps for ordered packets (dist.h, "Scheduling
 * types"). The distributor thread's harvest (dist.c) reads what the
 * workers report here.
 */
#include <string.h>

#include "graph/node.h"
#include "sched/dist/dist_private.h"

/* ---- the reorder window ---- */

/* A packet handed back for sequence number seq: into its slot, or sent
 * unordered when the slot is not waiting for one (a second packet for the
 * number, or a stale one); freed and counted when even that has no room. */
void dist_window_place(struct dist *d, uint32_t bi, uint16_t seq)
{
	struct dist_window *win = &d->win;
	struct dist_slot *sl = dist_issued_slot(win, seq & DIST_SEQ_MASK);
	if (likely(sl && sl->bi == BUFFER_INVALID)) {
		sl->bi = bi;
		win->n_placed++;
		return;
	}
	win->unordered++;
	d->typed_stats = true;
	if (win->n_loose < win->size) {
		win->loose[win->n_loose++] = bi;
		return;
	}
	d->drops[DIST_DROP_UNORDERED_FULL]++;
	d->drops_changed = true;
	buffer_free(&bi, 1);
}

/* Everything worker w has handed back so far, into the window. */
void dist_window_drain(struct dist *d, uint32_t w)
{
	uint32_t bi[DIST_WORKER_BATCH];
	uint16_t seq[DIST_WORKER_BATCH];
	uint32_t k;
	while ((k = handoff_dequeue(d->tx[w].reorder, bi, seq, DIST_WORKER_BATCH)) != 0)
		for (uint32_t i = 0; i < k; i++)
			dist_window_place(d, bi[i], seq[i]);
}


uint32_t dist_ordered_next(const struct dist *d)
{
	return d->win.next;
}

/* The loose packets, then the window's in-order prefix: done slots from
 * head, gaps skipped. Counted as released when `send` (else they are being
 * taken back at shutdown). */
uint32_t dist_window_take(struct dist *d, uint32_t *bi, uint32_t max, bool send)
{
	struct dist_window *win = &d->win;
	uint32_t n = MIN(max, win->n_loose);
	memcpy(bi, win->loose, n * sizeof(*bi));
	memmove(win->loose, win->loose + n, (win->n_loose - n) * sizeof(*bi));
	win->n_loose -= n;
	while (n < max && win->head != win->next) {
		struct dist_slot *sl = &win->slot[win->head & win->mask];
		if (sl->state != DIST_SLOT_DONE)
			break;
		if (sl->bi != BUFFER_INVALID) {
			bi[n++] = sl->bi;
			win->n_placed--;
			win->released += send;
		} else {
			win->gaps++;
		}
		sl->state = DIST_SLOT_FREE;
		win->head++;
	}
	d->typed_stats |= n != 0;
	return n;
}

uint32_t dist_ordered_take(struct dist *d, uint32_t *bi, uint32_t max)
{
	return dist_window_take(d, bi, max, true);
}

/* ---- worker side ---- */

/* Report the held batch: the ordered packets handed back go first, so
 * that the distributor finds them before it reads the count. */
static void report(struct dist *d, uint32_t w)
{
	struct dist_rx *rx = &d->rx[w];
	if (!rx->n_held)
		return;
	if (unlikely(rx->ret_line.n) && handoff_enqueue_lines(rx->reorder, &rx->ret_line, 1))
		rx->ret_line.n = 0;
	uint32_t done = rx->done_lines + rx->n_held;
	if (rx->one_line) /* the distributor reads it there (dist_private.h) */
		handoff_mailbox_post(rx->ring, done);
	__atomic_store_n(&rx->done_lines, done, __ATOMIC_RELEASE);
	rx->n_held = 0;
}

uint32_t dist_worker_poll(struct dist *d, uint32_t w, uint32_t *bi, uint16_t *tags, uint32_t max)
{
	struct dist_rx *rx = &d->rx[w];
	report(d, w);
	uint32_t n_lines = handoff_dequeue_lines(rx->ring, rx->lines, MIN(max / HANDOFF_LINE_SLOTS,
									      (uint32_t)DIST_WORKER_BATCH_LINES));
	uint32_t n = 0;
	uint8_t flags = 0;
	/* Whole lines copied (fixed sizes, no calls): a line's unused slots
	 * land below max, since at most max / 8 lines were taken. */
	for (uint32_t l = 0; l < n_lines; l++) {
		const struct handoff_line *line = &rx->lines[l];
		memcpy(bi + n, line->bi, sizeof(line->bi));
		if (tags)
			memcpy(tags + n, line->tag, sizeof(line->tag));
		n += line->n;
		flags |= line->flags;
	}
	rx->flags = flags;
	rx->n_held = n_lines;
	if (n)
		stat_add(&rx->polled, n);
	return n;
}

int dist_worker_done(struct dist *d, uint32_t w)
{
	report(d, w);
	return 0;
}

bool dist_worker_idle(const struct dist *d, uint32_t w)
{
	return !d->rx[w].n_held && !d->rx[w].ret_line.n;
}

bool dist_worker_has_ordered(const struct dist *d, uint32_t w)
{
	return (d->rx[w].flags & DIST_LINE_ORDERED) != 0;
}

uint32_t dist_worker_return(struct dist *d, uint32_t w, const uint32_t *bi, const uint16_t *seqs, uint32_t n)
{
	struct dist_rx *rx = &d->rx[w];
	struct handoff_line *l = &rx->ret_line;
	uint32_t i = 0;
	for (; i < n; i++) {
		if (l->n == HANDOFF_LINE_SLOTS) {
			if (unlikely(!handoff_enqueue_lines(rx->reorder, l, 1)))
				break;
			l->n = 0;
		}
		l->bi[l->n] = bi[i];
		l->tag[l->n++] = seqs[i];
	}
	stat_add(&rx->returned_ordered, i);
	if (unlikely(i < n))
		stat_add(&rx->reorder_full, n - i);
	return i;
}

