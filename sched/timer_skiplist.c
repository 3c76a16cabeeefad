/* Skiplists for timers the wheel cannot hold: deadlines beyond its horizon
 * (keyed by expiry tick) and precise deadlines (keyed by ns).
 *
 * Nodes are 64 bytes of fixed height from a pool preallocated with the
 * wheel, so inserting never allocates. Entries are ordered by (key, node
 * index): keys may repeat, the pair never does, so removing a given node is
 * one top-down search with no walk over equal keys. P(height >= k) = 4^-(k-1),
 * as rte_timer, but with 12 levels: searches stay logarithmic to 16M.
 */
#include <errno.h>

#include "sched/timer_private.h"

void skip_init(struct timer_wheel *w, struct skiplist *l, uint32_t head)
{
	struct skip_node *h = &w->sn[head];
	l->head = head;
	l->level = 1;
	l->n = 0;
	h->height = SKIP_MAX_H;
	for (uint32_t i = 0; i < SKIP_MAX_H; i++)
		h->next[i] = NIL;
}

/* xorshift64: two random bits per extra level. */
static uint32_t random_height(struct timer_wheel *w)
{
	uint64_t r = w->rng;
	r ^= r << 13;
	r ^= r >> 7;
	r ^= r << 17;
	w->rng = r;
	uint32_t h = 1;
	while ((r & 3) == 0 && h < SKIP_MAX_H) {
		h++;
		r >>= 2;
	}
	return h;
}

/* Whether node y sorts before (key, n). */
static inline bool precedes(const struct timer_wheel *w, uint32_t y, uint64_t key, uint32_t n)
{
	uint64_t k = w->sn[y].key;
	return k < key || (k == key && y < n);
}

int skip_insert(struct timer_wheel *w, struct skiplist *l, uint64_t key, uint32_t timer)
{
	uint32_t update[SKIP_MAX_H];
	uint32_t n = w->sn_free;
	if (n == NIL)
		return -ENOSPC;
	struct skip_node *node = &w->sn[n];
	w->sn_free = node->next[0];
	node->key = key;
	node->timer = timer;
	node->height = random_height(w);
	for (uint32_t i = l->level; i < node->height; i++)
		update[i] = l->head;
	l->level = MAX(l->level, node->height);
	uint32_t x = l->head;
	for (uint32_t i = l->level; i-- > 0;) {
		uint32_t y;
		while ((y = w->sn[x].next[i]) != NIL && precedes(w, y, key, n))
			x = y;
		update[i] = x;
	}
	for (uint32_t i = 0; i < node->height; i++) {
		node->next[i] = w->sn[update[i]].next[i];
		w->sn[update[i]].next[i] = n;
	}
	w->t[timer].next = n;
	TIMER_STAT_ADD(l->n, 1);
	return 0;
}

void skip_remove(struct timer_wheel *w, struct skiplist *l, uint32_t n)
{
	struct skip_node *node = &w->sn[n];
	uint32_t x = l->head;
	for (uint32_t i = l->level; i-- > 0;) {
		uint32_t y;
		while ((y = w->sn[x].next[i]) != NIL && precedes(w, y, node->key, n))
			x = y;
		if (i < node->height)
			w->sn[x].next[i] = node->next[i];
	}
	while (l->level > 1 && w->sn[l->head].next[l->level - 1] == NIL)
		l->level--;
	node->next[0] = w->sn_free;
	w->sn_free = n;
	TIMER_STAT_SUB(l->n, 1);
}
