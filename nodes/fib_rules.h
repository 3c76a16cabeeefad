/* The route store both FIBs keep beside their lookup tables (nodes/ip4/
 * ip4_fib.c, nodes/ip6/ip6_fib_store.c): one open-addressing hash per
 * prefix length, the routes as added. It answers the exact-match get, the
 * walk and the covering-route search of a delete; the lookup tables hold
 * only what lookups need. Linear probing at load <= 1/2, backward-shift
 * deletion (no tombstones in the live table), shrinking below 1/8 so
 * memory comes back. Control side only, never read by the datapath.
 *
 * Every update runs under the graph barrier, so no update may cost in
 * proportion to the table (a full Internet table puts 600,000 /24s in one
 * length: rehashing it at once would hold the datapath for milliseconds).
 * A resize is therefore spread over the updates that follow the one that
 * asked for it, as Redis spreads its rehash:
 *   prep     the new array is allocated and set empty FIB_RULE_PREP_STEP
 *            slots per update, unseen (the live table goes on taking
 *            inserts a little past load 1/2 meanwhile: 1/32 more at most);
 *   migrate  the new array is live (inserts go there) and the old one is
 *            read as well until FIB_RULE_MIGRATE_STEP of its slots per
 *            update have moved over; a moved or removed old entry becomes
 *            FIB_RULE_MOVED, so probes in the old array go past it.
 * Each insert or remove thus does at most FIB_RULE_PREP_STEP slot writes
 * or FIB_RULE_MIGRATE_STEP moves besides its own probe (tests/ip4 counts
 * them through FIB_RULES_WORK).
 *
 * A template, as the key differs (a u32 for IPv4, two u64 halves for
 * IPv6): FIB_RULES_DEFINE(p, SLOT, TABLE, KEY, HASH, EQ) defines static
 * p_find, p_insert (a key known to be absent), p_remove, p_next (the
 * walk's iterator over both arrays), p_bytes and p_free over
 *   SLOT  { KEY key; uint32_t val; }   val FIB_RULE_EMPTY: a free slot
 *   TABLE { FIB_RULE_TABLE_FIELDS(SLOT) }
 * with uint32_t HASH(KEY) and bool EQ(KEY, KEY). Values must stay below
 * FIB_RULE_MOVED.
 */
#ifndef SLUICE_NODES_FIB_RULES_H
#define SLUICE_NODES_FIB_RULES_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "nodes/fib_defer.h"

#define FIB_RULE_EMPTY UINT32_MAX
#define FIB_RULE_MOVED (UINT32_MAX - 1) /* old array only: probe on */
#define FIB_RULE_TABLE_MIN 16u
#define FIB_RULE_PREP_STEP 256u   /* new slots set empty per update */
#define FIB_RULE_MIGRATE_STEP 32u /* old slots moved over per update */

/* Counts the bounded work of a resize (slots set, entries moved); a test
 * defines it before including this header. */
#ifndef FIB_RULES_WORK
#define FIB_RULES_WORK(n) ((void)0)
#endif

/* A table's fields: slots/mask the live array (capacity mask + 1, none
 * when slots is NULL), n the routes in both arrays; old/old_mask the array
 * migrating out, cursor its next slot to move; prep/prep_mask the array
 * being set empty, prep_done its slots done. */
#define FIB_RULE_TABLE_FIELDS(SLOT)                                                                      \
	SLOT *slots;                                                                                     \
	uint32_t mask, n;                                                                                \
	SLOT *old, *prep;                                                                                \
	uint32_t old_mask, cursor, prep_mask, prep_done;

#define FIB_RULES_DEFINE(p, SLOT, TABLE, KEY, HASH, EQ)                                                 \
	static SLOT *p##_probe(SLOT *slots, uint32_t mask, KEY key)                                     \
	{                                                                                                \
		for (uint32_t i = HASH(key) & mask;; i = (i + 1) & mask) {                               \
			SLOT *s = &slots[i];                                                             \
			if (s->val == FIB_RULE_EMPTY)                                                    \
				return NULL;                                                             \
			if (s->val != FIB_RULE_MOVED && EQ(s->key, key))                                 \
				return s;                                                                \
		}                                                                                        \
	}                                                                                                \
                                                                                                         \
	static __attribute__((unused)) SLOT *p##_find(const TABLE *rt, KEY key)                         \
	{                                                                                                \
		SLOT *s = rt->slots ? p##_probe(rt->slots, rt->mask, key) : NULL;                        \
		return s || !rt->old ? s : p##_probe(rt->old, rt->old_mask, key);                        \
	}                                                                                                \
                                                                                                         \
	static void p##_place(SLOT *slots, uint32_t mask, KEY key, uint32_t val)                         \
	{                                                                                                \
		uint32_t i = HASH(key) & mask;                                                           \
		while (slots[i].val != FIB_RULE_EMPTY)                                                   \
			i = (i + 1) & mask;                                                              \
		slots[i] = (SLOT){ key, val };                                                           \
	}                                                                                                \
                                                                                                         \
	/* One bounded step of the resize in flight, if any. */                                         \
	static void p##_step(TABLE *rt)                                                                 \
	{                                                                                                \
		if (rt->prep) {                                                                          \
			uint32_t end = rt->prep_done + FIB_RULE_PREP_STEP, cap = rt->prep_mask + 1;     \
			end = end < cap ? end : cap;                                                     \
			FIB_RULES_WORK(end - rt->prep_done);                                             \
			for (uint32_t i = rt->prep_done; i < end; i++)                                   \
				rt->prep[i].val = FIB_RULE_EMPTY;                                        \
			rt->prep_done = end;                                                             \
			if (end < cap)                                                                   \
				return;                                                                  \
			rt->old = rt->slots; /* the new array goes live */                               \
			rt->old_mask = rt->mask;                                                         \
			rt->cursor = 0;                                                                  \
			rt->slots = rt->prep;                                                            \
			rt->mask = rt->prep_mask;                                                        \
			rt->prep = NULL;                                                                 \
			return;                                                                          \
		}                                                                                        \
		if (!rt->old)                                                                            \
			return;                                                                          \
		uint32_t end = rt->cursor + FIB_RULE_MIGRATE_STEP;                                       \
		for (; rt->cursor < end && rt->cursor <= rt->old_mask; rt->cursor++) {                   \
			SLOT *o = &rt->old[rt->cursor];                                                  \
			if (o->val >= FIB_RULE_MOVED)                                                    \
				continue;                                                                \
			FIB_RULES_WORK(1);                                                               \
			p##_place(rt->slots, rt->mask, o->key, o->val);                                  \
			o->val = FIB_RULE_MOVED;                                                         \
		}                                                                                        \
		if (rt->cursor > rt->old_mask) {                                                         \
			fib_free(rt->old); /* after the hold (fib_defer.h) */                           \
			rt->old = NULL;                                                                  \
		}                                                                                        \
	}                                                                                                \
                                                                                                         \
	static void p##_settle(TABLE *rt)                                                               \
	{                                                                                                \
		while (rt->prep || rt->old)                                                              \
			p##_step(rt);                                                                    \
	}                                                                                                \
                                                                                                         \
	/* Begin a resize to cap slots (the steps that follow finish it). */                            \
	static int p##_resize(TABLE *rt, uint32_t cap)                                                 \
	{                                                                                                \
		SLOT *s = malloc((size_t)cap * sizeof(*s));                                              \
		if (!s)                                                                                  \
			return -ENOMEM;                                                                  \
		rt->prep = s;                                                                            \
		rt->prep_mask = cap - 1;                                                                 \
		rt->prep_done = 0;                                                                       \
		return 0;                                                                                \
	}                                                                                                \
                                                                                                         \
	static __attribute__((unused)) void p##_free(TABLE *rt)                                         \
	{                                                                                                \
		fib_free(rt->slots); /* after the hold when the last route went */                      \
		fib_free(rt->old);                                                                       \
		fib_free(rt->prep);                                                                          \
		*rt = (TABLE){ 0 };                                                                      \
	}                                                                                                \
                                                                                                         \
	static __attribute__((unused)) int p##_insert(TABLE *rt, KEY key, uint32_t val)                 \
	{                                                                                                \
		if (!rt->slots) { /* the first route: a small array at once */                          \
			SLOT *s = malloc(FIB_RULE_TABLE_MIN * sizeof(*s));                               \
			if (!s)                                                                          \
				return -ENOMEM;                                                          \
			for (uint32_t i = 0; i < FIB_RULE_TABLE_MIN; i++)                                \
				s[i].val = FIB_RULE_EMPTY;                                               \
			rt->slots = s;                                                                   \
			rt->mask = FIB_RULE_TABLE_MIN - 1;                                               \
		}                                                                                        \
		uint64_t cap = (uint64_t)rt->mask + 1, need = (uint64_t)rt->n + 1;                       \
		if (!rt->prep && !rt->old && need * 2 > cap && p##_resize(rt, (uint32_t)cap * 2))         \
			return -ENOMEM;                                                                  \
		if (need * 4 > cap * 3) /* never: the steps finish long before; a floor */               \
			p##_settle(rt);                                                                  \
		p##_step(rt);                                                                            \
		p##_place(rt->slots, rt->mask, key, val);                                                \
		rt->n++;                                                                                 \
		return 0;                                                                                \
	}                                                                                                \
                                                                                                         \
	/* Backward shift in the live array: move up what probed past s. */                             \
	static void p##_shift_out(TABLE *rt, SLOT *s)                                                  \
	{                                                                                                \
		uint32_t i = (uint32_t)(s - rt->slots);                                                  \
		for (uint32_t j = (i + 1) & rt->mask;; j = (j + 1) & rt->mask) {                        \
			if (rt->slots[j].val == FIB_RULE_EMPTY)                                          \
				break;                                                                   \
			uint32_t home = HASH(rt->slots[j].key) & rt->mask;                               \
			/* Slot j may stay when its home lies cyclically in (i, j]. */                   \
			bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);         \
			if (!stays) {                                                                    \
				rt->slots[i] = rt->slots[j];                                             \
				i = j;                                                                   \
			}                                                                                \
		}                                                                                        \
		rt->slots[i].val = FIB_RULE_EMPTY;                                                       \
	}                                                                                                \
                                                                                                         \
	static __attribute__((unused)) void p##_remove(TABLE *rt, SLOT *s)                              \
	{                                                                                                \
		if (rt->old && s >= rt->old && s <= rt->old + rt->old_mask)                              \
			s->val = FIB_RULE_MOVED;                                                         \
		else                                                                                     \
			p##_shift_out(rt, s);                                                            \
		rt->n--;                                                                                 \
		uint32_t cap = rt->mask + 1;                                                             \
		if (rt->n == 0) {                                                                        \
			p##_free(rt);                                                                    \
			return;                                                                          \
		}                                                                                        \
		if (!rt->prep && !rt->old && cap > FIB_RULE_TABLE_MIN && (uint64_t)rt->n * 8 < cap)      \
			p##_resize(rt, cap / 2); /* on failure the table simply stays big */             \
		p##_step(rt);                                                                            \
	}                                                                                                \
                                                                                                         \
	/* The walk: the next route at or after *pos (0 to begin), or NULL;        \
	 * the live array's slots first, then the old one's. Not across updates. */                     \
	static __attribute__((unused)) const SLOT *p##_next(const TABLE *rt, uint32_t *pos)             \
	{                                                                                                \
		uint32_t cap = rt->slots ? rt->mask + 1 : 0, end = cap + (rt->old ? rt->old_mask + 1 : 0);\
		for (; *pos < end; (*pos)++) {                                                           \
			const SLOT *s = *pos < cap ? &rt->slots[*pos] : &rt->old[*pos - cap];            \
			if (s->val < FIB_RULE_MOVED) {                                                   \
				(*pos)++;                                                                \
				return s;                                                                \
			}                                                                                \
		}                                                                                        \
		return NULL;                                                                             \
	}                                                                                                \
                                                                                                         \
	/* Bytes of the arrays (stats). */                                                               \
	static __attribute__((unused)) uint64_t p##_bytes(const TABLE *rt)                              \
	{                                                                                                \
		uint64_t slots = (rt->slots ? (uint64_t)rt->mask + 1 : 0) + (rt->old ? (uint64_t)rt->old_mask + 1 : 0) + \
				 (rt->prep ? (uint64_t)rt->prep_mask + 1 : 0);                                   \
		return slots * sizeof(SLOT);                                                             \
	}

#endif
